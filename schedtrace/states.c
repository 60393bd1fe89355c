/* states.c -- the traced threads' state machine.
 *
 * Decoded scheduler events come in (in time order, system wide); the events
 * of followed threads move them between running, runnable, futex, sleeping
 * and exited.  Every change is kept (for the trace file) and the time in each
 * state is summed (for the summary).  Knows nothing of perf or tracefs, so
 * tests feed it synthetic event sequences. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/schedtrace.h"

struct gcs_schedtrace_states {
    gcs_schedtrace_thread *threads;
    size_t nthreads, cap;
    gcs_schedtrace_change *changes;
    size_t nchanges, ccap;
    /* tid -> index of its newest thread record: open addressing, linear
     * probing, never shrinks (a reused tid overwrites its slot). */
    int32_t *keys;
    uint32_t *vals;
    size_t hcap, hcount;
};

static size_t slot_of(int32_t tid, size_t cap)
{
    return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static int hash_grow(gcs_schedtrace_states *s)
{
    size_t ncap = s->hcap ? s->hcap * 2 : 256;
    int32_t *keys = calloc(ncap, sizeof *keys);
    uint32_t *vals = calloc(ncap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < s->hcap; i++) {
        if (s->keys[i] == 0)
            continue;
        size_t j = slot_of(s->keys[i], ncap);
        while (keys[j] != 0)
            j = (j + 1) & (ncap - 1);
        keys[j] = s->keys[i];
        vals[j] = s->vals[i];
    }
    free(s->keys);
    free(s->vals);
    s->keys = keys;
    s->vals = vals;
    s->hcap = ncap;
    return 0;
}

static gcs_schedtrace_thread *lookup(const gcs_schedtrace_states *s, int32_t tid)
{
    if (tid <= 0 || s->hcap == 0)
        return NULL;
    for (size_t j = slot_of(tid, s->hcap);; j = (j + 1) & (s->hcap - 1)) {
        if (s->keys[j] == tid)
            return &s->threads[s->vals[j]];
        if (s->keys[j] == 0)
            return NULL;
    }
}

gcs_schedtrace_thread *gcs_schedtrace_states_find(gcs_schedtrace_states *s, int32_t tid)
{
    return lookup(s, tid);
}

gcs_schedtrace_states *gcs_schedtrace_states_new(gcs_err *err)
{
    gcs_schedtrace_states *s = calloc(1, sizeof *s);
    if (!s || hash_grow(s) < 0) {
        free(s);
        gcs_err_set(err, "out of memory");
        return NULL;
    }
    return s;
}

void gcs_schedtrace_states_free(gcs_schedtrace_states *s)
{
    if (!s)
        return;
    free(s->threads);
    free(s->changes);
    free(s->keys);
    free(s->vals);
    free(s);
}

static int record_change(gcs_schedtrace_states *s, uint64_t t, const gcs_schedtrace_thread *th,
                         gcs_schedtrace_tstate st)
{
    if (s->nchanges == s->ccap) {
        size_t ncap = s->ccap ? s->ccap * 2 : 4096;
        gcs_schedtrace_change *c = realloc(s->changes, ncap * sizeof *c);
        if (!c)
            return -1;
        s->changes = c;
        s->ccap = ncap;
    }
    s->changes[s->nchanges++] = (gcs_schedtrace_change){t, (uint32_t)(th - s->threads), (uint32_t)st};
    return 0;
}

static int set_state(gcs_schedtrace_states *s, gcs_schedtrace_thread *th, gcs_schedtrace_tstate st, uint64_t t)
{
    if (th->state == st)
        return 0;
    /* A thread added from /proc after the events were enabled may see
     * events stamped slightly before its start: they count from its start. */
    if (t < th->last_ns)
        t = th->last_ns;
    th->ns[th->state] += t - th->last_ns;
    th->last_ns = t;
    th->state = st;
    if (st == GCS_SCHEDTRACE_EXITED)
        th->end_ns = t;
    return record_change(s, t, th, st);
}

static gcs_schedtrace_thread *new_thread(gcs_schedtrace_states *s, int32_t tid, const char *name,
                                         gcs_schedtrace_tstate st, uint64_t start_ns, int32_t parent)
{
    if (tid <= 0)
        return NULL;
    if ((s->hcount + 1) * 2 > s->hcap && hash_grow(s) < 0)
        return NULL;
    if (s->nthreads == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        gcs_schedtrace_thread *t = realloc(s->threads, ncap * sizeof *t);
        if (!t)
            return NULL;
        s->threads = t;
        s->cap = ncap;
    }
    gcs_schedtrace_thread *th = &s->threads[s->nthreads];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    th->parent_tid = parent;
    snprintf(th->name, sizeof th->name, "%s", name ? name : "");
    th->start_ns = th->last_ns = start_ns;
    th->state = st;
    th->first = s->nthreads == 0;
    uint32_t idx = (uint32_t)s->nthreads++;

    size_t j = slot_of(tid, s->hcap);
    while (s->keys[j] != 0 && s->keys[j] != tid)
        j = (j + 1) & (s->hcap - 1);
    if (s->keys[j] == 0)
        s->hcount++;
    s->keys[j] = tid;
    s->vals[j] = idx;
    if (record_change(s, start_ns, th, st) < 0)
        return NULL;
    return th;
}

int gcs_schedtrace_states_add(gcs_schedtrace_states *s, int32_t tid, const char *name, gcs_schedtrace_tstate st,
                              uint64_t start_ns, gcs_err *err)
{
    if (tid <= 0 || st == GCS_SCHEDTRACE_EXITED || st >= GCS_SCHEDTRACE_TSTATE_COUNT) {
        gcs_err_set(err, "bad thread %d or state %d", (int)tid, (int)st);
        return -1;
    }
    gcs_schedtrace_thread *old = lookup(s, tid);
    if (old && old->state != GCS_SCHEDTRACE_EXITED)
        return 0; /* already followed (e.g. created by a followed thread meanwhile) */
    gcs_schedtrace_thread *th = new_thread(s, tid, name, st, start_ns, 0);
    if (!th) {
        gcs_err_set(err, "out of memory");
        return -1;
    }
    if (st == GCS_SCHEDTRACE_FUTEX)
        th->in_futex_wait = 1;
    return 0;
}

static gcs_schedtrace_thread *live(gcs_schedtrace_states *s, int32_t tid)
{
    gcs_schedtrace_thread *th = lookup(s, tid);
    return th && th->state != GCS_SCHEDTRACE_EXITED ? th : NULL;
}

int gcs_schedtrace_states_apply(gcs_schedtrace_states *s, const gcs_schedtrace_event *ev, gcs_err *err)
{
    gcs_schedtrace_thread *th;
    int rc = 0;
    switch (ev->kind) {
    case GCS_SCHEDTRACE_SWITCH:
        if ((th = live(s, ev->tid)) != NULL && ev->tid != ev->tid2) {
            gcs_schedtrace_tstate st = gcs_schedtrace_prev_runnable(ev->arg) ? GCS_SCHEDTRACE_RUNNABLE
                                       : th->in_futex_wait                   ? GCS_SCHEDTRACE_FUTEX
                                                                             : GCS_SCHEDTRACE_SLEEPING;
            if (st == GCS_SCHEDTRACE_FUTEX && th->state != GCS_SCHEDTRACE_FUTEX)
                th->futex_waits++;
            rc = set_state(s, th, st, ev->t_ns);
        }
        if (rc == 0 && (th = live(s, ev->tid2)) != NULL) {
            if (th->state != GCS_SCHEDTRACE_RUNNING)
                th->switches_in++;
            rc = set_state(s, th, GCS_SCHEDTRACE_RUNNING, ev->t_ns);
        }
        break;
    case GCS_SCHEDTRACE_WAKEUP:
        /* A wakeup that arrives before its target went to sleep (the target
         * is still on its CPU) changes nothing. */
        if ((th = live(s, ev->tid)) != NULL && th->state != GCS_SCHEDTRACE_RUNNING)
            rc = set_state(s, th, GCS_SCHEDTRACE_RUNNABLE, ev->t_ns);
        break;
    case GCS_SCHEDTRACE_FORK:
        /* A child already followed came from /proc (--pid attaches after
         * enabling the events, so its creation may be seen too). */
        if (live(s, ev->tid) && ev->tid2 > 0 && !live(s, ev->tid2)) {
            /* New tasks start runnable (sched_wakeup_new follows). */
            th = new_thread(s, ev->tid2, ev->comm, GCS_SCHEDTRACE_RUNNABLE, ev->t_ns, ev->tid);
            if (!th)
                rc = -1;
        }
        break;
    case GCS_SCHEDTRACE_EXIT:
        if ((th = live(s, ev->tid)) != NULL) {
            if (ev->comm[0])
                snprintf(th->name, sizeof th->name, "%.15s", ev->comm);
            th->in_futex_wait = 0;
            rc = set_state(s, th, GCS_SCHEDTRACE_EXITED, ev->t_ns);
        }
        break;
    case GCS_SCHEDTRACE_FUTEX_ENTER:
        if ((th = live(s, ev->tid)) != NULL && gcs_schedtrace_futex_op_waits(ev->arg))
            th->in_futex_wait = 1;
        break;
    case GCS_SCHEDTRACE_FUTEX_WAIT:
        if ((th = live(s, ev->tid)) != NULL)
            th->in_futex_wait = 1;
        break;
    case GCS_SCHEDTRACE_FUTEX_EXIT:
        if ((th = live(s, ev->tid)) != NULL)
            th->in_futex_wait = 0;
        break;
    case GCS_SCHEDTRACE_RENAME:
        if ((th = live(s, ev->tid)) != NULL && ev->comm[0])
            snprintf(th->name, sizeof th->name, "%.15s", ev->comm);
        break;
    default:
        break;
    }
    if (rc < 0) {
        gcs_err_set(err, "out of memory recording thread states");
        errno = ENOMEM;
    }
    return rc;
}

int gcs_schedtrace_states_rename(gcs_schedtrace_states *s, int32_t tid, const char *name)
{
    gcs_schedtrace_thread *th = lookup(s, tid);
    if (!th)
        return -1;
    snprintf(th->name, sizeof th->name, "%s", name);
    return 0;
}

void gcs_schedtrace_states_finish(gcs_schedtrace_states *s, uint64_t end_ns, const gcs_schedtrace_class *classes,
                                  size_t nclasses)
{
    for (size_t i = 0; i < s->nthreads; i++) {
        gcs_schedtrace_thread *th = &s->threads[i];
        if (th->state != GCS_SCHEDTRACE_EXITED) {
            uint64_t t = end_ns > th->last_ns ? end_ns : th->last_ns;
            th->ns[th->state] += t - th->last_ns;
            th->last_ns = t;
            th->end_ns = t;
        }
        const char *cls = th->first ? "main" : "worker";
        for (size_t k = 0; k < nclasses; k++) {
            if (fnmatch(classes[k].pattern, th->name, 0) == 0) {
                cls = classes[k].name;
                break;
            }
        }
        snprintf(th->cls, sizeof th->cls, "%s", cls);
    }
}

const gcs_schedtrace_thread *gcs_schedtrace_states_threads(const gcs_schedtrace_states *s, size_t *n)
{
    *n = s->nthreads;
    return s->threads;
}

const gcs_schedtrace_change *gcs_schedtrace_states_changes(const gcs_schedtrace_states *s, size_t *n)
{
    *n = s->nchanges;
    return s->changes;
}

const char *gcs_schedtrace_tstate_name(gcs_schedtrace_tstate st)
{
    static const char *const names[] = {"running", "runnable", "futex", "sleeping", "exited"};
    return st < GCS_SCHEDTRACE_TSTATE_COUNT ? names[st] : "?";
}

int gcs_schedtrace_class_parse(const char *text, gcs_schedtrace_class *c, gcs_err *err)
{
    const char *eq = strchr(text, '=');
    if (!eq) {
        gcs_err_set(err, "class '%s': expected NAME=PATTERN", text);
        return -1;
    }
    size_t nlen = (size_t)(eq - text);
    if (nlen == 0 || nlen >= sizeof c->name) {
        gcs_err_set(err, "class '%s': NAME must be 1 to %zu characters", text, sizeof c->name - 1);
        return -1;
    }
    for (size_t i = 0; i < nlen; i++) {
        char ch = text[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
              ch == '_')) {
            gcs_err_set(err, "class '%s': NAME may hold only letters, digits, '-' and '_'", text);
            return -1;
        }
    }
    const char *pat = eq + 1;
    if (!*pat || strlen(pat) >= sizeof c->pattern) {
        gcs_err_set(err, "class '%s': PATTERN must be 1 to %zu characters", text, sizeof c->pattern - 1);
        return -1;
    }
    memcpy(c->name, text, nlen);
    c->name[nlen] = '\0';
    snprintf(c->pattern, sizeof c->pattern, "%s", pat);
    return 0;
}
