/* test_heaps.h -- the model's inputs by hand that several tests share (a
 * gcs_model_heap, not a snapshot). */
#ifndef GCSCALE_TEST_HEAPS_H
#define GCSCALE_TEST_HEAPS_H

#include <string.h>

#include "gcscale/model.h"

/* 10^5 objects and as many edges, T1 1 ms and T-infinity 1 us (parallelism
 * to spare), one root, one memory node; no simulation, no counts. */
static inline gcs_model_heap test_spare_heap(void)
{
    gcs_model_heap h;
    memset(&h, 0, sizeof h);
    h.objects = 100000;
    h.edges = 100000;
    h.t1_ns = 1e6;
    h.tinf_ns = 1e3;
    h.roots = 1;
    h.nnodes = 1;
    h.v[0] = 1;
    return h;
}

#endif
