/* synth.h -- synthetic heap snapshots for the model (prefix gcs_synth_).
 *
 * Heaps shaped like the paper's workloads, without running them, so that the
 * model can be exercised on machine profiles gcscale cannot run on (the
 * O2K and E10K of Endo et al.'s Table 1):
 *
 *   bh    Barnes-Hut: an irregular octree of cells (8 pointer fields + 4 data
 *         words) over N bodies (8 data words, no pointers), plus the body
 *         array.  One thread builds it, so with GCS_SYNTH_ONE_NODE every
 *         object sits on memory node 0: the paper's skew.
 *   cube  breadth-first search: state records (2 pointer fields: parent and
 *         move list, + 4 data words) in a tree of branching 12, each with a
 *         small move record; the last level is held by a frontier array.
 *         All threads allocate, so with GCS_SYNTH_SPREAD pages are spread
 *         evenly over the nodes.
 *
 * Objects are laid out in allocation order as gc/ would place them (8-byte
 * header, 16-byte granules, 64 KiB pages), and a page's node follows the
 * placement.  Calls common.h and snapshot.h.
 */
#ifndef GCSCALE_SYNTH_H
#define GCSCALE_SYNTH_H

#include <stdint.h>

#include "gcscale/snapshot.h"

typedef enum gcs_synth_kind { GCS_SYNTH_BH = 0, GCS_SYNTH_CUBE = 1 } gcs_synth_kind;
typedef enum gcs_synth_placement {
    GCS_SYNTH_ONE_NODE = 0,  /* every page on node 0 */
    GCS_SYNTH_SPREAD = 1,    /* page i on node i mod nnodes */
} gcs_synth_placement;

typedef struct gcs_synth_opts {
    gcs_synth_kind kind;
    uint64_t size;           /* bodies (bh) or states (cube) */
    uint32_t nnodes;         /* memory nodes of the target machine */
    gcs_synth_placement placement;
    uint64_t seed;
} gcs_synth_opts;

/* Builds the snapshot in memory (validated).  NULL with err set on bad
 * options or when out of memory. */
GCS_API gcs_snapshot *gcs_synth_build(const gcs_synth_opts *opts, gcs_err *err);

GCS_API int gcs_synth_parse_kind(const char *name, gcs_synth_kind *kind);
GCS_API const char *gcs_synth_kind_name(gcs_synth_kind kind);

#endif
