/* policies.c -- the paper's Table 4 with the baselines as columns (issue
 * 24): every workload's whole runs at each fixed P and under each thread
 * policy (adaptive and the production runtimes' rules, adaptive.h), the
 * GC time and GC CPU time of each, the best fixed P, and the noise floor
 * (the spread of repeated runs of one configuration), so that no
 * difference inside the noise is read as a result (docs/adaptive.md,
 * "Policies against the baselines"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gcscale/adaptive.h"
#include "gcscale/validate.h"
#include "gcscale/workload.h"
#include "corpus_internal.h"

#define MAX_REPS 9
static const char *const POLICIES[] = {"adaptive", "all", "boehm", "hotspot", "zgc"};
#define NPOLICIES ((int)(sizeof POLICIES / sizeof *POLICIES))

/* What a run's collections add up to, beyond the workload log's rows. */
typedef struct tally {
    double cpu_ns, decision_max;
    uint64_t n, at_one, decisions_over;
} tally;

static void on_collection(const gcs_gc_stats *st, void *arg)
{
    tally *t = arg;
    if (st->remark)
        return;
    double cpu = 0, mark = 0, sweep = 0;
    for (int i = 0; i < st->threads && i < GCS_GC_MAX_THREADS; i++) {
        mark += (double)st->workers[i].mark_ns;
        sweep += (double)st->workers[i].sweep_ns;
    }
    /* Workers spin while they search, so their whole mark time is CPU; the
     * collecting thread alone runs the rest of the pause (stopping, roots,
     * the decision). */
    double rest = (double)st->pause_ns - (double)st->mark_ns - (double)st->sweep_ns;
    cpu = mark + sweep + (rest > 0 ? rest : 0);
    t->cpu_ns += cpu;
    t->n++;
    t->at_one += st->threads == 1;
    if (st->decision.used && st->pause_ns > 0) {
        double pct = 100.0 * (double)st->decision.decision_ns / (double)st->pause_ns;
        t->decision_max = fmax(t->decision_max, pct);
        t->decisions_over += pct > 1.0; /* issue 24: at most 1% of the pause, every collection */
    }
}

static int run_one(const gcs_validate_opts *o, const gcs_workload_info *info, const char *spec,
                   gcs_validate_policy_cell *c, gcs_err *err)
{
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.heap_limit = gcs_workload_default_heap(info, o->mutators);
    go.log_path = "";
    go.snapshot_path = "";
    int crc = gcs_adaptive_configure(&go, spec, o->machine_path, err);
    if (crc != 0) { /* the fallback would be measured instead of the policy */
        if (crc > 0)
            gcs_adaptive_release(&go);
        return -1;
    }
    go.placement = o->placement;
    tally t = {0};
    go.on_collection = on_collection;
    go.on_collection_arg = &t;
    gcs_workload_gclog log;
    gcs_workload_result res;
    if (_gcs_validate_run_once(o, info, &go, &log, &res, err) < 0)
        return -1;
    int rc = 0;
    if (rc == 0 && !res.verified) {
        gcs_err_set(err, "%s failed its own check under --gc-threads %s: %s", info->name, spec, res.verify_msg);
        rc = -1;
    }
    if (rc == 0) {
        double threads = 0;
        for (size_t i = res.gc_first; i < res.gc_first + res.gc_count; i++) {
            c->mark_ms += (double)log.rows[i].mark_ns / 1e6;
            c->sweep_ms += (double)log.rows[i].sweep_ns / 1e6;
            c->gc_ms += (double)log.rows[i].pause_ns / 1e6;
            threads += log.rows[i].threads;
        }
        c->collections = res.gc_count;
        c->avg_threads = res.gc_count ? threads / (double)res.gc_count : 0;
        c->cpu_ms = t.cpu_ns / 1e6;
        c->p1_share = t.n ? (double)t.at_one / (double)t.n : 0;
        c->decision_max_pct = t.decision_max;
        c->decisions_over = t.decisions_over;
    }
    gcs_workload_gclog_free(&log);
    return rc;
}

static int cmp_cell(const void *a, const void *b)
{
    double x = ((const gcs_validate_policy_cell *)a)->gc_ms, y = ((const gcs_validate_policy_cell *)b)->gc_ms;
    return x < y ? -1 : x > y;
}

int gcs_validate_policies_run(const gcs_validate_opts *opts, gcs_validate_policies *out, gcs_err *err)
{
    gcs_validate_opts o = *opts;
    memset(out, 0, sizeof *out);
    uint64_t t0 = gcs_now_ns();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    out->cpus = online > 0 ? (int)online : 1;
    if (!o.machine_path) {
        gcs_err_set(err, "validate: the adaptive policy needs a machine profile");
        return -1;
    }
    if (o.placement == GCS_TOPO_PLACE_DEFAULT)
        o.placement = GCS_TOPO_PLACE_CORES;
    if (o.max_threads <= 0)
        o.max_threads = out->cpus > GCS_GC_MAX_THREADS ? GCS_GC_MAX_THREADS : out->cpus;
    if (o.run_reps <= 0)
        o.run_reps = 5;
    if (o.run_reps > MAX_REPS) {
        gcs_err_set(err, "validate: at most %d whole runs per configuration", MAX_REPS);
        return -1;
    }
    if (o.mutators <= 0)
        o.mutators = out->cpus;
    if (!(o.steps_scale > 0))
        o.steps_scale = 1;
    /* Fixed P: every P up to 8, then powers of two and max (as validate). */
    int cand[GCS_VALIDATE_MAX_RUNS], ncand = 0;
    for (int p = 1; p <= o.max_threads && ncand < GCS_VALIDATE_MAX_RUNS; p++)
        if (p <= 8 || (p & (p - 1)) == 0 || p == o.max_threads)
            cand[ncand++] = p;
    const char *names[GCS_VALIDATE_MAX_WORKLOADS];
    int nw = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", o.workloads && *o.workloads ? o.workloads : "");
    if (!*buf) {
        for (size_t i = 0; i < gcs_workload_count() && nw < GCS_VALIDATE_MAX_WORKLOADS; i++)
            names[nw++] = gcs_workload_info_at(i)->name;
    } else {
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && nw < GCS_VALIDATE_MAX_WORKLOADS;
             tok = strtok_r(NULL, ",", &save)) {
            const gcs_workload_info *info = gcs_workload_find(tok);
            if (!info) {
                gcs_err_set(err, "unknown workload '%s' (bh, cube, cky or chain)", tok);
                return -1;
            }
            names[nw++] = info->name;
        }
    }
    snprintf(out->machine, sizeof out->machine, "%s", o.machine_path);
    gethostname(out->host, sizeof out->host - 1);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out->created, sizeof out->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    out->max_threads = o.max_threads;
    out->mutators = o.mutators;
    out->steps_scale = o.steps_scale;
    out->runs = o.run_reps;
    int ncells = ncand + NPOLICIES;
    gcs_progress pr;
    gcs_progress_init(&pr, (double)nw * ncells * o.run_reps, o.quiet);
    gcs_validate_policy_cell(*all)[MAX_REPS] = calloc((size_t)ncells, sizeof *all);
    if (!all) {
        gcs_err_set(err, "validate: out of memory");
        return -1;
    }
    int rc = -1;
    for (int wi = 0; wi < nw; wi++) {
        const gcs_workload_info *info = gcs_workload_find(names[wi]);
        gcs_validate_policy_row *row = &out->rows[out->nrows++];
        snprintf(row->workload, sizeof row->workload, "%s", info->name);
        row->ncells = ncells;
        row->nfixed = ncand;
        memset(all, 0, sizeof *all * (size_t)ncells);
        /* Rounds over the configurations, so that a slow phase of the host
         * hits each alike. */
        for (int rep = 0; rep < o.run_reps; rep++)
            for (int ci = 0; ci < ncells; ci++) {
                char spec[32], step[96];
                if (ci < ncand)
                    snprintf(spec, sizeof spec, "%d", cand[ci]);
                else
                    snprintf(spec, sizeof spec, "%s:%d", POLICIES[ci - ncand], o.max_threads);
                snprintf(step, sizeof step, "%s: run %d of %d, --gc-threads %s", info->name, rep + 1, o.run_reps, spec);
                gcs_progress_step(&pr, step, 1);
                gcs_validate_policy_cell *c = &all[ci][rep];
                snprintf(c->name, sizeof c->name, "%s", ci < ncand ? spec : POLICIES[ci - ncand]);
                c->threads = ci < ncand ? cand[ci] : 0;
                if (run_one(&o, info, spec, c, err) < 0)
                    goto done;
                gcs_progress_done(&pr, 1);
            }
        double spreads[GCS_VALIDATE_MAX_CELLS];
        for (int ci = 0; ci < ncells; ci++) {
            gcs_validate_policy_cell sorted[MAX_REPS];
            memcpy(sorted, all[ci], sizeof *sorted * (size_t)o.run_reps);
            qsort(sorted, (size_t)o.run_reps, sizeof *sorted, cmp_cell);
            row->cells[ci] = sorted[o.run_reps / 2];
            double med = sorted[o.run_reps / 2].gc_ms;
            spreads[ci] = med > 0 ? 100 * (sorted[o.run_reps - 1].gc_ms - sorted[0].gc_ms) / med : 0;
            row->cells[ci].spread_pct = spreads[ci];
        }
        gcs_stats_sort(spreads, (size_t)ncells);
        row->noise_pct = spreads[ncells / 2];
        row->best_fixed = 0;
        for (int ci = 1; ci < ncand; ci++)
            if (row->cells[ci].gc_ms < row->cells[row->best_fixed].gc_ms)
                row->best_fixed = ci;
    }
    gcs_progress_finish(&pr);
    out->seconds = (double)(gcs_now_ns() - t0) / 1e9;
    rc = 0;
done:
    free(all);
    return rc;
}

static double over(double x, double best) { return best > 0 ? 100 * (x / best - 1) : 0; }

int gcs_validate_policies_write(const gcs_validate_policies *p, const char *dir, gcs_err *err)
{
    if (gcs_make_dirs(dir, err) < 0)
        return -1;
    char path[4200];
    gcs_outfile f;
    snprintf(path, sizeof path, "%s/policies.md", dir);
    if (gcs_outfile_open(&f, path, err) < 0)
        return -1;
    FILE *fp = f.fp;
    fprintf(fp, "# GC thread policies against the best fixed P\n\n"
                "Host %s, %d CPUs, pool %d, %d mutators, workload steps x %g, profile %s, %s; each cell is "
                "the run with the median GC time of %d whole runs (rounds over the configurations); %.0f s.\n\n",
            p->host, p->cpus, p->max_threads, p->mutators, p->steps_scale, p->machine, p->created, p->runs,
            p->seconds);
    for (int table = 0; table < 2; table++) {
        fprintf(fp, "## %s\n\n", table == 0 ? "GC time (sum of the pauses), ms (vs the best fixed P)"
                                            : "GC CPU time, ms (vs the best fixed P's)");
        if (p->nrows == 0)
            break;
        const gcs_validate_policy_row *r0 = &p->rows[0];
        fprintf(fp, "| workload |");
        for (int ci = 0; ci < r0->ncells; ci++)
            fprintf(fp, " %s%s |", ci < r0->nfixed ? "P = " : "", r0->cells[ci].name);
        fprintf(fp, " noise floor |\n|---|");
        for (int ci = 0; ci <= r0->ncells; ci++)
            fprintf(fp, "---:|");
        fprintf(fp, "\n");
        for (int wi = 0; wi < p->nrows; wi++) {
            const gcs_validate_policy_row *r = &p->rows[wi];
            const gcs_validate_policy_cell *best = &r->cells[r->best_fixed];
            fprintf(fp, "| %s |", r->workload);
            for (int ci = 0; ci < r->ncells; ci++) {
                const gcs_validate_policy_cell *c = &r->cells[ci];
                double v = table == 0 ? c->gc_ms : c->cpu_ms, b = table == 0 ? best->gc_ms : best->cpu_ms;
                if (ci == r->best_fixed)
                    fprintf(fp, " **%.1f** (best) |", v);
                else
                    fprintf(fp, " %.1f (%+.1f%%) |", v, over(v, b));
            }
            fprintf(fp, " %.1f%% |\n", r->noise_pct);
        }
        fprintf(fp, "\n");
    }
    /* Where the time goes: the thread count changes both phases, and a
     * sweep that scales can outweigh a mark that does not (docs/adaptive.md,
     * "The whole collection"). */
    if (p->nrows > 0) {
        const gcs_validate_policy_row *r0 = &p->rows[0];
        fprintf(fp, "## Mark + sweep of those runs, ms\n\n| workload |");
        for (int ci = 0; ci < r0->ncells; ci++)
            fprintf(fp, " %s%s |", ci < r0->nfixed ? "P = " : "", r0->cells[ci].name);
        fprintf(fp, "\n|---|");
        for (int ci = 0; ci < r0->ncells; ci++)
            fprintf(fp, "---:|");
        fprintf(fp, "\n");
        for (int wi = 0; wi < p->nrows; wi++) {
            const gcs_validate_policy_row *r = &p->rows[wi];
            fprintf(fp, "| %s |", r->workload);
            for (int ci = 0; ci < r->ncells; ci++)
                fprintf(fp, " %.1f + %.1f |", r->cells[ci].mark_ms, r->cells[ci].sweep_ms);
            fprintf(fp, "\n");
        }
        fprintf(fp, "\n");
    }
    fprintf(fp, "## The policies' choices\n\n| workload | policy | mean P | collections at P = 1 | "
                "largest decision / pause | decisions over 1%% | spread of its runs |\n"
                "|---|---|---:|---:|---:|---:|---:|\n");
    for (int wi = 0; wi < p->nrows; wi++) {
        const gcs_validate_policy_row *r = &p->rows[wi];
        for (int ci = r->nfixed; ci < r->ncells; ci++) {
            const gcs_validate_policy_cell *c = &r->cells[ci];
            fprintf(fp, "| %s | %s | %.2f | %.0f%% of %llu | %.3f%% | %llu | %.1f%% |\n", r->workload, c->name,
                    c->avg_threads, 100 * c->p1_share, (unsigned long long)c->collections, c->decision_max_pct,
                    (unsigned long long)c->decisions_over, c->spread_pct);
        }
    }
    fprintf(fp, "\nThe noise floor is the median, over the configurations, of (slowest - fastest) / median "
                "of one configuration's runs: a difference smaller than it is not a result.\n");
    if (gcs_outfile_commit(&f, err) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/policies.csv", dir);
    if (gcs_outfile_open(&f, path, err) < 0)
        return -1;
    fprintf(f.fp, "workload,config,threads,gc_ms,mark_ms,sweep_ms,cpu_ms,avg_threads,p1_share,decision_max_pct,"
                  "decisions_over,collections,spread_pct,best_fixed,noise_pct\n");
    for (int wi = 0; wi < p->nrows; wi++) {
        const gcs_validate_policy_row *r = &p->rows[wi];
        for (int ci = 0; ci < r->ncells; ci++) {
            const gcs_validate_policy_cell *c = &r->cells[ci];
            fprintf(f.fp, "%s,%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%llu,%llu,%.2f,%d,%.2f\n", r->workload, c->name,
                    c->threads, c->gc_ms, c->mark_ms, c->sweep_ms, c->cpu_ms, c->avg_threads, c->p1_share,
                    c->decision_max_pct, (unsigned long long)c->decisions_over, (unsigned long long)c->collections,
                    c->spread_pct, ci == r->best_fixed, r->noise_pct);
        }
    }
    return gcs_outfile_commit(&f, err);
}
