/* cmd_predict.c -- gcscale predict: the mark time and speedup of a heap for
 * every GC thread count, and how many threads it deserves.
 *
 *   gcscale predict --machine PROFILE SNAPSHOT [--threads LIST] [--fast|--slow]
 *                   [--mva open|closed] [--overlap fitted|F] [--measured FILE]
 *                   [--plot FILE.svg] [--wide]
 *                   [--json | --csv]
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gcscale/inspect.h"
#include "gcscale/predict.h"
#include "gcscale/snapshot.h"

static const char *const cmd = "predict";

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale predict --machine PROFILE SNAPSHOT [options]\n"
            "\n"
            "Predicts the parallel mark time of the heap in SNAPSHOT on the machine in\n"
            "PROFILE for every GC thread count P, with the Endo-Taura-Yonezawa model\n"
            "and Brent's bound for the span (--span critical, the default):\n"
            "  T_P^M = (T1 - Tinf)/P + Tinf + ((Q_P - Q_span)/P + Q_span) * M_P,\n"
            "  Q_P = Q1 + N_S * L, Q_span = Q1 * Tinf / T1\n"
            "(the paper's form, --span paper: T1/P + Tinf + Q_P * M_P / P), where M_P,\n"
            "the miss cost with contention at the memory nodes, is solved as a\n"
            "fixed point.  Prints the recommended thread count (the smallest P within\n"
            "5%% of the best predicted time) and what limits the heap, read from the\n"
            "predicted speedup stack at the largest P (span, extra work, contention at a\n"
            "memory node, coordination), then one row per P:\n"
            "  P                     GC threads\n"
            "  time_ms | rel_time    predicted mark time T_P^M; rel_time (T_P^M / T_1^M)\n"
            "                        where the model cannot stand behind absolute times\n"
            "                        (model base or paper, --costs, or v2 on a profile\n"
            "                        without gc_miss_overlap): the output says why\n"
            "  speedup               T_1^M / T_P^M\n"
            "  lost_CAUSE            the speedup stack: P = speedup + the lost parts;\n"
            "                        lost_span (the span), lost_extra_misses (re-reading\n"
            "                        stolen work, N_S L), lost_contention (queueing at the\n"
            "                        memory nodes), lost_coord (wake + search + tail);\n"
            "                        only causes of 0.005 or more are shown\n"
            "  measured_speedup      with --measured: gc-bench's mark speedup at P\n"
            "  error_pct             (speedup / measured_speedup - 1) x 100\n"
            "--wide adds the model's inputs, the P = 1 breakdown and every term:\n"
            "  t_cilk_ms             T1/P + Tinf, without miss costs\n"
            "  steals                N_S, the predicted steals\n"
            "  q_p                   Q_P = Q1 + N_S L, the misses with P workers (--model\n"
            "                        v2: N_S L at most the serial mark's private-cache\n"
            "                        hits times (P-1)/P, JSON inputs.private_hits)\n"
            "  m1_ns, m_p_ns         a miss's cost without and with contention\n"
            "  speedup_no_contention    the ablation Pred(M_P=M1)\n"
            "  speedup_no_extra_misses  the ablation Pred(Q_P=Q1)\n"
            "  lost_wake, lost_search, lost_tail  coordination's parts (gc_coord)\n"
            "  lost_shared_lines     extra work: mark-table lines another worker wrote last\n"
            "                        (--shared-lines on, gc_line_transfer_ns)\n"
            "  lost_steal_work       extra work: the collector's steals' and extra\n"
            "                        workers' own busy time (--model v2,\n"
            "                        gc_cost_ns.steal x steals + .worker x (P-1))\n"
            "  extra_work            lost_extra_misses + lost_shared_lines +\n"
            "                        lost_steal_work (the measured stack's name; not\n"
            "                        added again to the lost parts)\n"            "  max_rho               utilisation of the busiest memory node\n"
            "  solver, iterations    how M_P's fixed point was solved\n"
            "The legend with the formulas: docs/model.md, \"Reading the answer\".\n"
            "\n"
            "options:\n"
            "  -m, --machine FILE   machine profile (gcscale calibrate; needs gc_cost_ns)\n"
            "  -t, --threads LIST   thread counts, e.g. 1-64 or 1,2,4,8 (default 1..the\n"
            "                       profile's CPU count)\n"
            "  --fast               no cache simulation: Q1 = live cache lines (default when\n"
            "                       the profile has no data cache geometry)\n"
            "  --slow               replay the serial mark through a simulation of the\n"
            "                       profile's caches (default otherwise)\n"
            "  --no-prefetch        slow predictor: price every miss at M1, also those the\n"
            "                       modelled hardware stream prefetcher covers (at S_O)\n"
            "  --no-coord           leave out the coordination terms (wake, search, tail per\n"
            "                       worker, from the profile's gc_coord; off without it)\n"
            "  --mva open|closed    contention model: the paper's open queue (default) or\n"
            "                       exact MVA of a closed network of P workers\n"
            "  --span critical|paper  Brent's (T1-Tinf)/P + Tinf with the critical path's\n"
            "                       misses paid by one worker (default), or the paper's\n"
            "                       T1/P + Tinf with every miss shared among P\n"
            "  --model v2|base|paper  v2 (default): every term priced as the collector\n"
            "                       spends it, from the profile's calibrated keys (the\n"
            "                       fitted overlap, residency, stream and class costs,\n"
            "                       coordination, steal work; docs/model.md \"Model v2 at a\n"
            "                       glance\"); base: Brent's span, the stream prefetcher,\n"
            "                       every other miss a full miss, times relative only (the\n"
            "                       default until 2026-11-29); paper: the paper's full\n"
            "                       model for comparison (--span paper, --overlap 1,\n"
            "                       --no-prefetch)\n"
            "  --overlap fitted|F   each worker overlaps F misses (its prefetch FIFO), so\n"
            "                       a miss the stream prefetcher does not cover stalls it\n"
            "                       for (M1 + W)/F.  Default 1 (none); with --model v2 the\n"
            "                       profile's gc_miss_overlap (gcscale calibrate) where it\n"
            "                       has one, else 1 (said as nominal in the output)\n"
            "  --residency on|off   (--model v2) price a miss's line as in the effective\n"
            "                       LLC with probability min(1, LLC / footprint), at the\n"
            "                       LLC's hit latency (profile llc_effective_bytes and\n"
            "                       llc_hit_ns, or the calibration sweep), its misses at\n"
            "                       the profile's gc_resident prices where it has them\n"
            "                       (else as from memory, which double counts with the\n"
            "                       fitted overlap).  Default: on where the profile has\n"
            "                       gc_resident (docs/model.md, \"Resident lines\")\n"
            "  --null-switches on|off  (--model v2) price the NULL tests whose outcome\n"
            "                       switches at the profile's gc_class_cost_ns.null_switch\n"
            "                       (gcscale calibrate).  Default off: measured, it made cky\n"
            "                       worse (docs/model.md, \"Serial work: streams and NULL\n"
            "                       tests\")\n"
            "  --shared-lines on|off  (--model v2) extra work in parallel: mark-table lines\n"
            "                       passing between workers, counted on the snapshot and\n"
            "                       priced at the profile's gc_line_transfer_ns (gcscale\n"
            "                       calibrate).  Default off: measured, it made P = 2 worse\n"
            "                       (docs/model.md)\n"
            "  --steal-work on|off  (--model v2) extra work in parallel: the busy time each\n"
            "                       of the collector's steals adds (profile gc_cost_ns.steal\n"
            "                       times the gc_steals count).  Default on (docs/model.md)\n"
            "  --steal-count fitted|simulated  (--model v2) the collector's steal count the\n"
            "                       coordination's steal attempts are priced with: a\n"
            "                       simulation of the collector's work stealing on the\n"
            "                       snapshot's graph at every P (one pass over the graph\n"
            "                       per P; needs the profile's gc_coord), or the\n"
            "                       profile's gc_steals fit.  Default: simulated with the\n"
            "                       slow predictor where the profile has gc_coord, fitted\n"
            "                       otherwise (docs/model.md \"The graph's steals by\n"
            "                       default\").  The steal work takes the smaller of the\n"
            "                       fitted and the simulated count\n"
            "  --steals paper|fitted|A,B  N_S = P ln(T1) (default), the profile's\n"
            "                       gc_steals fit (gcscale calibrate), or (P-1)(A ln(T1) + B)\n"
            "  --costs OBJ,PTR      marker costs in ns per object and per edge, instead of\n"
            "                       the profile's gc_cost_ns: for hand-written profiles of\n"
            "                       machines gcscale cannot run on (an assumption: say so)\n"
            "  --measured FILE      a 'gcscale gc-bench --json' result of the same heap:\n"
            "                       adds its speedup and the prediction's error (%%) to\n"
            "                       every row, and its curve to the plot (a warning when\n"
            "                       it measured a heap of another object count)\n"
            "  --plot FILE.svg      write the speedup plot (full model, both ablations,\n"
            "                       ideal, measured)\n"
            "  --wide               every column and the model's inputs (text output)\n"
            "  --json | --csv       machine-readable output: every column (the JSON adds\n"
            "                       explanation, limits and times: absolute|relative)\n"
            "  -h, --help           this text\n"
            "\n"
            "Errors are one line on stderr with exit status 2.  The model: docs/model.md.\n");
}

/* An option that only model v2 has, given beside --model base or paper:
 * one line naming the model to drop, exit 2. */
static void refuse_without_v2(int given, const char *option, int model_v2, int model_paper)
{
    if (given && !model_v2)
        cli_usage_error(cmd, "%s is a term of model v2 (the default): drop --model %s", option,
                        model_paper ? "paper" : "base");
}

static int profile_cpus(const gcs_profile *p)
{
    int n = gcs_profile_cpus(p);
    return n > 0 ? n : 1;
}

static void print_inputs(const gcs_inspect_result *ir, const char *snapshot_path, FILE *fp)
{
    const gcs_model_heap *h = &ir->heap;
    /* The fast predictor samples edges, bytes and lines (exact_counts 0):
     * mark them as the estimates they are. */
    const char *about = ir->exact_counts ? "" : "~";
    fprintf(fp, "heap %s: %llu objects, %s%llu edges, %s%.1f MiB live, %s%llu live cache lines%s\n",
            snapshot_path, (unsigned long long)h->objects, about, (unsigned long long)h->edges, about,
            (double)h->live_bytes / (1 << 20), about, (unsigned long long)h->live_lines,
            ir->exact_counts ? "" : " (~ sampled)");
    fprintf(fp, "T1 %.4g ms, Tinf %.4g ms (%s), Q1 %.0f read + %.0f RW misses, L %.1f lines "
                "(%s predictor, %.1f ms)\n",
            h->t1_ns / 1e6, h->tinf_ns / 1e6, ir->span_method ? ir->span_method : "?",
            h->q1[GCS_ACCESS_READ], h->q1[GCS_ACCESS_RW], h->live_lines_avg,
            gcs_inspect_predictor_name(ir->predictor), ir->elapsed_ns / 1e6);
    double pf = h->q1_prefetched[GCS_ACCESS_READ] + h->q1_prefetched[GCS_ACCESS_RW];
    if (pf > 0)
        fprintf(fp, "of Q1, %.0f misses (%.1f%%) covered by the hardware stream prefetcher\n", pf,
                100 * pf / (h->q1[GCS_ACCESS_READ] + h->q1[GCS_ACCESS_RW]));
    fprintf(fp, "memory nodes (V_j):");
    for (int j = 0; j < h->nnodes && j < 16; j++)
        fprintf(fp, " %d:%.3f", j, h->v[j]);
    fprintf(fp, "%s\n\n", h->nnodes > 16 ? " ..." : "");
}

/* The P = 1 time as model v2's serial terms, with the source of each. */
static void print_serial(const gcs_profile *prof, const gcs_model_heap *h, const gcs_model_opts *mo,
                         const gcs_model_sources *src, const char *model)
{
    gcs_err err = {{0}};
    json_t *s = gcs_model_serial_json(prof, h, mo, src, &err);
    if (!s)
        cli_fail(cmd, &err);
#define F(k) json_number_value(json_object_get(s, k))
    printf("model %s; serial time at P = 1: %.4g ms = T1 %.4g + streamed %.4g + memory misses %.4g + "
           "LLC-resident misses %.4g + a chain's dependent steps %.4g + queueing %.4g + wake and tail %.4g\n",
           model, F("time_ms"), F("t1_ms"), F("streamed_ms"), F("memory_miss_ms"),
           F("llc_miss_ms"), F("dependent_ms"), F("queueing_ms"), F("coord_ms"));
    printf("overlap %.3g (%s); effective LLC %.3g MiB (%s), residency %.2f (%s%s%s)\n", mo->overlap, src->overlap,
           src->llc_bytes / 1048576.0, gcs_llc_source_name(src->llc), F("residency"),
           src->residency_share ? src->residency_share : "", src->residency_share ? "; " : "",
           !src->residency && strcmp(model, "v2") != 0 ? "not priced: a term of model v2 (the default)"
           : !src->residency                         ? "not priced: the profile has no gc_resident, or --residency off"
           : src->resident                           ? "priced at the profile's gc_resident"
                           : "priced as from memory: the profile has no gc_resident");
    if (src->classes) {
        json_t *c = json_object_get(s, "classes");
        printf("marker classes (%s): %lld chain steps, %lld array elements (%lld leaves unread); service %s\n",
               src->classes, (long long)json_integer_value(json_object_get(c, "chain_steps")),
               (long long)json_integer_value(json_object_get(c, "array_elements")),
               (long long)json_integer_value(json_object_get(c, "array_leaves")), src->service);
        json_t *st = json_object_get(s, "streams"), *nu = json_object_get(s, "nulls");
        printf("streams (%s): %.0f streamed misses, %.0f sequential (%.4g ms); NULL tests (%s): %lld fields, "
               "%lld switches (%.4g ms)\n",
               src->sequential, json_number_value(json_object_get(st, "streamed")),
               json_number_value(json_object_get(st, "sequential")), F("sequential_ms"),
               src->nulls ? src->nulls : "not priced: --null-switches on",
               (long long)json_integer_value(json_object_get(nu, "null_fields")),
               (long long)json_integer_value(json_object_get(nu, "null_switches")),
               json_number_value(json_object_get(nu, "ms")));
        json_t *d = json_object_get(s, "dependent");
        double dn = json_number_value(json_object_get(d, "misses"));
        json_int_t steps = json_integer_value(json_object_get(d, "steps"));
        /* every step priced only with the curve (model/serial.c) */
        int steps_priced = src->dependent && strcmp(src->dependent, "dependent_load_ns") == 0 && steps > dn &&
                           json_is_real(json_object_get(d, "latency_ns"));
        if (steps_priced)
            printf("dependent steps (%s): %lld, %.0f of them misses, each waited whole at %.3g ns on average\n",
                   json_string_value(json_object_get(d, "source")), (long long)steps, dn,
                   json_number_value(json_object_get(d, "latency_ns")));
        else if (dn > 0)
            printf("dependent misses (%s): %.0f, each waited whole at %.3g ns\n",
                   json_string_value(json_object_get(d, "source")), dn,
                   json_number_value(json_object_get(d, "latency_ns")));
    }
    json_t *nominal = json_object_get(s, "nominal");
    if (json_array_size(nominal) > 0) {
        printf("resting on a nominal value (run gcscale calibrate):");
        size_t i;
        json_t *v;
        json_array_foreach(nominal, i, v) printf(" %s", json_string_value(v));
        printf("\n");
    }
    printf("\n");
#undef F
    json_decref(s);
}

int cmd_predict(int argc, char **argv)
{
    enum { O_FAST = 256, O_SLOW, O_NO_PREFETCH, O_NO_COORD, O_MVA, O_SPAN, O_OVERLAP, O_STEALS, O_COSTS, O_MEASURED,
           O_PLOT, O_JSON, O_CSV, O_MODEL, O_RESIDENCY, O_WIDE, O_SHARED_LINES, O_NULL_SWITCHES,
           O_STEAL_WORK, O_STEAL_COUNT };
    static const struct option options[] = {
        {"machine", required_argument, NULL, 'm'},
        {"threads", required_argument, NULL, 't'},
        {"fast", no_argument, NULL, O_FAST},
        {"slow", no_argument, NULL, O_SLOW},
        {"no-prefetch", no_argument, NULL, O_NO_PREFETCH},
        {"no-coord", no_argument, NULL, O_NO_COORD},
        {"mva", required_argument, NULL, O_MVA},
        {"span", required_argument, NULL, O_SPAN},
        {"model", required_argument, NULL, O_MODEL},
        {"residency", required_argument, NULL, O_RESIDENCY},
        {"shared-lines", required_argument, NULL, O_SHARED_LINES},
        {"null-switches", required_argument, NULL, O_NULL_SWITCHES},
        {"steal-work", required_argument, NULL, O_STEAL_WORK},
        {"steal-count", required_argument, NULL, O_STEAL_COUNT},
        {"overlap", required_argument, NULL, O_OVERLAP},
        {"steals", required_argument, NULL, O_STEALS},
        {"costs", required_argument, NULL, O_COSTS},
        {"measured", required_argument, NULL, O_MEASURED},
        {"plot", required_argument, NULL, O_PLOT},
        {"json", no_argument, NULL, O_JSON},
        {"csv", no_argument, NULL, O_CSV},
        {"wide", no_argument, NULL, O_WIDE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *machine = NULL, *threads_text = NULL, *measured_path = NULL, *plot_path = NULL;
    double cost_object = NAN, cost_pointer = NAN;
    int predictor = -1, c, steals_fitted = 0, overlap_fitted = 0, no_prefetch = 0, no_coord = 0;
    int model_paper = 0, model_v2 = 1, residency = GCS_MODEL_RESIDENCY_DEFAULT, overlap_given = 0, span_given = 0, wide = 0, shared_lines = 0;
    int null_switches = 0, steal_work = 1, steal_work_given = 0, steal_count_sim = 0, steal_count_given = 0;
    gcs_format fmt = GCS_FORMAT_TEXT;
    gcs_model_opts mopts;
    gcs_model_opts_init(&mopts);
    while ((c = getopt_long(argc, argv, ":m:t:h", options, NULL)) != -1) {
        switch (c) {
        case 'm': machine = optarg; break;
        case 't': threads_text = optarg; break;
        case O_FAST:
        case O_SLOW:
            if (predictor >= 0 && predictor != (c == O_FAST ? GCS_INSPECT_FAST : GCS_INSPECT_SLOW))
                cli_usage_error(cmd, "--fast and --slow exclude each other");
            predictor = c == O_FAST ? GCS_INSPECT_FAST : GCS_INSPECT_SLOW;
            break;
        case O_NO_PREFETCH: no_prefetch = 1; break;
        case O_NO_COORD: no_coord = 1; break;
        case O_MVA:
            if (strcmp(optarg, "open") == 0)
                mopts.mva = GCS_MODEL_MVA_OPEN;
            else if (strcmp(optarg, "closed") == 0)
                mopts.mva = GCS_MODEL_MVA_CLOSED;
            else
                cli_usage_error(cmd, "--mva: '%s' is neither open nor closed", optarg);
            break;
        case O_SPAN:
            span_given = 1;
            if (strcmp(optarg, "paper") == 0)
                mopts.span = GCS_MODEL_SPAN_PAPER;
            else if (strcmp(optarg, "critical") == 0)
                mopts.span = GCS_MODEL_SPAN_CRITICAL;
            else
                cli_usage_error(cmd, "--span: '%s' is neither paper nor critical", optarg);
            break;
        case O_MODEL:
            if (strcmp(optarg, "paper") != 0 && strcmp(optarg, "v2") != 0 && strcmp(optarg, "base") != 0)
                cli_usage_error(cmd, "--model: '%s' is none of base, v2 and paper", optarg);
            model_paper = strcmp(optarg, "paper") == 0;
            model_v2 = strcmp(optarg, "v2") == 0; /* the default */
            break;
        case O_RESIDENCY:
            residency = cli_parse_on_off(cmd, "--residency", optarg);
            break;
        case O_SHARED_LINES:
            shared_lines = cli_parse_on_off(cmd, "--shared-lines", optarg);
            break;
        case O_STEAL_WORK:
            steal_work = cli_parse_on_off(cmd, "--steal-work", optarg);
            steal_work_given = 1;
            break;
        case O_STEAL_COUNT:
            if (strcmp(optarg, "simulated") != 0 && strcmp(optarg, "fitted") != 0)
                cli_usage_error(cmd, "--steal-count: '%s' is neither fitted nor simulated", optarg);
            steal_count_sim = strcmp(optarg, "simulated") == 0;
            steal_count_given = 1;
            break;
        case O_NULL_SWITCHES:
            null_switches = cli_parse_on_off(cmd, "--null-switches", optarg);
            break;
        case O_OVERLAP:
            overlap_given = 1;
            overlap_fitted = strcmp(optarg, "fitted") == 0;
            if (!overlap_fitted)
                mopts.overlap = cli_parse_double(cmd, "--overlap", optarg, 1, 4096);
            break;
        case O_STEALS:
            steals_fitted = 0;
            if (strcmp(optarg, "paper") == 0) {
                mopts.steals = GCS_MODEL_STEALS_PAPER;
            } else if (strcmp(optarg, "fitted") == 0) {
                steals_fitted = 1;
            } else {
                char *end;
                mopts.steal_a = strtod(optarg, &end);
                if (*end != ',' || !isfinite(mopts.steal_a))
                    cli_usage_error(cmd, "--steals: expected paper, fitted or A,B, not '%s'", optarg);
                mopts.steal_b = cli_parse_double(cmd, "--steals", end + 1, -1e9, 1e9);
                mopts.steals = GCS_MODEL_STEALS_FITTED;
            }
            break;
        case O_COSTS: {
            char *end;
            cost_object = strtod(optarg, &end);
            /* the bounds of gc_cost_ns in a profile (docs/machine-profile.md) */
            if (*end != ',' || !(cost_object > 0 && cost_object <= 1e9))
                cli_usage_error(cmd, "--costs: expected OBJ,PTR in ns (OBJ in (0, 1e9]), not '%s'", optarg);
            cost_pointer = cli_parse_double(cmd, "--costs", end + 1, 0, 1e9);
            break;
        }
        case O_MEASURED: measured_path = optarg; break;
        case O_PLOT: plot_path = optarg; break;
        case O_JSON: cli_set_format(cmd, &fmt, GCS_FORMAT_JSON); break;
        case O_CSV: cli_set_format(cmd, &fmt, GCS_FORMAT_CSV); break;
        case O_WIDE: wide = 1; break;
        case 'h':
            print_help(stdout);
            return 0;
        default:
            cli_bad_option(cmd, argv);
        }
    }
    if (!machine)
        cli_usage_error(cmd, "--machine PROFILE is required");
    /* a file, or a profile's name (o2k, e10k, this host's): docs/machine-profile.md */
    static char machine_file[4096];
    gcs_err ferr;
    if (gcs_profile_find(machine, machine_file, sizeof machine_file, &ferr) < 0)
        cli_usage_error(cmd, "--machine: %s", ferr.msg);
    machine = machine_file;
    if (optind != argc - 1)
        cli_usage_error(cmd, optind >= argc ? "a SNAPSHOT file is required" : "one SNAPSHOT file, please");
    const char *snapshot_path = argv[optind];
    if (plot_path)
        cli_check_output(cmd, "--plot", plot_path);

    gcs_err err = {{0}};
    int *threads = NULL, nthreads = 0;
    if (threads_text && gcs_predict_parse_threads(threads_text, &threads, &nthreads, &err) < 0)
        cli_usage_error(cmd, "--threads: %s", err.msg);

    gcs_profile *prof = gcs_profile_load(machine, &err);
    if (!prof)
        cli_fail(cmd, &err);
    if (isfinite(cost_object)) {
        gcs_profile_clear_fit_quality(prof, "gc_cost_ns."); /* the profile's are not used */
        prof->has_gc_cost = 1;
        prof->gc_cost_object_ns = cost_object;
        prof->gc_cost_pointer_ns = cost_pointer;
    }
    if (!prof->has_gc_cost) {
        gcs_err_set(&err, "%s: profile has no gc_cost_ns: run gcscale calibrate on the machine "
                          "(or give assumed ones with --costs OBJ,PTR)", machine);
        cli_fail(cmd, &err);
    }
    if (steals_fitted && gcs_model_opts_fitted_steals(&mopts, prof, &err) < 0) {
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        gcs_err_set(&err, "%s: %s", machine, msg);
        cli_fail(cmd, &err);
    }
    /* model v2's serial work (model/serial.c), or the paper's whole model */
    gcs_model_sources sources;
    if (model_paper) {
        if (overlap_given || residency == 1 || span_given)
            cli_usage_error(cmd, "--model paper fixes the span, overlap and residency: drop --span, "
                                 "--overlap and --residency");
        gcs_model_opts_paper(&mopts);
        no_prefetch = 1;
    }
    /* (--model paper with --residency was refused above) */
    refuse_without_v2(residency != GCS_MODEL_RESIDENCY_DEFAULT && !model_paper, "--residency", model_v2, model_paper);
    if (!model_v2) /* the base and the paper's model price no residency */
        residency = 0;
    refuse_without_v2(shared_lines, "--shared-lines", model_v2, model_paper);
    refuse_without_v2(null_switches, "--null-switches", model_v2, model_paper);
    refuse_without_v2(steal_work_given, "--steal-work", model_v2, model_paper);
    refuse_without_v2(steal_count_given, "--steal-count", model_v2, model_paper);
    gcs_inspect_predictor which = predictor >= 0 ? (gcs_inspect_predictor)predictor : gcs_inspect_default_predictor(prof);
    /* model v2's steal count: the graph's with the slow predictor, the fit's
     * with the fast one, unless --steal-count says */
    if (model_v2 && !steal_count_given)
        steal_count_sim = gcs_inspect_steals_simulated_by_default(prof, which);
    if (steal_count_sim && !prof->has_gc_coord) {
        gcs_err_set(&err, "%s: --steal-count simulated: the profile has no gc_coord to price a steal attempt "
                          "(run gcscale calibrate on the machine)", machine);
        cli_fail(cmd, &err);
    }
    mopts.sharing = shared_lines;
    mopts.null_switches = null_switches;
    /* the base model keeps the overlap it was given (1: none); v2 takes the
     * profile's fitted one; either way sources says where it came from */
    gcs_model_opts_v2(&mopts, prof, residency, overlap_given || !model_v2, &sources);
    if (model_v2)
        gcs_model_opts_v2_costs(&mopts, prof, &sources);
    if (!steal_work) {
        mopts.steal_work_ns = mopts.worker_work_ns = 0;
        sources.steal_work = NULL;
    }
    if (!model_v2 && !overlap_given)
        sources.overlap = "none: model v2 (the default) uses gc_miss_overlap";
    if (overlap_fitted && gcs_model_opts_fitted_overlap(&mopts, prof, &err) < 0) {
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        gcs_err_set(&err, "%s: %s", machine, msg);
        cli_fail(cmd, &err);
    }
    if (mopts.overlap != 1 && mopts.mva != GCS_MODEL_MVA_OPEN)
        cli_usage_error(cmd, "--overlap works with the open model only (--mva open)");
    if (!threads) {
        char range[32];
        snprintf(range, sizeof range, "1-%d", profile_cpus(prof));
        if (gcs_predict_parse_threads(range, &threads, &nthreads, &err) < 0)
            cli_fail(cmd, &err);
    }
    /* The model gives every worker a CPU of its own: past the profile's
     * CPUs it describes a bigger machine, not this one oversubscribed. */
    int cpus = profile_cpus(prof), max_threads = 0;
    for (int i = 0; i < nthreads; i++)
        max_threads = threads[i] > max_threads ? threads[i] : max_threads;
    if (max_threads > cpus)
        fprintf(stderr,
                "gcscale predict: warning: P up to %d, but %s has %d CPUs: the model gives each "
                "worker a CPU of its own, so rows beyond P = %d are for a machine with more CPUs\n",
                max_threads, machine, cpus, cpus);
    gcs_predict_measured *measured = NULL;
    if (measured_path) {
        measured = malloc(sizeof *measured);
        if (!measured || gcs_predict_load_measured(measured_path, measured, &err) < 0)
            cli_fail(cmd, &err);
    }
    gcs_snapshot *snap = gcs_snapshot_read(snapshot_path, &err);
    if (!snap)
        cli_fail(cmd, &err);

    gcs_inspect_opts iopts;
    gcs_inspect_opts_init(&iopts);
    iopts.stream_prefetch = !no_prefetch;
    iopts.shared_lines = shared_lines;
    if (steal_count_sim) /* model v2: the collector's steals from the heap's graph (model/steals.c) */
        iopts.steal_sim_threads = max_threads;
    mopts.coord = !no_coord;
    iopts.predictor = which;
    gcs_inspect_result ir;
    if (gcs_inspect_heap(snap, prof, &iopts, &ir, &err) < 0) {
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        gcs_err_set(&err, "%s: %s", snapshot_path, msg);
        cli_fail(cmd, &err);
    }
    /* A measurement of another heap would be compared as if it were this one
     * (gc-bench's "objects" are the live objects, which a snapshot holds). */
    if (measured && measured->objects >= 0 && (uint64_t)measured->objects != snap->nobjects)
        fprintf(stderr,
                "gcscale predict: warning: %s measured a heap of %lld objects, but %s has %llu: the "
                "measured speedups are of another heap\n",
                measured_path, measured->objects, snapshot_path, (unsigned long long)snap->nobjects);
    gcs_model_result *results = calloc((size_t)nthreads, sizeof *results);
    if (!results) {
        gcs_err_set(&err, "out of memory");
        cli_fail(cmd, &err);
    }
    if (gcs_predict_curve(prof, &ir.heap, threads, nthreads, &mopts, results, &err) < 0)
        cli_fail(cmd, &err);
    int recommended = gcs_model_recommend(results, nthreads, GCS_PREDICT_TOLERANCE);
    int best = gcs_model_recommend(results, nthreads, 0);

    const char *model_name = model_paper ? "paper" : model_v2 ? "v2" : "base";
    if (plot_path) {
        char title[256], subtitle[512];
        /* base names: the paths are in the JSON; a title is read at a glance */
        snprintf(title, sizeof title, "Predicted mark speedup: %s on %s", cli_base_name(snapshot_path),
                 cli_base_name(machine));
        snprintf(subtitle, sizeof subtitle,
                 "%llu objects, T1 %.4g ms, Tinf %.4g ms; model %s, %s predictor, %s MVA, %s span, "
                 "overlap %.3g; recommended P = %d",
                 (unsigned long long)ir.heap.objects, ir.heap.t1_ns / 1e6, ir.heap.tinf_ns / 1e6, model_name,
                 gcs_inspect_predictor_name(ir.predictor), gcs_model_mva_name(mopts.mva),
                 gcs_model_span_name(mopts.span), mopts.overlap, recommended);
        if (gcs_predict_plot(results, nthreads, measured, recommended, title, subtitle, plot_path, &err) < 0)
            cli_fail(cmd, &err);
    }

    gcs_table *t = gcs_predict_table(results, nthreads, measured);
    json_t *unreliable = gcs_predict_unreliable_inputs(prof, &mopts);
    char unreliable_line[2048];
    gcs_predict_unreliable_line(unreliable, unreliable_line, sizeof unreliable_line);
    json_t *serial = gcs_model_serial_json(prof, &ir.heap, &mopts, &sources, &err);
    if (!serial)
        cli_fail(cmd, &err);
    char explanation[2048], relative_why[512];
    gcs_predict_explain(results, nthreads, t, recommended, best, GCS_PREDICT_TOLERANCE, explanation,
                        sizeof explanation);
    int absolute = gcs_predict_times_absolute(model_name, serial, isfinite(cost_object), relative_why,
                                              sizeof relative_why);
    if (fmt == GCS_FORMAT_JSON) {
        json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:f, s:o, s:o, s:i, s:i, s:f}",
                                "format", "gcscale-prediction", "version", 1, "snapshot",
                                snapshot_path, "machine", machine, "predictor",
                                gcs_inspect_predictor_name(ir.predictor), "mva",
                                gcs_model_mva_name(mopts.mva), "span",
                                gcs_model_span_name(mopts.span), "overlap", mopts.overlap, "inputs",
                                gcs_inspect_result_to_json(&ir), "rows", gcs_table_to_json(t),
                                "recommended_threads", recommended, "best_threads", best,
                                "tolerance", GCS_PREDICT_TOLERANCE);
        /* only when some term rests on one: the documents of a reliable
         * profile stay as they were */
        if (json_array_size(unreliable) > 0)
            json_object_set(doc, "unreliable_inputs", unreliable);
        json_object_set_new(doc, "model", json_string(model_name));
        json_object_set(doc, "serial", serial);
        json_object_set_new(doc, "coordination", json_boolean(nthreads > 0 && results[0].coord));
        if (model_v2) /* where the coordination's and the steal work's count came from */
            json_object_set_new(doc, "steal_count", json_string(ir.heap.steals_simulated >= 2 ? "simulated" : "fitted"));
        json_object_set_new(doc, "explanation", json_string(explanation));
        json_object_set_new(doc, "limits", gcs_predict_limits(results, nthreads, t));
        json_object_set_new(doc, "times", json_string(absolute ? "absolute" : "relative"));
        if (!absolute)
            json_object_set_new(doc, "times_note", json_string(relative_why));
        gcs_json_print(doc, stdout);
        json_decref(doc);
    } else if (fmt == GCS_FORMAT_CSV) {
        gcs_table_print(t, stdout, GCS_FORMAT_CSV);
        if (unreliable_line[0]) /* not in the CSV rows: said on stderr */
            fprintf(stderr, "gcscale predict: warning: %s\n", unreliable_line);
        if (!absolute) /* time_ms and t_cilk_ms are the model's own scale */
            fprintf(stderr, "gcscale predict: note: times: %s\n", relative_why);
    } else {
        printf("%s\n", explanation);
        if (!absolute)
            printf("Times: %s.\n", relative_why);
        printf("\n");
        if (unreliable_line[0])
            printf("%s\n\n", unreliable_line);
        if (isfinite(cost_object))
            printf("marker costs assumed on the command line: %g ns per object, %g ns per edge\n\n",
                   cost_object, cost_pointer);
        if (nthreads > 0 && !results[0].coord)
            printf("coordination terms (wake, search, tail) off: %s\n\n",
                   prof->has_gc_coord ? "--no-coord" : "the profile has no gc_coord (run gcscale calibrate on the machine)");
        if (shared_lines && nthreads > 0 && !prof->has_gc_line_transfer)
            printf("shared-line term off: the profile has no gc_line_transfer_ns (run gcscale calibrate on the "
                   "machine)\n\n");
        if (wide) {
            print_inputs(&ir, snapshot_path, stdout);
            print_serial(prof, &ir.heap, &mopts, &sources, model_name);
            if (nthreads > 0 && results[0].coord)
                printf("coordination per worker at P = %d (gc_coord): wake %.1f us, search %.1f us, tail %.1f us\n\n",
                       results[nthreads - 1].threads, results[nthreads - 1].coord_terms.wake_ns / 1e3,
                       results[nthreads - 1].coord_terms.search_ns / 1e3, results[nthreads - 1].coord_terms.tail_ns / 1e3);
            if (shared_lines && nthreads > 0 && prof->has_gc_line_transfer)
                printf("shared lines at P = %d: %.0f transfers at %.1f ns (gc_line_transfer_ns), %.1f us per worker\n\n",
                       results[nthreads - 1].threads, results[nthreads - 1].shared_transfers, prof->gc_line_transfer_ns,
                       results[nthreads - 1].shared_ns / 1e3);
            if (model_v2 && !steal_count_sim && nthreads > 0 && results[0].coord)
                printf("steal count: the profile's gc_steals fit (%s)\n\n",
                       steal_count_given ? "--steal-count fitted" : "the fast predictor's default");
            if (nthreads > 0 && ir.heap.steals_simulated >= results[nthreads - 1].threads)
                printf("steals simulated on the graph at P = %d: %.0f entries in %.0f searches; %.0f mark-table "
                       "lines moved between workers (priced where the profile has gc_mark_transfer_ns); the simulated "
                       "schedule's own speedup %.2f\n\n",
                       results[nthreads - 1].threads, ir.heap.sim_steals[results[nthreads - 1].threads],
                       ir.heap.sim_searches[results[nthreads - 1].threads],
                       ir.heap.sim_transfers[results[nthreads - 1].threads],
                       ir.heap.sim_makespan_ns[1] / ir.heap.sim_makespan_ns[results[nthreads - 1].threads]);
            if (nthreads > 0 && results[nthreads - 1].mark_transfers > 0)
                printf("mark-table transfers at P = %d: %.0f (the simulated ones times the table's fit %.2f), "
                       "%.1f us per worker; the heap's fit in the private caches %.2f%s\n\n",
                       results[nthreads - 1].threads, results[nthreads - 1].mark_transfers, ir.heap.table_fit,
                       results[nthreads - 1].mark_transfer_ns / 1e3, ir.heap.heap_fit,
                       prof->has_gc_mark_transfer_cached
                           ? " (priced from gc_mark_transfer_ns at 0.25 to gc_mark_transfer_cached_ns at 1)"
                           : " (priced at gc_mark_transfer_ns)");
            if (nthreads > 0 && sources.steal_work && prof->has_gc_cost_worker)
                printf("steal work at P = %d: %.0f ns per steal and %.1f us per worker beyond the first (%s), "
                       "%.1f us per worker\n\n",
                       results[nthreads - 1].threads, mopts.steal_work_ns, mopts.worker_work_ns / 1e3,
                       sources.steal_work, results[nthreads - 1].steal_work_ns / 1e3);
            else if (nthreads > 0 && sources.steal_work)
                printf("steal work at P = %d: %.0f ns per steal (%s), %.1f us per worker\n\n",
                       results[nthreads - 1].threads, mopts.steal_work_ns, sources.steal_work,
                       results[nthreads - 1].steal_work_ns / 1e3);
            if (mopts.overlap != 1)
                printf("misses overlapped %.3g ways (--overlap): a miss not covered by the stream "
                       "prefetcher stalls its worker (M1 + W)/%.3g\n\n", mopts.overlap, mopts.overlap);
            if (!absolute)
                printf("(t_cilk_ms and time_ms below are on the model's own scale, not the collector's: "
                       "see Times above)\n");
            gcs_table_print(t, stdout, GCS_FORMAT_TEXT);
        } else {
            gcs_table *compact = gcs_predict_compact_table(t, absolute);
            gcs_table_print(compact, stdout, GCS_FORMAT_TEXT);
            gcs_table_free(compact);
            printf("\n(columns: gcscale predict --help; every column and the model's inputs: --wide)\n");
        }
    }
    if (plot_path)
        fprintf(stderr, "wrote %s\n", plot_path);
    gcs_table_free(t);
    json_decref(unreliable);
    json_decref(serial);
    free(results);
    free(measured);
    free(threads);
    gcs_snapshot_free(snap);
    gcs_profile_free(prof);
    return cli_finish(cmd);
}
