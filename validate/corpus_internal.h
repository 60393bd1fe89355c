/* corpus_internal.h -- what the validate floor's files share: the corpus's
 * (validate/corpus_*.c; prefix _gcs_corpus_) and the validation's
 * (validate.c, report.c, policies.c; prefix _gcs_validate_). Not
 * installed. */
#ifndef GCSCALE_VALIDATE_CORPUS_INTERNAL_H
#define GCSCALE_VALIDATE_CORPUS_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "gcscale/corpus.h"
#include "gcscale/shapes.h"
#include "gcscale/snapshot.h"
#include "gcscale/validate.h"
#include "gcscale/workload.h"

/* One measurement of a corpus heap: its repetitions' mark times, ns. */
typedef struct gcs_corpus_measured {
    int threads, n;
    double median, min, max;   /* mark_ns */
    double steals_median;      /* the collector's steals; NAN where a repetition does not say */
} gcs_corpus_measured;

/* entry.json, checked whole (corpus_entry.c): format, version, every heap's
 * measurements and recipe.  -1 with one line naming entry and heap. */
int _gcs_corpus_entry_check(const json_t *doc, const char *entry, gcs_err *err);
/* A heap's measurements, ascending P from P = 1, into m[GCS_GC_MAX_THREADS]. */
int _gcs_corpus_heap_points(const json_t *heap, const char *entry, gcs_corpus_measured *m, int *np, gcs_err *err);
/* A heap's recipe: *snapshot (a plain file name in the entry's directory),
 * or a shape *sp checked against the builder's limits; *checksum may be
 * NULL only with a snapshot. */
int _gcs_corpus_heap_recipe(const json_t *heap, const char *entry, const char **snapshot, gcs_shape_params *sp,
                            const char **checksum, gcs_err *err);

/* Builds a gc-bench shape in a collector of its own (P = 1) and writes its
 * snapshot to path, uncompressed.  No collector may be running.  The
 * recorder and the recipes' rebuild use it, so both lay the heap out the
 * same way. */
int _gcs_corpus_shape_snapshot(const gcs_shape_params *sp, const char *path, gcs_err *err);

/* The heap limit a shape gets (gc-bench's: twice the heap plus 64 MiB). */
size_t _gcs_corpus_shape_heap_limit(const gcs_shape_params *sp);

/* mkdir -p (validate.c and the corpus). */

/* One whole run of a workload as validate runs them (seed 1, opts'
 * mutators and steps scale) on a collector initialised from go, with the
 * per-collection log installed (chained after go's on_collection).  -1
 * (log freed) if the collector or the run failed; else 0, and the caller
 * checks res and frees the log. */
int _gcs_validate_run_once(const gcs_validate_opts *o, const gcs_workload_info *info, gcs_gc_options *go,
                           gcs_workload_gclog *log, gcs_workload_result *res, gcs_err *err);

/* The mean absolute errors per P (index P) that the prediction verdict is
 * on: the report's error_model's (validate.c decides it, report.c prints
 * it). */
static inline const double *_gcs_validate_verdict_mae(const gcs_validate_report *r)
{
    return strcmp(r->error_model, "v2") == 0 ? r->mae_v2_sim_pct : r->mae_pct;
}

#endif
