/* v8snap_graph.c -- the V8 importer's graph (v8snap.c has the importer's
 * overview): the kept edge counts turned into offsets, an object's element
 * edges dropped where its backing store lists them (drop_element_copies),
 * the nodes reachable from the synthetic root found breadth first (its
 * queue's next nodes prefetched), renumbered in node order through a
 * visited bitmap with a count per 64 nodes, and the gcs_snapshot built:
 * sizes, edges, addresses, type names, params, validated. */
#include <stdlib.h>
#include <string.h>

#define GCS_V8_IMPORTER
#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "heapdump_internal.h"

/* ---- the graph --------------------------------------------------------------------- */

/* Where node i's kept edges start in tgt: the edge counts turned into
 * offsets in place (4 bytes) while the edges fit 32 bits, a separate
 * 8-byte array beyond. */
typedef struct offs {
    uint32_t *o32;
    uint64_t *o64;
} offs;
static inline uint64_t off_at(const offs *o, uint64_t i) { return o->o32 ? o->o32[i] : o->o64[i]; }

static inline void off_set(offs *o, uint64_t i, uint64_t v)
{
    if (o->o32)
        o->o32[i] = (uint32_t)v;
    else
        o->o64[i] = v;
}

/* Whether kept edge e is an element edge (the bitmap ends at the last). */
static inline int is_element(const v8imp *m, uint64_t e)
{
    return e / 32 < m->ecap && (m->elem[e / 32] >> (e % 32) & 1);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether every target of x[0..k) is among b[0..nb), counted with
 * multiplicity.  A fast array's backing store lists its elements in the
 * JSArray's order (one linear pass); a dictionary's in hash order (sorted
 * copies, in *scratch, grown as needed).  -1: out of memory. */
static int holds_all(uint32_t *x, uint64_t k, const uint32_t *b, uint64_t nb, uint32_t **scratch,
                     uint64_t *scap)
{
    if (k == 0)
        return 1;
    if (k > nb)
        return 0;
    uint64_t j = 0;
    for (uint64_t i = 0; i < k; i++) {
        while (j < nb && b[j] != x[i])
            j++;
        if (j == nb)
            break;
        if (i + 1 == k)
            return 1;
        j++;
    }
    if (nb > *scap) {
        uint32_t *s = realloc(*scratch, (size_t)nb * sizeof *s);
        if (!s)
            return -1;
        *scratch = s;
        *scap = nb;
    }
    memcpy(*scratch, b, (size_t)nb * sizeof **scratch);
    qsort(x, (size_t)k, sizeof *x, cmp_u32);
    qsort(*scratch, (size_t)nb, sizeof **scratch, cmp_u32);
    const uint32_t *s = *scratch;
    j = 0;
    for (uint64_t i = 0; i < k; i++, j++) {
        while (j < nb && s[j] < x[i])
            j++;
        if (j == nb || s[j] != x[i])
            return 0;
    }
    return 1;
}

/* A store lists its object's elements, its map and a few slots more (a
 * dictionary's); and an object has one or two array children (its
 * elements and its properties).  Only such candidates are compared, so a
 * document whose objects share one huge array child costs a linear pass,
 * not a comparison per object. */
#define STORE_CANDIDATES 4
#define STORE_SLACK 8

/* Whether node i's element edges are all listed by one of its other
 * children of type array, the runtime's hidden nodes apart (see below);
 * their targets are gathered in *x.  -1: out of memory. */
static int store_holds_elements(v8imp *m, const offs *o, uint64_t i, uint32_t **x, uint64_t *xcap,
                                uint32_t **scratch, uint64_t *scap)
{
    uint64_t start = off_at(o, i), end = off_at(o, i + 1), k = 0, all = 0;
    for (uint64_t e = start; e < end; e++)
        if (is_element(m, e) && (all++, m->type[m->tgt[e]] != (uint32_t)m->nt_hidden)) {
            if (k == *xcap) {
                uint64_t nc = *xcap ? 2 * *xcap : 64;
                uint32_t *p = realloc(*x, (size_t)nc * sizeof *p);
                if (!p)
                    return -1;
                *x = p;
                *xcap = nc;
            }
            (*x)[k++] = m->tgt[e];
        }
    int candidates = 0;
    for (uint64_t e = start; e < end && candidates < STORE_CANDIDATES; e++) {
        uint32_t b = m->tgt[e];
        if (is_element(m, e) || b == i || m->type[b] != (uint32_t)m->nt_array)
            continue;
        candidates++;
        uint64_t nb = off_at(o, b + 1) - off_at(o, b);
        if (nb > 2 * all + STORE_SLACK)
            continue;
        int h = holds_all(*x, k, m->tgt + off_at(o, b), nb, scratch, scap);
        if (h != 0)
            return h;
    }
    return 0;
}

/* V8 lists each element of an object twice: as an element edge of the
 * object (a JSArray, or any object with indexed properties) and as an
 * internal edge of its backing store, an "(object elements)" array node the
 * object points to -- in fast, holey and dictionary mode alike (node 20,
 * docs/heap-dumps.md).  A marker traces object -> store -> element once, so
 * an object's element edges are dropped where one of its array-type
 * children lists every one of their targets but the runtime's hidden nodes
 * (an `undefined` element is an edge to an oddball the store leaves out);
 * the rest are kept.  First every owner of element edges is decided, its
 * bits kept (to drop) or cleared (to keep), with nothing moved; then, only
 * if some are dropped, tgt and the offsets are compacted in place from the
 * first such owner on.  -1: out of memory. */
static int drop_element_copies(v8imp *m, offs *o)
{
    if (!m->ecap || m->nt_array < 0)
        return 0;
    uint32_t *x = NULL, *scratch = NULL;
    uint64_t xcap = 0, scap = 0, first = UINT64_MAX, i = 0, last = m->ecap * 32;
    if (last > m->m)
        last = m->m;
    int rc = -1;
    for (uint64_t e = 0; e < last; e++) {
        if (!is_element(m, e))
            continue;
        while (off_at(o, i + 1) <= e) /* the owner: offsets only grow */
            i++;
        int h = store_holds_elements(m, o, i, &x, &xcap, &scratch, &scap);
        if (h < 0)
            goto done;
        uint64_t end = off_at(o, i + 1);
        for (; e < end; e++)
            if (is_element(m, e)) {
                if (h)
                    m->rep.element_copies++;
                else
                    m->elem[e / 32] &= ~(1u << (e % 32));
            }
        e--; /* the loop's e++ goes to the next owner's first edge */
        if (h && first == UINT64_MAX)
            first = i;
    }
    if (first != UINT64_MAX) {
        /* the bits left are the edges to drop; a node's edges only move
         * down, so each is read before anything is written over it */
        uint64_t w = off_at(o, first), start = w;
        for (uint64_t j = first; j < m->n; j++) {
            uint64_t end = off_at(o, j + 1);
            off_set(o, j, w);
            for (uint64_t e = start; e < end; e++)
                if (!is_element(m, e))
                    m->tgt[w++] = m->tgt[e];
            start = end;
        }
        off_set(o, m->n, w);
        m->m = w;
    }
    rc = 0;
done:
    free(x);
    free(scratch);
    return rc;
}

/* A node's new id: the reachable nodes before it, from the visited bitmap
 * and a count per 64 nodes -- 0.6 B per node where an id array is 4. */
static inline uint32_t rank_of(const uint64_t *bits, const uint32_t *rank, uint64_t i)
{
    uint64_t below = bits[i / 64] & ((1ull << (i % 64)) - 1);
    return rank[i / 64] + _gcs_popcount64(below);
}

/* The nodes reachable from node 0 over the kept edges, renumbered in node
 * order, become the snapshot. */
gcs_snapshot *_gcs_v8_build(v8imp *m, gcs_err *err)
{
    const char *name = m->r.name;
    uint64_t n = m->n, words64 = (n + 63) / 64;
    gcs_snapshot *g = NULL;
    char **tn = NULL;
    uint32_t *queue = NULL, *rank = NULL;
    uint64_t *bits = calloc(words64, sizeof *bits);
    offs o = {0};
    if (!bits)
        goto oom;
    if (m->m <= UINT32_MAX) {
        uint32_t *c = realloc(m->cnt, (size_t)(n + 1) * sizeof *c);
        queue = malloc((size_t)n * sizeof *queue);
        if (!c || !queue)
            goto oom;
        m->cnt = c;
        uint32_t sum = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint32_t k = c[i];
            c[i] = sum;
            sum += k;
        }
        c[n] = sum;
        o.o32 = c;
    } else {
        if (!(o.o64 = malloc((size_t)(n + 1) * sizeof *o.o64)))
            goto oom;
        uint64_t sum = 0;
        for (uint64_t i = 0; i < n; i++) {
            o.o64[i] = sum;
            sum += m->cnt[i];
        }
        o.o64[n] = sum;
        queue = m->cnt; /* the counts are in o64 now */
        m->cnt = NULL;
    }
    if (drop_element_copies(m, &o) < 0)
        goto oom;
    gcs_assert_internal(off_at(&o, n) == m->m);
    /* breadth first from the root; in a graph of random edges each node's
     * offsets and edges are a cache miss, so the queue's next nodes' are
     * loaded ahead: their offsets BFS_AHEAD nodes ahead, their edges (the
     * offsets now in cache) half as far */
    enum { BFS_AHEAD = 32 };
    uint64_t head = 0, tail = 0;
    bits[0] = 1;
    queue[tail++] = 0;
    while (head < tail) {
        if (head + BFS_AHEAD < tail) {
            uint32_t a = queue[head + BFS_AHEAD];
            __builtin_prefetch(o.o32 ? (const void *)&o.o32[a] : (const void *)&o.o64[a]);
        }
        if (head + BFS_AHEAD / 2 < tail)
            __builtin_prefetch(&m->tgt[off_at(&o, queue[head + BFS_AHEAD / 2])]);
        uint32_t v = queue[head++];
        for (uint64_t e = off_at(&o, v), end = off_at(&o, v + 1); e < end; e++) {
            uint32_t w = m->tgt[e];
            if (!(bits[w / 64] >> (w % 64) & 1)) {
                bits[w / 64] |= 1ull << (w % 64);
                queue[tail++] = w;
            }
        }
    }
    free(queue);
    queue = NULL;
    if (!(rank = malloc((size_t)words64 * sizeof *rank)))
        goto oom;
    uint64_t live = 0, fields = 0;
    for (uint64_t k = 0; k < words64; k++) {
        rank[k] = (uint32_t)live;
        live += (uint64_t)__builtin_popcountll(bits[k]);
    }
    for (uint64_t i = 0; i < n; i++)
        if (bits[i / 64] >> (i % 64) & 1)
            fields += off_at(&o, i + 1) - off_at(&o, i);
    m->rep.unreachable_nodes = n - live;
    gcs_err e2;
    g = gcs_snapshot_new(live, fields, 1, &e2);
    if (!g) {
        gcs_err_set(err, "%s: %s", name, e2.msg);
        goto fail;
    }
    uint64_t f = 0, addr = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!(bits[i / 64] >> (i % 64) & 1))
            continue;
        uint32_t id = rank_of(bits, rank, i);
        uint64_t e0 = off_at(&o, i), k = off_at(&o, i + 1) - e0;
        /* the snapshot's hidden header is the first word (V8's map) */
        uint32_t words = m->self[i] > 8 ? (uint32_t)((m->self[i] - 8 + 7ull) / 8) : 1;
        if (k > words) {
            /* more strong edges than payload words: a snapshot's pointer
             * field is a word (synthetic nodes have size 0) */
            words = (uint32_t)k;
            m->rep.moved_objects++;
        }
        g->edge_start[id] = f;
        for (uint64_t e = e0; e < e0 + k; e++)
            g->edges[f++] = rank_of(bits, rank, m->tgt[e]);
        addr += 8;
        g->addr[id] = addr;
        g->words[id] = words;
        g->nptrs[id] = (uint32_t)k;
        g->node[id] = 0;
        g->type[id] = m->type[i];
        m->rep.jvm_bytes += m->self[i];
        addr += 8 * (uint64_t)words;
    }
    g->edge_start[live] = f;
    g->roots[0] = 0;
    m->rep.references = fields;
    /* type names: V8's node types, then the class names */
    uint64_t ntypes = (uint64_t)m->n_ntypes + m->nused;
    if (!(tn = calloc(ntypes, sizeof *tn)))
        goto oom;
    for (unsigned k = 0; k < m->n_ntypes; k++)
        tn[k] = m->ntype_names[k];
    for (size_t k = 0; k < m->nused; k++) {
        if (!m->names || !m->names[k]) {
            gcs_err_set(err, "%s: a node's name is outside the %llu strings", name,
                        (unsigned long long)m->nstrings);
            goto fail;
        }
        tn[m->n_ntypes + k] = m->names[k];
    }
    if (gcs_snapshot_set_types(g, (uint32_t)ntypes, (const char *const *)tn, err) < 0)
        goto fail;
    g->params.heap_limit = (addr + 65535) & ~65535ull;
    if (!g->params.heap_limit)
        g->params.heap_limit = 65536;
    g->params.layout = GCS_SNAPSHOT_LAYOUT_UNKNOWN_ORDER;
    g->params.source = GCS_SNAPSHOT_SOURCE_V8;
    g->params.header_bytes = 8;
    g->params.granule_bytes = 8;
    if (gcs_snapshot_validate(g, &e2) < 0) {
        gcs_err_set(err, "%s: the imported graph is invalid: %s", name, e2.msg);
        goto fail;
    }
    free(tn);
    free(bits);
    free(rank);
    free(o.o64);
    return g;
oom:
    gcs_err_set(err, "%s: out of memory for %llu nodes", name, (unsigned long long)n);
fail:
    free(tn);
    free(bits);
    free(rank);
    free(queue);
    free(o.o64);
    gcs_snapshot_free(g);
    return NULL;
}
