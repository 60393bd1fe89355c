/* v8_gen.h -- writes a synthetic V8 heap snapshot (.heapsnapshot JSON, the
 * layout node 20 writes: node fields type, name, id, self_size, edge_count,
 * trace_node_id, detachedness; edge fields type, name_or_index, to_node)
 * into memory: the seeds of the V8 fuzz target (make_seeds), the harness's
 * fixed input and the import benchmark's snapshots
 * (formats/bench/bench_import.c).
 *
 * The graph: node 0 the synthetic root, one element edge to node 1; nodes
 * 1..n-1 objects of class "Node" (self size 32) shaped as a list (i -> i+1),
 * a complete binary tree (i -> 2i, 2i+1) or a random graph (i -> i+1 and
 * nref - 1 uniformly random nodes); every 8th node also has a weak edge to
 * node 1 (dropped by the import).  The whole graph is reachable. */
#ifndef GCSCALE_V8_GEN_H
#define GCSCALE_V8_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V8GEN_LIST, V8GEN_TREE, V8GEN_RANDOM };

typedef struct v8gen {
    char *p;
    size_t n, cap;
} v8gen;

static void v8g_reserve(v8gen *g, size_t k)
{
    if (g->n + k <= g->cap)
        return;
    size_t cap = g->cap ? g->cap * 2 : 1 << 16;
    while (cap < g->n + k)
        cap *= 2;
    char *q = realloc(g->p, cap);
    if (!q)
        abort();
    g->p = q;
    g->cap = cap;
}

static void v8g_str(v8gen *g, const char *s)
{
    size_t k = strlen(s);
    v8g_reserve(g, k);
    memcpy(g->p + g->n, s, k);
    g->n += k;
}

/* appends ",v" (first: no comma) -- written by hand: snprintf would
 * dominate the generation of 10^7 nodes */
static inline void v8g_num(v8gen *g, uint64_t v, int first)
{
    v8g_reserve(g, 24);
    char b[24];
    int k = 0;
    do {
        b[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (!first)
        g->p[g->n++] = ',';
    while (k)
        g->p[g->n++] = b[--k];
}

static uint64_t v8g_rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint32_t v8g_targets(int shape, uint64_t i, uint64_t n, uint32_t nref, uint64_t *seed, uint64_t *t)
{
    uint32_t k = 0;
    if (i == 0) {
        if (n > 1)
            t[k++] = 1;
        return k;
    }
    if (shape == V8GEN_TREE) {
        if (2 * i < n)
            t[k++] = 2 * i;
        if (2 * i + 1 < n)
            t[k++] = 2 * i + 1;
        return k;
    }
    if (i + 1 < n)
        t[k++] = i + 1;
    if (shape == V8GEN_RANDOM)
        for (uint32_t j = 1; j < nref && n > 1; j++)
            t[k++] = 1 + v8g_rnd(seed) % (n - 1);
    return k;
}

/* n >= 1 nodes; nref (random graph) <= 62 */
static inline v8gen v8_generate(int shape, uint64_t n, uint32_t nref, uint64_t seed)
{
    v8gen g = {0};
    uint64_t t[64], s = seed | 1, edges = 0;
    for (uint64_t i = 0; i < n; i++)
        edges += v8g_targets(shape, i, n, nref, &s, t) + (i % 8 == 7);
    v8g_reserve(&g, (size_t)(n * 24 + edges * 16 + 4096));
    char head[1200];
    snprintf(head, sizeof head,
             "{\"snapshot\":{\"meta\":{\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\","
             "\"trace_node_id\",\"detachedness\"],\"node_types\":[[\"hidden\",\"array\",\"string\",\"object\","
             "\"code\",\"closure\",\"regexp\",\"number\",\"native\",\"synthetic\",\"concatenated string\","
             "\"sliced string\",\"symbol\",\"bigint\",\"object shape\"],\"string\",\"number\",\"number\","
             "\"number\",\"number\",\"number\"],\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],"
             "\"edge_types\":[[\"context\",\"element\",\"property\",\"internal\",\"hidden\",\"shortcut\","
             "\"weak\"],\"string_or_number\",\"node\"],\"trace_function_info_fields\":[\"function_id\",\"name\","
             "\"script_name\",\"script_id\",\"line\",\"column\"],\"trace_node_fields\":[\"id\","
             "\"function_info_index\",\"count\",\"size\",\"children\"],\"sample_fields\":[\"timestamp_us\","
             "\"last_assigned_id\"],\"location_fields\":[\"object_index\",\"script_id\",\"line\",\"column\"]},"
             "\"node_count\":%llu,\"edge_count\":%llu,\"trace_function_count\":0},\n\"nodes\":[",
             (unsigned long long)n, (unsigned long long)edges);
    v8g_str(&g, head);
    s = seed | 1;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t k = v8g_targets(shape, i, n, nref, &s, t) + (i % 8 == 7);
        v8g_num(&g, i ? 3 : 9, i == 0);          /* object; the root synthetic */
        v8g_num(&g, i ? 2 : 1, 0);               /* "Node"; "(root)" */
        v8g_num(&g, 2 * i + 1, 0);               /* id */
        v8g_num(&g, i ? 32 : 0, 0);              /* self_size */
        v8g_num(&g, k, 0);                       /* edge_count */
        v8g_num(&g, 0, 0);
        v8g_num(&g, 0, 0);
        g.p[g.n++] = '\n';
    }
    v8g_str(&g, "],\n\"edges\":[");
    s = seed | 1;
    int first = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t k = v8g_targets(shape, i, n, nref, &s, t);
        for (uint32_t j = 0; j < k; j++) {
            v8g_num(&g, i ? 2 : 1, first);       /* property; the root's element */
            v8g_num(&g, i ? 3 : 1, 0);           /* "next"; index 1 */
            v8g_num(&g, 7 * t[j], 0);
            first = 0;
        }
        if (i % 8 == 7) {
            v8g_num(&g, 6, first);               /* weak */
            v8g_num(&g, 3, 0);
            v8g_num(&g, 7, 0);
            first = 0;
        }
        g.p[g.n++] = '\n';
    }
    v8g_str(&g, "],\n\"trace_function_infos\":[],\n\"trace_tree\":[],\n\"samples\":[],\n\"locations\":[],\n"
                "\"strings\":[\"<dummy>\",\"(root)\",\"Node\",\"next\"]}\n");
    return g;
}

#endif
