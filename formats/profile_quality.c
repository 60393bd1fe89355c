/* profile_quality.c -- how far to trust a profile's fitted constants: the
 * "uncertainty" and "unreliable" containers (docs/machine-profile.md), held
 * in the profile's extra keys so that a profile written by an older gcscale
 * loads unchanged and one written by a newer one keeps them through a load
 * and save.  profile_validate.c checks their shape when a profile is
 * validated; this file reads and writes them for calibrate (which fills
 * them) and predict (which names the model terms that rest on an
 * unreliable constant). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/profile.h"
json_t *gcs_profile_calibration(gcs_profile *p)
{
    if (!p->extra)
        p->extra = json_object();
    json_t *cal = json_object_get(p->extra, "calibration");
    if (!json_is_object(cal)) {
        cal = json_object();
        json_object_set_new(p->extra, "calibration", cal);
    }
    return cal;
}

/* ---- uncertainty and reliability of fitted constants --------------------------- */

static json_t *extra_object(gcs_profile *p, const char *key)
{
    if (!p->extra)
        p->extra = json_object();
    if (!p->extra)
        return NULL;
    json_t *o = json_object_get(p->extra, key);
    if (!json_is_object(o)) {
        o = json_object();
        if (!o || json_object_set_new(p->extra, key, o) < 0)
            return NULL;
    }
    return o;
}

void gcs_profile_uncertainty_init(gcs_profile_uncertainty *u)
{
    u->std_error = u->ci95_lo = u->ci95_hi = u->residual_rms_rel = NAN;
    u->n = -1;
}

int gcs_profile_set_uncertainty(gcs_profile *p, const char *constant, const gcs_profile_uncertainty *u)
{
    json_t *all = extra_object(p, "uncertainty"), *e = json_object();
    if (!all || !e) {
        json_decref(e);
        return -1;
    }
    /* Absent (NaN, or a negative spread) fields are left out rather than
     * written as null: JSON cannot carry NaN and the loader refuses null. */
    if (u->std_error >= 0 && isfinite(u->std_error))
        json_object_set_new(e, "stderr", json_real(u->std_error));
    if (isfinite(u->ci95_lo) && isfinite(u->ci95_hi) && u->ci95_lo <= u->ci95_hi)
        json_object_set_new(e, "ci95", json_pack("[f, f]", u->ci95_lo, u->ci95_hi));
    if (u->residual_rms_rel >= 0 && isfinite(u->residual_rms_rel))
        json_object_set_new(e, "residual_rms_rel", json_real(u->residual_rms_rel));
    if (u->n >= 0)
        json_object_set_new(e, "n", json_integer(u->n));
    return json_object_set_new(all, constant, e) < 0 ? -1 : 0;
}

int gcs_profile_get_uncertainty(const gcs_profile *p, const char *constant, gcs_profile_uncertainty *u)
{
    gcs_profile_uncertainty_init(u);
    json_t *e = p->extra ? json_object_get(json_object_get(p->extra, "uncertainty"), constant) : NULL;
    if (!json_is_object(e))
        return 0;
    json_t *v;
    if ((v = json_object_get(e, "stderr")) && json_is_number(v))
        u->std_error = json_number_value(v);
    if ((v = json_object_get(e, "residual_rms_rel")) && json_is_number(v))
        u->residual_rms_rel = json_number_value(v);
    if ((v = json_object_get(e, "ci95")) && json_array_size(v) == 2) {
        u->ci95_lo = json_number_value(json_array_get(v, 0));
        u->ci95_hi = json_number_value(json_array_get(v, 1));
    }
    if ((v = json_object_get(e, "n")) && json_is_integer(v))
        u->n = (int)json_integer_value(v);
    return 1;
}

int gcs_profile_set_unreliable(gcs_profile *p, const char *constant, const char *reason)
{
    json_t *all = extra_object(p, "unreliable");
    if (!all)
        return -1;
    char line[1024];
    snprintf(line, sizeof line, "%s", reason && reason[0] ? reason : "no reason given");
    gcs_text_one_line(line);
    return json_object_set_new(all, constant, json_string(line)) < 0 ? -1 : 0;
}

const char *gcs_profile_unreliable(const gcs_profile *p, const char *constant)
{
    if (!p->extra)
        return NULL;
    return json_string_value(json_object_get(json_object_get(p->extra, "unreliable"), constant));
}

int gcs_profile_unreliable_at(const gcs_profile *p, int i, const char **constant, const char **reason)
{
    json_t *all = p->extra ? json_object_get(p->extra, "unreliable") : NULL;
    if (!json_is_object(all) || i < 0)
        return -1;
    void *it = json_object_iter(all);
    for (int k = 0; it && k < i; k++)
        it = json_object_iter_next(all, it);
    if (!it)
        return -1;
    *constant = json_object_iter_key(it);
    *reason = json_string_value(json_object_iter_value(it));
    return 0;
}

void gcs_profile_clear_fit_quality(gcs_profile *p, const char *prefix)
{
    static const char *const containers[] = {"uncertainty", "unreliable"};
    size_t len = strlen(prefix);
    for (int c = 0; c < 2 && p->extra; c++) {
        json_t *all = json_object_get(p->extra, containers[c]);
        const char *name;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(all, tmp, name, v)
            if (strncmp(name, prefix, len) == 0)
                json_object_del(all, name);
    }
}
