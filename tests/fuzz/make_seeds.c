/* make_seeds.c -- writes small valid heap snapshots into DIR, the seed
 * corpus of `make fuzz`: empty, a cycle with NULL fields, a self loop, two
 * memory nodes and an unknown one, a typed graph (format version 2's class
 * table), a chain, a binary tree, random graphs; each in format version 3
 * (read in place) and, as NAME.v2, in version 2 (read by copying), and the
 * version 3 file zstd-compressed as NAME.zst (the frame states its size, as
 * the writer's do) and NAME.unsized.zst (it does not, as before 2026-11-28);
 * into HPROF_DIR the HPROF seeds, plain and gzip (one member, HotSpot's
 * members, and the "GZ" inputs fuzz_hprof compresses itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gcscale/snapshot.h"
#include "../../formats/snapshot_internal.h"
#include "../../formats/zstd_internal.h"
#include "hprof_gen.h"
#include "v8_gen.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* dst: src compressed into a frame fed as a stream, whose header cannot
 * state the plain size. */
static void compress_unsized(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    static unsigned char plain[1 << 20], packed[1 << 21];
    size_t n = in ? fread(plain, 1, sizeof plain, in) : 0;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_inBuffer ib = {plain, n, 0}, none = {NULL, 0, 0};
    ZSTD_outBuffer ob = {packed, sizeof packed, 0};
    int ok = in && out && cc && feof(in);
    while (ok && ib.pos < ib.size)
        ok = !ZSTD_isError(ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_continue));
    ok = ok && ZSTD_compressStream2(cc, &ob, &none, ZSTD_e_end) == 0;
    ok = ok && fwrite(packed, 1, ob.pos, out) == ob.pos;
    ZSTD_freeCCtx(cc);
    if (in)
        fclose(in);
    if (!out || fclose(out) != 0 || !ok) {
        fprintf(stderr, "make_seeds: cannot compress %s into %s\n", src, dst);
        exit(1);
    }
}

static void finish(gcs_snapshot *g, const char *dir, const char *name)
{
    uint64_t off = 8;
    g->edge_start[0] = 0;
    for (uint64_t i = 0; i < g->nobjects; i++) {
        g->addr[i] = off;
        off += 8 * (uint64_t)g->words[i] + 8 + (i % 3 == 0 ? 16 : 0);
        g->edge_start[i + 1] = g->edge_start[i] + g->nptrs[i];
    }
    g->params.heap_limit = (off + 65535) & ~65535ull;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gcs_err err;
    char path2[4100];
    snprintf(path2, sizeof path2, "%s.v2", path);
    char zpath[4100], upath[4120];
    snprintf(zpath, sizeof zpath, "%s.zst", path);
    snprintf(upath, sizeof upath, "%s.unsized.zst", path);
    if (gcs_snapshot_write(g, path, &err) != 0 || _gcs_snapshot_write_version(g, path2, 2, &err) != 0 ||
        _gcs_zstd_compress_file(path, zpath, 3, &err) != 0) {
        fprintf(stderr, "make_seeds: %s\n", err.msg);
        exit(1);
    }
    compress_unsized(path, upath);
    gcs_snapshot_free(g);
}

static gcs_snapshot *graph(uint64_t n, uint64_t m, uint64_t r)
{
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(n, m, r, &err);
    if (!g) {
        fprintf(stderr, "make_seeds: %s\n", err.msg);
        exit(1);
    }
    return g;
}

static void write_seed(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(p, 1, n, fp) != n || fclose(fp) != 0) {
        fprintf(stderr, "make_seeds: cannot write %s\n", path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: make_seeds DIR [HPROF_DIR [V8_DIR]]\n");
        return 2;
    }
    const char *dir = argv[1];
    for (int k = 0; argc >= 3 && k < 3; k++) {
        /* HPROF seeds: 1, 12 and 40 nodes; V8 seeds: a list, a tree, a random graph */
        static const uint64_t nh[] = {1, 12, 40}, nv[] = {1, 12, 30};
        char path[4096];
        hgen h = hprof_generate(nh[k], (uint32_t)k + 1, 200, (uint64_t)k + 3);
        snprintf(path, sizeof path, "%s/gen-%d.hprof", argv[2], k);
        write_seed(path, h.p, h.n);
        /* gzip (fuzz_hprof reads these from a file): one member (zlib's
         * stream), HotSpot's -gz members of 128 bytes named in the first
         * header (libdeflate, member by member), and "GZ" + a byte: the
         * target writes the rest as members of 1 + 8 * byte bytes */
        hgen z = hprof_gzip_members(h.p, h.n, h.n, 0, 1, 0);
        snprintf(path, sizeof path, "%s/gen-%d.hprof.gz", argv[2], k);
        write_seed(path, z.p, z.n);
        free(z.p);
        z = hprof_gzip_members(h.p, h.n, 128, 128, 1, 0);
        snprintf(path, sizeof path, "%s/gen-%d.members.hprof.gz", argv[2], k);
        write_seed(path, z.p, z.n);
        free(z.p);
        uint8_t *gz = malloc(h.n + 3);
        if (!gz)
            abort();
        memcpy(gz, "GZ", 2);
        gz[2] = (uint8_t)(8 + 20 * k);
        memcpy(gz + 3, h.p, h.n);
        snprintf(path, sizeof path, "%s/gen-%d.gz-members", argv[2], k);
        write_seed(path, gz, h.n + 3);
        free(gz);
        free(h.p);
        /* classes among the instances, dumped first (HotSpot's order) */
        h = hprof_generate_mirrors(k, nh[k] + 20, 2, 0, 256, (uint64_t)k + 3);
        snprintf(path, sizeof path, "%s/mirrors-%d.hprof", argv[2], k);
        write_seed(path, h.p, h.n);
        free(h.p);
        /* instances and object arrays side by side (array runs), in address order */
        h = hprof_generate_layout(HG_ARRAYS, nh[k] + 20, (uint32_t)k + 1, 0, 256, (uint64_t)k + 3, 0, k == 2);
        snprintf(path, sizeof path, "%s/arrays-%d.hprof", argv[2], k);
        write_seed(path, h.p, h.n);
        free(h.p);
        if (argc == 4) {
            v8gen v = v8_generate(k, nv[k], 3, (uint64_t)k + 3);
            snprintf(path, sizeof path, "%s/gen-%d.heapsnapshot", argv[3], k);
            write_seed(path, v.p, v.n);
            free(v.p);
        }
    }
    finish(graph(0, 0, 0), dir, "empty.snap");

    gcs_snapshot *g = graph(5, 6, 2); /* 0->1->2->0, 3->3 + NULL, 4 data */
    static const uint32_t np[] = {1, 1, 2, 2, 0}, w[] = {2, 1, 3, 2, 4};
    static const uint32_t e[] = {1, 2, 0, GCS_SNAPSHOT_NULL, 3, GCS_SNAPSHOT_NULL};
    static const uint16_t nd[] = {0, 0, 1, 1, GCS_SNAPSHOT_NODE_UNKNOWN};
    memcpy(g->nptrs, np, sizeof np);
    memcpy(g->words, w, sizeof w);
    memcpy(g->edges, e, sizeof e);
    memcpy(g->node, nd, sizeof nd);
    g->roots[0] = 0;
    g->roots[1] = 3;
    g->params.node_count = 2;
    g->params.numa_policy = 1;
    g->params.gc_threads = 4;
    finish(g, dir, "cycle.snap");

    /* format version 2's type sections: an imported heap's classes */
    g = graph(5, 6, 2);
    memcpy(g->nptrs, np, sizeof np);
    memcpy(g->words, w, sizeof w);
    memcpy(g->edges, e, sizeof e);
    g->roots[0] = 0;
    g->roots[1] = 4;
    static const char *const tn[] = {"java.lang.Class", "Node", "int[]"};
    static const uint32_t ty[] = {1, 1, 0, GCS_SNAPSHOT_TYPE_NONE, 2};
    gcs_err terr;
    if (gcs_snapshot_set_types(g, 3, tn, &terr) != 0) {
        fprintf(stderr, "make_seeds: %s\n", terr.msg);
        return 1;
    }
    memcpy(g->type, ty, sizeof ty);
    g->params.source = GCS_SNAPSHOT_SOURCE_HPROF;
    g->params.layout = GCS_SNAPSHOT_LAYOUT_DUMP_ORDER;
    finish(g, dir, "typed.snap");

    g = graph(20, 20, 1);
    for (uint32_t i = 0; i < 20; i++) {
        g->nptrs[i] = 1;
        g->words[i] = 2;
        g->edges[i] = i + 1 < 20 ? i + 1 : GCS_SNAPSHOT_NULL;
    }
    g->roots[0] = 0;
    finish(g, dir, "chain.snap");

    g = graph(31, 62, 1);
    for (uint32_t i = 0; i < 31; i++) {
        g->nptrs[i] = 2;
        g->words[i] = 3;
        g->edges[2 * i] = 2 * i + 1 < 31 ? 2 * i + 1 : GCS_SNAPSHOT_NULL;
        g->edges[2 * i + 1] = 2 * i + 2 < 31 ? 2 * i + 2 : GCS_SNAPSHOT_NULL;
        g->node[i] = (uint16_t)(i / 8);
    }
    g->params.node_count = 4;
    g->roots[0] = 0;
    finish(g, dir, "tree.snap");

    for (int k = 0; k < 4; k++) {
        uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1), n = 10 + rnd(&s) % 40, m = 0;
        uint32_t nps[64];
        for (uint64_t i = 0; i < n; i++)
            m += nps[i] = (uint32_t)(rnd(&s) % 4);
        g = graph(n, m, 3);
        for (uint64_t i = 0; i < n; i++) {
            g->nptrs[i] = nps[i];
            g->words[i] = nps[i] + 1 + (uint32_t)(rnd(&s) % 3);
            g->node[i] = (uint16_t)(rnd(&s) % 2);
        }
        for (uint64_t j = 0; j < m; j++)
            g->edges[j] = rnd(&s) % 5 == 0 ? GCS_SNAPSHOT_NULL : (uint32_t)(rnd(&s) % n);
        for (int r = 0; r < 3; r++)
            g->roots[r] = (uint32_t)(rnd(&s) % n);
        g->params.node_count = 2;
        g->params.mark_mode = (uint32_t)k % 3;
        char name[32];
        snprintf(name, sizeof name, "random-%d.snap", k);
        finish(g, dir, name);
    }
    return 0;
}
