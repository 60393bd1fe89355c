/* merge.c -- the CPUs' event queues and their merge into one time order.
 *
 * This is the tracer's hot loop: every record of every CPU of the machine
 * passes through it, while the traced program runs.  Each CPU's ring buffer
 * is already in time order (with rare exceptions, below), so the global
 * order is a k-way merge of k sorted queues: O(log k) per event, where the
 * earlier way, one qsort of everything pending at each round, paid O(log n)
 * comparisons of 48-byte records and moved them twice (a third of the
 * tracer's CPU time during a run, docs/schedtrace.md "Overhead"). */
#include <stdlib.h>
#include <string.h>

#include "schedtrace_internal.h"

/* A CPU's buffer is in time order except where a record was interrupted
 * between taking its time stamp and reserving its space (an interrupt's
 * tracepoint then writes first): the rare late event walks back to its
 * place, which in a nearly sorted queue is a step or two. */
int _gcs_schedtrace_queue_push(gcs_schedtrace_queue *q, const gcs_schedtrace_event *ev)
{
    if (q->n == q->cap) {
        if (q->head > q->cap / 2) {
            /* Mostly fed already: slide the rest down rather than grow. */
            memmove(q->ev, q->ev + q->head, (q->n - q->head) * sizeof *q->ev);
            q->n -= q->head;
            q->head = 0;
        } else {
            size_t ncap = q->cap ? q->cap * 2 : 4096;
            gcs_schedtrace_event *p = realloc(q->ev, ncap * sizeof *p);
            if (!p)
                return -1;
            q->ev = p;
            q->cap = ncap;
        }
    }
    size_t at = q->n;
    while (at > q->head && q->ev[at - 1].t_ns > ev->t_ns)
        at--;
    if (at < q->n)
        memmove(q->ev + at + 1, q->ev + at, (q->n - at) * sizeof *q->ev);
    q->ev[at] = *ev;
    q->n++;
    return 0;
}

void _gcs_schedtrace_queue_free(gcs_schedtrace_queue *q)
{
    free(q->ev);
    memset(q, 0, sizeof *q);
}

/* Heap order: the earlier next event first, the lower queue index on a tie,
 * so that the merge is deterministic. */
static int before(gcs_schedtrace_queue *const *qs, int a, int b)
{
    uint64_t ta = qs[a]->ev[qs[a]->head].t_ns, tb = qs[b]->ev[qs[b]->head].t_ns;
    return ta < tb || (ta == tb && a < b);
}

static void sift_down(gcs_schedtrace_queue *const *qs, int *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < n && before(qs, h[l], h[m]))
            m = l;
        if (l + 1 < n && before(qs, h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        int x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

int _gcs_schedtrace_merge(gcs_schedtrace_queue **qs, int *heap, int n, uint64_t limit,
                          int (*apply)(void *ctx, const gcs_schedtrace_event *ev, gcs_err *err), void *ctx,
                          gcs_err *err)
{
    /* Invariant: heap[0..live) holds the queues with an unfed event, heap
     * ordered by before(). */
    int live = 0;
    for (int i = 0; i < n; i++)
        if (qs[i]->head < qs[i]->n)
            heap[live++] = i;
    for (int i = live / 2 - 1; i >= 0; i--)
        sift_down(qs, heap, live, i);
    while (live > 0) {
        gcs_schedtrace_queue *q = qs[heap[0]];
        const gcs_schedtrace_event *ev = &q->ev[q->head];
        if (ev->t_ns > limit)
            break;
        int rc = apply(ctx, ev, err);
        if (rc < 0)
            return rc;
        if (++q->head == q->n) {
            q->head = q->n = 0; /* empty: reuse the array from its start */
            heap[0] = heap[--live];
        }
        sift_down(qs, heap, live, 0);
    }
    return 0;
}
