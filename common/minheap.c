/* minheap.c -- a binary min-heap of (key, item) pairs. */
#include <stdlib.h>

#include "gcscale/common.h"

int gcs_minheap_push(gcs_minheap *h, double key, uint64_t item)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        gcs_minheap_entry *grown = realloc(h->entries, cap * sizeof *grown);
        if (!grown)
            return -1;
        h->entries = grown;
        h->cap = cap;
    }
    gcs_minheap_entry *e = h->entries;
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (e[parent].key <= key)
            break;
        e[i] = e[parent];
        i = parent;
    }
    e[i] = (gcs_minheap_entry){key, item};
    return 0;
}

gcs_minheap_entry gcs_minheap_pop(gcs_minheap *h)
{
    gcs_minheap_entry *e = h->entries;
    gcs_minheap_entry top = e[0], last = e[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && e[child + 1].key < e[child].key)
            child++;
        if (last.key <= e[child].key)
            break;
        e[i] = e[child];
        i = child;
    }
    if (n > 0)
        e[i] = last;
    return top;
}

void gcs_minheap_free(gcs_minheap *h)
{
    free(h->entries);
    h->entries = NULL;
    h->n = h->cap = 0;
}
