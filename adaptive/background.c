/* background.c -- the model's curve for the adaptive policy, and the thread
 * that predicts it outside the pause.
 *
 * A new curve (the model at every candidate P) is what a decision costs
 * most: 20-90 us cold right after a mark, against 1-2% of a 4-5 ms pause
 * (docs/adaptive.md, "Cost").  The decision needs it only when the heap's
 * shape has moved, and a curve one collection old, scaled to the new T1,
 * serves meanwhile; so the policy posts the heap here and takes the curve
 * at a later collection.  The thread runs at SCHED_IDLE: it gets a CPU when
 * neither the collector's workers nor the mutators want one, so predicting
 * does not lengthen the pause it was asked in either.
 *
 * Nothing the pause calls waits: post and take try the lock once and give
 * up (the thread holds it only to copy a request or a result).  The thread
 * owns its scratch; the profile and model options are the policy's, read
 * only. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/internal.h"
#include "adaptive_internal.h"

int _gcs_adaptive_curve_predict(const gcs_profile *prof, const gcs_model_opts *mopts, const gcs_model_heap *heap,
                                const int *ps, int n, gcs_model_result *scratch, _gcs_adaptive_curve *curve,
                                int *failed_p, gcs_err *err)
{
    for (int i = 0; i < n; i++) {
        int p = ps[i];
        gcs_assert_internal(p >= 1 && p <= curve->max && p <= GCS_GC_MAX_THREADS);
        gcs_model_result *r = &scratch[i];
        if (gcs_model_predict(prof, heap, p, mopts, r, err) < 0) {
            *failed_p = p;
            return -1;
        }
        curve->pred[p - 1] = r->time_ns;
        curve->frac[p - 1] = fmin(1.0, fmax(0.0, (r->lost_span + r->lost_wake + r->lost_search + r->lost_tail) / p));
    }
    return 0;
}

struct _gcs_adaptive_bg {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;      /* a request, or stop */
    pthread_cond_t done_cond; /* a result (for _gcs_adaptive_bg_wait_idle) */
    int stop;
    const gcs_profile *prof;
    gcs_model_opts mopts;
    gcs_model_result *scratch; /* GCS_GC_MAX_THREADS, the thread's own */
    /* Under lock: the request ... */
    int pending;
    uint64_t posted;
    gcs_model_heap req_heap;
    int req_max;
    /* ... and the newest result (seq = the request's number; 0: none). */
    uint64_t res_seq;
    int res_ok;
    uint64_t res_cost_ns;
    _gcs_adaptive_curve res;
    char res_err[200];
};

static void *bg_main(void *arg)
{
    _gcs_adaptive_bg *bg = arg;
    /* The lowest priority there is; a kernel that refuses leaves the
     * default, which still keeps the prediction out of the pause's
     * critical path on a machine with a CPU to spare. */
    struct sched_param sp = {0};
    (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    (void)pthread_setname_np(pthread_self(), "gcs-adaptive");
    _gcs_adaptive_curve *c = malloc(sizeof *c);
    int ps[GCS_GC_MAX_THREADS];
    pthread_mutex_lock(&bg->lock);
    for (;;) {
        while (!bg->stop && !bg->pending)
            pthread_cond_wait(&bg->cond, &bg->lock);
        if (bg->stop)
            break;
        uint64_t seq = bg->posted;
        bg->pending = 0;
        if (c) {
            c->heap = bg->req_heap;
            c->max = bg->req_max;
        }
        pthread_mutex_unlock(&bg->lock);

        int ok = 0, failed_p = 0;
        uint64_t t0 = gcs_now_ns();
        gcs_err err = {{0}};
        if (c) {
            /* Every P: outside the pause there is no reason for a grid. */
            for (int p = 1; p <= c->max; p++) {
                ps[p - 1] = p;
                c->pred[p - 1] = c->frac[p - 1] = NAN;
            }
            ok = _gcs_adaptive_curve_predict(bg->prof, &bg->mopts, &c->heap, ps, c->max, bg->scratch, c,
                                             &failed_p, &err) == 0;
        } else {
            gcs_err_set(&err, "out of memory");
        }
        uint64_t cost = gcs_now_ns() - t0;

        pthread_mutex_lock(&bg->lock);
        bg->res_seq = seq;
        bg->res_ok = ok;
        bg->res_cost_ns = cost;
        if (ok)
            bg->res = *c;
        else
            snprintf(bg->res_err, sizeof bg->res_err, "P = %d: %.180s", failed_p, err.msg);
        pthread_cond_broadcast(&bg->done_cond);
    }
    pthread_mutex_unlock(&bg->lock);
    free(c);
    return NULL;
}

_gcs_adaptive_bg *_gcs_adaptive_bg_start(const gcs_profile *prof, const gcs_model_opts *mopts, gcs_err *err)
{
    _gcs_adaptive_bg *bg = calloc(1, sizeof *bg);
    gcs_model_result *scratch = calloc(GCS_GC_MAX_THREADS, sizeof *scratch);
    if (!bg || !scratch) {
        free(bg);
        free(scratch);
        gcs_err_set(err, "adaptive: out of memory for the background predictor");
        return NULL;
    }
    bg->prof = prof;
    bg->mopts = *mopts;
    bg->scratch = scratch;
    pthread_mutex_init(&bg->lock, NULL);
    pthread_cond_init(&bg->cond, NULL);
    pthread_cond_init(&bg->done_cond, NULL);
    int rc = pthread_create(&bg->thread, NULL, bg_main, bg);
    if (rc != 0) {
        gcs_err_set(err, "adaptive: cannot start the background predictor: %s", strerror(rc));
        pthread_cond_destroy(&bg->done_cond);
        pthread_cond_destroy(&bg->cond);
        pthread_mutex_destroy(&bg->lock);
        free(scratch);
        free(bg);
        return NULL;
    }
    return bg;
}

void _gcs_adaptive_bg_stop(_gcs_adaptive_bg *bg)
{
    if (!bg)
        return;
    pthread_mutex_lock(&bg->lock);
    bg->stop = 1;
    pthread_cond_signal(&bg->cond);
    pthread_mutex_unlock(&bg->lock);
    pthread_join(bg->thread, NULL);
    pthread_cond_destroy(&bg->done_cond);
    pthread_cond_destroy(&bg->cond);
    pthread_mutex_destroy(&bg->lock);
    free(bg->scratch);
    free(bg);
}

int _gcs_adaptive_bg_post(_gcs_adaptive_bg *bg, const gcs_model_heap *heap, int max)
{
    if (pthread_mutex_trylock(&bg->lock) != 0)
        return -1;
    gcs_assert_internal(max >= 1 && max <= GCS_GC_MAX_THREADS);
    bg->req_heap = *heap;
    bg->req_max = max;
    bg->posted++;
    bg->pending = 1;
    pthread_cond_signal(&bg->cond);
    pthread_mutex_unlock(&bg->lock);
    return 0;
}

int _gcs_adaptive_bg_take(_gcs_adaptive_bg *bg, uint64_t *seq, _gcs_adaptive_curve *curve, int *ok,
                          uint64_t *cost_ns, char *errbuf, size_t errlen)
{
    if (pthread_mutex_trylock(&bg->lock) != 0)
        return -1;
    int got = bg->res_seq > *seq;
    if (got) {
        *seq = bg->res_seq;
        *ok = bg->res_ok;
        *cost_ns = bg->res_cost_ns;
        if (bg->res_ok)
            *curve = bg->res;
        else
            snprintf(errbuf, errlen, "%s", bg->res_err);
    }
    pthread_mutex_unlock(&bg->lock);
    return got;
}

int _gcs_adaptive_bg_wait_idle(_gcs_adaptive_bg *bg, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&bg->lock);
    while (bg->res_seq < bg->posted && rc == 0)
        rc = pthread_cond_timedwait(&bg->done_cond, &bg->lock, &until);
    int done = bg->res_seq >= bg->posted;
    pthread_mutex_unlock(&bg->lock);
    return done ? 0 : -1;
}
