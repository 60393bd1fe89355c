/* replay.c -- the slow predictor: the collector's serial mark (gc/mark.c,
 * P = 1) replayed on object ids, its memory accesses fed to the cache
 * simulator (cachesim.h) in the walk's order; docs/model.md "The access
 * stream (slow predictor)".
 *
 * The walk (replay_run) and the simulator's entry (racc, rsim) are one
 * translation unit on purpose: racc and the walk's helpers inline into
 * replay_run, which is the inspection's hot loop.  The ring, the two-thread
 * pipeline and its trial, and the benchmark-only stages decide only where
 * and when an access is simulated, never the order: every result is that
 * of the one-thread replay.  Called from inspect.c (_gcs_inspect_replay,
 * model/inspect_internal.h).
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inspect_internal.h"

typedef struct rentry {
    uint32_t obj;         /* pointer entry: the object; chunk entry: the array */
    uint32_t begin, end;  /* chunk entry: fields [begin, end); end == 0: pointer entry */
} rentry;

/* On a heap marked out of address order the replay's accesses wait in a
 * ring of RING accesses before they are simulated: an access's tag and time
 * rows are prefetched when it enters, so that by the time it leaves the
 * simulator finds them in the host's caches.  (In address order the rows are
 * met in order too and the host's prefetchers find them.)  The order of the
 * accesses, and so every result, is that of the walk. */
#define RING 32

typedef struct raccess {
    uint64_t addr;
    uint32_t node;        /* node slot of the object accessed (its misses go there) */
    uint32_t cls;
} raccess;

/* With two CPUs or more, a large replay of a heap marked out of address
 * order (one with records, see _gcs_inspect_records_pay()) can run as a
 * two-stage
 * pipeline: the walk (this thread) writes its accesses into chunks of
 * PIPE_CHUNK, a second thread simulates them in the same order, so the
 * results are those of the one-thread replay and the wall time is that of
 * the slower stage.  The simulator and the per-node misses belong to the
 * second thread while it runs.
 *
 * Whether that pays depends on the machine, and even on the hour, so it is
 * tried, not assumed: after TRIAL_SKIP accesses the replay times
 * TRIAL_WINDOW accesses on one thread, then TRIAL_WINDOW with the pipeline,
 * and keeps the faster.  The pipeline wins where the walk, waiting on the
 * host's memory, is the slower stage, and loses where handing the accesses
 * to another core costs more than the simulation it moves; which one holds
 * has changed between machines and between hours on one machine
 * (docs/model.md, "2026-11-24 and 2026-11-25: the replay's two-thread
 * pipeline").  On a heap marked in address order the simulator is the
 * slower stage and passing it the accesses through another core's memory
 * only adds cost, so those are never piped. */
#define TRIAL_SKIP (1u << 20)
#define TRIAL_WINDOW (1u << 19)
#define PIPE_CHUNK 4096
#define PIPE_CHUNKS 4
#define PIPE_LOOKAHEAD 32

struct replay;

typedef struct rpipe {
    struct replay *r;
    raccess *buf;               /* [PIPE_CHUNKS * PIPE_CHUNK] */
    uint32_t len[PIPE_CHUNKS];
    _Atomic uint64_t produced;  /* chunks published by the walk */
    _Atomic uint64_t consumed;  /* chunks simulated */
    _Atomic int done;           /* the walk has published its last chunk */
    pthread_t thread;
} rpipe;

typedef struct replay {
    const gcs_snapshot *g;
    rpipe *pipe;          /* NULL: one thread */
    raccess *cur;         /* pipe: the chunk being filled */
    uint32_t ncur;
    const robj *rec;      /* [nobjects], or NULL (_gcs_inspect_records_pay()) */
    gcs_cachesim *sim;
    layout ly;
    uint8_t *marked;
    rentry *stack;
    size_t hi, cap;
    int nlevels, nnodes;
    /* Benchmarks only: the walk's accesses are not simulated as it goes
     * (aside != 0): with stage == NULL they are dropped
     * (_gcs_inspect_bench_opts.walk_only), else appended to stage and
     * simulated after the walk (_gcs_inspect_bench_opts.stages). */
    int aside;
    raccess *stage;
    size_t nstage, stage_cap;
    double *node_miss;    /* [nnodes + 1] */
    uint64_t nmarked;
    uint64_t chain_steps, array_elements, array_leaves; /* the marker's step classes (model.h) */
    uint64_t dependent_steps;                           /* chain steps 4 KiB or more away (walk 2) */
    uint64_t null_fields, null_switches; /* NULL pointer fields read, NULL tests switching (model.h) */
    int walk;             /* the accesses now made walk the heap in address order: 1, and 2
                             where the address came from the load before, on another page
                             (a chain's jump: gcs_cachesim_access_walk) */
    uint8_t last_null[3];  /* per NULL test of the mark loop (NULL_AT_*): the last outcome */
    int oom;
    uint64_t last_line;   /* line of the last access put in the ring + 1 */
    unsigned rhead, rcount;
    raccess ring[RING];
    /* the pipeline's trial (above) */
    uint64_t issued;      /* accesses the walk has produced */
    uint64_t next_check;  /* issued count of the trial's next step (UINT64_MAX: none) */
    int trial_step;       /* 0: before, 1: timing one thread, 2: timing the pipeline, 3: done */
    uint64_t trial_t0;
    double trial_one_ns, trial_pipe_ns;
    rpipe pipe_store;
} replay;

/* An object's fields, from its record where there is one, else from the
 * snapshot's arrays (r->rec == NULL: a heap marked in address order, see
 * _gcs_inspect_records_pay()). */
static inline uint64_t r_addr(const replay *r, uint32_t obj)
{
    return r->rec ? r->rec[obj].addr : r->g->addr[obj];
}

static inline uint32_t r_nptrs(const replay *r, uint32_t obj)
{
    return r->rec ? r->rec[obj].nptrs : r->g->nptrs[obj];
}

static inline int r_pf(const replay *r, uint32_t obj)
{
    return r->rec ? r->rec[obj].pf : pointer_free(r->g, &r->ly, obj);
}

static inline uint32_t r_node(const replay *r, uint32_t obj)
{
    return r->rec ? r->rec[obj].node : node_slot(r->g, obj, r->nnodes);
}

/* Its pointer fields (nptrs of them). */
static inline const uint32_t *r_edges(const replay *r, uint32_t obj)
{
    if (r->rec && r->rec[obj].nptrs <= REC_EDGES)
        return r->rec[obj].edge;
    return r->g->edges + r->g->edge_start[obj];
}

/* An access's class (bit 0) and, above it, how the marker reaches it
 * (replay.walk: gcs_cachesim_access_walk's walk), in raccess.cls. */
#define WALK_SHIFT 1

static inline void rsim(replay *r, const raccess *a)
{
    if (gcs_cachesim_access_walk(r->sim, a->addr, (gcs_access)(a->cls & 1), (int)(a->cls >> WALK_SHIFT)) == r->nlevels)
        r->node_miss[a->node] += 1;
}

static void pipe_publish(replay *r);
static void replay_trial(replay *r);

/* An access of the walk put aside (see replay.aside). */
static void stage_push(replay *r, uint64_t addr, gcs_access cls, uint32_t obj)
{
    if (!r->stage)
        return;
    if (r->nstage == r->stage_cap) {
        size_t ncap = r->stage_cap * 2;
        raccess *s = realloc(r->stage, ncap * sizeof *s);
        if (!s) {
            r->oom = 2; /* the stages', not the stack's */
            return;
        }
        r->stage = s;
        r->stage_cap = ncap;
    }
    r->stage[r->nstage++] = (raccess){addr, r_node(r, obj), (uint32_t)cls | (uint32_t)r->walk << WALK_SHIFT};
}

static inline void racc(replay *r, uint64_t addr, gcs_access cls, uint32_t obj)
{
    if (__builtin_expect(r->aside, 0)) {
        stage_push(r, addr, cls, obj);
        return;
    }
    if (__builtin_expect(++r->issued == r->next_check, 0))
        replay_trial(r);
    if (r->pipe) {
        /* the node now, from the record the walk has at hand, not from
         * the simulator's thread at random later */
        r->cur[r->ncur++] = (raccess){addr, r_node(r, obj), (uint32_t)cls | (uint32_t)r->walk << WALK_SHIFT};
        if (__builtin_expect(r->ncur == PIPE_CHUNK, 0))
            pipe_publish(r);
        return;
    }
    if (!r->rec) {
        /* marked in address order: the simulator's rows are met in order
         * too, and the host's prefetchers find them without the ring */
        if (gcs_cachesim_access_walk(r->sim, addr, cls, r->walk) == r->nlevels)
            r->node_miss[r_node(r, obj)] += 1;
        return;
    }
    uint64_t line1 = (addr >> r->ly.lshift) + 1;
    if (line1 != r->last_line) { /* a repeat of the line needs no prefetch */
        r->last_line = line1;
        gcs_cachesim_prefetch(r->sim, addr);
    }
    unsigned slot = (r->rhead + r->rcount) % RING;
    if (r->rcount == RING) {
        rsim(r, &r->ring[r->rhead]);
        r->rhead = (r->rhead + 1) % RING;
    } else {
        r->rcount++;
    }
    r->ring[slot] = (raccess){addr, r_node(r, obj), (uint32_t)cls | (uint32_t)r->walk << WALK_SHIFT};
}

static void rdrain(replay *r)
{
    for (; r->rcount > 0; r->rcount--) {
        rsim(r, &r->ring[r->rhead]);
        r->rhead = (r->rhead + 1) % RING;
    }
}

/* ---- the pipeline ---- */

/* Simulates n accesses that the walk has stored, in order, their simulator
 * rows prefetched PIPE_LOOKAHEAD accesses ahead: the pipeline's second
 * stage, and the staged replay's (_gcs_inspect_bench_opts.stages). */
static void simulate_stored(replay *r, const raccess *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* the stored lines may come from the walk's core: fetch them well
         * ahead, so that reading an address to prefetch its rows does not
         * wait for them */
        if ((i & 3) == 0)
            __builtin_prefetch(a + i + 4 * PIPE_LOOKAHEAD);
        if (i + PIPE_LOOKAHEAD < n)
            gcs_cachesim_prefetch(r->sim, a[i + PIPE_LOOKAHEAD].addr);
        rsim(r, &a[i]);
    }
}

/* Simulator thread: each chunk in turn. */
static void *pipe_main(void *arg)
{
    rpipe *p = arg;
    replay *r = p->r;
    for (uint64_t c = 0;; c++) {
        while (atomic_load_explicit(&p->produced, memory_order_acquire) == c) {
            if (atomic_load_explicit(&p->done, memory_order_acquire) &&
                atomic_load_explicit(&p->produced, memory_order_acquire) == c)
                return NULL;
            sched_yield();
        }
        simulate_stored(r, p->buf + (c % PIPE_CHUNKS) * PIPE_CHUNK, p->len[c % PIPE_CHUNKS]);
        atomic_store_explicit(&p->consumed, c + 1, memory_order_release);
    }
}

/* Walk thread: hand over the filled chunk, then wait for a free one. */
static void pipe_publish(replay *r)
{
    rpipe *p = r->pipe;
    uint64_t c = atomic_load_explicit(&p->produced, memory_order_relaxed);
    p->len[c % PIPE_CHUNKS] = r->ncur;
    atomic_store_explicit(&p->produced, c + 1, memory_order_release);
    c++;
    while (c - atomic_load_explicit(&p->consumed, memory_order_acquire) >= PIPE_CHUNKS)
        sched_yield();
    r->cur = p->buf + (c % PIPE_CHUNKS) * PIPE_CHUNK;
    r->ncur = 0;
}

/* Starts the simulator thread; 0 (one thread) when it cannot. */
static int pipe_start(replay *r, rpipe *p)
{
    memset(p, 0, sizeof *p);
    p->r = r;
    p->buf = malloc((size_t)PIPE_CHUNKS * PIPE_CHUNK * sizeof *p->buf);
    if (!p->buf)
        return 0;
    atomic_init(&p->produced, 0);
    atomic_init(&p->consumed, 0);
    atomic_init(&p->done, 0);
    if (pthread_create(&p->thread, NULL, pipe_main, p) != 0) {
        free(p->buf);
        return 0;
    }
    r->pipe = p;
    r->cur = p->buf;
    r->ncur = 0;
    return 1;
}

/* The last chunk, then wait for the simulator to finish it. */
static void pipe_finish(replay *r)
{
    rpipe *p = r->pipe;
    if (!p)
        return;
    if (r->ncur > 0) {
        uint64_t c = atomic_load_explicit(&p->produced, memory_order_relaxed);
        p->len[c % PIPE_CHUNKS] = r->ncur;
        atomic_store_explicit(&p->produced, c + 1, memory_order_release);
    }
    atomic_store_explicit(&p->done, 1, memory_order_release);
    pthread_join(p->thread, NULL);
    free(p->buf);
    r->pipe = NULL;
}

/* The pipeline's trial (see "the pipeline" above): called when the walk has
 * produced next_check accesses, before the access that reached it is
 * handed on, so that every access goes through exactly one stage in order. */
static void replay_trial(replay *r)
{
    uint64_t now = gcs_now_ns();
    r->next_check = UINT64_MAX;
    if (r->trial_step == 0) {
        r->trial_step = 1;
        r->trial_t0 = now;
        r->next_check = r->issued + TRIAL_WINDOW;
    } else if (r->trial_step == 1) {
        r->trial_one_ns = (double)(now - r->trial_t0);
        rdrain(r); /* the ring's accesses precede the pipeline's */
        r->trial_step = 3;
        if (pipe_start(r, &r->pipe_store)) {
            r->trial_step = 2;
            r->trial_t0 = gcs_now_ns();
            r->next_check = r->issued + TRIAL_WINDOW;
        }
    } else if (r->trial_step == 2) {
        r->trial_pipe_ns = (double)(now - r->trial_t0);
        r->trial_step = 3;
        if (r->trial_pipe_ns >= r->trial_one_ns)
            pipe_finish(r); /* back to one thread, the ring empty */
    }
}

/* An object about to be examined: its mark byte and record, as the
 * collector prefetches a FIFO entry's header and mark. */
static inline void rprefetch_obj(const replay *r, uint32_t obj)
{
    __builtin_prefetch(r->marked + obj, 1);
    if (r->rec) {
        __builtin_prefetch(r->rec + obj);
    } else {
        __builtin_prefetch(r->g->addr + obj);
        __builtin_prefetch(r->g->nptrs + obj);
        __builtin_prefetch(r->g->edge_start + obj);
    }
}

static inline void rpush(replay *r, uint32_t obj, uint32_t begin, uint32_t end)
{
    if (__builtin_expect(r->hi == r->cap, 0)) {
        size_t ncap = r->cap * 2;
        rentry *s = realloc(r->stack, ncap * sizeof *s);
        if (!s) {
            r->oom = 1;
            return;
        }
        r->stack = s;
        r->cap = ncap;
    }
    r->stack[r->hi++] = (rentry){obj, begin, end};
}

/* mark_set(): test (a read of the mark), then set (an RW) if unmarked; the
 * newly marked object's header is read next unless read_hdr is 0 (an object
 * on a pointer-free page, see pointer_free()). */
static inline int rexamine(replay *r, uint32_t obj, int read_hdr)
{
    uint64_t a = r_addr(r, obj);
    if (r->marked[obj]) {
        racc(r, mark_addr(&r->ly, a), GCS_ACCESS_READ, obj);
        return 0;
    }
    r->marked[obj] = 1;
    r->nmarked++;
    racc(r, mark_addr(&r->ly, a), GCS_ACCESS_RW, obj);
    if (read_hdr)
        racc(r, a - r->ly.hdr, GCS_ACCESS_READ, obj);
    return 1;
}

/* The NULL tests of gc/mark.c's loop, each a branch of its own: an
 * object's fields (push_fields), a large array's elements, a chain's next.
 * A test whose outcome differs from its last one is a switch (model.h). */
enum { NULL_AT_FIELDS, NULL_AT_ELEMENTS, NULL_AT_CHAIN };
static inline void rnull_test(replay *r, int site, int is_null)
{
    r->null_fields += (uint64_t)is_null;
    r->null_switches += (uint64_t)(r->last_null[site] != is_null);
    r->last_null[site] = (uint8_t)is_null;
}

/* push_fields(): fields [b, e) read last to first (one access per line),
 * non-NULL ones pushed. */
static inline void rpush_fields(replay *r, uint32_t obj, uint32_t b, uint32_t e)
{
    const uint32_t *ed = r_edges(r, obj);
    uint64_t a = r_addr(r, obj), prev = UINT64_MAX;
    for (uint32_t k = e; k > b;) {
        k--;
        uint64_t fa = a + 8 * (uint64_t)k;
        if ((fa >> r->ly.lshift) != prev) {
            prev = fa >> r->ly.lshift;
            racc(r, fa, GCS_ACCESS_READ, obj);
        }
        uint32_t c = ed[k];
        rnull_test(r, NULL_AT_FIELDS, c == GCS_SNAPSHOT_NULL);
        if (c != GCS_SNAPSHOT_NULL) {
            rprefetch_obj(r, c);
            rpush(r, c, 0, 0);
        }
    }
}

/* Do records pay?  Building them writes 32 bytes per object into fresh
 * memory, which costs more than it saves when the mark visits objects
 * nearly in id (address) order: the snapshot's arrays then stream through
 * the host's caches.  That is the case when objects point near themselves
 * (a list, a tree in preorder: the first child is the next object); a heap
 * whose first pointers jump far (a random graph) is walked in random order.
 * Sampled on up to 1024 objects; either way the results are the same. */
int _gcs_inspect_records_pay(const gcs_snapshot *g)
{
    uint64_t n = g->nobjects, seen = 0, far = 0;
    for (uint64_t j = 0; j < 1024 && n > 0; j++) {
        uint64_t i = j * n / 1024;
        if (g->nptrs[i] == 0)
            continue;
        uint32_t c = g->edges[g->edge_start[i]];
        if (c == GCS_SNAPSHOT_NULL)
            continue;
        seen++;
        far += (c > i ? c - i : i - c) > 256;
    }
    return seen > 0 && 4 * far > seen;
}

/* gc/mark.c mark_drain() for one worker, on ids. */
static void replay_run(replay *r)
{
    const gcs_snapshot *g = r->g;
    uint32_t fifo[GCS_GC_MARK_FIFO];
    unsigned fifo_head = 0, fifo_count = 0;
    for (uint64_t k = 0; k < g->nroots; k++)
        rpush(r, g->roots[k], 0, 0);
    for (;;) {
        uint32_t obj;
        if (r->oom)
            return;
        if (r->hi > 0) {
            rentry e = r->stack[--r->hi];
            if (__builtin_expect(e.end != 0, 0)) {
                /* a chunk of a large pointer array: the rest goes back first,
                 * the elements are examined in place, in order */
                uint32_t end = e.end;
                if (end - e.begin > GCS_GC_CHUNK_FIELDS) {
                    rpush(r, e.obj, e.begin + GCS_GC_CHUNK_FIELDS, end);
                    end = e.begin + GCS_GC_CHUNK_FIELDS;
                }
                /* a chunk entry is an array of more than GCS_GC_CHUNK_FIELDS
                 * fields: they are in the snapshot's edges, not its record */
                const uint32_t *ed = g->edges + g->edge_start[e.obj];
                uint64_t a = r_addr(r, e.obj), prev = UINT64_MAX;
                uint32_t all_end = e.end;
                for (uint32_t f = e.begin; f < end; f++) {
                    /* the elements are known ahead, as in gc/mark.c */
                    if (f + GCS_GC_MARK_FIFO < all_end && ed[f + GCS_GC_MARK_FIFO] != GCS_SNAPSHOT_NULL)
                        rprefetch_obj(r, ed[f + GCS_GC_MARK_FIFO]);
                    uint64_t fa = a + 8 * (uint64_t)f;
                    if ((fa >> r->ly.lshift) != prev) {
                        prev = fa >> r->ly.lshift;
                        r->walk = 1; /* the array's own lines, read in order */
                        racc(r, fa, GCS_ACCESS_READ, e.obj);
                        r->walk = 0;
                    }
                    uint32_t c = ed[f];
                    rnull_test(r, NULL_AT_ELEMENTS, c == GCS_SNAPSHOT_NULL);
                    if (c == GCS_SNAPSHOT_NULL)
                        continue;
                    r->array_elements++;
                    int pf = r_pf(r, c);
                    if (!rexamine(r, c, !pf))
                        continue;
                    r->array_leaves += (uint64_t)pf; /* marked unread */
                    uint32_t np = r_nptrs(r, c), cend = np;
                    if (np == 0)
                        continue;
                    if (np > GCS_GC_CHUNK_FIELDS) {
                        rpush(r, c, GCS_GC_CHUNK_FIELDS, np);
                        cend = GCS_GC_CHUNK_FIELDS;
                    }
                    rpush_fields(r, c, 0, cend);
                }
                continue;
            }
            if (!r->rec) /* its fields, read when it leaves the FIFO */
                __builtin_prefetch(g->edges + g->edge_start[e.obj]);
            if (fifo_count < GCS_GC_MARK_FIFO) {
                fifo[(fifo_head + fifo_count++) % GCS_GC_MARK_FIFO] = e.obj;
                continue;
            }
            obj = fifo[fifo_head];
            fifo[fifo_head] = e.obj;
            fifo_head = (fifo_head + 1) % GCS_GC_MARK_FIFO;
        } else if (fifo_count > 0) {
            obj = fifo[fifo_head];
            fifo_head = (fifo_head + 1) % GCS_GC_MARK_FIFO;
            fifo_count--;
        } else {
            rdrain(r);
            return;
        }
        r->walk = 0; /* out of the FIFO: prefetched ahead, not walked */
    examine: /* as in gc/mark.c, a popped object or a chain's next has its header read */
        if (!rexamine(r, obj, 1))
            continue;
        uint32_t np = r_nptrs(r, obj), end = np;
        if (np > GCS_GC_CHUNK_FIELDS) {
            rpush(r, obj, GCS_GC_CHUNK_FIELDS, np);
            end = GCS_GC_CHUNK_FIELDS;
        }
        if (end == 1 && fifo_count == 0 && r->hi == 0) {
            /* a chain: follow the pointer directly */
            r->chain_steps++;
            uint64_t from = r_addr(r, obj);
            racc(r, from, GCS_ACCESS_READ, obj);
            uint32_t c = r_edges(r, obj)[0];
            rnull_test(r, NULL_AT_CHAIN, c == GCS_SNAPSHOT_NULL);
            if (c != GCS_SNAPSHOT_NULL) {
                /* followed directly: the chain is walked, not prefetched;
                 * a jump to another page is a load no prefetcher saw coming */
                uint64_t to = r_addr(r, c);
                r->walk = (to > from ? to - from : from - to) >= 4096 ? 2 : 1;
                r->dependent_steps += r->walk == 2;
                obj = c;
                goto examine;
            }
            r->walk = 0;
            continue;
        }
        r->walk = 0;
        rpush_fields(r, obj, 0, end);
    }
}

/* ---- the slow predictor's entry ------------------------------------------------------ */

int _gcs_inspect_replay(const gcs_snapshot *g, const layout *ly, int nnodes, const robj *rec,
                        const gcs_inspect_opts *opts, const _gcs_inspect_bench_opts *bench,
                        gcs_inspect_result *out, _gcs_inspect_bench_result *bout, gcs_err *err)
{
    static const _gcs_inspect_bench_opts no_bench;
    if (!bench)
        bench = &no_bench;
    gcs_model_heap *h = &out->heap;
    uint64_t n = g->nobjects;
    replay r = {0};
    r.g = g;
    r.ly = *ly;
    r.nnodes = nnodes;
    r.aside = bench->walk_only || bench->stages;
    if (bench->stages && !bench->walk_only) {
        /* about three accesses per object; grown as needed */
        r.stage_cap = 4 * (size_t)(n ? n : 1);
        r.stage = malloc(r.stage_cap * sizeof *r.stage);
    }
    out->geom.stream_prefetch = opts->stream_prefetch;
    /* the sampled simulation (gcs_inspect_opts.sim_sample), where asked for */
    out->geom.line_sample_shift = bench->line_sample > 0 ? bench->line_sample
                                  : bench->line_sample < 0 ? 0 : opts->sim_sample;
    r.sim = gcs_cachesim_new(&out->geom, err);
    if (r.sim) /* what the levels allowed */
        out->geom.line_sample_shift = gcs_cachesim_line_sample(r.sim);
    uint64_t mark_table_bytes = (g->params.heap_limit >> ly->gshift) / (ly->bits ? 8 : 1) + 8;
    if (r.sim && ly->mark_base + mark_table_bytes > gcs_cachesim_addr_limit(r.sim)) {
        gcs_err_set(err, "snapshot heap of %llu bytes is too large to simulate exactly with this "
                         "profile's caches (too few sets): use --fast",
                    (unsigned long long)g->params.heap_limit);
        gcs_cachesim_free(r.sim);
        r.sim = NULL; /* fails below like a simulator that could not be made */
    }
    r.marked = _gcs_huge_alloc(n ? n : 1);
    r.rec = rec;
    if (r.marked)
        memset(r.marked, 0, n ? n : 1);
    r.node_miss = calloc((size_t)nnodes + 1, sizeof *r.node_miss);
    r.cap = 4096;
    r.stack = malloc(r.cap * sizeof *r.stack);
    int rc = 0;
    if (!r.sim) {
        rc = -1;
    } else if (!r.marked || !r.node_miss || !r.stack || (r.stage_cap && !r.stage)) {
        gcs_err_set(err, "inspect: out of memory for the mark replay");
        rc = -1;
    } else {
        r.nlevels = r.sim->nlevels;
        r.next_check = UINT64_MAX;
        if (bench->replay_threads != 1 && !r.aside && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
            if (bench->replay_threads == 2)
                pipe_start(&r, &r.pipe_store); /* asked for: no trial */
            else
                r.next_check = TRIAL_SKIP; /* the pipeline's trial */
        }
        uint64_t tw = gcs_now_ns();
        replay_run(&r);
        if (r.stage && !r.oom) {
            uint64_t ts = gcs_now_ns();
            simulate_stored(&r, r.stage, r.nstage);
            if (bout) {
                bout->stage_walk_ns = (double)(ts - tw);
                bout->stage_sim_ns = (double)(gcs_now_ns() - ts);
            }
        }
        out->replay_threads = r.pipe ? 2 : 1;
        if (bout) {
            bout->trial_one_ns = r.trial_one_ns;
            bout->trial_pipe_ns = r.trial_pipe_ns;
        }
        pipe_finish(&r);
        if (r.oom) {
            gcs_err_set(err, "inspect: out of memory for the mark replay's %s",
                        r.oom == 2 ? "stored accesses" : "stack");
            rc = -1;
        }
    }
    if (rc == 0) {
        /* a finished walk leaves nothing on its stack or in the ring, and
         * marks each object once */
        gcs_assert_internal(r.hi == 0 && r.rcount == 0 && r.nmarked <= n);
        gcs_cachesim_result_get(r.sim, &out->sim);
        for (int k = 0; k < GCS_ACCESS_COUNT; k++) {
            out->accesses[k] = out->sim.accesses[k];
            h->q1[k] = (double)out->sim.memory[k];
            h->q1_prefetched[k] = (double)out->sim.memory_prefetched[k];
            h->q1_streamed[k] = (double)out->sim.memory_streamed[k];
            h->q1_sequential[k] = (double)out->sim.memory_sequential[k];
        }
        h->streams_counted = opts->stream_prefetch != 0;
        /* the chain's share of the unstreamed misses, counted exactly at the
         * private levels, applied to the memory's (which the last level
         * may sample) */
        for (int k = 0; k < GCS_ACCESS_COUNT; k++) {
            uint64_t none = r.sim->class_misses[k][GCS_CACHESIM_NOT_STREAMED];
            double own = h->q1[k] - fmin(h->q1_streamed[k], h->q1[k]);
            h->q1_dependent[k] = h->streams_counted && none > 0 && own > 0
                                     ? fmin(own, own * (double)r.sim->dependent_unstreamed[k] / (double)none)
                                     : 0;
        }
#if GCS_ASSERT_ON
        {
            /* the per-node misses are the last level's misses, split by node
             * (exactly so when the last level is not sampled) */
            double by_node = 0;
            uint64_t last = 0;
            for (int k = 0; k <= nnodes; k++)
                by_node += r.node_miss[k];
            for (int c = 0; c < GCS_ACCESS_COUNT; c++)
                last += out->sim.level[out->sim.nlevels - 1].misses[c];
            gcs_assert_internal(out->sim.sampled_share < 1 || out->sim.line_share < 1 || by_node == (double)last);
        }
#endif
        h->live_lines_avg = out->sim.live_lines_avg;
        h->private_hits = 0;
        for (int k = 0; k < out->geom.private_levels && k < out->sim.nlevels; k++)
            for (int c = 0; c < GCS_ACCESS_COUNT; c++)
                h->private_hits += (double)out->sim.level[k].hits[c];
        h->chain_steps = r.chain_steps;
        h->dependent_steps = r.dependent_steps;
        h->array_elements = r.array_elements;
        h->array_leaves = r.array_leaves;
        h->null_fields = r.null_fields;
        h->null_switches = r.null_switches;
        out->marked = r.nmarked;
        _gcs_inspect_set_v(h, r.node_miss, nnodes);
    }
    gcs_cachesim_free(r.sim);
    free(r.marked);
    free(r.node_miss);
    free(r.stack);
    free(r.stage);
    return rc;
}
