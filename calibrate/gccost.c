/* gccost.c -- the marker's own costs: gc_cost_ns.object, .pointer, .steal.
 *
 * The model prices the serial mark as T1 = c_obj * objects + c_ptr * pointer
 * fields (model-notes 1.1), with cache misses priced separately from the
 * memory latencies.  So the costs must be measured where misses are rare: on
 * heaps small enough to stay in the caches after a warm-up collection.  We
 * build heaps of one shape per pointer density, time the collector's real
 * mark at P = 1 (its busy time T1, the fastest of several collections of the
 * same heap), and fit
 *     T1 = c0 + c_obj * objects + c_ptr * pointers
 * (costfit.c, which also says how far the split can be trusted).  c0 absorbs
 * the fixed cost of starting and ending a mark phase; it is reported but not
 * part of the profile.
 *
 * "Pointers" are non-NULL pointer fields, the edges of the object graph: the
 * marker pushes, pops and tests each of them, while a NULL field costs one
 * load and test.  Only the densities tell the two costs apart: a heap where
 * every object is reached by one pointer has as many pointers as objects,
 * and fixes only c_obj + c_ptr; so the heaps range from one pointer per
 * object (pointer-free leaves under hubs or a binary tree) to 32 (objects of
 * 32 fields pointing at random objects), and none has NULL fields, whose
 * cost would blur the two.  Single-pointer objects are left out: the marker
 * follows such chains directly, at a lower cost that a per-edge price cannot
 * describe.
 *
 * The steal cost and the worker cost are what a successful steal and one
 * more worker add to the summed busy time when the same cache-resident tree
 * is marked by one worker and by P (steal_samples, stealfit.c).  They need
 * at least two CPUs; with one they are reported as not measured (0).
 *
 * Calls the collector's public API (gc.h) only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/internal.h"
#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "calibrate_internal.h"

typedef enum heap_shape {
    SHAPE_TREE,        /* k-ary tree, NULL fields at the leaves: the steal cost */
    SHAPE_TREE_CROSS,  /* binary tree + random edges, NULLs at the leaves: the steal fit */
    SHAPE_FAN,         /* hubs of `fields` fields: the next hub and pointer-free leaves */
    SHAPE_TREE_LEAVES, /* binary tree whose leaves have no pointer field */
    SHAPE_GRAPH,       /* `fields` non-NULL fields each: a binary tree + edges to ancestors */
} heap_shape;

/* The cost heaps (docs/microbench.md, "Marker costs", for why these).  Their
 * pointer densities (pointers per object) are 1, 1, 2, 8 and 32, and no
 * field is NULL: a NULL field costs a load and a test that neither cost
 * describes, and trees with more NULL fields per object made the earlier
 * fits miss their points by 15% (issue #27). */
typedef struct cost_heap {
    heap_shape shape;
    int fields;
} cost_heap;

static const cost_heap cost_heaps[] = {
    {SHAPE_FAN, 32}, {SHAPE_TREE_LEAVES, 2}, {SHAPE_GRAPH, 2}, {SHAPE_GRAPH, 8}, {SHAPE_GRAPH, 32},
};
#define COST_HEAPS (int)(sizeof cost_heaps / sizeof cost_heaps[0])

/* Heap sizes in bytes: cache resident after the warm-up on any machine with
 * a megabyte of L2 (mark tables included), and long enough to mark (about
 * 20-200 us) that a few hundred ns of interference is a percent or two.
 * Quick mode measures them all too, with fewer collections: the points are
 * cheap (a few ms each) and the intervals narrow with their number. */
static const long cost_bytes[] = {192 << 10, 384 << 10, 768 << 10};
#define COST_SIZES 3
#define COST_POINTS_MAX (COST_HEAPS * COST_SIZES)
#define COST_OBJECTS_MAX ((768 << 10) / 16) /* all leaves: the smallest object */

/* Bytes an object of `fields` pointer fields takes: gcs_gc_alloc(8 * fields
 * + 8) and its 8-byte header, in 16-byte granules. */
static long object_bytes(int fields)
{
    return (8L * fields + 16 + 15) / 16 * 16;
}

/* Objects and pointers (non-NULL fields) of a cost heap of about `bytes`. */
static void heap_size(const cost_heap *h, long bytes, long *objects, double *pointers)
{
    if (h->shape == SHAPE_FAN) { /* per hub: the hub and fields - 1 leaves */
        long hubs = bytes / (object_bytes(h->fields) + (h->fields - 1) * object_bytes(0));
        *objects = hubs * h->fields;
        *pointers = (double)(*objects - 1);
    } else if (h->shape == SHAPE_TREE_LEAVES) { /* m internal nodes, m + 1 leaves */
        long m = bytes / (object_bytes(2) + object_bytes(0));
        *objects = 2 * m + 1;
        *pointers = (double)(*objects - 1);
    } else {
        *objects = bytes / object_bytes(h->fields);
        *pointers = (double)*objects * h->fields;
    }
}

int _gcs_calibrate_cost_design(double *objects, double *pointers, int max)
{
    int n = 0;
    for (int h = 0; h < COST_HEAPS; h++)
        for (int z = 0; z < COST_SIZES && n < max; z++, n++) {
            long o;
            heap_size(&cost_heaps[h], cost_bytes[z], &o, &pointers[n]);
            objects[n] = (double)o;
        }
    return n;
}

typedef struct cost_point {
    heap_shape shape;
    int fields;             /* pointer fields per object (of the hubs, of the inner nodes) */
    long objects;           /* objects the heap holds */
    double objects_marked;  /* as the collector counted them */
    double pointers;        /* non-NULL pointer fields: the graph's edges */
    double t1_ns;           /* fastest busy time at P = 1 */
} cost_point;

static const char *shape_name(heap_shape s)
{
    static const char *const names[] = {"tree", "tree+cross", "fan", "tree+leaves", "tree+ancestors"};
    return names[s];
}

/* Builds the heap under the root slot *root.  Objects are kept in `all` while
 * building; no collection can run meanwhile because the heap limit is far
 * above what we allocate and no allocation budget is set. */
static int build_heap(heap_shape shape, int fields, long n, void **root, void **all, long *edges)
{
    *edges = 0;
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(fields * 7919 + n);
    for (long i = 0; i < n; i++) {
        int k = fields;
        if (shape == SHAPE_FAN && i % fields != 0)
            k = 0; /* a leaf */
        else if (shape == SHAPE_TREE_LEAVES && 2 * i + 2 >= n)
            k = 0; /* a leaf: n is odd, so inner nodes have both children */
        all[i] = gcs_gc_alloc(8 * (size_t)k + 8, (size_t)k);
        if (!all[i])
            return -1;
    }
    for (long i = 0; i < n; i++) {
        void **f = all[i];
        if (shape == SHAPE_FAN) {
            /* Hub i: field 0 the next hub, the others its own leaves. */
            if (i % fields != 0)
                continue;
            f[0] = i + fields < n ? all[i + fields] : NULL;
            for (int j = 1; j < fields; j++)
                f[j] = all[i + j];
            *edges += (i + fields < n) + (fields - 1);
        } else if (shape == SHAPE_TREE_LEAVES) {
            if (2 * i + 2 >= n)
                continue;
            f[0] = all[2 * i + 1];
            f[1] = all[2 * i + 2];
            *edges += 2;
        } else if (shape == SHAPE_TREE_CROSS) {
            /* A binary tree (fields 0, 1) whose other fields point to
             * uniformly random objects: a bushy graph with shared objects,
             * closer to a program's heap than a pure tree. */
            for (int j = 0; j < fields; j++) {
                long child = j < 2 ? 2 * i + 1 + j : (long)(gcs_random_next(&rng) % (uint64_t)n);
                f[j] = child < n ? all[child] : NULL;
                *edges += child < n;
            }
        } else if (shape == SHAPE_GRAPH) {
            /* A binary tree (fields 0, 1) whose other fields, and a leaf's
             * child fields, point to the object's ancestors, in turn from
             * the parent up: marked already when it is scanned, so the
             * marker's test of them always fails, as the branch predictor
             * learns (random targets make that test a coin toss, whose
             * mispredictions neither cost describes: docs/microbench.md);
             * and on the path from the root, so in the L1 cache. */
            long up[64];
            int depth = 0;
            for (long a = i; a > 0 && depth < 64; a = (a - 1) / 2)
                up[depth++] = (a - 1) / 2;
            for (int j = 0, k = 0; j < fields; j++) {
                long child = j < 2 ? 2 * i + 1 + j : n;
                if (child >= n)
                    child = depth ? up[k++ % depth] : 0; /* the root: itself */
                f[j] = all[child];
            }
            *edges += fields;
        } else {
            /* k-ary tree in breadth-first numbering: children of i are k*i+1..k*i+k. */
            for (int j = 0; j < fields; j++) {
                long child = (long)fields * i + 1 + j;
                f[j] = child < n ? all[child] : NULL;
                *edges += child < n;
            }
        }
    }
    *root = all[0];
    return 0;
}

/* Collects `reps` times after one warm-up and returns the smallest T1 (and
 * the steals and the searches that found work of that collection).  The
 * smallest, not the median: these collections last tens of microseconds,
 * and on a shared machine any interference (another process, an interrupt)
 * only ever adds time, so the fastest repetition is the best estimate of
 * the marker's own cost. */
static double timed_marks(int threads, int reps, cost_point *pt, double *steals, double *searches)
{
    double t1[32], st[32], se[32];
    int best = 0;
    gcs_gc_stats stats;
    gcs_gc_set_threads(threads);
    gcs_gc_collect(); /* warm-up: brings the heap and mark tables into cache */
    for (int r = 0; r < reps; r++) {
        gcs_gc_collect();
        gcs_gc_last_stats(&stats);
        t1[r] = (double)stats.t1_ns;
        st[r] = (double)stats.steals;
        se[r] = (double)stats.steal_searches;
        if (t1[r] < t1[best])
            best = r;
    }
    if (pt) {
        pt->objects_marked = (double)stats.objects_marked;
    }
    if (steals)
        *steals = st[best];
    if (searches)
        *searches = se[best];
    return t1[best];
}

static json_t *point_json(const cost_point *p, double fitted)
{
    return json_pack("{s:s, s:i, s:I, s:f, s:f, s:f, s:f}", "shape", shape_name(p->shape), "fields",
                     p->fields, "objects", (json_int_t)p->objects, "pointers", p->pointers,
                     "t1_ns", p->t1_ns, "fitted_ns", fitted,
                     "residual", (fitted - p->t1_ns) / p->t1_ns);
}

/* The steal count N_S, fitted to what the collector does (model-notes 1,
 * "better: fitted to steal counts measured by the GC").  The paper's
 * estimate is P ln T1; we keep its form but fit its coefficient,
 *     N_S = a (P - 1) ln T1,
 * with T1 in ns from the fitted costs, over trees with random cross edges of
 * three sizes marked by P = 2..max_threads workers (median steals of `reps`
 * collections): a is the median over the points of y / x, with
 * y = N_S / (P - 1) and x = ln T1.  With P - 1 the form is 0 at P = 1, as a
 * single worker never steals.  Least squares with a free intercept
 * (a ln T1 + b) fitted these noisy counts (0..130 steals over ln T1 =
 * 12.7..16.2) with slopes of 130 and 250 in two calibrations, predicting
 * 1300 steals for a 3 M-object random heap that the collector marks with
 * 180; one coefficient and a median extrapolate sanely.  The profile keeps
 * b (0) for hand-written fits.  The heaps are larger than the cost heaps, up to 16 MiB, because
 * steals need work worth stealing; their misses do not matter here. */
static int fit_steals(int quick, int max_threads, const double coef[3], void **root, gcs_profile *p,
                      json_t **out, gcs_err *err)
{
    static const long sizes[] = {16384, 131072, 524288};
    const int reps = quick ? 5 : 9;
    void **all = malloc(sizeof(void *) * (size_t)sizes[2]);
    json_t *jpoints = json_array();
    double x[3 * 8], y[3 * 8];
    int n = 0, rc = -1;
    if (!all || !jpoints) {
        gcs_err_set(err, "gc costs: out of memory");
        goto done;
    }
    for (int z = 0; z < 3; z++) {
        long edges;
        if (build_heap(SHAPE_TREE_CROSS, 3, sizes[z], root, all, &edges) < 0) {
            gcs_err_set(err, "gc costs: heap exhausted building the steal-fit heap");
            goto done;
        }
        double t1_model = coef[1] * (double)sizes[z] + coef[2] * (double)edges;
        /* the summed busy time of one worker, against which each P's extra
         * busy time per steal is reported (the smallest, as timed_marks) */
        double t1_one = timed_marks(1, reps, NULL, NULL, NULL);
        for (int threads = 2; threads <= max_threads && n < 3 * 8; threads++) {
            double st[16], se[16], t1_min = INFINITY;
            gcs_gc_stats stats;
            gcs_gc_set_threads(threads);
            gcs_gc_collect();
            for (int r = 0; r < reps; r++) {
                gcs_gc_collect();
                gcs_gc_last_stats(&stats);
                st[r] = (double)stats.steals;
                se[r] = (double)stats.steal_searches;
                if ((double)stats.t1_ns < t1_min)
                    t1_min = (double)stats.t1_ns;
            }
            double steals = gcs_stats_median(st, (size_t)reps), searches = gcs_stats_median(se, (size_t)reps);
            x[n] = log(t1_model);
            y[n] = steals / (threads - 1);
            json_array_append_new(jpoints, json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f}", "objects", (int)sizes[z],
                                                     "threads", threads, "t1_model_ns", t1_model,
                                                     "steals_median", steals, "searches_median", searches,
                                                     "t1_one_ns", t1_one, "t1_min_ns", t1_min));
            n++;
        }
        *root = NULL;
        gcs_gc_collect();
    }
    /* a = the median of the points' y / x: one bouncing measurement (a
     * calibration once counted 10113 steals where its neighbours had 0 and
     * 109) must not set the slope, as it does in least squares. */
    double ratio[3 * 8], a = 0, b = 0, sumsq = 0;
    for (int i = 0; i < n; i++)
        ratio[i] = x[i] > 0 ? y[i] / x[i] : 0;
    if (n > 0)
        a = gcs_stats_median(ratio, (size_t)n);
    for (int i = 0; i < n; i++)
        sumsq += (y[i] - a * x[i]) * (y[i] - a * x[i]);
    p->has_gc_steals = 1;
    p->gc_steal_a = a;
    p->gc_steal_b = b;
    *out = json_pack("{s:s, s:f, s:f, s:f, s:i, s:o}", "model", "steals = a * (P - 1) * ln(T1 ns)",
                     "a", a, "b", b, "rms_residual", n ? sqrt(sumsq / n) : 0.0, "reps", reps,
                     "points", jpoints);
    jpoints = NULL;
    rc = 0;
done:
    json_decref(jpoints);
    free(all);
    return rc;
}

/* A noisy moment (another process, the host of a VM) can bend the fit, so
 * a fit that is not usable (_gcs_calibrate_cost_fit_problem: a cost not
 * positive, ill-conditioned, an interval too wide, a large residual) is
 * measured again, with COST_MORE_REPS more collections per heap each time,
 * up to COST_ATTEMPTS times in all. */
#define COST_ATTEMPTS 4
#define COST_MORE_REPS 4
_Static_assert(11 + COST_MORE_REPS * (COST_ATTEMPTS - 1) <= 32, "timed_marks keeps 32 collections");

/* One measurement of every cost heap at every size of the design. */
static int measure_points(int reps, cost_point *pts, int *n, void **root, void **all,
                          gcs_err *err)
{
    *n = 0;
    for (int h = 0; h < COST_HEAPS; h++)
        for (int z = 0; z < COST_SIZES; z++) {
            cost_point *pt = &pts[*n];
            long objects, edges;
            double pointers;
            heap_size(&cost_heaps[h], cost_bytes[z], &objects, &pointers);
            gcs_assert_internal(objects <= COST_OBJECTS_MAX);
            *pt = (cost_point){.shape = cost_heaps[h].shape, .fields = cost_heaps[h].fields,
                               .objects = objects};
            if (build_heap(pt->shape, pt->fields, objects, root, all, &edges) < 0) {
                gcs_err_set(err, "gc costs: heap exhausted building a %ld-object heap", objects);
                return -1;
            }
            /* the design's count, which the tests and the docs rely on */
            gcs_assert_internal((double)edges == pointers);
            pt->t1_ns = timed_marks(1, reps, pt, NULL, NULL);
            pt->pointers = (double)edges;
            (*n)++;
            *root = NULL;
            gcs_gc_collect(); /* frees the heap for the next shape */
        }
    return 0;
}

/* One fit of one attempt's points. */
static int fit_points(const cost_point *pts, int n, gcs_cost_fit *fit, gcs_err *err)
{
    double objects[COST_POINTS_MAX], pointers[COST_POINTS_MAX], t1[COST_POINTS_MAX];
    for (int i = 0; i < n; i++) {
        objects[i] = pts[i].objects_marked;
        pointers[i] = pts[i].pointers;
        t1[i] = pts[i].t1_ns;
    }
    return _gcs_calibrate_cost_fit(n, objects, pointers, t1, fit, err);
}

/* Whether attempt a (with its problem, NULL when usable) is better than the
 * best so far b: usable beats unusable, then the smaller residual. */
static int better_fit(const gcs_cost_fit *a, const char *a_problem, const gcs_cost_fit *b,
                      const char *b_problem)
{
    if (!a_problem != !b_problem)
        return !a_problem;
    return a->rms_rel < b->rms_rel;
}

static json_t *attempt_json(int reps, const gcs_cost_fit *fit, const char *problem)
{
    return json_pack("{s:i, s:f, s:f, s:f, s:f, s:s?}", "reps", reps, "object_ns", fit->coef[1],
                     "pointer_ns", fit->coef[2], "rms_rel_residual", fit->rms_rel, "condition_number",
                     fit->cond, "problem", problem);
}

/* What a steal, and one more worker, add to the summed busy time: the
 * steal heap (a binary tree in breadth-first numbering, cache-resident)
 * marked by one worker and then by P, STEAL_SAMPLES pairs at P = 2 and as
 * many at the largest P (up to 8) where there are more CPUs, each pair's
 * growth and steals kept (jsamples), and those whose thieves stole (a
 * pair with none, whose extra workers never marked, grew by 0 here)
 * fitted as
 *     growth = (P - 1) worker + steals x steal     (stealfit.c).
 * The growth does not follow the steals on a 2-vCPU guest: a pair with one
 * steal grew by 12.8 us, one with 21 by 14.2 us (docs/model.md, "Steal
 * work: per worker and per steal"), so the growth over the steals, the
 * estimate until 2026-11-29, moved 1.1-4.1 us between calibrations minutes
 * apart while the growth itself stayed at 11-19 us. */
enum { STEAL_SAMPLES = 6 };
static const long steal_objects = 16384;

static int steal_samples(int reps, int max_threads, uint64_t warmup_ns, void **root, void **all, json_t *jsamples,
                         gcs_steal_fit *f, gcs_err *err)
{
    long edges;
    if (build_heap(SHAPE_TREE, 2, steal_objects, root, all, &edges) < 0) {
        gcs_err_set(err, "gc costs: heap exhausted building the steal heap");
        return -1;
    }
    for (uint64_t t0 = gcs_now_ns(); gcs_now_ns() - t0 < warmup_ns;)
        for (int threads = 1; threads <= 2; threads++)
            timed_marks(threads, 5, NULL, NULL, NULL);
    int wide = max_threads > 2 ? max_threads : 0; /* the second P, where there is one */
    double workers[2 * STEAL_SAMPLES], steals[2 * STEAL_SAMPLES], growth[2 * STEAL_SAMPLES];
    int n = 0;
    for (int k = 0; k < STEAL_SAMPLES; k++)
        for (int threads = 2; threads; threads = threads == 2 ? wide : 0) {
            double st, se;
            double one = timed_marks(1, reps, NULL, NULL, NULL);
            double many = timed_marks(threads, reps, NULL, &st, &se);
            json_array_append_new(jsamples, json_pack("{s:i, s:f, s:f, s:f, s:f}", "threads", threads, "t1_one_ns",
                                                      one, "t1_two_ns", many, "steals", st, "searches", se));
            if (st > 0) { /* a pair whose thieves found nothing: the extra worker never marked */
                workers[n] = threads - 1;
                steals[n] = st;
                growth[n] = many - one;
                n++;
            }
        }
    *root = NULL;
    _gcs_calibrate_steal_fit(n, workers, steals, growth, f);
    return 0;
}

int gcs_calibrate_gc_costs(int quick, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "gc costs: a collector already runs in this process");
        return -1;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int two_workers = online >= 2;
    int max_threads = two_workers ? (int)(online < 8 ? online : 8) : 1;
    if (_gcs_calibrate_gc_init(256u << 20, max_threads, err) < 0)
        return -1;

    const int reps = quick ? 5 : 11;
    cost_point pts[COST_POINTS_MAX], best[COST_POINTS_MAX];
    int n = 0;
    void *root = NULL;
    void **all = malloc(sizeof(void *) * COST_OBJECTS_MAX);
    json_t *jpoints = json_array(), *jattempts = json_array(), *classes = NULL, *jsamples = json_array();
    int rc = -1;
    if (!all || !jpoints || !jattempts || !jsamples || gcs_gc_add_root(&root) < 0) {
        gcs_err_set(err, "gc costs: out of memory");
        goto done;
    }
    gcs_cost_fit fit = {0}, first = {0};
    char problem[256] = "", reason[256];
    int attempts = 0, have_best = 0, attempt_reps = reps;
    while (attempts < COST_ATTEMPTS && !(have_best && !problem[0])) {
        attempt_reps = reps + COST_MORE_REPS * attempts;
        attempts++;
        gcs_cost_fit f;
        if (measure_points(attempt_reps, pts, &n, &root, all, err) < 0 || fit_points(pts, n, &f, err) < 0)
            goto done;
        const char *why = _gcs_calibrate_cost_fit_problem(&f, reason, sizeof reason);
        json_array_append_new(jattempts, attempt_json(attempt_reps, &f, why));
        if (attempts == 1)
            first = f; /* for the message below */
        if (_gcs_calibrate_cost_fit_physical(&f) && (!have_best || better_fit(&f, why, &fit, problem[0] ? problem : NULL))) {
            fit = f;
            memcpy(best, pts, sizeof best);
            snprintf(problem, sizeof problem, "%s", why ? why : "");
            have_best = 1;
        }
    }
    if (!have_best) {
        gcs_err_set(err, "gc costs: fit gave non-physical costs (object %.3g ns, pointer %.3g ns) in "
                         "%d attempts; the machine was probably busy, try again", first.coef[1],
                    first.coef[2], attempts);
        goto done;
    }
    const double *coef = fit.coef;
    for (int i = 0; i < n; i++)
        json_array_append_new(jpoints, point_json(&best[i], coef[0] + coef[1] * best[i].objects_marked +
                                                                coef[2] * best[i].pointers));
    /* Kept, but flagged: the costs are positive, their split is in doubt. */
    char warning[512] = "";
    if (problem[0])
        snprintf(warning, sizeof warning,
                 "gc_cost_ns: %s after %d attempts, so the object/pointer split (%.2f / %.2f ns) is "
                 "uncertain; run `gcscale calibrate --gc-only` again on an idle machine",
                 problem, attempts, coef[1], coef[2]);

    /* The per-class costs (classcost.c, model v2): optional, a failure
     * leaves the profile without them (model v2 then prices those steps at
     * gc_cost_ns) and says why. */
    gcs_err class_err = {0};
    if (_gcs_calibrate_class_costs(reps, coef, &root, all, COST_OBJECTS_MAX, p, &classes, &class_err) < 0)
        classes = json_pack("{s:s}", "not_measured", class_err.msg);

    /* What a steal and one more worker add to the busy time (steal_samples,
     * above): on one CPU nothing can be measured. */
    gcs_steal_fit sfit;
    const char *steal_note = "measured";
    if (two_workers) {
        if (steal_samples(reps, max_threads, 0, &root, all, jsamples, &sfit, err) < 0)
            goto done;
        steal_note = sfit.note;
    } else {
        memset(&sfit, 0, sizeof sfit);
        steal_note = "not measured: one CPU (0)";
    }

    json_t *steal_fit = NULL;
    if (two_workers && fit_steals(quick, max_threads, coef, &root, p, &steal_fit, err) < 0)
        goto done;
    root = NULL;
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = coef[1];
    p->gc_cost_pointer_ns = coef[2];
    p->gc_cost_steal_ns = sfit.steal_ns;
    p->has_gc_cost_worker = two_workers;
    p->gc_cost_worker_ns = sfit.worker_ns;
    *details = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:i, s:i, s:o, s:o*}",
                         "model", "t1_ns = fixed + object * objects + pointer * pointers",
                         "object_ns", coef[1], "pointer_ns", coef[2], "fixed_ns", coef[0],
                         "rms_rel_residual", fit.rms_rel, "steal_ns", sfit.steal_ns, "steal_note", steal_note,
                         "worker_ns", sfit.worker_ns, "reps", reps, "attempts", attempts, "points", jpoints,
                         "steal_fit", steal_fit);
    if (two_workers)
        json_object_set_new(*details, "steal_cost_fit", _gcs_calibrate_steal_fit_json(&sfit));
    jpoints = NULL;
    json_object_set_new(*details, "steal_samples", jsamples);
    jsamples = NULL;
    /* How far to trust the split (costfit.c); the reps above are the first
     * attempt's, each attempt's own are in attempt_log. */
    json_object_set_new(*details, "condition_number", json_real(fit.cond));
    json_object_set_new(*details, "condition_number_max", json_real(GCS_COST_COND_MAX));
    json_object_set_new(*details, "object_pointer_correlation",
                        isfinite(fit.corr_object_pointer) ? json_real(fit.corr_object_pointer) : json_null());
    json_object_set_new(*details, "uncertainty", _gcs_calibrate_cost_fit_uncertainty(&fit));
    json_object_set_new(*details, "classes", classes);
    classes = NULL;
    json_object_set_new(*details, "attempt_log", jattempts);
    jattempts = NULL;
    json_object_set_new(*details, "warning", warning[0] ? json_string(warning) : json_null());
    rc = 0;
done:
    json_decref(jpoints);
    json_decref(jattempts);
    json_decref(classes);
    json_decref(jsamples);
    gcs_gc_remove_root(&root);
    free(all);
    gcs_gc_shutdown();
    return rc;
}

int _gcs_calibrate_steal_cost(int quick, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "gc steal cost: a collector already runs in this process");
        return -1;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 2) {
        gcs_err_set(err, "gc steal cost: needs two CPUs");
        return -1;
    }
    int max_threads = online < 8 ? (int)online : 8;
    if (_gcs_calibrate_gc_init(256u << 20, max_threads, err) < 0)
        return -1;
    void *root = NULL;
    void **all = malloc(sizeof(void *) * (size_t)steal_objects);
    json_t *jsamples = json_array();
    gcs_steal_fit f;
    int rc = -1;
    if (!all || !jsamples || gcs_gc_add_root(&root) < 0) {
        gcs_err_set(err, "gc steal cost: out of memory");
        goto done;
    }
    /* The collector fresh, its workers' caches and the CPU's clock cold:
     * the first marks of a new process took 1.5 times calibrate's (which
     * comes here after its cost heaps), so 0.3 s of marks first. */
    if (steal_samples(quick ? 5 : 11, max_threads, 300000000u, &root, all, jsamples, &f, err) < 0)
        goto done;
    gcs_profile_clear_fit_quality(p, "gc_cost_ns.steal");
    gcs_profile_clear_fit_quality(p, "gc_cost_ns.worker");
    p->gc_cost_steal_ns = f.steal_ns;
    p->has_gc_cost_worker = 1;
    p->gc_cost_worker_ns = f.worker_ns;
    *details = json_pack("{s:o, s:o}", "steal_cost_fit", _gcs_calibrate_steal_fit_json(&f), "steal_samples", jsamples);
    jsamples = NULL;
    _gcs_calibrate_steal_cost_uncertainty(p, *details);
    rc = 0;
done:
    json_decref(jsamples);
    gcs_gc_remove_root(&root);
    free(all);
    gcs_gc_shutdown();
    return rc;
}

int _gcs_calibrate_gc_init(size_t heap_limit, int max_threads, gcs_err *err)
{
    gcs_gc_options opts;
    gcs_gc_options_default(&opts);
    opts.heap_limit = heap_limit;
    opts.threads = 1;
    opts.max_threads = max_threads;
    opts.pin_workers = 1;
    opts.alloc_budget = 0; /* collections only when the step asks */
    opts.log_path = "";    /* never log these private collections */
    return gcs_gc_init(&opts, err);
}

/* ---- the speed probe ------------------------------------------------------------ */

/* One of the cost heaps (the 8-field tree with edges to ancestors, 384 KiB),
 * its fastest busy time at P = 1 in a collector of its own: a calibration
 * times it at its start and at its end, because a vCPU that shares its core
 * with other jobs can mark 1.5 times slower for minutes (docs/model.md, "P =
 * 1 on the Zen 3 entry"), and constants measured across such a change mix
 * two machines. */
#define PROBE_FIELDS 8
#define PROBE_BYTES (384L << 10)
#define PROBE_REPS 11

int _gcs_calibrate_speed_probe(double *t1_ns, gcs_err *err)
{
    *t1_ns = NAN;
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "speed probe: a collector already runs in this process");
        return -1;
    }
    const cost_heap h = {SHAPE_GRAPH, PROBE_FIELDS};
    long objects, edges;
    double pointers;
    heap_size(&h, PROBE_BYTES, &objects, &pointers);
    if (_gcs_calibrate_gc_init(256u << 20, 1, err) < 0)
        return -1;
    void *root = NULL;
    void **all = malloc(sizeof(void *) * (size_t)objects);
    int rc = -1;
    if (!all || gcs_gc_add_root(&root) < 0) {
        gcs_err_set(err, "speed probe: out of memory");
        goto done;
    }
    if (build_heap(h.shape, h.fields, objects, &root, all, &edges) < 0) {
        gcs_err_set(err, "speed probe: heap exhausted building a %ld-object heap", objects);
        goto done;
    }
    *t1_ns = timed_marks(1, PROBE_REPS, NULL, NULL, NULL);
    rc = 0;
done:
    gcs_gc_remove_root(&root);
    free(all);
    gcs_gc_shutdown();
    return rc;
}
