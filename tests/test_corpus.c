/* test_corpus.c -- the corpus's pieces below the CLI: zstd-compressed
 * snapshots read back exactly (and a truncated one refused in one line),
 * whatever plain size a file states,
 * the graph checksum, a shape rebuilt twice to the same graph, and the
 * floor check (passes at the floor, fails above it, refuses a floor naming
 * what the report lacks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../formats/zstd_internal.h"
#include "gcscale/corpus.h"
#include "gcscale/shapes.h"
#include "gcscale/snapshot.h"

static char tmpdir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/gcs_corpus_test.XXXXXX");
        assert_non_null(mkdtemp(tmpdir));
    }
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* A chain of n objects with a second field pointing back to object 0. */
static gcs_snapshot *chain(uint64_t n)
{
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(n, 2 * n, 1, &err);
    assert_non_null(g);
    gcs_snapshot_params_default(&g->params);
    uint64_t off = 8;
    for (uint64_t i = 0; i < n; i++) {
        g->addr[i] = off;
        g->words[i] = 3;
        g->nptrs[i] = 2;
        g->node[i] = 0;
        g->edge_start[i + 1] = g->edge_start[i] + 2;
        g->edges[2 * i] = i + 1 < n ? (uint32_t)(i + 1) : GCS_SNAPSHOT_NULL;
        g->edges[2 * i + 1] = 0;
        off += 32;
    }
    g->roots[0] = 0;
    g->params.heap_limit = (off + 65535) & ~65535ull;
    return g;
}

static void test_zstd_snapshot_round_trip(void **state)
{
    (void)state;
    char plain[300], packed[300];
    tmp_path(plain, sizeof plain, "chain.snap");
    tmp_path(packed, sizeof packed, "chain.snap.zst");
    gcs_err err;
    gcs_snapshot *g = chain(20000);
    assert_int_equal(gcs_snapshot_write(g, plain, &err), 0);
    assert_int_equal(_gcs_zstd_compress_file(plain, packed, 3, &err), 0);
    gcs_snapshot *a = gcs_snapshot_read(plain, &err), *b = gcs_snapshot_read(packed, &err);
    assert_non_null(a);
    assert_non_null(b);
    char sa[16], sb[16], sg[16];
    gcs_corpus_graph_checksum(g, sg);
    gcs_corpus_graph_checksum(a, sa);
    gcs_corpus_graph_checksum(b, sb);
    assert_string_equal(sa, sg);
    assert_string_equal(sb, sg);
    assert_int_equal(b->nobjects, 20000);
    assert_memory_equal(b->edges, g->edges, g->nfields * sizeof *g->edges);
    /* a different graph, a different checksum */
    g->edges[5] = GCS_SNAPSHOT_NULL;
    gcs_corpus_graph_checksum(g, sg);
    assert_string_not_equal(sa, sg);
    gcs_snapshot_free(g);
    gcs_snapshot_free(a);
    gcs_snapshot_free(b);
}

static void test_zstd_truncated(void **state)
{
    (void)state;
    char plain[300], packed[300], cut[300];
    tmp_path(plain, sizeof plain, "c2.snap");
    tmp_path(packed, sizeof packed, "c2.snap.zst");
    tmp_path(cut, sizeof cut, "c2-cut.snap.zst");
    gcs_err err;
    gcs_snapshot *g = chain(5000);
    assert_int_equal(gcs_snapshot_write(g, plain, &err), 0);
    gcs_snapshot_free(g);
    assert_int_equal(_gcs_zstd_compress_file(plain, packed, 3, &err), 0);
    FILE *in = fopen(packed, "rb"), *out = fopen(cut, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, in);
    assert_true(n > 40);
    fwrite(buf, 1, n / 2, out);
    fclose(in);
    fclose(out);
    assert_null(gcs_snapshot_read(cut, &err));
    assert_non_null(strstr(err.msg, "cannot decompress"));
    assert_null(strchr(err.msg, '\n'));
}

/* The plain size the loader is told, for test_zstd_sizes: a fixed value,
 * right or wrong. */
static uint64_t told_size;
static uint64_t tell_size(const void *head, size_t n)
{
    (void)head;
    (void)n;
    return told_size;
}

/* Writes n bytes to a file of the test directory. */
static void write_file(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(p, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

/* A frame without a stated size, as the writer made them before 2026-11-28. */
static size_t unsized_frame(const void *src, size_t n, void *dst, size_t cap)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    assert_non_null(cc);
    ZSTD_inBuffer ib = {src, n, 0}, none = {NULL, 0, 0};
    ZSTD_outBuffer ob = {dst, cap, 0};
    /* fed before the end is known, as a stream is: no size in the header */
    while (ib.pos < ib.size)
        assert_false(ZSTD_isError(ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_continue)));
    assert_int_equal(ZSTD_compressStream2(cc, &ob, &none, ZSTD_e_end), 0);
    ZSTD_freeCCtx(cc);
    return ob.pos;
}

/* Whatever size the file states or the caller's hint reads, right or wrong,
 * the loader returns exactly the plain bytes: a frame with its size, one
 * without, two frames (the first states only its own size), each with no
 * hint, the right one, one too small and one too large. */
static void test_zstd_sizes(void **state)
{
    (void)state;
    enum { N = 300000 };
    unsigned char *plain = malloc(N), *packed = malloc(2 * N + 4096);
    assert_non_null(plain);
    assert_non_null(packed);
    uint32_t x = 12345;
    for (size_t i = 0; i < N; i++) { /* compressible, not constant */
        x = x * 1103515245u + 12345u;
        plain[i] = (unsigned char)(i % 97 < 60 ? i % 7 : x >> 24);
    }
    size_t cap = 2 * N + 4096, half = N / 2;
    size_t sized = ZSTD_compress(packed, cap, plain, N, 3);
    assert_false(ZSTD_isError(sized));
    assert_int_equal(ZSTD_getFrameContentSize(packed, sized), N);
    char path[300];
    tmp_path(path, sizeof path, "sizes.zst");
    for (int kind = 0; kind < 3; kind++) {
        size_t n;
        if (kind == 0) {
            n = ZSTD_compress(packed, cap, plain, N, 3);
        } else if (kind == 1) {
            n = unsized_frame(plain, N, packed, cap);
            assert_int_equal(ZSTD_getFrameContentSize(packed, n), ZSTD_CONTENTSIZE_UNKNOWN);
        } else {
            n = ZSTD_compress(packed, cap, plain, half, 3);
            n += unsized_frame(plain + half, N - half, packed + n, cap - n);
        }
        write_file(path, packed, n);
        const uint64_t told[] = {0, N, N / 2, 2 * (uint64_t)N};
        for (int t = 0; t < 4; t++) {
            told_size = told[t];
            FILE *fp = fopen(path, "rb");
            assert_non_null(fp);
            void *data = NULL;
            size_t len = 0;
            gcs_err err = {0};
            assert_int_equal(_gcs_zstd_load_fd(fileno(fp), path, t ? tell_size : NULL, &data, &len, &err), 1);
            fclose(fp);
            assert_int_equal(len, N);
            assert_memory_equal(data, plain, N);
            free(data);
        }
    }
    /* our writer states the size */
    char src[300], dst[300];
    tmp_path(src, sizeof src, "sizes.bin");
    tmp_path(dst, sizeof dst, "sizes.bin.zst");
    write_file(src, plain, N);
    gcs_err err;
    assert_int_equal(_gcs_zstd_compress_file(src, dst, 3, &err), 0);
    FILE *fp = fopen(dst, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(packed, 1, 18, fp), 18);
    fclose(fp);
    assert_int_equal(ZSTD_getFrameContentSize(packed, 18), N);
    free(plain);
    free(packed);
}

static void test_shape_rebuilt_alike(void **state)
{
    (void)state;
    char p1[300], p2[300], s1[16], s2[16];
    tmp_path(p1, sizeof p1, "r1.snap");
    tmp_path(p2, sizeof p2, "r2.snap");
    gcs_shape_params sp = {.kind = GCS_SHAPE_RANDOM, .objects = 5000, .seed = 3};
    gcs_err err;
    assert_int_equal(gcs_shape_params_check(&sp, &err), 0);
    assert_int_equal(gcs_corpus_shape_checksum(&sp, p1, s1, &err), 0);
    assert_int_equal(gcs_corpus_shape_checksum(&sp, p2, s2, &err), 0);
    assert_string_equal(s1, s2);
    sp.seed = 4;
    assert_int_equal(gcs_corpus_shape_checksum(&sp, p2, s2, &err), 0);
    assert_string_not_equal(s1, s2);
}

static json_t *report(double mae2, double heap_max, double p1)
{
    return json_pack("{s:s, s:s, s:[{s:s, s:f, s:[{s:i, s:f}], s:[{s:s, s:f, s:f}]}]}", "predictor", "fast", "span",
                     "paper", "entries", "name", "m", "mae_all_pct", mae2, "mae_pct", "threads", 2, "mae_pct", mae2,
                     "heaps", "name", "tree", "max_abs_error_pct", heap_max, "p1_time_error_pct", p1);
}

static void test_floor(void **state)
{
    (void)state;
    gcs_err err;
    json_t *r = report(10, 12, -50), *floor = gcs_corpus_floor_from_report(r, 0.01);
    assert_int_equal(gcs_corpus_floor_check(r, floor, NULL, &err), 0);
    json_t *better = report(9, 11, 40);
    assert_int_equal(gcs_corpus_floor_check(better, floor, NULL, &err), 0);
    json_t *within = report(10.005, 12, -50.005);
    assert_int_equal(gcs_corpus_floor_check(within, floor, NULL, &err), 0);
    json_t *worse_p1 = report(10, 12, 51);
    assert_int_equal(gcs_corpus_floor_check(worse_p1, floor, NULL, &err), 1);
    json_t *worse_mae = report(10.02, 12, -50);
    assert_int_equal(gcs_corpus_floor_check(worse_mae, floor, NULL, &err), 1);
    json_object_set_new(json_object_get(floor, "entries"), "other", json_object());
    assert_int_equal(gcs_corpus_floor_check(r, floor, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "other"));
    json_decref(r);
    json_decref(better);
    json_decref(within);
    json_decref(worse_p1);
    json_decref(worse_mae);
    json_decref(floor);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zstd_snapshot_round_trip),
        cmocka_unit_test(test_zstd_truncated),
        cmocka_unit_test(test_zstd_sizes),
        cmocka_unit_test(test_shape_rebuilt_alike),
        cmocka_unit_test(test_floor),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (tmpdir[0] && system(cmd) != 0)
        rc = 1;
    return rc;
}
