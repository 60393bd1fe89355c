/* costfit.c -- the marker's cost fit and how far to trust it.
 *
 * gccost.c measures the busy time T1 of the collector's mark on heaps of
 * known objects and pointers; this file fits
 *     T1 = c0 + c_obj * objects + c_ptr * pointers
 * and says what the fit is worth.  Rows are weighted by 1/T1 (the fit
 * minimises relative errors, so small heaps count as much as large ones):
 * the weighted system is X_w c = 1 with row i = (1, objects_i, pointers_i) /
 * T1_i.
 *
 * Two figures judge it:
 *  - the condition number of X_w with its columns scaled to unit length (the
 *    ratio of its largest to smallest singular value).  Scaling first makes
 *    it a property of the heaps chosen, not of the units: it is large when
 *    two columns are nearly proportional, as objects and pointers are when
 *    every heap has the same pointer density, and then no amount of
 *    repetition separates c_obj from c_ptr;
 *  - each coefficient's standard error from the fit's covariance
 *    sigma^2 (X_w' X_w)^-1 (sigma^2 = the weighted residual sum of squares
 *    over n - 3 degrees of freedom), and its 95% interval with Student's t.
 *    A well-conditioned design can still be swamped by noise: the interval
 *    says so, the condition number does not.
 * The correlation of the c_obj and c_ptr estimates is reported too: near -1
 * means the data fix their weighted sum (a tree node's cost) but not the
 * split, the failure this file exists to catch (issue #27). */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>

#include "../common/internal.h"
#include "calibrate_internal.h"

/* Singular values of X_w with unit-length columns, largest over smallest.
 * A zero column or a zero singular value (exactly proportional columns) is
 * GCS_COST_COND_SINGULAR, not infinity: the figure goes into JSON. */
static double design_condition(const gsl_matrix *X)
{
    size_t n = X->size1, p = X->size2;
    gsl_matrix *A = gsl_matrix_alloc(n, p), *V = gsl_matrix_alloc(p, p);
    gsl_vector *S = gsl_vector_alloc(p), *work = gsl_vector_alloc(p);
    double cond = GCS_COST_COND_SINGULAR;
    if (!A || !V || !S || !work)
        goto done;
    gsl_matrix_memcpy(A, X);
    for (size_t j = 0; j < p; j++) {
        gsl_vector_view col = gsl_matrix_column(A, j);
        double norm = gsl_blas_dnrm2(&col.vector);
        if (!(norm > 0))
            goto done;
        gsl_vector_scale(&col.vector, 1.0 / norm);
    }
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    int status = gsl_linalg_SV_decomp(A, V, S, work); /* S comes out descending */
    gsl_set_error_handler(previous);
    if (status != GSL_SUCCESS)
        goto done;
    double smax = gsl_vector_get(S, 0), smin = gsl_vector_get(S, p - 1);
    if (smin > smax / GCS_COST_COND_SINGULAR)
        cond = smax / smin;
done:
    gsl_matrix_free(A);
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(work);
    return cond;
}

int _gcs_calibrate_cost_fit(int n, const double *objects, const double *pointers, const double *t1_ns,
                            gcs_cost_fit *fit, gcs_err *err)
{
    /* three unknowns need three points; every point's T1 was measured > 0 */
    gcs_assert_internal(n >= 3);
    for (int i = 0; i < n; i++)
        gcs_assert_internal(t1_ns[i] > 0);
    *fit = (gcs_cost_fit){.n = n, .dof = n - 3};
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, 3);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *c = gsl_vector_alloc(3);
    gsl_matrix *cov = gsl_matrix_alloc(3, 3);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)n, 3);
    int rc = -1;
    if (!X || !y || !c || !cov || !w) {
        gcs_err_set(err, "gc costs: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        double s = 1.0 / t1_ns[i];
        gsl_matrix_set(X, (size_t)i, 0, s);
        gsl_matrix_set(X, (size_t)i, 1, objects[i] * s);
        gsl_matrix_set(X, (size_t)i, 2, pointers[i] * s);
        gsl_vector_set(y, (size_t)i, 1.0);
    }
    double chisq;
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    int status = gsl_multifit_linear(X, y, c, cov, &chisq, w);
    gsl_set_error_handler(previous);
    if (status != GSL_SUCCESS) {
        gcs_err_set(err, "gc costs: least squares failed: %s", gsl_strerror(status));
        goto done;
    }
    fit->rms_rel = sqrt(chisq / n);
    fit->cond = design_condition(X);
    /* gsl_multifit_linear's cov is already sigma^2 (X'X)^-1 with sigma^2 =
     * chisq / (n - rank); with no degree of freedom left there is no
     * residual to estimate sigma from, and no interval. */
    double t = fit->dof > 0 ? gsl_cdf_tdist_Pinv(0.975, fit->dof) : INFINITY;
    for (int k = 0; k < 3; k++) {
        fit->coef[k] = gsl_vector_get(c, (size_t)k);
        double var = gsl_matrix_get(cov, (size_t)k, (size_t)k);
        fit->se[k] = fit->dof > 0 && var >= 0 ? sqrt(var) : INFINITY;
        fit->ci95[k][0] = fit->coef[k] - t * fit->se[k];
        fit->ci95[k][1] = fit->coef[k] + t * fit->se[k];
    }
    double v1 = gsl_matrix_get(cov, 1, 1), v2 = gsl_matrix_get(cov, 2, 2);
    fit->corr_object_pointer = v1 > 0 && v2 > 0 ? gsl_matrix_get(cov, 1, 2) / sqrt(v1 * v2) : NAN;
    rc = 0;
done:
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(c);
    gsl_matrix_free(cov);
    if (w)
        gsl_multifit_linear_free(w);
    return rc;
}

int _gcs_calibrate_cost_fit_physical(const gcs_cost_fit *fit)
{
    return fit->coef[1] > 0 && fit->coef[2] > 0;
}

const char *_gcs_calibrate_cost_fit_problem(const gcs_cost_fit *fit, char *buf, size_t len)
{
    static const char *const name[3] = {"fixed", "object", "pointer"};
    if (!_gcs_calibrate_cost_fit_physical(fit)) {
        snprintf(buf, len, "a cost is not positive (object %.3g ns, pointer %.3g ns)", fit->coef[1],
                 fit->coef[2]);
        return buf;
    }
    if (fit->cond > GCS_COST_COND_MAX) {
        snprintf(buf, len,
                 "the heaps do not separate the object and pointer costs (condition number %.3g > %g)",
                 fit->cond, (double)GCS_COST_COND_MAX);
        return buf;
    }
    /* The issue this guards against: a tree node's cost (one object, one
     * pointer) well determined, its split not.  An interval reaching 0 is
     * no fault in itself: where the per-object cost is a fraction of a ns
     * (0.2-0.4 on the development VM) it always does, and a tenth of a ns
     * either way prices nothing. */
    double node = fit->coef[1] + fit->coef[2];
    for (int k = 1; k < 3; k++) {
        double half = (fit->ci95[k][1] - fit->ci95[k][0]) / 2;
        if (!(half <= GCS_COST_CI_MAX_REL * node)) {
            snprintf(buf, len,
                     "the %s cost's 95%% interval [%.3g, %.3g] ns is wider than +-%.0f%% of a tree "
                     "node's cost (%.3g ns)",
                     name[k], fit->ci95[k][0], fit->ci95[k][1], 100 * GCS_COST_CI_MAX_REL, node);
            return buf;
        }
    }
    if (fit->rms_rel > GCS_COST_RMS_MAX) {
        snprintf(buf, len, "the fit misses its points by %.0f%% rms (over %.0f%%)", 100 * fit->rms_rel,
                 100 * GCS_COST_RMS_MAX);
        return buf;
    }
    return NULL;
}

/* A number for JSON: jansson has no infinity or NaN. */
static json_t *finite_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *_gcs_calibrate_cost_fit_uncertainty(const gcs_cost_fit *fit)
{
    static const char *const key[3] = {"fixed", "gc_cost_ns.object", "gc_cost_ns.pointer"};
    json_t *out = json_object();
    for (int k = 0; k < 3; k++)
        json_object_set_new(out, key[k],
                            json_pack("{s:o, s:[o, o], s:f, s:i}", "stderr", finite_or_null(fit->se[k]),
                                      "ci95", finite_or_null(fit->ci95[k][0]),
                                      finite_or_null(fit->ci95[k][1]), "residual_rms_rel", fit->rms_rel,
                                      "n", fit->n));
    return out;
}
