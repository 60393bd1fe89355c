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
    /* the speedup with P's fastest and slowest collection (over the P = 1
     * median, as speedup is); NaN where gc-bench recorded no min and max */
    double speedup_lo[GCS_PREDICT_MAX_THREADS], speedup_hi[GCS_PREDICT_MAX_THREADS];
    int reps;           /* collections per P behind the bars (0: none) */
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
 * when measured is not NULL, the measured curve with its min-max bars; a
 * dotted line marks the recommended P (0: none). */
GCS_API int gcs_predict_plot(const gcs_model_result *results, int n, const gcs_predict_measured *measured,
                             int recommended, const char *title, const char *subtitle, const char *path,
                             gcs_err *err);

/* The answer in words (docs/model.md, "Reading the answer"): the
 * recommended P and what limits the heap, from the predicted speedup stack
 * at the largest P of results[0..n) as the full table (gcs_predict_table)
 * holds it: every lost_* column is a term, so a term the model gains later
 * is named without a change here.  One line into buf. */
GCS_API void gcs_predict_explain(const gcs_model_result *results, int n, const gcs_table *full, int recommended,
                                 int best, double tolerance, char *buf, size_t len);
/* The same stack as data (new reference): [{"cause", "lost", "words"}],
 * largest first; the coordination terms (wake, search, tail) are one cause,
 * "coord", and an unknown lost_X column is the cause X. */
GCS_API json_t *gcs_predict_limits(const gcs_model_result *results, int n, const gcs_table *full);
/* Whether the model's absolute times can be stood behind: 1, or 0 with why
 * (one line) when they are not: a model other than v2 (every miss a full
 * stall), marker costs assumed on the command line, or v2's serial terms on
 * a nominal value (serial is gcs_model_serial_json's document). */
GCS_API int gcs_predict_times_absolute(const char *model, const json_t *serial, int costs_assumed, char *why,
                                       size_t len);
/* The compact table of the default output: P, time_ms (absolute) or
 * rel_time (T_P / T_1 of the model), speedup, one lost_CAUSE column per
 * cause that is 0.005 or more anywhere (lost_coord = wake + search + tail),
 * and the measured columns when the full table has them. */
GCS_API gcs_table *gcs_predict_compact_table(const gcs_table *full, int absolute);

#endif
