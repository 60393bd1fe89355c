/* test_cachesim.c -- the cache simulator on hand-computed sequences:
 * direct-mapped and 2-way sets, LRU eviction order (and against a plain LRU
 * reference on random streams, 1 to 64 ways), two levels with the read/RW
 * split, L (docs/model.md "Q1 and L") on tiny sequences, and the geometry
 * taken from a profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/cachesim.h"
#include "gcscale/model.h"

#define R GCS_ACCESS_READ
#define W GCS_ACCESS_RW

static gcs_cachesim *one_level(uint64_t size, int ways)
{
    gcs_cachesim_geom g = {.nlevels = 1, .private_levels = 1};
    g.level[0] = (gcs_cachesim_level_geom){.level = 1, .size_bytes = size, .line_bytes = 64, .ways = ways, .ncpus = 1};
    gcs_err err;
    gcs_cachesim *s = gcs_cachesim_new(&g, &err);
    assert_non_null(s);
    return s;
}

static void run(gcs_cachesim *s, const uint64_t *lines, const int *expect_level, int n)
{
    for (int i = 0; i < n; i++) {
        int lv = gcs_cachesim_access(s, lines[i] * 64 + (uint64_t)(i % 7) * 8, R);
        if (lv != expect_level[i])
            fail_msg("access %d (line %llu): level %d, expected %d", i, (unsigned long long)lines[i], lv,
                     expect_level[i]);
    }
}

static void test_direct_mapped(void **state)
{
    (void)state;
    gcs_cachesim *s = one_level(256, 1); /* 4 sets of 1 way: set = line % 4 */
    uint64_t lines[] = {0, 4, 0, 1, 0, 1, 8, 0, 0};
    int lv[] = {1, 1, 1, 1, 0, 0, 1, 1, 0};
    run(s, lines, lv, 9);
    gcs_cachesim_result r;
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.level[0].hits[R], 3);
    assert_int_equal(r.level[0].misses[R], 6);
    assert_int_equal(r.memory[R], 6);
    assert_int_equal(r.accesses[R], 9);
    gcs_cachesim_free(s);
}

static void test_two_way_lru(void **state)
{
    (void)state;
    gcs_cachesim *s = one_level(256, 2); /* 2 sets of 2 ways: lines 0, 2, 4 share set 0 */
    /* 0 m; 2 m; 0 h (LRU: 2); 4 m evicts 2; 2 m evicts 0; 0 m evicts 4; 2 h; 4 m evicts 0; 1 m (set 1) */
    uint64_t lines[] = {0, 2, 0, 4, 2, 0, 2, 4, 1, 2};
    int lv[] = {1, 1, 0, 1, 1, 1, 0, 1, 1, 0};
    run(s, lines, lv, 10);
    gcs_cachesim_result r;
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.level[0].hits[R], 3);
    assert_int_equal(r.level[0].misses[R], 7);
    /* after the sequence set 0 holds 2 (MRU) and 4: 0 was evicted */
    assert_int_equal(gcs_cachesim_access(s, 4 * 64, R), 0);
    assert_int_equal(gcs_cachesim_access(s, 2 * 64, R), 0);
    assert_int_equal(gcs_cachesim_access(s, 0, R), 1);
    gcs_cachesim_reset(s);
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.accesses[R], 0);
    assert_int_equal(gcs_cachesim_access(s, 2 * 64, R), 1);
    gcs_cachesim_free(s);
}

/* L1: 2 lines fully associative; L2: 4 lines fully associative. */
static gcs_cachesim *two_levels(int private_levels)
{
    gcs_cachesim_geom g = {.nlevels = 2, .private_levels = private_levels};
    g.level[0] = (gcs_cachesim_level_geom){.level = 1, .size_bytes = 128, .line_bytes = 64, .ways = 2, .ncpus = 1};
    g.level[1] = (gcs_cachesim_level_geom){.level = 2, .size_bytes = 256, .line_bytes = 64, .ways = 4, .ncpus = 1};
    gcs_err err;
    gcs_cachesim *s = gcs_cachesim_new(&g, &err);
    assert_non_null(s);
    return s;
}

static void test_multilevel_rw_split(void **state)
{
    (void)state;
    gcs_cachesim *s = two_levels(2);
    enum { A, B, C, D, E };
    /* t1 A: L1 m, L2 m | t2 B: m, m | t3 C: L1 m (evicts A), L2 m | t4 A (RW): L1 m, L2 h
     * t5 D: m, m (L2 full: A B C D) | t6 B: L1 m, L2 h | t7 E (RW): L1 m, L2 m evicts C (last used at t3)
     * t8 C: L1 m, L2 m evicts A (t4) */
    struct { uint64_t line; gcs_access cls; int level; } seq[] = {
        {A, R, 2}, {B, R, 2}, {C, R, 2}, {A, W, 1}, {D, R, 2}, {B, R, 1}, {E, W, 2}, {C, R, 2}};
    for (int i = 0; i < 8; i++)
        assert_int_equal(gcs_cachesim_access(s, seq[i].line * 64, seq[i].cls), seq[i].level);
    gcs_cachesim_result r;
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.accesses[R], 6);
    assert_int_equal(r.accesses[W], 2);
    assert_int_equal(r.level[0].hits[R] + r.level[0].hits[W], 0);
    assert_int_equal(r.level[0].misses[R], 6);
    assert_int_equal(r.level[0].misses[W], 2);
    assert_int_equal(r.level[1].hits[R], 1);
    assert_int_equal(r.level[1].hits[W], 1);
    assert_int_equal(r.level[1].misses[R], 5);
    assert_int_equal(r.level[1].misses[W], 1);
    assert_int_equal(r.memory[R], 5);
    assert_int_equal(r.memory[W], 1);
    /* L: private hits A at t4 (previous access t1) and B at t6 (t2): (3 + 4) / 8 */
    assert_true(fabs(r.live_lines_avg - 7.0 / 8.0) < 1e-12);
    /* L2 now holds B D E C: A misses both levels (evicting D, the LRU), B hits L2 */
    assert_int_equal(gcs_cachesim_access(s, A * 64, R), 2);
    assert_int_equal(gcs_cachesim_access(s, B * 64, R), 1);
    assert_int_equal(gcs_cachesim_access(s, D * 64, R), 2);
    gcs_cachesim_free(s);
}

/* The line's last access time follows it from L1 down to L2. */
static void test_live_lines_by_hand(void **state)
{
    (void)state;
    enum { A, B, C };
    /* t1 A m m | t2 A L1 hit (gap 1) | t3 B | t4 C (L1 evicts A, last access t2) | t5 A: L2 hit, gap 3 */
    uint64_t seq[] = {A, A, B, C, A};
    gcs_cachesim *s = two_levels(2);
    for (int i = 0; i < 5; i++)
        gcs_cachesim_access(s, seq[i] * 64 + 8, R);
    gcs_cachesim_result r;
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.level[0].hits[R], 1);
    assert_int_equal(r.level[1].hits[R], 1);
    assert_true(fabs(r.live_lines_avg - 4.0 / 5.0) < 1e-12);
    gcs_cachesim_free(s);

    /* Only L1 private (L2 shared with the thief): only the L1 hit counts. */
    s = two_levels(1);
    for (int i = 0; i < 5; i++)
        gcs_cachesim_access(s, seq[i] * 64, R);
    gcs_cachesim_result_get(s, &r);
    assert_true(fabs(r.live_lines_avg - 1.0 / 5.0) < 1e-12);
    gcs_cachesim_free(s);

    /* Lines 0, 1, 2 cycling in a 4-line cache: every access after the
     * first three hits, 3 accesses after the previous one: L = 3 (n - 3) / n. */
    s = one_level(256, 4);
    int n = 300;
    for (int i = 0; i < n; i++)
        gcs_cachesim_access(s, (uint64_t)(i % 3) * 64, R);
    gcs_cachesim_result_get(s, &r);
    assert_true(fabs(r.live_lines_avg - 3.0 * (n - 3) / n) < 1e-12);
    gcs_cachesim_free(s);
}

static void test_non_power_of_two_sets(void **state)
{
    (void)state;
    gcs_cachesim *s = one_level(3 * 64, 1); /* 3 sets: set = line % 3 */
    assert_int_equal(gcs_cachesim_access(s, 0, R), 1);
    assert_int_equal(gcs_cachesim_access(s, 64, R), 1);
    assert_int_equal(gcs_cachesim_access(s, 0, R), 0);
    assert_int_equal(gcs_cachesim_access(s, 3 * 64, R), 1); /* evicts line 0 */
    assert_int_equal(gcs_cachesim_access(s, 64, R), 0);
    assert_int_equal(gcs_cachesim_access(s, 0, R), 1);
    gcs_cachesim_free(s);
}

static void add_cache(gcs_profile *p, int level, const char *type, uint64_t size, int ways, int ncpus,
                      const int *cpus)
{
    gcs_profile_cache c = {.level = level, .size_bytes = size, .line_bytes = 64, .ways = ways,
                           .ncpus = ncpus, .cpus = (int *)cpus};
    snprintf(c.type, sizeof c.type, "%s", type);
    assert_int_equal(gcs_profile_add_cache(p, &c), 0);
}

static void test_geometry_from_profile(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    assert_non_null(p);
    gcs_err err;
    gcs_cachesim_geom g;
    assert_int_equal(gcs_cachesim_geom_from_profile(p, -1, &g, &err), -1);
    assert_string_equal(err.msg, "profile has no cache geometry");

    int c0[] = {0}, c1[] = {1}, c01[] = {0, 1};
    add_cache(p, 3, "unified", 105u << 20, 15, 2, c01);
    add_cache(p, 2, "unified", 2u << 20, 16, 1, c1);
    add_cache(p, 2, "unified", 2u << 20, 16, 1, c0);
    add_cache(p, 1, "instruction", 32768, 8, 1, c0);
    add_cache(p, 1, "data", 49152, 12, 1, c1);
    add_cache(p, 1, "data", 49152, 12, 1, c0);
    assert_int_equal(gcs_cachesim_geom_from_profile(p, 0, &g, &err), 0);
    assert_int_equal(g.nlevels, 3);
    assert_int_equal(g.private_levels, 2);
    assert_int_equal(g.level[0].level, 1);
    assert_int_equal(g.level[0].size_bytes, 49152);
    assert_int_equal(g.level[1].level, 2);
    assert_int_equal(g.level[2].level, 3);
    assert_int_equal(g.level[2].ncpus, 2);

    gcs_cachesim *s = gcs_cachesim_new(&g, &err);
    assert_non_null(s);
    assert_int_equal(s->lv[0].nsets, 64);
    assert_int_equal(s->lv[1].nsets, 2048);
    assert_int_equal(s->lv[2].nsets, 114688); /* not a power of two: modulo */
    assert_int_equal(s->lv[2].pow2, 0);
    /* the shared L3 is sampled: 1 set in 32 keeps 3584 sets, 224 KiB of tags */
    assert_int_equal(g.sample_shift, 5);
    /* a stream of distinct lines all goes to memory (or to a set the sample
     * leaves out: 4); re-reading the last 10 hits L1 */
    for (uint64_t i = 0; i < 1000; i++)
        assert_int_equal(gcs_cachesim_access(s, i * 64, R), (i % 114688) % 32 == 0 ? 3 : 4);
    gcs_cachesim_result res;
    gcs_cachesim_result_get(s, &res);
    assert_int_equal(res.memory[R], 1000); /* 32 sampled misses x 1000/32 */
    for (uint64_t i = 990; i < 1000; i++)
        assert_int_equal(gcs_cachesim_access(s, i * 64, R), 0);
    for (uint64_t i = 0; i < 10; i++)
        assert_int_equal(gcs_cachesim_access(s, i * 64, R), 1); /* evicted from L1 (768 lines), in L2 */
    gcs_cachesim_free(s);
    gcs_profile_free(p);
}

/* A VM that lists its host's L3 once per vCPU (the Zen 5 development VM:
 * 508 MiB each, the vCPUs on two host dies) while the sweep puts the LLC's
 * edge at 5.6 MB: the level stays private, at the effective size, so it is
 * small enough to simulate exactly and no steal level is found.  Without an
 * effective LLC, where the level is no more than twice it, or where the
 * level is shared, hwloc's size stands. */
static void test_per_cpu_last_level(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    assert_non_null(p);
    p->nodes[0].ncpus = 2;
    p->nodes[0].cpus = malloc(2 * sizeof(int)); /* freed with the profile */
    assert_non_null(p->nodes[0].cpus);
    p->nodes[0].cpus[0] = 0;
    p->nodes[0].cpus[1] = 1;
    int c0[] = {0}, c1[] = {1}, c01[] = {0, 1};
    add_cache(p, 1, "data", 49152, 12, 1, c0);
    add_cache(p, 1, "data", 49152, 12, 1, c1);
    add_cache(p, 2, "unified", 1u << 20, 8, 1, c0);
    add_cache(p, 2, "unified", 1u << 20, 8, 1, c1);
    add_cache(p, 3, "unified", 508u << 20, 0, 1, c0);
    add_cache(p, 3, "unified", 508u << 20, 0, 1, c1);
    gcs_err err;
    gcs_cachesim_geom g;

    /* nominal only: as hwloc says */
    assert_int_equal(gcs_cachesim_geom_from_profile(p, 0, &g, &err), 0);
    assert_int_equal(g.private_levels, 3);
    assert_int_equal(g.level[2].size_bytes, 508u << 20);
    assert_int_equal(gcs_profile_cache_bytes(p, 4), 508u << 20);

    p->has_llc_effective = 1;
    p->llc_effective_bytes = 5.6e6;
    p->llc_hit_ns = 13.7;
    assert_int_equal(gcs_cachesim_geom_from_profile(p, 0, &g, &err), 0);
    assert_int_equal(g.private_levels, 3);
    assert_int_equal(g.level[2].ncpus, 1);
    assert_int_equal(g.level[2].size_bytes, 5600000 / 64 * 64);
    assert_int_equal(g.sample_shift, 0);
    assert_int_equal(gcs_profile_cache_bytes(p, 0), 49152); /* L1 and L2 as listed */
    assert_int_equal(gcs_profile_cache_bytes(p, 2), 1u << 20);
    gcs_cachesim *s = gcs_cachesim_new(&g, &err);
    assert_non_null(s);
    gcs_cachesim_free(s);
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    assert_int_equal(gcs_model_opts_steal_level(&o, p), 0);

    /* a private L3 the sweep confirms (no more than twice the edge) */
    p->llc_effective_bytes = 300.0 * (1 << 20);
    assert_int_equal(gcs_profile_cache_bytes(p, 5), 508u << 20);

    /* a shared L4 keeps its nominal size whatever the sweep says, and the
     * per-CPU L3 below it, no longer the last level, is as listed */
    p->llc_effective_bytes = 5.6e6;
    add_cache(p, 4, "unified", 1024u << 20, 16, 2, c01);
    assert_int_equal(gcs_profile_cache_bytes(p, 6), 1024u << 20);
    assert_int_equal(gcs_profile_cache_bytes(p, 4), 508u << 20);
    assert_int_equal(gcs_model_opts_steal_level(&o, p), 1);
    gcs_profile_free(p);
}

/* Set sampling against the exact simulation: random accesses over 4x the
 * last level's size, with reuse, give the same memory requests within 5%. */
static void test_sampling_estimate(void **state)
{
    (void)state;
    gcs_cachesim_geom g;
    memset(&g, 0, sizeof g);
    g.nlevels = 2;
    g.private_levels = 1;
    g.level[0] = (gcs_cachesim_level_geom){1, 32768, 64, 8, 1};
    g.level[1] = (gcs_cachesim_level_geom){2, 4u << 20, 64, 16, 2};
    gcs_err err;
    gcs_cachesim *exact = gcs_cachesim_new(&g, &err);
    g.sample_shift = 4;
    gcs_cachesim *sampled = gcs_cachesim_new(&g, &err);
    assert_non_null(exact);
    assert_non_null(sampled);
    uint64_t x = 12345;
    for (int i = 0; i < 2000000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        /* 3/4 of the accesses to a hot 2 MiB region, the rest over 16 MiB */
        uint64_t span = (x >> 60) < 12 ? (2u << 20) : (16u << 20);
        uint64_t addr = (x >> 8) % span;
        gcs_access cls = (x >> 59) & 1 ? GCS_ACCESS_RW : GCS_ACCESS_READ;
        gcs_cachesim_access(exact, addr, cls);
        gcs_cachesim_access(sampled, addr, cls);
    }
    gcs_cachesim_result a, b;
    gcs_cachesim_result_get(exact, &a);
    gcs_cachesim_result_get(sampled, &b);
    assert_true(a.sampled_share == 1.0);
    assert_true(b.sampled_share > 0.04 && b.sampled_share < 0.09);
    for (int c = 0; c < GCS_ACCESS_COUNT; c++) {
        double rel = fabs((double)b.memory[c] - (double)a.memory[c]) / (double)a.memory[c];
        print_message("# class %d: exact %llu sampled %llu (%.2f%%)\n", c,
                      (unsigned long long)a.memory[c], (unsigned long long)b.memory[c], 100 * rel);
        assert_true(a.memory[c] > 100000);
        assert_true(rel < 0.05);
    }
    gcs_cachesim_free(exact);
    gcs_cachesim_free(sampled);
}

/* Line sampling (geom.line_sample_shift): on accesses with no structure
 * aligned to the sets (random lines with reuse), one line in 4 gives the
 * exact simulation's memory requests per class and L within 2%, while
 * simulating a quarter of the accesses; on an ascending sweep the stream
 * prefetcher covers what the exact simulation covers; a level whose sets do
 * not split (8 sets for one line in 16) turns it off. */
static void test_line_sampling(void **state)
{
    (void)state;
    gcs_cachesim_geom g;
    memset(&g, 0, sizeof g);
    g.nlevels = 3;
    g.private_levels = 2;
    g.level[0] = (gcs_cachesim_level_geom){1, 32768, 64, 8, 1};
    g.level[1] = (gcs_cachesim_level_geom){2, 256u << 10, 64, 8, 1};
    g.level[2] = (gcs_cachesim_level_geom){3, 4u << 20, 64, 16, 2};
    g.stream_prefetch = 1;
    g.sample_shift = 2; /* the shared last level set-sampled, as from a profile */
    gcs_err err;
    gcs_cachesim *exact = gcs_cachesim_new(&g, &err);
    g.line_sample_shift = 2;
    gcs_cachesim *sampled = gcs_cachesim_new(&g, &err);
    assert_non_null(exact);
    assert_non_null(sampled);
    assert_int_equal(gcs_cachesim_line_sample(exact), 0);
    assert_int_equal(gcs_cachesim_line_sample(sampled), 2);
    uint64_t x = 777;
    for (int i = 0; i < 4000000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t span = (x >> 60) < 12 ? (2u << 20) : (16u << 20);
        uint64_t addr = (x >> 8) % span;
        gcs_access cls = (x >> 59) & 1 ? GCS_ACCESS_RW : GCS_ACCESS_READ;
        gcs_cachesim_access(exact, addr, cls);
        gcs_cachesim_access(sampled, addr, cls);
    }
    gcs_cachesim_result a, b;
    gcs_cachesim_result_get(exact, &a);
    gcs_cachesim_result_get(sampled, &b);
    assert_true(a.line_share == 1.0);
    assert_true(b.line_share > 0.23 && b.line_share < 0.27);
    for (int c = 0; c < GCS_ACCESS_COUNT; c++) {
        assert_int_equal(a.accesses[c], b.accesses[c]); /* every access counted, simulated or not */
        double rel = fabs((double)b.memory[c] - (double)a.memory[c]) / (double)a.memory[c];
        print_message("# class %d: exact %llu sampled %llu (%.2f%%)\n", c, (unsigned long long)a.memory[c],
                      (unsigned long long)b.memory[c], 100 * rel);
        assert_true(a.memory[c] > 400000);
        assert_true(rel < 0.02);
    }
    double lrel = fabs(b.live_lines_avg - a.live_lines_avg) / a.live_lines_avg;
    print_message("# L: exact %.3f sampled %.3f (%.2f%%)\n", a.live_lines_avg, b.live_lines_avg, 100 * lrel);
    assert_true(lrel < 0.02);
    /* an ascending sweep: the covered share is the exact simulation's */
    gcs_cachesim_reset(exact);
    gcs_cachesim_reset(sampled);
    for (uint64_t addr = 0; addr < (32u << 20); addr += 64) {
        gcs_cachesim_access(exact, addr, R);
        gcs_cachesim_access(sampled, addr, R);
    }
    gcs_cachesim_result_get(exact, &a);
    gcs_cachesim_result_get(sampled, &b);
    assert_int_equal(b.memory[R], a.memory[R]);
    assert_int_equal(b.memory_prefetched[R], a.memory_prefetched[R]);
    gcs_cachesim_free(exact);
    gcs_cachesim_free(sampled);
    /* no coarser than the last level's sample; where that is exact, 1 in 2 */
    g.line_sample_shift = 5;
    sampled = gcs_cachesim_new(&g, &err);
    assert_int_equal(gcs_cachesim_line_sample(sampled), 2);
    gcs_cachesim_free(sampled);
    g.sample_shift = 0;
    sampled = gcs_cachesim_new(&g, &err);
    assert_int_equal(gcs_cachesim_line_sample(sampled), 1);
    gcs_cachesim_free(sampled);
    /* 2 sets (a 1 KiB 8-way level) cannot give one line in 4 */
    g.sample_shift = 2;
    g.line_sample_shift = 2;
    g.level[0] = (gcs_cachesim_level_geom){1, 1024, 64, 8, 1};
    sampled = gcs_cachesim_new(&g, &err);
    assert_non_null(sampled);
    assert_int_equal(gcs_cachesim_line_sample(sampled), 0);
    gcs_cachesim_free(sampled);
}

/* The stream prefetcher model: an ascending sweep over 4 MiB (all misses)
 * is covered except the first two misses of each 4 KiB page; uniformly
 * random lines over 64 MiB are almost never covered; off, nothing is. */
static void test_stream_prefetch(void **state)
{
    (void)state;
    gcs_cachesim_geom g;
    memset(&g, 0, sizeof g);
    g.nlevels = 2;
    g.private_levels = 1;
    g.level[0] = (gcs_cachesim_level_geom){1, 32768, 64, 8, 1};
    g.level[1] = (gcs_cachesim_level_geom){2, 1u << 20, 64, 16, 2};
    g.stream_prefetch = 1;
    gcs_err err;
    gcs_cachesim *s = gcs_cachesim_new(&g, &err);
    assert_non_null(s);
    for (uint64_t a = 0; a < (4u << 20); a += 64)
        gcs_cachesim_access(s, a, R);
    gcs_cachesim_result r;
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.memory[R], 65536);
    assert_int_equal(r.memory_prefetched[R], 65536 - 2 * 1024); /* 1024 pages */

    gcs_cachesim_reset(s);
    uint64_t x = 99;
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        gcs_cachesim_access(s, ((x >> 20) % (64u << 20)) & ~63ull, R);
    }
    gcs_cachesim_result_get(s, &r);
    assert_true(r.memory[R] > 150000);
    assert_true(r.memory_prefetched[R] < r.memory[R] / 100);
    gcs_cachesim_free(s);

    g.stream_prefetch = 0;
    s = gcs_cachesim_new(&g, &err);
    for (uint64_t a = 0; a < (1u << 20); a += 64)
        gcs_cachesim_access(s, a, R);
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.memory_prefetched[R], 0);
    gcs_cachesim_free(s);
}

/* A geometry whose private L1 and L2 miss on every access of a sweep, and
 * a shared L3 of 4 MiB sampled 1 set in 2^shift (0: exact). */
static gcs_cachesim *three_levels(int shift)
{
    gcs_cachesim_geom g;
    memset(&g, 0, sizeof g);
    g.nlevels = 3;
    g.private_levels = 2;
    g.sample_shift = shift;
    g.stream_prefetch = 1;
    g.level[0] = (gcs_cachesim_level_geom){1, 32768, 64, 8, 1};
    g.level[1] = (gcs_cachesim_level_geom){2, 256u << 10, 64, 8, 1};
    g.level[2] = (gcs_cachesim_level_geom){3, 4u << 20, 64, 16, 2};
    gcs_err err;
    gcs_cachesim *s = gcs_cachesim_new(&g, &err);
    assert_non_null(s);
    return s;
}

/* Model v2's streamer (cachesim.h): a walked sweep up or down is
 * sequential but for the first two misses of each 4 KiB page; the same
 * sweep not walked (prefetched ahead by the caller) is streamed, not
 * sequential, and so is a stride of two lines; 48 sweeps interleaved line
 * by line (more than the old 16 pages follow) are streamed as one, 100
 * (more than its 64 lanes) are not; random lines almost never. */
static void test_streamer_classes(void **state)
{
    (void)state;
    gcs_cachesim *s = three_levels(0);
    gcs_cachesim_result r;
    for (int down = 0; down < 2; down++) {
        gcs_cachesim_reset(s);
        for (uint64_t i = 0; i < 131072; i++) /* 8 MiB */
            gcs_cachesim_access_walk(s, (down ? 131071 - i : i) * 64, R, 1);
        gcs_cachesim_result_get(s, &r);
        assert_int_equal(r.memory[R], 131072);
        assert_int_equal(r.memory_streamed[R], 131072 - 2 * 2048); /* 2048 pages */
        assert_int_equal(r.memory_sequential[R], r.memory_streamed[R]);
    }
    gcs_cachesim_reset(s);
    for (uint64_t i = 0; i < 131072; i++)
        gcs_cachesim_access(s, i * 64, R);
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.memory_streamed[R], 131072 - 2 * 2048);
    assert_int_equal(r.memory_sequential[R], 0);
    gcs_cachesim_reset(s);
    for (uint64_t i = 0; i < 131072; i += 2)
        gcs_cachesim_access_walk(s, i * 64, R, 1);
    gcs_cachesim_result_get(s, &r);
    assert_int_equal(r.memory_streamed[R], 65536 - 2 * 2048);
    assert_int_equal(r.memory_sequential[R], 0);
    for (int lanes = 48; lanes <= 100; lanes += 52) {
        gcs_cachesim_reset(s);
        for (uint64_t i = 0; i < 2048; i++)
            for (uint64_t k = 0; k < (uint64_t)lanes; k++)
                gcs_cachesim_access_walk(s, (k << 24) + i * 64, R, 1); /* lane k: its own 16 MiB */
        gcs_cachesim_result_get(s, &r);
        uint64_t n = 2048 * (uint64_t)lanes;
        assert_int_equal(r.memory[R], n);
        if (lanes == 48) {
            assert_int_equal(r.memory_sequential[R], n - 2 * (n / 64));
            assert_true(r.memory_prefetched[R] < n / 100); /* the base model's 16 pages */
        } else {
            assert_true(r.memory_streamed[R] < n / 100);
        }
    }
    gcs_cachesim_reset(s);
    uint64_t x = 7;
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        gcs_cachesim_access(s, ((x >> 20) % (256u << 20)) & ~63ull, R);
    }
    gcs_cachesim_result_get(s, &r);
    assert_true(r.memory[R] > 150000);
    assert_true(r.memory_streamed[R] < r.memory[R] / 100);
    assert_true(r.memory_sequential[R] <= r.memory_streamed[R]);
    gcs_cachesim_free(s);
}

/* The streamer's classes from a sampled last level are unbiased: a page's
 * first two misses sit at lines 0 and 1 of it, which a sample of every
 * eighth set takes (line 0) or leaves (line 1) as a whole; counted on the
 * private levels' misses and scaled by the sample's miss rate, the sweep
 * gives the exact figure. */
static void test_streamer_sampled(void **state)
{
    (void)state;
    gcs_cachesim *s = three_levels(3);
    for (uint64_t i = 0; i < 524288; i++) /* 32 MiB, 8 times the L3 */
        gcs_cachesim_access_walk(s, i * 64, R, 1);
    gcs_cachesim_result r;
    gcs_cachesim_result_get(s, &r);
    assert_true(r.sampled_share < 0.2);
    assert_int_equal(r.memory[R], 524288);
    assert_int_equal(r.memory_streamed[R], 524288 - 2 * 8192);
    assert_int_equal(r.memory_sequential[R], 524288 - 2 * 8192);
    gcs_cachesim_free(s);
}

/* Lines are told apart below gcs_cachesim_addr_limit: 2^32 - 1 tags per set.
 * Just below it, two lines of one set are distinct; a line at the limit
 * shares the tag of line 0 (which is why callers must stay below it). */
static void test_addr_limit(void **state)
{
    (void)state;
    gcs_cachesim *s = one_level(4096, 0); /* 64 lines, one set */
    uint64_t limit = gcs_cachesim_addr_limit(s);
    assert_true(limit == UINT32_MAX * 64ull);
    assert_int_equal(gcs_cachesim_access(s, 0, R), 1);
    assert_int_equal(gcs_cachesim_access(s, limit - 64, R), 1); /* a miss of its own */
    assert_int_equal(gcs_cachesim_access(s, 0, R), 0);
    gcs_cachesim_free(s);
    s = one_level(32768, 8); /* 64 sets */
    assert_true(gcs_cachesim_addr_limit(s) == UINT32_MAX * 64ull * 64);
    gcs_cachesim_free(s);
}

static void test_bad_geometry(void **state)
{
    (void)state;
    gcs_cachesim_geom g = {.nlevels = 1, .private_levels = 1};
    g.level[0] = (gcs_cachesim_level_geom){.level = 1, .size_bytes = 4096, .line_bytes = 48, .ways = 4};
    gcs_err err;
    assert_null(gcs_cachesim_new(&g, &err));
    assert_non_null(strstr(err.msg, "not a power of two"));
    g.level[0].line_bytes = 64;
    g.level[0].size_bytes = 32;
    assert_null(gcs_cachesim_new(&g, &err));
    g.nlevels = 0;
    assert_null(gcs_cachesim_new(&g, &err));
}

/* Hits and misses against a plain LRU reference (each set a list of lines,
 * most recent first) on a random stream, for associativities on both sides
 * of 16 (recency lists in one word up to 16 ways, rows kept in order
 * above). */
static void test_lru_reference(void **state)
{
    (void)state;
    const int ways_list[] = {1, 3, 12, 16, 24, 64};
    for (size_t w = 0; w < sizeof ways_list / sizeof ways_list[0]; w++) {
        int ways = ways_list[w], nsets = 8;
        gcs_cachesim *s = one_level((uint64_t)(nsets * ways) * 64, ways);
        uint64_t *ref = calloc((size_t)(nsets * ways), sizeof *ref); /* line + 1, 0 = empty */
        uint64_t seed = 0x9E3779B97F4A7C15ull;
        for (int i = 0; i < 20000; i++) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            uint64_t line = seed % (uint64_t)(3 * nsets * ways); /* about a third hit */
            uint64_t *set = ref + (line % (uint64_t)nsets) * (uint64_t)ways;
            int at = ways - 1, hit = 0;
            for (int k = 0; k < ways; k++)
                if (set[k] == line + 1) {
                    at = k;
                    hit = 1;
                    break;
                }
            memmove(set + 1, set, (size_t)at * sizeof *set);
            set[0] = line + 1;
            int lv = gcs_cachesim_access(s, line * 64, R);
            if (lv != (hit ? 0 : 1))
                fail_msg("%d ways, access %d (line %llu): level %d, reference %s", ways, i,
                         (unsigned long long)line, lv, hit ? "hit" : "miss");
        }
        free(ref);
        gcs_cachesim_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct_mapped),
        cmocka_unit_test(test_two_way_lru),
        cmocka_unit_test(test_lru_reference),
        cmocka_unit_test(test_multilevel_rw_split),
        cmocka_unit_test(test_live_lines_by_hand),
        cmocka_unit_test(test_non_power_of_two_sets),
        cmocka_unit_test(test_geometry_from_profile),
        cmocka_unit_test(test_per_cpu_last_level),
        cmocka_unit_test(test_sampling_estimate),
        cmocka_unit_test(test_stream_prefetch),
        cmocka_unit_test(test_line_sampling),
        cmocka_unit_test(test_streamer_classes),
        cmocka_unit_test(test_streamer_sampled),
        cmocka_unit_test(test_bad_geometry),
        cmocka_unit_test(test_addr_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
