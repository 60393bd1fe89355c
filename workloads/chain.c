/* chain.c -- a queue: the live heap is one linked list (issue 24).
 *
 * The paper's workloads all have bushy live heaps; a collector whose heap
 * is a chain gains nothing from a second marker (each node is found only
 * through the one before it), so the adaptive policy must learn to run it
 * with one.  The live data is a FIFO queue of `size` nodes: every round
 * mutator 0 appends size / 8 nodes at the tail and drops as many from the
 * head, so the queue stays one chain whose nodes were allocated at
 * different times (spread over the heap like a long-lived list's).  Every
 * mutator meanwhile builds short temporary lists (16 nodes, summed, then
 * dropped): the garbage that triggers the collections.
 *
 * Verification: the queue holds exactly `size` nodes with the consecutive
 * values a correct queue would hold after `steps` rounds, and every
 * temporary list summed to its expected value. */
#include <stdlib.h>

#include "internal.h"

#define TEMP_LEN 16
/* Temporary nodes are this large: the garbage is bytes more than objects,
 * so that the sweep (which pays per object) stays small next to the mark,
 * as in a program whose garbage is buffers. */
#define TEMP_BYTES 256

typedef struct node {
    struct node *next;
    uint64_t value;
    uint64_t check;         /* value * a constant: a freed-and-reused node shows */
} node;

#define CHECK(v) ((v) * 0x9e3779b97f4a7c15ull ^ 0xc4ceb9fe1a85ec53ull)

enum { SH_HEAD = 0, SH_TAIL = 1 };
enum { MY_TEMP = 0 };

typedef struct chain_state {
    uint64_t next_value;    /* mutator 0's */
    uint64_t *bad_sums;     /* per mutator */
    uint64_t *temp_nodes;   /* per mutator */
} chain_state;

static node *new_node(wl_run *r, uint64_t value, size_t bytes)
{
    node *n = _gcs_wl_alloc(r, bytes, 1);
    if (n) {
        n->value = value;
        n->check = CHECK(value);
    }
    return n;
}

static int chain_setup(wl_run *r, gcs_err *err)
{
    chain_state *s = calloc(1, sizeof *s);
    r->state = s;
    if (s) {
        s->bad_sums = calloc((size_t)r->mutators, sizeof *s->bad_sums);
        s->temp_nodes = calloc((size_t)r->mutators, sizeof *s->temp_nodes);
    }
    if (!s || !s->bad_sums || !s->temp_nodes) {
        gcs_err_set(err, "chain: out of memory");
        return -1;
    }
    /* Each node is linked in before the next allocation: reachable from
     * the head slot throughout. */
    for (uint64_t v = 0; v < r->size; v++) {
        node *n = new_node(r, v, sizeof(node));
        if (!n) {
            gcs_err_set(err, "chain: the heap is too small for a queue of %llu nodes", (unsigned long long)r->size);
            return -1;
        }
        if (r->shared[SH_TAIL])
            ((node *)r->shared[SH_TAIL])->next = n;
        else
            r->shared[SH_HEAD] = n;
        r->shared[SH_TAIL] = n;
    }
    s->next_value = r->size;
    return 0;
}

static void chain_mutator(wl_run *r, int i)
{
    chain_state *s = r->state;
    uint64_t turn = r->size / 8 > 0 ? r->size / 8 : 1;
    /* Garbage per round: 64 bytes per queue node, shared out. */
    uint64_t temps = 64 * r->size / TEMP_BYTES / TEMP_LEN / (uint64_t)r->mutators + 1;
    for (uint64_t round = 0; round < r->steps; round++) {
        if (i == 0) {
            for (uint64_t k = 0; k < turn; k++) {
                node *n = new_node(r, s->next_value++, sizeof(node));
                if (!n)
                    return;
                ((node *)r->shared[SH_TAIL])->next = n;
                r->shared[SH_TAIL] = n;
                r->shared[SH_HEAD] = ((node *)r->shared[SH_HEAD])->next;
                if ((k & 1023) == 0)
                    gcs_gc_safepoint();
            }
            _gcs_wl_progress(r, (double)(round + 1) / (double)r->steps);
        }
        for (uint64_t t = 0; t < temps; t++) {
            uint64_t base = (round * temps + t) * TEMP_LEN + (uint64_t)i;
            r->slot[i][MY_TEMP] = NULL;
            for (uint64_t k = 0; k < TEMP_LEN; k++) {
                node *n = new_node(r, base + k, TEMP_BYTES);
                if (!n)
                    return;
                n->next = r->slot[i][MY_TEMP];
                r->slot[i][MY_TEMP] = n;
            }
            uint64_t sum = 0;
            for (node *n = r->slot[i][MY_TEMP]; n; n = n->next)
                sum += n->value + (n->check != CHECK(n->value));
            s->bad_sums[i] += sum != TEMP_LEN * base + TEMP_LEN * (TEMP_LEN - 1) / 2;
            s->temp_nodes[i] += TEMP_LEN;
        }
        r->slot[i][MY_TEMP] = NULL;
        if (_gcs_wl_barrier(r) < 0)
            return;
    }
}

static void chain_verify(wl_run *r, gcs_workload_result *res)
{
    chain_state *s = r->state;
    uint64_t bad = 0, temps = 0, len = 0, first = s->next_value - r->size, wrong = 0;
    for (int i = 0; i < r->mutators; i++) {
        bad += s->bad_sums[i];
        temps += s->temp_nodes[i];
    }
    for (const node *n = r->shared[SH_HEAD]; n; n = n->next, len++)
        wrong += n->value != first + len || n->check != CHECK(n->value);
    _gcs_wl_figure(res, "queue_nodes", (double)len);
    _gcs_wl_figure(res, "temporary_nodes", (double)temps);
    if (len != r->size || wrong || bad) {
        _gcs_wl_verdict(res, 0, "chain: queue of %llu nodes (expected %llu), %llu out of order or damaged; "
                        "%llu temporary lists summed wrong",
                        (unsigned long long)len, (unsigned long long)r->size, (unsigned long long)wrong,
                        (unsigned long long)bad);
        return;
    }
    _gcs_wl_verdict(res, 1, "chain: the queue holds the %llu consecutive values %llu..%llu; %llu temporary "
                    "nodes summed right", (unsigned long long)len, (unsigned long long)first,
                    (unsigned long long)(first + len - 1), (unsigned long long)temps);
}

static void chain_teardown(wl_run *r)
{
    chain_state *s = r->state;
    if (s) {
        free(s->bad_sums);
        free(s->temp_nodes);
    }
    free(s);
    r->state = NULL;
}

const wl_impl _gcs_wl_chain = {
    .info = {
        .name = "chain",
        .summary = "a FIFO queue: the live heap is one linked list, the garbage short temporary lists",
        .size_meaning = "queue nodes",
        .steps_meaning = "rounds (size / 8 nodes enqueued and dequeued each)",
        .default_size = 200000,
        .default_steps = 48,
        .max_size = 1000000000,
        .max_steps = 1000000,
        .default_heap = 24u << 20,
    },
    .setup = chain_setup,
    .mutator = chain_mutator,
    .verify = chain_verify,
    .teardown = chain_teardown,
};
