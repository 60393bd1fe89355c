/* profile_print.c -- the machine profile as a person reads it: text, CSV or
 * JSON tables of the nodes, caches, latencies, occupancies, bandwidth, the
 * collector's costs and which constants are unreliable (gcscale machine show,
 * gcscale calibrate).  Separate from profile.c, which owns the document
 * itself, because printing only reads a loaded profile through its public
 * fields and accessors: nothing here can make a profile invalid. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/profile.h"
/* ---- printing ---------------------------------------------------------------------- */

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* "0-3,8": sorted, consecutive runs collapsed, as taskset and numactl print. */
static void format_cpu_list(const int *cpus, int n, char *buf, size_t size)
{
    buf[0] = '\0';
    if (n <= 0 || !cpus) {
        snprintf(buf, size, "-");
        return;
    }
    int *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        snprintf(buf, size, "?");
        return;
    }
    memcpy(sorted, cpus, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_int);
    size_t len = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && (long long)sorted[j + 1] - sorted[j] <= 1)
            j++;
        int w;
        const char *sep = len ? "," : "";
        if (sorted[j] == sorted[i])
            w = snprintf(buf + len, size - len, "%s%d", sep, sorted[i]);
        else
            w = snprintf(buf + len, size - len, "%s%d-%d", sep, sorted[i], sorted[j]);
        if (w < 0 || (size_t)w >= size - len) {
            /* Too long for the column: end with an ellipsis. */
            if (size >= 4)
                snprintf(buf + size - 4, 4, "...");
            break;
        }
        len += (size_t)w;
        i = j + 1;
    }
    free(sorted);
}

static void format_bytes(uint64_t bytes, char *buf, size_t size) { gcs_format_bytes(bytes, 0, buf, size); }

/* Prints one table and frees it.  CSV has no titles, so each CSV table is a
 * section introduced by a "# title" line; sections are separated by blank
 * lines in both formats. */
static void emit_table(gcs_table *t, const char *title, FILE *fp, gcs_format fmt)
{
    if (fmt == GCS_FORMAT_CSV)
        fprintf(fp, "# %s\n", title);
    gcs_table_print(t, fp, fmt);
    fputc('\n', fp);
    gcs_table_free(t);
}

static void print_nodes(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    const char *title = "nodes";
    const char *cols[] = {"node", "cpus", "ncpus", fmt == GCS_FORMAT_TEXT ? "memory" : "mem_bytes"};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 4, cols);
    for (int i = 0; i < p->nnodes; i++) {
        const gcs_profile_node *nd = &p->nodes[i];
        char cpus[256];
        format_cpu_list(nd->cpus, nd->ncpus, cpus, sizeof cpus);
        gcs_table_add_int(t, nd->id);
        gcs_table_add_str(t, cpus);
        gcs_table_add_int(t, nd->ncpus);
        if (fmt == GCS_FORMAT_TEXT) {
            char mem[32];
            if (nd->mem_bytes)
                format_bytes(nd->mem_bytes, mem, sizeof mem);
            else
                snprintf(mem, sizeof mem, "unknown");
            gcs_table_add_str(t, mem);
        } else {
            gcs_table_add_int(t, (long long)nd->mem_bytes);
        }
    }
    emit_table(t, title, fp, fmt);
}

static void print_caches(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    const char *title = "caches";
    if (p->ncaches == 0) {
        fprintf(fp, fmt == GCS_FORMAT_CSV ? "# %s: none recorded\n\n" : "%s: none recorded\n\n",
                title);
        return;
    }
    const char *cols[] = {"level", "type", fmt == GCS_FORMAT_TEXT ? "size" : "size_bytes",
                          "line_bytes", "ways", "cpus"};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 6, cols);
    for (int i = 0; i < p->ncaches; i++) {
        const gcs_profile_cache *c = &p->caches[i];
        char cpus[256];
        format_cpu_list(c->cpus, c->ncpus, cpus, sizeof cpus);
        gcs_table_add_int(t, c->level);
        gcs_table_add_str(t, c->type);
        if (fmt == GCS_FORMAT_TEXT) {
            char size[32];
            format_bytes(c->size_bytes, size, sizeof size);
            gcs_table_add_str(t, size);
        } else {
            gcs_table_add_int(t, (long long)c->size_bytes);
        }
        gcs_table_add_int(t, c->line_bytes);
        gcs_table_add_int(t, c->ways);
        gcs_table_add_str(t, cpus);
    }
    emit_table(t, title, fp, fmt);
    /* Say where the model departs from hwloc's list, once per level. */
    int said_level = 0;
    for (int i = 0; i < p->ncaches && fmt == GCS_FORMAT_TEXT; i++) {
        uint64_t model_bytes = gcs_profile_cache_bytes(p, i);
        if (model_bytes == p->caches[i].size_bytes || p->caches[i].level == said_level)
            continue;
        char nominal[32], taken[32];
        format_bytes(p->caches[i].size_bytes, nominal, sizeof nominal);
        format_bytes(model_bytes, taken, sizeof taken);
        fprintf(fp,
                "level %d: the model takes each %s instance at %s, the effective LLC the latency sweep "
                "measured (a level listed per CPU that the sweep does not show; docs/model.md, \"A last "
                "level listed per CPU\")\n\n",
                p->caches[i].level, nominal, taken);
        said_level = p->caches[i].level;
    }
}

/* One table even for many nodes: rows are CPU nodes, columns memory nodes,
 * both labelled by node id. */
static void print_latency(const gcs_profile *p, gcs_access a, FILE *fp, gcs_format fmt)
{
    char title[128];
    snprintf(title, sizeof title, "%s latency M1 (ns): rows = CPU node, columns = memory node",
             a == GCS_ACCESS_READ ? "read" : "RW");
    int n = p->nnodes;
    char **names = calloc((size_t)n + 1, sizeof *names);
    if (!names)
        return;
    names[0] = strdup("cpu_node");
    for (int j = 0; j < n; j++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", p->nodes[j].id);
        names[j + 1] = strdup(buf);
    }
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, n + 1,
                                 (const char *const *)names);
    for (int i = 0; i < n; i++) {
        gcs_table_add_int(t, p->nodes[i].id);
        for (int j = 0; j < n; j++)
            gcs_table_add_num(t, gcs_profile_latency(p, a, i, j), 1);
    }
    emit_table(t, title, fp, fmt);
    for (int j = 0; j <= n; j++)
        free(names[j]);
    free(names);
}

/* One row per (CPU node, memory node) pair: M1 beside the full-random
 * latencies and the page walks; a page size that was not measured prints
 * "-" (text) or an empty field (CSV) and its reason under the table. */
static void print_page_walks(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    if (!p->full_random_ns[GCS_PAGES_4K] && !p->full_random_ns[GCS_PAGES_HUGE])
        return;
    const char *title = "read latency with page walks (ns): TLB-local M1, full random permutation, "
                        "page walk = full random - M1";
    const char *cols[] = {"cpu_node", "mem_node", "m1_ns", "full_random_4k_ns", "page_walk_4k_ns",
                          "full_random_huge_ns", "page_walk_huge_ns"};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 7, cols);
    for (int i = 0; i < p->nnodes; i++)
        for (int j = 0; j < p->nnodes; j++) {
            gcs_table_add_int(t, p->nodes[i].id);
            gcs_table_add_int(t, p->nodes[j].id);
            gcs_table_add_num(t, gcs_profile_latency(p, GCS_ACCESS_READ, i, j), 1);
            for (int k = 0; k < GCS_PAGES_COUNT; k++) {
                gcs_table_add_num(t, gcs_profile_full_random_latency(p, (gcs_pages)k, i, j), 1);
                gcs_table_add_num(t, gcs_profile_page_walk(p, (gcs_pages)k, i, j), 1);
            }
        }
    emit_table(t, title, fp, fmt);
    for (int k = 0; k < GCS_PAGES_COUNT; k++)
        if (!p->full_random_ns[k])
            fprintf(fp, fmt == GCS_FORMAT_CSV ? "# %s pages: %s\n\n" : "%s pages: %s\n\n",
                    k == GCS_PAGES_HUGE ? "huge" : "4 KiB",
                    p->full_random_note[k][0] ? p->full_random_note[k] : "not measured");
}

/* A curve of the profile, one row per point (x with dx decimals, y with
 * dy); nothing when it has no points. */
static void print_curve(FILE *fp, gcs_format fmt, const char *title, const char *xcol, const char *ycol,
                        const double *x, const double *y, int n, int dx, int dy)
{
    if (n == 0)
        return;
    const char *cols[] = {xcol, ycol};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 2, cols);
    for (int i = 0; i < n; i++) {
        gcs_table_add_num(t, x[i], dx);
        gcs_table_add_num(t, y[i], dy);
    }
    emit_table(t, title, fp, fmt);
}

/* The dependent-load curve (calibrate/dependent.c), one row per working set. */
static void print_dependent_load(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    print_curve(fp, fmt, "dependent load on 4 KiB pages (ns): a random chase by working set, page walks included",
                "size_bytes", "ns", p->dependent_load_bytes, p->dependent_load_ns, p->ndependent_load, 0, 1);
}

/* The residency curve (calibrate/residency.c), one row per point. */
static void print_residency(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    print_curve(fp, fmt, "residency: the share of a heap's lines in the LLC when a mark starts, by footprint",
                "footprint_llc", "resident", p->residency_footprint, p->residency_resident, p->nresidency, 2, 3);
}

static void print_per_node(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    const char *title = "per memory node: occupancy S_O (ns) and bandwidth (GB/s)";
    const char *cols[] = {"node", "read_s_o_ns", "rw_s_o_ns", "bandwidth_gbs"};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 4, cols);
    for (int j = 0; j < p->nnodes; j++) {
        gcs_table_add_int(t, p->nodes[j].id);
        gcs_table_add_num(t, p->occupancy_ns[GCS_ACCESS_READ][j], 1);
        gcs_table_add_num(t, p->occupancy_ns[GCS_ACCESS_RW][j], 1);
        /* NaN prints as "-" (text) or an empty field (CSV): not measured. */
        gcs_table_add_num(t, p->bandwidth_gbs ? p->bandwidth_gbs[j] : NAN, 2);
    }
    emit_table(t, title, fp, fmt);
}

static void print_gc_cost(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    const char *title = "gc costs (ns)";
    if (!p->has_gc_cost) {
        fprintf(fp, fmt == GCS_FORMAT_CSV ? "# %s: %s\n\n" : "%s: %s\n\n", title,
                "not calibrated (a hand-written profile?): run gcscale calibrate on the machine");
        return;
    }
    const char *cols[] = {"object_ns", "pointer_ns", "steal_ns", "worker_ns"};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 4, cols);
    gcs_table_add_num(t, p->gc_cost_object_ns, 2);
    gcs_table_add_num(t, p->gc_cost_pointer_ns, 2);
    gcs_table_add_num(t, p->gc_cost_steal_ns, 2);
    gcs_table_add_num(t, p->has_gc_cost_worker ? p->gc_cost_worker_ns : NAN, 2); /* NaN: not in the profile */
    emit_table(t, title, fp, fmt);
    if (p->has_gc_steals)
        fprintf(fp, fmt == GCS_FORMAT_CSV ? "# steals = (P - 1) * (%.4g * ln(T1 ns) + %.4g)\n\n"
                                          : "fitted steals: (P - 1) * (%.4g * ln(T1 ns) + %.4g)\n\n",
                p->gc_steal_a, p->gc_steal_b);
    if (p->has_gc_overlap)
        fprintf(fp, fmt == GCS_FORMAT_CSV ? "# miss overlap %.3g\n\n"
                                          : "fitted miss overlap: %.3g misses in flight per worker "
                                            "(predict --overlap fitted)\n\n",
                p->gc_miss_overlap);
    if (p->has_gc_coord) {
        const gcs_profile_coord *c = &p->coord;
        /* a law's slope may be negative; its value is clamped at 0 (model/coord.c) */
        fprintf(fp, "%scoordination per worker (ns, a law at least 0): wake %.3g %c %.3g (P-1), tail %.3g %c %.3g "
                    "log2 P, idle %.3g %c %.3g log2 P, spread round %.3g, steal attempt %.3g; measured to P = %d\n\n",
                fmt == GCS_FORMAT_CSV ? "# " : "", c->wake_a, c->wake_b < 0 ? '-' : '+', fabs(c->wake_b), c->tail_a,
                c->tail_b < 0 ? '-' : '+', fabs(c->tail_b), c->idle_a, c->idle_b < 0 ? '-' : '+', fabs(c->idle_b),
                c->spread_ns, c->attempt_ns, c->max_threads);
        if (c->attempts_per_search > 0)
            fprintf(fp, "%ssteal attempts per search that found work: %.3g (a search costs %.3g ns)\n\n",
                    fmt == GCS_FORMAT_CSV ? "# " : "", c->attempts_per_search, c->attempt_ns * c->attempts_per_search);
    }
    if (p->has_gc_mark_transfer)
        fprintf(fp, "%sa mark-table line passing between workers: %.3g ns of busy time (gc_mark_transfer_ns)\n\n",
                fmt == GCS_FORMAT_CSV ? "# " : "", p->gc_mark_transfer_ns);
    if (p->has_gc_mark_transfer_cached)
        fprintf(fp, "%s... where the whole heap fits the private caches: %.3g ns (gc_mark_transfer_cached_ns)\n\n",
                fmt == GCS_FORMAT_CSV ? "# " : "", p->gc_mark_transfer_cached_ns);
}

static void print_counters(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    const char *title = "hardware counters";
    const char *cols[] = {"source", "reason"};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 2, cols);
    gcs_table_add_str(t, p->counters_source[0] ? p->counters_source : "none");
    gcs_table_add_str(t, p->counters_reason[0] ? p->counters_reason : "-");
    emit_table(t, title, fp, fmt);
}

/* Only when some constant is marked: a reliable profile prints as before. */
static void print_unreliable(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    json_t *bad = p->extra ? json_object_get(p->extra, "unreliable") : NULL;
    if (json_object_size(bad) == 0)
        return;
    const char *title = "unreliable constants (the model uses their stand-ins; recalibrate)";
    const char *cols[] = {"constant", "reason"};
    gcs_table *t = gcs_table_new(fmt == GCS_FORMAT_TEXT ? title : NULL, 2, cols);
    const char *name;
    json_t *v;
    json_object_foreach(bad, name, v) {
        gcs_table_add_str(t, name);
        gcs_table_add_str(t, json_string_value(v));
    }
    emit_table(t, title, fp, fmt);
}

void gcs_profile_print(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    if (fmt == GCS_FORMAT_JSON) {
        json_t *doc = gcs_profile_to_json(p);
        gcs_json_print(doc, fp);
        json_decref(doc);
        return;
    }
    int ncpus = gcs_profile_cpus(p);
    const char *prefix = fmt == GCS_FORMAT_CSV ? "# " : "";
    fprintf(fp, "%smachine profile: %d node%s, %d CPUs\n", prefix, p->nnodes,
            p->nnodes == 1 ? "" : "s", ncpus);
    if (p->host[0])
        fprintf(fp, "%shost: %s\n", prefix, p->host);
    if (p->created[0])
        fprintf(fp, "%screated: %s\n", prefix, p->created);
    if (p->tool_version[0])
        fprintf(fp, "%stool version: %s\n", prefix, p->tool_version);
    if (p->extra && json_object_size(p->extra) > 0) {
        const char *key;
        json_t *value;
        const char *sep = "";
        fprintf(fp, "%sother keys kept: ", prefix);
        json_object_foreach(p->extra, key, value) {
            fprintf(fp, "%s%s", sep, key);
            sep = ", ";
        }
        fputc('\n', fp);
    }
    fputc('\n', fp);
    print_nodes(p, fp, fmt);
    print_caches(p, fp, fmt);
    print_latency(p, GCS_ACCESS_READ, fp, fmt);
    print_latency(p, GCS_ACCESS_RW, fp, fmt);
    print_page_walks(p, fp, fmt);
    print_dependent_load(p, fp, fmt);
    print_residency(p, fp, fmt);
    print_per_node(p, fp, fmt);
    print_gc_cost(p, fp, fmt);
    print_counters(p, fp, fmt);
    print_unreliable(p, fp, fmt);
}

/* The profile's tables by name, in the order gcs_profile_print prints them. */
static void print_latency_read(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    print_latency(p, GCS_ACCESS_READ, fp, fmt);
}

static void print_latency_rw(const gcs_profile *p, FILE *fp, gcs_format fmt)
{
    print_latency(p, GCS_ACCESS_RW, fp, fmt);
}

static const struct {
    const char *name;
    void (*print)(const gcs_profile *, FILE *, gcs_format);
} tables[] = {
    {"nodes", print_nodes},           {"caches", print_caches},     {"latency_read", print_latency_read},
    {"latency_rw", print_latency_rw}, {"page_walks", print_page_walks}, {"dependent_load", print_dependent_load},
    {"residency", print_residency},
    {"per_node", print_per_node},
    {"gc_costs", print_gc_cost},      {"counters", print_counters}, {"unreliable", print_unreliable},
};

const char *gcs_profile_table_name(int i)
{
    return i >= 0 && (size_t)i < sizeof tables / sizeof tables[0] ? tables[i].name : NULL;
}

int gcs_profile_print_csv_table(const gcs_profile *p, FILE *fp, const char *name, gcs_err *err)
{
    size_t k = 0;
    while (k < sizeof tables / sizeof tables[0] && strcmp(tables[k].name, name) != 0)
        k++;
    if (k == sizeof tables / sizeof tables[0]) {
        gcs_err_set(err, "no profile table '%s'", name);
        return -1;
    }
    /* The table as gcs_profile_print's CSV section, less its "# " lines
     * (title and notes) and blank lines: plain CSV. */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        gcs_err_set(err, "out of memory");
        return -1;
    }
    tables[k].print(p, mem, GCS_FORMAT_CSV);
    fclose(mem);
    size_t written = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        fprintf(fp, "%s\n", line);
        written++;
    }
    free(buf);
    if (written == 0) {
        gcs_err_set(err, "this profile has no %s table (not recorded)", name);
        return -1;
    }
    return 0;
}
