/* internal.h -- what the three workloads share: the run context, a
 * collector-friendly barrier, failure reporting and per-thread root slots.
 * Not installed; include/gcscale/workload.h is the public face. */
#ifndef GCSCALE_WORKLOADS_INTERNAL_H
#define GCSCALE_WORKLOADS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "gcscale/gc.h"
#include "gcscale/workload.h"

#define WL_SLOTS 8 /* registered root slots per mutator thread */

typedef struct wl_run wl_run;

typedef struct wl_impl {
    gcs_workload_info info;
    /* On the calling (attached) thread before the mutators start: builds the
     * shared state in r->state; GC objects go into r->shared[] slots. */
    int (*setup)(wl_run *r, gcs_err *err);
    /* Body of mutator `index` (attached; it calls _gcs_wl_barrier and returns on
     * failure after _gcs_wl_fail). */
    void (*mutator)(wl_run *r, int index);
    /* On the calling thread, attached again, after every mutator joined and
     * only if none failed: checks the answer, fills res->verified, figures. */
    void (*verify)(wl_run *r, gcs_workload_result *res);
    /* Frees r->state (malloc'd parts); the root slots are unregistered by the
     * runner afterwards.  Called whether or not the run succeeded. */
    void (*teardown)(wl_run *r);
} wl_impl;

struct wl_run {
    const wl_impl *impl;
    int mutators;
    uint64_t size, steps, seed;
    void *state;
    /* Root slots registered by the runner: shared[] for objects every thread
     * may reach, slot[i][] for mutator i's own long-lived objects.  Keeping
     * them here rather than on the shadow stack lets a thread detach while
     * it waits at a barrier (detaching drops the shadow stack). */
    void *shared[WL_SLOTS];
    void *(*slot)[WL_SLOTS];
    /* barrier and failure */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int arrived;
    uint64_t generation;
    atomic_int failed;
    char fail_msg[400];
    void (*progress)(double fraction, void *arg);
    void *progress_arg;
};

/* Waits until all mutators arrive.  The thread must hold no shadow-stack
 * roots (it detaches while it waits, so that it never holds up a
 * collection).  Returns -1 when some thread failed (the caller returns). */
int _gcs_wl_barrier(wl_run *r);
/* Records the first failure and wakes every waiting thread. */
void _gcs_wl_fail(wl_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int wl_failed(wl_run *r) { return atomic_load_explicit(&r->failed, memory_order_relaxed); }
/* gcs_gc_alloc / gcs_gc_alloc_data that report an exhausted heap. */
void *_gcs_wl_alloc(wl_run *r, size_t size, size_t nptrs);
void *_gcs_wl_alloc_data(wl_run *r, size_t size);
void _gcs_wl_progress(wl_run *r, double fraction);
/* Sets res->verified and the message (printf-style). */
void _gcs_wl_verdict(gcs_workload_result *res, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void _gcs_wl_figure(gcs_workload_result *res, const char *name, double value);

/* Seeds a per-purpose random stream from the run's seed. */
static inline uint64_t wl_seed(uint64_t seed, uint64_t stream)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + stream * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}
static inline double wl_uniform(uint64_t *rng) /* [0, 1) */
{
    return (double)(gcs_random_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

extern const wl_impl _gcs_wl_bh, _gcs_wl_cube, _gcs_wl_cky, _gcs_wl_chain;

#endif
