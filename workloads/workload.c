/* workload.c -- the workload registry and runner: starts the mutator threads,
 * waits for them detached, collects the result and the collections' times,
 * and the barrier the workloads share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/trace.h"
#include "internal.h"

static const wl_impl *const impls[] = {&_gcs_wl_bh, &_gcs_wl_cube, &_gcs_wl_cky, &_gcs_wl_chain};
#define NIMPLS (sizeof impls / sizeof impls[0])

static const char *const names[] = {"bh", "cube", "cky", "chain", NULL};

size_t gcs_workload_count(void) { return NIMPLS; }

const gcs_workload_info *gcs_workload_info_at(size_t i) { return i < NIMPLS ? &impls[i]->info : NULL; }

static const wl_impl *find_impl(const char *name)
{
    for (size_t i = 0; name && i < NIMPLS; i++)
        if (strcmp(impls[i]->info.name, name) == 0)
            return impls[i];
    return NULL;
}

const gcs_workload_info *gcs_workload_find(const char *name)
{
    const wl_impl *w = find_impl(name);
    return w ? &w->info : NULL;
}

const char *const *gcs_workload_names(void) { return names; }

size_t gcs_workload_default_heap(const gcs_workload_info *info, int mutators)
{
    return info->default_heap + (size_t)(mutators > 0 ? mutators : 1) * GCS_WORKLOAD_HEAP_PER_MUTATOR;
}

/* ---- per-collection log ------------------------------------------------------ */

void gcs_workload_gclog_hook(const gcs_gc_stats *st, void *arg)
{
    gcs_workload_gclog *log = arg;
    if (log->next)
        log->next(st, log->next_arg);
    if (st->remark)
        return;
    if (log->n == log->cap) {
        size_t ncap = log->cap ? 2 * log->cap : 256;
        gcs_workload_gc_row *rows = realloc(log->rows, ncap * sizeof *rows);
        if (!rows) {
            log->oom = 1;
            return;
        }
        log->rows = rows;
        log->cap = ncap;
    }
    gcs_workload_gc_row *r = &log->rows[log->n++];
    r->index = st->index;
    r->reason = (int)st->reason;
    r->threads = st->threads;
    r->policy_used = st->decision.used;
    r->start_ns = st->start_ns;
    r->pause_ns = st->pause_ns;
    r->mark_ns = st->mark_ns;
    r->sweep_ns = st->sweep_ns;
    r->stop_ns = st->stop_ns;
    r->t1_ns = st->t1_ns;
    r->live_objects = st->live_objects;
    r->live_bytes = st->live_bytes;
    r->decision_ns = st->decision.used ? st->decision.decision_ns : 0;
}

void gcs_workload_gclog_install(gcs_gc_options *opts, gcs_workload_gclog *log)
{
    memset(log, 0, sizeof *log);
    log->next = opts->on_collection;
    log->next_arg = opts->on_collection_arg;
    opts->on_collection = gcs_workload_gclog_hook;
    opts->on_collection_arg = log;
}

void gcs_workload_gclog_free(gcs_workload_gclog *log)
{
    free(log->rows);
    log->rows = NULL;
    log->n = log->cap = 0;
}

/* ---- helpers for the workloads ------------------------------------------------ */

void _gcs_wl_fail(wl_run *r, const char *fmt, ...)
{
    pthread_mutex_lock(&r->lock);
    if (!atomic_load(&r->failed)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->fail_msg, sizeof r->fail_msg, fmt, ap);
        va_end(ap);
        atomic_store(&r->failed, 1);
    }
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

int _gcs_wl_barrier(wl_run *r)
{
    /* Detached, a waiting thread never holds up a collection; its long-lived
     * objects are in registered slots, not on its (dropped) shadow stack. */
    gcs_gc_detach();
    gcs_trace_set_state(GCS_TRACE_BLOCKED_BARRIER);
    if (pthread_mutex_trylock(&r->lock) != 0) {
        gcs_trace_set_state(GCS_TRACE_BLOCKED_LOCK);
        pthread_mutex_lock(&r->lock);
        gcs_trace_set_state(GCS_TRACE_BLOCKED_BARRIER);
    }
    uint64_t gen = r->generation;
    if (++r->arrived == r->mutators) {
        r->arrived = 0;
        r->generation++;
        pthread_cond_broadcast(&r->cond);
    } else {
        while (gen == r->generation && !atomic_load(&r->failed))
            pthread_cond_wait(&r->cond, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    gcs_trace_set_state(GCS_TRACE_RUNNING);
    gcs_err err;
    if (gcs_gc_attach(&err) < 0) {
        _gcs_wl_fail(r, "%s", err.msg);
        return -1;
    }
    return atomic_load(&r->failed) ? -1 : 0;
}

void *_gcs_wl_alloc(wl_run *r, size_t size, size_t nptrs)
{
    void *p = gcs_gc_alloc(size, nptrs);
    if (!p)
        _gcs_wl_fail(r, "%s: %s (the heap limit is too small for this size)", r->impl->info.name,
                gcs_gc_last_error());
    return p;
}

void *_gcs_wl_alloc_data(wl_run *r, size_t size)
{
    void *p = gcs_gc_alloc_data(size);
    if (!p)
        _gcs_wl_fail(r, "%s: %s (the heap limit is too small for this size)", r->impl->info.name,
                gcs_gc_last_error());
    return p;
}

void _gcs_wl_progress(wl_run *r, double fraction)
{
    if (r->progress)
        r->progress(fraction < 0 ? 0 : fraction > 1 ? 1 : fraction, r->progress_arg);
}

void _gcs_wl_verdict(gcs_workload_result *res, int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->verify_msg, sizeof res->verify_msg, fmt, ap);
    va_end(ap);
    res->verified = ok;
}

void _gcs_wl_figure(gcs_workload_result *res, const char *name, double value)
{
    if (res->nfigures < (int)(sizeof res->figures / sizeof res->figures[0])) {
        res->figures[res->nfigures].name = name;
        res->figures[res->nfigures].value = value;
        res->nfigures++;
    }
}

/* ---- the runner ----------------------------------------------------------------- */

void gcs_workload_options_init(gcs_workload_options *o)
{
    memset(o, 0, sizeof *o);
    o->mutators = 1;
    o->seed = 1;
}

typedef struct wl_thread {
    wl_run *run;
    int index;
    char name[32];
} wl_thread;

static void *mutator_main(void *arg)
{
    wl_thread *t = arg;
    wl_run *r = t->run;
    gcs_trace_thread_begin(t->name, "mutator");
    gcs_err err;
    if (gcs_gc_attach(&err) < 0) {
        _gcs_wl_fail(r, "%s", err.msg);
    } else {
        r->impl->mutator(r, t->index);
        gcs_gc_detach();
    }
    gcs_trace_thread_end();
    return NULL;
}

int gcs_workload_run(const gcs_workload_options *opts, gcs_workload_result *res, gcs_err *err)
{
    memset(res, 0, sizeof *res);
    const wl_impl *impl = find_impl(opts->name);
    if (!impl) {
        gcs_err_set(err, "unknown workload '%s' (bh, cube or cky)", opts->name ? opts->name : "(null)");
        return -1;
    }
    const gcs_workload_info *info = &impl->info;
    if (opts->mutators < 1 || opts->mutators > GCS_WORKLOAD_MAX_MUTATORS) {
        gcs_err_set(err, "%s: mutators must be 1..%d, not %d", info->name, GCS_WORKLOAD_MAX_MUTATORS,
                    opts->mutators);
        return -1;
    }
    uint64_t size = opts->size ? opts->size : info->default_size;
    uint64_t steps = opts->steps ? opts->steps : info->default_steps;
    if (size > info->max_size || steps > info->max_steps) {
        gcs_err_set(err, "%s: size must be 1..%llu (%s) and steps 1..%llu (%s)", info->name,
                    (unsigned long long)info->max_size, info->size_meaning, (unsigned long long)info->max_steps,
                    info->steps_meaning);
        return -1;
    }
    if (!gcs_gc_is_initialized()) {
        gcs_err_set(err, "%s: the collector is not initialized (gcs_gc_init)", info->name);
        return -1;
    }
    /* The caller must be attached: attach fails exactly when it is. */
    if (gcs_gc_attach(err) == 0) {
        gcs_gc_detach();
        gcs_err_set(err, "%s: the calling thread must be attached to the collector", info->name);
        return -1;
    }
    err->msg[0] = 0;

    wl_run *r = calloc(1, sizeof *r);
    wl_thread *threads = calloc((size_t)opts->mutators, sizeof *threads);
    pthread_t *tids = calloc((size_t)opts->mutators, sizeof *tids);
    if (r)
        r->slot = calloc((size_t)opts->mutators, sizeof *r->slot);
    if (!r || !threads || !tids || !r->slot) {
        if (r)
            free(r->slot);
        free(r);
        free(threads);
        free(tids);
        gcs_err_set(err, "%s: out of memory", info->name);
        return -1;
    }
    r->impl = impl;
    r->mutators = opts->mutators;
    r->size = size;
    r->steps = steps;
    r->seed = opts->seed ? opts->seed : 1;
    r->progress = opts->progress;
    r->progress_arg = opts->progress_arg;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    res->info = info;
    res->mutators = r->mutators;
    res->size = size;
    res->steps = steps;
    res->seed = r->seed;

    int rc = 0, nroots = 0, started = 0;
    for (int k = 0; k < WL_SLOTS && rc == 0; k++, nroots++)
        if (gcs_gc_add_root(&r->shared[k]) < 0)
            rc = -1;
    for (int i = 0; i < r->mutators && rc == 0; i++)
        for (int k = 0; k < WL_SLOTS && rc == 0; k++, nroots++)
            if (gcs_gc_add_root(&r->slot[i][k]) < 0)
                rc = -1;
    if (rc < 0)
        gcs_err_set(err, "%s: out of memory for root slots", info->name);

    if (rc == 0 && impl->setup(r, err) < 0)
        rc = -1;
    size_t log_first = opts->gclog ? opts->gclog->n : 0;
    uint64_t coll0 = gcs_gc_collections();

    uint64_t t0 = gcs_now_ns(), t1 = t0;
    if (rc == 0) {
        /* The calling thread waits detached; the shared state is in slots. */
        gcs_gc_detach();
        for (int i = 0; i < r->mutators; i++) {
            threads[i].run = r;
            threads[i].index = i;
            snprintf(threads[i].name, sizeof threads[i].name, "%s-mutator-%d", info->name, i);
            if (pthread_create(&tids[i], NULL, mutator_main, &threads[i]) != 0) {
                _gcs_wl_fail(r, "%s: cannot start mutator thread %d", info->name, i);
                break;
            }
            started++;
        }
        gcs_trace_set_state(GCS_TRACE_BLOCKED_BARRIER);
        for (int i = 0; i < started; i++)
            pthread_join(tids[i], NULL);
        gcs_trace_set_state(GCS_TRACE_RUNNING);
        t1 = gcs_now_ns();
        gcs_err aerr;
        if (gcs_gc_attach(&aerr) < 0 && !atomic_load(&r->failed))
            _gcs_wl_fail(r, "%s", aerr.msg);
        if (atomic_load(&r->failed)) {
            gcs_err_set(err, "%s", r->fail_msg);
            rc = -1;
        }
    }
    res->wall_ns = t1 - t0;
    res->collections = gcs_gc_collections() - coll0;
    /* The run's collections: those logged between the threads' start and
     * the last join (not the verification's). */
    size_t log_end = opts->gclog ? opts->gclog->n : 0;
    if (rc == 0)
        impl->verify(r, res);
    impl->teardown(r);

    if (opts->gclog) {
        const gcs_workload_gclog *log = opts->gclog;
        res->gc_timed = !log->oom;
        res->gc_first = log_first;
        res->gc_count = log_end - log_first;
        for (size_t i = log_first; i < log_end; i++) {
            res->gc_pause_ns += log->rows[i].pause_ns;
            res->gc_mark_ns += log->rows[i].mark_ns;
        }
        res->mutator_ns = res->wall_ns > res->gc_pause_ns ? res->wall_ns - res->gc_pause_ns : 0;
    }

    /* Slots were registered in order; unregister the ones that were. */
    for (int k = 0; k < WL_SLOTS && nroots > 0; k++, nroots--)
        gcs_gc_remove_root(&r->shared[k]);
    for (int i = 0; i < r->mutators && nroots > 0; i++)
        for (int k = 0; k < WL_SLOTS && nroots > 0; k++, nroots--)
            gcs_gc_remove_root(&r->slot[i][k]);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    free(r->slot);
    free(r);
    free(threads);
    free(tids);
    return rc;
}
