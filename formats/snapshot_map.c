/* snapshot_map.c -- heap snapshot format version 3, read in place
 * (docs/snapshot-format.md, "Version 3"; the writer is snapshot_write.c's).
 *
 * Version 3 stores each array of gcs_snapshot as a column of its own, 8-byte
 * aligned and in the in-memory layout (little-endian), so a file is mapped
 * and its columns are used where they lie: reading a snapshot costs no copy,
 * no conversion and no fresh memory for the arrays the file holds.  Fresh
 * pages are what loading used to spend its time on (on the development VM a
 * fresh 4 KiB page costs about 3 us, 0.75 ms per MiB, against 0.15-0.2 ms per
 * MiB to map the page cache), which is also why edge_start is a column of
 * the file rather than a prefix sum computed at load: a third more file
 * (8 bytes per object) against writing as much fresh memory.  node[] is
 * expanded from the node runs (a constant mapping when every object is on
 * one node), and type[] is a constant mapping of "no type" when the file has
 * no types.
 *
 * Every byte is still checked before the snapshot is returned: one pass over
 * blocks of 2^SNAP_BLOCK_SHIFT objects (and of fields), on OpenMP's threads,
 * takes each block's CRC-32C and checks the objects' rules (or the fields'
 * ids) while the block is in the cache; the messages are the one-thread
 * reader's (the lowest failing block, object or field).  Trade-off of the
 * mapping: a file truncated by another program while it is being read
 * makes the reader fault (SIGBUS) where the copying reader of versions 1 and
 * 2 says "the file shrank"; gcscale itself replaces files by renaming, which
 * never does that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../common/internal.h"
#include "snapshot_internal.h"

/* The check runs on several threads from this many bytes of file. */
#define SNAP3_PAR_MIN_BYTES (4u << 20)
/* Constant arrays: mapped from one piece of this size, from this many bytes
 * on (below that a plain allocation costs less than the mappings). */
#define KONST_PIECE (2u << 20)
#define KONST_MIN (8u << 20)

/* An array of `bytes` bytes that reads as the 32-bit pattern repeated (node[]
 * of a heap on one node, type[] of a heap without types), into store slot.
 * A large one is one 2 MiB piece of a memory file mapped over and over,
 * private and writable (a write copies the page, as in any array): nothing
 * is filled and no memory is taken until a reader touches it, and the fast
 * predictor reads few of its entries.  Where a mapping fails it is a filled
 * fresh array.  NULL when out of memory. */
static void *const_array(size_t bytes, uint32_t pattern, snap_store *st, int slot)
{
    if (bytes >= KONST_MIN) {
        size_t len = (bytes + KONST_PIECE - 1) & ~(size_t)(KONST_PIECE - 1);
        int fd = memfd_create("gcscale-snapshot", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, KONST_PIECE) == 0) {
            uint32_t *w = mmap(NULL, KONST_PIECE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            uint8_t *base = w == MAP_FAILED ? MAP_FAILED
                                            : mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                                                   -1, 0);
            if (w != MAP_FAILED) {
                for (size_t i = 0; i < KONST_PIECE / 4; i++)
                    w[i] = pattern;
                munmap(w, KONST_PIECE);
            }
            if (base != MAP_FAILED) {
                size_t off = 0;
                for (; off < len; off += KONST_PIECE)
                    if (mmap(base + off, KONST_PIECE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
                        MAP_FAILED)
                        break;
                if (off == len) {
                    close(fd);
                    st->konst[slot] = base;
                    st->konst_len[slot] = len;
                    return base;
                }
                munmap(base, len);
            }
        }
        if (fd >= 0)
            close(fd);
    }
    size_t words = (bytes + 3) / 4;
    uint32_t *a = _gcs_huge_alloc(words * 4);
    if (!a)
        return NULL;
    for (size_t i = 0; i < words; i++)
        a[i] = pattern;
    st->fresh[slot] = a;
    return a;
}

/* ---- the header ------------------------------------------------------------- */

/* File offsets of the sections (and the end) for counts that fit. */
static void section_offsets(const snap_counts *c, uint64_t off[SNAP_NSECTIONS_V3 + 1])
{
    off[0] = SNAP_HEADER_BYTES_V3;
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++) {
        uint64_t pl = _gcs_snap3_payload(c, i);
        off[i + 1] = off[i] + SNAP_SECTION_HEAD + snap_pad8(pl) + snap3_tail(snap3_nblocks(pl, i));
    }
}

int _gcs_snap3_header(const uint8_t *h, uint64_t len, const char *name, snap_counts *c, gcs_err *err)
{
    if (len < SNAP_HEADER_BYTES_V3) {
        gcs_err_set(err, "%s: truncated in the header (%llu of %u bytes)", name, (unsigned long long)len,
                    SNAP_HEADER_BYTES_V3);
        return -1;
    }
    uint32_t stored = snap_ld32(h + 92), computed = _gcs_crc32c(0, h, 92);
    if (stored != computed) {
        gcs_err_set(err, "%s: header checksum mismatch (stored %08x, computed %08x)", name, stored, computed);
        return -1;
    }
    if (snap_ld32(h + 12) != SNAP_HEADER_BYTES_V3 || snap_ld32(h + 80) != SNAP_NSECTIONS_V3) {
        gcs_err_set(err, "%s: header of %u bytes with %u sections (version 3 has %u and %u)", name,
                    snap_ld32(h + 12), snap_ld32(h + 80), SNAP_HEADER_BYTES_V3, SNAP_NSECTIONS_V3);
        return -1;
    }
    if (snap_ld32(h + 16) != SNAP_ID_BYTES) {
        gcs_err_set(err, "%s: unsupported id width of %u bytes (version 3 has 4-byte ids)", name,
                    snap_ld32(h + 16));
        return -1;
    }
    if (snap_ld32(h + 20) != 0 || snap_ld32(h + 88) != 0) {
        gcs_err_set(err, "%s: unknown header flags %08x or reserved word %08x", name, snap_ld32(h + 20),
                    snap_ld32(h + 88));
        return -1;
    }
    if (snap_ld32(h + 84) != SNAP_BLOCK_SHIFT) {
        gcs_err_set(err, "%s: checksum blocks of 2^%u elements (version 3 has 2^%u)", name, snap_ld32(h + 84),
                    SNAP_BLOCK_SHIFT);
        return -1;
    }
    c->version = 3;
    c->n = snap_ld64(h + 24);
    c->m = snap_ld64(h + 32);
    c->r = snap_ld64(h + 40);
    c->runs = snap_ld64(h + 48);
    c->file_bytes = snap_ld64(h + 56);
    c->t = snap_ld64(h + 64);
    c->tb = snap_ld64(h + 72);
    if (_gcs_snap_check_counts(c, name, err) < 0)
        return -1;
    if (len < c->file_bytes) {
        uint64_t off[SNAP_NSECTIONS_V3 + 1];
        section_offsets(c, off);
        int s = 0;
        while (s + 1 < (int)SNAP_NSECTIONS_V3 && len >= off[s + 1])
            s++;
        gcs_err_set(err, "%s: truncated in section '%s' (file has %llu of %llu bytes)", name, _gcs_snap3_names[s],
                    (unsigned long long)len, (unsigned long long)c->file_bytes);
        return -1;
    }
    if (len > c->file_bytes) {
        gcs_err_set(err, "%s: %llu unexpected bytes after the last section (file has %llu, expected %llu)", name,
                    (unsigned long long)(len - c->file_bytes), (unsigned long long)len,
                    (unsigned long long)c->file_bytes);
        return -1;
    }
    return 0;
}

/* ---- the sections -------------------------------------------------------------- */

typedef struct sec3 {
    const uint8_t *head, *data, *table; /* its 16-byte head, payload, checksum table */
    uint64_t payload, nblocks;
    uint32_t *computed;                 /* [nblocks] the blocks' CRC-32C as read */
} sec3;

/* Section i's frame: the checksum of its head and block table, then its tag,
 * its reserved bytes and its length, in the order that names the damage. */
static int frame_check(const sec3 *s, int i, const char *name, gcs_err *err)
{
    const uint8_t *crc_at = s->table + 4 * s->nblocks;
    uint32_t frame = _gcs_crc32c(_gcs_crc32c(0, s->head, SNAP_SECTION_HEAD), s->table, 4 * s->nblocks);
    if (snap_ld32(crc_at) != frame) {
        gcs_err_set(err, "%s: checksum mismatch in section '%s' (its head or block table: stored %08x, computed %08x)",
                    name, _gcs_snap3_names[i], snap_ld32(crc_at), frame);
        return -1;
    }
    if (memcmp(s->head, _gcs_snap3_tags[i], 4) != 0) {
        gcs_err_set(err, "%s: section %d is not '%s' (tag %02x%02x%02x%02x)", name, i + 1, _gcs_snap3_tags[i],
                    s->head[0], s->head[1], s->head[2], s->head[3]);
        return -1;
    }
    if ((4 * s->nblocks + 4) % 8 != 0 && snap_ld32(crc_at + 4) != 0) {
        gcs_err_set(err, "%s: checksum mismatch in section '%s' (damaged checksum trailer)", name,
                    _gcs_snap3_names[i]);
        return -1;
    }
    if (snap_ld32(s->head + 4) != 0) {
        gcs_err_set(err, "%s: section '%s': reserved bytes are not zero", name, _gcs_snap3_names[i]);
        return -1;
    }
    if (snap_ld64(s->head + 8) != s->payload) {
        gcs_err_set(err, "%s: section '%s' declares %llu bytes, the header's counts give %llu", name,
                    _gcs_snap3_names[i], (unsigned long long)snap_ld64(s->head + 8), (unsigned long long)s->payload);
        return -1;
    }
    return 0;
}

/* Block b of section s: its CRC-32C into s->computed[b]. */
static void block_crc(sec3 *s, int sec, uint64_t b)
{
    uint64_t bb = snap3_block_bytes(sec), lo = b * bb, end = snap_pad8(s->payload);
    uint64_t hi = lo + bb < end ? lo + bb : end;
    s->computed[b] = _gcs_crc32c(0, s->data + lo, (size_t)(hi - lo));
}

/* The object columns (one block of each covers the same objects). */
static const int object_columns[] = {SNAP3_ADDR, SNAP3_WORDS, SNAP3_NPTRS, SNAP3_ESTART, SNAP3_OBJTYPES};

typedef struct task3 {
    int sec;        /* -1: objects block `block` (every object column's block, then the objects) */
    uint64_t block;
} task3;

/* The tasks of the pass: one per object block (first, the largest), then
 * one per block of every other section and the object columns' blocks past
 * the objects (edge_start has one entry more).  NULL when out of memory. */
static task3 *make_tasks(const sec3 *sec, uint64_t n, size_t *ntasks)
{
    uint64_t nob = (n + (1u << SNAP_BLOCK_SHIFT) - 1) >> SNAP_BLOCK_SHIFT, total = nob;
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++)
        total += sec[i].nblocks;
    task3 *t = malloc((size_t)(total ? total : 1) * sizeof *t);
    if (!t)
        return NULL;
    size_t k = 0;
    for (uint64_t b = 0; b < nob; b++)
        t[k++] = (task3){-1, b};
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++) {
        int column = 0;
        for (size_t c = 0; c < sizeof object_columns / sizeof object_columns[0]; c++)
            column |= object_columns[c] == i;
        for (uint64_t b = column ? nob : 0; b < sec[i].nblocks; b++)
            t[k++] = (task3){i, b};
    }
    *ntasks = k;
    return t;
}

/* One task: checksums, then the objects' rules or the fields' ids.
 * *bad / *ebad: lowered to the first failing object / field found. */
static void run_task(const task3 *t, sec3 *sec, const gcs_snapshot *g, int check_content, uint64_t *bad,
                     uint64_t *ebad)
{
    if (t->sec >= 0) {
        block_crc(&sec[t->sec], t->sec, t->block);
        if (t->sec == SNAP3_EDGES && check_content) {
            uint64_t lo = t->block << SNAP_BLOCK_SHIFT, hi = lo + (1u << SNAP_BLOCK_SHIFT);
            if (hi > g->nfields)
                hi = g->nfields;
            uint64_t e = snap_first_dangling(g->edges, lo, hi, g->nobjects);
            if (e < hi && e < *ebad)
                *ebad = e;
        }
        return;
    }
    for (size_t c = 0; c < sizeof object_columns / sizeof object_columns[0]; c++)
        if (t->block < sec[object_columns[c]].nblocks)
            block_crc(&sec[object_columns[c]], object_columns[c], t->block);
    if (!check_content)
        return;
    uint64_t lo = t->block << SNAP_BLOCK_SHIFT, hi = lo + (1u << SNAP_BLOCK_SHIFT);
    if (hi > g->nobjects)
        hi = g->nobjects;
    uint64_t first = lo < *bad ? _gcs_snap_check_objects(g, lo, hi, g->ntypes ? SNAP_CHECK_TYPES : 0) : hi;
    if (first < hi && first < *bad)
        *bad = first;
}

/* The node runs (validated as in versions 1 and 2) into g->node. */
static int node_runs(const sec3 *s, const snap_counts *c, gcs_snapshot *g, snap_store *st, const char *name,
                     gcs_err *err)
{
    const uint8_t *r = s->data;
    if ((c->n == 0) != (c->runs == 0) || c->runs > c->n) {
        gcs_err_set(err, "%s: %llu node runs for %llu objects", name, (unsigned long long)c->runs,
                    (unsigned long long)c->n);
        return -1;
    }
    int one_node = 1;
    for (uint64_t k = 0; k < c->runs; k++) {
        uint32_t first = snap_ld32(r + 8 * k), v = snap_ld32(r + 8 * k + 4);
        uint16_t node = (uint16_t)v;
        uint64_t end = k + 1 < c->runs ? snap_ld32(r + 8 * k + 8) : c->n;
        if ((k == 0 && first != 0) || (k > 0 && first <= snap_ld32(r + 8 * k - 8)) || first >= c->n || end > c->n) {
            gcs_err_set(err, "%s: node run %llu starts at object %u: runs must start at 0 and ascend below %llu",
                        name, (unsigned long long)k, first, (unsigned long long)c->n);
            return -1;
        }
        if (v >> 16) {
            gcs_err_set(err, "%s: section 'nodes': reserved bytes are not zero", name);
            return -1;
        }
        if (node != GCS_SNAPSHOT_NODE_UNKNOWN && node >= g->params.node_count) {
            gcs_err_set(err, "%s: objects %u.. are on memory node %u, but the node count is %u", name, first, node,
                        g->params.node_count);
            return -1;
        }
        one_node &= (uint16_t)snap_ld32(r + 4) == node;
    }
    uint16_t first_node = c->runs ? (uint16_t)snap_ld32(r + 4) : 0;
    if (one_node) {
        g->node = const_array((size_t)c->n * 2, (uint32_t)first_node * 0x10001u, st, 0);
        if (!g->node)
            goto oom;
        return 0;
    }
    st->fresh[0] = g->node = _gcs_huge_alloc((size_t)c->n * 2);
    if (!g->node)
        goto oom;
    /* each run in turn: a few per 64 KiB page of heap at most */
    for (uint64_t k = 0; k < c->runs; k++) {
        uint32_t first = snap_ld32(r + 8 * k);
        uint64_t end = k + 1 < c->runs ? snap_ld32(r + 8 * k + 8) : c->n;
        uint16_t node = (uint16_t)snap_ld32(r + 8 * k + 4);
        for (uint64_t i = first; i < end; i++)
            g->node[i] = node;
    }
    return 0;
oom:
    gcs_err_set(err, "%s: out of memory for the objects' nodes", name);
    return -1;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* A big-endian host uses the columns after turning them around (the
 * mapping is private: this writes copies, never the file). */
static void columns_to_host(gcs_snapshot *g)
{
    for (uint64_t i = 0; i < g->nobjects; i++) {
        g->addr[i] = le64toh(g->addr[i]);
        g->words[i] = le32toh(g->words[i]);
        g->nptrs[i] = le32toh(g->nptrs[i]);
        if (g->ntypes)
            g->type[i] = le32toh(g->type[i]);
    }
    for (uint64_t i = 0; i <= g->nobjects; i++)
        g->edge_start[i] = le64toh(g->edge_start[i]);
    for (uint64_t e = 0; e < g->nfields; e++)
        g->edges[e] = le32toh(g->edges[e]);
    for (uint64_t k = 0; k < g->nroots; k++)
        g->roots[k] = le32toh(g->roots[k]);
}
#endif

gcs_snapshot *_gcs_snap3_read_inplace(const uint8_t *data, size_t len, snap_store *st, const char *name,
                                      gcs_err *err)
{
    snap_counts c;
    gcs_snapshot *g = NULL;
    sec3 sec[SNAP_NSECTIONS_V3];
    memset(sec, 0, sizeof sec);
    task3 *tasks = NULL;
    const char **names = NULL;
    gcs_err e2;
    /* the columns are used where they lie: 8-byte aligned (the caller's) */
    gcs_assert_internal(((uintptr_t)data & 7) == 0);
    if (_gcs_snap3_header(data, len, name, &c, err) < 0)
        goto fail;
    uint64_t off[SNAP_NSECTIONS_V3 + 1];
    section_offsets(&c, off);
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++) {
        sec3 *s = &sec[i];
        s->head = data + off[i];
        s->data = s->head + SNAP_SECTION_HEAD;
        s->payload = _gcs_snap3_payload(&c, i);
        s->nblocks = snap3_nblocks(s->payload, i);
        s->table = s->data + snap_pad8(s->payload);
        if (frame_check(s, i, name, err) < 0)
            goto fail;
        s->computed = malloc((size_t)(s->nblocks ? s->nblocks : 1) * sizeof *s->computed);
        if (!s->computed)
            goto oom;
    }

    g = calloc(1, sizeof *g);
    if (!g)
        goto oom;
    g->storage_ = st;
    g->file_version = 3;
    g->nobjects = c.n;
    g->nfields = c.m;
    g->nroots = c.r;
    g->addr = (uint64_t *)(void *)sec[SNAP3_ADDR].data;
    g->words = (uint32_t *)(void *)sec[SNAP3_WORDS].data;
    g->nptrs = (uint32_t *)(void *)sec[SNAP3_NPTRS].data;
    g->edge_start = (uint64_t *)(void *)sec[SNAP3_ESTART].data;
    g->edges = (uint32_t *)(void *)sec[SNAP3_EDGES].data;
    g->roots = (uint32_t *)(void *)sec[SNAP3_ROOTS].data;
    g->ntypes = (uint32_t)c.t; /* the names come after the checks */
    g->type = c.t ? (uint32_t *)(void *)sec[SNAP3_OBJTYPES].data
                  : const_array((size_t)c.n * 4, GCS_SNAPSHOT_TYPE_NONE, st, 1);
    if (!g->type)
        goto oom;
    /* the objects' rules read the params: parsed now, checked (reserved
     * bytes and ranges) after the checksums, as in the other versions */
    (void)_gcs_snap_params_parse(sec[SNAP3_PARAMS].data, 3, &g->params);

    /* Checksums and content in one pass (header comment). */
    size_t ntasks = 0;
    tasks = make_tasks(sec, c.n, &ntasks);
    if (!tasks)
        goto oom;
    int native = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    uint64_t bad = c.n, ebad = c.m;
#pragma omp parallel for schedule(dynamic, 1) reduction(min : bad, ebad) if (len >= SNAP3_PAR_MIN_BYTES)
    for (size_t k = 0; k < ntasks; k++)
        run_task(&tasks[k], sec, g, native, &bad, &ebad);
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++)
        for (uint64_t b = 0; b < sec[i].nblocks; b++) {
            uint32_t stored = snap_ld32(sec[i].table + 4 * b);
            if (stored != sec[i].computed[b]) {
                gcs_err_set(err, "%s: checksum mismatch in section '%s' (block %llu of %llu: stored %08x, computed %08x)",
                            name, _gcs_snap3_names[i], (unsigned long long)b, (unsigned long long)sec[i].nblocks,
                            stored, sec[i].computed[b]);
                goto fail;
            }
        }
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++)
        for (uint64_t b = sec[i].payload; b < snap_pad8(sec[i].payload); b++)
            if (sec[i].data[b]) {
                gcs_err_set(err, "%s: section '%s': reserved bytes are not zero", name, _gcs_snap3_names[i]);
                goto fail;
            }

    /* Content: params, node runs, type names, then what gcs_snapshot_validate checks. */
    if (_gcs_snap_params_parse(sec[SNAP3_PARAMS].data, 3, &g->params)) {
        gcs_err_set(err, "%s: section 'params': reserved bytes are not zero", name);
        goto fail;
    }
    if (_gcs_snap_validate_params(&g->params, &e2) < 0) {
        gcs_err_set(err, "%s: %s", name, e2.msg);
        goto fail;
    }
    if (node_runs(&sec[SNAP3_NODES], &c, g, st, name, err) < 0)
        goto fail;
    names = malloc((size_t)(c.t ? c.t : 1) * sizeof *names);
    if (!names)
        goto oom;
    if (_gcs_snap_types_parse((const char *)sec[SNAP3_TYPES].data, c.tb, c.t, names, g, name, err) < 0)
        goto fail;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    columns_to_host(g);
    if (gcs_snapshot_validate(g, &e2) < 0) {
#else
    if (_gcs_snap_validate_report(g, bad, ebad, &e2) < 0) {
#endif
        gcs_err_set(err, "%s: %s", name, e2.msg);
        goto fail;
    }
    (void)native;
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++)
        free(sec[i].computed);
    free(tasks);
    free(names);
    return g;
oom:
    gcs_err_set(err, "%s: out of memory", name);
fail:
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++)
        free(sec[i].computed);
    free(tasks);
    free(names);
    if (g)
        gcs_snapshot_free(g);
    else
        _gcs_snap_store_free(st);
    return NULL;
}
