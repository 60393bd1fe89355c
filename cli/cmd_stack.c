/* cmd_stack.c -- gcscale stack: managed speedup stacks from traces.
 *
 *   gcscale stack --single TRACE1 [--gc-log LOG] --multi TRACE_N [--gc-log LOG] [TRACE_M ...]
 *                 [--svg FILE] [--json | --csv] [--title TEXT]
 *
 * TRACE1 is a run with one application ("mutator") thread, each TRACE_N the
 * same work with N of them.  For each multi-threaded run the stack splits N
 * into measured speedup, GC, concurrent GC, JIT, initialization,
 * synchronization, imbalance, preemption and the residual "other"
 * (accounting.h; docs/speedup-stacks.md). */
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
            "usage: gcscale stack --single TRACE1 [--gc-log LOG]\n"
            "                     --multi TRACE_N [--gc-log LOG] [TRACE_M ...]\n"
            "                     [--svg FILE] [--json | --csv] [--title TEXT]\n"
            "\n"
            "Speedup stacks for managed programs (Du Bois et al.): for each multi-threaded\n"
            "run with N application (class \"mutator\") threads and wall time T_p, against\n"
            "the single-threaded run TRACE1 (exactly one application thread, same work):\n"
            "\n"
            "  N = speedup          T_1 / T_p, measured\n"
            "    + GC               (N T_GC,N - T_GC,1) / T_p   T_GC: stop-the-world pauses\n"
            "    + concurrent-gc    app threads' wait for a CPU held by concurrent GC / T_p\n"
            "    + jit              app threads' wait for a CPU held by JIT compilers / T_p\n"
            "    + initialization   (N T_seq,N - T_seq,1) / T_p\n"
            "                       T_seq: no application thread alive\n"
            "    + synchronization  sum of app threads' lock and barrier waits / T_p\n"
            "    + imbalance        sum of app threads' time exited while another ran / T_p\n"
            "    + preemption       the rest of app threads' wait for a CPU / T_p\n"
            "    + other            the rest (interference, overhead); may be < 0\n"
            "\n"
            "A pause runs from the first thread that stops for a collection (gc-stopped)\n"
            "until, after GC work was seen and while none goes on, the first thread resumes\n"
            "its own work: what the collector times as its pause.  Threads woken late after\n"
            "that are not GC time (their lag ends up in \"other\").\n"
            "\n"
            "Each moment of an application thread counts in one term at most (GC first, then\n"
            "initialization, imbalance, synchronization, CPU waits).  Traces of managed\n"
            "runtimes from 'gcscale trace --runtime' (e.g. java) have no GC states but GC\n"
            "and VM threads: their pauses are found in the trace, or taken from the\n"
            "runtime's GC log with --gc-log.  CPU waits (state \"preempted\") exist in\n"
            "'gcscale trace' traces only.\n"
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
            "                   mutator; traces from 'gcscale trace' without --runtime\n"
            "                   call them worker)\n"
            "  --gc-log LOG     after a --single or --multi trace of a JVM: take that run's\n"
            "                   pauses from its HotSpot GC log, written with\n"
            "                   -Xlog:gc:file=LOG:tn (tn: the trace's clock)\n"
            "  --json           one JSON document; --csv: the stack table as CSV\n"
            "  -h, --help       this text\n"
            "\n"
            "Method and examples: docs/speedup-stacks.md.\n",
            MAX_MULTI);
}

static const char *app_class = GCS_ACCT_APP_CLASS;

/* Where a trace's stop-the-world pauses came from: its own GC states (the
 * built-in recorder), the runtime's GC log, found in the trace from its
 * GC/VM threads (gcscale trace --runtime), or nowhere. */
typedef struct pause_info {
    const char *source;         /* "recorded", "log", "trace", "none" */
    size_t n;
    double ms;
} pause_info;

/* single: a --single trace.  An unmodified serial program traced with
 * 'gcscale trace' has one thread, its main thread (class "main"), where its
 * parallel runs have worker threads: that one thread is the application
 * thread of the single-threaded run, whatever its class.  log: the
 * runtime's GC log of this run, or NULL. */
static void run_times(const char *path, int single, const char *log, gcs_acct_run_times *rt, pause_info *pi)
{
    gcs_err err;
    gcs_trace *t = gcs_trace_read(path, &err);
    if (!t)
        cli_fail(cmd, &err);
    const char *cls = single && t->nthreads == 1 ? t->threads[0].cls : app_class;
    *pi = (pause_info){.source = "none"};
    if (gcs_acct_has_gc_states(t)) {
        pi->source = "recorded";
        if (log)
            cli_usage_error(cmd, "--gc-log %s: %s already holds the collector's own GC states", log, path);
    } else if (log || gcs_acct_has_gc_roles(t)) {
        gcs_acct_pause *p = NULL;
        size_t n = 0;
        int rc = log ? gcs_acct_hotspot_log_pauses(log, t->start_ns, t->end_ns, &p, &n, &err)
                     : gcs_acct_find_pauses(t, cls, &p, &n, &err);
        if (rc < 0 || gcs_acct_apply_pauses(t, p, n, cls, &err) < 0)
            cli_fail(cmd, &err);
        pi->source = log ? "log" : "trace";
        pi->n = n;
        for (size_t k = 0; k < n; k++)
            pi->ms += (double)(p[k].end_ns - p[k].start_ns) / 1e6;
        free(p);
    }
    if (gcs_acct_run_times_compute(t, cls, rt, &err) != 0)
        cli_fail(cmd, &err);
    gcs_trace_free(t);
}

int cmd_stack(int argc, char **argv)
{
    enum { O_SINGLE = 256, O_MULTI, O_SVG, O_TITLE, O_LABELS, O_APP, O_GCLOG };
    static const struct option options[] = {
        {"single", required_argument, NULL, O_SINGLE},
        {"multi", required_argument, NULL, O_MULTI},
        {"svg", required_argument, NULL, O_SVG},
        {"title", required_argument, NULL, O_TITLE},
        {"labels", required_argument, NULL, O_LABELS},
        {"app-class", required_argument, NULL, O_APP},
        {"gc-log", required_argument, NULL, O_GCLOG},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *singles[MAX_MULTI], *svg = NULL, *title = NULL, *labels_arg = NULL;
    const char *multi[MAX_MULTI];
    int pair[MAX_MULTI];        /* multi[i] is compared with singles[pair[i]]; -1: the first */
    const char *single_log[MAX_MULTI] = {0}, *multi_log[MAX_MULTI] = {0};
    int nsingle = 0, nmulti = 0, c, last_multi = 0; /* last_multi: the trace before --gc-log was a --multi */
    gcs_format fmt = GCS_FORMAT_TEXT;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case O_SINGLE:
            if (nsingle == MAX_MULTI)
                cli_usage_error(cmd, "more than %d single-threaded traces", MAX_MULTI);
            singles[nsingle++] = optarg;
            last_multi = 0;
            break;
        case O_MULTI:
            if (nmulti == MAX_MULTI)
                cli_usage_error(cmd, "more than %d multi-threaded traces", MAX_MULTI);
            pair[nmulti] = nsingle - 1;
            multi[nmulti++] = optarg;
            last_multi = 1;
            break;
        case O_GCLOG: {
            const char **slot = last_multi ? &multi_log[nmulti - 1] : nsingle ? &single_log[nsingle - 1] : NULL;
            if (!slot)
                cli_usage_error(cmd, "--gc-log %s: give it after the --single or --multi trace of its run", optarg);
            if (*slot)
                cli_usage_error(cmd, "--gc-log %s: that trace has the log %s already", optarg, *slot);
            *slot = optarg;
            break;
        }
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
    pause_info st_pi[MAX_MULTI], mt_pi[MAX_MULTI];
    for (int k = 0; k < nsingle; k++)
        run_times(singles[k], 1, single_log[k], &st[k], &st_pi[k]);
    gcs_acct_stack stacks[MAX_MULTI];
    const char *single_of[MAX_MULTI];
    for (int i = 0; i < nmulti; i++) {
        int k = pair[i] < 0 ? 0 : pair[i];
        single_of[i] = singles[k];
        gcs_acct_run_times mt;
        run_times(multi[i], 0, multi_log[i], &mt, &mt_pi[i]);
        if (gcs_acct_stack_compute(&st[k], &mt, app_class, &stacks[i], &err) != 0) {
            gcs_err e2;
            gcs_err_set(&e2, "%s vs %s: %s", singles[k], multi[i], err.msg);
            cli_fail(cmd, &e2);
        }
        /* A "multi-threaded" run with one application thread (xz -T2 on a
         * small file starts one worker) gives a stack of height 1: say so
         * rather than let it pass for a scaling result. */
        if (mt.napp == 1)
            fprintf(stderr,
                    "gcscale %s: warning: %s has only one application (class \"%s\") thread, like the "
                    "single-threaded run: its stack shows no parallel scaling (did the program start fewer "
                    "threads than asked?)\n",
                    cmd, multi[i], app_class);
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
            json_object_set_new(s, "pauses", json_pack("{s:s, s:I, s:o}", "source", mt_pi[i].source, "count",
                                                      (json_int_t)mt_pi[i].n, "ms", json_real(mt_pi[i].ms)));
            json_array_append_new(arr, s);
        }
        json_t *doc = json_pack("{s:s, s:o}", "single", single, "stacks", arr);
        if (svg)
            json_object_set_new(doc, "svg", json_string(svg));
        cli_print_doc("gcscale-stack", doc);
        return 0;
    }
    const char *cols[3 + GCS_ACCT_STACK_COMPONENTS + 1] = {"trace", "N", "T_ms"};
    for (int k = 0; k < GCS_ACCT_STACK_COMPONENTS; k++)
        cols[3 + k] = gcs_acct_stack_component_names[k];
    cols[3 + GCS_ACCT_STACK_COMPONENTS] = "sum";
    gcs_table *tab = gcs_table_new("speedup stacks (each adds up to N)", 3 + GCS_ACCT_STACK_COMPONENTS + 1, cols);
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
        static const char *const icols[] = {"trace",   "app_threads", "wall_ms", "pauses", "gc_ms",
                                            "seq_ms",  "sync_ms",     "exit_ms", "blocked_other_ms", "gc_lag_ms",
                                            "preempt_ms", "jit_ms",   "conc_gc_ms"};
        gcs_table *in = gcs_table_new("inputs (sync, exit, blocked_other, gc_lag, preempt, jit, conc_gc: summed over "
                                      "application threads; pauses: where gc_ms comes from)",
                                      13, icols);
        for (int i = -nsingle; i < nmulti; i++) {
            const gcs_acct_run_times *r = i < 0 ? &st[nsingle + i] : &stacks[i].mt;
            gcs_table_add_str(in, i < 0 ? singles[nsingle + i] : multi[i]);
            gcs_table_add_int(in, r->napp);
            gcs_table_add_num(in, r->wall_ns / 1e6, 3);
            const pause_info *pi = i < 0 ? &st_pi[nsingle + i] : &mt_pi[i];
            char pbuf[48];
            if (strcmp(pi->source, "log") == 0 || strcmp(pi->source, "trace") == 0)
                snprintf(pbuf, sizeof pbuf, "%zu from %s", pi->n, pi->source);
            else
                snprintf(pbuf, sizeof pbuf, "%s", pi->source);
            gcs_table_add_str(in, pbuf);
            gcs_table_add_num(in, r->gc_ns / 1e6, 3);
            gcs_table_add_num(in, r->seq_ns / 1e6, 3);
            gcs_table_add_num(in, r->sync_ns / 1e6, 3);
            gcs_table_add_num(in, r->exit_ns / 1e6, 3);
            gcs_table_add_num(in, r->blocked_other_ns / 1e6, 3);
            gcs_table_add_num(in, r->gc_lag_ns / 1e6, 3);
            gcs_table_add_num(in, r->preempt_ns / 1e6, 3);
            gcs_table_add_num(in, r->jit_ns / 1e6, 3);
            gcs_table_add_num(in, r->conc_gc_ns / 1e6, 3);
        }
        printf("\n");
        gcs_table_print(in, stdout, GCS_FORMAT_TEXT);
        gcs_table_free(in);
        if (svg)
            printf("\nwrote %s\n", svg);
    }
    return 0;
}
