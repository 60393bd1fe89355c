/* test_workloads.c -- workloads/: each workload runs small with 1 and 2
 * mutators and P = 1, 2 GC threads under an allocation budget that forces
 * several collections, and must pass its own verification (which compares
 * with an independent reference); known answers for the cube's exact search
 * and the grammar's parse counts; error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/gc.h"
#include "gcscale/workload.h"
#include "../workloads/cky_grammar.h"

static gcs_workload_gclog gclog;

static void init_gc(int p, size_t heap, size_t budget)
{
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = heap;
    o.threads = p;
    o.max_threads = p;
    o.alloc_budget = budget;
    o.ignore_threads_env = 1;
    gcs_workload_gclog_install(&o, &gclog);
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
}

static void done_gc(void)
{
    gcs_gc_shutdown();
    gcs_workload_gclog_free(&gclog);
}

/* One run; checks the verdict, the collections and the time accounting. */
static void run_one(const char *name, int m, int p, uint64_t size, uint64_t steps)
{
    init_gc(p, 32u << 20, 256u << 10);
    gcs_workload_options wo;
    gcs_workload_options_init(&wo);
    wo.name = name;
    wo.mutators = m;
    wo.size = size;
    wo.steps = steps;
    wo.seed = 7;
    wo.gclog = &gclog;
    gcs_workload_result res;
    gcs_err err = {{0}};
    int rc = gcs_workload_run(&wo, &res, &err);
    if (rc != 0 || !res.verified || getenv("GCS_TEST_VERBOSE"))
        fprintf(stderr, "# %s M=%d P=%d: rc %d, %s%s, %llu collections, wall %.1f ms\n", name, m, p, rc,
                err.msg, res.verify_msg, (unsigned long long)res.collections, res.wall_ns / 1e6);
    assert_int_equal(rc, 0);
    assert_true(res.verified);
    assert_true(res.collections > 0);
    assert_int_equal(res.gc_count, res.collections);
    assert_true(res.gc_timed);
    assert_true(res.gc_pause_ns > 0 && res.gc_pause_ns <= res.wall_ns);
    assert_true(res.mutator_ns + res.gc_pause_ns == res.wall_ns);
    for (size_t i = res.gc_first; i < res.gc_first + res.gc_count; i++)
        assert_int_equal(gclog.rows[i].threads, p);
    assert_int_equal(res.mutators, m);
    assert_int_equal(res.size, size);
    done_gc();
}

static void each_config(const char *name, uint64_t size, uint64_t steps)
{
    for (int m = 1; m <= 2; m++)
        for (int p = 1; p <= 2; p++)
            run_one(name, m, p, size, steps);
}

static void test_bh(void **state)
{
    (void)state;
    each_config("bh", 3000, 4);
}

static void test_cube(void **state)
{
    (void)state;
    each_config("cube", 3000, 8);
}

static void test_cky(void **state)
{
    (void)state;
    each_config("cky", 300, 2);
}

/* The queue (a 256 KiB allocation budget makes the collections): the
 * queue's values and the temporary lists' sums, at P = 1 and 2. */
static void test_chain(void **state)
{
    (void)state;
    each_config("chain", 20000, 8);
}

/* What makes chain's collections best at one GC thread (docs/workloads.md,
 * "chain"): after the set-up, every collection's live heap is the ring and
 * a few buffers, one worker marks the whole ring (nothing to share: the
 * tail has no root of its own, which would start a second worker half way
 * round), and every object the sweep frees is a whole-page buffer (no small
 * garbage whose slots the sweep would visit). */
typedef struct chain_row {
    uint64_t live, max_scanned, freed, pages_freed;
} chain_row;
static chain_row chain_rows[256];
static size_t nchain_rows;

static void chain_hook(const gcs_gc_stats *st, void *arg)
{
    (void)arg;
    if (nchain_rows >= 256)
        return;
    chain_row *r = &chain_rows[nchain_rows++];
    r->live = st->live_objects;
    r->freed = st->freed_objects;
    r->pages_freed = st->pages_freed;
    r->max_scanned = 0;
    for (int i = 0; i < st->threads; i++)
        if (st->workers[i].objects_scanned > r->max_scanned)
            r->max_scanned = st->workers[i].objects_scanned;
}

static void test_chain_shape(void **state)
{
    (void)state;
    const uint64_t size = 20000;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 2u << 20;
    o.threads = o.max_threads = 2;
    o.ignore_threads_env = 1;
    o.on_collection = chain_hook;
    nchain_rows = 0;
    gcs_workload_gclog_install(&o, &gclog);
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    gcs_workload_options wo;
    gcs_workload_options_init(&wo);
    wo.name = "chain";
    wo.mutators = 2;
    wo.size = size;
    wo.steps = 16;
    wo.gclog = &gclog;
    gcs_workload_result res;
    assert_int_equal(gcs_workload_run(&wo, &res, &err), 0);
    assert_true(res.verified);
    assert_true(res.gc_count >= 4);
    assert_int_equal(nchain_rows, gclog.n);
    for (size_t i = res.gc_first; i < res.gc_first + res.gc_count; i++) {
        const chain_row *r = &chain_rows[i];
        if (getenv("GCS_TEST_VERBOSE"))
            fprintf(stderr, "# chain collection %zu: live %llu, one worker scanned %llu, freed %llu objects, %llu pages\n",
                    i, (unsigned long long)r->live, (unsigned long long)r->max_scanned, (unsigned long long)r->freed,
                    (unsigned long long)r->pages_freed);
        assert_true(r->live >= size && r->live <= size + 4);
        assert_true(r->max_scanned >= size);
        assert_true(r->freed <= r->pages_freed);
    }
    done_gc();
}

/* A 3-move scramble with a beam wider than the third level is an exact
 * breadth-first search: it must be solved in at most 3 moves. */
static void test_cube_exact(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        init_gc(2, 16u << 20, 0);
        gcs_workload_options wo;
        gcs_workload_options_init(&wo);
        wo.name = "cube";
        wo.mutators = 2;
        wo.size = 5000;
        wo.steps = 3;
        wo.seed = seed;
        gcs_workload_result res;
        gcs_err err;
        assert_int_equal(gcs_workload_run(&wo, &res, &err), 0);
        assert_true(res.verified);
        double solved = -1, moves = -1;
        for (int i = 0; i < res.nfigures; i++) {
            if (strcmp(res.figures[i].name, "solved") == 0)
                solved = res.figures[i].value;
            if (strcmp(res.figures[i].name, "solution_moves") == 0)
                moves = res.figures[i].value;
        }
        assert_true(solved == 1);
        assert_true(moves >= 1 && moves <= 3);
        done_gc();
    }
}

static int parse_sentence(const char *text, int *words)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    int n = 0;
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        int id = -1;
        for (int k = 0; k < _gcs_cky_nwords(); k++)
            if (strcmp(_gcs_cky_word_text(k), w) == 0)
                id = k;
        assert_true(id >= 0);
        words[n++] = id;
    }
    return n;
}

/* Parse counts worked out by hand: PP attachment gives Catalan numbers. */
static void test_cky_known_counts(void **state)
{
    (void)state;
    int w[CKY_MAX_LEN];
    struct { const char *s; uint64_t count; } cases[] = {
        {"john sleeps", 1},
        {"john saw mary", 1},
        {"john saw the man with the telescope", 2},
        {"john saw the man in the park with the telescope", 5},
        {"john saw the man in the park with the telescope on the hill", 14},
        {"the dog runs and the cat sleeps", 1},
        {"john sleeps john", 0},
        {"the the dog sleeps", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = parse_sentence(cases[i].s, w);
        uint64_t got = _gcs_cky_count_reference(w, n);
        if (got != cases[i].count)
            fprintf(stderr, "# '%s': %llu parses, expected %llu\n", cases[i].s, (unsigned long long)got,
                    (unsigned long long)cases[i].count);
        assert_int_equal(got, cases[i].count);
    }
    /* generated sentences are grammatical and deterministic */
    for (uint64_t k = 0; k < 50; k++) {
        int a[CKY_MAX_LEN], b[CKY_MAX_LEN];
        int n = _gcs_cky_generate(3, k, a);
        assert_int_equal(_gcs_cky_generate(3, k, b), n);
        assert_memory_equal(a, b, (size_t)n * sizeof a[0]);
        assert_true(n >= CKY_MIN_LEN && n <= CKY_MAX_LEN);
        assert_true(_gcs_cky_count_reference(a, n) >= 1);
    }
}

/* The default heap grows with the mutators (gcs_workload_default_heap);
 * cky at its default size with 16 mutators runs in it.  (A flat 48 MiB ran
 * out once in 85 such runs on a 16-CPU machine: the mutators' own pages,
 * one per size class each, ate the room a collection had freed.) */
static void test_default_heap_many_mutators(void **state)
{
    (void)state;
    const gcs_workload_info *cky = gcs_workload_find("cky");
    assert_int_equal(gcs_workload_default_heap(cky, 1), cky->default_heap + GCS_WORKLOAD_HEAP_PER_MUTATOR);
    assert_int_equal(gcs_workload_default_heap(cky, 16), cky->default_heap + 16 * GCS_WORKLOAD_HEAP_PER_MUTATOR);
    assert_int_equal(gcs_workload_default_heap(cky, 0), gcs_workload_default_heap(cky, 1));
    init_gc(2, gcs_workload_default_heap(cky, 16), 0);
    gcs_workload_options wo;
    gcs_workload_options_init(&wo);
    wo.name = "cky";
    wo.mutators = 16;
    wo.steps = 2; /* the ring of kept forests is full after the first round */
    wo.gclog = &gclog;
    gcs_workload_result res;
    gcs_err err = {{0}};
    int rc = gcs_workload_run(&wo, &res, &err);
    if (rc != 0)
        fprintf(stderr, "# cky M=16: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_true(res.verified);
    assert_true(res.collections > 0);
    done_gc();
}

static void test_errors(void **state)
{
    (void)state;
    gcs_workload_options wo;
    gcs_workload_result res;
    gcs_err err;
    gcs_workload_options_init(&wo);
    wo.name = "bh";
    /* no collector */
    assert_int_equal(gcs_workload_run(&wo, &res, &err), -1);
    init_gc(1, 2u << 20, 0);
    wo.name = "nbody";
    assert_int_equal(gcs_workload_run(&wo, &res, &err), -1);
    assert_non_null(strstr(err.msg, "unknown workload"));
    wo.name = "cube";
    wo.mutators = 0;
    assert_int_equal(gcs_workload_run(&wo, &res, &err), -1);
    wo.mutators = 1;
    wo.size = gcs_workload_find("cube")->max_size + 1;
    assert_int_equal(gcs_workload_run(&wo, &res, &err), -1);
    /* a heap too small for the live data: -1 with the collector's reason */
    wo.name = "bh";
    wo.size = 100000;
    wo.steps = 1;
    wo.mutators = 2;
    assert_int_equal(gcs_workload_run(&wo, &res, &err), -1);
    assert_non_null(strstr(err.msg, "heap"));
    /* the caller must be attached */
    gcs_gc_detach();
    wo.size = 100;
    assert_int_equal(gcs_workload_run(&wo, &res, &err), -1);
    assert_non_null(strstr(err.msg, "attached"));
    assert_int_equal(gcs_gc_attach(&err), 0);
    done_gc();
    /* the registry */
    const char *const *names = gcs_workload_names();
    assert_int_equal(gcs_workload_count(), 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(names[i], gcs_workload_info_at(i)->name);
        assert_ptr_equal(gcs_workload_find(names[i]), gcs_workload_info_at(i));
    }
    assert_null(names[4]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_default_heap_many_mutators),
        cmocka_unit_test(test_cky_known_counts),
        cmocka_unit_test(test_cube_exact),
        cmocka_unit_test(test_bh),
        cmocka_unit_test(test_cube),
        cmocka_unit_test(test_cky),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_chain_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
