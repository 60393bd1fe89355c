/* span_forest.c -- the forest's walk (_gcs_span_forest): a heap whose
 * reachable graph is a forest (a tree, a list, a wide array) gets its Tinf,
 * depth and counts from a depth-first walk, subtrees on OpenMP's threads.
 * span.c tries it first unless the counts rule a forest out, and it gives up
 * at the first object reached twice.  A file of its own because it shares no
 * loop with the other walks: its own stacks (dfs_list), the BFS prefix that
 * splits the work among the threads, the fans and the chains. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GCS_SPAN_FILES
#include "span_internal.h"

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
 * Dijkstra (span.c) do the work, from a clean bitmap.  On OpenMP's threads the
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
int _gcs_span_forest(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, size_t nwords, span_bfs *b)
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
