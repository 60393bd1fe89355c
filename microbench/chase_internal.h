/* chase_internal.h -- the chase buffer, shared by chase.c and occupancy.c
 * (not a public header). */
#ifndef GCSCALE_CHASE_INTERNAL_H
#define GCSCALE_CHASE_INTERNAL_H

#include "gcscale/microbench.h"

struct gcs_chase_buf {
    void *map;           /* the whole mapping (over-allocated for alignment) */
    size_t map_len;
    char *data;          /* aligned start of the lines */
    size_t len;
    const gcs_topo *t;
    gcs_chase_buf_info info;
    /* Pointers to every ckpt_interval-th line along the cycle.  Occupancy
     * chains start at checkpoints taken in order from a "tape" position, so
     * every chain starts where nobody has been for a whole cycle
     * (_gcs_occ_chain_starts). */
    void **ckpt;
    size_t nckpt;
    uint64_t ckpt_interval;
    size_t tape;
    void *cursor;        /* where the latency chase continues */
};

/* Checkpoints per cycle (fewer on a cycle of fewer lines): one start for
 * every chain of the largest occupancy load point. */
#define GCS_CHASE_MAX_CHECKPOINTS (GCS_OCC_MAX_THREADS * GCS_OCC_MAX_CHAINS)

/* Starts of the n chains of one occupancy load point, each to walk *steps
 * steps: consecutive stretches of the tape, so that the chains walk
 * disjoint parts of the cycle (no line is on two chains' paths).  Lowers
 * *steps to what n disjoint stretches of whole checkpoint intervals allow.
 * Returns -1 when the cycle has fewer checkpoints than n. */
int _gcs_occ_chain_starts(gcs_chase_buf *b, int n, uint64_t *steps, void **starts);
/* The steps per chain _gcs_occ_chain_starts would allow for n chains (0 when
 * n chains cannot have disjoint paths), without taking anything off the
 * tape. */
uint64_t _gcs_occ_steps_cap(const gcs_chase_buf *b, int n, uint64_t steps);

void *_gcs_chase_loop_read(void *p, uint64_t iters16);
void *_gcs_chase_loop_rw(void *p, uint64_t iters16);

#endif
