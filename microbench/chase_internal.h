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
     * every chain starts where nobody has been for a whole cycle. */
    void **ckpt;
    size_t nckpt;
    uint64_t ckpt_interval;
    size_t tape;
    void *cursor;        /* where the latency chase continues */
};

void *gcs_chase_loop_read(void *p, uint64_t iters16);
void *gcs_chase_loop_rw(void *p, uint64_t iters16);

#endif
