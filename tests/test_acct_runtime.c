/* test_acct_runtime.c -- accounting/runtime.c and the runtime terms of the
 * speedup stack: stop-the-world pauses found in a hand-made sched trace of
 * a JVM (safepoint sync, a GC worker preempted inside its pause, the VM
 * thread ending it, threads woken but waiting for a CPU), the same pause
 * read from a HotSpot GC log with timenanos and uptimenanos decorators,
 * the pauses written into the trace as GC states, and the application
 * threads' CPU waits split into JIT, concurrent GC and preemption; bottle
 * labels of threads that share a name; the runtime presets of gcscale trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/accounting.h"
#include "gcscale/schedtrace.h"
#include "test_traces.h"

#define NEAR(a, b)                                                                                                 \
    do {                                                                                                           \
        double a_ = (a), b_ = (b);                                                                                 \
        if (!(fabs(a_ - b_) <= 1e-6 * (1 + fabs(b_))))                                                              \
            fail_msg("line %d: %s = %.9g, wanted %.9g", __LINE__, #a, a_, b_);                                     \
    } while (0)

/* Times in microseconds (x 1000 ns).  Two application threads a0, a1; one
 * GC worker, the VM thread, a JIT and a concurrent GC thread.
 *   10  VM thread starts a safepoint; 11 a0 parks (lock), a1 is preempted
 *   12  a1 parks; the GC worker runs: the pause opens
 *   13  VM thread waits; 15-16 the GC worker is preempted (still the pause)
 *   20  worker done, the VM thread ends the safepoint; 21 both woken: the
 *       pause ends (they wait for a CPU); 22 VM thread sleeps
 *   23  a0 runs; 24 a1 runs
 *   30-40 a1 preempted while the JIT runs              -> jit 10
 *   50-56 a0 preempted, 50-54 a1 too, conc GC runs     -> conc 4 + 2, preempt 4
 *   70-75 a0 preempted, nothing of the runtime runs    -> preempt 5
 *   80-85 the GC worker runs beside the application: no pause
 *   88-95 everyone waits for a CPU (another program's load), the worker
 *         too: no pause                                 -> preempt 7 + 7
 * preempt also: a1 11-12, a0 21-23, a1 21-24 -> 1 + 2 + 3; total 29.
 * sync: a0 11-12 -> 1.  The JVM's log times this pause 12-22: with it the
 * pause is 10 and preempt 27 (a0, a1 are gc-stopped until 22). */
static const char jvm[] = "gcscale-trace 2\nsource sched\nclock monotonic\n"
                          "thread 1 0 main java\n"
                          "thread 2 0 mutator app-0\n"
                          "thread 3 0 mutator app-1\n"
                          "thread 4 0 gc GC Thread#0\n"
                          "thread 5 0 vm VM Thread\n"
                          "thread 6 0 jit C2 CompilerThre\n"
                          "thread 7 0 gc-conc G1 Conc#0\n"
                          "e 1000 1 blocked-lock\n"
                          "e 1000 4 blocked-lock\n"
                          "e 1000 5 blocked-lock\n"
                          "e 1000 6 blocked-lock\n"
                          "e 1000 7 blocked-lock\n"
                          "e 10000 5 running\n"
                          "e 11000 2 blocked-lock\n"
                          "e 11000 3 preempted\n"
                          "e 12000 3 blocked-lock\n"
                          "e 12000 4 running\n"
                          "e 13000 5 blocked-lock\n"
                          "e 15000 4 preempted\n"
                          "e 16000 4 running\n"
                          "e 20000 4 blocked-lock\n"
                          "e 20000 5 running\n"
                          "e 21000 2 preempted\n"
                          "e 21000 3 preempted\n"
                          "e 22000 5 blocked-lock\n"
                          "e 23000 2 running\n"
                          "e 24000 3 running\n"
                          "e 30000 3 preempted\n"
                          "e 30000 6 running\n"
                          "e 40000 3 running\n"
                          "e 40000 6 blocked-lock\n"
                          "e 50000 2 preempted\n"
                          "e 50000 3 preempted\n"
                          "e 50000 7 running\n"
                          "e 54000 3 running\n"
                          "e 56000 2 running\n"
                          "e 60000 7 blocked-lock\n"
                          "e 70000 2 preempted\n"
                          "e 75000 2 running\n"
                          "e 80000 4 running\n"
                          "e 85000 4 blocked-lock\n"
                          "e 88000 2 preempted\n"
                          "e 88000 3 preempted\n"
                          "e 88000 4 preempted\n"
                          "e 95000 2 running\n"
                          "e 95000 3 running\n"
                          "e 95000 4 blocked-lock\n"
                          "e 100000 2 exited\n"
                          "e 100000 3 exited\n"
                          "end 100000\n";

static void check_times(const gcs_acct_run_times *rt, double gc, double preempt)
{
    assert_int_equal(rt->napp, 2);
    NEAR(rt->gc_ns, gc);
    NEAR(rt->jit_ns, 10000);
    NEAR(rt->conc_gc_ns, 6000);
    NEAR(rt->preempt_ns, preempt);
    NEAR(rt->sync_ns, 1000);
}

static void test_pauses_from_trace(void **state)
{
    (void)state;
    gcs_trace *t = test_trace_parse(jvm);
    gcs_err err = {{0}};
    assert_false(gcs_acct_has_gc_states(t));
    assert_true(gcs_acct_has_gc_roles(t));
    gcs_acct_pause *p = NULL;
    size_t n = 99;
    assert_int_equal(gcs_acct_find_pauses(t, NULL, &p, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].start_ns, 12000);
    assert_int_equal(p[0].end_ns, 21000);
    assert_int_equal(gcs_acct_apply_pauses(t, p, n, NULL, &err), 0);
    assert_true(gcs_acct_has_gc_states(t));
    /* a0 is gc-stopped from 12 to 21, the worker in gc-mark while it runs */
    const gcs_trace_thread *a0 = &t->threads[1], *w = &t->threads[3];
    int a0_stopped = 0, w_mark = 0;
    for (size_t e = 0; e < a0->nevents; e++) {
        const gcs_trace_event *ev = &t->events[a0->first_event + e];
        if (ev->state == GCS_TRACE_GC_STOPPED) {
            assert_int_equal(ev->t_ns, 12000);
            assert_int_equal(t->events[a0->first_event + e + 1].t_ns, 21000);
            assert_int_equal(t->events[a0->first_event + e + 1].state, GCS_TRACE_PREEMPTED);
            a0_stopped++;
        }
    }
    for (size_t e = 0; e < w->nevents; e++)
        w_mark += t->events[w->first_event + e].state == GCS_TRACE_GC_MARK;
    assert_int_equal(a0_stopped, 1);
    assert_int_equal(w_mark, 2); /* 12-15 and 16-20, preempted between */
    gcs_acct_run_times rt;
    assert_int_equal(gcs_acct_run_times_compute(t, NULL, &rt, &err), 0);
    check_times(&rt, 9000, 29000);
    /* The accounting of the rewritten trace still adds up. */
    gcs_acct *a = gcs_acct_compute(t, 0, &err);
    assert_non_null(a);
    NEAR(a->busy_ns + a->idle_ns, a->wall_ns);
    gcs_acct_free(a);
    free(p);
    gcs_trace_free(t);
}

/* On a busy machine: a worker still waiting for a CPU (since 5) when the
 * application thread parks (10) opens no pause; the VM thread runs (20),
 * and then the waiting worker holds the pause: 20 until the worker's last
 * moment (30) before the application thread is woken (31). */
static void test_waiting_worker(void **state)
{
    (void)state;
    static const char busy[] = "gcscale-trace 2\nsource sched\nclock monotonic\n"
                               "thread 2 0 mutator app-0\n"
                               "thread 4 0 gc GC Thread#0\n"
                               "thread 5 0 vm VM Thread\n"
                               "e 1000 4 blocked-lock\n"
                               "e 1000 5 blocked-lock\n"
                               "e 5000 4 preempted\n"
                               "e 10000 2 blocked-lock\n"
                               "e 20000 5 running\n"
                               "e 21000 5 blocked-lock\n"
                               "e 22000 4 running\n"
                               "e 30000 4 blocked-lock\n"
                               "e 31000 2 preempted\n"
                               "e 32000 2 running\n"
                               "e 40000 2 exited\n"
                               "end 40000\n";
    gcs_trace *t = test_trace_parse(busy);
    gcs_err err = {{0}};
    gcs_acct_pause *p = NULL;
    size_t n = 0;
    assert_int_equal(gcs_acct_find_pauses(t, NULL, &p, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].start_ns, 20000);
    assert_int_equal(p[0].end_ns, 30000);
    free(p);
    gcs_trace_free(t);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_pauses_from_hotspot_log(void **state)
{
    (void)state;
    char path[] = "/tmp/test_acct_runtime_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    /* -Xlog:gc,safepoint:file=F:tn,un: timenanos is in the trace's span,
     * uptimenanos (9000000) is not; the safepoint line is no GC pause. */
    write_file(path, "[9000ns][8000000ns] Using Parallel\n"
                     "[22000ns][9000000ns] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) 0.010ms\n"
                     "[22100ns][9000100ns] Safepoint \"ParallelGCFailedAllocation\", Time since last: 1 ns, "
                     "Reaching safepoint: 2000 ns, Cleanup: 0 ns, At safepoint: 10000 ns, Total: 12000 ns\n");
    gcs_trace *t = test_trace_parse(jvm);
    gcs_err err = {{0}};
    gcs_acct_pause *p = NULL;
    size_t n = 0;
    assert_int_equal(gcs_acct_hotspot_log_pauses(path, t->start_ns, t->end_ns, &p, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].start_ns, 12000);
    assert_int_equal(p[0].end_ns, 22000);
    assert_int_equal(gcs_acct_apply_pauses(t, p, n, NULL, &err), 0);
    gcs_acct_run_times rt;
    assert_int_equal(gcs_acct_run_times_compute(t, NULL, &rt, &err), 0);
    check_times(&rt, 10000, 27000);
    free(p);

    /* Only uptime stamps: the pause cannot be placed on the trace's clock. */
    write_file(path, "[0.022s][9000000ns] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) 0.010ms\n");
    assert_int_equal(gcs_acct_hotspot_log_pauses(path, t->start_ns, t->end_ns, &p, &n, &err), -1);
    assert_non_null(strstr(err.msg, "decorator tn"));
    /* A pause line that lost its duration */
    write_file(path, "[22000ns] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) ms\n");
    assert_int_equal(gcs_acct_hotspot_log_pauses(path, t->start_ns, t->end_ns, &p, &n, &err), -1);
    assert_non_null(strstr(err.msg, ":1: a pause line without its duration"));
    /* Lines out of order are sorted; neighbours that the ms figure's
     * rounding makes overlap by under 1 us are made to touch. */
    write_file(path, "[30000ns] GC(1) Pause Young (Allocation Failure) 10M->2M(20M) 0.005ms\n"
                     "[25400ns] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) 0.010ms\n");
    assert_int_equal(gcs_acct_hotspot_log_pauses(path, t->start_ns, t->end_ns, &p, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].start_ns, 15400);
    assert_int_equal(p[0].end_ns, 25400);
    assert_int_equal(p[1].start_ns, 25400); /* 25000 from its stamp: 400 ns of rounding */
    assert_int_equal(p[1].end_ns, 30000);
    free(p);
    /* A larger overlap is no log of one run: named, not clamped (a clamp
     * would have made the later pause start after its end). */
    write_file(path, "[25000ns] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) 0.010ms\n"
                     "[24000ns] GC(1) Pause Young (Allocation Failure) 10M->2M(20M) 0.002ms\n");
    assert_int_equal(gcs_acct_hotspot_log_pauses(path, t->start_ns, t->end_ns, &p, &n, &err), -1);
    assert_non_null(strstr(err.msg, ":2: this pause (0.002 ms ending at 24000 ns) overlaps the one of line 1"));
    assert_null(p);
    /* A duration no collection has (strtod gives inf for 400 digits: its
     * ns did not fit a uint64_t) */
    char huge[600] = "[25000ns] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) ";
    memset(huge + strlen(huge), '9', 400);
    strcat(huge, "ms\n");
    write_file(path, huge);
    assert_int_equal(gcs_acct_hotspot_log_pauses(path, t->start_ns, t->end_ns, &p, &n, &err), -1);
    assert_non_null(strstr(err.msg, ":1: a pause of inf ms is not the length of a collection"));
    unlink(path);
    assert_int_equal(gcs_acct_hotspot_log_pauses(path, 0, 1, &p, &n, &err), -1);
    /* Pauses out of order are refused */
    gcs_acct_pause bad[2] = {{5000, 9000}, {8000, 9500}};
    assert_int_equal(gcs_acct_apply_pauses(t, bad, 2, NULL, &err), -1);
    gcs_trace_free(t);
}

static void test_stack_terms(void **state)
{
    (void)state;
    /* One application thread: a serial run of 150 us, 20 of them GC. */
    static const char single[] = "gcscale-trace 2\nsource sched\nclock monotonic\n"
                                 "thread 1 0 mutator app-0\n"
                                 "thread 2 0 gc GC Thread#0\n"
                                 "e 1 2 blocked-lock\n"
                                 "e 50000 1 blocked-lock\n"
                                 "e 50000 2 running\n"
                                 "e 70000 2 blocked-lock\n"
                                 "e 70000 1 running\n"
                                 "e 150000 1 exited\n"
                                 "end 150000\n";
    gcs_err err = {{0}};
    gcs_trace *t1 = test_trace_parse(single), *t2 = test_trace_parse(jvm);
    gcs_acct_run_times st, mt;
    gcs_acct_pause *p;
    size_t n;
    assert_int_equal(gcs_acct_find_pauses(t1, NULL, &p, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(gcs_acct_apply_pauses(t1, p, n, NULL, &err), 0);
    free(p);
    assert_int_equal(gcs_acct_find_pauses(t2, NULL, &p, &n, &err), 0);
    assert_int_equal(gcs_acct_apply_pauses(t2, p, n, NULL, &err), 0);
    free(p);
    assert_int_equal(gcs_acct_run_times_compute(t1, NULL, &st, &err), 0);
    assert_int_equal(gcs_acct_run_times_compute(t2, NULL, &mt, &err), 0);
    NEAR(st.gc_ns, 20000);
    gcs_acct_stack s;
    assert_int_equal(gcs_acct_stack_compute(&st, &mt, NULL, &s, &err), 0);
    NEAR(s.speedup, 1.5);
    NEAR(s.gc, (2 * 9000.0 - 20000) / 100000);
    NEAR(s.jit, 0.1);
    NEAR(s.conc_gc, 0.06);
    NEAR(s.preemption, 0.29);
    double v[GCS_ACCT_STACK_COMPONENTS], sum = 0;
    gcs_acct_stack_values(&s, v);
    for (int k = 0; k < GCS_ACCT_STACK_COMPONENTS; k++)
        sum += v[k];
    NEAR(sum, 2);
    assert_string_equal(gcs_acct_stack_component_names[3], "jit");
    assert_string_equal(gcs_acct_stack_component_names[7], "preemption");
    gcs_trace_free(t1);
    gcs_trace_free(t2);
}

static void test_bottle_labels(void **state)
{
    (void)state;
    static const char same[] = "gcscale-trace 2\nsource sched\nclock monotonic\n"
                               "thread 7 0 main node\n"
                               "thread 8 0 worker node\n"
                               "thread 9 0 worker other\n"
                               "end 10\n";
    gcs_err err = {{0}};
    gcs_trace *t = test_trace_parse(same);
    gcs_acct *a = gcs_acct_compute(t, 0, &err);
    gcs_acct_bottle *b = gcs_acct_bottle_make(a, GCS_ACCT_BY_THREAD, NULL, &err);
    assert_int_equal(b->nboxes, 3);
    int seen = 0;
    for (size_t k = 0; k < b->nboxes; k++) {
        seen |= strcmp(b->boxes[k].label, "node 7") == 0;
        seen |= (strcmp(b->boxes[k].label, "node 8") == 0) << 1;
        seen |= (strcmp(b->boxes[k].label, "other") == 0) << 2;
    }
    assert_int_equal(seen, 7);
    gcs_acct_bottle_free(b);
    gcs_acct_free(a);
    gcs_trace_free(t);
}

static void test_runtime_presets(void **state)
{
    (void)state;
    gcs_schedtrace_class c[64];
    size_t n = 0;
    const char *note = "x";
    gcs_err err = {{0}};
    assert_int_equal(gcs_schedtrace_runtime_classes("hotspot", c, 64, &n, &note, &err), 0);
    assert_null(note);
    assert_true(n > 5);
    /* The names seen in real OpenJDK 17 runs get their roles (first match). */
    static const struct { const char *name, *cls; } seen[] = {
        {"GC Thread#1", "gc"},   {"G1 Conc#0", "gc-conc"}, {"G1 Refine#0", "gc-conc"},
        {"C2 CompilerThre", "jit"}, {"C1 CompilerThre", "jit"}, {"VM Thread", "vm"},
        {"Reference Handl", "runtime"}, {"java", "main"}, {"app-0", "mutator"},
        {"ZWorker#0", "gc-conc"}, {"Shenandoah GC T", "gc-conc"}, {"pool-1-thread-1", "mutator"},
    };
    gcs_schedtrace_states *s = gcs_schedtrace_states_new(&err);
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
        assert_int_equal(gcs_schedtrace_states_add(s, (int32_t)(100 + i), seen[i].name, GCS_SCHEDTRACE_RUNNING, 0,
                                                   &err), 0);
    gcs_schedtrace_states_finish(s, 10, c, n);
    size_t nth;
    const gcs_schedtrace_thread *th = gcs_schedtrace_states_threads(s, &nth);
    for (size_t i = 0; i < nth; i++)
        if (strcmp(th[i].cls, seen[i].cls) != 0)
            fail_msg("%s: class %s, wanted %s", th[i].name, th[i].cls, seen[i].cls);
    gcs_schedtrace_states_free(s);

    assert_int_equal(gcs_schedtrace_runtime_classes("node", c, 64, &n, &note, &err), 0);
    assert_int_equal(n, 0);
    assert_non_null(strstr(note, "\"node\""));
    assert_int_equal(gcs_schedtrace_runtime_classes("dotnet", c, 64, &n, &note, &err), -1);
    assert_non_null(strstr(err.msg, "hotspot, node or go"));
    assert_int_equal(gcs_schedtrace_runtime_classes("hotspot", c, 3, &n, &note, &err), -1);

    char *java[] = {"/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "-cp", ".", NULL};
    char *node[] = {"node", "x.js", NULL};
    char *xz[] = {"xz", "-T2", NULL};
    assert_string_equal(gcs_schedtrace_runtime_detect(java), "hotspot");
    assert_string_equal(gcs_schedtrace_runtime_detect(node), "node");
    assert_null(gcs_schedtrace_runtime_detect(xz));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pauses_from_trace),
        cmocka_unit_test(test_waiting_worker),
        cmocka_unit_test(test_pauses_from_hotspot_log),
        cmocka_unit_test(test_stack_terms),
        cmocka_unit_test(test_bottle_labels),
        cmocka_unit_test(test_runtime_presets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
