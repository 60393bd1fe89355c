/* pool.c -- the collector's worker pool: starting the workers, binding them
 * to PUs, handing out a job (mark or sweep) and waiting for it, joining them.
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
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "gc_internal.h"
#include "gcscale/trace.h"

/* Worker i runs on PU i mod nPU (hwloc's order), when pin_workers is set and
 * hwloc loaded the topology.  Returns the PU's OS index, or -1 unpinned. */
static int bind_to_pu(gcs_worker *w)
{
    gcs_collector *gc = w->gc;
    int cpu = -1;
    if (gc->opts.pin_workers && gc->hwloc_ok) {
        hwloc_topology_t topo = gc->topology;
        int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        if (npu > 0) {
            hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, w->index % npu);
            if (pu && hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_THREAD) == 0)
                cpu = (int)pu->os_index;
        }
    }
    return cpu;
}

static void *worker_main(void *arg)
{
    gcs_worker *w = arg;
    gcs_collector *gc = w->gc;
    int cpu = bind_to_pu(w);
    _gcs_llc_worker_open(w);
    char trace_name[32];
    snprintf(trace_name, sizeof trace_name, "gc-worker-%d", w->index);
    gcs_trace_thread_begin(trace_name, "gc");
    gcs_trace_set_state(GCS_TRACE_GC_IDLE); /* until the first job */
    uint64_t seen = 0;
    pthread_mutex_lock(&gc->pool_lock);
    w->pinned_cpu = cpu; /* read by the coordinator after a job, under pool_lock */
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

/* Loads the topology (pin_workers), allocates every worker's deque and mark
 * stack, and starts pool_size threads. */
int _gcs_pool_start(gcs_collector *gc, gcs_err *err)
{
    if (gc->opts.pin_workers) {
        hwloc_topology_t topo;
        if (hwloc_topology_init(&topo) == 0) {
            if (hwloc_topology_load(topo) == 0) {
                gc->topology = topo;
                gc->hwloc_ok = 1;
            } else {
                hwloc_topology_destroy(topo);
            }
        }
    }
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
    if (gc->topology)
        hwloc_topology_destroy(gc->topology);
    gc->topology = NULL;
    gc->hwloc_ok = 0;
}
