/* snapshot_internal.h -- formats/ internal: the byte layout of heap snapshot
 * files (docs/snapshot-format.md) and a buffered, checksumming section writer
 * shared by gcs_snapshot_write() (formats/snapshot.c) and the collector's
 * heap writer (gc/snapshot_gc.c), which streams the collector's heap straight
 * into the file without building a gcs_snapshot first.  Not installed; the
 * functions carry the internal prefix _gcs_snapw_. */
#ifndef GCSCALE_SNAPSHOT_INTERNAL_H
#define GCSCALE_SNAPSHOT_INTERNAL_H

#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

#include "gcscale/snapshot.h"

#define SNAP_MAGIC "GCSSNAP\0"
#define SNAP_HEADER_BYTES_V1 72u
#define SNAP_HEADER_BYTES 88u   /* version 2: + type_count u64, type_name_bytes u64 */
#define SNAP_SECTION_HEAD 16u   /* tag[4], reserved u32, payload_bytes u64 */
#define SNAP_SECTION_TAIL 8u    /* crc32 u32, reserved u32 */
#define SNAP_PARAMS_BYTES 80u
#define SNAP_OBJECT_BYTES 16u   /* addr u64, words u32, nptrs u32 */
#define SNAP_RUN_BYTES 8u       /* first_id u32, node u16, reserved u16 */
#define SNAP_ID_BYTES 4u
#define SNAP_NSECTIONS_V1 5u
#define SNAP_NSECTIONS 7u

/* Sections in file order; their tags ("PARM", "OBJS", "NODE", "EDGE",
 * "ROOT", then in version 2 "TYPE", "OTYP") and names are snapshot.c's. */
enum { SNAP_SEC_PARAMS, SNAP_SEC_OBJECTS, SNAP_SEC_NODES, SNAP_SEC_EDGES, SNAP_SEC_ROOTS, SNAP_SEC_TYPES,
       SNAP_SEC_OBJTYPES };

static inline uint64_t snap_pad8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* ---- the writer ------------------------------------------------------------ */
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
} gcs_snapw;

int _gcs_snapw_init(gcs_snapw *w, FILE *fp);
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
 * sections are written empty by _gcs_snapw_no_types after the roots. */
void _gcs_snapw_header(gcs_snapw *w, uint64_t nobjects, uint64_t nfields, uint64_t nroots, uint64_t nruns);
void _gcs_snapw_header_typed(gcs_snapw *w, uint64_t nobjects, uint64_t nfields, uint64_t nroots, uint64_t nruns,
                             uint64_t ntypes, uint64_t type_name_bytes);
void _gcs_snapw_no_types(gcs_snapw *w);
void _gcs_snapw_section_begin(gcs_snapw *w, int section, uint64_t payload_bytes);
void _gcs_snapw_section_end(gcs_snapw *w);
void _gcs_snapw_params(gcs_snapw *w, const gcs_snapshot_params *p);

#endif
