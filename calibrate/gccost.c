/* gccost.c -- the marker's own costs: gc_cost_ns.object, .pointer, .steal.
 *
 * The model prices the serial mark as T1 = c_obj * objects + c_ptr * pointer
 * fields (model-notes 1.1), with cache misses priced separately from the
 * memory latencies.  So the costs must be measured where misses are rare: on
 * heaps small enough to stay in the caches after a warm-up collection.  We
 * build heaps of varied shape (lists with back-pointers, k-ary trees), time
 * the collector's real mark at P = 1 (its busy time T1, the fastest of several
 * collections of the same heap), and fit
 *     T1 = c0 + c_obj * objects + c_ptr * pointers
 * by ordinary least squares (GSL).  c0 absorbs the fixed cost of starting and
 * ending a mark phase; it is reported but not part of the profile.
 *
 * "Pointers" are non-NULL pointer fields, the edges of the object graph: the
 * marker pushes, pops and tests each of them (about 7 ns here), while a NULL
 * field costs one load and test (under 1 ns), which we leave to c_obj.  A
 * list whose objects have a single pointer field is excluded: the marker
 * follows such chains directly, without the stack, at a lower cost that a
 * per-edge price cannot describe.
 *
 * The steal cost is the extra busy time per successful steal when the same
 * cache-resident tree is marked by two workers: (T1(P=2) - T1(P=1)) / steals.
 * It needs at least two CPUs; with one it is reported as not measured (0).
 *
 * Calls the collector's public API (gc.h) only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "../common/internal.h"
#include "gcscale/calibrate.h"
#include "gcscale/gc.h"

typedef enum heap_shape { SHAPE_LIST_BACKREFS, SHAPE_TREE, SHAPE_TREE_CROSS } heap_shape;

typedef struct cost_point {
    heap_shape shape;
    int fields;             /* pointer fields per object */
    long objects;           /* objects the heap holds */
    double objects_marked;  /* as the collector counted them */
    double pointers;        /* non-NULL pointer fields: the graph's edges */
    double t1_ns;           /* median busy time at P = 1 */
} cost_point;

static const char *shape_name(heap_shape s)
{
    return s == SHAPE_TREE ? "tree" : s == SHAPE_TREE_CROSS ? "tree+cross" : "list+backrefs";
}

/* Builds the heap under the root slot *root.  Objects are kept in `all` while
 * building; no collection can run meanwhile because the heap limit is far
 * above what we allocate and no allocation budget is set. */
static int build_heap(heap_shape shape, int fields, long n, void **root, void **all, long *edges)
{
    *edges = 0;
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(fields * 7919 + n);
    for (long i = 0; i < n; i++) {
        all[i] = gcs_gc_alloc(8 * (size_t)fields + 8, (size_t)fields);
        if (!all[i])
            return -1;
    }
    for (long i = 0; i < n; i++) {
        void **f = all[i];
        if (shape == SHAPE_TREE_CROSS) {
            /* A binary tree (fields 0, 1) whose other fields point to
             * uniformly random objects: a bushy graph with shared objects,
             * closer to a program's heap than a pure tree. */
            for (int j = 0; j < fields; j++) {
                long child = j < 2 ? 2 * i + 1 + j : (long)(gcs_random_next(&rng) % (uint64_t)n);
                f[j] = child < n ? all[child] : NULL;
                *edges += child < n;
            }
        } else if (shape == SHAPE_TREE) {
            /* k-ary tree in breadth-first numbering: children of i are k*i+1..k*i+k. */
            for (int j = 0; j < fields; j++) {
                long child = (long)fields * i + 1 + j;
                f[j] = child < n ? all[child] : NULL;
                *edges += child < n;
            }
        } else {
            /* A list (field 0) whose other fields point back to one of the 8
             * objects before: every pointer is followed to a marked object,
             * and the target is still in the L1 cache, so no miss is priced. */
            f[0] = i + 1 < n ? all[i + 1] : NULL;
            for (int j = 1; j < fields; j++) {
                long back = 1 + (long)(gcs_random_next(&rng) % 8);
                f[j] = all[i >= back ? i - back : 0];
            }
            *edges += (i + 1 < n) + (fields - 1);
        }
    }
    *root = all[0];
    return 0;
}

/* Collects `reps` times after one warm-up and returns the smallest T1 (and
 * the steals of that collection).  The smallest, not the median: these
 * collections last tens of microseconds, and on a shared machine any
 * interference (another process, an interrupt) only ever adds time, so the
 * fastest repetition is the best estimate of the marker's own cost. */
static double timed_marks(int threads, int reps, cost_point *pt, double *steals)
{
    double t1[32], st[32];
    int best = 0;
    gcs_gc_stats stats;
    gcs_gc_set_threads(threads);
    gcs_gc_collect(); /* warm-up: brings the heap and mark tables into cache */
    for (int r = 0; r < reps; r++) {
        gcs_gc_collect();
        gcs_gc_last_stats(&stats);
        t1[r] = (double)stats.t1_ns;
        st[r] = (double)stats.steals;
        if (t1[r] < t1[best])
            best = r;
    }
    if (pt) {
        pt->objects_marked = (double)stats.objects_marked;
    }
    if (steals)
        *steals = st[best];
    return t1[best];
}

static json_t *point_json(const cost_point *p, double fitted)
{
    return json_pack("{s:s, s:i, s:I, s:f, s:f, s:f, s:f}", "shape", shape_name(p->shape), "fields",
                     p->fields, "objects", (json_int_t)p->objects, "pointers", p->pointers,
                     "t1_ns", p->t1_ns, "fitted_ns", fitted,
                     "residual", (fitted - p->t1_ns) / p->t1_ns);
}

/* Least squares T1 = c0 + c_obj * objects + c_ptr * pointers. */
static int fit_costs(const cost_point *pts, int n, double coef[3], double *rms_rel, gcs_err *err)
{
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, 3);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *c = gsl_vector_alloc(3);
    gsl_matrix *cov = gsl_matrix_alloc(3, 3);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)n, 3);
    int rc = -1;
    /* three unknowns need three points; every point's T1 was measured > 0 */
    gcs_assert_internal(n >= 3);
    for (int i = 0; i < n; i++)
        gcs_assert_internal(pts[i].t1_ns > 0);
    if (!X || !y || !c || !cov || !w) {
        gcs_err_set(err, "gc costs: out of memory");
        goto done;
    }
    /* Weighting each row by 1/T1 fits relative errors, so that the small
     * heaps count as much as the large ones. */
    for (int i = 0; i < n; i++) {
        double s = 1.0 / pts[i].t1_ns;
        gsl_matrix_set(X, (size_t)i, 0, s);
        gsl_matrix_set(X, (size_t)i, 1, pts[i].objects_marked * s);
        gsl_matrix_set(X, (size_t)i, 2, pts[i].pointers * s);
        gsl_vector_set(y, (size_t)i, 1.0);
    }
    double chisq;
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    int status = gsl_multifit_linear(X, y, c, cov, &chisq, w);
    gsl_set_error_handler(previous);
    if (status != GSL_SUCCESS) {
        gcs_err_set(err, "gc costs: least squares failed: %s", gsl_strerror(status));
        goto done;
    }
    for (int k = 0; k < 3; k++)
        coef[k] = gsl_vector_get(c, (size_t)k);
    *rms_rel = sqrt(chisq / n);
    rc = 0;
done:
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(c);
    gsl_matrix_free(cov);
    if (w)
        gsl_multifit_linear_free(w);
    return rc;
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
        for (int threads = 2; threads <= max_threads && n < 3 * 8; threads++) {
            double st[16];
            gcs_gc_stats stats;
            gcs_gc_set_threads(threads);
            gcs_gc_collect();
            for (int r = 0; r < reps; r++) {
                gcs_gc_collect();
                gcs_gc_last_stats(&stats);
                st[r] = (double)stats.steals;
            }
            double steals = gcs_stats_median(st, (size_t)reps);
            x[n] = log(t1_model);
            y[n] = steals / (threads - 1);
            json_array_append_new(jpoints, json_pack("{s:i, s:i, s:f, s:f}", "objects", (int)sizes[z],
                                                     "threads", threads, "t1_model_ns", t1_model,
                                                     "steals_median", steals));
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

#define COST_ATTEMPTS 3
#define COST_RMS_RETRY 0.15

/* One measurement of every load point: lists with back-pointers and trees,
 * 2, 4 and 8 pointer fields, sizes[first..2]. */
static int measure_points(const long *sizes, int first, int reps, cost_point *pts, int *n, void **root,
                          void **all, gcs_err *err)
{
    static const int fields[] = {2, 4, 8};
    *n = 0;
    for (int s = 0; s < 2; s++) {
        heap_shape shape = s ? SHAPE_TREE : SHAPE_LIST_BACKREFS;
        for (int f = 0; f < 3; f++)
            for (int z = first; z < 3; z++) {
                cost_point *pt = &pts[*n];
                *pt = (cost_point){.shape = shape, .fields = fields[f], .objects = sizes[z]};
                long edges;
                if (build_heap(shape, fields[f], sizes[z], root, all, &edges) < 0) {
                    gcs_err_set(err, "gc costs: heap exhausted building a %ld-object heap", sizes[z]);
                    return -1;
                }
                pt->t1_ns = timed_marks(1, reps, pt, NULL);
                pt->pointers = (double)edges;
                (*n)++;
                *root = NULL;
                gcs_gc_collect(); /* frees the heap for the next shape */
            }
    }
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
    gcs_gc_options opts;
    gcs_gc_options_default(&opts);
    opts.heap_limit = 256u << 20;
    opts.threads = 1;
    opts.max_threads = two_workers ? (int)(online < 8 ? online : 8) : 1;
    opts.pin_workers = 1;
    opts.alloc_budget = 0;
    opts.log_path = "";   /* never log these private collections */
    if (gcs_gc_init(&opts, err) < 0)
        return -1;

    /* Heaps of 2k..16k objects (32 KiB .. 1.2 MiB): cache resident after the
     * warm-up on any machine with a megabyte-sized cache.  Quick mode takes
     * the two larger sizes: a 2k-object mark lasts ~10 us, where a few
     * hundred ns of noise is already a few percent. */
    static const long sizes[] = {2048, 8192, 16384};
    const int reps = quick ? 5 : 11;
    const int first_size = quick ? 1 : 0;
    cost_point pts[64];
    int n = 0;
    void *root = NULL;
    void **all = malloc(sizeof(void *) * (size_t)sizes[2]);
    json_t *jpoints = json_array();
    int rc = -1;
    if (!all || !jpoints || gcs_gc_add_root(&root) < 0) {
        gcs_err_set(err, "gc costs: out of memory");
        goto done;
    }
    /* A noisy moment (another process, the host of a VM) can bend the fit:
     * measure again, up to COST_ATTEMPTS times in all, while a cost comes out
     * non-physical or the fit misses its points by more than
     * COST_RMS_RETRY (relative rms); keep the best physical attempt. */
    double coef[3] = {0, 0, 0}, rms_rel = INFINITY;
    cost_point best[64];
    int attempts = 0, have_best = 0;
    while (attempts < COST_ATTEMPTS && !(have_best && rms_rel <= COST_RMS_RETRY)) {
        attempts++;
        if (measure_points(sizes, first_size, reps, pts, &n, &root, all, err) < 0)
            goto done;
        double c[3], r;
        if (fit_costs(pts, n, c, &r, err) < 0)
            goto done;
        if (c[1] > 0 && c[2] >= 0 && (!have_best || r < rms_rel)) {
            memcpy(coef, c, sizeof coef);
            memcpy(best, pts, sizeof best);
            rms_rel = r;
            have_best = 1;
        } else if (!have_best) {
            memcpy(coef, c, sizeof coef); /* for the message below */
        }
    }
    if (!have_best) {
        gcs_err_set(err, "gc costs: fit gave non-physical costs (object %.3g ns, pointer %.3g ns) in "
                         "%d attempts; the machine was probably busy, try again", coef[1], coef[2],
                    attempts);
        goto done;
    }
    for (int i = 0; i < n; i++)
        json_array_append_new(jpoints, point_json(&best[i], coef[0] + coef[1] * best[i].objects_marked +
                                                                coef[2] * best[i].pointers));

    /* Steal cost: the same binary tree marked by one and by two workers. */
    double steal_ns = 0, steals = 0, t1_one = NAN, t1_two = NAN;
    const char *steal_note = "measured";
    if (two_workers) {
        long edges;
        if (build_heap(SHAPE_TREE, 2, sizes[2], &root, all, &edges) < 0) {
            gcs_err_set(err, "gc costs: heap exhausted building the steal heap");
            goto done;
        }
        t1_one = timed_marks(1, reps, NULL, NULL);
        t1_two = timed_marks(2, reps, NULL, &steals);
        if (steals > 0 && t1_two > t1_one)
            steal_ns = (t1_two - t1_one) / steals;
        else
            steal_note = steals > 0 ? "no extra work measured with two workers (0)"
                                    : "no steals happened (0)";
        root = NULL;
    } else {
        steal_note = "not measured: one CPU (0)";
    }

    json_t *steal_fit = NULL;
    if (two_workers && fit_steals(quick, opts.max_threads, coef, &root, p, &steal_fit, err) < 0)
        goto done;
    root = NULL;
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = coef[1];
    p->gc_cost_pointer_ns = coef[2];
    p->gc_cost_steal_ns = steal_ns;
    *details = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:f, s:f, s:i, s:i, s:o, s:o*}",
                         "model", "t1_ns = fixed + object * objects + pointer * pointers",
                         "object_ns", coef[1], "pointer_ns", coef[2], "fixed_ns", coef[0],
                         "rms_rel_residual", rms_rel, "steal_ns", steal_ns, "steal_note", steal_note,
                         "steal_t1_one_ns", isfinite(t1_one) ? t1_one : 0.0,
                         "steal_t1_two_ns", isfinite(t1_two) ? t1_two : 0.0, "steals", steals,
                         "reps", reps, "attempts", attempts, "points", jpoints, "steal_fit", steal_fit);
    jpoints = NULL;
    rc = 0;
done:
    json_decref(jpoints);
    gcs_gc_remove_root(&root);
    free(all);
    gcs_gc_shutdown();
    return rc;
}
