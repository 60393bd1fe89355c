/* span.c -- T-infinity of a heap snapshot, the critical path of the mark
 * (heap inspection's "span" part; docs/model.md "T-infinity computation"):
 * the entry point, which chooses among the walks, and why (below).
 *
 * The node weight is the collector's own, gcs_gc_mark_weight (gc.h), with
 * the non-NULL fields counted, so that the weights sum to the model's T1.
 * Called from inspect.c (_gcs_inspect_span, model/inspect_internal.h).
 *
 * The walks are files of their own, which share span_internal.h: the
 * forest's depth-first walk (span_forest.c), the label-correcting sweeps
 * (span_sweeps.c), and passes 1 and 2 below, the BFS by levels
 * (span_levels.c) and Dijkstra with buckets or a heap (span_dijkstra.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GCS_SPAN_FILES
#include "span_internal.h"

/* Tinf is the longest of the shortest paths: with w(v) the marking weight of
 * object v (gcs_gc_mark_weight, gc.h), d(root) = w(root), d(v) = min over
 * parents u of d(u) + w(v), each sum rounded as it is formed, and Tinf =
 * max d(v).  The walk works with the
 * start times s(v) = min over parents of d(u) (0 for a root) and finds
 * d(v) = s(v) + w(v) when it scans v.  That is the same number: adding w(v)
 * is monotone under rounding, so (min d(u)) + w(v) = min (d(u) + w(v)).  It
 * needs w only of the object being scanned, whose fields are read anyway, so
 * relaxing an edge touches one random word (the child's s), not three.
 *
 * Two passes, both over id-ordered sets where the sets are large:
 *
 *   1. A BFS, level by level: the reachable objects (a bitmap), the depth,
 *      whether every object weighs the same (then Tinf = depth x w, as
 *      before) and whether any object is reached twice; if none is, the
 *      graph is a forest and s along the BFS (kept until the first revisit)
 *      gives Tinf.
 *   2. Otherwise Dial's bucket queue on s.  Every weight is at least wmin > 0,
 *      so with buckets narrower than wmin no object scanned from bucket b can
 *      put a child into bucket b or below: every object in a bucket has its
 *      final s when the bucket's turn comes, and is scanned exactly once.
 *      The buckets are the exact intervals [B_i, B_i+1) of the rounded
 *      B_i = i x q, q = wmin (1 - 2^-20), and the slack covers the rounding:
 *      with u = 2^-53, an object of bucket b has s >= B_b >= b q (1 - u), so
 *      d = s + w rounded >= (b q (1 - u) + wmin)(1 - u), while B_b+1 <=
 *      (b + 1) q (1 + u); the difference is at least wmin (2^-20 - 3u (b +
 *      1) - 3u), positive for b < 2^31 (SPAN_MAX_BUCKET).  Past that bucket,
 *      with weights of 0 and with weight ratios wmax / wmin beyond the
 *      window of SPAN_MAX_SLOTS buckets, a binary heap does the pass
 *      instead; so it does, from the start, if a check that the argument
 *      rules out ever fails.
 *
 * A large level or bucket (SPAN_DENSE_DIV: at least n / 512 objects) is put
 * in id order through a bitmap before it is scanned: the snapshot's arrays
 * are in id (address) order, so its objects' field counts, offsets and fields
 * are then read as a stream instead of at random.  What stays random is each
 * child's s: pass 2 prefetches the s of the children of the object
 * SPAN_AHEAD places on in its bucket, far enough ahead for the lines to
 * arrive while the objects between are scanned (docs/model.md, "2026-11-24:
 * the span's prefetch distance"). */
#define SPAN_DENSE_DIV 512
#define SPAN_MAX_SLOTS 4096              /* bucket window, a power of two */
#define SPAN_SLACK 0x1.0p-20             /* q = wmin (1 - SPAN_SLACK) */
/* SPAN_MAX_BUCKET and SPAN_AHEAD: span_dijkstra.c */

int _gcs_span_no_sweeps;

int _gcs_inspect_span(const gcs_snapshot *g, double cobj, double cptr, double edges_low, gcs_inspect_result *out,
                      gcs_err *err)
{
    uint64_t n = g->nobjects;
    size_t nwords = (size_t)((n + 63) / 64), wbytes = (nwords ? nwords : 1) * sizeof(uint64_t);
    size_t dense_min = (size_t)(n / SPAN_DENSE_DIV) + 64;
    int rc = -1;
    uint64_t *live = calloc(1, wbytes), *scratch = NULL, *reached = NULL;
    double *s = NULL;
    span_label *labels = NULL;
    void *label_mem = NULL;
    if (!live)
        goto oom;
    span_bfs b;
    /* A forest's objects each have one parent or are roots, so more
     * non-NULL fields and roots than objects mean some object is reached
     * twice (when all are reachable, as in a snapshot of the live set):
     * the forest's walk would only give up, after up to a whole walk (bh,
     * cube and cky went a fifth of their time on it), so it is skipped.
     * Either way the result is the same. */
    int forest = 0;
    if (!(edges_low + (double)g->nroots > (double)n))
        forest = _gcs_span_forest(g, cobj, cptr, live, nwords, &b);
    if (forest < 0)
        goto oom;
    int swept = 0;
    double swept_tinf = 0;
    if (!forest) {
        /* no forest: the sweeps, or if they give up the BFS, then
         * Dijkstra; _gcs_huge_alloc touches nothing: the pages a walk does
         * not use cost nothing */
        memset(live, 0, wbytes);
        scratch = calloc(1, wbytes);
        /* the labels; passes 1 and 2 reuse them as s (12 bytes an object against 8) */
        label_mem = _gcs_huge_alloc((n ? n : 1) * sizeof(span_label));
        if (!scratch || !label_mem)
            goto oom;
        labels = label_mem;
        s = label_mem;
        swept = !_gcs_span_no_sweeps &&
                _gcs_span_sweeps(g, cobj, cptr, live, scratch, nwords, labels, &b, &swept_tinf) == 0;
        if (!swept) {
            memset(live, 0, wbytes);
            memset(scratch, 0, wbytes);
            if (_gcs_span_levels(g, cobj, cptr, live, scratch, nwords, dense_min, s, &b) < 0)
                goto oom;
        }
    }
    /* each object enters a level once (the bitmap), and a level is at least one object deep */
    gcs_assert_internal(b.reachable <= n && b.depth <= b.reachable);
    out->reachable = b.reachable;
    out->depth = b.depth;
    out->span_walked = 1;
    if (b.reachable == 0) {
        out->heap.tinf_ns = 0;
        out->span_method = "bfs-levels";
    } else if (b.emin == b.emax && b.chunked_arrays == 0) {
        /* every object weighs the same: the BFS depth is exact */
        out->heap.tinf_ns = (double)b.depth * (cobj + cptr * b.emin);
        out->span_method = "bfs-levels";
    } else if (b.revisits == 0) {
        /* a forest: one path to each object, followed by the BFS */
        out->heap.tinf_ns = b.forest_tinf;
        out->span_method = "tree";
    } else if (swept) {
        out->heap.tinf_ns = swept_tinf;
        out->span_method = "sweeps";
    } else {
        out->span_method = "dijkstra";
        reached = calloc(1, wbytes);
        if (!reached)
            goto oom;
        double longest = 0, ratio = b.wmax / b.wmin;
        int brc = 1;
        if (b.wmin > 0 && isfinite(ratio) && ratio < SPAN_MAX_SLOTS - 3) {
            double q = b.wmin - b.wmin * SPAN_SLACK;
            size_t nslots = 64; /* whole words of the occupancy bitmap */
            while ((double)nslots < ratio + 3)
                nslots *= 2;
            brc = _gcs_span_buckets(g, cobj, cptr, q, nslots, s, live, reached, scratch, nwords, dense_min,
                                    &longest);
            if (brc < 0)
                goto oom;
            if (brc == 1) /* start again */
                memset(reached, 0, wbytes);
        }
        if (brc == 1 && _gcs_span_heap(g, cobj, cptr, s, reached, &longest) < 0)
            goto oom;
        out->heap.tinf_ns = longest;
    }
    /* the critical path holds at least one object, a root (with costs >= 0,
     * which the profile's loader checks) */
    gcs_assert_internal(b.reachable == 0 || !(b.wmin >= 0) || out->heap.tinf_ns >= b.wmin);
    rc = 0;
    goto done;
oom:
    gcs_err_set(err, "inspect: out of memory for the span of %llu objects", (unsigned long long)n);
done:
    free(live);
    free(scratch);
    free(reached);
    free(label_mem);
    return rc;
}
