/* test_sharing.c -- extra work in parallel (model/sharing.c): lines passing
 * between workers, counted on synthetic snapshots and priced from hand
 * profiles; steal misses at the shared level's latency; the profile key
 * gc_line_transfer_ns and its calibrate step (calibrate/sharing.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_heaps.h"
#include "gcscale/calibrate.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"

#define assert_close(a, b, rel) \
    assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-12)

/* Objects of one pointer and one data word (16-byte slots: four to a line),
 * in id order; next[i] is object i's field (UINT32_MAX: NULL). */
static gcs_snapshot *snapshot_of(uint32_t n, const uint32_t *next, const uint32_t *roots, uint32_t nroots)
{
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(n, n, nroots, &err);
    assert_non_null(g);
    gcs_snapshot_params_default(&g->params);
    for (uint32_t i = 0; i < n; i++) {
        g->addr[i] = 16 * (uint64_t)i + 8;
        g->words[i] = 1;
        g->nptrs[i] = 1;
        g->node[i] = 0;
        g->edge_start[i] = i;
        g->edges[i] = next[i];
    }
    g->edge_start[n] = n;
    memcpy(g->roots, roots, nroots * sizeof *roots);
    g->params.heap_limit = ((16 * (uint64_t)n + 65535) & ~65535ull) + 65536;
    if (gcs_snapshot_validate(g, &err) < 0)
        fail_msg("invalid test snapshot: %s", err.msg);
    return g;
}

/* A list: i points to i - 1, the root is the last object (the mark visits
 * the lines in address order, each line's objects one after the other). */
static gcs_snapshot *make_list(uint32_t n)
{
    uint32_t *next = malloc(n * sizeof *next), root = n - 1;
    for (uint32_t i = 0; i < n; i++)
        next[i] = i ? i - 1 : GCS_SNAPSHOT_NULL;
    gcs_snapshot *g = snapshot_of(n, next, &root, 1);
    free(next);
    return g;
}

/* One chain through the objects in a random order: neighbours in memory are
 * marked far apart, each line's objects by whichever worker holds that part
 * of the chain. */
static gcs_snapshot *make_shuffled_chain(uint32_t n)
{
    uint32_t *order = malloc(n * sizeof *order), *next = malloc(n * sizeof *next);
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t s = 12345;
    for (uint32_t i = n - 1; i > 0; i--) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t j = (uint32_t)((s >> 33) % (i + 1)), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (uint32_t k = 0; k < n; k++)
        next[order[k]] = k + 1 < n ? order[k + 1] : GCS_SNAPSHOT_NULL;
    gcs_snapshot *g = snapshot_of(n, next, &order[0], 1);
    free(order);
    free(next);
    return g;
}

static void add_cache(gcs_profile *p, int level, uint64_t size, int ncpus)
{
    int cpus[2] = {0, 1};
    gcs_profile_cache c = {.level = level, .size_bytes = size, .line_bytes = 64, .ways = 8, .ncpus = ncpus,
                           .cpus = cpus};
    snprintf(c.type, sizeof c.type, "%s", level == 1 ? "data" : "unified");
    assert_int_equal(gcs_profile_add_cache(p, &c), 0);
}

/* One node of two CPUs, M1 100 ns, S_O 1 ns, gc costs, private L1 and L2
 * (256 KiB: a window of thousands of objects), an L3 both CPUs share, and
 * gc_line_transfer_ns = transfer (< 0: none). */
static gcs_profile *make_profile(double transfer)
{
    gcs_profile *p = gcs_profile_new(1);
    assert_non_null(p);
    p->nodes[0].ncpus = 2;
    p->nodes[0].cpus = malloc(2 * sizeof(int));
    p->nodes[0].cpus[0] = 0;
    p->nodes[0].cpus[1] = 1;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a][0] = 100;
        p->occupancy_ns[a][0] = 1;
    }
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 10;
    p->gc_cost_pointer_ns = 1;
    add_cache(p, 1, 32768, 1);
    add_cache(p, 2, 262144, 1);
    add_cache(p, 3, 4 << 20, 2);
    if (transfer >= 0) {
        p->has_gc_line_transfer = 1;
        p->gc_line_transfer_ns = transfer;
    }
    return p;
}

static gcs_inspect_result inspect(const gcs_snapshot *g, const gcs_profile *p, int shared_lines)
{
    gcs_inspect_opts o;
    gcs_inspect_opts_init(&o);
    o.predictor = GCS_INSPECT_FAST;
    o.shared_lines = shared_lines;
    gcs_inspect_result r;
    gcs_err err;
    if (gcs_inspect_heap(g, p, &o, &r, &err) < 0)
        fail_msg("inspect: %s", err.msg);
    return r;
}

/* The law by hand: S = objects / (steals + P); a bin adds min(count, sum / S);
 * times 1 - 1/P; nothing at P = 1 or on a heap whose lines were not counted. */
static void test_transfers_by_hand(void **state)
{
    (void)state;
    gcs_model_heap h;
    memset(&h, 0, sizeof h);
    h.objects = 1000;
    h.share_gap_count[3] = 10, h.share_gap_sum[3] = 100;      /* ten gaps of 10 */
    h.share_gap_count[9] = 5, h.share_gap_sum[9] = 5 * 600.0; /* five of 600 */
    assert_true(gcs_model_shared_transfers(&h, 2, 8) == 0);   /* not counted */
    h.share_counted = 1;
    /* P = 2, 8 steals: S = 100; bins min(10, 1) + min(5, 30) = 6; x 1/2 */
    assert_close(gcs_model_shared_transfers(&h, 2, 8), 3, 1e-12);
    /* P = 4, 96 steals: S = 10; min(10, 10) + min(5, 300) = 15; x 3/4 */
    assert_close(gcs_model_shared_transfers(&h, 4, 96), 11.25, 1e-12);
    assert_true(gcs_model_shared_transfers(&h, 1, 0) == 0);
}

/* A list is marked in address order: its mark-table lines' objects are
 * neighbours in the mark order, so only the lines across a cut between the
 * workers' segments transfer (one per cut), and its predicted speedup stays
 * at most 1.05 at every P with every term on. */
static void test_list_has_no_extra_work(void **state)
{
    (void)state;
    gcs_snapshot *g = make_list(20000);
    gcs_profile *p = make_profile(300);
    gcs_inspect_result r = inspect(g, p, 1);
    assert_int_equal(r.heap.share_counted, 1);
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    o.sharing = 1;
    gcs_model_opts_steal_level(&o, p);
    for (int P = 2; P <= 16; P++) {
        double steals = P * log(r.heap.t1_ns);
        double x = gcs_model_shared_transfers(&r.heap, P, steals);
        /* at most one mark-table line per cut */
        assert_true(x > 0 && x <= steals + P);
        gcs_model_result m;
        gcs_err err;
        assert_int_equal(gcs_model_predict(p, &r.heap, P, &o, &m, &err), 0);
        assert_true(m.speedup <= 1.05);
        assert_close(m.speedup + m.lost_span + m.lost_extra_work + m.lost_contention + m.lost_wake +
                         m.lost_search + m.lost_tail, P, 1e-9);
    }
    gcs_profile_free(p);
    gcs_snapshot_free(g);
}

/* Lines whose objects are marked far apart by a chain in random order: the
 * transfers grow with P, the predicted busy time grows by transfers x
 * gc_line_transfer_ns (over the overlap), and the stack carries it as
 * lost_shared_lines inside lost_extra_work. */
static void test_shuffled_lines_grow_with_p(void **state)
{
    (void)state;
    gcs_snapshot *g = make_shuffled_chain(4000);
    gcs_profile *p = make_profile(300);
    gcs_inspect_result r = inspect(g, p, 1);
    assert_int_equal(r.heap.share_counted, 1);
    double last = 0;
    for (int P = 2; P <= 8; P *= 2) {
        double x = gcs_model_shared_transfers(&r.heap, P, 100);
        assert_true(x > last);
        last = x;
    }
    /* far more than the list's handful: most of the 1000 lines' gaps */
    assert_true(gcs_model_shared_transfers(&r.heap, 2, 100) > 500);
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    o.overlap = 2;
    gcs_model_result off, on;
    gcs_err err;
    assert_int_equal(gcs_model_predict(p, &r.heap, 4, &o, &off, &err), 0);
    assert_true(off.shared_ns == 0 && off.lost_shared_lines == 0); /* off by default */
    o.sharing = 1;
    assert_int_equal(gcs_model_predict(p, &r.heap, 4, &o, &on, &err), 0);
    double x = gcs_model_shared_transfers(&r.heap, 4, on.steals);
    assert_close(on.shared_transfers, x, 1e-12);
    assert_close(on.shared_ns, x * 300 / (2 * 4), 1e-12);
    assert_close(on.time_ns, off.time_ns + on.shared_ns, 1e-9);
    assert_close(on.lost_shared_lines, 4 * on.shared_ns / on.time_ns, 1e-9);
    assert_close(on.lost_extra_work, on.lost_extra_misses + on.lost_shared_lines, 1e-12);
    assert_true(on.speedup < off.speedup);
    gcs_profile_free(p);
    gcs_snapshot_free(g);
}

/* Only the mark table's lines are counted: the collector never writes an
 * object during the mark, so an object line read by two workers stays in
 * both caches.  The shuffled chain's 4000 16-byte objects lie on 1000 object
 * lines and on 63 lines of mark bytes (one byte per 16-byte granule, 64 to a
 * line), so the gaps are at most 4000 - 63, each of the chain's mark-table
 * gaps within the test machine's private caches; counting object lines too
 * would add their 3000. */
static void test_only_mark_table_lines(void **state)
{
    (void)state;
    const uint32_t n = 4000;
    gcs_snapshot *g = make_shuffled_chain(n);
    gcs_profile *p = make_profile(300);
    gcs_inspect_result r = inspect(g, p, 1);
    assert_int_equal(r.heap.share_counted, 1);
    assert_true(r.heap.share_window >= n); /* every gap is below the window */
    double gaps = 0;
    for (int b = 0; b < GCS_MODEL_GAP_BINS; b++)
        gaps += r.heap.share_gap_count[b];
    uint32_t mark_lines = (n + 63) / 64; /* one mark byte per 16-byte object */
    assert_true(gaps == n - mark_lines);
    gcs_profile_free(p);
    gcs_snapshot_free(g);
}

/* A profile without gc_line_transfer_ns: nothing counted, no term, the
 * prediction as without the option. */
static void test_missing_key_no_term(void **state)
{
    (void)state;
    gcs_snapshot *g = make_shuffled_chain(2000);
    gcs_profile *p = make_profile(-1);
    gcs_inspect_result r = inspect(g, p, 1);
    assert_int_equal(r.heap.share_counted, 0);
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    gcs_model_result a, b;
    gcs_err err;
    assert_int_equal(gcs_model_predict(p, &r.heap, 2, &o, &a, &err), 0);
    o.sharing = 1;
    assert_int_equal(gcs_model_predict(p, &r.heap, 2, &o, &b, &err), 0);
    assert_true(b.shared_transfers == 0 && b.shared_ns == 0 && b.lost_shared_lines == 0);
    assert_close(b.time_ns, a.time_ns, 1e-12);
    gcs_profile_free(p);
    gcs_snapshot_free(g);
}

/* Steal misses: the level every CPU shares (here the L3) at the effective
 * LLC's hit latency; no shared cache, memory as before.  Cheaper steal
 * misses lower only the extra-miss part. */
static void test_steal_level(void **state)
{
    (void)state;
    gcs_profile *p = make_profile(-1);
    p->has_llc_effective = 1;
    p->llc_effective_bytes = 4 << 20;
    p->llc_hit_ns = 20;
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    assert_true(isnan(o.steal_miss_ns));
    assert_int_equal(gcs_model_opts_steal_level(&o, p), 1);
    assert_close(o.steal_miss_ns, 20, 0);
    gcs_model_heap h;
    memset(&h, 0, sizeof h);
    h.objects = 1000;
    h.t1_ns = 1e6;
    h.tinf_ns = 1e3;
    h.q1[GCS_ACCESS_READ] = 1000;
    h.live_lines_avg = 50;
    h.nnodes = 1;
    h.v[0] = 1;
    gcs_model_result mem, llc;
    gcs_err err;
    gcs_model_opts om;
    gcs_model_opts_init(&om);
    assert_int_equal(gcs_model_predict(p, &h, 2, &om, &mem, &err), 0);
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &llc, &err), 0);
    assert_true(llc.time_ns < mem.time_ns && llc.lost_extra_misses < mem.lost_extra_misses);
    assert_close(llc.time_no_extra_misses_ns, mem.time_no_extra_misses_ns, 1e-9);
    /* at P = 1 there is no steal: the same time */
    assert_int_equal(gcs_model_predict(p, &h, 1, &om, &mem, &err), 0);
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &llc, &err), 0);
    assert_close(llc.time_ns, mem.time_ns, 1e-12);
    /* steal_miss_ns = M1 is the old pricing */
    o.steal_miss_ns = 100;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &llc, &err), 0);
    assert_int_equal(gcs_model_predict(p, &h, 2, &om, &mem, &err), 0);
    assert_close(llc.time_ns, mem.time_ns, 1e-9);
    /* no cache spans both CPUs: memory */
    p->caches[2].ncpus = 1;
    assert_int_equal(gcs_model_opts_steal_level(&o, p), 0);
    assert_true(isnan(o.steal_miss_ns));
    gcs_profile_free(p);
}

/* The key survives the JSON round trip; a negative one is refused by name;
 * absent, the profile says so. */
static void test_profile_key_round_trip(void **state)
{
    (void)state;
    gcs_profile *p = make_profile(123.5);
    p->nodes[0].mem_bytes = 0;
    json_t *doc = gcs_profile_to_json(p);
    gcs_err err;
    gcs_profile *q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("%s", err.msg);
    assert_int_equal(q->has_gc_line_transfer, 1);
    assert_close(q->gc_line_transfer_ns, 123.5, 0);
    gcs_profile_free(q);
    json_object_set_new(doc, "gc_line_transfer_ns", json_real(-1));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_line_transfer_ns"));
    json_object_del(doc, "gc_line_transfer_ns");
    q = gcs_profile_from_json(doc, &err);
    assert_non_null(q);
    assert_int_equal(q->has_gc_line_transfer, 0);
    gcs_profile_free(q);
    json_decref(doc);
    gcs_profile_free(p);
}

/* gc_mark_transfer_ns (2026-11-29): read and written, refused at 0 or
 * below; and model v2 prices the simulated mark-table transfers at P times
 * the table's fit, spread over the workers, inside the stack's shared
 * lines; nothing without the key, without a simulation, with no fit, or
 * with the shared-lines term on (it prices the lines its own way). */
static void test_mark_transfers_priced(void **state)
{
    (void)state;
    gcs_profile *p = make_profile(-1);
    p->nodes[0].mem_bytes = 0;
    p->has_gc_mark_transfer = 1;
    p->gc_mark_transfer_ns = 4;
    json_t *doc = gcs_profile_to_json(p);
    gcs_err err;
    gcs_profile *q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("%s", err.msg);
    assert_int_equal(q->has_gc_mark_transfer, 1);
    assert_close(q->gc_mark_transfer_ns, 4, 0);
    gcs_profile_free(q);
    json_object_set_new(doc, "gc_mark_transfer_ns", json_real(0));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_mark_transfer_ns"));
    json_decref(doc);

    gcs_model_heap h = test_spare_heap();
    h.steals_simulated = 2;
    h.sim_transfers[2] = 1000;
    h.table_fit = 0.5;
    gcs_model_opts o;
    gcs_model_sources src;
    gcs_model_opts_init(&o);
    gcs_model_opts_v2(&o, p, 0, 0, &src);
    gcs_model_opts_v2_costs(&o, p, &src);
    assert_int_equal(o.mark_transfers, 1);
    gcs_model_result on, r;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &on, &err), 0);
    assert_close(on.mark_transfers, 500, 1e-12);
    assert_close(on.mark_transfer_ns, 500 * 4.0 / 2, 1e-12);
    assert_close(on.lost_shared_lines, 2 * on.mark_transfer_ns / on.time_ns, 1e-9);
    assert_close(on.speedup + on.lost_extra_work + on.lost_contention + on.lost_span + on.lost_wake +
                     on.lost_search + on.lost_tail, 2, 1e-6);
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), 0); /* one worker: none */
    assert_true(r.mark_transfer_ns == 0);
    gcs_model_opts sharing = o;
    sharing.sharing = 1;
    assert_int_equal(gcs_model_predict(p, &h, 2, &sharing, &r, &err), 0);
    assert_true(r.mark_transfer_ns == 0);
    h.table_fit = 0;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_true(r.mark_transfer_ns == 0);
    h.table_fit = 0.5;
    h.steals_simulated = 0;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_true(r.mark_transfer_ns == 0 && r.time_ns < on.time_ns);
    h.steals_simulated = 2;
    p->has_gc_mark_transfer = 0;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_true(r.mark_transfer_ns == 0);
    h.table_fit = 1.5;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "fit"));
    h.table_fit = 0.5;
    h.heap_fit = -0.1;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "fit"));
    gcs_profile_free(p);
}

/* gc_mark_transfer_cached_ns (2026-11-29, thirteenth session): read and
 * written, refused at 0; where the profile has it, a transfer's price goes
 * linearly with the heap's fit in the private caches from
 * gc_mark_transfer_ns at calibrate's big heap (fit 0.25) to the cached
 * price at a heap that fits whole (1); below 0.25, and without the key,
 * the big heap's. */
static void test_mark_transfers_cached_price(void **state)
{
    (void)state;
    gcs_profile *p = make_profile(-1);
    p->nodes[0].mem_bytes = 0;
    p->has_gc_mark_transfer = 1;
    p->gc_mark_transfer_ns = 4;
    p->has_gc_mark_transfer_cached = 1;
    p->gc_mark_transfer_cached_ns = 10;
    json_t *doc = gcs_profile_to_json(p);
    gcs_err err;
    gcs_profile *q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("%s", err.msg);
    assert_int_equal(q->has_gc_mark_transfer_cached, 1);
    assert_close(q->gc_mark_transfer_cached_ns, 10, 0);
    gcs_profile_free(q);
    json_object_set_new(doc, "gc_mark_transfer_cached_ns", json_real(0));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_mark_transfer_cached_ns"));
    json_decref(doc);

    gcs_model_heap h = test_spare_heap();
    h.steals_simulated = 2;
    h.sim_transfers[2] = 1000;
    h.table_fit = 1;
    gcs_model_opts o;
    gcs_model_sources src;
    gcs_model_opts_init(&o);
    gcs_model_opts_v2(&o, p, 0, 0, &src);
    gcs_model_opts_v2_costs(&o, p, &src);
    static const double fit[] = {0, 0.1, 0.25, 0.625, 1};
    static const double price[] = {4, 4, 4, 7, 10};
    gcs_model_result r;
    for (int i = 0; i < 5; i++) {
        h.heap_fit = fit[i];
        assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
        assert_close(r.mark_transfer_ns, 1000 * price[i] / 2, 1e-9);
    }
    p->has_gc_mark_transfer_cached = 0;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_close(r.mark_transfer_ns, 1000 * 4.0 / 2, 1e-12);
    gcs_profile_free(p);
}

/* The table's fit (the slow predictor): 1 for a short chain whose mark
 * table is a few lines, below 1 once the table outgrows the share of the
 * private L2 its accesses get; 0 from the fast predictor, which counts no
 * accesses. */
static void test_table_fit(void **state)
{
    (void)state;
    gcs_profile *p = make_profile(-1);
    gcs_inspect_opts o;
    gcs_inspect_opts_init(&o);
    o.predictor = GCS_INSPECT_SLOW;
    gcs_inspect_result r;
    gcs_err err;
    gcs_snapshot *g = make_shuffled_chain(4000);
    if (gcs_inspect_heap(g, p, &o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    assert_close(r.heap.table_fit, 1, 0);
    gcs_snapshot_free(g);
    g = make_shuffled_chain(1u << 20); /* 1 Mi 16-byte objects: a 1 MiB table against a 256 KiB L2 */
    if (gcs_inspect_heap(g, p, &o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(r.heap.table_fit > 0 && r.heap.table_fit < 0.25);
    o.predictor = GCS_INSPECT_FAST;
    if (gcs_inspect_heap(g, p, &o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(r.heap.table_fit == 0);
    gcs_snapshot_free(g);
    gcs_profile_free(p);
}

/* The dependent-load step (calibrate/dependent.c, 2026-11-28): a curve
 * from 256 KiB to its top (64 MiB: this profile has no effective LLC),
 * sizes increasing, every latency > 0, the largest set's dependent load
 * well above the smallest's (a random chase over 64 MiB leaves the private
 * caches and the TLB's reach, over 256 KiB it does not), the details
 * beside it; refused without a CPU. */
static void test_calibrate_dependent_load(void **state)
{
    (void)state;
    gcs_profile *p = make_profile(-1);
    json_t *d = NULL;
    gcs_err err;
    if (gcs_calibrate_dependent_load(1, p, &d, &err) < 0)
        fail_msg("%s", err.msg);
    int n = p->ndependent_load;
    assert_true(n >= 2);
    assert_true(p->dependent_load_bytes[0] == 256 << 10);
    assert_true(p->dependent_load_bytes[n - 1] == 64 << 20);
    for (int i = 0; i < n; i++) {
        assert_true(p->dependent_load_ns[i] > 0 && isfinite(p->dependent_load_ns[i]));
        assert_true(i == 0 || p->dependent_load_bytes[i] > p->dependent_load_bytes[i - 1]);
    }
    if (!(p->dependent_load_ns[n - 1] > 2 * p->dependent_load_ns[0]))
        fail_msg("64 MiB at %.1f ns, 256 KiB at %.1f ns", p->dependent_load_ns[n - 1], p->dependent_load_ns[0]);
    assert_int_equal(json_array_size(json_object_get(d, "points")), (size_t)n);
    assert_string_equal(json_string_value(json_object_get(d, "pages")), "4k");
    assert_int_equal(gcs_profile_validate(p, &err), 0);
    json_decref(d);
    p->nodes[0].ncpus = 0;
    p->ndependent_load = 0;
    assert_int_equal(gcs_calibrate_dependent_load(1, p, &d, &err), -1);
    assert_non_null(strstr(err.msg, "no CPU"));
    assert_int_equal(p->ndependent_load, 0);
    gcs_profile_free(p);
}

/* The calibrate step on this machine's first two CPUs: a figure, its
 * uncertainty, its details; refused with one CPU. */
static void test_calibrate_line_transfer(void **state)
{
    (void)state;
    gcs_profile *p = make_profile(-1);
    json_t *d = NULL;
    gcs_err err;
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        if (gcs_calibrate_line_transfer(1, p, &d, &err) < 0)
            fail_msg("%s", err.msg);
        assert_int_equal(p->has_gc_line_transfer, 1);
        assert_true(p->gc_line_transfer_ns >= 0 && isfinite(p->gc_line_transfer_ns));
        gcs_profile_uncertainty u;
        assert_int_equal(gcs_profile_get_uncertainty(p, "gc_line_transfer_ns", &u), 1);
        assert_int_equal(u.n > 0, 1);
        assert_true(json_real_value(json_object_get(d, "private_ns_per_touch")) > 0);
        assert_int_equal(json_array_size(json_object_get(d, "ns_per_rep")), 5);
        assert_int_equal(gcs_profile_validate(p, &err), 0);
        json_decref(d);
    }
    p->nodes[0].ncpus = 1;
    p->has_gc_line_transfer = 0;
    assert_int_equal(gcs_calibrate_line_transfer(1, p, &d, &err), -1);
    assert_non_null(strstr(err.msg, "two CPUs"));
    assert_int_equal(p->has_gc_line_transfer, 0);
    gcs_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transfers_by_hand),
        cmocka_unit_test(test_list_has_no_extra_work),
        cmocka_unit_test(test_shuffled_lines_grow_with_p),
        cmocka_unit_test(test_only_mark_table_lines),
        cmocka_unit_test(test_missing_key_no_term),
        cmocka_unit_test(test_steal_level),
        cmocka_unit_test(test_profile_key_round_trip),
        cmocka_unit_test(test_mark_transfers_priced),
        cmocka_unit_test(test_mark_transfers_cached_price),
        cmocka_unit_test(test_table_fit),
        cmocka_unit_test(test_calibrate_line_transfer),
        cmocka_unit_test(test_calibrate_dependent_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
