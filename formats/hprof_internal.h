/* hprof_internal.h -- formats/ internal: the HPROF importer (hprof.c), the
 * V8 importer (v8snap.c) and
 * the recognition of heap dumps by content (heapdump.c), which the snapshot
 * reader (snapshot.c) calls so that every reader of snapshots reads dumps.
 * Not installed. */
#ifndef GCSCALE_HPROF_INTERNAL_H
#define GCSCALE_HPROF_INTERNAL_H

#include <stddef.h>

#include "gcscale/heapdump.h"

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
