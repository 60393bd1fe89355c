/* test_topology.c -- microbench/topology.c: synthetic topologies, caches,
 * pinning and binding errors, filling a profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hwloc.h>

#include "gcscale/calibrate.h"
#include "gcscale/profile.h"
#include "gcscale/topology.h"

static void test_synthetic_nodes(void **state)
{
    (void)state;
    gcs_err err;
    gcs_topo *t = gcs_topo_load("pack:2 node:2 core:2 pu:1", &err);
    assert_non_null(t);
    assert_true(gcs_topo_is_synthetic(t));
    assert_int_equal(gcs_topo_nnodes(t), 4);
    assert_int_equal(gcs_topo_ncpus(t), 8);
    for (int i = 0; i < 4; i++) {
        const gcs_topo_node *n = gcs_topo_node_at(t, i);
        assert_int_equal(n->id, i);
        assert_int_equal(n->ncpus, 2);
        assert_int_equal(n->cpus[0], 2 * i);
        assert_int_equal(n->cpus[1], 2 * i + 1);
        assert_int_equal(gcs_topo_cpu_node(t, 2 * i + 1), i);
    }
    assert_int_equal(gcs_topo_cpu_node(t, 8), -1);
    /* No caches in the description, none invented. */
    assert_int_equal(gcs_topo_ncaches(t), 0);
    assert_int_equal(gcs_topo_llc_bytes(t), 0);
    gcs_topo_free(t);
}

static void test_synthetic_caches(void **state)
{
    (void)state;
    gcs_err err;
    gcs_topo *t = gcs_topo_load("pack:2 node:2 l3:1(size=8388608) l2:2(size=1048576) core:1 pu:1", &err);
    assert_non_null(t);
    assert_int_equal(gcs_topo_nnodes(t), 4);
    int l2 = 0, l3 = 0;
    for (int i = 0; i < gcs_topo_ncaches(t); i++) {
        const gcs_topo_cache *c = gcs_topo_cache_at(t, i);
        assert_string_equal(c->type, "unified");
        if (c->level == 2) {
            l2++;
            assert_int_equal(c->size_bytes, 1 << 20);
            assert_int_equal(c->ncpus, 1);
        } else if (c->level == 3) {
            l3++;
            assert_int_equal(c->size_bytes, 8 << 20);
            assert_int_equal(c->ncpus, 2); /* shared by the node's two cores */
            assert_int_equal(c->cpus[1], c->cpus[0] + 1);
        }
    }
    assert_int_equal(l2, 8);
    assert_int_equal(l3, 4);
    assert_int_equal(gcs_topo_llc_bytes(t), 8 << 20);
    gcs_topo_free(t);
}

static void test_bad_synthetic(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    assert_null(gcs_topo_load("pack:2 nodex:2", &err));
    assert_non_null(strstr(err.msg, "synthetic"));
    assert_null(strchr(err.msg, '\n'));
}

static void *set_flag(void *arg)
{
    *(int *)arg = 1;
    return NULL;
}

static void test_pin_and_bind_errors(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    char warn[256];
    gcs_topo *t = gcs_topo_load(NULL, &err);
    assert_non_null(t);
    assert_false(gcs_topo_is_synthetic(t));
    assert_int_equal(gcs_topo_pin_cpu(t, 99999, warn, sizeof warn, &err), -1);
    assert_non_null(strstr(err.msg, "CPU 99999 does not exist"));
    assert_int_equal(gcs_topo_pin_node(t, 77, warn, sizeof warn, &err), -1);
    assert_non_null(strstr(err.msg, "node 77 does not exist"));
    int flag = 0;
    assert_int_equal(gcs_topo_run_pinned(t, 99999, -1, set_flag, &flag, warn, sizeof warn, &err), -1);
    assert_int_equal(flag, 0);
    /* A valid CPU: the thread runs (pinned) and the function sees it. */
    int cpu = gcs_topo_cpus(t)[0];
    assert_int_equal(gcs_topo_run_pinned(t, cpu, -1, set_flag, &flag, warn, sizeof warn, &err), 0);
    assert_int_equal(flag, 1);
    assert_string_equal(warn, "");

    size_t len = 1 << 20;
    char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(buf != MAP_FAILED);
    assert_int_equal(gcs_topo_bind_memory(t, buf, len, gcs_topo_nnodes(t) + 3, warn, sizeof warn, &err), -1);
    int rc = gcs_topo_bind_memory(t, buf, len, 0, warn, sizeof warn, &err);
    assert_true(rc == 0 || rc == 1);
    memset(buf, 1, len);
    double f = gcs_topo_check_placement(t, buf, len, 0, 16, warn, sizeof warn);
    if (rc == 0 && gcs_topo_nnodes(t) == 1)
        assert_true(f == 1.0 || f == -1.0);
    munmap(buf, len);
    gcs_topo_free(t);
}

static void test_synthetic_binding_is_a_warning(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    char warn[256] = "";
    gcs_topo *t = gcs_topo_load("pack:2 node:2 core:2 pu:1", &err);
    assert_non_null(t);
    assert_int_equal(gcs_topo_pin_node(t, 3, warn, sizeof warn, &err), 1);
    assert_non_null(strstr(warn, "synthetic"));
    char buf[8192];
    warn[0] = 0;
    assert_int_equal(gcs_topo_bind_memory(t, buf, sizeof buf, 2, warn, sizeof warn, &err), 1);
    assert_non_null(strstr(warn, "not bound"));
    assert_int_equal(gcs_topo_bind_memory(t, buf, sizeof buf, 4, warn, sizeof warn, &err), -1);
    assert_non_null(strstr(err.msg, "node 4 does not exist"));
    /* The function still runs, unpinned, with the reason in warn. */
    int flag = 0;
    assert_int_equal(gcs_topo_run_pinned(t, -1, 1, set_flag, &flag, warn, sizeof warn, &err), 0);
    assert_int_equal(flag, 1);
    assert_non_null(strstr(warn, "not pinned"));
    gcs_topo_free(t);
}

static void test_fill_profile(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load("pack:2 node:2 l3:1(size=8388608) core:2 pu:1", &err);
    assert_non_null(t);
    gcs_profile *p = gcs_profile_new(4);
    assert_non_null(p);
    assert_int_equal(gcs_calibrate_fill_profile(t, p, &err), 0);
    assert_int_equal(p->nodes[3].ncpus, 2);
    assert_int_equal(p->nodes[3].cpus[0], 6);
    assert_int_equal(p->ncaches, 4);
    assert_int_equal(p->caches[0].level, 3);
    assert_int_equal(p->caches[0].size_bytes, 8 << 20);
    assert_int_equal(p->caches[0].ncpus, 2);
    gcs_profile_free(p);
    p = gcs_profile_new(2);
    assert_int_equal(gcs_calibrate_fill_profile(t, p, &err), -1);
    gcs_profile_free(p);
    gcs_topo_free(t);
}

/* Every CPU of the topology is in exactly one node. */
static void assert_one_node_per_cpu(const gcs_topo *t)
{
    int sum = 0;
    for (int i = 0; i < gcs_topo_nnodes(t); i++)
        sum += gcs_topo_node_at(t, i)->ncpus;
    assert_int_equal(sum, gcs_topo_ncpus(t));
    for (int c = 0; c < gcs_topo_ncpus(t); c++)
        assert_true(gcs_topo_cpu_node(t, gcs_topo_cpus(t)[c]) >= 0);
}

/* "[numa] pack:2 [numa] core:1 pu:1": node 2 is memory attached to the
 * machine, with no CPUs of its own, as CXL or PMEM memory is.  hwloc gives it
 * the machine's cpuset (its locality); it used to get both CPUs, which were
 * then in two nodes (the profile refused it, after a whole calibration). */
static void check_memory_only_layout(gcs_topo *t)
{
    assert_int_equal(gcs_topo_nnodes(t), 3);
    assert_int_equal(gcs_topo_ncpus(t), 2);
    assert_int_equal(gcs_topo_node_at(t, 0)->ncpus, 1);
    assert_int_equal(gcs_topo_node_at(t, 0)->cpus[0], 0);
    assert_int_equal(gcs_topo_node_at(t, 1)->ncpus, 1);
    assert_int_equal(gcs_topo_node_at(t, 1)->cpus[0], 1);
    assert_int_equal(gcs_topo_node_at(t, 2)->ncpus, 0);
    assert_one_node_per_cpu(t);
    /* Measured from the nearest CPU node: its locality's first CPU's. */
    assert_int_equal(gcs_topo_local_cpu_node(t, 2), 0);
    assert_int_equal(gcs_topo_local_cpu_node(t, 1), 1);
    assert_int_equal(gcs_topo_local_cpu_node(t, 3), -1);
    gcs_err err = {{0}};
    gcs_profile *p = gcs_profile_new(3);
    assert_int_equal(gcs_calibrate_fill_profile(t, p, &err), 0);
    assert_int_equal(p->nodes[2].ncpus, 0);
    assert_int_equal(gcs_profile_check_nodes(p, &err), 0);
    gcs_profile_free(p);
}

static void test_memory_only_node(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load("[numa] pack:2 [numa] core:1 pu:1", &err);
    assert_non_null(t);
    check_memory_only_layout(t);
    char warn[256] = "";
    assert_int_equal(gcs_topo_pin_node(t, 2, warn, sizeof warn, &err), 1); /* synthetic */
    gcs_topo_free(t);

    /* Two memory nodes in one package, both with the package's cpuset: the
     * first (lowest logical index) owns the CPUs. */
    t = gcs_topo_load("pack:1 [numa] [numa] core:2 pu:1", &err);
    assert_non_null(t);
    assert_int_equal(gcs_topo_nnodes(t), 2);
    assert_int_equal(gcs_topo_node_at(t, 0)->ncpus, 2);
    assert_int_equal(gcs_topo_node_at(t, 1)->ncpus, 0);
    assert_int_equal(gcs_topo_local_cpu_node(t, 1), 0);
    assert_one_node_per_cpu(t);
    gcs_topo_free(t);
}

/* The same layout loaded as this system (an XML file with
 * HWLOC_THISSYSTEM=1), the path a real machine with CXL memory takes: the
 * callers that add up the nodes' CPU lists wrote past arrays sized by the
 * CPU count. */
static void test_memory_only_node_this_system(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-topo-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hwloc_topology_t hw;
    assert_int_equal(hwloc_topology_init(&hw), 0);
    assert_int_equal(hwloc_topology_set_synthetic(hw, "[numa] pack:2 [numa] core:1 pu:1"), 0);
    assert_int_equal(hwloc_topology_load(hw), 0);
    assert_int_equal(hwloc_topology_export_xml(hw, path, 0), 0);
    hwloc_topology_destroy(hw);
    setenv("HWLOC_XMLFILE", path, 1);
    setenv("HWLOC_THISSYSTEM", "1", 1);
    gcs_err err = {{0}};
    gcs_topo *t = gcs_topo_load(NULL, &err);
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_THISSYSTEM");
    unlink(path);
    assert_non_null(t);
    assert_false(gcs_topo_is_synthetic(t));
    check_memory_only_layout(t);
    gcs_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_nodes),
        cmocka_unit_test(test_synthetic_caches),
        cmocka_unit_test(test_bad_synthetic),
        cmocka_unit_test(test_pin_and_bind_errors),
        cmocka_unit_test(test_synthetic_binding_is_a_warning),
        cmocka_unit_test(test_fill_profile),
        cmocka_unit_test(test_memory_only_node),
        cmocka_unit_test(test_memory_only_node_this_system),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
