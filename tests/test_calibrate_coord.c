/* test_calibrate_coord.c -- the coordination calibration (calibrate/coord.c)
 * on a real small run: two workers, quick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/calibrate.h"
#include "gcscale/model.h"

static void test_coord_calibration(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    p->nodes[0].ncpus = 2;
    gcs_err err;
    json_t *details = NULL;
    assert_int_equal(gcs_calibrate_coord(1, 1, p, &details, &err), -1); /* one worker: nothing to fit */
    if (gcs_calibrate_coord(1, 2, p, &details, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(p->has_gc_coord, 1);
    assert_int_equal(p->coord.max_threads, 2);
    const gcs_profile_coord *c = &p->coord;
    double v[] = {c->wake_a, c->wake_b, c->tail_a, c->tail_b, c->idle_a, c->idle_b, c->spread_ns, c->attempt_ns};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_true(isfinite(v[i]) && v[i] >= 0);
    /* waking a sleeping thread is never free: a wake law of 0 at P = 1 means
     * the samples were not read */
    assert_true(c->wake_a + c->wake_b > 0);
    gcs_profile_uncertainty u;
    assert_int_equal(gcs_profile_get_uncertainty(p, "gc_coord.wake_ns.a", &u), 1);
    assert_true(u.n > 0);
    /* with one P >= 2 the idle law's slope is not determined: flagged */
    assert_non_null(gcs_profile_unreliable(p, "gc_coord.idle_ns.b"));
    assert_true(c->idle_b == 0);
    assert_non_null(json_object_get(details, "fits"));
    json_decref(details);
    gcs_profile_free(p);
}

int main(void)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        printf("skipped: one CPU\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coord_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
