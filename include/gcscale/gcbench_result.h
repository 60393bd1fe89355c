/* gcbench_result.h -- the result of a gc-bench run and its JSON format,
 * "gcscale-gc-bench" version 1 (prefix gcs_gcbench_result_).
 *
 * The engine (gcbench.h) fills a gcs_gcbench_result; this header's
 * functions turn it into the tables `gcscale gc-bench` prints (text, CSV)
 * and the JSON document it writes, and read that document back (for
 * `gcscale predict --measured`).  The JSON keys and the table's columns are
 * defined once, in formats/gcbench_result.c; docs/gc-bench.md describes
 * them.  Calls common.h and jansson only.
 */
#ifndef GCSCALE_GCBENCH_RESULT_H
#define GCSCALE_GCBENCH_RESULT_H

#include "gcscale/common.h"

#define GCS_GCBENCH_MAX_THREADS 64   /* = GCS_GC_MAX_THREADS (checked by the engine) */

/* One collection at one P (instrumentation on). */
typedef struct gcs_gcbench_sample {
    double mark_ms, pause_ms, t1_ms;
    double steals, steal_attempts;
    double busy_share[GCS_GCBENCH_MAX_THREADS]; /* worker i's busy_ns / the mark's wall time */
    double llc_misses;                          /* summed over the workers; NaN unavailable */
    double mark_ms_uninstrumented;              /* instr_cost: the same round, instrumentation off */
} gcs_gcbench_sample;

/* One P: its samples and their medians (min and max where named). */
typedef struct gcs_gcbench_row {
    int threads;
    gcs_gcbench_sample *samples;                /* reps of them, in round order; NULL when read */
    double mark_ms, mark_ms_min, mark_ms_max;
    double pause_ms, pause_ms_min, pause_ms_max;
    double mobjects_per_s, mb_per_s;            /* live objects and bytes over the median mark */
    double speedup_mark, speedup_pause;         /* over the P = 1 row; NaN without one */
    double steals, steal_attempts, t1_ms, llc_misses;
    double busy_share[GCS_GCBENCH_MAX_THREADS]; /* threads of them */
    double mark_ms_uninstrumented, instr_overhead_pct; /* NaN without instr_cost */
} gcs_gcbench_row;

/* One collection with the adaptive policy choosing P (--gc-threads adaptive). */
typedef struct gcs_gcbench_decision {
    int threads, npredicted;
    double predicted_mark_ms, mark_ms, decision_us, decision_pct;
    double predicted_ms[GCS_GCBENCH_MAX_THREADS]; /* npredicted of them, P = 1.. */
} gcs_gcbench_decision;

typedef struct gcs_gcbench_result {
    /* the heap: a shape (depth for "tree", size for the others) or a snapshot */
    char shape[16];              /* tree, list, random, wide, or "snapshot" */
    char *snapshot;              /* the snapshot's path (shape "snapshot"), else NULL */
    int depth;
    uint64_t size, seed;
    uint64_t objects, pointers, bytes, payload_bytes; /* live; bytes = headers + payloads */
    int has_objects;             /* read: the document gives objects */
    /* the run */
    char mark_mode[32], numa[64];
    int pinned, cpus, reps, warmup;
    /* Where the workers ran (docs/collector.md, "Worker placement"): the
     * policy ("cores", "compact", "scatter", "none"; "" in a document older
     * than placement) and worker i's OS CPU and hwloc logical PU (-1:
     * unbound), for the largest P's npu_map workers. */
    char placement[16];
    int npu_map;
    int pu_map[GCS_GCBENCH_MAX_THREADS], pu_map_logical[GCS_GCBENCH_MAX_THREADS];
    uint64_t heap_limit;
    double build_ms;
    char cache_misses[256];      /* the counters' source, or why there are none */
    int has_span;                /* T-infinity computed (one extra collection) */
    double span, span_ms, parallelism; /* span NaN where the collector gave none */
    int instr_cost;              /* rows have the uninstrumented mark time */
    int nrows;
    gcs_gcbench_row *rows;       /* ascending P */
    /* --gc-threads adaptive: reps decisions, else 0 */
    int ndecisions;
    gcs_gcbench_decision *decisions;
    char *adaptive_spec, *adaptive_machine; /* machine NULL: the default profile */
    double adaptive_mark_ms_median, adaptive_threads_median, adaptive_decision_pct_median;
    int best_fixed;              /* index of the row with the least median mark */
} gcs_gcbench_result;

/* Frees what a result owns (rows, samples, decisions, strings) and the
 * result itself. */
GCS_API void gcs_gcbench_result_free(gcs_gcbench_result *r);

/* The per-P table ("gc-bench: tree depth 22, ... per P", columns threads,
 * mark_ms, ...) and, with decisions, the adaptive one (NULL without). */
GCS_API gcs_table *gcs_gcbench_result_table(const gcs_gcbench_result *r);
/* The same tables with one value per cell, for CSV: busy_share as one
 * column per worker (busy_share_0, ...; empty where P had fewer workers),
 * the adaptive table's predicted_ms_by_p as predicted_ms_p1, ... (adaptive
 * 1; NULL without decisions). */
GCS_API gcs_table *gcs_gcbench_result_csv_table(const gcs_gcbench_result *r, int adaptive);
GCS_API gcs_table *gcs_gcbench_result_adaptive_table(const gcs_gcbench_result *r);

/* The JSON document (new reference). */
GCS_API json_t *gcs_gcbench_result_to_json(const gcs_gcbench_result *r);

/* Reads a document written by gcs_gcbench_result_to_json: the heap, the
 * run's settings and every row's medians (samples stay NULL; the adaptive
 * part is not read).  Refuses another format, a document without rows and
 * a row without an integer threads >= 1.  *out is freed with
 * gcs_gcbench_result_free. */
GCS_API int gcs_gcbench_result_read(const char *path, gcs_gcbench_result **out, gcs_err *err);

#endif
