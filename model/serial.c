/* serial.c -- the serial work of model v2 (docs/model.md, "Serial work"):
 * what one worker spends on a heap, priced the way the collector spends it
 * rather than as one DRAM stall per missed line (the paper).  Three terms,
 * each from gcscale calibrate on the machine, never from validation data:
 *
 *   - overlap: the marker's prefetch FIFO keeps many misses in flight; the
 *     profile's gc_miss_overlap F, fitted on the real marker
 *     (calibrate/overlap.c), divides the wait of every miss the stream
 *     prefetcher does not cover.  On by default.
 *   - the stream prefetcher: the slow predictor's cache simulation marks the
 *     misses a stream prefetcher covers (q1_prefetched); they cost S_O.  On
 *     by default wherever the slow predictor runs (a profile with caches).
 *   - warm residency: part of the heap is in the LLC when a mark starts;
 *     r from the profile's gc_residency curve at the footprint over the
 *     effective LLC where calibrate measured it (calibrate/residency.c),
 *     else min(1, effective LLC / footprint), the effective LLC read off
 *     calibrate's latency sweep (formats/profile_llc.c); its misses at the
 *     profile's gc_resident prices, fitted on resident heaps
 *     (calibrate/resident.c).  On by default where the profile has
 *     gc_resident; without it off (the overlap fitted beyond the LLC would
 *     price those lines, which double counts: docs/model.md has the
 *     measurements, "Resident lines").
 *   - the stream classes (2026-11-27): the replay's own streamer
 *     (model/cachesim.c: 64 pages, directions) counts the streamed misses,
 *     and of those the sequential ones, which cost gc_stream_line_ns (a
 *     list's line, fitted by calibrate/stream.c) instead of min(S_O, M1).
 *   - NULL tests that switch (2026-11-27): T1 gains their count times
 *     gc_class_cost_ns.null_switch (calibrate/classcost.c).  Off unless
 *     asked for (opts->null_switches): measured, it made cky worse.
 * A profile without a term's key gets the price the model had before it,
 * and the breakdown lists the key under "nominal".
 *
 * predict.c prices the misses through _gcs_serial_miss_latency; this file
 * also sets the defaults and gives the P = 1 breakdown predict prints. */
#include <math.h>
#include <string.h>

#include "../common/internal.h"
#include "serial.h"

#define LINE_BYTES 64.0

/* The whole heap in the effective LLC: where a sequential run, marked in
 * the same order every time, keeps its lines (below). */
static int fits_llc(const gcs_model_heap *heap, const gcs_model_opts *opts)
{
    return opts->llc_bytes > 0 && isfinite(opts->llc_hit_ns) && heap->live_lines > 0 &&
           opts->llc_bytes >= (double)heap->live_lines * LINE_BYTES;
}

double _gcs_serial_residency(const gcs_model_heap *heap, const gcs_model_opts *opts)
{
    if (!(opts->llc_bytes > 0) || !isfinite(opts->llc_hit_ns) || heap->live_lines == 0)
        return 0;
    double footprint = (double)heap->live_lines * LINE_BYTES;
    /* Measured, where calibrate did: a heap leaves the LLC gradually, not at
     * its size (docs/model.md, "Residency at the LLC's edge"). */
    double r = opts->residency_curve ? gcs_profile_residency(opts->residency_curve, footprint / opts->llc_bytes) : NAN;
    if (isfinite(r))
        return r;
    return opts->llc_bytes >= footprint ? 1 : opts->llc_bytes / footprint;
}

double _gcs_serial_miss_latency(const gcs_model_heap *heap, const gcs_model_opts *opts, double m1)
{
    double r = _gcs_serial_residency(heap, opts);
    /* an LLC hit never costs more than the memory it saves going to */
    return r > 0 ? r * fmin(opts->llc_hit_ns, m1) + (1 - r) * m1 : m1;
}

/* The first node with CPUs: where one worker runs (the collector pins
 * worker 0 there) and where calibrate chases from. */
static int first_cpu_node(const gcs_profile *prof)
{
    for (int i = 0; i < prof->nnodes; i++)
        if (prof->nodes[i].ncpus > 0)
            return i;
    return 0;
}

double _gcs_serial_dependent_latency(const gcs_profile *prof, const gcs_model_heap *heap,
                                     const gcs_model_opts *opts, double m1)
{
    double chase = opts->dependent_load ? gcs_profile_dependent_load(prof, (double)heap->live_lines * LINE_BYTES)
                                        : NAN;
    if (!isfinite(chase))
        return _gcs_serial_miss_latency(heap, opts, m1);
    /* The curve was chased on the first CPU's node over its own memory: a
     * line from another node costs what its M1 adds (its resident share
     * is in the LLC, wherever it came from). */
    int node = first_cpu_node(prof);
    double local = gcs_profile_latency(prof, GCS_ACCESS_READ, node, node);
    double r = _gcs_serial_residency(heap, opts);
    return chase + (1 - r) * fmax(0, m1 - local);
}

void _gcs_serial_miss_split(const gcs_model_heap *heap, const gcs_model_opts *opts, int a, double *pf,
                            double *seq, double *dep)
{
    int classes = opts->stream_classes && heap->streams_counted;
    *pf = fmin(classes ? heap->q1_streamed[a] : heap->q1_prefetched[a], heap->q1[a]);
    *seq = classes ? fmin(heap->q1_sequential[a], *pf) : 0;
    *dep = classes && opts->dependent_misses ? fmin(heap->q1_dependent[a], heap->q1[a] - *pf) : 0;
}

/* A resident line's streamed price: never more than the same line costs
 * from memory (x), the calibrated one where there is one. */
static double resident_stream(const gcs_model_opts *opts, double x)
{
    return isfinite(opts->resident_stream_ns) ? fmin(opts->resident_stream_ns, x) : x;
}

void _gcs_serial_line_prices(const gcs_model_heap *heap, const gcs_model_opts *opts, double m1, double so,
                             gcs_line_prices *out)
{
    double r = _gcs_serial_residency(heap, opts);
    /* Why two overlaps: the one fitted beyond the LLC is that of misses to
     * memory; an LLC hit returns sooner, so the same FIFO and the marker's
     * own work hide more of it, and one overlap for both prices a resident
     * heap far above its mark (docs/model.md, "Resident lines"). */
    double f_llc = isfinite(opts->resident_overlap) ? opts->resident_overlap : opts->overlap;
    gcs_assert_internal(r >= 0 && r <= 1 && opts->overlap >= 1 && f_llc >= 1);
    out->own_memory_ns = (1 - r) * m1 / opts->overlap;
    out->own_llc_ns = r > 0 ? r * fmin(opts->llc_hit_ns, m1) / f_llc : 0;
    double streamed = fmin(so, m1);
    double seq = isfinite(opts->cost_sequential_ns) ? opts->cost_sequential_ns : streamed;
    out->streamed_ns = (1 - r) * streamed + r * resident_stream(opts, streamed);
    /* A sequential run is marked in the same order every collection: when
     * the heap is larger than the LLC, each of its lines is evicted before
     * the next pass comes round to it (least recently used), so only a
     * heap that fits holds them; r, a random access's chance, is not theirs
     * (docs/model.md, "Resident lines"). */
    double r_seq = fits_llc(heap, opts);
    out->sequential_ns = (1 - r_seq) * seq + r_seq * resident_stream(opts, seq);
}

/* T1 with the chain and array classes re-priced (below, _gcs_serial_t1). */
static double classes_t1(const gcs_profile *prof, const gcs_model_heap *heap, const gcs_model_opts *opts)
{
    if (!(opts->cost_chain_ns > 0) || !(opts->cost_array_element_ns > 0))
        return heap->t1_ns;
    /* inspection priced every object at c_obj and every edge at c_ptr
     * (inspect.c); each class replaces what it does not spend: a chain step
     * its object and its one edge, an element examined in place its edge,
     * and a pointer-free child marked unread its object as well (the
     * element's cost was measured on such children: gccost.c). */
    double cobj = prof->gc_cost_object_ns, cptr = prof->gc_cost_pointer_ns;
    double t1 = heap->t1_ns - (double)heap->chain_steps * (cobj + cptr - opts->cost_chain_ns) -
                (double)heap->array_elements * (cptr - opts->cost_array_element_ns) -
                (double)heap->array_leaves * cobj;
    /* Each term swaps a positive cost for another, so t1 stays > 0 unless
     * the heap's T1 was priced with other costs than this profile's (a
     * heap built by hand): then keep it as given. */
    return t1 > 0 ? t1 : heap->t1_ns;
}

double _gcs_serial_t1(const gcs_profile *prof, const gcs_model_heap *heap, const gcs_model_opts *opts)
{
    double t1 = classes_t1(prof, heap, opts);
    /* gc_cost_ns prices no NULL field (its heaps have none); a NULL test
     * costs little where its outcome repeats and a branch miss where it
     * switches (model.h, null_switches) */
    if (opts->cost_null_switch_ns > 0)
        t1 += (double)heap->null_switches * opts->cost_null_switch_ns;
    return t1;
}

double _gcs_serial_dependent_hits_ns(const gcs_profile *prof, const gcs_model_heap *heap,
                                     const gcs_model_opts *opts)
{
    if (!opts->dependent_load || !opts->dependent_misses || heap->dependent_steps == 0)
        return 0;
    /* The curve is calibrate's random chase over a working set, the mean of
     * its every step: those the L2 served, the LLC and memory alike.  A
     * chain's steps are such steps, so each is priced at it; the replay's
     * dependent misses (the simulated LLC's) are priced already, with a
     * remote node's extra (_gcs_serial_dependent_latency), and the rest of
     * the steps are added here.  Without this a chain that fits the LLC paid
     * one step in two, the first touch of each of its lines (docs/model.md,
     * "Dependent steps"). */
    double misses = 0;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        double pf, seq, dep;
        _gcs_serial_miss_split(heap, opts, a, &pf, &seq, &dep);
        misses += dep;
    }
    double rest = (double)heap->dependent_steps - misses;
    double chase = gcs_profile_dependent_load(prof, (double)heap->live_lines * LINE_BYTES);
    return rest > 0 && isfinite(chase) && chase > 0 ? rest * chase : 0;
}

const gcs_model_heap *_gcs_serial_priced_heap(const gcs_profile *prof, const gcs_model_heap *heap,
                                              const gcs_model_opts *opts, gcs_model_heap *priced)
{
    double t1 = _gcs_serial_t1(prof, heap, opts), hits = _gcs_serial_dependent_hits_ns(prof, heap, opts);
    if (t1 == heap->t1_ns && hits == 0)
        return heap;
    *priced = *heap;
    priced->t1_ns = t1;
    /* a list's span is its whole work: re-priced with it */
    priced->tinf_ns = fmin(heap->tinf_ns, t1);
    /* The dependent steps are chain steps, on the span as the heap's work
     * is (a list's, all of them): T-infinity gains its share T-inf/T1, as
     * the model puts the misses on the critical path (predict.c). */
    if (hits > 0) {
        double sigma = t1 > 0 ? fmin(1, priced->tinf_ns / t1) : 1;
        priced->t1_ns += hits;
        priced->tinf_ns += hits * sigma;
    }
    gcs_assert_internal(priced->tinf_ns <= priced->t1_ns * (1 + 1e-12));
    return priced;
}

double _gcs_serial_service_ns(const gcs_profile *prof, const gcs_model_opts *opts, gcs_access a, int node)
{
    double so = prof->occupancy_ns[a][node];
    if (!opts->service_bandwidth || !prof->bandwidth_gbs || !(prof->bandwidth_gbs[node] > 0))
        return so;
    /* the line size the slow predictor simulated: the last level's */
    double line = prof->ncaches > 0 ? prof->caches[prof->ncaches - 1].line_bytes : LINE_BYTES;
    double transfers = a == GCS_ACCESS_RW ? 2 : 1; /* in exclusive, then written back */
    return fmin(so, transfers * line / prof->bandwidth_gbs[node]); /* bytes / (GB/s) = ns */
}

void gcs_model_opts_v2_costs(gcs_model_opts *opts, const gcs_profile *prof, gcs_model_sources *src)
{
    opts->cost_chain_ns = 0;
    opts->cost_array_element_ns = 0;
    src->classes = "nominal";
    /* the stream classes and the NULL switches (2026-11-27): the
     * calibrated price where the profile has it, else the nominal one (a
     * sequential line as any streamed line, NULL switches free), said in
     * src; the NULL switches only when asked for (model.h) */
    opts->cost_null_switch_ns = 0;
    src->nulls = NULL; /* not a term unless asked for (model.h) */
    if (opts->null_switches) {
        opts->cost_null_switch_ns = prof->has_gc_null_switch ? prof->gc_cost_null_switch_ns : 0;
        src->nulls = prof->has_gc_null_switch ? "gc_class_cost_ns.null_switch" : "nominal";
    }
    opts->stream_classes = 1;
    opts->dependent_misses = 1;
    /* a chain's next object at what a chase over the heap's footprint
     * costs on the collector's pages, where calibrate measured it */
    opts->dependent_load = prof->ndependent_load > 0;
    src->dependent = opts->dependent_load ? "dependent_load_ns" : "llc_hit_ns and M1";
    opts->cost_sequential_ns = prof->has_gc_stream_line ? prof->gc_stream_line_ns : NAN;
    src->sequential = prof->has_gc_stream_line ? "gc_stream_line_ns" : "nominal";
    /* The busy time a steal adds, and one more worker: what calibrate
     * measured for them, on a cache-resident tree marked by one worker and
     * by P (calibrate/gccost.c, stealfit.c).  A profile without the worker
     * cost measured the steal cost as growth over steals, both in one. */
    opts->steal_work_ns = prof->gc_cost_steal_ns > 0 ? prof->gc_cost_steal_ns : 0;
    opts->worker_work_ns = prof->has_gc_cost_worker && prof->gc_cost_worker_ns > 0 ? prof->gc_cost_worker_ns : 0;
    src->steal_work = prof->has_gc_cost_worker ? "gc_cost_ns.steal and .worker"
                      : opts->steal_work_ns > 0 ? "gc_cost_ns.steal"
                                                : NULL;
    opts->service_bandwidth = prof->bandwidth_gbs != NULL;
    opts->parallelism_bound = 1;
    opts->reuse_bound = 1;
    opts->steal_sim = 1; /* the heap's simulated steals where inspection made them */
    opts->mark_transfers = prof->has_gc_mark_transfer;
    src->service = opts->service_bandwidth ? "occupancy_ns+bandwidth_gbs" : "occupancy_ns";
    if (prof->has_gc_class_cost && prof->gc_cost_chain_ns > 0 && prof->gc_cost_array_element_ns > 0) {
        opts->cost_chain_ns = prof->gc_cost_chain_ns;
        opts->cost_array_element_ns = prof->gc_cost_array_element_ns;
        src->classes = "gc_class_cost_ns";
    }
}

void gcs_model_opts_v2(gcs_model_opts *opts, const gcs_profile *prof, int residency, int keep_overlap,
                       gcs_model_sources *src)
{
    memset(src, 0, sizeof *src);
    src->overlap = keep_overlap ? "option" : "nominal";
    /* not part of the model until gcs_model_opts_v2_costs prices them */
    src->classes = NULL;
    src->nulls = NULL;
    src->sequential = NULL;
    src->steal_work = NULL;
    src->dependent = NULL;
    src->service = "occupancy_ns";
    /* the closed MVA has one outstanding request per worker: no overlap */
    if (!keep_overlap && prof->has_gc_overlap && opts->mva == GCS_MODEL_MVA_OPEN) {
        opts->overlap = prof->gc_miss_overlap;
        src->overlap = "gc_miss_overlap";
    }
    src->llc = gcs_profile_llc_effective(prof, &src->llc_bytes, &src->llc_hit_ns);
    opts->llc_bytes = 0;
    opts->llc_hit_ns = NAN;
    opts->resident_overlap = NAN;
    opts->resident_stream_ns = NAN;
    opts->residency_curve = NULL;
    src->resident = NULL;
    /* by default only where calibrate measured a resident line's prices:
     * without them a resident miss would be priced with the overlap fitted
     * beyond the LLC, which double counts (docs/model.md, "Serial work") */
    if (residency == GCS_MODEL_RESIDENCY_DEFAULT)
        residency = prof->has_gc_resident;
    if (residency && isfinite(src->llc_hit_ns)) {
        opts->llc_bytes = src->llc_bytes;
        opts->llc_hit_ns = src->llc_hit_ns;
        src->residency = 1;
        if (prof->has_gc_resident && opts->mva == GCS_MODEL_MVA_OPEN) {
            opts->resident_overlap = prof->gc_resident_overlap;
            opts->resident_stream_ns = prof->gc_resident_stream_ns;
            src->resident = "gc_resident";
        }
        if (prof->nresidency > 0)
            opts->residency_curve = prof;
        src->residency_share = prof->nresidency > 0 ? "gc_residency" : "llc_effective_bytes / footprint";
    }
    gcs_model_opts_steal_level(opts, prof); /* stolen lines: the shared level's latency (sharing.c) */
}

void gcs_model_opts_paper(gcs_model_opts *opts)
{
    opts->span = GCS_MODEL_SPAN_PAPER;
    opts->overlap = 1;
    opts->llc_bytes = 0;
    opts->llc_hit_ns = NAN;
    opts->resident_overlap = NAN;
    opts->resident_stream_ns = NAN;
    opts->coord = 0; /* the paper has no wake, search or termination terms */
}

static double ms(double ns)
{
    return ns / 1e6;
}

json_t *gcs_model_serial_json(const gcs_profile *prof, const gcs_model_heap *heap, const gcs_model_opts *opts,
                              const gcs_model_sources *src, gcs_err *err)
{
    gcs_model_result r1;
    if (gcs_model_predict(prof, heap, 1, opts, &r1, err) < 0)
        return NULL;
    gcs_model_heap priced_store;
    heap = _gcs_serial_priced_heap(prof, heap, opts, &priced_store);
    /* The idle parts at P = 1, as setup() in predict.c prices them: the one
     * worker sits on the first node with CPUs, as the collector pins it. */
    int cpu = first_cpu_node(prof);
    double streamed = 0, sequential = 0, memory = 0, llc = 0, dependent = 0;
    double n_streamed = 0, n_sequential = 0, n_dependent = 0;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
        double pf, seq, dep; /* a chain's dependent misses wait whole (model.h q1_dependent) */
        _gcs_serial_miss_split(heap, opts, a, &pf, &seq, &dep);
        double own = heap->q1[a] - pf - dep;
        n_streamed += pf;
        n_sequential += seq;
        n_dependent += dep;
        for (int j = 0; j < heap->nnodes; j++) {
            double m1 = gcs_profile_latency(prof, (gcs_access)a, cpu, j);
            gcs_line_prices lp;
            _gcs_serial_line_prices(heap, opts, m1, prof->occupancy_ns[a][j], &lp);
            streamed += heap->v[j] * ((pf - seq) * lp.streamed_ns + seq * lp.sequential_ns);
            sequential += heap->v[j] * seq * lp.sequential_ns;
            memory += heap->v[j] * own * lp.own_memory_ns;
            llc += heap->v[j] * own * lp.own_llc_ns;
            dependent += heap->v[j] * dep * _gcs_serial_dependent_latency(prof, heap, opts, m1);
        }
    }
    /* the dependent steps the LLC or a private level served are in the
     * priced T1 (_gcs_serial_priced_heap); shown with the dependent misses */
    double hits = _gcs_serial_dependent_hits_ns(prof, heap, opts);
    double idle = heap->t1_ns + streamed + memory + llc + dependent;
    double t1_shown = heap->t1_ns - hits;
    dependent += hits;
    /* every dependent step where they are priced, else the misses */
    double priced_steps = hits > 0 ? (double)heap->dependent_steps : n_dependent;
    json_t *nominal = json_array();
    if (strcmp(src->overlap, "nominal") == 0)
        json_array_append_new(nominal, json_string("overlap"));
    if (src->llc == GCS_LLC_NOMINAL || src->llc == GCS_LLC_NONE)
        json_array_append_new(nominal, json_string("llc_effective_bytes"));
    if (src->classes && strcmp(src->classes, "nominal") == 0)
        json_array_append_new(nominal, json_string("gc_class_cost_ns"));
    if (src->nulls && strcmp(src->nulls, "nominal") == 0)
        json_array_append_new(nominal, json_string("gc_class_cost_ns.null_switch"));
    if (src->sequential && strcmp(src->sequential, "nominal") == 0)
        json_array_append_new(nominal, json_string("gc_stream_line_ns"));
    /* at P = 1 the time also holds the one worker's wake and tail
     * (coordination, when the profile has gc_coord): not queueing */
    double coord = r1.coord ? r1.time_ns - r1.time_no_coord_ns : 0;
    json_t *out = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:b, s:f, s:f, s:o, s:s, s:o}", "t1_ms",
                     ms(t1_shown), "streamed_ms", ms(streamed), "memory_miss_ms", ms(memory), "llc_miss_ms",
                     ms(llc), "queueing_ms", ms(fmax(0, r1.time_ns - coord - idle)), "coord_ms", ms(coord),
                     "time_ms", ms(r1.time_ns),
                     "overlap", opts->overlap, "overlap_source", src->overlap, "residency_on", src->residency,
                     "residency", _gcs_serial_residency(heap, &(gcs_model_opts){.llc_bytes = src->llc_bytes,
                                                                                 .llc_hit_ns = src->llc_hit_ns,
                                                                                 .residency_curve =
                                                                                     opts->residency_curve}),
                     "llc_effective_bytes", src->llc_bytes, "llc_hit_ns",
                     isfinite(src->llc_hit_ns) ? json_real(src->llc_hit_ns) : json_null(), "llc_source",
                     gcs_llc_source_name(src->llc), "nominal", nominal);
    if (out)
        json_object_set_new(out, "service_source", json_string(src->service ? src->service : "occupancy_ns"));
    if (out)
        json_object_set_new(out, "residency_source",
                            src->residency_share ? json_string(src->residency_share) : json_null());
    if (out)
        json_object_set_new(out, "sequential_ms", json_real(ms(sequential)));
    if (out)
        json_object_set_new(out, "dependent_ms", json_real(ms(dependent)));
    /* what dependent_ms holds: the count, the mean price of one, and
     * where the price came from (model.h, dependent_load) */
    if (out)
        json_object_set_new(out, "dependent",
                            json_pack("{s:f, s:I, s:o, s:s}", "misses", n_dependent, "steps",
                                      (json_int_t)heap->dependent_steps, "latency_ns",
                                      priced_steps > 0 ? json_real(dependent / priced_steps) : json_null(), "source",
                                      src->dependent ? src->dependent : "off"));
    /* the resident lines' prices (2026-11-28): null where residency is off
     * or priced as from memory */
    if (out)
        json_object_set_new(out, "resident",
                            json_pack("{s:s, s:o, s:o}", "source", src->resident ? src->resident : "off",
                                      "miss_overlap",
                                      isfinite(opts->resident_overlap) ? json_real(opts->resident_overlap)
                                                                       : json_null(),
                                      "stream_line_ns",
                                      isfinite(opts->resident_stream_ns) ? json_real(opts->resident_stream_ns)
                                                                         : json_null()));
    /* model v2's stream classes and NULL fields (2026-11-27): the counts
     * and prices behind streamed_ms and t1_ms */
    if (out)
        json_object_set_new(out, "streams",
                            json_pack("{s:s, s:f, s:f, s:o, s:s}", "counted_by",
                                      opts->stream_classes && heap->streams_counted ? "streamer" : "prefetcher", "streamed", n_streamed, "sequential",
                                      n_sequential, "sequential_ns",
                                      isfinite(opts->cost_sequential_ns) ? json_real(opts->cost_sequential_ns)
                                                                         : json_null(),
                                      "source", src->sequential ? src->sequential : "off"));
    if (out)
        json_object_set_new(out, "nulls", json_pack("{s:I, s:I, s:f, s:f, s:s}", "null_fields",
                                                     (json_int_t)heap->null_fields, "null_switches",
                                                     (json_int_t)heap->null_switches, "switch_ns",
                                                     opts->cost_null_switch_ns, "ms",
                                                     ms((double)heap->null_switches * opts->cost_null_switch_ns),
                                                     "source",
                                                     src->nulls ? src->nulls : "off: predict --null-switches on"));
    if (out)
        json_object_set_new(out, "classes", json_pack("{s:s, s:I, s:I, s:I, s:f, s:f}", "source",
                                                      src->classes ? src->classes : "off", "chain_steps",
                                                      (json_int_t)heap->chain_steps, "array_elements",
                                                      (json_int_t)heap->array_elements, "array_leaves",
                                                      (json_int_t)heap->array_leaves, "chain_ns",
                                                      opts->cost_chain_ns, "array_element_ns",
                                                      opts->cost_array_element_ns));
    return out;
}
