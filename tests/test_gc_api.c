/* test_gc_api.c -- gc/: the collector's API called while a collection runs.
 *
 * Settings changed by another thread during collections (the mark and the
 * sweep must agree on one mark mode per collection); calls made from an
 * on_collection callback and from a thread policy's choose(), where the
 * collecting thread holds gc_lock (reads and settings must work, the rest
 * must fail, and nothing may hang: those tests run under alarm(), so a
 * regression that deadlocks kills the test instead of hanging it).  Listed in
 * tests/tsan-tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcscale/gc.h"
#include "gcscale/snapshot.h"

/* ---- mark mode and instrumentation changed during collections ---------------- */

static atomic_int toggler_stop;

/* Not attached: it touches no GC object, so gc.h lets it call the setters at
 * any time.  Every mode and both instrumentation settings, as fast as it can:
 * before the fix, a change that landed between the mark and the sweep made
 * the sweep read the mark table the mark had not written, and free the whole
 * live list. */
static void *toggler(void *arg)
{
    (void)arg;
    unsigned k = 0;
    while (!atomic_load(&toggler_stop)) {
        gcs_gc_set_mark_mode((gcs_gc_mark_mode)(k % 3));
        gcs_gc_set_instrumentation((k / 3) & 1);
        k++;
    }
    return NULL;
}

#define RACE_NODES 20000

static void test_mark_mode_changed_during_collections(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.threads = 2;
    o.heap_limit = 64u << 20;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *list = NULL;
    assert_int_equal(gcs_gc_push_root(&list), 0);
    for (int i = 0; i < RACE_NODES; i++) {
        void *n = gcs_gc_alloc(16, 1);
        assert_non_null(n);
        ((void **)n)[0] = list;
        ((uint64_t *)n)[1] = (uint64_t)i;
        list = n;
    }
    atomic_store(&toggler_stop, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, toggler, NULL), 0);
    int bad = 0;
    for (int round = 0; round < 300 && !bad; round++) {
        assert_int_equal(gcs_gc_collect(), 0);
        gcs_gc_stats st;
        assert_int_equal(gcs_gc_last_stats(&st), 0);
        uint64_t k = 0;
        for (void **p = list; p; p = p[0], k++)
            if (((uint64_t *)p)[-1] == 0 || ((uint64_t *)p)[1] != (uint64_t)(RACE_NODES - 1 - k)) {
                fprintf(stderr, "round %d: reachable node %llu was freed (collection marked in %s)\n", round,
                        (unsigned long long)k, gcs_gc_mark_mode_name(st.mark_mode));
                bad = 1;
                break;
            }
        if (!bad && st.live_objects != RACE_NODES) {
            fprintf(stderr, "round %d: live_objects %llu, not %d (%s)\n", round,
                    (unsigned long long)st.live_objects, RACE_NODES, gcs_gc_mark_mode_name(st.mark_mode));
            bad = 1;
        }
    }
    atomic_store(&toggler_stop, 1);
    pthread_join(t, NULL);
    assert_false(bad);
    /* No stale marks in either table: make half the list garbage, and every
     * mode must then free exactly that half. */
    void **p = list;
    for (int k = 0; k < RACE_NODES / 2 - 1; k++)
        p = p[0];
    p[0] = NULL;
    for (int m = 0; m < 3; m++) {
        gcs_gc_set_mark_mode((gcs_gc_mark_mode)m);
        assert_int_equal(gcs_gc_collect(), 0);
        gcs_gc_stats st;
        assert_int_equal(gcs_gc_last_stats(&st), 0);
        assert_int_equal(st.mark_mode, m);
        assert_int_equal(st.live_objects, RACE_NODES / 2);
        uint64_t objects;
        gcs_gc_census(&objects, NULL);
        assert_int_equal(objects, RACE_NODES / 2);
    }
    gcs_gc_shutdown();
}

/* ---- calls from an on_collection callback -------------------------------------- */

/* What the callback saw.  It records and never asserts: a cmocka failure
 * would longjmp out of the collector with its locks held. */
typedef struct seen {
    int calls;
    uint64_t index, collections, live, census;
    int last_stats_rc;
    uint64_t last_stats_index, last_stats_live;
    int threads, max_threads;
    int set_threads_rc, set_policy_rc, set_snapshot_rc, snapshot_next_rc;
    int alloc_null, alloc_data_null, alloc_error_says_why;
    int collect_rc, collect_snapshot_rc, attach_rc, build_rc;
    char collect_snapshot_err[600], attach_err[600];
    int remark_rc;
    uint64_t remark_index, remark_live;
    int still_initialized, still_attached;
    int reached_end;
} seen;

static seen cb_seen;
static char next_snapshot[256];

static void calling_callback(const gcs_gc_stats *st, void *arg)
{
    (void)arg;
    seen *r = &cb_seen;
    if (r->calls++ > 0)
        return; /* the first collection only; the second checks the settings */
    r->index = st->index;
    r->live = st->live_objects;
    /* reads */
    r->collections = gcs_gc_collections();
    gcs_gc_stats last;
    r->last_stats_rc = gcs_gc_last_stats(&last);
    r->last_stats_index = last.index;
    r->last_stats_live = last.live_objects;
    r->threads = gcs_gc_threads();
    r->max_threads = gcs_gc_max_threads();
    gcs_gc_census(&r->census, NULL);
    gcs_gc_stats re;
    r->remark_rc = gcs_gc_remark(1, &re);
    r->remark_index = re.index;
    r->remark_live = re.live_objects;
    /* settings: for the next collection */
    r->set_threads_rc = gcs_gc_set_threads(1);
    gcs_gc_set_mark_mode(GCS_GC_MARK_ATOMIC_BITS);
    gcs_gc_set_instrumentation(0);
    gcs_gc_set_compute_span(1, 1, 1);
    r->set_policy_rc = gcs_gc_set_thread_policy_active(1); /* -1: no policy, but no hang */
    r->set_snapshot_rc = gcs_gc_set_snapshot(NULL, 0);
    r->snapshot_next_rc = gcs_gc_snapshot_next(next_snapshot);
    /* refused */
    r->alloc_null = gcs_gc_alloc(16, 1) == NULL;
    r->alloc_error_says_why = strstr(gcs_gc_last_error(), "during a collection") != NULL;
    r->alloc_data_null = gcs_gc_alloc_data(16) == NULL;
    r->collect_rc = gcs_gc_collect();
    gcs_err err = {{0}};
    r->collect_snapshot_rc = gcs_gc_collect_snapshot(next_snapshot, &err);
    snprintf(r->collect_snapshot_err, sizeof r->collect_snapshot_err, "%s", err.msg);
    err.msg[0] = 0;
    r->attach_rc = gcs_gc_attach(&err);
    snprintf(r->attach_err, sizeof r->attach_err, "%s", err.msg);
    gcs_gc_snapshot_heap heap;
    r->build_rc = gcs_gc_build_snapshot(NULL, &heap, &err);
    gcs_gc_safepoint(); /* a stop is requested (by this thread): must not park */
    gcs_gc_detach();    /* refused: nothing happens */
    gcs_gc_shutdown();  /* refused: nothing happens */
    r->still_initialized = gcs_gc_is_initialized();
    r->reached_end = 1;
}

static void *list_of(int n)
{
    void *list = NULL;
    gcs_gc_push_root(&list);
    for (int i = 0; i < n; i++) {
        void *node = gcs_gc_alloc(16, 1);
        assert_non_null(node);
        ((void **)node)[0] = list;
        list = node;
    }
    gcs_gc_pop_roots(1);
    return list;
}

/* collector_attached: 1, the thread that collects is attached (the usual
 * case); 0, it is not (gcs_gc_attach from the callback then reaches the lock,
 * where it used to hang). */
static void callback_calls(int collector_attached)
{
    char dir[] = "/tmp/gcs-test-api-XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(next_snapshot, sizeof next_snapshot, "%s/next.gcsnap", dir);
    memset(&cb_seen, 0, sizeof cb_seen);
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.threads = 2;
    o.heap_limit = 16u << 20;
    o.on_collection = calling_callback;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    static void *root;
    root = list_of(1000);
    assert_int_equal(gcs_gc_add_root(&root), 0);
    if (!collector_attached)
        gcs_gc_detach();
    alarm(60); /* a call that deadlocks fails the test */
    assert_int_equal(gcs_gc_collect(), 0);
    alarm(0);
    seen *r = &cb_seen;
    assert_int_equal(r->calls, 1);
    assert_true(r->reached_end);
    assert_int_equal(r->index, 1);
    assert_int_equal(r->live, 1000);
    assert_int_equal(r->collections, r->index); /* this collection counts */
    assert_int_equal(r->last_stats_rc, 0);
    assert_int_equal(r->last_stats_index, r->index);
    assert_int_equal(r->last_stats_live, 1000);
    assert_int_equal(r->threads, 2);
    assert_int_equal(r->max_threads, 2);
    assert_int_equal(r->census, 1000);
    assert_int_equal(r->remark_rc, 0);
    assert_int_equal(r->remark_index, r->index);
    assert_int_equal(r->remark_live, 1000);
    assert_int_equal(r->set_threads_rc, 0);
    assert_int_equal(r->set_policy_rc, -1);
    assert_int_equal(r->set_snapshot_rc, 0);
    assert_int_equal(r->snapshot_next_rc, 0);
    assert_true(r->alloc_null);
    assert_true(r->alloc_error_says_why);
    assert_true(r->alloc_data_null);
    assert_int_equal(r->collect_rc, -1);
    assert_int_equal(r->collect_snapshot_rc, -1);
    assert_non_null(strstr(r->collect_snapshot_err, "during a collection"));
    assert_int_equal(r->attach_rc, -1);
    assert_non_null(strstr(r->attach_err, "during a collection"));
    assert_int_equal(r->build_rc, -1);
    assert_true(r->still_initialized);
    assert_int_equal(gcs_gc_collections(), 1);

    /* The settings made in the callback apply to the next collection. */
    if (!collector_attached) {
        gcs_err e2;
        assert_int_equal(gcs_gc_attach(&e2), 0);
    }
    void *more = gcs_gc_alloc(16, 0); /* still attached: allocation works */
    assert_non_null(more);
    alarm(60);
    assert_int_equal(gcs_gc_collect(), 0);
    alarm(0);
    gcs_gc_stats st;
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.index, 2);
    assert_int_equal(st.threads, 1);
    assert_int_equal(st.mark_mode, GCS_GC_MARK_ATOMIC_BITS);
    assert_int_equal(st.objects_marked, 0); /* instrumentation off */
    assert_int_equal(st.compute_span, 1);
    assert_int_equal(st.snapshot_status, 1);
    assert_string_equal(st.snapshot_path, next_snapshot);
    assert_int_equal(st.live_objects, 1000);
    struct stat sb;
    assert_int_equal(stat(next_snapshot, &sb), 0);
    gcs_gc_remove_root(&root);
    gcs_gc_shutdown();
    unlink(next_snapshot);
    rmdir(dir);
}

static void test_callback_calls(void **state)
{
    (void)state;
    callback_calls(1);
}

static void test_callback_calls_unattached_collector(void **state)
{
    (void)state;
    callback_calls(0);
}

/* ---- calls from a thread policy's choose() --------------------------------------- */

typedef struct choose_seen {
    int calls;
    uint64_t collections;
    int last_stats_rc, threads, alloc_null, collect_rc, set_threads_rc;
} choose_seen;

static choose_seen ch_seen;

static int calling_choose(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out)
{
    (void)state;
    (void)max_threads;
    out->note = "test";
    choose_seen *r = &ch_seen;
    if (r->calls++ == 1) { /* the second collection: prev is the first */
        r->collections = gcs_gc_collections();
        gcs_gc_stats last;
        r->last_stats_rc = gcs_gc_last_stats(&last);
        r->threads = gcs_gc_threads();
        r->alloc_null = gcs_gc_alloc(16, 1) == NULL;
        r->collect_rc = gcs_gc_collect();
        r->set_threads_rc = gcs_gc_set_threads(1);
        (void)prev;
    }
    return 2;
}

static void test_choose_calls(void **state)
{
    (void)state;
    memset(&ch_seen, 0, sizeof ch_seen);
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.threads = 2;
    o.heap_limit = 16u << 20;
    o.thread_policy.name = "calls";
    o.thread_policy.choose = calling_choose;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    alarm(60);
    assert_int_equal(gcs_gc_collect(), 0);
    assert_int_equal(gcs_gc_collect(), 0);
    alarm(0);
    choose_seen *r = &ch_seen;
    assert_int_equal(r->calls, 2);
    assert_int_equal(r->collections, 1); /* the one about to run is not counted yet */
    assert_int_equal(r->last_stats_rc, 0);
    assert_int_equal(r->threads, 2);
    assert_true(r->alloc_null);
    assert_int_equal(r->collect_rc, -1);
    assert_int_equal(r->set_threads_rc, 0);
    gcs_gc_stats st;
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.threads, 2); /* the policy's choice, made after the setter */
    gcs_gc_shutdown();
}

/* ---- concurrent gcs_gc_collect_snapshot calls --------------------------------- */

#define SNAP_CALLS 200

typedef struct snapper {
    char path[256];
    int calls, failed_rc, missing, unreadable;
    char first_problem[600];
} snapper;

static atomic_int next_stop;

/* Attached; each call must leave its own file, readable, whatever the other
 * threads ask for meanwhile.  Before the fix, a request made by the other
 * thread before the collection replaced this one, and the call returned 0
 * with no file (hundreds of calls in 2000). */
static void *snapping(void *arg)
{
    snapper *me = arg;
    gcs_err err;
    if (gcs_gc_attach(&err) < 0) {
        me->failed_rc = -1;
        return NULL;
    }
    for (int i = 0; i < SNAP_CALLS; i++) {
        unlink(me->path);
        int rc = gcs_gc_collect_snapshot(me->path, &err);
        me->calls++;
        if (rc != 0) {
            if (!me->failed_rc++)
                snprintf(me->first_problem, sizeof me->first_problem, "call %d: %s", i, err.msg);
            continue;
        }
        if (access(me->path, F_OK) != 0) {
            if (!me->missing++)
                snprintf(me->first_problem, sizeof me->first_problem, "call %d returned 0, no file", i);
            continue;
        }
        gcs_snapshot *g = gcs_snapshot_read(me->path, &err);
        if (!g) {
            if (!me->unreadable++)
                snprintf(me->first_problem, sizeof me->first_problem, "call %d: %s", i, err.msg);
            continue;
        }
        gcs_snapshot_free(g);
        gcs_gc_safepoint();
    }
    gcs_gc_detach();
    return NULL;
}

/* Not attached: keeps replacing the gcs_gc_snapshot_next request, which
 * must never take the place of a gcs_gc_collect_snapshot request. */
static void *requesting_next(void *arg)
{
    const char *path = arg;
    while (!atomic_load(&next_stop)) {
        gcs_gc_snapshot_next(path);
        sched_yield();
    }
    return NULL;
}

static void test_collect_snapshot_concurrent(void **state)
{
    (void)state;
    char dir[] = "/tmp/gcs-test-api-XXXXXX";
    assert_non_null(mkdtemp(dir));
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.threads = 2;
    o.heap_limit = 8u << 20;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    static void *root;
    root = list_of(500);
    assert_int_equal(gcs_gc_add_root(&root), 0);
    gcs_gc_detach(); /* this thread only waits */
    snapper sn[2];
    memset(sn, 0, sizeof sn);
    pthread_t t[2], tn;
    char next_path[300];
    snprintf(next_path, sizeof next_path, "%s/next.gcsnap", dir);
    atomic_store(&next_stop, 0);
    assert_int_equal(pthread_create(&tn, NULL, requesting_next, next_path), 0);
    for (int i = 0; i < 2; i++) {
        snprintf(sn[i].path, sizeof sn[i].path, "%s/snap-%c.gcsnap", dir, 'A' + i);
        assert_int_equal(pthread_create(&t[i], NULL, snapping, &sn[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    atomic_store(&next_stop, 1);
    pthread_join(tn, NULL);
    for (int i = 0; i < 2; i++) {
        if (sn[i].failed_rc || sn[i].missing || sn[i].unreadable)
            fprintf(stderr, "thread %c: %d calls, %d failed, %d returned 0 without a file, %d unreadable; "
                    "first: %s\n", 'A' + i, sn[i].calls, sn[i].failed_rc, sn[i].missing, sn[i].unreadable,
                    sn[i].first_problem);
        assert_int_equal(sn[i].calls, SNAP_CALLS);
        assert_int_equal(sn[i].failed_rc, 0);
        assert_int_equal(sn[i].missing, 0);
        assert_int_equal(sn[i].unreadable, 0);
        unlink(sn[i].path);
    }
    assert_int_equal(gcs_gc_attach(&err), 0);
    gcs_gc_remove_root(&root);
    gcs_gc_shutdown();
    unlink(next_path);
    assert_int_equal(rmdir(dir), 0);
}

/* A failed case must not leave its collector to the next one. */
static int teardown(void **state)
{
    (void)state;
    alarm(0);
    if (gcs_gc_is_initialized())
        gcs_gc_shutdown();
    return 0;
}

/* release_after: the pages a sweep empties give their memory back at the
 * sweep of the release_after-th collection after (0: at once), if still
 * free then; pages taken again before that are never given back. */
#define RELEASE_NODES 40000

static void *release_list(void)
{
    void *list = NULL;
    for (int i = 0; i < RELEASE_NODES; i++) {
        void *n = gcs_gc_alloc(16, 1);
        assert_non_null(n);
        ((void **)n)[0] = list;
        list = n;
    }
    return list;
}

static gcs_gc_stats release_collect(void)
{
    gcs_gc_stats st;
    assert_int_equal(gcs_gc_collect(), 0);
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    return st;
}

static void test_release_after(void **state)
{
    (void)state;
    for (int after = 0; after <= 2; after += 2) {
        gcs_gc_options o;
        gcs_gc_options_default(&o);
        assert_int_equal(o.release_after, GCS_GC_RELEASE_AFTER_DEFAULT);
        o.threads = 2;
        o.heap_limit = 16u << 20;
        o.release_after = after;
        gcs_err err;
        assert_int_equal(gcs_gc_init(&o, &err), 0);
        void *list = NULL;
        assert_int_equal(gcs_gc_push_root(&list), 0);
        list = release_list();
        gcs_gc_stats st = release_collect();
        assert_int_equal(st.live_objects, RELEASE_NODES);
        assert_int_equal(st.pages_freed, 0);
        list = NULL;
        st = release_collect(); /* empties the list's pages */
        uint64_t emptied = st.pages_freed;
        assert_true(emptied >= 8);
        assert_int_equal(st.pages_released, after == 0 ? emptied : 0);
        st = release_collect(); /* one collection later */
        assert_int_equal(st.pages_freed, 0);
        assert_int_equal(st.pages_released, 0);
        st = release_collect(); /* two: released now, when after = 2 */
        assert_int_equal(st.pages_released, after == 2 ? emptied : 0);
        st = release_collect(); /* and only once */
        assert_int_equal(st.pages_released, 0);

        /* Emptied, then taken again within the wait: never given back. */
        list = release_list();
        list = NULL;
        st = release_collect();
        assert_int_equal(st.pages_freed, emptied);
        assert_int_equal(st.pages_released, after == 0 ? emptied : 0);
        list = release_list();
        uint64_t released = 0;
        for (int k = 0; k < 4; k++) {
            st = release_collect();
            released += st.pages_released;
        }
        assert_int_equal(st.live_objects, RELEASE_NODES);
        assert_int_equal(released, 0);
        gcs_gc_shutdown();
    }
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.release_after = -1;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), -1);
    assert_non_null(strstr(err.msg, "release_after"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_mark_mode_changed_during_collections, teardown),
        cmocka_unit_test_teardown(test_callback_calls, teardown),
        cmocka_unit_test_teardown(test_callback_calls_unattached_collector, teardown),
        cmocka_unit_test_teardown(test_choose_calls, teardown),
        cmocka_unit_test_teardown(test_collect_snapshot_concurrent, teardown),
        cmocka_unit_test_teardown(test_release_after, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
