/* schedtrace.h -- thread-state traces of unmodified programs from the Linux
 * scheduler's tracepoints (prefix gcs_schedtrace_).
 *
 * `gcscale trace` runs (or attaches to) a program and follows its threads
 * through the kernel's tracepoints, opened with perf_event_open on every
 * online CPU (system wide; the traced threads are picked out in user space):
 *
 *   context-switch records             a thread leaves / takes a CPU (perf's
 *                                      PERF_RECORD_SWITCH_CPU_WIDE; sched:sched_switch
 *                                      on kernels before 4.3)
 *   sched:sched_waking, _wakeup_new    a sleeping / new thread becomes runnable
 *   sched:sched_process_fork           a thread or process is created
 *   sched:sched_process_exit           a thread ends
 *   syscalls:sys_enter_futex, _exit    futex waits (FUTEX_WAIT*, LOCK_PI*),
 *                                      to tell synchronization from other sleeps
 *   task:task_rename                   thread names set after creation (optional)
 *
 * Each traced thread is in one of five states, and the trace file (trace.h,
 * docs/trace-format.md) gets the state it maps to:
 *
 *   running        on a CPU                                -> running
 *   futex          asleep inside a futex wait              -> blocked-lock
 *   runnable       preempted, or woken but not yet on a CPU -> preempted
 *   sleeping       asleep for any other reason (I/O, ...)  -> blocked-other
 *   exited                                                 -> exited
 *
 * Preempted (runnable) time is not active time, as in the bottle-graph
 * paper's tool (Du Bois et al., OOPSLA 2013), which activates a thread when
 * it is scheduled in and deactivates it when it is scheduled out; the
 * summary keeps it apart so that an oversubscribed machine shows as such.
 * docs/schedtrace.md has the details, the permissions and the overhead.
 *
 * The library never prints or exits.  The pieces are public so that they can
 * be tested without root: the tracepoint format parser, the state machine
 * fed with decoded events, and the tracer that produces those events.
 */
#ifndef GCSCALE_SCHEDTRACE_H
#define GCSCALE_SCHEDTRACE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gcscale/common.h"

/* ---- tracepoint format files ------------------------------------------------
 * tracefs describes each tracepoint's raw record in events/SYS/NAME/format:
 *     field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
 * Offsets differ between kernels, so they are always read from there. */
#define GCS_SCHEDTRACE_MAX_FIELDS 32

typedef struct gcs_schedtrace_field {
    char name[64];
    uint32_t offset;        /* bytes from the start of the raw record */
    uint32_t size;          /* bytes (of the whole array for arrays) */
    int is_signed;
    int data_loc;           /* 1: __data_loc, a u32 (length << 16 | offset) locating a string;
                             * 2: __rel_loc, the same with the offset counted from the field's end */
} gcs_schedtrace_field;

typedef struct gcs_schedtrace_format {
    char name[64];          /* "sched_switch" */
    uint32_t id;            /* the tracepoint id (perf_event_attr.config) */
    int nfields;
    gcs_schedtrace_field fields[GCS_SCHEDTRACE_MAX_FIELDS];
} gcs_schedtrace_format;

/* Parses the text of a format file.  -1 with err set when the name, the ID
 * or a field line cannot be read. */
GCS_API int gcs_schedtrace_format_parse(const char *text, gcs_schedtrace_format *fmt, gcs_err *err);
/* The named field, or NULL. */
GCS_API const gcs_schedtrace_field *gcs_schedtrace_format_find(const gcs_schedtrace_format *fmt,
                                                       const char *name);
/* Reads an integer field (1, 2, 4 or 8 bytes, sign-extended when signed) or,
 * with index, element index of an integer array (element size: size / count
 * given by elem_size).  -1 when the field lies outside the record. */
GCS_API int gcs_schedtrace_field_int(const gcs_schedtrace_field *f, const void *raw, uint32_t raw_size,
                             int64_t *value);
GCS_API int gcs_schedtrace_field_elem(const gcs_schedtrace_field *f, uint32_t elem_size, uint32_t index,
                              const void *raw, uint32_t raw_size, int64_t *value);
/* Copies a char[N] or __data_loc string field, NUL-terminated and truncated
 * to n - 1 bytes.  -1 when it lies outside the record. */
GCS_API int gcs_schedtrace_field_str(const gcs_schedtrace_field *f, const void *raw, uint32_t raw_size,
                             char *buf, size_t n);

/* ---- tracefs ------------------------------------------------------------------
 * Finds the mounted tracefs (any tracefs line of /proc/self/mounts, then
 * /sys/kernel/tracing and /sys/kernel/debug/tracing); when there is none,
 * mounts it at /sys/kernel/tracing (needs root).  path gets the directory
 * that holds events/; *mounted is set to 1 when this call mounted it. */
GCS_API int gcs_schedtrace_tracefs(char *path, size_t n, int *mounted, gcs_err *err);
/* Reads and parses DIR/events/SYS/NAME/format.  Returns -1 with errno kept
 * (ENOENT: the kernel has no such tracepoint; EACCES: not allowed). */
GCS_API int gcs_schedtrace_read_format(const char *tracefs, const char *sys, const char *name,
                               gcs_schedtrace_format *fmt, gcs_err *err);

/* ---- decoded events ------------------------------------------------------------ */
typedef enum gcs_schedtrace_kind {
    GCS_SCHEDTRACE_SWITCH = 0,   /* tid leaves the CPU in prev_state arg, tid2 takes it */
    GCS_SCHEDTRACE_WAKEUP,       /* tid becomes runnable (wakeup and wakeup_new) */
    GCS_SCHEDTRACE_FORK,         /* tid created tid2; comm: the child's name */
    GCS_SCHEDTRACE_EXIT,         /* tid ends; comm: its name */
    GCS_SCHEDTRACE_FUTEX_ENTER,  /* tid enters futex(2) with op arg */
    GCS_SCHEDTRACE_FUTEX_WAIT,   /* tid enters a call that always waits (futex_wait, futex_waitv) */
    GCS_SCHEDTRACE_FUTEX_EXIT,   /* tid returns from one of those calls */
    GCS_SCHEDTRACE_RENAME,       /* tid's name becomes comm (prctl, pthread_setname_np, exec) */
    GCS_SCHEDTRACE_KIND_COUNT
} gcs_schedtrace_kind;

typedef struct gcs_schedtrace_event {
    uint64_t t_ns;               /* CLOCK_MONOTONIC, as gcs_now_ns() */
    int32_t tid, tid2;
    int64_t arg;
    uint32_t kind;               /* gcs_schedtrace_kind */
    uint32_t cpu;
    char comm[16];
} gcs_schedtrace_event;

/* sched_switch's prev_state: runnable (preempted) rather than asleep.  The
 * low byte holds the sleep states (S, D, T, t, X, Z, P, I); a preempted task
 * has none of them (newer kernels add a "preempted" bit above them). */
static inline int gcs_schedtrace_prev_runnable(int64_t prev_state) { return (prev_state & 0xff) == 0; }
/* A futex(2) op that can put the caller to sleep waiting: FUTEX_WAIT,
 * FUTEX_WAIT_BITSET, FUTEX_LOCK_PI, FUTEX_LOCK_PI2, FUTEX_WAIT_REQUEUE_PI
 * (with or without FUTEX_PRIVATE_FLAG / FUTEX_CLOCK_REALTIME). */
GCS_API int gcs_schedtrace_futex_op_waits(int64_t op);

/* ---- the state machine ----------------------------------------------------------
 * Fed with events in time order, it follows the traced threads (the ones
 * added with gcs_schedtrace_states_add and every thread or process they
 * create), records every change of their trace state and sums the time in
 * each internal state. */
typedef enum gcs_schedtrace_tstate {
    GCS_SCHEDTRACE_RUNNING = 0,
    GCS_SCHEDTRACE_RUNNABLE,     /* preempted or woken, waiting for a CPU */
    GCS_SCHEDTRACE_FUTEX,        /* asleep in a futex wait */
    GCS_SCHEDTRACE_SLEEPING,     /* asleep for another reason */
    GCS_SCHEDTRACE_EXITED,
    GCS_SCHEDTRACE_TSTATE_COUNT
} gcs_schedtrace_tstate;

/* "NAME=PATTERN": threads whose name matches the glob PATTERN (fnmatch) get
 * class NAME; the first matching rule wins. */
typedef struct gcs_schedtrace_class {
    char name[32];
    char pattern[128];
} gcs_schedtrace_class;
/* Parses "NAME=PATTERN" (NAME: letters, digits, '-', '_'; PATTERN non-empty). */
GCS_API int gcs_schedtrace_class_parse(const char *text, gcs_schedtrace_class *c, gcs_err *err);

/* ---- runtime presets (runtime.c) ----------------------------------------------
 * The class rules of a managed runtime's threads, by the names the runtime
 * gives them: "hotspot" (OpenJDK: classes main, gc = stop-the-world GC
 * workers, gc-conc = concurrent GC threads, jit, vm = the safepoint/VM
 * thread, runtime = its other threads, mutator = every other thread, i.e.
 * the application's), "node" and "go" (no rules: those runtimes give their
 * threads no telling names; *note says so, else NULL).  Copies up to max
 * rules into out (put user rules before them: the first match wins). */
GCS_API int gcs_schedtrace_runtime_classes(const char *runtime, gcs_schedtrace_class *out, size_t max, size_t *n,
                                           const char **note, gcs_err *err);
/* The runtime a command runs, from its program's name (java: "hotspot",
 * node: "node"), or NULL. */
GCS_API const char *gcs_schedtrace_runtime_detect(char *const argv[]);

typedef struct gcs_schedtrace_thread {
    int32_t tid;
    int32_t parent_tid;          /* 0 for the threads that were there at the start */
    char name[16];               /* the last name seen (exit, rename, or /proc at the end) */
    char cls[32];                /* filled by gcs_schedtrace_states_finish */
    uint64_t start_ns, end_ns;   /* end_ns: exit, or the end of the trace */
    gcs_schedtrace_tstate state; /* current */
    int in_futex_wait;           /* between sys_enter_futex (a waiting op) and its exit */
    int first;                   /* the first thread added (default class "main") */
    uint64_t last_ns;            /* time of the last state change */
    uint64_t ns[GCS_SCHEDTRACE_TSTATE_COUNT]; /* time in each state (exited: 0) */
    uint64_t switches_in;        /* times it took a CPU */
    uint64_t futex_waits;        /* times it went to sleep in a futex wait */
} gcs_schedtrace_thread;

/* A recorded change of a thread's state (the first one is its start). */
typedef struct gcs_schedtrace_change {
    uint64_t t_ns;
    uint32_t thread;             /* index into the threads array */
    uint32_t state;              /* gcs_schedtrace_tstate */
} gcs_schedtrace_change;

typedef struct gcs_schedtrace_states gcs_schedtrace_states;

GCS_API gcs_schedtrace_states *gcs_schedtrace_states_new(gcs_err *err);
GCS_API void gcs_schedtrace_states_free(gcs_schedtrace_states *s);
/* Adds a thread present at start_ns, in state st (running, runnable,
 * futex or sleeping).  The first thread added is the "first" one. */
GCS_API int gcs_schedtrace_states_add(gcs_schedtrace_states *s, int32_t tid, const char *name,
                              gcs_schedtrace_tstate st, uint64_t start_ns, gcs_err *err);
/* Applies one event.  Events must come in time order; events of threads
 * that are not followed are ignored.  -1 only when memory runs out. */
GCS_API int gcs_schedtrace_states_apply(gcs_schedtrace_states *s, const gcs_schedtrace_event *ev,
                                gcs_err *err);
/* Sets a thread's name (e.g. from /proc at the end).  0, or -1 if not followed. */
GCS_API int gcs_schedtrace_states_rename(gcs_schedtrace_states *s, int32_t tid, const char *name);
/* Ends the trace at end_ns: closes every thread's current interval and
 * assigns classes (rules first; then "main" for the first thread and
 * "worker" for the others). */
GCS_API void gcs_schedtrace_states_finish(gcs_schedtrace_states *s, uint64_t end_ns,
                                  const gcs_schedtrace_class *classes, size_t nclasses);
/* The followed threads in order of appearance, and the recorded changes in
 * time order (valid until the next call that changes s). */
GCS_API const gcs_schedtrace_thread *gcs_schedtrace_states_threads(const gcs_schedtrace_states *s,
                                                           size_t *n);
GCS_API const gcs_schedtrace_change *gcs_schedtrace_states_changes(const gcs_schedtrace_states *s,
                                                           size_t *n);
/* The thread with this tid (the newest one, tids can be reused), or NULL. */
GCS_API gcs_schedtrace_thread *gcs_schedtrace_states_find(gcs_schedtrace_states *s, int32_t tid);
GCS_API const char *gcs_schedtrace_tstate_name(gcs_schedtrace_tstate st);
/* The trace-file state (trace.h's gcs_trace_state) of a thread state:
 * running -> running, futex -> blocked-lock, runnable -> preempted, sleeping ->
 * blocked-other, exited -> exited. */
GCS_API int gcs_schedtrace_trace_state(gcs_schedtrace_tstate st);

/* Writes a finished state machine as a trace file (trace.h, source
 * "sched", crash-safe): every thread with its name and class, then every
 * change of its trace state.  A tid used by two threads in turn (the kernel
 * reuses ids) keeps the later thread; *skipped counts the others. */
GCS_API int gcs_schedtrace_write(gcs_schedtrace_states *s, const char *path, const char *command, uint64_t end_ns,
                         size_t *skipped, gcs_err *err);

/* /proc/TID/comm without the newline (any thread of the system).  0, or -1
 * when the thread is gone. */
GCS_API int gcs_schedtrace_proc_comm(pid_t tid, char *buf, size_t n);

/* ---- the tracer -------------------------------------------------------------------- */
typedef struct gcs_schedtrace_options {
    size_t buffer_bytes;         /* ring buffer per CPU (rounded up to 2^k pages); 0: 1 MiB */
    int poll_ms;                 /* longest wait between two drains; 0: 1000 with a descriptor to watch
                                    (gcs_schedtrace_poll's fd), else 100 */
} gcs_schedtrace_options;

typedef struct gcs_schedtrace_info {
    char tracefs[256];           /* where tracefs was found or mounted */
    int mounted_tracefs;         /* 1: gcs_schedtrace_open mounted it */
    int ncpus;                   /* CPUs traced */
    const char *switch_source;   /* "perf context-switch records" or "sched:sched_switch" */
    const char *futex_source;    /* "syscalls:sys_enter_futex" or "raw_syscalls:sys_enter" */
    int have_rename;             /* task:task_rename is available */
    uint64_t samples;            /* records read, all threads of the system */
    uint64_t lost;               /* records the kernel dropped (ring buffer full) */
    uint64_t wakeups;            /* drains */
    uint64_t start_ns, end_ns;   /* enable and stop */
    int futex_filtered;          /* 1: the kernel sends only the futex calls that can wait (format.c) */
} gcs_schedtrace_info;

typedef struct gcs_schedtrace gcs_schedtrace;

/* Finds (or mounts) tracefs, reads the tracepoint formats and opens the
 * events on every online CPU, disabled.  Failures name what is needed (root
 * or CAP_PERFMON, kernel.perf_event_paranoid, tracefs) in err. */
GCS_API gcs_schedtrace *gcs_schedtrace_open(const gcs_schedtrace_options *opts, gcs_err *err);
/* Enables the events; from now on events are recorded and fed, in time
 * order, to the state machine s (not owned). */
GCS_API int gcs_schedtrace_enable(gcs_schedtrace *t, gcs_schedtrace_states *s, gcs_err *err);
/* Adds every thread of process pid (from /proc/PID/task) to the state
 * machine, each in its current state: /proc's R is "running", a thread
 * inside a futex wait (/proc/TID/syscall) is "futex", others "sleeping". */
GCS_API int gcs_schedtrace_follow_process(gcs_schedtrace *t, pid_t pid, gcs_err *err);
/* Waits up to the poll period for data and feeds what is complete.  Also
 * returns early when fd (>= 0, e.g. a pidfd) becomes readable; *fd_ready
 * says so. */
GCS_API int gcs_schedtrace_poll(gcs_schedtrace *t, int fd, int *fd_ready, gcs_err *err);
/* Disables the events, drains and feeds everything, and finishes the state
 * machine at the stop time (names of live threads re-read from /proc). */
GCS_API int gcs_schedtrace_stop(gcs_schedtrace *t, const gcs_schedtrace_class *classes, size_t nclasses,
                        gcs_err *err);
GCS_API const gcs_schedtrace_info *gcs_schedtrace_get_info(const gcs_schedtrace *t);
GCS_API void gcs_schedtrace_close(gcs_schedtrace *t);
/* As gcs_schedtrace_close, but the kernel's unregistering of the
 * tracepoints (one RCU grace period each, ~0.4 s in all) happens in a
 * short-lived background process after this returns, so a traced command
 * ends when its trace is written.  Falls back to gcs_schedtrace_close. */
GCS_API void gcs_schedtrace_close_detached(gcs_schedtrace *t);

/* Starts argv as a child process that execs only once the events are
 * enabled (so the trace holds the program from its first instruction) and
 * follows it (and every process it starts).  A program that cannot be run
 * is an error ("cannot run 'X': ..."), and the child has been reaped then. */
GCS_API int gcs_schedtrace_start_command(gcs_schedtrace *t, gcs_schedtrace_states *s, char *const argv[], pid_t *pid,
                                 gcs_err *err);
/* Traces until the child pid exits or *stop becomes nonzero; then call
 * gcs_schedtrace_stop.  *status: its waitpid status, or -1 when *stop ended
 * the trace first (the child is not reaped then). */
GCS_API int gcs_schedtrace_wait_command(gcs_schedtrace *t, pid_t pid, volatile sig_atomic_t *stop, int *status,
                                gcs_err *err);
/* Attaches to process pid (all its threads, and the processes it starts)
 * and traces it until it exits or *stop becomes nonzero; then call
 * gcs_schedtrace_stop.  A pid that does not exist is an error. */
GCS_API int gcs_schedtrace_run_pid(gcs_schedtrace *t, gcs_schedtrace_states *s, pid_t pid,
                           volatile sig_atomic_t *stop, gcs_err *err);

#endif
