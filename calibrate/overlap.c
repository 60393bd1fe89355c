/* overlap.c -- how many misses the collector's marker overlaps:
 * gc_miss_overlap, for `gcscale predict --overlap fitted` (docs/model.md,
 * "Overlapped misses").  The calibration runs it as its last step
 * (gcs_calibrate_run, and gcs_calibrate_update_gc for --gc-only) and stores
 * the result in the profile.
 *
 * The paper's model makes every miss stall its worker for the whole memory
 * latency M1.  gcscale's marker does not wait like that: its prefetch FIFO
 * (gc/mark.c) keeps the headers and mark bytes of up to GCS_GC_MARK_FIFO
 * objects in flight, so on a heap far larger than the caches the mark costs
 * a fraction of Q1 * M1.  That fraction is a property of the marker on this
 * machine, so, like gc_cost_ns, only the real marker can measure it:
 *
 *   1. build a random graph of `objects` objects (two pointer fields each to
 *      uniformly random objects, as in gc-bench's "random" shape, but rooted
 *      in 16 of them: about 80% are reachable) as a snapshot, and the same
 *      graph in the collector's heap;
 *   2. time the collector's mark of it at P = 1 (median of reps);
 *   3. inspect the snapshot with the slow predictor (T1 from the profile's
 *      gc_cost_ns, Tinf, Q1 with the stream prefetcher's share);
 *   4. the model at P = 1 is T(F) = A + B/F (A: compute and the streamed
 *      misses, B: the other misses at full latency); solve T(F) = measured.
 * F is clamped to [1, 2 * GCS_GC_MARK_FIFO] (each FIFO entry has two lines in
 * flight at most: header and mark byte), with a note when it is.
 *
 * The heap must be several times the last-level cache for the misses to
 * dominate; the sizing policy (overlap_objects) is here with the fit.  Only
 * the cache simulation can count the misses, so this is the one calibration
 * step that calls the model (inspect.h, model.h); calibrate sits above the
 * model, which reads profiles from formats/.  Also calls the collector's
 * public gc.h and snapshot.h. */
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

#define OVERLAP_MAX (2.0 * GCS_GC_MARK_FIFO)
#define SLOT_BYTES 32   /* header + two pointers + one data word */
#define HEADER_BYTES 8
#define PAGE_BYTES 65536
#define ROOTS 16

/* The random graph as a snapshot, objects in consecutive 32-byte slots (the
 * collector allocates them in that order: gcs_gc_build_snapshot). */
gcs_snapshot *_gcs_calibrate_random_graph(uint64_t n, int nnodes, gcs_err *err)
{
    gcs_snapshot *g = gcs_snapshot_new(n, 2 * n, ROOTS, err);
    if (!g)
        return NULL;
    gcs_snapshot_params_default(&g->params);
    uint64_t bytes = n * SLOT_BYTES + PAGE_BYTES;
    g->params.heap_limit = (bytes + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
    g->params.page_bytes = PAGE_BYTES;
    g->params.node_count = (uint32_t)nnodes;
    g->params.header_bytes = HEADER_BYTES;
    uint64_t rng = 0x5EED0F0E4C4Aull;
    for (uint64_t i = 0; i < n; i++) {
        g->addr[i] = i * SLOT_BYTES + HEADER_BYTES;
        g->words[i] = 3;
        g->nptrs[i] = 2;
        g->node[i] = 0;
        g->edge_start[i] = 2 * i;
        for (int k = 0; k < 2; k++)
            g->edges[2 * i + (uint64_t)k] = (uint32_t)gcs_random_below(&rng, n);
    }
    g->edge_start[n] = 2 * n;
    for (int k = 0; k < ROOTS; k++)
        g->roots[k] = (uint32_t)gcs_random_below(&rng, n);
    if (gcs_snapshot_validate(g, err) < 0) {
        gcs_snapshot_free(g);
        return NULL;
    }
    return g;
}

/* g's graph marked at P = 1..max_threads, interleaved: the median mark or
 * summed busy time at each (calibrate_internal.h; the overlap fit's, the
 * sequential-line fit's, stream.c, and the mark-table transfers',
 * marktable.c). */
int _gcs_calibrate_timed_marks(const gcs_snapshot *g, int reps, int max_threads, int busy, double *out,
                               gcs_err *err)
{
    if (_gcs_calibrate_gc_init(2 * g->params.heap_limit + (64u << 20), max_threads, err) < 0)
        return -1;
    gcs_gc_snapshot_heap heap;
    int rc = -1;
    double *t = malloc((size_t)max_threads * (size_t)reps * sizeof *t);
    if (!t) {
        gcs_err_set(err, "timed marks: out of memory");
        goto done;
    }
    if (gcs_gc_build_snapshot(g, &heap, err) < 0)
        goto done;
    for (int p = 1; p <= max_threads; p++) { /* warm-up: pages touched, tables built, every worker */
        gcs_gc_set_threads(p);
        gcs_gc_collect();
    }
    gcs_gc_stats stats;
    for (int r = 0; r < reps; r++)
        for (int p = 1; p <= max_threads; p++) {
            gcs_gc_set_threads(p);
            gcs_gc_collect();
            if (gcs_gc_last_stats(&stats) < 0 || stats.threads != p) {
                gcs_err_set(err, "timed marks: the collector did not mark with %d threads", p);
                gcs_gc_snapshot_heap_release(&heap);
                goto done;
            }
            t[(size_t)(p - 1) * (size_t)reps + (size_t)r] = busy ? (double)stats.t1_ns : (double)stats.mark_ns;
        }
    for (int p = 1; p <= max_threads; p++)
        out[p - 1] = gcs_stats_median(t + (size_t)(p - 1) * (size_t)reps, (size_t)reps);
    gcs_gc_snapshot_heap_release(&heap);
    rc = 0;
done:
    free(t);
    gcs_gc_shutdown();
    return rc;
}

int _gcs_calibrate_timed_mark(const gcs_snapshot *g, int reps, double *mark_ns, gcs_err *err)
{
    return _gcs_calibrate_timed_marks(g, reps, 1, 0, mark_ns, err);
}

int gcs_calibrate_fit_overlap(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    if (!p->has_gc_cost || p->ncaches == 0) {
        gcs_err_set(err, "gc overlap: needs the profile's gc_cost_ns and caches first");
        return -1;
    }
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "gc overlap: a collector already runs in this process");
        return -1;
    }
    gcs_snapshot *g = _gcs_calibrate_random_graph(objects, p->nnodes, err);
    if (!g)
        return -1;
    double measured_ns = 0;
    gcs_inspect_result ir;
    int rc = -1;
    if (_gcs_calibrate_timed_mark(g, reps, &measured_ns, err) < 0)
        goto done;
    gcs_inspect_opts iopts;
    gcs_inspect_opts_init(&iopts);
    iopts.predictor = GCS_INSPECT_SLOW;
    if (gcs_inspect_heap(g, p, &iopts, &ir, err) < 0)
        goto done;

    /* T(F) = A + B/F at P = 1, from the model itself at F = 1 and F = 2. */
    gcs_model_opts mo;
    gcs_model_opts_init(&mo);
    gcs_model_result r1, r2;
    mo.overlap = 1;
    if (gcs_model_predict(p, &ir.heap, 1, &mo, &r1, err) < 0)
        goto done;
    mo.overlap = 2;
    if (gcs_model_predict(p, &ir.heap, 1, &mo, &r2, err) < 0)
        goto done;
    double b = 2 * (r1.time_ns - r2.time_ns), a = r1.time_ns - b;
    double overlap;
    const char *note;
    if (!(b > 0)) {
        gcs_err_set(err, "gc overlap: the %llu-object heap has no misses to overlap",
                    (unsigned long long)objects);
        goto done;
    } else if (measured_ns >= r1.time_ns) {
        overlap = 1;
        note = "the mark took as long as the misses at full latency or longer: 1 (no overlap)";
    } else if (measured_ns - a <= b / OVERLAP_MAX) {
        overlap = OVERLAP_MAX;
        note = "the misses were hidden almost entirely: clamped to 2 x the FIFO";
    } else {
        overlap = b / (measured_ns - a);
        note = "fitted";
    }
    p->has_gc_overlap = 1;
    p->gc_miss_overlap = overlap;
    *details = json_pack("{s:s, s:I, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "model",
                         "measured mark = A + B / overlap (the model at P = 1)", "objects",
                         (json_int_t)objects, "reps", reps, "measured_mark_ns", measured_ns,
                         "t1_ns", ir.heap.t1_ns, "tinf_ns", ir.heap.tinf_ns, "q1_read",
                         ir.heap.q1[GCS_ACCESS_READ], "q1_rw", ir.heap.q1[GCS_ACCESS_RW],
                         "q1_prefetched", ir.heap.q1_prefetched[GCS_ACCESS_READ] +
                                              ir.heap.q1_prefetched[GCS_ACCESS_RW],
                         "a_ns", a, "b_ns", b, "overlap", overlap, "note", note);
    rc = 0;
done:
    gcs_snapshot_free(g);
    return rc;
}

/* ---- the calibration's step ---------------------------------------------------- */

/* The graph's size: 4 x LLC (2 x quick), at least 2^20 objects, so that
 * misses dominate its mark.  A chase size_bytes below that graph asks for a
 * small run (the tests'): not fitted, and the profile says so.  Returns the
 * graph's object count, or 0 with *note saying why it is not fitted; llc is
 * _gcs_calibrate_llc_bytes's (the effective LLC where the sweep measured
 * it), ncaches how many caches there are. */
static uint64_t overlap_objects(uint64_t llc, int ncaches, int quick, uint64_t size_bytes,
                                const char **note)
{
    uint64_t bytes = (quick ? 2 : 4) * (llc ? llc : (8u << 20));
    *note = NULL;
    if (ncaches == 0) {
        *note = "not fitted: the profile has no caches to simulate";
        return 0;
    }
    if (size_bytes && size_bytes < bytes) {
        *note = "not fitted: --size is below the heap the fit needs (2-4 x LLC)";
        return 0;
    }
    return bytes / 32 > (1u << 20) ? bytes / 32 : (1u << 20);
}

/* The fit's expected seconds per 2^20 objects, its weight in the progress
 * series (docs/microbench.md, "Run time and progress"). */
#define OVERLAP_S_PER_MOBJ_QUICK 0.47
#define OVERLAP_S_PER_MOBJ_FULL 0.83

static double objects_work(uint64_t objects, int quick)
{
    return (double)objects / (double)(1u << 20) *
           (quick ? OVERLAP_S_PER_MOBJ_QUICK : OVERLAP_S_PER_MOBJ_FULL);
}

/* Why the effective LLC: a heap of 4 x a nominal LLC that the machine does
 * not deliver (a VM shown its host's L3 of hundreds of MiB, of which the
 * sweep finds tens) is gigabytes, and its mark then pays page walks on
 * nearly every miss (the collector's heap has 4 KiB pages, and the page
 * tables of gigabytes do not fit the caches), which the model has no term
 * for: the fit puts them in F and so prices every miss of every smaller
 * heap as if it walked the page tables too (docs/model.md, "The overlap
 * heap sized by the effective LLC"). */
uint64_t _gcs_calibrate_llc_bytes(const gcs_profile *p)
{
    if (p->has_llc_effective && p->llc_effective_bytes >= 1)
        return (uint64_t)p->llc_effective_bytes;
    uint64_t llc = 0;
    for (int i = 0; i < p->ncaches; i++)
        if (p->caches[i].size_bytes > llc)
            llc = p->caches[i].size_bytes;
    return llc;
}

uint64_t _gcs_calibrate_llc_bytes_topo(const gcs_topo *t)
{
    uint64_t llc = 0;
    for (int i = 0; i < gcs_topo_ncaches(t); i++)
        if (gcs_topo_cache_at(t, i)->size_bytes > llc)
            llc = gcs_topo_cache_at(t, i)->size_bytes;
    return llc;
}

double _gcs_calibrate_overlap_work(const gcs_profile *p, int quick, uint64_t size_bytes)
{
    const char *note;
    uint64_t objects = overlap_objects(_gcs_calibrate_llc_bytes(p), p->ncaches, quick, size_bytes, &note);
    return objects ? objects_work(objects, quick) : 0;
}

/* The topology's caches become the profile's (gcs_calibrate_fill_profile):
 * the same size, before there is a profile to ask. */
double _gcs_calibrate_overlap_work_topo(const gcs_topo *t, int quick, uint64_t size_bytes)
{
    const char *note;
    uint64_t objects = overlap_objects(_gcs_calibrate_llc_bytes_topo(t), gcs_topo_ncaches(t), quick, size_bytes, &note);
    return objects ? objects_work(objects, quick) : 0;
}

json_t *_gcs_calibrate_run_fit(gcs_profile *p, gcs_progress *pr, const char *step, double work,
                               _gcs_calibrate_fit_fn fit, uint64_t objects, int reps)
{
    json_t *details = NULL;
    gcs_err err = {{0}};
    gcs_progress_step(pr, step, work);
    uint64_t t0 = gcs_now_ns();
    int rc = fit(objects, reps, p, &details, &err);
    if (rc == 0) /* the step's time, as calibrate's own steps record theirs */
        json_object_set_new(details, "seconds", json_real((double)(gcs_now_ns() - t0) / 1e9));
    gcs_progress_done(pr, work);
    /* An optional step: a failed fit keeps the rest of the calibration, and
     * the profile records why (the CLI warns from that record; the model
     * prices without the key). */
    if (rc < 0)
        details = json_pack("{s:s, s:s}", "note", "not fitted: the fit failed", "error", err.msg);
    return details;
}

json_t *_gcs_calibrate_run_fit_sized(gcs_profile *p, gcs_progress *pr, const char *step, uint64_t objects,
                                     const char *note, double guess, double work, _gcs_calibrate_fit_fn fit, int reps)
{
    if (objects)
        return _gcs_calibrate_run_fit(p, pr, step, work, fit, objects, reps);
    /* the plan counted the step: it completes at once */
    gcs_progress_done(pr, guess);
    return json_pack("{s:s}", "note", note);
}

void _gcs_calibrate_overlap_step(gcs_profile *p, int quick, uint64_t size_bytes, gcs_progress *pr)
{
    const char *note;
    uint64_t objects = overlap_objects(_gcs_calibrate_llc_bytes(p), p->ncaches, quick, size_bytes, &note);
    json_t *details = objects ? _gcs_calibrate_run_fit(p, pr, "gc miss overlap (marker on a random heap beyond the LLC)",
                                                       objects_work(objects, quick), gcs_calibrate_fit_overlap,
                                                       objects, quick ? 5 : 9)
                              : json_pack("{s:s}", "note", note);
    json_object_set_new(gcs_profile_calibration(p), "gc_overlap", details);
}
