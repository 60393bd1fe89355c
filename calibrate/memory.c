/* memory.c -- a calibration's measurements of the memory system, one memory
 * node at a time (_gcs_calibrate_measure_node, called by gcs_calibrate_run
 * in calibrate.c): its chase buffers, the working-set sweep and the
 * effective LLC, latency, occupancy with both fits, bandwidth and the
 * latency with page walks, each figure checked against its physical bounds.
 *
 * Order of work, per memory node m:
 *   1. one chase buffer on m (transparent huge pages when the system offers
 *      them, so the latency is the memory's and not the page walker's);
 *      on the first node the working-set sweep runs on it before it is
 *      linked into its full cycle;
 *   2. read and RW latency from every CPU node (a thread pinned there);
 *   3. occupancy load points for read and RW, then both fits;
 *   4. read bandwidth with every CPU loading m;
 *   4b. the buffer relinked into one uniformly random cycle: the latency
 *      with page walks from every CPU node (latency_full_random_ns, huge
 *      pages when the system offers them);
 *   5. the other page size (MADV_NOHUGEPAGE) from m's local CPU node, for
 *      comparison, then relinked as in 4b for the 4 KiB full-random
 *      latency from every CPU node.
 * One buffer serves 2-4b so the costly part (faulting 1 GiB) happens once
 * per node and page size.
 *
 * The profile gets the medians and the open-model S_O (the paper's); every
 * detail goes into extra["calibration"] so a profile can be audited later. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gcscale/calibrate.h"
#include "gcscale/microbench.h"
#include "gcscale/occfit.h"
#include "gcscale/profile.h"
#include "gcscale/topology.h"
#include "calibrate_internal.h"

/* ---- work done in a thread pinned to a CPU node -------------------------- */

typedef struct pinned_job {
    gcs_chase_buf *b;
    int what;                 /* 0 latency, 1 sweep */
    gcs_chase_params prm;
    gcs_chase_result res;
    int sweep_reps, sweep_fine;
    gcs_chase_sweep_point pts[GCS_SWEEP_MAX_POINTS];
    int npts;
    int rc;
    gcs_err err;
} pinned_job;

static void *pinned_job_fn(void *arg)
{
    pinned_job *j = arg;
    if (j->what == 0)
        j->rc = gcs_chase_measure(j->b, &j->prm, &j->res, &j->err);
    else
        j->rc = gcs_chase_sweep(j->b, 4096, j->sweep_fine, j->sweep_reps, 0, j->pts, &j->npts,
                                &j->err);
    return NULL;
}

static int run_on_node(_gcs_calibrate_ctx *c, int cpu_node, pinned_job *j, gcs_err *err)
{
    char warn[256] = "";
    const gcs_topo_node *n = gcs_topo_node_at(c->t, cpu_node);
    /* A CPU-less node (memory only) has nothing to pin to: run unpinned. */
    int node = n && n->ncpus > 0 ? cpu_node : -1;
    if (gcs_topo_run_pinned(c->t, -1, node, pinned_job_fn, j, warn, sizeof warn, err) < 0)
        return -1;
    _gcs_calibrate_add_warning(c, warn);
    if (j->rc < 0) {
        *err = j->err;
        return -1;
    }
    return 0;
}

static json_t *latency_json(int cpu_node, int mem_node, const char *access, gcs_huge huge,
                            const gcs_chase_result *r)
{
    return json_pack("{s:i, s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:i, s:I, s:o, s:o}", "cpu_node",
                     cpu_node, "mem_node", mem_node, "access", access, "huge_pages",
                     gcs_chase_huge_name(huge), "median_ns", _gcs_calibrate_num(r->median_ns), "p10_ns",
                     _gcs_calibrate_num(r->p10_ns), "p90_ns", _gcs_calibrate_num(r->p90_ns), "min_ns",
                     _gcs_calibrate_num(r->min_ns), "max_ns", _gcs_calibrate_num(r->max_ns), "reps", r->reps,
                     "steps_per_rep", (json_int_t)r->steps_per_rep, "llc_misses_per_step",
                     _gcs_calibrate_num(r->llc_misses_per_step), "seconds", _gcs_calibrate_num(r->seconds));
}

static json_t *buffer_json(const gcs_chase_buf_info *in)
{
    return json_pack("{s:i, s:s, s:I, s:I, s:b, s:o, s:o, s:o, s:s}", "mem_node", in->mem_node,
                     "huge_pages", gcs_chase_huge_name(in->huge), "size_bytes",
                     (json_int_t)in->size_bytes, "huge_bytes", (json_int_t)in->huge_bytes, "bound",
                     in->bound, "on_node_fraction",
                     in->on_node_fraction >= 0 ? json_real(in->on_node_fraction) : json_null(),
                     "alloc_s", _gcs_calibrate_num(in->alloc_s), "build_s", _gcs_calibrate_num(in->build_s), "warning",
                     in->warning);
}

static gcs_chase_buf *new_buffer(_gcs_calibrate_ctx *c, uint64_t size, int mem_node, gcs_huge huge, int build,
                                 gcs_err *err)
{
    gcs_chase_buf *b = gcs_chase_buf_new(c->t, size, mem_node, huge, err);
    if (!b)
        return NULL;
    if (build && gcs_chase_build(b, 0, c->opts->seed ? c->opts->seed : 0x5eed, err) < 0) {
        gcs_chase_buf_free(b);
        return NULL;
    }
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
    if (!in->bound)
        c->all_bound = 0;
    _gcs_calibrate_add_warning(c, in->warning);
    return b;
}

static const char *bound_name(int bound)
{
    return bound < 0 ? "lower" : bound > 0 ? "upper" : "none";
}

static json_t *fit_json(int rc, const gcs_occfit_result *f, const gcs_err *e)
{
    if (rc < 0)
        return json_pack("{s:s}", "error", e->msg);
    return json_pack("{s:o, s:s, s:o, s:o, s:i, s:i, s:o, s:[o, o]}", "s_o_ns", _gcs_calibrate_num(f->s_o_ns),
                     "bound", bound_name(f->bound), "s_o_max_ns", _gcs_calibrate_num(f->s_o_max_ns),
                     "rms_rel_residual", _gcs_calibrate_num(f->rms_rel_residual), "npoints", f->npoints,
                     "iterations", f->iterations, "s_o_stderr_ns", _gcs_calibrate_num(f->s_o_stderr_ns),
                     "s_o_ci95_ns", _gcs_calibrate_num(f->s_o_ci95_lo_ns), _gcs_calibrate_num(f->s_o_ci95_hi_ns));
}

/* An unreliable S_O's stand-in when 1/max throughput is not below M1. */
#define STAND_IN_OF_M1 0.99

/* One set of load points and both fits. */
typedef struct occ_attempt {
    gcs_occ_result r;
    gcs_occfit_result fo, fc;
    gcs_err eo, ec;
    int ro, rcl;
    int nchains, reps;
    gcs_occ_check chk;
} occ_attempt;

static gcs_topo_placement occ_placement(const _gcs_calibrate_ctx *c)
{
    return c->opts->placement == GCS_TOPO_PLACE_DEFAULT ? GCS_TOPO_PLACE_CORES : c->opts->placement;
}

/* The occupancy's "placement", "pu_map", "pu_map_logical": the CPUs of
 * load threads 1..N in order (the plan's; empty where nothing is pinned). */
static void occ_record_pu_map(const _gcs_calibrate_ctx *c, int mem_node, int max_threads, json_t *out)
{
    gcs_occ_plan plan;
    gcs_err ignored;
    if (gcs_occ_plan_init_placed(&plan, c->t, mem_node, max_threads, occ_placement(c), &ignored) < 0)
        return;
    int n = plan.cpus ? (plan.ncpus < plan.max_threads ? plan.ncpus : plan.max_threads) : 0;
    int *logical = calloc(n > 0 ? (size_t)n : 1, sizeof *logical);
    if (logical) {
        for (int i = 0; i < n; i++)
            logical[i] = gcs_topo_cpu_logical(c->t, plan.cpus[i]);
        gcs_json_set_pu_map(out, gcs_topo_placement_name(plan.cpus ? occ_placement(c) : GCS_TOPO_PLACE_NONE),
                            plan.cpus, logical, n);
    }
    free(logical);
    gcs_occ_plan_free(&plan);
}

static int occ_attempt_run(_gcs_calibrate_ctx *c, gcs_chase_buf *b, int mem_node, int rw, double m1, int real_cpus,
                           const int *chains, int nchains, int reps, occ_attempt *a, gcs_err *err)
{
    /* The plan (microbench/occplan.c): the node's CPUs first; on a
     * synthetic topology real_cpus threads, unpinned. */
    gcs_occ_plan plan;
    if (gcs_occ_plan_init_placed(&plan, c->t, mem_node, c->synthetic ? real_cpus : 0, occ_placement(c), err) < 0)
        return -1;
    gcs_occ_opts o = {.rw = rw, .chain_counts = chains, .nchain_counts = nchains, .reps = reps};
    gcs_occ_plan_opts(&plan, &o);
    int rc = gcs_occ_measure(b, c->t, &o, &a->r, err);
    gcs_occ_plan_free(&plan);
    if (rc < 0)
        return -1;
    _gcs_calibrate_add_warning(c, a->r.warning);
    a->nchains = nchains;
    a->reps = reps;
    a->eo = a->ec = (gcs_err){""};
    a->ro = gcs_occfit_open(a->r.points, a->r.npoints, m1, &a->fo, &a->eo);
    a->rcl = gcs_occfit_closed(a->r.points, a->r.npoints, m1, 0, &a->fc, &a->ec);
    /* The fallback S_O and the N = 1 cross-check of M1 (occplan.c). */
    gcs_occ_check_points(&a->r, m1, &a->chk);
    return 0;
}

/* Whether the open fit gave a physical S_O (gcs_occfit_reliable); reason
 * says why not. */
static int occ_attempt_reliable(const occ_attempt *a, char *reason, size_t len)
{
    if (a->ro < 0) {
        snprintf(reason, len, "fit failed: %.300s", a->eo.msg);
        return 0;
    }
    return gcs_occfit_reliable(&a->fo, reason, len);
}

static json_t *points_json(const gcs_occ_result *r)
{
    json_t *pts = json_array();
    for (int i = 0; i < r->npoints; i++)
        json_array_append_new(pts, json_pack("{s:i, s:i, s:o, s:I, s:o, s:o}", "threads", r->threads[i],
                                             "chains", r->chains[i], "outstanding",
                                             _gcs_calibrate_num(r->points[i].outstanding), "steps_per_chain",
                                             (json_int_t)r->steps_per_chain[i], "throughput_per_ns",
                                             _gcs_calibrate_num(r->points[i].throughput_per_ns), "latency_ns",
                                             _gcs_calibrate_num(r->points[i].latency_ns)));
    return pts;
}

/* Occupancy of one memory node and access: load points and fits; a fit
 * that gives no physical S_O (at a bound, failed, undetermined) is
 * measured again with more load points (the full plan's chain counts) and
 * twice the repetitions; if that fails too the profile gets the fallback
 * 1/max throughput (below M1), an upper limit of S_O that is never 0, and
 * occupancy_ns.<access>[node] is marked unreliable with the reason. */
static int occupancy(_gcs_calibrate_ctx *c, gcs_chase_buf *b, gcs_profile *p, int mem_node, int rw, double m1,
                     int real_cpus, json_t *out, gcs_err *err)
{
    occ_attempt *a = malloc(sizeof *a);
    if (!a) {
        gcs_err_set(err, "occupancy: out of memory");
        return -1;
    }
    if (occ_attempt_run(c, b, mem_node, rw, m1, real_cpus, c->pl.chains, c->pl.nchains,
                        c->pl.occ_reps, a, err) < 0) {
        free(a);
        return -1;
    }
    occ_record_pu_map(c, mem_node, c->synthetic ? real_cpus : 0, out);
    const char *what = rw ? "rw" : "read";
    char reason[400] = "", first_reason[400] = "";
    int reliable = occ_attempt_reliable(a, reason, sizeof reason);
    if (!reliable) {
        json_object_set_new(out, "first_attempt",
                            json_pack("{s:o, s:o, s:s}", "points", points_json(&a->r), "open",
                                      fit_json(a->ro, &a->fo, &a->eo), "why_again", reason));
        snprintf(first_reason, sizeof first_reason, "%s", reason);
        static const int more_chains[] = {1, 2, 3, 4, 6, 8, 12, 16};
        if (occ_attempt_run(c, b, mem_node, rw, m1, real_cpus, more_chains, 8, 2 * c->pl.occ_reps,
                            a, err) < 0) {
            free(a);
            return -1;
        }
        reliable = occ_attempt_reliable(a, reason, sizeof reason);
    }
    gcs_occfit_result *fo = &a->fo;
    double n1 = a->chk.n1_latency_ns;
    char n1_note[168] = "";
    if (a->chk.n1_disagrees)
        snprintf(n1_note, sizeof n1_note, "; %s", a->chk.n1_note);
    char constant[64];
    snprintf(constant, sizeof constant, "occupancy_ns.%s[%d]", what, mem_node);
    double *s_o = &p->occupancy_ns[rw][mem_node];
    const char *used = "open";
    /* not_measured: the S_O that goes into the profile is not a fitted
     * service time; it goes into the warnings and next to the fit
     * (s_o_warning), and `gcscale calibrate` prints it as one line.
     * A doubt about an S_O that was fitted (an M1 the N = 1 point
     * disagrees with) is recorded in the warnings only. */
    char not_measured[1024] = "", doubt[800] = "";
    if (reliable) {
        *s_o = fo->s_o_ns;
        /* a poor fit is not reliable (gcs_occfit_reliable): only this doubt is left */
        if (n1_note[0])
            snprintf(doubt, sizeof doubt,
                     "occupancy %s memory node %d: S_O = %.2f ns is fitted against an M1 the load "
                     "points disagree with%s",
                     what, mem_node, fo->s_o_ns, n1_note);
    } else {
        /* Never 0: the largest S_O the busiest load point allows (one
         * server serves at most 1/S_O requests per ns), kept below M1;
         * both are upper limits of S_O, so the stand-in errs towards
         * more contention, not none. */
        double fallback = a->chk.s_o_fallback_ns;
        const char *from = "1/max throughput, an upper limit";
        used = "unreliable: 1/max_throughput";
        if (!(fallback > 0 && fallback < m1)) {
            fallback = STAND_IN_OF_M1 * m1;
            from = "just below M1, the upper limit";
            used = "unreliable: below M1";
        }
        *s_o = fallback;
        snprintf(not_measured, sizeof not_measured,
                 "%s S_O of memory node %d is unreliable (%s%s%s); the contention term uses S_O = "
                 "%.2f ns (%s) and the profile marks %s unreliable; rerun on an idle machine",
                 what, mem_node, reason,
                 first_reason[0] ? ", also after measuring again with 8 chain counts and "
                                   "twice the repetitions" : "",
                 n1_note, *s_o, from, constant);
        gcs_profile_set_unreliable(p, constant, reason);
    }
    _gcs_calibrate_record_bound(c->cal, constant, reliable ? "ok" : "unreliable");
    gcs_profile_uncertainty u;
    gcs_profile_uncertainty_init(&u);
    if (a->ro == 0) {
        u.std_error = fo->s_o_stderr_ns;
        u.ci95_lo = fo->s_o_ci95_lo_ns;
        u.ci95_hi = fo->s_o_ci95_hi_ns;
        u.residual_rms_rel = fo->rms_rel_residual;
        u.n = fo->npoints;
    }
    gcs_profile_set_uncertainty(p, constant, &u);
    _gcs_calibrate_add_warning(c, not_measured);
    _gcs_calibrate_add_warning(c, doubt);
    json_object_set_new(out, "mem_node", json_integer(mem_node));
    json_object_set_new(out, "access", json_string(what));
    json_object_set_new(out, "m1_ns", _gcs_calibrate_num(m1));
    json_object_set_new(out, "points", points_json(&a->r));
    json_object_set_new(out, "open", fit_json(a->ro, fo, &a->eo));
    json_object_set_new(out, "closed", fit_json(a->rcl, &a->fc, &a->ec));
    json_object_set_new(out, "s_o_ns", _gcs_calibrate_num(*s_o));
    json_object_set_new(out, "s_o_from", json_string(used));
    json_object_set_new(out, "s_o_bound", json_string(a->ro == 0 ? bound_name(fo->bound) : "none"));
    json_object_set_new(out, "s_o_warning", not_measured[0] ? json_string(not_measured) : json_null());
    json_object_set_new(out, "n1_latency_ns", _gcs_calibrate_num(n1));
    json_object_set_new(out, "seconds", _gcs_calibrate_num(a->r.seconds));
    free(a);
    return 0;
}

/* 4b: relinks b into one uniformly random cycle and chases it from every
 * CPU node: the latency with page walks of b's page size.  When the kernel
 * did not back a huge-page buffer with huge pages, the profile gets no
 * huge-page figure for any pair but the reason (the first node's that
 * failed); the measurements stay in the details. */
static int full_random(_gcs_calibrate_ctx *c, gcs_profile *p, gcs_chase_buf *b, int m, gcs_pages k, gcs_err *err)
{
    int nn = gcs_topo_nnodes(c->t);
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
    const char *pages = k == GCS_PAGES_HUGE ? "huge pages" : "4 KiB pages";
    char name[128];
    double w = c->pl.w_link_random * (double)in->size_bytes / (double)(1u << 30);
    snprintf(name, sizeof name, "full-random cycle (%s): memory node %d", pages, m);
    uint64_t t0 = _gcs_calibrate_step_begin(c, name, w);
    if (gcs_chase_build_random(b, 0, c->opts->seed ? c->opts->seed : 0x5eed, err) < 0)
        return -1;
    _gcs_calibrate_step_end(c, name, w, t0);
    char why[256] = "";
    if (k == GCS_PAGES_HUGE && in->huge_bytes < in->size_bytes / 2)
        snprintf(why, sizeof why,
                 "not measured: huge pages were asked for (MADV_HUGEPAGE) but the kernel backed "
                 "only %llu of the %llu MiB buffer on memory node %d with them",
                 (unsigned long long)(in->huge_bytes >> 20),
                 (unsigned long long)(in->size_bytes >> 20), m);
    if (why[0]) {
        free(p->full_random_ns[k]);
        p->full_random_ns[k] = NULL;
        if (!p->full_random_note[k][0])
            snprintf(p->full_random_note[k], sizeof p->full_random_note[k], "%s", why);
        _gcs_calibrate_add_warning(c, why);
    } else if (!p->full_random_note[k][0] && gcs_profile_alloc_full_random(p, k) < 0) {
        gcs_err_set(err, "calibrate: out of memory");
        return -1;
    }
    json_t *out = json_object_get(c->cal, "full_random");
    for (int cn = 0; cn < nn; cn++) {
        snprintf(name, sizeof name, "full-random latency (%s): CPU node %d -> memory node %d", pages,
                 cn, m);
        t0 = _gcs_calibrate_step_begin(c, name, c->pl.w_full_random);
        pinned_job j = {.b = b, .what = 0,
                        .prm = {.rw = 0, .reps = c->pl.fr_reps, .steps = c->pl.fr_steps,
                                .count_llc = c->count_llc}};
        if (run_on_node(c, cn, &j, err) < 0)
            return -1;
        size_t at = (size_t)cn * (size_t)nn + (size_t)m;
        if (p->full_random_ns[k])
            p->full_random_ns[k][at] = j.res.median_ns;
        json_t *r = latency_json(cn, m, "read", in->huge, &j.res);
        json_object_set_new(r, "pages", json_string(gcs_profile_pages_name(k)));
        json_object_set_new(r, "huge_bytes", json_integer((json_int_t)in->huge_bytes));
        json_object_set_new(r, "build_s", _gcs_calibrate_num(in->build_s));
        /* Unclamped, unlike the profile's page_walk_ns: the noise shows. */
        json_object_set_new(r, "page_walk_ns",
                            _gcs_calibrate_num(j.res.median_ns - p->latency_ns[GCS_ACCESS_READ][at]));
        json_array_append_new(out, r);
        _gcs_calibrate_step_end(c, name, c->pl.w_full_random, t0);
    }
    return 0;
}

/* Where M1 is measured from: the node's own CPUs, or for a memory-only
 * node the CPU node nearest to it. */
static int local_cpu_node(const gcs_topo *t, int mem_node)
{
    int n = gcs_topo_local_cpu_node(t, mem_node);
    return n >= 0 ? n : 0;
}

int _gcs_calibrate_measure_node(_gcs_calibrate_ctx *c, gcs_profile *p, int m, uint64_t size, gcs_huge primary,
                                int thp, int real_cpus, gcs_err *err)
{
    int nn = gcs_topo_nnodes(c->t);
    char name[96];
    double gib = (double)size / (double)(1u << 30);
    double w_buf = (primary == GCS_HUGE_ON ? c->pl.w_buffer : c->pl.w_buffer_4k) * gib;
    double w_var = (primary == GCS_HUGE_ON ? c->pl.w_buffer_4k : c->pl.w_buffer) * gib +
                   (1 + c->pl.variant_rw) * c->pl.w_latency;
    /* 1. buffer, and on node 0 the sweep before the full cycle is linked. */
    snprintf(name, sizeof name, "node %d: buffer (%llu MiB)", m, (unsigned long long)(size >> 20));
    uint64_t t0 = _gcs_calibrate_step_begin(c, name, w_buf);
    gcs_chase_buf *b = new_buffer(c, size, m, primary, m != 0, err);
    if (!b)
        return -1;
    _gcs_calibrate_step_end(c, name, w_buf, t0);
    if (m == 0) {
        snprintf(name, sizeof name, "sweep (latency vs working set, CPU node %d)", local_cpu_node(c->t, 0));
        t0 = _gcs_calibrate_step_begin(c, name, c->pl.w_sweep);
        pinned_job j = {.b = b, .what = 1, .sweep_reps = c->pl.sweep_reps,
                        .sweep_fine = c->pl.sweep_fine};
        if (run_on_node(c, local_cpu_node(c->t, 0), &j, err) < 0)
            goto fail;
        json_t *pts = json_array();
        for (int i = 0; i < j.npts; i++)
            json_array_append_new(pts, json_pack("{s:I, s:o, s:o, s:o}", "size_bytes",
                                                 (json_int_t)j.pts[i].size_bytes, "median_ns",
                                                 _gcs_calibrate_num(j.pts[i].median_ns), "p10_ns",
                                                 _gcs_calibrate_num(j.pts[i].p10_ns), "p90_ns",
                                                 _gcs_calibrate_num(j.pts[i].p90_ns)));
        json_object_set_new(c->cal, "sweep",
                            json_pack("{s:i, s:i, s:s, s:o}", "cpu_node", local_cpu_node(c->t, 0),
                                      "mem_node", 0, "huge_pages", gcs_chase_huge_name(primary),
                                      "points", pts));
        /* the effective LLC (formats/profile_llc.c) from the staircase */
        double sz[GCS_SWEEP_MAX_POINTS], lat[GCS_SWEEP_MAX_POINTS];
        for (int i = 0; i < j.npts; i++) {
            sz[i] = (double)j.pts[i].size_bytes;
            lat[i] = j.pts[i].median_ns;
        }
        p->has_llc_effective =
            gcs_profile_llc_from_sweep(sz, lat, j.npts, &p->llc_effective_bytes, &p->llc_hit_ns) == 0;
        if (gcs_chase_build(b, 0, c->opts->seed ? c->opts->seed : 0x5eed, err) < 0)
            goto fail;
        _gcs_calibrate_step_end(c, name, c->pl.w_sweep, t0);
    }
    json_array_append_new(json_object_get(c->cal, "buffers"), buffer_json(gcs_chase_buf_info_get(b)));

    /* 2. latency from every CPU node. */
    json_t *lat = json_object_get(c->cal, "latency");
    for (int cn = 0; cn < nn; cn++) {
        for (int rw = 0; rw < 2; rw++) {
            snprintf(name, sizeof name, "latency %s: CPU node %d -> memory node %d", rw ? "rw" : "read",
                     cn, m);
            double w = c->pl.w_latency;
            t0 = _gcs_calibrate_step_begin(c, name, w);
            pinned_job j = {.b = b, .what = 0,
                            .prm = {.rw = rw, .reps = c->pl.reps, .steps = c->pl.steps,
                                    .count_llc = c->count_llc}};
            if (run_on_node(c, cn, &j, err) < 0)
                goto fail;
            /* The physical bound, positive and finite: once more with
             * twice the repetitions, then an error (the profile has no
             * valid number to hold instead). */
            if (!(j.res.median_ns > 0 && isfinite(j.res.median_ns))) {
                j.prm.reps *= 2;
                if (run_on_node(c, cn, &j, err) < 0)
                    goto fail;
            }
            char constant[64];
            snprintf(constant, sizeof constant, "latency_ns.%s[%d][%d]", rw ? "rw" : "read", cn, m);
            if (!(j.res.median_ns > 0 && isfinite(j.res.median_ns))) {
                gcs_err_set(err, "calibrate: %s: the idle latency measured %g ns, also with %d "
                            "repetitions: rerun on an idle machine", constant, j.res.median_ns,
                            j.prm.reps);
                goto fail;
            }
            _gcs_calibrate_record_bound(c->cal, constant, "ok");
            p->latency_ns[rw][(size_t)cn * (size_t)nn + (size_t)m] = j.res.median_ns;
            json_array_append_new(lat, latency_json(cn, m, rw ? "rw" : "read", primary, &j.res));
            _gcs_calibrate_step_end(c, name, w, t0);
        }
    }

    /* 3. occupancy, with M1 the idle latency from the local CPU node. */
    int lc = local_cpu_node(c->t, m);
    for (int rw = 0; rw < 2; rw++) {
        snprintf(name, sizeof name, "occupancy %s: memory node %d", rw ? "rw" : "read", m);
        t0 = _gcs_calibrate_step_begin(c, name, c->pl.w_occupancy);
        json_t *o = json_object();
        json_array_append_new(json_object_get(c->cal, "occupancy"), o);
        double m1 = p->latency_ns[rw][(size_t)lc * (size_t)nn + (size_t)m];
        if (occupancy(c, b, p, m, rw, m1, real_cpus, o, err) < 0)
            goto fail;
        _gcs_calibrate_step_end(c, name, c->pl.w_occupancy, t0);
    }

    /* 4. bandwidth with every CPU (unpinned on a synthetic topology). */
    snprintf(name, sizeof name, "bandwidth: memory node %d", m);
    t0 = _gcs_calibrate_step_begin(c, name, c->pl.w_bandwidth);
    {
        gcs_bw_result bw;
        int ncpus = 0;
        int *cpus = gcs_occ_cpu_order(c->t, m, &ncpus);
        if (!cpus) {
            gcs_err_set(err, "bandwidth: out of memory");
            goto fail;
        }
        if (c->synthetic)
            ncpus = real_cpus;
        const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
        int rc = gcs_bw_measure(c->t, gcs_chase_buf_data(b), in->size_bytes,
                                c->synthetic ? NULL : cpus, ncpus, c->pl.bw_reps, &bw, err);
        /* Positive and finite, or once more with twice the repetitions. */
        if (rc == 0 && !(bw.best_gbs > 0 && isfinite(bw.best_gbs)))
            rc = gcs_bw_measure(c->t, gcs_chase_buf_data(b), in->size_bytes,
                                c->synthetic ? NULL : cpus, ncpus, 2 * c->pl.bw_reps, &bw, err);
        free(cpus);
        if (rc < 0)
            goto fail;
        _gcs_calibrate_add_warning(c, bw.warning);
        char constant[64];
        snprintf(constant, sizeof constant, "bandwidth_gbs[%d]", m);
        if (bw.best_gbs > 0 && isfinite(bw.best_gbs)) {
            p->bandwidth_gbs[m] = bw.best_gbs;
            /* The other bound, below the sum of the memory channels' peak,
             * needs the channels (count, speed), which neither hwloc nor
             * the kernel tells an unprivileged process. */
            _gcs_calibrate_record_bound(c->cal, constant,
                                        "unchecked: the memory channels' peak bandwidth is not "
                                        "known here, only > 0 is checked");
        } else {
            char w[400];
            snprintf(w, sizeof w, "bandwidth of memory node %d is unreliable (measured %g GB/s, "
                     "also with %d repetitions); the profile records 0 and marks %s unreliable "
                     "(the model does not use it); rerun on an idle machine",
                     m, bw.best_gbs, 2 * c->pl.bw_reps, constant);
            p->bandwidth_gbs[m] = 0;
            gcs_profile_set_unreliable(p, constant, "measured no bandwidth, also with twice the "
                                                    "repetitions");
            _gcs_calibrate_record_bound(c->cal, constant, "unreliable");
            _gcs_calibrate_add_warning(c, w);
        }
        json_array_append_new(json_object_get(c->cal, "bandwidth"),
                              json_pack("{s:i, s:o, s:o, s:i, s:i, s:I}", "mem_node", m, "best_gbs",
                                        _gcs_calibrate_num(bw.best_gbs), "median_gbs",
                                        _gcs_calibrate_num(bw.median_gbs),
                                        "threads", bw.threads, "reps", bw.reps, "bytes",
                                        (json_int_t)bw.bytes));
    }
    _gcs_calibrate_step_end(c, name, c->pl.w_bandwidth, t0);

    /* 4b. latency with page walks, this buffer's page size. */
    if (full_random(c, p, b, m, primary == GCS_HUGE_ON ? GCS_PAGES_HUGE : GCS_PAGES_4K, err) < 0)
        goto fail;
    gcs_chase_buf_free(b);
    b = NULL;

    /* 5. the other page size, for comparison. */
    if (thp) {
        gcs_huge other = primary == GCS_HUGE_ON ? GCS_HUGE_OFF : GCS_HUGE_ON;
        snprintf(name, sizeof name, "huge pages %s: memory node %d", gcs_chase_huge_name(other), m);
        t0 = _gcs_calibrate_step_begin(c, name, w_var);
        b = new_buffer(c, size, m, other, 1, err);
        if (!b)
            return -1;
        json_array_append_new(json_object_get(c->cal, "buffers"), buffer_json(gcs_chase_buf_info_get(b)));
        json_t *var = json_object_get(c->cal, "huge_page_variants");
        for (int rw = 0; rw <= c->pl.variant_rw; rw++) {
            pinned_job j = {.b = b, .what = 0,
                            .prm = {.rw = rw, .reps = c->pl.reps, .steps = c->pl.steps}};
            if (run_on_node(c, lc, &j, err) < 0)
                goto fail;
            json_array_append_new(var, latency_json(lc, m, rw ? "rw" : "read", other, &j.res));
        }
        _gcs_calibrate_step_end(c, name, w_var, t0);
        if (full_random(c, p, b, m, other == GCS_HUGE_ON ? GCS_PAGES_HUGE : GCS_PAGES_4K, err) < 0)
            goto fail;
        gcs_chase_buf_free(b);
        b = NULL;
    }
    return 0;
fail:
    gcs_chase_buf_free(b);
    return -1;
}
