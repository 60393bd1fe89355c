/* test_serial.c -- model v2's serial pricing (model/serial.c) on hand
 * profiles and hand heaps: the per-class marker costs re-price T1 (and a
 * chain's span with it), the profile's gc_class_cost_ns or the documented
 * fallback, the P = 1 breakdown that reports them, and the nodes' service
 * time bounded by the measured bandwidth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gcscale/model.h"

#include "../model/serial.h"

#define COBJ 10.0
#define CPTR 1.0

#define assert_close(a, b, rel) \
    assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-9)

static gcs_profile *hand_profile(int classes)
{
    gcs_profile *p = gcs_profile_new(1);
    p->nodes[0].ncpus = 4;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a][0] = 100;
        p->occupancy_ns[a][0] = 0;
    }
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = COBJ;
    p->gc_cost_pointer_ns = CPTR;
    if (classes) {
        p->has_gc_class_cost = 1;
        p->gc_cost_chain_ns = 2;
        p->gc_cost_array_element_ns = 0.5;
    }
    return p;
}

/* 1000 objects, 900 edges as inspection prices them (COBJ, CPTR), of which
 * 300 objects chain steps, 400 array elements examined in place whose 250
 * pointer-free children were marked unread; no misses. */
static gcs_model_heap hand_heap(double tinf)
{
    gcs_model_heap h;
    memset(&h, 0, sizeof h);
    h.objects = 1000;
    h.edges = 900;
    h.t1_ns = 1000 * COBJ + 900 * CPTR;
    h.tinf_ns = tinf;
    h.chain_steps = 300;
    h.array_elements = 400;
    h.array_leaves = 250;
    h.nnodes = 1;
    h.v[0] = 1;
    return h;
}

static int null_switches; /* what opts_v2 asks for: predict --null-switches */

static void opts_v2(gcs_model_opts *o, const gcs_profile *p, gcs_model_sources *src)
{
    gcs_model_opts_init(o);
    o->coord = 0;
    o->null_switches = null_switches;
    gcs_model_opts_v2(o, p, 0, 0, src);
    gcs_model_opts_v2_costs(o, p, src);
}

/* A hand profile (with or without class costs), the hand heap and v2's
 * options from the profile. */
typedef struct fixture {
    gcs_profile *p;
    gcs_model_heap h;
    gcs_model_opts o;
    gcs_model_sources src;
    gcs_model_result r;
    gcs_err err;
} fixture;

static void fixture_init(fixture *f, int classes, double tinf)
{
    memset(f, 0, sizeof *f);
    f->p = hand_profile(classes);
    f->h = hand_heap(tinf);
    opts_v2(&f->o, f->p, &f->src);
}

/* Whether the JSON array of strings holds name. */
static int lists(const json_t *array, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(array, i, v) if (strcmp(json_string_value(v), name) == 0) return 1;
    return 0;
}

/* The steals' own work (model v2): the collector's steal count from the
 * profile's gc_steals fit on the re-priced T1, times gc_cost_ns.steal,
 * spread over the workers; a part of the stack's extra work, which still
 * adds up to P.  None at P = 1, none in the base model, none when off. */
static void test_steal_work_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1, 100);
    assert_true(f.o.steal_work_ns == 0); /* the hand profile has no steal cost */
    assert_null(f.src.steal_work);
    f.p->gc_cost_steal_ns = 500;
    f.p->has_gc_steals = 1;
    f.p->gc_steal_a = 10;
    f.p->gc_steal_b = 5;
    opts_v2(&f.o, f.p, &f.src);
    assert_true(f.o.steal_work_ns == 500);
    assert_string_equal(f.src.steal_work, "gc_cost_ns.steal");
    assert_int_equal(f.o.parallelism_bound, 1); /* v2 bounds the thieves by T1/Tinf - 1 */
    assert_int_equal(f.o.reuse_bound, 1);       /* and the extra misses by the reuses */
    double t1 = 10900 - 300 * (11 - 2) - 400 * (1 - 0.5) - 250 * 10; /* as test_classes_reprice_t1 */
    assert_int_equal(gcs_model_predict(f.p, &f.h, 4, &f.o, &f.r, &f.err), 0);
    double want = 3 * (10 * log(t1) + 5) * 500 / 4;
    assert_close(f.r.steal_work_ns, want, 1e-12);
    assert_close(f.r.lost_steal_work, 4 * want / f.r.time_ns, 1e-9);
    assert_close(f.r.lost_extra_work, f.r.lost_extra_misses + f.r.lost_shared_lines + f.r.lost_steal_work, 1e-12);
    assert_close(f.r.speedup + f.r.lost_extra_work + f.r.lost_contention + f.r.lost_span + f.r.lost_wake +
                     f.r.lost_search + f.r.lost_tail,
                 4, 1e-9);
    double with = f.r.speedup, time_with = f.r.time_ns;
    f.o.steal_work_ns = 0; /* predict --steal-work off */
    assert_int_equal(gcs_model_predict(f.p, &f.h, 4, &f.o, &f.r, &f.err), 0);
    assert_true(f.r.steal_work_ns == 0 && f.r.lost_steal_work == 0);
    assert_true(f.r.speedup > with);
    assert_close(time_with - f.r.time_ns, want, 1e-9);
    f.o.steal_work_ns = 500;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_true(f.r.steal_work_ns == 0);
    gcs_model_opts base;
    gcs_model_opts_init(&base);
    assert_true(base.steal_work_ns == 0 && base.worker_work_ns == 0);

    /* A profile with the worker cost (calibrate since 2026-11-29): P - 1
     * workers' worth of it on top, spread over the P; the stack still adds
     * up; none at P = 1. */
    f.p->has_gc_cost_worker = 1;
    f.p->gc_cost_worker_ns = 12000;
    opts_v2(&f.o, f.p, &f.src);
    assert_true(f.o.worker_work_ns == 12000);
    assert_string_equal(f.src.steal_work, "gc_cost_ns.steal and .worker");
    assert_int_equal(gcs_model_predict(f.p, &f.h, 4, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.worker_work_ns, 3 * 12000.0 / 4, 1e-12);
    assert_close(f.r.steal_work_ns, want + 3 * 12000.0 / 4, 1e-9);
    assert_close(f.r.speedup + f.r.lost_extra_work + f.r.lost_contention + f.r.lost_span + f.r.lost_wake +
                     f.r.lost_search + f.r.lost_tail,
                 4, 1e-9);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_true(f.r.steal_work_ns == 0 && f.r.worker_work_ns == 0);
    /* a per-steal cost of 0 (not told from 0) leaves the worker's */
    f.p->gc_cost_steal_ns = 0;
    opts_v2(&f.o, f.p, &f.src);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 2, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.steal_work_ns, 12000.0 / 2, 1e-12);
    gcs_profile_free(f.p);
}

static void test_classes_reprice_t1(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1, 100);
    assert_string_equal(f.src.classes, "gc_class_cost_ns");
    assert_true(f.o.cost_chain_ns == 2 && f.o.cost_array_element_ns == 0.5);
    /* a chain step: 2 instead of an object and its edge (11); an element:
     * 0.5 instead of its edge (1); a leaf marked unread: no object (10) */
    double t1 = 10900 - 300 * (11 - 2) - 400 * (1 - 0.5) - 250 * 10;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1, 1e-12);
    /* the heap the caller passed is not changed */
    assert_true(f.h.t1_ns == 10900);
    /* without the costs: T1 as inspection priced it */
    f.o.cost_chain_ns = f.o.cost_array_element_ns = 0;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, 10900, 1e-12);
    gcs_profile_free(f.p);
}

/* A list's span is its whole work: re-priced with it, so a chain stays
 * without speedup under Brent's form. */
static void test_chain_span_follows_t1(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1, 10900);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 2, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.speedup, 1, 1e-12);
    assert_close(f.r.time_ns, 10900 - 2700 - 200 - 2500, 1e-12);
    gcs_profile_free(f.p);
}

/* Absent from the profile: the documented fallback, gc_cost_ns for every
 * class, listed as nominal in the P = 1 breakdown. */
static void test_fallback_without_key(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 0, 100);
    assert_string_equal(f.src.classes, "nominal");
    assert_true(f.o.cost_chain_ns == 0 && f.o.cost_array_element_ns == 0);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    assert_close(json_real_value(json_object_get(j, "t1_ms")), 10900 / 1e6, 1e-12);
    assert_true(lists(json_object_get(j, "nominal"), "gc_class_cost_ns"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "classes"), "source")), "nominal");
    json_decref(j);
    /* the base model (gcs_model_opts_v2_costs not called): not a term, so
     * not nominal either */
    gcs_model_opts_v2(&f.o, f.p, 0, 1, &f.src);
    assert_null(f.src.classes);
    j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    assert_false(lists(json_object_get(j, "nominal"), "gc_class_cost_ns"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "classes"), "source")), "off");
    json_decref(j);
    gcs_profile_free(f.p);
}

/* With the key: the breakdown's T1 is the re-priced one, with the counts. */
static void test_breakdown_reports_classes(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1, 100);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    assert_close(json_real_value(json_object_get(j, "t1_ms")), 5500 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "time_ms")), 5500 / 1e6, 1e-12);
    json_t *c = json_object_get(j, "classes");
    assert_string_equal(json_string_value(json_object_get(c, "source")), "gc_class_cost_ns");
    assert_int_equal(json_integer_value(json_object_get(c, "chain_steps")), 300);
    assert_int_equal(json_integer_value(json_object_get(c, "array_leaves")), 250);
    json_decref(j);
    gcs_profile_free(f.p);
}

/* The service time bounded by the measured bandwidth: a 64-byte line at
 * 32 GB/s is 2 ns, an RW miss two transfers; S_O below the bound is kept;
 * no bandwidth_gbs, or the option off: S_O. */
static void test_service_bounded_by_bandwidth(void **state)
{
    (void)state;
    gcs_profile *p = hand_profile(1);
    p->occupancy_ns[GCS_ACCESS_READ][0] = 10;
    p->occupancy_ns[GCS_ACCESS_RW][0] = 3;
    gcs_model_opts o;
    gcs_model_sources src;
    opts_v2(&o, p, &src);
    assert_string_equal(src.service, "occupancy_ns");
    assert_true(_gcs_serial_service_ns(p, &o, GCS_ACCESS_READ, 0) == 10);
    double bw = 32;
    p->bandwidth_gbs = &bw;
    opts_v2(&o, p, &src);
    assert_string_equal(src.service, "occupancy_ns+bandwidth_gbs");
    assert_close(_gcs_serial_service_ns(p, &o, GCS_ACCESS_READ, 0), 2, 1e-12);
    assert_close(_gcs_serial_service_ns(p, &o, GCS_ACCESS_RW, 0), 3, 1e-12); /* S_O under 2 x 2 */
    p->occupancy_ns[GCS_ACCESS_RW][0] = 7;
    assert_close(_gcs_serial_service_ns(p, &o, GCS_ACCESS_RW, 0), 4, 1e-12);
    o.service_bandwidth = 0;
    assert_true(_gcs_serial_service_ns(p, &o, GCS_ACCESS_READ, 0) == 10);
    /* in the fixed point: the node's load is the bounded one, so two
     * workers' utilisation falls by S_O / bound */
    gcs_model_heap h = hand_heap(100);
    h.q1[GCS_ACCESS_READ] = 2000;
    gcs_model_result r;
    gcs_err err;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    double rho_so = r.rho[0];
    o.service_bandwidth = 1;
    assert_int_equal(gcs_model_predict(p, &h, 2, &o, &r, &err), 0);
    assert_true(r.rho[0] > 0 && r.rho[0] < rho_so / 4);
    p->bandwidth_gbs = NULL; /* not the profile's to free */
    gcs_profile_free(p);
}

/* A NULL test that switches (model.h) costs the profile's
 * gc_class_cost_ns.null_switch in T1 when asked for; without the key,
 * nothing, and the breakdown lists it as nominal; not asked for (the
 * default), it is no term at all, whatever the profile has. */
static void test_null_switches_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1, 100);
    f.h.null_fields = 500;
    f.h.null_switches = 120;
    f.p->has_gc_null_switch = 1;
    f.p->gc_cost_null_switch_ns = 3;
    opts_v2(&f.o, f.p, &f.src);
    assert_null(f.src.nulls);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, 5500, 1e-12);
    json_t *j0 = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_false(lists(json_object_get(j0, "nominal"), "gc_class_cost_ns.null_switch"));
    json_decref(j0);
    null_switches = 1;
    f.p->has_gc_null_switch = 0;
    opts_v2(&f.o, f.p, &f.src);
    assert_string_equal(f.src.nulls, "nominal");
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, 5500, 1e-12);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_true(lists(json_object_get(j, "nominal"), "gc_class_cost_ns.null_switch"));
    json_decref(j);
    f.p->has_gc_null_switch = 1;
    f.p->gc_cost_null_switch_ns = 3;
    opts_v2(&f.o, f.p, &f.src);
    assert_string_equal(f.src.nulls, "gc_class_cost_ns.null_switch");
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, 5500 + 120 * 3, 1e-12);
    j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_false(lists(json_object_get(j, "nominal"), "gc_class_cost_ns.null_switch"));
    json_t *n = json_object_get(j, "nulls");
    assert_int_equal(json_integer_value(json_object_get(n, "null_switches")), 120);
    assert_close(json_real_value(json_object_get(n, "ms")), 360 / 1e6, 1e-12);
    json_decref(j);
    /* the base model prices none */
    gcs_model_opts_init(&f.o);
    f.o.coord = 0;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, 10900, 1e-12);
    null_switches = 0;
    gcs_profile_free(f.p);
}

/* Model v2's stream classes: of 1000 misses at M1 = 100 ns, S_O = 10 ns,
 * the streamer's 600 cost S_O each but its 400 sequential ones the
 * profile's gc_stream_line_ns (else S_O, nominal), and the other 400 the
 * full latency; the base model prices q1_prefetched instead, and so does
 * v2 for a heap whose streams were not counted. */
static void test_stream_classes_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 0, 100);
    f.p->occupancy_ns[GCS_ACCESS_READ][0] = 10;
    f.h.q1[GCS_ACCESS_READ] = 1000;
    f.h.q1_prefetched[GCS_ACCESS_READ] = 100;
    f.h.streams_counted = 1;
    f.h.q1_streamed[GCS_ACCESS_READ] = 600;
    f.h.q1_sequential[GCS_ACCESS_READ] = 400;
    double t1 = 10900, rest = 400 * 100.0;
    assert_string_equal(f.src.sequential, "nominal");
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 600 * 10 + rest, 1e-12);
    f.p->has_gc_stream_line = 1;
    f.p->gc_stream_line_ns = 0.5;
    opts_v2(&f.o, f.p, &f.src);
    assert_string_equal(f.src.sequential, "gc_stream_line_ns");
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 200 * 10 + 400 * 0.5 + rest, 1e-12);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    assert_close(json_real_value(json_object_get(j, "streamed_ms")), (200 * 10 + 400 * 0.5) / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "sequential_ms")), 400 * 0.5 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "memory_miss_ms")), rest / 1e6, 1e-12);
    json_decref(j);
    f.h.streams_counted = 0;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 100 * 10 + 900 * 100.0, 1e-12);
    f.h.streams_counted = 1;
    gcs_model_opts_init(&f.o);
    f.o.coord = 0;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 100 * 10 + 900 * 100.0, 1e-12);
    /* counts that do not nest are refused */
    f.h.q1_sequential[GCS_ACCESS_READ] = 700;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), -1);
    assert_non_null(strstr(f.err.msg, "sequential"));
    gcs_profile_free(f.p);
}

/* Dependent misses (model.h q1_dependent): with the profile's overlap F a
 * miss waits 1/F of its latency, a chain's jump to another page all of it;
 * the P = 1 breakdown says how much (dependent_ms).  Without counted
 * streams, or with the term off, every unstreamed miss is overlapped. */
static void test_dependent_misses_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 0, 100);
    f.p->has_gc_overlap = 1;
    f.p->gc_miss_overlap = 4;
    opts_v2(&f.o, f.p, &f.src);
    assert_true(f.o.overlap == 4 && f.o.dependent_misses == 1);
    f.h.q1[GCS_ACCESS_READ] = 1000;
    f.h.streams_counted = 1;
    f.h.q1_dependent[GCS_ACCESS_READ] = 300;
    double t1 = 10900;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 700 * 100 / 4.0 + 300 * 100.0, 1e-12);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    assert_close(json_real_value(json_object_get(j, "dependent_ms")), 300 * 100 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "memory_miss_ms")), 700 * 100 / 4.0 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "time_ms")), f.r.time_ns / 1e6, 1e-12);
    json_decref(j);
    f.o.dependent_misses = 0;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 1000 * 100 / 4.0, 1e-12);
    f.o.dependent_misses = 1;
    f.h.streams_counted = 0;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 1000 * 100 / 4.0, 1e-12);
    /* counts that do not nest are refused */
    f.h.streams_counted = 1;
    f.h.q1_streamed[GCS_ACCESS_READ] = 800;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), -1);
    assert_non_null(strstr(f.err.msg, "dependent"));
    gcs_profile_free(f.p);
}

/* Dependent steps (2026-11-29): every chain step 4 KiB or more away waits
 * the curve's latency, the LLC's hits and a private level's as the misses
 * do; those no dependent miss counts go into T1, and into T-infinity by its
 * share of T1.  Without the curve, or without the count, nothing changes;
 * more dependent steps than chain steps are refused. */
static void test_dependent_steps_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 0, 10900); /* T-infinity = T1: a list */
    f.p->has_gc_overlap = 1;
    f.p->gc_miss_overlap = 4;
    f.h.q1[GCS_ACCESS_READ] = 1000;
    f.h.streams_counted = 1;
    f.h.q1_dependent[GCS_ACCESS_READ] = 100;
    f.h.chain_steps = 300;
    f.h.dependent_steps = 250;
    f.h.live_lines = 2000; /* the curve at 128 000 bytes: 60 ns */
    double sizes[2] = {64000, 256000}, ns[2] = {40, 80};
    assert_int_equal(gcs_profile_set_dependent_load(f.p, sizes, ns, 2, &f.err), 0);
    opts_v2(&f.o, f.p, &f.src);
    double t1 = 10900, misses = 900 * 100 / 4.0 + 100 * 60.0, steps = (250 - 100) * 60.0;
    assert_close(_gcs_serial_dependent_hits_ns(f.p, &f.h, &f.o), steps, 1e-12);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + misses + steps, 1e-12);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    json_t *d = json_object_get(j, "dependent");
    assert_close(json_real_value(json_object_get(d, "misses")), 100, 1e-12);
    assert_int_equal(json_integer_value(json_object_get(d, "steps")), 250);
    assert_close(json_real_value(json_object_get(d, "latency_ns")), 60, 1e-12);
    assert_close(json_real_value(json_object_get(j, "dependent_ms")), 250 * 60 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "t1_ms")), t1 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "time_ms")), f.r.time_ns / 1e6, 1e-12);
    json_decref(j);
    /* a list: the steps are on its span, so two workers gain nothing */
    gcs_model_result r2;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 2, &f.o, &r2, &f.err), 0);
    assert_true(r2.speedup <= 1 + 1e-9);
    /* a bushy heap: T-infinity gains its share only */
    gcs_model_heap priced;
    f.h.tinf_ns = 109;
    const gcs_model_heap *ph = _gcs_serial_priced_heap(f.p, &f.h, &f.o, &priced);
    assert_close(ph->t1_ns, t1 + steps, 1e-12);
    assert_close(ph->tinf_ns, 109 + steps * 0.01, 1e-9);
    /* every step a miss: nothing added */
    f.h.dependent_steps = 100;
    assert_true(_gcs_serial_dependent_hits_ns(f.p, &f.h, &f.o) == 0);
    /* without the curve: the misses as before, no steps */
    f.h.dependent_steps = 250;
    f.p->ndependent_load = 0;
    opts_v2(&f.o, f.p, &f.src);
    assert_true(_gcs_serial_dependent_hits_ns(f.p, &f.h, &f.o) == 0);
    /* more dependent steps than chain steps: refused */
    f.h.dependent_steps = 301;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), -1);
    assert_non_null(strstr(f.err.msg, "dependent steps"));
    gcs_profile_free(f.p);
}

/* A dependent miss at the profile's dependent-load curve (2026-11-28):
 * v2 takes the curve where the profile has it, read at the heap's
 * footprint (live_lines x 64 B, in log size between points); a heap on a
 * remote node adds what its M1 adds over the local one to the share from
 * memory; without the curve the latency residency gives, as before. */
static void test_dependent_load_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 0, 100);
    f.p->has_gc_overlap = 1;
    f.p->gc_miss_overlap = 4;
    f.h.q1[GCS_ACCESS_READ] = 1000;
    f.h.streams_counted = 1;
    f.h.q1_dependent[GCS_ACCESS_READ] = 300;
    f.h.live_lines = 2000; /* 128 000 bytes: halfway from 64 000 to 256 000 in log size */
    double sizes[2] = {64000, 256000}, ns[2] = {40, 80};
    assert_int_equal(gcs_profile_set_dependent_load(f.p, sizes, ns, 2, &f.err), 0);
    opts_v2(&f.o, f.p, &f.src);
    assert_int_equal(f.o.dependent_load, 1);
    assert_string_equal(f.src.dependent, "dependent_load_ns");
    double t1 = 10900;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 700 * 100 / 4.0 + 300 * 60.0, 1e-12);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    json_t *d = json_object_get(j, "dependent");
    assert_close(json_real_value(json_object_get(d, "misses")), 300, 1e-12);
    assert_close(json_real_value(json_object_get(d, "latency_ns")), 60, 1e-12);
    assert_string_equal(json_string_value(json_object_get(d, "source")), "dependent_load_ns");
    assert_close(json_real_value(json_object_get(j, "dependent_ms")), 300 * 60 / 1e6, 1e-12);
    json_decref(j);
    /* off: the whole M1, said so */
    f.p->ndependent_load = 0;
    opts_v2(&f.o, f.p, &f.src);
    assert_int_equal(f.o.dependent_load, 0);
    assert_string_equal(f.src.dependent, "llc_hit_ns and M1");
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 700 * 100 / 4.0 + 300 * 100.0, 1e-12);
    gcs_profile_free(f.p);

    /* two nodes, the heap on the second (no CPUs there): + (150 - 100) */
    gcs_profile *p = gcs_profile_new(2);
    p->nodes[0].ncpus = 4;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a][0] = 100, p->latency_ns[a][1] = 150;
        p->latency_ns[a][2] = 150, p->latency_ns[a][3] = 100;
    }
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = COBJ;
    p->gc_cost_pointer_ns = CPTR;
    p->has_gc_overlap = 1;
    p->gc_miss_overlap = 4;
    assert_int_equal(gcs_profile_set_dependent_load(p, sizes, ns, 2, &f.err), 0);
    gcs_model_heap h = f.h;
    h.nnodes = 2;
    h.v[0] = 0, h.v[1] = 1;
    opts_v2(&f.o, p, &f.src);
    assert_int_equal(gcs_model_predict(p, &h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 700 * 150 / 4.0 + 300 * 110.0, 1e-12);
    gcs_profile_free(p);
}

/* Resident lines (2026-11-28): with residency on, r = LLC / footprint of
 * each miss is priced at the profile's gc_resident prices (a non-streamed
 * one llc_hit / its overlap, a streamed or sequential one at most the
 * resident stream price) and 1 - r as from memory; the resident share
 * neither occupies nor queues at the memory node.  v2's default prices it
 * where the profile has gc_resident and only there; on without the key, a
 * resident line is priced with the memory overlap; off is off. */
static void test_resident_lines_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 0, 100);
    f.p->occupancy_ns[GCS_ACCESS_READ][0] = 10;
    f.p->has_gc_overlap = 1;
    f.p->gc_miss_overlap = 2;
    f.p->has_gc_stream_line = 1;
    f.p->gc_stream_line_ns = 4;
    f.p->has_llc_effective = 1;
    f.p->llc_effective_bytes = 32000; /* half the 1000 lines' footprint: r = 0.5 */
    f.p->llc_hit_ns = 30;
    f.h.q1[GCS_ACCESS_READ] = 1000;
    f.h.live_lines = 1000;
    f.h.streams_counted = 1;
    f.h.q1_streamed[GCS_ACCESS_READ] = 600;
    f.h.q1_sequential[GCS_ACCESS_READ] = 400;
    double t1 = 10900, memory_only = t1 + 200 * 10 + 400 * 4 + 400 * 100 / 2.0;
    /* the default without the key: off */
    gcs_model_opts_init(&f.o);
    f.o.coord = 0;
    gcs_model_opts_v2(&f.o, f.p, GCS_MODEL_RESIDENCY_DEFAULT, 0, &f.src);
    assert_int_equal(f.src.residency, 0);
    f.p->has_gc_resident = 1;
    f.p->gc_resident_overlap = 3;
    f.p->gc_resident_stream_ns = 1;
    /* off */
    opts_v2(&f.o, f.p, &f.src);
    assert_int_equal(f.src.residency, 0);
    assert_null(f.src.resident);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, memory_only, 1e-12);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 2, &f.o, &f.r, &f.err), 0);
    double load_off = f.r.rho[0] * f.r.time_ns;

    /* the default with the key: on */
    gcs_model_opts_init(&f.o);
    f.o.coord = 0;
    gcs_model_opts_v2(&f.o, f.p, GCS_MODEL_RESIDENCY_DEFAULT, 0, &f.src);
    gcs_model_opts_v2_costs(&f.o, f.p, &f.src);
    assert_int_equal(f.src.residency, 1);
    assert_string_equal(f.src.resident, "gc_resident");
    /* the sequential lines: a heap half in the LLC holds none of a run
     * marked in the same order every time (least recently used) */
    double own = 400 * (0.5 * 100 / 2 + 0.5 * 30 / 3.0), streamed = 200 * (0.5 * 10 + 0.5 * 1), seq = 400 * 4;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + own + streamed + seq, 1e-12);
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    assert_close(json_real_value(json_object_get(j, "memory_miss_ms")), 400 * 25 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "llc_miss_ms")), 400 * 5 / 1e6, 1e-12);
    assert_close(json_real_value(json_object_get(j, "streamed_ms")), (streamed + seq) / 1e6, 1e-12);
    json_t *res = json_object_get(j, "resident");
    assert_string_equal(json_string_value(json_object_get(res, "source")), "gc_resident");
    assert_true(json_real_value(json_object_get(res, "miss_overlap")) == 3);
    json_decref(j);
    /* half the lines resident: half the memory node's load (no thief's
     * misses here: the hand heap has no live lines per steal) */
    assert_int_equal(gcs_model_predict(f.p, &f.h, 2, &f.o, &f.r, &f.err), 0);
    assert_true(load_off > 0);
    assert_close(f.r.rho[0] * f.r.time_ns, load_off / 2, 1e-9);
    /* the whole heap in the LLC: its sequential lines too */
    f.o.llc_bytes = 64000;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 400 * 30 / 3.0 + 200 * 1 + 400 * 1, 1e-12);
    f.o.llc_bytes = 32000;
    /* a resident stream price above the one from memory is not used */
    f.o.resident_stream_ns = 50;
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + own + 200 * 10 + 400 * 4, 1e-12);
    /* with the steals' own work priced (measured on a resident heap), a
     * thief's extra misses are only the share from memory, 1 - r */
    f.p->gc_cost_steal_ns = 100;
    f.h.live_lines_avg = 10;
    gcs_model_opts_v2_costs(&f.o, f.p, &f.src);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 2, &f.o, &f.r, &f.err), 0);
    double extra_on = f.r.q_p - 1000;
    opts_v2(&f.o, f.p, &f.src);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 2, &f.o, &f.r, &f.err), 0);
    assert_true(f.r.q_p - 1000 > 0);
    assert_close(extra_on, (f.r.q_p - 1000) * 0.5, 1e-12);
    f.h.live_lines_avg = 0;
    f.p->gc_cost_steal_ns = 0;
    /* on without the key: resident lines at the LLC's latency over the
     * memory overlap, streams as from memory */
    f.p->has_gc_resident = 0;
    gcs_model_opts_init(&f.o);
    f.o.coord = 0;
    gcs_model_opts_v2(&f.o, f.p, 1, 0, &f.src);
    gcs_model_opts_v2_costs(&f.o, f.p, &f.src);
    assert_int_equal(f.src.residency, 1);
    assert_null(f.src.resident);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 200 * 10 + 400 * 4 + 400 * (0.5 * 100 + 0.5 * 30) / 2.0, 1e-12);
    gcs_profile_free(f.p);
}

/* The measured residency curve (gc_residency, 2026-11-29): where the
 * profile has it, r is the curve at the heap's footprint over the effective
 * LLC instead of min(1, LLC / footprint), in the price and in the
 * breakdown; the sequential lines keep the old rule (only a heap that fits
 * holds a run marked in the same order every time). */
static void test_residency_curve_priced(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 0, 100);
    f.p->occupancy_ns[GCS_ACCESS_READ][0] = 10;
    f.p->has_gc_overlap = 1;
    f.p->gc_miss_overlap = 2;
    f.p->has_gc_stream_line = 1;
    f.p->gc_stream_line_ns = 4;
    f.p->has_llc_effective = 1;
    f.p->llc_effective_bytes = 128000; /* twice the 1000 lines' footprint: the ratio says r = 1 */
    f.p->llc_hit_ns = 30;
    f.p->has_gc_resident = 1;
    f.p->gc_resident_overlap = 3;
    f.p->gc_resident_stream_ns = 1;
    f.h.q1[GCS_ACCESS_READ] = 1000;
    f.h.live_lines = 1000;
    f.h.streams_counted = 1;
    f.h.q1_streamed[GCS_ACCESS_READ] = 600;
    f.h.q1_sequential[GCS_ACCESS_READ] = 400;
    double t1 = 10900;
    gcs_model_opts_init(&f.o);
    f.o.coord = 0;
    gcs_model_opts_v2(&f.o, f.p, GCS_MODEL_RESIDENCY_DEFAULT, 0, &f.src);
    gcs_model_opts_v2_costs(&f.o, f.p, &f.src);
    assert_null(f.o.residency_curve);
    assert_string_equal(f.src.residency_share, "llc_effective_bytes / footprint");
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + 400 * 30 / 3.0 + 200 * 1 + 400 * 1, 1e-12);
    /* footprint 0.5 LLC on a curve through (0.25, 0.9) and (1, 0.6): 0.8 */
    static const double fp[] = {0.25, 1, 4}, rs[] = {0.9, 0.6, 0};
    f.p->nresidency = 3;
    memcpy(f.p->residency_footprint, fp, sizeof fp);
    memcpy(f.p->residency_resident, rs, sizeof rs);
    gcs_model_opts_init(&f.o);
    f.o.coord = 0;
    gcs_model_opts_v2(&f.o, f.p, GCS_MODEL_RESIDENCY_DEFAULT, 0, &f.src);
    gcs_model_opts_v2_costs(&f.o, f.p, &f.src);
    assert_ptr_equal(f.o.residency_curve, f.p);
    assert_string_equal(f.src.residency_share, "gc_residency");
    double r = 0.8, own = 400 * (r * 30 / 3.0 + (1 - r) * 100 / 2), streamed = 200 * (r * 1 + (1 - r) * 10);
    assert_int_equal(gcs_model_predict(f.p, &f.h, 1, &f.o, &f.r, &f.err), 0);
    assert_close(f.r.time_ns, t1 + own + streamed + 400 * 1, 1e-12); /* the whole heap fits: runs resident */
    json_t *j = gcs_model_serial_json(f.p, &f.h, &f.o, &f.src, &f.err);
    assert_non_null(j);
    assert_close(json_real_value(json_object_get(j, "residency")), r, 1e-12);
    assert_string_equal(json_string_value(json_object_get(j, "residency_source")), "gc_residency");
    json_decref(j);
    /* residency off: no curve either */
    opts_v2(&f.o, f.p, &f.src);
    assert_null(f.o.residency_curve);
    assert_null(f.src.residency_share);
    gcs_profile_free(f.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_reprice_t1),
        cmocka_unit_test(test_chain_span_follows_t1),
        cmocka_unit_test(test_fallback_without_key),
        cmocka_unit_test(test_breakdown_reports_classes),
        cmocka_unit_test(test_service_bounded_by_bandwidth),
        cmocka_unit_test(test_null_switches_priced),
        cmocka_unit_test(test_stream_classes_priced),
        cmocka_unit_test(test_dependent_misses_priced),
        cmocka_unit_test(test_dependent_steps_priced),
        cmocka_unit_test(test_dependent_load_priced),
        cmocka_unit_test(test_residency_curve_priced),
        cmocka_unit_test(test_steal_work_priced),
        cmocka_unit_test(test_resident_lines_priced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
