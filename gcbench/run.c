/* run.c -- the gc-bench engine (gcbench.h): build the heap, collect it at
 * every P in rounds, keep every repetition, take the medians.
 *
 * The heap limit is twice the heap in its size classes (at most 1.34x) plus
 * 64 MiB, so that no collection is ever forced by allocation; the
 * collector's GCSCALE_GC_THREADS is ignored, since the run times the P
 * values it was given (except under the adaptive policy, whose pool the
 * spec sizes).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/internal.h"
#include "gcscale/adaptive.h"
#include "gcscale/gcbench.h"
#include "gcscale/snapshot.h"

_Static_assert(GCS_GCBENCH_MAX_THREADS == GCS_GC_MAX_THREADS,
               "a result row has room for every worker of the collector");

void gcs_gcbench_opts_init(gcs_gcbench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->shape.seed = 1;
    o->reps = 7;
    gcs_gc_options_default(&o->gc);
    o->gc.placement = GCS_TOPO_PLACE_CORES;
    o->numa_name = "local";
}

/* The run's state: what a failure has to undo. */
typedef struct run {
    const gcs_gcbench_opts *o;
    gcs_gcbench_result *r;
    gcs_gc_stats *st;
    uint64_t expect_live;
    void *root;
    int gc_started, root_added;
    gcs_gc_snapshot_heap sheap;
} run;

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static void notice(const run *x, int warning, const char *msg)
{
    if (!x->o->quiet && x->o->notice)
        x->o->notice(x->o->notice_arg, warning, msg);
}

/* One collection at the current P; checks that the whole heap survived. */
static int collect(run *x, gcs_err *err)
{
    gcs_gc_collect();
    if (gcs_gc_last_stats(x->st) < 0) {
        gcs_err_set(err, "gc: no statistics after a collection");
        return -1;
    }
    if (x->st->live_objects != x->expect_live) {
        gcs_err_set(err, "gc: %llu live objects after a collection, expected %llu (collector bug)",
                    (unsigned long long)x->st->live_objects, (unsigned long long)x->expect_live);
        return -1;
    }
    return 0;
}

/* Where the workers of a collection at the largest P ran. */
static void keep_placement(const gcs_gc_stats *st, gcs_gcbench_result *r)
{
    snprintf(r->placement, sizeof r->placement, "%s", gcs_topo_placement_name(st->placement));
    r->pinned = st->placement != GCS_TOPO_PLACE_NONE;
    r->npu_map = st->threads;
    for (int i = 0; i < st->threads; i++) {
        r->pu_map[i] = st->workers[i].cpu;
        r->pu_map_logical[i] = st->workers[i].pu;
    }
}

/* A collection's figures at a fixed P, into sample s. */
static void keep_sample(const gcs_gc_stats *st, gcs_gcbench_sample *s)
{
    s->mark_ms = ms(st->mark_ns);
    s->pause_ms = ms(st->pause_ns);
    s->t1_ms = ms(st->t1_ns);
    s->steals = (double)st->steals;
    s->steal_attempts = (double)st->steal_attempts;
    s->llc_misses = st->cache_misses_available ? 0 : NAN;
    for (int w = 0; w < st->threads; w++) {
        s->busy_share[w] = st->mark_ns ? (double)st->workers[w].busy_ns / (double)st->mark_ns : NAN;
        if (st->workers[w].cache_misses < 0)
            s->llc_misses = NAN;
        else
            s->llc_misses += (double)st->workers[w].cache_misses;
    }
}

/* One collection with the policy choosing P; keeps its decision. */
static int adaptive_collect(run *x, gcs_gcbench_decision *a, gcs_err *err)
{
    if (collect(x, err) < 0)
        return -1;
    const gcs_gc_stats *st = x->st;
    const gcs_gc_decision *d = &st->decision;
    if (!d->used) {
        gcs_err_set(err, "gc: the adaptive policy made no decision (collector bug)");
        return -1;
    }
    a->threads = d->threads;
    a->npredicted = d->npredicted;
    for (int k = 0; k < d->npredicted; k++)
        a->predicted_ms[k] = d->predicted_mark_ns[k] / 1e6;
    a->predicted_mark_ms = d->npredicted >= d->threads ? a->predicted_ms[d->threads - 1] : NAN;
    a->mark_ms = ms(st->mark_ns);
    a->decision_us = (double)d->decision_ns / 1e3;
    a->decision_pct = st->mark_ns ? 100.0 * (double)d->decision_ns / (double)st->mark_ns : NAN;
    return 0;
}

/* ---- medians ----------------------------------------------------------------- */

/* The double at offset in each of n samples: their median, min or max. */
static double sample_median(const gcs_gcbench_sample *s, int n, size_t offset)
{
    double v[GCS_GCBENCH_MAX_REPS];
    for (int i = 0; i < n; i++)
        v[i] = *(const double *)((const char *)&s[i] + offset);
    return gcs_stats_median(v, (size_t)n);
}

static double sample_extreme(const gcs_gcbench_sample *s, int n, size_t offset, int want_max)
{
    double best = *(const double *)((const char *)&s[0] + offset);
    for (int i = 1; i < n; i++) {
        double v = *(const double *)((const char *)&s[i] + offset);
        if (want_max ? v > best : v < best)
            best = v;
    }
    return best;
}

static void aggregate(gcs_gcbench_result *r, int llc_ok)
{
    int reps = r->reps, base = -1;
    for (int i = 0; i < r->nrows; i++) {
        gcs_gcbench_row *w = &r->rows[i];
        const gcs_gcbench_sample *s = w->samples;
#define MEDIAN(field) sample_median(s, reps, offsetof(gcs_gcbench_sample, field))
#define EXTREME(field, want_max) sample_extreme(s, reps, offsetof(gcs_gcbench_sample, field), want_max)
        w->mark_ms = MEDIAN(mark_ms);
        w->mark_ms_min = EXTREME(mark_ms, 0);
        w->mark_ms_max = EXTREME(mark_ms, 1);
        w->pause_ms = MEDIAN(pause_ms);
        w->pause_ms_min = EXTREME(pause_ms, 0);
        w->pause_ms_max = EXTREME(pause_ms, 1);
        w->t1_ms = MEDIAN(t1_ms);
        w->steals = MEDIAN(steals);
        w->steal_attempts = MEDIAN(steal_attempts);
        w->llc_misses = llc_ok ? MEDIAN(llc_misses) : NAN;
        for (int k = 0; k < w->threads; k++)
            w->busy_share[k] = MEDIAN(busy_share[k]);
        w->mark_ms_uninstrumented = w->instr_overhead_pct = NAN;
        if (r->instr_cost) {
            double ratio[GCS_GCBENCH_MAX_REPS];
            for (int k = 0; k < reps; k++)
                ratio[k] = s[k].mark_ms / s[k].mark_ms_uninstrumented;
            w->mark_ms_uninstrumented = MEDIAN(mark_ms_uninstrumented);
            w->instr_overhead_pct = 100 * (gcs_stats_median(ratio, (size_t)reps) - 1);
        }
#undef MEDIAN
#undef EXTREME
        w->mobjects_per_s = (double)r->objects / (w->mark_ms / 1e3) / 1e6;
        w->mb_per_s = (double)r->bytes / (w->mark_ms / 1e3) / 1e6;
        if (w->threads == 1)
            base = i;
    }
    for (int i = 0; i < r->nrows; i++) {
        gcs_gcbench_row *w = &r->rows[i];
        w->speedup_mark = base >= 0 ? r->rows[base].mark_ms / w->mark_ms : NAN;
        w->speedup_pause = base >= 0 ? r->rows[base].pause_ms / w->pause_ms : NAN;
    }
    if (r->ndecisions) {
        double mark[GCS_GCBENCH_MAX_REPS], pct[GCS_GCBENCH_MAX_REPS], p[GCS_GCBENCH_MAX_REPS];
        for (int k = 0; k < r->ndecisions; k++) {
            mark[k] = r->decisions[k].mark_ms;
            pct[k] = r->decisions[k].decision_pct;
            p[k] = r->decisions[k].threads;
        }
        r->adaptive_mark_ms_median = gcs_stats_median(mark, (size_t)r->ndecisions);
        r->adaptive_decision_pct_median = gcs_stats_median(pct, (size_t)r->ndecisions);
        r->adaptive_threads_median = gcs_stats_median(p, (size_t)r->ndecisions);
    }
    r->best_fixed = 0;
    for (int i = 1; i < r->nrows; i++)
        if (r->rows[i].mark_ms < r->rows[r->best_fixed].mark_ms)
            r->best_fixed = i;
}

/* ---- the run ------------------------------------------------------------------- */

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* The heap's description before it is built: the shape's, or for a
 * snapshot what its statistics know of the reachable part. */
static int describe_heap(run *x, gcs_gcbench_opts *o, gcs_snapshot **snap, gcs_shape_info *info, gcs_err *err)
{
    if (gcs_shape_params_check(&o->shape, err) < 0)
        return -1;
    gcs_shape_describe(&o->shape, info);
    if (!o->snapshot)
        return 0;
    *snap = gcs_snapshot_read(o->snapshot, err);
    if (!*snap)
        return -1;
    gcs_snapshot_stats ss;
    if (gcs_snapshot_stats_compute(*snap, &ss, err) < 0)
        return -1;
    if (ss.reachable < ss.objects) {
        char msg[sizeof err->msg + 64];
        snprintf(msg, sizeof msg, "%s: %llu of %llu objects are unreachable and will be collected by the warm-up",
                 o->snapshot, (unsigned long long)(ss.objects - ss.reachable), (unsigned long long)ss.objects);
        notice(x, 1, msg);
    }
    memset(info, 0, sizeof *info);
    info->objects = ss.reachable;
    /* pointers and bytes of the reachable part are not known without a
     * walk; count the whole snapshot's when everything is reachable */
    info->pointers = ss.edges;
    info->payload_bytes = ss.bytes;
    info->gcs_bytes = ss.bytes + 8 * ss.objects;
    if (ss.reachable < ss.objects)
        info->gcs_bytes = 0; /* throughput then uses the bytes the collector reports */
    gcs_snapshot_stats_free(&ss);
    return 0;
}

/* The warm-up; the first collection writes the snapshot asked for, which
 * the collector does not fail a collection for, but gc-bench does. */
static int warm_up(run *x, gcs_err *err)
{
    const char *out = x->o->snapshot_out;
    if (out && gcs_gc_snapshot_next(out) < 0) {
        gcs_err_set(err, "gc: cannot request a snapshot");
        return -1;
    }
    for (int i = 0; i < GCS_GCBENCH_WARMUP; i++) {
        if (collect(x, err) < 0)
            return -1;
        if (i != 0 || !out)
            continue;
        /* the option's name, since the message is all its user sees */
        if (x->st->snapshot_status != 1) {
            if (x->st->snapshot_error[0])
                gcs_err_set(err, "--snapshot-out: %s", x->st->snapshot_error);
            else
                gcs_err_set(err, "--snapshot-out %s: no snapshot was written", out);
            return -1;
        }
        char msg[sizeof x->st->snapshot_path + 64];
        snprintf(msg, sizeof msg, "wrote %s (%llu objects)", x->st->snapshot_path,
                 (unsigned long long)x->st->snapshot_objects);
        notice(x, 0, msg);
    }
    return 0;
}

/* reps rounds: every P (on/off pairs with instr_cost, alternating which
 * goes first), then the adaptive collection, so drifts hit all alike. */
static int rounds(run *x, gcs_progress *pr, gcs_err *err)
{
    const gcs_gcbench_opts *o = x->o;
    gcs_gcbench_result *r = x->r;
    int pairs = o->instr_cost ? 2 : 1;
    double work = (double)r->nrows * pairs + (r->ndecisions ? 1 : 0);
    for (int k = 0; k < r->reps; k++) {
        char step[160];
        snprintf(step, sizeof step, "round %d of %d (P = %d..%d)", k + 1, r->reps, r->rows[0].threads,
                 r->rows[r->nrows - 1].threads);
        gcs_progress_step(pr, step, work);
        for (int i = 0; i < r->nrows; i++) {
            gcs_gcbench_sample *s = &r->rows[i].samples[k];
            gcs_gc_set_threads(r->rows[i].threads);
            for (int j = 0; j < pairs; j++) {
                int on = !o->instr_cost || ((j + k) & 1) == 0;
                gcs_gc_set_instrumentation(on);
                if (collect(x, err) < 0)
                    return -1;
                if (on)
                    keep_sample(x->st, s);
                else
                    s->mark_ms_uninstrumented = ms(x->st->mark_ns);
            }
        }
        if (r->ndecisions) {
            gcs_gc_set_instrumentation(1); /* the policy reads the counters */
            gcs_gc_set_thread_policy_active(1);
            if (adaptive_collect(x, &r->decisions[k], err) < 0)
                return -1;
            gcs_gc_set_thread_policy_active(0);
        }
        gcs_progress_done(pr, work);
    }
    gcs_gc_set_instrumentation(1);
    return 0;
}

static int span_collection(run *x, gcs_progress *pr, gcs_err *err)
{
    gcs_gcbench_result *r = x->r;
    gcs_progress_step(pr, "T-infinity", 1);
    gcs_gc_set_compute_span(1, 0, 0);
    if (collect(x, err) < 0)
        return -1;
    r->span = x->st->span;
    r->span_ms = ms(x->st->span_ns);
    r->parallelism = isnan(r->span) ? NAN : ((double)r->objects + (double)r->pointers) / r->span;
    gcs_gc_set_compute_span(0, 0, 0);
    gcs_progress_done(pr, 1);
    return 0;
}

static gcs_gcbench_result *new_result(const gcs_gcbench_opts *o)
{
    gcs_gcbench_result *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->nrows = o->nthreads;
    r->reps = o->reps;
    r->rows = calloc((size_t)o->nthreads, sizeof *r->rows);
    if (!r->rows)
        goto fail;
    for (int i = 0; i < o->nthreads; i++) {
        r->rows[i].threads = o->threads[i];
        if (!(r->rows[i].samples = calloc((size_t)o->reps, sizeof(gcs_gcbench_sample))))
            goto fail;
    }
    if (o->adaptive_spec) {
        r->ndecisions = o->reps;
        r->decisions = calloc((size_t)o->reps, sizeof *r->decisions);
        r->adaptive_spec = strdup(o->adaptive_spec);
        if (!r->decisions || !r->adaptive_spec || (o->machine && !(r->adaptive_machine = strdup(o->machine))))
            goto fail;
    }
    if (o->snapshot && !(r->snapshot = dup_or_null(o->snapshot)))
        goto fail;
    return r;
fail:
    gcs_gcbench_result_free(r);
    return NULL;
}

int gcs_gcbench_run(const gcs_gcbench_opts *opts, gcs_gcbench_result **out, gcs_err *err)
{
    *out = NULL;
    gcs_assert_internal(opts->nthreads >= 1 && opts->reps >= 1 && opts->reps <= GCS_GCBENCH_MAX_REPS);
    gcs_gcbench_opts o = *opts; /* describe_heap fills in the shape's defaults */
    run x = {.o = &o};
    gcs_snapshot *snap = NULL;
    gcs_shape_info info;
    int rc = -1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int pmax = o.threads[o.nthreads - 1];
    if (describe_heap(&x, &o, &snap, &info, err) < 0)
        goto done;
    x.r = new_result(&o);
    x.st = malloc(sizeof *x.st);
    if (!x.r || !x.st) {
        gcs_err_set(err, "out of memory");
        goto done;
    }
    gcs_gcbench_result *r = x.r;

    gcs_gc_options go = o.gc;
    go.heap_limit = o.heap_limit ? o.heap_limit : 2 * (info.gcs_bytes + 8 * info.objects) + (64u << 20);
    if (snap && !o.heap_limit) {
        uint64_t all = 0;
        for (uint64_t i = 0; i < snap->nobjects; i++)
            all += 16 + 8 * (uint64_t)snap->words[i];
        go.heap_limit = 2 * all + (64u << 20);
    }
    go.threads = pmax;
    go.max_threads = pmax;
    go.alloc_budget = 0;
    if (o.adaptive_spec) {
        /* A benchmark of the adaptive policy without its profile measures
         * nothing: the fallback's warning is an error here. */
        int crc = gcs_adaptive_configure(&go, o.adaptive_spec, o.machine, err);
        if (crc != 0) {
            if (crc > 0)
                gcs_adaptive_release(&go);
            goto done;
        }
        go.threads = pmax;
    } else {
        go.ignore_threads_env = 1;
    }
    if (gcs_gc_init(&go, err) < 0)
        goto done;
    x.gc_started = 1;
    if (o.adaptive_spec)
        gcs_gc_set_thread_policy_active(0); /* fixed-P rows first */
    if (gcs_gc_add_root(&x.root) < 0) {
        gcs_err_set(err, "gc: out of memory for a root");
        goto done;
    }
    x.root_added = 1;

    gcs_progress pr;
    double total = (double)GCS_GCBENCH_WARMUP + (double)o.reps * o.nthreads * (o.instr_cost ? 2 : 1) +
                   (o.span ? 1 : 0) + (o.adaptive_spec ? o.reps : 0);
    gcs_progress_init(&pr, total + 1, o.quiet);
    char step[160];
    snprintf(step, sizeof step, "building %s (%llu objects)", snap ? o.snapshot : gcs_shape_name(o.shape.kind),
             (unsigned long long)(snap ? snap->nobjects : info.objects));
    gcs_progress_step(&pr, step, 1);
    uint64_t t0 = gcs_now_ns();
    if (snap) {
        if (gcs_gc_build_snapshot(snap, &x.sheap, err) < 0)
            goto done;
        gcs_snapshot_free(snap);
        snap = NULL;
    } else if (gcs_shape_build_gc(&o.shape, &x.root, &info, err) < 0) {
        goto done;
    }
    r->build_ms = ms(gcs_now_ns() - t0);
    gcs_progress_done(&pr, 1);

    x.expect_live = info.objects;
    gcs_progress_step(&pr, "warm-up collections", GCS_GCBENCH_WARMUP);
    if (warm_up(&x, err) < 0)
        goto done;
    keep_placement(x.st, r); /* the warm-up ran all pmax workers */
    if (o.snapshot && info.gcs_bytes == 0)
        info.gcs_bytes = x.st->live_bytes; /* slot bytes of the live objects */
    gcs_progress_done(&pr, GCS_GCBENCH_WARMUP);

    r->objects = info.objects;
    r->pointers = info.pointers;
    r->bytes = info.gcs_bytes;
    r->payload_bytes = info.payload_bytes;
    r->has_objects = 1;
    if (rounds(&x, &pr, err) < 0)
        goto done;
    r->has_span = o.span;
    r->span = r->span_ms = r->parallelism = NAN;
    if (o.span && span_collection(&x, &pr, err) < 0)
        goto done;
    gcs_progress_finish(&pr);

    snprintf(r->shape, sizeof r->shape, "%s", o.snapshot ? "snapshot" : gcs_shape_name(o.shape.kind));
    r->depth = o.shape.depth;
    r->size = o.shape.objects;
    r->seed = o.shape.seed;
    snprintf(r->mark_mode, sizeof r->mark_mode, "%s", gcs_gc_mark_mode_name(go.mark_mode));
    snprintf(r->numa, sizeof r->numa, "%s", o.numa_name ? o.numa_name : "");
    r->cpus = ncpu < 1 ? 1 : (int)ncpu;
    r->warmup = GCS_GCBENCH_WARMUP;
    r->heap_limit = x.st->heap_limit;
    r->instr_cost = o.instr_cost;
    int llc_ok = gcs_gc_cache_miss_info(r->cache_misses, sizeof r->cache_misses);
    aggregate(r, llc_ok);
    *out = r;
    x.r = NULL;
    rc = 0;
done:
    if (x.root_added)
        gcs_gc_remove_root(&x.root);
    if (x.sheap.roots)
        gcs_gc_snapshot_heap_release(&x.sheap);
    if (x.gc_started)
        gcs_gc_shutdown();
    gcs_snapshot_free(snap);
    gcs_gcbench_result_free(x.r);
    free(x.st);
    return rc;
}
