/* bottle.c -- bottle-graph boxes for any grouping of threads, from the
 * per-thread results of gcs_acct_compute (the trace is not read again), and
 * their table and JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/accounting.h"

static int box_cmp(const void *a, const void *b)
{
    const gcs_acct_box *x = a, *y = b;
    int xn = isnan(x->parallelism), yn = isnan(y->parallelism);
    if (xn != yn)
        return xn - yn; /* never-active boxes last */
    if (!xn && x->parallelism != y->parallelism)
        return x->parallelism > y->parallelism ? -1 : 1; /* widest first: the bottom */
    if (x->share_ns != y->share_ns)
        return x->share_ns > y->share_ns ? -1 : 1;
    return strcmp(x->label, y->label);
}

gcs_acct_bottle *gcs_acct_bottle_make(const gcs_acct *a, gcs_acct_grouping g, const char *const *labels,
                                      gcs_err *err)
{
    if (g == GCS_ACCT_BY_LABEL && !labels) {
        gcs_err_set(err, "bottle graph: grouping by label needs one label per thread");
        return NULL;
    }
    gcs_acct_bottle *b = calloc(1, sizeof *b);
    if (!b || !(b->boxes = calloc(a->nthreads ? a->nthreads : 1, sizeof *b->boxes))) {
        free(b);
        gcs_err_set(err, "bottle graph: out of memory");
        return NULL;
    }
    b->wall_ns = a->wall_ns;
    b->idle_ns = a->idle_ns;
    b->busy_ns = a->busy_ns;
    for (size_t j = 0; j < a->nthreads; j++) {
        const gcs_acct_thread *th = &a->threads[j];
        const char *label = g == GCS_ACCT_BY_THREAD ? th->name : g == GCS_ACCT_BY_CLASS ? th->cls : labels[j];
        /* Threads of one program often share a name (a JVM's two "java"
         * threads, every thread of node or xz): a box per thread needs a
         * label that tells them apart, so a shared name gets the tid. */
        char named[160];
        if (g == GCS_ACCT_BY_THREAD && label)
            for (size_t o = 0; o < a->nthreads; o++)
                if (o != j && strcmp(a->threads[o].name, th->name) == 0) {
                    snprintf(named, sizeof named, "%.140s %lld", th->name, (long long)th->tid);
                    label = named;
                    break;
                }
        if (!label || !*label) {
            gcs_err_set(err, "bottle graph: thread %lld has no group label", (long long)th->tid);
            gcs_acct_bottle_free(b);
            return NULL;
        }
        gcs_acct_box *box = NULL;
        if (g != GCS_ACCT_BY_THREAD) /* threads may share a name; only explicit groups merge */
            for (size_t k = 0; k < b->nboxes && !box; k++)
                if (strcmp(b->boxes[k].label, label) == 0)
                    box = &b->boxes[k];
        if (!box) {
            box = &b->boxes[b->nboxes++];
            box->label = strdup(label);
            box->cls = strdup(th->cls);
            if (!box->label || !box->cls) {
                gcs_err_set(err, "bottle graph: out of memory");
                gcs_acct_bottle_free(b);
                return NULL;
            }
        } else if (strcmp(box->cls, th->cls) != 0 && strcmp(box->cls, "mixed") != 0) {
            free(box->cls);
            if (!(box->cls = strdup("mixed"))) {
                gcs_err_set(err, "bottle graph: out of memory");
                gcs_acct_bottle_free(b);
                return NULL;
            }
        }
        box->nthreads++;
        box->run_ns += th->run_ns;
        box->share_ns += th->share_ns;
    }
    for (size_t k = 0; k < b->nboxes; k++) {
        gcs_acct_box *box = &b->boxes[k];
        box->parallelism = box->share_ns > 0 ? box->run_ns / box->share_ns : NAN;
        box->share_pct = b->busy_ns > 0 ? 100.0 * box->share_ns / b->busy_ns : 0;
    }
    qsort(b->boxes, b->nboxes, sizeof *b->boxes, box_cmp);
    return b;
}

void gcs_acct_bottle_free(gcs_acct_bottle *b)
{
    if (!b)
        return;
    for (size_t k = 0; b->boxes && k < b->nboxes; k++) {
        free(b->boxes[k].label);
        free(b->boxes[k].cls);
    }
    free(b->boxes);
    free(b);
}

gcs_table *gcs_acct_bottle_table(const gcs_acct_bottle *b, const char *title)
{
    static const char *const cols[] = {"box", "class", "threads", "share_ms", "share_pct", "run_ms",
                                       "parallelism"};
    gcs_table *t = gcs_table_new(title, 7, cols);
    if (!t)
        return NULL;
    for (size_t k = 0; k < b->nboxes; k++) {
        const gcs_acct_box *box = &b->boxes[k];
        gcs_table_add_str(t, box->label);
        gcs_table_add_str(t, box->cls);
        gcs_table_add_int(t, (long long)box->nthreads);
        gcs_table_add_num(t, box->share_ns / 1e6, 3);
        gcs_table_add_num(t, box->share_pct, 2);
        gcs_table_add_num(t, box->run_ns / 1e6, 3);
        gcs_table_add_num(t, box->parallelism, 3);
    }
    return t;
}

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

json_t *gcs_acct_bottle_to_json(const gcs_acct_bottle *b)
{
    json_t *boxes = json_array();
    for (size_t k = 0; k < b->nboxes; k++) {
        const gcs_acct_box *box = &b->boxes[k];
        json_array_append_new(boxes, json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:o}", "box", box->label, "class",
                                               box->cls, "threads", (json_int_t)box->nthreads, "share_ms",
                                               json_real(box->share_ns / 1e6), "share_pct",
                                               json_real(box->share_pct), "run_ms", json_real(box->run_ns / 1e6),
                                               "parallelism", num_or_null(box->parallelism)));
    }
    return json_pack("{s:o, s:o, s:o, s:o}", "wall_ms", json_real(b->wall_ns / 1e6), "busy_ms",
                     json_real(b->busy_ns / 1e6), "idle_ms", json_real(b->idle_ns / 1e6), "boxes", boxes);
}
