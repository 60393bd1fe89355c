/* classcost.c -- the marker's per-class costs: gc_class_cost_ns.chain,
 * .array_element and .null_switch (model v2, docs/model.md "Serial work").
 *
 * gc_cost_ns prices an object and an edge as the mark loop's main path
 * spends them: pushed, popped through the prefetch FIFO, tested, scanned.
 * Two kinds of step take other paths in gc/mark.c and cost far less:
 *   - a chain step: an object of one pointer field with nothing else
 *     pending is followed directly, without a push, a pop or the FIFO;
 *   - an element of a large pointer array, examined in place, whose
 *     pointer-free child is marked without reading its header.
 * gccost.c leaves single-pointer objects out of its heaps for that reason.
 * Here each class has a heap of its own, made of nothing but that step: a
 * linked list allocated in order, and one array of pointer-free leaves.
 * Both are cache resident (the sizes of the cost heaps), so, as for
 * gc_cost_ns, the misses are priced apart by the model; the cost per step
 * is the slope of the fastest busy time T1 at P = 1 over three sizes (the
 * intercept absorbs the mark phase's fixed cost).
 *
 *
 * A NULL test whose outcome switches is a third class: gc_cost_ns is
 * fitted on heaps without NULL fields (gccost.c), yet where NULL and
 * non-NULL fields mix, the marker's NULL test is a branch the predictor
 * misses.  The model counts the switches, the tests whose outcome differs
 * from the same test's last one (model/replay.c; a tree's leaves, all NULL,
 * switch only where leaves and inner nodes alternate).  Their heap is a
 * binary tree of four-field objects whose two extra fields are each NULL or
 * point to an ancestor at random, half and half (an ancestor is marked
 * already, so its own test always fails, as the predictor learns); the
 * fields are read last to first and the first is never NULL, so each
 * object's switches are known from its own fields whatever the mark order.
 * The cost is the slope over three sizes of what gc_cost_ns leaves of T1,
 * T1 - c_obj objects - c_ptr pointers, against the switches.
 *
 * Needs a running collector (gccost.c calls it before shutting down). */
#include <math.h>
#include <string.h>

#include "../common/internal.h"
#include "gcscale/gc.h"
#include "calibrate_internal.h"

int _gcs_calibrate_class_slope(int n, const double *x, const double *y, double *slope, double *fixed,
                               double *rms_rel)
{
    gcs_assert_internal(n >= 2);
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i] / n;
        my += y[i] / n;
    }
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0))
        return -1; /* one size only: no slope */
    *slope = sxy / sxx;
    *fixed = my - *slope * mx;
    double ss = 0;
    for (int i = 0; i < n; i++) {
        double r = (*fixed + *slope * x[i] - y[i]) / y[i];
        ss += r * r;
    }
    *rms_rel = sqrt(ss / n);
    return 0;
}

typedef enum { CLASS_CHAIN, CLASS_ARRAY } step_class;

/* A heap of `steps` steps of one class under *root; 0, or -1 when the
 * collector's heap is exhausted.  Allocated in order, as the corpus's list
 * and wide shapes are. */
static int build(step_class cls, long steps, void **root, void **all)
{
    *root = NULL;
    if (cls == CLASS_CHAIN) {
        for (long i = 0; i < steps; i++)
            if (!(all[i] = gcs_gc_alloc(16, 1)))
                return -1;
        for (long i = 0; i < steps; i++)
            ((void **)all[i])[0] = i + 1 < steps ? all[i + 1] : NULL;
        *root = all[0];
        return 0;
    }
    void **array = gcs_gc_alloc(8 * (size_t)steps, (size_t)steps);
    if (!array)
        return -1;
    *root = array; /* a root already: the leaves below are reachable as made */
    for (long i = 0; i < steps; i++)
        if (!(array[i] = gcs_gc_alloc_data(16)))
            return -1;
    return 0;
}

/* The NULL-switch heap (above): n objects of NULL_FIELDS pointer fields,
 * object i's fields 0 and 1 its children 2i + 1 and 2i + 2 (or, past the
 * end, its ancestors, as gccost.c's tree+ancestors heap), each further
 * field NULL or an ancestor with probability 1/2.  Counts its non-NULL
 * fields (edges), NULL ones and the switches of the marker's NULL test,
 * which reads an object's fields last to first: from the object before's
 * field 0 (never NULL) down to its own field 0 (never NULL). */
#define NULL_FIELDS 4
int _gcs_calibrate_null_heap(long n, void **root, void **all, long *edges, long *nulls, long *switches)
{
    uint64_t rng = 0x6E554C4C5F434F53ull ^ (uint64_t)n;
    *root = NULL;
    *edges = *nulls = *switches = 0;
    for (long i = 0; i < n; i++)
        if (!(all[i] = gcs_gc_alloc(8 * NULL_FIELDS + 8, NULL_FIELDS)))
            return -1;
    for (long i = 0; i < n; i++) {
        void **f = all[i];
        long up[64];
        int depth = 0;
        for (long a = i; a > 0 && depth < 64; a = (a - 1) / 2)
            up[depth++] = (a - 1) / 2;
        for (int j = 0, k = 0; j < NULL_FIELDS; j++) {
            long child = j < 2 ? 2 * i + 1 + j : -1;
            if (j >= 2 && gcs_random_below(&rng, 2)) {
                f[j] = NULL;
                (*nulls)++;
                continue;
            }
            if (child < 0 || child >= n)
                child = depth ? up[k++ % depth] : 0; /* the root: itself */
            f[j] = all[child];
            (*edges)++;
        }
        int last = 0; /* field 0 of the object marked before: never NULL */
        for (int j = NULL_FIELDS - 1; j >= 0; j--) {
            int is_null = f[j] == NULL;
            *switches += is_null != last;
            last = is_null;
        }
    }
    *root = all[0];
    return 0;
}

/* The fastest busy time of `reps` marks after one warm-up, as gccost.c's
 * timed_marks (interference only ever adds time). */
static double fastest_mark(int reps)
{
    gcs_gc_stats st;
    gcs_gc_set_threads(1);
    gcs_gc_collect();
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        gcs_gc_collect();
        gcs_gc_last_stats(&st);
        best = fmin(best, (double)st.t1_ns);
    }
    return best;
}

/* gc_class_cost_ns.null_switch into p (above), its details into out;
 * coef[1], coef[2]: gc_cost_ns.object and .pointer of this run.  -1 with err
 * set when a heap cannot be built or the heaps give no slope. */
static int null_cost(int reps, const double *coef, void **root, void **all, long max_objects, gcs_profile *p,
                     json_t *out, gcs_err *err)
{
    static const long bytes[] = {192 << 10, 384 << 10, 768 << 10};
    long object_bytes = (8 * NULL_FIELDS + 8 + 8 + 15) / 16 * 16; /* payload and header, in granules */
    double x[3], y[3];
    json_t *pts = json_array();
    for (int z = 0; z < 3; z++) {
        long n = bytes[z] / object_bytes, edges, nulls, switches;
        if (n > max_objects || _gcs_calibrate_null_heap(n, root, all, &edges, &nulls, &switches) < 0) {
            *root = NULL;
            json_decref(pts);
            gcs_err_set(err, "gc class costs: heap exhausted building the null_switch heap");
            return -1;
        }
        double t1 = fastest_mark(reps);
        *root = NULL;
        x[z] = (double)switches;
        y[z] = t1 - coef[1] * (double)n - coef[2] * (double)edges;
        json_array_append_new(pts, json_pack("{s:I, s:I, s:I, s:I, s:f, s:f}", "objects", (json_int_t)n, "pointers",
                                             (json_int_t)edges, "null_fields", (json_int_t)nulls, "null_switches",
                                             (json_int_t)switches, "t1_ns", t1, "beyond_gc_cost_ns", y[z]));
    }
    double slope, fixed, rms;
    if (_gcs_calibrate_class_slope(3, x, y, &slope, &fixed, &rms) < 0) {
        json_decref(pts);
        gcs_err_set(err, "gc class costs: the null_switch heaps gave no slope");
        return -1;
    }
    /* A switch costs at least nothing: a slope below 0 is the noise of
     * c_obj and c_ptr, which it is measured against; kept as 0 and shown. */
    p->has_gc_null_switch = 1;
    p->gc_cost_null_switch_ns = slope > 0 ? slope : 0;
    json_object_set_new(out, "null_switch",
                        json_pack("{s:f, s:f, s:f, s:f, s:s, s:o}", "ns", p->gc_cost_null_switch_ns, "slope_ns", slope,
                                  "fixed_ns", fixed, "rms_rel_residual", rms, "model",
                                  "t1_ns - object_ns * objects - pointer_ns * pointers = fixed + ns * null_switches",
                                  "points", pts));
    return 0;
}

int _gcs_calibrate_class_costs(int reps, const double *coef, void **root, void **all, long max_objects,
                               gcs_profile *p, json_t **details, gcs_err *err)
{
    /* the cost heaps' sizes (gccost.c); a list node is 32 bytes with its
     * header, an element 8 bytes of array and a 32-byte leaf: the objects
     * of gc-bench's list and wide shapes (gcbench/shapes.c) */
    static const long bytes[] = {192 << 10, 384 << 10, 768 << 10};
    static const char *const names[] = {"chain", "array_element"};
    static const long step_bytes[] = {32, 40};
    double cost[2];
    json_t *out = json_object();
    for (int cls = 0; cls < 2; cls++) {
        double x[3], y[3];
        json_t *pts = json_array();
        for (int z = 0; z < 3; z++) {
            long steps = bytes[z] / step_bytes[cls];
            if (steps > max_objects || build((step_class)cls, steps, root, all) < 0) {
                *root = NULL;
                json_decref(pts);
                json_decref(out);
                gcs_err_set(err, "gc class costs: heap exhausted building the %s heap", names[cls]);
                return -1;
            }
            x[z] = (double)steps;
            y[z] = fastest_mark(reps);
            *root = NULL;
            json_array_append_new(pts, json_pack("{s:I, s:f}", "steps", (json_int_t)steps, "t1_ns", y[z]));
        }
        double fixed, rms;
        if (_gcs_calibrate_class_slope(3, x, y, &cost[cls], &fixed, &rms) < 0 || !(cost[cls] > 0)) {
            json_decref(pts);
            json_decref(out);
            gcs_err_set(err, "gc class costs: the %s heaps gave no positive cost per step; the machine was "
                             "probably busy, try again", names[cls]);
            return -1;
        }
        json_object_set_new(out, names[cls], json_pack("{s:f, s:f, s:f, s:o}", "ns", cost[cls], "fixed_ns", fixed,
                                                       "rms_rel_residual", rms, "points", pts));
    }
    p->has_gc_class_cost = 1;
    p->gc_cost_chain_ns = cost[CLASS_CHAIN];
    p->gc_cost_array_element_ns = cost[CLASS_ARRAY];
    /* optional within the optional step: without it the profile keeps the
     * two classes and says why */
    p->has_gc_null_switch = 0;
    gcs_err null_err = {{0}};
    if (null_cost(reps, coef, root, all, max_objects, p, out, &null_err) < 0)
        json_object_set_new(out, "null_switch", json_pack("{s:s}", "not_measured", null_err.msg));
    json_object_set_new(out, "model", json_string("t1_ns = fixed + ns * steps, fastest of reps, P = 1"));
    json_object_set_new(out, "reps", json_integer(reps));
    *details = out;
    return 0;
}
