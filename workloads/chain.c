/* chain.c -- a bounded queue in a linked ring: the live heap is one linked
 * list (issue 24).
 *
 * The paper's workloads all have bushy live heaps; a heap that is a chain
 * gains nothing from a second marker (each node is found only through the
 * one before it), so its collections are best at one GC thread -- provided
 * the mark is what they spend their time on.  The sweep scales with P on
 * any heap, so this workload keeps it small (docs/workloads.md, "chain"):
 *
 * - The queue is a ring of `size` nodes allocated once, one after another,
 *   and linked in a shuffled order, as a long-lived list that has been
 *   relinked for a long time is: the mark follows the ring from node to
 *   node across the whole ring's memory, one cache miss after another,
 *   while the pages that hold it stay full of live nodes (the sweep counts
 *   their marks and clears them without visiting a slot).  Mutator 0 moves
 *   size / 8 values through the queue every round: it takes them at the
 *   head, checking that they come out in order, and writes new ones at the
 *   tail; the queue holds half the ring.
 * - The garbage is message buffers: every mutator takes 64 KiB buffers,
 *   writes a short message at the start of each, reads it back and drops
 *   it.  A buffer is a large object, one heap page the sweep gives back
 *   whole without visiting slots, and only its first OS page is ever
 *   touched (as with a receive buffer sized for the longest message).
 *
 * Verification: the queue holds exactly the consecutive values a correct
 * queue holds after `steps` rounds (each node also carries a check word of
 * its value), every value came out of the queue in order, the ring still
 * has `size` nodes, and every message read back as written. */
#include <stdlib.h>

#include "internal.h"

/* One heap page with the object's header: the largest object that takes a
 * single page. */
#define BUF_BYTES (GCS_GC_PAGE_BYTES - 8)
#define MSG_WORDS 16
/* Buffers per round, all mutators together: one per this many ring nodes,
 * 64 bytes of garbage per node and round (two collections a round with the
 * default heap). */
#define NODES_PER_BUFFER 1024

typedef struct node {
    struct node *next;
    uint64_t value;
    uint64_t check;         /* value * a constant: a freed-and-reused node shows */
} node;

#define CHECK(v) ((v) * 0x9e3779b97f4a7c15ull ^ 0xc4ceb9fe1a85ec53ull)

enum { SH_HEAD = 0, SH_NODES = 1 };
enum { MY_BUF = 0 };

typedef struct chain_state {
    /* The tail is reachable from the head, so it needs no root slot: with
     * one, the mark would start a second worker half way round the ring. */
    struct node *tail;
    uint64_t next_in, next_out; /* mutator 0's: the next value to enqueue, to dequeue */
    uint64_t out_of_order;      /* values that came out of the queue wrong */
    uint64_t *bad_msgs;         /* per mutator */
    uint64_t *buffers;          /* per mutator */
} chain_state;

static uint64_t queue_len(const wl_run *r) { return (r->size + 1) / 2; }

static int chain_setup(wl_run *r, gcs_err *err)
{
    chain_state *s = calloc(1, sizeof *s);
    r->state = s;
    if (s) {
        s->bad_msgs = calloc((size_t)r->mutators, sizeof *s->bad_msgs);
        s->buffers = calloc((size_t)r->mutators, sizeof *s->buffers);
    }
    if (!s || !s->bad_msgs || !s->buffers) {
        gcs_err_set(err, "chain: out of memory");
        return -1;
    }
    /* The nodes, in allocation order, in a pointer array that the root slot
     * holds while they are linked. */
    node **nodes = _gcs_wl_alloc(r, r->size * sizeof(node *), r->size);
    if (!nodes) {
        gcs_err_set(err, "chain: the heap is too small for a ring of %llu nodes", (unsigned long long)r->size);
        return -1;
    }
    r->shared[SH_NODES] = nodes;
    for (uint64_t v = 0; v < r->size; v++) {
        node *n = _gcs_wl_alloc(r, sizeof(node), 1);
        if (!n) {
            gcs_err_set(err, "chain: the heap is too small for a ring of %llu nodes", (unsigned long long)r->size);
            return -1;
        }
        nodes = r->shared[SH_NODES];
        nodes[v] = n;
    }
    /* Linked in a shuffled order (Fisher-Yates): consecutive ring nodes lie
     * anywhere in the ring's memory. */
    uint64_t rng = wl_seed(r->seed, 1);
    for (uint64_t k = r->size - 1; k > 0; k--) {
        uint64_t j = gcs_random_below(&rng, k + 1);
        node *t = nodes[k];
        nodes[k] = nodes[j];
        nodes[j] = t;
    }
    for (uint64_t k = 0; k < r->size; k++)
        nodes[k]->next = nodes[(k + 1) % r->size];
    node *head = nodes[0], *tail = head;
    for (uint64_t v = 0; v < queue_len(r); v++, tail = tail->next) {
        tail->value = v;
        tail->check = CHECK(v);
    }
    r->shared[SH_HEAD] = head;
    s->tail = tail;
    r->shared[SH_NODES] = NULL; /* the array is garbage now */
    s->next_in = queue_len(r);
    s->next_out = 0;
    return 0;
}

static void chain_mutator(wl_run *r, int i)
{
    chain_state *s = r->state;
    uint64_t turn = r->size / 8 > 0 ? r->size / 8 : 1;
    uint64_t total = r->size / NODES_PER_BUFFER + 1;
    uint64_t bufs = total / (uint64_t)r->mutators + ((uint64_t)i < total % (uint64_t)r->mutators);
    for (uint64_t round = 0; round < r->steps; round++) {
        if (i == 0) {
            node *head = r->shared[SH_HEAD], *tail = s->tail;
            for (uint64_t k = 0; k < turn; k++) {
                s->out_of_order += head->value != s->next_out || head->check != CHECK(head->value);
                s->next_out++;
                head = head->next;
                tail->value = s->next_in;
                tail->check = CHECK(s->next_in);
                s->next_in++;
                tail = tail->next;
                if ((k & 1023) == 0) {
                    r->shared[SH_HEAD] = head;
                    gcs_gc_safepoint();
                }
            }
            r->shared[SH_HEAD] = head;
            s->tail = tail;
            _gcs_wl_progress(r, (double)(round + 1) / (double)r->steps);
        }
        for (uint64_t b = 0; b < bufs; b++) {
            uint64_t *msg = _gcs_wl_alloc_data(r, BUF_BYTES);
            if (!msg)
                return;
            r->slot[i][MY_BUF] = msg;
            uint64_t base = ((round * bufs + b) * (uint64_t)r->mutators + (uint64_t)i) * MSG_WORDS;
            for (uint64_t k = 0; k < MSG_WORDS; k++)
                msg[k] = base + k;
            uint64_t sum = 0;
            for (uint64_t k = 0; k < MSG_WORDS; k++)
                sum += msg[k];
            s->bad_msgs[i] += sum != MSG_WORDS * base + MSG_WORDS * (MSG_WORDS - 1) / 2;
            s->buffers[i]++;
        }
        r->slot[i][MY_BUF] = NULL;
        if (_gcs_wl_barrier(r) < 0)
            return;
    }
}

static void chain_verify(wl_run *r, gcs_workload_result *res)
{
    chain_state *s = r->state;
    uint64_t bad = 0, bufs = 0, len = 0, ring = 0, wrong = 0;
    for (int i = 0; i < r->mutators; i++) {
        bad += s->bad_msgs[i];
        bufs += s->buffers[i];
    }
    const node *head = r->shared[SH_HEAD], *n = head;
    for (; n && len < queue_len(r); n = n->next, len++)
        wrong += n->value != s->next_out + len || n->check != CHECK(n->value);
    /* the rest of the ring, back to the head (0: it does not come back) */
    for (ring = len; n && n != head && ring <= r->size; n = n->next)
        ring++;
    if (n != head)
        ring = 0;
    _gcs_wl_figure(res, "queue_values", (double)len);
    _gcs_wl_figure(res, "ring_nodes", (double)ring);
    _gcs_wl_figure(res, "buffers", (double)bufs);
    if (len != queue_len(r) || ring != r->size || wrong || s->out_of_order || bad ||
        s->next_in - s->next_out != queue_len(r)) {
        _gcs_wl_verdict(res, 0, "chain: queue of %llu values (expected %llu), %llu out of order or damaged, "
                        "%llu dequeued out of order; ring of %llu nodes (expected %llu); %llu messages read "
                        "back wrong", (unsigned long long)len, (unsigned long long)queue_len(r),
                        (unsigned long long)wrong, (unsigned long long)s->out_of_order, (unsigned long long)ring,
                        (unsigned long long)r->size, (unsigned long long)bad);
        return;
    }
    _gcs_wl_verdict(res, 1, "chain: the queue holds the %llu consecutive values %llu..%llu in a ring of %llu "
                    "nodes; %llu values dequeued in order; %llu messages read back right",
                    (unsigned long long)len, (unsigned long long)s->next_out,
                    (unsigned long long)(s->next_in - 1), (unsigned long long)ring,
                    (unsigned long long)s->next_out, (unsigned long long)bufs);
}

static void chain_teardown(wl_run *r)
{
    chain_state *s = r->state;
    if (s) {
        free(s->bad_msgs);
        free(s->buffers);
    }
    free(s);
    r->state = NULL;
}

const wl_impl _gcs_wl_chain = {
    .info = {
        .name = "chain",
        .summary = "a bounded queue in a shuffled linked ring: the live heap is one linked list, the garbage "
                   "message buffers",
        .size_meaning = "ring nodes",
        .steps_meaning = "rounds (size / 8 values through the queue each)",
        .default_size = 200000,
        .default_steps = 20,
        .max_size = 100000000,
        .max_steps = 1000000,
        .default_heap = 10u << 20,
    },
    .setup = chain_setup,
    .mutator = chain_mutator,
    .verify = chain_verify,
    .teardown = chain_teardown,
};
