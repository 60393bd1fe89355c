/* contention.c -- the cost of a cache miss when P workers share the memory
 * nodes, and the predicted mark time that depends on it.
 *
 * The mark time T and the miss cost M_P depend on each other: the faster the
 * mark, the denser the stream of misses, the longer each one queues.  With
 * Q_c misses of class c (read, atomic RW), V_j of them going to memory node j:
 *
 *   arrival rate at j     lambda_j = sum_c V_j Q_c / T
 *   utilisation           rho_j    = (P-1)/P * sum_c lambda_j,c S_c,j
 *   queueing delay        W_j      = S_j * rho_j / (1 - rho_j)
 *   predicted time        T        = Tc + sum_c sum_j V_j Q_c (M1_c,j + W_j) * share
 *
 * (with an overlap F > 1, model.h, a request not covered by the stream
 * prefetcher makes its worker wait (M1_c,j + W_j)/F: predict.c folds 1/F
 * into latency[j] and wait_seen[j]; the node is busy S_O all the same)
 *
 * with Tc = T1/P + Tinf the time without misses, share = 1/P the part of
 * the misses each worker meets (more with GCS_MODEL_SPAN_CRITICAL, model.h), S_j the request-weighted
 * mean service time at j, and M1_c,j the idle latency averaged over the CPU
 * nodes the P workers run on (stealing is oblivious to locality).
 *
 * Two choices differ from the paper, both so that P = 1 gives exactly
 * T1 + Tinf + Q1 * M1 (model-notes 1.2):
 *  - the Q misses are shared among the P workers (the paper's T + Q*M
 *    counts them machine-wide and so over-counts by P);
 *  - a request queues only behind the other P-1 workers' requests: with no
 *    computation between misses a worker has one miss outstanding, never two,
 *    so its own stream cannot delay itself (the arrival theorem of closed
 *    networks says the same).  Model v2 takes 1 - share instead of
 *    (P-1)/P: the critical path's misses, made while nobody else has work,
 *    add to one worker's share and to nobody's queue (predict.c, setup()).
 *
 * f(T) = T - Tc - miss(T) * share is increasing on T > T_min, where T_min is the
 * time at which the busiest node saturates; f -> -inf at T_min and +inf at
 * infinity, so the root exists and is unique.  Newton (GSL) converges in a
 * few steps from the contention-free estimate; when a step leaves the
 * interval we fall back to Brent on a bracket, which cannot fail.
 *
 * The closed alternative is exact MVA of P customers (the workers) who think
 * for Z = Tc / (Q/P) between misses and then visit node j with probability
 * V_j: a queueing centre of service S_j plus a pure delay M1_j - S_j. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include "contention.h"

#define MAX_ITERATIONS 200
#define RELATIVE_TOLERANCE 1e-10

/* ---- the open model ------------------------------------------------------- */

static double open_wait(const gcs_contention *c, int j, double t, double *rho_out)
{
    double rho = c->load[j] * c->share_others / t;
    if (rho_out)
        *rho_out = rho;
    if (rho >= 1)
        return INFINITY;
    return c->service[j] * rho / (1 - rho);
}

/* Total miss time (all workers) at mark time t. */
static double open_miss_time(const gcs_contention *c, double t)
{
    double total = c->miss_time_idle;
    for (int j = 0; j < c->nnodes; j++)
        if (c->requests[j] > 0)
            total += c->requests[j] * c->wait_seen[j] * open_wait(c, j, t, NULL);
    return total;
}

static double open_f(double t, void *arg)
{
    const gcs_contention *c = arg;
    return t - c->compute_ns - open_miss_time(c, t) * c->miss_share;
}

static double open_df(double t, void *arg)
{
    const gcs_contention *c = arg;
    double d = 0;
    for (int j = 0; j < c->nnodes; j++) {
        if (c->requests[j] <= 0)
            continue;
        double rho;
        open_wait(c, j, t, &rho);
        /* dW/dT = -S rho / (T (1 - rho)^2) */
        d += c->requests[j] * c->wait_seen[j] * c->service[j] * rho / (t * (1 - rho) * (1 - rho));
    }
    return 1 + d * c->miss_share;
}

static void open_fdf(double t, void *arg, double *f, double *df)
{
    *f = open_f(t, arg);
    *df = open_df(t, arg);
}

/* The root by Brent's method on (t_min, hi], where f(t_min+) < 0 < f(hi). */
static int open_solve_brent(gcs_contention *c, double t_min, double start, double *t_out, gcs_err *err)
{
    gsl_function fn = {open_f, c};
    double lo = t_min > 0 ? t_min * (1 + 1e-12) : 0;
    if (lo == t_min)
        lo = nextafter(t_min, INFINITY);
    double hi = start > lo ? start : 2 * lo + 1;
    int guard = 0;
    while (open_f(hi, c) <= 0 && guard++ < 2000)
        hi *= 2;
    if (!(open_f(lo, c) < 0)) {
        /* f is already >= 0 at the edge of the domain: the root is there. */
        *t_out = lo;
        return 0;
    }
    if (open_f(hi, c) <= 0 || !isfinite(hi)) {
        gcs_err_set(err, "contention: no mark time satisfies the model (inputs out of range)");
        return -1;
    }
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!s) {
        gcs_err_set(err, "contention: out of memory");
        return -1;
    }
    gsl_root_fsolver_set(s, &fn, lo, hi);
    int status = GSL_CONTINUE;
    for (c->iterations = 0; status == GSL_CONTINUE && c->iterations < MAX_ITERATIONS;) {
        c->iterations++;
        status = gsl_root_fsolver_iterate(s);
        if (status != GSL_SUCCESS)
            break;
        status = gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s),
                                        0, RELATIVE_TOLERANCE);
    }
    *t_out = gsl_root_fsolver_root(s);
    gsl_root_fsolver_free(s);
    if (status != GSL_SUCCESS) {
        gcs_err_set(err, "contention: Brent's method did not converge in %d iterations",
                    MAX_ITERATIONS);
        return -1;
    }
    c->solver = "brent";
    return 0;
}

static int open_solve(gcs_contention *c, double *t_out, gcs_err *err)
{
    /* Saturation bound: the busiest node at rho = 1. */
    double t_min = 0;
    for (int j = 0; j < c->nnodes; j++) {
        double t = c->load[j] * c->share_others;
        if (t > t_min)
            t_min = t;
    }
    double start = c->compute_ns + c->miss_time_idle * c->miss_share;
    if (t_min == 0) {
        /* No queueing anywhere (one worker, or zero occupancy): closed form. */
        *t_out = start;
        c->iterations = 0;
        c->solver = "none";
        return 0;
    }
    if (start <= t_min)
        start = 2 * t_min;

    gsl_function_fdf fdf = {open_f, open_df, open_fdf, c};
    gsl_root_fdfsolver *s = gsl_root_fdfsolver_alloc(gsl_root_fdfsolver_newton);
    if (!s) {
        gcs_err_set(err, "contention: out of memory");
        return -1;
    }
    gsl_root_fdfsolver_set(s, &fdf, start);
    double x = start, x0;
    int status = GSL_CONTINUE, left_domain = 0;
    c->iterations = 0;
    while (status == GSL_CONTINUE && c->iterations < MAX_ITERATIONS) {
        c->iterations++;
        x0 = x;
        status = gsl_root_fdfsolver_iterate(s);
        x = gsl_root_fdfsolver_root(s);
        if (status != GSL_SUCCESS || !isfinite(x) || x <= t_min) {
            left_domain = 1;
            break;
        }
        status = gsl_root_test_delta(x, x0, 0, RELATIVE_TOLERANCE);
    }
    gsl_root_fdfsolver_free(s);
    if (!left_domain && status == GSL_SUCCESS) {
        *t_out = x;
        c->solver = "newton";
        return 0;
    }
    int newton_iterations = c->iterations;
    int rc = open_solve_brent(c, t_min, start, t_out, err);
    c->iterations += newton_iterations;
    return rc;
}

/* ---- the closed model ------------------------------------------------------- */

static int closed_solve(gcs_contention *c, double *t_out, gcs_err *err)
{
    c->iterations = 0;
    c->solver = "closed-mva";
    if (c->misses <= 0) {
        *t_out = c->compute_ns;
        return 0;
    }
    /* A node is a queue of service S_O behind a pure delay M1 - S_O
     * (model-notes 1.2).  With S_O > M1 there is no such delay, and one
     * worker alone would already pay S_O instead of M1 per miss: P = 1 would
     * no longer cost T1 + Tinf + Q1 M1.  The open model has no such limit. */
    for (int j = 0; j < c->nnodes; j++)
        if (c->visit[j] > 0 && c->service[j] > c->latency[j]) {
            gcs_err_set(err, "contention: the closed model needs occupancy <= latency, but memory node "
                             "%d has S_O %.4g ns > M1 %.4g ns: use --mva open", j, c->service[j],
                        c->latency[j]);
            return -1;
        }
    double per_worker = c->misses * c->miss_share;
    double think = c->compute_ns / per_worker;
    double delay = 0;
    for (int j = 0; j < c->nnodes; j++)
        delay += c->visit[j] * (c->latency[j] - c->service[j]);
    double queue[GCS_MODEL_MAX_NODES] = {0}, resid[GCS_MODEL_MAX_NODES] = {0};
    double response = 0;
    for (int n = 1; n <= c->threads; n++) {
        response = 0;
        for (int j = 0; j < c->nnodes; j++) {
            resid[j] = c->service[j] * (1 + queue[j]);
            response += c->visit[j] * resid[j];
        }
        double x = n / (think + delay + response);
        for (int j = 0; j < c->nnodes; j++)
            queue[j] = x * c->visit[j] * resid[j];
        c->iterations++;
    }
    double miss_cost = delay + response;
    if (!isfinite(miss_cost)) {
        gcs_err_set(err, "contention: closed MVA diverged");
        return -1;
    }
    for (int j = 0; j < c->nnodes; j++) {
        c->wait[j] = resid[j] - c->service[j];
        c->rho[j] = 0;
    }
    *t_out = c->compute_ns + c->misses * miss_cost * c->miss_share;
    /* Utilisation as throughput x service, for the report. */
    for (int j = 0; j < c->nnodes; j++)
        c->rho[j] = c->misses * c->visit[j] * c->service[j] / *t_out;
    return 0;
}

/* ---- entry point -------------------------------------------------------------- */

int _gcs_contention_solve(gcs_contention *c, gcs_model_mva mva, double *t_out, gcs_err *err)
{
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    int rc = mva == GCS_MODEL_MVA_CLOSED ? closed_solve(c, t_out, err) : open_solve(c, t_out, err);
    gsl_set_error_handler(previous);
    if (rc < 0)
        return -1;
    if (!isfinite(*t_out) || *t_out <= 0) {
        gcs_err_set(err, "contention: the solver produced no finite mark time");
        return -1;
    }
    if (mva == GCS_MODEL_MVA_OPEN)
        for (int j = 0; j < c->nnodes; j++)
            c->wait[j] = c->requests[j] > 0 ? open_wait(c, j, *t_out, &c->rho[j]) : 0;
    return 0;
}
