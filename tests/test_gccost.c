/* test_gccost.c -- calibrating the marker's costs (calibrate/gccost.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include <stdlib.h>
#include <unistd.h>

#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/snapshot.h"
#include "../calibrate/calibrate_internal.h"

static void test_costs_are_fitted_and_positive(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    gcs_err err;
    json_t *details = NULL;
    assert_int_equal(gcs_calibrate_gc_costs(1, p, &details, &err), 0);
    assert_int_equal(p->has_gc_cost, 1);
    assert_true(p->gc_cost_object_ns > 0 && p->gc_cost_object_ns < 1000);
    assert_true(p->gc_cost_pointer_ns > 0 && p->gc_cost_pointer_ns < 1000);
    assert_true(p->gc_cost_steal_ns >= 0 && isfinite(p->gc_cost_steal_ns));
    /* The steal and worker costs are fitted to six pairs of marks at P = 1
     * and 2 (and six at P = 1 and the largest P, up to 8, where there are
     * more CPUs), each kept with its steals (none with one CPU). */
    json_t *samples = json_object_get(details, "steal_samples");
    assert_true(json_is_array(samples));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus >= 2) {
        assert_int_equal(json_array_size(samples), cpus > 2 ? 12 : 6);
        assert_int_equal(p->has_gc_cost_worker, 1);
        assert_true(p->gc_cost_worker_ns >= 0 && isfinite(p->gc_cost_worker_ns));
        json_t *fit = json_object_get(details, "steal_cost_fit");
        /* the fit takes the pairs whose thieves stole: an extra worker that
         * never marked says nothing about what one adds */
        json_int_t fitted = json_integer_value(json_object_get(fit, "samples"));
        size_t stole = 0, k;
        json_t *smp;
        json_array_foreach(samples, k, smp) stole += json_real_value(json_object_get(smp, "steals")) > 0;
        assert_int_equal(fitted, (json_int_t)stole);
        assert_true(json_real_value(json_object_get(fit, "worker_ns")) == p->gc_cost_worker_ns);
        json_t *s0 = json_array_get(samples, 0);
        assert_int_equal(json_integer_value(json_object_get(s0, "threads")), 2);
        double steals = json_real_value(json_object_get(s0, "steals"));
        double searches = json_real_value(json_object_get(s0, "searches"));
        assert_true(steals >= 0 && json_real_value(json_object_get(s0, "t1_two_ns")) > 0);
        /* each search that found work took 1 to 16 entries */
        assert_true(searches <= steals && steals <= 16 * searches);
        json_t *fit0 = json_array_get(json_object_get(json_object_get(details, "steal_fit"), "points"), 0);
        assert_non_null(json_object_get(fit0, "searches_median"));
    } else {
        assert_int_equal(json_array_size(samples), 0);
        assert_int_equal(p->has_gc_cost_worker, 0);
    }
    /* Every load point is reported with its fitted value and residual. */
    json_t *points = json_object_get(details, "points");
    assert_int_equal(json_array_size(points), 15);
    json_t *first = json_array_get(points, 0);
    assert_true(json_real_value(json_object_get(first, "t1_ns")) > 0);
    assert_non_null(json_object_get(first, "residual"));
    assert_true(json_real_value(json_object_get(details, "rms_rel_residual")) >= 0);
    /* ... and how far to trust the split: condition number, intervals. */
    double cond = json_real_value(json_object_get(details, "condition_number"));
    assert_true(cond >= 1 && cond <= GCS_COST_COND_MAX);
    json_t *u = json_object_get(json_object_get(details, "uncertainty"), "gc_cost_ns.pointer");
    json_t *ci = json_object_get(u, "ci95");
    assert_true(json_real_value(json_array_get(ci, 0)) <= p->gc_cost_pointer_ns);
    assert_true(json_real_value(json_array_get(ci, 1)) >= p->gc_cost_pointer_ns);
    assert_true(json_real_value(json_object_get(u, "stderr")) > 0);
    assert_int_equal(json_integer_value(json_object_get(u, "n")), 15);
    assert_true(json_array_size(json_object_get(details, "attempt_log")) >= 1);
    /* a warning, when there is one, says what to do */
    json_t *warning = json_object_get(details, "warning");
    assert_true(json_is_null(warning) || strstr(json_string_value(warning), "--gc-only"));
    /* The per-class costs (classcost.c), each the slope over three sizes of
     * its own heap: positive, or not stored and the reason in details. */
    json_t *classes = json_object_get(details, "classes");
    assert_non_null(classes);
    if (p->has_gc_class_cost) {
        assert_true(p->gc_cost_chain_ns > 0 && p->gc_cost_array_element_ns > 0);
        assert_int_equal(json_array_size(json_object_get(json_object_get(classes, "chain"), "points")), 3);
        assert_true(json_real_value(json_object_get(json_object_get(classes, "array_element"), "ns")) ==
                    p->gc_cost_array_element_ns);
        /* the NULL switch (2026-11-27): >= 0 with its three points, or the
         * reason it is not there */
        json_t *ns = json_object_get(classes, "null_switch");
        if (p->has_gc_null_switch) {
            assert_true(p->gc_cost_null_switch_ns >= 0);
            assert_int_equal(json_array_size(json_object_get(ns, "points")), 3);
        } else {
            assert_non_null(json_string_value(json_object_get(ns, "not_measured")));
        }
    } else {
        assert_non_null(json_string_value(json_object_get(classes, "not_measured")));
    }
    /* The collector is gone afterwards: a later user can start its own. */
    assert_false(gcs_gc_is_initialized());
    json_decref(details);
    gcs_profile_free(p);
}

/* The steal samples' fit (stealfit.c) on samples made by hand: growth =
 * (P - 1) worker + steals x steal, plus a deterministic jitter of +-j ns. */
static void make_samples(int n, const int *threads, const double *steals, double worker, double steal, double j,
                         double *x1, double *growth)
{
    for (int i = 0; i < n; i++) {
        x1[i] = threads[i] - 1;
        growth[i] = x1[i] * worker + steals[i] * steal + (i % 2 ? j : -j) * (i % 3 ? 1 : 0.5);
    }
}

static void test_steal_fit(void **state)
{
    (void)state;
    static const int two[6] = {2, 2, 2, 2, 2, 2}, mixed[12] = {2, 8, 2, 8, 2, 8, 2, 8, 2, 8, 2, 8};
    static const double steals[6] = {12, 1, 21, 3, 5, 17};
    static const double wide_steals[12] = {5, 120, 12, 260, 8, 90, 20, 180, 3, 300, 15, 150};
    double x1[12], y[12];
    gcs_steal_fit f;

    /* The 2-vCPU guest's case: the growth does not follow the steals, so
     * the per-steal cost is 0 and the growth is the worker's. */
    make_samples(6, two, steals, 15000, 0, 1500, x1, y);
    _gcs_calibrate_steal_fit(6, x1, steals, y, &f);
    assert_int_equal(f.steal_resolved, 0);
    assert_true(f.steal_ns == 0);
    assert_true(fabs(f.worker_ns - 15000) < 800 && f.worker_se > 0);
    assert_non_null(strstr(f.note, "not told from 0"));

    /* A growth that follows the steals at P = 2 is split in two. */
    make_samples(6, two, steals, 10000, 800, 200, x1, y);
    _gcs_calibrate_steal_fit(6, x1, steals, y, &f);
    assert_int_equal(f.steal_resolved, 1);
    assert_true(fabs(f.steal_ns - 800) < 60 && fabs(f.worker_ns - 10000) < 800);
    assert_string_equal(f.note, "measured");

    /* Two P: both costs recovered, exactly without jitter. */
    make_samples(12, mixed, wide_steals, 5000, 300, 0, x1, y);
    _gcs_calibrate_steal_fit(12, x1, wide_steals, y, &f);
    assert_int_equal(f.steal_resolved, 1);
    assert_true(fabs(f.steal_ns - 300) < 1e-6 && fabs(f.worker_ns - 5000) < 1e-6);

    /* The same steals in every sample at one P: the two are not told
     * apart, and the growth is the worker's. */
    static const double same[6] = {10, 10, 10, 10, 10, 10};
    make_samples(6, two, same, 4000, 700, 100, x1, y);
    _gcs_calibrate_steal_fit(6, x1, same, y, &f);
    assert_true(f.steal_ns == 0 && f.worker_ns > 10000);
    assert_non_null(strstr(f.note, "not identifiable"));

    /* A clear slope with a negative worker part: the steals alone. */
    static const double many[6] = {10, 40, 20, 30, 15, 35};
    make_samples(6, two, many, -2000, 500, 50, x1, y);
    _gcs_calibrate_steal_fit(6, x1, many, y, &f);
    assert_int_equal(f.steal_resolved, 1);
    assert_true(f.worker_ns == 0 && f.steal_ns > 400 && f.steal_ns < 500);
    assert_non_null(strstr(f.note, "negative"));

    /* A slope with the workers' part so far below 0 that the steals alone
     * give a negative cost (a sanitizer build's noise under TSan): neither
     * is told from 0, and neither goes below it. */
    static const int two3[3] = {2, 2, 2};
    static const double three[3] = {0, 10, 20};
    make_samples(3, two3, three, -100, 0.5, 0, x1, y); /* growth -100, -95, -90 */
    _gcs_calibrate_steal_fit(3, x1, three, y, &f);
    assert_int_equal(f.steal_resolved, 0);
    assert_true(f.steal_ns == 0 && f.worker_ns == 0);
    assert_non_null(strstr(f.note, "not told from 0"));

    /* No growth that can be positive: both 0, never below. */
    make_samples(6, two, steals, -3000, 0, 100, x1, y);
    _gcs_calibrate_steal_fit(6, x1, steals, y, &f);
    assert_true(f.steal_ns == 0 && f.worker_ns == 0);

    /* No samples (one CPU): zeros, said so. */
    _gcs_calibrate_steal_fit(0, x1, steals, y, &f);
    assert_true(f.steal_ns == 0 && f.worker_ns == 0 && f.n == 0);

    /* Into the profile's uncertainty: the estimate +- t se, clipped at 0;
     * an unresolved per-steal cost keeps its interval (reaching 0) and is
     * not marked unreliable. */
    make_samples(6, two, steals, 15000, 0, 1500, x1, y);
    _gcs_calibrate_steal_fit(6, x1, steals, y, &f);
    gcs_profile *p = gcs_profile_new(1);
    p->has_gc_cost = 1;
    p->has_gc_cost_worker = 1;
    p->gc_cost_worker_ns = f.worker_ns;
    json_t *details = json_pack("{s:o}", "steal_cost_fit", _gcs_calibrate_steal_fit_json(&f));
    _gcs_calibrate_steal_cost_uncertainty(p, details);
    gcs_profile_uncertainty u;
    assert_int_equal(gcs_profile_get_uncertainty(p, "gc_cost_ns.worker", &u), 1);
    assert_true(u.ci95_lo < f.worker_ns && u.ci95_hi > f.worker_ns && u.n == 6 && u.std_error > 0);
    assert_int_equal(gcs_profile_get_uncertainty(p, "gc_cost_ns.steal", &u), 1);
    assert_true(u.ci95_lo == 0 && u.ci95_hi > 0);
    assert_null(gcs_profile_unreliable(p, "gc_cost_ns.steal"));
    json_decref(details);
    gcs_profile_free(p);
}

/* --key gc_cost_ns.worker (_gcs_calibrate_steal_cost): both costs measured
 * again into a profile, its other marker costs kept, the old steal cost's
 * unreliable mark dropped; the collector gone afterwards. */
static void test_steal_cost_key(void **state)
{
    (void)state;
    gcs_profile *p = gcs_profile_new(1);
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 0.25;
    p->gc_cost_pointer_ns = 3;
    p->gc_cost_steal_ns = 2400;
    gcs_profile_set_unreliable(p, "gc_cost_ns.steal", "an older calibration's range");
    gcs_err err = {{0}};
    json_t *details = NULL;
    int rc = _gcs_calibrate_steal_cost(1, p, &details, &err);
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        assert_int_equal(rc, -1);
        assert_non_null(strstr(err.msg, "two CPUs"));
        gcs_profile_free(p);
        return;
    }
    assert_int_equal(rc, 0);
    assert_true(p->gc_cost_object_ns == 0.25 && p->gc_cost_pointer_ns == 3);
    assert_int_equal(p->has_gc_cost_worker, 1);
    assert_true(p->gc_cost_worker_ns >= 0 && p->gc_cost_steal_ns >= 0);
    assert_null(gcs_profile_unreliable(p, "gc_cost_ns.steal"));
    assert_true(json_array_size(json_object_get(details, "steal_samples")) >= 6);
    assert_non_null(json_object_get(details, "steal_cost_fit"));
    assert_false(gcs_gc_is_initialized());
    json_decref(details);
    gcs_profile_free(p);
}

/* The slope of the class costs: exact on a line, refused on one abscissa. */
static void test_class_slope(void **state)
{
    (void)state;
    double x[3] = {1000, 2000, 4000}, y[3], slope, fixed, rms;
    for (int i = 0; i < 3; i++)
        y[i] = 250 + 1.5 * x[i];
    assert_int_equal(_gcs_calibrate_class_slope(3, x, y, &slope, &fixed, &rms), 0);
    assert_true(fabs(slope - 1.5) < 1e-12 && fabs(fixed - 250) < 1e-9 && rms < 1e-12);
    y[2] += 400; /* a point off the line: a residual, a slope still near */
    assert_int_equal(_gcs_calibrate_class_slope(3, x, y, &slope, &fixed, &rms), 0);
    assert_true(rms > 0.01 && slope > 1.5 && slope < 1.7);
    double same[3] = {1000, 1000, 1000};
    assert_int_equal(_gcs_calibrate_class_slope(3, same, y, &slope, &fixed, &rms), -1);
}

/* The NULL-switch heap's switches, counted as classcost.c builds it, are
 * the slow predictor's count of the same heap as the collector marks it
 * (model/replay.c): the cost calibrate measures per switch is the one the
 * model multiplies. */
static void test_null_switch_heap_counts(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.threads = 1;
    o.max_threads = 1;
    o.alloc_budget = 0;
    o.log_path = "";
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *root = NULL;
    assert_int_equal(gcs_gc_add_root(&root), 0);
    enum { N = 5000 };
    void **all = malloc(N * sizeof *all);
    long edges, nulls, switches;
    assert_int_equal(_gcs_calibrate_null_heap(N, &root, all, &edges, &nulls, &switches), 0);
    /* half the extra fields NULL, about 1.5 switches per object */
    assert_true(nulls > N * 8 / 10 && nulls < N * 12 / 10);
    assert_true(switches > N * 13 / 10 && switches < N * 17 / 10);
    char path[] = "/tmp/gcscale-test-nullheap-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gcs_gc_collect_snapshot(path, &err), 0);
    gcs_gc_remove_root(&root);
    gcs_gc_shutdown();
    free(all);
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    unlink(path);
    assert_non_null(g);
    gcs_profile *p = gcs_profile_new(1);
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 1;
    p->gc_cost_pointer_ns = 1;
    p->ncaches = 1;
    p->caches = calloc(1, sizeof *p->caches);
    p->caches[0] = (gcs_profile_cache){.level = 1, .size_bytes = 32768, .line_bytes = 64, .ways = 8};
    snprintf(p->caches[0].type, sizeof p->caches[0].type, "data");
    p->caches[0].ncpus = 1;
    p->caches[0].cpus = calloc(1, sizeof *p->caches[0].cpus);
    gcs_inspect_opts io;
    gcs_inspect_opts_init(&io);
    io.predictor = GCS_INSPECT_SLOW;
    gcs_inspect_result ir;
    if (gcs_inspect_heap(g, p, &io, &ir, &err) < 0)
        fail_msg("inspect: %s", err.msg);
    assert_int_equal(ir.heap.objects, N);
    assert_int_equal(ir.heap.edges, edges);
    assert_int_equal(ir.heap.null_fields, nulls);
    assert_int_equal(ir.heap.null_switches, switches);
    gcs_profile_free(p);
    gcs_snapshot_free(g);
}

static void test_refuses_when_a_collector_runs(void **state)
{
    (void)state;
    gcs_err err;
    assert_int_equal(gcs_gc_init(NULL, &err), 0);
    gcs_profile *p = gcs_profile_new(1);
    json_t *details = NULL;
    assert_int_equal(gcs_calibrate_gc_costs(1, p, &details, &err), -1);
    assert_non_null(strstr(err.msg, "already runs"));
    assert_null(details);
    assert_int_equal(p->has_gc_cost, 0);
    gcs_profile_free(p);
    gcs_gc_shutdown();
}

/* ---- the fit on synthetic data (costfit.c) ------------------------------ */

/* A standard normal draw (Box-Muller) from the library's generator. */
static double normal(uint64_t *rng)
{
    double u1 = ((double)(gcs_random_next(rng) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = (double)(gcs_random_next(rng) >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

#define C0 2000.0  /* ns: fixed */
#define COBJ 1.5   /* ns per object */
#define CPTR 3.0   /* ns per pointer */

/* T1 of the design's points with known costs and `noise` relative gaussian
 * error. */
static int synthetic(double noise, uint64_t seed, double *objects, double *pointers, double *t1)
{
    int n = _gcs_calibrate_cost_design(objects, pointers, 64);
    uint64_t rng = seed;
    for (int i = 0; i < n; i++)
        t1[i] = (C0 + COBJ * objects[i] + CPTR * pointers[i]) * (1 + noise * normal(&rng));
    return n;
}

/* Without noise the fit is exact; the design is well conditioned. */
static void test_fit_recovers_exact_costs(void **state)
{
    (void)state;
    double o[64], q[64], t[64];
    int n = synthetic(0, 1, o, q, t);
    assert_true(n >= 10);
    gcs_cost_fit fit;
    gcs_err err;
    char buf[256];
    assert_int_equal(_gcs_calibrate_cost_fit(n, o, q, t, &fit, &err), 0);
    assert_true(fabs(fit.coef[0] - C0) < 1e-6 * C0);
    assert_true(fabs(fit.coef[1] - COBJ) < 1e-9);
    assert_true(fabs(fit.coef[2] - CPTR) < 1e-9);
    assert_true(fit.rms_rel < 1e-9);
    assert_true(fit.cond >= 1 && fit.cond < 10); /* 4.3 on the measured T1 */
    assert_int_equal(fit.dof, n - 3);
    assert_null(_gcs_calibrate_cost_fit_problem(&fit, buf, sizeof buf));
}

/* With 3% noise (the development VM's points scatter 2-3% between runs),
 * the 95% intervals cover the true costs in about 95% of fits, each fit is
 * usable, and the intervals are narrow compared with the costs. */
static void test_fit_intervals_cover_the_truth(void **state)
{
    (void)state;
    int covered[3] = {0, 0, 0}, usable = 0;
    const int fits = 200;
    for (int s = 0; s < fits; s++) {
        double o[64], q[64], t[64];
        int n = synthetic(0.03, 0x1234 + (uint64_t)s * 7919, o, q, t);
        gcs_cost_fit fit;
        gcs_err err;
        char buf[256];
        assert_int_equal(_gcs_calibrate_cost_fit(n, o, q, t, &fit, &err), 0);
        const double truth[3] = {C0, COBJ, CPTR};
        for (int k = 0; k < 3; k++) {
            covered[k] += fit.ci95[k][0] <= truth[k] && truth[k] <= fit.ci95[k][1];
            assert_true(fit.se[k] > 0 && isfinite(fit.se[k]));
            assert_true(fit.ci95[k][0] < fit.coef[k] && fit.coef[k] < fit.ci95[k][1]);
        }
        usable += _gcs_calibrate_cost_fit_problem(&fit, buf, sizeof buf) == NULL;
        assert_true(fabs(fit.corr_object_pointer) < 0.9); /* the split is determined */
    }
    for (int k = 0; k < 3; k++)
        assert_true(covered[k] >= fits * 88 / 100 && covered[k] <= fits * 99 / 100);
    assert_true(usable >= fits * 95 / 100);
}

/* Every heap with the same pointer density: objects and pointers are
 * proportional, the condition number is huge and the fit is flagged. */
static void test_degenerate_design_is_flagged(void **state)
{
    (void)state;
    double o[12], q[12], t[12];
    for (int i = 0; i < 12; i++) {
        o[i] = 4096.0 * (1 + i % 3);
        q[i] = 8 * o[i];
        t[i] = C0 + COBJ * o[i] + CPTR * q[i];
    }
    gcs_cost_fit fit;
    gcs_err err;
    char buf[256];
    assert_int_equal(_gcs_calibrate_cost_fit(12, o, q, t, &fit, &err), 0);
    assert_true(fit.cond >= 1e6);
    const char *why = _gcs_calibrate_cost_fit_problem(&fit, buf, sizeof buf);
    assert_non_null(why);
    assert_non_null(strstr(why, "do not separate the object and pointer costs"));
    /* nearly the same density (8 and 8.01 pointers per object): still flagged */
    for (int i = 0; i < 12; i++) {
        q[i] = (i % 2 ? 8.01 : 8) * o[i];
        t[i] = (C0 + COBJ * o[i] + CPTR * q[i]) * (1 + 0.01 * (i % 3 - 1));
    }
    assert_int_equal(_gcs_calibrate_cost_fit(12, o, q, t, &fit, &err), 0);
    assert_true(fit.cond > GCS_COST_COND_MAX);
    assert_non_null(_gcs_calibrate_cost_fit_problem(&fit, buf, sizeof buf));
    /* the JSON has no infinity: a singular design's figures are numbers or null */
    json_t *u = _gcs_calibrate_cost_fit_uncertainty(&fit);
    assert_non_null(json_object_get(u, "gc_cost_ns.object"));
    assert_non_null(json_object_get(u, "gc_cost_ns.pointer"));
    json_decref(u);
}

/* Noise only (T1 unrelated to the heap), and the minimum of points: flagged,
 * never a silent pair of costs. */
static void test_noise_and_too_few_points_are_flagged(void **state)
{
    (void)state;
    double o[64], q[64], t[64];
    int n = _gcs_calibrate_cost_design(o, q, 64);
    uint64_t rng = 99;
    for (int i = 0; i < n; i++)
        t[i] = 100000 * (1 + 0.3 * normal(&rng));
    gcs_cost_fit fit;
    gcs_err err;
    char buf[256];
    assert_int_equal(_gcs_calibrate_cost_fit(n, o, q, t, &fit, &err), 0);
    assert_non_null(_gcs_calibrate_cost_fit_problem(&fit, buf, sizeof buf));
    /* three points, three unknowns: exact, but no interval */
    assert_int_equal(_gcs_calibrate_cost_fit(3, o + 2, q + 2, t + 2, &fit, &err), 0);
    assert_int_equal(fit.dof, 0);
    assert_false(isfinite(fit.se[1]));
    const char *why = _gcs_calibrate_cost_fit_problem(&fit, buf, sizeof buf);
    assert_non_null(why);
    json_t *u = _gcs_calibrate_cost_fit_uncertainty(&fit);
    assert_true(json_is_null(json_object_get(json_object_get(u, "gc_cost_ns.object"), "stderr")));
    json_decref(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_costs_are_fitted_and_positive),
        cmocka_unit_test(test_steal_fit),
        cmocka_unit_test(test_steal_cost_key),
        cmocka_unit_test(test_class_slope),
        cmocka_unit_test(test_null_switch_heap_counts),
        cmocka_unit_test(test_refuses_when_a_collector_runs),
        cmocka_unit_test(test_fit_recovers_exact_costs),
        cmocka_unit_test(test_fit_intervals_cover_the_truth),
        cmocka_unit_test(test_degenerate_design_is_flagged),
        cmocka_unit_test(test_noise_and_too_few_points_are_flagged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
