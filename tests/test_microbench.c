/* test_microbench.c -- microbench/: the chase permutation, small chases,
 * occupancy load points, bandwidth, counters' fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/microbench.h"
#include "../microbench/chase_internal.h"

/* Follows the cycle from line 0; returns the number of steps to come back,
 * or 0 if it leaves the buffer or revisits a line before returning. */
static size_t cycle_length(char *lines, size_t nlines, unsigned char *seen)
{
    memset(seen, 0, nlines);
    char *p = lines;
    size_t steps = 0;
    do {
        size_t idx = (size_t)(p - lines) / GCS_LINE_BYTES;
        if (p < lines || idx >= nlines || (size_t)(p - lines) % GCS_LINE_BYTES || seen[idx])
            return 0;
        seen[idx] = 1;
        p = *(char **)p;
        steps++;
    } while (p != lines);
    return steps;
}

static void test_single_cycle(void **state)
{
    (void)state;
    /* Sizes that are and are not multiples of a group, tiny ones too. */
    static const size_t sizes[] = {2, 3, 5, 64, 1000, 2048, 4097, 70001};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        char *lines = aligned_alloc(64, n * GCS_LINE_BYTES);
        unsigned char *seen = malloc(n);
        gcs_chase_link(lines, n, 1024, 42 + s);
        assert_int_equal(cycle_length(lines, n, seen), n);
        free(lines);
        free(seen);
    }
}

static void test_groups_stay_together(void **state)
{
    (void)state;
    /* 16 groups of 8 lines (blocks of 16 lines, one parity each): walking the
     * cycle, the group may change only 16 times, and every group is entered
     * once. */
    size_t n = 256, g = 8;
    char *lines = aligned_alloc(64, n * GCS_LINE_BYTES);
    gcs_chase_link(lines, n, g, 7);
    int entered[32] = {0};
    char *p = lines;
    size_t prev = SIZE_MAX, changes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t idx = (size_t)(p - lines) / GCS_LINE_BYTES;
        size_t group = (idx / (2 * g)) * 2 + (idx & 1);
        if (group != prev) {
            changes++;
            entered[group]++;
            prev = group;
        }
        p = *(char **)p;
    }
    /* The walk starts inside a group, so its first group may be split in two. */
    assert_true(changes == 32 || changes == 33);
    for (int k = 0; k < 32; k++)
        assert_true(entered[k] >= 1 && entered[k] <= 2);
    /* Different seeds give different orders; the same seed the same one. */
    char *again = aligned_alloc(64, n * GCS_LINE_BYTES);
    gcs_chase_link(again, n, g, 7);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(*(char **)(lines + i * 64) - lines, *(char **)(again + i * 64) - again);
    gcs_chase_link(again, n, g, 8);
    int differ = 0;
    for (size_t i = 0; i < n; i++)
        differ |= (*(char **)(lines + i * 64) - lines) != (*(char **)(again + i * 64) - again);
    assert_true(differ);
    free(lines);
    free(again);
}

static void test_small_chase(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    assert_non_null(t);
    gcs_chase_buf *b = gcs_chase_buf_new(t, 1 << 20, 0, GCS_HUGE_OFF, &err);
    assert_non_null(b);
    assert_int_equal(gcs_chase_build(b, 0, 1, &err), 0);
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
    assert_int_equal(in->cycle_lines, (1 << 20) / 64);
    for (int rw = 0; rw < 2; rw++) {
        gcs_chase_params prm = {.rw = rw, .reps = 3, .steps = 1 << 14};
        gcs_chase_result r;
        assert_int_equal(gcs_chase_measure(b, &prm, &r, &err), 0);
        assert_true(isfinite(r.median_ns) && r.median_ns > 0 && r.median_ns < 10000);
        assert_true(r.p10_ns <= r.median_ns && r.median_ns <= r.p90_ns);
        assert_int_equal(r.steps_per_rep, 1 << 14);
    }
    /* The RW chase leaves the pointers intact: the cycle is still whole. */
    unsigned char *seen = malloc(in->cycle_lines);
    char *lines = gcs_chase_buf_data(b);
    assert_int_equal(cycle_length(lines, in->cycle_lines, seen) , in->cycle_lines);
    free(seen);
    gcs_chase_buf_free(b);

    /* The one-call version, pinned to the first CPU. */
    gcs_chase_opts o = {.cpu = gcs_topo_cpus(t)[0], .cpu_node = -1, .mem_node = -1,
                        .size_bytes = 64 << 10, .huge = GCS_HUGE_DEFAULT,
                        .prm = {.reps = 3, .count_llc = 1}};
    gcs_chase_result r;
    char warn[256];
    assert_int_equal(gcs_chase_run(t, &o, &r, NULL, warn, sizeof warn, &err), 0);
    assert_true(r.median_ns > 0 && r.median_ns < 1000);
    /* Counters: either a number or NaN with a reason, never a failure. */
    gcs_counters_info ci;
    int have = gcs_counters_probe(&ci);
    if (have)
        assert_string_equal(ci.source, "papi");
    else {
        assert_string_equal(ci.source, "none");
        assert_true(strlen(ci.reason) > 0);
        assert_true(isnan(r.llc_misses_per_step));
    }
    gcs_topo_free(t);
}

static void test_bad_sizes_and_nodes(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    assert_null(gcs_chase_buf_new(t, 100ull << 40, -1, GCS_HUGE_DEFAULT, &err));
    assert_non_null(strstr(err.msg, "exceeds"));
    assert_null(gcs_chase_buf_new(t, 100, -1, GCS_HUGE_DEFAULT, &err));
    assert_null(gcs_chase_buf_new(t, 1 << 20, 7, GCS_HUGE_DEFAULT, &err));
    assert_non_null(strstr(err.msg, "node 7 does not exist"));
    gcs_chase_opts o = {.cpu = 999, .cpu_node = -1, .mem_node = -1, .size_bytes = 1 << 20,
                        .prm = {.reps = 1}};
    gcs_chase_result r;
    assert_int_equal(gcs_chase_run(t, &o, &r, NULL, NULL, 0, &err), -1);
    assert_non_null(strstr(err.msg, "CPU 999"));
    gcs_topo_free(t);

    /* Synthetic: binding is not possible, the buffer says so and works. */
    t = gcs_topo_load("pack:2 node:2 core:2 pu:1", &err);
    gcs_chase_buf *b = gcs_chase_buf_new(t, 64 << 10, 3, GCS_HUGE_DEFAULT, &err);
    assert_non_null(b);
    assert_false(gcs_chase_buf_info_get(b)->bound);
    assert_non_null(strstr(gcs_chase_buf_info_get(b)->warning, "synthetic"));
    gcs_chase_buf_free(b);
    gcs_topo_free(t);
}

static void test_occupancy_points(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    gcs_chase_buf *b = gcs_chase_buf_new(t, 8 << 20, 0, GCS_HUGE_DEFAULT, &err);
    assert_non_null(b);
    assert_int_equal(gcs_chase_build(b, 0, 3, &err), 0);
    int threads[] = {1, 2};
    int chains[] = {4, 1, 2};
    gcs_occ_opts o = {.cpus = gcs_topo_cpus(t), .ncpus = gcs_topo_ncpus(t),
                      .thread_counts = threads, .nthread_counts = 2, .chain_counts = chains,
                      .nchain_counts = 3, .steps_per_chain = 4096, .reps = 1};
    gcs_occ_result *r = malloc(sizeof *r);
    for (int rw = 0; rw < 2; rw++) {
        o.rw = rw;
        assert_int_equal(gcs_occ_measure(b, t, &o, r, &err), 0);
        assert_int_equal(r->npoints, 6);
        for (int i = 0; i < r->npoints; i++) {
            assert_true(r->points[i].outstanding == (double)r->threads[i] * r->chains[i]);
            assert_true(r->points[i].throughput_per_ns > 0 && r->points[i].latency_ns > 0);
            if (i)
                assert_true(r->points[i].outstanding >= r->points[i - 1].outstanding);
        }
        assert_true(r->points[0].outstanding == 1);
        assert_true(r->points[5].outstanding == 8);
    }
    int bad[] = {17};
    o.chain_counts = bad;
    o.nchain_counts = 1;
    assert_int_equal(gcs_occ_measure(b, t, &o, r, &err), -1);
    free(r);

    gcs_bw_result bw;
    assert_int_equal(gcs_bw_measure(t, gcs_chase_buf_data(b), 8 << 20, gcs_topo_cpus(t),
                                    gcs_topo_ncpus(t), 2, &bw, &err), 0);
    assert_true(bw.best_gbs > 0 && bw.best_gbs >= bw.median_gbs);
    assert_int_equal(gcs_bw_measure(t, gcs_chase_buf_data(b), 8 << 20, NULL, 0, 2, &bw, &err), -1);
    gcs_chase_buf_free(b);
    gcs_topo_free(t);
}

/* Walks each of n chains from its start for steps steps, as the occupancy
 * kernel does; fails if a line is on two chains' paths (or twice on one). */
static void assert_disjoint_paths(gcs_chase_buf *b, void **starts, int n, uint64_t steps)
{
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
    char *data = gcs_chase_buf_data(b);
    unsigned char *seen = calloc(in->cycle_lines, 1);
    assert_non_null(seen);
    for (int k = 0; k < n; k++) {
        void *p = starts[k];
        for (uint64_t s = 0; s < steps; s++) {
            size_t line = (size_t)((char *)p - data) / GCS_LINE_BYTES;
            assert_true(line < in->cycle_lines);
            assert_int_equal(seen[line], 0);
            seen[line] = 1;
            p = *(void **)p;
        }
    }
    free(seen);
}

/* The N = threads x chains chains of a load point used to start every
 * ceil(steps / interval) checkpoints along a tape of 1024: once N x steps
 * exceeded the cycle, chains started on the same checkpoint and walked the
 * same lines in lock-step (2 threads x 16 chains of 64K steps on 64 MiB
 * walked 16 distinct paths), so a point claimed N misses in flight and had
 * fewer.  Now the steps are capped so that the N paths are disjoint. */
static void test_occupancy_disjoint_paths(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    gcs_chase_buf *b = gcs_chase_buf_new(t, 4 << 20, 0, GCS_HUGE_DEFAULT, &err);
    assert_non_null(b);
    assert_int_equal(gcs_chase_build(b, 0, 5, &err), 0);
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
    static const int ns[] = {1, 3, 32, 100, 512};
    void *starts[512];
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        for (int rep = 0; rep < 3; rep++) {
            uint64_t steps = 1u << 16;
            assert_int_equal(_gcs_occ_chain_starts(b, ns[i], &steps, starts), 0);
            assert_true(steps >= 1 && steps * (uint64_t)ns[i] <= in->cycle_lines);
            assert_true(steps == _gcs_occ_steps_cap(b, ns[i], 1u << 16));
            assert_disjoint_paths(b, starts, ns[i], steps);
        }
    }
    /* Short requests are kept as they are. */
    uint64_t steps = 100;
    assert_int_equal(_gcs_occ_chain_starts(b, 32, &steps, starts), 0);
    assert_true(steps == 100);
    assert_disjoint_paths(b, starts, 32, steps);

    /* Through the measurement: 2 threads x 16 chains on a 1 MiB cycle
     * (16384 lines) walk 512 steps each, recorded and warned about. */
    assert_int_equal(gcs_chase_build(b, 1 << 20, 5, &err), 0);
    int threads[] = {2}, chains[] = {16};
    gcs_occ_opts o = {.thread_counts = threads, .nthread_counts = 1, .chain_counts = chains,
                      .nchain_counts = 1, .reps = 1};
    gcs_occ_result *r = malloc(sizeof *r);
    assert_int_equal(gcs_occ_measure(b, t, &o, r, &err), 0);
    assert_true(r->points[0].outstanding == 32);
    assert_true(r->steps_per_chain[0] == 512);
    assert_non_null(strstr(r->warning, "512 steps each"));

    /* A cycle of 64 lines has no 80 disjoint paths: refused up front. */
    assert_int_equal(gcs_chase_build(b, 64 * GCS_LINE_BYTES, 5, &err), 0);
    threads[0] = 5;
    assert_int_equal(gcs_occ_measure(b, t, &o, r, &err), -1);
    assert_non_null(strstr(err.msg, "80 chains in flight need as many disjoint paths"));
    threads[0] = 4;
    assert_int_equal(gcs_occ_measure(b, t, &o, r, &err), 0);
    assert_true(r->steps_per_chain[0] == 1);
    free(r);
    gcs_chase_buf_free(b);
    gcs_topo_free(t);
}

static void test_sweep(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    gcs_chase_buf *b = gcs_chase_buf_new(t, 1 << 20, -1, GCS_HUGE_DEFAULT, &err);
    gcs_chase_sweep_point pts[GCS_SWEEP_MAX_POINTS];
    int n = 0;
    assert_int_equal(gcs_chase_sweep(b, 4096, 0, 1, 4096, pts, &n, &err), 0);
    assert_int_equal(n, 9); /* 4K .. 1M doubling */
    assert_int_equal(pts[0].size_bytes, 4096);
    assert_int_equal(pts[8].size_bytes, 1 << 20);
    for (int i = 0; i < n; i++)
        assert_true(pts[i].median_ns > 0);
    gcs_chase_buf_free(b);
    gcs_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_cycle),
        cmocka_unit_test(test_groups_stay_together),
        cmocka_unit_test(test_small_chase),
        cmocka_unit_test(test_bad_sizes_and_nodes),
        cmocka_unit_test(test_occupancy_points),
        cmocka_unit_test(test_occupancy_disjoint_paths),
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
