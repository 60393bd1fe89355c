/* mark.c -- the parallel mark (the pool's mark job), the rescan after a
 * mark-stack overflow, and the T-infinity pass.
 *
 * The mark loop is the hot loop every measurement is made of, so it has this
 * translation unit to itself and its flags (the Makefile aligns loops and
 * jumps in mark.o): code added elsewhere in gc/ cannot move its branch
 * targets.  Nothing here calls the pool (pool.c) or the collection
 * (collect.c); they call in.
 *
 * Mark: every worker marks depth-first from a private stack (plain array, no
 * atomics, the hot path) and owns a Chase-Lev deque (deque.c) through which
 * it shares work.  Stacks hold pointers still to be examined (edges, see
 * "the mark loop" below): an object is scanned once, by the worker that sets
 * its mark (in RELAXED_BYTES mode, rarely, by two workers that race).
 *
 * Sharing (lazy task creation): a busy worker publishes work only when some
 * worker is idle (mark_idle > 0) and its own deque is empty.  It then moves
 * the oldest half of its private stack into its deque, and idle workers steal
 * from the oldest end of that deque -- the bottom of the owner's stack, the
 * entries nearest the roots and so (for trees) the biggest pieces of work.
 * The owner's private push/pop never touch shared memory; its only shared
 * access per object is a relaxed load of mark_idle, which stays in its cache
 * while nobody is idle.
 *
 * Termination: mark_idle counts workers that are idle.  A worker increments
 * it only when its private stack and its deque are both empty, and decrements
 * it *before* it tries to steal (so a thief holding a stolen entry is never
 * counted idle).  Hence at any instant when mark_idle == P: no worker holds an
 * entry, every deque is empty (only its owner pushes, and the owner is idle),
 * so no unscanned marked object exists and none can appear -- marking is
 * complete and stays complete.  A worker leaves only on reading P, so marking
 * never ends early.  It never hangs: while work exists some worker is not
 * idle and works (finite work: each object is scanned at most a few times,
 * each scan pushes its fields once); when the
 * last entry is scanned all workers become idle; a thief that decremented on a
 * stale size hint fails its steal and increments again, so the counter
 * reaches P and every waiting worker reads it.
 */
#define SEARCH_SPIN_ROUNDS 1024 /* pause instructions (~10-140 cycles each) before yielding */
#define STEAL_BATCH 16          /* most entries one search takes from one victim */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/internal.h"
#include "gc_internal.h"
#include "gcscale/trace.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- private stack ------------------------------------------------------ */

static int stack_grow(gcs_worker *w)
{
    if (w->lo > 0) { /* slide down first: spills leave a hole at the bottom */
        memmove(w->stack, w->stack + w->lo, (w->hi - w->lo) * sizeof *w->stack);
        w->hi -= w->lo;
        w->lo = 0;
        if (w->hi < w->cap / 2 + 1)
            return 0;
    }
    gcs_assert_internal(w->lo == 0 && w->hi <= w->cap);
    size_t ncap = w->cap ? w->cap * 2 : 4096;
    gcs_mark_entry *s = realloc(w->stack, ncap * sizeof *s);
    if (!s)
        return -1;
    w->stack = s;
    w->cap = ncap;
    gcs_assert_internal(w->hi < w->cap);
    return 0;
}

static inline void stack_push(gcs_worker *w, uintptr_t begin, uintptr_t end)
{
    if (__builtin_expect(w->hi == w->cap, 0)) {
        if (stack_grow(w) < 0) {
            /* Out of memory for the private stack: push to the deque instead
             * (it grows too); if that fails as well, the entry is dropped:
             * note it, and the coordinator rescans the heap after the mark
             * (see "mark-stack overflow" below). */
            if (_gcs_deque_push(&w->deque, (gcs_mark_entry){begin, end}) < 0)
                w->oom = 1;
            return;
        }
    }
    w->stack[w->hi].begin = begin;
    w->stack[w->hi].end = end;
    w->hi++;
}

/* Publish the oldest half of the private stack for idle workers. */
static void stack_spill_oldest_half(gcs_worker *w)
{
    gcs_assert_internal(w->lo <= w->hi && w->hi <= w->cap);
    size_t k = (w->hi - w->lo) / 2;
    for (size_t i = 0; i < k; i++) {
        if (_gcs_deque_push(&w->deque, w->stack[w->lo]) < 0)
            break; /* keep it private; correctness does not depend on sharing */
        w->lo++;
    }
    w->st.spills++;
}

/* ---- setting marks ---------------------------------------------------------
 * The loop reads the collector's tables through a copy of their addresses
 * held in registers: through gc->, every store of a mark byte (a char, which
 * may alias anything) would make the compiler load gc->base, gc->mark_bytes
 * and gc->page_noscan again for the next object. */
typedef struct mark_tables {
    uintptr_t base;
    uint8_t *mark_bytes;
    uint64_t *mark_bits;
    const uint8_t *page_noscan;
} mark_tables;

/* Test first with a plain (relaxed) load: most pointers in real heaps lead to
 * objects already marked, and a load does not take the line exclusive. */
static inline __attribute__((always_inline)) int
mark_set(const mark_tables t, uintptr_t obj, const int mode)
{
    size_t g = (obj - 8 - t.base) >> GCS_GRANULE_SHIFT;
    if (mode == GCS_GC_MARK_ATOMIC_BITS) {
        uint64_t *word = &t.mark_bits[g >> 6];
        uint64_t bit = 1ull << (g & 63);
        if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit)
            return 0;
        return !(__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit);
    }
    uint8_t *m = &t.mark_bytes[g];
    if (__atomic_load_n(m, __ATOMIC_RELAXED))
        return 0;
    if (mode == GCS_GC_MARK_ATOMIC_BYTES)
        return !__atomic_exchange_n(m, 1, __ATOMIC_RELAXED);
    __atomic_store_n(m, 1, __ATOMIC_RELAXED);
    return 1;
}

/* Where obj's mark lives (for prefetching). */
static inline __attribute__((always_inline)) const void *
mark_addr(const mark_tables t, uintptr_t obj, const int mode)
{
    size_t g = (obj - 8 - t.base) >> GCS_GRANULE_SHIFT;
    return mode == GCS_GC_MARK_ATOMIC_BITS ? (const void *)&t.mark_bits[g >> 6]
                                           : (const void *)&t.mark_bytes[g];
}

/* 1 + the size class when obj lives on a pointer-free page, else 0.  Such an
 * object needs its mark and nothing else, so an array of small leaves is
 * marked without bringing the leaves into the cache (a leaf costs its share
 * of a mark-table line instead of a line of its own). */
static inline __attribute__((always_inline)) unsigned page_noscan_of(const mark_tables t, uintptr_t obj)
{
    return t.page_noscan[(obj - t.base) >> GCS_PAGE_SHIFT];
}

/* Roots are pushed like fields: unmarked, the mark loop tests them. */
void _gcs_mark_roots_push(gcs_collector *gc, uintptr_t obj, int worker)
{
    gcs_assert_internal(worker >= 0 && worker < gc->pool_size);
    gcs_worker *w = &gc->workers[worker];
    stack_push(w, obj, 0);
    if (gc->job_instr)
        w->st.edges_examined++; /* a root's mark test */
}

/* ---- the mark loop -----------------------------------------------------------
 *
 * Edge enqueuing with a prefetch FIFO (Garner, Blackburn and Frampton,
 * "Effective prefetch for mark-sweep garbage collection", ISMM 2007): scanning
 * an object pushes every non-NULL field without looking at the child; a
 * popped child first waits in a small FIFO while its header and mark byte
 * are prefetched, and only when it leaves the FIFO is its mark tested and set
 * and, if it was unmarked, its fields scanned.  The FIFO keeps
 * GCS_GC_MARK_FIFO (gc.h) misses in flight where plain depth-first marking
 * would stall on each object in turn.  32 of them: with DRAM at ~150 ns and
 * 2-6 ns of work per object, fewer in flight leave the loop waiting, and
 * more made the tree slower again (docs/collector.md, "The mark loop").
 * Fields are pushed last to first so that field 0 is visited first: a
 * structure allocated in preorder is then marked in address order.
 *
 * The elements of a pointer array are examined in place, and there a child
 * on a pointer-free page is marked and counted without reading (or
 * prefetching) its header.  Popped children are not checked: the page-table
 * lookup ahead of the header prefetch costs the tree more than the lines it
 * saves (`make bench`).
 *
 * Invariant: every entry on a private stack, in a FIFO or in a deque is a
 * pointer (or a pointer-array chunk) still to be examined; an object is
 * scanned only by the worker whose mark_set() changed its mark from 0 to 1
 * (or, in RELAXED_BYTES mode, by the few workers that raced on that store).
 */

static inline __attribute__((always_inline)) void
push_fields(gcs_worker *w, const uintptr_t *f, const uintptr_t *end, uint64_t *nulls, const int instr)
{
    while (end > f) {
        uintptr_t c = *--end;
        if (c)
            stack_push(w, c, 0);
        else if (instr)
            ++*nulls;
    }
}

/* Instrumentation at one add per object: the loop sums the headers of the
 * objects it scans (hsum += hdr; a header is words << 32 | nptrs) and splits
 * the sum every GCS_HSUM_FLUSH objects (a countdown, which also counts the
 * objects) and at the end: the low half
 * is the pointer fields, the high half the payload words.  Objects with more
 * than GCS_GC_CHUNK_FIELDS pointer fields are counted apart, so the low half
 * grows by at most 128 per object and never carries.  Objects followed along
 * a chain have exactly one pointer field, so their headers go to a sum of
 * their own (w->chain_hsum: in memory, as each step of a chain waits on
 * memory anyway) whose low half counts them, without the countdown; the next
 * countdown or the end flushes it.  Pointer-free objects marked
 * unread from an array chunk are counted after the chunk and add only their
 * header's 8 bytes to bytes_marked (their size is in a header the mark does
 * not read).  The sums are exact unless one worker scans over 32 GiB
 * between two flushes (4096 objects, or one chain, that large).
 * (Counting bytes and pointers separately per object, or objects from the
 * FIFO's turns, measured slower; what the countdown costs is what
 * gc-bench --instr-cost reports: docs/gc-bench.md, docs/collector.md.) */
#define GCS_HSUM_FLUSH 4096u

static inline void hdr_flush(gcs_worker *w, uint64_t *hsum, uint32_t *budget)
{
    uint64_t chain = w->chain_hsum;
    w->st.objects_scanned += GCS_HSUM_FLUSH - *budget; /* counted down from GCS_HSUM_FLUSH */
    *budget = GCS_HSUM_FLUSH;
    /* objects followed along chains: one pointer field each */
    w->st.objects_scanned += (uint32_t)chain;
    w->st.pointers_scanned += (uint32_t)chain;
    w->st.bytes_marked += 8 * (chain >> 32);
    w->chain_hsum = 0;
    w->st.bytes_marked += 8 * (*hsum >> 32);
    w->st.pointers_scanned += (uint32_t)*hsum;
    *hsum = 0;
}

/* Pop and scan until this worker's private stack, FIFO and deque are empty.
 * instr (a compile-time constant) keeps the per-object counters; without it
 * the loop is the bare mark, which is how the counters' cost is measured. */
static inline __attribute__((always_inline)) void
mark_drain(gcs_worker *w, const int mode, const int instr)
{
    gcs_collector *gc = w->gc;
    const mark_tables t = {(uintptr_t)gc->base, gc->mark_bytes, gc->mark_bits, gc->page_noscan};
    /* Only the per-object counters (hsum, budget, nulls) live in
     * registers; the others are added into w->st where they change rarely
     * (per chunk, per flush), and the chains' sum lives in w: with all eight
     * in registers the instrumented copy kept the FIFO's state on the stack
     * (docs/gc-bench.md).  A counter in memory costs more per change than
     * one in a register, so only the rarely changed ones live there. */
    uint64_t hsum = 0;
    uint64_t objects_before = instr ? w->st.objects_scanned : 0;
    uint64_t pointers_before = instr ? w->st.pointers_scanned : 0;
    if (instr)
        w->chain_hsum = 0;
    /* NULL pointer fields read.  Mark tests (the model's edges + roots,
     * edges_examined) = the non-NULL pointer fields read + the roots, and
     * this worker's share is the tests that its reads cause (+ the roots
     * handed to it, _gcs_mark_roots_push), whoever then pops them: that
     * needs only a count of the NULLs, on the branch that skips them, and a
     * random graph has none.  (Counting the tests where they happen, as
     * objects scanned + pointers that found their object marked, measured
     * slower on random: docs/gc-bench.md.  An array chunk, examined in place,
     * still counts its elements that found their object marked, to count the
     * pointer-free objects it marks unread; counting those instead measured
     * worse on random.) */
    uint64_t nulls = 0;
    uint32_t budget = GCS_HSUM_FLUSH;
    uintptr_t fifo[GCS_GC_MARK_FIFO];
    unsigned fifo_head = 0, fifo_count = 0;
    for (;;) {
        uintptr_t obj;
        if (w->hi > w->lo) {
            if (__builtin_expect(atomic_load_explicit(&gc->mark_idle, memory_order_relaxed) != 0, 0)
                && w->hi - w->lo >= 2 && gcs_deque_size_hint(&w->deque) <= 0)
                stack_spill_oldest_half(w);
            gcs_mark_entry e = w->stack[--w->hi];
            if (__builtin_expect(e.end != 0, 0)) {
                /* A chunk of a large pointer array: leave the rest as its own
                 * entry, under this chunk's children, where thieves find it.
                 * When some worker is idle and this one has nothing published,
                 * publish the second half of the rest at once: handing the
                 * rest over whole would make the array bounce between workers
                 * one chunk per steal. */
                const uintptr_t *f = (const uintptr_t *)e.begin, *end = (const uintptr_t *)e.end;
                const uintptr_t *all_end = end;
                if (instr)
                    w->st.chunks_scanned++;
                if (end - f > GCS_GC_CHUNK_FIELDS) {
                    const uintptr_t *rest = f + GCS_GC_CHUNK_FIELDS, *rest_end = end;
                    if (__builtin_expect(atomic_load_explicit(&gc->mark_idle, memory_order_relaxed) != 0, 0)
                        && rest_end - rest >= 2 * GCS_GC_CHUNK_FIELDS && gcs_deque_size_hint(&w->deque) <= 0) {
                        const uintptr_t *mid = rest + (rest_end - rest) / 2;
                        if (_gcs_deque_push(&w->deque, (gcs_mark_entry){(uintptr_t)mid, (uintptr_t)rest_end}) == 0) {
                            rest_end = mid;
                            w->st.spills++;
                        }
                    }
                    stack_push(w, (uintptr_t)rest, (uintptr_t)rest_end);
                    end = f + GCS_GC_CHUNK_FIELDS;
                    all_end = rest_end;
                }
                if (instr)
                    w->st.pointers_scanned += (uint64_t)(end - f);
                /* Examine the elements in place (no round trip through the
                 * stack and FIFO): the array is read in order, so prefetching
                 * GCS_GC_MARK_FIFO elements ahead hides the children's misses.
                 * The chunk's pointer-free children are counted after it, as
                 * what its other elements (NULL, marked already, scanned) do
                 * not account for: nothing per element on the common path
                 * (an add per element there is kept on the stack by the
                 * compiler, and slows the wide shape). */
                uint64_t chunk_nulls = 0, chunk_revisits = 0, scanned = 0;
                for (const uintptr_t *p = f; p < end; p++) {
                    if (p + GCS_GC_MARK_FIFO < all_end) {
                        uintptr_t ahead = p[GCS_GC_MARK_FIFO];
                        if (ahead) {
                            if (!page_noscan_of(t, ahead))
                                __builtin_prefetch((const void *)(ahead - 8));
                            __builtin_prefetch(mark_addr(t, ahead, mode));
                        }
                    }
                    uintptr_t c = *p;
                    if (!c) {
                        if (instr)
                            chunk_nulls++;
                        continue;
                    }
                    if (!mark_set(t, c, mode)) {
                        if (instr)
                            chunk_revisits++;
                        continue;
                    }
                    if (page_noscan_of(t, c))
                        continue; /* pointer-free: marked, counted below */
                    uint64_t hdr = ((const uint64_t *)c)[-1];
                    const uintptr_t *cf = (const uintptr_t *)c, *cend = cf + GCS_HDR_NPTRS(hdr);
                    if (instr) {
                        scanned++;
                        hsum += hdr;
                        if (__builtin_expect(--budget == 0, 0))
                            hdr_flush(w, &hsum, &budget);
                    }
                    if (cend == cf)
                        continue;
                    if (cend - cf > GCS_GC_CHUNK_FIELDS) {
                        if (instr) {
                            hsum -= GCS_HDR_NPTRS(hdr);
                            w->st.pointers_scanned += GCS_GC_CHUNK_FIELDS; /* the rest: per chunk */
                        }
                        stack_push(w, (uintptr_t)(cf + GCS_GC_CHUNK_FIELDS), (uintptr_t)cend);
                        cend = cf + GCS_GC_CHUNK_FIELDS;
                    }
                    push_fields(w, cf, cend, &nulls, instr);
                }
                if (instr) {
                    w->st.objects_scanned += (uint64_t)(end - f) - chunk_nulls - chunk_revisits - scanned;
                    nulls += chunk_nulls;
                }
                continue;
            }
            uintptr_t c = e.begin;
            __builtin_prefetch((const void *)(c - 8));
            __builtin_prefetch(mark_addr(t, c, mode));
            if (fifo_count < GCS_GC_MARK_FIFO) {
                fifo[(fifo_head + fifo_count++) % GCS_GC_MARK_FIFO] = c;
                continue;
            }
            obj = fifo[fifo_head];
            fifo[fifo_head] = c;
            fifo_head = (fifo_head + 1) % GCS_GC_MARK_FIFO;
        } else if (fifo_count > 0) {
            obj = fifo[fifo_head];
            fifo_head = (fifo_head + 1) % GCS_GC_MARK_FIFO;
            fifo_count--;
        } else {
            gcs_mark_entry e;
            if (!_gcs_deque_take(&w->deque, &e))
                break;
            stack_push(w, e.begin, e.end);
            continue;
        }
    examine:
        if (!mark_set(t, obj, mode))
            continue;
        uint64_t hdr = ((const uint64_t *)obj)[-1];
        const uintptr_t *f = (const uintptr_t *)obj, *end = f + GCS_HDR_NPTRS(hdr);
        if (end - f == 1 && fifo_count == 0 && w->hi == w->lo) {
            /* A chain (linked list): nothing else is pending, so the FIFO
             * cannot hide this miss; follow the pointer directly instead of
             * a round trip through stack and FIFO.  This loop does little
             * else, so its counting is the cheapest we have: one add, no
             * countdown (see hdr_flush). */
            if (instr)
                w->chain_hsum += hdr; /* nptrs is 1: the low half counts them */
            obj = *f;
            if (obj) {
                __builtin_prefetch((const void *)(obj - 8));
                goto examine;
            }
            if (instr)
                nulls++; /* the chain's end */
            continue;
        }
        if (instr) {
            /* One add per object: the header is words << 32 | nptrs, so the
             * sum of headers sums both (see hdr_flush). */
            hsum += hdr;
            if (__builtin_expect(--budget == 0, 0))
                hdr_flush(w, &hsum, &budget);
        }
        if (end - f > GCS_GC_CHUNK_FIELDS) {
            if (instr) { /* keep the low half small: count big arrays apart */
                hsum -= GCS_HDR_NPTRS(hdr);
                w->st.pointers_scanned += GCS_GC_CHUNK_FIELDS; /* the rest: per chunk */
            }
            stack_push(w, (uintptr_t)(f + GCS_GC_CHUNK_FIELDS), (uintptr_t)end);
            end = f + GCS_GC_CHUNK_FIELDS;
        }
        push_fields(w, f, end, &nulls, instr);
    }
    if (!instr)
        return;
    hdr_flush(w, &hsum, &budget);
    uint64_t objects = w->st.objects_scanned - objects_before;
    w->st.bytes_marked += 8 * objects; /* the headers */
    w->st.edges_examined += w->st.pointers_scanned - pointers_before - nulls;
}

/* Idle: look for an entry to steal.  Returns 1 with the entry pushed on the
 * private stack, or 0 when marking is complete (see the argument on top). */
static inline __attribute__((always_inline)) int mark_find_work(gcs_worker *w, int nthreads,
                                                                const int instr)
{
    gcs_collector *gc = w->gc;
    uint64_t t0 = instr ? gcs_now_ns() : 0;
    gcs_trace_set_state(GCS_TRACE_GC_SEARCH); /* trace.h: per search, not per object */
    atomic_fetch_add_explicit(&gc->mark_idle, 1, memory_order_acq_rel);
    for (unsigned round = 0;; round++) {
        if (atomic_load_explicit(&gc->mark_idle, memory_order_acquire) == nthreads) {
            if (instr)
                w->st.search_ns += gcs_now_ns() - t0;
            gcs_trace_set_state(GCS_TRACE_GC_IDLE);
            return 0;
        }
        w->rng = w->rng * 1103515245u + 12345u;
        int start = (int)((w->rng >> 16) % (unsigned)nthreads);
        for (int k = 0; k < nthreads; k++) {
            gcs_worker *victim = &gc->workers[(start + k) % nthreads];
            if (victim == w || gcs_deque_size_hint(&victim->deque) <= 0)
                continue;
            atomic_fetch_sub_explicit(&gc->mark_idle, 1, memory_order_acq_rel);
            w->st.steal_attempts++;
            gcs_mark_entry e;
            if (_gcs_deque_steal(&victim->deque, &e) == GCS_STEAL_OK) {
                w->st.steals++;
                stack_push(w, e.begin, e.end);
                /* Take a few more while the victim has plenty: one entry can
                 * be a single object whose children are marked already (a
                 * search-tree record whose parent was reached first), and a
                 * thief living on such entries spends its time in this loop
                 * (docs/collector.md, "Stealing").  Never more than half of what
                 * the victim holds, so it keeps work of its own. */
                for (int more = 1; more < STEAL_BATCH; more++) {
                    if (gcs_deque_size_hint(&victim->deque) < 2 * more)
                        break;
                    w->st.steal_attempts++;
                    if (_gcs_deque_steal(&victim->deque, &e) != GCS_STEAL_OK)
                        break;
                    w->st.steals++;
                    stack_push(w, e.begin, e.end);
                }
                w->st.steal_searches++;
                if (instr)
                    w->st.search_ns += gcs_now_ns() - t0;
                gcs_trace_set_state(GCS_TRACE_GC_MARK);
                return 1;
            }
            atomic_fetch_add_explicit(&gc->mark_idle, 1, memory_order_acq_rel);
        }
        /* Spin, then yield.  sched_yield() hands the CPU to any other
         * runnable thread for a time slice, and a thief that is away misses
         * the work the busy worker publishes; but a thief that spins on a
         * CPU it shares with the busy worker (more workers than CPUs, as in
         * the tests' P = 8 on 2 cores, or other processes holding a CPU)
         * takes that worker's time.  So spin long (SEARCH_SPIN_ROUNDS, tens
         * of microseconds) with at most one worker per CPU, short with more,
         * and yield after that. */
        if (round < (nthreads <= gc->online_cpus ? SEARCH_SPIN_ROUNDS : 32))
            cpu_relax();
        else
            sched_yield();
    }
}

/* One copy of the drain loop per mode and instrumentation setting
 * (constants), each a function of its own aligned to a cache line.  Aligned,
 * so that where the linker happens to put the code (which moves with every
 * change anywhere in the library) does not move the loop's branch targets
 * across fetch blocks: unaligned, the same code's speed moved from one link
 * to the next.  Out of line, so that neither copy's code or registers depend
 * on the other's, nor on the search for work: inlined together into one
 * function, a change to the instrumented copy moved the bare one's speed
 * (docs/collector.md, "Instrumentation"). */
#define MARK_DRAIN_COPY(name, mode, instr) \
    static __attribute__((noinline, aligned(64))) void name(gcs_worker *w) { mark_drain(w, mode, instr); }
MARK_DRAIN_COPY(mark_drain_relaxed_bytes, GCS_GC_MARK_RELAXED_BYTES, 0)
MARK_DRAIN_COPY(mark_drain_atomic_bytes, GCS_GC_MARK_ATOMIC_BYTES, 0)
MARK_DRAIN_COPY(mark_drain_atomic_bits, GCS_GC_MARK_ATOMIC_BITS, 0)
MARK_DRAIN_COPY(mark_drain_relaxed_bytes_instr, GCS_GC_MARK_RELAXED_BYTES, 1)
MARK_DRAIN_COPY(mark_drain_atomic_bytes_instr, GCS_GC_MARK_ATOMIC_BYTES, 1)
MARK_DRAIN_COPY(mark_drain_atomic_bits_instr, GCS_GC_MARK_ATOMIC_BITS, 1)

typedef void (*drain_fn)(gcs_worker *);

/* The copy of the drain loop for this collection's mode and instrumentation
 * (the copies mark_begin made: the same for every worker, the rescan and the
 * sweep that reads these marks). */
static drain_fn drain_of(const gcs_collector *gc)
{
    int mode = gc->job_mode, instr = gc->job_instr;
    if (mode == GCS_GC_MARK_ATOMIC_BITS)
        return instr ? mark_drain_atomic_bits_instr : mark_drain_atomic_bits;
    if (mode == GCS_GC_MARK_ATOMIC_BYTES)
        return instr ? mark_drain_atomic_bytes_instr : mark_drain_atomic_bytes;
    return instr ? mark_drain_relaxed_bytes_instr : mark_drain_relaxed_bytes;
}

/* The pool's mark job on worker w (pool.c): drain, then look for work to
 * steal until marking is complete. */
void _gcs_mark_worker(gcs_worker *w, int nthreads)
{
    int instr = w->gc->job_instr;
    drain_fn drain = drain_of(w->gc);
    _gcs_llc_worker_start(w);
    uint64_t t0 = gcs_now_ns();
    /* job_start_ns was written under pool_lock before the broadcast that woke us */
    w->st.wake_ns = t0 > w->gc->job_start_ns ? t0 - w->gc->job_start_ns : 0;
    do
        drain(w);
    while (nthreads > 1 && (instr ? mark_find_work(w, nthreads, 1) : mark_find_work(w, nthreads, 0)));
    gcs_assert_internal(w->hi == w->lo); /* marking is complete: nothing left here */
    w->st.mark_ns = gcs_now_ns() - t0;
    _gcs_llc_worker_stop(w);
    w->st.busy_ns = w->st.mark_ns > w->st.search_ns ? w->st.mark_ns - w->st.search_ns : 0;
}

/* ---- mark-stack overflow ---------------------------------------------------
 * stack_push drops an entry, and sets w->oom, only when neither the private
 * stack nor the deque can grow (realloc and malloc both failed).  Whatever
 * was reachable only through dropped entries is then unmarked, and a sweep
 * would free it while it is still referenced.  So after every mark the
 * coordinator checks the flags (_gcs_mark_overflowed) and, if one is set,
 * rescans, as the Boehm collector does on mark-stack overflow, until a round
 * drops nothing (collect.c, mark_recover):
 *
 *   one round: clear the flags; push every root, and for every object that
 *   is marked when the heap walk reaches it, an entry for its pointer
 *   fields (a range entry, examined like a chunk of a pointer array); drain
 *   on worker 0's stack, the coordinator running the mark loop itself while
 *   the pool is idle.
 *
 * Why it is correct.  A round in which nothing was dropped leaves the marks
 * closed: an object marked before the round was pushed (the walk reaches
 * every marked slot) and its fields examined; an object marked during the
 * round was scanned by the mark loop, which pushed its fields, and none of
 * those pushes was dropped; every pushed entry is examined before the round
 * ends; the roots were pushed.  So every field of every marked object points
 * to a marked object, and every reachable object is marked.
 *
 * Why it ends.  The pushes of a round never fail: _gcs_mark_rescan_push
 * drains the stack when it is full, and the stack keeps the capacity it had
 * (a failed realloc leaves it as it was; it is at least 4096 entries from
 * _gcs_mark_stack_init, when the pool starts).  Inside the mark loop a push can only be dropped while
 * scanning an object that it has just marked (an entry popped first leaves
 * room for the chunk's rest and for a deque take).  So a round that drops
 * something has marked at least one object that was unmarked, and the
 * number of rounds is at most the number of reachable objects plus one --
 * in practice a few, since each round marks thousands.  Memory never has to
 * come back: the rescan allocates nothing beyond what the stack and deque
 * already hold.  The cost is a walk of the heap per round, only after an
 * overflow. */

int _gcs_mark_overflowed(const gcs_collector *gc, int threads)
{
    for (int i = 0; i < threads; i++)
        if (gc->workers[i].oom)
            return 1;
    return 0;
}

/* Worker 0's stack and deque, used by the coordinator thread: the workers
 * are parked on job_cond, and the pool_lock hand-offs of the last job and the
 * next order this thread's accesses after and before theirs. */
void _gcs_mark_rescan_begin(gcs_collector *gc, int threads)
{
    for (int i = 0; i < threads; i++)
        gc->workers[i].oom = 0;
    /* nobody to share with: no spills (every deque is empty after a mark) */
    atomic_store_explicit(&gc->mark_idle, 0, memory_order_relaxed);
    gcs_worker *w = &gc->workers[0];
    w->lo = w->hi = 0;
}

void _gcs_mark_rescan_push(gcs_collector *gc, uintptr_t begin, uintptr_t end)
{
    gcs_worker *w = &gc->workers[0];
    if (w->hi == w->cap) {
        drain_of(gc)(w); /* empties stack and deque, so the push below cannot fail */
        gcs_assert_internal(w->hi == w->lo && gcs_deque_size_hint(&w->deque) == 0);
        w->lo = w->hi = 0;
    }
    gcs_assert_internal(w->hi < w->cap);
    stack_push(w, begin, end);
}

void _gcs_mark_rescan_end(gcs_collector *gc)
{
    gcs_worker *w = &gc->workers[0];
    drain_of(gc)(w);
    w->lo = w->hi = 0;
    _gcs_deque_release_retired(&w->deque);
}

/* A worker's first mark stack (pool.c, at start): the rescan's pushes rely
 * on it holding at least 4096 entries (see "mark-stack overflow"). */
int _gcs_mark_stack_init(gcs_worker *w)
{
    gcs_assert_internal(w->cap == 0 && !w->stack);
    return stack_grow(w);
}

/* ---- T-infinity --------------------------------------------------------------
 * Longest-first-arrival over the marked graph (model-notes 1.1): d(root) =
 * w(root), d(v) = min over u->v of d(u) + w(v), T-infinity = max d(v), with
 * w = gcs_gc_mark_weight (gc.h), the weight heap inspection uses.  This is
 * Dijkstra with node weights, run serially after the mark, with a binary heap
 * and a distance table indexed by granule (reserved lazily: only the entries
 * of live objects are touched). */

/* Records distance d for obj if it improves on the known one, queueing obj.
 * Returns -1 when the queue cannot grow. */
static int span_relax(gcs_collector *gc, double *dist, gcs_minheap *queue, uintptr_t obj, double d)
{
    size_t g = gcs_granule_of(gc, obj - 8);
    if (dist[g] != 0 && dist[g] <= d)
        return 0;
    dist[g] = d;
    return gcs_minheap_push(queue, d, obj);
}

static inline double span_weight(uintptr_t obj, double cost_object, double cost_pointer)
{
    uint64_t hdr = ((const uint64_t *)obj)[-1];
    return gcs_gc_mark_weight(cost_object, cost_pointer, GCS_HDR_NPTRS(hdr), GCS_HDR_NPTRS(hdr));
}

double _gcs_span_compute(gcs_collector *gc, void **root_objs, size_t nroot_objs,
                        double cost_object, double cost_pointer)
{
    size_t ngranules = gc->npages * GCS_GRANULES_PER_PAGE;
    size_t dist_bytes = ngranules * sizeof(double);
    /* 0.0 means "not reached yet": distances are >= cost_object > 0 */
    double *dist = mmap(NULL, dist_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (dist == MAP_FAILED)
        return NAN;
    gcs_minheap queue = {0};
    double span = NAN;
    for (size_t i = 0; i < nroot_objs; i++) {
        uintptr_t o = (uintptr_t)root_objs[i];
        if (span_relax(gc, dist, &queue, o, span_weight(o, cost_object, cost_pointer)) < 0)
            goto done;
    }
    double longest = 0;
    while (queue.n > 0) {
        gcs_minheap_entry it = gcs_minheap_pop(&queue);
        uintptr_t obj = (uintptr_t)it.item;
        if (it.key > dist[gcs_granule_of(gc, obj - 8)])
            continue; /* a stale entry */
        if (it.key > longest)
            longest = it.key;
        uint64_t hdr = ((const uint64_t *)obj)[-1];
        const uintptr_t *f = (const uintptr_t *)obj;
        for (uint32_t i = 0; i < GCS_HDR_NPTRS(hdr); i++) {
            uintptr_t c = f[i];
            if (c && span_relax(gc, dist, &queue, c, it.key + span_weight(c, cost_object, cost_pointer)) < 0)
                goto done;
        }
    }
    span = longest;
done:
    gcs_minheap_free(&queue);
    munmap(dist, dist_bytes);
    return span;
}
