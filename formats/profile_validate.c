/* profile_validate.c -- the machine profile's value rules
 * (gcs_profile_validate, gcs_profile_check_nodes): what every profile must
 * hold whoever made it, the loader (gcs_profile_from_json, profile_load.c,
 * once the document's shape is read), calibrate in memory, or anyone
 * before a save (profile_save.c refuses to write a profile that breaks
 * them): numbers finite, not negative and plausible for their unit, node
 * ids unique and no CPU in two nodes, caches consistent, the curves' and
 * gc_coord's rules, the shape of the uncertainty and unreliable objects
 * kept in extra; and, once they pass, the profile's shape invariant
 * (gcs_assert_internal).  One rule, one message, starting with the JSON
 * key; the rules run in a fixed order and the first that fails is the one
 * reported.  A new key's rule goes in gcs_profile_validate
 * (profile_internal.h lists the other files the key touches). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/profile.h"
#include "../common/internal.h"
#define GCS_PROFILE_FILES
#include "profile_internal.h"

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

/* The curve's rules, one message each, in the order a reader fixes them. */
int _gcs_profile_check_dependent_load(const double *bytes, const double *ns, int n, gcs_err *err)
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
            double v = *_gcs_profile_coord_member(&c, l, b);
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
        gcs_err_set(err, "uncertainty.%s: expected an object, found %s", name, _gcs_profile_json_type_name(u));
        return -1;
    }
    char key[320];
    static const char *const nonneg[] = {"stderr", "residual_rms_rel"};
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(u, nonneg[i]);
        double x;
        snprintf(key, sizeof key, "uncertainty.%s.%s", name, nonneg[i]);
        if (v && (_gcs_profile_number_value(v, key, &x, err) < 0 || check_value(x, key, 0, INFINITY, "", err) < 0))
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
        if (_gcs_profile_number_value(json_array_get(ci, 0), key, &lo, err) < 0 ||
            _gcs_profile_number_value(json_array_get(ci, 1), key, &hi, err) < 0)
            return -1;
        if (!(lo <= hi)) {
            gcs_err_set(err, "%s: lower end %g above upper end %g", key, lo, hi);
            return -1;
        }
    }
    json_t *n = json_object_get(u, "n");
    long long count;
    snprintf(key, sizeof key, "uncertainty.%s.n", name);
    if (n && _gcs_profile_int_value(n, key, 0, INT32_MAX, &count, err) < 0)
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
            gcs_err_set(err, "uncertainty: expected an object, found %s", _gcs_profile_json_type_name(unc));
            return -1;
        }
        json_object_foreach(unc, name, v)
            if (check_uncertainty_entry(name, v, err) < 0)
                return -1;
    }
    if (bad) {
        if (!json_is_object(bad)) {
            gcs_err_set(err, "unreliable: expected an object, found %s", _gcs_profile_json_type_name(bad));
            return -1;
        }
        json_object_foreach(bad, name, v)
            if (!json_is_string(v) || json_string_length(v) == 0) {
                gcs_err_set(err, "unreliable.%s: expected the reason (a non-empty string), found %s",
                            name, json_is_string(v) ? "\"\"" : _gcs_profile_json_type_name(v));
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
    if (p->ndependent_load && _gcs_profile_check_dependent_load(p->dependent_load_bytes, p->dependent_load_ns,
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
    gcs_assert_internal(_gcs_profile_shape_ok(p));
    return 0;
}
