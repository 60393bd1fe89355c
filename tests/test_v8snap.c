/* test_v8snap.c -- V8 heap snapshots imported (formats/v8snap.c): the
 * committed snapshots of tests/data/v8 (made by make.sh with a real node:
 * a list, a binary tree, a random graph) hold exactly the edges graphs.js
 * built between its own objects (an array's elements once, through its
 * backing store); hand-written documents check the meta read by field
 * name in any order, weak and shortcut edges, element edges that a backing
 * store repeats, reachability from
 * the synthetic root, escapes, and each malformed input's one-line message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/heapdump.h"

static uint32_t type_id(const gcs_snapshot *g, const char *name)
{
    for (uint32_t t = 0; t < g->ntypes; t++)
        if (strcmp(g->type_names[t], name) == 0)
            return t;
    return GCS_SNAPSHOT_TYPE_NONE;
}

static uint64_t count_type(const gcs_snapshot *g, uint32_t t)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < g->nobjects; i++)
        n += g->type[i] == t;
    return n;
}

/* edges from objects of type a to objects of type b */
static uint64_t count_edges(const gcs_snapshot *g, uint32_t a, uint32_t b)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < g->nobjects; i++)
        if (g->type[i] == a)
            for (uint64_t e = g->edge_start[i]; e < g->edge_start[i + 1]; e++)
                n += g->edges[e] != GCS_SNAPSHOT_NULL && g->type[g->edges[e]] == b;
    return n;
}

static gcs_snapshot *import_file(const char *name, gcs_heapdump_report *rep)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/v8/%s", name);
    gcs_err err = {{0}};
    gcs_snapshot *g = gcs_heapdump_import(path, GCS_HEAPDUMP_UNKNOWN, rep, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(rep->format, GCS_HEAPDUMP_V8);
    assert_int_equal(rep->compressed, 1);
    assert_int_equal(g->params.source, GCS_SNAPSHOT_SOURCE_V8);
    assert_int_equal(g->nroots, 1);
    assert_int_equal(g->roots[0], 0);
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    assert_int_equal(g->nobjects + rep->unreachable_nodes, rep->nodes);
    return g;
}

static void test_fixture_list(void **state)
{
    (void)state;
    gcs_heapdump_report rep;
    gcs_snapshot *g = import_file("list-10000.heapsnapshot.gz", &rep);
    uint32_t node = type_id(g, "ListNode");
    assert_int_not_equal(node, GCS_SNAPSHOT_TYPE_NONE);
    assert_int_equal(count_type(g, node), 10000);
    assert_int_equal(count_edges(g, node, node), 9999); /* next */
    /* and per node the runtime's own: its map and its __proto__ (Object),
     * and the last one's next, null (an oddball, "(hidden)") */
    assert_int_equal(count_edges(g, node, type_id(g, "(object shape)")), 10000);
    assert_int_equal(count_edges(g, node, type_id(g, "Object")), 10000);
    assert_int_equal(count_edges(g, node, type_id(g, "(hidden)")), 1);
    /* ListNode {next, value}: map + properties + elements + 2 fields, 40 bytes */
    for (uint64_t i = 0; i < g->nobjects; i++)
        if (g->type[i] == node)
            assert_int_equal(8 + gcs_snapshot_size(g, i), 40);
    assert_true(rep.weak_edges > 0);
    gcs_snapshot_free(g);
}

static void test_fixture_tree(void **state)
{
    (void)state;
    gcs_heapdump_report rep;
    gcs_snapshot *g = import_file("tree-14.heapsnapshot.gz", &rep);
    uint32_t node = type_id(g, "TreeNode");
    assert_int_equal(count_type(g, node), 16383);
    assert_int_equal(count_edges(g, node, node), 16382);
    assert_int_equal(count_edges(g, node, type_id(g, "(hidden)")), 2 * 8192); /* the leaves' nulls */
    gcs_snapshot_free(g);
}

static void test_fixture_random(void **state)
{
    (void)state;
    gcs_heapdump_report rep;
    gcs_snapshot *g = import_file("random-5000-4.heapsnapshot.gz", &rep);
    uint32_t node = type_id(g, "RandNode"), arr = type_id(g, "Array");
    assert_int_equal(count_type(g, node), 5000);
    assert_int_equal(count_edges(g, node, arr), 5000); /* out */
    /* V8 lists an array's elements twice: as element edges of the JSArray
     * and as internal edges of its backing store ("(array)").  The first
     * are dropped: 5000 arrays of 4 slots and the holder array `all` (5000
     * slots), live while the snapshot is written, each reach their
     * elements through their store only; the runtime's own arrays add
     * 3798 more (2048 of them one array's holes, edges to an oddball). */
    assert_int_equal(count_edges(g, arr, node), 0);
    assert_int_equal(count_edges(g, type_id(g, "(array)"), node), 5000 * 4 + 5000);
    assert_int_equal(rep.element_copies, 5000 * 4 + 5000 + 3798);
    gcs_snapshot_free(g);
}

/* ---- hand-written documents --------------------------------------------------------- */

/* Node fields in an unusual order (the reader goes by name), an extra
 * field, edge fields likewise.  Nodes: 0 the synthetic root, 1 "A" (object,
 * 40 bytes), 2 "B" (object, 24), 3 a string (only weakly reachable), 4 "D"
 * reachable only through a shortcut of A (dropped), 5 "A" reached by the
 * root's shortcut (kept).  A has two edges to B. */
static const char doc_ok[] =
    "{\"snapshot\":{\"meta\":{\"node_fields\":[\"id\",\"edge_count\",\"self_size\",\"name\",\"extra\",\"type\"],"
    "\"node_types\":[0,0,0,0,0,[\"hidden\",\"object\",\"string\",\"synthetic\"]],"
    "\"edge_fields\":[\"to_node\",\"name_or_index\",\"type\"],"
    "\"edge_types\":[\"node\",\"string_or_number\",[\"element\",\"property\",\"weak\",\"shortcut\"]]},"
    "\"node_count\":6,\"edge_count\":8},\n"
    "\"nodes\":[1,3,0,0,9,3,  3,4,40,1,9,1,  5,0,24,2,9,1,  7,0,16,3,9,2,  9,0,8,4,9,1,  11,1,8,1,9,1],\n"
    "\"edges\":[6,0,1, 30,0,3, 18,0,2,  12,0,1, 12,1,0, 18,0,2, 24,0,3,  6,5,1],\n"
    "\"trace_tree\":[{\"x\":[1,2,{\"y\":\"]\"}]}],\"locations\":[],\n"
    "\"strings\":[\"(root)\",\"A\",\"B\\\"\\u00e9\\n\",\"C\",\"D\"]}\n";

static void test_document(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_heapdump_report rep;
    gcs_snapshot *g = gcs_heapdump_import_v8_mem(doc_ok, sizeof doc_ok - 1, "doc", &rep, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(rep.nodes, 6);
    assert_int_equal(rep.edges_total, 8);
    assert_int_equal(rep.weak_edges, 2);
    assert_int_equal(rep.shortcut_edges, 1);
    assert_int_equal(rep.unreachable_nodes, 2); /* the string, D */
    /* root, A(1), B(2), A(5) in node order */
    assert_int_equal(g->nobjects, 4);
    assert_int_equal(g->nfields, 5);            /* root 2, A 2, B 0, A(5) 1 */
    assert_int_equal(rep.references, 5);
    assert_string_equal(g->type_names[g->type[0]], "(synthetic)");
    assert_string_equal(g->type_names[g->type[1]], "A");
    assert_string_equal(g->type_names[g->type[2]], "B\"\xc3\xa9\n");
    assert_string_equal(g->type_names[g->type[3]], "A");
    assert_int_equal(g->type[1], g->type[3]);
    assert_int_equal(gcs_snapshot_size(g, 1), 32);   /* 40 - the map word */
    assert_int_equal(gcs_snapshot_size(g, 2), 16);
    assert_int_equal(g->nptrs[0], 2);
    assert_int_equal(g->words[0], 2);                /* size 0, widened to its edges */
    assert_int_equal(g->edges[0], 1);
    assert_int_equal(g->edges[1], 3);
    assert_int_equal(g->edges[2], 2);                /* A -> B */
    assert_int_equal(g->edges[3], 2);                /* A -> B again (a second field) */
    assert_int_equal(g->edges[4], 1);                /* A(5) -> A */
    assert_int_equal(rep.jvm_bytes, 0 + 40 + 24 + 8);
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    gcs_snapshot_free(g);
}

/* Element edges and backing stores: nodes 0 the root (element edges to
 * 4, 5, 6, 10: no array child, kept), 1 a store of Y listing E1 and E2,
 * 2 E1, 3 E2, 4 Y (elements E1, E2; its store 1 comes before it), 5 X
 * (elements E2, E1; its store 7 after it lists them the other way round),
 * 6 Z (elements E1, E2; its store 8 lists E1 only: kept), 7 and 8 stores,
 * 9 an oddball, 10 W (elements E1 and the oddball; its store 8 lists E1:
 * dropped, as the runtime's hidden nodes need not be in a store). */
static const char doc_elements[] =
    "{\"snapshot\":{\"meta\":{\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\"],"
    "\"node_types\":[[\"hidden\",\"array\",\"object\",\"synthetic\"]],"
    "\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],"
    "\"edge_types\":[[\"element\",\"property\",\"internal\",\"hidden\",\"shortcut\",\"weak\"]]},"
    "\"node_count\":11,\"edge_count\":21},\n"
    "\"nodes\":[3,4,1,0,4, 1,1,3,32,2, 2,2,5,16,0, 2,2,7,16,0, 2,3,9,32,3, 2,3,11,32,3, 2,3,13,32,3,"
    " 1,1,15,32,2, 1,1,17,24,1, 0,5,19,16,0, 2,3,21,32,3],\n"
    "\"edges\":[0,0,20, 0,1,25, 0,2,30, 0,3,50,  2,0,10, 2,1,15,  0,0,10, 0,1,15, 2,0,5,  0,0,15, 0,1,10, 2,0,35,"
    "  0,0,10, 0,1,15, 2,0,40,  2,0,10, 2,1,15,  2,0,10,  0,0,10, 0,1,45, 2,0,40],\n"
    "\"strings\":[\"\",\"(object elements)\",\"Item\",\"Arr\",\"(root)\",\"Oddball\"]}\n";

static void test_element_copies(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_heapdump_report rep;
    gcs_snapshot *g = gcs_heapdump_import_v8_mem(doc_elements, sizeof doc_elements - 1, "doc", &rep, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(rep.element_copies, 6);  /* Y's two, X's two, W's two */
    assert_int_equal(rep.unreachable_nodes, 1); /* the oddball, reached through W's element edge only */
    assert_int_equal(g->nobjects, 10);
    assert_int_equal(g->nfields, 21 - 6);
    assert_int_equal(rep.references, 21 - 6);
    static const uint32_t want_nptrs[10] = {4, 2, 0, 0, 1, 1, 3, 2, 1, 1};
    static const uint32_t want_edges[15] = {4, 5, 6, 9, 2, 3, 1, 7, 2, 3, 8, 2, 3, 2, 8};
    for (int i = 0; i < 10; i++)
        assert_int_equal(g->nptrs[i], want_nptrs[i]);
    for (int e = 0; e < 15; e++)
        assert_int_equal(g->edges[e], want_edges[e]);
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    gcs_snapshot_free(g);
}

/* 20 objects, each with one element edge to E and an internal edge to the
 * same store, which lists E 20 times: no object's store, only a shared
 * array far larger than one object's elements (v8snap_graph.c's STORE_SLACK), so
 * nothing is dropped -- the bound that keeps such a document from costing
 * a comparison per object. */
static void test_element_shared_store(void **state)
{
    (void)state;
    enum { N = 20 };
    char doc[8192];
    size_t at = (size_t)snprintf(doc, sizeof doc,
        "{\"snapshot\":{\"meta\":{\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\"],"
        "\"node_types\":[[\"hidden\",\"array\",\"object\",\"synthetic\"]],"
        "\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],"
        "\"edge_types\":[[\"element\",\"property\",\"internal\"]]},\"node_count\":%d,\"edge_count\":%d},"
        "\"nodes\":[3,0,1,0,%d, 1,1,3,32,%d, 2,2,5,16,0", N + 3, 4 * N, N, N);
    for (int i = 0; i < N; i++)
        at += (size_t)snprintf(doc + at, sizeof doc - at, ", 2,3,%d,32,2", 7 + 2 * i);
    at += (size_t)snprintf(doc + at, sizeof doc - at, "],\"edges\":[");
    for (int i = 0; i < N; i++) /* the root's edges to the objects */
        at += (size_t)snprintf(doc + at, sizeof doc - at, "%s2,0,%d", i ? "," : "", (3 + i) * 5);
    for (int i = 0; i < N; i++) /* the store's, all to E */
        at += (size_t)snprintf(doc + at, sizeof doc - at, ",2,0,10");
    for (int i = 0; i < N; i++) /* each object: an element edge to E, an internal one to the store */
        at += (size_t)snprintf(doc + at, sizeof doc - at, ",0,0,10,2,0,5");
    at += (size_t)snprintf(doc + at, sizeof doc - at, "],\"strings\":[\"(root)\",\"(object elements)\",\"Item\",\"Arr\"]}");
    assert_true(at < sizeof doc);
    gcs_err err = {{0}};
    gcs_heapdump_report rep;
    gcs_snapshot *g = gcs_heapdump_import_v8_mem(doc, at, "doc", &rep, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(rep.element_copies, 0);
    assert_int_equal(g->nfields, 4 * N);
    gcs_snapshot_free(g);
}

/* doc_ok with one substring replaced: the import fails with one line that
 * contains want. */
static void bad(const char *from, const char *to, const char *want)
{
    const char *at = strstr(doc_ok, from);
    if (!at)
        fail_msg("'%s' not in the document", from);
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - doc_ok), doc_ok, to, at + strlen(from));
    gcs_err err = {{0}};
    gcs_snapshot *g = gcs_heapdump_import_v8_mem(buf, strlen(buf), "doc", NULL, &err);
    if (g)
        fail_msg("accepted with '%s' -> '%s'", from, to);
    if (!strstr(err.msg, want) || strchr(err.msg, '\n'))
        fail_msg("'%s' -> '%s': message '%s' lacks '%s'", from, to, err.msg, want);
}

static void test_bad_documents(void **state)
{
    (void)state;
    bad("\"self_size\"", "\"size\"", "snapshot.meta: node_fields lacks \"self_size\"");
    bad("\"edge_count\",", "\"edges\",", "node_fields lacks \"edge_count\"");
    bad("\"to_node\"", "\"target\"", "edge_fields lacks \"to_node\"");
    bad("\"node_types\"", "\"nodetypes\"", "node_types has no list");
    bad("{\"meta\"", "{\"mete\"", "snapshot.meta: missing");
    bad("\"node_count\":6", "\"node_count\":7", "6 nodes, snapshot.node_count says 7");
    bad("\"node_count\":6", "\"node_count\":5", "more than snapshot.node_count");
    bad("\"edge_count\":8", "\"edge_count\":9", "8 edges, snapshot.edge_count says 9");
    bad("6,5,1]", "6,5,1,6,0,1]", "more than snapshot.edge_count");
    bad("30,0,3,", "36,0,3,", "to_node 36 is outside the node array (6 nodes of 6 fields)");
    bad("30,0,3,", "31,0,3,", "to_node 31 is outside");
    bad("6,5,1]", "6,5,9]", "an edge's type is outside snapshot.meta.edge_types");
    bad("9,3,  3", "9,7,  3", "a node's type is outside");
    bad("11,1,8,1,9,1]", "11,1,8,1,9]", "the array ends inside a node");
    bad("11,1,8,1,9,1]", "11,1,8,1,9,-1]", "nodes: expected a non-negative integer");
    bad("11,1,8,1,9,1]", "11,1,8,1,9,12345678901234567]", "more than 16 digits");
    bad("\"C\",\"D\"]", "\"C\"]", "a node's name is outside the 4 strings");
    bad("\"strings\"", "\"strung\"", "the \"strings\" member is missing");
    bad("\"edges\"", "\"edgez\"", "the \"edges\" member is missing");
    bad("\\u00e9", "\\u00g9", "a bad \\u escape");
    bad("}\n", "}x\n", "bytes after the snapshot's closing '}'");
    bad("{\"snapshot\":", "[", "expected '{'");
    bad("3,4,40,1,9,1", "3,3,40,1,9,1", "more edges than the nodes' edge_count sum");
    bad("5,0,24,2,9,1", "5,3,24,2,9,1", "edges, the nodes' edge_count sum is larger");
    bad("3,4,40,1", "3,4,4294967296,1", "self_size 4294967296 is 4 GiB or more");
    /* every prefix: truncated, one line, never accepted */
    for (size_t n = 0; n + 1 < sizeof doc_ok - 1; n++) {
        gcs_err err = {{0}};
        gcs_snapshot *g = gcs_heapdump_import_v8_mem(doc_ok, n, "doc", NULL, &err);
        if (g)
            fail_msg("a prefix of %zu bytes was accepted", n);
        assert_true(err.msg[0] && !strchr(err.msg, '\n'));
    }
}

static void test_detect_and_cli_paths(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    assert_int_equal(gcs_heapdump_detect("tests/data/v8/tree-14.heapsnapshot.gz", &err), GCS_HEAPDUMP_V8);
    assert_string_equal(gcs_heapdump_format_name(GCS_HEAPDUMP_V8), "v8");
    /* gcs_snapshot_read imports a V8 snapshot as it does an HPROF dump */
    gcs_snapshot *g = gcs_snapshot_read("tests/data/v8/tree-14.heapsnapshot.gz", &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(g->params.source, GCS_SNAPSHOT_SOURCE_V8);
    gcs_snapshot_free(g);
    /* an HPROF dump forced through the V8 reader: refused in one line */
    g = gcs_heapdump_import("tests/data/hprof/list-10000.hprof.gz", GCS_HEAPDUMP_V8, NULL, &err);
    assert_null(g);
    assert_non_null(strstr(err.msg, "offset 0: expected '{'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_list),
        cmocka_unit_test(test_fixture_tree),
        cmocka_unit_test(test_fixture_random),
        cmocka_unit_test(test_document),
        cmocka_unit_test(test_element_copies),
        cmocka_unit_test(test_element_shared_store),
        cmocka_unit_test(test_bad_documents),
        cmocka_unit_test(test_detect_and_cli_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
