/* test_snapshot.c -- heap snapshots: the format (round trips of hand-built
 * graphs), the collector's writer (exactly the reachable objects and edges
 * of a graph the test builds and tracks itself), building a heap from a
 * snapshot, and every validation rule of the reader (truncation at every
 * offset, flipped bytes, forged counts and ids with recomputed checksums),
 * for format version 2 (read by copying) and version 3 (read in place). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gcscale/gc.h"
#include "gcscale/snapshot.h"
#include "../formats/snapshot_internal.h"
#include "test_files.h"

static char tmpdir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/gcs_snapshot_test.XXXXXX");
        assert_non_null(mkdtemp(tmpdir));
    }
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void spit(const char *path, const uint8_t *b, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, len, fp), len);
    fclose(fp);
}

/* ---- byte access and checksum forging (layout: docs/snapshot-format.md) ---- */

static uint64_t ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void st16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* Offset of section i's 16-byte head (0 params, 1 objects, 2 nodes, 3 edges,
 * 4 roots, 5 types, 6 object types) in a version-2 file. */
static size_t section_off(const uint8_t *b, int sec)
{
    size_t off = 88;
    for (int i = 0; i < sec; i++)
        off += 16 + ((ld64(b + off + 8) + 7) & ~7ull) + 8;
    return off;
}

static void fix_crcs(uint8_t *b)
{
    st32(b + 84, (uint32_t)crc32(0, b, 84));
    size_t off = 88;
    for (int i = 0; i < 7; i++) {
        size_t end = off + 16 + ((ld64(b + off + 8) + 7) & ~7ull);
        st32(b + end, (uint32_t)crc32(0, b + off, (uInt)(end - off)));
        off = end + 8;
    }
}

/* ---- graphs ------------------------------------------------------------------ */

static void assert_graphs_equal(const gcs_snapshot *a, const gcs_snapshot *b)
{
    assert_memory_equal(&a->params, &b->params, sizeof a->params);
    assert_int_equal(a->nobjects, b->nobjects);
    assert_int_equal(a->nfields, b->nfields);
    assert_int_equal(a->nroots, b->nroots);
    uint64_t n = a->nobjects;
    if (n) {
        assert_memory_equal(a->addr, b->addr, n * sizeof *a->addr);
        assert_memory_equal(a->words, b->words, n * sizeof *a->words);
        assert_memory_equal(a->nptrs, b->nptrs, n * sizeof *a->nptrs);
        assert_memory_equal(a->node, b->node, n * sizeof *a->node);
    }
    assert_memory_equal(a->edge_start, b->edge_start, (n + 1) * sizeof *a->edge_start);
    if (a->nfields)
        assert_memory_equal(a->edges, b->edges, a->nfields * sizeof *a->edges);
    if (a->nroots)
        assert_memory_equal(a->roots, b->roots, a->nroots * sizeof *a->roots);
    assert_int_equal(a->ntypes, b->ntypes);
    for (uint32_t k = 0; k < a->ntypes; k++)
        assert_string_equal(a->type_names[k], b->type_names[k]);
    if (n)
        assert_memory_equal(a->type, b->type, n * sizeof *a->type);
}

/* Lays objects out contiguously (header 8) from offset 8 and fills edge_start. */
static void layout(gcs_snapshot *g)
{
    uint64_t off = 8;
    g->edge_start[0] = 0;
    for (uint64_t i = 0; i < g->nobjects; i++) {
        g->addr[i] = off;
        off += 8 * (uint64_t)g->words[i] + 8;
        g->edge_start[i + 1] = g->edge_start[i] + g->nptrs[i];
    }
    g->params.heap_limit = (off + 65535) & ~65535ull;
    if (g->params.heap_limit == 0)
        g->params.heap_limit = 65536;
}

static gcs_snapshot *roundtrip(const gcs_snapshot *g, const char *name)
{
    char path[512];
    tmp_path(path, sizeof path, name);
    gcs_err err = {{0}};
    assert_int_equal(gcs_snapshot_write(g, path, &err), 0);
    gcs_snapshot *h = gcs_snapshot_read(path, &err);
    if (!h)
        fail_msg("read: %s", err.msg);
    assert_graphs_equal(g, h);
    /* the file's own version, for snapshot info; none for a graph in memory */
    assert_int_equal(g->file_version, 0);
    assert_int_equal(h->file_version, GCS_SNAPSHOT_VERSION);
    /* from memory too */
    size_t len;
    uint8_t *b = test_slurp(path, &len);
    gcs_snapshot *h2 = gcs_snapshot_read_mem(b, len, name, &err);
    assert_non_null(h2);
    assert_graphs_equal(g, h2);
    gcs_snapshot_free(h2);
    free(b);
    /* and through format version 2, which the reader copies */
    char path2[520];
    snprintf(path2, sizeof path2, "%s.v2", path);
    assert_int_equal(_gcs_snapshot_write_version(g, path2, 2, &err), 0);
    gcs_snapshot *h3 = gcs_snapshot_read(path2, &err);
    if (!h3)
        fail_msg("read version 2: %s", err.msg);
    assert_graphs_equal(g, h3);
    assert_int_equal(h3->file_version, 2);
    gcs_snapshot_free(h3);
    return h;
}

static void test_roundtrip_empty(void **state)
{
    (void)state;
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(0, 0, 0, &err);
    assert_non_null(g);
    layout(g);
    gcs_snapshot *h = roundtrip(g, "empty.snap");
    gcs_snapshot_stats st;
    assert_int_equal(gcs_snapshot_stats_compute(h, &st, &err), 0);
    assert_int_equal(st.objects, 0);
    assert_int_equal(st.depth, 0);
    assert_int_equal(st.reachable, 0);
    gcs_snapshot_stats_free(&st);
    char path[512];
    tmp_path(path, sizeof path, "empty.snap");
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    /* version 3: header, params (one block), nine empty sections of which
     * edge_start holds its one entry (one block) */
    assert_int_equal(sb.st_size, 96 + (16 + 80 + 8) + 8 * 24 + (16 + 8 + 8));
    gcs_snapshot_free(g);
    gcs_snapshot_free(h);
}

/* 0 -> 1 -> 2 -> 0 (cycle), 3 -> 3 (self loop) and a NULL field, 4 data only
 * and unreachable, 5 -> 4 unreachable; nodes 0, 0, 1, 1, unknown, 1; roots
 * 0, 3, 3 (a duplicate). */
static gcs_snapshot *small_graph(void)
{
    gcs_err err;
    static const uint32_t words[] = {2, 1, 3, 2, 5, 1};
    static const uint32_t nptrs[] = {1, 1, 2, 2, 0, 1};
    static const uint32_t edges[] = {1, 2, 0, GCS_SNAPSHOT_NULL, 3, GCS_SNAPSHOT_NULL, 4};
    static const uint16_t node[] = {0, 0, 1, 1, GCS_SNAPSHOT_NODE_UNKNOWN, 1};
    static const uint32_t roots[] = {0, 3, 3};
    gcs_snapshot *g = gcs_snapshot_new(6, 7, 3, &err);
    assert_non_null(g);
    memcpy(g->words, words, sizeof words);
    memcpy(g->nptrs, nptrs, sizeof nptrs);
    memcpy(g->edges, edges, sizeof edges);
    memcpy(g->node, node, sizeof node);
    memcpy(g->roots, roots, sizeof roots);
    g->params.node_count = 2;
    g->params.gc_threads = 2;
    g->params.mark_mode = 2;
    g->params.collection = 7;
    g->params.timestamp_ns = 1700000000123456789ull;
    g->params.heap_base = 0x7f0000000000ull;
    g->params.source = GCS_SNAPSHOT_SOURCE_HPROF;
    g->params.layout = GCS_SNAPSHOT_LAYOUT_DUMP_ORDER;
    static const char *const tnames[] = {"Node", "", "java.lang.Object[]"};
    static const uint32_t types[] = {0, 0, 2, 2, GCS_SNAPSHOT_TYPE_NONE, 1};
    assert_int_equal(gcs_snapshot_set_types(g, 3, tnames, &err), 0);
    memcpy(g->type, types, sizeof types);
    layout(g);
    g->addr[5] += 64; /* a gap */
    return g;
}

static void test_roundtrip_small(void **state)
{
    (void)state;
    gcs_snapshot *g = small_graph();
    gcs_snapshot *h = roundtrip(g, "small.snap");
    gcs_snapshot_stats st;
    gcs_err err;
    assert_int_equal(gcs_snapshot_stats_compute(h, &st, &err), 0);
    assert_int_equal(st.objects, 6);
    assert_int_equal(st.fields, 7);
    assert_int_equal(st.edges, 5);
    assert_int_equal(st.self_edges, 1);
    assert_int_equal(st.roots, 3);
    assert_int_equal(st.distinct_roots, 2);
    assert_int_equal(st.reachable, 4);
    assert_int_equal(st.depth, 3);
    assert_int_equal(st.bytes, 8 * (2 + 1 + 3 + 2 + 5 + 1));
    assert_int_equal(st.node_objects[0], 2);
    assert_int_equal(st.node_objects[1], 3);
    assert_int_equal(st.node_objects[2], 1); /* unknown */
    assert_int_equal(st.node_bytes[1], 8 * (3 + 2 + 1));
    gcs_snapshot_stats_free(&st);
    /* the types, largest first: Object[] (objects 2, 3), no type (4), Node (0, 1), "" (5) */
    gcs_snapshot_type_row *rows;
    uint32_t nrows;
    assert_int_equal(gcs_snapshot_type_summary(h, &rows, &nrows, &err), 0);
    assert_int_equal(nrows, 4);
    assert_string_equal(rows[0].name, "java.lang.Object[]");
    assert_int_equal(rows[0].objects, 2);
    assert_int_equal(rows[0].bytes, 8 * (3 + 2) + 2 * 8);
    assert_int_equal(rows[0].edges, 2);
    assert_int_equal(rows[1].type, GCS_SNAPSHOT_TYPE_NONE);
    assert_string_equal(rows[1].name, "(no type)");
    assert_int_equal(rows[1].bytes, 8 * 5 + 8);
    assert_string_equal(rows[2].name, "Node");
    assert_int_equal(rows[2].bytes, 8 * (2 + 1) + 2 * 8);
    assert_int_equal(rows[3].type, 1);
    assert_int_equal(rows[3].edges, 1);
    free(rows);
    gcs_snapshot_free(g);
    gcs_snapshot_free(h);
}

static gcs_snapshot *random_graph(uint64_t n, uint64_t seed, uint32_t nodes)
{
    uint64_t s = seed | 1, m = 0;
    uint32_t *np = malloc(n * sizeof *np), *w = malloc(n * sizeof *w);
    for (uint64_t i = 0; i < n; i++) {
        np[i] = (uint32_t)(rnd(&s) % 5);
        if (rnd(&s) % 100 == 0)
            np[i] = 300;
        w[i] = np[i] + (uint32_t)(rnd(&s) % 4) + (np[i] == 0);
        m += np[i];
    }
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(n, m, 5, &err);
    assert_non_null(g);
    memcpy(g->words, w, n * sizeof *w);
    memcpy(g->nptrs, np, n * sizeof *np);
    for (uint64_t e = 0; e < m; e++)
        g->edges[e] = rnd(&s) % 4 == 0 ? GCS_SNAPSHOT_NULL : (uint32_t)(rnd(&s) % n);
    for (uint64_t i = 0; i < n; i++)
        g->node[i] = (uint16_t)((i / 97) % nodes);
    for (int k = 0; k < 5; k++)
        g->roots[k] = (uint32_t)(rnd(&s) % n);
    g->params.node_count = nodes;
    layout(g);
    free(np);
    free(w);
    return g;
}

/* gcs_snapshot_reorder: the new order by hand on two small graphs, and on a
 * random one every object, field, root, node and type kept under its new id
 * (each object's type is its old id, so the permutation can be read back). */
static const uint32_t *reorder_map(const gcs_snapshot *h) { return h->type; }

static void check_same_graph(const gcs_snapshot *g, const gcs_snapshot *h)
{
    const uint32_t *old = reorder_map(h);
    assert_int_equal(h->nobjects, g->nobjects);
    assert_int_equal(h->nfields, g->nfields);
    assert_int_equal(h->nroots, g->nroots);
    uint32_t *newid = malloc((g->nobjects + 1) * sizeof *newid);
    uint8_t *hit = calloc(g->nobjects + 1, 1);
    for (uint64_t j = 0; j < h->nobjects; j++) {
        assert_true(old[j] < g->nobjects && !hit[old[j]]); /* a permutation */
        hit[old[j]] = 1;
        newid[old[j]] = (uint32_t)j;
    }
    for (uint64_t j = 0; j < h->nobjects; j++) {
        uint32_t i = old[j];
        assert_int_equal(h->words[j], g->words[i]);
        assert_int_equal(h->nptrs[j], g->nptrs[i]);
        assert_int_equal(h->node[j], g->node[i]);
        if (j > 0) /* packed: each object right behind the last, on a granule */
            assert_true(h->addr[j] > h->addr[j - 1] &&
                        h->addr[j] - h->params.header_bytes - (h->addr[j - 1] + 8ull * h->words[j - 1]) <
                            h->params.granule_bytes + 8);
        for (uint32_t f = 0; f < h->nptrs[j]; f++) {
            uint32_t a = g->edges[g->edge_start[i] + f], b = h->edges[h->edge_start[j] + f];
            assert_true(a == GCS_SNAPSHOT_NULL ? b == GCS_SNAPSHOT_NULL : b == newid[a]);
        }
    }
    for (uint64_t k = 0; k < g->nroots; k++)
        assert_int_equal(h->roots[k], newid[g->roots[k]]);
    free(newid);
    free(hit);
}

static void label_by_id(gcs_snapshot *g)
{
    char **names = malloc(g->nobjects * sizeof *names);
    for (uint64_t i = 0; i < g->nobjects; i++) {
        names[i] = malloc(24);
        snprintf(names[i], 24, "t%llu", (unsigned long long)i);
    }
    gcs_err err;
    assert_int_equal(gcs_snapshot_set_types(g, (uint32_t)g->nobjects, (const char *const *)names, &err), 0);
    for (uint64_t i = 0; i < g->nobjects; i++) {
        g->type[i] = (uint32_t)i;
        free(names[i]);
    }
    free(names);
}

static void test_reorder(void **state)
{
    (void)state;
    gcs_err err;
    uint64_t reached;
    /* a binary tree of 7 in level order: depth first is preorder */
    gcs_snapshot *t = gcs_snapshot_new(7, 14, 1, &err);
    for (uint32_t i = 0; i < 7; i++) {
        t->words[i] = 2;
        t->nptrs[i] = 2;
        t->edges[2 * i] = 2 * i + 1 < 7 ? 2 * i + 1 : GCS_SNAPSHOT_NULL;
        t->edges[2 * i + 1] = 2 * i + 2 < 7 ? 2 * i + 2 : GCS_SNAPSHOT_NULL;
    }
    t->roots[0] = 0;
    layout(t);
    label_by_id(t);
    static const uint32_t preorder[] = {0, 1, 3, 4, 2, 5, 6};
    gcs_snapshot *h = gcs_snapshot_reorder(t, GCS_SNAPSHOT_ORDER_DEPTH_FIRST, 0, &reached, &err);
    assert_non_null(h);
    assert_int_equal(reached, 7);
    assert_memory_equal(reorder_map(h), preorder, sizeof preorder);
    check_same_graph(t, h);
    gcs_snapshot_free(h);
    h = gcs_snapshot_reorder(t, GCS_SNAPSHOT_ORDER_BREADTH_FIRST, 0, &reached, &err);
    for (uint32_t i = 0; i < 7; i++)
        assert_int_equal(reorder_map(h)[i], i); /* level order already */
    gcs_snapshot_free(h);
    gcs_snapshot_free(t);

    /* small_graph: roots 0, 3, 3; 4 and 5 unreachable, kept last in their
     * order; breadth first 0, 3, 1, 2 */
    gcs_snapshot *g = small_graph();
    gcs_snapshot *b = gcs_snapshot_reorder(g, GCS_SNAPSHOT_ORDER_BREADTH_FIRST, 0, &reached, &err);
    assert_non_null(b);
    assert_int_equal(reached, 4);
    assert_string_equal(b->type_names[2], "java.lang.Object[]");
    static const uint32_t bfs_types[] = {0, 2, 0, 2, GCS_SNAPSHOT_TYPE_NONE, 1}; /* objects 0 3 1 2 4 5 */
    assert_memory_equal(b->type, bfs_types, sizeof bfs_types);
    assert_int_equal(b->roots[0], 0);
    assert_int_equal(b->roots[1], 1);
    assert_int_equal(b->edges[b->edge_start[1]], 1); /* object 3's self edge */
    assert_int_equal(b->params.layout, GCS_SNAPSHOT_LAYOUT_UNKNOWN_ORDER); /* an import's order is gone */
    gcs_snapshot *r = roundtrip(b, "reordered.snap");
    gcs_snapshot_free(r);
    gcs_snapshot_free(b);
    gcs_snapshot_free(g);

    /* a random graph: the same graph in every order; a seed, one shuffle */
    g = random_graph(3000, 11, 2);
    label_by_id(g);
    for (int how = 0; how <= GCS_SNAPSHOT_ORDER_SHUFFLE; how++) {
        h = gcs_snapshot_reorder(g, (gcs_snapshot_order)how, 5, &reached, &err);
        assert_non_null(h);
        check_same_graph(g, h);
        assert_int_equal(h->params.layout, GCS_SNAPSHOT_LAYOUT_HEAP);
        if (how == GCS_SNAPSHOT_ORDER_SHUFFLE) {
            gcs_snapshot *again = gcs_snapshot_reorder(g, GCS_SNAPSHOT_ORDER_SHUFFLE, 5, NULL, &err);
            gcs_snapshot *other = gcs_snapshot_reorder(g, GCS_SNAPSHOT_ORDER_SHUFFLE, 6, NULL, &err);
            assert_memory_equal(again->type, h->type, 3000 * sizeof *h->type);
            assert_true(memcmp(other->type, h->type, 3000 * sizeof *h->type) != 0);
            gcs_snapshot_free(again);
            gcs_snapshot_free(other);
        } else {
            /* the first `reached` objects are the reachable ones */
            gcs_snapshot_stats st;
            assert_int_equal(gcs_snapshot_stats_compute(g, &st, &err), 0);
            assert_int_equal(reached, st.reachable);
            gcs_snapshot_stats_free(&st);
        }
        gcs_snapshot_free(h);
    }
    /* names and parsing */
    gcs_snapshot_order how;
    assert_int_equal(gcs_snapshot_order_parse("breadth-first", &how), 0);
    assert_int_equal(how, GCS_SNAPSHOT_ORDER_BREADTH_FIRST);
    assert_int_equal(gcs_snapshot_order_parse("sideways", &how), -1);
    assert_null(gcs_snapshot_reorder(g, (gcs_snapshot_order)7, 0, NULL, &err));
    assert_non_null(strstr(err.msg, "unknown order"));
    gcs_snapshot_free(g);
}

/* _gcs_snap_check_objects, the per-run check every load uses, gives the
 * first failing object exactly as _gcs_snap_check_object one by one does:
 * a valid heap of several runs, then one field of one object (or two
 * neighbours) damaged at a time, with values at and around each rule's
 * limits, every run checked both ways. */
static uint64_t first_failing(const gcs_snapshot *g, uint64_t lo, uint64_t hi, int what)
{
    for (uint64_t i = lo; i < hi; i++)
        if (_gcs_snap_check_object(g, i, what, NULL) < 0)
            return i;
    return hi;
}

static void test_check_objects_runs(void **state)
{
    (void)state;
    uint64_t n = 9000, s = 77;
    gcs_snapshot *g = random_graph(n, 5, 2);
    /* 64 bytes between objects, so that a damaged address or size breaks
     * one rule, not also its neighbour's */
    for (uint64_t i = 0; i < n; i++)
        g->addr[i] += 64 * (i + 1);
    g->params.heap_limit = g->addr[n - 1] + 8 * (uint64_t)g->words[n - 1] + 4096;
    const char *tn[] = {"a", "b", "c"};
    gcs_err err;
    assert_int_equal(gcs_snapshot_set_types(g, 3, tn, &err), 0);
    for (uint64_t i = 0; i < n; i++)
        g->type[i] = i % 5 == 0 ? GCS_SNAPSHOT_TYPE_NONE : (uint32_t)(i % 3);
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    static const uint64_t runs[][2] = {{0, 4096}, {4096, 8192}, {8192, 9000}, {0, 1}, {1, 9000}, {4095, 4097}};
    for (int trial = 0; trial < 1600; trial++) {
        /* the heap limit's rule on the last object, which no neighbour follows */
        uint64_t i = trial % 8 == 7 ? n - 1 : rnd(&s) % n, a0 = g->addr[i], e1 = g->edge_start[i + 1];
        uint32_t w0 = g->words[i], np0 = g->nptrs[i], t0 = g->type[i];
        uint16_t nd0 = g->node[i];
        uint64_t d = rnd(&s) % 24; /* a small step around the limit */
        switch (trial % 8) {
        case 0:
            g->words[i] = (uint32_t)(rnd(&s) % 3 == 0 ? 0 : g->nptrs[i] + d % 3 - 1);
            break;
        case 1:
            g->nptrs[i] = (uint32_t)(g->words[i] + d % 3 - 1);
            break;
        case 2: /* misaligned, overlapping, or out of order */
            g->addr[i] = a0 + d - 12;
            break;
        case 3: /* at, and just inside, the previous object's end plus the header */
            g->addr[i] = i == 0 ? d
                                : g->addr[i - 1] + 8 * (uint64_t)g->words[i - 1] + g->params.header_bytes - 8 * (d % 3);
            break;
        case 4:
            g->edge_start[i + 1] = e1 + d % 3 - 1;
            break;
        case 5:
            g->node[i] = (uint16_t)(rnd(&s) % 2 ? GCS_SNAPSHOT_NODE_UNKNOWN : d % 4);
            break;
        case 6:
            g->type[i] = (uint32_t)(rnd(&s) % 2 ? GCS_SNAPSHOT_TYPE_NONE : d % 5);
            break;
        case 7:
            if (d % 2)
                g->addr[i] = g->params.heap_limit - 8 * (uint64_t)g->words[i] + 8 * (d % 3) - 8;
            else
                g->words[i] = (uint32_t)((g->params.heap_limit - g->addr[i]) / 8 + d % 3 - 1);
            break;
        }
        for (int what = 0; what <= SNAP_CHECK_ALL; what++) {
            uint64_t first = first_failing(g, 0, n, what);
            for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
                /* a run after the damaged object would assume that the objects before it passed */
                uint64_t lo = runs[r][0], hi = runs[r][1];
                if (first < lo)
                    continue;
                uint64_t want = first < hi ? first : hi, got = _gcs_snap_check_objects(g, lo, hi, what);
                if (got != want)
                    fail_msg("trial %d, object %llu, run [%llu, %llu), what %d: %llu, one by one %llu", trial,
                             (unsigned long long)i, (unsigned long long)lo, (unsigned long long)hi, what,
                             (unsigned long long)got, (unsigned long long)want);
            }
        }
        g->addr[i] = a0;
        g->words[i] = w0;
        g->nptrs[i] = np0;
        g->edge_start[i + 1] = e1;
        g->node[i] = nd0;
        g->type[i] = t0;
    }
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    gcs_snapshot_free(g);
}

static void test_roundtrip_random(void **state)
{
    (void)state;
    gcs_snapshot *g = random_graph(20000, 42, 4);
    gcs_snapshot *h = roundtrip(g, "random.snap");
    gcs_snapshot_stats st;
    gcs_err err;
    assert_int_equal(gcs_snapshot_stats_compute(h, &st, &err), 0);
    uint64_t sum = 0;
    for (int j = 0; j < 4; j++)
        sum += st.node_objects[j];
    assert_int_equal(sum, 20000);
    assert_true(st.depth >= 2);
    gcs_snapshot_stats_free(&st);
    gcs_snapshot_free(g);
    gcs_snapshot_free(h);
}

static void test_chain_depth(void **state)
{
    (void)state;
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(10, 10, 1, &err);
    for (int i = 0; i < 10; i++) {
        g->words[i] = 2;
        g->nptrs[i] = 1;
        g->edges[i] = i < 9 ? (uint32_t)i + 1 : GCS_SNAPSHOT_NULL;
    }
    g->roots[0] = 0;
    layout(g);
    gcs_snapshot_stats st;
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    assert_int_equal(gcs_snapshot_stats_compute(g, &st, &err), 0);
    assert_int_equal(st.depth, 10);
    assert_int_equal(st.reachable, 10);
    gcs_snapshot_stats_free(&st);
    gcs_snapshot_free(g);
}

/* ---- validation ------------------------------------------------------------------ */

/* The small graph as a version-2 file (the tests below this one). */
static uint8_t *small_file(size_t *len)
{
    gcs_snapshot *g = small_graph();
    char path[512];
    tmp_path(path, sizeof path, "valid.snap");
    gcs_err err;
    assert_int_equal(_gcs_snapshot_write_version(g, path, 2, &err), 0);
    gcs_snapshot_free(g);
    return test_slurp(path, len);
}

static void expect_error(const uint8_t *b, size_t len, const char *needle)
{
    gcs_err err = {{0}};
    gcs_snapshot *g = gcs_snapshot_read_mem(b, len, "x.snap", &err);
    if (g) {
        gcs_snapshot_free(g);
        fail_msg("accepted a bad file (wanted \"%s\")", needle);
    }
    if (!strstr(err.msg, needle))
        fail_msg("wanted \"%s\", got \"%s\"", needle, err.msg);
    assert_null(strchr(err.msg, '\n'));
    assert_true(strncmp(err.msg, "x.snap: ", 8) == 0);
}

static void test_truncation_every_offset(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = small_file(&len);
    static const char *const names[] = {"'params'", "'objects'", "'nodes'",      "'edges'",
                                        "'roots'",  "'types'",   "'object types'"};
    size_t sec[8];
    for (int i = 0; i < 7; i++)
        sec[i] = section_off(b, i);
    sec[7] = len;
    for (size_t k = 0; k < len; k++) {
        uint8_t *c = malloc(k + 1);
        memcpy(c, b, k);
        if (k == 0)
            expect_error(c, k, "empty file");
        else if (k < 88)
            expect_error(c, k, "truncated in the header");
        else {
            int s = 0;
            while (k >= sec[s + 1])
                s++;
            char want[64];
            snprintf(want, sizeof want, "truncated in section %s", names[s]);
            expect_error(c, k, want);
        }
        free(c);
    }
    /* and through the file reader */
    char path[512];
    tmp_path(path, sizeof path, "trunc.snap");
    spit(path, b, sec[3] + 5);
    gcs_err err;
    assert_null(gcs_snapshot_read(path, &err));
    assert_non_null(strstr(err.msg, "truncated in section 'edges'"));
    free(b);
}

static void test_flipped_bytes(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = small_file(&len);
    for (size_t k = 0; k < len; k++) {
        for (int bit = 0; bit < 8; bit += 3) {
            b[k] ^= (uint8_t)(1u << bit);
            if (k < 8)
                expect_error(b, len, "bad magic");
            else if (k < 12) { /* 2 ^ 1 is version 3, whose header checksum is another one */
                gcs_err err = {{0}};
                assert_null(gcs_snapshot_read_mem(b, len, "x.snap", &err));
                assert_true(strstr(err.msg, "unsupported snapshot format version") ||
                            strstr(err.msg, "header checksum mismatch"));
            } else
                expect_error(b, len, "checksum mismatch");
            b[k] ^= (uint8_t)(1u << bit);
        }
    }
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_read_mem(b, len, "x", &err);
    assert_non_null(g); /* restored */
    gcs_snapshot_free(g);
    free(b);
}

typedef void (*forge_fn)(uint8_t *b, size_t *len);

static void forge_and_expect(forge_fn f, const char *needle)
{
    size_t len;
    uint8_t *b = small_file(&len);
    b = realloc(b, len + 64);
    f(b, &len);
    fix_crcs(b);
    expect_error(b, len, needle);
    free(b);
}

static size_t obj_row(const uint8_t *b, int i) { return section_off(b, 1) + 16 + 16 * (size_t)i; }

static void f_count(uint8_t *b, size_t *l) { (void)l; st64(b + 24, ld64(b + 24) + 1); }
static void f_huge_count(uint8_t *b, size_t *l) { (void)l; st64(b + 32, 1ull << 62); }
static void f_version(uint8_t *b, size_t *l) { (void)l; st32(b + 8, 4); }
static void f_idwidth(uint8_t *b, size_t *l) { (void)l; st32(b + 16, 8); }
static void f_dangling_edge(uint8_t *b, size_t *l) { (void)l; st32(b + section_off(b, 3) + 16, 6); }
static void f_dangling_root(uint8_t *b, size_t *l) { (void)l; st32(b + section_off(b, 4) + 16, 99); }
static void f_null_root(uint8_t *b, size_t *l) { (void)l; st32(b + section_off(b, 4) + 16, UINT32_MAX); }
static void f_unsorted(uint8_t *b, size_t *l)
{
    (void)l;
    uint64_t a0 = ld64(b + obj_row(b, 0)), a1 = ld64(b + obj_row(b, 1));
    st64(b + obj_row(b, 0), a1);
    st64(b + obj_row(b, 1), a0);
}
static void f_overlap(uint8_t *b, size_t *l) { (void)l; st64(b + obj_row(b, 1), ld64(b + obj_row(b, 0)) + 8); }
static void f_absurd_size(uint8_t *b, size_t *l) { (void)l; st32(b + obj_row(b, 5) + 8, 0xFFFFFFFFu); }
static void f_zero_size(uint8_t *b, size_t *l) { (void)l; st32(b + obj_row(b, 4) + 8, 0); }
static void f_nptrs_gt_words(uint8_t *b, size_t *l)
{
    (void)l; /* keeps the total: object 0 gives its field to object 1 */
    st32(b + obj_row(b, 0) + 12, 0);
    st32(b + obj_row(b, 1) + 12, 2);
}
static void f_misaligned(uint8_t *b, size_t *l) { (void)l; st64(b + obj_row(b, 5), ld64(b + obj_row(b, 5)) + 4); }
static void f_fields_sum(uint8_t *b, size_t *l)
{
    (void)l; /* object 4 claims a pointer field the edge section does not have */
    st32(b + obj_row(b, 4) + 12, 1);
}
static void f_node(uint8_t *b, size_t *l) { (void)l; st16(b + section_off(b, 2) + 16 + 4, 2); }
static void f_node_run(uint8_t *b, size_t *l) { (void)l; st32(b + section_off(b, 2) + 16, 1); }
static void f_node_count(uint8_t *b, size_t *l) { (void)l; st32(b + section_off(b, 0) + 16 + 28, 0); }
static void f_heap_limit(uint8_t *b, size_t *l) { (void)l; st64(b + section_off(b, 0) + 16 + 8, 64); }
static void f_tag(uint8_t *b, size_t *l) { (void)l; memcpy(b + section_off(b, 1), "OBJX", 4); }
static void f_trailing(uint8_t *b, size_t *l) { b[*l] = 0; (*l)++; }
static void f_short(uint8_t *b, size_t *l)
{
    /* one more root in the header and file_bytes to match, but no bytes for it */
    st64(b + 40, ld64(b + 40) + 2);
    st64(b + 56, ld64(b + 56) + 8);
    (void)l;
}
static void f_reserved(uint8_t *b, size_t *l) { (void)l; b[section_off(b, 0) + 16 + 76] = 1; }
/* PARM fields one at a time (docs/snapshot-format.md, "PARM") */
static size_t parm(const uint8_t *b, size_t field) { return section_off(b, 0) + 16 + field; }
static void f_threads0(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 0), 0); }
static void f_threads_big(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 0), 65537); }
static void f_mark_mode(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 4), 3); }
static void f_heap_limit_odd(uint8_t *b, size_t *l) { (void)l; st64(b + parm(b, 8), ld64(b + parm(b, 8)) + 4); }
static void f_heap_limit_huge(uint8_t *b, size_t *l) { (void)l; st64(b + parm(b, 8), (1ull << 56) + 8); }
static void f_page_pow2(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 16), 65536 + 16); }
static void f_page_small(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 16), 8); }
static void f_policy(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 20), 3); }
static void f_numa_node(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 24), 2); /* the node count is 2 */ }
static void f_numa_node_neg(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 24), (uint32_t)-2); }
static void f_header_bytes(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 56), 12); }
static void f_header_big(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 56), 72); }
static void f_granule(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 60), 24); }
static void f_granule_big(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 60), 8192); }
/* the header's and the section frames' own fields */
static void f_header_size(uint8_t *b, size_t *l) { (void)l; st32(b + 12, 80); }
static void f_sections(uint8_t *b, size_t *l) { (void)l; st32(b + 80, 6); }
/* version 2's type sections */
static void f_source(uint8_t *b, size_t *l) { (void)l; st32(b + parm(b, 64), 3); }
static void f_type_index(uint8_t *b, size_t *l) { (void)l; st32(b + section_off(b, 6) + 16 + 4, 3); }
static void f_type_names(uint8_t *b, size_t *l) { (void)l; b[section_off(b, 5) + 16] = 0; /* "Node" -> 4 names */ }
static void f_type_unterminated(uint8_t *b, size_t *l)
{
    (void)l; /* the last name loses its NUL, an earlier one gains one: still 3 NULs */
    size_t names = section_off(b, 5) + 16, nb = ld64(b + section_off(b, 5) + 8);
    b[names + nb - 1] = 'x';
    b[names + 1] = 0;
}
static void f_type_count(uint8_t *b, size_t *l)
{
    (void)l; /* more types than the header's file size allows */
    st64(b + 64, 1ull << 40);
}
static void f_flags(uint8_t *b, size_t *l) { (void)l; st32(b + 20, 1); }
static void f_frame_reserved(uint8_t *b, size_t *l) { (void)l; st32(b + section_off(b, 3) + 4, 7); }
static void f_frame_length(uint8_t *b, size_t *l)
{
    (void)l; /* 28 -> 32 bytes: the same padded size, so the frames stay where they are */
    st64(b + section_off(b, 3) + 8, ld64(b + section_off(b, 3) + 8) + 4);
}

static void test_forged(void **state)
{
    (void)state;
    forge_and_expect(f_count, "counts do not fit the file size");
    forge_and_expect(f_huge_count, "counts do not fit the file size");
    forge_and_expect(f_version, "unsupported snapshot format version 4");
    forge_and_expect(f_idwidth, "unsupported id width");
    forge_and_expect(f_dangling_edge, "object 0 field 0: dangling id 6");
    forge_and_expect(f_dangling_root, "root 0: dangling id 99");
    forge_and_expect(f_null_root, "root 0: dangling id");
    forge_and_expect(f_unsorted, "not in address order");
    forge_and_expect(f_overlap, "overlaps object 0");
    forge_and_expect(f_absurd_size, "extends past the heap limit");
    forge_and_expect(f_zero_size, "size 0");
    forge_and_expect(f_nptrs_gt_words, "pointer fields in 1 words");
    forge_and_expect(f_misaligned, "not 8-byte aligned");
    forge_and_expect(f_fields_sum, "add up to 8, the header says 7");
    forge_and_expect(f_node, "node 2, but the node count is 2");
    forge_and_expect(f_node_run, "node run 0 starts at object 1");
    forge_and_expect(f_node_count, "node count 0 out of range");
    forge_and_expect(f_heap_limit, "extends past the heap limit 64");
    forge_and_expect(f_tag, "section 2 is not 'OBJS'");
    forge_and_expect(f_trailing, "unexpected bytes after the last section");
    forge_and_expect(f_short, "truncated in section 'object types'");
    forge_and_expect(f_reserved, "reserved bytes are not zero");
    forge_and_expect(f_threads0, "gc_threads 0 out of range 1..65536");
    forge_and_expect(f_threads_big, "gc_threads 65537 out of range");
    forge_and_expect(f_mark_mode, "unknown mark mode 3");
    forge_and_expect(f_heap_limit_odd, "absurd heap limit");
    forge_and_expect(f_heap_limit_huge, "absurd heap limit");
    forge_and_expect(f_page_pow2, "page size 65552 is not a power of two");
    forge_and_expect(f_page_small, "page size 8 is not a power of two in 16..2^30");
    forge_and_expect(f_policy, "unknown NUMA policy 3");
    forge_and_expect(f_numa_node, "NUMA node 2 out of range -1..1");
    forge_and_expect(f_numa_node_neg, "NUMA node -2 out of range");
    forge_and_expect(f_header_bytes, "object header of 12 bytes");
    forge_and_expect(f_header_big, "object header of 72 bytes");
    forge_and_expect(f_granule, "mark granule 24 is not a power of two");
    forge_and_expect(f_granule_big, "mark granule 8192");
    forge_and_expect(f_header_size, "header of 80 bytes with 7 sections (version 2 has 88 and 7)");
    forge_and_expect(f_sections, "header of 88 bytes with 6 sections");
    forge_and_expect(f_source, "unknown source 3");
    forge_and_expect(f_type_index, "object 1: type 3 >= type count 3");
    forge_and_expect(f_type_names, "does not hold exactly 3 NUL-terminated names");
    forge_and_expect(f_type_unterminated, "does not hold exactly 3 NUL-terminated names");
    forge_and_expect(f_type_count, "counts do not fit the file size");
    forge_and_expect(f_flags, "unknown header flags 00000001");
    forge_and_expect(f_frame_reserved, "section 'edges': reserved bytes are not zero");
    forge_and_expect(f_frame_length, "section 'edges' declares 32 bytes, the header's counts give 28");
}

/* A version-1 file (no type sections, 72-byte header, PARM's last 16 bytes
 * reserved) made from a version-2 one: the reader still reads it. */
static void expect_error(const uint8_t *b, size_t len, const char *needle);
static void test_version1(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = small_file(&len);
    size_t end5 = section_off(b, 5), v1len = 72 + (end5 - 88);
    uint8_t *v = calloc(1, v1len);
    memcpy(v, b, 64);
    st32(v + 8, 1);
    st32(v + 12, 72);
    st64(v + 56, v1len);
    st32(v + 64, 5);
    st32(v + 68, (uint32_t)crc32(0, v, 68));
    memcpy(v + 72, b + 88, end5 - 88);
    memset(v + 72 + 16 + 64, 0, 8); /* source, layout: reserved in version 1 */
    st32(v + 72 + 16 + 80, (uint32_t)crc32(0, v + 72, 16 + 80));
    gcs_err err = {{0}};
    gcs_snapshot *h = gcs_snapshot_read_mem(v, v1len, "v1.snap", &err);
    if (!h)
        fail_msg("version 1: %s", err.msg);
    gcs_snapshot *g = small_graph();
    g->params.source = g->params.layout = 0;
    for (uint64_t i = 0; i < g->nobjects; i++)
        g->type[i] = GCS_SNAPSHOT_TYPE_NONE;
    assert_int_equal(gcs_snapshot_set_types(g, 0, NULL, &err), 0);
    assert_graphs_equal(g, h);
    gcs_snapshot_free(h);
    /* version 1 keeps its own rules: a reserved PARM byte is refused */
    v[72 + 16 + 66] = 1;
    st32(v + 72 + 16 + 80, (uint32_t)crc32(0, v + 72, 16 + 80));
    expect_error(v, v1len, "reserved bytes are not zero");
    gcs_snapshot_free(g);
    free(v);
    free(b);
}

/* ---- version 3 (read in place) ------------------------------------------------ */

/* CRC-32C: the check value of the Castagnoli polynomial, and the same CRC
 * whatever the pieces it is taken over (aligned or not). */
static void test_crc32c(void **state)
{
    (void)state;
    assert_int_equal(_gcs_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(_gcs_crc32c(0, "", 0), 0);
    uint8_t buf[1000];
    uint64_t x = 5;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rnd(&x);
    uint32_t whole = _gcs_crc32c(0, buf, sizeof buf);
    for (size_t cut = 0; cut < sizeof buf; cut += 37)
        assert_int_equal(_gcs_crc32c(_gcs_crc32c(0, buf, cut), buf + cut, sizeof buf - cut), whole);
    assert_int_equal(_gcs_crc32c(_gcs_crc32c(0, buf + 3, 500), buf + 503, 497),
                     _gcs_crc32c(0, buf + 3, 997));
    /* long buffers (crc32c.c's three lanes and their join) against the
     * definition, bit by bit, at odd starts and lengths around the lanes'
     * rounds of 3 x 4096 bytes */
    size_t big = 40000;
    uint8_t *b = malloc(big);
    assert_non_null(b);
    for (size_t i = 0; i < big; i++)
        b[i] = (uint8_t)rnd(&x);
    static const size_t lens[] = {12287, 12288, 12289, 12295, 24576, 24583, 36863, 39990};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
        for (size_t off = 0; off < 9; off += 3) {
            uint32_t ref = 0xFFFFFFFFu;
            for (size_t i = 0; i < lens[k]; i++) {
                ref ^= b[off + i];
                for (int j = 0; j < 8; j++)
                    ref = ref & 1 ? (ref >> 1) ^ 0x82F63B78u : ref >> 1;
            }
            assert_int_equal(_gcs_crc32c(0, b + off, lens[k]), ~ref);
            /* and continued from a register that is not the start's */
            assert_int_equal(_gcs_crc32c(_gcs_crc32c(0, b + off, 5), b + off + 5, lens[k] - 5), ~ref);
        }
    free(b);
}

static uint8_t *small_file3(size_t *len)
{
    gcs_snapshot *g = small_graph();
    char path[512];
    tmp_path(path, sizeof path, "valid3.snap");
    gcs_err err;
    assert_int_equal(gcs_snapshot_write(g, path, &err), 0);
    gcs_snapshot_free(g);
    return test_slurp(path, len);
}

/* Offset of version-3 section i's head (SNAP3_*). */
static size_t sec3_off(const uint8_t *b, int sec)
{
    size_t off = SNAP_HEADER_BYTES_V3;
    for (int i = 0; i < sec; i++) {
        uint64_t pl = ld64(b + off + 8);
        off += 16 + snap_pad8(pl) + snap3_tail(snap3_nblocks(pl, i));
    }
    return off;
}

/* Every checksum of a version-3 file recomputed: the header's, each block's
 * and each section's frame (head and block table). */
static void fix_crcs3(uint8_t *b)
{
    st32(b + 92, _gcs_crc32c(0, b, 92));
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++) {
        size_t off = sec3_off(b, i);
        uint64_t pl = ld64(b + off + 8), nb = snap3_nblocks(pl, i), bb = snap3_block_bytes(i);
        uint8_t *data = b + off + 16, *table = data + snap_pad8(pl);
        for (uint64_t k = 0; k < nb; k++) {
            uint64_t lo = k * bb, hi = lo + bb < snap_pad8(pl) ? lo + bb : snap_pad8(pl);
            st32(table + 4 * k, _gcs_crc32c(0, data + lo, hi - lo));
        }
        st32(table + 4 * nb, _gcs_crc32c(_gcs_crc32c(0, b + off, 16), table, 4 * nb));
    }
}

static void test_v3_truncation_every_offset(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = small_file3(&len);
    size_t sec[SNAP_NSECTIONS_V3 + 1];
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++)
        sec[i] = sec3_off(b, i);
    sec[SNAP_NSECTIONS_V3] = len;
    for (size_t k = 0; k < len; k++) {
        uint8_t *c = malloc(k + 1);
        memcpy(c, b, k);
        if (k == 0)
            expect_error(c, k, "empty file");
        else if (k < 96)
            expect_error(c, k, "truncated in the header");
        else {
            int s = 0;
            while (k >= sec[s + 1])
                s++;
            char want[64];
            snprintf(want, sizeof want, "truncated in section '%s'", _gcs_snap3_names[s]);
            expect_error(c, k, want);
        }
        free(c);
    }
    /* and through the file reader (mapped) */
    char path[512];
    tmp_path(path, sizeof path, "trunc3.snap");
    spit(path, b, sec[SNAP3_EDGES] + 5);
    gcs_err err;
    assert_null(gcs_snapshot_read(path, &err));
    assert_non_null(strstr(err.msg, "truncated in section 'edges'"));
    free(b);
}

static void test_v3_flipped_bytes(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = small_file3(&len);
    char path[512];
    tmp_path(path, sizeof path, "flip3.snap");
    for (size_t k = 0; k < len; k++) {
        for (int bit = 0; bit < 8; bit += 3) {
            b[k] ^= (uint8_t)(1u << bit);
            gcs_err err = {{0}};
            gcs_snapshot *g = gcs_snapshot_read_mem(b, len, "x.snap", &err);
            if (g)
                fail_msg("byte %zu bit %d: accepted", k, bit);
            if (k < 8)
                assert_non_null(strstr(err.msg, "bad magic"));
            else if (k < 12) /* version 2 (3 ^ 1) reads the header as version 2's */
                assert_true(strstr(err.msg, "unsupported snapshot format version") ||
                            strstr(err.msg, "checksum mismatch"));
            else if (!strstr(err.msg, "checksum mismatch"))
                fail_msg("byte %zu bit %d: %s", k, bit, err.msg);
            if (k % 61 == 0) { /* the mapped file reader too, now and then */
                spit(path, b, len);
                assert_null(gcs_snapshot_read(path, &err));
            }
            b[k] ^= (uint8_t)(1u << bit);
        }
    }
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_read_mem(b, len, "x", &err);
    assert_non_null(g); /* restored */
    gcs_snapshot_free(g);
    free(b);
}

static void forge3_and_expect(forge_fn f, const char *needle)
{
    size_t len;
    uint8_t *b = small_file3(&len);
    b = realloc(b, len + 64);
    f(b, &len);
    fix_crcs3(b);
    expect_error(b, len, needle);
    /* the same through the mapped file */
    char path[512];
    tmp_path(path, sizeof path, "forged3.snap");
    spit(path, b, len);
    gcs_err err;
    assert_null(gcs_snapshot_read(path, &err));
    if (!strstr(err.msg, needle))
        fail_msg("file: wanted \"%s\", got \"%s\"", needle, err.msg);
    free(b);
}

static size_t col3(const uint8_t *b, int sec, size_t i, size_t elem) { return sec3_off(b, sec) + 16 + elem * i; }
static void g_count(uint8_t *b, size_t *l) { (void)l; st64(b + 24, ld64(b + 24) + 1); }
static void g_version(uint8_t *b, size_t *l) { (void)l; st32(b + 8, 4); }
static void g_block_shift(uint8_t *b, size_t *l) { (void)l; st32(b + 84, 12); }
static void g_header_reserved(uint8_t *b, size_t *l) { (void)l; st32(b + 88, 1); }
static void g_sections(uint8_t *b, size_t *l) { (void)l; st32(b + 80, 7); }
static void g_dangling_edge(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_EDGES, 0, 4), 6); }
static void g_dangling_root(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_ROOTS, 0, 4), 99); }
static void g_unsorted(uint8_t *b, size_t *l)
{
    (void)l;
    uint64_t a0 = ld64(b + col3(b, SNAP3_ADDR, 0, 8)), a1 = ld64(b + col3(b, SNAP3_ADDR, 1, 8));
    st64(b + col3(b, SNAP3_ADDR, 0, 8), a1);
    st64(b + col3(b, SNAP3_ADDR, 1, 8), a0);
}
static void g_overlap(uint8_t *b, size_t *l)
{
    (void)l;
    st64(b + col3(b, SNAP3_ADDR, 1, 8), ld64(b + col3(b, SNAP3_ADDR, 0, 8)) + 8);
}
static void g_zero_size(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_WORDS, 4, 4), 0); }
static void g_absurd_size(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_WORDS, 5, 4), 0xFFFFFFFFu); }
static void g_nptrs(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_NPTRS, 4, 4), 6); }
static void g_nptrs_estart(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_NPTRS, 4, 4), 1); }
static void g_estart0(uint8_t *b, size_t *l) { (void)l; st64(b + col3(b, SNAP3_ESTART, 0, 8), 1); }
static void g_estart_end(uint8_t *b, size_t *l)
{
    (void)l; /* object 5 claims a field the edges do not have: sizes agree, the total does not */
    st32(b + col3(b, SNAP3_NPTRS, 5, 4), 2);
    st32(b + col3(b, SNAP3_WORDS, 5, 4), 2);
    st64(b + col3(b, SNAP3_ESTART, 6, 8), 8);
}
static void g_node(uint8_t *b, size_t *l) { (void)l; st16(b + col3(b, SNAP3_NODES, 0, 8) + 4, 2); }
static void g_node_run(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_NODES, 0, 8), 1); }
static void g_type_index(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_OBJTYPES, 1, 4), 3); }
static void g_type_names(uint8_t *b, size_t *l) { (void)l; b[col3(b, SNAP3_TYPES, 0, 1)] = 0; }
static void g_params(uint8_t *b, size_t *l) { (void)l; st32(b + col3(b, SNAP3_PARAMS, 28, 1), 0); }
static void g_params_reserved(uint8_t *b, size_t *l) { (void)l; b[col3(b, SNAP3_PARAMS, 76, 1)] = 1; }
static void g_tag(uint8_t *b, size_t *l) { (void)l; memcpy(b + sec3_off(b, SNAP3_WORDS), "WRDX", 4); }
static void g_frame_reserved(uint8_t *b, size_t *l) { (void)l; st32(b + sec3_off(b, SNAP3_EDGES) + 4, 7); }
static void g_frame_length(uint8_t *b, size_t *l)
{
    (void)l; /* 28 -> 32 bytes: the same padded size and blocks, so the frames stay where they are */
    st64(b + sec3_off(b, SNAP3_EDGES) + 8, ld64(b + sec3_off(b, SNAP3_EDGES) + 8) + 4);
}
static void g_pad(uint8_t *b, size_t *l) { (void)l; b[col3(b, SNAP3_EDGES, 7, 4)] = 1; /* 7 fields, padded to 8 */ }
static void g_trailing(uint8_t *b, size_t *l) { b[*l] = 0; (*l)++; }

static void test_v3_forged(void **state)
{
    (void)state;
    forge3_and_expect(g_count, "counts do not fit the file size");
    forge3_and_expect(g_version, "unsupported snapshot format version 4");
    forge3_and_expect(g_block_shift, "checksum blocks of 2^12 elements (version 3 has 2^14)");
    forge3_and_expect(g_header_reserved, "reserved word 00000001");
    forge3_and_expect(g_sections, "header of 96 bytes with 7 sections (version 3 has 96 and 10)");
    forge3_and_expect(g_dangling_edge, "object 0 field 0: dangling id 6");
    forge3_and_expect(g_dangling_root, "root 0: dangling id 99");
    forge3_and_expect(g_unsorted, "not in address order");
    forge3_and_expect(g_overlap, "overlaps object 0");
    forge3_and_expect(g_zero_size, "object 4: size 0");
    forge3_and_expect(g_absurd_size, "extends past the heap limit");
    forge3_and_expect(g_nptrs, "object 4: 6 pointer fields in 5 words");
    forge3_and_expect(g_nptrs_estart, "edge_start[5] is inconsistent with nptrs");
    forge3_and_expect(g_estart0, "edge_start[0] is 1, not 0");
    forge3_and_expect(g_estart_end, "pointer fields add up to 8, the graph says 7");
    forge3_and_expect(g_node, "node 2, but the node count is 2");
    forge3_and_expect(g_node_run, "node run 0 starts at object 1");
    forge3_and_expect(g_type_index, "object 1: type 3 >= type count 3");
    forge3_and_expect(g_type_names, "does not hold exactly 3 NUL-terminated names");
    forge3_and_expect(g_params, "node count 0 out of range");
    forge3_and_expect(g_params_reserved, "section 'params': reserved bytes are not zero");
    forge3_and_expect(g_tag, "section 3 is not 'WRDS'");
    forge3_and_expect(g_frame_reserved, "section 'edges': reserved bytes are not zero");
    forge3_and_expect(g_frame_length, "section 'edges' declares 32 bytes, the header's counts give 28");
    forge3_and_expect(g_pad, "section 'edges': reserved bytes are not zero");
    forge3_and_expect(g_trailing, "unexpected bytes after the last section");
}

/* A heap over several checksum blocks and threads: a damaged byte in a late
 * block names that block; an edge out of range in a late block is the
 * reported one (the lowest), whatever the threads. */
static void test_v3_blocks(void **state)
{
    (void)state;
    gcs_snapshot *g = random_graph(200000, 7, 2);
    char path[512];
    tmp_path(path, sizeof path, "blocks3.snap");
    gcs_err err;
    assert_int_equal(gcs_snapshot_write(g, path, &err), 0);
    size_t len;
    uint8_t *b = test_slurp(path, &len);
    size_t at = col3(b, SNAP3_WORDS, 150000, 4);
    b[at] ^= 4;
    expect_error(b, len, "checksum mismatch in section 'object sizes' (block 9 of 13");
    b[at] ^= 4;
    uint64_t m = g->nfields;
    st32(b + col3(b, SNAP3_EDGES, m - 3, 4), 200000);
    st32(b + col3(b, SNAP3_EDGES, m - 100, 4), 200001);
    fix_crcs3(b);
    uint64_t lo = 0, hi = g->nobjects;
    while (hi - lo > 1) { /* the owner of field m - 100 */
        uint64_t mid = (lo + hi) / 2;
        if (g->edge_start[mid] <= m - 100)
            lo = mid;
        else
            hi = mid;
    }
    char want[96];
    snprintf(want, sizeof want, "object %llu field %llu: dangling id 200001", (unsigned long long)lo,
             (unsigned long long)(m - 100 - g->edge_start[lo]));
    expect_error(b, len, want);
    free(b);
    gcs_snapshot_free(g);
}

static void test_bad_files(void **state)
{
    (void)state;
    gcs_err err;
    char path[512];
    tmp_path(path, sizeof path, "no-such.snap");
    assert_null(gcs_snapshot_read(path, &err));
    assert_non_null(strstr(err.msg, "cannot read: No such file"));
    assert_null(gcs_snapshot_read("/", &err));
    expect_error((const uint8_t *)"{\"format\": 1}\n", 14, "bad magic");
    /* the writer refuses an invalid graph and leaves no file */
    gcs_snapshot *g = small_graph();
    g->edges[0] = 6;
    tmp_path(path, sizeof path, "invalid.snap");
    assert_int_equal(gcs_snapshot_write(g, path, &err), -1);
    assert_non_null(strstr(err.msg, "dangling"));
    assert_int_equal(access(path, F_OK), -1);
    gcs_snapshot_free(g);
}

/* ---- the collector ------------------------------------------------------------------ */

typedef struct model {
    size_t n;
    void **obj;
    uint32_t *nptrs, *words;
    int64_t *edge;      /* n * maxp, -1 NULL */
    size_t maxp;
    void **roots;
    size_t nroots;
    unsigned char *reach;
} model;

#define MAXP 200

static void model_build(model *m, size_t n, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->maxp = MAXP;
    m->obj = calloc(n, sizeof *m->obj);
    m->nptrs = calloc(n, sizeof *m->nptrs);
    m->words = calloc(n, sizeof *m->words);
    m->edge = malloc(n * MAXP * sizeof *m->edge);
    m->reach = calloc(n, 1);
    uint64_t s = seed | 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(&s) % 100;
        uint32_t np = r < 20 ? 0 : r < 98 ? 1 + (uint32_t)(rnd(&s) % 3) : MAXP;
        uint32_t w = np + (uint32_t)(rnd(&s) % 3) + (np == 0);
        if (i == 7)
            w = 3000; /* a large object (> 8 KiB) */
        m->nptrs[i] = np;
        m->words[i] = w;
        m->obj[i] = np ? gcs_gc_alloc(8 * w, np) : gcs_gc_alloc_data(8 * w);
        assert_non_null(m->obj[i]);
        for (uint32_t k = 0; k < np; k++) {
            uint64_t q = rnd(&s) % 10;
            int64_t t = q < 3 ? -1 : q == 3 ? (int64_t)i : (int64_t)(rnd(&s) % n);
            m->edge[i * MAXP + k] = t;
        }
    }
    /* Nothing collects while the objects are allocated (no budget, the heap
     * is big enough), so they can be linked afterwards. */
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < m->nptrs[i]; k++) {
            int64_t t = m->edge[i * MAXP + k];
            ((void **)m->obj[i])[k] = t < 0 ? NULL : m->obj[t];
        }
    m->nroots = 4;
    m->roots = calloc(m->nroots, sizeof *m->roots);
    for (size_t r = 0; r < m->nroots; r++) {
        m->roots[r] = r == 3 ? NULL : m->obj[rnd(&s) % n];
        assert_int_equal(gcs_gc_add_root(&m->roots[r]), 0);
    }
}

static void model_free(model *m)
{
    for (size_t r = 0; r < m->nroots; r++)
        gcs_gc_remove_root(&m->roots[r]);
    free(m->obj);
    free(m->nptrs);
    free(m->words);
    free(m->edge);
    free(m->reach);
    free(m->roots);
}

static size_t index_of(const model *m, const void *p)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->obj[i] == p)
            return i;
    return SIZE_MAX;
}

static uint64_t model_reach(model *m)
{
    memset(m->reach, 0, m->n);
    size_t *stack = malloc(m->n * MAXP * sizeof *stack), top = 0;
    uint64_t count = 0;
    for (size_t r = 0; r < m->nroots; r++) {
        size_t i = m->roots[r] ? index_of(m, m->roots[r]) : SIZE_MAX;
        if (i != SIZE_MAX && !m->reach[i]) {
            m->reach[i] = 1;
            stack[top++] = i;
        }
    }
    while (top) {
        size_t i = stack[--top];
        count++;
        for (uint32_t k = 0; k < m->nptrs[i]; k++) {
            int64_t t = m->edge[i * MAXP + k];
            if (t >= 0 && !m->reach[t]) {
                m->reach[t] = 1;
                stack[top++] = (size_t)t;
            }
        }
    }
    free(stack);
    return count;
}

static uint64_t id_of(const gcs_snapshot *g, const void *p)
{
    uint64_t off = (uint64_t)(uintptr_t)p - g->params.heap_base, lo = 0, hi = g->nobjects;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->addr[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->nobjects && g->addr[lo] == off ? lo : UINT64_MAX;
}

/* The snapshot holds exactly the model's reachable objects, with their sizes,
 * pointer counts, fields and the roots. */
static void check_against_model(model *m, const gcs_snapshot *g)
{
    uint64_t live = model_reach(m);
    assert_int_equal(g->nobjects, live);
    uint64_t fields = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (!m->reach[i])
            continue;
        uint64_t id = id_of(g, m->obj[i]);
        assert_true(id != UINT64_MAX);
        assert_int_equal(g->words[id], m->words[i]);
        assert_int_equal(g->nptrs[id], m->nptrs[i]);
        fields += m->nptrs[i];
        for (uint32_t k = 0; k < m->nptrs[i]; k++) {
            int64_t t = m->edge[i * MAXP + k];
            uint32_t e = g->edges[g->edge_start[id] + k];
            if (t < 0)
                assert_int_equal(e, GCS_SNAPSHOT_NULL);
            else
                assert_int_equal(e, id_of(g, m->obj[t]));
        }
    }
    assert_int_equal(g->nfields, fields);
    size_t r2 = 0;
    for (size_t r = 0; r < m->nroots; r++) {
        if (!m->roots[r])
            continue;
        assert_true(r2 < g->nroots);
        assert_int_equal(g->roots[r2], id_of(g, m->roots[r]));
        r2++;
    }
    assert_int_equal(g->nroots, r2);
}

static void test_collector_snapshot(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.threads = 2;
    char logp[512], path[512];
    tmp_path(logp, sizeof logp, "gc.log");
    o.log_path = logp;
    gcs_err err = {{0}};
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    model m;
    model_build(&m, 5000, 7);
    for (int round = 0; round < 3; round++) {
        /* drop some roots between rounds: more garbage */
        if (round == 2)
            m.roots[1] = NULL;
        snprintf(path, sizeof path, "%s/collector-%d.snap", tmpdir, round);
        if (gcs_gc_collect_snapshot(path, &err) != 0)
            fail_msg("%s", err.msg);
        gcs_gc_stats st;
        assert_int_equal(gcs_gc_last_stats(&st), 0);
        assert_int_equal(st.snapshot_status, 1);
        assert_string_equal(st.snapshot_path, path);
        assert_true(st.snapshot_ns > 0);
        assert_int_equal(st.snapshot_objects, st.live_objects);
        gcs_snapshot *g = gcs_snapshot_read(path, &err);
        if (!g)
            fail_msg("%s", err.msg);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(st.snapshot_bytes, (uint64_t)sb.st_size);
        assert_int_equal(g->params.collection, st.index);
        assert_int_equal(g->params.gc_threads, 2);
        assert_int_equal(g->params.page_bytes, GCS_GC_PAGE_BYTES);
        assert_int_equal(g->params.heap_limit, 64u << 20);
        check_against_model(&m, g);
        for (uint64_t i = 0; i < g->nobjects; i++)
            assert_true(g->node[i] == GCS_SNAPSHOT_NODE_UNKNOWN || g->node[i] < g->params.node_count);
        gcs_snapshot_free(g);
    }
    /* the JSON log names the file */
    size_t len;
    char *log = (char *)test_slurp(logp, &len);
    log[len] = 0;
    assert_non_null(strstr(log, "\"snapshot_path\":\""));
    assert_non_null(strstr(log, "collector-2.snap\""));
    assert_non_null(strstr(log, "\"snapshot_ns\""));
    free(log);
    /* a failed write is recorded, not fatal */
    assert_int_equal(gcs_gc_collect_snapshot("/nonexistent-dir/x.snap", &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/x.snap: cannot write"));
    gcs_gc_stats st;
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.snapshot_status, -1);
    assert_non_null(strstr(st.snapshot_error, "cannot write"));
    assert_int_equal(st.live_objects, model_reach(&m));
    gcs_gc_collect();
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.snapshot_status, 0);
    model_free(&m);
    gcs_gc_shutdown();
}

static void test_collector_env_and_every(void **state)
{
    (void)state;
    char pattern[512], path[512];
    tmp_path(pattern, sizeof pattern, "env-%d.snap");
    setenv("GCSCALE_GC_SNAPSHOT", pattern, 1);
    setenv("GCSCALE_GC_SNAPSHOT_EVERY", "2", 1);
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 16u << 20;
    o.threads = 2;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *list = NULL;
    gcs_gc_add_root(&list);
    for (int i = 0; i < 100; i++) {
        void *x = gcs_gc_alloc(16, 1);
        ((void **)x)[0] = list;
        list = x;
    }
    for (int c = 1; c <= 4; c++) {
        gcs_gc_collect();
        gcs_gc_stats st;
        gcs_gc_last_stats(&st);
        snprintf(path, sizeof path, "%s/env-%d.snap", tmpdir, c);
        assert_int_equal(st.snapshot_status, c % 2 == 0 ? 1 : 0);
        assert_int_equal(access(path, F_OK) == 0, c % 2 == 0);
    }
    snprintf(path, sizeof path, "%s/env-4.snap", tmpdir);
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    assert_non_null(g);
    assert_int_equal(g->nobjects, 100);
    gcs_snapshot_stats st;
    assert_int_equal(gcs_snapshot_stats_compute(g, &st, &err), 0);
    assert_int_equal(st.depth, 100);
    gcs_snapshot_stats_free(&st);
    gcs_snapshot_free(g);
    /* one-shot request beside the periodic one; a fixed path is overwritten */
    tmp_path(path, sizeof path, "fixed.snap");
    assert_int_equal(gcs_gc_set_snapshot(path, 1), 0);
    gcs_gc_collect();
    gcs_gc_collect();
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(gcs_gc_set_snapshot(NULL, 0), 0);
    tmp_path(path, sizeof path, "next.snap");
    assert_int_equal(gcs_gc_snapshot_next(path), 0);
    gcs_gc_collect();
    assert_int_equal(access(path, F_OK), 0);
    gcs_gc_remove_root(&list);
    gcs_gc_shutdown();
    setenv("GCSCALE_GC_SNAPSHOT_EVERY", "zero", 1);
    assert_int_equal(gcs_gc_init(&o, &err), -1);
    assert_non_null(strstr(err.msg, "GCSCALE_GC_SNAPSHOT_EVERY"));
    unsetenv("GCSCALE_GC_SNAPSHOT_EVERY");
    unsetenv("GCSCALE_GC_SNAPSHOT");
}

/* Canonical comparison of two rooted graphs: BFS in root and field order,
 * numbering objects by discovery; sizes, pointer counts and fields (as
 * discovery numbers) must agree. */
static void assert_isomorphic(const gcs_snapshot *a, const gcs_snapshot *b)
{
    assert_int_equal(a->nroots, b->nroots);
    uint64_t n = a->nobjects;
    assert_int_equal(n, b->nobjects);
    uint32_t *na = malloc((n + 1) * 4), *nb = malloc((n + 1) * 4), *qa = malloc((n + 1) * 4),
             *qb = malloc((n + 1) * 4);
    for (uint64_t i = 0; i < n; i++)
        na[i] = nb[i] = UINT32_MAX;
    uint64_t tail = 0, head = 0;
#define VISIT(x, y)                                                         \
    do {                                                                    \
        uint32_t x_ = (x), y_ = (y);                                        \
        assert_int_equal(na[x_] == UINT32_MAX, nb[y_] == UINT32_MAX);       \
        if (na[x_] == UINT32_MAX) {                                         \
            na[x_] = nb[y_] = (uint32_t)tail;                               \
            qa[tail] = x_;                                                  \
            qb[tail++] = y_;                                                \
        } else {                                                            \
            assert_int_equal(na[x_], nb[y_]);                               \
        }                                                                   \
    } while (0)
    for (uint64_t k = 0; k < a->nroots; k++)
        VISIT(a->roots[k], b->roots[k]);
    while (head < tail) {
        uint32_t x = qa[head], y = qb[head++];
        assert_int_equal(a->words[x], b->words[y]);
        assert_int_equal(a->nptrs[x], b->nptrs[y]);
        for (uint32_t k = 0; k < a->nptrs[x]; k++) {
            uint32_t ex = a->edges[a->edge_start[x] + k], ey = b->edges[b->edge_start[y] + k];
            assert_int_equal(ex == GCS_SNAPSHOT_NULL, ey == GCS_SNAPSHOT_NULL);
            if (ex != GCS_SNAPSHOT_NULL)
                VISIT(ex, ey);
        }
    }
#undef VISIT
    assert_int_equal(tail, n);
    free(na);
    free(nb);
    free(qa);
    free(qb);
}

static void test_build_from_snapshot(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.threads = 2;
    gcs_err err;
    char p1[512], p2[512];
    tmp_path(p1, sizeof p1, "orig.snap");
    tmp_path(p2, sizeof p2, "rebuilt.snap");
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    model m;
    model_build(&m, 3000, 99);
    assert_int_equal(gcs_gc_collect_snapshot(p1, &err), 0);
    model_free(&m);
    gcs_gc_shutdown();

    gcs_snapshot *a = gcs_snapshot_read(p1, &err);
    assert_non_null(a);
    o.alloc_budget = 256u << 10; /* collections while it is being built */
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    gcs_gc_snapshot_heap h;
    if (gcs_gc_build_snapshot(a, &h, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(gcs_gc_collections() > 0);
    assert_int_equal(h.objects, a->nobjects);
    assert_int_equal(h.nroots, a->nroots);
    assert_int_equal(gcs_gc_collect_snapshot(p2, &err), 0);
    gcs_snapshot *b = gcs_snapshot_read(p2, &err);
    assert_non_null(b);
    assert_isomorphic(a, b);
    gcs_gc_snapshot_heap_release(&h);
    gcs_gc_collect();
    gcs_gc_stats st;
    gcs_gc_last_stats(&st);
    assert_int_equal(st.live_objects, 0);
    gcs_gc_shutdown();
    /* a heap too small fails cleanly */
    o.heap_limit = 1u << 20;
    o.alloc_budget = 0;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    gcs_snapshot *big = random_graph(100000, 5, 1);
    big->nroots = 0;
    assert_int_equal(gcs_gc_build_snapshot(big, &h, &err), -1);
    assert_non_null(strstr(err.msg, "heap exhausted"));
    gcs_gc_collect();
    gcs_gc_last_stats(&st);
    assert_int_equal(st.live_objects, 0);
    gcs_gc_shutdown();
    gcs_snapshot_free(big);
    gcs_snapshot_free(a);
    gcs_snapshot_free(b);
}

static int cleanup(void **state)
{
    (void)state;
    if (tmpdir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            return -1;
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_empty),
        cmocka_unit_test(test_roundtrip_small),
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_check_objects_runs),
        cmocka_unit_test(test_chain_depth),
        cmocka_unit_test(test_truncation_every_offset),
        cmocka_unit_test(test_flipped_bytes),
        cmocka_unit_test(test_forged),
        cmocka_unit_test(test_version1),
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_v3_truncation_every_offset),
        cmocka_unit_test(test_v3_flipped_bytes),
        cmocka_unit_test(test_v3_forged),
        cmocka_unit_test(test_v3_blocks),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_collector_snapshot),
        cmocka_unit_test(test_collector_env_and_every),
        cmocka_unit_test(test_build_from_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, cleanup);
}
