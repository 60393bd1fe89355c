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
 * Nor does it wake the thread: the thread looks for new statistics on a
 * timer, a quarter of the time between the last collections (1-100 ms), so
 * that a decision is ready well before the next collection.  Why: waking a
 * thread is a system call, and on a VM waking one on another vCPU is an
 * interrupt between CPUs that the hypervisor delivers: it was most of the
 * exchange, and of the 1 % of a short pause the exchange may cost
 * (docs/adaptive.md, "Cost").  The price is the timer's wake-ups: at most
 * 1000 a second while collections come every 4 ms or faster, 10 a second
 * at most while none come.  The policy's state belongs to the thread from
 * its start on; the pause touches only what is here. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/internal.h"
#include "adaptive_internal.h"

/* The thread's timer: a quarter of the interval between collections, in
 * these bounds; the first collections wait the initial period. */
#define POLL_MIN_NS 1000000ull
#define POLL_MAX_NS 100000000ull
#define POLL_FIRST_NS 10000000ull

struct _gcs_adaptive_bg {
    pthread_t thread;
    pthread_mutex_t lock;     /* the exchange's: the pause only ever tries it, and so does the thread */
    pthread_mutex_t sleep_lock; /* the thread's timer and stop, never taken by the pause */
    pthread_cond_t cond;      /* stop (statistics are found on the timer), on CLOCK_MONOTONIC */
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
    d->start_ns = s->start_ns; /* the thread's timer (bg_main) */
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

/* now + ns on CLOCK_MONOTONIC, the clock of bg->cond */
static struct timespec deadline_after(uint64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t nsec = (uint64_t)t.tv_nsec + ns;
    t.tv_sec += (time_t)(nsec / 1000000000ull);
    t.tv_nsec = (long)(nsec % 1000000000ull);
    return t;
}

/* The next timer period from the collections' start times: a quarter of
 * the last interval, within the bounds (an interval that is not one, from
 * a clock that went back or statistics made up, leaves it). */
static uint64_t next_period(uint64_t period, uint64_t last_start, uint64_t start)
{
    if (last_start == 0 || start <= last_start)
        return period;
    uint64_t p = (start - last_start) / 4;
    return p < POLL_MIN_NS ? POLL_MIN_NS : p > POLL_MAX_NS ? POLL_MAX_NS : p;
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
    uint64_t period = POLL_FIRST_NS, last_start = 0;
    for (;;) {
        /* One period, or until stopped, on a lock of the thread's own: a
         * thread that waited on the exchange's lock would have to be woken
         * by the pause's unlock. */
        pthread_mutex_lock(&bg->sleep_lock);
        if (!bg->stop) {
            struct timespec until = deadline_after(period);
            pthread_cond_timedwait(&bg->cond, &bg->sleep_lock, &until);
        }
        int stop = bg->stop;
        pthread_mutex_unlock(&bg->sleep_lock);
        if (stop)
            break;
        if (pthread_mutex_trylock(&bg->lock) != 0)
            continue; /* the pause is in the exchange: next period */
        if (bg->done_seq == bg->posted) {
            pthread_mutex_unlock(&bg->lock);
            continue;
        }
        uint64_t seq = bg->posted;
        int max = bg->in_max;
        _gcs_adaptive_stats_copy(bg->work, bg->in);
        pthread_mutex_unlock(&bg->lock);
        period = next_period(period, last_start, bg->work->start_ns);
        last_start = bg->work->start_ns;

        int p = 0, settled = 0;
        if (d) {
            memset(d, 0, sizeof *d);
            p = bg->decide(bg->state, bg->work, max, d, &settled);
        }

        /* as above, never a waiter on the exchange's lock */
        while (pthread_mutex_trylock(&bg->lock) != 0)
            nanosleep(&(struct timespec){0, 20000}, NULL);
        bg->done_seq = seq;
        if (p >= 1 && p <= max) {
            bg->res_p = p;
            bg->res_settled = settled >= 1 && settled <= max ? settled : p;
            decision_copy(&bg->res, d);
            bg->taken = 0;
        }
        pthread_cond_broadcast(&bg->done_cond);
        pthread_mutex_unlock(&bg->lock);
    }
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
    pthread_mutex_init(&bg->sleep_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&bg->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&bg->done_cond, NULL);
    int rc = pthread_create(&bg->thread, NULL, bg_main, bg);
    if (rc != 0) {
        gcs_err_set(err, "adaptive: cannot start the decision thread: %s", strerror(rc));
        pthread_cond_destroy(&bg->done_cond);
        pthread_cond_destroy(&bg->cond);
        pthread_mutex_destroy(&bg->sleep_lock);
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
    pthread_mutex_lock(&bg->sleep_lock);
    bg->stop = 1;
    pthread_cond_signal(&bg->cond);
    pthread_mutex_unlock(&bg->sleep_lock);
    pthread_join(bg->thread, NULL);
    pthread_cond_destroy(&bg->done_cond);
    pthread_cond_destroy(&bg->cond);
    pthread_mutex_destroy(&bg->sleep_lock);
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
    /* no wake-up: the thread finds the statistics on its timer (above) */
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
