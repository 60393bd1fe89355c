/* explain.c -- the answer in words: what limits a heap, read from the
 * predicted speedup stack, and the compact table beside it.
 *
 * Both read the stack from the full table's lost_* columns rather than from
 * named fields of gcs_model_result, so a term the model gains later (a new
 * lost_X column in gcs_predict_table) is named and shown without a change
 * here: the table below only gives known terms nicer words and groups. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/predict.h"

/* Known stack terms: the words for them and the cause they belong to (the
 * coordination terms are one cause for a reader, three for the model). */
#define EXTRA_WORDS                                                                                              \
    "extra work (the cache misses of re-reading stolen work, N_S x L, the steals' own work, and lines other "   \
    "workers touched)"
#define COORD_WORDS "coordination (waking the workers, searching for work, the tail)"
static const struct {
    const char *column, *cause, *words;
} known_terms[] = {
    {"lost_span", "span", "the span (the heap's longest chain of dependent objects, which no worker can split)"},
    {"lost_extra_misses", "extra_work", EXTRA_WORDS},
    {"lost_shared_lines", "extra_work", EXTRA_WORDS},
    {"lost_steal_work", "extra_work", EXTRA_WORDS},
    {"lost_contention", "contention", NULL}, /* names its node: see cause_words */
    {"lost_wake", "coord", COORD_WORDS},
    {"lost_search", "coord", COORD_WORDS},
    {"lost_tail", "coord", COORD_WORDS},
};

#define MAX_CAUSES 32
typedef struct cause {
    char name[64];      /* "span", "coord", or an unknown column's name less "lost_" */
    char words[256];
    double lost;
} cause;

static int known_index(const char *column)
{
    for (size_t k = 0; k < sizeof known_terms / sizeof known_terms[0]; k++)
        if (strcmp(known_terms[k].column, column) == 0)
            return (int)k;
    return -1;
}

static const char *cause_of(const char *column)
{
    int k = known_index(column);
    return k >= 0 ? known_terms[k].cause : column + 5; /* past "lost_" */
}

static int is_term(const char *key)
{
    return strncmp(key, "lost_", 5) == 0 && key[5];
}

/* The row's lost_* values summed by cause, in column order. */
static int causes_of_row(json_t *row, const gcs_model_result *r, cause *out)
{
    int n = 0;
    const char *key;
    json_t *v;
    json_object_foreach(row, key, v) {
        if (!is_term(key) || !json_is_number(v))
            continue;
        const char *name = cause_of(key);
        int i = 0;
        while (i < n && strcmp(out[i].name, name) != 0)
            i++;
        if (i == n) {
            if (n == MAX_CAUSES)
                continue;
            memset(&out[n], 0, sizeof out[n]);
            snprintf(out[n].name, sizeof out[n].name, "%s", name);
            int k = known_index(key);
            if (k >= 0 && known_terms[k].words) {
                snprintf(out[n].words, sizeof out[n].words, "%s", known_terms[k].words);
            } else if (strcmp(name, "contention") == 0) {
                int j = 0;
                for (int m = 1; m < r->nnodes; m++)
                    if (r->rho[m] > r->rho[j])
                        j = m;
                snprintf(out[n].words, sizeof out[n].words,
                         "contention at memory node %d (utilisation %.2f; a miss costs %.0f ns there "
                         "against %.0f ns idle)",
                         j, r->nnodes > 0 ? r->rho[j] : 0.0, r->m1_ns + (r->nnodes > 0 ? r->wait_ns[j] : 0),
                         r->m1_ns);
            } else {
                snprintf(out[n].words, sizeof out[n].words, "%s", name);
                for (char *c = out[n].words; *c; c++)
                    if (*c == '_')
                        *c = ' ';
            }
            n++;
        }
        out[i].lost += json_number_value(v);
    }
    return n;
}

static int by_lost_desc(const void *a, const void *b)
{
    double x = ((const cause *)a)->lost, y = ((const cause *)b)->lost;
    return (x < y) - (x > y);
}

/* Appends to buf (never past len). */
static void add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

json_t *gcs_predict_limits(const gcs_model_result *r, int n, const gcs_table *full)
{
    json_t *out = json_array();
    if (n <= 0)
        return out;
    json_t *rows = gcs_table_to_json(full);
    json_t *row = json_array_get(rows, (size_t)n - 1);
    cause c[MAX_CAUSES];
    int nc = row ? causes_of_row(row, &r[n - 1], c) : 0;
    qsort(c, (size_t)nc, sizeof c[0], by_lost_desc);
    for (int i = 0; i < nc; i++)
        json_array_append_new(out, json_pack("{s:s, s:f, s:s}", "cause", c[i].name, "lost", c[i].lost, "words",
                                             c[i].words));
    json_decref(rows);
    return out;
}

void gcs_predict_explain(const gcs_model_result *r, int n, const gcs_table *full, int recommended, int best,
                         double tolerance, char *buf, size_t len)
{
    buf[0] = '\0';
    if (n <= 0 || len == 0)
        return;
    const gcs_model_result *last = &r[n - 1];
    add(buf, len, "Recommended: P = %d", recommended);
    if (n > 1)
        add(buf, len, " of the %d to %d asked for", r[0].threads, last->threads);
    if (recommended == best)
        add(buf, len, " (the best predicted time).");
    else
        add(buf, len, " (within %.0f%% of the best predicted time, at P = %d: more threads gain too little).",
            100 * tolerance, best);
    json_t *limits = gcs_predict_limits(r, n, full);
    double lost = last->threads - last->speedup;
    add(buf, len, " At P = %d the model predicts a speedup of %.2f of an ideal %d", last->threads, last->speedup,
        last->threads);
    /* Under 5% of P lost, or nothing above 0.01: no term is worth naming. */
    if (last->threads == 1) {
        add(buf, len, ".");
    } else if (lost < 0.05 * last->threads || json_array_size(limits) == 0 ||
               json_number_value(json_object_get(json_array_get(limits, 0), "lost")) < 0.01) {
        add(buf, len, ": nothing limits this heap up to P = %d.", last->threads);
    } else {
        add(buf, len, "; what limits this heap is ");
        /* the largest cause, and the next ones that hold at least a quarter
         * of it (at most two more): a reader wants the main reason */
        double top = json_number_value(json_object_get(json_array_get(limits, 0), "lost"));
        size_t i;
        json_t *l;
        json_array_foreach(limits, i, l) {
            double v = json_number_value(json_object_get(l, "lost"));
            if (i >= 3 || (i > 0 && v < 0.25 * top) || v < 0.01)
                break;
            add(buf, len, "%s%s, %.2f of the %.2f lost", i ? (i == 1 ? "; then " : "; and ") : "",
                json_string_value(json_object_get(l, "words")), v, lost);
        }
        add(buf, len, ".");
    }
    json_decref(limits);
    gcs_text_one_line(buf);
}

int gcs_predict_times_absolute(const char *model, const json_t *serial, int costs_assumed, char *why, size_t len)
{
    why[0] = '\0';
    if (costs_assumed) {
        snprintf(why, len, "the marker's costs are assumed (--costs), so times are relative: a time is "
                           "shown as its ratio to the model's own P = 1 time");
        return 0;
    }
    if (strcmp(model, "v2") != 0) {
        snprintf(why, len, "model %s prices every miss the stream prefetcher does not cover as a full memory "
                           "stall, so its times are relative: a time is shown as its ratio to the model's own "
                           "P = 1 time (--model v2 on a calibrated profile prices them as the collector spends "
                           "them)", model);
        return 0;
    }
    /* v2: the serial terms must rest on calibrated keys, not nominal ones
     * (the LLC's only where residency is priced) */
    json_t *nominal = json_object_get(serial, "nominal");
    int residency = json_is_true(json_object_get(serial, "residency_on"));
    size_t i;
    json_t *v;
    json_array_foreach(nominal, i, v) {
        const char *key = json_string_value(v);
        /* A profile without gc_class_cost_ns prices chain steps and array
         * elements at the calibrated gc_cost_ns: an over-estimate of a
         * calibrated cost, not a nominal one, so the times stay absolute.
         * So do the 2026-11-27 keys' fallbacks: a sequential line at the
         * calibrated S_O, NULL tests at gc_cost_ns's price (none). */
        if (!key || (strcmp(key, "llc_effective_bytes") == 0 && !residency) ||
            strcmp(key, "gc_class_cost_ns") == 0 || strcmp(key, "gc_stream_line_ns") == 0 ||
            strcmp(key, "gc_class_cost_ns.null_switch") == 0)
            continue;
        snprintf(why, len, "the profile lacks %s (run gcscale calibrate on the machine), so times are "
                           "relative: a time is shown as its ratio to the model's own P = 1 time",
                 strcmp(key, "overlap") == 0 ? "gc_miss_overlap" : key);
        return 0;
    }
    return 1;
}

/* A number of a full table's row (NaN where null). */
static double row_num(json_t *row, const char *key)
{
    json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

gcs_table *gcs_predict_compact_table(const gcs_table *full, int absolute)
{
    json_t *rows = gcs_table_to_json(full);
    size_t nrows = json_array_size(rows);
    /* the causes in the full table's column order, kept where any part is
     * worth a cell (0.005 prints as 0.01) */
    char names[MAX_CAUSES][64];
    int shown[MAX_CAUSES] = {0}, ncause = 0;
    size_t r;
    json_t *row;
    json_array_foreach(rows, r, row) {
        const char *key;
        json_t *v;
        json_object_foreach(row, key, v) {
            if (!is_term(key))
                continue;
            const char *name = cause_of(key);
            int i = 0;
            while (i < ncause && strcmp(names[i], name) != 0)
                i++;
            if (i == ncause) {
                if (ncause == MAX_CAUSES)
                    continue;
                snprintf(names[ncause++], sizeof names[0], "%s", name);
            }
            shown[i] |= fabs(json_number_value(v)) >= 0.005;
        }
    }
    int keep = 0; /* drop the causes never shown, keeping the order */
    for (int i = 0; i < ncause; i++)
        if (shown[i])
            memmove(names[keep++], names[i], sizeof names[0]);
    ncause = keep;
    int measured = nrows > 0 && json_object_get(json_array_get(rows, 0), "measured_speedup") != NULL;
    const char *cols[4 + MAX_CAUSES + 2];
    char colnames[MAX_CAUSES][72];
    int nc = 0;
    cols[nc++] = "P";
    cols[nc++] = absolute ? "time_ms" : "rel_time";
    cols[nc++] = "speedup";
    for (int i = 0; i < ncause; i++) {
        snprintf(colnames[i], sizeof colnames[i], "lost_%.60s", names[i]);
        cols[nc++] = colnames[i];
    }
    if (measured) {
        cols[nc++] = "measured_speedup";
        cols[nc++] = "error_pct";
    }
    gcs_table *t = gcs_table_new(NULL, nc, cols);
    json_array_foreach(rows, r, row) {
        gcs_table_add_int(t, (long long)row_num(row, "P"));
        double speedup = row_num(row, "speedup");
        if (absolute)
            gcs_table_add_num(t, row_num(row, "time_ms"), 3);
        else
            gcs_table_add_num(t, 1 / speedup, 3); /* T_P / T_1 of the model */
        gcs_table_add_num(t, speedup, 2);
        for (int i = 0; i < ncause; i++) {
            double sum = 0;
            const char *key;
            json_t *v;
            json_object_foreach(row, key, v)
                if (is_term(key) && strcmp(cause_of(key), names[i]) == 0)
                    sum += json_number_value(v);
            gcs_table_add_num(t, sum, 2);
        }
        if (measured) {
            gcs_table_add_num(t, row_num(row, "measured_speedup"), 2);
            gcs_table_add_num(t, row_num(row, "error_pct"), 1);
        }
    }
    json_decref(rows);
    return t;
}
