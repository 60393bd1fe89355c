/* contention.h -- private to model/: the miss-cost fixed point.  predict.c
 * fills a gcs_contention from a profile, a heap and P; contention.c solves it. */
#ifndef GCSCALE_MODEL_CONTENTION_H
#define GCSCALE_MODEL_CONTENTION_H

#include "gcscale/model.h"

typedef struct gcs_contention {
    int threads, nnodes;
    double compute_ns;      /* Tc = T1/P + Tinf (or Brent's bound): the time without misses */
    double miss_share;      /* the share of all misses on one worker's path: 1/P, or
                               more when the critical path's misses are not shared */
    double misses;          /* Q, all classes */
    double miss_time_idle;  /* sum over classes and nodes of V_j Q_c M1_c,j */
    double share_others;    /* (P-1)/P; 1 - miss_share in model v2 (predict.c):
                               the part of the traffic a request queues behind */
    double requests[GCS_MODEL_MAX_NODES]; /* V_j Q: requests to node j */
    double visit[GCS_MODEL_MAX_NODES];    /* V_j */
    double service[GCS_MODEL_MAX_NODES];  /* request-weighted mean S_O at node j */
    double latency[GCS_MODEL_MAX_NODES];  /* request-weighted mean M1 at node j (what a
                                             worker waits per request, idle) */
    double wait_seen[GCS_MODEL_MAX_NODES]; /* the share of W_j a request makes its worker
                                              wait: 1, less when misses overlap */
    double load[GCS_MODEL_MAX_NODES];     /* sum_c V_j Q_c S_c,j: node j's busy time */
    /* results */
    double rho[GCS_MODEL_MAX_NODES], wait[GCS_MODEL_MAX_NODES];
    int iterations;
    const char *solver;
} gcs_contention;

/* Solves for the mark time T; fills rho, wait, iterations and solver. */
int _gcs_contention_solve(gcs_contention *c, gcs_model_mva mva, double *t_out, gcs_err *err);

#endif
