/* hprof_classes.c -- the HPROF importer's classes: between the passes,
 * each dumped class's reference fields flattened through its superclass
 * chain and its JVM size (resolve_classes), and the snapshot's type names,
 * a class's in Java's spelling (build_types, java_name); after pass 2 of a
 * dump whose edges pass 2 wrote in place, the class objects at their
 * indices (write_classes). */

#define GCS_HPROF_IMPORTER
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "heapdump_internal.h"

static const char *const prim_names[12] = {[B_BOOLEAN] = "boolean[]", [B_CHAR] = "char[]",
                                           [B_FLOAT] = "float[]",     [B_DOUBLE] = "double[]",
                                           [B_BYTE] = "byte[]",       [B_SHORT] = "short[]",
                                           [B_INT] = "int[]",         [B_LONG] = "long[]"};
static const char prim_sig[12] = {[B_BOOLEAN] = 'Z', [B_CHAR] = 'C', [B_FLOAT] = 'F', [B_DOUBLE] = 'D',
                                  [B_BYTE] = 'B',    [B_SHORT] = 'S', [B_INT] = 'I',   [B_LONG] = 'J'};

/* ---- between the passes ------------------------------------------------------------ */

/* "java/lang/String" -> "java.lang.String", "[[I" -> "int[][]",
 * "[Ljava/lang/Object;" -> "java.lang.Object[]". */
static char *java_name(const char *s)
{
    size_t dims = 0;
    while (s[dims] == '[')
        dims++;
    const char *base = s + dims;
    char prim[16];
    size_t blen = strlen(base);
    if (dims) {
        if (base[0] == 'L' && blen >= 2 && base[blen - 1] == ';') {
            base++;
            blen -= 2;
        } else if (blen == 1) {
            for (int t = 0; t < 12; t++)
                if (prim_sig[t] && prim_sig[t] == base[0]) {
                    snprintf(prim, sizeof prim, "%.*s", (int)(strlen(prim_names[t]) - 2), prim_names[t]);
                    base = prim;
                    blen = strlen(prim);
                }
        }
    }
    char *o = malloc(blen + 2 * dims + 1);
    if (!o)
        return NULL;
    for (size_t i = 0; i < blen; i++)
        o[i] = base[i] == '/' ? '.' : base[i];
    for (size_t d = 0; d < dims; d++)
        memcpy(o + blen + 2 * d, "[]", 2);
    o[blen + 2 * dims] = 0;
    return o;
}

/* Flattens each dumped class's reference fields through its superclass
 * chain (the dump lists a class's own fields, then its superclass's, ...)
 * and its JVM size. */
int _gcs_hprof_resolve_classes(imp *m, gcs_err *err)
{
    cls *cs = m->classes.p;
    const uint8_t *ft = m->fields.p;
    for (size_t i = 0; i < m->classes.n; i++) {
        cls *c = &cs[i];
        if (!c->dumped)
            continue;
        c->ref_start = m->refs.n;
        uint64_t bytes = 0, jvm = 0, depth = 0;
        for (cls *k = c; k; depth++) {
            if (depth > 65536) {
                gcs_err_set(err, "%s: the superclass chain of class 0x%llx loops", m->r.name,
                            (unsigned long long)c->id);
                return -1;
            }
            for (uint64_t f = 0; f < k->nfields; f++) {
                uint8_t t = ft[k->field_start + f];
                if (t == B_OBJECT) {
                    uint32_t *o = _gcs_hprof_vec_push(&m->refs);
                    if (!o)
                        goto oom;
                    *o = (uint32_t)bytes;
                }
                bytes += (uint64_t)value_size(m, t);
                jvm += (uint64_t)jvm_value_size(m, t);
            }
            if (bytes > UINT32_MAX) {
                gcs_err_set(err, "%s: class 0x%llx has more than 4 GiB of fields", m->r.name,
                            (unsigned long long)c->id);
                return -1;
            }
            if (!k->super)
                break;
            cls *s = _gcs_hprof_class_find(m, k->super);
            if (!s || !s->dumped) {
                gcs_err_set(err, "%s: class 0x%llx names superclass 0x%llx, which the dump does not describe",
                            m->r.name, (unsigned long long)k->id, (unsigned long long)k->super);
                return -1;
            }
            k = s;
        }
        c->nrefs = (uint32_t)(m->refs.n - c->ref_start);
        c->value_bytes = (uint32_t)bytes;
        c->jvm_size = (uint32_t)align8(m->hdr + jvm);
        m->nfields_total += c->instances * c->nrefs;
    }
    return 0;
oom:
    gcs_err_set(err, "%s: out of memory", m->r.name);
    return -1;
}

/* Type names: one per dumped class (class objects are java.lang.Class's
 * type), primitive arrays the dumped "[I" ... classes' types, or a type of
 * their own when the dump lacks such a class. */
int _gcs_hprof_build_types(imp *m, gcs_err *err)
{
    cls *cs = m->classes.p;
    size_t nc = m->classes.n;
    char **names = calloc(nc + 12, sizeof *names);
    if (!names)
        goto oom;
    uint32_t nt = 0;
    m->class_type = GCS_SNAPSHOT_TYPE_NONE;
    for (int t = 0; t < 12; t++)
        m->prim_type[t] = GCS_SNAPSHOT_TYPE_NONE;
    uint32_t jlc_index = UINT32_MAX;
    for (size_t i = 0; i < nc; i++) {
        if (!cs[i].dumped)
            continue;
        const char *raw = _gcs_hprof_str_get(m, cs[i].name_sid);
        char unnamed[40];
        if (!raw) {
            snprintf(unnamed, sizeof unnamed, "class@0x%llx", (unsigned long long)cs[i].id);
            raw = unnamed;
        }
        if (!(names[nt] = java_name(raw)))
            goto oom;
        if (strcmp(raw, "java/lang/Class") == 0) {
            m->class_type = nt;
            jlc_index = (uint32_t)i;
        }
        if (raw[0] == '[' && raw[1] && !raw[2])
            for (int t = 0; t < 12; t++)
                if (prim_sig[t] && prim_sig[t] == raw[1])
                    m->prim_type[t] = nt;
        cs[i].type = nt++;
    }
    if (m->class_type == GCS_SNAPSHOT_TYPE_NONE && !(names[m->class_type = nt++] = strdup("java.lang.Class")))
        goto oom;
    for (int t = 0; t < 12; t++)
        if (prim_size[t] && m->prim_type[t] == GCS_SNAPSHOT_TYPE_NONE
            && !(names[m->prim_type[t] = nt++] = strdup(prim_names[t])))
            goto oom;
    int rc = gcs_snapshot_set_types(m->g, nt, (const char *const *)names, err);
    for (uint32_t k = 0; k < nt; k++)
        free(names[k]);
    free(names);
    m->jlc = jlc_index;
    return rc;
oom:
    if (names)
        for (size_t k = 0; k < nc + 12; k++)
            free(names[k]);
    free(names);
    gcs_err_set(err, "%s: out of memory for class names", m->r.name);
    return -1;
}

/* ---- the class objects, after pass 2 (direct) ---------------------------------------- */

/* Direct: each class's mirror at its index, as class_dump places it
 * otherwise: its size and type, and its edges (superclass, loader, static
 * references) at the place its run kept (past_holes) or edges_direct gave
 * it.  -1 with err set when a hole was not passed (the dump changed). */
int _gcs_hprof_write_classes(imp *m, gcs_err *err)
{
    gcs_snapshot *g = m->g;
    const cls *cl = m->classes.p, *jlc = m->jlc < m->classes.n ? cl + m->jlc : NULL;
    const uint64_t *sv = m->statics.p;
    for (size_t k = 0; k < m->classes.n; k++) {
        const cls *c = &cl[k];
        if (!c->dumped)
            continue;
        uint32_t idx = _gcs_idmap_find(&m->map, c->id);
        gcs_assert_internal(idx != IDMAP_NONE);
        if (m->class_edge[k] != UINT64_MAX)
            g->edge_start[idx] = m->class_edge[k];
        uint64_t size = align8((jlc ? jlc->jvm_size : m->hdr) + c->static_bytes);
        uint64_t nptrs = 2 + c->nstatics, words = object_words(size, nptrs);
        if (words > UINT32_MAX || nptrs > UINT32_MAX || g->edge_start[idx] + nptrs > m->nfields_total) {
            gcs_err_set(err, "%s: class 0x%llx: no place for its references (the dump changed?)", m->r.name,
                        (unsigned long long)c->id);
            return -1;
        }
        g->words[idx] = (uint32_t)words;
        g->nptrs[idx] = (uint32_t)nptrs;
        g->type[idx] = m->class_type;
        uint32_t *out = g->edges + g->edge_start[idx];
        for (uint64_t j = 0; j < nptrs; j++)
            out[j] = ref_index(&m->map, j == 0 ? c->super : j == 1 ? c->loader : sv[c->static_start + j - 2], 0,
                               &m->rep.references, &m->rep.missing_refs);
        m->rep.jvm_bytes += size;
    }
    return 0;
}
