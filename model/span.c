/* span.c -- T-infinity of a heap snapshot, the critical path of the mark
 * (heap inspection's "span" part; docs/model.md "T-infinity computation").
 *
 * The node weight is the collector's own, gcs_gc_mark_weight (gc.h), with
 * the non-NULL fields counted, so that the weights sum to the model's T1.
 * Called from inspect.c (_gcs_inspect_span, model/inspect_internal.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Tinf is the longest of the shortest paths: with w(v) the marking weight of
 * object v (gcs_gc_mark_weight, gc.h), d(root) = w(root), d(v) = min over
 * parents u of d(u) + w(v), each sum rounded as it is formed, and Tinf =
 * max d(v).  The walk works with the
 * start times s(v) = min over parents of d(u) (0 for a root) and finds
 * d(v) = s(v) + w(v) when it scans v.  That is the same number: adding w(v)
 * is monotone under rounding, so (min d(u)) + w(v) = min (d(u) + w(v)).  It
 * needs w only of the object being scanned, whose fields are read anyway, so
 * relaxing an edge touches one random word (the child's s), not three.
 *
 * Two passes, both over id-ordered sets where the sets are large:
 *
 *   1. A BFS, level by level: the reachable objects (a bitmap), the depth,
 *      whether every object weighs the same (then Tinf = depth x w, as
 *      before) and whether any object is reached twice; if none is, the
 *      graph is a forest and s along the BFS (kept until the first revisit)
 *      gives Tinf.
 *   2. Otherwise Dial's bucket queue on s.  Every weight is at least wmin > 0,
 *      so with buckets narrower than wmin no object scanned from bucket b can
 *      put a child into bucket b or below: every object in a bucket has its
 *      final s when the bucket's turn comes, and is scanned exactly once.
 *      The buckets are the exact intervals [B_i, B_i+1) of the rounded
 *      B_i = i x q, q = wmin (1 - 2^-20), and the slack covers the rounding:
 *      with u = 2^-53, an object of bucket b has s >= B_b >= b q (1 - u), so
 *      d = s + w rounded >= (b q (1 - u) + wmin)(1 - u), while B_b+1 <=
 *      (b + 1) q (1 + u); the difference is at least wmin (2^-20 - 3u (b +
 *      1) - 3u), positive for b < 2^31 (SPAN_MAX_BUCKET).  Past that bucket,
 *      with weights of 0 and with weight ratios wmax / wmin beyond the
 *      window of SPAN_MAX_SLOTS buckets, a binary heap does the pass
 *      instead; so it does, from the start, if a check that the argument
 *      rules out ever fails.
 *
 * A large level or bucket (SPAN_DENSE_DIV: at least n / 512 objects) is put
 * in id order through a bitmap before it is scanned: the snapshot's arrays
 * are in id (address) order, so its objects' field counts, offsets and fields
 * are then read as a stream instead of at random.  What stays random is each
 * child's s: pass 2 prefetches the s of the children of the object
 * SPAN_AHEAD places on in its bucket, far enough ahead for the lines to
 * arrive while the objects between are scanned (docs/model.md, "2026-11-24:
 * the span's prefetch distance"). */
#define SPAN_DENSE_DIV 512
#define SPAN_MAX_SLOTS 4096              /* bucket window, a power of two */
#define SPAN_MAX_BUCKET (1ull << 31)     /* bucket index bound of the rounding argument */
#define SPAN_SLACK 0x1.0p-20             /* q = wmin (1 - SPAN_SLACK) */
#define SPAN_AHEAD 8

typedef struct idlist {
    uint32_t *v;
    size_t n, cap;
} idlist;

static int idlist_grow(idlist *l)
{
    size_t cap = l->cap ? 2 * l->cap : 1024;
    uint32_t *grown = realloc(l->v, cap * sizeof *grown);
    if (!grown)
        return -1;
    l->v = grown;
    l->cap = cap;
    return 0;
}

static inline int idlist_push(idlist *l, uint32_t v)
{
    if (l->n == l->cap && idlist_grow(l) < 0)
        return -1;
    l->v[l->n++] = v;
    return 0;
}

static inline int bit_get(const uint64_t *b, uint32_t v)
{
    return (int)(b[v >> 6] >> (v & 63)) & 1;
}

static inline void bit_set(uint64_t *b, uint32_t v)
{
    b[v >> 6] |= 1ull << (v & 63);
}

static inline void bit_clear(uint64_t *b, uint32_t v)
{
    b[v >> 6] &= ~(1ull << (v & 63));
}

/* Sorts a large list by id and drops its duplicates, through scratch (a
 * bitmap of nwords words, all 0, left all 0).  A small one is left as is. */
/* The ids set in scratch's words [lo, hi), in order, into out (the words
 * are cleared); returns how many. */
static size_t bitmap_gather(uint64_t *scratch, size_t lo, size_t hi, uint32_t *out)
{
    size_t n = 0;
    for (size_t w = lo; w < hi; w++) {
        uint64_t bits = scratch[w];
        if (!bits)
            continue;
        scratch[w] = 0;
        while (bits) {
            out[n++] = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
            bits &= bits - 1;
        }
    }
    return n;
}

static void idlist_order(idlist *l, uint64_t *scratch, size_t nwords, size_t dense_min)
{
    if (l->n < dense_min)
        return;
    for (size_t i = 0; i < l->n; i++)
        bit_set(scratch, l->v[i]);
    l->n = bitmap_gather(scratch, 0, nwords, l->v);
}

/* d(u) = s(u) + w(u); w needs u's count of non-NULL fields. */
static inline double span_finish(const gcs_snapshot *g, uint32_t u, double cobj, double cptr, double su)
{
    const uint32_t *e = g->edges + g->edge_start[u];
    uint32_t np = g->nptrs[u], k = 0;
    for (uint32_t f = 0; f < np; f++)
        k += e[f] != GCS_SNAPSHOT_NULL;
    return su + gcs_gc_mark_weight(cobj, cptr, k, np);
}

typedef struct span_bfs {
    uint64_t reachable, depth, revisits, chunked_arrays;
    uint32_t emin, emax;
    double wmin, wmax;
    double forest_tinf;   /* Tinf if revisits == 0 */
} span_bfs;

/* Pass 1's level on several threads (OpenMP): each thread scans a slice of
 * the level into its own list of the next level, so the lists, not one
 * shared list, are the next level; level_gather makes them one list again,
 * in id order through the bitmap when the level is large (idlist_order's
 * reason).  A child is claimed with an atomic fetch-or on its live bit, so
 * that exactly one thread reaches it first: the counts (reachable, revisits)
 * and the forest's Tinf (a maximum) are those of one thread's walk, whatever
 * the order. */
typedef struct level_acc {
    idlist next;
    uint64_t revisits, chunked_arrays;
    uint32_t emin, emax;
    double wmin, wmax, forest_tinf;
} level_acc;

#define SPAN_MAX_THREADS 64
/* levels smaller than this are scanned on the calling thread */
#define SPAN_PAR_MIN 4096

static int span_threads(void)
{
#ifdef _OPENMP
    int t = omp_get_max_threads();
    return t < SPAN_MAX_THREADS ? t : SPAN_MAX_THREADS;
#else
    return 1;
#endif
}

/* Scans cur.v[lo, hi) into a; forest: keep s along the BFS (no revisit yet);
 * shared: claim children atomically (other threads scan the same level). */
static inline int level_scan(const gcs_snapshot *g, double cobj, double cptr, const idlist *cur, size_t lo, size_t hi,
                      uint64_t *live, double *s, int forest, int shared, level_acc *a)
{
    for (size_t i = lo; i < hi; i++) {
        uint32_t u = cur->v[i];
        const uint32_t *e = g->edges + g->edge_start[u];
        uint32_t np = g->nptrs[u], k = 0;
        double du = 0;
        if (forest) {
            du = span_finish(g, u, cobj, cptr, s[u]);
            a->forest_tinf = du > a->forest_tinf ? du : a->forest_tinf;
        }
        for (uint32_t f = 0; f < np; f++) {
            uint32_t v = e[f];
            if (v == GCS_SNAPSHOT_NULL)
                continue;
            k++;
            uint64_t bit = 1ull << (v & 63);
            if (__atomic_load_n(&live[v >> 6], __ATOMIC_RELAXED) & bit) {
                a->revisits++;
                continue;
            }
            if (shared) {
                if (__atomic_fetch_or(&live[v >> 6], bit, __ATOMIC_RELAXED) & bit) {
                    a->revisits++;
                    continue;
                }
            } else {
                live[v >> 6] |= bit;
            }
            if (forest)
                s[v] = du;
            if (idlist_push(&a->next, v) < 0)
                return -1;
        }
        a->emin = k < a->emin ? k : a->emin;
        a->emax = k > a->emax ? k : a->emax;
        a->chunked_arrays += np > GCS_GC_CHUNK_FIELDS;
        double w = gcs_gc_mark_weight(cobj, cptr, k, np);
        a->wmin = w < a->wmin ? w : a->wmin;
        a->wmax = w > a->wmax ? w : a->wmax;
    }
    return 0;
}

/* The threads' lists acc[0..nt) into one list out (emptied first): in id
 * order through scratch (all 0, left all 0) when large, else one after the
 * other.  -1 when out of memory. */
static int level_gather(level_acc *acc, int nt, idlist *out, uint64_t *scratch, size_t nwords,
                        size_t dense_min)
{
    size_t total = 0;
    for (int t = 0; t < nt; t++)
        total += acc[t].next.n;
    out->n = 0;
    while (out->cap < total)
        if (idlist_grow(out) < 0)
            return -1;
    if (total < dense_min) {
        for (int t = 0; t < nt; t++) {
            if (acc[t].next.n == 0) /* its list may never have been allocated */
                continue;
            memcpy(out->v + out->n, acc[t].next.v, acc[t].next.n * sizeof *out->v);
            out->n += acc[t].next.n;
        }
        idlist_order(out, scratch, nwords, dense_min);
        return 0;
    }
    /* an id is in one list only (its live bit was claimed once) */
    size_t part[SPAN_MAX_THREADS + 1] = {0};
#pragma omp parallel num_threads(nt)
    {
        int t = 0, n = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        n = omp_get_num_threads();
#endif
        for (int k = t; k < nt; k += n)
            for (size_t i = 0; i < acc[k].next.n; i++) {
                uint32_t v = acc[k].next.v[i];
                __atomic_fetch_or(&scratch[v >> 6], 1ull << (v & 63), __ATOMIC_RELAXED);
            }
#pragma omp barrier
        size_t lo = nwords * (size_t)t / (size_t)n, hi = nwords * (size_t)(t + 1) / (size_t)n, c = 0;
        for (size_t w = lo; w < hi; w++)
            c += (size_t)__builtin_popcountll(scratch[w]);
        part[t + 1] = c;
#pragma omp barrier
#pragma omp single
        for (int k = 1; k <= n; k++)
            part[k] += part[k - 1];
        bitmap_gather(scratch, lo, hi, out->v + part[t]);
    }
    out->n = total;
    return 0;
}

/* Pass 1.  live: all 0 on entry; the reachable objects on return.  As long
 * as no object has been reached twice the graph may be a forest, whose only
 * paths are those of the BFS: s (as in pass 2) is then kept along them, and
 * if it stays a forest Tinf is known without pass 2 (a list, a tree).  A
 * graph that is not stops paying for it after the level of its first
 * revisit.  Large levels are scanned on OpenMP's threads (level_scan). */
static void acc_reset(level_acc *a)
{
    a->next.n = 0;
    a->revisits = a->chunked_arrays = 0;
    a->emin = UINT32_MAX;
    a->emax = 0;
    a->wmin = INFINITY;
    a->wmax = a->forest_tinf = 0;
}

static void acc_merge(span_bfs *b, const level_acc *a)
{
    b->revisits += a->revisits;
    b->chunked_arrays += a->chunked_arrays;
    b->emin = a->emin < b->emin ? a->emin : b->emin;
    b->emax = a->emax > b->emax ? a->emax : b->emax;
    b->wmin = a->wmin < b->wmin ? a->wmin : b->wmin;
    b->wmax = a->wmax > b->wmax ? a->wmax : b->wmax;
    b->forest_tinf = a->forest_tinf > b->forest_tinf ? a->forest_tinf : b->forest_tinf;
}

static int span_levels(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *scratch,
                       size_t nwords, size_t dense_min, double *s, span_bfs *b)
{
    idlist cur = {0};
    int nt = span_threads(), rc = -1;
    /* acc[0] also gathers the small levels, which are scanned on this thread
     * one after the other (its counts then run on across levels: sums,
     * minima and maxima); acc[1..] only the large levels' slices */
    level_acc acc[SPAN_MAX_THREADS], seq;
    memset(acc, 0, sizeof acc);
    memset(&seq, 0, sizeof seq);
    acc_reset(&seq);
    memset(b, 0, sizeof *b);
    b->emin = UINT32_MAX;
    b->wmin = INFINITY;
    b->wmax = 0;
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (!bit_get(live, v)) {
            bit_set(live, v);
            s[v] = 0;
            if (idlist_push(&cur, v) < 0)
                goto done;
        }
    }
    idlist_order(&cur, scratch, nwords, dense_min);
    while (cur.n > 0) {
        b->depth++;
        b->reachable += cur.n;
        int forest = b->revisits + seq.revisits == 0;
        if (nt == 1 || cur.n < SPAN_PAR_MIN) {
            /* off OpenMP's runtime altogether: entering a parallel region
             * costs about a microsecond even on one thread, and a list has
             * one level per object */
            seq.next.n = 0;
            if (level_scan(g, cobj, cptr, &cur, 0, cur.n, live, s, forest, 0, &seq) < 0)
                goto done;
            idlist tmp = cur;
            cur = seq.next;
            seq.next = tmp;
            idlist_order(&cur, scratch, nwords, dense_min);
            continue;
        }
        int failed = 0;
        for (int t = 0; t < nt; t++)
            acc_reset(&acc[t]);
#pragma omp parallel for schedule(static, 1) num_threads(nt) reduction(| : failed)
        for (int t = 0; t < nt; t++)
            failed |= level_scan(g, cobj, cptr, &cur, cur.n * (size_t)t / (size_t)nt,
                                 cur.n * (size_t)(t + 1) / (size_t)nt, live, s, forest, 1, &acc[t]) < 0;
        if (failed)
            goto done;
        for (int t = 0; t < nt; t++)
            acc_merge(b, &acc[t]);
        if (level_gather(acc, nt, &cur, scratch, nwords, dense_min) < 0)
            goto done;
    }
    acc_merge(b, &seq);
    rc = 0;
done:
    free(cur.v);
    free(seq.next.v);
    for (int t = 0; t < SPAN_MAX_THREADS; t++)
        free(acc[t].next.v);
    return rc;
}

/* Lowers child v's start time to du if that is lower.  s[v] means something
 * only once v is in reached: s is never filled with +inf, so its pages are
 * first touched by these writes, and the first lowering of each object does
 * not wait for s[v] to be read.  1 when lowered. */
static inline int span_lower(double *s, uint64_t *reached, uint32_t v, double du)
{
    if (bit_get(reached, v)) {
        if (!(du < s[v]))
            return 0;
    } else {
        bit_set(reached, v);
    }
    s[v] = du;
    return 1;
}

/* Pass 2 with a binary heap, the plain lazy Dijkstra: an entry whose key is
 * no longer its object's s is stale.  reached: all 0.  *longest = Tinf. */
static int span_heap(const gcs_snapshot *g, double cobj, double cptr, double *s, uint64_t *reached,
                     double *longest)
{
    gcs_minheap hp = {0};
    int rc = -1;
    double top = 0;
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (span_lower(s, reached, v, 0) && gcs_minheap_push(&hp, 0, v) < 0)
            goto done;
    }
    while (hp.n > 0) {
        gcs_minheap_entry it = gcs_minheap_pop(&hp);
        uint32_t u = (uint32_t)it.item;
        if (it.key > s[u])
            continue;
        double du = span_finish(g, u, cobj, cptr, s[u]);
        if (du > top)
            top = du;
        const uint32_t *e = g->edges + g->edge_start[u];
        for (uint32_t f = 0, np = g->nptrs[u]; f < np; f++) {
            uint32_t v = e[f];
            if (v == GCS_SNAPSHOT_NULL || !span_lower(s, reached, v, du))
                continue;
            if (gcs_minheap_push(&hp, du, v) < 0)
                goto done;
        }
    }
    *longest = top;
    rc = 0;
done:
    gcs_minheap_free(&hp);
    return rc;
}

/* Pass 2 with Dial's buckets (see above).  live: the reachable objects
 * (cleared as they are scanned); reached: all 0; q the bucket width; nslots
 * a power of two >= 64 and > wmax / q + 2.  Returns 0, -1 when out of
 * memory, 1 when the buckets cannot be used (live, reached and s are then in
 * an unspecified state). */
static int span_buckets(const gcs_snapshot *g, double cobj, double cptr, double q, size_t nslots, double *s,
                        uint64_t *live, uint64_t *reached, uint64_t *scratch, size_t nwords, size_t dense_min,
                        double *longest)
{
    int rc = -1;
    idlist *slot = calloc(nslots, sizeof *slot);
    size_t owords = (nslots + 63) / 64;
    uint64_t *occupied = calloc(owords, sizeof *occupied); /* slots with entries */
    if (!slot || !occupied)
        goto done;
    size_t mask = nslots - 1, pending = 0;
    double top = 0;
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (span_lower(s, reached, v, 0)) {
            if (idlist_push(&slot[0], v) < 0)
                goto done;
            pending++;
        }
    }
    if (pending)
        occupied[0] |= 1;
    uint64_t b = 0; /* the bucket being scanned: [b q, (b + 1) q), both rounded */
    while (pending > 0) {
        /* the next bucket with entries: within the window by construction */
        size_t at = (size_t)(b & mask);
        while (!(occupied[at >> 6] >> (at & 63) & 1)) {
            uint64_t rest = occupied[at >> 6] >> (at & 63);
            size_t skip = rest ? (size_t)__builtin_ctzll(rest) : 64 - (at & 63);
            b += skip;
            at = (size_t)(b & mask);
        }
        occupied[at >> 6] &= ~(1ull << (at & 63));
        idlist *l = &slot[at];
        gcs_assert_internal(l->n > 0 && l->n <= pending); /* an occupied slot's entries are pending */
        pending -= l->n;
        idlist_order(l, scratch, nwords, dense_min);
        double hi = (double)(b + 1) * q; /* every child lands at or above it */
        for (size_t i = 0; i < l->n; i++) {
            uint32_t u = l->v[i];
            if (i + SPAN_AHEAD < l->n) {
                /* the s lines of the children of the object SPAN_AHEAD on
                 * come in while this one is scanned */
                uint32_t a = l->v[i + SPAN_AHEAD];
                const uint32_t *ea = g->edges + g->edge_start[a];
                for (uint32_t f = 0, na = g->nptrs[a]; f < na; f++)
                    if (ea[f] != GCS_SNAPSHOT_NULL)
                        __builtin_prefetch(&s[ea[f]], 1);
            }
            if (!bit_get(live, u))
                continue; /* scanned from an earlier bucket, or a duplicate */
            bit_clear(live, u);
            double du = span_finish(g, u, cobj, cptr, s[u]);
            if (du > top)
                top = du;
            if (du < hi) {
                rc = 1; /* impossible by the rounding argument; do not trust the buckets */
                goto done;
            }
            /* du's bucket: an estimate, corrected against the rounded bounds */
            double est = du / q;
            if (!(est < (double)(SPAN_MAX_BUCKET - 2))) {
                rc = 1;
                goto done;
            }
            uint64_t j = (uint64_t)est;
            while (j > b + 1 && (double)j * q > du)
                j--;
            while ((double)(j + 1) * q <= du)
                j++;
            if (j - b >= nslots) {
                rc = 1;
                goto done;
            }
            size_t to = (size_t)(j & mask);
            const uint32_t *e = g->edges + g->edge_start[u];
            for (uint32_t f = 0, np = g->nptrs[u]; f < np; f++) {
                uint32_t v = e[f];
                if (v == GCS_SNAPSHOT_NULL || !bit_get(live, v) || !span_lower(s, reached, v, du))
                    continue;
                if (idlist_push(&slot[to], v) < 0)
                    goto done;
                pending++;
                occupied[to >> 6] |= 1ull << (to & 63);
            }
        }
        l->n = 0;
        b++;
    }
    *longest = top;
    rc = 0;
done:
    if (slot)
        for (size_t i = 0; i < nslots; i++)
            free(slot[i].v);
    free(slot);
    free(occupied);
    return rc;
}

int _gcs_inspect_span(const gcs_snapshot *g, double cobj, double cptr, gcs_inspect_result *out, gcs_err *err)
{
    uint64_t n = g->nobjects;
    size_t nwords = (size_t)((n + 63) / 64), wbytes = (nwords ? nwords : 1) * sizeof(uint64_t);
    size_t dense_min = (size_t)(n / SPAN_DENSE_DIV) + 64;
    int rc = -1;
    uint64_t *live = calloc(1, wbytes), *scratch = calloc(1, wbytes), *reached = NULL;
    /* _gcs_inspect_big_alloc touches nothing: the pages a walk does not use cost nothing */
    double *s = _gcs_inspect_big_alloc((n ? n : 1) * sizeof *s);
    if (!live || !scratch || !s)
        goto oom;
    span_bfs b;
    if (span_levels(g, cobj, cptr, live, scratch, nwords, dense_min, s, &b) < 0)
        goto oom;
    /* each object enters a level once (the bitmap), and a level is at least one object deep */
    gcs_assert_internal(b.reachable <= n && b.depth <= b.reachable);
    out->reachable = b.reachable;
    out->depth = b.depth;
    out->span_walked = 1;
    if (b.reachable == 0) {
        out->heap.tinf_ns = 0;
        out->span_method = "bfs-levels";
    } else if (b.emin == b.emax && b.chunked_arrays == 0) {
        /* every object weighs the same: the BFS depth is exact */
        out->heap.tinf_ns = (double)b.depth * (cobj + cptr * b.emin);
        out->span_method = "bfs-levels";
    } else if (b.revisits == 0) {
        /* a forest: one path to each object, followed by the BFS */
        out->heap.tinf_ns = b.forest_tinf;
        out->span_method = "tree";
    } else {
        out->span_method = "dijkstra";
        reached = calloc(1, wbytes);
        if (!reached)
            goto oom;
        double longest = 0, ratio = b.wmax / b.wmin;
        int brc = 1;
        if (b.wmin > 0 && isfinite(ratio) && ratio < SPAN_MAX_SLOTS - 3) {
            double q = b.wmin - b.wmin * SPAN_SLACK;
            size_t nslots = 64; /* whole words of the occupancy bitmap */
            while ((double)nslots < ratio + 3)
                nslots *= 2;
            brc = span_buckets(g, cobj, cptr, q, nslots, s, live, reached, scratch, nwords, dense_min,
                               &longest);
            if (brc < 0)
                goto oom;
            if (brc == 1) /* start again */
                memset(reached, 0, wbytes);
        }
        if (brc == 1 && span_heap(g, cobj, cptr, s, reached, &longest) < 0)
            goto oom;
        out->heap.tinf_ns = longest;
    }
    /* the critical path holds at least one object, a root (with costs >= 0,
     * which the profile's loader checks) */
    gcs_assert_internal(b.reachable == 0 || !(b.wmin >= 0) || out->heap.tinf_ns >= b.wmin);
    rc = 0;
    goto done;
oom:
    gcs_err_set(err, "inspect: out of memory for the span of %llu objects", (unsigned long long)n);
done:
    free(live);
    free(scratch);
    free(reached);
    free(s);
    return rc;
}
