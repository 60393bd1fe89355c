/* occupancy.c -- load points for the memory-node occupancy fit.
 *
 * To load a memory node with N outstanding requests we need N concurrent
 * misses.  One dependent chain gives one; a core can overlap several
 * independent chains (its fill buffers bound how many), and threads on more
 * cores add more.  At each load point (threads x chains) we record N, the
 * node's throughput X (requests per ns, summed over threads) and the mean
 * latency R of one request; Little's law ties them: R = N / X per thread. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/microbench.h"
#include "chase_internal.h"

/* k independent chains advanced in one loop: their loads do not depend on
 * each other, so the core issues them together (memory-level parallelism).
 * k is a compile-time constant in every instance, so the chain pointers live
 * in registers (checked in the generated code). */
static inline __attribute__((always_inline)) void multi(void **cur, int k, uint64_t steps, int rw)
{
    void *p[GCS_OCC_MAX_CHAINS];
#pragma GCC unroll 16
    for (int j = 0; j < k; j++)
        p[j] = cur[j];
    for (uint64_t s = 0; s < steps; s++) {
#pragma GCC unroll 16
        for (int j = 0; j < k; j++) {
            if (rw)
                p[j] = (void *)__atomic_fetch_and((uintptr_t *)p[j], ~(uintptr_t)1, __ATOMIC_RELAXED);
            else
                p[j] = *(void **)p[j];
        }
    }
#pragma GCC unroll 16
    for (int j = 0; j < k; j++)
        cur[j] = p[j];
}

#define KERNELS(K)                                                                   \
    static void multi_r##K(void **c, uint64_t s) { multi(c, K, s, 0); }              \
    static void multi_w##K(void **c, uint64_t s) { multi(c, K, s, 1); }
KERNELS(1) KERNELS(2) KERNELS(3) KERNELS(4) KERNELS(5) KERNELS(6) KERNELS(7) KERNELS(8)
KERNELS(9) KERNELS(10) KERNELS(11) KERNELS(12) KERNELS(13) KERNELS(14) KERNELS(15) KERNELS(16)

/* Load points shorter than this many steps per chain get a warning. */
#define MIN_GOOD_STEPS 1024

typedef void (*kernel_fn)(void **, uint64_t);
static const kernel_fn kernels[2][GCS_OCC_MAX_CHAINS + 1] = {
    {NULL, multi_r1, multi_r2, multi_r3, multi_r4, multi_r5, multi_r6, multi_r7, multi_r8,
     multi_r9, multi_r10, multi_r11, multi_r12, multi_r13, multi_r14, multi_r15, multi_r16},
    {NULL, multi_w1, multi_w2, multi_w3, multi_w4, multi_w5, multi_w6, multi_w7, multi_w8,
     multi_w9, multi_w10, multi_w11, multi_w12, multi_w13, multi_w14, multi_w15, multi_w16},
};

typedef struct occ_thread {
    const gcs_topo *t;
    int cpu;
    kernel_fn fn;
    void *cur[GCS_OCC_MAX_CHAINS];
    uint64_t steps;
    struct gate *gate;
    uint64_t elapsed_ns;
    char warn[128];
} occ_thread;

/* Threads wait here until all of them exist (go = 1) or starting one failed
 * (go = -1).  A condition variable, not a barrier, so that the main thread
 * can release the started threads without the ones that failed. */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
};

static int gate_wait(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (g->go == 0)
        pthread_cond_wait(&g->cv, &g->mu);
    int go = g->go;
    pthread_mutex_unlock(&g->mu);
    return go;
}

static void gate_open(struct gate *g, int go)
{
    pthread_mutex_lock(&g->mu);
    g->go = go;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void *occ_thread_fn(void *arg)
{
    occ_thread *th = arg;
    gcs_err ignored;
    if (th->cpu >= 0)
        gcs_topo_pin_cpu(th->t, th->cpu, th->warn, sizeof th->warn, &ignored);
    if (gate_wait(th->gate) < 0)
        return NULL;
    uint64_t t0 = gcs_now_ns();
    th->fn(th->cur, th->steps);
    th->elapsed_ns = gcs_now_ns() - t0;
    return NULL;
}

/* Stretches of the cycle, one per chain, each of seg whole checkpoint
 * intervals: chain k starts at checkpoint tape + k * seg, so the n chains
 * cover n * seg consecutive checkpoints and no line is on two chains' paths
 * as long as n * seg <= nckpt.  Two chains sharing lines would walk them in
 * lock-step, the second hitting in the cache or merging into the first's
 * miss: the point would claim N outstanding misses and have fewer. */
uint64_t _gcs_occ_steps_cap(const gcs_chase_buf *b, int n, uint64_t steps)
{
    if (n < 1 || !b->ckpt || b->nckpt < (size_t)n)
        return 0;
    uint64_t cap = (uint64_t)(b->nckpt / (size_t)n) * b->ckpt_interval;
    return steps < cap ? steps : cap;
}

int _gcs_occ_chain_starts(gcs_chase_buf *b, int n, uint64_t *steps, void **starts)
{
    uint64_t allowed = _gcs_occ_steps_cap(b, n, *steps);
    if (allowed == 0)
        return -1;
    *steps = allowed;
    uint64_t seg = (allowed + b->ckpt_interval - 1) / b->ckpt_interval;
    for (int k = 0; k < n; k++) {
        starts[k] = b->ckpt[b->tape % b->nckpt];
        b->tape += seg;
    }
    return 0;
}

/* One run of one load point; returns X and R through the pointers.  steps
 * is what _gcs_occ_steps_cap allows for threads x chains. */
static int run_point(gcs_chase_buf *b, const gcs_topo *t, const gcs_occ_opts *o, int threads,
                     int chains, uint64_t steps, double *x, double *r, char *warn, size_t warn_len,
                     gcs_err *err)
{
    occ_thread th[threads];
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    void *starts[threads * chains];
    uint64_t allowed = steps;
    if (_gcs_occ_chain_starts(b, threads * chains, &allowed, starts) < 0 || allowed != steps) {
        gcs_err_set(err, "occupancy: %d chains cannot walk %llu disjoint steps each", threads * chains,
                    (unsigned long long)steps);
        return -1;
    }
    int started = 0, rc = 0;
    for (int i = 0; i < threads; i++) {
        th[i] = (occ_thread){.t = t, .cpu = i < o->ncpus ? o->cpus[i] : -1,
                             .fn = kernels[o->rw ? 1 : 0][chains], .steps = steps,
                             .gate = &gate};
        for (int j = 0; j < chains; j++)
            th[i].cur[j] = starts[i * chains + j];
    }
    pthread_t ids[threads];
    for (int i = 0; i < threads; i++) {
        int e = pthread_create(&ids[i], NULL, occ_thread_fn, &th[i]);
        if (e != 0) {
            gcs_err_set(err, "occupancy: cannot start thread %d: %s", i + 1, strerror(e));
            rc = -1;
            break;
        }
        started++;
    }
    gate_open(&gate, rc < 0 ? -1 : 1);
    for (int i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    if (rc < 0)
        return -1;
    double xs = 0, rs = 0;
    for (int i = 0; i < threads; i++) {
        double ns = th[i].elapsed_ns ? (double)th[i].elapsed_ns : 1;
        xs += (double)chains * (double)steps / ns;
        rs += ns / (double)steps;
        if (th[i].warn[0] && warn[0] == 0)
            snprintf(warn, warn_len, "%s", th[i].warn);
    }
    *x = xs;
    *r = rs / threads;
    return 0;
}

int gcs_occ_measure(gcs_chase_buf *b, const gcs_topo *t, const gcs_occ_opts *o,
                    gcs_occ_result *r, gcs_err *err)
{
    memset(r, 0, sizeof *r);
    if (!b->ckpt) {
        gcs_err_set(err, "occupancy: buffer not built");
        return -1;
    }
    static const int default_chains[] = {1, 2, 4, 8, 16};
    const int *chains = o->chain_counts ? o->chain_counts : default_chains;
    int nchains = o->chain_counts ? o->nchain_counts : 5;
    int nthreads = o->thread_counts ? o->nthread_counts : o->ncpus;
    int reps = o->reps > 0 ? o->reps : 3;
    if (nthreads < 1 || nchains < 1 || nthreads * nchains > GCS_OCC_MAX_POINTS) {
        gcs_err_set(err, "occupancy: %d thread counts x %d chain counts is not 1..%d load points",
                    nthreads, nchains, GCS_OCC_MAX_POINTS);
        return -1;
    }
    for (int c = 0; c < nchains; c++)
        if (chains[c] < 1 || chains[c] > GCS_OCC_MAX_CHAINS) {
            gcs_err_set(err, "occupancy: chains per thread must be 1..%d, not %d",
                        GCS_OCC_MAX_CHAINS, chains[c]);
            return -1;
        }
    int max_n = 0, max_chains = 0;
    for (int c = 0; c < nchains; c++)
        if (chains[c] > max_chains)
            max_chains = chains[c];
    for (int i = 0; i < nthreads; i++) {
        int n = o->thread_counts ? o->thread_counts[i] : i + 1;
        if (n < 1 || n > GCS_OCC_MAX_THREADS) {
            gcs_err_set(err, "occupancy: thread count %d is not 1..%d", n, GCS_OCC_MAX_THREADS);
            return -1;
        }
        if (n * max_chains > max_n)
            max_n = n * max_chains;
    }
    /* Every chain of a load point needs a path of its own (see
     * _gcs_occ_steps_cap): refused before anything is measured. */
    if (_gcs_occ_steps_cap(b, max_n, 1) == 0) {
        gcs_err_set(err, "occupancy: %d chains in flight need as many disjoint paths, and the "
                         "buffer's cycle has only %llu lines: use a larger buffer",
                    max_n, (unsigned long long)b->info.cycle_lines);
        return -1;
    }
    uint64_t steps = o->steps_per_chain;
    if (!steps) {
        /* ~64K steps per chain: 6-20 ms per load point from DRAM.  Points
         * with more chains than a 1 GiB cycle has room for at 64K lines
         * each (256) walk fewer steps, capped below. */
        steps = 1u << 16;
    }
    uint64_t t0 = gcs_now_ns();
    double xs[reps], rs[reps];
    gcs_occ_result tmp;
    memset(&tmp, 0, sizeof tmp);
    uint64_t shortest = UINT64_MAX;
    int shortest_n = 0;
    for (int ti = 0; ti < nthreads; ti++) {
        int threads = o->thread_counts ? o->thread_counts[ti] : ti + 1;
        for (int ci = 0; ci < nchains; ci++) {
            int n = threads * chains[ci];
            uint64_t point_steps = _gcs_occ_steps_cap(b, n, steps);
            for (int k = 0; k < reps; k++)
                if (run_point(b, t, o, threads, chains[ci], point_steps, &xs[k], &rs[k], r->warning,
                              sizeof r->warning, err) < 0)
                    return -1;
            int i = tmp.npoints++;
            tmp.threads[i] = threads;
            tmp.chains[i] = chains[ci];
            tmp.steps_per_chain[i] = point_steps;
            tmp.points[i].outstanding = (double)n;
            tmp.points[i].throughput_per_ns = gcs_stats_median(xs, (size_t)reps);
            tmp.points[i].latency_ns = gcs_stats_median(rs, (size_t)reps);
            if (point_steps < shortest) {
                shortest = point_steps;
                shortest_n = n;
            }
        }
    }
    /* A few hundred steps last tens of microseconds, where starting the
     * threads is no longer negligible. */
    if (shortest < MIN_GOOD_STEPS) {
        char w[200];
        snprintf(w, sizeof w, "occupancy: N = %d chains share a %llu-line cycle, %llu steps each "
                              "(a larger buffer gives longer load points)",
                 shortest_n, (unsigned long long)b->info.cycle_lines, (unsigned long long)shortest);
        size_t used = strlen(r->warning);
        snprintf(r->warning + used, sizeof r->warning - used, "%s%s", used ? "; " : "", w);
    }
    /* Sort by N (stable insertion sort: a few dozen points), so callers and
     * fits see the load rising. */
    int idx[GCS_OCC_MAX_POINTS];
    for (int i = 0; i < tmp.npoints; i++) {
        int j = i;
        while (j > 0 && tmp.points[idx[j - 1]].outstanding > tmp.points[i].outstanding) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    r->npoints = tmp.npoints;
    for (int i = 0; i < tmp.npoints; i++) {
        r->points[i] = tmp.points[idx[i]];
        r->threads[i] = tmp.threads[idx[i]];
        r->chains[i] = tmp.chains[idx[i]];
        r->steps_per_chain[i] = tmp.steps_per_chain[idx[i]];
    }
    r->seconds = (double)(gcs_now_ns() - t0) / 1e9;
    return 0;
}
