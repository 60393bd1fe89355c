/* v8snap.c -- V8 heap snapshots (.heapsnapshot, as node's
 * v8.writeHeapSnapshot(), --heapsnapshot-signal and Chrome DevTools write
 * them) imported as heap snapshots.
 *
 * The document is one JSON object whose "snapshot" member describes the
 * layout ("meta": the names of the node and edge fields, the names of the
 * node and edge types) and whose "nodes" and "edges" members are flat arrays
 * of integers, node_fields / edge_fields numbers per node / edge; "strings"
 * holds the names.  A multi-GB snapshot is streamed once through a bounded
 * window (plain or gzip: dumpstream.c): the small "snapshot" member
 * is cut out and parsed with jansson, so that fields are found by name
 * whatever their order in this V8 version; the arrays go through a
 * hand-written integer scanner; every other member is skipped unparsed.
 *
 *   nodes    per node: its type (or its class name, as an index into a small
 *            table of distinct names), its self size, its edge count.
 *   edges    in node order (node i owns the next edge_count[i] edges): weak
 *            edges and shortcut edges (except the synthetic root's) are
 *            dropped -- a marker does not follow them; the rest are kept as
 *            target node indices, which is already the snapshot's layout,
 *            element edges marked in a bitmap.
 *   then     an object's element edges are dropped where its backing store
 *            lists them (drop_element_copies): V8 writes each element twice.
 *   strings  only the names of the classes the nodes use are kept.
 *   then     the nodes reachable from the synthetic root (node 0) over the
 *            kept edges, in the dump's node order, become the snapshot.
 *
 * Memory beyond the snapshot: 12 B per node during the streaming pass (type,
 * size, edge count), 4 B per kept edge; the reachability pass turns the
 * counts into offsets in place and adds its queue (4 B per node, freed
 * before the snapshot is allocated) and a visited bitmap with a count per
 * 64 nodes that gives each node its new id (0.6 B per node).  Format: V8's src/profiler/heap-snapshot-generator.cc
 * (HeapSnapshotJSONSerializer); the mapping: docs/heap-dumps.md. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "hprof_internal.h"

#define V8_BUF (4u << 20)          /* the stream window */
#define V8_HEADER_MAX (1u << 20)   /* the "snapshot" member's text */
#define V8_NAME_MAX 200            /* a class name is cut there */
#define V8_FIELDS_MAX 64           /* node_fields / edge_fields entries */

/* ---- the stream ----------------------------------------------------------------- */

typedef gcs_dumpstream vr;

static uint64_t vr_off(const vr *r) { return r->base + r->pos; }

__attribute__((format(printf, 3, 4))) static int vr_fail(vr *r, uint64_t off, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gcs_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)off, msg);
    return -1;
}

/* Tries to make k (<= V8_BUF) bytes available at buf + pos; fewer only at
 * the end of the dump.  0, or -1 on a read error. */
static int vr_fill(vr *r, size_t k)
{
    if (r->len - r->pos >= k || r->kind == DS_MEMORY || r->eof)
        return 0;
    return _gcs_dumpstream_refill(r, V8_BUF);
}

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* The next non-blank byte (not consumed), or -1 at the end (err set, naming
 * what was expected) or on a read error. */
static int vr_peek(vr *r, const char *what)
{
    for (;;) {
        while (r->pos < r->len && is_ws(r->buf[r->pos]))
            r->pos++;
        if (r->pos < r->len)
            return r->buf[r->pos];
        if (vr_fill(r, 1) < 0)
            return -1;
        if (r->pos == r->len)
            return vr_fail(r, vr_off(r), "truncated snapshot: expected %s", what);
    }
}

static int vr_expect(vr *r, int c, const char *what)
{
    int got = vr_peek(r, what);
    if (got < 0)
        return -1;
    if (got != c)
        return vr_fail(r, vr_off(r), "expected %s", what);
    r->pos++;
    return 0;
}

/* One byte of a string's body (after the opening quote), escapes decoded
 * into UTF-8 in out[0..*n) (up to 4 bytes); 1 for a byte, 0 at the closing
 * quote, -1 on an error. */
static int str_char(vr *r, uint8_t *out, int *n)
{
    if (r->len - r->pos < 12 && vr_fill(r, 12) < 0)
        return -1;
    if (r->pos == r->len)
        return vr_fail(r, vr_off(r), "truncated snapshot: %s", "inside a string");
    uint8_t c = r->buf[r->pos];
    if (c == '"') {
        r->pos++;
        return 0;
    }
    if (c < 0x20)
        return vr_fail(r, vr_off(r), "%s", "a control character inside a string");
    if (c != '\\') {
        r->pos++;
        out[0] = c;
        *n = 1;
        return 1;
    }
    if (r->len - r->pos < 2)
        return vr_fail(r, vr_off(r), "truncated snapshot: %s", "an escape");
    uint8_t e = r->buf[r->pos + 1];
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *f = e ? strchr(from, e) : NULL;
    if (f) {
        r->pos += 2;
        out[0] = (uint8_t)to[f - from];
        *n = 1;
        return 1;
    }
    if (e != 'u' || r->len - r->pos < 6)
        return vr_fail(r, vr_off(r), "%s", "a bad escape inside a string");
    unsigned u = 0;
    for (int k = 2; k < 6; k++) {
        uint8_t h = r->buf[r->pos + k];
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
              : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0)
            return vr_fail(r, vr_off(r), "%s", "a bad \\u escape inside a string");
        u = u << 4 | (unsigned)d;
    }
    r->pos += 6;
    /* a lone surrogate half (V8 writes them unpaired) becomes U+FFFD */
    if (u >= 0xD800 && u <= 0xDFFF)
        u = 0xFFFD;
    if (u < 0x80) {
        out[0] = (uint8_t)u;
        *n = 1;
    } else if (u < 0x800) {
        out[0] = (uint8_t)(0xC0 | u >> 6);
        out[1] = (uint8_t)(0x80 | (u & 0x3F));
        *n = 2;
    } else {
        out[0] = (uint8_t)(0xE0 | u >> 12);
        out[1] = (uint8_t)(0x80 | (u >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (u & 0x3F));
        *n = 3;
    }
    return 1;
}

/* A string (the opening quote next): its first cap - 1 bytes into out
 * (NUL-terminated, may be NULL), the rest skipped.  0 or -1. */
static int vr_string(vr *r, char *out, size_t cap, const char *what)
{
    if (vr_expect(r, '"', what) < 0)
        return -1;
    size_t k = 0;
    for (;;) {
        /* long runs of plain bytes (scripts' sources) skipped fast */
        if (!out || k + 1 >= cap) {
            const uint8_t *p = r->buf + r->pos, *e = r->buf + r->len;
            while (p < e && *p != '"' && *p != '\\' && *p >= 0x20)
                p++;
            r->pos = (size_t)(p - r->buf);
        }
        uint8_t c[4];
        int n = 0, s = str_char(r, c, &n);
        if (s < 0)
            return -1;
        if (s == 0)
            break;
        for (int j = 0; j < n; j++)
            if (out && k + 1 < cap)
                out[k++] = (char)c[j];
    }
    if (out)
        out[k] = 0;
    return 0;
}

/* Skips one JSON value of any kind (the members this reader does not use). */
static int vr_skip_value(vr *r, const char *what)
{
    int depth = 0;
    for (;;) {
        int c = vr_peek(r, what);
        if (c < 0)
            return -1;
        if (c == '"') {
            if (vr_string(r, NULL, 0, what) < 0)
                return -1;
        } else if (c == '[' || c == '{') {
            if (++depth > 1000)
                return vr_fail(r, vr_off(r), "%s nests deeper than 1000", what);
            r->pos++;
        } else if (c == ']' || c == '}') {
            if (depth == 0)
                return vr_fail(r, vr_off(r), "unexpected '%s'", c == ']' ? "]" : "}");
            depth--;
            r->pos++;
        } else if (c == ',' || c == ':') {
            if (depth == 0)
                return vr_fail(r, vr_off(r), "expected %s", what);
            r->pos++;
        } else {
            /* a number, true, false, null */
            size_t n = 0;
            for (;;) {
                if (r->pos == r->len && (vr_fill(r, 1) < 0 || r->pos == r->len))
                    break;
                uint8_t b = r->buf[r->pos];
                if (!((b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || b == '-' || b == '+' || b == '.'
                      || (b >= 'A' && b <= 'Z')))
                    break;
                r->pos++;
                n++;
            }
            if (n == 0)
                return vr_fail(r, vr_off(r), "unexpected byte in %s", what);
        }
        if (depth == 0)
            return 0;
    }
}

/* ---- the integer arrays ---------------------------------------------------------- */

/* The next integer of an array and the separator after it: *last = 1 at
 * the array's end.  V8 writes non-negative integers below 2^53. */
static int num_slow(vr *r, uint64_t *v, int *last, const char *arr)
{
    if (vr_peek(r, arr) < 0)
        return -1;
    if (r->len - r->pos < 24 && vr_fill(r, 24) < 0)
        return -1;
    const uint8_t *p = r->buf + r->pos, *e = r->buf + r->len;
    if (p == e || *p < '0' || *p > '9')
        return vr_fail(r, vr_off(r), "%s: expected a non-negative integer", arr);
    uint64_t x = 0;
    int d = 0;
    while (p < e && *p >= '0' && *p <= '9') {
        if (++d > 16)
            return vr_fail(r, vr_off(r), "%s: a number of more than 16 digits", arr);
        x = x * 10 + (uint64_t)(*p++ - '0');
    }
    r->pos = (size_t)(p - r->buf);
    int c = vr_peek(r, arr);
    if (c < 0)
        return -1;
    if (c != ',' && c != ']')
        return vr_fail(r, vr_off(r), "%s: expected ',' or ']' after a number", arr);
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

/* ---- the importer's state -------------------------------------------------------- */

typedef struct v8imp {
    vr r;
    gcs_heapdump_report rep;
    /* the layout from snapshot.meta */
    unsigned nf, ef;                    /* numbers per node / edge */
    int f_type, f_name, f_size, f_count; /* node field positions */
    int e_type, e_to;                   /* edge field positions */
    unsigned n_ntypes, n_etypes;
    char **ntype_names;                 /* [n_ntypes] */
    int nt_object, nt_native;           /* node types named by their class; -1: none */
    int et_weak, et_shortcut;           /* dropped edge types; -1: none */
    int et_element, nt_array, nt_hidden; /* an array's element edges, its backing store, and the
                                            runtime's oddballs; -1: none */
    uint64_t hdr_nodes, hdr_edges;      /* node_count, edge_count */
    /* per node */
    uint64_t n, cap;
    uint32_t *type, *self, *cnt;        /* cnt: edge_count, then the kept edges */
    /* kept edges */
    uint64_t m, mcap, edges_seen;
    uint32_t *tgt;
    uint32_t *elem;                     /* bit per kept edge: an element edge (NULL: none) */
    uint64_t ecap;                      /* its words */
    /* distinct class names: string index -> type id (n_ntypes + k) */
    uint64_t *nkeys;                    /* string index + 1; 0: empty */
    uint32_t *nvals;
    size_t ncap, nused;
    char **names;                       /* [nused] */
    uint64_t nstrings;
    int have_nodes, have_edges, have_strings;
} v8imp;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static size_t name_slot(const v8imp *m, uint64_t sidx)
{
    size_t i = (size_t)mix(sidx) & (m->ncap - 1);
    while (m->nkeys[i] && m->nkeys[i] != sidx + 1)
        i = (i + 1) & (m->ncap - 1);
    return i;
}

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

/* ---- snapshot.meta ------------------------------------------------------------------ */

static int field_index(json_t *fields, const char *name)
{
    for (size_t i = 0; i < json_array_size(fields); i++) {
        const char *s = json_string_value(json_array_get(fields, i));
        if (s && strcmp(s, name) == 0)
            return (int)i;
    }
    return -1;
}

static int meta_fail(v8imp *m, uint64_t off, const char *what)
{
    return vr_fail(&m->r, off, "snapshot.meta: %s", what);
}

/* The "snapshot" member: its text cut out of the stream (strings and
 * nesting followed) and parsed with jansson. */
static int read_meta(v8imp *m)
{
    vr *r = &m->r;
    uint64_t off = vr_off(r);
    if (vr_peek(r, "the snapshot object") < 0)
        return -1;
    if (r->buf[r->pos] != '{')
        return vr_fail(r, vr_off(r), "%s", "snapshot: expected an object");
    /* the member is measured first, then copied: it lies in the window */
    if (vr_fill(r, V8_HEADER_MAX) < 0)
        return -1;
    size_t start = r->pos, i = r->pos;
    int depth = 0, in_str = 0;
    for (; i < r->len; i++) {
        uint8_t c = r->buf[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                break;
        }
        if (i - start >= V8_HEADER_MAX)
            return vr_fail(r, off, "%s", "snapshot: the member is larger than 1 MiB");
    }
    if (i >= r->len)
        return vr_fail(r, off, "truncated snapshot: %s", "the snapshot member does not end");
    json_error_t je;
    json_t *s = json_loadb((const char *)r->buf + start, i + 1 - start, 0, &je);
    if (!s) {
        char msg[260];
        snprintf(msg, sizeof msg, "snapshot: %s", je.text);
        return vr_fail(r, off + (je.position > 0 ? (uint64_t)je.position : 0), "%s", msg);
    }
    r->pos = i + 1;
    int rc = -1;
    json_t *meta = json_object_get(s, "meta");
    json_t *nfields = json_object_get(meta, "node_fields"), *efields = json_object_get(meta, "edge_fields");
    json_t *ntypes = json_object_get(meta, "node_types"), *etypes = json_object_get(meta, "edge_types");
    json_t *nc = json_object_get(s, "node_count"), *ec = json_object_get(s, "edge_count");
    if (!json_is_object(meta)) {
        meta_fail(m, off, "missing");
        goto out;
    }
    if (!json_is_array(nfields) || !json_array_size(nfields) || json_array_size(nfields) > V8_FIELDS_MAX) {
        meta_fail(m, off, "node_fields missing or not an array of 1-64 names");
        goto out;
    }
    if (!json_is_array(efields) || !json_array_size(efields) || json_array_size(efields) > V8_FIELDS_MAX) {
        meta_fail(m, off, "edge_fields missing or not an array of 1-64 names");
        goto out;
    }
    m->nf = (unsigned)json_array_size(nfields);
    m->ef = (unsigned)json_array_size(efields);
    static const char *const need_n[] = {"type", "name", "self_size", "edge_count"};
    static const char *const need_e[] = {"type", "to_node"};
    int *pos_n[] = {&m->f_type, &m->f_name, &m->f_size, &m->f_count}, *pos_e[] = {&m->e_type, &m->e_to};
    char msg[120];
    for (int k = 0; k < 4; k++)
        if ((*pos_n[k] = field_index(nfields, need_n[k])) < 0) {
            snprintf(msg, sizeof msg, "node_fields lacks \"%s\"", need_n[k]);
            meta_fail(m, off, msg);
            goto out;
        }
    for (int k = 0; k < 2; k++)
        if ((*pos_e[k] = field_index(efields, need_e[k])) < 0) {
            snprintf(msg, sizeof msg, "edge_fields lacks \"%s\"", need_e[k]);
            meta_fail(m, off, msg);
            goto out;
        }
    /* node_types[type] and edge_types[type]: the list of type names */
    json_t *nt = json_array_get(ntypes, (size_t)m->f_type), *et = json_array_get(etypes, (size_t)m->e_type);
    if (!json_is_array(nt) || !json_array_size(nt) || json_array_size(nt) > 4096) {
        meta_fail(m, off, "node_types has no list of type names at the \"type\" field");
        goto out;
    }
    if (!json_is_array(et) || !json_array_size(et) || json_array_size(et) > 4096) {
        meta_fail(m, off, "edge_types has no list of type names at the \"type\" field");
        goto out;
    }
    m->n_ntypes = (unsigned)json_array_size(nt);
    m->n_etypes = (unsigned)json_array_size(et);
    m->ntype_names = calloc(m->n_ntypes, sizeof *m->ntype_names);
    if (!m->ntype_names) {
        gcs_err_set(r->err, "%s: out of memory", r->name);
        goto out;
    }
    for (unsigned k = 0; k < m->n_ntypes; k++) {
        const char *t = json_string_value(json_array_get(nt, k));
        char buf[V8_NAME_MAX + 3];
        snprintf(buf, sizeof buf, "(%s)", t ? t : "?");
        if (!(m->ntype_names[k] = strdup(buf))) {
            gcs_err_set(r->err, "%s: out of memory", r->name);
            goto out;
        }
    }
    m->nt_object = field_index(nt, "object");
    m->nt_native = field_index(nt, "native");
    m->et_weak = field_index(et, "weak");
    m->et_shortcut = field_index(et, "shortcut");
    m->et_element = field_index(et, "element");
    m->nt_array = field_index(nt, "array");
    m->nt_hidden = field_index(nt, "hidden");
    if (!json_is_integer(nc) || json_integer_value(nc) < 0 || !json_is_integer(ec) || json_integer_value(ec) < 0) {
        meta_fail(m, off, "snapshot.node_count or snapshot.edge_count missing or negative");
        goto out;
    }
    m->hdr_nodes = (uint64_t)json_integer_value(nc);
    if (m->hdr_nodes > GCS_SNAPSHOT_MAX_OBJECTS) {
        meta_fail(m, off, "snapshot.node_count is over the 2^32 - 2 objects a snapshot holds");
        goto out;
    }
    m->hdr_edges = (uint64_t)json_integer_value(ec);
    rc = 0;
out:
    json_decref(s);
    return rc;
}

/* ---- nodes, edges, strings --------------------------------------------------------- */

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

static int read_nodes(v8imp *m)
{
    vr *r = &m->r;
    if (vr_expect(r, '[', "'[' opening nodes") < 0)
        return -1;
    if (vr_peek(r, "nodes") < 0)
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
                return vr_fail(r, at, "nodes: the array ends inside a node (%s fields each)",
                               m->nf == 7 ? "7" : "node_fields'");
            if (num(r, &v, &last, "nodes") < 0)
                return -1;
            f[k] = v;
        }
        if (m->n == m->hdr_nodes)
            return vr_fail(r, at, "nodes: more than snapshot.node_count %s", "nodes");
        if (m->n == m->cap && grow32(&m->type, &m->cap, m->n + 1, m->hdr_nodes, 3, &m->self, &m->cnt) < 0) {
            gcs_err_set(r->err, "%s: out of memory for %llu nodes", r->name, (unsigned long long)m->hdr_nodes);
            return -1;
        }
        uint64_t t = f[m->f_type], size = f[m->f_size], ec = f[m->f_count];
        if (t >= m->n_ntypes)
            return vr_fail(r, at, "nodes: a node's type is outside %s", "snapshot.meta.node_types");
        uint32_t type = (uint32_t)t;
        if ((int)t == m->nt_object || (int)t == m->nt_native) {
            if (name_type(m, f[m->f_name], &type) < 0) {
                gcs_err_set(r->err, "%s: out of memory", r->name);
                return -1;
            }
        }
        if (size > UINT32_MAX)
            return vr_fail(r, at, "nodes: a node's self_size %llu is 4 GiB or more", (unsigned long long)size);
        if (ec > m->hdr_edges || ec > UINT32_MAX)
            return vr_fail(r, at, "nodes: a node's edge_count %llu exceeds snapshot.edge_count",
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
        return vr_fail(r, vr_off(r), "%s", msg);
    }
    m->have_nodes = 1;
    return 0;
}

static int read_edges(v8imp *m)
{
    vr *r = &m->r;
    if (!m->have_nodes)
        return vr_fail(r, vr_off(r), "%s", "edges come before nodes");
    if (vr_expect(r, '[', "'[' opening edges") < 0)
        return -1;
    if (vr_peek(r, "edges") < 0)
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
                return vr_fail(r, at, "edges: the array ends inside an %s", "edge");
            if (num(r, &v, &last, "edges") < 0)
                return -1;
            f[k] = v;
        }
        /* the node that owns this edge: the next with edges left */
        if (m->edges_seen == m->hdr_edges)
            return vr_fail(r, at, "edges: more than snapshot.edge_count %llu edges",
                           (unsigned long long)m->hdr_edges);
        while (left == 0) {
            if (node >= m->n)
                return vr_fail(r, at, "edges: more edges than the nodes' edge_count %s", "sum");
            m->cnt[node] = (uint32_t)kept;
            kept = 0;
            if (++node == m->n)
                return vr_fail(r, at, "edges: more edges than the nodes' edge_count %s", "sum");
            left = m->cnt[node];
        }
        left--;
        m->edges_seen++;
        uint64_t t = f[e_type], to = f[e_to];
        if (t >= m->n_etypes)
            return vr_fail(r, at, "edges: an edge's type is outside %s", "snapshot.meta.edge_types");
        if (to >= node_array || to % m->nf) {
            char msg[160];
            snprintf(msg, sizeof msg, "edges: to_node %llu is outside the node array (%llu nodes of %u fields)",
                     (unsigned long long)to, (unsigned long long)m->n, m->nf);
            return vr_fail(r, at, "%s", msg);
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
            return vr_fail(r, vr_off(r), "%s", msg);
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
        return vr_fail(r, vr_off(r), "%s", msg);
    }
    m->have_edges = 1;
    return 0;
}

static int read_strings(v8imp *m)
{
    vr *r = &m->r;
    if (!m->have_nodes)
        return vr_fail(r, vr_off(r), "%s", "strings come before nodes");
    if (!(m->names = calloc(m->nused ? m->nused : 1, sizeof *m->names))) {
        gcs_err_set(r->err, "%s: out of memory", r->name);
        return -1;
    }
    if (vr_expect(r, '[', "'[' opening strings") < 0)
        return -1;
    int c = vr_peek(r, "strings");
    if (c < 0)
        return -1;
    if (c == ']') {
        r->pos++;
    } else {
        for (;;) {
            char buf[V8_NAME_MAX + 1];
            size_t s = m->ncap ? name_slot(m, m->nstrings) : 0;
            int want = m->ncap && m->nkeys[s];
            if (vr_string(r, want ? buf : NULL, sizeof buf, "a string") < 0)
                return -1;
            if (want && !(m->names[m->nvals[s]] = strdup(buf))) {
                gcs_err_set(r->err, "%s: out of memory", r->name);
                return -1;
            }
            m->nstrings++;
            c = vr_peek(r, "',' or ']' in strings");
            if (c < 0)
                return -1;
            r->pos++;
            if (c == ']')
                break;
            if (c != ',')
                return vr_fail(r, vr_off(r) - 1, "%s", "strings: expected ',' or ']'");
        }
    }
    m->have_strings = 1;
    return 0;
}

/* The document: {"snapshot":{...},"nodes":[...],"edges":[...],...,"strings":[...]} */
static int scan(v8imp *m)
{
    vr *r = &m->r;
    if (vr_expect(r, '{', "'{' (a V8 heap snapshot is a JSON object)") < 0)
        return -1;
    int have_meta = 0;
    for (;;) {
        char key[64];
        uint64_t at = vr_off(r);
        if (vr_string(r, key, sizeof key, "a member name") < 0 || vr_expect(r, ':', "':'") < 0)
            return -1;
        int rc;
        if (strcmp(key, "snapshot") == 0) {
            if (have_meta)
                return vr_fail(r, at, "%s", "a second snapshot member");
            rc = read_meta(m);
            have_meta = 1;
        } else if (strcmp(key, "nodes") == 0 || strcmp(key, "edges") == 0 || strcmp(key, "strings") == 0) {
            if (!have_meta)
                return vr_fail(r, at, "%s comes before the snapshot member (its meta)", key);
            if ((key[0] == 'n' && m->have_nodes) || (key[0] == 'e' && m->have_edges)
                || (key[0] == 's' && m->have_strings))
                return vr_fail(r, at, "a second %s member", key);
            rc = key[0] == 'n' ? read_nodes(m) : key[0] == 'e' ? read_edges(m) : read_strings(m);
        } else {
            rc = vr_skip_value(r, key);
        }
        if (rc < 0)
            return -1;
        int c = vr_peek(r, "',' or '}'");
        if (c < 0)
            return -1;
        r->pos++;
        if (c == '}')
            break;
        if (c != ',')
            return vr_fail(r, vr_off(r) - 1, "%s", "expected ',' or '}' between members");
    }
    for (;;) {
        while (r->pos < r->len && is_ws(r->buf[r->pos]))
            r->pos++;
        if (r->pos < r->len)
            return vr_fail(r, vr_off(r), "%s", "bytes after the snapshot's closing '}'");
        if (vr_fill(r, 1) < 0)
            return -1;
        if (r->pos == r->len)
            break;
    }
    static const char *const need[] = {"snapshot", "nodes", "edges", "strings"};
    int have[] = {have_meta, m->have_nodes, m->have_edges, m->have_strings};
    for (int k = 0; k < 4; k++)
        if (!have[k] && (k < 3 || m->nused))
            return vr_fail(r, vr_off(r), "the \"%s\" member is missing", need[k]);
    if (m->n == 0)
        return vr_fail(r, vr_off(r), "%s", "no nodes (a snapshot has at least its synthetic root)");
    return 0;
}

/* ---- the graph --------------------------------------------------------------------- */

static void imp_free(v8imp *m)
{
    _gcs_dumpstream_free(&m->r);
    for (unsigned k = 0; m->ntype_names && k < m->n_ntypes; k++)
        free(m->ntype_names[k]);
    free(m->ntype_names);
    for (size_t k = 0; m->names && k < m->nused; k++)
        free(m->names[k]);
    free(m->names);
    free(m->nkeys);
    free(m->nvals);
    free(m->type);
    free(m->self);
    free(m->cnt);
    free(m->tgt);
    free(m->elem);
}

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
static gcs_snapshot *build(v8imp *m, gcs_err *err)
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

static gcs_snapshot *import(const char *path, const void *data, size_t len, const char *name,
                            gcs_heapdump_report *rep_out, gcs_err *err)
{
    v8imp *m = calloc(1, sizeof *m);
    if (!m) {
        gcs_err_set(err, "%s: out of memory", name);
        return NULL;
    }
    gcs_snapshot *g = NULL;
    m->r.name = name;
    m->r.err = err;
    err->msg[0] = 0;
    m->rep.format = GCS_HEAPDUMP_V8;
    m->nt_object = m->nt_native = m->et_weak = m->et_shortcut = m->et_element = m->nt_array = m->nt_hidden = -1;
    if (path) {
        if (_gcs_dumpstream_open(&m->r, path, V8_BUF, NULL) < 0)
            goto done;
    } else {
        m->r.buf = data ? data : (const uint8_t *)"";
        m->r.len = data ? len : 0;
    }
    if (scan(m) < 0)
        goto done;
    m->rep.dump_bytes = vr_off(&m->r);
    m->rep.passes = 1;
    m->rep.nodes = m->n;
    m->rep.edges_total = m->edges_seen;
    if (m->n > GCS_SNAPSHOT_MAX_OBJECTS) {
        gcs_err_set(err, "%s: %llu nodes: a snapshot holds at most %llu", name, (unsigned long long)m->n,
                    (unsigned long long)GCS_SNAPSHOT_MAX_OBJECTS);
        goto done;
    }
    g = build(m, err);
    if (g && rep_out)
        *rep_out = m->rep;
done:
    imp_free(m);
    free(m);
    return g;
}

gcs_snapshot *gcs_heapdump_import_v8_mem(const void *data, size_t len, const char *name, gcs_heapdump_report *rep,
                                         gcs_err *err)
{
    return import(NULL, data, len, name ? name : "snapshot", rep, err);
}

gcs_snapshot *_gcs_v8_import(const char *path, gcs_heapdump_report *rep, gcs_err *err)
{
    gcs_snapshot *g = import(path, NULL, 0, path, rep, err);
    if (g && rep)
        rep->compressed = _gcs_heapdump_gzipped(path);
    return g;
}
