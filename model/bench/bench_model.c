/* bench_model.c -- build/bench-model (make bench-model): what heap inspection
 * costs.
 *
 *   bench-model [--profile FILE] [--shapes tree,list,random,wide] [--depth D]
 *               [--objects N] [--reps N] [--sim-accesses N] [--phase-reps N]
 *               [--snapshot FILE]... [--quick]
 *
 * 1. The cache simulator's speed (accesses per second, one core) on three
 *    synthetic streams: the same line again, a mark-like stream (mostly the
 *    next line, sometimes a random one), and uniformly random lines over
 *    256 MiB; the last once more with gcs_cachesim_prefetch 32 accesses
 *    ahead, as the mark replay's ring does.
 * 2. For each shape (gcbench's shapes.h, built in gcscale's collector): the
 *    serial (P = 1) mark time, median of --reps collections, then a snapshot
 *    of the heap, and the time of the fast predictor (sampled and exact), the
 *    Tinf walk and the slow predictor on it, each against the mark time
 *    (the slow one as it chooses, then on one thread and on two: see "the
 *    pipeline" in model/replay.c); then its walk with the simulator off
 *    (walk_only); last the replay in two stages, the walk
 *    storing its accesses and then their simulation, each timed
 *    (stages); then the slow predictor with the sampled simulation (one
 *    line in 4 and in 8, gcs_inspect_opts.sim_sample) and how far its Q1,
 *    prefetched share and L are from the exact replay's.  These knobs are
 *    benchmark-only: _gcs_inspect_bench_opts
 *    of model/inspect_internal.h, not the public API.  An exact replay with this simulator, on at
 *    most two threads, costs at least the slower of "the walk alone" and "the
 *    simulation alone": the "floor" line gives that, over the mark.
 *
 * 3. The costs as a user meets them (the "phases" table), each in a fresh
 *    process (this program re-run as "--child fast|slow FILE") so that its
 *    peak RSS is the predictor's own and not this process's collector heap:
 *    loading the snapshot (gcs_snapshot_read: read, CRC, validation), then
 *    the fast or the slow predictor with Tinf walked, as `gcscale predict`
 *    runs them; each against the serial mark (median and min-max of
 *    --phase-reps processes), and the peak RSS against the snapshot file and
 *    against its arrays in memory.  Then the adaptive mode's full decision
 *    (gcs_adaptive_choose from the last collection's statistics, a fresh
 *    policy each time, so each call estimates and predicts) against the mark.
 *    --quick keeps only the phases and the decision (a heap of 10^8 objects).
 * 4. --snapshot FILE (any number of them, after or instead of the shapes;
 *    --shapes "" for none): a heap read from a snapshot (bh, cube, cky from
 *    data/corpus/, say) is built in the collector (gcs_gc_build_snapshot),
 *    its serial mark timed, and the collector's own snapshot of it measured
 *    as above.
 *
 * The profile gives the cache geometry and the gc costs; without --profile
 * the machine this was written on is assumed (L1d 48 KiB 12-way, L2 2 MiB
 * 16-way private, L3 105 MiB 15-way shared by 2 CPUs, 1 node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gcscale/adaptive.h"

#include "gcscale/cachesim.h"
#include "gcscale/gc.h"
#include "gcscale/inspect.h"
#include "gcscale/shapes.h"
#include "gcscale/snapshot.h"

#include "../inspect_internal.h"

static void die(const char *what, const gcs_err *err)
{
    fprintf(stderr, "bench-model: %s: %s\n", what, err ? err->msg : "failed");
    exit(2);
}

static void add_cache(gcs_profile *p, int level, const char *type, uint64_t size, int ways, int ncpus)
{
    int cpus[2] = {0, 1};
    gcs_profile_cache c = {.level = level, .size_bytes = size, .line_bytes = 64, .ways = ways,
                           .ncpus = ncpus, .cpus = cpus};
    snprintf(c.type, sizeof c.type, "%s", type);
    if (gcs_profile_add_cache(p, &c) < 0)
        abort();
}

static gcs_profile *default_profile(void)
{
    gcs_profile *p = gcs_profile_new(1);
    if (!p)
        die("profile", NULL);
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 5;
    p->gc_cost_pointer_ns = 1;
    add_cache(p, 1, "data", 48 << 10, 12, 1);
    add_cache(p, 2, "unified", 2 << 20, 16, 1);
    add_cache(p, 3, "unified", 105ull << 20, 15, 2);
    return p;
}

static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void bench_sim(const gcs_profile *prof, uint64_t n)
{
    gcs_err err;
    gcs_cachesim_geom geom;
    if (gcs_cachesim_geom_from_profile(prof, -1, &geom, &err) < 0)
        die("cache geometry", &err);
    gcs_cachesim *s = gcs_cachesim_new(&geom, &err);
    if (!s)
        die("cache simulator", &err);
    const char *names[] = {"same line", "mark-like (7/8 next line, 1/8 random in 256 MiB)",
                           "random lines in 256 MiB",
                           "random lines, prefetched 32 ahead (replay's ring)"};
    printf("cache simulator (%d levels, %d private), %llu accesses per stream:\n", geom.nlevels,
           geom.private_levels, (unsigned long long)n);
    /* pre-generate the addresses so that only the simulator is timed */
    uint64_t *addr = malloc(n * sizeof *addr);
    if (!addr)
        die("out of memory", NULL);
    for (int kind = 0; kind < 4; kind++) {
        uint64_t seed = 0x1234567ull + (uint64_t)(kind < 3 ? kind : 2), a = 0;
        for (uint64_t i = 0; i < n; i++) {
            if (kind == 0)
                a = 4096;
            else if (kind == 1)
                a = (xs(&seed) & 7) ? a + 64 : (xs(&seed) & ((256ull << 20) - 1));
            else /* the last two: the same random stream */
                a = xs(&seed) & ((256ull << 20) - 1);
            addr[i] = a;
        }
        gcs_cachesim_reset(s);
        uint64_t t0 = gcs_now_ns();
        if (kind < 3) {
            for (uint64_t i = 0; i < n; i++)
                gcs_cachesim_access(s, addr[i], (gcs_access)(i & 1));
        } else {
            /* as the mark replay does: rows prefetched 32 accesses ahead */
            for (uint64_t i = 0; i < n; i++) {
                if (i + 32 < n)
                    gcs_cachesim_prefetch(s, addr[i + 32]);
                gcs_cachesim_access(s, addr[i], (gcs_access)(i & 1));
            }
        }
        double sec = (double)(gcs_now_ns() - t0) * 1e-9;
        gcs_cachesim_result r;
        gcs_cachesim_result_get(s, &r);
        printf("  %-52s %7.1f M accesses/s  (L1 hit %.3f, memory %.3f, L %.3f)\n", names[kind],
               (double)n / sec * 1e-6,
               (double)(r.level[0].hits[0] + r.level[0].hits[1]) / (double)n,
               (double)(r.memory[0] + r.memory[1]) / (double)n, r.live_lines_avg);
    }
    free(addr);
    gcs_cachesim_free(s);
}

static const char *profile_path; /* NULL: default_profile() */
static const char *self_exe;     /* this program, re-run for the phases */
/* The snapshot a heap's phases read, removed however the program ends
 * (die() and the checks exit): a 10^8-object heap's is gigabytes in /tmp. */
static char tmp_snapshot[64];

static void drop_tmp_snapshot(void)
{
    if (tmp_snapshot[0])
        unlink(tmp_snapshot);
    tmp_snapshot[0] = 0;
}

static gcs_profile *get_profile(void)
{
    gcs_err err;
    gcs_profile *prof = profile_path ? gcs_profile_load(profile_path, &err) : default_profile();
    if (!prof)
        die(profile_path, &err);
    if (!prof->has_gc_cost) { /* timing only: any costs do */
        prof->has_gc_cost = 1;
        prof->gc_cost_object_ns = 5;
        prof->gc_cost_pointer_ns = 1;
    }
    return prof;
}

/* The child of one phase measurement: load FILE, inspect it with the fast or
 * the slow predictor (Tinf walked, as gcscale predict does), print
 * "load_ns span_ns inspect_ns maxrss_kb arrays_bytes" on stdout. */
static int child_main(const char *which, const char *path)
{
    gcs_err err;
    gcs_profile *prof = get_profile();
    uint64_t t0 = gcs_now_ns();
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    if (!g)
        die("read snapshot", &err);
    uint64_t t1 = gcs_now_ns();
    gcs_inspect_opts o;
    gcs_inspect_opts_init(&o);
    o.predictor = strcmp(which, "slow") == 0 ? GCS_INSPECT_SLOW : GCS_INSPECT_FAST;
    /* as gcscale predict --model v2 at its default P = 1..CPUs: the slow
     * predictor simulates the steals where the profile has gc_coord */
    if (gcs_inspect_steals_simulated_by_default(prof, o.predictor))
        o.steal_sim_threads = gcs_profile_cpus(prof);
    gcs_inspect_result r;
    if (gcs_inspect_heap(g, prof, &o, &r, &err) < 0)
        die("inspect", &err);
    uint64_t t2 = gcs_now_ns();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* gcs_snapshot_new's arrays: addr 8, words 4, nptrs 4, node 2, type 4,
     * edge_start 8 bytes per object; 4 per field and per root */
    uint64_t arrays = g->nobjects * 30 + 8 + 4 * g->nfields + 4 * g->nroots;
    printf("%llu %.0f %llu %ld %llu\n", (unsigned long long)(t1 - t0), r.span_ns, (unsigned long long)(t2 - t1),
           ru.ru_maxrss, (unsigned long long)arrays);
    gcs_snapshot_free(g);
    gcs_profile_free(prof);
    return 0;
}

typedef struct phase_run {
    double load_ms, span_ms, inspect_ms, total_ms, rss_mb, arrays_mb;
} phase_run;

static int run_child(const char *which, const char *path, phase_run *out)
{
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        char *args[8];
        int k = 0;
        args[k++] = (char *)self_exe;
        if (profile_path) {
            args[k++] = "--profile";
            args[k++] = (char *)profile_path;
        }
        args[k++] = "--child";
        args[k++] = (char *)which;
        args[k++] = (char *)path;
        args[k] = NULL;
        execv(self_exe, args);
        _exit(127);
    }
    close(fd[1]);
    char buf[256] = {0};
    size_t got = 0;
    ssize_t m;
    while (got < sizeof buf - 1 && (m = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)m;
    close(fd[0]);
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    unsigned long long load, inspect, arrays;
    double span;
    long rss;
    if (sscanf(buf, "%llu %lf %llu %ld %llu", &load, &span, &inspect, &rss, &arrays) != 5)
        return -1;
    out->load_ms = (double)load * 1e-6;
    out->span_ms = span * 1e-6;
    out->inspect_ms = (double)inspect * 1e-6;
    out->total_ms = out->load_ms + out->inspect_ms;
    out->rss_mb = (double)rss / 1024;
    out->arrays_mb = (double)arrays / (1 << 20);
    return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median, min and max of v[0..n) (sorts v) */
static void spread(double *v, int n, double *med, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    *med = v[n / 2];
    *lo = v[0];
    *hi = v[n - 1];
}

static void print_ratio(const char *name, double *v, int n, double mark_ms)
{
    double med, lo, hi;
    spread(v, n, &med, &lo, &hi);
    printf("  %-34s %9.1f ms (%.1f-%.1f) = %6.2fx the mark (%.2f-%.2f)\n", name, med, lo, hi, med / mark_ms,
           lo / mark_ms, hi / mark_ms);
}

/* The phases table (header comment, 3.): reps child processes per predictor. */
static void bench_phases(const char *path, double mark_ms, int reps)
{
    struct stat sb;
    double file_mb = stat(path, &sb) == 0 ? (double)sb.st_size / (1 << 20) : 0;
    printf("  phases, %d process%s each (median (min-max); snapshot file %.1f MiB):\n", reps, reps == 1 ? "" : "es",
           file_mb);
    for (int w = 0; w < 2; w++) {
        const char *which = w ? "slow" : "fast";
        double *v = calloc(6 * (size_t)reps, sizeof *v);
        double arrays_mb = 0;
        for (int r = 0; r < reps; r++) {
            phase_run pr;
            if (run_child(which, path, &pr) < 0) {
                fprintf(stderr, "bench-model: the %s child failed\n", which);
                exit(2);
            }
            v[0 * reps + r] = pr.load_ms;
            v[1 * reps + r] = pr.span_ms;
            v[2 * reps + r] = pr.inspect_ms;
            v[3 * reps + r] = pr.total_ms;
            v[4 * reps + r] = pr.rss_mb;
            arrays_mb = pr.arrays_mb;
        }
        char name[64];
        snprintf(name, sizeof name, "load (%s process)", which);
        print_ratio(name, v, reps, mark_ms);
        snprintf(name, sizeof name, "Tinf walk (%s)", which);
        print_ratio(name, v + reps, reps, mark_ms);
        snprintf(name, sizeof name, "%s predictor, Tinf walked", which);
        print_ratio(name, v + 2 * reps, reps, mark_ms);
        snprintf(name, sizeof name, "load + %s predictor", which);
        print_ratio(name, v + 3 * reps, reps, mark_ms);
        double med, lo, hi;
        spread(v + 4 * reps, reps, &med, &lo, &hi);
        printf("  %-34s %9.1f MiB (%.1f-%.1f) = %.2fx the file, %.2fx the arrays (%.1f MiB)\n",
               "peak RSS, load + predictor", med, lo, hi, med / file_mb, med / arrays_mb, arrays_mb);
        free(v);
    }
}

/* The adaptive mode's decision from the last collection's statistics, a
 * fresh policy each time, two ways: whole, on the calling thread
 * (background 0 and no cost budget: its first call with statistics
 * estimates and predicts, as the decision thread does),
 * and as the collector pays for it by default (background 1: the pause
 * hands the statistics to the policy's decision thread and takes the
 * decision made before, here none yet). */
static void bench_decision(const gcs_gc_stats *st, double mark_ms, int reps)
{
    double *v = calloc((size_t)reps, sizeof *v);
    for (int background = 0; background <= 1; background++) {
        for (int r = 0; r < reps; r++) {
            gcs_err err;
            gcs_adaptive_opts ao;
            gcs_adaptive_opts_init(&ao);
            ao.background = background;
            if (!background)
                ao.cost_budget = 1; /* the largest: the whole decision, as the decision thread makes it */
            gcs_gc_thread_policy pol;
            if (gcs_adaptive_policy_new(get_profile(), &ao, &pol, &err) < 0)
                die("adaptive policy", &err);
            gcs_gc_decision d;
            memset(&d, 0, sizeof d);
            uint64_t t0 = gcs_now_ns();
            gcs_adaptive_choose(pol.state, st, 2, &d);
            v[r] = (double)(gcs_now_ns() - t0) * 1e-6;
            if (!background && d.npredicted == 0) { /* it must have predicted, or this timed something else */
                fprintf(stderr, "bench-model: the adaptive policy predicted nothing (%s)\n", d.note ? d.note : "");
                exit(2);
            }
            pol.destroy(pol.state);
        }
        double med, lo, hi;
        spread(v, reps, &med, &lo, &hi);
        printf("  %-34s %9.4f ms (%.4f-%.4f) = %.4f%% of the mark (%.4f-%.4f)\n",
               background ? "adaptive decision, pause's part" : "adaptive decision, whole", med, lo, hi,
               100 * med / mark_ms, 100 * lo / mark_ms, 100 * hi / mark_ms);
    }
    free(v);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void *root;

/* The relative difference of a sampled estimate from the exact one. */
static double rel(double sampled, double exact) { return exact != 0 ? sampled / exact - 1 : sampled != 0; }

/* A heap built in the collector: a gc-bench shape, or a snapshot's graph
 * (from_file: its roots are held by heap). */
static void bench_heap(const gcs_profile *prof, const char *name, const gcs_gc_snapshot_heap *from_file, int reps,
                       int phase_reps, int quick);

static void bench_shape(const gcs_profile *prof, gcs_shape_kind kind, int depth, uint64_t objects, int reps,
                        int phase_reps, int quick)
{
    gcs_err err;
    gcs_shape_params sp = {.kind = kind, .depth = depth, .objects = objects, .seed = 42};
    if (gcs_shape_params_check(&sp, &err) < 0)
        die("shape", &err);
    gcs_shape_info info;
    gcs_shape_describe(&sp, &info);
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.heap_limit = 2 * (info.gcs_bytes + 8 * info.objects) + (64u << 20);
    go.threads = 1;
    go.max_threads = 1;
    go.alloc_budget = 0;
    go.snapshot_path = NULL;
    if (gcs_gc_init(&go, &err) < 0)
        die("gc init", &err);
    if (gcs_gc_add_root(&root) < 0 || gcs_shape_build_gc(&sp, &root, &info, &err) < 0)
        die("build", &err);
    bench_heap(prof, gcs_shape_name(kind), NULL, reps, phase_reps, quick);
}

static void bench_snapshot(const gcs_profile *prof, const char *file, int reps, int phase_reps, int quick)
{
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_read(file, &err);
    if (!g)
        die(file, &err);
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.heap_limit = 2 * g->params.heap_limit + (64u << 20);
    go.threads = 1;
    go.max_threads = 1;
    go.alloc_budget = 0;
    go.snapshot_path = NULL;
    go.log_path = "";
    if (gcs_gc_init(&go, &err) < 0)
        die("gc init", &err);
    gcs_gc_snapshot_heap heap;
    if (gcs_gc_build_snapshot(g, &heap, &err) < 0)
        die(file, &err);
    gcs_snapshot_free(g);
    const char *base = strrchr(file, '/');
    bench_heap(prof, base ? base + 1 : file, &heap, reps, phase_reps, quick);
}

static void bench_heap(const gcs_profile *prof, const char *name, const gcs_gc_snapshot_heap *from_file, int reps,
                       int phase_reps, int quick)
{
    gcs_err err;
    uint64_t *mark = calloc((size_t)reps, sizeof *mark);
    gcs_gc_stats *st = malloc(sizeof *st);
    gcs_gc_collect(); /* warm-up */
    for (int r = 0; r < reps; r++) {
        gcs_gc_collect();
        gcs_gc_last_stats(st);
        mark[r] = st->workers[0].mark_ns;
    }
    qsort(mark, (size_t)reps, sizeof *mark, cmp_u64);
    double mark_ms = (double)mark[reps / 2] * 1e-6;
    char *path = tmp_snapshot;
    snprintf(tmp_snapshot, sizeof tmp_snapshot, "/tmp/bench-model.%d.snap", (int)getpid());
    if (gcs_gc_collect_snapshot(path, &err) < 0)
        die("snapshot", &err);
    if (from_file) {
        gcs_gc_snapshot_heap_release((gcs_gc_snapshot_heap *)from_file);
    } else {
        root = NULL;
        gcs_gc_remove_root(&root);
    }
    gcs_gc_shutdown();
    printf("\n%s: %llu objects; serial mark %.1f ms (median of %d; %.1f-%.1f)\n", name,
           (unsigned long long)st->live_objects, mark_ms, reps, (double)mark[0] * 1e-6, (double)mark[reps - 1] * 1e-6);
    bench_phases(path, mark_ms, phase_reps);
    bench_decision(st, mark_ms, 5);
    if (quick) {
        drop_tmp_snapshot();
        free(mark);
        free(st);
        return;
    }
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    drop_tmp_snapshot();
    if (!g)
        die("read snapshot", &err);
    printf("  in process, %llu fields:\n", (unsigned long long)g->nfields);
    struct {
        const char *name;
        gcs_inspect_predictor p;
        int exact;
        double tinf;
        int walk_only, replay_threads, stages;
    } runs[] = {
        {"fast, sampled, Tinf given", GCS_INSPECT_FAST, 0, 0, 0, 0, 0},
        {"fast, exact counts, Tinf given", GCS_INSPECT_FAST, 1, 0, 0, 0, 0},
        {"fast, sampled, Tinf walked", GCS_INSPECT_FAST, 0, -1, 0, 0, 0},
        {"slow, Tinf given", GCS_INSPECT_SLOW, 0, 0, 0, 0, 0},
        {"slow, one thread", GCS_INSPECT_SLOW, 0, 0, 0, 1, 0},
        {"slow, two threads", GCS_INSPECT_SLOW, 0, 0, 0, 2, 0},
        {"slow's walk alone (no simulator)", GCS_INSPECT_SLOW, 0, 0, 1, 0, 0},
        {"slow, staged (walk, then simulation)", GCS_INSPECT_SLOW, 0, 0, 0, 1, 1},
        {"slow, sampled, 1 line in 4", GCS_INSPECT_SLOW, 0, 0, 0, 0, 0},
        {"slow, sampled, 1 line in 8", GCS_INSPECT_SLOW, 0, 0, 0, 0, 0},
    };
    double walk_alone_ms = 0;
    gcs_model_heap exact = {0};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        gcs_inspect_opts o;
        gcs_inspect_opts_init(&o);
        o.predictor = runs[k].p;
        o.exact = runs[k].exact;
        o.tinf_ns = runs[k].tinf;
        _gcs_inspect_bench_opts bo = {.replay_threads = runs[k].replay_threads,
                                      .walk_only = runs[k].walk_only,
                                      .stages = runs[k].stages};
        int sampled = strstr(runs[k].name, "1 line in 4") ? 2 : strstr(runs[k].name, "1 line in 8") ? 3 : 0;
        o.sim_sample = sampled;
        gcs_inspect_result r;
        _gcs_inspect_bench_result br;
        if (_gcs_inspect_heap_bench(g, prof, &o, &bo, &r, &br, &err) < 0)
            die("inspect", &err);
        double ms = r.elapsed_ns * 1e-6;
        printf("  %-32s %9.3f ms = %7.3f%% of the mark  (predictor %.3f ms, span %.1f ms %s)\n"
               "  %-32s Q1 read %.0f rw %.0f, L %.3f, live lines %llu, edges %llu",
               runs[k].name, ms, 100 * ms / mark_ms, r.misses_ns * 1e-6, r.span_ns * 1e-6, r.span_method, "",
               r.heap.q1[0], r.heap.q1[1], r.heap.live_lines_avg, (unsigned long long)r.heap.live_lines,
               (unsigned long long)r.heap.edges);
        if (r.predictor == GCS_INSPECT_SLOW && !runs[k].walk_only)
            printf(", %.1f M accesses/s, %d thread%s", (double)(r.accesses[0] + r.accesses[1]) / r.misses_ns * 1e3,
                   r.replay_threads, r.replay_threads == 1 ? "" : "s");
        if (br.trial_pipe_ns > 0)
            printf(" (trial: %.1f ms one thread, %.1f ms piped, per %u accesses)", br.trial_one_ns * 1e-6,
                   br.trial_pipe_ns * 1e-6, 1u << 19);
        printf("\n");
        if (runs[k].p == GCS_INSPECT_SLOW && runs[k].tinf == 0 && runs[k].replay_threads == 0 && !runs[k].walk_only &&
            !runs[k].stages && !sampled)
            exact = r.heap;
        if (sampled) {
            double q = exact.q1[0] + exact.q1[1], qs = r.heap.q1[0] + r.heap.q1[1];
            double pi = q > 0 ? (exact.q1_prefetched[0] + exact.q1_prefetched[1]) / q : 0;
            double pis = qs > 0 ? (r.heap.q1_prefetched[0] + r.heap.q1_prefetched[1]) / qs : 0;
            printf("  %-32s against the exact replay: Q1 read %+.2f%%, rw %+.2f%%, prefetched share %.4f vs %.4f "
                   "(%+.4f), L %+.2f%% (line sampling %d)\n",
                   "", 100 * rel(r.heap.q1[0], exact.q1[0]), 100 * rel(r.heap.q1[1], exact.q1[1]), pis, pi, pis - pi,
                   100 * rel(r.heap.live_lines_avg, exact.live_lines_avg), r.geom.line_sample_shift);
        }
        if (runs[k].walk_only)
            walk_alone_ms = r.misses_ns * 1e-6;
        if (runs[k].stages) {
            double sim_ms = br.stage_sim_ns * 1e-6, floor_ms = sim_ms > walk_alone_ms ? sim_ms : walk_alone_ms;
            uint64_t acc = r.accesses[0] + r.accesses[1];
            printf("  %-32s walk storing its accesses %.1f ms, simulation alone %.1f ms = %.2fx the mark\n"
                   "  %-32s (%.2f accesses per object, %.1f ns each simulated, the mark %.1f ns per access)\n"
                   "  %-32s floor of an exact replay, max(walk alone, simulation alone): %.2fx the mark\n",
                   "", br.stage_walk_ns * 1e-6, sim_ms, sim_ms / mark_ms, "",
                   (double)acc / (double)g->nobjects, br.stage_sim_ns / (double)acc, mark_ms * 1e6 / (double)acc,
                   "", floor_ms / mark_ms);
        }
    }
    gcs_snapshot_free(g);
    free(mark);
    free(st);
}

int main(int argc, char **argv)
{
    const char *shapes = "tree,list,random,wide", *child = NULL, *child_path = NULL, *files[64];
    int nfiles = 0;
    int depth = 0, reps = 5, phase_reps = 3, quick = 0;
    self_exe = "/proc/self/exe";
    atexit(drop_tmp_snapshot);
    uint64_t objects = 0, sim_n = 100000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--profile") && i + 1 < argc)
            profile_path = argv[++i];
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
            shapes = argv[++i];
        else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
            depth = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--objects") && i + 1 < argc)
            objects = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sim-accesses") && i + 1 < argc)
            sim_n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--phase-reps") && i + 1 < argc)
            phase_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--snapshot") && i + 1 < argc && nfiles < 64)
            files[nfiles++] = argv[++i];
        else if (!strcmp(argv[i], "--child") && i + 2 < argc) {
            child = argv[++i];
            child_path = argv[++i];
        } else {
            fprintf(stderr, "usage: bench-model [--profile FILE] [--shapes LIST] [--depth D] [--objects N] "
                            "[--reps N] [--sim-accesses N] [--phase-reps N] [--snapshot FILE]... [--quick]\n");
            return 2;
        }
    }
    if (child)
        return child_main(child, child_path);
    if (reps < 1)
        reps = 1;
    if (phase_reps < 1)
        phase_reps = 1;
    gcs_profile *prof = get_profile();
    if (prof->ncaches > 0 && sim_n > 0 && !quick)
        bench_sim(prof, sim_n);
    char *list = strdup(shapes);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        gcs_shape_kind kind;
        if (gcs_shape_parse(tok, &kind) < 0) {
            fprintf(stderr, "bench-model: unknown shape '%s'\n", tok);
            return 2;
        }
        bench_shape(prof, kind, depth, objects, reps, phase_reps, quick);
    }
    free(list);
    for (int f = 0; f < nfiles; f++)
        bench_snapshot(prof, files[f], reps, phase_reps, quick);
    gcs_profile_free(prof);
    return 0;
}
