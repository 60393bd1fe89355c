/* stack.c -- the managed speedup stack (model-notes section 2; thesis Eq 3.14):
 *
 *   N = S + (N T_GC,MT - T_GC,ST)/T_p + (N T_seq,MT - T_seq,ST)/T_p
 *         + sum Sync_i/T_p + sum Exit_i/T_p + other
 *
 * with the application threads' waits for a CPU taken out of "other" as
 * three terms (concurrent GC, JIT, preemption by anyone else), so that a
 * runtime's helper threads show where they take CPUs from the program.
 *
 * The inputs come from gcs_acct_run_times_compute, which attributes every
 * moment of every application thread to at most one term (GC pause first,
 * then "no application thread alive", then exited, then blocked), so no
 * wait is counted twice.  "other" is what remains: hardware interference,
 * parallelization overhead, and whatever the other terms miss;
 * it can be negative and is reported as it is. */
#include <math.h>
#include <stdio.h>

#include <string.h>

#include "gcscale/accounting.h"
#include "gcscale/plot.h"

const char *const gcs_acct_stack_component_names[GCS_ACCT_STACK_COMPONENTS] = {
    "speedup", "gc", "concurrent-gc", "jit", "initialization", "synchronization", "imbalance", "preemption", "other",
};

void gcs_acct_stack_values(const gcs_acct_stack *s, double out[GCS_ACCT_STACK_COMPONENTS])
{
    out[0] = s->speedup;
    out[1] = s->gc;
    out[2] = s->conc_gc;
    out[3] = s->jit;
    out[4] = s->init;
    out[5] = s->sync;
    out[6] = s->imbalance;
    out[7] = s->preemption;
    out[8] = s->other;
}

int gcs_acct_stack_compute(const gcs_acct_run_times *st, const gcs_acct_run_times *mt, const char *app_class,
                           gcs_acct_stack *out, gcs_err *err)
{
    if (!app_class)
        app_class = GCS_ACCT_APP_CLASS;
    if (st->napp != 1) {
        gcs_err_set(err, "the single-threaded run has %d application (class \"%s\") threads; it needs exactly 1%s",
                    st->napp, app_class,
                    st->napp == 0 && strcmp(app_class, GCS_ACCT_APP_CLASS) == 0
                        ? " (traces from gcscale trace call the program's threads \"main\" and \"worker\": "
                          "give --app-class worker)"
                        : "");
        return -1;
    }
    if (mt->napp < 1) {
        /* The usual cause: a trace of an unmodified program (gcscale trace)
         * calls the program's threads "main" and "worker", not the built-in
         * recorder's "mutator" -- say which option fixes it. */
        gcs_err_set(err, "the multi-threaded run has no application (class \"%s\") thread%s", app_class,
                    strcmp(app_class, GCS_ACCT_APP_CLASS) == 0
                        ? ": traces from gcscale trace call the program's threads \"main\" and \"worker\": "
                          "give --app-class worker (or the class you named with trace --class)"
                        : "");
        return -1;
    }
    if (!(st->wall_ns > 0) || !(mt->wall_ns > 0)) {
        gcs_err_set(err, "a run with zero wall time has no speedup");
        return -1;
    }
    double n = mt->napp, tp = mt->wall_ns;
    out->n = mt->napp;
    out->speedup = st->wall_ns / tp;
    out->gc = (n * mt->gc_ns - st->gc_ns) / tp;
    out->init = (n * mt->seq_ns - st->seq_ns) / tp;
    out->sync = mt->sync_ns / tp;
    out->imbalance = mt->exit_ns / tp;
    out->conc_gc = mt->conc_gc_ns / tp;
    out->jit = mt->jit_ns / tp;
    out->preemption = mt->preempt_ns / tp;
    out->other = n - out->speedup - out->gc - out->conc_gc - out->jit - out->init - out->sync - out->imbalance -
                 out->preemption;
    out->st = *st;
    out->mt = *mt;
    return 0;
}

static json_t *times_json(const gcs_acct_run_times *r)
{
    return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "app_threads", r->napp, "wall_ms",
                     json_real(r->wall_ns / 1e6), "gc_ms", json_real(r->gc_ns / 1e6), "seq_ms",
                     json_real(r->seq_ns / 1e6), "sync_ms", json_real(r->sync_ns / 1e6), "exit_ms",
                     json_real(r->exit_ns / 1e6), "blocked_other_ms", json_real(r->blocked_other_ns / 1e6),
                     "gc_lag_ms", json_real(r->gc_lag_ns / 1e6), "preempt_ms", json_real(r->preempt_ns / 1e6),
                     "jit_ms", json_real(r->jit_ns / 1e6), "conc_gc_ms", json_real(r->conc_gc_ns / 1e6));
}

json_t *gcs_acct_stack_to_json(const gcs_acct_stack *s)
{
    double v[GCS_ACCT_STACK_COMPONENTS], sum = 0;
    gcs_acct_stack_values(s, v);
    json_t *comp = json_object();
    for (int i = 0; i < GCS_ACCT_STACK_COMPONENTS; i++) {
        json_object_set_new(comp, gcs_acct_stack_component_names[i], json_real(v[i]));
        sum += v[i];
    }
    return json_pack("{s:i, s:o, s:o, s:o, s:o}", "n", s->n, "components", comp, "sum", json_real(sum), "single",
                     times_json(&s->st), "multi", times_json(&s->mt));
}

int gcs_acct_stacks_write_svg(const gcs_acct_stack *stacks, const char *const *labels, int n, const char *title,
                              const char *subtitle, const char *path, gcs_err *err)
{
    if (n < 1 || n > 64) {
        gcs_err_set(err, "speedup stacks: %d stacks (1 to 64 can be drawn)", n);
        return -1;
    }
    gcs_plot_bar bars[64];
    gcs_plot_bar_group groups[64];
    char glabels[64][16];
    for (int i = 0; i < n; i++) {
        bars[i].label = NULL;
        snprintf(glabels[i], sizeof glabels[i], "N = %d", stacks[i].n);
        for (int k = 0; k < GCS_PLOT_MAX_SEGMENTS; k++)
            bars[i].values[k] = 0;
        gcs_acct_stack_values(&stacks[i], bars[i].values);
        groups[i] = (gcs_plot_bar_group){.label = labels && labels[i] ? labels[i] : glabels[i], .nbars = 1,
                                         .bars = &bars[i]};
    }
    gcs_plot_bars p = {
        .title = title,
        .subtitle = subtitle,
        .y_label = "speedup (stack height = N application threads)",
        .nsegments = GCS_ACCT_STACK_COMPONENTS,
        .segment_labels = {"measured speedup", "GC (stop-the-world)", "concurrent GC", "JIT", "initialization",
                           "synchronization", "imbalance", "preemption", "other (residual)"},
        .segment_colors = {"#f28e2b", "#4e79a7", "#a0cbe8", "#b07aa1", "#76b7b2", "#e15759", "#edc948",
                           "#ff9da7", "#bab0ac"},
        .ngroups = n,
        .groups = groups,
        .y_max = NAN,
        .label_values = 1,
    };
    return gcs_plot_write_bars_svg(&p, path, err);
}
