/* test_hprof.c -- the HPROF importer's parallel second pass and its id map
 * (formats/hprof_pass2.c, hprof_ids.c, dumpstream.c, par.c): a dump imported on
 * several threads, cut into many small chunks, gives exactly the snapshot
 * and the report of a 1-thread import (shuffled and random-graph dumps,
 * from memory, from a plain file and from gzip -- one member or several --
 * whose second pass inflates each chunk from an access point); a dump in
 * address order (edges written in place) and the same graph shuffled
 * (through records in buckets, big ones in extents of their own) give the
 * same snapshot; ids too sparse for
 * the rank bitmap (sorted instead) give the same graph; an object dumped
 * twice is refused; instances and object arrays side by side give the graph
 * as built; of damaged records the first in the file is the one
 * reported, whatever the thread count; and a dump changed between the
 * passes is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../formats/heapdump_internal.h"
#include "fuzz/hprof_gen.h"
#include "gcscale/heapdump.h"

/* The thread sanitizer checks the importer's threads, which every
 * combination of reader options below starts alike, and runs the imports
 * 20-50 times slower: under it the matrices of chunk sizes, kept windows
 * and member blocks take one cell per row (the plain and ASan builds run
 * them whole), and the thread counts start at T_FIRST: an import on one
 * thread starts none (not even the gzip pipe, dumpstream.c), so there is
 * nothing for it to check there. */
#if defined(__SANITIZE_THREAD__)
#define TSAN_THIN 1
#else
#define TSAN_THIN 0
#endif
#define T_FIRST (TSAN_THIN ? 4 : 1)

/* Every array and count of two snapshots, and their reports, equal. */
static void assert_same(const gcs_snapshot *a, const gcs_snapshot *b, const gcs_heapdump_report *ra,
                        const gcs_heapdump_report *rb)
{
    assert_int_equal(a->nobjects, b->nobjects);
    assert_int_equal(a->nfields, b->nfields);
    assert_int_equal(a->nroots, b->nroots);
    uint64_t n = a->nobjects;
    assert_memory_equal(a->addr, b->addr, n * sizeof *a->addr);
    assert_memory_equal(a->words, b->words, n * sizeof *a->words);
    assert_memory_equal(a->nptrs, b->nptrs, n * sizeof *a->nptrs);
    assert_memory_equal(a->type, b->type, n * sizeof *a->type);
    assert_memory_equal(a->edge_start, b->edge_start, (n + 1) * sizeof *a->edge_start);
    if (a->nfields)
        assert_memory_equal(a->edges, b->edges, a->nfields * sizeof *a->edges);
    assert_memory_equal(a->roots, b->roots, a->nroots * sizeof *a->roots);
    assert_memory_equal(&a->params, &b->params, sizeof a->params);
    assert_int_equal(a->ntypes, b->ntypes);
    for (uint32_t t = 0; t < a->ntypes; t++)
        assert_string_equal(a->type_names[t], b->type_names[t]);
    if (ra && rb)
        assert_memory_equal(ra, rb, sizeof *ra);
}

/* Imports from memory (path NULL) or a file with the given threads and
 * chunk size (0: the defaults); fails the test on an error. */
static gcs_snapshot *import_with(const hgen *d, const char *path, int threads, size_t chunk, gcs_heapdump_report *rep)
{
    _gcs_heapdump_set_threads(threads);
    _gcs_hprof_set_chunk_bytes(chunk);
    gcs_err err = {{0}};
    gcs_snapshot *g = path ? gcs_heapdump_import(path, GCS_HEAPDUMP_HPROF, rep, &err)
                           : gcs_heapdump_import_hprof_mem(d->p, d->n, "gen", rep, &err);
    _gcs_heapdump_set_threads(0);
    _gcs_hprof_set_chunk_bytes(0);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    return g;
}

/* 1 thread with the default chunks against 4 threads on chunks of chunk
 * bytes, and 1 thread on those. */
static void check_parallel(const hgen *d, const char *path, size_t chunk)
{
    gcs_heapdump_report r1, r4, r1c;
    gcs_snapshot *g1 = import_with(d, path, 1, 0, &r1);
    gcs_snapshot *g4 = import_with(d, path, 4, chunk, &r4);
    gcs_snapshot *g1c = import_with(d, path, 1, chunk, &r1c);
    assert_same(g1, g4, &r1, &r4);
    assert_same(g1, g1c, &r1, &r1c);
    gcs_snapshot_free(g1);
    gcs_snapshot_free(g4);
    gcs_snapshot_free(g1c);
}

static void test_parallel_shuffled(void **state)
{
    (void)state;
    for (int shape = HG_LIST; shape <= HG_RANDOM; shape++) {
        hgen d = hprof_generate_shape(shape, 30000, 4, 1, 64 << 10, 0x1234 + (uint64_t)shape);
        check_parallel(&d, NULL, 4096);
        check_parallel(&d, NULL, 100); /* a chunk per record or two */
        free(d.p);
    }
}

static void test_parallel_random(void **state)
{
    (void)state;
    /* the random graph in address order (edges in place), and the fuzz
     * seed's graph: arrays, primitive arrays, statics, several segments */
    hgen d = hprof_generate_shape(HG_RANDOM, 30000, 6, 0, 1 << 20, 99);
    check_parallel(&d, NULL, 4096);
    free(d.p);
    d = hprof_generate(20000, 5, 50000, 7);
    check_parallel(&d, NULL, 4096);
    free(d.p);
}

static void write_file(const char *path, const hgen *d, int gz, int members)
{
    if (!gz) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(d->p, 1, d->n, f), d->n);
        assert_int_equal(fclose(f), 0);
        return;
    }
    /* members gzip members back to back, as `jcmd GC.heap_dump -gz` writes */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int k = 0; k < members; k++) {
        size_t lo = d->n * (size_t)k / (size_t)members, hi = d->n * (size_t)(k + 1) / (size_t)members;
        char part[256];
        snprintf(part, sizeof part, "%s.part", path);
        gzFile z = gzopen(part, "wb1");
        assert_non_null(z);
        assert_int_equal(gzwrite(z, d->p + lo, (unsigned)(hi - lo)), (int)(hi - lo));
        assert_int_equal(gzclose(z), Z_OK);
        FILE *p = fopen(part, "rb");
        char buf[65536];
        size_t k2;
        while ((k2 = fread(buf, 1, sizeof buf, p)) > 0)
            assert_int_equal(fwrite(buf, 1, k2, f), k2);
        fclose(p);
        unlink(part);
    }
    assert_int_equal(fclose(f), 0);
}

static void test_parallel_files(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-hprof-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hgen d = hprof_generate_shape(HG_RANDOM, 40000, 4, 1, 256 << 10, 5);
    gcs_heapdump_report rm, rf;
    gcs_snapshot *gm = import_with(&d, NULL, 1, 0, &rm);
    for (int variant = 0; variant < 3; variant++) {
        write_file(path, &d, variant > 0, variant == 2 ? 7 : 1);
        check_parallel(&d, path, 8192);
        gcs_snapshot *gf = import_with(&d, path, 2, 8192, &rf);
        rf.compressed = 0; /* the one field a file adds (these files name no BLOCKSIZE) */
        assert_same(gm, gf, &rm, &rf);
        gcs_snapshot_free(gf);
    }
    gcs_snapshot_free(gm);
    unlink(path);
    free(d.p);
}

/* d imported with the given threads and chunk size equals g (its report
 * rg), but for the dump's bytes: the segments of two orders differ a
 * little. */
static void assert_imports_as(const hgen *d, int threads, size_t chunk, const gcs_snapshot *g,
                              const gcs_heapdump_report *rg)
{
    gcs_heapdump_report r;
    gcs_snapshot *h = import_with(d, NULL, threads, chunk, &r);
    r.dump_bytes = rg->dump_bytes;
    assert_same(h, g, &r, rg);
    gcs_snapshot_free(h);
}

/* assert_imports_as on chunks of many sizes (so that a class among the
 * objects falls inside a run, at a run's edge and between runs, and a cut
 * falls anywhere) and on 1 and 4 threads. */
static void assert_imports_as_everywhere(const hgen *d, const gcs_snapshot *g, const gcs_heapdump_report *rg)
{
    static const size_t chunks[] = {0, 8192, 1000, 700};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
        for (int t = T_FIRST; t <= 4; t += 3)
            assert_imports_as(d, t, chunks[c], g, rg);
}

/* One graph (hprof_generate_layout's shape, n objects, classes below the
 * objects or among them) written in two orders: the second imports
 * everywhere as the first does on one thread. */
static void orders_alike(int shape, uint64_t n, int mirrors, int first_order, int second_order)
{
    hgen a = hprof_generate_layout(shape, n, 3, first_order, 64 << 10, 5, 0, mirrors);
    hgen b = hprof_generate_layout(shape, n, 3, second_order, 64 << 10, 5, 0, mirrors);
    gcs_heapdump_report ra;
    gcs_snapshot *ga = import_with(&a, NULL, 1, 0, &ra);
    assert_imports_as_everywhere(&b, ga, &ra);
    gcs_snapshot_free(ga);
    free(a.p);
    free(b.p);
}

/* The same graph in address order (each chunk a run of indices: pass 2
 * writes the snapshot's edges in place) and shuffled (through the
 * temporary edges, the headers placed at random) imports alike. */
static void test_order_alike(void **state)
{
    (void)state;
    for (int shape = HG_LIST; shape <= HG_TREE; shape++) {
        hgen a = hprof_generate_shape(shape, 50000, 2, 0, 128 << 10, 3);
        hgen s = hprof_generate_shape(shape, 50000, 2, 1, 128 << 10, 3);
        gcs_heapdump_report rs;
        gcs_snapshot *gs = import_with(&s, NULL, 2, 8192, &rs);
        assert_imports_as(&a, 2, 8192, gs, &rs);
        gcs_snapshot_free(gs);
        free(a.p);
        free(s.p);
    }
}

/* Class mirrors among the instances, every class dumped first (HotSpot):
 * in address order the classes are holes in the runs of the chunks that
 * hold their indices, or lie between two runs (formats/hprof_edges.c,
 * edges_direct), written after pass 2 -- alike to the same dump shuffled,
 * which takes the temporary edges. */
static void test_mirrors_among_instances(void **state)
{
    (void)state;
    for (int shape = HG_LIST; shape <= HG_TREE; shape++) /* the random graph's edges follow the order */
        orders_alike(shape, 30000, 1, 1, 0);                /* shuffled, then address order */
    hgen r = hprof_generate_mirrors(HG_RANDOM, 30000, 3, 0, 64 << 10, 5);
    check_parallel(&r, NULL, 700);
    free(r.p);
}

/* Two runs, each in address order, whose ranges overlap (the even objects,
 * then the odd): pass 1 cuts the chunks at the one descent, but their
 * runs do not tile the indices, so the dump takes the temporary edges --
 * with each chunk's slice of them as pass 1 sized it, whatever the test
 * of the runs (edges_direct) looked at before it failed; with classes
 * below the objects and among them. */
static void test_interleaved_runs(void **state)
{
    (void)state;
    for (int mirrors = 0; mirrors <= 1; mirrors++)
        for (int shape = HG_LIST; shape <= HG_TREE; shape++)
            orders_alike(shape, 20001, mirrors, 0, HG_INTERLEAVED);
}

/* Instances and object arrays side by side (HG_ARRAYS: each node's one
 * field holds an Object[3] of its own, which holds random nodes -- the
 * dump of a Java program's Node[] per node): the runs of arrays and
 * instances (pass 1's object_run, formats/heapdump_internal.h, and pass
 * 2's runs2, formats/hprof_pass2.c) give the graph as built, and the same
 * snapshot in address order (in place), shuffled and
 * interleaved (through the temporary edges), with classes below the
 * objects and among them, on 1 and 4 threads and on chunks of a few
 * records. */
static void test_array_runs(void **state)
{
    (void)state;
    const uint64_t n = 20001, nref = 3, seed = 5;
    hgen a = hprof_generate_layout(HG_ARRAYS, n, (uint32_t)nref, 0, 64 << 10, seed, 0, 0);
    gcs_heapdump_report ra;
    gcs_snapshot *g = import_with(&a, NULL, 1, 0, &ra);
    /* the four classes lie below the objects: node i is at index 4 + 2i,
     * its array right after it */
    assert_int_equal(g->nobjects, 4 + 2 * n);
    assert_int_equal(ra.object_arrays, n);
    /* the JVM's bytes: the four classes' 16 each, a node's 24 (a 12-byte
     * header, its reference and int), its array's 16 + 3 * 4 rounded up --
     * counted by the runs (runs2), which take a node and its array alike */
    assert_int_equal(ra.jvm_bytes, 4 * 16 + n * (24 + 32));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t node = 4 + 2 * i, arr = node + 1;
        assert_int_equal(g->nptrs[node], 1);
        assert_int_equal(g->edges[g->edge_start[node]], arr);
        assert_int_equal(g->nptrs[arr], nref);
        assert_int_equal(g->words[arr], g->words[5]);
        assert_true(g->type[arr] != g->type[node]);
        for (uint64_t f = 0; f < nref; f++)
            assert_int_equal(g->edges[g->edge_start[arr] + f], 4 + 2 * hg_slot(seed, i, f, n));
    }
    gcs_snapshot_free(g);
    free(a.p);
    for (int mirrors = 0; mirrors <= 1; mirrors++) {
        orders_alike(HG_ARRAYS, n, mirrors, 1, 0);
        orders_alike(HG_ARRAYS, n, mirrors, 0, HG_INTERLEAVED);
    }
    hgen b = hprof_generate_layout(HG_ARRAYS, 5000, 2, 1, 64 << 10, 9, 0, 0);
    check_parallel(&b, NULL, 700);
    free(b.p);
}

/* Records too big for a bucket's block (an extent of their own, formats/
 * hprof_pass2.c's tmp_room): instances of 300 references and arrays of 300,
 * shuffled, on 1 and 4 threads and on chunks of a few records. */
static void test_big_records(void **state)
{
    (void)state;
    hgen s = hprof_generate_shape(HG_RANDOM, 6000, 300, 1, 1 << 20, 5);
    check_parallel(&s, NULL, 8192);
    free(s.p);
    hgen d = hprof_generate(8000, 300, 1 << 20, 9); /* every 16th node owns an Object[300] */
    check_parallel(&d, NULL, 4096);
    free(d.p);
}

/* Objects 1 MiB apart: too sparse for the rank bitmap (sorted ids and a
 * directory instead); the graph, sizes and types are those of the dense
 * dump, only the addresses differ. */
static void test_sparse_ids(void **state)
{
    (void)state;
    hgen dense = hprof_generate_shape(HG_RANDOM, 20000, 3, 1, 64 << 10, 11);
    hgen sparse = hprof_generate_spread(HG_RANDOM, 20000, 3, 1, 64 << 10, 11, 1 << 20);
    gcs_heapdump_report rd, rs;
    gcs_snapshot *gd = import_with(&dense, NULL, 1, 0, &rd);
    gcs_snapshot *gs = import_with(&sparse, NULL, 3, 4096, &rs);
    gcs_heapdump_report rs1;
    gcs_snapshot *gs1 = import_with(&sparse, NULL, 1, 0, &rs1);
    assert_same(gs, gs1, &rs, &rs1);
    assert_int_equal(gd->nobjects, gs->nobjects);
    assert_int_equal(gd->nfields, gs->nfields);
    assert_memory_equal(gd->words, gs->words, gd->nobjects * sizeof *gd->words);
    assert_memory_equal(gd->type, gs->type, gd->nobjects * sizeof *gd->type);
    assert_memory_equal(gd->edge_start, gs->edge_start, (gd->nobjects + 1) * sizeof *gd->edge_start);
    assert_memory_equal(gd->edges, gs->edges, gd->nfields * sizeof *gd->edges);
    assert_int_equal(rd.references, rs.references);
    gcs_snapshot_free(gd);
    gcs_snapshot_free(gs);
    gcs_snapshot_free(gs1);
    free(dense.p);
    free(sparse.p);
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int b = 0; b < 8; b++)
        p[b] = (uint8_t)(v >> (56 - 8 * b));
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int b = 0; b < 8; b++)
        v = v << 8 | p[b];
    return v;
}

/* The offsets of the shape dump's instance records: tag 0x21 then id,
 * serial, and the class id Node (hprof_gen.h). */
static size_t instance_records(const hgen *d, size_t *at, size_t max)
{
    const uint64_t c_node = 0x700000000ull - 0x300 + 0x200;
    uint8_t pat[8];
    for (int b = 0; b < 8; b++)
        pat[b] = (uint8_t)(c_node >> (56 - 8 * b));
    size_t k = 0;
    for (size_t o = 0; o + 21 <= d->n && k < max; o++)
        if (d->p[o] == 0x21 && memcmp(d->p + o + 13, pat, 8) == 0)
            at[k++] = o;
    return k;
}

/* Damaged records: the first in the file is reported, on one thread or
 * several -- two far apart (the workers stop before the second), then
 * every record from one on (several workers fail at once, and the first
 * failure in file order wins, not the first in time). */
static void expect_error_at(const hgen *d, size_t off)
{
    char want[64];
    snprintf(want, sizeof want, "gen: offset %zu: instance of class", off);
    for (int t = T_FIRST; t <= 4; t += 3) {
        for (size_t chunk = 0; chunk <= 4096; chunk += 4096) {
            for (int rep = 0; rep < (t > 1 && chunk ? 10 : 1); rep++) {
                _gcs_heapdump_set_threads(t);
                _gcs_hprof_set_chunk_bytes(chunk);
                gcs_err err = {{0}};
                assert_null(gcs_heapdump_import_hprof_mem(d->p, d->n, "gen", NULL, &err));
                if (strncmp(err.msg, want, strlen(want)) != 0)
                    fail_msg("%d threads, chunks of %zu: \"%s\", want \"%s...\"", t, chunk, err.msg, want);
            }
        }
    }
    _gcs_heapdump_set_threads(0);
    _gcs_hprof_set_chunk_bytes(0);
}

static void test_first_error(void **state)
{
    (void)state;
    hgen d = hprof_generate_shape(HG_TREE, 20000, 2, 1, 64 << 10, 8);
    static size_t at[30000];
    size_t k = instance_records(&d, at, 30000);
    assert_true(k > 15000);
    /* an instance of an undescribed class late, one early: pass 2 finds
     * them (pass 1 does not look at classes) */
    d.p[at[14000] + 20] ^= 0x40;
    d.p[at[3000] + 20] ^= 0x40;
    expect_error_at(&d, at[3000]);
    for (size_t j = 2000; j < k; j++)
        d.p[at[j] + 20] ^= 0x40;
    expect_error_at(&d, at[2000]);
    free(d.p);
}

/* An object dumped twice is refused, whether its ids are indexed by the
 * rank bitmap (dense) or sorted (sparse). */
static void test_dumped_twice(void **state)
{
    (void)state;
    for (int sparse = 0; sparse <= 1; sparse++) {
        hgen d = hprof_generate_spread(HG_LIST, 5000, 1, 1, 64 << 10, 2, sparse ? 1 << 20 : 0);
        static size_t at[6000];
        assert_true(instance_records(&d, at, 6000) > 100);
        memcpy(d.p + at[50] + 1, d.p + at[70] + 1, 8); /* record 50 gets record 70's id */
        char want[64];
        snprintf(want, sizeof want, "gen: object id 0x");
        gcs_err err = {{0}};
        assert_null(gcs_heapdump_import_hprof_mem(d.p, d.n, "gen", NULL, &err));
        assert_non_null(strstr(err.msg, "is dumped twice"));
        assert_int_equal(strncmp(err.msg, want, strlen(want)), 0);
        free(d.p);
    }
}

/* A dump that changes between the passes is refused, in one line naming
 * an offset, where the change shows: an object whose id pass 1 did not
 * see, one dumped again in place of another, and -- in address order,
 * where pass 2 takes each chunk's objects to be the ids pass 1 saw there,
 * at a run of indices -- two objects that swapped places.  An id on the id
 * map's grid that no object has is found, out of address order, only when
 * the records are put in order (buckets by granule: formats/hprof_pass2.c,
 * granule_buckets), and named instead of an offset. */
typedef struct change {
    uint8_t *p;
    size_t a, b;  /* instance records */
    int how;      /* 0: a's id + 8 (no object's, off the grid); 1: a gets b's id; 2: a and b swap ids;
                   * 3: a's id 0x6ffffff80 (between two classes, on the grid) */
} change;

static void change_ids(void *arg)
{
    change *c = arg;
    uint8_t ida[8], idb[8];
    memcpy(ida, c->p + c->a + 1, 8);
    memcpy(idb, c->p + c->b + 1, 8);
    if (c->how == 0)
        c->p[c->a + 8] ^= 0x08; /* the low byte: 8 bytes up or down, between two objects */
    else if (c->how == 3)
        put_be64(c->p + c->a + 1, 0x6ffffff80ull);
    else
        memcpy(c->p + c->a + 1, idb, 8);
    if (c->how == 2)
        memcpy(c->p + c->b + 1, ida, 8);
}

static void test_changed_between_passes(void **state)
{
    (void)state;
    for (int shuffled = 0; shuffled <= 1; shuffled++) {
        for (int how = 0; how <= 3; how++) {
            for (int t = 1; t <= 3 && !(shuffled && how == 2); t += 2) {
                hgen d = hprof_generate_shape(HG_TREE, 20000, 2, shuffled, 64 << 10, 21);
                static size_t at[30000];
                assert_true(instance_records(&d, at, 30000) > 15000);
                change c = {d.p, at[5000], at[5001], how};
                _gcs_hprof_set_between_passes(change_ids, &c);
                _gcs_heapdump_set_threads(t);
                _gcs_hprof_set_chunk_bytes(t > 1 ? 4096 : 0);
                gcs_err err = {{0}};
                gcs_snapshot *g = gcs_heapdump_import_hprof_mem(d.p, d.n, "gen", NULL, &err);
                _gcs_hprof_set_between_passes(NULL, NULL);
                _gcs_heapdump_set_threads(0);
                _gcs_hprof_set_chunk_bytes(0);
                if (g)
                    fail_msg("shuffled %d, change %d, %d threads: imported", shuffled, how, t);
                assert_int_equal(strncmp(err.msg, "gen: ", 5), 0);
                assert_null(strchr(err.msg, '\n'));
                if (shuffled && how == 3)
                    assert_string_equal(err.msg, "gen: object 0x6ffffff80 appeared between the passes (the dump changed?)");
                free(d.p);
            }
        }
    }
}

/* A damaged gzip dump: one line naming the offset, from either pass. */
static void test_gzip_damage(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-hprof-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hgen d = hprof_generate_shape(HG_LIST, 20000, 1, 1, 64 << 10, 4);
    write_file(path, &d, 1, 1);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_int_equal(truncate(path, size / 2), 0); /* cut */
    fclose(f);
    for (int t = 1; t <= 3; t += 2) {
        _gcs_heapdump_set_threads(t);
        _gcs_hprof_set_chunk_bytes(4096);
        gcs_err err = {{0}};
        assert_null(gcs_heapdump_import(path, GCS_HEAPDUMP_HPROF, NULL, &err));
        assert_non_null(strstr(err.msg, ": offset "));
        assert_null(strchr(err.msg, '\n'));
    }
    _gcs_heapdump_set_threads(0);
    _gcs_hprof_set_chunk_bytes(0);
    unlink(path);
    free(d.p);
}

/* ---- HotSpot's gzip members (formats/dumpstream.c, ds_members) ---------------------- */

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* path imported with the given threads and chunks, members read with
 * libdeflate (members 1) or the whole file streamed through zlib (0);
 * NULL with the message in msg on failure. */
static gcs_snapshot *import_gz(const char *path, int threads, size_t chunk, int members, gcs_heapdump_report *rep,
                               char *msg, size_t msgsz)
{
    _gcs_heapdump_set_threads(threads);
    _gcs_hprof_set_chunk_bytes(chunk);
    _gcs_dumpstream_set_members(members);
    gcs_err err = {{0}};
    gcs_snapshot *g = gcs_heapdump_import(path, GCS_HEAPDUMP_HPROF, rep, &err);
    _gcs_heapdump_set_threads(0);
    _gcs_hprof_set_chunk_bytes(0);
    _gcs_dumpstream_set_members(1);
    if (msg)
        snprintf(msg, msgsz, "%s", g ? "" : err.msg);
    if (g)
        assert_int_equal(gcs_snapshot_validate(g, &err), 0);
    else
        assert_null(strchr(err.msg, '\n'));
    return g;
}

/* The file offsets of the members of z (zlib reading it), and their count. */
static size_t member_starts(const hgen *z, size_t *at, size_t max)
{
    size_t k = 0, o = 0;
    static uint8_t out[1 << 16];
    while (o + 2 <= z->n && z->p[o] == 0x1f && z->p[o + 1] == 0x8b && k < max) {
        z_stream s;
        memset(&s, 0, sizeof s);
        assert_int_equal(inflateInit2(&s, 31), Z_OK);
        s.next_in = z->p + o;
        s.avail_in = (uInt)(z->n - o);
        int rc;
        do {
            s.next_out = out;
            s.avail_out = sizeof out;
            rc = inflate(&s, Z_NO_FLUSH);
        } while (rc == Z_OK);
        assert_int_equal(rc, Z_STREAM_END);
        at[k++] = o;
        o += s.total_in;
        inflateEnd(&s);
    }
    at[k] = o;
    return k;
}

/* g imported as gm was (from memory) but for what a file adds. */
static void assert_same_but_file(const gcs_snapshot *gm, const gcs_heapdump_report *rm, const gcs_snapshot *g,
                                 gcs_heapdump_report r)
{
    r.compressed = 0;
    r.gzip_members = 0;
    r.gzip_block_bytes = 0;
    assert_same(gm, g, rm, &r);
}

/* A dump written as HotSpot's -gz writes it, members of several sizes
 * (997 bytes: every chunk's first record begins in a member before it, and
 * most records cross a member's end), imports member by member with
 * libdeflate -- the report says so: the members' count and BLOCKSIZE --
 * on 1 and 4 threads and chunks of a few records to the default, exactly
 * as from memory, as from one gzip member, and as the same file streamed
 * through zlib; with a header CRC on every member (FHCRC, which libdeflate
 * does not check: zlib inflates those members) too. */
static void test_gzip_members(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-hprof-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    static const size_t blocks[] = {997, 4096, 65536, 1 << 20};
    static const size_t chunks[] = {0, 8192, 700};
    for (int shape = 0; shape < 2; shape++) {
        hgen d = shape == 0 ? hprof_generate_shape(HG_RANDOM, 30000, 4, 1, 64 << 10, 5)
                            : hprof_generate_mirrors(HG_LIST, 30000, 1, 0, 64 << 10, 6); /* address order */
        gcs_heapdump_report rm, r;
        gcs_snapshot *gm = import_with(&d, NULL, 1, 0, &rm);
        write_file(path, &d, 1, 1); /* one member, as gzip writes */
        gcs_snapshot *g = import_gz(path, 2, 8192, 1, &r, NULL, 0);
        assert_non_null(g);
        assert_int_equal(r.gzip_members, 0);
        assert_same_but_file(gm, &rm, g, r);
        gcs_snapshot_free(g);
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            for (int hcrc = 0; hcrc <= (blocks[b] == 4096); hcrc++) {
                hgen z = hprof_gzip_members(d.p, d.n, blocks[b], (uint32_t)blocks[b], 1, hcrc);
                write_bytes(path, z.p, z.n);
                uint64_t want = (d.n + blocks[b] - 1) / blocks[b];
                for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
                    if (TSAN_THIN && c != b % (sizeof chunks / sizeof chunks[0]))
                        continue;
                    for (int t = T_FIRST; t <= 4; t += 3) {
                        g = import_gz(path, t, chunks[c], 1, &r, NULL, 0);
                        assert_non_null(g);
                        assert_int_equal(r.compressed, 1);
                        assert_int_equal(r.gzip_members, want);
                        assert_int_equal(r.gzip_block_bytes, blocks[b]);
                        assert_same_but_file(gm, &rm, g, r);
                        gcs_snapshot_free(g);
                    }
                }
                g = import_gz(path, 2, 8192, 0, &r, NULL, 0); /* zlib streams the same file */
                assert_non_null(g);
                assert_int_equal(r.gzip_members, 0);
                assert_same_but_file(gm, &rm, g, r);
                gcs_snapshot_free(g);
                free(z.p);
            }
        }
        /* members of no stated bound (no comment, or one naming no size
         * this reader takes) are streamed through zlib */
        for (uint32_t stated = 0; stated <= 1; stated++) {
            hgen z = hprof_gzip_members(d.p, d.n, 4096, stated ? 0x7fffffffu : 0, 1, 0);
            write_bytes(path, z.p, z.n);
            g = import_gz(path, 3, 8192, 1, &r, NULL, 0);
            assert_non_null(g);
            assert_int_equal(r.gzip_members, 0);
            assert_same_but_file(gm, &rm, g, r);
            gcs_snapshot_free(g);
            free(z.p);
        }
        gcs_snapshot_free(gm);
        free(d.p);
    }
    unlink(path);
}

/* The fixture made by a real JVM (tests/data/hprof/make.sh: jcmd -gz=1,
 * four members of at most 1 MiB, not all full) imports as zlib reads it. */
static void test_gzip_members_jvm(void **state)
{
    (void)state;
    const char *path = "tests/data/hprof/tree-14.hprof.gz";
    gcs_heapdump_report rz, r;
    gcs_snapshot *gz = import_gz(path, 1, 0, 0, &rz, NULL, 0);
    assert_non_null(gz);
    assert_int_equal(rz.gzip_members, 0);
    for (int t = 1; t <= 2; t++) {
        for (size_t chunk = 0; chunk <= 65536; chunk += 65536) {
            gcs_snapshot *g = import_gz(path, t, chunk, 1, &r, NULL, 0);
            assert_non_null(g);
            assert_int_equal(r.gzip_members, 4);
            assert_int_equal(r.gzip_block_bytes, 1 << 20);
            r.gzip_members = 0;
            r.gzip_block_bytes = 0;
            assert_same(gz, g, &rz, &r);
            gcs_snapshot_free(g);
        }
    }
    gcs_snapshot_free(gz);
}

/* The file z with n bytes, damaged by fn, fails alike member by member (1
 * and 3 threads) and streamed through zlib on one thread (whose offsets are
 * the reference): the same one line; or, where zlib takes the file, both
 * import the same. */
static void expect_same_outcome(const char *path, const hgen *z, size_t n)
{
    write_bytes(path, z->p, n);
    char ref[600], msg[600];
    gcs_heapdump_report rz, r;
    gcs_snapshot *gz = import_gz(path, 1, 4096, 0, &rz, ref, sizeof ref);
    for (int t = 1; t <= 3; t += 2) {
        gcs_snapshot *g = import_gz(path, t, 4096, 1, &r, msg, sizeof msg);
        if (!gz) {
            assert_null(g);
            assert_non_null(strstr(ref, ": offset "));
            if (strcmp(msg, ref) != 0)
                fail_msg("%d threads: \"%s\", zlib: \"%s\"", t, msg, ref);
        } else {
            if (!g)
                fail_msg("%d threads: \"%s\"; zlib imported it", t, msg);
            assert_true(r.gzip_members > 0);
            r.gzip_members = 0;
            r.gzip_block_bytes = 0;
            rz.compressed = r.compressed;
            assert_same(gz, g, &rz, &r);
            gcs_snapshot_free(g);
        }
    }
    gcs_snapshot_free(gz);
}

static char *damaged_path;
static size_t damaged_at;

/* Between the passes: a byte of the file's compressed data flipped. */
static void damage_file(void *arg)
{
    (void)arg;
    FILE *f = fopen(damaged_path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)damaged_at, SEEK_SET), 0);
    int c = fgetc(f);
    assert_int_equal(fseek(f, (long)damaged_at, SEEK_SET), 0);
    fputc(c ^ 0x55, f);
    assert_int_equal(fclose(f), 0);
}

/* Damaged member-wise dumps: a member cut short, cut right after its
 * magic's first byte (the end, as zlib takes it: then a truncated dump),
 * a flipped byte of its deflate data, of its CRC, of its length (ISIZE),
 * garbage after the last member (ignored, as zlib ignores it) and a
 * damaged member after it: member by member each fails (or imports)
 * exactly as the zlib path does.  A member over the stated BLOCKSIZE is
 * refused (zlib, which knows no bound, imports it), and a file damaged
 * between the passes fails in one line. */
static void test_gzip_members_damage(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-hprof-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hgen d = hprof_generate_shape(HG_LIST, 20000, 1, 1, 64 << 10, 4);
    hgen z = hprof_gzip_members(d.p, d.n, 4096, 4096, 1, 0);
    static size_t at[4096];
    size_t nm = member_starts(&z, at, 4095);
    assert_int_equal(nm, (d.n + 4095) / 4096);
    assert_true(nm > 40);
    uint8_t *orig = malloc(z.n + 64);
    assert_non_null(orig);
    memcpy(orig, z.p, z.n);
    z.p = realloc(z.p, z.n + 64);
    assert_non_null(z.p);
    const size_t k = 30; /* the member damaged */
    expect_same_outcome(path, &z, at[k] + (at[k + 1] - at[k]) / 2); /* cut in a member */
    expect_same_outcome(path, &z, at[k] + 1);                         /* cut after 0x1f */
    expect_same_outcome(path, &z, at[k] + 2);                         /* cut after the magic */
    for (int how = 0; how < 3; how++) {
        size_t o = how == 0 ? at[k] + (at[k + 1] - at[k]) / 2 : how == 1 ? at[k + 1] - 7 : at[k + 1] - 3;
        z.p[o] ^= 0x21; /* the deflate data, the CRC-32, ISIZE */
        expect_same_outcome(path, &z, z.n);
        memcpy(z.p, orig, z.n);
    }
    memcpy(z.p + z.n, "garbage after the dump\n", 23);
    expect_same_outcome(path, &z, z.n + 23);
    memcpy(z.p + z.n, "\x1f\x8b\x08\x00garbage", 11);
    expect_same_outcome(path, &z, z.n + 11);
    memcpy(z.p, orig, z.n);

    /* members of 4096 bytes, 2048 stated */
    hgen big = hprof_gzip_members(d.p, d.n, 4096, 2048, 1, 0);
    write_bytes(path, big.p, big.n);
    char msg[600];
    gcs_heapdump_report r;
    for (int t = 1; t <= 3; t += 2) {
        assert_null(import_gz(path, t, 4096, 1, &r, msg, sizeof msg));
        if (!strstr(msg, ": offset 2048: gzip member inflates to more than its BLOCKSIZE=2048 bytes"))
            fail_msg("%s", msg);
    }
    gcs_snapshot *g = import_gz(path, 1, 4096, 0, &r, msg, sizeof msg);
    assert_non_null(g);
    gcs_snapshot_free(g);
    free(big.p);

    /* a member of a later chunk damaged between the passes: pass 2 finds it */
    damaged_path = path;
    damaged_at = at[nm - 3] + (at[nm - 2] - at[nm - 3]) / 2;
    for (int t = 1; t <= 3; t += 2) {
        write_bytes(path, z.p, z.n);
        _gcs_hprof_set_between_passes(damage_file, NULL);
        g = import_gz(path, t, 4096, 1, &r, msg, sizeof msg);
        _gcs_hprof_set_between_passes(NULL, NULL);
        assert_null(g);
        assert_non_null(strstr(msg, ": offset "));
    }
    free(orig);
    free(z.p);
    free(d.p);
    unlink(path);
}

/* path imported with pass 1 keeping up to keep bytes of it for pass 2
 * (_gcs_hprof_set_keep), the file damaged between the passes where damage
 * is set; as import_gz. */
static gcs_snapshot *import_kept(const char *path, int64_t keep, int damage, int threads, size_t chunk,
                                 int members, gcs_heapdump_report *rep, char *msg, size_t msgsz)
{
    _gcs_hprof_set_keep(keep);
    if (damage)
        _gcs_hprof_set_between_passes(damage_file, NULL);
    gcs_snapshot *g = import_gz(path, threads, chunk, members, rep, msg, msgsz);
    _gcs_hprof_set_between_passes(NULL, NULL);
    _gcs_hprof_set_keep(-1);
    return g;
}

/* Chunks pass 1 kept inflated (hprof_scan.c, keep_begin): a gzip dump in
 * address order (the list with class mirrors among its objects, and the
 * random graph of object arrays), one member through zlib and HotSpot's
 * members, imports exactly as from memory whether pass 1 keeps all of it,
 * about a third (chunks dropped half way where the bound runs out) or
 * none, on 1 and 4 threads and chunks of a few records to the default.
 * That pass 2 read the kept chunks, and only those: the file damaged
 * between the passes two thirds in still imports when everything was
 * kept, and fails in one line when nothing was and when the dump is
 * shuffled (its kept chunks are freed before pass 2: its records need the
 * room). */
static void test_gzip_kept(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-hprof-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    static const size_t chunks[] = {0, 8192, 700};
    for (int shape = 0; shape < 3; shape++) {
        /* over pass 1's window of 4 MiB, which it then drops as it reads on */
        hgen d = shape == 0   ? hprof_generate_mirrors(HG_LIST, 150000, 1, 0, 64 << 10, 6)
                 : shape == 1 ? hprof_generate_shape(HG_ARRAYS, 60000, 4, 0, 64 << 10, 7)
                              : hprof_generate_shape(HG_TREE, 20000, 2, 1, 64 << 10, 8); /* shuffled */
        gcs_heapdump_report rm, r;
        gcs_snapshot *gm = import_with(&d, NULL, 1, 0, &rm);
        const int64_t keeps[] = {INT64_MAX, (int64_t)d.n / 3, 0};
        for (int members = 0; members <= 1; members++) {
            hgen z = hprof_gzip_members(d.p, d.n, members ? 4096 : d.n, members ? 4096 : 0, 1, 0);
            write_bytes(path, z.p, z.n);
            for (size_t k = 0; k < sizeof keeps / sizeof keeps[0]; k++)
                for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
                    for (int t = T_FIRST; t <= 4 && (!TSAN_THIN || c == k); t += 3) {
                        gcs_snapshot *g = import_kept(path, keeps[k], 0, t, chunks[c], 1, &r, NULL, 0);
                        assert_non_null(g);
                        assert_int_equal(r.gzip_members, members ? (d.n + 4095) / 4096 : 0);
                        assert_same_but_file(gm, &rm, g, r);
                        gcs_snapshot_free(g);
                    }
            damaged_path = path;
            damaged_at = z.n * 2 / 3; /* deflate data: the middle of a member */
            if (members) {
                static size_t at[4096];
                size_t nm = member_starts(&z, at, 4095), m = nm * 2 / 3;
                assert_true(nm > 3 && nm < 4095);
                damaged_at = at[m] + (at[m + 1] - at[m]) / 2;
            }
            for (size_t k = 0; k < sizeof keeps / sizeof keeps[0]; k++)
                for (int t = T_FIRST; t <= 4; t += 3) {
                    char msg[600];
                    write_bytes(path, z.p, z.n);
                    gcs_snapshot *g = import_kept(path, keeps[k], 1, t, 8192, 1, &r, msg, sizeof msg);
                    if (k == 0 && shape < 2) {
                        if (!g)
                            fail_msg("shape %d, members %d, %d threads, all kept: %s", shape, members, t, msg);
                        assert_same_but_file(gm, &rm, g, r);
                    } else if (k == 1 && shape < 2) { /* whether that chunk was kept */
                        if (g)
                            assert_same_but_file(gm, &rm, g, r);
                        else
                            assert_non_null(strstr(msg, ": offset "));
                    } else {
                        if (g)
                            fail_msg("shape %d, members %d, %d threads, keep %lld: imported", shape, members, t,
                                     (long long)keeps[k]);
                        assert_non_null(strstr(msg, ": offset "));
                    }
                    gcs_snapshot_free(g);
                }
            free(z.p);
        }
        gcs_snapshot_free(gm);
        free(d.p);
    }
    unlink(path);
}

/* References resolved in batches (hprof_pass2.c, resolve_refs: in address order
 * after each chunk, the look-ahead's way; out of it after edge_worker puts
 * a bucket in order) or one at a time: the same snapshot and report, on 1
 * and 4 threads and chunks of a few records to the default -- with
 * references to no object (an aligned id between two objects, a misaligned
 * one, ids below and above every object's) counted as missing, NULLs, and
 * class mirrors among the objects (holes in the chunks' runs, whose
 * references write_classes fills after pass 2). */
static void test_batched_refs(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        const int mirrors = variant == 1;
        hgen d = variant == 0   ? hprof_generate_spread(HG_RANDOM, 20000, 4, 0, 64 << 10, 31, 64)
                 : variant == 1 ? hprof_generate_mirrors(HG_RANDOM, 20000, 4, 0, 64 << 10, 31)
                                : hprof_generate_shape(HG_RANDOM, 20000, 4, 1, 64 << 10, 31); /* shuffled */
        /* the instances: of class Node (hprof_gen.h's hprof_generate_layout) */
        const uint64_t c_node = mirrors ? 0x700000000ull + 2 * 20000 / 3 * 40 + 8 : 0x700000000ull - 0x100;
        static size_t at[30000];
        size_t n = 0;
        for (size_t o = 0; o + 21 <= d.n && n < 30000; o++)
            if (d.p[o] == 0x21 && get_be64(d.p + o + 13) == c_node)
                at[n++] = o;
        assert_int_equal(n, 20000);
        for (size_t i = 0; i < n; i++) {
            uint8_t *f = d.p + at[i] + 1 + 8 + 4 + 8 + 4; /* the reference fields */
            if (i % 5 == 0 && get_be64(f))
                put_be64(f, get_be64(f) + 8); /* between objects 40 bytes apart; misaligned where 64 */
            if (i % 7 == 0)
                put_be64(f + 8, get_be64(f + 8) + 4); /* misaligned */
            if (i % 11 == 0)
                put_be64(f + 16, 0x10);
            if (i % 13 == 0)
                put_be64(f + 24, 0xffff000000000000ull);
            if (i % 17 == 0)
                put_be64(f, 0);
        }
        gcs_heapdump_report r0, r;
        _gcs_hprof_set_ahead(0);
        gcs_snapshot *g0 = import_with(&d, NULL, 1, 0, &r0);
        assert_true(r0.missing_refs > n / 3);
        for (int ahead = 0; ahead <= 1; ahead++) {
            _gcs_hprof_set_ahead(ahead);
            for (int t = T_FIRST; t <= 4; t += 3)
                for (size_t chunk = 0; chunk <= 4096; chunk += 4096) {
                    gcs_snapshot *g = import_with(&d, NULL, t, chunk ? chunk : 700, &r);
                    assert_same(g0, g, &r0, &r);
                    gcs_snapshot_free(g);
                }
        }
        _gcs_hprof_set_ahead(-1);
        gcs_snapshot_free(g0);
        free(d.p);
    }
}

/* The objects of a tree dump (hprof_generate_shape's, n objects 32 bytes
 * apart from 0x700000000) moved into three clusters: those from n/3 on up
 * by gap1 bytes, those from 2n/3 on by gap2 more; their references too. */
static void cluster_ids(hgen *d, uint64_t n, uint64_t gap1, uint64_t gap2)
{
    static size_t at[200000];
    size_t k = instance_records(d, at, 200000);
    assert_int_equal(k, n);
    const uint64_t base = 0x700000000ull;
    for (size_t i = 0; i < k; i++)
        for (int f = 0; f < 3; f++) { /* the id, then the two children */
            uint8_t *q = d->p + at[i] + (f ? 1 + 8 + 4 + 8 + 4 + 8 * (f - 1) : 1);
            uint64_t a = get_be64(q);
            if (a < base)
                continue; /* NULL */
            uint64_t x = (a - base) / 32;
            put_be64(q, a + (x >= n / 3 ? gap1 : 0) + (x >= 2 * n / 3 ? gap2 : 0));
        }
}

/* Out of address order the records go to buckets cut by their ids'
 * granules (formats/hprof_pass2.c, granule_buckets), each granule's bucket found
 * in a table of slices of the id range: where the ids lie in clusters far
 * apart, many buckets start in one slice (found by a search among them),
 * slices hold none, and the map has pages without ids; where a bucket
 * would span 2^31 granules or more, the buckets are cut by index instead.
 * Both import a shuffled dump as its address order does, with the
 * look-ahead (and so the batches and the buckets by granule) on and off,
 * on 1 and 4 threads, in chunks of every size. */
static void test_granule_buckets(void **state)
{
    (void)state;
    const uint64_t n = 200000;
    static const uint64_t gaps[][2] = {
        {1ull << 30, 3ull << 30},   /* a bucket's granules below 2^31: by granule */
        {70ull << 30, 1ull << 20},  /* 32-byte granules: one bucket spans more than 2^31 of them */
    };
    for (size_t v = 0; v < sizeof gaps / sizeof gaps[0]; v++) {
        hgen a = hprof_generate_shape(HG_TREE, n, 2, 0, 64 << 10, 7);
        hgen s = hprof_generate_shape(HG_TREE, n, 2, 1, 64 << 10, 7);
        cluster_ids(&a, n, gaps[v][0], gaps[v][1]);
        cluster_ids(&s, n, gaps[v][0], gaps[v][1]);
        gcs_heapdump_report ra;
        gcs_snapshot *ga = import_with(&a, NULL, 1, 0, &ra);
        for (int ahead = -1; ahead <= 1; ahead++) {
            _gcs_hprof_set_ahead(ahead);
            for (int t = T_FIRST; t <= 4; t += 3)
                for (size_t chunk = 0; chunk <= 700; chunk += 700)
                    if (!TSAN_THIN || (size_t)(ahead + 1) % 2 == chunk / 700)
                        assert_imports_as(&s, t, chunk, ga, &ra);
        }
        _gcs_hprof_set_ahead(-1);
        gcs_snapshot_free(ga);
        free(a.p);
        free(s.p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_shuffled), cmocka_unit_test(test_parallel_random),
        cmocka_unit_test(test_parallel_files),    cmocka_unit_test(test_order_alike),
        cmocka_unit_test(test_array_runs),
        cmocka_unit_test(test_big_records),       cmocka_unit_test(test_mirrors_among_instances),
        cmocka_unit_test(test_interleaved_runs),
        cmocka_unit_test(test_sparse_ids),        cmocka_unit_test(test_first_error),
        cmocka_unit_test(test_dumped_twice),      cmocka_unit_test(test_gzip_damage),
        cmocka_unit_test(test_changed_between_passes),
        cmocka_unit_test(test_gzip_members),      cmocka_unit_test(test_gzip_members_jvm),
        cmocka_unit_test(test_gzip_members_damage), cmocka_unit_test(test_gzip_kept),
        cmocka_unit_test(test_batched_refs),      cmocka_unit_test(test_granule_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
