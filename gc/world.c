/* world.c -- the mutator threads and stopping them: attach and detach,
 * each thread's state, safepoints, the stop-the-world protocol, and the API
 * calls made from inside a collection.
 *
 * Kept apart from the collection itself (collect.c) because this is the
 * protocol every mutator takes part in -- on attach, at each safepoint, on
 * detach -- whereas collect.c is what one thread does once the world is
 * stopped.  collect.c calls the stop and resume here; nothing here calls a
 * collection.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/internal.h"
#include "gc_internal.h"
#include "gcscale/trace.h"

int gcs_gc_stop_requested_;

__thread gcs_mutator *_gcs_tls_mutator;
__thread uint64_t _gcs_tls_generation;
__thread int _gcs_tls_in_collection;
static __thread char tls_last_error[256];

void _gcs_set_last_error(const char *fmt, ...)
                         {
                         va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_last_error, sizeof tls_last_error, fmt, ap);
    va_end(ap);
}

const char *gcs_gc_last_error(void) { return tls_last_error; }

/* ---- calls made during a collection ---------------------------------------------
 * The collecting thread holds gc_lock for the whole collection and calls the
 * thread policy's choose() and the on_collection callback with it held
 * (_gcs_tls_in_collection is set around collect_locked).  gc_lock is not
 * recursive, so an API call from there that locked it would wait for itself
 * forever.  Reads and settings therefore skip the lock on that thread (it
 * holds it already, and nothing else runs); calls that would allocate,
 * collect, park or change the set of threads are refused with an error. */

int _gcs_api_lock(gcs_collector *gc)
{
    if (_gcs_tls_in_collection)
        return 0;
    pthread_mutex_lock(&gc->gc_lock);
    return 1;
}

void _gcs_api_unlock(gcs_collector *gc, int locked)
{
    if (locked)
        pthread_mutex_unlock(&gc->gc_lock);
}

int _gcs_api_refused(const char *what, gcs_err *err)
{
    if (!_gcs_tls_in_collection)
        return 0;
    _gcs_set_last_error("gc: %s is not allowed during a collection (from an on_collection callback "
                        "or a thread policy's choose)", what);
    gcs_err_set(err, "%s", tls_last_error);
    return 1;
}

/* ---- stop the world ------------------------------------------------------------
 * gc_lock guards `collecting`, `running` and the mutator list.  The thread that
 * starts a collection sets gcs_gc_stop_requested_ and waits (releasing the
 * lock) until it is the only running attached thread; the others park in
 * _gcs_park_locked() at their next safepoint, allocation or collect call, and wait
 * for resume_cond.  The collector keeps gc_lock for the whole collection, so
 * attach/detach wait until it is over.  The lock hand-offs order everything a
 * mutator wrote before parking before everything the GC workers read. */

void _gcs_park_locked(gcs_collector *gc, gcs_mutator *m)
{
    gcs_assert_internal(gc->collecting); /* only a stop parks */
    uint64_t seen = gc->collections;
    if (m)
        gc->running--;
    gcs_trace_state prev = gcs_trace_current_state(); /* trace.h: one load unless recording */
    gcs_trace_set_state(GCS_TRACE_GC_STOPPED);
    pthread_cond_broadcast(&gc->stopped_cond);
    while (gc->collecting && gc->collections == seen)
        pthread_cond_wait(&gc->resume_cond, &gc->gc_lock);
    gcs_trace_set_state(prev);
    if (m)
        gc->running++;
}

void gcs_gc_safepoint_slow(void)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || _gcs_tls_in_collection)
        return; /* the world is stopped by this very thread: nothing to wait for */
    gcs_mutator *m = _gcs_current_mutator(gc);
    pthread_mutex_lock(&gc->gc_lock);
    if (gc->collecting)
        _gcs_park_locked(gc, m);
    pthread_mutex_unlock(&gc->gc_lock);
}

/* gc_lock for attach and detach: held by a collection for its whole pause,
 * so waiting for it while a stop is requested is waiting for the GC, and the
 * trace says so. */
static void lock_gc_traced(gcs_collector *gc)
{
    if (pthread_mutex_trylock(&gc->gc_lock) == 0)
        return;
    if (!__atomic_load_n(&gcs_gc_stop_requested_, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&gc->gc_lock);
        return;
    }
    gcs_trace_state prev = gcs_trace_current_state();
    gcs_trace_set_state(GCS_TRACE_GC_STOPPED);
    pthread_mutex_lock(&gc->gc_lock);
    gcs_trace_set_state(prev);
}

/* Stops the world (gc_lock held, `collecting` set by the caller): requests
 * the stop and waits until this thread, if attached (m), is the only
 * attached thread still running. */
void _gcs_world_stop(gcs_collector *gc, gcs_mutator *m)
{
    gcs_assert_internal(gc->collecting);
    __atomic_store_n(&gcs_gc_stop_requested_, 1, __ATOMIC_RELAXED);
    int self = m ? 1 : 0;
    while (gc->running > self)
        pthread_cond_wait(&gc->stopped_cond, &gc->gc_lock);
    gcs_assert_internal(gc->running == self);
}

/* Lets the world run again (gc_lock held; the caller releases it). */
void _gcs_world_resume(gcs_collector *gc)
{
    gcs_assert_internal(gc->collecting && !gc->remarking);
    gc->collecting = 0;
    __atomic_store_n(&gcs_gc_stop_requested_, 0, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&gc->resume_cond);
}

int gcs_gc_attach(gcs_err *err)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc) {
        gcs_err_set(err, "gc: attach before gcs_gc_init");
        return -1;
    }
    if (_gcs_api_refused("gcs_gc_attach", err))
        return -1;
    if (_gcs_current_mutator(gc)) {
        gcs_err_set(err, "gc: thread already attached");
        return -1;
    }
    gcs_mutator *m = calloc(1, sizeof *m);
    if (!m) {
        gcs_err_set(err, "gc: out of memory attaching a thread");
        return -1;
    }
    m->want_list = -1;
    lock_gc_traced(gc);
    m->next = gc->mutators;
    if (gc->mutators)
        gc->mutators->prev = m;
    gc->mutators = m;
    gc->running++;
    pthread_mutex_unlock(&gc->gc_lock);
    _gcs_tls_mutator = m;
    _gcs_tls_generation = gc->generation;
    return 0;
}

static void mutator_unlink_locked(gcs_collector *gc, gcs_mutator *m)
{
    if (m->prev)
        m->prev->next = m->next;
    else
        gc->mutators = m->next;
    if (m->next)
        m->next->prev = m->prev;
}

void gcs_gc_detach(void)
{
    gcs_collector *gc = _gcs_gc_global;
    gcs_mutator *m = _gcs_current_mutator(gc);
    if (!m || _gcs_api_refused("gcs_gc_detach", NULL))
        return;
    lock_gc_traced(gc);
    /* A collection may be waiting for this thread: let it finish first, so
     * our allocation buffers are not reset under a running collection. */
    if (gc->collecting)
        _gcs_park_locked(gc, m);
    mutator_unlink_locked(gc, m);
    gc->running--;
    pthread_cond_broadcast(&gc->stopped_cond);
    pthread_mutex_unlock(&gc->gc_lock);
    free(m->shadow);
    free(m);
    _gcs_tls_mutator = NULL;
    _gcs_tls_generation = 0;
}
