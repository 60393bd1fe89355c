/* calibrate_internal.h -- calibrate/ internal: what the folder's files call
 * in one another.  Not installed (prefix _gcs_calibrate_). */
#ifndef GCSCALE_CALIBRATE_INTERNAL_H
#define GCSCALE_CALIBRATE_INTERNAL_H

#include <stdint.h>
#include "gcscale/calibrate.h"
#include "gcscale/microbench.h"
#include "gcscale/snapshot.h"
#include "gcscale/topology.h"

/* The last-level cache the steps that size their heaps beyond the caches
 * (overlap.c, stream.c) size them by, in bytes (0 without caches): of a
 * profile, its effective LLC where the latency sweep measured one
 * (llc_effective_bytes), else its largest cache; of the topology whose
 * caches the profile will get, the largest (before the sweep: the progress
 * series' estimate, which may then be high).  Defined in overlap.c. */
uint64_t _gcs_calibrate_llc_bytes(const gcs_profile *p);
uint64_t _gcs_calibrate_llc_bytes_topo(const gcs_topo *t);

/* The miss-overlap fit as the calibration's last step (overlap.c): sizes the
 * random heap from p's caches (not fitted, with a note, when p has none or
 * size_bytes, a chase size the user chose, is below that heap), fits
 * gc_miss_overlap into p and records the details under the profile's
 * calibration.gc_overlap -- a failed fit too, with its "error": the step is
 * optional and never fails the calibration.  Reports itself on pr. */
void _gcs_calibrate_overlap_step(gcs_profile *p, int quick, uint64_t size_bytes, gcs_progress *pr);

/* Its expected seconds on pr (0 when it will not fit): for a profile, or for
 * the topology whose caches the profile will get. */
double _gcs_calibrate_overlap_work(const gcs_profile *p, int quick, uint64_t size_bytes);
double _gcs_calibrate_overlap_work_topo(const gcs_topo *t, int quick, uint64_t size_bytes);

/* A collector of its own for a calibration step (gccost.c): one worker to
 * start with, up to max_threads, pinned, no allocation budget, no log.
 * None may run in the process. */
int _gcs_calibrate_gc_init(size_t heap_limit, int max_threads, gcs_err *err);

/* The steal samples' fit (stealfit.c): each sample a pair of marks of one
 * heap, by one worker and by P, whose busy-time growth is fitted as
 *     growth = (P - 1) x worker_ns + steals x steal_ns,
 * both costs >= 0.  A per-steal cost whose 95% interval reaches 0 is 0 (the
 * growth is then the workers'); so is one the data cannot tell from the
 * worker cost (one P and the same steals in every sample). */
typedef struct gcs_steal_fit {
    double worker_ns, steal_ns;
    double worker_se, steal_se; /* standard errors; NaN where not estimable */
    double worker_ci[2], steal_ci[2]; /* 95% intervals with the fit's own degrees of freedom, clipped at 0; NaN: none */
    int n;                      /* samples */
    int steal_resolved;         /* 1: steal_ns is the fit's, its interval clear of 0 */
    const char *note;           /* what steal_ns is, for the details */
} gcs_steal_fit;

void _gcs_calibrate_steal_fit(int n, const double *extra_workers, const double *steals, const double *growth,
                              gcs_steal_fit *f);
json_t *_gcs_calibrate_steal_fit_json(const gcs_steal_fit *f);

/* gc_cost_ns.steal and .worker's intervals from the details' steal_cost_fit
 * (worker_ci95, steal_ci95, as stealfit.c computed them) into p's
 * uncertainty.  Nothing without a fit (one CPU, an older calibration's
 * details). */
void _gcs_calibrate_steal_cost_uncertainty(gcs_profile *p, json_t *details);

/* gc_cost_ns.steal and .worker measured again into p, the other marker
 * costs kept (--key gc_cost_ns.worker), in a collector of its own (none may
 * run); details: the samples and the fit. */
int _gcs_calibrate_steal_cost(int quick, gcs_profile *p, json_t **details, gcs_err *err);

/* The speed probe (gccost.c): the fastest of 11 marks at P = 1 of one
 * cache-resident cost heap, in a collector of its own (none may run). */
int _gcs_calibrate_speed_probe(double *t1_ns, gcs_err *err);
/* A calibration whose probe at its end differs from the one at its start by
 * more than this share is warned about (calibration.speed_probe). */
#define GCS_CALIBRATE_PROBE_DRIFT 0.10

/* g's graph rebuilt in a collector of its own and marked reps times at each
 * P = 1..max_threads, interleaved so that the host's moods fall on every P
 * alike, after a warm-up collection at each: out[P - 1] the median mark
 * time, or with busy the median summed busy time (gcs_gc_stats.t1_ns)
 * (overlap.c).  _gcs_calibrate_timed_mark: the mark time at P = 1. */
int _gcs_calibrate_timed_marks(const gcs_snapshot *g, int reps, int max_threads, int busy, double *out,
                               gcs_err *err);
int _gcs_calibrate_timed_mark(const gcs_snapshot *g, int reps, double *mark_ns, gcs_err *err);

/* A fit of the collector with the model on a heap of `objects` objects
 * marked `reps` times (overlap.c, stream.c, resident.c): into p, details
 * into *details; -1 with err set when it cannot fit. */
typedef int (*_gcs_calibrate_fit_fn)(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err);
/* Runs such a fit as the step `step` of pr, weighing `work`: its details
 * with the step's "seconds", or {"note": "not fitted: the fit failed",
 * "error"} (an optional step: a failure keeps the rest of the profile). */
json_t *_gcs_calibrate_run_fit(gcs_profile *p, gcs_progress *pr, const char *step, double work,
                               _gcs_calibrate_fit_fn fit, uint64_t objects, int reps);
/* The same for a step sized from the profile: objects 0 (the step does not
 * apply, `note` says why) completes the step's `guess` in the plan at once
 * and gives {"note": note}. */
json_t *_gcs_calibrate_run_fit_sized(gcs_profile *p, gcs_progress *pr, const char *step, uint64_t objects,
                                     const char *note, double guess, double work, _gcs_calibrate_fit_fn fit, int reps);

/* The fits' heaps, as snapshots of n 32-byte objects in consecutive slots
 * (the order the collector allocates them in, gcs_gc_build_snapshot), on
 * nnodes memory nodes: a random graph of two pointer fields per object to
 * uniformly random objects from 16 roots (overlap.c), a list allocated in
 * order from one root (stream.c).  NULL with err set on failure. */
gcs_snapshot *_gcs_calibrate_random_graph(uint64_t n, int nnodes, gcs_err *err);
gcs_snapshot *_gcs_calibrate_list_graph(uint64_t n, int nnodes, gcs_err *err);

/* The sequential-line step (stream.c), after the overlap step:
 * gc_stream_line_ns into p from a linked list allocated in order, several
 * times the LLC, timed on the collector and counted with model v2's
 * streamer; details (or why not) under calibration.stream_line; optional,
 * never fails the calibration.  Its expected seconds on pr (0 when it will
 * not fit): for a profile, or for the topology the profile will get. */
void _gcs_calibrate_stream_step(gcs_profile *p, int quick, uint64_t size_bytes, gcs_progress *pr);
/* The fit itself on a list of `objects` nodes, `reps` timed marks: into p
 * (which needs gc_cost_ns, gc_class_cost_ns and caches), details into
 * *details; -1 with err set when it cannot fit (no collector may run). */
int _gcs_calibrate_fit_stream_line(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err);
double _gcs_calibrate_stream_work(const gcs_profile *p, int quick, uint64_t size_bytes);
double _gcs_calibrate_stream_work_topo(const gcs_topo *t, int quick, uint64_t size_bytes);

/* The resident-lines step (resident.c), after the sequential-line step:
 * gc_resident into p from a random graph and a list of one size between
 * the private caches and the effective LLC, both timed on the collector
 * and fitted together; details (or why not) under calibration.resident;
 * optional, never fails the calibration.  Its expected seconds on pr (0
 * when it will not fit). */
void _gcs_calibrate_resident_step(gcs_profile *p, int quick, gcs_progress *pr);
/* The fit itself on heaps of `objects` objects each, `reps` timed marks:
 * into p (which needs gc_cost_ns, gc_class_cost_ns, gc_miss_overlap,
 * caches and the effective LLC's hit latency), details into *details; -1
 * with err set when it cannot fit (no collector may run). */
int _gcs_calibrate_fit_resident(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err);
/* The heaps' object count for p (0 with *note saying why not fitted). */
uint64_t _gcs_calibrate_resident_objects(const gcs_profile *p, const char **note);
double _gcs_calibrate_resident_work(const gcs_profile *p, int quick);
/* Its weight in a plan made before the sweep (the effective LLC unknown). */
double _gcs_calibrate_resident_work_guess(int quick);

/* The residency step (residency.c), after the resident-lines step:
 * gc_residency into p from random graphs of 0.5, 1 and 2 effective LLCs,
 * each timed on the collector and the share of its lines resident found
 * with model v2; details (or why not) under calibration.residency;
 * optional, never fails the calibration. */
void _gcs_calibrate_residency_step(gcs_profile *p, int quick, gcs_progress *pr);
/* The fit itself, `objects` the random graph's objects at one effective LLC
 * and `reps` timed marks per heap: into p (which needs gc_resident,
 * gc_miss_overlap, caches and the effective LLC), details into *details;
 * -1 with err set when it cannot fit (no collector may run). */
int _gcs_calibrate_fit_residency(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err);
double _gcs_calibrate_residency_work(const gcs_profile *p, int quick);
double _gcs_calibrate_residency_work_guess(int quick);

/* The coordination step (coord.c), after the overlap step: gc_coord into p,
 * details (or why not) under calibration.gc_coord; optional, never fails the
 * calibration.  Its expected seconds on pr (0 with one CPU). */
void _gcs_calibrate_coord_step(gcs_profile *p, int quick, gcs_progress *pr);
/* The search law's fit (coord.c) on n samples of x (n x 4: P, P log2 P,
 * P W(R, P), attempts) and y (summed search, ns): value[] the fitted idle_a,
 * idle_b, spread round and steal attempt; a cost below 0 is refitted
 * without (refitted[j] = 1, value[j] its own negative fit, the others from
 * the fit without it).  For the tests. */
int _gcs_calibrate_coord_search_fit(int n, const double *x, const double *y, int max_threads, double value[4],
                                    int refitted[4]);
double _gcs_calibrate_coord_work(int quick);

/* The marker's per-class costs (classcost.c): gc_class_cost_ns into p from a
 * chain and a wide array, cache resident, marked by the running collector
 * at P = 1 (`root` a registered root slot, `all` room for max_objects
 * pointers), and its null_switch from a tree with NULL fields at random,
 * against this run's gc_cost_ns (coef[1] object, coef[2] pointer); details
 * under *details.  -1 with err set when a heap cannot be built or a chain
 * or element cost comes out not positive (a NULL cost that cannot be
 * measured only leaves null_switch out, with the reason in the details). */
int _gcs_calibrate_class_costs(int reps, const double *coef, void **root, void **all, long max_objects,
                               gcs_profile *p, json_t **details, gcs_err *err);
/* The NULL-switch heap of n objects in the running collector under *root
 * (classcost.c, `all` room for n pointers): its non-NULL fields, NULL
 * fields and the switches of the marker's NULL test, counted as it is
 * built; 0, or -1 when the heap is exhausted.  (The tests check the count
 * against the slow predictor's replay of the same heap.) */
int _gcs_calibrate_null_heap(long n, void **root, void **all, long *edges, long *nulls, long *switches);
/* Least-squares line y = fixed + slope x through n >= 2 points, and its rms
 * relative residual; -1 when the x are all equal. */
int _gcs_calibrate_class_slope(int n, const double *x, const double *y, double *slope, double *fixed,
                               double *rms_rel);
/* The line-transfer step (sharing.c), after the coordination step:
 * gc_line_transfer_ns into p, details (or why not) under
 * calibration.line_transfer; optional, never fails the calibration.  Its
 * expected seconds on pr (0 with fewer than two CPUs in p; p NULL: before
 * the profile exists, taken as two CPUs). */
void _gcs_calibrate_line_transfer_step(gcs_profile *p, int quick, gcs_progress *pr);
/* gc_mark_transfer_ns (marktable.c): a mark-table line passing between two
 * workers, over the steal simulation's count; after gc_coord.  The cached
 * step: gc_mark_transfer_cached_ns, the same on a heap the private cache
 * holds whole; after the first (each half of the work below). */
void _gcs_calibrate_mark_transfer_step(gcs_profile *p, int quick, gcs_progress *pr);
void _gcs_calibrate_mark_transfer_cached_step(gcs_profile *p, int quick, gcs_progress *pr);
double _gcs_calibrate_mark_transfer_work(int quick);
double _gcs_calibrate_line_transfer_work(const gcs_profile *p, int quick);
/* The dependent-load step (dependent.c), after the line-transfer step:
 * dependent_load_ns into p, details (or why not) under
 * calibration.dependent_load; optional, never fails the calibration.  Its
 * expected seconds on pr (p NULL: before the sweep, at its smallest top). */
void _gcs_calibrate_dependent_load_step(gcs_profile *p, int quick, gcs_progress *pr);
double _gcs_calibrate_dependent_load_work(const gcs_profile *p, int quick);

/* The marker's cost fit (costfit.c): T1 = c0 + c_obj * objects + c_ptr *
 * pointers by least squares with rows weighted by 1/T1, and what it is
 * worth.  coef, se and ci95 are indexed 0 = c0 (fixed), 1 = object,
 * 2 = pointer, in ns. */
typedef struct gcs_cost_fit {
    int n, dof;                 /* points; n - 3 */
    double coef[3];
    double se[3];               /* standard errors (infinite when dof = 0) */
    double ci95[3][2];          /* coef -/+ t(0.975, dof) * se */
    double rms_rel;             /* rms of (fitted - T1) / T1 */
    double cond;                /* weighted design, unit-length columns */
    double corr_object_pointer; /* correlation of the c_obj and c_ptr estimates */
} gcs_cost_fit;

/* A fit is usable when both costs are positive, its condition number is at
 * most GCS_COST_COND_MAX, each cost's 95% interval is within
 * +-GCS_COST_CI_MAX_REL of a tree node's cost (c_obj + c_ptr: one object,
 * one pointer) and its rms relative residual is at most GCS_COST_RMS_MAX
 * (docs/microbench.md, "Marker costs", for how the bounds were chosen).  A
 * condition number of GCS_COST_COND_SINGULAR means the columns are
 * proportional (or one is zero). */
#define GCS_COST_COND_MAX 30
#define GCS_COST_CI_MAX_REL 0.2
#define GCS_COST_RMS_MAX 0.15
#define GCS_COST_COND_SINGULAR 1e16

/* The cost heaps' objects and pointers (gccost.c), as gcs_calibrate_gc_costs
 * measures them (quick and full alike), up to max points: what the fit's
 * conditioning depends on.  Returns the number of points. */
int _gcs_calibrate_cost_design(double *objects, double *pointers, int max);
int _gcs_calibrate_cost_fit(int n, const double *objects, const double *pointers, const double *t1_ns,
                            gcs_cost_fit *fit, gcs_err *err);
/* 1 when both costs are positive. */
int _gcs_calibrate_cost_fit_physical(const gcs_cost_fit *fit);
/* NULL when the fit is usable, else what is wrong with it, in buf. */
const char *_gcs_calibrate_cost_fit_problem(const gcs_cost_fit *fit, char *buf, size_t len);
/* {"fixed" | "gc_cost_ns.object" | "gc_cost_ns.pointer": {"stderr", "ci95":
 * [lo, hi], "residual_rms_rel", "n"}}, non-finite figures as null. */
json_t *_gcs_calibrate_cost_fit_uncertainty(const gcs_cost_fit *fit);

/* ---- the calibration run itself: calibrate.c, memory.c, details.c,
 * gcsteps.c ---- */

/* The run's plan, quick or full (gcs_calibrate_run fills it in
 * calibrate.c; memory.c measures by it). */
typedef struct _gcs_calibrate_plan {
    int reps;                 /* latency repetitions */
    uint64_t steps;           /* latency steps per repetition (0 = auto) */
    int sweep_reps, sweep_fine;
    int occ_reps;
    const int *chains;
    int nchains;
    int bw_reps;
    int variant_rw;           /* also measure RW with the other page size */
    int fr_reps;              /* full-random latency repetitions */
    uint64_t fr_steps;        /* and steps per repetition (0 = auto) */
    /* Progress weights: each step's seconds as measured on the 2-vCPU
     * development VM with a 1 GiB buffer (calibration.steps), so that the
     * progress line's percentage and time left follow the clock.  The
     * buffer weights scale with the buffer's size. */
    double w_buffer;          /* allocate and fault a huge-page buffer, per GiB */
    double w_buffer_4k;       /* the same with 4 KiB pages, and link it, per GiB */
    double w_sweep;
    double w_latency;         /* one latency measurement (one pair, read or RW) */
    double w_occupancy;       /* one access's load points and fits */
    double w_bandwidth;
    double w_gc;
    double w_link_random;     /* link a buffer into one random cycle, per GiB */
    double w_full_random;     /* one full-random latency measurement (one pair) */
} _gcs_calibrate_plan;

/* One calibration run's state (gcs_calibrate_run, calibrate.c), passed to
 * the memory measurements and the details' bookkeeping. */
typedef struct _gcs_calibrate_ctx {
    const gcs_calibrate_opts *opts;
    _gcs_calibrate_plan pl;
    gcs_topo *t;
    int synthetic;
    gcs_progress own_pr, *pr; /* pr: own_pr, or the caller's (opts->progress) */
    json_t *cal;              /* extra["calibration"] */
    json_t *warnings, *steps;
    gcs_counters_info counters;
    int count_llc;
    int all_bound;
} _gcs_calibrate_ctx;

/* One memory node's measurements (memory.c): buffer (and on node 0 the
 * sweep), latency from every CPU node, occupancy, bandwidth, latency with
 * page walks, and with thp the other page size; into p and c->cal. */
int _gcs_calibrate_measure_node(_gcs_calibrate_ctx *c, gcs_profile *p, int m, uint64_t size, gcs_huge primary,
                                int thp, int real_cpus, gcs_err *err);

/* The marker's costs (gcs_calibrate_gc_costs) with their physical bounds,
 * their uncertainty and gc_steals.a's, details under cal's gc_costs
 * (gcsteps.c); warnings NULL: none kept (--gc-only). */
int _gcs_calibrate_gc_costs_checked(int quick, gcs_profile *p, json_t *cal, json_t *warnings, gcs_err *err);

/* The details' bookkeeping (details.c).  A number for the details: null
 * where it is not finite (JSON has no NaN or infinity). */
json_t *_gcs_calibrate_num(double v);
/* A warning into c's calibration.warnings, once (NULL or "": none). */
void _gcs_calibrate_add_warning(_gcs_calibrate_ctx *c, const char *w);
/* A step of c's progress series: begin announces it and gives its start,
 * end completes its work and records its seconds in calibration.steps. */
uint64_t _gcs_calibrate_step_begin(_gcs_calibrate_ctx *c, const char *name, double work);
void _gcs_calibrate_step_end(_gcs_calibrate_ctx *c, const char *name, double work, uint64_t t0);
/* calibration.bounds.<constant> = status ("ok", "unchecked: why",
 * "unreliable"). */
void _gcs_calibrate_record_bound(json_t *cal, const char *constant, const char *status);
/* Every copy of the warning `old` out of cal's warnings. */
void _gcs_calibrate_drop_warning(json_t *cal, json_t *old);
/* The speed probe's mark now (NaN when it cannot run), and the two marks
 * of a run, `seconds` apart, into calibration.speed_probe (with a warning
 * when they differ by more than GCS_CALIBRATE_PROBE_DRIFT). */
double _gcs_calibrate_probe(void);
void _gcs_calibrate_record_probe(gcs_profile *p, double start_ns, double end_ns, double seconds);

#endif
