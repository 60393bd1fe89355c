/* collect.c -- one collection and one re-mark, the world stopped: the
 * thread policy's choice of P, the roots, the mark on the pool, the
 * overflow rescan, T-infinity and the snapshot, the sweep on the pool, the
 * statistics; and the entry points that stop the world for them.
 *
 * The collecting thread runs all of this holding gc_lock (and heap_lock
 * from the roots to the end of the sweep); the workers run the mark
 * (mark.c) and the sweep (sweep.c) as pool jobs (pool.c).  This is the
 * collection's driver: Go's mgc.go to mgcmark.go and mgcsweep.go.  It calls
 * down into each of those and into world.c for the stop; none of them calls
 * back here.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../common/internal.h"
#include "gc_internal.h"
#include "gcscale/trace.h"

/* ---- one collection (world stopped, gc_lock held) ------------------------------ */

static int push_root_obj(gcs_collector *gc, void *obj, int *next_worker, int threads,
                         void ***list, size_t *n, size_t *cap)
{
    if (!obj)
        return 0;
    _gcs_mark_roots_push(gc, (uintptr_t)obj, *next_worker);
    *next_worker = (*next_worker + 1) % threads;
    if (list) {
        if (*n == *cap) {
            size_t ncap = *cap ? 2 * *cap : 256;
            void **l = realloc(*list, ncap * sizeof *l);
            if (!l)
                return 1;
            *list = l;
            *cap = ncap;
        }
        (*list)[(*n)++] = obj;
    }
    return 1;
}

/* The thread policy, if any, picks this collection's P from the previous
 * collection's statistics (gc->last, still intact here); timed. */
static int choose_threads(gcs_collector *gc, gcs_gc_decision *d)
{
    memset(d, 0, sizeof *d);
    const gcs_gc_thread_policy *p = &gc->opts.thread_policy;
    if (!p->name || !p->choose || gc->policy_paused)
        return gc->threads;
    uint64_t t0 = gcs_now_ns();
    int want = p->choose(p->state, gc->have_last ? &gc->last : NULL, gc->pool_size, d);
    d->decision_ns = gcs_now_ns() - t0;
    int threads = want <= 0 ? gc->threads : want > gc->pool_size ? gc->pool_size : want;
    gc->threads = threads;
    d->used = 1;
    snprintf(d->policy, sizeof d->policy, "%s", p->name);
    d->threads = threads;
    d->max_threads = gc->pool_size;
    if (d->npredicted < 0 || d->npredicted > GCS_GC_MAX_THREADS)
        d->npredicted = 0;
    if (d->ninputs < 0 || d->ninputs > GCS_GC_DECISION_INPUTS)
        d->ninputs = 0;
    return threads;
}

/* What a collection and a re-mark set up alike: the statistics' fixed
 * fields, the mode and instrumentation of this mark (read here once, gc_lock
 * held, and used by every worker, the sweep, the rescan and the snapshot),
 * and every worker's counters and empty mark stack. */
static void mark_begin(gcs_collector *gc, gcs_gc_stats *st, uint64_t index, int threads, uint64_t t_start)
{
    memset(st, 0, sizeof *st);
    gc->job_mode = gc->mark_mode;
    gc->job_instr = gc->instrument;
    st->index = index;
    st->threads = threads;
    st->mark_mode = (gcs_gc_mark_mode)gc->job_mode;
    st->placement = gc->placement;
    st->start_ns = t_start;
    st->heap_limit = gc->npages << GCS_PAGE_SHIFT;
    st->span = NAN;
    st->span_cost_object = gc->opts.span_cost_object;
    st->span_cost_pointer = gc->opts.span_cost_pointer;
    st->cache_misses_available = gc->counters_ok;
    st->nnodes = gc->nnodes < GCS_GC_MAX_NODES ? gc->nnodes : GCS_GC_MAX_NODES;
    for (int i = 0; i < gc->pool_size; i++) {
        gcs_worker *w = &gc->workers[i];
        memset(&w->st, 0, sizeof w->st);
        w->st.cache_misses = -1;
        w->oom = 0;
        w->lo = w->hi = 0;
    }
}

/* One mark on the pool: nobody idle yet; the arrays a deque outgrew are
 * freed once no thief can be reading them.  Every deque is empty after a
 * mark (mark.c, "Termination"). */
static void mark_run(gcs_collector *gc, int threads)
{
    atomic_store_explicit(&gc->mark_idle, 0, memory_order_relaxed);
    _gcs_pool_run(gc, GCS_JOB_MARK, threads);
    for (int i = 0; i < threads; i++) {
        gcs_assert_internal(gcs_deque_size_hint(&gc->workers[i].deque) == 0);
        _gcs_deque_release_retired(&gc->workers[i].deque);
    }
}

/* The mark's per-worker statistics into st, with their sums (after the
 * last job of a collection or re-mark). */
static void sum_workers(gcs_collector *gc, gcs_gc_stats *st, int threads)
{
    for (int i = 0; i < threads; i++) {
        gcs_gc_worker_stats *ws = &gc->workers[i].st;
        ws->cpu = gc->workers[i].pinned_cpu; /* the worker ran a job: it has set it */
        ws->pu = gc->workers[i].pinned_pu;
        st->workers[i] = *ws;
        st->t1_ns += ws->busy_ns;
        st->objects_marked += ws->objects_scanned;
        st->pointers_scanned += ws->pointers_scanned;
        st->edges_examined += ws->edges_examined;
        st->steal_attempts += ws->steal_attempts;
        st->steals += ws->steals;
        st->steal_searches += ws->steal_searches;
    }
}

/* Pushes the objects of every root slot and shadow stack for the rescan. */
static void rescan_roots(gcs_collector *gc)
{
    pthread_mutex_lock(&gc->roots_lock);
    for (size_t i = 0; i < gc->nroots; i++)
        if (*gc->roots[i])
            _gcs_mark_rescan_push(gc, (uintptr_t)*gc->roots[i], 0);
    pthread_mutex_unlock(&gc->roots_lock);
    for (gcs_mutator *m = gc->mutators; m; m = m->next)
        for (size_t i = 0; i < m->shadow_top; i++)
            if (*m->shadow[i])
                _gcs_mark_rescan_push(gc, (uintptr_t)*m->shadow[i], 0);
}

static inline void rescan_object(gcs_collector *gc, const char *slot)
{
    uint64_t hdr = *(const uint64_t *)slot;
    uint32_t np = GCS_HDR_NPTRS(hdr);
    if (np) /* a range entry: its fields are examined like an array chunk's */
        _gcs_mark_rescan_push(gc, (uintptr_t)(slot + 8), (uintptr_t)(slot + 8 + 8 * (size_t)np));
}

/* After the mark (world stopped, gc_lock and heap_lock held): if a worker
 * dropped a mark-stack entry for want of memory, the marks are incomplete
 * and the sweep would free reachable objects.  Rescan until a round drops
 * nothing: each round pushes the roots and the fields of every marked object
 * and marks from them (mark.c, "mark-stack overflow", argues why this ends
 * with every reachable object marked, needing no memory).  Returns the
 * number of rounds, 0 when nothing was dropped. */
static uint64_t mark_recover(gcs_collector *gc, int threads)
{
    int mode = gc->job_mode;
    uint64_t rounds = 0;
    while (_gcs_mark_overflowed(gc, threads)) {
        rounds++;
        _gcs_mark_rescan_begin(gc, threads);
        rescan_roots(gc);
        for (size_t i = 0; i < gc->high_water; i++) {
            gcs_page *pg = &gc->pages[i];
            char *start = _gcs_page_start(gc, i);
            size_t g0 = i * GCS_GRANULES_PER_PAGE;
            if (pg->kind == GCS_PAGE_LARGE_HEAD) {
                if (_gcs_mark_is_set(gc, g0, mode))
                    rescan_object(gc, start);
            } else if (pg->kind == GCS_PAGE_SMALL && !gc->page_noscan[i]) {
                uint32_t slot = pg->slot_bytes;
                size_t gstep = slot >> GCS_GRANULE_SHIFT;
                for (uint32_t s = 0; s < pg->nslots; s++)
                    if (_gcs_mark_is_set(gc, g0 + s * gstep, mode))
                        rescan_object(gc, start + (size_t)s * slot);
            }
        }
        _gcs_mark_rescan_end(gc);
    }
    return rounds;
}

/* Minor page faults of this process so far (0 if getrusage fails). */
static uint64_t minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_minflt : 0;
}

static void collect_locked(gcs_collector *gc, gcs_gc_reason reason, uint64_t t_start, uint64_t t_stopped)
{
    gcs_assert_internal(gc->collecting && _gcs_tls_in_collection);
    uint64_t faults_start = minor_faults();
    gcs_gc_decision decision;
    int threads = choose_threads(gc, &decision);
    gcs_gc_stats *st = &gc->last;
    mark_begin(gc, st, gc->collections + 1, threads, t_start);
    st->decision = decision;
    st->reason = reason;
    st->stop_ns = t_stopped - t_start;
    for (const gcs_mutator *m = gc->mutators; m; m = m->next)
        st->mutators++;
    st->compute_span = gc->opts.compute_span;

    pthread_mutex_lock(&gc->heap_lock);
    /* Allocation buffers die: the sweep rebuilds every free list from marks. */
    for (gcs_mutator *m = gc->mutators; m; m = m->next)
        memset(m->alloc, 0, sizeof m->alloc);
    for (int l = 0; l < GCS_NLISTS; l++)
        gc->partial_head[l] = -1;

    /* Roots: mark them and deal them out round-robin. */
    gcs_trace_set_state(GCS_TRACE_GC_MARK); /* the collecting thread marks the roots */
    uint64_t t0 = gcs_now_ns();
    int next_worker = 0;
    void **root_list = NULL;
    size_t nroot_list = 0, root_cap = 0;
    int snap_due = _gcs_snap_due(gc, st->index);
    void ***want_list = gc->opts.compute_span || snap_due ? &root_list : NULL;
    pthread_mutex_lock(&gc->roots_lock);
    for (size_t i = 0; i < gc->nroots; i++)
        st->roots += push_root_obj(gc, *gc->roots[i], &next_worker, threads, want_list, &nroot_list, &root_cap);
    pthread_mutex_unlock(&gc->roots_lock);
    for (gcs_mutator *m = gc->mutators; m; m = m->next)
        for (size_t i = 0; i < m->shadow_top; i++)
            st->roots += push_root_obj(gc, *m->shadow[i], &next_worker, threads, want_list, &nroot_list, &root_cap);
    uint64_t t1 = gcs_now_ns();
    st->roots_ns = t1 - t0;
    gcs_trace_set_state(GCS_TRACE_GC_STOPPED);

    mark_run(gc, threads);
    st->mark_rescans = mark_recover(gc, threads);
    uint64_t t2 = gcs_now_ns();
    st->mark_ns = t2 - t1;

    if (gc->opts.compute_span) {
        st->span = _gcs_span_compute(gc, root_list, nroot_list, gc->opts.span_cost_object,
                                    gc->opts.span_cost_pointer);
        st->span_ns = gcs_now_ns() - t2;
    }
    /* Heap snapshot: the marked set is the live graph; timed apart (snapshot_ns). */
    if (snap_due && _gcs_snap_take(gc, st, root_list, nroot_list) < 0)
        _gcs_set_last_error("gc: snapshot: %s", st->snapshot_error);
    free(root_list);

    uint64_t t3 = gcs_now_ns();
    atomic_store_explicit(&gc->sweep_next, 0, memory_order_relaxed);
    _gcs_pool_run(gc, GCS_JOB_SWEEP, threads);
    for (int i = 0; i < threads; i++) {
        gcs_worker *w = &gc->workers[i];
        for (int l = 0; l < GCS_NLISTS; l++) {
            if (w->partial_head[l] < 0)
                continue;
            gc->pages[w->partial_tail[l]].next_partial = gc->partial_head[l];
            gc->partial_head[l] = w->partial_head[l];
        }
        st->live_objects += w->live_objects;
        st->live_bytes += w->live_bytes;
        for (int k = 0; k < GCS_GC_MAX_NODES; k++)
            st->node_live_bytes[k] += w->node_live_bytes[k];
        st->unknown_node_live_bytes += w->node_live_bytes[GCS_GC_MAX_NODES];
        st->freed_objects += w->freed_objects;
        st->pages_in_use += w->pages_in_use;
        st->pages_freed += w->pages_freed;
        st->pages_released += w->pages_released;
    }
    gc->pages_used = st->pages_in_use;
    gc->bytes_since_gc = 0;
    gc->free_hint = 0;
    st->bind_failures = gc->bind_failures;
    pthread_mutex_unlock(&gc->heap_lock);
    uint64_t t4 = gcs_now_ns();
    st->sweep_ns = t4 - t3;

    sum_workers(gc, st, threads);
    st->pause_ns = gcs_now_ns() - t_start - st->snapshot_ns;
    uint64_t faults_end = minor_faults();
    st->page_faults = faults_end > faults_start ? faults_end - faults_start : 0;
    gc->have_last = 1;
    /* Counted before the callback, so that gcs_gc_collections() there agrees
     * with gcs_gc_last_stats() (this collection).  Threads parked on it
     * cannot see the count change before _gcs_collect_from resumes the world
     * and lets go of gc_lock. */
    gc->collections++;
    _gcs_stats_log(gc, st);
    if (gc->opts.on_collection)
        gc->opts.on_collection(st, gc->opts.on_collection_arg);
}

/* ---- re-mark (world stopped, gc_lock held) ------------------------------------------
 * The mark table is clear between collections (the sweep clears every live
 * page's marks).  A re-mark marks from the roots as a collection does, counts
 * the marked objects page by page, and clears those pages' marks again. */

/* Called with the world stopped by gcs_gc_remark, or from an on_collection
 * callback inside a collection. */
static void remark_locked(gcs_collector *gc, int threads, gcs_gc_stats *st, uint64_t index)
{
    gcs_assert_internal(gc->collecting);
    uint64_t t_start = gcs_now_ns();
    mark_begin(gc, st, index, threads, t_start);
    st->remark = 1;
    st->reason = GCS_GC_REASON_REQUEST;
    int mode = st->mark_mode;
    pthread_mutex_lock(&gc->heap_lock);
    uint64_t t0 = gcs_now_ns();
    int next_worker = 0;
    pthread_mutex_lock(&gc->roots_lock);
    for (size_t i = 0; i < gc->nroots; i++)
        st->roots += push_root_obj(gc, *gc->roots[i], &next_worker, threads, NULL, NULL, NULL);
    pthread_mutex_unlock(&gc->roots_lock);
    for (gcs_mutator *m = gc->mutators; m; m = m->next)
        for (size_t i = 0; i < m->shadow_top; i++)
            st->roots += push_root_obj(gc, *m->shadow[i], &next_worker, threads, NULL, NULL, NULL);
    uint64_t t1 = gcs_now_ns();
    st->roots_ns = t1 - t0;
    mark_run(gc, threads);
    st->mark_rescans = mark_recover(gc, threads);
    uint64_t t2 = gcs_now_ns();
    st->mark_ns = t2 - t1;

    /* Count what is marked (exact in every mode), then clear. */
    for (size_t i = 0; i < gc->high_water; i++) {
        gcs_page *pg = &gc->pages[i];
        size_t g0 = i * GCS_GRANULES_PER_PAGE;
        uint64_t live = 0, bytes = 0;
        if (pg->kind == GCS_PAGE_LARGE_HEAD) {
            if (_gcs_mark_is_set(gc, g0, mode)) {
                live = 1;
                bytes = (uint64_t)pg->span_pages << GCS_PAGE_SHIFT;
            }
        } else if (pg->kind == GCS_PAGE_SMALL) {
            live = _gcs_page_count_marked(gc, i, mode);
            bytes = live * pg->slot_bytes;
        }
        if (!live)
            continue;
        _gcs_page_mark_clear(gc, i, mode);
        st->live_objects += live;
        st->live_bytes += bytes;
        int k = _gcs_node_slot(gc, pg);
        if (k < GCS_GC_MAX_NODES)
            st->node_live_bytes[k] += bytes;
        else
            st->unknown_node_live_bytes += bytes;
    }
    pthread_mutex_unlock(&gc->heap_lock);

    sum_workers(gc, st, threads);
    st->pause_ns = gcs_now_ns() - t_start;
}

/* ---- stopping the world for them --------------------------------------------- */

/* refill_list: the allocation list the collecting thread needs a page for
 * (-1 none); it gets one before the world resumes. */
int _gcs_collect_from(gcs_collector *gc, gcs_gc_reason reason, int refill_list)
                      {
                      uint64_t t0 = gcs_now_ns();
    gcs_trace_state trace_prev = gcs_trace_current_state();
    gcs_mutator *m = _gcs_current_mutator(gc);
    pthread_mutex_lock(&gc->gc_lock);
    while (gc->collecting && gc->remarking)
        _gcs_park_locked(gc, m); /* a re-mark is no collection: wait for it, then collect */
    if (gc->collecting) {
        /* Someone else is collecting: park; their collection serves us too,
         * with the page we need first (below). */
        if (m)
            m->want_list = refill_list; /* the collector serves it and clears it */
        _gcs_park_locked(gc, m);
        pthread_mutex_unlock(&gc->gc_lock);
        return 0;
    }
    gc->collecting = 1;
    gcs_trace_set_state(GCS_TRACE_GC_STOPPED); /* the collecting thread waits, then coordinates */
    _gcs_world_stop(gc, m);
    uint64_t t1 = gcs_now_ns();
    _gcs_tls_in_collection = 1;
    collect_locked(gc, reason, t0, t1);
    _gcs_tls_in_collection = 0;
    /* First pick for the threads that needed a page -- this one, and those
     * that parked in _gcs_collect_from while it stopped the world -- while the
     * world is still stopped: in a full heap the threads resumed first could
     * take every page this collection freed, and a thread that asked for the
     * collection would find none (docs/collector.md, "Running out of heap"). */
    if (m)
        m->want_list = refill_list;
    pthread_mutex_lock(&gc->heap_lock);
    for (gcs_mutator *w = gc->mutators; w; w = w->next)
        if (w->want_list >= 0) {
            _gcs_heap_take_page(gc, w, w->want_list, 1);
            w->want_list = -1;
        }
    pthread_mutex_unlock(&gc->heap_lock);
    _gcs_world_resume(gc);
    pthread_mutex_unlock(&gc->gc_lock);
    gcs_trace_set_state(trace_prev);
    return 0;
}

int gcs_gc_collect(void)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || _gcs_api_refused("gcs_gc_collect", NULL))
        return -1;
    return _gcs_collect_from(gc, GCS_GC_REASON_REQUEST, -1);
}

int gcs_gc_remark(int threads, gcs_gc_stats *out)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || !out || threads < 1 || threads > gc->pool_size)
        return -1;
    if (_gcs_tls_in_collection) {
        /* From an on_collection callback: the world is stopped and we hold
         * gc_lock; the collection is counted already (collect_locked). */
        remark_locked(gc, threads, out, gc->collections);
        return 0;
    }
    uint64_t t0 = gcs_now_ns();
    gcs_mutator *m = _gcs_current_mutator(gc);
    pthread_mutex_lock(&gc->gc_lock);
    while (gc->collecting)
        _gcs_park_locked(gc, m); /* let a collection or another re-mark finish */
    gc->collecting = 1;
    gc->remarking = 1;
    _gcs_world_stop(gc, m);
    uint64_t t1 = gcs_now_ns();
    remark_locked(gc, threads, out, gc->collections);
    out->stop_ns = t1 - t0;
    out->start_ns = t0;
    out->pause_ns += t1 - t0;
    gc->remarking = 0;
    _gcs_world_resume(gc);
    pthread_mutex_unlock(&gc->gc_lock);
    return 0;
}
