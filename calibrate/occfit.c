/* occfit.c -- fitting a memory node's occupancy S_O to loaded-latency
 * measurements, with the open (Endo et al.) and closed (exact MVA) models.
 *
 * M1 is measured separately (idle pointer chase) and held fixed; only S_O is
 * fitted.  The fit minimises relative latency residuals so that points at
 * low and high load weigh alike, whatever their absolute latency.
 *
 * The constraints 0 < S_O <= M1 and, for the open model, S_O * X < 1 at every
 * point are enforced by fitting theta with S_O = upper * logistic(theta):
 * every theta the solver tries is a valid S_O, so the model never divides by
 * a negative (1 - rho) and the residuals are always finite.
 *
 * Data the model cannot explain push theta to an infinity: loaded latencies
 * at or below M1 (no contention, or an M1 measured high) drive S_O to 0,
 * latencies beyond anything S_O <= M1 gives drive it to the upper bound.
 * The logistic then returns whatever the solver stopped at (0, or 5e-207),
 * which looks like a measured value; so the bound the data lean on is
 * recognised (the bound itself fits at least as well as the solver's point)
 * and reported in `bound`, with S_O exactly 0 or exactly the upper bound. */
#include <math.h>
#include <stdlib.h>

#include <stdio.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "../common/internal.h"
#include "gcscale/occfit.h"

#define MAX_ITERATIONS 200
/* Outstanding requests beyond this are a unit mistake, and would make the MVA
 * recursion (one step per customer) slow. */
#define MAX_CUSTOMERS 1000000
/* The open model's bound keeps rho a hair below 1 at the busiest point. */
#define RHO_MAX (1.0 - 1e-9)
/* Starting points tried before the solver runs: a scan over the allowed
 * interval makes the result independent of any single starting guess. */
#define SCAN_POINTS 199
/* A fitted S_O this close to a bound (relative to the upper bound), or
 * fitting no better than the bound itself, is the bound. */
#define BOUND_FRACTION 1e-6

typedef enum fit_model { MODEL_OPEN, MODEL_CLOSED } fit_model;

typedef struct fit_data {
    const gcs_occ_point *pts;
    int n;
    fit_model model;
    double m1_ns, think_ns;
    double upper_ns;        /* S_O = upper_ns * logistic(theta) */
    int max_customers;      /* closed model: MVA runs up to this N */
    double *mva_latency;    /* closed model: R(k) for k = 0..max_customers */
    double *scratch;        /* residuals handed to GSL */
} fit_data;

/* ---- the models -------------------------------------------------------------- */

double gcs_occfit_open_latency(double m1_ns, double s_o_ns, double throughput_per_ns)
{
    /* No finite latency exists past saturation or for invalid inputs; an
     * infinite one is the honest answer and is never NaN. */
    if (!isfinite(m1_ns) || !isfinite(s_o_ns) || !isfinite(throughput_per_ns) || m1_ns < 0 ||
        s_o_ns < 0 || throughput_per_ns < 0)
        return INFINITY;
    double rho = s_o_ns * throughput_per_ns;
    if (rho >= 1)
        return INFINITY;
    return m1_ns + s_o_ns * rho / (1 - rho);
}

/* Exact MVA of one queueing centre (service s) plus a pure delay (m1 - s),
 * with think time z between requests, for populations 1..customers.  Returns
 * X(customers) and sets *last_latency = R(customers); when curve is not NULL
 * it also receives curve[k] = R(k) for every k (curve[0] = 0).  The delay is
 * what makes an idle request cost m1 rather than s. */
static double mva(double m1_ns, double s_o_ns, double think_ns, int customers, double *curve,
                  double *last_latency)
{
    gcs_assert_internal(customers >= 0 && s_o_ns >= 0 && think_ns >= 0);
    double delay = m1_ns > s_o_ns ? m1_ns - s_o_ns : 0;
    double queue = 0, throughput = 0, r = 0;
    if (curve)
        curve[0] = 0;
    for (int k = 1; k <= customers; k++) {
        double residence = s_o_ns * (1 + queue); /* arrival theorem: sees Q(k-1) */
        r = delay + residence;
        throughput = k / (think_ns + r);
        queue = throughput * residence;          /* Little's law at the centre */
        gcs_assert_internal(queue <= k + 1e-9);  /* never more waiting than customers */
        if (curve)
            curve[k] = r;
    }
    *last_latency = r;
    return throughput;
}

double gcs_occfit_closed_mva(double m1_ns, double s_o_ns, double think_ns, int customers,
                             double *latency_ns)
{
    if (latency_ns)
        *latency_ns = INFINITY;
    if (!isfinite(m1_ns) || !isfinite(s_o_ns) || !isfinite(think_ns) || m1_ns < 0 ||
        s_o_ns < 0 || think_ns < 0 || customers < 1 || customers > MAX_CUSTOMERS ||
        m1_ns + think_ns <= 0)
        return 0;
    double r;
    double throughput = mva(m1_ns, s_o_ns, think_ns, customers, NULL, &r);
    if (latency_ns)
        *latency_ns = r;
    return throughput;
}

/* ---- the fit ----------------------------------------------------------------- */

static double s_o_of_theta(const fit_data *d, double theta)
{
    return d->upper_ns / (1 + exp(-theta));
}

static double model_latency(fit_data *d, int i, double s_o)
{
    const gcs_occ_point *pt = &d->pts[i];
    if (d->model == MODEL_OPEN) {
        double rho = s_o * pt->throughput_per_ns;
        if (rho > RHO_MAX) /* only through rounding of the logistic map */
            rho = RHO_MAX;
        return d->m1_ns + s_o * rho / (1 - rho);
    }
    /* Fractional N (an average concurrency) interpolates between the two
     * integer populations around it. */
    double n = pt->outstanding;
    int lo = (int)floor(n);
    double frac = n - lo;
    double r = d->mva_latency[lo];
    if (frac > 0 && lo < d->max_customers)
        r += frac * (d->mva_latency[lo + 1] - r);
    return r;
}

static void compute_residuals_at(fit_data *d, double s_o, double *res)
{
    if (d->model == MODEL_CLOSED) {
        double last;
        mva(d->m1_ns, s_o, d->think_ns, d->max_customers, d->mva_latency, &last);
    }
    for (int i = 0; i < d->n; i++)
        res[i] = (model_latency(d, i, s_o) - d->pts[i].latency_ns) / d->pts[i].latency_ns;
}

static void compute_residuals(fit_data *d, double theta, double *res)
{
    compute_residuals_at(d, s_o_of_theta(d, theta), res);
}

static double cost_at_s_o(fit_data *d, double s_o, double *res)
{
    compute_residuals_at(d, s_o, res);
    double sum = 0;
    for (int i = 0; i < d->n; i++)
        sum += res[i] * res[i];
    return sum;
}

static double cost_at(fit_data *d, double theta, double *res)
{
    return cost_at_s_o(d, s_o_of_theta(d, theta), res);
}

/* The uncertainty of an interior fit: GSL's covariance of theta from the
 * Jacobian at the solution, scaled by the residual variance cost / (n - 1)
 * (the residuals are relative, so is their variance).  The interval is
 * taken on theta and mapped through the logistic: it stays in (0, upper)
 * where a symmetric one around S_O could cross 0.  Left NaN when the
 * Jacobian is singular or there are no degrees of freedom. */
static void uncertainty(fit_data *d, gsl_multifit_nlinear_workspace *w, double theta, double cost,
                        gcs_occfit_result *out)
{
    out->s_o_stderr_ns = out->s_o_ci95_lo_ns = out->s_o_ci95_hi_ns = NAN;
    if (d->n < 2)
        return;
    gsl_matrix *covar = gsl_matrix_alloc(1, 1);
    if (!covar)
        return;
    double var_theta = NAN;
    if (gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, covar) == GSL_SUCCESS)
        var_theta = gsl_matrix_get(covar, 0, 0) * cost / (d->n - 1);
    gsl_matrix_free(covar);
    if (!isfinite(var_theta) || var_theta < 0)
        return;
    double se_theta = sqrt(var_theta);
    double l = 1 / (1 + exp(-theta));
    double slope = d->upper_ns * l * (1 - l); /* dS_O / dtheta */
    double t = gsl_cdf_tdist_Pinv(0.975, d->n - 1);
    out->s_o_stderr_ns = slope * se_theta;
    out->s_o_ci95_lo_ns = s_o_of_theta(d, theta - t * se_theta);
    out->s_o_ci95_hi_ns = s_o_of_theta(d, theta + t * se_theta);
}

static int gsl_residuals(const gsl_vector *x, void *params, gsl_vector *f)
{
    fit_data *d = params;
    compute_residuals(d, gsl_vector_get(x, 0), d->scratch);
    /* Residuals are finite by construction; a non-finite one must stop the
     * solver rather than steer it. */
    for (int i = 0; i < d->n; i++) {
        if (!isfinite(d->scratch[i]))
            return GSL_EDOM;
        gsl_vector_set(f, (size_t)i, d->scratch[i]);
    }
    return GSL_SUCCESS;
}

static const char *model_name(fit_model m)
{
    return m == MODEL_OPEN ? "open model" : "closed model";
}

static int check_inputs(const gcs_occ_point *pts, int n, double m1_ns, fit_model model,
                        gcs_err *err)
{
    const char *name = model_name(model);
    if (!pts || n < 2) {
        gcs_err_set(err, "occupancy fit (%s): need at least 2 load points, got %d", name,
                    pts ? n : 0);
        return -1;
    }
    if (!isfinite(m1_ns) || m1_ns <= 0) {
        gcs_err_set(err, "occupancy fit (%s): idle latency M1 must be positive and finite, got %g",
                    name, m1_ns);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const gcs_occ_point *pt = &pts[i];
        if (!isfinite(pt->latency_ns) || pt->latency_ns <= 0) {
            gcs_err_set(err, "occupancy fit (%s): point %d: latency must be positive and finite, "
                             "got %g", name, i, pt->latency_ns);
            return -1;
        }
        if (model == MODEL_OPEN &&
            (!isfinite(pt->throughput_per_ns) || pt->throughput_per_ns <= 0)) {
            gcs_err_set(err, "occupancy fit (%s): point %d: throughput must be positive and "
                             "finite, got %g", name, i, pt->throughput_per_ns);
            return -1;
        }
        if (model == MODEL_CLOSED &&
            (!isfinite(pt->outstanding) || pt->outstanding < 1 || pt->outstanding > MAX_CUSTOMERS)) {
            gcs_err_set(err, "occupancy fit (%s): point %d: outstanding requests must be between 1 "
                             "and %d, got %g", name, i, MAX_CUSTOMERS, pt->outstanding);
            return -1;
        }
    }
    return 0;
}

/* Runs GSL's trust-region solver on theta from the best point of a scan. */
static int fit(fit_data *d, gcs_occfit_result *out, gcs_err *err)
{
    /* check_inputs has run: at least one point, every one positive */
    gcs_assert_internal(d->n >= 1 && d->m1_ns > 0);
    const char *name = model_name(d->model);
    int rc = -1;
    double *res = malloc((size_t)d->n * sizeof *res);
    d->scratch = malloc((size_t)d->n * sizeof *d->scratch);
    gsl_vector *x = gsl_vector_alloc(1);
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, (size_t)d->n, 1);
    if (!res || !d->scratch || !x || !w) {
        gcs_err_set(err, "occupancy fit (%s): out of memory", name);
        goto done;
    }

    double best_theta = 0, best_cost = INFINITY;
    for (int k = 1; k <= SCAN_POINTS; k++) {
        double f = (double)k / (SCAN_POINTS + 1);
        double theta = log(f / (1 - f));
        double c = cost_at(d, theta, res);
        if (c < best_cost) {
            best_cost = c;
            best_theta = theta;
        }
    }

    gsl_multifit_nlinear_fdf fdf = {
        .f = gsl_residuals, .df = NULL, .fvv = NULL, .n = (size_t)d->n, .p = 1, .params = d,
    };
    gsl_vector_set(x, 0, best_theta);
    int info = 0;
    int status = gsl_multifit_nlinear_init(x, &fdf, w);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(MAX_ITERATIONS, 1e-10, 1e-10, 0, NULL, NULL, &info, w);
    double theta = gsl_vector_get(gsl_multifit_nlinear_position(w), 0);

    if (status == GSL_EMAXITER && info == GSL_ENOPROG) {
        /* The driver reports "no progress on the first step" this way: the
         * scan's point may already be the minimum (noise-free data).  Accept
         * it only if it is a local minimum of the cost. */
        double c0 = cost_at(d, theta, res), h = 1e-4;
        double tol = 1e-12 * (c0 > 1 ? c0 : 1);
        if (cost_at(d, theta - h, res) >= c0 - tol && cost_at(d, theta + h, res) >= c0 - tol)
            status = GSL_SUCCESS;
    }
    if (status != GSL_SUCCESS) {
        gcs_err_set(err, "occupancy fit (%s): did not converge after %zu iterations (%s)", name,
                    gsl_multifit_nlinear_niter(w), gsl_strerror(status));
        goto done;
    }

    double cost = cost_at(d, theta, res), s_o = s_o_of_theta(d, theta);
    if (!isfinite(cost) || !isfinite(s_o)) {
        gcs_err_set(err, "occupancy fit (%s): the fit produced a non-finite result", name);
        goto done;
    }
    /* At a bound when the solver ended next to it, or the bound fits as well
     * (the cost is flat or still falling towards it).  The open model's
     * upper bound puts the busiest point at rho = RHO_MAX, whose latency is
     * enormous, so only a fit that really sits there finds it as good. */
    int bound = 0;
    double tol = 1e-9 * cost + 1e-15;
    if (s_o <= BOUND_FRACTION * d->upper_ns || cost_at_s_o(d, 0, res) <= cost + tol) {
        bound = -1;
        s_o = 0;
    } else if (s_o >= (1 - BOUND_FRACTION) * d->upper_ns ||
               cost_at_s_o(d, d->upper_ns, res) <= cost + tol) {
        bound = 1;
        s_o = d->upper_ns;
    }
    if (bound) {
        cost = cost_at_s_o(d, s_o, res);
        out->s_o_stderr_ns = out->s_o_ci95_lo_ns = out->s_o_ci95_hi_ns = NAN;
    } else {
        /* the Jacobian GSL holds is the solver's last; evaluate it at theta */
        gsl_vector_set(x, 0, theta);
        if (gsl_multifit_nlinear_init(x, &fdf, w) == GSL_SUCCESS)
            uncertainty(d, w, theta, cost, out);
        else
            out->s_o_stderr_ns = out->s_o_ci95_lo_ns = out->s_o_ci95_hi_ns = NAN;
    }
    out->m1_ns = d->m1_ns;
    out->s_o_ns = s_o;
    out->s_o_max_ns = d->upper_ns;
    out->bound = bound;
    out->rms_rel_residual = sqrt(cost / d->n);
    out->npoints = d->n;
    out->iterations = (int)gsl_multifit_nlinear_niter(w);
    rc = 0;
done:
    if (w)
        gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    free(d->scratch);
    free(res);
    return rc;
}

int gcs_occfit_reliable(const gcs_occfit_result *r, char *reason, size_t len)
{
    if (!isfinite(r->s_o_ns) || r->s_o_ns < 0) {
        snprintf(reason, len, "fit gave no finite S_O at %d load points", r->npoints);
        return 0;
    }
    if (r->bound < 0 || r->s_o_ns == 0) {
        snprintf(reason, len, "fit found no contention: %.1f ns at %d load points (rms relative "
                 "residual %.2f)", r->s_o_ns, r->npoints, r->rms_rel_residual);
        return 0;
    }
    if (r->bound > 0 || r->s_o_ns >= r->m1_ns) {
        snprintf(reason, len, "fit sits at its upper bound: %.1f ns (M1 %.1f ns) at %d load "
                 "points, the latencies rise more than the model explains", r->s_o_ns, r->m1_ns,
                 r->npoints);
        return 0;
    }
    if (!(r->rms_rel_residual <= GCS_OCCFIT_POOR_FIT_RMS)) {
        snprintf(reason, len, "the model does not describe the load points: rms relative residual "
                 "%.2f at %d load points, S_O %.2f ns", r->rms_rel_residual, r->npoints, r->s_o_ns);
        return 0;
    }
    if (!(r->s_o_stderr_ns < r->s_o_ns)) {
        snprintf(reason, len, "the data do not determine it: %.2f ns with standard error %.2g ns "
                 "at %d load points", r->s_o_ns, r->s_o_stderr_ns, r->npoints);
        return 0;
    }
    if (len)
        reason[0] = '\0';
    return 1;
}

/* GSL's default error handler aborts the process; a library must not, so it
 * is switched off for the duration of a fit and the caller's handler is put
 * back afterwards.  The handler is process-wide state: run fits from one
 * thread at a time (calibrate runs them after its measurements). */
static int run_fit(fit_data *d, gcs_occfit_result *out, gcs_err *err)
{
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    int rc = fit(d, out, err);
    gsl_set_error_handler(previous);
    return rc;
}

int gcs_occfit_open(const gcs_occ_point *pts, int n, double m1_ns, gcs_occfit_result *out,
                    gcs_err *err)
{
    if (check_inputs(pts, n, m1_ns, MODEL_OPEN, err) < 0)
        return -1;
    double x_max = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].throughput_per_ns > x_max)
            x_max = pts[i].throughput_per_ns;
    fit_data d = {.pts = pts, .n = n, .model = MODEL_OPEN, .m1_ns = m1_ns};
    /* S_O <= M1, and S_O * X < 1 at the busiest point (and so at all). */
    d.upper_ns = fmin(m1_ns, RHO_MAX / x_max);
    return run_fit(&d, out, err);
}

int gcs_occfit_closed(const gcs_occ_point *pts, int n, double m1_ns, double think_ns,
                      gcs_occfit_result *out, gcs_err *err)
{
    if (!isfinite(think_ns) || think_ns < 0) {
        gcs_err_set(err, "occupancy fit (closed model): think time must be finite and >= 0, got %g",
                    think_ns);
        return -1;
    }
    if (check_inputs(pts, n, m1_ns, MODEL_CLOSED, err) < 0)
        return -1;
    double n_max = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].outstanding > n_max)
            n_max = pts[i].outstanding;
    fit_data d = {.pts = pts, .n = n, .model = MODEL_CLOSED, .m1_ns = m1_ns,
                  .think_ns = think_ns, .upper_ns = m1_ns, .max_customers = (int)ceil(n_max)};
    /* The closed network never saturates: only 0 < S_O <= M1 applies. */
    d.mva_latency = malloc(((size_t)d.max_customers + 1) * sizeof *d.mva_latency);
    if (!d.mva_latency) {
        gcs_err_set(err, "occupancy fit (closed model): out of memory");
        return -1;
    }
    int rc = run_fit(&d, out, err);
    free(d.mva_latency);
    return rc;
}
