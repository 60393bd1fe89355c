/* profile.h -- the machine profile (prefix gcs_profile_).
 *
 * Owns the in-memory form of the machine profile and its JSON form (format
 * "gcscale-machine", version 1, described in docs/machine-profile.md):
 * loading with strict validation, saving (crash-safe), and printing as tables.
 * Written by calibrate, read by the model, predict and the adaptive collector.
 * Calls only common.h.
 */
#ifndef GCSCALE_PROFILE_H
#define GCSCALE_PROFILE_H

#include <stdint.h>
#include <jansson.h>
#include "gcscale/common.h"

#define GCS_PROFILE_FORMAT "gcscale-machine"
#define GCS_PROFILE_VERSION 1

/* Points of the dependent-load curve (a latency sweep's). */
#define GCS_PROFILE_DEPENDENT_MAX 96
/* Points of the residency curve (gc_residency). */
#define GCS_PROFILE_RESIDENCY_MAX 8

typedef struct gcs_profile_node {
    int id;               /* memory/CPU node number (hwloc logical index) */
    int ncpus;
    int *cpus;            /* OS CPU numbers of the node */
    uint64_t mem_bytes;   /* memory attached to the node, 0 if unknown */
} gcs_profile_node;

typedef struct gcs_profile_cache {
    int level;            /* 1, 2, 3, ... */
    char type[16];        /* "data", "unified" or "instruction" */
    uint64_t size_bytes;
    int line_bytes;
    int ways;             /* associativity; 0 = fully associative/unknown */
    int ncpus;
    int *cpus;            /* OS CPU numbers sharing this cache instance */
} gcs_profile_cache;

/* Memory access request classes.  Plain reads and atomic read-modify-writes
 * (what a marker does when it sets a mark bit) have separate costs. */
typedef enum gcs_access { GCS_ACCESS_READ = 0, GCS_ACCESS_RW = 1 } gcs_access;
#define GCS_ACCESS_COUNT 2

/* Page sizes of the latency with page walks ("4k" and "huge" in JSON). */
typedef enum gcs_pages { GCS_PAGES_4K = 0, GCS_PAGES_HUGE = 1 } gcs_pages;
#define GCS_PAGES_COUNT 2

/* "gc_coord" (ns, per worker; P workers):
 *   wake(P)   = wake_a + wake_b (P - 1)    start signal until the worker runs (P >= 1)
 *   tail(P)   = tail_a + tail_b log2 P     the worker's exit until the mark ends (P >= 1)
 *   idle(P)   = idle_a + idle_b log2 P     looking for work beyond the steal attempts,
 *                                          every worker holding a root (P >= 2): the
 *                                          termination protocol and the end's starvation
 *   spread_ns                              one doubling round of the initial spread of
 *                                          work from fewer roots than workers
 *   attempt_ns                             one steal attempt
 *   attempts_per_search                    steal attempts (entries taken) per search
 *                                          that found work, on the same heaps: a
 *                                          search's price is attempt_ns times this
 *                                          (model/coord.c, for a simulated count of
 *                                          searches); 0: not measured (profiles
 *                                          before 2026-11-29, twelfth session)
 * max_threads is the largest P measured: beyond it the laws extrapolate. */
typedef struct gcs_profile_coord {
    double wake_a, wake_b, tail_a, tail_b, idle_a, idle_b, spread_ns, attempt_ns;
    double attempts_per_search;
    int max_threads;
} gcs_profile_coord;

typedef struct gcs_profile {
    char host[256];
    char created[64];       /* ISO-8601 */
    char tool_version[64];

    int nnodes;
    gcs_profile_node *nodes;
    int ncaches;
    gcs_profile_cache *caches;

    /* latency_ns[access][cpu_node * nnodes + mem_node]: idle round-trip
     * (median) of one request from a CPU of cpu_node to memory of mem_node. */
    double *latency_ns[GCS_ACCESS_COUNT];
    /* occupancy_ns[access][mem_node]: service time S_O of one request at the
     * memory node under contention. */
    double *occupancy_ns[GCS_ACCESS_COUNT];
    double *bandwidth_gbs;  /* per memory node; NULL when not measured */

    /* Marker costs, filled by calibrate once the collector exists. */
    int has_gc_cost;
    double gc_cost_object_ns, gc_cost_pointer_ns, gc_cost_steal_ns;
    /* What one more worker adds to the summed busy time whatever it steals
     * ("gc_cost_ns": {"worker"}).  Calibrate fits it beside the steal cost
     * (busy growth = (P - 1) worker + steals x steal) since 2026-11-29; a
     * profile without it has a steal cost measured as growth / steals,
     * which holds both (docs/model.md, "Steal work: per worker and per
     * steal"). */
    int has_gc_cost_worker;
    double gc_cost_worker_ns;
    /* The collector's steal count fitted by calibrate ("gc_steals": {"a", "b"}):
     * N_S = (P - 1) (a ln(T1 / 1 ns) + b).  Absent: the paper's P ln T1. */
    int has_gc_steals;
    double gc_steal_a, gc_steal_b;
    /* How many misses the collector's marker overlaps, fitted by calibrate
     * ("gc_miss_overlap": a number >= 1; docs/model.md).  Absent: not fitted. */
    int has_gc_overlap;
    double gc_miss_overlap;
    /* Per-class marker costs (model v2, docs/model.md "Serial work"), fitted
     * by calibrate on dedicated cache-resident heaps ("gc_class_cost_ns":
     * {"chain", "array_element"}): one step along a chain (an object of one
     * pointer field followed directly, gc/mark.c's chain shortcut) and one
     * element of a large pointer array examined in place (its pointer-free
     * child marked unread).  Absent: such objects are priced as any other,
     * gc_cost_ns.object + .pointer. */
    int has_gc_class_cost;
    double gc_cost_chain_ns, gc_cost_array_element_ns;
    /* The cost of a NULL test the branch predictor misses (2026-11-27;
     * optional member "null_switch" of "gc_class_cost_ns", >= 0): a pointer
     * field whose NULL-or-not differs from the field tested before it at
     * the same place of the mark loop, measured on cache-resident heaps whose
     * extra fields are NULL at random, beyond what gc_cost_ns prices (its
     * heaps have no NULL field).  Absent: such switches are free. */
    int has_gc_null_switch;
    double gc_cost_null_switch_ns;
    /* What one line of a sequential run costs the marker beyond its objects'
     * costs (2026-11-27; optional key "gc_stream_line_ns", > 0): fitted by
     * calibrate on a linked list allocated in order, several times the LLC,
     * with model v2's streamer (calibrate/stream.c).  Absent: model v2
     * prices such a line as any streamed one, min(S_O, M1). */
    int has_gc_stream_line;
    double gc_stream_line_ns;
    /* What the marker's misses cost when the heap fits the effective LLC
     * (2026-11-28; optional key "gc_resident": {"miss_overlap" >= 1,
     * "stream_line_ns" > 0}), fitted together by calibrate on a random
     * graph and a list of the same size between the private caches and
     * the effective LLC (calibrate/resident.c): a non-streamed miss to a
     * resident line costs llc_hit_ns / miss_overlap, a streamed one
     * stream_line_ns.  Absent: model v2 prices every miss as from memory
     * (gc_miss_overlap, gc_stream_line_ns) unless asked for residency. */
    int has_gc_resident;
    double gc_resident_overlap, gc_resident_stream_ns;
    /* How much of a heap is in the LLC when a mark starts, by its size
     * (2026-11-29, fourteenth session; optional key "gc_residency":
     * {"footprint_llc": [...], "resident": [...]}, 1 to
     * GCS_PROFILE_RESIDENCY_MAX points): at a footprint of footprint_llc[i]
     * times the effective LLC, the share resident[i] of its lines, measured
     * by calibrate with the collector on random graphs that it marks again
     * and again (calibrate/residency.c).  Footprints > 0 and increasing,
     * shares in [0, 1] and not increasing.  nresidency 0: absent, and model
     * v2 takes min(1, effective LLC / footprint). */
    int nresidency;
    double residency_footprint[GCS_PROFILE_RESIDENCY_MAX], residency_resident[GCS_PROFILE_RESIDENCY_MAX];
    /* The effective last-level cache, derived by calibrate from its latency
     * sweep (optional keys "llc_effective_bytes" and "llc_hit_ns"; both or
     * neither): the working set at which the sweep's latency is halfway
     * from the last cache plateau to memory, and that plateau's latency.
     * Absent: gcs_profile_llc_effective derives them from the calibration
     * details, or falls back on the nominal size. */
    int has_llc_effective;
    double llc_effective_bytes, llc_hit_ns;
    /* Coordination costs of the parallel mark, per worker, measured with the
     * collector by calibrate (optional key "gc_coord", calibrate/coord.c,
     * docs/model.md "Coordination").  Absent: the model has no coordination
     * terms. */
    int has_gc_coord;
    gcs_profile_coord coord;
    /* What a cache line the marker touches costs when another worker touched
     * it last, over the same line touched by one worker alone (ns; optional
     * key "gc_line_transfer_ns", measured by calibrate's two-thread line
     * microbench, calibrate/sharing.c; docs/model.md "Extra work in
     * parallel").  Absent: the model has no shared-line term. */
    int has_gc_line_transfer;
    double gc_line_transfer_ns;
    /* What one mark-table line that the steal simulation sees change hands
     * between two workers adds to their summed busy time (ns; optional key
     * "gc_mark_transfer_ns", 2026-11-29: calibrate marks a random graph whose
     * table fits the private caches at P = 1 and 2 and divides the busy
     * time's growth by the simulation's transfers on it,
     * calibrate/marktable.c; docs/model.md "Mark-table lines").  Absent:
     * model v2 prices no mark-table transfers. */
    int has_gc_mark_transfer;
    double gc_mark_transfer_ns;
    /* The same where the whole heap fits one worker's private caches (ns;
     * optional key "gc_mark_transfer_cached_ns", 2026-11-29, thirteenth
     * session): calibrate's random graph of half the private cache.  There
     * nothing else is in flight to hide a transfer behind, and it costs two
     * to three times the price above (docs/model.md, "Mark-table lines where
     * the heap fits").  Absent: every heap at gc_mark_transfer_ns. */
    int has_gc_mark_transfer_cached;
    double gc_mark_transfer_cached_ns;
    /* What a dependent load costs by working set on 4 KiB pages, the
     * collector's (2026-11-28; optional key "dependent_load_ns":
     * {"size_bytes": [...], "ns": [...]}, 1 to GCS_PROFILE_DEPENDENT_MAX
     * points, sizes increasing): the median latency of a uniformly random
     * chase over that many bytes, page walks included (calibrate/
     * dependent.c).  ndependent_load 0: absent, and a chain's next object
     * costs the miss latency residency gives (model/serial.c). */
    int ndependent_load;
    double dependent_load_bytes[GCS_PROFILE_DEPENDENT_MAX], dependent_load_ns[GCS_PROFILE_DEPENDENT_MAX];

    /* Latency with page walks (optional keys "latency_full_random_ns" and
     * "page_walk_ns"): full_random_ns[pages][cpu_node * nnodes + mem_node]
     * is the median read latency of a dependent chase over one uniformly
     * random cycle through the whole calibration buffer, with 4 KiB or huge
     * pages, so that nearly every step pays a TLB miss (latency_ns is
     * TLB-local).  NULL when not measured; full_random_note[pages] then
     * says why ("" in a profile without the keys).  The page-walk cost is
     * derived, never stored apart: gcs_profile_page_walk. */
    double *full_random_ns[GCS_PAGES_COUNT];
    char full_random_note[GCS_PAGES_COUNT][256];

    char counters_source[16];   /* "papi" or "none" */
    char counters_reason[256];

    /* Any other keys of the document (measurement details, fits, sweeps):
     * kept on load and written back on save.  May be NULL. */
    json_t *extra;
} gcs_profile;

/* Allocates a profile for nnodes nodes with zeroed matrices. */
GCS_API gcs_profile *gcs_profile_new(int nnodes);
GCS_API void gcs_profile_free(gcs_profile *p);
/* The CPUs the profile's nodes list, summed (0 for a profile without any). */
GCS_API int gcs_profile_cpus(const gcs_profile *p);

/* Appends a copy of *cache (its cpus array copied too).  0, or -1 when out
 * of memory (the profile is unchanged). */
GCS_API int gcs_profile_add_cache(gcs_profile *p, const gcs_profile_cache *cache);

/* Where this machine's profile is (formats/profile_path.c, docs/machine-profile.md
 * "Where profiles live"): $GCSCALE_MACHINE (reading only), else
 * data/machines/HOSTNAME.json under the working directory when it is there
 * (reading) or data/machines/ exists (writing), else the per-user
 * $XDG_DATA_HOME/gcscale/machines/HOSTNAME.json (created for writing).
 * Reading fails with one line saying where it looked when no file is
 * there.  0, or -1 with err set. */
GCS_API int gcs_profile_default_path(char *out, size_t n, int for_writing, gcs_err *err);
/* A profile named by path, or by bare name ("o2k"): data/machines/NAME.json,
 * the per-user directory, then the installed reference profiles
 * (PREFIX/share/gcscale/machines).  0, or -1 with err set. */
GCS_API int gcs_profile_find(const char *name, char *out, size_t n, gcs_err *err);

GCS_API double gcs_profile_latency(const gcs_profile *p, gcs_access a, int cpu_node, int mem_node);

/* The full-random latency of a pair (ns), NaN when not measured or out of
 * range. */
GCS_API double gcs_profile_full_random_latency(const gcs_profile *p, gcs_pages pages, int cpu_node,
                                               int mem_node);
/* The page-walk cost of a pair: full-random latency minus the TLB-local read
 * latency M1 (latency_ns.read), at least 0 (a noisy difference below 0 is no
 * walk at all); NaN when not measured.  What a miss on a heap beyond the
 * TLB's reach costs on top of M1. */
GCS_API double gcs_profile_page_walk(const gcs_profile *p, gcs_pages pages, int cpu_node,
                                     int mem_node);
/* "4k" or "huge". */
GCS_API const char *gcs_profile_pages_name(gcs_pages pages);
/* The dependent-load latency at a working set of `bytes` (ns): the
 * profile's dependent_load_ns curve interpolated linearly in log(size),
 * its end points beyond its ends; NaN without the curve. */
GCS_API double gcs_profile_dependent_load(const gcs_profile *p, double bytes);
/* The share of a heap's lines in the LLC when a mark starts, for a footprint
 * of footprint_llc times the effective LLC: the profile's gc_residency
 * curve, straight from (0, 1) through its points and flat beyond the last;
 * NaN where the profile has none. */
GCS_API double gcs_profile_residency(const gcs_profile *p, double footprint_llc);
/* Sets the curve from n points (sizes > 0 and increasing, latencies > 0
 * and finite, 1 <= n <= GCS_PROFILE_DEPENDENT_MAX): 0, or -1 with err set
 * and the profile unchanged. */
GCS_API int gcs_profile_set_dependent_load(gcs_profile *p, const double *bytes, const double *ns, int n,
                                           gcs_err *err);
/* Allocates full_random_ns[pages] (zeros, to be filled for every pair):
 * 0, or -1 when out of memory. */
GCS_API int gcs_profile_alloc_full_random(gcs_profile *p, gcs_pages pages);

/* The size of instance `i` of p->caches as the model takes it: hwloc's,
 * except for the last level where it is listed for fewer CPUs than its
 * node has while the latency sweep shows it cannot be what it claims
 * (nominally more than twice the effective LLC): a virtual machine showing
 * its host's cache to each vCPU, which the model takes at the measured
 * effective size, still private (docs/model.md, "A last level listed per
 * CPU"). */
GCS_API uint64_t gcs_profile_cache_bytes(const gcs_profile *p, int i);

/* Where the effective LLC figures come from (gcs_profile_llc_effective). */
typedef enum gcs_llc_source {
    GCS_LLC_NONE = 0,    /* no cache known at all */
    GCS_LLC_NOMINAL,     /* hwloc's largest cache size; no hit latency (NaN) */
    GCS_LLC_SWEEP,       /* derived now from calibration.sweep (a profile older than the keys) */
    GCS_LLC_PROFILE,     /* the profile's llc_effective_bytes and llc_hit_ns */
} gcs_llc_source;

/* The effective LLC from a latency-vs-working-set sweep (sizes ascending,
 * median latency in ns; the largest size beyond every cache): the size where
 * latency crosses halfway from the last cache plateau to memory, interpolated
 * in log(size), and the plateau's latency (at half that size).  -1 when the
 * sweep shows no cache plateau below half the memory latency. */
GCS_API int gcs_profile_llc_from_sweep(const double *size, const double *lat, int n, double *llc_bytes,
                                       double *hit_ns);
/* The profile's effective LLC: its keys, else derived from the calibration
 * details' sweep, else the nominal size (hit_ns NaN). */
GCS_API gcs_llc_source gcs_profile_llc_effective(const gcs_profile *p, double *llc_bytes, double *hit_ns);
/* "llc_effective_bytes", "calibration.sweep", "nominal" or "none". */
GCS_API const char *gcs_llc_source_name(gcs_llc_source s);

/* The profile's extra "calibration" object (measurement details), created
 * empty when the profile has none.  Borrowed reference. */
GCS_API json_t *gcs_profile_calibration(gcs_profile *p);

/* ---- the uncertainty and reliability of fitted constants ----------------
 *
 * Two optional top-level objects of the document, keyed by the constant's
 * name: its key in the profile, with indexes as in error messages
 * ("occupancy_ns.read[0]", "latency_ns.rw[0][1]", "gc_cost_ns.object",
 * "gc_steals.a"; docs/machine-profile.md):
 *   "uncertainty": {NAME: {"stderr", "ci95": [lo, hi], "residual_rms_rel", "n", ...}}
 *   "unreliable":  {NAME: "reason"}
 * Both are held in p->extra (so they survive a load and save unchanged)
 * and checked by gcs_profile_validate.  A constant marked unreliable is
 * still a valid number (never a silent 0): the reason says what it is. */
typedef struct gcs_profile_uncertainty {
    double std_error;         /* "stderr", the constant's unit; NaN = absent */
    double ci95_lo, ci95_hi;  /* "ci95": 95% confidence interval; NaN = absent */
    double residual_rms_rel;  /* the fit's rms relative residual; NaN = absent */
    int n;                    /* points or samples behind it; -1 = absent */
} gcs_profile_uncertainty;

/* All fields absent. */
GCS_API void gcs_profile_uncertainty_init(gcs_profile_uncertainty *u);
/* Records (replaces) the uncertainty of constant.  0, or -1 out of memory. */
GCS_API int gcs_profile_set_uncertainty(gcs_profile *p, const char *constant,
                                        const gcs_profile_uncertainty *u);
/* 1 and *u filled when the profile has an uncertainty for constant, else 0
 * (*u all absent). */
GCS_API int gcs_profile_get_uncertainty(const gcs_profile *p, const char *constant,
                                        gcs_profile_uncertainty *u);
/* Marks constant unreliable, with reason (one line).  0, or -1. */
GCS_API int gcs_profile_set_unreliable(gcs_profile *p, const char *constant, const char *reason);
/* The reason constant is unreliable, or NULL when it is not marked.  The
 * string belongs to the profile. */
GCS_API const char *gcs_profile_unreliable(const gcs_profile *p, const char *constant);
/* The i-th constant marked unreliable (0-based, in the document's order):
 * 0 with *constant and *reason set (borrowed), -1 past the last. */
GCS_API int gcs_profile_unreliable_at(const gcs_profile *p, int i, const char **constant,
                                      const char **reason);
/* Drops both entries of every constant whose name starts with prefix (""
 * drops all): before a constant is measured again. */
GCS_API void gcs_profile_clear_fit_quality(gcs_profile *p, const char *prefix);

/* Parse and validate.  Errors name the offending key, e.g.
 * "latency_ns.read: expected 2 rows (one per node), found 1". */
GCS_API gcs_profile *gcs_profile_from_json(const json_t *doc, gcs_err *err);
GCS_API gcs_profile *gcs_profile_load(const char *path, gcs_err *err);
/* Checks an in-memory profile with the same rules as loading. */
GCS_API int gcs_profile_validate(const gcs_profile *p, gcs_err *err);
/* The rules for `nodes` alone (ids, CPU lists, no CPU in two nodes): for
 * checking a layout taken from the topology before anything is measured. */
GCS_API int gcs_profile_check_nodes(const gcs_profile *p, gcs_err *err);

GCS_API json_t *gcs_profile_to_json(const gcs_profile *p);            /* new reference */
GCS_API int gcs_profile_save(const gcs_profile *p, const char *path, gcs_err *err);

/* Prints the profile as tables (nodes, caches, latency, latency with page
 * walks when measured, occupancy, bandwidth, gc costs, counters); GCS_FORMAT_JSON prints the document. */
GCS_API void gcs_profile_print(const gcs_profile *p, FILE *fp, gcs_format fmt);
/* The profile's tables one at a time, as plain CSV (a header and rows, no
 * "# " lines): the names, in print order, are gcs_profile_table_name(0),
 * (1), ... until NULL (nodes, caches, latency_read, latency_rw, page_walks,
 * per_node, gc_costs, counters, unreliable).  -1 for an unknown name or a
 * table the profile does not have. */
GCS_API const char *gcs_profile_table_name(int i);
GCS_API int gcs_profile_print_csv_table(const gcs_profile *p, FILE *fp, const char *name, gcs_err *err);

#endif
