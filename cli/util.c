/* util.c -- error and option-parsing conventions shared by the subcommands. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[sizeof ((gcs_err *)0)->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gcs_text_one_line(msg); /* it quotes the bad argument */
    gcs_progress_end_line();
    fprintf(stderr, "gcscale %s: %s (see 'gcscale %s --help')\n", cmd, msg, cmd);
    exit(CLI_EXIT_USAGE);
}

void cli_fail(const char *cmd, const gcs_err *err)
{
    gcs_progress_end_line();
    fprintf(stderr, "gcscale %s: %s\n", cmd, err->msg[0] ? err->msg : "unknown error");
    exit(CLI_EXIT_USAGE);
}

void cli_bad_option(const char *cmd, char **argv)
{
    /* getopt_long has been told to be quiet (optstring starts with ':');
     * optind/optopt tell which argument was wrong. */
    extern int optind, optopt;
    const char *arg = argv[optind - 1];
    if (optopt && !(arg && arg[0] == '-' && arg[1] == '-'))
        cli_usage_error(cmd, "bad or incomplete option '-%c'", optopt);
    cli_usage_error(cmd, "bad or incomplete option '%s'", arg ? arg : "?");
}

long cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max)
{
    gcs_err err;
    long v;
    if (gcs_parse_long(text, min, max, &v, &err) < 0)
        cli_usage_error(cmd, "%s: %s", opt, err.msg);
    return v;
}

uint64_t cli_parse_size(const char *cmd, const char *opt, const char *text)
{
    gcs_err err;
    uint64_t v;
    if (gcs_parse_size(text, &v, &err) < 0)
        cli_usage_error(cmd, "%s: %s", opt, err.msg);
    return v;
}

double cli_parse_double(const char *cmd, const char *opt, const char *text, double min, double max)
{
    gcs_err err;
    double v;
    if (gcs_parse_double(text, min, max, &v, &err) < 0)
        cli_usage_error(cmd, "%s: %s", opt, err.msg);
    return v;
}

int cli_parse_on_off(const char *cmd, const char *opt, const char *text)
{
    if (strcmp(text, "on") != 0 && strcmp(text, "off") != 0)
        cli_usage_error(cmd, "%s: '%s' is neither on nor off", opt, text);
    return strcmp(text, "on") == 0;
}

void cli_check_output(const char *cmd, const char *opt, const char *path)
{
    gcs_err err;
    if (gcs_outfile_check(path, &err) < 0) {
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        gcs_err_set(&err, "%s %s", opt, msg);
        cli_fail(cmd, &err);
    }
}

void cli_set_format(const char *cmd, gcs_format *fmt, gcs_format wanted)
{
    if (*fmt != GCS_FORMAT_TEXT && *fmt != wanted)
        cli_usage_error(cmd, "--json and --csv exclude each other");
    *fmt = wanted;
}

int cli_finish(const char *cmd)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        gcs_err err;
        gcs_err_set(&err, "stdout: write failed");
        cli_fail(cmd, &err);
    }
    return 0;
}

void cli_common_option(const char *cmd, int c, char **argv, gcs_format *fmt, void (*help)(FILE *))
{
    switch (c) {
    case 'j': cli_set_format(cmd, fmt, GCS_FORMAT_JSON); return;
    case 'c': cli_set_format(cmd, fmt, GCS_FORMAT_CSV); return;
    case 'h':
        help(stdout);
        exit(0);
    default:
        cli_bad_option(cmd, argv);
    }
}

const char *cli_base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void cli_print_table(const gcs_table *t, const char *title, gcs_format fmt)
{
    if (fmt == GCS_FORMAT_JSON) {
        json_t *doc = gcs_table_to_json(t);
        gcs_json_print(doc, stdout);
        json_decref(doc);
        return;
    }
    if (fmt == GCS_FORMAT_CSV)
        printf("# %s\n", title);
    gcs_table_print(t, stdout, fmt);
    fputc('\n', stdout);
}

gcs_topo_placement cli_parse_pin(const char *cmd, const char *arg)
{
    if (arg[0] == '-' && arg[1] == '-') {
        optind--; /* a bare --pin: the next option is not its argument */
        return GCS_TOPO_PLACE_CORES;
    }
    gcs_topo_placement p;
    gcs_err e;
    if (gcs_topo_placement_parse(arg, &p, &e) < 0)
        cli_usage_error(cmd, "--pin: %s", e.msg);
    return p;
}

void cli_print_doc(const char *format, json_t *body)
{
    /* format and version first, as in every document the suite writes */
    json_t *doc = json_pack("{s:s, s:i}", "format", format, "version", CLI_DOC_VERSION);
    json_object_update(doc, body);
    json_decref(body);
    gcs_json_print(doc, stdout);
    json_decref(doc);
}

void cli_print_tables(const char *cmd, const char *format, gcs_table *const *tables, const char *const *names,
                      int n, gcs_format fmt, const char *table_name)
{
    int pick = -1;
    for (int i = 0; table_name && i < n; i++)
        if (strcmp(names[i], table_name) == 0)
            pick = i;
    if (table_name && pick < 0) {
        char list[512] = "";
        for (int i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
        cli_usage_error(cmd, "--table: '%s' is none of this output's tables (%s)", table_name, list);
    }
    if (fmt == GCS_FORMAT_JSON) {
        json_t *body = json_object();
        for (int i = 0; i < n; i++)
            if (pick < 0 || i == pick)
                json_object_set_new(body, names[i], gcs_table_to_json(tables[i]));
        cli_print_doc(format, body);
        return;
    }
    if (fmt == GCS_FORMAT_CSV) {
        /* one table, so that any CSV reader loads it without options */
        gcs_table_print(tables[pick < 0 ? 0 : pick], stdout, fmt);
        if (pick < 0 && n > 1) {
            char list[512] = "";
            for (int i = 1; i < n; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i > 1 ? ", " : "", names[i]);
            fprintf(stderr, "gcscale %s: the CSV is the %s table; the others: %s (--table NAME)\n", cmd, names[0],
                    list);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        if (pick >= 0 && i != pick)
            continue;
        if (i && pick < 0)
            fputc('\n', stdout);
        gcs_table_print(tables[i], stdout, fmt);
    }
}

void cli_print_profile(const char *cmd, const gcs_profile *p, gcs_format fmt, const char *table,
                       const gcs_table *extra, const char *extra_name)
{
    if (fmt != GCS_FORMAT_CSV) {
        gcs_profile_print(p, stdout, fmt);
        if (extra && fmt != GCS_FORMAT_JSON)
            cli_print_table(extra, extra_name, fmt);
        return;
    }
    if (extra && table && strcmp(table, extra_name) == 0) {
        gcs_table_print(extra, stdout, fmt);
        return;
    }
    gcs_err err;
    const char *first = gcs_profile_table_name(0);
    if (gcs_profile_print_csv_table(p, stdout, table ? table : first, &err) < 0) {
        char names[512] = "";
        for (int i = 0; gcs_profile_table_name(i); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     gcs_profile_table_name(i));
        if (extra)
            snprintf(names + strlen(names), sizeof names - strlen(names), ", %s", extra_name);
        cli_usage_error(cmd, "--table: %s (tables: %s)", err.msg, names);
    }
    if (!table) {
        char names[512] = "";
        for (int i = 1; gcs_profile_table_name(i); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i > 1 ? ", " : "",
                     gcs_profile_table_name(i));
        fprintf(stderr, "gcscale %s: the CSV is the %s table; the others: %s%s%s (--table NAME)\n", cmd, first,
                names, extra ? ", " : "", extra ? extra_name : "");
    }
}
