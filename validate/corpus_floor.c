/* corpus_floor.c -- the accuracy the corpus must keep (data/corpus/floor.json).
 *
 * Per entry: the mean absolute error of the predicted speedup at each P and
 * over all P > 1; per heap: the largest absolute error over P and the
 * absolute error of the predicted P = 1 time.  A figure may not exceed its
 * floor by more than the floor's tolerance, in percentage points, which
 * only absorbs floating-point differences between compilers: the
 * prediction is deterministic.  A model change that improves accuracy
 * tightens the floor in the same commit (gcscale corpus accuracy
 * --write-floor).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_internal.h"

/* The model a report or floor is for; one written before the key existed
 * is the base model's. */
static const char *model_of(const json_t *doc)
{
    return json_string_value(json_object_get(doc, "model")) ?: "base";
}

json_t *gcs_corpus_floor_from_report(const json_t *report, double tolerance_pct)
{
    json_t *entries = json_object();
    size_t i, j;
    json_t *e, *x;
    json_array_foreach(json_object_get(report, "entries"), i, e) {
        json_t *mae = json_object(), *heaps = json_object();
        json_array_foreach(json_object_get(e, "mae_pct"), j, x) {
            char p[16];
            snprintf(p, sizeof p, "%lld", (long long)json_integer_value(json_object_get(x, "threads")));
            json_object_set(mae, p, json_object_get(x, "mae_pct"));
        }
        json_array_foreach(json_object_get(e, "heaps"), j, x)
            json_object_set_new(heaps, json_string_value(json_object_get(x, "name")),
                                json_pack("{s:O, s:f}", "max_abs_error_pct", json_object_get(x, "max_abs_error_pct"),
                                          "p1_time_abs_error_pct",
                                          fabs(json_number_value(json_object_get(x, "p1_time_error_pct")))));
        json_object_set_new(entries, json_string_value(json_object_get(e, "name")),
                            json_pack("{s:O, s:o, s:o}", "mae_all_pct", json_object_get(e, "mae_all_pct"), "mae_pct",
                                      mae, "heaps", heaps));
    }
    return json_pack("{s:s, s:i, s:O, s:s, s:O, s:f, s:o}", "format", GCS_CORPUS_FLOOR_FORMAT, "version", 1,
                     "predictor", json_object_get(report, "predictor"), "model", model_of(report), "span",
                     json_object_get(report, "span"),
                     "tolerance_pct", tolerance_pct, "entries", entries);
}

typedef struct checker {
    double tol;
    int worse;
    FILE *fp;
} checker;

/* One figure against its floor. */
static void check(checker *c, const char *what, double now, json_t *floor)
{
    double f = json_number_value(floor);
    if (!(now <= f + c->tol)) { /* NaN is worse too */
        c->worse = 1;
        if (c->fp)
            fprintf(c->fp, "worse than the floor: %s: %.4f%% (floor %.4f%%, tolerance %.4g)\n", what, now, f, c->tol);
    }
}

static json_t *find_named(json_t *array, const char *name)
{
    size_t i;
    json_t *x;
    json_array_foreach(array, i, x) if (strcmp(json_string_value(json_object_get(x, "name")) ?: "", name) == 0) return x;
    return NULL;
}

int gcs_corpus_floor_check(const json_t *report, const json_t *floor, FILE *fp, gcs_err *err)
{
    if (strcmp(json_string_value(json_object_get(floor, "format")) ?: "", GCS_CORPUS_FLOOR_FORMAT) != 0 ||
        !json_is_object(json_object_get(floor, "entries")) || !json_is_number(json_object_get(floor, "tolerance_pct"))) {
        gcs_err_set(err, "not a corpus floor (format \"%s\" with tolerance_pct and entries)", GCS_CORPUS_FLOOR_FORMAT);
        return -1;
    }
    if (!json_equal(json_object_get(floor, "predictor"), json_object_get(report, "predictor")) ||
        !json_equal(json_object_get(floor, "span"), json_object_get(report, "span")) ||
        strcmp(model_of(floor), model_of(report)) != 0) {
        gcs_err_set(err, "the floor is for the %s model, %s predictor and %s span, the report is not",
                    model_of(floor), json_string_value(json_object_get(floor, "predictor")) ?: "?",
                    json_string_value(json_object_get(floor, "span")) ?: "?");
        return -1;
    }
    checker c = {.tol = json_number_value(json_object_get(floor, "tolerance_pct")), .fp = fp};
    const char *ename, *hname, *p;
    json_t *fe, *fh, *fv;
    json_t *entries = json_object_get(report, "entries");
    json_object_foreach(json_object_get(floor, "entries"), ename, fe) {
        json_t *e = find_named(entries, ename);
        if (!e) {
            gcs_err_set(err, "the floor names entry %s, which the report lacks", ename);
            return -1;
        }
        char what[400];
        snprintf(what, sizeof what, "%s: mean absolute error, all P > 1", ename);
        check(&c, what, json_number_value(json_object_get(e, "mae_all_pct")), json_object_get(fe, "mae_all_pct"));
        json_object_foreach(json_object_get(fe, "mae_pct"), p, fv) {
            json_t *m = NULL, *x;
            size_t i;
            json_array_foreach(json_object_get(e, "mae_pct"), i, x)
                if (json_integer_value(json_object_get(x, "threads")) == atoll(p)) m = x;
            if (!m) {
                gcs_err_set(err, "the floor names %s at P = %s, which the report lacks", ename, p);
                return -1;
            }
            snprintf(what, sizeof what, "%s: mean absolute error at P = %s", ename, p);
            check(&c, what, json_number_value(json_object_get(m, "mae_pct")), fv);
        }
        json_object_foreach(json_object_get(fe, "heaps"), hname, fh) {
            json_t *h = find_named(json_object_get(e, "heaps"), hname);
            if (!h) {
                gcs_err_set(err, "the floor names heap %s/%s, which the report lacks", ename, hname);
                return -1;
            }
            snprintf(what, sizeof what, "%s/%s: largest absolute error", ename, hname);
            check(&c, what, json_number_value(json_object_get(h, "max_abs_error_pct")),
                  json_object_get(fh, "max_abs_error_pct"));
            snprintf(what, sizeof what, "%s/%s: P = 1 time error", ename, hname);
            check(&c, what, fabs(json_number_value(json_object_get(h, "p1_time_error_pct"))),
                  json_object_get(fh, "p1_time_abs_error_pct"));
        }
    }
    return c.worse;
}
