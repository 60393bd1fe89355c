/* fuzz_trace.c -- libFuzzer target over the thread-state trace reader
 * (gcs_trace_read_stream) and the interval accounting behind `gcscale
 * bottle` and `gcscale stack`, built and run by `make fuzz` from the seeds
 * in tests/fuzz/trace-seeds/.
 *
 * A trace is text a user may have edited or cut short, and `gcscale trace`
 * writes it from whatever the scheduler reports, so the reader must turn any
 * input into either a trace or one error line.  A trace it accepts must keep
 * the promises of trace.h (each thread's events contiguous and in time order,
 * within [start, end]) and must account (accounting.h): the threads' shares
 * add up to the busy time, busy + idle = wall, and no thread is active longer
 * than it lives nor shares more than it runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/accounting.h"
#include "gcscale/trace.h"
#include "trace_check.h"

/* Relative closeness for sums of doubles made of up to ~2^64 ns. */
static int near(double a, double b)
{
    return fabs(a - b) <= 1e-6 * (1 + fabs(a) + fabs(b));
}

static void check_accounting(const gcs_trace *t)
{
    gcs_err err;
    gcs_acct *a = gcs_acct_compute(t, 0, &err);
    if (!a)
        return; /* out of memory only */
    double shares = 0;
    for (size_t i = 0; i < a->nthreads; i++) {
        const gcs_acct_thread *th = &a->threads[i];
        double alive = th->end_ns - th->start_ns;
        if (th->run_ns < 0 || th->share_ns < 0 || !(th->run_ns <= alive + 1e-6 * (1 + alive)) ||
            !(th->share_ns <= th->run_ns + 1e-6 * (1 + th->run_ns)))
            __builtin_trap();
        shares += th->share_ns;
    }
    if (!near(shares, a->busy_ns) || !near(a->busy_ns + a->idle_ns, a->wall_ns))
        __builtin_trap();
    gcs_acct_bottle *b = gcs_acct_bottle_make(a, GCS_ACCT_BY_CLASS, NULL, &err);
    if (b) {
        json_decref(gcs_acct_bottle_to_json(b));
        gcs_acct_bottle_free(b);
    }
    gcs_acct_run_times rt;
    if (gcs_acct_run_times_compute(t, NULL, &rt, &err) == 0 &&
        (rt.gc_ns < 0 || rt.seq_ns < 0 || rt.gc_ns > rt.wall_ns * (1 + 1e-9) + 1))
        __builtin_trap();
    gcs_acct_free(a);
}

/* A runtime's trace (gcscale trace --runtime): the pauses found are in
 * order, disjoint and inside the trace, and writing them into the trace
 * keeps it a valid trace that still accounts. */
static void check_pauses(gcs_trace *t)
{
    gcs_err err;
    gcs_acct_pause *p = NULL;
    size_t n = 0;
    if (gcs_acct_find_pauses(t, NULL, &p, &n, &err) != 0)
        return; /* out of memory only */
    for (size_t k = 0; k < n; k++)
        if (p[k].end_ns <= p[k].start_ns || p[k].start_ns < t->start_ns || p[k].end_ns > t->end_ns ||
            (k && p[k].start_ns < p[k - 1].end_ns))
            __builtin_trap();
    if (gcs_acct_apply_pauses(t, p, n, NULL, &err) == 0) {
        check_trace(t);
        check_accounting(t);
    }
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer */
    FILE *fp = fmemopen((void *)data, size, "r");
    if (!fp)
        __builtin_trap();
    gcs_err err;
    err.msg[0] = '\0';
    gcs_trace *t = gcs_trace_read_stream(fp, "fuzz", &err);
    fclose(fp);
    if (!t) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap(); /* every failure is one non-empty line */
        return 0;
    }
    check_trace(t);
    check_accounting(t);
    check_pauses(t);
    gcs_trace_free(t);
    return 0;
}
