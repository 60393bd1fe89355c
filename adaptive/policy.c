/* policy.c -- the adaptive thread policy (model-notes 1.5).
 *
 * Before each collection: build the model's heap (gcs_model_heap) from the
 * previous collection's statistics -- no snapshot, no heap walk, only
 * arithmetic on counters the collector keeps anyway -- predict the mark time
 * for P = 1..max with gcs_model_predict and take gcs_model_recommend's
 * smallest P within the tolerance of the best.  How each input is estimated,
 * and why: docs/adaptive.md, "Model inputs from the previous collection".
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
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "gcscale/adaptive.h"
#include "gcscale/inspect.h"

#define GRANULE_BYTES 16            /* gc/: one mark per 16-byte granule */
/* Reuse of the last prediction: relative change of T1, Q1, L; absolute
 * change of Tinf / T1 and of each V_j. */
#define REUSE_REL 0.01
#define REUSE_SPAN 0.05
#define REUSE_V 0.01
/* Cost budget: credit saved up is capped at this many decisions. */
#define CREDIT_CAP 4.0
/* Weight of a new span measurement in the smoothed Tinf / T1. */
#define SPAN_SMOOTH 0.5
/* Candidates: every P up to GRID_ALL, then steps of about GRID_STEP. */
#define GRID_ALL 16
#define GRID_STEP 1.125


typedef struct adaptive_state {
    gcs_profile *prof;
    gcs_adaptive_opts opts;
    gcs_model_opts mopts;
    double private_lines;        /* cap on L */
    int line_bytes;
    double span_fraction;        /* Tinf / T1 last measured */
    int span_known;
    int stale_ones;              /* consecutive P = 1 choices on a remembered span */
    gcs_model_result *results;   /* [GCS_GC_MAX_THREADS] scratch */
    /* The last prediction, reused while the inputs stay put. */
    int have_last, last_max, last_choice;
    gcs_model_heap last_heap;
    double pred[GCS_GC_MAX_THREADS];  /* ns per P; NaN where not predicted */
    uint64_t predictions;
    uint64_t last_predict_ns;    /* what the last full decision (estimate + prediction) cost */
    double credit_ns;            /* cost budget saved up: cost_budget * mark_ns per collection */
    __typeof__(((gcs_gc_decision *)0)->inputs) last_inputs; /* of the last full decision */
    char errbuf[256];            /* why the last prediction failed (the note is static) */
} adaptive_state;

void gcs_adaptive_opts_init(gcs_adaptive_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->tolerance = GCS_ADAPTIVE_DEFAULT_TOLERANCE;
    opts->first_threads = 0;
    opts->initial_span_fraction = 0;
    opts->reprobe_after = 4;
    opts->cost_budget = 0.01;
    opts->use_model_opts = 0;
    gcs_model_opts_init(&opts->model);
}

static void state_free(void *p)
{
    adaptive_state *s = p;
    if (!s)
        return;
    gcs_profile_free(s->prof);
    free(s->results);
    free(s);
}

static void policy_destroy(void *p) { state_free(p); }

static int policy_choose(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out)
{
    return gcs_adaptive_choose(state, prev, max_threads, out);
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
    if (!(s->opts.cost_budget >= 0) || !isfinite(s->opts.cost_budget)) {
        gcs_err_set(err, "adaptive: cost_budget must be a finite number >= 0");
        state_free(s);
        return -1;
    }
    if (!(s->opts.tolerance >= 0) || !isfinite(s->opts.tolerance)) {
        gcs_err_set(err, "adaptive: tolerance must be a finite number >= 0");
        state_free(s);
        return -1;
    }
    if (s->opts.use_model_opts) {
        s->mopts = s->opts.model;
    } else {
        gcs_model_opts_init(&s->mopts);
        /* Brent's bound and the span's own misses: a list gets no speedup,
         * as measured; the paper's form would give it 4/3 at P = 2 and so
         * always choose more threads for a chain (model.h). */
        s->mopts.span = GCS_MODEL_SPAN_CRITICAL;
    }
    gcs_inspect_fast_cache(prof, &s->line_bytes, &s->private_lines);
    /* One decision now, on made-up statistics, then forgotten: the first
     * decision in a process pays for paging in and binding the model's code
     * (docs/adaptive.md, "Cost": warm-up at creation), which belongs to
     * start-up, not to a pause. */
    gcs_gc_stats *fake = calloc(1, sizeof *fake);
    if (fake) {
        fake->threads = 2;
        fake->live_objects = fake->objects_marked = 1000;
        fake->edges_examined = 1001;
        fake->pointers_scanned = 2000;
        fake->roots = 1;
        fake->live_bytes = 32000;
        fake->nnodes = prof->nnodes;
        fake->node_live_bytes[0] = 32000;
        fake->workers[0].busy_ns = fake->workers[1].busy_ns = 10000;
        fake->workers[1].search_ns = 1000;
        gcs_gc_decision d;
        memset(&d, 0, sizeof d);
        int p = gcs_adaptive_choose(s, fake, 2, &d);
        free(fake);
        if (p <= 0) {
            gcs_err_set(err, "adaptive: the model rejects this profile: %s", s->errbuf);
            state_free(s);
            return -1;
        }
    }
    s->have_last = s->span_known = s->stale_ones = 0;
    s->predictions = 0;
    s->last_predict_ns = 0;
    s->credit_ns = 0;
    out->name = GCS_ADAPTIVE_POLICY_NAME;
    out->choose = policy_choose;
    out->destroy = policy_destroy;
    out->state = s;
    return 0;
}

/* ---- the model's inputs from one collection's statistics ------------------------- */

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

static int estimate(const gcs_gc_stats *prev, const gcs_profile *prof, double span_fraction_hint, int line,
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
    return estimate(prev, prof, span_fraction_hint, line, cap, est, err);
}

/* ---- the decision ---------------------------------------------------------------- */

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

enum { WHY_PREDICTED, WHY_REUSED, WHY_REPROBE };
static const char *const notes[3][4] = {
    {"predicted; span from the computed span", "predicted; span from idle time",
     "predicted; span remembered", "predicted; span assumed (initial)"},
    {"inputs as last time: same choice; span from the computed span", "inputs as last time: same choice; span from idle time",
     "inputs as last time: same choice; span remembered", "inputs as last time: same choice; span assumed (initial)"},
    {"re-probe at max P: span not measured lately", "re-probe at max P: span not measured lately",
     "re-probe at max P: span not measured lately", "re-probe at max P: span not measured lately"},
};

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
    /* The cost budget (docs/adaptive.md, "Cost"): every collection earns
     * cost_budget of its mark time; a decision that cannot pay for a full
     * one keeps the last choice without looking at the statistics. */
    if (s->have_last && s->last_max == max_threads) {
        s->credit_ns = fmin(s->credit_ns + s->opts.cost_budget * (double)prev->mark_ns,
                            CREDIT_CAP * (double)s->last_predict_ns);
        if (s->credit_ns < (double)s->last_predict_ns) {
            for (int p = 1; p <= max_threads; p++)
                out->predicted_mark_ns[p - 1] = s->pred[p - 1];
            out->npredicted = max_threads;
            out->ninputs = 8;
            memcpy(out->inputs, s->last_inputs, sizeof s->last_inputs);
            out->note = "last choice kept: a new decision would exceed the cost budget";
            return s->last_choice;
        }
    }
    uint64_t t_start = gcs_now_ns();
    gcs_adaptive_estimate est;
    gcs_err err;
    double hint = s->span_known ? s->span_fraction : s->opts.initial_span_fraction;
    if (estimate(prev, s->prof, hint, s->line_bytes, s->private_lines, &est, &err) < 0) {
        snprintf(s->errbuf, sizeof s->errbuf, "%.200s", err.msg);
        out->note = "no prediction, P kept: the statistics hold no marked object";
        return 0;
    }
    int measured = strcmp(est.span_source, "remembered") != 0;
    if (measured) {
        /* Smooth the span share: one collection's idle time is noisy. */
        s->span_fraction = s->span_known ? SPAN_SMOOTH * est.span_fraction + (1 - SPAN_SMOOTH) * s->span_fraction
                                         : est.span_fraction;
        s->span_known = 1;
        s->stale_ones = 0;
        est.span_fraction = s->span_fraction;
        est.heap.tinf_ns = s->span_fraction * est.heap.t1_ns;
    } else if (!s->span_known) {
        est.span_source = "initial";
    }

    /* Reuse the last prediction when the inputs are about the same. */
    int choice, reused = s->have_last && s->last_max == max_threads &&
                         same_inputs(&est.heap, &s->last_heap, REUSE_REL, REUSE_SPAN, REUSE_V);
    if (reused) {
        choice = s->last_choice;
    } else {
        int ps[GCS_GC_MAX_THREADS], n = grid(max_threads, ps);
        for (int p = 1; p <= max_threads; p++)
            s->pred[p - 1] = NAN;
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (gcs_model_predict(s->prof, &est.heap, ps[i], &s->mopts, &s->results[k], &err) < 0) {
                snprintf(s->errbuf, sizeof s->errbuf, "P = %d: %.200s", ps[i], err.msg);
                out->note = "no prediction, P kept: the model rejected the inputs";
                s->have_last = 0;
                return 0;
            }
            s->pred[ps[i] - 1] = s->results[k++].time_ns;
        }
        choice = gcs_model_recommend(s->results, k, s->opts.tolerance);
        /* Between grid points: the smallest P within the tolerance lies
         * after the grid point before the choice; look at each. */
        int lo = 0;
        for (int i = 0; i < n; i++)
            if (ps[i] == choice && i > 0)
                lo = ps[i - 1];
        if (lo > 0 && choice - lo > 1) {
            double best = INFINITY;
            for (int i = 0; i < k; i++)
                best = fmin(best, s->results[i].time_ns);
            for (int p = lo + 1; p < choice; p++) {
                gcs_model_result r;
                if (gcs_model_predict(s->prof, &est.heap, p, &s->mopts, &r, &err) < 0)
                    break;
                s->pred[p - 1] = r.time_ns;
                if (r.time_ns <= best * (1 + s->opts.tolerance)) {
                    choice = p;
                    break;
                }
            }
        }
        if (choice < 1)
            choice = max_threads;
        s->have_last = 1;
        s->last_heap = est.heap;
        s->last_max = max_threads;
        s->last_choice = choice;
        s->predictions++;
        s->last_predict_ns = gcs_now_ns() - t_start;
    }
    s->credit_ns = fmax(0.0, s->credit_ns - (double)(gcs_now_ns() - t_start));
    for (int p = 1; p <= max_threads; p++)
        out->predicted_mark_ns[p - 1] = s->pred[p - 1];
    out->npredicted = max_threads;
    int why = reused ? WHY_REUSED : WHY_PREDICTED;
    if (choice == 1 && !measured && max_threads > 1) {
        /* A P = 1 collection cannot measure the span (nobody is idle): now
         * and then look again with every worker. */
        if (s->opts.reprobe_after > 0 && ++s->stale_ones >= s->opts.reprobe_after) {
            s->stale_ones = 0;
            choice = max_threads;
            why = WHY_REPROBE;
        }
    }
    /* No formatting here: printf's floating-point code, cold after a mark,
     * cost more than the predictions (docs/adaptive.md, "Cost"). */
    int src = strcmp(est.span_source, "computed-span") == 0 ? 0 : strcmp(est.span_source, "idle-time") == 0 ? 1
            : strcmp(est.span_source, "remembered") == 0 ? 2 : 3;
    out->note = notes[why][src];
    static const char *const names[8] = {"objects", "edges", "t1_ns", "tinf_ns", "q1_read", "q1_rw",
                                         "live_lines_avg", "span_fraction"};
    const double vals[8] = {(double)est.heap.objects, (double)est.heap.edges, est.heap.t1_ns, est.heap.tinf_ns,
                            est.heap.q1[GCS_ACCESS_READ], est.heap.q1[GCS_ACCESS_RW], est.heap.live_lines_avg,
                            est.span_fraction};
    out->ninputs = 8;
    for (int i = 0; i < 8; i++) {
        out->inputs[i].name = names[i];
        out->inputs[i].value = vals[i];
    }
    memcpy(s->last_inputs, out->inputs, sizeof s->last_inputs);
    gcs_assert_internal(choice >= 1 && choice <= max_threads);
    return choice;
}
