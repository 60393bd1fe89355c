/* validate.c -- running the validation (include/gcscale/validate.h).
 *
 * Per workload, three kinds of runs, all with the same seed:
 *  - fixed P for every candidate P (1..max, or powers of two and max when
 *    max > 8), then the adaptive policy with a pool of max workers: whole
 *    runs, compared by the sum of their mark times;
 *  - one run at P = max that writes a heap snapshot every `every`
 *    collections; the first `snapshots` of them are re-marked right away
 *    from the on_collection callback (the world is still stopped, so the
 *    heap is exactly the snapshot's) at P = 1..max, `reps` times each,
 *    taking turns so that drift in the machine hits every P alike;
 *  - no run for the predictions: each snapshot is read back and inspected.
 * `every` comes from the collection count of the fixed P = max run, so that
 * the snapshots spread over the run.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gcscale/adaptive.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"
#include "gcscale/predict.h"
#include "gcscale/profile.h"
#include "gcscale/snapshot.h"
#include "gcscale/validate.h"
#include "gcscale/workload.h"
#include "corpus_internal.h"

#define MAX_REPS 15
#define MAX_RUN_REPS 9

void gcs_validate_opts_init(gcs_validate_opts *opts)
{
    memset(opts, 0, sizeof *opts);
}

void gcs_validate_measured_stack(const gcs_gc_stats *s, double t1_ns, double busy1_ns,
                                 gcs_validate_stack *out)
{
    memset(out, 0, sizeof *out);
    double tp = (double)s->mark_ns;
    int p = s->threads;
    if (!(tp > 0) || p < 1)
        return;
    double busy = 0, search = 0, wake = 0, tail = 0;
    for (int i = 0; i < p && i < GCS_GC_MAX_THREADS; i++) {
        const gcs_gc_worker_stats *w = &s->workers[i];
        busy += (double)w->busy_ns;
        search += (double)w->search_ns;
        wake += (double)w->wake_ns;
        double rest = tp - (double)w->wake_ns - (double)w->mark_ns;
        tail += rest > 0 ? rest : 0;
    }
    out->speedup = t1_ns / tp;
    out->extra_work = (busy - busy1_ns) / tp;
    out->search = search / tp;
    out->wake = wake / tp;
    out->tail = tail / tp;
    out->other = p - out->speedup - out->extra_work - out->search - out->wake - out->tail;
}

/* Where the workers of a re-mark at the largest P ran. */
static void keep_pu_map(const gcs_gc_stats *st, gcs_validate_report *r)
{
    snprintf(r->placement, sizeof r->placement, "%s", gcs_topo_placement_name(st->placement));
    for (r->npu_map = 0; r->npu_map < st->threads; r->npu_map++) {
        r->pu_map[r->npu_map] = st->workers[r->npu_map].cpu;
        r->pu_map_logical[r->npu_map] = st->workers[r->npu_map].pu;
    }
}

/* ---- one whole run of a workload ------------------------------------------------- */

typedef struct remark_ctx {
    int max_threads, reps, want;
    int taken;
    /* [snapshot][P-1][rep] */
    double mark_ns[GCS_VALIDATE_MAX_SNAPSHOTS][GCS_GC_MAX_THREADS][MAX_REPS];
    gcs_gc_stats *median_stats; /* [snapshot * max_threads + P-1]: the median rep's stats */
    char path[GCS_VALIDATE_MAX_SNAPSHOTS][4096];
    uint64_t collection[GCS_VALIDATE_MAX_SNAPSHOTS];
    uint64_t live_bytes[GCS_VALIDATE_MAX_SNAPSHOTS];
    int failed;
    gcs_gc_stats scratch;       /* the untimed re-marks' statistics */
} remark_ctx;

/* The fastest of snapshot k's re-marks at P: on a shared machine other work
 * only ever adds time, and a slow phase of the host lasts longer than one
 * re-mark (calibrate takes the fastest for the same reason). */
static double fastest_remark_ns(const remark_ctx *c, int k, int p)
{
    double best = c->mark_ns[k][p - 1][0];
    for (int r = 1; r < c->reps; r++)
        best = fmin(best, c->mark_ns[k][p - 1][r]);
    return best;
}

/* The index of the median of v[0..n) (the upper one for even n). */
static int median_index(const double *v, int n)
{
    double sorted[MAX_REPS > MAX_RUN_REPS ? MAX_REPS : MAX_RUN_REPS];
    memcpy(sorted, v, sizeof(double) * (size_t)n);
    gcs_stats_sort(sorted, (size_t)n);
    for (int i = 0; i < n; i++)
        if (v[i] == sorted[n / 2])
            return i;
    return 0;
}

/* on_collection: re-marks the heap of a collection that wrote a snapshot. */
static void remark_collection(const gcs_gc_stats *stats, void *arg)
{
    remark_ctx *c = arg;
    if (stats->snapshot_status != 1 || c->taken >= c->want || c->failed)
        return;
    int k = c->taken++;
    snprintf(c->path[k], sizeof c->path[k], "%s", stats->snapshot_path);
    c->collection[k] = stats->index;
    c->live_bytes[k] = stats->live_bytes;
    /* One round that is not timed: the collector has just written the
     * snapshot, and the kernel's writeback of it competes with the first
     * re-marks for a CPU (the measured stacks showed a worker starting a
     * millisecond late there, against 20-60 us otherwise). */
    for (int p = c->max_threads; p >= 1; p--) {
        if (gcs_gc_remark(p, &c->scratch) < 0) {
            c->failed = 1;
            return;
        }
    }
    /* Rounds over P, so that a slow moment of the machine hits every P. */
    gcs_gc_stats *keep = calloc((size_t)c->max_threads * MAX_REPS, sizeof *keep);
    if (!keep) {
        c->failed = 1;
        return;
    }
    for (int r = 0; r < c->reps; r++)
        for (int p = 1; p <= c->max_threads; p++) {
            gcs_gc_stats *st = &keep[(size_t)(p - 1) * MAX_REPS + (size_t)r];
            if (gcs_gc_remark(p, st) < 0) {
                c->failed = 1;
                free(keep);
                return;
            }
            c->mark_ns[k][p - 1][r] = (double)st->mark_ns;
        }
    for (int p = 1; p <= c->max_threads; p++) {
        /* the repetition with the median mark time */
        int r = median_index(c->mark_ns[k][p - 1], c->reps);
        c->median_stats[(size_t)k * (size_t)c->max_threads + (size_t)(p - 1)] =
            keep[(size_t)(p - 1) * MAX_REPS + (size_t)r];
    }
    free(keep);
}

typedef struct run_spec {
    const gcs_validate_opts *o;
    const gcs_workload_info *info;
    int threads;                /* fixed P, or the pool for adaptive */
    int adaptive;
    remark_ctx *remark;         /* snapshot run */
    uint64_t every;
    const char *snapshot_pattern;
} run_spec;

static int run_workload(const run_spec *rs, gcs_validate_whole_run *out, gcs_err *err)
{
    const gcs_validate_opts *o = rs->o;
    memset(out, 0, sizeof *out);
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.heap_limit = gcs_workload_default_heap(rs->info, o->mutators);
    go.log_path = "";
    char spec[32];
    if (rs->adaptive)
        snprintf(spec, sizeof spec, "adaptive:%d", rs->threads);
    else
        snprintf(spec, sizeof spec, "%d", rs->threads);
    int crc = gcs_adaptive_configure(&go, spec, o->machine_path, err);
    if (crc != 0) { /* validating without the profile would validate the fallback */
        if (crc > 0)
            gcs_adaptive_release(&go);
        return -1;
    }
    go.max_threads = rs->threads;
    /* Workers placed as gc-bench places them (cores by default): unbound,
     * the scheduler of a 2-vCPU VM kept whole processes' second worker off
     * the second vCPU (docs/gc-bench.md). */
    go.placement = rs->o->placement;
    if (rs->remark) {
        go.snapshot_path = rs->snapshot_pattern;
        go.snapshot_every = rs->every;
        go.on_collection = remark_collection;
        go.on_collection_arg = rs->remark;
    } else {
        go.snapshot_path = ""; /* never $GCSCALE_GC_SNAPSHOT here */
    }
    gcs_workload_gclog log;
    gcs_workload_result res;
    if (_gcs_validate_run_once(o, rs->info, &go, &log, &res, err) < 0)
        return -1;
    int rc = 0;
    out->threads = rs->threads;
    out->adaptive = rs->adaptive;
    out->verified = res.verified;
    out->collections = res.gc_count;
    out->wall_ms = (double)res.wall_ns / 1e6;
    double threads = 0, decision = 0;
    for (size_t i = res.gc_first; i < res.gc_first + res.gc_count; i++) {
        const gcs_workload_gc_row *row = &log.rows[i];
        out->mark_ms += (double)row->mark_ns / 1e6;
        out->pause_ms += (double)row->pause_ns / 1e6;
        threads += row->threads;
        decision += (double)row->decision_ns / 1e6;
    }
    out->avg_threads = res.gc_count ? threads / (double)res.gc_count : 0;
    out->decision_pct = out->mark_ms > 0 ? 100 * decision / out->mark_ms : 0;
    if (!res.verified) {
        gcs_err_set(err, "%s failed its own check at %s threads: %s", rs->info->name, spec,
                    res.verify_msg);
        rc = -1;
    } else if (res.gc_count == 0) {
        gcs_err_set(err, "%s ran without a collection (heap limit too large?)", rs->info->name);
        rc = -1;
    }
    gcs_workload_gclog_free(&log);
    return rc;
}

int _gcs_validate_run_once(const gcs_validate_opts *o, const gcs_workload_info *info, gcs_gc_options *go,
                           gcs_workload_gclog *log, gcs_workload_result *res, gcs_err *err)
{
    gcs_workload_gclog_install(go, log);
    if (gcs_gc_init(go, err) < 0) {
        gcs_workload_gclog_free(log);
        return -1;
    }
    gcs_workload_options wo;
    gcs_workload_options_init(&wo);
    wo.name = info->name;
    wo.mutators = o->mutators;
    wo.steps = (uint64_t)fmax(1, round((double)info->default_steps * o->steps_scale));
    wo.seed = 1;
    wo.gclog = log;
    int rc = gcs_workload_run(&wo, res, err);
    gcs_gc_shutdown();
    if (rc < 0)
        gcs_workload_gclog_free(log);
    return rc;
}

/* ---- predictions --------------------------------------------------------------- */

static int predict_snapshot(const char *path, const gcs_profile *prof, int max_threads,
                            gcs_validate_workload *w, int first, char *slow_note, size_t note_n,
                            gcs_err *err)
{
    gcs_snapshot *g = gcs_snapshot_read(path, err);
    if (!g)
        return -1;
    int rc = -1;
    int *threads = malloc(sizeof(int) * (size_t)max_threads);
    gcs_model_result *fast = calloc((size_t)max_threads, sizeof *fast);
    gcs_model_result *slow = calloc((size_t)max_threads, sizeof *slow);
    gcs_model_result *crit = calloc((size_t)max_threads, sizeof *crit);
    gcs_model_result *ovl = calloc((size_t)max_threads, sizeof *ovl);
    gcs_model_result *v2 = calloc((size_t)max_threads, sizeof *v2);
    gcs_model_result *v2s = calloc((size_t)max_threads, sizeof *v2s);
    if (!threads || !fast || !slow || !crit || !ovl || !v2 || !v2s) {
        gcs_err_set(err, "validate: out of memory");
        goto done;
    }
    for (int p = 1; p <= max_threads; p++)
        threads[p - 1] = p;
    gcs_model_opts mo;
    gcs_model_opts_init(&mo);
    gcs_inspect_opts io;
    gcs_inspect_opts_init(&io);
    io.predictor = GCS_INSPECT_FAST;
    gcs_inspect_result ir;
    if (gcs_inspect_heap(g, prof, &io, &ir, err) < 0 ||
        gcs_predict_curve(prof, &ir.heap, threads, max_threads, &mo, fast, err) < 0)
        goto done;
    w->snapshot_objects[w->nsnapshots - 1] = ir.heap.objects;
    int have_slow = 0;
    if (prof->ncaches > 0) {
        io.predictor = GCS_INSPECT_SLOW;
        io.tinf_ns = ir.heap.tinf_ns; /* the same span: walked once */
        io.steal_sim_threads = max_threads; /* the steals, beside the collector's (no model reads them here) */
        gcs_err serr;
        if (gcs_inspect_heap(g, prof, &io, &ir, &serr) < 0) {
            snprintf(slow_note, note_n, "slow predictor failed: %s", serr.msg);
        } else {
            if (gcs_predict_curve(prof, &ir.heap, threads, max_threads, &mo, slow, err) < 0)
                goto done;
            gcs_model_opts mc = mo;
            mc.span = GCS_MODEL_SPAN_CRITICAL;
            if (gcs_predict_curve(prof, &ir.heap, threads, max_threads, &mc, crit, err) < 0)
                goto done;
            if (prof->has_gc_overlap) {
                gcs_model_opts mv = mo;
                mv.overlap = prof->gc_miss_overlap;
                if (gcs_predict_curve(prof, &ir.heap, threads, max_threads, &mv, ovl, err) < 0)
                    goto done;
            }
            /* model v2 as gcscale predict --model v2 sets it for this profile */
            gcs_model_opts m2;
            gcs_model_sources src;
            gcs_model_opts_init(&m2);
            gcs_model_opts_v2(&m2, prof, GCS_MODEL_RESIDENCY_DEFAULT, 0, &src);
            gcs_model_opts_v2_costs(&m2, prof, &src);
            m2.steal_sim = 0; /* as predict --model v2 --steal-count fitted (the fast predictor's count) */
            if (gcs_predict_curve(prof, &ir.heap, threads, max_threads, &m2, v2, err) < 0)
                goto done;
            m2.steal_sim = 1; /* as predict --model v2, whose slow predictor simulates the steals */
            if (gcs_predict_curve(prof, &ir.heap, threads, max_threads, &m2, v2s, err) < 0)
                goto done;
            have_slow = 1;
        }
    } else {
        snprintf(slow_note, note_n, "the profile has no cache geometry: Pred columns use the fast predictor");
    }
    if (!have_slow) {
        memcpy(slow, fast, sizeof *slow * (size_t)max_threads);
        gcs_model_opts mc = mo;
        mc.span = GCS_MODEL_SPAN_CRITICAL;
        io.predictor = GCS_INSPECT_FAST;
        if (gcs_predict_curve(prof, &ir.heap, threads, max_threads, &mc, crit, err) < 0)
            goto done;
    }
    /* Running sums over snapshots (gcs_validate_point): predicted times,
     * and the stacks weighted by the predicted serial time; finish_workload
     * turns them into speedups and means. */
    double serial_ms = slow[0].time_ns / 1e6;
    for (int p = 1; p <= max_threads; p++) {
        gcs_validate_point *pt = &w->points[p - 1];
        const gcs_model_result *s = &slow[p - 1];
        if (first) {
            memset(pt->pred_stack, 0, sizeof pt->pred_stack);
            memset(pt->pred_ms, 0, sizeof pt->pred_ms);
            pt->steals_simulated = 0;
        }
        pt->steals_simulated += ir.heap.steals_simulated >= p ? ir.heap.sim_steals[p] : p == 1 ? 0 : NAN;
        pt->pred_ms[0] += s->time_ns / 1e6;
        pt->pred_ms[1] += s->time_no_contention_ns / 1e6;
        pt->pred_ms[2] += s->time_no_extra_misses_ns / 1e6;
        pt->pred_ms[3] += crit[p - 1].time_ns / 1e6;
        pt->pred_ms[4] += fast[p - 1].time_ns / 1e6;
        /* the overlap needs the slow predictor's streamed misses */
        pt->pred_ms[5] += have_slow && prof->has_gc_overlap ? ovl[p - 1].time_ns / 1e6 : NAN;
        pt->pred_ms[6] += have_slow ? v2[p - 1].time_ns / 1e6 : NAN;
        pt->pred_ms[7] += have_slow ? v2s[p - 1].time_ns / 1e6 : NAN;
        pt->pred_stack[0] += serial_ms * s->speedup;
        pt->pred_stack[1] += serial_ms * s->lost_span;
        pt->pred_stack[2] += serial_ms * s->lost_extra_work; /* the measured extra_work's counterpart */
        pt->pred_stack[3] += serial_ms * s->lost_contention;
        pt->pred_stack[4] += serial_ms * s->lost_wake;
        pt->pred_stack[5] += serial_ms * s->lost_search;
        pt->pred_stack[6] += serial_ms * s->lost_tail;
    }
    rc = 0;
done:
    free(threads);
    free(fast);
    free(slow);
    free(crit);
    free(ovl);
    free(v2);
    free(v2s);
    gcs_snapshot_free(g);
    return rc;
}

/* ---- the driver --------------------------------------------------------------- */

static int select_workloads(const char *list, const gcs_workload_info **out, int *n, gcs_err *err)
{
    *n = 0;
    if (!list || !*list) {
        for (size_t i = 0; i < gcs_workload_count() && *n < GCS_VALIDATE_MAX_WORKLOADS; i++)
            out[(*n)++] = gcs_workload_info_at(i);
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const gcs_workload_info *info = gcs_workload_find(tok);
        if (!info) {
            gcs_err_set(err, "unknown workload '%s' (bh, cube, cky or chain)", tok);
            return -1;
        }
        if (*n == GCS_VALIDATE_MAX_WORKLOADS) {
            gcs_err_set(err, "at most %d workloads", GCS_VALIDATE_MAX_WORKLOADS);
            return -1;
        }
        out[(*n)++] = info;
    }
    return 0;
}

/* Fixed P runs: every P up to 8, then powers of two and max. */
static int candidate_threads(int max, int *out)
{
    int n = 0;
    for (int p = 1; p <= max; p++)
        if (p <= 8 || (p & (p - 1)) == 0 || p == max)
            out[n++] = p;
    return n;
}

static inline double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static void finish_workload(gcs_validate_workload *w, int nsnap)
{
    /* Sums over snapshots into means, ratios of means into speedups.  The
     * predicted stacks were weighted by each snapshot's predicted serial
     * time, whose sum is nsnap times the mean. */
    const gcs_validate_point *p1 = &w->points[0];
    double serial_sum_ms = p1->pred_ms[0];
    for (int p = 1; p <= w->npoints; p++) {
        gcs_validate_point *pt = &w->points[p - 1];
        for (int k = 0; k < 7; k++)
            pt->pred_stack[k] = ratio(pt->pred_stack[k], serial_sum_ms);
        pt->pred = ratio(p1->pred_ms[0], pt->pred_ms[0]);
        pt->pred_no_contention = ratio(p1->pred_ms[0], pt->pred_ms[1]);
        pt->pred_no_extra = ratio(p1->pred_ms[0], pt->pred_ms[2]);
        pt->pred_critical = ratio(p1->pred_ms[3], pt->pred_ms[3]);
        pt->pred_fast = ratio(p1->pred_ms[4], pt->pred_ms[4]);
        pt->pred_overlap = isfinite(pt->pred_ms[5]) ? ratio(p1->pred_ms[5], pt->pred_ms[5]) : NAN;
        pt->pred_v2 = isfinite(pt->pred_ms[6]) ? ratio(p1->pred_ms[6], pt->pred_ms[6]) : NAN;
        pt->pred_v2_sim = isfinite(pt->pred_ms[7]) ? ratio(p1->pred_ms[7], pt->pred_ms[7]) : NAN;
    }
    for (int p = 1; p <= w->npoints; p++) {
        gcs_validate_point *pt = &w->points[p - 1];
        for (int k = 0; k < 8; k++)
            pt->pred_ms[k] /= nsnap;
        pt->steals_simulated /= nsnap;
        pt->speedup = ratio(p1->mark_ms, pt->mark_ms);
        pt->speedup_median = ratio(p1->mark_ms_median, pt->mark_ms_median);
        pt->error_pct = 100 * (pt->pred / pt->speedup - 1);
        pt->error_critical_pct = 100 * (pt->pred_critical / pt->speedup - 1);
        pt->error_fast_pct = 100 * (pt->pred_fast / pt->speedup - 1);
        pt->error_overlap_pct = 100 * (pt->pred_overlap / pt->speedup - 1); /* NaN without a fit */
        pt->error_v2_pct = 100 * (pt->pred_v2 / pt->speedup - 1);           /* NaN without the slow predictor */
        pt->error_v2_sim_pct = 100 * (pt->pred_v2_sim / pt->speedup - 1);
    }
    /* adaptive against the fixed runs */
    int nfixed = w->nruns - 1, best = 0;
    for (int i = 1; i < nfixed; i++)
        if (w->runs[i].mark_ms < w->runs[best].mark_ms)
            best = i;
    w->best_fixed = best;
    const gcs_validate_whole_run *ad = &w->runs[w->nruns - 1], *one = &w->runs[0], *all = &w->runs[nfixed - 1];
    w->adaptive_over_best_pct = 100 * (ad->mark_ms / w->runs[best].mark_ms - 1);
    double beyond = 1 + w->noise_pct / 100; /* slower than a fixed P: by more than the noise */
    w->adaptive_ok = w->adaptive_over_best_pct <= GCS_VALIDATE_ADAPTIVE_TARGET &&
                     !(ad->mark_ms > one->mark_ms * beyond && ad->mark_ms > all->mark_ms * beyond);
    w->speedup_full = all->mark_ms > 0 ? one->mark_ms / all->mark_ms : 0;
    w->speedup_adaptive = ad->mark_ms > 0 ? one->mark_ms / ad->mark_ms : 0;
}

int gcs_validate_run(const gcs_validate_opts *opts, gcs_validate_report *r, gcs_err *err)
{
    gcs_validate_opts o = *opts;
    if (o.placement == GCS_TOPO_PLACE_DEFAULT)
        o.placement = GCS_TOPO_PLACE_CORES; /* the collector's DEFAULT would read pin_workers */
    memset(r, 0, sizeof *r);
    uint64_t t0 = gcs_now_ns();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    r->cpus = online > 0 ? (int)online : 1;
    if (!o.machine_path || !o.snapshot_dir) {
        gcs_err_set(err, "validate: a machine profile and a snapshot directory are required");
        return -1;
    }
    if (o.max_threads <= 0)
        o.max_threads = r->cpus;
    if (o.max_threads > GCS_GC_MAX_THREADS) {
        gcs_err_set(err, "validate: at most %d threads", GCS_GC_MAX_THREADS);
        return -1;
    }
    if (o.reps <= 0)
        o.reps = o.quick ? 5 : 7;
    if (o.reps > MAX_REPS) {
        gcs_err_set(err, "validate: at most %d repetitions", MAX_REPS);
        return -1;
    }
    if (o.snapshots <= 0)
        o.snapshots = o.quick ? 2 : 4;
    if (o.snapshots > GCS_VALIDATE_MAX_SNAPSHOTS) {
        gcs_err_set(err, "validate: at most %d snapshots per workload", GCS_VALIDATE_MAX_SNAPSHOTS);
        return -1;
    }
    if (o.run_reps <= 0)
        o.run_reps = o.quick ? 5 : 9; /* bh's whole runs of one configuration differ by up to 24% */
    if (o.run_reps > MAX_RUN_REPS) {
        gcs_err_set(err, "validate: at most %d whole runs per configuration", MAX_RUN_REPS);
        return -1;
    }
    if (o.mutators <= 0)
        o.mutators = r->cpus;
    /* Quick runs the workloads at full length too: with half the steps the
     * snapshots fell on the first, small collections, whose few-millisecond
     * marks are start-up more than marking (a quick run measured bh and
     * cube at 1.23 and 1.07 where full runs measure 1.4-1.9). */
    if (!(o.steps_scale > 0))
        o.steps_scale = 1;
    const gcs_workload_info *infos[GCS_VALIDATE_MAX_WORKLOADS];
    int nw;
    if (select_workloads(o.workloads, infos, &nw, err) < 0)
        return -1;
    gcs_profile *prof = gcs_profile_load(o.machine_path, err);
    if (!prof)
        return -1;
    if (!prof->has_gc_cost) {
        gcs_err_set(err, "%s: profile has no gc_cost_ns: run gcscale calibrate on the machine",
                    o.machine_path);
        gcs_profile_free(prof);
        return -1;
    }
    if (gcs_make_dirs(o.snapshot_dir, err) < 0) {
        gcs_profile_free(prof);
        return -1;
    }
    gethostname(r->host, sizeof r->host - 1);
    snprintf(r->machine, sizeof r->machine, "%s", o.machine_path);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->created, sizeof r->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    r->max_threads = o.max_threads;
    r->overlap = prof->has_gc_overlap && prof->ncaches > 0 ? prof->gc_miss_overlap : NAN;
    r->mutators = o.mutators;
    r->reps = o.reps;
    r->run_reps = o.run_reps;
    r->quick = o.quick;

    int cand[GCS_VALIDATE_MAX_RUNS];
    int ncand = candidate_threads(o.max_threads, cand);
    if (ncand + 1 > GCS_VALIDATE_MAX_RUNS)
        ncand = GCS_VALIDATE_MAX_RUNS - 1;
    gcs_progress pr;
    /* work units: one per whole run, two per snapshot run, one per prediction */
    gcs_progress_init(&pr, (double)nw * ((ncand + 1) * o.run_reps + 2 + o.snapshots), o.quiet);
    remark_ctx *rc_ctx = calloc(1, sizeof *rc_ctx);
    gcs_gc_stats *median = calloc((size_t)o.snapshots * (size_t)o.max_threads, sizeof *median);
    int rc = -1;
    if (!rc_ctx || !median) {
        gcs_err_set(err, "validate: out of memory");
        goto done;
    }
    for (int wi = 0; wi < nw; wi++) {
        const gcs_workload_info *info = infos[wi];
        gcs_validate_workload *w = &r->w[r->nworkloads++];
        snprintf(w->name, sizeof w->name, "%s", info->name);
        char step[128];
        /* Whole runs: fixed P (the largest first: it sets the snapshot
         * spacing), then adaptive, `run_reps` rounds taking turns; each
         * configuration keeps its run with the median total mark time (runs
         * of one configuration differ by 30% on a shared machine). */
        gcs_validate_whole_run all[GCS_VALIDATE_MAX_RUNS][MAX_RUN_REPS];
        for (int rep = 0; rep < o.run_reps; rep++)
            for (int i = ncand; i >= 0; i--) {
                int adaptive = i == ncand;
                if (adaptive)
                    snprintf(step, sizeof step, "%s: whole run %d of %d, adaptive:%d", info->name, rep + 1,
                             o.run_reps, o.max_threads);
                else
                    snprintf(step, sizeof step, "%s: whole run %d of %d, %d GC thread%s", info->name,
                             rep + 1, o.run_reps, cand[i], cand[i] > 1 ? "s" : "");
                gcs_progress_step(&pr, step, 1);
                run_spec rs = {.o = &o, .info = info, .threads = adaptive ? o.max_threads : cand[i],
                               .adaptive = adaptive};
                if (run_workload(&rs, &all[i][rep], err) < 0)
                    goto done;
                gcs_progress_done(&pr, 1);
            }
        double spread[GCS_VALIDATE_MAX_RUNS];
        for (int i = 0; i <= ncand; i++) {
            double ms[MAX_RUN_REPS], lo = INFINITY, hi = 0;
            for (int rep = 0; rep < o.run_reps; rep++) {
                ms[rep] = all[i][rep].mark_ms;
                lo = fmin(lo, ms[rep]);
                hi = fmax(hi, ms[rep]);
            }
            w->runs[i] = all[i][median_index(ms, o.run_reps)];
            spread[i] = w->runs[i].mark_ms > 0 ? 100 * (hi - lo) / w->runs[i].mark_ms : 0;
        }
        /* The noise floor, as validate --policies states it (policies.c):
         * a whole run's total moves by this much between two runs of one
         * configuration, so the adaptive run is not "slower" than a fixed
         * P by less (docs/validate.md, "Targets"). */
        w->noise_pct = spread[median_index(spread, ncand + 1)];
        w->nruns = ncand + 1;

        /* The snapshot run, with re-marks. */
        uint64_t ncoll = w->runs[ncand - 1].collections;
        uint64_t every = ncoll / (uint64_t)(o.snapshots + 1);
        if (every < 1)
            every = 1;
        char pattern[600];
        snprintf(pattern, sizeof pattern, "%s/%s-%%d.snap", o.snapshot_dir, info->name);
        memset(rc_ctx, 0, sizeof *rc_ctx);
        rc_ctx->max_threads = o.max_threads;
        rc_ctx->reps = o.reps;
        rc_ctx->want = o.snapshots;
        rc_ctx->median_stats = median;
        snprintf(step, sizeof step, "%s: snapshots every %llu collections, re-marked at P = 1..%d",
                 info->name, (unsigned long long)every, o.max_threads);
        gcs_progress_step(&pr, step, 2);
        gcs_validate_whole_run snaprun;
        run_spec rsn = {.o = &o, .info = info, .threads = o.max_threads, .remark = rc_ctx,
                        .every = every, .snapshot_pattern = pattern};
        if (run_workload(&rsn, &snaprun, err) < 0)
            goto done;
        gcs_progress_done(&pr, 2);
        if (rc_ctx->taken > 0 && r->npu_map == 0)
            keep_pu_map(&median[o.max_threads - 1], r);
        if (rc_ctx->failed) {
            gcs_err_set(err, "%s: re-marking a collection's heap failed", info->name);
            goto done;
        }
        if (rc_ctx->taken == 0) {
            gcs_err_set(err, "%s: no snapshot was written (%llu collections)", info->name,
                        (unsigned long long)snaprun.collections);
            goto done;
        }
        /* Drop the snapshots the run wrote beyond the ones re-marked. */
        for (uint64_t c = 1; c <= snaprun.collections + 1; c++) {
            char path[700];
            snprintf(path, sizeof path, "%s/%s-%llu.snap", o.snapshot_dir, info->name,
                     (unsigned long long)c);
            int kept = 0;
            for (int k = 0; k < rc_ctx->taken; k++)
                kept |= strcmp(path, rc_ctx->path[k]) == 0;
            if (!kept)
                unlink(path);
        }
        w->npoints = o.max_threads;
        double sum_best1 = 0; /* the snapshots' fastest serial re-marks, summed */
        for (int k = 0; k < rc_ctx->taken; k++)
            sum_best1 += fastest_remark_ns(rc_ctx, k, 1);
        for (int k = 0; k < rc_ctx->taken; k++) {
            snprintf(w->snapshot[k], sizeof w->snapshot[k], "%s", rc_ctx->path[k]);
            w->snapshot_collection[k] = rc_ctx->collection[k];
            w->snapshot_live_mb[k] = (double)rc_ctx->live_bytes[k] / 1e6;
            double med[GCS_GC_MAX_THREADS];
            for (int p = 1; p <= o.max_threads; p++)
                med[p - 1] = (double)median[(size_t)k * (size_t)o.max_threads + (size_t)(p - 1)].mark_ns;
            const gcs_gc_stats *one = &median[(size_t)k * (size_t)o.max_threads];
            double busy1 = 0;
            for (int i = 0; i < one->threads; i++)
                busy1 += (double)one->workers[i].busy_ns;
            for (int p = 1; p <= o.max_threads; p++) {
                gcs_validate_point *pt = &w->points[p - 1];
                gcs_validate_stack st;
                gcs_validate_measured_stack(&median[(size_t)k * (size_t)o.max_threads + (size_t)(p - 1)],
                                            med[0], busy1, &st);
                pt->threads = p;
                /* The fastest re-mark at each P counts (fastest_remark_ns);
                 * the median's is kept too. */
                double best1 = fastest_remark_ns(rc_ctx, k, 1), bestp = fastest_remark_ns(rc_ctx, k, p);
                pt->mark_ms += bestp / 1e6 / rc_ctx->taken;
                pt->mark_ms_median += med[p - 1] / 1e6 / rc_ctx->taken;
                pt->steals_measured +=
                    (double)median[(size_t)k * (size_t)o.max_threads + (size_t)(p - 1)].steals / rc_ctx->taken;
                /* the stack weighted by this snapshot's share of the
                 * fastest serial time (see gcs_validate_point) */
                double weight = best1 / sum_best1;
                double *dst = &pt->measured_stack.speedup;
                const double *src = &st.speedup;
                for (int c = 0; c < 6; c++)
                    dst[c] += src[c] * weight;
            }
        }
        w->nsnapshots = 0;
        for (int k = 0; k < rc_ctx->taken; k++) {
            snprintf(step, sizeof step, "%s: predicting snapshot %d of %d", info->name, k + 1, rc_ctx->taken);
            gcs_progress_step(&pr, step, 1);
            w->nsnapshots++;
            if (predict_snapshot(rc_ctx->path[k], prof, o.max_threads, w, k == 0, w->slow_note,
                                 sizeof w->slow_note, err) < 0)
                goto done;
            gcs_progress_done(&pr, 1);
        }
        finish_workload(w, w->nsnapshots);
    }
    /* The mean absolute errors and the verdicts. */
    r->error_ok = 1;
    r->adaptive_ok = 1;
    for (int p = 2; p <= o.max_threads; p++) {
        double s = 0, sf = 0, sc = 0, so = 0, s2 = 0, s2s = 0;
        for (int i = 0; i < r->nworkloads; i++) {
            s += fabs(r->w[i].points[p - 1].error_pct);
            sf += fabs(r->w[i].points[p - 1].error_fast_pct);
            sc += fabs(r->w[i].points[p - 1].error_critical_pct);
            so += fabs(r->w[i].points[p - 1].error_overlap_pct); /* NaN without a fit */
            s2 += fabs(r->w[i].points[p - 1].error_v2_pct);
            s2s += fabs(r->w[i].points[p - 1].error_v2_sim_pct);
        }
        r->mae_pct[p] = s / r->nworkloads;
        r->mae_fast_pct[p] = sf / r->nworkloads;
        r->mae_critical_pct[p] = sc / r->nworkloads;
        r->mae_overlap_pct[p] = so / r->nworkloads;
        r->mae_v2_pct[p] = s2 / r->nworkloads;
        r->mae_v2_sim_pct[p] = s2s / r->nworkloads;
    }
    /* The verdict is on what gcscale predict says by default (model v2
     * since 2026-11-29, docs/model.md "v2 the default"); without a slow
     * predictor there are no v2 figures here, and the base model's stand. */
    int v2 = o.max_threads >= 2;
    for (int p = 2; p <= o.max_threads; p++)
        v2 &= isfinite(r->mae_v2_sim_pct[p]);
    snprintf(r->error_model, sizeof r->error_model, "%s", v2 ? "v2" : "base");
    const double *verdict = _gcs_validate_verdict_mae(r);
    for (int p = 2; p <= o.max_threads; p++)
        if (!(verdict[p] <= GCS_VALIDATE_ERROR_TARGET))
            r->error_ok = 0;
    for (int i = 0; i < r->nworkloads; i++)
        r->adaptive_ok &= r->w[i].adaptive_ok;
    gcs_progress_finish(&pr);
    r->seconds = (double)(gcs_now_ns() - t0) / 1e9;
    rc = 0;
done:
    free(rc_ctx);
    free(median);
    gcs_profile_free(prof);
    return rc;
}
