/* synth.c -- synthetic heap snapshots shaped like the paper's BH and Cube.
 *
 * Built in two passes: the first creates the objects in allocation order
 * (sizes and pointer counts) and their edges as object indexes; the second
 * lays them out and fills a gcs_snapshot.  Object ids must be in address
 * order, and allocation order is address order here, so an object's index
 * is its id. */
#include <stdlib.h>
#include <string.h>

#include "gcscale/synth.h"

#define PAGE_BYTES 65536
#define HEADER_BYTES 8
#define GRANULE_BYTES 16

typedef struct builder {
    uint64_t n, cap;
    uint32_t *words, *nptrs;
    uint64_t nfields, fields_cap;
    uint32_t *fields;        /* edges as object ids, GCS_SNAPSHOT_NULL for NULL */
    uint64_t rng;
    int failed;
} builder;

/* Appends an object with `words` payload words whose first `nptrs` are
 * pointer fields (NULL for now); returns its id. */
static uint32_t add_object(builder *b, uint32_t words, uint32_t nptrs)
{
    if (b->n == b->cap) {
        uint64_t cap = b->cap ? 2 * b->cap : 4096;
        uint32_t *w = realloc(b->words, cap * sizeof *w), *p = w ? realloc(b->nptrs, cap * sizeof *p) : NULL;
        if (!w || !p) {
            b->words = w ? w : b->words;
            b->failed = 1;
            return 0;
        }
        b->words = w, b->nptrs = p, b->cap = cap;
    }
    if (b->nfields + nptrs > b->fields_cap) {
        uint64_t cap = b->fields_cap ? 2 * b->fields_cap : 4096;
        while (cap < b->nfields + nptrs)
            cap *= 2;
        uint32_t *f = realloc(b->fields, cap * sizeof *f);
        if (!f) {
            b->failed = 1;
            return 0;
        }
        b->fields = f, b->fields_cap = cap;
    }
    for (uint32_t i = 0; i < nptrs; i++)
        b->fields[b->nfields + i] = GCS_SNAPSHOT_NULL;
    b->nfields += nptrs;
    b->words[b->n] = words;
    b->nptrs[b->n] = nptrs;
    return (uint32_t)b->n++;
}

/* An object's fields are contiguous in id order: a caller remembers
 * b->nfields before add_object() to address them later.  add_object() may
 * move b->fields, so never hold a pointer into it across a call. */

/* ---- bh: an irregular octree over n bodies ----------------------------------- */

/* Builds the cell holding bodies [first, first + count) and returns its id.
 * Bodies are split among the 8 octants unevenly, as clustered particles are. */
static uint32_t bh_cell(builder *b, const uint32_t *bodies, uint64_t first, uint64_t count)
{
    if (count == 1)
        return bodies[first];
    uint64_t field0 = b->nfields;
    uint32_t cell = add_object(b, 12, 8);
    if (b->failed)
        return 0;
    uint64_t cut[9];
    cut[0] = 0;
    cut[8] = count;
    for (int k = 1; k < 8; k++)
        cut[k] = gcs_random_next(&b->rng) % (count + 1);
    /* sort the 7 inner cuts */
    for (int i = 1; i < 8; i++)
        for (int j = i + 1; j < 8; j++)
            if (cut[j] < cut[i]) {
                uint64_t t = cut[i];
                cut[i] = cut[j];
                cut[j] = t;
            }
    /* A split that leaves everything in one octant would recurse forever on
     * two bodies at the same point; force progress. */
    int nonempty = 0;
    for (int k = 0; k < 8; k++)
        nonempty += cut[k + 1] > cut[k];
    if (nonempty < 2)
        for (int k = 1; k < 8; k++)
            cut[k] = count * (uint64_t)k / 8;
    for (int k = 0; k < 8; k++) {
        uint64_t c = cut[k + 1] - cut[k];
        if (c == 0)
            continue;
        uint32_t child = bh_cell(b, bodies, first + cut[k], c);
        if (b->failed)
            return 0;
        b->fields[field0 + (uint64_t)k] = child;
    }
    return cell;
}

static int build_bh(builder *b, uint64_t n, uint32_t *roots, uint64_t *nroots)
{
    /* The body array first (as a program allocates it at start-up), then
     * the bodies, then the tree built over them. */
    uint64_t array_field0 = b->nfields;
    uint32_t array = add_object(b, (uint32_t)n, (uint32_t)n);
    uint32_t *bodies = malloc(n * sizeof *bodies);
    if (!bodies || b->failed) {
        free(bodies);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        bodies[i] = add_object(b, 8, 0);
        if (b->failed)
            break;
        b->fields[array_field0 + i] = bodies[i];
    }
    uint32_t root = b->failed ? 0 : bh_cell(b, bodies, 0, n);
    free(bodies);
    if (b->failed)
        return -1;
    roots[0] = array;
    roots[1] = root;
    *nroots = 2;
    return 0;
}

/* ---- cube: a breadth-first search tree of states ----------------------------------- */

static int build_cube(builder *b, uint64_t n, uint32_t *roots, uint64_t *nroots)
{
    /* Level by level: each state of the previous level gets up to 12
     * successors (duplicates pruned at random, as a search with a visited
     * set does), until n states exist.  Each state points to its parent and
     * to a small move record. */
    uint32_t *level = malloc(sizeof *level), *next = NULL;
    uint64_t level_n = 1, made = 1;
    if (!level)
        return -1;
    uint64_t f0 = b->nfields;
    level[0] = add_object(b, 6, 2);
    uint32_t first_move = add_object(b, 1, 0); /* may move b->fields */
    if (b->failed) {
        free(level);
        return -1;
    }
    b->fields[f0 + 1] = first_move;
    while (made < n && !b->failed) {
        next = malloc(level_n * 12 * sizeof *next);
        if (!next)
            break;
        uint64_t next_n = 0;
        for (uint64_t i = 0; i < level_n && made < n; i++)
            for (int m = 0; m < 12 && made < n; m++) {
                if (gcs_random_next(&b->rng) % 3 == 0)
                    continue; /* already visited */
                uint64_t g0 = b->nfields;
                uint32_t s = add_object(b, 6, 2);
                uint32_t move = add_object(b, 1, 0);
                if (b->failed)
                    break;
                b->fields[g0] = level[i];
                b->fields[g0 + 1] = move;
                next[next_n++] = s;
                made++;
            }
        free(level);
        level = next;
        level_n = next_n;
        next = NULL;
    }
    if (b->failed || !level) {
        free(level);
        return -1;
    }
    /* The frontier array holds the last level; through parents it holds
     * every state that has a descendant there. */
    uint64_t a0 = b->nfields;
    uint32_t frontier = add_object(b, (uint32_t)level_n, (uint32_t)level_n);
    for (uint64_t i = 0; i < level_n && !b->failed; i++)
        b->fields[a0 + i] = level[i];
    free(level);
    if (b->failed)
        return -1;
    roots[0] = frontier;
    *nroots = 1;
    return 0;
}

gcs_snapshot *gcs_synth_build(const gcs_synth_opts *o, gcs_err *err)
{
    if (o->size < 2 || o->size > 100000000) {
        gcs_err_set(err, "synth: size must be in [2, 100000000]");
        return NULL;
    }
    if (o->nnodes < 1 || o->nnodes > GCS_SNAPSHOT_MAX_NODES) {
        gcs_err_set(err, "synth: node count must be in [1, %d]", GCS_SNAPSHOT_MAX_NODES);
        return NULL;
    }
    builder b = {.rng = o->seed ? o->seed : 0x9E3779B97F4A7C15ull};
    uint32_t roots[2];
    uint64_t nroots = 0;
    int rc = o->kind == GCS_SYNTH_BH ? build_bh(&b, o->size, roots, &nroots)
                                     : build_cube(&b, o->size, roots, &nroots);
    gcs_snapshot *g = NULL;
    if (rc < 0 || b.failed) {
        gcs_err_set(err, "synth: out of memory");
        goto done;
    }
    g = gcs_snapshot_new(b.n, b.nfields, nroots, err);
    if (!g)
        goto done;
    gcs_snapshot_params_default(&g->params);
    g->params.node_count = o->nnodes;
    /* Lay out in allocation order; a large object starts on a fresh page. */
    uint64_t at = 0;
    for (uint64_t i = 0; i < b.n; i++) {
        uint64_t bytes = HEADER_BYTES + 8 * (uint64_t)b.words[i];
        bytes = (bytes + GRANULE_BYTES - 1) / GRANULE_BYTES * GRANULE_BYTES;
        if (at % PAGE_BYTES + bytes > PAGE_BYTES)
            at = (at + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
        g->addr[i] = at + HEADER_BYTES;
        g->words[i] = b.words[i];
        g->nptrs[i] = b.nptrs[i];
        uint64_t page = at / PAGE_BYTES;
        g->node[i] = (uint16_t)(o->placement == GCS_SYNTH_SPREAD ? page % o->nnodes : 0);
        g->edge_start[i + 1] = g->edge_start[i] + b.nptrs[i];
        at += bytes;
    }
    g->params.heap_limit = (at + PAGE_BYTES) / PAGE_BYTES * PAGE_BYTES;
    memcpy(g->edges, b.fields, b.nfields * sizeof *b.fields);
    memcpy(g->roots, roots, nroots * sizeof *roots);
    if (gcs_snapshot_validate(g, err) < 0) {
        gcs_snapshot_free(g);
        g = NULL;
    }
done:
    free(b.words);
    free(b.nptrs);
    free(b.fields);
    return g;
}

int gcs_synth_parse_kind(const char *name, gcs_synth_kind *kind)
{
    if (strcmp(name, "bh") == 0)
        *kind = GCS_SYNTH_BH;
    else if (strcmp(name, "cube") == 0)
        *kind = GCS_SYNTH_CUBE;
    else
        return -1;
    return 0;
}

const char *gcs_synth_kind_name(gcs_synth_kind kind)
{
    return kind == GCS_SYNTH_BH ? "bh" : "cube";
}
