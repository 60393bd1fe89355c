/* cmd_bottle.c -- gcscale bottle: the bottle graph of a thread-state trace.
 *
 *   gcscale bottle TRACE [--svg FILE] [--json | --csv] [--group thread|class]
 *                        [--active cpu|useful] [--title TEXT]
 *
 * Reads a trace (docs/trace-format.md), runs interval accounting
 * (accounting.h) and prints one row per box, widest first (the bottom of the
 * graph): share of the run time (box height), share in percent (the
 * criticality stack), run time (area) and parallelism (width). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gcscale/accounting.h"

static const char *const cmd = "bottle";

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale bottle TRACE [--svg FILE] [--json | --csv] [--group thread|class]\n"
            "                            [--active cpu|useful] [--title TEXT]\n"
            "\n"
            "Draws the bottle graph of a thread-state trace (written by 'gcscale run --trace'\n"
            "or 'gcscale trace'; format: docs/trace-format.md).  Time is cut at every state\n"
            "change; in each interval the r active threads each get 1/r of it as their share.\n"
            "A box's height is its share of the run time, its width its parallelism (run\n"
            "time / share), its area its run time; boxes are stacked widest at the bottom.\n"
            "Time when no thread is active is idle time, reported apart: the box heights add\n"
            "up to wall time minus idle time.  share_pct is the criticality stack.\n"
            "\n"
            "options:\n"
            "  --svg FILE       write the bottle graph as SVG (crash-safe)\n"
            "  --group G        thread: one box per thread (threads that share a name are\n"
            "                   told apart by their tid); class: one box per thread\n"
            "                   class (mutator, gc, main, ...), share = sum of shares,\n"
            "                   parallelism = sum of run times / sum of shares.  Default:\n"
            "                   class for traces of managed runtimes ('gcscale trace\n"
            "                   --runtime': roles gc, gc-conc, jit, vm, ...), else thread\n"
            "  --active A       which states are active: cpu (default) = running, gc-mark,\n"
            "                   gc-search, gc-sweep, as the OS sees them; useful = the same\n"
            "                   without gc-search (spinning), as criticality stacks count\n"
            "  --title TEXT     the SVG's title (default: the trace's command)\n"
            "  --json           one JSON document (boxes, totals, per-thread state times)\n"
            "  --csv            the box table as CSV\n"
            "  -h, --help       this text\n"
            "\n"
            "Method and examples: docs/speedup-stacks.md.\n");
}

static json_t *threads_json(const gcs_acct *a)
{
    json_t *arr = json_array();
    for (size_t j = 0; j < a->nthreads; j++) {
        const gcs_acct_thread *th = &a->threads[j];
        json_t *states = json_object();
        for (int s = 0; s < GCS_TRACE_STATE_COUNT; s++)
            if (th->state_ns[s] > 0)
                json_object_set_new(states, gcs_trace_state_name((gcs_trace_state)s),
                                    json_real(th->state_ns[s] / 1e6));
        json_array_append_new(arr, json_pack("{s:I, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "tid",
                                             (json_int_t)th->tid, "name", th->name, "class", th->cls, "start_ms",
                                             json_real(th->start_ns / 1e6), "end_ms", json_real(th->end_ns / 1e6),
                                             "run_ms", json_real(th->run_ns / 1e6), "share_ms",
                                             json_real(th->share_ns / 1e6), "parallelism",
                                             th->share_ns > 0 ? json_real(th->parallelism) : json_null(),
                                             "state_ms", states));
    }
    return arr;
}

int cmd_bottle(int argc, char **argv)
{
    enum { O_SVG = 256, O_GROUP, O_ACTIVE, O_TITLE };
    static const struct option options[] = {
        {"svg", required_argument, NULL, O_SVG},
        {"group", required_argument, NULL, O_GROUP},
        {"active", required_argument, NULL, O_ACTIVE},
        {"title", required_argument, NULL, O_TITLE},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *svg = NULL, *title = NULL;
    gcs_acct_grouping group = GCS_ACCT_BY_THREAD;
    int group_given = 0;
    uint32_t mask = GCS_ACCT_ACTIVE_CPU;
    int c;
    gcs_format fmt = GCS_FORMAT_TEXT;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case O_SVG: svg = optarg; break;
        case O_TITLE: title = optarg; break;
        case O_GROUP:
            group_given = 1;
            if (strcmp(optarg, "thread") == 0)
                group = GCS_ACCT_BY_THREAD;
            else if (strcmp(optarg, "class") == 0)
                group = GCS_ACCT_BY_CLASS;
            else
                cli_usage_error(cmd, "--group: expected thread or class, got '%s'", optarg);
            break;
        case O_ACTIVE:
            if (strcmp(optarg, "cpu") == 0)
                mask = GCS_ACCT_ACTIVE_CPU;
            else if (strcmp(optarg, "useful") == 0)
                mask = GCS_ACCT_ACTIVE_USEFUL;
            else
                cli_usage_error(cmd, "--active: expected cpu or useful, got '%s'", optarg);
            break;
        default:
            cli_common_option(cmd, c, argv, &fmt, print_help);
        }
    }
    if (optind >= argc)
        cli_usage_error(cmd, "missing TRACE");
    if (argc - optind > 1)
        cli_usage_error(cmd, "unexpected argument '%s' (one TRACE at a time)", argv[optind + 1]);
    const char *path = argv[optind];

    gcs_err err;
    gcs_trace *t = gcs_trace_read(path, &err);
    if (!t)
        cli_fail(cmd, &err);
    /* A runtime's roles are what its bottle graph is about; its threads
     * one by one (tens of JVM threads) are the detail. */
    if (!group_given && gcs_acct_has_gc_roles(t))
        group = GCS_ACCT_BY_CLASS;
    gcs_acct *a = gcs_acct_compute(t, mask, &err);
    if (!a)
        cli_fail(cmd, &err);
    gcs_acct_bottle *b = gcs_acct_bottle_make(a, group, NULL, &err);
    if (!b)
        cli_fail(cmd, &err);
    const char *active_name = mask == GCS_ACCT_ACTIVE_CPU ? "cpu" : "useful";
    const char *group_name = group == GCS_ACCT_BY_CLASS ? "class" : "thread";
    if (svg) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s trace, %zu threads, active = %s", t->source, t->nthreads, active_name);
        char deftitle[300];
        snprintf(deftitle, sizeof deftitle, "Bottle graph: %.280s", t->command ? t->command : path);
        if (gcs_acct_bottle_write_svg(b, title ? title : deftitle, sub, svg, &err) != 0)
            cli_fail(cmd, &err);
    }
    if (fmt == GCS_FORMAT_JSON) {
        json_t *doc = gcs_acct_bottle_to_json(b);
        json_object_set_new(doc, "trace", json_string(path));
        json_object_set_new(doc, "source", json_string(t->source));
        json_object_set_new(doc, "command", t->command ? json_string(t->command) : json_null());
        json_object_set_new(doc, "active", json_string(active_name));
        json_object_set_new(doc, "group", json_string(group_name));
        json_object_set_new(doc, "intervals", json_integer((json_int_t)a->nintervals));
        json_object_set_new(doc, "threads", threads_json(a));
        if (svg)
            json_object_set_new(doc, "svg", json_string(svg));
        cli_print_doc("gcscale-bottle", doc);
    } else {
        gcs_table *tab = gcs_acct_bottle_table(b, "bottle graph, widest box (bottom) first");
        if (fmt != GCS_FORMAT_CSV) {
            char command[1024]; /* from the file: control characters shown as '?' */
            snprintf(command, sizeof command, "%s", t->command ? t->command : "");
            gcs_text_one_line(command);
            printf("trace %s: %s source, %zu thread%s, %zu events%s%s\n", path, t->source, t->nthreads,
                   t->nthreads == 1 ? "" : "s", t->nevents, t->command ? ", command: " : "", command);
            printf("wall %.3f ms = boxes %.3f ms + idle %.3f ms (no thread active); active = %s, one box per %s\n\n",
                   b->wall_ns / 1e6, b->busy_ns / 1e6, b->idle_ns / 1e6, active_name, group_name);
        }
        gcs_table_print(tab, stdout, fmt);
        gcs_table_free(tab);
        if (svg && fmt != GCS_FORMAT_CSV)
            printf("\nwrote %s\n", svg);
    }
    gcs_acct_bottle_free(b);
    gcs_acct_free(a);
    gcs_trace_free(t);
    return 0;
}
