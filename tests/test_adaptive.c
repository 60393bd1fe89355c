/* test_adaptive.c -- adaptive/ and the collector's thread-policy hook and
 * re-mark API: thread specs, gcs_adaptive_configure and the environment,
 * the policy on hand-made statistics and profiles (o2k, e10k, this
 * machine's; a saturating one-node machine, a contention-free one), the
 * smallest-P-within-epsilon rule and the grid search beyond 16 threads, the
 * estimate of the model's inputs against heap inspection of a snapshot of
 * the same heap, real collections with adaptive:2 (statistics and log), and
 * gcs_gc_remark (from a callback, from an attached thread, with mutators
 * running) leaving the heap intact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/adaptive.h"
#include "../adaptive/adaptive_internal.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"
#include "gcscale/snapshot.h"

#define DEV_PROFILE "data/machines/dev-2core-kvm.json"

/* ---- specs ----------------------------------------------------------------- */

static void test_parse_spec(void **state)
{
    (void)state;
    gcs_adaptive_spec sp;
    gcs_err err;
    assert_int_equal(gcs_adaptive_parse_spec("4", &sp, &err), 0);
    assert_int_equal(sp.adaptive, 0);
    assert_int_equal(sp.threads, 4);
    assert_int_equal(gcs_adaptive_parse_spec("64", &sp, &err), 0);
    assert_int_equal(sp.threads, 64);
    assert_int_equal(gcs_adaptive_parse_spec("adaptive", &sp, &err), 0);
    assert_int_equal(sp.adaptive, 1);
    assert_int_equal(sp.max_threads, 0);
    assert_int_equal(gcs_adaptive_parse_spec("adaptive:3", &sp, &err), 0);
    assert_int_equal(sp.adaptive, 1);
    assert_int_equal(sp.max_threads, 3);
    const char *bad[] = {"0", "adaptive:0", "adaptive:x", "x", "", "65", "adaptive:", "adaptivex",
                         "4x", "-1", "adaptive:65", "adaptive:2:3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.msg[0] = 0;
        assert_int_equal(gcs_adaptive_parse_spec(bad[i], &sp, &err), -1);
        assert_non_null(strstr(err.msg, "adaptive:MAX"));
    }
}

static void test_configure(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_err err;
    unsetenv("GCSCALE_GC_THREADS");
    unsetenv("GCSCALE_MACHINE");

    /* "N": a count, no policy, the environment no longer consulted */
    gcs_gc_options_default(&o);
    assert_int_equal(gcs_adaptive_configure(&o, "3", NULL, &err), 0);
    assert_int_equal(o.threads, 3);
    assert_null(o.thread_policy.name);
    assert_int_equal(o.ignore_threads_env, 1);

    /* adaptive with an explicit profile */
    gcs_gc_options_default(&o);
    assert_int_equal(gcs_adaptive_configure(&o, "adaptive:3", DEV_PROFILE, &err), 0);
    assert_string_equal(o.thread_policy.name, "adaptive");
    assert_non_null(o.thread_policy.choose);
    assert_int_equal(o.max_threads, 3);
    assert_int_equal(o.threads, 3);
    gcs_adaptive_release(&o);
    assert_null(o.thread_policy.name);

    /* "adaptive": one worker per CPU */
    gcs_gc_options_default(&o);
    assert_int_equal(gcs_adaptive_configure(&o, "adaptive", DEV_PROFILE, &err), 0);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(o.max_threads, ncpu > 64 ? 64 : ncpu);
    gcs_adaptive_release(&o);

    /* missing or unusable profiles: the fallback (the pool) with one warning */
    gcs_gc_options_default(&o);
    assert_int_equal(gcs_adaptive_configure(&o, "adaptive:3", "/nonexistent/m.json", &err), 1);
    assert_non_null(strstr(err.msg, "/nonexistent/m.json"));
    assert_non_null(strstr(err.msg, "running with the pool (3)"));
    assert_string_equal(o.thread_policy.name, "adaptive");
    assert_int_equal(o.max_threads, 3);
    gcs_gc_decision fd;
    memset(&fd, 0, sizeof fd);
    assert_int_equal(o.thread_policy.choose(o.thread_policy.state, NULL, 3, &fd), 3);
    assert_non_null(strstr(fd.note, "fallback"));
    gcs_adaptive_release(&o);
    assert_int_equal(gcs_adaptive_configure(&o, "adaptive", "data/machines/o2k.json", &err), 1);
    assert_non_null(strstr(err.msg, "gc_cost_ns"));
    assert_string_equal(o.thread_policy.name, "adaptive");
    gcs_adaptive_release(&o);
    /* a malformed profile */
    char bad[] = "/tmp/test_adaptive_bad_XXXXXX";
    int bfd = mkstemp(bad);
    assert_true(bfd >= 0);
    assert_true(write(bfd, "{\"cpus\": [", 11) == 11);
    close(bfd);
    assert_int_equal(gcs_adaptive_configure(&o, "adaptive:2", bad, &err), 1);
    assert_non_null(strstr(err.msg, bad));
    gcs_adaptive_release(&o);
    unlink(bad);
    assert_null(o.thread_policy.name);

    /* no profile for this host: run from an empty directory */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char tmp[] = "/tmp/test_adaptive_XXXXXX";
    assert_non_null(mkdtemp(tmp));
    assert_int_equal(chdir(tmp), 0);
    assert_int_equal(gcs_adaptive_configure(&o, "adaptive", NULL, &err), 1);
    assert_non_null(strstr(err.msg, "gcscale calibrate"));
    assert_non_null(strstr(err.msg, "data/machines/"));
    gcs_adaptive_release(&o);
    /* ... but $GCSCALE_MACHINE names one */
    char prof[4200];
    snprintf(prof, sizeof prof, "%s/%s", cwd, DEV_PROFILE);
    setenv("GCSCALE_MACHINE", prof, 1);
    assert_int_equal(gcs_adaptive_configure(&o, "adaptive:2", NULL, &err), 0);
    gcs_adaptive_release(&o);
    unsetenv("GCSCALE_MACHINE");
    assert_int_equal(chdir(cwd), 0);
    rmdir(tmp);

    /* threads_spec NULL: the environment */
    gcs_gc_options_default(&o);
    assert_int_equal(gcs_adaptive_configure(&o, NULL, DEV_PROFILE, &err), 0);
    assert_null(o.thread_policy.name);
    assert_int_equal(o.ignore_threads_env, 0); /* unset: nothing decided */
    setenv("GCSCALE_GC_THREADS", "adaptive:2", 1);
    assert_int_equal(gcs_adaptive_configure(&o, NULL, DEV_PROFILE, &err), 0);
    assert_string_equal(o.thread_policy.name, "adaptive");
    assert_int_equal(o.max_threads, 2);
    gcs_adaptive_release(&o);
    setenv("GCSCALE_GC_THREADS", "x", 1);
    assert_int_equal(gcs_adaptive_configure(&o, NULL, DEV_PROFILE, &err), -1);
    assert_non_null(strstr(err.msg, "GCSCALE_GC_THREADS"));
    /* an explicit spec wins over the environment */
    assert_int_equal(gcs_adaptive_configure(&o, "2", NULL, &err), 0);
    assert_int_equal(o.threads, 2);

    /* plain gcs_gc_init refuses adaptive in the environment, names the way */
    setenv("GCSCALE_GC_THREADS", "adaptive", 1);
    gcs_gc_options_default(&o);
    o.heap_limit = 8u << 20;
    assert_int_equal(gcs_gc_init(&o, &err), -1);
    assert_non_null(strstr(err.msg, "gcs_adaptive_configure"));
    /* with the policy configured from the environment it works */
    assert_int_equal(gcs_adaptive_configure(&o, NULL, DEV_PROFILE, &err), 0);
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    assert_int_equal(gcs_gc_max_threads(), (int)(ncpu > 64 ? 64 : ncpu));
    gcs_gc_shutdown();
    /* a number in the environment still overrides plain options */
    setenv("GCSCALE_GC_THREADS", "3", 1);
    gcs_gc_options_default(&o);
    o.heap_limit = 8u << 20;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    assert_int_equal(gcs_gc_threads(), 3);
    assert_int_equal(gcs_gc_set_thread_policy_active(1), -1); /* no policy */
    gcs_gc_shutdown();
    unsetenv("GCSCALE_GC_THREADS");
}

/* ---- the policy on hand-made statistics ------------------------------------------ */

static gcs_profile *load_with_costs(const char *path)
{
    gcs_err err;
    gcs_profile *p = gcs_profile_load(path, &err);
    if (!p)
        fail_msg("%s: %s", path, err.msg);
    if (!p->has_gc_cost) { /* the paper's machines: no per-object costs given */
        p->has_gc_cost = 1;
        p->gc_cost_object_ns = 20;
        p->gc_cost_pointer_ns = 10;
    }
    return p;
}

/* Statistics of a collection: n objects, `edges` non-NULL pointers,
 * `bytes` live bytes on node 0 (or spread over nnodes), P workers whose
 * summed search time is span_share * busy * (P - 1). */
static void fake_stats(gcs_gc_stats *st, uint64_t n, uint64_t edges, uint64_t bytes, int nnodes, int p,
                       double span_share)
{
    memset(st, 0, sizeof *st);
    st->index = 5;
    st->threads = p;
    st->live_objects = st->objects_marked = n;
    st->roots = 10;
    st->edges_examined = edges + 10;
    st->pointers_scanned = edges + n / 2;
    st->live_bytes = bytes;
    st->pages_in_use = bytes / GCS_GC_PAGE_BYTES + 1;
    st->nnodes = nnodes;
    for (int k = 0; k < nnodes; k++)
        st->node_live_bytes[k] = bytes / (uint64_t)nnodes;
    st->unknown_node_live_bytes = bytes - (bytes / (uint64_t)nnodes) * (uint64_t)nnodes;
    st->span = NAN;
    for (int i = 0; i < p; i++) {
        st->workers[i].busy_ns = 1000000;
        st->workers[i].search_ns = 0;
    }
    if (p >= 2)
        st->workers[1].search_ns = (uint64_t)(span_share * (p - 1) * 1000000.0 * p); /* share * (P-1) * busy */
}

typedef struct decided {
    int p;
    gcs_gc_decision d;
} decided;

static decided decide(gcs_profile *prof, const gcs_gc_stats *st, int max)
{
    gcs_gc_thread_policy pol;
    gcs_err err;
    gcs_adaptive_opts o;
    gcs_adaptive_opts_init(&o);
    o.background = 0; /* the curve at once, in this decision */
    if (gcs_adaptive_policy_new(prof, &o, &pol, &err) < 0)
        fail_msg("policy: %s", err.msg);
    decided r;
    memset(&r, 0, sizeof r);
    r.p = pol.choose(pol.state, st, max, &r.d);
    pol.destroy(pol.state);
    return r;
}

/* The decision must be the smallest predicted P within 5% of the best. */
static void check_smallest_within(const decided *r, int max)
{
    assert_int_equal(r->d.npredicted, max);
    double best = INFINITY;
    for (int p = 1; p <= max; p++)
        if (isfinite(r->d.predicted_mark_ns[p - 1]))
            best = fmin(best, r->d.predicted_mark_ns[p - 1]);
    assert_true(isfinite(best) && best > 0);
    assert_true(isfinite(r->d.predicted_mark_ns[r->p - 1]));
    assert_true(r->d.predicted_mark_ns[r->p - 1] <= best * 1.05 + 1e-6);
    for (int p = 1; p < r->p; p++)
        if (isfinite(r->d.predicted_mark_ns[p - 1]))
            assert_true(r->d.predicted_mark_ns[p - 1] > best * 1.05);
}

static void test_policy_profiles(void **state)
{
    (void)state;
    gcs_gc_stats *st = malloc(sizeof *st);
    assert_non_null(st);

    /* First collection: no statistics -> max threads, no prediction. */
    decided r = decide(load_with_costs(DEV_PROFILE), NULL, 2);
    assert_int_equal(r.p, 2);
    assert_int_equal(r.d.npredicted, 0);
    assert_non_null(strstr(r.d.note, "first collection"));

    /* A bushy heap (span 0.1% of the work) on a contention-free o2k (S_O = 0):
     * the predicted time falls like 1/P, so max is chosen at P <= 8, and at
     * 64 the smallest P within 5%, which is above 56 (64 / 1.05 = 61, less
     * the span's share). */
    fake_stats(st, 4000000, 3999990, 128000000, 1, 4, 0.001);
    gcs_profile *o2k = load_with_costs("data/machines/o2k.json");
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        for (int j = 0; j < o2k->nnodes; j++)
            o2k->occupancy_ns[a][j] = 0;
    r = decide(o2k, st, 8);
    assert_int_equal(r.p, 8);
    check_smallest_within(&r, 8);
    o2k = load_with_costs("data/machines/o2k.json");
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        for (int j = 0; j < o2k->nnodes; j++)
            o2k->occupancy_ns[a][j] = 0;
    r = decide(o2k, st, 64);
    assert_true(r.p > 56);
    check_smallest_within(&r, 64);

    /* A one-node machine whose memory saturates: S_O = M1, so one worker's
     * misses already keep the node nearly busy -> a small P. */
    gcs_profile *sat = load_with_costs(DEV_PROFILE);
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        sat->occupancy_ns[a][0] = sat->latency_ns[a][0];
    fake_stats(st, 4000000, 3999990, 128000000, 1, 2, 0.01);
    r = decide(sat, st, 16);
    assert_true(r.p >= 1 && r.p <= 3);
    check_smallest_within(&r, 16);

    /* The paper's machines with their own contention: in range, consistent. */
    gcs_profile *e10k = load_with_costs("data/machines/e10k.json");
    fake_stats(st, 4000000, 3999990, 128000000, 1, 8, 0.01);
    r = decide(e10k, st, 64);
    assert_true(r.p >= 2 && r.p <= 64);
    check_smallest_within(&r, 64);
    int e10k_p = r.p;
    o2k = load_with_costs("data/machines/o2k.json");
    r = decide(o2k, st, 64);
    assert_true(r.p >= 1 && r.p <= 64);
    check_smallest_within(&r, 64);
    (void)e10k_p;

    /* This machine: a list (the idle worker searched the whole time) gets
     * P = 1; a bushy tree gets 2. */
    fake_stats(st, 1000000, 999999, 32000000, 1, 2, 1.0);
    r = decide(load_with_costs(DEV_PROFILE), st, 2);
    assert_int_equal(r.p, 1);
    check_smallest_within(&r, 2);
    fake_stats(st, 1000000, 999999, 32000000, 1, 2, 0.001);
    r = decide(load_with_costs(DEV_PROFILE), st, 2);
    assert_int_equal(r.p, 2);
    check_smallest_within(&r, 2);
    assert_string_equal(r.d.inputs[8].name, "span_source");
    assert_true(r.d.inputs[8].value == 1); /* idle time */
    assert_int_equal(r.d.ninputs, 16);
    assert_string_equal(r.d.inputs[2].name, "t1_ns");

    /* A computed span is preferred over idle time. */
    fake_stats(st, 1000000, 999999, 32000000, 1, 2, 1.0);
    st->compute_span = 1;
    st->span_cost_object = st->span_cost_pointer = 1;
    st->span = 10; /* tiny: a bushy heap, whatever the idle time said */
    r = decide(load_with_costs(DEV_PROFILE), st, 2);
    assert_int_equal(r.p, 2);
    assert_true(r.d.inputs[8].value == 0); /* the computed span */
    free(st);
}

/* gcs_model_recommend: the smallest P within the tolerance of the best. */
static void test_recommend(void **state)
{
    (void)state;
    gcs_model_result res[6];
    const double t[6] = {10, 6, 5.2, 5, 5.1, 5.3};
    for (int i = 0; i < 6; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].threads = i + 1;
        res[i].time_ns = t[i];
    }
    assert_int_equal(gcs_model_recommend(res, 6, 0.05), 3);  /* 5.2 <= 5.25 */
    assert_int_equal(gcs_model_recommend(res, 6, 0.0), 4);
    assert_int_equal(gcs_model_recommend(res, 6, 0.2), 2);   /* 6 <= 6.0 */
    assert_int_equal(gcs_model_recommend(res, 6, 1.0), 1);

    /* The policy's grid beyond 16 threads finds what predicting every P finds. */
    gcs_gc_stats *st = malloc(sizeof *st);
    const char *profs[] = {"data/machines/e10k.json", "data/machines/o2k.json", DEV_PROFILE};
    const double shares[] = {0.0005, 0.01, 0.05, 0.2};
    for (size_t pi = 0; pi < 3; pi++) {
        for (size_t si = 0; si < 4; si++) {
            fake_stats(st, 3000000, 2999990, 96000000, 1, 4, shares[si]);
            gcs_profile *prof = load_with_costs(profs[pi]);
            gcs_adaptive_estimate est;
            gcs_err err;
            assert_int_equal(gcs_adaptive_estimate_heap(st, prof, -1, &est, &err), 0);
            gcs_model_opts mo;
            gcs_model_opts_init(&mo);
            mo.span = GCS_MODEL_SPAN_CRITICAL;
            gcs_model_result *all = calloc(64, sizeof *all);
            for (int p = 1; p <= 64; p++)
                assert_int_equal(gcs_model_predict(prof, &est.heap, p, &mo, &all[p - 1], &err), 0);
            int want = gcs_model_recommend(all, 64, 0.05);
            free(all);
            decided r = decide(prof, st, 64); /* takes prof */
            assert_int_equal(r.p, want);
        }
    }
    free(st);
}

/* ---- heaps for the collector tests -------------------------------------------------- */

typedef struct graph {
    size_t n;
    void **obj;
    uint32_t *nptrs;
    int64_t **edge;
    void *roots[4];
    uint64_t reach_objects, reach_edges, nonnull_roots;
} graph;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint64_t pattern(size_t i) { return i * 0x9e3779b97f4a7c15ull ^ 0x5bd1e995; }

/* Random graph: a list, tree edges, cycles, one pointer array longer than a
 * mark chunk; word np of each object holds a pattern. */
static void graph_build(graph *g, size_t n, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->obj = calloc(n, sizeof *g->obj);
    g->nptrs = calloc(n, sizeof *g->nptrs);
    g->edge = calloc(n, sizeof *g->edge);
    uint64_t s = seed | 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t np = i == 7 ? 600 : i % 50 == 0 ? 0 : 1 + (uint32_t)(rnd(&s) % 3);
        g->nptrs[i] = np;
        void *o = gcs_gc_alloc(8 * (np + 1), np);
        assert_non_null(o);
        ((uint64_t *)o)[np] = pattern(i);
        g->obj[i] = o;
        g->edge[i] = malloc((np ? np : 1) * sizeof(int64_t));
    }
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < g->nptrs[i]; k++) {
            uint64_t r = rnd(&s) % 100;
            int64_t t = i < n / 5 && k == 0 ? (int64_t)i + 1 : r < 25 ? -1 : (int64_t)(rnd(&s) % n);
            if (t >= (int64_t)n)
                t = -1;
            g->edge[i][k] = t;
            ((void **)g->obj[i])[k] = t < 0 ? NULL : g->obj[t];
        }
    for (int r = 0; r < 4; r++) {
        g->roots[r] = r == 3 ? NULL : g->obj[r == 0 ? 0 : rnd(&s) % n];
        assert_int_equal(gcs_gc_add_root(&g->roots[r]), 0);
    }
}

static void graph_reach(graph *g)
{
    unsigned char *seen = calloc(g->n, 1);
    size_t *stack = malloc(g->n * sizeof *stack), top = 0;
    g->reach_objects = g->reach_edges = g->nonnull_roots = 0;
    for (int r = 0; r < 4; r++) {
        if (!g->roots[r])
            continue;
        g->nonnull_roots++;
        for (size_t i = 0; i < g->n; i++)
            if (g->obj[i] == g->roots[r] && !seen[i]) {
                seen[i] = 1;
                stack[top++] = i;
            }
    }
    while (top) {
        size_t i = stack[--top];
        g->reach_objects++;
        for (uint32_t k = 0; k < g->nptrs[i]; k++) {
            int64_t t = g->edge[i][k];
            if (t < 0)
                continue;
            g->reach_edges++;
            if (!seen[t]) {
                seen[t] = 1;
                stack[top++] = (size_t)t;
            }
        }
    }
    /* keep only what survives: forget the rest (freed by the collector) */
    for (size_t i = 0; i < g->n; i++)
        if (!seen[i])
            g->obj[i] = NULL;
    free(seen);
    free(stack);
}

static void graph_verify(const graph *g)
{
    for (size_t i = 0; i < g->n; i++) {
        if (!g->obj[i])
            continue;
        void **o = g->obj[i];
        assert_int_equal(gcs_gc_nptrs(o), g->nptrs[i]);
        for (uint32_t k = 0; k < g->nptrs[i]; k++) {
            int64_t t = g->edge[i][k];
            assert_ptr_equal(o[k], t < 0 ? NULL : g->obj[t]);
        }
        assert_true(((uint64_t *)o)[g->nptrs[i]] == pattern(i));
    }
}

static void graph_free(graph *g)
{
    for (int r = 0; r < 4; r++)
        gcs_gc_remove_root(&g->roots[r]);
    for (size_t i = 0; i < g->n; i++)
        free(g->edge[i]);
    free(g->edge);
    free(g->obj);
    free(g->nptrs);
}

/* ---- the estimate against heap inspection ---------------------------------------------- */

static void test_estimate_vs_inspect(void **state)
{
    (void)state;
    char path[] = "/tmp/test_adaptive_snap_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.threads = 1;
    o.mark_mode = GCS_GC_MARK_ATOMIC_BYTES;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    graph g;
    graph_build(&g, 60000, 99);
    graph_reach(&g);
    assert_int_equal(gcs_gc_collect_snapshot(path, &err), 0);
    gcs_gc_stats st;
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.live_objects, g.reach_objects);
    /* the new counter: non-NULL pointers and roots examined, exactly once each */
    assert_int_equal(st.edges_examined, g.reach_edges + g.nonnull_roots);
    uint64_t nb = st.unknown_node_live_bytes;
    for (int k = 0; k < st.nnodes; k++)
        nb += st.node_live_bytes[k];
    assert_int_equal(nb, st.live_bytes);
    graph_free(&g);
    gcs_gc_shutdown();

    gcs_profile *prof = load_with_costs(DEV_PROFILE);
    gcs_snapshot *snap = gcs_snapshot_read(path, &err);
    assert_non_null(snap);
    gcs_inspect_opts io;
    gcs_inspect_opts_init(&io);
    io.exact = 1;
    io.tinf_ns = 0;
    gcs_inspect_result *ir = malloc(sizeof *ir);
    assert_int_equal(gcs_inspect_heap(snap, prof, &io, ir, &err), 0);
    gcs_adaptive_estimate est;
    assert_int_equal(gcs_adaptive_estimate_heap(&st, prof, 0, &est, &err), 0);
    /* Counts are the collector's, exact: the same objects, edges and T1. */
    assert_int_equal(est.heap.objects, ir->heap.objects);
    assert_int_equal(est.heap.edges, ir->heap.edges);
    assert_true(fabs(est.heap.t1_ns - ir->heap.t1_ns) <= 1e-6 * ir->heap.t1_ns);
    /* Lines and L are estimates: within a factor of two of inspection's. */
    double q_est = est.heap.q1[0] + est.heap.q1[1], q_ins = ir->heap.q1[0] + ir->heap.q1[1];
    printf("# Q1 read %.0f / %.0f, rw %.0f / %.0f, L %.1f / %.1f (estimate / inspect)\n", est.heap.q1[0],
           ir->heap.q1[0], est.heap.q1[1], ir->heap.q1[1], est.heap.live_lines_avg, ir->heap.live_lines_avg);
    assert_true(q_est > 0.5 * q_ins && q_est < 2 * q_ins);
    assert_true(est.heap.live_lines_avg > 0.5 * ir->heap.live_lines_avg &&
                est.heap.live_lines_avg < 2 * ir->heap.live_lines_avg);
    assert_true(fabs(est.heap.v[0] - 1) < 1e-9);
    free(ir);
    gcs_snapshot_free(snap);
    gcs_profile_free(prof);
    unlink(path);
}

/* ---- real collections with adaptive:2 -------------------------------------------------- */

static void test_integration(void **state)
{
    (void)state;
    char path[] = "/tmp/test_adaptive_log_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.log_path = path;
    gcs_err err;
    gcs_adaptive_opts ao;
    gcs_adaptive_opts_init(&ao);
    ao.cost_budget = 1; /* every decision made, whatever the sanitizers cost (the budget: test_adaptive_v2) */
    assert_int_equal(gcs_adaptive_configure_with(&o, "adaptive:2", DEV_PROFILE, &ao, &err), 0);
    void *policy = o.thread_policy.state; /* the collector owns it from gcs_gc_init on */
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    assert_int_equal(gcs_gc_max_threads(), 2);
    graph g;
    graph_build(&g, 50000, 7);
    graph_reach(&g);
    gcs_gc_stats *st = malloc(sizeof *st);
    int ncollect = 6;
    for (int c = 0; c < ncollect; c++) {
        assert_int_equal(gcs_gc_collect(), 0);
        assert_int_equal(gcs_gc_last_stats(st), 0);
        const gcs_gc_decision *d = &st->decision;
        assert_int_equal(d->used, 1);
        assert_string_equal(d->policy, "adaptive");
        assert_true(d->threads >= 1 && d->threads <= 2);
        assert_int_equal(st->threads, d->threads);
        assert_int_equal(d->max_threads, 2);
        assert_true(d->decision_ns > 0);
        assert_non_null(d->note);
        if (c == 0) {
            assert_int_equal(d->npredicted, 0);
            assert_int_equal(d->threads, 2);
        } else if (c == 1) {
            /* the first curve is being predicted outside the pause */
            assert_int_equal(d->npredicted, 0);
            assert_non_null(strstr(d->note, "outside the pause"));
        } else {
            assert_int_equal(d->npredicted, 2);
            for (int p = 0; p < 2; p++)
                assert_true(isfinite(d->predicted_mark_ns[p]) && d->predicted_mark_ns[p] > 0);
            assert_int_equal(d->ninputs, 16);
        }
        /* the background predictor has had the mutator's time */
        assert_int_equal(_gcs_adaptive_wait_background(policy, 10000), 0);
        assert_int_equal(st->live_objects, g.reach_objects);
        graph_verify(&g);
    }
    /* paused: the fixed count, no decision */
    assert_int_equal(gcs_gc_set_thread_policy_active(0), 0);
    assert_int_equal(gcs_gc_set_threads(1), 0);
    gcs_gc_collect();
    gcs_gc_last_stats(st);
    assert_int_equal(st->decision.used, 0);
    assert_int_equal(st->threads, 1);
    assert_int_equal(gcs_gc_set_thread_policy_active(1), 0);
    gcs_gc_collect();
    gcs_gc_last_stats(st);
    assert_int_equal(st->decision.used, 1);
    graph_free(&g);
    gcs_gc_shutdown();

    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char *line = malloc(1 << 16);
    int lines = 0, with_policy = 0;
    while (fgets(line, 1 << 16, fp)) {
        json_error_t jerr;
        json_t *j = json_loads(line, 0, &jerr);
        assert_non_null(j);
        lines++;
        json_t *pol = json_object_get(j, "policy");
        if (pol) {
            with_policy++;
            assert_string_equal(json_string_value(json_object_get(pol, "name")), "adaptive");
            json_int_t p = json_integer_value(json_object_get(pol, "threads"));
            assert_int_equal(p, json_integer_value(json_object_get(j, "threads")));
            assert_true(json_integer_value(json_object_get(pol, "decision_ns")) > 0);
            json_t *pred = json_object_get(pol, "predicted_mark_ns");
            assert_true(json_is_array(pred));
            assert_true(json_array_size(pred) == 0 || json_array_size(pred) == 2);
            if (json_array_size(pred) == 2) {
                assert_true(json_real_value(json_array_get(pred, 0)) > 0);
                assert_true(json_is_number(json_object_get(json_object_get(pol, "inputs"), "tinf_ns")));
            }
            assert_true(json_is_string(json_object_get(pol, "note")));
        }
        assert_true(json_is_integer(json_object_get(j, "edges_examined")));
        assert_true(json_is_array(json_object_get(j, "node_live_bytes")));
        json_decref(j);
    }
    free(line);
    fclose(fp);
    unlink(path);
    assert_int_equal(lines, ncollect + 2);
    assert_int_equal(with_policy, ncollect + 1);
    free(st);
}

/* ---- re-mark ------------------------------------------------------------------------------ */

typedef struct remark_ctx {
    int max;
    int calls;
    gcs_gc_stats coll;
    gcs_gc_stats re[5];
    int rc[5];
} remark_ctx;

static void on_collection(const gcs_gc_stats *st, void *arg)
{
    remark_ctx *c = arg;
    c->calls++;
    c->coll = *st;
    for (int p = 1; p <= c->max; p++)
        c->rc[p] = gcs_gc_remark(p, &c->re[p]);
}

static void check_remark(const gcs_gc_stats *re, const gcs_gc_stats *coll, const graph *g, int p)
{
    assert_int_equal(re->remark, 1);
    assert_int_equal(re->threads, p);
    assert_int_equal(re->index, coll->index);
    assert_int_equal(re->live_objects, g->reach_objects);
    assert_int_equal(re->live_bytes, coll->live_bytes);
    assert_int_equal(re->roots, g->nonnull_roots);
    assert_true(re->mark_ns > 0);
    uint64_t busy = 0;
    for (int w = 0; w < p; w++)
        busy += re->workers[w].busy_ns;
    assert_int_equal(busy, re->t1_ns);
    if (re->mark_mode == GCS_GC_MARK_RELAXED_BYTES) {
        assert_true(re->objects_marked >= g->reach_objects); /* a race may scan twice */
    } else {
        assert_int_equal(re->objects_marked, g->reach_objects);
        assert_int_equal(re->edges_examined, g->reach_edges + g->nonnull_roots);
    }
    assert_int_equal(re->sweep_ns, 0);
    assert_int_equal(re->freed_objects, 0);
    assert_int_equal(re->decision.used, 0);
}

static void test_remark(void **state)
{
    (void)state;
    for (int mode = 0; mode <= GCS_GC_MARK_ATOMIC_BITS; mode++) {
        remark_ctx *ctx = calloc(1, sizeof *ctx);
        ctx->max = 4;
        gcs_gc_options o;
        gcs_gc_options_default(&o);
        o.heap_limit = 64u << 20;
        o.threads = 2;
        o.max_threads = 4;
        o.mark_mode = (gcs_gc_mark_mode)mode;
        o.on_collection = on_collection;
        o.on_collection_arg = ctx;
        gcs_err err;
        assert_int_equal(gcs_gc_init(&o, &err), 0);
        assert_int_equal(gcs_gc_remark(0, &ctx->re[0]), -1);
        assert_int_equal(gcs_gc_remark(5, &ctx->re[0]), -1);
        graph g;
        graph_build(&g, 40000, 31 + (uint64_t)mode);
        graph_reach(&g);
        assert_int_equal(gcs_gc_collect(), 0);
        assert_int_equal(ctx->calls, 1);
        assert_int_equal(ctx->coll.live_objects, g.reach_objects);
        for (int p = 1; p <= 4; p++) {
            assert_int_equal(ctx->rc[p], 0);
            check_remark(&ctx->re[p], &ctx->coll, &g, p);
        }
        /* nothing changed: the heap is intact, the census is the live set,
         * and one collection was counted */
        graph_verify(&g);
        uint64_t objs, bytes;
        gcs_gc_census(&objs, &bytes);
        assert_int_equal(objs, g.reach_objects);
        assert_int_equal(gcs_gc_collections(), 1);

        /* From the attached thread (outside a collection), with garbage
         * allocated since: the re-mark counts only the reachable part, and
         * the next collection frees exactly the garbage. */
        ctx->max = 0;
        for (int k = 0; k < 5000; k++)
            assert_non_null(gcs_gc_alloc(24, 1));
        gcs_gc_stats *re = malloc(sizeof *re);
        for (int p = 1; p <= 4; p++) {
            assert_int_equal(gcs_gc_remark(p, re), 0);
            check_remark(re, &ctx->coll, &g, p);
            assert_int_equal(re->index, 1);
        }
        assert_int_equal(gcs_gc_collections(), 1);
        assert_int_equal(gcs_gc_collect(), 0);
        gcs_gc_stats st;
        gcs_gc_last_stats(&st);
        assert_int_equal(st.live_objects, g.reach_objects);
        assert_int_equal(st.freed_objects, 5000);
        graph_verify(&g);
        free(re);
        graph_free(&g);
        gcs_gc_shutdown();
        free(ctx);
    }
}

/* A re-mark from one thread while another allocates and polls: the world is
 * stopped for it, and a collection the mutator asks for meanwhile happens. */
static volatile int stop_mutator;

static void *mutator(void *arg)
{
    (void)arg;
    gcs_err err;
    assert_int_equal(gcs_gc_attach(&err), 0);
    void *keep = NULL;
    gcs_gc_push_root(&keep);
    for (int i = 0; !__atomic_load_n(&stop_mutator, __ATOMIC_RELAXED); i++) {
        void **x = gcs_gc_alloc(32, 1);
        x[0] = i % 100 ? keep : NULL;
        keep = x;
        if (i % 5000 == 0)
            gcs_gc_collect();
        gcs_gc_safepoint();
    }
    gcs_gc_pop_roots(1);
    gcs_gc_detach();
    return NULL;
}

static void test_remark_with_mutators(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 32u << 20;
    o.threads = 2;
    o.alloc_budget = 2u << 20;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    graph g;
    graph_build(&g, 20000, 5);
    graph_reach(&g);
    stop_mutator = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, mutator, NULL), 0);
    gcs_gc_stats *re = malloc(sizeof *re);
    for (int k = 0; k < 20; k++) {
        assert_int_equal(gcs_gc_remark(1 + k % 2, re), 0);
        assert_true(re->live_objects >= g.reach_objects); /* plus the mutator's list */
        gcs_gc_safepoint();
    }
    __atomic_store_n(&stop_mutator, 1, __ATOMIC_RELAXED);
    gcs_gc_detach(); /* pthread_join blocks: no safepoints while waiting */
    pthread_join(t, NULL);
    assert_int_equal(gcs_gc_attach(&err), 0);
    graph_verify(&g);
    assert_int_equal(gcs_gc_remark(2, re), 0);
    assert_true(re->live_objects >= g.reach_objects);
    free(re);
    graph_free(&g);
    gcs_gc_shutdown();
}

/* gc-bench --gc-threads: the program named by $GCSCALE (scripts/run-tests
 * sets it; skipped when unset). */
static void test_gc_bench_cli(void **state)
{
    (void)state;
    const char *prog = getenv("GCSCALE");
    if (!prog || access(prog, X_OK) != 0) {
        printf("# skipped: $GCSCALE is not a program\n");
        return;
    }
    char cmd[8192];
    /* A list long enough that its marks (milliseconds) leave the decisions
     * room in the cost budget. */
    snprintf(cmd, sizeof cmd, "%s gc-bench --shape list --objects 1000000 --reps 9 --gc-threads adaptive:2 "
             "--machine %s --quiet --json", prog, DEV_PROFILE);
    FILE *fp = popen(cmd, "r");
    assert_non_null(fp);
    json_error_t jerr;
    json_t *doc = json_loadf(fp, 0, &jerr);
    assert_int_equal(pclose(fp), 0);
    assert_non_null(doc);
    json_t *a = json_object_get(doc, "adaptive");
    assert_true(json_is_object(a));
    assert_int_equal(json_array_size(json_object_get(doc, "rows")), 2); /* P = 1, 2 */
    json_t *rows = json_object_get(a, "collections");
    assert_int_equal(json_array_size(rows), 9);
    int curves = 0;
    for (size_t i = 0; i < 9; i++) {
        json_t *r = json_array_get(rows, i);
        json_int_t p = json_integer_value(json_object_get(r, "threads"));
        assert_true(p >= 1 && p <= 2);
        assert_true(json_number_value(json_object_get(r, "decision_us")) > 0);
        /* the curve is predicted outside the pauses, on the policy's
         * thread: a collection before it is ready has none ("no curve
         * yet", as under a busy host), later ones have it */
        json_t *pm = json_object_get(r, "predicted_mark_ms");
        assert_true(json_is_null(pm) || json_number_value(pm) > 0);
        curves += i > 0 && json_number_value(pm) > 0;
    }
    assert_true(curves > 0);
    assert_true(json_number_value(json_object_get(a, "ratio_to_best")) > 0);
    json_decref(doc);
    /* bad specs: one line, exit 2 */
    const char *bad[] = {"0", "adaptive:0", "adaptive:x", "x"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd, "%s gc-bench --shape list --gc-threads '%s' 2>&1 >/dev/null", prog, bad[i]);
        fp = popen(cmd, "r");
        char line[1024] = "";
        assert_non_null(fgets(line, sizeof line, fp));
        int rc = pclose(fp);
        assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
        assert_non_null(strstr(line, "--gc-threads"));
    }
    snprintf(cmd, sizeof cmd, "%s gc-bench --shape list --gc-threads adaptive --machine /nonexistent.json "
             "--quiet 2>&1 >/dev/null", prog);
    fp = popen(cmd, "r");
    char line[1024] = "";
    assert_non_null(fgets(line, sizeof line, fp));
    int rc = pclose(fp);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
    assert_non_null(strstr(line, "nonexistent.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_spec),
        cmocka_unit_test(test_configure),
        cmocka_unit_test(test_policy_profiles),
        cmocka_unit_test(test_recommend),
        cmocka_unit_test(test_estimate_vs_inspect),
        cmocka_unit_test(test_integration),
        cmocka_unit_test(test_remark),
        cmocka_unit_test(test_remark_with_mutators),
        cmocka_unit_test(test_gc_bench_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
