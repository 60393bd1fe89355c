/* v8snap_meta.c -- the V8 importer's "snapshot" member (v8snap.c has the
 * importer's overview): its text cut out of the stream, at most 1 MiB, and
 * parsed with jansson; snapshot.meta read by field name (node_fields,
 * edge_fields and their positions; node_types and edge_types: the node
 * types' names, the types named by their class, the edge types dropped or
 * traced through a backing store), node_count and edge_count.  Whatever
 * the order of the fields in this V8 version, the positions found here are
 * what the nodes and edges members are read by (v8snap_nodes.c). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GCS_V8_IMPORTER
#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "heapdump_internal.h"

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
    return _gcs_v8_vr_fail(&m->r, off, "snapshot.meta: %s", what);
}

/* The "snapshot" member: its text cut out of the stream (strings and
 * nesting followed) and parsed with jansson. */
int _gcs_v8_read_meta(v8imp *m)
{
    vr *r = &m->r;
    uint64_t off = vr_off(r);
    if (_gcs_v8_vr_peek(r, "the snapshot object") < 0)
        return -1;
    if (r->buf[r->pos] != '{')
        return _gcs_v8_vr_fail(r, vr_off(r), "%s", "snapshot: expected an object");
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
            return _gcs_v8_vr_fail(r, off, "%s", "snapshot: the member is larger than 1 MiB");
    }
    if (i >= r->len)
        return _gcs_v8_vr_fail(r, off, "truncated snapshot: %s", "the snapshot member does not end");
    json_error_t je;
    json_t *s = json_loadb((const char *)r->buf + start, i + 1 - start, 0, &je);
    if (!s) {
        char msg[260];
        snprintf(msg, sizeof msg, "snapshot: %s", je.text);
        return _gcs_v8_vr_fail(r, off + (je.position > 0 ? (uint64_t)je.position : 0), "%s", msg);
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
