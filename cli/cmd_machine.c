/* cmd_machine.c -- gcscale machine: show and validate a machine profile.
 *
 *   gcscale machine show FILE [--json|--csv]
 *
 * Loading is the validation: a file that "show" prints is one that predict
 * and the adaptive collector will accept. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const cmd = "machine";

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale machine show FILE [--json | --csv [--table NAME]]\n"
            "\n"
            "Loads a machine profile (format \"gcscale-machine\", version 1), checks every\n"
            "key, and prints it: nodes and their CPUs, caches, the read and RW latency\n"
            "matrices M1 (rows = CPU node, columns = memory node), occupancy S_O and\n"
            "bandwidth per memory node, GC costs and the counter source.  A profile that\n"
            "fails a check is reported in one line naming the key, with exit status 2.\n"
            "FILE may be - for standard input.\n"
            "\n"
            "Reference profiles from Endo, Taura and Yonezawa's Table 1:\n"
            "  data/machines/o2k.json    SGI Origin 2000, 32 nodes of 2 CPUs\n"
            "  data/machines/e10k.json   Sun Enterprise 10000, 16 memory nodes, 64 CPUs\n"
            "\n"
            "options:\n"
            "  --json      print the profile document itself (JSON)\n"
            "  --csv       one table as plain CSV (a header and rows): the nodes, or the\n"
            "              one --table names\n"
            "  --table NAME  nodes, caches, latency_read, latency_rw, page_walks,\n"
            "              dependent_load, residency, per_node, gc_costs, counters,\n"
            "              unreliable\n"
            "  -h, --help  this text\n"
            "\n"
            "The format is described in docs/machine-profile.md.\n");
}

static int show(const char *name, gcs_format fmt, const char *table)
{
    gcs_err err = {{0}};
    char path[4096];
    if (gcs_profile_find(name, path, sizeof path, &err) < 0)
        cli_fail(cmd, &err);
    gcs_profile *p = gcs_profile_load(path, &err);
    if (!p)
        cli_fail(cmd, &err); /* the message starts with the file name */
    cli_print_profile(cmd, p, fmt, table, NULL, NULL);
    gcs_profile_free(p);
    /* A full disk or closed pipe must not pass for a shown profile. */
    return cli_finish(cmd);
}

int cmd_machine(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"table", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *optstring = ":h";
    int c;
    gcs_format fmt = GCS_FORMAT_TEXT;
    const char *table = NULL;
    /* Options may come before or after the action and file (GNU getopt
     * permutes the operands to the end). */
    while ((c = getopt_long(argc, argv, optstring, options, NULL)) != -1) {
        switch (c) {
        case 't': table = optarg; break;
        default:
            cli_common_option(cmd, c, argv, &fmt, print_help);
        }
    }
    int nargs = argc - optind;
    if (nargs < 1)
        cli_usage_error(cmd, "missing action (show FILE)");
    const char *action = argv[optind];
    if (strcmp(action, "show") != 0)
        cli_usage_error(cmd, "unknown action '%s' (expected: show FILE)", action);
    if (nargs < 2)
        cli_usage_error(cmd, "show: missing FILE");
    if (nargs > 2)
        cli_usage_error(cmd, "show: unexpected argument '%s' (one FILE at a time)", argv[optind + 2]);
    return show(argv[optind + 1], fmt, table);
}
