/* snapshot_gc.c -- the collector's side of heap snapshots: writing the
 * marked heap between mark and sweep, and building a heap from a snapshot.
 *
 * Writing (world stopped, marks complete, sweep not started) takes three
 * passes over the live objects, all in address order, none of them touching
 * a dead object's memory:
 *   0. walk the page table and the mark table; set one bit per live object
 *      (at its slot's first granule) in a private bitmap, count objects and
 *      pointer fields, and collect the memory-node runs;
 *   1. write the object columns (offsets; sizes, pointer counts and edge
 *      starts from the headers, one pass each);
 *   2. write the pointer fields as ids: the id of an object is its rank in
 *      the bitmap, popcount of the bits before it, with a prefix count per
 *      64-bit word -- 1 bit + 0.5 bit per 16-byte granule (3 MB for a 256 MB
 *      heap), so the lookups stay in cache.
 * Then the roots.  Counts are known before the first byte is written, so the
 * file is written front to back through one 1 MiB buffer. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gc_internal.h"
#include "../formats/snapshot_internal.h"

/* ---- settings ---------------------------------------------------------------- */

int _gcs_snap_setup(gcs_collector *gc, const gcs_gc_options *opts, gcs_err *err)
{
    const char *path = opts->snapshot_path ? opts->snapshot_path : getenv("GCSCALE_GC_SNAPSHOT");
    if (path && strlen(path) >= sizeof gc->snap_pattern) {
        gcs_err_set(err, "gc: snapshot path too long");
        return -1;
    }
    snprintf(gc->snap_pattern, sizeof gc->snap_pattern, "%s", path ? path : "");
    gc->snap_every = opts->snapshot_every;
    const char *env = getenv("GCSCALE_GC_SNAPSHOT_EVERY");
    if (gc->snap_every == 0 && env && *env) {
        long v;
        gcs_err e;
        if (gcs_parse_long(env, 1, 1L << 62, &v, &e) < 0) {
            gcs_err_set(err, "gc: GCSCALE_GC_SNAPSHOT_EVERY: %s", e.msg);
            return -1;
        }
        gc->snap_every = (uint64_t)v;
    }
    if (gc->snap_every == 0)
        gc->snap_every = 1;
    return 0;
}

int gcs_gc_set_snapshot(const char *path, uint64_t every)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || (path && strlen(path) >= sizeof gc->snap_pattern))
        return -1;
    int locked = _gcs_api_lock(gc);
    snprintf(gc->snap_pattern, sizeof gc->snap_pattern, "%s", path ? path : "");
    gc->snap_every = every ? every : 1;
    _gcs_api_unlock(gc, locked);
    return 0;
}

int gcs_gc_snapshot_next(const char *path)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc || !path || !*path || strlen(path) >= sizeof gc->snap_next)
        return -1;
    int locked = _gcs_api_lock(gc);
    snprintf(gc->snap_next, sizeof gc->snap_next, "%s", path);
    _gcs_api_unlock(gc, locked);
    return 0;
}

/* Each call queues a request of its own (gcs_snap_request, on this stack)
 * and returns the result of writing that request's file, so that a request
 * from another thread never replaces ours and another file's write is never
 * taken for ours (docs/snapshot-format.md, "Writing from the collector"). */
int gcs_gc_collect_snapshot(const char *path, gcs_err *err)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc) {
        gcs_err_set(err, "gc: no collector");
        return -1;
    }
    if (!path || !*path || strlen(path) >= sizeof gc->snap_next) {
        gcs_err_set(err, "gc: bad snapshot path");
        return -1;
    }
    if (_gcs_api_refused("gcs_gc_collect_snapshot", err))
        return -1;
    gcs_snap_request req = {.path = path};
    /* The collector holds gc_lock from before it decides whether a snapshot
     * is due until after it has written them, so a request queued here is
     * either served by a collection as a whole or left for the next one. */
    pthread_mutex_lock(&gc->gc_lock);
    gcs_snap_request **tail = &gc->snap_requests;
    while (*tail)
        tail = &(*tail)->next;
    *tail = &req;
    pthread_mutex_unlock(&gc->gc_lock);
    for (;;) {
        /* Runs a collection or joins one under way; either writes every
         * queued request, so this loop normally runs once. */
        int rc = gcs_gc_collect();
        pthread_mutex_lock(&gc->gc_lock);
        int done = req.done;
        if (!done && rc < 0) { /* no collection will come: withdraw the request */
            for (tail = &gc->snap_requests; *tail; tail = &(*tail)->next)
                if (*tail == &req) {
                    *tail = req.next;
                    break;
                }
        }
        pthread_mutex_unlock(&gc->gc_lock);
        if (done) {
            if (req.status < 0)
                gcs_err_set(err, "%s", req.error);
            return req.status < 0 ? -1 : 0;
        }
        if (rc < 0) {
            gcs_err_set(err, "gc: %s: the collection failed", path);
            return -1;
        }
    }
}

int _gcs_snap_due(gcs_collector *gc, uint64_t index)
{
    return gc->snap_next[0] || gc->snap_requests || (gc->snap_pattern[0] && index % gc->snap_every == 0);
}

/* Every "%d" becomes the collection index; everything else is literal. */
static int expand_path(const char *pattern, uint64_t index, char *out, size_t n)
{
    size_t o = 0;
    for (const char *p = pattern; *p; p++) {
        char num[24];
        const char *piece = num;
        size_t len;
        if (p[0] == '%' && p[1] == 'd') {
            len = (size_t)snprintf(num, sizeof num, "%llu", (unsigned long long)index);
            p++;
        } else {
            piece = p;
            len = 1;
        }
        if (o + len >= n)
            return -1;
        memcpy(out + o, piece, len);
        o += len;
    }
    out[o] = 0;
    return 0;
}

/* ---- writing the marked heap ------------------------------------------------------- */

typedef struct heap_index {
    uint64_t *bits;      /* one bit per granule: a live object's slot starts here */
    uint32_t *rank;      /* live objects in the words before */
    size_t nwords;
    uintptr_t base;
    uint64_t limit;      /* bytes covered */
} heap_index;

#define BAD_ID UINT64_MAX

/* Without -mpopcnt, __builtin_popcountll is a libgcc call, a measurable
 * part of a snapshot (docs/snapshot-format.md); this is a handful of inline
 * instructions. */
static inline uint64_t popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

static inline uint64_t id_of(const heap_index *x, uintptr_t obj)
{
    if (!obj)
        return GCS_SNAPSHOT_NULL;
    uint64_t off = (uint64_t)(obj - x->base) - 8; /* slot offset; wraps when below the heap */
    if (off >= x->limit || (off & 15))
        return BAD_ID;
    uint64_t q = off >> 4, word = x->bits[q >> 6], bit = 1ull << (q & 63);
    if (!(word & bit))
        return BAD_ID;
    return x->rank[q >> 6] + popcount64(word & (bit - 1));
}

typedef struct node_runs {
    uint32_t *first;
    uint16_t *node;
    size_t n, cap;
} node_runs;

static int runs_add(node_runs *r, uint32_t first, uint16_t node)
{
    if (r->n && r->node[r->n - 1] == node)
        return 0;
    if (r->n == r->cap) {
        size_t ncap = r->cap ? 2 * r->cap : 64;
        uint32_t *f = realloc(r->first, ncap * sizeof *f);
        if (f)
            r->first = f;
        uint16_t *nd = realloc(r->node, ncap * sizeof *nd);
        if (nd)
            r->node = nd;
        if (!f || !nd)
            return -1;
        r->cap = ncap;
    }
    r->first[r->n] = first;
    r->node[r->n] = node;
    r->n++;
    return 0;
}

static inline int is_marked(const gcs_collector *gc, size_t g, int mode)
{
    if (mode == GCS_GC_MARK_ATOMIC_BITS)
        return (gc->mark_bits[g >> 6] >> (g & 63)) & 1;
    return gc->mark_bytes[g] != 0;
}

static int write_heap(gcs_collector *gc, const gcs_gc_stats *st, void **roots, size_t nroots,
                      const char *path, uint64_t *bytes_out, uint64_t *objects_out, gcs_err *err)
{
    int mode = st->mark_mode, rc = -1;
    size_t hw = gc->high_water;
    heap_index x = {0};
    node_runs runs = {0};
    gcs_snapw w = {0};
    gcs_outfile out = {0};
    int out_open = 0;
    x.base = (uintptr_t)gc->base;
    x.limit = (uint64_t)hw << GCS_PAGE_SHIFT;
    x.nwords = hw * (GCS_GRANULES_PER_PAGE / 64);
    x.bits = calloc(x.nwords ? x.nwords : 1, sizeof *x.bits);
    x.rank = malloc((x.nwords ? x.nwords : 1) * sizeof *x.rank);
    if (!x.bits || !x.rank) {
        gcs_err_set(err, "%s: out of memory for the heap index", path);
        goto done;
    }
    /* Pass 0: bitmap, counts, node runs. */
    uint64_t n = 0, m = 0;
    for (size_t i = 0; i < hw; i++) {
        gcs_page *pg = &gc->pages[i];
        const char *start = gc->base + (i << GCS_PAGE_SHIFT);
        size_t g0 = i * GCS_GRANULES_PER_PAGE;
        uint64_t before = n;
        if (pg->kind == GCS_PAGE_LARGE_HEAD) {
            if (is_marked(gc, g0, mode)) {
                m += GCS_HDR_NPTRS(*(const uint64_t *)start);
                x.bits[g0 >> 6] |= 1;
                n++;
            }
        } else if (pg->kind == GCS_PAGE_SMALL) {
            size_t slot = pg->slot_bytes, gstep = slot >> GCS_GRANULE_SHIFT;
            for (uint32_t s = 0; s < pg->nslots; s++) {
                size_t g = g0 + s * gstep;
                if (!is_marked(gc, g, mode))
                    continue;
                uint64_t hdr = *(const uint64_t *)(start + s * slot);
                if (hdr == 0) {
                    gcs_err_set(err, "%s: marked free slot at heap offset %zu", path, (size_t)s * slot +
                                (i << GCS_PAGE_SHIFT));
                    goto done;
                }
                m += GCS_HDR_NPTRS(hdr);
                x.bits[g >> 6] |= 1ull << (g & 63);
                n++;
            }
        }
        if (n > before) {
            int nd = pg->node;
            uint16_t node = nd >= 0 && nd < gc->nnodes && nd < GCS_SNAPSHOT_MAX_NODES ? (uint16_t)nd
                                                                                     : GCS_SNAPSHOT_NODE_UNKNOWN;
            if (before > GCS_SNAPSHOT_MAX_OBJECTS || runs_add(&runs, (uint32_t)before, node) < 0) {
                gcs_err_set(err, "%s: %s", path, before > GCS_SNAPSHOT_MAX_OBJECTS
                                                     ? "too many live objects for 32-bit ids"
                                                     : "out of memory for node runs");
                goto done;
            }
        }
    }
    if (n > GCS_SNAPSHOT_MAX_OBJECTS) {
        gcs_err_set(err, "%s: %llu live objects: a snapshot holds at most %llu", path,
                    (unsigned long long)n, (unsigned long long)GCS_SNAPSHOT_MAX_OBJECTS);
        goto done;
    }
    uint64_t sum = 0;
    for (size_t k = 0; k < x.nwords; k++) {
        x.rank[k] = (uint32_t)sum;
        sum += popcount64(x.bits[k]);
    }

    if (gcs_outfile_open(&out, path, err) < 0)
        goto done;
    out_open = 1;
    if (_gcs_snapw_init(&w, out.fp) < 0) {
        gcs_err_set(err, "%s: out of memory", path);
        goto done;
    }
    gcs_snapshot_params p;
    gcs_snapshot_params_default(&p);
    p.gc_threads = (uint32_t)st->threads;
    p.mark_mode = (uint32_t)st->mark_mode;
    p.heap_limit = (uint64_t)gc->npages << GCS_PAGE_SHIFT;
    p.page_bytes = GCS_GC_PAGE_BYTES;
    p.numa_policy = (uint32_t)gc->opts.numa_policy;
    p.numa_node = gc->opts.numa_policy == GCS_GC_NUMA_NODE ? gc->opts.numa_node : -1;
    p.node_count = (uint32_t)(gc->nnodes < GCS_SNAPSHOT_MAX_NODES ? gc->nnodes : GCS_SNAPSHOT_MAX_NODES);
    p.collection = st->index;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    p.timestamp_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    p.heap_base = (uint64_t)(uintptr_t)gc->base;
    p.header_bytes = 8;
    p.granule_bytes = 1u << GCS_GRANULE_SHIFT;

    _gcs_snapw_header(&w, n, m, nroots, runs.n);
    _gcs_snapw_params(&w, &p);
    /* Pass 1: the object columns of format version 3 (offsets, sizes,
     * pointer counts, edge starts), one walk over the bitmap each, the last
     * three reading the headers again: the file keeps the arrays a reader
     * uses in place (docs/snapshot-format.md, "Version 3"). */
    for (int col = SNAP3_ADDR; col <= SNAP3_ESTART; col++) {
        uint64_t sum = 0;
        _gcs_snapw_section_begin(&w, col, col == SNAP3_ADDR ? 8 * n : col == SNAP3_ESTART ? 8 * (n + 1) : 4 * n);
        for (size_t k = 0; k < x.nwords; k++) {
            for (uint64_t b = x.bits[k]; b; b &= b - 1) {
                uint64_t off = ((k << 6) + (uint64_t)__builtin_ctzll(b)) << GCS_GRANULE_SHIFT;
                if (col == SNAP3_ADDR) {
                    snap_st64(_gcs_snapw_reserve(&w, 8), off + 8);
                    continue;
                }
                uint64_t hdr = *(const uint64_t *)(gc->base + off);
                if (col == SNAP3_WORDS) {
                    snap_st32(_gcs_snapw_reserve(&w, 4), (uint32_t)GCS_HDR_WORDS(hdr));
                } else if (col == SNAP3_NPTRS) {
                    snap_st32(_gcs_snapw_reserve(&w, 4), (uint32_t)GCS_HDR_NPTRS(hdr));
                } else {
                    snap_st64(_gcs_snapw_reserve(&w, 8), sum);
                    sum += GCS_HDR_NPTRS(hdr);
                }
            }
        }
        if (col == SNAP3_ESTART)
            snap_st64(_gcs_snapw_reserve(&w, 8), sum);
        _gcs_snapw_section_end(&w);
    }
    _gcs_snapw_section_begin(&w, SNAP3_NODES, runs.n * SNAP_RUN_BYTES);
    for (size_t k = 0; k < runs.n; k++) {
        uint8_t *r = _gcs_snapw_reserve(&w, SNAP_RUN_BYTES);
        snap_st32(r, runs.first[k]);
        snap_st16(r + 4, runs.node[k]);
        snap_st16(r + 6, 0);
    }
    _gcs_snapw_section_end(&w);
    /* Pass 2: pointer fields as ids. */
    _gcs_snapw_section_begin(&w, SNAP3_EDGES, m * SNAP_ID_BYTES);
    for (size_t k = 0; k < x.nwords; k++) {
        for (uint64_t b = x.bits[k]; b; b &= b - 1) {
            uint64_t off = ((k << 6) + (uint64_t)__builtin_ctzll(b)) << GCS_GRANULE_SHIFT;
            const uint64_t *slot = (const uint64_t *)(gc->base + off);
            uint32_t np = GCS_HDR_NPTRS(slot[0]);
            const uintptr_t *f = (const uintptr_t *)(slot + 1);
            for (uint32_t j = 0; j < np; j++) {
                uint64_t id = id_of(&x, f[j]);
                if (id == BAD_ID) {
                    gcs_err_set(err, "%s: field %u of the object at heap offset %llu holds %p, which is not "
                                "a live object", path, j, (unsigned long long)(off + 8), (void *)f[j]);
                    goto done;
                }
                _gcs_snapw_u32(&w, (uint32_t)id);
            }
        }
    }
    _gcs_snapw_section_end(&w);
    _gcs_snapw_section_begin(&w, SNAP3_ROOTS, (uint64_t)nroots * SNAP_ID_BYTES);
    for (size_t k = 0; k < nroots; k++) {
        uint64_t id = id_of(&x, (uintptr_t)roots[k]);
        if (id == BAD_ID || id == GCS_SNAPSHOT_NULL) {
            gcs_err_set(err, "%s: root %zu holds %p, which is not a live object", path, k, roots[k]);
            goto done;
        }
        _gcs_snapw_u32(&w, (uint32_t)id);
    }
    _gcs_snapw_section_end(&w);
    _gcs_snapw_no_types(&w); /* the collector knows no types */
    _gcs_snapw_flush(&w);
    if (w.failed) {
        gcs_err_set(err, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
        goto done;
    }
    *bytes_out = _gcs_snapw_offset(&w);
    *objects_out = n;
    out_open = 0;
    if (gcs_outfile_commit(&out, err) < 0)
        goto done;
    rc = 0;
done:
    if (out_open)
        gcs_outfile_abort(&out);
    _gcs_snapw_free(&w);
    free(x.bits);
    free(x.rank);
    free(runs.first);
    free(runs.node);
    return rc;
}

/* One file: expands pattern into path (n bytes) and writes the marked heap. */
static int snap_write(gcs_collector *gc, const gcs_gc_stats *st, void **roots, size_t nroots, const char *pattern,
                      char *path, size_t n, uint64_t *bytes, uint64_t *objects, gcs_err *err)
{
    if (expand_path(pattern, st->index, path, n) < 0) {
        snprintf(path, n, "%s", pattern);
        gcs_err_set(err, "%s: path too long after expanding %%d", pattern);
        return -1;
    }
    if (nroots != st->roots) {
        gcs_err_set(err, "%s: out of memory for the root list", path);
        return -1;
    }
    return write_heap(gc, st, roots, nroots, path, bytes, objects, err);
}

/* The files of this collection, each written from the same marks: the
 * gcs_gc_snapshot_next request, else the periodic file when due (either kind
 * of one-shot request replaces the periodic file for this collection), then
 * every gcs_gc_collect_snapshot request, whose callers get their own file's
 * result.  The statistics describe the first file (path, bytes, objects);
 * their status is -1, with that file's error, once any file failed, and
 * snapshot_ns covers them all. */
int _gcs_snap_take(gcs_collector *gc, gcs_gc_stats *st, void **roots, size_t nroots)
{
    uint64_t t0 = gcs_now_ns();
    int nfiles = 0, failed = 0;
    const char *pattern = gc->snap_next[0] ? gc->snap_next : !gc->snap_requests ? gc->snap_pattern : NULL;
    if (pattern) {
        gcs_err err = {{0}};
        int rc = snap_write(gc, st, roots, nroots, pattern, st->snapshot_path, sizeof st->snapshot_path,
                            &st->snapshot_bytes, &st->snapshot_objects, &err);
        st->snapshot_status = rc == 0 ? 1 : -1;
        snprintf(st->snapshot_error, sizeof st->snapshot_error, "%s", rc == 0 ? "" : err.msg);
        failed |= rc < 0;
        nfiles++;
        gc->snap_next[0] = 0;
    }
    while (gc->snap_requests) {
        gcs_snap_request *r = gc->snap_requests;
        char path[sizeof st->snapshot_path];
        uint64_t bytes = 0, objects = 0;
        gcs_err err = {{0}};
        int rc = snap_write(gc, st, roots, nroots, r->path, path, sizeof path, &bytes, &objects, &err);
        if (nfiles++ == 0) {
            snprintf(st->snapshot_path, sizeof st->snapshot_path, "%s", path);
            st->snapshot_bytes = bytes;
            st->snapshot_objects = objects;
            st->snapshot_status = 1;
        }
        if (rc < 0 && !failed)
            snprintf(st->snapshot_error, sizeof st->snapshot_error, "%s", err.msg);
        if (rc < 0) {
            st->snapshot_status = -1;
            failed = 1;
        }
        r->status = rc == 0 ? 1 : -1;
        snprintf(r->error, sizeof r->error, "%s", rc == 0 ? "" : err.msg);
        r->done = 1;
        gc->snap_requests = r->next; /* the caller may return once gc_lock is free */
    }
    st->snapshot_ns = gcs_now_ns() - t0;
    return failed ? -1 : 0;
}

/* ---- building a heap from a snapshot ------------------------------------------------ */

int gcs_gc_build_snapshot(const gcs_snapshot *g, gcs_gc_snapshot_heap *out, gcs_err *err)
{
    memset(out, 0, sizeof *out);
    if (!_gcs_gc_global) {
        gcs_err_set(err, "gc: build snapshot heap: no collector");
        return -1;
    }
    if (_gcs_api_refused("gcs_gc_build_snapshot", err))
        return -1; /* it allocates */
    gcs_err verr;
    if (gcs_snapshot_validate(g, &verr) < 0) {
        gcs_err_set(err, "gc: build snapshot heap: %s", verr.msg);
        return -1;
    }
    uint64_t n = g->nobjects;
    void **objs = malloc((size_t)(n ? n : 1) * sizeof *objs);
    void **roots = malloc((size_t)(g->nroots ? g->nroots : 1) * sizeof *roots);
    if (!objs || !roots) {
        free(objs);
        free(roots);
        gcs_err_set(err, "gc: build snapshot heap: out of memory for %llu objects", (unsigned long long)n);
        return -1;
    }
    /* Objects are kept alive by this thread's shadow stack while the heap is
     * built (an allocation may collect). */
    uint64_t pushed = 0, bytes = 0;
    int rc = -1;
    for (uint64_t i = 0; i < n; i++) {
        size_t size = 8 * (size_t)g->words[i];
        void *o = g->nptrs[i] ? gcs_gc_alloc(size, g->nptrs[i]) : gcs_gc_alloc_data(size);
        if (!o) {
            gcs_err_set(err, "gc: build snapshot heap: object %llu of %llu (%zu bytes): %s", (unsigned long long)i,
                        (unsigned long long)n, size, gcs_gc_last_error());
            goto done;
        }
        objs[i] = o;
        if (gcs_gc_push_root(&objs[i]) < 0) {
            gcs_err_set(err, "gc: build snapshot heap: %s", gcs_gc_last_error());
            goto done;
        }
        pushed++;
        bytes += size;
    }
    for (uint64_t i = 0; i < n; i++) {
        void **f = objs[i];
        const uint32_t *e = g->edges + g->edge_start[i];
        for (uint32_t k = 0; k < g->nptrs[i]; k++)
            f[k] = e[k] == GCS_SNAPSHOT_NULL ? NULL : objs[e[k]];
    }
    for (uint64_t k = 0; k < g->nroots; k++) {
        roots[k] = objs[g->roots[k]];
        if (gcs_gc_add_root(&roots[k]) < 0) {
            while (k-- > 0)
                gcs_gc_remove_root(&roots[k]);
            gcs_err_set(err, "gc: build snapshot heap: %s", gcs_gc_last_error());
            goto done;
        }
    }
    out->roots = roots;
    out->nroots = (size_t)g->nroots;
    out->objects = n;
    out->bytes = bytes;
    roots = NULL;
    rc = 0;
done:
    gcs_gc_pop_roots((size_t)pushed);
    free(objs);
    free(roots);
    return rc;
}

void gcs_gc_snapshot_heap_release(gcs_gc_snapshot_heap *h)
{
    if (!h || !h->roots)
        return;
    for (size_t k = h->nroots; k-- > 0;)
        gcs_gc_remove_root(&h->roots[k]);
    free(h->roots);
    memset(h, 0, sizeof *h);
}
