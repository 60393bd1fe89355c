/* trace_file.c -- the trace file format: state names, streaming writer,
 * strict reader.  The format is described in docs/trace-format.md; in short:
 *
 *     gcscale-trace 1
 *     source builtin
 *     command gcscale run bh --mutators 2
 *     clock monotonic
 *     thread 4242 1000 mutator mutator-0
 *     e 1500 4242 gc-stopped
 *     end 9000
 *
 * It is line-oriented text so that the sched tracer can stream hundreds of
 * thousands of events through it and a person can read and hand-write it.
 * The writer checks everything the reader checks, so that no source can
 * write a file that gcscale would refuse later. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/trace.h"

static const char *const state_names[GCS_TRACE_STATE_COUNT] = {
    [GCS_TRACE_RUNNING] = "running",
    [GCS_TRACE_GC_STOPPED] = "gc-stopped",
    [GCS_TRACE_GC_MARK] = "gc-mark",
    [GCS_TRACE_GC_SEARCH] = "gc-search",
    [GCS_TRACE_GC_IDLE] = "gc-idle",
    [GCS_TRACE_GC_SWEEP] = "gc-sweep",
    [GCS_TRACE_BLOCKED_LOCK] = "blocked-lock",
    [GCS_TRACE_BLOCKED_BARRIER] = "blocked-barrier",
    [GCS_TRACE_BLOCKED_OTHER] = "blocked-other",
    [GCS_TRACE_PREEMPTED] = "preempted",
    [GCS_TRACE_EXITED] = "exited",
};

const char *gcs_trace_state_name(gcs_trace_state s)
{
    if ((int)s < 0 || s >= GCS_TRACE_STATE_COUNT)
        return "?";
    return state_names[s];
}

int gcs_trace_state_parse(const char *name)
{
    for (int i = 0; i < GCS_TRACE_STATE_COUNT; i++)
        if (strcmp(name, state_names[i]) == 0)
            return i;
    return -1;
}

/* ---- tid table ----------------------------------------------------------------
 * Open addressing from tid to a thread slot; both the writer (validation) and
 * the reader (tid -> thread index) need one.  Grows at half full. */
typedef struct tid_slot {
    int64_t tid;
    uint32_t used;
    uint32_t index;     /* thread index */
} tid_slot;

typedef struct tid_table {
    tid_slot *slots;
    size_t cap, n;
} tid_table;

static size_t tid_hash(int64_t tid, size_t cap)
{
    uint64_t x = (uint64_t)tid * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

static tid_slot *tid_find(const tid_table *t, int64_t tid)
{
    if (!t->cap)
        return NULL;
    for (size_t i = tid_hash(tid, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (!t->slots[i].used)
            return NULL;
        if (t->slots[i].tid == tid)
            return &t->slots[i];
    }
}

/* Inserts tid (which must be absent); returns -1 when out of memory. */
static int tid_insert(tid_table *t, int64_t tid, uint32_t index)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 64;
        tid_slot *ns = calloc(ncap, sizeof *ns);
        if (!ns)
            return -1;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i].used)
                continue;
            size_t j = tid_hash(t->slots[i].tid, ncap);
            while (ns[j].used)
                j = (j + 1) & (ncap - 1);
            ns[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = ns;
        t->cap = ncap;
    }
    size_t j = tid_hash(tid, t->cap);
    while (t->slots[j].used)
        j = (j + 1) & (t->cap - 1);
    t->slots[j] = (tid_slot){.tid = tid, .used = 1, .index = index};
    t->n++;
    return 0;
}

static int class_ok(const char *cls)
{
    if (!cls || !*cls || strlen(cls) > 64)
        return 0;
    for (const char *p = cls; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '-'))
            return 0;
    return 1;
}

/* Writes text with \\, \n, \r, \t and \xHH escapes so that it stays on one line. */
static void put_escaped(FILE *fp, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", fp);
        else if (*p == '\n')
            fputs("\\n", fp);
        else if (*p == '\r')
            fputs("\\r", fp);
        else if (*p == '\t')
            fputs("\\t", fp);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(fp, "\\x%02x", *p);
        else
            fputc(*p, fp);
    }
}

/* ---- writer ------------------------------------------------------------------- */
typedef struct writer_thread {
    uint64_t last_t;
    int exited;
} writer_thread;

struct gcs_trace_writer {
    gcs_outfile out;
    tid_table tids;
    writer_thread *threads;
    size_t nthreads, cap;
    uint64_t max_t;
    int failed;
    gcs_err err;
};

static int writer_fail(gcs_trace_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int writer_fail(gcs_trace_writer *w, const char *fmt, ...)
{
    if (!w->failed) {
        char msg[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        gcs_err_set(&w->err, "%s: %s", w->out.path, msg);
        w->failed = 1;
    }
    return -1;
}

gcs_trace_writer *gcs_trace_writer_open(const char *path, const char *source, const char *command,
                                        gcs_err *err)
{
    if (!class_ok(source)) {
        gcs_err_set(err, "%s: trace source must be one word, got \"%s\"", path, source ? source : "");
        return NULL;
    }
    gcs_trace_writer *w = calloc(1, sizeof *w);
    if (!w) {
        gcs_err_set(err, "%s: out of memory", path);
        return NULL;
    }
    if (gcs_outfile_open(&w->out, path, err) != 0) {
        free(w);
        return NULL;
    }
    fprintf(w->out.fp, "gcscale-trace %d\nsource %s\n", GCS_TRACE_FORMAT_VERSION, source);
    if (command) {
        fputs("command ", w->out.fp);
        put_escaped(w->out.fp, command);
        fputc('\n', w->out.fp);
    }
    fputs("clock monotonic\n", w->out.fp);
    return w;
}

int gcs_trace_writer_thread(gcs_trace_writer *w, int64_t tid, const char *name, const char *cls,
                            uint64_t start_ns)
{
    if (w->failed)
        return -1;
    if (!name || !*name)
        return writer_fail(w, "thread %" PRId64 " has no name", tid);
    if (!class_ok(cls))
        return writer_fail(w, "thread %" PRId64 ": class must be one word of [A-Za-z0-9_.-], got \"%s\"",
                           tid, cls ? cls : "");
    if (tid_find(&w->tids, tid))
        return writer_fail(w, "thread %" PRId64 " declared twice", tid);
    if (w->nthreads == w->cap) {
        size_t ncap = w->cap ? 2 * w->cap : 64;
        writer_thread *nt = realloc(w->threads, ncap * sizeof *nt);
        if (!nt)
            return writer_fail(w, "out of memory");
        w->threads = nt;
        w->cap = ncap;
    }
    if (tid_insert(&w->tids, tid, (uint32_t)w->nthreads) != 0)
        return writer_fail(w, "out of memory");
    w->threads[w->nthreads++] = (writer_thread){.last_t = start_ns, .exited = 0};
    if (start_ns > w->max_t)
        w->max_t = start_ns;
    fprintf(w->out.fp, "thread %" PRId64 " %" PRIu64 " %s ", tid, start_ns, cls);
    put_escaped(w->out.fp, name);
    fputc('\n', w->out.fp);
    return 0;
}

/* Decimal digits of v, written backwards from end; returns the first. */
static char *put_u64_back(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

/* "e T TID STATE\n" as one fwrite: the sched tracer writes every event of a
 * run through here after the program has ended, so the line is built by
 * hand (printf's format parsing was a fifth of the tracer's work after the
 * run, docs/schedtrace.md "Overhead"). */
static void put_event_line(FILE *fp, uint64_t t_ns, int64_t tid, gcs_trace_state s)
{
    char line[80];
    char *end = line + sizeof line;
    const char *name = state_names[s];
    size_t nlen = strlen(name);
    *--end = '\n';
    end -= nlen;
    memcpy(end, name, nlen);
    *--end = ' ';
    end = put_u64_back(end, tid < 0 ? -(uint64_t)tid : (uint64_t)tid);
    if (tid < 0)
        *--end = '-';
    *--end = ' ';
    end = put_u64_back(end, t_ns);
    *--end = ' ';
    *--end = 'e';
    fwrite(end, 1, (size_t)(line + sizeof line - end), fp);
}

int gcs_trace_writer_event(gcs_trace_writer *w, uint64_t t_ns, int64_t tid, gcs_trace_state s)
{
    if (w->failed)
        return -1;
    if ((int)s < 0 || s >= GCS_TRACE_STATE_COUNT)
        return writer_fail(w, "thread %" PRId64 ": invalid state %d", tid, (int)s);
    tid_slot *slot = tid_find(&w->tids, tid);
    if (!slot)
        return writer_fail(w, "event for thread %" PRId64 ", which was not declared", tid);
    writer_thread *th = &w->threads[slot->index];
    if (th->exited)
        return writer_fail(w, "event for thread %" PRId64 " after it exited", tid);
    if (t_ns < th->last_t)
        return writer_fail(w, "thread %" PRId64 ": event at %" PRIu64 " ns is before its previous event "
                              "or start (%" PRIu64 " ns)", tid, t_ns, th->last_t);
    th->last_t = t_ns;
    th->exited = s == GCS_TRACE_EXITED;
    if (t_ns > w->max_t)
        w->max_t = t_ns;
    put_event_line(w->out.fp, t_ns, tid, s);
    return 0;
}

static void writer_free(gcs_trace_writer *w)
{
    free(w->tids.slots);
    free(w->threads);
    free(w);
}

int gcs_trace_writer_close(gcs_trace_writer *w, uint64_t end_ns, gcs_err *err)
{
    if (!w->failed && end_ns < w->max_t)
        writer_fail(w, "end time %" PRIu64 " ns is before the last event (%" PRIu64 " ns)", end_ns, w->max_t);
    if (w->failed) {
        *err = w->err;
        gcs_outfile_abort(&w->out);
        writer_free(w);
        return -1;
    }
    fprintf(w->out.fp, "end %" PRIu64 "\n", end_ns);
    int rc = gcs_outfile_commit(&w->out, err);
    writer_free(w);
    return rc;
}

void gcs_trace_writer_abort(gcs_trace_writer *w)
{
    if (!w)
        return;
    gcs_outfile_abort(&w->out);
    writer_free(w);
}

/* ---- reader ------------------------------------------------------------------- */
typedef struct reader {
    const char *name;
    long line;
    gcs_err *err;
    gcs_trace *t;
    tid_table tids;
    uint64_t *last_t;        /* per thread: time of the last event (or start) */
    size_t thread_cap, event_cap;
} reader;

static int rd_fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rd_fail(reader *r, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->line > 0)
        gcs_err_set(r->err, "%s:%ld: %s", r->name, r->line, msg);
    else
        gcs_err_set(r->err, "%s: %s", r->name, msg);
    return -1;
}

/* Splits off the next space-separated word of *p (NULL at end of line). */
static char *next_word(char **p)
{
    char *s = *p;
    if (!*s)
        return NULL;
    char *sp = strchr(s, ' ');
    if (sp) {
        *sp = 0;
        *p = sp + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}

static int parse_u64(reader *r, const char *word, const char *what, uint64_t *v)
{
    if (!word || !*word)
        return rd_fail(r, "missing %s", what);
    if (word[0] < '0' || word[0] > '9')
        return rd_fail(r, "%s \"%s\" is not a non-negative integer", what, word);
    char *end;
    errno = 0;
    unsigned long long x = strtoull(word, &end, 10);
    if (*end || errno)
        return rd_fail(r, "%s \"%s\" is not a non-negative integer", what, word);
    *v = x;
    return 0;
}

static int parse_tid(reader *r, const char *word, int64_t *v)
{
    if (!word || !*word)
        return rd_fail(r, "missing thread id");
    char *end;
    errno = 0;
    long long x = strtoll(word, &end, 10);
    if (*end || errno || !((word[0] >= '0' && word[0] <= '9') || word[0] == '-'))
        return rd_fail(r, "thread id \"%s\" is not an integer", word);
    *v = x;
    return 0;
}

/* Undoes put_escaped into a new string. */
static char *unescape(reader *r, const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    if (!out) {
        rd_fail(r, "out of memory");
        return NULL;
    }
    for (const char *p = s; *p; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        p++;
        if (*p == '\\')
            *o++ = '\\';
        else if (*p == 'n')
            *o++ = '\n';
        else if (*p == 'r')
            *o++ = '\r';
        else if (*p == 't')
            *o++ = '\t';
        else if (*p == 'x' && p[1] && p[2] && strchr("0123456789abcdefABCDEF", p[1]) &&
                 strchr("0123456789abcdefABCDEF", p[2])) {
            char hex[3] = {p[1], p[2], 0};
            unsigned v = (unsigned)strtoul(hex, NULL, 16);
            if (v == 0) {
                free(out);
                rd_fail(r, "escaped NUL character in text");
                return NULL;
            }
            *o++ = (char)v;
            p += 2;
        } else {
            free(out);
            rd_fail(r, "bad escape sequence in text");
            return NULL;
        }
    }
    *o = 0;
    return out;
}

static int rd_thread(reader *r, char *rest)
{
    int64_t tid;
    uint64_t start;
    if (parse_tid(r, next_word(&rest), &tid) != 0 || parse_u64(r, next_word(&rest), "start time", &start) != 0)
        return -1;
    char *cls = next_word(&rest);
    if (!cls)
        return rd_fail(r, "thread line has no class (expected: thread TID START_NS CLASS NAME)");
    if (!class_ok(cls))
        return rd_fail(r, "thread class \"%s\" must be one word of [A-Za-z0-9_.-]", cls);
    if (!*rest)
        return rd_fail(r, "thread line has no name (expected: thread TID START_NS CLASS NAME)");
    if (tid_find(&r->tids, tid))
        return rd_fail(r, "thread %" PRId64 " declared twice", tid);
    gcs_trace *t = r->t;
    if (t->nthreads == r->thread_cap) {
        size_t ncap = r->thread_cap ? 2 * r->thread_cap : 16;
        gcs_trace_thread *nt = realloc(t->threads, ncap * sizeof *nt);
        if (!nt)
            return rd_fail(r, "out of memory");
        t->threads = nt;
        uint64_t *nl = realloc(r->last_t, ncap * sizeof *nl);
        if (!nl)
            return rd_fail(r, "out of memory");
        r->last_t = nl;
        r->thread_cap = ncap;
    }
    gcs_trace_thread *th = &t->threads[t->nthreads];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    th->start_ns = start;
    th->cls = strdup(cls);
    th->name = unescape(r, rest);
    t->nthreads++;              /* counted now so that gcs_trace_free frees the strings */
    if (!th->cls || !th->name)
        return th->name ? rd_fail(r, "out of memory") : -1;
    r->last_t[t->nthreads - 1] = start;
    if (tid_insert(&r->tids, tid, (uint32_t)(t->nthreads - 1)) != 0)
        return rd_fail(r, "out of memory");
    return 0;
}

static int rd_event(reader *r, char *rest)
{
    uint64_t when;
    int64_t tid;
    if (parse_u64(r, next_word(&rest), "event time", &when) != 0 || parse_tid(r, next_word(&rest), &tid) != 0)
        return -1;
    char *sname = next_word(&rest);
    if (!sname)
        return rd_fail(r, "event has no state (expected: e T_NS TID STATE)");
    if (*rest)
        return rd_fail(r, "unexpected text after the event's state: \"%s\"", rest);
    int s = gcs_trace_state_parse(sname);
    if (s < 0 || (s == GCS_TRACE_PREEMPTED && r->t->version < 2))
        return rd_fail(r, "unknown state \"%s\"%s", sname,
                       s < 0 ? "" : " (\"preempted\" is a state of format version 2)");
    tid_slot *slot = tid_find(&r->tids, tid);
    if (!slot)
        return rd_fail(r, "event for thread %" PRId64 ", which was not declared by a thread line", tid);
    gcs_trace *t = r->t;
    gcs_trace_thread *th = &t->threads[slot->index];
    if (th->exited)
        return rd_fail(r, "event for thread %" PRId64 " after it exited", tid);
    if (when < r->last_t[slot->index])
        return rd_fail(r, "thread %" PRId64 ": event at %" PRIu64 " ns is before its previous event or "
                          "start (%" PRIu64 " ns)", tid, when, r->last_t[slot->index]);
    r->last_t[slot->index] = when;
    if (t->nevents == r->event_cap) {
        size_t ncap = r->event_cap ? 2 * r->event_cap : 1024;
        gcs_trace_event *ne = realloc(t->events, ncap * sizeof *ne);
        if (!ne)
            return rd_fail(r, "out of memory");
        t->events = ne;
        r->event_cap = ncap;
    }
    t->events[t->nevents++] = (gcs_trace_event){.t_ns = when, .state = (uint32_t)s, .thread = slot->index};
    th->nevents++;
    if (s == GCS_TRACE_EXITED) {
        th->exited = 1;
        th->exit_ns = when;
    }
    return 0;
}

/* Events were appended in file order; group them by thread (stable, so each
 * thread's events stay in time order). */
static int group_events(reader *r)
{
    gcs_trace *t = r->t;
    if (!t->nevents)
        return 0;
    gcs_trace_event *sorted = malloc(t->nevents * sizeof *sorted);
    if (!sorted)
        return rd_fail(r, "out of memory");
    size_t pos = 0;
    for (size_t i = 0; i < t->nthreads; i++) {
        t->threads[i].first_event = pos;
        pos += t->threads[i].nevents;
        t->threads[i].nevents = 0;
    }
    for (size_t k = 0; k < t->nevents; k++) {
        gcs_trace_thread *th = &t->threads[t->events[k].thread];
        sorted[th->first_event + th->nevents++] = t->events[k];
    }
    free(t->events);
    t->events = sorted;
    return 0;
}

gcs_trace *gcs_trace_read_stream(FILE *fp, const char *name, gcs_err *err)
{
    reader r = {.name = name, .err = err};
    gcs_trace *t = calloc(1, sizeof *t);
    if (!t) {
        gcs_err_set(err, "%s: out of memory", name);
        return NULL;
    }
    r.t = t;
    char *line = NULL;
    size_t linecap = 0;
    ssize_t len;
    int stage = 0;           /* 0: want magic, 1: header, 2: body, 3: after end */
    int ok = 0;
    while ((len = getline(&line, &linecap, fp)) >= 0) {
        r.line++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = 0;
        if (len > 0 && line[len - 1] == '\r')
            line[--len] = 0;
        if ((size_t)len != strlen(line)) {
            rd_fail(&r, "NUL byte in line");
            goto out;
        }
        if (stage == 0) {
            int v;
            char extra;
            if (sscanf(line, "gcscale-trace %d%c", &v, &extra) != 1) {
                rd_fail(&r, "not a gcscale trace (the first line must be \"gcscale-trace %d\")",
                        GCS_TRACE_FORMAT_VERSION);
                goto out;
            }
            if (v < GCS_TRACE_FORMAT_VERSION_MIN || v > GCS_TRACE_FORMAT_VERSION) {
                rd_fail(&r, "trace format version %d is not supported (this gcscale reads versions %d to %d)", v,
                        GCS_TRACE_FORMAT_VERSION_MIN, GCS_TRACE_FORMAT_VERSION);
                goto out;
            }
            t->version = v;
            stage = 1;
            continue;
        }
        if (len == 0 || line[0] == '#')
            continue;
        if (stage == 3) {
            rd_fail(&r, "text after the end line");
            goto out;
        }
        char *rest = line;
        char *kw = next_word(&rest);
        if (strcmp(kw, "e") == 0 || strcmp(kw, "thread") == 0 || strcmp(kw, "end") == 0) {
            if (stage == 1) {
                if (!t->source || !t->clock) {
                    rd_fail(&r, "header incomplete: \"source\" and \"clock\" lines must come before \"%s\"", kw);
                    goto out;
                }
                stage = 2;
            }
            if (kw[0] == 'e' && kw[1] == 0) {
                if (rd_event(&r, rest) != 0)
                    goto out;
            } else if (kw[0] == 't') {
                if (rd_thread(&r, rest) != 0)
                    goto out;
            } else {
                uint64_t end;
                if (parse_u64(&r, next_word(&rest), "end time", &end) != 0)
                    goto out;
                if (*rest) {
                    rd_fail(&r, "unexpected text after the end time");
                    goto out;
                }
                for (size_t i = 0; i < t->nthreads; i++)
                    if (r.last_t[i] > end) {
                        rd_fail(&r, "end time %" PRIu64 " ns is before an event or start of thread %" PRId64,
                                end, t->threads[i].tid);
                        goto out;
                    }
                t->end_ns = end;
                stage = 3;
            }
            continue;
        }
        if (stage != 1) {
            rd_fail(&r, "unknown line \"%s\" (expected thread, e or end)", kw);
            goto out;
        }
        char **field = strcmp(kw, "source") == 0    ? &t->source
                       : strcmp(kw, "command") == 0 ? &t->command
                       : strcmp(kw, "clock") == 0   ? &t->clock
                                                    : NULL;
        if (!field) {
            rd_fail(&r, "unknown header line \"%s\" (expected source, command or clock)", kw);
            goto out;
        }
        if (*field) {
            rd_fail(&r, "\"%s\" given twice", kw);
            goto out;
        }
        if (field != &t->command && !class_ok(rest)) {
            rd_fail(&r, "%s must be one word, got \"%s\"", kw, rest);
            goto out;
        }
        if (field == &t->clock && strcmp(rest, "monotonic") != 0) {
            rd_fail(&r, "clock \"%s\" is not supported (expected monotonic)", rest);
            goto out;
        }
        if (!(*field = unescape(&r, rest)))
            goto out;
    }
    if (ferror(fp)) {
        r.line = 0;
        rd_fail(&r, "read error: %s", strerror(errno));
        goto out;
    }
    if (stage == 0) {
        r.line = 0;
        rd_fail(&r, "empty file, not a gcscale trace");
        goto out;
    }
    if (stage != 3) {
        rd_fail(&r, "trace is truncated: no \"end\" line");
        goto out;
    }
    if (group_events(&r) != 0)
        goto out;
    t->start_ns = t->end_ns;
    for (size_t i = 0; i < t->nthreads; i++) {
        if (t->threads[i].start_ns < t->start_ns)
            t->start_ns = t->threads[i].start_ns;
        if (!t->threads[i].exited)
            t->threads[i].exit_ns = t->end_ns;
    }
    ok = 1;
out:
    free(line);
    free(r.tids.slots);
    free(r.last_t);
    if (!ok) {
        gcs_trace_free(t);
        return NULL;
    }
    return t;
}

gcs_trace *gcs_trace_read(const char *path, gcs_err *err)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        gcs_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    gcs_trace *t = gcs_trace_read_stream(fp, path, err);
    fclose(fp);
    return t;
}

void gcs_trace_free(gcs_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nthreads; i++) {
        free(t->threads[i].name);
        free(t->threads[i].cls);
    }
    free(t->threads);
    free(t->events);
    free(t->source);
    free(t->command);
    free(t->clock);
    free(t);
}
