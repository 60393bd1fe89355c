/* adaptive.h -- adaptive GC thread regulation (prefix gcs_adaptive_).
 *
 * Before each collection the adaptive policy predicts the mark time for
 * P = 1..max with the Endo-Taura-Yonezawa model (model.h), from the machine
 * profile and the previous collection's statistics, and uses the smallest P
 * whose predicted time is within a tolerance (default 5%) of the best
 * (docs/adaptive.md).  It plugs into the collector through the generic thread
 * policy of gc.h (gcs_gc_options.thread_policy); the collector stores each
 * decision in its statistics and log line.  docs/adaptive.md explains how
 * each model input is estimated from the previous collection.
 *
 * Thread specs, the syntax of GCSCALE_GC_THREADS and of `--gc-threads`:
 *   "N"             a fixed count, 1..GCS_GC_MAX_THREADS
 *   "adaptive"      adaptive, pool of one worker per CPU
 *   "adaptive:MAX"  adaptive, pool of MAX workers (1..GCS_GC_MAX_THREADS)
 *   "all", "boehm", "hotspot", "zgc" (each also WORD:MAX)
 *                   a baseline policy: the rule a production runtime uses
 *                   (below; docs/adaptive.md "Baselines"); no profile needed
 *
 * Calls gc.h, model.h, inspect.h (the fast predictor's L), profile.h and
 * common.h.  Never prints.
 */
#ifndef GCSCALE_ADAPTIVE_H
#define GCSCALE_ADAPTIVE_H

#include "gcscale/common.h"
#include "gcscale/gc.h"
#include "gcscale/model.h"
#include "gcscale/profile.h"

#define GCS_ADAPTIVE_DEFAULT_TOLERANCE 0.05
#define GCS_ADAPTIVE_POLICY_NAME "adaptive"

/* A parsed thread spec. */
typedef struct gcs_adaptive_spec {
    int adaptive;     /* 0: fixed `threads`; 1: a policy (adaptive or a baseline) with a pool of max_threads */
    int threads;      /* fixed: the count; policy: 0 */
    int max_threads;  /* policy: MAX, or 0 for one per CPU; fixed: 0 */
    int baseline;     /* a gcs_adaptive_baseline (adaptive 1); GCS_ADAPTIVE_BASELINE_NONE: the model's policy */
} gcs_adaptive_spec;

/* Parses "N", "adaptive", "adaptive:MAX" or a baseline word (WORD or
 * WORD:MAX).  -1 with a one-line error naming the accepted forms for
 * anything else ("0", "adaptive:0", "x"). */
GCS_API int gcs_adaptive_parse_spec(const char *spec, gcs_adaptive_spec *out, gcs_err *err);

/* Configures gc options from a thread spec "N", "adaptive", "adaptive:MAX"
 * or a baseline word (the same syntax as the GCSCALE_GC_THREADS environment variable;
 * threads_spec NULL: that variable, and unset or empty: opts unchanged).  For
 * "N" it sets opts->threads.  For adaptive it loads the machine profile
 * (machine_path; NULL: $GCSCALE_MACHINE, else data/machines/HOSTNAME.json;
 * none found -> -1 with a clear error naming `gcscale calibrate`), sets
 * opts->max_threads to MAX (default: CPUs online), opts->threads to it (the
 * first collection's P) and installs the adaptive thread policy in
 * opts->thread_policy.  A baseline is installed the same way, without a
 * profile (machine_path is not read).  Either way it sets opts->ignore_threads_env: the
 * spec decided.  Call before gcs_gc_init, which then owns the policy (a
 * caller that does not call gcs_gc_init releases it with
 * gcs_adaptive_release). */
GCS_API int gcs_adaptive_configure(gcs_gc_options *opts, const char *threads_spec, const char *machine_path,
                           gcs_err *err);

/* Destroys an installed policy that no gcs_gc_init took over; clears it. */
GCS_API void gcs_adaptive_release(gcs_gc_options *opts);

/* ---- the policy itself (for tests, tools and other collectors) ---------------- */

typedef struct gcs_adaptive_opts {
    double tolerance;       /* epsilon: 0.05 = within 5% of the best; default 0.05 */
    int first_threads;      /* P for the first collection (no statistics); 0: max_threads */
    /* Tinf / T1 assumed until a collection with P >= 2 (or a computed span)
     * has measured it; default 0 (no span: bushy). */
    double initial_span_fraction;
    /* After this many consecutive collections at P = 1 decided on a span
     * measured that long ago, run one collection at max_threads to measure
     * it again (a P = 1 collection cannot measure the span); 0: never.
     * Default 4: one noisy measurement (a worker the host descheduled looks
     * like a span) must not lock a short run into P = 1. */
    int reprobe_after;
    /* Share of the mark time decisions may cost, on average (default 0.01):
     * each collection earns cost_budget * its mark time; a collection whose
     * saved-up credit cannot pay for a full decision (estimate + prediction,
     * as the last one cost) keeps the last choice without looking (note
     * "last choice kept: ...").  Independently, a full decision reuses the
     * last prediction while T1, Q1 and L stay within 1%, Tinf / T1 within
     * 0.05 and each V_j within 0.01.  0: never a full decision after the first. */
    double cost_budget;
    int use_model_opts;     /* 1: `model` below; 0 (default): gcs_model_opts_init + _use_profile, span CRITICAL */
    gcs_model_opts model;
} gcs_adaptive_opts;

GCS_API void gcs_adaptive_opts_init(gcs_adaptive_opts *opts);

/* Builds the adaptive policy for profile `prof`, which it takes over (freed
 * by the policy's destroy, also when this fails).  -1 with err set if the
 * profile has no gc_cost_ns or fails gcs_model_check. */
GCS_API int gcs_adaptive_policy_new(gcs_profile *prof, const gcs_adaptive_opts *opts, gcs_gc_thread_policy *out,
                            gcs_err *err);

/* What the policy estimated from one previous collection: the model's heap
 * and how the span was obtained. */
typedef struct gcs_adaptive_estimate {
    gcs_model_heap heap;
    double span_fraction;     /* Tinf / T1 used */
    const char *span_source;  /* "computed-span", "idle-time", "remembered", "initial" */
} gcs_adaptive_estimate;

/* The fast predictor's inputs from a collection's statistics (docs/adaptive.md):
 * objects, edges, T1 from the profile's marker costs, Q1 = live lines from the
 * live bytes, L from the revisit share, V_j from the per-node live bytes, and
 * Tinf from the computed span when there is one, else from the workers' idle
 * time (P >= 2), else span_fraction_hint * T1 (< 0: 0).  Returns the
 * estimate's own Tinf / T1 measure in est->span_fraction; -1 if stats hold no
 * marked object. */
GCS_API int gcs_adaptive_estimate_heap(const gcs_gc_stats *prev, const gcs_profile *prof, double span_fraction_hint,
                               gcs_adaptive_estimate *est, gcs_err *err);

/* The decision for one collection, as the policy's choose() makes it; exposed
 * for tests.  state is the policy's state (out->state of gcs_adaptive_policy_new). */
GCS_API int gcs_adaptive_choose(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out);

/* ---- baselines: the thread rules of production runtimes (baselines.c) ----------- */

/* Each is a gcs_gc_thread_policy named by its spec word; docs/adaptive.md
 * "Baselines" gives the source of each rule and what is approximated. */
typedef enum gcs_adaptive_baseline {
    GCS_ADAPTIVE_BASELINE_NONE = 0,
    GCS_ADAPTIVE_BASELINE_ALL,      /* "all": P = the pool, every collection */
    GCS_ADAPTIVE_BASELINE_BOEHM,    /* "boehm": CPUs online, at most 16 (Boehm GC's GC_markers) */
    GCS_ADAPTIVE_BASELINE_HOTSPOT,  /* "hotspot": WorkerPolicy::calc_default_active_workers */
    GCS_ADAPTIVE_BASELINE_ZGC,      /* "zgc": ZDirector's select_gc_workers on an Amdahl fit */
} gcs_adaptive_baseline;

/* The spec word of a baseline ("all", ...); NULL for NONE or an unknown value. */
GCS_API const char *gcs_adaptive_baseline_name(gcs_adaptive_baseline b);
/* The baseline named by the first len bytes of word; NONE if none. */
GCS_API gcs_adaptive_baseline gcs_adaptive_baseline_find(const char *word, size_t len);

/* Builds baseline b's policy.  ncpus: the CPUs "boehm" counts (0: online
 * now; tests pass a machine's).  -1 with err set for NONE or an unknown b. */
GCS_API int gcs_adaptive_baseline_policy_new(gcs_adaptive_baseline b, int ncpus, gcs_gc_thread_policy *out,
                                             gcs_err *err);

/* HotSpot's rule as a function (the "hotspot" policy calls it): the active
 * workers for a pool of total_workers, the previous collection's
 * prev_active, app_threads application threads and a heap of heap_bytes
 * capacity.  by_jt / by_heap, if not NULL, get the rule's two terms. */
GCS_API int gcs_adaptive_hotspot_workers(int total_workers, int prev_active, int app_threads, uint64_t heap_bytes,
                                         int *by_jt, int *by_heap);

/* HotSpot's HeapSizePerGCThread on a 64-bit machine: ScaleForWordSize(32 MiB). */
#define GCS_ADAPTIVE_HOTSPOT_HEAP_PER_THREAD ((uint64_t)(((32ull << 20) * 13 / 10) & ~(uint64_t)7))

#endif
