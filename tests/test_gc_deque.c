/* test_gc_deque.c -- gc/'s Chase-Lev work-stealing deque: order, growth, and
 * an owner racing with concurrent thieves (every entry taken exactly once). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../gc/deque.h"

static void test_deque_order_and_growth(void **state)
{
    (void)state;
    gcs_deque dq;
    assert_int_equal(_gcs_deque_init(&dq, 16), 0);
    gcs_mark_entry e;
    assert_int_equal(_gcs_deque_take(&dq, &e), 0);
    assert_int_equal(_gcs_deque_steal(&dq, &e), GCS_STEAL_EMPTY);
    for (uintptr_t i = 1; i <= 1000; i++) /* grows 16 -> 1024 */
        assert_int_equal(_gcs_deque_push(&dq, (gcs_mark_entry){i * 8, i}), 0);
    assert_int_equal(gcs_deque_size_hint(&dq), 1000);
    /* thieves take the oldest, the owner the newest */
    assert_int_equal(_gcs_deque_steal(&dq, &e), GCS_STEAL_OK);
    assert_int_equal(e.begin, 8);
    assert_int_equal(e.end, 1);
    assert_int_equal(_gcs_deque_take(&dq, &e), 1);
    assert_int_equal(e.begin, 8000);
    for (uintptr_t i = 999; i >= 2; i--) {
        assert_int_equal(_gcs_deque_take(&dq, &e), 1);
        assert_int_equal(e.begin, i * 8);
    }
    assert_int_equal(_gcs_deque_take(&dq, &e), 0);
    assert_int_equal(gcs_deque_size_hint(&dq), 0);
    _gcs_deque_destroy(&dq);
}

#define ITEMS 200000
#define THIEVES 3

typedef struct race {
    gcs_deque dq;
    _Atomic int done;
    _Atomic unsigned char *seen; /* how many times each item was obtained */
} race;

static void record(race *r, gcs_mark_entry e)
{
    uintptr_t i = e.begin;
    if (i < 1 || i > ITEMS || e.end != i + 1) { /* torn or invented entry */
        atomic_fetch_add(&r->seen[0], 1);
        return;
    }
    atomic_fetch_add(&r->seen[i], 1);
}

static void *thief(void *arg)
{
    race *r = arg;
    gcs_mark_entry e;
    for (;;) {
        gcs_steal_result s = _gcs_deque_steal(&r->dq, &e);
        if (s == GCS_STEAL_OK)
            record(r, e);
        else if (s == GCS_STEAL_EMPTY && atomic_load(&r->done))
            break;
    }
    return NULL;
}

static void test_deque_concurrent_thieves(void **state)
{
    (void)state;
    race r;
    assert_int_equal(_gcs_deque_init(&r.dq, 16), 0); /* small: growth races with steals */
    atomic_init(&r.done, 0);
    r.seen = calloc(ITEMS + 1, 1);
    assert_non_null(r.seen);
    pthread_t t[THIEVES];
    for (int i = 0; i < THIEVES; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thief, &r), 0);
    /* The owner pushes in bursts and takes some back, so both ends are busy
     * and the last-entry race between take and steal happens often. */
    uintptr_t next = 1;
    unsigned rng = 12345;
    gcs_mark_entry e;
    while (next <= ITEMS) {
        rng = rng * 1103515245u + 12345u;
        int burst = 1 + (int)((rng >> 16) % 64);
        for (int k = 0; k < burst && next <= ITEMS; k++, next++)
            assert_int_equal(_gcs_deque_push(&r.dq, (gcs_mark_entry){next, next + 1}), 0);
        int takes = (int)((rng >> 8) % 48);
        for (int k = 0; k < takes; k++)
            if (_gcs_deque_take(&r.dq, &e))
                record(&r, e);
    }
    while (_gcs_deque_take(&r.dq, &e))
        record(&r, e);
    atomic_store(&r.done, 1);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(t[i], NULL);
    /* thieves may still have emptied the deque under us: drain the rest */
    while (_gcs_deque_take(&r.dq, &e))
        record(&r, e);
    assert_int_equal(atomic_load(&r.seen[0]), 0);
    size_t missing = 0, twice = 0;
    for (size_t i = 1; i <= ITEMS; i++) {
        unsigned char n = atomic_load(&r.seen[i]);
        missing += n == 0;
        twice += n > 1;
    }
    assert_int_equal(missing, 0);
    assert_int_equal(twice, 0);
    free((void *)r.seen);
    _gcs_deque_destroy(&r.dq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deque_order_and_growth),
        cmocka_unit_test(test_deque_concurrent_thieves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
