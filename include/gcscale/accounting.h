/* accounting.h -- interval accounting over thread-state traces: bottle
 * graphs, criticality stacks and the managed speedup stack (prefix
 * gcs_acct_).
 *
 * Definitions follow Du Bois' thesis and the bottle-graphs and speedup-stack
 * papers (docs/speedup-stacks.md says how each term is measured here):
 *
 *   Interval accounting.  Time is cut at every state change of any thread
 *   (and at thread start and exit).  In interval i of length t_i with r_i
 *   active threads, every active thread j gets run_j += t_i and
 *   share_j += t_i / r_i.  Intervals with r_i = 0 go to idle time, so
 *   sum(share_j) + idle = wall time.
 *
 *   Bottle graph.  One box per thread (or per group): height share_j, width
 *   parallelism P_j = run_j / share_j, area run_j; stacked widest at the
 *   bottom.  A group G has share_G = sum share_j, P_G = sum run_j / share_G.
 *
 *   Criticality stack.  share_j / sum(share) per thread, with spinning (here:
 *   a GC worker searching for work) counted as not active.
 *
 *   Managed speedup stack (docs/speedup-stacks.md).  For a run with N
 *   application ("mutator") threads and wall time T_p, against a run with one:
 *     N = S + (N T_GC,MT - T_GC,ST)/T_p + (N T_seq,MT - T_seq,ST)/T_p
 *           + ConcGC/T_p + JIT/T_p + sum Sync_i/T_p + sum Exit_i/T_p
 *           + Preempt/T_p + other
 *   with S = T_ST/T_p measured and "other" the remainder (may be negative);
 *   ConcGC, JIT and Preempt split the application threads' time waiting for
 *   a CPU (the trace state "preempted") by which threads held the CPUs.
 *
 * Per-thread results are computed once (gcs_acct_compute); boxes for any
 * grouping of threads are derived from them without reading the trace again
 * (gcs_acct_bottle).  Calls trace.h, common.h and plot.h.  Never prints.
 */
#ifndef GCSCALE_ACCOUNTING_H
#define GCSCALE_ACCOUNTING_H

#include <stddef.h>
#include <stdint.h>

#include "gcscale/common.h"
#include "gcscale/trace.h"

/* Which states count as active: bit s for state s. */
#define GCS_ACCT_BIT(s) (1u << (s))
/* On a CPU, as the OS-level bottle-graph tool saw it: running, and the GC
 * worker states marking, searching for work (spinning/stealing) and sweeping. */
#define GCS_ACCT_ACTIVE_CPU                                                                    \
    (GCS_ACCT_BIT(GCS_TRACE_RUNNING) | GCS_ACCT_BIT(GCS_TRACE_GC_MARK) |                       \
     GCS_ACCT_BIT(GCS_TRACE_GC_SEARCH) | GCS_ACCT_BIT(GCS_TRACE_GC_SWEEP))
/* Doing useful work, as criticality stacks count it: spinning is not. */
#define GCS_ACCT_ACTIVE_USEFUL                                                                 \
    (GCS_ACCT_BIT(GCS_TRACE_RUNNING) | GCS_ACCT_BIT(GCS_TRACE_GC_MARK) |                       \
     GCS_ACCT_BIT(GCS_TRACE_GC_SWEEP))

/* States in which a thread takes part in a stop-the-world collection: while
 * any thread is in one of these, the application is paused. */
#define GCS_ACCT_GC_STATES                                                                     \
    (GCS_ACCT_BIT(GCS_TRACE_GC_STOPPED) | GCS_ACCT_BIT(GCS_TRACE_GC_MARK) |                    \
     GCS_ACCT_BIT(GCS_TRACE_GC_SEARCH) | GCS_ACCT_BIT(GCS_TRACE_GC_SWEEP))

/* The default class of application threads (N of the speedup stack counts them). */
#define GCS_ACCT_APP_CLASS "mutator"

typedef struct gcs_acct_thread {
    int64_t tid;
    char *name, *cls;
    double start_ns, end_ns;    /* relative to the trace's start; end = exit or trace end */
    double run_ns;              /* time active */
    double share_ns;            /* sum of t_i / r_i while active: criticality */
    double parallelism;         /* run / share; NaN when never active */
    double state_ns[GCS_TRACE_STATE_COUNT]; /* time in each state while alive */
} gcs_acct_thread;

typedef struct gcs_acct {
    uint32_t active_mask;
    double wall_ns;             /* trace end - trace start */
    double idle_ns;             /* time with no active thread */
    double busy_ns;             /* sum of shares = wall - idle (up to rounding) */
    size_t nintervals;          /* intervals of non-zero length */
    size_t nthreads;
    gcs_acct_thread *threads;   /* in the trace's order */
} gcs_acct;

/* Interval accounting of a whole trace.  active_mask 0 means
 * GCS_ACCT_ACTIVE_CPU. */
GCS_API gcs_acct *gcs_acct_compute(const gcs_trace *t, uint32_t active_mask, gcs_err *err);
GCS_API void gcs_acct_free(gcs_acct *a);

/* ---- bottle graph ------------------------------------------------------------ */
typedef enum gcs_acct_grouping {
    GCS_ACCT_BY_THREAD = 0,     /* one box per thread, labelled with its name (and its tid when
                                   another thread has the same name) */
    GCS_ACCT_BY_CLASS = 1,      /* one box per thread class (mutator, gc, main, ...) */
    GCS_ACCT_BY_LABEL = 2,      /* labels[j] names thread j's group */
} gcs_acct_grouping;

typedef struct gcs_acct_box {
    char *label;                /* thread name, class, or group label */
    char *cls;                  /* the class of its threads ("mixed" if they differ) */
    size_t nthreads;
    double run_ns, share_ns;
    double parallelism;         /* run / share; NaN when share is 0 */
    double share_pct;           /* 100 * share / busy: the criticality stack component */
} gcs_acct_box;

typedef struct gcs_acct_bottle {
    double wall_ns, idle_ns, busy_ns;
    size_t nboxes;
    gcs_acct_box *boxes;        /* widest (largest parallelism) first = bottom; never-active last */
} gcs_acct_bottle;

/* Boxes for a grouping of a.  labels: one per thread, for GCS_ACCT_BY_LABEL
 * only.  Threads with the same label (or class) form one box. */
GCS_API gcs_acct_bottle *gcs_acct_bottle_make(const gcs_acct *a, gcs_acct_grouping g, const char *const *labels,
                                      gcs_err *err);
GCS_API void gcs_acct_bottle_free(gcs_acct_bottle *b);

/* A table of the boxes, bottom first: label, class, threads, share (ms),
 * share %, run (ms), parallelism; and one "idle" row. */
GCS_API gcs_table *gcs_acct_bottle_table(const gcs_acct_bottle *b, const char *title);
GCS_API json_t *gcs_acct_bottle_to_json(const gcs_acct_bottle *b);

/* The bottle graph as an SVG file: boxes centred on x = 0, widest at the
 * bottom, x = parallelism, y = time (ms), each labelled with its name,
 * share and parallelism; idle time in the subtitle. */
GCS_API int gcs_acct_bottle_write_svg(const gcs_acct_bottle *b, const char *title, const char *subtitle,
                              const char *path, gcs_err *err);

/* ---- managed speedup stack ------------------------------------------------------ */

/* What the stack needs from one run (one trace). */
typedef struct gcs_acct_run_times {
    int napp;                   /* application threads (class app_class) */
    double wall_ns;             /* T */
    double gc_ns;               /* T_GC: some thread in gc-mark/search/sweep, or some thread
                                   gc-stopped while no app thread is running */
    double seq_ns;              /* T_seq: no application thread alive, outside GC */
    double sync_ns;             /* sum over app threads: blocked on a lock or barrier, outside GC */
    double exit_ns;             /* sum over app threads: exited while another app thread lived, outside GC */
    double blocked_other_ns;    /* sum over app threads: blocked-other outside GC (part of "other") */
    double preempt_ns;          /* sum over app threads: preempted outside GC, CPUs not held by the two below */
    double jit_ns;              /* ... preempted while compiler threads (class "jit") ran */
    double conc_gc_ns;          /* ... preempted while GC threads ran outside a pause (classes "gc-conc", "gc") */
    double gc_lag_ns;           /* sum over app threads: still gc-stopped after the collection, while
                                   another app thread runs again: wake-up lag (part of "other") */
} gcs_acct_run_times;

/* app_class: the class of the application threads; NULL: GCS_ACCT_APP_CLASS
 * (the built-in recorder's "mutator"; a sched trace calls them "worker"). */
GCS_API int gcs_acct_run_times_compute(const gcs_trace *t, const char *app_class, gcs_acct_run_times *out,
                               gcs_err *err);

/* Components of one speedup stack, in units of speedup; they add up to n. */
typedef struct gcs_acct_stack {
    int n;                      /* N: application threads of the multi-threaded run */
    double speedup;             /* measured S = T_ST / T_MT */
    double gc;                  /* (N T_GC,MT - T_GC,ST) / T_MT */
    double conc_gc;             /* conc_gc_ns of the MT run / T_MT */
    double jit;                 /* jit_ns of the MT run / T_MT */
    double init;                /* (N T_seq,MT - T_seq,ST) / T_MT */
    double sync;                /* sum Sync_i / T_MT */
    double imbalance;           /* sum Exit_i / T_MT */
    double preemption;          /* preempt_ns of the MT run / T_MT */
    double other;               /* N - everything above; may be negative */
    gcs_acct_run_times st, mt;  /* the inputs */
} gcs_acct_stack;

#define GCS_ACCT_STACK_COMPONENTS 9
/* "speedup", "gc", "concurrent-gc", "jit", "initialization", "synchronization",
 * "imbalance", "preemption", "other" */
GCS_API extern const char *const gcs_acct_stack_component_names[GCS_ACCT_STACK_COMPONENTS];
GCS_API void gcs_acct_stack_values(const gcs_acct_stack *s, double out[GCS_ACCT_STACK_COMPONENTS]);

/* st must come from a run with exactly one application thread, mt from a run
 * with at least one; -1 with err otherwise (messages name the class
 * "application" threads were counted by; NULL: GCS_ACCT_APP_CLASS). */
GCS_API int gcs_acct_stack_compute(const gcs_acct_run_times *st, const gcs_acct_run_times *mt, const char *app_class,
                           gcs_acct_stack *out, gcs_err *err);
GCS_API json_t *gcs_acct_stack_to_json(const gcs_acct_stack *s);

/* ---- managed runtimes (runtime.c) ---------------------------------------------
 * Traces of unmodified runtimes (gcscale trace --runtime) carry roles as
 * thread classes but no GC states: a pause has to be found in the trace, or
 * taken from the runtime's own log, and written into the trace as GC states
 * (application threads gc-stopped, GC and VM threads gc-mark), after which
 * the stack's GC term measures it as it does for the built-in recorder. */
#define GCS_ACCT_GC_CLASS "gc"           /* stop-the-world GC workers */
#define GCS_ACCT_GC_CONC_CLASS "gc-conc" /* concurrent GC threads */
#define GCS_ACCT_JIT_CLASS "jit"         /* JIT compiler threads */
#define GCS_ACCT_VM_CLASS "vm"           /* the thread that runs safepoints (HotSpot's VM Thread) */

typedef struct gcs_acct_pause {
    uint64_t start_ns, end_ns;  /* CLOCK_MONOTONIC, as the trace */
} gcs_acct_pause;

/* Stop-the-world pauses found in a trace: the times when a thread of class
 * "gc" (or "vm") is running or preempted while every application thread
 * waits on a lock (a safepoint parks them on futexes), joined across gaps
 * in which they all stay in those waits.  *out is
 * malloc'd (NULL when *n is 0). */
GCS_API int gcs_acct_find_pauses(const gcs_trace *t, const char *app_class, gcs_acct_pause **out, size_t *n,
                                 gcs_err *err);

/* Pauses from a HotSpot unified GC log (-Xlog:gc:file=F:tn, or any log
 * with the gc tag's "GC(N) Pause ... T.TTTms" lines and a nanosecond time
 * decorator): each line ends a pause of T.TTT ms.  The time stamp used is
 * the nanosecond decorator whose value lies in [lo_ns, hi_ns] (the trace's
 * span: "timenanos" is CLOCK_MONOTONIC, "uptimenanos" is not); a log with
 * pause lines but no such stamp is an error saying to add "tn".  The pauses
 * come out in time order and disjoint (as gcs_acct_apply_pauses needs):
 * neighbours that overlap by up to the ms figure's rounding (1 us) are made
 * to touch; a larger overlap, a line without its duration or a duration
 * over 1e9 ms is an error naming the line. */
GCS_API int gcs_acct_hotspot_log_pauses(const char *path, uint64_t lo_ns, uint64_t hi_ns, gcs_acct_pause **out,
                                        size_t *n, gcs_err *err);

/* Writes pauses into t as GC states: inside a pause, application threads
 * not running are gc-stopped and running threads of classes "gc" and "vm"
 * are in gc-mark.  Pauses must be sorted and disjoint. */
GCS_API int gcs_acct_apply_pauses(gcs_trace *t, const gcs_acct_pause *p, size_t n, const char *app_class,
                                  gcs_err *err);

/* 1 when some event of t is a GC state (the built-in recorder's traces). */
GCS_API int gcs_acct_has_gc_states(const gcs_trace *t);
/* 1 when some thread of t has class "gc" or "vm" (a runtime preset's trace). */
GCS_API int gcs_acct_has_gc_roles(const gcs_trace *t);

/* The stacks side by side, as in the speedup-stacks paper's Figure 3: one
 * bar per stack with labels[i] under it ("N = n" when labels or labels[i]
 * is NULL; keep labels short, about 10 characters). */
GCS_API int gcs_acct_stacks_write_svg(const gcs_acct_stack *stacks, const char *const *labels, int n,
                              const char *title, const char *subtitle, const char *path, gcs_err *err);

#endif
