/* zstd_internal.h -- zstd-compressed files (Debian's libzstd), for the
 * readers of heap snapshots and the corpus (internal: prefix _gcs_zstd_).
 *
 * A file is recognised by the zstd frame magic in its first four bytes, so
 * a reader accepts FILE and FILE.zst alike whatever the name says.
 */
#ifndef GCSCALE_FORMATS_ZSTD_INTERNAL_H
#define GCSCALE_FORMATS_ZSTD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gcscale/common.h"

/* 1 when the n bytes at head begin a zstd frame (n >= 4), else 0. */
int _gcs_zstd_is_frame(const void *head, size_t n);

/* The plain file's length as its first n plain bytes state it (a
 * snapshot's header), or 0 when they do not tell. */
typedef uint64_t (*gcs_zstd_size_hint)(const void *head, size_t n);

/* Decompresses the whole of the open file fd (named `name` in messages)
 * into a malloc'ed buffer when it is zstd-compressed: 1 with *data, *len
 * set; 0 when it is not compressed (nothing read, the file offset
 * unchanged); -1 with err "NAME: ..." on a corrupt or truncated stream or
 * when out of memory.  The buffer is sized once from the frame's stated
 * size or else from size_hint (may be NULL) on the first plain bytes; both
 * are hints, never trusted for the length. */
int _gcs_zstd_load_fd(int fd, const char *name, gcs_zstd_size_hint size_hint, void **data, size_t *len,
                      gcs_err *err);

/* Compresses the file src into dst (written crash-safely, gcs_outfile) at
 * the given level (1..19).  0, or -1 with err set. */
int _gcs_zstd_compress_file(const char *src, const char *dst, int level, gcs_err *err);

#endif
