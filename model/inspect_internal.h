/* inspect_internal.h -- what the three files of heap inspection share, and
 * the benchmark-only entry point (not installed; prefix _gcs_inspect_).
 *
 *   inspect.c   the public entry (gcs_inspect_heap), the counts (exact and
 *               sampled), V_j, the fast predictor's L, the JSON;
 *   span.c      T-infinity: which walk a heap gets (the walks, in span_*.c,
 *               share span_internal.h);
 *   replay.c    the slow predictor: the collector's serial mark replayed on
 *               object ids through the cache simulator, its ring, the
 *               two-thread pipeline and its trial, the staged replay.
 *
 * The object layout below (mark_addr, pointer_free, node_slot) is read by
 * the counts and by the replay's inner loop alike, so it is static inline
 * here: the replay's generated code is the one it had in a single file.
 */
#ifndef GCSCALE_MODEL_INSPECT_INTERNAL_H
#define GCSCALE_MODEL_INSPECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/internal.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"

/* ---- layout (inspect.c builds it; the counts and the replay read it) ------ */

typedef struct layout {
    uint64_t hdr;         /* header bytes in front of a payload */
    int gshift;           /* log2 granule */
    int bits;             /* mark bits (one 64-bit word per 64 granules) instead of bytes */
    int lshift;           /* log2 line */
    /* Where the replay puts the mark table: above every heap offset, and
     * as low as that allows, because the simulator tells lines apart only
     * below gcs_cachesim_addr_limit (a fixed base at 4 TiB made mark-table
     * lines share tags with heap lines on levels of 16 sets or fewer). */
    uint64_t mark_base;
} layout;

static inline uint64_t mark_addr(const layout *ly, uint64_t payload)
{
    uint64_t g = (payload - ly->hdr) >> ly->gshift;
    return ly->mark_base + (ly->bits ? (g >> 6) << 3 : g);
}

/* Boehm-style pointer-free pages (gc/): a small object without pointer
 * fields lives on a page the mark knows to hold no pointers.  The mark sets
 * such an object's mark without reading its header when it meets it as an
 * element of a large array's chunk (gc/mark.c examines those in place);
 * popped from the stack, any object's header is read, as the collector
 * prefetches headers before it looks at the page.  A large object's header
 * is always read.  The fast predictor, which does not know how objects are
 * reached, counts no header line for them (docs/model.md). */
static inline int pointer_free(const gcs_snapshot *g, const layout *ly, uint64_t i)
{
    return g->nptrs[i] == 0 && ly->hdr + 8 * (uint64_t)g->words[i] <= GCS_GC_SMALL_MAX;
}

/* Object i's node slot: its node, or nnodes for an unknown one. */
static inline uint32_t node_slot(const gcs_snapshot *g, uint64_t i, int nnodes)
{
    uint16_t n = g->node[i];
    return n < (unsigned)nnodes ? n : (uint32_t)nnodes;
}

/* What the replay's walk needs of an object, packed into half a host line
 * so that examining and scanning it costs one host miss, not one per
 * snapshot array (address, field count, field offset, fields, node: five on
 * a heap marked in random order).  Built in the exact counts' pass
 * (inspect.c), which reads the same fields in id order anyway. */
#define REC_EDGES 4

typedef struct robj {
    uint64_t addr;          /* payload offset */
    uint32_t nptrs;
    uint16_t node;          /* node slot (node_slot()) */
    uint8_t pf;             /* pointer-free (pointer_free()): only its mark is touched */
    uint8_t pad;
    uint32_t edge[REC_EDGES]; /* the first fields; the rest from the snapshot */
} robj;

/* ---- inspect.c ------------------------------------------------------------ */

/* V_j from per-node weights w[0..nnodes] (w[nnodes]: the unknown node). */
void _gcs_inspect_set_v(gcs_model_heap *h, const double *w, int nnodes);

/* Benchmark-only knobs of the slow predictor (model/bench/bench_model.c and
 * tests/test_inspect.c), kept out of the public gcs_inspect_opts. */
typedef struct _gcs_inspect_bench_opts {
    /* Threads of the mark replay (replay.c, "the pipeline"): 0 (what
     * gcs_inspect_heap does) lets a large heap marked out of address order
     * try a second thread that simulates while this one walks, and keep it
     * when that is faster; 1 keeps the replay on the calling thread; 2 uses
     * the second thread from the start wherever it may (a heap marked out of
     * address order, two CPUs).  The results are the same either way. */
    int replay_threads;
    /* 1 runs the replay's walk without simulating its accesses, to measure
     * what the walk alone costs -- the floor under the slow predictor's
     * time.  The result then has no misses and no L (zeros). */
    int walk_only;
    /* 1 runs the replay as two stages, one after the other, on the calling
     * thread: the walk writes every access into memory (16 bytes each),
     * then the simulator runs through them with its rows prefetched ahead,
     * as the pipeline's second thread does.  The results are those of the
     * plain replay; stage_walk_ns and stage_sim_ns time each stage, so that
     * "the simulation alone" can be set beside "the walk alone". */
    int stages;
    /* Line sampling of the simulation (cachesim.h, geom.line_sample_shift):
     * 0 as the options say (gcs_inspect_opts.sim_sample), k > 0 one line in
     * 2^k, -1 every line. */
    int line_sample;
} _gcs_inspect_bench_opts;

typedef struct _gcs_inspect_bench_result {
    double trial_one_ns, trial_pipe_ns; /* the pipeline's trial windows (0: not tried) */
    double stage_walk_ns, stage_sim_ns; /* stages: the walk storing its accesses, then
                                           their simulation (0 otherwise) */
} _gcs_inspect_bench_result;

/* gcs_inspect_heap with the benchmark knobs; bench NULL: all 0 (what
 * gcs_inspect_heap does); bout may be NULL. */
int _gcs_inspect_heap_bench(const gcs_snapshot *g, const gcs_profile *prof, const gcs_inspect_opts *opts,
                            const _gcs_inspect_bench_opts *bench, gcs_inspect_result *out,
                            _gcs_inspect_bench_result *bout, gcs_err *err);

/* ---- sharing.c ------------------------------------------------------------ */

/* The gaps between the serial mark positions of the objects on each line
 * (sharing.c) into h->share_gap_* (gaps below window objects); sets
 * h->share_counted.  -1 when out of memory. */
int _gcs_inspect_sharing(const gcs_snapshot *g, const layout *ly, double window, gcs_model_heap *h,
                         gcs_err *err);

/* ---- span.c --------------------------------------------------------------- */

/* T-infinity of g with node weights gcs_gc_mark_weight(cobj, cptr, non-NULL
 * fields, fields): sets out->heap.tinf_ns, span_method, reachable, depth and
 * span_walked.  edges_low: a low estimate of the non-NULL fields (< 0:
 * unknown); only the order of the walks depends on it (span.c), never the
 * result.  -1 with err set when out of memory. */
int _gcs_inspect_span(const gcs_snapshot *g, double cobj, double cptr, double edges_low, gcs_inspect_result *out,
                      gcs_err *err);
/* Tests only: non-zero makes _gcs_inspect_span skip the label-correcting
 * sweeps, so that the BFS and Dijkstra, which otherwise run only where the
 * sweeps give up, are checked on the same heaps.  0 unless a test sets it
 * (not for use while another thread inspects). */
extern int _gcs_span_no_sweeps;
/* Tests only: the sweeps (span_sweeps.c) take objects ahead and prefetch
 * only past this many bytes of labels (SPAN_SWEEP_FAR_BYTES, 8 MiB), which a
 * test lowers to reach that path on a small heap. */
extern size_t _gcs_span_prefetch_bytes;

/* ---- replay.c ------------------------------------------------------------- */

/* Whether the replay should read the packed records (robj) rather than the
 * snapshot's arrays: on a heap marked out of address order. */
int _gcs_inspect_records_pay(const gcs_snapshot *g);

/* The slow predictor: the serial mark of g replayed through a simulation of
 * out->geom.  rec: the records built by the counts, or NULL.  Sets the
 * simulator's figures in out (sim, accesses, heap.q1, q1_prefetched,
 * live_lines_avg, marked, replay_threads, V_j); bout, if not NULL, gets the
 * trial's and the stages' times.  -1 with err set on failure. */
int _gcs_inspect_replay(const gcs_snapshot *g, const layout *ly, int nnodes, const robj *rec,
                        const gcs_inspect_opts *opts, const _gcs_inspect_bench_opts *bench,
                        gcs_inspect_result *out, _gcs_inspect_bench_result *bout, gcs_err *err);

/* ---- steals.c ------------------------------------------------------------- */

/* What the steal simulation prices each of its events at (ns): model v2's
 * serial mark spread over them (steals.c), and a steal attempt at the
 * profile's gc_coord.steal_attempt_ns. */
typedef struct gcs_steal_costs {
    double cost_object_ns, cost_pointer_ns; /* scanning an object: gc_cost_ns, per field read */
    double chain_step_ns;                  /* a chain step (gc_class_cost_ns.chain, else object + pointer) */
    double element_ns;                     /* a large array's element in place (.array_element, else pointer) */
    double null_switch_ns;                 /* a NULL test unlike the one before (.null_switch, else 0) */
    double line_ns;                        /* every line read (a mark test's, an object's): the overlapped misses' share */
    double chain_ns;                       /* a chain step's dependent miss, on top of its step */
    double attempt_ns;                     /* one steal attempt; also noticing a publication */
} gcs_steal_costs;

typedef struct gcs_steal_sim {
    uint64_t steals;     /* entries taken from other workers' deques (the collector's `steals`) */
    uint64_t searches;   /* searches that found work (`steal_searches`) */
    uint64_t transfers;  /* mark-table lines moved between the workers' caches */
    double makespan_ns;  /* when the last worker went idle */
} gcs_steal_sim;

/* The prices for heap h on prof, whose objects have `fields` pointer fields
 * (NULL ones included) and `lines` lines of headers and pointer fields: 1
 * with *c set, 0 when the profile cannot price a steal (no gc_coord), -1
 * with err set on a model error. */
int _gcs_steal_costs(const gcs_profile *prof, const gcs_model_heap *h, uint64_t fields, double lines,
                     gcs_steal_costs *c, gcs_err *err);
/* The collector's work distribution on g with `threads` workers
 * (1..GCS_MODEL_SIM_MAX_THREADS), simulated at prices c.  -1 with err set
 * when out of memory. */
int _gcs_steal_sim(const gcs_snapshot *g, int threads, const gcs_steal_costs *c, gcs_steal_sim *out,
                   gcs_err *err);
/* h->sim_steals[P] for P = 2..max_threads, and h->steals_simulated, from
 * _gcs_steal_sim at _gcs_steal_costs (h's counts, T1 and misses must be
 * set).  Nothing (steals_simulated 0) when max_threads < 2 or the profile
 * has no gc_coord.  -1 with err set on failure. */
int _gcs_inspect_steals(const gcs_snapshot *g, const gcs_profile *prof, int max_threads, gcs_model_heap *h,
                        gcs_err *err);

#endif
