/* test_gc_stress.c -- gc/: several mutator threads allocate, link and drop
 * objects while collections happen (budget, heap-full and explicit requests
 * from different threads); threads attach and detach on the way.  Each
 * thread checks its own live structures after every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/gc.h"

#define MUTATORS 4
#define STEPS 3000

/* node: [0] next, [1] side (a small tree hanging off), [2] id, [3] check */
static uint64_t check_of(uint64_t id) { return id * 0x9e3779b97f4a7c15ull + 7; }

typedef struct mut {
    int index;
    int failures;
    uint64_t collections_requested;
} mut;

static void *mutator(void *arg)
{
    mut *me = arg;
    gcs_err err;
    if (gcs_gc_attach(&err) < 0) {
        me->failures++;
        return NULL;
    }
    void *list = NULL, *tmp = NULL;
    gcs_gc_push_root(&list);
    gcs_gc_push_root(&tmp);
    uint64_t next_id = (uint64_t)me->index << 40, len = 0;
    uint64_t rng = 88172645463325252ull + (uint64_t)me->index;
    for (int step = 0; step < STEPS; step++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        /* add a node with a side object (the side object is allocated
         * first and kept in a shadow-stack slot across the next allocation) */
        tmp = gcs_gc_alloc(8 * (2 + rng % 20), 1);
        if (!tmp) {
            fprintf(stderr, "mutator %d, step %d: %s\n", me->index, step, gcs_gc_last_error());
            me->failures++;
            break;
        }
        void *n = gcs_gc_alloc(32, 2);
        if (!n) {
            fprintf(stderr, "mutator %d, step %d: %s\n", me->index, step, gcs_gc_last_error());
            me->failures++;
            break;
        }
        ((void **)n)[0] = list;
        ((void **)n)[1] = tmp;
        ((uint64_t *)n)[2] = next_id;
        ((uint64_t *)n)[3] = check_of(next_id);
        ((void **)tmp)[0] = n; /* a cycle */
        next_id++;
        list = n;
        len++;
        tmp = NULL;
        gcs_gc_alloc_data(8 * (1 + rng % 64)); /* garbage */
        if (rng % 97 == 0) { /* drop everything past the first few nodes */
            void *p = list;
            for (int k = 0; k < 5 && p; k++)
                p = ((void **)p)[0];
            if (p) {
                ((void **)p)[0] = NULL;
                len = 6;
            }
        }
        if (me->index < 2 && step % 500 == 250) {
            gcs_gc_collect();
            me->collections_requested++;
        }
        gcs_gc_safepoint();
        /* verify this thread's list */
        if (step % 50 == 0) {
            uint64_t count = 0;
            for (void *p = list; p; p = ((void **)p)[0]) {
                uint64_t id = ((uint64_t *)p)[2];
                void *side = ((void **)p)[1];
                if (((uint64_t *)p)[3] != check_of(id) || !side || ((void **)side)[0] != p) {
                    fprintf(stderr, "mutator %d, step %d: a node of its list is damaged\n", me->index, step);
                    me->failures++;
                }
                count++;
            }
            if (count != len) {
                fprintf(stderr, "mutator %d, step %d: its list has %llu nodes, not %llu\n", me->index, step,
                        (unsigned long long)count, (unsigned long long)len);
                me->failures++;
            }
        }
        if (me->index == MUTATORS - 1 && step % 700 == 0) {
            /* leave and come back: its structure is dropped with its roots */
            gcs_gc_pop_roots(2);
            gcs_gc_detach();
            if (gcs_gc_attach(&err) < 0) {
                me->failures++;
                return NULL;
            }
            list = tmp = NULL;
            len = 0;
            gcs_gc_push_root(&list);
            gcs_gc_push_root(&tmp);
        }
    }
    gcs_gc_pop_roots(2);
    gcs_gc_detach();
    return NULL;
}

static void stress(gcs_gc_mark_mode mode, size_t heap, size_t budget)
{
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = heap;
    o.threads = 3;
    o.mark_mode = mode;
    o.alloc_budget = budget;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    gcs_gc_detach(); /* this thread only waits */
    pthread_t t[MUTATORS];
    mut m[MUTATORS];
    for (int i = 0; i < MUTATORS; i++) {
        m[i] = (mut){.index = i};
        assert_int_equal(pthread_create(&t[i], NULL, mutator, &m[i]), 0);
    }
    for (int i = 0; i < MUTATORS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(m[i].failures, 0);
    }
    assert_true(gcs_gc_collections() >= m[0].collections_requested + m[1].collections_requested);
    if (getenv("GCS_TEST_VERBOSE"))
        fprintf(stderr, "collections: %llu\n", (unsigned long long)gcs_gc_collections());
    assert_int_equal(gcs_gc_attach(&err), 0);
    gcs_gc_collect(); /* every thread detached: nothing is live */
    uint64_t objects;
    gcs_gc_census(&objects, NULL);
    assert_int_equal(objects, 0);
    gcs_gc_shutdown();
}

static void test_stress_budget(void **state)
{
    (void)state;
    stress(GCS_GC_MARK_RELAXED_BYTES, 8u << 20, 2u << 20);
}

static void test_stress_heap_full(void **state)
{
    (void)state;
    stress(GCS_GC_MARK_ATOMIC_BITS, 4u << 20, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stress_budget),
        cmocka_unit_test(test_stress_heap_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
