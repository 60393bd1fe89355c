/* predict.h -- the predict job: the model over a range of thread counts, the
 * recommendation, and its presentation (prefix gcs_predict_).
 *
 * Calls model.h for every prediction; knows nothing of how the model's
 * inputs were obtained (the marker's miss overlap that `--overlap fitted`
 * reads is fitted by calibrate: calibrate.h, gcs_calibrate_fit_overlap).
 * Calls common.h, plot.h and model.h.
 */
#ifndef GCSCALE_PREDICT_H
#define GCSCALE_PREDICT_H

#include "gcscale/model.h"

#define GCS_PREDICT_MAX_THREADS 4096
#define GCS_PREDICT_TOLERANCE 0.05   /* recommend the smallest P within 5% of the best */

/* Parses "1-64", "1,2,4,8" or a mix ("1-4,8,16") into an ascending list
 * without duplicates.  0, 5-2 and counts above GCS_PREDICT_MAX_THREADS are
 * errors.  *threads is malloc'ed. */
GCS_API int gcs_predict_parse_threads(const char *text, int **threads, int *n, gcs_err *err);

/* Predicts every thread count; results[] has n entries. */
GCS_API int gcs_predict_curve(const gcs_profile *prof, const gcs_model_heap *heap, const int *threads, int n,
                      const gcs_model_opts *opts, gcs_model_result *results, gcs_err *err);

/* The model's terms that rest on a profile constant marked unreliable
 * (gcs_profile_unreliable): a JSON array (new reference) of {"term",
 * "constant", "reason"}, term one of "latency" (M1), "contention" (S_O),
 * "work" (T1 from gc_cost_ns.object/pointer), "steals" and "overlap" (only
 * when opts took them from the profile); empty when none does. */
GCS_API json_t *gcs_predict_unreliable_inputs(const gcs_profile *prof, const gcs_model_opts *opts);
/* The same as one line for a terminal ("" when the array is empty). */
GCS_API void gcs_predict_unreliable_line(const json_t *inputs, char *buf, size_t len);

/* A measured speedup curve (from `gcscale gc-bench --json`). */
typedef struct gcs_predict_measured {
    int n;
    double threads[GCS_PREDICT_MAX_THREADS];
    double speedup[GCS_PREDICT_MAX_THREADS];
    char label[128];
    long long objects;  /* the measured heap's live objects, -1 where the file does not say */
} gcs_predict_measured;

/* One row per P: the model's terms, the ablations and the speedup stack;
 * with a measured curve (or NULL), also the measured speedup at that P and
 * the prediction's error, (predicted / measured - 1) in percent ("-" where
 * P was not measured). */
GCS_API gcs_table *gcs_predict_table(const gcs_model_result *results, int n, const gcs_predict_measured *measured);

GCS_API int gcs_predict_load_measured(const char *path, gcs_predict_measured *m, gcs_err *err);

/* The speedup plot: ideal, predicted, Pred(M_P = M1), Pred(Q_P = Q1) and,
 * when measured is not NULL, the measured curve. */
GCS_API int gcs_predict_plot(const gcs_model_result *results, int n, const gcs_predict_measured *measured,
                     const char *title, const char *subtitle, const char *path, gcs_err *err);

#endif
