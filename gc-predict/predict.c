/* predict.c -- predictions over many thread counts and their presentation. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/gcbench_result.h"
#include "gcscale/plot.h"
#include "gcscale/predict.h"

int gcs_predict_parse_threads(const char *text, int **threads, int *n, gcs_err *err)
{
    return gcs_parse_count_list(text, GCS_PREDICT_MAX_THREADS, threads, n, err);
}

int gcs_predict_curve(const gcs_profile *prof, const gcs_model_heap *heap, const int *threads, int n,
                      const gcs_model_opts *opts, gcs_model_result *results, gcs_err *err)
{
    for (int i = 0; i < n; i++)
        if (gcs_model_predict(prof, heap, threads[i], opts, &results[i], err) < 0)
            return -1;
    return 0;
}

/* Which term of the model each profile constant feeds (docs/model.md):
 * the idle latency M1, the queueing (contention) term through S_O, the
 * serial work T1 through the marker's per-object and per-edge costs.
 * Constants the model does not read (bandwidth, the steal cost) feed no
 * term and are not reported. */
static const struct {
    const char *prefix, *term;
} constant_terms[] = {
    {"latency_ns.", "latency"},
    {"occupancy_ns.", "contention"},
    {"gc_cost_ns.object", "work"},
    {"gc_cost_ns.pointer", "work"},
};

json_t *gcs_predict_unreliable_inputs(const gcs_profile *prof, const gcs_model_opts *opts)
{
    json_t *out = json_array();
    const char *name, *reason;
    for (int i = 0; gcs_profile_unreliable_at(prof, i, &name, &reason) == 0; i++) {
        const char *term = NULL;
        for (size_t k = 0; !term && k < sizeof constant_terms / sizeof constant_terms[0]; k++)
            if (strncmp(name, constant_terms[k].prefix, strlen(constant_terms[k].prefix)) == 0)
                term = constant_terms[k].term;
        /* The fitted steals and overlap feed the model only when the
         * options took them from the profile (--steals/--overlap fitted). */
        if (!term && strncmp(name, "gc_steals.", 10) == 0 && prof->has_gc_steals &&
            opts->steals == GCS_MODEL_STEALS_FITTED && opts->steal_a == prof->gc_steal_a &&
            opts->steal_b == prof->gc_steal_b)
            term = "steals";
        if (!term && strcmp(name, "gc_miss_overlap") == 0 && prof->has_gc_overlap &&
            opts->overlap != 1 && opts->overlap == prof->gc_miss_overlap)
            term = "overlap";
        if (term)
            json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "term", term, "constant", name,
                                                 "reason", reason));
    }
    return out;
}

void gcs_predict_unreliable_line(const json_t *inputs, char *buf, size_t len)
{
    size_t used = 0;
    size_t i;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach(inputs, i, v) {
        int w = snprintf(buf + used, len - used, "%s%s rests on %s, marked unreliable (%s)",
                         i ? "; " : "unreliable inputs: the ",
                         json_string_value(json_object_get(v, "term")),
                         json_string_value(json_object_get(v, "constant")),
                         json_string_value(json_object_get(v, "reason")));
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    if (buf[0] && used + 1 < len)
        snprintf(buf + used, len - used, "; recalibrate on an idle machine");
    gcs_text_one_line(buf);
}

/* The measured speedup at P, NaN where P was not measured. */
static double measured_at(const gcs_predict_measured *m, int threads)
{
    for (int i = 0; m && i < m->n; i++)
        if (m->threads[i] == threads)
            return m->speedup[i];
    return NAN;
}

gcs_table *gcs_predict_table(const gcs_model_result *r, int n, const gcs_predict_measured *measured)
{
    static const char *const cols[] = {
        "P", "t_cilk_ms", "steals", "q_p", "m1_ns", "m_p_ns", "time_ms", "speedup",
        "speedup_no_contention", "speedup_no_extra_misses", "lost_span", "lost_extra_misses",
        "lost_contention", "lost_wake", "lost_search", "lost_tail", "lost_shared_lines", "lost_steal_work", "extra_work",
        "max_rho",
        "solver", "iterations", "measured_speedup", "error_pct"};
    int ncols = (int)(sizeof cols / sizeof cols[0]) - (measured ? 0 : 2);
    gcs_table *t = gcs_table_new(NULL, ncols, cols);
    for (int i = 0; i < n; i++) {
        double max_rho = 0;
        for (int j = 0; j < r[i].nnodes; j++)
            max_rho = fmax(max_rho, r[i].rho[j]);
        gcs_table_add_int(t, r[i].threads);
        gcs_table_add_num(t, r[i].t_cilk_ns / 1e6, 3);
        gcs_table_add_num(t, r[i].steals, 1);
        gcs_table_add_num(t, r[i].q_p, 0);
        gcs_table_add_num(t, r[i].m1_ns, 1);
        gcs_table_add_num(t, r[i].m_p_ns, 1);
        gcs_table_add_num(t, r[i].time_ns / 1e6, 3);
        gcs_table_add_num(t, r[i].speedup, 2);
        gcs_table_add_num(t, r[i].speedup_no_contention, 2);
        gcs_table_add_num(t, r[i].speedup_no_extra_misses, 2);
        gcs_table_add_num(t, r[i].lost_span, 2);
        gcs_table_add_num(t, r[i].lost_extra_misses, 2);
        gcs_table_add_num(t, r[i].lost_contention, 2);
        gcs_table_add_num(t, r[i].lost_wake, 2); /* coordination (0 without gc_coord) */
        gcs_table_add_num(t, r[i].lost_search, 2);
        gcs_table_add_num(t, r[i].lost_tail, 2);
        /* extra work in parallel: the shared lines (0 without
         * gc_line_transfer_ns), and their sum with the extra misses under the
         * measured stack's name, extra_work.  That sum has no lost_ prefix on
         * purpose: speedup + the lost_* columns = P, and explain.c sums them. */
        gcs_table_add_num(t, r[i].lost_shared_lines, 2);
        gcs_table_add_num(t, r[i].lost_steal_work, 2);
        gcs_table_add_num(t, r[i].lost_extra_work, 2);
        gcs_table_add_num(t, max_rho, 3);
        gcs_table_add_str(t, r[i].solver);
        gcs_table_add_int(t, r[i].iterations);
        if (measured) {
            double m = measured_at(measured, r[i].threads);
            gcs_table_add_num(t, m, 2);
            gcs_table_add_num(t, 100 * (r[i].speedup / m - 1), 1);
        }
    }
    return t;
}

/* The curve of a gc-bench result: the reader (formats/gcbench_result.c)
 * knows the document's keys; what the curve needs of it is a measured
 * speedup at every P. */
int gcs_predict_load_measured(const char *path, gcs_predict_measured *m, gcs_err *err)
{
    memset(m, 0, sizeof *m);
    gcs_gcbench_result *r;
    if (gcs_gcbench_result_read(path, &r, err) < 0)
        return -1;
    for (int i = 0; i < r->nrows; i++) {
        if (!(r->rows[i].speedup_mark > 0)) {
            gcs_err_set(err, "%s: rows[%d]: needs integer threads >= 1 and a positive speedup_mark", path, i);
            gcs_gcbench_result_free(r);
            return -1;
        }
        if (m->n == GCS_PREDICT_MAX_THREADS)
            break;
        const gcs_gcbench_row *row = &r->rows[i];
        m->threads[m->n] = (double)row->threads;
        m->speedup[m->n] = row->speedup_mark;
        /* speedup_mark is the P = 1 median over P's median: the same
         * reference over P's slowest and fastest collection */
        int spread = r->reps > 1 && row->mark_ms_min > 0 && row->mark_ms_max >= row->mark_ms_min;
        m->speedup_lo[m->n] = spread ? row->speedup_mark * row->mark_ms / row->mark_ms_max : NAN;
        m->speedup_hi[m->n] = spread ? row->speedup_mark * row->mark_ms / row->mark_ms_min : NAN;
        if (spread)
            m->reps = r->reps;
        m->n++;
    }
    m->objects = r->has_objects ? (long long)r->objects : -1;
    const char *shape = r->shape[0] ? r->shape : NULL;
    if (m->reps > 1)
        snprintf(m->label, sizeof m->label, "measured (gc-bench%s%s; bars: min-max of %d)", shape ? " " : "",
                 shape ? shape : "", m->reps);
    else
        snprintf(m->label, sizeof m->label, "measured (gc-bench%s%s)", shape ? " " : "", shape ? shape : "");
    gcs_gcbench_result_free(r);
    if (m->n == 0) {
        gcs_err_set(err, "%s: no rows", path);
        return -1;
    }
    return 0;
}

int gcs_predict_plot(const gcs_model_result *r, int n, const gcs_predict_measured *measured, int recommended,
                     const char *title, const char *subtitle, const char *path, gcs_err *err)
{
    double *x = malloc(sizeof(double) * (size_t)n * 4);
    if (!x) {
        gcs_err_set(err, "out of memory");
        return -1;
    }
    double *full = x + n, *no_contention = x + 2 * n, *no_extra = x + 3 * n;
    double ymax = 1;
    for (int i = 0; i < n; i++) {
        x[i] = r[i].threads;
        full[i] = r[i].speedup;
        no_contention[i] = r[i].speedup_no_contention;
        no_extra[i] = r[i].speedup_no_extra_misses;
        ymax = fmax(ymax, fmax(full[i], fmax(no_contention[i], no_extra[i])));
    }
    /* The measured curve may go beyond the predicted thread counts (or start
     * below them): the ideal line and the y axis's cap cover both. */
    double pmin = x[0], pmax = x[n - 1];
    if (measured)
        for (int i = 0; i < measured->n; i++) {
            ymax = fmax(ymax, measured->speedup[i]);
            if (isfinite(measured->speedup_hi[i]))
                ymax = fmax(ymax, measured->speedup_hi[i]);
            pmin = fmin(pmin, measured->threads[i]);
            pmax = fmax(pmax, measured->threads[i]);
        }
    double ideal_x[2] = {pmin, pmax}, ideal_y[2] = {pmin, pmax};
    gcs_plot_series s[5] = {
        {"ideal (speedup = P)", ideal_x, ideal_y, 2, GCS_PLOT_DASHED, "#999999", NULL, NULL},
        {"Pred(M_P=M1): no contention", x, no_contention, n, GCS_PLOT_DASHED, "#2ca02c", NULL, NULL},
        {"Pred(Q_P=Q1): no extra misses", x, no_extra, n, GCS_PLOT_DASHED, "#ff7f0e", NULL, NULL},
        {"Pred: full model", x, full, n, GCS_PLOT_LINE, "#1f77b4", NULL, NULL},
        {NULL, NULL, NULL, 0, GCS_PLOT_LINE, "#d62728", NULL, NULL},
    };
    int nseries = 4;
    if (measured) {
        s[4] = (gcs_plot_series){measured->label, measured->threads, measured->speedup, measured->n,
                                 GCS_PLOT_LINE, "#d62728", NULL, NULL};
        if (measured->reps > 1)
            s[4].y_lo = measured->speedup_lo, s[4].y_hi = measured->speedup_hi;
        nseries = 5;
    }
    /* The ideal line would dwarf a curve that saturates early: cap the y axis
     * a little above the highest model or measured value, and never below
     * one (a small heap's measured speedup can beat the ideal: P = 2 at 2.2
     * lay outside the plot area under a cap of 1.05 P). */
    double ycap = fmin(ymax * 1.15, fmax(pmax * 1.05, ymax * 1.05));
    char mark[64];
    snprintf(mark, sizeof mark, "recommended P = %d", recommended);
    gcs_plot plot = {title, subtitle, "GC threads P", "speedup of the mark phase over P = 1",
                     nseries, s, NAN, NAN, 0, ycap, recommended,
                     recommended > 0 ? mark : NULL};
    int rc = gcs_plot_write_svg(&plot, path, err);
    free(x);
    return rc;
}
