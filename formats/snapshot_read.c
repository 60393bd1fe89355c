/* snapshot_read.c -- heap snapshots: reading a file (gcs_snapshot_read,
 * gcs_snapshot_read_mem): the choice of reader (a heap dump is imported, a
 * zstd-compressed snapshot decompressed, version 3 mapped or read and handed
 * to snapshot_map.c, which reads it in place), the reader of versions 1 and
 * 2, with its OpenMP-parallel section reads and CRCs, and the parsers of the
 * params and the type names that snapshot_map.c shares.  Separate from the
 * graph (snapshot.c) and its rules (snapshot_check.c), which it calls once a
 * load; the hot loops (the section reads and their CRCs, the rows into
 * columns, edge_start's prefix sum) keep their callees in this file.
 *
 * Reader: the header is read first and every count is checked against the
 * header's file size and the real file size before anything is allocated, so
 * a forged count can never make the reader allocate more than the file could
 * hold.  Sections are then read in large chunks (one read per MiB, or
 * straight from the caller's buffer), their CRC-32 checked, and only then is
 * the content validated (gcs_snapshot_validate), so that a damaged byte is
 * reported as a checksum mismatch, not as whatever it happens to break. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "heapdump_internal.h"
#define GCS_SNAPSHOT_FILES
#include "snapshot_internal.h"
#include "zstd_internal.h"

typedef struct snap_src {
    const char *name;
    const uint8_t *mem;     /* buffer source, or NULL */
    int fd;                 /* file source */
    uint64_t size, pos;
    uint8_t *chunk;         /* file source: the read buffer */
    uint64_t sec_off[SNAP_NSECTIONS_V2 + 1]; /* file offsets of the sections, then the end */
    unsigned nsec;          /* sections of the file's version */
} snap_src;

static int section_at(const snap_src *s, uint64_t off)
{
    for (int i = 0; i < (int)s->nsec; i++)
        if (off < s->sec_off[i + 1])
            return i;
    return (int)s->nsec - 1;
}

/* File source: reads the n bytes at the current position into buf. */
static int src_fill(snap_src *s, uint8_t *buf, size_t n, gcs_err *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(s->fd, buf + got, n - got, (off_t)(s->pos + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            gcs_err_set(err, "%s: read failed: %s", s->name, strerror(errno));
            return -1;
        }
        if (k == 0) {
            gcs_err_set(err, "%s: truncated in section '%s' (the file shrank while being read)", s->name,
                        _gcs_snap_names[section_at(s, s->pos + got)]);
            return -1;
        }
        got += (size_t)k;
    }
    return 0;
}

/* Returns n (<= SNAP_CHUNK) bytes at the current position and adds them to
 * *crc; NULL with err set when the file cannot be read. */
static const uint8_t *src_get(snap_src *s, size_t n, uint32_t *crc, gcs_err *err)
{
    const uint8_t *p;
    if (s->mem) {
        p = s->mem + s->pos;
    } else {
        if (src_fill(s, s->chunk, n, err) < 0)
            return NULL;
        p = s->chunk;
    }
    s->pos += n;
    if (crc)
        *crc = crc_update(*crc, p, n);
    return p;
}

/* The same into dst (n <= SNAP_CHUNK): a file is read straight into it,
 * without the copy through the chunk buffer.  0, or -1 with err set. */
static int src_copy(snap_src *s, void *dst, size_t n, uint32_t *crc, gcs_err *err)
{
    if (s->mem)
        memcpy(dst, s->mem + s->pos, n);
    else if (src_fill(s, dst, n, err) < 0)
        return -1;
    s->pos += n;
    *crc = crc_update(*crc, dst, n);
    return 0;
}

/* ---- reading a large section on several threads (OpenMP) -----------------
 * The next nbytes (a whole number of unit-byte rows) are cut into one slice
 * per thread; each thread reads its slice (into dst, or through its own
 * chunk buffer when dst is NULL), takes the slice's CRC from zero and hands
 * each piece to convert; the slices' CRCs are then joined with
 * crc32_combine, which gives the CRC of the whole payload.  1 when this is
 * not worth it (or not built with OpenMP) or when some read failed: nothing
 * is then consumed and the caller reads the section on its own thread, which
 * also gives a failed read its usual message. */
typedef void (*snap_convert_fn)(void *ctx, const uint8_t *p, uint64_t off, size_t n);

static int src_read_par(snap_src *s, uint64_t nbytes, size_t unit, uint8_t *dst, snap_convert_fn convert,
                        void *ctx, uint32_t *crc)
{
#ifdef _OPENMP
    enum { MAXT = 64 };
    int want = omp_get_max_threads();
    if (nbytes < SNAP_PAR_MIN_BYTES || want < 2)
        return 1;
    if (want > MAXT)
        want = MAXT;
    uint32_t part[MAXT];
    uint64_t plen[MAXT];
    int used = 1, failed = 0;
    uint64_t units = nbytes / unit, step = SNAP_CHUNK / unit * unit;
#pragma omp parallel num_threads(want) reduction(| : failed)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        uint64_t lo = units * (uint64_t)t / (uint64_t)nt * unit, hi = units * (uint64_t)(t + 1) / (uint64_t)nt * unit;
        uint8_t *buf = dst || s->mem ? NULL : malloc(SNAP_CHUNK);
        uint32_t c = (uint32_t)crc32_z(0, NULL, 0);
        if (!dst && !s->mem && !buf)
            failed = 1;
        for (uint64_t off = lo; off < hi && !failed; off += step) {
            size_t k = (size_t)(hi - off < step ? hi - off : step);
            const uint8_t *q;
            if (s->mem) {
                q = s->mem + s->pos + off;
                if (dst) {
                    memcpy(dst + off, q, k);
                    q = dst + off;
                }
            } else {
                uint8_t *to = dst ? dst + off : buf;
                for (size_t got = 0; got < k && !failed;) {
                    ssize_t r = pread(s->fd, to + got, k - got, (off_t)(s->pos + off + got));
                    if (r > 0)
                        got += (size_t)r;
                    else if (r == 0 || errno != EINTR)
                        failed = 1;
                }
                q = to;
            }
            if (failed)
                break;
            c = (uint32_t)crc32_z(c, q, k);
            if (convert)
                convert(ctx, q, off, k);
        }
        free(buf);
        part[t] = c;
        plen[t] = hi - lo;
#pragma omp single
        used = nt;
    }
    if (failed)
        return 1;
    for (int t = 0; t < used; t++)
        *crc = (uint32_t)crc32_combine(*crc, part[t], (z_off_t)plen[t]);
    s->pos += nbytes;
    return 0;
#else
    (void)s, (void)nbytes, (void)unit, (void)dst, (void)convert, (void)ctx, (void)crc;
    return 1;
#endif
}

/* The objects section's rows (SNAP_OBJECT_BYTES each, from byte off of the
 * payload) into the snapshot's columns. */
static void objects_convert(void *ctx, const uint8_t *q, uint64_t off, size_t n)
{
    gcs_snapshot *g = ctx;
    uint64_t i = off / SNAP_OBJECT_BYTES;
    for (size_t j = 0; j < n / SNAP_OBJECT_BYTES; j++, q += SNAP_OBJECT_BYTES) {
        g->addr[i + j] = snap_ld64(q);
        g->words[i + j] = snap_ld32(q + 8);
        g->nptrs[i + j] = snap_ld32(q + 12);
    }
}

/* Header checks, in the order that gives the most useful message. */
static int read_header(snap_src *s, snap_counts *c, gcs_err *err)
{
    const char *name = s->name;
    if (s->size == 0) {
        gcs_err_set(err, "%s: empty file, not a gcscale heap snapshot", name);
        return -1;
    }
    /* The version decides the header's length: read the first 12 bytes. */
    uint8_t h[SNAP_HEADER_BYTES_V2];
    size_t have = s->size < 12 ? (size_t)s->size : 12;
    const uint8_t *q = src_get(s, have, NULL, err);
    if (!q)
        return -1;
    memcpy(h, q, have);
    if (memcmp(h, SNAP_MAGIC, have < 8 ? have : 8) != 0) {
        gcs_err_set(err, "%s: not a gcscale heap snapshot (bad magic)", name);
        return -1;
    }
    if (have < 12) {
        gcs_err_set(err, "%s: truncated in the header (%llu of at least 12 bytes)", name, (unsigned long long)have);
        return -1;
    }
    uint32_t version = snap_ld32(h + 8);
    if (version < 1 || version > 3) {
        gcs_err_set(err, "%s: unsupported snapshot format version %u (this reader reads versions 1, 2 and 3)",
                    name, version);
        return -1;
    }
    if (version == 3) { /* the callers read version 3 in place; a file that changed under them */
        gcs_err_set(err, "%s: the file changed while it was being read", name);
        return -1;
    }
    unsigned hbytes = version == 1 ? SNAP_HEADER_BYTES_V1 : SNAP_HEADER_BYTES_V2;
    if (s->size < hbytes) {
        gcs_err_set(err, "%s: truncated in the header (%llu of %u bytes)", name, (unsigned long long)s->size,
                    hbytes);
        return -1;
    }
    if (!(q = src_get(s, hbytes - 12, NULL, err)))
        return -1;
    memcpy(h + 12, q, hbytes - 12);
    unsigned crc_at = hbytes - 4, nsec_at = hbytes - 8;
    uint32_t stored = snap_ld32(h + crc_at), computed = crc_update(0, h, crc_at);
    if (stored != computed) {
        gcs_err_set(err, "%s: header checksum mismatch (stored %08x, computed %08x)", name, stored, computed);
        return -1;
    }
    c->version = version;
    s->nsec = snap_nsections(version);
    if (snap_ld32(h + 12) != hbytes || snap_ld32(h + nsec_at) != s->nsec) {
        gcs_err_set(err, "%s: header of %u bytes with %u sections (version %u has %u and %u)", name,
                    snap_ld32(h + 12), snap_ld32(h + nsec_at), version, hbytes, s->nsec);
        return -1;
    }
    if (snap_ld32(h + 16) != SNAP_ID_BYTES) {
        gcs_err_set(err, "%s: unsupported id width of %u bytes (versions 1 and 2 have 4-byte ids)", name,
                    snap_ld32(h + 16));
        return -1;
    }
    if (snap_ld32(h + 20) != 0) {
        gcs_err_set(err, "%s: unknown header flags %08x", name, snap_ld32(h + 20));
        return -1;
    }
    c->n = snap_ld64(h + 24);
    c->m = snap_ld64(h + 32);
    c->r = snap_ld64(h + 40);
    c->runs = snap_ld64(h + 48);
    c->file_bytes = snap_ld64(h + 56);
    c->t = version == 1 ? 0 : snap_ld64(h + 64);
    c->tb = version == 1 ? 0 : snap_ld64(h + 72);
    if (_gcs_snap_check_counts(c, name, err) < 0)
        return -1;
    uint64_t payload[SNAP_NSECTIONS_V2];
    int ok;
    _gcs_snap_section_sizes(c, payload, &ok);
    s->sec_off[0] = hbytes;
    for (int i = 0; i < (int)s->nsec; i++)
        s->sec_off[i + 1] = s->sec_off[i] + SNAP_SECTION_HEAD + snap_pad8(payload[i]) + SNAP_SECTION_TAIL;
    if (s->size < c->file_bytes) {
        gcs_err_set(err, "%s: truncated in section '%s' (file has %llu of %llu bytes)", name,
                    _gcs_snap_names[section_at(s, s->size)], (unsigned long long)s->size,
                    (unsigned long long)c->file_bytes);
        return -1;
    }
    if (s->size > c->file_bytes) {
        gcs_err_set(err, "%s: %llu unexpected bytes after the last section (file has %llu, expected %llu)",
                    name, (unsigned long long)(s->size - c->file_bytes), (unsigned long long)s->size,
                    (unsigned long long)c->file_bytes);
        return -1;
    }
    return 0;
}

/* Section frame: reads the 16-byte head (into *crc) and returns 0; the
 * caller reads the payload, then section_close checks pad, CRC, tag, length. */
static int section_open(snap_src *s, int sec, uint32_t *crc, uint8_t head[SNAP_SECTION_HEAD], gcs_err *err)
{
    *crc = crc_update(0, NULL, 0);
    const uint8_t *h = src_get(s, SNAP_SECTION_HEAD, crc, err);
    if (!h)
        return -1;
    memcpy(head, h, SNAP_SECTION_HEAD);
    (void)sec;
    return 0;
}

static int section_close(snap_src *s, int sec, uint32_t crc, const uint8_t head[SNAP_SECTION_HEAD],
                         uint64_t payload, gcs_err *err)
{
    size_t pad = (size_t)(snap_pad8(payload) - payload);
    const uint8_t *p = src_get(s, pad, &crc, err);
    if (!p)
        return -1;
    int pad_zero = 1;
    for (size_t i = 0; i < pad; i++)
        pad_zero &= p[i] == 0;
    const uint8_t *t = src_get(s, SNAP_SECTION_TAIL, NULL, err);
    if (!t)
        return -1;
    uint32_t stored = snap_ld32(t);
    if (stored != crc || snap_ld32(t + 4) != 0) {
        if (stored != crc)
            gcs_err_set(err, "%s: checksum mismatch in section '%s' (stored %08x, computed %08x)", s->name,
                        _gcs_snap_names[sec], stored, crc);
        else
            gcs_err_set(err, "%s: checksum mismatch in section '%s' (damaged checksum trailer)", s->name,
                        _gcs_snap_names[sec]);
        return -1;
    }
    if (memcmp(head, _gcs_snap_tags[sec], 4) != 0) {
        gcs_err_set(err, "%s: section %d is not '%s' (tag %02x%02x%02x%02x)", s->name, sec + 1,
                    _gcs_snap_tags[sec], head[0], head[1], head[2], head[3]);
        return -1;
    }
    if (snap_ld32(head + 4) != 0 || !pad_zero) {
        gcs_err_set(err, "%s: section '%s': reserved bytes are not zero", s->name, _gcs_snap_names[sec]);
        return -1;
    }
    if (snap_ld64(head + 8) != payload) {
        gcs_err_set(err, "%s: section '%s' declares %llu bytes, the header's counts give %llu", s->name,
                    _gcs_snap_names[sec], (unsigned long long)snap_ld64(head + 8), (unsigned long long)payload);
        return -1;
    }
    return 0;
}

/* Copies count 32-bit little-endian ids into dst, chunk by chunk (a large
 * section on several threads, straight into dst). */
static int read_u32s(snap_src *s, uint32_t *dst, uint64_t count, uint32_t *crc, gcs_err *err)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (src_read_par(s, count * 4, 4, (uint8_t *)dst, NULL, NULL, crc) == 0)
        return 0;
#endif
    while (count > 0) {
        size_t k = count > SNAP_CHUNK / 4 ? SNAP_CHUNK / 4 : (size_t)count;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (src_copy(s, dst, k * 4, crc, err) < 0)
            return -1;
#else
        const uint8_t *p = src_get(s, k * 4, crc, err);
        if (!p)
            return -1;
        for (size_t i = 0; i < k; i++)
            dst[i] = snap_ld32(p + 4 * i);
#endif
        dst += k;
        count -= k;
    }
    return 0;
}

/* The PARM payload b (SNAP_PARAMS_BYTES) of a file of that version into *p;
 * returns its reserved bytes ORed (0 when they are all zero). */
uint64_t _gcs_snap_params_parse(const uint8_t *b, uint32_t version, gcs_snapshot_params *p)
{
    p->gc_threads = snap_ld32(b + 0);
    p->mark_mode = snap_ld32(b + 4);
    p->heap_limit = snap_ld64(b + 8);
    p->page_bytes = snap_ld32(b + 16);
    p->numa_policy = snap_ld32(b + 20);
    p->numa_node = (int32_t)snap_ld32(b + 24);
    p->node_count = snap_ld32(b + 28);
    p->collection = snap_ld64(b + 32);
    p->timestamp_ns = snap_ld64(b + 40);
    p->heap_base = snap_ld64(b + 48);
    p->header_bytes = snap_ld32(b + 56);
    p->granule_bytes = snap_ld32(b + 60);
    if (version >= 2) {
        p->source = snap_ld32(b + 64);
        p->layout = snap_ld32(b + 68);
    }
    return (version == 1 ? snap_ld64(b + 64) : 0) | snap_ld64(b + 72);
}

static uint64_t count_nuls(const char *p, uint64_t n)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        k += p[i] == 0;
    return k;
}

/* The TYPE payload blob[0..tb): exactly t NUL-terminated names (t NULs, the
 * last byte one of them) into g's type-name table; names: room for t
 * pointers.  0, or -1 with err "NAME: ...". */
int _gcs_snap_types_parse(const char *blob, uint64_t tb, uint64_t t, const char **names, gcs_snapshot *g,
                          const char *name, gcs_err *err)
{
    uint64_t k = 0;
    for (uint64_t off = 0; off < tb; off++) {
        if (off == 0 || blob[off - 1] == 0) {
            if (k == t)
                break;
            names[k++] = blob + off;
        }
    }
    if (k != t || (tb && blob[tb - 1] != 0) || count_nuls(blob, tb) != t) {
        gcs_err_set(err, "%s: section 'types' does not hold exactly %llu NUL-terminated names", name,
                    (unsigned long long)t);
        return -1;
    }
    return gcs_snapshot_set_types(g, (uint32_t)t, names, err);
}

/* Version 2's type sections: the names (exactly t NUL-terminated strings,
 * bounded by the file size already), then one type index per object. */
static int read_types(snap_src *s, const snap_counts *c, gcs_snapshot *g, gcs_err *err)
{
    uint8_t head[SNAP_SECTION_HEAD];
    uint32_t crc;
    char *blob = malloc(c->tb ? (size_t)c->tb : 1);
    const char **names = malloc(c->t ? (size_t)c->t * sizeof *names : 1);
    int rc = -1;
    if (!blob || !names) {
        gcs_err_set(err, "%s: out of memory for %llu type names", s->name, (unsigned long long)c->t);
        goto done;
    }
    if (section_open(s, SNAP_SEC_TYPES, &crc, head, err) < 0)
        goto done;
    for (uint64_t off = 0; off < c->tb;) {
        size_t k = c->tb - off > SNAP_CHUNK ? SNAP_CHUNK : (size_t)(c->tb - off);
        if (src_copy(s, blob + off, k, &crc, err) < 0)
            goto done;
        off += k;
    }
    if (section_close(s, SNAP_SEC_TYPES, crc, head, c->tb, err) < 0)
        goto done;
    if (_gcs_snap_types_parse(blob, c->tb, c->t, names, g, s->name, err) < 0)
        goto done;
    uint64_t ot = c->t ? c->n * SNAP_ID_BYTES : 0;
    if (section_open(s, SNAP_SEC_OBJTYPES, &crc, head, err) < 0
        || (c->t && read_u32s(s, g->type, c->n, &crc, err) < 0)
        || section_close(s, SNAP_SEC_OBJTYPES, crc, head, ot, err) < 0)
        goto done;
    rc = 0;
done:
    free(blob);
    free(names);
    return rc;
}

/* edge_start[] from nptrs[] (a prefix sum: each thread sums its slice, then
 * writes it from the total of the slices before); returns the sum. */
static uint64_t edge_starts(gcs_snapshot *g)
{
    uint64_t n = g->nobjects, total = 0;
    enum { MAXT = 64 };
    uint64_t part[MAXT + 1] = {0};
    int used = 1, want = 1;
#ifdef _OPENMP
    want = omp_get_max_threads() < MAXT ? omp_get_max_threads() : MAXT;
#else
    (void)want;
#endif
#pragma omp parallel num_threads(want) if (n >= SNAP_PAR_MIN_ITEMS)
    {
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        nt = omp_get_num_threads();
#endif
        uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt, sum = 0;
        for (uint64_t i = lo; i < hi; i++)
            sum += g->nptrs[i];
        part[t + 1] = sum;
#pragma omp barrier
#pragma omp single
        {
            used = nt;
            for (int k = 1; k <= nt; k++)
                part[k] += part[k - 1];
        }
        sum = part[t];
        for (uint64_t i = lo; i < hi; i++) {
            g->edge_start[i] = sum;
            sum += g->nptrs[i];
        }
    }
    total = part[used];
    g->edge_start[n] = total;
    return total;
}

static gcs_snapshot *read_snapshot(snap_src *s, gcs_err *err)
{
    snap_counts c;
    if (read_header(s, &c, err) < 0)
        return NULL;
    /* Every count is now bounded by the (real) file size. */
    gcs_err e2;
    gcs_snapshot *g = gcs_snapshot_new(c.n, c.m, c.r, &e2);
    uint32_t *runs = malloc(c.runs ? c.runs * 2 * sizeof *runs : 1);
    if (!g || !runs) {
        gcs_err_set(err, "%s: %s", s->name, g ? "out of memory" : e2.msg);
        gcs_snapshot_free(g);
        free(runs);
        return NULL;
    }
    uint8_t head[SNAP_SECTION_HEAD];
    uint32_t crc;
    uint64_t param_reserved = 0;
    /* params */
    if (section_open(s, SNAP_SEC_PARAMS, &crc, head, err) < 0)
        goto fail;
    const uint8_t *b = src_get(s, SNAP_PARAMS_BYTES, &crc, err);
    if (!b)
        goto fail;
    gcs_snapshot_params *p = &g->params;
    param_reserved = _gcs_snap_params_parse(b, c.version, p);
    if (section_close(s, SNAP_SEC_PARAMS, crc, head, SNAP_PARAMS_BYTES, err) < 0)
        goto fail;
    if (param_reserved) {
        gcs_err_set(err, "%s: section 'params': reserved bytes are not zero", s->name);
        goto fail;
    }
    /* objects: rows -> columns */
    if (section_open(s, SNAP_SEC_OBJECTS, &crc, head, err) < 0)
        goto fail;
    for (uint64_t i = src_read_par(s, c.n * SNAP_OBJECT_BYTES, SNAP_OBJECT_BYTES, NULL, objects_convert, g, &crc)
                          ? 0
                          : c.n;
         i < c.n;) {
        size_t k = c.n - i > SNAP_CHUNK / SNAP_OBJECT_BYTES ? SNAP_CHUNK / SNAP_OBJECT_BYTES : (size_t)(c.n - i);
        const uint8_t *q = src_get(s, k * SNAP_OBJECT_BYTES, &crc, err);
        if (!q)
            goto fail;
        objects_convert(g, q, i * SNAP_OBJECT_BYTES, k * SNAP_OBJECT_BYTES);
        i += k;
    }
    if (section_close(s, SNAP_SEC_OBJECTS, crc, head, c.n * SNAP_OBJECT_BYTES, err) < 0)
        goto fail;
    /* node runs: (first id, node | reserved << 16) pairs */
    if (section_open(s, SNAP_SEC_NODES, &crc, head, err) < 0 || read_u32s(s, runs, c.runs * 2, &crc, err) < 0
        || section_close(s, SNAP_SEC_NODES, crc, head, c.runs * SNAP_RUN_BYTES, err) < 0)
        goto fail;
    /* edges and roots */
    if (section_open(s, SNAP_SEC_EDGES, &crc, head, err) < 0 || read_u32s(s, g->edges, c.m, &crc, err) < 0
        || section_close(s, SNAP_SEC_EDGES, crc, head, c.m * SNAP_ID_BYTES, err) < 0)
        goto fail;
    if (section_open(s, SNAP_SEC_ROOTS, &crc, head, err) < 0 || read_u32s(s, g->roots, c.r, &crc, err) < 0
        || section_close(s, SNAP_SEC_ROOTS, crc, head, c.r * SNAP_ID_BYTES, err) < 0)
        goto fail;
    if (c.version >= 2 && read_types(s, &c, g, err) < 0)
        goto fail;
    g->file_version = c.version;

    /* Content.  Params, node runs (they fill node[]), the fields' total,
     * then everything else through gcs_snapshot_validate. */
    if (_gcs_snap_validate_params(p, &e2) < 0) {
        gcs_err_set(err, "%s: %s", s->name, e2.msg);
        goto fail;
    }
    if ((c.n == 0) != (c.runs == 0) || c.runs > c.n) {
        gcs_err_set(err, "%s: %llu node runs for %llu objects", s->name, (unsigned long long)c.runs,
                    (unsigned long long)c.n);
        goto fail;
    }
    for (uint64_t k = 0; k < c.runs; k++) {
        uint32_t first = runs[2 * k], v = runs[2 * k + 1];
        uint16_t node = (uint16_t)v;
        uint64_t end = k + 1 < c.runs ? runs[2 * k + 2] : c.n;
        if ((k == 0 && first != 0) || (k > 0 && first <= runs[2 * k - 2]) || first >= c.n || end > c.n) {
            gcs_err_set(err, "%s: node run %llu starts at object %u: runs must start at 0 and ascend below %llu",
                        s->name, (unsigned long long)k, first, (unsigned long long)c.n);
            goto fail;
        }
        if (v >> 16) {
            gcs_err_set(err, "%s: section 'nodes': reserved bytes are not zero", s->name);
            goto fail;
        }
        if (node != GCS_SNAPSHOT_NODE_UNKNOWN && node >= p->node_count) {
            gcs_err_set(err, "%s: objects %u.. are on memory node %u, but the node count is %u", s->name, first,
                        node, p->node_count);
            goto fail;
        }
        for (uint64_t i = first; i < end; i++)
            g->node[i] = node;
    }
    uint64_t sum = edge_starts(g);
    if (sum != c.m) {
        gcs_err_set(err, "%s: the objects' pointer fields add up to %llu, the header says %llu", s->name,
                    (unsigned long long)sum, (unsigned long long)c.m);
        goto fail;
    }
    if (gcs_snapshot_validate(g, &e2) < 0) {
        gcs_err_set(err, "%s: %s", s->name, e2.msg);
        goto fail;
    }
    free(runs);
    return g;
fail:
    free(runs);
    gcs_snapshot_free(g);
    return NULL;
}

/* Is this the start of a version-3 file (read in place)? */
static int is_v3(const uint8_t *b, size_t len)
{
    return len >= 12 && memcmp(b, SNAP_MAGIC, 8) == 0 && snap_ld32(b + 8) == 3;
}

/* The length a version-3 snapshot's header states (its CRC checked), for
 * the zstd reader to size its buffer once; 0 for anything else. */
static uint64_t stated_length(const void *head, size_t n)
{
    const uint8_t *h = head;
    if (n < SNAP_HEADER_BYTES_V3 || !is_v3(h, n) || snap_ld32(h + 92) != _gcs_crc32c(0, h, 92))
        return 0;
    return snap_ld64(h + 56);
}

/* A version-3 file's bytes in buf (malloc'ed, 8-aligned), read in place:
 * the snapshot owns buf from here on. */
static gcs_snapshot *read_owned_v3(void *buf, size_t len, const char *name, gcs_err *err)
{
    snap_store *st = calloc(1, sizeof *st);
    if (!st) {
        free(buf);
        gcs_err_set(err, "%s: out of memory", name);
        return NULL;
    }
    st->owned = buf;
    return _gcs_snap3_read_inplace(buf, len, st, name, err);
}

gcs_snapshot *gcs_snapshot_read_mem(const void *data, size_t len, const char *name, gcs_err *err)
{
    if (data && is_v3(data, len)) {
        /* the caller keeps its buffer: the columns go to a copy of our own */
        void *buf = aligned_alloc(64, (len + 63) & ~(size_t)63);
        if (!buf) {
            gcs_err_set(err, "%s: out of memory", name ? name : "snapshot");
            return NULL;
        }
        memcpy(buf, data, len);
        return read_owned_v3(buf, len, name ? name : "snapshot", err);
    }
    snap_src s = {0};
    s.name = name ? name : "snapshot";
    s.mem = data ? data : (const uint8_t *)"";
    s.fd = -1;
    s.size = data ? len : 0;
    return read_snapshot(&s, err);
}

gcs_snapshot *gcs_snapshot_read(const char *path, gcs_err *err)
{
    snap_src s = {0};
    s.name = path;
    s.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s.fd < 0) {
        gcs_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb;
    int fst = fstat(s.fd, &sb);
    if (fst != 0 || !S_ISREG(sb.st_mode)) {
        gcs_err_set(err, "%s: cannot read: %s", path, fst != 0 ? strerror(errno) : "not a regular file");
        close(s.fd);
        return NULL;
    }
    /* A heap dump (HPROF, plain or gzip; a V8 snapshot) is imported. */
    uint8_t first[18];
    ssize_t nf = pread(s.fd, first, sizeof first, 0);
    if ((nf >= 2 && first[0] == 0x1f && first[1] == 0x8b) || (nf >= 1 && first[0] == '{')
        || (nf == (ssize_t)sizeof first && memcmp(first, "JAVA PROFILE 1.0.", 17) == 0)) {
        int format = _gcs_heapdump_sniff(path, err);
        if (format != GCS_HEAPDUMP_UNKNOWN) {
            close(s.fd);
            return format < 0 ? NULL : gcs_heapdump_import(path, format, NULL, err);
        }
    }
    /* A zstd-compressed snapshot (.snap.zst, the corpus) is read from memory. */
    void *plain;
    size_t plain_len;
    int z = _gcs_zstd_load_fd(s.fd, path, stated_length, &plain, &plain_len, err);
    if (z != 0) {
        close(s.fd);
        if (z > 0 && is_v3(plain, plain_len))
            return read_owned_v3(plain, plain_len, path, err);
        gcs_snapshot *g = z > 0 ? gcs_snapshot_read_mem(plain, plain_len, path, err) : NULL;
        free(z > 0 ? plain : NULL);
        return g;
    }
    if (is_v3(first, nf > 0 ? (size_t)nf : 0) && (uint64_t)sb.st_size <= SIZE_MAX) {
        /* version 3: the file's columns are used in place (snapshot_map.c) */
        size_t size = (size_t)sb.st_size;
        snap_store *st = calloc(1, sizeof *st);
        void *map = st ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, s.fd, 0) : MAP_FAILED;
        if (map != MAP_FAILED) {
            close(s.fd);
            st->map = map;
            st->map_len = size;
#ifdef MADV_WILLNEED
            madvise(map, size, MADV_WILLNEED); /* read ahead what is not in the page cache yet */
#endif
            return _gcs_snap3_read_inplace(map, size, st, path, err);
        }
        /* no mapping (a file system without mmap): read into memory instead */
        void *buf = st ? aligned_alloc(64, (size + 63) & ~(size_t)63) : NULL;
        for (size_t got = 0; buf && got < size;) {
            ssize_t k = pread(s.fd, (uint8_t *)buf + got, size - got, (off_t)got);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                gcs_err_set(err, "%s: read failed: %s", path, k < 0 ? strerror(errno) : "the file shrank");
                free(buf);
                free(st);
                close(s.fd);
                return NULL;
            }
            got += (size_t)k;
        }
        close(s.fd);
        free(st);
        if (!buf) {
            gcs_err_set(err, "%s: out of memory", path);
            return NULL;
        }
        return read_owned_v3(buf, size, path, err);
    }
    s.size = (uint64_t)sb.st_size;
    s.chunk = malloc(SNAP_CHUNK);
    if (!s.chunk) {
        gcs_err_set(err, "%s: out of memory", path);
        close(s.fd);
        return NULL;
    }
    posix_fadvise(s.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    gcs_snapshot *g = read_snapshot(&s, err);
    free(s.chunk);
    close(s.fd);
    return g;
}
