/* occplan.c -- the occupancy plan: which CPUs and thread counts load a
 * memory node, and the checks of the load points that do not need the fit
 * (the fallback S_O, the N = 1 cross-check of M1).  `gcscale calibrate`
 * and `gcscale bench occupancy` both go by it (microbench.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/internal.h"
#include "gcscale/microbench.h"

int *gcs_occ_cpu_order(const gcs_topo *t, int mem_node, int *n)
{
    return gcs_occ_cpu_order_placed(t, mem_node, GCS_TOPO_PLACE_CORES, n);
}

int *gcs_occ_cpu_order_placed(const gcs_topo *t, int mem_node, gcs_topo_placement p, int *n)
{
    int total = gcs_topo_ncpus(t);
    gcs_topo_pu *map = calloc(total > 0 ? (size_t)total : 1, sizeof *map);
    int *cpus = calloc(total > 0 ? (size_t)total : 1, sizeof *cpus);
    gcs_err ignored;
    /* none still needs an order (the CPU count, bandwidth): the default's */
    if (!map || !cpus ||
        gcs_topo_place(t, p == GCS_TOPO_PLACE_NONE ? GCS_TOPO_PLACE_CORES : p, total, map, &ignored) < 0) {
        free(map);
        free(cpus);
        return NULL;
    }
    int first = gcs_topo_local_cpu_node(t, mem_node);
    if (first < 0)
        first = mem_node;
    int used = 0;
    /* The local node's CPUs in the policy's order, then the others' (CPUs
     * of no node are left out, as the nodes' lists leave them out). */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < total; i++)
            if (map[i].node >= 0 && (map[i].node == first) == (pass == 0))
                cpus[used++] = map[i].os_index;
    gcs_assert_internal(used <= total);
    free(map);
    *n = used;
    return cpus;
}

int gcs_occ_plan_init(gcs_occ_plan *pl, const gcs_topo *t, int mem_node, int max_threads, gcs_err *err)
{
    return gcs_occ_plan_init_placed(pl, t, mem_node, max_threads, GCS_TOPO_PLACE_CORES, err);
}

int gcs_occ_plan_init_placed(gcs_occ_plan *pl, const gcs_topo *t, int mem_node, int max_threads,
                             gcs_topo_placement placement, gcs_err *err)
{
    memset(pl, 0, sizeof *pl);
    int ncpus = 0;
    int *cpus = gcs_occ_cpu_order_placed(t, mem_node, placement, &ncpus);
    if (!cpus) {
        gcs_err_set(err, "occupancy: out of memory");
        return -1;
    }
    int synthetic = gcs_topo_is_synthetic(t);
    /* Synthetic: nothing can be pinned, and there are only the online CPUs
     * to run threads on (a synthetic topology can have fewer than the host,
     * or more). */
    int all = ncpus;
    if (synthetic) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        all = online > 0 ? (int)online : 1;
    }
    pl->max_threads = max_threads > 0 ? max_threads : all;
    if (pl->max_threads < 1)
        pl->max_threads = 1; /* a topology without CPUs still runs one thread */
    pl->thread_counts = calloc((size_t)pl->max_threads + 1, sizeof *pl->thread_counts);
    if (!pl->thread_counts) {
        free(cpus);
        gcs_err_set(err, "occupancy: out of memory");
        return -1;
    }
    /* 1..max_threads, or 1, 2, 4, ..., max_threads on large machines: at
     * most max_threads + 1 of them. */
    int nc = 0, mt = pl->max_threads;
    for (int k = 1; k <= mt; k = mt <= 8 ? k + 1 : k * 2)
        pl->thread_counts[nc++] = k;
    if (pl->thread_counts[nc - 1] != mt)
        pl->thread_counts[nc++] = mt;
    pl->nthread_counts = nc;
    if (synthetic || ncpus == 0 || placement == GCS_TOPO_PLACE_NONE) {
        free(cpus);
        cpus = NULL;
        ncpus = 0;
    }
    pl->cpus = cpus;
    pl->ncpus = ncpus;
    pl->first_cpu = cpus ? cpus[0] : -1;
    return 0;
}

void gcs_occ_plan_free(gcs_occ_plan *pl)
{
    free(pl->cpus);
    free(pl->thread_counts);
    memset(pl, 0, sizeof *pl);
}

void gcs_occ_plan_opts(const gcs_occ_plan *pl, gcs_occ_opts *o)
{
    o->cpus = pl->cpus;
    o->ncpus = pl->ncpus;
    o->thread_counts = pl->thread_counts;
    o->nthread_counts = pl->nthread_counts;
}

void gcs_occ_check_points(const gcs_occ_result *r, double m1, gcs_occ_check *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < r->npoints; i++)
        if (r->points[i].throughput_per_ns > c->max_throughput_per_ns)
            c->max_throughput_per_ns = r->points[i].throughput_per_ns;
    c->s_o_fallback_ns = c->max_throughput_per_ns > 0 ? 1 / c->max_throughput_per_ns : 0;
    c->n1_latency_ns = NAN;
    for (int i = 0; i < r->npoints && isnan(c->n1_latency_ns); i++)
        if (r->points[i].outstanding == 1)
            c->n1_latency_ns = r->points[i].latency_ns;
    double n1 = c->n1_latency_ns;
    c->n1_deviation = isfinite(n1) && m1 > 0 ? (n1 - m1) / m1 : NAN;
    c->n1_disagrees = fabs(c->n1_deviation) > GCS_OCC_N1_TOLERANCE;
    if (c->n1_disagrees)
        snprintf(c->n1_note, sizeof c->n1_note, "the N = 1 load point (%.1f ns) is %.0f%% %s M1 (%.1f ns)", n1,
                 100 * fabs(c->n1_deviation), c->n1_deviation < 0 ? "below" : "above", m1);
}
