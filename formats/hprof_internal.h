/* hprof_internal.h -- formats/ internal: the HPROF importer (hprof.c), the
 * V8 importer (v8snap.c) and
 * the recognition of heap dumps by content (heapdump.c), which the snapshot
 * reader (snapshot.c) calls so that every reader of snapshots reads dumps.
 * Not installed. */
#ifndef GCSCALE_HPROF_INTERNAL_H
#define GCSCALE_HPROF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "gcscale/heapdump.h"

/* A dump read through a window: a file (plain or gzip, through zlib's
 * gzread) or a buffer in memory (gz NULL, buf the whole dump).  Both
 * importers stream through one. */
typedef struct gcs_dumpstream {
    const char *name;
    gzFile gz;               /* file source, or NULL */
    const uint8_t *buf;      /* window: buf[pos..len) */
    uint8_t *own;            /* file source: the buffer */
    size_t pos, len;
    uint64_t base;           /* dump offset of buf[0] */
    int eof;
    gcs_err *err;
} gcs_dumpstream;

/* File source: moves the unread bytes to the front of the window and reads
 * until it holds cap bytes or the file ends (eof set).  0, or -1 with err
 * "NAME: offset N: ..." on a read error. */
int _gcs_dumpstream_refill(gcs_dumpstream *r, size_t cap);
/* Opens path (again: a new pass) with a window of cap bytes, allocated on
 * the first call.  0, or -1 with err set. */
int _gcs_dumpstream_open(gcs_dumpstream *r, const char *path, size_t cap);

/* The format of a file from its first bytes (gzip looked into); -1 with err
 * set when it cannot be read. */
int _gcs_heapdump_sniff(const char *path, gcs_err *err);
gcs_snapshot *_gcs_hprof_import(const char *path, gcs_heapdump_report *rep, gcs_err *err);
/* The V8 .heapsnapshot importer (v8snap.c). */
gcs_snapshot *_gcs_v8_import(const char *path, gcs_heapdump_report *rep, gcs_err *err);
/* 1 when the file at path starts with gzip's magic (the report's
 * "compressed"), 0 otherwise or when it cannot be read. */
int _gcs_heapdump_gzipped(const char *path);

#endif
