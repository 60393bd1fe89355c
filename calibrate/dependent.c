/* dependent.c -- what a dependent load costs by working set, on the
 * collector's pages: dependent_load_ns, model v2's price of a chain's next
 * object (docs/model.md, "Dependent misses: the chase's price").
 *
 * The latency sweep (memory.c, microbench/chase.c's gcs_chase_build)
 * walks its lines in TLB-sized groups on huge pages, on purpose: it
 * measures the caches, and its plateaus give the effective LLC and
 * llc_hit_ns.  A marker following a linked list laid out out of address
 * order does neither: every step lands on another page than the last, at
 * random over the heap, and the collector's heap is on 4 KiB pages (it
 * does not ask for huge ones).  On the 2-vCPU Intel VM a chain of 200 000
 * such objects marked at 47 ns a step where llc_hit_ns said 31: the walks,
 * and the LLC seen at random rather than in groups (docs/model.md has the
 * measurements).  No overlap hides a dependent load, so its price is
 * simply what the same chase costs, and only a chase measures that:
 *
 *   one buffer on 4 KiB pages (MADV_NOHUGEPAGE), sized from 256 KiB up to
 *   4 x the effective LLC (at least 64 MiB, at most 1 GiB); at each size a
 *   uniformly random cycle over its lines (gcs_chase_build_random), chased
 *   on the profile's first CPU, median of the repetitions.
 *
 * The model reads the curve at the heap's footprint (live_lines x 64 B),
 * interpolated in log size (gcs_profile_dependent_load). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "gcscale/calibrate.h"
#include "gcscale/microbench.h"
#include "calibrate_internal.h"

#define MIN_BYTES (256ull << 10)
#define MIN_TOP (64ull << 20)
#define MAX_TOP (1ull << 30)
/* seconds per MiB of the largest set, linking and chasing every size
 * (measured on the 2-vCPU Intel VM: about 2.5 s for 96 MiB, full) */
#define S_PER_MIB 0.025

typedef struct dep_job {
    gcs_chase_buf *b;
    int cpu, reps, quick, pinned, npts, rc;
    gcs_chase_sweep_point pts[GCS_SWEEP_MAX_POINTS];
    gcs_err err;
} dep_job;

static uint64_t top_bytes(const gcs_profile *p)
{
    double llc, hit;
    gcs_profile_llc_effective(p, &llc, &hit);
    uint64_t top = llc > 0 ? (uint64_t)(4 * llc) : MIN_TOP;
    return top < MIN_TOP ? MIN_TOP : top > MAX_TOP ? MAX_TOP : top;
}

static void *chase_sizes(void *arg)
{
    dep_job *j = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(j->cpu, &set);
    j->pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    uint64_t top = gcs_chase_buf_info_get(j->b)->size_bytes;
    j->rc = 0;
    for (uint64_t s = MIN_BYTES; s <= top && j->npts < GCS_SWEEP_MAX_POINTS; s *= 2) {
        /* the fine points (1.5 x) where the full run has the time: the
         * curve turns steeply past the LLC */
        for (int half = 0; half < (j->quick ? 1 : 2) && j->npts < GCS_SWEEP_MAX_POINTS; half++) {
            uint64_t size = half ? s + s / 2 : s;
            if (size > top)
                break;
            if (gcs_chase_build_random(j->b, size, 0xdeb + (uint64_t)j->npts, &j->err) < 0) {
                j->rc = -1;
                return NULL;
            }
            const gcs_chase_buf_info *in = gcs_chase_buf_info_get(j->b);
            /* a few passes over small sets, ~10-20 ms over large ones, as the sweep */
            gcs_chase_params prm = {.rw = 0, .reps = j->reps, .steps = in->cycle_lines * 2};
            if (prm.steps < (1u << 16))
                prm.steps = 1u << 16;
            if (prm.steps > (1u << 18))
                prm.steps = 1u << 18;
            gcs_chase_result r;
            if (gcs_chase_measure(j->b, &prm, &r, &j->err) < 0) {
                j->rc = -1;
                return NULL;
            }
            j->pts[j->npts++] = (gcs_chase_sweep_point){in->cycle_bytes, r.median_ns, r.p10_ns, r.p90_ns};
        }
    }
    return NULL;
}

static int first_cpu(const gcs_profile *p)
{
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i].ncpus > 0)
            return p->nodes[i].cpus[0];
    return -1;
}

int gcs_calibrate_dependent_load(int quick, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    dep_job j = {.cpu = first_cpu(p), .reps = quick ? 3 : 5, .quick = quick};
    if (j.cpu < 0) {
        gcs_err_set(err, "dependent load: the profile lists no CPU");
        return -1;
    }
    uint64_t top = top_bytes(p);
    if (gcs_chase_check_size(top, err) < 0)
        return -1;
    double t0 = (double)gcs_now_ns();
    /* first touch from this thread: one node's memory, as the collector's
     * heap on a one-node machine; on several nodes the CPU's node is the
     * one the model's M1 row prices (local) */
    j.b = gcs_chase_buf_new(NULL, top, -1, GCS_HUGE_OFF, err);
    if (!j.b)
        return -1;
    pthread_t th;
    if (pthread_create(&th, NULL, chase_sizes, &j) != 0) {
        gcs_chase_buf_free(j.b);
        gcs_err_set(err, "dependent load: cannot start a thread");
        return -1;
    }
    pthread_join(th, NULL);
    uint64_t huge_bytes = gcs_chase_buf_info_get(j.b)->huge_bytes;
    gcs_chase_buf_free(j.b);
    if (j.rc < 0) {
        *err = j.err;
        return -1;
    }
    if (!j.pinned) {
        gcs_err_set(err, "dependent load: cannot pin to CPU %d", j.cpu);
        return -1;
    }
    double sizes[GCS_SWEEP_MAX_POINTS], ns[GCS_SWEEP_MAX_POINTS];
    json_t *pts = json_array();
    for (int i = 0; i < j.npts; i++) {
        sizes[i] = (double)j.pts[i].size_bytes;
        ns[i] = j.pts[i].median_ns;
        json_array_append_new(pts, json_pack("{s:I, s:f, s:f, s:f}", "size_bytes", (json_int_t)j.pts[i].size_bytes,
                                             "median_ns", j.pts[i].median_ns, "p10_ns", j.pts[i].p10_ns, "p90_ns",
                                             j.pts[i].p90_ns));
    }
    if (gcs_profile_set_dependent_load(p, sizes, ns, j.npts, err) < 0) {
        json_decref(pts);
        return -1;
    }
    *details = json_pack("{s:i, s:s, s:I, s:I, s:i, s:f, s:o}", "cpu", j.cpu, "pages", "4k", "huge_bytes",
                         (json_int_t)huge_bytes, "top_bytes", (json_int_t)top, "reps", j.reps, "seconds",
                         ((double)gcs_now_ns() - t0) / 1e9, "points", pts);
    return 0;
}

double _gcs_calibrate_dependent_load_work(const gcs_profile *p, int quick)
{
    uint64_t top = p ? top_bytes(p) : MIN_TOP;
    return (double)(top >> 20) * S_PER_MIB * (quick ? 0.5 : 1);
}

void _gcs_calibrate_dependent_load_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    json_t *details = NULL;
    gcs_err err = {{0}};
    double w = _gcs_calibrate_dependent_load_work(p, quick);
    gcs_progress_step(pr, "dependent load (random chase on 4 KiB pages by working set)", w);
    /* optional, as the gc steps: a failure keeps the calibration, and the
     * model prices a dependent miss as before */
    if (gcs_calibrate_dependent_load(quick, p, &details, &err) < 0)
        details = json_pack("{s:s, s:s}", "note", "not measured: the step failed", "error", err.msg);
    gcs_progress_done(pr, w);
    json_object_set_new(gcs_profile_calibration(p), "dependent_load", details);
}
