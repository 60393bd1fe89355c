/* hprof.c -- Java heap dumps (HPROF 1.0.1-1.0.3) imported as heap snapshots.
 *
 * Two passes over the dump, each streamed through one bounded buffer (plain
 * or gzip alike, through zlib's gzread, which reads concatenated gzip
 * members as `GC.heap_dump -gz` writes them):
 *
 *   pass 1  strings, class loads, class dumps (fields, statics), root
 *           records; every object's id (8 bytes per object) and the counts
 *           that size the snapshot: instances per class, array lengths.
 *   then    the ids sorted (an LSD radix sort: the order is the dump's
 *           address order) and indexed by a directory over the id range, so
 *           that an id is found in a bucket of about two ids -- no hash
 *           table of 16+ bytes per object; the snapshot allocated.
 *   pass 2  per object its size, type and pointer count, stored at its
 *           index, and its references as indices, appended in file order to
 *           a temporary edge array; the edges are then permuted into index
 *           order with the file-order offset kept per object.
 *
 * Memory beyond the snapshot: ids 8 B per object (16 B during the sort),
 * file-order offsets 8 B per object, the directory about 2 B per object, and
 * the temporary edges 4 B per edge.
 *
 * Byte order: HPROF is big-endian.  Layout of the records: the HPROF format
 * of the JDK (jdk/src/hotspot/share/services/heapDumper.cpp's comment) and
 * Android's additions; docs/heap-dumps.md. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "hprof_internal.h"

#define HPROF_BUF (4u << 20)   /* the stream window; bigger single items are refused */

/* top-level record tags */
enum {
    T_UTF8 = 0x01, T_LOAD_CLASS = 0x02, T_HEAP_DUMP = 0x0C, T_HEAP_DUMP_SEGMENT = 0x1C, T_HEAP_DUMP_END = 0x2C,
};
/* heap dump sub-record tags */
enum {
    S_ROOT_UNKNOWN = 0xFF, S_ROOT_JNI_GLOBAL = 0x01, S_ROOT_JNI_LOCAL = 0x02, S_ROOT_JAVA_FRAME = 0x03,
    S_ROOT_NATIVE_STACK = 0x04, S_ROOT_STICKY_CLASS = 0x05, S_ROOT_THREAD_BLOCK = 0x06,
    S_ROOT_MONITOR_USED = 0x07, S_ROOT_THREAD_OBJECT = 0x08, S_CLASS_DUMP = 0x20, S_INSTANCE_DUMP = 0x21,
    S_OBJ_ARRAY_DUMP = 0x22, S_PRIM_ARRAY_DUMP = 0x23,
    /* Android */
    S_ROOT_INTERNED_STRING = 0x89, S_ROOT_FINALIZING = 0x8A, S_ROOT_DEBUGGER = 0x8B,
    S_ROOT_REFERENCE_CLEANUP = 0x8C, S_ROOT_VM_INTERNAL = 0x8D, S_ROOT_JNI_MONITOR = 0x8E,
    S_UNREACHABLE = 0x90, S_PRIM_ARRAY_NODATA = 0xC3, S_HEAP_DUMP_INFO = 0xFE,
};
/* basic types */
enum { B_OBJECT = 2, B_BOOLEAN = 4, B_CHAR, B_FLOAT, B_DOUBLE, B_BYTE, B_SHORT, B_INT, B_LONG };

static const char *const prim_names[12] = {[B_BOOLEAN] = "boolean[]", [B_CHAR] = "char[]",
                                           [B_FLOAT] = "float[]",     [B_DOUBLE] = "double[]",
                                           [B_BYTE] = "byte[]",       [B_SHORT] = "short[]",
                                           [B_INT] = "int[]",         [B_LONG] = "long[]"};
static const char prim_sig[12] = {[B_BOOLEAN] = 'Z', [B_CHAR] = 'C', [B_FLOAT] = 'F', [B_DOUBLE] = 'D',
                                  [B_BYTE] = 'B',    [B_SHORT] = 'S', [B_INT] = 'I',   [B_LONG] = 'J'};
static const uint8_t prim_size[12] = {[B_BOOLEAN] = 1, [B_CHAR] = 2, [B_FLOAT] = 4, [B_DOUBLE] = 8,
                                      [B_BYTE] = 1,    [B_SHORT] = 2, [B_INT] = 4,   [B_LONG] = 8};

/* ---- the stream ----------------------------------------------------------------- */

typedef gcs_dumpstream hr;

static uint64_t hr_off(const hr *r) { return r->base + r->pos; }

static int hr_fail(hr *r, uint64_t off, const char *msg)
{
    gcs_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)off, msg);
    return -1;
}

/* Makes k (<= HPROF_BUF) bytes available at buf + pos: 1, 0 at a clean end
 * of the dump (nothing left), -1 on a truncated dump or a read error. */
static int hr_more(hr *r, size_t k, const char *what)
{
    if (r->len - r->pos >= k)
        return 1;
    if (r->gz && !r->eof) {
        if (_gcs_dumpstream_refill(r, HPROF_BUF) < 0)
            return -1;
        if (r->len >= k)
            return 1;
    }
    if (r->len == r->pos && what == NULL)
        return 0;
    char msg[160];
    snprintf(msg, sizeof msg, "truncated dump: %s needs %zu bytes, %zu left", what ? what : "a record", k,
             r->len - r->pos);
    return hr_fail(r, hr_off(r), msg);
}

static int hr_skip(hr *r, uint64_t n, const char *what)
{
    while (n > 0) {
        if (r->len == r->pos && hr_more(r, 1, what) < 0)
            return -1;
        size_t k = r->len - r->pos < n ? r->len - r->pos : (size_t)n;
        r->pos += k;
        n -= k;
    }
    return 0;
}

static inline uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

/* ---- the importer's state -------------------------------------------------------- */

typedef struct vec {
    void *p;
    size_t n, cap, elem;
} vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        void *p = realloc(v->p, cap * v->elem);
        if (!p)
            return NULL;
        v->p = p;
        v->cap = cap;
    }
    return (char *)v->p + v->elem * v->n++;
}

/* id -> value, open addressing */
typedef struct idmap {
    uint64_t *keys, *vals;
    size_t cap, n;
} idmap;

typedef struct cls {
    uint64_t id, super, loader, name_sid;
    int dumped;
    uint64_t field_start, nfields;      /* own instance fields: types in fields vec */
    uint64_t static_start, nstatics;    /* static reference values in statics vec */
    uint32_t static_bytes;              /* JVM bytes of the static fields (the mirror holds them) */
    uint64_t instances;
    /* resolved after pass 1 */
    uint64_t ref_start;                 /* flat ref offsets (dump bytes) in refs vec */
    uint32_t nrefs, value_bytes, jvm_size;
    uint32_t type;
} cls;

typedef struct imp {
    hr r;
    uint32_t idsz;
    gcs_heapdump_report rep;
    idmap strings;  /* string id -> offset in sblob */
    vec sblob;      /* char */
    idmap classmap; /* class id -> index in classes */
    vec classes;    /* cls */
    vec fields;     /* uint8_t: instance field types */
    vec statics;    /* uint64_t: static reference values */
    vec refs;       /* uint32_t: flat ref offsets */
    vec rootids;    /* uint64_t */
    vec ids;        /* uint64_t */
    uint64_t nfields_total;
    /* the directory */
    uint64_t id_min;
    unsigned shift;
    uint32_t *dir;
    uint64_t ndir;
    /* layout */
    uint32_t ref, hdr, ahdr;
    uint32_t class_type, prim_type[12]; /* type indices */
    uint32_t jlc;                       /* java.lang.Class's cls, or UINT32_MAX */
    uint64_t timestamp_ms;
    /* pass 2 */
    gcs_snapshot *g;
    uint64_t *fileoff;
    uint32_t *tmp;
    uint64_t tmp_n;
} imp;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Open addressing; key 0 is never stored (HPROF's NULL id).  Returns the
 * slot of key (found or empty). */
static size_t slot_of(const uint64_t *keys, size_t cap, uint64_t key)
{
    size_t i = (size_t)mix(key) & (cap - 1);
    while (keys[i] && keys[i] != key)
        i = (i + 1) & (cap - 1);
    return i;
}

/* The slot of key in map (key 0 is HPROF's NULL and never stored), grown
 * to keep the load under 1/2; SIZE_MAX when out of memory.  *fresh: the key
 * was not there (it is now, its value to be set by the caller). */
static size_t idmap_slot(idmap *t, uint64_t key, int *fresh)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        uint64_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return SIZE_MAX;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->keys[i]) {
                size_t j = slot_of(k, cap, t->keys[i]);
                k[j] = t->keys[i];
                v[j] = t->vals[i];
            }
        free(t->keys);
        free(t->vals);
        t->keys = k;
        t->vals = v;
        t->cap = cap;
    }
    size_t j = slot_of(t->keys, t->cap, key);
    *fresh = !t->keys[j];
    if (*fresh) {
        t->keys[j] = key;
        t->n++;
    }
    return j;
}

/* The slot holding key, or SIZE_MAX. */
static size_t idmap_find(const idmap *t, uint64_t key)
{
    if (!key || !t->cap)
        return SIZE_MAX;
    size_t j = slot_of(t->keys, t->cap, key);
    return t->keys[j] ? j : SIZE_MAX;
}

static int str_put(imp *m, uint64_t sid, const uint8_t *s, size_t n)
{
    int fresh;
    size_t j = idmap_slot(&m->strings, sid, &fresh);
    if (j == SIZE_MAX)
        return -1;
    m->strings.vals[j] = m->sblob.n;
    for (size_t i = 0; i <= n; i++) {
        char *c = vec_push(&m->sblob);
        if (!c)
            return -1;
        *c = i < n ? (s[i] ? (char)s[i] : '?') : 0;
    }
    return 0;
}

static const char *str_get(const imp *m, uint64_t sid)
{
    size_t j = idmap_find(&m->strings, sid);
    return j != SIZE_MAX ? (const char *)m->sblob.p + m->strings.vals[j] : NULL;
}

/* The class of id, created when absent; NULL when out of memory. */
static cls *class_get(imp *m, uint64_t id)
{
    int fresh;
    size_t j = idmap_slot(&m->classmap, id, &fresh);
    if (j == SIZE_MAX)
        return NULL;
    if (!fresh)
        return (cls *)m->classes.p + m->classmap.vals[j];
    cls *c = vec_push(&m->classes);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->id = id;
    m->classmap.vals[j] = m->classes.n - 1;
    return c;
}

static cls *class_find(const imp *m, uint64_t id)
{
    size_t j = idmap_find(&m->classmap, id);
    return j != SIZE_MAX ? (cls *)m->classes.p + m->classmap.vals[j] : NULL;
}

/* ---- ids -> indices ----------------------------------------------------------------- */

#define NOT_FOUND UINT32_MAX

static inline uint32_t id_index(const imp *m, uint64_t id)
{
    const uint64_t *ids = m->ids.p;
    uint64_t d = id - m->id_min;
    if (id < m->id_min || (d >> m->shift) >= m->ndir)
        return NOT_FOUND;
    uint32_t lo = m->dir[d >> m->shift], hi = m->dir[(d >> m->shift) + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->dir[(d >> m->shift) + 1] && ids[lo] == id ? lo : NOT_FOUND;
}

/* LSD radix sort of the keys' offsets from the smallest, over only the
 * bits the id span needs, in as few rounds of at most 16 bits as that takes
 * (a heap of 10^7 objects spans ~2^28 bytes: two rounds of 14 bits, whose
 * 16384 buckets the scatter keeps in cache better than 65536); a round
 * where every key has the same digit is skipped. */
static int sort_ids(uint64_t *a, size_t n)
{
    if (n < 2)
        return 0;
    uint64_t lo = a[0], hi = a[0];
    for (size_t i = 1; i < n; i++) {
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
    }
    unsigned bits = hi > lo ? 64 - (unsigned)__builtin_clzll(hi - lo) : 0;
    if (!bits)
        return 0;
    /* digits of up to 16 bits; of 8 below 2^16 ids, where clearing and
     * summing 2^16 counters per round would cost more than the sort (a
     * small dump whose ids span 64 bits: 4 rounds of 512 KiB of counters) */
    unsigned maxw = n < 65536 ? 8 : 16;
    unsigned rounds = (bits + maxw - 1) / maxw, width = (bits + rounds - 1) / rounds;
    size_t nb = (size_t)1 << width, mask = nb - 1;
    uint64_t *t = malloc(n * sizeof *t);
    size_t *cnt = malloc(nb * sizeof *cnt);
    if (!t || !cnt) {
        free(t);
        free(cnt);
        return -1;
    }
    uint64_t *src = a, *dst = t;
    for (unsigned sh = 0; sh < bits; sh += width) {
        memset(cnt, 0, nb * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[((src[i] - lo) >> sh) & mask]++;
        if (cnt[((src[0] - lo) >> sh) & mask] == n)
            continue;
        size_t sum = 0;
        for (size_t d = 0; d < nb; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[((src[i] - lo) >> sh) & mask]++] = src[i];
        uint64_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    free(t);
    free(cnt);
    return 0;
}

static int build_directory(imp *m)
{
    const uint64_t *ids = m->ids.p;
    size_t n = m->ids.n;
    m->id_min = n ? ids[0] : 0;
    uint64_t span = n ? ids[n - 1] - ids[0] + 1 : 1;
    m->shift = 0;
    while ((span >> m->shift) > (uint64_t)n / 2 + 1)
        m->shift++;
    m->ndir = (span >> m->shift) + 1;
    m->dir = malloc((m->ndir + 1) * sizeof *m->dir);
    if (!m->dir)
        return -1;
    size_t i = 0;
    for (uint64_t b = 0; b <= m->ndir; b++) {
        while (i < n && ((ids[i] - m->id_min) >> m->shift) < b)
            i++;
        m->dir[b] = (uint32_t)i;
    }
    return 0;
}

/* ---- the records --------------------------------------------------------------------- */

static inline uint64_t get_id(const imp *m, const uint8_t *p) { return m->idsz == 8 ? be64(p) : be32(p); }

/* Per-object work of pass 2: object idx gets its size, type, pointer
 * count and file-order edge offset. */
static int place(imp *m, uint64_t id, uint64_t off, uint64_t jvm_bytes, uint64_t nptrs, uint32_t type,
                 uint32_t *idx_out)
{
    uint32_t idx = id_index(m, id);
    gcs_snapshot *g = m->g;
    gcs_assert_internal(idx != NOT_FOUND); /* pass 1 saw every id of pass 2 */
    if (idx == NOT_FOUND || g->words[idx] != 0)
        return hr_fail(&m->r, off, idx == NOT_FOUND ? "object appeared between passes" : "object dumped twice");
    uint64_t payload = (jvm_bytes - 8 + 7) / 8;
    uint64_t words = payload > nptrs ? payload : nptrs;
    if (words == 0)
        words = 1;
    if (words > UINT32_MAX || nptrs > UINT32_MAX)
        return hr_fail(&m->r, off, "object too large for a snapshot (2^32 words)");
    if (m->tmp_n + nptrs > g->nfields)
        return hr_fail(&m->r, off, "more references than the first pass counted (the dump changed?)");
    g->words[idx] = (uint32_t)words;
    g->nptrs[idx] = (uint32_t)nptrs;
    g->type[idx] = type;
    m->fileoff[idx] = m->tmp_n;
    m->rep.jvm_bytes += jvm_bytes;
    *idx_out = idx;
    return 0;
}

static inline void add_ref(imp *m, uint64_t ref)
{
    uint32_t t = GCS_SNAPSHOT_NULL;
    if (ref) {
        t = id_index(m, ref);
        if (t == NOT_FOUND) {
            m->rep.missing_refs++;
            t = GCS_SNAPSHOT_NULL;
        } else {
            m->rep.references++;
        }
    }
    m->tmp[m->tmp_n++] = t;
}

static uint64_t align8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

static int value_size(const imp *m, uint8_t type)
{
    if (type == B_OBJECT)
        return (int)m->idsz;
    return type < 12 && prim_size[type] ? prim_size[type] : -1;
}

static int jvm_value_size(const imp *m, uint8_t type) { return type == B_OBJECT ? (int)m->ref : prim_size[type]; }

/* CLASS_DUMP: pass 1 keeps its fields and statics; pass 2 places the class
 * object (the mirror: java.lang.Class's fields plus the statics) with edges
 * to its superclass, its loader and its static references. */
static int class_dump(imp *m, int pass, uint64_t off, uint64_t seg_end)
{
    hr *r = &m->r;
    size_t fixed = 7 * m->idsz + 8 + 2;
    if (hr_off(r) + fixed > seg_end)
        return hr_fail(r, off, "class dump runs past the end of its segment");
    if (hr_more(r, fixed, "a class dump") < 0)
        return -1;
    const uint8_t *p = r->buf + r->pos;
    uint64_t id = get_id(m, p), super = get_id(m, p + m->idsz + 4), loader = get_id(m, p + 2 * m->idsz + 4);
    uint16_t ncp = be16(p + 7 * m->idsz + 8);
    r->pos += fixed;
    cls *c = NULL;
    if (pass == 1) {
        if (!id)
            return hr_fail(r, off, "class dump of class id 0");
        c = class_get(m, id);
        if (!c)
            return hr_fail(r, off, "out of memory");
        if (c->dumped)
            return hr_fail(r, off, "class dumped twice");
        c->dumped = 1;
        c->super = super;
        c->loader = loader;
        uint64_t *slot = vec_push(&m->ids);
        if (!slot)
            return hr_fail(r, off, "out of memory");
        *slot = id;
        m->rep.classes++;
    } else {
        c = class_find(m, id);
    }
    /* constant pool: u2 index, u1 type, value */
    for (unsigned k = 0; k < ncp; k++) {
        if (hr_off(r) + 3 > seg_end || hr_more(r, 3, "a constant pool entry") < 0)
            return hr_off(r) + 3 > seg_end ? hr_fail(r, off, "class dump runs past the end of its segment") : -1;
        int vs = value_size(m, r->buf[r->pos + 2]);
        if (vs < 0)
            return hr_fail(r, hr_off(r), "constant pool entry of unknown type");
        if (hr_off(r) + 3 + (uint64_t)vs > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_skip(r, 3 + (uint64_t)vs, "a constant pool entry") < 0)
            return -1;
    }
    /* statics: id name, u1 type, value */
    if (hr_off(r) + 2 > seg_end || hr_more(r, 2, "a class dump") < 0)
        return hr_off(r) + 2 > seg_end ? hr_fail(r, off, "class dump runs past the end of its segment") : -1;
    uint16_t nst = be16(r->buf + r->pos);
    r->pos += 2;
    if (pass == 1) {
        c->static_start = m->statics.n;
        c->static_bytes = 0;
    }
    uint64_t nstatic_refs = 0;
    for (unsigned k = 0; k < nst; k++) {
        if (hr_off(r) + m->idsz + 1 > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_more(r, m->idsz + 1, "a static field") < 0)
            return -1;
        uint8_t type = r->buf[r->pos + m->idsz];
        int vs = value_size(m, type);
        if (vs < 0)
            return hr_fail(r, hr_off(r), "static field of unknown type");
        if (hr_off(r) + m->idsz + 1 + (uint64_t)vs > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_more(r, m->idsz + 1 + (size_t)vs, "a static field") < 0)
            return -1;
        if (type == B_OBJECT) {
            nstatic_refs++;
            if (pass == 1) {
                uint64_t *v = vec_push(&m->statics);
                if (!v)
                    return hr_fail(r, off, "out of memory");
                *v = get_id(m, r->buf + r->pos + m->idsz + 1);
            }
        }
        if (pass == 1)
            c->static_bytes += (uint32_t)jvm_value_size(m, type);
        r->pos += m->idsz + 1 + (size_t)vs;
    }
    if (pass == 1)
        c->nstatics = nstatic_refs;
    /* instance fields: id name, u1 type */
    if (hr_off(r) + 2 > seg_end || hr_more(r, 2, "a class dump") < 0)
        return hr_off(r) + 2 > seg_end ? hr_fail(r, off, "class dump runs past the end of its segment") : -1;
    uint16_t nif = be16(r->buf + r->pos);
    r->pos += 2;
    if (pass == 1)
        c->field_start = m->fields.n, c->nfields = nif;
    for (unsigned k = 0; k < nif; k++) {
        if (hr_off(r) + m->idsz + 1 > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_more(r, m->idsz + 1, "an instance field") < 0)
            return -1;
        uint8_t type = r->buf[r->pos + m->idsz];
        if (value_size(m, type) < 0)
            return hr_fail(r, hr_off(r), "instance field of unknown type");
        if (pass == 1) {
            uint8_t *t = vec_push(&m->fields);
            if (!t)
                return hr_fail(r, off, "out of memory");
            *t = type;
        }
        r->pos += m->idsz + 1;
    }
    if (pass == 1) {
        m->nfields_total += 2 + nstatic_refs;
        return 0;
    }
    /* pass 2: the mirror */
    cls *jlc = m->jlc < m->classes.n ? (cls *)m->classes.p + m->jlc : NULL;
    uint64_t size = align8((jlc ? jlc->jvm_size : m->hdr) + c->static_bytes);
    uint32_t idx;
    if (place(m, id, off, size, 2 + c->nstatics, m->class_type, &idx) < 0)
        return -1;
    add_ref(m, c->super);
    add_ref(m, c->loader);
    if (c->nstatics) { /* statics.p is NULL while no class has a static reference */
        const uint64_t *sv = (const uint64_t *)m->statics.p + c->static_start;
        for (uint64_t k = 0; k < c->nstatics; k++)
            add_ref(m, sv[k]);
    }
    return 0;
}

static const char *sub_name(uint8_t tag)
{
    switch (tag) {
    case S_INSTANCE_DUMP: return "an instance dump";
    case S_OBJ_ARRAY_DUMP: return "an object array dump";
    case S_PRIM_ARRAY_DUMP: return "a primitive array dump";
    default: return "a root record";
    }
}

/* Fixed bytes after the tag of a root sub-record; 0 for other tags. */
static size_t root_bytes(const imp *m, uint8_t tag)
{
    size_t id = m->idsz;
    switch (tag) {
    case S_ROOT_UNKNOWN: case S_ROOT_STICKY_CLASS: case S_ROOT_MONITOR_USED: case S_ROOT_INTERNED_STRING:
    case S_ROOT_FINALIZING: case S_ROOT_DEBUGGER: case S_ROOT_REFERENCE_CLEANUP: case S_ROOT_VM_INTERNAL:
    case S_UNREACHABLE:
        return id;
    case S_ROOT_JNI_GLOBAL: return 2 * id;
    case S_ROOT_JNI_LOCAL: case S_ROOT_JAVA_FRAME: case S_ROOT_THREAD_OBJECT: case S_ROOT_JNI_MONITOR:
        return id + 8;
    case S_ROOT_NATIVE_STACK: case S_ROOT_THREAD_BLOCK: return id + 4;
    default: return 0;
    }
}

/* One heap dump (segment) body of len bytes. */
static int heap_segment(imp *m, int pass, uint64_t len)
{
    hr *r = &m->r;
    uint64_t end = hr_off(r) + len;
    const size_t id = m->idsz;
    while (hr_off(r) < end) {
        uint64_t off = hr_off(r);
        if (hr_more(r, 1, "a sub-record tag") < 0)
            return -1;
        uint8_t tag = r->buf[r->pos++];
        size_t rb = root_bytes(m, tag);
        if (rb) {
            if (off + 1 + rb > end)
                return hr_fail(r, off, "root record runs past the end of its segment");
            if (hr_more(r, rb, "a root record") < 0)
                return -1;
            if (pass == 1 && tag != S_UNREACHABLE) {
                uint64_t *v = vec_push(&m->rootids);
                if (!v)
                    return hr_fail(r, off, "out of memory");
                *v = get_id(m, r->buf + r->pos);
                m->rep.root_records++;
            }
            r->pos += rb;
            continue;
        }
        switch (tag) {
        case S_CLASS_DUMP:
            if (class_dump(m, pass, off, end) < 0)
                return -1;
            break;
        case S_HEAP_DUMP_INFO:
            if (off + 1 + 4 + id > end)
                return hr_fail(r, off, "heap dump info runs past the end of its segment");
            if (hr_skip(r, 4 + id, "heap dump info") < 0)
                return -1;
            break;
        case S_INSTANCE_DUMP: {
            size_t fixed = 2 * id + 8;
            if (off + 1 + fixed > end)
                return hr_fail(r, off, "instance dump runs past the end of its segment");
            if (hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), cid = get_id(m, p + id + 4);
            uint32_t nbytes = be32(p + 2 * id + 4);
            r->pos += fixed;
            if (off + 1 + fixed + nbytes > end)
                return hr_fail(r, off, "instance dump runs past the end of its segment");
            if (pass == 1) {
                uint64_t *slot = vec_push(&m->ids);
                cls *c = class_get(m, cid);
                if (!slot || !c)
                    return hr_fail(r, off, "out of memory");
                *slot = oid;
                c->instances++;
                m->rep.instances++;
                if (hr_skip(r, nbytes, sub_name(tag)) < 0)
                    return -1;
                break;
            }
            cls *c = class_find(m, cid);
            if (!c || !c->dumped) {
                char msg[96];
                snprintf(msg, sizeof msg, "instance of class 0x%llx, which the dump does not describe",
                         (unsigned long long)cid);
                return hr_fail(r, off, msg);
            }
            if (nbytes != c->value_bytes) {
                char msg[128];
                snprintf(msg, sizeof msg, "instance with %u bytes of field values, its class declares %u",
                         nbytes, c->value_bytes);
                return hr_fail(r, off, msg);
            }
            if (nbytes > HPROF_BUF)
                return hr_fail(r, off, "instance with more than 4 MiB of field values");
            if (hr_more(r, nbytes, sub_name(tag)) < 0)
                return -1;
            uint32_t idx;
            if (place(m, oid, off, c->jvm_size, c->nrefs, c->type, &idx) < 0)
                return -1;
            const uint8_t *v = r->buf + r->pos;
            if (c->nrefs) { /* refs.p is NULL while no class has a reference field */
                const uint32_t *ro = (const uint32_t *)m->refs.p + c->ref_start;
                for (uint32_t k = 0; k < c->nrefs; k++)
                    add_ref(m, get_id(m, v + ro[k]));
            }
            r->pos += nbytes;
            break;
        }
        case S_OBJ_ARRAY_DUMP: {
            size_t fixed = 2 * id + 8;
            if (off + 1 + fixed > end)
                return hr_fail(r, off, "object array dump runs past the end of its segment");
            if (hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), n = be32(p + id + 4), acid = get_id(m, p + id + 8);
            r->pos += fixed;
            if (off + 1 + fixed + n * id > end)
                return hr_fail(r, off, "object array dump runs past the end of its segment");
            if (pass == 1) {
                uint64_t *slot = vec_push(&m->ids);
                if (!slot)
                    return hr_fail(r, off, "out of memory");
                *slot = oid;
                m->nfields_total += n;
                m->rep.object_arrays++;
                if (hr_skip(r, n * id, sub_name(tag)) < 0)
                    return -1;
                break;
            }
            cls *ac = class_find(m, acid);
            uint32_t idx;
            if (place(m, oid, off, align8(m->ahdr + n * m->ref), n, ac && ac->dumped ? ac->type : GCS_SNAPSHOT_TYPE_NONE,
                      &idx) < 0)
                return -1;
            for (uint64_t k = 0; k < n;) {
                size_t chunk = n - k > HPROF_BUF / 8 ? HPROF_BUF / 8 : (size_t)(n - k);
                if (hr_more(r, chunk * id, sub_name(tag)) < 0)
                    return -1;
                const uint8_t *q = r->buf + r->pos;
                if (id == 8)
                    for (size_t j = 0; j < chunk; j++)
                        add_ref(m, be64(q + 8 * j));
                else
                    for (size_t j = 0; j < chunk; j++)
                        add_ref(m, be32(q + 4 * j));
                r->pos += chunk * id;
                k += chunk;
            }
            break;
        }
        case S_PRIM_ARRAY_DUMP:
        case S_PRIM_ARRAY_NODATA: {
            size_t fixed = id + 9;
            if (off + 1 + fixed > end)
                return hr_fail(r, off, "primitive array dump runs past the end of its segment");
            if (hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), n = be32(p + id + 4);
            uint8_t et = p[id + 8];
            r->pos += fixed;
            if (et >= 12 || !prim_size[et])
                return hr_fail(r, off, "primitive array of unknown element type");
            uint64_t data = tag == S_PRIM_ARRAY_DUMP ? n * prim_size[et] : 0;
            if (off + 1 + fixed + data > end)
                return hr_fail(r, off, "primitive array dump runs past the end of its segment");
            if (pass == 1) {
                uint64_t *slot = vec_push(&m->ids);
                if (!slot)
                    return hr_fail(r, off, "out of memory");
                *slot = oid;
                m->rep.primitive_arrays++;
            } else {
                uint32_t idx;
                if (place(m, oid, off, align8(m->ahdr + n * prim_size[et]), 0, m->prim_type[et], &idx) < 0)
                    return -1;
            }
            if (hr_skip(r, data, sub_name(tag)) < 0)
                return -1;
            break;
        }
        default: {
            char msg[96];
            snprintf(msg, sizeof msg, "unknown heap dump sub-record tag 0x%02x", tag);
            return hr_fail(r, off, msg);
        }
        }
    }
    if (hr_off(r) != end)
        return hr_fail(r, end, "sub-record runs past the end of its segment");
    return 0;
}

/* The file header: "JAVA PROFILE 1.0.x\0", u4 id size, u8 time. */
static int read_header(imp *m)
{
    hr *r = &m->r;
    static const char magic[] = "JAVA PROFILE 1.0.";
    if (hr_more(r, 19, "the header") < 0)
        return -1;
    if (memcmp(r->buf + r->pos, magic, sizeof magic - 1) != 0)
        return hr_fail(r, 0, "not an HPROF heap dump (no \"JAVA PROFILE 1.0.\" magic)");
    char v = (char)r->buf[r->pos + 17];
    if ((v != '1' && v != '2' && v != '3') || r->buf[r->pos + 18] != 0)
        return hr_fail(r, 17, "unsupported HPROF version (1.0.1, 1.0.2 and 1.0.3 are read)");
    snprintf(m->rep.version, sizeof m->rep.version, "1.0.%c", v);
    r->pos += 19;
    if (hr_more(r, 12, "the header") < 0)
        return -1;
    m->idsz = be32(r->buf + r->pos);
    if (m->idsz != 4 && m->idsz != 8) {
        char msg[80];
        snprintf(msg, sizeof msg, "identifier size %u (4 or 8 expected)", m->idsz);
        return hr_fail(r, hr_off(r), msg);
    }
    m->rep.id_bytes = m->idsz;
    m->timestamp_ms = be64(r->buf + r->pos + 4);
    r->pos += 12;
    return 0;
}

static int scan(imp *m, int pass)
{
    hr *r = &m->r;
    if (read_header(m) < 0)
        return -1;
    for (;;) {
        uint64_t off = hr_off(r);
        int more = hr_more(r, 9, NULL);
        if (more <= 0)
            return more;
        if (r->len - r->pos < 9)
            return hr_fail(r, off, "truncated dump: a record header needs 9 bytes");
        const uint8_t *p = r->buf + r->pos;
        uint8_t tag = p[0];
        uint32_t len = be32(p + 5);
        r->pos += 9;
        switch (tag) {
        case T_UTF8:
            if (len < m->idsz)
                return hr_fail(r, off, "string record shorter than an identifier");
            if (pass == 1 && len <= HPROF_BUF) {
                if (hr_more(r, len, "a string record") < 0)
                    return -1;
                if (str_put(m, get_id(m, r->buf + r->pos), r->buf + r->pos + m->idsz, len - m->idsz) < 0)
                    return hr_fail(r, off, "out of memory");
                r->pos += len;
            } else if (hr_skip(r, len, "a string record") < 0) {
                return -1;
            }
            break;
        case T_LOAD_CLASS:
            if (len != 8 + 2 * m->idsz)
                return hr_fail(r, off, "class load record of the wrong length");
            if (hr_more(r, len, "a class load record") < 0)
                return -1;
            if (pass == 1) {
                cls *c = class_get(m, get_id(m, r->buf + r->pos + 4));
                if (!c)
                    return hr_fail(r, off, "out of memory");
                c->name_sid = get_id(m, r->buf + r->pos + 8 + m->idsz);
            }
            r->pos += len;
            break;
        case T_HEAP_DUMP:
        case T_HEAP_DUMP_SEGMENT:
            if (heap_segment(m, pass, len) < 0)
                return -1;
            break;
        case T_HEAP_DUMP_END:
        case 0x03: case 0x04: case 0x05: case 0x06: case 0x07: case 0x0A: case 0x0B: case 0x0D: case 0x0E:
            if (hr_skip(r, len, "a record") < 0)
                return -1;
            break;
        default:
            /* Framed by its length: a record of a later version or a vendor
             * is skipped, and counted in the report. */
            m->rep.skipped_records += pass == 1;
            if (hr_skip(r, len, "a record") < 0)
                return -1;
        }
    }
}

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
static int resolve_classes(imp *m, gcs_err *err)
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
                    uint32_t *o = vec_push(&m->refs);
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
            cls *s = class_find(m, k->super);
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
static int build_types(imp *m, gcs_err *err)
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
        const char *raw = str_get(m, cs[i].name_sid);
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

/* ---- the import ---------------------------------------------------------------------- */

static int open_pass(imp *m, const char *path, const void *data, size_t len)
{
    hr *r = &m->r;
    if (path)
        return _gcs_dumpstream_open(r, path, HPROF_BUF);
    r->pos = 0;
    r->base = 0;
    r->eof = 0;
    r->buf = data ? data : (const uint8_t *)"";
    r->len = data ? len : 0;
    return 0;
}

static void imp_free(imp *m)
{
    if (m->r.gz)
        gzclose(m->r.gz);
    free(m->r.own);
    free(m->strings.keys);
    free(m->strings.vals);
    free(m->sblob.p);
    free(m->classmap.keys);
    free(m->classmap.vals);
    free(m->classes.p);
    free(m->fields.p);
    free(m->statics.p);
    free(m->refs.p);
    free(m->rootids.p);
    free(m->ids.p);
    free(m->dir);
    free(m->fileoff);
    free(m->tmp);
}

/* Addresses: the dump's (object ids are addresses in HotSpot and ART), each
 * object moved up only as far as needed not to overlap its predecessor --
 * a snapshot's pointer fields are 8 bytes, so an array of compressed
 * references is wider in the snapshot than in the JVM. */
static void place_addresses(imp *m)
{
    gcs_snapshot *g = m->g;
    const uint64_t *ids = m->ids.p;
    uint64_t n = g->nobjects, prev_end = 0;
    int real = n && ids[n - 1] - ids[0] < (1ull << 48);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t want = real ? ((ids[i] - ids[0] + 7) & ~7ull) + 8 : 0, a = prev_end + 8;
        if (want >= a)
            a = want;
        else if (real)
            m->rep.moved_objects++;
        g->addr[i] = a;
        prev_end = a + 8 * (uint64_t)g->words[i];
    }
    g->params.heap_limit = (prev_end + 65535) & ~65535ull;
    if (!g->params.heap_limit)
        g->params.heap_limit = 65536;
    g->params.layout = real ? GCS_SNAPSHOT_LAYOUT_DUMP_ORDER : GCS_SNAPSHOT_LAYOUT_UNKNOWN_ORDER;
}

static gcs_snapshot *import(const char *path, const void *data, size_t len, const char *name,
                            gcs_heapdump_report *rep_out, gcs_err *err)
{
    imp *m = calloc(1, sizeof *m);
    if (!m) {
        gcs_err_set(err, "%s: out of memory", name);
        return NULL;
    }
    m->r.name = name;
    m->r.err = err;
    m->classes.elem = sizeof(cls);
    m->fields.elem = 1;
    m->statics.elem = m->rootids.elem = m->ids.elem = 8;
    m->refs.elem = 4;
    m->sblob.elem = 1;
    m->rep.format = GCS_HEAPDUMP_HPROF;
    m->jlc = UINT32_MAX;
    gcs_snapshot *g = NULL;
    gcs_err e2;

    /* pass 1 */
    if (open_pass(m, path, data, len) < 0 || scan(m, 1) < 0)
        goto fail;
    m->rep.dump_bytes = hr_off(&m->r);
    m->rep.passes = 1;
    uint64_t n = m->ids.n;
    if (n > GCS_SNAPSHOT_MAX_OBJECTS) {
        gcs_err_set(err, "%s: %llu objects: a snapshot holds at most %llu", name, (unsigned long long)n,
                    (unsigned long long)GCS_SNAPSHOT_MAX_OBJECTS);
        goto fail;
    }
    if (sort_ids(m->ids.p, n) < 0) {
        gcs_err_set(err, "%s: out of memory sorting %llu object ids", name, (unsigned long long)n);
        goto fail;
    }
    const uint64_t *ids = m->ids.p;
    for (uint64_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1]) {
            gcs_err_set(err, "%s: object id 0x%llx is dumped twice", name, (unsigned long long)ids[i]);
            goto fail;
        }
    if (n && ids[0] == 0) {
        gcs_err_set(err, "%s: an object has id 0 (HPROF's NULL)", name);
        goto fail;
    }
    /* The layout (docs/heap-dumps.md): 4-byte ids, a 32-bit JVM; 8-byte ids
     * over less than 32 GiB, compressed references; compressed class
     * pointers with 8-byte ids either way (HotSpot's default since JDK 8). */
    uint64_t span = n ? ids[n - 1] - ids[0] : 0;
    m->ref = m->idsz == 4 || span < (32ull << 30) ? 4 : 8;
    m->hdr = m->idsz == 4 ? 8 : 12;
    m->ahdr = m->idsz == 4 ? 12 : 16;
    m->rep.ref_bytes = m->ref;
    m->rep.object_header_bytes = m->hdr;
    m->rep.array_header_bytes = m->ahdr;
    if (resolve_classes(m, err) < 0)
        goto fail;
    if (build_directory(m) < 0) {
        gcs_err_set(err, "%s: out of memory", name);
        goto fail;
    }
    uint64_t nroots = m->rootids.n + m->rep.classes;
    g = gcs_snapshot_new(n, m->nfields_total, nroots, &e2);
    m->fileoff = malloc(n ? n * sizeof *m->fileoff : 1);
    m->tmp = malloc(m->nfields_total ? m->nfields_total * sizeof *m->tmp : 1);
    if (!g || !m->fileoff || !m->tmp) {
        gcs_err_set(err, "%s: %s", name, g ? "out of memory" : e2.msg);
        goto fail;
    }
    m->g = g;
    if (build_types(m, err) < 0)
        goto fail;

    /* pass 2 */
    if (open_pass(m, path, data, len) < 0 || scan(m, 2) < 0)
        goto fail;
    m->rep.passes = 2;
    if (m->tmp_n != g->nfields) {
        gcs_err_set(err, "%s: the second pass found %llu references, the first %llu (the dump changed?)", name,
                    (unsigned long long)m->tmp_n, (unsigned long long)g->nfields);
        goto fail;
    }
    /* The edges into index order: objects whose edges lie back to back in
     * file order (all of them in a dump written in address order) are
     * copied as one run -- a memcpy call per object of one or two edges
     * cost more than the copy. */
    uint64_t sum = 0, run_from = 0, run_at = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (g->words[i] == 0) { /* every id of pass 1 is placed by pass 2 */
            gcs_err_set(err, "%s: object 0x%llx vanished between the passes (the dump changed?)", name,
                        (unsigned long long)ids[i]);
            goto fail;
        }
        g->edge_start[i] = sum;
        if (m->fileoff[i] != run_from + (sum - run_at)) {
            memcpy(g->edges + run_at, m->tmp + run_from, (size_t)(sum - run_at) * sizeof *g->edges);
            run_from = m->fileoff[i];
            run_at = sum;
        }
        sum += g->nptrs[i];
    }
    memcpy(g->edges + run_at, m->tmp + run_from, (size_t)(sum - run_at) * sizeof *g->edges);
    g->edge_start[n] = sum;
    free(m->tmp);
    m->tmp = NULL;
    place_addresses(m);
    uint64_t r = 0;
    const uint64_t *rid = m->rootids.p;
    for (size_t k = 0; k < m->rootids.n; k++) {
        uint32_t idx = id_index(m, rid[k]);
        if (idx == NOT_FOUND)
            m->rep.missing_roots++;
        else
            g->roots[r++] = idx;
    }
    const cls *cs = m->classes.p;
    for (size_t k = 0; k < m->classes.n; k++)
        if (cs[k].dumped)
            g->roots[r++] = id_index(m, cs[k].id);
    g->nroots = r;
    g->params.source = GCS_SNAPSHOT_SOURCE_HPROF;
    g->params.header_bytes = 8;
    g->params.granule_bytes = 8;
    g->params.heap_base = n ? ids[0] : 0;
    g->params.timestamp_ns = m->timestamp_ms * 1000000u;
    if (gcs_snapshot_validate(g, &e2) < 0) {
        gcs_err_set(err, "%s: the imported graph is invalid: %s", name, e2.msg);
        goto fail;
    }
    if (rep_out)
        *rep_out = m->rep;
    imp_free(m);
    free(m);
    return g;
fail:
    gcs_snapshot_free(g);
    imp_free(m);
    free(m);
    return NULL;
}

gcs_snapshot *gcs_heapdump_import_hprof_mem(const void *data, size_t len, const char *name,
                                            gcs_heapdump_report *rep, gcs_err *err)
{
    return import(NULL, data, len, name ? name : "dump", rep, err);
}

gcs_snapshot *_gcs_hprof_import(const char *path, gcs_heapdump_report *rep, gcs_err *err)
{
    gcs_snapshot *g = import(path, NULL, 0, path, rep, err);
    if (g && rep)
        rep->compressed = _gcs_heapdump_gzipped(path);
    return g;
}
