/* shapes.c -- the canonical benchmark heaps, built through any allocator
 * (include/gcscale/shapes.h).  The graph and the allocation order depend only
 * on the parameters and the seed. */
#include <string.h>

#include "gcscale/shapes.h"

static const char *const names[] = {"tree", "list", "random", "wide"};

void gcs_shape_params_to_json(const gcs_shape_params *p, json_t *doc)
{
    json_object_set_new(doc, "shape", json_string(gcs_shape_name(p->kind)));
    if (p->kind == GCS_SHAPE_TREE)
        json_object_set_new(doc, "depth", json_integer(p->depth));
    else
        json_object_set_new(doc, "size", json_integer((json_int_t)p->objects));
    json_object_set_new(doc, "seed", json_integer((json_int_t)p->seed));
}

const char *gcs_shape_name(gcs_shape_kind kind)
{
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

int gcs_shape_parse(const char *name, gcs_shape_kind *kind)
{
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) {
            *kind = (gcs_shape_kind)i;
            return 0;
        }
    return -1;
}

int gcs_shape_params_check(gcs_shape_params *p, gcs_err *err)
{
    if ((unsigned)p->kind > GCS_SHAPE_WIDE) {
        gcs_err_set(err, "unknown shape %d", (int)p->kind);
        return -1;
    }
    if (p->kind == GCS_SHAPE_TREE) {
        if (p->depth == 0)
            p->depth = GCS_SHAPE_DEFAULT_DEPTH;
        if (p->depth < 1 || p->depth > GCS_SHAPE_MAX_DEPTH) {
            gcs_err_set(err, "tree depth %d out of range 1..%d", p->depth, GCS_SHAPE_MAX_DEPTH);
            return -1;
        }
        return 0;
    }
    if (p->objects == 0)
        p->objects = p->kind == GCS_SHAPE_LIST ? 4000000 : p->kind == GCS_SHAPE_RANDOM ? 3000000 : 1000000;
    if (p->objects > GCS_SHAPE_MAX_OBJECTS) {
        gcs_err_set(err, "%llu objects: at most %llu", (unsigned long long)p->objects,
                    (unsigned long long)GCS_SHAPE_MAX_OBJECTS);
        return -1;
    }
    return 0;
}

void gcs_shape_describe(const gcs_shape_params *p, gcs_shape_info *info)
{
    memset(info, 0, sizeof *info);
    uint64_t n = p->objects;
    switch (p->kind) {
    case GCS_SHAPE_TREE: {
        uint64_t nodes = (2ull << p->depth) - 1;
        info->objects = nodes;
        info->pointers = nodes - 1;
        info->payload_bytes = nodes * 24;
        break;
    }
    case GCS_SHAPE_LIST:
        info->objects = n;
        info->pointers = n - 1;
        info->payload_bytes = n * 16;
        break;
    case GCS_SHAPE_RANDOM:
        info->objects = n + 1;
        info->pointers = n + 2 * n;
        info->payload_bytes = 8 * n + n * 24;
        break;
    case GCS_SHAPE_WIDE:
        info->objects = n + 1;
        info->pointers = n;
        info->payload_bytes = 8 * n + n * 16;
        break;
    }
    info->gcs_bytes = info->payload_bytes + 8 * info->objects;
}

/* ---- builders ------------------------------------------------------------ */

typedef struct builder {
    gcs_shape_alloc_fn alloc;
    void *ctx;
    uint64_t count;
    int failed;
} builder;

static void **new_obj(builder *b, size_t nptrs, size_t data_words)
{
    void **o = b->alloc(b->ctx, nptrs, data_words);
    if (!o)
        b->failed = 1;
    return o;
}

/* Preorder: the node, then its left subtree, then its right subtree.  A node
 * is stored into its parent before its children are allocated. */
static void tree_fill(builder *b, void **node, int depth)
{
    if (depth == 0 || b->failed)
        return;
    for (int i = 0; i < 2 && !b->failed; i++) {
        void **child = new_obj(b, 2, 1);
        if (!child)
            return;
        ((uint64_t *)child)[2] = b->count++;
        node[i] = child;
        tree_fill(b, child, depth - 1);
    }
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t uniform(uint64_t *s, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)splitmix64(s) * n) >> 64);
}

int gcs_shape_build(const gcs_shape_params *p_in, gcs_shape_alloc_fn alloc, void *ctx, void **root,
                    gcs_shape_info *info, gcs_err *err)
{
    gcs_shape_params p = *p_in;
    if (gcs_shape_params_check(&p, err) < 0)
        return -1;
    builder b = {alloc, ctx, 0, 0};
    *root = NULL;
    uint64_t n = p.objects;
    switch (p.kind) {
    case GCS_SHAPE_TREE: {
        void **r = new_obj(&b, 2, 1);
        if (!r)
            break;
        ((uint64_t *)r)[2] = b.count++;
        *root = r;
        tree_fill(&b, r, p.depth);
        break;
    }
    case GCS_SHAPE_LIST:
        for (uint64_t i = 0; i < n; i++) {
            void **o = new_obj(&b, 1, 1);
            if (!o)
                break;
            o[0] = *root;
            ((uint64_t *)o)[1] = i;
            *root = o;
        }
        break;
    case GCS_SHAPE_RANDOM:
    case GCS_SHAPE_WIDE: {
        void **arr = new_obj(&b, n, 0);
        if (!arr)
            break;
        *root = arr;
        int wide = p.kind == GCS_SHAPE_WIDE;
        for (uint64_t i = 0; i < n; i++) {
            void **o = wide ? new_obj(&b, 0, 2) : new_obj(&b, 2, 1);
            if (!o)
                break;
            ((uint64_t *)o)[wide ? 0 : 2] = i;
            if (wide)
                ((uint64_t *)o)[1] = ~i;
            arr[i] = o;
        }
        if (b.failed || wide)
            break;
        uint64_t s = p.seed;
        for (uint64_t i = 0; i < n; i++) {
            void **o = arr[i];
            o[0] = arr[uniform(&s, n)];
            o[1] = arr[uniform(&s, n)];
        }
        break;
    }
    }
    if (b.failed) {
        gcs_err_set(err, "%s: allocation failed while building the shape", gcs_shape_name(p.kind));
        return -1;
    }
    if (info)
        gcs_shape_describe(&p, info);
    return 0;
}
