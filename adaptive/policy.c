/* policy.c -- the adaptive thread policy (model-notes 1.5, issue 24).
 *
 * Before each collection: build the model's heap (gcs_model_heap) from the
 * previous collection's statistics -- no snapshot, no heap walk, only
 * arithmetic on counters the collector keeps anyway -- and predict the mark
 * time for P = 1..max with gcs_model_predict.  The model supplies the
 * curve's shape in P; what the collector measured at the P it ran corrects
 * its level and its overheads for this heap on this machine (below); the
 * choice is then the objective's P on the corrected curve, with hysteresis,
 * a small-heap cap and occasional exploration of a neighbouring P.  How each
 * input is estimated, and why: docs/adaptive.md.
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
 * wake-up, search and tail the model did not foresee.  Both are kept per
 * P: the median (by the time it gives) of the last three measured there.  Corrected T'(P) = T(P) (k(P) (1 - f(P)) + f(P)) + d(P);
 * where P has not run, k of the nearest P that ran and d of the nearest
 * P >= 2 that ran (0 for P = 1): uncertain values, which exploration
 * replaces with measured ones.
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
/* Weight of a new span measurement in the smoothed Tinf / T1. */
#define SPAN_SMOOTH 0.5
/* (k, d) at P is the median, by the time it gives, of the last HISTORY
 * measurements there (the mean of two): one collection the host preempted
 * (13 ms instead of 0.4) must not flip the choice, and neither may one that
 * ended before the second worker woke (a chain at P = 2 measured 0.46 ms
 * once and 17-36 ms usually). */
#define HISTORY 3
/* The busy factor is kept in [1/50, 50]: a measurement outside says the
 * collection was disturbed (a descheduled worker), not the model. */
#define BUSY_MIN 0.02
#define BUSY_MAX 50.0
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
    gcs_model_result *results;   /* [GCS_GC_MAX_THREADS] scratch */
    /* The last model curve, reused while the inputs stay put or the budget
     * says so. */
    int have_last, last_max, last_choice;
    gcs_model_heap last_heap;
    double pred[GCS_GC_MAX_THREADS];  /* the model's ns per P; NaN where not predicted */
    double frac[GCS_GC_MAX_THREADS];  /* its overhead share f(P) */
    uint64_t predictions;
    uint64_t last_predict_ns;    /* what the last full decision (estimate + prediction) cost */
    /* Corrections from measurements. */
    /* The last HISTORY measurements (k, d) at each P. */
    double k_hist[GCS_GC_MAX_THREADS][HISTORY], d_hist[GCS_GC_MAX_THREADS][HISTORY];
    int nhist[GCS_GC_MAX_THREADS];           /* measurements so far (the next goes to nhist % HISTORY) */
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

static int check_fraction(double v, double lo, double hi, const char *name, gcs_err *err)
{
    if (!(v >= lo && v <= hi) || !isfinite(v)) {
        gcs_err_set(err, "adaptive: %s must be a finite number in [%g, %g]", name, lo, hi);
        return -1;
    }
    return 0;
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
    } else {
        gcs_model_opts_init(&s->mopts);
        /* Brent's bound and the span's own misses: a list gets no speedup,
         * as measured; the paper's form would give it 4/3 at P = 2 and so
         * always choose more threads for a chain (model.h). */
        s->mopts.span = GCS_MODEL_SPAN_CRITICAL;
    }
    gcs_inspect_fast_cache(prof, &s->line_bytes, &s->private_lines);
    /* Two decisions now, on made-up statistics, then forgotten: the first
     * decision in a process pays for paging in and binding the model's code
     * (docs/adaptive.md, "Cost": warm-up at creation), which belongs to
     * start-up, not to a pause; the second one's cost is what the budget
     * expects of the first real one. */
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
        for (int round = 0; round < 2; round++) {
            gcs_gc_decision d;
            memset(&d, 0, sizeof d);
            s->have_last = 0;
            fake->live_objects = fake->objects_marked = 1000 + 1000 * (uint64_t)round;
            uint64_t t0 = gcs_now_ns();
            int p = gcs_adaptive_choose(s, fake, 2, &d);
            s->last_predict_ns = gcs_now_ns() - t0;
            if (p <= 0 || s->fallbacks) {
                free(fake);
                gcs_err_set(err, "adaptive: the model rejects this profile: %s", s->errbuf);
                state_free(s);
                return -1;
            }
        }
        free(fake);
    }
    s->have_last = s->span_known = s->last_choice = 0;
    s->predictions = 0;
    s->corrected_index = s->explored_index = s->fallbacks = 0;
    memset(s->seen_index, 0, sizeof s->seen_index);
    memset(s->nhist, 0, sizeof s->nhist);
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

/* ---- corrections from measurements -------------------------------------------------- */

/* The model's time at P and its overhead share: predicted, or between two
 * predicted P (beyond the grid) interpolated.  0 when neither. */
static int model_at(const adaptive_state *s, int p, int max, double *t, double *f)
{
    if (isfinite(s->pred[p - 1])) {
        *t = s->pred[p - 1];
        *f = s->frac[p - 1];
        return 1;
    }
    int lo = p - 1, hi = p + 1;
    while (lo >= 1 && !isfinite(s->pred[lo - 1]))
        lo--;
    while (hi <= max && !isfinite(s->pred[hi - 1]))
        hi++;
    if (lo < 1 || hi > max)
        return 0;
    double w = (double)(p - lo) / (double)(hi - lo);
    *t = s->pred[lo - 1] + w * (s->pred[hi - 1] - s->pred[lo - 1]);
    *f = s->frac[lo - 1] + w * (s->frac[hi - 1] - s->frac[lo - 1]);
    return 1;
}

/* The (k, d) measured at P whose time T (k (1 - f) + f) + d is the median of
 * the last HISTORY (the mean of two); 0 when P has not run. */
static int sample_at(const adaptive_state *s, int p, double t, double f, double *k, double *d)
{
    int n = s->nhist[p - 1] < HISTORY ? s->nhist[p - 1] : HISTORY;
    if (n == 0)
        return 0;
    double v[HISTORY];
    int idx[HISTORY];
    for (int h = 0; h < n; h++) {
        v[h] = t * (s->k_hist[p - 1][h] * (1 - f) + f) + s->d_hist[p - 1][h];
        idx[h] = h;
    }
    for (int i = 1; i < n; i++) /* n <= 3: insertion sort */
        for (int j = i; j > 0 && v[idx[j]] < v[idx[j - 1]]; j--) {
            int x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    if (n == 2) {
        *k = (s->k_hist[p - 1][0] + s->k_hist[p - 1][1]) / 2;
        *d = (s->d_hist[p - 1][0] + s->d_hist[p - 1][1]) / 2;
    } else {
        *k = s->k_hist[p - 1][idx[n / 2]];
        *d = s->d_hist[p - 1][idx[n / 2]];
    }
    return 1;
}

/* k(P) and d(P): measured at P; else k of the nearest P that ran and d of
 * the nearest P >= 2 that ran (coordination costs of a neighbour are the
 * best guess there; 0 for P = 1); else k = 1, d = 0. */
static void corrections(const adaptive_state *s, int p, int max, double *k, double *d)
{
    double t, f, dd;
    *k = 1;
    *d = 0;
    if (model_at(s, p, max, &t, &f) && sample_at(s, p, t, f, k, d))
        return;
    int have_k = 0, have_d = p == 1;
    for (int dist = 1; dist < max && !(have_k && have_d); dist++)
        for (int q = p - dist; q <= p + dist; q += 2 * dist) {
            double kq;
            if (q < 1 || q > max || !model_at(s, q, max, &t, &f) || !sample_at(s, q, t, f, &kq, &dd))
                continue;
            if (!have_k) {
                *k = kq;
                have_k = 1;
            }
            if (!have_d && q >= 2) {
                *d = dd;
                have_d = 1;
            }
        }
}

/* T'(P); NaN where the model has no value. */
static double corrected(const adaptive_state *s, int p, int max, double scale)
{
    double t, f, k, d;
    if (!model_at(s, p, max, &t, &f))
        return NAN;
    corrections(s, p, max, &k, &d);
    return scale * t * (k * (1 - f) + f) + d;
}

/* Folds the previous collection's measurement at the P it ran into k and
 * d(P0); the curve (times scale) is the model's for that collection's heap. */
static void correct(adaptive_state *s, const gcs_gc_stats *prev, int max, double scale)
{
    int p0 = prev->threads;
    if (prev->remark || prev->index == 0 || prev->index == s->corrected_index || p0 < 1 || p0 > max ||
        prev->mark_ns == 0)
        return;
    double busy = 0, t, f;
    for (int i = 0; i < p0; i++)
        busy += (double)prev->workers[i].busy_ns;
    if (!(busy > 0) || !model_at(s, p0, max, &t, &f) || !(t > 0) || !isfinite(t))
        return;
    t *= scale;
    double predicted_busy = t * (1 - f) * p0;
    if (!(predicted_busy > 0))
        return;
    double k = fmin(BUSY_MAX, fmax(BUSY_MIN, busy / predicted_busy));
    double d = (double)prev->mark_ns - t * (k * (1 - f) + f);
    int slot = s->nhist[p0 - 1]++ % HISTORY;
    s->k_hist[p0 - 1][slot] = k;
    s->d_hist[p0 - 1][slot] = d;
    s->seen_index[p0 - 1] = prev->index;
    s->corrected_index = prev->index;
}

/* ---- the decision ---------------------------------------------------------------- */

enum { CURVE_PREDICTED, CURVE_SAME, CURVE_BUDGET };
enum { ACT_OBJECTIVE, ACT_SHRINK, ACT_CAP, ACT_EXPLORE };
/* No formatting in the pause: printf's floating-point code, cold after a
 * mark, cost more than the predictions (docs/adaptive.md, "Cost"). */
static const char *const notes[3][4] = {
    {"predicted; the objective's P", "predicted; shrinking halfway to the objective's P",
     "predicted; small-heap cap", "predicted; exploring a neighbouring P"},
    {"curve reused (inputs as last time); the objective's P",
     "curve reused (inputs as last time); shrinking halfway to the objective's P",
     "curve reused (inputs as last time); small-heap cap",
     "curve reused (inputs as last time); exploring a neighbouring P"},
    {"curve reused (a new prediction would exceed the cost budget); the objective's P",
     "curve reused (a new prediction would exceed the cost budget); shrinking halfway to the objective's P",
     "curve reused (a new prediction would exceed the cost budget); small-heap cap",
     "curve reused (a new prediction would exceed the cost budget); exploring a neighbouring P"},
};
static const char *const input_names[] = {"objects", "edges", "t1_ns", "tinf_ns", "q1_read", "q1_rw",
                                          "live_lines_avg", "span_fraction", "span_source", "busy_factor",
                                          "overhead_ns", "best_ns", "objective_p", "cap",
                                          "predict_cost_ns"};
#define NINPUTS ((int)(sizeof input_names / sizeof *input_names))

/* The decision cannot be made: the stated fallback P (the last choice, or
 * the pool before there is one), with the reason. */
static int fall_back(adaptive_state *s, int max_threads, gcs_gc_decision *out, const char *note_first,
                     const char *note_last)
{
    s->fallbacks++;
    s->have_last = 0;
    out->npredicted = 0;
    out->note = s->last_choice > 0 ? note_last : note_first;
    return s->last_choice > 0 && s->last_choice <= max_threads ? s->last_choice : max_threads;
}

/* The objective's P among the candidates 1..cap with a corrected time. */
static int objective_p(const adaptive_state *s, const double *tc, int cap, double *best_out)
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
        if (isfinite(tc[p - 1]) && tc[p - 1] <= best * (1 + s->opts.tolerance) && p * tc[p - 1] < cpu) {
            cpu = p * tc[p - 1];
            choice = p;
        }
    return choice;
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
    uint64_t t_start = gcs_now_ns();
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

    /* The curve: the last one when the inputs are about the same or a new
     * one would cost more than the budget allows in this pause; else the
     * model's for this heap. */
    int curve = CURVE_PREDICTED;
    double scale = 1;
    if (s->have_last && s->last_max == max_threads) {
        if (same_inputs(&est.heap, &s->last_heap, REUSE_REL, REUSE_SPAN, REUSE_V))
            curve = CURVE_SAME;
        else if ((double)s->last_predict_ns > s->opts.cost_budget * (double)prev->pause_ns)
            curve = CURVE_BUDGET;
        if (curve != CURVE_PREDICTED && s->last_heap.t1_ns > 0)
            scale = est.heap.t1_ns / s->last_heap.t1_ns;
    }
    int ps[GCS_GC_MAX_THREADS], n = grid(max_threads, ps);
    if (curve == CURVE_PREDICTED) {
        for (int p = 1; p <= max_threads; p++)
            s->pred[p - 1] = s->frac[p - 1] = NAN;
        for (int i = 0; i < n; i++) {
            gcs_model_result *r = &s->results[i];
            if (gcs_model_predict(s->prof, &est.heap, ps[i], &s->mopts, r, &err) < 0) {
                snprintf(s->errbuf, sizeof s->errbuf, "P = %d: %.200s", ps[i], err.msg);
                return fall_back(s, max_threads, out, "fallback: the model rejected the inputs; P = the pool",
                                 "fallback: the model rejected the inputs; P = the last choice");
            }
            s->pred[ps[i] - 1] = r->time_ns;
            s->frac[ps[i] - 1] =
                fmin(1.0, fmax(0.0, (r->lost_span + r->lost_wake + r->lost_search + r->lost_tail) / ps[i]));
        }
        s->have_last = 1;
        s->last_heap = est.heap;
        s->last_max = max_threads;
        s->predictions++;
    }
    correct(s, prev, max_threads, scale);

    double tc[GCS_GC_MAX_THREADS];
    int cap = max_threads;
    for (int p = 1; p <= max_threads; p++)
        tc[p - 1] = isfinite(s->pred[p - 1]) ? corrected(s, p, max_threads, scale) : NAN;
    if (!isfinite(tc[0]) || !(tc[0] > 0)) {
        snprintf(s->errbuf, sizeof s->errbuf, "the corrected P = 1 time is %g", tc[0]);
        return fall_back(s, max_threads, out, "fallback: the prediction is not a number; P = the pool",
                         "fallback: the prediction is not a number; P = the last choice");
    }
    if (s->opts.min_thread_work_ns > 0)
        cap = (int)fmax(1.0, fmin((double)max_threads, floor(tc[0] / s->opts.min_thread_work_ns)));
    double best;
    int choice = objective_p(s, tc, cap, &best);
    if (choice < 1 || !isfinite(best))
        return fall_back(s, max_threads, out, "fallback: the prediction is not a number; P = the pool",
                         "fallback: the prediction is not a number; P = the last choice");
    if (curve == CURVE_PREDICTED && s->opts.objective == GCS_ADAPTIVE_OBJECTIVE_CPU) {
        /* Between grid points: a smaller P within the tolerance and with
         * less CPU may lie after the grid point before the choice. */
        int lo = 0;
        for (int i = 1; i < n; i++)
            if (ps[i] == choice)
                lo = ps[i - 1];
        for (int p = lo + 1; lo > 0 && p < choice; p++) {
            gcs_model_result *r = &s->results[n];
            if (gcs_model_predict(s->prof, &est.heap, p, &s->mopts, r, &err) < 0)
                break;
            s->pred[p - 1] = r->time_ns;
            s->frac[p - 1] = fmin(1.0, fmax(0.0, (r->lost_span + r->lost_wake + r->lost_search + r->lost_tail) / p));
            tc[p - 1] = corrected(s, p, max_threads, scale);
            if (tc[p - 1] <= best * (1 + s->opts.tolerance) && p * tc[p - 1] <= choice * tc[choice - 1]) {
                choice = p;
                break;
            }
        }
    }
    int wanted = choice, act = ACT_OBJECTIVE;
    /* Hysteresis (HotSpot's WorkerPolicy): grow at once, shrink halfway. */
    int last = prev->threads >= 1 && prev->threads <= max_threads ? prev->threads : max_threads;
    if (choice < last && (last + choice) / 2 > choice) {
        choice = (last + choice) / 2;
        act = ACT_SHRINK;
    }
    if (choice > cap) {
        choice = cap;
        act = ACT_CAP;
    }
    /* Exploration: a neighbour not measured lately whose corrected time is
     * close: run it once, so that its overheads are measured rather than
     * borrowed or stale. */
    if (s->opts.explore_after > 0 && max_threads > 1 && isfinite(tc[choice - 1])) {
        uint64_t since = prev->index - s->explored_index;
        for (int dir = 1; dir >= -1; dir -= 2) {
            int nb = choice + dir;
            if (nb < 1 || nb > cap || !isfinite(tc[nb - 1]) || tc[nb - 1] > tc[choice - 1] * (1 + s->opts.explore_margin))
                continue;
            /* Fewer than HISTORY measurements there: uncertain, look again
             * after a quarter of the gap. */
            uint64_t gap = s->nhist[nb - 1] >= HISTORY ? (uint64_t)s->opts.explore_after
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
    if (curve == CURVE_PREDICTED)
        s->last_predict_ns = gcs_now_ns() - t_start;
    for (int p = 1; p <= max_threads; p++)
        out->predicted_mark_ns[p - 1] = tc[p - 1];
    out->npredicted = max_threads;
    out->note = notes[curve][act];
    double kc, dc;
    corrections(s, choice, max_threads, &kc, &dc);
    const double vals[NINPUTS] = {(double)est.heap.objects, (double)est.heap.edges, est.heap.t1_ns, est.heap.tinf_ns,
                                  est.heap.q1[GCS_ACCESS_READ], est.heap.q1[GCS_ACCESS_RW], est.heap.live_lines_avg,
                                  est.span_fraction, src, kc, dc, best, wanted, cap,
                                  (double)s->last_predict_ns};
    out->ninputs = NINPUTS;
    for (int i = 0; i < NINPUTS; i++) {
        out->inputs[i].name = input_names[i];
        out->inputs[i].value = vals[i];
    }
    return choice;
}
