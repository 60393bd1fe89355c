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
 * (HeapSnapshotJSONSerializer); the mapping: docs/heap-dumps.md.
 *
 * The importer's files: this one owns the document's text -- the stream's
 * reading (errors, blanks), strings, the members this reader skips, the
 * "strings" member, the members in order (scan) -- and the import's order
 * of work and entry points; v8snap_meta.c the "snapshot" member (meta),
 * v8snap_nodes.c the "nodes" and "edges" members (the integer scanner, the
 * class-name table, the edges dropped), v8snap_graph.c the graph (element
 * copies, reachability, renumbering, the gcs_snapshot).  What they share:
 * heapdump_internal.h, fenced by GCS_V8_IMPORTER. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GCS_V8_IMPORTER
#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "heapdump_internal.h"

/* ---- the stream ----------------------------------------------------------------- */

/* The window's type vr and its small helpers (vr_off, vr_fill, is_ws,
 * vr_expect) are in heapdump_internal.h (GCS_V8_IMPORTER), static inline,
 * so that every file's loops inline them as before. */

int _gcs_v8_vr_fail(vr *r, uint64_t off, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gcs_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)off, msg);
    return -1;
}

/* The next non-blank byte (not consumed), or -1 at the end (err set, naming
 * what was expected) or on a read error. */
int _gcs_v8_vr_peek(vr *r, const char *what)
{
    for (;;) {
        while (r->pos < r->len && is_ws(r->buf[r->pos]))
            r->pos++;
        if (r->pos < r->len)
            return r->buf[r->pos];
        if (vr_fill(r, 1) < 0)
            return -1;
        if (r->pos == r->len)
            return _gcs_v8_vr_fail(r, vr_off(r), "truncated snapshot: expected %s", what);
    }
}

/* One byte of a string's body (after the opening quote), escapes decoded
 * into UTF-8 in out[0..*n) (up to 4 bytes); 1 for a byte, 0 at the closing
 * quote, -1 on an error. */
static int str_char(vr *r, uint8_t *out, int *n)
{
    if (r->len - r->pos < 12 && vr_fill(r, 12) < 0)
        return -1;
    if (r->pos == r->len)
        return _gcs_v8_vr_fail(r, vr_off(r), "truncated snapshot: %s", "inside a string");
    uint8_t c = r->buf[r->pos];
    if (c == '"') {
        r->pos++;
        return 0;
    }
    if (c < 0x20)
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", "a control character inside a string");
    if (c != '\\') {
        r->pos++;
        out[0] = c;
        *n = 1;
        return 1;
    }
    if (r->len - r->pos < 2)
        return _gcs_v8_vr_fail(r, vr_off(r), "truncated snapshot: %s", "an escape");
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
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", "a bad escape inside a string");
    unsigned u = 0;
    for (int k = 2; k < 6; k++) {
        uint8_t h = r->buf[r->pos + k];
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
              : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0)
            return _gcs_v8_vr_fail(r, vr_off(r), "%s", "a bad \\u escape inside a string");
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
        int c = _gcs_v8_vr_peek(r, what);
        if (c < 0)
            return -1;
        if (c == '"') {
            if (vr_string(r, NULL, 0, what) < 0)
                return -1;
        } else if (c == '[' || c == '{') {
            if (++depth > 1000)
                return _gcs_v8_vr_fail(r, vr_off(r), "%s nests deeper than 1000", what);
            r->pos++;
        } else if (c == ']' || c == '}') {
            if (depth == 0)
                return _gcs_v8_vr_fail(r, vr_off(r), "unexpected '%s'", c == ']' ? "]" : "}");
            depth--;
            r->pos++;
        } else if (c == ',' || c == ':') {
            if (depth == 0)
                return _gcs_v8_vr_fail(r, vr_off(r), "expected %s", what);
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
                return _gcs_v8_vr_fail(r, vr_off(r), "unexpected byte in %s", what);
        }
        if (depth == 0)
            return 0;
    }
}

/* ---- the strings member, the document ---------------------------------------------- */

static int read_strings(v8imp *m)
{
    vr *r = &m->r;
    if (!m->have_nodes)
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", "strings come before nodes");
    if (!(m->names = calloc(m->nused ? m->nused : 1, sizeof *m->names))) {
        gcs_err_set(r->err, "%s: out of memory", r->name);
        return -1;
    }
    if (vr_expect(r, '[', "'[' opening strings") < 0)
        return -1;
    int c = _gcs_v8_vr_peek(r, "strings");
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
            c = _gcs_v8_vr_peek(r, "',' or ']' in strings");
            if (c < 0)
                return -1;
            r->pos++;
            if (c == ']')
                break;
            if (c != ',')
                return _gcs_v8_vr_fail(r, vr_off(r) - 1, "%s", "strings: expected ',' or ']'");
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
                return _gcs_v8_vr_fail(r, at, "%s", "a second snapshot member");
            rc = _gcs_v8_read_meta(m);
            have_meta = 1;
        } else if (strcmp(key, "nodes") == 0 || strcmp(key, "edges") == 0 || strcmp(key, "strings") == 0) {
            if (!have_meta)
                return _gcs_v8_vr_fail(r, at, "%s comes before the snapshot member (its meta)", key);
            if ((key[0] == 'n' && m->have_nodes) || (key[0] == 'e' && m->have_edges)
                || (key[0] == 's' && m->have_strings))
                return _gcs_v8_vr_fail(r, at, "a second %s member", key);
            rc = key[0] == 'n' ? _gcs_v8_read_nodes(m) : key[0] == 'e' ? _gcs_v8_read_edges(m) : read_strings(m);
        } else {
            rc = vr_skip_value(r, key);
        }
        if (rc < 0)
            return -1;
        int c = _gcs_v8_vr_peek(r, "',' or '}'");
        if (c < 0)
            return -1;
        r->pos++;
        if (c == '}')
            break;
        if (c != ',')
            return _gcs_v8_vr_fail(r, vr_off(r) - 1, "%s", "expected ',' or '}' between members");
    }
    for (;;) {
        while (r->pos < r->len && is_ws(r->buf[r->pos]))
            r->pos++;
        if (r->pos < r->len)
            return _gcs_v8_vr_fail(r, vr_off(r), "%s", "bytes after the snapshot's closing '}'");
        if (vr_fill(r, 1) < 0)
            return -1;
        if (r->pos == r->len)
            break;
    }
    static const char *const need[] = {"snapshot", "nodes", "edges", "strings"};
    int have[] = {have_meta, m->have_nodes, m->have_edges, m->have_strings};
    for (int k = 0; k < 4; k++)
        if (!have[k] && (k < 3 || m->nused))
            return _gcs_v8_vr_fail(r, vr_off(r), "the \"%s\" member is missing", need[k]);
    if (m->n == 0)
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", "no nodes (a snapshot has at least its synthetic root)");
    return 0;
}

/* ---- the import ------------------------------------------------------------------ */

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
    g = _gcs_v8_build(m, err);
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
