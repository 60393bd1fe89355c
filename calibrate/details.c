/* details.c -- a calibration's record of itself under the profile's
 * extra["calibration"], for calibrate.c, memory.c and gcsteps.c: its
 * warnings (each once; a --gc-only run drops those of what it measures
 * again), each step's progress and seconds (calibration.steps), how each
 * constant's physical bounds were checked (calibration.bounds) and the
 * speed probe at the run's start and end (calibration.speed_probe). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gcscale/profile.h"
#include "calibrate_internal.h"

json_t *_gcs_calibrate_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

void _gcs_calibrate_add_warning(_gcs_calibrate_ctx *c, const char *w)
{
    if (!w || !w[0])
        return;
    size_t i;
    json_t *v;
    json_array_foreach(c->warnings, i, v)
        if (strcmp(json_string_value(v), w) == 0)
            return;
    json_array_append_new(c->warnings, json_string(w));
}

/* Progress and step durations: begin announces a step, end records it. */
uint64_t _gcs_calibrate_step_begin(_gcs_calibrate_ctx *c, const char *name, double work)
{
    gcs_progress_step(c->pr, name, work);
    return gcs_now_ns();
}

void _gcs_calibrate_step_end(_gcs_calibrate_ctx *c, const char *name, double work, uint64_t t0)
{
    gcs_progress_done(c->pr, work);
    json_array_append_new(c->steps, json_pack("{s:s, s:o}", "step", name, "seconds",
                                              _gcs_calibrate_num((double)(gcs_now_ns() - t0) / 1e9)));
}

/* calibration.bounds: for each constant, how its physical bounds were
 * checked ("ok", "unchecked: why", "unreliable"; docs/machine-profile.md). */
void _gcs_calibrate_record_bound(json_t *cal, const char *constant, const char *status)
{
    json_t *bounds = json_object_get(cal, "bounds");
    if (!json_is_object(bounds)) {
        bounds = json_object();
        json_object_set_new(cal, "bounds", bounds);
    }
    json_object_set_new(bounds, constant, json_string(status));
}

/* Removes every copy of the warning `old` (a string; anything else: none)
 * from the calibration's warnings: a --gc-only run replaces the warnings of
 * what it measures again. */
void _gcs_calibrate_drop_warning(json_t *cal, json_t *old)
{
    json_t *warnings = json_object_get(cal, "warnings");
    for (size_t i = json_array_size(warnings); json_is_string(old) && i-- > 0;)
        if (json_equal(json_array_get(warnings, i), old))
            json_array_remove(warnings, i);
}

/* The speed probe (gccost.c) at a calibration's start and end: its
 * fastest mark of one cost heap, NaN when it could not run (it is a check,
 * never a reason to fail). */
double _gcs_calibrate_probe(void)
{
    double t;
    gcs_err err;
    return _gcs_calibrate_speed_probe(&t, &err) == 0 ? t : NAN;
}

/* calibration.speed_probe, and a warning in calibration.warnings (and
 * speed_probe.warning) when the two marks differ by more than
 * GCS_CALIBRATE_PROBE_DRIFT; a --gc-only run replaces the warning of the
 * run before. */
void _gcs_calibrate_record_probe(gcs_profile *p, double start_ns, double end_ns, double seconds)
{
    json_t *cal = gcs_profile_calibration(p);
    _gcs_calibrate_drop_warning(cal, json_object_get(json_object_get(cal, "speed_probe"), "warning"));
    double ratio = end_ns / start_ns;
    char w[400] = "";
    if (isfinite(ratio) && fabs(ratio - 1) > GCS_CALIBRATE_PROBE_DRIFT)
        snprintf(w, sizeof w,
                 "speed probe: the collector's reference heap marked in %.0f us at the calibration's start "
                 "and in %.0f us at its end, %.0f s later (%+.0f%%): the CPU ran at two speeds (other jobs "
                 "on it?), and the constants measured in between mix them",
                 start_ns / 1e3, end_ns / 1e3, seconds, 100 * (ratio - 1));
    json_object_set_new(cal, "speed_probe",
                        json_pack("{s:o, s:o, s:o, s:f, s:f, s:o}", "start_t1_ns",
                                  isfinite(start_ns) ? json_real(start_ns) : json_null(), "end_t1_ns",
                                  isfinite(end_ns) ? json_real(end_ns) : json_null(), "ratio",
                                  isfinite(ratio) ? json_real(ratio) : json_null(), "seconds_apart", seconds,
                                  "drift_limit", GCS_CALIBRATE_PROBE_DRIFT, "warning",
                                  w[0] ? json_string(w) : json_null()));
    if (!w[0])
        return;
    json_t *warnings = json_object_get(cal, "warnings");
    if (!warnings) {
        warnings = json_array();
        json_object_set_new(cal, "warnings", warnings);
    }
    json_array_append_new(warnings, json_string(w));
}
