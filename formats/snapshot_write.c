/* snapshot_write.c -- heap snapshots: the writer (gcs_snapshot_write:
 * format version 3, or 2 for the tests of the older reader,
 * _gcs_snapshot_write_version) and the buffered, checksumming section
 * stream under it (_gcs_snapw_*, snapshot_internal.h), which the
 * collector's own writer (gc/snapshot_gc.c) shares to stream its heap
 * without building a gcs_snapshot first.
 *
 * Separate from the readers: it shares nothing with them but the layout
 * (snapshot.c: the sections' tags, the file size the counts give) and the
 * rules a graph must pass before it is written (snapshot_check.c), and its
 * section stream serves the collector as well.  The byte layout is
 * specified in docs/snapshot-format.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#define GCS_SNAPSHOT_FILES
#include "snapshot_internal.h"

int _gcs_snapw_init_version(gcs_snapw *w, FILE *fp, uint32_t version)
{
    memset(w, 0, sizeof *w);
    w->fp = fp;
    w->cap = SNAP_CHUNK;
    w->buf = malloc(w->cap);
    w->crc_from = SIZE_MAX;
    w->version = version;
    return w->buf ? 0 : -1;
}

int _gcs_snapw_init(gcs_snapw *w, FILE *fp) { return _gcs_snapw_init_version(w, fp, GCS_SNAPSHOT_VERSION); }

void _gcs_snapw_free(gcs_snapw *w)
{
    free(w->buf);
    free(w->blocks);
    w->buf = NULL;
    w->blocks = NULL;
}

/* Version 3: the current block's checksum into the table; a new block. */
static void snapw_block_end(gcs_snapw *w)
{
    if (w->nblocks == w->blocks_cap) {
        size_t cap = w->blocks_cap ? 2 * w->blocks_cap : 64;
        uint32_t *b = realloc(w->blocks, cap * sizeof *b);
        if (!b) {
            w->failed = 1;
            return;
        }
        w->blocks = b;
        w->blocks_cap = cap;
    }
    w->blocks[w->nblocks++] = w->crc;
    w->crc = 0;
    w->block_left = w->block_bytes;
}

/* Version 3: the payload bytes p[0..n) into the open section's blocks. */
static void snapw_blocks(gcs_snapw *w, const uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t k = w->block_left < n ? (size_t)w->block_left : n;
        w->crc = _gcs_crc32c(w->crc, p, k);
        w->block_left -= k;
        p += k;
        n -= k;
        if (w->block_left == 0)
            snapw_block_end(w);
    }
}

/* The buffer's bytes from crc_from into the open section's checksum. */
static void snapw_checksum(gcs_snapw *w)
{
    if (w->crc_from == SIZE_MAX)
        return;
    if (w->version >= 3)
        snapw_blocks(w, w->buf + w->crc_from, w->len - w->crc_from);
    else
        w->crc = crc_update(w->crc, w->buf + w->crc_from, w->len - w->crc_from);
    w->crc_from = w->len;
}

void _gcs_snapw_flush(gcs_snapw *w)
{
    snapw_checksum(w);
    if (w->crc_from != SIZE_MAX)
        w->crc_from = 0;
    if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->fp) != w->len)
        w->failed = 1;
    w->written += w->len;
    w->len = 0;
}

void _gcs_snapw_put(gcs_snapw *w, const void *p, size_t n)
{
    const uint8_t *s = p;
    while (n > 0) {
        if (w->len == w->cap)
            _gcs_snapw_flush(w);
        size_t k = w->cap - w->len < n ? w->cap - w->len : n;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

void _gcs_snapw_header_typed(gcs_snapw *w, uint64_t n, uint64_t m, uint64_t r, uint64_t runs, uint64_t t,
                             uint64_t tb)
{
    snap_counts c = {.version = w->version, .n = n, .m = m, .r = r, .runs = runs, .t = t, .tb = tb};
    uint8_t h[SNAP_HEADER_BYTES_V3] = {0};
    unsigned hb = w->version >= 3 ? SNAP_HEADER_BYTES_V3 : SNAP_HEADER_BYTES_V2;
    memcpy(h, SNAP_MAGIC, 8);
    snap_st32(h + 8, w->version);
    snap_st32(h + 12, hb);
    snap_st32(h + 16, SNAP_ID_BYTES);
    snap_st32(h + 20, 0);
    snap_st64(h + 24, n);
    snap_st64(h + 32, m);
    snap_st64(h + 40, r);
    snap_st64(h + 48, runs);
    snap_st64(h + 56, _gcs_snap_file_bytes(&c));
    snap_st64(h + 64, t);
    snap_st64(h + 72, tb);
    if (w->version >= 3) {
        snap_st32(h + 80, SNAP_NSECTIONS_V3);
        snap_st32(h + 84, SNAP_BLOCK_SHIFT);
        snap_st32(h + 88, 0);
        snap_st32(h + 92, _gcs_crc32c(0, h, 92));
    } else {
        snap_st32(h + 80, SNAP_NSECTIONS_V2);
        snap_st32(h + 84, crc_update(0, h, 84));
    }
    _gcs_snapw_put(w, h, hb);
}

void _gcs_snapw_header(gcs_snapw *w, uint64_t n, uint64_t m, uint64_t r, uint64_t runs)
{
    _gcs_snapw_header_typed(w, n, m, r, runs, 0, 0);
}

void _gcs_snapw_no_types(gcs_snapw *w)
{
    int v3 = w->version >= 3;
    _gcs_snapw_section_begin(w, v3 ? SNAP3_TYPES : SNAP_SEC_TYPES, 0);
    _gcs_snapw_section_end(w);
    _gcs_snapw_section_begin(w, v3 ? SNAP3_OBJTYPES : SNAP_SEC_OBJTYPES, 0);
    _gcs_snapw_section_end(w);
}

void _gcs_snapw_section_begin(gcs_snapw *w, int section, uint64_t payload_bytes)
{
    /* Sections never nest and start 8-aligned; a caller that breaks this is
     * a bug, and in a release build the file is reported unwritten. */
    gcs_assert_internal(w->crc_from == SIZE_MAX && _gcs_snapw_offset(w) % 8 == 0);
    if (w->crc_from != SIZE_MAX || _gcs_snapw_offset(w) % 8)
        w->failed = 1;
    uint8_t h[SNAP_SECTION_HEAD] = {0};
    memcpy(h, w->version >= 3 ? _gcs_snap3_tags[section] : _gcs_snap_tags[section], 4);
    snap_st64(h + 8, payload_bytes);
    w->section = section;
    if (w->version >= 3) {
        /* the head is checksummed with the block table, at the end */
        memcpy(w->head, h, sizeof h);
        _gcs_snapw_put(w, h, sizeof h);
        w->crc = 0;
        w->nblocks = 0;
        w->block_bytes = w->block_left = snap3_block_bytes(section);
        w->crc_from = w->len;
    } else {
        w->crc = crc_update(0, NULL, 0);
        w->crc_from = w->len;
        _gcs_snapw_put(w, h, sizeof h);
    }
    w->section_start = _gcs_snapw_offset(w);
    w->section_len = payload_bytes;
}

void _gcs_snapw_section_end(gcs_snapw *w)
{
    /* The payload matches the length declared in the section's head. */
    gcs_assert_internal(_gcs_snapw_offset(w) - w->section_start == w->section_len);
    if (_gcs_snapw_offset(w) - w->section_start != w->section_len)
        w->failed = 1;
    static const uint8_t zero[8];
    _gcs_snapw_put(w, zero, snap_pad8(w->section_len) - w->section_len);
    snapw_checksum(w);
    w->crc_from = SIZE_MAX;
    if (w->version >= 3) {
        if (w->block_left < w->block_bytes) /* the last, shorter block */
            snapw_block_end(w);
        gcs_assert_internal(w->failed || w->nblocks == snap3_nblocks(w->section_len, w->section));
        uint32_t frame = _gcs_crc32c(0, w->head, sizeof w->head);
        for (size_t k = 0; k < w->nblocks; k++) {
            uint8_t *q = _gcs_snapw_reserve(w, 4);
            snap_st32(q, w->blocks[k]);
            frame = _gcs_crc32c(frame, q, 4);
        }
        _gcs_snapw_u32(w, frame);
        if ((4 * w->nblocks + 4) % 8)
            _gcs_snapw_u32(w, 0);
        return;
    }
    uint8_t t[SNAP_SECTION_TAIL] = {0};
    snap_st32(t, w->crc);
    _gcs_snapw_put(w, t, sizeof t);
}

void _gcs_snapw_params(gcs_snapw *w, const gcs_snapshot_params *p)
{
    uint8_t b[SNAP_PARAMS_BYTES] = {0};
    snap_st32(b + 0, p->gc_threads);
    snap_st32(b + 4, p->mark_mode);
    snap_st64(b + 8, p->heap_limit);
    snap_st32(b + 16, p->page_bytes);
    snap_st32(b + 20, p->numa_policy);
    snap_st32(b + 24, (uint32_t)p->numa_node);
    snap_st32(b + 28, p->node_count);
    snap_st64(b + 32, p->collection);
    snap_st64(b + 40, p->timestamp_ns);
    snap_st64(b + 48, p->heap_base);
    snap_st32(b + 56, p->header_bytes);
    snap_st32(b + 60, p->granule_bytes);
    snap_st32(b + 64, p->source);
    snap_st32(b + 68, p->layout);
    _gcs_snapw_section_begin(w, SNAP_SEC_PARAMS, SNAP_PARAMS_BYTES);
    _gcs_snapw_put(w, b, sizeof b);
    _gcs_snapw_section_end(w);
}

/* A column of n 32-bit values (version 3) or the ids of edges and roots. */
static void snapw_u32s(gcs_snapw *w, int sec, const uint32_t *v, uint64_t n)
{
    _gcs_snapw_section_begin(w, sec, n * 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    _gcs_snapw_put(w, v, (size_t)(n * 4));
#else
    for (uint64_t i = 0; i < n; i++)
        _gcs_snapw_u32(w, v[i]);
#endif
    _gcs_snapw_section_end(w);
}

static void snapw_u64s(gcs_snapw *w, int sec, const uint64_t *v, uint64_t n)
{
    _gcs_snapw_section_begin(w, sec, n * 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    _gcs_snapw_put(w, v, (size_t)(n * 8));
#else
    for (uint64_t i = 0; i < n; i++)
        snap_st64(_gcs_snapw_reserve(w, 8), v[i]);
#endif
    _gcs_snapw_section_end(w);
}

int gcs_snapshot_write(const gcs_snapshot *g, const char *path, gcs_err *err)
{
    return _gcs_snapshot_write_version(g, path, GCS_SNAPSHOT_VERSION, err);
}

int _gcs_snapshot_write_version(const gcs_snapshot *g, const char *path, uint32_t version, gcs_err *err)
{
    gcs_err verr;
    if (gcs_snapshot_validate(g, &verr) < 0) {
        gcs_err_set(err, "%s: not written: %s", path, verr.msg);
        return -1;
    }
    uint64_t n = g->nobjects, runs = 0;
    for (uint64_t i = 0; i < n; i++)
        runs += i == 0 || g->node[i] != g->node[i - 1];
    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) < 0)
        return -1;
    gcs_snapw w;
    if (_gcs_snapw_init_version(&w, out.fp, version) < 0) {
        gcs_outfile_abort(&out);
        gcs_err_set(err, "%s: out of memory", path);
        return -1;
    }
    int v3 = version >= 3;
    uint64_t tb = 0;
    for (uint32_t k = 0; k < g->ntypes; k++)
        tb += strlen(g->type_names[k]) + 1;
    _gcs_snapw_header_typed(&w, n, g->nfields, g->nroots, runs, g->ntypes, tb);
    _gcs_snapw_params(&w, &g->params);
    if (v3) {
        snapw_u64s(&w, SNAP3_ADDR, g->addr, n);
        snapw_u32s(&w, SNAP3_WORDS, g->words, n);
        snapw_u32s(&w, SNAP3_NPTRS, g->nptrs, n);
        snapw_u64s(&w, SNAP3_ESTART, g->edge_start, n + 1);
    } else {
        _gcs_snapw_section_begin(&w, SNAP_SEC_OBJECTS, n * SNAP_OBJECT_BYTES);
        for (uint64_t i = 0; i < n; i++) {
            uint8_t *p = _gcs_snapw_reserve(&w, SNAP_OBJECT_BYTES);
            snap_st64(p, g->addr[i]);
            snap_st32(p + 8, g->words[i]);
            snap_st32(p + 12, g->nptrs[i]);
        }
        _gcs_snapw_section_end(&w);
    }
    _gcs_snapw_section_begin(&w, v3 ? SNAP3_NODES : SNAP_SEC_NODES, runs * SNAP_RUN_BYTES);
    for (uint64_t i = 0; i < n; i++) {
        if (i > 0 && g->node[i] == g->node[i - 1])
            continue;
        uint8_t *p = _gcs_snapw_reserve(&w, SNAP_RUN_BYTES);
        snap_st32(p, (uint32_t)i);
        snap_st16(p + 4, g->node[i]);
        snap_st16(p + 6, 0);
    }
    _gcs_snapw_section_end(&w);
    snapw_u32s(&w, v3 ? SNAP3_EDGES : SNAP_SEC_EDGES, g->edges, g->nfields);
    snapw_u32s(&w, v3 ? SNAP3_ROOTS : SNAP_SEC_ROOTS, g->roots, g->nroots);
    _gcs_snapw_section_begin(&w, v3 ? SNAP3_TYPES : SNAP_SEC_TYPES, tb);
    for (uint32_t k = 0; k < g->ntypes; k++)
        _gcs_snapw_put(&w, g->type_names[k], strlen(g->type_names[k]) + 1);
    _gcs_snapw_section_end(&w);
    snapw_u32s(&w, v3 ? SNAP3_OBJTYPES : SNAP_SEC_OBJTYPES, g->type, g->ntypes ? n : 0);
    _gcs_snapw_flush(&w);
    int failed = w.failed;
    _gcs_snapw_free(&w);
    if (failed) {
        gcs_outfile_abort(&out);
        gcs_err_set(err, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return gcs_outfile_commit(&out, err);
}
