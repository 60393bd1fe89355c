/* steals.c -- how many entries the collector's workers steal from each
 * other on a heap, from a simulation of its work distribution on the
 * snapshot's graph (docs/model.md "Steals from the graph").
 *
 * The count is a property of the heap more than of the machine: at P = 2
 * the corpus measured 0 (a list) to 11 000 (cube-1) steals, nearly the same
 * on every machine, where calibrate's fit a ln T1 gives ~1 200 for every
 * heap.  It comes from the shape: a thief that takes the bottom of a
 * victim's stack gets a big subtree on a tree and works for long, a few
 * list cells on cube and comes back at once, and nothing on a chain (one
 * entry, never published).
 *
 * The simulation is gc/mark.c's policy on object ids, with P workers in
 * simulated time:
 *   - roots dealt round-robin (gc/collect.c), each worker a private stack
 *     of edges, a FIFO of GCS_GC_MARK_FIFO popped objects, and a deque;
 *   - a busy worker that finds a worker idle and its own deque empty moves
 *     the oldest half of its stack into the deque; a large array's rest is
 *     split in halves under the same condition; the chain shortcut;
 *   - an idle worker tries the deques from a random victim on, takes the
 *     oldest entry and up to STEAL_BATCH - 1 more while the victim keeps
 *     twice as many; without one it waits for the next publication;
 *   - marking ends when every worker is idle.
 * Which worker runs dry first decides who steals, so the prices matter
 * (_gcs_steal_costs): the marker's own per step (every pointer field read,
 * NULL or not, the NULL tests that switch, the class prices), model v2's
 * serial misses spread over the lines the mark reads, and a chain step's
 * dependent miss.  On bh one root holds an octree of 8-field nodes, most
 * fields NULL, whose owner is still busy when the other worker has marked
 * bh's two arrays; priced per object alike, the octree finishes first and
 * the two workers rob each other of an array's rest 4 000 times (measured
 * 53-79).  A steal attempt costs the profile's gc_coord.steal_attempt_ns,
 * noticing a publication as much.
 *
 * Counted beside the steals: the mark-table lines that move between the
 * workers' caches (mark_line_touch), for the extra work in parallel, which
 * model v2 prices where the profile has gc_mark_transfer_ns (predict.c;
 * docs/model.md "Mark-table lines").
 *
 * Not simulated: the workers' wake-up stagger, mark races (two workers
 * scanning one object: RELAXED_BYTES, rare), the host's noise.  Workers in
 * lockstep can split a balanced tree once and never again, where the
 * collector, whose workers drift, steals tens of times; and when two roots'
 * work is nearly equal, which finishes first flips with the profile's
 * prices (bh on two of four 2-CPU profiles). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "inspect_internal.h"
#include "serial.h"

#define STEAL_BATCH 16 /* gc/mark.c: most entries one search takes from one victim */

/* ---- the prices --------------------------------------------------------- */

int _gcs_steal_costs(const gcs_profile *prof, const gcs_model_heap *heap, uint64_t fields, double lines,
                     gcs_steal_costs *c, gcs_err *err)
{
    memset(c, 0, sizeof *c);
    if (!prof->has_gc_coord || !(prof->coord.attempt_ns > 0))
        return 0; /* nothing prices a steal: no simulation */
    /* model v2 as gcscale predict --model v2 sets it for this profile */
    gcs_model_opts mo;
    gcs_model_sources src;
    gcs_model_opts_init(&mo);
    gcs_model_opts_v2(&mo, prof, GCS_MODEL_RESIDENCY_DEFAULT, 0, &src);
    gcs_model_opts_v2_costs(&mo, prof, &src);
    gcs_model_result r;
    if (gcs_model_predict(prof, heap, 1, &mo, &r, err) < 0)
        return -1;
    double serial = r.coord ? r.time_no_coord_ns : r.time_ns;
    double dep = 0;
    if (heap->chain_steps > 0) {
        double lat = _gcs_serial_dependent_latency(prof, heap, &mo, r.m1_ns);
        for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
            double pf, seq, d;
            _gcs_serial_miss_split(heap, &mo, a, &pf, &seq, &d);
            dep += d * lat;
        }
        dep += _gcs_serial_dependent_hits_ns(prof, heap, &mo); /* the steps the LLC served: in T1 */
        c->chain_ns = dep / (double)heap->chain_steps;
    }
    /* The marker's own prices, per step as gc/mark.c takes it: a scan reads
     * every pointer field, NULL or not (gc_cost_ns.pointer is calibrated
     * per field read), and pays for each NULL test whose outcome differs
     * from the one before (gc_class_cost_ns.null_switch): an octree node
     * with one child in eight costs its eight reads and its switches, which
     * is what keeps bh's octree's owner busy while the other worker marks
     * bh's arrays.  A chain step and an array's element in place at their
     * class prices where calibrate measured them. */
    c->cost_object_ns = prof->gc_cost_object_ns;
    c->cost_pointer_ns = prof->gc_cost_pointer_ns;
    c->chain_step_ns = mo.cost_chain_ns > 0 ? mo.cost_chain_ns : c->cost_object_ns + c->cost_pointer_ns;
    c->element_ns = mo.cost_array_element_ns > 0 ? mo.cost_array_element_ns : c->cost_pointer_ns;
    c->null_switch_ns = prof->has_gc_null_switch ? prof->gc_cost_null_switch_ns : 0;
    double scans = c->cost_object_ns * (double)heap->objects + c->cost_pointer_ns * (double)fields +
                   c->null_switch_ns * (double)heap->null_switches;
    /* The misses no chain waits for, spread over the lines the mark reads:
     * one mark-table line per mark test and the lines of each object's
     * header and pointer fields.  Per line, not per object: an octree node
     * of 136 bytes costs three of a chain link's one. */
    double tests = (double)heap->edges + (double)heap->roots;
    double rest = serial - scans - dep;
    c->line_ns = tests + lines > 0 && rest > 0 ? rest / (tests + lines) : 0;
    c->attempt_ns = prof->coord.attempt_ns;
    gcs_assert_internal(c->line_ns >= 0 && c->chain_ns >= 0 && c->attempt_ns > 0);
    return 1;
}

/* ---- one simulated worker ---------------------------------------------- */

typedef struct sentry {
    uint32_t obj;        /* pointer entry: the object; chunk entry: the array */
    uint32_t begin, end; /* chunk entry: fields [begin, end); end == 0: pointer entry */
} sentry;

/* A stack whose bottom can be taken (lo: the spilled half, the deque's
 * stolen end); the deque is the same structure, pushed at hi, taken by its
 * owner at hi and by thieves at lo. */
typedef struct svec {
    sentry *a;
    size_t lo, hi, cap;
} svec;

enum { SW_BUSY, SW_SEARCH, SW_WAIT };

typedef struct sworker {
    svec stack, deque;
    uint32_t fifo[GCS_GC_MARK_FIFO];
    unsigned fifo_head, fifo_count;
    double clock; /* ns */
    int state;
    unsigned rng;
    int last_null;  /* the outcome of this worker's last NULL test (its branch predictor's guess) */
    uint32_t chain; /* the next object along the chain being followed, or GCS_SNAPSHOT_NULL */
    uint64_t steals, searches, transfers;
} sworker;

typedef struct ssim {
    const gcs_snapshot *g;
    const gcs_steal_costs *c;
    uint64_t hdr; /* header bytes in front of a payload */
    int gshift, mline_shift; /* granule -> mark-table line: log2 granule, log2 granules per line */
    uint64_t *marked; /* a bit per object: the simulations of P = 1..CPUs run at once, each with its own */
    int8_t *line_owner;     /* per mark-table line: the worker holding it modified, or -1 */
    uint64_t *line_sharers; /* per line: the workers holding it (bit per worker) */
    sworker *w;
    int threads, idle, oom;
    int woke; /* publish() woke a waiting worker during the current turn */
} ssim;

static inline size_t svec_size(const svec *v) { return v->hi - v->lo; }

static inline void svec_push(ssim *s, svec *v, sentry e)
{
    if (__builtin_expect(v->hi == v->cap, 0)) {
        if (v->lo > 0) { /* slide down: the taken bottom leaves room */
            memmove(v->a, v->a + v->lo, svec_size(v) * sizeof *v->a);
            v->hi -= v->lo;
            v->lo = 0;
        }
        if (v->hi == v->cap) {
            size_t ncap = v->cap ? 2 * v->cap : 1024;
            sentry *na = realloc(v->a, ncap * sizeof *na);
            if (!na) {
                s->oom = 1;
                return;
            }
            v->a = na;
            v->cap = ncap;
        }
    }
    v->a[v->hi++] = e;
}

/* Something was published at time t: the waiting workers look again. */
static void publish(ssim *s, double t)
{
    for (int i = 0; i < s->threads; i++)
        if (s->w[i].state == SW_WAIT) {
            s->w[i].state = SW_SEARCH;
            s->w[i].clock = fmax(s->w[i].clock, t + s->c->attempt_ns);
            s->woke = 1;
        }
}

/* The lines of object i that a scan reads: its header and pointer fields
 * (at least one: a dump without headers still has the object's first). */
static inline double object_lines(const gcs_snapshot *g, uint64_t hdr, uint64_t i)
{
    uint64_t start = g->addr[i] >= hdr ? g->addr[i] - hdr : 0, end = g->addr[i] + 8 * (uint64_t)g->nptrs[i];
    if (end <= start)
        end = start + 1;
    return (double)(((end - 1) >> 6) - (start >> 6) + 1);
}

/* The simulation's own memory: on a heap without locality every object it
 * examines is a miss in each of the arrays it reads (the snapshot's addr,
 * nptrs and edge_start, the marks, the mark table's line state), and with
 * P = 1..16 simulated the misses were most of a prediction's time.  The
 * simulated FIFO holds an object GCS_GC_MARK_FIFO steps before it is
 * examined, as the collector's does, so that is where the simulation
 * prefetches its own rows; an array's elements, examined in place, are
 * prefetched a chunk's stride ahead.  Results do not depend on it.  The
 * helpers are always inlined: GCC takes a function that only prefetches for
 * one without effects and drops its calls (GCC 12, -O1 and up). */
#define SIM_PREFETCH_AHEAD 16 /* array elements; also the FIFO's second stage, steps before the head */

static inline __attribute__((always_inline)) void prefetch_object(const ssim *s, uint32_t o)
{
    __builtin_prefetch(&s->g->addr[o]);
    __builtin_prefetch(&s->g->nptrs[o]);
    __builtin_prefetch(&s->g->edge_start[o]);
    __builtin_prefetch(&s->marked[o >> 6]);
}

/* The second stage, for an object whose rows the first brought in: its
 * fields and its mark-table line. */
static inline __attribute__((always_inline)) void prefetch_fields(const ssim *s, uint32_t o)
{
    const gcs_snapshot *g = s->g;
    __builtin_prefetch(g->edges + g->edge_start[o]);
    uint64_t line = ((g->addr[o] - s->hdr) >> s->gshift) >> s->mline_shift;
    __builtin_prefetch(&s->line_owner[line]);
    __builtin_prefetch(&s->line_sharers[line]);
}

/* The mark table's lines between the workers' private caches, as a
 * write-invalidate protocol sees them: a line is held modified by one
 * worker (owner) or shared by several (sharers).  A read of a line another
 * worker modified, and a write to a line another worker holds, move it:
 * a transfer.  One worker's own accesses never do, so at P = 1 there are
 * none; evictions are not modelled (a table that outgrows the private
 * caches transfers less than counted). */
static inline void mark_line_touch(ssim *s, sworker *w, uint64_t line, int write)
{
    uint64_t me = 1ull << (w - s->w);
    int8_t *owner = &s->line_owner[line];
    uint64_t *sh = &s->line_sharers[line];
    int self = (int)(w - s->w);
    if (!write) {
        if (*owner >= 0 && *owner != self) {
            w->transfers++;
            *sh = me | 1ull << *owner;
            *owner = -1;
        } else if (*owner < 0) {
            *sh |= me;
        }
        return;
    }
    if (*owner == self)
        return;
    if ((*owner >= 0) || (*sh & ~me))
        w->transfers++;
    *owner = (int8_t)self;
    *sh = me;
}

/* gc/mark.c's mark_set: a test (a read of the mark's line), and for an
 * unmarked object the mark (a write).  1 when w marked it. */
static inline int mark_set(ssim *s, sworker *w, uint32_t o)
{
    uint64_t line = ((s->g->addr[o] - s->hdr) >> s->gshift) >> s->mline_shift;
    mark_line_touch(s, w, line, 0);
    uint64_t bit = 1ull << (o & 63), *word = &s->marked[o >> 6];
    if (*word & bit)
        return 0;
    mark_line_touch(s, w, line, 1);
    *word |= bit;
    return 1;
}

/* Object o is marked by w: its fields go on w's stack (the first chunk of a
 * large array, its rest as a chunk entry under them), last field first. */
static void scan(ssim *s, sworker *w, uint32_t o)
{
    const gcs_snapshot *g = s->g;
    uint32_t np = g->nptrs[o], end = np;
    const uint32_t *f = g->edges + g->edge_start[o];
    if (np > GCS_GC_CHUNK_FIELDS) { /* the rest: its elements priced as chunks are examined */
        svec_push(s, &w->stack, (sentry){o, GCS_GC_CHUNK_FIELDS, np});
        end = GCS_GC_CHUNK_FIELDS;
    }
    uint32_t switches = 0, nulls = 0;
    for (uint32_t k = end; k-- > 0;) {
        int null = f[k] == GCS_SNAPSHOT_NULL;
        switches += null != w->last_null;
        w->last_null = null;
        nulls += null;
        if (!null)
            svec_push(s, &w->stack, (sentry){f[k], 0, 0});
    }
    /* a pushed field's price is paid where it is tested (examine) */
    w->clock += s->c->cost_object_ns + s->c->cost_pointer_ns * nulls + s->c->null_switch_ns * switches +
                s->c->line_ns * object_lines(g, s->hdr, o);
}

/* A chunk entry popped: its elements examined in place (gc/mark.c); the
 * rest of the array stays an entry under the children, its second half
 * published when a worker is idle and nothing is. */
static void scan_chunk(ssim *s, sworker *w, sentry e)
{
    const gcs_snapshot *g = s->g;
    const uint32_t *f = g->edges + g->edge_start[e.obj];
    uint32_t end = e.end;
    if (end - e.begin > GCS_GC_CHUNK_FIELDS) {
        uint32_t rest = e.begin + GCS_GC_CHUNK_FIELDS, rest_end = end;
        if (s->idle > 0 && rest_end - rest >= 2 * GCS_GC_CHUNK_FIELDS && svec_size(&w->deque) == 0) {
            uint32_t mid = rest + (rest_end - rest) / 2;
            svec_push(s, &w->deque, (sentry){e.obj, mid, rest_end});
            rest_end = mid;
            publish(s, w->clock);
        }
        svec_push(s, &w->stack, (sentry){e.obj, rest, rest_end});
        end = e.begin + GCS_GC_CHUNK_FIELDS;
    }
    for (uint32_t p = e.begin; p < end; p++) {
        if (p + SIM_PREFETCH_AHEAD < end && f[p + SIM_PREFETCH_AHEAD] != GCS_SNAPSHOT_NULL)
            prefetch_object(s, f[p + SIM_PREFETCH_AHEAD]);
        uint32_t ch = f[p];
        w->clock += s->c->element_ns;
        if (ch == GCS_SNAPSHOT_NULL)
            continue;
        w->clock += s->c->line_ns;
        if (!mark_set(s, w, ch))
            continue;
        if (g->nptrs[ch] > 0) /* a pointer-free child is only marked */
            scan(s, w, ch);
    }
}

/* Examine obj: its mark test, then its scan, or one step along a chain
 * (gc/mark.c's shortcut while nothing else is pending: the next object is
 * examined on the worker's next turn, at the step's price, its class's and
 * the dependent miss, so that the other workers move in between). */
static void examine(ssim *s, sworker *w, uint32_t obj)
{
    const gcs_snapshot *g = s->g;
    if (!mark_set(s, w, obj))
        return;
    if (g->nptrs[obj] != 1 || w->fifo_count != 0 || svec_size(&w->stack) != 0) {
        scan(s, w, obj);
        return;
    }
    uint32_t next = g->edges[g->edge_start[obj]];
    w->clock += s->c->chain_step_ns + s->c->chain_ns + s->c->line_ns;
    w->chain = next; /* GCS_SNAPSHOT_NULL: the chain ends */
}

/* One turn of a busy worker's loop; it turns idle when it has nothing. */
static void busy_step(ssim *s, sworker *w)
{
    uint32_t obj;
    if (w->chain != GCS_SNAPSHOT_NULL) {
        obj = w->chain;
        w->chain = GCS_SNAPSHOT_NULL;
        examine(s, w, obj);
        return;
    }
    if (svec_size(&w->stack) > 0) {
        if (s->idle > 0 && svec_size(&w->stack) >= 2 && svec_size(&w->deque) == 0) {
            size_t k = svec_size(&w->stack) / 2; /* the oldest half */
            for (size_t i = 0; i < k; i++)
                svec_push(s, &w->deque, w->stack.a[w->stack.lo++]);
            publish(s, w->clock);
        }
        sentry e = w->stack.a[--w->stack.hi];
        if (e.end != 0) {
            scan_chunk(s, w, e);
            return;
        }
        prefetch_object(s, e.obj);
        if (w->fifo_count < GCS_GC_MARK_FIFO) {
            w->fifo[(w->fifo_head + w->fifo_count++) % GCS_GC_MARK_FIFO] = e.obj;
            return;
        }
        obj = w->fifo[w->fifo_head];
        w->fifo[w->fifo_head] = e.obj;
        w->fifo_head = (w->fifo_head + 1) % GCS_GC_MARK_FIFO;
        prefetch_fields(s, w->fifo[(w->fifo_head + SIM_PREFETCH_AHEAD) % GCS_GC_MARK_FIFO]);
    } else if (w->fifo_count > 0) {
        obj = w->fifo[w->fifo_head];
        w->fifo_head = (w->fifo_head + 1) % GCS_GC_MARK_FIFO;
        w->fifo_count--;
    } else if (svec_size(&w->deque) > 0) {
        svec_push(s, &w->stack, w->deque.a[--w->deque.hi]); /* the owner's end */
        return;
    } else {
        w->state = SW_SEARCH;
        s->idle++;
        return;
    }
    w->clock += s->c->cost_pointer_ns + s->c->line_ns; /* the field that led here, tested */
    examine(s, w, obj);
}

/* One search: the deques from a random victim on; the first with an entry
 * gives its oldest and, while it keeps twice as many, up to
 * STEAL_BATCH - 1 more.  Without one the worker waits for a publication. */
static void search_step(ssim *s, sworker *w)
{
    int p = s->threads;
    w->rng = w->rng * 1103515245u + 12345u;
    int start = (int)((w->rng >> 16) % (unsigned)p);
    for (int k = 0; k < p; k++) {
        sworker *v = &s->w[(start + k) % p];
        if (v == w || svec_size(&v->deque) == 0)
            continue;
        for (int more = 0; more < STEAL_BATCH; more++) {
            if (more > 0 && svec_size(&v->deque) < (size_t)(2 * more))
                break;
            w->clock += s->c->attempt_ns;
            w->steals++;
            svec_push(s, &w->stack, v->deque.a[v->deque.lo++]);
        }
        w->searches++;
        w->state = SW_BUSY;
        s->idle--;
        return;
    }
    w->state = SW_WAIT;
}

int _gcs_steal_sim(const gcs_snapshot *g, int threads, const gcs_steal_costs *c, gcs_steal_sim *out, gcs_err *err)
{
    memset(out, 0, sizeof *out);
    gcs_assert_internal(threads >= 1 && threads <= GCS_MODEL_SIM_MAX_THREADS);
    ssim s = {.g = g, .c = c, .hdr = g->params.header_bytes, .threads = threads};
    s.gshift = __builtin_ctz(g->params.granule_bytes ? g->params.granule_bytes : 16);
    s.mline_shift = g->params.mark_mode == GCS_GC_MARK_ATOMIC_BITS ? 9 : 6; /* a 64-byte line: 512 bits, 64 bytes */
    uint64_t nlines = 1;
    if (g->nobjects > 0) {
        uint64_t last = g->nobjects - 1;
        nlines = (((g->addr[last] + gcs_snapshot_size(g, last) - s.hdr) >> s.gshift) >> s.mline_shift) + 1;
    }
    s.marked = calloc(g->nobjects / 64 + 1, sizeof *s.marked);
    s.w = calloc((size_t)threads, sizeof *s.w);
    s.line_owner = malloc(nlines);
    s.line_sharers = calloc(nlines, sizeof *s.line_sharers);
    if (!s.marked || !s.w || !s.line_owner || !s.line_sharers) {
        free(s.marked);
        free(s.w);
        free(s.line_owner);
        free(s.line_sharers);
        gcs_err_set(err, "steal simulation: out of memory");
        return -1;
    }
    memset(s.line_owner, -1, nlines);
    for (int i = 0; i < threads; i++) {
        s.w[i].rng = 1u + (unsigned)i;
        s.w[i].chain = GCS_SNAPSHOT_NULL;
    }
    for (uint64_t r = 0; r < g->nroots; r++)
        svec_push(&s, &s.w[r % (uint64_t)threads].stack, (sentry){g->roots[r], 0, 0});
    /* The worker furthest behind in time moves next, so that what one
     * publishes, marks or takes is seen by the others in time order.  It
     * keeps moving while it stays strictly behind every other (the order
     * one step at a time would give) and wakes nobody: the scan for the
     * next worker is then once per turn of the lead, not once per step. */
    for (;;) {
        int wi = -1;
        double best = INFINITY, next = INFINITY;
        for (int i = 0; i < threads; i++) {
            if (s.w[i].state == SW_WAIT)
                continue;
            if (s.w[i].clock < best) {
                next = best;
                best = s.w[i].clock;
                wi = i;
            } else if (s.w[i].clock < next) {
                next = s.w[i].clock;
            }
        }
        if (wi < 0 || s.oom)
            break; /* every worker waits: marking is complete */
        sworker *w = &s.w[wi];
        if (w->state == SW_SEARCH) {
            search_step(&s, w);
            continue;
        }
        s.woke = 0;
        do
            busy_step(&s, w);
        while (w->state == SW_BUSY && w->clock < next && !s.woke && !s.oom);
        if (w->state == SW_SEARCH && threads == 1)
            w->state = SW_WAIT; /* one worker never searches */
    }
    int oom = s.oom;
    for (int i = 0; i < threads; i++) {
        sworker *w = &s.w[i];
        gcs_assert_internal(oom || (svec_size(&w->stack) == 0 && svec_size(&w->deque) == 0 && w->fifo_count == 0 &&
                                      w->chain == GCS_SNAPSHOT_NULL));
        out->steals += w->steals;
        out->searches += w->searches;
        out->transfers += w->transfers;
        out->makespan_ns = fmax(out->makespan_ns, w->clock);
        free(w->stack.a);
        free(w->deque.a);
    }
    free(s.marked);
    free(s.w);
    free(s.line_owner);
    free(s.line_sharers);
    if (oom) {
        gcs_err_set(err, "steal simulation: out of memory");
        return -1;
    }
    return 0;
}

int _gcs_inspect_steals(const gcs_snapshot *g, const gcs_profile *prof, int max_threads, gcs_model_heap *h,
                        gcs_err *err)
{
    h->steals_simulated = 0;
    if (max_threads < 2)
        return 0;
    if (max_threads > GCS_MODEL_SIM_MAX_THREADS)
        max_threads = GCS_MODEL_SIM_MAX_THREADS;
    gcs_steal_costs c;
    double lines = 0;
    uint64_t hdr = g->params.header_bytes;
#pragma omp parallel for reduction(+ : lines) schedule(static)
    for (uint64_t i = 0; i < g->nobjects; i++)
        lines += object_lines(g, hdr, i);
    int rc = _gcs_steal_costs(prof, h, g->nfields, lines, &c, err);
    if (rc <= 0)
        return rc;
    /* One simulation per P, each with its own marks: independent, so on
     * OpenMP's threads.  Its one failure is running out of memory. */
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failed)
    for (int p = 1; p <= max_threads; p++) { /* P = 1: the schedules' reference */
        gcs_steal_sim r;
        gcs_err e;
        if (_gcs_steal_sim(g, p, &c, &r, &e) < 0) {
            failed++;
            continue;
        }
        h->sim_steals[p] = (double)r.steals;
        h->sim_searches[p] = (double)r.searches;
        h->sim_transfers[p] = (double)r.transfers;
        h->sim_makespan_ns[p] = r.makespan_ns;
    }
    if (failed) {
        gcs_err_set(err, "steal simulation: out of memory");
        return -1;
    }
    h->sim_steals[0] = h->sim_searches[0] = h->sim_transfers[0] = h->sim_makespan_ns[0] = 0;
    h->steals_simulated = max_threads;
    return 0;
}
