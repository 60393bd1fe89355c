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
 *
 * The online correction (docs/adaptive.md, "Correction from measurements"):
 * the model's time at P splits into busy work, (1 - f(P)) T(P), and
 * overheads, f(P) T(P) (its lost span, wake, search and tail); the
 * previous collection ran at P0 and measured its busy time and its mark
 * time.  Busy factor k(P0) = measured busy / predicted busy: it corrects the
 * model's level (its misses are priced unhidden) and the extra work at P0.
 * Overhead residual d(P0) = measured T(P0) - T(P0) (k (1 - f) + f): the
 * wake-up, search and tail the model did not foresee.  Corrected mark
 * T'(P) = T(P) (k(P) (1 - f(P)) + f(P)) + d(P).  The sweep in the same
 * form: per page swept, one worker's time w(P0) = the workers' summed sweep
 * time / pages, and the overhead o(P0) = the sweep's wall time - their sum
 * / P0 (waking the workers, the slowest one); S(P) = w(P) pages / P + o(P).
 * Each pair is kept per P, the median (by the time it gives) of the last
 * three measured there; where P has not run, the factor of the nearest P
 * that ran and the overhead of the nearest P >= 2 that ran (0 for P = 1):
 * uncertain values, which exploration replaces with measured ones.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "adaptive_internal.h"
#include "gcscale/adaptive.h"
#include "gcscale/inspect.h"

#define GRANULE_BYTES 16            /* gc/: one mark per 16-byte granule */
/* Reuse of the last prediction: relative change of T1, Q1, L; absolute
 * change of Tinf / T1 and of each V_j. */
#define REUSE_REL 0.01
#define REUSE_SPAN 0.05
#define REUSE_V 0.01
/* Weight of a new span measurement in the smoothed Tinf / T1. */
#define SPAN_SMOOTH 0.5
/* A correction at P is the median, by the time it gives, of the last
 * HISTORY measurements there (the mean of two): one collection the host
 * preempted (13 ms instead of 0.4) must not flip the choice, and neither
 * may one that ended before the second worker woke (a chain at P = 2
 * measured 0.46 ms once and 17-36 ms usually).  The decision's own cost is
 * kept the same way. */
#define HISTORY 3
/* The busy factor is kept in [1/50, 50]: a measurement outside says the
 * collection was disturbed (a descheduled worker), not the model. */
#define BUSY_MIN 0.02
#define BUSY_MAX 50.0
/* Candidates: every P up to GRID_ALL, then steps of about GRID_STEP. */
#define GRID_ALL 16
#define GRID_STEP 1.125
/* What a decision is expected to cost: COST_MARGIN x the median of the last
 * HISTORY measured in pauses.  Before any, COLD_FACTOR x what the same kind
 * of decision cost warm at creation: a decision right after a mark runs
 * from cold caches (docs/adaptive.md, "Cost"). */
/* How much a P's measurements may have drifted once they are explore_after
 * collections old (the cpu objective does not grow on older evidence than
 * that allows): the chain's pause at P = 1 moved from 33.8 to 37.0 ms
 * within 20 collections on this VM (2026-11-27), and P = 2, last measured
 * at the start, looked 10% faster. */
#define STALE_NOISE 0.10
#define COST_MARGIN 2.0
#define COLD_FACTOR 8.0
/* Pairs of warm-up decisions at creation (a new curve, the curve reused). */
#define WARM_PAIRS 3

/* The model's mark time at P = 1..max for one heap: pred[P - 1] in ns and
 * its overhead share f(P) (lost span, wake, search and tail over P); NaN
 * where not predicted. */
typedef struct curve_t {
    gcs_model_heap heap;
    int max;
    double pred[GCS_GC_MAX_THREADS];
    double frac[GCS_GC_MAX_THREADS];
} curve_t;

/* The last HISTORY measurements of one phase at one P: for the mark, the
 * workers' summed busy time, the mark time and the T1 estimate of that
 * collection's heap (k and d are derived from them on the curve of the
 * moment, so that a new curve never meets corrections made for another);
 * for the sweep, w and o themselves (the model has no part in them). */
typedef struct hist {
    double u[HISTORY], v[HISTORY], w[HISTORY];
    int n; /* measurements so far (the next goes to n % HISTORY) */
} hist;

/* The last HISTORY costs of one kind of decision, ns. */
typedef struct costs {
    double ns[HISTORY];
    int n;
} costs;

/* Before any decision is measured, its HISTORY entries are the initial
 * guess: one decision that a preempted CPU made slow then cannot stop the
 * next ones (the median needs two). */
static void cost_init(costs *c, double initial)
{
    for (int i = 0; i < HISTORY; i++)
        c->ns[i] = initial;
    c->n = HISTORY;
}

static void cost_push(costs *c, double ns)
{
    c->ns[c->n % HISTORY] = ns;
    c->n = c->n < 1000000 ? c->n + 1 : HISTORY + (c->n + 1) % HISTORY;
}

/* What n units of this kind of decision are expected to cost: COST_MARGIN x
 * the median of the last HISTORY measured (cost_init's guesses until
 * measurements replace them). */
static double cost_expected(const costs *c, int n)
{
    double a = c->ns[0], b = c->ns[1], x = c->ns[2];
    double med = a > b ? (b > x ? b : (a > x ? x : a)) : (a > x ? a : (b > x ? x : b));
    return COST_MARGIN * med * n;
}

typedef struct adaptive_state {
    gcs_profile *prof;
    gcs_adaptive_opts opts;
    gcs_model_opts mopts;
    double private_lines;        /* cap on L */
    int line_bytes;
    double span_fraction;        /* Tinf / T1 last measured */
    int span_known;
    gcs_model_result *results;   /* [GCS_GC_MAX_THREADS] scratch */
    /* The model's curve, reused while the inputs stay put, while a new one
     * is being predicted outside the pause, or while the budget says so. */
    int have_curve;
    curve_t curve;
    int last_choice;             /* with exploration */
    int settled;                 /* without: what a decision that cannot be made keeps */
    uint64_t predictions;
    uint64_t last_predict_ns;    /* what the last new curve cost (in the pause or outside) */
    /* The decision thread (opts.background); NULL: decisions in the pause.
     * With it, everything in this state but bg and bg_settled is the
     * thread's. */
    _gcs_adaptive_bg *bg;
    int bg_settled;              /* the pause's: the last taken decision's P without exploration */
    int outside;                 /* deciding on the thread: no budget, nothing measured for it */
    costs cost_decide;           /* decisions without a new curve */
    costs cost_predict;          /* decisions with a new curve in the pause, per prediction */
    costs cost_exchange;         /* the pause's with the decision thread (the pause's own) */
    /* Corrections from measurements, per P. */
    hist mark[GCS_GC_MAX_THREADS];           /* k, d */
    hist sweep[GCS_GC_MAX_THREADS];          /* w (ns per page, one worker), o (ns) */
    uint64_t seen_index[GCS_GC_MAX_THREADS]; /* collection that last ran at P; 0: never */
    uint64_t corrected_index;                /* the last collection folded in */
    uint64_t explored_index;                 /* the last collection that explored */
    uint64_t fallbacks;                      /* decisions that fell back */
    char errbuf[256];            /* why the last prediction failed (the note is static) */
} adaptive_state;

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

static int decide_outside(void *state, const gcs_gc_stats *prev, int max, gcs_gc_decision *out, int *settled);

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
    cost_init(&s->cost_predict, COLD_FACTOR * warm_new / 2);
    cost_init(&s->cost_decide, COLD_FACTOR * warm_same);
    /* an exchange with the thread does less than a decision on the last
     * curve, and wakes a thread: guessed as the same */
    cost_init(&s->cost_exchange, COLD_FACTOR * warm_same);
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

/* What a decision with a new curve of n predictions is expected to cost. */
static double new_curve_cost(const adaptive_state *s, int n)
{
    return cost_expected(&s->cost_predict, n) + cost_expected(&s->cost_decide, 1);
}

void _gcs_adaptive_expected_costs(void *policy_state, int max_threads, double *decide_ns, double *new_curve_ns)
{
    const adaptive_state *s = policy_state;
    int ps[GCS_GC_MAX_THREADS];
    *decide_ns = cost_expected(&s->cost_decide, 1);
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

/* ---- corrections from measurements -------------------------------------------------- */

/* The model's time at P and its overhead share: predicted, or between two
 * predicted P (beyond the grid) interpolated.  0 when neither. */
static int model_at(const adaptive_state *s, int p, int max, double *t, double *f)
{
    const double *pred = s->curve.pred, *frac = s->curve.frac;
    if (isfinite(pred[p - 1])) {
        *t = pred[p - 1];
        *f = frac[p - 1];
        return 1;
    }
    int lo = p - 1, hi = p + 1;
    while (lo >= 1 && !isfinite(pred[lo - 1]))
        lo--;
    while (hi <= max && !isfinite(pred[hi - 1]))
        hi++;
    if (lo < 1 || hi > max)
        return 0;
    double w = (double)(p - lo) / (double)(hi - lo);
    *t = pred[lo - 1] + w * (pred[hi - 1] - pred[lo - 1]);
    *f = frac[lo - 1] + w * (frac[hi - 1] - frac[lo - 1]);
    return 1;
}

static void hist_push(hist *h, double u, double v, double w)
{
    int slot = h->n % HISTORY;
    h->u[slot] = u;
    h->v[slot] = v;
    h->w[slot] = w;
    if (h->n < 1000000)
        h->n++;
    else
        h->n = HISTORY + (h->n + 1) % HISTORY; /* stays >= HISTORY, same slot order */
}

/* Which correction, and how its time at P is a x + b. */
typedef struct corr_kind {
    const hist *h;   /* [max] */
    int sweep;       /* 0: the mark's (k, d), x = the model's busy time; 1: the sweep's (w, o), x = pages / P */
    double scale;    /* mark: the curve's scale to this heap */
    double pages;    /* sweep: pages to sweep */
    double a0;       /* a where nothing was measured: k = 1; w = 0 (no sweep known) */
} corr_kind;

/* Measurement i at P as (a, b): the sweep's as stored; the mark's k and d
 * on the current curve scaled to that collection's heap:
 * k = busy / (P t (1 - f)), d = mark - t (k (1 - f) + f).  0 where the
 * curve has no value at P. */
static int entry_ab(const adaptive_state *s, const corr_kind *c, int p, int max, int i, double *a, double *b)
{
    const hist *h = &c->h[p - 1];
    if (c->sweep) {
        *a = h->u[i];
        *b = h->v[i];
        return 1;
    }
    double t, f;
    if (!model_at(s, p, max, &t, &f) || !(s->curve.heap.t1_ns > 0))
        return 0;
    t *= h->w[i] / s->curve.heap.t1_ns;
    double predicted_busy = t * (1 - f) * p;
    if (!(predicted_busy > 0) || !isfinite(predicted_busy))
        return 0;
    *a = fmin(BUSY_MAX, fmax(BUSY_MIN, h->u[i] / predicted_busy));
    *b = h->v[i] - t * (*a * (1 - f) + f);
    return 1;
}

static int corr_x(const adaptive_state *s, const corr_kind *c, int p, int max, double *x)
{
    if (c->sweep) {
        *x = c->pages / p;
        return 1;
    }
    double t, f;
    if (!model_at(s, p, max, &t, &f))
        return 0;
    *x = c->scale * t * (1 - f);
    return 1;
}

/* The (a, b) measured at P whose time a x + b is the median of the last
 * HISTORY (the mean of two); 0 when nothing was measured there. */
static int hist_pick(const adaptive_state *s, const corr_kind *c, int p, int max, double *a, double *b)
{
    const hist *h = &c->h[p - 1];
    int n = h->n < HISTORY ? h->n : HISTORY;
    double x, as[HISTORY], bs[HISTORY], v[HISTORY];
    if (n == 0 || !corr_x(s, c, p, max, &x))
        return 0;
    for (int i = 0; i < n; i++) {
        if (!entry_ab(s, c, p, max, i, &as[i], &bs[i]))
            return 0;
        v[i] = as[i] * x + bs[i];
    }
    if (n < 3) {
        *a = n == 1 ? as[0] : (as[0] + as[1]) / 2;
        *b = n == 1 ? bs[0] : (bs[0] + bs[1]) / 2;
        return 1;
    }
    int idx[HISTORY] = {0, 1, 2};
    for (int i = 1; i < n; i++) /* n <= 3: insertion sort */
        for (int j = i; j > 0 && v[idx[j]] < v[idx[j - 1]]; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    *a = as[idx[n / 2]];
    *b = bs[idx[n / 2]];
    return 1;
}

/* (a, b) at P: measured there; else a of the nearest P that ran and b of
 * the nearest P >= 2 that ran (coordination costs of a neighbour are the
 * best guess there; 0 for P = 1); else (a0, 0). */
static void lookup(const adaptive_state *s, const corr_kind *c, int p, int max, double *a, double *b)
{
    *a = c->a0;
    *b = 0;
    if (hist_pick(s, c, p, max, a, b))
        return;
    int have_a = 0, have_b = p == 1;
    for (int dist = 1; dist < max && !(have_a && have_b); dist++)
        for (int q = p - dist; q <= p + dist; q += 2 * dist) {
            double aq, bq;
            if (q < 1 || q > max || !hist_pick(s, c, q, max, &aq, &bq))
                continue;
            if (!have_a) {
                *a = aq;
                have_a = 1;
            }
            if (!have_b && q >= 2) {
                *b = bq;
                have_b = 1;
            }
        }
}

/* T'(P), the corrected mark (k and d there, if asked); NaN where the model
 * has no value. */
static double mark_at(const adaptive_state *s, int p, int max, double scale, double *k_out, double *d_out)
{
    double t, f, k, d;
    if (!model_at(s, p, max, &t, &f))
        return NAN;
    corr_kind c = {.h = s->mark, .sweep = 0, .scale = scale, .a0 = 1};
    lookup(s, &c, p, max, &k, &d);
    if (k_out)
        *k_out = k;
    if (d_out)
        *d_out = d;
    return scale * t * (k * (1 - f) + f) + d;
}

/* S(P), the sweep of `pages` pages at P from its measurements; 0 before
 * any (the mark alone decides). */
static double sweep_at(const adaptive_state *s, int p, int max, double pages)
{
    double w, o;
    corr_kind c = {.h = s->sweep, .sweep = 1, .pages = pages, .a0 = 0};
    lookup(s, &c, p, max, &w, &o);
    return fmax(0.0, w * pages / p + o);
}

/* Pages the previous collection swept: what this one is expected to. */
static double pages_swept(const gcs_gc_stats *st)
{
    double pages = 0;
    for (int i = 0; i < st->threads && i < GCS_GC_MAX_THREADS; i++)
        pages += (double)st->workers[i].pages_swept;
    return pages;
}

/* Folds the previous collection's measurements at the P it ran into the
 * mark's and the sweep's history there; t1 is the T1 estimate of its heap. */
static void correct(adaptive_state *s, const gcs_gc_stats *prev, int max, double t1)
{
    int p0 = prev->threads;
    if (prev->remark || prev->index == 0 || prev->index == s->corrected_index || p0 < 1 || p0 > max)
        return;
    int folded = 0;
    double busy = 0;
    for (int i = 0; i < p0; i++)
        busy += (double)prev->workers[i].busy_ns;
    if (prev->mark_ns > 0 && busy > 0 && t1 > 0 && isfinite(t1)) {
        hist_push(&s->mark[p0 - 1], busy, (double)prev->mark_ns, t1);
        folded = 1;
    }
    /* The sweep: every worker claims pages until none is left, so the sum
     * of their times is the work (one worker's time for it) and the wall
     * time beyond its share per worker is waking them and the last one's
     * tail. */
    double pages = 0, work = 0;
    for (int i = 0; i < p0; i++) {
        pages += (double)prev->workers[i].pages_swept;
        work += (double)prev->workers[i].sweep_ns;
    }
    if (prev->sweep_ns > 0 && pages > 0 && work > 0) {
        hist_push(&s->sweep[p0 - 1], work / pages, (double)prev->sweep_ns - work / p0, 0);
        folded = 1;
    }
    if (folded) {
        s->seen_index[p0 - 1] = prev->index;
        s->corrected_index = prev->index;
    }
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
static int no_decision(const adaptive_state *s, const gcs_gc_stats *prev, int max_threads, int keep,
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
static int decide(adaptive_state *s, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out)
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
    if (!s->outside && cost_expected(&s->cost_decide, 1) > budget)
        /* Even a decision on the last curve would take more than the
         * budget: none this time. */
        return no_decision(s, prev, max_threads, keep_p(s, prev, max_threads), out);
    gcs_adaptive_estimate est;
    gcs_err err;
    double hint = s->span_known ? s->span_fraction : s->opts.initial_span_fraction;
    if (estimate(prev, s->prof, hint, s->line_bytes, s->private_lines, &est, &err) < 0) {
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
    correct(s, prev, max_threads, est.heap.t1_ns);

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
            cost_push(&s->cost_decide, (double)(gcs_now_ns() - t_start));
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
        tm[p - 1] = isfinite(s->curve.pred[p - 1]) ? mark_at(s, p, max_threads, scale, NULL, NULL) : NAN;
        sw[p - 1] = isfinite(tm[p - 1]) ? sweep_at(s, p, max_threads, pages) : NAN;
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
            tm[p - 1] = mark_at(s, p, max_threads, scale, NULL, NULL);
            sw[p - 1] = sweep_at(s, p, max_threads, pages);
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
            if (nb < 1 || nb > cap || !isfinite(tc[nb - 1]) || tc[nb - 1] > tc[choice - 1] * (1 + s->opts.explore_margin))
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
    (void)mark_at(s, choice, max_threads, scale, &kc, &dc);
    uint64_t cost = gcs_now_ns() - t_start;
    if (curve == CURVE_PREDICTED)
        s->last_predict_ns = cost;
    if (!s->outside) { /* what a decision costs in the pause */
        if (curve == CURVE_PREDICTED)
            cost_push(&s->cost_predict, (double)cost / npredicted);
        else
            cost_push(&s->cost_decide, (double)cost);
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

static int decide_outside(void *state, const gcs_gc_stats *prev, int max, gcs_gc_decision *out, int *settled)
{
    adaptive_state *s = state;
    int p = decide(s, prev, max, out);
    *settled = s->settled > 0 ? s->settled : p;
    return p;
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
        return decide(s, prev, max_threads, out);
    /* The decision thread: hand this collection's statistics over and take
     * the decision it made from the ones before -- within the budget too
     * (waking the thread is a system call: 4-20 us on this VM). */
    uint64_t t0 = gcs_now_ns();
    int keep = s->bg_settled > 0 && s->bg_settled <= max_threads
                   ? s->bg_settled
                   : prev->threads >= 1 && prev->threads <= max_threads ? prev->threads : max_threads;
    if (prev->pause_ns > 0 &&
        cost_expected(&s->cost_exchange, 1) >
            s->opts.cost_budget *
                (double)(prev->pause_ns > prev->stop_ns ? prev->pause_ns - prev->stop_ns : prev->pause_ns))
        return no_decision(s, prev, max_threads, keep, out);
    int p = 0, settled = 0;
    int got = _gcs_adaptive_bg_exchange(s->bg, prev, max_threads, &p, &settled, out);
    cost_push(&s->cost_exchange, (double)(gcs_now_ns() - t0));
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
