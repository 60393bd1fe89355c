/* decide.c -- the decision (_gcs_adaptive_decide): the curve (predicted
 * anew, or the last one reused or scaled, as the cost budget allows), the
 * objective's P on the corrected curve of the collection, no growth on old
 * evidence, hysteresis, the small-heap cap and exploration; and the answers
 * when there is no decision: the fallbacks, and the P kept when a decision
 * would not fit the budget (_gcs_adaptive_no_decision, which the pause
 * also gives when an exchange with the decision thread would not fit).
 * Apart from policy.c because the same decision runs in the pause and on
 * the decision thread; policy.c only chooses where.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/internal.h"
#define GCS_ADAPTIVE_POLICY_FILES
#include "adaptive_internal.h"
#include "gcscale/adaptive.h"

/* Reuse of the last prediction: relative change of T1, Q1, L; absolute
 * change of Tinf / T1 and of each V_j. */
#define REUSE_REL 0.01
#define REUSE_SPAN 0.05
#define REUSE_V 0.01
/* Weight of a new span measurement in the smoothed Tinf / T1. */
#define SPAN_SMOOTH 0.5
/* Candidates: every P up to GRID_ALL, then steps of about GRID_STEP. */
#define GRID_ALL 16
#define GRID_STEP 1.125
/* How much a P's measurements may have drifted once they are explore_after
 * collections old (the cpu objective does not grow on older evidence than
 * that allows): on a shared host one P's pause drifts by about a tenth
 * within 20 collections, enough to make a P measured only at the start
 * look faster than it is (docs/adaptive.md, "Objectives"). */
#define STALE_NOISE 0.10

/* ---- the curve reused, the candidates, what a new curve costs -------------------- */

/* Inputs close enough to the last prediction's that predicting again would
 * change nothing the decision depends on (docs/adaptive.md, "Cost"). */
static int same_inputs(const gcs_model_heap *a, const gcs_model_heap *b, double rel, double span, double vj)
{
#define CLOSE(x, y) (fabs((x) - (y)) <= rel * fmax(fabs(x), fabs(y)))
    if (a->nnodes != b->nnodes || !CLOSE(a->t1_ns, b->t1_ns) || !CLOSE(a->q1[0], b->q1[0]) ||
        !CLOSE(a->q1[1], b->q1[1]) || !CLOSE(a->live_lines_avg, b->live_lines_avg))
        return 0;
    if (fabs(a->tinf_ns / a->t1_ns - b->tinf_ns / b->t1_ns) > span)
        return 0;
    for (int j = 0; j < a->nnodes; j++)
        if (fabs(a->v[j] - b->v[j]) > vj)
            return 0;
    return 1;
#undef CLOSE
}

/* The candidates to predict: every P up to GRID_ALL, then a geometric grid
 * (steps of about GRID_STEP) up to max, always including max. */
static int grid(int max, int *ps)
{
    int n = 0;
    for (int p = 1; p <= max; ) {
        ps[n++] = p;
        int next = p < GRID_ALL ? p + 1 : (int)ceil(p * GRID_STEP);
        if (next > max && p < max)
            next = max;
        p = next;
    }
    return n;
}

/* What a decision with a new curve of n predictions is expected to cost. */
static double new_curve_cost(const adaptive_state *s, int n)
{
    return _gcs_adaptive_cost_expected(&s->cost_predict, n) + _gcs_adaptive_cost_expected(&s->cost_decide, 1);
}

void _gcs_adaptive_expected_costs(void *policy_state, int max_threads, double *decide_ns, double *new_curve_ns)
{
    const adaptive_state *s = policy_state;
    int ps[GCS_GC_MAX_THREADS];
    *decide_ns = _gcs_adaptive_cost_expected(&s->cost_decide, 1);
    *new_curve_ns = new_curve_cost(s, grid(max_threads, ps));
}

/* ---- the model's curve ------------------------------------------------------------ */

/* Predicts the curve of heap at ps[0..n) (P values in 1..curve->max; the
 * others stay as they were) with scratch of n results.  -1 with err and
 * *failed_p set when the model rejects the inputs. */
static int curve_predict(const gcs_profile *prof, const gcs_model_opts *mopts, const gcs_model_heap *heap, const int *ps,
                         int n, gcs_model_result *scratch, curve_t *curve, int *failed_p, gcs_err *err)
{
    for (int i = 0; i < n; i++) {
        int p = ps[i];
        gcs_assert_internal(p >= 1 && p <= curve->max && p <= GCS_GC_MAX_THREADS);
        gcs_model_result *r = &scratch[i];
        if (gcs_model_predict(prof, heap, p, mopts, r, err) < 0) {
            *failed_p = p;
            return -1;
        }
        curve->pred[p - 1] = r->time_ns;
        curve->frac[p - 1] = fmin(1.0, fmax(0.0, (r->lost_span + r->lost_wake + r->lost_search + r->lost_tail) / p));
    }
    return 0;
}

/* ---- the decision ---------------------------------------------------------------- */

enum { CURVE_PREDICTED, CURVE_SAME, CURVE_BUDGET, NCURVES };
enum { ACT_OBJECTIVE, ACT_SHRINK, ACT_CAP, ACT_EXPLORE, ACT_HOLD, NACTS };
/* No formatting in the pause: printf's floating-point code, cold after a
 * mark, cost more than the predictions (docs/adaptive.md, "Cost"). */
#define NOTES(curve)                                                                                   \
    {curve "; the objective's P", curve "; shrinking halfway to the objective's P",                   \
     curve "; small-heap cap", curve "; exploring a neighbouring P",                                  \
     curve "; not growing on old measurements"}
static const char *const notes[2][NCURVES][NACTS] = {
    {NOTES("predicted"), NOTES("curve reused (inputs as last time)"),
     NOTES("curve reused (a new prediction would exceed the cost budget)")},
    {NOTES("decided outside the pause: predicted"), NOTES("decided outside the pause: curve reused (inputs as last time)"),
     NOTES("decided outside the pause: curve reused (a new prediction would exceed the cost budget)")},
};
static const char *const input_names[] = {"objects", "edges", "t1_ns", "tinf_ns", "q1_read", "q1_rw",
                                          "live_lines_avg", "span_fraction", "span_source", "busy_factor",
                                          "overhead_ns", "best_ns", "objective_p", "cap",
                                          "predict_cost_ns", "sweep_ns"};
#define NINPUTS ((int)(sizeof input_names / sizeof *input_names))
_Static_assert(NINPUTS <= GCS_GC_DECISION_INPUTS, "a decision records at most GCS_GC_DECISION_INPUTS inputs");

/* The decision cannot be made: the stated fallback P (the last choice, or
 * the pool before there is one), with the reason. */
static int fall_back(adaptive_state *s, int max_threads, gcs_gc_decision *out, const char *note_first,
                     const char *note_last)
{
    s->fallbacks++;
    s->have_curve = 0;
    out->npredicted = 0;
    out->note = s->last_choice > 0 ? note_last : note_first;
    return s->last_choice > 0 && s->last_choice <= max_threads ? s->last_choice : max_threads;
}

/* No decision this time (the budget, or no curve yet): the P the policy
 * last settled on (its choice without exploration), else the previous
 * collection's. */
static int keep_p(const adaptive_state *s, const gcs_gc_stats *prev, int max_threads)
{
    if (s->settled > 0 && s->settled <= max_threads)
        return s->settled;
    return prev->threads >= 1 && prev->threads <= max_threads ? prev->threads : max_threads;
}

/* The small-heap cap from what the previous collection measured: its
 * workers' summed mark and sweep time is what one worker would take. */
static int measured_cap(const adaptive_state *s, const gcs_gc_stats *prev, int max_threads)
{
    if (!(s->opts.min_thread_work_ns > 0))
        return max_threads;
    double work = 0;
    for (int i = 0; i < prev->threads && i < GCS_GC_MAX_THREADS; i++)
        work += (double)prev->workers[i].busy_ns + (double)prev->workers[i].sweep_ns;
    return (int)fmax(1.0, fmin((double)max_threads, floor(work / s->opts.min_thread_work_ns)));
}

/* Pages the previous collection swept: what this one is expected to. */
static double pages_swept(const gcs_gc_stats *st)
{
    double pages = 0;
    for (int i = 0; i < st->threads && i < GCS_GC_MAX_THREADS; i++)
        pages += (double)st->workers[i].pages_swept;
    return pages;
}

/* How far apart the collections at P measured (their marks, scaled to
 * this heap's T1), relative to the corrected pause there: (max - min) /
 * pause'(P) of the last HISTORY; 0 with fewer than two. */
static double measured_noise(const adaptive_state *s, int p, double t1_now, double pause)
{
    const hist *h = &s->mark[p - 1];
    int n = h->n < HISTORY ? h->n : HISTORY;
    if (n < 2 || !(t1_now > 0) || !(pause > 0))
        return 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (h->w[i] > 0) {
            double v = h->v[i] * t1_now / h->w[i];
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    return hi > lo ? (hi - lo) / pause : 0;
}

/* No decision this time, because it would not fit the budget: keep P, but
 * within the small-heap cap from the work the collection measured (a few
 * loads): a heap whose pause is too short to decide in is the one the cap
 * is for. */
int _gcs_adaptive_no_decision(const adaptive_state *s, const gcs_gc_stats *prev, int max_threads, int keep,
                              gcs_gc_decision *out)
{
    int cap = measured_cap(s, prev, max_threads);
    out->note = cap < keep ? "no decision (it would exceed the cost budget); small-heap cap from the measured work"
                           : "no decision (it would exceed the cost budget); P as last settled";
    return cap < keep ? cap : keep;
}

/* The objective's P among the candidates 1..cap with a corrected time
 * (the collection's: mark + sweep).  noise[P - 1]: how far apart P's own
 * measurements were (measured_noise); the cpu objective counts a P as
 * within the tolerance of the shortest pause also when the difference is
 * inside that spread: a difference the measurements cannot show is no
 * reason to pay for more threads. */
static int objective_p(const adaptive_state *s, const double *tc, const double *noise, int cap, double *best_out)
{
    double best = INFINITY;
    int arg = 0;
    for (int p = 1; p <= cap; p++)
        if (isfinite(tc[p - 1]) && tc[p - 1] < best) {
            best = tc[p - 1];
            arg = p;
        }
    *best_out = best;
    if (arg == 0 || s->opts.objective == GCS_ADAPTIVE_OBJECTIVE_PAUSE)
        return arg;
    /* Least CPU (P x pause) within the tolerance of the shortest pause. */
    int choice = arg;
    double cpu = arg * best;
    for (int p = 1; p <= cap; p++)
        if (isfinite(tc[p - 1]) && tc[p - 1] <= best * (1 + s->opts.tolerance + fmax(noise[arg - 1], noise[p - 1])) &&
            p * tc[p - 1] < cpu) {
            cpu = p * tc[p - 1];
            choice = p;
        }
    return choice;
}

/* The decision from prev's statistics (marked something), in the pause
 * (within the cost budget) or on the decision thread (s->outside). */
int _gcs_adaptive_decide(adaptive_state *s, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out)
{
    uint64_t t_start = gcs_now_ns();
    /* The budget of this decision: cost_budget of the collector's part of
     * the last pause (the time to stop the world is the mutators'), the
     * best guess of this one's before it happens.  Statistics without a
     * pause (made up, or a re-mark's), or a decision outside the pause, set
     * none. */
    double budget = INFINITY;
    if (prev->pause_ns > 0 && !s->outside)
        budget = s->opts.cost_budget *
                 (double)(prev->pause_ns > prev->stop_ns ? prev->pause_ns - prev->stop_ns : prev->pause_ns);
    if (!s->outside && _gcs_adaptive_cost_expected(&s->cost_decide, 1) > budget)
        /* Even a decision on the last curve would take more than the
         * budget: none this time. */
        return _gcs_adaptive_no_decision(s, prev, max_threads, keep_p(s, prev, max_threads), out);
    gcs_adaptive_estimate est;
    gcs_err err;
    double hint = s->span_known ? s->span_fraction : s->opts.initial_span_fraction;
    if (_gcs_adaptive_estimate(prev, s->prof, hint, s->line_bytes, s->private_lines, &est, &err) < 0) {
        snprintf(s->errbuf, sizeof s->errbuf, "%.200s", err.msg);
        return fall_back(s, max_threads, out, "fallback: no estimate from the statistics; P = the pool",
                         "fallback: no estimate from the statistics; P = the last choice");
    }
    int src = strcmp(est.span_source, "computed-span") == 0 ? 0 : strcmp(est.span_source, "idle-time") == 0 ? 1 : 2;
    if (src < 2) {
        /* Smooth the span share: one collection's idle time is noisy. */
        s->span_fraction = s->span_known ? SPAN_SMOOTH * est.span_fraction + (1 - SPAN_SMOOTH) * s->span_fraction
                                         : est.span_fraction;
        s->span_known = 1;
        est.span_fraction = s->span_fraction;
        est.heap.tinf_ns = s->span_fraction * est.heap.t1_ns;
    } else if (!s->span_known) {
        src = 3; /* initial */
    }

    /* What the previous collection measured, whether or not there is a
     * curve to read it on yet. */
    _gcs_adaptive_correct(s, prev, max_threads, est.heap.t1_ns);

    /* The curve: the last one when the inputs are about the same; a new one
     * when the budget allows it (always outside the pause); else the last
     * one, scaled. */
    int curve;
    int usable = s->have_curve && s->curve.max == max_threads;
    int ps[GCS_GC_MAX_THREADS], n = grid(max_threads, ps);
    if (usable && same_inputs(&est.heap, &s->curve.heap, REUSE_REL, REUSE_SPAN, REUSE_V)) {
        curve = CURVE_SAME;
    } else if (!s->outside && new_curve_cost(s, n) > budget) {
        if (!usable) {
            int keep = keep_p(s, prev, max_threads), cap = measured_cap(s, prev, max_threads);
            out->note = cap < keep ? "no curve yet (a prediction would exceed the cost budget); small-heap cap from the "
                                     "measured work"
                                   : "no curve yet (a prediction would exceed the cost budget); P as last settled";
            _gcs_adaptive_cost_push(&s->cost_decide, (double)(gcs_now_ns() - t_start));
            return cap < keep ? cap : keep;
        }
        curve = CURVE_BUDGET;
    } else {
        curve = CURVE_PREDICTED;
    }
    double scale = 1;
    if (curve == CURVE_PREDICTED) {
        s->curve.heap = est.heap;
        s->curve.max = max_threads;
        for (int p = 1; p <= max_threads; p++)
            s->curve.pred[p - 1] = s->curve.frac[p - 1] = NAN;
        int failed_p = 0;
        if (curve_predict(s->prof, &s->mopts, &est.heap, ps, n, s->results, &s->curve, &failed_p, &err) < 0) {
            snprintf(s->errbuf, sizeof s->errbuf, "P = %d: %.200s", failed_p, err.msg);
            return fall_back(s, max_threads, out, "fallback: the model rejected the inputs; P = the pool",
                             "fallback: the model rejected the inputs; P = the last choice");
        }
        s->have_curve = 1;
        s->predictions++;
    } else if (s->curve.heap.t1_ns > 0) {
        scale = est.heap.t1_ns / s->curve.heap.t1_ns;
    }

    /* The corrected curve of the whole collection: mark + sweep. */
    double tm[GCS_GC_MAX_THREADS], sw[GCS_GC_MAX_THREADS], tc[GCS_GC_MAX_THREADS];
    double pages = pages_swept(prev);
    int cap = max_threads;
    for (int p = 1; p <= max_threads; p++) {
        tm[p - 1] =
            isfinite(s->curve.pred[p - 1]) ? _gcs_adaptive_mark_at(s, p, max_threads, scale, 0, NULL, NULL) : NAN;
        sw[p - 1] = isfinite(tm[p - 1]) ? _gcs_adaptive_sweep_at(s, p, max_threads, pages) : NAN;
        tc[p - 1] = tm[p - 1] + sw[p - 1];
    }
    if (!isfinite(tm[0]) || !(tm[0] > 0)) {
        snprintf(s->errbuf, sizeof s->errbuf, "the corrected P = 1 time is %g", tm[0]);
        return fall_back(s, max_threads, out, "fallback: the prediction is not a number; P = the pool",
                         "fallback: the prediction is not a number; P = the last choice");
    }
    if (s->opts.min_thread_work_ns > 0)
        cap = (int)fmax(1.0, fmin((double)max_threads, floor(tc[0] / s->opts.min_thread_work_ns)));
    double best;
    double noise[GCS_GC_MAX_THREADS];
    for (int p = 1; p <= max_threads; p++)
        noise[p - 1] = measured_noise(s, p, est.heap.t1_ns, tc[p - 1]);
    int choice = objective_p(s, tc, noise, cap, &best);
    if (choice < 1 || !isfinite(best))
        return fall_back(s, max_threads, out, "fallback: the prediction is not a number; P = the pool",
                         "fallback: the prediction is not a number; P = the last choice");
    int npredicted = n;
    if (curve == CURVE_PREDICTED && s->opts.objective == GCS_ADAPTIVE_OBJECTIVE_CPU) {
        /* Between grid points: a smaller P within the tolerance and with
         * less CPU may lie after the grid point before the choice. */
        int lo = 0;
        for (int i = 1; i < n; i++)
            if (ps[i] == choice)
                lo = ps[i - 1];
        for (int p = lo + 1; lo > 0 && p < choice; p++) {
            int failed_p = 0;
            if (curve_predict(s->prof, &s->mopts, &est.heap, &p, 1, &s->results[n], &s->curve, &failed_p, &err) < 0)
                break;
            npredicted++;
            tm[p - 1] = _gcs_adaptive_mark_at(s, p, max_threads, scale, 0, NULL, NULL);
            sw[p - 1] = _gcs_adaptive_sweep_at(s, p, max_threads, pages);
            tc[p - 1] = tm[p - 1] + sw[p - 1];
            if (tc[p - 1] <= best * (1 + s->opts.tolerance) && p * tc[p - 1] <= choice * tc[choice - 1]) {
                choice = p;
                break;
            }
        }
    }
    int last = prev->threads >= 1 && prev->threads <= max_threads ? prev->threads : max_threads;
    int wanted = choice, act = ACT_OBJECTIVE;
    /* No growth on old evidence (cpu objective): the host and the heap
     * drift, and a P measured long ago is compared with one measured just
     * now.  When the current P would be within the tolerance had the
     * choice's measurements drifted by STALE_NOISE x their age /
     * explore_after, and costs less CPU, it stays; exploration measures the
     * choice again in time. */
    int cur = s->settled >= 1 && s->settled <= cap ? s->settled : last <= cap ? last : 0;
    if (s->opts.objective == GCS_ADAPTIVE_OBJECTIVE_CPU && cur >= 1 && choice > cur && s->seen_index[choice - 1] &&
        s->opts.explore_after > 0 && isfinite(tc[cur - 1])) {
        double stale = STALE_NOISE * fmin(1.0, (double)(prev->index - s->seen_index[choice - 1]) /
                                                   (double)s->opts.explore_after);
        if (tc[cur - 1] <= tc[choice - 1] * (1 + s->opts.tolerance + fmax(noise[cur - 1], noise[choice - 1]) + stale) &&
            cur * tc[cur - 1] < choice * tc[choice - 1]) {
            choice = cur;
            act = ACT_HOLD;
        }
    }
    /* Hysteresis (HotSpot's WorkerPolicy): grow at once, shrink halfway. */
    if (choice < last && (last + choice) / 2 > choice) {
        choice = (last + choice) / 2;
        act = ACT_SHRINK;
    }
    if (choice > cap) {
        choice = cap;
        act = ACT_CAP;
    }
    s->settled = choice;
    /* Exploration: a neighbour not measured lately whose corrected time is
     * close: run it once, so that its overheads are measured rather than
     * borrowed or stale. */
    if (s->opts.explore_after > 0 && max_threads > 1 && isfinite(tc[choice - 1])) {
        uint64_t since = prev->index - s->explored_index;
        for (int dir = 1; dir >= -1; dir -= 2) {
            int nb = choice + dir;
            if (nb < 1 || nb > cap)
                continue;
            /* P = 1 not measured yet: explored on the model's inflation,
             * which the choice above did not trust (correct.c, lookup) */
            double t_nb = nb == 1 && s->mark[0].n == 0 && isfinite(tc[0])
                              ? _gcs_adaptive_mark_at(s, 1, max_threads, scale, 1, NULL, NULL) + sw[0]
                              : tc[nb - 1];
            if (!isfinite(t_nb) || t_nb > tc[choice - 1] * (1 + s->opts.explore_margin))
                continue;
            /* Never measured there: its corrections are borrowed, look
             * after a quarter of the gap. */
            uint64_t gap = s->mark[nb - 1].n > 0 ? (uint64_t)s->opts.explore_after
                                                 : (uint64_t)(s->opts.explore_after >= 4 ? s->opts.explore_after / 4 : 1);
            if (since >= gap && (!s->seen_index[nb - 1] || prev->index - s->seen_index[nb - 1] >= gap)) {
                choice = nb;
                act = ACT_EXPLORE;
                s->explored_index = prev->index;
                break;
            }
        }
    }
    gcs_assert_internal(choice >= 1 && choice <= max_threads);
    s->last_choice = choice;
    for (int p = 1; p <= max_threads; p++)
        out->predicted_mark_ns[p - 1] = tm[p - 1];
    out->npredicted = max_threads;
    out->note = notes[s->outside][curve][act];
    double kc, dc;
    (void)_gcs_adaptive_mark_at(s, choice, max_threads, scale, 0, &kc, &dc);
    uint64_t cost = gcs_now_ns() - t_start;
    if (curve == CURVE_PREDICTED)
        s->last_predict_ns = cost;
    if (!s->outside) { /* what a decision costs in the pause */
        if (curve == CURVE_PREDICTED)
            _gcs_adaptive_cost_push(&s->cost_predict, (double)cost / npredicted);
        else
            _gcs_adaptive_cost_push(&s->cost_decide, (double)cost);
    }
    const double vals[NINPUTS] = {(double)est.heap.objects, (double)est.heap.edges, est.heap.t1_ns, est.heap.tinf_ns,
                                  est.heap.q1[GCS_ACCESS_READ], est.heap.q1[GCS_ACCESS_RW], est.heap.live_lines_avg,
                                  est.span_fraction, src, kc, dc, best, wanted, cap,
                                  (double)s->last_predict_ns, sw[choice - 1]};
    out->ninputs = NINPUTS;
    for (int i = 0; i < NINPUTS; i++) {
        out->inputs[i].name = input_names[i];
        out->inputs[i].value = vals[i];
    }
    return choice;
}
