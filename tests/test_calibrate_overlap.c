/* test_calibrate_overlap.c -- calibrate's one step with the model: fitting
 * the marker's miss overlap (calibrate/overlap.c).  Its place in the
 * calibration run and its sizing are tested end to end in
 * tests/cli/test_calibrate.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/gc.h"
#include "gcscale/calibrate.h"
#include "gcscale/model.h"
#include "../calibrate/calibrate_internal.h"

/* The miss overlap fit on a heap far beyond a (pretended) 256 KiB cache: the
 * model at P = 1 with the fitted overlap gives back the measured mark time. */
static void test_overlap_fit_inverts_the_model(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    p->nodes[0].ncpus = 1;
    p->nodes[0].cpus = calloc(1, sizeof(int)); /* CPU 0; freed with the profile */
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a][0] = 100;
        p->occupancy_ns[a][0] = 2;
    }
    gcs_profile_cache l1 = {.level = 1, .type = "data", .size_bytes = 32768, .line_bytes = 64, .ways = 8, .ncpus = 1};
    gcs_profile_cache l2 = {.level = 2, .type = "unified", .size_bytes = 262144, .line_bytes = 64, .ways = 8, .ncpus = 1};
    int cpu0 = 0;
    l1.cpus = l2.cpus = &cpu0;
    assert_int_equal(gcs_profile_add_cache(p, &l1), 0);
    assert_int_equal(gcs_profile_add_cache(p, &l2), 0);
    gcs_err err;
    json_t *details = NULL;
    /* no costs yet: refused */
    assert_int_equal(gcs_calibrate_fit_overlap(65536, 3, p, &details, &err), -1);
    assert_non_null(strstr(err.msg, "gc_cost_ns"));
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 1;
    p->gc_cost_pointer_ns = 1;
    assert_int_equal(gcs_calibrate_fit_overlap(65536, 3, p, &details, &err), 0);
    assert_int_equal(p->has_gc_overlap, 1);
    assert_true(p->gc_miss_overlap >= 1 && p->gc_miss_overlap <= 2 * GCS_GC_MARK_FIFO);
    double measured = json_real_value(json_object_get(details, "measured_mark_ns"));
    double a = json_real_value(json_object_get(details, "a_ns"));
    double b = json_real_value(json_object_get(details, "b_ns"));
    assert_true(measured > 0 && a > 0 && b > 0);
    assert_int_equal(json_integer_value(json_object_get(details, "objects")), 65536);
    const char *note = json_string_value(json_object_get(details, "note"));
    assert_non_null(note);
    if (strcmp(note, "fitted") == 0)
        assert_true(fabs(a + b / p->gc_miss_overlap - measured) <= 1e-6 * measured);
    assert_false(gcs_gc_is_initialized());
    json_decref(details);
    gcs_profile_free(p);
}

/* The heaps of the two fits are sized by the effective LLC where the sweep
 * measured one, not by the nominal largest cache: a VM shown a 300 MiB L3
 * that delivers 16 MiB gets a 64 MiB heap, not 1.2 GB (whose page walks the
 * fit would put in F). */
static void test_fits_sized_by_the_effective_llc(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    int cpu0 = 0;
    gcs_profile_cache l3 = {.level = 3, .type = "unified", .size_bytes = 300u << 20, .line_bytes = 64, .ways = 16,
                            .ncpus = 1, .cpus = &cpu0};
    assert_int_equal(gcs_profile_add_cache(p, &l3), 0);
    assert_int_equal(_gcs_calibrate_llc_bytes(p), 300u << 20);
    double nominal = _gcs_calibrate_overlap_work(p, 0, 0), nominal_stream = _gcs_calibrate_stream_work(p, 0, 0);
    p->has_llc_effective = 1;
    p->llc_effective_bytes = 16u << 20;
    p->llc_hit_ns = 30;
    assert_int_equal(_gcs_calibrate_llc_bytes(p), 16u << 20);
    /* the work is proportional to the objects: 4 x 16 MiB of 32-byte
     * objects against 4 x 300 MiB */
    double effective = _gcs_calibrate_overlap_work(p, 0, 0);
    assert_true(fabs(effective / nominal - 16.0 / 300.0) < 1e-9);
    assert_true(_gcs_calibrate_stream_work(p, 0, 0) < nominal_stream / 10);
    /* and at least 2^20 objects (half the 2^21 above), however small the cache */
    p->llc_effective_bytes = 1u << 20;
    assert_true(fabs(_gcs_calibrate_overlap_work(p, 0, 0) / effective - 0.5) < 1e-9);
    gcs_profile_free(p);
}

/* The sequential-line fit (calibrate/stream.c) on a list far beyond a
 * (pretended) 256 KiB cache: model v2 at P = 1 with the fitted price gives
 * back the measured mark; without the chain's cost it refuses. */
static void test_stream_line_fit_inverts_the_model(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    p->nodes[0].ncpus = 1;
    p->nodes[0].cpus = calloc(1, sizeof(int));
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a][0] = 100;
        p->occupancy_ns[a][0] = 2;
    }
    gcs_profile_cache l1 = {.level = 1, .type = "data", .size_bytes = 32768, .line_bytes = 64, .ways = 8, .ncpus = 1};
    gcs_profile_cache l2 = {.level = 2, .type = "unified", .size_bytes = 262144, .line_bytes = 64, .ways = 8, .ncpus = 1};
    int cpu0 = 0;
    l1.cpus = l2.cpus = &cpu0;
    assert_int_equal(gcs_profile_add_cache(p, &l1), 0);
    assert_int_equal(gcs_profile_add_cache(p, &l2), 0);
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 1;
    p->gc_cost_pointer_ns = 1;
    gcs_err err;
    json_t *details = NULL;
    assert_int_equal(_gcs_calibrate_fit_stream_line(65536, 3, p, &details, &err), -1);
    assert_non_null(strstr(err.msg, "gc_class_cost_ns"));
    p->has_gc_class_cost = 1;
    p->gc_cost_chain_ns = 0.5;
    p->gc_cost_array_element_ns = 0.5;
    assert_int_equal(_gcs_calibrate_fit_stream_line(65536, 3, p, &details, &err), 0);
    assert_int_equal(p->has_gc_stream_line, 1);
    assert_true(p->gc_stream_line_ns > 0);
    double measured = json_real_value(json_object_get(details, "measured_mark_ns"));
    double a = json_real_value(json_object_get(details, "a_ns"));
    double b = json_real_value(json_object_get(details, "b_lines"));
    /* the list's 2 MiB of nodes and its mark table: nearly all sequential */
    assert_true(b > 0.9 * json_real_value(json_object_get(details, "q1")));
    if (strcmp(json_string_value(json_object_get(details, "note")), "fitted") == 0)
        assert_true(fabs(a + b * p->gc_stream_line_ns - measured) <= 1e-6 * measured);
    assert_false(gcs_gc_is_initialized());
    json_decref(details);
    gcs_profile_free(p);
}

static void test_overlap_fit_refuses_when_a_collector_runs(void **state)
{
    (void)state;
    gcs_err err;
    assert_int_equal(gcs_gc_init(NULL, &err), 0);
    gcs_profile *p = gcs_profile_new(1);
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = p->gc_cost_pointer_ns = 1;
    gcs_profile_cache l1 = {.level = 1, .type = "data", .size_bytes = 32768, .line_bytes = 64, .ways = 8, .ncpus = 1};
    int cpu0 = 0;
    l1.cpus = &cpu0;
    assert_int_equal(gcs_profile_add_cache(p, &l1), 0);
    json_t *details = NULL;
    assert_int_equal(gcs_calibrate_fit_overlap(65536, 3, p, &details, &err), -1);
    assert_non_null(strstr(err.msg, "already runs"));
    assert_null(details);
    assert_int_equal(p->has_gc_overlap, 0);
    gcs_profile_free(p);
    gcs_gc_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_fit_inverts_the_model),
        cmocka_unit_test(test_overlap_fit_refuses_when_a_collector_runs),
        cmocka_unit_test(test_stream_line_fit_inverts_the_model),
        cmocka_unit_test(test_fits_sized_by_the_effective_llc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
