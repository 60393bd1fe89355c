/* background.c -- the adaptive policy's decision thread: the decision made
 * outside the pause.
 *
 * A decision in the pause reads the last collection's statistics from cold
 * caches right after the mutators ran, and costs 15-70 us on this VM for
 * two candidates (more with a new curve) against 1% of a 4-7 ms pause
 * (docs/adaptive.md, "Cost").  So the pause only hands the statistics over
 * and takes the decision the thread made from the ones before: the
 * collection after next runs with what this one measured.  The thread runs
 * at SCHED_IDLE: it gets a CPU when neither the collector's workers nor the
 * mutators want one, so deciding lengthens neither the pause it was asked
 * in nor the mutators' time.
 *
 * Nothing the pause calls waits: the exchange tries the lock once and gives
 * up (the thread holds it only to copy statistics in or a decision out).
 * The policy's state belongs to the thread from its start on; the pause
 * touches only what is here. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/internal.h"
#include "adaptive_internal.h"

struct _gcs_adaptive_bg {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;      /* statistics posted, or stop */
    pthread_cond_t done_cond; /* a decision made (for _gcs_adaptive_bg_wait_idle) */
    int stop;
    _gcs_adaptive_decide_fn decide;
    void *state;
    /* Under lock: the statistics posted last (the fields a decision reads,
     * _gcs_adaptive_stats_copy), their number and the pool size ... */
    gcs_gc_stats *in;
    int in_max;
    uint64_t posted;
    /* ... and the newest decision: made from posting number done_seq; taken
     * once. */
    uint64_t done_seq;
    int taken;
    int res_p, res_settled;
    gcs_gc_decision res;
    /* The thread's own copy to decide on. */
    gcs_gc_stats *work;
};

void _gcs_adaptive_stats_copy(gcs_gc_stats *d, const gcs_gc_stats *s)
{
    d->index = s->index;
    d->threads = s->threads;
    d->mark_mode = s->mark_mode;
    d->remark = s->remark;
    d->stop_ns = s->stop_ns;
    d->mark_ns = s->mark_ns;
    d->sweep_ns = s->sweep_ns;
    d->pause_ns = s->pause_ns;
    d->roots = s->roots;
    d->objects_marked = s->objects_marked;
    d->pointers_scanned = s->pointers_scanned;
    d->edges_examined = s->edges_examined;
    d->live_objects = s->live_objects;
    d->live_bytes = s->live_bytes;
    d->pages_in_use = s->pages_in_use;
    d->compute_span = s->compute_span;
    d->span = s->span;
    d->span_cost_object = s->span_cost_object;
    d->span_cost_pointer = s->span_cost_pointer;
    d->nnodes = s->nnodes;
    int nn = s->nnodes < 0 ? 0 : s->nnodes > GCS_GC_MAX_NODES ? GCS_GC_MAX_NODES : s->nnodes;
    memcpy(d->node_live_bytes, s->node_live_bytes, (size_t)nn * sizeof *s->node_live_bytes);
    memset(d->node_live_bytes + nn, 0, (size_t)(GCS_GC_MAX_NODES - nn) * sizeof *s->node_live_bytes);
    d->unknown_node_live_bytes = s->unknown_node_live_bytes;
    int p = s->threads < 0 ? 0 : s->threads > GCS_GC_MAX_THREADS ? GCS_GC_MAX_THREADS : s->threads;
    for (int i = 0; i < p; i++) {
        d->workers[i].busy_ns = s->workers[i].busy_ns;
        d->workers[i].search_ns = s->workers[i].search_ns;
        d->workers[i].sweep_ns = s->workers[i].sweep_ns;
        d->workers[i].pages_swept = s->workers[i].pages_swept;
    }
}

/* The part of a decision record the policy fills (the collector fills the
 * rest). */
static void decision_copy(gcs_gc_decision *d, const gcs_gc_decision *s)
{
    d->npredicted = s->npredicted;
    memcpy(d->predicted_mark_ns, s->predicted_mark_ns, (size_t)s->npredicted * sizeof *s->predicted_mark_ns);
    d->note = s->note;
    d->ninputs = s->ninputs;
    memcpy(d->inputs, s->inputs, (size_t)s->ninputs * sizeof *s->inputs);
}

static void *bg_main(void *arg)
{
    _gcs_adaptive_bg *bg = arg;
    /* The lowest priority there is; a kernel that refuses leaves the
     * default, which still keeps the decision out of the pause. */
    struct sched_param sp = {0};
    (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    (void)pthread_setname_np(pthread_self(), "gcs-adaptive");
    gcs_gc_decision *d = malloc(sizeof *d);
    pthread_mutex_lock(&bg->lock);
    for (;;) {
        while (!bg->stop && bg->done_seq == bg->posted)
            pthread_cond_wait(&bg->cond, &bg->lock);
        if (bg->stop)
            break;
        uint64_t seq = bg->posted;
        int max = bg->in_max;
        _gcs_adaptive_stats_copy(bg->work, bg->in);
        pthread_mutex_unlock(&bg->lock);

        int p = 0, settled = 0;
        if (d) {
            memset(d, 0, sizeof *d);
            p = bg->decide(bg->state, bg->work, max, d, &settled);
        }

        pthread_mutex_lock(&bg->lock);
        bg->done_seq = seq;
        if (p >= 1 && p <= max) {
            bg->res_p = p;
            bg->res_settled = settled >= 1 && settled <= max ? settled : p;
            decision_copy(&bg->res, d);
            bg->taken = 0;
        }
        pthread_cond_broadcast(&bg->done_cond);
    }
    pthread_mutex_unlock(&bg->lock);
    free(d);
    return NULL;
}

_gcs_adaptive_bg *_gcs_adaptive_bg_start(_gcs_adaptive_decide_fn decide, void *state, gcs_err *err)
{
    _gcs_adaptive_bg *bg = calloc(1, sizeof *bg);
    gcs_gc_stats *in = calloc(1, sizeof *in), *work = calloc(1, sizeof *work);
    if (!bg || !in || !work) {
        free(bg);
        free(in);
        free(work);
        gcs_err_set(err, "adaptive: out of memory for the decision thread");
        return NULL;
    }
    bg->decide = decide;
    bg->state = state;
    bg->in = in;
    bg->work = work;
    bg->taken = 1; /* nothing to take yet */
    pthread_mutex_init(&bg->lock, NULL);
    pthread_cond_init(&bg->cond, NULL);
    pthread_cond_init(&bg->done_cond, NULL);
    int rc = pthread_create(&bg->thread, NULL, bg_main, bg);
    if (rc != 0) {
        gcs_err_set(err, "adaptive: cannot start the decision thread: %s", strerror(rc));
        pthread_cond_destroy(&bg->done_cond);
        pthread_cond_destroy(&bg->cond);
        pthread_mutex_destroy(&bg->lock);
        free(in);
        free(work);
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
    free(bg->in);
    free(bg->work);
    free(bg);
}

int _gcs_adaptive_bg_exchange(_gcs_adaptive_bg *bg, const gcs_gc_stats *prev, int max, int *p, int *settled,
                              gcs_gc_decision *out)
{
    if (pthread_mutex_trylock(&bg->lock) != 0)
        return -1;
    gcs_assert_internal(max >= 1 && max <= GCS_GC_MAX_THREADS);
    _gcs_adaptive_stats_copy(bg->in, prev);
    bg->in_max = max;
    bg->posted++;
    int got = 0;
    *p = *settled = 0;
    if (bg->res_p > 0) {
        *settled = bg->res_settled;
        if (!bg->taken) {
            *p = bg->res_p;
            decision_copy(out, &bg->res);
            bg->taken = 1;
            got = 1;
        }
    }
    pthread_mutex_unlock(&bg->lock);
    /* After the unlock: a thread woken under the lock would block on it at
     * once and need a second wake-up (posted changed under the lock, so a
     * thread not yet waiting sees it). */
    pthread_cond_signal(&bg->cond);
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
    while (bg->done_seq < bg->posted && rc == 0)
        rc = pthread_cond_timedwait(&bg->done_cond, &bg->lock, &until);
    int done = bg->done_seq >= bg->posted;
    pthread_mutex_unlock(&bg->lock);
    return done ? 0 : -1;
}
