/* profile.c -- the machine profile document: allocation, JSON load with
 * strict validation, save.  Printing is profile_print.c, the fitted
 * constants' uncertainty and reliability profile_quality.c, where profiles
 * live profile_path.c, the effective LLC profile_llc.c.
 *
 * The JSON form is described for users in docs/machine-profile.md (the
 * project's model notes fix it, section 3).  Loading is done in two passes:
 * gcs_profile_from_json() checks the document's shape (keys present, types,
 * array sizes) and copies it into a gcs_profile; gcs_profile_validate() then
 * checks the values.  A profile built in memory by calibrate goes through the
 * same value checks, so one set of rules (and one wording of the messages,
 * which always start with the JSON key) covers both.
 *
 * Matrices and per-node arrays are indexed by position in "nodes", not by
 * node id: row i and column i belong to nodes[i].
 *
 * A file format of formats/: calls only common/ (errors, crash-safe files,
 * tables) and jansson, so that everything above may read profiles. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gcscale/profile.h"
#include "../common/internal.h"

/* Past these a value is a unit mistake (seconds written as ns, bytes as GB)
 * rather than a measurement: no memory access takes a second, no memory node
 * delivers a petabyte per second. */
#define PLAUSIBLE_NS_MAX 1e9
#define PLAUSIBLE_GBS_MAX 1e6
/* Bounds the nnodes x nnodes matrices a document can make us allocate. */
#define MAX_NODES 4096

static const char *const modelled_keys[] = {
    "format", "version", "host", "created", "tool_version", "nodes", "caches",
    "latency_ns", "occupancy_ns", "bandwidth_gbs", "gc_cost_ns", "gc_steals", "gc_miss_overlap", "gc_class_cost_ns", "gc_coord",
    "gc_line_transfer_ns", "gc_mark_transfer_ns", "gc_mark_transfer_cached_ns", "gc_stream_line_ns", "gc_resident", "gc_residency", "dependent_load_ns", "counters",
    "llc_effective_bytes", "llc_hit_ns",
    "latency_full_random_ns", "page_walk_ns",
};

static const char *const access_keys[GCS_ACCESS_COUNT] = {"read", "rw"};
static const char *const pages_keys[GCS_PAGES_COUNT] = {"4k", "huge"};

/* The shape every profile this file hands out has, whoever filled in its
 * values: nodes, and each latency matrix (nnodes x nnodes, row-major) and
 * occupancy vector (nnodes), allocated for nnodes in [1, MAX_NODES]; every
 * CPU list and the cache list allocated for their counts.  gcs_profile_new
 * makes it, the loader and calibrate keep it, and gcs_profile_validate
 * refuses a profile without it, so a validated profile that lacks it is a
 * bug here.  Only compiled where gcs_assert_internal is on. */
#if GCS_ASSERT_ON
static int profile_shape_ok(const gcs_profile *p)
{
    if (!p || p->nnodes < 1 || p->nnodes > MAX_NODES || !p->nodes)
        return 0;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        if (!p->latency_ns[a] || !p->occupancy_ns[a])
            return 0;
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i].ncpus < 0 || (p->nodes[i].ncpus > 0 && !p->nodes[i].cpus))
            return 0;
    if (p->ncaches < 0 || (p->ncaches > 0 && !p->caches))
        return 0;
    for (int i = 0; i < p->ncaches; i++)
        if (p->caches[i].ncpus < 0 || (p->caches[i].ncpus > 0 && !p->caches[i].cpus))
            return 0;
    return 1;
}
#endif

static int is_modelled_key(const char *key)
{
    for (size_t i = 0; i < sizeof modelled_keys / sizeof modelled_keys[0]; i++)
        if (strcmp(key, modelled_keys[i]) == 0)
            return 1;
    return 0;
}

/* ---- allocation ----------------------------------------------------------- */

gcs_profile *gcs_profile_new(int nnodes)
{
    if (nnodes < 1 || nnodes > MAX_NODES)
        return NULL;
    gcs_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    size_t n = (size_t)nnodes;
    p->nnodes = nnodes;
    p->nodes = calloc(n, sizeof *p->nodes);
    int ok = p->nodes != NULL;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        p->latency_ns[a] = calloc(n * n, sizeof(double));
        p->occupancy_ns[a] = calloc(n, sizeof(double));
        ok = ok && p->latency_ns[a] && p->occupancy_ns[a];
    }
    if (!ok) {
        gcs_profile_free(p);
        return NULL;
    }
    for (int i = 0; i < nnodes; i++)
        p->nodes[i].id = i;
    snprintf(p->counters_source, sizeof p->counters_source, "none");
    gcs_assert_internal(profile_shape_ok(p));
    return p;
}

int gcs_profile_cpus(const gcs_profile *p)
{
    int n = 0;
    for (int i = 0; i < p->nnodes; i++)
        n += p->nodes[i].ncpus;
    return n;
}

void gcs_profile_free(gcs_profile *p)
{
    if (!p)
        return;
    if (p->nodes)
        for (int i = 0; i < p->nnodes; i++)
            free(p->nodes[i].cpus);
    free(p->nodes);
    if (p->caches)
        for (int i = 0; i < p->ncaches; i++)
            free(p->caches[i].cpus);
    free(p->caches);
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        free(p->latency_ns[a]);
        free(p->occupancy_ns[a]);
    }
    free(p->bandwidth_gbs);
    for (int k = 0; k < GCS_PAGES_COUNT; k++)
        free(p->full_random_ns[k]);
    json_decref(p->extra);
    free(p);
}

int gcs_profile_add_cache(gcs_profile *p, const gcs_profile_cache *cache)
{
    gcs_profile_cache *grown = realloc(p->caches, (size_t)(p->ncaches + 1) * sizeof *grown);
    if (!grown)
        return -1;
    p->caches = grown;
    int *cpus = calloc(cache->ncpus > 0 ? (size_t)cache->ncpus : 1, sizeof *cpus);
    if (!cpus)
        return -1;
    if (cache->ncpus > 0)
        memcpy(cpus, cache->cpus, (size_t)cache->ncpus * sizeof *cpus);
    gcs_profile_cache *c = &p->caches[p->ncaches++];
    *c = *cache;
    c->cpus = cpus;
    return 0;
}

double gcs_profile_latency(const gcs_profile *p, gcs_access a, int cpu_node, int mem_node)
{
    /* Out-of-range indexes are caller bugs; NaN makes them visible in any
     * result they reach instead of reading past the matrix. */
    if (!p || (int)a < 0 || a >= GCS_ACCESS_COUNT || cpu_node < 0 || cpu_node >= p->nnodes ||
        mem_node < 0 || mem_node >= p->nnodes)
        return NAN;
    return p->latency_ns[a][(size_t)cpu_node * (size_t)p->nnodes + (size_t)mem_node];
}

const char *gcs_profile_pages_name(gcs_pages pages)
{
    return (int)pages >= 0 && pages < GCS_PAGES_COUNT ? pages_keys[pages] : "?";
}

int gcs_profile_alloc_full_random(gcs_profile *p, gcs_pages pages)
{
    if ((int)pages < 0 || pages >= GCS_PAGES_COUNT)
        return -1;
    if (!p->full_random_ns[pages]) {
        size_t n = (size_t)p->nnodes;
        p->full_random_ns[pages] = calloc(n * n, sizeof(double));
        if (!p->full_random_ns[pages])
            return -1;
    }
    p->full_random_note[pages][0] = '\0';
    return 0;
}

double gcs_profile_full_random_latency(const gcs_profile *p, gcs_pages pages, int cpu_node,
                                       int mem_node)
{
    if (!p || (int)pages < 0 || pages >= GCS_PAGES_COUNT || !p->full_random_ns[pages] ||
        cpu_node < 0 || cpu_node >= p->nnodes || mem_node < 0 || mem_node >= p->nnodes)
        return NAN;
    return p->full_random_ns[pages][(size_t)cpu_node * (size_t)p->nnodes + (size_t)mem_node];
}

double gcs_profile_page_walk(const gcs_profile *p, gcs_pages pages, int cpu_node, int mem_node)
{
    double full = gcs_profile_full_random_latency(p, pages, cpu_node, mem_node);
    double m1 = gcs_profile_latency(p, GCS_ACCESS_READ, cpu_node, mem_node);
    if (!isfinite(full) || !isfinite(m1))
        return NAN;
    return full > m1 ? full - m1 : 0;
}

/* The curve's rules, one message each, in the order a reader fixes them. */
static int check_dependent_load(const double *bytes, const double *ns, int n, gcs_err *err)
{
    if (n < 1 || n > GCS_PROFILE_DEPENDENT_MAX) {
        gcs_err_set(err, "dependent_load_ns: %d points, expected 1 to %d", n, GCS_PROFILE_DEPENDENT_MAX);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (!(bytes[i] > 0) || !isfinite(bytes[i]) || (i > 0 && !(bytes[i] > bytes[i - 1]))) {
            gcs_err_set(err, "dependent_load_ns.size_bytes[%d]: %g, expected sizes > 0 and increasing", i, bytes[i]);
            return -1;
        }
        if (!(ns[i] > 0) || !(ns[i] < PLAUSIBLE_NS_MAX)) {
            gcs_err_set(err, "dependent_load_ns.ns[%d]: %g, expected a latency > 0 and below %g ns", i, ns[i],
                        PLAUSIBLE_NS_MAX);
            return -1;
        }
    }
    return 0;
}

/* The residency curve's rules (gc_residency), one message each.  A footprint
 * beyond 64 times the LLC is no measurement calibrate makes. */
static int check_residency(const double *f, const double *r, int n, gcs_err *err)
{
    if (n < 1 || n > GCS_PROFILE_RESIDENCY_MAX) {
        gcs_err_set(err, "gc_residency: %d points, expected 1 to %d", n, GCS_PROFILE_RESIDENCY_MAX);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (!(f[i] > 0) || !(f[i] <= 64) || (i > 0 && !(f[i] > f[i - 1]))) {
            gcs_err_set(err, "gc_residency.footprint_llc[%d]: %g, expected multiples of the LLC in (0, 64], "
                        "increasing", i, f[i]);
            return -1;
        }
        if (!(r[i] >= 0 && r[i] <= 1) || (i > 0 && r[i] > r[i - 1])) {
            gcs_err_set(err, "gc_residency.resident[%d]: %g, expected shares in [0, 1] that do not grow with the "
                        "footprint", i, r[i]);
            return -1;
        }
    }
    return 0;
}

double gcs_profile_residency(const gcs_profile *p, double footprint_llc)
{
    int n = p ? p->nresidency : 0;
    if (n == 0 || !(footprint_llc >= 0))
        return NAN;
    /* straight from (0, 1), every line resident in an empty LLC, through the
     * measured points; beyond the last, its share */
    double fx = 0, rx = 1;
    for (int i = 0; i < n; i++) {
        if (footprint_llc <= p->residency_footprint[i]) {
            double t = (footprint_llc - fx) / (p->residency_footprint[i] - fx);
            return rx + t * (p->residency_resident[i] - rx);
        }
        fx = p->residency_footprint[i], rx = p->residency_resident[i];
    }
    return rx;
}

int gcs_profile_set_dependent_load(gcs_profile *p, const double *bytes, const double *ns, int n, gcs_err *err)
{
    if (check_dependent_load(bytes, ns, n, err) < 0)
        return -1;
    memcpy(p->dependent_load_bytes, bytes, (size_t)n * sizeof *bytes);
    memcpy(p->dependent_load_ns, ns, (size_t)n * sizeof *ns);
    p->ndependent_load = n;
    return 0;
}

double gcs_profile_dependent_load(const gcs_profile *p, double bytes)
{
    int n = p ? p->ndependent_load : 0;
    if (n == 0 || !(bytes > 0))
        return n == 0 ? NAN : p->dependent_load_ns[0];
    const double *x = p->dependent_load_bytes, *y = p->dependent_load_ns;
    if (bytes <= x[0])
        return y[0];
    if (bytes >= x[n - 1])
        return y[n - 1];
    int i = 1;
    while (x[i] < bytes)
        i++;
    /* a latency staircase is straight between points in log(size), as the
     * effective LLC's crossing is found (profile_llc.c) */
    double t = log(bytes / x[i - 1]) / log(x[i] / x[i - 1]);
    return y[i - 1] + t * (y[i] - y[i - 1]);
}

/* ---- reading the document's shape ----------------------------------------------- */

static const char *json_type_name(const json_t *v)
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
        gcs_err_set(err, "%s: expected %s, found %s", key, type_name, json_type_name(v));
        return NULL;
    }
    return v;
}

static int int_value(const json_t *v, const char *key, long long min, long long max,
                     long long *out, gcs_err *err)
{
    if (!json_is_integer(v)) {
        gcs_err_set(err, "%s: expected an integer, found %s", key, json_type_name(v));
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
    return v ? int_value(v, key, min, max, out, err) : -1;
}

/* Numbers are only type-checked here; their ranges are value rules and live
 * in gcs_profile_validate(). */
static int number_value(const json_t *v, const char *key, double *out, gcs_err *err)
{
    if (!json_is_number(v)) {
        gcs_err_set(err, "%s: expected a number, found %s", key, json_type_name(v));
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
        gcs_err_set(err, "%s: expected a string, found %s", key, json_type_name(v));
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
        if (int_value(json_array_get(arr, i), k, 0, INT32_MAX, &cpu, err) < 0)
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
                    key, n, json_type_name(arr));
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
        if (number_value(json_array_get(arr, (size_t)i), k, &out[i], err) < 0)
            return -1;
    }
    return 0;
}

/* n rows (CPU nodes) of n entries (memory nodes), stored row-major. */
static int node_matrix(const json_t *arr, const char *key, int n, double *out, gcs_err *err)
{
    if (!json_is_array(arr)) {
        gcs_err_set(err, "%s: expected %d rows (one per CPU node), found %s", key, n,
                    json_type_name(arr));
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
            gcs_err_set(err, "%s: expected an object, found %s", key, json_type_name(node));
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
            gcs_err_set(err, "%s: expected an object, found %s", key, json_type_name(c));
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


/* "gc_coord" (profile.h, gcs_profile_coord): the laws' coefficients by name,
 * so that an error names the key. */
static const char *const coord_laws[] = {"wake_ns", "tail_ns", "idle_ns"};

static double *coord_member(gcs_profile_coord *c, int law, int b)
{
    double *v[3][2] = {{&c->wake_a, &c->wake_b}, {&c->tail_a, &c->tail_b}, {&c->idle_a, &c->idle_b}};
    return v[law][b];
}

static int parse_coord(const json_t *coord, gcs_profile *p, gcs_err *err)
{
    if (!coord || json_is_null(coord))
        return 0;
    if (!json_is_object(coord)) {
        gcs_err_set(err, "gc_coord: expected an object, found %s", json_type_name(coord));
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
            if (!v || number_value(v, key, coord_member(&p->coord, l, b), err) < 0)
                return -1;
        }
    }
    json_t *v = require(coord, "spread_round_ns", "gc_coord.spread_round_ns", err);
    if (!v || number_value(v, "gc_coord.spread_round_ns", &p->coord.spread_ns, err) < 0)
        return -1;
    v = require(coord, "steal_attempt_ns", "gc_coord.steal_attempt_ns", err);
    if (!v || number_value(v, "gc_coord.steal_attempt_ns", &p->coord.attempt_ns, err) < 0)
        return -1;
    /* since 2026-11-29: absent or null in older profiles (0, not measured) */
    p->coord.attempts_per_search = 0;
    v = json_object_get(coord, "attempts_per_search");
    if (v && !json_is_null(v) &&
        number_value(v, "gc_coord.attempts_per_search", &p->coord.attempts_per_search, err) < 0)
        return -1;
    long long maxp;
    v = require(coord, "max_threads", "gc_coord.max_threads", err);
    if (!v || int_value(v, "gc_coord.max_threads", 1, 1 << 20, &maxp, err) < 0)
        return -1;
    p->coord.max_threads = (int)maxp;
    p->has_gc_coord = 1;
    return 0;
}

static int check_value(double v, const char *key, int positive, double limit, const char *unit,
                       gcs_err *err);

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
                    json_type_name(o));
        return -1;
    }
    const char *member[2] = {m0, m1};
    double *dest[2] = {d0, d1};
    size_t n[2];
    for (int m = 0; m < 2; m++) {
        json_t *a = json_object_get(o, member[m]);
        if (!json_is_array(a)) {
            gcs_err_set(err, "%s.%s: expected an array of numbers, found %s", key, member[m],
                        a ? json_type_name(a) : "nothing");
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
            if (number_value(json_array_get(a, i), name, &dest[m][i], err) < 0)
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
                    json_type_name(o));
        return -1;
    }
    const char *member[2] = {m1, m2};
    double *dest[2] = {d1, d2};
    for (int i = 0; i < 2; i++) {
        char path[96];
        snprintf(path, sizeof path, "%s.%s", key, member[i]);
        json_t *v = require(o, member[i], path, err);
        if (!v || number_value(v, path, dest[i], err) < 0)
            return -1;
    }
    *has = 1;
    return 0;
}

/* A number of misses in flight per worker (gc_miss_overlap, gc_resident's
 * miss_overlap): at least 1 (no overlap), at most a bound no FIFO reaches. */
static int check_overlap(double v, const char *key, gcs_err *err)
{
    if (v >= 1 && v <= 4096)
        return 0;
    gcs_err_set(err, "%s: expected a number of misses in flight in [1, 4096], found %g", key, v);
    return -1;
}

static int check_coord(const gcs_profile *p, gcs_err *err)
{
    if (!p->has_gc_coord)
        return 0;
    char key[64];
    gcs_profile_coord c = p->coord;
    /* A law's coefficients are a joint fit and may be negative (a lone
     * worker's wake and tail exceed those of two on a VM); the model clamps
     * the law's value at 0 (model/coord.c).  Only their size is bounded. */
    for (int l = 0; l < 3; l++)
        for (int b = 0; b < 2; b++) {
            snprintf(key, sizeof key, "gc_coord.%s.%s", coord_laws[l], b ? "b" : "a");
            double v = *coord_member(&c, l, b);
            if (!isfinite(v) || fabs(v) > PLAUSIBLE_NS_MAX) { /* the value as written, sign included */
                gcs_err_set(err, "%s: %g ns is not plausible (limit -%g to %g ns)", key, v, PLAUSIBLE_NS_MAX,
                            PLAUSIBLE_NS_MAX);
                return -1;
            }
        }
    if (check_value(c.spread_ns, "gc_coord.spread_round_ns", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0 ||
        check_value(c.attempt_ns, "gc_coord.steal_attempt_ns", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0)
        return -1;
    if (c.max_threads < 1) {
        gcs_err_set(err, "gc_coord.max_threads: expected a thread count >= 1, found %d", c.max_threads);
        return -1;
    }
    /* a search that found work took one entry at least; the collector's
     * batch is 16, so anything near the limit is a broken file */
    if (c.attempts_per_search != 0 &&
        !(isfinite(c.attempts_per_search) && c.attempts_per_search >= 1 && c.attempts_per_search <= 1e3)) {
        gcs_err_set(err, "gc_coord.attempts_per_search: %g is not plausible (0 for not measured, else 1 to 1000)",
                    c.attempts_per_search);
        return -1;
    }
    return 0;
}

static json_t *coord_to_json(const gcs_profile *p)
{
    json_t *o = json_object();
    gcs_profile_coord c = p->coord;
    for (int l = 0; l < 3; l++)
        json_object_set_new(o, coord_laws[l], json_pack("{s:f, s:f}", "a", *coord_member(&c, l, 0), "b",
                                                        *coord_member(&c, l, 1)));
    json_object_set_new(o, "spread_round_ns", json_real(c.spread_ns));
    json_object_set_new(o, "steal_attempt_ns", json_real(c.attempt_ns));
    if (c.attempts_per_search > 0)
        json_object_set_new(o, "attempts_per_search", json_real(c.attempts_per_search));
    json_object_set_new(o, "max_threads", json_integer(c.max_threads));
    return o;
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
                             "\"steal\", found %s", json_type_name(gc));
            return -1;
        }
        static const char *const members[] = {"object", "pointer", "steal"};
        double *dest[] = {&p->gc_cost_object_ns, &p->gc_cost_pointer_ns, &p->gc_cost_steal_ns};
        for (int i = 0; i < 3; i++) {
            char key[64];
            snprintf(key, sizeof key, "gc_cost_ns.%s", members[i]);
            json_t *v = require(gc, members[i], key, err);
            if (!v || number_value(v, key, dest[i], err) < 0)
                return -1;
        }
        /* All zero is what a profile written before the collector existed
         * contains: it means "not calibrated", not "free". */
        p->has_gc_cost = p->gc_cost_object_ns != 0 || p->gc_cost_pointer_ns != 0 ||
                         p->gc_cost_steal_ns != 0;
        json_t *w = json_object_get(gc, "worker"); /* optional: since 2026-11-29 */
        if (w && !json_is_null(w)) {
            if (number_value(w, "gc_cost_ns.worker", &p->gc_cost_worker_ns, err) < 0)
                return -1;
            p->has_gc_cost_worker = 1;
        }
    }

    if (number_pair(doc, "gc_steals", "a", &p->gc_steal_a, "b", &p->gc_steal_b, &p->has_gc_steals, err) < 0)
        return -1;

    json_t *overlap = json_object_get(doc, "gc_miss_overlap");
    if (overlap && !json_is_null(overlap)) {
        if (number_value(overlap, "gc_miss_overlap", &p->gc_miss_overlap, err) < 0)
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
        if (number_value(null_cost, "gc_class_cost_ns.null_switch", &p->gc_cost_null_switch_ns, err) < 0)
            return -1;
        p->has_gc_null_switch = 1;
    }
    json_t *stream_line = json_object_get(doc, "gc_stream_line_ns");
    if (stream_line && !json_is_null(stream_line)) {
        if (number_value(stream_line, "gc_stream_line_ns", &p->gc_stream_line_ns, err) < 0)
            return -1;
        p->has_gc_stream_line = 1;
    }
    if (number_pair(doc, "gc_resident", "miss_overlap", &p->gc_resident_overlap, "stream_line_ns",
                    &p->gc_resident_stream_ns, &p->has_gc_resident, err) < 0)
        return -1;
    json_t *transfer = json_object_get(doc, "gc_line_transfer_ns");
    if (transfer && !json_is_null(transfer)) {
        if (number_value(transfer, "gc_line_transfer_ns", &p->gc_line_transfer_ns, err) < 0)
            return -1;
        p->has_gc_line_transfer = 1;
    }
    json_t *mark_transfer = json_object_get(doc, "gc_mark_transfer_ns");
    if (mark_transfer && !json_is_null(mark_transfer)) {
        if (number_value(mark_transfer, "gc_mark_transfer_ns", &p->gc_mark_transfer_ns, err) < 0)
            return -1;
        p->has_gc_mark_transfer = 1;
    }
    json_t *mark_cached = json_object_get(doc, "gc_mark_transfer_cached_ns");
    if (mark_cached && !json_is_null(mark_cached)) {
        if (number_value(mark_cached, "gc_mark_transfer_cached_ns", &p->gc_mark_transfer_cached_ns, err) < 0)
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
        if (!h || number_value(b, "llc_effective_bytes", &p->llc_effective_bytes, err) < 0 ||
            number_value(h, "llc_hit_ns", &p->llc_hit_ns, err) < 0)
            return -1;
        p->has_llc_effective = 1;
    }

    if (parse_coord(json_object_get(doc, "gc_coord"), p, err) < 0)
        return -1;

    json_t *counters = json_object_get(doc, "counters");
    if (counters && !json_is_null(counters)) {
        if (!json_is_object(counters)) {
            gcs_err_set(err, "counters: expected an object, found %s", json_type_name(counters));
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
                    "page_walk_ns", shape, json_type_name(bad));
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
                            json_type_name(w));
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
        if (is_modelled_key(key))
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
                    doc ? json_type_name(doc) : "nothing");
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

/* ---- value rules ------------------------------------------------------------------- */

static int check_value(double v, const char *key, int positive, double limit, const char *unit,
                       gcs_err *err)
{
    if (!isfinite(v)) {
        gcs_err_set(err, "%s: not a finite number", key);
        return -1;
    }
    if (v < 0) {
        gcs_err_set(err, "%s: negative value %g", key, v);
        return -1;
    }
    if (positive && v == 0) {
        gcs_err_set(err, "%s: must be positive, found 0", key);
        return -1;
    }
    if (v > limit) {
        gcs_err_set(err, "%s: %g %s is not plausible (limit %g %s)", key, v, unit, limit, unit);
        return -1;
    }
    return 0;
}

typedef struct cpu_owner {
    int cpu, node_index;
} cpu_owner;

static int compare_cpu_owner(const void *a, const void *b)
{
    const cpu_owner *x = a, *y = b;
    if (x->cpu != y->cpu)
        return x->cpu < y->cpu ? -1 : 1;
    return (x->node_index > y->node_index) - (x->node_index < y->node_index);
}

/* Every CPU belongs to at most one node; a CPU listed twice would make the
 * model count its requests twice. */
static int check_cpu_ownership(const gcs_profile *p, gcs_err *err)
{
    size_t total = 0;
    for (int i = 0; i < p->nnodes; i++)
        total += (size_t)p->nodes[i].ncpus;
    if (total == 0)
        return 0;
    cpu_owner *owners = malloc(total * sizeof *owners);
    if (!owners) {
        gcs_err_set(err, "nodes: out of memory");
        return -1;
    }
    size_t k = 0;
    for (int i = 0; i < p->nnodes; i++)
        for (int c = 0; c < p->nodes[i].ncpus; c++)
            owners[k++] = (cpu_owner){p->nodes[i].cpus[c], i};
    qsort(owners, total, sizeof *owners, compare_cpu_owner);
    int rc = 0;
    for (size_t j = 1; j < total; j++) {
        if (owners[j].cpu != owners[j - 1].cpu)
            continue;
        if (owners[j].node_index == owners[j - 1].node_index)
            gcs_err_set(err, "nodes[%d].cpus: CPU %d is listed twice", owners[j].node_index,
                        owners[j].cpu);
        else
            gcs_err_set(err, "nodes[%d].cpus: CPU %d also belongs to nodes[%d]",
                        owners[j].node_index, owners[j].cpu, owners[j - 1].node_index);
        rc = -1;
        break;
    }
    free(owners);
    return rc;
}

static int check_nodes(const gcs_profile *p, gcs_err *err)
{
    if (p->nnodes < 1 || !p->nodes) {
        gcs_err_set(err, "nodes: at least one node is required");
        return -1;
    }
    if (p->nnodes > MAX_NODES) {
        gcs_err_set(err, "nodes: %d nodes exceed the limit of %d", p->nnodes, MAX_NODES);
        return -1;
    }
    for (int i = 0; i < p->nnodes; i++) {
        const gcs_profile_node *nd = &p->nodes[i];
        if (nd->id < 0) {
            gcs_err_set(err, "nodes[%d].id: negative value %d", i, nd->id);
            return -1;
        }
        /* Quadratic, but nnodes is small and the message can name both. */
        for (int j = 0; j < i; j++)
            if (p->nodes[j].id == nd->id) {
                gcs_err_set(err, "nodes[%d].id: duplicate node id %d (also nodes[%d].id)", i,
                            nd->id, j);
                return -1;
            }
        /* The JSON form holds signed 64-bit integers. */
        if (nd->mem_bytes > (uint64_t)INT64_MAX) {
            gcs_err_set(err, "nodes[%d].mem_bytes: value %llu is too large", i,
                        (unsigned long long)nd->mem_bytes);
            return -1;
        }
        if (nd->ncpus < 0 || (nd->ncpus > 0 && !nd->cpus)) {
            gcs_err_set(err, "nodes[%d].cpus: inconsistent CPU count %d", i, nd->ncpus);
            return -1;
        }
        for (int c = 0; c < nd->ncpus; c++)
            if (nd->cpus[c] < 0) {
                gcs_err_set(err, "nodes[%d].cpus[%d]: negative value %d", i, c, nd->cpus[c]);
                return -1;
            }
    }
    return check_cpu_ownership(p, err);
}

static int check_caches(const gcs_profile *p, gcs_err *err)
{
    if (p->ncaches < 0 || (p->ncaches > 0 && !p->caches)) {
        gcs_err_set(err, "caches: inconsistent cache count %d", p->ncaches);
        return -1;
    }
    for (int i = 0; i < p->ncaches; i++) {
        const gcs_profile_cache *c = &p->caches[i];
        if (c->level < 1) {
            gcs_err_set(err, "caches[%d].level: must be at least 1, found %d", i, c->level);
            return -1;
        }
        if (strcmp(c->type, "data") != 0 && strcmp(c->type, "unified") != 0 &&
            strcmp(c->type, "instruction") != 0) {
            gcs_err_set(err, "caches[%d].type: expected \"data\", \"unified\" or \"instruction\", "
                             "found \"%s\"", i, c->type);
            return -1;
        }
        if (c->size_bytes == 0 || c->size_bytes > (uint64_t)INT64_MAX) {
            gcs_err_set(err, "caches[%d].size_bytes: must be between 1 and %lld, found %llu", i,
                        (long long)INT64_MAX, (unsigned long long)c->size_bytes);
            return -1;
        }
        if (c->line_bytes < 1) {
            gcs_err_set(err, "caches[%d].line_bytes: must be positive, found %d", i, c->line_bytes);
            return -1;
        }
        if (c->ways < 0) {
            gcs_err_set(err, "caches[%d].ways: negative value %d", i, c->ways);
            return -1;
        }
        if (c->ncpus < 0 || (c->ncpus > 0 && !c->cpus)) {
            gcs_err_set(err, "caches[%d].cpus: inconsistent CPU count %d", i, c->ncpus);
            return -1;
        }
        for (int k = 0; k < c->ncpus; k++)
            if (c->cpus[k] < 0) {
                gcs_err_set(err, "caches[%d].cpus[%d]: negative value %d", i, k, c->cpus[k]);
                return -1;
            }
    }
    return 0;
}

/* "uncertainty" and "unreliable" (profile.h): the members this file
 * defines are checked; others an uncertainty object may carry (a condition
 * number, say) are kept as they are. */
static int check_uncertainty_entry(const char *name, json_t *u, gcs_err *err)
{
    if (!json_is_object(u)) {
        gcs_err_set(err, "uncertainty.%s: expected an object, found %s", name, json_type_name(u));
        return -1;
    }
    char key[320];
    static const char *const nonneg[] = {"stderr", "residual_rms_rel"};
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(u, nonneg[i]);
        double x;
        snprintf(key, sizeof key, "uncertainty.%s.%s", name, nonneg[i]);
        if (v && (number_value(v, key, &x, err) < 0 || check_value(x, key, 0, INFINITY, "", err) < 0))
            return -1;
    }
    json_t *ci = json_object_get(u, "ci95");
    if (ci) {
        snprintf(key, sizeof key, "uncertainty.%s.ci95", name);
        double lo, hi;
        if (!json_is_array(ci) || json_array_size(ci) != 2) {
            gcs_err_set(err, "%s: expected an array [lo, hi]", key);
            return -1;
        }
        if (number_value(json_array_get(ci, 0), key, &lo, err) < 0 ||
            number_value(json_array_get(ci, 1), key, &hi, err) < 0)
            return -1;
        if (!(lo <= hi)) {
            gcs_err_set(err, "%s: lower end %g above upper end %g", key, lo, hi);
            return -1;
        }
    }
    json_t *n = json_object_get(u, "n");
    long long count;
    snprintf(key, sizeof key, "uncertainty.%s.n", name);
    if (n && int_value(n, key, 0, INT32_MAX, &count, err) < 0)
        return -1;
    return 0;
}

static int check_fit_quality(const gcs_profile *p, gcs_err *err)
{
    json_t *unc = p->extra ? json_object_get(p->extra, "uncertainty") : NULL;
    json_t *bad = p->extra ? json_object_get(p->extra, "unreliable") : NULL;
    const char *name;
    json_t *v;
    if (unc) {
        if (!json_is_object(unc)) {
            gcs_err_set(err, "uncertainty: expected an object, found %s", json_type_name(unc));
            return -1;
        }
        json_object_foreach(unc, name, v)
            if (check_uncertainty_entry(name, v, err) < 0)
                return -1;
    }
    if (bad) {
        if (!json_is_object(bad)) {
            gcs_err_set(err, "unreliable: expected an object, found %s", json_type_name(bad));
            return -1;
        }
        json_object_foreach(bad, name, v)
            if (!json_is_string(v) || json_string_length(v) == 0) {
                gcs_err_set(err, "unreliable.%s: expected the reason (a non-empty string), found %s",
                            name, json_is_string(v) ? "\"\"" : json_type_name(v));
                return -1;
            }
    }
    return 0;
}

int gcs_profile_check_nodes(const gcs_profile *p, gcs_err *err)
{
    if (!p) {
        gcs_err_set(err, "no profile");
        return -1;
    }
    return check_nodes(p, err);
}

int gcs_profile_validate(const gcs_profile *p, gcs_err *err)
{
    if (!p) {
        gcs_err_set(err, "no profile");
        return -1;
    }
    if (check_nodes(p, err) < 0 || check_caches(p, err) < 0)
        return -1;
    int n = p->nnodes;
    char key[96];
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        if (!p->latency_ns[a] || !p->occupancy_ns[a]) {
            gcs_err_set(err, "latency_ns.%s: missing", access_keys[a]);
            return -1;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                snprintf(key, sizeof key, "latency_ns.%s[%d][%d]", access_keys[a], i, j);
                if (check_value(p->latency_ns[a][(size_t)i * (size_t)n + (size_t)j], key, 1,
                                PLAUSIBLE_NS_MAX, "ns", err) < 0)
                    return -1;
            }
    }
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        for (int j = 0; j < n; j++) {
            snprintf(key, sizeof key, "occupancy_ns.%s[%d]", access_keys[a], j);
            if (check_value(p->occupancy_ns[a][j], key, 0, PLAUSIBLE_NS_MAX, "ns", err) < 0)
                return -1;
        }
    if (p->bandwidth_gbs)
        for (int j = 0; j < n; j++) {
            snprintf(key, sizeof key, "bandwidth_gbs[%d]", j);
            if (check_value(p->bandwidth_gbs[j], key, 0, PLAUSIBLE_GBS_MAX, "GB/s", err) < 0)
                return -1;
        }
    for (int k = 0; k < GCS_PAGES_COUNT; k++)
        for (int i = 0; p->full_random_ns[k] && i < n; i++)
            for (int j = 0; j < n; j++) {
                snprintf(key, sizeof key, "latency_full_random_ns.%s[%d][%d]", pages_keys[k], i, j);
                if (check_value(p->full_random_ns[k][(size_t)i * (size_t)n + (size_t)j], key, 1,
                                PLAUSIBLE_NS_MAX, "ns", err) < 0)
                    return -1;
            }
    if (check_value(p->gc_cost_object_ns, "gc_cost_ns.object", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0 ||
        check_value(p->gc_cost_pointer_ns, "gc_cost_ns.pointer", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0 ||
        check_value(p->gc_cost_steal_ns, "gc_cost_ns.steal", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0 ||
        (p->has_gc_cost_worker &&
         check_value(p->gc_cost_worker_ns, "gc_cost_ns.worker", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0))
        return -1;
    if (p->has_gc_steals && (!isfinite(p->gc_steal_a) || !isfinite(p->gc_steal_b))) {
        gcs_err_set(err, "gc_steals: a and b must be finite numbers");
        return -1;
    }
    if (check_coord(p, err) < 0)
        return -1;
    if (p->has_gc_class_cost &&
        (check_value(p->gc_cost_chain_ns, "gc_class_cost_ns.chain", 1, PLAUSIBLE_NS_MAX, "ns", err) < 0 ||
         check_value(p->gc_cost_array_element_ns, "gc_class_cost_ns.array_element", 1, PLAUSIBLE_NS_MAX, "ns",
                     err) < 0))
        return -1;
    if (p->has_gc_null_switch && !p->has_gc_class_cost) {
        gcs_err_set(err, "gc_class_cost_ns.null_switch: set without gc_class_cost_ns.chain and .array_element");
        return -1;
    }
    if (p->has_gc_null_switch &&
        check_value(p->gc_cost_null_switch_ns, "gc_class_cost_ns.null_switch", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0)
        return -1;
    if (p->has_gc_stream_line &&
        check_value(p->gc_stream_line_ns, "gc_stream_line_ns", 1, PLAUSIBLE_NS_MAX, "ns", err) < 0)
        return -1;
    if (p->has_gc_resident && check_overlap(p->gc_resident_overlap, "gc_resident.miss_overlap", err) < 0)
        return -1;
    if (p->has_gc_resident &&
        check_value(p->gc_resident_stream_ns, "gc_resident.stream_line_ns", 1, PLAUSIBLE_NS_MAX, "ns", err) < 0)
        return -1;
    if (p->has_gc_line_transfer &&
        check_value(p->gc_line_transfer_ns, "gc_line_transfer_ns", 0, PLAUSIBLE_NS_MAX, "ns", err) < 0)
        return -1;
    if (p->has_gc_mark_transfer &&
        check_value(p->gc_mark_transfer_ns, "gc_mark_transfer_ns", 1, PLAUSIBLE_NS_MAX, "ns", err) < 0)
        return -1;
    if (p->has_gc_mark_transfer_cached &&
        check_value(p->gc_mark_transfer_cached_ns, "gc_mark_transfer_cached_ns", 1, PLAUSIBLE_NS_MAX, "ns", err) < 0)
        return -1;
    if (p->ndependent_load && check_dependent_load(p->dependent_load_bytes, p->dependent_load_ns,
                                                   p->ndependent_load, err) < 0)
        return -1;
    if (p->nresidency && check_residency(p->residency_footprint, p->residency_resident, p->nresidency, err) < 0)
        return -1;
    if (p->has_gc_overlap && check_overlap(p->gc_miss_overlap, "gc_miss_overlap", err) < 0)
        return -1;
    if (p->has_llc_effective) {
        /* 1 PB: past it the number is not bytes */
        if (!(p->llc_effective_bytes >= 4096 && p->llc_effective_bytes <= 1e15)) {
            gcs_err_set(err, "llc_effective_bytes: expected a cache size in bytes, found %g",
                        p->llc_effective_bytes);
            return -1;
        }
        if (check_value(p->llc_hit_ns, "llc_hit_ns", 1, PLAUSIBLE_NS_MAX, "ns", err) < 0)
            return -1;
    }
    if (strcmp(p->counters_source, "papi") != 0 && strcmp(p->counters_source, "none") != 0) {
        gcs_err_set(err, "counters.source: expected \"papi\" or \"none\", found \"%s\"",
                    p->counters_source);
        return -1;
    }
    if (p->extra && !json_is_object(p->extra)) {
        gcs_err_set(err, "extra keys: expected a JSON object");
        return -1;
    }
    if (check_fit_quality(p, err) < 0)
        return -1;
    /* The rules above include the shape's: what passes them has it. */
    gcs_assert_internal(profile_shape_ok(p));
    return 0;
}

/* ---- writing --------------------------------------------------------------------- */

static json_t *int_array(const int *v, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, json_integer(v[i]));
    return arr;
}

static json_t *real_array(const double *v, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, json_real(v[i]));
    return arr;
}

static json_t *pair_matrix(const gcs_profile *p, gcs_pages k, int walk)
{
    json_t *rows = json_array();
    for (int i = 0; i < p->nnodes; i++) {
        json_t *row = json_array();
        for (int j = 0; j < p->nnodes; j++)
            json_array_append_new(row, json_real(walk ? gcs_profile_page_walk(p, k, i, j)
                                                      : gcs_profile_full_random_latency(p, k, i, j)));
        json_array_append_new(rows, row);
    }
    return rows;
}

/* Written when either page size was measured or has a reason not to be. */
static void write_page_walks(const gcs_profile *p, json_t *doc)
{
    int any = 0;
    for (int k = 0; k < GCS_PAGES_COUNT; k++)
        any |= p->full_random_ns[k] || p->full_random_note[k][0];
    if (!any)
        return;
    json_t *full = json_object(), *walk = json_object();
    for (int k = 0; k < GCS_PAGES_COUNT; k++) {
        if (p->full_random_ns[k]) {
            json_object_set_new(full, pages_keys[k], pair_matrix(p, (gcs_pages)k, 0));
            json_object_set_new(walk, pages_keys[k], pair_matrix(p, (gcs_pages)k, 1));
        } else {
            const char *why = p->full_random_note[k][0] ? p->full_random_note[k] : "not measured";
            json_object_set_new(full, pages_keys[k], json_string(why));
            json_object_set_new(walk, pages_keys[k], json_string(why));
        }
    }
    json_object_set_new(doc, "latency_full_random_ns", full);
    json_object_set_new(doc, "page_walk_ns", walk);
}

json_t *gcs_profile_to_json(const gcs_profile *p)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_string(GCS_PROFILE_FORMAT));
    json_object_set_new(doc, "version", json_integer(GCS_PROFILE_VERSION));
    if (p->host[0])
        json_object_set_new(doc, "host", json_string(p->host));
    if (p->created[0])
        json_object_set_new(doc, "created", json_string(p->created));
    if (p->tool_version[0])
        json_object_set_new(doc, "tool_version", json_string(p->tool_version));

    json_t *nodes = json_array();
    for (int i = 0; i < p->nnodes; i++) {
        const gcs_profile_node *nd = &p->nodes[i];
        json_t *node = json_object();
        json_object_set_new(node, "id", json_integer(nd->id));
        json_object_set_new(node, "cpus", int_array(nd->cpus, nd->ncpus));
        json_object_set_new(node, "mem_bytes", json_integer((json_int_t)nd->mem_bytes));
        json_array_append_new(nodes, node);
    }
    json_object_set_new(doc, "nodes", nodes);

    json_t *caches = json_array();
    for (int i = 0; i < p->ncaches; i++) {
        const gcs_profile_cache *c = &p->caches[i];
        json_t *cache = json_object();
        json_object_set_new(cache, "level", json_integer(c->level));
        json_object_set_new(cache, "type", json_string(c->type));
        json_object_set_new(cache, "size_bytes", json_integer((json_int_t)c->size_bytes));
        json_object_set_new(cache, "line_bytes", json_integer(c->line_bytes));
        json_object_set_new(cache, "ways", json_integer(c->ways));
        json_object_set_new(cache, "cpus", int_array(c->cpus, c->ncpus));
        json_array_append_new(caches, cache);
    }
    json_object_set_new(doc, "caches", caches);

    json_t *latency = json_object(), *occupancy = json_object();
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        json_t *rows = json_array();
        for (int i = 0; i < p->nnodes; i++)
            json_array_append_new(rows, real_array(p->latency_ns[a] + (size_t)i * (size_t)p->nnodes,
                                                   p->nnodes));
        json_object_set_new(latency, access_keys[a], rows);
        json_object_set_new(occupancy, access_keys[a], real_array(p->occupancy_ns[a], p->nnodes));
    }
    json_object_set_new(doc, "latency_ns", latency);
    json_object_set_new(doc, "occupancy_ns", occupancy);
    if (p->bandwidth_gbs)
        json_object_set_new(doc, "bandwidth_gbs", real_array(p->bandwidth_gbs, p->nnodes));
    if (p->has_gc_cost) {
        json_t *gc = json_object();
        json_object_set_new(gc, "object", json_real(p->gc_cost_object_ns));
        json_object_set_new(gc, "pointer", json_real(p->gc_cost_pointer_ns));
        json_object_set_new(gc, "steal", json_real(p->gc_cost_steal_ns));
        if (p->has_gc_cost_worker)
            json_object_set_new(gc, "worker", json_real(p->gc_cost_worker_ns));
        json_object_set_new(doc, "gc_cost_ns", gc);
    }
    if (p->has_gc_steals)
        json_object_set_new(doc, "gc_steals", json_pack("{s:f, s:f}", "a", p->gc_steal_a, "b",
                                                        p->gc_steal_b));
    if (p->has_gc_overlap)
        json_object_set_new(doc, "gc_miss_overlap", json_real(p->gc_miss_overlap));
    if (p->has_gc_class_cost) {
        json_t *cls = json_pack("{s:f, s:f}", "chain", p->gc_cost_chain_ns, "array_element",
                                p->gc_cost_array_element_ns);
        if (cls && p->has_gc_null_switch)
            json_object_set_new(cls, "null_switch", json_real(p->gc_cost_null_switch_ns));
        json_object_set_new(doc, "gc_class_cost_ns", cls);
    }
    if (p->has_gc_stream_line)
        json_object_set_new(doc, "gc_stream_line_ns", json_real(p->gc_stream_line_ns));
    if (p->has_gc_resident)
        json_object_set_new(doc, "gc_resident", json_pack("{s:f, s:f}", "miss_overlap", p->gc_resident_overlap,
                                                          "stream_line_ns", p->gc_resident_stream_ns));
    if (p->has_gc_line_transfer)
        json_object_set_new(doc, "gc_line_transfer_ns", json_real(p->gc_line_transfer_ns));
    if (p->has_gc_mark_transfer)
        json_object_set_new(doc, "gc_mark_transfer_ns", json_real(p->gc_mark_transfer_ns));
    if (p->has_gc_mark_transfer_cached)
        json_object_set_new(doc, "gc_mark_transfer_cached_ns", json_real(p->gc_mark_transfer_cached_ns));
    if (p->nresidency) {
        json_t *f = json_array(), *r = json_array();
        for (int i = 0; i < p->nresidency; i++) {
            json_array_append_new(f, json_real(p->residency_footprint[i]));
            json_array_append_new(r, json_real(p->residency_resident[i]));
        }
        json_object_set_new(doc, "gc_residency", json_pack("{s:o, s:o}", "footprint_llc", f, "resident", r));
    }
    if (p->ndependent_load) {
        json_t *sizes = json_array(), *lat = json_array();
        for (int i = 0; i < p->ndependent_load; i++) {
            json_array_append_new(sizes, json_real(p->dependent_load_bytes[i]));
            json_array_append_new(lat, json_real(p->dependent_load_ns[i]));
        }
        json_object_set_new(doc, "dependent_load_ns", json_pack("{s:o, s:o}", "size_bytes", sizes, "ns", lat));
    }
    if (p->has_llc_effective) {
        json_object_set_new(doc, "llc_effective_bytes", json_real(p->llc_effective_bytes));
        json_object_set_new(doc, "llc_hit_ns", json_real(p->llc_hit_ns));
    }

    if (p->has_gc_coord)
        json_object_set_new(doc, "gc_coord", coord_to_json(p));
    write_page_walks(p, doc);
    json_t *counters = json_object();
    json_object_set_new(counters, "source", json_string(p->counters_source[0] ? p->counters_source
                                                                               : "none"));
    if (p->counters_reason[0])
        json_object_set_new(counters, "reason", json_string(p->counters_reason));
    json_object_set_new(doc, "counters", counters);

    if (p->extra && json_is_object(p->extra)) {
        const char *key;
        json_t *value;
        /* The modelled fields are the truth; an extra key of the same name
         * (possible only in a profile built by hand in memory) loses. */
        json_object_foreach(p->extra, key, value)
            if (!is_modelled_key(key))
                json_object_set_new(doc, key, json_deep_copy(value));
    }
    return doc;
}

int gcs_profile_save(const gcs_profile *p, const char *path, gcs_err *err)
{
    /* Never write a profile that we would refuse to load. */
    gcs_err inner;
    if (gcs_profile_validate(p, &inner) < 0) {
        gcs_err_set(err, "%s: not saved, invalid profile: %s", path, inner.msg);
        return -1;
    }
    json_t *doc = gcs_profile_to_json(p);
    int rc = gcs_json_write_file(doc, path, err);
    json_decref(doc);
    return rc;
}
