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
 * relative latency residuals.  Calls only common.h and GSL.
 */
#ifndef GCSCALE_OCCFIT_H
#define GCSCALE_OCCFIT_H

#include "gcscale/common.h"

typedef struct gcs_occ_point {
    double outstanding;       /* N: concurrent requests (threads x chains) */
    double throughput_per_ns; /* X: requests completed per ns at the node */
    double latency_ns;        /* R: mean latency of one request */
} gcs_occ_point;

typedef struct gcs_occfit_result {
    double m1_ns;             /* idle latency used (fixed) */
    double s_o_ns;            /* fitted service time per request */
    double rms_rel_residual;  /* sqrt(mean(((R_model - R)/R)^2)) */
    int npoints;
    int iterations;
} gcs_occfit_result;

/* m1_ns is the idle latency measured separately; think_ns the compute time
 * between two requests of one chain (0 for a pure chase). */
int gcs_occfit_open(const gcs_occ_point *pts, int n, double m1_ns,
                    gcs_occfit_result *out, gcs_err *err);
int gcs_occfit_closed(const gcs_occ_point *pts, int n, double m1_ns, double think_ns,
                      gcs_occfit_result *out, gcs_err *err);

/* The models themselves, for tests and for the predictor. */
double gcs_occfit_open_latency(double m1_ns, double s_o_ns, double throughput_per_ns);
/* Exact MVA for N customers; returns throughput (per ns), *latency_ns = R(N). */
double gcs_occfit_closed_mva(double m1_ns, double s_o_ns, double think_ns, int customers,
                             double *latency_ns);

#endif
