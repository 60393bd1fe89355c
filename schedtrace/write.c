/* write.c -- a finished state machine into the trace file format (trace.h,
 * docs/trace-format.md), through the writer shared with the built-in
 * recorder. */
#include <stdio.h>
#include <stdlib.h>

#include "gcscale/schedtrace.h"
#include "gcscale/trace.h"

int gcs_schedtrace_trace_state(gcs_schedtrace_tstate st)
{
    switch (st) {
    case GCS_SCHEDTRACE_RUNNING: return GCS_TRACE_RUNNING;
    case GCS_SCHEDTRACE_FUTEX: return GCS_TRACE_BLOCKED_LOCK;
    case GCS_SCHEDTRACE_RUNNABLE: return GCS_TRACE_PREEMPTED;
    case GCS_SCHEDTRACE_SLEEPING: return GCS_TRACE_BLOCKED_OTHER;
    case GCS_SCHEDTRACE_EXITED: return GCS_TRACE_EXITED;
    default: return GCS_TRACE_BLOCKED_OTHER;
    }
}

int gcs_schedtrace_write(gcs_schedtrace_states *s, const char *path, const char *command, uint64_t end_ns,
                         size_t *skipped, gcs_err *err)
{
    size_t nth, nch;
    const gcs_schedtrace_thread *th = gcs_schedtrace_states_threads(s, &nth);
    const gcs_schedtrace_change *ch = gcs_schedtrace_states_changes(s, &nch);
    *skipped = 0;
    /* The last trace state written per thread; a thread starts "running"
     * in the format, so that one needs no event. -1: not written at all. */
    int *last = malloc((nth ? nth : 1) * sizeof *last);
    if (!last) {
        gcs_err_set(err, "out of memory");
        return -1;
    }
    gcs_trace_writer *w = gcs_trace_writer_open(path, "sched", command, err);
    if (!w) {
        free(last);
        return -1;
    }
    for (size_t i = 0; i < nth; i++) {
        last[i] = -1;
        if (gcs_schedtrace_states_find(s, th[i].tid) != &th[i]) {
            (*skipped)++;
            continue;
        }
        char name[32];
        if (th[i].name[0])
            snprintf(name, sizeof name, "%s", th[i].name);
        else
            snprintf(name, sizeof name, "thread-%d", (int)th[i].tid);
        gcs_trace_writer_thread(w, th[i].tid, name, th[i].cls[0] ? th[i].cls : "worker", th[i].start_ns);
        last[i] = GCS_TRACE_RUNNING;
        if (th[i].end_ns > end_ns)
            end_ns = th[i].end_ns;
    }
    for (size_t k = 0; k < nch; k++) {
        uint32_t i = ch[k].thread;
        int st = gcs_schedtrace_trace_state((gcs_schedtrace_tstate)ch[k].state);
        if (i >= nth || last[i] < 0 || last[i] == st)
            continue;
        gcs_trace_writer_event(w, ch[k].t_ns, th[i].tid, (gcs_trace_state)st);
        last[i] = st;
        if (ch[k].t_ns > end_ns)
            end_ns = ch[k].t_ns;
    }
    free(last);
    return gcs_trace_writer_close(w, end_ns, err);
}
