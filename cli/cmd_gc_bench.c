/* cmd_gc_bench.c -- gcscale gc-bench: full collections of a canonical heap
 * at P = 1..ncpus GC threads.
 *
 *   gcscale gc-bench --shape tree|list|random|wide [--depth D] [--objects N]
 *       [--seed S] [--threads SPEC] [--reps N] [--mark-mode M] [--numa POLICY]
 *       [--no-pin] [--span] [--instr-cost] [--heap SIZE] [--quiet] [--json|--csv]
 *       [--gc-threads N|adaptive[:MAX] [--machine FILE]]
 *
 * The heap is built once (include/gcscale/shapes.h), collected twice to warm
 * up, then collected reps times at every P, the P values taking turns within
 * each round (so that slow drifts of a shared machine hit every P alike).
 * Nothing is allocated between collections: every collection marks and
 * sweeps the same live heap.
 */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gcscale/adaptive.h"
#include "gcscale/gc.h"
#include "gcscale/shapes.h"
#include "gcscale/snapshot.h"

static const char *const cmd = "gc-bench";

#define WARMUP 2
#define MAX_REPS 1000

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale gc-bench --shape SHAPE [options] [--json | --csv]\n"
            "\n"
            "Builds a canonical heap in gcscale's collector and times full collections\n"
            "(mark + sweep, nothing allocated in between) at each GC thread count P.\n"
            "Per P: median, min and max of the mark time and of the whole pause,\n"
            "throughput of the mark (live objects/s and MB/s, MB = 10^6 bytes of the\n"
            "live objects' headers + payloads), speedup over P = 1 (mark and pause),\n"
            "steals per collection, T1 (sum of the workers' busy time), each worker's\n"
            "busy share (busy_ns / the collection's mark wall time) and LLC misses\n"
            "where PAPI has counters.\n"
            "\n"
            "shapes (include/gcscale/shapes.h):\n"
            "  tree     complete binary tree of depth D (2^(D+1)-1 objects, 2 pointers +\n"
            "           1 data word each); --depth, default 22\n"
            "  list     singly linked list of N objects (1 pointer + 1 data word);\n"
            "           --objects, default 4000000\n"
            "  random   N objects with 2 pointers to uniformly random objects, held by\n"
            "           one N-pointer array; --objects, default 3000000; --seed\n"
            "  wide     one array of N pointers to N small data objects;\n"
            "           --objects, default 1000000\n"
            "\n"
            "options:\n"
            "  --shape SHAPE        tree, list, random or wide (required)\n"
            "  --depth D            tree depth, 1..30\n"
            "  --objects N          objects of list/random/wide (K/M suffixes allowed)\n"
            "  --seed S             seed of the random shape (default 1)\n"
            "  --threads SPEC       P values: N, A-B or a list (1,2,4); 1..%d; default\n"
            "                       1-<CPUs online>\n"
            "  --reps N             collections per P, median reported (default 7, min 5)\n"
            "  --mark-mode MODE     relaxed-bytes (default), atomic-bytes or atomic-bits\n"
            "  --numa POLICY        page placement: local (default), interleave, node:N\n"
            "  --no-pin             let the scheduler place the GC workers (default: worker\n"
            "                       i bound to PU i; unbound, this 2-vCPU VM ran a third\n"
            "                       of the P = 2 processes with worker 1 never marking)\n"
            "  --span               also compute T-infinity of the heap (one extra\n"
            "                       collection) and the parallelism work/span\n"
            "  --instr-cost         also time each collection with the collector's\n"
            "                       instrumentation off (interleaved) and report its cost\n"
            "  --snapshot FILE      instead of a shape, rebuild the graph of a heap snapshot\n"
            "                       (include/gcscale/snapshot.h) and collect that\n"
            "  --snapshot-out FILE  write a snapshot of the built heap (first warm-up\n"
            "                       collection)\n"
            "  --heap SIZE          heap limit (default: from the shape's size)\n"
            "  --gc-threads SPEC    N (same as --threads N) or adaptive[:MAX]: in each\n"
            "                       round, after the fixed-P collections (default\n"
            "                       P = 1..MAX), one with the adaptive policy choosing P\n"
            "                       (docs/adaptive.md)\n"
            "  --machine FILE       machine profile for adaptive (default $GCSCALE_MACHINE,\n"
            "                       else data/machines/HOSTNAME.json)\n"
            "  --quiet              no progress on stderr\n"
            "  --json, --csv        machine-readable output\n"
            "  -h, --help           this text\n"
            "\n"
            "See docs/gc-bench.md; 'make bench' compares all shapes with Boehm GC.\n",
            GCS_GC_MAX_THREADS);
}

/* ---- the adaptive policy's collections (--gc-threads adaptive) -------------- */

typedef struct adaptive_sample {
    int p, npred;
    double predicted_ms, mark_ms, decision_us, decision_pct;
    double pred_ms[GCS_GC_MAX_THREADS];
} adaptive_sample;

static void adaptive_collect(uint64_t expect_live, gcs_gc_stats *st, adaptive_sample *a);

/* ---- option parsing ------------------------------------------------------- */

/* "N", "A-B", or a comma list of those; sorted, duplicates dropped. */
static int parse_threads(const char *text, int *list)
{
    gcs_err err;
    int *values, n;
    if (gcs_parse_count_list(text, GCS_GC_MAX_THREADS, &values, &n, &err) < 0)
        cli_usage_error(cmd, "--threads: %s", err.msg);
    memcpy(list, values, sizeof *list * (size_t)n);
    free(values);
    return n;
}

static void parse_numa(const char *text, gcs_gc_options *o)
{
    if (strcmp(text, "local") == 0)
        o->numa_policy = GCS_GC_NUMA_LOCAL;
    else if (strcmp(text, "interleave") == 0)
        o->numa_policy = GCS_GC_NUMA_INTERLEAVE;
    else if (strncmp(text, "node:", 5) == 0) {
        o->numa_policy = GCS_GC_NUMA_NODE;
        o->numa_node = (int)cli_parse_long(cmd, "--numa", text + 5, 0, 4095);
    } else
        cli_usage_error(cmd, "--numa: '%s' is not local, interleave or node:N", text);
}

static gcs_gc_mark_mode parse_mode(const char *text)
{
    for (int m = GCS_GC_MARK_RELAXED_BYTES; m <= GCS_GC_MARK_ATOMIC_BITS; m++)
        if (strcmp(text, gcs_gc_mark_mode_name((gcs_gc_mark_mode)m)) == 0)
            return (gcs_gc_mark_mode)m;
    cli_usage_error(cmd, "--mark-mode: '%s' is not relaxed-bytes, atomic-bytes or atomic-bits", text);
}

/* ---- measurement ---------------------------------------------------------- */

typedef struct sample {
    double mark_ms, pause_ms, t1_ms, steals, attempts;
    double busy[GCS_GC_MAX_THREADS];
    double llc;            /* sum over workers; NAN unavailable */
    double mark_off_ms;    /* --instr-cost: same P, instrumentation off */
} sample;

typedef struct row {
    int p;
    sample *s;             /* reps samples */
    double mark, mark_min, mark_max, pause, pause_min, pause_max, t1, steals, attempts, llc;
    double busy[GCS_GC_MAX_THREADS];
    double mark_off, overhead_pct;
} row;

static void *bench_root;

static void gc_fail(const char *what)
{
    gcs_err err;
    gcs_err_set(&err, "%s", what);
    cli_fail(cmd, &err);
}

/* One collection at the current P; checks that the whole shape survived. */
static void collect(uint64_t expect_live, gcs_gc_stats *st)
{
    gcs_gc_collect();
    if (gcs_gc_last_stats(st) < 0)
        gc_fail("gc: no statistics after a collection");
    if (st->live_objects != expect_live) {
        gcs_err err;
        gcs_err_set(&err, "gc: %llu live objects after a collection, expected %llu (collector bug)",
                    (unsigned long long)st->live_objects, (unsigned long long)expect_live);
        cli_fail(cmd, &err);
    }
}

static double median_of(const sample *s, int n, size_t offset)
{
    double v[MAX_REPS];
    for (int i = 0; i < n; i++)
        v[i] = *(const double *)((const char *)&s[i] + offset);
    return gcs_stats_median(v, (size_t)n);
}

static double min_of(const sample *s, int n, size_t offset, int want_max)
{
    double best = *(const double *)((const char *)&s[0] + offset);
    for (int i = 1; i < n; i++) {
        double v = *(const double *)((const char *)&s[i] + offset);
        if (want_max ? v > best : v < best)
            best = v;
    }
    return best;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* One collection with the policy choosing P; keeps its decision. */
static void adaptive_collect(uint64_t expect_live, gcs_gc_stats *st, adaptive_sample *a)
{
    collect(expect_live, st);
    const gcs_gc_decision *d = &st->decision;
    if (!d->used)
        gc_fail("gc: the adaptive policy made no decision (collector bug)");
    a->p = d->threads;
    a->npred = d->npredicted;
    for (int k = 0; k < d->npredicted; k++)
        a->pred_ms[k] = d->predicted_mark_ns[k] / 1e6;
    a->predicted_ms = d->npredicted >= d->threads ? a->pred_ms[d->threads - 1] : NAN;
    a->mark_ms = ms(st->mark_ns);
    a->decision_us = (double)d->decision_ns / 1e3;
    a->decision_pct = st->mark_ns ? 100.0 * (double)d->decision_ns / (double)st->mark_ns : NAN;
}

/* The adaptive collections as a table, and a summary against the fixed rows. */
static gcs_table *adaptive_table(const adaptive_sample *a, int reps, const row *rows, int np, json_t **summary,
                                 char *line, size_t linesz)
{
    static const char *const cols[] = {"collection", "threads", "predicted_mark_ms", "mark_ms", "decision_us",
                                       "decision_pct_of_mark", "predicted_ms_by_p"};
    gcs_table *t = gcs_table_new("gc-bench: adaptive policy, one row per collection", 7, cols);
    double mark[MAX_REPS], pct[MAX_REPS], p[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        gcs_table_add_int(t, r + 1);
        gcs_table_add_int(t, a[r].p);
        gcs_table_add_num(t, a[r].predicted_ms, 3);
        gcs_table_add_num(t, a[r].mark_ms, 3);
        gcs_table_add_num(t, a[r].decision_us, 2);
        gcs_table_add_num(t, a[r].decision_pct, 3);
        char pred[GCS_GC_MAX_THREADS * 12 + 8] = "";
        for (int k = 0; k < a[r].npred; k++) {
            size_t l = strlen(pred);
            snprintf(pred + l, sizeof pred - l, "%s%.3f", k ? " " : "", a[r].pred_ms[k]);
        }
        gcs_table_add_str(t, pred);
        mark[r] = a[r].mark_ms;
        pct[r] = a[r].decision_pct;
        p[r] = a[r].p;
    }
    double amark = gcs_stats_median(mark, (size_t)reps), apct = gcs_stats_median(pct, (size_t)reps);
    double ap = gcs_stats_median(p, (size_t)reps);
    int best = 0;
    for (int i = 1; i < np; i++)
        if (rows[i].mark < rows[best].mark)
            best = i;
    *summary = json_pack("{s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:f}", "mark_ms_median", amark, "threads_median", ap,
                         "decision_pct_median", apct, "best_fixed_threads", rows[best].p, "best_fixed_mark_ms",
                         rows[best].mark, "ratio_to_best", amark / rows[best].mark, "first_fixed_mark_ms",
                         rows[0].mark, "last_fixed_mark_ms", rows[np - 1].mark);
    snprintf(line, linesz,
             "adaptive: median mark %.3f ms at median P %.1f; best fixed P = %d: %.3f ms (ratio %.3f); "
             "P = %d: %.3f ms, P = %d: %.3f ms; decision %.3f%% of mark (median)",
             amark, ap, rows[best].p, rows[best].mark, amark / rows[best].mark, rows[0].p, rows[0].mark,
             rows[np - 1].p, rows[np - 1].mark, apct);
    return t;
}

int cmd_gc_bench(int argc, char **argv)
{
    enum { O_SHAPE = 256, O_DEPTH, O_OBJECTS, O_SEED, O_THREADS, O_REPS, O_MODE, O_NUMA, O_PIN,
           O_SPAN, O_NO_PIN, O_INSTR, O_HEAP, O_QUIET, O_JSON, O_CSV, O_SNAP, O_SNAP_OUT, O_GC_THREADS, O_MACHINE };
    static const struct option options[] = {
        {"shape", required_argument, NULL, O_SHAPE},
        {"depth", required_argument, NULL, O_DEPTH},
        {"objects", required_argument, NULL, O_OBJECTS},
        {"seed", required_argument, NULL, O_SEED},
        {"threads", required_argument, NULL, O_THREADS},
        {"reps", required_argument, NULL, O_REPS},
        {"mark-mode", required_argument, NULL, O_MODE},
        {"numa", required_argument, NULL, O_NUMA},
        {"pin", no_argument, NULL, O_PIN}, /* the default; kept for old scripts */
        {"no-pin", no_argument, NULL, O_NO_PIN},
        {"span", no_argument, NULL, O_SPAN},
        {"instr-cost", no_argument, NULL, O_INSTR},
        {"heap", required_argument, NULL, O_HEAP},
        {"snapshot", required_argument, NULL, O_SNAP},
        {"snapshot-out", required_argument, NULL, O_SNAP_OUT},
        {"gc-threads", required_argument, NULL, O_GC_THREADS},
        {"machine", required_argument, NULL, O_MACHINE},
        {"quiet", no_argument, NULL, O_QUIET},
        {"json", no_argument, NULL, O_JSON},
        {"csv", no_argument, NULL, O_CSV},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gcs_shape_params sp = {0};
    sp.seed = 1;
    int have_shape = 0, have_depth = 0, have_objects = 0;
    int plist[GCS_GC_MAX_THREADS], np = 0;
    int reps = 7, span = 0, instr_cost = 0, quiet = 0, json = 0, csv = 0;
    uint64_t heap = 0;
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.pin_workers = 1; /* see --no-pin */
    const char *numa_text = "local", *snap_in = NULL, *snap_out = NULL;
    const char *gc_threads = NULL, *machine = NULL;
    gcs_adaptive_spec aspec = {0};
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case O_SHAPE:
            if (gcs_shape_parse(optarg, &sp.kind) < 0)
                cli_usage_error(cmd, "--shape: unknown shape '%s' (tree, list, random, wide)", optarg);
            have_shape = 1;
            break;
        case O_DEPTH:
            sp.depth = (int)cli_parse_long(cmd, "--depth", optarg, 1, GCS_SHAPE_MAX_DEPTH);
            have_depth = 1;
            break;
        case O_OBJECTS: {
            uint64_t n = cli_parse_size(cmd, "--objects", optarg);
            if (n < 1 || n > GCS_SHAPE_MAX_OBJECTS)
                cli_usage_error(cmd, "--objects: %s is not in 1..%llu", optarg,
                                (unsigned long long)GCS_SHAPE_MAX_OBJECTS);
            sp.objects = n;
            have_objects = 1;
            break;
        }
        case O_SEED: sp.seed = cli_parse_size(cmd, "--seed", optarg); break;
        case O_THREADS: np = parse_threads(optarg, plist); break;
        case O_REPS: reps = (int)cli_parse_long(cmd, "--reps", optarg, 5, MAX_REPS); break;
        case O_MODE: go.mark_mode = parse_mode(optarg); break;
        case O_NUMA: parse_numa(optarg, &go); numa_text = optarg; break;
        case O_PIN: go.pin_workers = 1; break;
        case O_NO_PIN: go.pin_workers = 0; break;
        case O_SPAN: span = 1; break;
        case O_INSTR: instr_cost = 1; break;
        case O_HEAP: heap = cli_parse_size(cmd, "--heap", optarg); break;
        case O_QUIET: quiet = 1; break;
        case O_SNAP: snap_in = optarg; break;
        case O_SNAP_OUT: snap_out = optarg; break;
        case O_GC_THREADS: {
            gcs_err e;
            if (gcs_adaptive_parse_spec(optarg, &aspec, &e) < 0)
                cli_usage_error(cmd, "--gc-threads: %s", e.msg);
            gc_threads = optarg;
            break;
        }
        case O_MACHINE: machine = optarg; break;
        case O_JSON: json = 1; break;
        case O_CSV: csv = 1; break;
        case 'h':
            print_help(stdout);
            return 0;
        default:
            cli_bad_option(cmd, argv);
        }
    }
    if (optind < argc)
        cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (json && csv)
        cli_usage_error(cmd, "--json and --csv exclude each other");
    if (!have_shape && !snap_in)
        cli_usage_error(cmd, "missing --shape (tree, list, random or wide) or --snapshot FILE");
    if (have_shape && snap_in)
        cli_usage_error(cmd, "--shape and --snapshot exclude each other");
    if (snap_out)
        cli_check_output(cmd, "--snapshot-out", snap_out);
    if (snap_in && (have_depth || have_objects))
        cli_usage_error(cmd, "--depth and --objects are for --shape");
    if (have_depth && sp.kind != GCS_SHAPE_TREE)
        cli_usage_error(cmd, "--depth is for --shape tree (use --objects)");
    if (have_objects && sp.kind == GCS_SHAPE_TREE)
        cli_usage_error(cmd, "--objects is not for --shape tree (use --depth)");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    if (machine && !aspec.adaptive)
        cli_usage_error(cmd, "--machine is for --gc-threads adaptive");
    if (gc_threads && !aspec.adaptive) {
        if (np)
            cli_usage_error(cmd, "--threads and --gc-threads N exclude each other");
        np = 1;
        plist[0] = aspec.threads;
    }
    int amax = 0; /* adaptive: the pool, and the P it chooses from */
    if (aspec.adaptive) {
        amax = aspec.max_threads ? aspec.max_threads : ncpu > GCS_GC_MAX_THREADS ? GCS_GC_MAX_THREADS : (int)ncpu;
        if (np && plist[np - 1] > amax)
            cli_usage_error(cmd, "--threads: %d is above the adaptive pool of %d", plist[np - 1], amax);
        if (np == 0) {
            np = amax;
            for (int i = 0; i < np; i++)
                plist[i] = i + 1;
        }
    }
    if (np == 0) {
        np = ncpu > GCS_GC_MAX_THREADS ? GCS_GC_MAX_THREADS : (int)ncpu;
        for (int i = 0; i < np; i++)
            plist[i] = i + 1;
    }
    int pmax = plist[np - 1];

    gcs_err err = {{0}};
    if (gcs_shape_params_check(&sp, &err) < 0)
        cli_fail(cmd, &err);
    gcs_shape_info info;
    gcs_shape_describe(&sp, &info);
    gcs_snapshot *snap = NULL;
    if (snap_in) {
        snap = gcs_snapshot_read(snap_in, &err);
        if (!snap)
            cli_fail(cmd, &err);
        gcs_snapshot_stats ss;
        if (gcs_snapshot_stats_compute(snap, &ss, &err) < 0)
            cli_fail(cmd, &err);
        if (ss.reachable < ss.objects && !quiet)
            fprintf(stderr, "gcscale gc-bench: %s: %llu of %llu objects are unreachable and will be "
                    "collected by the warm-up\n", snap_in, (unsigned long long)(ss.objects - ss.reachable),
                    (unsigned long long)ss.objects);
        memset(&info, 0, sizeof info);
        info.objects = ss.reachable;
        /* pointers and bytes of the reachable part are not known without a
         * walk; count the whole snapshot's when everything is reachable */
        info.pointers = ss.edges;
        info.payload_bytes = ss.bytes;
        info.gcs_bytes = ss.bytes + 8 * ss.objects;
        if (ss.reachable < ss.objects) {
            /* throughput then uses the bytes the collector reports */
            info.gcs_bytes = 0;
        }
        gcs_snapshot_stats_free(&ss);
    }
    /* Room for the shape in its size classes (at most 1.34x), twice over. */
    go.heap_limit = heap ? heap : 2 * (info.gcs_bytes + 8 * info.objects) + (64u << 20);
    if (snap && !heap) {
        uint64_t all = 0;
        for (uint64_t i = 0; i < snap->nobjects; i++)
            all += 16 + 8 * (uint64_t)snap->words[i];
        go.heap_limit = 2 * all + (64u << 20);
    }
    go.threads = pmax;
    go.max_threads = pmax;
    go.alloc_budget = 0;
    if (aspec.adaptive) {
        if (gcs_adaptive_configure(&go, gc_threads, machine, &err) < 0)
            cli_fail(cmd, &err);
        go.threads = pmax;
    } else {
        go.ignore_threads_env = 1; /* gc-bench times the P values its options name */
    }
    if (gcs_gc_init(&go, &err) < 0)
        cli_fail(cmd, &err);
    if (aspec.adaptive)
        gcs_gc_set_thread_policy_active(0); /* fixed-P rows first */
    if (gcs_gc_add_root(&bench_root) < 0)
        gc_fail("gc: out of memory for a root");

    gcs_progress pr;
    double total = (double)WARMUP + (double)reps * np * (instr_cost ? 2 : 1) + (span ? 1 : 0) +
                   (aspec.adaptive ? reps : 0);
    gcs_progress_init(&pr, total + 1, quiet);
    char step[160];
    snprintf(step, sizeof step, "building %s (%llu objects)", snap ? snap_in : gcs_shape_name(sp.kind),
             (unsigned long long)(snap ? snap->nobjects : info.objects));
    gcs_progress_step(&pr, step, 1);
    uint64_t t0 = gcs_now_ns();
    gcs_gc_snapshot_heap sheap = {0};
    if (snap) {
        if (gcs_gc_build_snapshot(snap, &sheap, &err) < 0)
            cli_fail(cmd, &err);
        gcs_snapshot_free(snap);
        snap = NULL;
    } else if (gcs_shape_build_gc(&sp, &bench_root, &info, &err) < 0) {
        cli_fail(cmd, &err);
    }
    double build_ms = ms(gcs_now_ns() - t0);
    gcs_progress_done(&pr, 1);

    gcs_gc_stats *st = malloc(sizeof *st);
    row *rows = calloc((size_t)np, sizeof *rows);
    if (!st || !rows)
        gc_fail("out of memory");
    for (int i = 0; i < np; i++) {
        rows[i].p = plist[i];
        rows[i].s = calloc((size_t)reps, sizeof(sample));
        if (!rows[i].s)
            gc_fail("out of memory");
    }

    gcs_progress_step(&pr, "warm-up collections", WARMUP);
    if (snap_out && gcs_gc_snapshot_next(snap_out) < 0)
        gc_fail("gc: cannot request a snapshot");
    for (int i = 0; i < WARMUP; i++) {
        collect(info.objects, st);
        /* The snapshot is written by the first warm-up collection; the
         * collector does not fail a collection for it, gc-bench does. */
        if (i == 0 && snap_out) {
            if (st->snapshot_status != 1) {
                if (st->snapshot_error[0])
                    gcs_err_set(&err, "--snapshot-out: %s", st->snapshot_error);
                else
                    gcs_err_set(&err, "--snapshot-out %s: no snapshot was written", snap_out);
                cli_fail(cmd, &err);
            }
            if (!quiet)
                fprintf(stderr, "wrote %s (%llu objects)\n", st->snapshot_path,
                        (unsigned long long)st->snapshot_objects);
        }
    }
    if (snap_in && info.gcs_bytes == 0)
        info.gcs_bytes = st->live_bytes; /* slot bytes of the live objects */
    gcs_progress_done(&pr, WARMUP);

    /* --gc-threads adaptive: one collection per round with the policy
     * choosing P, after the fixed-P ones (drifts hit both alike). */
    adaptive_sample *asamp = NULL;
    if (aspec.adaptive && !(asamp = calloc((size_t)reps, sizeof *asamp)))
        gc_fail("out of memory");
    for (int r = 0; r < reps; r++) {
        snprintf(step, sizeof step, "round %d of %d (P = %d..%d)", r + 1, reps, plist[0], pmax);
        gcs_progress_step(&pr, step, (double)np * (instr_cost ? 2 : 1) + (asamp ? 1 : 0));
        for (int i = 0; i < np; i++) {
            sample *s = &rows[i].s[r];
            gcs_gc_set_threads(rows[i].p);
            /* --instr-cost: on/off pairs, alternating which goes first. */
            for (int k = 0; k < (instr_cost ? 2 : 1); k++) {
                int on = !instr_cost || ((k + r) & 1) == 0;
                gcs_gc_set_instrumentation(on);
                collect(info.objects, st);
                if (!on) {
                    s->mark_off_ms = ms(st->mark_ns);
                    continue;
                }
                s->mark_ms = ms(st->mark_ns);
                s->pause_ms = ms(st->pause_ns);
                s->t1_ms = ms(st->t1_ns);
                s->steals = (double)st->steals;
                s->attempts = (double)st->steal_attempts;
                s->llc = st->cache_misses_available ? 0 : NAN;
                for (int w = 0; w < st->threads; w++) {
                    s->busy[w] = st->mark_ns ? (double)st->workers[w].busy_ns / (double)st->mark_ns : NAN;
                    if (st->workers[w].cache_misses < 0)
                        s->llc = NAN;
                    else
                        s->llc += (double)st->workers[w].cache_misses;
                }
            }
        }
        if (asamp) {
            gcs_gc_set_instrumentation(1); /* the policy reads the counters */
            gcs_gc_set_thread_policy_active(1);
            adaptive_collect(info.objects, st, &asamp[r]);
            gcs_gc_set_thread_policy_active(0);
        }
        gcs_progress_done(&pr, (double)np * (instr_cost ? 2 : 1) + (asamp ? 1 : 0));
    }
    gcs_gc_set_instrumentation(1);

    double span_value = NAN, span_ms = NAN;
    if (span) {
        gcs_progress_step(&pr, "T-infinity", 1);
        gcs_gc_set_compute_span(1, 0, 0);
        collect(info.objects, st);
        span_value = st->span;
        span_ms = ms(st->span_ns);
        gcs_gc_set_compute_span(0, 0, 0);
        gcs_progress_done(&pr, 1);
    }
    gcs_progress_finish(&pr);
    char llc_info[256];
    int llc_ok = gcs_gc_cache_miss_info(llc_info, sizeof llc_info);

    /* ---- aggregate ---- */
    int base = -1;
    for (int i = 0; i < np; i++) {
        row *w = &rows[i];
        w->mark = median_of(w->s, reps, offsetof(sample, mark_ms));
        w->mark_min = min_of(w->s, reps, offsetof(sample, mark_ms), 0);
        w->mark_max = min_of(w->s, reps, offsetof(sample, mark_ms), 1);
        w->pause = median_of(w->s, reps, offsetof(sample, pause_ms));
        w->pause_min = min_of(w->s, reps, offsetof(sample, pause_ms), 0);
        w->pause_max = min_of(w->s, reps, offsetof(sample, pause_ms), 1);
        w->t1 = median_of(w->s, reps, offsetof(sample, t1_ms));
        w->steals = median_of(w->s, reps, offsetof(sample, steals));
        w->attempts = median_of(w->s, reps, offsetof(sample, attempts));
        w->llc = llc_ok ? median_of(w->s, reps, offsetof(sample, llc)) : NAN;
        for (int k = 0; k < w->p; k++)
            w->busy[k] = median_of(w->s, reps, offsetof(sample, busy) + (size_t)k * sizeof(double));
        w->mark_off = w->overhead_pct = NAN;
        if (instr_cost) {
            double ratio[MAX_REPS];
            for (int r = 0; r < reps; r++)
                ratio[r] = w->s[r].mark_ms / w->s[r].mark_off_ms;
            w->mark_off = median_of(w->s, reps, offsetof(sample, mark_off_ms));
            w->overhead_pct = 100 * (gcs_stats_median(ratio, (size_t)reps) - 1);
        }
        if (w->p == 1)
            base = i;
    }

    /* ---- report ---- */
    static const char *const cols[] = {
        "threads", "mark_ms", "mark_ms_min", "mark_ms_max", "pause_ms", "pause_ms_min", "pause_ms_max",
        "mobjects_per_s", "mb_per_s", "speedup_mark", "speedup_pause", "steals", "t1_ms",
        "busy_share", "llc_misses", "mark_ms_uninstrumented", "instr_overhead_pct",
    };
    int ncols = instr_cost ? 17 : 15;
    char title[512];
    if (snap_in)
        snprintf(title, sizeof title, "gc-bench: snapshot %.200s", snap_in);
    else if (sp.kind == GCS_SHAPE_TREE)
        snprintf(title, sizeof title, "gc-bench: tree depth %d", sp.depth);
    else
        snprintf(title, sizeof title, "gc-bench: %s of %llu", gcs_shape_name(sp.kind),
                 (unsigned long long)sp.objects);
    size_t tl = strlen(title);
    snprintf(title + tl, sizeof title - tl,
             ", %llu live objects, %.1f MB (headers + payloads), %s, numa %s%s, median of %d "
             "collections per P",
             (unsigned long long)info.objects, (double)info.gcs_bytes / 1e6,
             gcs_gc_mark_mode_name(go.mark_mode), numa_text, go.pin_workers ? ", pinned" : "", reps);
    gcs_table *t = gcs_table_new(title, ncols, cols);
    for (int i = 0; i < np; i++) {
        row *w = &rows[i];
        gcs_table_add_int(t, w->p);
        gcs_table_add_num(t, w->mark, 2);
        gcs_table_add_num(t, w->mark_min, 2);
        gcs_table_add_num(t, w->mark_max, 2);
        gcs_table_add_num(t, w->pause, 2);
        gcs_table_add_num(t, w->pause_min, 2);
        gcs_table_add_num(t, w->pause_max, 2);
        gcs_table_add_num(t, (double)info.objects / (w->mark / 1e3) / 1e6, 1);
        gcs_table_add_num(t, (double)info.gcs_bytes / (w->mark / 1e3) / 1e6, 0);
        gcs_table_add_num(t, base >= 0 ? rows[base].mark / w->mark : NAN, 2);
        gcs_table_add_num(t, base >= 0 ? rows[base].pause / w->pause : NAN, 2);
        gcs_table_add_num(t, w->steals, 0);
        gcs_table_add_num(t, w->t1, 2);
        char busy[GCS_GC_MAX_THREADS * 6 + 8] = "";
        for (int k = 0; k < w->p; k++) {
            size_t l = strlen(busy);
            snprintf(busy + l, sizeof busy - l, "%s%.2f", k ? " " : "", w->busy[k]);
        }
        gcs_table_add_str(t, busy);
        gcs_table_add_num(t, w->llc, 0);
        if (instr_cost) {
            gcs_table_add_num(t, w->mark_off, 2);
            gcs_table_add_num(t, w->overhead_pct, 2);
        }
    }

    gcs_table *at = NULL;
    json_t *asum = NULL;
    char aline[512] = "";
    if (asamp)
        at = adaptive_table(asamp, reps, rows, np, &asum, aline, sizeof aline);

    if (json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "format", json_string("gcscale-gc-bench"));
        json_object_set_new(doc, "version", json_integer(1));
        json_object_set_new(doc, "collector", json_string("gcscale"));
        if (snap_in) {
            json_object_set_new(doc, "shape", json_string("snapshot"));
            json_object_set_new(doc, "snapshot", json_string(snap_in));
            json_object_set_new(doc, "seed", json_integer((json_int_t)sp.seed));
        } else {
            gcs_shape_params_to_json(&sp, doc);
        }
        json_object_set_new(doc, "objects", json_integer((json_int_t)info.objects));
        json_object_set_new(doc, "pointers", json_integer((json_int_t)info.pointers));
        json_object_set_new(doc, "bytes", json_integer((json_int_t)info.gcs_bytes));
        json_object_set_new(doc, "payload_bytes", json_integer((json_int_t)info.payload_bytes));
        json_object_set_new(doc, "throughput_of",
                            json_string("live (marked) objects and their header + payload bytes per "
                                        "second of mark wall time; MB = 1e6 bytes"));
        json_object_set_new(doc, "mark_mode", json_string(gcs_gc_mark_mode_name(go.mark_mode)));
        json_object_set_new(doc, "numa", json_string(numa_text));
        json_object_set_new(doc, "pinned", json_boolean(go.pin_workers));
        json_object_set_new(doc, "cpus", json_integer(ncpu));
        json_object_set_new(doc, "reps", json_integer(reps));
        json_object_set_new(doc, "warmup", json_integer(WARMUP));
        json_object_set_new(doc, "heap_limit", json_integer((json_int_t)st->heap_limit));
        json_object_set_new(doc, "build_ms", json_real(build_ms));
        json_object_set_new(doc, "cache_misses", json_string(llc_info));
        if (span) {
            json_object_set_new(doc, "span", isnan(span_value) ? json_null() : json_real(span_value));
            json_object_set_new(doc, "span_ms", json_real(span_ms));
            double work = (double)info.objects + (double)info.pointers;
            json_object_set_new(doc, "parallelism",
                                isnan(span_value) ? json_null() : json_real(work / span_value));
        }
        json_t *jrows = gcs_table_to_json(t);
        for (int i = 0; i < np; i++) {
            json_t *o = json_array_get(jrows, (size_t)i);
            json_t *b = json_array();
            for (int k = 0; k < rows[i].p; k++)
                json_array_append_new(b, isnan(rows[i].busy[k]) ? json_null() : json_real(rows[i].busy[k]));
            json_object_set_new(o, "busy_share", b);
            json_object_set_new(o, "steal_attempts", json_real(rows[i].attempts));
            json_t *m = json_array();
            for (int r = 0; r < reps; r++)
                json_array_append_new(m, json_real(rows[i].s[r].mark_ms));
            json_object_set_new(o, "mark_ms_all", m);
        }
        json_object_set_new(doc, "rows", jrows);
        if (at) {
            json_object_set_new(asum, "spec", json_string(gc_threads));
            json_object_set_new(asum, "machine", machine ? json_string(machine) : json_null());
            json_object_set_new(asum, "collections", gcs_table_to_json(at));
            json_object_set_new(doc, "adaptive", asum);
            asum = NULL;
        }
        gcs_json_print(doc, stdout);
        json_decref(doc);
    } else {
        /* CSV: the first table alone is plain CSV; what follows it is
         * "# " comment lines, and a second table comes after a blank line
         * and its "# title" (the sections of calibrate --csv). */
        const char *note = csv ? "# " : "";
        gcs_table_print(t, stdout, csv ? GCS_FORMAT_CSV : GCS_FORMAT_TEXT);
        if (!csv)
            printf("build %.0f ms; busy_share = each worker's busy_ns / mark wall time; "
                   "LLC misses: %s\n", build_ms, llc_info);
        if (span)
            printf("%sT-infinity %.0f (objects + pointers), parallelism %.1f, computed in %.0f ms\n", note,
                   span_value, ((double)info.objects + (double)info.pointers) / span_value, span_ms);
        if (at) {
            printf("\n");
            if (csv)
                printf("# gc-bench: adaptive policy, one row per collection\n");
            gcs_table_print(at, stdout, csv ? GCS_FORMAT_CSV : GCS_FORMAT_TEXT);
            printf("%s%s\n", note, aline);
        }
    }
    gcs_table_free(t);
    if (at)
        gcs_table_free(at);
    json_decref(asum);
    free(asamp);
    for (int i = 0; i < np; i++)
        free(rows[i].s);
    free(rows);
    free(st);
    gcs_gc_remove_root(&bench_root);
    if (sheap.roots)
        gcs_gc_snapshot_heap_release(&sheap);
    gcs_gc_shutdown();
    if (fflush(stdout) != 0 || ferror(stdout)) {
        gcs_err_set(&err, "stdout: write failed");
        cli_fail(cmd, &err);
    }
    return 0;
}
