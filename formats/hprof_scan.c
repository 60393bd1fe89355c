/* hprof_scan.c -- the HPROF importer's first pass (hprof.c has the whole
 * import): the dump's stream (hr_more), the importer's tables (growing
 * vectors; strings and classes by id, open addressing), a gzip dump's
 * chunks kept inflated for pass 2 within the memory bar (keep_*), the dump
 * cut into chunks at record boundaries (chunk_open, chunk_close), the file
 * header and the top-level records (read_header, scan).  The heap dump's
 * sub-records are parsed by heap_records (hprof_pass2.c), which both passes
 * share; pass 1's work on each object that it inlines (note_object,
 * object_run) is in heapdump_internal.h. */

#define _GNU_SOURCE /* mremap */
#define GCS_HPROF_IMPORTER
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/internal.h"
#include "heapdump_internal.h"

/* ---- the stream ---------------------------------------------------------------------- */

/* Makes k (<= HPROF_BUF) bytes available at buf + pos: 1, 0 at a clean end
 * of the dump (nothing left), -1 on a truncated dump or a read error. */
int _gcs_hprof_hr_more(hr *r, size_t k, const char *what)
{
    if (r->len - r->pos >= k)
        return 1;
    if (r->kind != DS_MEMORY && !r->eof) {
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

/* ---- the importer's tables ----------------------------------------------------------- */

void *_gcs_hprof_vec_push(vec *v)
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

/* Open addressing; key 0 is never stored (HPROF's NULL id).  Returns the
 * slot of key (found or empty). */
static size_t slot_of(const uint64_t *keys, size_t cap, uint64_t key)
{
    size_t i = (size_t)_gcs_heapdump_mix(key) & (cap - 1);
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
        char *c = _gcs_hprof_vec_push(&m->sblob);
        if (!c)
            return -1;
        *c = i < n ? (s[i] ? (char)s[i] : '?') : 0;
    }
    return 0;
}

const char *_gcs_hprof_str_get(const imp *m, uint64_t sid)
{
    size_t j = idmap_find(&m->strings, sid);
    return j != SIZE_MAX ? (const char *)m->sblob.p + m->strings.vals[j] : NULL;
}

/* The class of id, created when absent; NULL when out of memory. */
cls *_gcs_hprof_class_get(imp *m, uint64_t id)
{
    int fresh;
    size_t j = idmap_slot(&m->classmap, id, &fresh);
    if (j == SIZE_MAX)
        return NULL;
    if (!fresh)
        return (cls *)m->classes.p + m->classmap.vals[j];
    cls *c = _gcs_hprof_vec_push(&m->classes);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->id = id;
    m->classmap.vals[j] = m->classes.n - 1;
    return c;
}

cls *_gcs_hprof_class_find(const imp *m, uint64_t id)
{
    size_t j = idmap_find(&m->classmap, id);
    return j != SIZE_MAX ? (cls *)m->classes.p + m->classmap.vals[j] : NULL;
}


/* ---- chunks kept inflated (gzip, pass 1) ------------------------------------------- */

/* A gzip dump's pass 2 would inflate it a second time, as much CPU as the
 * rest of the import (docs/heap-dumps.md), unless pass 1 keeps a chunk's
 * bytes as it inflated them: pass 2 then reads that chunk from memory.
 * What is kept is bounded by the memory bar, 16 B per object + 8
 * per reference beyond the snapshot, less the import's buffers: in pass 1
 * the bar of the objects and references read so far (keep_allowed), and
 * between the passes, less the id map too, the bar of the whole dump
 * (keep_trim), since pass 2's peak is the snapshot, the id map and the
 * kept chunks; a chunk is freed as soon as pass 2 has read it.  (Pass 1's
 * ids, 8 B per object beside the kept chunks, are less than the snapshot
 * that is not yet allocated then.)  Only a dump
 * in address order keeps them: out of it pass 2's records take that room
 * (the pool), so that pass 1 stops keeping when the order breaks and the
 * chunks kept are freed before pass 2 (keep_trim).  The bytes are
 * copied as they leave pass 1's window (keep_tap) into a mapping of the
 * chunk's own, which munmap gives back to the system at once. */

static void keep_unmap(uint8_t *p, size_t cap)
{
    if (p)
        munmap(p, cap);
}

/* What the import's buffers take beside the kept chunks, at most: per
 * thread a window of HPROF_BUF and a gzip member's input and output (pass
 * 2), and pass 1's read-ahead blocks. */
static uint64_t keep_reserve(void) { return (uint64_t)(_gcs_heapdump_threads() + 1) * (2 * HPROF_BUF); }

/* The bytes that may be kept for objects objects and refs references
 * beside map bytes of id map (0 in pass 1): the bar less those and the
 * buffers. */
uint64_t _gcs_hprof_keep_bound(const imp *m, uint64_t objects, uint64_t refs, uint64_t map)
{
    if (m->keep_limit >= 0)
        return (uint64_t)m->keep_limit;
    uint64_t bar = 16 * objects + 8 * refs, off = keep_reserve() + map;
    return bar > off ? bar - off : 0;
}

/* The bytes pass 1 may keep now (kept included). */
static uint64_t keep_allowed(const imp *m)
{
    return _gcs_hprof_keep_bound(m, m->ids.n, m->keep_refs + m->cur_fixed_refs + m->cur_class_refs, 0);
}

/* The open chunk is not kept after all. */
static void keep_drop(imp *m)
{
    keep_unmap(m->keep_buf, m->keep_cap);
    m->kept -= m->keep_len;
    m->keep_buf = NULL;
    m->keep_len = m->keep_cap = 0;
    m->keeping = 0;
}

/* n more bytes of the open chunk kept -- or none of it, where the bound or
 * memory runs out. */
static void keep_append(imp *m, const uint8_t *p, size_t n)
{
    if (!m->ordered || m->kept + n > keep_allowed(m)) {
        keep_drop(m);
        return;
    }
    if (m->keep_len + n > m->keep_cap) {
        size_t cap = m->keep_cap ? m->keep_cap : ((m->chunk_bytes + m->chunk_bytes / 2) | 4095) + 1;
        while (cap < m->keep_len + n)
            cap *= 2;
        void *q = m->keep_buf ? mremap(m->keep_buf, m->keep_cap, cap, MREMAP_MAYMOVE)
                              : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED) {
            keep_drop(m);
            return;
        }
        m->keep_buf = q;
        m->keep_cap = cap;
    }
    memcpy(m->keep_buf + m->keep_len, p, n);
    m->keep_len += n;
    m->kept += n;
}

/* pass 1's window drops [off, off + n): the open chunk's part of it kept */
void _gcs_hprof_keep_tap(void *arg, const uint8_t *p, size_t n, uint64_t off)
{
    imp *m = arg;
    if (!m->keeping)
        return;
    uint64_t at = m->keep_start + m->keep_len;
    gcs_assert_internal(off <= at); /* keep_begin: the chunk's start was in the window */
    if (off + n > at)
        keep_append(m, p + (at - off), (size_t)(off + n - at));
}

/* The chunk opening at off is kept if the bound leaves room for one of
 * chunk_bytes now and its start is still in the window (a record's start,
 * unless a refill inside the record dropped it: rare, and then not kept). */
static void keep_begin(imp *m, uint64_t off)
{
    if (!m->r.tap || !m->ordered || off < m->r.base)
        return;
    uint64_t allowed = keep_allowed(m);
    if (allowed < m->kept || allowed - m->kept < m->chunk_bytes)
        return;
    m->keeping = 1;
    m->keep_start = off;
    m->keep_len = 0;
}

/* The open chunk c ends at end: its bytes still in the window kept, and the
 * whole chunk handed to c. */
static void keep_end(imp *m, chunk *c, uint64_t end)
{
    if (!m->keeping)
        return;
    gcs_assert_internal(c->start == m->keep_start);
    uint64_t at = m->keep_start + m->keep_len;
    if (at > end) { /* the window dropped bytes of the next chunk's first record */
        m->kept -= at - end;
        m->keep_len = (size_t)(end - m->keep_start);
    } else if (at < end) {
        gcs_assert_internal(at >= m->r.base && end <= m->r.base + m->r.len);
        keep_append(m, m->r.buf + (at - m->r.base), (size_t)(end - at));
    }
    if (!m->keeping)
        return;
    c->kept = m->keep_buf;
    c->kept_cap = m->keep_cap;
    m->keep_buf = NULL;
    m->keep_len = m->keep_cap = 0;
    m->keeping = 0;
}

/* Chunk c's kept bytes given back (pass 2 has read them). */
void _gcs_hprof_keep_free(chunk *c)
{
    keep_unmap(c->kept, c->kept_cap);
    c->kept = NULL;
    c->kept_cap = 0;
}

/* The chunks kept given back, the last first, until at most keep bytes
 * are: pass 2 inflates those again. */
void _gcs_hprof_keep_trim(imp *m, uint64_t keep)
{
    keep_drop(m);
    chunk *cs = m->chunks.p;
    for (size_t k = m->chunks.n; k-- > 0 && m->kept > keep;)
        if (cs[k].kept) {
            m->kept -= cs[k].end - cs[k].start;
            _gcs_hprof_keep_free(&cs[k]);
        }
}

/* The references of the open chunk's instances that pass 1 knows of: the
 * reference fields their classes declare (a superclass's, perhaps not yet
 * dumped, are left out). */
static uint64_t chunk_instance_refs(const imp *m)
{
    const cls *cs = m->classes.p;
    const uint32_t *t = m->touched.p;
    uint64_t refs = 0;
    for (size_t k = 0; k < m->touched.n; k++) {
        const cls *c = &cs[t[k]];
        if (!c->nfields) /* fields.p is NULL while no class has a field */
            continue;
        const uint8_t *ft = (const uint8_t *)m->fields.p + c->field_start;
        uint64_t own = 0;
        for (uint64_t j = 0; j < c->nfields; j++)
            own += ft[j] == B_OBJECT;
        refs += own * c->chunk_count;
    }
    return refs;
}

/* ---- the chunks (pass 1) ---------------------------------------------------------- */

/* Ends the open chunk at end: its instances per class go to hist. */
static int chunk_close(imp *m, uint64_t end)
{
    if (!m->chunks.n)
        return 0;
    if (m->r.tap)
        m->keep_refs += m->cur_fixed_refs + m->cur_class_refs + chunk_instance_refs(m);
    chunk *c = (chunk *)m->chunks.p + m->chunks.n - 1;
    c->end = end;
    c->objects = m->cur_objects;
    c->fixed_refs = m->cur_fixed_refs;
    c->first_id = m->cur_first;
    c->last_id = m->cur_last;
    c->classes = m->cur_classes;
    c->class_refs = m->cur_class_refs;
    c->hist_start = m->hist.n;
    cls *cs = m->classes.p;
    const uint32_t *t = m->touched.p;
    for (size_t k = 0; k < m->touched.n; k++) {
        hist_pair *h = _gcs_hprof_vec_push(&m->hist);
        if (!h)
            return -1;
        h->cls = t[k];
        h->count = cs[t[k]].chunk_count;
        cs[t[k]].chunk_count = 0;
    }
    c = (chunk *)m->chunks.p + m->chunks.n - 1;
    c->hist_n = m->hist.n - c->hist_start;
    m->touched.n = 0;
    m->cur_objects = m->cur_fixed_refs = m->cur_classes = m->cur_class_refs = 0;
    keep_end(m, c, end);
    return 0;
}

/* A new chunk at off, a record's start (inside a heap dump segment ending
 * at seg_end, or at the top level: 0).  A gzip chunk starts from the
 * newest access point at or before off; the points between the previous
 * chunk's and that one are not needed again. */
int _gcs_hprof_chunk_open(imp *m, uint64_t off, uint64_t seg_end)
{
    if (chunk_close(m, off) < 0)
        return hr_fail(&m->r, off, "out of memory");
    chunk *c = _gcs_hprof_vec_push(&m->chunks);
    if (!c)
        return hr_fail(&m->r, off, "out of memory");
    memset(c, 0, sizeof *c);
    c->start = off;
    c->seg_end = seg_end;
    c->point = SIZE_MAX;
    keep_begin(m, off);
    if (m->r.kind == DS_GZIP) {
        _gcs_gzindex *ix = &m->gzi;
        size_t q = ix->used;
        while (q + 1 < ix->n && ix->p[q + 1].out <= off)
            q++;
        for (size_t k = ix->used + 1; q != SIZE_MAX && k < q; k++) {
            free(ix->p[k].window);
            ix->p[k].window = NULL;
        }
        ix->used = q;
        c->point = q;
        ix->next_cut = q + 1 < ix->n ? ix->p[q + 1].out : UINT64_MAX;
    } else {
        m->cut_plain = off + m->chunk_bytes;
    }
    return 0;
}

/* ---- the header and the top-level records -------------------------------------------- */

/* The file header: "JAVA PROFILE 1.0.x\0", u4 id size, u8 time. */
static int read_header(imp *m)
{
    hr *r = &m->r;
    static const char magic[] = "JAVA PROFILE 1.0.";
    if (_gcs_hprof_hr_more(r, 19, "the header") < 0)
        return -1;
    if (memcmp(r->buf + r->pos, magic, sizeof magic - 1) != 0)
        return hr_fail(r, 0, "not an HPROF heap dump (no \"JAVA PROFILE 1.0.\" magic)");
    char v = (char)r->buf[r->pos + 17];
    if ((v != '1' && v != '2' && v != '3') || r->buf[r->pos + 18] != 0)
        return hr_fail(r, 17, "unsupported HPROF version (1.0.1, 1.0.2 and 1.0.3 are read)");
    snprintf(m->rep.version, sizeof m->rep.version, "1.0.%c", v);
    r->pos += 19;
    if (_gcs_hprof_hr_more(r, 12, "the header") < 0)
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

/* Pass 1 over the whole dump. */
int _gcs_hprof_scan(imp *m)
{
    hr *r = &m->r;
    if (read_header(m) < 0)
        return -1;
    for (;;) {
        uint64_t off = hr_off(r);
        int more = _gcs_hprof_hr_more(r, 9, NULL);
        if (more < 0)
            return -1;
        if (more == 0)
            return chunk_close(m, off) < 0 ? hr_fail(r, off, "out of memory") : 0;
        if ((off >= *m->cut_at || !m->chunks.n) && _gcs_hprof_chunk_open(m, off, 0) < 0)
            return -1;
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
            if (len <= HPROF_BUF) {
                if (_gcs_hprof_hr_more(r, len, "a string record") < 0)
                    return -1;
                if (str_put(m, get_id(m, r->buf + r->pos), r->buf + r->pos + m->idsz, len - m->idsz) < 0)
                    return hr_fail(r, off, "out of memory");
                r->pos += len;
            } else if (hr_skip(r, len, "a string record") < 0) {
                return -1;
            }
            break;
        case T_LOAD_CLASS: {
            if (len != 8 + 2 * m->idsz)
                return hr_fail(r, off, "class load record of the wrong length");
            if (_gcs_hprof_hr_more(r, len, "a class load record") < 0)
                return -1;
            cls *c = _gcs_hprof_class_get(m, get_id(m, r->buf + r->pos + 4));
            if (!c)
                return hr_fail(r, off, "out of memory");
            c->name_sid = get_id(m, r->buf + r->pos + 8 + m->idsz);
            r->pos += len;
            break;
        }
        case T_HEAP_DUMP:
        case T_HEAP_DUMP_SEGMENT:
            if (_gcs_hprof_heap_records(m, r, NULL, hr_off(r) + len, UINT64_MAX) < 0)
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
            m->rep.skipped_records++;
            if (hr_skip(r, len, "a record") < 0)
                return -1;
        }
    }
}
