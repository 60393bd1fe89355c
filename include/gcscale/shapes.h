/* shapes.h -- canonical benchmark heaps (prefix gcs_shape_), built through
 * any allocator.
 *
 * The shapes are the collector benchmark's inputs (gcscale gc-bench, make
 * bench) and are meant for reuse by model validation: the same parameters
 * and seed give the same object graph, allocated in the same order, whatever
 * allocator builds it -- gcscale's collector (gcs_shape_build_gc) or another
 * one (gcs_shape_build with your own allocation callback; the Boehm GC
 * comparison program does exactly that).
 *
 *   tree    complete binary tree of depth D (2^(D+1) - 1 objects; default
 *           D = 22), each node 2 pointer fields + 1 data word, allocated in
 *           preorder; the root is the tree's root.
 *   list    N objects (default 4,000,000) of 1 pointer field + 1 data word;
 *           node i points to node i - 1, the root is the last allocated.
 *   random  N objects (default 3,000,000) of 2 pointer fields + 1 data word,
 *           each field pointing to a uniformly random object (seeded), all
 *           held by one array of N pointers, which is the root (N + 1 objects).
 *   wide    an array of N pointers (default 1,000,000), the root, to N small
 *           objects of 2 data words and no pointer field (N + 1 objects).
 *
 * Every object's pointer fields come first (as gcs_gc_alloc lays them out),
 * so the builder writes fields as plain stores into the allocator's memory.
 * Library code: nothing prints or exits.
 */
#ifndef GCSCALE_SHAPES_H
#define GCSCALE_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "gcscale/common.h"

typedef enum gcs_shape_kind {
    GCS_SHAPE_TREE = 0,
    GCS_SHAPE_LIST = 1,
    GCS_SHAPE_RANDOM = 2,
    GCS_SHAPE_WIDE = 3,
} gcs_shape_kind;

#define GCS_SHAPE_DEFAULT_DEPTH 22
#define GCS_SHAPE_MAX_DEPTH 30
#define GCS_SHAPE_MAX_OBJECTS (1ull << 32)

typedef struct gcs_shape_params {
    gcs_shape_kind kind;
    int depth;        /* tree; 0: 22 */
    uint64_t objects; /* list, random, wide; 0: the shape's default */
    uint64_t seed;    /* random */
} gcs_shape_params;

/* What a shape holds (exact, computed from the parameters). */
typedef struct gcs_shape_info {
    uint64_t objects;        /* objects allocated, all reachable from the root */
    uint64_t pointers;       /* non-NULL pointer fields */
    uint64_t payload_bytes;  /* sum of object payload sizes */
    uint64_t gcs_bytes;      /* payload + gcscale's 8-byte header per object */
} gcs_shape_info;

/* The allocator: returns zeroed memory for an object of nptrs pointer fields
 * followed by data_words data words (8 bytes each), or NULL.  The builder
 * keeps every object reachable from *root (see gcs_shape_build) before it
 * allocates the next one, so a precise collector that treats *root as a
 * root slot may collect during the build. */
typedef void *(*gcs_shape_alloc_fn)(void *ctx, size_t nptrs, size_t data_words);

GCS_API const char *gcs_shape_name(gcs_shape_kind kind);
/* Adds "shape", "depth" (tree) or "size" (the others) and "seed" to a JSON
 * result, the same way in every benchmark program. */
GCS_API void gcs_shape_params_to_json(const gcs_shape_params *p, json_t *doc);
GCS_API int gcs_shape_parse(const char *name, gcs_shape_kind *kind); /* 0, or -1 unknown */
/* Fills in defaults and checks ranges (depth 1..30, objects 1..2^32). */
GCS_API int gcs_shape_params_check(gcs_shape_params *p, gcs_err *err);
/* Exact size of the shape without building it. */
GCS_API void gcs_shape_describe(const gcs_shape_params *p, gcs_shape_info *info);

/* Builds the shape; *root (which the caller keeps as a root) holds the root
 * object from the first allocation on.  Returns 0, or -1 with err set when
 * an allocation fails. */
GCS_API int gcs_shape_build(const gcs_shape_params *p, gcs_shape_alloc_fn alloc, void *ctx, void **root,
                    gcs_shape_info *info, gcs_err *err);

/* The same with gcscale's collector (gcs_gc_alloc / gcs_gc_alloc_data) from
 * an attached thread; the caller registers root (gcs_gc_add_root) first. */
GCS_API int gcs_shape_build_gc(const gcs_shape_params *p, void **root, gcs_shape_info *info, gcs_err *err);

#endif
