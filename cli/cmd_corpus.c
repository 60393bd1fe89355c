/* cmd_corpus.c -- gcscale corpus: the measured corpus (include/gcscale/corpus.h,
 * docs/corpus.md).
 *
 *   gcscale corpus record --machine PROFILE -o DIR [--threads N] [--reps R]
 *                         [--snapshots S] [--heaps LIST] [--quick] [--quiet]
 *   gcscale corpus accuracy [ENTRY_DIR...] [--json] [--fast|--slow] [--span paper|critical] [--model base|v2]
 *                         [--shared-lines on|off] [--steal-work on|off] [--steal-count fitted|simulated] [--residency on|off] [--floor FILE] [--write-floor FILE] [--cache DIR] [--quiet]
 *   gcscale corpus checksum SNAPSHOT...
 */
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale corpus record --machine PROFILE -o DIR [options]\n"
            "       gcscale corpus checksum SNAPSHOT...\n"
            "       gcscale corpus checksum --shape S [--depth D | --objects N] [--seed S]\n"
            "       gcscale corpus accuracy [ENTRY_DIR...] [options]\n"
            "\n"
            "The measured corpus (docs/corpus.md): real marks of the collector on real\n"
            "machines, kept with the machine's profile and the heaps' snapshots, so that\n"
            "the model can be checked against them anywhere.\n"
            "\n"
            "record: measures this machine into a new entry DIR: the four gc-bench shapes\n"
            "(tree, list, random, wide) and snapshots of the three workloads (bh, cube,\n"
            "cky), each re-marked at P = 1..N, every repetition kept; PROFILE (gcscale\n"
            "calibrate on this machine) is copied in as profile.json.\n"
            "  --machine FILE     this machine's profile (required)\n"
            "  -o, --out DIR      the entry's directory, e.g. data/corpus/NAME (required)\n"
            "  --threads N        P = 1..N (default: CPUs online)\n"
            "  --reps R           re-marks per P and heap, interleaved over P (default 7)\n"
            "  --snapshots S      snapshots per workload (default 2)\n"
            "  --heaps LIST       a subset: tree,list,random,wide,bh,cube,cky\n"
            "  --quick            small heaps, 3 repetitions, 1 snapshot: proves the tooling\n"
            "\n"
            "accuracy: predicts every heap of the entries (default: data/corpus/*/) from\n"
            "the entry's profile and snapshot alone, as gcscale predict does, and prints\n"
            "per machine and P the measured speedup (median, min-max), the predicted one\n"
            "and the error; the mean absolute error per P; the recommended P against the\n"
            "measured best; the predicted against the measured P = 1 time.\n"
            "  --json             the report as JSON (docs/corpus.md)\n"
            "  --fast, --slow     the predictor (default: gcscale predict's for the\n"
            "                     entry's profile, the slow one where it has caches)\n"
            "  --span critical|paper   the span form (default critical, as gcscale predict)\n"
            "  --model v2|base         model v2 (default) or the base model (Brent's span,\n"
            "                          every miss a full miss), as gcscale predict\n"
            "  --shared-lines on|off   with model v2: the lines passing between workers\n"
            "                          (off by default), as gcscale predict\n"
            "  --steal-work on|off     with model v2: the steals' own busy time (on by\n"
            "                          default), as gcscale predict\n"
            "  --steal-count fitted|simulated  with model v2: the coordination's steal\n"
            "                          count simulated on each heap's graph or from the\n"
            "                          profile's fit (default: as gcscale predict decides,\n"
            "                          simulated with the slow predictor where the entry's\n"
            "                          profile has gc_coord); where simulated, each point's\n"
            "                          simulated steals are set beside the measured ones\n"
            "  --residency on|off      with model v2: lines in the effective LLC priced\n"
            "                          apart (default: where the entry's profile has\n"
            "                          gc_resident), as gcscale predict\n"
            "  --floor FILE       exit 1 when any figure is worse than FILE's floor\n"
            "  --write-floor FILE write the report's figures as a floor (tolerance 0.01)\n"
            "  --cache DIR        where heaps stored as recipes are rebuilt\n"
            "                     (default build/corpus-cache)\n"
            "\n"
            "checksum: prints the checksum of each snapshot's graph, or with --shape S\n"
            "[--depth D | --objects N] [--seed S] of that gc-bench shape as accuracy\n"
            "rebuilds it: entry.json keeps it for the heaps it rebuilds.\n"
            "\n"
            "  --quiet            no progress on stderr\n");
}

static char *joined_command(int argc, char **argv)
{
    size_t n = strlen("gcscale corpus") + 1;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    strcpy(s, "gcscale corpus");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

static int cmd_record(int argc, char **argv)
{
    const char *cmd = "corpus record";
    enum { O_MACHINE = 256, O_THREADS, O_REPS, O_SNAPS, O_HEAPS, O_QUICK, O_QUIET, O_HELP };
    static const struct option opts[] = {
        {"machine", required_argument, NULL, O_MACHINE}, {"out", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, O_THREADS}, {"reps", required_argument, NULL, O_REPS},
        {"snapshots", required_argument, NULL, O_SNAPS}, {"heaps", required_argument, NULL, O_HEAPS},
        {"quick", no_argument, NULL, O_QUICK},           {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},             {NULL, 0, NULL, 0},
    };
    gcs_corpus_record_opts o;
    gcs_corpus_record_opts_init(&o);
    char *command = joined_command(argc, argv);
    o.command = command;
    int c;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case O_MACHINE: o.machine_path = optarg; break;
        case 'o': o.out_dir = optarg; break;
        case O_THREADS: o.max_threads = (int)cli_parse_long(cmd, "--threads", optarg, 1, GCS_GC_MAX_THREADS); break;
        case O_REPS: o.reps = (int)cli_parse_long(cmd, "--reps", optarg, 1, GCS_CORPUS_MAX_REPS); break;
        case O_SNAPS: o.snapshots = (int)cli_parse_long(cmd, "--snapshots", optarg, 1, GCS_CORPUS_MAX_SNAPSHOTS); break;
        case O_HEAPS: o.heaps = optarg; break;
        case O_QUICK: o.quick = 1; break;
        case O_QUIET: o.quiet = 1; break;
        case O_HELP: usage(stdout); free(command); return 0;
        default: cli_bad_option(cmd, argv);
        }
    }
    if (optind < argc)
        cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!o.machine_path)
        cli_usage_error(cmd, "missing --machine PROFILE (gcscale calibrate writes data/machines/HOSTNAME.json)");
    if (!o.out_dir)
        cli_usage_error(cmd, "missing -o DIR (e.g. data/corpus/NAME)");
    gcs_err err;
    int rc = gcs_corpus_record(&o, &err);
    free(command);
    if (rc < 0) {
        gcs_progress_end_line();
        cli_fail(cmd, &err);
    }
    if (!o.quiet)
        fprintf(stderr, "gcscale corpus record: wrote %s/entry.json\n", o.out_dir);
    return 0;
}

static int cmd_accuracy(int argc, char **argv)
{
    const char *cmd = "corpus accuracy";
    enum { O_JSON = 256, O_SLOW, O_FAST, O_SPAN, O_MODEL, O_SHARED, O_STEAL_WORK, O_STEAL_COUNT, O_RESIDENCY, O_FLOOR, O_WRITE_FLOOR, O_CACHE, O_QUIET, O_HELP };
    static const struct option opts[] = {
        {"json", no_argument, NULL, O_JSON},           {"slow", no_argument, NULL, O_SLOW}, {"fast", no_argument, NULL, O_FAST},
        {"span", required_argument, NULL, O_SPAN},     {"model", required_argument, NULL, O_MODEL},
        {"shared-lines", required_argument, NULL, O_SHARED},
        {"steal-work", required_argument, NULL, O_STEAL_WORK},     {"floor", required_argument, NULL, O_FLOOR},
        {"residency", required_argument, NULL, O_RESIDENCY},
        {"steal-count", required_argument, NULL, O_STEAL_COUNT},
        {"write-floor", required_argument, NULL, O_WRITE_FLOOR},
        {"cache", required_argument, NULL, O_CACHE},   {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},           {NULL, 0, NULL, 0},
    };
    gcs_corpus_accuracy_opts o;
    gcs_corpus_accuracy_opts_init(&o);
    const char *floor_path = NULL, *write_floor = NULL;
    gcs_format fmt = GCS_FORMAT_TEXT;
    int c, steal_count_given = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_JSON: cli_set_format(cmd, &fmt, GCS_FORMAT_JSON); break;
        case O_SLOW: o.predictor = GCS_INSPECT_SLOW; break;
        case O_FAST: o.predictor = GCS_INSPECT_FAST; break;
        case O_MODEL:
            if (strcmp(optarg, "base") != 0 && strcmp(optarg, "v2") != 0)
                cli_usage_error(cmd, "--model: '%s' is neither base nor v2", optarg);
            o.model_v2 = strcmp(optarg, "v2") == 0;
            break;
        case O_SHARED: o.shared_lines = cli_parse_on_off(cmd, "--shared-lines", optarg); break;
        case O_STEAL_WORK: o.no_steal_work = !cli_parse_on_off(cmd, "--steal-work", optarg); break;
        case O_STEAL_COUNT:
            if (strcmp(optarg, "simulated") != 0 && strcmp(optarg, "fitted") != 0)
                cli_usage_error(cmd, "--steal-count: '%s' is neither fitted nor simulated", optarg);
            o.steal_count_sim = strcmp(optarg, "simulated") == 0;
            steal_count_given = 1;
            break;
        case O_RESIDENCY: o.residency = cli_parse_on_off(cmd, "--residency", optarg); break;
        case O_SPAN:
            if (strcmp(optarg, "paper") == 0)
                o.span = GCS_MODEL_SPAN_PAPER;
            else if (strcmp(optarg, "critical") == 0)
                o.span = GCS_MODEL_SPAN_CRITICAL;
            else
                cli_usage_error(cmd, "--span: '%s' is neither paper nor critical", optarg);
            break;
        case O_FLOOR: floor_path = optarg; break;
        case O_WRITE_FLOOR: write_floor = optarg; break;
        case O_CACHE: o.cache_dir = optarg; break;
        case O_QUIET: o.quiet = 1; break;
        case O_HELP: usage(stdout); return 0;
        default: cli_bad_option(cmd, argv);
        }
    }
    if (o.shared_lines && !o.model_v2)
        cli_usage_error(cmd, "--shared-lines on is a term of model v2 (the default): drop --model base");
    if (o.no_steal_work && !o.model_v2)
        cli_usage_error(cmd, "--steal-work off: the steals' work is a term of model v2 (the default) only: drop --model base");
    if (steal_count_given && !o.model_v2)
        cli_usage_error(cmd, "--steal-count is a term of model v2 (the default): drop --model base");
    if (o.residency != GCS_MODEL_RESIDENCY_DEFAULT && !o.model_v2)
        cli_usage_error(cmd, "--residency is a term of model v2 (the default): drop --model base");
    if (write_floor)
        cli_check_output(cmd, "--write-floor", write_floor);
    gcs_err err;
    json_t *floor = NULL;
    if (floor_path && !(floor = gcs_json_read_file(floor_path, &err)))
        cli_fail(cmd, &err);
    glob_t gl = {0};
    const char *const *dirs = (const char *const *)(argv + optind);
    int n = argc - optind;
    if (n == 0) { /* every entry of the corpus */
        if (glob("data/corpus/*/entry.json", 0, NULL, &gl) != 0 || gl.gl_pathc == 0)
            cli_usage_error(cmd, "no entry found in data/corpus/ (run from the repository, or name entries)");
        for (size_t i = 0; i < gl.gl_pathc; i++)
            *strrchr(gl.gl_pathv[i], '/') = 0;
        dirs = (const char *const *)gl.gl_pathv;
        n = (int)gl.gl_pathc;
    }
    json_t *report;
    if (gcs_corpus_accuracy(dirs, n, &o, &report, &err) < 0) {
        gcs_progress_end_line();
        cli_fail(cmd, &err);
    }
    globfree(&gl);
    if (fmt == GCS_FORMAT_JSON)
        gcs_json_print(report, stdout);
    else
        gcs_corpus_accuracy_print(report, stdout);
    int rc = 0;
    if (write_floor) {
        json_t *f = gcs_corpus_floor_from_report(report, 0.01);
        if (gcs_json_write_file(f, write_floor, &err) < 0)
            cli_fail(cmd, &err);
        json_decref(f);
    }
    if (floor) {
        int worse = gcs_corpus_floor_check(report, floor, stderr, &err);
        if (worse < 0)
            cli_fail(cmd, &err);
        if (worse)
            fprintf(stderr, "gcscale corpus accuracy: the model is less accurate than the floor %s\n", floor_path);
        else if (!o.quiet)
            fprintf(stderr, "gcscale corpus accuracy: at or above the floor %s\n", floor_path);
        rc = worse ? 1 : 0;
        json_decref(floor);
    }
    json_decref(report);
    return rc;
}

static int cmd_checksum(int argc, char **argv)
{
    const char *cmd = "corpus checksum";
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--shape") == 0) { /* --shape S [--depth D | --objects N] [--seed S] */
        gcs_shape_params sp = {.seed = 1};
        if (gcs_shape_parse(argv[2], &sp.kind) < 0)
            cli_usage_error(cmd, "--shape: '%s' is not tree, list, random or wide", argv[2]);
        for (int i = 3; i + 1 < argc; i += 2) {
            if (strcmp(argv[i], "--depth") == 0)
                sp.depth = (int)cli_parse_long(cmd, "--depth", argv[i + 1], 1, GCS_SHAPE_MAX_DEPTH);
            else if (strcmp(argv[i], "--objects") == 0)
                sp.objects = cli_parse_size(cmd, "--objects", argv[i + 1]);
            else if (strcmp(argv[i], "--seed") == 0)
                sp.seed = (uint64_t)cli_parse_long(cmd, "--seed", argv[i + 1], 0, LONG_MAX);
            else
                cli_usage_error(cmd, "unexpected argument '%s'", argv[i]);
        }
        gcs_err err;
        char sum[16], tmp[64];
        snprintf(tmp, sizeof tmp, "/tmp/gcscale-corpus-%ld.snap", (long)getpid());
        int rc = gcs_shape_params_check(&sp, &err) < 0 ? -1 : gcs_corpus_shape_checksum(&sp, tmp, sum, &err);
        unlink(tmp);
        if (rc < 0)
            cli_fail(cmd, &err);
        printf("%s\n", sum);
        return 0;
    }
    if (argc < 2)
        cli_usage_error(cmd, "missing SNAPSHOT (or --shape ...)");
    for (int i = 1; i < argc; i++) {
        gcs_err err;
        gcs_snapshot *g = gcs_snapshot_read(argv[i], &err);
        if (!g)
            cli_fail("corpus checksum", &err);
        char sum[16];
        gcs_corpus_graph_checksum(g, sum);
        gcs_snapshot_free(g);
        printf("%s  %s\n", sum, argv[i]);
    }
    return 0;
}

int cmd_corpus(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "record") == 0)
        return cmd_record(argc - 1, argv + 1);
    if (strcmp(argv[1], "accuracy") == 0)
        return cmd_accuracy(argc - 1, argv + 1);
    if (strcmp(argv[1], "checksum") == 0)
        return cmd_checksum(argc - 1, argv + 1);
    cli_usage_error("corpus", "unknown subcommand '%s' (record, accuracy or checksum)", argv[1]);
}
