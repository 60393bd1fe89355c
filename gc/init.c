/* init.c -- the collector's life: options and their environment
 * variables, initialization and shutdown, and the settings that take effect
 * at the next collection.
 *
 * Kept apart because it is where every other file's state is created and
 * destroyed (heap.c reserves the heap, pool.c starts the workers, world.c
 * attaches the initializing thread), and the only file that reads the
 * environment (GCSCALE_GC_THREADS, GCSCALE_GC_LOG; snapshot_gc.c reads its
 * own).
 */
#define _GNU_SOURCE
#include <numa.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_internal.h"

gcs_collector *_gcs_gc_global;

/* ---- options ---------------------------------------------------------------- */

void gcs_gc_options_default(gcs_gc_options *o)
{
    memset(o, 0, sizeof *o);
    o->heap_limit = 256u << 20;
    o->numa_policy = GCS_GC_NUMA_LOCAL;
    o->mark_mode = GCS_GC_MARK_RELAXED_BYTES;
    o->release_empty_pages = 1;
    o->release_after = GCS_GC_RELEASE_AFTER_DEFAULT;
    o->span_cost_object = 1;
    o->span_cost_pointer = 1;
}

/* ---- settings ---------------------------------------------------------------------- */

int gcs_gc_set_threads(int threads)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || threads < 1 || threads > gc->pool_size)
        return -1;
    int locked = _gcs_api_lock(gc);
    gc->threads = threads;
    _gcs_api_unlock(gc, locked);
    return 0;
}

int gcs_gc_set_thread_policy_active(int on)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || !gc->opts.thread_policy.name)
        return -1;
    int locked = _gcs_api_lock(gc);
    gc->policy_paused = !on;
    _gcs_api_unlock(gc, locked);
    return 0;
}

int gcs_gc_threads(void)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc)
        return 0;
    int locked = _gcs_api_lock(gc);
    int t = gc->threads;
    _gcs_api_unlock(gc, locked);
    return t;
}

int gcs_gc_max_threads(void) { return _gcs_gc_global ? _gcs_gc_global->pool_size : 0; }

/* Both settings take effect at the next collection or re-mark: mark_begin
 * copies them under gc_lock, so a collection under way (which holds gc_lock)
 * keeps the mode its mark started with, and this call waits for its end. */
void gcs_gc_set_mark_mode(gcs_gc_mark_mode mode)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || (unsigned)mode > GCS_GC_MARK_ATOMIC_BITS)
        return;
    int locked = _gcs_api_lock(gc);
    gc->mark_mode = (int)mode;
    _gcs_api_unlock(gc, locked);
}

void gcs_gc_set_instrumentation(int on)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc)
        return;
    int locked = _gcs_api_lock(gc);
    gc->instrument = on ? 1 : 0;
    _gcs_api_unlock(gc, locked);
}

void gcs_gc_set_compute_span(int on, double cost_object, double cost_pointer)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc)
        return;
    int locked = _gcs_api_lock(gc);
    gc->opts.compute_span = on;
    if (cost_object <= 0 && cost_pointer <= 0)
        cost_object = cost_pointer = 1; /* both 0: objects + pointers, as gcs_gc_init reads them */
    gc->opts.span_cost_object = cost_object > 0 ? cost_object : 1;
    gc->opts.span_cost_pointer = cost_pointer >= 0 ? cost_pointer : 1;
    _gcs_api_unlock(gc, locked);
}

int gcs_gc_is_initialized(void) { return _gcs_gc_global != NULL; }

/* ---- init / shutdown ---------------------------------------------------------------- */

static void collector_free(gcs_collector *gc)
{
    _gcs_pool_stop(gc);
    _gcs_heap_release(gc);
    for (gcs_mutator *m = gc->mutators, *next; m; m = next) {
        next = m->next;
        free(m->shadow);
        free(m);
    }
    free(gc->roots);
    free(gc);
}

static int init_collector(const gcs_gc_options *opts_in, gcs_err *err)
{
    static uint64_t generations;
    if (_gcs_gc_global) {
        gcs_err_set(err, "gc: already initialized");
        return -1;
    }
    gcs_gc_options opts;
    if (opts_in)
        opts = *opts_in;
    else
        gcs_gc_options_default(&opts);
    if (opts.heap_limit == 0)
        opts.heap_limit = 256u << 20;
    if (opts.span_cost_object <= 0 && opts.span_cost_pointer <= 0)
        opts.span_cost_object = opts.span_cost_pointer = 1;
    if (opts.span_cost_object <= 0) {
        gcs_err_set(err, "gc: span_cost_object must be > 0");
        return -1;
    }
    if (opts.release_after < 0) {
        gcs_err_set(err, "gc: release_after must be 0 or more collections");
        return -1;
    }
    const char *env = opts.ignore_threads_env ? NULL : getenv("GCSCALE_GC_THREADS");
    if (env && *env && opts.thread_policy.name) {
        env = NULL; /* a policy chooses P: whoever installed it read the variable */
    } else if (env && strncmp(env, "adaptive", 8) == 0) {
        /* gc/ does not know the model: the adaptive policy is built by
         * adaptive/ (gcs_adaptive_configure), never behind the caller's back. */
        gcs_err_set(err, "gc: GCSCALE_GC_THREADS=%s needs the adaptive policy: call gcs_adaptive_configure() "
                         "(gcscale/adaptive.h) before gcs_gc_init()", env);
        return -1;
    }
    if (env && *env) {
        long v;
        if (gcs_parse_long(env, 1, GCS_GC_MAX_THREADS, &v, err) < 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            gcs_err_set(err, "gc: GCSCALE_GC_THREADS: %s", msg);
            return -1;
        }
        opts.threads = (int)v;
    }
    if (opts.threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        opts.threads = n > 0 ? (int)n : 1;
    }
    if (opts.threads > GCS_GC_MAX_THREADS || opts.max_threads > GCS_GC_MAX_THREADS) {
        gcs_err_set(err, "gc: at most %d GC threads", GCS_GC_MAX_THREADS);
        return -1;
    }
    if (opts.max_threads < opts.threads)
        opts.max_threads = opts.threads;
    if ((unsigned)opts.mark_mode > GCS_GC_MARK_ATOMIC_BITS || (unsigned)opts.numa_policy > GCS_GC_NUMA_NODE) {
        gcs_err_set(err, "gc: bad mark mode or NUMA policy");
        return -1;
    }
    _gcs_alloc_classes_init();

    gcs_collector *gc = calloc(1, sizeof *gc);
    if (!gc) {
        gcs_err_set(err, "gc: out of memory");
        return -1;
    }
    gc->opts = opts;
    gc->opts.log_path = NULL;
    gc->opts.snapshot_path = NULL;
    if (_gcs_snap_setup(gc, &opts, err) < 0) {
        free(gc);
        return -1;
    }
    const char *log = opts.log_path ? opts.log_path : getenv("GCSCALE_GC_LOG");
    if (log)
        snprintf(gc->log_path, sizeof gc->log_path, "%s", log);
    gc->threads = opts.threads;
    gc->pool_size = opts.max_threads;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    gc->online_cpus = online > 0 ? (int)online : 1;
    gc->mark_mode = (int)opts.mark_mode;
    gc->instrument = 1;
    gc->generation = ++generations;
    gc->nnodes = numa_available() >= 0 ? numa_max_node() + 1 : 1;
    if (opts.numa_policy == GCS_GC_NUMA_NODE && (opts.numa_node < 0 || opts.numa_node >= gc->nnodes)) {
        gcs_err_set(err, "gc: NUMA node %d does not exist (this machine has %d)", opts.numa_node, gc->nnodes);
        free(gc);
        return -1;
    }

    if (_gcs_heap_reserve(gc, opts.heap_limit, err) < 0) {
        collector_free(gc);
        return -1;
    }
    pthread_mutex_init(&gc->heap_lock, NULL);
    pthread_mutex_init(&gc->gc_lock, NULL);
    pthread_mutex_init(&gc->roots_lock, NULL);
    pthread_mutex_init(&gc->pool_lock, NULL);
    pthread_cond_init(&gc->stopped_cond, NULL);
    pthread_cond_init(&gc->resume_cond, NULL);
    pthread_cond_init(&gc->job_cond, NULL);
    pthread_cond_init(&gc->done_cond, NULL);

    if (_gcs_pool_start(gc, err) < 0) {
        collector_free(gc);
        return -1;
    }
    _gcs_gc_global = gc;
    if (gcs_gc_attach(err) < 0) {
        _gcs_gc_global = NULL;
        collector_free(gc);
        return -1;
    }
    return 0;
}

/* The thread policy's state belongs to the collector from here on: destroyed
 * if initialization fails, else by gcs_gc_shutdown. */
int gcs_gc_init(const gcs_gc_options *opts, gcs_err *err)
{
    int rc = init_collector(opts, err);
    if (rc < 0 && opts && opts->thread_policy.destroy)
        opts->thread_policy.destroy(opts->thread_policy.state);
    return rc;
}

void gcs_gc_shutdown(void)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || _gcs_api_refused("gcs_gc_shutdown", NULL))
        return;
    gcs_gc_detach();
    _gcs_gc_global = NULL;
    gcs_gc_thread_policy policy = gc->opts.thread_policy;
    collector_free(gc);
    if (policy.destroy)
        policy.destroy(policy.state);
    __atomic_store_n(&gcs_gc_stop_requested_, 0, __ATOMIC_RELAXED);
}
