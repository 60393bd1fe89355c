/* roots.c -- the mutators' roots: global root slots and each thread's
 * shadow stack.
 *
 * A root is the address of a slot that holds a heap pointer.  Global slots
 * (gcs_gc_add_root) live in one array under roots_lock; a thread's shadow
 * stack (gcs_gc_push_root, gcs_gc_pop_roots) is its own, touched by nobody
 * else while it runs, and read by the collection only with the world stopped.
 * Registering roots is the mutators' business and reading them the
 * collection's (collect.c walks both), so this file only keeps them.
 */
#include <stdlib.h>

#include "gc_internal.h"

int gcs_gc_add_root(void **slot)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc)
        return -1;
    pthread_mutex_lock(&gc->roots_lock);
    if (gc->nroots == gc->roots_cap) {
        size_t ncap = gc->roots_cap ? 2 * gc->roots_cap : 64;
        void ***r = realloc(gc->roots, ncap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&gc->roots_lock);
            _gcs_set_last_error("gc: out of memory for root slots");
            return -1;
        }
        gc->roots = r;
        gc->roots_cap = ncap;
    }
    gc->roots[gc->nroots++] = slot;
    pthread_mutex_unlock(&gc->roots_lock);
    return 0;
}

void gcs_gc_remove_root(void **slot)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc)
        return;
    pthread_mutex_lock(&gc->roots_lock);
    for (size_t i = gc->nroots; i-- > 0;)
        if (gc->roots[i] == slot) {
            gc->roots[i] = gc->roots[--gc->nroots];
            break;
        }
    pthread_mutex_unlock(&gc->roots_lock);
}

int gcs_gc_push_root(void **slot)
{
    gcs_mutator *m = _gcs_current_mutator(_gcs_gc_global);
    if (!m) {
        _gcs_set_last_error("gc: push_root from a thread that is not attached");
        return -1;
    }
    if (__builtin_expect(m->shadow_top == m->shadow_cap, 0)) {
        size_t ncap = m->shadow_cap ? 2 * m->shadow_cap : 256;
        void ***s = realloc(m->shadow, ncap * sizeof *s);
        if (!s) {
            _gcs_set_last_error("gc: out of memory for the shadow stack");
            return -1;
        }
        m->shadow = s;
        m->shadow_cap = ncap;
    }
    m->shadow[m->shadow_top++] = slot;
    return 0;
}

void gcs_gc_pop_roots(size_t n)
{
    gcs_mutator *m = _gcs_current_mutator(_gcs_gc_global);
    if (!m)
        return;
    m->shadow_top = n > m->shadow_top ? 0 : m->shadow_top - n;
}
