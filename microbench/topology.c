/* topology.c -- nodes, caches, pinning and memory binding through hwloc.
 *
 * Everything the rest of gcscale needs from the topology is copied out of
 * hwloc into plain arrays at load time, so callers never touch hwloc objects
 * and a synthetic topology looks exactly like a real one -- except that
 * binding cannot be honoured on it, which the calls report as a warning. */
#include <errno.h>
#include <stdarg.h>
#include <numaif.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "gcscale/topology.h"
#include "topology_internal.h"

struct gcs_topo {
    hwloc_topology_t hw;
    int synthetic;
    char description[256];
    int nnodes;
    gcs_topo_node *nodes;
    int ncaches;
    gcs_topo_cache *caches;
    int ncpus;
    int *cpus;
};

hwloc_topology_t _gcs_topo_hwloc(const gcs_topo *t) { return t->hw; }

static int *cpus_of_set(hwloc_const_cpuset_t set, int *n)
{
    int count = hwloc_bitmap_weight(set);
    if (count < 0)
        count = 0;
    int *cpus = calloc(count > 0 ? (size_t)count : 1, sizeof *cpus);
    if (!cpus)
        return NULL;
    int k = 0;
    unsigned id;
    hwloc_bitmap_foreach_begin(id, set)
    {
        if (k < count)
            cpus[k++] = (int)id;
    }
    hwloc_bitmap_foreach_end();
    *n = k;
    return cpus;
}

/* Gives every CPU of the topology to exactly one memory node.  In hwloc 2.x
 * a NUMA node's cpuset is its locality, not "the CPUs of this node": a
 * memory-only node (CXL or PMEM memory, HBM in flat mode, a second memory
 * child of a package) carries the cpuset of its parent, which overlaps the
 * nodes that do own those CPUs.  Each CPU therefore goes to the node with
 * the smallest cpuset containing it (ties: the lowest logical index), which
 * is the CPU's own node on every layout hwloc builds, leaves memory-only
 * nodes with no CPUs, and needs only the topology, so synthetic and XML
 * topologies get the same answer as this system. */
static int assign_node_cpus(gcs_topo *t)
{
    int *owner = malloc((size_t)t->ncpus * sizeof *owner);
    if (!owner)
        return -1;
    for (int c = 0; c < t->ncpus; c++) {
        owner[c] = -1;
        int best_weight = 0;
        for (int i = 0; i < t->nnodes; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)i);
            if (!o->cpuset || !hwloc_bitmap_isset(o->cpuset, (unsigned)t->cpus[c]))
                continue;
            int w = hwloc_bitmap_weight(o->cpuset);
            if (owner[c] < 0 || w < best_weight) {
                owner[c] = i;
                best_weight = w;
            }
        }
    }
    int rc = 0;
    for (int i = 0; i < t->nnodes && rc == 0; i++) {
        gcs_topo_node *n = &t->nodes[i];
        int count = 0;
        for (int c = 0; c < t->ncpus; c++)
            count += owner[c] == i;
        n->cpus = calloc(count > 0 ? (size_t)count : 1, sizeof *n->cpus);
        if (!n->cpus) {
            rc = -1;
            break;
        }
        /* t->cpus is ascending, so each node's list is too. */
        for (int c = 0; c < t->ncpus; c++)
            if (owner[c] == i)
                n->cpus[n->ncpus++] = t->cpus[c];
    }
    free(owner);
    return rc;
}

static int cmp_cache(const void *a, const void *b)
{
    const gcs_topo_cache *x = a, *y = b;
    if (x->level != y->level)
        return x->level - y->level;
    int c = strcmp(x->type, y->type);
    if (c)
        return c;
    int fx = x->ncpus ? x->cpus[0] : -1, fy = y->ncpus ? y->cpus[0] : -1;
    return fx - fy;
}

static int copy_caches(gcs_topo *t)
{
    static const hwloc_obj_type_t types[] = {
        HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE,
        HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE,
    };
    int total = 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        int n = hwloc_get_nbobjs_by_type(t->hw, types[i]);
        if (n > 0)
            total += n;
    }
    t->caches = calloc(total > 0 ? (size_t)total : 1, sizeof *t->caches);
    if (!t->caches)
        return -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        int n = hwloc_get_nbobjs_by_type(t->hw, types[i]);
        for (int j = 0; j < n; j++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, types[i], (unsigned)j);
            if (!o || !o->attr)
                continue;
            gcs_topo_cache *c = &t->caches[t->ncaches];
            c->level = (int)o->attr->cache.depth;
            const char *type = o->attr->cache.type == HWLOC_OBJ_CACHE_DATA          ? "data"
                               : o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction"
                                                                                    : "unified";
            snprintf(c->type, sizeof c->type, "%s", type);
            c->size_bytes = o->attr->cache.size;
            c->line_bytes = (int)o->attr->cache.linesize;
            /* hwloc: -1 = fully associative, 0 = unknown; the profile uses 0 for both. */
            c->ways = o->attr->cache.associativity > 0 ? o->attr->cache.associativity : 0;
            c->cpus = cpus_of_set(o->cpuset, &c->ncpus);
            if (!c->cpus)
                return -1;
            t->ncaches++;
        }
    }
    qsort(t->caches, (size_t)t->ncaches, sizeof *t->caches, cmp_cache);
    return 0;
}

gcs_topo *gcs_topo_load(const char *synthetic, gcs_err *err)
{
    gcs_topo *t = calloc(1, sizeof *t);
    if (!t) {
        gcs_err_set(err, "topology: out of memory");
        return NULL;
    }
    if (hwloc_topology_init(&t->hw) < 0) {
        free(t);
        gcs_err_set(err, "topology: hwloc_topology_init failed: %s", strerror(errno));
        return NULL;
    }
    /* Instruction caches are filtered out by default; the profile lists them. */
    hwloc_topology_set_icache_types_filter(t->hw, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (synthetic) {
        t->synthetic = 1;
        snprintf(t->description, sizeof t->description, "synthetic \"%s\"", synthetic);
        if (hwloc_topology_set_synthetic(t->hw, synthetic) < 0) {
            gcs_err_set(err, "topology: invalid hwloc synthetic description \"%s\"", synthetic);
            gcs_topo_free(t);
            return NULL;
        }
    } else {
        snprintf(t->description, sizeof t->description, "this system");
    }
    if (hwloc_topology_load(t->hw) < 0) {
        gcs_err_set(err, "topology: hwloc_topology_load failed: %s", strerror(errno));
        gcs_topo_free(t);
        return NULL;
    }
    if (!synthetic && !hwloc_topology_is_thissystem(t->hw))
        t->synthetic = 1; /* HWLOC_XMLFILE and friends: not this machine either */

    int npu = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU);
    t->cpus = cpus_of_set(hwloc_topology_get_topology_cpuset(t->hw), &t->ncpus);
    int nn = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_NUMANODE);
    if (!t->cpus || npu <= 0 || nn <= 0) {
        gcs_err_set(err, "topology: %s has %d CPUs and %d memory nodes", t->description, npu, nn);
        gcs_topo_free(t);
        return NULL;
    }
    t->nodes = calloc((size_t)nn, sizeof *t->nodes);
    if (!t->nodes) {
        gcs_err_set(err, "topology: out of memory");
        gcs_topo_free(t);
        return NULL;
    }
    t->nnodes = nn;
    for (int i = 0; i < nn; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)i);
        gcs_topo_node *n = &t->nodes[i];
        n->id = i;
        n->os_index = (int)o->os_index;
        n->mem_bytes = o->attr ? o->attr->numanode.local_memory : 0;
    }
    if (assign_node_cpus(t) < 0) {
        gcs_err_set(err, "topology: out of memory");
        gcs_topo_free(t);
        return NULL;
    }
    if (copy_caches(t) < 0) {
        gcs_err_set(err, "topology: out of memory");
        gcs_topo_free(t);
        return NULL;
    }
    return t;
}

void gcs_topo_free(gcs_topo *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nnodes; i++)
        free(t->nodes[i].cpus);
    for (int i = 0; i < t->ncaches; i++)
        free(t->caches[i].cpus);
    free(t->nodes);
    free(t->caches);
    free(t->cpus);
    if (t->hw)
        hwloc_topology_destroy(t->hw);
    free(t);
}

int gcs_topo_is_synthetic(const gcs_topo *t) { return t->synthetic; }
const char *gcs_topo_description(const gcs_topo *t) { return t->description; }
int gcs_topo_nnodes(const gcs_topo *t) { return t->nnodes; }
int gcs_topo_ncaches(const gcs_topo *t) { return t->ncaches; }
int gcs_topo_ncpus(const gcs_topo *t) { return t->ncpus; }
const int *gcs_topo_cpus(const gcs_topo *t) { return t->cpus; }

const gcs_topo_node *gcs_topo_node_at(const gcs_topo *t, int id)
{
    return id >= 0 && id < t->nnodes ? &t->nodes[id] : NULL;
}

const gcs_topo_cache *gcs_topo_cache_at(const gcs_topo *t, int i)
{
    return i >= 0 && i < t->ncaches ? &t->caches[i] : NULL;
}

int gcs_topo_cpu_node(const gcs_topo *t, int cpu)
{
    for (int i = 0; i < t->nnodes; i++)
        for (int j = 0; j < t->nodes[i].ncpus; j++)
            if (t->nodes[i].cpus[j] == cpu)
                return i;
    return -1;
}

int gcs_topo_local_cpu_node(const gcs_topo *t, int node)
{
    if (node < 0 || node >= t->nnodes)
        return -1;
    if (t->nodes[node].ncpus > 0)
        return node;
    /* A memory-only node: hwloc's cpuset for it is its locality, the CPUs
     * nearest to it; the node owning the first of them is the nearest CPU
     * node. */
    hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)node);
    unsigned id;
    hwloc_bitmap_foreach_begin(id, o->cpuset)
    {
        int owner = gcs_topo_cpu_node(t, (int)id);
        if (owner >= 0)
            return owner;
    }
    hwloc_bitmap_foreach_end();
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].ncpus > 0)
            return i;
    return -1;
}

uint64_t gcs_topo_llc_bytes(const gcs_topo *t)
{
    uint64_t best = 0;
    int best_level = 0;
    for (int i = 0; i < t->ncaches; i++) {
        const gcs_topo_cache *c = &t->caches[i];
        if (strcmp(c->type, "instruction") == 0)
            continue;
        if (c->level > best_level || (c->level == best_level && c->size_bytes > best)) {
            best_level = c->level;
            best = c->size_bytes;
        }
    }
    return best;
}

int gcs_topo_check_cpu(const gcs_topo *t, int cpu, gcs_err *err)
{
    for (int i = 0; i < t->ncpus; i++)
        if (t->cpus[i] == cpu)
            return 0;
    gcs_err_set(err, "CPU %d does not exist (%s has CPUs %d-%d)", cpu, t->description,
                t->cpus[0], t->cpus[t->ncpus - 1]);
    return -1;
}

int gcs_topo_check_node(const gcs_topo *t, int node, gcs_err *err)
{
    if (node >= 0 && node < t->nnodes)
        return 0;
    gcs_err_set(err, "memory node %d does not exist (%s has nodes 0-%d)", node, t->description,
                t->nnodes - 1);
    return -1;
}

static void set_warn(char *warn, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_warn(char *warn, size_t n, const char *fmt, ...)
{
    if (!warn || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(warn, n, fmt, ap);
    va_end(ap);
}

static int pin_set(const gcs_topo *t, hwloc_const_cpuset_t set, const char *what, char *warn,
                   size_t warn_len)
{
    if (t->synthetic) {
        set_warn(warn, warn_len, "%s: not pinned: the topology is synthetic", what);
        return 1;
    }
    if (hwloc_set_cpubind(t->hw, set, HWLOC_CPUBIND_THREAD) < 0) {
        set_warn(warn, warn_len, "%s: not pinned: %s", what, strerror(errno));
        return 1;
    }
    return 0;
}

int gcs_topo_pin_cpu(const gcs_topo *t, int cpu, char *warn, size_t warn_len, gcs_err *err)
{
    if (gcs_topo_check_cpu(t, cpu, err) < 0)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) {
        gcs_err_set(err, "pin: out of memory");
        return -1;
    }
    hwloc_bitmap_only(set, (unsigned)cpu);
    char what[32];
    snprintf(what, sizeof what, "CPU %d", cpu);
    int rc = pin_set(t, set, what, warn, warn_len);
    hwloc_bitmap_free(set);
    return rc;
}

int gcs_topo_pin_node(const gcs_topo *t, int node, char *warn, size_t warn_len, gcs_err *err)
{
    if (gcs_topo_check_node(t, node, err) < 0)
        return -1;
    /* The node's own CPUs (node->cpus), not its hwloc cpuset, which for a
     * node nested in another's locality holds CPUs of other nodes too.  A
     * memory-only node has none: its locality, the CPUs nearest to it. */
    const gcs_topo_node *n = &t->nodes[node];
    hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)node);
    hwloc_bitmap_t set = n->ncpus > 0 ? hwloc_bitmap_alloc() : hwloc_bitmap_dup(o->cpuset);
    if (!set) {
        gcs_err_set(err, "pin: out of memory");
        return -1;
    }
    for (int i = 0; i < n->ncpus; i++)
        hwloc_bitmap_set(set, (unsigned)n->cpus[i]);
    char what[32];
    snprintf(what, sizeof what, "CPU node %d", node);
    int rc = pin_set(t, set, what, warn, warn_len);
    hwloc_bitmap_free(set);
    return rc;
}

int gcs_topo_bind_memory(const gcs_topo *t, void *addr, size_t len, int node, char *warn,
                         size_t warn_len, gcs_err *err)
{
    if (gcs_topo_check_node(t, node, err) < 0)
        return -1;
    if (t->synthetic) {
        set_warn(warn, warn_len, "memory node %d: not bound: the topology is synthetic", node);
        return 1;
    }
    hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)node);
    /* STRICT: fail rather than silently fall back to another policy. */
    if (hwloc_set_area_membind(t->hw, addr, len, o->nodeset, HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT) < 0) {
        set_warn(warn, warn_len, "memory node %d: not bound: %s", node, strerror(errno));
        return 1;
    }
    return 0;
}

double gcs_topo_check_placement(const gcs_topo *t, const void *addr, size_t len, int node,
                                int samples, char *warn, size_t warn_len)
{
    set_warn(warn, warn_len, "%s", "");
    if (node < 0 || node >= t->nnodes || len == 0 || samples <= 0)
        return -1;
    if (t->synthetic) {
        set_warn(warn, warn_len, "memory node %d: placement not checked: the topology is synthetic",
                 node);
        return -1;
    }
    long page = sysconf(_SC_PAGESIZE);
    size_t npages = (len + (size_t)page - 1) / (size_t)page;
    if ((size_t)samples > npages)
        samples = (int)npages;
    void **pages = calloc((size_t)samples, sizeof *pages);
    int *status = calloc((size_t)samples, sizeof *status);
    if (!pages || !status) {
        free(pages);
        free(status);
        set_warn(warn, warn_len, "memory node %d: placement not checked: out of memory", node);
        return -1;
    }
    uintptr_t base = (uintptr_t)addr & ~((uintptr_t)page - 1);
    for (int i = 0; i < samples; i++)
        pages[i] = (void *)(base + (npages * (size_t)i / (size_t)samples) * (size_t)page);
    /* nodes == NULL: query only, nothing moves. */
    long rc = move_pages(0, (unsigned long)samples, pages, NULL, status, 0);
    double fraction = -1;
    if (rc < 0) {
        set_warn(warn, warn_len, "memory node %d: placement not checked: move_pages: %s", node,
                 strerror(errno));
    } else {
        int want = t->nodes[node].os_index, on = 0, absent = 0, other = -1;
        for (int i = 0; i < samples; i++) {
            if (status[i] == want)
                on++;
            else if (status[i] < 0)
                absent++;
            else
                other = status[i];
        }
        fraction = (double)on / samples;
        if (on < samples)
            set_warn(warn, warn_len,
                     "memory node %d: only %d of %d sampled pages are there (%d elsewhere%s%d, %d not "
                     "present)",
                     node, on, samples, samples - on - absent, other >= 0 ? ", e.g. on OS node " : "",
                     other >= 0 ? other : 0, absent);
    }
    free(pages);
    free(status);
    return fraction;
}

typedef struct pinned_call {
    const gcs_topo *t;
    int cpu, node;
    void *(*fn)(void *);
    void *arg;
    char *warn;
    size_t warn_len;
} pinned_call;

static void *pinned_trampoline(void *p)
{
    pinned_call *c = p;
    gcs_err ignored; /* arguments were checked before the thread started */
    if (c->cpu >= 0)
        gcs_topo_pin_cpu(c->t, c->cpu, c->warn, c->warn_len, &ignored);
    else if (c->node >= 0)
        gcs_topo_pin_node(c->t, c->node, c->warn, c->warn_len, &ignored);
    return c->fn(c->arg);
}

int gcs_topo_run_pinned(const gcs_topo *t, int cpu, int node, void *(*fn)(void *), void *arg,
                        char *warn, size_t warn_len, gcs_err *err)
{
    set_warn(warn, warn_len, "%s", "");
    if (cpu >= 0 && gcs_topo_check_cpu(t, cpu, err) < 0)
        return -1;
    if (cpu < 0 && node >= 0 && gcs_topo_check_node(t, node, err) < 0)
        return -1;
    pinned_call c = {t, cpu, node, fn, arg, warn, warn_len};
    pthread_t th;
    int rc = pthread_create(&th, NULL, pinned_trampoline, &c);
    if (rc != 0) {
        gcs_err_set(err, "cannot start a measuring thread: %s", strerror(rc));
        return -1;
    }
    pthread_join(th, NULL);
    return 0;
}
