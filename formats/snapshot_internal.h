/* snapshot_internal.h -- formats/ internal: the byte layout of heap snapshot
 * files (docs/snapshot-format.md) and a buffered, checksumming section writer
 * shared by gcs_snapshot_write() (formats/snapshot_write.c) and the collector's
 * heap writer (gc/snapshot_gc.c), which streams the collector's heap straight
 * into the file without building a gcs_snapshot first.  Not installed; the
 * functions carry the internal prefix _gcs_snapw_.  Last, fenced off, what
 * the snapshot format's own files share. */
#ifndef GCSCALE_SNAPSHOT_INTERNAL_H
#define GCSCALE_SNAPSHOT_INTERNAL_H

#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

#include "gcscale/snapshot.h"

#define SNAP_MAGIC "GCSSNAP\0"
#define SNAP_HEADER_BYTES_V1 72u
#define SNAP_HEADER_BYTES_V2 88u  /* version 2: + type_count u64, type_name_bytes u64 */
#define SNAP_HEADER_BYTES_V3 96u  /* version 3: + block_shift u32, reserved u32 */
#define SNAP_SECTION_HEAD 16u   /* tag[4], reserved u32, payload_bytes u64 */
#define SNAP_SECTION_TAIL 8u    /* versions 1, 2: crc32 u32, reserved u32 */
#define SNAP_PARAMS_BYTES 80u
#define SNAP_OBJECT_BYTES 16u   /* versions 1, 2: addr u64, words u32, nptrs u32 */
#define SNAP_RUN_BYTES 8u       /* first_id u32, node u16, reserved u16 */
#define SNAP_ID_BYTES 4u
#define SNAP_NSECTIONS_V1 5u
#define SNAP_NSECTIONS_V2 7u
#define SNAP_NSECTIONS_V3 10u
#define SNAP_MAX_SECTIONS 10u
/* Version 3 checksums each section in blocks of 2^SNAP_BLOCK_SHIFT of its
 * elements (so that block k of every per-object column covers the same
 * objects, and one task checks a range of objects whole). */
#define SNAP_BLOCK_SHIFT 14u

/* Sections in file order; their tags ("PARM", "OBJS", "NODE", "EDGE",
 * "ROOT", then in version 2 "TYPE", "OTYP") and names are snapshot.c's. */
enum { SNAP_SEC_PARAMS, SNAP_SEC_OBJECTS, SNAP_SEC_NODES, SNAP_SEC_EDGES, SNAP_SEC_ROOTS, SNAP_SEC_TYPES,
       SNAP_SEC_OBJTYPES };
/* Version 3: one column per array ("PARM", "ADDR", "WRDS", "NPTR", "ESTR",
 * "NODE", "EDGE", "ROOT", "TYPE", "OTYP"). */
enum { SNAP3_PARAMS, SNAP3_ADDR, SNAP3_WORDS, SNAP3_NPTRS, SNAP3_ESTART, SNAP3_NODES, SNAP3_EDGES, SNAP3_ROOTS,
       SNAP3_TYPES, SNAP3_OBJTYPES };

static inline uint64_t snap_pad8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* CRC-32C (formats/crc32c.c): version 3's checksum; crc 0 starts one. */
uint32_t _gcs_crc32c(uint32_t crc, const void *data, size_t n);

/* The counts a header declares (version 1 has no types: t = tb = 0). */
typedef struct snap_counts {
    uint32_t version;
    uint64_t n, m, r, runs, t, tb, file_bytes;
} snap_counts;

/* The file size those counts give in their version; 0 when they do not fit
 * (more than 2^32 - 2 objects, or a size past 2^64). */
uint64_t _gcs_snap_file_bytes(const snap_counts *c);
/* The header's counts against the file size it states (and t <= tb); -1
 * with err naming the file (`name`) when they do not fit.  Both readers
 * check this before they allocate or map anything. */
int _gcs_snap_check_counts(const snap_counts *c, const char *name, gcs_err *err);
/* Version 3's section tags and names, in file order (SNAP3_*). */
extern const char _gcs_snap3_tags[SNAP_NSECTIONS_V3][5];
extern const char *const _gcs_snap3_names[SNAP_NSECTIONS_V3];

/* Version 3's section geometry: element size, payload bytes, checksum
 * blocks (of the payload and its padding), whole size with head and tail. */
unsigned _gcs_snap3_elem(int sec);
uint64_t _gcs_snap3_payload(const snap_counts *c, int sec);
static inline uint64_t snap3_block_bytes(int sec) { return (uint64_t)_gcs_snap3_elem(sec) << SNAP_BLOCK_SHIFT; }
static inline uint64_t snap3_nblocks(uint64_t payload, int sec)
{
    uint64_t bb = snap3_block_bytes(sec);
    return (snap_pad8(payload) + bb - 1) / bb;
}
static inline uint64_t snap3_tail(uint64_t nblocks) { return snap_pad8(4 * nblocks + 4); }

/* ---- shared by the readers (snapshot_read.c, snapshot_map.c) -------------- */

/* Where a snapshot's arrays live (gcs_snapshot.storage_): one block from
 * gcs_snapshot_new, or a file mapped / a buffer owned and read in place,
 * with the arrays that are not in the file (node[], and type[] when the file
 * has no types) beside it. */
#define SNAP_STORE_ARRAYS 3  /* node[], type[]; addr[] taken over by _gcs_snapshot_new_filled */
#define SNAP_FRESH_ADDR 2
typedef struct snap_store {
    void *block;            /* gcs_snapshot_new's arrays (free) */
    void *map;              /* a mapped file (munmap) */
    size_t map_len;
    void *owned;            /* a buffer read in place (free) */
    void *fresh[SNAP_STORE_ARRAYS];    /* arrays built at load (free) */
    void *konst[SNAP_STORE_ARRAYS];    /* constant-filled mappings (munmap) */
    size_t konst_len[SNAP_STORE_ARRAYS];
} snap_store;

/* gcs_snapshot_new for a caller that writes every object's type (the HPROF
 * importer): the types are left zero, not GCS_SNAPSHOT_TYPE_NONE, so that
 * no page of the block is touched before the caller fills it (and may ask
 * for huge pages first).  addr: a malloc'd array of n the snapshot takes
 * over (freed with it, also when this fails) as its addr[], whose pages the
 * caller has touched already; NULL: addr[] in the block. */
gcs_snapshot *_gcs_snapshot_new_filled(uint64_t n, uint64_t m, uint64_t r, uint64_t *addr, gcs_err *err);

/* Checks of the content (snapshot_check.c), shared with the in-place
 * reader: the params, and object i's rules (all objects before i passed
 * theirs).  what: the rules on node[] and type[] are SNAP_CHECK_NODES and
 * SNAP_CHECK_TYPES; the in-place reader checks nodes on the node runs, and
 * has no type to check in a file without types (type[] is then a constant
 * mapping it need not touch). */
enum { SNAP_CHECK_NODES = 1, SNAP_CHECK_TYPES = 2, SNAP_CHECK_ALL = 3 };
int _gcs_snap_validate_params(const gcs_snapshot_params *p, gcs_err *err);
int _gcs_snap_check_object(const gcs_snapshot *g, uint64_t i, int what, gcs_err *err);
/* The first object of [lo, hi) that fails its rules (all objects before lo
 * passed theirs), or hi when none does: the same answer as
 * _gcs_snap_check_object on each in turn, at a fraction of the cost. */
uint64_t _gcs_snap_check_objects(const gcs_snapshot *g, uint64_t lo, uint64_t hi, int what);
/* The rest of gcs_snapshot_validate after its per-object and per-field
 * scans: bad is the lowest failing object (nobjects: none), ebad the lowest
 * failing field (nfields: none). */
int _gcs_snap_validate_report(const gcs_snapshot *g, uint64_t bad, uint64_t ebad, gcs_err *err);
/* The PARM payload (SNAP_PARAMS_BYTES at b) of a file of that version into
 * *p; returns its reserved bytes ORed (0 when all are zero). */
uint64_t _gcs_snap_params_parse(const uint8_t *b, uint32_t version, gcs_snapshot_params *p);
/* The TYPE payload blob[0..tb): exactly t NUL-terminated names into g's
 * type-name table (names: room for t pointers).  0, or -1 with err. */
int _gcs_snap_types_parse(const char *blob, uint64_t tb, uint64_t t, const char **names, gcs_snapshot *g,
                          const char *name, gcs_err *err);
/* The lowest field of edges[lo, hi) that is neither NULL nor an id < n (hi: none). */
static inline uint64_t snap_first_dangling(const uint32_t *edges, uint64_t lo, uint64_t hi, uint64_t n)
{
    for (uint64_t e = lo; e < hi; e++)
        if (edges[e] != GCS_SNAPSHOT_NULL && edges[e] >= n)
            return e;
    return hi;
}

/* Version 3 read in place: the file's bytes data[0..len) (8-aligned, owned
 * by store from now on: freed or unmapped with the snapshot, also on
 * failure).  NULL with err "NAME: ..." on failure. */
gcs_snapshot *_gcs_snap3_read_inplace(const uint8_t *data, size_t len, snap_store *store, const char *name,
                                      gcs_err *err);
/* Checks the 96-byte version-3 header at h (the whole file is len bytes):
 * 0 with *c filled, or -1 with err "NAME: ...". */
int _gcs_snap3_header(const uint8_t *h, uint64_t len, const char *name, snap_counts *c, gcs_err *err);
/* Frees a snap_store and what it holds. */
void _gcs_snap_store_free(snap_store *st);

/* Writes g in format version (2 or 3; tests write version 2 to check the
 * older reader).  gcs_snapshot_write writes GCS_SNAPSHOT_VERSION. */
int _gcs_snapshot_write_version(const gcs_snapshot *g, const char *path, uint32_t version, gcs_err *err);

/* ---- the writer ------------------------------------------------------------
 * A section's payload goes through the buffer; its checksum is taken as the
 * buffer is flushed: versions 1 and 2 one CRC-32 of the section, version 3 a
 * CRC-32C per block (SNAP_BLOCK_SHIFT), written in a table after the payload
 * with a CRC-32C of the head and the table. */
typedef struct gcs_snapw {
    FILE *fp;
    uint8_t *buf;
    size_t len, cap;
    size_t crc_from;       /* start of the current section's unchecksummed bytes in buf */
    uint32_t crc;
    uint64_t written;      /* bytes handed to fwrite */
    uint64_t section_start;/* file offset of the current section's payload */
    uint64_t section_len;  /* declared payload bytes */
    int failed;
    uint32_t version;      /* of the file being written (GCS_SNAPSHOT_VERSION unless a test asks) */
    int section;           /* the open section (its index in the version's order) */
    /* version 3: the open section's head, its blocks' checksums so far, the
     * current block's running checksum and the bytes left in it */
    uint8_t head[16];
    uint32_t *blocks;
    size_t nblocks, blocks_cap;
    uint64_t block_left, block_bytes;
} gcs_snapw;

/* version: the format to write (2 or 3); _gcs_snapw_init writes the newest. */
int _gcs_snapw_init(gcs_snapw *w, FILE *fp);
int _gcs_snapw_init_version(gcs_snapw *w, FILE *fp, uint32_t version);
void _gcs_snapw_free(gcs_snapw *w);
void _gcs_snapw_flush(gcs_snapw *w);
void _gcs_snapw_put(gcs_snapw *w, const void *p, size_t n);
static inline uint64_t _gcs_snapw_offset(const gcs_snapw *w) { return w->written + w->len; }
static inline uint8_t *_gcs_snapw_reserve(gcs_snapw *w, size_t n)
{
    if (__builtin_expect(w->cap - w->len < n, 0))
        _gcs_snapw_flush(w);
    uint8_t *p = w->buf + w->len;
    w->len += n;
    return p;
}
static inline void snap_st32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void snap_st16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static inline void snap_st64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static inline uint32_t snap_ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static inline uint16_t snap_ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static inline uint64_t snap_ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }
static inline void _gcs_snapw_u32(gcs_snapw *w, uint32_t v) { snap_st32(_gcs_snapw_reserve(w, 4), v); }

/* The header of an untyped snapshot (the collector's): its two type
 * sections are written empty by _gcs_snapw_no_types after the roots.  The
 * sections, in the order of w->version: version 3 writes the object columns
 * (SNAP3_ADDR ... SNAP3_ESTART, each begun and ended by the caller), the
 * node runs, the edges and the roots; version 2 the object rows instead of
 * the columns (SNAP_SEC_OBJECTS). */
void _gcs_snapw_header(gcs_snapw *w, uint64_t nobjects, uint64_t nfields, uint64_t nroots, uint64_t nruns);
void _gcs_snapw_header_typed(gcs_snapw *w, uint64_t nobjects, uint64_t nfields, uint64_t nroots, uint64_t nruns,
                             uint64_t ntypes, uint64_t type_name_bytes);
void _gcs_snapw_no_types(gcs_snapw *w);
/* section: SNAP3_* in version 3, SNAP_SEC_* in version 2. */
void _gcs_snapw_section_begin(gcs_snapw *w, int section, uint64_t payload_bytes);
void _gcs_snapw_section_end(gcs_snapw *w);
void _gcs_snapw_params(gcs_snapw *w, const gcs_snapshot_params *p);

/* ---- private: what the snapshot format's files share -----------------------
 * Seen only by snapshot.c (the graph, the layout), snapshot_check.c (the
 * rules), snapshot_write.c (the writer) and snapshot_read.c (the reader of
 * versions 1 and 2), which define GCS_SNAPSHOT_FILES before they include
 * this header; its other readers (the collector, the importers, the tests)
 * see none of it.  What the files share: the sizes of their buffers and of
 * the work worth threads, the small helpers as static inline (so that the
 * hot loops compile as they did when these files were one), and what one
 * file defines for another (_gcs_snap_), under the file that defines it;
 * the comments of functions are at their definitions. */
#ifdef GCS_SNAPSHOT_FILES

#include <zlib.h>

#define SNAP_CHUNK (1u << 20)
/* The passes over objects and fields run on OpenMP's threads from this many
 * items, and a section is read by several threads from SNAP_PAR_MIN_BYTES:
 * below that, starting the threads costs more than they save. */
#define SNAP_PAR_MIN_ITEMS (1u << 18)
#define SNAP_PAR_MIN_BYTES (8u << 20)

static inline uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
    return (uint32_t)crc32_z(crc, p, n);
}

static inline unsigned snap_nsections(uint32_t version)
{
    return version == 1 ? SNAP_NSECTIONS_V1 : version == 2 ? SNAP_NSECTIONS_V2 : SNAP_NSECTIONS_V3;
}

/* snapshot.c: versions 1 and 2's section tags and names, in file order
 * (SNAP_SEC_*), and the sections' payload bytes for the header's counts. */
extern const char _gcs_snap_tags[SNAP_NSECTIONS_V2][5];
extern const char *const _gcs_snap_names[SNAP_NSECTIONS_V2];
void _gcs_snap_section_sizes(const snap_counts *c, uint64_t payload[SNAP_NSECTIONS_V2], int *ok);

#endif /* GCS_SNAPSHOT_FILES */

#endif
