/* calibrate.h -- measuring this machine into a machine profile (prefix
 * gcs_calibrate_).
 *
 * Owns the calibration run: topology, read and RW latency for every (CPU
 * node, memory node) pair, occupancy (read and RW) per memory node with both
 * fits, bandwidth per node and hardware counters, into a gcs_profile whose
 * extra JSON holds every detail under "calibration"; and the marker's own
 * costs (gc_cost_ns, gc_steals), timed on the collector, and its miss
 * overlap (gc_miss_overlap), fitted on the collector with the model; and
 * the profile's nodes and caches taken from the topology.  Calls common.h,
 * topology.h, microbench.h, occfit.h, profile.h, the collector's public
 * gc.h and snapshot.h, and, for the miss overlap, inspect.h and model.h.
 */
#ifndef GCSCALE_CALIBRATE_H
#define GCSCALE_CALIBRATE_H

#include <stdint.h>
#include "gcscale/common.h"
#include "gcscale/profile.h"
#include "gcscale/topology.h"

typedef enum gcs_calibrate_mode {
    /* run times of both: docs/microbench.md, "Run time and progress" */
    GCS_CALIBRATE_FULL = 0,
    GCS_CALIBRATE_QUICK = 1, /* fewer repetitions and load points */
} gcs_calibrate_mode;

typedef struct gcs_calibrate_opts {
    gcs_calibrate_mode mode;
    int quiet;               /* no progress lines on stderr */
    const char *synthetic;   /* hwloc synthetic topology; NULL = this system */
    uint64_t size_bytes;     /* chase buffer; 0 = 8 x LLC, at least 1 GiB */
    uint64_t seed;           /* 0 = fixed default, so runs are comparable */
    /* Progress: NULL = the run's own series, finished ("[100%] done") when
     * it ends.  Set: the run initialises *progress (with quiet) for its own
     * steps plus extra_work (the caller's steps after it, in the same units:
     * expected seconds on a small machine) and leaves it unfinished, so the
     * caller's steps continue the one series and the caller finishes it. */
    gcs_progress *progress;
    double extra_work;
    /* CPU order of the occupancy load threads (topology.h; DEFAULT: cores):
     * the local node's CPUs first, in the policy's order; none: unpinned. */
    gcs_topo_placement placement;
} gcs_calibrate_opts;

/* Fills opts with the defaults (full mode, this system, automatic size). */
GCS_API void gcs_calibrate_opts_init(gcs_calibrate_opts *opts);

/* Runs the calibration; on success *out is a new profile (free with
 * gcs_profile_free).  Its last step fits the marker's miss overlap
 * (gcs_calibrate_fit_overlap) on a random heap of 4 x LLC (2 x in quick
 * mode), at least 2^20 objects; an opts->size_bytes below that heap means a
 * small run and skips it.  That step is optional: a failed fit leaves
 * gc_miss_overlap out and records why in calibration.gc_overlap ("note",
 * "error").  Returns -1 with err set on failure. */
GCS_API int gcs_calibrate_run(const gcs_calibrate_opts *opts, gcs_profile **out, gcs_err *err);

/* Runs the calibration nruns times (1..GCS_CALIBRATE_MAX_REPEAT) with the
 * same options and keeps, in *out, the run nearest the medians (the
 * smallest sum over the constants of |x / median - 1|), so its details
 * describe its own figures.  *table (free with gcs_table_free) has one row
 * per constant, named as in the profile's "uncertainty": runs, min,
 * median, max, rel_spread = (max - min) / median and how many runs marked
 * it unreliable; the kept profile holds the same under
 * calibration.repeat.  Only the last run uses opts->progress; the others
 * report on their own series.  -1 with err set when a run fails. */
#define GCS_CALIBRATE_MAX_REPEAT 100
GCS_API int gcs_calibrate_repeat(const gcs_calibrate_opts *opts, int nruns, gcs_profile **out,
                                 gcs_table **table, gcs_err *err);

/* gcs_calibrate_update_gc nruns times, each into a copy of p as it is, and
 * in *out the copy nearest the medians of the collector's constants (gc_*,
 * as gcs_calibrate_repeat chooses; p is not changed), the spread of those
 * in *table and under calibration.repeat.  pr must hold nruns x
 * gcs_calibrate_update_gc_work(p, quick).  -1 with err set when a run
 * fails. */
GCS_API int gcs_calibrate_update_gc_repeat(const gcs_profile *p, int quick, int nruns, gcs_progress *pr,
                                           gcs_profile **out, gcs_table **table, gcs_err *err);

/* Times the collector's mark on small cache-resident heaps of pointer
 * densities 1 to 32 and fits gc_cost_ns (object, pointer: least squares over
 * T1 at P = 1; steal: extra busy time per steal at P = 2) into p.  *details
 * gets the load points, the fit, its residuals, condition number and the
 * costs' standard errors and 95% intervals, and a "warning" (else null) when
 * the split stayed uncertain after re-measuring (new reference).  Starts and shuts down a
 * collector, so none may exist in the process.  quick: fewer repetitions. */
GCS_API int gcs_calibrate_gc_costs(int quick, gcs_profile *p, json_t **details, gcs_err *err);

/* Re-measures only the marker's costs (gc_cost_ns, gc_steals) and its miss
 * overlap (gc_miss_overlap, as gcs_calibrate_run's last step) into p, a
 * profile calibrated before on this machine: for a collector that changed
 * while the memory system did not.  The details go to p's extra
 * "calibration" (gc_costs, gc_only: when and how, gc_overlap).  Reports its
 * steps on pr, which the caller has initialised with at least
 * gcs_calibrate_update_gc_work(p, quick) and finishes. */
GCS_API int gcs_calibrate_update_gc(gcs_profile *p, int quick, gcs_progress *pr, gcs_err *err);
/* The expected seconds of gcs_calibrate_update_gc(p, quick), in pr's units. */
GCS_API double gcs_calibrate_update_gc_work(const gcs_profile *p, int quick);

/* Measures one of the collector's keys into p, a profile calibrated before
 * on this machine, and keeps every other figure: for a key calibrate gained
 * after the profile was recorded (a corpus entry's profile is given it on
 * its machine, docs/corpus.md).  key: "gc_miss_overlap",
 * "gc_stream_line_ns", "gc_resident", "gc_coord",
 * "gc_coord.attempts_per_search" (that ratio alone: gc_coord's laws and
 * prices kept), "gc_line_transfer_ns" or "dependent_load_ns";
 * the step is calibrate's own, on the profile's own figures (the overlap
 * and its heap on its gc_cost_ns and effective LLC, and so on), with its
 * details under "calibration" and a record {"key", "time", "mode"}
 * appended to calibration.keys_added.
 * A step that cannot fit leaves the key out and says why in its details,
 * as in a calibration; -1 with err set for a key of another name.  Reports
 * on pr, initialised with gcs_calibrate_update_key_work(p, key, quick). */
GCS_API int gcs_calibrate_update_key(gcs_profile *p, const char *key, int quick, gcs_progress *pr, gcs_err *err);
/* Its expected seconds, in pr's units; 0 for p NULL (a check of the key),
 * -1 for a key of another name. */
GCS_API double gcs_calibrate_update_key_work(const gcs_profile *p, const char *key, int quick);

/* Fits gc_miss_overlap, how many misses the collector's marker overlaps
 * (docs/model.md, "Overlapped misses"), into p: times the collector's mark
 * at P = 1 of a random graph of `objects` objects (median of reps) and
 * solves the model at P = 1, on the same graph inspected with the slow
 * predictor, for the overlap.  Needs p's gc_cost_ns and caches, and a graph
 * several times the last-level cache.  *details gets the measurement and
 * the fit (new reference).  Starts and shuts down a collector, so none may
 * run in the process. */
GCS_API int gcs_calibrate_fit_overlap(uint64_t objects, int reps, gcs_profile *p, json_t **details,
                                      gcs_err *err);

/* Measures the collector's coordination costs (gc_coord: wake, tail, idle,
 * spread round, steal attempt; docs/model.md "Coordination") into p, with
 * their uncertainties, and marks unreliable any the data cannot determine:
 * marks cache-resident heaps at P = 1..max_threads (0: the CPUs online; at
 * least 2).  *details gets the fits (new reference).  Starts and shuts down
 * a collector, so none may run in the process. */
GCS_API int gcs_calibrate_coord(int quick, int max_threads, gcs_profile *p, json_t **details, gcs_err *err);

/* Measures gc_mark_transfer_ns (docs/model.md, "Mark-table lines") into p:
 * the collector marks a random graph of `objects` objects at P = 1 and 2,
 * reps times each, and the growth of the median summed busy time is divided
 * by the steal simulation's mark-table transfers on the same graph at P = 2
 * (times the table's fit in the private caches).  Needs two CPUs and p's
 * gc_cost_ns, gc_coord and caches.  *details gets the measurement (new
 * reference).  Starts and shuts down a collector, so none may run in the
 * process. */
GCS_API int gcs_calibrate_fit_mark_transfer(uint64_t objects, int reps, gcs_profile *p, json_t **details,
                                            gcs_err *err);
/* The same on a heap of `objects` that fits the private caches whole, into
 * gc_mark_transfer_cached_ns (docs/model.md, "Mark-table lines where the
 * heap fits"). */
GCS_API int gcs_calibrate_fit_mark_transfer_cached(uint64_t objects, int reps, gcs_profile *p, json_t **details,
                                                   gcs_err *err);

/* Measures what a cache line touched last by another worker costs over one
 * touched by the same worker (gc_line_transfer_ns; docs/model.md "Extra work
 * in parallel"): two threads on p's first two CPUs touch lines as the marker
 * does (a load, a mark store), on private and on shared lines.  Sets p's
 * gc_line_transfer_ns and its uncertainty; *details gets the figures (new
 * reference).  -1 with fewer than two CPUs in p or when a thread cannot be
 * started or pinned. */
GCS_API int gcs_calibrate_line_transfer(int quick, gcs_profile *p, json_t **details, gcs_err *err);

/* Measures what a dependent load costs by working set on 4 KiB pages, the
 * collector's (dependent_load_ns; docs/model.md "Dependent misses: the
 * chase's price"): a uniformly random chase over sizes from 256 KiB to 4 x
 * the effective LLC (64 MiB to 1 GiB), on p's first CPU.  Sets p's curve;
 * *details gets the points (new reference).  -1 when the buffer cannot be
 * made or the thread cannot be started or pinned. */
GCS_API int gcs_calibrate_dependent_load(int quick, gcs_profile *p, json_t **details, gcs_err *err);

/* Copies nodes and caches into a profile made by gcs_profile_new(nnodes)
 * with nnodes == gcs_topo_nnodes(t).  Arrays are malloc'ed (the profile
 * frees them). */
GCS_API int gcs_calibrate_fill_profile(const gcs_topo *t, gcs_profile *p, gcs_err *err);

#endif
