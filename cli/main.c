/* main.c -- the gcscale program: dispatches to one subcommand.
 *
 *   gcscale [--version] [--help] COMMAND [ARGS...]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"calibrate", cmd_calibrate, "measure this machine and write its machine profile (JSON)"},
    {"bench",     cmd_bench,     "microbenchmarks: latency, rw, occupancy, bandwidth, sweep, topology"},
    {"machine",   cmd_machine,   "show and validate a machine profile: machine show FILE"},
    {"gc-bench",  cmd_gc_bench,  "time full collections of a canonical heap at P = 1..ncpus"},
    {"predict",   cmd_predict,   "predict mark time and speedup of a snapshot's heap for every P"},
    {"snapshot",  cmd_snapshot,  "heap snapshots and dumps: info, import (HPROF, V8), reorder, synth"},
    {"trace",     cmd_trace,     "trace an unmodified program's threads through scheduler tracepoints"},
    {"run",       cmd_run,       "run a workload (bh, cube, cky, chain) on the collector; GC log"},
    {"bottle",    cmd_bottle,    "bottle graph of a trace: each thread's share and parallelism"},
    {"stack",     cmd_stack,     "speedup stacks from traces of a 1-thread and N-thread run"},
    {"validate",  cmd_validate,  "the model and adaptive GC threads against the collector: a report"},
    {"corpus",    cmd_corpus,    "the measured corpus: record (this machine), accuracy (the model)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale [--version] [--help] COMMAND [ARGS...]\n"
            "\n"
            "gcscale measures a machine's memory system, runs an instrumented parallel\n"
            "mark-sweep collector and predicts how many GC threads a heap deserves.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "  %-10s %s\n", "help", "this text, or 'gcscale help COMMAND' for one command");
    fprintf(fp, "\n'gcscale COMMAND --help' describes each command's options.\n");
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "%s", name);
    gcs_text_one_line(quoted);
    fprintf(stderr, "gcscale: unknown command '%s' (see 'gcscale help')\n", quoted);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0 || strcmp(name, "version") == 0) {
        printf("gcscale %s\n", gcs_version());
        return 0;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        print_help(stdout);
        return 0;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            print_help(stdout);
            return 0;
        }
        const command *c = find_command(argv[2]);
        if (!c)
            return unknown_command(argv[2]);
        char *help_argv[] = {(char *)c->name, "--help", NULL};
        return c->run(2, help_argv);
    }
    const command *c = find_command(name);
    if (!c)
        return unknown_command(name);
    /* The subcommand sees argv[0] = its own name, as getopt_long expects. */
    return c->run(argc - 1, argv + 1);
}
