/* test_common.c -- common/: parsing, statistics, crash-safe files, tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcscale/common.h"
#include "gcscale/plot.h"

/* An error quotes what the user gave; whatever that holds, the message is
 * one line (the CLI prints it as the one line on stderr). */
static void test_err_one_line(void **state)
{
    (void)state;
    gcs_err err;
    gcs_err_set(&err, "format: found \"%s\"", "a\nb\r\tc\x1b[31md\x7f");
    assert_string_equal(err.msg, "format: found \"a?b??c?[31md?\"");
    gcs_err_set(&err, "%s", "caf\xc3\xa9 ok"); /* UTF-8 is left alone */
    assert_string_equal(err.msg, "caf\xc3\xa9 ok");
    gcs_err_set(NULL, "%s", "ignored");
}

static void test_parse_size(void **state)
{
    (void)state;
    gcs_err err;
    uint64_t v;
    assert_int_equal(gcs_parse_size("4096", &v, &err), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(gcs_parse_size("64K", &v, &err), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(gcs_parse_size("1GiB", &v, &err), 0);
    assert_int_equal(v, 1ull << 30);
    assert_int_equal(gcs_parse_size("1.5M", &v, &err), 0);
    assert_int_equal(v, 3ull << 19);
    assert_int_equal(gcs_parse_size("2mb", &v, &err), 0);
    assert_int_equal(v, 2ull << 20);
    assert_int_equal(gcs_parse_size("12X", &v, &err), -1);
    assert_non_null(strstr(err.msg, "unknown unit"));
    assert_int_equal(gcs_parse_size("-1", &v, &err), -1);
    assert_int_equal(gcs_parse_size("", &v, &err), -1);
    assert_int_equal(gcs_parse_size("abc", &v, &err), -1);
}

static void test_parse_numbers(void **state)
{
    (void)state;
    gcs_err err;
    long l;
    double d;
    assert_int_equal(gcs_parse_long("12", 1, 64, &l, &err), 0);
    assert_int_equal(l, 12);
    assert_int_equal(gcs_parse_long("0", 1, 64, &l, &err), -1);
    assert_non_null(strstr(err.msg, "out of range"));
    assert_int_equal(gcs_parse_long("12x", 1, 64, &l, &err), -1);
    assert_int_equal(gcs_parse_double("0.05", 0, 1, &d, &err), 0);
    assert_true(fabs(d - 0.05) < 1e-12);
    assert_int_equal(gcs_parse_double("nan", 0, 1, &d, &err), -1);
    assert_int_equal(gcs_parse_double("2", 0, 1, &d, &err), -1);
}

static void test_percentiles(void **state)
{
    (void)state;
    double v[] = {5, 1, 4, 2, 3};
    assert_true(gcs_stats_median(v, 5) == 3);
    double w[] = {10, 20, 30, 40};
    assert_true(fabs(gcs_stats_median(w, 4) - 25) < 1e-12);
    assert_true(fabs(gcs_stats_percentile(w, 4, 10) - 13) < 1e-12);
    assert_true(gcs_stats_percentile(w, 4, 100) == 40);
    assert_true(isnan(gcs_stats_median(w, 0)));
}

/* A fresh directory (dir, a mkdtemp template) and PATH = dir/out.json in it. */
static void tmp_out_path(char *dir, char *path, size_t n)
{
    assert_non_null(mkdtemp(dir));
    snprintf(path, n, "%s/out.json", dir);
}

static void test_outfile_commit_and_abort(void **state)
{
    (void)state;
    char dir[] = "/tmp/gcs-test-XXXXXX", path[256];
    tmp_out_path(dir, path, sizeof path);
    gcs_err err;
    gcs_outfile out;

    /* An aborted write leaves nothing behind, not even the temporary. */
    assert_int_equal(gcs_outfile_open(&out, path, &err), 0);
    fputs("half a fi", out.fp);
    gcs_outfile_abort(&out);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(stat(out.tmp_path, &st), -1);

    /* A committed one appears whole. */
    json_t *doc = json_pack("{s:i}", "answer", 42);
    assert_int_equal(gcs_json_write_file(doc, path, &err), 0);
    json_decref(doc);
    json_error_t jerr;
    json_t *back = json_load_file(path, 0, &jerr);
    assert_non_null(back);
    assert_int_equal(json_integer_value(json_object_get(back, "answer")), 42);
    json_decref(back);

    /* A directory that does not exist is a clear error. */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/such/dir.json", dir);
    doc = json_object();
    assert_int_equal(gcs_json_write_file(doc, bad, &err), -1);
    assert_non_null(strstr(err.msg, "cannot write"));
    json_decref(doc);

    unlink(path);
    rmdir(dir);
}

/* Lists of counts (--threads of predict and gc-bench): ranges and lists,
 * sorted without duplicates; digits only, every count in [1, max]. */
static void test_count_list(void **state)
{
    (void)state;
    gcs_err err;
    int *v, n;
    assert_int_equal(gcs_parse_count_list("8,1-3,2,16", 64, &v, &n, &err), 0);
    int want[] = {1, 2, 3, 8, 16};
    assert_int_equal(n, 5);
    assert_memory_equal(v, want, sizeof want);
    free(v);
    assert_int_equal(gcs_parse_count_list("1-64", 64, &v, &n, &err), 0);
    assert_int_equal(n, 64);
    assert_int_equal(v[63], 64);
    free(v);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"0", "0 is out of range [1, 64]"},
        {"65", "65 is out of range"},
        {"99999999999999999999", "99999999999999999999 is out of range"},
        {"5-2", "range 5-2 runs backwards"},
        {" 2", "expected a number at ' 2'"},
        {"+2", "expected a number at '+2'"},
        {"1- 3", "expected a number at ' 3'"},
        {"-1", "expected a number at '-1'"},
        {"2,,3", "expected a number at ',3'"},
        {"1,2,", "expected a number at the end"},
        {"1;2", "unexpected ';'"},
        {"", "empty list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(gcs_parse_count_list(bad[i].text, 64, &v, &n, &err), -1);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("'%s': got \"%s\", expected \"%s\"", bad[i].text, err.msg, bad[i].msg);
        assert_null(v);
    }
}

/* PATH that is not a plain file: renaming over it would replace it, so a
 * symbolic link is written through to its target, a FIFO (like /dev/stdout)
 * is written directly and stays a FIFO, and a directory or a link to nothing
 * is refused before anything is written. */
static void test_outfile_special_paths(void **state)
{
    (void)state;
    char dir[] = "/tmp/gcs-test-XXXXXX", target[256], link[256], fifo[256], dangling[256];
    assert_non_null(mkdtemp(dir));
    snprintf(target, sizeof target, "%s/target.json", dir);
    snprintf(link, sizeof link, "%s/link.json", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling.json", dir);
    gcs_err err;
    struct stat st;

    FILE *fp = fopen(target, "w");
    assert_non_null(fp);
    fputs("old\n", fp);
    fclose(fp);
    assert_int_equal(symlink("target.json", link), 0);
    json_t *doc = json_pack("{s:i}", "answer", 42);
    assert_int_equal(gcs_json_write_file(doc, link, &err), 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* still a link ... */
    json_error_t jerr;
    json_t *back = json_load_file(target, 0, &jerr); /* ... and its target was written */
    assert_non_null(back);
    assert_int_equal(json_integer_value(json_object_get(back, "answer")), 42);
    json_decref(back);

    assert_int_equal(mkfifo(fifo, 0600), 0);
    int reader = open(fifo, O_RDONLY | O_NONBLOCK); /* so that opening to write does not block */
    assert_true(reader >= 0);
    assert_int_equal(gcs_json_write_file(doc, fifo, &err), 0);
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    char buf[64] = {0};
    assert_true(read(reader, buf, sizeof buf - 1) > 0);
    assert_non_null(strstr(buf, "\"answer\": 42"));
    close(reader);

    assert_int_equal(gcs_json_write_file(doc, dir, &err), -1);
    assert_non_null(strstr(err.msg, "is a directory"));
    assert_int_equal(symlink("missing.json", dangling), 0);
    assert_int_equal(gcs_json_write_file(doc, dangling, &err), -1);
    assert_non_null(strstr(err.msg, "symbolic link to a missing file"));
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    json_decref(doc);

    /* Nothing else was left in the directory (no temporaries). */
    unlink(target);
    unlink(link);
    unlink(fifo);
    unlink(dangling);
    assert_int_equal(rmdir(dir), 0);
}

/* A write that fails half way (the disk fills up) leaves the previous
 * file as it was and no temporary.  The file size limit stands in for a
 * full disk: past it write(2) fails with EFBIG (SIGXFSZ ignored). */
static void test_outfile_disk_full(void **state)
{
    (void)state;
    char dir[] = "/tmp/gcs-test-XXXXXX", path[256];
    tmp_out_path(dir, path, sizeof path);
    gcs_err err;
    json_t *small = json_pack("{s:i}", "run", 1);
    assert_int_equal(gcs_json_write_file(small, path, &err), 0);
    json_decref(small);

    json_t *big = json_array();
    for (int i = 0; i < 20000; i++)
        json_array_append_new(big, json_real(i + 0.125));
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {4096, old.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

    /* through gcs_json_write_file ... */
    int rc = gcs_json_write_file(big, path, &err);
    /* ... and through the open/commit pair, whose commit finds the error */
    gcs_outfile out;
    int rc_open = gcs_outfile_open(&out, path, &err);
    for (int i = 0; rc_open == 0 && i < 2000; i++)
        fputs("0123456789", out.fp);
    int rc_commit = rc_open == 0 ? gcs_outfile_commit(&out, &err) : 0;

    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, old_handler);
    json_decref(big);

    assert_int_equal(rc, -1);
    assert_int_equal(rc_open, 0);
    assert_int_equal(rc_commit, -1);
    assert_non_null(strstr(err.msg, "write failed"));
    assert_non_null(strstr(err.msg, path));
    struct stat st;
    assert_int_equal(stat(out.tmp_path, &st), -1);
    json_error_t jerr;
    json_t *back = json_load_file(path, 0, &jerr); /* the first file, whole */
    assert_non_null(back);
    assert_int_equal(json_integer_value(json_object_get(back, "run")), 1);
    json_decref(back);

    unlink(path);
    rmdir(dir);
}

static void test_table_formats(void **state)
{
    (void)state;
    const char *cols[] = {"name", "count", "ns"};
    gcs_table *t = gcs_table_new("demo", 3, cols);
    gcs_table_add_str(t, "a,b");
    gcs_table_add_int(t, 7);
    gcs_table_add_num(t, 1.25, 2);
    gcs_table_add_str(t, "c");
    gcs_table_add_int(t, -1);
    gcs_table_add_num(t, NAN, 2);
    assert_int_equal(gcs_table_rows(t), 2);

    json_t *rows = gcs_table_to_json(t);
    assert_int_equal(json_array_size(rows), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "name")), "a,b");
    assert_true(json_real_value(json_object_get(json_array_get(rows, 0), "ns")) == 1.25);
    assert_true(json_is_null(json_object_get(json_array_get(rows, 1), "ns")));
    json_decref(rows);

    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    gcs_table_print(t, fp, GCS_FORMAT_CSV);
    fclose(fp);
    assert_string_equal(buf, "name,count,ns\n\"a,b\",7,1.25\nc,-1,\n");
    free(buf);

    fp = open_memstream(&buf, &len);
    gcs_table_print(t, fp, GCS_FORMAT_TEXT);
    fclose(fp);
    assert_non_null(strstr(buf, "demo\nname  count    ns\na,b       7  1.25\n"));
    free(buf);
    gcs_table_free(t);
}

static void test_minheap_orders_and_grows(void **state)
{
    (void)state;
    gcs_minheap h = {0};
    /* 3000 keys in a scrambled order: more than the first allocation holds. */
    for (uint64_t i = 0; i < 3000; i++)
        assert_int_equal(gcs_minheap_push(&h, (double)((i * 7919) % 3000), i), 0);
    double last = -1;
    for (int i = 0; i < 3000; i++) {
        gcs_minheap_entry e = gcs_minheap_pop(&h);
        assert_true(e.key >= last);
        assert_true((double)((e.item * 7919) % 3000) == e.key);
        last = e.key;
    }
    assert_int_equal(h.n, 0);
    gcs_minheap_free(&h);
}

/* The file at path, NUL-terminated, into buf (at most size - 1 bytes). */
static void read_whole(const char *path, char *buf, size_t size)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = fread(buf, 1, size - 1, fp);
    buf[n] = 0;
    fclose(fp);
}

/* A stacked bar chart: one rect per non-zero segment, a negative one drawn
 * (below zero), labels escaped, and bad shapes refused. */
static void test_bar_chart(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-bars-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gcs_plot_bar bars[2] = {{"measured", {1.5, 0.3, 0.2}}, {"predicted <P>", {1.8, 0.0, -0.1}}};
    gcs_plot_bar_group groups[1] = {{"P = 2", 2, bars}};
    gcs_plot_bars p = {.title = "stack", .y_label = "speedup", .nsegments = 3,
                       .segment_labels = {"speedup", "lost & found", "other"},
                       .ngroups = 1, .groups = groups, .y_max = NAN, .label_values = 1};
    gcs_err err;
    assert_int_equal(gcs_plot_write_bars_svg(&p, path, &err), 0);
    char buf[16384];
    read_whole(path, buf, sizeof buf);
    int rects = 0;
    for (const char *q = buf; (q = strstr(q, "<rect x=")) != NULL; q++)
        rects++;
    assert_int_equal(rects, 5 + 3); /* 5 non-zero segments + 3 legend keys */
    assert_non_null(strstr(buf, "predicted &lt;P&gt;"));
    assert_non_null(strstr(buf, "lost &amp; found"));
    assert_non_null(strstr(buf, "other: -0.1"));
    p.nsegments = 0;
    assert_int_equal(gcs_plot_write_bars_svg(&p, path, &err), -1);
    unlink(path);
}

/* A title longer than the canvas is set smaller and, past two thirds of
 * its size, loses its middle: both ends stay, nothing runs off the page. */
static void test_plot_long_title(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-title-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char title[400];
    memset(title, 'x', sizeof title - 1);
    memcpy(title, "START", 5);
    memcpy(title + sizeof title - 4, "END", 4);
    double xs[2] = {1, 2}, ys[2] = {1, 2};
    gcs_plot_series s = {.label = "a", .x = xs, .y = ys, .n = 2};
    gcs_plot p = {.title = title, .subtitle = "short", .x_label = "P", .y_label = "speedup", .nseries = 1,
                  .series = &s, .x_min = NAN, .x_max = NAN, .y_min = NAN, .y_max = NAN};
    gcs_err err;
    assert_int_equal(gcs_plot_write_svg(&p, path, &err), 0);
    char buf[32768];
    read_whole(path, buf, sizeof buf);
    const char *t = strstr(buf, "y=\"26\"");
    assert_non_null(t);
    double size = strtod(strstr(t, "font-size=\"") + 11, NULL);
    assert_true(size >= 11.9 && size <= 12.1); /* 18 px down to two thirds */
    const char *text = strchr(t, '>') + 1, *end = strstr(text, "</text>");
    assert_non_null(end);
    assert_true(strncmp(text, "START", 5) == 0 && strncmp(end - 3, "END", 3) == 0);
    assert_non_null(strstr(text, "...") );
    assert_true(0.55 * size * (double)(end - text) <= 800 - 40); /* fits the canvas */
    assert_non_null(strstr(buf, ">short</text>")); /* a short one is untouched */
    unlink(path);
}

/* A marker-only series is a marker alone in the legend, not a line; a
 * series with min-max bars draws a whisker per point (and one in the
 * legend); the marked x is a labelled dotted line. */
static void test_plot_points_bars_mark(void **state)
{
    (void)state;
    char path[] = "/tmp/gcscale-test-points-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    double xs[3] = {1, 2, 3}, ys[3] = {1, 1.5, 2}, lo[3] = {0.9, 1.2, NAN}, hi[3] = {1.1, 1.7, NAN};
    gcs_plot_series s[2] = {{.label = "dots", .x = xs, .y = ys, .n = 3, .style = GCS_PLOT_POINTS, .color = "#123456"},
                            {.label = "meas", .x = xs, .y = ys, .n = 3, .color = "#654321", .y_lo = lo, .y_hi = hi}};
    gcs_plot p = {.title = "t", .x_label = "P", .y_label = "speedup", .nseries = 2, .series = s, .x_min = NAN,
                  .x_max = NAN, .y_min = NAN, .y_max = NAN, .mark_x = 2, .mark_label = "recommended P = 2"};
    gcs_err err;
    assert_int_equal(gcs_plot_write_svg(&p, path, &err), 0);
    char buf[32768];
    read_whole(path, buf, sizeof buf);
    assert_null(strstr(buf, "<line x1=\"98\" y1=\"73.0\"")); /* no legend line for the dots (first entry) */
    assert_null(strstr(buf, "stroke=\"#123456\""));          /* nor any line of theirs */
    int whiskers = 0;
    for (const char *q = buf; (q = strstr(q, "stroke=\"#654321\" stroke-width=\"1.5\"")); q++)
        whiskers++;
    assert_int_equal(whiskers, 3); /* two points with both ends finite, and the legend's */
    assert_non_null(strstr(buf, ">recommended P = 2</text>"));
    assert_non_null(strstr(buf, "stroke-dasharray=\"2 3\""));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_err_one_line),
        cmocka_unit_test(test_plot_points_bars_mark),
        cmocka_unit_test(test_plot_long_title),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_percentiles),
        cmocka_unit_test(test_outfile_commit_and_abort),
        cmocka_unit_test(test_outfile_disk_full),
        cmocka_unit_test(test_outfile_special_paths),
        cmocka_unit_test(test_count_list),
        cmocka_unit_test(test_table_formats),
        cmocka_unit_test(test_minheap_orders_and_grows),
        cmocka_unit_test(test_bar_chart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
