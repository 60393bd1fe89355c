/* adaptive.h -- adaptive GC thread regulation (prefix gcs_adaptive_).
 *
 * Before each collection the adaptive policy predicts the mark time for
 * P = 1..max with the Endo-Taura-Yonezawa model (model.h), from the machine
 * profile and the previous collection's statistics, corrects the curve
 * with what the collections measured at the P they ran, and takes the
 * objective's P (least GC CPU within a tolerance, default 5%, of the
 * shortest pause; or the shortest pause), with hysteresis, a small-heap cap
 * and occasional exploration (docs/adaptive.md).  It plugs into the collector through the generic thread
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

typedef struct gcs_adaptive_opts gcs_adaptive_opts; /* below */

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
 * (machine_path; NULL: $GCSCALE_MACHINE, else data/machines/HOSTNAME.json),
 * sets opts->max_threads to MAX (default: CPUs online), opts->threads to it
 * (the first collection's P) and installs the adaptive thread policy in
 * opts->thread_policy.  The collector never fails because the policy cannot
 * run: when no usable profile is found (none, unreadable, malformed, without
 * gc_cost_ns) it installs the fallback -- the "adaptive" policy running
 * every collection with the pool (P = MAX), each decision noting why -- and
 * returns 1 with the one warning in err (naming `gcscale calibrate`); the
 * caller prints it.  A baseline is installed the same way, without a
 * profile (machine_path is not read).  Either way it sets opts->ignore_threads_env: the
 * spec decided.  Call before gcs_gc_init, which then owns the policy (a
 * caller that does not call gcs_gc_init releases it with
 * gcs_adaptive_release).  0: configured; 1: configured with the fallback
 * (warning in err); -1: a bad spec (err). */
GCS_API int gcs_adaptive_configure(gcs_gc_options *opts, const char *threads_spec, const char *machine_path,
                           gcs_err *err);

/* Parses an objective "pause", "cpu" or "cpu:EPS" (EPS a fraction, 0-1,
 * e.g. "cpu:0.05") into opts->objective and opts->tolerance. */
GCS_API int gcs_adaptive_parse_objective(const char *spec, gcs_adaptive_opts *opts, gcs_err *err);

/* gcs_adaptive_configure with the adaptive policy's options (NULL: the
 * defaults, with the objective from $GCSCALE_GC_OBJECTIVE if set). */
GCS_API int gcs_adaptive_configure_with(gcs_gc_options *opts, const char *threads_spec, const char *machine_path,
                                        const gcs_adaptive_opts *aopts, gcs_err *err);

/* Destroys an installed policy that no gcs_gc_init took over; clears it. */
GCS_API void gcs_adaptive_release(gcs_gc_options *opts);

/* ---- the policy itself (for tests, tools and other collectors) ---------------- */

/* What the policy minimises (docs/adaptive.md, "Objectives"). */
typedef enum gcs_adaptive_objective {
    /* Least GC CPU time (P x the pause) among the P whose pause is within
     * `tolerance` of the shortest: what a runtime billed for CPU (a
     * container) asks for.  With tolerance 0.05 it is the paper's rule, the
     * smallest P within 5% of the best, wherever the speedup is sublinear. */
    GCS_ADAPTIVE_OBJECTIVE_CPU = 0,
    GCS_ADAPTIVE_OBJECTIVE_PAUSE = 1, /* the shortest predicted pause */
} gcs_adaptive_objective;

struct gcs_adaptive_opts {
    gcs_adaptive_objective objective; /* default CPU */
    double tolerance;       /* epsilon of the CPU objective: 0.05 = within 5% of the best; default 0.05 */
    int first_threads;      /* P for the first collection (no statistics); 0: max_threads */
    /* Tinf / T1 assumed until a collection with P >= 2 (or a computed span)
     * has measured it; default 0 (no span: bushy). */
    double initial_span_fraction;
    /* Exploration: when a neighbour of the chosen P (P - 1 or P + 1) has
     * not run for this many collections (or never) and its corrected
     * prediction is within explore_margin of the choice's, run it once to
     * measure it; at most one exploration per explore_after collections.
     * 0: never.  Default 24, margin 0.25. */
    int explore_after;
    double explore_margin;
    /* Small-heap cap: every worker must get at least this much of the
     * corrected P = 1 mark time (ns); default 100000 (100 us); 0: no cap. */
    double min_thread_work_ns;
    /* Share of the pause a decision may cost, every collection (default
     * 0.01).  Before deciding, the policy compares what the decision is
     * expected to cost (twice the median of its last three, measured) with
     * cost_budget x the collector's part of the previous pause (its pause
     * less the time to stop the world): a decision that would not fit is
     * not made (P as last settled, within the small-heap cap from the
     * measured work; note "no decision ...").  With background 1 this
     * bounds the hand-over to the decision thread; with 0 the decision in
     * the pause, and a new curve in it is predicted only when that fits
     * too (else the last curve is reused, scaled to the new T1).
     * Independently, the last curve is reused while T1, Q1 and L stay
     * within 1%, Tinf / T1 within 0.05 and each V_j within 0.01.
     * Statistics without a pause (pause_ns 0) set no budget.  0: no
     * decision at all after the first collection. */
    double cost_budget;
    /* 1 (default): every decision is made by a thread of the policy at the
     * lowest scheduling priority (SCHED_IDLE), outside the pause: the pause
     * hands it the last collection's statistics and takes the decision it
     * made from the ones before, so a collection runs with what the one
     * before last measured (docs/adaptive.md, "Cost").  The hand-over is
     * bounded by cost_budget too.  0: decisions in the pause, within the
     * budget (what tests that need every decision at once use). */
    int background;
    int use_model_opts;     /* 1: `model` below; 0 (default): gcs_model_opts_init (the base model), span CRITICAL */
    gcs_model_opts model;   /* a residency curve in it is read from the policy's own profile */
};

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
