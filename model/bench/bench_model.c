/* bench_model.c -- build/bench-model (make bench-model): what heap inspection
 * costs.
 *
 *   bench-model [--profile FILE] [--shapes tree,list,random,wide] [--depth D]
 *               [--objects N] [--reps N] [--sim-accesses N]
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
 *    (stages).  These knobs are benchmark-only: _gcs_inspect_bench_opts
 *    of model/inspect_internal.h, not the public API.  An exact replay with this simulator, on at
 *    most two threads, costs at least the slower of "the walk alone" and "the
 *    simulation alone": the "floor" line gives that, over the mark.
 *
 * The profile gives the cache geometry and the gc costs; without --profile
 * the machine this was written on is assumed (L1d 48 KiB 12-way, L2 2 MiB
 * 16-way private, L3 105 MiB 15-way shared by 2 CPUs, 1 node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void *root;

static void bench_shape(const gcs_profile *prof, gcs_shape_kind kind, int depth, uint64_t objects, int reps)
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
    char path[64];
    snprintf(path, sizeof path, "/tmp/bench-model.%d.snap", (int)getpid());
    if (gcs_gc_collect_snapshot(path, &err) < 0)
        die("snapshot", &err);
    root = NULL;
    gcs_gc_remove_root(&root);
    gcs_gc_shutdown();
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    unlink(path);
    if (!g)
        die("read snapshot", &err);

    printf("\n%s: %llu objects, %llu fields; serial mark %.1f ms (median of %d)\n", gcs_shape_name(kind),
           (unsigned long long)g->nobjects, (unsigned long long)g->nfields, mark_ms, reps);
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
    };
    double walk_alone_ms = 0;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        gcs_inspect_opts o;
        gcs_inspect_opts_init(&o);
        o.predictor = runs[k].p;
        o.exact = runs[k].exact;
        o.tinf_ns = runs[k].tinf;
        _gcs_inspect_bench_opts bo = {.replay_threads = runs[k].replay_threads,
                                      .walk_only = runs[k].walk_only,
                                      .stages = runs[k].stages};
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
    const char *profile_path = NULL, *shapes = "tree,list,random,wide";
    int depth = 0, reps = 5;
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
        else {
            fprintf(stderr, "usage: bench-model [--profile FILE] [--shapes LIST] [--depth D] [--objects N] "
                            "[--reps N] [--sim-accesses N]\n");
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    gcs_err err;
    gcs_profile *prof = profile_path ? gcs_profile_load(profile_path, &err) : default_profile();
    if (!prof)
        die(profile_path, &err);
    if (!prof->has_gc_cost) { /* timing only: any costs do */
        prof->has_gc_cost = 1;
        prof->gc_cost_object_ns = 5;
        prof->gc_cost_pointer_ns = 1;
    }
    if (prof->ncaches > 0 && sim_n > 0)
        bench_sim(prof, sim_n);
    char *list = strdup(shapes);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        gcs_shape_kind kind;
        if (gcs_shape_parse(tok, &kind) < 0) {
            fprintf(stderr, "bench-model: unknown shape '%s'\n", tok);
            return 2;
        }
        bench_shape(prof, kind, depth, objects, reps);
    }
    free(list);
    gcs_profile_free(prof);
    return 0;
}
