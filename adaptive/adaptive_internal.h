/* adaptive_internal.h -- what the adaptive policy's files share (not
 * installed; prefix _gcs_adaptive_).
 *
 *   policy.c      the policy's life: options, creation (checks, warm-up,
 *                 the decision thread), destruction, the pause's entry;
 *   estimate.c    the model's inputs from a collection's statistics;
 *   correct.c     the corrections from measurements: the history per P,
 *                 the corrected mark and sweep at a P;
 *   decide.c      the decision: curve, objective, hysteresis, cap,
 *                 exploration, fallbacks; in the pause within the cost
 *                 budget, or on the decision thread;
 *   background.c  the decision thread: the pause hands it the statistics
 *                 and takes the decision it made from the ones before
 *                 (docs/adaptive.md, "Cost").
 *
 * Fenced by GCS_ADAPTIVE_POLICY_FILES, which policy.c, estimate.c,
 * correct.c and decide.c define before they include this header: the
 * policy's state, which those four files share, under short names that no
 * other reader (background.c, a test) should meet, and the functions one
 * of them calls in another, under the file that defines them, their
 * comments at their definitions.
 */
#ifndef GCSCALE_ADAPTIVE_INTERNAL_H
#define GCSCALE_ADAPTIVE_INTERNAL_H

#include <stdint.h>

#include "gcscale/adaptive.h"
#include "gcscale/gc.h"

/* A decision on state from prev for a pool of max: the P, the record, and
 * in *settled the P without exploration (what to keep when no newer
 * decision comes). */
typedef int (*_gcs_adaptive_decide_fn)(void *state, const gcs_gc_stats *prev, int max, gcs_gc_decision *out,
                                       int *settled);

typedef struct _gcs_adaptive_bg _gcs_adaptive_bg;

/* Starts the thread, at the lowest scheduling priority (SCHED_IDLE), which
 * from then on owns state; NULL with err set when it cannot start. */
_gcs_adaptive_bg *_gcs_adaptive_bg_start(_gcs_adaptive_decide_fn decide, void *state, gcs_err *err);
/* Stops and joins the thread, frees everything (not state). */
void _gcs_adaptive_bg_stop(_gcs_adaptive_bg *bg);
/* In the pause, never waiting nor waking the thread (which finds the
 * statistics on its timer): hands prev over (copied: the fields a
 * decision reads) for the thread to decide on, and takes the newest
 * decision not yet taken.  1: taken (*p and out's policy part); 0: none
 * new (*settled the last decision's P without exploration, 0 before any);
 * -1: the thread holds the lock (nothing handed over or taken). */
int _gcs_adaptive_bg_exchange(_gcs_adaptive_bg *bg, const gcs_gc_stats *prev, int max, int *p, int *settled,
                              gcs_gc_decision *out);
/* Waits (blocking: for tests, never in a pause) until every statistics
 * handed over so far is decided on, at most timeout_ms; 0 done, -1 timed
 * out. */
int _gcs_adaptive_bg_wait_idle(_gcs_adaptive_bg *bg, int timeout_ms);

/* Copies the fields of a collection's statistics that a decision reads (and
 * its start time, the thread's timer). */
void _gcs_adaptive_stats_copy(gcs_gc_stats *dst, const gcs_gc_stats *src);

/* _gcs_adaptive_bg_wait_idle for a policy state of gcs_adaptive_policy_new
 * (policy.c); 0 at once when it decides in the pause. */
int _gcs_adaptive_wait_background(void *policy_state, int timeout_ms);

/* What the budget expects the next decision in the pause to cost, ns, for a
 * pool of max_threads: one on the last curve (*decide_ns) and one with a new
 * curve (*new_curve_ns, always the larger).  The cost estimates come from
 * measured decisions, so a test that wants one outcome of the budget sets
 * the pause from these rather than from what this machine happens to take. */
void _gcs_adaptive_expected_costs(void *policy_state, int max_threads, double *decide_ns, double *new_curve_ns);

/* ---- private: the policy's state, shared by its four files ---------------------------- */

#ifdef GCS_ADAPTIVE_POLICY_FILES

/* A correction at P is the median, by the time it gives, of the last
 * HISTORY measurements there (the mean of two): one collection the host
 * preempted (13 ms instead of 0.4) must not flip the choice, and neither
 * may one that ended before the second worker woke (a chain at P = 2
 * measured 0.46 ms once and 17-36 ms usually).  The decision's own cost is
 * kept the same way. */
#define HISTORY 3

/* What a decision is expected to cost: COST_MARGIN x the median of the last
 * HISTORY measured in pauses.  Before any, COLD_FACTOR x what the same kind
 * of decision cost warm at creation: a decision right after a mark runs
 * from cold caches (docs/adaptive.md, "Cost"). */
#define COST_MARGIN 2.0
#define COLD_FACTOR 8.0

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

/* The costs' bookkeeping serves policy.c (the exchange with the decision
 * thread) and decide.c (the decisions); static inline, as it was within one
 * file, so that the pause's code is what it was. */

/* Before any decision is measured, its HISTORY entries are the initial
 * guess: one decision that a preempted CPU made slow then cannot stop the
 * next ones (the median needs two). */
static inline void _gcs_adaptive_cost_init(costs *c, double initial)
{
    for (int i = 0; i < HISTORY; i++)
        c->ns[i] = initial;
    c->n = HISTORY;
}

static inline void _gcs_adaptive_cost_push(costs *c, double ns)
{
    c->ns[c->n % HISTORY] = ns;
    c->n = c->n < 1000000 ? c->n + 1 : HISTORY + (c->n + 1) % HISTORY;
}

/* What n units of this kind of decision are expected to cost: COST_MARGIN x
 * the median of the last HISTORY measured (_gcs_adaptive_cost_init's
 * guesses until measurements replace them). */
static inline double _gcs_adaptive_cost_expected(const costs *c, int n)
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

/* ---- estimate.c ------------------------------------------------------------------------ */

int _gcs_adaptive_estimate(const gcs_gc_stats *prev, const gcs_profile *prof, double span_fraction_hint, int line,
                           double cap, gcs_adaptive_estimate *est, gcs_err *err);

/* ---- correct.c ------------------------------------------------------------------------- */

void _gcs_adaptive_correct(adaptive_state *s, const gcs_gc_stats *prev, int max, double t1);
double _gcs_adaptive_mark_at(const adaptive_state *s, int p, int max, double scale, int carry_model, double *k_out,
                             double *d_out);
double _gcs_adaptive_sweep_at(const adaptive_state *s, int p, int max, double pages);

/* ---- decide.c -------------------------------------------------------------------------- */

int _gcs_adaptive_decide(adaptive_state *s, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out);
int _gcs_adaptive_no_decision(const adaptive_state *s, const gcs_gc_stats *prev, int max_threads, int keep,
                              gcs_gc_decision *out);

#endif /* GCS_ADAPTIVE_POLICY_FILES */

#endif
