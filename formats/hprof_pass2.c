/* hprof_pass2.c -- the HPROF importer's second pass, and the parser of the
 * heap dump's sub-records that both passes share (heap_records, class_dump:
 * pass 1 calls them without pass 2's state).  Pass 2 places each object
 * (place, add_ref; runs of one class's instances and object arrays in a
 * loop of their own, runs2): at its index in address order, else as a
 * record in its bucket's block (tmp_room, rec_bucket); references resolved
 * in batches (resolve_refs); the look-ahead's prefetching (prefetch_ahead,
 * run_ahead), chosen per chunk by timing (lookahead_choice); the chunks read
 * from memory, as pass 1 kept them or from the file (open_chunk,
 * run_chunk) by a worker per thread (pass2_worker, pass2_run). */

#define GCS_HPROF_IMPORTER
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/internal.h"
#include "heapdump_internal.h"

/* ---- placing the objects (pass 2) ---------------------------------------------------- */

/* A new block of the pool for bucket b of worker wk, or an extent of its
 * own for a record of k > TMP_OWN words; the record's k words.  NULL when
 * out of memory, or when the pool is used up (which the chunks' counts
 * rule out: tmp_pool_words). */
__attribute__((noinline)) static uint32_t *tmp_room_slow(imp *m, worker *wk, uint64_t b, uint64_t k)
{
    tmp_fill *f = &wk->fill[b];
    uint64_t size = k > TMP_OWN ? k : TMP_BLOCK;
    uint64_t start = __atomic_fetch_add(&m->tmp_next, size, __ATOMIC_RELAXED);
    gcs_assert_internal(start + size <= m->tmp_cap);
    if (start + size > m->tmp_cap)
        return NULL;
    if (k > TMP_OWN || f->end) { /* an extent filled: an own one, or the block closed */
        tmp_extent *e = _gcs_hprof_vec_push(&wk->extents);
        if (!e)
            return NULL;
        if (k > TMP_OWN)
            *e = (tmp_extent){start, k, b};
        else
            *e = (tmp_extent){f->end - TMP_BLOCK, f->cur - (f->end - TMP_BLOCK), b};
    }
    if (k <= TMP_OWN) {
        f->cur = start + k;
        f->end = start + TMP_BLOCK;
    }
    return m->tmp + start;
}

/* Room for a record of k words in bucket b of worker wk: the end of its
 * open block, mostly.  The line after the record's is prefetched for
 * writing: the bucket's next record comes about a bucket count of records
 * later, and a store to a line not in the cache held pass 2 up (its store
 * buffer full of them) more than the prefetches cost. */
__attribute__((always_inline)) static inline uint32_t *tmp_room(imp *m, worker *wk, tmp_fill *fill, uint64_t b,
                                                                uint64_t k)
{
    tmp_fill *f = &fill[b];
    if (__builtin_expect(f->end - f->cur >= k, 1)) {
        uint32_t *p = m->tmp + f->cur;
        f->cur += k;
        __builtin_prefetch((const char *)(p + k) + 64, 1);
        return p;
    }
    return tmp_room_slow(m, wk, b, k);
}

/* Not direct: the bucket *b of the object with id oid and its place within
 * the bucket, the record's first word *local: by granule (gb->on: its
 * granule's offset from the bucket's first) or by index (the index's
 * offset).  0 where the map cannot hold oid (the dump changed between the
 * passes); by granule, an id on the map's grid that it does not hold is
 * caught by edge_worker. */
__attribute__((always_inline)) static inline int rec_bucket(const gbk *gb, const _gcs_idmap *map, unsigned bshift,
                                                            uint64_t oid, int hw, uint64_t *b, uint32_t *local)
{
    if (gb->on) {
        uint64_t g;
        if (!_gcs_idmap_granule(map, oid, &g))
            return 0;
        uint32_t lo = gb->slice[g >> gb->sshift], hi = gb->slice[(g >> gb->sshift) + 1];
        while (lo < hi) { /* the last bucket starting at or before g */
            uint32_t mid = (lo + hi + 1) / 2;
            if (gb->start[mid] <= g)
                lo = mid;
            else
                hi = mid - 1;
        }
        *b = lo;
        *local = (uint32_t)g - gb->start[lo];
        return 1;
    }
    uint32_t idx = _gcs_idmap_find_hw(map, oid, hw);
    if (idx == IDMAP_NONE)
        return 0;
    *b = idx >> bshift;
    *local = idx - ((uint32_t)*b << bshift);
    return 1;
}

/* Direct: next, the id at the chunk's next index, is not the object's id.
 * It may be a class's, whose index lies inside the run (a hole,
 * edges_direct): its references' places are kept at that index
 * (edge_start) for write_classes, and the object's id is looked for at the
 * index after.  The object's index, or IDMAP_NONE where next is no class
 * (the dump changed between the passes) or the run ends first.  Off the
 * hot path: a dump has a hole per class, its instances millions. */
typedef struct holes_passed {
    uint32_t idx;            /* the object's index, or IDMAP_NONE */
    uint64_t objects, tmp_n; /* the run's indices and references, the holes counted */
} holes_passed;

__attribute__((noinline)) static holes_passed past_holes(imp *m, const _gcs_idmap *map, _gcs_idmap_cursor *cur,
                                                         uint64_t next, uint64_t id, uint64_t first_index,
                                                         uint64_t run, uint64_t objects, uint64_t tmp_n,
                                                         uint64_t tmp_end)
{
    holes_passed h = {IDMAP_NONE, objects, tmp_n};
    for (;;) {
        const cls *c = _gcs_hprof_class_find(m, next);
        if (!c || !c->dumped || 2 + c->nstatics > tmp_end - h.tmp_n)
            return h;
        gcs_assert_internal(m->class_edge[c - (const cls *)m->classes.p] == UINT64_MAX);
        m->g->edge_start[first_index + h.objects] = h.tmp_n;
        for (uint64_t k = 0; k < 2 + c->nstatics; k++) /* resolve_refs passes them over */
            m->edst[h.tmp_n + k] = REF_NULL;
        h.tmp_n += 2 + c->nstatics;
        if (++h.objects >= run)
            return h;
        next = _gcs_idmap_next(map, cur);
        if (next == id) {
            h.idx = (uint32_t)(first_index + h.objects);
            return h;
        }
    }
}

/* Direct: the index of the chunk's next object, whose id is oid -- the
 * cursor's next id, past any class holes (past_holes) -- or IDMAP_NONE
 * where the chunk's run has ended or oid is not that id (the dump changed
 * between the passes).  objects and tmp_n: the chunk's counts so far,
 * advanced past the holes. */
__attribute__((always_inline)) static inline uint32_t run_index(imp *m, const _gcs_idmap *map, _gcs_idmap_cursor *cur,
                                                                uint64_t oid, uint64_t first_index,
                                                                uint64_t chunk_objects, uint64_t *objects,
                                                                uint64_t *tmp_n, uint64_t tmp_end)
{
    if (*objects >= chunk_objects)
        return IDMAP_NONE;
    uint64_t next = _gcs_idmap_next(map, cur);
    if (next == oid)
        return (uint32_t)(first_index + *objects);
    holes_passed h = past_holes(m, map, cur, next, oid, first_index, chunk_objects, *objects, *tmp_n, tmp_end);
    *objects = h.objects;
    *tmp_n = h.tmp_n;
    return h.idx;
}

/* ---- references resolved in batches ---------------------------------------------------- */

/* A dump whose references go to random places spends pass 2 waiting on
 * the id map's words, one lookup per reference, which the look-ahead
 * prefetches only as far as it parses ahead (16 records).  So pass 2 may
 * store each reference as its granule (ref_code: the id map's coordinate,
 * computed without loading anything) and leave the lookups to a loop of
 * their own (resolve_refs), which does nothing else and so keeps many in
 * flight: the word of the reference REF_AHEAD places on is prefetched.
 * Direct, every chunk's references fill a range of the snapshot's edges,
 * resolved right after pass 2 read the chunk, still in the cache; where
 * that pays is a chunk's look-ahead choice (lookahead_choice): a tree or
 * list, whose lookups hit, does not batch them.  Out of address order the
 * records hold the codes, and edge_worker resolves a bucket's edges once
 * it has put them in order; an object's own lookup cannot wait (its
 * bucket depends on it). */
#define REF_AHEAD 32

/* Reference ref as resolve_refs takes it: REF_NULL, REF_MISSING, or its
 * granule (m->batchable: below REF_MISSING). */
__attribute__((always_inline)) static inline uint32_t ref_code(const _gcs_idmap *map, uint64_t ref)
{
    if (!ref)
        return REF_NULL;
    uint64_t g;
    return _gcs_idmap_granule(map, ref, &g) ? (uint32_t)g : REF_MISSING;
}

/* e[0..n) from codes to indices: ref_index's for the references the codes
 * stand for. */
__attribute__((always_inline)) static inline void resolve_refs_hw(const _gcs_idmap *map, uint32_t *e, uint64_t n,
                                                                  int hw, uint64_t *found, uint64_t *missing)
{
    uint64_t f = 0, miss = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i + REF_AHEAD < n && e[i + REF_AHEAD] < REF_MISSING)
            _gcs_idmap_prefetch_granule(map, e[i + REF_AHEAD]);
        uint32_t c = e[i];
        if (c == REF_NULL)
            continue;
        uint32_t t = c == REF_MISSING ? IDMAP_NONE : _gcs_idmap_find_granule_hw(map, c, hw);
        miss += t == IDMAP_NONE;
        f += t != IDMAP_NONE;
        e[i] = t == IDMAP_NONE ? GCS_SNAPSHOT_NULL : t;
    }
    *found += f;
    *missing += miss;
}

static void resolve_refs_sw(const _gcs_idmap *map, uint32_t *e, uint64_t n, uint64_t *found, uint64_t *missing)
{
    resolve_refs_hw(map, e, n, 0, found, missing);
}

TARGET_POPCNT static void resolve_refs_popcnt(const _gcs_idmap *map, uint32_t *e, uint64_t n, uint64_t *found,
                                              uint64_t *missing)
{
    resolve_refs_hw(map, e, n, 1, found, missing);
}

/* References e[0..n) stored as codes (pass2's batch), resolved: direct,
 * a chunk's edges after pass 2 read it; out of address order, a bucket's
 * after edge_worker put them in order. */
void _gcs_hprof_resolve_refs(const imp *m, uint32_t *e, uint64_t n, uint64_t *found, uint64_t *missing)
{
    const _gcs_idmap map = m->map; /* in locals: the stores are of uint32_t */
    if (m->popcnt)
        resolve_refs_popcnt(&map, e, n, found, missing);
    else
        resolve_refs_sw(&map, e, n, found, missing);
}

/* The index of the object with id, the next one of the chunk w reads, or
 * IDMAP_NONE.  Direct, the chunk's objects are a run of indices whose ids
 * pass 1 saw in this order: the next index, once the id is checked to be
 * the next of those ids (a dump that changed between the passes is caught
 * here, before an index outside the chunk's run could be written).
 * Otherwise the id map's lookup. */
__attribute__((always_inline)) static inline uint32_t object_index(imp *m, pass2 *w, uint64_t id, int hw)
{
    if (!m->direct)
        return _gcs_idmap_find_hw(&m->map, id, hw);
    return run_index(m, &m->map, &w->cur, id, w->first_index, w->chunk_objects, &w->objects, &w->tmp_n, w->tmp_end);
}

static int place(imp *m, pass2 *w, uint64_t id, uint64_t off, uint64_t jvm_bytes, uint64_t nptrs, uint32_t type)
{
    uint32_t idx = 0, local = 0;
    uint64_t b = 0;
    gcs_snapshot *g = m->g;
    if (m->direct ? (idx = object_index(m, w, id, 0)) == IDMAP_NONE : !rec_bucket(&m->gb, &m->map, m->bshift, id, 0, &b, &local))
        return hr_fail(w->r, off, PLACE_UNKNOWN);
    uint64_t words = object_words(jvm_bytes, nptrs);
    if (words > UINT32_MAX || nptrs > UINT32_MAX)
        return hr_fail(w->r, off, "object too large for a snapshot (2^32 words)");
    if (nptrs + (m->direct ? 0 : TMP_HEADER) > w->tmp_end - w->tmp_n)
        return hr_fail(w->r, off, PLACE_TOO_MANY_REFS);
    if (m->direct) {
        g->words[idx] = (uint32_t)words;
        g->nptrs[idx] = (uint32_t)nptrs;
        g->type[idx] = type;
        g->edge_start[idx] = w->tmp_n;
        w->wp = m->edst + w->tmp_n;
    } else {
        uint32_t *h = tmp_room(m, w->wk, w->wk->fill, b, TMP_HEADER + nptrs);
        if (!h)
            return hr_fail(w->r, off, "out of memory");
        h[0] = local;
        h[1] = (uint32_t)words;
        h[2] = (uint32_t)nptrs;
        h[3] = type;
        w->wp = h + TMP_HEADER;
        w->tmp_n += TMP_HEADER;
        w->wk->block_refs[b] += nptrs;
    }
    w->jvm_bytes += jvm_bytes;
    w->objects++;
    return 0;
}

static inline void add_ref(imp *m, pass2 *w, uint64_t ref)
{
    *w->wp++ = w->batch ? ref_code(&m->map, ref) : ref_index(&m->map, ref, 0, &w->references, &w->missing_refs);
    w->tmp_n++;
}

/* ---- the sub-records, as both passes parse them -------------------------------------- */

/* CLASS_DUMP: pass 1 (w NULL) keeps its fields and statics; pass 2 places
 * the class object (the mirror: java.lang.Class's fields plus the statics)
 * with edges to its superclass, its loader and its static references. */
static int class_dump(imp *m, hr *r, pass2 *w, uint64_t off, uint64_t seg_end)
{
    int pass = w ? 2 : 1;
    size_t fixed = 7 * m->idsz + 8 + 2;
    if (hr_off(r) + fixed > seg_end)
        return hr_fail(r, off, "class dump runs past the end of its segment");
    if (_gcs_hprof_hr_more(r, fixed, "a class dump") < 0)
        return -1;
    const uint8_t *p = r->buf + r->pos;
    uint64_t id = get_id(m, p), super = get_id(m, p + m->idsz + 4), loader = get_id(m, p + 2 * m->idsz + 4);
    uint16_t ncp = be16(p + 7 * m->idsz + 8);
    r->pos += fixed;
    cls *c = NULL;
    if (pass == 1) {
        if (!id)
            return hr_fail(r, off, "class dump of class id 0");
        c = _gcs_hprof_class_get(m, id);
        if (!c)
            return hr_fail(r, off, "out of memory");
        if (c->dumped)
            return hr_fail(r, off, "class dumped twice");
        c->dumped = 1;
        c->super = super;
        c->loader = loader;
        if (note_object(m, id, off, seg_end, 1) < 0)
            return hr_fail(r, off, "out of memory");
        m->rep.classes++;
        m->cur_fixed_refs += 2;
        m->cur_class_refs += 2;
    } else {
        c = _gcs_hprof_class_find(m, id);
    }
    /* constant pool: u2 index, u1 type, value */
    for (unsigned k = 0; k < ncp; k++) {
        if (hr_off(r) + 3 > seg_end || _gcs_hprof_hr_more(r, 3, "a constant pool entry") < 0)
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
    if (hr_off(r) + 2 > seg_end || _gcs_hprof_hr_more(r, 2, "a class dump") < 0)
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
        if (_gcs_hprof_hr_more(r, m->idsz + 1, "a static field") < 0)
            return -1;
        uint8_t type = r->buf[r->pos + m->idsz];
        int vs = value_size(m, type);
        if (vs < 0)
            return hr_fail(r, hr_off(r), "static field of unknown type");
        if (hr_off(r) + m->idsz + 1 + (uint64_t)vs > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (_gcs_hprof_hr_more(r, m->idsz + 1 + (size_t)vs, "a static field") < 0)
            return -1;
        if (type == B_OBJECT) {
            nstatic_refs++;
            if (pass == 1) {
                uint64_t *v = _gcs_hprof_vec_push(&m->statics);
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
    if (hr_off(r) + 2 > seg_end || _gcs_hprof_hr_more(r, 2, "a class dump") < 0)
        return hr_off(r) + 2 > seg_end ? hr_fail(r, off, "class dump runs past the end of its segment") : -1;
    uint16_t nif = be16(r->buf + r->pos);
    r->pos += 2;
    if (pass == 1)
        c->field_start = m->fields.n, c->nfields = nif;
    for (unsigned k = 0; k < nif; k++) {
        if (hr_off(r) + m->idsz + 1 > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (_gcs_hprof_hr_more(r, m->idsz + 1, "an instance field") < 0)
            return -1;
        uint8_t type = r->buf[r->pos + m->idsz];
        if (value_size(m, type) < 0)
            return hr_fail(r, hr_off(r), "instance field of unknown type");
        if (pass == 1) {
            uint8_t *t = _gcs_hprof_vec_push(&m->fields);
            if (!t)
                return hr_fail(r, off, "out of memory");
            *t = type;
        }
        r->pos += m->idsz + 1;
    }
    if (pass == 1) {
        m->nfields_total += 2 + nstatic_refs;
        m->cur_fixed_refs += nstatic_refs;
        m->cur_class_refs += nstatic_refs;
        return 0;
    }
    /* Direct, the mirror is written after pass 2 (write_classes), at the
     * place the run that holds its index kept for it. */
    if (m->direct)
        return 0;
    /* pass 2: the mirror */
    cls *jlc = m->jlc < m->classes.n ? (cls *)m->classes.p + m->jlc : NULL;
    uint64_t size = align8((jlc ? jlc->jvm_size : m->hdr) + c->static_bytes);
    if (place(m, w, id, off, size, 2 + c->nstatics, m->class_type) < 0)
        return -1;
    add_ref(m, w, c->super);
    add_ref(m, w, c->loader);
    if (c->nstatics) { /* statics.p is NULL while no class has a static reference */
        const uint64_t *sv = (const uint64_t *)m->statics.p + c->static_start;
        for (uint64_t k = 0; k < c->nstatics; k++)
            add_ref(m, w, sv[k]);
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

/* ---- pass 2's look-ahead ---------------------------------------------------------------- */

/* In a dump that is not in address order, or whose references go to
 * random places, pass 2's time goes into cache misses on the id map's
 * words, one for each object and reference (a lookup).  One at a time they
 * would be paid in series; so a cursor runs AHEAD_FAR records ahead of the
 * record being read, parsing only what it needs of the records wholly
 * inside the window, and prefetches the id map's words of each object and
 * its first references.  It parses a record's header again (and looks its
 * class up: one entry cached), which a dump whose lookups hit pays for
 * nothing: whether to look ahead is chosen per chunk by timing
 * (lookahead_choice).  A class dump, a record running out of the window or
 * the chunk's end stops the cursor until the reading catches up.  (Where an
 * object's record goes needs no prefetch: a bucket's open block, tmp_room.) */
#define AHEAD_FAR 16
#define AHEAD_REFS 8 /* references per object prefetched */

/* One record at dump offset off for the cursor: its prefetches, and the
 * next record's offset; 0 when the cursor cannot step over it. */
static uint64_t ahead_step(imp *m, const hr *r, pass2 *w, uint64_t off, uint64_t lim)
{
    const size_t id = m->idsz;
    uint64_t p = off - r->base;
    if (off >= lim || p + 2 * id + 9 > r->len)
        return 0;
    const uint8_t *q = r->buf + p;
    uint64_t oid = get_id(m, q + 1), next;
    switch (q[0]) {
    case S_INSTANCE_DUMP: {
        uint32_t nbytes = be32(q + 1 + 2 * id + 4);
        next = off + 1 + 2 * id + 8 + nbytes;
        if (next > lim)
            return 0;
        if (next - r->base <= r->len) {
            uint64_t cid = get_id(m, q + 1 + id + 4);
            const cls *c = cid == w->la_cid ? w->la_c : _gcs_hprof_class_find(m, cid);
            w->la_cid = cid;
            w->la_c = c;
            if (c && c->dumped && c->value_bytes == nbytes && c->nrefs && !w->batch) {
                const uint32_t *ro = (const uint32_t *)m->refs.p + c->ref_start;
                const uint8_t *v = q + 1 + 2 * id + 8;
                for (uint32_t k = 0; k < c->nrefs && k < AHEAD_REFS; k++)
                    _gcs_idmap_prefetch(&m->map, get_id(m, v + ro[k]));
            }
        }
        break;
    }
    case S_OBJ_ARRAY_DUMP: {
        uint64_t n = be32(q + 1 + id + 4);
        next = off + 1 + 2 * id + 8 + n * id;
        if (next > lim)
            return 0;
        const uint8_t *v = q + 1 + 2 * id + 8;
        for (uint64_t k = 0; k < n && k < AHEAD_REFS && !w->batch && p + 2 * id + 9 + (k + 1) * id <= r->len; k++)
            _gcs_idmap_prefetch(&m->map, get_id(m, v + k * id));
        break;
    }
    case S_PRIM_ARRAY_DUMP:
    case S_PRIM_ARRAY_NODATA: {
        uint64_t n = be32(q + 1 + id + 4);
        uint8_t et = q[1 + id + 8];
        if (et >= 12 || !prim_size[et])
            return 0;
        next = off + 1 + id + 9 + (q[0] == S_PRIM_ARRAY_DUMP ? n * prim_size[et] : 0);
        if (next > lim)
            return 0;
        break;
    }
    default:
        return 0;
    }
    _gcs_idmap_prefetch(&m->map, oid);
    return next;
}

/* Called at each record (dump offset off) pass 2 reads: keeps the cursor
 * its distance ahead. */
static inline void prefetch_ahead(imp *m, const hr *r, pass2 *w, uint64_t off, uint64_t lim)
{
    if (w->far_off <= off) {
        w->far_off = off;
        w->far_n = 0;
    } else {
        w->far_n--;
    }
    while (w->far_n < AHEAD_FAR) {
        uint64_t next = ahead_step(m, r, w, w->far_off, lim);
        if (!next)
            break;
        w->far_off = next;
        w->far_n++;
    }
}

/* The look-ahead of a run of instances (run2), at the record at pos of
 * rec bytes: prefetch_ahead's, without parsing the records ahead, which are
 * taken to be of the run's class -- where one is not, a prefetch is
 * wasted, nothing else: the bytes read stay inside the window.  Direct, the
 * object's own id needs no lookup (object_index).  0, nothing prefetched,
 * where the record AHEAD_FAR ahead is not in the window or not an instance
 * of the run's class cid: a dump that alternates instances and arrays in
 * short runs (a random graph of Node and Node[], as HotSpot's copying
 * collections leave it) needs the parsing cursor, prefetch_ahead, there, or
 * its lookups are not prefetched at all. */
__attribute__((always_inline)) static inline int run_ahead(const _gcs_idmap *map, const uint8_t *buf, size_t pos,
                                                           size_t len, uint64_t rec, size_t id, uint64_t cid,
                                                           const uint32_t *ro, uint32_t nrefs, int direct)
{
    const size_t fixed = 1 + 2 * id + 8;
    if (len - pos < (AHEAD_FAR + 1) * rec)
        return 0;
    const uint8_t *q = buf + pos + AHEAD_FAR * rec;
    if (q[0] != S_INSTANCE_DUMP || read_id(q + 1 + id + 4, id) != cid)
        return 0;
    for (uint32_t k = 0; k < nrefs && k < AHEAD_REFS; k++)
        _gcs_idmap_prefetch(map, read_id(q + fixed + ro[k], id));
    if (!direct)
        _gcs_idmap_prefetch(map, read_id(q + 1, id));
    return 1;
}

/* The class of an object array's record, class id acid: the last one's,
 * mostly (an application's arrays of one type lie together). */
static inline const cls *array_class(imp *m, pass2 *w, uint64_t acid)
{
    if (!w->ac_known || acid != w->acid) {
        w->ac = _gcs_hprof_class_find(m, acid);
        w->acid = acid;
        w->ac_known = 1;
    }
    return w->ac;
}

/* Pass 2 over a run of instance dumps of the class of the last instance
 * read (w->c) and object array dumps, in any mix, from the stream's
 * position: each one placed and its references added, as the generic path
 * does (place, add_ref), without its per-record dispatch and window checks,
 * with what place computes from the class done once for the run, and the
 * counts kept in registers.  One run takes both, since a dump may alternate
 * them record by record (a random graph of Node and Node[], as HotSpot's
 * copying collections leave it): a run per record would pay its setup per
 * record.  The run stops, before the record, at the first one that is of
 * another tag, an instance of another class or whose field bytes are not
 * its class's, an array too large for a snapshot, a record not wholly in
 * the window or the segment (end), or at or past stop -- the generic path
 * takes it and reports any error.  The records taken, or -1 when an object
 * cannot be placed (err set, with place's message).
 *
 * hw and direct are constants, so that each of the four versions (runs2)
 * is compiled for its case: hw, the lookups' popcount as the popcnt
 * instruction (a function built for it); direct, the objects stored at
 * their indices (object_index) rather than as records in their buckets
 * (tmp_room). */
__attribute__((always_inline)) static inline int64_t run2(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop,
                                                          int hw, int direct)
{
    const size_t id = m->idsz, fixed = 1 + 2 * id + 8;
    const uint64_t lim = end < stop ? end : stop, ahdr = m->ahdr, ref = m->ref;
    /* the instances' class: what place computes from it, once; inst 0: the
     * run takes no instance */
    const cls *c = w->c;
    int inst = c && c->dumped && c->value_bytes <= HPROF_BUF && (direct || m->classes.n <= UINT32_MAX);
    const uint64_t cid = w->cid, rec = inst ? fixed + c->value_bytes : 0;
    const uint32_t nrefs = inst ? c->nrefs : 0, nbytes = inst ? c->value_bytes : 0, type = inst ? c->type : 0;
    const uint32_t *ro = nrefs ? (const uint32_t *)m->refs.p + c->ref_start : NULL;
    const uint64_t words = inst ? object_words(c->jvm_size, nrefs) : 0;
    if (inst && (c->jvm_size < 8 || words > UINT32_MAX))
        inst = 0; /* place says what is wrong */
    const uint64_t need = nrefs + (direct ? 0 : TMP_HEADER);
    /* not direct: the records' class (run_classes), their words in the pool */
    const uint32_t cix = inst ? (uint32_t)(c - (const cls *)m->classes.p) : 0;
    const uint64_t run_words = TMP_RUN_HEADER + (uint64_t)nrefs;
    gcs_assert_internal(!inst || direct
                        || (m->ctab[cix].words == words && m->ctab[cix].nrefs == nrefs && m->ctab[cix].type == type));
    /* in locals: the stores below are of uint32_t, which the compiler must
     * otherwise assume may change the map's fields and reload them */
    const _gcs_idmap map = m->map;
    _gcs_idmap_cursor cur = w->cur;
    const uint8_t *buf = r->buf;
    const uint64_t base = r->base, first_index = w->first_index, chunk_objects = w->chunk_objects;
    const size_t len = r->len;
    size_t pos = r->pos;
    const gcs_snapshot *g = m->g;
    uint32_t *edst = m->edst, *g_words = g->words, *g_nptrs = g->nptrs, *g_type = g->type;
    uint64_t *g_start = g->edge_start;
    worker *wk = w->wk;
    tmp_fill *fill = direct ? NULL : wk->fill;
    uint64_t *block_refs = direct ? NULL : wk->block_refs;
    const unsigned bshift = m->bshift;
    const gbk gb = m->gb;
    const uint64_t tmp_end = w->tmp_end;
    uint64_t tmp_n = w->tmp_n, objects = w->objects, found = 0, missing = 0, jvm_bytes = 0;
    const int batch = w->batch;
    int64_t k = 0, instances = 0;
    const char *bad = NULL;
    for (;;) {
        uint64_t off = base + pos;
        if (off >= lim || len - pos < fixed)
            break;
        const uint8_t *p = buf + pos;
        __builtin_prefetch(p + READ_AHEAD);
        if (p[0] == S_INSTANCE_DUMP) {
            if (!inst || len - pos < rec || off + rec > end || read_id(p + 1 + id + 4, id) != cid
                || be32(p + 1 + 2 * id + 4) != nbytes)
                break;
            if (w->ahead && !run_ahead(&map, buf, pos, len, rec, id, cid, ro, batch ? 0 : nrefs, direct))
                prefetch_ahead(m, r, w, off, lim);
            uint64_t oid = read_id(p + 1, id), b = 0;
            uint32_t idx = 0, local = 0;
            if (direct)
                idx = run_index(m, &map, &cur, oid, first_index, chunk_objects, &objects, &tmp_n, tmp_end);
            else if (!rec_bucket(&gb, &map, bshift, oid, hw, &b, &local))
                idx = IDMAP_NONE;
            if (idx == IDMAP_NONE || need > tmp_end - tmp_n) {
                bad = idx == IDMAP_NONE ? PLACE_UNKNOWN : PLACE_TOO_MANY_REFS;
                break;
            }
            uint32_t *out;
            if (direct) {
                g_words[idx] = (uint32_t)words;
                g_nptrs[idx] = nrefs;
                g_type[idx] = type;
                g_start[idx] = tmp_n;
                out = edst + tmp_n;
            } else {
                uint32_t *h = tmp_room(m, wk, fill, b, run_words);
                if (!h) {
                    bad = "out of memory";
                    break;
                }
                h[0] = local | TMP_RUN;
                h[1] = cix;
                out = h + TMP_RUN_HEADER;
                tmp_n += TMP_HEADER;
                block_refs[b] += nrefs;
            }
            if (batch)
                for (uint32_t j = 0; j < nrefs; j++)
                    out[j] = ref_code(&map, read_id(p + fixed + ro[j], id));
            else
                for (uint32_t j = 0; j < nrefs; j++)
                    out[j] = ref_index(&map, read_id(p + fixed + ro[j], id), hw, &found, &missing);
            tmp_n += nrefs;
            objects++;
            pos += rec;
            k++;
            instances++;
            continue;
        }
        if (p[0] != S_OBJ_ARRAY_DUMP)
            break;
        const uint64_t n = be32(p + 1 + id + 4), arec = fixed + n * id;
        if (len - pos < arec || off + arec > end)
            break;
        const uint64_t bytes = align8(ahdr + n * ref), awords = object_words(bytes, n);
        if (awords > UINT32_MAX)
            break;
        if (w->ahead)
            prefetch_ahead(m, r, w, off, lim);
        const cls *ac = array_class(m, w, read_id(p + 1 + id + 8, id));
        const uint32_t atype = ac && ac->dumped ? ac->type : GCS_SNAPSHOT_TYPE_NONE;
        uint64_t oid = read_id(p + 1, id), b = 0;
        uint32_t idx = 0, local = 0;
        if (direct)
            idx = run_index(m, &map, &cur, oid, first_index, chunk_objects, &objects, &tmp_n, tmp_end);
        else if (!rec_bucket(&gb, &map, bshift, oid, hw, &b, &local))
            idx = IDMAP_NONE;
        if (idx == IDMAP_NONE || n + (direct ? 0 : TMP_HEADER) > tmp_end - tmp_n) {
            bad = idx == IDMAP_NONE ? PLACE_UNKNOWN : PLACE_TOO_MANY_REFS;
            break;
        }
        uint32_t *out;
        if (direct) {
            g_words[idx] = (uint32_t)awords;
            g_nptrs[idx] = (uint32_t)n;
            g_type[idx] = atype;
            g_start[idx] = tmp_n;
            out = edst + tmp_n;
        } else {
            uint32_t *h = tmp_room(m, wk, fill, b, TMP_HEADER + n);
            if (!h) {
                bad = "out of memory";
                break;
            }
            h[0] = local;
            h[1] = (uint32_t)awords;
            h[2] = (uint32_t)n;
            h[3] = atype;
            out = h + TMP_HEADER;
            tmp_n += TMP_HEADER;
            block_refs[b] += n;
        }
        const uint8_t *v = p + fixed;
        if (batch)
            for (uint64_t j = 0; j < n; j++)
                out[j] = ref_code(&map, read_id(v + j * id, id));
        else
            for (uint64_t j = 0; j < n; j++)
                out[j] = ref_index(&map, read_id(v + j * id, id), hw, &found, &missing);
        tmp_n += n;
        objects++;
        jvm_bytes += bytes;
        pos += arec;
        k++;
    }
    r->pos = pos;
    w->cur = cur;
    w->tmp_n = tmp_n;
    w->objects = objects;
    w->references += found;
    w->missing_refs += missing;
    w->jvm_bytes += jvm_bytes + (inst ? (uint64_t)instances * c->jvm_size : 0);
    return bad ? hr_fail(r, hr_off(r), bad) : k;
}

/* The four versions of a pass-2 run (hw: popcnt; direct: stored at the
 * indices), each compiled for its case, and name, which calls the one for
 * this CPU and dump. */
#define PASS2_RUN_VERSIONS(name, run)                                                                              \
    static int64_t name##_sw(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                                \
    {                                                                                                              \
        return run(m, r, w, end, stop, 0, 0);                                                                      \
    }                                                                                                              \
    static int64_t name##_sw_direct(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                         \
    {                                                                                                              \
        return run(m, r, w, end, stop, 0, 1);                                                                      \
    }                                                                                                              \
    TARGET_POPCNT static int64_t name##_hw(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                  \
    {                                                                                                              \
        return run(m, r, w, end, stop, 1, 0);                                                                      \
    }                                                                                                              \
    TARGET_POPCNT static int64_t name##_hw_direct(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)           \
    {                                                                                                              \
        return run(m, r, w, end, stop, 1, 1);                                                                      \
    }                                                                                                              \
    static int64_t name(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                                     \
    {                                                                                                              \
        if (m->popcnt)                                                                                             \
            return m->direct ? name##_hw_direct(m, r, w, end, stop) : name##_hw(m, r, w, end, stop);              \
        return m->direct ? name##_sw_direct(m, r, w, end, stop) : name##_sw(m, r, w, end, stop);                  \
    }

PASS2_RUN_VERSIONS(runs2, run2)

/* The sub-records of a heap dump (segment) whose body ends at end, from
 * the stream's position up to end or stop, whichever comes first (pass 2's
 * chunk ends at stop).  Pass 1: w NULL; it cuts chunks at the sub-records. */
int _gcs_hprof_heap_records(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)
{
    const int pass = w ? 2 : 1;
    const size_t id = m->idsz;
    while (hr_off(r) < end && hr_off(r) < stop) {
        uint64_t off = hr_off(r);
        if (pass == 1 && off >= *m->cut_at && _gcs_hprof_chunk_open(m, off, end) < 0)
            return -1;
        if (pass == 1 && object_run(m, r, end))
            continue;
        if (pass == 2) {
            int64_t k = runs2(m, r, w, end, stop);
            if (k < 0)
                return -1;
            if (k)
                continue;
        }
        if (pass == 2 && w->ahead)
            prefetch_ahead(m, r, w, off, end < stop ? end : stop);
        if (_gcs_hprof_hr_more(r, 1, "a sub-record tag") < 0)
            return -1;
        uint8_t tag = r->buf[r->pos++];
        size_t rb = root_bytes(m, tag);
        if (rb) {
            if (off + 1 + rb > end)
                return hr_fail(r, off, "root record runs past the end of its segment");
            if (_gcs_hprof_hr_more(r, rb, "a root record") < 0)
                return -1;
            if (pass == 1 && tag != S_UNREACHABLE) {
                uint64_t *v = _gcs_hprof_vec_push(&m->rootids);
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
            if (class_dump(m, r, w, off, end) < 0)
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
            if (_gcs_hprof_hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), cid = get_id(m, p + id + 4);
            uint32_t nbytes = be32(p + 2 * id + 4);
            r->pos += fixed;
            if (off + 1 + fixed + nbytes > end)
                return hr_fail(r, off, "instance dump runs past the end of its segment");
            if (pass == 1) {
                /* consecutive instances are often of one class */
                cls *c = cid && cid == m->last_cid ? (cls *)m->classes.p + m->last_cls : _gcs_hprof_class_get(m, cid);
                if (c) {
                    m->last_cid = cid;
                    m->last_cls = (size_t)(c - (cls *)m->classes.p);
                }
                if (!c || note_object(m, oid, off, end, 0) < 0)
                    return hr_fail(r, off, "out of memory");
                c->instances++;
                if (!c->chunk_count++) {
                    uint32_t *t = _gcs_hprof_vec_push(&m->touched);
                    if (!t)
                        return hr_fail(r, off, "out of memory");
                    *t = (uint32_t)(c - (cls *)m->classes.p);
                }
                m->rep.instances++;
                if (hr_skip(r, nbytes, sub_name(tag)) < 0)
                    return -1;
                break;
            }
            const cls *c = cid == w->cid ? w->c : _gcs_hprof_class_find(m, cid);
            w->cid = cid;
            w->c = c;
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
            if (_gcs_hprof_hr_more(r, nbytes, sub_name(tag)) < 0)
                return -1;
            if (place(m, w, oid, off, c->jvm_size, c->nrefs, c->type) < 0)
                return -1;
            const uint8_t *v = r->buf + r->pos;
            if (c->nrefs) { /* refs.p is NULL while no class has a reference field */
                const uint32_t *ro = (const uint32_t *)m->refs.p + c->ref_start;
                for (uint32_t k = 0; k < c->nrefs; k++)
                    add_ref(m, w, get_id(m, v + ro[k]));
            }
            r->pos += nbytes;
            break;
        }
        case S_OBJ_ARRAY_DUMP: {
            size_t fixed = 2 * id + 8;
            if (off + 1 + fixed > end)
                return hr_fail(r, off, "object array dump runs past the end of its segment");
            if (_gcs_hprof_hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), n = be32(p + id + 4), acid = get_id(m, p + id + 8);
            r->pos += fixed;
            if (off + 1 + fixed + n * id > end)
                return hr_fail(r, off, "object array dump runs past the end of its segment");
            if (pass == 1) {
                if (note_object(m, oid, off, end, 0) < 0)
                    return hr_fail(r, off, "out of memory");
                m->nfields_total += n;
                m->cur_fixed_refs += n;
                m->rep.object_arrays++;
                if (hr_skip(r, n * id, sub_name(tag)) < 0)
                    return -1;
                break;
            }
            const cls *ac = array_class(m, w, acid);
            if (place(m, w, oid, off, align8(m->ahdr + n * m->ref), n,
                      ac && ac->dumped ? ac->type : GCS_SNAPSHOT_TYPE_NONE) < 0)
                return -1;
            for (uint64_t k = 0; k < n;) {
                size_t chunk = n - k > HPROF_BUF / 8 ? HPROF_BUF / 8 : (size_t)(n - k);
                if (_gcs_hprof_hr_more(r, chunk * id, sub_name(tag)) < 0)
                    return -1;
                const uint8_t *q = r->buf + r->pos;
                if (id == 8)
                    for (size_t j = 0; j < chunk; j++)
                        add_ref(m, w, be64(q + 8 * j));
                else
                    for (size_t j = 0; j < chunk; j++)
                        add_ref(m, w, be32(q + 4 * j));
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
            if (_gcs_hprof_hr_more(r, fixed, sub_name(tag)) < 0)
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
                if (note_object(m, oid, off, end, 0) < 0)
                    return hr_fail(r, off, "out of memory");
                m->rep.primitive_arrays++;
            } else if (place(m, w, oid, off, align8(m->ahdr + n * prim_size[et]), 0, m->prim_type[et]) < 0) {
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
    if (hr_off(r) > end)
        return hr_fail(r, end, "sub-record runs past the end of its segment");
    return 0;
}

/* ---- pass 2 ---------------------------------------------------------------------------- */

/* Pass 2 over chunk c, through w->r positioned at its start. */
static int run_chunk(imp *m, pass2 *w, const chunk *c)
{
    hr *r = w->r;
    if (c->seg_end && _gcs_hprof_heap_records(m, r, w, c->seg_end, c->end) < 0)
        return -1;
    while (hr_off(r) < c->end) {
        uint64_t off = hr_off(r);
        if (_gcs_hprof_hr_more(r, 9, "a record header") < 0)
            return -1;
        uint8_t tag = r->buf[r->pos];
        uint32_t len = be32(r->buf + r->pos + 5);
        r->pos += 9;
        if (tag == T_HEAP_DUMP || tag == T_HEAP_DUMP_SEGMENT) {
            if (_gcs_hprof_heap_records(m, r, w, off + 9 + len, c->end) < 0)
                return -1;
        } else if (hr_skip(r, len, "a record") < 0) {
            return -1;
        }
    }
    uint64_t objects = m->direct ? c->run : c->objects, refs = m->direct ? c->run_refs : c->refs;
    if (w->objects != objects || w->tmp_n != w->tmp_end) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "the second pass found %llu objects and %llu references here, the first %llu and %llu (the dump "
                 "changed?)",
                 (unsigned long long)w->objects,
                 (unsigned long long)(w->tmp_n - c->tmp_base - (m->direct ? 0 : TMP_HEADER * w->objects)),
                 (unsigned long long)objects, (unsigned long long)refs);
        return hr_fail(r, c->start, msg);
    }
    if (w->batch && m->direct)
        _gcs_hprof_resolve_refs(m, m->edst + c->tmp_base, w->tmp_n - c->tmp_base, &w->references, &w->missing_refs);
    return 0;
}

/* Positions worker stream r at chunk c: the dump in memory, the chunk as
 * pass 1 kept it, or the file read (or inflated from the chunk's access
 * point) from there. */
static int open_chunk(imp *m, hr *r, const chunk *c)
{
    if (c->kept) {
        _gcs_dumpstream_close(r);
        r->buf = c->kept;
        r->base = c->start;
        r->pos = 0;
        r->len = (size_t)(c->end - c->start);
        r->eof = 1;
        return 0;
    }
    if (!m->path) {
        r->kind = DS_MEMORY;
        r->buf = m->data;
        r->base = 0;
        r->pos = (size_t)c->start;
        r->len = (size_t)c->end;
        r->eof = 1;
        return 0;
    }
    const _gcs_gzpoint *pt = c->point == SIZE_MAX ? NULL : &m->gzi.p[c->point];
    return _gcs_dumpstream_open_at(r, m->path, HPROF_BUF, &m->gzi, pt, c->start, c->end);
}

/* Whether a chunk is read with the look-ahead (prefetch_ahead).  It pays
 * where the lookups miss -- records out of address order, or references
 * to random places (a random graph) -- and costs where they do not (a tree
 * or a list in address order, whose references run through memory in
 * order, which the hardware prefetches; docs/heap-dumps.md has the
 * figures).  Which is the case is not in the records' headers, so each
 * worker times its chunks both ways (CPU time per dump byte): its first two
 * big chunks one each, then the faster way, trying the other every
 * LA_PROBE chunks; small chunks take the faster way without being timed.
 * Only the speed depends on it, not the result. */
#define LA_PROBE 32
#define LA_MIN_BYTES (256u << 10) /* a chunk timed */

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int lookahead_choice(worker *wk, const chunk *c)
{
    int best = wk->timed[0] && wk->timed[1] ? wk->ns_per_byte[1] <= wk->ns_per_byte[0] : !wk->timed[1];
    if (c->end - c->start < LA_MIN_BYTES)
        return wk->timed[0] && wk->timed[1] ? best : 1;
    if (!wk->timed[1] || !wk->timed[0])
        return !wk->timed[1];
    return ++wk->chunks % LA_PROBE ? best : !best;
}

static void lookahead_timed(worker *wk, const chunk *c, int ahead, double secs)
{
    uint64_t bytes = c->end - c->start;
    if (bytes < LA_MIN_BYTES)
        return;
    double r = secs * 1e9 / (double)bytes;
    wk->ns_per_byte[ahead] = wk->timed[ahead] ? (wk->ns_per_byte[ahead] + r) / 2 : r;
    wk->timed[ahead]++;
}

/* A worker of pass 2: takes chunks in file order until there are none, or
 * until one before the next has failed. */
static void pass2_worker(void *arg, int t)
{
    imp *m = arg;
    worker *wk = &m->workers[t];
    chunk *cs = m->chunks.p;
    for (;;) {
        uint64_t k = __atomic_fetch_add(&m->next_chunk, 1, __ATOMIC_RELAXED);
        if (k >= m->chunks.n || k > __atomic_load_n(&m->fail_at, __ATOMIC_RELAXED))
            break;
        chunk *c = &cs[k];
        int ahead = m->ahead_mode >= 0 ? m->ahead_mode : lookahead_choice(wk, c);
        pass2 w = {.r = &wk->r,
                   .tmp_n = c->tmp_base,
                   .tmp_end = c->tmp_base + (m->direct ? c->run_refs : c->refs + TMP_HEADER * c->objects),
                   .wk = wk,
                   .first_index = c->first_index,
                   .chunk_objects = m->direct ? c->run : c->objects,
                   .batch = m->direct ? m->batchable && ahead : m->batch_records,
                   .ahead = ahead && !(m->direct && m->batchable) && !m->gb.on};
        if (m->direct && c->run)
            _gcs_idmap_seek(&m->map, c->first_id, c->first_index, &w.cur);
        double t0 = thread_cpu();
        int rc = open_chunk(m, &wk->r, c) < 0 || run_chunk(m, &w, c) < 0 ? -1 : 0;
        _gcs_hprof_keep_free(c);
        if (rc < 0) {
            wk->fail_chunk = k;
            uint64_t seen = __atomic_load_n(&m->fail_at, __ATOMIC_RELAXED);
            while (k < seen && !__atomic_compare_exchange_n(&m->fail_at, &seen, k, 0, __ATOMIC_RELAXED,
                                                            __ATOMIC_RELAXED))
                ;
            break;
        }
        lookahead_timed(wk, c, ahead, thread_cpu() - t0);
        wk->references += w.references;
        wk->missing_refs += w.missing_refs;
        wk->jvm_bytes += w.jvm_bytes;
    }
    if (m->path)
        _gcs_dumpstream_close(&wk->r);
}

/* The bucket of index i is i >> bucket_shift(n): at most BUCKETS_MAX of
 * them, of at least 2^BUCKET_MIN_SHIFT indices (docs/heap-dumps.md, "Fifth
 * session", has the trade-off measured). */
unsigned _gcs_hprof_bucket_shift(uint64_t n)
{
    unsigned s = BUCKET_MIN_SHIFT;
    while (n > (uint64_t)BUCKETS_MAX << s)
        s++;
    gcs_assert_internal(s <= 22); /* n < 2^32: an index within its bucket leaves TMP_RUN free */
    return s;
}

/* The pool's words out of address order.  The chunks' counts let the
 * records hold at most total words: every object's header and every
 * reference.  A block is closed only when a record of at most TMP_OWN words
 * does not fit, i.e. when more than 3/4 of it is used, so closed blocks
 * take at most 4/3 of their records' words; records of more have extents
 * exactly their size; and each worker has at most one open block per
 * bucket.  Most of the bound is never touched: blocks are taken in turn,
 * and only those taken are resident. */
static uint64_t tmp_pool_words(const imp *m)
{
    uint64_t total = m->nfields_total + TMP_HEADER * m->map.n;
    return total + total / 3 + 1 + (m->nbuckets * m->nworkers + 1) * TMP_BLOCK;
}

/* Each class's words, pointer count and type as run2 stores them (a class
 * run2 does not take, whose size is out of range, keeps zeros: no record
 * names it).  -1 out of memory. */
static int run_classes(imp *m)
{
    const cls *cs = m->classes.p;
    m->ctab = calloc(m->classes.n ? m->classes.n : 1, sizeof *m->ctab);
    if (!m->ctab)
        return -1;
    for (size_t i = 0; i < m->classes.n; i++) {
        const cls *c = &cs[i];
        uint64_t words = object_words(c->jvm_size, c->nrefs);
        if (!c->dumped || c->jvm_size < 8 || words > UINT32_MAX)
            continue;
        m->ctab[i] = (run_class){(uint32_t)words, c->nrefs, c->type};
    }
    return 0;
}

/* The buckets by granule (gbk), where the records' references are resolved
 * in batches (a rank bitmap whose granules fit 32 bits) and no bucket spans
 * 2^31 granules (a record's first word keeps TMP_RUN free); else by index.
 * Slices of about a quarter of a bucket's granules on average, so that a
 * granule's bucket is mostly its slice's or the next.  -1 out of memory. */
static int granule_buckets(imp *m)
{
    if (m->direct || !m->batch_records || !m->map.n)
        return 0;
    const uint64_t nb = m->nbuckets, gmax = m->map.gmax;
    uint32_t *start = malloc((nb + 1) * sizeof *start);
    if (!start)
        return -1;
    _gcs_idmap_granules_every(&m->map, m->bshift, start, nb);
    for (uint64_t b = 0; b < nb; b++)
        if (start[b + 1] - start[b] > TMP_RUN) {
            free(start);
            return 0;
        }
    unsigned sh = 0;
    while ((gmax >> sh) + 1 > 4 * nb)
        sh++;
    uint64_t ns = (gmax >> sh) + 1;
    uint16_t *slice = malloc((ns + 1) * sizeof *slice);
    if (!slice) {
        free(start);
        return -1;
    }
    for (uint64_t sl = 0, b = 0; sl < ns; sl++) {
        while (b + 1 < nb && start[b + 1] <= sl << sh)
            b++;
        slice[sl] = (uint16_t)b;
    }
    slice[ns] = (uint16_t)(nb - 1);
    m->gb = (gbk){1, sh, start, slice};
    return 0;
}

/* Pass 2 on as many threads as there are (and chunks to give them); the
 * first error in file order is the one reported. */
int _gcs_hprof_pass2_run(imp *m, gcs_err *err)
{
    int nt = _gcs_heapdump_threads();
    if ((uint64_t)nt > m->chunks.n)
        nt = m->chunks.n ? (int)m->chunks.n : 1;
    m->workers = calloc((size_t)nt, sizeof *m->workers);
    if (!m->workers) {
        gcs_err_set(err, "%s: out of memory", m->r.name);
        return -1;
    }
    m->nworkers = (unsigned)nt;
    for (int t = 0; t < nt; t++) {
        worker *wk = &m->workers[t];
        wk->r.name = m->r.name;
        wk->r.err = &wk->err;
        wk->r.fd = -1;
        wk->fail_chunk = UINT64_MAX;
        wk->extents.elem = sizeof(tmp_extent);
        if (!m->direct && (!(wk->block_refs = calloc(m->nbuckets + 1, sizeof *wk->block_refs))
                           || !(wk->fill = calloc(m->nbuckets + 1, sizeof *wk->fill)))) {
            gcs_err_set(err, "%s: out of memory", m->r.name);
            return -1;
        }
    }
    if (!m->direct) {
        if (run_classes(m) < 0 || granule_buckets(m) < 0) {
            gcs_err_set(err, "%s: out of memory", m->r.name);
            return -1;
        }
        m->tmp_cap = tmp_pool_words(m);
        m->tmp_next = 0;
        if (!(m->tmp = malloc(m->tmp_cap * sizeof *m->tmp))) {
            gcs_err_set(err, "%s: out of memory", m->r.name);
            return -1;
        }
        /* huge pages (common/hugemem.c): the blocks are taken in turn, so
         * only the pool's used part is resident; its BUCKETS_MAX write
         * streams keep fewer TLB entries busy */
        _gcs_hugepages(m->tmp, (size_t)m->tmp_cap * sizeof *m->tmp);
    }
    if (m->path && m->r.own) { /* worker 0 takes over pass 1's window */
        m->workers[0].r.own = m->r.own;
        m->r.own = NULL;
    }
    m->next_chunk = 0;
    m->fail_at = UINT64_MAX;
    int ran = _gcs_par_run(nt, pass2_worker, m);
    const worker *bad = NULL;
    for (int t = 0; t < ran; t++) {
        const worker *wk = &m->workers[t];
        if (wk->fail_chunk != UINT64_MAX && (!bad || wk->fail_chunk < bad->fail_chunk))
            bad = wk;
        m->rep.references += wk->references;
        m->rep.missing_refs += wk->missing_refs;
        m->rep.jvm_bytes += wk->jvm_bytes;
    }
    for (int t = 0; t < nt; t++)
        _gcs_dumpstream_free(&m->workers[t].r);
    if (bad) {
        gcs_err_set(err, "%s", bad->err.msg);
        return -1;
    }
    return 0;
}
