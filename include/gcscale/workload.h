/* workload.h -- the paper's three application workloads, multi-threaded, on
 * gcscale's collector (prefix gcs_workload_).
 *
 * Endo, Taura and Yonezawa measured their collector under three parallel
 * programs; these are written from the paper's descriptions
 * (docs/workloads.md):
 *
 *   bh    Barnes-Hut n-body.  Mutator 0 alone builds the octree every step
 *         (its objects sit on one memory node: the paper's skew), then all
 *         mutators compute the forces on their share of the bodies.
 *   cube  a beam-bounded breadth-first search for an approximate solution of
 *         a scrambled Rubik's cube; every mutator allocates state records.
 *   cky   CKY parsing of sentences generated from a bundled context-free
 *         grammar; the charts are lists of small parse objects.
 *
 * A workload runs on an already initialized collector (gcs_gc_init by the
 * caller, whose thread is attached).  It starts `mutators` threads, each
 * attached, with shadow-stack roots for its locals and safepoints in its
 * long loops.  While it waits for them the calling thread is detached (a
 * thread blocked in pthread_join must not hold up a collection) and it is
 * attached again before gcs_workload_run returns: anything the caller keeps
 * on its shadow stack is dropped, so the caller must keep its own GC
 * objects in registered root slots (gcs_gc_add_root) across the call.
 *
 * Every workload checks its answer against an independent reference (see
 * gcs_workload_result.verified), so a collector that frees a live object or
 * a workload bug makes the run fail.
 *
 * Threads record their states for the built-in trace recorder (trace.h):
 * "mutator" threads running, at barriers and in joins.
 *
 * Calls gc.h, trace.h and common.h.  Never prints.
 */
#ifndef GCSCALE_WORKLOAD_H
#define GCSCALE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "gcscale/common.h"
#include "gcscale/gc.h"

#define GCS_WORKLOAD_MAX_MUTATORS 256

/* What a workload is and what its knobs mean. */
typedef struct gcs_workload_info {
    const char *name;          /* "bh", "cube", "cky" */
    const char *summary;       /* one line */
    const char *size_meaning;  /* what `size` counts, e.g. "bodies" */
    const char *steps_meaning; /* what `steps` counts, e.g. "time steps" */
    uint64_t default_size;
    uint64_t default_steps;
    uint64_t max_size;
    uint64_t max_steps;
    /* A heap limit that gives the default size many collections (each
     * marking tens of MB): `gcscale run` uses it, plus the per-mutator
     * slack below, unless --heap is given (gcs_workload_default_heap). */
    size_t default_heap;
} gcs_workload_info;

/* Heap added to default_heap for each mutator thread.  Every mutator
 * allocates from a page of its own per size class it uses, so right after
 * a collection M mutators take up to M x (classes in use) 64 KiB pages
 * between them: with 16 mutators and cky's 48 MiB (36 MiB live) one of them
 * found no page left after two collections of its own ("heap exhausted",
 * seen on a 16-CPU machine).  1 MiB is 16 such pages per mutator. */
#define GCS_WORKLOAD_HEAP_PER_MUTATOR ((size_t)1 << 20)

/* The heap limit a run of `mutators` threads gets when none is given:
 * default_heap + mutators x GCS_WORKLOAD_HEAP_PER_MUTATOR. */
GCS_API size_t gcs_workload_default_heap(const gcs_workload_info *info, int mutators);

/* The registered workloads, in a fixed order; NULL-terminated names. */
GCS_API size_t gcs_workload_count(void);
GCS_API const gcs_workload_info *gcs_workload_info_at(size_t i);
GCS_API const gcs_workload_info *gcs_workload_find(const char *name); /* NULL: unknown */
GCS_API const char *const *gcs_workload_names(void);

/* Per-collection record kept by gcs_workload_gclog_hook (below).  The
 * run's summary needs every collection's pause and mark times; the
 * collector hands them to an on_collection callback only. */
typedef struct gcs_workload_gc_row {
    uint64_t index;
    int reason;                 /* gcs_gc_reason */
    int threads;                /* P used */
    int policy_used;            /* a thread policy chose P */
    uint64_t start_ns, pause_ns, mark_ns, sweep_ns, stop_ns, t1_ns;
    uint64_t live_objects, live_bytes;
    uint64_t decision_ns;
} gcs_workload_gc_row;

typedef struct gcs_workload_gclog {
    gcs_workload_gc_row *rows;
    size_t n, cap;
    int oom;                    /* a row could not be stored (rows lost) */
    /* A callback that was installed before (chained, called first). */
    void (*next)(const gcs_gc_stats *stats, void *arg);
    void *next_arg;
} gcs_workload_gclog;

/* Installs the recorder as opts->on_collection (chaining what was there);
 * call before gcs_gc_init.  The log must outlive the collector. */
GCS_API void gcs_workload_gclog_install(gcs_gc_options *opts, gcs_workload_gclog *log);
GCS_API void gcs_workload_gclog_hook(const gcs_gc_stats *stats, void *arg);
GCS_API void gcs_workload_gclog_free(gcs_workload_gclog *log);

typedef struct gcs_workload_options {
    const char *name;           /* a registered workload */
    int mutators;               /* 1..GCS_WORKLOAD_MAX_MUTATORS */
    uint64_t size;              /* 0: the workload's default_size */
    uint64_t steps;             /* 0: the workload's default_steps */
    uint64_t seed;              /* 0: 1 */
    /* Optional: collections recorded by gcs_workload_gclog_install; with it
     * the result's gc_* fields cover the collections of this run. */
    const gcs_workload_gclog *gclog;
    /* Optional progress callback, called by mutator 0 between steps with
     * the fraction done (0..1).  It must not touch GC objects. */
    void (*progress)(double fraction, void *arg);
    void *progress_arg;
} gcs_workload_options;

GCS_API void gcs_workload_options_init(gcs_workload_options *o);

typedef struct gcs_workload_result {
    const gcs_workload_info *info;
    int mutators;
    uint64_t size, steps, seed;       /* as run (defaults filled in) */
    uint64_t wall_ns;                 /* threads' start to the last join */
    uint64_t collections;             /* collections during the run */
    /* From opts.gclog (0 and gc_timed 0 without it): the collections that
     * started during the run. */
    int gc_timed;
    uint64_t gc_pause_ns;             /* sum of their pauses */
    uint64_t gc_mark_ns;              /* sum of their mark phases */
    uint64_t mutator_ns;              /* wall_ns - gc_pause_ns (0 if not gc_timed) */
    size_t gc_first, gc_count;        /* rows [gc_first, gc_first + gc_count) of the log */
    /* Verification against an independent reference. */
    int verified;                     /* 1 passed, 0 failed */
    char verify_msg[512];             /* what was checked, or what failed */
    /* The workload's own figures, by name (static names), e.g. the cube's
     * best score and solution length, bh's force error. */
    int nfigures;
    struct { const char *name; double value; } figures[12];
} gcs_workload_result;

/* Runs a workload.  Returns 0 when it ran (check result->verified), -1 with
 * err set when it could not run (bad options, caller not attached, out of
 * heap: the heap limit is too small for its live data). */
GCS_API int gcs_workload_run(const gcs_workload_options *opts, gcs_workload_result *result, gcs_err *err);

#endif
