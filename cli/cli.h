/* cli.h -- the gcscale program: one entry point per subcommand and the
 * conventions they share.
 *
 * Every subcommand parses long options with getopt_long, prints results on
 * stdout (a text table, or --json / --csv), progress and errors on stderr.
 * Bad input gets one line on stderr and exit status 2 (cli_usage_error,
 * cli_fail); a measurement that fails at run time also exits 2 with the
 * library's one-line message.  The commands call the public library headers
 * only.
 */
#ifndef GCSCALE_CLI_H
#define GCSCALE_CLI_H

#include <stdio.h>

#include "gcscale/gcscale.h"

#define CLI_EXIT_USAGE 2

int cmd_bench(int argc, char **argv);
int cmd_bottle(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_corpus(int argc, char **argv);
int cmd_gc_bench(int argc, char **argv);
int cmd_machine(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_validate(int argc, char **argv);

/* Prints "gcscale CMD: MESSAGE (see 'gcscale CMD --help')" and exits 2. */
void cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
/* Prints "gcscale CMD: ERR" and exits 2. */
void cli_fail(const char *cmd, const gcs_err *err) __attribute__((noreturn));
/* The message getopt_long would print, as one usage error: call from the
 * '?' and ':' cases with the argv and the optstring used. */
void cli_bad_option(const char *cmd, char **argv) __attribute__((noreturn));

/* Records the output format an option asks for (--json, --csv) in *fmt,
 * which starts as GCS_FORMAT_TEXT; asking for two different ones is a usage
 * error rather than the last one silently winning. */
void cli_set_format(const char *cmd, gcs_format *fmt, gcs_format wanted);

/* The cases every command's getopt_long loop shares, for its default:
 * 'j' (--json) and 'c' (--csv) into *fmt (cli_set_format), 'h' (--help)
 * prints help on stdout and exits 0, anything else is cli_bad_option. */
void cli_common_option(const char *cmd, int c, char **argv, gcs_format *fmt, void (*help)(FILE *));

/* Parses an integer/size option or exits with a usage error naming it. */
long cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max);
uint64_t cli_parse_size(const char *cmd, const char *opt, const char *text);
double cli_parse_double(const char *cmd, const char *opt, const char *text, double min, double max);
/* An on|off option: 1 for on, 0 for off, else a usage error naming it. */
int cli_parse_on_off(const char *cmd, const char *opt, const char *text);

/* Refuses, before any work is done, an output path that could not be
 * written at the end (gcs_outfile_check): a long run must not be lost to a
 * typo.  Exits 2 with "gcscale CMD: OPT PATH: cannot write: ...". */
void cli_check_output(const char *cmd, const char *opt, const char *path);

/* The end of a command that printed its result: flushes stdout and exits 2
 * with "gcscale CMD: stdout: write failed" where it could not be written
 * (a full disk, a closed pipe), so a truncated result never exits 0.
 * Returns 0, the command's exit status. */
int cli_finish(const char *cmd);

/* One table on stdout in fmt: text (its own title) and a blank line, CSV
 * as a section under "# title" (as `machine show --csv` prints its
 * tables), JSON as the table's array of row objects. */
void cli_print_table(const gcs_table *t, const char *title, gcs_format fmt);

/* Every JSON document the program prints carries "format" (its name,
 * "gcscale-...", with a schema under docs/schemas/) and "version". */
#define CLI_DOC_VERSION 1
/* Prints {"format": format, "version": 1, ...body's keys} on stdout; takes
 * body's reference. */
void cli_print_doc(const char *format, json_t *body);
/* The tables of one output.  JSON: one document (cli_print_doc) with each
 * table's rows under its name (one table: "rows").  CSV: one table, plain
 * (a header line and rows), the one table_name names or else the first,
 * with a note on stderr naming the others (--table NAME).  Text: all of
 * them, or the one table_name names.  A table_name no table has is a
 * usage error listing the names. */
void cli_print_tables(const char *cmd, const char *format, gcs_table *const *tables, const char *const *names,
                      int n, gcs_format fmt, const char *table_name);
/* A machine profile in fmt (gcs_profile_print), with an extra table after
 * it (calibrate --repeat's spread; NULL: none).  CSV: one table, the
 * profile's table_name (gcs_profile_print_csv_table; default its first) or
 * the extra one by extra_name. */
void cli_print_profile(const char *cmd, const gcs_profile *p, gcs_format fmt, const char *table,
                       const gcs_table *extra, const char *extra_name);
#define CLI_TABLE_HELP "  --table NAME         with --csv: the table to print (one per output)\n"

/* The last component of a path (for titles and labels). */
const char *cli_base_name(const char *path);

/* --pin POLICY (topology.h, "worker placement"), the same on every command
 * that runs GC workers or pinned load threads.  A bare --pin followed by
 * another option is cores: gc-bench's --pin took no argument and meant
 * "pinned" before the policies existed.  Bad names exit 2. */
gcs_topo_placement cli_parse_pin(const char *cmd, const char *arg);
#define CLI_PIN_HELP                                                                    \
    "  --pin POLICY         where worker i runs: cores (default: one worker per core,\n" \
    "                       cores spread over packages and NUMA nodes, hyperthreads\n" \
    "                       last), compact (a core's hyperthreads before the next\n"   \
    "                       core), scatter (as many per package and node as each\n"    \
    "                       has PUs for) or none (the scheduler places them)\n"
#define CLI_NO_PIN_HELP "  --no-pin             same as --pin none\n"

#endif
