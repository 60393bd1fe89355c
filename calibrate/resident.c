/* resident.c -- what the marker's misses cost when the heap fits the
 * effective LLC: gc_resident, model v2's prices of a resident line
 * (docs/model.md, "Resident lines").
 *
 * gc_miss_overlap (overlap.c) and gc_stream_line_ns (stream.c) are fitted on
 * heaps of 4 x the effective LLC, so they price lines that come from
 * memory.  A heap that fits the LLC is in it when a collection starts (the
 * last collection, or the mutator, touched it), and there the marker hides
 * far more of each miss: an LLC hit returns sooner, so the FIFO and the
 * marker's own work cover more of it, and a stream from the LLC keeps ahead
 * of the marker.  Priced with the memory fits a resident heap came out about
 * twice its mark (docs/model.md, "Resident lines", has the measurements).
 * Both prices are properties of the marker on this machine, so, as those
 * two, only the real marker can measure them:
 *
 *   1. a random graph (overlap.c's) and a list (stream.c's) of the same
 *      number of 32-byte objects, sized between the private caches and the
 *      effective LLC (_gcs_calibrate_resident_objects), each marked at P = 1 in a
 *      collector of its own (median of reps after a warm-up);
 *   2. both inspected with the slow predictor;
 *   3. model v2 at P = 1 with every line resident (r = 1) is, on each heap,
 *      A + B x + C s in x = 1 / the resident overlap (a non-streamed miss
 *      waits llc_hit_ns x) and s, a streamed line's price: linear, so three
 *      evaluations give A, B, C;
 *   4. the two measured marks give two equations in (x, s), solved
 *      together: the random graph is mostly non-streamed misses and the
 *      list mostly sequential lines, but each has some of the other kind.
 * x is kept in [1 / (2 x FIFO), 1] (a resident miss waits at most the LLC's
 * latency, at least half a FIFO's share of it), s in [0.001 ns, the same
 * line's price from memory]; a bound that binds is said in the details,
 * and the other unknown is solved again from its own heap.
 *
 * Calls the collector's public gc.h, the snapshot and the model (inspect.h,
 * model.h), as overlap.c and stream.c do. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"
#include "gcscale/snapshot.h"
#include "calibrate_internal.h"

#define OBJECT_BYTES 32
#define X_MIN (1.0 / (2.0 * GCS_GC_MARK_FIFO)) /* the overlap's bound, as overlap.c's */
#define S_MIN 1e-3                              /* a price must be > 0 (profile_validate.c) */
#define MIN_OBJECTS 16384

/* One heap of the fit: its measured mark and the model's A, B, C. */
typedef struct resident_heap {
    double measured_ns, a, b, c;
    gcs_inspect_result ir;
} resident_heap;

/* Model v2 at P = 1 with every line resident, a non-streamed miss at
 * llc_hit_ns x and a streamed line at s. */
static int model_time(const gcs_profile *p, const gcs_model_heap *h, double x, double s, double *t, gcs_err *err)
{
    gcs_model_opts mo;
    gcs_model_sources src;
    gcs_model_opts_init(&mo);
    gcs_model_opts_v2(&mo, p, 1, 0, &src);
    gcs_model_opts_v2_costs(&mo, p, &src);
    mo.llc_bytes = INFINITY; /* r = 1: the heaps are sized to fit */
    mo.resident_overlap = 1 / x;
    mo.resident_stream_ns = s;
    gcs_model_result r;
    if (gcs_model_predict(p, h, 1, &mo, &r, err) < 0)
        return -1;
    *t = r.time_ns;
    return 0;
}

/* Marks g, inspects it and finds its A, B, C (the model is linear in x and
 * s below the memory prices, so these three points determine it). */
static int measure_heap(gcs_snapshot *g, int reps, const gcs_profile *p, resident_heap *h, gcs_err *err)
{
    if (_gcs_calibrate_timed_mark(g, reps, &h->measured_ns, err) < 0)
        return -1;
    gcs_inspect_opts iopts;
    gcs_inspect_opts_init(&iopts);
    iopts.predictor = GCS_INSPECT_SLOW;
    double t10, t20, t11;
    if (gcs_inspect_heap(g, p, &iopts, &h->ir, err) < 0 || model_time(p, &h->ir.heap, 1, 0, &t10, err) < 0 ||
        model_time(p, &h->ir.heap, 0.5, 0, &t20, err) < 0 || model_time(p, &h->ir.heap, 1, 1, &t11, err) < 0)
        return -1;
    h->b = 2 * (t10 - t20);
    h->a = t10 - h->b;
    h->c = t11 - t10;
    return 0;
}

static double clamp(double v, double lo, double hi, int *bound)
{
    if (v < lo || v > hi) {
        *bound = 1;
        return v < lo ? lo : hi;
    }
    return v;
}

static json_t *heap_json(const resident_heap *h, double x, double s)
{
    double model = h->a + h->b * x + h->c * s;
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "measured_mark_ns", h->measured_ns, "t1_ns",
                     h->ir.heap.t1_ns, "a_ns", h->a, "b_ns", h->b, "c_lines", h->c, "q1",
                     h->ir.heap.q1[GCS_ACCESS_READ] + h->ir.heap.q1[GCS_ACCESS_RW], "q1_streamed",
                     h->ir.heap.q1_streamed[GCS_ACCESS_READ] + h->ir.heap.q1_streamed[GCS_ACCESS_RW],
                     "model_ns", model, "residual_rel", model / h->measured_ns - 1);
}

int _gcs_calibrate_fit_resident(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    double llc_bytes, hit_ns;
    if (!p->has_gc_cost || !p->has_gc_class_cost || !p->has_gc_overlap || p->ncaches == 0 ||
        gcs_profile_llc_effective(p, &llc_bytes, &hit_ns) == GCS_LLC_NONE || !isfinite(hit_ns)) {
        gcs_err_set(err, "resident lines: needs the profile's gc_cost_ns, gc_class_cost_ns, gc_miss_overlap, "
                         "caches and the effective LLC's hit latency first");
        return -1;
    }
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "resident lines: a collector already runs in this process");
        return -1;
    }
    resident_heap rnd = {0}, lst = {0};
    int rc = -1;
    gcs_snapshot *g = _gcs_calibrate_random_graph(objects, p->nnodes, err);
    if (!g || measure_heap(g, reps, p, &rnd, err) < 0)
        goto done;
    gcs_snapshot_free(g);
    g = _gcs_calibrate_list_graph(objects, p->nnodes, err);
    if (!g || measure_heap(g, reps, p, &lst, err) < 0)
        goto done;
    double det = rnd.b * lst.c - rnd.c * lst.b;
    if (!(rnd.b > 0) || !(lst.c > 0) || !(fabs(det) > 1e-9 * rnd.b * lst.c)) {
        gcs_err_set(err, "resident lines: the %llu-object heaps have no resident misses to price (caches too "
                         "large for them?)", (unsigned long long)objects);
        goto done;
    }
    /* a streamed line's price from memory bounds the resident one
     * (serial.c prices it min(s, that) anyway) */
    double s_max = p->occupancy_ns[GCS_ACCESS_READ][0];
    if (p->has_gc_stream_line)
        s_max = fmin(s_max, p->gc_stream_line_ns);
    s_max = fmax(s_max, S_MIN);
    double yr = rnd.measured_ns - rnd.a, yl = lst.measured_ns - lst.a;
    double x = (yr * lst.c - rnd.c * yl) / det, s = (rnd.b * yl - yr * lst.b) / det;
    int x_bound = 0, s_bound = 0;
    x = clamp(x, X_MIN, 1, &x_bound);
    if (x_bound) /* the list alone then prices s */
        s = (yl - lst.b * x) / lst.c;
    s = clamp(s, S_MIN, s_max, &s_bound);
    if (s_bound && !x_bound) /* and the random graph alone x */
        x = clamp((yr - rnd.c * s) / rnd.b, X_MIN, 1, &x_bound);
    const char *note = x_bound && s_bound ? "both bounds bind: each heap's mark is outside what the model can give"
                       : x_bound          ? "the overlap is at a bound (1: no overlap, or 2 x the FIFO)"
                       : s_bound          ? "the stream price is at a bound (0.001 ns, or its price from memory)"
                                          : "fitted";
    p->has_gc_resident = 1;
    p->gc_resident_overlap = 1 / x;
    p->gc_resident_stream_ns = s;
    *details = json_pack("{s:s, s:I, s:f, s:i, s:f, s:o, s:o, s:f, s:f, s:s}", "model",
                         "measured mark = A + B x + C s on each heap, every line resident (model v2 at P = 1)",
                         "objects", (json_int_t)objects, "bytes", (double)objects * OBJECT_BYTES, "reps", reps,
                         "llc_hit_ns", hit_ns, "random", heap_json(&rnd, x, s), "list", heap_json(&lst, x, s),
                         "miss_overlap", 1 / x, "stream_line_ns", s, "note", note);
    rc = 0;
done:
    gcs_snapshot_free(g);
    return rc;
}

/* ---- the calibration's step ---------------------------------------------------- */

/* The largest data or unified cache below the last level: the private one
 * a line leaves on its way to the LLC. */
static double below_top(const gcs_profile *p)
{
    int top = 0;
    for (int i = 0; i < p->ncaches; i++)
        top = p->caches[i].level > top ? p->caches[i].level : top;
    double bytes = 0;
    for (int i = 0; i < p->ncaches; i++)
        if (p->caches[i].level < top && strcmp(p->caches[i].type, "instruction") != 0 &&
            (double)p->caches[i].size_bytes > bytes)
            bytes = (double)p->caches[i].size_bytes;
    return bytes;
}

/* The heaps' size: the geometric mean of the largest cache below the last
 * level and the effective LLC, so that nearly every line misses the first
 * and fits the second.  It is at least 2 x the one and at most half the
 * other only where the LLC is 4 x the cache below it or more; a machine
 * with less has no resident regime apart from its private caches. */
uint64_t _gcs_calibrate_resident_objects(const gcs_profile *p, const char **note)
{
    *note = NULL;
    double llc, hit;
    if (p->ncaches == 0) {
        *note = "not fitted: the profile has no caches to simulate";
        return 0;
    }
    if (gcs_profile_llc_effective(p, &llc, &hit) == GCS_LLC_NOMINAL || !isfinite(hit)) {
        *note = "not fitted: no effective LLC from the latency sweep (its hit latency prices a resident miss)";
        return 0;
    }
    double private_bytes = below_top(p);
    double bytes = sqrt(fmax(private_bytes, 1) * llc);
    if (!(private_bytes > 0) || bytes < 2 * private_bytes || bytes > llc / 2) {
        *note = "not fitted: the effective LLC is under 4 x the cache below it, no resident regime apart";
        return 0;
    }
    uint64_t objects = (uint64_t)(bytes / OBJECT_BYTES);
    return objects < MIN_OBJECTS ? MIN_OBJECTS : objects;
}

/* Expected seconds per 2^20 objects for both heaps (building, marking,
 * simulating), the step's weight in the progress series. */
#define RESIDENT_S_PER_MOBJ 0.9
#define RESIDENT_REPS_QUICK 9
#define RESIDENT_REPS_FULL 15 /* small heaps: a mark takes milliseconds */

/* Before the sweep has measured the effective LLC there is no size to
 * weigh: the plan counts this (seconds on the 2-vCPU Intel VM, 7 MiB
 * heaps), and a step that does not run completes it at once. */
#define RESIDENT_WORK_GUESS 0.3

double _gcs_calibrate_resident_work_guess(int quick)
{
    return RESIDENT_WORK_GUESS * (quick ? 0.6 : 1);
}

double _gcs_calibrate_resident_work(const gcs_profile *p, int quick)
{
    const char *note;
    uint64_t objects = _gcs_calibrate_resident_objects(p, &note);
    return (double)objects / (double)(1u << 20) * RESIDENT_S_PER_MOBJ * (quick ? 0.6 : 1);
}

void _gcs_calibrate_resident_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    const char *note;
    uint64_t objects = _gcs_calibrate_resident_objects(p, &note);
    /* a profile updated by --gc-only keeps no price from another collector;
     * without one v2 leaves residency off by default */
    p->has_gc_resident = 0;
    json_t *details = _gcs_calibrate_run_fit_sized(
        p, pr, "gc resident lines (marker on a random graph and a list within the LLC)", objects, note,
        _gcs_calibrate_resident_work_guess(quick), _gcs_calibrate_resident_work(p, quick), _gcs_calibrate_fit_resident,
        quick ? RESIDENT_REPS_QUICK : RESIDENT_REPS_FULL);
    json_object_set_new(gcs_profile_calibration(p), "resident", details);
}
