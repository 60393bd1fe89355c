/* stealfit.c -- what a steal, and one more worker, add to the summed busy
 * time: the least-squares fit of gccost.c's steal samples.
 *
 * Each sample is one heap marked by one worker and by P; its busy-time
 * growth is fitted as
 *
 *     growth = (P - 1) x worker_ns + steals x steal_ns
 *
 * with no intercept: one worker adds nothing to itself.  The per-steal
 * cost is kept only where the unconstrained fit's 95% interval for it is
 * clear of 0 (then a negative worker cost is noise, and the steals are
 * refitted alone); otherwise the growth is the workers' (refitted alone,
 * at least 0):
 * on a 2-vCPU guest the growth of the steal heap stays at 11-19 us whether
 * a pair made 1 steal or 21, and a slope of 100 +- 150 ns times the 5 000
 * steals the model simulates on a cube heap is a millisecond of noise.
 * With one P and samples whose steals barely differ (the two regressors
 * nearly proportional) the split is not identifiable and everything goes
 * to the workers.  Pure arithmetic: no collector, no profile. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>

#include "../common/internal.h"
#include "calibrate_internal.h"

/* One regressor through the origin (GSL), its standard error from the
 * residuals: n - 1 degrees of freedom. */
static void fit_one(int n, const double *x, const double *y, double *b, double *se, int *dof)
{
    double cov, sumsq;
    *b = 0;
    *se = NAN;
    *dof = n - 1;
    if (n < 1 || gsl_fit_mul(x, 1, y, 1, (size_t)n, b, &cov, &sumsq) != 0 || !isfinite(*b))
        *b = 0;
    else if (n > 1)
        *se = sqrt(cov);
}

/* A cost's 95% interval, estimate +- t(dof) standard errors, clipped at 0
 * (a cost is never below it); NaN where the error is not estimable. */
static void interval(double v, double se, int dof, double ci[2])
{
    if (!(isfinite(se) && dof > 0)) {
        ci[0] = ci[1] = NAN;
        return;
    }
    double t = gsl_cdf_tdist_Pinv(0.975, dof);
    ci[0] = fmax(0, v - t * se);
    ci[1] = v + t * se;
}

void _gcs_calibrate_steal_fit(int n, const double *extra_workers, const double *steals, const double *growth,
                              gcs_steal_fit *f)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->worker_se = f->steal_se = NAN;
    f->worker_ci[0] = f->worker_ci[1] = f->steal_ci[0] = f->steal_ci[1] = NAN;
    f->note = "no samples (0)";
    if (n < 1)
        return;
    int dof;
    double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
    for (int i = 0; i < n; i++) {
        gcs_assert_internal(extra_workers[i] >= 1 && steals[i] >= 0);
        s11 += extra_workers[i] * extra_workers[i];
        s12 += extra_workers[i] * steals[i];
        s22 += steals[i] * steals[i];
        b1 += extra_workers[i] * growth[i];
        b2 += steals[i] * growth[i];
    }
    double det = s11 * s22 - s12 * s12;
    /* identifiable: the regressors not (nearly) proportional, and a degree of freedom left */
    if (n >= 3 && det > 1e-6 * s11 * s22) {
        double w = (s22 * b1 - s12 * b2) / det, s = (s11 * b2 - s12 * b1) / det, rss = 0;
        for (int i = 0; i < n; i++) {
            double r = growth[i] - w * extra_workers[i] - s * steals[i];
            rss += r * r;
        }
        double var = rss / (n - 2);
        double w_se = sqrt(var * s22 / det), s_se = sqrt(var * s11 / det);
        if (s - gsl_cdf_tdist_Pinv(0.975, n - 2) * s_se > 0) { /* the growth follows the steals */
            if (w >= 0) {
                f->worker_ns = w;
                f->steal_ns = s;
                f->worker_se = w_se;
                f->steal_se = s_se;
                interval(w, w_se, n - 2, f->worker_ci);
                interval(s, s_se, n - 2, f->steal_ci);
                f->note = "measured";
                f->steal_resolved = 1;
                return;
            }
            /* The workers' part below 0 is noise: the steals alone, where
             * they alone still grow the busy time.  Where they do not (the
             * growth itself below 0 -- a slow, noisy run such as a sanitizer
             * build's), neither cost is told from 0. */
            double s1, s1_se;
            fit_one(n, steals, growth, &s1, &s1_se, &dof);
            if (s1 > 0) {
                f->steal_ns = s1;
                f->steal_se = s1_se;
                interval(f->steal_ns, f->steal_se, dof, f->steal_ci);
                f->note = "measured; the worker cost came out negative (0)";
                f->steal_resolved = 1;
                return;
            }
        }
        f->steal_se = s_se;
        interval(0, s_se, n - 2, f->steal_ci);
        f->note = "not told from 0 by the samples (0): the growth is the workers'";
    } else {
        f->note = "not identifiable from the samples (one P, steals nearly alike) (0): the growth is the workers'";
    }
    fit_one(n, extra_workers, growth, &f->worker_ns, &f->worker_se, &dof);
    if (f->worker_ns < 0)
        f->worker_ns = 0;
    interval(f->worker_ns, f->worker_se, dof, f->worker_ci);
}

static void set_ci(json_t *o, const char *key, const double ci[2])
{
    if (isfinite(ci[0]) && isfinite(ci[1]))
        json_object_set_new(o, key, json_pack("[f, f]", ci[0], ci[1]));
}

json_t *_gcs_calibrate_steal_fit_json(const gcs_steal_fit *f)
{
    json_t *o = json_pack("{s:s, s:f, s:f, s:i, s:b, s:s}", "model", "growth = (P - 1) * worker_ns + steals * steal_ns",
                          "worker_ns", f->worker_ns, "steal_ns", f->steal_ns, "samples", f->n, "steal_resolved",
                          f->steal_resolved, "note", f->note);
    /* NaN has no JSON form: an error that could not be estimated is left out */
    if (isfinite(f->worker_se))
        json_object_set_new(o, "worker_se", json_real(f->worker_se));
    if (isfinite(f->steal_se))
        json_object_set_new(o, "steal_se", json_real(f->steal_se));
    set_ci(o, "worker_ci95", f->worker_ci);
    set_ci(o, "steal_ci95", f->steal_ci);
    return o;
}
