/* heapdump.h -- importing other runtimes' heap dumps as heap snapshots
 * (prefix gcs_heapdump_).
 *
 * A Java heap dump (HPROF 1.0.1-1.0.3, as `jcmd PID GC.heap_dump`,
 * `jmap -dump` and Android Studio write it, plain or gzip-compressed as
 * `GC.heap_dump -gz` writes it) becomes a gcscale heap snapshot (snapshot.h,
 * format version 2): every object, class and array of the dump with the size
 * the JVM gives it, its reference fields as edges, its class as its type, the
 * dump's root records plus every class as roots, and the dump's address
 * order.  The dump is streamed in two passes through a bounded buffer, never
 * read whole.  How sizes, edges and roots are derived: docs/heap-dumps.md.
 *
 * gcs_snapshot_read() imports a dump transparently, so `gcscale predict`,
 * `snapshot info` and `gc-bench --snapshot` take one directly; `gcscale
 * snapshot import` writes the snapshot file.
 *
 * A V8 heap snapshot (.heapsnapshot: node's v8.writeHeapSnapshot() and
 * --heapsnapshot-signal, Chrome DevTools; plain or gzip) becomes one too:
 * the nodes reachable from the synthetic root over strong edges (weak edges
 * and, except from the root, shortcut edges dropped) with their self sizes,
 * each node's class (an object's constructor name) or "(node type)" as its
 * type, the synthetic root as the one root, in the dump's node order.  The
 * layout is read from snapshot.meta by field name; the document is streamed
 * once through a bounded buffer. */
#ifndef GCSCALE_HEAPDUMP_H
#define GCSCALE_HEAPDUMP_H

#include <stdint.h>

#include "gcscale/common.h"
#include "gcscale/snapshot.h"

typedef enum gcs_heapdump_format {
    GCS_HEAPDUMP_UNKNOWN = 0,
    GCS_HEAPDUMP_HPROF = 1,     /* "JAVA PROFILE 1.0.x", plain or gzip */
    GCS_HEAPDUMP_V8 = 2,        /* a .heapsnapshot JSON document, plain or gzip */
} gcs_heapdump_format;

/* What an import found (every count is over the whole dump). */
typedef struct gcs_heapdump_report {
    gcs_heapdump_format format;
    char version[16];           /* "1.0.2" */
    uint32_t id_bytes;          /* 4 or 8 */
    int compressed;             /* 1: gzip */
    uint64_t dump_bytes;        /* uncompressed bytes of the dump */
    unsigned passes;            /* passes over the dump */
    /* the layout the sizes assume (docs/heap-dumps.md) */
    uint32_t ref_bytes;         /* 4: compressed references */
    uint32_t object_header_bytes;
    uint32_t array_header_bytes;
    uint64_t instances, object_arrays, primitive_arrays, classes;
    uint64_t root_records;      /* root sub-records in the dump */
    uint64_t missing_roots;     /* root records naming an object the dump lacks */
    uint64_t references;        /* non-NULL reference fields */
    uint64_t missing_refs;      /* references to objects the dump lacks (imported as NULL) */
    uint64_t skipped_records;   /* top-level records of unknown tags (framed, skipped) */
    uint64_t jvm_bytes;         /* the objects' sizes as the JVM lays them out (V8: the
                                 * imported nodes' self sizes) */
    uint64_t moved_objects;     /* objects placed above their dump address (the snapshot's
                                 * pointer fields are 8 bytes; docs/heap-dumps.md); V8:
                                 * nodes widened to their strong edges' count */
    /* V8 only */
    uint64_t nodes;             /* nodes in the dump */
    uint64_t edges_total;       /* edges in the dump */
    uint64_t weak_edges;        /* weak edges dropped */
    uint64_t shortcut_edges;    /* shortcut edges dropped (the root's are kept) */
    uint64_t element_copies;    /* element edges dropped: the object's backing store lists
                                 * the same targets, and is traced (docs/heap-dumps.md) */
    uint64_t unreachable_nodes; /* nodes not strongly reachable from the root, dropped */
    /* HPROF, gzip: HotSpot's `-gz` members (at most BLOCKSIZE bytes each,
     * named in the first member's header) inflated whole with libdeflate,
     * and that BLOCKSIZE; both 0 where zlib streamed the dump (one member,
     * as gzip writes, or members of no stated bound) or it is plain */
    uint64_t gzip_members;
    uint32_t gzip_block_bytes;
} gcs_heapdump_report;

/* The format of the file at path from its content (gzip is looked into).
 * GCS_HEAPDUMP_UNKNOWN for anything else (a gcscale snapshot included);
 * -1 with err set when the file cannot be read. */
GCS_API int gcs_heapdump_detect(const char *path, gcs_err *err);
GCS_API const char *gcs_heapdump_format_name(int format); /* "hprof", "v8", "unknown" */

/* Imports the dump at path (format GCS_HEAPDUMP_UNKNOWN: detected).  rep
 * may be NULL.  NULL with one line "PATH: offset N: message" in err for a
 * malformed dump ("PATH: offset N: snapshot.meta: ..." naming the field for
 * a V8 snapshot whose layout lacks one). */
GCS_API gcs_snapshot *gcs_heapdump_import(const char *path, int format, gcs_heapdump_report *rep, gcs_err *err);
/* The same from an uncompressed HPROF dump in memory (name for messages). */
GCS_API gcs_snapshot *gcs_heapdump_import_hprof_mem(const void *data, size_t len, const char *name,
                                                    gcs_heapdump_report *rep, gcs_err *err);
/* The same from an uncompressed V8 .heapsnapshot document in memory. */
GCS_API gcs_snapshot *gcs_heapdump_import_v8_mem(const void *data, size_t len, const char *name,
                                                 gcs_heapdump_report *rep, gcs_err *err);

#endif
