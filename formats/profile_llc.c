/* profile_llc.c -- the effective last-level cache: how much of a working set
 * the LLC really holds on this machine, read off calibrate's latency sweep
 * (docs/model.md, "Serial work").  hwloc's nominal size can be far off: on
 * the lent 16-CPU VM the 300 MiB L3 behaves like about 20 MiB, on the 2-CPU
 * development VM the 32 MiB L3 like about 15 MiB (a VM sees a slice).
 *
 * Calibrate stores the result as the profile keys llc_effective_bytes and
 * llc_hit_ns; a profile recorded before those keys existed still has the
 * sweep among its calibration details, and gcs_profile_llc_effective derives
 * the same figures from it, saying so. */
#include <math.h>
#include <string.h>

#include "gcscale/profile.h"

int gcs_profile_llc_from_sweep(const double *size, const double *lat, int n, double *llc_bytes,
                               double *hit_ns)
{
    if (n < 3)
        return -1;
    for (int i = 0; i < n; i++)
        if (!(size[i] > 0) || !(lat[i] > 0) || !isfinite(lat[i]) || (i > 0 && size[i] <= size[i - 1]))
            return -1;
    /* The largest working set is beyond every cache: its latency is memory's. */
    double dram = lat[n - 1];
    /* k: the largest working set still served at under half the memory
     * latency, i.e. the top of the last cache plateau.  The step that
     * follows it is the LLC's edge. */
    int k = -1;
    for (int i = n - 2; i >= 0; i--)
        if (lat[i] < dram / 2) {
            k = i;
            break;
        }
    if (k < 0)
        return -1;
    /* The hit latency: the plateau's level at half the edge's working set,
     * where no set of the LLC is yet short of room. */
    double hit = lat[0];
    for (int i = 0; i <= k; i++)
        if (size[i] <= size[k] / 2)
            hit = lat[i];
    /* The edge: where the latency crosses halfway between hit and memory,
     * interpolated in log(size) between the last plateau point and the next. */
    double mid = (hit + dram) / 2, lo = lat[k], hi = lat[k + 1];
    double f = hi > lo ? (mid - lo) / (hi - lo) : 0;
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    *llc_bytes = size[k] * pow(size[k + 1] / size[k], f);
    *hit_ns = hit;
    return 0;
}

/* The sweep of calibration.sweep.points as two arrays; -1 if absent or
 * malformed. */
static int sweep_points(const gcs_profile *p, double *size, double *lat, int max, int *n)
{
    json_t *cal = p->extra ? json_object_get(p->extra, "calibration") : NULL;
    json_t *pts = cal ? json_object_get(json_object_get(cal, "sweep"), "points") : NULL;
    if (!json_is_array(pts) || json_array_size(pts) > (size_t)max)
        return -1;
    size_t i;
    json_t *pt;
    json_array_foreach(pts, i, pt) {
        json_t *s = json_object_get(pt, "size_bytes"), *m = json_object_get(pt, "median_ns");
        if (!json_is_number(s) || !json_is_number(m))
            return -1;
        size[i] = json_number_value(s);
        lat[i] = json_number_value(m);
    }
    *n = (int)json_array_size(pts);
    return 0;
}

gcs_llc_source gcs_profile_llc_effective(const gcs_profile *p, double *llc_bytes, double *hit_ns)
{
    if (p->has_llc_effective) {
        *llc_bytes = p->llc_effective_bytes;
        *hit_ns = p->llc_hit_ns;
        return GCS_LLC_PROFILE;
    }
    enum { MAX_POINTS = 512 };
    double size[MAX_POINTS], lat[MAX_POINTS];
    int n;
    if (sweep_points(p, size, lat, MAX_POINTS, &n) == 0 &&
        gcs_profile_llc_from_sweep(size, lat, n, llc_bytes, hit_ns) == 0)
        return GCS_LLC_SWEEP;
    /* Nominal: the largest data or unified cache hwloc reports; no hit
     * latency was measured, so none is claimed. */
    double best = 0;
    for (int i = 0; i < p->ncaches; i++)
        if (strcmp(p->caches[i].type, "instruction") != 0 && (double)p->caches[i].size_bytes > best)
            best = (double)p->caches[i].size_bytes;
    *llc_bytes = best;
    *hit_ns = NAN;
    return best > 0 ? GCS_LLC_NOMINAL : GCS_LLC_NONE;
}

const char *gcs_llc_source_name(gcs_llc_source s)
{
    switch (s) {
    case GCS_LLC_PROFILE: return "llc_effective_bytes";
    case GCS_LLC_SWEEP: return "calibration.sweep";
    case GCS_LLC_NOMINAL: return "nominal";
    default: return "none";
    }
}

/* Why a measurement overrides hwloc here: a virtual machine may show its
 * host's last-level cache to every vCPU, listed once per vCPU.  The listing
 * is right about sharing (such vCPUs can sit on different host dies) and
 * wrong about the size, which is the host's whole cache, not what one vCPU
 * gets.  Taken as listed, the cache simulation keeps exact per-worker state
 * for hundreds of MiB and calibrate sizes its "fits the private caches"
 * heaps by it (docs/model.md, "A last level listed per CPU").  Only the
 * last level, and only where the sweep measured one: a private level below
 * it is what the core really has.  A shared last level keeps its nominal
 * size: the model's residency reads the effective LLC for it, and the
 * corpus entries recorded with such levels were judged so. */
uint64_t gcs_profile_cache_bytes(const gcs_profile *p, int i)
{
    const gcs_profile_cache *c = &p->caches[i];
    double llc_bytes, hit_ns;
    if (c->level <= 1 || c->ncpus < 1 || strcmp(c->type, "instruction") == 0)
        return c->size_bytes;
    for (int k = 0; k < p->ncaches; k++)
        if (p->caches[k].level > c->level && strcmp(p->caches[k].type, "instruction") != 0)
            return c->size_bytes; /* not the last level */
    gcs_llc_source src = gcs_profile_llc_effective(p, &llc_bytes, &hit_ns);
    if ((src != GCS_LLC_PROFILE && src != GCS_LLC_SWEEP) || !((double)c->size_bytes > 2 * llc_bytes))
        return c->size_bytes;
    for (int n = 0; n < p->nnodes; n++)
        for (int k = 0; k < p->nodes[n].ncpus; k++)
            if (p->nodes[n].cpus[k] == c->cpus[0] && c->ncpus < p->nodes[n].ncpus) {
                uint64_t line = c->line_bytes > 0 ? (uint64_t)c->line_bytes : 64;
                uint64_t bytes = (uint64_t)llc_bytes / line * line;
                return bytes >= line ? bytes : line;
            }
    return c->size_bytes;
}
