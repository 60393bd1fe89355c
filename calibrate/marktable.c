/* marktable.c -- gc_mark_transfer_ns: what a mark-table line passing between
 * two workers adds to their summed busy time (docs/model.md, "Mark-table
 * lines").
 *
 * On a heap without locality the workers' summed busy time grows at P = 2
 * by as much as a quarter where the mark table fits the private caches: a
 * worker marks an object whose table line the other wrote last, and the
 * line moves between their caches.  The model counts those moves with the
 * steal simulation, which follows who marks what on the heap's own graph
 * (model/steals.c); what one costs is the collector's, so only the
 * collector can measure it:
 *
 *   1. a random graph (overlap.c's) whose table takes a quarter of the
 *      largest private cache, so that every worker's cache holds it;
 *   2. marked reps times at P = 1 and at P = 2, interleaved, each
 *      collection's summed busy time (gcs_gc_stats.t1_ns) kept;
 *   3. the same graph inspected with the slow predictor and its steals
 *      simulated at P = 2: the transfers, times the table's fit in the
 *      private caches (1 by construction, below 1 only on a machine whose
 *      private cache the mark's other lines crowd);
 *   4. the price: the growth of the median busy time over those transfers.
 *
 * Needs two CPUs, the profile's caches, gc_cost_ns and gc_coord (the
 * simulation's prices).  Calls the collector's public gc.h, the snapshot
 * and the model's inspection (inspect.h), as overlap.c does. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "gcscale/cachesim.h"
#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"
#include "gcscale/snapshot.h"
#include "calibrate_internal.h"

#define OBJECT_BYTES 32 /* overlap.c's random graph */
#define MIN_OBJECTS 16384
#define MIN_CACHED_OBJECTS 4096
/* The cached heap's marks take a third of a millisecond, and five runs of
 * 31 pairs spread 3.5-7.9 ns on the Intel VM: three times the pairs. */
#define CACHED_REPS_FACTOR 3
#define REPS_QUICK 9
#define REPS_FULL 31 /* a few milliseconds each, and the growth is a tenth of them */

/* The largest private level's bytes as the cache simulation takes it
 * (gcs_cachesim_geom_from_profile: the leading levels shared by no more
 * CPUs than the first, SMT siblings included), the one the model's table
 * fit reads (model/inspect.c); 0 when the profile has none. */
static double private_cache(const gcs_profile *p)
{
    gcs_cachesim_geom geom;
    gcs_err err;
    if (gcs_cachesim_geom_from_profile(p, -1, &geom, &err) < 0 || geom.private_levels < 1)
        return 0;
    return (double)geom.level[geom.private_levels - 1].size_bytes;
}

/* Objects whose heap is 1 / GCS_MODEL_MARK_TRANSFER_HEAP_FIT = four times
 * the private cache, so that their mark table (a byte per 16-byte granule,
 * two an object) takes a quarter of it: well inside it, with the rest for
 * the objects' lines.  The model takes this price at that fit. */
static uint64_t table_objects(const gcs_profile *p)
{
    uint64_t n = (uint64_t)(private_cache(p) / GCS_MODEL_MARK_TRANSFER_HEAP_FIT / OBJECT_BYTES);
    return n < MIN_OBJECTS ? MIN_OBJECTS : n;
}

/* Heaps whose whole live bytes take half the private cache: nothing of
 * the mark misses it, so a transfer has nothing to hide behind. */
static uint64_t cached_objects(const gcs_profile *p)
{
    uint64_t n = (uint64_t)(private_cache(p) / 2 / OBJECT_BYTES);
    return n < MIN_CACHED_OBJECTS ? MIN_CACHED_OBJECTS : n;
}

/* The price on one random graph of `objects`: the growth of the median
 * summed busy time from P = 1 to 2 over the simulation's transfers. */
static int transfer_price(uint64_t objects, int reps, const gcs_profile *p, double *price, json_t **details,
                          gcs_err *err)
{
    *details = NULL;
    if (!p->has_gc_cost || !p->has_gc_coord || !(p->coord.attempt_ns > 0) || p->ncaches == 0) {
        gcs_err_set(err, "gc mark transfers: needs the profile's gc_cost_ns, gc_coord and caches first");
        return -1;
    }
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "gc mark transfers: a collector already runs in this process");
        return -1;
    }
    int rc = -1;
    gcs_snapshot *g = _gcs_calibrate_random_graph(objects, p->nnodes, err);
    double busy[2];
    if (!g || _gcs_calibrate_timed_marks(g, reps, 2, 1, busy, err) < 0)
        goto done;
    double b1 = busy[0], b2 = busy[1];
    gcs_inspect_opts io;
    gcs_inspect_opts_init(&io);
    io.predictor = GCS_INSPECT_SLOW;
    io.steal_sim_threads = 2;
    gcs_inspect_result ir;
    if (gcs_inspect_heap(g, p, &io, &ir, err) < 0)
        goto done;
    double transfers = ir.heap.steals_simulated >= 2 ? ir.heap.sim_transfers[2] * ir.heap.table_fit : 0;
    if (!(transfers > 0)) {
        gcs_err_set(err, "gc mark transfers: the simulation moved no table line on the %llu-object graph",
                    (unsigned long long)objects);
        goto done;
    }
    if (!(b2 > b1)) {
        gcs_err_set(err, "gc mark transfers: the summed busy time did not grow at P = 2 (%.3g against %.3g ms)",
                    b2 / 1e6, b1 / 1e6);
        goto done;
    }
    *price = (b2 - b1) / transfers;
    *details = json_pack("{s:s, s:I, s:i, s:f, s:f, s:f, s:f, s:f, s:f}", "model",
                         "median summed busy time at P = 2 - at P = 1, over the simulated mark-table transfers "
                         "at P = 2 times the table's fit in the private caches",
                         "objects", (json_int_t)objects, "reps", reps, "busy_p1_ns", b1, "busy_p2_ns", b2,
                         "transfers", ir.heap.sim_transfers[2], "table_fit", ir.heap.table_fit, "heap_fit",
                         ir.heap.heap_fit, "private_cache_bytes", private_cache(p));
    rc = 0;
done:
    gcs_snapshot_free(g);
    return rc;
}

int gcs_calibrate_fit_mark_transfer(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err)
{
    double price;
    if (transfer_price(objects, reps, p, &price, details, err) < 0)
        return -1;
    p->has_gc_mark_transfer = 1;
    p->gc_mark_transfer_ns = price;
    json_object_set_new(*details, "gc_mark_transfer_ns", json_real(price));
    return 0;
}

int gcs_calibrate_fit_mark_transfer_cached(uint64_t objects, int reps, gcs_profile *p, json_t **details,
                                           gcs_err *err)
{
    double price;
    if (transfer_price(objects, reps, p, &price, details, err) < 0)
        return -1;
    p->has_gc_mark_transfer_cached = 1;
    p->gc_mark_transfer_cached_ns = price;
    json_object_set_new(*details, "gc_mark_transfer_cached_ns", json_real(price));
    return 0;
}

/* ---- the calibration's step ---------------------------------------------------- */

/* Seconds on the progress series (the Intel VM: 0.3 s with a 2 MiB L2),
 * known before the profile's caches are, as the coordination step's. */
#define WORK_QUICK 0.2
#define WORK_FULL 0.4

double _gcs_calibrate_mark_transfer_work(int quick)
{
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? (quick ? WORK_QUICK : WORK_FULL) : 0;
}

/* One of the two prices as a step of its own (half the work each): the
 * calibration runs both, a key one. */
static void transfer_step(gcs_profile *p, int quick, gcs_progress *pr, const char *label, const char *record,
                          _gcs_calibrate_fit_fn fit, uint64_t objects, int reps)
{
    double w = _gcs_calibrate_mark_transfer_work(quick) / 2;
    json_t *details;
    if (w == 0 || p->ncaches == 0) {
        details = json_pack("{s:s}", "note", w == 0 ? "not measured: one CPU" : "not measured: no caches");
        gcs_progress_step(pr, label, w);
        gcs_progress_done(pr, w);
    } else
        details = _gcs_calibrate_run_fit(p, pr, label, w, fit, objects, reps);
    json_object_set_new(gcs_profile_calibration(p), record, details);
}

void _gcs_calibrate_mark_transfer_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    transfer_step(p, quick, pr, "gc mark-table transfers (a random heap at P = 1 and 2)", "gc_mark_transfer",
                  gcs_calibrate_fit_mark_transfer, p->ncaches ? table_objects(p) : 0, quick ? REPS_QUICK : REPS_FULL);
}

void _gcs_calibrate_mark_transfer_cached_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    transfer_step(p, quick, pr, "gc mark-table transfers (a heap the private cache holds)", "gc_mark_transfer_cached",
                  gcs_calibrate_fit_mark_transfer_cached, p->ncaches ? cached_objects(p) : 0,
                  CACHED_REPS_FACTOR * (quick ? REPS_QUICK : REPS_FULL));
}
