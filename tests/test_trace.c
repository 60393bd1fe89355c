/* test_trace.c -- trace/: the writer and the strict reader round-trip, every
 * kind of malformed line is refused with its line number, the writer refuses
 * what the reader would refuse, and the built-in recorder records several
 * threads (created and exiting mid-recording) without losing or reordering
 * events, and does nothing while off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/trace.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gcs-test-trace-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* Parses text as a trace; returns the trace or NULL with err set. */
static gcs_trace *parse(const char *text, gcs_err *err)
{
    FILE *fp = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(fp);
    gcs_trace *t = gcs_trace_read_stream(fp, "t", err);
    fclose(fp);
    return t;
}

static void test_state_names(void **state)
{
    (void)state;
    for (int s = 0; s < GCS_TRACE_STATE_COUNT; s++)
        assert_int_equal(gcs_trace_state_parse(gcs_trace_state_name((gcs_trace_state)s)), s);
    assert_string_equal(gcs_trace_state_name(GCS_TRACE_GC_STOPPED), "gc-stopped");
    assert_string_equal(gcs_trace_state_name(GCS_TRACE_BLOCKED_BARRIER), "blocked-barrier");
    assert_string_equal(gcs_trace_state_name(GCS_TRACE_STATE_COUNT), "?");
    assert_int_equal(gcs_trace_state_parse("sleeping"), -1);
}

static void test_roundtrip(void **state)
{
    (void)state;
    char path[300];
    path_of(path, sizeof path, "rt.trace");
    gcs_err err = {{0}};
    gcs_trace_writer *w = gcs_trace_writer_open(path, "sched", "prog --arg \"x\"\nline2\\", &err);
    assert_non_null(w);
    assert_int_equal(gcs_trace_writer_thread(w, 100, "main thread\t1", "main", 1000), 0);
    assert_int_equal(gcs_trace_writer_thread(w, -7, "w", "gc", 1500), 0);
    /* interleaved, each thread in its own time order */
    assert_int_equal(gcs_trace_writer_event(w, 2000, -7, GCS_TRACE_GC_MARK), 0);
    assert_int_equal(gcs_trace_writer_event(w, 1200, 100, GCS_TRACE_BLOCKED_LOCK), 0);
    assert_int_equal(gcs_trace_writer_event(w, 2000, -7, GCS_TRACE_GC_SEARCH), 0);
    assert_int_equal(gcs_trace_writer_event(w, 3000, -7, GCS_TRACE_EXITED), 0);
    assert_int_equal(gcs_trace_writer_event(w, 2500, 100, GCS_TRACE_RUNNING), 0);
    assert_int_equal(gcs_trace_writer_close(w, 4000, &err), 0);

    gcs_trace *t = gcs_trace_read(path, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(t->version, GCS_TRACE_FORMAT_VERSION);
    assert_string_equal(t->source, "sched");
    assert_string_equal(t->command, "prog --arg \"x\"\nline2\\");
    assert_string_equal(t->clock, "monotonic");
    assert_int_equal(t->start_ns, 1000);
    assert_int_equal(t->end_ns, 4000);
    assert_int_equal(t->nthreads, 2);
    assert_int_equal(t->threads[0].tid, 100);
    assert_string_equal(t->threads[0].name, "main thread\t1");
    assert_string_equal(t->threads[0].cls, "main");
    assert_int_equal(t->threads[0].exited, 0);
    assert_int_equal(t->threads[0].exit_ns, 4000);
    assert_int_equal(t->threads[0].nevents, 2);
    assert_int_equal(t->threads[1].tid, -7);
    assert_int_equal(t->threads[1].exited, 1);
    assert_int_equal(t->threads[1].exit_ns, 3000);
    assert_int_equal(t->threads[1].nevents, 3);
    const gcs_trace_event *e0 = &t->events[t->threads[0].first_event];
    assert_int_equal(e0[0].t_ns, 1200);
    assert_int_equal(e0[0].state, GCS_TRACE_BLOCKED_LOCK);
    assert_int_equal(e0[1].state, GCS_TRACE_RUNNING);
    assert_int_equal(e0[1].thread, 0);
    const gcs_trace_event *e1 = &t->events[t->threads[1].first_event];
    assert_int_equal(e1[0].state, GCS_TRACE_GC_MARK);
    assert_int_equal(e1[1].state, GCS_TRACE_GC_SEARCH);
    assert_int_equal(e1[2].state, GCS_TRACE_EXITED);
    assert_int_equal(e1[2].thread, 1);
    gcs_trace_free(t);
}

/* Each bad input is refused by the writer (sticky error, no file left). */
static void test_writer_refuses(void **state)
{
    (void)state;
    char path[300];
    path_of(path, sizeof path, "bad.trace");
    struct {
        int kind; /* what to do wrong */
        const char *want;
    } cases[] = {
        {0, "not declared"},   {1, "before its previous"}, {2, "after it exited"},
        {3, "declared twice"}, {4, "class must be"},       {5, "before the last event"},
        {6, "invalid state"},  {7, "before its previous"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gcs_err err = {{0}};
        gcs_trace_writer *w = gcs_trace_writer_open(path, "builtin", NULL, &err);
        assert_non_null(w);
        assert_int_equal(gcs_trace_writer_thread(w, 1, "a", "mutator", 100), 0);
        int rc = 0;
        uint64_t end = 1000;
        switch (cases[i].kind) {
        case 0: rc = gcs_trace_writer_event(w, 200, 2, GCS_TRACE_RUNNING); break;
        case 1:
            gcs_trace_writer_event(w, 300, 1, GCS_TRACE_BLOCKED_LOCK);
            rc = gcs_trace_writer_event(w, 299, 1, GCS_TRACE_RUNNING);
            break;
        case 2:
            gcs_trace_writer_event(w, 300, 1, GCS_TRACE_EXITED);
            rc = gcs_trace_writer_event(w, 400, 1, GCS_TRACE_RUNNING);
            break;
        case 3: rc = gcs_trace_writer_thread(w, 1, "b", "gc", 100); break;
        case 4: rc = gcs_trace_writer_thread(w, 2, "b", "two words", 100); break;
        case 5:
            gcs_trace_writer_event(w, 300, 1, GCS_TRACE_BLOCKED_LOCK);
            end = 200;
            rc = -1;
            break;
        case 6: rc = gcs_trace_writer_event(w, 300, 1, (gcs_trace_state)99); break;
        case 7: rc = gcs_trace_writer_event(w, 50, 1, GCS_TRACE_RUNNING); break;
        }
        assert_int_equal(rc, -1);
        /* later calls fail too, and close reports the first error */
        assert_int_equal(gcs_trace_writer_event(w, 900, 1, GCS_TRACE_RUNNING), cases[i].kind == 5 ? 0 : -1);
        assert_int_equal(gcs_trace_writer_close(w, end, &err), -1);
        if (!strstr(err.msg, cases[i].want))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
        assert_int_equal(access(path, F_OK), -1);
    }
    gcs_err err = {{0}};
    gcs_trace_writer *w = gcs_trace_writer_open(path, "builtin", NULL, &err);
    assert_non_null(w);
    gcs_trace_writer_abort(w);
    assert_int_equal(access(path, F_OK), -1);
    assert_null(gcs_trace_writer_open("/nonexistent-dir/x.trace", "builtin", NULL, &err));
    assert_non_null(strstr(err.msg, "cannot write"));
}

#define HDR "gcscale-trace 1\nsource builtin\nclock monotonic\n"

static void test_reader_refuses(void **state)
{
    (void)state;
    struct {
        const char *text, *want;
    } cases[] = {
        {"", "empty file"},
        {"hello\n", "t:1: not a gcscale trace"},
        {"gcscale-trace 0\n", "t:1: trace format version 0 is not supported"},
        {"gcscale-trace 1\nsource builtin\nthread 1 0 main m\n", "t:3: header incomplete"},
        {HDR "clock monotonic\n", "t:4: \"clock\" given twice"},
        {"gcscale-trace 1\nsource builtin\nclock realtime\n", "t:3: clock \"realtime\" is not supported"},
        {HDR "bogus 1\n", "t:4: unknown header line"},
        {HDR "thread 1 0 main m\nsource x\n", "t:5: unknown line \"source\""},
        {HDR "thread 1 0 main m\nend 10\n", ""}, /* valid */
        {HDR "thread 1 0 main m\n", "t:4: trace is truncated"},
        {HDR "thread 1 0 main m\ne 5 1 running\n", "t:5: trace is truncated"},
        {HDR "thread x 0 main m\nend 1\n", "t:4: thread id \"x\" is not an integer"},
        {HDR "thread 1 -5 main m\nend 1\n", "t:4: start time \"-5\" is not a non-negative integer"},
        {HDR "thread 1 5 main\nend 9\n", "t:4: thread line has no name"},
        {HDR "thread 1 5 ma!n m\nend 9\n", "t:4: thread class \"ma!n\""},
        {HDR "thread 1 5 main m\nthread 1 6 gc g\nend 9\n", "t:5: thread 1 declared twice"},
        {HDR "thread 1 5 main m\ne 6 2 running\nend 9\n", "t:5: event for thread 2, which was not declared"},
        {HDR "thread 1 5 main m\ne 6 1 snoozing\nend 9\n", "t:5: unknown state \"snoozing\""},
        /* "preempted" came with version 2: a version-1 file cannot hold it */
        {HDR "thread 1 5 main m\ne 6 1 preempted\nend 9\n", "t:5: unknown state \"preempted\" (\"preempted\" is a state of format version 2)"},
        {"gcscale-trace 2\nsource sched\nclock monotonic\nthread 1 5 main m\ne 6 1 preempted\nend 9\n", ""},
        {"gcscale-trace 3\nsource sched\nclock monotonic\nend 9\n", "t:1: trace format version 3 is not supported"},
        {HDR "thread 1 5 main m\ne 6 1\nend 9\n", "t:5: event has no state"},
        {HDR "thread 1 5 main m\ne 6 1 running x\nend 9\n", "t:5: unexpected text after the event"},
        {HDR "thread 1 5 main m\ne 4 1 running\nend 9\n", "t:5: thread 1: event at 4 ns is before"},
        {HDR "thread 1 5 main m\ne 7 1 gc-mark\ne 6 1 running\nend 9\n", "t:6: thread 1: event at 6"},
        {HDR "thread 1 5 main m\ne 7 1 exited\ne 8 1 running\nend 9\n", "t:6: event for thread 1 after it exited"},
        {HDR "thread 1 5 main m\ne 7 1 running\nend 6\n", "t:6: end time 6 ns is before"},
        {HDR "thread 1 5 main m\nend 9\ne 10 1 running\n", "t:6: text after the end line"},
        {HDR "thread 1 5 main m\nend 9x\n", "t:5: end time \"9x\""},
        {HDR "thread 1 5 main bad\\q\nend 9\n", "t:4: bad escape sequence"},
        {HDR "e 99999999999999999999999 1 running\nend 9\n", "t:4: event time"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gcs_err err = {{0}};
        gcs_trace *t = parse(cases[i].text, &err);
        if (!cases[i].want[0]) {
            if (!t)
                fail_msg("case %zu refused: %s", i, err.msg);
            gcs_trace_free(t);
            continue;
        }
        if (t)
            fail_msg("case %zu accepted, wanted \"%s\"", i, cases[i].want);
        if (!strstr(err.msg, cases[i].want))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
    }
    gcs_err err;
    assert_null(gcs_trace_read("/nonexistent/x.trace", &err));
    assert_non_null(strstr(err.msg, "/nonexistent/x.trace: cannot read"));
}

static void test_reader_comments_and_crlf(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_trace *t = parse("gcscale-trace 1\r\n# a comment\r\nsource sched\r\n\r\nclock monotonic\r\n"
                         "thread 9 10 gc worker 0\r\n# another\r\ne 12 9 gc-idle\r\nend 20\r\n",
                         &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_string_equal(t->threads[0].name, "worker 0");
    assert_null(t->command);
    assert_int_equal(t->nevents, 1);
    gcs_trace_free(t);
}

/* ---- recorder ---- */

static void test_recorder_off_is_noop(void **state)
{
    (void)state;
    assert_false(gcs_trace_recording());
    gcs_trace_thread_begin("x", "mutator");
    gcs_trace_set_state(GCS_TRACE_GC_MARK);
    gcs_trace_thread_end();
    gcs_err err;
    assert_int_equal(gcs_trace_recorder_stop(&err), -1);
    assert_non_null(strstr(err.msg, "no recording is active"));
}

#define WORKERS 3
#define ROUNDS 2000

static void *worker(void *arg)
{
    long i = (long)arg;
    char name[32];
    snprintf(name, sizeof name, "worker-%ld", i);
    gcs_trace_thread_begin(name, i == 0 ? "gc" : "mutator");
    for (int r = 0; r < ROUNDS; r++) {
        gcs_trace_set_state(GCS_TRACE_BLOCKED_LOCK);
        gcs_trace_set_state(GCS_TRACE_BLOCKED_LOCK); /* repeated: not recorded */
        gcs_trace_set_state(GCS_TRACE_RUNNING);
    }
    gcs_trace_thread_end();
    gcs_trace_set_state(GCS_TRACE_RUNNING); /* after exit: ignored */
    return NULL;
}

static void test_recorder_threads(void **state)
{
    (void)state;
    char path[300];
    path_of(path, sizeof path, "rec.trace");
    gcs_err err = {{0}};
    gcs_trace_recorder_set_command("unit test");
    gcs_trace_thread_begin("tester", "main"); /* remembered until the recording starts */
    assert_int_equal(gcs_trace_recorder_start(path, &err), 0);
    assert_true(gcs_trace_recording());
    assert_int_equal(gcs_trace_recorder_start(path, &err), -1);
    assert_non_null(strstr(err.msg, "already active"));
    pthread_t th[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)i), 0);
    gcs_trace_set_state(GCS_TRACE_BLOCKED_BARRIER);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    gcs_trace_set_state(GCS_TRACE_RUNNING);
    assert_int_equal(gcs_trace_recorder_stop(&err), 0);
    assert_false(gcs_trace_recording());
    gcs_trace_recorder_set_command(NULL);

    gcs_trace *t = gcs_trace_read(path, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_string_equal(t->source, "builtin");
    assert_string_equal(t->command, "unit test");
    assert_int_equal(t->nthreads, WORKERS + 1);
    assert_string_equal(t->threads[0].cls, "main"); /* the starter comes first */
    assert_string_equal(t->threads[0].name, "tester");
    assert_int_equal(t->threads[0].nevents, 2);
    assert_int_equal(t->threads[0].exited, 0);
    int seen[WORKERS] = {0};
    for (size_t k = 1; k < t->nthreads; k++) {
        const gcs_trace_thread *tt = &t->threads[k];
        int i = atoi(tt->name + strlen("worker-"));
        assert_true(i >= 0 && i < WORKERS);
        seen[i]++;
        assert_string_equal(tt->cls, i == 0 ? "gc" : "mutator");
        assert_int_equal(tt->nevents, 2 * ROUNDS + 1);
        assert_true(tt->exited);
        const gcs_trace_event *e = &t->events[tt->first_event];
        for (int r = 0; r < ROUNDS; r++) {
            assert_int_equal(e[2 * r].state, GCS_TRACE_BLOCKED_LOCK);
            assert_int_equal(e[2 * r + 1].state, GCS_TRACE_RUNNING);
        }
        assert_int_equal(e[2 * ROUNDS].state, GCS_TRACE_EXITED);
        assert_true(tt->start_ns >= t->threads[0].start_ns);
        assert_true(e[0].t_ns >= tt->start_ns);
        assert_true(tt->exit_ns <= t->end_ns);
    }
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(seen[i], 1);
    gcs_trace_free(t);

    /* A second recording starts afresh: threads from the first are gone,
     * the calling thread keeps its name. */
    assert_int_equal(gcs_trace_recorder_start(path, &err), 0);
    gcs_trace_set_state(GCS_TRACE_BLOCKED_OTHER);
    assert_int_equal(gcs_trace_recorder_stop(&err), 0);
    t = gcs_trace_read(path, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(t->nthreads, 1);
    assert_null(t->command);
    assert_int_equal(t->threads[0].nevents, 1);
    gcs_trace_free(t);
}

/* Threads that keep changing state while the recording stops: the stop must
 * wait for them and write a valid file (run under TSan too). */
static volatile int stop_spinners;

static void *spinner(void *arg)
{
    (void)arg;
    gcs_trace_thread_begin("spinner", "mutator");
    while (!__atomic_load_n(&stop_spinners, __ATOMIC_RELAXED)) {
        gcs_trace_set_state(GCS_TRACE_GC_MARK);
        gcs_trace_set_state(GCS_TRACE_GC_SEARCH);
    }
    return NULL;
}

static void test_recorder_stop_under_load(void **state)
{
    (void)state;
    char path[300];
    path_of(path, sizeof path, "load.trace");
    pthread_t th[2];
    __atomic_store_n(&stop_spinners, 0, __ATOMIC_RELAXED);
    for (long i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, spinner, NULL), 0);
    for (int round = 0; round < 5; round++) {
        gcs_err err = {{0}};
        assert_int_equal(gcs_trace_recorder_start(path, &err), 0);
        usleep(2000);
        assert_int_equal(gcs_trace_recorder_stop(&err), 0);
        gcs_trace *t = gcs_trace_read(path, &err);
        if (!t)
            fail_msg("round %d: %s", round, err.msg);
        assert_true(t->nthreads >= 1 && t->nthreads <= 3);
        gcs_trace_free(t);
    }
    __atomic_store_n(&stop_spinners, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_names),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_writer_refuses),
        cmocka_unit_test(test_reader_refuses),
        cmocka_unit_test(test_reader_comments_and_crlf),
        cmocka_unit_test(test_recorder_off_is_noop),
        cmocka_unit_test(test_recorder_threads),
        cmocka_unit_test(test_recorder_stop_under_load),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
