/* profile_save.c -- the machine profile's JSON writer: gcs_profile_to_json
 * (the document: its keys in the order written here, which is the saved
 * file's order, then the keys no field holds, kept in extra) and
 * gcs_profile_save, crash-safe (gcs_json_write_file, through a
 * gcs_outfile) and never a profile that gcs_profile_validate
 * (profile_validate.c) would refuse to load.  A new key is written in
 * gcs_profile_to_json (profile_internal.h lists the other files it
 * touches). */
#include "gcscale/profile.h"
#define GCS_PROFILE_FILES
#include "profile_internal.h"

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

static json_t *coord_to_json(const gcs_profile *p)
{
    json_t *o = json_object();
    gcs_profile_coord c = p->coord;
    for (int l = 0; l < 3; l++)
        json_object_set_new(o, coord_laws[l], json_pack("{s:f, s:f}", "a", *_gcs_profile_coord_member(&c, l, 0), "b",
                                                        *_gcs_profile_coord_member(&c, l, 1)));
    json_object_set_new(o, "spread_round_ns", json_real(c.spread_ns));
    json_object_set_new(o, "steal_attempt_ns", json_real(c.attempt_ns));
    if (c.attempts_per_search > 0)
        json_object_set_new(o, "attempts_per_search", json_real(c.attempts_per_search));
    json_object_set_new(o, "max_threads", json_integer(c.max_threads));
    return o;
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
            if (!_gcs_profile_is_modelled_key(key))
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
