/* baselines.c -- the GC thread rules production runtimes use, as thread
 * policies of gcscale's collector, so that the adaptive policy can be
 * compared with them on the same collector and heaps (issue 24).
 *
 *   all      P = the pool, every collection
 *   boehm    Boehm GC: markers = CPUs online, at most MAX_MARKERS = 16
 *   hotspot  OpenJDK WorkerPolicy::calc_default_active_workers
 *   zgc      OpenJDK ZDirector's select_gc_workers on ZStatCycle's Amdahl fit
 *
 * Each rule is the runtime's own, transcribed (sources and approximations:
 * docs/adaptive.md "Baselines").  choose() runs in the pause: arithmetic on
 * the previous collection's statistics, no allocation, notes are literals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/adaptive.h"

static const char *const names[] = {NULL, "all", "boehm", "hotspot", "zgc"};
#define NBASELINES ((int)(sizeof names / sizeof *names))

const char *gcs_adaptive_baseline_name(gcs_adaptive_baseline b)
{
    return (int)b > 0 && (int)b < NBASELINES ? names[b] : NULL;
}

gcs_adaptive_baseline gcs_adaptive_baseline_find(const char *word, size_t len)
{
    for (int i = 1; i < NBASELINES; i++)
        if (strlen(names[i]) == len && strncmp(word, names[i], len) == 0)
            return (gcs_adaptive_baseline)i;
    return GCS_ADAPTIVE_BASELINE_NONE;
}

/* ---- HotSpot ------------------------------------------------------------------ */

#define HOTSPOT_WORKERS_PER_JAVA_THREAD 2 /* GCWorkersPerJavaThread's default */

int gcs_adaptive_hotspot_workers(int total_workers, int prev_active, int app_threads, uint64_t heap_bytes,
                                 int *by_jt, int *by_heap)
{
    int min_workers = total_workers == 1 ? 1 : 2; /* WorkerPolicy::calc_active_workers */
    long jt = (long)HOTSPOT_WORKERS_PER_JAVA_THREAD * (app_threads > 0 ? app_threads : 0);
    if (jt < min_workers)
        jt = min_workers;
    uint64_t heap = heap_bytes / GCS_ADAPTIVE_HOTSPOT_HEAP_PER_THREAD;
    if (heap < 2)
        heap = 2;
    if (by_jt)
        *by_jt = jt > GCS_GC_MAX_THREADS * 1000L ? GCS_GC_MAX_THREADS * 1000 : (int)jt;
    if (by_heap)
        *by_heap = heap > (uint64_t)GCS_GC_MAX_THREADS * 1000 ? GCS_GC_MAX_THREADS * 1000 : (int)heap;
    uint64_t want = (uint64_t)jt > heap ? (uint64_t)jt : heap;
    int n = want < (uint64_t)total_workers ? (int)want : total_workers;
    /* "Increase GC workers instantly but decrease them more slowly." */
    if (n < prev_active) {
        int mid = (prev_active + n) / 2;
        n = mid > min_workers ? mid : min_workers;
    }
    return n;
}

/* ---- ZGC ---------------------------------------------------------------------- */

/* HotSpot's AbsSeq: a decaying average and variance (zStat.cpp keeps the
 * cycle's serial and parallelizable times with alpha 0.7). */
typedef struct decaying {
    int n;
    double avg, var;
} decaying;

#define ZGC_ALPHA 0.7
#define ZGC_ONE_IN_1000 3.290527  /* zDirector.cpp: sd multiple for a 1-in-1000 margin */
#define ZGC_WARM_CYCLES 3         /* ZStatCycle::is_warm */
#define ZGC_LONG_GC_DEADLINE_S 10 /* select_gc_workers: avoid a GC cycle longer than 10 s */

static void decaying_add(decaying *d, double v)
{
    if (d->n++ == 0) {
        d->avg = v;
        d->var = 0;
        return;
    }
    d->avg = (1 - ZGC_ALPHA) * v + ZGC_ALPHA * d->avg;
    double diff = v - d->avg;
    d->var = (1 - ZGC_ALPHA) * diff * diff + ZGC_ALPHA * d->var;
}

static double decaying_predict(const decaying *d) { return d->avg + sqrt(d->var) * ZGC_ONE_IN_1000; }

/* zDirector.cpp estimated_gc_workers (times in seconds). */
static double zgc_estimated(double serial, double parallelizable, double until_deadline)
{
    double t = until_deadline - serial;
    return parallelizable / (t > 0.001 ? t : 0.001);
}

/* ---- the policies --------------------------------------------------------------- */

typedef struct baseline_state {
    gcs_adaptive_baseline kind;
    int ncpus;
    /* zgc */
    decaying serial_s, parallel_s;
    uint64_t seen_index;         /* the last collection added to the fit (0: none) */
    uint64_t seen_end_ns;        /* its start_ns + pause_ns */
    uint64_t seen_live_bytes;
    double rate_bps;             /* allocation rate of the last mutator interval; NaN: unknown */
    double interval_s;           /* that interval */
} baseline_state;

static void input(gcs_gc_decision *d, const char *name, double v)
{
    if (d->ninputs < GCS_GC_DECISION_INPUTS) {
        d->inputs[d->ninputs].name = name;
        d->inputs[d->ninputs].value = v;
        d->ninputs++;
    }
}

static int choose_hotspot(const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *d)
{
    if (!prev) {
        /* HotSpot's active_workers starts at the pool size; without a
         * previous collection neither term is known yet. */
        d->note = "first collection: the pool size, as HotSpot's active_workers starts";
        return max_threads;
    }
    int jt, heap;
    int n = gcs_adaptive_hotspot_workers(max_threads, prev->threads, prev->mutators, prev->heap_limit, &jt, &heap);
    input(d, "by_JT", jt);
    input(d, "by_heap", heap);
    input(d, "app_threads", prev->mutators);
    input(d, "previous", prev->threads);
    d->note = n < prev->threads ? "max(by_JT, by_heap) below the last P: shrink to the midpoint"
                                : "max(by_JT, by_heap), clamped to the pool";
    return n;
}

static int choose_zgc(baseline_state *s, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *d)
{
    if (!prev) {
        d->note = "not warm (fewer than 3 collections): all workers";
        return max_threads;
    }
    /* Rate of allocation over the mutator interval that ended with prev:
     * only when the fit saw the collection just before it. */
    if (prev->index > s->seen_index) {
        s->rate_bps = NAN;
        if (s->seen_index && prev->index == s->seen_index + 1 && prev->start_ns > s->seen_end_ns) {
            /* Pages holding objects when prev began, minus what the one
             * before kept: bytes allocated in between (page-granular). */
            double used = (double)(prev->pages_in_use + prev->pages_freed) * GCS_GC_PAGE_BYTES;
            double alloc = used - (double)s->seen_live_bytes;
            s->interval_s = (double)(prev->start_ns - s->seen_end_ns) / 1e9;
            s->rate_bps = (alloc > 0 ? alloc : 0) / s->interval_s;
        }
        int p = prev->threads > 0 ? prev->threads : 1;
        double par = (double)prev->t1_ns / 1e9;
        double serial = (double)prev->pause_ns / 1e9 - par / p;
        decaying_add(&s->serial_s, serial > 0 ? serial : 0);
        decaying_add(&s->parallel_s, par);
        s->seen_index = prev->index;
        s->seen_end_ns = prev->start_ns + prev->pause_ns;
        s->seen_live_bytes = prev->live_bytes;
    }
    double serial = decaying_predict(&s->serial_s), par = decaying_predict(&s->parallel_s);
    input(d, "serial_ms", serial * 1e3);
    input(d, "parallelizable_ms", par * 1e3);
    if (s->serial_s.n < ZGC_WARM_CYCLES) {
        d->note = "not warm (fewer than 3 collections): all workers";
        return max_threads;
    }
    /* Free heap after the last collection over the allocation rate: how
     * long until this collection's successor finds the heap full.  ZGC adds
     * 1 byte/s to the rate so that none means a long but finite time. */
    double free_b = prev->heap_limit > prev->live_bytes ? (double)(prev->heap_limit - prev->live_bytes) : 0;
    double until_oom = isnan(s->rate_bps) ? INFINITY : free_b / (s->rate_bps + 1.0);
    input(d, "time_until_oom_s", isinf(until_oom) ? -1 : until_oom);
    double avoid_long = zgc_estimated(serial, par, ZGC_LONG_GC_DEADLINE_S);
    double avoid_oom = isinf(until_oom) ? 0 : zgc_estimated(serial, par, until_oom);
    double workers = avoid_long > avoid_oom ? avoid_long : avoid_oom;
    double actual = ceil(workers);
    actual = actual < 1 ? 1 : actual > max_threads ? max_threads : actual;
    int last = prev->threads;
    d->note = "max(workers for a 10 s cycle, workers to finish before the heap fills)";
    if (actual < last && !isinf(until_oom)) {
        /* "Before decreasing number of GC workers compared to the previous
         * GC cycle, check if the next GC cycle will need to increase it
         * again": the next cycle's time until OOM gains the time since this
         * one (the last mutator interval, assumed steady; ZGC also subtracts
         * its 0.1 s allocation-sampling interval, 0 here: we decide at the
         * collection) less how much longer the cycle is with fewer workers;
         * + 0.5 "to increase friction and avoid lowering too eagerly". */
        double delta = par / actual - par / last;
        double next = zgc_estimated(serial, par, until_oom + s->interval_s - delta) + 0.5;
        workers = next < actual ? actual : next > last ? last : next;
        actual = ceil(workers);
        actual = actual < 1 ? 1 : actual > max_threads ? max_threads : actual;
        d->note = "fewer workers than last time, but no fewer than the next cycle needs";
    }
    input(d, "gc_workers", workers);
    return (int)actual;
}

static int baseline_choose(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *d)
{
    baseline_state *s = state;
    switch (s->kind) {
    case GCS_ADAPTIVE_BASELINE_ALL:
        d->note = "all: every worker of the pool";
        return max_threads;
    case GCS_ADAPTIVE_BASELINE_BOEHM: {
        int n = s->ncpus < 16 ? s->ncpus : 16; /* GC_markers: GC_nprocs, at most MAX_MARKERS */
        input(d, "cpus", s->ncpus);
        d->note = "boehm: CPUs online, at most 16";
        return n < max_threads ? n : max_threads;
    }
    case GCS_ADAPTIVE_BASELINE_HOTSPOT: return choose_hotspot(prev, max_threads, d);
    case GCS_ADAPTIVE_BASELINE_ZGC: return choose_zgc(s, prev, max_threads, d);
    default: return 0;
    }
}

int gcs_adaptive_baseline_policy_new(gcs_adaptive_baseline b, int ncpus, gcs_gc_thread_policy *out, gcs_err *err)
{
    memset(out, 0, sizeof *out);
    const char *name = gcs_adaptive_baseline_name(b);
    if (!name) {
        gcs_err_set(err, "no baseline thread policy %d (all, boehm, hotspot, zgc)", (int)b);
        return -1;
    }
    baseline_state *s = calloc(1, sizeof *s);
    if (!s) {
        gcs_err_set(err, "out of memory for the %s thread policy", name);
        return -1;
    }
    if (ncpus <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        ncpus = n < 1 ? 1 : n > 1 << 20 ? 1 << 20 : (int)n;
    }
    s->kind = b;
    s->ncpus = ncpus;
    s->rate_bps = NAN;
    out->name = name;
    out->choose = baseline_choose;
    out->destroy = free;
    out->state = s;
    return 0;
}
