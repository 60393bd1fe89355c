/* placement.c -- which PU each worker is bound to (topology.h, "worker
 * placement"): the cores, compact, scatter and none policies.
 *
 * Every policy is an order of the topology's PUs, independent of P, so that
 * a pool started once (the collector's) gives each P its first P PUs.  The
 * orders are built from each PU's package, memory node, core and rank in its
 * core (smt), which hwloc gives alike for this system and for synthetic
 * descriptions, so the tests check the orders on SMT and multi-package
 * topologies that the development machine does not have.
 *
 * "Round-robin over groups, skipping the groups that have run out" is a sort
 * by (position inside the group, group): spread() applies it twice, nodes
 * inside a package and then packages, which is what makes the order right
 * for packages with unequal nodes and nodes with unequal cores too. */
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "gcscale/topology.h"
#include "topology_internal.h"

static const char *const names[] = {
    [GCS_TOPO_PLACE_DEFAULT] = "cores", [GCS_TOPO_PLACE_CORES] = "cores",
    [GCS_TOPO_PLACE_COMPACT] = "compact", [GCS_TOPO_PLACE_SCATTER] = "scatter",
    [GCS_TOPO_PLACE_NONE] = "none",
};

const char *gcs_topo_placement_name(gcs_topo_placement p)
{
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

int gcs_topo_placement_parse(const char *s, gcs_topo_placement *out, gcs_err *err)
{
    for (int p = GCS_TOPO_PLACE_CORES; p <= GCS_TOPO_PLACE_NONE; p++)
        if (s && strcmp(s, names[p]) == 0) {
            *out = (gcs_topo_placement)p;
            return 0;
        }
    gcs_err_set(err, "unknown placement \"%s\" (cores, compact, scatter or none)", s ? s : "");
    return -1;
}

/* An item to spread: a core (cores policy) or a PU (scatter). */
typedef struct item {
    int package, node;  /* its groups */
    int pos;            /* position inside its current group, rewritten by spread() */
    int id;             /* index into the caller's array */
} item;

static int by_pos_node(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_pos_package(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* items[].pos: the position inside its node.  Sorts items into the order
 * round-robin over the nodes of each package, then over the packages. */
static void spread(item *items, int n)
{
    qsort(items, (size_t)n, sizeof *items, by_pos_node);
    for (int i = 0, k = 0; i < n; i++) {       /* position inside the package */
        k = i > 0 && items[i].package == items[i - 1].package ? k + 1 : 0;
        items[i].pos = k;
    }
    qsort(items, (size_t)n, sizeof *items, by_pos_package);
}

static int by_core_smt(const void *a, const void *b)
{
    const gcs_topo_pu *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->smt != y->smt)
        return x->smt < y->smt ? -1 : 1;
    return x->logical_index < y->logical_index ? -1 : x->logical_index > y->logical_index;
}

/* Every PU of the topology in hwloc's logical order, with its groups. */
static gcs_topo_pu *all_pus(const gcs_topo *t, int *n)
{
    hwloc_topology_t hw = _gcs_topo_hwloc(t);
    int npu = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
    gcs_topo_pu *pus = calloc(npu > 0 ? (size_t)npu : 1, sizeof *pus);
    if (!pus)
        return NULL;
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)i);
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, pu);
        gcs_topo_pu *p = &pus[i];
        p->os_index = (int)pu->os_index;
        p->logical_index = (int)pu->logical_index;
        /* A PU without a core object (some VMs) is a core of its own; its
         * number stays clear of the real cores' for the grouping below. */
        p->core = core ? (int)core->logical_index : -1;
        p->package = pkg ? (int)pkg->logical_index : -1;
        p->node = gcs_topo_cpu_node(t, p->os_index);
        p->smt = 0;
        if (core) {
            hwloc_obj_t first = hwloc_get_obj_inside_cpuset_by_type(hw, core->cpuset, HWLOC_OBJ_PU, 0);
            if (first)
                p->smt = (int)(pu->logical_index - first->logical_index);
        }
    }
    *n = npu;
    return pus;
}

/* The cores policy: the cores spread over packages and nodes, then their
 * PUs by rank in the core (every core's first PU before any second one). */
static int order_cores(gcs_topo_pu *pus, int npu, int *order)
{
    /* The cores, each by its first PU (smt 0, or the lone PU of a coreless one). */
    item *cores = calloc((size_t)npu, sizeof *cores);
    int *rank = calloc((size_t)npu, sizeof *rank);
    if (!cores || !rank) {
        free(cores);
        free(rank);
        return -1;
    }
    int nc = 0;
    for (int i = 0; i < npu; i++) /* logical order: a node's cores in order */
        if (pus[i].smt == 0)
            cores[nc++] = (item){pus[i].package, pus[i].node, 0, i};
    for (int i = 0; i < nc; i++) {
        int k = 0;
        for (int j = 0; j < i; j++)
            k += cores[j].package == cores[i].package && cores[j].node == cores[i].node;
        cores[i].pos = k;
    }
    spread(cores, nc);
    for (int i = 0; i < nc; i++) { /* a PU's core rank: its first PU's */
        const gcs_topo_pu *f = &pus[cores[i].id];
        for (int j = 0; j < npu; j++)
            if (pus[j].core == f->core && (f->core >= 0 || j == cores[i].id))
                rank[j] = i;
    }
    int n = 0, maxsmt = 0;
    for (int j = 0; j < npu; j++)
        maxsmt = pus[j].smt > maxsmt ? pus[j].smt : maxsmt;
    for (int s = 0; s <= maxsmt; s++)
        for (int c = 0; c < nc; c++)
            for (int j = 0; j < npu; j++)
                if (rank[j] == c && pus[j].smt == s)
                    order[n++] = j;
    gcs_assert_internal(n == npu); /* every PU once: each has a core rank and an smt */
    free(cores);
    free(rank);
    return 0;
}

/* The scatter policy: each node's PUs cores first, spread over the nodes of
 * a package and then over the packages. */
static int order_scatter(gcs_topo_pu *pus, int npu, int *order)
{
    gcs_topo_pu *sorted = malloc((size_t)npu * sizeof *sorted);
    item *items = calloc((size_t)npu, sizeof *items);
    if (!sorted || !items) {
        free(sorted);
        free(items);
        return -1;
    }
    memcpy(sorted, pus, (size_t)npu * sizeof *sorted);
    qsort(sorted, (size_t)npu, sizeof *sorted, by_core_smt); /* per node: cores first */
    /* A node lies in one package except when hwloc attaches it above the
     * packages (one node for two packages); then each (package, node) pair
     * is a group of its own, so the positions count per pair. */
    for (int i = 0; i < npu; i++) {
        items[i] = (item){sorted[i].package, sorted[i].node, 0, sorted[i].logical_index};
        int k = 0;
        for (int j = 0; j < i; j++)
            k += items[j].package == items[i].package && items[j].node == items[i].node;
        items[i].pos = k;
    }
    spread(items, npu);
    for (int i = 0; i < npu; i++)
        order[i] = items[i].id; /* logical index = index into pus */
    free(sorted);
    free(items);
    return 0;
}

int gcs_topo_place(const gcs_topo *t, gcs_topo_placement p, int nworkers, gcs_topo_pu *out, gcs_err *err)
{
    if (nworkers < 0 || (unsigned)p > GCS_TOPO_PLACE_NONE) {
        gcs_err_set(err, "placement: %d workers, policy %d", nworkers, (int)p);
        return -1;
    }
    if (p == GCS_TOPO_PLACE_NONE) {
        for (int i = 0; i < nworkers; i++)
            out[i] = (gcs_topo_pu){-1, -1, -1, -1, -1, 0};
        return 0;
    }
    int npu = 0;
    gcs_topo_pu *pus = all_pus(t, &npu);
    int *order = pus ? calloc(npu > 0 ? (size_t)npu : 1, sizeof *order) : NULL;
    int rc = order ? 0 : -1;
    if (rc == 0 && npu == 0) {
        gcs_err_set(err, "placement: %s has no PU", gcs_topo_description(t));
        rc = -2;
    } else if (rc == 0) {
        for (int i = 0; i < npu; i++) { /* hwloc's order: compact */
            gcs_assert_internal(pus[i].logical_index == i);
            order[i] = i;
        }
        if (p == GCS_TOPO_PLACE_CORES || p == GCS_TOPO_PLACE_DEFAULT)
            rc = order_cores(pus, npu, order);
        else if (p == GCS_TOPO_PLACE_SCATTER)
            rc = order_scatter(pus, npu, order);
    }
    if (rc == 0)
        for (int i = 0; i < nworkers; i++)
            out[i] = pus[order[i % npu]];
    if (rc == -1)
        gcs_err_set(err, "placement: out of memory");
    free(order);
    free(pus);
    return rc < 0 ? -1 : 0;
}

int gcs_topo_cpu_logical(const gcs_topo *t, int cpu)
{
    hwloc_obj_t pu = cpu >= 0 ? hwloc_get_pu_obj_by_os_index(_gcs_topo_hwloc(t), (unsigned)cpu) : NULL;
    return pu ? (int)pu->logical_index : -1;
}
