/* inspect.c -- heap inspection: snapshot + profile -> gcs_model_heap
 * (include/gcscale/inspect.h; definitions in docs/model.md, "Heap
 * inspection, Q1 and L").
 *
 * Three independent parts, each timed:
 *   counts   objects, edges, bytes, live lines and (fast) V_j: one pass over
 *            the object arrays, or a stratified sample of them;
 *   span     Tinf: a BFS from the roots; exact by itself when every object
 *            weighs the same (levels x w) or when the reachable graph is a
 *            forest (one discovery per object), else Dijkstra with Dial's
 *            buckets (a binary heap where the buckets do not fit);
 *   misses   slow: the collector's serial mark (gc/mark.c, P = 1) replayed
 *            on object ids, its memory accesses fed to the cache simulator;
 *            fast: Q1 = live lines and an estimate of L.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gcscale/gc.h"
#include "gcscale/inspect.h"

/* The mark table lives in its own mapping in gc/; the replay puts it at the
 * power of two at or above the heap's limit, and not below 2 MiB (see
 * layout.mark_base). */
#define MARK_TABLE_MIN_BASE (1ull << 21)
/* gc/mark.c: the prefetch FIFO and the pointer-array chunk. */
#define MARK_FIFO GCS_GC_MARK_FIFO
#define CHUNK_FIELDS 128
/* gcs_gc_mark_mode values (gc.h) as recorded in snapshots. */
#define MARK_MODE_ATOMIC_BITS 2
/* Fast L: lines assumed private when the profile has no cache geometry. */
#define DEFAULT_PRIVATE_LINES 16384
/* Fast L: lines live in the depth-first window of a mark that never revisits
 * (the FIFO's headers, the current mark-table line and field line); fitted
 * to the slow predictor on trees and lists (docs/model.md). */
#define DFS_WINDOW_LINES 8.0
/* Fast L: share of the private lines live per unit of revisit share (fitted,
 * docs/model.md). */
#define REVISIT_LIVE_FACTOR 0.4

void gcs_inspect_opts_init(gcs_inspect_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->predictor = GCS_INSPECT_FAST;
    opts->cpu = -1;
    opts->tinf_ns = -1;
    opts->stream_prefetch = 1;
}

const char *gcs_inspect_predictor_name(gcs_inspect_predictor p)
{
    return p == GCS_INSPECT_SLOW ? "slow" : "fast";
}

gcs_inspect_predictor gcs_inspect_default_predictor(const gcs_profile *prof)
{
    gcs_cachesim_geom geom;
    gcs_err err;
    return prof->ncaches > 0 && gcs_cachesim_geom_from_profile(prof, -1, &geom, &err) == 0 &&
                   geom.nlevels > 0
               ? GCS_INSPECT_SLOW
               : GCS_INSPECT_FAST;
}

/* ---- layout ------------------------------------------------------------------ */

typedef struct layout {
    uint64_t hdr;         /* header bytes in front of a payload */
    int gshift;           /* log2 granule */
    int bits;             /* mark bits (one 64-bit word per 64 granules) instead of bytes */
    int lshift;           /* log2 line */
    /* Where the replay puts the mark table: above every heap offset, and
     * as low as that allows, because the simulator tells lines apart only
     * below gcs_cachesim_addr_limit (a fixed base at 4 TiB made mark-table
     * lines share tags with heap lines on levels of 16 sets or fewer). */
    uint64_t mark_base;
} layout;

static inline uint64_t mark_addr(const layout *ly, uint64_t payload)
{
    uint64_t g = (payload - ly->hdr) >> ly->gshift;
    return ly->mark_base + (ly->bits ? (g >> 6) << 3 : g);
}

/* Boehm-style pointer-free pages (gc/): a small object without pointer
 * fields lives on a page the mark knows to hold no pointers.  The mark sets
 * such an object's mark without reading its header when it meets it as an
 * element of a large array's chunk (gc/mark.c examines those in place);
 * popped from the stack, any object's header is read, as the collector
 * prefetches headers before it looks at the page.  A large object's header
 * is always read.  The fast predictor, which does not know how objects are
 * reached, counts no header line for them (docs/model.md). */
static inline int pointer_free(const gcs_snapshot *g, const layout *ly, uint64_t i)
{
    return g->nptrs[i] == 0 && ly->hdr + 8 * (uint64_t)g->words[i] <= GCS_GC_SMALL_MAX;
}

static int ilog2(uint64_t v)
{
    return v && !(v & (v - 1)) ? __builtin_ctzll(v) : -1;
}

/* What the walk needs of an object, packed into half a host line so that
 * examining and scanning it costs one host miss, not one per snapshot array
 * (address, field count, field offset, fields, node: five on a heap marked
 * in random order).  Built in the exact counts' pass, which reads the same
 * fields in id order anyway. */
#define REC_EDGES 4

typedef struct robj {
    uint64_t addr;          /* payload offset */
    uint32_t nptrs;
    uint16_t node;          /* node slot (node_slot()) */
    uint8_t pf;             /* pointer-free (pointer_free()): only its mark is touched */
    uint8_t pad;
    uint32_t edge[REC_EDGES]; /* the first fields; the rest from the snapshot */
} robj;

/* ---- counts -------------------------------------------------------------------- */

typedef struct counts {
    double edges, bytes, read_lines, rw_lines;
    double *node_lines;   /* [nnodes + 1]: lines by node, last = unknown */
} counts;

static inline uint32_t node_slot(const gcs_snapshot *g, uint64_t i, int nnodes)
{
    uint16_t n = g->node[i];
    return n < (unsigned)nnodes ? n : (uint32_t)nnodes;
}

/* Object i's contribution, given the previous object's last object line and
 * mark line (UINT64_MAX: none). */
static inline void count_object(const gcs_snapshot *g, const layout *ly, uint64_t i, uint64_t *last_line,
                                uint64_t *last_mline, double *edges, double *rd, double *rw, double *bytes)
{
    uint64_t a = g->addr[i];
    uint32_t np = g->nptrs[i];
    uint64_t fl = (a - ly->hdr) >> ly->lshift;
    uint64_t ll = (a + 8 * (uint64_t)np - 1) >> ly->lshift;
    if (*last_line != UINT64_MAX && fl <= *last_line)
        fl = *last_line + 1;
    if (ll >= fl && !pointer_free(g, ly, i)) {
        *rd += (double)(ll - fl + 1);
        *last_line = ll;
    }
    uint64_t ml = mark_addr(ly, a) >> ly->lshift;
    if (ml != *last_mline) {
        *rw += 1;
        *last_mline = ml;
    }
    const uint32_t *e = g->edges + g->edge_start[i];
    uint32_t k = 0;
    for (uint32_t f = 0; f < np; f++)
        k += e[f] != GCS_SNAPSHOT_NULL;
    *edges += k;
    *bytes += (double)(ly->hdr + 8 * (uint64_t)g->words[i]);
}

/* rec: the slow predictor's records to fill, or NULL. */
static void counts_exact(const gcs_snapshot *g, const layout *ly, int nnodes, counts *c, robj *rec)
{
    uint64_t last_line = UINT64_MAX, last_mline = UINT64_MAX;
    double edges = 0, rd = 0, rw = 0, bytes = 0;
    for (uint64_t i = 0; i < g->nobjects; i++) {
        double r0 = rd, w0 = rw;
        count_object(g, ly, i, &last_line, &last_mline, &edges, &rd, &rw, &bytes);
        uint32_t slot = node_slot(g, i, nnodes);
        c->node_lines[slot] += (rd - r0) + (rw - w0);
        if (rec) {
            robj *o = &rec[i];
            uint32_t np = g->nptrs[i];
            const uint32_t *e = g->edges + g->edge_start[i];
            o->addr = g->addr[i];
            o->nptrs = np;
            o->node = (uint16_t)slot;
            o->pf = (uint8_t)pointer_free(g, ly, i);
            o->pad = 0;
            for (uint32_t f = 0; f < REC_EDGES; f++)
                o->edge[f] = f < np ? e[f] : GCS_SNAPSHOT_NULL;
        }
    }
    c->edges = edges;
    c->bytes = bytes;
    c->read_lines = rd;
    c->rw_lines = rw;
}

/* ---- sampled counts --------------------------------------------------------------
 * Sampling objects would miss the rare huge ones (one array of a million
 * pointers holds half the heap's fields), so the estimates sample what they
 * measure, uniformly, with one jittered sample per stratum:
 *   edges       nfields x the non-NULL share of s sampled fields;
 *   read lines  the heap span's lines x the share of s sampled lines that
 *               some object's header or pointer fields overlap;
 *   mark lines  the span's mark-table lines x the share of s sampled ones
 *               that hold some object's mark (an object starts in the heap
 *               range the line describes);
 *   bytes       the span x the share of s sampled addresses inside an object;
 *   V_j         the sampled lines by the node of the object that makes them live.
 * Locating an address is an interpolation search in addr[] (find_obj). */

typedef struct sampler {
    uint64_t s;  /* xorshift state */
} sampler;

static inline double jitter(sampler *sp)
{
    sp->s ^= sp->s << 13;
    sp->s ^= sp->s >> 7;
    sp->s ^= sp->s << 17;
    return (double)(sp->s >> 11) * 0x1.0p-53;
}

/* Index of the last object whose header starts at or before x (-1: none),
 * searching from hint. */
static int64_t locate(const gcs_snapshot *g, uint64_t hdr, uint64_t x, int64_t hint)
{
    int64_t n = (int64_t)g->nobjects;
    if (n == 0 || g->addr[0] - hdr > x)
        return -1;
    int64_t lo = hint < 0 ? 0 : (hint >= n ? n - 1 : hint);
    if (g->addr[lo] - hdr > x)
        lo = 0;
    /* start(lo) <= x; gallop to an hi with start(hi) > x (hi = n: past the end) */
    int64_t step = 1, hi = lo + 1;
    while (hi < n && g->addr[hi] - hdr <= x) {
        lo = hi;
        step *= 2;
        hi = lo + step;
    }
    if (hi > n)
        hi = n;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (g->addr[mid] - hdr <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Interpolation search for the last object starting at or before x (-1:
 * none), falling back to a bisection step whenever an interpolation step
 * fails to halve the bracket: a few probes on evenly laid out heaps, never
 * more than about 2 log2(n). */
static int64_t find_obj(const gcs_snapshot *g, uint64_t hdr, uint64_t x)
{
    int64_t n = (int64_t)g->nobjects;
    if (n == 0 || g->addr[0] - hdr > x)
        return -1;
    int64_t lo = 0, hi = n - 1;
    if (g->addr[hi] - hdr <= x)
        return hi;
    int bisect = 0;
    while (hi - lo > 1) {
        uint64_t alo = g->addr[lo] - hdr, ahi = g->addr[hi] - hdr;
        int64_t mid;
        if (bisect || ahi <= alo) {
            mid = lo + (hi - lo) / 2;
        } else {
            double f = (double)(x - alo) / (double)(ahi - alo);
            mid = lo + (int64_t)(f * (double)(hi - lo));
            if (mid <= lo)
                mid = lo + 1;
            if (mid >= hi)
                mid = hi - 1;
        }
        int64_t before = hi - lo;
        if (g->addr[mid] - hdr <= x)
            lo = mid;
        else
            hi = mid;
        bisect = !bisect && 2 * (hi - lo) > before;
    }
    return lo;
}

static void counts_sampled(const gcs_snapshot *g, const layout *ly, int nnodes, uint32_t s, counts *c)
{
    uint64_t n = g->nobjects, hdr = ly->hdr;
    sampler sp = {0x9E3779B97F4A7C15ull ^ n};
    /* edges */
    double nonnull = 0;
    for (uint32_t j = 0; j < s && g->nfields > 0; j++) {
        uint64_t f = (uint64_t)(((double)j + jitter(&sp)) * (double)g->nfields / s);
        if (f >= g->nfields)
            f = g->nfields - 1;
        nonnull += g->edges[f] != GCS_SNAPSHOT_NULL;
    }
    c->edges = g->nfields ? nonnull * (double)g->nfields / s : 0;
    if (n == 0)
        return;
    uint64_t lo = g->addr[0] - hdr;
    uint64_t hi = g->addr[n - 1] + 8 * (uint64_t)g->words[n - 1]; /* exclusive */
    /* heap lines and bytes */
    uint64_t l0 = lo >> ly->lshift, l1 = (hi - 1) >> ly->lshift, nl = l1 - l0 + 1;
    uint64_t lbytes = 1ull << ly->lshift;
    double rd = 0, inside = 0;
    int64_t at = 0;
    for (uint32_t j = 0; j < s; j++) {
        uint64_t line = l0 + (uint64_t)(((double)j + jitter(&sp)) * (double)nl / s);
        if (line > l1)
            line = l1;
        uint64_t ls = line << ly->lshift, le = ls + lbytes;
        int64_t i = find_obj(g, hdr, ls);
        at = i < 0 ? 0 : i;
        int64_t who = -1;
        if (i >= 0 && g->addr[i] + 8 * (uint64_t)g->nptrs[i] > ls && !pointer_free(g, ly, (uint64_t)i))
            who = i; /* object i's header or fields reach into the line */
        /* else an object whose header is read starts in the line (a few
         * objects at most: each takes at least 16 bytes) */
        for (int64_t k = i + 1; who < 0 && k < (int64_t)n && g->addr[k] - hdr < le; k++)
            if (!pointer_free(g, ly, (uint64_t)k))
                who = k;
        if (who >= 0 && (hdr > 0 || g->nptrs[who] > 0)) {
            rd += 1;
            c->node_lines[node_slot(g, (uint64_t)who, nnodes)] += (double)nl / s;
        }
        /* one address inside the line: live bytes */
        uint64_t x = ls + (uint64_t)(jitter(&sp) * (double)lbytes);
        int64_t k = locate(g, hdr, x, at);
        if (k >= 0 && x < g->addr[k] + 8 * (uint64_t)g->words[k])
            inside += 1;
    }
    c->read_lines = rd * (double)nl / s;
    c->bytes = inside * (double)(nl * lbytes) / s;
    /* mark-table lines: line m holds the marks of the heap range [m R, (m+1) R) */
    int rshift = ly->lshift + ly->gshift + (ly->bits ? 3 : 0);
    uint64_t m0 = lo >> rshift, m1 = (hi - 1) >> rshift, nm = m1 - m0 + 1;
    double rw = 0;
    for (uint32_t j = 0; j < s; j++) {
        uint64_t m = m0 + (uint64_t)(((double)j + jitter(&sp)) * (double)nm / s);
        if (m > m1)
            m = m1;
        uint64_t rs = m << rshift, re = rs + (1ull << rshift);
        int64_t i = find_obj(g, hdr, rs);
        int64_t who = -1;
        if (i >= 0 && g->addr[i] - hdr >= rs)
            who = i;
        else if (i + 1 < (int64_t)n && g->addr[i + 1] - hdr < re)
            who = i + 1;
        if (who >= 0) {
            rw += 1;
            c->node_lines[node_slot(g, (uint64_t)who, nnodes)] += (double)nm / s;
        }
    }
    c->rw_lines = rw * (double)nm / s;
}

/* V_j from per-node weights; the unknown node's weight is spread evenly. */
static void set_v(gcs_model_heap *h, const double *w, int nnodes)
{
    double total = 0;
    for (int k = 0; k <= nnodes; k++)
        total += w[k];
    h->nnodes = nnodes;
    for (int k = 0; k < nnodes; k++)
        h->v[k] = total > 0 ? (w[k] + w[nnodes] / nnodes) / total : 1.0 / nnodes;
}

/* ---- span ------------------------------------------------------------------------ */

/* Large arrays (the span's distances, the replay's records and mark bytes)
 * are read at random: 2 MiB aligned and, where the kernel offers it, on
 * transparent huge pages, so that those reads miss the TLB less and a fresh
 * array costs one page fault per 2 MiB instead of one per 4 KiB. */
static void *big_alloc(size_t bytes)
{
    size_t align = 2u << 20;
    if (bytes < align) /* a small heap: not worth a huge page */
        return malloc(bytes ? bytes : 1);
    size_t size = (bytes + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, size);
#ifdef MADV_HUGEPAGE
    if (p)
        madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

/* What scanning an object with k non-NULL pointer fields (np in all) adds to
 * the critical path.  An ordinary object is scanned by one worker, so its
 * children arrive after w = c_obj + c_ptr * k.  A pointer array of more than
 * CHUNK_FIELDS fields is not: gc/mark.c takes it a chunk at a time and, when
 * a worker is idle, publishes half of the rest, so with unlimited workers the
 * array unfolds as a balanced binary tree of chunks.  Its last child then
 * arrives after ceil(log2(chunks)) splits, each an entry pushed and popped
 * (priced as one object), plus one chunk of fields.  T1 is unchanged: the
 * work is the same, only its order differs. */
static double span_weight(double cobj, double cptr, uint32_t k, uint32_t np)
{
    if (np <= CHUNK_FIELDS)
        return cobj + cptr * k;
    double chunks = ceil((double)np / CHUNK_FIELDS);
    double per_chunk = k < CHUNK_FIELDS ? k : CHUNK_FIELDS;
    return cobj * (1 + ceil(log2(chunks))) + cptr * per_chunk;
}

/* Tinf is the longest of the shortest paths: with w(v) = span_weight() of
 * object v, d(root) = w(root), d(v) = min over parents u of d(u) + w(v), each
 * sum rounded as it is formed, and Tinf = max d(v).  The walk works with the
 * start times s(v) = min over parents of d(u) (0 for a root) and finds
 * d(v) = s(v) + w(v) when it scans v.  That is the same number: adding w(v)
 * is monotone under rounding, so (min d(u)) + w(v) = min (d(u) + w(v)).  It
 * needs w only of the object being scanned, whose fields are read anyway, so
 * relaxing an edge touches one random word (the child's s), not three.
 *
 * Two passes, both over id-ordered sets where the sets are large:
 *
 *   1. A BFS, level by level: the reachable objects (a bitmap), the depth,
 *      whether every object weighs the same (then Tinf = depth x w, as
 *      before) and whether any object is reached twice; if none is, the
 *      graph is a forest and s along the BFS (kept until the first revisit)
 *      gives Tinf.
 *   2. Otherwise Dial's bucket queue on s.  Every weight is at least wmin > 0,
 *      so with buckets narrower than wmin no object scanned from bucket b can
 *      put a child into bucket b or below: every object in a bucket has its
 *      final s when the bucket's turn comes, and is scanned exactly once.
 *      The buckets are the exact intervals [B_i, B_i+1) of the rounded
 *      B_i = i x q, q = wmin (1 - 2^-20), and the slack covers the rounding:
 *      with u = 2^-53, an object of bucket b has s >= B_b >= b q (1 - u), so
 *      d = s + w rounded >= (b q (1 - u) + wmin)(1 - u), while B_b+1 <=
 *      (b + 1) q (1 + u); the difference is at least wmin (2^-20 - 3u (b +
 *      1) - 3u), positive for b < 2^31 (SPAN_MAX_BUCKET).  Past that bucket,
 *      with weights of 0 and with weight ratios wmax / wmin beyond the
 *      window of SPAN_MAX_SLOTS buckets, a binary heap does the pass
 *      instead; so it does, from the start, if a check that the argument
 *      rules out ever fails.
 *
 * A large level or bucket (SPAN_DENSE_DIV: at least n / 512 objects) is put
 * in id order through a bitmap before it is scanned: the snapshot's arrays
 * are in id (address) order, so its objects' field counts, offsets and fields
 * are then read as a stream instead of at random.  What stays random is each
 * child's s: pass 2 prefetches the s of the children of the object
 * SPAN_AHEAD places on in its bucket (10M-object random heap: bucket pass
 * 730-930 -> about 300 ms; 16 measured the same, within the noise). */
#define SPAN_DENSE_DIV 512
#define SPAN_MAX_SLOTS 4096              /* bucket window, a power of two */
#define SPAN_MAX_BUCKET (1ull << 31)     /* bucket index bound of the rounding argument */
#define SPAN_SLACK 0x1.0p-20             /* q = wmin (1 - SPAN_SLACK) */
#define SPAN_AHEAD 8

typedef struct idlist {
    uint32_t *v;
    size_t n, cap;
} idlist;

static int idlist_grow(idlist *l)
{
    size_t cap = l->cap ? 2 * l->cap : 1024;
    uint32_t *grown = realloc(l->v, cap * sizeof *grown);
    if (!grown)
        return -1;
    l->v = grown;
    l->cap = cap;
    return 0;
}

static inline int idlist_push(idlist *l, uint32_t v)
{
    if (l->n == l->cap && idlist_grow(l) < 0)
        return -1;
    l->v[l->n++] = v;
    return 0;
}

static inline int bit_get(const uint64_t *b, uint32_t v)
{
    return (int)(b[v >> 6] >> (v & 63)) & 1;
}

static inline void bit_set(uint64_t *b, uint32_t v)
{
    b[v >> 6] |= 1ull << (v & 63);
}

static inline void bit_clear(uint64_t *b, uint32_t v)
{
    b[v >> 6] &= ~(1ull << (v & 63));
}

/* Sorts a large list by id and drops its duplicates, through scratch (a
 * bitmap of nwords words, all 0, left all 0).  A small one is left as is. */
static void idlist_order(idlist *l, uint64_t *scratch, size_t nwords, size_t dense_min)
{
    if (l->n < dense_min)
        return;
    for (size_t i = 0; i < l->n; i++)
        bit_set(scratch, l->v[i]);
    size_t out = 0;
    for (size_t w = 0; w < nwords; w++) {
        uint64_t bits = scratch[w];
        if (!bits)
            continue;
        scratch[w] = 0;
        while (bits) {
            l->v[out++] = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
            bits &= bits - 1;
        }
    }
    l->n = out;
}

/* d(u) = s(u) + w(u); w needs u's count of non-NULL fields. */
static inline double span_finish(const gcs_snapshot *g, uint32_t u, double cobj, double cptr, double su)
{
    const uint32_t *e = g->edges + g->edge_start[u];
    uint32_t np = g->nptrs[u], k = 0;
    for (uint32_t f = 0; f < np; f++)
        k += e[f] != GCS_SNAPSHOT_NULL;
    return su + span_weight(cobj, cptr, k, np);
}

typedef struct span_bfs {
    uint64_t reachable, depth, revisits, chunked_arrays;
    uint32_t emin, emax;
    double wmin, wmax;
    double forest_tinf;   /* Tinf if revisits == 0 */
} span_bfs;

/* Pass 1.  live: all 0 on entry; the reachable objects on return.  As long
 * as no object has been reached twice the graph may be a forest, whose only
 * paths are those of the BFS: s (as in pass 2) is then kept along them, and
 * if it stays a forest Tinf is known without pass 2 (a list, a tree).  A
 * graph that is not stops paying for it at its first revisit. */
static int span_levels(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *scratch,
                       size_t nwords, size_t dense_min, double *s, span_bfs *b)
{
    idlist cur = {0}, next = {0};
    int rc = -1;
    memset(b, 0, sizeof *b);
    b->emin = UINT32_MAX;
    b->wmin = INFINITY;
    b->wmax = 0;
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (!bit_get(live, v)) {
            bit_set(live, v);
            s[v] = 0;
            if (idlist_push(&cur, v) < 0)
                goto done;
        }
    }
    while (cur.n > 0) {
        b->depth++;
        b->reachable += cur.n;
        idlist_order(&cur, scratch, nwords, dense_min);
        for (size_t i = 0; i < cur.n; i++) {
            uint32_t u = cur.v[i];
            const uint32_t *e = g->edges + g->edge_start[u];
            uint32_t np = g->nptrs[u], k = 0;
            double du = 0;
            if (b->revisits == 0) {
                du = span_finish(g, u, cobj, cptr, s[u]);
                b->forest_tinf = du > b->forest_tinf ? du : b->forest_tinf;
            }
            for (uint32_t f = 0; f < np; f++) {
                uint32_t v = e[f];
                if (v == GCS_SNAPSHOT_NULL)
                    continue;
                k++;
                if (bit_get(live, v)) {
                    b->revisits++;
                    continue;
                }
                bit_set(live, v);
                if (b->revisits == 0)
                    s[v] = du;
                if (idlist_push(&next, v) < 0)
                    goto done;
            }
            b->emin = k < b->emin ? k : b->emin;
            b->emax = k > b->emax ? k : b->emax;
            b->chunked_arrays += np > CHUNK_FIELDS;
            double w = span_weight(cobj, cptr, k, np);
            b->wmin = w < b->wmin ? w : b->wmin;
            b->wmax = w > b->wmax ? w : b->wmax;
        }
        idlist tmp = cur;
        cur = next;
        next = tmp;
        next.n = 0;
    }
    rc = 0;
done:
    free(cur.v);
    free(next.v);
    return rc;
}

/* Lowers child v's start time to du if that is lower.  s[v] means something
 * only once v is in reached: s is never filled with +inf, so its pages are
 * first touched by these writes, and the first lowering of each object does
 * not wait for s[v] to be read.  1 when lowered. */
static inline int span_lower(double *s, uint64_t *reached, uint32_t v, double du)
{
    if (bit_get(reached, v)) {
        if (!(du < s[v]))
            return 0;
    } else {
        bit_set(reached, v);
    }
    s[v] = du;
    return 1;
}

/* Pass 2 with a binary heap, the plain lazy Dijkstra: an entry whose key is
 * no longer its object's s is stale.  reached: all 0.  *longest = Tinf. */
static int span_heap(const gcs_snapshot *g, double cobj, double cptr, double *s, uint64_t *reached,
                     double *longest)
{
    gcs_minheap hp = {0};
    int rc = -1;
    double top = 0;
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (span_lower(s, reached, v, 0) && gcs_minheap_push(&hp, 0, v) < 0)
            goto done;
    }
    while (hp.n > 0) {
        gcs_minheap_entry it = gcs_minheap_pop(&hp);
        uint32_t u = (uint32_t)it.item;
        if (it.key > s[u])
            continue;
        double du = span_finish(g, u, cobj, cptr, s[u]);
        if (du > top)
            top = du;
        const uint32_t *e = g->edges + g->edge_start[u];
        for (uint32_t f = 0, np = g->nptrs[u]; f < np; f++) {
            uint32_t v = e[f];
            if (v == GCS_SNAPSHOT_NULL || !span_lower(s, reached, v, du))
                continue;
            if (gcs_minheap_push(&hp, du, v) < 0)
                goto done;
        }
    }
    *longest = top;
    rc = 0;
done:
    gcs_minheap_free(&hp);
    return rc;
}

/* Pass 2 with Dial's buckets (see above).  live: the reachable objects
 * (cleared as they are scanned); reached: all 0; q the bucket width; nslots
 * a power of two >= 64 and > wmax / q + 2.  Returns 0, -1 when out of
 * memory, 1 when the buckets cannot be used (live, reached and s are then in
 * an unspecified state). */
static int span_buckets(const gcs_snapshot *g, double cobj, double cptr, double q, size_t nslots, double *s,
                        uint64_t *live, uint64_t *reached, uint64_t *scratch, size_t nwords, size_t dense_min,
                        double *longest)
{
    int rc = -1;
    idlist *slot = calloc(nslots, sizeof *slot);
    size_t owords = (nslots + 63) / 64;
    uint64_t *occupied = calloc(owords, sizeof *occupied); /* slots with entries */
    if (!slot || !occupied)
        goto done;
    size_t mask = nslots - 1, pending = 0;
    double top = 0;
    for (uint64_t r = 0; r < g->nroots; r++) {
        uint32_t v = g->roots[r];
        if (span_lower(s, reached, v, 0)) {
            if (idlist_push(&slot[0], v) < 0)
                goto done;
            pending++;
        }
    }
    if (pending)
        occupied[0] |= 1;
    uint64_t b = 0; /* the bucket being scanned: [b q, (b + 1) q), both rounded */
    while (pending > 0) {
        /* the next bucket with entries: within the window by construction */
        size_t at = (size_t)(b & mask);
        while (!(occupied[at >> 6] >> (at & 63) & 1)) {
            uint64_t rest = occupied[at >> 6] >> (at & 63);
            size_t skip = rest ? (size_t)__builtin_ctzll(rest) : 64 - (at & 63);
            b += skip;
            at = (size_t)(b & mask);
        }
        occupied[at >> 6] &= ~(1ull << (at & 63));
        idlist *l = &slot[at];
        pending -= l->n;
        idlist_order(l, scratch, nwords, dense_min);
        double hi = (double)(b + 1) * q; /* every child lands at or above it */
        for (size_t i = 0; i < l->n; i++) {
            uint32_t u = l->v[i];
            if (i + SPAN_AHEAD < l->n) {
                /* the s lines of the children of the object SPAN_AHEAD on
                 * come in while this one is scanned */
                uint32_t a = l->v[i + SPAN_AHEAD];
                const uint32_t *ea = g->edges + g->edge_start[a];
                for (uint32_t f = 0, na = g->nptrs[a]; f < na; f++)
                    if (ea[f] != GCS_SNAPSHOT_NULL)
                        __builtin_prefetch(&s[ea[f]], 1);
            }
            if (!bit_get(live, u))
                continue; /* scanned from an earlier bucket, or a duplicate */
            bit_clear(live, u);
            double du = span_finish(g, u, cobj, cptr, s[u]);
            if (du > top)
                top = du;
            if (du < hi) {
                rc = 1; /* impossible by the rounding argument; do not trust the buckets */
                goto done;
            }
            /* du's bucket: an estimate, corrected against the rounded bounds */
            double est = du / q;
            if (!(est < (double)(SPAN_MAX_BUCKET - 2))) {
                rc = 1;
                goto done;
            }
            uint64_t j = (uint64_t)est;
            while (j > b + 1 && (double)j * q > du)
                j--;
            while ((double)(j + 1) * q <= du)
                j++;
            if (j - b >= nslots) {
                rc = 1;
                goto done;
            }
            size_t to = (size_t)(j & mask);
            const uint32_t *e = g->edges + g->edge_start[u];
            for (uint32_t f = 0, np = g->nptrs[u]; f < np; f++) {
                uint32_t v = e[f];
                if (v == GCS_SNAPSHOT_NULL || !bit_get(live, v) || !span_lower(s, reached, v, du))
                    continue;
                if (idlist_push(&slot[to], v) < 0)
                    goto done;
                pending++;
                occupied[to >> 6] |= 1ull << (to & 63);
            }
        }
        l->n = 0;
        b++;
    }
    *longest = top;
    rc = 0;
done:
    if (slot)
        for (size_t i = 0; i < nslots; i++)
            free(slot[i].v);
    free(slot);
    free(occupied);
    return rc;
}

static int span_compute(const gcs_snapshot *g, double cobj, double cptr, gcs_inspect_result *out,
                        gcs_err *err)
{
    uint64_t n = g->nobjects;
    size_t nwords = (size_t)((n + 63) / 64), wbytes = (nwords ? nwords : 1) * sizeof(uint64_t);
    size_t dense_min = (size_t)(n / SPAN_DENSE_DIV) + 64;
    int rc = -1;
    uint64_t *live = calloc(1, wbytes), *scratch = calloc(1, wbytes), *reached = NULL;
    /* big_alloc touches nothing: the pages a walk does not use cost nothing */
    double *s = big_alloc((n ? n : 1) * sizeof *s);
    if (!live || !scratch || !s)
        goto oom;
    span_bfs b;
    if (span_levels(g, cobj, cptr, live, scratch, nwords, dense_min, s, &b) < 0)
        goto oom;
    out->reachable = b.reachable;
    out->depth = b.depth;
    out->span_walked = 1;
    if (b.reachable == 0) {
        out->heap.tinf_ns = 0;
        out->span_method = "bfs-levels";
    } else if (b.emin == b.emax && b.chunked_arrays == 0) {
        /* every object weighs the same: the BFS depth is exact */
        out->heap.tinf_ns = (double)b.depth * (cobj + cptr * b.emin);
        out->span_method = "bfs-levels";
    } else if (b.revisits == 0) {
        /* a forest: one path to each object, followed by the BFS */
        out->heap.tinf_ns = b.forest_tinf;
        out->span_method = "tree";
    } else {
        out->span_method = "dijkstra";
        reached = calloc(1, wbytes);
        if (!reached)
            goto oom;
        double longest = 0, ratio = b.wmax / b.wmin;
        int brc = 1;
        if (b.wmin > 0 && isfinite(ratio) && ratio < SPAN_MAX_SLOTS - 3) {
            double q = b.wmin - b.wmin * SPAN_SLACK;
            size_t nslots = 64; /* whole words of the occupancy bitmap */
            while ((double)nslots < ratio + 3)
                nslots *= 2;
            brc = span_buckets(g, cobj, cptr, q, nslots, s, live, reached, scratch, nwords, dense_min,
                               &longest);
            if (brc < 0)
                goto oom;
            if (brc == 1) /* start again */
                memset(reached, 0, wbytes);
        }
        if (brc == 1 && span_heap(g, cobj, cptr, s, reached, &longest) < 0)
            goto oom;
        out->heap.tinf_ns = longest;
    }
    rc = 0;
    goto done;
oom:
    gcs_err_set(err, "inspect: out of memory for the span of %llu objects", (unsigned long long)n);
done:
    free(live);
    free(scratch);
    free(reached);
    free(s);
    return rc;
}

/* ---- slow: replay of the serial mark ----------------------------------------------- */

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
 * order (one with records, see records_pay()) can run as a two-stage
 * pipeline: the walk (this thread) writes its accesses into chunks of
 * PIPE_CHUNK, a second thread simulates them in the same order, so the
 * results are those of the one-thread replay and the wall time is that of
 * the slower stage.  The simulator and the per-node misses belong to the
 * second thread while it runs.
 *
 * Whether that pays depends on the machine, and even on the hour, so it is
 * tried, not assumed: after TRIAL_SKIP accesses the replay times
 * TRIAL_WINDOW accesses on one thread, then TRIAL_WINDOW with the pipeline,
 * and keeps the faster.  On a 2-core EPYC guest the walk, waiting on the
 * host's memory, was the slower stage and the pipeline won (random heap:
 * 580 -> 440 ms); on a 2-vCPU Xeon guest the same heap took 610 ms on one
 * thread and 950-1280 ms piped one hour, 1240 and 1020-1070 ms a few hours
 * later.  On a heap marked in address order the simulator is the slower
 * stage and passing it the accesses through another core's memory only
 * adds cost (tree: 370 -> 420 ms on the EPYC guest), so those are never
 * piped. */
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
    robj *rec;            /* [nobjects], or NULL (records_pay()) */
    gcs_cachesim *sim;
    layout ly;
    uint8_t *marked;
    rentry *stack;
    size_t hi, cap;
    int nlevels, nnodes;
    /* Benchmarks only: the walk's accesses are not simulated as it goes
     * (aside != 0): with stage == NULL they are dropped
     * (gcs_inspect_opts.walk_only), else appended to stage and simulated
     * after the walk (gcs_inspect_opts.stages). */
    int aside;
    raccess *stage;
    size_t nstage, stage_cap;
    double *node_miss;    /* [nnodes + 1] */
    uint64_t nmarked;
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
 * records_pay()). */
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

static inline void rsim(replay *r, const raccess *a)
{
    if (gcs_cachesim_access(r->sim, a->addr, (gcs_access)a->cls) == r->nlevels)
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
    r->stage[r->nstage++] = (raccess){addr, r_node(r, obj), (uint32_t)cls};
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
        r->cur[r->ncur++] = (raccess){addr, r_node(r, obj), (uint32_t)cls};
        if (__builtin_expect(r->ncur == PIPE_CHUNK, 0))
            pipe_publish(r);
        return;
    }
    if (!r->rec) {
        /* marked in address order: the simulator's rows are met in order
         * too, and the host's prefetchers find them without the ring */
        if (gcs_cachesim_access(r->sim, addr, cls) == r->nlevels)
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
    r->ring[slot] = (raccess){addr, r_node(r, obj), (uint32_t)cls};
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
 * stage, and the staged replay's (gcs_inspect_opts.stages). */
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
static int records_pay(const gcs_snapshot *g)
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
    uint32_t fifo[MARK_FIFO];
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
                if (end - e.begin > CHUNK_FIELDS) {
                    rpush(r, e.obj, e.begin + CHUNK_FIELDS, end);
                    end = e.begin + CHUNK_FIELDS;
                }
                /* a chunk entry is an array of more than 128 fields: they
                 * are in the snapshot's edges */
                const uint32_t *ed = g->edges + g->edge_start[e.obj];
                uint64_t a = r_addr(r, e.obj), prev = UINT64_MAX;
                uint32_t all_end = e.end;
                for (uint32_t f = e.begin; f < end; f++) {
                    /* the elements are known ahead, as in gc/mark.c */
                    if (f + MARK_FIFO < all_end && ed[f + MARK_FIFO] != GCS_SNAPSHOT_NULL)
                        rprefetch_obj(r, ed[f + MARK_FIFO]);
                    uint64_t fa = a + 8 * (uint64_t)f;
                    if ((fa >> r->ly.lshift) != prev) {
                        prev = fa >> r->ly.lshift;
                        racc(r, fa, GCS_ACCESS_READ, e.obj);
                    }
                    uint32_t c = ed[f];
                    if (c == GCS_SNAPSHOT_NULL || !rexamine(r, c, !r_pf(r, c)))
                        continue;
                    uint32_t np = r_nptrs(r, c), cend = np;
                    if (np == 0)
                        continue;
                    if (np > CHUNK_FIELDS) {
                        rpush(r, c, CHUNK_FIELDS, np);
                        cend = CHUNK_FIELDS;
                    }
                    rpush_fields(r, c, 0, cend);
                }
                continue;
            }
            if (!r->rec) /* its fields, read when it leaves the FIFO */
                __builtin_prefetch(g->edges + g->edge_start[e.obj]);
            if (fifo_count < MARK_FIFO) {
                fifo[(fifo_head + fifo_count++) % MARK_FIFO] = e.obj;
                continue;
            }
            obj = fifo[fifo_head];
            fifo[fifo_head] = e.obj;
            fifo_head = (fifo_head + 1) % MARK_FIFO;
        } else if (fifo_count > 0) {
            obj = fifo[fifo_head];
            fifo_head = (fifo_head + 1) % MARK_FIFO;
            fifo_count--;
        } else {
            rdrain(r);
            return;
        }
    examine: /* as in gc/mark.c, a popped object or a chain's next has its header read */
        if (!rexamine(r, obj, 1))
            continue;
        uint32_t np = r_nptrs(r, obj), end = np;
        if (np > CHUNK_FIELDS) {
            rpush(r, obj, CHUNK_FIELDS, np);
            end = CHUNK_FIELDS;
        }
        if (end == 1 && fifo_count == 0 && r->hi == 0) {
            /* a chain: follow the pointer directly */
            racc(r, r_addr(r, obj), GCS_ACCESS_READ, obj);
            uint32_t c = r_edges(r, obj)[0];
            if (c != GCS_SNAPSHOT_NULL) {
                obj = c;
                goto examine;
            }
            continue;
        }
        rpush_fields(r, obj, 0, end);
    }
}

/* ---- fast: L estimate ----------------------------------------------------------------- */

static double private_lines(const gcs_cachesim_geom *geom)
{
    double lines = 0;
    for (int k = 0; k < geom->private_levels; k++) {
        double l = (double)(geom->level[k].size_bytes / (uint64_t)geom->level[k].line_bytes);
        if (l > lines)
            lines = l;
    }
    return lines;
}

void gcs_inspect_fast_cache(const gcs_profile *prof, int *line_bytes, double *cap)
{
    *line_bytes = 64;
    *cap = DEFAULT_PRIVATE_LINES;
    gcs_cachesim_geom geom;
    gcs_err err;
    if (prof->ncaches > 0 && gcs_cachesim_geom_from_profile(prof, -1, &geom, &err) == 0 &&
        geom.nlevels > 0) {
        if (geom.level[0].line_bytes > 0)
            *line_bytes = geom.level[0].line_bytes;
        double lines = private_lines(&geom);
        if (lines > 0)
            *cap = lines;
    }
}

double gcs_inspect_fast_l(double revisit, double live, double cap)
{
    double l = DFS_WINDOW_LINES + REVISIT_LIVE_FACTOR * revisit * fmin(cap, live);
    return fmin(l, fmin(cap, live));
}

/* ---- the whole inspection ------------------------------------------------------------------ */

int gcs_inspect_heap(const gcs_snapshot *g, const gcs_profile *prof, const gcs_inspect_opts *opts,
                     gcs_inspect_result *out, gcs_err *err)
{
    gcs_inspect_opts defaults;
    if (!opts) {
        gcs_inspect_opts_init(&defaults);
        opts = &defaults;
    }
    uint64_t t0 = gcs_now_ns();
    memset(out, 0, sizeof *out);
    out->predictor = opts->predictor;
    out->span_method = "given";
    if (!prof->has_gc_cost) {
        gcs_err_set(err, "profile has no gc_cost_ns: run gcscale calibrate on the machine");
        return -1;
    }
    if (prof->nnodes < 1 || prof->nnodes > GCS_MODEL_MAX_NODES) {
        gcs_err_set(err, "profile has %d nodes (1..%d)", prof->nnodes, GCS_MODEL_MAX_NODES);
        return -1;
    }
    int nnodes = prof->nnodes;
    double cobj = prof->gc_cost_object_ns, cptr = prof->gc_cost_pointer_ns;
    uint64_t n = g->nobjects;

    /* Geometry (needed by slow; fast uses it for the line size and the cap on L). */
    int have_geom = prof->ncaches > 0 &&
                    gcs_cachesim_geom_from_profile(prof, opts->cpu, &out->geom, err) == 0;
    if (opts->predictor == GCS_INSPECT_SLOW && !have_geom) {
        if (prof->ncaches == 0 || strcmp(err->msg, "profile has no cache geometry") == 0)
            gcs_err_set(err, "profile has no cache geometry: use --fast");
        return -1;
    }
    if (!have_geom)
        memset(&out->geom, 0, sizeof out->geom);

    layout ly;
    ly.hdr = g->params.header_bytes;
    ly.gshift = ilog2(g->params.granule_bytes);
    ly.bits = g->params.mark_mode == MARK_MODE_ATOMIC_BITS;
    ly.lshift = have_geom ? ilog2((uint64_t)out->geom.level[0].line_bytes) : 6;
    if (ly.gshift < 0) {
        gcs_err_set(err, "snapshot granule of %u bytes is not a power of two", g->params.granule_bytes);
        return -1;
    }
    ly.mark_base = MARK_TABLE_MIN_BASE;
    while (ly.mark_base < g->params.heap_limit) /* the reader caps heap_limit at 2^56 */
        ly.mark_base <<= 1;

    /* Node ids: exact check unless the snapshot's node count already fits. */
    int exact = opts->exact || opts->predictor == GCS_INSPECT_SLOW;
    uint32_t samples = opts->samples ? opts->samples : GCS_INSPECT_DEFAULT_SAMPLES;
    if (n <= 4 * (uint64_t)samples)
        exact = 1;
    if (exact || g->params.node_count > (uint32_t)nnodes) {
        for (uint64_t i = 0; i < n; i++) {
            uint16_t nd = g->node[i];
            if (nd != GCS_SNAPSHOT_NODE_UNKNOWN && nd >= nnodes) {
                gcs_err_set(err, "snapshot names memory node %u but the profile has %d node%s", nd, nnodes,
                            nnodes == 1 ? "" : "s");
                return -1;
            }
        }
    }

    gcs_model_heap *h = &out->heap;
    uint64_t tm0 = gcs_now_ns();
    counts c = {0};
    c.node_lines = calloc((size_t)nnodes + 1, sizeof *c.node_lines);
    if (!c.node_lines) {
        gcs_err_set(err, "inspect: out of memory");
        return -1;
    }
    robj *rec = NULL;
    if (opts->predictor == GCS_INSPECT_SLOW && records_pay(g)) {
        rec = big_alloc((n ? n : 1) * sizeof *rec);
        if (!rec) {
            free(c.node_lines);
            gcs_err_set(err, "inspect: out of memory for the mark replay");
            return -1;
        }
    }
    if (exact)
        counts_exact(g, &ly, nnodes, &c, rec);
    else
        counts_sampled(g, &ly, nnodes, samples, &c);
    out->exact_counts = exact;
    out->samples = exact ? 0 : samples;
    h->objects = n;
    h->edges = (uint64_t)llround(c.edges);
    h->live_bytes = (uint64_t)llround(c.bytes);
    out->read_lines = (uint64_t)llround(c.read_lines);
    out->rw_lines = (uint64_t)llround(c.rw_lines);
    h->live_lines = out->read_lines + out->rw_lines;
    h->t1_ns = cobj * (double)n + cptr * c.edges;
    uint64_t tm1 = gcs_now_ns();

    /* Tinf */
    if (opts->tinf_ns >= 0) {
        h->tinf_ns = opts->tinf_ns;
    } else {
        uint64_t ts = gcs_now_ns();
        if (span_compute(g, cobj, cptr, out, err) < 0) {
            free(c.node_lines);
            free(rec);
            return -1;
        }
        out->span_ns = (double)(gcs_now_ns() - ts);
    }

    uint64_t tm2 = gcs_now_ns();
    if (opts->predictor == GCS_INSPECT_FAST) {
        set_v(h, c.node_lines, nnodes);
        h->q1[GCS_ACCESS_READ] = c.read_lines;
        h->q1[GCS_ACCESS_RW] = c.rw_lines;
        double cap = have_geom ? private_lines(&out->geom) : DEFAULT_PRIVATE_LINES;
        out->l_private_lines = cap;
        /* share of examined pointers that find their object already marked */
        double examined = c.edges + (double)g->nroots;
        /* sampled edges: discount 3 standard errors of the estimate */
        double noise = 0;
        if (!exact && g->nfields > 0) {
            double q = c.edges / (double)g->nfields;
            noise = 3 * (double)g->nfields * sqrt(q * (1 - q) / samples);
        }
        double revisit = examined > 0 ? fmax(0.0, examined - (double)n - noise) / examined : 0.0;
        h->live_lines_avg = gcs_inspect_fast_l(revisit, (double)h->live_lines, cap);
    } else {
        replay r = {0};
        r.g = g;
        r.ly = ly;
        r.nnodes = nnodes;
        r.aside = opts->walk_only || opts->stages;
        if (opts->stages && !opts->walk_only) {
            /* about three accesses per object; grown as needed */
            r.stage_cap = 4 * (size_t)(n ? n : 1);
            r.stage = malloc(r.stage_cap * sizeof *r.stage);
        }
        out->geom.stream_prefetch = opts->stream_prefetch;
        r.sim = gcs_cachesim_new(&out->geom, err);
        uint64_t mark_table_bytes = (g->params.heap_limit >> ly.gshift) / (ly.bits ? 8 : 1) + 8;
        if (r.sim && ly.mark_base + mark_table_bytes > gcs_cachesim_addr_limit(r.sim)) {
            gcs_err_set(err, "snapshot heap of %llu bytes is too large to simulate exactly with this "
                             "profile's caches (too few sets): use --fast",
                        (unsigned long long)g->params.heap_limit);
            gcs_cachesim_free(r.sim);
            r.sim = NULL; /* fails below like a simulator that could not be made */
        }
        r.marked = big_alloc(n ? n : 1);
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
            if (rec && opts->replay_threads != 1 && !r.aside && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
                if (opts->replay_threads == 2)
                    pipe_start(&r, &r.pipe_store); /* asked for: no trial */
                else
                    r.next_check = TRIAL_SKIP; /* the pipeline's trial */
            }
            uint64_t tw = gcs_now_ns();
            replay_run(&r);
            if (r.stage && !r.oom) {
                uint64_t ts = gcs_now_ns();
                simulate_stored(&r, r.stage, r.nstage);
                out->stage_walk_ns = (double)(ts - tw);
                out->stage_sim_ns = (double)(gcs_now_ns() - ts);
            }
            out->replay_threads = r.pipe ? 2 : 1;
            out->trial_one_ns = r.trial_one_ns;
            out->trial_pipe_ns = r.trial_pipe_ns;
            pipe_finish(&r);
            if (r.oom) {
                gcs_err_set(err, "inspect: out of memory for the mark replay's %s",
                            r.oom == 2 ? "stored accesses" : "stack");
                rc = -1;
            }
        }
        if (rc == 0) {
            gcs_cachesim_result_get(r.sim, &out->sim);
            for (int k = 0; k < GCS_ACCESS_COUNT; k++) {
                out->accesses[k] = out->sim.accesses[k];
                h->q1[k] = (double)out->sim.memory[k];
                h->q1_prefetched[k] = (double)out->sim.memory_prefetched[k];
            }
            h->live_lines_avg = out->sim.live_lines_avg;
            out->marked = r.nmarked;
            set_v(h, r.node_miss, nnodes);
        }
        gcs_cachesim_free(r.sim);
        free(r.marked);
        free(r.rec);
        free(r.node_miss);
        free(r.stack);
        free(r.stage);
        if (rc < 0) {
            free(c.node_lines);
            return -1;
        }
    }
    free(c.node_lines);
    uint64_t tend = gcs_now_ns();
    out->misses_ns = (double)(tm1 - tm0) + (double)(tend - tm2);
    out->elapsed_ns = (double)(tend - t0);
    return 0;
}

json_t *gcs_inspect_result_to_json(const gcs_inspect_result *r)
{
    const gcs_model_heap *h = &r->heap;
    json_t *v = json_array();
    for (int k = 0; k < h->nnodes; k++)
        json_array_append_new(v, json_real(h->v[k]));
    json_t *j = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:s, s:I, s:I, "
                          "s:{s:f, s:f}, s:f, s:o, s:f, s:f, s:f}",
                          "predictor", gcs_inspect_predictor_name(r->predictor),
                          "exact_counts", r->exact_counts, "samples", (json_int_t)r->samples,
                          "objects", (json_int_t)h->objects, "edges", (json_int_t)h->edges,
                          "live_bytes", (json_int_t)h->live_bytes, "live_lines", (json_int_t)h->live_lines,
                          "rw_lines", (json_int_t)r->rw_lines, "t1_ns", h->t1_ns, "tinf_ns", h->tinf_ns,
                          "span_method", r->span_method, "reachable", (json_int_t)r->reachable,
                          "depth", (json_int_t)r->depth, "q1", "read", h->q1[GCS_ACCESS_READ], "rw",
                          h->q1[GCS_ACCESS_RW], "live_lines_avg", h->live_lines_avg, "v", v,
                          "inspect_ns", r->elapsed_ns, "span_ns", r->span_ns, "predictor_ns", r->misses_ns);
    if (j)
        json_object_set_new(j, "q1_prefetched", json_pack("{s:f, s:f}", "read",
                                                          h->q1_prefetched[GCS_ACCESS_READ], "rw",
                                                          h->q1_prefetched[GCS_ACCESS_RW]));
    if (j && r->predictor == GCS_INSPECT_SLOW) {
        json_t *lv = json_array();
        for (int k = 0; k < r->sim.nlevels; k++)
            json_array_append_new(
                lv, json_pack("{s:i, s:I, s:I, s:I, s:I, s:b}", "level", r->geom.level[k].level, "read_hits",
                              (json_int_t)r->sim.level[k].hits[GCS_ACCESS_READ], "read_misses",
                              (json_int_t)r->sim.level[k].misses[GCS_ACCESS_READ], "rw_hits",
                              (json_int_t)r->sim.level[k].hits[GCS_ACCESS_RW], "rw_misses",
                              (json_int_t)r->sim.level[k].misses[GCS_ACCESS_RW], "private",
                              k < r->sim.private_levels));
        json_object_set_new(j, "accesses", json_integer((json_int_t)(r->accesses[0] + r->accesses[1])));
        json_object_set_new(j, "replay_threads", json_integer(r->replay_threads));
        json_object_set_new(j, "cache_levels", lv);
    }
    return j;
}
