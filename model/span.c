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

/* Bits set in x, written out: without -mpopcnt __builtin_popcountll is a
 * call into libgcc. */
static inline uint64_t pop64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (x * 0x0101010101010101ull) >> 56;
}

/* The non-NULL fields among e[0, np). */
static inline uint32_t nonnull_fields(const uint32_t *e, uint32_t np)
{
    uint32_t k = 0;
    for (uint32_t f = 0; f < np; f++)
        k += e[f] != GCS_SNAPSHOT_NULL;
    return k;
}

/* d(u) = s(u) + w(u); w needs u's count of non-NULL fields. */
static inline double span_finish(const gcs_snapshot *g, uint32_t u, double cobj, double cptr, double su)
{
    uint32_t np = g->nptrs[u];
    return su + gcs_gc_mark_weight(cobj, cptr, nonnull_fields(g->edges + g->edge_start[u], np), np);
}

typedef struct span_bfs {
    uint64_t reachable, depth, revisits, chunked_arrays;
    uint32_t emin, emax;
    double wmin, wmax;
    double forest_tinf;   /* Tinf if revisits == 0 */
} span_bfs;

/* Pass 1 keeps a small level as a list of ids, scanned on the calling
 * thread (level_scan), and a large one (at least the larger of n / 512 and
 * SPAN_PAR_MIN objects) as a bitmap over the ids, scanned on OpenMP's
 * threads (bitmap_scan): the bitmap gives the level in id order for free
 * (idlist_order's reason), and each thread marks the children it reaches in
 * a private bitmap of its own, so that no child is claimed with an atomic
 * operation (a locked `or` per edge cost about as much as the rest of the
 * scan).  The private bitmaps are then merged word by word (bitmap_merge):
 * their union, less what was live before, is the next level, and a child
 * reached by more than one thread counts its extra arrivals as revisits, so
 * the counts (reachable, revisits) and the forest's Tinf (a maximum) are
 * those of the one-thread walk, whatever the threads. */
typedef struct level_acc {
    idlist next;
    uint64_t revisits, chunked_arrays;
    uint32_t emin, emax;
    double wmin, wmax, forest_tinf;
} level_acc;

#define SPAN_MAX_THREADS 64
/* levels smaller than this are lists, scanned on the calling thread */
#define SPAN_PAR_MIN 4096
/* bitmap levels smaller than this are scanned on the calling thread too: a
 * level on OpenMP's threads costs two barriers, which on a host whose CPUs
 * are shared (the development VM's 2 vCPUs with other jobs) wait for a
 * descheduled thread for milliseconds; a heap of 131 levels of a few
 * thousand objects (cube) took 200 ms instead of 15, and bh's 270 000
 * objects 90 instead of 33 (docs/model.md, "Cost") */
#define SPAN_PAR_LEVEL (1u << 18)
/* words of a bitmap level handed to a thread at a time */
#define SPAN_WORDS_PER_TASK 512

static int span_threads(void)
{
#ifdef _OPENMP
    int t = omp_get_max_threads();
    return t < SPAN_MAX_THREADS ? t : SPAN_MAX_THREADS;
#else
    return 1;
#endif
}

/* Object u's weight into a's ranges; k its non-NULL fields, np its fields. */
static inline void acc_weight(level_acc *a, double cobj, double cptr, uint32_t k, uint32_t np)
{
    a->emin = k < a->emin ? k : a->emin;
    a->emax = k > a->emax ? k : a->emax;
    a->chunked_arrays += np > GCS_GC_CHUNK_FIELDS;
    double w = gcs_gc_mark_weight(cobj, cptr, k, np);
    a->wmin = w < a->wmin ? w : a->wmin;
    a->wmax = w > a->wmax ? w : a->wmax;
}

/* Scans cur.v[lo, hi) into a (its next list); forest: keep s along the BFS
 * (no revisit yet). */
static inline int level_scan(const gcs_snapshot *g, double cobj, double cptr, const idlist *cur, size_t lo, size_t hi,
                             uint64_t *live, double *s, int forest, level_acc *a)
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
            if (live[v >> 6] & bit) {
                a->revisits++;
                continue;
            }
            live[v >> 6] |= bit;
            if (forest)
                s[v] = du;
            if (idlist_push(&a->next, v) < 0)
                return -1;
        }
        acc_weight(a, cobj, cptr, k, np);
    }
    return 0;
}

/* The objects of a bitmap level in front's words [wlo, whi), scanned into a:
 * children not live before this level go into priv, this thread's private
 * bitmap; live is only read while the level is scanned. */
static void bitmap_scan(const gcs_snapshot *g, double cobj, double cptr, const uint64_t *front, size_t wlo,
                        size_t whi, const uint64_t *live, uint64_t *priv, double *s, int forest, level_acc *a)
{
    for (size_t w = wlo; w < whi; w++) {
        for (uint64_t bits = front[w]; bits; bits &= bits - 1) {
            uint32_t u = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
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
                if ((live[v >> 6] | priv[v >> 6]) & bit) {
                    a->revisits++;
                    continue;
                }
                priv[v >> 6] |= bit;
                /* in a forest a child has one parent, so one thread writes
                 * it; where two do, the graph is no forest and s is not
                 * used (the atomic store only keeps that well defined) */
                if (forest)
                    __atomic_store(&s[v], &du, __ATOMIC_RELAXED);
            }
            acc_weight(a, cobj, cptr, k, np);
        }
    }
}

/* After a bitmap level: front's words [wlo, whi) become the next level, the
 * union of the threads' private bitmaps (cleared) less nothing (a private
 * bit is never live); live gains them.  Returns the next level's size; *dup
 * gains the arrivals of a child beyond the first across threads. */
static uint64_t bitmap_merge(uint64_t *front, uint64_t *live, uint64_t *const *priv, int nt, size_t wlo, size_t whi,
                             uint64_t *dup)
{
    uint64_t count = 0, extra = 0;
    for (size_t w = wlo; w < whi; w++) {
        uint64_t any = 0;
        for (int t = 0; t < nt; t++) {
            uint64_t p = priv[t][w];
            if (p) {
                if (__builtin_expect((any & p) != 0, 0))
                    extra += pop64(any & p); /* reached by this thread and an earlier one */
                any |= p;
                priv[t][w] = 0;
            }
        }
        count += any ? pop64(any) : 0;
        front[w] = any;
        live[w] |= any;
    }
    *dup += extra;
    return count;
}

/* Pass 1.  live: all 0 on entry; the reachable objects on return.  As long
 * as no object has been reached twice the graph may be a forest, whose only
 * paths are those of the BFS: s (as in pass 2) is then kept along them, and
 * if it stays a forest Tinf is known without pass 2 (a list, a tree).  A
 * graph that is not stops paying for it after the level of its first
 * revisit.  Large levels are bitmaps scanned on OpenMP's threads (above). */
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

/* One bitmap level (front, size given) on nt threads; front becomes the next
 * level.  Returns the next level's size. */
static uint64_t bitmap_level(const gcs_snapshot *g, double cobj, double cptr, uint64_t *front, uint64_t *live,
                             uint64_t *const *priv, int nt, size_t nwords, double *s, int forest, span_bfs *b)
{
    level_acc acc[SPAN_MAX_THREADS];
    uint64_t next = 0, dup = 0;
    size_t ntasks = (nwords + SPAN_WORDS_PER_TASK - 1) / SPAN_WORDS_PER_TASK;
    for (int t = 0; t < nt; t++) {
        memset(&acc[t], 0, sizeof acc[t]);
        acc_reset(&acc[t]);
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
#pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < ntasks; k++) {
            size_t hi = (k + 1) * SPAN_WORDS_PER_TASK;
            bitmap_scan(g, cobj, cptr, front, k * SPAN_WORDS_PER_TASK, hi < nwords ? hi : nwords, live, priv[t], s,
                        forest, &acc[t]);
        }
        /* (the implied barrier: every private bitmap is complete) */
#pragma omp for schedule(static) reduction(+ : next, dup)
        for (size_t k = 0; k < ntasks; k++) {
            size_t hi = (k + 1) * SPAN_WORDS_PER_TASK;
            next += bitmap_merge(front, live, priv, nt, k * SPAN_WORDS_PER_TASK, hi < nwords ? hi : nwords, &dup);
        }
    }
    for (int t = 0; t < nt; t++)
        acc_merge(b, &acc[t]);
    b->revisits += dup;
    return next;
}

static int span_levels(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *scratch,
                       size_t nwords, size_t dense_min, double *s, span_bfs *b)
{
    idlist cur = {0};
    int nt = span_threads(), rc = -1;
    /* seq gathers the list levels, scanned on this thread one after the
     * other (its counts run on across levels: sums, minima, maxima) */
    level_acc seq;
    memset(&seq, 0, sizeof seq);
    acc_reset(&seq);
    memset(b, 0, sizeof *b);
    b->emin = UINT32_MAX;
    b->wmin = INFINITY;
    b->wmax = 0;
    size_t big = dense_min > SPAN_PAR_MIN ? dense_min : SPAN_PAR_MIN;
    uint64_t *priv[SPAN_MAX_THREADS] = {0};
    uint64_t *front = NULL;
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
        if (cur.n >= big) {
            /* the bitmap levels, until one is small again: front is the
             * level (its bits are live already), scratch is all 0 */
            if (!front) {
                front = scratch; /* idlist_order leaves scratch all 0: it is free */
                for (int t = 0; t < nt; t++)
                    if (!(priv[t] = calloc(nwords ? nwords : 1, sizeof *priv[t])))
                        goto done;
            }
            for (size_t i = 0; i < cur.n; i++)
                bit_set(front, cur.v[i]);
            uint64_t count = cur.n;
            while (count >= big) {
                b->depth++;
                b->reachable += count;
                int forest = b->revisits + seq.revisits == 0;
                count = bitmap_level(g, cobj, cptr, front, live, priv, count >= SPAN_PAR_LEVEL ? nt : 1, nwords, s,
                                     forest, b);
            }
            /* back to a list (in id order), front all 0 again */
            cur.n = 0;
            while (cur.cap < count)
                if (idlist_grow(&cur) < 0)
                    goto done;
            cur.n = bitmap_gather(front, 0, nwords, cur.v);
            continue;
        }
        b->depth++;
        b->reachable += cur.n;
        int forest = b->revisits + seq.revisits == 0;
        seq.next.n = 0;
        if (level_scan(g, cobj, cptr, &cur, 0, cur.n, live, s, forest, &seq) < 0)
            goto done;
        idlist tmp = cur;
        cur = seq.next;
        seq.next = tmp;
        idlist_order(&cur, scratch, nwords, dense_min);
    }
    acc_merge(b, &seq);
    rc = 0;
done:
    free(cur.v);
    free(seq.next.v);
    for (int t = 0; t < SPAN_MAX_THREADS; t++)
        free(priv[t]);
    return rc;
}

/* ---- the forest's walk ------------------------------------------------------
 * Most heaps worth a fast prediction are trees or lists, or are found not to
 * be forests within a few objects.  A forest's Tinf needs no BFS: d(v) =
 * d(parent) + w(v) along the one path to v, in any order.  So pass 1 first
 * walks depth first, children pushed last to first, which on a heap laid
 * out in preorder (what a program that builds a tree or a list top down
 * gets) reads the snapshot's arrays front to back, where the BFS visits a
 * tree's levels with strides of up to half the heap, one host miss per
 * array per object.  The first object reached a second time (or a root
 * reached from another) ends it: the graph is no forest, and the BFS and
 * Dijkstra below do the work, from a clean bitmap.  On OpenMP's threads the
 * walk starts with a BFS of a few levels on this thread, until the level
 * holds SPAN_DFS_SPLIT subtrees per thread (or SPAN_DFS_PREFIX levels),
 * and the threads then walk whole subtrees, each marking what it reaches in
 * a private bitmap (no atomic operations); a bit set in two of them is an
 * object reached twice.  Results: the BFS's, bit for bit (d along the same
 * paths; depth = the longest path; counts and ranges are sums, minima and
 * maxima). */
#define SPAN_DFS_SPLIT 64
#define SPAN_DFS_PREFIX 64

typedef struct dfs_entry {
    uint32_t v, depth;  /* depth: level in the BFS's numbering (roots 1) */
    double s;           /* start time: the parent's d */
} dfs_entry;

typedef struct dfs_list {
    dfs_entry *e;
    size_t n, cap;
} dfs_list;

static inline int dfs_push(dfs_list *l, uint32_t v, uint32_t depth, double s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        dfs_entry *e = realloc(l->e, cap * sizeof *e);
        if (!e)
            return -1;
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n++] = (dfs_entry){v, depth, s};
    return 0;
}

typedef struct dfs_acc {
    level_acc w;        /* weights, chunked arrays, the forest's Tinf */
    uint64_t reached, depth;
} dfs_acc;

/* Object u (start time s) scanned: its weight into a; its children,
 * unless reached before (then 1: no forest), claimed in mine and handed to
 * emit(child, d(u)).  seen: the objects claimed before this phase (read
 * only), mine: this walker's claims (may be seen itself). */
#define DFS_SCAN(g, cobj, cptr, u, s, seen, mine, a, EMIT)                                                        \
    do {                                                                                                           \
        const uint32_t *e_ = (g)->edges + (g)->edge_start[u];                                                     \
        uint32_t np_ = (g)->nptrs[u], k_ = nonnull_fields(e_, np_);                                                \
        double du_ = (s) + gcs_gc_mark_weight(cobj, cptr, k_, np_);                                                \
        (a)->w.forest_tinf = du_ > (a)->w.forest_tinf ? du_ : (a)->w.forest_tinf;                                  \
        acc_weight(&(a)->w, cobj, cptr, k_, np_);                                                                  \
        for (uint32_t f_ = np_; f_ > 0;) {                                                                         \
            uint32_t c_ = e_[--f_];                                                                                \
            if (c_ == GCS_SNAPSHOT_NULL)                                                                           \
                continue;                                                                                          \
            uint64_t bit_ = 1ull << (c_ & 63);                                                                     \
            if (((seen)[c_ >> 6] | (mine)[c_ >> 6]) & bit_)                                                        \
                return 1;                                                                                          \
            (mine)[c_ >> 6] |= bit_;                                                                               \
            EMIT(c_, du_);                                                                                         \
        }                                                                                                          \
    } while (0)

/* One object of the depth-first walk: its children onto st.  0, or 1 with
 * *rc = 1 (reached twice) or -1 (out of memory). */
static inline int dfs_object(const gcs_snapshot *g, double cobj, double cptr, dfs_entry x, const uint64_t *seen,
                             uint64_t *mine, dfs_acc *a, dfs_list *st, int *rc)
{
#define DFS_EMIT(c, d)                                                                                             \
    do {                                                                                                           \
        if (dfs_push(st, c, x.depth + 1, d) < 0) {                                                                 \
            *rc = -1;                                                                                              \
            return 1;                                                                                              \
        }                                                                                                          \
    } while (0)
    *rc = 1;
    DFS_SCAN(g, cobj, cptr, x.v, x.s, seen, mine, a, DFS_EMIT);
#undef DFS_EMIT
    *rc = 0;
    return 0;
}

/* Depth first from the entries start[0..nstart) (claimed already).  0: done,
 * 1: an object reached twice, -1: out of memory.  *stop: set by a walker
 * that found one, read by the others to give up. */
static int dfs_walk_from(const gcs_snapshot *g, double cobj, double cptr, dfs_entry start, const uint64_t *seen,
                         uint64_t *mine, dfs_list *st, dfs_acc *acc, int *stop)
{
    /* the counts in a local, kept in registers: through *acc every object
     * paid a chain of stores and loads to the same line */
    dfs_acc la = *acc, *a = &la;
    int rc = 0;
    st->n = 0;
    if (dfs_push(st, start.v, start.depth, start.s) < 0)
        return -1;
    uint64_t steps = 0, chain_steps = 0;
    /* A link of a chain (one non-NULL field among at most a chunk's) goes
     * straight on to its child: no push and pop, s kept in a register, and
     * its weight, the same for every such link, counted once at the end. A
     * list's walk was three times its mark, most of it that round trip
     * through the stack (docs/model.md, "Cost", 2026-11-28). */
    const double w1 = gcs_gc_mark_weight(cobj, cptr, 1, 1);
    while (st->n > 0) {
        dfs_entry x = st->e[--st->n];
        for (;;) {
            if ((++steps & 4095) == 0 && __atomic_load_n(stop, __ATOMIC_RELAXED)) {
                rc = 1;
                goto out;
            }
            a->reached++;
            a->depth = x.depth > a->depth ? x.depth : a->depth;
            const uint32_t *e = g->edges + g->edge_start[x.v];
            uint32_t np = g->nptrs[x.v], k = 0, c = GCS_SNAPSHOT_NULL;
            if (np > GCS_GC_CHUNK_FIELDS)
                break;
            for (uint32_t f = 0; f < np; f++)
                if (e[f] != GCS_SNAPSHOT_NULL) {
                    k++;
                    c = e[f];
                }
            if (k != 1)
                break;
            double du = x.s + w1;
            a->w.forest_tinf = du > a->w.forest_tinf ? du : a->w.forest_tinf;
            uint64_t bit = 1ull << (c & 63);
            if ((seen[c >> 6] | mine[c >> 6]) & bit) {
                rc = 1;
                goto out;
            }
            mine[c >> 6] |= bit;
            chain_steps++;
            x = (dfs_entry){c, x.depth + 1, du};
        }
        if (dfs_object(g, cobj, cptr, x, seen, mine, a, st, &rc) != 0)
            break;
    }
out:
    if (chain_steps)
        acc_weight(&a->w, cobj, cptr, 1, 1); /* every link: one field counted, no chunks */
    *acc = la;
    return rc;
}

static int dfs_walk(const gcs_snapshot *g, double cobj, double cptr, const dfs_entry *start, size_t nstart,
                    const uint64_t *seen, uint64_t *mine, dfs_list *st, dfs_acc *a, int *stop)
{
    for (size_t i = 0; i < nstart; i++) {
        int r = dfs_walk_from(g, cobj, cptr, start[i], seen, mine, st, a, stop);
        if (r)
            return r;
    }
    return 0;
}

/* An object of more fields than this met in the BFS prefix is a fan: its
 * fields are handed to the threads in chunks of SPAN_FAN_CHUNK rather than
 * listed one entry each (a 3 M-pointer array made 48 MB of entries). */
#define SPAN_FAN_MIN 4096
#define SPAN_FAN_CHUNK 1024

/* One object of the BFS prefix: 1 when a child was reached before.  A fan
 * is scanned for its weight only, and listed in fans (start time: its d). */
static int prefix_scan(const gcs_snapshot *g, double cobj, double cptr, dfs_entry x, uint64_t *live, dfs_acc *a,
                       dfs_list *next, dfs_list *fans, int *oom)
{
    if (g->nptrs[x.v] >= SPAN_FAN_MIN) {
        uint32_t np = g->nptrs[x.v], k = nonnull_fields(g->edges + g->edge_start[x.v], np);
        double du = x.s + gcs_gc_mark_weight(cobj, cptr, k, np);
        a->w.forest_tinf = du > a->w.forest_tinf ? du : a->w.forest_tinf;
        acc_weight(&a->w, cobj, cptr, k, np);
        if (dfs_push(fans, x.v, x.depth + 1, du) < 0)
            *oom = 1;
        return 0;
    }
#define PRE_EMIT(c, d)                                                                                             \
    do {                                                                                                           \
        if (dfs_push(next, c, x.depth + 1, d) < 0)                                                                 \
            *oom = 1;                                                                                              \
    } while (0)
    DFS_SCAN(g, cobj, cptr, x.v, x.s, live, live, a, PRE_EMIT);
#undef PRE_EMIT
    return 0;
}

/* The forest's pass (above).  live: all 0.  1 when the reachable graph is
 * a forest (b filled, live the reachable objects), 0 when it is not (live
 * then in an unspecified state), -1 when out of memory. */
static int span_forest(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, size_t nwords, span_bfs *b)
{
    /* a small heap on this thread alone (SPAN_PAR_LEVEL's reason) */
    int nt = g->nobjects >= SPAN_PAR_LEVEL ? span_threads() : 1, rc = -1, stop = 0;
    dfs_list cur = {0}, next = {0}, fans = {0}; /* fans: v, depth of its children, their start time */
    uint32_t *fan_at = NULL, *fan_lo = NULL;      /* per fan chunk: its fan, its first field */
    uint64_t *priv[SPAN_MAX_THREADS] = {0};
    dfs_acc acc[SPAN_MAX_THREADS], pre;
    memset(&pre, 0, sizeof pre);
    acc_reset(&pre.w);
    memset(b, 0, sizeof *b);
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (!bit_get(live, v)) { /* a root named twice is one root, as in the BFS */
            bit_set(live, v);
            if (dfs_push(&cur, v, 1, 0) < 0)
                goto done;
        }
    }
    /* the BFS prefix, on this thread (on one thread too: it also makes fans) */
    for (int level = 0; level < SPAN_DFS_PREFIX && cur.n > 0 && cur.n < SPAN_DFS_SPLIT * (size_t)nt; level++) {
        next.n = 0;
        for (size_t i = 0; i < cur.n; i++) {
            dfs_entry x = cur.e[i];
            pre.reached++;
            pre.depth = x.depth > pre.depth ? x.depth : pre.depth;
            dfs_acc *a = &pre;
            int oom = 0;
            int r = prefix_scan(g, cobj, cptr, x, live, a, &next, &fans, &oom);
            if (oom)
                goto done;
            if (r) {
                rc = 0;
                goto done;
            }
        }
        dfs_list tmp = cur;
        cur = next;
        next = tmp;
    }
    /* the subtrees, in parallel */
    int failed = 0, revisit = 0;
    if (nt > 1)
        for (int t = 0; t < nt; t++)
            if (!(priv[t] = calloc(nwords ? nwords : 1, sizeof *priv[t])))
                goto done;
    for (int t = 0; t < nt; t++) {
        memset(&acc[t], 0, sizeof acc[t]);
        acc_reset(&acc[t].w);
    }
    size_t chunk = cur.n / ((size_t)nt * SPAN_DFS_SPLIT) + 1;
    size_t nchunks = (cur.n + chunk - 1) / chunk, nfan = 0;
    /* the fans' chunks of fields, after the entries' chunks */
    for (size_t i = 0; i < fans.n; i++)
        nfan += (g->nptrs[fans.e[i].v] + SPAN_FAN_CHUNK - 1) / SPAN_FAN_CHUNK;
    if (nfan && (!(fan_at = malloc(nfan * sizeof *fan_at)) || !(fan_lo = malloc(nfan * sizeof *fan_lo))))
        goto done;
    for (size_t i = 0, k = 0; i < fans.n; i++)
        for (uint64_t f = 0; f < g->nptrs[fans.e[i].v]; f += SPAN_FAN_CHUNK, k++) {
            fan_at[k] = (uint32_t)i;
            fan_lo[k] = (uint32_t)f;
        }
#pragma omp parallel num_threads(nt) reduction(| : failed, revisit) if (nt > 1)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        dfs_list st = {0};
#pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < nchunks + nfan; k++) {
            if (failed || revisit || __atomic_load_n(&stop, __ATOMIC_RELAXED))
                continue;
            uint64_t *mine = nt > 1 ? priv[t] : live;
            int r = 0;
            if (k < nchunks) {
                size_t lo = k * chunk;
                r = dfs_walk(g, cobj, cptr, cur.e + lo, cur.n - lo < chunk ? cur.n - lo : chunk, live, mine, &st,
                             &acc[t], &stop);
            } else {
                /* a chunk of a fan's fields: each child claimed, then walked */
                dfs_entry fan = fans.e[fan_at[k - nchunks]];
                uint32_t np = g->nptrs[fan.v], lo = fan_lo[k - nchunks];
                uint32_t hi = np - lo < SPAN_FAN_CHUNK ? np : lo + SPAN_FAN_CHUNK;
                const uint32_t *e = g->edges + g->edge_start[fan.v];
                /* a child without pointer fields (most of a large array's)
                 * is counted here, not walked: a walk per child cost a
                 * call, a push and a pop, and two copies of the counts */
                uint64_t leaves = 0;
                for (uint32_t f = lo; f < hi && r == 0; f++) {
                    uint32_t c = e[f];
                    if (c == GCS_SNAPSHOT_NULL)
                        continue;
                    uint64_t bit = 1ull << (c & 63);
                    if ((live[c >> 6] | mine[c >> 6]) & bit) {
                        r = 1;
                        break;
                    }
                    mine[c >> 6] |= bit;
                    if (g->nptrs[c] == 0)
                        leaves++;
                    else
                        r = dfs_walk_from(g, cobj, cptr, (dfs_entry){c, fan.depth, fan.s}, live, mine, &st,
                                          &acc[t], &stop);
                }
                if (leaves) { /* each as dfs_walk_from would have counted it */
                    acc[t].reached += leaves;
                    acc[t].depth = fan.depth > acc[t].depth ? fan.depth : acc[t].depth;
                    double du = fan.s + gcs_gc_mark_weight(cobj, cptr, 0, 0);
                    acc[t].w.forest_tinf = du > acc[t].w.forest_tinf ? du : acc[t].w.forest_tinf;
                    acc_weight(&acc[t].w, cobj, cptr, 0, 0);
                }
            }
            if (r != 0) {
                __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
                failed |= r < 0;
                revisit |= r > 0;
            }
        }
        free(st.e);
    }
    if (failed)
        goto done;
    if (revisit) {
        rc = 0;
        goto done;
    }
    if (nt > 1) {
        /* the private bitmaps into live; one bit in two of them: reached twice */
#pragma omp parallel for schedule(static) reduction(| : revisit) num_threads(nt)
        for (size_t w = 0; w < nwords; w++) {
            uint64_t any = 0;
            for (int t = 0; t < nt; t++) {
                revisit |= (any & priv[t][w]) != 0;
                any |= priv[t][w];
            }
            live[w] |= any;
        }
        if (revisit) {
            rc = 0;
            goto done;
        }
    }
    b->emin = UINT32_MAX;
    b->wmin = INFINITY;
    b->reachable = pre.reached;
    b->depth = pre.depth;
    acc_merge(b, &pre.w);
    for (int t = 0; t < nt; t++) {
        acc_merge(b, &acc[t].w);
        b->reachable += acc[t].reached;
        b->depth = acc[t].depth > b->depth ? acc[t].depth : b->depth;
    }
    rc = 1;
done:
    free(cur.e);
    free(next.e);
    free(fans.e);
    free(fan_at);
    free(fan_lo);
    for (int t = 0; t < SPAN_MAX_THREADS; t++)
        free(priv[t]);
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

/* ---- label-correcting sweeps -------------------------------------------------
 * The BFS and Dijkstra visit a heap in the order of its levels and buckets,
 * each of which is a thin slice through the whole id range: every object
 * scanned costs a host miss on each snapshot array it reads (the workloads'
 * heaps took 60-120 ns per object, several times their mark).  A heap
 * snapshot's ids are in address order, and a program's objects mostly point
 * near themselves, so most labels can be settled in one pass front to back
 * instead: Bellman-Ford's label correcting, swept in id order.  An object is
 * dirty when its start time s or its hop count h (its BFS level less one)
 * was lowered; a sweep scans the dirty objects in id order, lowering its
 * children's s and h (a child ahead is scanned in the same sweep, one behind
 * in the next), until no object is dirty.  The fixed point is the one
 * Dijkstra finds (s(v) = min over parents of d(u), d = s + w, rounded; the
 * sum is monotone, so both take the minimum over the same paths' sums) and h
 * is the BFS's level, so the results are those of passes 1 and 2 to the bit.
 * On the corpus heaps an object is scanned 1.0-1.15 times in 4-21 sweeps.
 *
 * A child's s and h are one 12-byte label: one line, not two, for 14 labels
 * in 16 (the other two straddle a line), and a quarter less fresh memory
 * than 16 bytes with padding, which the random heap's peak needs
 * (docs/model.md, "Cost", 2026-11-28).  Where the
 * children lie far from their parents and the labels outgrow the caches (a
 * random graph), each child's label is a host miss: the objects to scan are
 * then taken from the bitmap SPAN_SWEEP_RING ahead and their children's
 * labels prefetched as they are taken.  The order may change while they
 * wait (an object taken may be lowered again: it is dirty again and scanned
 * again), which label correcting allows.  Where the children are near, the
 * second read of the fields costs more than it saves (bh and cube, 270 000
 * and 290 000 objects: 1.5x slower with it; docs/model.md, "Cost"), so it is on
 * only past SPAN_SWEEP_FAR_BYTES of labels and when most of the first
 * SPAN_SWEEP_PROBE objects' children are SPAN_SWEEP_FAR ids or more away.
 *
 * What the sweeps cannot bound is their number: a chain laid out back to
 * front takes one sweep per 64 objects, and a random graph may scan objects
 * several times.  So they give up once they have scanned SPAN_SWEEP_WORK
 * objects per object of the heap or SPAN_SWEEP_WORDS bitmaps' worth of
 * words, and passes 1 and 2 start again: at most about that much work is
 * lost on such a heap.
 *
 * Tinf is the largest final d.  The sweeps keep the largest d of any scan,
 * which is at least Tinf (an object's last scan has its final s), and equal
 * to it when the object that gave it still has that d at the end; if not, a
 * pass over the reachable objects finds the maximum (likewise the depth). */
#define SPAN_SWEEP_WORK 2
#define SPAN_SWEEP_WORDS 32
#define SPAN_SWEEP_RING 8                        /* a power of two */
#define SPAN_SWEEP_PROBE 4096
#define SPAN_SWEEP_FAR 8192                      /* ids: 128 KiB of labels */
#define SPAN_SWEEP_FAR_BYTES ((size_t)8 << 20)

size_t _gcs_span_prefetch_bytes = SPAN_SWEEP_FAR_BYTES;

typedef struct __attribute__((packed, aligned(4))) span_label {
    double s;   /* start time: min over the parents' d (0 for a root) */
    uint32_t h; /* hops from a root: the BFS level less one */
} span_label;

/* 0 with b and *tinf set, 1 when the sweeps gave up (live, dirty and lab
 * then in an unspecified state).  live and dirty: all 0 on entry (live: the
 * reachable objects on return, dirty all 0); lab: n labels, uninitialised. */
static int span_sweeps(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *dirty,
                       size_t nwords, span_label *lab, span_bfs *b, double *tinf)
{
    const uint32_t *edges = g->edges, *nptrs = g->nptrs;
    const uint64_t *edge_start = g->edge_start;
    uint64_t n = g->nobjects, reached = 0, scans = 0, words = 0, far = 0, near = 0;
    uint64_t scan_limit = SPAN_SWEEP_WORK * n + 4096, word_limit = SPAN_SWEEP_WORDS * (uint64_t)nwords + 4096;
    int prefetch = 0, may_prefetch = n * sizeof *lab > _gcs_span_prefetch_bytes;
    level_acc a;
    memset(&a, 0, sizeof a);
    acc_reset(&a);
    memset(b, 0, sizeof *b);
    size_t lo = nwords; /* the first word of the next sweep */
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (!bit_get(live, v)) {
            bit_set(live, v);
            bit_set(dirty, v);
            lab[v] = (span_label){0, 0};
            reached++;
            lo = (size_t)(v >> 6) < lo ? (size_t)(v >> 6) : lo;
        }
    }
    double top = 0;
    uint32_t hmax = 0, top_at = 0, hmax_at = 0;
    uint32_t ring[SPAN_SWEEP_RING];
    while (lo < nwords) {
        words += nwords - lo;
        if (words > word_limit)
            return 1;
        size_t w = lo; /* the bitmap's cursor: objects behind it wait for the next sweep */
        unsigned head = 0, tail = 0;
        lo = nwords;
        for (;;) {
            /* the ring: one object, or SPAN_SWEEP_RING with their children's labels on the way */
            unsigned want = prefetch ? SPAN_SWEEP_RING : 1;
            while (tail - head < want && w < nwords) {
                uint64_t bits = dirty[w];
                if (!bits) {
                    w++;
                    continue;
                }
                dirty[w] = bits & (bits - 1);
                uint32_t x = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
                ring[tail++ % SPAN_SWEEP_RING] = x;
                if (prefetch) {
                    const uint32_t *ex = edges + edge_start[x];
                    for (uint32_t f = 0, nx = nptrs[x]; f < nx; f++)
                        if (ex[f] != GCS_SNAPSHOT_NULL) {
                            /* both ends: one label in eight straddles two lines */
                            const char *l = (const char *)(lab + ex[f]);
                            __builtin_prefetch(l, 1);
                            __builtin_prefetch(l + sizeof *lab - 1, 1);
                        }
                }
            }
            if (head == tail)
                break;
            uint32_t u = ring[head++ % SPAN_SWEEP_RING];
            const uint32_t *e = edges + edge_start[u];
            uint32_t np = nptrs[u];
            uint32_t k = nonnull_fields(e, np);
            acc_weight(&a, cobj, cptr, k, np);
            double du = lab[u].s + gcs_gc_mark_weight(cobj, cptr, k, np);
            uint32_t hu = lab[u].h + 1;
            if (du > top) {
                top = du;
                top_at = u;
            }
            if (hu > hmax) {
                hmax = hu;
                hmax_at = u;
            }
            for (uint32_t f = 0; f < np; f++) {
                uint32_t v = e[f];
                if (v == GCS_SNAPSHOT_NULL)
                    continue;
                uint64_t bit = 1ull << (v & 63);
                size_t vw = v >> 6;
                if (!(live[vw] & bit)) {
                    live[vw] |= bit;
                    reached++;
                    lab[v].s = du;
                    lab[v].h = hu;
                } else {
                    a.revisits++; /* reached before: no forest */
                    int lower = 0;
                    if (du < lab[v].s) {
                        lab[v].s = du;
                        lower = 1;
                    }
                    if (hu < lab[v].h) {
                        lab[v].h = hu;
                        lower = 1;
                    }
                    if (!lower)
                        continue;
                }
                dirty[vw] |= bit;
                if (vw < w && vw < lo)
                    lo = vw; /* behind the cursor: the next sweep */
            }
            if (++scans <= SPAN_SWEEP_PROBE && may_prefetch) {
                for (uint32_t f = 0; f < np; f++)
                    if (e[f] != GCS_SNAPSHOT_NULL) {
                        uint32_t dist = e[f] > u ? e[f] - u : u - e[f];
                        far += dist >= SPAN_SWEEP_FAR;
                        near += dist < SPAN_SWEEP_FAR;
                    }
                if (scans == SPAN_SWEEP_PROBE)
                    prefetch = far > near;
            }
            if (scans > scan_limit)
                return 1;
        }
    }
    gcs_assert_internal(scans >= reached); /* every reachable object is scanned at least once */
    /* is the largest d (h) of a scan still its object's? */
    double d_top = reached ? span_finish(g, top_at, cobj, cptr, lab[top_at].s) : 0;
    if (scans > reached && (d_top != top || lab[hmax_at].h + 1 != hmax)) {
        top = 0;
        hmax = 0;
        for (size_t w = 0; w < nwords; w++)
            for (uint64_t bits = live[w]; bits; bits &= bits - 1) {
                uint32_t u = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
                double d = span_finish(g, u, cobj, cptr, lab[u].s);
                top = d > top ? d : top;
                hmax = lab[u].h + 1 > hmax ? lab[u].h + 1 : hmax;
            }
    }
    b->reachable = reached;
    b->depth = hmax;
    b->emin = UINT32_MAX;
    b->wmin = INFINITY;
    acc_merge(b, &a); /* the counts and ranges of the objects scanned */
    b->forest_tinf = top;
    *tinf = top;
    return 0;
}

int _gcs_span_no_sweeps;

int _gcs_inspect_span(const gcs_snapshot *g, double cobj, double cptr, double edges_low, gcs_inspect_result *out,
                      gcs_err *err)
{
    uint64_t n = g->nobjects;
    size_t nwords = (size_t)((n + 63) / 64), wbytes = (nwords ? nwords : 1) * sizeof(uint64_t);
    size_t dense_min = (size_t)(n / SPAN_DENSE_DIV) + 64;
    int rc = -1;
    uint64_t *live = calloc(1, wbytes), *scratch = NULL, *reached = NULL;
    double *s = NULL;
    span_label *labels = NULL;
    void *label_mem = NULL;
    if (!live)
        goto oom;
    span_bfs b;
    /* A forest's objects each have one parent or are roots, so more
     * non-NULL fields and roots than objects mean some object is reached
     * twice (when all are reachable, as in a snapshot of the live set):
     * the forest's walk would only give up, after up to a whole walk (bh,
     * cube and cky went a fifth of their time on it), so it is skipped.
     * Either way the result is the same. */
    int forest = 0;
    if (!(edges_low + (double)g->nroots > (double)n))
        forest = span_forest(g, cobj, cptr, live, nwords, &b);
    if (forest < 0)
        goto oom;
    int swept = 0;
    double swept_tinf = 0;
    if (!forest) {
        /* no forest: the sweeps, or if they give up the BFS, then
         * Dijkstra; _gcs_huge_alloc touches nothing: the pages a walk does
         * not use cost nothing */
        memset(live, 0, wbytes);
        scratch = calloc(1, wbytes);
        /* the labels; passes 1 and 2 reuse them as s (12 bytes an object against 8) */
        label_mem = _gcs_huge_alloc((n ? n : 1) * sizeof(span_label));
        if (!scratch || !label_mem)
            goto oom;
        labels = label_mem;
        s = label_mem;
        swept = !_gcs_span_no_sweeps &&
                span_sweeps(g, cobj, cptr, live, scratch, nwords, labels, &b, &swept_tinf) == 0;
        if (!swept) {
            memset(live, 0, wbytes);
            memset(scratch, 0, wbytes);
            if (span_levels(g, cobj, cptr, live, scratch, nwords, dense_min, s, &b) < 0)
                goto oom;
        }
    }
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
    } else if (swept) {
        out->heap.tinf_ns = swept_tinf;
        out->span_method = "sweeps";
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
    free(label_mem);
    return rc;
}
