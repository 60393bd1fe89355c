/* pool.c -- the collector's worker pool: starting the workers, binding them
 * to PUs by the placement policy, handing out a job (mark or sweep) and waiting for it, joining them.
 *
 * Workers are started once by gcs_gc_init and reused by every collection:
 * each waits on job_cond for the next job_epoch, runs its part of the job if
 * its index is below the job's P, and reports on done_cond.  The pool knows
 * the two jobs only by the function each worker runs (_gcs_mark_worker in
 * mark.c, _gcs_sweep_worker in sweep.c); it is kept apart from mark.c so that
 * the mark is a leaf the pool calls, never a caller of the pool (collect.c
 * starts the jobs).
 *
 * The pool_lock hand-offs order everything the coordinator wrote before a
 * job (job_mode, the workers' cleared counters, the roots it pushed) before
 * the workers' reads, and everything the workers wrote before the
 * coordinator's reads after the job.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "gc_internal.h"
#include "gcscale/trace.h"

/* Binds the calling worker to its PU of the placement (gc->pu_map, set
 * before the threads start).  Returns 0 when bound, -1 when unpinned (policy
 * none, or a bind the kernel refused: the worker then runs where the
 * scheduler puts it, and its stats say cpu -1). */
static int bind_to_pu(gcs_worker *w)
{
    gcs_collector *gc = w->gc;
    if (!gc->pu_map)
        return -1;
    const gcs_topo_pu *pu = &gc->pu_map[w->index];
    char warn[128];
    gcs_err ignored;
    return gcs_topo_pin_cpu(gc->topo, pu->os_index, warn, sizeof warn, &ignored) == 0 ? 0 : -1;
}

static void *worker_main(void *arg)
{
    gcs_worker *w = arg;
    gcs_collector *gc = w->gc;
    int bound = bind_to_pu(w) == 0;
    _gcs_llc_worker_open(w);
    char trace_name[32];
    snprintf(trace_name, sizeof trace_name, "gc-worker-%d", w->index);
    gcs_trace_thread_begin(trace_name, "gc");
    gcs_trace_set_state(GCS_TRACE_GC_IDLE); /* until the first job */
    uint64_t seen = 0;
    pthread_mutex_lock(&gc->pool_lock);
    /* read by the coordinator after a job, under pool_lock */
    w->pinned_cpu = bound ? gc->pu_map[w->index].os_index : -1;
    w->pinned_pu = bound ? gc->pu_map[w->index].logical_index : -1;
    for (;;) {
        while (gc->job_epoch == seen)
            pthread_cond_wait(&gc->job_cond, &gc->pool_lock);
        seen = gc->job_epoch;
        int job = gc->job, nthreads = gc->job_threads;
        pthread_mutex_unlock(&gc->pool_lock);
        if (job == GCS_JOB_EXIT) {
            _gcs_llc_worker_close(w);
            gcs_trace_thread_end();
            return NULL;
        }
        if (w->index < nthreads) {
            gcs_trace_set_state(job == GCS_JOB_MARK ? GCS_TRACE_GC_MARK : GCS_TRACE_GC_SWEEP);
            if (job == GCS_JOB_MARK)
                _gcs_mark_worker(w, nthreads);
            else if (job == GCS_JOB_SWEEP)
                _gcs_sweep_worker(w);
            gcs_trace_set_state(GCS_TRACE_GC_IDLE);
        }
        pthread_mutex_lock(&gc->pool_lock);
        /* the job cannot be over without this worker's part */
        gcs_assert_internal(w->index >= nthreads || gc->jobs_done < nthreads);
        if (w->index < nthreads && ++gc->jobs_done == nthreads)
            pthread_cond_signal(&gc->done_cond);
    }
}

/* Hands job to workers [0, threads) and waits until each has done it (EXIT:
 * does not wait; _gcs_pool_stop joins the threads). */
void _gcs_pool_run(gcs_collector *gc, int job, int threads)
{
    gcs_assert_internal(threads >= 1 && threads <= gc->pool_size);
    pthread_mutex_lock(&gc->pool_lock);
    gc->job = job;
    gc->job_threads = threads;
    gc->jobs_done = 0;
    gc->job_start_ns = gcs_now_ns();
    gc->job_epoch++;
    pthread_cond_broadcast(&gc->job_cond);
    if (job != GCS_JOB_EXIT)
        while (gc->jobs_done < threads)
            pthread_cond_wait(&gc->done_cond, &gc->pool_lock);
    pthread_mutex_unlock(&gc->pool_lock);
}

/* Resolves the placement and computes every worker's PU: the topology is
 * loaded once here, not per worker.  A topology hwloc cannot load leaves
 * the workers unbound, as before placement existed (the stats say so: cpu
 * -1), rather than failing the collector's start. */
static int place_workers(gcs_collector *gc, gcs_err *err)
{
    gcs_topo_placement p = gc->opts.placement;
    if (p == GCS_TOPO_PLACE_DEFAULT)
        p = gc->opts.pin_workers ? GCS_TOPO_PLACE_CORES : GCS_TOPO_PLACE_NONE;
    if ((unsigned)p > GCS_TOPO_PLACE_NONE) {
        gcs_err_set(err, "gc: unknown placement %d", (int)p);
        return -1;
    }
    gc->placement = p;
    if (p == GCS_TOPO_PLACE_NONE)
        return 0;
    gcs_err ignored;
    gc->topo = gcs_topo_load(NULL, &ignored);
    if (!gc->topo)
        return 0;
    gc->pu_map = calloc((size_t)gc->pool_size, sizeof *gc->pu_map);
    if (!gc->pu_map || gcs_topo_place(gc->topo, p, gc->pool_size, gc->pu_map, err) < 0) {
        gcs_err_set(err, "gc: out of memory for the workers' placement");
        return -1;
    }
    return 0;
}

/* Places the workers, allocates every worker's deque and mark stack, and
 * starts pool_size threads. */
int _gcs_pool_start(gcs_collector *gc, gcs_err *err)
{
    if (place_workers(gc, err) < 0)
        return -1;
    gc->workers = aligned_alloc(64, sizeof(gcs_worker) * (size_t)gc->pool_size);
    if (!gc->workers) {
        gcs_err_set(err, "gc: out of memory for %d workers", gc->pool_size);
        return -1;
    }
    memset(gc->workers, 0, sizeof(gcs_worker) * (size_t)gc->pool_size);
    for (int i = 0; i < gc->pool_size; i++) {
        gcs_worker *w = &gc->workers[i];
        w->gc = gc;
        w->index = i;
        w->rng = 0x9e3779b9u * (uint32_t)(i + 1);
        w->papi_eventset = -1; /* PAPI_NULL */
        if (_gcs_deque_init(&w->deque, 1024) < 0 || _gcs_mark_stack_init(w) < 0) {
            gcs_err_set(err, "gc: out of memory for mark stacks");
            return -1;
        }
    }
    _gcs_llc_setup(gc);
    for (int i = 0; i < gc->pool_size; i++) {
        int rc = pthread_create(&gc->workers[i].thread, NULL, worker_main, &gc->workers[i]);
        if (rc != 0) {
            gcs_err_set(err, "gc: cannot start GC worker %d: %s", i, strerror(rc));
            return -1;
        }
        gc->workers[i].started = 1;
    }
    return 0;
}

/* Stops and joins the workers started (any number, after a failed start
 * too) and frees what _gcs_pool_start allocated. */
void _gcs_pool_stop(gcs_collector *gc)
{
    if (gc->workers) {
        _gcs_pool_run(gc, GCS_JOB_EXIT, gc->pool_size);
        for (int i = 0; i < gc->pool_size; i++) {
            gcs_worker *w = &gc->workers[i];
            if (w->started)
                pthread_join(w->thread, NULL);
            if (atomic_load_explicit(&w->deque.array, memory_order_relaxed))
                _gcs_deque_destroy(&w->deque);
            free(w->stack);
        }
        free(gc->workers);
        gc->workers = NULL;
    }
    free(gc->pu_map);
    gc->pu_map = NULL;
    gcs_topo_free(gc->topo);
    gc->topo = NULL;
}
