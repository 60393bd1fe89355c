/* cmd_snapshot.c -- gcscale snapshot: inspect heap snapshots.
 *
 *   gcscale snapshot info FILE [--json | --csv] [--types N]
 *   gcscale snapshot import DUMP -o OUT.snap [--format hprof|v8]
 *
 * Reading is the validation: a file that "info" prints is one the predictor
 * accepts.  Format: docs/snapshot-format.md. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "gcscale/heapdump.h"
#include "gcscale/synth.h"

static const char *const cmd = "snapshot";

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale snapshot info FILE [--json | --csv] [--types N]\n"
            "       gcscale snapshot import DUMP -o OUT.snap [--format hprof|v8]\n"
            "       gcscale snapshot synth bh|cube -o FILE [--size N] [--nodes N]\n"
            "                              [--placement one|spread] [--seed S]\n"
            "       gcscale snapshot reorder FILE|DUMP -o OUT.snap --order ORDER [--seed S]\n"
            "\n"
            "Reads a heap snapshot (the live object graph at the start of a collection,\n"
            "written by the collector when GCSCALE_GC_SNAPSHOT=PATH is set), checks every\n"
            "checksum and every object, pointer, root and node id, and prints: objects,\n"
            "pointer fields and edges, payload bytes, graph depth (BFS levels from the\n"
            "roots), roots, the collector's parameters and the bytes on each memory node.\n"
            "A file that fails a check is reported in one line, with exit status 2.\n"
            "FILE may also be a Java heap dump (HPROF) or a V8 heap snapshot\n"
            "(.heapsnapshot), plain or gzip: it is imported.\n"
            "Snapshots with types (imported dumps) list the N types holding the most\n"
            "bytes (--types N, default 20; 0: none).\n"
            "\n"
            "import converts a heap dump into a snapshot file (docs/heap-dumps.md):\n"
            "HPROF 1.0.1-1.0.3 as jcmd GC.heap_dump (also -gz) and jmap -dump write it,\n"
            "and V8 .heapsnapshot files as node (v8.writeHeapSnapshot, --heapsnapshot-signal)\n"
            "and Chrome DevTools write them, recognised by their content (--format to\n"
            "insist); prints what it found.\n"
            "\n"
            "reorder writes the same graph in another layout: the objects renumbered and\n"
            "packed one after the other in ORDER, sizes, fields, roots and types kept, so\n"
            "that predict and gc-bench --snapshot can compare layouts of one heap:\n"
            "  depth-first    the order a depth-first traversal from the roots first\n"
            "                 reaches them, fields in order (a depth-first copy's layout)\n"
            "  breadth-first  the same, breadth first (Cheney's copying collector)\n"
            "  shuffle        every object at a random place (--seed S, default 1)\n"
            "Objects no root reaches follow the reachable ones in their old order.\n"
            "A heap dump is imported first.\n"
            "\n"
            "synth writes a synthetic snapshot shaped like the paper's workloads, for\n"
            "predicting on machines gcscale cannot run on (data/machines/o2k.json):\n"
            "  bh    an irregular octree of cells over N bodies plus the body array;\n"
            "        default --placement one (one thread builds it: all on node 0)\n"
            "  cube  a breadth-first search tree of N state records with move records\n"
            "        and a frontier array; default --placement spread (pages round robin)\n"
            "  --size N (default 1000000), --nodes N (memory nodes, default 1), --seed S\n"
            "\n"
            "options:\n"
            "  -o FILE     synth, import, reorder: where to write (crash-safe)\n"
            "  --order O   reorder: depth-first, breadth-first or shuffle\n"
            "  --format F  import: hprof or v8\n"
            "  --types N   info: the N largest types (default 20)\n"
            "  --table graph|parameters|nodes|types  info --csv: the one table to print\n"
            "              (default graph; CSV is one table per output)\n"
            "  --json      one JSON document\n"
            "  --csv       the tables as CSV, each after a '# title' line\n"
            "  -h, --help  this text\n"
            "\n"
            "The format is described in docs/snapshot-format.md.\n");
}

static void iso_time(uint64_t ns, char *buf, size_t n)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (ns == 0 || !gmtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, n, "-");
}

/* Text: each table as it comes.  CSV: kept (with its name) for
 * print_csv, which prints one of them. */
static gcs_table *csv_tables[4];
static const char *csv_names[4];
static int ncsv;

static void emit(gcs_table *t, const char *name, gcs_format fmt)
{
    if (fmt == GCS_FORMAT_CSV && ncsv < 4) {
        csv_tables[ncsv] = t;
        csv_names[ncsv++] = name;
        return;
    }
    gcs_table_print(t, stdout, fmt);
    fputc('\n', stdout);
    gcs_table_free(t);
}

static void print_csv(const char *table)
{
    cli_print_tables(cmd, "gcscale-snapshot-info", csv_tables, csv_names, ncsv, GCS_FORMAT_CSV, table);
    for (int i = 0; i < ncsv; i++)
        gcs_table_free(csv_tables[i]);
    ncsv = 0;
}

static int text_mode; /* key/value tables read better with every value left-aligned */

static void kv_int(gcs_table *t, const char *k, long long v)
{
    gcs_table_add_str(t, k);
    if (text_mode) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", v);
        gcs_table_add_str(t, buf);
    } else {
        gcs_table_add_int(t, v);
    }
}

static void kv_str(gcs_table *t, const char *k, const char *v)
{
    gcs_table_add_str(t, k);
    gcs_table_add_str(t, v);
}

static gcs_table *node_table(const gcs_snapshot_stats *st, const char *title)
{
    static const char *const cols[] = {"node", "objects", "bytes", "share_pct"};
    gcs_table *t = gcs_table_new(title, 4, cols);
    for (uint32_t j = 0; j <= st->node_count; j++) {
        if (j == st->node_count && st->node_objects[j] == 0)
            break; /* no object on an unknown node */
        if (j == st->node_count)
            gcs_table_add_str(t, "unknown");
        else
            gcs_table_add_int(t, j);
        gcs_table_add_int(t, (long long)st->node_objects[j]);
        gcs_table_add_int(t, (long long)st->node_bytes[j]);
        gcs_table_add_num(t, st->bytes ? 100.0 * (double)st->node_bytes[j] / (double)st->bytes : 0.0, 1);
    }
    return t;
}

static json_t *json_doc(const char *path, const gcs_snapshot *g, const gcs_snapshot_stats *st)
{
    const gcs_snapshot_params *p = &g->params;
    char when[64];
    iso_time(p->timestamp_ns, when, sizeof when);
    json_t *d = json_object();
#define I(o, k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))
    json_object_set_new(d, "file", json_string(path));
    /* the file's own version; null for a heap dump imported on the way */
    json_object_set_new(d, "format_version", g->file_version ? json_integer(g->file_version) : json_null());
    I(d, "objects", st->objects);
    I(d, "pointer_fields", st->fields);
    I(d, "edges", st->edges);
    I(d, "null_fields", st->fields - st->edges);
    I(d, "self_edges", st->self_edges);
    I(d, "bytes", st->bytes);
    I(d, "header_bytes", st->header_bytes);
    I(d, "max_object_bytes", st->max_bytes);
    I(d, "max_pointer_fields", st->max_nptrs);
    I(d, "address_span_bytes", st->span_bytes);
    I(d, "roots", st->roots);
    I(d, "distinct_roots", st->distinct_roots);
    I(d, "reachable", st->reachable);
    I(d, "depth", st->depth);
    json_t *pj = json_object();
    I(pj, "gc_threads", p->gc_threads);
    json_object_set_new(pj, "mark_mode", json_string(gcs_snapshot_mark_mode_name(p->mark_mode)));
    I(pj, "heap_limit", p->heap_limit);
    I(pj, "page_bytes", p->page_bytes);
    json_object_set_new(pj, "numa_policy", json_string(gcs_snapshot_numa_policy_name(p->numa_policy)));
    json_object_set_new(pj, "numa_node", p->numa_node < 0 ? json_null() : json_integer(p->numa_node));
    I(pj, "node_count", p->node_count);
    I(pj, "collection", p->collection);
    I(pj, "timestamp_ns", p->timestamp_ns);
    json_object_set_new(pj, "time", json_string(when));
    I(pj, "heap_base", p->heap_base);
    I(pj, "header_bytes", p->header_bytes);
    I(pj, "granule_bytes", p->granule_bytes);
    json_object_set_new(d, "params", pj);
    json_t *nodes = json_array();
    for (uint32_t j = 0; j <= st->node_count; j++) {
        if (j == st->node_count && st->node_objects[j] == 0)
            break;
        json_t *o = json_object();
        json_object_set_new(o, "node", j == st->node_count ? json_null() : json_integer(j));
        I(o, "objects", st->node_objects[j]);
        I(o, "bytes", st->node_bytes[j]);
        json_array_append_new(nodes, o);
    }
    json_object_set_new(d, "nodes", nodes);
#undef I
    return d;
}

static gcs_table *type_table(const gcs_snapshot_type_row *rows, uint32_t nrows, long top, uint64_t total,
                             const char *title)
{
    static const char *const cols[] = {"type", "objects", "bytes", "share_pct", "edges"};
    gcs_table *t = gcs_table_new(title, 5, cols);
    for (uint32_t k = 0; k < nrows && k < (uint64_t)top; k++) {
        gcs_table_add_str(t, rows[k].name);
        gcs_table_add_int(t, (long long)rows[k].objects);
        gcs_table_add_int(t, (long long)rows[k].bytes);
        gcs_table_add_num(t, total ? 100.0 * (double)rows[k].bytes / (double)total : 0.0, 1);
        gcs_table_add_int(t, (long long)rows[k].edges);
    }
    return t;
}

static int info(const char *path, gcs_format fmt, long top, const char *table)
{
    gcs_err err = {{0}};
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    if (!g)
        cli_fail(cmd, &err); /* the message starts with the file name */
    gcs_snapshot_stats st;
    if (gcs_snapshot_stats_compute(g, &st, &err) < 0)
        cli_fail(cmd, &err);
    gcs_snapshot_type_row *rows = NULL;
    uint32_t nrows = 0;
    if (g->ntypes && gcs_snapshot_type_summary(g, &rows, &nrows, &err) < 0)
        cli_fail(cmd, &err);
    uint64_t total = st.bytes + st.header_bytes;
    const gcs_snapshot_params *p = &g->params;
    if (fmt == GCS_FORMAT_JSON) {
        json_t *d = json_doc(path, g, &st);
        json_object_set_new(d, "source", json_string(gcs_snapshot_source_name(p->source)));
        json_object_set_new(d, "layout", json_string(gcs_snapshot_layout_name(p->layout)));
        json_object_set_new(d, "type_count", json_integer(g->ntypes));
        json_t *ty = json_array();
        for (uint32_t k = 0; k < nrows && k < (uint64_t)top; k++)
            json_array_append_new(ty, json_pack("{s:s, s:I, s:I, s:I}", "type", rows[k].name, "objects",
                                                (json_int_t)rows[k].objects, "bytes", (json_int_t)rows[k].bytes,
                                                "edges", (json_int_t)rows[k].edges));
        json_object_set_new(d, "types", ty);
        cli_print_doc("gcscale-snapshot-info", d);
    } else {
        int text = fmt == GCS_FORMAT_TEXT;
        text_mode = text;
        static const char *const kv[] = {"key", "value"};
        gcs_table *t = gcs_table_new(text ? "graph" : NULL, 2, kv);
        kv_int(t, "objects", (long long)st.objects);
        kv_int(t, "pointer_fields", (long long)st.fields);
        kv_int(t, "edges", (long long)st.edges);
        kv_int(t, "null_fields", (long long)(st.fields - st.edges));
        kv_int(t, "self_edges", (long long)st.self_edges);
        kv_int(t, "bytes", (long long)st.bytes);
        kv_int(t, "header_bytes", (long long)st.header_bytes);
        kv_int(t, "max_object_bytes", (long long)st.max_bytes);
        kv_int(t, "max_pointer_fields", (long long)st.max_nptrs);
        kv_int(t, "address_span_bytes", (long long)st.span_bytes);
        kv_int(t, "roots", (long long)st.roots);
        kv_int(t, "distinct_roots", (long long)st.distinct_roots);
        kv_int(t, "reachable", (long long)st.reachable);
        kv_int(t, "depth", (long long)st.depth);
        if (text && g->file_version)
            printf("heap snapshot %s (format version %u)\n\n", path, g->file_version);
        else if (text)
            printf("heap snapshot imported from the heap dump %s\n\n", path);
        emit(t, "graph", fmt);

        char when[64], buf[32];
        iso_time(p->timestamp_ns, when, sizeof when);
        t = gcs_table_new(text ? "collector parameters" : NULL, 2, kv);
        kv_int(t, "gc_threads", p->gc_threads);
        kv_str(t, "mark_mode", gcs_snapshot_mark_mode_name(p->mark_mode));
        kv_int(t, "heap_limit", (long long)p->heap_limit);
        kv_int(t, "page_bytes", p->page_bytes);
        kv_str(t, "numa_policy", gcs_snapshot_numa_policy_name(p->numa_policy));
        snprintf(buf, sizeof buf, "%d", p->numa_node);
        kv_str(t, "numa_node", p->numa_node < 0 ? "-" : buf);
        kv_int(t, "node_count", p->node_count);
        kv_int(t, "collection", (long long)p->collection);
        kv_str(t, "time", when);
        snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)p->heap_base);
        kv_str(t, "heap_base", buf);
        kv_int(t, "header_bytes", p->header_bytes);
        kv_int(t, "granule_bytes", p->granule_bytes);
        kv_str(t, "source", gcs_snapshot_source_name(p->source));
        kv_str(t, "layout", gcs_snapshot_layout_name(p->layout));
        emit(t, "parameters", fmt);
        emit(node_table(&st, text ? "memory nodes" : NULL), "nodes", fmt);
        if (nrows && top > 0)
            emit(type_table(rows, nrows, top, total, text ? "types by bytes (payload + header)" : NULL), "types",
                 fmt);
        if (fmt == GCS_FORMAT_CSV)
            print_csv(table);
    }
    free(rows);
    gcs_snapshot_stats_free(&st);
    gcs_snapshot_free(g);
    return cli_finish(cmd);
}

static int import(const char *path, const char *out, const char *format)
{
    int f = GCS_HEAPDUMP_UNKNOWN;
    if (!out)
        cli_usage_error(cmd, "import: -o OUT.snap is required");
    if (format && strcmp(format, "hprof") == 0)
        f = GCS_HEAPDUMP_HPROF;
    else if (format && strcmp(format, "v8") == 0)
        f = GCS_HEAPDUMP_V8;
    else if (format)
        cli_usage_error(cmd, "--format: '%s' is neither hprof nor v8", format);
    cli_check_output(cmd, "-o", out);
    gcs_err err = {{0}};
    gcs_heapdump_report rep;
    gcs_snapshot *g = gcs_heapdump_import(path, f, &rep, &err);
    if (!g || gcs_snapshot_write(g, out, &err) < 0)
        cli_fail(cmd, &err);
    if (rep.format == GCS_HEAPDUMP_V8)
        fprintf(stderr,
                "imported %s (V8 heap snapshot%s, %llu bytes): %llu nodes, %llu edges; dropped %llu weak "
                "and %llu shortcut edges, %llu element edges that backing stores repeat, and %llu nodes not "
                "strongly reachable from the root; %llu strong edges; %llu self bytes, %llu nodes widened "
                "to their edges\n",
                path, rep.compressed ? ", gzip" : "", (unsigned long long)rep.dump_bytes,
                (unsigned long long)rep.nodes, (unsigned long long)rep.edges_total,
                (unsigned long long)rep.weak_edges, (unsigned long long)rep.shortcut_edges,
                (unsigned long long)rep.element_copies,
                (unsigned long long)rep.unreachable_nodes, (unsigned long long)rep.references,
                (unsigned long long)rep.jvm_bytes, (unsigned long long)rep.moved_objects);
    else {
        char gz[96] = "";
        if (rep.gzip_members) /* HotSpot's -gz members, inflated whole (libdeflate) */
            snprintf(gz, sizeof gz, ", gzip: %llu members of <= %u bytes", (unsigned long long)rep.gzip_members,
                     rep.gzip_block_bytes);
        else if (rep.compressed)
            snprintf(gz, sizeof gz, ", gzip");
        fprintf(stderr,
                "imported %s (HPROF %s, %u-byte ids%s, %llu bytes): %llu instances, %llu object arrays, "
                "%llu primitive arrays, %llu classes; %llu references, %llu to objects not in the dump; "
                "%llu root records (%llu missing) + %llu classes as roots; %llu unknown records skipped; "
                "layout: %u-byte references, %u-byte headers, %llu JVM bytes, %llu objects moved up\n",
                path, rep.version, rep.id_bytes, gz, (unsigned long long)rep.dump_bytes,
                (unsigned long long)rep.instances, (unsigned long long)rep.object_arrays,
                (unsigned long long)rep.primitive_arrays, (unsigned long long)rep.classes,
                (unsigned long long)rep.references, (unsigned long long)rep.missing_refs,
                (unsigned long long)rep.root_records, (unsigned long long)rep.missing_roots,
                (unsigned long long)rep.classes, (unsigned long long)rep.skipped_records, rep.ref_bytes,
                rep.object_header_bytes, (unsigned long long)rep.jvm_bytes, (unsigned long long)rep.moved_objects);
    }
    fprintf(stderr, "wrote %s: %llu objects, %llu pointer fields, %llu roots\n", out,
            (unsigned long long)g->nobjects, (unsigned long long)g->nfields, (unsigned long long)g->nroots);
    gcs_snapshot_free(g);
    return cli_finish(cmd);
}

static int reorder(const char *path, const char *out, const char *order_name, uint64_t seed)
{
    gcs_snapshot_order how;
    if (!out)
        cli_usage_error(cmd, "reorder: -o OUT.snap is required");
    if (!order_name)
        cli_usage_error(cmd, "reorder: --order is required (depth-first, breadth-first or shuffle)");
    if (gcs_snapshot_order_parse(order_name, &how) < 0)
        cli_usage_error(cmd, "--order: '%s' is not depth-first, breadth-first or shuffle", order_name);
    cli_check_output(cmd, "-o", out);
    gcs_err err = {{0}};
    uint64_t reached = 0;
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    if (!g)
        cli_fail(cmd, &err);
    gcs_snapshot *h = gcs_snapshot_reorder(g, how, seed, &reached, &err);
    gcs_snapshot_free(g);
    if (!h || gcs_snapshot_write(h, out, &err) < 0)
        cli_fail(cmd, &err);
    if (how == GCS_SNAPSHOT_ORDER_SHUFFLE)
        fprintf(stderr, "wrote %s: %llu objects shuffled (seed %llu)\n", out, (unsigned long long)h->nobjects,
                (unsigned long long)seed);
    else
        fprintf(stderr, "wrote %s: %llu objects %s from the roots, then %llu that no root reaches\n", out,
                (unsigned long long)reached, gcs_snapshot_order_name(how),
                (unsigned long long)(h->nobjects - reached));
    gcs_snapshot_free(h);
    return cli_finish(cmd);
}

static int synth(const char *kind_name, const char *out, uint64_t size, long nodes,
                 const char *placement, uint64_t seed)
{
    gcs_synth_opts o = {.size = size, .nnodes = (uint32_t)nodes, .seed = seed};
    if (gcs_synth_parse_kind(kind_name, &o.kind) < 0)
        cli_usage_error(cmd, "synth: unknown shape '%s' (bh or cube)", kind_name);
    if (!out)
        cli_usage_error(cmd, "synth: -o FILE is required");
    if (!placement)
        o.placement = o.kind == GCS_SYNTH_BH ? GCS_SYNTH_ONE_NODE : GCS_SYNTH_SPREAD;
    else if (strcmp(placement, "one") == 0)
        o.placement = GCS_SYNTH_ONE_NODE;
    else if (strcmp(placement, "spread") == 0)
        o.placement = GCS_SYNTH_SPREAD;
    else
        cli_usage_error(cmd, "--placement: '%s' is neither one nor spread", placement);
    gcs_err err = {{0}};
    gcs_snapshot *g = gcs_synth_build(&o, &err);
    if (!g || gcs_snapshot_write(g, out, &err) < 0)
        cli_fail(cmd, &err);
    fprintf(stderr, "wrote %s: %s, %llu objects on %ld node%s (%s)\n", out, kind_name,
            (unsigned long long)g->nobjects, nodes, nodes > 1 ? "s" : "",
            o.placement == GCS_SYNTH_SPREAD ? "spread" : "all on node 0");
    gcs_snapshot_free(g);
    return 0;
}

int cmd_snapshot(int argc, char **argv)
{
    enum { O_SIZE = 256, O_NODES, O_PLACEMENT, O_SEED, O_FORMAT, O_TYPES, O_TABLE, O_ORDER };
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"size", required_argument, NULL, O_SIZE},
        {"nodes", required_argument, NULL, O_NODES},
        {"placement", required_argument, NULL, O_PLACEMENT},
        {"seed", required_argument, NULL, O_SEED},
        {"format", required_argument, NULL, O_FORMAT},
        {"types", required_argument, NULL, O_TYPES},
        {"table", required_argument, NULL, O_TABLE},
        {"order", required_argument, NULL, O_ORDER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *optstring = ":ho:";
    const char *out = NULL, *placement = NULL, *format = NULL, *order = NULL;
    long top = 20;
    const char *table = NULL;
    uint64_t size = 1000000, seed = 1;
    long nodes = 1;
    int c;
    gcs_format fmt = GCS_FORMAT_TEXT;
    while ((c = getopt_long(argc, argv, optstring, options, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case O_SIZE: size = (uint64_t)cli_parse_long(cmd, "--size", optarg, 2, 100000000); break;
        case O_NODES: nodes = cli_parse_long(cmd, "--nodes", optarg, 1, GCS_SNAPSHOT_MAX_NODES); break;
        case O_PLACEMENT: placement = optarg; break;
        case O_FORMAT: format = optarg; break;
        case O_TYPES: top = cli_parse_long(cmd, "--types", optarg, 0, 1000000); break;
        case O_TABLE: table = optarg; break;
        case O_ORDER: order = optarg; break;
        case O_SEED: seed = (uint64_t)cli_parse_long(cmd, "--seed", optarg, 0, 0x7fffffffffffffffL); break;
        default:
            cli_common_option(cmd, c, argv, &fmt, print_help);
        }
    }
    int nargs = argc - optind;
    if (nargs < 1)
        cli_usage_error(cmd, "missing action (info FILE, import DUMP, reorder FILE, or synth bh|cube -o FILE)");
    const char *action = argv[optind];
    if (strcmp(action, "synth") == 0) {
        if (nargs != 2)
            cli_usage_error(cmd, "synth: expected one shape, bh or cube");
        return synth(argv[optind + 1], out, size, nodes, placement, seed);
    }
    if (strcmp(action, "import") == 0) {
        if (nargs != 2)
            cli_usage_error(cmd, "import: expected one DUMP");
        return import(argv[optind + 1], out, format);
    }
    if (strcmp(action, "reorder") == 0) {
        if (nargs != 2)
            cli_usage_error(cmd, "reorder: expected one FILE");
        return reorder(argv[optind + 1], out, order, seed);
    }
    if (strcmp(action, "info") != 0)
        cli_usage_error(cmd, "unknown action '%s' (expected: info FILE, import DUMP, reorder FILE, or synth)",
                        action);
    if (nargs < 2)
        cli_usage_error(cmd, "info: missing FILE");
    if (nargs > 2)
        cli_usage_error(cmd, "info: unexpected argument '%s' (one FILE at a time)", argv[optind + 2]);
    return info(argv[optind + 1], fmt, top, table);
}
