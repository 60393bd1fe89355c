/* recorder.c -- the built-in thread-state recorder.
 *
 * Each thread appends (time, state) pairs to its own buffer, a list of
 * fixed-size chunks, through a thread-local pointer: no lock, no syscall and
 * no shared cache line per event, only gcs_now_ns() (clock_gettime through
 * the vDSO).  A thread takes the recorder's lock once per recording, to put
 * its buffer on the global list.
 *
 * Recordings are numbered (g_gen, 0 while none is active), so a thread-local
 * buffer pointer left over from an earlier recording is recognised as stale
 * and never touched.  Stopping must not free a buffer under a thread that is
 * appending to it: each append raises the buffer's "writing" flag and then
 * re-reads g_gen, and stop clears g_gen and then waits for every flag to
 * drop.  Both sides use sequentially consistent operations, so at least one
 * of them sees the other (the Dekker pattern); the cost is one locked
 * exchange per state change, which happens per steal or per phase, never per
 * object.  A thread may raise its flag once more after stop has looked, see
 * that the recording is over and touch nothing else, so the buffer headers
 * outlive their recording (free_bufs).
 *
 * While no recording is active every entry point is one relaxed load. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gcscale/trace.h"

#define CHUNK_EVENTS 4096

typedef struct rec_event {
    uint64_t t_ns;
    uint8_t state;
} rec_event;                   /* 16 bytes with padding */

typedef struct rec_chunk {
    struct rec_chunk *next;
    size_t n;
    rec_event ev[CHUNK_EVENTS];
} rec_chunk;

typedef struct rec_buf {
    struct rec_buf *next;      /* global list, under g_lock */
    atomic_int writing;
    int64_t tid;
    char name[64];
    char cls[32];
    uint64_t start_ns;
    rec_chunk *head, *tail;
    uint64_t dropped;          /* events lost to a failed allocation */
    int last_state;            /* -1 before the first event */
    int exited;
} rec_buf;

static atomic_uint_fast64_t g_gen;     /* current recording, 0 = none */
static uint64_t g_next_gen = 1;        /* under g_lock */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static rec_buf *g_bufs;                /* under g_lock */
static char *g_path;                   /* under g_lock */
static char *g_command;                /* under g_lock */

/* Per thread: its buffer in recording tl_gen, and the name and class of its
 * last thread_begin (kept across recordings). */
static __thread rec_buf *tl_buf;
static __thread uint64_t tl_gen;
static __thread char tl_name[64];
static __thread char tl_cls[32];
static __thread int tl_state;          /* its last state in recording tl_gen */

int gcs_trace_recording(void)
{
    return atomic_load_explicit(&g_gen, memory_order_relaxed) != 0;
}

static void copy_text(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

/* Gives the calling thread a buffer in recording gen; returns it, or NULL if
 * that recording has stopped meanwhile or memory ran out. */
static rec_buf *register_thread(uint64_t gen, uint64_t now)
{
    rec_buf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->tid = (int64_t)syscall(SYS_gettid);
    if (tl_name[0])
        copy_text(b->name, sizeof b->name, tl_name);
    else
        snprintf(b->name, sizeof b->name, "thread-%lld", (long long)b->tid);
    copy_text(b->cls, sizeof b->cls, tl_cls[0] ? tl_cls : "other");
    b->start_ns = now;
    b->last_state = GCS_TRACE_RUNNING; /* a thread starts running (docs/trace-format.md) */
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_gen) != gen) {
        pthread_mutex_unlock(&g_lock);
        free(b);
        return NULL;
    }
    b->next = g_bufs;
    g_bufs = b;
    pthread_mutex_unlock(&g_lock);
    tl_buf = b;
    tl_gen = gen;
    tl_state = GCS_TRACE_RUNNING;
    return b;
}

/* Appends one event; the owner thread only. */
static void append(rec_buf *b, uint64_t t, int state)
{
    rec_chunk *c = b->tail;
    if (!c || c->n == CHUNK_EVENTS) {
        rec_chunk *nc = malloc(sizeof *nc);
        if (!nc) {
            b->dropped++;
            return;
        }
        nc->next = NULL;
        nc->n = 0;
        if (c)
            c->next = nc;
        else
            b->head = nc;
        b->tail = c = nc;
    }
    c->ev[c->n++] = (rec_event){.t_ns = t, .state = (uint8_t)state};
}

static void record(int state, int begin, const char *name, const char *cls)
{
    uint64_t gen = atomic_load_explicit(&g_gen, memory_order_relaxed);
    if (!gen)
        return;
    rec_buf *b = tl_buf;
    if (tl_gen != gen) {
        if (!(b = register_thread(gen, gcs_now_ns())))
            return;
    }
    atomic_exchange(&b->writing, 1);
    if (atomic_load(&g_gen) == gen && !b->exited) {
        if (begin) {
            copy_text(b->name, sizeof b->name, name);
            copy_text(b->cls, sizeof b->cls, cls);
        } else if (state != b->last_state) {
            append(b, gcs_now_ns(), state);
            b->last_state = state;
            tl_state = state;
            b->exited = state == GCS_TRACE_EXITED;
        }
    }
    atomic_store_explicit(&b->writing, 0, memory_order_release);
}

void gcs_trace_thread_begin(const char *name, const char *cls)
{
    /* Remembered even while not recording, for a recording started later. */
    copy_text(tl_name, sizeof tl_name, name);
    copy_text(tl_cls, sizeof tl_cls, cls);
    if (atomic_load_explicit(&g_gen, memory_order_relaxed))
        record(0, 1, name, cls);
}

void gcs_trace_set_state(gcs_trace_state s)
{
    if (!atomic_load_explicit(&g_gen, memory_order_relaxed))
        return;
    if ((int)s < 0 || s >= GCS_TRACE_STATE_COUNT)
        return;
    record((int)s, 0, NULL, NULL);
}

gcs_trace_state gcs_trace_current_state(void)
{
    uint64_t gen = atomic_load_explicit(&g_gen, memory_order_relaxed);
    if (!gen || tl_gen != gen)
        return GCS_TRACE_RUNNING;
    return (gcs_trace_state)tl_state;
}

void gcs_trace_thread_end(void)
{
    gcs_trace_set_state(GCS_TRACE_EXITED);
}

void gcs_trace_recorder_set_command(const char *command)
{
    pthread_mutex_lock(&g_lock);
    free(g_command);
    g_command = command ? strdup(command) : NULL;
    pthread_mutex_unlock(&g_lock);
}

int gcs_trace_recorder_start(const char *path, gcs_err *err)
{
    if (!path || !*path) {
        gcs_err_set(err, "trace recorder: no output path");
        return -1;
    }
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_gen)) {
        pthread_mutex_unlock(&g_lock);
        gcs_err_set(err, "trace recorder: a recording is already active (writing %s)", g_path);
        return -1;
    }
    free(g_path);
    if (!(g_path = strdup(path))) {
        pthread_mutex_unlock(&g_lock);
        gcs_err_set(err, "trace recorder: out of memory");
        return -1;
    }
    g_bufs = NULL;
    atomic_store(&g_gen, g_next_gen++);
    pthread_mutex_unlock(&g_lock);
    /* The caller is normally the program's main thread: make it visible from
     * the start, as "main" unless it said what it is. */
    if (!tl_cls[0]) {
        copy_text(tl_cls, sizeof tl_cls, "main");
        if (!tl_name[0])
            copy_text(tl_name, sizeof tl_name, "main");
    }
    record(0, 1, tl_name, tl_cls);
    return 0;
}

typedef struct flat_event {
    uint64_t t_ns;
    int64_t tid;
    uint8_t state;
} flat_event;

/* Buffers of finished recordings.  Their events are freed, the small
 * rec_buf itself is not: a thread that loaded g_gen just before a stop may
 * still raise its `writing` flag once before it sees the recording is over
 * (it then touches nothing else), so the flag must stay valid memory.  They
 * stay reachable here, a few hundred bytes per thread and recording. */
static rec_buf *g_retired;             /* under g_lock */

static void free_bufs(rec_buf *b)
{
    while (b) {
        rec_buf *next = b->next;
        for (rec_chunk *c = b->head; c;) {
            rec_chunk *cn = c->next;
            free(c);
            c = cn;
        }
        b->head = b->tail = NULL;
        pthread_mutex_lock(&g_lock);
        b->next = g_retired;
        g_retired = b;
        pthread_mutex_unlock(&g_lock);
        b = next;
    }
}

int gcs_trace_recorder_stop(gcs_err *err)
{
    pthread_mutex_lock(&g_lock);
    if (!atomic_load(&g_gen)) {
        pthread_mutex_unlock(&g_lock);
        gcs_err_set(err, "trace recorder: no recording is active");
        return -1;
    }
    atomic_store(&g_gen, 0);
    uint64_t end = gcs_now_ns();
    rec_buf *bufs = g_bufs;
    g_bufs = NULL;
    char *path = g_path, *command = g_command ? strdup(g_command) : NULL;
    g_path = NULL;
    pthread_mutex_unlock(&g_lock);

    /* Wait out appends that began before g_gen dropped. */
    size_t nbufs = 0, nev = 0;
    uint64_t dropped = 0;
    for (rec_buf *b = bufs; b; b = b->next) {
        while (atomic_load(&b->writing))
            sched_yield();
        nbufs++;
        dropped += b->dropped;
        for (rec_chunk *c = b->head; c; c = c->next)
            nev += c->n;
    }
    int rc = -1;
    flat_event *flat = NULL;
    rec_buf **order = NULL;
    gcs_trace_writer *w = NULL;
    if (dropped) {
        gcs_err_set(err, "trace recorder: out of memory, %llu events lost; no trace written to %s",
                    (unsigned long long)dropped, path);
        goto out;
    }
    flat = malloc((nev ? nev : 1) * sizeof *flat);
    order = malloc((nbufs ? nbufs : 1) * sizeof *order);
    if (!flat || !order) {
        gcs_err_set(err, "trace recorder: out of memory writing %s", path);
        goto out;
    }
    /* Threads in order of appearance (the list is newest first). */
    size_t k = nbufs;
    for (rec_buf *b = bufs; b; b = b->next)
        order[--k] = b;
    size_t m = 0;
    for (rec_buf *b = bufs; b; b = b->next)
        for (rec_chunk *c = b->head; c; c = c->next)
            for (size_t i = 0; i < c->n; i++)
                flat[m++] = (flat_event){.t_ns = c->ev[i].t_ns, .tid = b->tid, .state = c->ev[i].state};
    if (!(w = gcs_trace_writer_open(path, "builtin", command, err)))
        goto out;
    for (size_t i = 0; i < nbufs; i++)
        gcs_trace_writer_thread(w, order[i]->tid, order[i]->name, order[i]->cls, order[i]->start_ns);
    /* Merge the per-thread streams by time: each is already sorted, and a
     * k-way merge keeps equal stamps of one thread in their recorded order. */
    {
        size_t *pos = calloc(nbufs ? nbufs : 1, sizeof *pos);
        size_t *lo = calloc(nbufs ? nbufs : 1, sizeof *lo), *hi = calloc(nbufs ? nbufs : 1, sizeof *hi);
        if (!pos || !lo || !hi) {
            free(pos), free(lo), free(hi);
            gcs_trace_writer_abort(w);
            w = NULL;
            gcs_err_set(err, "trace recorder: out of memory writing %s", path);
            goto out;
        }
        /* flat[] holds the buffers in list order: find each one's range. */
        size_t off = 0, bi = nbufs;
        for (rec_buf *b = bufs; b; b = b->next) {
            size_t n = 0;
            for (rec_chunk *c = b->head; c; c = c->next)
                n += c->n;
            bi--;
            lo[bi] = off;
            hi[bi] = off + n;
            pos[bi] = off;
            off += n;
        }
        for (size_t done = 0; done < nev; done++) {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < nbufs; i++)
                if (pos[i] < hi[i] && (best == SIZE_MAX || flat[pos[i]].t_ns < flat[pos[best]].t_ns))
                    best = i;
            flat_event *e = &flat[pos[best]++];
            gcs_trace_writer_event(w, e->t_ns, e->tid, (gcs_trace_state)e->state);
        }
        free(pos), free(lo), free(hi);
    }
    /* end is stamped after g_gen dropped, so no event is later than it
     * unless an append raced with stop; take the maximum to be safe. */
    for (size_t i = 0; i < nev; i++)
        if (flat[i].t_ns > end)
            end = flat[i].t_ns;
    rc = gcs_trace_writer_close(w, end, err);
    w = NULL;
out:
    if (w)
        gcs_trace_writer_abort(w);
    free(flat);
    free(order);
    free_bufs(bufs);
    free(path);
    free(command);
    return rc;
}
