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
#include "../calibrate/calibrate_internal.h"

/* The search law's fit at P = 2 (two CPUs): samples of a forest (no
 * spread) and of one-root heaps (W > 0).  A spread that comes out below 0
 * is dropped and the idle law and the attempt price refitted without it,
 * so that the idle law does not keep what the negative spread made up for;
 * a positive one is kept with the others as one fit. */
static void test_search_fit_refits_without_a_negative_cost(void **state)
{
    (void)state;
    enum { N = 30 };
    double x[N * 4], y[N];
    for (int i = 0; i < N; i++) {
        int forest = i % 3 == 0;
        double w = forest ? 0 : 1.5, att = 4 + (i * 7) % 23;
        x[4 * i] = 2;
        x[4 * i + 1] = 2; /* P log2 P: not used with one P */
        x[4 * i + 2] = 2 * w;
        x[4 * i + 3] = att;
        /* the forest searches longer than the one-root heaps: a negative spread */
        y[i] = (forest ? 2 * 30000.0 : 2 * 12000.0) + 250 * att + ((i * 13) % 5 - 2) * 100.0;
    }
    double v[4];
    int refit[4];
    assert_int_equal(_gcs_calibrate_coord_search_fit(N, x, y, 2, v, refit), 0);
    assert_int_equal(refit[2], 1);
    assert_true(v[2] < 0);
    assert_int_equal(refit[3], 0);
    assert_true(v[1] == 0); /* one P: idle_b not fitted */
    /* the refit: y on (P, attempts) alone, by the normal equations */
    double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
    for (int i = 0; i < N; i++) {
        double a = x[4 * i], b = x[4 * i + 3];
        s11 += a * a, s12 += a * b, s22 += b * b, b1 += a * y[i], b2 += b * y[i];
    }
    double det = s11 * s22 - s12 * s12;
    assert_true(fabs(v[0] - (s22 * b1 - s12 * b2) / det) < 1e-6 * fabs(v[0]));
    assert_true(fabs(v[3] - (s11 * b2 - s12 * b1) / det) < 1e-6 * fabs(v[3]));

    /* A positive spread: one fit, nothing refitted, the truth recovered. */
    for (int i = 0; i < N; i++)
        y[i] = 2 * 500.0 + x[4 * i + 2] * 20000 + 250 * x[4 * i + 3];
    assert_int_equal(_gcs_calibrate_coord_search_fit(N, x, y, 2, v, refit), 0);
    assert_true(!refit[2] && !refit[3]);
    assert_true(fabs(v[0] - 500) < 1e-3 && fabs(v[2] - 20000) < 1e-3 && fabs(v[3] - 250) < 1e-6);
}

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
        cmocka_unit_test(test_search_fit_refits_without_a_negative_cost),
        cmocka_unit_test(test_coord_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
