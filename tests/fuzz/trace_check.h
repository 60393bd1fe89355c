/* trace_check.h -- the promises of trace.h that fuzz_trace.c and
 * fuzz_gclog.c hold every trace to, after reading it and after writing
 * pauses into it: each thread's events contiguous, in time order and within
 * its life and the trace's span.  A broken promise traps. */
#ifndef GCSCALE_FUZZ_TRACE_CHECK_H
#define GCSCALE_FUZZ_TRACE_CHECK_H

#include <stddef.h>

#include "gcscale/trace.h"

static void check_trace(const gcs_trace *t)
{
    size_t events = 0;
    for (size_t i = 0; i < t->nthreads; i++) {
        const gcs_trace_thread *th = &t->threads[i];
        if (th->first_event != events || th->nevents > t->nevents - events)
            __builtin_trap();
        if (th->start_ns < t->start_ns || th->start_ns > t->end_ns || th->exit_ns > t->end_ns)
            __builtin_trap();
        for (size_t k = th->first_event; k < th->first_event + th->nevents; k++) {
            const gcs_trace_event *e = &t->events[k];
            if (e->thread != i || e->state >= GCS_TRACE_STATE_COUNT || e->t_ns < th->start_ns ||
                e->t_ns > t->end_ns || (k > th->first_event && e->t_ns < e[-1].t_ns))
                __builtin_trap();
        }
        events += th->nevents;
    }
    if (events != t->nevents)
        __builtin_trap();
}

#endif
