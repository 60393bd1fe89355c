/* profile.c -- the machine profile document in memory: allocation (the
 * shape every profile has, _gcs_profile_shape_ok), adding caches, the
 * accessors (a pair's latency, its latency with page walks and the walk,
 * the dependent-load and residency curves) and free.  Its JSON form is
 * read by profile_load.c (the document's shape), checked by
 * profile_validate.c (the values) and written by profile_save.c; printing
 * is profile_print.c, the fitted constants' uncertainty and reliability
 * profile_quality.c, where profiles live profile_path.c, the effective LLC
 * profile_llc.c.  Which of them a new key of the document touches:
 * profile_internal.h.
 *
 * Matrices and per-node arrays are indexed by position in "nodes", not by
 * node id: row i and column i belong to nodes[i].
 *
 * A file format of formats/: calls only common/ (errors, crash-safe files,
 * tables) and jansson, so that everything above may read profiles. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/profile.h"
#include "../common/internal.h"
#define GCS_PROFILE_FILES
#include "profile_internal.h"

/* The shape every profile formats/ hands out has, whoever filled in its
 * values: nodes, and each latency matrix (nnodes x nnodes, row-major) and
 * occupancy vector (nnodes), allocated for nnodes in [1, MAX_NODES]; every
 * CPU list and the cache list allocated for their counts.  gcs_profile_new
 * makes it, the loader and calibrate keep it, and gcs_profile_validate
 * refuses a profile without it, so a validated profile that lacks it is a
 * bug here.  Only compiled where gcs_assert_internal is on. */
#if GCS_ASSERT_ON
int _gcs_profile_shape_ok(const gcs_profile *p)
{
    if (!p || p->nnodes < 1 || p->nnodes > MAX_NODES || !p->nodes)
        return 0;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        if (!p->latency_ns[a] || !p->occupancy_ns[a])
            return 0;
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i].ncpus < 0 || (p->nodes[i].ncpus > 0 && !p->nodes[i].cpus))
            return 0;
    if (p->ncaches < 0 || (p->ncaches > 0 && !p->caches))
        return 0;
    for (int i = 0; i < p->ncaches; i++)
        if (p->caches[i].ncpus < 0 || (p->caches[i].ncpus > 0 && !p->caches[i].cpus))
            return 0;
    return 1;
}
#endif

/* ---- allocation ----------------------------------------------------------- */

gcs_profile *gcs_profile_new(int nnodes)
{
    if (nnodes < 1 || nnodes > MAX_NODES)
        return NULL;
    gcs_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    size_t n = (size_t)nnodes;
    p->nnodes = nnodes;
    p->nodes = calloc(n, sizeof *p->nodes);
    int ok = p->nodes != NULL;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a] = calloc(n * n, sizeof(double));
        p->occupancy_ns[a] = calloc(n, sizeof(double));
        ok = ok && p->latency_ns[a] && p->occupancy_ns[a];
    }
    if (!ok) {
        gcs_profile_free(p);
        return NULL;
    }
    for (int i = 0; i < nnodes; i++)
        p->nodes[i].id = i;
    snprintf(p->counters_source, sizeof p->counters_source, "none");
    gcs_assert_internal(_gcs_profile_shape_ok(p));
    return p;
}

int gcs_profile_cpus(const gcs_profile *p)
{
    int n = 0;
    for (int i = 0; i < p->nnodes; i++)
        n += p->nodes[i].ncpus;
    return n;
}

void gcs_profile_free(gcs_profile *p)
{
    if (!p)
        return;
    if (p->nodes)
        for (int i = 0; i < p->nnodes; i++)
            free(p->nodes[i].cpus);
    free(p->nodes);
    if (p->caches)
        for (int i = 0; i < p->ncaches; i++)
            free(p->caches[i].cpus);
    free(p->caches);
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        free(p->latency_ns[a]);
        free(p->occupancy_ns[a]);
    }
    free(p->bandwidth_gbs);
    for (int k = 0; k < GCS_PAGES_COUNT; k++)
        free(p->full_random_ns[k]);
    json_decref(p->extra);
    free(p);
}

int gcs_profile_add_cache(gcs_profile *p, const gcs_profile_cache *cache)
{
    gcs_profile_cache *grown = realloc(p->caches, (size_t)(p->ncaches + 1) * sizeof *grown);
    if (!grown)
        return -1;
    p->caches = grown;
    int *cpus = calloc(cache->ncpus > 0 ? (size_t)cache->ncpus : 1, sizeof *cpus);
    if (!cpus)
        return -1;
    if (cache->ncpus > 0)
        memcpy(cpus, cache->cpus, (size_t)cache->ncpus * sizeof *cpus);
    gcs_profile_cache *c = &p->caches[p->ncaches++];
    *c = *cache;
    c->cpus = cpus;
    return 0;
}

double gcs_profile_latency(const gcs_profile *p, gcs_access a, int cpu_node, int mem_node)
{
    /* Out-of-range indexes are caller bugs; NaN makes them visible in any
     * result they reach instead of reading past the matrix. */
    if (!p || (int)a < 0 || a >= GCS_ACCESS_COUNT || cpu_node < 0 || cpu_node >= p->nnodes ||
        mem_node < 0 || mem_node >= p->nnodes)
        return NAN;
    return p->latency_ns[a][(size_t)cpu_node * (size_t)p->nnodes + (size_t)mem_node];
}

const char *gcs_profile_pages_name(gcs_pages pages)
{
    return (int)pages >= 0 && pages < GCS_PAGES_COUNT ? pages_keys[pages] : "?";
}

int gcs_profile_alloc_full_random(gcs_profile *p, gcs_pages pages)
{
    if ((int)pages < 0 || pages >= GCS_PAGES_COUNT)
        return -1;
    if (!p->full_random_ns[pages]) {
        size_t n = (size_t)p->nnodes;
        p->full_random_ns[pages] = calloc(n * n, sizeof(double));
        if (!p->full_random_ns[pages])
            return -1;
    }
    p->full_random_note[pages][0] = '\0';
    return 0;
}

double gcs_profile_full_random_latency(const gcs_profile *p, gcs_pages pages, int cpu_node,
                                       int mem_node)
{
    if (!p || (int)pages < 0 || pages >= GCS_PAGES_COUNT || !p->full_random_ns[pages] ||
        cpu_node < 0 || cpu_node >= p->nnodes || mem_node < 0 || mem_node >= p->nnodes)
        return NAN;
    return p->full_random_ns[pages][(size_t)cpu_node * (size_t)p->nnodes + (size_t)mem_node];
}

double gcs_profile_page_walk(const gcs_profile *p, gcs_pages pages, int cpu_node, int mem_node)
{
    double full = gcs_profile_full_random_latency(p, pages, cpu_node, mem_node);
    double m1 = gcs_profile_latency(p, GCS_ACCESS_READ, cpu_node, mem_node);
    if (!isfinite(full) || !isfinite(m1))
        return NAN;
    return full > m1 ? full - m1 : 0;
}

double gcs_profile_residency(const gcs_profile *p, double footprint_llc)
{
    int n = p ? p->nresidency : 0;
    if (n == 0 || !(footprint_llc >= 0))
        return NAN;
    /* straight from (0, 1), every line resident in an empty LLC, through the
     * measured points; beyond the last, its share */
    double fx = 0, rx = 1;
    for (int i = 0; i < n; i++) {
        if (footprint_llc <= p->residency_footprint[i]) {
            double t = (footprint_llc - fx) / (p->residency_footprint[i] - fx);
            return rx + t * (p->residency_resident[i] - rx);
        }
        fx = p->residency_footprint[i], rx = p->residency_resident[i];
    }
    return rx;
}

int gcs_profile_set_dependent_load(gcs_profile *p, const double *bytes, const double *ns, int n, gcs_err *err)
{
    if (_gcs_profile_check_dependent_load(bytes, ns, n, err) < 0)
        return -1;
    memcpy(p->dependent_load_bytes, bytes, (size_t)n * sizeof *bytes);
    memcpy(p->dependent_load_ns, ns, (size_t)n * sizeof *ns);
    p->ndependent_load = n;
    return 0;
}

double gcs_profile_dependent_load(const gcs_profile *p, double bytes)
{
    int n = p ? p->ndependent_load : 0;
    if (n == 0 || !(bytes > 0))
        return n == 0 ? NAN : p->dependent_load_ns[0];
    const double *x = p->dependent_load_bytes, *y = p->dependent_load_ns;
    if (bytes <= x[0])
        return y[0];
    if (bytes >= x[n - 1])
        return y[n - 1];
    int i = 1;
    while (x[i] < bytes)
        i++;
    /* a latency staircase is straight between points in log(size), as the
     * effective LLC's crossing is found (profile_llc.c) */
    double t = log(bytes / x[i - 1]) / log(x[i] / x[i - 1]);
    return y[i - 1] + t * (y[i] - y[i - 1]);
}
