/* llc.c -- last-level-cache misses per GC worker, through PAPI.
 *
 * Probed once per process: PAPI_library_init, PAPI_thread_init, then the
 * first of a few LLC-miss events that can really be started (the preset
 * PAPI_L3_TCM, then native names).  Each worker makes its own event set on
 * its own thread and starts/stops it around its mark phase only (two ioctls
 * per worker per collection, nothing per object).  Where no event works --
 * virtual machines without a PMU -- workers report cache_misses = -1 and
 * gcs_gc_cache_miss_info() gives PAPI's reason; nothing else changes. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../common/papi_internal.h"

#include "gc_internal.h"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_ok, probe_code;
static char probe_text[512];

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

static const char *const candidates[] = {
    "PAPI_L3_TCM", "PAPI_L3_LDM", "LLC_MISSES", "LONGEST_LAT_CACHE:MISS", "perf::LLC-LOAD-MISSES",
};
#define NCANDIDATES (sizeof candidates / sizeof candidates[0])

static void probe(void)
{
    char why[256];
    if (_gcs_papi_load(why, sizeof why) < 0) {
        snprintf(probe_text, sizeof probe_text, "unavailable: %s", why);
        return;
    }
    int v = _gcs_papi.is_initialized() ? (int)PAPI_VER_CURRENT : _gcs_papi.library_init(PAPI_VER_CURRENT);
    if (v != (int)PAPI_VER_CURRENT) {
        snprintf(probe_text, sizeof probe_text, "PAPI_library_init: %s",
                 v < 0 ? _gcs_papi.strerror(v) : "PAPI version mismatch");
        return;
    }
    int rc = _gcs_papi.thread_init(thread_id);
    if (rc != PAPI_OK) {
        snprintf(probe_text, sizeof probe_text, "PAPI_thread_init: %s", _gcs_papi.strerror(rc));
        return;
    }
    char first_why[96] = "";
    for (size_t i = 0; i < NCANDIDATES; i++) {
        int code, es = PAPI_NULL;
        long long val;
        if ((rc = _gcs_papi.event_name_to_code((char *)candidates[i], &code)) == PAPI_OK &&
            (rc = _gcs_papi.create_eventset(&es)) == PAPI_OK) {
            if ((rc = _gcs_papi.add_event(es, code)) == PAPI_OK && (rc = _gcs_papi.start(es)) == PAPI_OK)
                rc = _gcs_papi.stop(es, &val);
            _gcs_papi.cleanup_eventset(es);
            _gcs_papi.destroy_eventset(&es);
        }
        if (rc == PAPI_OK) {
            probe_ok = 1;
            probe_code = code;
            snprintf(probe_text, sizeof probe_text, "%s", candidates[i]);
            return;
        }
        if (i == 0)
            snprintf(first_why, sizeof first_why, "%s", _gcs_papi.strerror(rc));
    }
    char comp[140] = "no perf_event component";
    int cid = _gcs_papi.get_component_index("perf_event");
    const PAPI_component_info_t *ci = cid >= 0 ? _gcs_papi.get_component_info(cid) : NULL;
    if (ci && ci->disabled)
        snprintf(comp, sizeof comp, "perf_event disabled: %.100s", ci->disabled_reason);
    else if (ci)
        snprintf(comp, sizeof comp, "perf_event: %d native events", ci->num_native_events);
    snprintf(probe_text, sizeof probe_text,
             "unavailable: PAPI %d.%d (%s); PAPI_L3_TCM: %s; no native LLC-miss event either",
             PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION), comp, first_why);
}

void _gcs_llc_setup(gcs_collector *gc)
{
    pthread_once(&probe_once, probe);
    gc->counters_ok = probe_ok;
}

int gcs_gc_cache_miss_info(char *buf, size_t n)
{
    pthread_once(&probe_once, probe);
    if (buf && n)
        snprintf(buf, n, "%s", probe_text);
    return probe_ok;
}

void _gcs_llc_worker_open(gcs_worker *w)
{
    w->papi_eventset = PAPI_NULL;
    if (!w->gc->counters_ok)
        return;
    int es = PAPI_NULL;
    if (_gcs_papi.create_eventset(&es) != PAPI_OK)
        return;
    if (_gcs_papi.add_event(es, probe_code) != PAPI_OK) {
        _gcs_papi.cleanup_eventset(es);
        _gcs_papi.destroy_eventset(&es);
        return;
    }
    w->papi_eventset = es;
}

void _gcs_llc_worker_close(gcs_worker *w)
{
    if (w->papi_eventset != PAPI_NULL) {
        _gcs_papi.cleanup_eventset(w->papi_eventset);
        _gcs_papi.destroy_eventset(&w->papi_eventset);
        w->papi_eventset = PAPI_NULL;
    }
    if (w->gc->counters_ok)
        _gcs_papi.unregister_thread();
}

void _gcs_llc_worker_start(gcs_worker *w)
{
    if (w->papi_eventset != PAPI_NULL && _gcs_papi.start(w->papi_eventset) != PAPI_OK) {
        _gcs_papi.cleanup_eventset(w->papi_eventset);
        _gcs_papi.destroy_eventset(&w->papi_eventset);
        w->papi_eventset = PAPI_NULL;
    }
}

void _gcs_llc_worker_stop(gcs_worker *w)
{
    long long v = 0;
    if (w->papi_eventset != PAPI_NULL && _gcs_papi.stop(w->papi_eventset, &v) == PAPI_OK)
        w->st.cache_misses = v;
    else
        w->st.cache_misses = -1;
}
