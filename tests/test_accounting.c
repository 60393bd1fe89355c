/* test_accounting.c -- accounting/: interval accounting on the thesis'
 * 4-thread test vector (shares 6.5/5/5/5.5, run 11/16/16/17), idle
 * intervals, threads created and exiting mid-run, criticality with spinning
 * inactive, bottle-graph boxes (order, sums) and regrouping by class or by
 * label from one computation, and the managed speedup stack on two hand-made
 * runs whose every term is known (including GC overlapping a lock wait and an
 * exited thread, and a negative "other"). */
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
#include "test_traces.h"

#define HDR "gcscale-trace 1\nsource builtin\nclock monotonic\n"


static void near_(double a, double b, const char *what, int line)
{
    if (!(fabs(a - b) <= 1e-9 * (1 + fabs(b))))
        fail_msg("line %d: %s = %.12g, wanted %.12g", line, what, a, b);
}
#define NEAR(a, b) near_((double)(a), (double)(b), #a, __LINE__)

/* Digest section 3, times in units of 1000 ns:
 *   t0 [0,3) {0,1,2,3}  t1 [3,6) {1,2,3}  t2 [6,7) {2,3}   t3 [7,10) {1,2,3}
 *   t4 [10,11) {1,3}    t5 [11,14) {1,2,3} t6 [14,17) all  t7 [17,22) {0}   */
static const char vector4[] = HDR
    "thread 10 0 mutator t0\n"
    "thread 11 0 mutator t1\n"
    "thread 12 0 mutator t2\n"
    "thread 13 0 mutator t3\n"
    "e 3000 10 blocked-lock\n"
    "e 6000 11 blocked-barrier\n"
    "e 7000 11 running\n"
    "e 10000 12 blocked-lock\n"
    "e 11000 12 running\n"
    "e 14000 10 running\n"
    "e 17000 11 exited\n"
    "e 17000 12 exited\n"
    "e 17000 13 exited\n"
    "end 22000\n";

static void test_thesis_vector(void **state)
{
    (void)state;
    gcs_trace *t = test_trace_parse(vector4);
    gcs_err err;
    gcs_acct *a = gcs_acct_compute(t, 0, &err);
    assert_non_null(a);
    const double share[4] = {6.5, 5, 5, 5.5}, run[4] = {11, 16, 16, 17};
    for (int j = 0; j < 4; j++) {
        NEAR(a->threads[j].share_ns, share[j] * 1000);
        NEAR(a->threads[j].run_ns, run[j] * 1000);
        NEAR(a->threads[j].parallelism, run[j] / share[j]);
    }
    NEAR(a->threads[0].parallelism, 1.6923076923076923);
    NEAR(a->threads[1].parallelism, 3.2);
    NEAR(a->wall_ns, 22000);
    NEAR(a->busy_ns, 22000);
    NEAR(a->idle_ns, 0);
    assert_int_equal(a->nintervals, 8);
    NEAR(a->threads[0].state_ns[GCS_TRACE_BLOCKED_LOCK], 11000);
    NEAR(a->threads[1].state_ns[GCS_TRACE_BLOCKED_BARRIER], 1000);
    NEAR(a->threads[1].end_ns, 17000);
    NEAR(a->threads[0].end_ns, 22000);

    /* Criticality stack: share / total, thread 0 the most critical. */
    gcs_acct_bottle *b = gcs_acct_bottle_make(a, GCS_ACCT_BY_THREAD, NULL, &err);
    assert_non_null(b);
    assert_int_equal(b->nboxes, 4);
    double pct_sum = 0, height = 0;
    for (size_t k = 0; k < b->nboxes; k++) {
        pct_sum += b->boxes[k].share_pct;
        height += b->boxes[k].share_ns;
        if (k)
            assert_true(b->boxes[k].parallelism <= b->boxes[k - 1].parallelism);
    }
    NEAR(pct_sum, 100);
    NEAR(height, b->wall_ns - b->idle_ns);
    /* widest at the bottom: t1 and t2 (3.2), then t3 (3.09), t0 (1.69) on top */
    assert_string_equal(b->boxes[2].label, "t3");
    assert_string_equal(b->boxes[3].label, "t0");
    NEAR(b->boxes[3].share_pct, 100 * 6.5 / 22);
    gcs_acct_bottle_free(b);
    gcs_acct_free(a);
    gcs_trace_free(t);
}

/* Both threads blocked from 5 to 8 (3 idle), a thread created at 10 and
 * exiting at 16 while the other runs, a thread that is never active. */
static void test_idle_and_lifetimes(void **state)
{
    (void)state;
    gcs_trace *t = test_trace_parse(HDR
                         "thread 1 0 main a\n"
                         "thread 2 0 mutator b\n"
                         "thread 3 10 mutator c\n"
                         "thread 4 0 gc w\n"
                         "e 0 4 gc-idle\n"
                         "e 5 1 blocked-other\n"
                         "e 5 2 blocked-lock\n"
                         "e 8 1 running\n"
                         "e 8 2 exited\n"
                         "e 16 3 exited\n"
                         "end 20\n");
    gcs_err err;
    gcs_acct *a = gcs_acct_compute(t, GCS_ACCT_ACTIVE_CPU, &err);
    assert_non_null(a);
    NEAR(a->wall_ns, 20);
    NEAR(a->idle_ns, 3);
    NEAR(a->busy_ns + a->idle_ns, a->wall_ns);
    /* a: active [0,5) with b (2.5), [8,10) alone (2), [10,16) with c (3), [16,20) alone (4) */
    NEAR(a->threads[0].share_ns, 2.5 + 2 + 3 + 4);
    NEAR(a->threads[0].run_ns, 5 + 12);
    NEAR(a->threads[1].share_ns, 2.5);
    NEAR(a->threads[1].run_ns, 5);
    NEAR(a->threads[2].share_ns, 3);
    NEAR(a->threads[2].run_ns, 6);
    NEAR(a->threads[2].parallelism, 2);
    NEAR(a->threads[2].start_ns, 10);
    NEAR(a->threads[2].end_ns, 16);
    assert_true(isnan(a->threads[3].parallelism));
    NEAR(a->threads[3].state_ns[GCS_TRACE_GC_IDLE], 20);
    NEAR(a->threads[1].state_ns[GCS_TRACE_BLOCKED_LOCK], 3);

    gcs_acct_bottle *b = gcs_acct_bottle_make(a, GCS_ACCT_BY_THREAD, NULL, &err);
    assert_non_null(b);
    assert_string_equal(b->boxes[b->nboxes - 1].label, "w"); /* never active: last */
    double h = 0;
    for (size_t k = 0; k < b->nboxes; k++)
        h += b->boxes[k].share_ns;
    NEAR(h, 17);
    gcs_acct_bottle_free(b);
    gcs_acct_free(a);

    assert_null(gcs_acct_compute(t, GCS_ACCT_BIT(GCS_TRACE_EXITED), &err));
    assert_non_null(strstr(err.msg, "exited"));
    gcs_trace_free(t);
}

/* A GC worker searching for work is active on the CPU but not useful: the
 * criticality mask moves its time out. */
static void test_spinning_mask(void **state)
{
    (void)state;
    gcs_trace *t = test_trace_parse(HDR
                         "thread 1 0 gc w0\n"
                         "thread 2 0 gc w1\n"
                         "e 0 1 gc-mark\n"
                         "e 0 2 gc-mark\n"
                         "e 4 2 gc-search\n"
                         "e 10 1 gc-idle\n"
                         "e 10 2 gc-idle\n"
                         "end 10\n");
    gcs_err err;
    gcs_acct *cpu = gcs_acct_compute(t, GCS_ACCT_ACTIVE_CPU, &err);
    gcs_acct *useful = gcs_acct_compute(t, GCS_ACCT_ACTIVE_USEFUL, &err);
    assert_non_null(cpu);
    assert_non_null(useful);
    NEAR(cpu->threads[0].share_ns, 5);
    NEAR(cpu->threads[1].share_ns, 5);
    NEAR(cpu->threads[1].run_ns, 10);
    NEAR(useful->threads[0].share_ns, 2 + 6); /* alone from 4 */
    NEAR(useful->threads[1].share_ns, 2);
    NEAR(useful->threads[1].run_ns, 4);
    NEAR(useful->threads[1].state_ns[GCS_TRACE_GC_SEARCH], 6);
    gcs_acct_free(cpu);
    gcs_acct_free(useful);
    gcs_trace_free(t);
}

/* Groups by class and by an arbitrary labelling, all from one computation. */
static void test_regrouping(void **state)
{
    (void)state;
    gcs_trace *t = test_trace_parse(HDR
                         "thread 1 0 main main\n"
                         "thread 2 0 mutator m0\n"
                         "thread 3 0 mutator m1\n"
                         "thread 4 0 gc w0\n"
                         "thread 5 0 gc w1\n"
                         "e 0 4 gc-idle\n"
                         "e 0 5 gc-idle\n"
                         "e 0 1 blocked-barrier\n"
                         "e 10 2 gc-stopped\n"
                         "e 10 3 gc-stopped\n"
                         "e 10 4 gc-mark\n"
                         "e 10 5 gc-mark\n"
                         "e 14 5 gc-idle\n"
                         "e 16 4 gc-idle\n"
                         "e 16 2 running\n"
                         "e 16 3 running\n"
                         "e 30 2 exited\n"
                         "e 30 3 exited\n"
                         "e 30 1 running\n"
                         "end 32\n");
    gcs_err err;
    gcs_acct *a = gcs_acct_compute(t, 0, &err);
    assert_non_null(a);
    gcs_acct_bottle *by_thread = gcs_acct_bottle_make(a, GCS_ACCT_BY_THREAD, NULL, &err);
    gcs_acct_bottle *by_class = gcs_acct_bottle_make(a, GCS_ACCT_BY_CLASS, NULL, &err);
    const char *labels[] = {"app", "app", "app", "collector", "collector"};
    gcs_acct_bottle *by_label = gcs_acct_bottle_make(a, GCS_ACCT_BY_LABEL, labels, &err);
    assert_non_null(by_thread);
    assert_non_null(by_class);
    assert_non_null(by_label);
    assert_int_equal(by_thread->nboxes, 5);
    assert_int_equal(by_class->nboxes, 3);
    assert_int_equal(by_label->nboxes, 2);
    /* classes: mutator P 2 (10+14 each, share 24), gc: run 6+4=10, share 2+4=6 -> P 5/3, main: 2 alone */
    assert_string_equal(by_class->boxes[0].label, "mutator");
    assert_int_equal(by_class->boxes[0].nthreads, 2);
    NEAR(by_class->boxes[0].share_ns, 24);
    NEAR(by_class->boxes[0].run_ns, 48);
    NEAR(by_class->boxes[0].parallelism, 2);
    assert_string_equal(by_class->boxes[1].label, "gc");
    NEAR(by_class->boxes[1].share_ns, 6);
    NEAR(by_class->boxes[1].parallelism, 10.0 / 6);
    assert_string_equal(by_class->boxes[2].label, "main");
    NEAR(by_class->boxes[2].parallelism, 1);
    /* labels: app mixes main and mutator */
    const gcs_acct_box *app = strcmp(by_label->boxes[0].label, "app") == 0 ? &by_label->boxes[0]
                                                                            : &by_label->boxes[1];
    assert_string_equal(app->cls, "mixed");
    assert_int_equal(app->nthreads, 3);
    NEAR(app->share_ns, 26);
    NEAR(app->run_ns, 50);
    double sum_t = 0, sum_c = 0, sum_l = 0;
    for (size_t k = 0; k < by_thread->nboxes; k++)
        sum_t += by_thread->boxes[k].share_ns;
    for (size_t k = 0; k < by_class->nboxes; k++)
        sum_c += by_class->boxes[k].share_ns;
    for (size_t k = 0; k < by_label->nboxes; k++)
        sum_l += by_label->boxes[k].share_ns;
    NEAR(sum_t, 32);
    NEAR(sum_c, 32);
    NEAR(sum_l, 32);
    assert_null(gcs_acct_bottle_make(a, GCS_ACCT_BY_LABEL, NULL, &err));

    /* table and JSON carry every box */
    gcs_table *tab = gcs_acct_bottle_table(by_class, "x");
    assert_int_equal(gcs_table_rows(tab), 3);
    gcs_table_free(tab);
    json_t *j = gcs_acct_bottle_to_json(by_class);
    assert_int_equal(json_array_size(json_object_get(j, "boxes")), 3);
    NEAR(json_real_value(json_object_get(j, "idle_ms")), 0);
    json_decref(j);

    char path[] = "/tmp/gcs-test-bottle-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gcs_acct_bottle_write_svg(by_thread, "t", NULL, path, &err), 0);
    FILE *fp = fopen(path, "r");
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    unlink(path);
    assert_non_null(strstr(buf, "<svg"));
    assert_non_null(strstr(buf, ">m0<"));
    assert_non_null(strstr(buf, "P 2.00"));
    gcs_acct_bottle_free(by_thread);
    gcs_acct_bottle_free(by_class);
    gcs_acct_bottle_free(by_label);
    gcs_acct_free(a);
    gcs_trace_free(t);
}

/* Single-threaded run: init 10, GC 10 (50..60), shutdown 20; T = 120. */
static const char st_run[] = HDR
    "thread 1 0 main main\n"
    "thread 2 10 mutator m0\n"
    "thread 3 0 gc w0\n"
    "e 0 3 gc-idle\n"
    "e 10 1 blocked-barrier\n"
    "e 50 2 gc-stopped\n"
    "e 50 3 gc-mark\n"
    "e 60 3 gc-idle\n"
    "e 60 2 running\n"
    "e 100 2 exited\n"
    "e 100 1 running\n"
    "end 120\n";

/* Two mutators, T = 80: init 10, shutdown 20 (seq 30).  GC 1 from 30, when
 * m1 stops, while m0 still runs to its safepoint at 32 (time-to-safepoint
 * is pause time, as the collector counts it), work 31..35, over when m0
 * resumes at 35; m1 wakes 1 late (lag, not GC).  GC 2 52..54 catches m0 in
 * a lock wait (sync [20,25) + [50,52) = 7).  m0 exits at 56, m1 at 60
 * (imbalance 4).  T_GC = 5 + 2 = 7. */
static const char mt_run[] = HDR
    "thread 1 0 main main\n"
    "thread 2 10 mutator m0\n"
    "thread 3 10 mutator m1\n"
    "thread 4 0 gc w0\n"
    "e 0 4 gc-idle\n"
    "e 10 1 blocked-barrier\n"
    "e 20 2 blocked-lock\n"
    "e 25 2 running\n"
    "e 30 3 gc-stopped\n"
    "e 31 4 gc-mark\n"
    "e 32 2 gc-stopped\n"
    "e 34 4 gc-search\n"
    "e 35 4 gc-idle\n"
    "e 35 2 running\n"
    "e 36 3 running\n"
    "e 50 2 blocked-lock\n"
    "e 52 3 gc-stopped\n"
    "e 52 4 gc-mark\n"
    "e 53 2 gc-stopped\n"
    "e 54 4 gc-idle\n"
    "e 54 2 running\n"
    "e 54 3 running\n"
    "e 56 2 exited\n"
    "e 60 3 exited\n"
    "e 60 1 running\n"
    "end 80\n";

static void test_speedup_stack(void **state)
{
    (void)state;
    gcs_trace *st = test_trace_parse(st_run), *mt = test_trace_parse(mt_run);
    gcs_err err;
    gcs_acct_run_times rs, rm;
    assert_int_equal(gcs_acct_run_times_compute(st, NULL, &rs, &err), 0);
    assert_int_equal(gcs_acct_run_times_compute(mt, "mutator", &rm, &err), 0);
    gcs_acct_run_times as_gc;
    assert_int_equal(gcs_acct_run_times_compute(mt, "gc", &as_gc, &err), 0);
    assert_int_equal(as_gc.napp, 1); /* any class can be the application */
    assert_int_equal(rs.napp, 1);
    NEAR(rs.wall_ns, 120);
    NEAR(rs.gc_ns, 10);
    NEAR(rs.seq_ns, 30);
    NEAR(rs.sync_ns, 0);
    NEAR(rs.exit_ns, 0);
    assert_int_equal(rm.napp, 2);
    NEAR(rm.wall_ns, 80);
    NEAR(rm.gc_ns, 7);
    NEAR(rm.seq_ns, 30);
    NEAR(rm.sync_ns, 7);
    NEAR(rm.exit_ns, 4);
    NEAR(rm.gc_lag_ns, 1);
    NEAR(rs.gc_lag_ns, 0);

    gcs_acct_stack s;
    assert_int_equal(gcs_acct_stack_compute(&rs, &rm, NULL, &s, &err), 0);
    assert_int_equal(s.n, 2);
    NEAR(s.speedup, 1.5);
    NEAR(s.gc, (2 * 7.0 - 10) / 80);
    NEAR(s.init, (2 * 30.0 - 30) / 80);
    NEAR(s.sync, 7.0 / 80);
    NEAR(s.imbalance, 4.0 / 80);
    NEAR(s.other, -0.0625);
    double v[GCS_ACCT_STACK_COMPONENTS], sum = 0;
    gcs_acct_stack_values(&s, v);
    for (int i = 0; i < GCS_ACCT_STACK_COMPONENTS; i++)
        sum += v[i];
    NEAR(sum, 2);
    json_t *j = gcs_acct_stack_to_json(&s);
    NEAR(json_real_value(json_object_get(j, "sum")), 2);
    NEAR(json_real_value(json_object_get(json_object_get(j, "components"), "other")), -0.0625);
    json_decref(j);

    /* the ST run against itself: speedup 1, every loss 0 */
    gcs_acct_stack self;
    assert_int_equal(gcs_acct_stack_compute(&rs, &rs, NULL, &self, &err), 0);
    NEAR(self.speedup, 1);
    NEAR(self.gc, 0);
    NEAR(self.init, 0);
    NEAR(self.other, 0);

    /* the roles cannot be swapped */
    assert_int_equal(gcs_acct_stack_compute(&rm, &rs, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "single-threaded run has 2"));
    gcs_acct_run_times none = rm;
    none.napp = 0;
    assert_int_equal(gcs_acct_stack_compute(&rs, &none, "worker", &s, &err), -1);
    assert_non_null(strstr(err.msg, "no application (class \"worker\")"));

    char path[] = "/tmp/gcs-test-stack-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gcs_acct_stack two[2] = {self, s};
    const char *labels[] = {"N = 1", "N = 2"};
    assert_int_equal(gcs_acct_stacks_write_svg(two, labels, 2, "stack", NULL, path, &err), 0);
    unlink(path);
    gcs_trace_free(st);
    gcs_trace_free(mt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thesis_vector),
        cmocka_unit_test(test_idle_and_lifetimes),
        cmocka_unit_test(test_spinning_mask),
        cmocka_unit_test(test_regrouping),
        cmocka_unit_test(test_speedup_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
