/* v8snap_nodes.c -- the V8 importer's "nodes" and "edges" members (v8snap.c
 * has the importer's overview): the hand-written integer scanner (a fast
 * path inlined into both loops, a slow one at the window's end and around
 * blanks), each node's type (or its class name's, from the distinct-name
 * table), self size and edge count; each edge's owner, weak and non-root
 * shortcut edges dropped, the rest kept as target node indices, element
 * edges marked in a bitmap for v8snap_graph.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GCS_V8_IMPORTER
#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "heapdump_internal.h"

/* ---- the integer arrays ---------------------------------------------------------- */

/* The next integer of an array and the separator after it: *last = 1 at
 * the array's end.  V8 writes non-negative integers below 2^53. */
static int num_slow(vr *r, uint64_t *v, int *last, const char *arr)
{
    if (_gcs_v8_vr_peek(r, arr) < 0)
        return -1;
    if (r->len - r->pos < 24 && vr_fill(r, 24) < 0)
        return -1;
    const uint8_t *p = r->buf + r->pos, *e = r->buf + r->len;
    if (p == e || *p < '0' || *p > '9')
        return _gcs_v8_vr_fail(r, vr_off(r), "%s: expected a non-negative integer", arr);
    uint64_t x = 0;
    int d = 0;
    while (p < e && *p >= '0' && *p <= '9') {
        if (++d > 16)
            return _gcs_v8_vr_fail(r, vr_off(r), "%s: a number of more than 16 digits", arr);
        x = x * 10 + (uint64_t)(*p++ - '0');
    }
    r->pos = (size_t)(p - r->buf);
    int c = _gcs_v8_vr_peek(r, arr);
    if (c < 0)
        return -1;
    if (c != ',' && c != ']')
        return _gcs_v8_vr_fail(r, vr_off(r), "%s: expected ',' or ']' after a number", arr);
    r->pos++;
    *last = c == ']';
    *v = x;
    return 0;
}

static inline int num(vr *r, uint64_t *v, int *last, const char *arr)
{
    /* the fast path: a number and its comma lie in the window, no blanks
     * but the newline V8 writes before the comma that ends each node and
     * each edge (a third of the edges' numbers went the slow way) */
    if (__builtin_expect(r->len - r->pos >= 20, 1)) {
        const uint8_t *p = r->buf + r->pos;
        if (*p >= '0' && *p <= '9') {
            uint64_t x = (uint64_t)(*p++ - '0');
            for (int d = 1; d < 16 && *p >= '0' && *p <= '9'; d++)
                x = x * 10 + (uint64_t)(*p++ - '0');
            p += *p == '\n' && p[1] == ',';
            if (*p == ',') {
                r->pos = (size_t)(p + 1 - r->buf);
                *v = x;
                *last = 0;
                return 0;
            }
        }
    }
    return num_slow(r, v, last, arr);
}

/* ---- the class names ------------------------------------------------------------- */

/* The type id of a class name (string index sidx), added when new. */
static int name_type(v8imp *m, uint64_t sidx, uint32_t *type)
{
    if (2 * (m->nused + 1) > m->ncap) {
        size_t nc = m->ncap ? 2 * m->ncap : 1024;
        uint64_t *k = calloc(nc, sizeof *k), *ok = m->nkeys;
        uint32_t *v = malloc(nc * sizeof *v), *ov = m->nvals;
        if (!k || !v) {
            free(k);
            free(v);
            return -1;
        }
        size_t oc = m->ncap;
        m->nkeys = k;
        m->nvals = v;
        m->ncap = nc;
        for (size_t i = 0; i < oc; i++)
            if (ok[i]) {
                size_t s = name_slot(m, ok[i] - 1);
                k[s] = ok[i];
                v[s] = ov[i];
            }
        free(ok);
        free(ov);
    }
    size_t s = name_slot(m, sidx);
    if (!m->nkeys[s]) {
        m->nkeys[s] = sidx + 1;
        m->nvals[s] = (uint32_t)m->nused++;
    }
    *type = m->n_ntypes + m->nvals[s];
    return 0;
}

/* ---- nodes, edges ---------------------------------------------------------------- */

static int grow32(uint32_t **a, uint64_t *cap, uint64_t need, uint64_t limit, int arrays, uint32_t **b,
                  uint32_t **c)
{
    uint64_t nc = *cap ? 2 * *cap : (limit < 4096 ? limit : 4096);
    if (nc < need)
        nc = need;
    if (nc > limit)
        nc = limit;
    if (nc < need || nc > SIZE_MAX / 4)
        return -1;
    uint32_t **all[3] = {a, b, c};
    for (int k = 0; k < arrays; k++) {
        uint32_t *p = realloc(*all[k], nc ? (size_t)nc * 4 : 4);
        if (!p)
            return -1;
        *all[k] = p;
    }
    *cap = nc;
    return 0;
}

int _gcs_v8_read_nodes(v8imp *m)
{
    vr *r = &m->r;
    if (vr_expect(r, '[', "'[' opening nodes") < 0)
        return -1;
    if (_gcs_v8_vr_peek(r, "nodes") < 0)
        return -1;
    uint64_t f[V8_FIELDS_MAX], v;
    int last = 0;
    if (r->buf[r->pos] == ']') {
        r->pos++;
        last = 1;
    }
    while (!last) {
        uint64_t at = vr_off(r);
        for (unsigned k = 0; k < m->nf; k++) {
            if (last)
                return _gcs_v8_vr_fail(r, at, "nodes: the array ends inside a node (%s fields each)",
                               m->nf == 7 ? "7" : "node_fields'");
            if (num(r, &v, &last, "nodes") < 0)
                return -1;
            f[k] = v;
        }
        if (m->n == m->hdr_nodes)
            return _gcs_v8_vr_fail(r, at, "nodes: more than snapshot.node_count %s", "nodes");
        if (m->n == m->cap && grow32(&m->type, &m->cap, m->n + 1, m->hdr_nodes, 3, &m->self, &m->cnt) < 0) {
            gcs_err_set(r->err, "%s: out of memory for %llu nodes", r->name, (unsigned long long)m->hdr_nodes);
            return -1;
        }
        uint64_t t = f[m->f_type], size = f[m->f_size], ec = f[m->f_count];
        if (t >= m->n_ntypes)
            return _gcs_v8_vr_fail(r, at, "nodes: a node's type is outside %s", "snapshot.meta.node_types");
        uint32_t type = (uint32_t)t;
        if ((int)t == m->nt_object || (int)t == m->nt_native) {
            if (name_type(m, f[m->f_name], &type) < 0) {
                gcs_err_set(r->err, "%s: out of memory", r->name);
                return -1;
            }
        }
        if (size > UINT32_MAX)
            return _gcs_v8_vr_fail(r, at, "nodes: a node's self_size %llu is 4 GiB or more", (unsigned long long)size);
        if (ec > m->hdr_edges || ec > UINT32_MAX)
            return _gcs_v8_vr_fail(r, at, "nodes: a node's edge_count %llu exceeds snapshot.edge_count",
                           (unsigned long long)ec);
        m->type[m->n] = type;
        m->self[m->n] = (uint32_t)size;
        m->cnt[m->n] = (uint32_t)ec;
        m->n++;
    }
    if (m->n != m->hdr_nodes) {
        char msg[120];
        snprintf(msg, sizeof msg, "nodes: %llu nodes, snapshot.node_count says %llu", (unsigned long long)m->n,
                 (unsigned long long)m->hdr_nodes);
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", msg);
    }
    m->have_nodes = 1;
    return 0;
}

int _gcs_v8_read_edges(v8imp *m)
{
    vr *r = &m->r;
    if (!m->have_nodes)
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", "edges come before nodes");
    if (vr_expect(r, '[', "'[' opening edges") < 0)
        return -1;
    if (_gcs_v8_vr_peek(r, "edges") < 0)
        return -1;
    int last = 0;
    if (r->buf[r->pos] == ']') {
        r->pos++;
        last = 1;
    }
    uint64_t f[V8_FIELDS_MAX], v, node = 0, left = m->n ? m->cnt[0] : 0, kept = 0;
    uint64_t node_array = m->n * m->nf;
    const unsigned ef = m->ef;
    const int e_type = m->e_type, e_to = m->e_to;
    while (!last) {
        uint64_t at = vr_off(r);
        for (unsigned k = 0; k < ef; k++) {
            if (last)
                return _gcs_v8_vr_fail(r, at, "edges: the array ends inside an %s", "edge");
            if (num(r, &v, &last, "edges") < 0)
                return -1;
            f[k] = v;
        }
        /* the node that owns this edge: the next with edges left */
        if (m->edges_seen == m->hdr_edges)
            return _gcs_v8_vr_fail(r, at, "edges: more than snapshot.edge_count %llu edges",
                           (unsigned long long)m->hdr_edges);
        while (left == 0) {
            if (node >= m->n)
                return _gcs_v8_vr_fail(r, at, "edges: more edges than the nodes' edge_count %s", "sum");
            m->cnt[node] = (uint32_t)kept;
            kept = 0;
            if (++node == m->n)
                return _gcs_v8_vr_fail(r, at, "edges: more edges than the nodes' edge_count %s", "sum");
            left = m->cnt[node];
        }
        left--;
        m->edges_seen++;
        uint64_t t = f[e_type], to = f[e_to];
        if (t >= m->n_etypes)
            return _gcs_v8_vr_fail(r, at, "edges: an edge's type is outside %s", "snapshot.meta.edge_types");
        if (to >= node_array || to % m->nf) {
            char msg[160];
            snprintf(msg, sizeof msg, "edges: to_node %llu is outside the node array (%llu nodes of %u fields)",
                     (unsigned long long)to, (unsigned long long)m->n, m->nf);
            return _gcs_v8_vr_fail(r, at, "%s", msg);
        }
        if ((int)t == m->et_weak) {
            m->rep.weak_edges++;
            continue;
        }
        if ((int)t == m->et_shortcut && node != 0) {
            m->rep.shortcut_edges++;
            continue;
        }
        if (m->m == m->mcap && grow32(&m->tgt, &m->mcap, m->m + 1, m->hdr_edges, 1, NULL, NULL) < 0) {
            gcs_err_set(r->err, "%s: out of memory for %llu edges", r->name, (unsigned long long)m->hdr_edges);
            return -1;
        }
        if ((int)t == m->et_element) {
            /* marked, to be dropped where the backing store lists the same
             * targets (drop_element_copies) */
            uint64_t w = m->m / 32, old = m->ecap;
            if (w >= m->ecap) {
                if (grow32(&m->elem, &m->ecap, w + 1, m->hdr_edges / 32 + 1, 1, NULL, NULL) < 0) {
                    gcs_err_set(r->err, "%s: out of memory for %llu edges", r->name,
                                (unsigned long long)m->hdr_edges);
                    return -1;
                }
                memset(m->elem + old, 0, (size_t)(m->ecap - old) * sizeof *m->elem);
            }
            m->elem[w] |= 1u << (m->m % 32);
        }
        m->tgt[m->m++] = (uint32_t)(to / m->nf);
        kept++;
    }
    /* the owners of the last edges, and nodes after them without edges */
    for (; node < m->n; node++) {
        if (left) {
            char msg[120];
            snprintf(msg, sizeof msg, "edges: %llu edges, the nodes' edge_count sum is larger",
                     (unsigned long long)m->edges_seen);
            return _gcs_v8_vr_fail(r, vr_off(r), "%s", msg);
        }
        m->cnt[node] = (uint32_t)kept;
        kept = 0;
        if (node + 1 < m->n)
            left = m->cnt[node + 1];
    }
    if (m->edges_seen != m->hdr_edges) {
        char msg[120];
        snprintf(msg, sizeof msg, "edges: %llu edges, snapshot.edge_count says %llu",
                 (unsigned long long)m->edges_seen, (unsigned long long)m->hdr_edges);
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", msg);
    }
    m->have_edges = 1;
    return 0;
}
