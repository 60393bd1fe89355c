/* test_parallel.c -- the passes that run on OpenMP's threads give what one
 * thread gives: the snapshot reader (sections read in slices, their CRCs
 * joined; the objects' rows converted; edge_start's prefix sum), its
 * validation (the first failing object or field is the one named, whatever
 * the threads) and the T-infinity walk's levels (model/span.c), on heaps
 * large enough to take the parallel paths (SNAP_PAR_MIN_ITEMS objects,
 * SNAP_PAR_MIN_BYTES a section, SPAN_PAR_MIN a level).  Without OpenMP
 * (OPENMP=0, the TSan build) both runs take the one-thread path and the
 * checks of results and messages still hold. */
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
#include "gcscale/snapshot.h"

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
    assert_int_equal(gcs_snapshot_write(g, path, &err), 0);
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
 * (a forest: levels of up to 2^18 objects) and a random graph (revisits:
 * the buckets after the levels). */
static void test_span_same(void **state)
{
    (void)state;
    gcs_profile *p = profile();
    for (int tree = 1; tree >= 0; tree--) {
        gcs_snapshot *g = graph(tree ? (1u << 19) - 1 : 400000, tree, 5);
        gcs_inspect_result r[2];
        for (int t = 1; t <= 2; t++) {
            threads(t);
            gcs_inspect_opts o;
            gcs_inspect_opts_init(&o);
            o.exact = 1;
            gcs_err err;
            if (gcs_inspect_heap(g, p, &o, &r[t - 1], &err) < 0)
                fail_msg("inspect: %s", err.msg);
        }
        assert_true(r[0].heap.tinf_ns == r[1].heap.tinf_ns);
        assert_string_equal(r[0].span_method, r[1].span_method);
        assert_string_equal(r[0].span_method, tree ? "tree" : "dijkstra");
        assert_int_equal(r[0].reachable, r[1].reachable);
        assert_int_equal(r[0].depth, r[1].depth);
        if (tree) {
            assert_int_equal(r[0].reachable, g->nobjects);
            assert_int_equal(r[0].depth, 19);
        }
        gcs_snapshot_free(g);
    }
    gcs_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_same),
        cmocka_unit_test(test_read_edges_same),
        cmocka_unit_test(test_validate_first_error),
        cmocka_unit_test(test_span_same),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (dir[0])
        rmdir(dir);
    return rc;
}
