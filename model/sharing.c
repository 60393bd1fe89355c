/* sharing.c -- extra work in parallel: mark-table lines that more than one
 * worker touches (docs/model.md, "Extra work in parallel").
 *
 * With one worker, two objects whose marks share a cache line of the mark
 * table and that the mark visits close together cost one miss: the second
 * finds the line in the worker's own cache.  With P workers the two may be
 * marked by different workers, and the second mark then takes the line
 * from the other worker's cache (a transfer, gc_line_transfer_ns,
 * calibrate/sharing.c) instead of a hit.  Two marks far apart in the mark
 * order cost a miss each whatever P is, so they add nothing.  Object lines
 * do not transfer: the collector never writes an object during the mark
 * (its marks are in the side table, gc/heap.c), so a line read by two
 * workers stays shared in both caches.
 *
 * Inspection (_gcs_inspect_sharing) replays the serial mark order (depth
 * first, field 0 first, as gc/mark.c) and, for every mark-table line, the
 * gaps between the mark positions of its objects, counting a gap only
 * below the window of objects the worker's private caches hold.  The gaps
 * go to log2 bins: count and sum per bin (gcs_model_heap.share_gap_*).
 * With P workers the mark order is cut into segments of S = objects /
 * (steals + P) objects, each marked by one worker; a gap d crosses a cut
 * with probability min(1, d / S), and the other side is then another
 * worker's with probability 1 - 1/P:
 *
 *     transfers(P) = (1 - 1/P) sum over gaps of min(1, d / S)
 *
 * each costing gc_line_transfer_ns / overlap (predict.c) on top of the
 * busy time.
 *
 * A list or a tree laid out in mark order has gaps of 1 (one transfer per
 * cut); a line whose objects are marked a little apart transfers; one whose
 * objects are marked far apart (beyond the window) was a miss each time
 * anyway.  Measured against the collector the term is far off
 * (docs/model.md), so it is opt-in (gcs_model_opts.sharing,
 * gcs_inspect_opts.shared_lines). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "inspect_internal.h"

/* The serial mark order: pos[i] = rank of object i in a depth-first walk
 * from the roots, field 0 first; unreachable objects UINT32_MAX.  The stack
 * holds (object, next field), so it grows with the depth, not the fields. */
static int mark_order(const gcs_snapshot *g, uint32_t *pos, gcs_err *err)
{
    uint64_t n = g->nobjects, cap = 1024, sp = 0;
    uint64_t *stack = malloc(cap * sizeof *stack); /* id << 32 | next field */
    if (!stack) {
        gcs_err_set(err, "inspect: out of memory for the mark order");
        return -1;
    }
    memset(pos, 0xff, n * sizeof *pos);
    uint32_t rank = 0;
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t root = g->roots[r];
        if (pos[root] != UINT32_MAX)
            continue;
        pos[root] = rank++;
        stack[sp++] = (uint64_t)root << 32;
        while (sp) {
            uint64_t top = stack[sp - 1];
            uint32_t o = (uint32_t)(top >> 32), f = (uint32_t)top;
            if (f >= g->nptrs[o]) {
                sp--;
                continue;
            }
            stack[sp - 1] = top + 1;
            uint32_t c = g->edges[g->edge_start[o] + f];
            if (c == GCS_SNAPSHOT_NULL || pos[c] != UINT32_MAX)
                continue;
            pos[c] = rank++;
            if (sp == cap) {
                uint64_t *grown = realloc(stack, 2 * cap * sizeof *stack);
                if (!grown) {
                    free(stack);
                    gcs_err_set(err, "inspect: out of memory for the mark order");
                    return -1;
                }
                stack = grown;
                cap *= 2;
            }
            stack[sp++] = (uint64_t)c << 32;
        }
    }
    free(stack);
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The gaps of one line's mark positions into the bins (below the window). */
static void line_gaps(uint32_t *v, uint32_t k, double window, gcs_model_heap *h)
{
    if (k < 2)
        return;
    if (k <= 8) { /* nearly always: a few objects per line */
        for (uint32_t i = 1; i < k; i++)
            for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
                uint32_t x = v[j];
                v[j] = v[j - 1];
                v[j - 1] = x;
            }
    } else {
        qsort(v, k, sizeof *v, cmp_u32);
    }
    for (uint32_t i = 1; i < k; i++) {
        uint32_t d = v[i] - v[i - 1];
        if ((double)d >= window)
            continue;
        int b = 31 - __builtin_clz(d); /* d >= 1: ranks are distinct */
        h->share_gap_count[b] += 1;
        h->share_gap_sum[b] += d;
    }
}

int _gcs_inspect_sharing(const gcs_snapshot *g, const layout *ly, double window, gcs_model_heap *h,
                         gcs_err *err)
{
    memset(h->share_gap_count, 0, sizeof h->share_gap_count);
    memset(h->share_gap_sum, 0, sizeof h->share_gap_sum);
    h->share_window = window;
    uint64_t n = g->nobjects;
    uint32_t *pos = _gcs_huge_alloc((n ? n : 1) * sizeof *pos);
    /* a mark-table line holds the marks of 64 granules (bytes) or 512 (bits) */
    uint32_t maxk = ly->bits ? 512u << (ly->lshift - 6) : 64u << (ly->lshift - 6);
    uint32_t *mark_v = malloc((size_t)maxk * sizeof *mark_v);
    if (!pos || !mark_v) {
        free(pos);
        free(mark_v);
        gcs_err_set(err, "inspect: out of memory for the shared lines");
        return -1;
    }
    int rc = mark_order(g, pos, err);
    uint32_t km = 0;
    uint64_t mark_line = UINT64_MAX;
    for (uint64_t i = 0; rc == 0 && i < n; i++) {
        if (pos[i] == UINT32_MAX)
            continue; /* not marked: no worker touches it */
        /* ids are in address order, so a line's objects are consecutive */
        uint64_t ml = mark_addr(ly, g->addr[i]) >> ly->lshift;
        if (ml != mark_line || km == maxk) {
            line_gaps(mark_v, km, window, h);
            km = 0, mark_line = ml;
        }
        mark_v[km++] = pos[i];
    }
    line_gaps(mark_v, km, window, h);
    free(pos);
    free(mark_v);
    h->share_counted = rc == 0;
    return rc;
}

double gcs_model_shared_transfers(const gcs_model_heap *h, int threads, double steals)
{
    if (threads <= 1 || !h->share_counted || h->objects == 0)
        return 0;
    double segment = (double)h->objects / ((steals > 0 ? steals : 0) + threads);
    double x = 0;
    for (int b = 0; b < GCS_MODEL_GAP_BINS; b++) {
        double per = h->share_gap_sum[b] / segment; /* sum of d / S over the bin */
        x += per < h->share_gap_count[b] ? per : h->share_gap_count[b];
    }
    x *= 1 - 1.0 / threads;
    gcs_assert_internal(x >= 0);
    return x;
}

int gcs_model_opts_steal_level(gcs_model_opts *opts, const gcs_profile *prof)
{
    opts->steal_miss_ns = NAN;
    int ncpus = gcs_profile_cpus(prof);
    /* A thief steals from any worker, so the level is the one every CPU of
     * the profile shares; the collector's workers fill the CPUs one per core
     * first, so on a machine with more than one LLC thief and victim may
     * share only memory.  The latency is the effective LLC's, measured by
     * the calibration sweep: a shared level other than the last has no
     * latency of its own in the profile. */
    int shared = 0;
    for (int c = 0; c < prof->ncaches && !shared; c++)
        shared = strcmp(prof->caches[c].type, "instruction") != 0 && ncpus > 1 && prof->caches[c].ncpus >= ncpus;
    double llc_bytes, hit_ns;
    if (!shared || gcs_profile_llc_effective(prof, &llc_bytes, &hit_ns) == GCS_LLC_NONE || !isfinite(hit_ns))
        return 0;
    opts->steal_miss_ns = hit_ns;
    return 1;
}
