/* test_gc_oom.c -- gc/: a mark whose stack cannot grow loses no object.
 *
 * malloc and realloc are wrapped (the Makefile links this test with
 * -Wl,--wrap=malloc,--wrap=realloc) and fail, for every thread, while the
 * test has memory "off": around gcs_gc_collect() and gcs_gc_remark(), so
 * neither the workers' private mark stacks nor their deques can grow.  The
 * heap needs far more than the 4096 stack + 1024 deque entries a worker
 * starts with, so entries are dropped and the collector must rescan
 * (stats.mark_rescans > 0).  Every reachable object must survive intact, and
 * exactly the reachable objects (the test makes some garbage too).  Before
 * the fix a P = 1 collection of this heap freed about 15,000 reachable
 * objects and returned 0.  Listed in tests/tsan-tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gcscale/gc.h"

void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
static atomic_int memory_off;
static atomic_long refused; /* allocations that failed on purpose */

void *__wrap_malloc(size_t n)
{
    if (atomic_load_explicit(&memory_off, memory_order_relaxed)) {
        atomic_fetch_add(&refused, 1);
        return NULL;
    }
    return __real_malloc(n);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (atomic_load_explicit(&memory_off, memory_order_relaxed)) {
        atomic_fetch_add(&refused, 1);
        return NULL;
    }
    return __real_realloc(p, n);
}

#define ROOTFAN 300 /* > GCS_GC_CHUNK_FIELDS: the root is marked in chunks */
#define FAN 128
#define LEAF_FIELDS 16
#define GARBAGE 5000

static uint64_t leaf_value(int i, int j) { return (uint64_t)i * 1000003u + (uint64_t)j * 7u + 11u; }

/* root (ROOTFAN fields) -> inner (FAN fields) -> leaf (LEAF_FIELDS fields
 * + a value) -> a pointer-free object holding the value's complement, which
 * every field of the leaf points to.  One chunk of the root alone pushes
 * 128 * 128 leaves, and the mark pushes every non-NULL field (it does not
 * look at the child first), so a rescan that finds an inner object's leaves
 * unmarked pushes 128 * LEAF_FIELDS entries and overflows again: the rescan
 * itself needs more than one round. */
static void *build(uint64_t *objects)
{
    void *root = gcs_gc_alloc(ROOTFAN * 8, ROOTFAN);
    assert_non_null(root);
    *objects = 1;
    for (int i = 0; i < ROOTFAN; i++) {
        void **inner = gcs_gc_alloc(FAN * 8, FAN);
        assert_non_null(inner);
        ((void **)root)[i] = inner;
        ++*objects;
        for (int j = 0; j < FAN; j++) {
            void **leaf = gcs_gc_alloc((LEAF_FIELDS + 1) * 8, LEAF_FIELDS);
            uint64_t *data = gcs_gc_alloc_data(8);
            assert_non_null(leaf);
            assert_non_null(data);
            *data = ~leaf_value(i, j);
            for (int k = 0; k < LEAF_FIELDS; k++)
                leaf[k] = data;
            ((uint64_t *)leaf)[LEAF_FIELDS] = leaf_value(i, j);
            inner[j] = leaf;
            *objects += 2;
        }
        for (int g = 0; g < GARBAGE / ROOTFAN; g++) /* unreachable */
            assert_non_null(gcs_gc_alloc(24, 1));
    }
    return root;
}

static uint64_t header(const void *obj) { return ((const uint64_t *)obj)[-1]; }

/* Every reachable object still allocated (header not 0) with its values. */
static void check_intact(void *root)
{
    uint64_t bad = 0;
    for (int i = 0; i < ROOTFAN; i++) {
        void **inner = ((void **)root)[i];
        if (!inner || header(inner) == 0) {
            bad++;
            continue;
        }
        for (int j = 0; j < FAN; j++) {
            void **leaf = inner[j];
            if (!leaf || header(leaf) == 0 || ((uint64_t *)leaf)[LEAF_FIELDS] != leaf_value(i, j)) {
                bad++;
                continue;
            }
            uint64_t *data = leaf[LEAF_FIELDS - 1];
            if (!data || header(data) == 0 || *data != ~leaf_value(i, j) || leaf[0] != data)
                bad++;
        }
    }
    if (bad)
        fprintf(stderr, "%llu reachable objects freed or damaged\n", (unsigned long long)bad);
    assert_int_equal(bad, 0);
}

static void oom_case(int threads, gcs_gc_mark_mode mode)
{
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.threads = threads;
    o.mark_mode = mode;
    o.heap_limit = 64u << 20;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    uint64_t expected;
    void *root = build(&expected);
    assert_int_equal(gcs_gc_push_root(&root), 0);

    /* A re-mark with no memory: nothing is freed by it, but its counts must
     * be complete and the mark table must be left clear. */
    gcs_gc_stats st;
    atomic_store(&refused, 0);
    atomic_store(&memory_off, 1);
    int rc = gcs_gc_remark(threads, &st);
    atomic_store(&memory_off, 0);
    assert_int_equal(rc, 0);
    assert_true(atomic_load(&refused) > 0);
    assert_true(st.mark_rescans > 0);
    assert_int_equal(st.live_objects, expected);

    /* A collection with no memory: the stacks are still at their first
     * size (a failed realloc keeps them), so the mark overflows again. */
    atomic_store(&refused, 0);
    atomic_store(&memory_off, 1);
    rc = gcs_gc_collect();
    atomic_store(&memory_off, 0);
    assert_int_equal(rc, 0);
    assert_true(atomic_load(&refused) > 0);
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    if (getenv("GCS_TEST_VERBOSE"))
        fprintf(stderr, "P=%d %s: %llu rescan rounds, %ld allocations refused\n", threads,
                gcs_gc_mark_mode_name(mode), (unsigned long long)st.mark_rescans, atomic_load(&refused));
    assert_true(st.mark_rescans > 1); /* the rescan overflowed too (see build) */
    assert_int_equal(st.live_objects, expected);
    assert_true(st.freed_objects >= GARBAGE - ROOTFAN);
    check_intact(root);
    uint64_t objects;
    gcs_gc_census(&objects, NULL);
    assert_int_equal(objects, expected);

    /* With memory again: a clean collection, nothing more freed. */
    assert_int_equal(gcs_gc_collect(), 0);
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.mark_rescans, 0);
    assert_int_equal(st.live_objects, expected);
    assert_int_equal(st.freed_objects, 0);
    check_intact(root);
    gcs_gc_shutdown();
}

static void test_oom_p1(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++)
        oom_case(1, (gcs_gc_mark_mode)m);
}

static void test_oom_p2(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++)
        oom_case(2, (gcs_gc_mark_mode)m);
}

static void test_oom_p4(void **state)
{
    (void)state;
    oom_case(4, GCS_GC_MARK_RELAXED_BYTES);
}

/* A failed case must not leave its collector to the next one. */
static int teardown(void **state)
{
    (void)state;
    atomic_store(&memory_off, 0);
    if (gcs_gc_is_initialized())
        gcs_gc_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_oom_p1, teardown),
        cmocka_unit_test_teardown(test_oom_p2, teardown),
        cmocka_unit_test_teardown(test_oom_p4, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
