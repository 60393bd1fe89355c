/* cmd_gc_bench.c -- gcscale gc-bench: full collections of a canonical heap
 * at P = 1..ncpus GC threads.
 *
 *   gcscale gc-bench --shape tree|list|random|wide [--depth D] [--objects N]
 *       [--seed S] [--threads SPEC] [--reps N] [--mark-mode M] [--numa POLICY]
 *       [--pin cores|compact|scatter|none] [--no-pin] [--span] [--instr-cost] [--heap SIZE] [--quiet] [--json|--csv]
 *       [--gc-threads N|adaptive[:MAX]|all|boehm|hotspot|zgc [--machine FILE]]
 *
 * Parses the options into the engine's (gcbench/run.c, gcbench.h) and
 * prints its result: the tables and JSON document of gcbench_result.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gcscale/adaptive.h"
#include "gcscale/gcbench.h"

static const char *const cmd = "gc-bench";

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
            CLI_PIN_HELP
            "                       (unbound, a 2-vCPU VM ran a third of the P = 2\n"
            "                       processes with worker 1 never marking)\n"
            CLI_NO_PIN_HELP
            "  --span               also compute T-infinity of the heap (one extra\n"
            "                       collection) and the parallelism work/span\n"
            "  --instr-cost         also time each collection with the collector's\n"
            "                       instrumentation off (interleaved) and report its cost\n"
            "  --snapshot FILE      instead of a shape, rebuild the graph of a heap snapshot\n"
            "                       (include/gcscale/snapshot.h) and collect that\n"
            "  --snapshot-out FILE  write a snapshot of the built heap (first warm-up\n"
            "                       collection)\n"
            "  --heap SIZE          heap limit (default: from the shape's size)\n"
            "  --gc-threads SPEC    N (same as --threads N), adaptive[:MAX] or a baseline\n"
            "                       all, boehm, hotspot or zgc (each also WORD:MAX): in\n"
            "                       each round, after the fixed-P collections (default\n"
            "                       P = 1..MAX), one with that policy choosing P\n"
            "                       (docs/adaptive.md)\n"
            "  --machine FILE       machine profile for adaptive (default $GCSCALE_MACHINE,\n"
            "                       else data/machines/HOSTNAME.json)\n"
            "  --quiet              no progress on stderr\n"
            "  --json, --csv        machine-readable output (CSV: one table; busy_share as\n"
            "                       busy_share_0, busy_share_1, ... one column per worker)\n"
            "  --table rows|adaptive  with --csv: the per-P rows (default) or the adaptive\n"
            "                       policy's collections (--gc-threads adaptive)\n"
            "  -h, --help           this text\n"
            "\n"
            "See docs/gc-bench.md; 'make bench' compares all shapes with Boehm GC.\n",
            GCS_GC_MAX_THREADS);
}

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

/* ---- output --------------------------------------------------------------- */

/* The engine's notices, on stderr as they come: a caveat under the
 * command's name, news as it is. */
static void notice(void *arg, int warning, const char *msg)
{
    (void)arg;
    if (warning)
        fprintf(stderr, "gcscale %s: %s\n", cmd, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

/* Text: the per-P table, its notes, the adaptive table.  CSV: one table,
 * plain (--table rows, the default, or adaptive), busy_share one column
 * per worker; the notes, which are not rows, go to stderr. */
static void print_result(const gcs_gcbench_result *r, gcs_format fmt, const char *table)
{
    if (fmt == GCS_FORMAT_JSON) {
        json_t *doc = gcs_gcbench_result_to_json(r);
        gcs_json_print(doc, stdout);
        json_decref(doc);
        return;
    }
    if (fmt == GCS_FORMAT_CSV) {
        gcs_table *tabs[2] = {gcs_gcbench_result_csv_table(r, 0), gcs_gcbench_result_csv_table(r, 1)};
        static const char *const names[] = {"rows", "adaptive"};
        cli_print_tables(cmd, "gcscale-gc-bench", tabs, names, tabs[1] ? 2 : 1, fmt, table);
        if (r->has_span)
            fprintf(stderr, "gcscale gc-bench: T-infinity %.0f (objects + pointers), parallelism %.1f, "
                            "computed in %.0f ms\n", r->span, r->parallelism, r->span_ms);
        gcs_table_free(tabs[0]);
        gcs_table_free(tabs[1]);
        return;
    }
    int csv = fmt == GCS_FORMAT_CSV;
    const char *note = csv ? "# " : "";
    gcs_table *t = gcs_gcbench_result_table(r);
    gcs_table_print(t, stdout, fmt);
    gcs_table_free(t);
    if (!csv)
        printf("build %.0f ms; busy_share = each worker's busy_ns / mark wall time; "
               "LLC misses: %s\n", r->build_ms, r->cache_misses);
    if (r->has_span)
        printf("%sT-infinity %.0f (objects + pointers), parallelism %.1f, computed in %.0f ms\n", note,
               r->span, r->parallelism, r->span_ms);
    gcs_table *at = gcs_gcbench_result_adaptive_table(r);
    if (!at)
        return;
    printf("\n");
    if (csv)
        printf("# gc-bench: adaptive policy, one row per collection\n");
    gcs_table_print(at, stdout, fmt);
    gcs_table_free(at);
    const gcs_gcbench_row *best = &r->rows[r->best_fixed], *first = &r->rows[0], *last = &r->rows[r->nrows - 1];
    printf("%sadaptive: median mark %.3f ms at median P %.1f; best fixed P = %d: %.3f ms (ratio %.3f); "
           "P = %d: %.3f ms, P = %d: %.3f ms; decision %.3f%% of mark (median)\n",
           note, r->adaptive_mark_ms_median, r->adaptive_threads_median, best->threads, best->mark_ms,
           r->adaptive_mark_ms_median / best->mark_ms, first->threads, first->mark_ms, last->threads,
           last->mark_ms, r->adaptive_decision_pct_median);
}

int cmd_gc_bench(int argc, char **argv)
{
    enum { O_SHAPE = 256, O_DEPTH, O_OBJECTS, O_SEED, O_THREADS, O_REPS, O_MODE, O_NUMA, O_PIN,
           O_SPAN, O_NO_PIN, O_INSTR, O_HEAP, O_QUIET, O_JSON, O_CSV, O_SNAP, O_SNAP_OUT, O_GC_THREADS, O_MACHINE, O_TABLE };
    static const struct option options[] = {
        {"shape", required_argument, NULL, O_SHAPE},
        {"depth", required_argument, NULL, O_DEPTH},
        {"objects", required_argument, NULL, O_OBJECTS},
        {"seed", required_argument, NULL, O_SEED},
        {"threads", required_argument, NULL, O_THREADS},
        {"reps", required_argument, NULL, O_REPS},
        {"mark-mode", required_argument, NULL, O_MODE},
        {"numa", required_argument, NULL, O_NUMA},
        {"pin", required_argument, NULL, O_PIN},
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
        {"table", required_argument, NULL, O_TABLE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gcs_gcbench_opts o;
    gcs_gcbench_opts_init(&o);
    gcs_shape_params *sp = &o.shape;
    gcs_gc_options *go = &o.gc;
    int have_shape = 0, have_depth = 0, have_objects = 0;
    int plist[GCS_GC_MAX_THREADS], np = 0;
    gcs_format fmt = GCS_FORMAT_TEXT;
    const char *snap_in = NULL, *snap_out = NULL;
    const char *gc_threads = NULL, *machine = NULL, *table = NULL;
    gcs_adaptive_spec aspec = {0};
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case O_SHAPE:
            if (gcs_shape_parse(optarg, &sp->kind) < 0)
                cli_usage_error(cmd, "--shape: unknown shape '%s' (tree, list, random, wide)", optarg);
            have_shape = 1;
            break;
        case O_DEPTH:
            sp->depth = (int)cli_parse_long(cmd, "--depth", optarg, 1, GCS_SHAPE_MAX_DEPTH);
            have_depth = 1;
            break;
        case O_OBJECTS: {
            uint64_t n = cli_parse_size(cmd, "--objects", optarg);
            if (n < 1 || n > GCS_SHAPE_MAX_OBJECTS)
                cli_usage_error(cmd, "--objects: %s is not in 1..%llu", optarg,
                                (unsigned long long)GCS_SHAPE_MAX_OBJECTS);
            sp->objects = n;
            have_objects = 1;
            break;
        }
        case O_SEED: sp->seed = cli_parse_size(cmd, "--seed", optarg); break;
        case O_THREADS: np = parse_threads(optarg, plist); break;
        case O_REPS: o.reps = (int)cli_parse_long(cmd, "--reps", optarg, 5, GCS_GCBENCH_MAX_REPS); break;
        case O_MODE: go->mark_mode = parse_mode(optarg); break;
        case O_NUMA: parse_numa(optarg, go); o.numa_name = optarg; break;
        case O_PIN: go->placement = cli_parse_pin(cmd, optarg); break;
        case O_NO_PIN: go->placement = GCS_TOPO_PLACE_NONE; break;
        case O_SPAN: o.span = 1; break;
        case O_INSTR: o.instr_cost = 1; break;
        case O_HEAP: o.heap_limit = cli_parse_size(cmd, "--heap", optarg); break;
        case O_QUIET: o.quiet = 1; break;
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
        case O_JSON: cli_set_format(cmd, &fmt, GCS_FORMAT_JSON); break;
        case O_TABLE: table = optarg; break;
        case O_CSV: cli_set_format(cmd, &fmt, GCS_FORMAT_CSV); break;
        case 'h':
            print_help(stdout);
            return 0;
        default:
            cli_bad_option(cmd, argv);
        }
    }
    if (optind < argc)
        cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!have_shape && !snap_in)
        cli_usage_error(cmd, "missing --shape (tree, list, random or wide) or --snapshot FILE");
    if (have_shape && snap_in)
        cli_usage_error(cmd, "--shape and --snapshot exclude each other");
    if (snap_out)
        cli_check_output(cmd, "--snapshot-out", snap_out);
    if (snap_in && (have_depth || have_objects))
        cli_usage_error(cmd, "--depth and --objects are for --shape");
    if (have_depth && sp->kind != GCS_SHAPE_TREE)
        cli_usage_error(cmd, "--depth is for --shape tree (use --objects)");
    if (have_objects && sp->kind == GCS_SHAPE_TREE)
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
    o.threads = plist;
    o.nthreads = np;
    o.snapshot = snap_in;
    o.snapshot_out = snap_out;
    o.adaptive_spec = aspec.adaptive ? gc_threads : NULL;
    o.machine = machine;
    o.notice = notice;

    gcs_err err = {{0}};
    gcs_gcbench_result *r;
    if (gcs_gcbench_run(&o, &r, &err) < 0)
        cli_fail(cmd, &err);
    print_result(r, fmt, table);
    gcs_gcbench_result_free(r);
    return cli_finish(cmd);
}
