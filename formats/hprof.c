/* hprof.c -- Java heap dumps (HPROF 1.0.1-1.0.3) imported as heap snapshots.
 *
 * Two passes over the dump, each streamed through bounded windows (a
 * buffer, a plain file, or gzip -- one member, or HotSpot's `GC.heap_dump
 * -gz` members, inflated member by member with libdeflate; dumpstream.c):
 *
 *   pass 1  sequential: strings, class loads, class dumps (fields, statics),
 *           root records; every object's id (8 bytes per object) and the
 *           counts that size the snapshot; and the dump cut into chunks of
 *           about 2 MiB at record boundaries, each with its objects and the
 *           references they hold (instances counted per class until the
 *           classes are resolved) -- in a gzip dump at the access points
 *           the reader records, so that a chunk can be inflated on its own;
 *           and, within the memory bar, a gzip dump's chunks as inflated,
 *           so that pass 2 need not inflate those again (keep_begin).
 *   then    the ids indexed (hprof_ids.c: a rank bitmap over the id range,
 *           whose ranks are the dump's address order; the ids freed), the
 *           classes resolved, the snapshot allocated, and each chunk given
 *           its slice of the edges: of the snapshot's own when every chunk
 *           is a run of indices (a dump in address order: edges_direct);
 *           otherwise only a count of words, the records going to buckets
 *           by index range (cut, with a rank bitmap, at their first
 *           indices' granules: granule_buckets).
 *   pass 2  parallel (par.c), a worker per thread taking chunks in file
 *           order and reading each itself (from memory, as pass 1 kept
 *           it, with pread, or inflating it from its access point): each
 *           object's size, type
 *           and pointer count, its references as indices (place, add_ref;
 *           runs of instances of one class and object arrays in a loop of
 *           their own, runs2).  In address order an object's index is the
 *           next of its chunk's run, its id checked against the ids pass 1
 *           saw there (object_index); otherwise its bucket from its id's
 *           granule (rec_bucket), and a look-ahead prefetches what the
 *           next records will miss on (prefetch_ahead, run_ahead).
 *           References to random places are stored as the id map's
 *           granules and resolved in batches (resolve_refs), after the
 *           chunk or after edges_in_order.
 *   then    out of address order, the objects' records put in index order
 *           a bucket at a time, which the caches hold (edges_in_order); the
 *           addresses, each object's fields checked on the way
 *           (place_addresses); the roots; the rest of the snapshot's
 *           validation (check_graph; the edges pass by construction).
 *
 * The results do not depend on the number of threads or chunks: every
 * object and reference lands at a place fixed by pass 1, the totals are
 * sums, and an error is the first one in file order (the failing chunk
 * with the lowest index: the chunks before it were all taken before it, and
 * are finished; tests/test_hprof.c).
 *
 * Memory beyond the snapshot: the ids, 8 B per object, until they are
 * indexed -- in address order they become the snapshot's addr[]
 * (ids_as_addr); the id map, 2 bits per 8 bytes of the id range (about 1-2
 * B per object); out of address order, the records, 8 B per instance of a
 * run or 16 B per other object and 4 B per edge, the part of each worker's
 * last block per bucket left unused, and per worker 8 B per index of a
 * bucket (edges_in_order); a 4 MiB window per thread; a gzip dump's kept
 * chunks, up to what the bar leaves (keep_bound).
 *
 * Byte order: HPROF is big-endian.  Layout of the records: the HPROF format
 * of the JDK (jdk/src/hotspot/share/services/heapDumper.cpp's comment) and
 * Android's additions; docs/heap-dumps.md.
 *
 * The files: this one has the import's order of work (import) and its entry
 * points; pass 1 is hprof_scan.c, the classes between the passes
 * hprof_classes.c, pass 2 and the record parser both passes share
 * hprof_pass2.c, the edges' layout and order, the addresses and the
 * validation hprof_edges.c; what they share is in heapdump_internal.h (its
 * part fenced by GCS_HPROF_IMPORTER). */

#define GCS_HPROF_IMPORTER
#include <stdlib.h>

#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "heapdump_internal.h"
#include "snapshot_internal.h"

static size_t chunk_bytes = HPROF_CHUNK; /* _gcs_hprof_set_chunk_bytes */

void _gcs_hprof_set_chunk_bytes(size_t n) { __atomic_store_n(&chunk_bytes, n ? n : HPROF_CHUNK, __ATOMIC_RELAXED); }

static void (*between_passes)(void *); /* _gcs_hprof_set_between_passes */
static void *between_arg;

void _gcs_hprof_set_between_passes(void (*fn)(void *arg), void *arg)
{
    between_passes = fn;
    between_arg = arg;
}

static int64_t keep_limit = -1; /* _gcs_hprof_set_keep */
static int ahead_mode = -1;     /* _gcs_hprof_set_ahead */

void _gcs_hprof_set_ahead(int mode) { __atomic_store_n(&ahead_mode, mode < 0 ? -1 : mode > 0, __ATOMIC_RELAXED); }

void _gcs_hprof_set_keep(int64_t n) { __atomic_store_n(&keep_limit, n < 0 ? -1 : n, __ATOMIC_RELAXED); }

/* ---- the import ---------------------------------------------------------------------- */

static void imp_free(imp *m)
{
    _gcs_dumpstream_free(&m->r);
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
    free(m->class_edge);
    free(m->ids.p);
    _gcs_idmap_free(&m->map);
    _gcs_hprof_keep_trim(m, 0);
    free(m->chunks.p);
    free(m->hist.p);
    free(m->touched.p);
    _gcs_gzindex_free(&m->gzi);
    free(m->tmp);
    free(m->ctab);
    free((void *)m->gb.start);
    free((void *)m->gb.slice);
    for (unsigned t = 0; m->workers && t < m->nworkers; t++) {
        free(m->workers[t].block_refs);
        free(m->workers[t].fill);
        free(m->workers[t].extents.p);
    }
    free(m->workers);
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
    m->r.fd = -1;
    m->path = path;
    m->data = data ? data : (const uint8_t *)"";
    m->len = data ? len : 0;
    m->classes.elem = sizeof(cls);
    m->fields.elem = 1;
    m->statics.elem = m->rootids.elem = m->ids.elem = 8;
    m->refs.elem = m->touched.elem = 4;
    m->sblob.elem = 1;
    m->chunks.elem = sizeof(chunk);
    m->hist.elem = sizeof(hist_pair);
    m->rep.format = GCS_HEAPDUMP_HPROF;
    m->jlc = UINT32_MAX;
    m->chunk_bytes = __atomic_load_n(&chunk_bytes, __ATOMIC_RELAXED);
    m->keep_limit = __atomic_load_n(&keep_limit, __ATOMIC_RELAXED);
    m->ahead_mode = __atomic_load_n(&ahead_mode, __ATOMIC_RELAXED);
    m->gzi.span = m->chunk_bytes;
    m->cut_at = &m->cut_plain;
    m->ordered = 1;
    m->ids_ascending = 1;
    gcs_snapshot *g = NULL;
    gcs_err e2;

    /* pass 1 */
    if (path) {
        if (_gcs_dumpstream_open(&m->r, path, HPROF_BUF, &m->gzi) < 0)
            goto fail;
        if (m->r.kind == DS_GZIP)
            m->cut_at = &m->gzi.next_cut;
        if (m->r.kind == DS_GZIP && m->keep_limit != 0) {
            m->r.tap = _gcs_hprof_keep_tap;
            m->r.tap_arg = m;
        }
    } else {
        m->r.buf = m->data;
        m->r.len = m->len;
    }
    if (_gcs_hprof_scan(m) < 0)
        goto fail;
    m->r.tap = NULL;
    m->rep.dump_bytes = hr_off(&m->r);
    m->rep.passes = 1;
    if (path)
        _gcs_dumpstream_close(&m->r);
    if (m->gzi.block) { /* the members listed, now that the pipe (if any) has stopped */
        m->rep.gzip_members = m->gzi.nm;
        m->rep.gzip_block_bytes = m->gzi.block;
    }
    uint64_t n = m->ids.n;
    if (n > GCS_SNAPSHOT_MAX_OBJECTS) {
        gcs_err_set(err, "%s: %llu objects: a snapshot holds at most %llu", name, (unsigned long long)n,
                    (unsigned long long)GCS_SNAPSHOT_MAX_OBJECTS);
        goto fail;
    }
    uint64_t dup;
    m->id_range.ascending = m->ids_ascending;
    int keep = m->ids_ascending; /* they may become addr[] (ids_as_addr) */
    int built = _gcs_idmap_build(&m->map, m->ids.p, n, &m->id_range, keep, &dup);
    if (built != 0 || !keep || m->map.sorted)
        m->ids.p = NULL; /* the map has them */
    if (built != 0) {
        if (built < 0)
            gcs_err_set(err, "%s: out of memory indexing %llu object ids", name, (unsigned long long)n);
        else
            gcs_err_set(err, "%s: object id 0x%llx is dumped twice", name, (unsigned long long)dup);
        goto fail;
    }
    if (n && m->map.min == 0) {
        gcs_err_set(err, "%s: an object has id 0 (HPROF's NULL)", name);
        goto fail;
    }
    /* The layout (docs/heap-dumps.md): 4-byte ids, a 32-bit JVM; 8-byte ids
     * over less than 32 GiB, compressed references; compressed class
     * pointers with 8-byte ids either way (HotSpot's default since JDK 8). */
    uint64_t span = n ? m->map.max - m->map.min : 0;
    m->ref = m->idsz == 4 || span < (32ull << 30) ? 4 : 8;
    m->hdr = m->idsz == 4 ? 8 : 12;
    m->ahdr = m->idsz == 4 ? 12 : 16;
    m->rep.ref_bytes = m->ref;
    m->rep.object_header_bytes = m->hdr;
    m->rep.array_header_bytes = m->ahdr;
    if (_gcs_hprof_resolve_classes(m, err) < 0)
        goto fail;
    _gcs_hprof_chunk_slices(m);
    m->direct = _gcs_hprof_edges_direct(m);
    /* pass 2's peak: the snapshot, the id map, the kept chunks (the
     * records instead out of address order) */
    _gcs_hprof_keep_trim(m, m->direct ? _gcs_hprof_keep_bound(m, n, m->nfields_total, m->map.bytes) : 0);
    m->popcnt = _gcs_cpu_popcnt();
    m->batchable = !m->map.sorted && m->map.gmax < REF_MISSING;
    m->batch_records = !m->direct && m->batchable && m->ahead_mode != 0;
    uint64_t nroots = m->rootids.n + m->rep.classes;
    m->addr_ids = m->direct && m->ids.p && m->ids_ascending;
    /* pass 2 writes every type; the snapshot takes the ids over, or they are freed */
    g = _gcs_snapshot_new_filled(n, m->nfields_total, nroots, _gcs_hprof_ids_as_addr(m), &e2);
    if (!g) {
        gcs_err_set(err, "%s: %s", name, e2.msg);
        goto fail;
    }
    m->g = g;
    m->edst = m->direct ? g->edges : NULL;
    m->bshift = _gcs_hprof_bucket_shift(n);
    m->nbuckets = (n + (1ull << m->bshift) - 1) >> m->bshift;
    if (m->direct) { /* out of address order edges_in_order writes them, on every thread */
        _gcs_prefault(g->words, (size_t)n * sizeof *g->words);
        _gcs_prefault(g->nptrs, (size_t)n * sizeof *g->nptrs);
        _gcs_prefault(g->type, (size_t)n * sizeof *g->type);
        _gcs_prefault(g->edge_start, (size_t)(n + 1) * sizeof *g->edge_start);
        _gcs_prefault(g->edges, (size_t)m->nfields_total * sizeof *g->edges);
    }
    if (_gcs_hprof_build_types(m, err) < 0)
        goto fail;

    /* pass 2 */
    if (between_passes)
        between_passes(between_arg);
    if (_gcs_hprof_pass2_run(m, err) < 0 || (m->direct && _gcs_hprof_write_classes(m, err) < 0))
        goto fail;
    m->rep.passes = 2;
    if (_gcs_hprof_edges_in_order(m, err) < 0)
        goto fail;
    free(m->tmp);
    m->tmp = NULL;
    int objects_bad;
    if (_gcs_hprof_place_addresses(m, &objects_bad) < 0) {
        gcs_err_set(err, "%s: out of memory", name);
        goto fail;
    }
    uint64_t r = 0;
    const uint64_t *rid = m->rootids.p;
    for (size_t k = 0; k < m->rootids.n; k++) {
        uint32_t idx = _gcs_idmap_find(&m->map, rid[k]);
        if (idx == IDMAP_NONE)
            m->rep.missing_roots++;
        else
            g->roots[r++] = idx;
    }
    const cls *cs = m->classes.p;
    for (size_t k = 0; k < m->classes.n; k++)
        if (cs[k].dumped)
            g->roots[r++] = _gcs_idmap_find(&m->map, cs[k].id);
    g->nroots = r;
    g->params.source = GCS_SNAPSHOT_SOURCE_HPROF;
    g->params.header_bytes = 8;
    g->params.granule_bytes = 8;
    g->params.heap_base = n ? m->map.min : 0;
    g->params.timestamp_ns = m->timestamp_ms * 1000000u;
    if (_gcs_hprof_check_graph(g, objects_bad, &e2) < 0) {
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
