/* cmd_run.c -- gcscale run: one of the paper's workloads (bh, cube, cky) on
 * gcscale's collector, with a summary of its collections.
 *
 *   gcscale run WORKLOAD [--mutators M] [--gc-threads N|adaptive[:MAX]]
 *       [--heap SIZE] [--size S] [--steps N] [--seed N] [--release-after N] [--machine PROFILE]
 *       [--pin cores|compact|scatter|none] [--log FILE] [--trace FILE] [--json] [--quiet]
 *   gcscale run --list
 *
 * The workloads are include/gcscale/workload.h; docs/workloads.md describes
 * them and their figures on the development machine.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gcscale/adaptive.h"
#include "gcscale/gc.h"
#include "gcscale/trace.h"
#include "gcscale/workload.h"

static const char *const cmd = "run";

/* Where the GC workers ran: the map of the collection with the most
 * workers (worker i keeps its PU for the run; a larger P only adds PUs). */
typedef struct pu_record {
    gcs_topo_placement placement;
    int n;
    int os[GCS_GC_MAX_THREADS], logical[GCS_GC_MAX_THREADS];
} pu_record;

static void keep_pu_map(const gcs_gc_stats *st, void *arg)
{
    pu_record *r = arg;
    if (st->threads <= r->n)
        return;
    r->placement = st->placement;
    for (r->n = 0; r->n < st->threads && r->n < GCS_GC_MAX_THREADS; r->n++) {
        r->os[r->n] = st->workers[r->n].cpu;
        r->logical[r->n] = st->workers[r->n].pu;
    }
}

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale run WORKLOAD [options] [--json]\n"
            "       gcscale run --list\n"
            "\n"
            "Runs one of the paper's application workloads, multi-threaded, on gcscale's\n"
            "collector and summarizes its collections: wall time of the parallel phase\n"
            "(from the mutators' start to their end; input set-up and the answer's check\n"
            "are outside it, a --trace covers the whole process) split into mutator time\n"
            "and GC pauses, the number of collections, mean and median mark and pause\n"
            "times, the live heap at the collections, the GC threads each collection used,\n"
            "and the workload's own check of its answer (exit status 1 if it failed).\n"
            "\n"
            "workloads (--list describes them; docs/workloads.md):\n"
            "  bh       Barnes-Hut n-body; mutator 0 builds the octree each step\n"
            "  cube     beam-bounded breadth-first Rubik's cube search\n"
            "  cky      CKY parsing of generated sentences\n"
            "  chain    a queue in a linked ring: the live heap is one linked list (best\n"
            "           at one GC thread)\n"
            "\n"
            "options:\n"
            "  --mutators M         mutator threads (default: one per CPU online)\n"
            "  --gc-threads SPEC    N, adaptive or adaptive:MAX, or a baseline policy all,\n"
            "                       boehm, hotspot or zgc (each also WORD:MAX; default:\n"
            "                       one per CPU, or $GCSCALE_GC_THREADS)\n"
            "  --gc-objective OBJ   adaptive's objective: pause (shortest pause) or cpu[:EPS]\n"
            "                       (least GC CPU within EPS of the shortest pause; default\n"
            "                       cpu:0.05, or $GCSCALE_GC_OBJECTIVE)\n"
            "  --machine FILE       machine profile for adaptive (default $GCSCALE_MACHINE,\n"
            "                       else data/machines/HOSTNAME.json)\n"
            "  --heap SIZE          heap limit (default: the workload's, which gives its\n"
            "                       default size many collections, plus 1 MiB per\n"
            "                       mutator; K/M/G suffixes)\n"
            "  --size S             the workload's scale: bodies (bh), beam width (cube),\n"
            "                       sentences per round (cky)\n"
            "  --steps N            time steps (bh), scramble length = levels (cube),\n"
            "                       rounds (cky)\n"
            "  --seed N             random seed (default 1)\n"
            "  --release-after N    give an emptied heap page's memory back to the kernel\n"
            "                       once it has stayed free N collections (default 6; 0:\n"
            "                       in the sweep that empties it; docs/collector.md)\n"
            CLI_PIN_HELP
            "                       (the GC workers; the mutators are not pinned)\n"
            "  --log FILE           one JSON line per collection (the collector's record,\n"
            "                       with the adaptive policy's decision)\n"
            "  --trace FILE         record the threads' states (docs/trace-format.md)\n"
            "  --quiet              no progress on stderr\n"
            "  --json               the summary as JSON\n"
            "  --list               list the workloads with their defaults\n"
            "  -h, --help           this text\n");
}

static void list_workloads(int json)
{
    static const char *const cols[] = {"workload", "default_size", "size_means", "default_steps", "steps_mean",
                                       "default_heap_mib", "description"};
    gcs_table *t = gcs_table_new("gcscale run: workloads", 7, cols);
    for (size_t i = 0; i < gcs_workload_count(); i++) {
        const gcs_workload_info *w = gcs_workload_info_at(i);
        gcs_table_add_str(t, w->name);
        gcs_table_add_int(t, (long long)w->default_size);
        gcs_table_add_str(t, w->size_meaning);
        gcs_table_add_int(t, (long long)w->default_steps);
        gcs_table_add_str(t, w->steps_meaning);
        gcs_table_add_int(t, (long long)(w->default_heap >> 20));
        gcs_table_add_str(t, w->summary);
    }
    if (json) {
        cli_print_doc("gcscale-workloads", json_pack("{s:o}", "workloads", gcs_table_to_json(t)));
    } else {
        for (size_t i = 0; i < gcs_workload_count(); i++) {
            const gcs_workload_info *w = gcs_workload_info_at(i);
            printf("%-5s %s\n      default --size %llu (%s), --steps %llu (%s), "
                   "--heap %zuM + 1M per mutator\n", w->name,
                   w->summary, (unsigned long long)w->default_size, w->size_meaning,
                   (unsigned long long)w->default_steps, w->steps_meaning, w->default_heap >> 20);
        }
    }
    gcs_table_free(t);
}

/* Progress from mutator 0: a line at most once a second. */
typedef struct run_progress {
    gcs_progress pr;
    const char *name;
    uint64_t last_ns;
    int printed;
} run_progress;

static void on_progress(double fraction, void *arg)
{
    run_progress *rp = arg;
    uint64_t now = gcs_now_ns();
    if (now - rp->last_ns < 1000000000ull || fraction >= 1)
        return;
    rp->last_ns = now;
    rp->pr.done_work = fraction * rp->pr.total_work;
    char step[64];
    snprintf(step, sizeof step, "%s running", rp->name);
    gcs_progress_step(&rp->pr, step, 0);
    rp->printed = 1;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static const char *reason_name(int r)
{
    return r == GCS_GC_REASON_REQUEST ? "request" : r == GCS_GC_REASON_BUDGET ? "budget" : "heap-full";
}

int cmd_run(int argc, char **argv)
{
    enum { O_MUT = 256, O_GCT, O_MACHINE, O_HEAP, O_SIZE, O_STEPS, O_SEED, O_LOG, O_TRACE, O_QUIET, O_JSON,
           O_LIST, O_PIN, O_OBJ, O_RELEASE };
    static const struct option options[] = {
        {"mutators", required_argument, NULL, O_MUT},
        {"gc-threads", required_argument, NULL, O_GCT},
        {"machine", required_argument, NULL, O_MACHINE},
        {"gc-objective", required_argument, NULL, O_OBJ},
        {"heap", required_argument, NULL, O_HEAP},
        {"size", required_argument, NULL, O_SIZE},
        {"steps", required_argument, NULL, O_STEPS},
        {"seed", required_argument, NULL, O_SEED},
        {"log", required_argument, NULL, O_LOG},
        {"trace", required_argument, NULL, O_TRACE},
        {"quiet", no_argument, NULL, O_QUIET},
        {"json", no_argument, NULL, O_JSON},
        {"list", no_argument, NULL, O_LIST},
        {"pin", required_argument, NULL, O_PIN},
        {"release-after", required_argument, NULL, O_RELEASE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    gcs_workload_options wo;
    gcs_workload_options_init(&wo);
    wo.mutators = (int)(ncpu < GCS_WORKLOAD_MAX_MUTATORS ? ncpu : GCS_WORKLOAD_MAX_MUTATORS);
    const char *gc_threads = NULL, *machine = NULL, *log_path = NULL, *trace_path = NULL;
    uint64_t heap = 0;
    int quiet = 0, json = 0, list = 0, c, release_after = -1; /* -1: the collector's default */
    gcs_topo_placement placement = GCS_TOPO_PLACE_CORES;
    gcs_adaptive_spec spec = {0};
    gcs_adaptive_opts aopts;
    int have_aopts = 0;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case O_MUT:
            wo.mutators = (int)cli_parse_long(cmd, "--mutators", optarg, 1, GCS_WORKLOAD_MAX_MUTATORS);
            break;
        case O_GCT: {
            gcs_err e;
            if (gcs_adaptive_parse_spec(optarg, &spec, &e) < 0)
                cli_usage_error(cmd, "--gc-threads: %s", e.msg);
            gc_threads = optarg;
            break;
        }
        case O_MACHINE: machine = optarg; break;
        case O_OBJ: {
            gcs_err e;
            gcs_adaptive_opts_init(&aopts);
            if (gcs_adaptive_parse_objective(optarg, &aopts, &e) < 0)
                cli_usage_error(cmd, "--gc-objective: %s", e.msg);
            have_aopts = 1;
            break;
        }
        case O_HEAP:
            heap = cli_parse_size(cmd, "--heap", optarg);
            if (heap < (1u << 20) || heap > (1ull << 40))
                cli_usage_error(cmd, "--heap: %s is not in 1M..1T", optarg);
            break;
        case O_SIZE: wo.size = (uint64_t)cli_parse_long(cmd, "--size", optarg, 1, 1L << 40); break;
        case O_STEPS: wo.steps = (uint64_t)cli_parse_long(cmd, "--steps", optarg, 1, 1L << 40); break;
        case O_SEED: wo.seed = (uint64_t)cli_parse_long(cmd, "--seed", optarg, 1, 0x7fffffffffffffffL); break;
        case O_LOG: log_path = optarg; break;
        case O_TRACE: trace_path = optarg; break;
        case O_QUIET: quiet = 1; break;
        case O_JSON: json = 1; break;
        case O_LIST: list = 1; break;
        case O_PIN: placement = cli_parse_pin(cmd, optarg); break;
        case O_RELEASE: release_after = (int)cli_parse_long(cmd, "--release-after", optarg, 0, 1000000); break;
        case 'h': print_help(stdout); return 0;
        default: cli_bad_option(cmd, argv);
        }
    }
    if (list) {
        if (optind < argc)
            cli_usage_error(cmd, "--list takes no workload");
        list_workloads(json);
        return 0;
    }
    if (optind >= argc)
        cli_usage_error(cmd, "name a workload: bh, cube, cky or chain");
    if (optind + 1 < argc)
        cli_usage_error(cmd, "one workload at a time ('%s' is extra)", argv[optind + 1]);
    const gcs_workload_info *info = gcs_workload_find(argv[optind]);
    if (!info)
        cli_usage_error(cmd, "unknown workload '%s' (bh, cube, cky or chain)", argv[optind]);
    wo.name = info->name;
    if (wo.size > info->max_size)
        cli_usage_error(cmd, "--size: %s takes 1..%llu %s", info->name, (unsigned long long)info->max_size,
                        info->size_meaning);
    if (wo.steps > info->max_steps)
        cli_usage_error(cmd, "--steps: %s takes 1..%llu (%s)", info->name, (unsigned long long)info->max_steps,
                        info->steps_meaning);
    if (machine && !spec.adaptive)
        cli_usage_error(cmd, "--machine is only used with --gc-threads adaptive[:MAX]");
    if (have_aopts && (!spec.adaptive || spec.baseline))
        cli_usage_error(cmd, "--gc-objective is only used with --gc-threads adaptive[:MAX]");
    if (trace_path)
        cli_check_output(cmd, "--trace", trace_path);
    if (log_path)
        cli_check_output(cmd, "--log", log_path);

    gcs_err err = {{0}};
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.heap_limit = heap ? heap : gcs_workload_default_heap(info, wo.mutators);
    go.placement = placement;
    if (release_after >= 0)
        go.release_after = release_after;
    int crc = gcs_adaptive_configure_with(&go, gc_threads, machine, have_aopts ? &aopts : NULL, &err);
    if (crc < 0)
        cli_fail(cmd, &err);
    if (crc > 0)
        fprintf(stderr, "gcscale %s: warning: %s\n", cmd, err.msg);
    gcs_outfile logf;
    int have_log = 0;
    if (log_path) {
        if (gcs_outfile_open(&logf, log_path, &err) < 0) {
            gcs_adaptive_release(&go);
            cli_fail(cmd, &err);
        }
        have_log = 1;
        go.log_path = logf.tmp_path; /* the collector appends; renamed at the end */
    }
    pu_record pus = {0};
    go.on_collection = keep_pu_map; /* chained by the gclog's install */
    go.on_collection_arg = &pus;
    gcs_workload_gclog gclog;
    gcs_workload_gclog_install(&go, &gclog);
    if (trace_path) {
        char command[1024]; /* the trace's "command" line: this command (argv as getopt left it) */
        size_t used = (size_t)snprintf(command, sizeof command, "gcscale");
        for (int i = 0; i < argc && used < sizeof command; i++)
            used += (size_t)snprintf(command + used, sizeof command - used, " %s", argv[i]);
        gcs_trace_recorder_set_command(command);
        if (gcs_trace_recorder_start(trace_path, &err) < 0) {
            gcs_adaptive_release(&go);
            if (have_log)
                gcs_outfile_abort(&logf);
            cli_fail(cmd, &err);
        }
        gcs_trace_thread_begin("main", "main");
    }
    if (gcs_gc_init(&go, &err) < 0) {
        if (have_log)
            gcs_outfile_abort(&logf);
        if (trace_path)
            { gcs_err terr; gcs_trace_recorder_stop(&terr); }
        cli_fail(cmd, &err);
    }
    int pool = gcs_gc_max_threads();

    run_progress rp = {.name = info->name};
    gcs_progress_init(&rp.pr, 1, quiet);
    rp.last_ns = gcs_now_ns();
    if (!quiet) {
        wo.progress = on_progress;
        wo.progress_arg = &rp;
    }
    wo.gclog = &gclog;
    gcs_workload_result res;
    int rc = gcs_workload_run(&wo, &res, &err);
    gcs_gc_shutdown();
    if (trace_path) {
        gcs_err terr;
        gcs_trace_thread_end();
        if (gcs_trace_recorder_stop(&terr) < 0 && rc == 0) {
            err = terr;
            rc = -1;
        }
    }
    if (rc < 0) {
        if (have_log)
            gcs_outfile_abort(&logf);
        gcs_workload_gclog_free(&gclog);
        cli_fail(cmd, &err);
    }
    if (have_log && gcs_outfile_commit(&logf, &err) < 0) {
        gcs_workload_gclog_free(&gclog);
        cli_fail(cmd, &err);
    }
    if (rp.printed)
        gcs_progress_finish(&rp.pr);

    /* ---- summary ---- */
    size_t n = res.gc_count;
    const gcs_workload_gc_row *rows = gclog.rows + res.gc_first;
    double *mark = calloc(n + 1, sizeof *mark), *pause = calloc(n + 1, sizeof *pause);
    if (!mark || !pause) {
        gcs_err_set(&err, "out of memory");
        cli_fail(cmd, &err);
    }
    double mark_sum = 0, pause_sum = 0, live_sum = 0, live_max = 0;
    int used[GCS_GC_MAX_THREADS + 1] = {0}, decided = 0;
    for (size_t i = 0; i < n; i++) {
        mark[i] = ms(rows[i].mark_ns);
        pause[i] = ms(rows[i].pause_ns);
        mark_sum += mark[i];
        pause_sum += pause[i];
        live_sum += (double)rows[i].live_bytes / 1e6;
        live_max = fmax(live_max, (double)rows[i].live_bytes / 1e6);
        if (rows[i].threads >= 1 && rows[i].threads <= GCS_GC_MAX_THREADS)
            used[rows[i].threads]++;
        decided += rows[i].policy_used;
    }
    double mark_mean = n ? mark_sum / (double)n : NAN, pause_mean = n ? pause_sum / (double)n : NAN;
    double live_mean = n ? live_sum / (double)n : NAN;
    json_t *collections = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(collections,
                              json_pack("{s:I, s:s, s:i, s:b, s:f, s:f, s:f, s:f, s:I, s:I}", "index",
                                        (json_int_t)rows[i].index, "reason", reason_name(rows[i].reason),
                                        "threads", rows[i].threads, "policy", rows[i].policy_used, "mark_ms",
                                        ms(rows[i].mark_ns), "pause_ms", ms(rows[i].pause_ns), "stop_ms",
                                        ms(rows[i].stop_ns), "t1_ms", ms(rows[i].t1_ns), "live_objects",
                                        (json_int_t)rows[i].live_objects, "live_bytes",
                                        (json_int_t)rows[i].live_bytes));
    double mark_med = n ? gcs_stats_median(mark, n) : NAN, pause_med = n ? gcs_stats_median(pause, n) : NAN;
    double wall = ms(res.wall_ns), gc = ms(res.gc_pause_ns), mut = ms(res.mutator_ns);
    const char *spec_text = gc_threads ? gc_threads : getenv("GCSCALE_GC_THREADS");

    if (json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "format", json_string("gcscale-run"));
        json_object_set_new(doc, "version", json_integer(1));
        json_object_set_new(doc, "workload", json_string(info->name));
        json_object_set_new(doc, "size", json_integer((json_int_t)res.size));
        json_object_set_new(doc, "size_means", json_string(info->size_meaning));
        json_object_set_new(doc, "steps", json_integer((json_int_t)res.steps));
        json_object_set_new(doc, "steps_mean", json_string(info->steps_meaning));
        json_object_set_new(doc, "seed", json_integer((json_int_t)res.seed));
        json_object_set_new(doc, "mutators", json_integer(res.mutators));
        json_object_set_new(doc, "gc_threads", json_string(spec_text && *spec_text ? spec_text : "cpus"));
        json_object_set_new(doc, "gc_pool", json_integer(pool));
        json_object_set_new(doc, "cpus", json_integer(ncpu));
        json_object_set_new(doc, "heap_limit", json_integer((json_int_t)go.heap_limit));
        json_object_set_new(doc, "release_after", json_integer(go.release_after));
        gcs_json_set_pu_map(doc, gcs_topo_placement_name(pus.n ? pus.placement : placement), pus.os,
                            pus.logical, pus.n);
        json_object_set_new(doc, "wall_ms", json_real(wall));
        json_object_set_new(doc, "mutator_ms", json_real(mut));
        json_object_set_new(doc, "gc_pause_ms", json_real(gc));
        json_object_set_new(doc, "gc_mark_ms", json_real(ms(res.gc_mark_ns)));
        json_object_set_new(doc, "gc_share", json_real(wall > 0 ? gc / wall : 0));
        json_object_set_new(doc, "collections", json_integer((json_int_t)n));
        json_object_set_new(doc, "mark_ms_mean", n ? json_real(mark_mean) : json_null());
        json_object_set_new(doc, "mark_ms_median", n ? json_real(mark_med) : json_null());
        json_object_set_new(doc, "pause_ms_mean", n ? json_real(pause_mean) : json_null());
        json_object_set_new(doc, "pause_ms_median", n ? json_real(pause_med) : json_null());
        json_object_set_new(doc, "live_mb_mean", n ? json_real(live_mean) : json_null());
        json_object_set_new(doc, "live_mb_max", json_real(live_max));
        json_t *tu = json_object();
        for (int p = 1; p <= GCS_GC_MAX_THREADS; p++)
            if (used[p]) {
                char k[16];
                snprintf(k, sizeof k, "%d", p);
                json_object_set_new(tu, k, json_integer(used[p]));
            }
        json_object_set_new(doc, "threads_used", tu);
        json_object_set_new(doc, "policy_decisions", json_integer(decided));
        json_object_set_new(doc, "verified", json_boolean(res.verified));
        json_object_set_new(doc, "verification", json_string(res.verify_msg));
        json_t *fig = json_object();
        for (int i = 0; i < res.nfigures; i++)
            json_object_set_new(fig, res.figures[i].name, json_real(res.figures[i].value));
        json_object_set_new(doc, "figures", fig);
        json_object_set_new(doc, "log", log_path ? json_string(log_path) : json_null());
        json_object_set_new(doc, "collection_list", collections);
        collections = NULL;
        gcs_json_print(doc, stdout);
        json_decref(doc);
    } else {
        printf("%s: %llu %s, %llu %s, seed %llu; %d mutator%s; GC threads %s (pool %d); heap limit %.0f MiB\n",
               info->name, (unsigned long long)res.size, info->size_meaning, (unsigned long long)res.steps,
               info->steps_meaning, (unsigned long long)res.seed, res.mutators, res.mutators == 1 ? "" : "s",
               spec_text && *spec_text ? spec_text : "one per CPU", pool, (double)go.heap_limit / 1048576.0);
        printf("wall %.1f ms = mutators %.1f ms + GC pauses %.1f ms (GC %.1f%% of wall)\n", wall, mut, gc,
               wall > 0 ? 100 * gc / wall : 0.0);
        if (n) {
            printf("collections %zu: mark mean %.2f ms, median %.2f ms; pause mean %.2f ms, median %.2f ms\n", n,
                   mark_mean, mark_med, pause_mean, pause_med);
            printf("live heap at collections: mean %.1f MB, max %.1f MB\n", live_mean, live_max);
            printf("GC threads per collection:");
            for (int p = 1; p <= GCS_GC_MAX_THREADS; p++)
                if (used[p])
                    printf(" P=%d x%d", p, used[p]);
            if (decided)
                printf(" (%d chosen by the %s policy)", decided, GCS_ADAPTIVE_POLICY_NAME);
            printf("\n");
        } else {
            printf("collections 0 (a smaller --heap or a larger --size gives some)\n");
        }
        if (res.nfigures) {
            printf("figures:");
            for (int i = 0; i < res.nfigures; i++)
                printf(" %s %.4g", res.figures[i].name, res.figures[i].value);
            printf("\n");
        }
        printf("verification %s: %s\n", res.verified ? "OK" : "FAILED", res.verify_msg);
    }
    json_decref(collections);
    free(mark);
    free(pause);
    gcs_workload_gclog_free(&gclog);
    cli_finish(cmd);
    if (!res.verified) {
        fprintf(stderr, "gcscale run: %s: verification failed: %s\n", info->name, res.verify_msg);
        return 1;
    }
    return 0;
}
