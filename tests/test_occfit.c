/* test_occfit.c -- calibrate/occfit.c: the open and closed (MVA) occupancy
 * models, and fitting S_O back from points they generate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gcscale/occfit.h"

#define NPOINTS 12

/* Deterministic +-1% noise with both signs and uneven sizes. */
static double noise(int i)
{
    static const double pattern[] = {+0.010, -0.007, +0.004, -0.010, +0.008, -0.003,
                                     +0.006, -0.009, +0.002, -0.005, +0.009, -0.001};
    return pattern[i % 12];
}

static void assert_close_rel(double got, double want, double rel, const char *what)
{
    if (!isfinite(got) || fabs(got - want) > rel * fabs(want))
        fail_msg("%s: got %.6g, want %.6g (within %.3g%%)", what, got, want, 100 * rel);
}

/* Open-model points for loads rho = S_O X from 5% to 85%. */
static void open_points(double m1, double s_o, double noise_scale, gcs_occ_point *pts)
{
    for (int i = 0; i < NPOINTS; i++) {
        double rho = 0.05 + 0.8 * i / (NPOINTS - 1);
        double x = rho / s_o;
        pts[i].throughput_per_ns = x;
        pts[i].latency_ns = gcs_occfit_open_latency(m1, s_o, x) * (1 + noise_scale * noise(i));
        pts[i].outstanding = x * pts[i].latency_ns; /* Little's law */
    }
}

static void closed_points(double m1, double s_o, double think, double noise_scale,
                          gcs_occ_point *pts)
{
    static const int population[NPOINTS] = {1, 2, 3, 4, 6, 8, 10, 12, 16, 24, 32, 48};
    for (int i = 0; i < NPOINTS; i++) {
        double r;
        double x = gcs_occfit_closed_mva(m1, s_o, think, population[i], &r);
        pts[i].outstanding = population[i];
        pts[i].throughput_per_ns = x;
        pts[i].latency_ns = r * (1 + noise_scale * noise(i));
    }
}

static void test_open_model_values(void **state)
{
    (void)state;
    /* rho = 0.5: the queueing term equals S_O. */
    assert_true(fabs(gcs_occfit_open_latency(270, 230, 0.5 / 230) - 500) < 1e-9);
    assert_true(gcs_occfit_open_latency(270, 230, 0) == 270);
    /* Saturation and nonsense give an infinite latency, never NaN. */
    assert_true(isinf(gcs_occfit_open_latency(270, 230, 1.0 / 230)));
    assert_true(isinf(gcs_occfit_open_latency(270, 230, 0.01)));
    assert_true(isinf(gcs_occfit_open_latency(NAN, 230, 0.001)));
    assert_true(isinf(gcs_occfit_open_latency(270, -1, 0.001)));
}

static void test_mva_one_customer(void **state)
{
    (void)state;
    double r = 0;
    /* One customer never queues: R = D + S_O = M1 and X = 1/(Z + M1). */
    double x = gcs_occfit_closed_mva(270, 230, 1000, 1, &r);
    assert_true(fabs(r - 270) < 1e-9);
    assert_true(fabs(x - 1.0 / 1270) < 1e-15);
    x = gcs_occfit_closed_mva(90, 20, 0, 1, &r);
    assert_true(fabs(r - 90) < 1e-9);
    assert_true(fabs(x * 90 - 1) < 1e-12);
}

static void test_mva_known_values(void **state)
{
    (void)state;
    double r = 0;
    /* Two customers by hand: D = 60, S = 40, Z = 100.
     * N=1: R = 100, X = 1/200, Q = 40/200 = 0.2.
     * N=2: R = 60 + 40*1.2 = 108, X = 2/208. */
    double x = gcs_occfit_closed_mva(100, 40, 100, 2, &r);
    assert_true(fabs(r - 108) < 1e-9);
    assert_true(fabs(x - 2.0 / 208) < 1e-15);
    /* Many customers: throughput approaches the bottleneck's 1/S_O and
     * latency N*S_O - Z (asymptotic bounds). */
    x = gcs_occfit_closed_mva(100, 40, 100, 1000, &r);
    assert_close_rel(x, 1.0 / 40, 1e-6, "saturated throughput");
    assert_close_rel(r, 1000 * 40.0 - 100, 1e-4, "saturated latency");
    /* Invalid populations give zero throughput and infinite latency. */
    assert_true(gcs_occfit_closed_mva(100, 40, 100, 0, &r) == 0);
    assert_true(isinf(r));
    assert_true(gcs_occfit_closed_mva(100, NAN, 100, 4, &r) == 0);
}

static void test_open_fit_exact(void **state)
{
    (void)state;
    static const double cases[][2] = {{270, 230}, {850, 490}, {100, 20}, {90, 85}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gcs_occ_point pts[NPOINTS];
        gcs_occfit_result res;
        gcs_err err = {{0}};
        open_points(cases[c][0], cases[c][1], 0, pts);
        if (gcs_occfit_open(pts, NPOINTS, cases[c][0], &res, &err) < 0)
            fail_msg("case %zu: %s", c, err.msg);
        assert_close_rel(res.s_o_ns, cases[c][1], 1e-4, "open fit S_O");
        assert_true(res.rms_rel_residual < 1e-6);
        assert_true(res.m1_ns == cases[c][0]);
        assert_int_equal(res.npoints, NPOINTS);
        assert_true(res.iterations >= 0 && res.iterations <= 200);
    }
}

static void test_open_fit_noisy(void **state)
{
    (void)state;
    gcs_occ_point pts[NPOINTS];
    gcs_occfit_result res;
    gcs_err err = {{0}};
    open_points(270, 230, 1, pts);
    if (gcs_occfit_open(pts, NPOINTS, 270, &res, &err) < 0)
        fail_msg("%s", err.msg);
    assert_close_rel(res.s_o_ns, 230, 0.02, "noisy open fit S_O");
    /* The residual reflects the noise: about 0.7% rms, never zero. */
    assert_true(res.rms_rel_residual > 0.001 && res.rms_rel_residual < 0.02);
    /* The fitted S_O keeps every point below saturation. */
    for (int i = 0; i < NPOINTS; i++)
        assert_true(res.s_o_ns * pts[i].throughput_per_ns < 1);
}

static void test_closed_fit(void **state)
{
    (void)state;
    static const double cases[][3] = {{270, 230, 0}, {100, 40, 50}, {850, 490, 2000}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int noisy = 0; noisy <= 1; noisy++) {
            gcs_occ_point pts[NPOINTS];
            gcs_occfit_result res;
            gcs_err err = {{0}};
            closed_points(cases[c][0], cases[c][1], cases[c][2], noisy, pts);
            if (gcs_occfit_closed(pts, NPOINTS, cases[c][0], cases[c][2], &res, &err) < 0)
                fail_msg("case %zu noisy %d: %s", c, noisy, err.msg);
            assert_close_rel(res.s_o_ns, cases[c][1], noisy ? 0.02 : 1e-4, "closed fit S_O");
            assert_true(res.s_o_ns > 0 && res.s_o_ns <= cases[c][0]);
            if (!noisy)
                assert_true(res.rms_rel_residual < 1e-6);
            else
                assert_true(res.rms_rel_residual > 0.001 && res.rms_rel_residual < 0.02);
        }
    }
}

/* Fractional populations (average concurrency) interpolate between the
 * integer ones; a fit over them still lands on the truth. */
static void test_closed_fit_fractional(void **state)
{
    (void)state;
    gcs_occ_point pts[5];
    for (int i = 0; i < 5; i++) {
        int n = 2 + 3 * i;
        double r;
        gcs_occfit_closed_mva(200, 80, 300, n, &r);
        pts[i] = (gcs_occ_point){.outstanding = n, .throughput_per_ns = 0, .latency_ns = r};
    }
    gcs_occfit_result res;
    gcs_err err = {{0}};
    assert_int_equal(gcs_occfit_closed(pts, 5, 200, 300, &res, &err), 0);
    assert_close_rel(res.s_o_ns, 80, 1e-4, "closed fit S_O");
    pts[0].outstanding = 2.5;
    double r2, r3;
    gcs_occfit_closed_mva(200, 80, 300, 2, &r2);
    gcs_occfit_closed_mva(200, 80, 300, 3, &r3);
    pts[0].latency_ns = (r2 + r3) / 2;
    assert_int_equal(gcs_occfit_closed(pts, 5, 200, 300, &res, &err), 0);
    assert_close_rel(res.s_o_ns, 80, 1e-4, "closed fit S_O, fractional N");
}

/* No contention at all: S_O goes to its lower bound, still a number. */
static void test_fit_without_contention(void **state)
{
    (void)state;
    gcs_occ_point pts[4];
    for (int i = 0; i < 4; i++)
        pts[i] = (gcs_occ_point){.outstanding = i + 1, .throughput_per_ns = 0.001 * (i + 1),
                                 .latency_ns = 100};
    gcs_occfit_result res;
    gcs_err err = {{0}};
    if (gcs_occfit_open(pts, 4, 100, &res, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(res.s_o_ns == 0 && res.bound == -1);
    assert_true(isfinite(res.rms_rel_residual) && res.rms_rel_residual < 1e-3);
    /* Latency far above what any S_O <= M1 explains: S_O is pinned at the
     * bound and the residual says the model does not fit. */
    for (int i = 0; i < 4; i++)
        pts[i].latency_ns = 100000;
    if (gcs_occfit_closed(pts, 4, 100, 0, &res, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(res.s_o_ns == 100 && res.bound == 1 && res.s_o_max_ns == 100);
    assert_true(isfinite(res.rms_rel_residual) && res.rms_rel_residual > 0.9);
}

/* Load points that contradict the model: every loaded latency (12-15 ns)
 * far below the idle M1 (28.7 ns, one noisy idle chase) -- the read points
 * of a real quick calibration.  The fits used to return rc 0 with S_O = 0
 * (open) or 5e-207 ns (closed), which calibrate stored as a measured S_O;
 * now both say the data lean on the lower bound and S_O is exactly 0. */
static void test_fit_at_lower_bound(void **state)
{
    (void)state;
    gcs_occ_point p[] = {
        {1, 0.08056737449, 12.41197205}, {2, 0.1622453312, 12.32701111},
        {2, 0.1624601382, 12.31143188},  {4, 0.3048753256, 13.12011719},
        {4, 0.3094532507, 12.93392181},  {8, 0.6190006742, 12.92405701},
        {8, 0.5653947711, 14.14948273},  {16, 1.210323653, 13.21960449},
        {16, 1.166750311, 13.71365356},  {32, 2.107812498, 15.18206787},
    };
    gcs_occfit_result res;
    gcs_err err = {{0}};
    assert_int_equal(gcs_occfit_open(p, 10, 28.73063374, &res, &err), 0);
    assert_int_equal(res.bound, -1);
    assert_true(res.s_o_ns == 0);
    assert_true(res.rms_rel_residual > 1);
    assert_true(res.s_o_max_ns > 0 && res.s_o_max_ns <= 28.73063374);
    assert_int_equal(gcs_occfit_closed(p, 10, 28.73063374, 0, &res, &err), 0);
    assert_int_equal(res.bound, -1);
    assert_true(res.s_o_ns == 0);
    assert_true(res.rms_rel_residual > 1);

    /* Honest data keep their interior fit. */
    gcs_occ_point good[NPOINTS];
    open_points(270, 230, 1, good);
    assert_int_equal(gcs_occfit_open(good, NPOINTS, 270, &res, &err), 0);
    assert_int_equal(res.bound, 0);
    closed_points(100, 40, 50, 1, good);
    assert_int_equal(gcs_occfit_closed(good, NPOINTS, 100, 50, &res, &err), 0);
    assert_int_equal(res.bound, 0);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    gcs_occ_point good[NPOINTS];
    open_points(270, 230, 0, good);
    gcs_occfit_result res;
    gcs_err err = {{0}};

    assert_int_equal(gcs_occfit_open(good, 1, 270, &res, &err), -1);
    assert_non_null(strstr(err.msg, "need at least 2 load points, got 1"));
    assert_int_equal(gcs_occfit_closed(NULL, 5, 270, 0, &res, &err), -1);
    assert_non_null(strstr(err.msg, "need at least 2 load points"));
    assert_int_equal(gcs_occfit_open(good, NPOINTS, 0, &res, &err), -1);
    assert_non_null(strstr(err.msg, "idle latency M1 must be positive"));
    assert_int_equal(gcs_occfit_closed(good, NPOINTS, NAN, 0, &res, &err), -1);
    assert_non_null(strstr(err.msg, "idle latency M1"));
    assert_int_equal(gcs_occfit_closed(good, NPOINTS, 270, -1, &res, &err), -1);
    assert_non_null(strstr(err.msg, "think time"));

    gcs_occ_point bad[NPOINTS];
    memcpy(bad, good, sizeof bad);
    bad[3].latency_ns = NAN;
    assert_int_equal(gcs_occfit_open(bad, NPOINTS, 270, &res, &err), -1);
    assert_non_null(strstr(err.msg, "point 3: latency must be positive"));
    gcs_occ_point closed_good[NPOINTS];
    closed_points(270, 230, 0, 0, closed_good);
    assert_int_equal(gcs_occfit_closed(closed_good, NPOINTS, 270, 0, &res, &err), 0);
    memcpy(bad, closed_good, sizeof bad);
    bad[2].latency_ns = -10;
    assert_int_equal(gcs_occfit_closed(bad, NPOINTS, 270, 0, &res, &err), -1);
    assert_non_null(strstr(err.msg, "point 2: latency"));
    memcpy(bad, good, sizeof bad);
    bad[5].throughput_per_ns = 0;
    assert_int_equal(gcs_occfit_open(bad, NPOINTS, 270, &res, &err), -1);
    assert_non_null(strstr(err.msg, "point 5: throughput must be positive"));
    memcpy(bad, good, sizeof bad);
    bad[1].throughput_per_ns = INFINITY;
    assert_int_equal(gcs_occfit_open(bad, NPOINTS, 270, &res, &err), -1);
    assert_non_null(strstr(err.msg, "point 1: throughput"));
    memcpy(bad, closed_good, sizeof bad);
    bad[0].outstanding = 0.5;
    assert_int_equal(gcs_occfit_closed(bad, NPOINTS, 270, 0, &res, &err), -1);
    assert_non_null(strstr(err.msg, "point 0: outstanding requests must be between 1"));
}

/* ---- uncertainty and reliability (gcs_occfit_reliable) ---------------------- */

static void test_uncertainty_of_a_good_fit(void **state)
{
    (void)state;
    gcs_occ_point pts[NPOINTS];
    gcs_occfit_result res;
    gcs_err err = {{0}};
    char why[256];
    /* 1% noise: a small standard error, an interval around the truth. */
    open_points(270, 230, 1, pts);
    assert_int_equal(gcs_occfit_open(pts, NPOINTS, 270, &res, &err), 0);
    assert_true(res.s_o_stderr_ns > 0 && res.s_o_stderr_ns < 0.05 * res.s_o_ns);
    assert_true(res.s_o_ci95_lo_ns < res.s_o_ns && res.s_o_ns < res.s_o_ci95_hi_ns);
    assert_true(res.s_o_ci95_lo_ns < 230 && 230 < res.s_o_ci95_hi_ns);
    assert_true(res.s_o_ci95_lo_ns > 0 && res.s_o_ci95_hi_ns <= res.s_o_max_ns);
    assert_int_equal(gcs_occfit_reliable(&res, why, sizeof why), 1);
    assert_string_equal(why, "");
    /* Noise-free: the interval closes on the point. */
    open_points(270, 230, 0, pts);
    assert_int_equal(gcs_occfit_open(pts, NPOINTS, 270, &res, &err), 0);
    assert_true(res.s_o_stderr_ns < 1e-6 * res.s_o_ns);
    /* The closed model has one too. */
    closed_points(100, 40, 50, 1, pts);
    assert_int_equal(gcs_occfit_closed(pts, NPOINTS, 100, 50, &res, &err), 0);
    assert_true(res.s_o_ci95_lo_ns < 40 && 40 < res.s_o_ci95_hi_ns);
    assert_int_equal(gcs_occfit_reliable(&res, why, sizeof why), 1);
}

/* S_O fit at 0: latencies at M1 whatever the load. */
static void test_degenerate_no_contention(void **state)
{
    (void)state;
    gcs_occ_point pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = (gcs_occ_point){.throughput_per_ns = 0.01 * (i + 1), .latency_ns = 100,
                                 .outstanding = i + 1};
    gcs_occfit_result res;
    gcs_err err = {{0}};
    char why[256];
    assert_int_equal(gcs_occfit_open(pts, 8, 100, &res, &err), 0);
    assert_int_equal(res.bound, -1);
    assert_true(res.s_o_ns == 0);
    assert_true(isnan(res.s_o_stderr_ns) && isnan(res.s_o_ci95_lo_ns));
    assert_int_equal(gcs_occfit_reliable(&res, why, sizeof why), 0);
    assert_non_null(strstr(why, "fit found no contention: 0.0 ns at 8 load points"));
    assert_int_equal(gcs_occfit_closed(pts, 8, 100, 0, &res, &err), 0);
    assert_int_equal(gcs_occfit_reliable(&res, why, sizeof why), 0);
    assert_non_null(strstr(why, "no contention"));
}

/* Flat throughput: more load, no more throughput, latency up (a saturated
 * node, or load points that did not load it): no S_O below M1 explains it. */
static void test_degenerate_flat_throughput(void **state)
{
    (void)state;
    gcs_occ_point pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = (gcs_occ_point){.throughput_per_ns = 0.02, .latency_ns = 100 * (1 + i),
                                 .outstanding = 2 * (1 + i)};
    gcs_occfit_result res;
    gcs_err err = {{0}};
    char why[256];
    /* The open model cannot describe it: flagged with the residual. */
    assert_int_equal(gcs_occfit_open(pts, 8, 100, &res, &err), 0);
    assert_int_equal(gcs_occfit_reliable(&res, why, sizeof why), 0);
    assert_non_null(strstr(why, "the model does not describe the load points: rms relative residual"));
    assert_non_null(strstr(why, "at 8 load points"));
    assert_true(res.s_o_ns > 0);
    /* The closed one reads it as a saturated server, S_O = 1 / X = 50 ns. */
    assert_int_equal(gcs_occfit_closed(pts, 8, 100, 0, &res, &err), 0);
    assert_int_equal(gcs_occfit_reliable(&res, why, sizeof why), 1);
    assert_close_rel(res.s_o_ns, 50, 0.05, "closed S_O of a saturated node");
}

/* Noise only: latencies scattered around M1 with no trend in the load. */
static void test_degenerate_noise_only(void **state)
{
    (void)state;
    gcs_occ_point pts[NPOINTS];
    for (int i = 0; i < NPOINTS; i++)
        pts[i] = (gcs_occ_point){.throughput_per_ns = 0.001 * (i + 1),
                                 .latency_ns = 100 * (1 + 5 * noise(i)), .outstanding = 1 + i};
    gcs_occfit_result res;
    gcs_err err = {{0}};
    char why[256];
    assert_int_equal(gcs_occfit_open(pts, NPOINTS, 100, &res, &err), 0);
    assert_int_equal(gcs_occfit_reliable(&res, why, sizeof why), 0);
    assert_true(strlen(why) > 0);
    assert_null(strchr(why, '\n'));
}

/* One point: refused with the reason, and two identical points leave no
 * degrees of freedom for a standard error worth having. */
static void test_degenerate_one_point(void **state)
{
    (void)state;
    gcs_occ_point pt = {.throughput_per_ns = 0.01, .latency_ns = 150, .outstanding = 1.5};
    gcs_occfit_result res;
    gcs_err err = {{0}};
    assert_int_equal(gcs_occfit_open(&pt, 1, 100, &res, &err), -1);
    assert_non_null(strstr(err.msg, "need at least 2 load points, got 1"));
    assert_int_equal(gcs_occfit_closed(&pt, 1, 100, 0, &res, &err), -1);
    assert_non_null(strstr(err.msg, "need at least 2 load points, got 1"));
}

/* The rule itself, on results made by hand. */
static void test_reliable_rule(void **state)
{
    (void)state;
    char why[256];
    gcs_occfit_result r = {.m1_ns = 100, .s_o_ns = 20, .s_o_max_ns = 100, .npoints = 5,
                           .rms_rel_residual = 0.2, .s_o_stderr_ns = 2, .s_o_ci95_lo_ns = 15,
                           .s_o_ci95_hi_ns = 25};
    assert_int_equal(gcs_occfit_reliable(&r, why, sizeof why), 1);
    r.rms_rel_residual = 0.6;
    assert_int_equal(gcs_occfit_reliable(&r, why, sizeof why), 0);
    assert_non_null(strstr(why, "rms relative residual 0.60"));
    r.rms_rel_residual = 0.2;
    r.s_o_stderr_ns = 30; /* the data do not determine it */
    assert_int_equal(gcs_occfit_reliable(&r, why, sizeof why), 0);
    assert_non_null(strstr(why, "do not determine it"));
    r.s_o_stderr_ns = NAN;
    assert_int_equal(gcs_occfit_reliable(&r, why, sizeof why), 0);
    r.s_o_stderr_ns = 2;
    r.s_o_ns = 100; /* not below M1 */
    assert_int_equal(gcs_occfit_reliable(&r, why, sizeof why), 0);
    assert_non_null(strstr(why, "upper bound"));
    r.s_o_ns = NAN;
    assert_int_equal(gcs_occfit_reliable(&r, why, sizeof why), 0);
    assert_non_null(strstr(why, "no finite S_O"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_model_values),
        cmocka_unit_test(test_mva_one_customer),
        cmocka_unit_test(test_mva_known_values),
        cmocka_unit_test(test_open_fit_exact),
        cmocka_unit_test(test_open_fit_noisy),
        cmocka_unit_test(test_closed_fit),
        cmocka_unit_test(test_closed_fit_fractional),
        cmocka_unit_test(test_fit_without_contention),
        cmocka_unit_test(test_fit_at_lower_bound),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_uncertainty_of_a_good_fit),
        cmocka_unit_test(test_degenerate_no_contention),
        cmocka_unit_test(test_degenerate_flat_throughput),
        cmocka_unit_test(test_degenerate_noise_only),
        cmocka_unit_test(test_degenerate_one_point),
        cmocka_unit_test(test_reliable_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
