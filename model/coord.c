/* coord.c -- the coordination terms of the parallel mark (docs/model.md,
 * "Coordination"): what a worker spends neither marking nor missing, from the
 * constants calibrate measured with the collector (calibrate/coord.c):
 * waking the workers, the initial spread of work from few roots, steal
 * attempts, the termination protocol, and the tail between a worker's exit
 * and the end of the mark.  The paper's model has none of them; on 16 CPUs
 * they were 25-50 us each per worker, a large share of a millisecond mark. */
#include <math.h>
#include <string.h>

#include "../common/internal.h"
#include "coord.h"

double gcs_model_coord_spread_rounds(uint64_t roots, int threads)
{
    if (threads <= 1)
        return 0;
    uint64_t p = (uint64_t)threads;
    uint64_t holders = roots == 0 ? 1 : roots < p ? roots : p;
    /* Round r: every holder can give work to one waiting worker, so the
     * newcomers of round r (up to the holders' count) waited r rounds. */
    double waited = 0;
    for (int r = 1; holders < p; r++) {
        uint64_t fresh = holders < p - holders ? holders : p - holders;
        waited += (double)r * (double)fresh;
        holders += fresh;
    }
    return waited / (double)threads;
}

/* The wake law's value with `workers` woken (a mean over them). */
static double wake_law(const gcs_profile_coord *c, double workers)
{
    return fmax(0, c->wake_a + c->wake_b * (workers - 1));
}

void gcs_model_coord_terms(const gcs_profile_coord *c, uint64_t roots, int threads, double steals,
                           gcs_model_coord *out)
{
    memset(out, 0, sizeof *out);
    if (threads < 1)
        return;
    /* A law's slope may be negative (calibrate keeps the signed fit): on a
     * VM a lone worker pays an idle vCPU's wake-up at both ends of the mark,
     * which P >= 2 partly hides.  A time is never negative, so the law's
     * value is clamped, not its coefficients: clamping one coefficient of a
     * joint fit would change the law everywhere else. */
    double lg = log2((double)threads);
    out->wake_ns = wake_law(c, threads);
    out->tail_ns = fmax(0, c->tail_a + c->tail_b * lg);
    if (threads > 1) { /* one worker never looks for work (gc/mark.c) */
        out->spread_ns = fmax(0, gcs_model_coord_spread_rounds(roots, threads) * c->spread_ns);
        out->steal_ns = fmax(0, (steals > 0 ? steals : 0) * c->attempt_ns / threads);
        out->idle_ns = fmax(0, c->idle_a + c->idle_b * lg);
    }
    out->search_ns = out->spread_ns + out->steal_ns + out->idle_ns;
    gcs_assert_internal(out->wake_ns >= 0 && out->tail_ns >= 0 && out->search_ns >= 0);
}

double _gcs_model_collector_steals(const gcs_profile *prof, const gcs_model_heap *heap, int threads,
                                   double model_steals, const gcs_model_opts *opts)
{
    if (threads > 1 && opts->steal_sim && heap->steals_simulated >= threads)
        return heap->sim_steals[threads]; /* the heap's own count (steals.c) */
    return _gcs_model_fitted_steals(prof, heap, threads, model_steals, opts);
}

double _gcs_model_fitted_steals(const gcs_profile *prof, const gcs_model_heap *heap, int threads,
                                double model_steals, const gcs_model_opts *opts)
{
    if (!prof->has_gc_steals || threads <= 1)
        return model_steals;
    /* gc_steals is fitted per thief on heaps with parallelism to spare.  A
     * thief finds work only while the heap has more than one piece of it:
     * with an average parallelism A = T1/Tinf at most A - 1 of the P - 1
     * thieves can be stealing at once, and a chain (A = 1, a private stack
     * that never holds two entries, gc/mark.c) is never stolen from
     * (opts->parallelism_bound, model v2). */
    double thieves = threads - 1;
    if (opts->parallelism_bound && heap->tinf_ns > 0) {
        double spare = heap->t1_ns / heap->tinf_ns - 1;
        if (spare < thieves)
            thieves = spare > 0 ? spare : 0;
    }
    double n = thieves * (prof->gc_steal_a * log(heap->t1_ns > 1 ? heap->t1_ns : 1) + prof->gc_steal_b);
    return n > 0 ? n : 0;
}

int _gcs_model_coord(const gcs_profile *prof, const gcs_model_heap *heap, int threads, double collector_steals,
                     const gcs_model_opts *opts, gcs_model_coord *at_p, gcs_model_coord *serial)
{
    memset(at_p, 0, sizeof *at_p);
    memset(serial, 0, sizeof *serial);
    if (!opts->coord || !prof->has_gc_coord)
        return 0;
    /* The number of steal attempts is the collector's, not the paper's
     * P ln T1: that estimate prices L extra misses per steal and stays small
     * on purpose (docs/model.md); the time spent stealing needs the real
     * count, which gc_steals fits (attempts and steals differ by the few
     * failed attempts, calibrate's details record the ratio). */
    /* A search's cost is finding a victim, not the entries it takes (up to
     * the collector's batch, and how many depends on the heap), and
     * attempt_ns is per entry of calibrate's heaps: where the heap's own
     * searches are simulated and the profile knows its heaps' entries per
     * search, the count priced is the searches in those heaps' entries
     * (docs/model.md, "Per search"). */
    double attempts = collector_steals;
    if (threads > 1 && opts->steal_sim && heap->steals_simulated >= threads && prof->coord.attempts_per_search >= 1)
        attempts = heap->sim_searches[threads] * prof->coord.attempts_per_search;
    gcs_model_coord_terms(&prof->coord, heap->roots, threads, attempts, at_p);
    gcs_model_coord_terms(&prof->coord, heap->roots, 1, 0, serial);
    /* The wake the mark waits for is that of the workers who share its
     * work: a heap of average parallelism A = T1/Tinf < P keeps at most A of
     * them busy, and a chain only worker 0.  The law's value is a mean over
     * the workers woken, and a falling law (a 2-vCPU VM, where the second
     * worker wakes faster than worker 0, which wakes as when alone) would
     * otherwise let a list gain from the others' quick wake-up.  The tail
     * is the whole team's termination: at P (docs/model.md, "Falling
     * laws"). */
    if (heap->tinf_ns > 0 && threads > 1) {
        double sharing = heap->t1_ns / heap->tinf_ns;
        if (sharing < threads)
            at_p->wake_ns = wake_law(&prof->coord, fmax(sharing, 1));
    }
    return 1;
}
