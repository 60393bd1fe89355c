/* test_gccost.c -- calibrating the marker's costs (calibrate/gccost.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gcscale/calibrate.h"
#include "gcscale/gc.h"

static void test_costs_are_fitted_and_positive(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    gcs_err err;
    json_t *details = NULL;
    assert_int_equal(gcs_calibrate_gc_costs(1, p, &details, &err), 0);
    assert_int_equal(p->has_gc_cost, 1);
    assert_true(p->gc_cost_object_ns > 0 && p->gc_cost_object_ns < 1000);
    assert_true(p->gc_cost_pointer_ns > 0 && p->gc_cost_pointer_ns < 1000);
    assert_true(p->gc_cost_steal_ns >= 0 && isfinite(p->gc_cost_steal_ns));
    /* Every load point is reported with its fitted value and residual. */
    json_t *points = json_object_get(details, "points");
    assert_int_equal(json_array_size(points), 12);
    json_t *first = json_array_get(points, 0);
    assert_true(json_real_value(json_object_get(first, "t1_ns")) > 0);
    assert_non_null(json_object_get(first, "residual"));
    assert_true(json_real_value(json_object_get(details, "rms_rel_residual")) >= 0);
    /* The collector is gone afterwards: a later user can start its own. */
    assert_false(gcs_gc_is_initialized());
    json_decref(details);
    gcs_profile_free(p);
}

static void test_refuses_when_a_collector_runs(void **state)
{
    (void)state;
    gcs_err err;
    assert_int_equal(gcs_gc_init(NULL, &err), 0);
    gcs_profile *p = gcs_profile_new(1);
    json_t *details = NULL;
    assert_int_equal(gcs_calibrate_gc_costs(1, p, &details, &err), -1);
    assert_non_null(strstr(err.msg, "already runs"));
    assert_null(details);
    assert_int_equal(p->has_gc_cost, 0);
    gcs_profile_free(p);
    gcs_gc_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_costs_are_fitted_and_positive),
        cmocka_unit_test(test_refuses_when_a_collector_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
