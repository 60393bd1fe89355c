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
#include "gcscale/inspect.h"
#include "gcscale/model.h"
#include "gcscale/snapshot.h"
#include "../calibrate/calibrate_internal.h"

/* One CPU, M1 = 100 ns and S_O = 2 ns, a 32 KiB L1 and a 256 KiB L2; with
 * `llc` also an instruction cache (which no fit may take for a data cache)
 * and a 4 MiB LLC, effective as nominal with a 30 ns hit: what the
 * resident-lines fit needs beyond the others. */
static gcs_profile *one_cpu_machine(int llc)
{
    gcs_profile *p = gcs_profile_new(1);
    p->nodes[0].ncpus = 1;
    p->nodes[0].cpus = calloc(1, sizeof(int)); /* CPU 0; freed with the profile */
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a][0] = 100;
        p->occupancy_ns[a][0] = 2;
    }
    static int cpu0 = 0;
    gcs_profile_cache c[] = {
        {.level = 1, .type = "data", .size_bytes = 32768, .line_bytes = 64, .ways = 8, .ncpus = 1, .cpus = &cpu0},
        {.level = 2, .type = "unified", .size_bytes = 262144, .line_bytes = 64, .ways = 8, .ncpus = 1, .cpus = &cpu0},
        {.level = 1, .type = "instruction", .size_bytes = 1u << 20, .line_bytes = 64, .ways = 8, .ncpus = 1,
         .cpus = &cpu0},
        {.level = 3, .type = "unified", .size_bytes = 4u << 20, .line_bytes = 64, .ways = 16, .ncpus = 1,
         .cpus = &cpu0},
    };
    for (int i = 0; i < (llc ? 4 : 2); i++)
        assert_int_equal(gcs_profile_add_cache(p, &c[i]), 0);
    if (llc) {
        p->has_llc_effective = 1;
        p->llc_effective_bytes = 4u << 20;
        p->llc_hit_ns = 30;
    }
    return p;
}

/* The miss overlap fit on a heap far beyond a (pretended) 256 KiB cache: the
 * model at P = 1 with the fitted overlap gives back the measured mark time. */
static void test_overlap_fit_inverts_the_model(void **state)
{
    (void)state;
    gcs_profile *p = one_cpu_machine(0);
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
    gcs_profile *p = one_cpu_machine(0);
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

/* The resident-lines fit (calibrate/resident.c): refused without the memory
 * fits it builds on; then model v2 at P = 1 with every line resident and
 * the two fitted prices gives back both measured marks (or a bound binds,
 * which the note says), the random graph's misses mostly non-streamed and
 * the list's mostly streamed. */
static void test_resident_fit_inverts_the_model(void **state)
{
    (void)state;
    gcs_profile *p = one_cpu_machine(1);
    gcs_err err;
    json_t *details = NULL;
    uint64_t n = 32768; /* 1 MiB: between the 256 KiB L2 and the 4 MiB LLC */
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 1;
    p->gc_cost_pointer_ns = 1;
    p->has_gc_class_cost = 1;
    p->gc_cost_chain_ns = 0.5;
    p->gc_cost_array_element_ns = 0.5;
    assert_int_equal(_gcs_calibrate_fit_resident(n, 3, p, &details, &err), -1);
    assert_non_null(strstr(err.msg, "gc_miss_overlap"));
    assert_int_equal(p->has_gc_resident, 0);
    p->has_gc_overlap = 1;
    p->gc_miss_overlap = 1.5;
    assert_int_equal(_gcs_calibrate_fit_resident(n, 3, p, &details, &err), 0);
    assert_int_equal(p->has_gc_resident, 1);
    assert_true(p->gc_resident_overlap >= 1 && p->gc_resident_overlap <= 2 * GCS_GC_MARK_FIFO);
    assert_true(p->gc_resident_stream_ns >= 1e-3 && p->gc_resident_stream_ns <= 2);
    json_t *rnd = json_object_get(details, "random"), *lst = json_object_get(details, "list");
    assert_true(json_real_value(json_object_get(rnd, "b_ns")) > 0);
    assert_true(json_real_value(json_object_get(lst, "c_lines")) > 0.9 * json_real_value(json_object_get(lst, "q1")));
    assert_true(json_real_value(json_object_get(rnd, "c_lines")) < 0.1 * json_real_value(json_object_get(rnd, "q1")));
    if (strcmp(json_string_value(json_object_get(details, "note")), "fitted") == 0) {
        assert_true(fabs(json_real_value(json_object_get(rnd, "residual_rel"))) < 1e-6);
        assert_true(fabs(json_real_value(json_object_get(lst, "residual_rel"))) < 1e-6);
    }
    /* the residual is the model's own: the price written back into the
     * model gives the same time on the random graph */
    gcs_snapshot *g = _gcs_calibrate_random_graph(n, 1, &err);
    assert_non_null(g);
    gcs_inspect_opts io;
    gcs_inspect_opts_init(&io);
    io.predictor = GCS_INSPECT_SLOW;
    gcs_inspect_result ir;
    assert_int_equal(gcs_inspect_heap(g, p, &io, &ir, &err), 0);
    gcs_model_opts mo;
    gcs_model_sources src;
    gcs_model_opts_init(&mo);
    gcs_model_opts_v2(&mo, p, 1, 0, &src);
    gcs_model_opts_v2_costs(&mo, p, &src);
    assert_string_equal(src.resident, "gc_resident");
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &ir.heap, 1, &mo, &r, &err), 0);
    assert_true(fabs(r.time_ns - json_real_value(json_object_get(rnd, "model_ns"))) <= 1e-6 * r.time_ns);
    gcs_snapshot_free(g);
    assert_false(gcs_gc_is_initialized());
    json_decref(details);
    gcs_profile_free(p);
}

/* The resident heaps sit between the private caches and the effective LLC
 * (their geometric mean), and there is no fit where the LLC is not well
 * above the cache below it, or no sweep measured it. */
static void test_resident_heaps_sized_between_the_caches(void **state)
{
    (void)state;
    gcs_profile *p = one_cpu_machine(1);
    const char *note;
    /* sqrt(256 KiB x 4 MiB) = 1 MiB of 32-byte objects */
    assert_int_equal(_gcs_calibrate_resident_objects(p, &note), 32768);
    assert_null(note);
    assert_true(_gcs_calibrate_resident_work(p, 0) > 0);
    p->llc_effective_bytes = 3u << 18; /* only 3 x the L2 */
    assert_int_equal(_gcs_calibrate_resident_objects(p, &note), 0);
    assert_non_null(strstr(note, "4 x"));
    assert_true(_gcs_calibrate_resident_work(p, 0) == 0);
    p->has_llc_effective = 0; /* and no sweep in calibration: the nominal size, no hit latency */
    assert_int_equal(_gcs_calibrate_resident_objects(p, &note), 0);
    assert_non_null(strstr(note, "sweep"));
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
        cmocka_unit_test(test_resident_fit_inverts_the_model),
        cmocka_unit_test(test_resident_heaps_sized_between_the_caches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
