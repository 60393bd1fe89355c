/* validate.h -- the validation report: the model and the adaptive mode
 * against the collector, on the paper's workloads (prefix gcs_validate_).
 *
 * For each workload (workload.h) the report:
 *  1. runs it with every fixed GC thread count of interest and with the
 *     adaptive policy (adaptive.h), a few times each in turn, and compares
 *     their median total mark times (the
 *     paper's Table 4: GC speedup with all threads and with adaptive, and the
 *     threads adaptive used);
 *  2. runs it once more writing heap snapshots of a few collections; right
 *     after each of those collections, with the world still stopped, it
 *     re-marks the same live heap at P = 1..max (gcs_gc_remark, median of
 *     `reps`), which gives the measured speedup and, from the workers' busy,
 *     search, wake-up and idle times, the measured GC speedup stack;
 *  3. predicts every snapshot with the fast and the slow predictor (model.h,
 *     inspect.h) for the same P, and tabulates measured against predicted
 *     (the paper's Table 2: Pred, Pred(M_P=M1), Pred(Q_P=Q1), error).
 *
 * gcs_validate_write() writes CSV, JSON, SVG plots and a Markdown summary
 * that links them (docs/validate.md).  Nothing here prints; progress goes
 * through a gcs_progress that the caller may silence.
 *
 * Calls workload.h, gc.h, adaptive.h, snapshot.h, inspect.h, model.h,
 * predict.h, plot.h, profile.h and common.h.
 */
#ifndef GCSCALE_VALIDATE_H
#define GCSCALE_VALIDATE_H

#include <stdint.h>
#include <stdio.h>

#include "gcscale/common.h"
#include "gcscale/gc.h"

#define GCS_VALIDATE_MAX_WORKLOADS 8
#define GCS_VALIDATE_MAX_SNAPSHOTS 8
#define GCS_VALIDATE_MAX_RUNS 16
#define GCS_VALIDATE_ERROR_TARGET 10.0   /* mean absolute prediction error, % */
#define GCS_VALIDATE_ADAPTIVE_TARGET 10.0 /* adaptive mark time over the best fixed P, % */

typedef struct gcs_validate_opts {
    int quick;                  /* smaller runs, fewer snapshots and repetitions */
    const char *machine_path;   /* machine profile (required) */
    const char *workloads;      /* comma-separated names; NULL: every workload */
    int max_threads;            /* P = 1..max_threads; 0: CPUs online */
    int reps;                   /* re-marks per P and snapshot; 0: 5 (quick) or 7 */
    int run_reps;               /* whole runs per configuration (the median counts);
                                   0: 3 (quick) or 5 */
    int snapshots;              /* snapshots per workload; 0: 2 (quick) or 4 */
    int mutators;               /* workload threads; 0: CPUs online */
    double steps_scale;         /* workload steps x this; 0: 1 */
    const char *snapshot_dir;   /* where the snapshots go (required) */
    int quiet;                  /* no progress on stderr */
    gcs_topo_placement placement; /* GC workers' placement; DEFAULT: cores */
} gcs_validate_opts;

GCS_API void gcs_validate_opts_init(gcs_validate_opts *opts);

/* The measured GC speedup stack of one parallel mark, in threads: the parts
 * add up to P.  speedup = T(1)/T(P); extra_work = (sum of the workers' busy
 * time - the busy time at P = 1)/T(P) (misses from stealing, contention);
 * search = time looking for work (stealing, termination); wake = time from
 * the start signal until a worker ran; tail = time a worker had finished
 * while the mark went on; other = the rest (timer granularity, the
 * difference between T(1) and its busy time). */
typedef struct gcs_validate_stack {
    double speedup, extra_work, search, wake, tail, other;
} gcs_validate_stack;

GCS_API void gcs_validate_measured_stack(const gcs_gc_stats *at_p, double t1_ns, double busy1_ns,
                                 gcs_validate_stack *out);

/* One thread count of one workload, averaged over its snapshots. */
/* Per workload, every time is the mean over its snapshots and every speedup
 * the ratio of such means, T(1) / T(P): the speedup of the workload's GC
 * time, to which each snapshot counts by its mark time (a mean of
 * per-snapshot ratios let a 0.3 ms collection weigh as much as a 5 ms one).
 * The stacks are per-snapshot stacks weighted the same way. */
typedef struct gcs_validate_point {
    int threads;
    double mark_ms;             /* fastest re-mark time */
    double mark_ms_median;      /* median re-mark time */
    double pred_ms[8];          /* predicted mark time: pred, no contention,
                                   no extra misses, critical span, fast,
                                   pred with the profile's miss overlap
                                   (--overlap fitted; NaN when it has none),
                                   model v2 (predict --model v2, slow
                                   predictor; NaN without it), and v2 with
                                   the simulated steals (--steal-count
                                   simulated; v2's where nothing was
                                   simulated) */
    double speedup;             /* measured: fastest T(1) / fastest T(P) */
    double speedup_median;      /* the same from the median re-marks */
    double pred;                /* slow predictor, full model */
    double pred_no_contention;  /* Pred(M_P = M1) */
    double pred_no_extra;       /* Pred(Q_P = Q1) */
    double pred_critical;       /* slow predictor, --span critical */
    double pred_fast;           /* fast predictor, full model */
    double pred_overlap;        /* slow predictor, --overlap fitted (NaN: no fit) */
    double pred_v2;             /* slow predictor, --model v2 --steal-count fitted (NaN: no slow predictor) */
    double pred_v2_sim;         /* the same, --steal-count simulated (predict --model v2's default) */
    double error_pct, error_critical_pct, error_fast_pct, error_overlap_pct, error_v2_pct,
        error_v2_sim_pct;       /* predicted / measured - 1 */
    gcs_validate_stack measured_stack;
    /* The collector's steals (the median re-mark's) and the steal
     * simulation's on the same snapshot (model/steals.c; NaN where the
     * profile has no gc_coord), each the mean over the snapshots. */
    double steals_measured, steals_simulated;
    double pred_stack[7];       /* speedup, lost to span, to extra work (extra misses and
                                   shared lines: lost_extra_work), to contention,
                                   and the coordination parts named as the measured
                                   stack's: wake, search, tail (0 without gc_coord) */
} gcs_validate_point;

/* One whole run of a workload. */
typedef struct gcs_validate_run {
    int threads;                /* fixed P, or the pool for adaptive */
    int adaptive;
    int verified;               /* the workload's own check passed */
    uint64_t collections;
    double wall_ms, mark_ms, pause_ms; /* totals over the run's collections */
    double avg_threads;         /* mean P over the collections */
    double decision_pct;        /* adaptive: decision time / mark time, % */
} gcs_validate_whole_run;

typedef struct gcs_validate_workload {
    char name[16];
    int nsnapshots;
    char snapshot[GCS_VALIDATE_MAX_SNAPSHOTS][4096];
    uint64_t snapshot_collection[GCS_VALIDATE_MAX_SNAPSHOTS];
    uint64_t snapshot_objects[GCS_VALIDATE_MAX_SNAPSHOTS];
    double snapshot_live_mb[GCS_VALIDATE_MAX_SNAPSHOTS];
    int npoints;                /* P = 1..npoints */
    gcs_validate_point points[GCS_GC_MAX_THREADS];
    int nruns;                  /* fixed P runs, then the adaptive run last */
    gcs_validate_whole_run runs[GCS_VALIDATE_MAX_RUNS];
    int best_fixed;             /* index in runs of the fastest fixed P */
    double adaptive_over_best_pct; /* adaptive mark time / best fixed - 1, % */
    /* The whole runs' noise floor: the median over the configurations of
     * (slowest - fastest) / median of each one's total mark times, %; 0
     * with one run per configuration. */
    double noise_pct;
    int adaptive_ok;            /* within the target, and not slower than both P = 1 and P = max
                                   by more than the noise floor */
    double speedup_full, speedup_adaptive; /* mark time at P = 1 over P = max, over adaptive */
    char slow_note[600];        /* why the slow predictor did not run, "" if it did */
} gcs_validate_workload;

typedef struct gcs_validate_report {
    char host[64];
    char machine[512];          /* the profile's path */
    char created[32];           /* ISO-8601 UTC */
    int cpus, max_threads, mutators, reps, run_reps, quick;
    int nworkloads;
    gcs_validate_workload w[GCS_VALIDATE_MAX_WORKLOADS];
    /* Mean absolute error over the workloads at each P >= 2 (index P). */
    double mae_pct[GCS_GC_MAX_THREADS + 1], mae_fast_pct[GCS_GC_MAX_THREADS + 1],
        mae_critical_pct[GCS_GC_MAX_THREADS + 1], mae_overlap_pct[GCS_GC_MAX_THREADS + 1],
        mae_v2_pct[GCS_GC_MAX_THREADS + 1], mae_v2_sim_pct[GCS_GC_MAX_THREADS + 1];
    double overlap;             /* the profile's gc_miss_overlap; NaN when it has none */
    /* Where the GC workers ran: the policy and, from the first re-mark at
     * the largest P, worker i's OS CPU and hwloc logical PU (-1: unbound). */
    char placement[16];
    int npu_map;
    int pu_map[GCS_GC_MAX_THREADS], pu_map_logical[GCS_GC_MAX_THREADS];
    /* The model the prediction verdict is for: "v2" (gcscale predict's
     * default: model v2, the slow predictor's simulated steals; the
     * mae_v2_sim_pct figures), or "base" (mae_pct) where the profile has no
     * cache geometry and so no slow predictor. */
    char error_model[8];
    int error_ok;               /* every P within GCS_VALIDATE_ERROR_TARGET (error_model's figures) */
    int adaptive_ok;            /* every workload's adaptive_ok */
    double seconds;             /* the whole validation */
} gcs_validate_report;

/* Runs the validation.  -1 with err set when it cannot run (no profile, a
 * profile without gc_cost_ns, an unknown workload, a workload that failed
 * its own check or ran out of heap). */
GCS_API int gcs_validate_run(const gcs_validate_opts *opts, gcs_validate_report *report, gcs_err *err);

/* Writes the report into dir (created if missing): summary.md, errors.csv,
 * adaptive.csv, stacks.csv, report.json and per workload WORKLOAD-speedup.svg
 * and WORKLOAD-stack.svg.  Every file is written crash-safely. */
GCS_API int gcs_validate_write(const gcs_validate_report *report, const char *dir, gcs_err *err);

/* report.json's document (new reference). */
GCS_API json_t *gcs_validate_report_json(const gcs_validate_report *report);

/* The short summary `gcscale validate` prints: the error table, the
 * adaptive table and the verdict on both targets. */
GCS_API void gcs_validate_print_summary(const gcs_validate_report *report, FILE *fp);


/* ---- policies: the paper's Table 4 with the baselines as columns (policies.c) ---- */

#define GCS_VALIDATE_MAX_CELLS (GCS_VALIDATE_MAX_RUNS + 5)

/* One configuration's whole runs of one workload: fixed P or a policy. */
typedef struct gcs_validate_policy_cell {
    char name[32];              /* "1", "2", ... for fixed P; "adaptive", "all", "boehm", "hotspot", "zgc" */
    int threads;                /* fixed P; 0 for a policy */
    /* The run with the median GC time (sum of the pauses) of `runs`: */
    double gc_ms, mark_ms, sweep_ms;
    double cpu_ms;              /* GC CPU time: the workers' mark and sweep time plus the rest of each pause */
    double avg_threads;         /* mean P over its collections */
    double p1_share;            /* share of its collections at P = 1 */
    double decision_max_pct;    /* the largest decision_ns / pause_ns of a collection, % */
    uint64_t decisions_over;    /* collections whose decision took more than 1% of their pause */
    uint64_t collections;
    double spread_pct;          /* (max - min) / median of the runs' GC times, % */
} gcs_validate_policy_cell;

typedef struct gcs_validate_policy_row {
    char workload[16];
    int ncells;                 /* fixed P first (nfixed of them), then the policies */
    int nfixed;
    gcs_validate_policy_cell cells[GCS_VALIDATE_MAX_CELLS];
    int best_fixed;             /* index of the fixed P with the least GC time */
    double noise_pct;           /* the median of the cells' spreads: the noise floor */
} gcs_validate_policy_row;

typedef struct gcs_validate_policies {
    char machine[512], host[64], created[32];
    int cpus, max_threads, mutators, runs;
    double steps_scale;         /* the workloads' steps x this (1: their defaults) */
    int nrows;
    gcs_validate_policy_row rows[GCS_VALIDATE_MAX_WORKLOADS];
    double seconds;
} gcs_validate_policies;

/* Runs every workload of opts (workloads, max_threads, mutators, run_reps
 * (default 5), steps_scale, placement, machine_path for adaptive) at every
 * fixed P of validate's candidates and under each policy, the runs of one
 * round taking turns.  No snapshots. */
GCS_API int gcs_validate_policies_run(const gcs_validate_opts *opts, gcs_validate_policies *out, gcs_err *err);
/* policies.md (the tables) and policies.csv (every cell) in dir. */
GCS_API int gcs_validate_policies_write(const gcs_validate_policies *p, const char *dir, gcs_err *err);

#endif
