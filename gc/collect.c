/* gc.c -- the collector's heap, allocation, roots, stop-the-world protocol,
 * parallel sweep and statistics (the mark is in mark.c).
 *
 * Heap: one reserved virtual range of heap_limit bytes cut into 64 KiB pages,
 * so an address's page and mark granule are found by arithmetic.  A page is
 * free, holds small objects of one size class, or is part of a large-object
 * span.  Each thread allocates from its own page per size class (free list or
 * bump region); pages change hands only under heap_lock, once per 64 KiB.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gc_internal.h"
#include "gcscale/trace.h"

gcs_collector *gcs_gc_global;
int gcs_gc_stop_requested_;

static __thread gcs_mutator *tls_mutator;
static __thread uint64_t tls_generation;
static __thread char tls_last_error[256];
static __thread int tls_in_collection; /* this thread runs a collection (its on_collection callback) */

/* Slot sizes in bytes including the 8-byte header: 16-byte steps to 256, then
 * four steps per doubling up to GCS_GC_SMALL_MAX (at most 25% waste). */
const uint32_t gcs_class_bytes[GCS_NCLASSES] = {
    16,   32,   48,   64,   80,   96,   112,  128,  144,  160,  176,  192,
    208,  224,  240,  256,  320,  384,  448,  512,  640,  768,  896,  1024,
    1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192};
static uint8_t class_of_granules[GCS_GC_SMALL_MAX / 16 + 1];

static void set_last_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_last_error(const char *fmt, ...)
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
 * (tls_in_collection is set around collect_locked).  gc_lock is not
 * recursive, so an API call from there that locked it would wait for itself
 * forever.  Reads and settings therefore skip the lock on that thread (it
 * holds it already, and nothing else runs); calls that would allocate,
 * collect, park or change the set of threads are refused with an error. */

int gcs_api_lock(gcs_collector *gc)
{
    if (tls_in_collection)
        return 0;
    pthread_mutex_lock(&gc->gc_lock);
    return 1;
}

void gcs_api_unlock(gcs_collector *gc, int locked)
{
    if (locked)
        pthread_mutex_unlock(&gc->gc_lock);
}

int gcs_api_refused(const char *what, gcs_err *err)
{
    if (!tls_in_collection)
        return 0;
    set_last_error("gc: %s is not allowed during a collection (from an on_collection callback or a "
                   "thread policy's choose)", what);
    gcs_err_set(err, "%s", tls_last_error);
    return 1;
}

static gcs_mutator *current_mutator(gcs_collector *gc)
{
    if (!gc || tls_generation != gc->generation)
        return NULL;
    return tls_mutator;
}

const char *gcs_gc_mark_mode_name(gcs_gc_mark_mode mode)
{
    switch (mode) {
    case GCS_GC_MARK_RELAXED_BYTES: return "relaxed-bytes";
    case GCS_GC_MARK_ATOMIC_BYTES: return "atomic-bytes";
    case GCS_GC_MARK_ATOMIC_BITS: return "atomic-bits";
    }
    return "?";
}

/* ---- options ---------------------------------------------------------------- */

void gcs_gc_options_default(gcs_gc_options *o)
{
    memset(o, 0, sizeof *o);
    o->heap_limit = 256u << 20;
    o->numa_policy = GCS_GC_NUMA_LOCAL;
    o->mark_mode = GCS_GC_MARK_RELAXED_BYTES;
    o->release_empty_pages = 1;
    o->span_cost_object = 1;
    o->span_cost_pointer = 1;
}

/* ---- pages and placement ------------------------------------------------------- */

static inline gcs_page *page_of(gcs_collector *gc, uintptr_t p)
{
    return &gc->pages[(p - (uintptr_t)gc->base) >> GCS_PAGE_SHIFT];
}
static inline char *page_start(gcs_collector *gc, size_t i)
{
    return gc->base + (i << GCS_PAGE_SHIFT);
}

static int desired_node(gcs_collector *gc, size_t page_index)
{
    switch (gc->opts.numa_policy) {
    case GCS_GC_NUMA_NODE: return gc->opts.numa_node;
    case GCS_GC_NUMA_INTERLEAVE: return (int)(page_index % (size_t)gc->nnodes);
    case GCS_GC_NUMA_LOCAL:
    default: {
        int cpu = sched_getcpu();
        int node = (cpu >= 0 && gc->nnodes > 1) ? numa_node_of_cpu(cpu) : 0;
        return node < 0 ? 0 : node;
    }
    }
}

/* Binds pages [i, i+n) to node (one mbind) and records it, unless every one
 * of them is bound there already. */
static void bind_run(gcs_collector *gc, size_t i, size_t n, int node)
{
    size_t k = i;
    while (k < i + n && gc->pages[k].node == node && !gc->pages[k].bind_failed)
        k++;
    if (k == i + n)
        return;
    unsigned long mask[16] = {0};
    int ok = node >= 0 && node < (int)(sizeof mask * 8);
    if (ok) {
        mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
        ok = mbind(page_start(gc, i), n << GCS_PAGE_SHIFT, MPOL_BIND, mask,
                   sizeof mask * 8, 0) == 0;
    }
    for (k = i; k < i + n; k++) {
        gc->pages[k].node = ok ? node : -1;
        gc->pages[k].bind_failed = !ok;
    }
    if (!ok)
        gc->bind_failures += n;
}

/* Bind pages [i, i+n) to their node before first touch.  A page whose memory
 * is still there (dirty: its release was skipped or failed) keeps its node:
 * mbind without MOVE would not move it, so recording a new node would be a
 * lie.  So this must run while `dirty` still says so, before pages_take
 * zeroes the page and clears the flag (it used to run after, and the check
 * never fired: node_of / node_live_bytes could name a node the memory was
 * not on).  Per page, since a span can mix dirty and released pages; the
 * others are bound in runs, one mbind each. */
static void place_pages(gcs_collector *gc, size_t i, size_t n)
{
    int node = desired_node(gc, i);
    for (size_t k = i; k < i + n;) {
        if (gc->pages[k].dirty && gc->pages[k].node >= 0) {
            k++;
            continue;
        }
        size_t e = k + 1;
        while (e < i + n && !(gc->pages[e].dirty && gc->pages[e].node >= 0))
            e++;
        bind_run(gc, k, e - k, node);
        k = e;
    }
}

static inline int page_is_free(gcs_collector *gc, size_t i)
{
    return (gc->free_map[i >> 6] >> (i & 63)) & 1;
}
static inline void page_set_used(gcs_collector *gc, size_t i)
{
    gc->free_map[i >> 6] &= ~(1ull << (i & 63));
}

/* Find n contiguous free pages (heap_lock held); returns index or -1. */
static int64_t pages_find(gcs_collector *gc, size_t n)
{
    if (n == 1) {
        size_t w0 = gc->free_hint >> 6;
        for (size_t k = 0; k < gc->free_map_words; k++) {
            size_t w = (w0 + k) % gc->free_map_words;
            if (gc->free_map[w]) {
                size_t i = (w << 6) + (size_t)__builtin_ctzll(gc->free_map[w]);
                gc->free_hint = i;
                return (int64_t)i;
            }
        }
        return -1;
    }
    size_t run = 0;
    for (size_t i = 0; i < gc->npages; i++) {
        if (page_is_free(gc, i)) {
            if (++run == n)
                return (int64_t)(i + 1 - n);
        } else {
            run = 0;
        }
    }
    return -1;
}

/* The mark tables are reserved, not committed (reserve(): MAP_NORESERVE),
 * so the first mark of a page's objects would fault its slice of the tables
 * in -- and in the first collection every worker faults at once: the kernel
 * serializes them, and on a 16-CPU VM the first collection of `gcscale run
 * cube` marked for 220 ms at P = 16 against 8 ms at P = 1, its workers'
 * busy time summing to 3 s.  So the thread that takes a page for the first
 * time writes its slices: 4 KiB of mark bytes, exactly one OS page, and 512
 * bytes of mark bits.  The slices stay resident (released pages give back
 * their heap memory only), so this runs once per page. */
#define OS_PAGE_BYTES 4096

/* Writes a zero into every OS page of [p, p + bytes): memory that is zero
 * already, now mapped. */
static void fault_in(void *p, size_t bytes)
{
    volatile char *c = p;
    for (size_t off = 0; off < bytes; off += OS_PAGE_BYTES)
        c[off] = 0;
}

static void marks_fault_in(gcs_collector *gc, size_t k)
{
    size_t g0 = k * GCS_GRANULES_PER_PAGE;
    fault_in(gc->mark_bytes + g0, GCS_GRANULES_PER_PAGE);
    fault_in(&gc->mark_bits[g0 >> 6], GCS_GRANULES_PER_PAGE / 8);
    gc->pages[k].marks_resident = 1;
}

static void pages_take(gcs_collector *gc, size_t i, size_t n)
{
    place_pages(gc, i, n); /* first: it reads `dirty`, cleared below */
    for (size_t k = i; k < i + n; k++) {
        page_set_used(gc, k);
        if (!gc->pages[k].marks_resident)
            marks_fault_in(gc, k);
        if (gc->pages[k].dirty) {
            memset(page_start(gc, k), 0, GCS_GC_PAGE_BYTES);
            gc->pages[k].dirty = 0;
        }
    }
    if (i + n > gc->high_water)
        gc->high_water = i + n;
    gc->pages_used += n;
}

/* ---- allocation ---------------------------------------------------------------- */

/* refill_list: the allocation list the collecting thread needs a page for
 * (-1 none); it gets one before the world resumes. */
static int collect_from(gcs_collector *gc, gcs_gc_reason reason, int refill_list);

/* Hands thread m the first page of partial list `from` for its list l.  A
 * pointer-free page handed to a list of objects with pointers becomes a
 * scanned page: always safe, the mark then reads its objects' headers and
 * finds no fields (the reverse needs no change: pointer-free objects on a
 * scanned page are read the same way). */
static void take_partial(gcs_collector *gc, gcs_mutator *m, int l, int from)
{
    int64_t pi = gc->partial_head[from];
    gcs_page *pg = &gc->pages[pi];
    gc->partial_head[from] = pg->next_partial;
    pg->next_partial = -1;
    if (pg->noscan && l < GCS_NCLASSES) {
        pg->noscan = 0;
        gc->page_noscan[pi] = 0;
    }
    m->alloc[l].free = pg->free_list;
    pg->free_list = NULL;
    gc->bytes_since_gc += (uint64_t)pg->free_slots * pg->slot_bytes;
}

/* Gives thread m a page for its allocation list l (size class l mod
 * GCS_NCLASSES, pointer-free when l >= GCS_NCLASSES), heap_lock held: a page
 * of l with free slots, else a fresh page, else (last_resort, after a
 * collection) a page with free slots of the same size class kept for the
 * other kind, so that two sets of lists never fail an allocation that one
 * set would have served.  Returns 0, or -1 when there is none. */
static int take_page(gcs_collector *gc, gcs_mutator *m, int l, int last_resort)
{
    int c = l % GCS_NCLASSES, noscan = l >= GCS_NCLASSES;
    int other = noscan ? c : c + GCS_NCLASSES;
    if (gc->partial_head[l] >= 0) {
        take_partial(gc, m, l, l);
        return 0;
    }
    int64_t pi = pages_find(gc, 1);
    if (pi >= 0) {
        /* A page that is not dirty is fresh memory (never used, or released):
         * fault it all in now, after place_pages has bound it.  The bump
         * allocation would touch it all anyway, one fault at a time; what it
         * leaves untouched when a collection comes, the sweep would fault in
         * threading its free list, every sweeper at once (the same contention
         * as marks_fault_in's). */
        int fresh = !gc->pages[pi].dirty;
        pages_take(gc, (size_t)pi, 1);
        if (fresh)
            fault_in(page_start(gc, (size_t)pi), GCS_GC_PAGE_BYTES);
        gcs_page *pg = &gc->pages[pi];
        pg->kind = GCS_PAGE_SMALL;
        pg->size_class = (uint8_t)c;
        pg->noscan = (uint8_t)noscan;
        gc->page_noscan[pi] = noscan ? (uint8_t)(c + 1) : 0;
        pg->slot_bytes = gcs_class_bytes[c];
        pg->nslots = GCS_GC_PAGE_BYTES / pg->slot_bytes;
        pg->free_slots = pg->nslots;
        pg->next_partial = -1;
        pg->free_list = NULL;
        m->alloc[l].bump = page_start(gc, (size_t)pi);
        m->alloc[l].bump_end = m->alloc[l].bump + (size_t)pg->nslots * pg->slot_bytes;
        gc->bytes_since_gc += GCS_GC_PAGE_BYTES;
        return 0;
    }
    if (last_resort && gc->partial_head[other] >= 0) {
        take_partial(gc, m, l, other);
        return 0;
    }
    return -1;
}

static int buffer_ready(const gcs_alloc_buffer *a)
{
    return a->free || (a->bump && a->bump < a->bump_end);
}

/* Refill the thread's buffer for allocation list l (heap_lock not held).
 * Returns 0, or -1 when no page is available even after a collection. */
static int refill(gcs_collector *gc, gcs_mutator *m, int l)
{
    for (int attempt = 0;; attempt++) {
        pthread_mutex_lock(&gc->heap_lock);
        int over_budget = gc->opts.alloc_budget && gc->bytes_since_gc >= gc->opts.alloc_budget;
        if ((!over_budget || attempt > 0) && take_page(gc, m, l, attempt > 0) == 0) {
            pthread_mutex_unlock(&gc->heap_lock);
            return 0;
        }
        pthread_mutex_unlock(&gc->heap_lock);
        if (attempt >= 2)
            return -1;
        collect_from(gc, over_budget && attempt == 0 ? GCS_GC_REASON_BUDGET : GCS_GC_REASON_HEAP_FULL, l);
        if (buffer_ready(&m->alloc[l]))
            return 0; /* our collection gave us the first pick (collect_from) */
    }
}

static void *alloc_large(gcs_collector *gc, size_t total, uint64_t hdr)
{
    size_t n = (total + GCS_GC_PAGE_BYTES - 1) >> GCS_PAGE_SHIFT;
    for (int attempt = 0;; attempt++) {
        pthread_mutex_lock(&gc->heap_lock);
        int over_budget = gc->opts.alloc_budget && gc->bytes_since_gc >= gc->opts.alloc_budget;
        int64_t pi = (!over_budget || attempt > 0) && n <= gc->npages ? pages_find(gc, n) : -1;
        if (pi >= 0) {
            pages_take(gc, (size_t)pi, n);
            for (size_t k = 0; k < n; k++) {
                gcs_page *pg = &gc->pages[(size_t)pi + k];
                pg->kind = k == 0 ? GCS_PAGE_LARGE_HEAD : GCS_PAGE_LARGE_TAIL;
                pg->span_pages = (uint32_t)n;
                pg->next_partial = -1;
            }
            gc->bytes_since_gc += n << GCS_PAGE_SHIFT;
            char *p = page_start(gc, (size_t)pi);
            pthread_mutex_unlock(&gc->heap_lock);
            /* fresh pages are zero (new or released, or zeroed when dirty) */
            *(uint64_t *)p = hdr;
            return p + 8;
        }
        pthread_mutex_unlock(&gc->heap_lock);
        if (attempt >= 2) {
            set_last_error("gc: heap exhausted: no %zu contiguous free pages for a %zu-byte object "
                           "(heap limit %zu bytes) after a full collection",
                           n, total, gc->npages << GCS_PAGE_SHIFT);
            return NULL;
        }
        collect_from(gc, over_budget && attempt == 0 ? GCS_GC_REASON_BUDGET : GCS_GC_REASON_HEAP_FULL, -1);
    }
}

static void *alloc_object(size_t size, size_t nptrs)
{
    gcs_collector *gc = gcs_gc_global;
    if (gcs_api_refused("allocation", NULL))
        return NULL; /* it would collect, or park at the safepoint, on itself */
    gcs_mutator *m = current_mutator(gc);
    if (!m) {
        set_last_error("gc: allocation from a thread that is not attached");
        return NULL;
    }
    gcs_gc_safepoint();
    size_t words = (size + 7) / 8;
    if (words == 0)
        words = 1;
    if (nptrs > words || words > UINT32_MAX || size > SIZE_MAX - 16) {
        set_last_error("gc: bad object layout: %zu bytes with %zu pointer fields", size, nptrs);
        return NULL;
    }
    uint64_t hdr = GCS_HDR(words, nptrs);
    size_t total = 8 + words * 8;
    if (total > GCS_GC_SMALL_MAX)
        return alloc_large(gc, total, hdr);
    int c = class_of_granules[(total + 15) >> 4];
    int l = c + (nptrs == 0 ? GCS_NCLASSES : 0); /* no pointer fields: a pointer-free page */
    gcs_alloc_buffer *a = &m->alloc[l];
    char *p;
    for (;;) {
        if (a->free) {
            p = a->free;
            a->free = ((char **)p)[1];
            break;
        }
        if (a->bump && a->bump < a->bump_end) {
            p = a->bump;
            a->bump += gcs_class_bytes[c];
            break;
        }
        a->bump = a->bump_end = NULL;
        if (refill(gc, m, l) < 0) {
            set_last_error("gc: heap exhausted: no room for a %zu-byte object (heap limit %zu "
                           "bytes) after a full collection",
                           total, gc->npages << GCS_PAGE_SHIFT);
            return NULL;
        }
    }
    memset(p + 8, 0, total - 8);
    *(uint64_t *)p = hdr;
    return p + 8;
}

void *gcs_gc_alloc(size_t size, size_t nptrs) { return alloc_object(size, nptrs); }
void *gcs_gc_alloc_data(size_t size) { return alloc_object(size, 0); }

size_t gcs_gc_size(const void *obj) { return 8 * (size_t)GCS_HDR_WORDS(((const uint64_t *)obj)[-1]); }
size_t gcs_gc_nptrs(const void *obj) { return GCS_HDR_NPTRS(((const uint64_t *)obj)[-1]); }

int gcs_gc_is_heap_pointer(const void *p)
{
    gcs_collector *gc = gcs_gc_global;
    return gc && (const char *)p >= gc->base && (const char *)p < gc->base + (gc->npages << GCS_PAGE_SHIFT);
}

int gcs_gc_node_of(const void *obj)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gcs_gc_is_heap_pointer(obj))
        return -1;
    return page_of(gc, (uintptr_t)obj)->node;
}

/* ---- roots ---------------------------------------------------------------- */

int gcs_gc_add_root(void **slot)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc)
        return -1;
    pthread_mutex_lock(&gc->roots_lock);
    if (gc->nroots == gc->roots_cap) {
        size_t ncap = gc->roots_cap ? 2 * gc->roots_cap : 64;
        void ***r = realloc(gc->roots, ncap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&gc->roots_lock);
            set_last_error("gc: out of memory for root slots");
            return -1;
        }
        gc->roots = r;
        gc->roots_cap = ncap;
    }
    gc->roots[gc->nroots++] = slot;
    pthread_mutex_unlock(&gc->roots_lock);
    return 0;
}

void gcs_gc_remove_root(void **slot)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc)
        return;
    pthread_mutex_lock(&gc->roots_lock);
    for (size_t i = gc->nroots; i-- > 0;)
        if (gc->roots[i] == slot) {
            gc->roots[i] = gc->roots[--gc->nroots];
            break;
        }
    pthread_mutex_unlock(&gc->roots_lock);
}

int gcs_gc_push_root(void **slot)
{
    gcs_mutator *m = current_mutator(gcs_gc_global);
    if (!m) {
        set_last_error("gc: push_root from a thread that is not attached");
        return -1;
    }
    if (__builtin_expect(m->shadow_top == m->shadow_cap, 0)) {
        size_t ncap = m->shadow_cap ? 2 * m->shadow_cap : 256;
        void ***s = realloc(m->shadow, ncap * sizeof *s);
        if (!s) {
            set_last_error("gc: out of memory for the shadow stack");
            return -1;
        }
        m->shadow = s;
        m->shadow_cap = ncap;
    }
    m->shadow[m->shadow_top++] = slot;
    return 0;
}

void gcs_gc_pop_roots(size_t n)
{
    gcs_mutator *m = current_mutator(gcs_gc_global);
    if (!m)
        return;
    m->shadow_top = n > m->shadow_top ? 0 : m->shadow_top - n;
}

/* ---- stop the world ------------------------------------------------------------
 * gc_lock guards `collecting`, `running` and the mutator list.  The thread that
 * starts a collection sets gcs_gc_stop_requested_ and waits (releasing the
 * lock) until it is the only running attached thread; the others park in
 * park_locked() at their next safepoint, allocation or collect call, and wait
 * for resume_cond.  The collector keeps gc_lock for the whole collection, so
 * attach/detach wait until it is over.  The lock hand-offs order everything a
 * mutator wrote before parking before everything the GC workers read. */

static void park_locked(gcs_collector *gc, gcs_mutator *m)
{
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
    gcs_collector *gc = gcs_gc_global;
    if (!gc || tls_in_collection)
        return; /* the world is stopped by this very thread: nothing to wait for */
    gcs_mutator *m = current_mutator(gc);
    pthread_mutex_lock(&gc->gc_lock);
    if (gc->collecting)
        park_locked(gc, m);
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

static void collect_locked(gcs_collector *gc, gcs_gc_reason reason, uint64_t t_start, uint64_t t_stopped);

static int collect_from(gcs_collector *gc, gcs_gc_reason reason, int refill_list)
{
    uint64_t t0 = gcs_now_ns();
    gcs_trace_state trace_prev = gcs_trace_current_state();
    gcs_mutator *m = current_mutator(gc);
    pthread_mutex_lock(&gc->gc_lock);
    while (gc->collecting && gc->remarking)
        park_locked(gc, m); /* a re-mark is no collection: wait for it, then collect */
    if (gc->collecting) {
        /* Someone else is collecting: park; their collection serves us too,
         * with the page we need first (below). */
        if (m)
            m->want_list = refill_list; /* the collector serves it and clears it */
        park_locked(gc, m);
        pthread_mutex_unlock(&gc->gc_lock);
        return 0;
    }
    gc->collecting = 1;
    gcs_trace_set_state(GCS_TRACE_GC_STOPPED); /* the collecting thread waits, then coordinates */
    __atomic_store_n(&gcs_gc_stop_requested_, 1, __ATOMIC_RELAXED);
    int self = m ? 1 : 0;
    while (gc->running > self)
        pthread_cond_wait(&gc->stopped_cond, &gc->gc_lock);
    uint64_t t1 = gcs_now_ns();
    tls_in_collection = 1;
    collect_locked(gc, reason, t0, t1);
    tls_in_collection = 0;
    /* First pick for the threads that needed a page -- this one, and those
     * that parked in collect_from while it stopped the world -- while the
     * world is still stopped: in a full heap the threads resumed first could
     * take every page this collection freed, and a thread that asked for the
     * collection would find none (4 mutators on a 64-page heap: 6 runs in 80
     * of test_stress_heap_full had an allocation fail with the heap nearly
     * empty, when only the collecting thread was served). */
    if (m)
        m->want_list = refill_list;
    pthread_mutex_lock(&gc->heap_lock);
    for (gcs_mutator *w = gc->mutators; w; w = w->next)
        if (w->want_list >= 0) {
            take_page(gc, w, w->want_list, 1);
            w->want_list = -1;
        }
    pthread_mutex_unlock(&gc->heap_lock);
    gc->collecting = 0;
    __atomic_store_n(&gcs_gc_stop_requested_, 0, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&gc->resume_cond);
    pthread_mutex_unlock(&gc->gc_lock);
    gcs_trace_set_state(trace_prev);
    return 0;
}

int gcs_gc_collect(void)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc || gcs_api_refused("gcs_gc_collect", NULL))
        return -1;
    return collect_from(gc, GCS_GC_REASON_REQUEST, -1);
}

int gcs_gc_attach(gcs_err *err)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc) {
        gcs_err_set(err, "gc: attach before gcs_gc_init");
        return -1;
    }
    if (gcs_api_refused("gcs_gc_attach", err))
        return -1;
    if (current_mutator(gc)) {
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
    tls_mutator = m;
    tls_generation = gc->generation;
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
    gcs_collector *gc = gcs_gc_global;
    gcs_mutator *m = current_mutator(gc);
    if (!m || gcs_api_refused("gcs_gc_detach", NULL))
        return;
    lock_gc_traced(gc);
    /* A collection may be waiting for this thread: let it finish first, so
     * our allocation buffers are not reset under a running collection. */
    if (gc->collecting)
        park_locked(gc, m);
    mutator_unlink_locked(gc, m);
    gc->running--;
    pthread_cond_broadcast(&gc->stopped_cond);
    pthread_mutex_unlock(&gc->gc_lock);
    free(m->shadow);
    free(m);
    tls_mutator = NULL;
    tls_generation = 0;
}

/* ---- sweep -----------------------------------------------------------------------
 * Workers claim runs of pages with an atomic counter.  For each small page
 * they read the marks of its slots, clear them, and thread the unmarked slots
 * into a free list (header 0, link in the second word).  A page with no
 * marked slot goes back to the free-page pool, its memory released with one
 * madvise per run of such pages.  Large spans live or die by the mark of
 * their first granule.  Each worker collects pages with free slots in its own
 * per-class lists; the coordinator splices them afterwards. */

#define SWEEP_CLAIM_PAGES 16

static inline int mark_is_set(gcs_collector *gc, size_t g, int mode)
{
    if (mode == GCS_GC_MARK_ATOMIC_BITS) {
        uint64_t bit = 1ull << (g & 63);
        int marked = (gc->mark_bits[g >> 6] & bit) != 0;
        return marked;
    }
    return gc->mark_bytes[g] != 0;
}

static void page_mark_clear(gcs_collector *gc, size_t page, int mode)
{
    size_t g0 = page * GCS_GRANULES_PER_PAGE;
    if (mode == GCS_GC_MARK_ATOMIC_BITS)
        memset(&gc->mark_bits[g0 >> 6], 0, GCS_GRANULES_PER_PAGE / 8);
    else
        memset(&gc->mark_bytes[g0], 0, GCS_GRANULES_PER_PAGE);
}

/* Marked slots of a small page.  Only a slot's first granule is ever marked,
 * so this is the number of set marks in the page's whole mark range (4 KiB
 * of bytes or 512 of bits), whatever the slot size: a branch-free sum the
 * compiler vectorizes.  A page whose slots all live -- most pages of a heap
 * that survives -- is then done without visiting its slots one by one. */
static uint32_t page_count_marked(const gcs_collector *gc, size_t page, int mode)
{
    size_t g0 = page * GCS_GRANULES_PER_PAGE;
    uint32_t n = 0;
    if (mode == GCS_GC_MARK_ATOMIC_BITS) {
        const uint64_t *w = gc->mark_bits + (g0 >> 6);
        for (size_t k = 0; k < GCS_GRANULES_PER_PAGE / 64; k++)
            n += (uint32_t)__builtin_popcountll(w[k]);
        return n;
    }
    const uint8_t *m = gc->mark_bytes + g0;
    for (size_t k = 0; k < GCS_GRANULES_PER_PAGE; k++)
        n += m[k]; /* a mark byte is 0 or 1 */
    return n;
}

typedef struct release_run {
    size_t start, n;
} release_run;

static void release_flush(gcs_collector *gc, release_run *r)
{
    if (r->n == 0)
        return;
    if (gc->opts.release_empty_pages) {
        if (madvise(page_start(gc, r->start), r->n << GCS_PAGE_SHIFT, MADV_DONTNEED) != 0)
            for (size_t k = r->start; k < r->start + r->n; k++)
                gc->pages[k].dirty = 1;
    }
    r->n = 0;
}

static void page_free(gcs_collector *gc, release_run *r, size_t i)
{
    gcs_page *pg = &gc->pages[i];
    /* Atomic: freeing a large span rewrites the kind of tail pages that lie
     * in another sweeper's claim, which reads it (and skips either way). */
    __atomic_store_n(&pg->kind, GCS_PAGE_FREE, __ATOMIC_RELAXED);
    pg->free_list = NULL;
    pg->free_slots = 0;
    pg->next_partial = -1;
    pg->noscan = 0;
    gc->page_noscan[i] = 0;
    pg->dirty = gc->opts.release_empty_pages ? 0 : 1;
    __atomic_fetch_or(&gc->free_map[i >> 6], 1ull << (i & 63), __ATOMIC_RELAXED);
    if (r->n && r->start + r->n == i) {
        r->n++;
    } else {
        release_flush(gc, r);
        r->start = i;
        r->n = 1;
    }
}

/* Index into node_live_bytes: the page's node, or GCS_GC_MAX_NODES (the
 * last slot) when it is unknown or beyond what the statistics hold. */
static inline int node_slot(const gcs_collector *gc, const gcs_page *pg)
{
    return pg->node >= 0 && pg->node < gc->nnodes && pg->node < GCS_GC_MAX_NODES ? pg->node : GCS_GC_MAX_NODES;
}

void gcs_sweep_worker(gcs_worker *w)
{
    gcs_collector *gc = w->gc;
    uint64_t t0 = gcs_now_ns();
    int mode = gc->job_mode; /* the mode the mark of this collection used */
    for (int l = 0; l < GCS_NLISTS; l++)
        w->partial_head[l] = w->partial_tail[l] = -1;
    w->live_objects = w->live_bytes = w->freed_objects = w->pages_in_use = w->pages_freed = 0;
    memset(w->node_live_bytes, 0, sizeof w->node_live_bytes);
    release_run run = {0, 0};
    size_t limit = gc->high_water;
    for (;;) {
        size_t first = atomic_fetch_add_explicit(&gc->sweep_next, SWEEP_CLAIM_PAGES,
                                                 memory_order_relaxed);
        if (first >= limit)
            break;
        size_t last = first + SWEEP_CLAIM_PAGES < limit ? first + SWEEP_CLAIM_PAGES : limit;
        for (size_t i = first; i < last; i++) {
            gcs_page *pg = &gc->pages[i];
            uint8_t kind = __atomic_load_n(&pg->kind, __ATOMIC_RELAXED);
            if (kind == GCS_PAGE_FREE || kind == GCS_PAGE_LARGE_TAIL)
                continue;
            w->st.pages_swept++;
            char *start = page_start(gc, i);
            size_t g0 = i * GCS_GRANULES_PER_PAGE;
            if (kind == GCS_PAGE_LARGE_HEAD) {
                size_t n = pg->span_pages;
                if (mark_is_set(gc, g0, mode)) {
                    page_mark_clear(gc, i, mode);
                    w->live_objects++;
                    w->live_bytes += n << GCS_PAGE_SHIFT;
                    w->node_live_bytes[node_slot(gc, pg)] += n << GCS_PAGE_SHIFT;
                    w->pages_in_use += n;
                } else {
                    w->freed_objects++;
                    w->pages_freed += n;
                    for (size_t k = i; k < i + n; k++)
                        page_free(gc, &run, k);
                }
                continue;
            }
            uint32_t slot = pg->slot_bytes, nslots = pg->nslots;
            size_t gstep = slot >> GCS_GRANULE_SHIFT;
            uint32_t live = page_count_marked(gc, i, mode);
            char *free_head = NULL;
            /* Backwards, so the free list comes out in address order. */
            for (uint32_t s = live == nslots ? 0 : nslots; s-- > 0;) {
                char *p = start + (size_t)s * slot;
                if (!mark_is_set(gc, g0 + s * gstep, mode)) {
                    if (*(uint64_t *)p != 0) {
                        w->freed_objects++;
                        *(uint64_t *)p = 0;
                    }
                    ((char **)p)[1] = free_head;
                    free_head = p;
                }
            }
            if (live == 0) {
                w->pages_freed++;
                page_free(gc, &run, i);
                continue;
            }
            page_mark_clear(gc, i, mode);
            w->live_objects += live;
            w->live_bytes += (uint64_t)live * slot;
            w->node_live_bytes[node_slot(gc, pg)] += (uint64_t)live * slot;
            w->pages_in_use++;
            pg->free_slots = nslots - live;
            pg->free_list = free_head;
            pg->next_partial = -1;
            if (free_head) {
                int l = gcs_page_list(pg);
                if (w->partial_tail[l] >= 0)
                    gc->pages[w->partial_tail[l]].next_partial = (int64_t)i;
                else
                    w->partial_head[l] = (int64_t)i;
                w->partial_tail[l] = (int64_t)i;
            }
        }
        release_flush(gc, &run);
    }
    release_flush(gc, &run);
    w->st.sweep_ns = gcs_now_ns() - t0;
}

/* ---- one collection (world stopped, gc_lock held) ------------------------------ */

static int push_root_obj(gcs_collector *gc, void *obj, int *next_worker, int threads,
                         void ***list, size_t *n, size_t *cap)
{
    if (!obj)
        return 0;
    gcs_mark_roots_push(gc, (uintptr_t)obj, *next_worker);
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

static void log_stats(gcs_collector *gc, const gcs_gc_stats *st)
{
    if (!gc->log_path[0])
        return;
    json_t *j = gcs_gc_stats_to_json(st);
    if (!j)
        return;
    char *line = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!line)
        return;
    FILE *fp = fopen(gc->log_path, "a");
    if (fp) {
        fputs(line, fp);
        fputc('\n', fp);
        fclose(fp);
    }
    free(line);
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
    if (d->ninputs < 0 || d->ninputs > 8)
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

/* Pushes the objects of every root slot and shadow stack for the rescan. */
static void rescan_roots(gcs_collector *gc)
{
    pthread_mutex_lock(&gc->roots_lock);
    for (size_t i = 0; i < gc->nroots; i++)
        if (*gc->roots[i])
            gcs_mark_rescan_push(gc, (uintptr_t)*gc->roots[i], 0);
    pthread_mutex_unlock(&gc->roots_lock);
    for (gcs_mutator *m = gc->mutators; m; m = m->next)
        for (size_t i = 0; i < m->shadow_top; i++)
            if (*m->shadow[i])
                gcs_mark_rescan_push(gc, (uintptr_t)*m->shadow[i], 0);
}

static inline void rescan_object(gcs_collector *gc, const char *slot)
{
    uint64_t hdr = *(const uint64_t *)slot;
    uint32_t np = GCS_HDR_NPTRS(hdr);
    if (np) /* a range entry: its fields are examined like an array chunk's */
        gcs_mark_rescan_push(gc, (uintptr_t)(slot + 8), (uintptr_t)(slot + 8 + 8 * (size_t)np));
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
    while (gcs_mark_overflowed(gc, threads)) {
        rounds++;
        gcs_mark_rescan_begin(gc, threads);
        rescan_roots(gc);
        for (size_t i = 0; i < gc->high_water; i++) {
            gcs_page *pg = &gc->pages[i];
            char *start = page_start(gc, i);
            size_t g0 = i * GCS_GRANULES_PER_PAGE;
            if (pg->kind == GCS_PAGE_LARGE_HEAD) {
                if (mark_is_set(gc, g0, mode))
                    rescan_object(gc, start);
            } else if (pg->kind == GCS_PAGE_SMALL && !gc->page_noscan[i]) {
                uint32_t slot = pg->slot_bytes;
                size_t gstep = slot >> GCS_GRANULE_SHIFT;
                for (uint32_t s = 0; s < pg->nslots; s++)
                    if (mark_is_set(gc, g0 + s * gstep, mode))
                        rescan_object(gc, start + (size_t)s * slot);
            }
        }
        gcs_mark_rescan_end(gc);
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
    uint64_t faults_start = minor_faults();
    gcs_gc_decision decision;
    int threads = choose_threads(gc, &decision);
    gcs_gc_stats *st = &gc->last;
    mark_begin(gc, st, gc->collections + 1, threads, t_start);
    st->decision = decision;
    st->reason = reason;
    st->stop_ns = t_stopped - t_start;
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
    int snap_due = gcs_snap_due(gc, st->index);
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

    gcs_mark_run(gc, threads);
    st->mark_rescans = mark_recover(gc, threads);
    uint64_t t2 = gcs_now_ns();
    st->mark_ns = t2 - t1;

    if (gc->opts.compute_span) {
        st->span = gcs_span_compute(gc, root_list, nroot_list, gc->opts.span_cost_object,
                                    gc->opts.span_cost_pointer);
        st->span_ns = gcs_now_ns() - t2;
    }
    /* Heap snapshot: the marked set is the live graph; timed apart (snapshot_ns). */
    if (snap_due && gcs_snap_take(gc, st, root_list, nroot_list) < 0)
        set_last_error("gc: snapshot: %s", st->snapshot_error);
    free(root_list);

    uint64_t t3 = gcs_now_ns();
    atomic_store_explicit(&gc->sweep_next, 0, memory_order_relaxed);
    gcs_pool_run(gc, GCS_JOB_SWEEP, threads);
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
    }
    gc->pages_used = st->pages_in_use;
    gc->bytes_since_gc = 0;
    gc->free_hint = 0;
    st->bind_failures = gc->bind_failures;
    pthread_mutex_unlock(&gc->heap_lock);
    uint64_t t4 = gcs_now_ns();
    st->sweep_ns = t4 - t3;

    for (int i = 0; i < threads; i++) {
        gcs_gc_worker_stats *ws = &gc->workers[i].st;
        ws->cpu = gc->workers[i].pinned_cpu; /* the worker ran a job: it has set it */
        st->workers[i] = *ws;
        st->t1_ns += ws->busy_ns;
        st->objects_marked += ws->objects_scanned;
        st->pointers_scanned += ws->pointers_scanned;
        st->edges_examined += ws->edges_examined;
        st->steal_attempts += ws->steal_attempts;
        st->steals += ws->steals;
    }
    st->pause_ns = gcs_now_ns() - t_start - st->snapshot_ns;
    uint64_t faults_end = minor_faults();
    st->page_faults = faults_end > faults_start ? faults_end - faults_start : 0;
    gc->have_last = 1;
    /* Counted before the callback, so that gcs_gc_collections() there agrees
     * with gcs_gc_last_stats() (this collection).  Threads parked on it
     * cannot see the count change before collect_from broadcasts resume_cond
     * and lets go of gc_lock. */
    gc->collections++;
    log_stats(gc, st);
    if (gc->opts.on_collection)
        gc->opts.on_collection(st, gc->opts.on_collection_arg);
}

/* ---- re-mark (world stopped, gc_lock held) ------------------------------------------
 * The mark table is clear between collections (the sweep clears every live
 * page's marks).  A re-mark marks from the roots as a collection does, counts
 * the marked objects page by page, and clears those pages' marks again. */

static void remark_locked(gcs_collector *gc, int threads, gcs_gc_stats *st, uint64_t index)
{
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
    gcs_mark_run(gc, threads);
    st->mark_rescans = mark_recover(gc, threads);
    uint64_t t2 = gcs_now_ns();
    st->mark_ns = t2 - t1;

    /* Count what is marked (exact in every mode), then clear. */
    for (size_t i = 0; i < gc->high_water; i++) {
        gcs_page *pg = &gc->pages[i];
        size_t g0 = i * GCS_GRANULES_PER_PAGE;
        uint64_t live = 0, bytes = 0;
        if (pg->kind == GCS_PAGE_LARGE_HEAD) {
            if (mark_is_set(gc, g0, mode)) {
                live = 1;
                bytes = (uint64_t)pg->span_pages << GCS_PAGE_SHIFT;
            }
        } else if (pg->kind == GCS_PAGE_SMALL) {
            live = page_count_marked(gc, i, mode);
            bytes = live * pg->slot_bytes;
        }
        if (!live)
            continue;
        page_mark_clear(gc, i, mode);
        st->live_objects += live;
        st->live_bytes += bytes;
        int k = node_slot(gc, pg);
        if (k < GCS_GC_MAX_NODES)
            st->node_live_bytes[k] += bytes;
        else
            st->unknown_node_live_bytes += bytes;
    }
    pthread_mutex_unlock(&gc->heap_lock);

    for (int i = 0; i < threads; i++) {
        gcs_gc_worker_stats *ws = &gc->workers[i].st;
        ws->cpu = gc->workers[i].pinned_cpu;
        st->workers[i] = *ws;
        st->t1_ns += ws->busy_ns;
        st->objects_marked += ws->objects_scanned;
        st->pointers_scanned += ws->pointers_scanned;
        st->edges_examined += ws->edges_examined;
        st->steal_attempts += ws->steal_attempts;
        st->steals += ws->steals;
    }
    st->pause_ns = gcs_now_ns() - t_start;
}

int gcs_gc_remark(int threads, gcs_gc_stats *out)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc || !out || threads < 1 || threads > gc->pool_size)
        return -1;
    if (tls_in_collection) {
        /* From an on_collection callback: the world is stopped and we hold
         * gc_lock; the collection is counted already (collect_locked). */
        remark_locked(gc, threads, out, gc->collections);
        return 0;
    }
    uint64_t t0 = gcs_now_ns();
    gcs_mutator *m = current_mutator(gc);
    pthread_mutex_lock(&gc->gc_lock);
    while (gc->collecting)
        park_locked(gc, m); /* let a collection or another re-mark finish */
    gc->collecting = 1;
    gc->remarking = 1;
    __atomic_store_n(&gcs_gc_stop_requested_, 1, __ATOMIC_RELAXED);
    int self = m ? 1 : 0;
    while (gc->running > self)
        pthread_cond_wait(&gc->stopped_cond, &gc->gc_lock);
    uint64_t t1 = gcs_now_ns();
    remark_locked(gc, threads, out, gc->collections);
    out->stop_ns = t1 - t0;
    out->start_ns = t0;
    out->pause_ns += t1 - t0;
    gc->remarking = 0;
    gc->collecting = 0;
    __atomic_store_n(&gcs_gc_stop_requested_, 0, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&gc->resume_cond);
    pthread_mutex_unlock(&gc->gc_lock);
    return 0;
}

/* ---- statistics ------------------------------------------------------------------- */

int gcs_gc_last_stats(gcs_gc_stats *out)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc)
        return -1;
    int locked = gcs_api_lock(gc);
    int ok = gc->have_last;
    if (ok)
        *out = gc->last;
    gcs_api_unlock(gc, locked);
    return ok ? 0 : -1;
}

uint64_t gcs_gc_collections(void)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc)
        return 0;
    int locked = gcs_api_lock(gc);
    uint64_t n = gc->collections;
    gcs_api_unlock(gc, locked);
    return n;
}

static const char *reason_name(gcs_gc_reason r)
{
    return r == GCS_GC_REASON_BUDGET ? "budget" : r == GCS_GC_REASON_HEAP_FULL ? "heap-full" : "request";
}

json_t *gcs_gc_stats_to_json(const gcs_gc_stats *s)
{
    json_t *j = json_object();
    if (!j)
        return NULL;
#define U(k, v) json_object_set_new(j, k, json_integer((json_int_t)(v)))
    U("collection", s->index);
    json_object_set_new(j, "reason", json_string(reason_name(s->reason)));
    U("threads", s->threads);
    json_object_set_new(j, "mark_mode", json_string(gcs_gc_mark_mode_name(s->mark_mode)));
    U("start_ns", s->start_ns);
    U("stop_ns", s->stop_ns);
    U("roots_ns", s->roots_ns);
    U("mark_ns", s->mark_ns);
    U("span_ns", s->span_ns);
    U("sweep_ns", s->sweep_ns);
    U("pause_ns", s->pause_ns);
    U("t1_ns", s->t1_ns);
    U("roots", s->roots);
    U("objects_marked", s->objects_marked);
    U("pointers_scanned", s->pointers_scanned);
    U("edges_examined", s->edges_examined);
    U("steal_attempts", s->steal_attempts);
    U("steals", s->steals);
    U("mark_rescans", s->mark_rescans);
    U("live_objects", s->live_objects);
    U("live_bytes", s->live_bytes);
    U("freed_objects", s->freed_objects);
    U("pages_in_use", s->pages_in_use);
    U("pages_freed", s->pages_freed);
    U("heap_limit", s->heap_limit);
    U("bind_failures", s->bind_failures);
    U("page_faults", s->page_faults);
    json_object_set_new(j, "span", s->compute_span && !isnan(s->span) ? json_real(s->span) : json_null());
    json_object_set_new(j, "span_cost_object", json_real(s->span_cost_object));
    json_object_set_new(j, "span_cost_pointer", json_real(s->span_cost_pointer));
    json_object_set_new(j, "cache_misses", s->cache_misses_available ? json_true() : json_string("unavailable"));
    json_object_set_new(j, "snapshot_path", s->snapshot_status ? json_string(s->snapshot_path) : json_null());
    U("snapshot_ns", s->snapshot_ns);
    U("snapshot_bytes", s->snapshot_bytes);
    U("snapshot_objects", s->snapshot_objects);
    json_object_set_new(j, "snapshot_error", s->snapshot_status < 0 ? json_string(s->snapshot_error) : json_null());
    json_t *nodes = json_array();
    for (int k = 0; k < s->nnodes && k < GCS_GC_MAX_NODES; k++)
        json_array_append_new(nodes, json_integer((json_int_t)s->node_live_bytes[k]));
    json_object_set_new(j, "node_live_bytes", nodes);
    U("unknown_node_live_bytes", s->unknown_node_live_bytes);
    if (s->remark)
        json_object_set_new(j, "remark", json_true());
    if (s->decision.used) {
        const gcs_gc_decision *d = &s->decision;
        json_t *pred = json_array();
        for (int i = 0; i < d->npredicted; i++)
            json_array_append_new(pred, isfinite(d->predicted_mark_ns[i]) ? json_real(d->predicted_mark_ns[i])
                                                                             : json_null());
        json_t *in = json_object();
        for (int i = 0; i < d->ninputs && i < 8; i++)
            if (d->inputs[i].name)
                json_object_set_new(in, d->inputs[i].name, isfinite(d->inputs[i].value)
                                                               ? json_real(d->inputs[i].value) : json_null());
        json_object_set_new(j, "policy",
                            json_pack("{s:s, s:i, s:i, s:o, s:I, s:s?, s:o}", "name", d->policy, "threads",
                                      d->threads, "max_threads", d->max_threads, "predicted_mark_ns", pred,
                                      "decision_ns", (json_int_t)d->decision_ns, "note", d->note, "inputs", in));
    }
    json_t *ws = json_array();
    for (int i = 0; i < s->threads && i < GCS_GC_MAX_THREADS; i++) {
        const gcs_gc_worker_stats *w = &s->workers[i];
        json_t *o = json_object();
#define W(k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))
        W("wake_ns", w->wake_ns);
        W("mark_ns", w->mark_ns);
        W("busy_ns", w->busy_ns);
        W("search_ns", w->search_ns);
        W("steal_attempts", w->steal_attempts);
        W("steals", w->steals);
        W("objects_scanned", w->objects_scanned);
        W("pointers_scanned", w->pointers_scanned);
        W("edges_examined", w->edges_examined);
        W("bytes_marked", w->bytes_marked);
        W("chunks_scanned", w->chunks_scanned);
        W("spills", w->spills);
        W("sweep_ns", w->sweep_ns);
        W("pages_swept", w->pages_swept);
        json_object_set_new(o, "cache_misses", w->cache_misses < 0 ? json_null() : json_integer(w->cache_misses));
        W("cpu", w->cpu);
#undef W
        json_array_append_new(ws, o);
    }
    json_object_set_new(j, "workers", ws);
#undef U
    return j;
}

void gcs_gc_census(uint64_t *objects, uint64_t *payload_bytes)
{
    gcs_collector *gc = gcs_gc_global;
    uint64_t n = 0, b = 0;
    if (gc) {
        pthread_mutex_lock(&gc->heap_lock);
        for (size_t i = 0; i < gc->high_water; i++) {
            gcs_page *pg = &gc->pages[i];
            char *start = page_start(gc, i);
            if (pg->kind == GCS_PAGE_LARGE_HEAD) {
                n++;
                b += 8 * (uint64_t)GCS_HDR_WORDS(*(uint64_t *)start);
            } else if (pg->kind == GCS_PAGE_SMALL) {
                for (uint32_t s = 0; s < pg->nslots; s++) {
                    uint64_t h = *(uint64_t *)(start + (size_t)s * pg->slot_bytes);
                    if (h) {
                        n++;
                        b += 8 * (uint64_t)GCS_HDR_WORDS(h);
                    }
                }
            }
        }
        pthread_mutex_unlock(&gc->heap_lock);
    }
    if (objects)
        *objects = n;
    if (payload_bytes)
        *payload_bytes = b;
}

/* ---- settings ---------------------------------------------------------------------- */

int gcs_gc_set_threads(int threads)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc || threads < 1 || threads > gc->pool_size)
        return -1;
    int locked = gcs_api_lock(gc);
    gc->threads = threads;
    gcs_api_unlock(gc, locked);
    return 0;
}

int gcs_gc_set_thread_policy_active(int on)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc || !gc->opts.thread_policy.name)
        return -1;
    int locked = gcs_api_lock(gc);
    gc->policy_paused = !on;
    gcs_api_unlock(gc, locked);
    return 0;
}

int gcs_gc_threads(void)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc)
        return 0;
    int locked = gcs_api_lock(gc);
    int t = gc->threads;
    gcs_api_unlock(gc, locked);
    return t;
}

int gcs_gc_max_threads(void) { return gcs_gc_global ? gcs_gc_global->pool_size : 0; }

/* Both settings take effect at the next collection or re-mark: mark_begin
 * copies them under gc_lock, so a collection under way (which holds gc_lock)
 * keeps the mode its mark started with, and this call waits for its end. */
void gcs_gc_set_mark_mode(gcs_gc_mark_mode mode)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc || (unsigned)mode > GCS_GC_MARK_ATOMIC_BITS)
        return;
    int locked = gcs_api_lock(gc);
    gc->mark_mode = (int)mode;
    gcs_api_unlock(gc, locked);
}

void gcs_gc_set_instrumentation(int on)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc)
        return;
    int locked = gcs_api_lock(gc);
    gc->instrument = on ? 1 : 0;
    gcs_api_unlock(gc, locked);
}

void gcs_gc_set_compute_span(int on, double cost_object, double cost_pointer)
{
    gcs_collector *gc = gcs_gc_global;
    if (!gc)
        return;
    int locked = gcs_api_lock(gc);
    gc->opts.compute_span = on;
    if (cost_object <= 0 && cost_pointer <= 0)
        cost_object = cost_pointer = 1; /* both 0: objects + pointers, as gcs_gc_init reads them */
    gc->opts.span_cost_object = cost_object > 0 ? cost_object : 1;
    gc->opts.span_cost_pointer = cost_pointer >= 0 ? cost_pointer : 1;
    gcs_api_unlock(gc, locked);
}

int gcs_gc_is_initialized(void) { return gcs_gc_global != NULL; }

/* ---- init / shutdown ---------------------------------------------------------------- */

static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void collector_free(gcs_collector *gc)
{
    gcs_pool_stop(gc);
    if (gc->topology)
        hwloc_topology_destroy(gc->topology);
    if (gc->reserved)
        munmap(gc->reserved, gc->reserved_bytes);
    if (gc->mark_bytes)
        munmap(gc->mark_bytes, gc->mark_bytes_len);
    if (gc->mark_bits)
        munmap(gc->mark_bits, gc->mark_bits_len);
    for (gcs_mutator *m = gc->mutators, *next; m; m = next) {
        next = m->next;
        free(m->shadow);
        free(m);
    }
    free(gc->pages);
    free(gc->page_noscan);
    free(gc->free_map);
    free(gc->roots);
    free(gc);
}

static int init_collector(const gcs_gc_options *opts_in, gcs_err *err)
{
    static uint64_t generations;
    if (gcs_gc_global) {
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
    for (size_t g = 0; g <= GCS_GC_SMALL_MAX / 16; g++) {
        int c = 0;
        while (c < GCS_NCLASSES - 1 && gcs_class_bytes[c] < g * 16)
            c++;
        class_of_granules[g] = (uint8_t)c;
    }

    gcs_collector *gc = calloc(1, sizeof *gc);
    if (!gc) {
        gcs_err_set(err, "gc: out of memory");
        return -1;
    }
    gc->opts = opts;
    gc->opts.log_path = NULL;
    gc->opts.snapshot_path = NULL;
    if (gcs_snap_setup(gc, &opts, err) < 0) {
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

    gc->npages = (opts.heap_limit + GCS_GC_PAGE_BYTES - 1) >> GCS_PAGE_SHIFT;
    gc->reserved_bytes = (gc->npages + 1) << GCS_PAGE_SHIFT;
    gc->reserved = reserve(gc->reserved_bytes);
    size_t ngranules = gc->npages * GCS_GRANULES_PER_PAGE;
    gc->mark_bytes_len = ngranules;
    gc->mark_bits_len = ngranules / 8;
    gc->mark_bytes = reserve(gc->mark_bytes_len);
    gc->mark_bits = reserve(gc->mark_bits_len);
    gc->pages = calloc(gc->npages, sizeof *gc->pages);
    gc->page_noscan = calloc(gc->npages, 1);
    gc->free_map_words = (gc->npages + 63) / 64;
    gc->free_map = calloc(gc->free_map_words, sizeof *gc->free_map);
    if (!gc->reserved || !gc->mark_bytes || !gc->mark_bits || !gc->pages || !gc->page_noscan || !gc->free_map) {
        gcs_err_set(err, "gc: cannot reserve a %zu-byte heap: %s", opts.heap_limit, strerror(errno));
        collector_free(gc);
        return -1;
    }
    gc->base = (char *)(((uintptr_t)gc->reserved + GCS_GC_PAGE_BYTES - 1) & ~(uintptr_t)(GCS_GC_PAGE_BYTES - 1));
    for (size_t i = 0; i < gc->npages; i++) {
        gc->pages[i].node = -1;
        gc->pages[i].next_partial = -1;
        gc->free_map[i >> 6] |= 1ull << (i & 63);
    }
    for (int l = 0; l < GCS_NLISTS; l++)
        gc->partial_head[l] = -1;
    pthread_mutex_init(&gc->heap_lock, NULL);
    pthread_mutex_init(&gc->gc_lock, NULL);
    pthread_mutex_init(&gc->roots_lock, NULL);
    pthread_mutex_init(&gc->pool_lock, NULL);
    pthread_cond_init(&gc->stopped_cond, NULL);
    pthread_cond_init(&gc->resume_cond, NULL);
    pthread_cond_init(&gc->job_cond, NULL);
    pthread_cond_init(&gc->done_cond, NULL);

    if (opts.pin_workers) {
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
    if (gcs_pool_start(gc, err) < 0) {
        collector_free(gc);
        return -1;
    }
    gcs_gc_global = gc;
    if (gcs_gc_attach(err) < 0) {
        gcs_gc_global = NULL;
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
    gcs_collector *gc = gcs_gc_global;
    if (!gc || gcs_api_refused("gcs_gc_shutdown", NULL))
        return;
    gcs_gc_detach();
    gcs_gc_global = NULL;
    gcs_gc_thread_policy policy = gc->opts.thread_policy;
    collector_free(gc);
    if (policy.destroy)
        policy.destroy(policy.state);
    __atomic_store_n(&gcs_gc_stop_requested_, 0, __ATOMIC_RELAXED);
}
