/* deque.c -- Chase-Lev work-stealing deque with C11 atomics (see deque.h).
 *
 * Why it is correct, in brief (Le et al. 2013 prove the same orders):
 *  - push writes the slot, then publishes it with a release store of `newest`;
 *    a thief's acquire load of `newest` therefore sees the slot's contents.
 *  - take lowers `newest` first and only then (after a seq_cst fence) reads
 *    `oldest`; steal reads `oldest`, fences, then reads `newest`.  With both
 *    fences in the single total order, owner and thief cannot both miss each
 *    other's claim on the last entry: when one entry is left both race with
 *    a CAS on `oldest` and exactly one wins.
 *  - A thief reads the slot before its CAS; if the owner has meanwhile wrapped
 *    around and overwritten it, `oldest` has moved and the CAS fails, so the
 *    torn value is discarded.  Slots are atomics, so that read is not a race.
 *  - Growing copies the live range into a new array and publishes it with a
 *    release store; the old array stays readable (retired, freed only when no
 *    thief can hold it: between collections), so a slow thief reading the old
 *    array reads a valid copy, and its CAS decides as before.
 */
#include <stdlib.h>

#include "../common/internal.h"
#include "deque.h"

static gcs_deque_array *deque_array_new(int64_t capacity)
{
    /* slots are found by index & mask */
    gcs_assert_internal(capacity > 0 && (capacity & (capacity - 1)) == 0);
    gcs_deque_array *a = malloc(sizeof *a + (size_t)capacity * sizeof(gcs_deque_slot));
    if (!a)
        return NULL;
    a->mask = capacity - 1;
    a->retired = NULL;
    for (int64_t i = 0; i < capacity; i++) {
        atomic_init(&a->slots[i].begin, 0);
        atomic_init(&a->slots[i].end, 0);
    }
    return a;
}

int _gcs_deque_init(gcs_deque *dq, int64_t capacity)
{
    int64_t cap = 16;
    while (cap < capacity)
        cap *= 2;
    gcs_deque_array *a = deque_array_new(cap);
    if (!a)
        return -1;
    atomic_init(&dq->oldest, 0);
    atomic_init(&dq->newest, 0);
    atomic_init(&dq->array, a);
    return 0;
}

void _gcs_deque_release_retired(gcs_deque *dq)
{
    gcs_deque_array *a = atomic_load_explicit(&dq->array, memory_order_relaxed);
    gcs_deque_array *r = a->retired;
    a->retired = NULL;
    while (r) {
        gcs_deque_array *next = r->retired;
        free(r);
        r = next;
    }
}

void _gcs_deque_destroy(gcs_deque *dq)
{
    _gcs_deque_release_retired(dq);
    free(atomic_load_explicit(&dq->array, memory_order_relaxed));
    atomic_store_explicit(&dq->array, NULL, memory_order_relaxed);
}

static void slot_store(gcs_deque_array *a, int64_t i, gcs_mark_entry e)
{
    gcs_deque_slot *s = &a->slots[i & a->mask];
    atomic_store_explicit(&s->begin, e.begin, memory_order_relaxed);
    atomic_store_explicit(&s->end, e.end, memory_order_relaxed);
}

static gcs_mark_entry slot_load(gcs_deque_array *a, int64_t i)
{
    gcs_deque_slot *s = &a->slots[i & a->mask];
    gcs_mark_entry e;
    e.begin = atomic_load_explicit(&s->begin, memory_order_relaxed);
    e.end = atomic_load_explicit(&s->end, memory_order_relaxed);
    return e;
}

static gcs_deque_array *deque_grow(gcs_deque *dq, gcs_deque_array *a, int64_t oldest, int64_t newest)
{
    gcs_assert_internal(oldest <= newest && newest - oldest <= a->mask + 1);
    gcs_deque_array *b = deque_array_new(2 * (a->mask + 1));
    if (!b)
        return NULL;
    for (int64_t i = oldest; i < newest; i++)
        slot_store(b, i, slot_load(a, i));
    b->retired = a;
    atomic_store_explicit(&dq->array, b, memory_order_release);
    return b;
}

int _gcs_deque_push(gcs_deque *dq, gcs_mark_entry e)
{
    int64_t n = atomic_load_explicit(&dq->newest, memory_order_relaxed);
    int64_t o = atomic_load_explicit(&dq->oldest, memory_order_acquire);
    gcs_deque_array *a = atomic_load_explicit(&dq->array, memory_order_relaxed);
    /* thieves advance `oldest` only up to `newest`, which only the owner moves */
    gcs_assert_internal(o <= n);
    if (n - o > a->mask) {
        a = deque_grow(dq, a, o, n);
        if (!a)
            return -1;
    }
    slot_store(a, n, e);
    atomic_store_explicit(&dq->newest, n + 1, memory_order_release);
    return 0;
}

int _gcs_deque_take(gcs_deque *dq, gcs_mark_entry *out)
{
    int64_t n = atomic_load_explicit(&dq->newest, memory_order_relaxed) - 1;
    gcs_deque_array *a = atomic_load_explicit(&dq->array, memory_order_relaxed);
    atomic_store_explicit(&dq->newest, n, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    int64_t o = atomic_load_explicit(&dq->oldest, memory_order_relaxed);
    gcs_assert_internal(o <= n + 1); /* `oldest` never passes the `newest` before this take */
    if (o > n) { /* was empty */
        atomic_store_explicit(&dq->newest, n + 1, memory_order_relaxed);
        return 0;
    }
    *out = slot_load(a, n);
    if (o == n) { /* the last entry: race the thieves for it */
        int won = atomic_compare_exchange_strong_explicit(&dq->oldest, &o, o + 1,
                                                          memory_order_seq_cst,
                                                          memory_order_relaxed);
        atomic_store_explicit(&dq->newest, n + 1, memory_order_relaxed);
        return won;
    }
    return 1;
}

gcs_steal_result _gcs_deque_steal(gcs_deque *dq, gcs_mark_entry *out)
{
    int64_t o = atomic_load_explicit(&dq->oldest, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst);
    int64_t n = atomic_load_explicit(&dq->newest, memory_order_acquire);
    if (o >= n)
        return GCS_STEAL_EMPTY;
    gcs_deque_array *a = atomic_load_explicit(&dq->array, memory_order_acquire);
    gcs_mark_entry e = slot_load(a, o);
    if (!atomic_compare_exchange_strong_explicit(&dq->oldest, &o, o + 1,
                                                 memory_order_seq_cst, memory_order_relaxed))
        return GCS_STEAL_ABORT;
    *out = e;
    return GCS_STEAL_OK;
}
