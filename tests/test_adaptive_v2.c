/* test_adaptive_v2.c -- the adaptive policy's decisions over a sequence of
 * collections (issue 24): the online correction from what each collection
 * measured, exploration, hysteresis (grow at once, shrink halfway), the two
 * objectives, the per-collection cost budget (reusing the curve), the
 * small-heap cap, and the fallbacks when the policy cannot decide.  The
 * collections are simulated: a "true machine" gives the mark time at each
 * P, and the statistics are built as the collector would report them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/adaptive.h"
#include "../adaptive/adaptive_internal.h"
#include "gcscale/gc.h"

#define DEV_PROFILE "data/machines/dev-2core-kvm.json"

static gcs_profile *load(void)
{
    gcs_err err;
    gcs_profile *p = gcs_profile_load(DEV_PROFILE, &err);
    if (!p)
        fail_msg("%s: %s", DEV_PROFILE, err.msg);
    return p;
}

/* A true machine: mark time at P, the busy time each worker spends and
 * whether the heap is a chain (one worker busy, the others searching); the
 * sweep: one worker's time for it, shared evenly, plus a wake-up at P >= 2. */
typedef struct machine {
    double t[GCS_GC_MAX_THREADS + 1]; /* ns at P */
    double busy_total[GCS_GC_MAX_THREADS + 1];
    double wake_ns;                   /* each extra worker's wake-up, inside t */
    int chain;
    uint64_t objects;
    double sweep_work_ns, sweep_wake_ns;
    uint64_t pages;
    double jitter;                    /* each mark off by up to this share, by collection */
    uint64_t slow_after;              /* from this collection on (0: never) ... */
    double slow;                      /* ... every mark takes this factor longer (the host drifts) */
} machine;

static void sim_stats(gcs_gc_stats *st, const machine *m, uint64_t index, int p)
{
    memset(st, 0, sizeof *st);
    uint64_t n = m->objects;
    st->index = index;
    st->threads = p;
    st->live_objects = st->objects_marked = n;
    st->roots = 1;
    st->edges_examined = m->chain ? n : 2 * n;
    st->pointers_scanned = m->chain ? n : 2 * n;
    st->live_bytes = 32 * n;
    st->pages_in_use = st->live_bytes / GCS_GC_PAGE_BYTES + 1;
    st->nnodes = 1;
    st->node_live_bytes[0] = st->live_bytes;
    st->span = NAN;
    /* a fixed sequence in [-1, 1] */
    double off = m->jitter * ((double)((index * 7919) % 21) - 10) / 10;
    double drift = m->slow_after && index > m->slow_after ? m->slow : 1;
    st->mark_ns = (uint64_t)(m->t[p] * (1 + off) * drift);
    if (m->sweep_work_ns > 0)
        st->sweep_ns = (uint64_t)(m->sweep_work_ns / p + (p > 1 ? m->sweep_wake_ns : 0));
    st->pause_ns = st->mark_ns + st->sweep_ns + 200000;
    st->t1_ns = (uint64_t)m->busy_total[p];
    for (int i = 0; i < p; i++) {
        gcs_gc_worker_stats *w = &st->workers[i];
        if (m->chain) {
            w->busy_ns = i == 0 ? (uint64_t)m->busy_total[p] : 0;
            w->search_ns = i == 0 ? 0 : st->mark_ns;
        } else {
            w->busy_ns = (uint64_t)(m->busy_total[p] / p);
            w->wake_ns = i == 0 ? 0 : (uint64_t)m->wake_ns;
            double rest = m->t[p] - (double)w->busy_ns - (double)w->wake_ns;
            w->search_ns = rest > 0 ? (uint64_t)(rest / 2) : 0;
        }
        w->mark_ns = w->busy_ns + w->search_ns;
        if (m->sweep_work_ns > 0) {
            w->sweep_ns = (uint64_t)(m->sweep_work_ns / p);
            w->pages_swept = m->pages / (uint64_t)p;
        }
    }
}

typedef struct run_result {
    int at[GCS_GC_MAX_THREADS + 1];   /* collections at each P */
    int last[GCS_GC_MAX_THREADS + 1]; /* ... among the last `tail` */
    int explored;
    char notes[4][128];
} run_result;

/* Runs `count` collections of the machine under a fresh policy, every
 * decision made in the pause (the budget and the background predictor have
 * tests of their own). */
static run_result run(const machine *m, const gcs_adaptive_opts *o, int max, int count, int tail)
{
    gcs_gc_thread_policy pol;
    gcs_err err;
    gcs_adaptive_opts oo;
    if (o)
        oo = *o;
    else
        gcs_adaptive_opts_init(&oo);
    oo.background = 0;
    if (gcs_adaptive_policy_new(load(), &oo, &pol, &err) < 0)
        fail_msg("policy: %s", err.msg);
    run_result r;
    memset(&r, 0, sizeof r);
    gcs_gc_stats *st = malloc(sizeof *st);
    assert_non_null(st);
    int p = 0;
    for (int c = 1; c <= count; c++) {
        gcs_gc_decision d;
        memset(&d, 0, sizeof d);
        p = pol.choose(pol.state, c == 1 ? NULL : st, max, &d);
        assert_true(p >= 1 && p <= max);
        assert_non_null(d.note);
        assert_true(strstr(d.note, "fallback") == NULL);
        if (getenv("GCS_TEST_DEBUG"))
            fprintf(stderr, "# %d: P %d  %.0f %.0f  k %.3f d %.0f  %s\n", c, p, d.predicted_mark_ns[0],
                    d.npredicted > 1 ? d.predicted_mark_ns[1] : 0.0, d.inputs[9].value, d.inputs[10].value, d.note);
        r.at[p]++;
        if (c > count - tail)
            r.last[p]++;
        if (strstr(d.note, "exploring"))
            r.explored++;
        sim_stats(st, m, (uint64_t)c, p);
        /* The decisions, not their budget (test_budget, test_small_heap_cap):
         * statistics without a pause set none.  A budget of the simulated
         * pause (about 1 ms) measured against the decision's real cost made
         * test_sweep_decides fail under ThreadSanitizer on a loaded host. */
        st->pause_ns = 0;
    }
    free(st);
    pol.destroy(pol.state);
    return r;
}

static void test_parse_objective(void **state)
{
    (void)state;
    gcs_adaptive_opts o;
    gcs_err err;
    gcs_adaptive_opts_init(&o);
    assert_int_equal(o.objective, GCS_ADAPTIVE_OBJECTIVE_CPU);
    assert_int_equal(gcs_adaptive_parse_objective("pause", &o, &err), 0);
    assert_int_equal(o.objective, GCS_ADAPTIVE_OBJECTIVE_PAUSE);
    assert_int_equal(gcs_adaptive_parse_objective("cpu:0.1", &o, &err), 0);
    assert_int_equal(o.objective, GCS_ADAPTIVE_OBJECTIVE_CPU);
    assert_true(o.tolerance == 0.1);
    assert_int_equal(gcs_adaptive_parse_objective("cpu", &o, &err), 0);
    assert_true(o.tolerance == 0.05);
    assert_int_equal(gcs_adaptive_parse_objective("cpu:2", &o, &err), -1);
    assert_non_null(strstr(err.msg, "cpu:EPS"));
    assert_int_equal(gcs_adaptive_parse_objective("cpu:", &o, &err), -1);
    assert_int_equal(gcs_adaptive_parse_objective("fast", &o, &err), -1);
    assert_non_null(strstr(err.msg, "'pause'"));
}

/* A chain: P = 2 only adds coordination.  P = 1 in >= 90% of the
 * collections, and the neighbour is explored now and then. */
static void test_chain_runs_at_one(void **state)
{
    (void)state;
    machine m = {.chain = 1, .objects = 200000};
    m.t[1] = m.busy_total[1] = m.busy_total[2] = 8e6;
    m.t[2] = 8.8e6;
    run_result r = run(&m, NULL, 2, 100, 100);
    assert_true(r.at[1] >= 90);
    assert_true(r.explored >= 1); /* P = 2 measured again after 24 collections */
    assert_true(r.at[2] >= 2);
}

/* A bushy heap the model would give two workers, on a machine whose second
 * worker takes 3 ms to wake: the measured overhead turns the choice to 1. */
static void test_correction_from_wake(void **state)
{
    (void)state;
    machine m = {.objects = 200000, .wake_ns = 3e6};
    m.t[1] = m.busy_total[1] = 4e6;
    m.busy_total[2] = 4.2e6;
    m.t[2] = 2.1e6 + 3e6;
    run_result r = run(&m, NULL, 2, 60, 40);
    assert_true(r.last[1] >= 36);
    /* the same heap with a quick wake-up keeps two workers */
    m.wake_ns = 50000;
    m.t[2] = 2.1e6 + 50000;
    r = run(&m, NULL, 2, 60, 40);
    assert_true(r.last[2] >= 36);
}

/* A bushy heap that two workers mark in half the time with no extra work
 * (as bh, cube and cky do): before P = 1 has run, its busy time is what
 * P = 2 measured, not the model's work inflation carried down, so the
 * first collections do not try one worker (on the Zen 5 VM, 2026-11-29,
 * the base model's extra misses made P = 1 look 15 % faster than the P = 2
 * it had measured, where it was 1.9x slower). */
static void test_no_shrink_on_borrowed_busy(void **state)
{
    (void)state;
    machine m = {.objects = 200000, .wake_ns = 50000};
    m.t[1] = m.busy_total[1] = 8e6;
    m.t[2] = 4.15e6;
    m.busy_total[2] = 8.1e6;
    run_result r = run(&m, NULL, 2, 6, 6);
    assert_int_equal(r.at[1], 0);
}

/* The objectives: P = 2 is 3% faster than P = 1 but costs twice the CPU. */
static void test_objectives(void **state)
{
    (void)state;
    machine m = {.objects = 200000, .wake_ns = 100000};
    m.t[1] = m.busy_total[1] = 10e6;
    m.t[2] = 9.7e6;
    m.busy_total[2] = 19e6;
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o); /* cpu:0.05 */
    run_result r = run(&m, &o, 2, 60, 30);
    assert_true(r.last[1] >= 27);
    o.objective = GCS_ADAPTIVE_OBJECTIVE_PAUSE;
    r = run(&m, &o, 2, 60, 30);
    assert_true(r.last[2] >= 27);
    /* cpu with a 1% epsilon: 3% is worth the CPU */
    o.objective = GCS_ADAPTIVE_OBJECTIVE_CPU;
    o.tolerance = 0.01;
    r = run(&m, &o, 2, 60, 30);
    assert_true(r.last[2] >= 27);
}

static void chain_stats(gcs_gc_stats *st, uint64_t index, int p)
{
    machine m = {.chain = 1, .objects = 400000};
    for (int q = 1; q <= GCS_GC_MAX_THREADS; q++)
        m.t[q] = m.busy_total[q] = 16e6;
    sim_stats(st, &m, index, p);
    st->mark_ns = 0; /* no correction: the model's choice alone */
    st->pause_ns = 50000000;
}

static void bushy_stats(gcs_gc_stats *st, uint64_t index, int p)
{
    memset(st, 0, sizeof *st);
    st->index = index;
    st->threads = p;
    st->live_objects = st->objects_marked = 4000000;
    st->roots = 1000;
    st->edges_examined = st->pointers_scanned = 4000000;
    st->live_bytes = 128000000;
    st->pages_in_use = st->live_bytes / GCS_GC_PAGE_BYTES;
    st->nnodes = 1;
    st->node_live_bytes[0] = st->live_bytes;
    st->pause_ns = 50000000;
    st->span = 1; /* a computed span: tiny */
    st->compute_span = 1;
    st->span_cost_object = st->span_cost_pointer = 1;
    for (int i = 0; i < p; i++)
        st->workers[i].busy_ns = 1000000;
}

/* Hysteresis: from 16 workers to a chain's 1 halfway each collection
 * (16, 8, 4, 2, 1), back up at once. */
static void test_hysteresis(void **state)
{
    (void)state;
    gcs_profile *prof = load();
    /* a contention-free machine: the model gives a bushy heap every worker */
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        prof->occupancy_ns[a][0] = 0;
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o);
    o.explore_after = 0;
    o.min_thread_work_ns = 0;
    o.background = 0;
    o.cost_budget = 1;
    gcs_gc_thread_policy pol;
    gcs_err err;
    assert_int_equal(gcs_adaptive_policy_new(prof, &o, &pol, &err), 0);
    gcs_gc_stats *st = malloc(sizeof *st);
    gcs_gc_decision d;
    int p = 16;
    const int want[] = {8, 4, 2, 1, 1};
    for (int i = 0; i < 5; i++) {
        chain_stats(st, (uint64_t)i + 1, p);
        memset(&d, 0, sizeof d);
        p = pol.choose(pol.state, st, 16, &d);
        assert_int_equal(p, want[i]);
        assert_true(d.inputs[12].value == 1); /* the objective's P */
        if (i < 3)
            assert_non_null(strstr(d.note, "shrinking halfway"));
    }
    /* a bushy heap (the smoothed span share falls by half each time):
     * straight to what the objective says whenever it says more */
    int grew = 0;
    for (int i = 6; i < 12; i++) {
        bushy_stats(st, (uint64_t)i, p);
        memset(&d, 0, sizeof d);
        int last = p;
        p = pol.choose(pol.state, st, 16, &d);
        if (getenv("GCS_TEST_DEBUG"))
            fprintf(stderr, "# bushy %d: P %d wanted %g cap %g span %g %s\n", i, p, d.inputs[12].value, d.inputs[13].value, d.inputs[7].value, d.note);
        if (d.inputs[12].value >= last) {
            assert_int_equal(p, (int)d.inputs[12].value);
            assert_non_null(strstr(d.note, "the objective's P"));
            grew += p > last;
        }
    }
    assert_true(p > 8);
    assert_true(grew >= 1);
    free(st);
    pol.destroy(pol.state);
}

/* The cost budget, in the pause (background 0): a decision is made only
 * when what it is expected to cost fits cost_budget x the previous pause
 * (without the time to stop the world).  The first pauses are extremes, so
 * that what this machine's decisions cost does not matter: 1 us (nothing
 * fits), 100 s (everything does).  Between a decision on the last curve and
 * one with a new curve (27 predictions at MAX = 64) the pause is set from
 * what the policy expects the two to cost, measured: a fixed 20 ms failed in
 * CI (2026-11-28) where the warm-up's predictions ran fast enough that a new
 * curve fit its budget. */
static void test_budget(void **state)
{
    (void)state;
    gcs_gc_thread_policy pol;
    gcs_err err;
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o);
    o.explore_after = 0;
    o.min_thread_work_ns = 0;
    o.background = 0;
    assert_int_equal(gcs_adaptive_policy_new(load(), &o, &pol, &err), 0);
    gcs_gc_stats *st = malloc(sizeof *st);
    gcs_gc_decision d1, d2, d3;
    /* A 1 us pause before any curve: no decision, P as the collection ran. */
    bushy_stats(st, 1, 64);
    st->pause_ns = 1000;
    memset(&d1, 0, sizeof d1);
    assert_int_equal(pol.choose(pol.state, st, 64, &d1), 64);
    assert_non_null(strstr(d1.note, "no decision (it would exceed the cost budget)"));
    assert_int_equal(d1.npredicted, 0);
    /* The time to stop the world is the mutators': a 10 s pause of which
     * 10 s - 1 us was stopping is as short. */
    st->index = 2;
    st->pause_ns = 10000000000ull;
    st->stop_ns = st->pause_ns - 1000;
    memset(&d1, 0, sizeof d1);
    pol.choose(pol.state, st, 64, &d1);
    assert_non_null(strstr(d1.note, "no decision"));
    /* A 100 s pause: a new curve. */
    st->index = 3;
    st->pause_ns = 100000000000ull;
    st->stop_ns = 0;
    memset(&d1, 0, sizeof d1);
    pol.choose(pol.state, st, 64, &d1);
    assert_non_null(strstr(d1.note, "predicted;"));
    assert_int_equal(d1.npredicted, 64);
    assert_true(d1.inputs[14].value > 0); /* what it cost */
    /* Twice the objects after a pause whose budget fits a decision on the
     * last curve but not a new one (their geometric mean): the curve reused,
     * scaled by the T1 ratio. */
    double decide_ns, new_curve_ns;
    _gcs_adaptive_expected_costs(pol.state, 64, &decide_ns, &new_curve_ns);
    assert_true(decide_ns > 0 && new_curve_ns > decide_ns);
    bushy_stats(st, 4, 64);
    st->live_objects = st->objects_marked = 8000000;
    st->edges_examined = st->pointers_scanned = 8000000;
    st->pause_ns = (uint64_t)(sqrt(decide_ns * new_curve_ns) / o.cost_budget);
    memset(&d2, 0, sizeof d2);
    pol.choose(pol.state, st, 64, &d2);
    if (getenv("GCS_TEST_DEBUG"))
        fprintf(stderr, "# budget: %s (expected %.0f ns on the last curve, %.0f ns with a new one; last new curve %.0f ns)\n",
                d2.note, decide_ns, new_curve_ns, d2.inputs[14].value);
    assert_non_null(strstr(d2.note, "curve reused (a new prediction would exceed the cost budget)"));
    double ratio = d2.predicted_mark_ns[0] / d1.predicted_mark_ns[0];
    assert_true(fabs(ratio - d2.inputs[2].value / d1.inputs[2].value) < 1e-9);
    assert_true(ratio > 1.5);
    /* a long pause affords a new prediction again */
    st->index = 5;
    st->pause_ns = 100000000000ull;
    memset(&d3, 0, sizeof d3);
    pol.choose(pol.state, st, 64, &d3);
    assert_non_null(strstr(d3.note, "predicted;"));
    /* budget 0: no decision at all (P as last settled) */
    pol.destroy(pol.state);
    o.cost_budget = 0;
    assert_int_equal(gcs_adaptive_policy_new(load(), &o, &pol, &err), 0);
    for (int i = 1; i <= 3; i++) {
        bushy_stats(st, (uint64_t)i, 2);
        st->live_objects = st->objects_marked = 1000000 * (uint64_t)i;
        st->pause_ns = 10000000000ull;
        memset(&d1, 0, sizeof d1);
        assert_int_equal(pol.choose(pol.state, st, 2, &d1), 2);
        assert_non_null(strstr(d1.note, "no decision"));
    }
    pol.destroy(pol.state);
    free(st);
}

/* The decision thread: the first decision with statistics hands them over
 * and keeps P; from then on each decision is the one the thread made from
 * the statistics handed over before, the same decision (P, curve, note
 * apart from where it was made) that deciding in the pause on those
 * statistics gives; a decision is taken once, after which the P it
 * settled on is kept until a newer one comes. */
static void test_background(void **state)
{
    (void)state;
    gcs_gc_thread_policy bg, fg;
    gcs_err err;
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o);
    o.explore_after = 0;
    o.min_thread_work_ns = 0;
    assert_int_equal(gcs_adaptive_policy_new(load(), &o, &bg, &err), 0);
    o.background = 0;
    o.cost_budget = 1;
    assert_int_equal(gcs_adaptive_policy_new(load(), &o, &fg, &err), 0);
    gcs_gc_stats *st = malloc(sizeof *st);
    gcs_gc_decision db, df;
    bushy_stats(st, 1, 16);
    memset(&db, 0, sizeof db);
    assert_int_equal(bg.choose(bg.state, st, 16, &db), 16);
    assert_non_null(strstr(db.note, "no decision yet (being made outside the pause)"));
    assert_int_equal(db.npredicted, 0);
    memset(&df, 0, sizeof df);
    int pf = fg.choose(fg.state, st, 16, &df); /* what the thread is deciding */
    assert_int_equal(_gcs_adaptive_wait_background(bg.state, 10000), 0);
    for (uint64_t c = 2; c <= 5; c++) {
        /* a heap that doubles from the third collection on: a new curve */
        bushy_stats(st, c, pf);
        if (c >= 3) {
            st->live_objects = st->objects_marked = 8000000;
            st->edges_examined = st->pointers_scanned = 8000000;
        }
        memset(&db, 0, sizeof db);
        int pb = bg.choose(bg.state, st, 16, &db);
        if (getenv("GCS_TEST_DEBUG"))
            fprintf(stderr, "# bg %llu: %d %s | fg %d %s\n", (unsigned long long)c, pb, db.note, pf, df.note);
        assert_int_equal(pb, pf);
        assert_non_null(strstr(db.note, "decided outside the pause: "));
        assert_string_equal(strstr(db.note, ": ") + 2, df.note);
        assert_int_equal(db.npredicted, 16);
        for (int p = 1; p <= 16; p++)
            assert_true(fabs(db.predicted_mark_ns[p - 1] - df.predicted_mark_ns[p - 1]) <=
                        1e-9 * df.predicted_mark_ns[p - 1]);
        assert_int_equal(db.ninputs, df.ninputs);
        memset(&df, 0, sizeof df);
        pf = fg.choose(fg.state, st, 16, &df);
        assert_int_equal(_gcs_adaptive_wait_background(bg.state, 10000), 0);
    }
    /* taken once: the next decision waits for the thread (the statistics
     * it gets now are decided on meanwhile); the same statistics twice
     * without waiting may find it done, or keep P */
    memset(&db, 0, sizeof db);
    int taken = bg.choose(bg.state, st, 16, &db);
    memset(&db, 0, sizeof db);
    int again = bg.choose(bg.state, st, 16, &db);
    assert_true(strstr(db.note, "decided outside the pause") || strstr(db.note, "no newer decision"));
    if (strstr(db.note, "no newer decision"))
        assert_int_equal(again, taken);
    free(st);
    bg.destroy(bg.state); /* joins the thread */
    fg.destroy(fg.state);
}

/* A difference inside the measurements' own spread is no reason to pay for
 * more threads: a chain whose P = 2 is 6% faster on average (outside
 * cpu:0.05) runs at P = 2 when every collection measures the same, and at
 * P = 1 when each is off by up to 8%. */
static void test_noise(void **state)
{
    (void)state;
    machine m = {.chain = 1, .objects = 200000};
    m.t[1] = m.busy_total[1] = m.busy_total[2] = 10e6;
    m.t[2] = 9.4e6;
    run_result r = run(&m, NULL, 2, 60, 50);
    assert_true(r.last[2] >= 45);
    m.jitter = 0.08;
    r = run(&m, NULL, 2, 60, 50);
    if (getenv("GCS_TEST_DEBUG"))
        fprintf(stderr, "# noisy: %d at 1, %d at 2\n", r.last[1], r.last[2]);
    assert_true(r.last[1] >= 45);
}

/* No growth on old evidence: a chain equal at P = 1 and 2, whose host gets
 * 8% slower after collection 10.  P = 2, last measured in collection 1,
 * then looks 8% faster than P = 1 (outside cpu:0.05) -- but the policy
 * stays at P = 1 until exploration measures P = 2 again (24 collections
 * after it last ran). */
static void test_stale(void **state)
{
    (void)state;
    machine m = {.chain = 1, .objects = 200000, .slow_after = 10, .slow = 1.08};
    m.t[1] = m.t[2] = m.busy_total[1] = m.busy_total[2] = 10e6;
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o);
    o.background = 0;
    o.cost_budget = 1;
    gcs_gc_thread_policy pol;
    gcs_err err;
    assert_int_equal(gcs_adaptive_policy_new(load(), &o, &pol, &err), 0);
    gcs_gc_stats *st = malloc(sizeof *st);
    gcs_gc_decision d;
    int p = 0, held = 0;
    for (uint64_t c = 1; c <= 24; c++) {
        memset(&d, 0, sizeof d);
        p = pol.choose(pol.state, c == 1 ? NULL : st, 2, &d);
        if (getenv("GCS_TEST_DEBUG"))
            fprintf(stderr, "# stale %llu: P %d %s\n", (unsigned long long)c, p, d.note);
        if (c >= 3)
            assert_int_equal(p, 1);
        held += strstr(d.note, "not growing on old measurements") != NULL;
        sim_stats(st, &m, c, p);
    }
    assert_true(held >= 1);
    free(st);
    pol.destroy(pol.state);
}

/* A heap too small to share: the cap keeps one worker -- from the model's
 * corrected curve where the budget lets the policy decide, and from the
 * measured work where its 0.26 ms pause is too short to decide in. */
static void test_small_heap_cap(void **state)
{
    (void)state;
    machine m = {.objects = 2000, .wake_ns = 0};
    m.t[1] = m.busy_total[1] = m.busy_total[2] = 60000; /* 60 us */
    m.t[2] = 31000;
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o);
    run_result r = run(&m, &o, 2, 20, 15);
    assert_int_equal(r.last[1], 15);
    /* without the cap the faster P = 2 wins */
    o.min_thread_work_ns = 0;
    r = run(&m, &o, 2, 20, 15);
    assert_true(r.last[2] >= 13);
    /* the default budget: no decision in a 0.26 ms pause, the cap still */
    gcs_adaptive_opts_init(&o);
    o.background = 0;
    gcs_gc_thread_policy pol;
    gcs_err err;
    assert_int_equal(gcs_adaptive_policy_new(load(), &o, &pol, &err), 0);
    gcs_gc_stats *st = malloc(sizeof *st);
    gcs_gc_decision d;
    int p = 2;
    for (int c = 1; c <= 6; c++) {
        sim_stats(st, &m, (uint64_t)c, p);
        memset(&d, 0, sizeof d);
        p = pol.choose(pol.state, st, 2, &d);
        assert_int_equal(p, 1);
        assert_non_null(strstr(d.note, "no decision"));
    }
    assert_non_null(strstr(d.note, "P as last settled")); /* at 1 already */
    pol.destroy(pol.state);
    free(st);
}

/* The whole collection decides (the quiet run of 2026-11-27: a chain whose
 * mark gains nothing from a second worker but whose sweep, five times the
 * mark, halves): P = 2, although the mark alone says 1.  The same mark with
 * a sweep of 0.2 ms: P = 1. */
static void test_sweep_decides(void **state)
{
    (void)state;
    machine m = {.chain = 1, .objects = 200000, .sweep_work_ns = 5e6, .sweep_wake_ns = 60000, .pages = 420};
    m.t[1] = m.busy_total[1] = m.busy_total[2] = 1.0e6;
    m.t[2] = 1.1e6;
    run_result r = run(&m, NULL, 2, 60, 50);
    if (getenv("GCS_TEST_DEBUG"))
        fprintf(stderr, "# sweep 5 ms: %d at 1, %d at 2\n", r.last[1], r.last[2]);
    assert_true(r.last[2] >= 45);
    m.sweep_work_ns = 0.2e6;
    r = run(&m, NULL, 2, 60, 50);
    assert_true(r.last[1] >= 45);
}

/* The policy cannot decide: the stated fallback P, the reason in the note. */
static void test_fallbacks(void **state)
{
    (void)state;
    gcs_profile *prof = load();
    gcs_gc_thread_policy pol;
    gcs_err err;
    gcs_adaptive_opts fo;
    gcs_adaptive_opts_init(&fo);
    fo.background = 0;
    fo.cost_budget = 1;
    assert_int_equal(gcs_adaptive_policy_new(prof, &fo, &pol, &err), 0);
    gcs_gc_stats *st = malloc(sizeof *st);
    gcs_gc_decision d;
    /* the model rejects the inputs (a cost that is not a number) before
     * any choice: the pool */
    double keep = prof->gc_cost_object_ns;
    prof->gc_cost_object_ns = NAN;
    bushy_stats(st, 1, 2);
    memset(&d, 0, sizeof d);
    assert_int_equal(pol.choose(pol.state, st, 2, &d), 2);
    assert_non_null(strstr(d.note, "fallback: the model rejected the inputs; P = the pool"));
    assert_int_equal(d.npredicted, 0);
    /* a good decision, then failures keep its P */
    prof->gc_cost_object_ns = keep;
    chain_stats(st, 2, 2);
    memset(&d, 0, sizeof d);
    assert_int_equal(pol.choose(pol.state, st, 2, &d), 1);
    prof->gc_cost_object_ns = NAN;
    bushy_stats(st, 3, 1);
    memset(&d, 0, sizeof d);
    assert_int_equal(pol.choose(pol.state, st, 2, &d), 1);
    assert_non_null(strstr(d.note, "P = the last choice"));
    prof->gc_cost_object_ns = keep;
    /* no estimate (the profile lost its costs) */
    prof->has_gc_cost = 0;
    memset(&d, 0, sizeof d);
    assert_int_equal(pol.choose(pol.state, st, 2, &d), 1);
    assert_non_null(strstr(d.note, "fallback: no estimate"));
    prof->has_gc_cost = 1;
    /* a prediction that is not a number without an error */
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        prof->latency_ns[a][0] = NAN;
    memset(&d, 0, sizeof d);
    assert_int_equal(pol.choose(pol.state, st, 2, &d), 1);
    assert_non_null(strstr(d.note, "fallback"));
    free(st);
    pol.destroy(pol.state);
    /* bad options are refused at creation */
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o);
    o.cost_budget = NAN;
    assert_int_equal(gcs_adaptive_policy_new(load(), &o, &pol, &err), -1);
    assert_non_null(strstr(err.msg, "cost_budget"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_objective),  cmocka_unit_test(test_chain_runs_at_one),
        cmocka_unit_test(test_correction_from_wake), cmocka_unit_test(test_no_shrink_on_borrowed_busy),
        cmocka_unit_test(test_objectives),
        cmocka_unit_test(test_hysteresis),       cmocka_unit_test(test_budget),
        cmocka_unit_test(test_small_heap_cap),   cmocka_unit_test(test_fallbacks),
        cmocka_unit_test(test_background),       cmocka_unit_test(test_sweep_decides),
        cmocka_unit_test(test_noise),            cmocka_unit_test(test_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
