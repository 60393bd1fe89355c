/* gc_internal.h -- gc/ internal: the collector's state, shared by every file
 * of gc/, and the functions one file of gc/ calls in another.
 *
 * The state is one struct (gcs_collector) because the files are phases of
 * one collector over the same heap, not modules with private data: which
 * file writes which field, and under which lock, is said next to the field.
 * The functions are fenced by the file that defines them (SQLite's style);
 * they carry the `_gcs_` prefix, are not part of the API, and are called
 * only downwards in the order gc/README.md draws (init.c; alloc.c, roots.c,
 * stats.c; collect.c; pool.c; mark.c, sweep.c; heap.c, world.c): no file
 * calls one above it. */
#ifndef GCSCALE_GC_INTERNAL_H
#define GCSCALE_GC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "gcscale/gc.h"
#include "deque.h"

#define GCS_PAGE_SHIFT 16
#define GCS_GRANULE_SHIFT 4                  /* marks are per 16-byte granule */
#define GCS_GRANULES_PER_PAGE (GCS_GC_PAGE_BYTES >> GCS_GRANULE_SHIFT)
#define GCS_NCLASSES 36
/* Allocation lists: one per size class for objects with pointer fields, one
 * per size class for pointer-free objects (their own pages, see page_noscan). */
#define GCS_NLISTS (2 * GCS_NCLASSES)

/* Object header, the word in front of the payload:
 *   bits 0..31  number of leading pointer fields
 *   bits 32..63 payload size in 8-byte words (>= 1, so a header is never 0)
 * A free small slot has header 0 and the free-list link in its second word. */
#define GCS_HDR(words, nptrs) (((uint64_t)(words) << 32) | (uint64_t)(nptrs))
#define GCS_HDR_NPTRS(h) ((uint32_t)(h))
#define GCS_HDR_WORDS(h) ((uint32_t)((h) >> 32))

enum { GCS_PAGE_FREE = 0, GCS_PAGE_SMALL, GCS_PAGE_LARGE_HEAD, GCS_PAGE_LARGE_TAIL };

typedef struct gcs_page {
    uint8_t kind;
    uint8_t size_class;
    uint8_t noscan;         /* small: a pointer-free page (objects with no pointer fields) */
    uint8_t dirty;          /* free page whose memory was not released: zero on reuse */
    uint8_t bind_failed;
    uint8_t marks_resident; /* its slices of the mark tables are faulted in (marks_fault_in) */
    int32_t node;           /* memory node the page is bound to; -1 unknown */
    uint32_t slot_bytes;    /* small: slot size including header */
    uint32_t nslots;
    uint32_t span_pages;    /* large head: pages of the span */
    uint32_t free_slots;    /* small: after the last sweep */
    uint32_t freed_at;      /* free: gc->collections when a sweep emptied it (release_after) */
    int64_t next_partial;   /* page index in a class's list of pages with free slots; -1 end */
    char *free_list;        /* small: built by sweep, handed to one allocator */
} gcs_page;

typedef struct gcs_alloc_buffer {
    char *free;             /* free list of the page this thread owns */
    char *bump, *bump_end;  /* untouched tail of a fresh page */
} gcs_alloc_buffer;

typedef struct gcs_mutator {
    struct gcs_mutator *next, *prev;
    gcs_alloc_buffer alloc[GCS_NLISTS];
    /* The allocation list this thread needs a page for while it waits on a
     * collection (collect_from), -1 none: the collection serves it first. */
    int want_list;
    void ***shadow;
    size_t shadow_top, shadow_cap;
} gcs_mutator;

/* One GC worker.  Everything but the deque is private to the worker during a
 * phase; the coordinator reads it only after the phase's join. */
typedef struct gcs_worker {
    gcs_deque deque;
    _Alignas(64) struct gcs_collector *gc;
    int index;
    pthread_t thread;
    int started;
    int pinned_cpu;         /* written by the worker under pool_lock before its first job */
    int pinned_pu;          /* its hwloc logical index; same */
    /* private mark stack: entries [lo, hi); the oldest at lo */
    gcs_mark_entry *stack;
    size_t lo, hi, cap;
    int oom;                /* an entry was dropped: neither stack nor deque could grow
                               (read after the mark: _gcs_mark_overflowed, mark_recover) */
    uint32_t rng;
    int papi_eventset;      /* this worker's LLC-miss event set; -1 none (PAPI_NULL) */
    gcs_gc_worker_stats st;
    uint64_t chain_hsum;    /* mark_drain(): headers of chain objects not yet counted (gc/mark.c) */
    /* sweep results */
    int64_t partial_head[GCS_NLISTS], partial_tail[GCS_NLISTS];
    uint64_t live_objects, live_bytes, freed_objects, pages_in_use, pages_freed, pages_released;
    uint64_t node_live_bytes[GCS_GC_MAX_NODES + 1];  /* by page node; last: unknown */
} gcs_worker;

enum { GCS_JOB_NONE = 0, GCS_JOB_MARK, GCS_JOB_SWEEP, GCS_JOB_EXIT };

typedef struct gcs_collector {
    /* heap */
    char *base;                   /* 64 KiB aligned */
    size_t npages;
    char *reserved; size_t reserved_bytes;
    gcs_page *pages;
    uint8_t *mark_bytes;          /* one per granule */
    uint64_t *mark_bits;          /* one bit per granule */
    size_t mark_bytes_len, mark_bits_len;
    uint64_t *free_map;           /* bit set: page free */
    size_t free_map_words;
    size_t high_water;            /* pages [0, high_water) were ever used */
    size_t free_hint;
    int64_t partial_head[GCS_NLISTS];
    /* Per page: 0, or 1 + the size class of a small pointer-free page.  The
     * mark reads this byte instead of the object's header, so it never
     * touches a pointer-free object's memory (Boehm's PTRFREE kind: on a heap
     * of small leaves that halves the lines the mark pulls in).  A byte per
     * 64 KiB page keeps the table in L1 for heaps of a few GiB. */
    uint8_t *page_noscan;
    uint64_t bytes_since_gc;
    uint64_t pages_used;
    uint64_t bind_failures;
    int nnodes;
    pthread_mutex_t heap_lock;

    /* options */
    gcs_gc_options opts;
    char log_path[4096];
    int threads;                  /* P for the next collection */
    /* Settings for the next collections (gcs_gc_set_instrumentation,
     * gcs_gc_set_mark_mode), guarded by gc_lock.  No worker reads them: a
     * collection or re-mark copies them once into job_instr / job_mode. */
    int instrument;               /* per-object counters and search clocks (default 1) */
    int counters_ok;              /* PAPI LLC-miss event found (llc.c) */
    int pool_size;
    int mark_mode;

    /* stop the world */
    pthread_mutex_t gc_lock;
    pthread_cond_t stopped_cond;  /* a mutator parked or detached */
    pthread_cond_t resume_cond;   /* the collection finished */
    int collecting;
    int running;                  /* attached mutators not parked */
    gcs_mutator *mutators;
    uint64_t generation;
    uint64_t collections;

    /* roots */
    pthread_mutex_t roots_lock;
    void ***roots;
    size_t nroots, roots_cap;

    /* worker pool */
    gcs_worker *workers;
    pthread_mutex_t pool_lock;
    pthread_cond_t job_cond, done_cond;
    uint64_t job_epoch;
    uint64_t job_start_ns;        /* gcs_now_ns() when the current job was handed out */
    int job, job_threads, jobs_done;
    _Atomic int mark_idle;        /* workers with no work (termination, hunger) */
    _Atomic uint64_t sweep_next;  /* next page to claim in sweep */
    int online_cpus;              /* CPUs online at init: more workers than this share CPUs */
    gcs_topo_placement placement; /* resolved at init: never DEFAULT */
    gcs_topo_pu *pu_map;          /* worker i's PU (pool_size of them); NULL: placement none */
    gcs_topo *topo;               /* this system's, while pu_map is used */

    gcs_gc_stats last;
    int have_last;
    int remarking;                /* gcs_gc_remark has stopped the world (not a collection) */
    int policy_paused;            /* gcs_gc_set_thread_policy_active(0); guarded by gc_lock */

    /* This collection's (or re-mark's) mark mode and instrumentation, copied
     * by mark_begin (gc_lock held, before any job of it is handed out).  The
     * mark workers, the sweep workers, the root pushes and the overflow
     * rescan all read these copies, never mark_mode / instrument, so that a
     * setter called during a collection cannot make the mark write one mark
     * table and the sweep read the other (the sweep would free every live
     * object).  Written only between jobs; the pool_lock hand-off orders the
     * write before the workers' reads.  (Kept here, at the end, so that the
     * offsets the mark loop uses, mark_idle's, stay as they were.) */
    int job_mode, job_instr;

    /* heap snapshots (snapshot_gc.c); guarded by gc_lock */
    char snap_pattern[4096];      /* periodic: path pattern, "" off */
    uint64_t snap_every;
    char snap_next[4096];         /* gcs_gc_snapshot_next's request, "" none */
    struct gcs_snap_request *snap_requests; /* gcs_gc_collect_snapshot's, in order */
} gcs_collector;

/* A gcs_gc_collect_snapshot() call waiting for its file.  It lives on the
 * caller's stack and is linked into gc->snap_requests (gc_lock held) until
 * the next collection writes the file, records the result, sets done and
 * unlinks it; the caller returns only after that.  Each call has its own
 * entry, so one call's request can never be replaced by another's, nor
 * another's write be taken for its own (snapshot_gc.c). */
typedef struct gcs_snap_request {
    struct gcs_snap_request *next;
    const char *path;             /* the caller's string ("%d" expanded when written) */
    int done;                     /* a collection has tried to write it */
    int status;                   /* 1 written, -1 failed (error) */
    char error[512];
} gcs_snap_request;

extern gcs_collector *_gcs_gc_global;                 /* init.c */
extern const uint32_t _gcs_class_bytes[GCS_NCLASSES];  /* heap.c: slot size per size class */

/* ---- world.c: mutator threads, stop-the-world, errors -------------------- */
/* This thread's mutator (set by gcs_gc_attach) and the collector generation
 * it was attached to; whether this thread is running a collection (its
 * on_collection callback, a thread policy's choose()). */
extern __thread gcs_mutator *_gcs_tls_mutator __attribute__((visibility("hidden")));
extern __thread uint64_t _gcs_tls_generation __attribute__((visibility("hidden")));
extern __thread int _gcs_tls_in_collection __attribute__((visibility("hidden")));
void _gcs_set_last_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* API calls that may come from the collecting thread itself (on_collection,
 * a thread policy's choose(): gc_lock is held there).  _gcs_api_lock takes
 * gc_lock unless this thread holds it already and returns what
 * _gcs_api_unlock must know; _gcs_api_refused returns 1, with the error set
 * in gcs_gc_last_error() and err, when called there (the call must fail). */
int _gcs_api_lock(gcs_collector *gc);
void _gcs_api_unlock(gcs_collector *gc, int locked);
int _gcs_api_refused(const char *what, gcs_err *err);
/* gc_lock held, gc->collecting set: wait (parked) until the collection or
 * re-mark is over.  m: this thread's mutator, NULL when not attached. */
void _gcs_park_locked(gcs_collector *gc, gcs_mutator *m);
/* gc_lock held, gc->collecting set by the caller: request the stop and wait
 * until every other attached thread is parked or detached. */
void _gcs_world_stop(gcs_collector *gc, gcs_mutator *m);
/* gc_lock held: clear `collecting` and the stop request, wake the parked. */
void _gcs_world_resume(gcs_collector *gc);

/* ---- heap.c: reservation, pages, NUMA placement -------------------------- */
int _gcs_heap_reserve(gcs_collector *gc, size_t heap_limit, gcs_err *err);
void _gcs_heap_release(gcs_collector *gc);
/* heap_lock held for these three. */
int64_t _gcs_pages_find(gcs_collector *gc, size_t n);       /* first of n free pages, or -1 */
void _gcs_pages_take(gcs_collector *gc, size_t i, size_t n); /* bound, faulted in, in use */
/* A page for thread m's allocation list l; 0, or -1 when none is free. */
int _gcs_heap_take_page(gcs_collector *gc, gcs_mutator *m, int l, int last_resort);

/* ---- alloc.c: objects ----------------------------------------------------- */
void _gcs_alloc_classes_init(void);                          /* at init */

/* ---- collect.c: one collection, one re-mark ------------------------------- */
/* Collects (or, when another thread is collecting, waits for its
 * collection).  refill_list: the allocation list the calling thread needs a
 * page for (-1 none); it gets one before the world resumes. */
int _gcs_collect_from(gcs_collector *gc, gcs_gc_reason reason, int refill_list);

/* ---- pool.c: the worker pool ---------------------------------------------- */
int _gcs_pool_start(gcs_collector *gc, gcs_err *err);
void _gcs_pool_stop(gcs_collector *gc);
/* Runs job (GCS_JOB_MARK, GCS_JOB_SWEEP) on workers [0, threads) and waits. */
void _gcs_pool_run(gcs_collector *gc, int job, int threads);

/* ---- sweep.c: the sweep job ----------------------------------------------- */
void _gcs_sweep_worker(gcs_worker *w);
uint32_t _gcs_page_count_marked(const gcs_collector *gc, size_t page, int mode);

/* ---- stats.c: statistics -------------------------------------------------- */
void _gcs_stats_log(gcs_collector *gc, const gcs_gc_stats *st);

/* ---- mark.c: the mark job, the overflow rescan, T-infinity ---------------- */
void _gcs_mark_worker(gcs_worker *w, int nthreads);
int _gcs_mark_stack_init(gcs_worker *w);
void _gcs_mark_roots_push(gcs_collector *gc, uintptr_t obj, int worker);
/* After a mark-stack overflow (mark.c: why the rescan is correct and ends). */
int _gcs_mark_overflowed(const gcs_collector *gc, int threads);
void _gcs_mark_rescan_begin(gcs_collector *gc, int threads);
void _gcs_mark_rescan_push(gcs_collector *gc, uintptr_t begin, uintptr_t end);
void _gcs_mark_rescan_end(gcs_collector *gc);
double _gcs_span_compute(gcs_collector *gc, void **root_objs, size_t nroot_objs,
                        double cost_object, double cost_pointer);

/* ---- llc.c: LLC misses per worker through PAPI, where the machine has them */
void _gcs_llc_setup(gcs_collector *gc);          /* once per collector, before the pool */
void _gcs_llc_worker_open(gcs_worker *w);       /* on the worker's thread */
void _gcs_llc_worker_close(gcs_worker *w);
void _gcs_llc_worker_start(gcs_worker *w);
void _gcs_llc_worker_stop(gcs_worker *w);       /* sets w->st.cache_misses */

/* ---- snapshot_gc.c -------------------------------------------------------- */
int _gcs_snap_setup(gcs_collector *gc, const gcs_gc_options *opts, gcs_err *err); /* at init */
int _gcs_snap_due(gcs_collector *gc, uint64_t index);
/* Writes the marked heap (between mark and sweep); fills st->snapshot_*. */
int _gcs_snap_take(gcs_collector *gc, gcs_gc_stats *st, void **roots, size_t nroots);

/* ---- small helpers every file may inline ---------------------------------- */

/* This thread's mutator, or NULL when it is not attached (to this
 * collector: a thread attached to an earlier one has another generation). */
static inline gcs_mutator *_gcs_current_mutator(gcs_collector *gc)
{
    if (!gc || _gcs_tls_generation != gc->generation)
        return NULL;
    return _gcs_tls_mutator;
}

static inline gcs_page *_gcs_page_of(gcs_collector *gc, uintptr_t p)
{
    return &gc->pages[(p - (uintptr_t)gc->base) >> GCS_PAGE_SHIFT];
}

static inline char *_gcs_page_start(gcs_collector *gc, size_t i)
{
    return gc->base + (i << GCS_PAGE_SHIFT);
}

/* Whether granule g's mark is set in this mark's table (mode: job_mode). */
static inline int _gcs_mark_is_set(gcs_collector *gc, size_t g, int mode)
{
    if (mode == GCS_GC_MARK_ATOMIC_BITS) {
        uint64_t bit = 1ull << (g & 63);
        int marked = (gc->mark_bits[g >> 6] & bit) != 0;
        return marked;
    }
    return gc->mark_bytes[g] != 0;
}

static inline void _gcs_page_mark_clear(gcs_collector *gc, size_t page, int mode)
{
    size_t g0 = page * GCS_GRANULES_PER_PAGE;
    if (mode == GCS_GC_MARK_ATOMIC_BITS)
        memset(&gc->mark_bits[g0 >> 6], 0, GCS_GRANULES_PER_PAGE / 8);
    else
        memset(&gc->mark_bytes[g0], 0, GCS_GRANULES_PER_PAGE);
}

/* Index into node_live_bytes: the page's node, or GCS_GC_MAX_NODES (the
 * last slot) when it is unknown or beyond what the statistics hold. */
static inline int _gcs_node_slot(const gcs_collector *gc, const gcs_page *pg)
{
    return pg->node >= 0 && pg->node < gc->nnodes && pg->node < GCS_GC_MAX_NODES ? pg->node : GCS_GC_MAX_NODES;
}

/* Which allocation list a small page's slots go back to. */
static inline int gcs_page_list(const gcs_page *pg)
{
    return pg->size_class + (pg->noscan ? GCS_NCLASSES : 0);
}

static inline size_t gcs_granule_of(const gcs_collector *gc, uintptr_t slot)
{
    return (slot - (uintptr_t)gc->base) >> GCS_GRANULE_SHIFT;
}

#endif
