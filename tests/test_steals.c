/* test_steals.c -- the collector's work stealing simulated on a heap's
 * graph (model/steals.c): what a list, a tree, an array and a random graph
 * give; determinism; the prices from a profile; inspection filling the
 * heap's simulated counts; model v2's coordination taking them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_heaps.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"

#include "../model/inspect_internal.h"

#define assert_close(a, b, rel) \
    assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-12)

#define PROFILE "data/corpus/dev-2core-kvm-xeon-2/profile.json"

/* Object i has nptrs[i] fields (edges[edge_start[i]..]) and one data word,
 * laid out in id order as gc/ would (8-byte header, 16-byte granules). */
static gcs_snapshot *graph(uint32_t n, const uint32_t *nptrs, const uint32_t *edges, const uint32_t *roots,
                           uint32_t nroots)
{
    uint64_t nf = 0;
    for (uint32_t i = 0; i < n; i++)
        nf += nptrs[i];
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_new(n, nf, nroots, &err);
    assert_non_null(g);
    gcs_snapshot_params_default(&g->params);
    uint64_t at = 8;
    for (uint32_t i = 0; i < n; i++) {
        g->addr[i] = at;
        g->words[i] = nptrs[i] + 1;
        g->nptrs[i] = nptrs[i];
        g->node[i] = 0;
        g->edge_start[i + 1] = g->edge_start[i] + nptrs[i];
        at += (8 * (uint64_t)g->words[i] + 8 + 15) & ~15ull;
    }
    memcpy(g->edges, edges, nf * sizeof *edges);
    memcpy(g->roots, roots, nroots * sizeof *roots);
    g->params.heap_limit = ((at + 65535) & ~65535ull) + 65536;
    if (gcs_snapshot_validate(g, &err) < 0)
        fail_msg("invalid test snapshot: %s", err.msg);
    return g;
}

/* `lists` linked lists of `len` objects each, list k's head a root. */
static gcs_snapshot *make_lists(uint32_t lists, uint32_t len)
{
    uint32_t n = lists * len, *np = malloc(n * sizeof *np), *e = malloc(n * sizeof *e), *r = malloc(lists * 4);
    for (uint32_t k = 0; k < lists; k++) {
        r[k] = k * len;
        for (uint32_t j = 0; j < len; j++) {
            np[k * len + j] = 1;
            e[k * len + j] = j + 1 < len ? k * len + j + 1 : GCS_SNAPSHOT_NULL;
        }
    }
    gcs_snapshot *g = graph(n, np, e, r, lists);
    free(np);
    free(e);
    free(r);
    return g;
}

/* A complete binary tree of `depth` levels below the root, in preorder. */
static uint32_t tree_fill(uint32_t *np, uint32_t *e, uint32_t *next, int depth)
{
    uint32_t me = (*next)++;
    np[me] = depth > 0 ? 2 : 0;
    if (depth > 0) {
        uint32_t l = tree_fill(np, e, next, depth - 1), r = tree_fill(np, e, next, depth - 1);
        /* edges of object me start at the sum of the nptrs before it: fixed below */
        e[2 * me] = l;
        e[2 * me + 1] = r;
    }
    return me;
}

static gcs_snapshot *make_tree(int depth)
{
    uint32_t n = (1u << (depth + 1)) - 1, next = 0, root = 0;
    uint32_t *np = calloc(n, sizeof *np), *tmp = malloc(2 * (size_t)n * sizeof *tmp), *e = malloc(2 * (size_t)n * 4);
    tree_fill(np, tmp, &next, depth);
    uint64_t f = 0; /* pack: leaves have no fields */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < np[i]; k++)
            e[f++] = tmp[2 * i + k];
    gcs_snapshot *g = graph(n, np, e, &root, 1);
    free(np);
    free(tmp);
    free(e);
    return g;
}

/* One root array of n pointers to objects of two fields each, pointing at
 * random (gc-bench's random shape, smaller). */
static gcs_snapshot *make_random(uint32_t n)
{
    uint32_t *np = malloc((n + 1) * sizeof *np), *e = malloc(3 * (size_t)n * sizeof *e), root = 0;
    np[0] = n;
    uint64_t s = 42, f = 0;
    for (uint32_t i = 0; i < n; i++)
        e[f++] = i + 1;
    for (uint32_t i = 1; i <= n; i++) {
        np[i] = 2;
        for (int k = 0; k < 2; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            e[f++] = 1 + (uint32_t)((s >> 33) % n);
        }
    }
    gcs_snapshot *g = graph(n + 1, np, e, &root, 1);
    free(np);
    free(e);
    return g;
}

static gcs_steal_costs costs(void)
{
    gcs_steal_costs c;
    memset(&c, 0, sizeof c);
    c.cost_object_ns = 1;
    c.cost_pointer_ns = 3;
    c.chain_step_ns = 4;
    c.element_ns = 2;
    c.line_ns = 5;
    c.attempt_ns = 200;
    return c;
}

static gcs_steal_sim sim(const gcs_snapshot *g, int p)
{
    gcs_steal_costs c = costs();
    gcs_steal_sim r;
    gcs_err err;
    if (_gcs_steal_sim(g, p, &c, &r, &err) < 0)
        fail_msg("%s", err.msg);
    return r;
}

/* A chain is never stolen from: its owner's stack never holds two entries.
 * One list per worker: every worker has its own, nobody steals. */
static void test_lists_never_stolen(void **state)
{
    (void)state;
    gcs_snapshot *one = make_lists(1, 20000), *four = make_lists(4, 5000);
    for (int p = 1; p <= 8; p *= 2) {
        gcs_steal_sim r = sim(one, p);
        assert_int_equal(r.steals, 0);
        assert_int_equal(r.searches, 0);
        assert_int_equal(r.transfers, 0);
        assert_true(r.makespan_ns > 20000 * 4);
        r = sim(four, 4);
        assert_int_equal(r.steals, 0);
    }
    gcs_snapshot_free(one);
    gcs_snapshot_free(four);
}

/* A tree from one root: every other worker starts with nothing and must
 * steal to work; one worker never steals, and no line moves at P = 1. */
static void test_tree_spreads(void **state)
{
    (void)state;
    gcs_snapshot *g = make_tree(14);
    gcs_steal_sim one = sim(g, 1);
    assert_int_equal(one.steals, 0);
    assert_int_equal(one.transfers, 0);
    for (int p = 2; p <= 8; p *= 2) {
        gcs_steal_sim r = sim(g, p);
        assert_true(r.searches >= (uint64_t)(p - 1));
        assert_true(r.steals >= r.searches);
        assert_true(r.steals <= 16 * r.searches); /* a search takes at most STEAL_BATCH entries */
        assert_true(r.makespan_ns < one.makespan_ns);          /* the work was shared */
        assert_true(r.makespan_ns > one.makespan_ns / p * 0.9); /* not more than shared */
    }
    gcs_snapshot_free(g);
}

/* A random graph behind one array: the array's rest is split between the
 * workers, the marks' lines move between them, and the result is the same
 * every time (no clock, no thread in the simulation). */
static void test_random_deterministic(void **state)
{
    (void)state;
    gcs_snapshot *g = make_random(20000);
    gcs_steal_sim a = sim(g, 4), b = sim(g, 4), one = sim(g, 1);
    assert_true(a.steals > 0);
    assert_true(a.transfers > 0);
    assert_int_equal(one.transfers, 0);
    assert_int_equal(a.steals, b.steals);
    assert_int_equal(a.searches, b.searches);
    assert_int_equal(a.transfers, b.transfers);
    assert_true(a.makespan_ns == b.makespan_ns);
    gcs_snapshot_free(g);
}

/* Two lists whose cells alternate in memory, a root each: the workers
 * mark side by side on the same mark-table lines, and each mark moves a
 * line twice (the test reads the line the other worker wrote, the mark
 * then takes it back); two lists apart move none. */
static void test_mark_lines_move(void **state)
{
    (void)state;
    uint32_t n = 4000, *np = malloc(n * sizeof *np), *e = malloc(n * sizeof *e), roots[2] = {0, 1};
    for (uint32_t i = 0; i < n; i++) {
        np[i] = 1;
        e[i] = i + 2 < n ? i + 2 : GCS_SNAPSHOT_NULL;
    }
    gcs_snapshot *mixed = graph(n, np, e, roots, 2), *apart = make_lists(2, n / 2);
    gcs_steal_sim r = sim(mixed, 2);
    assert_int_equal(r.steals, 0);
    assert_true(r.transfers > 1.5 * n && r.transfers <= 2 * n);
    r = sim(apart, 2);
    assert_true(r.transfers <= 4); /* at most where the two lists meet */
    gcs_snapshot_free(mixed);
    gcs_snapshot_free(apart);
    free(np);
    free(e);
}

/* A steal attempt's price is the thieves' time: dearer attempts lengthen
 * the simulated mark. */
static void test_prices_move_steals(void **state)
{
    (void)state;
    gcs_snapshot *g = make_random(20000);
    gcs_steal_costs c = costs();
    gcs_steal_sim cheap, dear;
    gcs_err err;
    assert_int_equal(_gcs_steal_sim(g, 2, &c, &cheap, &err), 0);
    c.attempt_ns = 20000; /* a steal that costs as much as marking hundreds of objects */
    assert_int_equal(_gcs_steal_sim(g, 2, &c, &dear, &err), 0);
    assert_true(dear.makespan_ns > cheap.makespan_ns);
    gcs_snapshot_free(g);
}

static gcs_profile *load_profile(void)
{
    gcs_err err;
    gcs_profile *p = gcs_profile_load(PROFILE, &err);
    if (!p)
        fail_msg("%s", err.msg);
    return p;
}

/* The prices come from the profile; without gc_coord there are none and
 * inspection simulates nothing. */
static void test_costs_from_profile(void **state)
{
    (void)state;
    gcs_profile *p = load_profile();
    gcs_snapshot *g = make_tree(12);
    gcs_inspect_opts io;
    gcs_inspect_opts_init(&io);
    gcs_inspect_result ir;
    gcs_err err;
    assert_int_equal(gcs_inspect_heap(g, p, &io, &ir, &err), 0);
    assert_int_equal(ir.heap.steals_simulated, 0); /* not asked */
    gcs_steal_costs c;
    assert_int_equal(_gcs_steal_costs(p, &ir.heap, g->nfields, 1000, &c, &err), 1);
    assert_close(c.attempt_ns, p->coord.attempt_ns, 1e-12);
    assert_close(c.cost_pointer_ns, p->gc_cost_pointer_ns, 1e-12);
    assert_true(c.line_ns >= 0 && c.chain_ns == 0); /* a tree has no chain steps */
    p->has_gc_coord = 0;
    assert_int_equal(_gcs_steal_costs(p, &ir.heap, g->nfields, 1000, &c, &err), 0);
    io.steal_sim_threads = 4;
    assert_int_equal(gcs_inspect_heap(g, p, &io, &ir, &err), 0);
    assert_int_equal(ir.heap.steals_simulated, 0);
    gcs_snapshot_free(g);
    gcs_profile_free(p);
}

/* Inspection fills P = 2..N, the JSON says them, and the counts are the
 * simulation's at the profile's prices (OpenMP's threads change nothing). */
static void test_inspection_fills_heap(void **state)
{
    (void)state;
    gcs_profile *p = load_profile();
    gcs_snapshot *g = make_random(20000);
    gcs_inspect_opts io;
    gcs_inspect_opts_init(&io);
    io.steal_sim_threads = 4;
    gcs_inspect_result ir;
    gcs_err err;
    assert_int_equal(gcs_inspect_heap(g, p, &io, &ir, &err), 0);
    assert_int_equal(ir.heap.steals_simulated, 4);
    gcs_steal_costs c;
    double lines = 0;
    for (uint64_t i = 0; i < g->nobjects; i++)
        lines += (double)(((g->addr[i] + 8 * (uint64_t)g->nptrs[i] - 1) >> 6) - ((g->addr[i] - 8) >> 6) + 1);
    assert_int_equal(_gcs_steal_costs(p, &ir.heap, g->nfields, lines, &c, &err), 1);
    for (int t = 2; t <= 4; t++) {
        gcs_steal_sim r;
        assert_int_equal(_gcs_steal_sim(g, t, &c, &r, &err), 0);
        assert_true(ir.heap.sim_steals[t] == (double)r.steals);
        assert_true(ir.heap.sim_searches[t] == (double)r.searches);
        assert_true(ir.heap.sim_transfers[t] == (double)r.transfers);
        assert_true(ir.heap.sim_makespan_ns[t] == r.makespan_ns);
    }
    /* P = 1 is simulated too, as the schedules' reference */
    assert_true(ir.heap.sim_makespan_ns[1] > ir.heap.sim_makespan_ns[2]);
    assert_true(ir.heap.sim_makespan_ns[2] > ir.heap.sim_makespan_ns[4]);
    json_t *j = gcs_inspect_result_to_json(&ir);
    json_t *rows = json_object_get(j, "steal_simulation");
    assert_int_equal(json_array_size(rows), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0), "threads")), 2);
    assert_true(json_number_value(json_object_get(json_array_get(rows, 2), "steals")) == ir.heap.sim_steals[4]);
    assert_close(json_number_value(json_object_get(json_array_get(rows, 2), "schedule_speedup")),
                 ir.heap.sim_makespan_ns[1] / ir.heap.sim_makespan_ns[4], 1e-12);
    json_decref(j);
    gcs_snapshot_free(g);
    gcs_profile_free(p);
}

/* Model v2's options for p, as gcscale predict --model v2 sets them. */
static gcs_model_opts v2_opts(const gcs_profile *p)
{
    gcs_model_opts o;
    gcs_model_sources src;
    gcs_model_opts_init(&o);
    gcs_model_opts_v2(&o, p, GCS_MODEL_RESIDENCY_DEFAULT, 0, &src);
    gcs_model_opts_v2_costs(&o, p, &src);
    return o;
}

/* Model v2's coordination prices the simulated steals where the heap has
 * them, the fitted ones where it does not or beyond its P; the steal work
 * takes the smaller of the two counts. */
static void test_model_takes_simulated(void **state)
{
    (void)state;
    gcs_profile *p = load_profile();
    p->coord.attempts_per_search = 0; /* priced per entry (test_model_prices_searches: per search) */
    gcs_model_heap h = test_spare_heap();
    gcs_model_opts o = v2_opts(p);
    assert_int_equal(o.steal_sim, 1);
    gcs_model_opts off = o;
    off.steal_sim = 0;
    gcs_model_result fit, simd, fit3, r;
    gcs_err err;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &fit, &err), 0);
    assert_int_equal(gcs_model_predict(p, &h, 3, &o, &fit3, &err), 0);
    h.steals_simulated = 2;
    h.sim_steals[2] = 5000;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &simd, &err), 0);
    assert_close(simd.coord_terms.steal_ns, 5000 * p->coord.attempt_ns / 2, 1e-9);
    assert_true(fabs(simd.coord_terms.steal_ns - fit.coord_terms.steal_ns) > 1);
    assert_close(simd.steal_work_ns, fit.steal_work_ns, 1e-12); /* more than the fit: the fit */
    h.sim_steals[2] = 3;                                          /* fewer: the graph's */
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_true(fit.steal_work_ns > 3 * o.steal_work_ns / 2 + r.worker_work_ns);
    /* beside the steals', the second worker's own (the profile's gc_cost_ns.worker) */
    assert_close(r.worker_work_ns, o.worker_work_ns / 2, 1e-12);
    assert_close(r.steal_work_ns, 3 * o.steal_work_ns / 2 + o.worker_work_ns / 2, 1e-9);
    h.sim_steals[2] = 5000;
    /* beyond the simulated P, and with the option off: the fit */
    assert_int_equal(gcs_model_predict(p, &h, 3, &o, &r, &err), 0);
    assert_close(r.coord_terms.steal_ns, fit3.coord_terms.steal_ns, 1e-12);
    assert_int_equal(gcs_model_predict(p, &h, 2, &off, &r, &err), 0);
    assert_close(r.coord_terms.steal_ns, fit.coord_terms.steal_ns, 1e-12);
    gcs_profile_free(p);
}

/* With the profile's attempts per search (calibrate's heaps), the simulated
 * count priced is the heap's searches in those heaps' entries: a heap whose
 * searches take full batches costs less per entry; the fitted count and a
 * profile without the ratio are priced per entry as before. */
static void test_model_prices_searches(void **state)
{
    (void)state;
    gcs_profile *p = load_profile();
    gcs_model_heap h = test_spare_heap();
    h.steals_simulated = 2;
    h.sim_steals[2] = 1600; /* 16 entries a search, as on cube */
    h.sim_searches[2] = 100;
    gcs_model_opts o = v2_opts(p);
    gcs_model_result per_entry, per_search, fitted;
    gcs_err err;
    p->coord.attempts_per_search = 0; /* not measured */
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &per_entry, &err), 0);
    assert_close(per_entry.coord_terms.steal_ns, 1600 * p->coord.attempt_ns / 2, 1e-9);
    p->coord.attempts_per_search = 6.3;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &per_search, &err), 0);
    assert_close(per_search.coord_terms.steal_ns, 100 * 6.3 * p->coord.attempt_ns / 2, 1e-9);
    assert_true(per_search.time_ns < per_entry.time_ns);
    /* the steal work still counts entries (the smaller of fit and graph) */
    assert_close(per_search.steal_work_ns, per_entry.steal_work_ns, 1e-12);
    gcs_model_opts off = o;
    off.steal_sim = 0;
    gcs_model_result fit_ratio;
    assert_int_equal(gcs_model_predict(p, &h, 2, &off, &fit_ratio, &err), 0);
    p->coord.attempts_per_search = 0;
    assert_int_equal(gcs_model_predict(p, &h, 2, &off, &fitted, &err), 0);
    assert_close(fit_ratio.coord_terms.steal_ns, fitted.coord_terms.steal_ns, 1e-12);
    gcs_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists_never_stolen),    cmocka_unit_test(test_tree_spreads),
        cmocka_unit_test(test_random_deterministic),  cmocka_unit_test(test_prices_move_steals),
        cmocka_unit_test(test_costs_from_profile),    cmocka_unit_test(test_inspection_fills_heap),
        cmocka_unit_test(test_model_takes_simulated), cmocka_unit_test(test_model_prices_searches),
        cmocka_unit_test(test_mark_lines_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
