/* stream.c -- what a line of a sequential run costs the marker beyond its
 * objects: gc_stream_line_ns, model v2's price of a sequential miss
 * (docs/model.md "Serial work", 2026-11-27).
 *
 * Model v2's streamer (model/cachesim.c) tells apart the misses that
 * continue a page's run line by line (a list allocated in order, the
 * lanes of a preorder tree, a large array read in order, and their mark
 * tables) from the other streamed ones (strides) and the rest.  A hardware
 * streamer fetches a sequential run ahead of the marker, which then spends
 * on such a line far less than the node's occupancy S_O (the price of the
 * other streamed misses); how much less is a property of the machine, so,
 * like gc_miss_overlap (overlap.c), it is measured on the real marker with
 * the model:
 *
 *   1. a linked list of `objects` 32-byte nodes allocated in order, as a
 *      snapshot and as the same heap in a collector of its own (overlap.c's
 *      _gcs_calibrate_timed_mark: median mark at P = 1 after a warm-up);
 *   2. the snapshot inspected with the slow predictor: T1, its chain steps,
 *      the misses by class;
 *   3. model v2 at P = 1 with the profile's costs is A + B s in the price s
 *      of a sequential line (B: the sequential misses); solve A + B s =
 *      measured.
 * Every other term comes from the profile: the chain step's cost
 * (gc_class_cost_ns.chain, needed: the list's T1 is all chain steps), the
 * overlap of its few other misses.  The list is several times the LLC so
 * that its lines come from memory.
 *
 * Calls the collector's public gc.h, the snapshot and the model (inspect.h,
 * model.h), as overlap.c does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"
#include "gcscale/snapshot.h"
#include "gcscale/topology.h"
#include "calibrate_internal.h"

#define NODE_BYTES 32   /* header + a pointer + a data word, in 16-byte granules */
#define HEADER_BYTES 8
#define PAGE_BYTES 65536

/* The list as a snapshot: node i at slot i, pointing to node i + 1. */
gcs_snapshot *_gcs_calibrate_list_graph(uint64_t n, int nnodes, gcs_err *err)
{
    gcs_snapshot *g = gcs_snapshot_new(n, n, 1, err);
    if (!g)
        return NULL;
    gcs_snapshot_params_default(&g->params);
    uint64_t bytes = n * NODE_BYTES + PAGE_BYTES;
    g->params.heap_limit = (bytes + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
    g->params.page_bytes = PAGE_BYTES;
    g->params.node_count = (uint32_t)nnodes;
    g->params.header_bytes = HEADER_BYTES;
    for (uint64_t i = 0; i < n; i++) {
        g->addr[i] = i * NODE_BYTES + HEADER_BYTES;
        g->words[i] = 2;
        g->nptrs[i] = 1;
        g->node[i] = 0;
        g->edge_start[i] = i;
        g->edges[i] = i + 1 < n ? (uint32_t)(i + 1) : GCS_SNAPSHOT_NULL;
    }
    g->edge_start[n] = n;
    g->roots[0] = 0;
    if (gcs_snapshot_validate(g, err) < 0) {
        gcs_snapshot_free(g);
        return NULL;
    }
    return g;
}

/* Model v2 at P = 1 on the list's heap with a sequential line at s ns. */
static int model_time(const gcs_profile *p, const gcs_model_heap *h, double s, double *t, gcs_err *err)
{
    gcs_model_opts mo;
    gcs_model_sources src;
    gcs_model_opts_init(&mo);
    gcs_model_opts_v2(&mo, p, 0, 0, &src);
    gcs_model_opts_v2_costs(&mo, p, &src);
    mo.cost_sequential_ns = s;
    gcs_model_result r;
    if (gcs_model_predict(p, h, 1, &mo, &r, err) < 0)
        return -1;
    *t = r.time_ns;
    return 0;
}

int _gcs_calibrate_fit_stream_line(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    if (!p->has_gc_cost || !p->has_gc_class_cost || p->ncaches == 0) {
        gcs_err_set(err, "stream line: needs the profile's gc_cost_ns, gc_class_cost_ns and caches first");
        return -1;
    }
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "stream line: a collector already runs in this process");
        return -1;
    }
    gcs_snapshot *g = _gcs_calibrate_list_graph(objects, p->nnodes, err);
    if (!g)
        return -1;
    double measured = 0, a = 0, b1 = 0;
    gcs_inspect_result ir;
    int rc = -1;
    if (_gcs_calibrate_timed_mark(g, reps, &measured, err) < 0)
        goto done;
    gcs_inspect_opts iopts;
    gcs_inspect_opts_init(&iopts);
    iopts.predictor = GCS_INSPECT_SLOW;
    if (gcs_inspect_heap(g, p, &iopts, &ir, err) < 0 || model_time(p, &ir.heap, 0, &a, err) < 0 ||
        model_time(p, &ir.heap, 1, &b1, err) < 0)
        goto done;
    double b = b1 - a; /* the sequential misses, as the model counts them at P = 1 */
    double seq = ir.heap.q1_sequential[GCS_ACCESS_READ] + ir.heap.q1_sequential[GCS_ACCESS_RW];
    if (!(b > 0)) {
        gcs_err_set(err, "stream line: the %llu-node list has no sequential misses to price (caches too "
                         "large for it?)", (unsigned long long)objects);
        goto done;
    }
    double s = (measured - a) / b;
    const char *note = "fitted";
    if (!(s > 0)) {
        /* the list took no longer than its chain steps and other misses:
         * its lines cost nothing measurable; a price must be > 0 */
        s = 1e-3;
        note = "the list took no longer than its chain steps and other misses: 0.001 ns";
    }
    p->has_gc_stream_line = 1;
    p->gc_stream_line_ns = s;
    *details = json_pack("{s:s, s:I, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "model",
                         "measured mark = A + B * ns (model v2 at P = 1)", "objects", (json_int_t)objects,
                         "reps", reps, "measured_mark_ns", measured, "t1_ns", ir.heap.t1_ns, "a_ns", a,
                         "b_lines", b, "q1_sequential", seq, "q1",
                         ir.heap.q1[GCS_ACCESS_READ] + ir.heap.q1[GCS_ACCESS_RW], "ns", s, "note", note);
    rc = 0;
done:
    gcs_snapshot_free(g);
    return rc;
}

/* ---- the calibration's step ---------------------------------------------------- */

/* The list's size: 4 x LLC (2 x quick), at least 2^20 nodes, as the
 * overlap fit's heap; 0 with *note saying why it is not fitted. */
static uint64_t stream_objects(uint64_t llc, int ncaches, int quick, uint64_t size_bytes, int has_chain,
                               const char **note)
{
    uint64_t bytes = (quick ? 2 : 4) * (llc ? llc : (8u << 20));
    *note = NULL;
    if (ncaches == 0) {
        *note = "not fitted: the profile has no caches to simulate";
        return 0;
    }
    if (!has_chain) {
        *note = "not fitted: needs gc_class_cost_ns (the list's chain steps)";
        return 0;
    }
    if (size_bytes && size_bytes < bytes) {
        *note = "not fitted: --size is below the list the fit needs (2-4 x LLC)";
        return 0;
    }
    return bytes / NODE_BYTES > (1u << 20) ? bytes / NODE_BYTES : (1u << 20);
}

/* Expected seconds per 2^20 nodes (building, marking, simulating), the
 * step's weight in the progress series (measured on the 2-vCPU VM). */
#define STREAM_S_PER_MOBJ_QUICK 0.35
#define STREAM_S_PER_MOBJ_FULL 0.6

static double objects_work(uint64_t objects, int quick)
{
    return (double)objects / (double)(1u << 20) * (quick ? STREAM_S_PER_MOBJ_QUICK : STREAM_S_PER_MOBJ_FULL);
}

double _gcs_calibrate_stream_work(const gcs_profile *p, int quick, uint64_t size_bytes)
{
    const char *note;
    /* before the gc costs are measured the chain cost is not known yet:
     * counted as if it will be */
    uint64_t objects = stream_objects(_gcs_calibrate_llc_bytes(p), p->ncaches, quick, size_bytes, 1, &note);
    return objects ? objects_work(objects, quick) : 0;
}

double _gcs_calibrate_stream_work_topo(const gcs_topo *t, int quick, uint64_t size_bytes)
{
    const char *note;
    uint64_t objects = stream_objects(_gcs_calibrate_llc_bytes_topo(t), gcs_topo_ncaches(t), quick, size_bytes, 1, &note);
    return objects ? objects_work(objects, quick) : 0;
}

void _gcs_calibrate_stream_step(gcs_profile *p, int quick, uint64_t size_bytes, gcs_progress *pr)
{
    const char *note;
    uint64_t objects = stream_objects(_gcs_calibrate_llc_bytes(p), p->ncaches, quick, size_bytes, p->has_gc_class_cost, &note);
    json_t *details;
    /* a profile updated by --gc-only keeps no price from another collector */
    p->has_gc_stream_line = 0;
    if (!objects) {
        details = json_pack("{s:s}", "note", note);
        /* counted in the plan as if it would run: the series still ends at 100% */
        gcs_progress_done(pr, _gcs_calibrate_stream_work(p, quick, size_bytes));
    } else {
        details = _gcs_calibrate_run_fit(p, pr, "gc sequential line (marker on a list beyond the LLC)",
                                         objects_work(objects, quick), _gcs_calibrate_fit_stream_line, objects,
                                         quick ? 5 : 9);
    }
    json_object_set_new(gcs_profile_calibration(p), "stream_line", details);
}
