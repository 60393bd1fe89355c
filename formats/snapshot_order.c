/* snapshot_order.c -- the same heap graph laid out in another order
 * (gcs_snapshot_reorder, snapshot.h).
 *
 * Layout changes what a parallel mark pays: on the 2-vCPU VM the summed
 * busy time of two workers over one was 1.05 for cky laid out depth first,
 * 1.15-1.20 in allocation order and 1.5-1.7 shuffled (docs/model.md, "What
 * grows Σ busy at P = 2 here"), and the cache model prices each layout
 * differently.  A runtime engineer asks the same thing the other way round:
 * what would this heap cost after a copying collector compacted it (Cheney's
 * copy is breadth first, a depth-first copy keeps parents beside their
 * children)?  So this renumbers the objects -- depth first or breadth first
 * from the roots, the way a mark or a copy would first reach them, or at
 * random -- and gives them fresh addresses, packed in the new order as an
 * allocator would place them one after the other.  Objects no root reaches
 * follow the reachable ones in their old order: a collector would not move
 * them, and a mark never reads them.
 *
 * The graph is unchanged: every object keeps its size, fields (in order),
 * memory node and type, and every edge and root points to the same object
 * under its new id.  Memory: the new snapshot, two 4-byte maps per object,
 * and a visited bitmap and a work list for the traversals (the list at most
 * one entry per field plus the roots). */
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "gcscale/snapshot.h"

/* splitmix64: a seeded, portable random sequence for the shuffle, so that
 * a seed gives the same file everywhere. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline int test_and_set(uint64_t *bits, uint32_t i)
{
    uint64_t m = 1ull << (i & 63);
    int was = (bits[i >> 6] & m) != 0;
    bits[i >> 6] |= m;
    return was;
}

static inline int is_set(const uint64_t *bits, uint32_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }

/* order[0..n): the old ids in the new order.  Returns how many of them the
 * roots reach (they come first), or -1 out of memory. */
static int64_t traverse(const gcs_snapshot *g, gcs_snapshot_order how, uint32_t *order)
{
    uint64_t n = g->nobjects, placed = 0;
    uint64_t *seen = calloc(n / 64 + 1, sizeof *seen);
    if (!seen)
        return -1;
    if (how == GCS_SNAPSHOT_ORDER_DEPTH_FIRST) {
        /* A stack of ids still to visit; an object's fields are pushed last
         * first, so its first field is visited next (preorder, where a
         * depth-first copy places them).  Each object is visited once and
         * pushes each field at most once then: nfields + nroots entries. */
        uint64_t k = 0;
        uint32_t *stack = malloc((g->nfields + g->nroots + 1) * sizeof *stack);
        if (!stack) {
            free(seen);
            return -1;
        }
        for (uint64_t r = g->nroots; r-- > 0;)
            stack[k++] = g->roots[r];
        while (k > 0) {
            uint32_t i = stack[--k];
            if (test_and_set(seen, i))
                continue;
            order[placed++] = i;
            for (uint64_t e = g->edge_start[i + 1]; e-- > g->edge_start[i];) {
                uint32_t t = g->edges[e];
                if (t != GCS_SNAPSHOT_NULL && !is_set(seen, t))
                    stack[k++] = t;
            }
            gcs_assert_internal(k <= g->nfields + g->nroots);
        }
        free(stack);
    } else if (how == GCS_SNAPSHOT_ORDER_BREADTH_FIRST) {
        /* order[] is the queue: Cheney's scan pointer is `head`. */
        for (uint64_t r = 0; r < g->nroots; r++)
            if (!test_and_set(seen, g->roots[r]))
                order[placed++] = g->roots[r];
        for (uint64_t head = 0; head < placed; head++) {
            uint32_t i = order[head];
            for (uint64_t e = g->edge_start[i]; e < g->edge_start[i + 1]; e++) {
                uint32_t t = g->edges[e];
                if (t != GCS_SNAPSHOT_NULL && !test_and_set(seen, t))
                    order[placed++] = t;
            }
        }
    }
    int64_t reached = (int64_t)placed;
    for (uint64_t i = 0; i < n; i++)
        if (!is_set(seen, (uint32_t)i))
            order[placed++] = (uint32_t)i;
    gcs_assert_internal(placed == n);
    free(seen);
    return reached;
}

static uint64_t round_up(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

const char *gcs_snapshot_order_name(gcs_snapshot_order how)
{
    switch (how) {
    case GCS_SNAPSHOT_ORDER_DEPTH_FIRST:
        return "depth-first";
    case GCS_SNAPSHOT_ORDER_BREADTH_FIRST:
        return "breadth-first";
    case GCS_SNAPSHOT_ORDER_SHUFFLE:
        return "shuffle";
    }
    return "?";
}

int gcs_snapshot_order_parse(const char *name, gcs_snapshot_order *how)
{
    for (int k = 0; k <= GCS_SNAPSHOT_ORDER_SHUFFLE; k++)
        if (strcmp(name, gcs_snapshot_order_name((gcs_snapshot_order)k)) == 0) {
            *how = (gcs_snapshot_order)k;
            return 0;
        }
    return -1;
}

gcs_snapshot *gcs_snapshot_reorder(const gcs_snapshot *g, gcs_snapshot_order how, uint64_t seed,
                                   uint64_t *reached, gcs_err *err)
{
    uint64_t n = g->nobjects;
    if (how < GCS_SNAPSHOT_ORDER_DEPTH_FIRST || how > GCS_SNAPSHOT_ORDER_SHUFFLE) {
        gcs_err_set(err, "snapshot reorder: unknown order %d", (int)how);
        return NULL;
    }
    uint32_t *order = malloc((n + 1) * sizeof *order), *newid = malloc((n + 1) * sizeof *newid);
    int64_t r = -1;
    if (order && newid) {
        if (how == GCS_SNAPSHOT_ORDER_SHUFFLE) {
            /* Fisher-Yates over every object, reachable or not */
            for (uint64_t i = 0; i < n; i++)
                order[i] = (uint32_t)i;
            uint64_t s = seed;
            for (uint64_t i = n; i > 1; i--) {
                uint64_t j = next_random(&s) % i;
                uint32_t t = order[i - 1];
                order[i - 1] = order[j];
                order[j] = t;
            }
            r = (int64_t)n; /* every object placed at random: none come first */
        } else {
            r = traverse(g, how, order);
        }
    }
    gcs_snapshot *h = r < 0 ? NULL : gcs_snapshot_new(n, g->nfields, g->nroots, err);
    if (r < 0)
        gcs_err_set(err, "snapshot reorder: out of memory for %llu objects", (unsigned long long)n);
    if (!h || (g->ntypes && gcs_snapshot_set_types(h, g->ntypes, (const char *const *)g->type_names, err) < 0)) {
        gcs_snapshot_free(h);
        free(order);
        free(newid);
        return NULL;
    }
    for (uint64_t j = 0; j < n; j++)
        newid[order[j]] = (uint32_t)j;
    /* Fresh addresses, packed in the new order as an allocator placing one
     * object after the other would: each header starts on a granule, each
     * payload 8-byte aligned behind its header. */
    h->params = g->params;
    if (g->params.source != GCS_SNAPSHOT_SOURCE_GCSCALE)
        h->params.layout = GCS_SNAPSHOT_LAYOUT_UNKNOWN_ORDER;
    uint64_t hb = g->params.header_bytes, gran = g->params.granule_bytes > 8 ? g->params.granule_bytes : 8;
    uint64_t cursor = 0, es = 0;
    for (uint64_t j = 0; j < n; j++) {
        uint32_t i = order[j];
        uint64_t a = round_up(round_up(cursor, gran) + hb, 8);
        h->addr[j] = a;
        cursor = a + 8 * (uint64_t)g->words[i];
        h->words[j] = g->words[i];
        h->nptrs[j] = g->nptrs[i];
        h->node[j] = g->node[i];
        h->type[j] = g->type[i];
        h->edge_start[j] = es;
        for (uint64_t e = g->edge_start[i]; e < g->edge_start[i + 1]; e++) {
            uint32_t t = g->edges[e];
            h->edges[es++] = t == GCS_SNAPSHOT_NULL ? GCS_SNAPSHOT_NULL : newid[t];
        }
    }
    h->edge_start[n] = es;
    for (uint64_t k = 0; k < g->nroots; k++)
        h->roots[k] = newid[g->roots[k]];
    /* Packed, the heap is rarely larger than it was; where granules and
     * headers made it so, the limit grows to hold it. */
    if (cursor > h->params.heap_limit) {
        uint64_t page = h->params.page_bytes ? h->params.page_bytes : 4096;
        h->params.heap_limit = round_up(cursor, page);
    }
    gcs_assert_internal(es == g->nfields);
    free(order);
    free(newid);
    if (reached)
        *reached = (uint64_t)r;
    /* An input that validated gives an output that does (the writer checks
     * it again before a byte is written). */
    gcs_assert_internal(gcs_snapshot_validate(h, NULL) == 0);
    return h;
}
