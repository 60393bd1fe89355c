/* deque.h -- gc/ internal: the work-stealing deque of mark-stack entries.
 *
 * Chase and Lev's growable circular deque ("Dynamic circular work-stealing
 * deque", SPAA 2005) with the C11 memory orders of Le, Pop, Cohen and Zappa
 * Nardelli ("Correct and efficient work-stealing for weak memory models",
 * PPoPP 2013).  One owner pushes and takes at the top (newest end); any number
 * of thieves steal at the bottom (oldest end), which is what lazy task
 * creation steals.  Every shared location is a C11 atomic, so the deque is
 * data-race free in the C11 sense and ThreadSanitizer-clean.
 *
 * Naming: the paper's "bottom" index is the owner's end (newest entries) and
 * its "top" is the thieves' end (oldest).  Here they are called `newest` and
 * `oldest` to avoid the upside-down terminology.
 */
#ifndef GCSCALE_GC_DEQUE_H
#define GCSCALE_GC_DEQUE_H

#include <stdatomic.h>
#include <stdint.h>

/* A mark-stack entry: an object (begin = object, end = 0) or a run of pointer
 * fields [begin, end) of a large pointer array. */
typedef struct gcs_mark_entry {
    uintptr_t begin, end;
} gcs_mark_entry;

typedef struct gcs_deque_slot {
    _Atomic uintptr_t begin, end;
} gcs_deque_slot;

typedef struct gcs_deque_array {
    int64_t mask;                  /* capacity - 1, capacity a power of two */
    struct gcs_deque_array *retired; /* older arrays, freed when the deque is reset */
    gcs_deque_slot slots[];
} gcs_deque_array;

typedef struct gcs_deque {
    /* Thieves write `oldest`, the owner writes `newest`: keep them on
     * separate cache lines so a steal doesn't slow the owner's pushes. */
    _Alignas(64) _Atomic int64_t oldest;
    _Alignas(64) _Atomic int64_t newest;
    _Atomic(gcs_deque_array *) array;
    char pad[64 - sizeof(int64_t) - sizeof(void *)];
} gcs_deque;

typedef enum gcs_steal_result { GCS_STEAL_EMPTY, GCS_STEAL_ABORT, GCS_STEAL_OK } gcs_steal_result;

int _gcs_deque_init(gcs_deque *dq, int64_t capacity); /* -1 on out of memory */
void _gcs_deque_destroy(gcs_deque *dq);
/* Frees arrays replaced by growth; only when no thief can be looking. */
void _gcs_deque_release_retired(gcs_deque *dq);
/* Owner only.  push returns -1 only when growing fails (out of memory). */
int _gcs_deque_push(gcs_deque *dq, gcs_mark_entry e);
int _gcs_deque_take(gcs_deque *dq, gcs_mark_entry *out);
/* Any thread. */
gcs_steal_result _gcs_deque_steal(gcs_deque *dq, gcs_mark_entry *out);
/* A hint: entries present right now (may be stale by the time it returns). */
static inline int64_t gcs_deque_size_hint(gcs_deque *dq)
{
    int64_t o = atomic_load_explicit(&dq->oldest, memory_order_relaxed);
    int64_t n = atomic_load_explicit(&dq->newest, memory_order_relaxed);
    return n - o;
}

#endif
