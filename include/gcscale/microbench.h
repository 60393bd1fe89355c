/* microbench.h -- memory-system microbenchmarks (prefixes gcs_chase_,
 * gcs_occ_, gcs_bw_, gcs_counters_).
 *
 * Owns: pointer-chase buffers (a random single cycle through every cache
 * line, randomized within TLB-sized groups of pages), the idle read and
 * atomic read-modify-write latency chases, the latency-vs-working-set sweep,
 * occupancy load points (threads x independent chains on one memory node),
 * the read bandwidth of a node, and LLC-miss counting through PAPI.
 * Calls common.h, topology.h, libnuma and PAPI.  The occupancy *fit* is not
 * here: callers pass gcs_occ_result.points (gcs_occ_point, defined here) to
 * calibrate's occfit.h.
 *
 * Every measurement takes a CPU (or CPU node), a memory node, a size, a
 * repetition count and a huge-page mode; -1 for a CPU/node means "do not pin
 * / do not bind".  Runs that cannot pin or bind on this system (synthetic
 * topology) still measure, unpinned/unbound, and say so in their warning.
 */
#ifndef GCSCALE_MICROBENCH_H
#define GCSCALE_MICROBENCH_H

#include <stddef.h>
#include <stdint.h>
#include "gcscale/common.h"
#include "gcscale/topology.h"

#define GCS_LINE_BYTES 64
/* Lines of a randomization group: 32 pages of 4 KiB, half of their lines
 * (see gcs_chase_build). */
#define GCS_CHASE_GROUP_PAGES 32

/* Transparent huge pages for a buffer. */
typedef enum gcs_huge {
    GCS_HUGE_DEFAULT = 0, /* no madvise: the system's policy */
    GCS_HUGE_OFF = 1,     /* MADV_NOHUGEPAGE */
    GCS_HUGE_ON = 2,      /* MADV_HUGEPAGE, 2 MiB-aligned buffer */
} gcs_huge;

GCS_API const char *gcs_chase_huge_name(gcs_huge h); /* "default", "off", "on" */
/* 1 when /sys/kernel/mm/transparent_hugepage/enabled is "always" or
 * "madvise" (so MADV_HUGEPAGE can take effect); mode gets the bracketed word. */
GCS_API int gcs_chase_thp_available(char *mode, size_t mode_len);

/* ---- chase buffers ---------------------------------------------------------- */

typedef struct gcs_chase_buf gcs_chase_buf;

typedef struct gcs_chase_buf_info {
    uint64_t size_bytes;    /* mapped and touched */
    uint64_t cycle_bytes;   /* covered by the current cycle */
    uint64_t cycle_lines;
    gcs_huge huge;
    uint64_t huge_bytes;    /* AnonHugePages of the mapping (/proc/self/smaps) */
    int mem_node;           /* -1 = not bound */
    int bound;              /* 1 when the binding was honoured */
    double on_node_fraction;/* sampled pages found on mem_node; -1 unknown */
    double alloc_s;         /* mmap + bind + first touch */
    double build_s;         /* last gcs_chase_build or gcs_chase_build_random */
    int full_random;        /* 1 when the cycle is gcs_chase_build_random's (no TLB locality) */
    char warning[512];      /* binding/placement problems, "" if none */
} gcs_chase_buf_info;

/* 0 when a buffer of size_bytes can be made here: at least 4 KiB and at
 * most 3/4 of physical memory; else -1 with a one-line reason. */
GCS_API int gcs_chase_check_size(uint64_t size_bytes, gcs_err *err);

/* Maps size_bytes (rounded up to whole lines), applies the huge-page mode,
 * binds it to mem_node (-1: first touch by the calling thread), touches
 * every page and checks placement.  Sizes as gcs_chase_check_size. */
GCS_API gcs_chase_buf *gcs_chase_buf_new(const gcs_topo *t, uint64_t size_bytes, int mem_node,
                                 gcs_huge huge, gcs_err *err);
GCS_API void gcs_chase_buf_free(gcs_chase_buf *b);
GCS_API const gcs_chase_buf_info *gcs_chase_buf_info_get(const gcs_chase_buf *b);
GCS_API void *gcs_chase_buf_data(const gcs_chase_buf *b);

/* Links the first cycle_bytes of the buffer (0 = all of it) into one random
 * cycle over its lines.  Lines are split into groups: a group is the even
 * (or the odd) lines of one block of GCS_CHASE_GROUP_PAGES pages.  The cycle
 * visits groups in random order and all lines of a group, in random order,
 * before leaving it: the pages of a group fit the L1 TLB, so a step costs a
 * memory access and not a page walk, and the two lines of a 128-byte pair
 * (which the adjacent-line prefetcher fetches together) are never visited
 * close together.  Each line's first word points to the next line. */
GCS_API int gcs_chase_build(gcs_chase_buf *b, uint64_t cycle_bytes, uint64_t seed, gcs_err *err);

/* One uniformly random cycle over all the lines, without the TLB-sized
 * groups or the even/odd split: nearly every step lands on another page
 * than the last and, beyond the TLB's reach, pays a page walk.  The
 * chase over it measures the latency a marker sees on a random heap larger
 * than the TLB covers; its excess over the grouped chase is the page walk's
 * cost (docs/microbench.md, "Latency with page walks").  Linking 1 GiB
 * takes a second or two: each write lands on a random line. */
GCS_API int gcs_chase_build_random(gcs_chase_buf *b, uint64_t cycle_bytes, uint64_t seed,
                                   gcs_err *err);

/* The same linking on plain memory (for tests): nlines lines of
 * GCS_LINE_BYTES at `lines`, groups of group_lines lines of one parity. */
GCS_API void gcs_chase_link(void *lines, size_t nlines, size_t group_lines, uint64_t seed);

/* ---- idle latency ------------------------------------------------------------ */

typedef struct gcs_chase_params {
    int rw;            /* 0: plain loads; 1: each step an atomic fetch_or on the
                        * word holding the next pointer (a marker setting a bit) */
    int reps;          /* >= 1 */
    uint64_t steps;    /* steps per repetition; 0 = automatic */
    int count_llc;     /* measure LLC misses per step when counters work */
} gcs_chase_params;

typedef struct gcs_chase_result {
    double median_ns, p10_ns, p90_ns, min_ns, max_ns; /* ns per step over reps */
    int reps;
    uint64_t steps_per_rep;
    double llc_misses_per_step;  /* NaN when not counted */
    double seconds;              /* wall time of the measurement */
} gcs_chase_result;

/* Chases a built buffer in the calling thread (pin it first).  One warm-up
 * repetition is not counted.  Successive calls continue along the cycle, so
 * no step revisits a line touched in the last cycle_bytes of steps. */
GCS_API int gcs_chase_measure(gcs_chase_buf *b, const gcs_chase_params *prm, gcs_chase_result *r,
                      gcs_err *err);

/* Everything in one call: a thread pinned to cpu (or cpu_node), a buffer of
 * size_bytes on mem_node, built and chased.  warn gets pin/bind problems. */
typedef struct gcs_chase_opts {
    int cpu, cpu_node, mem_node;   /* -1 = any */
    uint64_t size_bytes;
    gcs_huge huge;
    gcs_chase_params prm;
    uint64_t seed;
} gcs_chase_opts;

GCS_API int gcs_chase_run(const gcs_topo *t, const gcs_chase_opts *o, gcs_chase_result *r,
                  gcs_chase_buf_info *info, char *warn, size_t warn_len, gcs_err *err);

/* Latency-vs-working-set sweep on one buffer (rebuilt for each size): sizes
 * from min_bytes doubling (with a 1.5x point in between when fine) up to the
 * buffer size.  Runs in the calling thread. */
typedef struct gcs_chase_sweep_point {
    uint64_t size_bytes;
    double median_ns, p10_ns, p90_ns;
} gcs_chase_sweep_point;

#define GCS_SWEEP_MAX_POINTS 96
GCS_API int gcs_chase_sweep(gcs_chase_buf *b, uint64_t min_bytes, int fine, int reps, uint64_t steps,
                    gcs_chase_sweep_point *pts, int *npts, gcs_err *err);

/* ---- occupancy load points ---------------------------------------------------- */

#define GCS_OCC_MAX_CHAINS 16
#define GCS_OCC_MAX_THREADS 1024
#define GCS_OCC_MAX_POINTS 256

/* One load point: what the occupancy fit (occfit.h) takes. */
typedef struct gcs_occ_point {
    double outstanding;       /* N: concurrent requests (threads x chains) */
    double throughput_per_ns; /* X: requests completed per ns at the node */
    double latency_ns;        /* R: mean latency of one request */
} gcs_occ_point;

typedef struct gcs_occ_opts {
    int rw;
    const int *cpus;        /* CPUs for threads 1..ncpus, in order of use */
    int ncpus;
    const int *thread_counts; /* load levels; NULL = 1..ncpus */
    int nthread_counts;
    const int *chain_counts;  /* chains per thread; NULL = 1,2,4,8,16 */
    int nchain_counts;
    uint64_t steps_per_chain; /* per load point and repetition; 0 = automatic */
    int reps;                 /* medians over reps */
} gcs_occ_opts;

typedef struct gcs_occ_result {
    int npoints;
    gcs_occ_point points[GCS_OCC_MAX_POINTS]; /* sorted by outstanding N */
    int threads[GCS_OCC_MAX_POINTS];
    int chains[GCS_OCC_MAX_POINTS];
    uint64_t steps_per_chain[GCS_OCC_MAX_POINTS]; /* what each chain walked */
    double seconds;
    char warning[256];        /* pinning problems, load points too short */
} gcs_occ_result;

/* Measures load points on a built buffer: for each thread count and chain
 * count, that many pinned threads each chase that many independent chains
 * (interleaved in one loop, so their misses overlap) for steps_per_chain
 * steps.  Every chain starts on lines nobody touched for a whole cycle, and
 * the N = threads x chains chains of a load point walk disjoint stretches of
 * the cycle, so each of the N requests in flight is a miss of its own: a
 * point's steps per chain are capped at about cycle_lines / N (recorded in
 * steps_per_chain; a warning when that is under 1024).  A buffer whose cycle
 * has fewer lines than the largest N is an error. */
GCS_API int gcs_occ_measure(gcs_chase_buf *b, const gcs_topo *t, const gcs_occ_opts *o,
                    gcs_occ_result *r, gcs_err *err);

/* ---- the occupancy plan (occplan.c) ----------------------------------------------
 * Which CPUs and thread counts load a memory node, and what the load points
 * say besides the fit: one plan for `gcscale calibrate` and `gcscale bench
 * occupancy`, so that both measure and report the same data alike. */

/* The CPUs that load mem_node, in order of use: the node's own CPUs first,
 * then the rest, so the first load points are local; inside each, the
 * placement policy's order (topology.h; gcs_occ_cpu_order: cores, so that a
 * core's second hyperthread comes after every core has a thread).  A memory-only node has
 * none of its own: the nearest CPU node's come first.  Sized from the nodes'
 * lists, so no layout can write past it.  malloc'ed, length in *n; NULL
 * when out of memory.  Bandwidth runs use the same order. */
GCS_API int *gcs_occ_cpu_order(const gcs_topo *t, int mem_node, int *n);
/* The same under placement p (none: the cores order, for counting). */
GCS_API int *gcs_occ_cpu_order_placed(const gcs_topo *t, int mem_node, gcs_topo_placement p, int *n);

typedef struct gcs_occ_plan {
    int *cpus;                /* gcs_occ_cpu_order_placed; NULL on a synthetic topology or
                                 under placement none (unpinned) */
    int ncpus;                /* 0 then */
    int first_cpu;            /* where M1 is measured: cpus[0], or -1 (unpinned) */
    int max_threads;          /* at least 1 */
    int *thread_counts;       /* 1..max_threads, or 1, 2, 4, ..., max_threads beyond 8 */
    int nthread_counts;
} gcs_occ_plan;

/* The plan for mem_node: at most max_threads threads (0: one per CPU of the
 * topology; on a synthetic topology one per CPU online, since nothing can be
 * pinned and more threads would only time-share).  -1 when out of memory. */
GCS_API int gcs_occ_plan_init(gcs_occ_plan *pl, const gcs_topo *t, int mem_node, int max_threads,
                              gcs_err *err);
/* The same with the CPUs in placement p's order (gcs_occ_plan_init: cores);
 * none: unpinned threads. */
GCS_API int gcs_occ_plan_init_placed(gcs_occ_plan *pl, const gcs_topo *t, int mem_node, int max_threads,
                                     gcs_topo_placement p, gcs_err *err);
GCS_API void gcs_occ_plan_free(gcs_occ_plan *pl);
/* The plan's part of the load points' options: CPUs and thread counts. */
GCS_API void gcs_occ_plan_opts(const gcs_occ_plan *pl, gcs_occ_opts *o);

/* The N = 1 load point (one thread, one chain) is an idle chase too: a
 * cross-check of M1, which the fit holds fixed.  Further than this
 * (relative) from M1, one of the two is noise. */
#define GCS_OCC_N1_TOLERANCE 0.25

/* What the load points say besides the fit. */
typedef struct gcs_occ_check {
    double max_throughput_per_ns; /* X_max over the points */
    /* The fallback S_O when no fit gives one: a single server cannot
     * deliver more than 1/S_O requests per ns, so 1/X_max is the largest S_O
     * the data allow (0 without throughput). */
    double s_o_fallback_ns;
    double n1_latency_ns;     /* the N = 1 point's latency; NaN without one */
    double n1_deviation;      /* (n1 - M1) / M1; NaN without either */
    int n1_disagrees;         /* |n1_deviation| > GCS_OCC_N1_TOLERANCE */
    /* "the N = 1 load point (81.2 ns) is 31% above M1 (62.0 ns)" where it
     * disagrees, else "" */
    char n1_note[160];
} gcs_occ_check;

GCS_API void gcs_occ_check_points(const gcs_occ_result *r, double m1_ns, gcs_occ_check *c);

/* ---- bandwidth ------------------------------------------------------------------ */

typedef struct gcs_bw_result {
    double best_gbs, median_gbs;  /* 1 GB = 1e9 bytes */
    int threads, reps;
    uint64_t bytes;
    char warning[256];
} gcs_bw_result;

/* All of cpus (pinned, one thread each) read and sum disjoint slices of
 * [data, data+len); GB/s = len / (last finish - first start); best of reps. */
GCS_API int gcs_bw_measure(const gcs_topo *t, const void *data, size_t len, const int *cpus, int ncpus,
                   int reps, gcs_bw_result *r, gcs_err *err);

/* ---- hardware counters ---------------------------------------------------------- */

typedef struct gcs_counters_info {
    char source[16];   /* "papi" or "none" */
    char event[64];    /* the LLC-miss event used */
    char reason[256];  /* why "none" */
} gcs_counters_info;

/* Initializes PAPI once and finds an LLC-miss event that can really be
 * started.  Returns 1 and source "papi", or 0 and source "none" with PAPI's
 * reason. */
GCS_API int gcs_counters_probe(gcs_counters_info *info);

typedef struct gcs_counters gcs_counters;
/* Per-thread: open, start, stop in the thread that measures.  NULL when
 * counters are unavailable (info says why). */
GCS_API gcs_counters *gcs_counters_open(gcs_counters_info *info);
GCS_API int gcs_counters_start(gcs_counters *c);
GCS_API int gcs_counters_stop(gcs_counters *c, long long *llc_misses);
GCS_API void gcs_counters_close(gcs_counters *c);

#endif
