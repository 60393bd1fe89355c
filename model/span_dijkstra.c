/* span_dijkstra.c -- pass 2 of the T-infinity walk: Dijkstra on the start
 * times s, with Dial's buckets (_gcs_span_buckets) or, where they cannot be
 * used, a binary heap (_gcs_span_heap).  span.c runs it after the BFS
 * (span_levels.c) on a heap that is no forest and whose objects do not all
 * weigh the same, and chooses the buckets' width and window; span.c's top
 * comment gives their rounding argument.  A file of its own because it
 * reads nothing of the BFS but the bitmap of the reachable objects, and
 * keeps queues of its own. */
#include <stdlib.h>

#define GCS_SPAN_FILES
#include "span_internal.h"

#define SPAN_MAX_BUCKET (1ull << 31)     /* bucket index bound of the rounding argument */
#define SPAN_AHEAD 8

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
int _gcs_span_heap(const gcs_snapshot *g, double cobj, double cptr, double *s, uint64_t *reached,
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

/* Pass 2 with Dial's buckets (span.c's top comment).  live: the reachable
 * objects (cleared as they are scanned); reached: all 0; q the bucket
 * width; nslots a power of two >= 64 and > wmax / q + 2.  Returns 0, -1
 * when out of memory, 1 when the buckets cannot be used (live, reached and
 * s are then in an unspecified state). */
int _gcs_span_buckets(const gcs_snapshot *g, double cobj, double cptr, double q, size_t nslots, double *s,
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
