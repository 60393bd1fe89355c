/* trace.h -- thread-state traces (prefix gcs_trace_).
 *
 * One documented file format (docs/trace-format.md), written by two sources:
 * the built-in recorder (the collector and the workloads record their own
 * thread states) and `gcscale trace` (Linux scheduler tracepoints, for
 * unmodified programs).  The accounting module (accounting.h) reads it to
 * draw bottle graphs and speedup stacks.
 *
 * Owns: the state names, the recorder, the streaming writer and the strict
 * reader.  Calls only common.h.
 */
#ifndef GCSCALE_TRACE_H
#define GCSCALE_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gcscale/common.h"

/* Version 2 added the state "preempted"; readers take versions 1 and 2
 * (a version-1 file may not use "preempted"). */
#define GCS_TRACE_FORMAT_VERSION 2
#define GCS_TRACE_FORMAT_VERSION_MIN 1

typedef enum gcs_trace_state {
    GCS_TRACE_RUNNING = 0,        /* doing the thread's own work */
    GCS_TRACE_GC_STOPPED,         /* mutator parked for a stop-the-world collection */
    GCS_TRACE_GC_MARK,            /* GC worker marking */
    GCS_TRACE_GC_SEARCH,          /* GC worker looking for work (stealing) */
    GCS_TRACE_GC_IDLE,            /* GC worker idle: waiting for termination or for the next collection */
    GCS_TRACE_GC_SWEEP,           /* GC worker sweeping */
    GCS_TRACE_BLOCKED_LOCK,       /* waiting for a lock (or futex wait, for the sched source) */
    GCS_TRACE_BLOCKED_BARRIER,    /* waiting at a barrier / join */
    GCS_TRACE_BLOCKED_OTHER,      /* blocked for another reason (I/O, sleep): not active */
    GCS_TRACE_PREEMPTED,          /* runnable, waiting for a CPU (sched source, format version 2): not active */
    GCS_TRACE_EXITED,             /* last event of a thread */
    GCS_TRACE_STATE_COUNT
} gcs_trace_state;

/* "running", "gc-stopped", "gc-mark", "gc-search", "gc-idle", "gc-sweep",
 * "blocked-lock", "blocked-barrier", "blocked-other", "exited"; "?" for an
 * out-of-range value. */
GCS_API const char *gcs_trace_state_name(gcs_trace_state s);

/* The state named name, or -1. */
GCS_API int gcs_trace_state_parse(const char *name);

/* ---- built-in recorder ------------------------------------------------------
 * Per-thread buffers stamped with gcs_now_ns(); no lock or syscall per event
 * (a thread takes the recorder's lock once, at its first event of a
 * recording).  Every call below is one relaxed load and a return while no
 * recording is active.
 *
 * A thread appears in the trace from gcs_trace_thread_begin() (if it is
 * called while recording) or from its first gcs_trace_set_state() of the
 * recording; its name and class are those of its last thread_begin, even one
 * called before the recording started, else "thread-TID" and class "other".
 * The thread that calls recorder_start is registered at once (class "main"
 * unless it said otherwise).  Start the recorder before the threads you want
 * to see whole.  A state change to the thread's current state is not
 * recorded. */
GCS_API int  gcs_trace_recorder_start(const char *path, gcs_err *err);  /* begin recording; file written at stop */
GCS_API int  gcs_trace_recorder_stop(gcs_err *err);                     /* flush all threads, write file atomically */
GCS_API void gcs_trace_thread_begin(const char *name, const char *cls); /* calling thread; cls: "main", "mutator", "gc" */
GCS_API void gcs_trace_set_state(gcs_trace_state s);                    /* calling thread's new state, stamped now */
GCS_API void gcs_trace_thread_end(void);                                /* GCS_TRACE_EXITED */

/* The calling thread's last recorded state; GCS_TRACE_RUNNING when it has
 * none or no recording is active.  For code that changes a thread's state
 * for a while and then restores it (a safepoint inside a barrier wait). */
GCS_API gcs_trace_state gcs_trace_current_state(void);

/* True while a recording is active (one relaxed load). */
GCS_API int gcs_trace_recording(void);

/* Sets the "command" header line of the file the running recording will
 * write (default: none).  Copied. */
GCS_API void gcs_trace_recorder_set_command(const char *command);

/* ---- writer ----------------------------------------------------------------
 * Used by both sources (the recorder at stop; the sched tracer streams
 * through it).  The writer checks what it is given so that it never writes a
 * file the reader would reject: a thread is declared (writer_thread) before
 * its events; a thread's events come in non-decreasing time, none before its
 * start and none after its "exited" event; a tid is declared once; names and
 * commands are any text (escaped), a class is one word of [A-Za-z0-9_.-].
 * Events of different threads may be interleaved in any order.
 *
 * writer_thread and writer_event return 0, or -1 after the first error
 * (invalid input or a write failure); the error is sticky and
 * gcs_trace_writer_close reports it, removes the temporary file and returns
 * -1.  close checks end_ns >= every event and renames the file into place;
 * it frees the writer in every case. */
typedef struct gcs_trace_writer gcs_trace_writer;
GCS_API gcs_trace_writer *gcs_trace_writer_open(const char *path, const char *source /* "builtin"|"sched" */,
                                        const char *command /* what was traced, may be NULL */, gcs_err *err);
GCS_API int  gcs_trace_writer_thread(gcs_trace_writer *w, int64_t tid, const char *name, const char *cls,
                             uint64_t start_ns);
GCS_API int  gcs_trace_writer_event(gcs_trace_writer *w, uint64_t t_ns, int64_t tid, gcs_trace_state s);
GCS_API int  gcs_trace_writer_close(gcs_trace_writer *w, uint64_t end_ns, gcs_err *err); /* renames temp into place */
GCS_API void gcs_trace_writer_abort(gcs_trace_writer *w);                                /* removes the temp file */

/* ---- reader ------------------------------------------------------------------
 * A whole trace in memory.  Threads are in declaration order; each thread's
 * events are contiguous in events[] (first_event, nevents), in time order.
 * A thread is in state "running" from its start to its first event. */
typedef struct gcs_trace_event {
    uint64_t t_ns;
    uint32_t state;          /* gcs_trace_state */
    uint32_t thread;         /* index into threads[] */
} gcs_trace_event;

typedef struct gcs_trace_thread {
    int64_t tid;
    char *name;
    char *cls;
    uint64_t start_ns;
    int exited;              /* it has an "exited" event (its last) */
    uint64_t exit_ns;        /* time of that event, else end_ns */
    size_t first_event, nevents;
} gcs_trace_thread;

typedef struct gcs_trace {
    int version;
    char *source;            /* "builtin", "sched", ... */
    char *command;           /* NULL when the file has none */
    char *clock;             /* "monotonic" */
    uint64_t start_ns;       /* earliest thread start (end_ns if no threads) */
    uint64_t end_ns;
    size_t nthreads;
    gcs_trace_thread *threads;
    size_t nevents;
    gcs_trace_event *events;
} gcs_trace;

/* Reads and checks a trace file; on any error returns NULL with
 * "PATH:LINE: what is wrong" in err. */
GCS_API gcs_trace *gcs_trace_read(const char *path, gcs_err *err);
/* The same from an open stream; name is used in messages. */
GCS_API gcs_trace *gcs_trace_read_stream(FILE *fp, const char *name, gcs_err *err);
GCS_API void gcs_trace_free(gcs_trace *t);

#endif
