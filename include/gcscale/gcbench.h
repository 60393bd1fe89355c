/* gcbench.h -- the gc-bench engine: full collections of one heap at several
 * GC thread counts P (prefix gcs_gcbench_).
 *
 * The heap (a canonical shape, shapes.h, or a snapshot's graph) is built
 * once in gcscale's collector, collected GCS_GCBENCH_WARMUP times to warm
 * up, then reps times at every P, the P values taking turns within each
 * round so that slow drifts of a shared machine hit every P alike.  Nothing
 * is allocated between collections: every collection marks and sweeps the
 * same live heap.  The result and its JSON format: gcbench_result.h.
 *
 * Starts and shuts down the collector, so none may run in the process.
 * Calls common.h, gc.h, shapes.h, snapshot.h, adaptive.h, gcbench_result.h.
 */
#ifndef GCSCALE_GCBENCH_H
#define GCSCALE_GCBENCH_H

#include "gcscale/gc.h"
#include "gcscale/gcbench_result.h"
#include "gcscale/shapes.h"

#define GCS_GCBENCH_WARMUP 2
#define GCS_GCBENCH_MAX_REPS 1000

typedef struct gcs_gcbench_opts {
    gcs_shape_params shape;     /* the heap, unless snapshot */
    const char *snapshot;       /* rebuild this heap snapshot's graph instead */
    const char *snapshot_out;   /* write a snapshot of the built heap (first warm-up) */
    const int *threads;         /* the P values, ascending, each 1..GCS_GC_MAX_THREADS */
    int nthreads;
    int reps;                   /* collections per P, 1..GCS_GCBENCH_MAX_REPS */
    int span;                   /* also T-infinity (one extra collection) */
    int instr_cost;             /* also each collection with instrumentation off */
    uint64_t heap_limit;        /* 0: from the heap's size */
    gcs_gc_options gc;          /* mark_mode, numa_policy/numa_node, placement;
                                   the engine sets heap and thread settings */
    const char *numa_name;      /* how the result names the NUMA policy */
    const char *adaptive_spec;  /* "adaptive[:MAX]": one more collection per round
                                   with the policy choosing P; NULL: none */
    const char *machine;        /* its machine profile (NULL: the default) */
    int quiet;                  /* no progress line on stderr, no notices */
    /* Things worth a line while the run goes on (the snapshot written, a
     * snapshot's unreachable objects); warning: a caveat of the result. */
    void (*notice)(void *arg, int warning, const char *msg);
    void *notice_arg;
} gcs_gcbench_opts;

/* Defaults: seed 1, 7 reps, workers placed one per core (cores), NUMA "local", the collector's
 * default options; no shape and no thread counts (the caller's to give). */
GCS_API void gcs_gcbench_opts_init(gcs_gcbench_opts *o);

/* Runs the benchmark; *out (gcs_gcbench_result_free) gets every
 * repetition and the medians per P.  -1 with err set when the heap cannot
 * be built or the collector misbehaves (a collection that loses live
 * objects). */
GCS_API int gcs_gcbench_run(const gcs_gcbench_opts *o, gcs_gcbench_result **out, gcs_err *err);

#endif
