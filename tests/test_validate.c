/* test_validate.c -- the measured GC speedup stack: its parts, and that they
 * add up to P whatever the workers did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gcscale/validate.h"

static void test_stack_parts(void **state)
{
    (void)state;
    static gcs_gc_stats s;
    memset(&s, 0, sizeof s);
    /* P = 2, T(2) = 60: worker 0 woke at 0, marked 60 (busy 50, search 10);
     * worker 1 woke at 10, marked 40 (busy 30, search 10), idle 10 at the end.
     * T(1) = 100 with busy 96. */
    s.threads = 2;
    s.mark_ns = 60;
    s.workers[0] = (gcs_gc_worker_stats){.wake_ns = 0, .mark_ns = 60, .busy_ns = 50, .search_ns = 10};
    s.workers[1] = (gcs_gc_worker_stats){.wake_ns = 10, .mark_ns = 40, .busy_ns = 30, .search_ns = 10};
    gcs_validate_stack st;
    gcs_validate_measured_stack(&s, 100, 96, &st);
    assert_true(fabs(st.speedup - 100.0 / 60) < 1e-12);
    assert_true(fabs(st.extra_work - (80.0 - 96) / 60) < 1e-12); /* less work than serial: negative */
    assert_true(fabs(st.search - 20.0 / 60) < 1e-12);
    assert_true(fabs(st.wake - 10.0 / 60) < 1e-12);
    assert_true(fabs(st.tail - 10.0 / 60) < 1e-12);
    double sum = st.speedup + st.extra_work + st.search + st.wake + st.tail + st.other;
    assert_true(fabs(sum - 2) < 1e-12);
}

static void test_stack_adds_up(void **state)
{
    (void)state;
    static gcs_gc_stats s;
    unsigned x = 7;
    for (int P = 1; P <= 16; P++) {
        memset(&s, 0, sizeof s);
        s.threads = P;
        s.mark_ns = 1000 + (x = x * 1103515245u + 12345u) % 1000;
        for (int i = 0; i < P; i++) {
            gcs_gc_worker_stats *w = &s.workers[i];
            w->wake_ns = (x = x * 1103515245u + 12345u) % 100;
            w->mark_ns = s.mark_ns - w->wake_ns - (x = x * 1103515245u + 12345u) % 50;
            w->search_ns = w->mark_ns / 5;
            w->busy_ns = w->mark_ns - w->search_ns;
        }
        gcs_validate_stack st;
        gcs_validate_measured_stack(&s, 1500, 1400, &st);
        double sum = st.speedup + st.extra_work + st.search + st.wake + st.tail + st.other;
        assert_true(fabs(sum - P) < 1e-9);
        assert_true(st.search >= 0 && st.wake >= 0 && st.tail >= 0);
    }
    /* a zero-length mark gives an all-zero stack, not NaN */
    memset(&s, 0, sizeof s);
    s.threads = 2;
    gcs_validate_stack st;
    gcs_validate_measured_stack(&s, 100, 100, &st);
    assert_true(st.speedup == 0 && st.other == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_parts),
        cmocka_unit_test(test_stack_adds_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
