/* correct.c -- the corrections from measurements: each collection's
 * measured mark and sweep folded into a history per P
 * (_gcs_adaptive_correct), and the corrected mark and sweep at a P read
 * from it (_gcs_adaptive_mark_at, _gcs_adaptive_sweep_at).  Apart from the
 * decision because it is the one place where measurements become times at
 * P: the decision asks for those times (it reads the history itself only
 * for the measurements' spread, measured_noise).
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

#include "../common/internal.h"
#define GCS_ADAPTIVE_POLICY_FILES
#include "adaptive_internal.h"
#include "gcscale/adaptive.h"

/* The busy factor is kept in [1/50, 50]: a measurement outside says the
 * collection was disturbed (a descheduled worker), not the model. */
#define BUSY_MIN 0.02
#define BUSY_MAX 50.0

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
    int carry_model; /* mark at an unmeasured P = 1: keep the model's inflation (lookup) */
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
 * best guess there; 0 for P = 1); else (a0, 0).
 *
 * The mark at P = 1 before it has run is the exception: a busy factor
 * carried down from q >= 2 keeps the model's work inflation between q and
 * 1 -- its extra misses, the least reliable term of the base model the
 * policy runs (N_S L at full latency; docs/model.md) -- so that a heap
 * measured with both workers busy at q could look faster on one worker than
 * the busy time it measured.  So P = 1's busy time is taken as the busy
 * time measured at q, summed over its workers (no inflation assumed, the
 * most the measurements say), unless carry_model asks for the model's: the
 * decision chooses on the first and explores P = 1 on the second
 * (docs/adaptive.md, "Correction from measurements"). */
static void lookup(const adaptive_state *s, const corr_kind *c, int p, int max, double *a, double *b)
{
    *a = c->a0;
    *b = 0;
    if (hist_pick(s, c, p, max, a, b))
        return;
    int have_a = 0, have_b = p == 1, qa = 0;
    for (int dist = 1; dist < max && !(have_a && have_b); dist++)
        for (int q = p - dist; q <= p + dist; q += 2 * dist) {
            double aq, bq;
            if (q < 1 || q > max || !hist_pick(s, c, q, max, &aq, &bq))
                continue;
            if (!have_a) {
                *a = aq;
                qa = q;
                have_a = 1;
            }
            if (!have_b && q >= 2) {
                *b = bq;
                have_b = 1;
            }
        }
    double t1, f1, tq, fq;
    if (!c->sweep && !c->carry_model && p == 1 && qa >= 2 && model_at(s, 1, max, &t1, &f1) &&
        model_at(s, qa, max, &tq, &fq) && t1 * (1 - f1) > 0) {
        double serial = *a * qa * tq * (1 - fq) / (t1 * (1 - f1));
        if (isfinite(serial))
            *a = fmin(BUSY_MAX, fmax(BUSY_MIN, serial));
    }
}

/* T'(P), the corrected mark (k and d there, if asked); NaN where the model
 * has no value. */
double _gcs_adaptive_mark_at(const adaptive_state *s, int p, int max, double scale, int carry_model, double *k_out,
                             double *d_out)
{
    double t, f, k, d;
    if (!model_at(s, p, max, &t, &f))
        return NAN;
    corr_kind c = {.h = s->mark, .sweep = 0, .scale = scale, .a0 = 1, .carry_model = carry_model};
    lookup(s, &c, p, max, &k, &d);
    if (k_out)
        *k_out = k;
    if (d_out)
        *d_out = d;
    return scale * t * (k * (1 - f) + f) + d;
}

/* S(P), the sweep of `pages` pages at P from its measurements; 0 before
 * any (the mark alone decides). */
double _gcs_adaptive_sweep_at(const adaptive_state *s, int p, int max, double pages)
{
    double w, o;
    corr_kind c = {.h = s->sweep, .sweep = 1, .pages = pages, .a0 = 0};
    lookup(s, &c, p, max, &w, &o);
    return fmax(0.0, w * pages / p + o);
}

/* Folds the previous collection's measurements at the P it ran into the
 * mark's and the sweep's history there; t1 is the T1 estimate of its heap. */
void _gcs_adaptive_correct(adaptive_state *s, const gcs_gc_stats *prev, int max, double t1)
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
