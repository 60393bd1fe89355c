/* repeat.c -- `gcscale calibrate --repeat N`: the calibration run N times
 * and the spread of every constant, so a user knows which digits of a
 * profile to believe.
 *
 * The profile kept is one of the runs, the one nearest the medians (the
 * smallest sum over the constants of |x / median - 1|), not a composite of
 * per-constant medians: its calibration details (load points, fits,
 * warnings) then describe the very figures it holds.  With --gc-only the
 * runs re-measure the collector's constants only, each into a copy of the
 * profile as it was, and the spread and the choice are over those. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/calibrate.h"
#include "gcscale/profile.h"

/* One named constant of a profile. */
typedef struct constant {
    char name[64];
    double value;
} constant;

static void add(constant *out, int *n, int max, const char *name, double value)
{
    if (*n >= max)
        return;
    snprintf(out[*n].name, sizeof out[*n].name, "%s", name);
    out[*n].value = value;
    (*n)++;
}

/* The profile's measured and fitted constants, named as in its uncertainty
 * and unreliable containers (profile.h), in the document's order. */
static int profile_constants(const gcs_profile *p, constant *out, int max)
{
    static const char *const access[] = {"read", "rw"};
    char name[64];
    int n = 0, nn = p->nnodes;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        for (int i = 0; i < nn; i++)
            for (int j = 0; j < nn; j++) {
                snprintf(name, sizeof name, "latency_ns.%s[%d][%d]", access[a], i, j);
                add(out, &n, max, name, gcs_profile_latency(p, (gcs_access)a, i, j));
            }
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        for (int j = 0; j < nn; j++) {
            snprintf(name, sizeof name, "occupancy_ns.%s[%d]", access[a], j);
            add(out, &n, max, name, p->occupancy_ns[a][j]);
        }
    /* The latency with page walks, where measured (a page size without THP
     * has a reason in its place: NaN here, no row). */
    for (int pg = 0; pg < 2; pg++)
        for (int i = 0; i < nn; i++)
            for (int j = 0; j < nn; j++) {
                double v = gcs_profile_full_random_latency(p, (gcs_pages)pg, i, j);
                if (!isfinite(v))
                    continue;
                snprintf(name, sizeof name, "latency_full_random_ns.%s[%d][%d]",
                         gcs_profile_pages_name((gcs_pages)pg), i, j);
                add(out, &n, max, name, v);
                snprintf(name, sizeof name, "page_walk_ns.%s[%d][%d]", gcs_profile_pages_name((gcs_pages)pg),
                         i, j);
                add(out, &n, max, name, gcs_profile_page_walk(p, (gcs_pages)pg, i, j));
            }
    for (int j = 0; p->bandwidth_gbs && j < nn; j++) {
        snprintf(name, sizeof name, "bandwidth_gbs[%d]", j);
        add(out, &n, max, name, p->bandwidth_gbs[j]);
    }
    if (p->has_gc_cost) {
        add(out, &n, max, "gc_cost_ns.object", p->gc_cost_object_ns);
        add(out, &n, max, "gc_cost_ns.pointer", p->gc_cost_pointer_ns);
        add(out, &n, max, "gc_cost_ns.steal", p->gc_cost_steal_ns);
        if (p->has_gc_cost_worker)
            add(out, &n, max, "gc_cost_ns.worker", p->gc_cost_worker_ns);
    }
    if (p->has_gc_steals)
        add(out, &n, max, "gc_steals.a", p->gc_steal_a);
    if (p->has_gc_overlap)
        add(out, &n, max, "gc_miss_overlap", p->gc_miss_overlap);
    if (p->has_gc_class_cost) {
        add(out, &n, max, "gc_class_cost_ns.chain", p->gc_cost_chain_ns);
        add(out, &n, max, "gc_class_cost_ns.array_element", p->gc_cost_array_element_ns);
    }
    if (p->has_gc_null_switch)
        add(out, &n, max, "gc_class_cost_ns.null_switch", p->gc_cost_null_switch_ns);
    if (p->has_gc_stream_line)
        add(out, &n, max, "gc_stream_line_ns", p->gc_stream_line_ns);
    if (p->has_gc_resident) {
        add(out, &n, max, "gc_resident.miss_overlap", p->gc_resident_overlap);
        add(out, &n, max, "gc_resident.stream_line_ns", p->gc_resident_stream_ns);
    }
    if (p->has_gc_line_transfer)
        add(out, &n, max, "gc_line_transfer_ns", p->gc_line_transfer_ns);
    if (p->has_gc_mark_transfer)
        add(out, &n, max, "gc_mark_transfer_ns", p->gc_mark_transfer_ns);
    if (p->has_gc_mark_transfer_cached)
        add(out, &n, max, "gc_mark_transfer_cached_ns", p->gc_mark_transfer_cached_ns);
    if (p->has_gc_coord) {
        add(out, &n, max, "gc_coord.wake_ns.a", p->coord.wake_a);
        add(out, &n, max, "gc_coord.tail_ns.a", p->coord.tail_a);
        add(out, &n, max, "gc_coord.spread_round_ns", p->coord.spread_ns);
        add(out, &n, max, "gc_coord.steal_attempt_ns", p->coord.attempt_ns);
        if (p->coord.attempts_per_search > 0)
            add(out, &n, max, "gc_coord.attempts_per_search", p->coord.attempts_per_search);
    }
    return n;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MAX_CONSTANTS 4096

/* The spread table over the runs' constants whose names start with prefix
 * ("" for all); *chosen gets the run nearest their medians.  Every run has
 * the same topology, so the same constants in the same order; a constant
 * some run lacks (a miss overlap fitted once) is summarised over the runs
 * that have it. */
static gcs_table *spread(gcs_profile **runs, int nruns, const char *prefix, int *chosen)
{
    const char *cols[] = {"constant", "runs", "min", "median", "max", "rel_spread", "unreliable_runs"};
    gcs_table *t = gcs_table_new("spread over the runs (rel_spread = (max - min) / median)", 7, cols);
    constant *first = malloc(MAX_CONSTANTS * sizeof *first);
    constant *other = malloc(MAX_CONSTANTS * sizeof *other);
    double *values = malloc((size_t)nruns * sizeof *values);
    double *score = calloc((size_t)nruns, sizeof *score);
    *chosen = 0;
    if (!t || !first || !other || !values || !score)
        goto done;
    int n = profile_constants(runs[0], first, MAX_CONSTANTS);
    for (int k = 0; k < n; k++) {
        if (strncmp(first[k].name, prefix, strlen(prefix)) != 0)
            continue;
        int have = 0, unreliable = 0;
        double v[GCS_CALIBRATE_MAX_REPEAT];
        for (int r = 0; r < nruns; r++) {
            int m = profile_constants(runs[r], other, MAX_CONSTANTS);
            values[r] = NAN;
            for (int q = 0; q < m; q++)
                if (strcmp(other[q].name, first[k].name) == 0) {
                    values[r] = other[q].value;
                    v[have++] = other[q].value;
                    break;
                }
            unreliable += gcs_profile_unreliable(runs[r], first[k].name) != NULL;
        }
        int used = have; /* >= 1: runs[0] has it */
        qsort(v, (size_t)used, sizeof *v, compare_double);
        double median = used % 2 ? v[used / 2] : 0.5 * (v[used / 2 - 1] + v[used / 2]);
        for (int r = 0; r < nruns; r++)
            if (isfinite(values[r]) && median != 0)
                score[r] += fabs(values[r] / median - 1);
        gcs_table_add_str(t, first[k].name);
        gcs_table_add_int(t, have);
        gcs_table_add_num(t, v[0], 3);
        gcs_table_add_num(t, median, 3);
        gcs_table_add_num(t, v[used - 1], 3);
        gcs_table_add_num(t, median != 0 ? (v[used - 1] - v[0]) / fabs(median) : NAN, 3);
        gcs_table_add_int(t, unreliable);
    }
    for (int r = 1; r < nruns; r++)
        if (score[r] < score[*chosen])
            *chosen = r;
done:
    free(first);
    free(other);
    free(values);
    free(score);
    return t;
}

static int check_runs(int nruns, gcs_err *err)
{
    if (nruns >= 1 && nruns <= GCS_CALIBRATE_MAX_REPEAT)
        return 0;
    gcs_err_set(err, "calibrate: --repeat must be between 1 and %d, got %d", GCS_CALIBRATE_MAX_REPEAT, nruns);
    return -1;
}

/* The spread over the runs' constants named prefix..., and the run nearest
 * their medians moved to *out with it under calibration.repeat. */
static int keep_nearest(gcs_profile **runs, int nruns, const char *prefix, gcs_profile **out, gcs_table **table,
                        gcs_err *err)
{
    int chosen = 0;
    gcs_table *t = spread(runs, nruns, prefix, &chosen);
    if (!t) {
        gcs_err_set(err, "calibrate: out of memory");
        return -1;
    }
    json_object_set_new(gcs_profile_calibration(runs[chosen]), "repeat",
                        json_pack("{s:i, s:i, s:s, s:s, s:o}", "runs", nruns, "kept_run", chosen + 1, "kept",
                                  "the run nearest the medians (smallest sum of |x / median - 1|)", "constants",
                                  *prefix ? "the collector's (gc_*): --gc-only" : "all",
                                  "spread", gcs_table_to_json(t)));
    *out = runs[chosen];
    runs[chosen] = NULL;
    *table = t;
    return 0;
}

int gcs_calibrate_repeat(const gcs_calibrate_opts *opts, int nruns, gcs_profile **out,
                         gcs_table **table, gcs_err *err)
{
    *out = NULL;
    *table = NULL;
    if (check_runs(nruns, err) < 0)
        return -1;
    gcs_profile **runs = calloc((size_t)nruns, sizeof *runs);
    if (!runs) {
        gcs_err_set(err, "calibrate: out of memory");
        return -1;
    }
    int rc = -1;
    for (int r = 0; r < nruns; r++) {
        /* Each run its own progress series but the last, which continues
         * the caller's (opts->progress: its steps after the run). */
        gcs_calibrate_opts o = *opts;
        if (r < nruns - 1)
            o.progress = NULL;
        if (gcs_calibrate_run(&o, &runs[r], err) < 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            gcs_err_set(err, "run %d of %d: %.400s", r + 1, nruns, msg);
            goto done;
        }
    }
    rc = keep_nearest(runs, nruns, "", out, table, err);
done:
    for (int r = 0; r < nruns; r++)
        gcs_profile_free(runs[r]);
    free(runs);
    return rc;
}

int gcs_calibrate_update_gc_repeat(const gcs_profile *p, int quick, int nruns, gcs_progress *pr,
                                   gcs_profile **out, gcs_table **table, gcs_err *err)
{
    *out = NULL;
    *table = NULL;
    if (check_runs(nruns, err) < 0)
        return -1;
    gcs_profile **runs = calloc((size_t)nruns, sizeof *runs);
    json_t *doc = gcs_profile_to_json(p);
    int rc = -1;
    if (!runs || !doc) {
        gcs_err_set(err, "calibrate: out of memory");
        goto done;
    }
    for (int r = 0; r < nruns; r++) {
        /* each run from the profile as it was, so that none inherits
         * another's costs (their details would mix) */
        if (!(runs[r] = gcs_profile_from_json(doc, err)))
            goto done;
        if (gcs_calibrate_update_gc(runs[r], quick, pr, err) < 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            gcs_err_set(err, "run %d of %d: %.400s", r + 1, nruns, msg);
            goto done;
        }
    }
    rc = keep_nearest(runs, nruns, "gc_", out, table, err);
done:
    json_decref(doc);
    for (int r = 0; runs && r < nruns; r++)
        gcs_profile_free(runs[r]);
    free(runs);
    return rc;
}
