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
    /* A law's coefficients are kept as fitted, of either sign (a lone
     * worker's wake and tail are the longest on a 2-vCPU VM); the costs of
     * their own are at least 0. */
    const char *law_key[] = {"gc_coord.wake_ns.a", "gc_coord.wake_ns.b", "gc_coord.tail_ns.a",
                             "gc_coord.tail_ns.b", "gc_coord.idle_ns.a", "gc_coord.idle_ns.b"};
    double law[] = {c->wake_a, c->wake_b, c->tail_a, c->tail_b, c->idle_a, c->idle_b};
    json_t *fits = json_object_get(details, "fits");
    assert_non_null(fits);
    for (size_t i = 0; i < sizeof law / sizeof law[0]; i++) {
        assert_true(isfinite(law[i]) && fabs(law[i]) < 1e9);
        json_t *f = json_object_get(fits, law_key[i]);
        assert_non_null(f);
        assert_true(json_real_value(json_object_get(f, "kept")) == law[i]);
        if (i != 5) /* idle_b: not determined with one P >= 2, 0 */
            assert_true(json_real_value(json_object_get(f, "fitted")) == law[i]);
    }
    assert_true(isfinite(c->spread_ns) && c->spread_ns >= 0);
    assert_true(isfinite(c->attempt_ns) && c->attempt_ns >= 0);
    /* the random array's thieves take batches: more than one entry a search
     * (6.2-6.4 on the Intel VM), and never more than the collector's 16 */
    assert_true(c->attempts_per_search > 1 && c->attempts_per_search <= 16);
    assert_true(json_real_value(json_object_get(details, "attempts_per_search")) == c->attempts_per_search);
    /* (that a profile keeps negative ones: test_model's test_coord_profile_keys) */
    /* waking a sleeping thread is never free: a wake law of 0 at P = 1 means
     * the samples were not read */
    assert_true(c->wake_a > 0);
    gcs_profile_uncertainty u;
    assert_int_equal(gcs_profile_get_uncertainty(p, "gc_coord.wake_ns.a", &u), 1);
    assert_true(u.n > 0);
    /* with one P >= 2 the idle law's slope is not determined: flagged */
    assert_non_null(gcs_profile_unreliable(p, "gc_coord.idle_ns.b"));
    assert_true(c->idle_b == 0);
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
