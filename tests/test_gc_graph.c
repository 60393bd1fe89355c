/* test_gc_graph.c -- gc/: property tests of the collector on random graphs.
 *
 * The test keeps its own model of the heap (object sizes, pointer fields as
 * indices, roots), computes reachability itself, and checks after each
 * collection that every reachable object is intact (pointer fields and a data
 * pattern written at allocation) and that exactly the reachable objects
 * survive (census of allocated slots, the sweep's live count), for P = 1..8
 * GC workers and every mark mode.  Also: out-of-heap, heap reuse, budget
 * collections, T-infinity, the JSON log and NUMA placement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/gc.h"

typedef struct model {
    size_t n;
    void **obj;          /* address (valid while reachable) */
    uint32_t *nptrs, *words;
    int64_t **edge;      /* edge[i][k]: index or -1 */
    void **roots;        /* registered root slots */
    size_t nroots;
    unsigned char *reach;
} model;

static uint64_t pattern(size_t i, size_t k) { return (i * 0x9e3779b97f4a7c15ull) ^ (k * 0x632be59bd9b4e019ull) ^ 0x5bd1e995; }

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Mixed shapes: a chain, a random tree, DAG and cyclic edges, wide fan-out,
 * pointer arrays longer than a mark chunk (small and large objects), and
 * pointer-free data of many sizes (some large). */
static void model_build(model *m, size_t n, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->obj = calloc(n, sizeof *m->obj);
    m->nptrs = calloc(n, sizeof *m->nptrs);
    m->words = calloc(n, sizeof *m->words);
    m->edge = calloc(n, sizeof *m->edge);
    m->reach = calloc(n, 1);
    uint64_t s = seed | 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(&s) % 1000;
        uint32_t np, words;
        if (i == 1) { np = 5000; words = 5000; }         /* large pointer array */
        else if (i == 2) { np = 700; words = 710; }      /* small object, > chunk */
        else if (i == 3) { np = 0; words = 20000; }      /* large data */
        else if (r < 150) { np = 0; words = 1 + (uint32_t)(rnd(&s) % 40); }
        else if (r < 152) { np = 200 + (uint32_t)(rnd(&s) % 300); words = np + 2; }
        else if (r < 153) { np = 0; words = 1100 + (uint32_t)(rnd(&s) % 9000); }
        else { np = 1 + (uint32_t)(rnd(&s) % 4); words = np + 1 + (uint32_t)(rnd(&s) % 3); }
        m->nptrs[i] = np;
        m->words[i] = words;
        void *o = np ? gcs_gc_alloc(words * 8, np) : gcs_gc_alloc_data(words * 8);
        assert_non_null(o);
        assert_int_equal(gcs_gc_size(o), words * 8);
        assert_int_equal(gcs_gc_nptrs(o), np);
        for (uint32_t k = 0; k < np; k++)
            assert_null(((void **)o)[k]); /* pointer fields start NULL */
        for (uint32_t k = np; k < words; k++)
            ((uint64_t *)o)[k] = pattern(i, k);
        m->obj[i] = o;
        m->edge[i] = malloc((np ? np : 1) * sizeof(int64_t));
    }
    size_t chain = n / 10;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < m->nptrs[i]; k++) {
            int64_t t;
            uint64_t r = rnd(&s) % 100;
            if (i >= 10 && i < 10 + chain && k == 0)
                t = (int64_t)i + 1;                       /* a long list */
            else if (r < 30)
                t = -1;
            else if (r < 60 && i > 0)
                t = (int64_t)(rnd(&s) % i);               /* DAG / tree edge */
            else
                t = (int64_t)(rnd(&s) % n);               /* cycles */
            m->edge[i][k] = t;
            ((void **)m->obj[i])[k] = t < 0 ? NULL : m->obj[t];
        }
    }
    m->nroots = 8;
    m->roots = calloc(m->nroots, sizeof *m->roots);
    for (size_t r = 0; r < m->nroots; r++) {
        m->roots[r] = m->obj[r == 0 ? 10 : rnd(&s) % n];
        assert_int_equal(gcs_gc_add_root(&m->roots[r]), 0);
    }
}

static void model_free(model *m)
{
    for (size_t r = 0; r < m->nroots; r++)
        gcs_gc_remove_root(&m->roots[r]);
    for (size_t i = 0; i < m->n; i++)
        free(m->edge[i]);
    free(m->edge);
    free(m->obj);
    free(m->nptrs);
    free(m->words);
    free(m->reach);
    free(m->roots);
}

static void model_reach(model *m, uint64_t *objects, uint64_t *bytes)
{
    memset(m->reach, 0, m->n);
    size_t *stack = malloc(m->n * sizeof *stack), top = 0;
    for (size_t r = 0; r < m->nroots; r++) {
        if (!m->roots[r])
            continue;
        for (size_t i = 0; i < m->n; i++)
            if (m->obj[i] == m->roots[r] && !m->reach[i]) {
                m->reach[i] = 1;
                stack[top++] = i;
            }
    }
    while (top) {
        size_t i = stack[--top];
        for (uint32_t k = 0; k < m->nptrs[i]; k++) {
            int64_t t = m->edge[i][k];
            if (t >= 0 && !m->reach[t]) {
                m->reach[t] = 1;
                stack[top++] = (size_t)t;
            }
        }
    }
    free(stack);
    *objects = *bytes = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->reach[i]) {
            ++*objects;
            *bytes += 8ull * m->words[i];
        }
}

static void model_verify(model *m)
{
    for (size_t i = 0; i < m->n; i++) {
        if (!m->reach[i])
            continue;
        void *o = m->obj[i];
        assert_int_equal(gcs_gc_size(o), 8ull * m->words[i]);
        assert_int_equal(gcs_gc_nptrs(o), m->nptrs[i]);
        for (uint32_t k = 0; k < m->nptrs[i]; k++) {
            int64_t t = m->edge[i][k];
            assert_ptr_equal(((void **)o)[k], t < 0 ? NULL : m->obj[t]);
        }
        for (uint32_t k = m->nptrs[i]; k < m->words[i]; k++)
            assert_true(((uint64_t *)o)[k] == pattern(i, k));
    }
}

/* The mark's counters (gc/mark.c sums them per worker without counting
 * each field) against the model, when every object is scanned exactly once:
 * pointer fields of the reachable objects; mark tests, one per non-NULL field
 * and root; bytes, header and payload, except that a small pointer-free
 * object marked from an array's chunk counts its header only (the mark does
 * not read it), so those bytes lie between the two sums. */
static void model_check_counters(const model *m, const gcs_gc_stats *st)
{
    uint64_t pointers = 0, tests = 0, bytes_max = 0, bytes_min = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (!m->reach[i])
            continue;
        pointers += m->nptrs[i];
        for (uint32_t k = 0; k < m->nptrs[i]; k++)
            tests += m->edge[i][k] >= 0;
        uint64_t full = 8 + 8ull * m->words[i];
        bytes_max += full;
        bytes_min += m->nptrs[i] == 0 && full <= GCS_GC_SMALL_MAX ? 8 : full;
    }
    for (size_t r = 0; r < m->nroots; r++)
        tests += m->roots[r] != NULL;
    uint64_t got_pointers = 0, got_tests = 0, got_bytes = 0, got_objects = 0;
    for (int w = 0; w < st->threads; w++) {
        got_pointers += st->workers[w].pointers_scanned;
        got_tests += st->workers[w].edges_examined;
        got_bytes += st->workers[w].bytes_marked;
        got_objects += st->workers[w].objects_scanned;
    }
    assert_int_equal(got_objects, st->objects_marked);
    assert_int_equal(got_pointers, pointers);
    assert_int_equal(got_tests, tests);
    assert_int_equal(st->edges_examined, tests);
    assert_true(got_bytes >= bytes_min && got_bytes <= bytes_max);
}

static void collect_and_check(model *m)
{
    uint64_t want_objects, want_bytes, objects, bytes;
    model_reach(m, &want_objects, &want_bytes);
    assert_int_equal(gcs_gc_collect(), 0);
    gcs_gc_census(&objects, &bytes);
    assert_int_equal(objects, want_objects);
    assert_int_equal(bytes, want_bytes);
    gcs_gc_stats st;
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.live_objects, want_objects);
    assert_true(st.objects_marked >= want_objects);
    if (st.mark_mode != GCS_GC_MARK_RELAXED_BYTES) {
        assert_int_equal(st.objects_marked, want_objects); /* exactly once each */
        model_check_counters(m, &st);
    }
    uint64_t busy = 0, searches = 0;
    for (int w = 0; w < st.threads; w++) {
        busy += st.workers[w].busy_ns;
        searches += st.workers[w].steal_searches;
        /* a search that found work took 1 to STEAL_BATCH (16) entries */
        assert_true(st.workers[w].steal_searches <= st.workers[w].steals);
        assert_true(st.workers[w].steals <= 16 * st.workers[w].steal_searches);
    }
    assert_int_equal(busy, st.t1_ns);
    assert_int_equal(searches, st.steal_searches);
    if (st.threads == 1)
        assert_true(st.steal_searches == 0);
    model_verify(m);
}

static void run_graph(int threads, gcs_gc_mark_mode mode, size_t n, uint64_t seed)
{
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.threads = threads;
    o.mark_mode = mode;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    model m;
    model_build(&m, n, seed);
    uint64_t reach_objects, reach_bytes;
    model_reach(&m, &reach_objects, &reach_bytes);
    assert_true(reach_objects > n / 10 && reach_objects < n); /* both kinds exist */
    collect_and_check(&m);
    /* drop roots one by one, re-linking some edges on the way */
    uint64_t s = seed * 7 + 1;
    for (size_t r = 1; r < m.nroots; r += 2) {
        m.roots[r] = NULL;
        for (int k = 0; k < 50; k++) {
            size_t i = rnd(&s) % m.n;
            if (!m.reach[i] || m.nptrs[i] == 0)
                continue;
            uint32_t f = (uint32_t)(rnd(&s) % m.nptrs[i]);
            m.edge[i][f] = -1;
            ((void **)m.obj[i])[f] = NULL;
        }
        collect_and_check(&m);
        /* reuse: allocate garbage into the freed slots, then re-check */
        for (int k = 0; k < 2000; k++)
            assert_non_null(gcs_gc_alloc(8 * (1 + k % 30), k % 3));
        model_verify(&m);
    }
    model_free(&m);
    gcs_gc_shutdown();
}

static void test_graph_all_threads_all_modes(void **state)
{
    (void)state;
    for (int mode = 0; mode <= GCS_GC_MARK_ATOMIC_BITS; mode++)
        for (int p = 1; p <= 8; p++)
            run_graph(p, (gcs_gc_mark_mode)mode, 6000, 1000u * (unsigned)p + (unsigned)mode);
}

/* A shadow-stack root alone keeps a structure alive. */
static void test_shadow_stack_roots(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 8u << 20;
    o.threads = 2;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *a = gcs_gc_alloc(16, 1), *b = NULL;
    assert_int_equal(gcs_gc_push_root(&a), 0);
    assert_int_equal(gcs_gc_push_root(&b), 0);
    b = gcs_gc_alloc(8, 0);
    ((void **)a)[0] = gcs_gc_alloc(8, 0);
    gcs_gc_alloc(64, 0); /* garbage */
    gcs_gc_collect();
    uint64_t objects;
    gcs_gc_census(&objects, NULL);
    assert_int_equal(objects, 3);
    gcs_gc_pop_roots(1); /* b */
    gcs_gc_collect();
    gcs_gc_census(&objects, NULL);
    assert_int_equal(objects, 2);
    gcs_gc_pop_roots(1);
    gcs_gc_collect();
    gcs_gc_census(&objects, NULL);
    assert_int_equal(objects, 0);
    gcs_gc_stats st;
    gcs_gc_last_stats(&st);
    assert_int_equal(st.live_objects, 0);
    assert_int_equal(st.pages_in_use, 0);
    gcs_gc_shutdown();
}

static void test_out_of_heap(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 2u << 20;
    o.threads = 2;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *head = NULL;
    gcs_gc_add_root(&head);
    size_t n = 0;
    for (;;) {
        void *x = gcs_gc_alloc(56, 1);
        if (!x)
            break;
        ((void **)x)[0] = head;
        head = x;
        n++;
        assert_true(n < 1000000);
    }
    assert_non_null(strstr(gcs_gc_last_error(), "heap exhausted"));
    assert_true(n * 64 > (1u << 20)); /* most of the 2 MiB was usable */
    assert_null(gcs_gc_alloc(3u << 20, 0)); /* bigger than the heap */
    assert_non_null(strstr(gcs_gc_last_error(), "heap exhausted"));
    head = NULL; /* everything is garbage now: allocation works again */
    assert_non_null(gcs_gc_alloc(56, 1));
    assert_non_null(gcs_gc_alloc(1u << 20, 0));
    gcs_gc_remove_root(&head);
    gcs_gc_shutdown();
}

/* Pointer-free pages.  Objects with no pointer fields get pages of their
 * own, whose objects an array's elements mark without reading them.  In a
 * full heap a list of objects with pointers may take such a page's free
 * slots, and the page must then become a scanned page: here objects with a
 * pointer field land on a converted page, each holding the only reference to
 * a pointer-free child, and every child must survive the collections after
 * (the heap is then refilled with pointer-free garbage, which would
 * overwrite a child wrongly reclaimed). */
static void test_pointer_free_pages(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 2u << 20; /* 32 pages */
    o.threads = 2;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    enum { SLOTS = 20000, LEAVES = 6000, PAIRS = 400 };
    void **arr = gcs_gc_alloc(SLOTS * 8, SLOTS);
    assert_non_null(arr);
    void *root = arr;
    gcs_gc_add_root(&root);
    for (size_t i = 0; i < LEAVES; i++) {
        uint64_t *leaf = gcs_gc_alloc_data(16);
        assert_non_null(leaf);
        leaf[0] = pattern(i, 0);
        arr[i] = leaf;
    }
    for (size_t i = 1; i < LEAVES; i += 2)
        arr[i] = NULL;
    gcs_gc_collect(); /* half-empty pointer-free pages */
    gcs_gc_stats st;
    gcs_gc_last_stats(&st);
    assert_int_equal(st.live_objects, 1 + LEAVES / 2);
    assert_int_equal(st.objects_marked, 1 + LEAVES / 2);
    /* Take every free page with one-page data objects. */
    size_t big = 0;
    for (size_t i = LEAVES; i < SLOTS - PAIRS; i++) {
        void *x = gcs_gc_alloc_data(60000);
        if (!x)
            break;
        arr[i] = x;
        big++;
    }
    assert_true(big > 0 && big < SLOTS - PAIRS - LEAVES);
    /* Objects with a pointer field now find only pointer-free free slots. */
    for (size_t k = 0; k < PAIRS; k++) {
        void **parent = gcs_gc_alloc(16, 1);
        assert_non_null(parent);
        arr[SLOTS - 1 - k] = parent;
        uint64_t *child = gcs_gc_alloc_data(16);
        assert_non_null(child);
        child[0] = pattern(k, 1);
        parent[0] = child;
    }
    for (int round = 0; round < 3; round++) {
        gcs_gc_collect();
        for (int k = 0; k < 5000; k++)
            if (!gcs_gc_alloc_data(16))
                break;
        for (size_t k = 0; k < PAIRS; k++) {
            void **parent = arr[SLOTS - 1 - k];
            assert_int_equal(((uint64_t *)parent[0])[0], pattern(k, 1));
        }
        for (size_t i = 0; i < LEAVES; i += 2)
            assert_int_equal(((uint64_t *)arr[i])[0], pattern(i, 0));
    }
    gcs_gc_remove_root(&root);
    gcs_gc_shutdown();
}

/* Allocating the same amount again and again under a fixed limit never
 * runs out: sweep returns pages and slots, large spans included. */
static void test_heap_reuse(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 4u << 20;
    o.threads = 2;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *keep = gcs_gc_alloc(800, 100);
    gcs_gc_add_root(&keep);
    for (int round = 0; round < 40; round++) {
        for (int k = 0; k < 3000; k++) {
            void *x = gcs_gc_alloc(8u * (1 + (unsigned)(k % 60)), (size_t)(k % 2));
            assert_non_null(x);
            if (k % 30 == 0)
                ((void **)keep)[k / 30 % 100] = x;
        }
        assert_non_null(gcs_gc_alloc(200000, 0));
    }
    assert_true(gcs_gc_collections() > 3);
    gcs_gc_remove_root(&keep);
    gcs_gc_shutdown();
}

/* A collection does not fault in memory the heap's new pages brought: their
 * slices of the mark tables and their untouched tails are faulted in when a
 * mutator takes them (gc/heap.c, marks_fault_in), not by the workers of the
 * next collection all at once.  Without that, the collection after 4 MiB of
 * new pages (64 of them) took 64 mark-table faults and the tails' on top. */
static void test_new_pages_do_not_fault_in_collection(void **state)
{
    (void)state;
    /* Under a sanitizer its allocator and shadow memory fault too: the
     * collections still run (and are checked for races and leaks), the
     * fault bound is checked in the plain build. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    const int bound_faults = 0;
#else
    const int bound_faults = 1;
#endif
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.threads = 2;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *head = NULL;
    gcs_gc_add_root(&head);
    for (int round = 0; round < 3; round++) {
        /* 4 MiB more of a linked list, then a collection that keeps it all */
        for (int k = 0; k < (4 << 20) / 32; k++) {
            void **x = gcs_gc_alloc(24, 1);
            assert_non_null(x);
            x[0] = head;
            head = x;
        }
        /* stop the list at a page's middle: that page's tail is untouched */
        for (int k = 0; k < 1000; k++) {
            void **x = gcs_gc_alloc(40, 1);
            x[0] = head;
            head = x;
        }
        assert_int_equal(gcs_gc_collect(), 0);
        gcs_gc_stats st;
        gcs_gc_last_stats(&st);
        assert_true(st.live_objects > (uint64_t)(round + 1) * ((4 << 20) / 32));
        /* the first collection may grow the workers' stacks and deques */
        if (bound_faults && round > 0 && st.page_faults > 8)
            fail_msg("collection %d: %llu page faults (its heap grew by 64 pages)", round + 1,
                     (unsigned long long)st.page_faults);
    }
    gcs_gc_remove_root(&head);
    gcs_gc_shutdown();
}

static void test_budget_and_log(void **state)
{
    (void)state;
    char path[] = "/tmp/test_gc_log_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 64u << 20;
    o.threads = 2;
    o.alloc_budget = 1u << 20;
    o.log_path = path;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    for (int k = 0; k < 60000; k++) /* ~3.8 MiB of garbage */
        assert_non_null(gcs_gc_alloc(56, 0));
    uint64_t n = gcs_gc_collections();
    assert_true(n >= 2);
    gcs_gc_stats st;
    assert_int_equal(gcs_gc_last_stats(&st), 0);
    assert_int_equal(st.reason, GCS_GC_REASON_BUDGET);
    gcs_gc_shutdown();
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[1 << 14];
    uint64_t lines = 0;
    while (fgets(line, sizeof line, fp)) {
        json_error_t jerr;
        json_t *j = json_loads(line, 0, &jerr);
        assert_non_null(j);
        assert_true(json_is_integer(json_object_get(j, "mark_ns")));
        assert_string_equal(json_string_value(json_object_get(j, "reason")), "budget");
        assert_int_equal(json_array_size(json_object_get(j, "workers")), 2);
        json_decref(j);
        lines++;
    }
    fclose(fp);
    unlink(path);
    assert_int_equal(lines, n);
}

static void *tree(int depth)
{
    void *n = gcs_gc_alloc(16, 2);
    if (depth > 0) {
        gcs_gc_push_root(&n);
        void *l = tree(depth - 1);
        ((void **)n)[0] = l;
        void *r = tree(depth - 1);
        ((void **)n)[1] = r;
        gcs_gc_pop_roots(1);
    }
    return n;
}

static void test_span(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 16u << 20;
    o.threads = 2;
    o.compute_span = 1;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    void *root = NULL;
    gcs_gc_add_root(&root);
    /* a list of 1000 objects, one pointer each: w = 2, T-inf = 2000 */
    for (int i = 0; i < 1000; i++) {
        void *x = gcs_gc_alloc(8, 1);
        ((void **)x)[0] = root;
        root = x;
    }
    gcs_gc_collect();
    gcs_gc_stats st;
    gcs_gc_last_stats(&st);
    assert_true(fabs(st.span - 2000.0) < 1e-9);
    /* a complete binary tree of depth 10 (11 levels), w = 3: T-inf = 33;
     * the shortcut from the root to a deep node makes the path shorter */
    root = tree(10);
    gcs_gc_collect();
    gcs_gc_last_stats(&st);
    assert_true(fabs(st.span - 33.0) < 1e-9);
    /* with costs: w = 10 + 2 * 2 = 14 per node */
    gcs_gc_set_compute_span(1, 10, 2);
    gcs_gc_collect();
    gcs_gc_last_stats(&st);
    assert_true(fabs(st.span - 11 * 14.0) < 1e-9);
    gcs_gc_set_compute_span(0, 0, 0);
    gcs_gc_collect();
    gcs_gc_last_stats(&st);
    assert_true(isnan(st.span));
    gcs_gc_remove_root(&root);
    gcs_gc_shutdown();
}

static void test_numa_and_options(void **state)
{
    (void)state;
    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 4u << 20;
    o.threads = 3;
    o.max_threads = 4;
    o.numa_policy = GCS_GC_NUMA_NODE;
    o.numa_node = 0;
    o.pin_workers = 1;
    gcs_err err;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    assert_int_equal(gcs_gc_init(&o, &err), -1); /* only one collector */
    void *x = gcs_gc_alloc(24, 0), *big = gcs_gc_alloc(100000, 0);
    gcs_gc_collect();
    gcs_gc_stats st;
    gcs_gc_last_stats(&st);
    int node = gcs_gc_node_of(x);
    if (st.bind_failures == 0) {
        assert_int_equal(node, 0);
        assert_int_equal(gcs_gc_node_of(big), 0);
    } else {
        assert_int_equal(node, -1);
    }
    assert_int_equal(gcs_gc_node_of(&node), -1); /* not in the heap */
    assert_int_equal(gcs_gc_threads(), 3);
    assert_int_equal(gcs_gc_max_threads(), 4);
    assert_int_equal(gcs_gc_set_threads(4), 0);
    assert_int_equal(gcs_gc_set_threads(5), -1);
    gcs_gc_collect();
    gcs_gc_last_stats(&st);
    assert_int_equal(st.threads, 4);
    assert_int_equal(st.workers[0].cache_misses, -1);
    gcs_gc_shutdown();

    setenv("GCSCALE_GC_THREADS", "5", 1);
    o.numa_policy = GCS_GC_NUMA_INTERLEAVE;
    o.pin_workers = 0;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    assert_int_equal(gcs_gc_threads(), 5);
    assert_non_null(gcs_gc_alloc(24, 0));
    gcs_gc_shutdown();
    setenv("GCSCALE_GC_THREADS", "zero", 1);
    assert_int_equal(gcs_gc_init(&o, &err), -1);
    assert_non_null(strstr(err.msg, "GCSCALE_GC_THREADS"));
    unsetenv("GCSCALE_GC_THREADS");
    o.numa_policy = GCS_GC_NUMA_NODE;
    o.numa_node = 4096;
    assert_int_equal(gcs_gc_init(&o, &err), -1);
}

/* The public API's misuse: each gets -1 or NULL and a message naming the
 * mistake, and leaves the collector usable. */
static void *unattached_thread(void *arg)
{
    (void)arg;
    static int results[2];
    void *slot = NULL;
    results[0] = gcs_gc_alloc(24, 1) == NULL && strstr(gcs_gc_last_error(), "not attached") != NULL;
    results[1] = gcs_gc_push_root(&slot) == -1 && strstr(gcs_gc_last_error(), "not attached") != NULL;
    return results;
}

static void test_api_misuse(void **state)
{
    (void)state;
    gcs_err err;
    assert_int_equal(gcs_gc_attach(&err), -1);
    assert_non_null(strstr(err.msg, "attach before gcs_gc_init"));

    gcs_gc_options o;
    gcs_gc_options_default(&o);
    o.heap_limit = 4u << 20;
    o.ignore_threads_env = 1;
    o.threads = GCS_GC_MAX_THREADS + 1;
    assert_int_equal(gcs_gc_init(&o, &err), -1);
    assert_non_null(strstr(err.msg, "at most 64 GC threads"));
    o.threads = 2;
    o.mark_mode = (gcs_gc_mark_mode)7;
    assert_int_equal(gcs_gc_init(&o, &err), -1);
    assert_non_null(strstr(err.msg, "bad mark mode"));
    o.mark_mode = GCS_GC_MARK_RELAXED_BYTES;
    o.span_cost_object = -1;
    o.span_cost_pointer = 1;
    assert_int_equal(gcs_gc_init(&o, &err), -1);
    assert_non_null(strstr(err.msg, "span_cost_object must be > 0"));
    assert_false(gcs_gc_is_initialized());

    o.span_cost_object = 0;
    o.span_cost_pointer = 0;
    assert_int_equal(gcs_gc_init(&o, &err), 0);
    assert_int_equal(gcs_gc_attach(&err), -1); /* init attached this thread */
    assert_non_null(strstr(err.msg, "already attached"));
    assert_null(gcs_gc_alloc(16, 3)); /* 3 pointer fields in 2 words */
    assert_non_null(strstr(gcs_gc_last_error(), "bad object layout: 16 bytes with 3 pointer fields"));

    pthread_t t;
    void *res;
    assert_int_equal(pthread_create(&t, NULL, unattached_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &res), 0);
    assert_int_equal(((int *)res)[0], 1);
    assert_int_equal(((int *)res)[1], 1);

    void **obj = gcs_gc_alloc(16, 2); /* still usable */
    assert_non_null(obj);
    assert_int_equal(gcs_gc_nptrs(obj), 2);
    assert_int_equal(gcs_gc_collect(), 0);
    gcs_gc_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_all_threads_all_modes),
        cmocka_unit_test(test_shadow_stack_roots),
        cmocka_unit_test(test_out_of_heap),
        cmocka_unit_test(test_heap_reuse),
        cmocka_unit_test(test_pointer_free_pages),
        cmocka_unit_test(test_budget_and_log),
        cmocka_unit_test(test_span),
        cmocka_unit_test(test_numa_and_options),
        cmocka_unit_test(test_new_pages_do_not_fault_in_collection),
        cmocka_unit_test(test_api_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
