/* corpus.h -- the measured corpus: real marks of the collector on real
 * machines, kept with everything needed to predict them again (prefix
 * gcs_corpus_).
 *
 * An entry is a directory (docs/corpus.md gives every file and JSON key):
 *
 *   entry.json       the machine (CPUs, caches, kernel, VM or not), how the
 *                    entry was made (command line, git revision, date), and
 *                    per heap every repetition's re-mark at every P: mark
 *                    and pause time, per worker busy, search, wake and tail
 *                    time, steals, steal attempts, objects; page faults;
 *                    roots.  Raw values: the spread is part of the truth.
 *   profile.json     the machine profile the model predicts from
 *                    (gcscale calibrate on that machine)
 *   HEAP.snap.zst    each workload heap's snapshot, zstd-compressed.  The
 *                    gc-bench shapes are deterministic: entry.json keeps
 *                    their recipe (shape and parameters) and the checksum
 *                    of their graph, and gcs_corpus_accuracy rebuilds them
 *
 * gcs_corpus_record measures this machine into a new entry;
 * gcs_corpus_accuracy predicts every heap of some entries from the entry's
 * profile and the snapshot alone, and compares with what was measured.
 * The corpus is a test set: nothing in the model is fitted to it.
 *
 * Calls gc.h, shapes.h, workload.h, snapshot.h, inspect.h, model.h,
 * predict.h, profile.h and common.h.  Never prints except where a FILE is
 * given; progress goes through a gcs_progress the caller may silence.
 */
#ifndef GCSCALE_CORPUS_H
#define GCSCALE_CORPUS_H

#include <stdio.h>

#include "gcscale/common.h"
#include "gcscale/model.h"

#define GCS_CORPUS_FORMAT "gcscale-corpus-entry"
#define GCS_CORPUS_VERSION 1
#define GCS_CORPUS_FLOOR_FORMAT "gcscale-corpus-floor"
#define GCS_CORPUS_MAX_REPS 31
#define GCS_CORPUS_MAX_SNAPSHOTS 8

typedef struct gcs_corpus_record_opts {
    const char *out_dir;        /* the entry's directory (created; must not hold an entry) */
    const char *machine_path;   /* this machine's profile, copied in as profile.json (required) */
    int max_threads;            /* P = 1..max_threads; 0: CPUs online */
    int reps;                   /* re-marks per P and heap; 0: 7 (quick: 3) */
    int snapshots;              /* snapshots per workload; 0: 2 (quick: 1) */
    int quick;                  /* smaller heaps: proves the tooling, measures little */
    const char *heaps;          /* comma list of tree,list,random,wide,bh,cube,cky; NULL: all */
    const char *command;        /* the command line, recorded as it was given */
    int quiet;                  /* no progress on stderr */
} gcs_corpus_record_opts;

GCS_API void gcs_corpus_record_opts_init(gcs_corpus_record_opts *o);
/* Records this machine's entry (see above).  0, or -1 with err set; a
 * failed run leaves no entry.json (the entry is incomplete). */
GCS_API int gcs_corpus_record(const gcs_corpus_record_opts *o, gcs_err *err);

/* The checksum of a snapshot's graph: addresses, sizes, pointer counts,
 * edges and roots (not the memory nodes or the collector's parameters,
 * which depend on the machine), as "crc32:xxxxxxxx". */
struct gcs_snapshot;
GCS_API void gcs_corpus_graph_checksum(const struct gcs_snapshot *g, char out[16]);

/* Builds a gc-bench shape exactly as gcs_corpus_accuracy rebuilds a heap
 * kept as a recipe, writes its snapshot to path (uncompressed) and puts the
 * graph's checksum in out.  No collector may be running.  0, or -1. */
struct gcs_shape_params;
GCS_API int gcs_corpus_shape_checksum(const struct gcs_shape_params *sp, const char *path, char out[16],
                                      gcs_err *err);

/* This machine, as entry.json's "machine" object (new reference). */
GCS_API json_t *gcs_corpus_machine_json(void);

typedef struct gcs_corpus_accuracy_opts {
    /* gcs_inspect_predictor; -1 (the default): the one gcscale predict
     * uses for the entry's profile (gcs_inspect_default_predictor: the slow
     * one where the profile has cache geometry) */
    int predictor;
    gcs_model_span span;        /* default GCS_MODEL_SPAN_CRITICAL, as gcscale predict */
    /* 1 (the default): model v2 (gcs_model_opts_v2 and _v2_costs: every
     * term from the profile's calibrated keys), as gcscale predict; 0: the
     * base model, as gcscale predict --model base */
    int model_v2;
    /* 1 (with model_v2 only): the lines passing between workers
     * (gcscale predict --model v2 --shared-lines on; the report's model is
     * then "v2+shared-lines", so that no floor of another model applies) */
    int shared_lines;
    /* 1 (with model_v2 only): leave out the steals' own work, as gcscale
     * predict --model v2 --steal-work off; the report's model then says
     * "-steal-work" */
    int no_steal_work;
    /* With model_v2 only, the coordination's steal count, as gcscale
     * predict --model v2 --steal-count: -1 (the default) as predict decides
     * (gcs_inspect_steals_simulated_by_default: simulated on each heap's
     * graph with the slow predictor where the entry's profile has gc_coord,
     * else the profile's fit); 1 simulated, the report's model then saying
     * "+simulated-steals"; 0 the fit, "+fitted-steals".  Where the count is
     * simulated the report sets each point's simulated steals beside the
     * measured ones. */
    int steal_count_sim;
    /* with model_v2 only: GCS_MODEL_RESIDENCY_DEFAULT (the default: warm
     * residency priced where the entry's profile has gc_resident), 0 off or
     * 1 on, as gcscale predict --model v2 --residency; the report's model
     * says "-residency" or "+residency" when it is not the default */
    int residency;
    const char *cache_dir;      /* where recipes are rebuilt; NULL: build/corpus-cache */
    int quiet;
} gcs_corpus_accuracy_opts;

GCS_API void gcs_corpus_accuracy_opts_init(gcs_corpus_accuracy_opts *o);
/* Predicts every heap of the entries dirs[0..n) and compares: *report (new
 * reference) is the JSON documented in docs/corpus.md.  0, or -1 with err
 * set (an unreadable entry, a rebuilt heap whose checksum differs). */
GCS_API int gcs_corpus_accuracy(const char *const *dirs, int n, const gcs_corpus_accuracy_opts *o,
                                json_t **report, gcs_err *err);
/* Prints the report as text tables. */
GCS_API void gcs_corpus_accuracy_print(const json_t *report, FILE *fp);

/* The floor: the accuracy the corpus must keep (docs/corpus.md).  Writes
 * the report's figures as a floor document (new reference). */
GCS_API json_t *gcs_corpus_floor_from_report(const json_t *report, double tolerance_pct);
/* Compares a report with a floor: 0 when no figure is worse than its floor
 * plus the floor's tolerance, 1 when one is (each is printed on fp, which
 * may be NULL), -1 with err set when the floor is malformed or names an
 * entry, heap or P the report lacks. */
GCS_API int gcs_corpus_floor_check(const json_t *report, const json_t *floor, FILE *fp, gcs_err *err);

#endif
