/* coord.c -- the coordination costs of the parallel mark: gc_coord, for the
 * model's wake, search and tail terms (docs/model.md, "Coordination";
 * model/coord.c applies them).
 *
 * Like gc_cost_ns these are properties of the collector on this machine, so
 * only the collector can measure them.  On cache-resident heaps (so that
 * marking is short and misses do not blur the figures) the collector marks,
 * with instrumentation, at P = 1..max_threads, `reps` times each after a
 * warm-up, and each worker's statistics (gcs_gc_worker_stats) give:
 *
 *   wake   wake_ns: start signal until the worker ran;
 *   tail   mark_ns(stats) - wake_ns - mark_ns(worker): it had exited while
 *          the mark went on (the same definition as validate's measured
 *          stack and the corpus's tail_ns);
 *   search search_ns, steal_attempts and steal_searches (the searches that
 *          found work: a search takes up to 16 entries, one attempt each).
 *
 * Three heaps: a binary tree with one root (work must spread from one
 * worker), a "forest" of P trees with a root each (every worker starts with
 * work: no spread; built per P), and a pointer array with one root whose
 * elements point at random (many steals).  The laws, by least squares over
 * every repetition (GSL):
 *
 *   wake(P) = a + b (P - 1)     per-worker mean of a repetition, P = 1..N
 *   tail(P) = a + b log2 P      the same
 *   sum of search(P) = P (idle_a + idle_b log2 P) + P W(R, P) spread
 *                      + attempts x attempt_ns                  P = 2..N
 *
 * with W(R, P) the mean rounds of the initial spread per worker
 * (gcs_model_coord_spread_rounds: 0 for the forest, log-like for one root).
 * With a single P >= 2 (two CPUs) idle_b cannot be told from idle_a: it is
 * 0 and marked unreliable, as is any coefficient whose 95% interval is wider
 * than its size, and a cost of its own (spread round, attempt) the fit put
 * below 0 (kept at 0).  A law's coefficients keep their sign: on a 2-vCPU
 * VM every calibration so far found a lone worker's wake and tail longer
 * than each of two workers' (an idle vCPU woken at both ends of the mark). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit.h>

#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/model.h"
#include "calibrate_internal.h"

#define COORD_DEPTH 14       /* 32767 objects of 32 bytes: 1 MiB, cache resident */
#define COORD_RANDOM 16384   /* the random heap's array elements */
#define COORD_COLS 4

/* A binary tree of `depth` levels below *slot, in preorder; every new node is
 * reachable from *slot before the next allocation. */
static int build_tree(void **slot, int depth)
{
    void *n = gcs_gc_alloc(24, 2);
    if (!n)
        return -1;
    *slot = n;
    if (depth > 0)
        for (int k = 0; k < 2; k++)
            if (build_tree(&((void **)n)[k], depth - 1) < 0)
                return -1;
    return 0;
}

/* An array of n pointers (chunked and stolen in pieces by the collector) to
 * objects of two fields pointing at random elements. */
static int build_random(void **slot, int n)
{
    void **arr = gcs_gc_alloc(8 * (size_t)n, (size_t)n);
    if (!arr)
        return -1;
    *slot = arr;
    for (int i = 0; i < n; i++)
        if (!(arr[i] = gcs_gc_alloc(24, 2)))
            return -1;
    uint64_t rng = 0xC00D5EEDull;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            ((void **)arr[i])[k] = arr[gcs_random_below(&rng, (uint64_t)n)];
    return 0;
}

/* The samples of all heaps: wake and tail rows (x, y), search rows. */
typedef struct coord_samples {
    int n, cap;
    double *wake_x, *wake_y, *tail_x, *tail_y;
    int ns;
    double *sx;   /* [ns][COORD_COLS]: P, P log2 P, P W(R, P), attempts */
    double *sy;   /* summed search */
    double attempts, steals, searches;
} coord_samples;

static int grow(coord_samples *s, int more)
{
    if (s->n + more <= s->cap)
        return 0;
    int cap = (s->n + more) * 2;
    double **arrs[] = {&s->wake_x, &s->wake_y, &s->tail_x, &s->tail_y, &s->sy};
    for (int i = 0; i < 5; i++) {
        double *a = realloc(*arrs[i], sizeof(double) * (size_t)cap);
        if (!a)
            return -1;
        *arrs[i] = a;
    }
    double *x = realloc(s->sx, sizeof(double) * (size_t)cap * COORD_COLS);
    if (!x)
        return -1;
    s->sx = x;
    s->cap = cap;
    return 0;
}

/* Marks the current heap (R roots) at P = threads, reps times after a
 * warm-up, into s. */
static int measure(int threads, uint64_t roots, int reps, coord_samples *s)
{
    if (grow(s, reps) < 0)
        return -1;
    gcs_gc_set_threads(threads);
    gcs_gc_collect();
    double w = gcs_model_coord_spread_rounds(roots, threads), lg = log2((double)threads);
    for (int r = 0; r < reps; r++) {
        gcs_gc_stats st;
        gcs_gc_collect();
        if (gcs_gc_last_stats(&st) < 0 || st.threads != threads)
            return -1;
        double wake = 0, tail = 0, search = 0, att = 0, srch = 0;
        for (int i = 0; i < threads; i++) {
            const gcs_gc_worker_stats *ws = &st.workers[i];
            wake += (double)ws->wake_ns;
            double rest = (double)st.mark_ns - (double)ws->wake_ns - (double)ws->mark_ns;
            tail += rest > 0 ? rest : 0;
            search += (double)ws->search_ns;
            att += (double)ws->steal_attempts;
            srch += (double)ws->steal_searches;
        }
        s->wake_x[s->n] = threads - 1;
        s->wake_y[s->n] = wake / threads;
        s->tail_x[s->n] = lg;
        s->tail_y[s->n] = tail / threads;
        s->n++;
        if (threads > 1) {
            double *x = &s->sx[(size_t)s->ns * COORD_COLS];
            x[0] = threads;
            x[1] = threads * lg;
            x[2] = threads * w;
            x[3] = att;
            s->sy[s->ns++] = search;
            s->attempts += att;
            s->searches += srch;
            s->steals += (double)st.steals;
        }
    }
    return 0;
}

/* One fitted coefficient and how far to trust it. */
typedef struct coord_coef {
    const char *name;  /* the profile key, e.g. "gc_coord.wake_ns.a" */
    double value, se, lo, hi;
    int n, fitted;     /* fitted = 0: not determined by the data (kept at 0) */
} coord_coef;

/* Least squares y = X c over the columns in use (use[j]); the others are 0
 * and not fitted.  se from the covariance scaled by the residual variance. */
static int lsq(int n, int k, const double *x, const double *y, const int *use, coord_coef *out,
               double *rms_rel)
{
    int m = 0, cols[COORD_COLS];
    for (int j = 0; j < k; j++)
        if (use[j])
            cols[m++] = j;
    for (int j = 0; j < k; j++) {
        out[j].value = 0;
        out[j].se = out[j].lo = out[j].hi = NAN;
        out[j].n = n;
        out[j].fitted = use[j];
    }
    *rms_rel = NAN;
    if (m == 0 || n <= m)
        return -1;
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)m), *cov = gsl_matrix_alloc((size_t)m, (size_t)m);
    gsl_vector *Y = gsl_vector_alloc((size_t)n), *c = gsl_vector_alloc((size_t)m);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)m);
    int rc = -1;
    if (!X || !cov || !Y || !c || !ws)
        goto done;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++)
            gsl_matrix_set(X, (size_t)i, (size_t)j, x[(size_t)i * (size_t)k + (size_t)cols[j]]);
        gsl_vector_set(Y, (size_t)i, y[i]);
    }
    double chisq;
    if (gsl_multifit_linear(X, Y, c, cov, &chisq, ws) != 0)
        goto done;
    double t = gsl_cdf_tdist_Pinv(0.975, (double)(n - m)), ss = 0, my = 0;
    for (int i = 0; i < n; i++)
        my += fabs(y[i]) / n;
    for (int i = 0; i < n; i++) {
        double f = 0;
        for (int j = 0; j < m; j++)
            f += gsl_matrix_get(X, (size_t)i, (size_t)j) * gsl_vector_get(c, (size_t)j);
        ss += (f - y[i]) * (f - y[i]);
    }
    /* relative to the mean |y|: single repetitions near 0 would blow up a
     * per-point relative residual */
    *rms_rel = my > 0 ? sqrt(ss / n) / my : NAN;
    for (int j = 0; j < m; j++) {
        coord_coef *o = &out[cols[j]];
        o->value = gsl_vector_get(c, (size_t)j);
        o->se = sqrt(gsl_matrix_get(cov, (size_t)j, (size_t)j));
        o->lo = o->value - t * o->se;
        o->hi = o->value + t * o->se;
    }
    rc = 0;
done:
    gsl_multifit_linear_free(ws);
    gsl_vector_free(c);
    gsl_vector_free(Y);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    return rc;
}

/* Records the coefficient's uncertainty, and marks it unreliable when the
 * data did not determine it, its 95% interval is wider than its size, or,
 * for a cost of its own (signed = 0: the spread round, the steal attempt),
 * the fit put it below 0 (kept at 0).  A law's coefficients (signed = 1:
 * wake, tail and idle, a + b x) are kept as fitted, negative or not: they
 * are one fit, and clamping one of them would move the law at every P
 * (docs/model.md, "Falling laws").  The model clamps the law's value at 0.
 * Returns the value the profile keeps. */
static double keep(gcs_profile *p, const coord_coef *c, int signed_ok, double rms_rel, json_t *fits)
{
    gcs_profile_uncertainty u;
    gcs_profile_uncertainty_init(&u);
    u.std_error = c->se;
    u.ci95_lo = c->lo;
    u.ci95_hi = c->hi;
    u.residual_rms_rel = rms_rel;
    u.n = c->n;
    char why[200] = "";
    double v = c->value, kept = signed_ok || v > 0 ? v : 0;
    if (!c->fitted)
        snprintf(why, sizeof why, "not determined: one thread count P >= 2 measured (more CPUs needed); 0");
    else if (v < 0 && !signed_ok)
        snprintf(why, sizeof why, "fit gave %.3g ns, below 0: kept at 0", v);
    else if (!(c->hi - c->lo <= 2 * fabs(v)))
        snprintf(why, sizeof why, "95%% interval [%.3g, %.3g] ns is wider than the value %.3g ns",
                 c->lo, c->hi, v);
    if (c->fitted)
        gcs_profile_set_uncertainty(p, c->name, &u);
    if (why[0])
        gcs_profile_set_unreliable(p, c->name, why);
    json_object_set_new(fits, c->name, json_pack("{s:f, s:f, s:f, s:s*}", "fitted", c->value, "stderr",
                                                isfinite(c->se) ? c->se : -1.0, "kept", kept,
                                                "unreliable", why[0] ? why : NULL));
    return kept;
}

/* The search law: idle_a, idle_b (only with P >= 3 measured), the spread
 * round and the steal attempt, by least squares.  A cost of its own that
 * the fit puts below 0 is kept at 0 (keep), and the other coefficients are
 * fitted again without its column: they would otherwise keep what the
 * negative cost made up for (one calibration here fitted the spread round
 * at -56 us and the idle law at +35 us a worker, where four others found
 * -0.4..-0.7 us idle beside a 13-31 us spread round; docs/model.md,
 * "Steal work: per worker and per steal").  The dropped column keeps its
 * own fit, for the record. */
static int search_fit(int n, const double *x, const double *y, int max_threads, coord_coef *search, double *rms)
{
    int use[COORD_COLS] = {1, max_threads >= 3, 1, 1}, drop[COORD_COLS] = {0};
    coord_coef dropped[COORD_COLS];
    int fs = lsq(n, COORD_COLS, x, y, use, search, rms);
    for (int again = 1; fs == 0 && again;) {
        again = 0;
        for (int j = 2; j < COORD_COLS; j++)
            if (use[j] && search[j].value < 0) {
                dropped[j] = search[j];
                drop[j] = 1;
                use[j] = 0;
                again = 1;
            }
        if (again)
            fs = lsq(n, COORD_COLS, x, y, use, search, rms);
    }
    for (int j = 2; j < COORD_COLS; j++)
        if (drop[j])
            search[j] = dropped[j];
    return fs;
}

int _gcs_calibrate_coord_search_fit(int n, const double *x, const double *y, int max_threads, double value[4],
                                    int refitted[4])
{
    coord_coef search[COORD_COLS] = {{.name = "idle_a"}, {.name = "idle_b"}, {.name = "spread"}, {.name = "attempt"}};
    double rms;
    if (search_fit(n, x, y, max_threads, search, &rms) < 0)
        return -1;
    for (int j = 0; j < COORD_COLS; j++) {
        value[j] = search[j].value;
        refitted[j] = 0;
    }
    /* which costs were dropped: a value below 0 is only ever a dropped one's */
    for (int j = 2; j < COORD_COLS; j++)
        refitted[j] = search[j].value < 0;
    return 0;
}

static void samples_free(coord_samples *s)
{
    free(s->wake_x);
    free(s->wake_y);
    free(s->tail_x);
    free(s->tail_y);
    free(s->sx);
    free(s->sy);
}

int gcs_calibrate_coord(int quick, int max_threads, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "gc coordination: a collector already runs in this process");
        return -1;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (max_threads <= 0)
        max_threads = online < GCS_GC_MAX_THREADS ? (int)online : GCS_GC_MAX_THREADS;
    if (max_threads < 2) {
        gcs_err_set(err, "gc coordination: needs two workers or more (%d)", max_threads);
        return -1;
    }
    if (_gcs_calibrate_gc_init(64u << 20, max_threads, err) < 0)
        return -1;
    gcs_gc_set_instrumentation(1);
    /* the wake of a sleeping vCPU is heavy-tailed (tens of us, now and then
     * milliseconds): many repetitions, each a 1 MiB mark of ~100 us */
    const int reps = quick ? 101 : 401;
    coord_samples s = {0};
    void **slots = calloc((size_t)max_threads, sizeof *slots);
    int rc = -1, registered = 0;
    if (!slots)
        goto oom;
    for (; registered < max_threads; registered++)
        if (gcs_gc_add_root(&slots[registered]) < 0)
            goto oom;
    /* the one-root heaps at every P, then the forest of P roots */
    for (int h = 0; h < 2; h++) {
        if ((h == 0 ? build_tree(&slots[0], COORD_DEPTH) : build_random(&slots[0], COORD_RANDOM)) < 0)
            goto heap;
        for (int t = 1; t <= max_threads; t++)
            if (measure(t, 1, reps, &s) < 0)
                goto oom;
        slots[0] = NULL;
    }
    for (int t = 2; t <= max_threads; t++) {
        int d = COORD_DEPTH - (int)ceil(log2((double)t));
        for (int i = 0; i < t; i++)
            if (build_tree(&slots[i], d < 6 ? 6 : d) < 0)
                goto heap;
        if (measure(t, (uint64_t)t, reps, &s) < 0)
            goto oom;
        for (int i = 0; i < t; i++)
            slots[i] = NULL;
    }

    coord_coef wake[2] = {{.name = "gc_coord.wake_ns.a"}, {.name = "gc_coord.wake_ns.b"}};
    coord_coef tail[2] = {{.name = "gc_coord.tail_ns.a"}, {.name = "gc_coord.tail_ns.b"}};
    coord_coef search[COORD_COLS] = {{.name = "gc_coord.idle_ns.a"}, {.name = "gc_coord.idle_ns.b"},
                                     {.name = "gc_coord.spread_round_ns"}, {.name = "gc_coord.steal_attempt_ns"}};
    double *xy = malloc(sizeof(double) * 2 * (size_t)s.n);
    if (!xy)
        goto oom;
    const int both[2] = {1, 1};
    double rms_wake, rms_tail, rms_search;
    for (int i = 0; i < s.n; i++) {
        xy[2 * i] = 1;
        xy[2 * i + 1] = s.wake_x[i];
    }
    int fw = lsq(s.n, 2, xy, s.wake_y, both, wake, &rms_wake);
    for (int i = 0; i < s.n; i++)
        xy[2 * i + 1] = s.tail_x[i];
    int ft = lsq(s.n, 2, xy, s.tail_y, both, tail, &rms_tail);
    free(xy);
    int fs = search_fit(s.ns, s.sx, s.sy, max_threads, search, &rms_search);
    if (fw < 0 || ft < 0 || fs < 0) {
        gcs_err_set(err, "gc coordination: the least-squares fits failed (%d, %d and %d samples)", s.n, s.n, s.ns);
        goto done;
    }
    gcs_profile_clear_fit_quality(p, "gc_coord.");
    json_t *fits = json_object();
    gcs_profile_coord c = {0};
    c.wake_a = keep(p, &wake[0], 1, rms_wake, fits);
    c.wake_b = keep(p, &wake[1], 1, rms_wake, fits);
    c.tail_a = keep(p, &tail[0], 1, rms_tail, fits);
    c.tail_b = keep(p, &tail[1], 1, rms_tail, fits);
    c.idle_a = keep(p, &search[0], 1, rms_search, fits);
    c.idle_b = keep(p, &search[1], 1, rms_search, fits);
    c.spread_ns = keep(p, &search[2], 0, rms_search, fits);
    c.attempt_ns = keep(p, &search[3], 0, rms_search, fits);
    /* The attempts column is in entries, and how many entries a search
     * takes depends on the heap, while the time goes on finding a victim,
     * not on the entries (docs/model.md, "Per search"): the ratio lets the
     * model price a count of searches at what these heaps' cost. */
    c.attempts_per_search = s.searches > 0 && s.attempts >= s.searches ? s.attempts / s.searches : 0;
    c.max_threads = max_threads;
    p->coord = c;
    p->has_gc_coord = 1;
    *details = json_pack("{s:s, s:i, s:i, s:i, s:i, s:f, s:f, s:o}", "model",
                         "wake = a + b (P-1); tail = a + b log2 P; sum search = P (idle_a + idle_b log2 P) "
                         "+ P W(R,P) spread_round + attempts x steal_attempt",
                         "max_threads", max_threads, "reps", reps, "samples", s.n, "search_samples", s.ns,
                         "attempts_per_steal", s.steals > 0 ? s.attempts / s.steals : 0.0, "attempts_per_search",
                         c.attempts_per_search, "fits", fits);
    rc = 0;
    goto done;
heap:
    gcs_err_set(err, "gc coordination: heap exhausted building the heaps");
    goto done;
oom:
    gcs_err_set(err, "gc coordination: out of memory");
done:
    for (int i = 0; i < registered; i++)
        gcs_gc_remove_root(&slots[i]);
    free(slots);
    samples_free(&s);
    gcs_gc_shutdown();
    return rc;
}

/* ---- the calibration's step ---------------------------------------------------- */

#define COORD_WORK_QUICK 0.3   /* seconds on the progress series */
#define COORD_WORK_FULL 0.8

double _gcs_calibrate_coord_work(int quick)
{
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? (quick ? COORD_WORK_QUICK : COORD_WORK_FULL) : 0;
}

void _gcs_calibrate_coord_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    json_t *details = NULL;
    gcs_err err = {{0}};
    double w = _gcs_calibrate_coord_work(quick);
    if (w == 0) {
        details = json_pack("{s:s}", "note", "not measured: one CPU");
    } else {
        gcs_progress_step(pr, "gc coordination (wake, search, tail at P = 1..CPUs)", w);
        uint64_t t0 = gcs_now_ns();
        /* optional, as the overlap: a failure keeps the calibration, and
         * the profile says why */
        if (gcs_calibrate_coord(quick, 0, p, &details, &err) == 0)
            json_object_set_new(details, "seconds", json_real((double)(gcs_now_ns() - t0) / 1e9));
        else
            details = json_pack("{s:s, s:s}", "note", "not measured: the step failed", "error", err.msg);
        gcs_progress_done(pr, w);
    }
    json_object_set_new(gcs_profile_calibration(p), "gc_coord", details);
}
