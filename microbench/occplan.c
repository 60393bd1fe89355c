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
    size_t total = 0, used = 0;
    for (int k = 0; k < gcs_topo_nnodes(t); k++)
        total += (size_t)gcs_topo_node_at(t, k)->ncpus;
    int *cpus = calloc(total > 0 ? total : 1, sizeof *cpus);
    if (!cpus)
        return NULL;
    int first = gcs_topo_local_cpu_node(t, mem_node);
    if (first < 0)
        first = mem_node;
    const gcs_topo_node *local = gcs_topo_node_at(t, first);
    for (int i = 0; i < local->ncpus; i++)
        cpus[used++] = local->cpus[i];
    for (int k = 0; k < gcs_topo_nnodes(t); k++) {
        if (k == first)
            continue;
        const gcs_topo_node *o = gcs_topo_node_at(t, k);
        for (int i = 0; i < o->ncpus; i++)
            cpus[used++] = o->cpus[i];
    }
    gcs_assert_internal(used <= total);
    *n = (int)used;
    return cpus;
}

int gcs_occ_plan_init(gcs_occ_plan *pl, const gcs_topo *t, int mem_node, int max_threads, gcs_err *err)
{
    memset(pl, 0, sizeof *pl);
    int ncpus = 0;
    int *cpus = gcs_occ_cpu_order(t, mem_node, &ncpus);
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
    if (synthetic || ncpus == 0) {
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
