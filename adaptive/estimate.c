/* estimate.c -- the model's inputs from one collection's statistics: the
 * heap a decision predicts on (_gcs_adaptive_estimate) and the same for any
 * caller (gcs_adaptive_estimate_heap).  Apart from the decision because it
 * is arithmetic on the collector's counters and the profile alone, with no
 * state of the policy: it follows heap inspection's fast predictor, not
 * the decision's rules.
 *
 * The estimates mirror the fast predictor of heap inspection
 * (model/inspect.c, docs/model.md "Heap inspection, Q1 and L"); what the
 * snapshot gives inspection exactly, the collector's counters give here:
 *   objects      live_objects of the previous collection (exact, from sweep)
 *   edges        edges_examined - roots (non-NULL pointers whose mark was tested)
 *   T1           gc_cost.object * objects + gc_cost.pointer * edges
 *   Q1 read      lines of headers and pointer fields: min(live bytes / line,
 *                objects + pointer fields * 8 / line)
 *   Q1 RW        mark-table lines: live bytes / (granule * line) for mark
 *                bytes, 8 times fewer for mark bits, between pages in use and
 *                objects
 *   L            inspect's fast estimate: 8 + 0.4 * revisit * min(cap, live)
 *   V_j          live bytes per node of their page
 *   Tinf         computed span if the collector computed it; else the idle
 *                time of a P >= 2 collection: sum(search) / (P - 1), as a
 *                share of the busy time; else the share remembered from the
 *                last collection that measured it.
 */
#include <math.h>
#include <string.h>

#include "../common/internal.h"
#define GCS_ADAPTIVE_POLICY_FILES
#include "adaptive_internal.h"
#include "gcscale/adaptive.h"
#include "gcscale/inspect.h"

#define GRANULE_BYTES 16            /* gc/: one mark per 16-byte granule */

/* Tinf / T1 from what a collection measured; < 0 when it measured nothing
 * about the span.  *source names the method. */
static double measured_span_fraction(const gcs_gc_stats *st, double t1_model, const char **source)
{
    if (st->compute_span && isfinite(st->span) && st->span > 0) {
        /* The collector's span is in its own cost units, w(v) = c_o + c_p *
         * fields(v); price a unit at the heap's average ns per unit. */
        double units = st->span_cost_object * (double)st->live_objects +
                       st->span_cost_pointer * (double)st->pointers_scanned;
        if (units > 0 && t1_model > 0) {
            *source = "computed-span";
            return fmin(1.0, st->span * (t1_model / units) / t1_model);
        }
    }
    int p = st->threads < GCS_GC_MAX_THREADS ? st->threads : GCS_GC_MAX_THREADS;
    if (p >= 2) {
        /* Work stealing keeps every worker busy except while the work in
         * hand is a chain: then P - 1 workers search.  So the summed search
         * time over P - 1 is the wall time spent on the critical path with
         * nothing to share -- an effective span, in measured time (with
         * misses).  Its share of the measured busy time carries over to the
         * model's T1.  It includes the start-up and termination of the mark
         * phase, so it errs towards fewer threads on small heaps, where
         * those costs are real. */
        double search = 0, busy = 0;
        for (int i = 0; i < p; i++) {
            search += (double)st->workers[i].search_ns;
            busy += (double)st->workers[i].busy_ns;
        }
        if (busy > 0 && search > 0) {
            *source = "idle-time";
            return fmin(1.0, search / (p - 1) / busy);
        }
    }
    return -1;
}

int _gcs_adaptive_estimate(const gcs_gc_stats *prev, const gcs_profile *prof, double span_fraction_hint, int line,
                           double cap, gcs_adaptive_estimate *est, gcs_err *err)
{
    memset(est, 0, sizeof *est);
    if (!prev || (prev->live_objects == 0 && prev->objects_marked == 0)) {
        gcs_err_set(err, "adaptive: the previous collection marked no object");
        return -1;
    }
    if (!prof->has_gc_cost) {
        gcs_err_set(err, "profile has no gc_cost_ns: run gcscale calibrate on the machine");
        return -1;
    }
    gcs_model_heap *h = &est->heap;
    /* live_objects is exact (sweep, or re-mark's count); objects_marked may
     * count an object twice in RELAXED mode. */
    double n = (double)(prev->live_objects ? prev->live_objects : prev->objects_marked);
    double fields = (double)prev->pointers_scanned;
    double examined = (double)prev->edges_examined;
    double edges;
    if (examined > 0) {
        edges = fmax(0.0, examined - (double)prev->roots);
    } else {
        /* Instrumentation off: no per-object counters.  Assume one edge per
         * object (a tree's) and that many fields. */
        edges = n;
        examined = n + (double)prev->roots;
        fields = n;
    }
    double live_bytes = (double)(prev->live_bytes ? prev->live_bytes : 16 * n);
    double cobj = prof->gc_cost_object_ns, cptr = prof->gc_cost_pointer_ns;
    h->objects = (uint64_t)n;
    h->edges = (uint64_t)edges;
    h->live_bytes = (uint64_t)live_bytes;
    h->t1_ns = cobj * n + cptr * edges;

    /* Lines: headers and pointer fields (read), the mark table (RW). */
    double read_lines = fmin(ceil(live_bytes / line), n + ceil(8 * fields / line));
    double per_mark = prev->mark_mode == GCS_GC_MARK_ATOMIC_BITS ? 1.0 / 8 : 1.0;
    double rw_lines = ceil(live_bytes / GRANULE_BYTES * per_mark / line);
    rw_lines = fmin(n, fmax(rw_lines, (double)prev->pages_in_use));
    h->q1[GCS_ACCESS_READ] = read_lines;
    h->q1[GCS_ACCESS_RW] = rw_lines;
    h->live_lines = (uint64_t)(read_lines + rw_lines);
    double live = read_lines + rw_lines;
    double revisit = examined > 0 ? fmax(0.0, examined - n) / examined : 0.0;
    h->live_lines_avg = gcs_inspect_fast_l(revisit, live, cap);

    /* V_j.  Statistics from another machine's node count (a profile of a
     * machine this is not, e.g. o2k.json here) say nothing about placement
     * there: spread evenly, as interleaved pages would be. */
    int nn = prof->nnodes;
    h->nnodes = nn;
    double total = 0;
    if (prev->nnodes == nn) {
        for (int k = 0; k < nn && k < GCS_GC_MAX_NODES; k++)
            total += (double)prev->node_live_bytes[k];
        total += (double)prev->unknown_node_live_bytes;
    }
    double vsum = 0;
    for (int k = 0; k < nn; k++) {
        if (total > 0) {
            double b = k < GCS_GC_MAX_NODES ? (double)prev->node_live_bytes[k] : 0;
            h->v[k] = (b + (double)prev->unknown_node_live_bytes / nn) / total;
        } else {
            h->v[k] = 1.0 / nn;
        }
        vsum += h->v[k];
    }
    /* shares of the live bytes: they cover every byte, whatever the counters say */
    gcs_assert_internal(nn < 1 || fabs(vsum - 1) < 1e-9);
    (void)vsum;

    /* Tinf. */
    const char *source = "remembered";
    double frac = measured_span_fraction(prev, h->t1_ns, &source);
    if (frac < 0) {
        source = "remembered";
        frac = span_fraction_hint >= 0 ? fmin(1.0, span_fraction_hint) : 0;
    }
    /* every source is a share of T1 (each is capped at 1 and never negative) */
    gcs_assert_internal(frac >= 0 && frac <= 1);
    est->span_fraction = frac;
    est->span_source = source;
    h->tinf_ns = frac * h->t1_ns;
    return 0;
}

int gcs_adaptive_estimate_heap(const gcs_gc_stats *prev, const gcs_profile *prof, double span_fraction_hint,
                               gcs_adaptive_estimate *est, gcs_err *err)
{
    int line;
    double cap;
    gcs_inspect_fast_cache(prof, &line, &cap);
    return _gcs_adaptive_estimate(prev, prof, span_fraction_hint, line, cap, est, err);
}
