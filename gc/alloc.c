/* alloc.c -- allocating objects: size classes, each thread's allocation
 * buffers, the large-object path, and the object queries of the API.
 *
 * Each thread allocates from its own page per allocation list (free list or
 * bump region, gcs_alloc_buffer), with no lock and no shared write: this is
 * the mutators' fast path.  When the buffer runs dry, refill takes the next
 * page from heap.c under heap_lock, and when there is none, or the
 * allocation budget is spent, it starts a collection (collect.c) and tries
 * again.  Kept apart from heap.c so that the per-object path is one small
 * file whose every line is read by each allocation.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "gc_internal.h"

/* Size class of an object of (g * 16) bytes or less, header included. */
static uint8_t class_of_granules[GCS_GC_SMALL_MAX / 16 + 1];

/* Fills class_of_granules from the size-class table (at every init: the
 * table is constant, so this writes the same bytes each time). */
void _gcs_alloc_classes_init(void)
{
    for (int c = 0; c < GCS_NCLASSES; c++)
        gcs_assert_internal(_gcs_class_bytes[c] % 16 == 0 &&
                            (c == 0 || _gcs_class_bytes[c] > _gcs_class_bytes[c - 1]));
    gcs_assert_internal(_gcs_class_bytes[GCS_NCLASSES - 1] == GCS_GC_SMALL_MAX);
    for (size_t g = 0; g <= GCS_GC_SMALL_MAX / 16; g++) {
        int c = 0;
        while (c < GCS_NCLASSES - 1 && _gcs_class_bytes[c] < g * 16)
            c++;
        class_of_granules[g] = (uint8_t)c;
    }
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
        if ((!over_budget || attempt > 0) && _gcs_heap_take_page(gc, m, l, attempt > 0) == 0) {
                                                                 pthread_mutex_unlock(&gc->heap_lock);
            return 0;
        }
        pthread_mutex_unlock(&gc->heap_lock);
        if (attempt >= 2)
            return -1;
        _gcs_collect_from(gc, over_budget && attempt == 0 ? GCS_GC_REASON_BUDGET : GCS_GC_REASON_HEAP_FULL, l);
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
        int64_t pi = (!over_budget || attempt > 0) && n <= gc->npages ? _gcs_pages_find(gc, n) : -1;
        if (pi >= 0) {
            _gcs_pages_take(gc, (size_t)pi, n);
            for (size_t k = 0; k < n; k++) {
                gcs_page *pg = &gc->pages[(size_t)pi + k];
                pg->kind = k == 0 ? GCS_PAGE_LARGE_HEAD : GCS_PAGE_LARGE_TAIL;
                pg->span_pages = (uint32_t)n;
                pg->next_partial = -1;
            }
            gc->bytes_since_gc += n << GCS_PAGE_SHIFT;
            char *p = _gcs_page_start(gc, (size_t)pi);
            pthread_mutex_unlock(&gc->heap_lock);
            /* fresh pages are zero (new or released, or zeroed when dirty) */
            *(uint64_t *)p = hdr;
            return p + 8;
        }
        pthread_mutex_unlock(&gc->heap_lock);
        if (attempt >= 2) {
            _gcs_set_last_error("gc: heap exhausted: no %zu contiguous free pages for a %zu-byte object "
                                "(heap limit %zu bytes) after a full collection",
                                n, total, gc->npages << GCS_PAGE_SHIFT);
            return NULL;
        }
        _gcs_collect_from(gc, over_budget && attempt == 0 ? GCS_GC_REASON_BUDGET : GCS_GC_REASON_HEAP_FULL, -1);
    }
}

static void *alloc_object(size_t size, size_t nptrs)
{
    gcs_collector *gc = _gcs_gc_global;
    if (_gcs_api_refused("allocation", NULL))
        return NULL; /* it would collect, or park at the safepoint, on itself */
    gcs_mutator *m = _gcs_current_mutator(gc);
    if (!m) {
        _gcs_set_last_error("gc: allocation from a thread that is not attached");
        return NULL;
    }
    gcs_gc_safepoint();
    size_t words = (size + 7) / 8;
    if (words == 0)
        words = 1;
    if (nptrs > words || words > UINT32_MAX || size > SIZE_MAX - 16) {
        _gcs_set_last_error("gc: bad object layout: %zu bytes with %zu pointer fields", size, nptrs);
        return NULL;
    }
    uint64_t hdr = GCS_HDR(words, nptrs);
    size_t total = 8 + words * 8;
    if (total > GCS_GC_SMALL_MAX)
        return alloc_large(gc, total, hdr);
    int c = class_of_granules[(total + 15) >> 4];
    gcs_assert_internal(_gcs_class_bytes[c] >= total);
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
            a->bump += _gcs_class_bytes[c];
            break;
        }
        a->bump = a->bump_end = NULL;
        if (refill(gc, m, l) < 0) {
            _gcs_set_last_error("gc: heap exhausted: no room for a %zu-byte object (heap limit %zu "
                                "bytes) after a full collection",
                                total, gc->npages << GCS_PAGE_SHIFT);
            return NULL;
        }
    }
    gcs_assert_internal(*(const uint64_t *)p == 0); /* a free slot's header */
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
    gcs_collector *gc = _gcs_gc_global;
    return gc && (const char *)p >= gc->base && (const char *)p < gc->base + (gc->npages << GCS_PAGE_SHIFT);
}

int gcs_gc_node_of(const void *obj)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gcs_gc_is_heap_pointer(obj))
        return -1;
    return _gcs_page_of(gc, (uintptr_t)obj)->node;
}
