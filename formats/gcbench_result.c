/* gcbench_result.c -- the gc-bench result as tables and as its JSON
 * document, "gcscale-gc-bench" version 1, and the reader of that document.
 *
 * The per-P columns are listed once (columns[] below): the text and CSV
 * tables, the JSON rows (which are those tables' rows plus busy_share as an
 * array, steal_attempts and mark_ms_all) and the reader all go by it, so a
 * key cannot be written under one name and read under another.  The
 * document's keys and meanings: docs/gc-bench.md, "JSON".
 */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/gcbench_result.h"

#define FORMAT_NAME "gcscale-gc-bench"
#define FORMAT_VERSION 1

enum { KIND_NUM, KIND_THREADS, KIND_BUSY };

typedef struct column {
    const char *key;
    int kind;
    size_t offset;   /* of a double in gcs_gcbench_row (KIND_NUM) */
    int decimals;    /* text and CSV */
} column;

#define NUM(field, decimals) {#field, KIND_NUM, offsetof(gcs_gcbench_row, field), decimals}
static const column columns[] = {
    {"threads", KIND_THREADS, 0, 0},
    NUM(mark_ms, 2), NUM(mark_ms_min, 2), NUM(mark_ms_max, 2),
    NUM(pause_ms, 2), NUM(pause_ms_min, 2), NUM(pause_ms_max, 2),
    NUM(mobjects_per_s, 1), NUM(mb_per_s, 0), NUM(speedup_mark, 2), NUM(speedup_pause, 2),
    NUM(steals, 0), NUM(t1_ms, 2),
    {"busy_share", KIND_BUSY, 0, 0},
    NUM(llc_misses, 0),
    /* only with instr_cost: */
    NUM(mark_ms_uninstrumented, 2), NUM(instr_overhead_pct, 2),
};
#undef NUM
#define NCOLUMNS ((int)(sizeof columns / sizeof columns[0]))
#define NCOLUMNS_INSTR 2   /* the last ones, only with instr_cost */

static double *row_num(gcs_gcbench_row *w, const column *c) { return (double *)((char *)w + c->offset); }
static double row_value(const gcs_gcbench_row *w, const column *c)
{
    return *(const double *)((const char *)w + c->offset);
}

/* busy_share has one entry per worker, and room for the collector's most. */
static int busy_count(const gcs_gcbench_row *w)
{
    return w->threads < GCS_GCBENCH_MAX_THREADS ? w->threads : GCS_GCBENCH_MAX_THREADS;
}

void gcs_gcbench_result_free(gcs_gcbench_result *r)
{
    if (!r)
        return;
    for (int i = 0; r->rows && i < r->nrows; i++)
        free(r->rows[i].samples);
    free(r->rows);
    free(r->decisions);
    free(r->snapshot);
    free(r->adaptive_spec);
    free(r->adaptive_machine);
    free(r);
}

/* ---- tables ---------------------------------------------------------------- */

/* flat: busy_share as one column per worker (busy_share_0, ...; empty
 * where P had fewer), so that a CSV cell holds one value. */
static gcs_table *result_table(const gcs_gcbench_result *r, int flat)
{
    int nbusy = 0;
    for (int i = 0; flat && i < r->nrows; i++)
        nbusy = busy_count(&r->rows[i]) > nbusy ? busy_count(&r->rows[i]) : nbusy;
    const char *names[NCOLUMNS + GCS_GCBENCH_MAX_THREADS];
    char busy_names[GCS_GCBENCH_MAX_THREADS][24];
    int ncols = 0;
    for (int c = 0; c < NCOLUMNS - (r->instr_cost ? 0 : NCOLUMNS_INSTR); c++) {
        if (flat && columns[c].kind == KIND_BUSY) {
            for (int k = 0; k < nbusy; k++) {
                snprintf(busy_names[k], sizeof busy_names[k], "busy_share_%d", k);
                names[ncols++] = busy_names[k];
            }
            continue;
        }
        names[ncols++] = columns[c].key;
    }
    char title[512];
    if (r->snapshot)
        snprintf(title, sizeof title, "gc-bench: snapshot %.200s", r->snapshot);
    else if (strcmp(r->shape, "tree") == 0)
        snprintf(title, sizeof title, "gc-bench: tree depth %d", r->depth);
    else
        snprintf(title, sizeof title, "gc-bench: %s of %llu", r->shape, (unsigned long long)r->size);
    char pinned[48] = "";
    if (r->pinned)
        snprintf(pinned, sizeof pinned, ", pinned%s%s", r->placement[0] ? " " : "", r->placement);
    size_t tl = strlen(title);
    snprintf(title + tl, sizeof title - tl,
             ", %llu live objects, %.1f MB (headers + payloads), %s, numa %s%s, median of %d "
             "collections per P",
             (unsigned long long)r->objects, (double)r->bytes / 1e6, r->mark_mode, r->numa,
             pinned, r->reps);
    gcs_table *t = gcs_table_new(title, ncols, names);
    for (int i = 0; i < r->nrows; i++) {
        const gcs_gcbench_row *w = &r->rows[i];
        for (int c = 0; c < NCOLUMNS - (r->instr_cost ? 0 : NCOLUMNS_INSTR); c++) {
            const column *col = &columns[c];
            if (col->kind == KIND_THREADS) {
                gcs_table_add_int(t, w->threads);
            } else if (col->kind == KIND_BUSY && flat) {
                for (int k = 0; k < nbusy; k++)
                    gcs_table_add_num(t, k < busy_count(w) ? w->busy_share[k] : NAN, 2);
            } else if (col->kind == KIND_BUSY) {
                char busy[GCS_GCBENCH_MAX_THREADS * 6 + 8] = "";
                for (int k = 0; k < busy_count(w); k++) {
                    size_t l = strlen(busy);
                    snprintf(busy + l, sizeof busy - l, "%s%.2f", k ? " " : "", w->busy_share[k]);
                }
                gcs_table_add_str(t, busy);
            } else {
                gcs_table_add_num(t, row_value(w, col), col->decimals);
            }
        }
    }
    return t;
}

gcs_table *gcs_gcbench_result_table(const gcs_gcbench_result *r)
{
    return result_table(r, 0);
}

/* flat: predicted_ms_by_p as one column per P (predicted_ms_p1, ...). */
static gcs_table *adaptive_table(const gcs_gcbench_result *r, int flat)
{
    if (r->ndecisions == 0)
        return NULL;
    int npred = 0;
    for (int i = 0; flat && i < r->ndecisions; i++)
        npred = r->decisions[i].npredicted > npred ? r->decisions[i].npredicted : npred;
    const char *cols[6 + GCS_GCBENCH_MAX_THREADS] = {"collection", "threads", "predicted_mark_ms", "mark_ms",
                                                     "decision_us", "decision_pct_of_mark", "predicted_ms_by_p"};
    char pred_names[GCS_GCBENCH_MAX_THREADS][32];
    for (int k = 0; k < npred; k++) {
        snprintf(pred_names[k], sizeof pred_names[k], "predicted_ms_p%d", k + 1);
        cols[6 + k] = pred_names[k];
    }
    gcs_table *t = gcs_table_new("gc-bench: adaptive policy, one row per collection", flat ? 6 + npred : 7, cols);
    for (int i = 0; i < r->ndecisions; i++) {
        const gcs_gcbench_decision *a = &r->decisions[i];
        gcs_table_add_int(t, i + 1);
        gcs_table_add_int(t, a->threads);
        gcs_table_add_num(t, a->predicted_mark_ms, 3);
        gcs_table_add_num(t, a->mark_ms, 3);
        gcs_table_add_num(t, a->decision_us, 2);
        gcs_table_add_num(t, a->decision_pct, 3);
        if (flat) {
            for (int k = 0; k < npred; k++)
                gcs_table_add_num(t, k < a->npredicted ? a->predicted_ms[k] : NAN, 3);
            continue;
        }
        char pred[GCS_GCBENCH_MAX_THREADS * 12 + 8] = "";
        for (int k = 0; k < a->npredicted; k++) {
            size_t l = strlen(pred);
            snprintf(pred + l, sizeof pred - l, "%s%.3f", k ? " " : "", a->predicted_ms[k]);
        }
        gcs_table_add_str(t, pred);
    }
    return t;
}

gcs_table *gcs_gcbench_result_adaptive_table(const gcs_gcbench_result *r)
{
    return adaptive_table(r, 0);
}

gcs_table *gcs_gcbench_result_csv_table(const gcs_gcbench_result *r, int adaptive)
{
    return adaptive ? adaptive_table(r, 1) : result_table(r, 1);
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *real_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

static json_t *adaptive_json(const gcs_gcbench_result *r)
{
    const gcs_gcbench_row *best = &r->rows[r->best_fixed], *first = &r->rows[0], *last = &r->rows[r->nrows - 1];
    json_t *a = json_pack("{s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:f}", "mark_ms_median", r->adaptive_mark_ms_median,
                          "threads_median", r->adaptive_threads_median, "decision_pct_median",
                          r->adaptive_decision_pct_median, "best_fixed_threads", best->threads,
                          "best_fixed_mark_ms", best->mark_ms, "ratio_to_best",
                          r->adaptive_mark_ms_median / best->mark_ms, "first_fixed_mark_ms", first->mark_ms,
                          "last_fixed_mark_ms", last->mark_ms);
    if (!a)
        return NULL;
    json_object_set_new(a, "spec", json_string(r->adaptive_spec ? r->adaptive_spec : ""));
    json_object_set_new(a, "machine", r->adaptive_machine ? json_string(r->adaptive_machine) : json_null());
    gcs_table *t = gcs_gcbench_result_adaptive_table(r);
    json_object_set_new(a, "collections", gcs_table_to_json(t));
    gcs_table_free(t);
    return a;
}

json_t *gcs_gcbench_result_to_json(const gcs_gcbench_result *r)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_string(FORMAT_NAME));
    json_object_set_new(doc, "version", json_integer(FORMAT_VERSION));
    json_object_set_new(doc, "collector", json_string("gcscale"));
    json_object_set_new(doc, "shape", json_string(r->shape));
    if (r->snapshot)
        json_object_set_new(doc, "snapshot", json_string(r->snapshot));
    else if (strcmp(r->shape, "tree") == 0)
        json_object_set_new(doc, "depth", json_integer(r->depth));
    else
        json_object_set_new(doc, "size", json_integer((json_int_t)r->size));
    json_object_set_new(doc, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(doc, "objects", json_integer((json_int_t)r->objects));
    json_object_set_new(doc, "pointers", json_integer((json_int_t)r->pointers));
    json_object_set_new(doc, "bytes", json_integer((json_int_t)r->bytes));
    json_object_set_new(doc, "payload_bytes", json_integer((json_int_t)r->payload_bytes));
    json_object_set_new(doc, "throughput_of",
                        json_string("live (marked) objects and their header + payload bytes per "
                                    "second of mark wall time; MB = 1e6 bytes"));
    json_object_set_new(doc, "mark_mode", json_string(r->mark_mode));
    json_object_set_new(doc, "numa", json_string(r->numa));
    json_object_set_new(doc, "pinned", json_boolean(r->pinned));
    json_object_set_new(doc, "cpus", json_integer(r->cpus));
    if (r->placement[0])
        gcs_json_set_pu_map(doc, r->placement, r->pu_map, r->pu_map_logical, r->npu_map);
    json_object_set_new(doc, "reps", json_integer(r->reps));
    json_object_set_new(doc, "warmup", json_integer(r->warmup));
    json_object_set_new(doc, "heap_limit", json_integer((json_int_t)r->heap_limit));
    json_object_set_new(doc, "build_ms", json_real(r->build_ms));
    json_object_set_new(doc, "cache_misses", json_string(r->cache_misses));
    if (r->has_span) {
        json_object_set_new(doc, "span", real_or_null(r->span));
        json_object_set_new(doc, "span_ms", json_real(r->span_ms));
        json_object_set_new(doc, "parallelism", real_or_null(r->parallelism));
    }
    /* The table's rows, busy_share as an array in place of its text, and
     * what the table leaves out. */
    gcs_table *t = gcs_gcbench_result_table(r);
    json_t *jrows = gcs_table_to_json(t);
    gcs_table_free(t);
    for (int i = 0; i < r->nrows; i++) {
        const gcs_gcbench_row *w = &r->rows[i];
        json_t *o = json_array_get(jrows, (size_t)i);
        json_t *b = json_array();
        for (int k = 0; k < busy_count(w); k++)
            json_array_append_new(b, real_or_null(w->busy_share[k]));
        json_object_set_new(o, "busy_share", b);
        json_object_set_new(o, "steal_attempts", json_real(w->steal_attempts));
        json_t *m = json_array();
        for (int s = 0; w->samples && s < r->reps; s++)
            json_array_append_new(m, json_real(w->samples[s].mark_ms));
        json_object_set_new(o, "mark_ms_all", m);
    }
    json_object_set_new(doc, "rows", jrows);
    if (r->ndecisions)
        json_object_set_new(doc, "adaptive", adaptive_json(r));
    return doc;
}

/* ---- reading --------------------------------------------------------------- */

static double num_or_nan(json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

static void copy_string(char *dst, size_t len, json_t *v)
{
    snprintf(dst, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static int read_row(json_t *o, gcs_gcbench_row *w)
{
    json_t *p = json_object_get(o, "threads");
    if (!json_is_integer(p) || json_integer_value(p) < 1)
        return -1;
    w->threads = json_integer_value(p) > INT32_MAX ? INT32_MAX : (int)json_integer_value(p);
    for (int c = 0; c < NCOLUMNS; c++)
        if (columns[c].kind == KIND_NUM)
            *row_num(w, &columns[c]) = num_or_nan(json_object_get(o, columns[c].key));
    w->steal_attempts = num_or_nan(json_object_get(o, "steal_attempts"));
    json_t *busy = json_object_get(o, "busy_share");
    for (int k = 0; k < busy_count(w); k++)
        w->busy_share[k] = num_or_nan(json_array_get(busy, (size_t)k));
    return 0;
}

/* "placement", "pu_map", "pu_map_logical" when the document has them
 * (written since 2026-11-26); the lists stop at the first non-integer. */
static void read_pu_map(json_t *doc, gcs_gcbench_result *r)
{
    copy_string(r->placement, sizeof r->placement, json_object_get(doc, "placement"));
    json_t *os = json_object_get(doc, "pu_map"), *lg = json_object_get(doc, "pu_map_logical");
    for (size_t i = 0; i < json_array_size(os) && i < GCS_GCBENCH_MAX_THREADS; i++) {
        json_t *a = json_array_get(os, i), *b = json_array_get(lg, i);
        if (!json_is_integer(a))
            break;
        r->pu_map[i] = (int)json_integer_value(a);
        r->pu_map_logical[i] = json_is_integer(b) ? (int)json_integer_value(b) : -1;
        r->npu_map++;
    }
}

int gcs_gcbench_result_read(const char *path, gcs_gcbench_result **out, gcs_err *err)
{
    *out = NULL;
    json_t *doc = gcs_json_read_file(path, err);
    if (!doc)
        return -1;
    const char *format = json_string_value(json_object_get(doc, "format"));
    json_t *rows = json_object_get(doc, "rows");
    if (!format || strcmp(format, FORMAT_NAME) != 0 || !json_is_array(rows)) {
        gcs_err_set(err, "%s: not the JSON of 'gcscale gc-bench --json' (format, rows)", path);
        json_decref(doc);
        return -1;
    }
    size_t n = json_array_size(rows);
    if (n == 0) {
        /* as documented in gcbench_result.h; found by make fuzz */
        gcs_err_set(err, "%s: no rows", path);
        json_decref(doc);
        return -1;
    }
    gcs_gcbench_result *r = calloc(1, sizeof *r);
    if (!r || !(r->rows = calloc(n, sizeof *r->rows))) {
        free(r);
        json_decref(doc);
        gcs_err_set(err, "%s: out of memory", path);
        return -1;
    }
    copy_string(r->shape, sizeof r->shape, json_object_get(doc, "shape"));
    const char *snap = json_string_value(json_object_get(doc, "snapshot"));
    r->snapshot = snap ? strdup(snap) : NULL;
    json_t *v = json_object_get(doc, "objects");
    r->has_objects = json_is_integer(v);
    r->objects = r->has_objects ? (uint64_t)json_integer_value(v) : 0;
    r->depth = (int)json_integer_value(json_object_get(doc, "depth"));
    r->size = (uint64_t)json_integer_value(json_object_get(doc, "size"));
    r->seed = (uint64_t)json_integer_value(json_object_get(doc, "seed"));
    r->pointers = (uint64_t)json_integer_value(json_object_get(doc, "pointers"));
    r->bytes = (uint64_t)json_integer_value(json_object_get(doc, "bytes"));
    r->payload_bytes = (uint64_t)json_integer_value(json_object_get(doc, "payload_bytes"));
    copy_string(r->mark_mode, sizeof r->mark_mode, json_object_get(doc, "mark_mode"));
    copy_string(r->numa, sizeof r->numa, json_object_get(doc, "numa"));
    copy_string(r->cache_misses, sizeof r->cache_misses, json_object_get(doc, "cache_misses"));
    r->pinned = json_is_true(json_object_get(doc, "pinned"));
    r->cpus = (int)json_integer_value(json_object_get(doc, "cpus"));
    read_pu_map(doc, r);
    r->reps = (int)json_integer_value(json_object_get(doc, "reps"));
    r->warmup = (int)json_integer_value(json_object_get(doc, "warmup"));
    r->heap_limit = (uint64_t)json_integer_value(json_object_get(doc, "heap_limit"));
    r->build_ms = num_or_nan(json_object_get(doc, "build_ms"));
    r->has_span = json_object_get(doc, "span") != NULL;
    r->span = num_or_nan(json_object_get(doc, "span"));
    r->span_ms = num_or_nan(json_object_get(doc, "span_ms"));
    r->parallelism = num_or_nan(json_object_get(doc, "parallelism"));
    r->instr_cost = json_object_get(json_array_get(rows, 0), "mark_ms_uninstrumented") != NULL;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        if (read_row(row, &r->rows[i]) < 0) {
            gcs_err_set(err, "%s: rows[%zu]: needs an integer threads >= 1", path, i);
            gcs_gcbench_result_free(r);
            json_decref(doc);
            return -1;
        }
        r->nrows++;
    }
    json_decref(doc);
    *out = r;
    return 0;
}
