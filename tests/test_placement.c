/* test_placement.c -- microbench/placement.c: the worker placement policies
 * (cores, compact, scatter, none) on hwloc synthetic topologies with SMT,
 * several packages and several NUMA nodes, on an uneven topology (an XML
 * file of a synthetic one with two cores taken away), and on this machine;
 * and the collector binding its workers by them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "gcscale/gc.h"
#include "gcscale/topology.h"

#define MAXW 64

/* The OS CPUs of workers 0..n-1 under policy p. */
static void place(gcs_topo *t, gcs_topo_placement p, int n, int *cpus)
{
    gcs_err err = {{0}};
    gcs_topo_pu map[MAXW];
    assert_true(n <= MAXW);
    assert_int_equal(gcs_topo_place(t, p, n, map, &err), 0);
    for (int i = 0; i < n; i++)
        cpus[i] = map[i].os_index;
}

static void assert_order(const int *got, const int *want, int n)
{
    for (int i = 0; i < n; i++) {
        if (got[i] != want[i])
            fail_msg("worker %d: PU %d, expected %d", i, got[i], want[i]);
    }
}

static void test_names(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo_placement p;
    const char *names[] = {"cores", "compact", "scatter", "none"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(gcs_topo_placement_parse(names[i], &p, &err), 0);
        assert_string_equal(gcs_topo_placement_name(p), names[i]);
    }
    assert_string_equal(gcs_topo_placement_name(GCS_TOPO_PLACE_DEFAULT), "cores");
    assert_int_equal(gcs_topo_placement_parse("spread", &p, &err), -1);
    assert_non_null(strstr(err.msg, "cores, compact, scatter or none"));
}

/* Two packages of four cores with two hyperthreads each (PUs 2c, 2c+1 on
 * core c; cores 0-3 in package 0). */
static void test_smt_two_packages(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load("pack:2 core:4 pu:2", &err);
    assert_non_null(t);
    int got[MAXW];

    /* cores: 8 distinct cores, alternating packages, before any sibling */
    place(t, GCS_TOPO_PLACE_CORES, 16, got);
    static const int cores[] = {0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15};
    assert_order(got, cores, 16);
    gcs_topo_pu map[16];
    assert_int_equal(gcs_topo_place(t, GCS_TOPO_PLACE_DEFAULT, 16, map, &err), 0);
    int seen_core[8] = {0};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(map[i].smt, 0);
        assert_int_equal(map[i].package, i % 2);
        assert_int_equal(map[i].logical_index, map[i].os_index); /* synthetic: equal */
        assert_false(seen_core[map[i].core]);
        seen_core[map[i].core] = 1;
    }
    for (int i = 8; i < 16; i++)
        assert_int_equal(map[i].smt, 1);

    /* compact: a core's two PUs, then the next core (the old binding) */
    place(t, GCS_TOPO_PLACE_COMPACT, 16, got);
    for (int i = 0; i < 16; i++)
        assert_int_equal(got[i], i);
    assert_int_equal(gcs_topo_place(t, GCS_TOPO_PLACE_COMPACT, 2, map, &err), 0);
    assert_int_equal(map[0].core, map[1].core); /* P = 2 on one core */

    /* scatter: packages alternate; alike packages: the cores order */
    place(t, GCS_TOPO_PLACE_SCATTER, 16, got);
    assert_order(got, cores, 16);

    /* none: nothing bound */
    assert_int_equal(gcs_topo_place(t, GCS_TOPO_PLACE_NONE, 4, map, &err), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(map[i].os_index, -1);
        assert_int_equal(map[i].logical_index, -1);
    }

    /* more workers than PUs wrap around */
    place(t, GCS_TOPO_PLACE_CORES, 34, got);
    for (int i = 16; i < 34; i++)
        assert_int_equal(got[i], cores[i % 16]);
    place(t, GCS_TOPO_PLACE_COMPACT, 20, got);
    assert_int_equal(got[16], 0);
    assert_int_equal(got[19], 3);

    assert_int_equal(gcs_topo_place(t, GCS_TOPO_PLACE_CORES, -1, map, &err), -1);
    gcs_topo_free(t);
}

/* Two packages of two NUMA nodes of two SMT cores: core c is in node c/2,
 * package c/4.  Cores policy: packages alternate, and inside a package the
 * nodes do. */
static void test_smt_packages_and_nodes(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load("pack:2 node:2 core:2 pu:2", &err);
    assert_non_null(t);
    assert_int_equal(gcs_topo_nnodes(t), 4);
    int got[MAXW];
    static const int cores[] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
    place(t, GCS_TOPO_PLACE_CORES, 16, got);
    assert_order(got, cores, 16);
    place(t, GCS_TOPO_PLACE_SCATTER, 16, got);
    assert_order(got, cores, 16);
    /* the first four workers: one per node */
    gcs_topo_pu map[4];
    assert_int_equal(gcs_topo_place(t, GCS_TOPO_PLACE_CORES, 4, map, &err), 0);
    int seen[4] = {0};
    for (int i = 0; i < 4; i++)
        seen[map[i].node]++;
    for (int k = 0; k < 4; k++)
        assert_int_equal(seen[k], 1);
    gcs_topo_free(t);
}

/* An uneven machine: "pack:2 core:4 pu:2" without its last two cores
 * (PUs 12-15), so package 1 has two cores.  cores uses every core before a
 * sibling; scatter keeps the packages even and takes package 1's siblings
 * while package 0 still has free cores. */
static void test_uneven_packages(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-place-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hwloc_topology_t hw;
    assert_int_equal(hwloc_topology_init(&hw), 0);
    assert_int_equal(hwloc_topology_set_synthetic(hw, "pack:2 core:4 pu:2"), 0);
    assert_int_equal(hwloc_topology_load(hw), 0);
    hwloc_bitmap_t keep = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(keep, 0, 11);
    assert_int_equal(hwloc_topology_restrict(hw, keep, 0), 0);
    hwloc_bitmap_free(keep);
    assert_int_equal(hwloc_topology_export_xml(hw, path, 0), 0);
    hwloc_topology_destroy(hw);
    setenv("HWLOC_XMLFILE", path, 1);
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    unsetenv("HWLOC_XMLFILE");
    unlink(path);
    assert_non_null(t);
    assert_int_equal(gcs_topo_ncpus(t), 12);
    int got[MAXW];
    static const int cores[] = {0, 8, 2, 10, 4, 6, 1, 9, 3, 11, 5, 7};
    place(t, GCS_TOPO_PLACE_CORES, 12, got);
    assert_order(got, cores, 12);
    static const int scatter[] = {0, 8, 2, 10, 4, 9, 6, 11, 1, 3, 5, 7};
    place(t, GCS_TOPO_PLACE_SCATTER, 12, got);
    assert_order(got, scatter, 12);
    place(t, GCS_TOPO_PLACE_COMPACT, 12, got);
    for (int i = 0; i < 12; i++)
        assert_int_equal(got[i], i);
    gcs_topo_free(t);
}

/* This machine (whatever it has): every policy gives valid, distinct CPUs
 * for the first nPU workers (none: -1), and pinning to them works. */
static void test_this_machine(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    assert_non_null(t);
    int n = gcs_topo_ncpus(t) < MAXW ? gcs_topo_ncpus(t) : MAXW;
    for (int p = GCS_TOPO_PLACE_CORES; p <= GCS_TOPO_PLACE_NONE; p++) {
        int got[MAXW];
        place(t, (gcs_topo_placement)p, n, got);
        for (int i = 0; i < n; i++) {
            if (p == GCS_TOPO_PLACE_NONE) {
                assert_int_equal(got[i], -1);
                continue;
            }
            assert_int_equal(gcs_topo_check_cpu(t, got[i], &err), 0);
            for (int j = 0; j < i; j++)
                assert_int_not_equal(got[i], got[j]);
        }
    }
    gcs_topo_free(t);
}

/* The collector binds its workers by the policy and reports where they
 * ran; pin_workers alone still means cores (1) or none (0). */
static void run_collector(gcs_topo_placement placement, int pin_workers, int threads, gcs_gc_stats *st)
{
    gcs_err err = {{0}};
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 8u << 20;
    o.threads = threads;
    o.ignore_threads_env = 1;
    o.placement = placement;
    o.pin_workers = pin_workers;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    gcs_gc_collect();
    assert_int_equal(gcs_gc_last_stats(st), 0);
    gcs_gc_shutdown();
}

static void test_collector(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    assert_non_null(t);
    gcs_topo_pu want[2];
    assert_int_equal(gcs_topo_place(t, GCS_TOPO_PLACE_CORES, 2, want, &err), 0);
    gcs_gc_stats *st = malloc(sizeof *st);
    assert_non_null(st);

    run_collector(GCS_TOPO_PLACE_CORES, 0, 2, st);
    assert_int_equal(st->placement, GCS_TOPO_PLACE_CORES);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(st->workers[i].cpu, want[i].os_index);
        assert_int_equal(st->workers[i].pu, want[i].logical_index);
    }
    run_collector(GCS_TOPO_PLACE_DEFAULT, 1, 2, st); /* the old flag */
    assert_int_equal(st->placement, GCS_TOPO_PLACE_CORES);
    assert_int_equal(st->workers[1].cpu, want[1].os_index);
    run_collector(GCS_TOPO_PLACE_DEFAULT, 0, 2, st);
    assert_int_equal(st->placement, GCS_TOPO_PLACE_NONE);
    run_collector(GCS_TOPO_PLACE_NONE, 1, 2, st); /* placement wins over the flag */
    assert_int_equal(st->placement, GCS_TOPO_PLACE_NONE);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(st->workers[i].cpu, -1);
        assert_int_equal(st->workers[i].pu, -1);
    }
    run_collector(GCS_TOPO_PLACE_COMPACT, 0, 2, st);
    assert_int_equal(st->placement, GCS_TOPO_PLACE_COMPACT);
    json_t *j = gcs_gc_stats_to_json(st);
    assert_string_equal(json_string_value(json_object_get(j, "placement")), "compact");
    assert_int_equal(json_array_size(json_object_get(j, "pu_map")), 2);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "pu_map"), 0)),
                     st->workers[0].cpu);
    assert_int_equal(json_array_size(json_object_get(j, "pu_map_logical")), 2);
    json_decref(j);
    free(st);
    gcs_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_smt_two_packages),
        cmocka_unit_test(test_smt_packages_and_nodes),
        cmocka_unit_test(test_uneven_packages),
        cmocka_unit_test(test_this_machine),
        cmocka_unit_test(test_collector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
