/* test_profile.c -- formats/profile*.c: the machine profile's load, strict
 * validation, save and print, and the two reference profiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcscale/profile.h"

/* A valid two-node profile; each validation case changes one thing in it. */
static const char *const base_doc =
    "{"
    " \"format\": \"gcscale-machine\", \"version\": 1, \"host\": \"testhost\","
    " \"created\": \"2024-01-02T03:04:05Z\", \"tool_version\": \"0.1.0\","
    " \"nodes\": [ {\"id\": 0, \"cpus\": [0, 1], \"mem_bytes\": 1073741824},"
    "              {\"id\": 1, \"cpus\": [2, 3], \"mem_bytes\": 2147483648} ],"
    " \"caches\": [ {\"level\": 1, \"type\": \"data\", \"size_bytes\": 49152, \"line_bytes\": 64,"
    "               \"ways\": 12, \"cpus\": [0]} ],"
    " \"latency_ns\": { \"read\": [[90, 140], [141, 91]], \"rw\": [[100, 160], [161, 101]] },"
    " \"occupancy_ns\": { \"read\": [20, 21], \"rw\": [30, 31] },"
    " \"bandwidth_gbs\": [50.5, 51.5],"
    " \"gc_cost_ns\": { \"object\": 3.5, \"pointer\": 1.25, \"steal\": 400 },"
    " \"counters\": { \"source\": \"papi\", \"reason\": \"\" },"
    " \"measurement\": { \"chains\": 8, \"samples\": [1, 2, 3] }"
    "}";

static json_t *load_base(void)
{
    json_error_t jerr;
    json_t *doc = json_loads(base_doc, 0, &jerr);
    if (!doc)
        fail_msg("base document does not parse: %s", jerr.text);
    return doc;
}

/* Replaces (or, with value NULL, deletes) the member named by a dotted path
 * such as "latency_ns.rw.1" (numbers index arrays).  Steals value. */
static void set_path(json_t *doc, const char *path, json_t *value)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *parent = doc;
    char *save = NULL, *part = strtok_r(buf, ".", &save);
    for (;;) {
        char *next = strtok_r(NULL, ".", &save);
        if (!next) {
            if (json_is_array(parent)) {
                size_t i = strtoul(part, NULL, 10);
                if (value)
                    json_array_set_new(parent, i, value);
                else
                    json_array_remove(parent, i);
            } else if (value) {
                json_object_set_new(parent, part, value);
            } else {
                json_object_del(parent, part);
            }
            return;
        }
        parent = json_is_array(parent) ? json_array_get(parent, strtoul(part, NULL, 10))
                                       : json_object_get(parent, part);
        assert_non_null(parent);
        part = next;
    }
}

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!v)
        fail_msg("test value does not parse: %s: %s", text, jerr.text);
    return v;
}

static void test_base_document_loads(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *doc = load_base();
    gcs_profile *p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("base document rejected: %s", err.msg);
    assert_int_equal(p->nnodes, 2);
    assert_int_equal(p->nodes[1].id, 1);
    assert_int_equal(p->nodes[1].ncpus, 2);
    assert_int_equal(p->nodes[1].cpus[1], 3);
    assert_true(p->nodes[1].mem_bytes == 2147483648ull);
    assert_int_equal(p->ncaches, 1);
    assert_string_equal(p->caches[0].type, "data");
    assert_true(p->caches[0].size_bytes == 49152);
    assert_int_equal(p->caches[0].ways, 12);
    assert_true(gcs_profile_latency(p, GCS_ACCESS_READ, 0, 1) == 140);
    assert_true(gcs_profile_latency(p, GCS_ACCESS_READ, 1, 0) == 141);
    assert_true(gcs_profile_latency(p, GCS_ACCESS_RW, 1, 1) == 101);
    assert_true(isnan(gcs_profile_latency(p, GCS_ACCESS_RW, 2, 0)));
    assert_true(p->occupancy_ns[GCS_ACCESS_RW][1] == 31);
    assert_non_null(p->bandwidth_gbs);
    assert_true(p->bandwidth_gbs[1] == 51.5);
    assert_int_equal(p->has_gc_cost, 1);
    assert_true(p->gc_cost_pointer_ns == 1.25);
    assert_string_equal(p->counters_source, "papi");
    assert_string_equal(p->host, "testhost");
    assert_non_null(p->extra);
    assert_int_equal(json_object_size(p->extra), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(p->extra, "measurement"),
                                                        "chains")), 8);
    gcs_profile_free(p);
    json_decref(doc);
}

typedef struct bad_case {
    const char *path;  /* member to change */
    const char *value; /* new JSON value, or NULL to delete the member */
    const char *message;
} bad_case;

static const bad_case bad_cases[] = {
    {"format", NULL, "format: required key is missing"},
    {"format", "\"gcscale-heap\"", "format: expected \"gcscale-machine\", found \"gcscale-heap\""},
    {"version", "2", "version: unsupported version 2"},
    {"version", "\"1\"", "version: expected an integer, found a string"},
    {"nodes", NULL, "nodes: required key is missing"},
    {"nodes", "[]", "nodes: at least one node is required"},
    {"nodes.1.id", "0", "nodes[1].id: duplicate node id 0 (also nodes[0].id)"},
    {"nodes.0.id", "-1", "nodes[0].id: negative value -1"},
    {"nodes.0.mem_bytes", "-4096", "nodes[0].mem_bytes: negative value -4096"},
    {"nodes.1.mem_bytes", NULL, "nodes[1].mem_bytes: required key is missing"},
    {"nodes.0.cpus.1", "1.5", "nodes[0].cpus[1]: expected an integer, found a real number"},
    {"nodes.1.cpus", "[3, 1]", "nodes[1].cpus: CPU 1 also belongs to nodes[0]"},
    {"nodes.1.cpus", "[2, 2]", "nodes[1].cpus: CPU 2 is listed twice"},
    {"caches", NULL, "caches: required key is missing"},
    {"caches.0.type", "\"victim\"", "caches[0].type: expected \"data\", \"unified\" or"},
    {"caches.0.line_bytes", "0", "caches[0].line_bytes: must be at least 1, found 0"},
    {"caches.0.size_bytes", "-1", "caches[0].size_bytes: must be at least 1, found -1"},
    {"caches.0.ways", NULL, "caches[0].ways: required key is missing"},
    {"latency_ns", NULL, "latency_ns: required key is missing"},
    {"latency_ns.rw", NULL, "latency_ns.rw: required key is missing"},
    {"latency_ns.read", "[[90, 140]]", "latency_ns.read: expected 2 rows (one per CPU node), found 1"},
    {"latency_ns.rw.1", "[161, 101, 7]",
     "latency_ns.rw[1]: expected 2 entries (one per memory node), found 3"},
    {"latency_ns.read.0.1", "0", "latency_ns.read[0][1]: must be positive, found 0"},
    {"latency_ns.read.1.0", "-3.5", "latency_ns.read[1][0]: negative value -3.5"},
    {"latency_ns.rw.0.0", "1e300", "latency_ns.rw[0][0]: 1e+300 ns is not plausible"},
    {"latency_ns.read.0.0", "\"fast\"", "latency_ns.read[0][0]: expected a number, found a string"},
    {"occupancy_ns.read.1", "-5", "occupancy_ns.read[1]: negative value -5"},
    {"occupancy_ns.rw", "[30]", "occupancy_ns.rw: expected 2 entries (one per memory node), found 1"},
    {"occupancy_ns.read", "12", "occupancy_ns.read: expected an array of 2 numbers"},
    {"bandwidth_gbs", "[1]", "bandwidth_gbs: expected 2 entries (one per memory node), found 1"},
    {"bandwidth_gbs.0", "-3", "bandwidth_gbs[0]: negative value -3"},
    {"bandwidth_gbs.1", "5e9", "bandwidth_gbs[1]: 5e+09 GB/s is not plausible"},
    {"gc_cost_ns.steal", "-1", "gc_cost_ns.steal: negative value -1"},
    {"gc_cost_ns.worker", "-1", "gc_cost_ns.worker: negative value -1"},
    {"gc_cost_ns.worker", "\"warm\"", "gc_cost_ns.worker: expected a number, found a string"},
    {"gc_cost_ns.pointer", NULL, "gc_cost_ns.pointer: required key is missing"},
    {"gc_cost_ns", "[1, 2, 3]", "gc_cost_ns: expected an object"},
    {"gc_miss_overlap", "0.5", "gc_miss_overlap: expected a number of misses in flight in [1, 4096]"},
    {"gc_miss_overlap", "\"many\"", "gc_miss_overlap: expected a number, found a string"},
    {"counters.source", "\"perf\"", "counters.source: expected \"papi\" or \"none\", found \"perf\""},
    {"host", "5", "host: expected a string, found an integer"},
    {"uncertainty", "[]", "uncertainty: expected an object, found an array"},
    {"uncertainty", "{\"s\": 3}", "uncertainty.s: expected an object, found an integer"},
    {"uncertainty", "{\"s\": {\"stderr\": -1}}", "uncertainty.s.stderr: negative value -1"},
    {"uncertainty", "{\"s\": {\"ci95\": [2]}}", "uncertainty.s.ci95: expected an array [lo, hi]"},
    {"uncertainty", "{\"s\": {\"ci95\": [3, 1]}}", "uncertainty.s.ci95: lower end 3 above upper end 1"},
    {"uncertainty", "{\"s\": {\"n\": 1.5}}", "uncertainty.s.n: expected an integer, found a real number"},
    {"unreliable", "[\"s\"]", "unreliable: expected an object, found an array"},
    {"unreliable", "{\"s\": \"\"}", "unreliable.s: expected the reason (a non-empty string), found \"\""},
    {"unreliable", "{\"s\": null}", "unreliable.s: expected the reason (a non-empty string), found null"},
    {"latency_full_random_ns", "[1]", "latency_full_random_ns: expected an object with \"4k\" and \"huge\""},
    {"latency_full_random_ns", "{\"4k\": [[200, 260], [255, 210]]}",
     "latency_full_random_ns.huge: required key is missing"},
    {"latency_full_random_ns", "{\"4k\": [[200, 0], [255, 210]], \"huge\": \"no THP\"}",
     "latency_full_random_ns.4k[0][1]: must be positive, found 0"},
    {"latency_full_random_ns", "{\"4k\": [[200]], \"huge\": \"no THP\"}",
     "latency_full_random_ns.4k: expected 2 rows (one per CPU node), found 1"},
    {"latency_full_random_ns", "{\"4k\": \"\", \"huge\": \"no THP\"}",
     "latency_full_random_ns.4k: an empty string"},
    {"page_walk_ns", "{\"4k\": \"x\", \"huge\": \"x\"}",
     "page_walk_ns: present without latency_full_random_ns"},
};

static void test_validation_names_the_key(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        json_t *doc = load_base();
        set_path(doc, c->path, c->value ? parse(c->value) : NULL);
        gcs_err err = {{0}};
        gcs_profile *p = gcs_profile_from_json(doc, &err);
        if (p)
            fail_msg("case %zu (%s = %s): accepted", i, c->path, c->value ? c->value : "deleted");
        if (!strstr(err.msg, c->message))
            fail_msg("case %zu (%s): message \"%s\" lacks \"%s\"", i, c->path, err.msg, c->message);
        if (strchr(err.msg, '\n'))
            fail_msg("case %zu: message has more than one line", i);
        json_decref(doc);
    }
}

static void test_not_an_object(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *doc = parse("[1, 2]");
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "expected a JSON object"));
    json_decref(doc);
}

static void test_optional_keys(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *doc = load_base();
    /* null and absent optional keys, and all-zero gc costs, mean "not measured". */
    set_path(doc, "bandwidth_gbs", json_null());
    set_path(doc, "gc_cost_ns", parse("{\"object\": 0, \"pointer\": 0, \"steal\": 0}"));
    set_path(doc, "counters", NULL);
    set_path(doc, "host", NULL);
    set_path(doc, "caches", parse("[]"));
    gcs_profile *p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_null(p->bandwidth_gbs);
    assert_int_equal(p->has_gc_cost, 0);
    assert_int_equal(p->ncaches, 0);
    assert_string_equal(p->counters_source, "none");
    assert_string_equal(p->host, "");
    gcs_profile_free(p);

    set_path(doc, "gc_cost_ns", NULL);
    set_path(doc, "bandwidth_gbs", NULL);
    p = gcs_profile_from_json(doc, &err);
    assert_non_null(p);
    assert_int_equal(p->has_gc_cost, 0);
    assert_null(p->bandwidth_gbs);
    /* Not calibrated: saved without gc_cost_ns rather than with fake zeros. */
    json_t *out = gcs_profile_to_json(p);
    assert_null(json_object_get(out, "gc_cost_ns"));
    assert_null(json_object_get(out, "bandwidth_gbs"));
    json_decref(out);
    gcs_profile_free(p);

    /* gc_miss_overlap: absent is "not fitted"; present, it is kept and saved. */
    p = gcs_profile_from_json(doc, &err);
    assert_non_null(p);
    assert_int_equal(p->has_gc_overlap, 0);
    gcs_profile_free(p);
    set_path(doc, "gc_miss_overlap", parse("15.25"));
    p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_int_equal(p->has_gc_overlap, 1);
    assert_true(p->gc_miss_overlap == 15.25);
    out = gcs_profile_to_json(p);
    assert_true(json_real_value(json_object_get(out, "gc_miss_overlap")) == 15.25);
    json_decref(out);
    gcs_profile_free(p);

    /* gc_class_cost_ns (model v2): absent is "not measured"; present, both
     * members are required, kept and saved; a negative cost is refused. */
    p = gcs_profile_from_json(doc, &err);
    assert_non_null(p);
    assert_int_equal(p->has_gc_class_cost, 0);
    out = gcs_profile_to_json(p);
    assert_null(json_object_get(out, "gc_class_cost_ns"));
    json_decref(out);
    gcs_profile_free(p);
    set_path(doc, "gc_class_cost_ns", parse("{\"chain\": 0.75}"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_class_cost_ns.array_element"));
    set_path(doc, "gc_class_cost_ns", parse("{\"chain\": -1, \"array_element\": 1.25}"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_class_cost_ns.chain"));
    set_path(doc, "gc_class_cost_ns", parse("{\"chain\": 0.75, \"array_element\": 1.25}"));
    p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_int_equal(p->has_gc_class_cost, 1);
    assert_true(p->gc_cost_chain_ns == 0.75 && p->gc_cost_array_element_ns == 1.25);
    out = gcs_profile_to_json(p);
    json_t *cls = json_object_get(out, "gc_class_cost_ns");
    assert_true(json_real_value(json_object_get(cls, "chain")) == 0.75);
    assert_true(json_real_value(json_object_get(cls, "array_element")) == 1.25);
    /* a profile before 2026-11-27: no null_switch, no gc_stream_line_ns */
    assert_null(json_object_get(cls, "null_switch"));
    assert_int_equal(p->has_gc_null_switch, 0);
    assert_int_equal(p->has_gc_stream_line, 0);
    assert_null(json_object_get(out, "gc_stream_line_ns"));
    json_decref(out);
    gcs_profile_free(p);

    /* gc_class_cost_ns.null_switch and gc_stream_line_ns (2026-11-27):
     * optional, kept and saved; a negative switch cost, a sequential line
     * that costs nothing, a string, are refused with the key named */
    set_path(doc, "gc_class_cost_ns", parse("{\"chain\": 0.75, \"array_element\": 1.25, \"null_switch\": -2}"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_class_cost_ns.null_switch"));
    set_path(doc, "gc_class_cost_ns", parse("{\"chain\": 0.75, \"array_element\": 1.25, \"null_switch\": 4.5}"));
    set_path(doc, "gc_stream_line_ns", parse("0"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_stream_line_ns"));
    set_path(doc, "gc_stream_line_ns", parse("\"fast\""));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_stream_line_ns"));
    set_path(doc, "gc_stream_line_ns", parse("0.875"));
    p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_true(p->has_gc_null_switch && p->gc_cost_null_switch_ns == 4.5);
    assert_true(p->has_gc_stream_line && p->gc_stream_line_ns == 0.875);
    out = gcs_profile_to_json(p);
    assert_true(json_real_value(json_object_get(json_object_get(out, "gc_class_cost_ns"), "null_switch")) == 4.5);
    assert_true(json_real_value(json_object_get(out, "gc_stream_line_ns")) == 0.875);
    json_decref(out);
    /* gc_resident (2026-11-28): optional, both members needed, an overlap
     * of at least 1 and a positive stream price; kept and saved */
    assert_int_equal(p->has_gc_resident, 0);
    set_path(doc, "gc_resident", parse("{\"miss_overlap\": 2.5}"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_resident.stream_line_ns"));
    set_path(doc, "gc_resident", parse("{\"miss_overlap\": 0.5, \"stream_line_ns\": 0.25}"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_resident.miss_overlap"));
    set_path(doc, "gc_resident", parse("{\"miss_overlap\": 2.5, \"stream_line_ns\": 0}"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_resident.stream_line_ns"));
    set_path(doc, "gc_resident", parse("[2.5, 0.25]"));
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "gc_resident"));
    set_path(doc, "gc_resident", parse("{\"miss_overlap\": 2.5, \"stream_line_ns\": 0.25}"));
    gcs_profile *q = gcs_profile_from_json(doc, &err);
    if (!q)
        fail_msg("rejected: %s", err.msg);
    assert_true(q->has_gc_resident && q->gc_resident_overlap == 2.5 && q->gc_resident_stream_ns == 0.25);
    out = gcs_profile_to_json(q);
    assert_true(json_real_value(json_object_get(json_object_get(out, "gc_resident"), "miss_overlap")) == 2.5);
    assert_true(json_real_value(json_object_get(json_object_get(out, "gc_resident"), "stream_line_ns")) == 0.25);
    json_decref(out);
    gcs_profile_free(q);
    json_object_del(doc, "gc_resident");
    /* a null_switch needs the class costs it belongs to */
    p->has_gc_class_cost = 0;
    assert_int_equal(gcs_profile_validate(p, &err), -1);
    assert_non_null(strstr(err.msg, "gc_class_cost_ns.null_switch"));
    gcs_profile_free(p);
    json_decref(doc);
}

/* A scratch directory under /tmp, removed with its files at the end. */
/* "uncertainty" and "unreliable": accessors, a save and load unchanged,
 * members this gcscale does not define kept, clearing by prefix. */
static void test_fit_quality(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *base = load_base();
    gcs_profile *p = gcs_profile_from_json(base, &err);
    json_decref(base);
    assert_non_null(p);
    gcs_profile_uncertainty u;
    assert_int_equal(gcs_profile_get_uncertainty(p, "occupancy_ns.read[0]", &u), 0);
    assert_true(isnan(u.std_error) && u.n == -1);
    assert_null(gcs_profile_unreliable(p, "occupancy_ns.read[0]"));

    gcs_profile_uncertainty_init(&u);
    u.std_error = 1.5;
    u.ci95_lo = 17;
    u.ci95_hi = 23;
    u.residual_rms_rel = 0.2;
    u.n = 8;
    assert_int_equal(gcs_profile_set_uncertainty(p, "occupancy_ns.read[0]", &u), 0);
    gcs_profile_uncertainty_init(&u); /* all absent: an empty entry */
    assert_int_equal(gcs_profile_set_uncertainty(p, "occupancy_ns.rw[0]", &u), 0);
    assert_int_equal(gcs_profile_set_unreliable(p, "occupancy_ns.rw[1]", "fit found no\ncontention"), 0);
    assert_int_equal(gcs_profile_set_unreliable(p, "gc_cost_ns.steal", "no steals"), 0);
    assert_int_equal(gcs_profile_validate(p, &err), 0);

    json_t *doc = gcs_profile_to_json(p);
    json_object_set_new(json_object_get(json_object_get(doc, "uncertainty"), "occupancy_ns.read[0]"),
                        "condition_number", json_real(12.5));
    gcs_profile *q = gcs_profile_from_json(doc, &err);
    json_decref(doc);
    assert_non_null(q);
    assert_int_equal(gcs_profile_get_uncertainty(q, "occupancy_ns.read[0]", &u), 1);
    assert_true(u.std_error == 1.5 && u.ci95_lo == 17 && u.ci95_hi == 23 && u.residual_rms_rel == 0.2);
    assert_int_equal(u.n, 8);
    assert_int_equal(gcs_profile_get_uncertainty(q, "occupancy_ns.rw[0]", &u), 1);
    assert_true(isnan(u.std_error) && isnan(u.ci95_lo) && u.n == -1);
    /* the reason is one line */
    assert_non_null(gcs_profile_unreliable(q, "occupancy_ns.rw[1]"));
    assert_null(strchr(gcs_profile_unreliable(q, "occupancy_ns.rw[1]"), '\n'));
    const char *name, *reason;
    assert_int_equal(gcs_profile_unreliable_at(q, 0, &name, &reason), 0);
    assert_string_equal(name, "occupancy_ns.rw[1]");
    assert_int_equal(gcs_profile_unreliable_at(q, 1, &name, &reason), 0);
    assert_string_equal(name, "gc_cost_ns.steal");
    assert_string_equal(reason, "no steals");
    assert_int_equal(gcs_profile_unreliable_at(q, 2, &name, &reason), -1);
    json_t *again = gcs_profile_to_json(q);
    assert_true(json_real_value(json_object_get(json_object_get(json_object_get(again, "uncertainty"),
                                                                "occupancy_ns.read[0]"),
                                                "condition_number")) == 12.5);
    json_decref(again);

    gcs_profile_clear_fit_quality(q, "occupancy_ns.");
    assert_null(gcs_profile_unreliable(q, "occupancy_ns.rw[1]"));
    assert_int_equal(gcs_profile_get_uncertainty(q, "occupancy_ns.read[0]", &u), 0);
    assert_non_null(gcs_profile_unreliable(q, "gc_cost_ns.steal"));
    gcs_profile_clear_fit_quality(q, "");
    assert_int_equal(gcs_profile_unreliable_at(q, 0, &name, &reason), -1);
    gcs_profile_free(q);
    gcs_profile_free(p);
}

static char *make_tmpdir(void)
{
    char *dir = strdup("/tmp/gcscale-test-profile-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

static void test_round_trip(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_profile *p = gcs_profile_new(3);
    assert_non_null(p);
    snprintf(p->host, sizeof p->host, "roundtrip");
    snprintf(p->created, sizeof p->created, "2024-05-06T07:08:09Z");
    for (int i = 0; i < 3; i++) {
        p->nodes[i].id = 10 + i;
        p->nodes[i].ncpus = 2;
        p->nodes[i].cpus = malloc(2 * sizeof(int));
        p->nodes[i].cpus[0] = 2 * i;
        p->nodes[i].cpus[1] = 2 * i + 1;
        p->nodes[i].mem_bytes = (uint64_t)(i + 1) << 30;
        for (int j = 0; j < 3; j++) {
            p->latency_ns[GCS_ACCESS_READ][i * 3 + j] = 80.125 + 10 * i + j;
            p->latency_ns[GCS_ACCESS_RW][i * 3 + j] = 95.5 + 10 * i + j;
        }
        p->occupancy_ns[GCS_ACCESS_READ][i] = 12.75 + i;
        p->occupancy_ns[GCS_ACCESS_RW][i] = 20.0625 + i;
    }
    p->ncaches = 1;
    p->caches = calloc(1, sizeof *p->caches);
    p->caches[0] = (gcs_profile_cache){.level = 3, .size_bytes = 32u << 20, .line_bytes = 64,
                                       .ways = 16, .ncpus = 1, .cpus = malloc(sizeof(int))};
    snprintf(p->caches[0].type, sizeof p->caches[0].type, "unified");
    p->caches[0].cpus[0] = 5;
    p->bandwidth_gbs = calloc(3, sizeof(double));
    p->bandwidth_gbs[2] = 33.3;
    p->has_gc_cost = 1;
    p->gc_cost_object_ns = 2.5;
    p->gc_cost_steal_ns = 1000;
    p->has_gc_cost_worker = 1;
    p->gc_cost_worker_ns = 15000.5;
    snprintf(p->counters_source, sizeof p->counters_source, "none");
    snprintf(p->counters_reason, sizeof p->counters_reason, "perf_event_paranoid is 4");
    p->extra = json_pack("{s:s, s:[i,i]}", "sweep", "kept", "points", 1, 2);

    char *dir = make_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/machine.json", dir);
    if (gcs_profile_save(p, path, &err) < 0)
        fail_msg("save: %s", err.msg);
    assert_int_equal(count_entries(dir), 1); /* no temporary file left */

    gcs_profile *q = gcs_profile_load(path, &err);
    if (!q)
        fail_msg("load: %s", err.msg);
    assert_int_equal(q->nnodes, 3);
    assert_string_equal(q->host, "roundtrip");
    assert_string_equal(q->created, "2024-05-06T07:08:09Z");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(q->nodes[i].id, 10 + i);
        assert_int_equal(q->nodes[i].cpus[1], 2 * i + 1);
        assert_true(q->nodes[i].mem_bytes == (uint64_t)(i + 1) << 30);
        for (int j = 0; j < 3; j++) {
            assert_true(gcs_profile_latency(q, GCS_ACCESS_READ, i, j) == 80.125 + 10 * i + j);
            assert_true(gcs_profile_latency(q, GCS_ACCESS_RW, i, j) == 95.5 + 10 * i + j);
        }
        assert_true(q->occupancy_ns[GCS_ACCESS_READ][i] == 12.75 + i);
        assert_true(q->occupancy_ns[GCS_ACCESS_RW][i] == 20.0625 + i);
    }
    assert_int_equal(q->ncaches, 1);
    assert_string_equal(q->caches[0].type, "unified");
    assert_true(q->caches[0].size_bytes == 32u << 20);
    assert_int_equal(q->caches[0].cpus[0], 5);
    /* Reals are written with 10 significant digits. */
    assert_true(fabs(q->bandwidth_gbs[2] - 33.3) < 1e-9);
    assert_int_equal(q->has_gc_cost, 1);
    assert_true(q->gc_cost_object_ns == 2.5 && q->gc_cost_pointer_ns == 0 &&
                q->gc_cost_steal_ns == 1000);
    assert_true(q->has_gc_cost_worker == 1 && q->gc_cost_worker_ns == 15000.5);
    assert_string_equal(q->counters_reason, "perf_event_paranoid is 4");
    assert_true(json_equal(q->extra, p->extra));

    /* The document itself survives a second trip unchanged. */
    json_t *a = gcs_profile_to_json(p), *b = gcs_profile_to_json(q);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    gcs_profile_free(q);
    gcs_profile_free(p);
    remove_dir(dir);
}

static void test_save_refuses_and_leaves_nothing(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_profile *p = gcs_profile_new(1);
    p->latency_ns[GCS_ACCESS_READ][0] = 100;
    p->latency_ns[GCS_ACCESS_RW][0] = 120;
    char *dir = make_tmpdir();
    char path[512];

    snprintf(path, sizeof path, "%s/no/such/dir/machine.json", dir);
    assert_int_equal(gcs_profile_save(p, path, &err), -1);
    assert_non_null(strstr(err.msg, "no/such/dir/machine.json"));
    assert_int_equal(count_entries(dir), 0);

    /* An invalid profile is not written at all. */
    p->latency_ns[GCS_ACCESS_RW][0] = NAN;
    snprintf(path, sizeof path, "%s/machine.json", dir);
    assert_int_equal(gcs_profile_save(p, path, &err), -1);
    assert_non_null(strstr(err.msg, "latency_ns.rw[0][0]: not a finite number"));
    assert_int_equal(count_entries(dir), 0);
    assert_int_equal(access(path, F_OK), -1);

    gcs_profile_free(p);
    remove_dir(dir);
}

static void test_validate_in_memory(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_profile *p = gcs_profile_new(2);
    for (int k = 0; k < 4; k++) {
        p->latency_ns[GCS_ACCESS_READ][k] = 100;
        p->latency_ns[GCS_ACCESS_RW][k] = 100;
    }
    assert_int_equal(gcs_profile_validate(p, &err), 0);
    p->occupancy_ns[GCS_ACCESS_READ][1] = INFINITY;
    assert_int_equal(gcs_profile_validate(p, &err), -1);
    assert_string_equal(err.msg, "occupancy_ns.read[1]: not a finite number");
    p->occupancy_ns[GCS_ACCESS_READ][1] = 10;
    p->nodes[1].id = 0;
    assert_int_equal(gcs_profile_validate(p, &err), -1);
    assert_non_null(strstr(err.msg, "nodes[1].id: duplicate node id 0"));
    p->nodes[1].id = 1;
    snprintf(p->counters_source, sizeof p->counters_source, "%s", "");
    assert_int_equal(gcs_profile_validate(p, &err), -1);
    assert_non_null(strstr(err.msg, "counters.source"));
    gcs_profile_free(p);
    assert_null(gcs_profile_new(0));
}

/* The node rules alone: calibrate checks the topology's layout with them
 * before it measures anything, when the matrices are still empty. */
static void test_check_nodes(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_profile *p = gcs_profile_new(3);
    int a[] = {0, 1}, b[] = {2};
    p->nodes[0].ncpus = 2, p->nodes[0].cpus = malloc(sizeof a), memcpy(p->nodes[0].cpus, a, sizeof a);
    p->nodes[1].ncpus = 1, p->nodes[1].cpus = malloc(sizeof b), memcpy(p->nodes[1].cpus, b, sizeof b);
    /* nodes[2] has no CPUs: a memory-only node is allowed. */
    assert_int_equal(gcs_profile_check_nodes(p, &err), 0);
    assert_int_equal(gcs_profile_validate(p, &err), -1); /* latencies are still 0 */
    p->nodes[2].ncpus = 2, p->nodes[2].cpus = malloc(sizeof a), memcpy(p->nodes[2].cpus, a, sizeof a);
    assert_int_equal(gcs_profile_check_nodes(p, &err), -1);
    assert_string_equal(err.msg, "nodes[2].cpus: CPU 0 also belongs to nodes[0]");
    gcs_profile_free(p);
    assert_int_equal(gcs_profile_check_nodes(NULL, &err), -1);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_load_errors(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    char *dir = make_tmpdir();
    char path[512];

    snprintf(path, sizeof path, "%s/missing.json", dir);
    assert_null(gcs_profile_load(path, &err));
    assert_non_null(strstr(err.msg, "missing.json: cannot read: No such file"));

    assert_null(gcs_profile_load(dir, &err));
    assert_non_null(strstr(err.msg, "cannot read: Is a directory"));

    snprintf(path, sizeof path, "%s/truncated.json", dir);
    char *half = strndup(base_doc, strlen(base_doc) / 2);
    write_file(path, half);
    free(half);
    assert_null(gcs_profile_load(path, &err));
    assert_non_null(strstr(err.msg, "truncated.json: malformed JSON at line 1"));

    /* Beyond double range: JSON itself can't carry it. */
    snprintf(path, sizeof path, "%s/overflow.json", dir);
    write_file(path, "{\"format\": \"gcscale-machine\", \"version\": 1, \"nodes\": 1e400}");
    assert_null(gcs_profile_load(path, &err));
    assert_non_null(strstr(err.msg, "overflow.json: malformed JSON"));

    snprintf(path, sizeof path, "%s/dup.json", dir);
    write_file(path, "{\"format\": \"gcscale-machine\", \"version\": 1, \"version\": 2}");
    assert_null(gcs_profile_load(path, &err));
    assert_non_null(strstr(err.msg, "duplicate"));

    snprintf(path, sizeof path, "%s/invalid.json", dir);
    json_t *doc = load_base();
    set_path(doc, "occupancy_ns.read.1", json_integer(-5));
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    json_decref(doc);
    assert_null(gcs_profile_load(path, &err));
    assert_non_null(strstr(err.msg, "invalid.json: occupancy_ns.read[1]: negative value -5"));

    remove_dir(dir);
}

static void test_reference_profiles(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    gcs_profile *o2k = gcs_profile_load("data/machines/o2k.json", &err);
    if (!o2k)
        fail_msg("o2k: %s", err.msg);
    assert_int_equal(o2k->nnodes, 32);
    int ncpus = 0;
    for (int i = 0; i < o2k->nnodes; i++) {
        assert_int_equal(o2k->nodes[i].ncpus, 2);
        ncpus += o2k->nodes[i].ncpus;
        for (int j = 0; j < o2k->nnodes; j++) {
            assert_true(gcs_profile_latency(o2k, GCS_ACCESS_READ, i, j) == (i == j ? 270 : 590));
            assert_true(gcs_profile_latency(o2k, GCS_ACCESS_RW, i, j) == (i == j ? 850 : 1400));
        }
        assert_true(o2k->occupancy_ns[GCS_ACCESS_READ][i] == 230);
        assert_true(o2k->occupancy_ns[GCS_ACCESS_RW][i] == 490);
    }
    assert_int_equal(ncpus, 64);
    assert_int_equal(o2k->has_gc_cost, 0);
    assert_non_null(json_object_get(o2k->extra, "source"));
    gcs_profile_free(o2k);

    gcs_profile *e10k = gcs_profile_load("data/machines/e10k.json", &err);
    if (!e10k)
        fail_msg("e10k: %s", err.msg);
    assert_int_equal(e10k->nnodes, 16);
    for (int i = 0; i < e10k->nnodes; i++) {
        assert_int_equal(e10k->nodes[i].ncpus, 4);
        for (int j = 0; j < e10k->nnodes; j++) {
            assert_true(gcs_profile_latency(e10k, GCS_ACCESS_READ, i, j) == 560);
            assert_true(gcs_profile_latency(e10k, GCS_ACCESS_RW, i, j) == 610);
        }
        assert_true(e10k->occupancy_ns[GCS_ACCESS_READ][i] == 250);
        assert_true(e10k->occupancy_ns[GCS_ACCESS_RW][i] == 420);
    }
    assert_int_equal(e10k->has_gc_cost, 0);
    assert_non_null(json_object_get(e10k->extra, "source"));
    gcs_profile_free(e10k);
}

static char *print_to_string(const gcs_profile *p, gcs_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    gcs_profile_print(p, fp, fmt);
    fclose(fp);
    return buf;
}

static void test_print(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *doc = load_base();
    set_path(doc, "nodes.0.cpus", parse("[8, 0, 3, 1, 2]"));
    set_path(doc, "nodes.1.cpus", parse("[5]"));
    gcs_profile *p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);

    char *text = print_to_string(p, GCS_FORMAT_TEXT);
    assert_non_null(strstr(text, "0-3,8"));
    assert_non_null(strstr(text, "1 GiB"));
    assert_non_null(strstr(text, "48 KiB"));
    assert_non_null(strstr(text, "read latency M1 (ns): rows = CPU node, columns = memory node"));
    assert_non_null(strstr(text, "RW latency M1 (ns)"));
    assert_non_null(strstr(text, "141.0"));
    assert_non_null(strstr(text, "51.50"));
    assert_non_null(strstr(text, "400.00"));
    assert_non_null(strstr(text, "other keys kept: measurement"));
    free(text);

    char *csv = print_to_string(p, GCS_FORMAT_CSV);
    assert_non_null(strstr(csv, "# nodes\nnode,cpus,ncpus,mem_bytes\n0,\"0-3,8\",5,1073741824\n"));
    assert_non_null(strstr(csv, "# read latency M1 (ns): rows = CPU node, columns = memory node\n"
                                "cpu_node,0,1\n0,90,140\n1,141,91\n"));
    assert_non_null(strstr(csv, "# RW latency M1"));
    free(csv);

    char *js = print_to_string(p, GCS_FORMAT_JSON);
    json_error_t jerr;
    json_t *printed = json_loads(js, 0, &jerr);
    assert_non_null(printed);
    json_t *expected = gcs_profile_to_json(p);
    assert_true(json_equal(printed, expected));
    json_decref(expected);
    json_decref(printed);
    free(js);

    /* Without gc costs the text says how to get them. */
    p->has_gc_cost = 0;
    text = print_to_string(p, GCS_FORMAT_TEXT);
    assert_non_null(strstr(text, "not calibrated (a hand-written profile?): run gcscale calibrate on the machine"));
    free(text);

    gcs_profile_free(p);
    json_decref(doc);
}

/* latency_full_random_ns and page_walk_ns: absent in an old profile (NaN
 * from the accessors, nothing written back); present, read, derived
 * (clamped at 0), saved and read again; a string in place of a matrix is
 * the reason it was not measured; a page_walk_ns that disagrees with its
 * source is refused. */
static void test_page_walks(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *doc = load_base();
    gcs_profile *p = gcs_profile_from_json(doc, &err);
    assert_non_null(p);
    for (int k = 0; k < GCS_PAGES_COUNT; k++) {
        assert_null(p->full_random_ns[k]);
        assert_true(isnan(gcs_profile_full_random_latency(p, (gcs_pages)k, 0, 0)));
        assert_true(isnan(gcs_profile_page_walk(p, (gcs_pages)k, 0, 0)));
    }
    json_t *out = gcs_profile_to_json(p);
    assert_null(json_object_get(out, "latency_full_random_ns"));
    assert_null(json_object_get(out, "page_walk_ns"));
    json_decref(out);
    gcs_profile_free(p);

    set_path(doc, "latency_full_random_ns",
             parse("{\"4k\": [[200, 260], [255, 210]], \"huge\": [[100, 150], [150, 85]]}"));
    p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_true(gcs_profile_full_random_latency(p, GCS_PAGES_4K, 0, 1) == 260);
    assert_true(gcs_profile_page_walk(p, GCS_PAGES_4K, 0, 0) == 110); /* 200 - M1 90 */
    assert_true(gcs_profile_page_walk(p, GCS_PAGES_HUGE, 1, 0) == 9);  /* 150 - 141 */
    assert_true(gcs_profile_page_walk(p, GCS_PAGES_HUGE, 1, 1) == 0);  /* 85 < M1 91 */
    assert_true(isnan(gcs_profile_page_walk(p, GCS_PAGES_HUGE, 2, 0)));
    out = gcs_profile_to_json(p);
    assert_true(json_number_value(json_array_get(json_array_get(
                    json_object_get(json_object_get(out, "page_walk_ns"), "4k"), 1), 0)) == 114);
    gcs_profile *again = gcs_profile_from_json(out, &err);
    if (!again)
        fail_msg("saved form rejected: %s", err.msg);
    assert_true(gcs_profile_full_random_latency(again, GCS_PAGES_HUGE, 1, 1) == 85);
    char *text = print_to_string(again, GCS_FORMAT_TEXT);
    assert_non_null(strstr(text, "read latency with page walks (ns)"));
    free(text);
    gcs_profile_free(again);

    /* Edited in one place and not the other. */
    set_path(out, "page_walk_ns.4k.1.0", json_real(99));
    assert_null(gcs_profile_from_json(out, &err));
    assert_non_null(strstr(err.msg, "page_walk_ns.4k[1][0]: 99 ns is not latency_full_random_ns.4k[1][0] "
                                    "- latency_ns.read[1][0] (at least 0) = 114 ns"));
    set_path(out, "page_walk_ns.4k", parse("\"not measured\""));
    assert_null(gcs_profile_from_json(out, &err));
    assert_non_null(strstr(err.msg, "page_walk_ns.4k: expected 2 rows"));
    json_decref(out);
    gcs_profile_free(p);

    /* No huge pages: the reason in place of the numbers, kept and printed. */
    const char *why = "not measured: transparent huge pages are unavailable here (THP mode \"never\")";
    set_path(doc, "latency_full_random_ns.huge", json_string(why));
    p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_null(p->full_random_ns[GCS_PAGES_HUGE]);
    assert_string_equal(p->full_random_note[GCS_PAGES_HUGE], why);
    assert_true(isnan(gcs_profile_page_walk(p, GCS_PAGES_HUGE, 0, 0)));
    out = gcs_profile_to_json(p);
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "page_walk_ns"), "huge")),
                        why);
    json_decref(out);
    for (int f = 0; f < 2; f++) {
        text = print_to_string(p, f ? GCS_FORMAT_CSV : GCS_FORMAT_TEXT);
        assert_non_null(strstr(text, why));
        free(text);
    }
    gcs_profile_free(p);
    json_decref(doc);
}

/* The dependent-load curve (2026-11-28): read, interpolated in log(size)
 * with its end points beyond its ends, written back, printed; each rule of
 * its shape refused with a line naming the member. */
/* The residency curve (gc_residency, 2026-11-29): read, interpolated
 * straight from (0, 1) through its points and flat beyond, written back;
 * every rule refused with one message naming the point. */
static void test_residency_curve(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *doc = load_base();
    gcs_profile *p = gcs_profile_from_json(doc, &err);
    assert_non_null(p);
    assert_int_equal(p->nresidency, 0);
    assert_true(isnan(gcs_profile_residency(p, 1)));
    gcs_profile_free(p);

    set_path(doc, "gc_residency", parse("{\"footprint_llc\": [0.5, 1, 2, 4], \"resident\": [1, 0.9, 0.7, 0]}"));
    p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_int_equal(p->nresidency, 4);
    assert_true(gcs_profile_residency(p, 0) == 1);
    assert_true(gcs_profile_residency(p, 0.25) == 1);               /* (0, 1) to (0.5, 1) */
    assert_true(fabs(gcs_profile_residency(p, 0.75) - 0.95) < 1e-12); /* halfway to (1, 0.9) */
    assert_true(fabs(gcs_profile_residency(p, 1.5) - 0.8) < 1e-12);
    assert_true(fabs(gcs_profile_residency(p, 3) - 0.35) < 1e-12);
    assert_true(gcs_profile_residency(p, 10) == 0);                  /* beyond the last: its share */
    json_t *out = gcs_profile_to_json(p);
    gcs_profile *again = gcs_profile_from_json(out, &err);
    if (!again)
        fail_msg("saved form rejected: %s", err.msg);
    assert_int_equal(again->nresidency, 4);
    assert_true(again->residency_footprint[2] == 2 && again->residency_resident[1] == 0.9);
    char *text = print_to_string(again, GCS_FORMAT_TEXT);
    assert_non_null(strstr(text, "residency: the share of a heap's lines in the LLC"));
    free(text);
    gcs_profile_free(again);
    json_decref(out);
    gcs_profile_free(p);

    static const struct {
        const char *value, *message;
    } bad[] = {
        {"[1]", "gc_residency: expected an object"},
        {"{\"resident\": [1]}", "gc_residency.footprint_llc: expected an array"},
        {"{\"footprint_llc\": [1, 2], \"resident\": [1]}", "gc_residency: 2 footprints but 1 shares"},
        {"{\"footprint_llc\": [2, 1], \"resident\": [1, 0.5]}", "gc_residency.footprint_llc[1]: 1, expected multiples"},
        {"{\"footprint_llc\": [0], \"resident\": [1]}", "gc_residency.footprint_llc[0]: 0"},
        {"{\"footprint_llc\": [65], \"resident\": [0]}", "gc_residency.footprint_llc[0]: 65"},
        {"{\"footprint_llc\": [1], \"resident\": [1.5]}", "gc_residency.resident[0]: 1.5, expected shares in [0, 1]"},
        {"{\"footprint_llc\": [1, 2], \"resident\": [0.5, 0.6]}", "gc_residency.resident[1]: 0.6"},
        {"{\"footprint_llc\": [1, 2, 3, 4, 5, 6, 7, 8, 9], \"resident\": [1, 1, 1, 1, 1, 1, 1, 1, 1]}",
         "gc_residency.footprint_llc: 9 points, expected 1 to 8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set_path(doc, "gc_residency", parse(bad[i].value));
        assert_null(gcs_profile_from_json(doc, &err));
        if (!strstr(err.msg, bad[i].message))
            fail_msg("%s: said '%s', expected '%s'", bad[i].value, err.msg, bad[i].message);
    }
    json_decref(doc);
}

static void test_dependent_load(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    json_t *doc = load_base();
    gcs_profile *p = gcs_profile_from_json(doc, &err);
    assert_non_null(p);
    assert_int_equal(p->ndependent_load, 0);
    assert_true(isnan(gcs_profile_dependent_load(p, 1e6)));
    gcs_profile_free(p);

    set_path(doc, "dependent_load_ns", parse("{\"size_bytes\": [1000, 4000, 16000], \"ns\": [10, 30, 90]}"));
    p = gcs_profile_from_json(doc, &err);
    if (!p)
        fail_msg("rejected: %s", err.msg);
    assert_int_equal(p->ndependent_load, 3);
    assert_true(gcs_profile_dependent_load(p, 500) == 10);   /* below the first: the first */
    assert_true(gcs_profile_dependent_load(p, 1e9) == 90);   /* beyond the last: the last */
    assert_true(gcs_profile_dependent_load(p, 4000) == 30);  /* on a point */
    assert_true(fabs(gcs_profile_dependent_load(p, 2000) - 20) < 1e-9);  /* halfway in log size */
    assert_true(fabs(gcs_profile_dependent_load(p, 8000) - 60) < 1e-9);
    json_t *out = gcs_profile_to_json(p);
    gcs_profile *again = gcs_profile_from_json(out, &err);
    if (!again)
        fail_msg("saved form rejected: %s", err.msg);
    assert_int_equal(again->ndependent_load, 3);
    assert_true(again->dependent_load_bytes[2] == 16000 && again->dependent_load_ns[1] == 30);
    char *text = print_to_string(again, GCS_FORMAT_TEXT);
    assert_non_null(strstr(text, "dependent load on 4 KiB pages"));
    free(text);
    gcs_profile_free(again);
    json_decref(out);
    gcs_profile_free(p);

    static const struct {
        const char *value, *message;
    } bad[] = {
        {"[1, 2]", "dependent_load_ns: expected an object"},
        {"{\"ns\": [10]}", "dependent_load_ns.size_bytes: expected an array"},
        {"{\"size_bytes\": [1000], \"ns\": 10}", "dependent_load_ns.ns: expected an array"},
        {"{\"size_bytes\": [], \"ns\": []}", "dependent_load_ns.size_bytes: 0 points"},
        {"{\"size_bytes\": [1000, 2000], \"ns\": [10]}", "dependent_load_ns: 2 sizes but 1 latencies"},
        {"{\"size_bytes\": [1000, \"x\"], \"ns\": [10, 20]}", "dependent_load_ns.size_bytes[1]: expected a number"},
        {"{\"size_bytes\": [2000, 1000], \"ns\": [10, 20]}", "dependent_load_ns.size_bytes[1]: 1000, expected sizes > 0 and increasing"},
        {"{\"size_bytes\": [0], \"ns\": [10]}", "dependent_load_ns.size_bytes[0]: 0"},
        {"{\"size_bytes\": [1000], \"ns\": [0]}", "dependent_load_ns.ns[0]: 0, expected a latency > 0"},
        {"{\"size_bytes\": [1000], \"ns\": [-5]}", "dependent_load_ns.ns[0]: -5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set_path(doc, "dependent_load_ns", parse(bad[i].value));
        assert_null(gcs_profile_from_json(doc, &err));
        if (!strstr(err.msg, bad[i].message))
            fail_msg("%s: said '%s', expected '%s'", bad[i].value, err.msg, bad[i].message);
    }
    /* more points than a sweep has */
    json_t *many = json_pack("{s:[], s:[]}", "size_bytes", "ns");
    for (int i = 0; i <= GCS_PROFILE_DEPENDENT_MAX; i++) {
        json_array_append_new(json_object_get(many, "size_bytes"), json_real(1000.0 * (i + 1)));
        json_array_append_new(json_object_get(many, "ns"), json_real(10));
    }
    set_path(doc, "dependent_load_ns", many);
    assert_null(gcs_profile_from_json(doc, &err));
    assert_non_null(strstr(err.msg, "97 points, expected 1 to 96"));
    /* the setter: the same rules, the profile unchanged on refusal */
    set_path(doc, "dependent_load_ns", NULL);
    p = gcs_profile_from_json(doc, &err);
    assert_non_null(p);
    double sizes[2] = {1000, 1000}, ns[2] = {5, 6};
    assert_int_equal(gcs_profile_set_dependent_load(p, sizes, ns, 2, &err), -1);
    assert_int_equal(p->ndependent_load, 0);
    sizes[1] = 2000;
    assert_int_equal(gcs_profile_set_dependent_load(p, sizes, ns, 2, &err), 0);
    assert_true(gcs_profile_dependent_load(p, 2000) == 6);
    gcs_profile_free(p);
    json_decref(doc);
}

/* The effective LLC off a sweep staircase: the dev VM's recorded points
 * around its edge (12 MiB at 12.35 ns, 16 MiB at 90.1 ns, memory 137 ns). */
static void test_llc_from_sweep(void **state)
{
    (void)state;
    double mib = 1048576.0;
    double size[] = {1 * mib, 6 * mib, 12 * mib, 16 * mib, 24 * mib, 64 * mib, 1024 * mib};
    double lat[] = {5.7, 11.3, 12.35, 90.1, 134.7, 136.0, 137.0};
    double llc, hit;
    assert_int_equal(gcs_profile_llc_from_sweep(size, lat, 7, &llc, &hit), 0);
    assert_true(hit == 11.3);                 /* the plateau at half the edge */
    assert_true(llc > 12 * mib && llc < 16 * mib);
    /* crossing 74.15 ns between 12.35 and 90.1: f = 0.795 in log(size) */
    assert_true(fabs(llc - 12 * mib * pow(16.0 / 12.0, (74.15 - 12.35) / (90.1 - 12.35))) < 1);
    /* no plateau below half the memory latency: no LLC claimed */
    double flat[] = {120, 130, 137, 137, 137, 137, 137};
    assert_int_equal(gcs_profile_llc_from_sweep(size, flat, 7, &llc, &hit), -1);
    /* sizes out of order are refused */
    double bad[] = {1 * mib, 1 * mib, 12 * mib, 16 * mib, 24 * mib, 64 * mib, 1024 * mib};
    assert_int_equal(gcs_profile_llc_from_sweep(bad, lat, 7, &llc, &hit), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_document_loads),
        cmocka_unit_test(test_validation_names_the_key),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_optional_keys),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_save_refuses_and_leaves_nothing),
        cmocka_unit_test(test_validate_in_memory),
        cmocka_unit_test(test_check_nodes),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_reference_profiles),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_fit_quality),
        cmocka_unit_test(test_page_walks),
        cmocka_unit_test(test_llc_from_sweep),
        cmocka_unit_test(test_dependent_load),
        cmocka_unit_test(test_residency_curve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
