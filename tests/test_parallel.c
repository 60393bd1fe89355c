/* test_parallel.c -- the passes that run on OpenMP's threads give what one
 * thread gives: the snapshot reader (version 2: sections read in slices,
 * their CRCs joined, the objects' rows converted, edge_start's prefix sum;
 * version 3: blocks checked in place, the lowest failing block, object or
 * field named), its validation (the first failing object or field is the
 * one named, whatever the threads) and the T-infinity walk (model/span_*.c:
 * the forest's depth-first walk over subtrees, the BFS's bitmap levels), on
 * heaps large enough to take the parallel paths (SNAP_PAR_MIN_ITEMS
 * objects, SNAP_PAR_MIN_BYTES a section, SPAN_PAR_MIN a level).  Without
 * OpenMP (OPENMP=0, the TSan build) both runs take the one-thread path and
 * the checks of results and messages still hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "gcscale/inspect.h"
#include "../model/inspect_internal.h"
#include "gcscale/snapshot.h"
#include "../formats/snapshot_internal.h"

static void threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A graph of n objects with fields from nptrs(i): children of a binary tree
 * in id order (tree), or random targets (else), one root. */
static gcs_snapshot *graph(uint64_t n, int tree, uint64_t seed)
{
    uint64_t m = 0, s = seed;
    uint32_t *np = malloc(n * sizeof *np);
    assert_non_null(np);
    for (uint64_t i = 0; i < n; i++) {
        np[i] = tree ? 2 : (uint32_t)(rnd(&s) % 6);
        m += np[i];
    }
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(n, m, 1, &err);
    assert_non_null(g);
    uint64_t off = 8, e = 0;
    for (uint64_t i = 0; i < n; i++) {
        g->nptrs[i] = np[i];
        g->words[i] = np[i] + 1 + (uint32_t)(i % 3);
        g->addr[i] = off;
        off += 8 * (uint64_t)g->words[i] + 8;
        g->edge_start[i] = e;
        for (uint32_t f = 0; f < np[i]; f++, e++) {
            uint64_t c = 2 * i + 1 + f;
            g->edges[e] = tree ? (c < n ? (uint32_t)c : GCS_SNAPSHOT_NULL)
                               : (rnd(&s) % 5 == 0 ? GCS_SNAPSHOT_NULL : (uint32_t)(rnd(&s) % n));
        }
        g->node[i] = 0;
    }
    g->edge_start[n] = e;
    g->roots[0] = 0;
    g->params.heap_limit = (off + 65535) & ~65535ull;
    free(np);
    return g;
}

static char dir[64];

static void path_of(char *buf, size_t len, const char *name)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gcs_parallel_test.XXXXXX");
        assert_non_null(mkdtemp(dir));
    }
    snprintf(buf, len, "%s/%s", dir, name);
}

static void assert_same(const gcs_snapshot *a, const gcs_snapshot *b)
{
    uint64_t n = a->nobjects;
    assert_int_equal(n, b->nobjects);
    assert_int_equal(a->nfields, b->nfields);
    assert_memory_equal(a->addr, b->addr, n * sizeof *a->addr);
    assert_memory_equal(a->words, b->words, n * sizeof *a->words);
    assert_memory_equal(a->nptrs, b->nptrs, n * sizeof *a->nptrs);
    assert_memory_equal(a->edge_start, b->edge_start, (n + 1) * sizeof *a->edge_start);
    assert_memory_equal(a->edges, b->edges, a->nfields * sizeof *a->edges);
    assert_memory_equal(a->node, b->node, n * sizeof *a->node);
}

/* 700 000 objects: 11 MB of object rows, 1.75 M fields (7 MB) -- the objects
 * section is read in slices, the edges' below SNAP_PAR_MIN_BYTES is not. */
static void test_read_same(void **state)
{
    (void)state;
    gcs_snapshot *g = graph(700000, 0, 7);
    char path[128];
    path_of(path, sizeof path, "random.snap");
    gcs_err err;
    assert_int_equal(_gcs_snapshot_write_version(g, path, 2, &err), 0);
    threads(1);
    gcs_snapshot *one = gcs_snapshot_read(path, &err);
    threads(2);
    gcs_snapshot *two = gcs_snapshot_read(path, &err);
    assert_non_null(one);
    assert_non_null(two);
    assert_same(g, one);
    assert_same(g, two);
    gcs_snapshot_free(one);
    gcs_snapshot_free(two);

    /* a damaged byte in the second half of the objects section (the second
     * thread's slice) is a checksum mismatch there, on both paths */
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 9000000, SEEK_SET), 0);
    int c = fgetc(fp);
    assert_int_equal(fseek(fp, 9000000, SEEK_SET), 0);
    fputc(c ^ 0x10, fp);
    fclose(fp);
    for (int t = 1; t <= 2; t++) {
        threads(t);
        assert_null(gcs_snapshot_read(path, &err));
        assert_non_null(strstr(err.msg, "checksum mismatch in section 'objects'"));
    }
    unlink(path);
    gcs_snapshot_free(g);
}

/* ---- version 3 ---- */

static uint64_t ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static size_t sec3_off(const uint8_t *b, int sec)
{
    size_t off = SNAP_HEADER_BYTES_V3;
    for (int i = 0; i < sec; i++) {
        uint64_t pl = ld64(b + off + 8);
        off += 16 + snap_pad8(pl) + snap3_tail(snap3_nblocks(pl, i));
    }
    return off;
}

/* The checksums of section sec's blocks and frame, recomputed. */
static void fix_section3(uint8_t *b, int sec)
{
    size_t off = sec3_off(b, sec);
    uint64_t pl = ld64(b + off + 8), nb = snap3_nblocks(pl, sec), bb = snap3_block_bytes(sec);
    uint8_t *data = b + off + 16, *table = data + snap_pad8(pl);
    for (uint64_t k = 0; k < nb; k++) {
        uint64_t lo = k * bb, hi = lo + bb < snap_pad8(pl) ? lo + bb : snap_pad8(pl);
        st32(table + 4 * k, _gcs_crc32c(0, data + lo, hi - lo));
    }
    st32(table + 4 * nb, _gcs_crc32c(_gcs_crc32c(0, b + off, 16), table, 4 * nb));
}

static void expect_read_error(const uint8_t *b, size_t len, const char *want)
{
    for (int t = 1; t <= 2; t++) {
        threads(t);
        gcs_err err;
        gcs_snapshot *g = gcs_snapshot_read_mem(b, len, "v3", &err);
        if (g)
            fail_msg("%d threads: accepted (wanted \"%s\")", t, want);
        if (!strstr(err.msg, want))
            fail_msg("%d threads: wanted \"%s\", got \"%s\"", t, want, err.msg);
    }
}

/* Version 3 in place: the same arrays on one thread and two, from a file and
 * from memory; of two damaged blocks, two bad objects or two dangling fields
 * (one in each thread's half) the first is named. */
static void test_read3_same(void **state)
{
    (void)state;
    gcs_snapshot *g = graph(700000, 0, 9);
    char path[128];
    path_of(path, sizeof path, "random3.snap");
    gcs_err err;
    assert_int_equal(gcs_snapshot_write(g, path, &err), 0);
    for (int t = 1; t <= 2; t++) {
        threads(t);
        gcs_snapshot *h = gcs_snapshot_read(path, &err);
        if (!h)
            fail_msg("read: %s", err.msg);
        assert_same(g, h);
        gcs_snapshot_free(h);
    }
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    size_t len = (size_t)ftell(fp);
    rewind(fp);
    uint8_t *b = malloc(len);
    assert_int_equal(fread(b, 1, len, fp), len);
    fclose(fp);
    size_t words = sec3_off(b, SNAP3_WORDS) + 16;
    b[words + 4 * 650000] ^= 1; /* block 39 */
    b[words + 4 * 100000] ^= 1; /* block 6 */
    expect_read_error(b, len, "checksum mismatch in section 'object sizes' (block 6 of 43");
    b[words + 4 * 100000] ^= 1;
    expect_read_error(b, len, "checksum mismatch in section 'object sizes' (block 39 of 43");
    b[words + 4 * 650000] ^= 1;
    /* two objects of size 0 */
    st32(b + words + 4 * 600000, 0);
    st32(b + words + 4 * 200000, 0);
    fix_section3(b, SNAP3_WORDS);
    expect_read_error(b, len, "object 200000: size 0");
    st32(b + words + 4 * 200000, g->words[200000]);
    fix_section3(b, SNAP3_WORDS);
    expect_read_error(b, len, "object 600000: size 0");
    st32(b + words + 4 * 600000, g->words[600000]);
    fix_section3(b, SNAP3_WORDS);
    /* two dangling fields */
    size_t edges = sec3_off(b, SNAP3_EDGES) + 16;
    uint64_t late = g->nfields - 10, early = g->nfields / 4;
    st32(b + edges + 4 * late, (uint32_t)g->nobjects + 5);
    st32(b + edges + 4 * early, (uint32_t)g->nobjects + 7);
    fix_section3(b, SNAP3_EDGES);
    char want[64];
    snprintf(want, sizeof want, "dangling id %u ", (uint32_t)g->nobjects + 7);
    expect_read_error(b, len, want);
    free(b);
    unlink(path);
    gcs_snapshot_free(g);
}

/* Edges past SNAP_PAR_MIN_BYTES, read straight into the array by slices,
 * from a file and from memory. */
static void test_read_edges_same(void **state)
{
    (void)state;
    gcs_snapshot *g = graph(1 << 20, 1, 3); /* 2 M fields: 8 MiB of edges */
    char path[128];
    path_of(path, sizeof path, "tree.snap");
    gcs_err err;
    assert_int_equal(gcs_snapshot_write(g, path, &err), 0);
    threads(2);
    gcs_snapshot *two = gcs_snapshot_read(path, &err);
    assert_non_null(two);
    assert_same(g, two);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    rewind(fp);
    char *buf = malloc((size_t)len);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, fp), (size_t)len);
    fclose(fp);
    gcs_snapshot *mem = gcs_snapshot_read_mem(buf, (size_t)len, "tree", &err);
    assert_non_null(mem);
    assert_same(g, mem);
    /* one flipped bit near the end of the edges section */
    buf[len - 200] ^= 1;
    assert_null(gcs_snapshot_read_mem(buf, (size_t)len, "tree", &err));
    assert_non_null(strstr(err.msg, "checksum mismatch"));
    free(buf);
    gcs_snapshot_free(mem);
    gcs_snapshot_free(two);
    unlink(path);
    gcs_snapshot_free(g);
}

/* The first bad object or field is the one named, on one thread or two. */
static void test_validate_first_error(void **state)
{
    (void)state;
    gcs_snapshot *g = graph(600000, 0, 11);
    gcs_err err;
    for (int t = 1; t <= 2; t++) {
        threads(t);
        assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    }
    uint32_t keep = g->words[450000];
    g->words[450000] = 0; /* the second thread's half */
    for (int t = 1; t <= 2; t++) {
        threads(t);
        assert_int_equal(gcs_snapshot_validate(g, &err), -1);
        assert_string_equal(err.msg, "object 450000: size 0 (at least one 8-byte word)");
    }
    g->words[120000] = 0; /* now the first thread's half holds the first one */
    for (int t = 1; t <= 2; t++) {
        threads(t);
        assert_int_equal(gcs_snapshot_validate(g, &err), -1);
        assert_string_equal(err.msg, "object 120000: size 0 (at least one 8-byte word)");
    }
    g->words[120000] = g->words[450000] = keep;
    g->words[120000] = g->nptrs[120000] + 1 + 120000 % 3;
    g->words[450000] = g->nptrs[450000] + 1 + 450000 % 3;
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    uint64_t late = g->nfields - 10, early = g->nfields / 3;
    g->edges[late] = (uint32_t)g->nobjects + 5;
    g->edges[early] = (uint32_t)g->nobjects + 7;
    char want[160];
    for (int t = 1; t <= 2; t++) {
        threads(t);
        assert_int_equal(gcs_snapshot_validate(g, &err), -1);
        assert_non_null(strstr(err.msg, "dangling id"));
        snprintf(want, sizeof want, "dangling id %u ", (uint32_t)g->nobjects + 7);
        assert_non_null(strstr(err.msg, want));
    }
    gcs_snapshot_free(g);
}

static gcs_profile *profile(void)
{
    gcs_profile *p = gcs_profile_new(1);
    assert_non_null(p);
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 10;
    p->gc_cost_pointer_ns = 1;
    return p;
}

/* Tinf, its method, reachable and depth on one thread and on two: a tree
 * (a forest: the depth-first walk over subtrees) and a random graph of
 * 1.5 M objects (revisits: the BFS, whose middle levels pass 2^18 objects
 * and go to the threads, then the buckets). */
/* Inspection of g on one thread and on two, with the sweeps and then with
 * the BFS (its wide levels on OpenMP's threads) and Dijkstra in their place
 * (r[0..3]): T-infinity, reachable and depth the same in all four; the
 * method of each is checked against what the graph is. */
static void span_four_ways(const gcs_snapshot *g, const gcs_profile *p, int exact, int forest,
                           gcs_inspect_result r[4])
{
    for (int k = 0; k < 4; k++) {
        threads(k % 2 + 1);
        _gcs_span_no_sweeps = k >= 2;
        gcs_inspect_opts o;
        gcs_inspect_opts_init(&o);
        o.exact = exact;
        gcs_err err;
        if (gcs_inspect_heap(g, p, &o, &r[k], &err) < 0)
            fail_msg("inspect: %s", err.msg);
        _gcs_span_no_sweeps = 0;
        assert_true(r[0].heap.tinf_ns == r[k].heap.tinf_ns);
        assert_int_equal(r[0].reachable, r[k].reachable);
        assert_int_equal(r[0].depth, r[k].depth);
        assert_string_equal(r[k].span_method, forest ? "tree" : k < 2 ? "sweeps" : "dijkstra");
    }
}

static void test_span_same(void **state)
{
    (void)state;
    gcs_profile *p = profile();
    for (int tree = 1; tree >= 0; tree--) {
        gcs_snapshot *g = graph(tree ? (1u << 19) - 1 : 1500000, tree, 5);
        gcs_inspect_result r[4];
        span_four_ways(g, p, 1, tree, r);
        if (tree) {
            assert_int_equal(r[0].reachable, g->nobjects);
            assert_int_equal(r[0].depth, 19);
        }
        gcs_snapshot_free(g);
    }
    /* A tree whose one shared object is found late, or by two threads: a
     * leaf of the last internal node's subtree points back to object 1, or
     * a leaf of the left half points to a leaf of the right half.  The
     * forest's walk gives up, the sweeps (or the BFS and the buckets) take
     * over: the same answer on one thread and two, and not the tree's. */
    for (int shared = 0; shared < 2; shared++) {
        uint64_t n = (1u << 19) - 1;
        gcs_snapshot *g = graph(n, 1, 5);
        uint64_t a = n / 2 - 1;                 /* the last internal node: its second field */
        uint64_t left = (1u << 18) - 1 + 5;     /* leaves: ids n / 2 .. n - 1; left half first */
        uint64_t right = n - 3;
        if (shared == 0) {
            g->edges[g->edge_start[a] + 1] = 1;
        } else {
            /* a leaf has two NULL fields; the left leaf's first one now points right */
            g->edges[g->edge_start[left]] = (uint32_t)right;
        }
        gcs_inspect_result r[4];
        span_four_ways(g, p, 0, 0, r);
        assert_int_equal(r[0].reachable, shared ? n : n - 1); /* the back edge replaced leaf n - 1's */
        assert_int_equal(r[0].depth, 19);
        gcs_snapshot_free(g);
    }
    /* A wide array (a fan: its fields go to the threads in chunks), whose
     * leaves are a forest; then one leaf named twice, in the array's first
     * and last chunk. */
    for (int dup = 0; dup < 2; dup++) {
        uint64_t n = 300001;
        gcs_err err;
        gcs_snapshot *g = gcs_snapshot_new(n, n - 1, 1, &err);
        assert_non_null(g);
        uint64_t off = 8;
        for (uint64_t i = 0; i < n; i++) {
            g->nptrs[i] = i == 0 ? (uint32_t)(n - 1) : 0;
            g->words[i] = i == 0 ? (uint32_t)(n - 1) : 2;
            g->addr[i] = off;
            off += 8 * (uint64_t)g->words[i] + 8;
            g->edge_start[i] = i == 0 ? 0 : n - 1;
            g->node[i] = 0;
        }
        g->edge_start[n] = n - 1;
        for (uint64_t e = 0; e < n - 1; e++)
            g->edges[e] = (uint32_t)(e + 1);
        if (dup)
            g->edges[n - 2] = 5;
        g->roots[0] = 0;
        g->params.heap_limit = (off + 65535) & ~65535ull;
        assert_int_equal(gcs_snapshot_validate(g, &err), 0);
        gcs_inspect_result r[4];
        span_four_ways(g, p, 0, !dup, r);
        assert_int_equal(r[0].reachable, dup ? n - 1 : n);
        assert_int_equal(r[0].depth, 2);
        gcs_snapshot_free(g);
    }
    gcs_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_same),
        cmocka_unit_test(test_read_edges_same),
        cmocka_unit_test(test_read3_same),
        cmocka_unit_test(test_validate_first_error),
        cmocka_unit_test(test_span_same),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (dir[0])
        rmdir(dir);
    return rc;
}
