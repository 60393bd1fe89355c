/* sweep.c -- the parallel sweep: the pool's sweep job.
 *
 * Runs on every worker of the collection (pool.c) after the mark, with the
 * world stopped and heap_lock held by the collecting thread.  Kept apart from
 * the collection driver (collect.c) because it is the other per-page loop
 * that the measurements time (sweep_ns per worker) and that scales with P,
 * and from heap.c because it touches pages only to give them back.
 *
 * Workers claim runs of pages with an atomic counter.  For each small page
 * they read the marks of its slots, clear them, and thread the unmarked slots
 * into a free list (header 0, link in the second word).  A page with no
 * marked slot goes back to the free-page pool; its memory is released, with
 * one madvise per run of such pages, by the sweep of the release_after-th
 * collection after, if the page is still free then.  Releasing at once made
 * the sweep pay the madvise and its TLB shootdown in the pause, and the
 * mutators a page fault per 4 KiB when they took the page again in the next
 * cycle, for memory most programs reuse within a few collections (Boehm GC
 * waits its MUNMAP_THRESHOLD collections for the same reason).  Large
 * spans live or die by the mark of their first granule.  Each worker
 * collects pages with free slots in its own per-class lists; the
 * coordinator splices them afterwards. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/internal.h"
#include "gc_internal.h"

#define SWEEP_CLAIM_PAGES 16

/* Marked slots of a small page.  Only a slot's first granule is ever marked,
 * so this is the number of set marks in the page's whole mark range (4 KiB
 * of bytes or 512 of bits), whatever the slot size: a branch-free sum the
 * compiler vectorizes.  A page whose slots all live -- most pages of a heap
 * that survives -- is then done without visiting its slots one by one. */
uint32_t _gcs_page_count_marked(const gcs_collector *gc, size_t page, int mode)
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

/* Releases a run of free pages, all marked clean by the caller; a failed
 * release leaves them dirty (zeroed when reused, released by a later sweep). */
static void release_flush(gcs_worker *w, release_run *r)
{
    gcs_collector *gc = w->gc;
    if (r->n == 0)
        return;
    if (madvise(_gcs_page_start(gc, r->start), r->n << GCS_PAGE_SHIFT, MADV_DONTNEED) != 0)
        for (size_t k = r->start; k < r->start + r->n; k++)
            __atomic_store_n(&gc->pages[k].dirty, 1, __ATOMIC_RELAXED);
    else
        w->pages_released += r->n;
    r->n = 0;
}

static void release_add(gcs_worker *w, release_run *r, size_t i)
{
    __atomic_store_n(&w->gc->pages[i].dirty, 0, __ATOMIC_RELAXED);
    if (r->n && r->start + r->n == i) {
        r->n++;
    } else {
        release_flush(w, r);
        r->start = i;
        r->n = 1;
    }
}

/* A page already free when the sweep reaches it: released once it has
 * stayed free release_after collections.  Its fields are read and written
 * atomically because another sweeper may be freeing it right now (the tail
 * of a large span that starts in that sweeper's claim); such a page was
 * freed in this collection (age 0), so it is left alone, and if a stale
 * freed_at were read instead, releasing a free page is harmless. */
static void page_age(gcs_worker *w, release_run *r, size_t i)
{
    gcs_collector *gc = w->gc;
    gcs_page *pg = &gc->pages[i];
    if (!gc->opts.release_empty_pages || gc->opts.release_after == 0 ||
        !__atomic_load_n(&pg->dirty, __ATOMIC_RELAXED))
        return;
    uint32_t age = (uint32_t)gc->collections - __atomic_load_n(&pg->freed_at, __ATOMIC_RELAXED);
    if (age >= (uint32_t)gc->opts.release_after)
        release_add(w, r, i);
}

static void page_free(gcs_worker *w, release_run *r, size_t i)
{
    gcs_collector *gc = w->gc;
    gcs_page *pg = &gc->pages[i];
    /* Atomic: freeing a large span rewrites the kind of tail pages that lie
     * in another sweeper's claim, which reads it (and skips either way). */
    __atomic_store_n(&pg->kind, GCS_PAGE_FREE, __ATOMIC_RELAXED);
    pg->free_list = NULL;
    pg->free_slots = 0;
    pg->next_partial = -1;
    pg->noscan = 0;
    gc->page_noscan[i] = 0;
    __atomic_store_n(&pg->freed_at, (uint32_t)gc->collections, __ATOMIC_RELAXED);
    __atomic_store_n(&pg->dirty, 1, __ATOMIC_RELAXED);
    __atomic_fetch_or(&gc->free_map[i >> 6], 1ull << (i & 63), __ATOMIC_RELAXED);
    if (gc->opts.release_empty_pages && gc->opts.release_after == 0)
        release_add(w, r, i);
}

/* The pool's sweep job on worker w (pool.c); the collecting thread splices
 * the workers' lists and sums their counts afterwards (collect.c). */
void _gcs_sweep_worker(gcs_worker *w)
{
    gcs_collector *gc = w->gc;
    uint64_t t0 = gcs_now_ns();
    int mode = gc->job_mode; /* the mode the mark of this collection used */
    for (int l = 0; l < GCS_NLISTS; l++)
        w->partial_head[l] = w->partial_tail[l] = -1;
    w->live_objects = w->live_bytes = w->freed_objects = w->pages_in_use = w->pages_freed = 0;
    w->pages_released = 0;
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
            if (kind == GCS_PAGE_FREE) {
                page_age(w, &run, i);
                continue;
            }
            if (kind == GCS_PAGE_LARGE_TAIL)
                continue;
            w->st.pages_swept++;
            char *start = _gcs_page_start(gc, i);
            size_t g0 = i * GCS_GRANULES_PER_PAGE;
            if (kind == GCS_PAGE_LARGE_HEAD) {
                size_t n = pg->span_pages;
                gcs_assert_internal(n >= 1 && i + n <= limit);
                if (_gcs_mark_is_set(gc, g0, mode)) {
                    _gcs_page_mark_clear(gc, i, mode);
                    w->live_objects++;
                    w->live_bytes += n << GCS_PAGE_SHIFT;
                    w->node_live_bytes[_gcs_node_slot(gc, pg)] += n << GCS_PAGE_SHIFT;
                    w->pages_in_use += n;
                } else {
                    w->freed_objects++;
                    w->pages_freed += n;
                    for (size_t k = i; k < i + n; k++)
                        page_free(w, &run, k);
                }
                continue;
            }
            uint32_t slot = pg->slot_bytes, nslots = pg->nslots;
            size_t gstep = slot >> GCS_GRANULE_SHIFT;
            uint32_t live = _gcs_page_count_marked(gc, i, mode);
            /* only a slot's first granule is marked, so at most one mark per slot */
            gcs_assert_internal(kind == GCS_PAGE_SMALL && live <= nslots &&
                                slot == _gcs_class_bytes[pg->size_class]);
            char *free_head = NULL;
            /* Backwards, so the free list comes out in address order. */
            for (uint32_t s = live == nslots ? 0 : nslots; s-- > 0;) {
                char *p = start + (size_t)s * slot;
                if (!_gcs_mark_is_set(gc, g0 + s * gstep, mode)) {
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
                page_free(w, &run, i);
                continue;
            }
            _gcs_page_mark_clear(gc, i, mode);
            w->live_objects += live;
            w->live_bytes += (uint64_t)live * slot;
            w->node_live_bytes[_gcs_node_slot(gc, pg)] += (uint64_t)live * slot;
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
        release_flush(w, &run);
    }
    release_flush(w, &run);
    w->st.sweep_ns = gcs_now_ns() - t0;
}
