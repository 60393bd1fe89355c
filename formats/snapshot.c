/* snapshot.c -- heap snapshot files: the in-memory graph, the writer, the
 * validating reader and graph statistics.  The byte layout is specified in
 * docs/snapshot-format.md; snapshot_internal.h has its constants.
 *
 * Reader: the header is read first and every count is checked against the
 * header's file size and the real file size before anything is allocated, so
 * a forged count can never make the reader allocate more than the file could
 * hold.  Sections are then read in large chunks (one read per MiB, or
 * straight from the caller's buffer), their CRC-32 checked, and only then is
 * the content validated (gcs_snapshot_validate), so that a damaged byte is
 * reported as a checksum mismatch, not as whatever it happens to break. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../common/internal.h"
#include "hprof_internal.h"
#include "snapshot_internal.h"
#include "zstd_internal.h"

static const char snap_tags[SNAP_NSECTIONS_V2][5] = {"PARM", "OBJS", "NODE", "EDGE", "ROOT", "TYPE", "OTYP"};
static const char *const snap_names[SNAP_NSECTIONS_V2] = {"params", "objects", "nodes", "edges", "roots", "types",
                                                          "object types"};
/* Version 3's sections (snapshot_map.c reads them). */
const char _gcs_snap3_tags[SNAP_NSECTIONS_V3][5] = {"PARM", "ADDR", "WRDS", "NPTR", "ESTR",
                                                     "NODE", "EDGE", "ROOT", "TYPE", "OTYP"};
const char *const _gcs_snap3_names[SNAP_NSECTIONS_V3] = {
    "params", "object addresses", "object sizes", "object pointer counts", "object edge starts",
    "nodes", "edges", "roots", "types", "object types"};

#define SNAP_CHUNK (1u << 20)
/* The passes over objects and fields run on OpenMP's threads from this many
 * items, and a section is read by several threads from SNAP_PAR_MIN_BYTES:
 * below that, starting the threads costs more than they save. */
#define SNAP_PAR_MIN_ITEMS (1u << 18)
/* objects checked as one run by _gcs_snap_check_objects */
#define SNAP_CHECK_RUN 4096
#define SNAP_PAR_MIN_BYTES (8u << 20)

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
    return (uint32_t)crc32_z(crc, p, n);
}

const char *gcs_snapshot_mark_mode_name(uint32_t mode)
{
    static const char *const names[] = {"relaxed-bytes", "atomic-bytes", "atomic-bits"};
    return mode < 3 ? names[mode] : "?";
}

const char *gcs_snapshot_numa_policy_name(uint32_t policy)
{
    static const char *const names[] = {"local", "interleave", "node"};
    return policy < 3 ? names[policy] : "?";
}

const char *gcs_snapshot_source_name(uint32_t source)
{
    static const char *const names[] = {"gcscale", "hprof", "v8"};
    return source < 3 ? names[source] : "?";
}

const char *gcs_snapshot_layout_name(uint32_t layout)
{
    static const char *const names[] = {"heap", "dump-order", "unknown-order"};
    return layout < 3 ? names[layout] : "?";
}

/* ---- sizes ------------------------------------------------------------------ */


static unsigned snap_nsections(uint32_t version)
{
    return version == 1 ? SNAP_NSECTIONS_V1 : version == 2 ? SNAP_NSECTIONS_V2 : SNAP_NSECTIONS_V3;
}

static int snap_counts_fit(const snap_counts *c)
{
    return c->n <= GCS_SNAPSHOT_MAX_OBJECTS && c->runs <= GCS_SNAPSHOT_MAX_OBJECTS && c->m <= (UINT64_MAX >> 6) &&
           c->r <= (UINT64_MAX >> 6) && c->t <= GCS_SNAPSHOT_MAX_TYPES && c->tb <= (UINT64_MAX >> 6);
}

unsigned _gcs_snap3_elem(int sec)
{
    static const unsigned elem[SNAP_NSECTIONS_V3] = {SNAP_PARAMS_BYTES, 8, 4, 4, 8, SNAP_RUN_BYTES, 4, 4, 1, 4};
    return elem[sec];
}

/* Payload bytes of a version-3 section for counts that fit (snap_counts_fit). */
uint64_t _gcs_snap3_payload(const snap_counts *c, int sec)
{
    switch (sec) {
    case SNAP3_PARAMS: return SNAP_PARAMS_BYTES;
    case SNAP3_ADDR: case SNAP3_ESTART: return 8 * (c->n + (sec == SNAP3_ESTART));
    case SNAP3_WORDS: case SNAP3_NPTRS: return 4 * c->n;
    case SNAP3_NODES: return c->runs * SNAP_RUN_BYTES;
    case SNAP3_EDGES: return c->m * SNAP_ID_BYTES;
    case SNAP3_ROOTS: return c->r * SNAP_ID_BYTES;
    case SNAP3_TYPES: return c->tb;
    default: return c->t ? c->n * SNAP_ID_BYTES : 0;
    }
}

/* Payload bytes of each section for the given counts; 0 with *ok = 0 on
 * overflow. */
static void snap_section_sizes(const snap_counts *c, uint64_t payload[SNAP_NSECTIONS_V2], int *ok)
{
    *ok = snap_counts_fit(c);
    payload[SNAP_SEC_PARAMS] = SNAP_PARAMS_BYTES;
    payload[SNAP_SEC_OBJECTS] = *ok ? c->n * SNAP_OBJECT_BYTES : 0;
    payload[SNAP_SEC_NODES] = *ok ? c->runs * SNAP_RUN_BYTES : 0;
    payload[SNAP_SEC_EDGES] = *ok ? c->m * SNAP_ID_BYTES : 0;
    payload[SNAP_SEC_ROOTS] = *ok ? c->r * SNAP_ID_BYTES : 0;
    payload[SNAP_SEC_TYPES] = *ok ? c->tb : 0;
    payload[SNAP_SEC_OBJTYPES] = *ok && c->t ? c->n * SNAP_ID_BYTES : 0;
}

/* Total file bytes for those counts; 0 on overflow. */
uint64_t _gcs_snap_file_bytes(const snap_counts *c)
{
    if (c->version >= 3) {
        if (!snap_counts_fit(c))
            return 0;
        uint64_t total = SNAP_HEADER_BYTES_V3;
        for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++) {
            uint64_t pl = _gcs_snap3_payload(c, i);
            total += SNAP_SECTION_HEAD + snap_pad8(pl) + snap3_tail(snap3_nblocks(pl, i));
        }
        return total;
    }
    uint64_t payload[SNAP_NSECTIONS_V2];
    int ok;
    snap_section_sizes(c, payload, &ok);
    if (!ok)
        return 0;
    uint64_t total = c->version == 1 ? SNAP_HEADER_BYTES_V1 : SNAP_HEADER_BYTES_V2;
    for (unsigned i = 0; i < snap_nsections(c->version); i++)
        total += SNAP_SECTION_HEAD + snap_pad8(payload[i]) + SNAP_SECTION_TAIL;
    return total;
}

int _gcs_snap_check_counts(const snap_counts *c, const char *name, gcs_err *err)
{
    uint64_t need = _gcs_snap_file_bytes(c);
    if (need == 0 || need != c->file_bytes) {
        char needs[48];
        if (need)
            snprintf(needs, sizeof needs, "%llu bytes", (unsigned long long)need);
        else
            snprintf(needs, sizeof needs, "more than 2^64 bytes or 2^32 ids");
        gcs_err_set(err, "%s: counts do not fit the file size: %llu objects, %llu pointer fields, %llu roots, "
                    "%llu node runs and %llu types (%llu name bytes) need %s, the header says the file has %llu",
                    name, (unsigned long long)c->n, (unsigned long long)c->m, (unsigned long long)c->r,
                    (unsigned long long)c->runs, (unsigned long long)c->t, (unsigned long long)c->tb, needs,
                    (unsigned long long)c->file_bytes);
        return -1;
    }
    /* Each type name holds at least its NUL, so t <= tb; without this a
     * header could ask for 2^32 name pointers in a file of a few bytes
     * (found by make fuzz). */
    if (c->t > c->tb) {
        gcs_err_set(err, "%s: %llu types cannot have their names in %llu bytes", name, (unsigned long long)c->t,
                    (unsigned long long)c->tb);
        return -1;
    }
    return 0;
}

/* ---- the graph in memory ------------------------------------------------------ */

void gcs_snapshot_params_default(gcs_snapshot_params *p)
{
    memset(p, 0, sizeof *p);
    p->gc_threads = 1;
    p->page_bytes = 65536;
    p->numa_node = -1;
    p->node_count = 1;
    p->header_bytes = 8;
    p->granule_bytes = 16;
}

static int add_array(uint64_t *total, uint64_t count, uint64_t elem, uint64_t *offset)
{
    uint64_t bytes;
    if (__builtin_mul_overflow(count, elem, &bytes))
        return -1;
    *offset = *total;
    bytes = snap_pad8(bytes);
    if (bytes < count * elem || __builtin_add_overflow(*total, bytes, total))
        return -1;
    return 0;
}

/* gcs_snapshot_new, and with filled set _gcs_snapshot_new_filled: the
 * caller writes every object's type, which is not preset; addr: an array
 * of n the snapshot takes over as its addr[] (NULL: one in the block). */
static gcs_snapshot *snapshot_alloc(uint64_t n, uint64_t m, uint64_t r, int filled, uint64_t *addr, gcs_err *err)
{
    if (n > GCS_SNAPSHOT_MAX_OBJECTS) {
        gcs_err_set(err, "snapshot: %llu objects: at most %llu fit 32-bit ids",
                    (unsigned long long)n, (unsigned long long)GCS_SNAPSHOT_MAX_OBJECTS);
        free(addr);
        return NULL;
    }
    uint64_t total = 0, o_addr, o_words, o_nptrs, o_node, o_start, o_edges, o_roots, o_type;
    if (add_array(&total, addr ? 0 : n, 8, &o_addr) < 0 || add_array(&total, n, 4, &o_words) < 0
        || add_array(&total, n, 4, &o_nptrs) < 0 || add_array(&total, n, 2, &o_node) < 0
        || add_array(&total, n + 1, 8, &o_start) < 0 || add_array(&total, m, 4, &o_edges) < 0
        || add_array(&total, r, 4, &o_roots) < 0 || add_array(&total, n, 4, &o_type) < 0
        || total > SIZE_MAX) {
        gcs_err_set(err, "snapshot: graph too large for this address space");
        free(addr);
        return NULL;
    }
    gcs_snapshot *g = calloc(1, sizeof *g);
    snap_store *st = calloc(1, sizeof *st);
    char *mem = calloc(1, (size_t)total);
    if (!g || !st || !mem) {
        free(g);
        free(st);
        free(mem);
        free(addr);
        gcs_err_set(err, "snapshot: out of memory for %llu objects and %llu fields",
                    (unsigned long long)n, (unsigned long long)m);
        return NULL;
    }
    st->block = mem;
    st->fresh[SNAP_FRESH_ADDR] = addr;
    g->storage_ = st;
    g->nobjects = n;
    g->nfields = m;
    g->nroots = r;
    g->addr = addr ? addr : (uint64_t *)(mem + o_addr);
    g->words = (uint32_t *)(mem + o_words);
    g->nptrs = (uint32_t *)(mem + o_nptrs);
    g->node = (uint16_t *)(mem + o_node);
    g->edge_start = (uint64_t *)(mem + o_start);
    g->edges = (uint32_t *)(mem + o_edges);
    g->roots = (uint32_t *)(mem + o_roots);
    g->type = (uint32_t *)(mem + o_type);
    if (!filled)
        memset(g->type, 0xFF, (size_t)n * sizeof *g->type); /* GCS_SNAPSHOT_TYPE_NONE */
    gcs_snapshot_params_default(&g->params);
    return g;
}

gcs_snapshot *gcs_snapshot_new(uint64_t n, uint64_t m, uint64_t r, gcs_err *err)
{
    return snapshot_alloc(n, m, r, 0, NULL, err);
}

gcs_snapshot *_gcs_snapshot_new_filled(uint64_t n, uint64_t m, uint64_t r, uint64_t *addr, gcs_err *err)
{
    return snapshot_alloc(n, m, r, 1, addr, err);
}

void _gcs_snap_store_free(snap_store *st)
{
    if (!st)
        return;
    free(st->block);
    free(st->owned);
    for (int k = 0; k < SNAP_STORE_ARRAYS; k++) {
        free(st->fresh[k]);
        if (st->konst[k])
            munmap(st->konst[k], st->konst_len[k]);
    }
    if (st->map)
        munmap(st->map, st->map_len);
    free(st);
}

void gcs_snapshot_free(gcs_snapshot *g)
{
    if (!g)
        return;
    _gcs_snap_store_free(g->storage_);
    free(g->types_storage_);
    free(g);
}

/* The names live in one block: the pointer array, then the strings. */
int gcs_snapshot_set_types(gcs_snapshot *g, uint32_t ntypes, const char *const *names, gcs_err *err)
{
    if (ntypes > GCS_SNAPSHOT_MAX_TYPES) {
        gcs_err_set(err, "snapshot: %u types: at most %u", ntypes, GCS_SNAPSHOT_MAX_TYPES);
        return -1;
    }
    size_t bytes = (size_t)ntypes * sizeof(char *);
    for (uint32_t k = 0; k < ntypes; k++)
        bytes += strlen(names[k]) + 1;
    char *mem = malloc(bytes ? bytes : 1);
    if (!mem) {
        gcs_err_set(err, "snapshot: out of memory for %u type names", ntypes);
        return -1;
    }
    char **tab = (char **)(void *)mem, *q = mem + (size_t)ntypes * sizeof(char *);
    for (uint32_t k = 0; k < ntypes; k++) {
        size_t len = strlen(names[k]) + 1;
        memcpy(q, names[k], len);
        tab[k] = q;
        q += len;
    }
    free(g->types_storage_);
    g->types_storage_ = mem;
    g->type_names = ntypes ? tab : NULL;
    g->ntypes = ntypes;
    return 0;
}

/* ---- validation ------------------------------------------------------------------ */

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

/* ---- the writer ---------------------------------------------------------------- */

int _gcs_snapw_init_version(gcs_snapw *w, FILE *fp, uint32_t version)
{
    memset(w, 0, sizeof *w);
    w->fp = fp;
    w->cap = SNAP_CHUNK;
    w->buf = malloc(w->cap);
    w->crc_from = SIZE_MAX;
    w->version = version;
    return w->buf ? 0 : -1;
}

int _gcs_snapw_init(gcs_snapw *w, FILE *fp) { return _gcs_snapw_init_version(w, fp, GCS_SNAPSHOT_VERSION); }

void _gcs_snapw_free(gcs_snapw *w)
{
    free(w->buf);
    free(w->blocks);
    w->buf = NULL;
    w->blocks = NULL;
}

/* Version 3: the current block's checksum into the table; a new block. */
static void snapw_block_end(gcs_snapw *w)
{
    if (w->nblocks == w->blocks_cap) {
        size_t cap = w->blocks_cap ? 2 * w->blocks_cap : 64;
        uint32_t *b = realloc(w->blocks, cap * sizeof *b);
        if (!b) {
            w->failed = 1;
            return;
        }
        w->blocks = b;
        w->blocks_cap = cap;
    }
    w->blocks[w->nblocks++] = w->crc;
    w->crc = 0;
    w->block_left = w->block_bytes;
}

/* Version 3: the payload bytes p[0..n) into the open section's blocks. */
static void snapw_blocks(gcs_snapw *w, const uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t k = w->block_left < n ? (size_t)w->block_left : n;
        w->crc = _gcs_crc32c(w->crc, p, k);
        w->block_left -= k;
        p += k;
        n -= k;
        if (w->block_left == 0)
            snapw_block_end(w);
    }
}

/* The buffer's bytes from crc_from into the open section's checksum. */
static void snapw_checksum(gcs_snapw *w)
{
    if (w->crc_from == SIZE_MAX)
        return;
    if (w->version >= 3)
        snapw_blocks(w, w->buf + w->crc_from, w->len - w->crc_from);
    else
        w->crc = crc_update(w->crc, w->buf + w->crc_from, w->len - w->crc_from);
    w->crc_from = w->len;
}

void _gcs_snapw_flush(gcs_snapw *w)
{
    snapw_checksum(w);
    if (w->crc_from != SIZE_MAX)
        w->crc_from = 0;
    if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->fp) != w->len)
        w->failed = 1;
    w->written += w->len;
    w->len = 0;
}

void _gcs_snapw_put(gcs_snapw *w, const void *p, size_t n)
{
    const uint8_t *s = p;
    while (n > 0) {
        if (w->len == w->cap)
            _gcs_snapw_flush(w);
        size_t k = w->cap - w->len < n ? w->cap - w->len : n;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

void _gcs_snapw_header_typed(gcs_snapw *w, uint64_t n, uint64_t m, uint64_t r, uint64_t runs, uint64_t t,
                             uint64_t tb)
{
    snap_counts c = {.version = w->version, .n = n, .m = m, .r = r, .runs = runs, .t = t, .tb = tb};
    uint8_t h[SNAP_HEADER_BYTES_V3] = {0};
    unsigned hb = w->version >= 3 ? SNAP_HEADER_BYTES_V3 : SNAP_HEADER_BYTES_V2;
    memcpy(h, SNAP_MAGIC, 8);
    snap_st32(h + 8, w->version);
    snap_st32(h + 12, hb);
    snap_st32(h + 16, SNAP_ID_BYTES);
    snap_st32(h + 20, 0);
    snap_st64(h + 24, n);
    snap_st64(h + 32, m);
    snap_st64(h + 40, r);
    snap_st64(h + 48, runs);
    snap_st64(h + 56, _gcs_snap_file_bytes(&c));
    snap_st64(h + 64, t);
    snap_st64(h + 72, tb);
    if (w->version >= 3) {
        snap_st32(h + 80, SNAP_NSECTIONS_V3);
        snap_st32(h + 84, SNAP_BLOCK_SHIFT);
        snap_st32(h + 88, 0);
        snap_st32(h + 92, _gcs_crc32c(0, h, 92));
    } else {
        snap_st32(h + 80, SNAP_NSECTIONS_V2);
        snap_st32(h + 84, crc_update(0, h, 84));
    }
    _gcs_snapw_put(w, h, hb);
}

void _gcs_snapw_header(gcs_snapw *w, uint64_t n, uint64_t m, uint64_t r, uint64_t runs)
{
    _gcs_snapw_header_typed(w, n, m, r, runs, 0, 0);
}

void _gcs_snapw_no_types(gcs_snapw *w)
{
    int v3 = w->version >= 3;
    _gcs_snapw_section_begin(w, v3 ? SNAP3_TYPES : SNAP_SEC_TYPES, 0);
    _gcs_snapw_section_end(w);
    _gcs_snapw_section_begin(w, v3 ? SNAP3_OBJTYPES : SNAP_SEC_OBJTYPES, 0);
    _gcs_snapw_section_end(w);
}

void _gcs_snapw_section_begin(gcs_snapw *w, int section, uint64_t payload_bytes)
{
    /* Sections never nest and start 8-aligned; a caller that breaks this is
     * a bug, and in a release build the file is reported unwritten. */
    gcs_assert_internal(w->crc_from == SIZE_MAX && _gcs_snapw_offset(w) % 8 == 0);
    if (w->crc_from != SIZE_MAX || _gcs_snapw_offset(w) % 8)
        w->failed = 1;
    uint8_t h[SNAP_SECTION_HEAD] = {0};
    memcpy(h, w->version >= 3 ? _gcs_snap3_tags[section] : snap_tags[section], 4);
    snap_st64(h + 8, payload_bytes);
    w->section = section;
    if (w->version >= 3) {
        /* the head is checksummed with the block table, at the end */
        memcpy(w->head, h, sizeof h);
        _gcs_snapw_put(w, h, sizeof h);
        w->crc = 0;
        w->nblocks = 0;
        w->block_bytes = w->block_left = snap3_block_bytes(section);
        w->crc_from = w->len;
    } else {
        w->crc = crc_update(0, NULL, 0);
        w->crc_from = w->len;
        _gcs_snapw_put(w, h, sizeof h);
    }
    w->section_start = _gcs_snapw_offset(w);
    w->section_len = payload_bytes;
}

void _gcs_snapw_section_end(gcs_snapw *w)
{
    /* The payload matches the length declared in the section's head. */
    gcs_assert_internal(_gcs_snapw_offset(w) - w->section_start == w->section_len);
    if (_gcs_snapw_offset(w) - w->section_start != w->section_len)
        w->failed = 1;
    static const uint8_t zero[8];
    _gcs_snapw_put(w, zero, snap_pad8(w->section_len) - w->section_len);
    snapw_checksum(w);
    w->crc_from = SIZE_MAX;
    if (w->version >= 3) {
        if (w->block_left < w->block_bytes) /* the last, shorter block */
            snapw_block_end(w);
        gcs_assert_internal(w->failed || w->nblocks == snap3_nblocks(w->section_len, w->section));
        uint32_t frame = _gcs_crc32c(0, w->head, sizeof w->head);
        for (size_t k = 0; k < w->nblocks; k++) {
            uint8_t *q = _gcs_snapw_reserve(w, 4);
            snap_st32(q, w->blocks[k]);
            frame = _gcs_crc32c(frame, q, 4);
        }
        _gcs_snapw_u32(w, frame);
        if ((4 * w->nblocks + 4) % 8)
            _gcs_snapw_u32(w, 0);
        return;
    }
    uint8_t t[SNAP_SECTION_TAIL] = {0};
    snap_st32(t, w->crc);
    _gcs_snapw_put(w, t, sizeof t);
}

void _gcs_snapw_params(gcs_snapw *w, const gcs_snapshot_params *p)
{
    uint8_t b[SNAP_PARAMS_BYTES] = {0};
    snap_st32(b + 0, p->gc_threads);
    snap_st32(b + 4, p->mark_mode);
    snap_st64(b + 8, p->heap_limit);
    snap_st32(b + 16, p->page_bytes);
    snap_st32(b + 20, p->numa_policy);
    snap_st32(b + 24, (uint32_t)p->numa_node);
    snap_st32(b + 28, p->node_count);
    snap_st64(b + 32, p->collection);
    snap_st64(b + 40, p->timestamp_ns);
    snap_st64(b + 48, p->heap_base);
    snap_st32(b + 56, p->header_bytes);
    snap_st32(b + 60, p->granule_bytes);
    snap_st32(b + 64, p->source);
    snap_st32(b + 68, p->layout);
    _gcs_snapw_section_begin(w, SNAP_SEC_PARAMS, SNAP_PARAMS_BYTES);
    _gcs_snapw_put(w, b, sizeof b);
    _gcs_snapw_section_end(w);
}

/* A column of n 32-bit values (version 3) or the ids of edges and roots. */
static void snapw_u32s(gcs_snapw *w, int sec, const uint32_t *v, uint64_t n)
{
    _gcs_snapw_section_begin(w, sec, n * 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    _gcs_snapw_put(w, v, (size_t)(n * 4));
#else
    for (uint64_t i = 0; i < n; i++)
        _gcs_snapw_u32(w, v[i]);
#endif
    _gcs_snapw_section_end(w);
}

static void snapw_u64s(gcs_snapw *w, int sec, const uint64_t *v, uint64_t n)
{
    _gcs_snapw_section_begin(w, sec, n * 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    _gcs_snapw_put(w, v, (size_t)(n * 8));
#else
    for (uint64_t i = 0; i < n; i++)
        snap_st64(_gcs_snapw_reserve(w, 8), v[i]);
#endif
    _gcs_snapw_section_end(w);
}

int gcs_snapshot_write(const gcs_snapshot *g, const char *path, gcs_err *err)
{
    return _gcs_snapshot_write_version(g, path, GCS_SNAPSHOT_VERSION, err);
}

int _gcs_snapshot_write_version(const gcs_snapshot *g, const char *path, uint32_t version, gcs_err *err)
{
    gcs_err verr;
    if (gcs_snapshot_validate(g, &verr) < 0) {
        gcs_err_set(err, "%s: not written: %s", path, verr.msg);
        return -1;
    }
    uint64_t n = g->nobjects, runs = 0;
    for (uint64_t i = 0; i < n; i++)
        runs += i == 0 || g->node[i] != g->node[i - 1];
    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) < 0)
        return -1;
    gcs_snapw w;
    if (_gcs_snapw_init_version(&w, out.fp, version) < 0) {
        gcs_outfile_abort(&out);
        gcs_err_set(err, "%s: out of memory", path);
        return -1;
    }
    int v3 = version >= 3;
    uint64_t tb = 0;
    for (uint32_t k = 0; k < g->ntypes; k++)
        tb += strlen(g->type_names[k]) + 1;
    _gcs_snapw_header_typed(&w, n, g->nfields, g->nroots, runs, g->ntypes, tb);
    _gcs_snapw_params(&w, &g->params);
    if (v3) {
        snapw_u64s(&w, SNAP3_ADDR, g->addr, n);
        snapw_u32s(&w, SNAP3_WORDS, g->words, n);
        snapw_u32s(&w, SNAP3_NPTRS, g->nptrs, n);
        snapw_u64s(&w, SNAP3_ESTART, g->edge_start, n + 1);
    } else {
        _gcs_snapw_section_begin(&w, SNAP_SEC_OBJECTS, n * SNAP_OBJECT_BYTES);
        for (uint64_t i = 0; i < n; i++) {
            uint8_t *p = _gcs_snapw_reserve(&w, SNAP_OBJECT_BYTES);
            snap_st64(p, g->addr[i]);
            snap_st32(p + 8, g->words[i]);
            snap_st32(p + 12, g->nptrs[i]);
        }
        _gcs_snapw_section_end(&w);
    }
    _gcs_snapw_section_begin(&w, v3 ? SNAP3_NODES : SNAP_SEC_NODES, runs * SNAP_RUN_BYTES);
    for (uint64_t i = 0; i < n; i++) {
        if (i > 0 && g->node[i] == g->node[i - 1])
            continue;
        uint8_t *p = _gcs_snapw_reserve(&w, SNAP_RUN_BYTES);
        snap_st32(p, (uint32_t)i);
        snap_st16(p + 4, g->node[i]);
        snap_st16(p + 6, 0);
    }
    _gcs_snapw_section_end(&w);
    snapw_u32s(&w, v3 ? SNAP3_EDGES : SNAP_SEC_EDGES, g->edges, g->nfields);
    snapw_u32s(&w, v3 ? SNAP3_ROOTS : SNAP_SEC_ROOTS, g->roots, g->nroots);
    _gcs_snapw_section_begin(&w, v3 ? SNAP3_TYPES : SNAP_SEC_TYPES, tb);
    for (uint32_t k = 0; k < g->ntypes; k++)
        _gcs_snapw_put(&w, g->type_names[k], strlen(g->type_names[k]) + 1);
    _gcs_snapw_section_end(&w);
    snapw_u32s(&w, v3 ? SNAP3_OBJTYPES : SNAP_SEC_OBJTYPES, g->type, g->ntypes ? n : 0);
    _gcs_snapw_flush(&w);
    int failed = w.failed;
    _gcs_snapw_free(&w);
    if (failed) {
        gcs_outfile_abort(&out);
        gcs_err_set(err, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return gcs_outfile_commit(&out, err);
}

/* ---- the reader ------------------------------------------------------------------ */

typedef struct snap_src {
    const char *name;
    const uint8_t *mem;     /* buffer source, or NULL */
    int fd;                 /* file source */
    uint64_t size, pos;
    uint8_t *chunk;         /* file source: the read buffer */
    uint64_t sec_off[SNAP_NSECTIONS_V2 + 1]; /* file offsets of the sections, then the end */
    unsigned nsec;          /* sections of the file's version */
} snap_src;

static int section_at(const snap_src *s, uint64_t off)
{
    for (int i = 0; i < (int)s->nsec; i++)
        if (off < s->sec_off[i + 1])
            return i;
    return (int)s->nsec - 1;
}

/* File source: reads the n bytes at the current position into buf. */
static int src_fill(snap_src *s, uint8_t *buf, size_t n, gcs_err *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(s->fd, buf + got, n - got, (off_t)(s->pos + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            gcs_err_set(err, "%s: read failed: %s", s->name, strerror(errno));
            return -1;
        }
        if (k == 0) {
            gcs_err_set(err, "%s: truncated in section '%s' (the file shrank while being read)", s->name,
                        snap_names[section_at(s, s->pos + got)]);
            return -1;
        }
        got += (size_t)k;
    }
    return 0;
}

/* Returns n (<= SNAP_CHUNK) bytes at the current position and adds them to
 * *crc; NULL with err set when the file cannot be read. */
static const uint8_t *src_get(snap_src *s, size_t n, uint32_t *crc, gcs_err *err)
{
    const uint8_t *p;
    if (s->mem) {
        p = s->mem + s->pos;
    } else {
        if (src_fill(s, s->chunk, n, err) < 0)
            return NULL;
        p = s->chunk;
    }
    s->pos += n;
    if (crc)
        *crc = crc_update(*crc, p, n);
    return p;
}

/* The same into dst (n <= SNAP_CHUNK): a file is read straight into it,
 * without the copy through the chunk buffer.  0, or -1 with err set. */
static int src_copy(snap_src *s, void *dst, size_t n, uint32_t *crc, gcs_err *err)
{
    if (s->mem)
        memcpy(dst, s->mem + s->pos, n);
    else if (src_fill(s, dst, n, err) < 0)
        return -1;
    s->pos += n;
    *crc = crc_update(*crc, dst, n);
    return 0;
}

/* ---- reading a large section on several threads (OpenMP) -----------------
 * The next nbytes (a whole number of unit-byte rows) are cut into one slice
 * per thread; each thread reads its slice (into dst, or through its own
 * chunk buffer when dst is NULL), takes the slice's CRC from zero and hands
 * each piece to convert; the slices' CRCs are then joined with
 * crc32_combine, which gives the CRC of the whole payload.  1 when this is
 * not worth it (or not built with OpenMP) or when some read failed: nothing
 * is then consumed and the caller reads the section on its own thread, which
 * also gives a failed read its usual message. */
typedef void (*snap_convert_fn)(void *ctx, const uint8_t *p, uint64_t off, size_t n);

static int src_read_par(snap_src *s, uint64_t nbytes, size_t unit, uint8_t *dst, snap_convert_fn convert,
                        void *ctx, uint32_t *crc)
{
#ifdef _OPENMP
    enum { MAXT = 64 };
    int want = omp_get_max_threads();
    if (nbytes < SNAP_PAR_MIN_BYTES || want < 2)
        return 1;
    if (want > MAXT)
        want = MAXT;
    uint32_t part[MAXT];
    uint64_t plen[MAXT];
    int used = 1, failed = 0;
    uint64_t units = nbytes / unit, step = SNAP_CHUNK / unit * unit;
#pragma omp parallel num_threads(want) reduction(| : failed)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        uint64_t lo = units * (uint64_t)t / (uint64_t)nt * unit, hi = units * (uint64_t)(t + 1) / (uint64_t)nt * unit;
        uint8_t *buf = dst || s->mem ? NULL : malloc(SNAP_CHUNK);
        uint32_t c = (uint32_t)crc32_z(0, NULL, 0);
        if (!dst && !s->mem && !buf)
            failed = 1;
        for (uint64_t off = lo; off < hi && !failed; off += step) {
            size_t k = (size_t)(hi - off < step ? hi - off : step);
            const uint8_t *q;
            if (s->mem) {
                q = s->mem + s->pos + off;
                if (dst) {
                    memcpy(dst + off, q, k);
                    q = dst + off;
                }
            } else {
                uint8_t *to = dst ? dst + off : buf;
                for (size_t got = 0; got < k && !failed;) {
                    ssize_t r = pread(s->fd, to + got, k - got, (off_t)(s->pos + off + got));
                    if (r > 0)
                        got += (size_t)r;
                    else if (r == 0 || errno != EINTR)
                        failed = 1;
                }
                q = to;
            }
            if (failed)
                break;
            c = (uint32_t)crc32_z(c, q, k);
            if (convert)
                convert(ctx, q, off, k);
        }
        free(buf);
        part[t] = c;
        plen[t] = hi - lo;
#pragma omp single
        used = nt;
    }
    if (failed)
        return 1;
    for (int t = 0; t < used; t++)
        *crc = (uint32_t)crc32_combine(*crc, part[t], (z_off_t)plen[t]);
    s->pos += nbytes;
    return 0;
#else
    (void)s, (void)nbytes, (void)unit, (void)dst, (void)convert, (void)ctx, (void)crc;
    return 1;
#endif
}

/* The objects section's rows (SNAP_OBJECT_BYTES each, from byte off of the
 * payload) into the snapshot's columns. */
static void objects_convert(void *ctx, const uint8_t *q, uint64_t off, size_t n)
{
    gcs_snapshot *g = ctx;
    uint64_t i = off / SNAP_OBJECT_BYTES;
    for (size_t j = 0; j < n / SNAP_OBJECT_BYTES; j++, q += SNAP_OBJECT_BYTES) {
        g->addr[i + j] = snap_ld64(q);
        g->words[i + j] = snap_ld32(q + 8);
        g->nptrs[i + j] = snap_ld32(q + 12);
    }
}

/* Header checks, in the order that gives the most useful message. */
static int read_header(snap_src *s, snap_counts *c, gcs_err *err)
{
    const char *name = s->name;
    if (s->size == 0) {
        gcs_err_set(err, "%s: empty file, not a gcscale heap snapshot", name);
        return -1;
    }
    /* The version decides the header's length: read the first 12 bytes. */
    uint8_t h[SNAP_HEADER_BYTES_V2];
    size_t have = s->size < 12 ? (size_t)s->size : 12;
    const uint8_t *q = src_get(s, have, NULL, err);
    if (!q)
        return -1;
    memcpy(h, q, have);
    if (memcmp(h, SNAP_MAGIC, have < 8 ? have : 8) != 0) {
        gcs_err_set(err, "%s: not a gcscale heap snapshot (bad magic)", name);
        return -1;
    }
    if (have < 12) {
        gcs_err_set(err, "%s: truncated in the header (%llu of at least 12 bytes)", name, (unsigned long long)have);
        return -1;
    }
    uint32_t version = snap_ld32(h + 8);
    if (version < 1 || version > 3) {
        gcs_err_set(err, "%s: unsupported snapshot format version %u (this reader reads versions 1, 2 and 3)",
                    name, version);
        return -1;
    }
    if (version == 3) { /* the callers read version 3 in place; a file that changed under them */
        gcs_err_set(err, "%s: the file changed while it was being read", name);
        return -1;
    }
    unsigned hbytes = version == 1 ? SNAP_HEADER_BYTES_V1 : SNAP_HEADER_BYTES_V2;
    if (s->size < hbytes) {
        gcs_err_set(err, "%s: truncated in the header (%llu of %u bytes)", name, (unsigned long long)s->size,
                    hbytes);
        return -1;
    }
    if (!(q = src_get(s, hbytes - 12, NULL, err)))
        return -1;
    memcpy(h + 12, q, hbytes - 12);
    unsigned crc_at = hbytes - 4, nsec_at = hbytes - 8;
    uint32_t stored = snap_ld32(h + crc_at), computed = crc_update(0, h, crc_at);
    if (stored != computed) {
        gcs_err_set(err, "%s: header checksum mismatch (stored %08x, computed %08x)", name, stored, computed);
        return -1;
    }
    c->version = version;
    s->nsec = snap_nsections(version);
    if (snap_ld32(h + 12) != hbytes || snap_ld32(h + nsec_at) != s->nsec) {
        gcs_err_set(err, "%s: header of %u bytes with %u sections (version %u has %u and %u)", name,
                    snap_ld32(h + 12), snap_ld32(h + nsec_at), version, hbytes, s->nsec);
        return -1;
    }
    if (snap_ld32(h + 16) != SNAP_ID_BYTES) {
        gcs_err_set(err, "%s: unsupported id width of %u bytes (versions 1 and 2 have 4-byte ids)", name,
                    snap_ld32(h + 16));
        return -1;
    }
    if (snap_ld32(h + 20) != 0) {
        gcs_err_set(err, "%s: unknown header flags %08x", name, snap_ld32(h + 20));
        return -1;
    }
    c->n = snap_ld64(h + 24);
    c->m = snap_ld64(h + 32);
    c->r = snap_ld64(h + 40);
    c->runs = snap_ld64(h + 48);
    c->file_bytes = snap_ld64(h + 56);
    c->t = version == 1 ? 0 : snap_ld64(h + 64);
    c->tb = version == 1 ? 0 : snap_ld64(h + 72);
    if (_gcs_snap_check_counts(c, name, err) < 0)
        return -1;
    uint64_t payload[SNAP_NSECTIONS_V2];
    int ok;
    snap_section_sizes(c, payload, &ok);
    s->sec_off[0] = hbytes;
    for (int i = 0; i < (int)s->nsec; i++)
        s->sec_off[i + 1] = s->sec_off[i] + SNAP_SECTION_HEAD + snap_pad8(payload[i]) + SNAP_SECTION_TAIL;
    if (s->size < c->file_bytes) {
        gcs_err_set(err, "%s: truncated in section '%s' (file has %llu of %llu bytes)", name,
                    snap_names[section_at(s, s->size)], (unsigned long long)s->size,
                    (unsigned long long)c->file_bytes);
        return -1;
    }
    if (s->size > c->file_bytes) {
        gcs_err_set(err, "%s: %llu unexpected bytes after the last section (file has %llu, expected %llu)",
                    name, (unsigned long long)(s->size - c->file_bytes), (unsigned long long)s->size,
                    (unsigned long long)c->file_bytes);
        return -1;
    }
    return 0;
}

/* Section frame: reads the 16-byte head (into *crc) and returns 0; the
 * caller reads the payload, then section_close checks pad, CRC, tag, length. */
static int section_open(snap_src *s, int sec, uint32_t *crc, uint8_t head[SNAP_SECTION_HEAD], gcs_err *err)
{
    *crc = crc_update(0, NULL, 0);
    const uint8_t *h = src_get(s, SNAP_SECTION_HEAD, crc, err);
    if (!h)
        return -1;
    memcpy(head, h, SNAP_SECTION_HEAD);
    (void)sec;
    return 0;
}

static int section_close(snap_src *s, int sec, uint32_t crc, const uint8_t head[SNAP_SECTION_HEAD],
                         uint64_t payload, gcs_err *err)
{
    size_t pad = (size_t)(snap_pad8(payload) - payload);
    const uint8_t *p = src_get(s, pad, &crc, err);
    if (!p)
        return -1;
    int pad_zero = 1;
    for (size_t i = 0; i < pad; i++)
        pad_zero &= p[i] == 0;
    const uint8_t *t = src_get(s, SNAP_SECTION_TAIL, NULL, err);
    if (!t)
        return -1;
    uint32_t stored = snap_ld32(t);
    if (stored != crc || snap_ld32(t + 4) != 0) {
        if (stored != crc)
            gcs_err_set(err, "%s: checksum mismatch in section '%s' (stored %08x, computed %08x)", s->name,
                        snap_names[sec], stored, crc);
        else
            gcs_err_set(err, "%s: checksum mismatch in section '%s' (damaged checksum trailer)", s->name,
                        snap_names[sec]);
        return -1;
    }
    if (memcmp(head, snap_tags[sec], 4) != 0) {
        gcs_err_set(err, "%s: section %d is not '%s' (tag %02x%02x%02x%02x)", s->name, sec + 1,
                    snap_tags[sec], head[0], head[1], head[2], head[3]);
        return -1;
    }
    if (snap_ld32(head + 4) != 0 || !pad_zero) {
        gcs_err_set(err, "%s: section '%s': reserved bytes are not zero", s->name, snap_names[sec]);
        return -1;
    }
    if (snap_ld64(head + 8) != payload) {
        gcs_err_set(err, "%s: section '%s' declares %llu bytes, the header's counts give %llu", s->name,
                    snap_names[sec], (unsigned long long)snap_ld64(head + 8), (unsigned long long)payload);
        return -1;
    }
    return 0;
}

/* Copies count 32-bit little-endian ids into dst, chunk by chunk (a large
 * section on several threads, straight into dst). */
static int read_u32s(snap_src *s, uint32_t *dst, uint64_t count, uint32_t *crc, gcs_err *err)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (src_read_par(s, count * 4, 4, (uint8_t *)dst, NULL, NULL, crc) == 0)
        return 0;
#endif
    while (count > 0) {
        size_t k = count > SNAP_CHUNK / 4 ? SNAP_CHUNK / 4 : (size_t)count;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (src_copy(s, dst, k * 4, crc, err) < 0)
            return -1;
#else
        const uint8_t *p = src_get(s, k * 4, crc, err);
        if (!p)
            return -1;
        for (size_t i = 0; i < k; i++)
            dst[i] = snap_ld32(p + 4 * i);
#endif
        dst += k;
        count -= k;
    }
    return 0;
}

/* The PARM payload b (SNAP_PARAMS_BYTES) of a file of that version into *p;
 * returns its reserved bytes ORed (0 when they are all zero). */
uint64_t _gcs_snap_params_parse(const uint8_t *b, uint32_t version, gcs_snapshot_params *p)
{
    p->gc_threads = snap_ld32(b + 0);
    p->mark_mode = snap_ld32(b + 4);
    p->heap_limit = snap_ld64(b + 8);
    p->page_bytes = snap_ld32(b + 16);
    p->numa_policy = snap_ld32(b + 20);
    p->numa_node = (int32_t)snap_ld32(b + 24);
    p->node_count = snap_ld32(b + 28);
    p->collection = snap_ld64(b + 32);
    p->timestamp_ns = snap_ld64(b + 40);
    p->heap_base = snap_ld64(b + 48);
    p->header_bytes = snap_ld32(b + 56);
    p->granule_bytes = snap_ld32(b + 60);
    if (version >= 2) {
        p->source = snap_ld32(b + 64);
        p->layout = snap_ld32(b + 68);
    }
    return (version == 1 ? snap_ld64(b + 64) : 0) | snap_ld64(b + 72);
}

static uint64_t count_nuls(const char *p, uint64_t n)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        k += p[i] == 0;
    return k;
}

/* The TYPE payload blob[0..tb): exactly t NUL-terminated names (t NULs, the
 * last byte one of them) into g's type-name table; names: room for t
 * pointers.  0, or -1 with err "NAME: ...". */
int _gcs_snap_types_parse(const char *blob, uint64_t tb, uint64_t t, const char **names, gcs_snapshot *g,
                          const char *name, gcs_err *err)
{
    uint64_t k = 0;
    for (uint64_t off = 0; off < tb; off++) {
        if (off == 0 || blob[off - 1] == 0) {
            if (k == t)
                break;
            names[k++] = blob + off;
        }
    }
    if (k != t || (tb && blob[tb - 1] != 0) || count_nuls(blob, tb) != t) {
        gcs_err_set(err, "%s: section 'types' does not hold exactly %llu NUL-terminated names", name,
                    (unsigned long long)t);
        return -1;
    }
    return gcs_snapshot_set_types(g, (uint32_t)t, names, err);
}

/* Version 2's type sections: the names (exactly t NUL-terminated strings,
 * bounded by the file size already), then one type index per object. */
static int read_types(snap_src *s, const snap_counts *c, gcs_snapshot *g, gcs_err *err)
{
    uint8_t head[SNAP_SECTION_HEAD];
    uint32_t crc;
    char *blob = malloc(c->tb ? (size_t)c->tb : 1);
    const char **names = malloc(c->t ? (size_t)c->t * sizeof *names : 1);
    int rc = -1;
    if (!blob || !names) {
        gcs_err_set(err, "%s: out of memory for %llu type names", s->name, (unsigned long long)c->t);
        goto done;
    }
    if (section_open(s, SNAP_SEC_TYPES, &crc, head, err) < 0)
        goto done;
    for (uint64_t off = 0; off < c->tb;) {
        size_t k = c->tb - off > SNAP_CHUNK ? SNAP_CHUNK : (size_t)(c->tb - off);
        if (src_copy(s, blob + off, k, &crc, err) < 0)
            goto done;
        off += k;
    }
    if (section_close(s, SNAP_SEC_TYPES, crc, head, c->tb, err) < 0)
        goto done;
    if (_gcs_snap_types_parse(blob, c->tb, c->t, names, g, s->name, err) < 0)
        goto done;
    uint64_t ot = c->t ? c->n * SNAP_ID_BYTES : 0;
    if (section_open(s, SNAP_SEC_OBJTYPES, &crc, head, err) < 0
        || (c->t && read_u32s(s, g->type, c->n, &crc, err) < 0)
        || section_close(s, SNAP_SEC_OBJTYPES, crc, head, ot, err) < 0)
        goto done;
    rc = 0;
done:
    free(blob);
    free(names);
    return rc;
}

/* edge_start[] from nptrs[] (a prefix sum: each thread sums its slice, then
 * writes it from the total of the slices before); returns the sum. */
static uint64_t edge_starts(gcs_snapshot *g)
{
    uint64_t n = g->nobjects, total = 0;
    enum { MAXT = 64 };
    uint64_t part[MAXT + 1] = {0};
    int used = 1, want = 1;
#ifdef _OPENMP
    want = omp_get_max_threads() < MAXT ? omp_get_max_threads() : MAXT;
#else
    (void)want;
#endif
#pragma omp parallel num_threads(want) if (n >= SNAP_PAR_MIN_ITEMS)
    {
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        nt = omp_get_num_threads();
#endif
        uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt, sum = 0;
        for (uint64_t i = lo; i < hi; i++)
            sum += g->nptrs[i];
        part[t + 1] = sum;
#pragma omp barrier
#pragma omp single
        {
            used = nt;
            for (int k = 1; k <= nt; k++)
                part[k] += part[k - 1];
        }
        sum = part[t];
        for (uint64_t i = lo; i < hi; i++) {
            g->edge_start[i] = sum;
            sum += g->nptrs[i];
        }
    }
    total = part[used];
    g->edge_start[n] = total;
    return total;
}

static gcs_snapshot *read_snapshot(snap_src *s, gcs_err *err)
{
    snap_counts c;
    if (read_header(s, &c, err) < 0)
        return NULL;
    /* Every count is now bounded by the (real) file size. */
    gcs_err e2;
    gcs_snapshot *g = gcs_snapshot_new(c.n, c.m, c.r, &e2);
    uint32_t *runs = malloc(c.runs ? c.runs * 2 * sizeof *runs : 1);
    if (!g || !runs) {
        gcs_err_set(err, "%s: %s", s->name, g ? "out of memory" : e2.msg);
        gcs_snapshot_free(g);
        free(runs);
        return NULL;
    }
    uint8_t head[SNAP_SECTION_HEAD];
    uint32_t crc;
    uint64_t param_reserved = 0;
    /* params */
    if (section_open(s, SNAP_SEC_PARAMS, &crc, head, err) < 0)
        goto fail;
    const uint8_t *b = src_get(s, SNAP_PARAMS_BYTES, &crc, err);
    if (!b)
        goto fail;
    gcs_snapshot_params *p = &g->params;
    param_reserved = _gcs_snap_params_parse(b, c.version, p);
    if (section_close(s, SNAP_SEC_PARAMS, crc, head, SNAP_PARAMS_BYTES, err) < 0)
        goto fail;
    if (param_reserved) {
        gcs_err_set(err, "%s: section 'params': reserved bytes are not zero", s->name);
        goto fail;
    }
    /* objects: rows -> columns */
    if (section_open(s, SNAP_SEC_OBJECTS, &crc, head, err) < 0)
        goto fail;
    for (uint64_t i = src_read_par(s, c.n * SNAP_OBJECT_BYTES, SNAP_OBJECT_BYTES, NULL, objects_convert, g, &crc)
                          ? 0
                          : c.n;
         i < c.n;) {
        size_t k = c.n - i > SNAP_CHUNK / SNAP_OBJECT_BYTES ? SNAP_CHUNK / SNAP_OBJECT_BYTES : (size_t)(c.n - i);
        const uint8_t *q = src_get(s, k * SNAP_OBJECT_BYTES, &crc, err);
        if (!q)
            goto fail;
        objects_convert(g, q, i * SNAP_OBJECT_BYTES, k * SNAP_OBJECT_BYTES);
        i += k;
    }
    if (section_close(s, SNAP_SEC_OBJECTS, crc, head, c.n * SNAP_OBJECT_BYTES, err) < 0)
        goto fail;
    /* node runs: (first id, node | reserved << 16) pairs */
    if (section_open(s, SNAP_SEC_NODES, &crc, head, err) < 0 || read_u32s(s, runs, c.runs * 2, &crc, err) < 0
        || section_close(s, SNAP_SEC_NODES, crc, head, c.runs * SNAP_RUN_BYTES, err) < 0)
        goto fail;
    /* edges and roots */
    if (section_open(s, SNAP_SEC_EDGES, &crc, head, err) < 0 || read_u32s(s, g->edges, c.m, &crc, err) < 0
        || section_close(s, SNAP_SEC_EDGES, crc, head, c.m * SNAP_ID_BYTES, err) < 0)
        goto fail;
    if (section_open(s, SNAP_SEC_ROOTS, &crc, head, err) < 0 || read_u32s(s, g->roots, c.r, &crc, err) < 0
        || section_close(s, SNAP_SEC_ROOTS, crc, head, c.r * SNAP_ID_BYTES, err) < 0)
        goto fail;
    if (c.version >= 2 && read_types(s, &c, g, err) < 0)
        goto fail;

    /* Content.  Params, node runs (they fill node[]), the fields' total,
     * then everything else through gcs_snapshot_validate. */
    if (_gcs_snap_validate_params(p, &e2) < 0) {
        gcs_err_set(err, "%s: %s", s->name, e2.msg);
        goto fail;
    }
    if ((c.n == 0) != (c.runs == 0) || c.runs > c.n) {
        gcs_err_set(err, "%s: %llu node runs for %llu objects", s->name, (unsigned long long)c.runs,
                    (unsigned long long)c.n);
        goto fail;
    }
    for (uint64_t k = 0; k < c.runs; k++) {
        uint32_t first = runs[2 * k], v = runs[2 * k + 1];
        uint16_t node = (uint16_t)v;
        uint64_t end = k + 1 < c.runs ? runs[2 * k + 2] : c.n;
        if ((k == 0 && first != 0) || (k > 0 && first <= runs[2 * k - 2]) || first >= c.n || end > c.n) {
            gcs_err_set(err, "%s: node run %llu starts at object %u: runs must start at 0 and ascend below %llu",
                        s->name, (unsigned long long)k, first, (unsigned long long)c.n);
            goto fail;
        }
        if (v >> 16) {
            gcs_err_set(err, "%s: section 'nodes': reserved bytes are not zero", s->name);
            goto fail;
        }
        if (node != GCS_SNAPSHOT_NODE_UNKNOWN && node >= p->node_count) {
            gcs_err_set(err, "%s: objects %u.. are on memory node %u, but the node count is %u", s->name, first,
                        node, p->node_count);
            goto fail;
        }
        for (uint64_t i = first; i < end; i++)
            g->node[i] = node;
    }
    uint64_t sum = edge_starts(g);
    if (sum != c.m) {
        gcs_err_set(err, "%s: the objects' pointer fields add up to %llu, the header says %llu", s->name,
                    (unsigned long long)sum, (unsigned long long)c.m);
        goto fail;
    }
    if (gcs_snapshot_validate(g, &e2) < 0) {
        gcs_err_set(err, "%s: %s", s->name, e2.msg);
        goto fail;
    }
    free(runs);
    return g;
fail:
    free(runs);
    gcs_snapshot_free(g);
    return NULL;
}

/* Is this the start of a version-3 file (read in place)? */
static int is_v3(const uint8_t *b, size_t len)
{
    return len >= 12 && memcmp(b, SNAP_MAGIC, 8) == 0 && snap_ld32(b + 8) == 3;
}

/* The length a version-3 snapshot's header states (its CRC checked), for
 * the zstd reader to size its buffer once; 0 for anything else. */
static uint64_t stated_length(const void *head, size_t n)
{
    const uint8_t *h = head;
    if (n < SNAP_HEADER_BYTES_V3 || !is_v3(h, n) || snap_ld32(h + 92) != _gcs_crc32c(0, h, 92))
        return 0;
    return snap_ld64(h + 56);
}

/* A version-3 file's bytes in buf (malloc'ed, 8-aligned), read in place:
 * the snapshot owns buf from here on. */
static gcs_snapshot *read_owned_v3(void *buf, size_t len, const char *name, gcs_err *err)
{
    snap_store *st = calloc(1, sizeof *st);
    if (!st) {
        free(buf);
        gcs_err_set(err, "%s: out of memory", name);
        return NULL;
    }
    st->owned = buf;
    return _gcs_snap3_read_inplace(buf, len, st, name, err);
}

gcs_snapshot *gcs_snapshot_read_mem(const void *data, size_t len, const char *name, gcs_err *err)
{
    if (data && is_v3(data, len)) {
        /* the caller keeps its buffer: the columns go to a copy of our own */
        void *buf = aligned_alloc(64, (len + 63) & ~(size_t)63);
        if (!buf) {
            gcs_err_set(err, "%s: out of memory", name ? name : "snapshot");
            return NULL;
        }
        memcpy(buf, data, len);
        return read_owned_v3(buf, len, name ? name : "snapshot", err);
    }
    snap_src s = {0};
    s.name = name ? name : "snapshot";
    s.mem = data ? data : (const uint8_t *)"";
    s.fd = -1;
    s.size = data ? len : 0;
    return read_snapshot(&s, err);
}

gcs_snapshot *gcs_snapshot_read(const char *path, gcs_err *err)
{
    snap_src s = {0};
    s.name = path;
    s.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s.fd < 0) {
        gcs_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb;
    int fst = fstat(s.fd, &sb);
    if (fst != 0 || !S_ISREG(sb.st_mode)) {
        gcs_err_set(err, "%s: cannot read: %s", path, fst != 0 ? strerror(errno) : "not a regular file");
        close(s.fd);
        return NULL;
    }
    /* A heap dump (HPROF, plain or gzip; a V8 snapshot) is imported. */
    uint8_t first[18];
    ssize_t nf = pread(s.fd, first, sizeof first, 0);
    if ((nf >= 2 && first[0] == 0x1f && first[1] == 0x8b) || (nf >= 1 && first[0] == '{')
        || (nf == (ssize_t)sizeof first && memcmp(first, "JAVA PROFILE 1.0.", 17) == 0)) {
        int format = _gcs_heapdump_sniff(path, err);
        if (format != GCS_HEAPDUMP_UNKNOWN) {
            close(s.fd);
            return format < 0 ? NULL : gcs_heapdump_import(path, format, NULL, err);
        }
    }
    /* A zstd-compressed snapshot (.snap.zst, the corpus) is read from memory. */
    void *plain;
    size_t plain_len;
    int z = _gcs_zstd_load_fd(s.fd, path, stated_length, &plain, &plain_len, err);
    if (z != 0) {
        close(s.fd);
        if (z > 0 && is_v3(plain, plain_len))
            return read_owned_v3(plain, plain_len, path, err);
        gcs_snapshot *g = z > 0 ? gcs_snapshot_read_mem(plain, plain_len, path, err) : NULL;
        free(z > 0 ? plain : NULL);
        return g;
    }
    if (is_v3(first, nf > 0 ? (size_t)nf : 0) && (uint64_t)sb.st_size <= SIZE_MAX) {
        /* version 3: the file's columns are used in place (snapshot_map.c) */
        size_t size = (size_t)sb.st_size;
        snap_store *st = calloc(1, sizeof *st);
        void *map = st ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, s.fd, 0) : MAP_FAILED;
        if (map != MAP_FAILED) {
            close(s.fd);
            st->map = map;
            st->map_len = size;
#ifdef MADV_WILLNEED
            madvise(map, size, MADV_WILLNEED); /* read ahead what is not in the page cache yet */
#endif
            return _gcs_snap3_read_inplace(map, size, st, path, err);
        }
        /* no mapping (a file system without mmap): read into memory instead */
        void *buf = st ? aligned_alloc(64, (size + 63) & ~(size_t)63) : NULL;
        for (size_t got = 0; buf && got < size;) {
            ssize_t k = pread(s.fd, (uint8_t *)buf + got, size - got, (off_t)got);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                gcs_err_set(err, "%s: read failed: %s", path, k < 0 ? strerror(errno) : "the file shrank");
                free(buf);
                free(st);
                close(s.fd);
                return NULL;
            }
            got += (size_t)k;
        }
        close(s.fd);
        free(st);
        if (!buf) {
            gcs_err_set(err, "%s: out of memory", path);
            return NULL;
        }
        return read_owned_v3(buf, size, path, err);
    }
    s.size = (uint64_t)sb.st_size;
    s.chunk = malloc(SNAP_CHUNK);
    if (!s.chunk) {
        gcs_err_set(err, "%s: out of memory", path);
        close(s.fd);
        return NULL;
    }
    posix_fadvise(s.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    gcs_snapshot *g = read_snapshot(&s, err);
    free(s.chunk);
    close(s.fd);
    return g;
}

/* ---- statistics ---------------------------------------------------------------------- */

int gcs_snapshot_stats_compute(const gcs_snapshot *g, gcs_snapshot_stats *st, gcs_err *err)
{
    memset(st, 0, sizeof *st);
    uint64_t n = g->nobjects;
    uint32_t nc = g->params.node_count;
    st->node_count = nc;
    st->node_objects = calloc((size_t)nc + 1, sizeof *st->node_objects);
    st->node_bytes = calloc((size_t)nc + 1, sizeof *st->node_bytes);
    uint64_t *seen = calloc((size_t)(n / 64 + 1), sizeof *seen);
    uint32_t *queue = malloc((size_t)(n ? n : 1) * sizeof *queue);
    if (!st->node_objects || !st->node_bytes || !seen || !queue) {
        free(seen);
        free(queue);
        gcs_snapshot_stats_free(st);
        gcs_err_set(err, "snapshot: out of memory for statistics");
        return -1;
    }
    st->objects = n;
    st->fields = g->nfields;
    st->roots = g->nroots;
    st->header_bytes = n * g->params.header_bytes;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t bytes = 8 * (uint64_t)g->words[i];
        st->bytes += bytes;
        if (bytes > st->max_bytes)
            st->max_bytes = bytes;
        if (g->nptrs[i] > st->max_nptrs)
            st->max_nptrs = g->nptrs[i];
        uint32_t nd = g->node[i] < nc ? g->node[i] : nc;
        st->node_objects[nd]++;
        st->node_bytes[nd] += bytes;
        for (uint64_t e = g->edge_start[i]; e < g->edge_start[i + 1]; e++) {
            st->edges += g->edges[e] != GCS_SNAPSHOT_NULL;
            st->self_edges += g->edges[e] == i;
        }
    }
    if (n)
        st->span_bytes = g->addr[n - 1] + 8 * (uint64_t)g->words[n - 1] - (g->addr[0] - g->params.header_bytes);
    /* BFS by levels from the roots. */
    uint64_t tail = 0;
    for (uint64_t k = 0; k < g->nroots; k++) {
        uint32_t r = g->roots[k];
        if (!(seen[r >> 6] >> (r & 63) & 1)) {
            seen[r >> 6] |= 1ull << (r & 63);
            queue[tail++] = r;
        }
    }
    st->distinct_roots = tail;
    uint64_t head = 0;
    while (head < tail) {
        uint64_t level_end = tail;
        st->depth++;
        for (; head < level_end; head++) {
            uint32_t v = queue[head];
            for (uint64_t e = g->edge_start[v]; e < g->edge_start[v + 1]; e++) {
                uint32_t t = g->edges[e];
                if (t != GCS_SNAPSHOT_NULL && !(seen[t >> 6] >> (t & 63) & 1)) {
                    seen[t >> 6] |= 1ull << (t & 63);
                    queue[tail++] = t;
                }
            }
        }
    }
    st->reachable = tail;
    free(seen);
    free(queue);
    return 0;
}

void gcs_snapshot_stats_free(gcs_snapshot_stats *st)
{
    free(st->node_objects);
    free(st->node_bytes);
    st->node_objects = st->node_bytes = NULL;
}

/* ---- types ------------------------------------------------------------------------- */

static int type_row_cmp(const void *a, const void *b)
{
    const gcs_snapshot_type_row *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->type < y->type ? -1 : x->type > y->type;
}

int gcs_snapshot_type_summary(const gcs_snapshot *g, gcs_snapshot_type_row **rows, uint32_t *nrows, gcs_err *err)
{
    uint64_t nt = (uint64_t)g->ntypes + 1; /* the last slot: no type */
    gcs_snapshot_type_row *r = calloc((size_t)nt, sizeof *r);
    *rows = NULL;
    *nrows = 0;
    if (!r) {
        gcs_err_set(err, "snapshot: out of memory for %llu types", (unsigned long long)nt);
        return -1;
    }
    uint64_t hb = g->params.header_bytes;
    for (uint64_t i = 0; i < g->nobjects; i++) {
        uint32_t t = g->type[i] < g->ntypes ? g->type[i] : g->ntypes;
        r[t].objects++;
        r[t].bytes += 8 * (uint64_t)g->words[i] + hb;
        for (uint64_t e = g->edge_start[i]; e < g->edge_start[i + 1]; e++)
            r[t].edges += g->edges[e] != GCS_SNAPSHOT_NULL;
    }
    uint32_t k = 0;
    for (uint64_t t = 0; t < nt; t++) {
        if (!r[t].objects)
            continue;
        r[k] = r[t];
        r[k].type = t < g->ntypes ? (uint32_t)t : GCS_SNAPSHOT_TYPE_NONE;
        r[k].name = t < g->ntypes ? g->type_names[t] : "(no type)";
        k++;
    }
    qsort(r, k, sizeof *r, type_row_cmp);
    *rows = r;
    *nrows = k;
    return 0;
}
