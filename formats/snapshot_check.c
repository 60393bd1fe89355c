/* snapshot_check.c -- heap snapshots: the content's rules (the params,
 * each object's, each field's and each root's; docs/snapshot-format.md,
 * "Validity"), gcs_snapshot_validate, and the pieces of it that the other
 * ways into a snapshot run on their own.
 *
 * Separate from the graph and from either reader because every one of them
 * runs these rules: the writer refuses a graph that fails them, the reader
 * of versions 1 and 2 (snapshot_read.c) checks what it read through
 * gcs_snapshot_validate, the in-place reader of version 3 (snapshot_map.c)
 * checks each block's objects while the block is in the cache, and the
 * HPROF importer reports through _gcs_snap_validate_report.  The per-object
 * loop (_gcs_snap_check_objects) and the function that says why an object
 * fails (_gcs_snap_check_object) stay together in this file, so that the
 * loop compiles as it did; callers call it once per run of objects. */
#include "../common/internal.h"
#define GCS_SNAPSHOT_FILES
#include "snapshot_internal.h"

/* objects checked as one run by _gcs_snap_check_objects */
#define SNAP_CHECK_RUN 4096

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

#define HEAP_LIMIT_MAX (1ull << 56) /* 64 PiB: anything above is not a heap */

int _gcs_snap_validate_params(const gcs_snapshot_params *p, gcs_err *err)
{
    if (p->gc_threads < 1 || p->gc_threads > 65536) {
        gcs_err_set(err, "params: gc_threads %u out of range 1..65536", p->gc_threads);
        return -1;
    }
    if (p->mark_mode > 2) {
        gcs_err_set(err, "params: unknown mark mode %u", p->mark_mode);
        return -1;
    }
    if (p->numa_policy > 2) {
        gcs_err_set(err, "params: unknown NUMA policy %u", p->numa_policy);
        return -1;
    }
    if (p->node_count < 1 || p->node_count > GCS_SNAPSHOT_MAX_NODES) {
        gcs_err_set(err, "params: node count %u out of range 1..%d", p->node_count, GCS_SNAPSHOT_MAX_NODES);
        return -1;
    }
    if (p->numa_node < -1 || p->numa_node >= (int64_t)p->node_count) {
        gcs_err_set(err, "params: NUMA node %d out of range -1..%u (node count %u)", p->numa_node,
                    p->node_count - 1, p->node_count);
        return -1;
    }
    if (!is_pow2(p->page_bytes) || p->page_bytes < 16 || p->page_bytes > (1u << 30)) {
        gcs_err_set(err, "params: page size %u is not a power of two in 16..2^30", p->page_bytes);
        return -1;
    }
    if (p->header_bytes % 8 || p->header_bytes > 64) {
        gcs_err_set(err, "params: object header of %u bytes (a multiple of 8, at most 64)", p->header_bytes);
        return -1;
    }
    if (!is_pow2(p->granule_bytes) || p->granule_bytes < 8 || p->granule_bytes > 4096) {
        gcs_err_set(err, "params: mark granule %u is not a power of two in 8..4096", p->granule_bytes);
        return -1;
    }
    if (p->heap_limit > HEAP_LIMIT_MAX || p->heap_limit % 8) {
        gcs_err_set(err, "params: absurd heap limit %llu bytes", (unsigned long long)p->heap_limit);
        return -1;
    }
    if (p->source > GCS_SNAPSHOT_SOURCE_V8 || p->layout > GCS_SNAPSHOT_LAYOUT_UNKNOWN_ORDER) {
        gcs_err_set(err, "params: unknown source %u or address layout %u", p->source, p->layout);
        return -1;
    }
    return 0;
}

/* Object i's checks, in the order that gives the most useful message; all
 * objects before i passed theirs.  -1 with err set (err may be NULL). */
int _gcs_snap_check_object(const gcs_snapshot *g, uint64_t i, int what, gcs_err *err)
{
    const gcs_snapshot_params *p = &g->params;
    uint64_t hb = p->header_bytes, a = g->addr[i], w = g->words[i];
    uint64_t prev_end = i > 0 ? g->addr[i - 1] + 8 * (uint64_t)g->words[i - 1] : 0;
    if (w == 0) {
        gcs_err_set(err, "object %llu: size 0 (at least one 8-byte word)", (unsigned long long)i);
        return -1;
    }
    if (g->nptrs[i] > w) {
        gcs_err_set(err, "object %llu: %u pointer fields in %llu words", (unsigned long long)i, g->nptrs[i],
                    (unsigned long long)w);
        return -1;
    }
    if (a % 8) {
        gcs_err_set(err, "object %llu: offset %llu is not 8-byte aligned", (unsigned long long)i,
                    (unsigned long long)a);
        return -1;
    }
    if (a > p->heap_limit || w * 8 > p->heap_limit - a) {
        gcs_err_set(err, "object %llu: [%llu, %llu) extends past the heap limit %llu (absurd size?)",
                    (unsigned long long)i, (unsigned long long)a, (unsigned long long)(a + w * 8),
                    (unsigned long long)p->heap_limit);
        return -1;
    }
    if (i > 0 && a <= g->addr[i - 1]) {
        gcs_err_set(err, "objects not in address order: object %llu at offset %llu follows offset %llu",
                    (unsigned long long)i, (unsigned long long)a, (unsigned long long)g->addr[i - 1]);
        return -1;
    }
    if (a < hb || a - hb < prev_end) {
        if (i == 0)
            gcs_err_set(err, "object 0 at offset %llu leaves no room for its %llu-byte header",
                        (unsigned long long)a, (unsigned long long)hb);
        else
            gcs_err_set(err, "object %llu at offset %llu (header included from %llu) overlaps object "
                        "%llu, which ends at %llu",
                        (unsigned long long)i, (unsigned long long)a, (unsigned long long)(a - hb),
                        (unsigned long long)(i - 1), (unsigned long long)prev_end);
        return -1;
    }
    if (g->edge_start[i + 1] != g->edge_start[i] + g->nptrs[i]) {
        gcs_err_set(err, "edge_start[%llu] is inconsistent with nptrs", (unsigned long long)(i + 1));
        return -1;
    }
    uint16_t nd = what & SNAP_CHECK_NODES ? g->node[i] : GCS_SNAPSHOT_NODE_UNKNOWN;
    if (nd != GCS_SNAPSHOT_NODE_UNKNOWN && nd >= p->node_count) {
        gcs_err_set(err, "object %llu: memory node %u >= node count %u", (unsigned long long)i, nd,
                    p->node_count);
        return -1;
    }
    if ((what & SNAP_CHECK_TYPES) && g->type[i] != GCS_SNAPSHOT_TYPE_NONE && g->type[i] >= g->ntypes) {
        gcs_err_set(err, "object %llu: type %u >= type count %u", (unsigned long long)i, g->type[i], g->ntypes);
        return -1;
    }
    return 0;
}

/* Every object of a snapshot is checked at each load, so the rules are
 * first run over a run of objects as one expression per object, without a
 * branch or a message (a load spent a quarter of its time in the per-object
 * function): any object that may fail sends the run through
 * _gcs_snap_check_object, which finds the first and says why.  Each term
 * below is one of that function's rules; where one rule's subtraction could
 * wrap, the rule before it has flagged the object already. */
uint64_t _gcs_snap_check_objects(const gcs_snapshot *g, uint64_t lo, uint64_t hi, int what)
{
    const gcs_snapshot_params *p = &g->params;
    const uint64_t *addr = g->addr, *edge_start = g->edge_start;
    const uint32_t *words = g->words, *nptrs = g->nptrs;
    uint64_t hb = p->header_bytes, limit = p->heap_limit, i = lo;
    if (i == 0 && i < hi) { /* no object before it: its own rules */
        if (_gcs_snap_check_object(g, 0, what, NULL) < 0)
            return 0;
        i = 1;
    }
    uint64_t flagged = 0;
    if (i < hi) {
        uint64_t prev = addr[i - 1], prev_end = prev + 8 * (uint64_t)words[i - 1];
        for (uint64_t k = i; k < hi; k++) {
            uint64_t a = addr[k], w = words[k], np = nptrs[k];
            flagged |= (uint64_t)(w == 0) | (np > w) | (a & 7) | (a > limit) | (w * 8 > limit - a) | (a <= prev) |
                       (a < hb) | (a - hb < prev_end) | (edge_start[k + 1] != edge_start[k] + np);
            prev = a;
            prev_end = a + 8 * w;
        }
        if (what & SNAP_CHECK_NODES)
            for (uint64_t k = i; k < hi; k++)
                flagged |= (uint64_t)(g->node[k] != GCS_SNAPSHOT_NODE_UNKNOWN) & (g->node[k] >= p->node_count);
        if (what & SNAP_CHECK_TYPES)
            for (uint64_t k = i; k < hi; k++)
                flagged |= (uint64_t)(g->type[k] != GCS_SNAPSHOT_TYPE_NONE) & (g->type[k] >= g->ntypes);
    }
    if (!flagged)
        return hi;
    for (uint64_t k = i; k < hi; k++)
        if (_gcs_snap_check_object(g, k, what, NULL) < 0)
            return k;
    gcs_assert_internal(0); /* a flagged run holds an object that fails */
    return hi;
}

int gcs_snapshot_validate(const gcs_snapshot *g, gcs_err *err)
{
    /* The first object that fails (the message names it, whatever the
     * threads): the lowest failing index, found in parallel (OpenMP). */
    if (_gcs_snap_validate_params(&g->params, err) < 0)
        return -1;
    uint64_t n = g->nobjects <= GCS_SNAPSHOT_MAX_OBJECTS ? g->nobjects : 0, bad = n;
    if (g->nobjects <= GCS_SNAPSHOT_MAX_OBJECTS && g->edge_start[0] == 0) {
        uint64_t nruns = (n + SNAP_CHECK_RUN - 1) / SNAP_CHECK_RUN;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n >= SNAP_PAR_MIN_ITEMS)
        for (uint64_t r = 0; r < nruns; r++) {
            uint64_t lo = r * SNAP_CHECK_RUN, hi = lo + SNAP_CHECK_RUN < n ? lo + SNAP_CHECK_RUN : n;
            if (lo < bad) {
                uint64_t f = _gcs_snap_check_objects(g, lo, hi, SNAP_CHECK_ALL);
                bad = f < hi && f < bad ? f : bad;
            }
        }
    }
    uint64_t m = g->nfields, ebad = m;
    if (bad == n && g->edge_start[n] == m) {
#pragma omp parallel for schedule(static) reduction(min : ebad) if (m >= SNAP_PAR_MIN_ITEMS)
        for (uint64_t e = 0; e < m; e++)
            if (e < ebad && g->edges[e] != GCS_SNAPSHOT_NULL && g->edges[e] >= n)
                ebad = e;
    }
    return _gcs_snap_validate_report(g, bad, ebad, err);
}

/* What gcs_snapshot_validate reports, in its order, given the scans' lowest
 * failing object and field (the scans may have run before the params or
 * edge_start[0] were known good: those are checked first here). */
int _gcs_snap_validate_report(const gcs_snapshot *g, uint64_t bad, uint64_t ebad, gcs_err *err)
{
    const gcs_snapshot_params *p = &g->params;
    if (_gcs_snap_validate_params(p, err) < 0)
        return -1;
    if (g->nobjects > GCS_SNAPSHOT_MAX_OBJECTS) {
        gcs_err_set(err, "%llu objects: at most %llu fit 32-bit ids", (unsigned long long)g->nobjects,
                    (unsigned long long)GCS_SNAPSHOT_MAX_OBJECTS);
        return -1;
    }
    uint64_t n = g->nobjects;
    if (g->edge_start[0] != 0) {
        gcs_err_set(err, "edge_start[0] is %llu, not 0", (unsigned long long)g->edge_start[0]);
        return -1;
    }
    if (bad < n)
        return _gcs_snap_check_object(g, bad, SNAP_CHECK_ALL, err);
    if (g->edge_start[n] != g->nfields) {
        gcs_err_set(err, "pointer fields add up to %llu, the graph says %llu",
                    (unsigned long long)g->edge_start[n], (unsigned long long)g->nfields);
        return -1;
    }
    uint64_t m = g->nfields;
    if (ebad < m) {
        /* find the owner for the message: binary search over edge_start */
        uint64_t lo = 0, hi = n;
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (g->edge_start[mid] <= ebad)
                lo = mid;
            else
                hi = mid;
        }
        gcs_err_set(err, "object %llu field %llu: dangling id %u (%llu objects)", (unsigned long long)lo,
                    (unsigned long long)(ebad - g->edge_start[lo]), g->edges[ebad], (unsigned long long)n);
        return -1;
    }
    for (uint64_t k = 0; k < g->nroots; k++) {
        if (g->roots[k] >= n) {
            gcs_err_set(err, "root %llu: dangling id %u (%llu objects)", (unsigned long long)k, g->roots[k],
                        (unsigned long long)n);
            return -1;
        }
    }
    return 0;
}
