/* residency.c -- how much of a heap is in the LLC when a mark starts, by
 * its size: gc_residency, model v2's residency curve (docs/model.md,
 * "Residency at the LLC's edge").
 *
 * v2 prices a line in the effective LLC at gc_resident's prices and one
 * from memory at gc_miss_overlap's; what it needs besides is the share r of
 * a heap's lines that are in the LLC when the mark starts.  The ratio
 * min(1, LLC / footprint) says a heap just under the effective LLC is all
 * there and one just over it mostly not; the collector, marking the same
 * heap again and again, finds it leaving gradually (0.85 at 0.85 times the
 * effective LLC, 0.70 at 1.7 times, on the Intel VM).  The LLC's own
 * replacement, other tenants and the marker's other data (the mark table,
 * its stacks) decide that, so only the real marker can measure it:
 *
 *   1. random graphs (overlap.c's) of 0.5, 1 and 2 times the effective LLC,
 *      each marked at P = 1 in a collector of its own (median of reps after
 *      a warm-up, as every fit here);
 *   2. each inspected with the slow predictor;
 *   3. model v2 at P = 1 is, on each heap, a time that falls as r rises
 *      (resident lines cost less); r is found where it equals the measured
 *      mark, by bisection, clamped to [0, 1];
 *   4. the overlap fit's heap (4 times the effective LLC, 2 with --quick)
 *      is a point with r = 0: gc_miss_overlap is fitted there as if no line
 *      were resident, and the curve must agree with the prices it rests on.
 * The shares are made not to grow with the footprint (each the least of
 * itself and those before it; a noisy point is said in the details).
 *
 * Calls the collector's public gc.h, the snapshot and the model (inspect.h,
 * model.h), as overlap.c and resident.c do. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/model.h"
#include "gcscale/snapshot.h"
#include "../common/internal.h"
#include "calibrate_internal.h"

#define OBJECT_BYTES 32 /* the random graph's (calibrate_internal.h) */
#define MIN_OBJECTS 16384
#define BISECT_STEPS 40

/* The footprints measured, in effective LLCs; those at or beyond the
 * overlap heap's are left out (its r is 0 by definition). */
static const double footprints[] = {0.5, 1, 2};
#define NFOOT ((int)(sizeof footprints / sizeof *footprints))

/* The overlap heap's footprint in effective LLCs: its fit's record (every
 * profile with gc_miss_overlap from calibrate has one), else calibrate's
 * full rule (overlap.c: 4 x; 2 x with --quick, which records it). */
static double zero_footprint(gcs_profile *p, double llc)
{
    json_t *o = json_object_get(json_object_get(gcs_profile_calibration(p), "gc_overlap"), "objects");
    if (json_is_number(o) && json_number_value(o) > 0 && llc > 0)
        return json_number_value(o) * OBJECT_BYTES / llc;
    return 4;
}

/* Model v2 at P = 1 on h with the share r of its lines resident: p's prices
 * with a one-point curve through (f, r). */
static int model_time(const gcs_profile *p, const gcs_model_heap *h, double f, double r, double *t, gcs_err *err)
{
    gcs_profile q = *p; /* shallow: read only, never freed */
    q.nresidency = 1;
    q.residency_footprint[0] = f;
    q.residency_resident[0] = r;
    gcs_model_opts mo;
    gcs_model_sources src;
    gcs_model_opts_init(&mo);
    gcs_model_opts_v2(&mo, &q, 1, 0, &src);
    gcs_model_opts_v2_costs(&mo, &q, &src);
    gcs_model_result res;
    if (gcs_model_predict(&q, h, 1, &mo, &res, err) < 0)
        return -1;
    *t = res.time_ns;
    return 0;
}

/* One heap: its footprint f in effective LLCs, measured mark, the model's
 * times with none and with all of it resident, and the share that fits. */
typedef struct res_point {
    double f, measured_ns, t0_ns, t1_ns, r;
    const char *bound;
} res_point;

static int measure_point(uint64_t objects, int reps, const gcs_profile *p, double llc, res_point *pt, gcs_err *err)
{
    gcs_snapshot *g = _gcs_calibrate_random_graph(objects, p->nnodes, err);
    if (!g)
        return -1;
    gcs_inspect_opts iopts;
    gcs_inspect_opts_init(&iopts);
    iopts.predictor = GCS_INSPECT_SLOW;
    gcs_inspect_result ir;
    int rc = -1;
    if (_gcs_calibrate_timed_mark(g, reps, &pt->measured_ns, err) < 0 || gcs_inspect_heap(g, p, &iopts, &ir, err) < 0)
        goto done;
    pt->f = (double)ir.heap.live_lines * 64 / llc;
    if (model_time(p, &ir.heap, pt->f, 0, &pt->t0_ns, err) < 0 || model_time(p, &ir.heap, pt->f, 1, &pt->t1_ns, err) < 0)
        goto done;
    pt->bound = NULL;
    if (!(pt->t0_ns > pt->t1_ns)) {
        gcs_err_set(err, "residency: a %.3g x LLC heap is priced alike resident or not (no misses to price?)", pt->f);
        goto done;
    }
    if (pt->measured_ns >= pt->t0_ns) {
        pt->r = 0, pt->bound = "slower than with no line resident: 0";
    } else if (pt->measured_ns <= pt->t1_ns) {
        pt->r = 1, pt->bound = "faster than with every line resident: 1";
    } else {
        /* the model's time falls as r rises: bisect for the measured mark */
        double lo = 0, hi = 1;
        for (int i = 0; i < BISECT_STEPS; i++) {
            double mid = (lo + hi) / 2, t;
            if (model_time(p, &ir.heap, pt->f, mid, &t, err) < 0)
                goto done;
            if (t > pt->measured_ns)
                lo = mid;
            else
                hi = mid;
        }
        pt->r = (lo + hi) / 2;
    }
    rc = 0;
done:
    gcs_snapshot_free(g);
    return rc;
}

int _gcs_calibrate_fit_residency(uint64_t objects, int reps, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    double llc, hit;
    if (!p->has_gc_resident || !p->has_gc_overlap || p->ncaches == 0 ||
        gcs_profile_llc_effective(p, &llc, &hit) == GCS_LLC_NOMINAL || !isfinite(hit)) {
        gcs_err_set(err, "residency: needs the profile's gc_resident, gc_miss_overlap, caches and the effective "
                         "LLC first");
        return -1;
    }
    if (gcs_gc_is_initialized()) {
        gcs_err_set(err, "residency: a collector already runs in this process");
        return -1;
    }
    double zero = zero_footprint(p, llc);
    res_point pts[NFOOT];
    int n = 0;
    for (int i = 0; i < NFOOT; i++) {
        if (footprints[i] >= zero)
            break;
        uint64_t k = (uint64_t)((double)objects * footprints[i]);
        if (measure_point(k < MIN_OBJECTS ? MIN_OBJECTS : k, reps, p, llc, &pts[n], err) < 0)
            return -1;
        /* the random graph's footprint is quantized by its objects: keep the
         * points in order even where two sizes land close */
        if (n > 0 && !(pts[n].f > pts[n - 1].f))
            continue;
        n++;
    }
    if (n == 0 || !(zero > pts[n - 1].f) || zero > 64) {
        gcs_err_set(err, "residency: no heap below the overlap heap's %.3g x LLC to measure", zero);
        return -1;
    }
    json_t *heaps = json_array();
    double prev = 1;
    int capped = 0;
    for (int i = 0; i < n; i++) {
        double r = pts[i].r;
        if (r > prev) /* a share cannot grow with the heap: noise */
            r = prev, capped = 1;
        p->residency_footprint[i] = pts[i].f;
        p->residency_resident[i] = r;
        prev = r;
        json_array_append_new(heaps, json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:s?}", "footprint_llc", pts[i].f,
                                               "measured_mark_ns", pts[i].measured_ns, "none_resident_ns",
                                               pts[i].t0_ns, "all_resident_ns", pts[i].t1_ns, "fitted", pts[i].r,
                                               "resident", r, "bound", pts[i].bound));
    }
    p->residency_footprint[n] = zero;
    p->residency_resident[n] = 0;
    p->nresidency = n + 1;
    gcs_assert_internal(p->nresidency <= GCS_PROFILE_RESIDENCY_MAX);
    *details = json_pack("{s:s, s:f, s:I, s:i, s:o, s:f, s:s}", "model",
                         "the share r of each random graph's lines resident at the start of its mark: model v2 at "
                         "P = 1 with r equal to the measured mark",
                         "llc_effective_bytes", llc, "llc_objects", (json_int_t)objects, "reps", reps, "heaps", heaps,
                         "zero_at_footprint_llc", zero, "note",
                         capped ? "a share above the one before it was lowered to it (the host's noise)"
                                : "fitted; the overlap fit's heap is the last point, at 0");
    return 0;
}

/* ---- the calibration's step ---------------------------------------------------- */

/* The random graph's objects at one effective LLC, or 0 with *note. */
static uint64_t llc_objects(const gcs_profile *p, const char **note)
{
    double llc, hit;
    *note = NULL;
    if (!p->has_gc_resident) {
        *note = "not fitted: the profile has no gc_resident (a resident line's prices) to measure it against";
        return 0;
    }
    if (p->ncaches == 0 || gcs_profile_llc_effective(p, &llc, &hit) == GCS_LLC_NOMINAL || !isfinite(hit)) {
        *note = "not fitted: no effective LLC from the latency sweep";
        return 0;
    }
    return (uint64_t)(llc / OBJECT_BYTES);
}

/* Expected seconds per 2^20 objects at one LLC (three heaps of 0.5, 1 and 2
 * of it, built, marked and simulated), the step's weight in the progress
 * series (docs/microbench.md, "Residency by footprint", has a measured
 * step). */
#define RESIDENCY_S_PER_MOBJ 3.6
#define RESIDENCY_REPS_QUICK 5
#define RESIDENCY_REPS_FULL 9
/* before the sweep has measured the effective LLC (the plan's guess) */
#define RESIDENCY_WORK_GUESS 5.0

double _gcs_calibrate_residency_work_guess(int quick)
{
    return RESIDENCY_WORK_GUESS * (quick ? 0.5 : 1);
}

double _gcs_calibrate_residency_work(const gcs_profile *p, int quick)
{
    const char *note;
    uint64_t objects = llc_objects(p, &note);
    return (double)objects / (double)(1u << 20) * RESIDENCY_S_PER_MOBJ * (quick ? 0.5 : 1);
}

void _gcs_calibrate_residency_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    const char *note;
    uint64_t objects = llc_objects(p, &note);
    /* a profile updated by --gc-only keeps no curve of another collector */
    p->nresidency = 0;
    json_t *details = _gcs_calibrate_run_fit_sized(
        p, pr, "gc residency (marker on random graphs at the LLC's edge)", objects, note,
        _gcs_calibrate_residency_work_guess(quick), _gcs_calibrate_residency_work(p, quick),
        _gcs_calibrate_fit_residency, quick ? RESIDENCY_REPS_QUICK : RESIDENCY_REPS_FULL);
    json_object_set_new(gcs_profile_calibration(p), "residency", details);
}
