/* heap.c -- the heap's pages: the reserved range, the free-page map, NUMA
 * placement and first touch, and handing a page to a size class.
 *
 * One reserved virtual range of heap_limit bytes cut into 64 KiB pages, so
 * an address's page and mark granule are found by arithmetic (_gcs_page_of,
 * gcs_granule_of in gc_internal.h).  A page is free, holds small objects of
 * one size class, or is part of a large-object span.  Pages change hands only
 * under heap_lock, once per 64 KiB, so nothing here is on the per-object
 * path: allocation (alloc.c) carves objects out of the page a thread holds,
 * and the sweep (sweep.c) gives pages back.  Kept apart from both because it
 * is the one place that decides where memory comes from (mmap, mbind,
 * first-touch faults), which allocation and collection each call and neither
 * owns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/internal.h"
#include "gc_internal.h"

/* Slot sizes in bytes including the 8-byte header: 16-byte steps to 256, then
 * four steps per doubling up to GCS_GC_SMALL_MAX (at most 25% waste). */
const uint32_t _gcs_class_bytes[GCS_NCLASSES] = {
    16,   32,   48,   64,   80,   96,   112,  128,  144,  160,  176,  192,
    208,  224,  240,  256,  320,  384,  448,  512,  640,  768,  896,  1024,
    1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192};

/* ---- reservation ---------------------------------------------------------- */

static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Reserves the heap (its pages, mark tables, page table and free map) for
 * heap_limit bytes; every page free.  On failure the caller frees what was
 * reserved with _gcs_heap_release. */
int _gcs_heap_reserve(gcs_collector *gc, size_t heap_limit, gcs_err *err)
{
    gc->npages = (heap_limit + GCS_GC_PAGE_BYTES - 1) >> GCS_PAGE_SHIFT;
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
        gcs_err_set(err, "gc: cannot reserve a %zu-byte heap: %s", heap_limit, strerror(errno));
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
    return 0;
}

void _gcs_heap_release(gcs_collector *gc)
{
    if (gc->reserved)
        munmap(gc->reserved, gc->reserved_bytes);
    if (gc->mark_bytes)
        munmap(gc->mark_bytes, gc->mark_bytes_len);
    if (gc->mark_bits)
        munmap(gc->mark_bits, gc->mark_bits_len);
    free(gc->pages);
    free(gc->page_noscan);
    free(gc->free_map);
}

/* ---- pages and placement ------------------------------------------------ */

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
        ok = mbind(_gcs_page_start(gc, i), n << GCS_PAGE_SHIFT, MPOL_BIND, mask,
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
 * zeroes the page and clears the flag: after it, gcs_gc_node_of and
 * node_live_bytes could name a node the memory is not on.  Per page, since a
 * span can mix dirty and released pages; the others are bound in runs, one
 * mbind each. */
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
int64_t _gcs_pages_find(gcs_collector *gc, size_t n)
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
 * in -- and in the first collection every worker faults at once, and the
 * kernel serializes them (docs/collector.md, "First-touch faults").  So the
 * thread that takes a page for the first
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

void _gcs_pages_take(gcs_collector *gc, size_t i, size_t n)
                     {
                     gcs_assert_internal(n >= 1 && i + n <= gc->npages);
    place_pages(gc, i, n); /* first: it reads `dirty`, cleared below */
    for (size_t k = i; k < i + n; k++) {
        gcs_assert_internal(page_is_free(gc, k));
        page_set_used(gc, k);
        if (!gc->pages[k].marks_resident)
            marks_fault_in(gc, k);
        if (gc->pages[k].dirty) {
            memset(_gcs_page_start(gc, k), 0, GCS_GC_PAGE_BYTES);
            gc->pages[k].dirty = 0;
        }
    }
    if (i + n > gc->high_water)
        gc->high_water = i + n;
    gc->pages_used += n;
}

/* ---- a page for a size class ---------------------------------------------- */

/* Hands thread m the first page of partial list `from` for its list l.  A
 * pointer-free page handed to a list of objects with pointers becomes a
 * scanned page: always safe, the mark then reads its objects' headers and
 * finds no fields (the reverse needs no change: pointer-free objects on a
 * scanned page are read the same way). */
static void take_partial(gcs_collector *gc, gcs_mutator *m, int l, int from)
{
    int64_t pi = gc->partial_head[from];
    gcs_page *pg = &gc->pages[pi];
    /* the sweep lists only small pages with free slots, by their class */
    gcs_assert_internal(pg->kind == GCS_PAGE_SMALL && pg->free_list &&
                        pg->size_class == l % GCS_NCLASSES && from % GCS_NCLASSES == l % GCS_NCLASSES);
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
int _gcs_heap_take_page(gcs_collector *gc, gcs_mutator *m, int l, int last_resort)
                        {
                        gcs_assert_internal(l >= 0 && l < GCS_NLISTS);
    int c = l % GCS_NCLASSES, noscan = l >= GCS_NCLASSES;
    int other = noscan ? c : c + GCS_NCLASSES;
    if (gc->partial_head[l] >= 0) {
        take_partial(gc, m, l, l);
        return 0;
    }
    int64_t pi = _gcs_pages_find(gc, 1);
    if (pi >= 0) {
        /* A page that is not dirty is fresh memory (never used, or released):
         * fault it all in now, after place_pages has bound it.  The bump
         * allocation would touch it all anyway, one fault at a time; what it
         * leaves untouched when a collection comes, the sweep would fault in
         * threading its free list, every sweeper at once (the same contention
         * as marks_fault_in's). */
        int fresh = !gc->pages[pi].dirty;
        _gcs_pages_take(gc, (size_t)pi, 1);
        if (fresh)
            fault_in(_gcs_page_start(gc, (size_t)pi), GCS_GC_PAGE_BYTES);
        gcs_page *pg = &gc->pages[pi];
        pg->kind = GCS_PAGE_SMALL;
        pg->size_class = (uint8_t)c;
        pg->noscan = (uint8_t)noscan;
        gc->page_noscan[pi] = noscan ? (uint8_t)(c + 1) : 0;
        pg->slot_bytes = _gcs_class_bytes[c];
        pg->nslots = GCS_GC_PAGE_BYTES / pg->slot_bytes;
        gcs_assert_internal(pg->nslots >= 1 && pg->slot_bytes % (1u << GCS_GRANULE_SHIFT) == 0);
        pg->free_slots = pg->nslots;
        pg->next_partial = -1;
        pg->free_list = NULL;
        m->alloc[l].bump = _gcs_page_start(gc, (size_t)pi);
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
