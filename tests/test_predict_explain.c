/* test_predict_explain.c -- predict's answer in words and its compact table:
 * the causes come from the full table's lost_* columns (a term the model
 * has not got yet is named all the same), coordination's three terms are one
 * cause, contention names its busiest node, and absolute times are claimed
 * only by model v2 on calibrated serial keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gcscale/predict.h"

/* Results for P = 1..n with the given speedup at each P and two nodes. */
static void results(gcs_model_result *r, int n, const double *speedup)
{
    memset(r, 0, sizeof *r * (size_t)n);
    for (int i = 0; i < n; i++) {
        r[i].threads = i + 1;
        r[i].speedup = speedup[i];
        r[i].time_ns = 1e6 / speedup[i];
        r[i].m1_ns = 100;
        r[i].nnodes = 2;
        r[i].rho[0] = 0.1;
        r[i].rho[1] = 0.2 * i;
        r[i].wait_ns[1] = 50.0 * i;
    }
}

/* A full table with the given stack columns; lost[c][i] at P = i + 1. */
static gcs_table *table(const gcs_model_result *r, int n, int ncols, const char *const *cols, double lost[][4])
{
    const char *names[16] = {"P", "time_ms", "speedup"};
    for (int c = 0; c < ncols; c++)
        names[3 + c] = cols[c];
    gcs_table *t = gcs_table_new(NULL, 3 + ncols, names);
    for (int i = 0; i < n; i++) {
        gcs_table_add_int(t, r[i].threads);
        gcs_table_add_num(t, r[i].time_ns / 1e6, 3);
        gcs_table_add_num(t, r[i].speedup, 2);
        for (int c = 0; c < ncols; c++)
            gcs_table_add_num(t, lost[c][i], 2);
    }
    return t;
}

static void test_unknown_term_is_named(void **state)
{
    (void)state;
    gcs_model_result r[4];
    results(r, 4, (double[]){1, 1.8, 2.2, 2.4});
    const char *cols[] = {"lost_span", "lost_preemption_by_others", "lost_contention"};
    double lost[3][4] = {{0, 0.05, 0.1, 0.1}, {0, 0.15, 0.6, 1.4}, {0, 0, 0.1, 0.1}};
    gcs_table *t = table(r, 4, 3, cols, lost);
    char buf[2048];
    gcs_predict_explain(r, 4, t, 3, 4, 0.05, buf, sizeof buf);
    assert_non_null(strstr(buf, "Recommended: P = 3 of the 1 to 4 asked for (within 5% of the best predicted time, "
                                "at P = 4"));
    assert_non_null(strstr(buf, "what limits this heap is preemption by others, 1.40 of the 1.60 lost"));
    /* span and contention hold under a quarter of the top cause: not named */
    assert_null(strstr(buf, "span"));
    json_t *limits = gcs_predict_limits(r, 4, t);
    assert_string_equal(json_string_value(json_object_get(json_array_get(limits, 0), "cause")),
                        "preemption_by_others");
    assert_int_equal(json_array_size(limits), 3);
    json_decref(limits);
    gcs_table *c = gcs_predict_compact_table(t, 0);
    json_t *rows = gcs_table_to_json(c);
    json_t *row = json_array_get(rows, 3);
    assert_true(json_object_get(row, "rel_time") && !json_object_get(row, "time_ms"));
    assert_true(fabs(json_number_value(json_object_get(row, "rel_time")) - 1 / 2.4) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(row, "lost_preemption_by_others")) - 1.4) < 1e-9);
    json_decref(rows);
    gcs_table_free(c);
    gcs_table_free(t);
}

static void test_coordination_is_one_cause_and_contention_names_its_node(void **state)
{
    (void)state;
    gcs_model_result r[4];
    results(r, 4, (double[]){1, 1.5, 1.9, 2.0});
    const char *cols[] = {"lost_span", "lost_contention", "lost_wake", "lost_search", "lost_tail"};
    double lost[5][4] = {{0, 0, 0, 0.001}, {0, 0.1, 0.3, 0.8}, {0, 0.1, 0.2, 0.3}, {0, 0.2, 0.4, 0.6},
                         {0, 0.1, 0.2, 0.3}};
    gcs_table *t = table(r, 4, 5, cols, lost);
    char buf[2048];
    gcs_predict_explain(r, 4, t, 4, 4, 0.05, buf, sizeof buf);
    assert_non_null(strstr(buf, "(the best predicted time)"));
    /* coordination 0.3 + 0.6 + 0.3 = 1.2 first, then node 1 (rho 0.6, 100 + 150 ns) */
    assert_non_null(strstr(buf, "what limits this heap is coordination (waking the workers, searching for work, "
                                "the tail), 1.20 of the 2.00 lost; then contention at memory node 1 "
                                "(utilisation 0.60; a miss costs 250 ns there against 100 ns idle), 0.80"));
    gcs_table *c = gcs_predict_compact_table(t, 1);
    json_t *rows = gcs_table_to_json(c);
    json_t *row = json_array_get(rows, 3);
    assert_true(fabs(json_number_value(json_object_get(row, "lost_coord")) - 1.2) < 1e-9);
    assert_non_null(json_object_get(row, "time_ms"));
    assert_null(json_object_get(row, "lost_wake"));
    assert_null(json_object_get(row, "lost_span")); /* never 0.005: no column */
    json_decref(rows);
    gcs_table_free(c);
    gcs_table_free(t);
}

static void test_nearly_ideal(void **state)
{
    (void)state;
    gcs_model_result r[2];
    results(r, 2, (double[]){1, 1.97});
    const char *cols[] = {"lost_span"};
    double lost[1][4] = {{0, 0.03}};
    gcs_table *t = table(r, 2, 1, cols, lost);
    char buf[512];
    gcs_predict_explain(r, 2, t, 2, 2, 0.05, buf, sizeof buf);
    assert_non_null(strstr(buf, "nothing limits this heap up to P = 2."));
    gcs_table_free(t);
}

static void test_times_absolute(void **state)
{
    (void)state;
    char why[512];
    json_t *calibrated = json_pack("{s:[], s:b}", "nominal", "residency_on", 0);
    json_t *no_overlap = json_pack("{s:[s], s:b}", "nominal", "overlap", "residency_on", 0);
    json_t *nominal_llc = json_pack("{s:[s], s:b}", "nominal", "llc_effective_bytes", "residency_on", 0);
    json_t *nominal_llc_priced = json_pack("{s:[s], s:b}", "nominal", "llc_effective_bytes", "residency_on", 1);
    assert_int_equal(gcs_predict_times_absolute("v2", calibrated, 0, why, sizeof why), 1);
    assert_string_equal(why, "");
    assert_int_equal(gcs_predict_times_absolute("v2", nominal_llc, 0, why, sizeof why), 1);
    assert_int_equal(gcs_predict_times_absolute("v2", nominal_llc_priced, 0, why, sizeof why), 0);
    assert_int_equal(gcs_predict_times_absolute("v2", no_overlap, 0, why, sizeof why), 0);
    assert_non_null(strstr(why, "lacks gc_miss_overlap"));
    assert_int_equal(gcs_predict_times_absolute("base", calibrated, 0, why, sizeof why), 0);
    assert_non_null(strstr(why, "model base"));
    assert_int_equal(gcs_predict_times_absolute("v2", calibrated, 1, why, sizeof why), 0);
    assert_non_null(strstr(why, "--costs"));
    json_decref(calibrated);
    json_decref(no_overlap);
    json_decref(nominal_llc);
    json_decref(nominal_llc_priced);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_term_is_named),
        cmocka_unit_test(test_coordination_is_one_cause_and_contention_names_its_node),
        cmocka_unit_test(test_nearly_ideal),
        cmocka_unit_test(test_times_absolute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
