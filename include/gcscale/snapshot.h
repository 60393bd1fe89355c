/* snapshot.h -- heap snapshots: the live object graph at the start of a
 * collection, as the Endo-Taura-Yonezawa predictor reads it (prefix
 * gcs_snapshot_).
 *
 * A snapshot is every live object (payload offset from the heap base,
 * payload size, pointer fields as object ids, memory node), the roots (as
 * object ids) and the collector's parameters.  Object ids are 0..nobjects-1
 * in address order.  The file format (versioned, little-endian, CRC-32
 * checked per section) is specified byte for byte in docs/snapshot-format.md.
 *
 * In memory a snapshot is a set of arrays (struct of arrays), so that the
 * predictor walks it without pointer chasing:
 *
 *     object i:   addr[i] (payload offset), words[i] (payload size / 8),
 *                 nptrs[i] (leading pointer fields), node[i]
 *     its fields: edges[edge_start[i] .. edge_start[i] + nptrs[i]), each an
 *                 object id or GCS_SNAPSHOT_NULL
 *     roots:      roots[0 .. nroots), object ids (a root slot holding NULL is
 *                 not a root; two slots may name the same object)
 *
 * Writers: gcs_snapshot_write() writes a graph built in memory (tests, tools);
 * the collector writes its own heap without building one (gc.h:
 * gcs_gc_snapshot_next, options snapshot_path / snapshot_every,
 * GCSCALE_GC_SNAPSHOT).  Both write crash-safely (PATH.tmp.PID, renamed when
 * complete).
 *
 * Readers validate everything (see gcs_snapshot_read) and never print or
 * exit; every failure is one line in a gcs_err.
 */
#ifndef GCSCALE_SNAPSHOT_H
#define GCSCALE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "gcscale/common.h"

#define GCS_SNAPSHOT_VERSION 3               /* written; versions 1, 2 and 3 are read */
#define GCS_SNAPSHOT_NULL UINT32_MAX          /* a NULL pointer field */
#define GCS_SNAPSHOT_NODE_UNKNOWN UINT16_MAX  /* page whose memory node is unknown */
#define GCS_SNAPSHOT_MAX_OBJECTS 0xFFFFFFFEu  /* ids are 32 bits; NULL is reserved */
#define GCS_SNAPSHOT_MAX_NODES 4096           /* node_count limit */
#define GCS_SNAPSHOT_TYPE_NONE UINT32_MAX     /* an object whose type is not known */
#define GCS_SNAPSHOT_MAX_TYPES 0xFFFFFFFEu

/* Where a snapshot's graph came from (params.source, version 2). */
enum { GCS_SNAPSHOT_SOURCE_GCSCALE = 0, GCS_SNAPSHOT_SOURCE_HPROF = 1, GCS_SNAPSHOT_SOURCE_V8 = 2 };
/* What the addresses are (params.layout, version 2): the collector's heap
 * offsets; a dump's addresses, each object moved up only as far as needed
 * so that objects do not overlap (the dump's address order kept); or
 * invented addresses in an order the dump did not give. */
enum { GCS_SNAPSHOT_LAYOUT_HEAP = 0, GCS_SNAPSHOT_LAYOUT_DUMP_ORDER = 1, GCS_SNAPSHOT_LAYOUT_UNKNOWN_ORDER = 2 };

/* The collector's parameters at the time of the snapshot. */
typedef struct gcs_snapshot_params {
    uint32_t gc_threads;        /* P of that collection (>= 1) */
    uint32_t mark_mode;         /* gcs_gc_mark_mode */
    uint64_t heap_limit;        /* bytes of the reserved heap; every object lies below it */
    uint32_t page_bytes;        /* heap page (power of two) */
    uint32_t numa_policy;       /* gcs_gc_numa_policy */
    int32_t numa_node;          /* for the "node" policy; -1 otherwise */
    uint32_t node_count;        /* memory nodes of the machine (1..GCS_SNAPSHOT_MAX_NODES) */
    uint64_t collection;        /* index of the collection (1 = first); 0 if none */
    uint64_t timestamp_ns;      /* wall-clock time, ns since the Unix epoch */
    uint64_t heap_base;         /* the heap's virtual address (informational) */
    uint32_t header_bytes;      /* hidden header in front of each payload (8 in gc/) */
    uint32_t granule_bytes;     /* mark granule (16 in gc/) */
    uint32_t source;            /* GCS_SNAPSHOT_SOURCE_* (0 in version-1 files) */
    uint32_t layout;            /* GCS_SNAPSHOT_LAYOUT_* (0 in version-1 files) */
} gcs_snapshot_params;

typedef struct gcs_snapshot {
    gcs_snapshot_params params;
    uint64_t nobjects;
    uint64_t nfields;           /* pointer fields, NULL ones included: sum of nptrs */
    uint64_t nroots;
    uint64_t *addr;             /* [nobjects] payload offset from heap base, ascending */
    uint32_t *words;            /* [nobjects] payload size in 8-byte words (>= 1) */
    uint32_t *nptrs;            /* [nobjects] leading pointer fields (<= words) */
    uint16_t *node;             /* [nobjects] memory node, or GCS_SNAPSHOT_NODE_UNKNOWN */
    uint64_t *edge_start;       /* [nobjects + 1] prefix sums of nptrs */
    uint32_t *edges;            /* [nfields] object id or GCS_SNAPSHOT_NULL */
    uint32_t *roots;            /* [nroots] object ids */
    uint32_t *type;             /* [nobjects] index into type_names, or GCS_SNAPSHOT_TYPE_NONE
                                 * (every entry NONE when ntypes is 0; version 2) */
    uint32_t ntypes;
    char **type_names;          /* [ntypes] class or node-type names (gcs_snapshot_set_types) */
    uint32_t file_version;      /* the format version of the file it was read from (1-3); 0: built
                                 * in memory or imported from a heap dump */
    void *storage_;             /* owned memory; do not touch */
    void *types_storage_;
} gcs_snapshot;

static inline uint64_t gcs_snapshot_size(const gcs_snapshot *g, uint64_t i) { return 8 * (uint64_t)g->words[i]; }

/* Parameters of a graph that no collector produced: one thread, one node,
 * page 65536, header 8, granule 16, heap_limit 0 (set it), collection 0. */
GCS_API void gcs_snapshot_params_default(gcs_snapshot_params *p);

/* An empty graph with room for the given counts; edge_start is 0 filled, the
 * caller fills every array (edge_start[i+1] = edge_start[i] + nptrs[i]) and
 * the params.  NULL with err set when out of memory or too many objects. */
GCS_API gcs_snapshot *gcs_snapshot_new(uint64_t nobjects, uint64_t nfields, uint64_t nroots, gcs_err *err);
GCS_API void gcs_snapshot_free(gcs_snapshot *g);
/* Replaces g's type-name table by copies of names[0..ntypes) (type[] is
 * left as it is).  0, or -1 with err set (out of memory, too many). */
GCS_API int gcs_snapshot_set_types(gcs_snapshot *g, uint32_t ntypes, const char *const *names, gcs_err *err);

/* Checks every rule of docs/snapshot-format.md (§ Validity) on a graph in
 * memory: addresses ascending without overlap and inside the heap, sizes,
 * nptrs <= words, edge_start consistent, ids in range, nodes < node_count,
 * params.  0, or -1 with the first defect in err. */
GCS_API int gcs_snapshot_validate(const gcs_snapshot *g, gcs_err *err);

/* Writes g (validated first) to path crash-safely.  0, or -1 with err
 * "PATH: ...". */
GCS_API int gcs_snapshot_write(const gcs_snapshot *g, const char *path, gcs_err *err);

/* Reads and validates a snapshot file: bad magic, unsupported version,
 * truncation (naming the section), checksum mismatch (naming the section),
 * counts that do not fit the file size, ids out of range, unsorted or
 * overlapping addresses, node ids >= node count and absurd sizes are each
 * reported as one line "PATH: message".  Memory is allocated only after the
 * counts have been checked against the file size.  A zstd-compressed file
 * (recognised by its frame magic, whatever its name) is decompressed into
 * memory first and read as by gcs_snapshot_read_mem.  A Java heap dump
 * (HPROF) or a V8 heap snapshot (.heapsnapshot), plain or gzip-compressed,
 * recognised by its content, is imported as by gcs_heapdump_import
 * (heapdump.h), so every reader of snapshots reads dumps too.  NULL on
 * failure. */
GCS_API gcs_snapshot *gcs_snapshot_read(const char *path, gcs_err *err);
/* The same from a buffer (name is used in messages; may be NULL). */
GCS_API gcs_snapshot *gcs_snapshot_read_mem(const void *data, size_t len, const char *name, gcs_err *err);

/* The types that hold the most bytes (gcscale snapshot info): one row per
 * type with at least one object, plus one for objects of no type, sorted by
 * bytes (payload + header), largest first. */
typedef struct gcs_snapshot_type_row {
    uint32_t type;              /* index, or GCS_SNAPSHOT_TYPE_NONE */
    const char *name;           /* g->type_names[type], or "(no type)" */
    uint64_t objects;
    uint64_t bytes;             /* payload + header bytes */
    uint64_t edges;             /* non-NULL pointer fields */
} gcs_snapshot_type_row;
/* *rows is malloc'ed (free() it); *nrows may be 0.  0, or -1 when out of memory. */
GCS_API int gcs_snapshot_type_summary(const gcs_snapshot *g, gcs_snapshot_type_row **rows, uint32_t *nrows,
                                      gcs_err *err);
GCS_API const char *gcs_snapshot_source_name(uint32_t source); /* "gcscale", "hprof", "v8", "?" */
GCS_API const char *gcs_snapshot_layout_name(uint32_t layout); /* "heap", "dump-order", "unknown-order", "?" */

/* Graph statistics (gcscale snapshot info). */
typedef struct gcs_snapshot_stats {
    uint64_t objects;
    uint64_t fields;            /* pointer fields, NULL included */
    uint64_t edges;             /* non-NULL pointer fields */
    uint64_t self_edges;        /* fields pointing to their own object */
    uint64_t bytes;             /* payload bytes */
    uint64_t header_bytes;      /* objects * params.header_bytes */
    uint64_t roots;             /* root entries */
    uint64_t distinct_roots;    /* distinct root objects */
    uint64_t reachable;         /* objects reachable from the roots */
    uint64_t depth;             /* BFS levels from the roots (roots are level 1); 0: none */
    uint64_t max_nptrs;
    uint64_t max_bytes;         /* largest payload */
    uint64_t span_bytes;        /* end of the last object - start of the first (with header) */
    uint32_t node_count;        /* = params.node_count */
    uint64_t *node_objects;     /* [node_count + 1]: last entry = unknown node */
    uint64_t *node_bytes;       /* [node_count + 1] payload bytes */
} gcs_snapshot_stats;

/* Fills st (allocating the per-node arrays).  0, or -1 when out of memory. */
GCS_API int gcs_snapshot_stats_compute(const gcs_snapshot *g, gcs_snapshot_stats *st, gcs_err *err);
GCS_API void gcs_snapshot_stats_free(gcs_snapshot_stats *st);

/* The same graph in another layout (formats/snapshot_order.c, docs/snapshot-format.md
 * "Reordering"): the objects renumbered in the order a depth-first or a
 * breadth-first traversal from the roots first reaches them (fields in
 * order; the objects no root reaches follow in their old order), or at
 * random (seeded), and given fresh addresses packed in that order.  Sizes,
 * fields, nodes, types, edges and roots are kept under the new ids. */
typedef enum gcs_snapshot_order {
    GCS_SNAPSHOT_ORDER_DEPTH_FIRST = 0,  /* "depth-first": a depth-first copy's order */
    GCS_SNAPSHOT_ORDER_BREADTH_FIRST = 1,/* "breadth-first": Cheney's copy */
    GCS_SNAPSHOT_ORDER_SHUFFLE = 2,      /* "shuffle": every object at a random place */
} gcs_snapshot_order;
/* A new snapshot (free it), or NULL with err.  *reached (when not NULL): the
 * objects the roots reach, which come first (all of them for shuffle). */
GCS_API gcs_snapshot *gcs_snapshot_reorder(const gcs_snapshot *g, gcs_snapshot_order how, uint64_t seed,
                                           uint64_t *reached, gcs_err *err);
GCS_API const char *gcs_snapshot_order_name(gcs_snapshot_order how); /* "depth-first", ... */
GCS_API int gcs_snapshot_order_parse(const char *name, gcs_snapshot_order *how); /* 0, or -1 */

GCS_API const char *gcs_snapshot_mark_mode_name(uint32_t mode);   /* "relaxed-bytes", ..., "?" */
GCS_API const char *gcs_snapshot_numa_policy_name(uint32_t policy); /* "local", "interleave", "node", "?" */

#endif
