/* common.h -- small utilities every part of gcscale may use (prefix gcs_).
 *
 * Owns: error messages, the monotonic clock, order statistics, size parsing,
 * crash-safe output files, progress reporting and result tables that print as
 * text, CSV or JSON.  It calls nothing else in gcscale.
 */
#ifndef GCSCALE_COMMON_H
#define GCSCALE_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

/* GCS_API marks the library's public API: libgcscale is built with
 * -fvisibility=hidden, so a function without it does not leave the shared
 * library.  Every function declared in include/gcscale/ carries it. */
#define GCS_API __attribute__((visibility("default")))

/* The library's release number. */
#define GCSCALE_VERSION "0.1.0"
/* What a build reports and records in profiles and results: the release
 * and the git revision it was built from, "0.1.0 (git 1a2b3c4)" ("-dirty"
 * when built from uncommitted changes, "unknown" outside a git checkout). */
GCS_API const char *gcs_version(void);
GCS_API const char *gcs_git_revision(void);

/* ---- errors ---------------------------------------------------------------
 * Library functions never print and never exit: they return -1 (or NULL) and
 * describe the failure in one line in a caller-provided gcs_err.  The CLI
 * prints that line on stderr and exits with status 2. */
typedef struct gcs_err {
    char msg[512];
} gcs_err;

GCS_API void gcs_err_set(gcs_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Replaces control characters (newlines, tabs, escapes) by '?' in place, so
 * that text quoted from the user prints as one line; gcs_err_set applies it
 * to every message. */
GCS_API void gcs_text_one_line(char *s);

/* ---- time ---------------------------------------------------------------- */
GCS_API uint64_t gcs_now_ns(void);                 /* CLOCK_MONOTONIC in nanoseconds */
GCS_API void gcs_now_iso8601(char *buf, size_t n); /* UTC wall-clock time, for records */

/* ---- order statistics -----------------------------------------------------
 * Percentiles use linear interpolation between closest ranks; the array is
 * sorted in place.  p is in [0, 100]. */
GCS_API void gcs_stats_sort(double *values, size_t n);
GCS_API double gcs_stats_percentile(double *values, size_t n, double p);
GCS_API double gcs_stats_median(double *values, size_t n);

/* ---- random numbers ----------------------------------------------------------
 * xorshift64*: fast and reproducible, for building test and benchmark heaps
 * (not for anything that needs real randomness).  The state must not be 0. */
static inline uint64_t gcs_random_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* A number in [0, n), by multiply-shift (no modulo bias worth the name). */
static inline uint64_t gcs_random_below(uint64_t *state, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)gcs_random_next(state) * n) >> 64);
}

/* ---- parsing ---------------------------------------------------------------
 * Sizes accept a plain byte count or a K/M/G/T suffix (powers of 1024, an
 * optional trailing "iB" or "B").  Both return -1 with err set on bad input. */
GCS_API int gcs_parse_size(const char *text, uint64_t *bytes, gcs_err *err);
GCS_API int gcs_parse_long(const char *text, long min, long max, long *value, gcs_err *err);
GCS_API int gcs_parse_double(const char *text, double min, double max, double *value, gcs_err *err);
/* A list of counts such as thread counts: "1-64", "1,2,4,8" or a mix
 * ("1-4,8,16"), every count in [1, max], into an ascending list without
 * duplicates (*values is malloc'ed, *n its length).  0, 5-2, blanks, signs
 * and counts above max are errors that quote the list. */
GCS_API int gcs_parse_count_list(const char *text, int max, int **values, int *n, gcs_err *err);

/* The inverse of gcs_parse_size, for people: "64 MiB", "1.5 GiB" (binary
 * units up to PiB, one decimal where the value is not whole).  flags:
 * GCS_BYTES_SHORT writes "64M", "1.5G" (no space, one letter, up to T;
 * gcscale bench's labels); GCS_BYTES_WORD writes "bytes" rather than "B"
 * below 1 KiB and stops at TiB (calibrate's messages). */
#define GCS_BYTES_SHORT 1u
#define GCS_BYTES_WORD 2u
GCS_API void gcs_format_bytes(uint64_t bytes, unsigned flags, char *buf, size_t len);

/* ---- priority queue ----------------------------------------------------------
 * A binary min-heap of (key, item) pairs that grows as needed, for the
 * Dijkstra walks that compute the span T-infinity.  push returns -1 when it
 * cannot grow. */
typedef struct gcs_minheap_entry {
    double key;
    uint64_t item;
} gcs_minheap_entry;

typedef struct gcs_minheap {
    gcs_minheap_entry *entries;
    size_t n, cap;
} gcs_minheap;

GCS_API int gcs_minheap_push(gcs_minheap *h, double key, uint64_t item);
GCS_API gcs_minheap_entry gcs_minheap_pop(gcs_minheap *h); /* h->n must be > 0 */
GCS_API void gcs_minheap_free(gcs_minheap *h);

/* ---- crash-safe output files ------------------------------------------------
 * Output goes to "PATH.tmp.PID" and is renamed over PATH only by
 * gcs_outfile_commit(), so a failed or interrupted run never leaves half a
 * file at PATH.  gcs_outfile_abort() removes the temporary file.
 * A PATH that is a symbolic link is written through: the temporary goes next
 * to the link's target and replaces the target.  A PATH that is a device or
 * FIFO (/dev/stdout, /dev/null) is written directly (tmp_path is PATH then).
 * A directory, or a link to nothing, is refused by gcs_outfile_open. */
typedef struct gcs_outfile {
    FILE *fp;
    char path[4096];     /* the file renamed over (a link's target) */
    char tmp_path[4200]; /* where the output is written until the commit */
    int direct;          /* writing straight into a device or FIFO */
} gcs_outfile;

GCS_API int gcs_outfile_open(gcs_outfile *out, const char *path, gcs_err *err);
/* Checks, before a long run, what gcs_outfile_open would refuse: PATH a
 * directory or a link to nothing, its directory missing or not writable.
 * "-" (stdout) passes.  0, or -1 with err set ("PATH: cannot write: ..."). */
GCS_API int gcs_outfile_check(const char *path, gcs_err *err);
GCS_API int gcs_outfile_commit(gcs_outfile *out, gcs_err *err);
/* Creates dir and every missing parent (mkdir -p; mode 0777 less the
 * umask).  0, or -1 with err naming the part that could not be made. */
GCS_API int gcs_make_dirs(const char *dir, gcs_err *err);
GCS_API void gcs_outfile_abort(gcs_outfile *out);

/* Prints a JSON document the way gcscale always writes JSON: indented, keys
 * in insertion order, reals with 10 significant digits, a final newline.
 * Returns 0, or -1 when the stream fails. */
#define GCS_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
GCS_API int gcs_json_print(const json_t *doc, FILE *fp);

/* Writes a JSON document (indented, keys in insertion order) through a
 * gcs_outfile.  "-" means stdout. */
GCS_API int gcs_json_write_file(json_t *doc, const char *path, gcs_err *err);
/* Reads a JSON document ("-" is stdin), refusing duplicate keys.  NULL with
 * err "PATH: cannot read: ..." or "PATH: malformed JSON at line L, column
 * C: ...". */
GCS_API json_t *gcs_json_read_file(const char *path, gcs_err *err);

/* Sets obj's "placement" (the policy's name, topology.h), "pu_map" (the OS
 * CPU of worker 0..n-1, -1 for an unbound worker) and "pu_map_logical"
 * (hwloc's logical index L#, -1 unbound): the record of where the workers
 * ran that every JSON result with pinned threads carries, written by one
 * function so that it reads alike everywhere (docs/collector.md, "Worker
 * placement"). */
GCS_API void gcs_json_set_pu_map(json_t *obj, const char *placement, const int *os, const int *logical, int n);

/* ---- progress ---------------------------------------------------------------
 * Long runs report "step, percent, time left" on stderr: a live line when
 * stderr is a terminal, one plain line per step otherwise.  total_work is in
 * arbitrary units (for example expected seconds of each step). */
typedef struct gcs_progress {
    double total_work, done_work;
    uint64_t start_ns;
    int tty, quiet;
} gcs_progress;

GCS_API void gcs_progress_init(gcs_progress *pr, double total_work, int quiet);
GCS_API void gcs_progress_step(gcs_progress *pr, const char *step, double work_of_step);
GCS_API void gcs_progress_done(gcs_progress *pr, double work_of_step);
GCS_API void gcs_progress_finish(gcs_progress *pr);
/* Ends a live progress line left on the terminal, so that a message printed
 * next (an error that stops the run) gets a line of its own. */
GCS_API void gcs_progress_end_line(void);

/* ---- result tables ------------------------------------------------------------
 * A table is a list of named columns and rows of cells.  It prints as an
 * aligned text table, CSV, or a JSON array of objects keyed by column name, so
 * every command that shows a table also offers --json and --csv for free. */
typedef enum gcs_format { GCS_FORMAT_TEXT, GCS_FORMAT_CSV, GCS_FORMAT_JSON } gcs_format;

typedef struct gcs_table gcs_table;

GCS_API gcs_table *gcs_table_new(const char *title, int ncols, const char *const *colnames);
GCS_API void gcs_table_free(gcs_table *t);
/* Cells are appended left to right; a new row starts after ncols cells. */
GCS_API void gcs_table_add_str(gcs_table *t, const char *s);
GCS_API void gcs_table_add_int(gcs_table *t, long long v);
GCS_API void gcs_table_add_num(gcs_table *t, double v, int decimals); /* NaN prints "-"/null */
GCS_API int gcs_table_rows(const gcs_table *t);
GCS_API json_t *gcs_table_to_json(const gcs_table *t); /* new reference */
GCS_API void gcs_table_print(const gcs_table *t, FILE *fp, gcs_format fmt);

#endif
