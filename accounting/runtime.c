/* runtime.c -- stop-the-world pauses of managed runtimes traced from outside
 * (gcscale trace --runtime): found in the trace, or read from HotSpot's GC
 * log, and written into the trace as GC states (accounting.h).
 *
 * Why rewrite the trace rather than pass pauses to the stack: the sweep in
 * acct.c already measures a pause from GC states exactly as the collector
 * times it, for the built-in recorder's traces; giving a sched trace the same
 * states makes one definition serve both, and the bottle graph and the
 * per-thread state times see the same pauses. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "acct_internal.h"
#include "gcscale/accounting.h"

enum { ROLE_OTHER = 0, ROLE_APP, ROLE_GC, ROLE_VM }; /* classes: app, "gc", "vm" */

static int role_of(const char *cls, const char *app_class)
{
    if (strcmp(cls, app_class) == 0)
        return ROLE_APP;
    if (strcmp(cls, GCS_ACCT_GC_CLASS) == 0)
        return ROLE_GC;
    if (strcmp(cls, GCS_ACCT_VM_CLASS) == 0)
        return ROLE_VM;
    return ROLE_OTHER;
}

int gcs_acct_has_gc_states(const gcs_trace *t)
{
    for (size_t e = 0; e < t->nevents; e++)
        if ((GCS_ACCT_GC_STATES | GCS_ACCT_BIT(GCS_TRACE_GC_IDLE)) & GCS_ACCT_BIT(t->events[e].state))
            return 1;
    return 0;
}

int gcs_acct_has_gc_roles(const gcs_trace *t)
{
    for (size_t j = 0; j < t->nthreads; j++)
        if (role_of(t->threads[j].cls, "") >= ROLE_GC)
            return 1;
    return 0;
}

static int push(gcs_acct_pause **p, size_t *n, size_t *cap, uint64_t a, uint64_t b)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        gcs_acct_pause *q = realloc(*p, c * sizeof *q);
        if (!q)
            return -1;
        *p = q, *cap = c;
    }
    (*p)[(*n)++] = (gcs_acct_pause){a, b};
    return 0;
}

/* One sweep in time order.  A pause opens when a GC thread is busy (running
 * or preempted: a collector preempted by another program is still in its
 * pause) while every application thread waits on a lock, and closes at the
 * last moment a GC thread was busy before an application thread resumes
 * (runs, or sleeps otherwise), or, with no application thread alive, when
 * no GC thread is busy (nothing holds the pause together across a gap). */
int gcs_acct_find_pauses(const gcs_trace *t, const char *app_class, gcs_acct_pause **out, size_t *n, gcs_err *err)
{
    if (!app_class)
        app_class = GCS_ACCT_APP_CLASS;
    *out = NULL, *n = 0;
    size_t nch = 0, cap = 0;
    _gcs_acct_change *ch = _gcs_acct_changes(t, &nch);
    int *role = calloc(t->nthreads ? t->nthreads : 1, sizeof *role);
    int *st = malloc((t->nthreads ? t->nthreads : 1) * sizeof *st);
    if (!ch || !role || !st) {
        free(ch), free(role), free(st);
        gcs_err_set(err, "pauses: out of memory for %zu threads", t->nthreads);
        return -1;
    }
    int have_workers = 0;
    for (size_t j = 0; j < t->nthreads; j++) {
        role[j] = role_of(t->threads[j].cls, app_class);
        have_workers |= role[j] == ROLE_GC;
        st[j] = -1;
    }
    size_t vm_running = 0, gc_running = 0, app_alive = 0, app_held = 0, app_waiting = 0, gc_busy = 0; /* held: in a lock wait; waiting: for a CPU */
    int open = 0, prev_busy = 0, woken = 0, vm_ran = 0; /* vm_ran: while parked */
    uint64_t start = 0, last_busy = 0;
    for (size_t i = 0; i < nch; i++) {
        uint32_t j = ch[i].thread;
        int old = st[j], neu = ch[i].state;
        uint64_t now = ch[i].t;
        if (open && prev_busy)
            last_busy = now; /* a GC thread was busy up to now */
        if (role[j] == ROLE_GC) {
            gc_busy -= old == GCS_TRACE_RUNNING || old == GCS_TRACE_PREEMPTED;
            gc_busy += neu == GCS_TRACE_RUNNING || neu == GCS_TRACE_PREEMPTED;
            gc_running -= old == GCS_TRACE_RUNNING;
            gc_running += neu == GCS_TRACE_RUNNING;
        } else if (role[j] == ROLE_VM) {
            vm_running -= old == GCS_TRACE_RUNNING;
            vm_running += neu == GCS_TRACE_RUNNING;
        } else if (role[j] == ROLE_APP) {
            app_alive += old < 0;
            woken |= old == GCS_TRACE_BLOCKED_LOCK && neu != GCS_TRACE_BLOCKED_LOCK && neu != GCS_TRACE_EXITED;
            app_held -= old == GCS_TRACE_BLOCKED_LOCK;
            app_waiting -= old == GCS_TRACE_PREEMPTED;
            app_alive -= neu == GCS_TRACE_EXITED;
            app_held += neu == GCS_TRACE_BLOCKED_LOCK;
            app_waiting += neu == GCS_TRACE_PREEMPTED;
        }
        st[j] = neu;
        if (i + 1 < nch && ch[i + 1].t == now)
            continue; /* decide once every change of this instant is in */
        /* A GC worker opens a pause by running, or by waiting for a CPU
         * once the VM thread has run while every application thread is
         * parked on a lock (woken for a collection on a busy machine,
         * workers can wait many ms for a CPU, and the JVM times that wait
         * as pause; a worker still waiting from an earlier collection when
         * the application parks opens nothing before the VM thread runs).
         * Waiting for a CPU beside application threads that wait too, it
         * only holds a pause open.
         * The VM thread holds a pause open while it runs (it ends the
         * safepoint and, with SerialGC, collects), but opens one only where
         * no thread is a GC worker: it also runs safepoints and handshakes
         * that are no collection.  Preempted, it holds nothing. */
        int busy = gc_busy > 0 || vm_running > 0;
        int parked = app_alive > 0 && app_held == app_alive;
        vm_ran = parked && (vm_ran || vm_running > 0);
        int opener = have_workers ? gc_running > 0 || (gc_busy > 0 && vm_ran) : vm_running > 0;
        prev_busy = busy;
        /* A pause starts only while no application thread runs or sleeps
         * otherwise: each waits on a lock (a safepoint parks them on
         * futexes) or for a CPU (the thread that asked for the collection
         * is often preempted by the collector it woke, and is safe at that
         * point), or none is alive.  It ends when one runs or sleeps
         * otherwise, or is woken from its lock wait: the end of the
         * safepoint (on a busy machine the woken threads and the
         * collector's may all wait for CPUs a long while after it). */
        int stopped = app_held + app_waiting == app_alive;
        int resumed = app_held + app_waiting < app_alive || woken;
        woken = 0;
        if (open && (resumed || (!busy && !app_alive))) {
            if (last_busy > start && push(out, n, &cap, start, last_busy) < 0)
                goto oom;
            open = 0;
        }
        if (!open && opener && stopped) {
            open = 1;
            start = last_busy = now;
        }
    }
    if (open) {
        if (prev_busy)
            last_busy = t->end_ns;
        if (last_busy > start && push(out, n, &cap, start, last_busy) < 0)
            goto oom;
    }
    free(ch), free(role), free(st);
    return 0;
oom:
    free(ch), free(role), free(st);
    free(*out);
    *out = NULL, *n = 0;
    gcs_err_set(err, "pauses: out of memory");
    return -1;
}

/* The state a thread of role r shows at a moment inside (in = 1) or outside
 * a pause, given its state s in the trace. */
static int mapped(int r, int s, int in)
{
    if (!in || s == GCS_TRACE_EXITED)
        return s;
    if (r == ROLE_APP && s != GCS_TRACE_RUNNING)
        return GCS_TRACE_GC_STOPPED;
    if (r == ROLE_GC && s == GCS_TRACE_RUNNING)
        return GCS_TRACE_GC_MARK;
    return s;
}

int gcs_acct_apply_pauses(gcs_trace *t, const gcs_acct_pause *p, size_t n, const char *app_class, gcs_err *err)
{
    if (!app_class)
        app_class = GCS_ACCT_APP_CLASS;
    for (size_t k = 0; k < n; k++)
        if (p[k].end_ns < p[k].start_ns || (k && p[k].start_ns < p[k - 1].end_ns)) {
            gcs_err_set(err, "pauses: pause %zu (%" PRIu64 "..%" PRIu64 " ns) is not after the one before it or "
                        "ends before it starts", k, p[k].start_ns, p[k].end_ns);
            return -1;
        }
    /* Each thread's events, merged with the pause boundaries inside its
     * life: at most 2 n more per thread. */
    size_t cap = t->nevents + 1;
    for (size_t j = 0; j < t->nthreads; j++)
        if (role_of(t->threads[j].cls, app_class) != ROLE_OTHER)
            cap += 2 * n;
    gcs_trace_event *ev = malloc(cap * sizeof *ev);
    if (!ev) {
        gcs_err_set(err, "pauses: out of memory for %zu events", cap);
        return -1;
    }
    size_t m = 0;
    for (size_t j = 0; j < t->nthreads; j++) {
        gcs_trace_thread *th = &t->threads[j];
        /* a trace of threads without events has no events array at all */
        const gcs_trace_event *old = th->nevents ? &t->events[th->first_event] : NULL;
        size_t first = m, e = 0, k = 0;
        int r = role_of(th->cls, app_class);
        if (r == ROLE_OTHER) {
            if (th->nevents)
                memcpy(&ev[m], old, th->nevents * sizeof *ev);
            m += th->nevents;
            th->first_event = first;
            continue;
        }
        int s = GCS_TRACE_RUNNING, shown = GCS_TRACE_RUNNING;
        uint64_t now = th->start_ns, end = th->exit_ns;
        while (k < n && p[k].end_ns <= now)
            k++;
        /* Walk the thread's life through both lists: at each time, apply
         * every event and boundary at that time, then emit if the shown
         * state changed.  A pause is [start, end). */
        for (;;) {
            int in = k < n && p[k].start_ns <= now && now < p[k].end_ns;
            int want = mapped(r, s, in);
            if (want != shown) {
                ev[m++] = (gcs_trace_event){.t_ns = now, .state = (uint32_t)want, .thread = (uint32_t)j};
                shown = want;
            }
            if (s == GCS_TRACE_EXITED)
                break;
            uint64_t next_e = e < th->nevents ? old[e].t_ns : UINT64_MAX;
            uint64_t next_p = k < n ? (in ? p[k].end_ns : p[k].start_ns) : UINT64_MAX;
            uint64_t next = next_e < next_p ? next_e : next_p;
            if (next == UINT64_MAX || next > end)
                break;
            now = next;
            while (e < th->nevents && old[e].t_ns == now)
                s = (int)old[e++].state;
            while (k < n && p[k].end_ns <= now)
                k++;
        }
        gcs_assert_internal(m - first <= th->nevents + 2 * n);
        th->first_event = first;
        th->nevents = m - first;
    }
    free(t->events);
    t->events = ev;
    t->nevents = m;
    return 0;
}

/* The first number of a "[...ns]" decorator group in [lo, hi], scanning the
 * decorators at the line's start. */
static int line_stamp(const char *line, uint64_t lo, uint64_t hi, uint64_t *stamp)
{
    const char *q = line;
    while (*q == '[') {
        char *endp;
        errno = 0;
        unsigned long long v = strtoull(q + 1, &endp, 10);
        const char *close = strchr(q, ']');
        if (!close)
            return 0;
        if (endp != q + 1 && errno == 0 && strncmp(endp, "ns]", 3) == 0 && v >= lo && v <= hi) {
            *stamp = v;
            return 1;
        }
        q = close + 1;
    }
    return 0;
}

/* A pause of the log and the line that ended it, for messages after the sort. */
typedef struct log_pause {
    gcs_acct_pause p;
    size_t line;
} log_pause;

static int log_pause_cmp(const void *a, const void *b)
{
    const log_pause *x = a, *y = b;
    if (x->p.start_ns != y->p.start_ns)
        return x->p.start_ns < y->p.start_ns ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* The log prints a pause in ms with three decimals and stamps the line
 * after the pause: neighbours computed back from their stamps may touch by
 * up to the rounding, never by more in a log one JVM wrote. */
#define LOG_PAUSE_ROUNDING_NS 1000u
/* A longer "pause" is no duration of a collection (and its ns would not fit
 * the sums): about 11.6 days. */
#define LOG_PAUSE_MAX_MS 1e9

int _gcs_acct_hotspot_log_read(FILE *fp, const char *name, uint64_t lo_ns, uint64_t hi_ns, gcs_acct_pause **out,
                               size_t *n, gcs_err *err)
{
    *out = NULL, *n = 0;
    log_pause *lp = NULL;
    size_t np = 0, cap = 0, lineno = 0, unstamped = 0;
    char line[4096];
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        /* "... GC(12) Pause Young (Allocation Failure) 24M->11M(50M) 0.777ms" */
        const char *gcid = strstr(line, "] GC(");
        const char *pz = gcid ? strstr(gcid, ") Pause ") : NULL;
        size_t len = strcspn(line, "\r\n");
        if (!pz || len < 3 || strncmp(line + len - 2, "ms", 2) != 0)
            continue;
        const char *num = line + len - 2;
        while (num > pz && (num[-1] == '.' || (num[-1] >= '0' && num[-1] <= '9')))
            num--;
        double ms = strtod(num, NULL);
        if (num == line + len - 2 || num[-1] != ' ' || !(ms >= 0)) {
            gcs_err_set(err, "%s:%zu: a pause line without its duration in ms", name, lineno);
            goto fail;
        }
        if (!(ms <= LOG_PAUSE_MAX_MS)) {
            gcs_err_set(err, "%s:%zu: a pause of %.6g ms is not the length of a collection", name, lineno, ms);
            goto fail;
        }
        uint64_t stamp;
        if (!line_stamp(line, lo_ns, hi_ns, &stamp)) {
            unstamped++;
            continue;
        }
        if (np == cap) {
            size_t c = cap ? 2 * cap : 64;
            log_pause *q = realloc(lp, c * sizeof *q);
            if (!q) {
                gcs_err_set(err, "%s: out of memory", name);
                goto fail;
            }
            lp = q, cap = c;
        }
        uint64_t d = (uint64_t)(ms * 1e6 + 0.5);
        lp[np++] = (log_pause){{stamp > d ? stamp - d : 0, stamp}, lineno};
    }
    if (ferror(fp)) {
        gcs_err_set(err, "%s: read error", name);
        goto fail;
    }
    if (unstamped && !np) {
        gcs_err_set(err, "%s: %zu pause lines, none with a time stamp within the trace: log with the decorator "
                    "tn (CLOCK_MONOTONIC nanoseconds), e.g. -Xlog:gc:file=%s:tn, from the traced run", name,
                    unstamped, name);
        goto fail;
    }
    if (np) {
        qsort(lp, np, sizeof *lp, log_pause_cmp);
        *out = malloc(np * sizeof **out);
        if (!*out) {
            gcs_err_set(err, "%s: out of memory", name);
            goto fail;
        }
    }
    for (size_t k = 0; k < np; k++) {
        gcs_acct_pause p = lp[k].p;
        if (k && p.start_ns < (*out)[k - 1].end_ns) {
            uint64_t prev_end = (*out)[k - 1].end_ns;
            if (prev_end - p.start_ns > LOG_PAUSE_ROUNDING_NS || p.end_ns < prev_end) {
                gcs_err_set(err, "%s:%zu: this pause (%.3f ms ending at %" PRIu64 " ns) overlaps the one of line %zu "
                            "(ending at %" PRIu64 " ns): not the log of one JVM run", name, lp[k].line,
                            (double)(p.end_ns - p.start_ns) / 1e6, p.end_ns, lp[k - 1].line, prev_end);
                goto fail;
            }
            p.start_ns = prev_end;
        }
        gcs_assert_internal(p.start_ns <= p.end_ns);
        (*out)[k] = p;
    }
    *n = np;
    free(lp);
    return 0;
fail:
    free(lp);
    free(*out);
    *out = NULL, *n = 0;
    return -1;
}

int gcs_acct_hotspot_log_pauses(const char *path, uint64_t lo_ns, uint64_t hi_ns, gcs_acct_pause **out, size_t *n,
                                gcs_err *err)
{
    *out = NULL, *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        gcs_err_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = _gcs_acct_hotspot_log_read(fp, path, lo_ns, hi_ns, out, n, err);
    fclose(fp);
    return rc;
}
