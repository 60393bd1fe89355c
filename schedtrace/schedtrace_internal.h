/* schedtrace_internal.h -- shared by the files of schedtrace/ only. */
#ifndef GCSCALE_SCHEDTRACE_INTERNAL_H
#define GCSCALE_SCHEDTRACE_INTERNAL_H

#include "gcscale/schedtrace.h"

/* The state machine given to gcs_schedtrace_enable. */
gcs_schedtrace_states *_gcs_schedtrace_states_of(gcs_schedtrace *t);

/* What perf_event_open of tracepoints needs, with this machine's
 * kernel.perf_event_paranoid, for error messages. */
void _gcs_schedtrace_permission_hint(char *buf, size_t n);

/* The ftrace filter of syscalls:sys_enter_futex (exit 0: the calls that
 * can wait, by op) or of sys_exit_futex (exit 1: ret <= 0) into buf: 0, or
 * -1 when n is too small.  format.c. */
int _gcs_schedtrace_futex_filter(int exit, char *buf, size_t n);

/* A CPU's decoded events not yet fed to the state machine, in time order:
 * ev[head..n).  merge.c. */
typedef struct gcs_schedtrace_queue {
    gcs_schedtrace_event *ev;
    size_t head, n, cap;
} gcs_schedtrace_queue;

/* Appends ev; a late event (earlier than the queue's last) moves back to its
 * place, after the events of equal time.  -1: out of memory. */
int _gcs_schedtrace_queue_push(gcs_schedtrace_queue *q, const gcs_schedtrace_event *ev);
void _gcs_schedtrace_queue_free(gcs_schedtrace_queue *q);

/* Hands every queued event stamped <= limit to apply, in time order across
 * the n queues (ties: the lower queue index first), and removes it.  heap:
 * room for n ints.  Stops at apply's first error and returns it. */
int _gcs_schedtrace_merge(gcs_schedtrace_queue **qs, int *heap, int n, uint64_t limit,
                          int (*apply)(void *ctx, const gcs_schedtrace_event *ev, gcs_err *err), void *ctx,
                          gcs_err *err);

#endif
