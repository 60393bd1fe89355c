/* sharing.c -- the cost of a cache line another worker touched last:
 * gc_line_transfer_ns, for the model's shared-line term (docs/model.md,
 * "Extra work in parallel"; model/sharing.c counts the lines).
 *
 * Measured on 2026-11-26 (docs/model.md): the summed busy time of the
 * collector grows with P on heaps whose objects are laid out in another order
 * than the mark visits them (a shuffled cky: x1.7 at P = 2), not on the same
 * graph in mark order, and transparent huge pages do not change it: not the
 * TLB, but lines (objects and their mark bytes) that both workers touch, each
 * touch after the other worker's a transfer between the cores' caches
 * instead of a hit in the worker's own.
 *
 * Two threads on the profile's first two CPUs touch cache lines the way the
 * marker touches an object: a load of the line's first word, then a store
 * into the line (the mark).  Each walks its own random order over a set of
 * lines that fits a private cache (256 KiB), `rounds` times:
 *
 *   private  each thread its own lines (after the first round, every touch
 *            finds the line in the thread's own cache)
 *   shared   both threads the same lines at the same time, so a touch often
 *            finds the line last written by the other thread
 *
 * Each line records its last writer, so the shared run counts exactly the
 * touches that followed the other thread's (the transfers).  One repetition
 * gives (sum over the threads of shared - private time) / transfers; the
 * profile gets the median over the repetitions, run private and shared
 * alternately so that host noise hits both alike. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/calibrate.h"

#define LINES 4096 /* 256 KiB: a private L2 on the machines seen so far */
#define LINE_BYTES 64

typedef struct line {
    uint64_t word;  /* what the marker reads (the header) */
    uint8_t mark;   /* what it writes */
    uint8_t writer; /* 1 + the thread that wrote it last; 0: none */
    uint8_t pad[LINE_BYTES - 10];
} line;

typedef struct toucher {
    pthread_t th;
    int cpu, id, rounds, pinned;
    line *lines;
    const uint32_t *order;
    pthread_barrier_t *start;
    uint64_t ns, transfers;
} toucher;

static void *touch(void *arg)
{
    toucher *t = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t->cpu, &set);
    t->pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    pthread_barrier_wait(t->start);
    uint64_t t0 = gcs_now_ns(), transfers = 0, sum = 0;
    uint8_t me = (uint8_t)(t->id + 1), w = 0;
    for (int r = 0; r < t->rounds; r++)
        for (int i = 0; i < LINES; i++) {
            /* w >> 2 is 0 (w <= 2), but the next line's address waits for the
             * last one's load: the marker reaches an object through the one
             * before it, so a transfer's latency shows */
            line *l = &t->lines[t->order[i] + (uint32_t)(w >> 2)];
            /* relaxed atomics: the two threads race on these bytes by design,
             * as two marking workers do on a mark byte */
            sum += __atomic_load_n(&l->word, __ATOMIC_RELAXED);
            w = __atomic_load_n(&l->writer, __ATOMIC_RELAXED);
            transfers += w != 0 && w != me;
            __atomic_store_n(&l->mark, (uint8_t)(r & 1), __ATOMIC_RELAXED);
            __atomic_store_n(&l->writer, me, __ATOMIC_RELAXED);
        }
    t->ns = gcs_now_ns() - t0;
    t->transfers = transfers + (sum == 1); /* keeps the loads; sum is never 1 */
    return NULL;
}

static void shuffle(uint32_t *v, int n, uint64_t *s)
{
    for (int i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    for (int i = n - 1; i > 0; i--) {
        *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
        int j = (int)(*s % (uint64_t)(i + 1));
        uint32_t x = v[i];
        v[i] = v[j];
        v[j] = x;
    }
}

/* One run of both threads; shared: both on lines a, else thread 1 on b. */
static int run_pair(const int cpu[2], int rounds, line *a, line *b, int shared, uint32_t *const order[2],
                    uint64_t ns[2], uint64_t *transfers, gcs_err *err)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    toucher t[2];
    int started = 0, rc = 0;
    for (int i = 0; i < 2; i++) {
        t[i] = (toucher){.cpu = cpu[i], .id = i, .rounds = rounds, .lines = shared || i == 0 ? a : b,
                         .order = order[i], .start = &start};
        if (pthread_create(&t[i].th, NULL, touch, &t[i]) != 0) {
            gcs_err_set(err, "line transfer: cannot start a thread");
            rc = -1;
            break;
        }
        started++;
    }
    if (started == 1) /* let the one started thread pass the barrier */
        pthread_barrier_wait(&start);
    for (int i = 0; i < started; i++)
        pthread_join(t[i].th, NULL);
    pthread_barrier_destroy(&start);
    if (rc < 0)
        return -1;
    if (!t[0].pinned || !t[1].pinned) {
        gcs_err_set(err, "line transfer: cannot pin to CPUs %d and %d", cpu[0], cpu[1]);
        return -1;
    }
    ns[0] = t[0].ns, ns[1] = t[1].ns;
    *transfers = t[0].transfers + t[1].transfers;
    return 0;
}

/* The first two CPUs of the profile, in node order (as the collector's
 * workers 0 and 1 go, one per core first). */
static int two_cpus(const gcs_profile *p, int cpu[2])
{
    int k = 0;
    for (int i = 0; i < p->nnodes && k < 2; i++)
        for (int j = 0; j < p->nodes[i].ncpus && k < 2; j++)
            cpu[k++] = p->nodes[i].cpus[j];
    return k == 2 ? 0 : -1;
}

int gcs_calibrate_line_transfer(int quick, gcs_profile *p, json_t **details, gcs_err *err)
{
    *details = NULL;
    int cpu[2];
    if (two_cpus(p, cpu) < 0) {
        gcs_err_set(err, "line transfer: the profile lists fewer than two CPUs");
        return -1;
    }
    int reps = quick ? 5 : 15, rounds = quick ? 20 : 50;
    line *a = aligned_alloc(LINE_BYTES, LINES * sizeof(line)), *b = aligned_alloc(LINE_BYTES, LINES * sizeof(line));
    uint32_t *order[2] = {malloc(LINES * sizeof(uint32_t)), malloc(LINES * sizeof(uint32_t))};
    double *cost = malloc((size_t)reps * sizeof *cost), *priv = malloc((size_t)reps * sizeof *priv),
           *shared = malloc((size_t)reps * sizeof *shared), *share = malloc((size_t)reps * sizeof *share);
    int rc = -1;
    if (!a || !b || !order[0] || !order[1] || !cost || !priv || !shared || !share) {
        gcs_err_set(err, "line transfer: out of memory");
        goto done;
    }
    memset(a, 0, LINES * sizeof(line));
    memset(b, 0, LINES * sizeof(line));
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    double touches = 2.0 * rounds * LINES;
    for (int r = 0; r < reps; r++) {
        shuffle(order[0], LINES, &seed);
        shuffle(order[1], LINES, &seed);
        uint64_t ns_p[2], ns_s[2], tr_p, tr_s;
        if (run_pair(cpu, rounds, a, b, 0, order, ns_p, &tr_p, err) < 0 ||
            run_pair(cpu, rounds, a, b, 1, order, ns_s, &tr_s, err) < 0)
            goto done;
        double extra = (double)(ns_s[0] + ns_s[1]) - (double)(ns_p[0] + ns_p[1]);
        priv[r] = (double)(ns_p[0] + ns_p[1]) / touches;
        shared[r] = (double)(ns_s[0] + ns_s[1]) / touches;
        share[r] = (double)tr_s / touches;
        cost[r] = tr_s > 0 ? extra / (double)tr_s : NAN;
    }
    json_t *per_rep = json_array();
    for (int r = 0; r < reps; r++)
        json_array_append_new(per_rep, json_real(cost[r]));
    int n = 0;
    for (int r = 0; r < reps; r++)
        if (isfinite(cost[r]))
            cost[n++] = cost[r];
    if (n == 0) {
        json_decref(per_rep);
        gcs_err_set(err, "line transfer: the shared runs saw no transfer");
        goto done;
    }
    double lo = gcs_stats_percentile(cost, (size_t)n, 25), hi = gcs_stats_percentile(cost, (size_t)n, 75);
    double med = gcs_stats_median(cost, (size_t)n);
    /* a shared touch cheaper than a private one is noise, not a gain */
    p->gc_line_transfer_ns = med > 0 ? med : 0;
    p->has_gc_line_transfer = 1;
    gcs_profile_clear_fit_quality(p, "gc_line_transfer_ns");
    gcs_profile_uncertainty u;
    gcs_profile_uncertainty_init(&u);
    u.n = n;
    u.ci95_lo = gcs_stats_percentile(cost, (size_t)n, 2.5);
    u.ci95_hi = gcs_stats_percentile(cost, (size_t)n, 97.5);
    if (gcs_profile_set_uncertainty(p, "gc_line_transfer_ns", &u) < 0) {
        json_decref(per_rep);
        gcs_err_set(err, "line transfer: out of memory");
        goto done;
    }
    if (!(med > 0))
        gcs_profile_set_unreliable(p, "gc_line_transfer_ns",
                                   "the shared touches were not slower than the private ones: kept at 0");
    *details = json_pack("{s:[i,i], s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:o}", "cpus", cpu[0], cpu[1], "lines",
                         LINES, "rounds", rounds, "reps", reps, "private_ns_per_touch",
                         gcs_stats_median(priv, (size_t)reps), "shared_ns_per_touch",
                         gcs_stats_median(shared, (size_t)reps), "transfer_share",
                         gcs_stats_median(share, (size_t)reps), "ns_q1", lo, "ns_q3", hi, "ns_per_rep", per_rep);
    rc = 0;
done:
    free(a);
    free(b);
    free(order[0]);
    free(order[1]);
    free(cost);
    free(priv);
    free(shared);
    free(share);
    return rc;
}

double _gcs_calibrate_line_transfer_work(const gcs_profile *p, int quick)
{
    int cpu[2];
    return p && two_cpus(p, cpu) < 0 ? 0 : quick ? 0.4 : 1.0;
}

void _gcs_calibrate_line_transfer_step(gcs_profile *p, int quick, gcs_progress *pr)
{
    json_t *details = NULL;
    gcs_err err = {{0}};
    double w = _gcs_calibrate_line_transfer_work(p, quick);
    if (w == 0) {
        details = json_pack("{s:s}", "note", "not measured: one CPU");
    } else {
        gcs_progress_step(pr, "gc line transfer (two threads on shared and private lines)", w);
        /* optional, as the other gc steps: a failure keeps the calibration */
        if (gcs_calibrate_line_transfer(quick, p, &details, &err) < 0)
            details = json_pack("{s:s, s:s}", "note", "not measured: the step failed", "error", err.msg);
        gcs_progress_done(pr, w);
    }
    json_object_set_new(gcs_profile_calibration(p), "line_transfer", details);
}
