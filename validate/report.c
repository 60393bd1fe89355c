/* report.c -- writing the validation report (include/gcscale/validate.h):
 * three tables (errors, adaptive, stacks) as CSV and Markdown, everything as
 * JSON, two plots per workload, and summary.md linking them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gcscale/plot.h"
#include "gcscale/validate.h"
#include "corpus_internal.h"

#define PCT(x) (isfinite(x) ? (x) : NAN)

/* ---- tables ------------------------------------------------------------------ */

static gcs_table *error_table(const gcs_validate_report *r)
{
    static const char *const cols[] = {"workload", "P", "measured", "pred", "pred_m_p_eq_m1",
                                       "pred_q_p_eq_q1", "error_pct", "pred_fast", "error_fast_pct",
                                       "pred_critical_span", "error_critical_pct", "pred_overlap",
                                       "error_overlap_pct", "pred_v2", "error_v2_pct", "pred_v2_sim",
                                       "error_v2_sim_pct", "measured_median"};
    gcs_table *t = gcs_table_new("prediction error (speedup over P = 1; Pred = slow predictor)",
                                 18, cols);
    for (int i = 0; i < r->nworkloads; i++)
        for (int p = 2; p <= r->w[i].npoints; p++) {
            const gcs_validate_point *pt = &r->w[i].points[p - 1];
            gcs_table_add_str(t, r->w[i].name);
            gcs_table_add_int(t, p);
            gcs_table_add_num(t, pt->speedup, 2);
            gcs_table_add_num(t, pt->pred, 2);
            gcs_table_add_num(t, pt->pred_no_contention, 2);
            gcs_table_add_num(t, pt->pred_no_extra, 2);
            gcs_table_add_num(t, PCT(pt->error_pct), 1);
            gcs_table_add_num(t, pt->pred_fast, 2);
            gcs_table_add_num(t, PCT(pt->error_fast_pct), 1);
            gcs_table_add_num(t, pt->pred_critical, 2);
            gcs_table_add_num(t, PCT(pt->error_critical_pct), 1);
            gcs_table_add_num(t, pt->pred_overlap, 2);
            gcs_table_add_num(t, PCT(pt->error_overlap_pct), 1);
            gcs_table_add_num(t, pt->pred_v2, 2);
            gcs_table_add_num(t, PCT(pt->error_v2_pct), 1);
            gcs_table_add_num(t, pt->pred_v2_sim, 2);
            gcs_table_add_num(t, PCT(pt->error_v2_sim_pct), 1);
            gcs_table_add_num(t, pt->speedup_median, 2);
        }
    return t;
}

static gcs_table *mae_table(const gcs_validate_report *r)
{
    static const char *const cols[] = {"P", "mae_pct", "mae_fast_pct", "mae_critical_pct",
                                       "mae_overlap_pct", "mae_v2_pct", "mae_v2_sim_pct", "target_pct"};
    gcs_table *t = gcs_table_new("mean absolute error over the workloads", 8, cols);
    for (int p = 2; p <= r->max_threads; p++) {
        gcs_table_add_int(t, p);
        gcs_table_add_num(t, r->mae_pct[p], 1);
        gcs_table_add_num(t, r->mae_fast_pct[p], 1);
        gcs_table_add_num(t, r->mae_critical_pct[p], 1);
        gcs_table_add_num(t, PCT(r->mae_overlap_pct[p]), 1);
        gcs_table_add_num(t, PCT(r->mae_v2_pct[p]), 1);
        gcs_table_add_num(t, PCT(r->mae_v2_sim_pct[p]), 1);
        gcs_table_add_num(t, GCS_VALIDATE_ERROR_TARGET, 0);
    }
    return t;
}

/* The mark time itself, not its ratio: the paper's form makes every miss
 * wait its whole latency, --overlap fitted does not, and model v2 prices
 * the serial work as the collector spends it (docs/model.md). */
static gcs_table *time_table(const gcs_validate_report *r)
{
    static const char *const cols[] = {"workload", "P", "measured_ms", "pred_ms", "error_pct",
                                       "pred_overlap_ms", "error_overlap_pct", "pred_v2_ms", "error_v2_pct"};
    gcs_table *t = gcs_table_new("mark time per snapshot (fastest re-mark; Pred = slow predictor)", 9, cols);
    for (int i = 0; i < r->nworkloads; i++)
        for (int p = 1; p <= r->w[i].npoints; p++) {
            const gcs_validate_point *pt = &r->w[i].points[p - 1];
            gcs_table_add_str(t, r->w[i].name);
            gcs_table_add_int(t, p);
            gcs_table_add_num(t, pt->mark_ms, 3);
            gcs_table_add_num(t, pt->pred_ms[0], 3);
            gcs_table_add_num(t, PCT(100 * (pt->pred_ms[0] / pt->mark_ms - 1)), 1);
            gcs_table_add_num(t, pt->pred_ms[5], 3);
            gcs_table_add_num(t, PCT(100 * (pt->pred_ms[5] / pt->mark_ms - 1)), 1);
            /* as gcscale predict --model v2 prints it: the slow predictor's
             * simulated steal count (pred_ms[6] is the fitted count's) */
            gcs_table_add_num(t, pt->pred_ms[7], 3);
            gcs_table_add_num(t, PCT(100 * (pt->pred_ms[7] / pt->mark_ms - 1)), 1);
        }
    return t;
}

/* The collector's steals against the simulation's on the same snapshots
 * (model/steals.c; predict --model v2 --steal-count simulated prices
 * them): a live check of the simulation on this machine. */
static gcs_table *steal_table(const gcs_validate_report *r)
{
    static const char *const cols[] = {"workload", "P", "measured", "simulated"};
    gcs_table *t = gcs_table_new("steals per re-mark (the collector's median re-mark; simulated on the "
                                 "snapshot's graph)", 4, cols);
    for (int i = 0; i < r->nworkloads; i++)
        for (int p = 2; p <= r->w[i].npoints; p++) {
            const gcs_validate_point *pt = &r->w[i].points[p - 1];
            gcs_table_add_str(t, r->w[i].name);
            gcs_table_add_int(t, p);
            gcs_table_add_num(t, pt->steals_measured, 0);
            gcs_table_add_num(t, PCT(pt->steals_simulated), 0);
        }
    return t;
}

static gcs_table *adaptive_table(const gcs_validate_report *r)
{
    static const char *const cols[] = {"workload", "run", "collections", "mark_ms", "pause_ms",
                                       "wall_ms", "avg_threads", "gc_speedup", "decision_pct"};
    gcs_table *t = gcs_table_new("whole runs: fixed GC threads and adaptive (GC speedup = mark time "
                                 "at P = 1 / mark time)", 9, cols);
    for (int i = 0; i < r->nworkloads; i++) {
        const gcs_validate_workload *w = &r->w[i];
        for (int k = 0; k < w->nruns; k++) {
            const gcs_validate_whole_run *run = &w->runs[k];
            char name[48];
            if (run->adaptive)
                snprintf(name, sizeof name, "adaptive:%d", run->threads);
            else
                snprintf(name, sizeof name, "P = %d%s", run->threads, k == w->best_fixed ? " (best)" : "");
            gcs_table_add_str(t, w->name);
            gcs_table_add_str(t, name);
            gcs_table_add_int(t, (long long)run->collections);
            gcs_table_add_num(t, run->mark_ms, 1);
            gcs_table_add_num(t, run->pause_ms, 1);
            gcs_table_add_num(t, run->wall_ms, 0);
            gcs_table_add_num(t, run->avg_threads, 2);
            gcs_table_add_num(t, run->mark_ms > 0 ? w->runs[0].mark_ms / run->mark_ms : NAN, 2);
            gcs_table_add_num(t, run->adaptive ? run->decision_pct : NAN, 3);
        }
    }
    return t;
}

static gcs_table *verdict_table(const gcs_validate_report *r)
{
    static const char *const cols[] = {"workload", "speedup_all_threads", "speedup_adaptive",
                                       "adaptive_avg_threads", "best_fixed_p", "adaptive_over_best_pct",
                                       "noise_pct", "adaptive_ok"};
    gcs_table *t = gcs_table_new("adaptive against fixed thread counts (the paper's Table 4)", 8, cols);
    for (int i = 0; i < r->nworkloads; i++) {
        const gcs_validate_workload *w = &r->w[i];
        gcs_table_add_str(t, w->name);
        gcs_table_add_num(t, w->speedup_full, 2);
        gcs_table_add_num(t, w->speedup_adaptive, 2);
        gcs_table_add_num(t, w->runs[w->nruns - 1].avg_threads, 2);
        gcs_table_add_int(t, w->runs[w->best_fixed].threads);
        gcs_table_add_num(t, w->adaptive_over_best_pct, 1);
        gcs_table_add_num(t, w->noise_pct, 1);
        gcs_table_add_str(t, w->adaptive_ok ? "yes" : "NO");
    }
    return t;
}

static gcs_table *stack_table(const gcs_validate_report *r)
{
    static const char *const cols[] = {"workload", "P", "kind", "speedup", "extra_work", "search",
                                       "wake", "tail", "other", "lost_span", "lost_contention"};
    gcs_table *t = gcs_table_new("GC speedup stacks (threads; each row adds up to P)", 11, cols);
    for (int i = 0; i < r->nworkloads; i++)
        for (int p = 1; p <= r->w[i].npoints; p++) {
            const gcs_validate_point *pt = &r->w[i].points[p - 1];
            const gcs_validate_stack *m = &pt->measured_stack;
            gcs_table_add_str(t, r->w[i].name);
            gcs_table_add_int(t, p);
            gcs_table_add_str(t, "measured");
            gcs_table_add_num(t, m->speedup, 3);
            gcs_table_add_num(t, m->extra_work, 3);
            gcs_table_add_num(t, m->search, 3);
            gcs_table_add_num(t, m->wake, 3);
            gcs_table_add_num(t, m->tail, 3);
            gcs_table_add_num(t, m->other, 3);
            for (int k = 0; k < 2; k++)
                gcs_table_add_num(t, NAN, 0);
            gcs_table_add_str(t, r->w[i].name);
            gcs_table_add_int(t, p);
            gcs_table_add_str(t, "predicted");
            gcs_table_add_num(t, pt->pred_stack[0], 3);
            /* extra work (extra misses and shared lines) and the
             * coordination parts in the measured stack's own columns */
            gcs_table_add_num(t, pt->pred_stack[2], 3);
            gcs_table_add_num(t, pt->pred_stack[5], 3);
            gcs_table_add_num(t, pt->pred_stack[4], 3);
            gcs_table_add_num(t, pt->pred_stack[6], 3);
            gcs_table_add_num(t, NAN, 0);
            gcs_table_add_num(t, pt->pred_stack[1], 3);
            gcs_table_add_num(t, pt->pred_stack[3], 3);
        }
    return t;
}

/* A Markdown table from a gcs_table's JSON rows (the same cells as text). */
static void markdown_table(FILE *fp, const gcs_table *t)
{
    json_t *rows = gcs_table_to_json(t);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        const char *key;
        json_t *v;
        if (i == 0) {
            fprintf(fp, "|");
            json_object_foreach(row, key, v) fprintf(fp, " %s |", key);
            fprintf(fp, "\n|");
            json_object_foreach(row, key, v) fprintf(fp, "---|");
            fprintf(fp, "\n");
        }
        fprintf(fp, "|");
        json_object_foreach(row, key, v) {
            if (json_is_string(v))
                fprintf(fp, " %s |", json_string_value(v));
            else if (json_is_integer(v))
                fprintf(fp, " %lld |", (long long)json_integer_value(v));
            else if (json_is_real(v))
                fprintf(fp, " %.4g |", json_real_value(v));
            else
                fprintf(fp, " - |");
        }
        fprintf(fp, "\n");
    }
    fprintf(fp, "\n");
    json_decref(rows);
}

static int write_table_csv(const gcs_table *t, const char *dir, const char *name, gcs_err *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) < 0)
        return -1;
    gcs_table_print(t, out.fp, GCS_FORMAT_CSV);
    return gcs_outfile_commit(&out, err);
}

/* ---- plots --------------------------------------------------------------------- */

static int speedup_plot(const gcs_validate_report *r, const gcs_validate_workload *w, const char *dir,
                        gcs_err *err)
{
    int n = w->npoints;
    double x[GCS_GC_MAX_THREADS], ideal[GCS_GC_MAX_THREADS], meas[GCS_GC_MAX_THREADS],
        pred[GCS_GC_MAX_THREADS], nc[GCS_GC_MAX_THREADS], ne[GCS_GC_MAX_THREADS],
        fast[GCS_GC_MAX_THREADS], crit[GCS_GC_MAX_THREADS];
    for (int p = 1; p <= n; p++) {
        const gcs_validate_point *pt = &w->points[p - 1];
        x[p - 1] = p, ideal[p - 1] = p, meas[p - 1] = pt->speedup, pred[p - 1] = pt->pred;
        nc[p - 1] = pt->pred_no_contention, ne[p - 1] = pt->pred_no_extra;
        fast[p - 1] = pt->pred_fast, crit[p - 1] = pt->pred_critical;
    }
    gcs_plot_series s[] = {
        {"ideal", x, ideal, n, GCS_PLOT_DASHED, "#999999", NULL, NULL},
        {"measured (fastest re-mark per P)", x, meas, n, GCS_PLOT_LINE, "#000000", NULL, NULL},
        {"Pred (slow predictor)", x, pred, n, GCS_PLOT_LINE, "#1f77b4", NULL, NULL},
        {"Pred(M_P = M1)", x, nc, n, GCS_PLOT_DASHED, "#2ca02c", NULL, NULL},
        {"Pred(Q_P = Q1)", x, ne, n, GCS_PLOT_DASHED, "#ff7f0e", NULL, NULL},
        {"Pred, fast predictor", x, fast, n, GCS_PLOT_POINTS, "#9467bd", NULL, NULL},
        {"Pred, critical span", x, crit, n, GCS_PLOT_POINTS, "#d62728", NULL, NULL},
    };
    char title[128], sub[1024], path[1200];
    snprintf(title, sizeof title, "GC mark speedup: %s", w->name);
    snprintf(sub, sizeof sub, "%s, %d snapshot%s, fastest of %d re-marks per P; profile %s", r->host,
             w->nsnapshots, w->nsnapshots == 1 ? "" : "s", r->reps, r->machine);
    gcs_plot plot = {title, sub, "GC threads P", "speedup over P = 1", 7, s, 1, n > 1 ? n : 2, 0, NAN, NAN, NULL};
    snprintf(path, sizeof path, "%s/%s-speedup.svg", dir, w->name);
    return gcs_plot_write_svg(&plot, path, err);
}

static int stack_plot(const gcs_validate_report *r, const gcs_validate_workload *w, const char *dir,
                      gcs_err *err)
{
    gcs_plot_bar bars[GCS_GC_MAX_THREADS][2];
    gcs_plot_bar_group groups[GCS_GC_MAX_THREADS];
    char labels[GCS_GC_MAX_THREADS][16];
    for (int p = 1; p <= w->npoints; p++) {
        const gcs_validate_point *pt = &w->points[p - 1];
        const gcs_validate_stack *m = &pt->measured_stack;
        /* shared segments: speedup, span/search, extra misses/extra work,
         * contention, wake-up, tail, other */
        bars[p - 1][0] = (gcs_plot_bar){"measured", {m->speedup, m->search, m->extra_work, 0, m->wake,
                                                     m->tail, m->other}};
        bars[p - 1][1] = (gcs_plot_bar){"predicted", {pt->pred_stack[0], pt->pred_stack[1] + pt->pred_stack[5],
                                                      pt->pred_stack[2], pt->pred_stack[3], pt->pred_stack[4],
                                                      pt->pred_stack[6], 0}};
        snprintf(labels[p - 1], sizeof labels[p - 1], "P = %d", p);
        groups[p - 1] = (gcs_plot_bar_group){labels[p - 1], 2, bars[p - 1]};
    }
    char title[128], sub[1024], path[1200];
    snprintf(title, sizeof title, "GC speedup stack: %s", w->name);
    snprintf(sub, sizeof sub, "%s; each bar adds up to P; measured from the workers' times, predicted "
                              "from the model's terms", r->host);
    gcs_plot_bars pb = {.title = title, .subtitle = sub, .y_label = "threads",
                        .nsegments = 7,
                        .segment_labels = {"speedup", "looking for work / span",
                                           "extra work / extra misses", "contention", "waking up",
                                           "finished early", "other"},
                        .segment_colors = {"#1f77b4", "#ff7f0e", "#d62728", "#9467bd", "#2ca02c",
                                           "#bcbd22", "#7f7f7f"},
                        .ngroups = w->npoints, .groups = groups, .y_max = NAN, .label_values = 1};
    snprintf(path, sizeof path, "%s/%s-stack.svg", dir, w->name);
    return gcs_plot_write_bars_svg(&pb, path, err);
}

/* ---- JSON ------------------------------------------------------------------------ */

json_t *gcs_validate_report_json(const gcs_validate_report *r)
{
    json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:b, s:f, s:b, s:b}",
                            "format", "gcscale-validation", "version", 1, "host", r->host, "machine",
                            r->machine, "created", r->created, "cpus", r->cpus, "max_threads",
                            r->max_threads, "mutators", r->mutators, "reps", r->reps, "run_reps",
                            r->run_reps, "quick", r->quick,
                            "seconds", r->seconds, "error_ok", r->error_ok, "adaptive_ok", r->adaptive_ok);
    json_object_set_new(doc, "error_model", json_string(r->error_model));
    if (r->placement[0])
        gcs_json_set_pu_map(doc, r->placement, r->pu_map, r->pu_map_logical, r->npu_map);
    gcs_table *t;
    json_object_set_new(doc, "errors", gcs_table_to_json(t = error_table(r)));
    gcs_table_free(t);
    json_object_set_new(doc, "mean_absolute_error", gcs_table_to_json(t = mae_table(r)));
    gcs_table_free(t);
    json_object_set_new(doc, "times", gcs_table_to_json(t = time_table(r)));
    gcs_table_free(t);
    json_object_set_new(doc, "overlap", isfinite(r->overlap) ? json_real(r->overlap) : json_null());
    json_object_set_new(doc, "steals", gcs_table_to_json(t = steal_table(r)));
    gcs_table_free(t);
    json_object_set_new(doc, "runs", gcs_table_to_json(t = adaptive_table(r)));
    gcs_table_free(t);
    json_object_set_new(doc, "adaptive", gcs_table_to_json(t = verdict_table(r)));
    gcs_table_free(t);
    json_object_set_new(doc, "stacks", gcs_table_to_json(t = stack_table(r)));
    gcs_table_free(t);
    json_t *snaps = json_array();
    for (int i = 0; i < r->nworkloads; i++)
        for (int k = 0; k < r->w[i].nsnapshots; k++)
            json_array_append_new(snaps, json_pack("{s:s, s:s, s:I, s:I, s:f}", "workload", r->w[i].name,
                                                   "path", r->w[i].snapshot[k], "collection",
                                                   (json_int_t)r->w[i].snapshot_collection[k], "objects",
                                                   (json_int_t)r->w[i].snapshot_objects[k], "live_mb",
                                                   r->w[i].snapshot_live_mb[k]));
    json_object_set_new(doc, "snapshots", snaps);
    return doc;
}

/* ---- summary -------------------------------------------------------------------- */

#define V2_SIM_NOTE                                                                                        \
    "v2 columns: predict --model v2 --steal-count fitted (the profile's gc_steals fit, the fast predictor's "  \
    "count); v2_sim columns: predict --model v2 with the slow predictor, whose default since 2026-11-29 is "   \
    "the steals simulated on each snapshot (docs/model.md \"The graph's steals by default\")"

static void summary_text(const gcs_validate_report *r, FILE *fp, int markdown)
{
    gcs_table *e = error_table(r), *m = mae_table(r), *a = verdict_table(r), *tm = time_table(r),
              *st = steal_table(r);
    char overlap_note[320];
    if (isfinite(r->overlap))
        snprintf(overlap_note, sizeof overlap_note, "overlap columns: the profile's gc_miss_overlap, %.3g "
                 "misses in flight per worker (predict --overlap fitted); v2 columns: predict --model v2 "
                 "(docs/model.md)", r->overlap);
    else
        snprintf(overlap_note, sizeof overlap_note, "overlap columns empty: the profile has no "
                 "gc_miss_overlap (gcscale calibrate --gc-only fits it); v2 columns: predict --model v2 "
                 "(docs/model.md)");
    if (markdown) {
        fprintf(fp, "## Prediction error\n\n");
        markdown_table(fp, e);
        markdown_table(fp, m);
        fprintf(fp, "%s.\n\n", V2_SIM_NOTE);
        fprintf(fp, "## Predicted mark time\n\n%s.\n\n", overlap_note);
        markdown_table(fp, tm);
        fprintf(fp, "## Steals\n\n");
        markdown_table(fp, st);
        fprintf(fp, "## Adaptive GC threads\n\n");
        markdown_table(fp, a);
    } else {
        gcs_table_print(e, fp, GCS_FORMAT_TEXT);
        fprintf(fp, "\n");
        gcs_table_print(m, fp, GCS_FORMAT_TEXT);
        fprintf(fp, "%s\n\n", V2_SIM_NOTE);
        gcs_table_print(tm, fp, GCS_FORMAT_TEXT);
        fprintf(fp, "%s\n\n", overlap_note);
        gcs_table_print(st, fp, GCS_FORMAT_TEXT);
        fprintf(fp, "\n");
        gcs_table_print(a, fp, GCS_FORMAT_TEXT);
        fprintf(fp, "\n");
    }
    double worst = 0;
    int worst_p = 0;
    const double *verdict = _gcs_validate_verdict_mae(r);
    for (int p = 2; p <= r->max_threads; p++)
        if (verdict[p] > worst)
            worst = verdict[p], worst_p = p;
    int v2 = strcmp(r->error_model, "v2") == 0;
    fprintf(fp, "%sprediction target (%s: mean absolute error <= %.0f%% at every P): %s (worst %.1f%% at P = %d)\n",
            markdown ? "- " : "",
            v2 ? "model v2, gcscale predict's default, the v2_sim columns"
               : "the base model (Pred): the profile has no cache geometry for model v2's slow predictor",
            GCS_VALIDATE_ERROR_TARGET, r->error_ok ? "met" : "NOT met", worst, worst_p);
    fprintf(fp, "%sadaptive target (within %.0f%% of the best fixed P, never slower than both P = 1 and "
                "P = %d by more than the whole runs' noise floor, noise_pct): %s\n",
            markdown ? "- " : "", GCS_VALIDATE_ADAPTIVE_TARGET, r->max_threads,
            r->adaptive_ok ? "met on every workload" : "NOT met on every workload");
    for (int i = 0; i < r->nworkloads; i++) {
        const gcs_validate_workload *w = &r->w[i];
        const gcs_validate_whole_run *ad = &w->runs[w->nruns - 1];
        if (!w->adaptive_ok && fabs(ad->avg_threads - w->runs[w->best_fixed].threads) < 1e-9)
            fprintf(fp, "%s%s: adaptive used P = %d in every collection, the best fixed P; the %.1f%% "
                        "between the two is run-to-run variation of the same configuration\n",
                    markdown ? "- " : "", w->name, w->runs[w->best_fixed].threads,
                    w->adaptive_over_best_pct);
    }
    for (int i = 0; i < r->nworkloads; i++)
        if (r->w[i].slow_note[0])
            fprintf(fp, "%s%s: %s\n", markdown ? "- " : "", r->w[i].name, r->w[i].slow_note);
    if (r->cpus <= 2)
        fprintf(fp, "%sthis machine has %d CPUs: only P <= %d is measured here; larger machines give "
                    "the evidence beyond\n", markdown ? "- " : "", r->cpus, r->max_threads);
    gcs_table_free(e);
    gcs_table_free(m);
    gcs_table_free(a);
    gcs_table_free(tm);
    gcs_table_free(st);
}

void gcs_validate_print_summary(const gcs_validate_report *r, FILE *fp)
{
    fprintf(fp, "validation on %s, %d CPUs, P = 1..%d, %d mutators, %s (%.0f s)\n\n", r->host, r->cpus,
            r->max_threads, r->mutators, r->quick ? "quick" : "full", r->seconds);
    summary_text(r, fp, 0);
}

int gcs_validate_write(const gcs_validate_report *r, const char *dir, gcs_err *err)
{
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        gcs_err_set(err, "%s: cannot create: %s", dir, strerror(errno));
        return -1;
    }
    gcs_table *t;
    int rc = write_table_csv(t = error_table(r), dir, "errors.csv", err);
    gcs_table_free(t);
    if (rc == 0) {
        rc = write_table_csv(t = time_table(r), dir, "times.csv", err);
        gcs_table_free(t);
    }
    if (rc == 0) {
        rc = write_table_csv(t = steal_table(r), dir, "steals.csv", err);
        gcs_table_free(t);
    }
    if (rc == 0) {
        rc = write_table_csv(t = adaptive_table(r), dir, "adaptive.csv", err);
        gcs_table_free(t);
    }
    if (rc == 0) {
        rc = write_table_csv(t = stack_table(r), dir, "stacks.csv", err);
        gcs_table_free(t);
    }
    if (rc < 0)
        return -1;
    for (int i = 0; i < r->nworkloads; i++)
        if (speedup_plot(r, &r->w[i], dir, err) < 0 || stack_plot(r, &r->w[i], dir, err) < 0)
            return -1;
    char path[1200];
    snprintf(path, sizeof path, "%s/report.json", dir);
    json_t *doc = gcs_validate_report_json(r);
    rc = gcs_json_write_file(doc, path, err);
    json_decref(doc);
    if (rc < 0)
        return -1;

    snprintf(path, sizeof path, "%s/summary.md", dir);
    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) < 0)
        return -1;
    FILE *fp = out.fp;
    fprintf(fp, "# gcscale validation: %s\n\n", r->host);
    fprintf(fp, "%s, %d CPUs, GC threads P = 1..%d, %d mutator threads, %s run (%d re-marks per P and "
                "snapshot, median of %d whole runs per configuration), %.0f s. Machine profile: `%s`. "
                "Written by `gcscale validate`; docs/validate.md explains every column.\n\n",
            r->created, r->cpus, r->max_threads, r->mutators, r->quick ? "quick" : "full", r->reps,
            r->run_reps, r->seconds, r->machine);
    summary_text(r, fp, 1);
    fprintf(fp, "\n## Files\n\n");
    fprintf(fp, "- [errors.csv](errors.csv): measured and predicted speedup per workload and P\n");
    fprintf(fp, "- [times.csv](times.csv): measured and predicted mark time per workload and P\n");
    fprintf(fp, "- [adaptive.csv](adaptive.csv): every whole run, fixed P and adaptive\n");
    fprintf(fp, "- [stacks.csv](stacks.csv): measured and predicted GC speedup stacks\n");
    fprintf(fp, "- [report.json](report.json): all of it, with the snapshots used\n");
    for (int i = 0; i < r->nworkloads; i++)
        fprintf(fp, "- %s: [speedup](%s-speedup.svg), [speedup stack](%s-stack.svg)\n", r->w[i].name,
                r->w[i].name, r->w[i].name);
    fprintf(fp, "\n## Plots\n\n");
    for (int i = 0; i < r->nworkloads; i++)
        fprintf(fp, "![%s speedup](%s-speedup.svg)\n![%s stack](%s-stack.svg)\n\n", r->w[i].name,
                r->w[i].name, r->w[i].name, r->w[i].name);
    return gcs_outfile_commit(&out, err);
}
