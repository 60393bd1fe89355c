/* span_sweeps.c -- the label-correcting sweeps (_gcs_span_sweeps): the
 * start times s and hop counts of a heap that is no forest, settled in id
 * order, in place of the BFS and Dijkstra, whose results they give to the
 * bit.  span.c runs them first on such a heap, and those passes where they
 * give up.  A file of its own because it is one loop of its own, over a
 * bitmap of dirty objects, with its own limits and its own prefetch. */
#include <math.h>
#include <string.h>

#define GCS_SPAN_FILES
#include "span_internal.h"

/* ---- label-correcting sweeps -------------------------------------------------
 * The BFS and Dijkstra visit a heap in the order of its levels and buckets,
 * each of which is a thin slice through the whole id range: every object
 * scanned costs a host miss on each snapshot array it reads (the workloads'
 * heaps took 60-120 ns per object, several times their mark).  A heap
 * snapshot's ids are in address order, and a program's objects mostly point
 * near themselves, so most labels can be settled in one pass front to back
 * instead: Bellman-Ford's label correcting, swept in id order.  An object is
 * dirty when its start time s or its hop count h (its BFS level less one)
 * was lowered; a sweep scans the dirty objects in id order, lowering its
 * children's s and h (a child ahead is scanned in the same sweep, one behind
 * in the next), until no object is dirty.  The fixed point is the one
 * Dijkstra finds (s(v) = min over parents of d(u), d = s + w, rounded; the
 * sum is monotone, so both take the minimum over the same paths' sums) and h
 * is the BFS's level, so the results are those of passes 1 and 2 to the bit.
 * On the corpus heaps an object is scanned 1.0-1.15 times in 4-21 sweeps.
 *
 * A child's s and h are one 12-byte label: one line, not two, for 14 labels
 * in 16 (the other two straddle a line), and a quarter less fresh memory
 * than 16 bytes with padding, which the random heap's peak needs
 * (docs/model.md, "Cost", 2026-11-28).  Where the
 * children lie far from their parents and the labels outgrow the caches (a
 * random graph), each child's label is a host miss: the objects to scan are
 * then taken from the bitmap SPAN_SWEEP_RING ahead and their children's
 * labels prefetched as they are taken.  The order may change while they
 * wait (an object taken may be lowered again: it is dirty again and scanned
 * again), which label correcting allows.  Where the children are near, the
 * second read of the fields costs more than it saves (bh and cube, 270 000
 * and 290 000 objects: 1.5x slower with it; docs/model.md, "Cost"), so it is on
 * only past SPAN_SWEEP_FAR_BYTES of labels and when most of the first
 * SPAN_SWEEP_PROBE objects' children are SPAN_SWEEP_FAR ids or more away.
 *
 * What the sweeps cannot bound is their number: a chain laid out back to
 * front takes one sweep per 64 objects, and a random graph may scan objects
 * several times.  So they give up once they have scanned SPAN_SWEEP_WORK
 * objects per object of the heap or SPAN_SWEEP_WORDS bitmaps' worth of
 * words, and passes 1 and 2 start again: at most about that much work is
 * lost on such a heap.
 *
 * Tinf is the largest final d.  The sweeps keep the largest d of any scan,
 * which is at least Tinf (an object's last scan has its final s), and equal
 * to it when the object that gave it still has that d at the end; if not, a
 * pass over the reachable objects finds the maximum (likewise the depth). */
#define SPAN_SWEEP_WORK 2
#define SPAN_SWEEP_WORDS 32
#define SPAN_SWEEP_RING 8                        /* a power of two */
#define SPAN_SWEEP_PROBE 4096
#define SPAN_SWEEP_FAR 8192                      /* ids: 128 KiB of labels */
#define SPAN_SWEEP_FAR_BYTES ((size_t)8 << 20)

size_t _gcs_span_prefetch_bytes = SPAN_SWEEP_FAR_BYTES;

/* 0 with b and *tinf set, 1 when the sweeps gave up (live, dirty and lab
 * then in an unspecified state).  live and dirty: all 0 on entry (live: the
 * reachable objects on return, dirty all 0); lab: n labels, uninitialised. */
int _gcs_span_sweeps(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *dirty,
                     size_t nwords, span_label *lab, span_bfs *b, double *tinf)
{
    const uint32_t *edges = g->edges, *nptrs = g->nptrs;
    const uint64_t *edge_start = g->edge_start;
    uint64_t n = g->nobjects, reached = 0, scans = 0, words = 0, far = 0, near = 0;
    uint64_t scan_limit = SPAN_SWEEP_WORK * n + 4096, word_limit = SPAN_SWEEP_WORDS * (uint64_t)nwords + 4096;
    int prefetch = 0, may_prefetch = n * sizeof *lab > _gcs_span_prefetch_bytes;
    level_acc a;
    memset(&a, 0, sizeof a);
    acc_reset(&a);
    memset(b, 0, sizeof *b);
    size_t lo = nwords; /* the first word of the next sweep */
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (!bit_get(live, v)) {
            bit_set(live, v);
            bit_set(dirty, v);
            lab[v] = (span_label){0, 0};
            reached++;
            lo = (size_t)(v >> 6) < lo ? (size_t)(v >> 6) : lo;
        }
    }
    double top = 0;
    uint32_t hmax = 0, top_at = 0, hmax_at = 0;
    uint32_t ring[SPAN_SWEEP_RING];
    while (lo < nwords) {
        words += nwords - lo;
        if (words > word_limit)
            return 1;
        size_t w = lo; /* the bitmap's cursor: objects behind it wait for the next sweep */
        unsigned head = 0, tail = 0;
        lo = nwords;
        for (;;) {
            /* the ring: one object, or SPAN_SWEEP_RING with their children's labels on the way */
            unsigned want = prefetch ? SPAN_SWEEP_RING : 1;
            while (tail - head < want && w < nwords) {
                uint64_t bits = dirty[w];
                if (!bits) {
                    w++;
                    continue;
                }
                dirty[w] = bits & (bits - 1);
                uint32_t x = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
                ring[tail++ % SPAN_SWEEP_RING] = x;
                if (prefetch) {
                    const uint32_t *ex = edges + edge_start[x];
                    for (uint32_t f = 0, nx = nptrs[x]; f < nx; f++)
                        if (ex[f] != GCS_SNAPSHOT_NULL) {
                            /* both ends: one label in eight straddles two lines */
                            const char *l = (const char *)(lab + ex[f]);
                            __builtin_prefetch(l, 1);
                            __builtin_prefetch(l + sizeof *lab - 1, 1);
                        }
                }
            }
            if (head == tail)
                break;
            uint32_t u = ring[head++ % SPAN_SWEEP_RING];
            const uint32_t *e = edges + edge_start[u];
            uint32_t np = nptrs[u];
            uint32_t k = nonnull_fields(e, np);
            acc_weight(&a, cobj, cptr, k, np);
            double du = lab[u].s + gcs_gc_mark_weight(cobj, cptr, k, np);
            uint32_t hu = lab[u].h + 1;
            if (du > top) {
                top = du;
                top_at = u;
            }
            if (hu > hmax) {
                hmax = hu;
                hmax_at = u;
            }
            for (uint32_t f = 0; f < np; f++) {
                uint32_t v = e[f];
                if (v == GCS_SNAPSHOT_NULL)
                    continue;
                uint64_t bit = 1ull << (v & 63);
                size_t vw = v >> 6;
                if (!(live[vw] & bit)) {
                    live[vw] |= bit;
                    reached++;
                    lab[v].s = du;
                    lab[v].h = hu;
                } else {
                    a.revisits++; /* reached before: no forest */
                    int lower = 0;
                    if (du < lab[v].s) {
                        lab[v].s = du;
                        lower = 1;
                    }
                    if (hu < lab[v].h) {
                        lab[v].h = hu;
                        lower = 1;
                    }
                    if (!lower)
                        continue;
                }
                dirty[vw] |= bit;
                if (vw < w && vw < lo)
                    lo = vw; /* behind the cursor: the next sweep */
            }
            if (++scans <= SPAN_SWEEP_PROBE && may_prefetch) {
                for (uint32_t f = 0; f < np; f++)
                    if (e[f] != GCS_SNAPSHOT_NULL) {
                        uint32_t dist = e[f] > u ? e[f] - u : u - e[f];
                        far += dist >= SPAN_SWEEP_FAR;
                        near += dist < SPAN_SWEEP_FAR;
                    }
                if (scans == SPAN_SWEEP_PROBE)
                    prefetch = far > near;
            }
            if (scans > scan_limit)
                return 1;
        }
    }
    gcs_assert_internal(scans >= reached); /* every reachable object is scanned at least once */
    /* is the largest d (h) of a scan still its object's? */
    double d_top = reached ? span_finish(g, top_at, cobj, cptr, lab[top_at].s) : 0;
    if (scans > reached && (d_top != top || lab[hmax_at].h + 1 != hmax)) {
        top = 0;
        hmax = 0;
        for (size_t w = 0; w < nwords; w++)
            for (uint64_t bits = live[w]; bits; bits &= bits - 1) {
                uint32_t u = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
                double d = span_finish(g, u, cobj, cptr, lab[u].s);
                top = d > top ? d : top;
                hmax = lab[u].h + 1 > hmax ? lab[u].h + 1 : hmax;
            }
    }
    b->reachable = reached;
    b->depth = hmax;
    b->emin = UINT32_MAX;
    b->wmin = INFINITY;
    acc_merge(b, &a); /* the counts and ranges of the objects scanned */
    b->forest_tinf = top;
    *tinf = top;
    return 0;
}
