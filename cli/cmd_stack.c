/* cmd_stack.c -- gcscale stack: managed speedup stacks from traces.
 *
 *   gcscale stack --single TRACE1 --multi TRACE_N [TRACE_M ...] [--svg FILE]
 *                 [--json | --csv] [--title TEXT]
 *
 * TRACE1 is a run with one application ("mutator") thread, each TRACE_N the
 * same work with N of them.  For each multi-threaded run the stack splits N
 * into measured speedup, GC, initialization, synchronization, imbalance and
 * the residual "other" (accounting.h; docs/speedup-stacks.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gcscale/accounting.h"

static const char *const cmd = "stack";

#define MAX_MULTI 32

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale stack --single TRACE1 --multi TRACE_N [TRACE_M ...] [--svg FILE]\n"
            "                     [--json | --csv] [--title TEXT]\n"
            "\n"
            "Speedup stacks for managed programs (Du Bois et al.): for each multi-threaded\n"
            "run with N application (class \"mutator\") threads and wall time T_p, against\n"
            "the single-threaded run TRACE1 (exactly one application thread, same work):\n"
            "\n"
            "  N = speedup          T_1 / T_p, measured\n"
            "    + GC               (N T_GC,N - T_GC,1) / T_p   T_GC: stop-the-world pauses\n"
            "    + initialization   (N T_seq,N - T_seq,1) / T_p T_seq: no application thread alive\n"
            "    + synchronization  sum of app threads' lock and barrier waits / T_p\n"
            "    + imbalance        sum of app threads' time exited while another ran / T_p\n"
            "    + other            the rest (interference, preemption, overhead); may be < 0\n"
            "\n"
            "A pause runs from the first thread that stops for a collection (gc-stopped)\n"
            "until, after GC work was seen and while none goes on, the first thread resumes\n"
            "its own work: what the collector times as its pause.  Threads woken late after\n"
            "that are not GC time (their lag ends up in \"other\").\n"
            "\n"
            "Each moment of an application thread counts in one term at most (GC first, then\n"
            "initialization, imbalance, synchronization).  The GC term needs traces from the\n"
            "built-in recorder ('gcscale run --trace'); 'gcscale trace' sees no GC states.\n"
            "\n"
            "options:\n"
            "  --single TRACE1  the run with one application thread; a trace with one\n"
            "                   thread in all (an unmodified serial program) counts that\n"
            "                   one, whatever its class\n"
            "  --multi TRACE    a run with N application threads; repeat it, or list more\n"
            "                   traces after it (up to %d).  --single may be given again:\n"
            "                   each --multi is compared with the --single before it (the\n"
            "                   first one if none came before), listed traces with the last;\n"
            "                   so one picture can hold stacks against different baselines\n"
            "                   (e.g. 1 and 2 GC threads, each against its own 1-mutator run)\n"
            "  --svg FILE       the stacks side by side as SVG (crash-safe)\n"
            "  --labels L1,L2,.. labels under the SVG's bars, one per multi trace in order\n"
            "                   (default: N = n)\n"
            "  --title TEXT     the SVG's title\n"
            "  --app-class C    the class of the application threads N counts (default\n"
            "                   mutator; traces from 'gcscale trace' call them worker)\n"
            "  --json           one JSON document; --csv: the stack table as CSV\n"
            "  -h, --help       this text\n"
            "\n"
            "Method and examples: docs/speedup-stacks.md.\n",
            MAX_MULTI);
}

static const char *app_class = GCS_ACCT_APP_CLASS;

/* single: a --single trace.  An unmodified serial program traced with
 * 'gcscale trace' has one thread, its main thread (class "main"), where its
 * parallel runs have worker threads: that one thread is the application
 * thread of the single-threaded run, whatever its class. */
static void run_times(const char *path, int single, gcs_acct_run_times *rt)
{
    gcs_err err;
    gcs_trace *t = gcs_trace_read(path, &err);
    if (!t)
        cli_fail(cmd, &err);
    const char *cls = single && t->nthreads == 1 ? t->threads[0].cls : app_class;
    if (gcs_acct_run_times_compute(t, cls, rt, &err) != 0)
        cli_fail(cmd, &err);
    gcs_trace_free(t);
}

int cmd_stack(int argc, char **argv)
{
    enum { O_SINGLE = 256, O_MULTI, O_SVG, O_TITLE, O_LABELS, O_APP };
    static const struct option options[] = {
        {"single", required_argument, NULL, O_SINGLE},
        {"multi", required_argument, NULL, O_MULTI},
        {"svg", required_argument, NULL, O_SVG},
        {"title", required_argument, NULL, O_TITLE},
        {"labels", required_argument, NULL, O_LABELS},
        {"app-class", required_argument, NULL, O_APP},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *singles[MAX_MULTI], *svg = NULL, *title = NULL, *labels_arg = NULL;
    const char *multi[MAX_MULTI];
    int pair[MAX_MULTI];        /* multi[i] is compared with singles[pair[i]]; -1: the first */
    int nsingle = 0, nmulti = 0, c;
    gcs_format fmt = GCS_FORMAT_TEXT;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case O_SINGLE:
            if (nsingle == MAX_MULTI)
                cli_usage_error(cmd, "more than %d single-threaded traces", MAX_MULTI);
            singles[nsingle++] = optarg;
            break;
        case O_MULTI:
            if (nmulti == MAX_MULTI)
                cli_usage_error(cmd, "more than %d multi-threaded traces", MAX_MULTI);
            pair[nmulti] = nsingle - 1;
            multi[nmulti++] = optarg;
            break;
        case O_SVG: svg = optarg; break;
        case O_TITLE: title = optarg; break;
        case O_LABELS: labels_arg = optarg; break;
        case O_APP: app_class = optarg; break;
        default:
            cli_common_option(cmd, c, argv, &fmt, print_help);
        }
    }
    if (optind < argc && !nmulti)
        cli_usage_error(cmd, "unexpected argument '%s' (traces of multi-threaded runs go after --multi)",
                        argv[optind]);
    for (; optind < argc; optind++) {
        if (nmulti == MAX_MULTI)
            cli_usage_error(cmd, "more than %d multi-threaded traces", MAX_MULTI);
        pair[nmulti] = nsingle - 1;
        multi[nmulti++] = argv[optind];
    }
    if (!nsingle)
        cli_usage_error(cmd, "missing --single TRACE1 (a run with one application thread)");
    if (!nmulti)
        cli_usage_error(cmd, "missing --multi TRACE_N (at least one multi-threaded run)");

    gcs_err err;
    gcs_acct_run_times st[MAX_MULTI];
    for (int k = 0; k < nsingle; k++)
        run_times(singles[k], 1, &st[k]);
    gcs_acct_stack stacks[MAX_MULTI];
    const char *single_of[MAX_MULTI];
    for (int i = 0; i < nmulti; i++) {
        int k = pair[i] < 0 ? 0 : pair[i];
        single_of[i] = singles[k];
        gcs_acct_run_times mt;
        run_times(multi[i], 0, &mt);
        if (gcs_acct_stack_compute(&st[k], &mt, app_class, &stacks[i], &err) != 0) {
            gcs_err e2;
            gcs_err_set(&e2, "%s vs %s: %s", singles[k], multi[i], err.msg);
            cli_fail(cmd, &e2);
        }
    }
    const char *single = singles[0];
    if (svg) {
        char sub[400];
        if (nsingle == 1)
            snprintf(sub, sizeof sub, "against %.100s (T_1 = %.1f ms); components add up to N", cli_base_name(single),
                     st[0].wall_ns / 1e6);
        else
            snprintf(sub, sizeof sub, "each against the single-threaded run given before it; components add up to N");
        const char *names[MAX_MULTI] = {0};
        char *copy = labels_arg ? strdup(labels_arg) : NULL;
        if (labels_arg) {
            int k = 0;
            for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                if (k < MAX_MULTI)
                    names[k++] = tok;
            if (k != nmulti)
                cli_usage_error(cmd, "--labels: %d labels for %d multi-threaded traces", k, nmulti);
        }
        if (gcs_acct_stacks_write_svg(stacks, names, nmulti, title ? title : "Speedup stacks", sub, svg, &err) != 0)
            cli_fail(cmd, &err);
        free(copy);
    }
    if (fmt == GCS_FORMAT_JSON) {
        json_t *arr = json_array();
        for (int i = 0; i < nmulti; i++) {
            json_t *s = gcs_acct_stack_to_json(&stacks[i]);
            json_object_set_new(s, "trace", json_string(multi[i]));
            json_object_set_new(s, "single_trace", json_string(single_of[i]));
            json_array_append_new(arr, s);
        }
        json_t *doc = json_pack("{s:s, s:o}", "single", single, "stacks", arr);
        if (svg)
            json_object_set_new(doc, "svg", json_string(svg));
        cli_print_doc("gcscale-stack", doc);
        return 0;
    }
    static const char *const cols[] = {"trace", "N", "T_ms", "speedup", "gc", "initialization",
                                       "synchronization", "imbalance", "other", "sum"};
    gcs_table *tab = gcs_table_new("speedup stacks (each adds up to N)", 10, cols);
    for (int i = 0; i < nmulti; i++) {
        double v[GCS_ACCT_STACK_COMPONENTS], sum = 0;
        gcs_acct_stack_values(&stacks[i], v);
        gcs_table_add_str(tab, multi[i]);
        gcs_table_add_int(tab, stacks[i].n);
        gcs_table_add_num(tab, stacks[i].mt.wall_ns / 1e6, 3);
        for (int k = 0; k < GCS_ACCT_STACK_COMPONENTS; k++) {
            gcs_table_add_num(tab, v[k], 3);
            sum += v[k];
        }
        gcs_table_add_num(tab, sum, 3);
    }
    gcs_table_print(tab, stdout, fmt);
    gcs_table_free(tab);
    if (fmt != GCS_FORMAT_CSV) {
        static const char *const icols[] = {"trace", "app_threads", "wall_ms", "gc_ms", "seq_ms", "sync_ms",
                                            "exit_ms", "blocked_other_ms", "gc_lag_ms"};
        gcs_table *in = gcs_table_new("inputs (sync, exit, blocked_other, gc_lag: summed over application threads)",
                                      9, icols);
        for (int i = -nsingle; i < nmulti; i++) {
            const gcs_acct_run_times *r = i < 0 ? &st[nsingle + i] : &stacks[i].mt;
            gcs_table_add_str(in, i < 0 ? singles[nsingle + i] : multi[i]);
            gcs_table_add_int(in, r->napp);
            gcs_table_add_num(in, r->wall_ns / 1e6, 3);
            gcs_table_add_num(in, r->gc_ns / 1e6, 3);
            gcs_table_add_num(in, r->seq_ns / 1e6, 3);
            gcs_table_add_num(in, r->sync_ns / 1e6, 3);
            gcs_table_add_num(in, r->exit_ns / 1e6, 3);
            gcs_table_add_num(in, r->blocked_other_ns / 1e6, 3);
            gcs_table_add_num(in, r->gc_lag_ns / 1e6, 3);
        }
        printf("\n");
        gcs_table_print(in, stdout, GCS_FORMAT_TEXT);
        gcs_table_free(in);
        if (svg)
            printf("\nwrote %s\n", svg);
    }
    return 0;
}
