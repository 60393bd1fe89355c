/* span_levels.c -- pass 1 of the T-infinity walk (span.c's top comment):
 * the BFS level by level (_gcs_span_levels), which finds the reachable
 * objects, the depth, the range of the weights and whether any object is
 * reached twice (and, as long as none is, the forest's Tinf).  span.c runs it
 * on a heap that is no forest where the label-correcting sweeps gave up;
 * Dijkstra (span_dijkstra.c) then starts from its bitmap of the reachable
 * objects.  A file of its own because its machinery is its own: levels as
 * lists or as bitmaps, the threads' private bitmaps and their merge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GCS_SPAN_FILES
#include "span_internal.h"

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

/* levels smaller than this are lists, scanned on the calling thread */
#define SPAN_PAR_MIN 4096
/* words of a bitmap level handed to a thread at a time */
#define SPAN_WORDS_PER_TASK 512

/* Bits set in x, written out: without -mpopcnt __builtin_popcountll is a
 * call into libgcc. */
static inline uint64_t pop64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (x * 0x0101010101010101ull) >> 56;
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

/* Pass 1.  live: all 0 on entry; the reachable objects on return.  As long
 * as no object has been reached twice the graph may be a forest, whose only
 * paths are those of the BFS: s (as in pass 2) is then kept along them, and
 * if it stays a forest Tinf is known without pass 2 (a list, a tree).  A
 * graph that is not stops paying for it after the level of its first
 * revisit.  Large levels are bitmaps scanned on OpenMP's threads (above). */
int _gcs_span_levels(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *scratch,
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
