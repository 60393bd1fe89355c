/* adaptive_internal.h -- what the adaptive policy's files share (not
 * installed; prefix _gcs_adaptive_).
 *
 *   policy.c      the decision in the pause: estimate, corrections,
 *                 objective, hysteresis, cap, exploration, cost budget;
 *   background.c  the model's curve: predicted in the pause (within the
 *                 budget) or by the background predictor thread, outside
 *                 the pause (docs/adaptive.md, "Cost").
 */
#ifndef GCSCALE_ADAPTIVE_INTERNAL_H
#define GCSCALE_ADAPTIVE_INTERNAL_H

#include <stdint.h>

#include "gcscale/gc.h"
#include "gcscale/model.h"
#include "gcscale/profile.h"

/* The model's mark time at P = 1..max for one heap: pred[P - 1] in ns and
 * its overhead share f(P) (lost span, wake, search and tail over P); NaN
 * where not predicted. */
typedef struct _gcs_adaptive_curve {
    gcs_model_heap heap;
    int max;
    double pred[GCS_GC_MAX_THREADS];
    double frac[GCS_GC_MAX_THREADS];
} _gcs_adaptive_curve;

/* Predicts the curve of `heap` at ps[0..n) (P values in 1..curve->max;
 * the others stay as they were) with scratch of n results.  -1 with err
 * and *failed_p set when the model rejects the inputs. */
int _gcs_adaptive_curve_predict(const gcs_profile *prof, const gcs_model_opts *mopts, const gcs_model_heap *heap,
                                const int *ps, int n, gcs_model_result *scratch, _gcs_adaptive_curve *curve,
                                int *failed_p, gcs_err *err);

/* The background predictor: a thread at the lowest scheduling priority
 * (SCHED_IDLE) that predicts the curve of the last heap posted to it, every
 * P up to the posted max, while the world runs.  prof and mopts are the
 * policy's and are only read; they must outlive the predictor. */
typedef struct _gcs_adaptive_bg _gcs_adaptive_bg;

/* NULL with err set when the thread cannot be started. */
_gcs_adaptive_bg *_gcs_adaptive_bg_start(const gcs_profile *prof, const gcs_model_opts *mopts, gcs_err *err);
/* Stops and joins the thread, frees everything. */
void _gcs_adaptive_bg_stop(_gcs_adaptive_bg *bg);
/* Both below are called in the pause and never wait: they try the lock
 * once and return -1 when the thread holds it (copying a result).
 * post: asks for the curve of heap at P = 1..max (replacing a request not
 * yet started); 0 posted. */
int _gcs_adaptive_bg_post(_gcs_adaptive_bg *bg, const gcs_model_heap *heap, int max);
/* take: 1 with the newest finished curve copied into *curve when it is
 * newer than *seq (then updated), *ok 0 when the model rejected that heap
 * (why in errbuf), *cost_ns what predicting it cost the thread; 0 when
 * there is none newer. */
int _gcs_adaptive_bg_take(_gcs_adaptive_bg *bg, uint64_t *seq, _gcs_adaptive_curve *curve, int *ok,
                          uint64_t *cost_ns, char *errbuf, size_t errlen);
/* Waits (blocking: for tests, never in a pause) until every request posted
 * so far is finished, at most timeout_ms; 0 done, -1 timed out. */
int _gcs_adaptive_bg_wait_idle(_gcs_adaptive_bg *bg, int timeout_ms);

/* The same for a policy state of gcs_adaptive_policy_new (policy.c); 0 at
 * once when it predicts in the pause. */
int _gcs_adaptive_wait_background(void *policy_state, int timeout_ms);

#endif
