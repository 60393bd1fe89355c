/* cmd_validate.c -- gcscale validate: the model and the adaptive mode
 * against the collector on the paper's workloads, as a report.
 *
 *   gcscale validate [--quick] [--machine PROFILE] [-o DIR] [--workloads LIST]
 *       [--threads MAX] [--reps N] [--snapshots N] [--mutators M]
 *       [--keep-snapshots] [--quiet] [--json]
 *
 * The work is include/gcscale/validate.h; docs/validate.md explains the
 * report.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gcscale/validate.h"

static const char *const cmd = "validate";

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale validate [--quick] [--machine PROFILE] [-o DIR] [options]\n"
            "\n"
            "Checks gcscale's prediction and its adaptive GC thread count against the\n"
            "collector, on the paper's workloads (bh, cube, cky).  For each workload it\n"
            "runs the program at every fixed GC thread count and with the adaptive policy\n"
            "and compares their total mark times; it snapshots a few collections and\n"
            "re-marks each of those heaps at P = 1..MAX (median of N) while the world is\n"
            "stopped; and it predicts every snapshot with the fast and the slow predictor.\n"
            "It writes to DIR: summary.md (start there), errors.csv (the paper's Table 2:\n"
            "measured speedup, Pred, Pred(M_P=M1), Pred(Q_P=Q1), error), adaptive.csv\n"
            "(Table 4: GC speedup with all threads and with adaptive, threads used),\n"
            "stacks.csv (measured and predicted GC speedup stacks), times.csv (measured\n"
            "against predicted mark times), steals.csv (the collector's steals against\n"
            "a simulation of its stealing on the snapshots), report.json and two SVG\n"
            "plots per workload, and prints the summary.\n"
            "\n"
            "options:\n"
            "  --policies           only the policy table: whole runs of each workload at\n"
            "                       every fixed P and under adaptive, all, boehm, hotspot\n"
            "                       and zgc (GC time, GC CPU time, best fixed P, noise\n"
            "                       floor; --runs of each, default 5): DIR/policies.md\n"
            "  --quick              2 snapshots, 5 re-marks per P, 5 whole runs per\n"
            "                       configuration (under a minute on a 2-CPU machine)\n"
            "  --machine FILE       machine profile (default $GCSCALE_MACHINE, else\n"
            "                       data/machines/HOSTNAME.json; gcscale calibrate writes it)\n"
            "  -o, --output DIR     report directory (default validation-HOSTNAME)\n"
            "  --workloads LIST     comma-separated subset of bh,cube,cky (default all)\n"
            "  --threads MAX        GC threads P = 1..MAX (default: CPUs online)\n"
            "  --mutators M         workload threads (default: CPUs online)\n"
            "  --steps-scale X      each workload's steps x X (default 1): with many\n"
            "                       mutators a default run collects only a few times\n"
            "                       (bh once with 16), too little GC to tell policies apart\n"
            "  --reps N             re-marks per P and snapshot (default 5 quick, 7 full)\n"
            "  --runs N             whole runs per configuration, the median counts\n"
            "                       (default 5 quick, 9 full)\n"
            "  --snapshots N        snapshots per workload (default 2 quick, 4 full)\n"
            "  --keep-snapshots     keep the heap snapshots in DIR/snapshots (large)\n"
            CLI_PIN_HELP
            "                       (the GC workers of every run and re-mark)\n"
            "  --quiet              no progress on stderr\n"
            "  --json               print report.json instead of the text summary\n"
            "  -h, --help           this text\n"
            "\n"
            "Exit status: 0 when the report was written (whether or not the targets were\n"
            "met: the summary says), 2 on bad input or when a run failed.\n");
}

/* Removes DIR/snapshots and the snapshot files in it (only *.snap). */
static void remove_snapshots(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".snap") == 0) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

int cmd_validate(int argc, char **argv)
{
    enum { O_QUICK = 256, O_MACHINE, O_WORKLOADS, O_THREADS, O_REPS, O_RUNS, O_SNAPSHOTS, O_MUTATORS, O_KEEP,
           O_QUIET, O_JSON, O_PIN, O_POLICIES, O_STEPS };
    static const struct option options[] = {
        {"quick", no_argument, NULL, O_QUICK},
        {"policies", no_argument, NULL, O_POLICIES},
        {"machine", required_argument, NULL, O_MACHINE},
        {"output", required_argument, NULL, 'o'},
        {"workloads", required_argument, NULL, O_WORKLOADS},
        {"threads", required_argument, NULL, O_THREADS},
        {"reps", required_argument, NULL, O_REPS},
        {"runs", required_argument, NULL, O_RUNS},
        {"snapshots", required_argument, NULL, O_SNAPSHOTS},
        {"mutators", required_argument, NULL, O_MUTATORS},
        {"steps-scale", required_argument, NULL, O_STEPS},
        {"keep-snapshots", no_argument, NULL, O_KEEP},
        {"quiet", no_argument, NULL, O_QUIET},
        {"json", no_argument, NULL, O_JSON},
        {"pin", required_argument, NULL, O_PIN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gcs_validate_opts o;
    gcs_validate_opts_init(&o);
    const char *out_dir = NULL;
    int keep = 0, json = 0, policies = 0, c;
    while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
        switch (c) {
        case O_QUICK: o.quick = 1; break;
        case O_POLICIES: policies = 1; break;
        case O_MACHINE: o.machine_path = optarg; break;
        case 'o': out_dir = optarg; break;
        case O_WORKLOADS: o.workloads = optarg; break;
        case O_THREADS: o.max_threads = (int)cli_parse_long(cmd, "--threads", optarg, 1, GCS_GC_MAX_THREADS); break;
        case O_REPS: o.reps = (int)cli_parse_long(cmd, "--reps", optarg, 3, 15); break;
        case O_RUNS: o.run_reps = (int)cli_parse_long(cmd, "--runs", optarg, 1, 9); break;
        case O_SNAPSHOTS:
            o.snapshots = (int)cli_parse_long(cmd, "--snapshots", optarg, 1, GCS_VALIDATE_MAX_SNAPSHOTS);
            break;
        case O_MUTATORS: o.mutators = (int)cli_parse_long(cmd, "--mutators", optarg, 1, 256); break;
        case O_STEPS: o.steps_scale = cli_parse_double(cmd, "--steps-scale", optarg, 0.01, 1000); break;
        case O_KEEP: keep = 1; break;
        case O_QUIET: o.quiet = 1; break;
        case O_JSON: json = 1; break;
        case O_PIN: o.placement = cli_parse_pin(cmd, optarg); break;
        case 'h':
            print_help(stdout);
            return 0;
        default:
            cli_bad_option(cmd, argv);
        }
    }
    if (optind != argc)
        cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    char host[64] = "host", machine[4096], dir[512], snaps[600];
    gethostname(host, sizeof host - 1);
    if (!o.machine_path) {
        gcs_err perr;
        if (gcs_profile_default_path(machine, sizeof machine, 0, &perr) < 0)
            cli_usage_error(cmd, "%s", perr.msg);
        o.machine_path = machine;
    }
    if (!out_dir) {
        snprintf(dir, sizeof dir, "validation-%s", host);
        out_dir = dir;
    }
    snprintf(snaps, sizeof snaps, "%s/snapshots", out_dir);
    o.snapshot_dir = snaps;
    if (policies) {
        gcs_validate_policies *pt = malloc(sizeof *pt);
        gcs_err perr = {{0}};
        if (!pt) {
            fprintf(stderr, "gcscale %s: out of memory\n", cmd);
            return CLI_EXIT_USAGE;
        }
        if (gcs_validate_policies_run(&o, pt, &perr) < 0 || gcs_validate_policies_write(pt, out_dir, &perr) < 0) {
            free(pt);
            cli_fail(cmd, &perr);
        }
        free(pt);
        printf("report: %s/policies.md\n", out_dir);
        return 0;
    }

    gcs_validate_report *r = malloc(sizeof *r);
    if (!r) {
        fprintf(stderr, "gcscale %s: out of memory\n", cmd);
        return CLI_EXIT_USAGE;
    }
    gcs_err err = {{0}};
    if (gcs_validate_run(&o, r, &err) < 0) {
        if (!keep)
            remove_snapshots(snaps);
        free(r);
        cli_fail(cmd, &err);
    }
    if (!keep)
        remove_snapshots(snaps);
    if (gcs_validate_write(r, out_dir, &err) < 0) {
        free(r);
        cli_fail(cmd, &err);
    }
    if (json) {
        json_t *doc = gcs_validate_report_json(r);
        gcs_json_print(doc, stdout);
        json_decref(doc);
    } else {
        gcs_validate_print_summary(r, stdout);
        printf("\nreport: %s/summary.md\n", out_dir);
    }
    free(r);
    return 0;
}
