/* occfit.h -- fitting memory-node occupancy from loaded measurements
 * (prefix gcs_occfit_).
 *
 * A memory node is modelled as one server with service time S_O per request
 * plus a pure delay, so that an idle request costs M1.  Two models:
 *   open:   R = M1 + S_O * rho / (1 - rho),  rho = S_O * X          (Endo et al.)
 *   closed: exact MVA with N customers, think time Z, one queueing centre
 *           of service S_O and a delay of M1 - S_O; predicts X(N), R(N).
 * X is the node's throughput (requests per ns) and R the mean latency of one
 * request at the load point.  Both fits use GSL's nonlinear least squares on
 * relative latency residuals.  Calls common.h, microbench.h (the load
 * points' type) and GSL.
 */
#ifndef GCSCALE_OCCFIT_H
#define GCSCALE_OCCFIT_H

#include "gcscale/common.h"
#include "gcscale/microbench.h" /* gcs_occ_point, the load points it fits */

typedef struct gcs_occfit_result {
    double m1_ns;             /* idle latency used (fixed) */
    double s_o_ns;            /* fitted service time per request */
    double s_o_max_ns;        /* its upper bound: M1, or (open) 1/X_max if less */
    /* 0: S_O lies inside (0, s_o_max_ns).  -1: the data lean on the lower
     * bound and S_O is exactly 0: the latencies do not rise above M1 (no
     * contention was seen, or M1 was measured high), so 0 is not a measured
     * service time.  +1: S_O is exactly s_o_max_ns: the latencies rise more
     * than any S_O the model allows explains.  A bounded fit's S_O is a
     * limit, not a measurement; its rms_rel_residual says how badly the
     * model misses the points. */
    int bound;
    double rms_rel_residual;  /* sqrt(mean(((R_model - R)/R)^2)) */
    int npoints;
    int iterations;
    /* The fit's uncertainty, from the covariance GSL computes from the
     * Jacobian at the solution (gsl_multifit_nlinear_covar) scaled by the
     * residual variance: the standard error of S_O and its 95% confidence
     * interval (Student's t with npoints - 1 degrees of freedom).  The
     * interval is taken on the fitted parameter and mapped back, so it
     * stays inside (0, s_o_max_ns).  NaN where there is none: a fit at a
     * bound (the Jacobian vanishes there) or a singular Jacobian. */
    double s_o_stderr_ns;
    double s_o_ci95_lo_ns, s_o_ci95_hi_ns;
} gcs_occfit_result;

/* m1_ns is the idle latency measured separately; think_ns the compute time
 * between two requests of one chain (0 for a pure chase). */
GCS_API int gcs_occfit_open(const gcs_occ_point *pts, int n, double m1_ns,
                    gcs_occfit_result *out, gcs_err *err);
GCS_API int gcs_occfit_closed(const gcs_occ_point *pts, int n, double m1_ns, double think_ns,
                      gcs_occfit_result *out, gcs_err *err);

/* Beyond this rms relative residual the model does not describe the load
 * points (honest fits on the development VM give 0.15-0.35,
 * docs/microbench.md). */
#define GCS_OCCFIT_POOR_FIT_RMS 0.5

/* Whether a fitted S_O is a physical figure: fitted (rc == 0), 0 < S_O <
 * M1, not at a bound of the fit, determined by the data (its standard
 * error below S_O itself), and from a model that describes the points
 * (rms relative residual at most GCS_OCCFIT_POOR_FIT_RMS).  Returns 1 when it is; else 0 with reason (one
 * line, e.g. "fit found no contention: 0.0 ns at 8 load points"). */
GCS_API int gcs_occfit_reliable(const gcs_occfit_result *r, char *reason, size_t len);

/* The models themselves, for tests and for the predictor. */
GCS_API double gcs_occfit_open_latency(double m1_ns, double s_o_ns, double throughput_per_ns);
/* Exact MVA for N customers; returns throughput (per ns), *latency_ns = R(N). */
GCS_API double gcs_occfit_closed_mva(double m1_ns, double s_o_ns, double think_ns, int customers,
                             double *latency_ns);

#endif
