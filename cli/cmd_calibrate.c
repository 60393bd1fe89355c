/* cmd_calibrate.c -- gcscale calibrate: measure this machine and write its
 * machine profile.
 *
 *   gcscale calibrate [-o FILE] [--quick] [--topology SYNTH] [--size SIZE]
 *                     [--seed N] [--repeat N] [--pin POLICY] [--quiet] [--json | --csv]
 *   gcscale calibrate --gc-only [-o FILE] [--force] [--quick] [--repeat N] [--key KEY] [--quiet] [--json | --csv]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char *const cmd = "calibrate";

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale calibrate [-o FILE] [--quick] [--topology SYNTH] [--size SIZE]\n"
            "                         [--seed N] [--repeat N] [--quiet] [--json | --csv]\n"
            "       gcscale calibrate --gc-only [-o FILE] [--force] [--quick] [--repeat N]\n"
            "                         [--key KEY] [--quiet] [--json | --csv]\n"
            "\n"
            "Measures this machine's memory system and writes its machine profile (JSON,\n"
            "format \"gcscale-machine\" version 1): nodes and caches (hwloc), idle read and\n"
            "atomic read-modify-write latency M1 for every (CPU node, memory node) pair,\n"
            "occupancy S_O per memory node (read and RW, fitted to loaded measurements),\n"
            "read bandwidth per node, whether hardware counters work, and the collector's\n"
            "own costs: gc_cost_ns and gc_steals (cache-resident heaps) and gc_miss_overlap\n"
            "(the misses its marker overlaps, on a random heap of 4 x the effective LLC\n"
            "the latency sweep finds; not fitted when --size is below that heap).  Every\n"
            "detail (percentiles, huge-page variants, the cache staircase, occupancy load\n"
            "points and both fits, placement warnings, step durations) goes under\n"
            "\"calibration\".\n"
            "Then prints the profile on stdout and, on stderr, each of the calibration's\n"
            "warnings (calibration.warnings; also with --quiet) as one line\n"
            "\"gcscale calibrate: warning: ...\" and 'wrote FILE'.  They say what the\n"
            "profile's figures are not: measured on a synthetic topology (nothing pinned\n"
            "or bound), an S_O that is a bound of its fit (0: no contention seen, or load\n"
            "points that contradict the model) rather than a measurement, a CPU whose\n"
            "speed changed during the run (one cost heap, timed at the start and the\n"
            "end, differed by more than 10%%: calibration.speed_probe), and so on.\n"
            "Each line ends with \"; profile usable: ...; to do: ...\": whether the\n"
            "profile can be used as it is, and what to rerun (or nothing).\n"
            "Every fitted constant carries its uncertainty (\"uncertainty\": standard\n"
            "error, 95%% interval, residual, points) and is checked against physical\n"
            "bounds (S_O > 0 and below M1, costs and latencies positive and finite,\n"
            "bandwidth > 0; below the channels' peak is unchecked: not known here).  A\n"
            "figure that fails is measured again with more samples; one that still fails\n"
            "is marked in \"unreliable\" with the reason, keeps a non-zero stand-in, and\n"
            "gets one warning line saying what the model uses and what to do.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   where to write (default data/machines/HOSTNAME.json,\n"
            "                      directory created if needed); written crash-safe.\n"
            "                      FILE must not be a directory.  \"-\": the document\n"
            "                      on stdout only, in place of the tables (not with --csv;\n"
            "                      with --gc-only the profile is read from stdin)\n"
            "  --quick             fewer repetitions and load points: 7-15 s instead of\n"
            "                      23-36 s for a full run, as measured on the 2-vCPU\n"
            "                      development VM (one node, 1 GiB buffer; the spread is\n"
            "                      other jobs on the VM).  More nodes take longer: every\n"
            "                      (CPU node, memory node) pair is measured\n"
            "  --gc-only           re-measure only the collector's costs and miss overlap\n"
            "                      into the existing profile FILE (-o): after a change to\n"
            "                      the collector, when the memory system has not changed.\n"
            "                      A profile of another machine (its host, or unless it\n"
            "                      was calibrated on a synthetic topology its CPU count,\n"
            "                      differs from this one's) is refused, exit 2\n"
            "  --force             with --gc-only: write this machine's marker costs into\n"
            "                      another machine's profile all the same (with a warning)\n"
            "  --key KEY           with --gc-only: measure only KEY (gc_cost_ns.worker\n"
            "                      (with gc_cost_ns.steal, the two fitted together; the\n"
            "                      object and pointer costs kept), gc_miss_overlap,\n"
            "                      gc_stream_line_ns, gc_resident, gc_residency (after\n"
            "                      gc_resident), gc_coord,\n"
            "                      gc_coord.attempts_per_search (that ratio alone,\n"
            "                      the laws kept), gc_mark_transfer_ns,\n"
            "                      gc_mark_transfer_cached_ns,\n"
            "                      gc_line_transfer_ns or\n"
            "                      dependent_load_ns, the last not the collector's: a\n"
            "                      chase on 4 KiB pages) into the profile, on its own\n"
            "                      figures, keeping every other one: for a key calibrate\n"
            "                      gained after the profile was made\n"
            "  --topology SYNTH    pretend the machine is an hwloc synthetic topology, e.g.\n"
            "                      \"pack:2 node:2 core:2 pu:1\"; nothing can be pinned or\n"
            "                      bound, so every pair is measured on this machine's\n"
            "                      memory (a warning says so): for testing multi-node\n"
            "                      handling\n"
            "  --size SIZE         chase buffer per node (e.g. 64M, 1G); default 8 x LLC,\n"
            "                      at least 1 GiB; small sizes measure caches, not memory:\n"
            "                      below the last-level cache a warning says so (stderr\n"
            "                      and calibration.warnings)\n"
            "  --seed N            seed of the random chase permutation (default fixed)\n"
            "  --repeat N          calibrate N times (1-100) and print each constant's\n"
            "                      spread (min, median, max, (max - min) / median) after\n"
            "                      the profile; the profile written is the run nearest\n"
            "                      the medians (also under calibration.repeat).  With\n"
            "                      --gc-only: the collector's constants only, each run\n"
            "                      into the profile as it was (a vCPU shared with other\n"
            "                      jobs can mark 1.5x slower at times: docs/microbench.md)\n"
            "  --pin POLICY        order of the occupancy load threads' CPUs (the memory\n"
            "                      node's own first): cores (default: one thread per\n"
            "                      core, hyperthreads last), compact (a core's\n"
            "                      hyperthreads first), scatter or none (unpinned);\n"
            "                      recorded in calibration.occupancy[].pu_map\n"
            "  --quiet             no progress lines on stderr (warnings are still printed)\n"
            "  --json              print the profile document instead of tables\n"
            "  --csv               one of the tables as plain CSV: the nodes, or the one\n"
            "                      --table names (as machine show; with --repeat also spread)\n"
            "  --table NAME        with --csv: the table to print\n"
            "  -h, --help          this text\n"
            "\n"
            "Progress goes to stderr; errors are one line on stderr with exit status 2.\n"
            "Methods: docs/microbench.md.\n");
}

/* What a warning means for the profile just written, and what to do about
 * it: the first entry whose words all occur in the warning.  The warnings
 * themselves stay as the library recorded them (calibration.warnings); the
 * advice is the program's, printed after them on the same line. */
static const struct {
    const char *words[2];
    const char *usable, *todo;
} advice[] = {
    {{"synthetic", NULL}, "for testing only (its nodes are not this machine's)",
     "for this machine's profile, run gcscale calibrate without --topology"},
    {{"below the last-level cache", NULL}, "no (it measured the caches, not memory)",
     "rerun without --size (the default measures memory)"},
    {{"not pinned", NULL}, "on a one-node machine (elsewhere its latencies may mix nodes)",
     "rerun where the process may set its CPU affinity (not in a restricted cpuset or container)"},
    {{"not bound", NULL}, "on a one-node machine (elsewhere its latencies may mix nodes)",
     "rerun where the process may set its memory policy (mbind; not in a restricted container)"},
    {{"placement not checked", NULL}, "yes (the memory was bound, only not checked)",
     "nothing, or rerun where move_pages is allowed to check it"},
    {{"madvise(", NULL}, "yes (the buffer got the kernel's default pages; calibration.buffers says which)",
     "nothing"},
    {{"huge pages were asked for", NULL}, "yes (full_random_ns for huge pages is left out; the model does not use it)",
     "to measure it, allow transparent huge pages (madvise or always in "
     "/sys/kernel/mm/transparent_hugepage/enabled) and rerun"},
    {{"S_O of memory node", "unreliable"}, "yes (gcscale predict names the contention term resting on it)",
     "for a measured S_O, rerun on an idle machine (--repeat 3 shows the spread)"},
    {{"the load points disagree with", NULL}, "yes (S_O is fitted; only its M1 is in doubt)",
     "if contention matters for your heaps (lost_contention in gcscale predict), rerun on an idle machine"},
    {{"chains share", NULL}, "yes (the occupancy load points are shorter than planned)",
     "nothing, or rerun with a larger --size (the default) for longer load points"},
    {{"bandwidth of memory node", NULL}, "yes (the model does not use the bandwidth)", "nothing"},
    {{"gc_cost_ns.", "unreliable"}, "yes (gcscale predict names the work term resting on it)",
     "rerun gcscale calibrate --gc-only on an idle machine"},
    {{"gc_cost_ns:", "uncertain"}, "yes (both costs are positive; only their split is uncertain)",
     "rerun gcscale calibrate --gc-only on an idle machine"},
    {{"speed probe:", NULL},
     "yes (each constant is one measurement of a machine whose speed changed; calibration.speed_probe "
     "has both times)",
     "rerun when the machine is quiet; --repeat 3 (with --gc-only too) shows how far the constants move"},
    {{"gc_miss_overlap not fitted", NULL},
     "yes (model v2, the default, then prices misses without overlap and says its times are relative)",
     "rerun gcscale calibrate --gc-only on an idle machine to fit it"},
};

/* "gcscale calibrate: warning: TEXT; profile usable: ...; to do: ..." */
static void warn_with_advice(const char *text)
{
    char line[1024];
    snprintf(line, sizeof line, "%s", text);
    gcs_text_one_line(line);
    for (size_t i = 0; i < sizeof advice / sizeof advice[0]; i++) {
        if (!strstr(line, advice[i].words[0]) || (advice[i].words[1] && !strstr(line, advice[i].words[1])))
            continue;
        fprintf(stderr, "gcscale calibrate: warning: %s; profile usable: %s; to do: %s\n", line, advice[i].usable,
                advice[i].todo);
        return;
    }
    fprintf(stderr, "gcscale calibrate: warning: %s; profile usable: written with this warning in "
                    "calibration.warnings; to do: check the figure it names before relying on it\n", line);
}

/* The miss-overlap fit is an optional step of the library's run: a failed
 * one leaves the rest of the profile and records its error
 * (calibration.gc_overlap.error), said here as soon as the run returns. */
static void warn_overlap(gcs_profile *p)
{
    json_t *overlap = json_object_get(gcs_profile_calibration(p), "gc_overlap");
    const char *error = json_string_value(json_object_get(overlap, "error"));
    if (error) {
        char line[1024];
        snprintf(line, sizeof line, "gc_miss_overlap not fitted: %s", error);
        warn_with_advice(line);
    }
}

/* The calibration's warnings (calibration.warnings: a synthetic topology
 * that pins and binds nothing, placement, a chase buffer within the caches,
 * an S_O that is a bound or a fallback, ...) go into the profile like its
 * measurements: say so where they cannot be missed, once each, even with
 * --quiet.  An S_O warning (s_o_warning next to its fit) is also among the
 * warnings; one that were not would still be printed, but only once. */
static void print_warnings(gcs_profile *p)
{
    json_t *cal = gcs_profile_calibration(p);
    json_t *printed = json_array();
    json_t *all = json_array();
    size_t i;
    json_t *v;
    json_array_extend(all, json_object_get(cal, "warnings"));
    json_array_foreach(json_object_get(cal, "occupancy"), i, v)
        json_array_append(all, json_object_get(v, "s_o_warning"));
    json_array_foreach(all, i, v) {
        const char *w = json_string_value(v);
        if (!w || !w[0])
            continue;
        int seen = 0;
        size_t k;
        json_t *q;
        json_array_foreach(printed, k, q)
            if (strcmp(json_string_value(q), w) == 0)
                seen = 1;
        if (seen)
            continue;
        json_array_append_new(printed, json_string(w));
        warn_with_advice(w);
    }
    json_decref(printed);
    json_decref(all);
}

/* --gc-only: a marker cost the run marked unreliable, one line each; and
 * the cost fit's own warning where no such line carried it (the costs were
 * unreliable for another reason already). */
static void print_unreliable_costs(gcs_profile *p)
{
    const char *name, *reason;
    const char *fit_warning =
        json_string_value(json_object_get(json_object_get(gcs_profile_calibration(p), "gc_costs"), "warning"));
    int said = 0;
    for (int i = 0; gcs_profile_unreliable_at(p, i, &name, &reason) == 0; i++)
        if (strncmp(name, "gc_cost_ns.", 11) == 0) {
            char line[1024];
            snprintf(line, sizeof line, "%s is unreliable (%s)", name, reason);
            warn_with_advice(line);
            said |= fit_warning && strstr(line, fit_warning) != NULL;
        }
    if (fit_warning && !said)
        warn_with_advice(fit_warning);
}

/* --gc-only puts this machine's marker costs into the profile FILE: one of
 * another machine (another host, or as many CPUs as this one has not) would
 * silently describe a machine with a collector it never ran.  Returns 0
 * when the profile is this machine's, else 1 with msg saying how it is not.
 * A profile calibrated on a synthetic topology has the topology's CPUs, not
 * the host's: only its host counts. */
static int foreign_profile(gcs_profile *p, const char *path, char *msg, size_t len)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        snprintf(host, sizeof host, "unknown");
    int pcpus = gcs_profile_cpus(p);
    int cpus = -1;
    gcs_err err;
    gcs_topo *t = gcs_topo_load(NULL, &err);
    if (t) {
        cpus = 0;
        for (int k = 0; k < gcs_topo_nnodes(t); k++)
            cpus += gcs_topo_node_at(t, k)->ncpus;
        gcs_topo_free(t);
    }
    int synthetic = json_is_true(json_object_get(gcs_profile_calibration(p), "synthetic"));
    int other_host = strcmp(p->host, host) != 0;
    int other_cpus = !synthetic && cpus >= 0 && pcpus != cpus;
    if (!other_host && !other_cpus)
        return 0;
    snprintf(msg, len, "%.160s is the profile of %s%.80s%s (%d CPUs%s), this is host \"%.80s\" (%d CPUs)",
             path,
             other_host ? "host \"" : "this host with other CPUs", other_host ? p->host : "",
             other_host ? "\"" : "", pcpus, synthetic ? " on a synthetic topology" : "", host, cpus);
    gcs_text_one_line(msg);
    return 1;
}

int cmd_calibrate(int argc, char **argv)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},
        {"quick", no_argument, NULL, 'q'},
        {"gc-only", no_argument, NULL, 'g'},
        {"force", no_argument, NULL, 'F'},
        {"key", required_argument, NULL, 'K'},
        {"topology", required_argument, NULL, 't'},
        {"size", required_argument, NULL, 's'},
        {"seed", required_argument, NULL, 'S'},
        {"repeat", required_argument, NULL, 'R'},
        {"pin", required_argument, NULL, 'P'},
        {"quiet", no_argument, NULL, 'Q'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"table", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *table = NULL;
    gcs_calibrate_opts opts;
    gcs_calibrate_opts_init(&opts);
    const char *output = NULL, *key = NULL;
    gcs_format fmt = GCS_FORMAT_TEXT;
    int c, gc_only = 0, force = 0, repeat = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'q': opts.mode = GCS_CALIBRATE_QUICK; break;
        case 'g': gc_only = 1; break;
        case 'F': force = 1; break;
        case 'K': key = optarg; break;
        case 't': opts.synthetic = optarg; break;
        case 's': {
            opts.size_bytes = cli_parse_size(cmd, "--size", optarg);
            gcs_err err;
            if (gcs_chase_check_size(opts.size_bytes, &err) < 0)
                cli_usage_error(cmd, "--size: %s", err.msg);
            break;
        }
        case 'S': opts.seed = (uint64_t)cli_parse_long(cmd, "--seed", optarg, 1, (1L << 62)); break;
        case 'P': opts.placement = cli_parse_pin(cmd, optarg); break;
        case 'R': repeat = (int)cli_parse_long(cmd, "--repeat", optarg, 1, GCS_CALIBRATE_MAX_REPEAT); break;
        case 'Q': opts.quiet = 1; break;
        case 'j': cli_set_format(cmd, &fmt, GCS_FORMAT_JSON); break;
        case 'c': cli_set_format(cmd, &fmt, GCS_FORMAT_CSV); break;
        case 'T': table = optarg; break;
        case 'h': print_help(stdout); return 0;
        default: cli_bad_option(cmd, argv);
        }
    }
    if (optind < argc)
        cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (force && !gc_only)
        cli_usage_error(cmd, "--force goes with --gc-only (writing into another machine's profile)");
    if (key && !gc_only)
        cli_usage_error(cmd, "--key goes with --gc-only (one key into an existing profile)");
    if (key && repeat)
        cli_usage_error(cmd, "--key measures one key once: no --repeat");
    if (key && gcs_calibrate_update_key_work(NULL, key, 0) < 0)
        cli_usage_error(cmd, "--key: '%s' is none of gc_cost_ns.worker, gc_miss_overlap, gc_stream_line_ns, "
                             "gc_resident, gc_residency, gc_coord, "
                             "gc_coord.attempts_per_search, gc_mark_transfer_ns, gc_mark_transfer_cached_ns, gc_line_transfer_ns, "
                             "dependent_load_ns", key);
    /* A malformed description is bad input: say so before measuring. */
    if (!gc_only) {
        gcs_err err;
        gcs_topo *t = gcs_topo_load(opts.synthetic, &err);
        if (!t) {
            if (opts.synthetic)
                cli_usage_error(cmd, "--topology: %s", err.msg);
            cli_fail(cmd, &err);
        }
        gcs_topo_free(t);
    }

    char default_path[4096];
    if (!output) {
        /* --gc-only reads the profile there (nothing to create); a
         * calibration writes where every command will look for it */
        gcs_err perr;
        if (gcs_profile_default_path(default_path, sizeof default_path, !gc_only, &perr) < 0)
            cli_fail(cmd, &perr);
        output = default_path;
    }
    /* "-" is stdout: the document goes there once, in place of the tables
     * (printing both made stdout two documents, or a document and tables).
     * A file must be writable before a minute of measuring, not after. */
    int to_stdout = strcmp(output, "-") == 0;
    if (to_stdout && fmt == GCS_FORMAT_CSV)
        cli_usage_error(cmd, "-o - writes the profile document on stdout, where --csv tables cannot go too");
    if (!to_stdout)
        cli_check_output(cmd, "-o", output);

    gcs_err err = {{0}};
    gcs_profile *p = NULL;
    int quick = opts.mode == GCS_CALIBRATE_QUICK;
    /* One progress series for the whole job, kept here so that the overlap
     * warning comes before its "[100%] done". */
    gcs_progress pr;
    gcs_table *spread = NULL; /* --repeat */
    if (gc_only) {
        if (opts.synthetic || opts.size_bytes || opts.seed || opts.placement)
            cli_usage_error(cmd, "--gc-only measures the collector only: no --topology, --size, --seed or --pin");
        p = gcs_profile_load(output, &err);
        if (!p)
            cli_fail(cmd, &err);
        char foreign[440] = "";
        if (foreign_profile(p, to_stdout ? "the profile on stdin" : output, foreign, sizeof foreign)) {
            if (!force) {
                gcs_profile_free(p);
                gcs_err_set(&err, "%s: not this machine's (--force to write its marker costs into it)",
                            foreign);
                cli_fail(cmd, &err);
            }
            fprintf(stderr, "gcscale calibrate: warning: --force: %s; writing this machine's marker "
                    "costs into it\n", foreign);
        }
        gcs_progress_init(&pr,
                          key ? gcs_calibrate_update_key_work(p, key, quick)
                              : gcs_calibrate_update_gc_work(p, quick) * (repeat ? repeat : 1),
                          opts.quiet);
        gcs_profile *kept = NULL;
        int rc = key      ? gcs_calibrate_update_key(p, key, quick, &pr, &err)
                 : repeat ? gcs_calibrate_update_gc_repeat(p, quick, repeat, &pr, &kept, &spread, &err)
                          : gcs_calibrate_update_gc(p, quick, &pr, &err);
        if (rc < 0) {
            char msg[sizeof err.msg];
            snprintf(msg, sizeof msg, "%s", err.msg);
            gcs_err_set(&err, "%s: %s", output, msg);
            gcs_profile_free(p);
            cli_fail(cmd, &err);
        }
        if (kept) {
            gcs_profile_free(p);
            p = kept;
        }
        if (foreign[0]) /* the profile keeps the record of it */
            json_object_set_new(json_object_get(gcs_profile_calibration(p), "gc_only"), "forced",
                                json_string(foreign));
    } else {
        opts.progress = &pr;
        int rc = repeat ? gcs_calibrate_repeat(&opts, repeat, &p, &spread, &err)
                        : gcs_calibrate_run(&opts, &p, &err);
        if (rc < 0)
            cli_fail(cmd, &err);
    }
    warn_overlap(p);
    gcs_progress_finish(&pr);
    if (gcs_profile_save(p, output, &err) < 0) {
        gcs_profile_free(p);
        cli_fail(cmd, &err);
    }
    if (!to_stdout) {
        /* JSON: the document is the profile, whose calibration.repeat holds
         * the spread's rows. */
        cli_print_profile(cmd, p, fmt, table, spread, "spread");
    }
    gcs_table_free(spread);
    /* A --gc-only run adds no warnings (the profile's are its calibration's,
     * printed when it was made) but its own unreliable costs. */
    if (!gc_only) {
        print_warnings(p);
    } else {
        print_unreliable_costs(p);
        /* the one warning a --gc-only run can add */
        const char *drift = json_string_value(
            json_object_get(json_object_get(gcs_profile_calibration(p), "speed_probe"), "warning"));
        if (drift)
            warn_with_advice(drift);
    }
    gcs_profile_free(p);
    cli_finish(cmd);
    fprintf(stderr, "wrote %s\n", to_stdout ? "the profile on stdout" : output);
    return 0;
}
