/* counters.c -- LLC misses through PAPI, where the machine offers them.
 *
 * The counters only serve as a sanity check (a DRAM-sized chase should miss
 * the LLC about once per step), so failing to get them is normal -- virtual
 * machines often expose no PMU -- and is reported with PAPI's own reason
 * instead of stopping anything. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/papi_internal.h"

#include "gcscale/microbench.h"

struct gcs_counters {
    int eventset;
};

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static gcs_counters_info probed;
static int probed_ok;

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

/* Candidates in order of preference: the preset, then native names that
 * libpfm4 knows on Intel (LONGEST_LAT_CACHE) and the kernel's generic one. */
static const char *const candidates[] = {
    "PAPI_L3_TCM", "PAPI_L3_LDM", "LLC_MISSES", "LONGEST_LAT_CACHE:MISS", "perf::LLC-LOAD-MISSES",
};
#define NCANDIDATES (sizeof candidates / sizeof candidates[0])

/* Adds one event to a fresh event set and checks that it really starts. */
static int try_event(const char *name, int *eventset, char *why, size_t why_len)
{
    int code, rc;
    *eventset = PAPI_NULL;
    if ((rc = _gcs_papi.event_name_to_code((char *)name, &code)) != PAPI_OK ||
        (rc = _gcs_papi.create_eventset(eventset)) != PAPI_OK) {
        snprintf(why, why_len, "%s", _gcs_papi.strerror(rc));
        return -1;
    }
    long long v;
    if ((rc = _gcs_papi.add_event(*eventset, code)) != PAPI_OK || (rc = _gcs_papi.start(*eventset)) != PAPI_OK ||
        (rc = _gcs_papi.stop(*eventset, &v)) != PAPI_OK) {
        snprintf(why, why_len, "%s", _gcs_papi.strerror(rc));
        _gcs_papi.cleanup_eventset(*eventset);
        _gcs_papi.destroy_eventset(eventset);
        *eventset = PAPI_NULL;
        return -1;
    }
    return 0;
}

static void probe(void)
{
    gcs_counters_info *in = &probed;
    snprintf(in->source, sizeof in->source, "none");
    if (_gcs_papi_load(in->reason, sizeof in->reason) < 0)
        return;
    int v = _gcs_papi.library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
        snprintf(in->reason, sizeof in->reason, "PAPI_library_init: %s",
                 v < 0 ? _gcs_papi.strerror(v) : "PAPI version mismatch");
        return;
    }
    if (_gcs_papi.thread_init(thread_id) != PAPI_OK) {
        snprintf(in->reason, sizeof in->reason, "PAPI_thread_init failed");
        return;
    }
    /* What the CPU component says about itself, for the reason string. */
    char comp[160] = "no perf_event component";
    int cid = _gcs_papi.get_component_index("perf_event");
    if (cid >= 0) {
        const PAPI_component_info_t *ci = _gcs_papi.get_component_info(cid);
        if (ci && ci->disabled)
            snprintf(comp, sizeof comp, "perf_event disabled: %.120s", ci->disabled_reason);
        else if (ci)
            snprintf(comp, sizeof comp, "perf_event: %d native events", ci->num_native_events);
    }
    int presets = 0, code = PAPI_PRESET_MASK;
    if (_gcs_papi.enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
        do {
            PAPI_event_info_t ei;
            if (_gcs_papi.get_event_info(code, &ei) == PAPI_OK && ei.count > 0)
                presets++;
        } while (_gcs_papi.enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
    }
    char first_why[96] = "", last_why[96] = "";
    for (size_t i = 0; i < NCANDIDATES; i++) {
        int es;
        char why[96];
        if (try_event(candidates[i], &es, why, sizeof why) == 0) {
            _gcs_papi.cleanup_eventset(es);
            _gcs_papi.destroy_eventset(&es);
            snprintf(in->source, sizeof in->source, "papi");
            snprintf(in->event, sizeof in->event, "%s", candidates[i]);
            in->reason[0] = 0;
            probed_ok = 1;
            return;
        }
        if (i == 0)
            snprintf(first_why, sizeof first_why, "%s", why);
        snprintf(last_why, sizeof last_why, "%s", why);
    }
    char reason[1024];
    snprintf(reason, sizeof reason,
             "PAPI %d.%d.%d: %d hardware events available (%s); PAPI_L3_TCM: %s; %s: %s",
             PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
             PAPI_VERSION_REVISION(PAPI_VERSION), presets, comp, first_why,
             candidates[NCANDIDATES - 1], last_why);
    /* The profile keeps 255 characters; the start says the most. */
    snprintf(in->reason, sizeof in->reason, "%.255s", reason);
}

int gcs_counters_probe(gcs_counters_info *info)
{
    pthread_once(&probe_once, probe);
    *info = probed;
    return probed_ok;
}

gcs_counters *gcs_counters_open(gcs_counters_info *info)
{
    if (!gcs_counters_probe(info))
        return NULL;
    gcs_counters *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    char why[96];
    if (try_event(info->event, &c->eventset, why, sizeof why) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

int gcs_counters_start(gcs_counters *c)
{
    return c && _gcs_papi.start(c->eventset) == PAPI_OK ? 0 : -1;
}

int gcs_counters_stop(gcs_counters *c, long long *llc_misses)
{
    return c && _gcs_papi.stop(c->eventset, llc_misses) == PAPI_OK ? 0 : -1;
}

void gcs_counters_close(gcs_counters *c)
{
    if (!c)
        return;
    _gcs_papi.cleanup_eventset(c->eventset);
    _gcs_papi.destroy_eventset(&c->eventset);
    _gcs_papi.unregister_thread();
    free(c);
}
