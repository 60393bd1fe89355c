/* policy.c -- the adaptive thread policy (model-notes 1.5, issue 24).
 *
 * For each collection: build the model's heap (gcs_model_heap) from the
 * previous collection's statistics -- no snapshot, no heap walk, only
 * arithmetic on counters the collector keeps anyway -- and take the model's
 * mark time for P = 1..max (gcs_model_predict).  The decision is made on
 * the decision thread (background.c), outside the pause, from the
 * statistics the pause handed over the collection before; or in the pause,
 * within the cost budget (opts.background 0).  The model supplies the mark's shape in P; what the collector
 * measured at the P it ran corrects its level and its overheads for this
 * heap on this machine, and the sweep, which the model does not price, is
 * taken from its own measurements (below).  The choice is the objective's
 * P on the corrected curve of the whole collection, mark + sweep, with
 * hysteresis, a small-heap cap and occasional exploration of a neighbouring
 * P.  How each input is estimated, and why: docs/adaptive.md.
 *
 * This file owns the policy's life: its options, its creation (the checks,
 * the warm-up that measures what decisions cost, the decision thread) and
 * destruction, and the pause's entry (gcs_adaptive_choose), which decides
 * in the pause or exchanges with the decision thread.  The estimates are in
 * estimate.c, the corrections from measurements in correct.c, the decision
 * in decide.c (adaptive_internal.h says what they share).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#define GCS_ADAPTIVE_POLICY_FILES
#include "adaptive_internal.h"
#include "gcscale/adaptive.h"
#include "gcscale/inspect.h"

/* Pairs of warm-up decisions at creation (a new curve, the curve reused). */
#define WARM_PAIRS 3

void gcs_adaptive_opts_init(gcs_adaptive_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->objective = GCS_ADAPTIVE_OBJECTIVE_CPU;
    opts->tolerance = GCS_ADAPTIVE_DEFAULT_TOLERANCE;
    opts->first_threads = 0;
    opts->initial_span_fraction = 0;
    opts->explore_after = 24;
    opts->explore_margin = 0.25;
    opts->min_thread_work_ns = 100000;
    opts->cost_budget = 0.01;
    opts->background = 1;
    opts->use_model_opts = 0;
    gcs_model_opts_init(&opts->model);
}

static void state_free(void *p)
{
    adaptive_state *s = p;
    if (!s)
        return;
    _gcs_adaptive_bg_stop(s->bg);
    gcs_profile_free(s->prof);
    free(s->results);
    free(s);
}

static void policy_destroy(void *p) { state_free(p); }

static int policy_choose(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out)
{
    return gcs_adaptive_choose(state, prev, max_threads, out);
}

static int decide_outside(void *state, const gcs_gc_stats *prev, int max, gcs_gc_decision *out, int *settled)
{
    adaptive_state *s = state;
    int p = _gcs_adaptive_decide(s, prev, max, out);
    *settled = s->settled > 0 ? s->settled : p;
    return p;
}

int _gcs_adaptive_wait_background(void *policy_state, int timeout_ms)
{
    adaptive_state *s = policy_state;
    return s->bg ? _gcs_adaptive_bg_wait_idle(s->bg, timeout_ms) : 0;
}

static int check_fraction(double v, double lo, double hi, const char *name, gcs_err *err)
{
    if (!(v >= lo && v <= hi) || !isfinite(v)) {
        gcs_err_set(err, "adaptive: %s must be a finite number in [%g, %g]", name, lo, hi);
        return -1;
    }
    return 0;
}

/* One made-up collection for the warm-up: `objects` objects of a bushy
 * heap at P = 2. */
static void warmup_stats(gcs_gc_stats *st, int nnodes, uint64_t objects)
{
    memset(st, 0, sizeof *st);
    st->index = 1;
    st->threads = 2;
    st->live_objects = st->objects_marked = objects;
    st->edges_examined = objects + 1;
    st->pointers_scanned = 2 * objects;
    st->roots = 1;
    st->live_bytes = 32 * objects;
    st->nnodes = nnodes;
    st->node_live_bytes[0] = st->live_bytes;
    st->workers[0].busy_ns = st->workers[1].busy_ns = 10000;
    st->workers[1].search_ns = 1000;
}

int gcs_adaptive_policy_new(gcs_profile *prof, const gcs_adaptive_opts *opts, gcs_gc_thread_policy *out,
                            gcs_err *err)
{
    memset(out, 0, sizeof *out);
    if (!prof) {
        gcs_err_set(err, "adaptive: no machine profile");
        return -1;
    }
    if (!prof->has_gc_cost || !(prof->gc_cost_object_ns > 0)) {
        gcs_err_set(err, "profile has no gc_cost_ns: run gcscale calibrate on the machine");
        gcs_profile_free(prof);
        return -1;
    }
    if (prof->nnodes < 1 || prof->nnodes > GCS_MODEL_MAX_NODES) {
        gcs_err_set(err, "profile has %d nodes (1..%d)", prof->nnodes, GCS_MODEL_MAX_NODES);
        gcs_profile_free(prof);
        return -1;
    }
    adaptive_state *s = calloc(1, sizeof *s);
    gcs_model_result *res = calloc(GCS_GC_MAX_THREADS, sizeof *res);
    if (!s || !res) {
        free(s);
        free(res);
        gcs_profile_free(prof);
        gcs_err_set(err, "adaptive: out of memory");
        return -1;
    }
    s->prof = prof;
    s->results = res;
    if (opts)
        s->opts = *opts;
    else
        gcs_adaptive_opts_init(&s->opts);
    const gcs_adaptive_opts *o = &s->opts;
    if (check_fraction(o->cost_budget, 0, 1, "cost_budget", err) < 0 ||
        check_fraction(o->tolerance, 0, 10, "tolerance", err) < 0 ||
        check_fraction(o->explore_margin, 0, 10, "explore_margin", err) < 0 ||
        check_fraction(o->min_thread_work_ns, 0, 1e12, "min_thread_work_ns", err) < 0 ||
        (o->objective != GCS_ADAPTIVE_OBJECTIVE_CPU && o->objective != GCS_ADAPTIVE_OBJECTIVE_PAUSE) ||
        o->explore_after < 0) {
        if (err->msg[0] == '\0' || strncmp(err->msg, "adaptive:", 9) != 0)
            gcs_err_set(err, "adaptive: unknown objective or negative explore_after");
        state_free(s);
        return -1;
    }
    if (s->opts.use_model_opts) {
        s->mopts = s->opts.model;
        /* the curve is read from the profile the policy owns, which lives
         * as long as it: the caller's may not */
        if (s->mopts.residency_curve)
            s->mopts.residency_curve = prof;
    } else {
        gcs_model_opts_init(&s->mopts);
        /* Brent's bound and the span's own misses: a list gets no speedup,
         * as measured; the paper's form would give it 4/3 at P = 2 and so
         * always choose more threads for a chain (model.h). */
        s->mopts.span = GCS_MODEL_SPAN_CRITICAL;
    }
    gcs_inspect_fast_cache(prof, &s->line_bytes, &s->private_lines);
    /* Decisions now, on made-up statistics, then forgotten: the first
     * decision in a process pays for paging in and binding the model's code
     * (docs/adaptive.md, "Cost": warm-up at creation), which belongs to
     * start-up, not to a pause.  Then WARM_PAIRS pairs of a new curve and
     * the same inputs again (the curve reused) measure what the two kinds of
     * decision cost warm, from which the budget expects the first real
     * ones' cost.  The least of each kind: a warm-up that the scheduler
     * preempted would otherwise make every decision look too dear for its
     * budget, and a new curve that is never made is never measured, so the
     * guess would stand (docs/adaptive.md, "Cost"). */
    gcs_gc_stats *fake = calloc(1, sizeof *fake);
    if (!fake) {
        gcs_err_set(err, "adaptive: out of memory");
        state_free(s);
        return -1;
    }
    double warm_new = INFINITY, warm_same = INFINITY;
    for (int round = 0; round < 1 + 2 * WARM_PAIRS; round++) {
        gcs_gc_decision d;
        memset(&d, 0, sizeof d);
        int same = round > 0 && round % 2 == 0;
        if (!same)
            s->have_curve = 0;
        warmup_stats(fake, prof->nnodes, round == 0 ? 1000 : 2000);
        uint64_t t0 = gcs_now_ns();
        int p = gcs_adaptive_choose(s, fake, 2, &d);
        double ns = (double)(gcs_now_ns() - t0);
        if (p <= 0 || s->fallbacks) {
            free(fake);
            gcs_err_set(err, "adaptive: the model rejects this profile: %s", s->errbuf);
            state_free(s);
            return -1;
        }
        gcs_assert_internal(round == 0 || strstr(d.note, same ? "inputs as last time" : "predicted") != NULL);
        if (round > 0 && same)
            warm_same = fmin(warm_same, ns);
        else if (round > 0)
            warm_new = fmin(warm_new, ns);
    }
    free(fake);
    /* per prediction: a new curve predicted P = 1 and 2 */
    _gcs_adaptive_cost_init(&s->cost_predict, COLD_FACTOR * warm_new / 2);
    _gcs_adaptive_cost_init(&s->cost_decide, COLD_FACTOR * warm_same);
    /* an exchange with the thread does less than a decision on the last
     * curve, and wakes a thread: guessed as the same */
    _gcs_adaptive_cost_init(&s->cost_exchange, COLD_FACTOR * warm_same);
    s->last_predict_ns = (uint64_t)warm_new;
    s->have_curve = s->span_known = s->last_choice = s->settled = 0;
    s->predictions = 0;
    s->corrected_index = s->explored_index = s->fallbacks = 0;
    memset(s->seen_index, 0, sizeof s->seen_index);
    memset(s->mark, 0, sizeof s->mark);
    memset(s->sweep, 0, sizeof s->sweep);
    if (s->opts.background) {
        /* Started after the warm-up, which decides here.  A thread that
         * cannot start leaves the decisions in the pause, within the
         * budget. */
        gcs_err ignored;
        s->outside = 1;
        s->bg = _gcs_adaptive_bg_start(decide_outside, s, &ignored);
        if (!s->bg)
            s->outside = 0;
    }
    out->name = GCS_ADAPTIVE_POLICY_NAME;
    out->choose = policy_choose;
    out->destroy = policy_destroy;
    out->state = s;
    return 0;
}

int gcs_adaptive_choose(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out)
{
    adaptive_state *s = state;
    if (max_threads > GCS_GC_MAX_THREADS)
        max_threads = GCS_GC_MAX_THREADS;
    if (max_threads < 1)
        max_threads = 1;
    out->npredicted = 0;
    if (!prev || (prev->live_objects == 0 && prev->objects_marked == 0)) {
        int p = s->opts.first_threads > 0 && s->opts.first_threads < max_threads ? s->opts.first_threads
                                                                                   : max_threads;
        out->note = prev ? "previous collection marked nothing: no prediction" : "first collection: no prediction";
        return p;
    }
    if (!s->bg)
        return _gcs_adaptive_decide(s, prev, max_threads, out);
    /* The decision thread: hand this collection's statistics over and take
     * the decision it made from the ones before -- within the budget too
     * (waking the thread is a system call: 4-20 us on this VM). */
    uint64_t t0 = gcs_now_ns();
    int keep = s->bg_settled > 0 && s->bg_settled <= max_threads
                   ? s->bg_settled
                   : prev->threads >= 1 && prev->threads <= max_threads ? prev->threads : max_threads;
    if (prev->pause_ns > 0 &&
        _gcs_adaptive_cost_expected(&s->cost_exchange, 1) >
            s->opts.cost_budget *
                (double)(prev->pause_ns > prev->stop_ns ? prev->pause_ns - prev->stop_ns : prev->pause_ns))
        return _gcs_adaptive_no_decision(s, prev, max_threads, keep, out);
    int p = 0, settled = 0;
    int got = _gcs_adaptive_bg_exchange(s->bg, prev, max_threads, &p, &settled, out);
    _gcs_adaptive_cost_push(&s->cost_exchange, (double)(gcs_now_ns() - t0));
    if (got == 1) {
        s->bg_settled = settled;
        return p;
    }
    if (got == 0 && settled > 0)
        s->bg_settled = keep = settled;
    if (s->bg_settled > 0) {
        out->note = got < 0 ? "no newer decision (the decision thread is busy); P as last settled"
                            : "no newer decision (being made outside the pause); P as last settled";
        return keep;
    }
    out->note = "no decision yet (being made outside the pause); P as the last collection";
    return keep;
}
