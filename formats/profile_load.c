/* profile_load.c -- the machine profile's JSON reader: the document's
 * shape (gcs_profile_from_json, gcs_profile_load).
 *
 * The JSON form is described for users in docs/machine-profile.md (the
 * project's model notes fix it, section 3).  Loading is done in two passes:
 * gcs_profile_from_json() checks the document's shape (keys present, types,
 * array sizes) and copies it into a gcs_profile; gcs_profile_validate()
 * (profile_validate.c) then checks the values.  A profile built in memory by
 * calibrate goes through the same value checks, so one set of rules (and
 * one wording of the messages, which always start with the JSON key) covers
 * both.
 *
 * Here: the keys a field of gcs_profile holds (modelled_keys; the others
 * are kept in extra as they are, read_extra), the readers of JSON values
 * whose messages name the key (three of them, _gcs_profile_json_type_name,
 * _gcs_profile_int_value and _gcs_profile_number_value, also serve
 * profile_validate.c's checks of the uncertainty and unreliable objects),
 * the required keys (nodes, caches, latency_ns, occupancy_ns) and the
 * optional ones (read_optional; latency with page walks, read_page_walks).
 * A new key is read in read_optional and named in modelled_keys
 * (profile_internal.h lists the other files it touches). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/profile.h"
#include "../common/internal.h"
#define GCS_PROFILE_FILES
#include "profile_internal.h"

/* The top-level keys a field of gcs_profile holds; any other key of a
 * document is kept in extra as it is (read_extra) and written back
 * (gcs_profile_to_json, profile_save.c). */
static const char *const modelled_keys[] = {
    "format", "version", "host", "created", "tool_version", "nodes", "caches",
    "latency_ns", "occupancy_ns", "bandwidth_gbs", "gc_cost_ns", "gc_steals", "gc_miss_overlap", "gc_class_cost_ns", "gc_coord",
    "gc_line_transfer_ns", "gc_mark_transfer_ns", "gc_mark_transfer_cached_ns", "gc_stream_line_ns", "gc_resident", "gc_residency", "dependent_load_ns", "counters",
    "llc_effective_bytes", "llc_hit_ns",
    "latency_full_random_ns", "page_walk_ns",
};

int _gcs_profile_is_modelled_key(const char *key)
{
    for (size_t i = 0; i < sizeof modelled_keys / sizeof modelled_keys[0]; i++)
        if (strcmp(key, modelled_keys[i]) == 0)
            return 1;
    return 0;
}

/* ---- reading the document's shape ----------------------------------------------- */

const char *_gcs_profile_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:  return "an object";
    case JSON_ARRAY:   return "an array";
    case JSON_STRING:  return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL:    return "a real number";
    case JSON_TRUE:    return "true";
    case JSON_FALSE:   return "false";
    case JSON_NULL:    return "null";
    }
    return "something else";
}

/* Looks up a required member; key is the full name used in messages. */
static json_t *require(const json_t *obj, const char *member, const char *key, gcs_err *err)
{
    json_t *v = json_object_get(obj, member);
    if (!v)
        gcs_err_set(err, "%s: required key is missing", key);
    return v;
}

static json_t *require_type(const json_t *obj, const char *member, const char *key,
                            json_type type, const char *type_name, gcs_err *err)
{
    json_t *v = require(obj, member, key, err);
    if (v && json_typeof(v) != type) {
        gcs_err_set(err, "%s: expected %s, found %s", key, type_name, _gcs_profile_json_type_name(v));
        return NULL;
    }
    return v;
}

int _gcs_profile_int_value(const json_t *v, const char *key, long long min, long long max, long long *out,
                           gcs_err *err)
{
    if (!json_is_integer(v)) {
        gcs_err_set(err, "%s: expected an integer, found %s", key, _gcs_profile_json_type_name(v));
        return -1;
    }
    long long x = json_integer_value(v);
    if (x < min) {
        if (min == 0)
            gcs_err_set(err, "%s: negative value %lld", key, x);
        else
            gcs_err_set(err, "%s: must be at least %lld, found %lld", key, min, x);
        return -1;
    }
    if (x > max) {
        gcs_err_set(err, "%s: value %lld is too large (at most %lld)", key, x, max);
        return -1;
    }
    *out = x;
    return 0;
}

static int int_member(const json_t *obj, const char *member, const char *key, long long min,
                      long long max, long long *out, gcs_err *err)
{
    json_t *v = require(obj, member, key, err);
    return v ? _gcs_profile_int_value(v, key, min, max, out, err) : -1;
}

/* Numbers are only type-checked here; their ranges are value rules and live
 * in gcs_profile_validate(). */
int _gcs_profile_number_value(const json_t *v, const char *key, double *out, gcs_err *err)
{
    if (!json_is_number(v)) {
        gcs_err_set(err, "%s: expected a number, found %s", key, _gcs_profile_json_type_name(v));
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

/* An optional string member copied into buf; longer than buf is an error
 * rather than a silent truncation. */
static int string_member(const json_t *obj, const char *member, const char *key, int required,
                         char *buf, size_t size, gcs_err *err)
{
    json_t *v = json_object_get(obj, member);
    if (!v || json_is_null(v)) {
        if (required) {
            gcs_err_set(err, "%s: required key is missing", key);
            return -1;
        }
        buf[0] = '\0';
        return 0;
    }
    if (!json_is_string(v)) {
        gcs_err_set(err, "%s: expected a string, found %s", key, _gcs_profile_json_type_name(v));
        return -1;
    }
    if (json_string_length(v) >= size) {
        gcs_err_set(err, "%s: longer than %zu characters", key, size - 1);
        return -1;
    }
    snprintf(buf, size, "%s", json_string_value(v));
    return 0;
}

static int cpu_list(const json_t *obj, const char *key, int **cpus, int *ncpus, gcs_err *err)
{
    json_t *arr = require_type(obj, "cpus", key, JSON_ARRAY, "an array of CPU numbers", err);
    if (!arr)
        return -1;
    size_t n = json_array_size(arr);
    *ncpus = 0;
    *cpus = NULL;
    if (n == 0)
        return 0;
    *cpus = calloc(n, sizeof **cpus);
    if (!*cpus) {
        gcs_err_set(err, "%s: out of memory", key);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char k[96];
        long long cpu;
        snprintf(k, sizeof k, "%s[%zu]", key, i);
        if (_gcs_profile_int_value(json_array_get(arr, i), k, 0, INT32_MAX, &cpu, err) < 0)
            return -1;
        (*cpus)[i] = (int)cpu;
        *ncpus = (int)i + 1;
    }
    return 0;
}

/* An array of exactly n numbers, one per memory node. */
static int node_vector(const json_t *arr, const char *key, int n, double *out, gcs_err *err)
{
    if (!json_is_array(arr)) {
        gcs_err_set(err, "%s: expected an array of %d numbers (one per memory node), found %s",
                    key, n, _gcs_profile_json_type_name(arr));
        return -1;
    }
    if (json_array_size(arr) != (size_t)n) {
        gcs_err_set(err, "%s: expected %d entries (one per memory node), found %zu", key, n,
                    json_array_size(arr));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char k[96];
        snprintf(k, sizeof k, "%s[%d]", key, i);
        if (_gcs_profile_number_value(json_array_get(arr, (size_t)i), k, &out[i], err) < 0)
            return -1;
    }
    return 0;
}

/* n rows (CPU nodes) of n entries (memory nodes), stored row-major. */
static int node_matrix(const json_t *arr, const char *key, int n, double *out, gcs_err *err)
{
    if (!json_is_array(arr)) {
        gcs_err_set(err, "%s: expected %d rows (one per CPU node), found %s", key, n,
                    _gcs_profile_json_type_name(arr));
        return -1;
    }
    if (json_array_size(arr) != (size_t)n) {
        gcs_err_set(err, "%s: expected %d rows (one per CPU node), found %zu", key, n,
                    json_array_size(arr));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char k[96];
        snprintf(k, sizeof k, "%s[%d]", key, i);
        if (node_vector(json_array_get(arr, (size_t)i), k, n, out + (size_t)i * (size_t)n, err) < 0)
            return -1;
    }
    return 0;
}

static int read_nodes(const json_t *doc, gcs_profile **out, gcs_err *err)
{
    json_t *arr = require_type(doc, "nodes", "nodes", JSON_ARRAY, "an array", err);
    if (!arr)
        return -1;
    size_t n = json_array_size(arr);
    if (n == 0) {
        gcs_err_set(err, "nodes: at least one node is required");
        return -1;
    }
    if (n > MAX_NODES) {
        gcs_err_set(err, "nodes: %zu nodes exceed the limit of %d", n, MAX_NODES);
        return -1;
    }
    gcs_profile *p = gcs_profile_new((int)n);
    if (!p) {
        gcs_err_set(err, "nodes: out of memory");
        return -1;
    }
    *out = p;
    for (size_t i = 0; i < n; i++) {
        json_t *node = json_array_get(arr, i);
        gcs_profile_node *nd = &p->nodes[i];
        char key[64], k[96];
        long long v;
        snprintf(key, sizeof key, "nodes[%zu]", i);
        if (!json_is_object(node)) {
            gcs_err_set(err, "%s: expected an object, found %s", key, _gcs_profile_json_type_name(node));
            return -1;
        }
        snprintf(k, sizeof k, "%s.id", key);
        if (int_member(node, "id", k, 0, INT32_MAX, &v, err) < 0)
            return -1;
        nd->id = (int)v;
        snprintf(k, sizeof k, "%s.cpus", key);
        if (cpu_list(node, k, &nd->cpus, &nd->ncpus, err) < 0)
            return -1;
        snprintf(k, sizeof k, "%s.mem_bytes", key);
        if (int_member(node, "mem_bytes", k, 0, INT64_MAX, &v, err) < 0)
            return -1;
        nd->mem_bytes = (uint64_t)v;
    }
    return 0;
}

static int read_caches(const json_t *doc, gcs_profile *p, gcs_err *err)
{
    json_t *arr = require_type(doc, "caches", "caches", JSON_ARRAY, "an array", err);
    if (!arr)
        return -1;
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    p->caches = calloc(n, sizeof *p->caches);
    if (!p->caches) {
        gcs_err_set(err, "caches: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(arr, i);
        gcs_profile_cache *pc = &p->caches[i];
        char key[64], k[96];
        long long v;
        p->ncaches = (int)i + 1;
        snprintf(key, sizeof key, "caches[%zu]", i);
        if (!json_is_object(c)) {
            gcs_err_set(err, "%s: expected an object, found %s", key, _gcs_profile_json_type_name(c));
            return -1;
        }
        snprintf(k, sizeof k, "%s.level", key);
        if (int_member(c, "level", k, 1, INT32_MAX, &v, err) < 0)
            return -1;
        pc->level = (int)v;
        snprintf(k, sizeof k, "%s.type", key);
        if (string_member(c, "type", k, 1, pc->type, sizeof pc->type, err) < 0)
            return -1;
        snprintf(k, sizeof k, "%s.size_bytes", key);
        if (int_member(c, "size_bytes", k, 1, INT64_MAX, &v, err) < 0)
            return -1;
        pc->size_bytes = (uint64_t)v;
        snprintf(k, sizeof k, "%s.line_bytes", key);
        if (int_member(c, "line_bytes", k, 1, INT32_MAX, &v, err) < 0)
            return -1;
        pc->line_bytes = (int)v;
        snprintf(k, sizeof k, "%s.ways", key);
        if (int_member(c, "ways", k, 0, INT32_MAX, &v, err) < 0)
            return -1;
        pc->ways = (int)v;
        snprintf(k, sizeof k, "%s.cpus", key);
        if (cpu_list(c, k, &pc->cpus, &pc->ncpus, err) < 0)
            return -1;
    }
    return 0;
}

/* latency_ns and occupancy_ns: an object with "read" and "rw" members. */
static int read_per_access(const json_t *doc, const char *member, int matrix, gcs_profile *p,
                           gcs_err *err)
{
    json_t *obj = require_type(doc, member, member, JSON_OBJECT,
                               "an object with \"read\" and \"rw\"", err);
    if (!obj)
        return -1;
    /* The rows and vectors below are read into the matrices gcs_profile_new
     * allocated for p->nnodes nodes (read_nodes); node_matrix and
     * node_vector refuse any other length, so they never write past them. */
    gcs_assert_internal(p->nnodes >= 1 && p->latency_ns[0] && p->occupancy_ns[0]);
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        char key[64];
        snprintf(key, sizeof key, "%s.%s", member, access_keys[a]);
        json_t *v = require(obj, access_keys[a], key, err);
        if (!v)
            return -1;
        int rc = matrix ? node_matrix(v, key, p->nnodes, p->latency_ns[a], err)
                        : node_vector(v, key, p->nnodes, p->occupancy_ns[a], err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int parse_coord(const json_t *coord, gcs_profile *p, gcs_err *err)
{
    if (!coord || json_is_null(coord))
        return 0;
    if (!json_is_object(coord)) {
        gcs_err_set(err, "gc_coord: expected an object, found %s", _gcs_profile_json_type_name(coord));
        return -1;
    }
    char key[64];
    for (int l = 0; l < 3; l++) {
        snprintf(key, sizeof key, "gc_coord.%s", coord_laws[l]);
        json_t *law = require_type(coord, coord_laws[l], key, JSON_OBJECT, "an object", err);
        if (!law)
            return -1;
        for (int b = 0; b < 2; b++) {
            snprintf(key, sizeof key, "gc_coord.%s.%s", coord_laws[l], b ? "b" : "a");
            json_t *v = require(law, b ? "b" : "a", key, err);
            if (!v || _gcs_profile_number_value(v, key, _gcs_profile_coord_member(&p->coord, l, b), err) < 0)
                return -1;
        }
    }
    json_t *v = require(coord, "spread_round_ns", "gc_coord.spread_round_ns", err);
    if (!v || _gcs_profile_number_value(v, "gc_coord.spread_round_ns", &p->coord.spread_ns, err) < 0)
        return -1;
    v = require(coord, "steal_attempt_ns", "gc_coord.steal_attempt_ns", err);
    if (!v || _gcs_profile_number_value(v, "gc_coord.steal_attempt_ns", &p->coord.attempt_ns, err) < 0)
        return -1;
    /* since 2026-11-29: absent or null in older profiles (0, not measured) */
    p->coord.attempts_per_search = 0;
    v = json_object_get(coord, "attempts_per_search");
    if (v && !json_is_null(v) &&
        _gcs_profile_number_value(v, "gc_coord.attempts_per_search", &p->coord.attempts_per_search, err) < 0)
        return -1;
    long long maxp;
    v = require(coord, "max_threads", "gc_coord.max_threads", err);
    if (!v || _gcs_profile_int_value(v, "gc_coord.max_threads", 1, 1 << 20, &maxp, err) < 0)
        return -1;
    p->coord.max_threads = (int)maxp;
    p->has_gc_coord = 1;
    return 0;
}

/* An optional curve under `key`: {"m0": [...], "m1": [...]}, two arrays of
 * numbers of one length, 1 to max, into d0 and d1 (*n their length; what
 * each holds, in the plural, names0 and names1 in the message of a length
 * mismatch); absent or null leaves *n 0.  Its values' rules are the
 * caller's. */
static int parse_curve(const json_t *o, const char *key, const char *m0, const char *m1, const char *names0,
                       const char *names1, double *d0, double *d1, int max, int *n_out, gcs_err *err)
{
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        gcs_err_set(err, "%s: expected an object with \"%s\" and \"%s\", found %s", key, m0, m1,
                    _gcs_profile_json_type_name(o));
        return -1;
    }
    const char *member[2] = {m0, m1};
    double *dest[2] = {d0, d1};
    size_t n[2];
    for (int m = 0; m < 2; m++) {
        json_t *a = json_object_get(o, member[m]);
        if (!json_is_array(a)) {
            gcs_err_set(err, "%s.%s: expected an array of numbers, found %s", key, member[m],
                        a ? _gcs_profile_json_type_name(a) : "nothing");
            return -1;
        }
        n[m] = json_array_size(a);
        if (n[m] < 1 || n[m] > (size_t)max) {
            gcs_err_set(err, "%s.%s: %zu points, expected 1 to %d", key, member[m], n[m], max);
            return -1;
        }
        for (size_t i = 0; i < n[m]; i++) {
            char name[96];
            snprintf(name, sizeof name, "%s.%s[%zu]", key, member[m], i);
            if (_gcs_profile_number_value(json_array_get(a, i), name, &dest[m][i], err) < 0)
                return -1;
        }
    }
    if (n[0] != n[1]) {
        gcs_err_set(err, "%s: %zu %s but %zu %s", key, n[0], names0, n[1], names1);
        return -1;
    }
    *n_out = (int)n[0];
    return 0;
}

/* An optional object of two required numbers, {"m1": n, "m2": n} under
 * `key` (gc_steals, gc_class_cost_ns): absent or null leaves *has 0. */
static int number_pair(const json_t *doc, const char *key, const char *m1, double *d1, const char *m2, double *d2,
                       int *has, gcs_err *err)
{
    json_t *o = json_object_get(doc, key);
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        gcs_err_set(err, "%s: expected an object with \"%s\" and \"%s\", found %s", key, m1, m2,
                    _gcs_profile_json_type_name(o));
        return -1;
    }
    const char *member[2] = {m1, m2};
    double *dest[2] = {d1, d2};
    for (int i = 0; i < 2; i++) {
        char path[96];
        snprintf(path, sizeof path, "%s.%s", key, member[i]);
        json_t *v = require(o, member[i], path, err);
        if (!v || _gcs_profile_number_value(v, path, dest[i], err) < 0)
            return -1;
    }
    *has = 1;
    return 0;
}

static int read_optional(const json_t *doc, gcs_profile *p, gcs_err *err)
{
    json_t *bw = json_object_get(doc, "bandwidth_gbs");
    if (bw && !json_is_null(bw)) {
        p->bandwidth_gbs = calloc((size_t)p->nnodes, sizeof *p->bandwidth_gbs);
        if (!p->bandwidth_gbs) {
            gcs_err_set(err, "bandwidth_gbs: out of memory");
            return -1;
        }
        if (node_vector(bw, "bandwidth_gbs", p->nnodes, p->bandwidth_gbs, err) < 0)
            return -1;
    }

    json_t *gc = json_object_get(doc, "gc_cost_ns");
    if (gc && !json_is_null(gc)) {
        if (!json_is_object(gc)) {
            gcs_err_set(err, "gc_cost_ns: expected an object with \"object\", \"pointer\" and "
                             "\"steal\", found %s", _gcs_profile_json_type_name(gc));
            return -1;
        }
        static const char *const members[] = {"object", "pointer", "steal"};
        double *dest[] = {&p->gc_cost_object_ns, &p->gc_cost_pointer_ns, &p->gc_cost_steal_ns};
        for (int i = 0; i < 3; i++) {
            char key[64];
            snprintf(key, sizeof key, "gc_cost_ns.%s", members[i]);
            json_t *v = require(gc, members[i], key, err);
            if (!v || _gcs_profile_number_value(v, key, dest[i], err) < 0)
                return -1;
        }
        /* All zero is what a profile written before the collector existed
         * contains: it means "not calibrated", not "free". */
        p->has_gc_cost = p->gc_cost_object_ns != 0 || p->gc_cost_pointer_ns != 0 ||
                         p->gc_cost_steal_ns != 0;
        json_t *w = json_object_get(gc, "worker"); /* optional: since 2026-11-29 */
        if (w && !json_is_null(w)) {
            if (_gcs_profile_number_value(w, "gc_cost_ns.worker", &p->gc_cost_worker_ns, err) < 0)
                return -1;
            p->has_gc_cost_worker = 1;
        }
    }

    if (number_pair(doc, "gc_steals", "a", &p->gc_steal_a, "b", &p->gc_steal_b, &p->has_gc_steals, err) < 0)
        return -1;

    json_t *overlap = json_object_get(doc, "gc_miss_overlap");
    if (overlap && !json_is_null(overlap)) {
        if (_gcs_profile_number_value(overlap, "gc_miss_overlap", &p->gc_miss_overlap, err) < 0)
            return -1;
        p->has_gc_overlap = 1;
    }

    if (number_pair(doc, "gc_class_cost_ns", "chain", &p->gc_cost_chain_ns, "array_element",
                    &p->gc_cost_array_element_ns, &p->has_gc_class_cost, err) < 0)
        return -1;
    /* its optional third member (2026-11-27): older profiles lack it */
    json_t *null_cost = p->has_gc_class_cost ? json_object_get(json_object_get(doc, "gc_class_cost_ns"), "null_switch")
                                             : NULL;
    if (null_cost && !json_is_null(null_cost)) {
        if (_gcs_profile_number_value(null_cost, "gc_class_cost_ns.null_switch", &p->gc_cost_null_switch_ns, err) < 0)
            return -1;
        p->has_gc_null_switch = 1;
    }
    json_t *stream_line = json_object_get(doc, "gc_stream_line_ns");
    if (stream_line && !json_is_null(stream_line)) {
        if (_gcs_profile_number_value(stream_line, "gc_stream_line_ns", &p->gc_stream_line_ns, err) < 0)
            return -1;
        p->has_gc_stream_line = 1;
    }
    if (number_pair(doc, "gc_resident", "miss_overlap", &p->gc_resident_overlap, "stream_line_ns",
                    &p->gc_resident_stream_ns, &p->has_gc_resident, err) < 0)
        return -1;
    json_t *transfer = json_object_get(doc, "gc_line_transfer_ns");
    if (transfer && !json_is_null(transfer)) {
        if (_gcs_profile_number_value(transfer, "gc_line_transfer_ns", &p->gc_line_transfer_ns, err) < 0)
            return -1;
        p->has_gc_line_transfer = 1;
    }
    json_t *mark_transfer = json_object_get(doc, "gc_mark_transfer_ns");
    if (mark_transfer && !json_is_null(mark_transfer)) {
        if (_gcs_profile_number_value(mark_transfer, "gc_mark_transfer_ns", &p->gc_mark_transfer_ns, err) < 0)
            return -1;
        p->has_gc_mark_transfer = 1;
    }
    json_t *mark_cached = json_object_get(doc, "gc_mark_transfer_cached_ns");
    if (mark_cached && !json_is_null(mark_cached)) {
        if (_gcs_profile_number_value(mark_cached, "gc_mark_transfer_cached_ns", &p->gc_mark_transfer_cached_ns,
                                      err) < 0)
            return -1;
        p->has_gc_mark_transfer_cached = 1;
    }

    if (parse_curve(json_object_get(doc, "dependent_load_ns"), "dependent_load_ns", "size_bytes", "ns", "sizes",
                    "latencies", p->dependent_load_bytes, p->dependent_load_ns, GCS_PROFILE_DEPENDENT_MAX, &p->ndependent_load,
                    err) < 0 ||
        parse_curve(json_object_get(doc, "gc_residency"), "gc_residency", "footprint_llc", "resident", "footprints",
                    "shares", p->residency_footprint, p->residency_resident, GCS_PROFILE_RESIDENCY_MAX, &p->nresidency,
                    err) < 0)
        return -1;

    json_t *llc = json_object_get(doc, "llc_effective_bytes"), *hit = json_object_get(doc, "llc_hit_ns");
    if ((llc && !json_is_null(llc)) || (hit && !json_is_null(hit))) {
        json_t *b = require(doc, "llc_effective_bytes", "llc_effective_bytes", err);
        json_t *h = b ? require(doc, "llc_hit_ns", "llc_hit_ns", err) : NULL;
        if (!h || _gcs_profile_number_value(b, "llc_effective_bytes", &p->llc_effective_bytes, err) < 0 ||
            _gcs_profile_number_value(h, "llc_hit_ns", &p->llc_hit_ns, err) < 0)
            return -1;
        p->has_llc_effective = 1;
    }

    if (parse_coord(json_object_get(doc, "gc_coord"), p, err) < 0)
        return -1;

    json_t *counters = json_object_get(doc, "counters");
    if (counters && !json_is_null(counters)) {
        if (!json_is_object(counters)) {
            gcs_err_set(err, "counters: expected an object, found %s", _gcs_profile_json_type_name(counters));
            return -1;
        }
        if (string_member(counters, "source", "counters.source", 1, p->counters_source,
                          sizeof p->counters_source, err) < 0 ||
            string_member(counters, "reason", "counters.reason", 0, p->counters_reason,
                          sizeof p->counters_reason, err) < 0)
            return -1;
    }

    if (string_member(doc, "host", "host", 0, p->host, sizeof p->host, err) < 0 ||
        string_member(doc, "created", "created", 0, p->created, sizeof p->created, err) < 0 ||
        string_member(doc, "tool_version", "tool_version", 0, p->tool_version,
                      sizeof p->tool_version, err) < 0)
        return -1;
    return 0;
}

/* "latency_full_random_ns" and "page_walk_ns": per page size a matrix, or a
 * string saying why it was not measured.  page_walk_ns is derived (what
 * gcs_profile_page_walk computes), so it is only checked: a file whose two
 * keys disagree was edited in one place and not the other. */
static int read_page_walks(const json_t *doc, gcs_profile *p, gcs_err *err)
{
    json_t *full = json_object_get(doc, "latency_full_random_ns");
    json_t *walk = json_object_get(doc, "page_walk_ns");
    if (full && json_is_null(full))
        full = NULL;
    if (walk && json_is_null(walk))
        walk = NULL;
    if (!full) {
        if (walk) {
            gcs_err_set(err, "page_walk_ns: present without latency_full_random_ns, which it is "
                             "derived from");
            return -1;
        }
        return 0;
    }
    const char *shape = "an object with \"4k\" and \"huge\" (a matrix, or a string saying why not "
                        "measured)";
    if (!json_is_object(full) || (walk && !json_is_object(walk))) {
        const json_t *bad = json_is_object(full) ? walk : full;
        gcs_err_set(err, "%s: expected %s, found %s", bad == full ? "latency_full_random_ns" :
                    "page_walk_ns", shape, _gcs_profile_json_type_name(bad));
        return -1;
    }
    for (int k = 0; k < GCS_PAGES_COUNT; k++) {
        char key[96];
        snprintf(key, sizeof key, "latency_full_random_ns.%s", pages_keys[k]);
        json_t *v = require(full, pages_keys[k], key, err);
        if (!v)
            return -1;
        if (json_is_string(v)) {
            if (string_member(full, pages_keys[k], key, 1, p->full_random_note[k],
                              sizeof p->full_random_note[k], err) < 0)
                return -1;
            if (!p->full_random_note[k][0]) {
                gcs_err_set(err, "%s: an empty string (say why it was not measured)", key);
                return -1;
            }
        } else {
            if (gcs_profile_alloc_full_random(p, (gcs_pages)k) < 0) {
                gcs_err_set(err, "%s: out of memory", key);
                return -1;
            }
            if (node_matrix(v, key, p->nnodes, p->full_random_ns[k], err) < 0)
                return -1;
        }
        if (!walk)
            continue;
        char wkey[96];
        snprintf(wkey, sizeof wkey, "page_walk_ns.%s", pages_keys[k]);
        json_t *w = require(walk, pages_keys[k], wkey, err);
        if (!w)
            return -1;
        if (!p->full_random_ns[k]) {
            if (!json_is_string(w)) {
                gcs_err_set(err, "%s: expected a string as %s is one, found %s", wkey, key,
                            _gcs_profile_json_type_name(w));
                return -1;
            }
            continue;
        }
        int n = p->nnodes;
        double *given = calloc((size_t)n * (size_t)n, sizeof *given);
        if (!given) {
            gcs_err_set(err, "%s: out of memory", wkey);
            return -1;
        }
        int rc = node_matrix(w, wkey, n, given, err);
        for (int i = 0; rc == 0 && i < n; i++)
            for (int j = 0; rc == 0 && j < n; j++) {
                double want = gcs_profile_page_walk(p, (gcs_pages)k, i, j);
                double got = given[(size_t)i * (size_t)n + (size_t)j];
                /* Saved to 10 significant digits, each of the two latencies
                 * and the walk: their rounding is far below this. */
                double tol = 1e-3 + 1e-6 * (fabs(gcs_profile_full_random_latency(p, (gcs_pages)k, i, j)) +
                                            fabs(gcs_profile_latency(p, GCS_ACCESS_READ, i, j)));
                if (isfinite(want) && !(fabs(got - want) <= tol)) {
                    gcs_err_set(err, "%s[%d][%d]: %g ns is not %s[%d][%d] - latency_ns.read[%d][%d] "
                                     "(at least 0) = %g ns", wkey, i, j, got, key, i, j, i, j, want);
                    rc = -1;
                }
            }
        free(given);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int read_extra(const json_t *doc, gcs_profile *p, gcs_err *err)
{
    const char *key;
    json_t *value;
    /* json_object_foreach takes a non-const object but only reads it. */
    json_object_foreach((json_t *)doc, key, value) {
        if (_gcs_profile_is_modelled_key(key))
            continue;
        if (!p->extra)
            p->extra = json_object();
        json_t *copy = json_deep_copy(value);
        if (!p->extra || !copy || json_object_set_new(p->extra, key, copy) < 0) {
            gcs_err_set(err, "%s: out of memory", key);
            return -1;
        }
    }
    return 0;
}

gcs_profile *gcs_profile_from_json(const json_t *doc, gcs_err *err)
{
    if (!json_is_object(doc)) {
        gcs_err_set(err, "expected a JSON object (a gcscale-machine profile), found %s",
                    doc ? _gcs_profile_json_type_name(doc) : "nothing");
        return NULL;
    }
    /* Format and version first: a document of another kind should be
     * reported as such, not as a pile of missing keys. */
    char format[64];
    if (string_member(doc, "format", "format", 1, format, sizeof format, err) < 0)
        return NULL;
    if (strcmp(format, GCS_PROFILE_FORMAT) != 0) {
        gcs_err_set(err, "format: expected \"%s\", found \"%s\"", GCS_PROFILE_FORMAT, format);
        return NULL;
    }
    long long version;
    if (int_member(doc, "version", "version", 0, INT32_MAX, &version, err) < 0)
        return NULL;
    if (version != GCS_PROFILE_VERSION) {
        gcs_err_set(err, "version: unsupported version %lld (this gcscale reads version %d)",
                    version, GCS_PROFILE_VERSION);
        return NULL;
    }

    gcs_profile *p = NULL;
    if (read_nodes(doc, &p, err) < 0 || read_caches(doc, p, err) < 0 ||
        read_per_access(doc, "latency_ns", 1, p, err) < 0 ||
        read_per_access(doc, "occupancy_ns", 0, p, err) < 0 || read_optional(doc, p, err) < 0 ||
        read_page_walks(doc, p, err) < 0 ||
        read_extra(doc, p, err) < 0 || gcs_profile_validate(p, err) < 0) {
        gcs_profile_free(p);
        return NULL;
    }
    return p;
}

gcs_profile *gcs_profile_load(const char *path, gcs_err *err)
{
    json_t *doc = gcs_json_read_file(path, err);
    if (!doc)
        return NULL;
    gcs_err inner;
    gcs_profile *p = gcs_profile_from_json(doc, &inner);
    json_decref(doc);
    if (!p)
        gcs_err_set(err, "%s: %s", path, inner.msg);
    return p;
}
