/* gcsteps.c -- the collector's side of a calibration, and the runs that
 * measure the collector's keys again into a profile made before:
 *   - the marker's costs (gcs_calibrate_gc_costs, gccost.c) checked against
 *     their physical bounds, measured again when one fails, with their
 *     uncertainty and gc_steals.a's (_gcs_calibrate_gc_costs_checked, for
 *     gcs_calibrate_run and --gc-only);
 *   - --gc-only (gcs_calibrate_update_gc): the marker's costs and the
 *     collector's steps again;
 *   - --gc-only --key (gcs_calibrate_update_key): one key's step, for a key
 *     calibrate gained after the profile was made. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/calibrate.h"
#include "gcscale/profile.h"
#include "calibrate_internal.h"

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* gc_steals.a is the median over the steal points of steals / ((P - 1)
 * ln T1) (gccost.c), so its interval is the distribution-free one of a
 * median: the order statistics n/2 -+ 0.98 sqrt(n) of the points' ratios,
 * and its standard error that interval's half width / 1.96.  Read from
 * the fit's details ("steals": {"points": [...]}); nothing is recorded
 * when they are not there. */
static void steals_uncertainty(gcs_profile *p, json_t *steals, json_t *cal)
{
    json_t *pts = json_object_get(steals, "points"), *pt;
    double ratio[64];
    int n = 0;
    size_t i;
    json_array_foreach(pts, i, pt) {
        double t1 = json_number_value(json_object_get(pt, "t1_model_ns"));
        double st = json_number_value(json_object_get(pt, "steals_median"));
        int threads = (int)json_integer_value(json_object_get(pt, "threads"));
        if (n < 64 && threads > 1 && t1 > 1)
            ratio[n++] = st / (threads - 1) / log(t1);
    }
    if (!p->has_gc_steals)
        return;
    _gcs_calibrate_record_bound(cal, "gc_steals.a",
                                p->gc_steal_a >= 0 && isfinite(p->gc_steal_a) ? "ok" : "unreliable");
    if (!(p->gc_steal_a >= 0 && isfinite(p->gc_steal_a)))
        gcs_profile_set_unreliable(p, "gc_steals.a", "the steal fit gave a negative or non-finite slope");
    if (n < 2)
        return;
    qsort(ratio, (size_t)n, sizeof *ratio, compare_double);
    int lo = (int)floor(n / 2.0 - 0.98 * sqrt(n)), hi = (int)ceil(n / 2.0 + 0.98 * sqrt(n));
    lo = lo < 0 ? 0 : lo;
    hi = hi > n - 1 ? n - 1 : hi;
    gcs_profile_uncertainty u;
    gcs_profile_uncertainty_init(&u);
    u.ci95_lo = ratio[lo];
    u.ci95_hi = ratio[hi];
    u.std_error = (ratio[hi] - ratio[lo]) / (2 * 1.96);
    u.n = n;
    gcs_profile_set_uncertainty(p, "gc_steals.a", &u);
}

/* gc_cost_ns.steal and .worker's intervals from the fit of gccost.c's steal
 * samples, as stealfit.c computed them (each with its own fit's degrees of
 * freedom, clipped at 0).  A per-steal cost the samples cannot tell from 0
 * is 0 by the fit itself and says so in its note; that is a finding about
 * the machine (on a 2-vCPU guest a steal adds too little to show), not a
 * failed measurement, so it is not marked unreliable. */
void _gcs_calibrate_steal_cost_uncertainty(gcs_profile *p, json_t *details)
{
    json_t *fit = json_object_get(details, "steal_cost_fit");
    int n = (int)json_integer_value(json_object_get(fit, "samples"));
    if (!fit || n < 3)
        return;
    static const char *const names[] = {"steal", "worker"};
    for (int i = 0; i < 2; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_ci95", names[i]);
        json_t *ci = json_object_get(fit, key);
        snprintf(key, sizeof key, "%s_se", names[i]);
        json_t *se = json_object_get(fit, key);
        if (!json_is_array(ci) || !json_is_number(se))
            continue;
        gcs_profile_uncertainty u;
        gcs_profile_uncertainty_init(&u);
        u.std_error = json_number_value(se);
        u.ci95_lo = json_number_value(json_array_get(ci, 0));
        u.ci95_hi = json_number_value(json_array_get(ci, 1));
        u.n = n;
        snprintf(key, sizeof key, "gc_cost_ns.%s", names[i]);
        gcs_profile_set_uncertainty(p, key, &u);
    }
}

/* gc_cost_ns with its physical bounds (every cost positive and finite):
 * a measurement that breaks one is made again in full mode (more
 * repetitions); a cost that still breaks it keeps its value, is marked
 * unreliable in p, and gets one warning line in warnings.  The cost fit
 * itself is gccost.c's. */
/* The cost fit's own uncertainty (gccost.c: standard errors, 95% intervals,
 * condition number, under details.uncertainty in the profile's layout) goes
 * into the profile's "uncertainty"; a split that stayed uncertain after
 * gccost.c re-measured it (details.warning) marks object and pointer
 * unreliable with that reason, and joins the warnings. */
static void costs_uncertainty(gcs_profile *p, json_t *details, json_t *cal, json_t *warnings)
{
    json_t *unc = json_object_get(details, "uncertainty");
    static const char *const fitted[] = {"gc_cost_ns.object", "gc_cost_ns.pointer"};
    for (int i = 0; i < 2; i++) {
        json_t *u = json_object_get(unc, fitted[i]);
        if (!json_is_object(u))
            continue;
        gcs_profile_uncertainty pu;
        gcs_profile_uncertainty_init(&pu);
        json_t *se = json_object_get(u, "stderr"), *ci = json_object_get(u, "ci95");
        json_t *res = json_object_get(u, "residual_rms_rel"), *n = json_object_get(u, "n");
        if (json_is_number(se))
            pu.std_error = json_number_value(se);
        if (json_is_array(ci) && json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) &&
            json_is_number(json_array_get(ci, 1))) {
            pu.ci95_lo = json_number_value(json_array_get(ci, 0));
            pu.ci95_hi = json_number_value(json_array_get(ci, 1));
        }
        if (json_is_number(res))
            pu.residual_rms_rel = json_number_value(res);
        if (json_is_integer(n))
            pu.n = (int)json_integer_value(n);
        gcs_profile_set_uncertainty(p, fitted[i], &pu);
    }
    const char *warning = json_string_value(json_object_get(details, "warning"));
    if (!warning)
        return;
    for (int i = 0; i < 2; i++) {
        if (gcs_profile_unreliable(p, fitted[i]))
            continue;
        gcs_profile_set_unreliable(p, fitted[i], warning);
        _gcs_calibrate_record_bound(cal, fitted[i], "unreliable");
    }
    if (warnings)
        json_array_append_new(warnings, json_string(warning));
}

int _gcs_calibrate_gc_costs_checked(int quick, gcs_profile *p, json_t *cal, json_t *warnings, gcs_err *err)
{
    static const char *const names[] = {"object", "pointer", "steal"};
    json_t *details = NULL;
    gcs_profile_clear_fit_quality(p, "gc_cost_ns.");
    gcs_profile_clear_fit_quality(p, "gc_steals.");
    for (int attempt = 0; attempt < 2; attempt++) {
        json_decref(details);
        details = NULL;
        if (gcs_calibrate_gc_costs(attempt ? 0 : quick, p, &details, err) < 0)
            return -1;
        double v[] = {p->gc_cost_object_ns, p->gc_cost_pointer_ns, p->gc_cost_steal_ns};
        /* A steal cost that could not be measured (one CPU) is not
         * measured again: more repetitions give no second CPU. */
        const char *note = json_string_value(json_object_get(details, "steal_note"));
        int unmeasurable = note && strncmp(note, "not measured", 12) == 0;
        int bad = 0; /* a steal cost of 0 is a finding (stealfit.c), the others must be positive */
        for (int i = 0; i < 3 - unmeasurable; i++)
            bad |= !((i == 2 ? v[i] >= 0 : v[i] > 0) && isfinite(v[i]));
        if (unmeasurable) {
            gcs_profile_set_unreliable(p, "gc_cost_ns.steal", note);
            _gcs_calibrate_record_bound(cal, "gc_cost_ns.steal", "unreliable");
        }
        if (!bad)
            break;
        if (attempt == 0) {
            json_object_set(cal, "gc_costs_first_attempt", details);
            continue;
        }
        for (int i = 0; i < 3 - unmeasurable; i++) {
            if ((i == 2 ? v[i] >= 0 : v[i] > 0) && isfinite(v[i]))
                continue;
            char constant[32], reason[200], w[600];
            snprintf(constant, sizeof constant, "gc_cost_ns.%s", names[i]);
            snprintf(reason, sizeof reason, "the fit gave %.3g ns, not a positive cost, also when "
                     "measured again with more repetitions", v[i]);
            snprintf(w, sizeof w, "%s is unreliable (%s); the model uses %.3g ns for it and the "
                     "profile marks it unreliable; rerun on an idle machine (gcscale calibrate "
                     "--gc-only)", constant, reason, v[i]);
            gcs_profile_set_unreliable(p, constant, reason);
            _gcs_calibrate_record_bound(cal, constant, "unreliable");
            if (warnings)
                json_array_append_new(warnings, json_string(w));
        }
    }
    _gcs_calibrate_steal_cost_uncertainty(p, details);
    for (int i = 0; i < 3; i++) {
        char constant[32];
        snprintf(constant, sizeof constant, "gc_cost_ns.%s", names[i]);
        if (!gcs_profile_unreliable(p, constant))
            _gcs_calibrate_record_bound(cal, constant, "ok");
    }
    steals_uncertainty(p, json_object_get(details, "steal_fit"), cal);
    costs_uncertainty(p, details, cal, warnings);
    json_object_set_new(cal, "gc_costs", details);
    return 0;
}

/* --gc-only: the marker's costs again, into a profile measured before (the
 * memory system has not changed, the collector has). */

static double update_gc_cost_work(int quick)
{
    return quick ? 0.3 : 0.5; /* the plans' w_gc */
}

double gcs_calibrate_update_gc_work(const gcs_profile *p, int quick)
{
    return update_gc_cost_work(quick) + _gcs_calibrate_overlap_work(p, quick, 0) +
           _gcs_calibrate_stream_work(p, quick, 0) + _gcs_calibrate_resident_work(p, quick) +
           _gcs_calibrate_residency_work(p, quick) +
           _gcs_calibrate_coord_work(quick) + _gcs_calibrate_mark_transfer_work(quick) +
           _gcs_calibrate_line_transfer_work(p, quick);
}

int gcs_calibrate_update_gc(gcs_profile *p, int quick, gcs_progress *pr, gcs_err *err)
{
    double w = update_gc_cost_work(quick);
    gcs_progress_step(pr, "gc costs (marker on cache-resident heaps)", w);
    json_t *cal = gcs_profile_calibration(p);
    /* The old costs' warning goes with them (the new fit's problems, if any,
     * are marked unreliable and said by the caller, gcs_profile_unreliable). */
    _gcs_calibrate_drop_warning(cal, json_object_get(json_object_get(cal, "gc_costs"), "warning"));
    double probe_start = _gcs_calibrate_probe(), probe_t0 = (double)gcs_now_ns();
    if (_gcs_calibrate_gc_costs_checked(quick, p, cal, NULL, err) < 0)
        return -1;
    gcs_progress_done(pr, w);
    char when[64];
    gcs_now_iso8601(when, sizeof when);
    json_object_set_new(cal, "gc_only", json_pack("{s:s, s:s}", "time", when, "mode",
                                                   quick ? "quick" : "full"));
    _gcs_calibrate_overlap_step(p, quick, 0, pr);
    _gcs_calibrate_stream_step(p, quick, 0, pr);
    _gcs_calibrate_resident_step(p, quick, pr);
    _gcs_calibrate_residency_step(p, quick, pr);
    _gcs_calibrate_coord_step(p, quick, pr);
    _gcs_calibrate_mark_transfer_step(p, quick, pr);
    _gcs_calibrate_mark_transfer_cached_step(p, quick, pr);
    _gcs_calibrate_line_transfer_step(p, quick, pr);
    _gcs_calibrate_record_probe(p, probe_start, _gcs_calibrate_probe(), ((double)gcs_now_ns() - probe_t0) / 1e9);
    return gcs_profile_validate(p, err);
}

/* --gc-only --key: one key into a profile made before calibrate had it.
 * The steps of one key, in one shape (the profile's own size limits do
 * not apply to a profile already made). */
static void overlap_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    _gcs_calibrate_overlap_step(p, quick, 0, pr);
}

static double overlap_work(const gcs_profile *p, int quick)
{
    return _gcs_calibrate_overlap_work(p, quick, 0);
}

static void stream_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    _gcs_calibrate_stream_step(p, quick, 0, pr);
}

static double stream_work(const gcs_profile *p, int quick)
{
    return _gcs_calibrate_stream_work(p, quick, 0);
}

static void coord_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    _gcs_calibrate_coord_step(p, quick, pr);
}

static double coord_work(const gcs_profile *p, int quick)
{
    (void)p;
    return _gcs_calibrate_coord_work(quick);
}

static double steal_cost_work(const gcs_profile *p, int quick)
{
    (void)p;
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? (quick ? 1.0 : 2.0) : 0;
}

static double mark_transfer_work(const gcs_profile *p, int quick)
{
    (void)p;
    return _gcs_calibrate_mark_transfer_work(quick) / 2; /* each of its two heaps' keys */
}

/* gc_coord.attempts_per_search into a profile whose gc_coord was fitted
 * before calibrate counted searches (2026-11-29): the coordination heaps are
 * marked again on a copy of the profile and only the ratio is kept, so the
 * laws and prices fitted then stay as they were.  The ratio belongs to the
 * heaps and the collector's batching more than to one run (its spread over
 * runs: docs/model.md, "Per search"), which is what makes one run's ratio
 * usable with another's attempt price. */
static void coord_search_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    double w = _gcs_calibrate_coord_work(quick);
    json_t *rec;
    if (w == 0 || !p->has_gc_coord) {
        rec = json_pack("{s:s}", "note", w == 0 ? "not measured: one CPU"
                                                : "not measured: the profile has no gc_coord (--key gc_coord "
                                                  "measures all of it)");
    } else {
        gcs_progress_step(pr, "gc coordination: steal attempts per search", w);
        gcs_err err = {{0}};
        json_t *doc = gcs_profile_to_json(p), *details = NULL;
        gcs_profile *copy = doc ? gcs_profile_from_json(doc, &err) : NULL;
        json_decref(doc);
        uint64_t t0 = gcs_now_ns();
        if (copy && gcs_calibrate_coord(quick, 0, copy, &details, &err) == 0 &&
            copy->coord.attempts_per_search > 0) {
            p->coord.attempts_per_search = copy->coord.attempts_per_search;
            rec = json_pack("{s:f, s:f, s:s, s:o}", "attempts_per_search", copy->coord.attempts_per_search, "seconds",
                            (double)(gcs_now_ns() - t0) / 1e9, "note",
                            "the ratio of a new coordination run on a copy; the profile's laws and prices are "
                            "the earlier fit's",
                            "run", details);
            details = NULL;
        } else {
            rec = json_pack("{s:s, s:s}", "note", "not measured: the step failed", "error",
                            err.msg[0] ? err.msg : "no search found work");
        }
        json_decref(details);
        gcs_profile_free(copy);
        gcs_progress_done(pr, w);
    }
    json_object_set_new(gcs_profile_calibration(p), "gc_coord_attempts_per_search", rec);
}

/* gc_cost_ns.worker into a profile whose steal cost was measured as growth
 * over steals (before 2026-11-29): the steal heap's samples again, both
 * costs from their fit (stealfit.c), the object and pointer costs kept. */
static void steal_cost_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    double w = steal_cost_work(p, quick);
    json_t *rec = NULL;
    if (w == 0) {
        rec = json_pack("{s:s}", "note", "not measured: one CPU");
    } else {
        gcs_progress_step(pr, "gc costs: what a steal and a worker add", w);
        gcs_err err = {{0}};
        uint64_t t0 = gcs_now_ns();
        if (_gcs_calibrate_steal_cost(quick, p, &rec, &err) < 0)
            rec = json_pack("{s:s, s:s}", "note", "not measured: the step failed", "error", err.msg);
        else
            json_object_set_new(rec, "seconds", json_real((double)(gcs_now_ns() - t0) / 1e9));
        gcs_progress_done(pr, w);
    }
    json_object_set_new(gcs_profile_calibration(p), "gc_cost_worker", rec);
}

/* The keys one step measures, each with its step and weight (the steps
 * that run after the marker's costs, in calibrate's order). */
static const struct key_step {
    const char *key;
    void (*step)(gcs_profile *p, int quick, gcs_progress *pr);
    double (*work)(const gcs_profile *p, int quick);
} key_steps[] = {
    {"gc_cost_ns.worker", steal_cost_step, steal_cost_work},
    {"gc_miss_overlap", overlap_step, overlap_work},
    {"gc_stream_line_ns", stream_step, stream_work},
    {"gc_resident", _gcs_calibrate_resident_step, _gcs_calibrate_resident_work},
    {"gc_residency", _gcs_calibrate_residency_step, _gcs_calibrate_residency_work},
    {"gc_coord", coord_step, coord_work},
    {"gc_coord.attempts_per_search", coord_search_step, coord_work},
    {"gc_mark_transfer_ns", _gcs_calibrate_mark_transfer_step, mark_transfer_work},
    {"gc_mark_transfer_cached_ns", _gcs_calibrate_mark_transfer_cached_step, mark_transfer_work},
    {"gc_line_transfer_ns", _gcs_calibrate_line_transfer_step, _gcs_calibrate_line_transfer_work},
    /* the memory system's, not the collector's: only by its key (not in a
     * --gc-only run, which keeps the memory figures) */
    {"dependent_load_ns", _gcs_calibrate_dependent_load_step, _gcs_calibrate_dependent_load_work},
};

static const struct key_step *find_key_step(const char *key)
{
    for (size_t i = 0; i < sizeof key_steps / sizeof *key_steps; i++)
        if (strcmp(key_steps[i].key, key) == 0)
            return &key_steps[i];
    return NULL;
}

double gcs_calibrate_update_key_work(const gcs_profile *p, const char *key, int quick)
{
    const struct key_step *k = find_key_step(key);
    return !k ? -1 : p ? k->work(p, quick) : 0;
}

int gcs_calibrate_update_key(gcs_profile *p, const char *key, int quick, gcs_progress *pr, gcs_err *err)
{
    const struct key_step *k = find_key_step(key);
    if (!k) {
        gcs_err_set(err, "calibrate: '%s' is no key a single step measures (gc_cost_ns.worker, gc_miss_overlap, "
                         "gc_stream_line_ns, gc_resident, gc_residency, gc_coord, gc_coord.attempts_per_search, "
                         "gc_mark_transfer_ns, gc_mark_transfer_cached_ns, gc_line_transfer_ns, dependent_load_ns)", key);
        return -1;
    }
    k->step(p, quick, pr);
    /* A record of its own: the profile's other figures keep theirs (a
     * calibration's, or a --gc-only run's under gc_only). */
    char when[64];
    gcs_now_iso8601(when, sizeof when);
    json_t *cal = gcs_profile_calibration(p), *added = json_object_get(cal, "keys_added");
    if (!json_is_array(added)) {
        added = json_array();
        json_object_set_new(cal, "keys_added", added);
    }
    json_array_append_new(added, json_pack("{s:s, s:s, s:s}", "key", key, "time", when, "mode", quick ? "quick" : "full"));
    return gcs_profile_validate(p, err);
}
