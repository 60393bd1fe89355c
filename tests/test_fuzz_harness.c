/* test_fuzz_harness.c -- the fuzz targets of `make fuzz`, run without
 * libFuzzer on fixed inputs, so that `make check` (and CI, which has no
 * clang) builds them and holds their invariants on every change: the seeds,
 * every prefix and single-byte corruption of a seed, and the inputs that
 * fuzzing once found (regressions).
 *
 * Each target is included here with its entry point renamed; a broken
 * invariant traps (__builtin_trap), which the test runner counts as a
 * failure.  Runs from the repository root (scripts/run-tests). */
#define _GNU_SOURCE /* memfd_create, in fuzz_gcbench_result.c */
#define LLVMFuzzerTestOneInput fuzz_snapshot_one
#include "fuzz/fuzz_snapshot.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_profile_one
#include "fuzz/fuzz_profile.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_trace_one
#include "fuzz/fuzz_trace.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gclog_one
#include "fuzz/fuzz_gclog.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gcbench_result_one
#include "fuzz/fuzz_gcbench_result.c"
#undef LLVMFuzzerTestOneInput
#define devnull floor_devnull
#define LLVMFuzzerTestOneInput fuzz_corpus_floor_one
#include "fuzz/fuzz_corpus_floor.c"
#undef LLVMFuzzerTestOneInput
#undef devnull
#define LLVMFuzzerTestOneInput fuzz_corpus_entry_one
#include "fuzz/fuzz_corpus_entry.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_hprof_one
#include "fuzz/fuzz_hprof.c"
#undef LLVMFuzzerTestOneInput
#include "fuzz/hprof_gen.h"
#define LLVMFuzzerTestOneInput fuzz_v8_one
#include "fuzz/fuzz_v8.c"
#undef LLVMFuzzerTestOneInput
#include "fuzz/v8_gen.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <cmocka.h>

#include "gcscale/common.h"
#include "gcscale/synth.h"
#include "test_files.h"

typedef int (*harness_fn)(const uint8_t *data, size_t size);

/* The input whole, every prefix (a file cut short), and each byte flipped
 * in turn at `stride` positions (a file damaged in place). */
static void run_variants(harness_fn fn, const uint8_t *data, size_t len, size_t stride)
{
    fn(data, len);
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    for (size_t cut = 0; cut < len; cut += stride)
        fn(data, cut);
    for (size_t at = 0; at < len; at += stride) {
        memcpy(copy, data, len);
        copy[at] ^= 0x5a;
        fn(copy, len);
    }
    free(copy);
}

static void test_snapshot_target(void **state)
{
    (void)state;
    gcs_synth_opts o = {.kind = GCS_SYNTH_CUBE, .size = 200, .nnodes = 2, .placement = GCS_SYNTH_SPREAD,
                        .seed = 1};
    gcs_err err;
    gcs_snapshot *g = gcs_synth_build(&o, &err);
    if (!g)
        fail_msg("%s", err.msg);
    char path[] = "/tmp/gcscale-fuzz-harness-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    /* format version 3 (read in place), then version 2 (read by copying) */
    for (uint32_t version = 3; version >= 2; version--) {
        if (_gcs_snapshot_write_version(g, path, version, &err) != 0)
            fail_msg("%s", err.msg);
        size_t len;
        uint8_t *data = test_slurp(path, &len);
        assert_true(len > 72);
        run_variants(fuzz_snapshot_one, data, len, 8);
        free(data);
    }
    unlink(path);
    gcs_snapshot_free(g);
    size_t len;
    uint8_t *data;
    /* Found by make fuzz: a version-2 header asking for 2^32 type names in
     * a 512-byte file (the reader allocated the name table first). */
    data = test_slurp("tests/fuzz/regressions/snapshot-type-count.snap", &len);
    fuzz_snapshot_one(data, len);
    free(data);
}

static void test_profile_target(void **state)
{
    (void)state;
    /* the last: every key the loader reads (tests/data/profile/README.md) */
    static const char *const seeds[] = {"data/machines/dev-2core-kvm-epyc.json", "data/machines/dev-2core-kvm.json",
                                        "data/machines/o2k.json", "data/machines/e10k.json",
                                        "tests/data/profile/every-key.json"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        size_t len;
        uint8_t *data = test_slurp(seeds[i], &len);
        run_variants(fuzz_profile_one, data, len, 13);
        free(data);
    }
    /* Found by make fuzz: a string with a newline made a two-line error. */
    static const char *const regressions[] = {
        "{\"format\": \"gcscale-machine\\nfoo\", \"version\": 1}",
        "{\"format\": \"\\u001b[31mred\\u0000\", \"version\": 1}",
        "{\"format\": \"gcscale-machine\", \"version\": 1, \"nodes\": \"\\n\"}",
    };
    for (size_t i = 0; i < sizeof regressions / sizeof regressions[0]; i++)
        fuzz_profile_one((const uint8_t *)regressions[i], strlen(regressions[i]));
}

static void test_gcbench_result_target(void **state)
{
    (void)state;
    static const char *const seeds[] = {"data/results/lent-16cpu-xeon/model-validation/list-measured.json",
                                        "data/results/lent-16cpu-xeon/bench-1/gcscale-wide.json"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        size_t len;
        uint8_t *data = test_slurp(seeds[i], &len);
        run_variants(fuzz_gcbench_result_one, data, len, 97);
        free(data);
    }
    static const char *const refused[] = {
        "", "{}", "[]", "{\"format\": \"gcscale-gc-bench\", \"version\": 1}",
        "{\"format\": \"gcscale-gc-bench\", \"version\": 1, \"rows\": [{\"threads\": 0}]}",
        /* found by make fuzz: an empty rows array was accepted with no row */
        "{\"format\": \"gcscale-gc-bench\", \"version\": 1, \"rows\": []}",
        "{\"format\": \"gcscale-gc-bench\", \"version\": 1, \"rows\": [{\"threads\": 1e300}]}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        fuzz_gcbench_result_one((const uint8_t *)refused[i], strlen(refused[i]));
}

static void test_corpus_floor_target(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = test_slurp("data/corpus/floor.json", &len);
    run_variants(fuzz_corpus_floor_one, data, len, 7);
    free(data);
    static const char *const odd[] = {
        "{}", "{\"format\": \"gcscale-corpus-floor\", \"tolerance_pct\": 0, \"entries\": {}}",
        "{\"format\": \"gcscale-corpus-floor\", \"predictor\": \"default\", \"span\": \"critical\","
        " \"tolerance_pct\": 0, \"entries\": {\"m\": {\"mae_pct\": {\"3\": 1}}}}",
        "{\"format\": \"gcscale-corpus-floor\", \"predictor\": \"default\", \"span\": \"critical\","
        " \"tolerance_pct\": 0, \"entries\": {\"m\\nx\": {}}}",
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        fuzz_corpus_floor_one((const uint8_t *)odd[i], strlen(odd[i]));
}

static void test_corpus_entry_target(void **state)
{
    (void)state;
    static const char *const entries[] = {"data/corpus/dev-2core-kvm-epyc/entry.json",
                                          "data/corpus/lent-16cpu-xeon/entry.json"};
    for (size_t k = 0; k < sizeof entries / sizeof entries[0]; k++) {
        size_t len;
        uint8_t *data = test_slurp(entries[k], &len);
        json_t *doc = json_loadb((const char *)data, len, 0, NULL);
        gcs_err err;
        assert_non_null(doc);
        assert_int_equal(_gcs_corpus_entry_check(doc, entries[k], &err), 0); /* the committed ones pass */
        json_decref(doc);
        run_variants(fuzz_corpus_entry_one, data, len, 97);
        free(data);
    }
    /* each refused with one line: a path out of the entry, a recipe past the
     * builder's limits, repetitions past the bound, P not starting at 1 */
    static const char *const refused[] = {
        "{\"format\": \"gcscale-corpus-entry\", \"version\": 1, \"heaps\": [{\"name\": \"h\", \"kind\": \"x\","
        " \"snapshot\": \"../h.snap\", \"measurements\": [{\"threads\": 1, \"reps\": [{\"mark_ns\": 5}]}]}]}",
        "{\"format\": \"gcscale-corpus-entry\", \"version\": 1, \"heaps\": [{\"name\": \"h\", \"kind\": \"x\","
        " \"checksum\": \"crc32:00000000\", \"shape\": {\"shape\": \"list\", \"size\": 1e18},"
        " \"measurements\": [{\"threads\": 1, \"reps\": [{\"mark_ns\": 5}]}]}]}",
        "{\"format\": \"gcscale-corpus-entry\", \"version\": 1, \"heaps\": [{\"name\": \"h\", \"kind\": \"x\","
        " \"checksum\": \"crc32:00000000\", \"shape\": {\"shape\": \"list\", \"size\": 1000000000000000000},"
        " \"measurements\": [{\"threads\": 1, \"reps\": [{\"mark_ns\": 5}]}]}]}",
        "{\"format\": \"gcscale-corpus-entry\", \"version\": 1, \"heaps\": [{\"name\": \"h\", \"kind\": \"x\","
        " \"checksum\": \"crc32:00000000\", \"shape\": {\"shape\": \"tree\", \"depth\": 99},"
        " \"measurements\": [{\"threads\": 1, \"reps\": [{\"mark_ns\": 5}]}]}]}",
        "{\"format\": \"gcscale-corpus-entry\", \"version\": 1, \"heaps\": [{\"name\": \"h\", \"kind\": \"x\","
        " \"snapshot\": \"h.snap\", \"measurements\": [{\"threads\": 2, \"reps\": [{\"mark_ns\": 5}]}]}]}",
        "{\"format\": \"gcscale-corpus-entry\", \"version\": 1, \"heaps\": [{\"name\": \"h\", \"kind\": \"x\","
        " \"snapshot\": \"h.snap\", \"measurements\": [{\"threads\": 1, \"reps\": [{\"mark_ns\": -5}]}]}]}",
        "{\"format\": \"gcscale-corpus-entry\", \"version\": 1, \"profile\": \"/etc/p.json\", \"heaps\": []}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        json_t *doc = json_loads(refused[i], 0, NULL);
        gcs_err err;
        err.msg[0] = 0;
        assert_non_null(doc);
        assert_int_equal(_gcs_corpus_entry_check(doc, "t", &err), -1);
        assert_true(err.msg[0] && !strchr(err.msg, '\n'));
        json_decref(doc);
        fuzz_corpus_entry_one((const uint8_t *)refused[i], strlen(refused[i]));
    }
}

static void test_trace_target(void **state)
{
    (void)state;
    static const char *const seeds[] = {"tests/fuzz/trace-seeds/builtin.trace", "tests/fuzz/trace-seeds/sched.trace",
                                        /* found 2026-11-29: threads without events, pauses written (UBSan) */
                                        "tests/fuzz/regressions/trace-no-events.trace"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        size_t len;
        uint8_t *data = test_slurp(seeds[i], &len);
        run_variants(fuzz_trace_one, data, len, 1);
        free(data);
    }
    /* Traces the reader must refuse; accepting one breaks the target's
     * invariants (events in order within a thread's life). */
#define HDR "gcscale-trace 1\nsource builtin\nclock monotonic\nthread 1 5 main m\n"
    static const char *const refused[] = {
        HDR "e 7 1 gc-mark\ne 6 1 running\nend 9\n", /* out of order */
        HDR "e 4 1 running\nend 9\n",                 /* before the thread starts */
        HDR "e 7 1 running\nend 6\n",                 /* after the end */
    };
#undef HDR
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        fuzz_trace_one((const uint8_t *)refused[i], strlen(refused[i]));
}

static void test_gclog_target(void **state)
{
    (void)state;
    static const char *const seeds[] = {"tests/fuzz/gclog-seeds/in-trace.log", "tests/fuzz/gclog-seeds/parallel.log",
                                        "tests/fuzz/gclog-seeds/g1.log"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        size_t len;
        uint8_t *data = test_slurp(seeds[i], &len);
        run_variants(fuzz_gclog_one, data, len, 1);
        free(data);
    }
    /* Logs the reader must refuse, each with one line: pauses that overlap
     * by more than the ms figure's rounding (a clamp made the later one
     * start after it ended) and a duration whose ns do not fit. */
    static const char *const refused[] = {
        "[25000ns] GC(0) Pause Young 1M->0M(2M) 0.010ms\n[24000ns] GC(1) Pause Young 1M->0M(2M) 0.002ms\n",
        "[25000ns] GC(0) Pause Young 1M->0M(2M) 99999999999999999999999999.5ms\n",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const uint8_t *d = (const uint8_t *)refused[i];
        gcs_acct_pause *p = NULL;
        size_t n = 0;
        assert_int_equal(read_log(d, strlen(refused[i]), 0, UINT64_MAX, &p, &n), -1);
        fuzz_gclog_one(d, strlen(refused[i]));
    }
}

static void test_hprof_target(void **state)
{
    (void)state;
    hgen g = hprof_generate(40, 3, 256, 7); /* several segments, shuffled */
    run_variants(fuzz_hprof_one, g.p, g.n, 1);
    /* the generated graph exactly: 40 nodes, 3 Object[3], 3 int[8], 5 classes */
    gcs_err err;
    gcs_heapdump_report rep;
    gcs_snapshot *s = gcs_heapdump_import_hprof_mem(g.p, g.n, "gen", &rep, &err);
    if (!s)
        fail_msg("%s", err.msg);
    assert_int_equal(s->nobjects, 40 + 3 + 3 + 5);
    assert_int_equal(rep.references, 39 + 9 + 1 + 4); /* next, array slots, static head, superclasses */
    assert_int_equal(rep.missing_refs, 0);
    assert_int_equal(s->nroots, 1 + 5);
    gcs_snapshot_free(s);
    /* bad input, each one line naming the offset */
    static const struct { size_t at; uint8_t v; const char *want; } bad[] = {
        {22, 5, "offset 19: identifier size 5"},
        {17, '7', "offset 17: unsupported HPROF version"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t *c = malloc(g.n);
        memcpy(c, g.p, g.n);
        c[bad[i].at] = bad[i].v;
        assert_null(gcs_heapdump_import_hprof_mem(c, g.n, "bad", NULL, &err));
        if (!strstr(err.msg, bad[i].want))
            fail_msg("wanted \"%s\", got \"%s\"", bad[i].want, err.msg);
        free(c);
    }
    assert_null(gcs_heapdump_import_hprof_mem(g.p, g.n - 3, "cut", NULL, &err));
    assert_non_null(strstr(err.msg, "truncated dump"));
    free(g.p);
    /* found by make fuzz: instances while no class has a reference field,
     * a class while none has a static reference, an instance before any
     * class is known (an offset added to a NULL array; UBSan in
     * check-asan); HotSpot's gzip members whose classes have no field
     * (pass 1's count of a chunk's references for what it keeps: a zero
     * offset added to NULL, which clang's UBSan flags and gcc's does not --
     * build/fuzz/fuzz_hprof FILE replays it) */
    static const char *const found[] = {"tests/fuzz/regressions/hprof-no-reference-fields.hprof",
                                        "tests/fuzz/regressions/hprof-no-static-references.hprof",
                                        "tests/fuzz/regressions/hprof-instance-without-classes.hprof",
                                        "tests/fuzz/regressions/hprof-gzip-class-without-fields.hprof"};
    for (size_t i = 0; i < sizeof found / sizeof found[0]; i++) {
        size_t len;
        uint8_t *data = test_slurp(found[i], &len);
        fuzz_hprof_one(data, len);
        free(data);
    }
}

static void test_v8_target(void **state)
{
    (void)state;
    /* element edges that backing stores repeat (v8snap_graph.c, drop_element_copies):
     * the seed's prefixes and corruptions */
    size_t elen;
    uint8_t *edata = test_slurp("tests/fuzz/v8-seeds/elements.heapsnapshot", &elen);
    run_variants(fuzz_v8_one, edata, elen, 1);
    free(edata);
    for (int shape = V8GEN_LIST; shape <= V8GEN_RANDOM; shape++) {
        v8gen g = v8_generate(shape, 20, 3, 5);
        run_variants(fuzz_v8_one, (const uint8_t *)g.p, g.n, 1);
        gcs_err err;
        gcs_heapdump_report rep;
        gcs_snapshot *s = gcs_heapdump_import_v8_mem(g.p, g.n, "gen", &rep, &err);
        if (!s)
            fail_msg("%s", err.msg);
        /* the root and 19 nodes, all reachable; 2 weak edges (nodes 7, 15) */
        assert_int_equal(s->nobjects, 20);
        assert_int_equal(rep.weak_edges, 2);
        assert_int_equal(rep.unreachable_nodes, 0);
        uint64_t want = shape == V8GEN_LIST ? 1 + 18 : shape == V8GEN_TREE ? 1 + 18 : 1 + 18 + 19 * 2;
        assert_int_equal(rep.references, want);
        gcs_snapshot_free(s);
        free(g.p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_target),
        cmocka_unit_test(test_profile_target),
        cmocka_unit_test(test_trace_target),
        cmocka_unit_test(test_gclog_target),
        cmocka_unit_test(test_gcbench_result_target),
        cmocka_unit_test(test_corpus_floor_target),
        cmocka_unit_test(test_corpus_entry_target),
        cmocka_unit_test(test_hprof_target),
        cmocka_unit_test(test_v8_target),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
