/* cmd_bench.c -- gcscale bench: run one microbenchmark and print its table.
 *
 *   gcscale bench latency|rw|occupancy|bandwidth|sweep|topology [options]
 *                 [--json | --csv]
 */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *const cmd = "bench";

enum {
    O_CPU = 1 << 0, O_CPU_NODE = 1 << 1, O_NODE = 1 << 2, O_SIZE = 1 << 3, O_REPS = 1 << 4,
    O_HUGE = 1 << 5, O_THREADS = 1 << 6, O_CHAINS = 1 << 7, O_TOPO = 1 << 8, O_STEPS = 1 << 9,
    O_ACCESS = 1 << 10, O_SEED = 1 << 11,
};

typedef struct bench {
    const char *name;
    int (*run)(const struct bench *b);
    unsigned allowed;
    const char *summary;
    const char *help;
    /* parsed options; -1 / 0 = not given */
    int cpu, cpu_node, mem_node, reps, threads, chains, huge; /* huge: -1 auto, 3 both */
    uint64_t size, steps, seed;
    const char *synthetic, *access;
    gcs_format fmt;
    gcs_topo *t;
    int quiet;              /* --quiet: no progress lines */
    const char *table;      /* --table NAME */
    gcs_progress *pr;       /* the run's progress: one line per measurement on stderr */
} bench;

static void print_general_help(FILE *fp);

/* ---- small helpers --------------------------------------------------------- */

static void cpus_text(const int *cpus, int n, char *buf, size_t len)
{
    /* "0-3,8,10-11": how taskset and lscpu write CPU lists. */
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n && used < len; i++) {
        int j = i;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        used += (size_t)snprintf(buf + used, len - used, j > i ? "%s%d-%d" : "%s%d", used ? "," : "",
                                 cpus[i], cpus[j]);
        i = j;
    }
}

/* "1.5G", "64M": buffer sizes in progress lines and the sweep's table. */
static void size_text(uint64_t b, char *buf, size_t len) { gcs_format_bytes(b, GCS_BYTES_SHORT, buf, len); }

/* A progress line for the next measurement ("occupancy rw: 40 load points
 * on 3.8 GiB"): the default buffers are 8 x LLC, and a run takes from
 * seconds to minutes with nothing else to show until its table. */
static void bench_step(const bench *b, double work, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void bench_step(const bench *b, double work, const char *fmt, ...)
{
    char step[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(step, sizeof step, fmt, ap);
    va_end(ap);
    gcs_progress_step(b->pr, step, work);
}

/* One benchmark's tables (cli_print_tables): JSON "gcscale-bench-NAME". */
static void print_tables(const bench *b, gcs_table **tables, const char *const *keys, int n)
{
    char format[64];
    snprintf(format, sizeof format, "gcscale-bench-%s", b->name);
    cli_print_tables(cmd, format, tables, keys, n, b->fmt, b->table);
}

static void print_table(const bench *b, gcs_table *t)
{
    print_tables(b, &t, (const char *const[]){"rows"}, 1);
}

/* The buffer: --size, else 8 x LLC, at least 1 GiB, so a random line is almost never
 * in any cache. */
static uint64_t buffer_size(const bench *b)
{
    if (b->size)
        return b->size;
    uint64_t s = 8 * gcs_topo_llc_bytes(b->t);
    if (s < (1ull << 30))
        s = 1ull << 30;
    return (s + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
}

/* Memory node: --node, else the node of --cpu / --cpu-node, else 0. */
static int mem_node_of(const bench *b)
{
    if (b->mem_node >= 0)
        return b->mem_node;
    if (b->cpu >= 0)
        return gcs_topo_cpu_node(b->t, b->cpu);
    return b->cpu_node >= 0 ? b->cpu_node : 0;
}

/* CPU side: --cpu, else --cpu-node, else the memory node's own CPUs (the
 * nearest CPU node's for a memory-only node). */
static void cpu_side(const bench *b, int *cpu, int *cpu_node)
{
    *cpu = b->cpu;
    *cpu_node = b->cpu_node;
    if (*cpu < 0 && *cpu_node < 0) {
        int m = mem_node_of(b);
        int near = gcs_topo_local_cpu_node(b->t, m);
        *cpu_node = near >= 0 ? near : 0;
    }
}

static void cpu_label(int cpu, int cpu_node, char *buf, size_t len)
{
    if (cpu >= 0)
        snprintf(buf, len, "cpu %d", cpu);
    else if (cpu_node >= 0)
        snprintf(buf, len, "node %d", cpu_node);
    else
        snprintf(buf, len, "any");
}

static gcs_huge huge_single(const bench *b)
{
    if (b->huge == 3)
        cli_usage_error(cmd, "--hugepages both applies to latency and rw only");
    if (b->huge >= 0)
        return (gcs_huge)b->huge;
    return gcs_chase_thp_available(NULL, 0) ? GCS_HUGE_ON : GCS_HUGE_DEFAULT;
}

static void join_warn(char *dst, size_t len, const char *w)
{
    if (!w || !w[0] || strstr(dst, w))
        return;
    size_t used = strlen(dst);
    snprintf(dst + used, len - used, "%s%s", used ? "; " : "", w);
}

/* ---- latency and rw ------------------------------------------------------------- */

static int run_latency(const bench *b)
{
    int rw = strcmp(b->name, "rw") == 0;
    gcs_huge modes[2];
    int nmodes = 0;
    int thp = gcs_chase_thp_available(NULL, 0);
    if (b->huge == 3 || (b->huge < 0 && thp)) {
        modes[nmodes++] = GCS_HUGE_OFF;
        modes[nmodes++] = GCS_HUGE_ON;
    } else {
        modes[nmodes++] = b->huge < 0 ? GCS_HUGE_DEFAULT : (gcs_huge)b->huge;
    }
    static const char *const cols[] = {"access", "cpu", "mem_node", "huge_pages", "huge_mib",
                                       "size_bytes", "reps", "steps", "median_ns", "p10_ns",
                                       "p90_ns", "min_ns", "max_ns", "llc_miss_per_step",
                                       "warning"};
    gcs_table *tab = gcs_table_new(rw ? "idle atomic read-modify-write latency (ns per step)"
                                      : "idle read latency (ns per step)",
                                   15, cols);
    int cpu, cpu_node;
    cpu_side(b, &cpu, &cpu_node);
    char sz[32];
    size_text(buffer_size(b), sz, sizeof sz);
    gcs_progress_init(b->pr, nmodes, b->quiet);
    for (int i = 0; i < nmodes; i++) {
        bench_step(b, 1, "%s latency, huge pages %s, %s buffer", rw ? "rw" : "read",
                   gcs_chase_huge_name(modes[i]), sz);
        gcs_chase_opts o = {.cpu = cpu, .cpu_node = cpu < 0 ? cpu_node : -1,
                            .mem_node = mem_node_of(b), .size_bytes = buffer_size(b),
                            .huge = modes[i],
                            .prm = {.rw = rw, .reps = b->reps > 0 ? b->reps : 7, .steps = b->steps,
                                    .count_llc = 1},
                            .seed = b->seed};
        gcs_chase_result r;
        gcs_chase_buf_info info;
        char warn[768] = "";
        gcs_err err = {{0}};
        if (gcs_chase_run(b->t, &o, &r, &info, warn, sizeof warn, &err) < 0)
            cli_fail(cmd, &err);
        if (modes[i] == GCS_HUGE_ON && info.huge_bytes == 0)
            join_warn(warn, sizeof warn, "no transparent huge pages were used");
        char label[32];
        cpu_label(cpu, cpu < 0 ? cpu_node : -1, label, sizeof label);
        gcs_table_add_str(tab, rw ? "rw" : "read");
        gcs_table_add_str(tab, label);
        gcs_table_add_int(tab, o.mem_node);
        gcs_table_add_str(tab, gcs_chase_huge_name(modes[i]));
        gcs_table_add_int(tab, (long long)(info.huge_bytes >> 20));
        gcs_table_add_int(tab, (long long)info.size_bytes);
        gcs_table_add_int(tab, r.reps);
        gcs_table_add_int(tab, (long long)r.steps_per_rep);
        gcs_table_add_num(tab, r.median_ns, 1);
        gcs_table_add_num(tab, r.p10_ns, 1);
        gcs_table_add_num(tab, r.p90_ns, 1);
        gcs_table_add_num(tab, r.min_ns, 1);
        gcs_table_add_num(tab, r.max_ns, 1);
        gcs_table_add_num(tab, r.llc_misses_per_step, 2);
        gcs_table_add_str(tab, warn);
        gcs_progress_done(b->pr, 1);
    }
    gcs_progress_finish(b->pr);
    print_table(b, tab);
    gcs_table_free(tab);
    return 0;
}

/* ---- sweep ------------------------------------------------------------------------ */

typedef struct sweep_job {
    const bench *b;
    gcs_huge huge;
    gcs_chase_sweep_point pts[GCS_SWEEP_MAX_POINTS];
    int npts, rc;
    char warn[512];
    gcs_err err;
} sweep_job;

static void *sweep_fn(void *arg)
{
    sweep_job *j = arg;
    const bench *b = j->b;
    j->rc = -1;
    gcs_chase_buf *buf = gcs_chase_buf_new(b->t, buffer_size(b), mem_node_of(b),
                                           j->huge, &j->err);
    if (!buf)
        return NULL;
    snprintf(j->warn, sizeof j->warn, "%s", gcs_chase_buf_info_get(buf)->warning);
    j->rc = gcs_chase_sweep(buf, 4096, 1, b->reps > 0 ? b->reps : 3, b->steps, j->pts, &j->npts,
                            &j->err);
    gcs_chase_buf_free(buf);
    return NULL;
}

static int run_sweep(const bench *b)
{
    sweep_job *j = calloc(1, sizeof *j);
    j->b = b;
    j->huge = huge_single(b);
    int cpu, cpu_node;
    cpu_side(b, &cpu, &cpu_node);
    char pin_warn[256], sz[32];
    gcs_err err = {{0}};
    size_text(buffer_size(b), sz, sizeof sz);
    gcs_progress_init(b->pr, 1, b->quiet);
    bench_step(b, 1, "sweep, working sets 4 KiB to %s (one table at the end)", sz);
    if (gcs_topo_run_pinned(b->t, cpu, cpu_node, sweep_fn, j, pin_warn, sizeof pin_warn, &err) < 0)
        cli_fail(cmd, &err);
    if (j->rc < 0)
        cli_fail(cmd, &j->err);
    gcs_progress_done(b->pr, 1);
    gcs_progress_finish(b->pr);
    join_warn(j->warn, sizeof j->warn, pin_warn);
    static const char *const cols[] = {"size_bytes", "size", "median_ns", "p10_ns", "p90_ns"};
    char title[700];
    snprintf(title, sizeof title, "read latency vs working set (huge pages %s)%s%s",
             gcs_chase_huge_name(j->huge), j->warn[0] ? "; warning: " : "", j->warn);
    gcs_table *tab = gcs_table_new(title, 5, cols);
    for (int i = 0; i < j->npts; i++) {
        char s[32];
        size_text(j->pts[i].size_bytes, s, sizeof s);
        gcs_table_add_int(tab, (long long)j->pts[i].size_bytes);
        gcs_table_add_str(tab, s);
        gcs_table_add_num(tab, j->pts[i].median_ns, 2);
        gcs_table_add_num(tab, j->pts[i].p10_ns, 2);
        gcs_table_add_num(tab, j->pts[i].p90_ns, 2);
    }
    print_table(b, tab);
    gcs_table_free(tab);
    free(j);
    return 0;
}

/* ---- occupancy ------------------------------------------------------------------------ */

typedef struct m1_job {
    gcs_chase_buf *buf;
    gcs_chase_params prm;
    gcs_chase_result res;
    int rc;
    gcs_err err;
} m1_job;

static void *m1_fn(void *arg)
{
    m1_job *j = arg;
    j->rc = gcs_chase_measure(j->buf, &j->prm, &j->res, &j->err);
    return NULL;
}

static int run_occupancy(const bench *b)
{
    int m = mem_node_of(b);
    gcs_err err = {{0}};
    char sz[32];
    size_text(buffer_size(b), sz, sizeof sz);
    int nclasses = strcmp(b->access, "both") == 0 ? 2 : 1;
    /* work: the buffer and its cycle 1, then per class M1 1 and the points 4 */
    gcs_progress_init(b->pr, 1 + 5 * nclasses, b->quiet);
    bench_step(b, 1, "occupancy: a %s buffer on node %d and its random cycle", sz, m);
    gcs_chase_buf *buf = gcs_chase_buf_new(b->t, buffer_size(b), m,
                                           huge_single(b), &err);
    if (!buf || gcs_chase_build(buf, 0, b->seed, &err) < 0)
        cli_fail(cmd, &err);
    char warn[768] = "";
    join_warn(warn, sizeof warn, gcs_chase_buf_info_get(buf)->warning);
    gcs_progress_done(b->pr, 1);

    /* The CPUs and thread counts calibrate uses (microbench/occplan.c). */
    gcs_occ_plan plan;
    if (gcs_occ_plan_init(&plan, b->t, m, b->threads, &err) < 0)
        cli_fail(cmd, &err);
    int threads = plan.max_threads, nc = plan.nthread_counts;
    int max_chains = b->chains > 0 ? b->chains : GCS_OCC_MAX_CHAINS;
    int chains[GCS_OCC_MAX_CHAINS + 1], nch = 0;
    for (int k = 1; k <= max_chains; k *= 2)
        chains[nch++] = k;
    if (chains[nch - 1] != max_chains)
        chains[nch++] = max_chains;

    static const char *const pcols[] = {"access", "threads", "chains", "outstanding",
                                        "steps_per_chain", "throughput_per_ns", "latency_ns"};
    static const char *const fcols[] = {"access", "mem_node", "m1_ns", "open_s_o_ns",
                                        "open_rms_rel_residual", "closed_s_o_ns",
                                        "closed_rms_rel_residual", "note"};
    gcs_table *pt = gcs_table_new("occupancy load points", 7, pcols);
    gcs_table *ft = gcs_table_new("occupancy fits (open: Endo et al.; closed: exact MVA)", 8, fcols);
    for (int rw = 0; rw < 2; rw++) {
        if ((rw && strcmp(b->access, "read") == 0) || (!rw && strcmp(b->access, "rw") == 0))
            continue;
        /* M1: the idle latency from the first thread's CPU, on this buffer. */
        bench_step(b, 1, "occupancy %s: idle latency M1", rw ? "rw" : "read");
        m1_job mj = {.buf = buf, .prm = {.rw = rw, .reps = b->reps > 0 ? b->reps : 5}};
        char pin_warn[256];
        if (gcs_topo_run_pinned(b->t, plan.first_cpu, -1, m1_fn, &mj, pin_warn, sizeof pin_warn, &err) < 0)
            cli_fail(cmd, &err);
        if (mj.rc < 0)
            cli_fail(cmd, &mj.err);
        join_warn(warn, sizeof warn, pin_warn);
        gcs_progress_done(b->pr, 1);
        bench_step(b, 4, "occupancy %s: %d load points (up to %d threads x %d chains)", rw ? "rw" : "read",
                   nc * nch, threads, max_chains);
        gcs_occ_opts o = {.rw = rw, .chain_counts = chains, .nchain_counts = nch,
                          .steps_per_chain = b->steps, .reps = b->reps > 0 ? b->reps : 3};
        gcs_occ_plan_opts(&plan, &o);
        gcs_occ_result *r = malloc(sizeof *r);
        if (gcs_occ_measure(buf, b->t, &o, r, &err) < 0)
            cli_fail(cmd, &err);
        gcs_progress_done(b->pr, 4);
        join_warn(warn, sizeof warn, r->warning);
        for (int i = 0; i < r->npoints; i++) {
            gcs_table_add_str(pt, rw ? "rw" : "read");
            gcs_table_add_int(pt, r->threads[i]);
            gcs_table_add_int(pt, r->chains[i]);
            gcs_table_add_int(pt, (long long)r->points[i].outstanding);
            gcs_table_add_int(pt, (long long)r->steps_per_chain[i]);
            gcs_table_add_num(pt, r->points[i].throughput_per_ns, 5);
            gcs_table_add_num(pt, r->points[i].latency_ns, 1);
        }
        gcs_occfit_result fo, fc;
        gcs_err eo = {{0}}, ec = {{0}};
        int ro = gcs_occfit_open(r->points, r->npoints, mj.res.median_ns, &fo, &eo);
        int rc = gcs_occfit_closed(r->points, r->npoints, mj.res.median_ns, 0, &fc, &ec);
        /* calibrate's checks: what S_O it would store without an open fit,
         * and whether the N = 1 point agrees with M1 */
        gcs_occ_check chk;
        gcs_occ_check_points(r, mj.res.median_ns, &chk);
        char note[1200] = "";
        if (ro < 0 || !isfinite(fo.s_o_ns) || fo.s_o_ns < 0) {
            char fb[96];
            snprintf(fb, sizeof fb, "calibrate would store S_O = 1/max throughput = %.2f ns", chk.s_o_fallback_ns);
            join_warn(note, sizeof note, ro < 0 ? eo.msg : "no finite open S_O");
            join_warn(note, sizeof note, fb);
        }
        else if (fo.bound) /* a limit the data lean on, not a measured S_O */
            join_warn(note, sizeof note,
                      fo.bound < 0 ? "open S_O at its lower bound 0 (no latency rising with load)"
                                   : "open S_O at its upper bound");
        join_warn(note, sizeof note, chk.n1_note);
        if (rc < 0)
            join_warn(note, sizeof note, ec.msg);
        else if (fc.bound)
            join_warn(note, sizeof note, fc.bound < 0 ? "closed S_O at its lower bound 0"
                                                      : "closed S_O at its upper bound");
        join_warn(note, sizeof note, warn);
        gcs_table_add_str(ft, rw ? "rw" : "read");
        gcs_table_add_int(ft, m);
        gcs_table_add_num(ft, mj.res.median_ns, 1);
        gcs_table_add_num(ft, ro < 0 ? NAN : fo.s_o_ns, 2);
        gcs_table_add_num(ft, ro < 0 ? NAN : fo.rms_rel_residual, 4);
        gcs_table_add_num(ft, rc < 0 ? NAN : fc.s_o_ns, 2);
        gcs_table_add_num(ft, rc < 0 ? NAN : fc.rms_rel_residual, 4);
        gcs_table_add_str(ft, note);
        free(r);
    }
    gcs_progress_finish(b->pr);
    gcs_table *tabs[] = {pt, ft};
    static const char *const keys[] = {"points", "fits"};
    print_tables(b, tabs, keys, 2);
    gcs_table_free(pt);
    gcs_table_free(ft);
    gcs_chase_buf_free(buf);
    gcs_occ_plan_free(&plan);
    return 0;
}

/* ---- bandwidth ---------------------------------------------------------------------------- */

static int run_bandwidth(const bench *b)
{
    int m = mem_node_of(b);
    gcs_err err = {{0}};
    gcs_chase_buf *buf = gcs_chase_buf_new(b->t, buffer_size(b), m,
                                           huge_single(b), &err);
    if (!buf)
        cli_fail(cmd, &err);
    char warn[768] = "";
    join_warn(warn, sizeof warn, gcs_chase_buf_info_get(buf)->warning);
    int ncpus;
    int *cpus = gcs_occ_cpu_order(b->t, m, &ncpus); /* occupancy's order */
    if (!cpus) {
        gcs_err_set(&err, "out of memory");
        cli_fail(cmd, &err);
    }
    int synthetic = gcs_topo_is_synthetic(b->t);
    if (synthetic) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        ncpus = online > 0 ? (int)online : 1;
    }
    int threads = b->threads > 0 ? b->threads : ncpus;
    if (!synthetic && threads > ncpus)
        threads = ncpus;
    gcs_bw_result r;
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(buf);
    char sz[32];
    size_text(in->size_bytes, sz, sizeof sz);
    gcs_progress_init(b->pr, 1, b->quiet);
    bench_step(b, 1, "bandwidth: %d threads reading %s on node %d", threads, sz, m);
    if (gcs_bw_measure(b->t, gcs_chase_buf_data(buf), in->size_bytes, synthetic ? NULL : cpus,
                       threads, b->reps > 0 ? b->reps : 10, &r, &err) < 0)
        cli_fail(cmd, &err);
    gcs_progress_done(b->pr, 1);
    gcs_progress_finish(b->pr);
    join_warn(warn, sizeof warn, r.warning);
    static const char *const cols[] = {"mem_node", "threads", "size_bytes", "huge_pages", "reps",
                                       "best_gbs", "median_gbs", "warning"};
    gcs_table *tab = gcs_table_new("read bandwidth, all threads loading one node (GB/s = 1e9 B/s)",
                                   8, cols);
    gcs_table_add_int(tab, m);
    gcs_table_add_int(tab, r.threads);
    gcs_table_add_int(tab, (long long)r.bytes);
    gcs_table_add_str(tab, gcs_chase_huge_name(in->huge));
    gcs_table_add_int(tab, r.reps);
    gcs_table_add_num(tab, r.best_gbs, 2);
    gcs_table_add_num(tab, r.median_gbs, 2);
    gcs_table_add_str(tab, warn);
    print_table(b, tab);
    gcs_table_free(tab);
    gcs_chase_buf_free(buf);
    free(cpus);
    return 0;
}

/* ---- topology ------------------------------------------------------------------------------ */

static int run_topology(const bench *b)
{
    static const char *const scols[] = {"topology", "binding", "cpus", "nodes", "llc_bytes",
                                        "thp", "counters", "counters_reason"};
    static const char *const ncols[] = {"node", "os_index", "cpus", "mem_bytes"};
    static const char *const ccols[] = {"level", "type", "size_bytes", "line_bytes", "ways", "cpus"};
    gcs_table *st = gcs_table_new("system", 8, scols);
    gcs_table *nt = gcs_table_new("memory nodes", 4, ncols);
    gcs_table *ct = gcs_table_new("caches", 6, ccols);
    char text[4096], thp[32];
    gcs_chase_thp_available(thp, sizeof thp);
    gcs_counters_info ci;
    gcs_counters_probe(&ci);
    gcs_table_add_str(st, gcs_topo_description(b->t));
    gcs_table_add_str(st, gcs_topo_is_synthetic(b->t) ? "not possible (synthetic)" : "yes");
    gcs_table_add_int(st, gcs_topo_ncpus(b->t));
    gcs_table_add_int(st, gcs_topo_nnodes(b->t));
    gcs_table_add_int(st, (long long)gcs_topo_llc_bytes(b->t));
    gcs_table_add_str(st, thp);
    gcs_table_add_str(st, ci.source);
    gcs_table_add_str(st, ci.reason);
    for (int i = 0; i < gcs_topo_nnodes(b->t); i++) {
        const gcs_topo_node *n = gcs_topo_node_at(b->t, i);
        cpus_text(n->cpus, n->ncpus, text, sizeof text);
        gcs_table_add_int(nt, n->id);
        gcs_table_add_int(nt, n->os_index);
        gcs_table_add_str(nt, text);
        gcs_table_add_int(nt, (long long)n->mem_bytes);
    }
    for (int i = 0; i < gcs_topo_ncaches(b->t); i++) {
        const gcs_topo_cache *c = gcs_topo_cache_at(b->t, i);
        cpus_text(c->cpus, c->ncpus, text, sizeof text);
        gcs_table_add_int(ct, c->level);
        gcs_table_add_str(ct, c->type);
        gcs_table_add_int(ct, (long long)c->size_bytes);
        gcs_table_add_int(ct, c->line_bytes);
        gcs_table_add_int(ct, c->ways);
        gcs_table_add_str(ct, text);
    }
    gcs_table *tabs[] = {st, nt, ct};
    static const char *const keys[] = {"system", "nodes", "caches"};
    print_tables(b, tabs, keys, 3);
    gcs_table_free(st);
    gcs_table_free(nt);
    gcs_table_free(ct);
    return 0;
}

/* ---- the table of benchmarks and option parsing ---------------------------------------------- */

#define COMMON_HELP                                                                          \
    "  --topology SYNTH    use an hwloc synthetic topology (nothing is pinned or\n"         \
    "                      bound; a warning says so)\n"                                      \
    "  --json | --csv      machine-readable output (JSON: \"format\":\n"                     \
    "                      gcscale-bench-NAME)\n"                                            \
    "  --table NAME        the one table to print: occupancy (points, fits),\n"             \
    "                      topology (system, nodes, caches); --csv prints one,\n"           \
    "                      by default the first\n"                                           \
    "  --quiet             no progress lines on stderr (warnings are still printed)\n"       \
    "  -h, --help          this text\n"
#define PLACE_HELP                                                                           \
    "  --cpu N             pin to OS CPU N\n"                                                \
    "  --cpu-node N        pin to the CPUs of node N (default: the memory node's own)\n"     \
    "  --node N            memory node to bind the buffer to (default: the CPU's\n"         \
    "                      node, or 0)\n"
#define SIZE_HELP                                                                            \
    "  --size SIZE         buffer size, e.g. 64M, 1G (default 8 x LLC, at least\n"          \
    "                      1 GiB)\n"

static bench benches[] = {
    {"latency", run_latency, O_CPU | O_CPU_NODE | O_NODE | O_SIZE | O_REPS | O_HUGE | O_TOPO | O_STEPS | O_SEED,
     "idle read latency: dependent pointer chase through a random cycle",
     "Chases a random single cycle through every cache line of the buffer (randomized\n"
     "within groups of 32 pages so TLB misses stay rare) and reports ns per step:\n"
     "median, p10, p90, min and max over repetitions, after one warm-up repetition.\n"
     "With transparent huge pages available, runs once with 4 KiB pages\n"
     "(MADV_NOHUGEPAGE) and once with huge pages (MADV_HUGEPAGE).\n",
     -1, -1, -1, 0, 0, 0, -1, 0, 0, 0, NULL, "both", GCS_FORMAT_TEXT, NULL, 0, NULL, NULL},
    {"rw", run_latency, O_CPU | O_CPU_NODE | O_NODE | O_SIZE | O_REPS | O_HUGE | O_TOPO | O_STEPS | O_SEED,
     "idle atomic read-modify-write latency (a marker setting mark bits)",
     "The latency chase where every step is an atomic read-modify-write of the word\n"
     "holding the next pointer (lock cmpxchg on x86), as a marker does when it sets\n"
     "a mark bit.  Options and output as for latency.\n",
     -1, -1, -1, 0, 0, 0, -1, 0, 0, 0, NULL, "both", GCS_FORMAT_TEXT, NULL, 0, NULL, NULL},
    {"occupancy", run_occupancy, O_NODE | O_SIZE | O_REPS | O_HUGE | O_THREADS | O_CHAINS | O_TOPO | O_STEPS | O_ACCESS | O_SEED,
     "load points (threads x chains) on one memory node and the S_O fits",
     "Loads one memory node with 1..THREADS pinned threads, each chasing 1..CHAINS\n"
     "independent chains at once, and records outstanding requests N, node\n"
     "throughput X (requests/ns) and mean latency R (ns) at each load point.  Then\n"
     "fits the occupancy S_O with M1 = the idle latency measured on the same buffer:\n"
     "the open model R = M1 + S_O*rho/(1-rho), rho = S_O*X (Endo et al.) and a\n"
     "closed exact-MVA model, each with its RMS relative residual.\n",
     -1, -1, -1, 0, 0, 0, -1, 0, 0, 0, NULL, "both", GCS_FORMAT_TEXT, NULL, 0, NULL, NULL},
    {"bandwidth", run_bandwidth, O_NODE | O_SIZE | O_REPS | O_HUGE | O_THREADS | O_TOPO | O_SEED,
     "read bandwidth of one memory node with all CPUs loading it",
     "Every thread (one per CPU, pinned; the memory node's own CPUs first) reads and\n"
     "sums its slice of a buffer bound to the node, STREAM-style.  GB/s = bytes /\n"
     "(last finish - first start), best and median over repetitions.\n",
     -1, -1, -1, 0, 0, 0, -1, 0, 0, 0, NULL, "both", GCS_FORMAT_TEXT, NULL, 0, NULL, NULL},
    {"sweep", run_sweep, O_CPU | O_CPU_NODE | O_NODE | O_SIZE | O_REPS | O_HUGE | O_TOPO | O_STEPS | O_SEED,
     "read latency vs working set, 4 KiB to SIZE (the cache staircase)",
     "Read latency chases over working sets from 4 KiB up to SIZE (doubling, with a\n"
     "1.5x point between), relinking one buffer for each size.  The steps of the\n"
     "staircase are the cache levels; the last points are memory.\n",
     -1, -1, -1, 0, 0, 0, -1, 0, 0, 0, NULL, "both", GCS_FORMAT_TEXT, NULL, 0, NULL, NULL},
    {"topology", run_topology, O_TOPO,
     "nodes, CPUs, caches, huge pages and counters as gcscale sees them",
     "Prints what hwloc reports: memory nodes with OS CPU numbers and memory,\n"
     "caches with level, type, size, line size, associativity and the CPUs sharing\n"
     "each instance, plus the transparent-huge-page mode and whether PAPI counters\n"
     "work (and PAPI's reason when they do not).\n",
     -1, -1, -1, 0, 0, 0, -1, 0, 0, 0, NULL, "both", GCS_FORMAT_TEXT, NULL, 0, NULL, NULL},
};
#define NBENCHES (int)(sizeof benches / sizeof benches[0])

static void print_general_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale bench BENCHMARK [options] [--json | --csv]\n"
            "\n"
            "Runs one memory-system microbenchmark and prints its results as a table.\n"
            "\n"
            "benchmarks:\n");
    for (int i = 0; i < NBENCHES; i++)
        fprintf(fp, "  %-10s %s\n", benches[i].name, benches[i].summary);
    fprintf(fp,
            "\n"
            "common options (see 'gcscale bench BENCHMARK --help' for which apply):\n"
            PLACE_HELP SIZE_HELP
            "  --reps N            repetitions (medians over them)\n"
            "  --hugepages MODE    on (MADV_HUGEPAGE), off (MADV_NOHUGEPAGE), default (no\n"
            "                      madvise) or both (latency, rw)\n"
            "  --threads N         occupancy/bandwidth: at most N threads (default all CPUs)\n"
            "  --chains N          occupancy: at most N chains per thread (1..16)\n"
            COMMON_HELP
            "\n"
            "Errors are one line on stderr with exit status 2.  Methods: docs/microbench.md.\n");
}

static void print_bench_help(const bench *b, FILE *fp)
{
    fprintf(fp, "usage: gcscale bench %s [options] [--json | --csv]\n\n%s\n%s\n\noptions:\n",
            b->name, b->summary, b->help);
    if (b->allowed & O_CPU)
        fprintf(fp, "  --cpu N             pin to OS CPU N\n");
    if (b->allowed & O_CPU_NODE)
        fprintf(fp, "  --cpu-node N        pin to the CPUs of node N (default: the memory node's own)\n");
    if (b->allowed & O_NODE)
        fprintf(fp, "  --node N            memory node to bind the buffer to (default: the CPU's\n"
                    "                      node, or 0)\n");
    if (b->allowed & O_SIZE)
        fprintf(fp, SIZE_HELP);
    if (b->allowed & O_REPS)
        fprintf(fp, "  --reps N            repetitions (default %s)\n",
                b->run == run_latency ? "7" : b->run == run_bandwidth ? "10" : "3");
    if (b->allowed & O_STEPS)
        fprintf(fp, "  --steps N           chase steps per repetition%s (default automatic)\n",
                b->run == run_occupancy ? " and chain" : "");
    if ((b->allowed & O_STEPS) && b->run == run_occupancy)
        fprintf(fp, "                      at most the buffer's lines / N, so that the N chains\n"
                    "                      of a load point walk disjoint lines\n");
    if (b->allowed & O_HUGE)
        fprintf(fp, "  --hugepages MODE    on, off, default%s\n"
                    "                      (default: %s when THP is available)\n",
                b->run == run_latency ? " or both" : "", b->run == run_latency ? "both" : "on");
    if (b->allowed & O_THREADS)
        fprintf(fp, "  --threads N         at most N threads (default: all CPUs)\n");
    if (b->allowed & O_CHAINS)
        fprintf(fp, "  --chains N          at most N chains per thread, 1..%d (default %d)\n",
                GCS_OCC_MAX_CHAINS, GCS_OCC_MAX_CHAINS);
    if (b->allowed & O_ACCESS)
        fprintf(fp, "  --access MODE       read, rw or both (default both)\n");
    if (b->allowed & O_SEED)
        fprintf(fp, "  --seed N            seed of the random permutation\n");
    fprintf(fp, COMMON_HELP);
}

int cmd_bench(int argc, char **argv)
{
    if (argc < 2)
        cli_usage_error(cmd, "missing benchmark: latency, rw, occupancy, bandwidth, sweep or topology");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        print_general_help(stdout);
        return 0;
    }
    bench *b = NULL;
    for (int i = 0; i < NBENCHES; i++)
        if (strcmp(benches[i].name, argv[1]) == 0)
            b = &benches[i];
    if (!b)
        cli_usage_error(cmd, "unknown benchmark '%s' (latency, rw, occupancy, bandwidth, sweep, topology)",
                        argv[1]);
    static const struct option options[] = {
        {"cpu", required_argument, NULL, 'c'},      {"cpu-node", required_argument, NULL, 'C'},
        {"node", required_argument, NULL, 'n'},     {"size", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'r'},     {"hugepages", required_argument, NULL, 'H'},
        {"threads", required_argument, NULL, 't'},  {"chains", required_argument, NULL, 'k'},
        {"topology", required_argument, NULL, 'T'}, {"steps", required_argument, NULL, 'S'},
        {"access", required_argument, NULL, 'a'},   {"seed", required_argument, NULL, 'e'},
        {"json", no_argument, NULL, 'j'},           {"csv", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
        {"table", required_argument, NULL, 'b'},
        {NULL, 0, NULL, 0},
    };
    static const struct { int opt; unsigned bit; const char *name; } bits[] = {
        {'c', O_CPU, "--cpu"}, {'C', O_CPU_NODE, "--cpu-node"}, {'n', O_NODE, "--node"},
        {'s', O_SIZE, "--size"}, {'r', O_REPS, "--reps"}, {'H', O_HUGE, "--hugepages"},
        {'t', O_THREADS, "--threads"}, {'k', O_CHAINS, "--chains"}, {'T', O_TOPO, "--topology"},
        {'S', O_STEPS, "--steps"}, {'a', O_ACCESS, "--access"}, {'e', O_SEED, "--seed"},
    };
    int c;
    optind = 1;
    char **sub_argv = argv + 1;
    int sub_argc = argc - 1;
    while ((c = getopt_long(sub_argc, sub_argv, ":h", options, NULL)) != -1) {
        for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
            if (bits[i].opt == c && !(b->allowed & bits[i].bit))
                cli_usage_error(cmd, "%s does not apply to '%s'", bits[i].name, b->name);
        switch (c) {
        case 'c': b->cpu = (int)cli_parse_long(cmd, "--cpu", optarg, 0, 1 << 20); break;
        case 'C': b->cpu_node = (int)cli_parse_long(cmd, "--cpu-node", optarg, 0, 1 << 20); break;
        case 'n': b->mem_node = (int)cli_parse_long(cmd, "--node", optarg, 0, 1 << 20); break;
        case 's': {
            b->size = cli_parse_size(cmd, "--size", optarg);
            gcs_err err;
            if (gcs_chase_check_size(b->size, &err) < 0)
                cli_usage_error(cmd, "--size: %s", err.msg);
            break;
        }
        case 'r': b->reps = (int)cli_parse_long(cmd, "--reps", optarg, 1, 10000); break;
        case 'H':
            if (strcmp(optarg, "on") == 0) b->huge = GCS_HUGE_ON;
            else if (strcmp(optarg, "off") == 0) b->huge = GCS_HUGE_OFF;
            else if (strcmp(optarg, "default") == 0) b->huge = GCS_HUGE_DEFAULT;
            else if (strcmp(optarg, "both") == 0 && b->run == run_latency) b->huge = 3;
            else cli_usage_error(cmd, "--hugepages: expected on, off, default%s, not '%s'",
                                 b->run == run_latency ? " or both" : "", optarg);
            break;
        case 't': b->threads = (int)cli_parse_long(cmd, "--threads", optarg, 1, 1024); break;
        case 'k': b->chains = (int)cli_parse_long(cmd, "--chains", optarg, 1, GCS_OCC_MAX_CHAINS); break;
        case 'T': b->synthetic = optarg; break;
        case 'S': b->steps = (uint64_t)cli_parse_long(cmd, "--steps", optarg, 16, 1L << 40); break;
        case 'a':
            if (strcmp(optarg, "read") && strcmp(optarg, "rw") && strcmp(optarg, "both"))
                cli_usage_error(cmd, "--access: expected read, rw or both, not '%s'", optarg);
            b->access = optarg;
            break;
        case 'e': b->seed = (uint64_t)cli_parse_long(cmd, "--seed", optarg, 1, 1L << 62); break;
        case 'q': b->quiet = 1; break;
        case 'b': b->table = optarg; break;
        case 'j': cli_set_format(cmd, &b->fmt, GCS_FORMAT_JSON); break;
        case 'v': cli_set_format(cmd, &b->fmt, GCS_FORMAT_CSV); break;
        case 'h': print_bench_help(b, stdout); return 0;
        default: cli_bad_option(cmd, sub_argv);
        }
    }
    if (optind < sub_argc)
        cli_usage_error(cmd, "unexpected argument '%s'", sub_argv[optind]);
    if (b->cpu >= 0 && b->cpu_node >= 0)
        cli_usage_error(cmd, "give --cpu or --cpu-node, not both");

    gcs_err err = {{0}};
    b->t = gcs_topo_load(b->synthetic, &err);
    if (!b->t) {
        if (b->synthetic)
            cli_usage_error(cmd, "--topology: %s", err.msg);
        cli_fail(cmd, &err);
    }
    if (b->cpu >= 0 && gcs_topo_check_cpu(b->t, b->cpu, &err) < 0)
        cli_usage_error(cmd, "--cpu: %s", err.msg);
    if (b->cpu_node >= 0 && gcs_topo_check_node(b->t, b->cpu_node, &err) < 0)
        cli_usage_error(cmd, "--cpu-node: %s", err.msg);
    if (b->mem_node >= 0 && gcs_topo_check_node(b->t, b->mem_node, &err) < 0)
        cli_usage_error(cmd, "--node: %s", err.msg);
    if (b->cpu_node >= 0 && gcs_topo_node_at(b->t, b->cpu_node)->ncpus == 0)
        cli_usage_error(cmd, "--cpu-node: node %d has no CPUs", b->cpu_node);
    gcs_progress pr;
    b->pr = &pr;
    int rc = b->run(b);
    gcs_topo_free(b->t);
    cli_finish(cmd);
    return rc;
}
