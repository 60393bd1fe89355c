/* corpus_accuracy.c -- the model against the corpus (gcs_corpus_accuracy,
 * include/gcscale/corpus.h; the report's JSON: docs/corpus.md).
 *
 * Each heap is predicted from its entry's profile and its snapshot alone,
 * with the library calls gcscale predict makes (gcs_inspect_heap,
 * gcs_predict_curve, gcs_model_recommend), so that the corpus checks what
 * users get.  The prediction is deterministic: the same model gives the
 * same report, which is what lets a test hold it to a floor.
 *
 * Measured speedup at P is median(T1) / median(TP) over the repetitions;
 * its spread is median(T1) / max(TP) .. median(T1) / min(TP).  Error is
 * predicted / measured - 1, in percent.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus_internal.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/predict.h"
#include "gcscale/profile.h"

void gcs_corpus_accuracy_opts_init(gcs_corpus_accuracy_opts *o)
{
    memset(o, 0, sizeof *o);
    o->predictor = -1;
    o->span = GCS_MODEL_SPAN_CRITICAL; /* as gcscale predict */
    o->residency = GCS_MODEL_RESIDENCY_DEFAULT;
    o->steal_count_sim = -1;
    o->model_v2 = 1; /* as gcscale predict */
}

/* Whether this entry's steal count is simulated (model v2), as gcscale
 * predict decides it for the entry's profile and predictor. */
static int steals_simulated(const gcs_corpus_accuracy_opts *o, const gcs_profile *prof, gcs_inspect_predictor which)
{
    if (!o->model_v2 || !prof->has_gc_coord)
        return 0;
    return o->steal_count_sim >= 0 ? o->steal_count_sim : gcs_inspect_steals_simulated_by_default(prof, which);
}

/* The heap's snapshot: the entry's file, or the shape rebuilt into the
 * cache; either way its graph must have the entry's checksum. */
static gcs_snapshot *load_heap(const char *dir, const char *entry, json_t *heap, const char *cache_dir,
                               int *rebuilt, gcs_err *err)
{
    const char *name = json_string_value(json_object_get(heap, "name"));
    const char *file, *want;
    gcs_shape_params sp;
    char path[4400];
    gcs_snapshot *g = NULL;
    if (_gcs_corpus_heap_recipe(heap, entry, &file, &sp, &want, err) < 0)
        return NULL;
    *rebuilt = !file;
    if (file) {
        snprintf(path, sizeof path, "%s/%s", dir, file);
        g = gcs_snapshot_read(path, err);
    } else {
        snprintf(path, sizeof path, "%s/%s", cache_dir, entry);
        if (gcs_make_dirs(path, err) < 0)
            return NULL;
        snprintf(path, sizeof path, "%s/%s/%s.snap", cache_dir, entry, name);
        gcs_err ignored;
        if (access(path, R_OK) == 0)
            g = gcs_snapshot_read(path, &ignored);
        char sum[16];
        if (g)
            gcs_corpus_graph_checksum(g, sum);
        if (!g || strcmp(sum, want) != 0) { /* not cached, or cached by another build */
            gcs_snapshot_free(g);
            if (_gcs_corpus_shape_snapshot(&sp, path, err) < 0)
                return NULL;
            g = gcs_snapshot_read(path, err);
        }
    }
    if (g && want) {
        char sum[16];
        gcs_corpus_graph_checksum(g, sum);
        if (strcmp(sum, want) != 0) {
            gcs_err_set(err, "%s/%s: the %s heap's graph has checksum %s, the entry says %s: not the heap "
                        "that was measured (did the shape builder or the collector's heap layout change?)",
                        entry, name, *rebuilt ? "rebuilt" : "stored", sum, want);
            gcs_snapshot_free(g);
            return NULL;
        }
    }
    return g;
}

static inline double pct(double pred, double meas) { return 100 * (pred / meas - 1); }

#define P1_BAR_PCT 15.0 /* the model issue's bars, counted per heap */
#define REC_BAR_PCT 5.0

/* The model and inspection options for an entry's profile, as gcscale
 * predict sets them: the same for every heap of the entry. */
static void entry_opts(const gcs_profile *prof, const gcs_corpus_accuracy_opts *o, gcs_model_opts *mo,
                       gcs_model_sources *sources, gcs_inspect_opts *io)
{
    gcs_inspect_opts_init(io);
    io->predictor = o->predictor >= 0 ? (gcs_inspect_predictor)o->predictor : gcs_inspect_default_predictor(prof);
    gcs_model_opts_init(mo);
    mo->span = o->span;
    memset(sources, 0, sizeof *sources);
    if (o->model_v2) { /* as gcscale predict: --model v2 prices misses with the fitted overlap */
        gcs_model_opts_v2(mo, prof, o->residency, 0, sources);
        gcs_model_opts_v2_costs(mo, prof, sources);
        /* As gcscale predict: the term needs the profile's transfer cost. */
        mo->sharing = io->shared_lines = o->shared_lines && prof->has_gc_line_transfer;
        if (o->no_steal_work)
            mo->steal_work_ns = mo->worker_work_ns = 0;
        /* at most this many P; eval_heap lowers it to the heap's points */
        if (steals_simulated(o, prof, io->predictor))
            io->steal_sim_threads = GCS_MODEL_SIM_MAX_THREADS;
    }
}

/* Predicts one heap with the entry's options and compares; appends its
 * report to heaps.  Adds its errors to the entry's sums (per P, and of
 * |P = 1 time error|). */
static int eval_heap(const char *dir, const char *entry, json_t *heap, const gcs_profile *prof,
                     const gcs_model_opts *mo, const gcs_inspect_opts *io, const char *cache_dir, json_t *heaps,
                     double *sum_err, int *cnt_err, double *sum_p1, gcs_err *err)
{
    const char *name = json_string_value(json_object_get(heap, "name"));
    gcs_corpus_measured m[GCS_GC_MAX_THREADS];
    int threads[GCS_GC_MAX_THREADS], npoints;
    if (_gcs_corpus_heap_points(heap, entry, m, &npoints, err) < 0)
        return -1;
    size_t np = (size_t)npoints;
    for (size_t i = 0; i < np; i++)
        threads[i] = m[i].threads;
    int rebuilt;
    gcs_snapshot *g = load_heap(dir, entry, heap, cache_dir, &rebuilt, err);
    if (!g)
        return -1;
    gcs_inspect_result ir;
    gcs_model_result res[GCS_GC_MAX_THREADS];
    gcs_inspect_opts hio = *io; /* the steals simulated up to the measured P */
    if (hio.steal_sim_threads > threads[np - 1])
        hio.steal_sim_threads = threads[np - 1];
    int rc = gcs_inspect_heap(g, prof, &hio, &ir, err);
    uint64_t objects = g->nobjects;
    gcs_snapshot_free(g);
    if (rc < 0 || gcs_predict_curve(prof, &ir.heap, threads, (int)np, mo, res, err) < 0) {
        gcs_err_set(err, "%s/%s: %s", entry, name, err->msg);
        return -1;
    }
    json_t *points = json_array();
    int simulated = ir.heap.steals_simulated;
    double t1 = m[0].median, max_abs = 0;
    int best = 0;
    for (size_t i = 0; i < np; i++) {
        double sp = t1 / m[i].median, e = pct(res[i].speedup, sp);
        if (m[i].median < m[best].median)
            best = (int)i;
        if (i > 0) {
            max_abs = fmax(max_abs, fabs(e));
            sum_err[threads[i] - 1] += fabs(e);
            cnt_err[threads[i] - 1]++;
        }
        json_array_append_new(points, json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                                                "threads", threads[i], "reps", m[i].n, "mark_ms_median",
                                                m[i].median / 1e6, "mark_ms_min", m[i].min / 1e6, "mark_ms_max",
                                                m[i].max / 1e6, "speedup", sp, "speedup_min", t1 / m[i].max,
                                                "speedup_max", t1 / m[i].min, "predicted", res[i].speedup,
                                                "predicted_ms", res[i].time_ns / 1e6, "error_pct", e));
        json_t *pt = json_array_get(points, i);
        if (threads[i] >= 2 && threads[i] <= simulated) { /* --steal-count simulated */
            json_object_set_new(pt, "steals_simulated", json_real(ir.heap.sim_steals[threads[i]]));
            if (isfinite(m[i].steals_median))
                json_object_set_new(pt, "steals_measured", json_real(m[i].steals_median));
        }
    }
    int rec = gcs_model_recommend(res, (int)np, GCS_PREDICT_TOLERANCE);
    size_t ri = 0;
    while (ri + 1 < np && threads[ri] != rec)
        ri++;
    double p1_err = pct(res[0].time_ns, t1);
    *sum_p1 += fabs(p1_err);
    json_t *h = json_pack("{s:s, s:s, s:I, s:b, s:f, s:f, s:f, s:i, s:i, s:f, s:f, s:o}", "name", name, "kind",
                          json_string_value(json_object_get(heap, "kind")), "objects", (json_int_t)objects,
                          "rebuilt", rebuilt, "p1_measured_ms", t1 / 1e6, "p1_predicted_ms", res[0].time_ns / 1e6,
                          "p1_time_error_pct", p1_err, "recommended_threads", rec, "best_threads", threads[best],
                          "recommended_over_best", m[ri].median / m[best].median, "max_abs_error_pct", max_abs,
                          "points", points);
    json_array_append_new(heaps, h);
    return 0;
}

/* The simulated steals against the measured ones over an entry's points
 * (P >= 2, both known): how many within a factor of 2, and the median
 * ratio, each count + 1 so that a list's 0 against 0 is a match. */
static json_t *steal_count_summary(json_t *heaps)
{
    double r[GCS_GC_MAX_THREADS * 64];
    int n = 0, within = 0;
    size_t i, k;
    json_t *heap, *pt;
    json_array_foreach(heaps, i, heap) {
        json_array_foreach(json_object_get(heap, "points"), k, pt) {
            json_t *meas = json_object_get(pt, "steals_measured"), *sim = json_object_get(pt, "steals_simulated");
            if (!meas || !sim || n == (int)(sizeof r / sizeof *r))
                continue;
            r[n] = (json_number_value(sim) + 1) / (json_number_value(meas) + 1);
            within += r[n] >= 0.5 && r[n] <= 2;
            n++;
        }
    }
    return json_pack("{s:i, s:i, s:o}", "points", n, "within_2x", within, "median_ratio",
                     n ? json_real(gcs_stats_median(r, (size_t)n)) : json_null());
}

static int eval_entry(const char *dir, const gcs_corpus_accuracy_opts *o, const char *cache_dir, json_t *entries,
                      gcs_progress *pr, gcs_err *err)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/entry.json", dir);
    json_t *doc = gcs_json_read_file(path, err);
    if (!doc)
        return -1;
    const char *entry = strrchr(dir, '/') && strrchr(dir, '/')[1] ? strrchr(dir, '/') + 1 : dir;
    char ename[256];
    snprintf(ename, sizeof ename, "%s", entry);
    ename[strcspn(ename, "/")] = 0;
    int rc = -1;
    gcs_profile *prof = NULL;
    json_t *heaps_in = json_object_get(doc, "heaps");
    if (_gcs_corpus_entry_check(doc, path, err) < 0)
        goto done;
    snprintf(path, sizeof path, "%s/%s", dir, json_string_value(json_object_get(doc, "profile")) ?: "profile.json");
    if (!(prof = gcs_profile_load(path, err)))
        goto done;
    gcs_model_opts mo;
    gcs_model_sources sources;
    gcs_inspect_opts io;
    entry_opts(prof, o, &mo, &sources, &io);
    double sum_err[GCS_GC_MAX_THREADS] = {0}, sum_p1 = 0;
    int cnt_err[GCS_GC_MAX_THREADS] = {0};
    json_t *heaps = json_array();
    size_t i;
    json_t *heap;
    json_array_foreach(heaps_in, i, heap) {
        char step[300];
        snprintf(step, sizeof step, "%s: %s", ename, json_string_value(json_object_get(heap, "name")) ?: "?");
        gcs_progress_step(pr, step, 1);
        if (eval_heap(dir, ename, heap, prof, &mo, &io, cache_dir, heaps, sum_err, cnt_err, &sum_p1, err) < 0) {
            json_decref(heaps);
            goto done;
        }
        gcs_progress_done(pr, 1);
    }
    json_t *mae = json_array();
    double all = 0;
    int nall = 0;
    for (int p = 2; p <= GCS_GC_MAX_THREADS; p++)
        if (cnt_err[p - 1]) {
            json_array_append_new(mae, json_pack("{s:i, s:i, s:f}", "threads", p, "heaps", cnt_err[p - 1],
                                                 "mae_pct", sum_err[p - 1] / cnt_err[p - 1]));
            all += sum_err[p - 1];
            nall += cnt_err[p - 1];
        }
    json_t *machine = json_object_get(doc, "machine"), *missing = json_object_get(doc, "missing");
    missing = missing ? json_incref(missing) : json_array();
    json_t *e = json_pack("{s:s, s:s, s:s, s:O, s:O, s:o, s:o, s:f, s:f, s:o}", "name", ename, "dir", dir, "predictor",
                          gcs_inspect_predictor_name(o->predictor >= 0 ? (gcs_inspect_predictor)o->predictor
                                                                       : gcs_inspect_default_predictor(prof)),
                          "cpus",
                          json_object_get(machine, "cpus") ?: json_null(), "cpu_model",
                          json_object_get(machine, "cpu_model") ?: json_null(), "missing",
                          missing, "mae_pct", mae, "mae_all_pct",
                          nall ? all / nall : 0.0, "p1_time_mae_pct",
                          json_array_size(heaps) ? sum_p1 / (double)json_array_size(heaps) : 0.0, "heaps", heaps);
    /* The bars per heap (docs/corpus.md, "The bars"): the P = 1
     * time within 15 % and the recommended P's measured time within 5 % of
     * the measured best. */
    int p1_ok = 0, rec_ok = 0;
    json_array_foreach(heaps, i, heap) {
        p1_ok += fabs(json_number_value(json_object_get(heap, "p1_time_error_pct"))) <= P1_BAR_PCT;
        rec_ok += json_number_value(json_object_get(heap, "recommended_over_best")) <= 1 + REC_BAR_PCT / 100;
    }
    /* whether this entry's resident lines were priced apart (model v2 on a
     * profile with gc_resident, or --residency on), as predict decides */
    json_object_set_new(e, "residency", json_string(!sources.residency ? "off"
                                                    : sources.resident ? "gc_resident"
                                                                       : "llc_hit_ns"));
    if (o->model_v2 && (o->steal_count_sim > 0 || io.steal_sim_threads > 0))
        json_object_set_new(e, "steal_count", steal_count_summary(heaps));
    json_object_set_new(e, "p1_within_15pct", json_integer(p1_ok));
    json_object_set_new(e, "recommended_within_5pct", json_integer(rec_ok));
    json_array_append_new(entries, e);
    rc = 0;
done:
    gcs_profile_free(prof);
    json_decref(doc);
    return rc;
}

int gcs_corpus_accuracy(const char *const *dirs, int n, const gcs_corpus_accuracy_opts *o, json_t **report,
                        gcs_err *err)
{
    const char *cache_dir = o->cache_dir ? o->cache_dir : "build/corpus-cache";
    double work = 0;
    for (int i = 0; i < n; i++) { /* one unit per heap */
        char path[4400];
        snprintf(path, sizeof path, "%s/entry.json", dirs[i]);
        gcs_err ignored;
        json_t *doc = gcs_json_read_file(path, &ignored);
        work += doc ? (double)json_array_size(json_object_get(doc, "heaps")) : 1;
        json_decref(doc);
    }
    gcs_progress pr;
    gcs_progress_init(&pr, work, o->quiet);
    json_t *entries = json_array();
    for (int i = 0; i < n; i++)
        if (eval_entry(dirs[i], o, cache_dir, entries, &pr, err) < 0) {
            json_decref(entries);
            return -1;
        }
    gcs_progress_finish(&pr);
    char model[64];
    snprintf(model, sizeof model, "%s%s%s%s%s", o->model_v2 ? "v2" : "base",
             o->model_v2 && o->no_steal_work ? "-steal-work" : "", o->model_v2 && o->shared_lines ? "+shared-lines" : "",
             !o->model_v2 || o->steal_count_sim < 0 ? ""
             : o->steal_count_sim                    ? "+simulated-steals"
                                                     : "+fitted-steals",
             !o->model_v2 || o->residency == GCS_MODEL_RESIDENCY_DEFAULT ? ""
             : o->residency                                             ? "+residency"
                                                                        : "-residency");
    *report = json_pack("{s:s, s:i, s:s, s:s, s:s, s:o}", "format", "gcscale-corpus-accuracy", "version", 1,
                        "predictor",
                        o->predictor < 0 ? "default" : gcs_inspect_predictor_name((gcs_inspect_predictor)o->predictor),
                        "model", model, "span", gcs_model_span_name(o->span), "entries",
                        entries);
    return 0;
}

/* ---- text ---------------------------------------------------------------------- */

static double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

void gcs_corpus_accuracy_print(const json_t *report, FILE *fp)
{
    size_t i, j, k, heaps_all = 0;
    long long p1_all = 0, rec_all = 0;
    json_t *e, *h, *pt;
    fprintf(fp, "model: %s, %s predictor (default: as gcscale predict), %s span\n",
            json_string_value(json_object_get(report, "model")) ?: "base",
            json_string_value(json_object_get(report, "predictor")), json_string_value(json_object_get(report, "span")));
    json_array_foreach(json_object_get(report, "entries"), i, e) {
        const char *res = json_string_value(json_object_get(e, "residency"));
        fprintf(fp, "\n== %s (%lld CPUs%s%s; %s predictor%s)\n", json_string_value(json_object_get(e, "name")),
                (long long)json_integer_value(json_object_get(e, "cpus")),
                json_is_string(json_object_get(e, "cpu_model")) ? ", " : "",
                json_string_value(json_object_get(e, "cpu_model")) ?: "",
                json_string_value(json_object_get(e, "predictor")),
                !res || strcmp(res, "off") == 0 ? ""
                : strcmp(res, "gc_resident") == 0 ? "; resident lines at the profile's gc_resident"
                                                  : "; resident lines at llc_hit_ns / the overlap");
        json_array_foreach(json_object_get(e, "missing"), j, h)
            fprintf(fp, "missing: %s\n", json_string_value(h));
        static const char *const cols[] = {"heap", "P", "measured", "min", "max", "predicted", "error_pct"};
        gcs_table *t = gcs_table_new("speedup, measured (median, min-max over repetitions) and predicted", 7, cols);
        json_array_foreach(json_object_get(e, "heaps"), j, h)
            json_array_foreach(json_object_get(h, "points"), k, pt) {
                if (json_integer_value(json_object_get(pt, "threads")) == 1)
                    continue;
                gcs_table_add_str(t, json_string_value(json_object_get(h, "name")));
                gcs_table_add_int(t, json_integer_value(json_object_get(pt, "threads")));
                gcs_table_add_num(t, num(pt, "speedup"), 2);
                gcs_table_add_num(t, num(pt, "speedup_min"), 2);
                gcs_table_add_num(t, num(pt, "speedup_max"), 2);
                gcs_table_add_num(t, num(pt, "predicted"), 2);
                gcs_table_add_num(t, num(pt, "error_pct"), 1);
            }
        gcs_table_print(t, fp, GCS_FORMAT_TEXT);
        gcs_table_free(t);
        static const char *const hc[] = {"heap", "objects", "P1_ms", "P1_pred_ms", "P1_error_pct", "rec_P",
                                         "best_P", "rec_over_best", "max_abs_error_pct"};
        t = gcs_table_new("per heap: P = 1 time, the recommended P against the measured best", 9, hc);
        json_array_foreach(json_object_get(e, "heaps"), j, h) {
            gcs_table_add_str(t, json_string_value(json_object_get(h, "name")));
            gcs_table_add_int(t, json_integer_value(json_object_get(h, "objects")));
            gcs_table_add_num(t, num(h, "p1_measured_ms"), 2);
            gcs_table_add_num(t, num(h, "p1_predicted_ms"), 2);
            gcs_table_add_num(t, num(h, "p1_time_error_pct"), 1);
            gcs_table_add_int(t, json_integer_value(json_object_get(h, "recommended_threads")));
            gcs_table_add_int(t, json_integer_value(json_object_get(h, "best_threads")));
            gcs_table_add_num(t, num(h, "recommended_over_best"), 3);
            gcs_table_add_num(t, num(h, "max_abs_error_pct"), 1);
        }
        fprintf(fp, "\n");
        gcs_table_print(t, fp, GCS_FORMAT_TEXT);
        gcs_table_free(t);
        fprintf(fp, "\nmean absolute error by P:");
        json_array_foreach(json_object_get(e, "mae_pct"), j, h)
            fprintf(fp, " %lld: %.1f%%", (long long)json_integer_value(json_object_get(h, "threads")),
                    num(h, "mae_pct"));
        fprintf(fp, "\nmean absolute error, all P > 1: %.1f%%; P = 1 time, mean absolute error: %.1f%%\n",
                num(e, "mae_all_pct"), num(e, "p1_time_mae_pct"));
        size_t nh = json_array_size(json_object_get(e, "heaps"));
        fprintf(fp, "P = 1 time within 15%%: %lld of %zu heaps; the recommended P within 5%% of the measured "
                    "best: %lld of %zu\n",
                (long long)json_integer_value(json_object_get(e, "p1_within_15pct")), nh,
                (long long)json_integer_value(json_object_get(e, "recommended_within_5pct")), nh);
        json_t *sc = json_object_get(e, "steal_count");
        if (sc && json_integer_value(json_object_get(sc, "points")) > 0)
            fprintf(fp, "steals simulated against measured (P > 1): within 2x at %lld of %lld points, median "
                        "ratio %.2f\n",
                    (long long)json_integer_value(json_object_get(sc, "within_2x")),
                    (long long)json_integer_value(json_object_get(sc, "points")), num(sc, "median_ratio"));
        else if (sc)
            fprintf(fp, "steals not simulated: %s\n", "the entry's profile has no gc_coord, or its "
                                                         "measurements no steal counts");
        heaps_all += nh;
        p1_all += json_integer_value(json_object_get(e, "p1_within_15pct"));
        rec_all += json_integer_value(json_object_get(e, "recommended_within_5pct"));
    }
    if (json_array_size(json_object_get(report, "entries")) > 1)
        fprintf(fp, "\nall entries: P = 1 time within 15%%: %lld of %zu heaps; the recommended P within 5%% of "
                    "the measured best: %lld of %zu (%.1f%%)\n", /* 89.6 is not the bar's 90 */
                p1_all, heaps_all, rec_all, heaps_all, heaps_all ? 100.0 * (double)rec_all / (double)heaps_all : 0.0);
}
