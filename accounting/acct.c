/* acct.c -- interval accounting over a trace (accounting.h).
 *
 * One sweep over every thread's state changes in time order.  Instead of
 * visiting every active thread in every interval (O(intervals x threads)),
 * the sweep keeps a "share clock" S(t) = integral of dt / r(t) over the
 * intervals with r >= 1: a thread active from a to b earns share
 * S(b) - S(a) and run b - a, so each state change costs O(1).  The clock is
 * a long double (64-bit mantissa), so differences of large values stay exact
 * to well below a nanosecond for any realistic trace.
 *
 * The same sweep measures what the speedup stack needs (GC time, time with no
 * application thread alive, application threads blocked or exited), with
 * counters of threads in each situation, also O(1) per change. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acct_internal.h"
#include "gcscale/accounting.h"

typedef _gcs_acct_change change;

static int change_cmp(const void *a, const void *b)
{
    const change *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

change *_gcs_acct_changes(const gcs_trace *t, size_t *n)
{
    size_t nch = t->nthreads + t->nevents;
    change *ch = malloc((nch ? nch : 1) * sizeof *ch);
    if (!ch)
        return NULL;
    size_t k = 0;
    for (size_t j = 0; j < t->nthreads; j++) {
        const gcs_trace_thread *tt = &t->threads[j];
        ch[k++] = (change){.t = tt->start_ns, .thread = (uint32_t)j, .seq = 0, .state = GCS_TRACE_RUNNING};
        for (size_t e = 0; e < tt->nevents; e++) {
            const gcs_trace_event *ev = &t->events[tt->first_event + e];
            ch[k++] = (change){.t = ev->t_ns, .thread = (uint32_t)j, .seq = (uint32_t)(e + 1),
                               .state = (int)ev->state};
        }
    }
    qsort(ch, nch, sizeof *ch, change_cmp);
    *n = nch;
    return ch;
}

typedef struct sweep_thread {
    int state;               /* -1 not started yet; GCS_TRACE_EXITED: gone */
    uint64_t since;          /* when it entered state */
    long double share_at;    /* S when it last became active */
    int app;                 /* class "mutator" */
    int jit, conc;           /* class "jit"; "gc-conc" or "gc" (running outside a pause: concurrent work) */
} sweep_thread;

#define IS(mask, s) (((mask) >> (s)) & 1u)
#define SYNC_STATES (GCS_ACCT_BIT(GCS_TRACE_BLOCKED_LOCK) | GCS_ACCT_BIT(GCS_TRACE_BLOCKED_BARRIER))
#define GC_WORK_STATES (GCS_ACCT_GC_STATES & ~GCS_ACCT_BIT(GCS_TRACE_GC_STOPPED))

static int sweep(const gcs_trace *t, uint32_t mask, const char *app_class, gcs_acct *a, gcs_acct_run_times *rt,
                 gcs_err *err)
{
    size_t nch = 0;
    change *ch = _gcs_acct_changes(t, &nch);
    sweep_thread *th = calloc(t->nthreads ? t->nthreads : 1, sizeof *th);
    long double *run = calloc(t->nthreads ? t->nthreads : 1, sizeof *run);
    long double *share = calloc(t->nthreads ? t->nthreads : 1, sizeof *share);
    long double *state_ns = calloc((t->nthreads ? t->nthreads : 1) * GCS_TRACE_STATE_COUNT, sizeof *state_ns);
    if (!ch || !th || !run || !share || !state_ns) {
        free(ch), free(th), free(run), free(share), free(state_ns);
        gcs_err_set(err, "accounting: out of memory for %zu threads and %zu events", t->nthreads, t->nevents);
        return -1;
    }
    for (size_t j = 0; j < t->nthreads; j++) {
        const char *cls = t->threads[j].cls;
        th[j].state = -1;
        th[j].app = strcmp(cls, app_class) == 0;
        th[j].jit = strcmp(cls, GCS_ACCT_JIT_CLASS) == 0;
        th[j].conc = strcmp(cls, GCS_ACCT_GC_CONC_CLASS) == 0 || strcmp(cls, GCS_ACCT_GC_CLASS) == 0;
    }

    long double S = 0, idle = 0, gc = 0, seq = 0, sync = 0, exited = 0, other = 0, lag = 0;
    long double preempt = 0, jit = 0, conc = 0;
    size_t n_app_preempted = 0, n_jit_running = 0, n_conc_running = 0;
    size_t n_active = 0, n_gc_work = 0, n_gc_stopped = 0, n_app_alive = 0;
    size_t n_app_exited = 0, n_app_sync = 0, n_app_other = 0, n_app_stopped = 0;
    int pause = 0, seen_work = 0, batch_start = 0, batch_work = 0, batch_resume = 0;
    size_t nintervals = 0;
    uint64_t last = t->start_ns;
    for (size_t i = 0; i <= nch; i++) {
        uint64_t now = i < nch ? ch[i].t : t->end_ns;
        if (now > last) {
            long double dt = (long double)(now - last);
            nintervals++;
            if (n_active)
                S += dt / (long double)n_active;
            else
                idle += dt;
            if (pause)
                gc += dt;
            else if (!n_app_alive)
                seq += dt;
            else {
                exited += dt * (long double)n_app_exited;
                sync += dt * (long double)n_app_sync;
                other += dt * (long double)n_app_other;
                lag += dt * (long double)n_app_stopped;
                if (n_app_preempted) {
                    /* Preempted application threads wait for CPUs held by
                     * someone: by compiler and concurrent GC threads as far
                     * as they are running, the rest by anyone else (other
                     * application threads, other programs).  The trace has
                     * no CPU numbers, so the split is by counts. */
                    long double p = (long double)n_app_preempted, j = (long double)n_jit_running,
                                c = (long double)n_conc_running;
                    if (j + c >= p) {
                        jit += dt * p * j / (j + c);
                        conc += dt * p * c / (j + c);
                    } else {
                        jit += dt * j;
                        conc += dt * c;
                        preempt += dt * (p - j - c);
                    }
                }
            }
            last = now;
        }
        if (i == nch)
            break;
        uint32_t j = ch[i].thread;
        sweep_thread *s = &th[j];
        int old = s->state, neu = ch[i].state;
        if (old >= 0) { /* leave the old state (it was alive: nothing follows "exited") */
            state_ns[(size_t)j * GCS_TRACE_STATE_COUNT + (size_t)old] += (long double)(now - s->since);
            if (IS(mask, old)) {
                run[j] += (long double)(now - s->since);
                share[j] += S - s->share_at;
                n_active--;
            }
            n_gc_work -= IS(GC_WORK_STATES, old);
            n_gc_stopped -= old == GCS_TRACE_GC_STOPPED;
            n_jit_running -= s->jit && old == GCS_TRACE_RUNNING;
            n_conc_running -= s->conc && old == GCS_TRACE_RUNNING;
            if (s->app) {
                n_app_preempted -= old == GCS_TRACE_PREEMPTED;
                n_app_stopped -= old == GCS_TRACE_GC_STOPPED;
                if (IS(SYNC_STATES, old))
                    n_app_sync--;
                if (old == GCS_TRACE_BLOCKED_OTHER)
                    n_app_other--;
            }
        } else if (s->app) {
            n_app_alive++;
        }
        s->state = neu;
        s->since = now;
        if (neu == GCS_TRACE_EXITED) {
            if (s->app) {
                n_app_alive--;
                n_app_exited++;
            }
        } else {
            if (IS(mask, neu)) {
                n_active++;
                s->share_at = S;
            }
            n_gc_work += IS(GC_WORK_STATES, neu);
            n_gc_stopped += neu == GCS_TRACE_GC_STOPPED;
            n_jit_running += s->jit && neu == GCS_TRACE_RUNNING;
            n_conc_running += s->conc && neu == GCS_TRACE_RUNNING;
            if (s->app) {
                n_app_preempted += neu == GCS_TRACE_PREEMPTED;
                n_app_stopped += neu == GCS_TRACE_GC_STOPPED;
                n_app_sync += IS(SYNC_STATES, neu);
                n_app_other += neu == GCS_TRACE_BLOCKED_OTHER;
            }
        }
        /* The stop-the-world pause, as the collector times it: from the
         * first thread that stops for a collection (the collecting thread
         * waiting for the others to reach a safepoint counts) until, once
         * GC work was seen, the first thread leaves gc-stopped for its own
         * work while no GC work goes on.  Threads still gc-stopped after
         * that are waking up late: not GC time (gc_lag, part of "other").
         * Decided once all changes with the same time stamp are in, so the
         * order of simultaneous events does not matter. */
        int enters_gc = IS(GCS_ACCT_GC_STATES, neu) && !(old >= 0 && IS(GCS_ACCT_GC_STATES, old));
        batch_start |= enters_gc;
        batch_work |= n_gc_work > 0;
        batch_resume |= old == GCS_TRACE_GC_STOPPED && !IS(GCS_ACCT_GC_STATES, neu);
        if (i + 1 < nch && ch[i + 1].t == now)
            continue;
        if (!n_gc_work && !n_gc_stopped) {
            pause = seen_work = 0;
        } else {
            if (!pause && batch_start)
                pause = 1, seen_work = 0;
            seen_work |= batch_work;
            if (pause && seen_work && !n_gc_work && batch_resume)
                pause = 0;
        }
        batch_start = batch_work = batch_resume = 0;
    }
    /* Close the threads still alive at the end. */
    for (size_t j = 0; j < t->nthreads; j++) {
        sweep_thread *s = &th[j];
        if (s->state < 0 || s->state == GCS_TRACE_EXITED)
            continue;
        state_ns[j * GCS_TRACE_STATE_COUNT + (size_t)s->state] += (long double)(t->end_ns - s->since);
        if (IS(mask, s->state)) {
            run[j] += (long double)(t->end_ns - s->since);
            share[j] += S - s->share_at;
        }
    }

    int rc = 0;
    if (a) {
        a->active_mask = mask;
        a->wall_ns = (double)(t->end_ns - t->start_ns);
        a->idle_ns = (double)idle;
        a->nintervals = nintervals;
        a->nthreads = t->nthreads;
        a->threads = calloc(t->nthreads ? t->nthreads : 1, sizeof *a->threads);
        if (!a->threads) {
            gcs_err_set(err, "accounting: out of memory");
            rc = -1;
        }
        long double busy = 0;
        for (size_t j = 0; rc == 0 && j < t->nthreads; j++) {
            const gcs_trace_thread *tt = &t->threads[j];
            gcs_acct_thread *at = &a->threads[j];
            at->tid = tt->tid;
            at->name = strdup(tt->name);
            at->cls = strdup(tt->cls);
            if (!at->name || !at->cls) {
                gcs_err_set(err, "accounting: out of memory");
                rc = -1;
                break;
            }
            at->start_ns = (double)(tt->start_ns - t->start_ns);
            at->end_ns = (double)(tt->exit_ns - t->start_ns);
            at->run_ns = (double)run[j];
            at->share_ns = (double)share[j];
            at->parallelism = share[j] > 0 ? (double)(run[j] / share[j]) : NAN;
            for (int s = 0; s < GCS_TRACE_STATE_COUNT; s++)
                at->state_ns[s] = (double)state_ns[j * GCS_TRACE_STATE_COUNT + (size_t)s];
            busy += share[j];
        }
        a->busy_ns = (double)busy;
    }
    if (rt) {
        memset(rt, 0, sizeof *rt);
        for (size_t j = 0; j < t->nthreads; j++)
            rt->napp += th[j].app;
        rt->wall_ns = (double)(t->end_ns - t->start_ns);
        rt->gc_ns = (double)gc;
        rt->seq_ns = (double)seq;
        rt->sync_ns = (double)sync;
        rt->exit_ns = (double)exited;
        rt->blocked_other_ns = (double)other;
        rt->gc_lag_ns = (double)lag;
        rt->preempt_ns = (double)preempt;
        rt->jit_ns = (double)jit;
        rt->conc_gc_ns = (double)conc;
    }
    free(ch), free(th), free(run), free(share), free(state_ns);
    return rc;
}

gcs_acct *gcs_acct_compute(const gcs_trace *t, uint32_t active_mask, gcs_err *err)
{
    if (!active_mask)
        active_mask = GCS_ACCT_ACTIVE_CPU;
    if (active_mask & GCS_ACCT_BIT(GCS_TRACE_EXITED)) {
        gcs_err_set(err, "accounting: \"exited\" cannot be an active state");
        return NULL;
    }
    gcs_acct *a = calloc(1, sizeof *a);
    if (!a) {
        gcs_err_set(err, "accounting: out of memory");
        return NULL;
    }
    if (sweep(t, active_mask, GCS_ACCT_APP_CLASS, a, NULL, err) != 0) {
        gcs_acct_free(a);
        return NULL;
    }
    return a;
}

void gcs_acct_free(gcs_acct *a)
{
    if (!a)
        return;
    for (size_t j = 0; a->threads && j < a->nthreads; j++) {
        free(a->threads[j].name);
        free(a->threads[j].cls);
    }
    free(a->threads);
    free(a);
}

int gcs_acct_run_times_compute(const gcs_trace *t, const char *app_class, gcs_acct_run_times *out,
                               gcs_err *err)
{
    return sweep(t, GCS_ACCT_ACTIVE_CPU, app_class ? app_class : GCS_ACCT_APP_CLASS, NULL, out, err);
}
