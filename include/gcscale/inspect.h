/* inspect.h -- heap inspection: from a heap snapshot and a machine profile
 * to the model's inputs (gcs_model_heap of model.h) (prefix gcs_inspect_).
 *
 *   objects, edges     the snapshot's objects and non-NULL pointer fields
 *   live_bytes         header + payload bytes of the objects
 *   live_lines         distinct cache lines the mark touches: the lines of
 *                      every object's header and pointer fields, plus the
 *                      lines of the mark table holding their marks
 *   T1                 gc_cost.object * objects + gc_cost.pointer * edges
 *   Tinf               weighted longest-first-arrival (docs/model.md) with
 *                      w(v) = gcs_gc_mark_weight (gc.h) of gc_cost.object,
 *                      gc_cost.pointer and v's non-NULL and all pointer fields
 *   Q1 (read, RW), L   slow: the collector's serial mark order replayed
 *                      through the cache simulator (cachesim.h); fast: no
 *                      simulation, Q1 = live lines, L estimated
 *   V_j                share of the memory requests that go to node j
 *
 * Definitions, the access stream and the estimates: docs/model.md,
 * "Heap inspection, Q1 and L".  Calls common.h, profile.h, snapshot.h,
 * cachesim.h, model.h (the struct only) and gc.h (the marking weight and
 * the collector's constants).  Never prints.
 */
#ifndef GCSCALE_INSPECT_H
#define GCSCALE_INSPECT_H

#include <stdint.h>

#include "gcscale/cachesim.h"
#include "gcscale/common.h"
#include "gcscale/model.h"
#include "gcscale/profile.h"
#include "gcscale/snapshot.h"

typedef enum gcs_inspect_predictor {
    GCS_INSPECT_FAST = 0,   /* no simulation: sampled counts, Q1 = live lines, L estimated */
    GCS_INSPECT_SLOW = 1,   /* replay of the serial mark through the cache simulator */
} gcs_inspect_predictor;

#define GCS_INSPECT_DEFAULT_SAMPLES 1024

typedef struct gcs_inspect_opts {
    gcs_inspect_predictor predictor;
    int cpu;                /* CPU whose caches are simulated; -1: the first CPU of node 0 */
    /* Tinf: < 0 (default) computes it from the graph (a full walk); >= 0 takes
     * this value (e.g. the collector's own span of the previous collection)
     * and skips the walk -- what the adaptive mode does. */
    double tinf_ns;
    /* Fast predictor: objects sampled for edges, bytes, lines and V_j
     * (0: GCS_INSPECT_DEFAULT_SAMPLES).  Heaps of at most 4 * samples
     * objects, and any heap when exact is set, get an exact pass instead. */
    uint32_t samples;
    int exact;
    /* Slow predictor: model the hardware stream prefetcher (cachesim.h), so
     * that misses it covers go to heap.q1_prefetched.  Default 1. */
    int stream_prefetch;
    /* Count the lines more than one worker may touch (model.h,
     * gcs_model_heap.share_*; model/sharing.c) when the profile has
     * gc_line_transfer_ns to price them.  Default 0: one more walk of the
     * graph, for a term that is off by default (gcs_model_opts.sharing). */
    int shared_lines;
    /* Slow predictor: simulate one line in 2^sim_sample of the replayed
     * mark (line sampling, cachesim.h) instead of every line (0, the
     * default).  About 2^sim_sample times less simulation, but its miss
     * counts, prefetched share and L stay within 2% of the exact replay's
     * only on some heaps (docs/model.md, "The sampled simulation"), so it
     * is not the default.  geom.line_sample_shift of the result says what
     * ran (0 where the profile's caches do not allow it). */
    int sim_sample;
    /* Simulate the collector's work distribution on the graph at P =
     * 2..steal_sim_threads (at most GCS_MODEL_SIM_MAX_THREADS) for model
     * v2's steal count (heap.sim_steals, model/steals.c); 0 (the default):
     * not simulated.  Needs the profile's gc_coord (else nothing is
     * simulated); one pass over the graph per P, on OpenMP's threads. */
    int steal_sim_threads;
} gcs_inspect_opts;

typedef struct gcs_inspect_result {
    gcs_model_heap heap;            /* the model's inputs */
    gcs_inspect_predictor predictor;
    int exact_counts;               /* 1: edges, bytes, lines, V_j from every object; 0: sampled */
    uint32_t samples;               /* objects sampled (0 when exact) */
    uint64_t read_lines;            /* live lines of headers and pointer fields */
    uint64_t rw_lines;              /* live lines of the mark table */
    /* Graph walk (Tinf); all 0 when Tinf was given. */
    int span_walked;
    const char *span_method;        /* "given", "bfs-levels", "tree", "sweeps", "dijkstra" */
    uint64_t reachable;             /* objects reachable from the roots */
    uint64_t depth;                 /* BFS levels (roots are level 1) */
    /* Slow predictor: the simulated serial mark. */
    uint64_t accesses[GCS_ACCESS_COUNT];
    uint64_t marked;                /* objects the replay marked (= reachable) */
    int replay_threads;             /* threads the replay ended with: 1, or 2 with the pipeline */
    gcs_cachesim_geom geom;         /* simulated hierarchy (nlevels 0 for fast) */
    gcs_cachesim_result sim;
    double l_private_lines;         /* fast: lines of the private levels (the cap on L) */
    /* Costs of the inspection itself (ns). */
    double elapsed_ns;              /* everything */
    double span_ns;                 /* the Tinf walk */
    double misses_ns;               /* counts, Q1, L, V_j (the predictor proper) */
} gcs_inspect_result;

GCS_API void gcs_inspect_opts_init(gcs_inspect_opts *opts);

/* Inspects snapshot g for machine prof.  Errors (one line in err):
 *   "profile has no gc_cost_ns: run gcscale calibrate on the machine"
 *   "snapshot names memory node 3 but the profile has 2 nodes"
 *   "profile has no cache geometry: use --fast"  (slow predictor)
 *   out of memory, a snapshot with no objects or no roots. */
GCS_API int gcs_inspect_heap(const gcs_snapshot *g, const gcs_profile *prof, const gcs_inspect_opts *opts,
                     gcs_inspect_result *out, gcs_err *err);

GCS_API const char *gcs_inspect_predictor_name(gcs_inspect_predictor p); /* "fast", "slow" */
/* The predictor to use when the user names none: the slow one where the
 * profile describes data caches it can simulate, else the fast one (a
 * hand-written profile without caches, or one listing instruction caches
 * only). */
GCS_API gcs_inspect_predictor gcs_inspect_default_predictor(const gcs_profile *prof);
/* Whether model v2 takes the collector's steal count from a simulation on
 * the graph (steal_sim_threads) unless told otherwise: 1 with the slow
 * predictor on a profile that prices a steal attempt (gc_coord), 0 else.
 * The slow predictor walks the graph anyway, and the fitted law, which
 * ignores the heap's shape, misses the count twenty-fold on a small tree
 * and seventy-fold on cube; the fast predictor keeps the fit, whose cost is
 * nothing (docs/model.md, "The graph's steals by default"). */
GCS_API int gcs_inspect_steals_simulated_by_default(const gcs_profile *prof, gcs_inspect_predictor predictor);

/* The fast predictor's pieces, shared with the adaptive mode, which builds
 * the same estimates from a collection's statistics instead of a snapshot.
 *
 * Line size and the cap on L for a profile: the lines of the largest
 * private cache level of the profile's first CPU (docs/model.md), or 64 and
 * 16384 when the profile lists no caches. */
GCS_API void gcs_inspect_fast_cache(const gcs_profile *prof, int *line_bytes, double *private_lines);
/* L from the share of examined pointers that found their object marked
 * already (revisit_share), the live lines and the cap: the lines of the
 * mark's depth-first window plus a fitted share of the cap per unit of
 * revisit share, never above min(cap, live). */
GCS_API double gcs_inspect_fast_l(double revisit_share, double live_lines, double private_lines);

/* The result as a JSON object (model inputs, method, counts, costs). */
GCS_API json_t *gcs_inspect_result_to_json(const gcs_inspect_result *r);

#endif
