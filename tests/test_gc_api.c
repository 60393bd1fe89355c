/* test_gc_api.c -- gc/: the collector's API called while a collection runs.
 *
 * Settings changed by another thread during collections (the mark and the
 * sweep must agree on one mark mode per collection).  Listed in
 * tests/tsan-tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/gc.h"

/* ---- mark mode and instrumentation changed during collections ---------------- */

static atomic_int toggler_stop;

/* Not attached: it touches no GC object, so gc.h lets it call the setters at
 * any time.  Every mode and both instrumentation settings, as fast as it can:
 * before the fix, a change that landed between the mark and the sweep made
 * the sweep read the mark table the mark had not written, and free the whole
 * live list. */
static void *toggler(void *arg)
{
    (void)arg;
    unsigned k = 0;
    while (!atomic_load(&toggler_stop)) {
        gcs_gc_set_mark_mode((gcs_gc_mark_mode)(k % 3));
        gcs_gc_set_instrumentation((k / 3) & 1);
        k++;
    }
    return NULL;
}

#define RACE_NODES 20000

static void test_mark_mode_changed_during_collections(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.threads = 2;
    o.heap_limit = 64u << 20;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *list = NULL;
    assert_int_equal(gcs_gc_push_root(&list), 0);
    for (int i = 0; i < RACE_NODES; i++) {
        void *n = gcs_gc_alloc(16, 1);
        assert_non_null(n);
        ((void **)n)[0] = list;
        ((uint64_t *)n)[1] = (uint64_t)i;
        list = n;
    }
    atomic_store(&toggler_stop, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, toggler, NULL), 0);
    int bad = 0;
    for (int round = 0; round < 300 && !bad; round++) {
        assert_int_equal(gcs_gc_collect(), 0);
        gcs_gc_stats st;
        assert_int_equal(gcs_gc_last_stats(&st), 0);
        uint64_t k = 0;
        for (void **p = list; p; p = p[0], k++)
            if (((uint64_t *)p)[-1] == 0 || ((uint64_t *)p)[1] != (uint64_t)(RACE_NODES - 1 - k)) {
                fprintf(stderr, "round %d: reachable node %llu was freed (collection marked in %s)\n", round,
                        (unsigned long long)k, gcs_gc_mark_mode_name(st.mark_mode));
                bad = 1;
                break;
            }
        if (!bad && st.live_objects != RACE_NODES) {
            fprintf(stderr, "round %d: live_objects %llu, not %d (%s)\n", round,
                    (unsigned long long)st.live_objects, RACE_NODES, gcs_gc_mark_mode_name(st.mark_mode));
            bad = 1;
        }
    }
    atomic_store(&toggler_stop, 1);
    pthread_join(t, NULL);
    assert_false(bad);
    /* No stale marks in either table: make half the list garbage, and every
     * mode must then free exactly that half. */
    void **p = list;
    for (int k = 0; k < RACE_NODES / 2 - 1; k++)
        p = p[0];
    p[0] = NULL;
    for (int m = 0; m < 3; m++) {
        gcs_gc_set_mark_mode((gcs_gc_mark_mode)m);
        assert_int_equal(gcs_gc_collect(), 0);
        gcs_gc_stats st;
        assert_int_equal(gcs_gc_last_stats(&st), 0);
        assert_int_equal(st.mark_mode, m);
        assert_int_equal(st.live_objects, RACE_NODES / 2);
        uint64_t objects;
        gcs_gc_census(&objects, NULL);
        assert_int_equal(objects, RACE_NODES / 2);
    }
    gcs_gc_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mark_mode_changed_during_collections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
