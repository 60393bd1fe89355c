/* calibrate.c -- one calibration run: measure the machine, fill a profile.
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
#include <string.h>
#include <unistd.h>

#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/microbench.h"
#include "gcscale/occfit.h"
#include "gcscale/profile.h"
#include "gcscale/topology.h"
#include "calibrate_internal.h"

void gcs_calibrate_opts_init(gcs_calibrate_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->mode = GCS_CALIBRATE_FULL;
}

typedef struct plan {
    int reps;                 /* latency repetitions */
    uint64_t steps;           /* latency steps per repetition (0 = auto) */
    int sweep_reps, sweep_fine;
    int occ_reps;
    const int *chains;
    int nchains;
    int bw_reps;
    int variant_rw;           /* also measure RW with the other page size */
    int fr_reps;              /* full-random latency repetitions */
    uint64_t fr_steps;        /* and steps per repetition (0 = auto) */
    /* Progress weights: each step's seconds as measured on the 2-vCPU
     * development VM with a 1 GiB buffer (calibration.steps), so that the
     * progress line's percentage and time left follow the clock.  The
     * buffer weights scale with the buffer's size. */
    double w_buffer;          /* allocate and fault a huge-page buffer, per GiB */
    double w_buffer_4k;       /* the same with 4 KiB pages, and link it, per GiB */
    double w_sweep;
    double w_latency;         /* one latency measurement (one pair, read or RW) */
    double w_occupancy;       /* one access's load points and fits */
    double w_bandwidth;
    double w_gc;
    double w_link_random;     /* link a buffer into one random cycle, per GiB */
    double w_full_random;     /* one full-random latency measurement (one pair) */
} plan;

static const int quick_chains[] = {1, 2, 4, 8, 16};
static const int full_chains[] = {1, 2, 3, 4, 6, 8, 12, 16};

typedef struct ctx {
    const gcs_calibrate_opts *opts;
    plan pl;
    gcs_topo *t;
    int synthetic;
    gcs_progress own_pr, *pr; /* pr: own_pr, or the caller's (opts->progress) */
    json_t *cal;              /* extra["calibration"] */
    json_t *warnings, *steps;
    gcs_counters_info counters;
    int count_llc;
    int all_bound;
} ctx;

#define W_TOPOLOGY 0.05
/* The full-random steps' weights (seconds on the development VM, 1 GiB,
 * docs/microbench.md "Latency with page walks"). */
#define W_LINK_RANDOM 0.6
#define W_FULL_RANDOM_QUICK 0.8
#define W_FULL_RANDOM_FULL 2.4

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* "1 MiB", "1.5 MiB", "32 KiB": a size for a message. */
static void size_text(uint64_t bytes, char *buf, size_t len)
{
    gcs_format_bytes(bytes, GCS_BYTES_WORD, buf, len);
}

static void add_warning(ctx *c, const char *w)
{
    if (!w || !w[0])
        return;
    size_t i;
    json_t *v;
    json_array_foreach(c->warnings, i, v)
        if (strcmp(json_string_value(v), w) == 0)
            return;
    json_array_append_new(c->warnings, json_string(w));
}

/* Progress and step durations: begin announces a step, end records it. */
static uint64_t step_begin(ctx *c, const char *name, double work)
{
    gcs_progress_step(c->pr, name, work);
    return gcs_now_ns();
}

static void step_end(ctx *c, const char *name, double work, uint64_t t0)
{
    gcs_progress_done(c->pr, work);
    json_array_append_new(c->steps, json_pack("{s:s, s:o}", "step", name, "seconds",
                                              num((double)(gcs_now_ns() - t0) / 1e9)));
}

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

static int run_on_node(ctx *c, int cpu_node, pinned_job *j, gcs_err *err)
{
    char warn[256] = "";
    const gcs_topo_node *n = gcs_topo_node_at(c->t, cpu_node);
    /* A CPU-less node (memory only) has nothing to pin to: run unpinned. */
    int node = n && n->ncpus > 0 ? cpu_node : -1;
    if (gcs_topo_run_pinned(c->t, -1, node, pinned_job_fn, j, warn, sizeof warn, err) < 0)
        return -1;
    add_warning(c, warn);
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
                     gcs_chase_huge_name(huge), "median_ns", num(r->median_ns), "p10_ns",
                     num(r->p10_ns), "p90_ns", num(r->p90_ns), "min_ns", num(r->min_ns), "max_ns",
                     num(r->max_ns), "reps", r->reps, "steps_per_rep", (json_int_t)r->steps_per_rep,
                     "llc_misses_per_step", num(r->llc_misses_per_step), "seconds", num(r->seconds));
}

static json_t *buffer_json(const gcs_chase_buf_info *in)
{
    return json_pack("{s:i, s:s, s:I, s:I, s:b, s:o, s:o, s:o, s:s}", "mem_node", in->mem_node,
                     "huge_pages", gcs_chase_huge_name(in->huge), "size_bytes",
                     (json_int_t)in->size_bytes, "huge_bytes", (json_int_t)in->huge_bytes, "bound",
                     in->bound, "on_node_fraction",
                     in->on_node_fraction >= 0 ? json_real(in->on_node_fraction) : json_null(),
                     "alloc_s", num(in->alloc_s), "build_s", num(in->build_s), "warning",
                     in->warning);
}

static gcs_chase_buf *new_buffer(ctx *c, uint64_t size, int mem_node, gcs_huge huge, int build,
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
    add_warning(c, in->warning);
    return b;
}

/* calibration.bounds: for each constant, how its physical bounds were
 * checked ("ok", "unchecked: why", "unreliable"; docs/machine-profile.md). */
static void record_bound(json_t *cal, const char *constant, const char *status)
{
    json_t *bounds = json_object_get(cal, "bounds");
    if (!json_is_object(bounds)) {
        bounds = json_object();
        json_object_set_new(cal, "bounds", bounds);
    }
    json_object_set_new(bounds, constant, json_string(status));
}

static const char *bound_name(int bound)
{
    return bound < 0 ? "lower" : bound > 0 ? "upper" : "none";
}

static json_t *fit_json(int rc, const gcs_occfit_result *f, const gcs_err *e)
{
    if (rc < 0)
        return json_pack("{s:s}", "error", e->msg);
    return json_pack("{s:o, s:s, s:o, s:o, s:i, s:i, s:o, s:[o, o]}", "s_o_ns", num(f->s_o_ns),
                     "bound", bound_name(f->bound), "s_o_max_ns", num(f->s_o_max_ns),
                     "rms_rel_residual", num(f->rms_rel_residual), "npoints", f->npoints,
                     "iterations", f->iterations, "s_o_stderr_ns", num(f->s_o_stderr_ns),
                     "s_o_ci95_ns", num(f->s_o_ci95_lo_ns), num(f->s_o_ci95_hi_ns));
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

static gcs_topo_placement occ_placement(const ctx *c)
{
    return c->opts->placement == GCS_TOPO_PLACE_DEFAULT ? GCS_TOPO_PLACE_CORES : c->opts->placement;
}

/* The occupancy's "placement", "pu_map", "pu_map_logical": the CPUs of
 * load threads 1..N in order (the plan's; empty where nothing is pinned). */
static void occ_record_pu_map(const ctx *c, int mem_node, int max_threads, json_t *out)
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

static int occ_attempt_run(ctx *c, gcs_chase_buf *b, int mem_node, int rw, double m1, int real_cpus,
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
    add_warning(c, a->r.warning);
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
                                             num(r->points[i].outstanding), "steps_per_chain",
                                             (json_int_t)r->steps_per_chain[i], "throughput_per_ns",
                                             num(r->points[i].throughput_per_ns), "latency_ns",
                                             num(r->points[i].latency_ns)));
    return pts;
}

/* Occupancy of one memory node and access: load points and fits; a fit
 * that gives no physical S_O (at a bound, failed, undetermined) is
 * measured again with more load points (the full plan's chain counts) and
 * twice the repetitions; if that fails too the profile gets the fallback
 * 1/max throughput (below M1), an upper limit of S_O that is never 0, and
 * occupancy_ns.<access>[node] is marked unreliable with the reason. */
static int occupancy(ctx *c, gcs_chase_buf *b, gcs_profile *p, int mem_node, int rw, double m1,
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
    record_bound(c->cal, constant, reliable ? "ok" : "unreliable");
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
    add_warning(c, not_measured);
    add_warning(c, doubt);
    json_object_set_new(out, "mem_node", json_integer(mem_node));
    json_object_set_new(out, "access", json_string(what));
    json_object_set_new(out, "m1_ns", num(m1));
    json_object_set_new(out, "points", points_json(&a->r));
    json_object_set_new(out, "open", fit_json(a->ro, fo, &a->eo));
    json_object_set_new(out, "closed", fit_json(a->rcl, &a->fc, &a->ec));
    json_object_set_new(out, "s_o_ns", num(*s_o));
    json_object_set_new(out, "s_o_from", json_string(used));
    json_object_set_new(out, "s_o_bound", json_string(a->ro == 0 ? bound_name(fo->bound) : "none"));
    json_object_set_new(out, "s_o_warning", not_measured[0] ? json_string(not_measured) : json_null());
    json_object_set_new(out, "n1_latency_ns", num(n1));
    json_object_set_new(out, "seconds", num(a->r.seconds));
    free(a);
    return 0;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* gc_steals.a is the median over the steal points of steals / ((P - 1)
 * ln T1) (gccost.c), so its interval is the distribution-free one of a
 * median: the order statistics n/2 -+ 0.98 sqrt(n) of the points' ratios,
 * and its standard error that interval's half width / 1.96.  Read from
 * the fit's details ("steals": {"points": [...]}); nothing is recorded
 * when they are not there. */
static void steals_uncertainty(gcs_profile *p, json_t *steals, json_t *cal)
{
    json_t *pts = json_object_get(steals, "points"), *pt;
    double ratio[64];
    int n = 0;
    size_t i;
    json_array_foreach(pts, i, pt) {
        double t1 = json_number_value(json_object_get(pt, "t1_model_ns"));
        double st = json_number_value(json_object_get(pt, "steals_median"));
        int threads = (int)json_integer_value(json_object_get(pt, "threads"));
        if (n < 64 && threads > 1 && t1 > 1)
            ratio[n++] = st / (threads - 1) / log(t1);
    }
    if (!p->has_gc_steals)
        return;
    record_bound(cal, "gc_steals.a", p->gc_steal_a >= 0 && isfinite(p->gc_steal_a) ? "ok" : "unreliable");
    if (!(p->gc_steal_a >= 0 && isfinite(p->gc_steal_a)))
        gcs_profile_set_unreliable(p, "gc_steals.a", "the steal fit gave a negative or non-finite slope");
    if (n < 2)
        return;
    qsort(ratio, (size_t)n, sizeof *ratio, compare_double);
    int lo = (int)floor(n / 2.0 - 0.98 * sqrt(n)), hi = (int)ceil(n / 2.0 + 0.98 * sqrt(n));
    lo = lo < 0 ? 0 : lo;
    hi = hi > n - 1 ? n - 1 : hi;
    gcs_profile_uncertainty u;
    gcs_profile_uncertainty_init(&u);
    u.ci95_lo = ratio[lo];
    u.ci95_hi = ratio[hi];
    u.std_error = (ratio[hi] - ratio[lo]) / (2 * 1.96);
    u.n = n;
    gcs_profile_set_uncertainty(p, "gc_steals.a", &u);
}

/* gc_cost_ns.steal and .worker's intervals from the fit of gccost.c's steal
 * samples, as stealfit.c computed them (each with its own fit's degrees of
 * freedom, clipped at 0).  A per-steal cost the samples cannot tell from 0
 * is 0 by the fit itself and says so in its note; that is a finding about
 * the machine (on a 2-vCPU guest a steal adds too little to show), not a
 * failed measurement, so it is not marked unreliable. */
void _gcs_calibrate_steal_cost_uncertainty(gcs_profile *p, json_t *details)
{
    json_t *fit = json_object_get(details, "steal_cost_fit");
    int n = (int)json_integer_value(json_object_get(fit, "samples"));
    if (!fit || n < 3)
        return;
    static const char *const names[] = {"steal", "worker"};
    for (int i = 0; i < 2; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_ci95", names[i]);
        json_t *ci = json_object_get(fit, key);
        snprintf(key, sizeof key, "%s_se", names[i]);
        json_t *se = json_object_get(fit, key);
        if (!json_is_array(ci) || !json_is_number(se))
            continue;
        gcs_profile_uncertainty u;
        gcs_profile_uncertainty_init(&u);
        u.std_error = json_number_value(se);
        u.ci95_lo = json_number_value(json_array_get(ci, 0));
        u.ci95_hi = json_number_value(json_array_get(ci, 1));
        u.n = n;
        snprintf(key, sizeof key, "gc_cost_ns.%s", names[i]);
        gcs_profile_set_uncertainty(p, key, &u);
    }
}

/* gc_cost_ns with its physical bounds (every cost positive and finite):
 * a measurement that breaks one is made again in full mode (more
 * repetitions); a cost that still breaks it keeps its value, is marked
 * unreliable in p, and gets one warning line in warnings.  The cost fit
 * itself is gccost.c's. */
/* The cost fit's own uncertainty (gccost.c: standard errors, 95% intervals,
 * condition number, under details.uncertainty in the profile's layout) goes
 * into the profile's "uncertainty"; a split that stayed uncertain after
 * gccost.c re-measured it (details.warning) marks object and pointer
 * unreliable with that reason, and joins the warnings. */
static void costs_uncertainty(gcs_profile *p, json_t *details, json_t *cal, json_t *warnings)
{
    json_t *unc = json_object_get(details, "uncertainty");
    static const char *const fitted[] = {"gc_cost_ns.object", "gc_cost_ns.pointer"};
    for (int i = 0; i < 2; i++) {
        json_t *u = json_object_get(unc, fitted[i]);
        if (!json_is_object(u))
            continue;
        gcs_profile_uncertainty pu;
        gcs_profile_uncertainty_init(&pu);
        json_t *se = json_object_get(u, "stderr"), *ci = json_object_get(u, "ci95");
        json_t *res = json_object_get(u, "residual_rms_rel"), *n = json_object_get(u, "n");
        if (json_is_number(se))
            pu.std_error = json_number_value(se);
        if (json_is_array(ci) && json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) &&
            json_is_number(json_array_get(ci, 1))) {
            pu.ci95_lo = json_number_value(json_array_get(ci, 0));
            pu.ci95_hi = json_number_value(json_array_get(ci, 1));
        }
        if (json_is_number(res))
            pu.residual_rms_rel = json_number_value(res);
        if (json_is_integer(n))
            pu.n = (int)json_integer_value(n);
        gcs_profile_set_uncertainty(p, fitted[i], &pu);
    }
    const char *warning = json_string_value(json_object_get(details, "warning"));
    if (!warning)
        return;
    for (int i = 0; i < 2; i++) {
        if (gcs_profile_unreliable(p, fitted[i]))
            continue;
        gcs_profile_set_unreliable(p, fitted[i], warning);
        record_bound(cal, fitted[i], "unreliable");
    }
    if (warnings)
        json_array_append_new(warnings, json_string(warning));
}

static int gc_costs_checked(int quick, gcs_profile *p, json_t *cal, json_t *warnings, gcs_err *err)
{
    static const char *const names[] = {"object", "pointer", "steal"};
    json_t *details = NULL;
    gcs_profile_clear_fit_quality(p, "gc_cost_ns.");
    gcs_profile_clear_fit_quality(p, "gc_steals.");
    for (int attempt = 0; attempt < 2; attempt++) {
        json_decref(details);
        details = NULL;
        if (gcs_calibrate_gc_costs(attempt ? 0 : quick, p, &details, err) < 0)
            return -1;
        double v[] = {p->gc_cost_object_ns, p->gc_cost_pointer_ns, p->gc_cost_steal_ns};
        /* A steal cost that could not be measured (one CPU) is not
         * measured again: more repetitions give no second CPU. */
        const char *note = json_string_value(json_object_get(details, "steal_note"));
        int unmeasurable = note && strncmp(note, "not measured", 12) == 0;
        int bad = 0; /* a steal cost of 0 is a finding (stealfit.c), the others must be positive */
        for (int i = 0; i < 3 - unmeasurable; i++)
            bad |= !((i == 2 ? v[i] >= 0 : v[i] > 0) && isfinite(v[i]));
        if (unmeasurable) {
            gcs_profile_set_unreliable(p, "gc_cost_ns.steal", note);
            record_bound(cal, "gc_cost_ns.steal", "unreliable");
        }
        if (!bad)
            break;
        if (attempt == 0) {
            json_object_set(cal, "gc_costs_first_attempt", details);
            continue;
        }
        for (int i = 0; i < 3 - unmeasurable; i++) {
            if ((i == 2 ? v[i] >= 0 : v[i] > 0) && isfinite(v[i]))
                continue;
            char constant[32], reason[200], w[600];
            snprintf(constant, sizeof constant, "gc_cost_ns.%s", names[i]);
            snprintf(reason, sizeof reason, "the fit gave %.3g ns, not a positive cost, also when "
                     "measured again with more repetitions", v[i]);
            snprintf(w, sizeof w, "%s is unreliable (%s); the model uses %.3g ns for it and the "
                     "profile marks it unreliable; rerun on an idle machine (gcscale calibrate "
                     "--gc-only)", constant, reason, v[i]);
            gcs_profile_set_unreliable(p, constant, reason);
            record_bound(cal, constant, "unreliable");
            if (warnings)
                json_array_append_new(warnings, json_string(w));
        }
    }
    _gcs_calibrate_steal_cost_uncertainty(p, details);
    for (int i = 0; i < 3; i++) {
        char constant[32];
        snprintf(constant, sizeof constant, "gc_cost_ns.%s", names[i]);
        if (!gcs_profile_unreliable(p, constant))
            record_bound(cal, constant, "ok");
    }
    steals_uncertainty(p, json_object_get(details, "steal_fit"), cal);
    costs_uncertainty(p, details, cal, warnings);
    json_object_set_new(cal, "gc_costs", details);
    return 0;
}

/* 4b: relinks b into one uniformly random cycle and chases it from every
 * CPU node: the latency with page walks of b's page size.  When the kernel
 * did not back a huge-page buffer with huge pages, the profile gets no
 * huge-page figure for any pair but the reason (the first node's that
 * failed); the measurements stay in the details. */
static int full_random(ctx *c, gcs_profile *p, gcs_chase_buf *b, int m, gcs_pages k, gcs_err *err)
{
    int nn = gcs_topo_nnodes(c->t);
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
    const char *pages = k == GCS_PAGES_HUGE ? "huge pages" : "4 KiB pages";
    char name[128];
    double w = c->pl.w_link_random * (double)in->size_bytes / (double)(1u << 30);
    snprintf(name, sizeof name, "full-random cycle (%s): memory node %d", pages, m);
    uint64_t t0 = step_begin(c, name, w);
    if (gcs_chase_build_random(b, 0, c->opts->seed ? c->opts->seed : 0x5eed, err) < 0)
        return -1;
    step_end(c, name, w, t0);
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
        add_warning(c, why);
    } else if (!p->full_random_note[k][0] && gcs_profile_alloc_full_random(p, k) < 0) {
        gcs_err_set(err, "calibrate: out of memory");
        return -1;
    }
    json_t *out = json_object_get(c->cal, "full_random");
    for (int cn = 0; cn < nn; cn++) {
        snprintf(name, sizeof name, "full-random latency (%s): CPU node %d -> memory node %d", pages,
                 cn, m);
        t0 = step_begin(c, name, c->pl.w_full_random);
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
        json_object_set_new(r, "build_s", num(in->build_s));
        /* Unclamped, unlike the profile's page_walk_ns: the noise shows. */
        json_object_set_new(r, "page_walk_ns",
                            num(j.res.median_ns - p->latency_ns[GCS_ACCESS_READ][at]));
        json_array_append_new(out, r);
        step_end(c, name, c->pl.w_full_random, t0);
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

static int measure_node(ctx *c, gcs_profile *p, int m, uint64_t size, gcs_huge primary,
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
    uint64_t t0 = step_begin(c, name, w_buf);
    gcs_chase_buf *b = new_buffer(c, size, m, primary, m != 0, err);
    if (!b)
        return -1;
    step_end(c, name, w_buf, t0);
    if (m == 0) {
        snprintf(name, sizeof name, "sweep (latency vs working set, CPU node %d)", local_cpu_node(c->t, 0));
        t0 = step_begin(c, name, c->pl.w_sweep);
        pinned_job j = {.b = b, .what = 1, .sweep_reps = c->pl.sweep_reps,
                        .sweep_fine = c->pl.sweep_fine};
        if (run_on_node(c, local_cpu_node(c->t, 0), &j, err) < 0)
            goto fail;
        json_t *pts = json_array();
        for (int i = 0; i < j.npts; i++)
            json_array_append_new(pts, json_pack("{s:I, s:o, s:o, s:o}", "size_bytes",
                                                 (json_int_t)j.pts[i].size_bytes, "median_ns",
                                                 num(j.pts[i].median_ns), "p10_ns", num(j.pts[i].p10_ns),
                                                 "p90_ns", num(j.pts[i].p90_ns)));
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
        step_end(c, name, c->pl.w_sweep, t0);
    }
    json_array_append_new(json_object_get(c->cal, "buffers"), buffer_json(gcs_chase_buf_info_get(b)));

    /* 2. latency from every CPU node. */
    json_t *lat = json_object_get(c->cal, "latency");
    for (int cn = 0; cn < nn; cn++) {
        for (int rw = 0; rw < 2; rw++) {
            snprintf(name, sizeof name, "latency %s: CPU node %d -> memory node %d", rw ? "rw" : "read",
                     cn, m);
            double w = c->pl.w_latency;
            t0 = step_begin(c, name, w);
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
            record_bound(c->cal, constant, "ok");
            p->latency_ns[rw][(size_t)cn * (size_t)nn + (size_t)m] = j.res.median_ns;
            json_array_append_new(lat, latency_json(cn, m, rw ? "rw" : "read", primary, &j.res));
            step_end(c, name, w, t0);
        }
    }

    /* 3. occupancy, with M1 the idle latency from the local CPU node. */
    int lc = local_cpu_node(c->t, m);
    for (int rw = 0; rw < 2; rw++) {
        snprintf(name, sizeof name, "occupancy %s: memory node %d", rw ? "rw" : "read", m);
        t0 = step_begin(c, name, c->pl.w_occupancy);
        json_t *o = json_object();
        json_array_append_new(json_object_get(c->cal, "occupancy"), o);
        double m1 = p->latency_ns[rw][(size_t)lc * (size_t)nn + (size_t)m];
        if (occupancy(c, b, p, m, rw, m1, real_cpus, o, err) < 0)
            goto fail;
        step_end(c, name, c->pl.w_occupancy, t0);
    }

    /* 4. bandwidth with every CPU (unpinned on a synthetic topology). */
    snprintf(name, sizeof name, "bandwidth: memory node %d", m);
    t0 = step_begin(c, name, c->pl.w_bandwidth);
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
        add_warning(c, bw.warning);
        char constant[64];
        snprintf(constant, sizeof constant, "bandwidth_gbs[%d]", m);
        if (bw.best_gbs > 0 && isfinite(bw.best_gbs)) {
            p->bandwidth_gbs[m] = bw.best_gbs;
            /* The other bound, below the sum of the memory channels' peak,
             * needs the channels (count, speed), which neither hwloc nor
             * the kernel tells an unprivileged process. */
            record_bound(c->cal, constant, "unchecked: the memory channels' peak bandwidth is not "
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
            record_bound(c->cal, constant, "unreliable");
            add_warning(c, w);
        }
        json_array_append_new(json_object_get(c->cal, "bandwidth"),
                              json_pack("{s:i, s:o, s:o, s:i, s:i, s:I}", "mem_node", m, "best_gbs",
                                        num(bw.best_gbs), "median_gbs", num(bw.median_gbs),
                                        "threads", bw.threads, "reps", bw.reps, "bytes",
                                        (json_int_t)bw.bytes));
    }
    step_end(c, name, c->pl.w_bandwidth, t0);

    /* 4b. latency with page walks, this buffer's page size. */
    if (full_random(c, p, b, m, primary == GCS_HUGE_ON ? GCS_PAGES_HUGE : GCS_PAGES_4K, err) < 0)
        goto fail;
    gcs_chase_buf_free(b);
    b = NULL;

    /* 5. the other page size, for comparison. */
    if (thp) {
        gcs_huge other = primary == GCS_HUGE_ON ? GCS_HUGE_OFF : GCS_HUGE_ON;
        snprintf(name, sizeof name, "huge pages %s: memory node %d", gcs_chase_huge_name(other), m);
        t0 = step_begin(c, name, w_var);
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
        step_end(c, name, w_var, t0);
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

/* Removes every copy of the warning `old` (a string; anything else: none)
 * from the calibration's warnings: a --gc-only run replaces the warnings of
 * what it measures again. */
static void drop_warning(json_t *cal, json_t *old)
{
    json_t *warnings = json_object_get(cal, "warnings");
    for (size_t i = json_array_size(warnings); json_is_string(old) && i-- > 0;)
        if (json_equal(json_array_get(warnings, i), old))
            json_array_remove(warnings, i);
}

/* The speed probe (gccost.c) at a calibration's start and end: its
 * fastest mark of one cost heap, NaN when it could not run (it is a check,
 * never a reason to fail). */
static double probe(void)
{
    double t;
    gcs_err err;
    return _gcs_calibrate_speed_probe(&t, &err) == 0 ? t : NAN;
}

/* calibration.speed_probe, and a warning in calibration.warnings (and
 * speed_probe.warning) when the two marks differ by more than
 * GCS_CALIBRATE_PROBE_DRIFT; a --gc-only run replaces the warning of the
 * run before. */
static void record_probe(gcs_profile *p, double start_ns, double end_ns, double seconds)
{
    json_t *cal = gcs_profile_calibration(p);
    drop_warning(cal, json_object_get(json_object_get(cal, "speed_probe"), "warning"));
    double ratio = end_ns / start_ns;
    char w[400] = "";
    if (isfinite(ratio) && fabs(ratio - 1) > GCS_CALIBRATE_PROBE_DRIFT)
        snprintf(w, sizeof w,
                 "speed probe: the collector's reference heap marked in %.0f us at the calibration's start "
                 "and in %.0f us at its end, %.0f s later (%+.0f%%): the CPU ran at two speeds (other jobs "
                 "on it?), and the constants measured in between mix them",
                 start_ns / 1e3, end_ns / 1e3, seconds, 100 * (ratio - 1));
    json_object_set_new(cal, "speed_probe",
                        json_pack("{s:o, s:o, s:o, s:f, s:f, s:o}", "start_t1_ns",
                                  isfinite(start_ns) ? json_real(start_ns) : json_null(), "end_t1_ns",
                                  isfinite(end_ns) ? json_real(end_ns) : json_null(), "ratio",
                                  isfinite(ratio) ? json_real(ratio) : json_null(), "seconds_apart", seconds,
                                  "drift_limit", GCS_CALIBRATE_PROBE_DRIFT, "warning",
                                  w[0] ? json_string(w) : json_null()));
    if (!w[0])
        return;
    json_t *warnings = json_object_get(cal, "warnings");
    if (!warnings) {
        warnings = json_array();
        json_object_set_new(cal, "warnings", warnings);
    }
    json_array_append_new(warnings, json_string(w));
}

int gcs_calibrate_run(const gcs_calibrate_opts *opts, gcs_profile **out, gcs_err *err)
{
    *out = NULL;
    ctx c = {.opts = opts, .all_bound = 1};
    int quick = opts->mode == GCS_CALIBRATE_QUICK;
    c.pl = quick ? (plan){.reps = 5, .steps = 1u << 20, .sweep_reps = 3, .sweep_fine = 0,
                          .occ_reps = 3, .chains = quick_chains, .nchains = 5, .bw_reps = 5,
                          .variant_rw = 0, .fr_reps = 3, .fr_steps = 1u << 19, .w_buffer = 2.5,
                          .w_buffer_4k = 0.6, .w_sweep = 1.5, .w_latency = 1.1, .w_occupancy = 0.85,
                          .w_bandwidth = 0.2, .w_gc = 0.3, .w_link_random = W_LINK_RANDOM,
                          .w_full_random = W_FULL_RANDOM_QUICK}
                 : (plan){.reps = 11, .steps = 0, .sweep_reps = 5, .sweep_fine = 1, .occ_reps = 5,
                          .chains = full_chains, .nchains = 8, .bw_reps = 10, .variant_rw = 1,
                          .fr_reps = 7, .fr_steps = 1u << 20, .w_buffer = 2.9, .w_buffer_4k = 0.6,
                          .w_sweep = 5.4, .w_latency = 4.5, .w_occupancy = 2.1, .w_bandwidth = 0.6,
                          .w_gc = 0.5, .w_link_random = W_LINK_RANDOM,
                          .w_full_random = W_FULL_RANDOM_FULL};
    uint64_t start = gcs_now_ns();
    gcs_profile *p = NULL;
    c.t = gcs_topo_load(opts->synthetic, err);
    if (!c.t)
        return -1;
    c.synthetic = gcs_topo_is_synthetic(c.t);
    int nn = gcs_topo_nnodes(c.t);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int real_cpus = online > 0 ? (int)online : 1;

    /* 8 x LLC (at least 1 GiB) so that a random line is almost never cached. */
    uint64_t size = opts->size_bytes;
    if (!size) {
        size = 8 * gcs_topo_llc_bytes(c.t);
        if (size < (1ull << 30))
            size = 1ull << 30;
        size = (size + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
    }
    if (gcs_chase_check_size(size, err) < 0) {
        gcs_topo_free(c.t);
        return -1;
    }
    char thp_mode[32];
    int thp = gcs_chase_thp_available(thp_mode, sizeof thp_mode);
    gcs_huge primary = thp ? GCS_HUGE_ON : GCS_HUGE_DEFAULT;

    /* Quick mode caps a DRAM repetition at 1M steps (~0.15 s); small
     * buffers get the automatic count, which scales with their size. */
    if (quick && size < (256ull << 20))
        c.pl.steps = 0;
    if (size < (256ull << 20))
        c.pl.fr_steps = 0;
    p = gcs_profile_new(nn);
    c.cal = json_object();
    c.warnings = json_array();
    c.steps = json_array();
    if (!p || !c.cal || !c.warnings || !c.steps) {
        gcs_err_set(err, "calibrate: out of memory");
        goto fail;
    }
    p->bandwidth_gbs = calloc((size_t)nn, sizeof *p->bandwidth_gbs);
    if (!p->bandwidth_gbs) {
        gcs_err_set(err, "calibrate: out of memory");
        goto fail;
    }
    /* Work units: the expected seconds of each step (the plan's weights),
     * the same figures step_begin/step_end count, so the series ends at
     * 100% (it passed 100% before the last step) and the time left follows
     * the clock.  A caller with steps of its own after the run continues
     * the same series. */
    double gib = (double)size / (double)(1u << 30);
    double w_buf = (thp ? c.pl.w_buffer : c.pl.w_buffer_4k) * gib;
    double w_var = thp ? (c.pl.w_buffer_4k * gib + (1 + c.pl.variant_rw) * c.pl.w_latency) : 0;
    double w_fr = (thp ? 2 : 1) * (c.pl.w_link_random * gib + nn * c.pl.w_full_random);
    double total = W_TOPOLOGY + c.pl.w_sweep + c.pl.w_gc +
                   nn * (w_buf + 2.0 * nn * c.pl.w_latency + 2 * c.pl.w_occupancy + c.pl.w_bandwidth +
                         w_var + w_fr) +
                   _gcs_calibrate_overlap_work_topo(c.t, quick, opts->size_bytes) +
                   _gcs_calibrate_stream_work_topo(c.t, quick, opts->size_bytes) +
                   _gcs_calibrate_resident_work_guess(quick) + _gcs_calibrate_residency_work_guess(quick) +
                   _gcs_calibrate_coord_work(quick) +
                   _gcs_calibrate_mark_transfer_work(quick) +
                   _gcs_calibrate_line_transfer_work(NULL, quick) + _gcs_calibrate_dependent_load_work(NULL, quick) +
                   (opts->progress ? opts->extra_work : 0);
    c.pr = opts->progress ? opts->progress : &c.own_pr;
    gcs_progress_init(c.pr, total, opts->quiet);
    double probe_start = probe(), probe_t0 = (double)gcs_now_ns();

    uint64_t t0 = step_begin(&c, "topology and counters", W_TOPOLOGY);
    if (gcs_calibrate_fill_profile(c.t, p, err) < 0)
        goto fail;
    /* The nodes and CPUs come from the topology alone: a layout the profile
     * would refuse (a CPU in two nodes) is refused now, not after every
     * node has been measured. */
    if (gcs_profile_check_nodes(p, err) < 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        gcs_err_set(err, "calibrate: topology %s gives an invalid node layout: %.400s",
                    gcs_topo_description(c.t), msg);
        goto fail;
    }
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        snprintf(host, sizeof host, "unknown");
    snprintf(p->host, sizeof p->host, "%s", host);
    gcs_now_iso8601(p->created, sizeof p->created);
    snprintf(p->tool_version, sizeof p->tool_version, "%s", gcs_version());
    c.count_llc = gcs_counters_probe(&c.counters);
    snprintf(p->counters_source, sizeof p->counters_source, "%s", c.counters.source);
    snprintf(p->counters_reason, sizeof p->counters_reason, "%s", c.counters.reason);
    if (c.synthetic) {
        char w[400];
        snprintf(w, sizeof w,
                 "topology is %s: threads are not pinned and memory is not bound, so every "
                 "(CPU node, memory node) pair measures this machine's own memory",
                 gcs_topo_description(c.t));
        add_warning(&c, w);
    }
    /* A chase buffer the last-level cache holds measures that cache: the
     * profile would give predict and validate cache latencies as if they
     * were memory's (--help's "small sizes measure caches" was the only
     * word of it). */
    uint64_t llc = gcs_topo_llc_bytes(c.t);
    if (opts->size_bytes && llc && size < llc) {
        char w[400], sz[32], lz[32];
        size_text(size, sz, sizeof sz);
        size_text(llc, lz, sizeof lz);
        snprintf(w, sizeof w,
                 "--size %s is below the last-level cache (%s): the chase runs in the caches, so "
                 "the profile's latencies, occupancy and bandwidth are the caches', not memory's "
                 "(the default, 8 x LLC and at least 1 GiB, measures memory)",
                 sz, lz);
        add_warning(&c, w);
    }
    json_object_set_new(c.cal, "mode", json_string(quick ? "quick" : "full"));
    json_object_set_new(c.cal, "topology", json_string(gcs_topo_description(c.t)));
    json_object_set_new(c.cal, "synthetic", json_boolean(c.synthetic));
    json_object_set_new(c.cal, "size_bytes", json_integer((json_int_t)size));
    json_object_set_new(c.cal, "llc_bytes", json_integer((json_int_t)llc));
    json_object_set_new(c.cal, "thp", json_pack("{s:s, s:s}", "system", thp_mode, "primary",
                                                gcs_chase_huge_name(primary)));
    json_object_set_new(c.cal, "buffers", json_array());
    json_object_set_new(c.cal, "latency", json_array());
    json_object_set_new(c.cal, "huge_page_variants", json_array());
    json_object_set_new(c.cal, "full_random", json_array());
    if (!thp)
        snprintf(p->full_random_note[GCS_PAGES_HUGE], sizeof p->full_random_note[GCS_PAGES_HUGE],
                 "not measured: transparent huge pages are unavailable here (THP mode \"%s\")",
                 thp_mode);
    json_object_set_new(c.cal, "occupancy", json_array());
    json_object_set_new(c.cal, "bandwidth", json_array());
    json_object_set_new(c.cal, "counters",
                        json_pack("{s:s, s:s, s:s}", "source", c.counters.source, "event",
                                  c.counters.event, "reason", c.counters.reason));
    step_end(&c, "topology and counters", W_TOPOLOGY, t0);

    for (int m = 0; m < nn; m++)
        if (measure_node(&c, p, m, size, primary, thp, real_cpus, err) < 0)
            goto fail;

    t0 = step_begin(&c, "gc costs (marker on cache-resident heaps)", c.pl.w_gc);
    if (gc_costs_checked(quick, p, c.cal, c.warnings, err) < 0)
        goto fail;
    step_end(&c, "gc costs (marker on cache-resident heaps)", c.pl.w_gc, t0);

    json_object_set_new(c.cal, "binding_honoured", json_boolean(c.all_bound));
    json_object_set_new(c.cal, "warnings", c.warnings);
    json_object_set_new(c.cal, "steps", c.steps);
    json_object_set_new(c.cal, "duration_s", num((double)(gcs_now_ns() - start) / 1e9));
    c.warnings = c.steps = NULL;
    if (!p->extra) /* it may hold the fits' uncertainty and reliability already */
        p->extra = json_object();
    json_object_set_new(p->extra, "calibration", c.cal);
    c.cal = NULL;
    /* Last, outside the timed steps: it needs the gc costs just fitted. */
    _gcs_calibrate_overlap_step(p, quick, opts->size_bytes, c.pr);
    _gcs_calibrate_stream_step(p, quick, opts->size_bytes, c.pr);
    _gcs_calibrate_resident_step(p, quick, c.pr);
    _gcs_calibrate_residency_step(p, quick, c.pr);
    _gcs_calibrate_coord_step(p, quick, c.pr);
    _gcs_calibrate_mark_transfer_step(p, quick, c.pr);
    _gcs_calibrate_mark_transfer_cached_step(p, quick, c.pr);
    _gcs_calibrate_line_transfer_step(p, quick, c.pr);
    record_probe(p, probe_start, probe(), ((double)gcs_now_ns() - probe_t0) / 1e9);
    /* not the marker's: outside the speed probe's span, which times it */
    _gcs_calibrate_dependent_load_step(p, quick, c.pr);
    if (!opts->progress)
        gcs_progress_finish(c.pr);
    gcs_topo_free(c.t);
    if (gcs_profile_validate(p, err) < 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        gcs_err_set(err, "calibrate: measured profile is not valid: %.400s", msg);
        gcs_profile_free(p);
        return -1;
    }
    *out = p;
    return 0;
fail:
    json_decref(c.cal);
    json_decref(c.warnings);
    json_decref(c.steps);
    gcs_profile_free(p);
    gcs_topo_free(c.t);
    return -1;
}

/* --gc-only: the marker's costs again, into a profile measured before (the
 * memory system has not changed, the collector has). */

static double update_gc_cost_work(int quick)
{
    return quick ? 0.3 : 0.5; /* the plans' w_gc */
}

double gcs_calibrate_update_gc_work(const gcs_profile *p, int quick)
{
    return update_gc_cost_work(quick) + _gcs_calibrate_overlap_work(p, quick, 0) +
           _gcs_calibrate_stream_work(p, quick, 0) + _gcs_calibrate_resident_work(p, quick) +
           _gcs_calibrate_residency_work(p, quick) +
           _gcs_calibrate_coord_work(quick) + _gcs_calibrate_mark_transfer_work(quick) +
           _gcs_calibrate_line_transfer_work(p, quick);
}

int gcs_calibrate_update_gc(gcs_profile *p, int quick, gcs_progress *pr, gcs_err *err)
{
    double w = update_gc_cost_work(quick);
    gcs_progress_step(pr, "gc costs (marker on cache-resident heaps)", w);
    json_t *cal = gcs_profile_calibration(p);
    /* The old costs' warning goes with them (the new fit's problems, if any,
     * are marked unreliable and said by the caller, gcs_profile_unreliable). */
    drop_warning(cal, json_object_get(json_object_get(cal, "gc_costs"), "warning"));
    double probe_start = probe(), probe_t0 = (double)gcs_now_ns();
    if (gc_costs_checked(quick, p, cal, NULL, err) < 0)
        return -1;
    gcs_progress_done(pr, w);
    char when[64];
    gcs_now_iso8601(when, sizeof when);
    json_object_set_new(cal, "gc_only", json_pack("{s:s, s:s}", "time", when, "mode",
                                                   quick ? "quick" : "full"));
    _gcs_calibrate_overlap_step(p, quick, 0, pr);
    _gcs_calibrate_stream_step(p, quick, 0, pr);
    _gcs_calibrate_resident_step(p, quick, pr);
    _gcs_calibrate_residency_step(p, quick, pr);
    _gcs_calibrate_coord_step(p, quick, pr);
    _gcs_calibrate_mark_transfer_step(p, quick, pr);
    _gcs_calibrate_mark_transfer_cached_step(p, quick, pr);
    _gcs_calibrate_line_transfer_step(p, quick, pr);
    record_probe(p, probe_start, probe(), ((double)gcs_now_ns() - probe_t0) / 1e9);
    return gcs_profile_validate(p, err);
}

/* --gc-only --key: one key into a profile made before calibrate had it.
 * The steps of one key, in one shape (the profile's own size limits do
 * not apply to a profile already made). */
static void overlap_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    _gcs_calibrate_overlap_step(p, quick, 0, pr);
}

static double overlap_work(const gcs_profile *p, int quick)
{
    return _gcs_calibrate_overlap_work(p, quick, 0);
}

static void stream_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    _gcs_calibrate_stream_step(p, quick, 0, pr);
}

static double stream_work(const gcs_profile *p, int quick)
{
    return _gcs_calibrate_stream_work(p, quick, 0);
}

static void coord_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    _gcs_calibrate_coord_step(p, quick, pr);
}

static double coord_work(const gcs_profile *p, int quick)
{
    (void)p;
    return _gcs_calibrate_coord_work(quick);
}

static double steal_cost_work(const gcs_profile *p, int quick)
{
    (void)p;
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? (quick ? 1.0 : 2.0) : 0;
}

static double mark_transfer_work(const gcs_profile *p, int quick)
{
    (void)p;
    return _gcs_calibrate_mark_transfer_work(quick) / 2; /* each of its two heaps' keys */
}

/* gc_coord.attempts_per_search into a profile whose gc_coord was fitted
 * before calibrate counted searches (2026-11-29): the coordination heaps are
 * marked again on a copy of the profile and only the ratio is kept, so the
 * laws and prices fitted then stay as they were.  The ratio belongs to the
 * heaps and the collector's batching more than to one run (its spread over
 * runs: docs/model.md, "Per search"), which is what makes one run's ratio
 * usable with another's attempt price. */
static void coord_search_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    double w = _gcs_calibrate_coord_work(quick);
    json_t *rec;
    if (w == 0 || !p->has_gc_coord) {
        rec = json_pack("{s:s}", "note", w == 0 ? "not measured: one CPU"
                                                : "not measured: the profile has no gc_coord (--key gc_coord "
                                                  "measures all of it)");
    } else {
        gcs_progress_step(pr, "gc coordination: steal attempts per search", w);
        gcs_err err = {{0}};
        json_t *doc = gcs_profile_to_json(p), *details = NULL;
        gcs_profile *copy = doc ? gcs_profile_from_json(doc, &err) : NULL;
        json_decref(doc);
        uint64_t t0 = gcs_now_ns();
        if (copy && gcs_calibrate_coord(quick, 0, copy, &details, &err) == 0 &&
            copy->coord.attempts_per_search > 0) {
            p->coord.attempts_per_search = copy->coord.attempts_per_search;
            rec = json_pack("{s:f, s:f, s:s, s:o}", "attempts_per_search", copy->coord.attempts_per_search, "seconds",
                            (double)(gcs_now_ns() - t0) / 1e9, "note",
                            "the ratio of a new coordination run on a copy; the profile's laws and prices are "
                            "the earlier fit's",
                            "run", details);
            details = NULL;
        } else {
            rec = json_pack("{s:s, s:s}", "note", "not measured: the step failed", "error",
                            err.msg[0] ? err.msg : "no search found work");
        }
        json_decref(details);
        gcs_profile_free(copy);
        gcs_progress_done(pr, w);
    }
    json_object_set_new(gcs_profile_calibration(p), "gc_coord_attempts_per_search", rec);
}

/* gc_cost_ns.worker into a profile whose steal cost was measured as growth
 * over steals (before 2026-11-29): the steal heap's samples again, both
 * costs from their fit (stealfit.c), the object and pointer costs kept. */
static void steal_cost_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    double w = steal_cost_work(p, quick);
    json_t *rec = NULL;
    if (w == 0) {
        rec = json_pack("{s:s}", "note", "not measured: one CPU");
    } else {
        gcs_progress_step(pr, "gc costs: what a steal and a worker add", w);
        gcs_err err = {{0}};
        uint64_t t0 = gcs_now_ns();
        if (_gcs_calibrate_steal_cost(quick, p, &rec, &err) < 0)
            rec = json_pack("{s:s, s:s}", "note", "not measured: the step failed", "error", err.msg);
        else
            json_object_set_new(rec, "seconds", json_real((double)(gcs_now_ns() - t0) / 1e9));
        gcs_progress_done(pr, w);
    }
    json_object_set_new(gcs_profile_calibration(p), "gc_cost_worker", rec);
}

/* The keys one step measures, each with its step and weight (the steps
 * that run after the marker's costs, in calibrate's order). */
static const struct key_step {
    const char *key;
    void (*step)(gcs_profile *p, int quick, gcs_progress *pr);
    double (*work)(const gcs_profile *p, int quick);
} key_steps[] = {
    {"gc_cost_ns.worker", steal_cost_step, steal_cost_work},
    {"gc_miss_overlap", overlap_step, overlap_work},
    {"gc_stream_line_ns", stream_step, stream_work},
    {"gc_resident", _gcs_calibrate_resident_step, _gcs_calibrate_resident_work},
    {"gc_residency", _gcs_calibrate_residency_step, _gcs_calibrate_residency_work},
    {"gc_coord", coord_step, coord_work},
    {"gc_coord.attempts_per_search", coord_search_step, coord_work},
    {"gc_mark_transfer_ns", _gcs_calibrate_mark_transfer_step, mark_transfer_work},
    {"gc_mark_transfer_cached_ns", _gcs_calibrate_mark_transfer_cached_step, mark_transfer_work},
    {"gc_line_transfer_ns", _gcs_calibrate_line_transfer_step, _gcs_calibrate_line_transfer_work},
    /* the memory system's, not the collector's: only by its key (not in a
     * --gc-only run, which keeps the memory figures) */
    {"dependent_load_ns", _gcs_calibrate_dependent_load_step, _gcs_calibrate_dependent_load_work},
};

static const struct key_step *find_key_step(const char *key)
{
    for (size_t i = 0; i < sizeof key_steps / sizeof *key_steps; i++)
        if (strcmp(key_steps[i].key, key) == 0)
            return &key_steps[i];
    return NULL;
}

double gcs_calibrate_update_key_work(const gcs_profile *p, const char *key, int quick)
{
    const struct key_step *k = find_key_step(key);
    return !k ? -1 : p ? k->work(p, quick) : 0;
}

int gcs_calibrate_update_key(gcs_profile *p, const char *key, int quick, gcs_progress *pr, gcs_err *err)
{
    const struct key_step *k = find_key_step(key);
    if (!k) {
        gcs_err_set(err, "calibrate: '%s' is no key a single step measures (gc_cost_ns.worker, gc_miss_overlap, "
                         "gc_stream_line_ns, gc_resident, gc_residency, gc_coord, gc_coord.attempts_per_search, "
                         "gc_mark_transfer_ns, gc_mark_transfer_cached_ns, gc_line_transfer_ns, dependent_load_ns)", key);
        return -1;
    }
    k->step(p, quick, pr);
    /* A record of its own: the profile's other figures keep theirs (a
     * calibration's, or a --gc-only run's under gc_only). */
    char when[64];
    gcs_now_iso8601(when, sizeof when);
    json_t *cal = gcs_profile_calibration(p), *added = json_object_get(cal, "keys_added");
    if (!json_is_array(added)) {
        added = json_array();
        json_object_set_new(cal, "keys_added", added);
    }
    json_array_append_new(added, json_pack("{s:s, s:s, s:s}", "key", key, "time", when, "mode", quick ? "quick" : "full"));
    return gcs_profile_validate(p, err);
}
