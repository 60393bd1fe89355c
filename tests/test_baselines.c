/* test_baselines.c -- the baseline thread policies of adaptive/baselines.c
 * (all, boehm, hotspot, zgc): spec words, each rule on hand-made statistics
 * with hand-computed answers, and a real collector run under "hotspot:4"
 * whose decisions are recorded with the collections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/adaptive.h"
#include "gcscale/gc.h"
#include "gcscale/validate.h"

#define MIB (1ull << 20)

static double input_of(const gcs_gc_decision *d, const char *name)
{
    for (int i = 0; i < d->ninputs; i++)
        if (strcmp(d->inputs[i].name, name) == 0)
            return d->inputs[i].value;
    fail_msg("decision has no input '%s'", name);
    return NAN;
}

static int choose(gcs_gc_thread_policy *p, const gcs_gc_stats *prev, int max, gcs_gc_decision *d)
{
    memset(d, 0, sizeof *d);
    int n = p->choose(p->state, prev, max, d);
    assert_non_null(d->note);
    return n;
}

static void test_spec_words(void **state)
{
    (void)state;
    gcs_adaptive_spec sp;
    gcs_err err;
    const char *words[] = {"all", "boehm", "hotspot", "zgc"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(gcs_adaptive_parse_spec(words[i], &sp, &err), 0);
        assert_int_equal(sp.adaptive, 1);
        assert_int_equal(sp.baseline, i + 1);
        assert_int_equal(sp.max_threads, 0);
        assert_string_equal(gcs_adaptive_baseline_name((gcs_adaptive_baseline)(i + 1)), words[i]);
    }
    assert_int_equal(gcs_adaptive_parse_spec("zgc:4", &sp, &err), 0);
    assert_int_equal(sp.baseline, GCS_ADAPTIVE_BASELINE_ZGC);
    assert_int_equal(sp.max_threads, 4);
    assert_int_equal(gcs_adaptive_parse_spec("adaptive", &sp, &err), 0);
    assert_int_equal(sp.baseline, GCS_ADAPTIVE_BASELINE_NONE);
    const char *bad[] = {"hotspotx", "all:0", "zgc:", "boehm:65", "hot", "ALL", "zgc:2:3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.msg[0] = 0;
        assert_int_equal(gcs_adaptive_parse_spec(bad[i], &sp, &err), -1);
        assert_non_null(strstr(err.msg, "hotspot"));
    }
    gcs_gc_thread_policy p;
    assert_int_equal(gcs_adaptive_baseline_policy_new(GCS_ADAPTIVE_BASELINE_NONE, 0, &p, &err), -1);
    /* configure needs no profile for a baseline, even with a bad path around */
    setenv("GCSCALE_MACHINE", "/nonexistent.json", 1);
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    assert_int_equal(gcs_adaptive_configure(&o, "boehm:3", NULL, &err), 0);
    assert_string_equal(o.thread_policy.name, "boehm");
    assert_int_equal(o.max_threads, 3);
    assert_int_equal(o.threads, 3);
    assert_int_equal(o.ignore_threads_env, 1);
    gcs_adaptive_release(&o);
    unsetenv("GCSCALE_MACHINE");
}

static void test_all_and_boehm(void **state)
{
    (void)state;
    gcs_err err;
    gcs_gc_thread_policy p;
    gcs_gc_decision d;
    gcs_gc_stats st = {.index = 1, .threads = 3};
    assert_int_equal(gcs_adaptive_baseline_policy_new(GCS_ADAPTIVE_BASELINE_ALL, 0, &p, &err), 0);
    assert_int_equal(choose(&p, NULL, 7, &d), 7);
    assert_int_equal(choose(&p, &st, 5, &d), 5);
    p.destroy(p.state);

    assert_int_equal(gcs_adaptive_baseline_policy_new(GCS_ADAPTIVE_BASELINE_BOEHM, 64, &p, &err), 0);
    assert_int_equal(choose(&p, NULL, 64, &d), 16); /* MAX_MARKERS */
    assert_int_equal(input_of(&d, "cpus"), 64);
    assert_int_equal(choose(&p, &st, 8, &d), 8);    /* the pool */
    p.destroy(p.state);
    assert_int_equal(gcs_adaptive_baseline_policy_new(GCS_ADAPTIVE_BASELINE_BOEHM, 2, &p, &err), 0);
    assert_int_equal(choose(&p, &st, 64, &d), 2);
    p.destroy(p.state);
}

static void test_hotspot_rule(void **state)
{
    (void)state;
    /* ScaleForWordSize(32M) = 32M * 13 / 10 aligned down to 8 */
    assert_int_equal(GCS_ADAPTIVE_HOTSPOT_HEAP_PER_THREAD, 43620760);
    int jt, heap;
    /* 200 MiB / 41.6 MiB = 4.8 -> 4; one mutator -> 2; shrink 16 -> (16 + 4) / 2 */
    assert_int_equal(gcs_adaptive_hotspot_workers(16, 16, 1, 200 * MIB, &jt, &heap), 10);
    assert_int_equal(jt, 2);
    assert_int_equal(heap, 4);
    assert_int_equal(gcs_adaptive_hotspot_workers(16, 10, 1, 200 * MIB, NULL, NULL), 7);
    assert_int_equal(gcs_adaptive_hotspot_workers(16, 7, 1, 200 * MIB, NULL, NULL), 5);
    assert_int_equal(gcs_adaptive_hotspot_workers(16, 5, 1, 200 * MIB, NULL, NULL), 4);
    assert_int_equal(gcs_adaptive_hotspot_workers(16, 4, 1, 200 * MIB, NULL, NULL), 4);
    /* grows at once: 6 mutators -> 12 */
    assert_int_equal(gcs_adaptive_hotspot_workers(16, 4, 6, 200 * MIB, &jt, &heap), 12);
    assert_int_equal(jt, 12);
    /* clamped to the pool; by_heap at least 2; min_workers 2 bounds the shrink */
    assert_int_equal(gcs_adaptive_hotspot_workers(8, 8, 20, 200 * MIB, NULL, NULL), 8);
    assert_int_equal(gcs_adaptive_hotspot_workers(8, 3, 0, 1 * MIB, &jt, &heap), 2);
    assert_int_equal(jt, 2);
    assert_int_equal(heap, 2);
    assert_int_equal(gcs_adaptive_hotspot_workers(1, 1, 4, 1 * MIB, NULL, NULL), 1);
    /* heap alone: 1 GiB / 41.6 MiB = 24.6 -> 24 */
    assert_int_equal(gcs_adaptive_hotspot_workers(64, 24, 1, 1024 * MIB, NULL, &heap), 24);
    assert_int_equal(heap, 24);

    /* as a policy: the first collection at the pool, then from the stats */
    gcs_err err;
    gcs_gc_thread_policy p;
    gcs_gc_decision d;
    assert_int_equal(gcs_adaptive_baseline_policy_new(GCS_ADAPTIVE_BASELINE_HOTSPOT, 0, &p, &err), 0);
    assert_int_equal(choose(&p, NULL, 16, &d), 16);
    gcs_gc_stats st = {.index = 1, .threads = 16, .mutators = 1, .heap_limit = 200 * MIB};
    assert_int_equal(choose(&p, &st, 16, &d), 10);
    assert_int_equal(input_of(&d, "by_JT"), 2);
    assert_int_equal(input_of(&d, "by_heap"), 4);
    assert_int_equal(input_of(&d, "previous"), 16);
    assert_non_null(strstr(d.note, "midpoint"));
    st.threads = 10;
    st.mutators = 3;
    assert_int_equal(choose(&p, &st, 16, &d), 8); /* by_JT 6 < 10: (10 + 6) / 2 */
    p.destroy(p.state);
}

/* One synthetic collection: P workers, t1 and pause in seconds, starting at
 * start_s; a 100 MiB heap with 20 MiB live, full when it began (1600 pages
 * in use before the sweep: 80 MiB allocated since the last one). */
static gcs_gc_stats zgc_stats(uint64_t index, int p, double t1_s, double pause_s, double start_s)
{
    gcs_gc_stats st = {.index = index, .threads = p, .heap_limit = 100 * MIB, .live_bytes = 20 * MIB};
    st.t1_ns = (uint64_t)(t1_s * 1e9 + 0.5);
    st.pause_ns = (uint64_t)(pause_s * 1e9 + 0.5);
    st.start_ns = (uint64_t)(start_s * 1e9 + 0.5);
    st.pages_in_use = 20 * MIB / GCS_GC_PAGE_BYTES;
    st.pages_freed = 80 * MIB / GCS_GC_PAGE_BYTES;
    return st;
}

static void test_zgc_rule(void **state)
{
    (void)state;
    gcs_err err;
    gcs_gc_thread_policy p;
    gcs_gc_decision d;

    /* Long-cycle rule: P = 4, T1 = 30 s, pause 8 s -> serial 8 - 30/4 =
     * 0.5 s; the same each time, so no deviation margin.  Mutator interval
     * 1000 s: 80 MiB / 1000 s, time until OOM ~ 1000 s -> 30 / 999.5 = 0.03;
     * long-cycle 30 / (10 - 0.5) = 3.16 -> 4. */
    assert_int_equal(gcs_adaptive_baseline_policy_new(GCS_ADAPTIVE_BASELINE_ZGC, 0, &p, &err), 0);
    assert_int_equal(choose(&p, NULL, 8, &d), 8);
    assert_non_null(strstr(d.note, "not warm"));
    double start = 1;
    for (uint64_t k = 1; k <= 3; k++) {
        gcs_gc_stats st = zgc_stats(k, 4, 30, 8, start);
        start += 8 + 1000;
        int n = choose(&p, &st, 8, &d);
        assert_float_equal(input_of(&d, "serial_ms"), 500, 1e-6);
        assert_float_equal(input_of(&d, "parallelizable_ms"), 30000, 1e-6);
        if (k < 3) {
            assert_int_equal(n, 8); /* not warm: fewer than 3 collections */
            assert_non_null(strstr(d.note, "not warm"));
        } else {
            assert_int_equal(n, 4);
            assert_float_equal(input_of(&d, "time_until_oom_s"), 1000, 0.02); /* ZGC divides by rate + 1 */
            assert_float_equal(input_of(&d, "gc_workers"), 30 / 9.5, 1e-9);
        }
    }
    p.destroy(p.state);

    /* OOM rule and "don't decrease if the next cycle needs more": P = 8,
     * T1 = 0.4 s, pause 0.05 s -> serial 0; heap full every 0.45 s of
     * mutator time, so time until OOM = 0.45 s and 0.4 / 0.45 = 0.89 -> 1
     * worker, fewer than the last 8.  The next cycle's time until OOM:
     * 0.45 + 0.45 - (0.4 / 1 - 0.4 / 8) = 0.55 s -> 0.4 / 0.55 + 0.5 =
     * 1.227, clamped to [1, 8] -> 2 workers. */
    assert_int_equal(gcs_adaptive_baseline_policy_new(GCS_ADAPTIVE_BASELINE_ZGC, 0, &p, &err), 0);
    start = 1;
    int n = 0;
    for (uint64_t k = 1; k <= 3; k++) {
        gcs_gc_stats st = zgc_stats(k, 8, 0.4, 0.05, start);
        start += 0.05 + 0.45;
        n = choose(&p, &st, 8, &d);
    }
    assert_float_equal(input_of(&d, "serial_ms"), 0, 1e-6);
    assert_float_equal(input_of(&d, "time_until_oom_s"), 0.45, 1e-6);
    assert_float_equal(input_of(&d, "gc_workers"), 0.4 / 0.55 + 0.5, 1e-6);
    assert_int_equal(n, 2);
    assert_non_null(strstr(d.note, "next cycle"));
    /* a collection not seen by the fit (the policy was paused) gives no rate:
     * the long-cycle rule alone, 0.4 / 10 -> 1 */
    gcs_gc_stats st = zgc_stats(9, 8, 0.4, 0.05, start + 5);
    assert_int_equal(choose(&p, &st, 8, &d), 1);
    assert_float_equal(input_of(&d, "time_until_oom_s"), -1, 0);
    p.destroy(p.state);
}

/* A real run: "hotspot:4" on an 8 MiB heap with this one thread attached:
 * by_JT 2, by_heap 2, so P goes 4, 3 (the midpoint), 2, 2. */
static void test_hotspot_collector(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 8 * MIB;
    gcs_err err;
    assert_int_equal(gcs_adaptive_configure(&o, "hotspot:4", NULL, &err), 0);
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *root = NULL;
    assert_int_equal(gcs_gc_add_root(&root), 0);
    const int want[] = {4, 3, 2, 2};
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 2000; i++) {
            void *o2 = gcs_gc_alloc(48, 1);
            assert_non_null(o2);
            *(void **)o2 = root;
            root = i % 3 ? root : o2;
        }
        assert_int_equal(gcs_gc_collect(), 0);
        gcs_gc_stats st;
        assert_int_equal(gcs_gc_last_stats(&st), 0);
        assert_int_equal(st.mutators, 1);
        assert_int_equal(st.decision.used, 1);
        assert_string_equal(st.decision.policy, "hotspot");
        assert_int_equal(st.decision.threads, want[k]);
        assert_int_equal(st.threads, want[k]);
        assert_non_null(st.decision.note);
        if (k > 0) {
            assert_int_equal(input_of(&st.decision, "by_heap"), 2);
            assert_int_equal(input_of(&st.decision, "by_JT"), 2);
        }
        json_t *j = gcs_gc_stats_to_json(&st);
        assert_int_equal(json_integer_value(json_object_get(j, "mutators")), 1);
        json_decref(j);
    }
    gcs_gc_remove_root(&root);
    gcs_gc_shutdown();
}

/* The Table 4 with the baselines (validate --policies' report) from hand-
 * made cells: the best fixed P and each cell's distance from it, the mark
 * and sweep of each configuration, each policy's decisions over 1% of their
 * pause, the noise floor, and the CSV's columns. */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return buf;
}

static void test_policies_report(void **state)
{
    (void)state;
    gcs_validate_policies *p = calloc(1, sizeof *p);
    assert_non_null(p);
    snprintf(p->host, sizeof p->host, "h");
    snprintf(p->machine, sizeof p->machine, "m.json");
    snprintf(p->created, sizeof p->created, "now");
    p->cpus = p->max_threads = p->mutators = 2;
    p->runs = 5;
    p->steps_scale = 2;
    p->nrows = 1;
    gcs_validate_policy_row *r = &p->rows[0];
    snprintf(r->workload, sizeof r->workload, "chain");
    r->nfixed = 2;
    r->ncells = 3;
    const char *names[] = {"1", "2", "adaptive"};
    const double gc[] = {100, 150, 104}, mark[] = {98, 120, 101}, sweep[] = {1.5, 28, 2};
    for (int i = 0; i < 3; i++) {
        gcs_validate_policy_cell *c = &r->cells[i];
        snprintf(c->name, sizeof c->name, "%s", names[i]);
        c->threads = i < 2 ? i + 1 : 0;
        c->gc_ms = gc[i];
        c->mark_ms = mark[i];
        c->sweep_ms = sweep[i];
        c->cpu_ms = gc[i] * (i == 1 ? 2 : 1);
        c->collections = 40;
    }
    r->cells[2].avg_threads = 1.05;
    r->cells[2].p1_share = 0.95;
    r->cells[2].decision_max_pct = 1.25;
    r->cells[2].decisions_over = 1;
    r->best_fixed = 0;
    r->noise_pct = 17.3;
    char dir[] = "/tmp/test_policies_XXXXXX";
    assert_non_null(mkdtemp(dir));
    gcs_err err;
    assert_int_equal(gcs_validate_policies_write(p, dir, &err), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/policies.md", dir);
    char *md = slurp(path);
    assert_non_null(strstr(md, "| chain | **100.0** (best) | 150.0 (+50.0%) | 104.0 (+4.0%) | 17.3% |"));
    assert_non_null(strstr(md, "| chain | 98.0 + 1.5 | 120.0 + 28.0 | 101.0 + 2.0 |"));
    assert_non_null(strstr(md, "| chain | adaptive | 1.05 | 95% of 40 | 1.250% | 1 |"));
    assert_non_null(strstr(md, "noise floor"));
    assert_non_null(strstr(md, "2 mutators, workload steps x 2, profile m.json"));
    free(md);
    unlink(path);
    snprintf(path, sizeof path, "%s/policies.csv", dir);
    char *csv = slurp(path);
    assert_non_null(strstr(csv, "workload,config,threads,gc_ms,mark_ms,sweep_ms,cpu_ms,"));
    assert_non_null(strstr(csv, "chain,adaptive,0,104.000,101.000,2.000,104.000,1.050,0.9500,1.2500,1,40,"));
    free(csv);
    unlink(path);
    rmdir(dir);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_words),
        cmocka_unit_test(test_all_and_boehm),
        cmocka_unit_test(test_hotspot_rule),
        cmocka_unit_test(test_zgc_rule),
        cmocka_unit_test(test_hotspot_collector),
        cmocka_unit_test(test_policies_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
