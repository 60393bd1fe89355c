/* stats.c -- the collections' statistics: the last collection's record,
 * its JSON form (the per-collection log and gc-bench read it), and the heap
 * census.
 *
 * The statistics are filled by collect.c while the world is stopped; this
 * file only reads them out.  Kept apart because what they mean and how they
 * are written is an interface (docs/collector.md "Instrumentation"), and the
 * collection driver should not grow with every field added to it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gc_internal.h"

const char *gcs_gc_mark_mode_name(gcs_gc_mark_mode mode)
{
    switch (mode) {
    case GCS_GC_MARK_RELAXED_BYTES: return "relaxed-bytes";
    case GCS_GC_MARK_ATOMIC_BYTES: return "atomic-bytes";
    case GCS_GC_MARK_ATOMIC_BITS: return "atomic-bits";
    }
    return "?";
}

int gcs_gc_last_stats(gcs_gc_stats *out)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc)
        return -1;
    int locked = _gcs_api_lock(gc);
    int ok = gc->have_last;
    if (ok)
        *out = gc->last;
    _gcs_api_unlock(gc, locked);
    return ok ? 0 : -1;
}

uint64_t gcs_gc_collections(void)
{
    gcs_collector *gc = _gcs_gc_global;
    if (!gc)
        return 0;
    int locked = _gcs_api_lock(gc);
    uint64_t n = gc->collections;
    _gcs_api_unlock(gc, locked);
    return n;
}

static const char *reason_name(gcs_gc_reason r)
{
    return r == GCS_GC_REASON_BUDGET ? "budget" : r == GCS_GC_REASON_HEAP_FULL ? "heap-full" : "request";
}

json_t *gcs_gc_stats_to_json(const gcs_gc_stats *s)
{
    json_t *j = json_object();
    if (!j)
        return NULL;
#define U(k, v) json_object_set_new(j, k, json_integer((json_int_t)(v)))
    U("collection", s->index);
    json_object_set_new(j, "reason", json_string(reason_name(s->reason)));
    U("threads", s->threads);
    json_object_set_new(j, "mark_mode", json_string(gcs_gc_mark_mode_name(s->mark_mode)));
    U("start_ns", s->start_ns);
    U("stop_ns", s->stop_ns);
    U("roots_ns", s->roots_ns);
    U("mark_ns", s->mark_ns);
    U("span_ns", s->span_ns);
    U("sweep_ns", s->sweep_ns);
    U("pause_ns", s->pause_ns);
    U("t1_ns", s->t1_ns);
    U("roots", s->roots);
    U("objects_marked", s->objects_marked);
    U("pointers_scanned", s->pointers_scanned);
    U("edges_examined", s->edges_examined);
    U("mutators", (uint64_t)s->mutators);
    U("steal_attempts", s->steal_attempts);
    U("steals", s->steals);
    U("steal_searches", s->steal_searches);
    U("mark_rescans", s->mark_rescans);
    U("live_objects", s->live_objects);
    U("live_bytes", s->live_bytes);
    U("freed_objects", s->freed_objects);
    U("pages_in_use", s->pages_in_use);
    U("pages_freed", s->pages_freed);
    U("pages_released", s->pages_released);
    U("heap_limit", s->heap_limit);
    U("bind_failures", s->bind_failures);
    U("page_faults", s->page_faults);
    json_object_set_new(j, "span", s->compute_span && !isnan(s->span) ? json_real(s->span) : json_null());
    json_object_set_new(j, "span_cost_object", json_real(s->span_cost_object));
    json_object_set_new(j, "span_cost_pointer", json_real(s->span_cost_pointer));
    json_object_set_new(j, "cache_misses", s->cache_misses_available ? json_true() : json_string("unavailable"));
    json_object_set_new(j, "snapshot_path", s->snapshot_status ? json_string(s->snapshot_path) : json_null());
    U("snapshot_ns", s->snapshot_ns);
    U("snapshot_bytes", s->snapshot_bytes);
    U("snapshot_objects", s->snapshot_objects);
    json_object_set_new(j, "snapshot_error", s->snapshot_status < 0 ? json_string(s->snapshot_error) : json_null());
    json_t *nodes = json_array();
    for (int k = 0; k < s->nnodes && k < GCS_GC_MAX_NODES; k++)
        json_array_append_new(nodes, json_integer((json_int_t)s->node_live_bytes[k]));
    json_object_set_new(j, "node_live_bytes", nodes);
    U("unknown_node_live_bytes", s->unknown_node_live_bytes);
    if (s->remark)
        json_object_set_new(j, "remark", json_true());
    if (s->decision.used) {
        const gcs_gc_decision *d = &s->decision;
        json_t *pred = json_array();
        for (int i = 0; i < d->npredicted; i++)
            json_array_append_new(pred, isfinite(d->predicted_mark_ns[i]) ? json_real(d->predicted_mark_ns[i])
                                                                             : json_null());
        json_t *in = json_object();
        for (int i = 0; i < d->ninputs && i < GCS_GC_DECISION_INPUTS; i++)
            if (d->inputs[i].name)
                json_object_set_new(in, d->inputs[i].name, isfinite(d->inputs[i].value)
                                                               ? json_real(d->inputs[i].value) : json_null());
        json_object_set_new(j, "policy",
                            json_pack("{s:s, s:i, s:i, s:o, s:I, s:s?, s:o}", "name", d->policy, "threads",
                                      d->threads, "max_threads", d->max_threads, "predicted_mark_ns", pred,
                                      "decision_ns", (json_int_t)d->decision_ns, "note", d->note, "inputs", in));
    }
    int os[GCS_GC_MAX_THREADS], logical[GCS_GC_MAX_THREADS], nw = 0;
    for (; nw < s->threads && nw < GCS_GC_MAX_THREADS; nw++) {
        os[nw] = s->workers[nw].cpu;
        logical[nw] = s->workers[nw].pu;
    }
    gcs_json_set_pu_map(j, gcs_topo_placement_name(s->placement), os, logical, nw);
    json_t *ws = json_array();
    for (int i = 0; i < s->threads && i < GCS_GC_MAX_THREADS; i++) {
        const gcs_gc_worker_stats *w = &s->workers[i];
        json_t *o = json_object();
#define W(k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))
        W("wake_ns", w->wake_ns);
        W("mark_ns", w->mark_ns);
        W("busy_ns", w->busy_ns);
        W("search_ns", w->search_ns);
        W("steal_attempts", w->steal_attempts);
        W("steals", w->steals);
        W("steal_searches", w->steal_searches);
        W("objects_scanned", w->objects_scanned);
        W("pointers_scanned", w->pointers_scanned);
        W("edges_examined", w->edges_examined);
        W("bytes_marked", w->bytes_marked);
        W("chunks_scanned", w->chunks_scanned);
        W("spills", w->spills);
        W("sweep_ns", w->sweep_ns);
        W("pages_swept", w->pages_swept);
        json_object_set_new(o, "cache_misses", w->cache_misses < 0 ? json_null() : json_integer(w->cache_misses));
        W("cpu", w->cpu);
        W("pu", w->pu);
#undef W
        json_array_append_new(ws, o);
    }
    json_object_set_new(j, "workers", ws);
#undef U
    return j;
}

/* One line of the JSON log (options.log_path or $GCSCALE_GC_LOG), if any. */
void _gcs_stats_log(gcs_collector *gc, const gcs_gc_stats *st)
{
    if (!gc->log_path[0])
        return;
    json_t *stats = gcs_gc_stats_to_json(st);
    if (!stats)
        return;
    /* every JSON document of the suite names its format (docs/schemas/) */
    json_t *j = json_pack("{s:s, s:i}", "format", "gcscale-gc-log", "version", 1);
    json_object_update(j, stats);
    json_decref(stats);
    char *line = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!line)
        return;
    FILE *fp = fopen(gc->log_path, "a");
    if (fp) {
        fputs(line, fp);
        fputc('\n', fp);
        fclose(fp);
    }
    free(line);
}

/* Objects and payload bytes in the heap now, live or not yet swept (a walk of
 * every page's headers, heap_lock held). */
void gcs_gc_census(uint64_t *objects, uint64_t *payload_bytes)
{
    gcs_collector *gc = _gcs_gc_global;
    uint64_t n = 0, b = 0;
    if (gc) {
        pthread_mutex_lock(&gc->heap_lock);
        for (size_t i = 0; i < gc->high_water; i++) {
            gcs_page *pg = &gc->pages[i];
            char *start = _gcs_page_start(gc, i);
            if (pg->kind == GCS_PAGE_LARGE_HEAD) {
                n++;
                b += 8 * (uint64_t)GCS_HDR_WORDS(*(uint64_t *)start);
            } else if (pg->kind == GCS_PAGE_SMALL) {
                for (uint32_t s = 0; s < pg->nslots; s++) {
                    uint64_t h = *(uint64_t *)(start + (size_t)s * pg->slot_bytes);
                    if (h) {
                        n++;
                        b += 8 * (uint64_t)GCS_HDR_WORDS(h);
                    }
                }
            }
        }
        pthread_mutex_unlock(&gc->heap_lock);
    }
    if (objects)
        *objects = n;
    if (payload_bytes)
        *payload_bytes = b;
}
