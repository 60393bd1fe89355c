/* test_model.c -- the contention fixed point, closed MVA, ablations, stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gcscale/model.h"

#define assert_close(a, b, rel) \
    assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-12)

/* One node, one CPU node with `cpus` CPUs, read latency m1, occupancy s. */
static gcs_profile *one_node_profile(int cpus, double m1, double s)
{
    gcs_profile *p = gcs_profile_new(1);
    p->nodes[0].ncpus = cpus;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a][0] = m1;
        p->occupancy_ns[a][0] = s;
    }
    return p;
}

static gcs_profile *load_profile(const char *path)
{
    gcs_err err;
    gcs_profile *p = gcs_profile_load(path, &err);
    if (!p)
        fail_msg("%s", err.msg);
    return p;
}

static gcs_model_heap heap_of(double t1, double tinf, double q1, double live)
{
    gcs_model_heap h;
    memset(&h, 0, sizeof h);
    h.t1_ns = t1;
    h.tinf_ns = tinf;
    h.q1[GCS_ACCESS_READ] = q1;
    h.live_lines_avg = live;
    h.nnodes = 1;
    h.v[0] = 1;
    return h;
}

/* The hand-computed tests below are of the paper's form (T1/P + Tinf,
 * model-notes §1.2), which is no longer the default: they ask for it. */
static void paper_opts_init(gcs_model_opts *o)
{
    gcs_model_opts_init(o);
    o->span = GCS_MODEL_SPAN_PAPER;
}

/* The default is Brent's form: a chain (Tinf = T1, every miss on the
 * critical path) gets no speedup at any P, where the paper's form gives
 * 4/3 at P = 2 and more beyond. */
static void test_default_span_is_brent(void **state)
{
    (void)state;
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    assert_int_equal(o.span, GCS_MODEL_SPAN_CRITICAL);
    gcs_profile *p = one_node_profile(4, 100, 40);
    gcs_model_heap h = heap_of(1e6, 1e6, 5e3, 50);
    gcs_err err;
    for (int threads = 2; threads <= 16; threads *= 2) {
        gcs_model_result r;
        assert_int_equal(gcs_model_predict(p, &h, threads, &o, &r, &err), 0);
        assert_true(r.speedup <= 1.05);
        o.span = GCS_MODEL_SPAN_PAPER;
        assert_int_equal(gcs_model_predict(p, &h, threads, &o, &r, &err), 0);
        assert_true(r.speedup >= 4.0 / 3.0 - 1e-9);
        o.span = GCS_MODEL_SPAN_CRITICAL;
    }
    gcs_profile_free(p);
}

static void test_one_worker_reduces_to_serial_cost(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(4, 100, 40);
    gcs_model_heap h = heap_of(1e6, 2e3, 5e3, 50);
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    for (int mva = 0; mva < 2; mva++) {
        o.mva = (gcs_model_mva)mva;
        gcs_model_result r;
        assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), 0);
        assert_close(r.time_ns, 1e6 + 2e3 + 5e3 * 100, 1e-12);
        assert_close(r.speedup, 1, 1e-12);
        assert_true(r.steals == 0);
    }
    gcs_profile_free(p);
}

/* P = 2, Tc = 100, Q = 10, M1 = 10, S = 5 (hand-computed):
 * open:   rho = 1/2 * 50 / T, T = 150 + 625 / (T - 25) -> T^2 - 175 T + 3125 = 0
 * closed: Z = 20, delay 5; n=1: R=5, X=1/30, Q=1/6; n=2: R=35/6 -> M = 65/6,
 *         T = 100 + 10 * 65/6 / 2 */
static void test_hand_computed_two_workers(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(2, 10, 5);
    gcs_model_heap h = heap_of(180, 10, 10, 0);
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_close(r.time_ns, (175 + sqrt(175.0 * 175 - 4 * 3125)) / 2, 1e-9);
    assert_string_equal(r.solver, "newton");
    assert_true(r.iterations > 0 && r.iterations < 20);
    assert_close(r.time_no_contention_ns, 100 + 10 * 10 / 2.0, 1e-12);

    o.mva = GCS_MODEL_MVA_CLOSED;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_close(r.time_ns, 100 + 10 * (65.0 / 6) / 2, 1e-12);
    gcs_profile_free(p);
}

/* Overlapped misses (opts.overlap = F): M1 = 100, S = 10, Q1 = 1000 reads
 * of which 200 are streamed, T1 = 1e5, Tinf = 10, L = 0, F = 4.
 * P = 1: T1 + Tinf + 800 * 100 / 4 + 200 * 10 = 122010 (F = 1: 182010).
 * P = 2: Tc = 50010, per request 0.8 * 100/4 + 0.2 * 10 = 22 idle and 0.4 of
 * W = 10 rho / (1 - rho), rho = 5000 / T:
 *   T = 50010 + 1000 (22 + 0.4 * 50000 / (T - 5000)) / 2
 *   -> T^2 - 66010 T + 295050000 = 0 */
static void test_overlapped_misses(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(2, 100, 10);
    gcs_model_heap h = heap_of(1e5, 10, 1000, 0);
    h.q1_prefetched[GCS_ACCESS_READ] = 200;
    gcs_model_opts o;
    paper_opts_init(&o);
    assert_true(o.overlap == 1);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), 0);
    assert_close(r.time_ns, 182010, 1e-12);
    o.overlap = 4;
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), 0);
    assert_close(r.time_ns, 122010, 1e-12);
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_close(r.time_ns, (66010 + sqrt(66010.0 * 66010 - 4 * 295050000.0)) / 2, 1e-9);
    /* the stack still adds up to P */
    assert_close(r.speedup + r.lost_span + r.lost_extra_misses + r.lost_contention, 2, 1e-9);

    /* below 1, and with the closed model: refused */
    o.overlap = 0.5;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "overlap"));
    o.overlap = 4;
    o.mva = GCS_MODEL_MVA_CLOSED;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "open model"));

    /* the profile's fit, when there is one */
    paper_opts_init(&o);
    assert_int_equal(gcs_model_opts_fitted_overlap(&o, p, &err), -1);
    assert_non_null(strstr(err.msg, "gc_miss_overlap"));
    p->has_gc_overlap = 1;
    p->gc_miss_overlap = 7.5;
    assert_int_equal(gcs_model_opts_fitted_overlap(&o, p, &err), 0);
    assert_true(o.overlap == 7.5);
    gcs_profile_free(p);
}

static void test_zero_occupancy_needs_no_solver(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(8, 100, 0);
    gcs_model_heap h = heap_of(1e6, 1e3, 1e4, 10);
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 8, &o, &r, &err), 0);
    assert_string_equal(r.solver, "none");
    assert_close(r.time_ns, r.time_no_contention_ns, 1e-12);
    assert_close(r.time_ns, 1e6 / 8 + 1e3 + r.q_p * 100 / 8, 1e-12);
    gcs_profile_free(p);
}

/* Near saturation the root sits just above the saturation bound and still
 * satisfies the equation. */
static void test_near_saturation(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(64, 300, 290);
    gcs_model_heap h = heap_of(1e5, 0, 1e6, 0); /* memory bound: misses dominate */
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 64, &o, &r, &err), 0);
    double t_min = 63.0 / 64 * 290 * 1e6;
    assert_true(r.time_ns > t_min);
    assert_true(r.rho[0] < 1 && r.rho[0] > 0.9);
    double rho = 63.0 / 64 * 290 * 1e6 / r.time_ns;
    double rhs = 1e5 / 64 + 1e6 * (300 + 290 * rho / (1 - rho)) / 64;
    assert_close(r.time_ns, rhs, 1e-8);
    /* Saturated: more workers cannot beat the node's service rate. */
    assert_true(r.speedup < (1e5 + 1e6 * 300) / (290 * 1e6) * 1.01);
    gcs_profile_free(p);
}

static void test_stack_adds_up_to_p(void **state)
{
    (void)state;
    gcs_profile *p = load_profile("data/machines/o2k.json");
    gcs_model_heap h = heap_of(5e8, 2e6, 4e6, 300);
    h.nnodes = 32;
    for (int j = 0; j < 32; j++)
        h.v[j] = 1.0 / 32;
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    for (int P = 1; P <= 64; P *= 2) {
        gcs_model_result r;
        assert_int_equal(gcs_model_predict(p, &h, P, &o, &r, &err), 0);
        double sum = r.speedup + r.lost_span + r.lost_extra_misses + r.lost_contention;
        assert_close(sum, P, 1e-9);
        assert_true(r.lost_extra_misses >= 0 && r.lost_contention >= 0);
        /* The ablations can only be faster than the full prediction. */
        assert_true(r.speedup_no_contention >= r.speedup * (1 - 1e-12));
        assert_true(r.speedup_no_extra_misses >= r.speedup * (1 - 1e-12));
    }
    gcs_profile_free(p);
}

/* GCS_MODEL_SPAN_CRITICAL: Brent's bound plus the span's own misses.  P = 1
 * costs T1 + Q1 M1 (no Tinf on top); a heap that is all span (a list) gets
 * no speedup at any P; a heap with no span gets the paper's compute part;
 * the stack still adds up to P. */
static void test_critical_span(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(8, 100, 0);
    gcs_model_opts o;
    paper_opts_init(&o);
    o.span = GCS_MODEL_SPAN_CRITICAL;
    gcs_err err;
    gcs_model_result r;
    gcs_model_heap list = heap_of(1e6, 1e6, 1e4, 10);
    assert_int_equal(gcs_model_predict(p, &list, 1, &o, &r, &err), 0);
    assert_close(r.time_ns, 1e6 + 1e4 * 100, 1e-12);
    for (int P = 2; P <= 8; P *= 2) {
        /* no extra misses so that only the span matters */
        list.live_lines_avg = 0;
        assert_int_equal(gcs_model_predict(p, &list, P, &o, &r, &err), 0);
        assert_close(r.speedup, 1, 1e-9);
        assert_close(r.speedup + r.lost_span + r.lost_extra_misses + r.lost_contention, P, 1e-9);
    }
    gcs_model_heap bushy = heap_of(1e6, 0, 1e4, 0);
    assert_int_equal(gcs_model_predict(p, &bushy, 4, &o, &r, &err), 0);
    assert_close(r.time_ns, 1e6 / 4 + 1e4 * 100 / 4, 1e-12);
    /* half the work on the span: T = T1/2/P + T1/2 + (Q1/2/P + Q1/2) M1 */
    gcs_model_heap half = heap_of(1e6, 5e5, 1e4, 0);
    assert_int_equal(gcs_model_predict(p, &half, 4, &o, &r, &err), 0);
    assert_close(r.time_ns, 5e5 / 4 + 5e5 + (5e3 / 4 + 5e3) * 100, 1e-12);
    /* with contention and extra misses the parts still add to P */
    gcs_profile *o2k = load_profile("data/machines/o2k.json");
    gcs_model_heap h = heap_of(5e8, 5e7, 4e6, 300);
    h.nnodes = 32;
    for (int j = 0; j < 32; j++)
        h.v[j] = 1.0 / 32;
    for (int P = 1; P <= 64; P *= 2) {
        assert_int_equal(gcs_model_predict(o2k, &h, P, &o, &r, &err), 0);
        assert_close(r.speedup + r.lost_span + r.lost_extra_misses + r.lost_contention, P, 1e-9);
        assert_true(r.lost_contention >= 0 && r.lost_extra_misses >= 0);
    }
    gcs_profile_free(o2k);
    gcs_profile_free(p);
}

/* Model v2, with Brent's span: a request queues behind the traffic of the others
 * only, 1 - share of it (contention.c).  A chain (Tinf = T1: every miss on
 * the critical path, one worker busy) meets no queue at any P, however busy
 * the node: M_P = M1.  Half the misses on the span at P = 2, by hand:
 * share = 1/2 + 1/4 = 3/4, Tc = 75, Q = 10 (M1 = 10, S = 5, no extra
 * misses): rho = 1/4 * 50 / T, T = 75 + 10 (10 + 5 rho / (1 - rho)) 3/4
 * -> T^2 - 162.5 T + 1406.25 = 0.  (The base model's (P-1)/P gives rho = 25 / T.) */
static void test_contention_behind_others_only(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(16, 100, 60);
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    gcs_model_heap chain = heap_of(1e6, 1e6, 1e4, 0);
    /* the base model keeps (P-1)/P: the chain queues behind idle workers */
    assert_int_equal(gcs_model_predict(p, &chain, 4, &o, &r, &err), 0);
    assert_true(r.lost_contention > 0 && r.time_ns > 1e6 + 1e4 * 100);
    o.parallelism_bound = 1; /* model v2 */
    for (int P = 2; P <= 16; P *= 2) {
        assert_int_equal(gcs_model_predict(p, &chain, P, &o, &r, &err), 0);
        assert_true(r.lost_contention == 0);
        assert_close(r.time_ns, 1e6 + 1e4 * 100, 1e-12);
        assert_true(r.rho[0] == 0);
    }
    gcs_profile *q = one_node_profile(2, 10, 5);
    gcs_model_heap half = heap_of(100, 50, 10, 0);
    assert_int_equal(gcs_model_predict(q, &half, 2, &o, &r, &err), 0);
    assert_close(r.time_ns, (162.5 + sqrt(162.5 * 162.5 - 4 * 1406.25)) / 2, 1e-9);
    assert_true(r.lost_contention > 0);
    gcs_profile_free(q);
    gcs_profile_free(p);
}

/* Model v2 bounds the extra misses of stealing by the serial mark's private
 * hits that other workers now make, private_hits (P-1)/P: P = 4, N_S = 4
 * ln(1e6) steals of L = 500 lines would be 27 631 misses; with 6 000
 * private hits at most 4 500.  The base model, or a heap whose hits were
 * not counted (the fast predictor), keeps N_S L. */
static void test_extra_misses_bounded_by_reuses(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(4, 100, 0);
    gcs_model_heap h = heap_of(1e6, 0, 1e4, 500);
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    double ns = 4 * log(1e6);
    h.private_hits = 6000;
    assert_int_equal(gcs_model_predict(p, &h, 4, &o, &r, &err), 0);
    assert_close(r.q_p, 1e4 + ns * 500, 1e-12);
    o.reuse_bound = 1;
    assert_int_equal(gcs_model_predict(p, &h, 4, &o, &r, &err), 0);
    assert_close(r.q_p, 1e4 + 6000 * 0.75, 1e-12);
    assert_close(r.speedup + r.lost_span + r.lost_extra_misses + r.lost_contention, 4, 1e-9);
    h.private_hits = 1e9; /* not binding: N_S L */
    assert_int_equal(gcs_model_predict(p, &h, 4, &o, &r, &err), 0);
    assert_close(r.q_p, 1e4 + ns * 500, 1e-12);
    h.private_hits = 0; /* not counted */
    assert_int_equal(gcs_model_predict(p, &h, 4, &o, &r, &err), 0);
    assert_close(r.q_p, 1e4 + ns * 500, 1e-12);
    gcs_profile_free(p);
}

/* Each lost part of the stack is P times the time it adds per worker, over
 * T (model-notes 1.4), by hand.  No contention (S_O = 0).  The extra misses
 * from stealing cost a full M1 each although most serial misses here are
 * prefetched (and cost S_O = 0): priced at the mean miss cost they came out
 * too small and the rest showed up as span loss on a heap without span.
 * P = 2, paper span: N_S = 2 ln(1e6), T = T1/2 + (1e3 + N_S L) 100 / 2.
 * P = 4, critical span, Tinf = T1/2, no prefetch: the span part is
 * 3 (Tinf + Q1/2 M1) / T, the extra misses N_S L M1 / T. */
static void test_stack_parts_by_hand(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(4, 100, 0);
    gcs_model_heap h = heap_of(1e6, 0, 1e4, 500);
    h.q1_prefetched[GCS_ACCESS_READ] = 9e3;
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    double extra = 2 * log(1e6) * 500;
    double t = 5e5 + (1e3 + extra) * 100 / 2;
    assert_close(r.time_ns, t, 1e-12);
    assert_close(r.speedup, (1e6 + 1e3 * 100) / t, 1e-12);
    assert_close(r.lost_extra_misses, extra * 100 / t, 1e-9);
    assert_true(r.lost_span == 0 && r.lost_contention == 0);

    o.span = GCS_MODEL_SPAN_CRITICAL;
    gcs_model_heap half = heap_of(1e6, 5e5, 1e4, 500);
    assert_int_equal(gcs_model_predict(p, &half, 4, &o, &r, &err), 0);
    extra = 4 * log(1e6) * 500;
    t = 5e5 / 4 + 5e5 + ((5e3 + extra) / 4 + 5e3) * 100;
    assert_close(r.time_ns, t, 1e-12);
    assert_close(r.lost_extra_misses, extra * 100 / t, 1e-9);
    assert_close(r.lost_span, 3 * (5e5 + 5e3 * 100) / t, 1e-9);
    assert_true(r.lost_contention == 0);

    /* P = 1: every lost part exactly 0, not a rounding residue */
    o.span = GCS_MODEL_SPAN_PAPER;
    gcs_profile *q = one_node_profile(4, 113, 37);
    for (int mva = 0; mva < 2; mva++) {
        o.mva = (gcs_model_mva)mva;
        assert_int_equal(gcs_model_predict(q, &h, 1, &o, &r, &err), 0);
        assert_true(r.lost_span == 0 && r.lost_extra_misses == 0 && r.lost_contention == 0);
    }
    gcs_profile_free(q);
    gcs_profile_free(p);
}

/* Prefetched misses cost S_O instead of M1: one worker, no queueing. */
static void test_prefetched_misses(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(4, 100, 10);
    gcs_model_heap h = heap_of(1e6, 0, 1e4, 0);
    h.q1_prefetched[GCS_ACCESS_READ] = 6e3;
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), 0);
    assert_close(r.time_ns, 1e6 + 4e3 * 100 + 6e3 * 10, 1e-12);
    h.q1_prefetched[GCS_ACCESS_READ] = 2e4; /* more than Q1: refused */
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), -1);
    gcs_profile_free(p);
}

/* The paper's Figure 3 in shape: a heap on one node saturates on O2K, the
 * same heap spread evenly scales much further; on E10K (crossbar, memory
 * interleaved) it scales. */
static void test_skewed_heap_saturates_on_o2k(void **state)
{
    (void)state;
    gcs_profile *o2k = load_profile("data/machines/o2k.json");
    gcs_model_heap skew = heap_of(4e8, 1e6, 3e6, 200), spread = skew;
    skew.nnodes = spread.nnodes = 32;
    memset(skew.v, 0, sizeof skew.v);
    skew.v[0] = 1;
    for (int j = 0; j < 32; j++)
        spread.v[j] = 1.0 / 32;
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result rs, rp;
    assert_int_equal(gcs_model_predict(o2k, &skew, 48, &o, &rs, &err), 0);
    assert_int_equal(gcs_model_predict(o2k, &spread, 48, &o, &rp, &err), 0);
    assert_true(rs.speedup < 12);
    assert_true(rp.speedup > 2 * rs.speedup);
    assert_true(rs.rho[0] > 0.8);
    /* Contention explains the gap: without it the skewed heap would scale
     * (the paper's Pred(M_P = M1) for BH on O2K was off by +260%). */
    assert_true(rs.speedup_no_contention > 2 * rs.speedup);
    assert_true(rp.speedup_no_contention < 1.5 * rp.speedup);
    gcs_profile_free(o2k);
}

/* The closed network has a pure delay M1 - S_O per visit: a node whose
 * occupancy exceeds its latency is refused (P = 1 would cost S_O per miss),
 * the open model still reduces to T1 + Tinf + Q1 M1. */
static void test_closed_needs_occupancy_below_latency(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(4, 100, 200);
    gcs_model_heap h = heap_of(1e5, 1e3, 1e3, 10);
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), 0);
    assert_close(r.time_ns, 1e5 + 1e3 + 1e3 * 100, 1e-12);
    o.mva = GCS_MODEL_MVA_CLOSED;
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "occupancy <= latency"));
    p->occupancy_ns[GCS_ACCESS_READ][0] = 100; /* equal is a delay of 0: fine */
    assert_int_equal(gcs_model_predict(p, &h, 1, &o, &r, &err), 0);
    assert_close(r.time_ns, 1e5 + 1e3 + 1e3 * 100, 1e-12);
    gcs_profile_free(p);
}

static void test_node_without_requests(void **state)
{
    (void)state;
    gcs_profile *e10k = load_profile("data/machines/e10k.json");
    gcs_model_heap h = heap_of(1e8, 1e5, 1e6, 100);
    h.nnodes = 16;
    memset(h.v, 0, sizeof h.v);
    h.v[3] = 0.5;
    h.v[7] = 0.5;
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(e10k, &h, 32, &o, &r, &err), 0);
    assert_true(r.rho[0] == 0 && r.wait_ns[0] == 0);
    assert_true(r.rho[3] > 0 && fabs(r.rho[3] - r.rho[7]) < 1e-12);
    assert_true(isfinite(r.time_ns));
    gcs_profile_free(e10k);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(2, 100, 10);
    gcs_model_opts o;
    paper_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    gcs_model_heap h = heap_of(1e6, 0, 10, 0);
    assert_int_equal(gcs_model_predict(p, &h, 0, &o, &r, &err), -1);
    h.v[0] = 0.5;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "add up"));
    h = heap_of(1e6, 0, 10, 0);
    h.nnodes = 2;
    h.v[0] = h.v[1] = 0.5;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "profile has 1"));
    h = heap_of(NAN, 0, 10, 0);
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), -1);
    gcs_profile_free(p);
}

static void test_recommend_smallest_within_tolerance(void **state)
{
    (void)state;
    gcs_model_result r[4];
    memset(r, 0, sizeof r);
    double times[] = {100, 60, 50, 49};
    for (int i = 0; i < 4; i++) {
        r[i].threads = i + 1;
        r[i].time_ns = times[i];
    }
    assert_int_equal(gcs_model_recommend(r, 4, 0.05), 3);
    assert_int_equal(gcs_model_recommend(r, 4, 0.0), 4);
    assert_int_equal(gcs_model_recommend(r, 4, 1.5), 1);
}

/* ---- coordination (model/coord.c) ---- */

/* R roots round-robin to P workers, holders doubling each round: hand counts. */
static void test_coord_spread_rounds(void **state)
{
    (void)state;
    assert_close(gcs_model_coord_spread_rounds(1, 1), 0, 0);
    assert_close(gcs_model_coord_spread_rounds(1, 2), 0.5, 1e-12);   /* one waits 1 round */
    assert_close(gcs_model_coord_spread_rounds(1, 4), 1.25, 1e-12);  /* 1 x 1 + 2 x 2 = 5, over 4 */
    assert_close(gcs_model_coord_spread_rounds(3, 8), 7.0 / 8, 1e-12); /* 3 x 1 + 2 x 2 */
    assert_close(gcs_model_coord_spread_rounds(0, 2), 0.5, 1e-12);   /* unknown: one root */
    assert_close(gcs_model_coord_spread_rounds(7, 4), 0, 0);         /* every worker has a root */
    assert_close(gcs_model_coord_spread_rounds(1, 16), (1 + 2 * 2 + 3 * 4 + 4 * 8) / 16.0, 1e-12);
}

static gcs_profile_coord coord_law(void)
{
    gcs_profile_coord c = {.wake_a = 10, .wake_b = 2, .tail_a = 5, .tail_b = 3, .idle_a = 7, .idle_b = 1,
                           .spread_ns = 100, .attempt_ns = 20, .max_threads = 2};
    return c;
}

static void test_coord_terms_by_hand(void **state)
{
    (void)state;
    gcs_profile_coord c = coord_law();
    gcs_model_coord t;
    gcs_model_coord_terms(&c, 1, 4, 40, &t);
    assert_close(t.wake_ns, 10 + 2 * 3, 1e-12);
    assert_close(t.tail_ns, 5 + 3 * 2, 1e-12);
    assert_close(t.idle_ns, 7 + 1 * 2, 1e-12);
    assert_close(t.spread_ns, 1.25 * 100, 1e-12);
    assert_close(t.steal_ns, 40 * 20 / 4.0, 1e-12);
    assert_close(t.search_ns, 9 + 125 + 200, 1e-12);
    /* one worker: no search at all, its wake and tail still */
    gcs_model_coord_terms(&c, 1, 1, 0, &t);
    assert_close(t.wake_ns, 10, 1e-12);
    assert_close(t.tail_ns, 5, 1e-12);
    assert_close(t.search_ns, 0, 0);
    /* Falling laws, as a 2-vCPU VM measures them (a lone worker's wake and
     * tail are the longest): the law where it is positive, 0 beyond, the
     * clamp on the law's value and not on a coefficient. */
    c.wake_b = -4;
    c.tail_b = -4;
    c.idle_a = -3;
    c.idle_b = 2;
    gcs_model_coord_terms(&c, 1, 2, 0, &t);
    assert_close(t.wake_ns, 6, 1e-12);
    assert_close(t.tail_ns, 1, 1e-12);
    assert_close(t.idle_ns, 0, 0); /* -3 + 2 */
    gcs_model_coord_terms(&c, 1, 8, 0, &t);
    assert_close(t.wake_ns, 0, 0);
    assert_close(t.tail_ns, 0, 0);
    assert_close(t.idle_ns, 3, 1e-12); /* -3 + 2 x 3, not 2 x 3 */
    assert_close(t.search_ns, t.spread_ns + t.idle_ns, 1e-12);
}

/* A heap without misses, Brent's span: T_P = (T1 - Tinf)/P + Tinf + wake +
 * search + tail, the speedup against T1 + wake(1) + tail(1), and the stack's
 * coordination parts P x term / T, adding up to P with the rest. */
static void test_coord_in_prediction(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(4, 100, 10);
    gcs_model_heap h = heap_of(1e6, 1e5, 0, 0);
    h.roots = 1;
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_int_equal(r.coord, 0); /* no gc_coord in the profile: terms off */
    assert_close(r.time_ns, (1e6 - 1e5) / 2 + 1e5, 1e-12);
    assert_close(r.lost_wake + r.lost_search + r.lost_tail, 0, 0);

    p->has_gc_coord = 1;
    p->coord = coord_law();
    double ns = 2 * log(1e6); /* the paper's steal count, P ln T1 */
    double wake = 12, tail = 5 + 3, search = 7 + 1 + 0.5 * 100 + ns * 20 / 2;
    double busy = (1e6 - 1e5) / 2 + 1e5, t = busy + wake + search + tail;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_int_equal(r.coord, 1);
    assert_close(r.time_ns, t, 1e-12);
    assert_close(r.speedup, (1e6 + 10 + 5) / t, 1e-12);
    assert_close(r.lost_wake, 2 * wake / t, 1e-12);
    assert_close(r.lost_search, 2 * search / t, 1e-12);
    assert_close(r.lost_tail, 2 * tail / t, 1e-12);
    assert_close(r.time_no_coord_ns, busy, 1e-12);
    for (int P = 1; P <= 8; P++) {
        assert_int_equal(gcs_model_predict(p, &h, P, &o, &r, &err), 0);
        assert_close(r.speedup + r.lost_span + r.lost_extra_misses + r.lost_contention + r.lost_wake +
                         r.lost_search + r.lost_tail, P, 1e-9);
        assert_true(r.speedup_no_coord >= r.speedup * (1 - 1e-12) || P == 1);
    }
    /* the ablation: opts.coord = 0 is the model without the terms */
    o.coord = 0;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_close(r.time_ns, busy, 1e-12);
    /* the collector's fitted steal count replaces N_S in the search term */
    o.coord = 1;
    p->has_gc_steals = 1;
    p->gc_steal_a = 2;
    p->gc_steal_b = 0;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_close(r.coord_terms.steal_ns, 2 * log(1e6) * 20 / 2, 1e-12);
    /* ... for every thief in the base model, for at most T1/Tinf - 1 of
     * them in v2: 7 of 7 with a parallelism of 10, 1.5 of 7 with 2.5, none
     * on a chain (a list is never stolen from) */
    gcs_model_heap chain = heap_of(1e6, 1e6, 0, 0);
    chain.roots = 1;
    assert_int_equal(gcs_model_predict(p, &chain, 8, &o, &r, &err), 0);
    assert_close(r.coord_terms.steal_ns, 7 * 2 * log(1e6) * 20 / 8, 1e-12);
    o.parallelism_bound = 1;
    assert_int_equal(gcs_model_predict(p, &h, 8, &o, &r, &err), 0);
    assert_close(r.coord_terms.steal_ns, 7 * 2 * log(1e6) * 20 / 8, 1e-12);
    gcs_model_heap narrow = heap_of(1e6, 4e5, 0, 0);
    narrow.roots = 1;
    assert_int_equal(gcs_model_predict(p, &narrow, 8, &o, &r, &err), 0);
    assert_close(r.coord_terms.steal_ns, 1.5 * 2 * log(1e6) * 20 / 8, 1e-12);
    assert_int_equal(gcs_model_predict(p, &chain, 8, &o, &r, &err), 0);
    assert_true(r.coord_terms.steal_ns == 0);
    gcs_profile_free(p);
}

/* Falling laws, as every 2-vCPU calibration finds them: a heap whose work
 * few workers can share waits for those workers' wake (a chain: worker 0's,
 * the law at P = 1), a bushy one for the law at P; the tail is the whole
 * team's at P either way.  In every model (the base one here, v2 below). */
static void test_coord_wake_of_sharing_workers(void **state)
{
    (void)state;
    gcs_profile *p = one_node_profile(4, 100, 10);
    p->has_gc_coord = 1;
    p->coord = coord_law();
    p->coord.wake_a = 50;
    p->coord.wake_b = -30;
    p->coord.tail_a = 40;
    p->coord.tail_b = -20;
    gcs_model_heap chain = heap_of(1e6, 1e6, 0, 0), bushy = heap_of(1e6, 1e3, 0, 0),
                   narrow = heap_of(1e6, 6e5, 0, 0);
    chain.roots = bushy.roots = narrow.roots = 1;
    gcs_model_opts o;
    gcs_model_opts_init(&o);
    gcs_err err;
    gcs_model_result r;
    assert_int_equal(gcs_model_predict(p, &chain, 2, &o, &r, &err), 0);
    assert_close(r.coord_terms.wake_ns, 50, 1e-12);
    assert_true(r.speedup <= 1);
    o.parallelism_bound = 1;
    assert_int_equal(gcs_model_predict(p, &chain, 2, &o, &r, &err), 0);
    assert_close(r.coord_terms.wake_ns, 50, 1e-12);
    assert_close(r.coord_terms.tail_ns, 20, 1e-12);
    assert_int_equal(gcs_model_predict(p, &narrow, 2, &o, &r, &err), 0);
    assert_close(r.coord_terms.wake_ns, 50 - 30 * (1e6 / 6e5 - 1), 1e-9);
    assert_int_equal(gcs_model_predict(p, &bushy, 2, &o, &r, &err), 0);
    assert_close(r.coord_terms.wake_ns, 20, 1e-12);
    assert_close(r.coord_terms.tail_ns, 20, 1e-12);
    for (int P = 1; P <= 8; P++) {
        assert_int_equal(gcs_model_predict(p, &chain, P, &o, &r, &err), 0);
        assert_true(r.coord_terms.wake_ns >= 0 && r.coord_terms.tail_ns >= 0);
        assert_close(r.speedup + r.lost_span + r.lost_extra_misses + r.lost_contention + r.lost_wake +
                         r.lost_search + r.lost_tail, P, 1e-9);
    }
    gcs_profile_free(p);
}

/* gc_coord survives the JSON round trip; a law's coefficient may be
 * negative (calibrate keeps the joint fit), a cost of its own may not, and
 * is refused by name. */
static void test_coord_profile_keys(void **state)
{
    (void)state;
    gcs_profile *p = load_profile("data/machines/o2k.json");
    p->has_gc_coord = 1;
    p->coord = coord_law();
    json_t *doc = gcs_profile_to_json(p);
    gcs_err err;
    gcs_profile *q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("%s", err.msg);
    assert_int_equal(q->has_gc_coord, 1);
    assert_memory_equal(&q->coord, &p->coord, sizeof p->coord);
    gcs_profile_free(q);
    json_object_set_new(json_object_get(json_object_get(doc, "gc_coord"), "tail_ns"), "b", json_real(-1));
    q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("%s", err.msg);
    assert_close(q->coord.tail_b, -1, 0);
    gcs_profile_free(q);
    json_object_set_new(json_object_get(json_object_get(doc, "gc_coord"), "tail_ns"), "b", json_real(-1e12));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_coord.tail_ns.b"));
    assert_non_null(strstr(err.msg, "-1e+12")); /* the value as the file has it */
    json_object_set_new(json_object_get(json_object_get(doc, "gc_coord"), "tail_ns"), "b", json_real(-1));
    json_object_set_new(json_object_get(doc, "gc_coord"), "spread_round_ns", json_real(-1));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_coord.spread_round_ns"));
    json_object_set_new(json_object_get(doc, "gc_coord"), "spread_round_ns", json_real(100));
    /* attempts per search (since 2026-11-29): absent is 0 and not written
     * back; a value is kept; one below a whole entry, or absurd, refused */
    q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("%s", err.msg);
    assert_true(q->coord.attempts_per_search == 0);
    json_t *back = gcs_profile_to_json(q);
    assert_null(json_object_get(json_object_get(back, "gc_coord"), "attempts_per_search"));
    json_decref(back);
    gcs_profile_free(q);
    json_object_set_new(json_object_get(doc, "gc_coord"), "attempts_per_search", json_real(6.25));
    q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("%s", err.msg);
    assert_true(q->coord.attempts_per_search == 6.25);
    back = gcs_profile_to_json(q);
    assert_true(json_real_value(json_object_get(json_object_get(back, "gc_coord"), "attempts_per_search")) == 6.25);
    json_decref(back);
    gcs_profile_free(q);
    const double bad[] = {0.5, -3, 1e6};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_object_set_new(json_object_get(doc, "gc_coord"), "attempts_per_search", json_real(bad[i]));
        assert_null(gcs_profile_from_json(doc, &err));
        assert_non_null(strstr(err.msg, "gc_coord.attempts_per_search"));
    }
    json_object_set_new(json_object_get(doc, "gc_coord"), "attempts_per_search", json_string("six"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_coord.attempts_per_search"));
    json_decref(doc);
    gcs_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_span_is_brent),
        cmocka_unit_test(test_one_worker_reduces_to_serial_cost),
        cmocka_unit_test(test_hand_computed_two_workers),
        cmocka_unit_test(test_zero_occupancy_needs_no_solver),
        cmocka_unit_test(test_near_saturation),
        cmocka_unit_test(test_stack_adds_up_to_p),
        cmocka_unit_test(test_critical_span),
        cmocka_unit_test(test_contention_behind_others_only),
        cmocka_unit_test(test_extra_misses_bounded_by_reuses),
        cmocka_unit_test(test_stack_parts_by_hand),
        cmocka_unit_test(test_closed_needs_occupancy_below_latency),
        cmocka_unit_test(test_prefetched_misses),
        cmocka_unit_test(test_overlapped_misses),
        cmocka_unit_test(test_skewed_heap_saturates_on_o2k),
        cmocka_unit_test(test_node_without_requests),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_recommend_smallest_within_tolerance),
        cmocka_unit_test(test_coord_spread_rounds),
        cmocka_unit_test(test_coord_terms_by_hand),
        cmocka_unit_test(test_coord_in_prediction),
        cmocka_unit_test(test_coord_wake_of_sharing_workers),
        cmocka_unit_test(test_coord_profile_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
