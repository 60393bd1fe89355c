/* inspect.c -- heap inspection: snapshot + profile -> gcs_model_heap
 * (include/gcscale/inspect.h; definitions in docs/model.md, "Heap
 * inspection, Q1 and L").
 *
 * Three independent parts, each timed:
 *   counts   objects, edges, bytes, live lines and (fast) V_j: one pass over
 *            the object arrays, or a stratified sample of them (this file);
 *   span     Tinf: a BFS from the roots; exact by itself when every object
 *            weighs the same (levels x w) or when the reachable graph is a
 *            forest (one discovery per object), else Dijkstra with Dial's
 *            buckets (a binary heap where the buckets do not fit) (span.c);
 *   misses   slow: the collector's serial mark (gc/mark.c, P = 1) replayed
 *            on object ids, its memory accesses fed to the cache simulator
 *            (replay.c); fast: Q1 = live lines and an estimate of L (this
 *            file).
 * This file is also the entry point, gcs_inspect_heap, and the JSON.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"

/* The mark table lives in its own mapping in gc/; the replay puts it at the
 * power of two at or above the heap's limit, and not below 2 MiB (see
 * layout.mark_base). */
#define MARK_TABLE_MIN_BASE (1ull << 21)
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

int gcs_inspect_steals_simulated_by_default(const gcs_profile *prof, gcs_inspect_predictor predictor)
{
    return predictor == GCS_INSPECT_SLOW && prof->has_gc_coord && prof->coord.attempt_ns > 0;
}


/* ---- layout ------------------------------------------------------------------ */

/* layout, mark_addr(), pointer_free(): model/inspect_internal.h */

static int ilog2(uint64_t v)
{
    return v && !(v & (v - 1)) ? __builtin_ctzll(v) : -1;
}

/* ---- counts -------------------------------------------------------------------- */

typedef struct counts {
    double edges, bytes, read_lines, rw_lines;
    double *node_lines;   /* [nnodes + 1]: lines by node, last = unknown */
} counts;

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
void _gcs_inspect_set_v(gcs_model_heap *h, const double *w, int nnodes)
{
    double total = 0;
    for (int k = 0; k <= nnodes; k++)
        total += w[k];
    h->nnodes = nnodes;
    double sum = 0;
    for (int k = 0; k < nnodes; k++) {
        h->v[k] = total > 0 ? (w[k] + w[nnodes] / nnodes) / total : 1.0 / nnodes;
        /* a share of the requests: weights are counts, never negative */
        gcs_assert_internal(h->v[k] >= 0 && h->v[k] <= 1 + 1e-12);
        sum += h->v[k];
    }
    gcs_assert_internal(fabs(sum - 1) < 1e-9); /* every request goes to some node */
}

/* ---- memory -------------------------------------------------------------------- */

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
    return _gcs_inspect_heap_bench(g, prof, opts, NULL, out, NULL, err);
}

int _gcs_inspect_heap_bench(const gcs_snapshot *g, const gcs_profile *prof, const gcs_inspect_opts *opts,
                            const _gcs_inspect_bench_opts *bench, gcs_inspect_result *out,
                            _gcs_inspect_bench_result *bout, gcs_err *err)
{
    gcs_inspect_opts defaults;
    if (!opts) {
        gcs_inspect_opts_init(&defaults);
        opts = &defaults;
    }
    uint64_t t0 = gcs_now_ns();
    memset(out, 0, sizeof *out);
    if (bout)
        memset(bout, 0, sizeof *bout);
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
    ly.bits = g->params.mark_mode == GCS_GC_MARK_ATOMIC_BITS;
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
    if (opts->predictor == GCS_INSPECT_SLOW && _gcs_inspect_records_pay(g)) {
        rec = _gcs_huge_alloc((n ? n : 1) * sizeof *rec);
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
    h->roots = g->nroots; /* the coordination terms' initial spread (coord.c) */
    h->edges = (uint64_t)llround(c.edges);
    h->live_bytes = (uint64_t)llround(c.bytes);
    out->read_lines = (uint64_t)llround(c.read_lines);
    out->rw_lines = (uint64_t)llround(c.rw_lines);
    h->live_lines = out->read_lines + out->rw_lines;
    h->t1_ns = cobj * (double)n + cptr * c.edges;
    /* Lines shared between workers, only where the profile can price them
     * (sharing.c): the window is the objects whose lines the worker's
     * private caches hold. */
    if (opts->shared_lines && prof->has_gc_line_transfer && h->live_lines > 0) {
        int line_bytes;
        double priv;
        gcs_inspect_fast_cache(prof, &line_bytes, &priv);
        if (_gcs_inspect_sharing(g, &ly, priv * (double)n / (double)h->live_lines, h, err) < 0) {
            free(c.node_lines);
            free(rec);
            return -1;
        }
    }
    uint64_t tm1 = gcs_now_ns();

    /* Tinf */
    if (opts->tinf_ns >= 0) {
        h->tinf_ns = opts->tinf_ns;
    } else {
        uint64_t ts = gcs_now_ns();
        /* the non-NULL fields, where sampled the lower end of Wilson's
         * interval at 3 standard errors: a low estimate, which tells span.c
         * whether the graph can be a forest.  (The plain q - 3 sigma has no
         * width when every sampled field is non-NULL: a list's estimate was
         * then all its fields, one more than it has, and its walk went to
         * the BFS, a level per object.) */
        double edges_low = c.edges;
        if (!exact && g->nfields > 0) {
            double q = c.edges / (double)g->nfields, z2 = 9, sn = (double)samples;
            double lo = (q + z2 / (2 * sn) - 3 * sqrt(q * (1 - q) / sn + z2 / (4 * sn * sn))) / (1 + z2 / sn);
            edges_low = (double)g->nfields * (lo > 0 ? lo : 0);
        }
        if (_gcs_inspect_span(g, cobj, cptr, edges_low, out, err) < 0) {
            free(c.node_lines);
            free(rec);
            return -1;
        }
        out->span_ns = (double)(gcs_now_ns() - ts);
    }

    uint64_t tm2 = gcs_now_ns();
    if (opts->predictor == GCS_INSPECT_FAST) {
        _gcs_inspect_set_v(h, c.node_lines, nnodes);
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
        int rc = _gcs_inspect_replay(g, &ly, nnodes, rec, opts, bench, out, bout, err);
        free(rec);
        if (rc < 0) {
            free(c.node_lines);
            return -1;
        }
    }
    free(c.node_lines);
    h->table_fit = h->heap_fit = 0;
    if (out->predictor == GCS_INSPECT_SLOW && out->geom.private_levels > 0 && out->rw_lines > 0) {
        double acc = (double)(out->accesses[GCS_ACCESS_READ] + out->accesses[GCS_ACCESS_RW]);
        double cache = (double)out->geom.level[out->geom.private_levels - 1].size_bytes;
        double share = acc > 0 ? (double)out->accesses[GCS_ACCESS_RW] / acc : 0;
        h->table_fit = fmin(1, cache * share / ((double)out->rw_lines * 64));
        h->heap_fit = h->live_bytes > 0 ? fmin(1, cache / (double)h->live_bytes) : 0;
    }
    if (opts->steal_sim_threads >= 2 && _gcs_inspect_steals(g, prof, opts->steal_sim_threads, h, err) < 0)
        return -1;
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
    if (j && h->steals_simulated >= 2) { /* model/steals.c, one row per P */
        json_t *st = json_array();
        for (int p = 2; p <= h->steals_simulated; p++)
            json_array_append_new(st, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "threads", p, "steals",
                                                h->sim_steals[p], "searches", h->sim_searches[p],
                                                "mark_line_transfers", h->sim_transfers[p], "makespan_ms",
                                                h->sim_makespan_ns[p] / 1e6, "schedule_speedup",
                                                h->sim_makespan_ns[p] > 0
                                                    ? h->sim_makespan_ns[1] / h->sim_makespan_ns[p]
                                                    : 0.0));
        json_object_set_new(j, "steal_simulation", st);
    }
    if (j && h->private_hits > 0)
        json_object_set_new(j, "private_hits", json_real(h->private_hits));
    if (j)
        json_object_set_new(j, "q1_prefetched", json_pack("{s:f, s:f}", "read",
                                                          h->q1_prefetched[GCS_ACCESS_READ], "rw",
                                                          h->q1_prefetched[GCS_ACCESS_RW]));
    if (j && h->streams_counted) {
        json_object_set_new(j, "q1_streamed", json_pack("{s:f, s:f}", "read", h->q1_streamed[GCS_ACCESS_READ],
                                                        "rw", h->q1_streamed[GCS_ACCESS_RW]));
        json_object_set_new(j, "q1_sequential", json_pack("{s:f, s:f}", "read", h->q1_sequential[GCS_ACCESS_READ],
                                                          "rw", h->q1_sequential[GCS_ACCESS_RW]));
        json_object_set_new(j, "q1_dependent", json_pack("{s:f, s:f}", "read", h->q1_dependent[GCS_ACCESS_READ],
                                                         "rw", h->q1_dependent[GCS_ACCESS_RW]));
    }
    if (j && r->predictor == GCS_INSPECT_SLOW)
    {
        json_object_set_new(j, "null_fields", json_integer((json_int_t)h->null_fields));
        json_object_set_new(j, "dependent_steps", json_integer((json_int_t)h->dependent_steps));
        json_object_set_new(j, "table_fit", json_real(h->table_fit));
        json_object_set_new(j, "heap_fit", json_real(h->heap_fit));
        json_object_set_new(j, "null_switches", json_integer((json_int_t)h->null_switches));
    }
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
        /* the sampled simulation, one line in 2^k (0: every line; gcs_inspect_opts.sim_sample) */
        json_object_set_new(j, "sim_line_sample", json_integer(r->geom.line_sample_shift));
        json_object_set_new(j, "cache_levels", lv);
    }
    return j;
}
