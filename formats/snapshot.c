/* snapshot.c -- heap snapshots: the graph in memory (a struct of arrays:
 * allocation, the default params, the type names, what holds the arrays
 * and freeing it), the names of the params' values, what the writer and
 * both readers share of the file layout (the sections' tags and names, the
 * sizes the header's counts give, and their check against the file size),
 * and graph statistics (gcs_snapshot_stats_compute, the per-type summary).
 * The byte layout is specified in docs/snapshot-format.md;
 * snapshot_internal.h has its constants.
 *
 * The format's other jobs have files of their own: the content's rules
 * (snapshot_check.c), the writer (snapshot_write.c), reading a file and the
 * reader of versions 1 and 2 (snapshot_read.c), version 3 read in place
 * (snapshot_map.c) and other layouts of a graph (snapshot_order.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define GCS_SNAPSHOT_FILES
#include "../common/internal.h"
#include "snapshot_internal.h"

const char _gcs_snap_tags[SNAP_NSECTIONS_V2][5] = {"PARM", "OBJS", "NODE", "EDGE", "ROOT", "TYPE", "OTYP"};
const char *const _gcs_snap_names[SNAP_NSECTIONS_V2] = {"params", "objects", "nodes", "edges", "roots", "types",
                                                        "object types"};
/* Version 3's sections (snapshot_map.c reads them). */
const char _gcs_snap3_tags[SNAP_NSECTIONS_V3][5] = {"PARM", "ADDR", "WRDS", "NPTR", "ESTR",
                                                     "NODE", "EDGE", "ROOT", "TYPE", "OTYP"};
const char *const _gcs_snap3_names[SNAP_NSECTIONS_V3] = {
    "params", "object addresses", "object sizes", "object pointer counts", "object edge starts",
    "nodes", "edges", "roots", "types", "object types"};

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
void _gcs_snap_section_sizes(const snap_counts *c, uint64_t payload[SNAP_NSECTIONS_V2], int *ok)
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
    _gcs_snap_section_sizes(c, payload, &ok);
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
    /* An importer fills the block once, front to back per array: its cost is
     * the kernel handing out fresh pages, one fault per 4 KiB without this.
     * Huge pages cut the faults 500-fold; on a host that backs the guest's
     * memory lazily a fresh huge page can cost more than the small ones
     * it replaces (docs/heap-dumps.md, "Performance": measured both ways). */
    if (mem)
        _gcs_hugepages(mem, (size_t)total);
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
