/* boehm_bench.c -- gcscale-boehm-bench: the gc-bench shapes in the
 * Boehm-Demers-Weiser collector, for the side-by-side table of 'make bench'.
 *
 *   gcscale-boehm-bench --shape tree|list|random|wide [--depth D] [--objects N]
 *       [--seed S] [--markers SPEC] [--reps N]
 *
 * Built only when pkg-config finds bdw-gc (Debian libgc-dev).  The shapes are
 * built by the same code as gc-bench's (gcbench/shapes.c, same allocation
 * order and seed), with GC_MALLOC for objects that hold pointers and
 * GC_MALLOC_ATOMIC for the wide shape's data objects.
 *
 * Boehm fixes its number of marker threads when it initializes, so each
 * marker count P runs in a child process forked before GC_INIT: the child
 * calls GC_set_markers_count(P) (and sets GC_MARKERS=P), GC_INIT(),
 * GC_start_mark_threads(), builds the shape, then times GC_gcollect() --
 * WARMUP untimed, then reps timed -- and sends its results to the parent as
 * one JSON line.  The parent prints one JSON document on stdout.
 *
 * What a GC_gcollect() includes: stopping the world, clearing mark bits,
 * marking from the roots (the data segments and the stack, conservatively)
 * with GC_parallel + 1 markers, and the eager part of the sweep (blocks with
 * no live object are freed; the other blocks are queued for a lazy sweep that
 * allocation does later, so most sweeping is NOT in the timed call).  The
 * mark phase alone is timed too, from GC_EVENT_MARK_START to GC_EVENT_MARK_END.
 */
#define GC_THREADS 1
#include <gc/gc.h>

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gcscale/common.h"
#include "gcscale/shapes.h"

#define WARMUP 2
#define MAX_REPS 1000
#define MAX_MARKERS 64

static const char *prog = "gcscale-boehm-bench";

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see '%s --help')\n", prog);
    va_end(ap);
    exit(2);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static long parse_long(const char *opt, const char *text, long min, long max)
{
    gcs_err err;
    long v;
    if (gcs_parse_long(text, min, max, &v, &err) < 0)
        usage_error("%s: %s", opt, err.msg);
    return v;
}

/* ---- the child: one marker count ------------------------------------------ */

static void *boehm_root; /* in the data segment: a root for Boehm */
static uint64_t ev_mark_start, ev_mark_end;

static void on_event(GC_EventType e)
{
    if (e == GC_EVENT_MARK_START)
        ev_mark_start = gcs_now_ns();
    else if (e == GC_EVENT_MARK_END)
        ev_mark_end = gcs_now_ns();
}

static void quiet_warn(char *msg, GC_word arg)
{
    (void)msg;
    (void)arg;
}

static void *boehm_alloc(void *ctx, size_t nptrs, size_t data_words)
{
    (void)ctx;
    size_t size = 8 * (nptrs + data_words);
    if (nptrs)
        return GC_MALLOC(size); /* zeroed */
    void *p = GC_MALLOC_ATOMIC(size);
    if (p)
        memset(p, 0, size);
    return p;
}

static void run_child(const gcs_shape_params *sp, int markers, int reps, int fd)
{
    char env[32];
    snprintf(env, sizeof env, "%d", markers);
    setenv("GC_MARKERS", env, 1);
    GC_set_markers_count((unsigned)markers);
    GC_INIT();
    GC_start_mark_threads();
    GC_set_warn_proc(quiet_warn);
    GC_set_on_collection_event(on_event);

    gcs_err err = {{0}};
    gcs_shape_info info;
    uint64_t t0 = gcs_now_ns();
    if (gcs_shape_build(sp, boehm_alloc, NULL, &boehm_root, &info, &err) < 0)
        fail("%s", err.msg);
    double build_ms = (double)(gcs_now_ns() - t0) / 1e6;

    for (int i = 0; i < WARMUP; i++)
        GC_gcollect();
    json_t *row = json_object();
    json_t *coll = json_array(), *mark = json_array();
    double *cv = calloc((size_t)reps, sizeof *cv), *mv = calloc((size_t)reps, sizeof *mv);
    if (!cv || !mv)
        fail("out of memory");
    for (int r = 0; r < reps; r++) {
        ev_mark_start = ev_mark_end = 0;
        uint64_t a = gcs_now_ns();
        GC_gcollect();
        uint64_t b = gcs_now_ns();
        cv[r] = (double)(b - a) / 1e6;
        mv[r] = ev_mark_end > ev_mark_start ? (double)(ev_mark_end - ev_mark_start) / 1e6 : cv[r];
        json_array_append_new(coll, json_real(cv[r]));
        json_array_append_new(mark, json_real(mv[r]));
    }
    json_object_set_new(row, "markers", json_integer(markers));
    json_object_set_new(row, "markers_running", json_integer(GC_get_parallel() + 1));
    double cmed = gcs_stats_median(cv, (size_t)reps), mmed = gcs_stats_median(mv, (size_t)reps);
    json_object_set_new(row, "collect_ms", json_real(cmed));
    json_object_set_new(row, "collect_ms_min", json_real(cv[0]));
    json_object_set_new(row, "collect_ms_max", json_real(cv[reps - 1]));
    json_object_set_new(row, "mark_ms", json_real(mmed));
    json_object_set_new(row, "mobjects_per_s", json_real((double)info.objects / (cmed / 1e3) / 1e6));
    json_object_set_new(row, "collect_ms_all", coll);
    json_object_set_new(row, "mark_ms_all", mark);
    json_object_set_new(row, "build_ms", json_real(build_ms));
    json_object_set_new(row, "heap_bytes", json_integer((json_int_t)GC_get_heap_size()));
    json_object_set_new(row, "live_bytes_after", json_integer((json_int_t)(GC_get_heap_size() - GC_get_free_bytes())));
    json_object_set_new(row, "objects", json_integer((json_int_t)info.objects));
    char *line = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!line)
        fail("out of memory");
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t n = write(fd, line + off, len - off);
        if (n <= 0)
            fail("cannot write to the parent");
        off += (size_t)n;
    }
    _exit(0);
}

/* ---- the parent ------------------------------------------------------------- */

static json_t *run_markers(const gcs_shape_params *sp, int markers, int reps)
{
    int fds[2];
    if (pipe(fds) < 0)
        fail("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        run_child(sp, markers, reps, fds[1]);
    }
    close(fds[1]);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            fail("out of memory");
        ssize_t n = read(fds[0], buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("the child for %d markers failed (status %d)", markers, status);
    buf[len] = 0;
    json_error_t jerr;
    json_t *row = json_loads(buf, 0, &jerr);
    free(buf);
    if (!row)
        fail("bad result from the child for %d markers: %s", markers, jerr.text);
    return row;
}

static void print_help(void)
{
    printf("usage: %s --shape tree|list|random|wide [--depth D] [--objects N] [--seed S]\n"
           "           [--markers SPEC] [--reps N]\n"
           "\n"
           "Builds a gc-bench shape (include/gcscale/shapes.h) in the Boehm-Demers-Weiser\n"
           "collector and times GC_gcollect() full collections (median of --reps, default 7,\n"
           "min 5, after %d untimed) with P marker threads, one child process per P\n"
           "(default P = 1..CPUs).  Prints one JSON document.  See docs/gc-bench.md.\n",
           prog, WARMUP);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"shape", required_argument, NULL, 's'}, {"depth", required_argument, NULL, 'd'},
        {"objects", required_argument, NULL, 'n'}, {"seed", required_argument, NULL, 'S'},
        {"markers", required_argument, NULL, 'm'}, {"reps", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    gcs_shape_params sp = {0};
    sp.seed = 1;
    int have_shape = 0, reps = 7, lo = 1, hi = 0, c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 's':
            if (gcs_shape_parse(optarg, &sp.kind) < 0)
                usage_error("--shape: unknown shape '%s'", optarg);
            have_shape = 1;
            break;
        case 'd': sp.depth = (int)parse_long("--depth", optarg, 1, GCS_SHAPE_MAX_DEPTH); break;
        case 'n': {
            gcs_err err;
            if (gcs_parse_size(optarg, &sp.objects, &err) < 0 || sp.objects < 1)
                usage_error("--objects: bad count '%s'", optarg);
            break;
        }
        case 'S': sp.seed = (uint64_t)parse_long("--seed", optarg, 0, __LONG_MAX__); break;
        case 'm': {
            char *dash = strchr(optarg, '-');
            if (dash) {
                *dash = 0;
                lo = (int)parse_long("--markers", optarg, 1, MAX_MARKERS);
                hi = (int)parse_long("--markers", dash + 1, 1, MAX_MARKERS);
                if (hi < lo)
                    usage_error("--markers: empty range");
            } else {
                lo = hi = (int)parse_long("--markers", optarg, 1, MAX_MARKERS);
            }
            break;
        }
        case 'r': reps = (int)parse_long("--reps", optarg, 5, MAX_REPS); break;
        case 'h': print_help(); return 0;
        default: usage_error("bad or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (!have_shape)
        usage_error("missing --shape");
    gcs_err err = {{0}};
    if (gcs_shape_params_check(&sp, &err) < 0)
        usage_error("%s", err.msg);
    if (hi == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        hi = n < 1 ? 1 : n > MAX_MARKERS ? MAX_MARKERS : (int)n;
    }
    gcs_shape_info info;
    gcs_shape_describe(&sp, &info);

    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_string("gcscale-boehm-bench"));
    json_object_set_new(doc, "version", json_integer(1));
    char version[64];
    snprintf(version, sizeof version, "bdw-gc %d.%d.%d", GC_VERSION_MAJOR, GC_VERSION_MINOR, GC_VERSION_MICRO);
    json_object_set_new(doc, "collector", json_string(version));
    gcs_shape_params_to_json(&sp, doc);
    json_object_set_new(doc, "objects", json_integer((json_int_t)info.objects));
    json_object_set_new(doc, "payload_bytes", json_integer((json_int_t)info.payload_bytes));
    json_object_set_new(doc, "reps", json_integer(reps));
    json_object_set_new(doc, "warmup", json_integer(WARMUP));
    json_object_set_new(doc, "timed",
                        json_string("GC_gcollect(): stop the world, full mark with P markers, eager "
                                    "sweep of empty blocks (the rest of the sweep is lazy, not timed); "
                                    "mark_ms: GC_EVENT_MARK_START to GC_EVENT_MARK_END"));
    json_t *rows = json_array();
    for (int p = lo; p <= hi; p++) {
        fprintf(stderr, "%s: %s, %d marker%s\n", prog, gcs_shape_name(sp.kind), p, p > 1 ? "s" : "");
        json_array_append_new(rows, run_markers(&sp, p, reps));
    }
    json_object_set_new(doc, "rows", rows);
    gcs_json_print(doc, stdout);
    json_decref(doc);
    return fflush(stdout) == 0 ? 0 : 2;
}
