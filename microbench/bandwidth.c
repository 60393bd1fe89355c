/* bandwidth.c -- read bandwidth of one memory node with all cores loading it.
 *
 * A STREAM-like "sum" kernel: every thread streams through its own slice and
 * adds up the words, so the hardware prefetchers run at full speed and the
 * only limit is how fast the node delivers lines.  Time is taken from the
 * first thread's start to the last thread's finish (what the node really
 * sustained), and the best repetition is reported, as STREAM does. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/microbench.h"

/* Thread-local, so concurrent threads do not race on the sink. */
static __thread volatile uint64_t gcs_bw_sink;

/* Four independent sums so the adds do not serialize the loop; gcc
 * vectorizes the body. */
__attribute__((noinline)) static uint64_t sum_words(const uint64_t *w, size_t n)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a += w[i];
        b += w[i + 1];
        c += w[i + 2];
        d += w[i + 3];
    }
    for (; i < n; i++)
        a += w[i];
    return a + b + c + d;
}

typedef struct bw_thread {
    const gcs_topo *t;
    int cpu, reps;
    const uint64_t *words;
    size_t nwords;
    pthread_barrier_t *barrier;
    struct gate *gate;
    uint64_t *start, *end;   /* per repetition */
    char warn[128];
} bw_thread;

/* The barrier needs a fixed party count, so threads first wait at a gate
 * until all of them exist (go = 1) or one could not be started (go = -1). */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
};

static void *bw_thread_fn(void *arg)
{
    bw_thread *th = arg;
    gcs_err ignored;
    if (th->cpu >= 0)
        gcs_topo_pin_cpu(th->t, th->cpu, th->warn, sizeof th->warn, &ignored);
    pthread_mutex_lock(&th->gate->mu);
    while (th->gate->go == 0)
        pthread_cond_wait(&th->gate->cv, &th->gate->mu);
    int go = th->gate->go;
    pthread_mutex_unlock(&th->gate->mu);
    if (go < 0)
        return NULL;
    for (int k = 0; k < th->reps; k++) {
        pthread_barrier_wait(th->barrier);
        th->start[k] = gcs_now_ns();
        gcs_bw_sink = sum_words(th->words, th->nwords);
        th->end[k] = gcs_now_ns();
    }
    return NULL;
}

int gcs_bw_measure(const gcs_topo *t, const void *data, size_t len, const int *cpus, int ncpus,
                   int reps, gcs_bw_result *r, gcs_err *err)
{
    memset(r, 0, sizeof *r);
    if (ncpus < 1 || reps < 1 || len < (size_t)ncpus * 64) {
        gcs_err_set(err, "bandwidth: need at least one CPU, one repetition and 64 bytes per thread");
        return -1;
    }
    bw_thread *th = calloc((size_t)ncpus, sizeof *th);
    pthread_t *ids = calloc((size_t)ncpus, sizeof *ids);
    uint64_t *times = calloc((size_t)ncpus * (size_t)reps * 2, sizeof *times);
    double *gbs = calloc((size_t)reps, sizeof *gbs);
    if (!th || !ids || !times || !gbs) {
        free(th), free(ids), free(times), free(gbs);
        gcs_err_set(err, "bandwidth: out of memory");
        return -1;
    }
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)ncpus);
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    size_t nwords = len / 8, per = nwords / (size_t)ncpus / 8 * 8; /* whole lines per slice */
    for (int i = 0; i < ncpus; i++) {
        th[i] = (bw_thread){.t = t, .cpu = cpus ? cpus[i] : -1, .reps = reps,
                            .words = (const uint64_t *)data + (size_t)i * per,
                            .nwords = i == ncpus - 1 ? nwords - (size_t)i * per : per,
                            .barrier = &barrier, .gate = &gate,
                            .start = times + (size_t)i * reps * 2,
                            .end = times + (size_t)i * reps * 2 + reps};
    }
    int started = 0, rc = 0;
    for (int i = 0; i < ncpus; i++) {
        int e = pthread_create(&ids[i], NULL, bw_thread_fn, &th[i]);
        if (e != 0) {
            gcs_err_set(err, "bandwidth: cannot start thread %d: %s", i + 1, strerror(e));
            rc = -1;
            break;
        }
        started++;
    }
    pthread_mutex_lock(&gate.mu);
    gate.go = rc < 0 ? -1 : 1;
    pthread_cond_broadcast(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
    for (int i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&barrier);
    if (rc == 0) {
        for (int k = 0; k < reps; k++) {
            uint64_t lo = UINT64_MAX, hi = 0;
            for (int i = 0; i < ncpus; i++) {
                if (th[i].start[k] < lo)
                    lo = th[i].start[k];
                if (th[i].end[k] > hi)
                    hi = th[i].end[k];
            }
            gbs[k] = (double)(nwords * 8) / (double)(hi > lo ? hi - lo : 1);
        }
        r->median_gbs = gcs_stats_median(gbs, (size_t)reps);
        r->best_gbs = gbs[reps - 1];
        r->threads = ncpus;
        r->reps = reps;
        r->bytes = nwords * 8;
        for (int i = 0; i < ncpus; i++)
            if (th[i].warn[0]) {
                snprintf(r->warning, sizeof r->warning, "%s", th[i].warn);
                break;
            }
    }
    free(th), free(ids), free(times), free(gbs);
    return rc;
}
