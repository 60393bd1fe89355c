/* fuzz_gclog.c -- libFuzzer target over the HotSpot GC log reader behind
 * `gcscale stack --gc-log` (_gcs_acct_hotspot_log_read, accounting/
 * runtime.c), built and run by `make fuzz` from the seeds in
 * tests/fuzz/gclog-seeds/.
 *
 * A GC log is text a JVM wrote, a user cut or concatenated, and any line
 * may be anything: the reader must turn it into either pauses that can be
 * written into a trace or one error line.  Pauses it accepts are in time
 * order, disjoint, each starting no later than it ends, and end inside the
 * span asked for; written into a runtime's trace they keep it a valid trace
 * whose GC time is no longer than its wall time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../accounting/acct_internal.h"
#include "gcscale/accounting.h"
#include "gcscale/trace.h"
#include "trace_check.h"

/* A JVM's threads over 0..40 us (tests/fuzz/trace-seeds/sched-jvm-v2.trace):
 * the seeds' stamps lie in this span. */
static const char jvm_trace[] = "gcscale-trace 2\n"
                                "source sched\n"
                                "clock monotonic\n"
                                "thread 2 0 mutator app-0\n"
                                "thread 4 0 gc GC Thread#0\n"
                                "thread 5 0 vm VM Thread\n"
                                "e 1000 4 blocked-lock\n"
                                "e 1000 5 blocked-lock\n"
                                "e 10000 2 blocked-lock\n"
                                "e 20000 5 running\n"
                                "e 21000 5 blocked-lock\n"
                                "e 22000 4 running\n"
                                "e 30000 4 blocked-lock\n"
                                "e 32000 2 running\n"
                                "e 40000 2 exited\n"
                                "end 40000\n";

/* Reads data as a log of pauses ending in [lo, hi]: 0 and the pauses, or -1
 * with one line in err and nothing allocated. */
static int read_log(const uint8_t *data, size_t size, uint64_t lo, uint64_t hi, gcs_acct_pause **p, size_t *n)
{
    FILE *fp = fmemopen((void *)data, size, "r");
    if (!fp)
        __builtin_trap();
    gcs_err err;
    err.msg[0] = '\0';
    int rc = _gcs_acct_hotspot_log_read(fp, "fuzz", lo, hi, p, n, &err);
    fclose(fp);
    if (rc != 0) {
        if (rc != -1 || *p || *n || !err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap();
        return -1;
    }
    if (!*n != !*p)
        __builtin_trap();
    for (size_t k = 0; k < *n; k++)
        if ((*p)[k].start_ns > (*p)[k].end_ns || (*p)[k].end_ns < lo || (*p)[k].end_ns > hi ||
            (k && (*p)[k].start_ns < (*p)[k - 1].end_ns))
            __builtin_trap();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer */
    gcs_acct_pause *p = NULL;
    size_t n = 0;
    /* Any span: the real logs of the seeds, stamped in the JVM's clock. */
    if (read_log(data, size, 0, UINT64_MAX, &p, &n) == 0)
        free(p);
    /* The trace's span, and the pauses written into its states. */
    FILE *fp = fmemopen((void *)jvm_trace, sizeof jvm_trace - 1, "r");
    gcs_err err;
    gcs_trace *t = fp ? gcs_trace_read_stream(fp, "jvm", &err) : NULL;
    if (fp)
        fclose(fp);
    if (!t)
        __builtin_trap();
    if (read_log(data, size, t->start_ns, t->end_ns, &p, &n) == 0) {
        if (gcs_acct_apply_pauses(t, p, n, NULL, &err) != 0)
            __builtin_trap(); /* the reader promised what apply checks */
        check_trace(t);
        gcs_acct_run_times rt;
        if (gcs_acct_run_times_compute(t, NULL, &rt, &err) == 0 &&
            (rt.gc_ns < 0 || rt.gc_ns > rt.wall_ns * (1 + 1e-9) + 1))
            __builtin_trap();
        free(p);
    }
    gcs_trace_free(t);
    return 0;
}
