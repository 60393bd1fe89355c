/* predict.c -- one prediction of the parallel mark time for P workers, with
 * the paper's two ablations and the predicted speedup stack. */
#include <math.h>
#include <string.h>

#include "../common/internal.h"
#include "contention.h"
#include "serial.h"
#include "coord.h"

void gcs_model_opts_init(gcs_model_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->mva = GCS_MODEL_MVA_OPEN;
    opts->steals = GCS_MODEL_STEALS_PAPER;
    opts->steal_a = 1;
    opts->steal_b = 0;
    /* Brent's form by default (decided in the model v2 issue): the paper's
     * form predicts at least 4/3 at P = 2 for any chain; it stays as
     * GCS_MODEL_SPAN_PAPER for comparison (docs/model.md). */
    opts->span = GCS_MODEL_SPAN_CRITICAL;
    opts->overlap = 1;
    opts->llc_bytes = 0; /* no warm residency (serial.c) */
    opts->llc_hit_ns = NAN;
    opts->resident_overlap = NAN; /* a resident line priced as from memory */
    opts->resident_stream_ns = NAN;
    opts->residency_curve = NULL; /* r = min(1, llc_bytes / footprint) */
    opts->coord = 1; /* used when the profile has gc_coord */
    /* off: measured on the dev corpus it made P = 2 worse (docs/model.md,
     * "Extra work in parallel"); predict --shared-lines on */
    opts->sharing = 0;
    opts->steal_miss_ns = NAN; /* a stolen line's miss costs what any other does */
    opts->cost_null_switch_ns = 0;    /* NULL fields free, as gc_cost_ns prices them */
    opts->null_switches = 0;          /* and not priced by v2 unless asked for (model.h) */
    opts->stream_classes = 0;  /* the base model's 16-page streamer (q1_prefetched) */
    opts->cost_sequential_ns = NAN;
}

int gcs_model_opts_fitted_overlap(gcs_model_opts *opts, const gcs_profile *prof, gcs_err *err)
{
    if (!prof->has_gc_overlap) {
        gcs_err_set(err, "profile has no gc_miss_overlap: run gcscale calibrate on the machine, or "
                         "gcscale calibrate --gc-only -o PROFILE");
        return -1;
    }
    opts->overlap = prof->gc_miss_overlap;
    return 0;
}

int gcs_model_opts_fitted_steals(gcs_model_opts *opts, const gcs_profile *prof, gcs_err *err)
{
    if (!prof->has_gc_steals) {
        gcs_err_set(err, "profile has no gc_steals: run gcscale calibrate on the machine");
        return -1;
    }
    opts->steals = GCS_MODEL_STEALS_FITTED;
    opts->steal_a = prof->gc_steal_a;
    opts->steal_b = prof->gc_steal_b;
    return 0;
}

const char *gcs_model_span_name(gcs_model_span span)
{
    return span == GCS_MODEL_SPAN_CRITICAL ? "critical" : "paper";
}

const char *gcs_model_mva_name(gcs_model_mva mva)
{
    return mva == GCS_MODEL_MVA_CLOSED ? "closed" : "open";
}

static int finite_nonneg(double x)
{
    return isfinite(x) && x >= 0;
}

int gcs_model_check(const gcs_profile *prof, const gcs_model_heap *heap, gcs_err *err)
{
    if (prof->nnodes > GCS_MODEL_MAX_NODES) {
        gcs_err_set(err, "profile has %d nodes; the model handles at most %d", prof->nnodes,
                    GCS_MODEL_MAX_NODES);
        return -1;
    }
    if (heap->nnodes < 1 || heap->nnodes > prof->nnodes) {
        gcs_err_set(err, "heap uses %d memory nodes but the profile has %d", heap->nnodes,
                    prof->nnodes);
        return -1;
    }
    if (!(heap->t1_ns > 0) || !isfinite(heap->t1_ns) || !finite_nonneg(heap->tinf_ns) ||
        !finite_nonneg(heap->q1[GCS_ACCESS_READ]) || !finite_nonneg(heap->q1[GCS_ACCESS_RW]) ||
        !finite_nonneg(heap->live_lines_avg)) {
        gcs_err_set(err, "heap: T1 must be positive and Tinf, Q1 and L finite and non-negative");
        return -1;
    }
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        if (!finite_nonneg(heap->q1_prefetched[a]) || heap->q1_prefetched[a] > heap->q1[a]) {
            gcs_err_set(err, "heap: prefetched misses must be between 0 and Q1");
            return -1;
        }
    for (int a = 0; heap->streams_counted && a < GCS_ACCESS_COUNT; a++)
        if (!finite_nonneg(heap->q1_sequential[a]) || !(heap->q1_sequential[a] <= heap->q1_streamed[a]) ||
            !(heap->q1_streamed[a] <= heap->q1[a])) {
            gcs_err_set(err, "heap: streamed misses must be between 0 and Q1, sequential ones between 0 and "
                             "the streamed");
            return -1;
        }
    for (int a = 0; heap->streams_counted && a < GCS_ACCESS_COUNT; a++)
        if (!finite_nonneg(heap->q1_dependent[a]) || !(heap->q1_dependent[a] <= heap->q1[a] - heap->q1_streamed[a])) {
            gcs_err_set(err, "heap: dependent misses must be between 0 and the misses no stream covers");
            return -1;
        }
    if (!(heap->table_fit >= 0 && heap->table_fit <= 1) || !(heap->heap_fit >= 0 && heap->heap_fit <= 1)) {
        gcs_err_set(err, "heap: the table's and the heap's fit in the private caches must be between 0 and 1");
        return -1;
    }
    if (heap->dependent_steps > heap->chain_steps) {
        gcs_err_set(err, "heap: dependent steps must be at most the chain steps");
        return -1;
    }
    double sum = 0;
    for (int j = 0; j < heap->nnodes; j++) {
        if (!finite_nonneg(heap->v[j])) {
            gcs_err_set(err, "heap: V[%d] is not a share in [0, 1]", j);
            return -1;
        }
        sum += heap->v[j];
    }
    if (fabs(sum - 1) > 1e-6) {
        gcs_err_set(err, "heap: the shares V_j of memory nodes add up to %.6f, not 1", sum);
        return -1;
    }
    return 0;
}

/* Steals with P workers.  The paper's rough estimate is P * log(T1); gcscale
 * reads log as the natural logarithm of T1 in nanoseconds, and a single
 * worker never steals. */
static double steal_count(const gcs_model_heap *heap, int threads, const gcs_model_opts *opts)
{
    if (threads <= 1)
        return 0;
    double log_t1 = log(heap->t1_ns > 1 ? heap->t1_ns : 1);
    if (opts->steals == GCS_MODEL_STEALS_FITTED) {
        double n = (threads - 1) * (opts->steal_a * log_t1 + opts->steal_b);
        return n > 0 ? n : 0;
    }
    return threads * log_t1;
}

/* How many of the P workers run on each CPU node: worker i on the i-th CPU
 * in node order, wrapping around, as the collector pins them. */
static void worker_nodes(const gcs_profile *prof, int threads, double *weight)
{
    int ncpus = gcs_profile_cpus(prof);
    for (int i = 0; i < prof->nnodes; i++)
        weight[i] = 0;
    if (ncpus == 0) {
        weight[0] = 1;
        return;
    }
    for (int w = 0; w < threads; w++) {
        int k = w % ncpus;
        for (int i = 0; i < prof->nnodes; i++) {
            if (k < prof->nodes[i].ncpus) {
                weight[i] += 1.0 / threads;
                break;
            }
            k -= prof->nodes[i].ncpus;
        }
    }
#if GCS_ASSERT_ON
    double all = 0; /* every worker sits on exactly one node */
    for (int i = 0; i < prof->nnodes; i++)
        all += weight[i];
    gcs_assert_internal(fabs(all - 1) < 1e-9);
#endif
}

/* Fills the fixed-point inputs for P workers and Q misses split like Q1. */
static void setup(const gcs_profile *prof, const gcs_model_heap *heap, int threads, double misses,
                  const gcs_model_opts *opts, gcs_contention *c)
{
    memset(c, 0, sizeof *c);
    c->threads = threads;
    c->nnodes = heap->nnodes;
    c->misses = misses;
    if (opts->span == GCS_MODEL_SPAN_CRITICAL) {
        /* Brent's bound, and the serial misses met along the critical path
         * (taken in proportion to the work on it) paid by one worker. */
        double tinf = heap->tinf_ns < heap->t1_ns ? heap->tinf_ns : heap->t1_ns;
        double q1 = heap->q1[GCS_ACCESS_READ] + heap->q1[GCS_ACCESS_RW];
        double q_span = q1 * tinf / heap->t1_ns;
        double sigma = misses > 0 ? q_span / misses : 0;
        if (sigma > 1)
            sigma = 1;
        c->compute_ns = (heap->t1_ns - tinf) / threads + tinf;
        c->miss_share = (1 - sigma) / threads + sigma;
    } else {
        c->compute_ns = heap->t1_ns / threads + heap->tinf_ns;
        c->miss_share = 1.0 / threads;
    }
    /* A request queues behind the other workers' requests only.  With
     * opts->parallelism_bound (v2), the misses on the critical path (the
     * sigma share with Brent's bound) are made while the other workers have
     * no work, so they queue behind nobody, and one worker's share of the
     * traffic is miss_share: a list (sigma = 1) meets no contention at any
     * P, a wide heap (sigma = 0) the paper's (P-1)/P.  Without it, (P-1)/P
     * whatever the heap (the base model; moving it moved the floor's
     * figures both ways, docs/model.md). */
    c->share_others = opts->parallelism_bound ? 1 - c->miss_share : (threads - 1.0) / threads;
    double q1 = heap->q1[GCS_ACCESS_READ] + heap->q1[GCS_ACCESS_RW];
    double class_share[GCS_ACCESS_COUNT] = {1, 0};
    /* The prefetched share of these misses (the serial ones only: a thief's
     * extra misses on stolen lines are not streams) costs S_O, not M1.
     * Model v2's stream classes (opts->stream_classes) take the streams its
     * streamer counted instead, and price the sequential ones apart. */
    double prefetched[GCS_ACCESS_COUNT] = {0, 0}, sequential[GCS_ACCESS_COUNT] = {0, 0}, streamed = 0;
    /* and the share no overlap hides: a chain's next object (model.h,
     * q1_dependent; model v2) */
    double dependent[GCS_ACCESS_COUNT] = {0, 0}, dependent_all = 0;
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        if (misses > 0) {
            double pf, seq, dep;
            _gcs_serial_miss_split(heap, opts, a, &pf, &seq, &dep);
            prefetched[a] = pf / misses;
            sequential[a] = seq / misses;
            dependent[a] = dep / misses;
            streamed += prefetched[a];
            dependent_all += dependent[a];
        }
    /* Overlapped misses (model.h): the worker waits 1/overlap of the latency
     * and of the queueing delay of the misses it fetches itself. */
    double overlap = opts->overlap;
    /* shares of one worker's misses: the validated inputs keep them in [0, 1] */
    gcs_assert_internal(c->miss_share >= 0 && c->miss_share <= 1 && streamed >= 0 && streamed <= 1 + 1e-12);
    double wait_seen = overlap == 1 ? 1 : (1 - streamed - dependent_all) / overlap + streamed + dependent_all;
    /* The misses beyond Q1 are a thief's on the lines it stole; with
     * opts->steal_miss_ns they cost the latency of the level thief and
     * victim share (sharing.c) instead of a miss to memory. */
    double extra_frac = misses > q1 && misses > 0 ? (misses - q1) / misses : 0;
    if (q1 > 0)
        for (int a = 0; a < GCS_ACCESS_COUNT; a++)
            class_share[a] = heap->q1[a] / q1;
    /* A serial miss whose line is resident (residency r, serial.c) is served
     * by the LLC: it pays its price but neither occupies nor queues at the
     * memory node.  A thief's extra misses stay requests to memory. */
    double memory_share = 1 - _gcs_serial_residency(heap, opts) * (1 - extra_frac);
    /* a thief's miss on a stolen line at the shared LLC's latency is an LLC
     * hit, overlapped as the resident lines' are where the profile has their
     * price */
    double steal_overlap = isfinite(opts->steal_miss_ns) && isfinite(opts->resident_overlap) ? opts->resident_overlap
                                                                                             : overlap;
    double cpu_weight[GCS_MODEL_MAX_NODES];
    worker_nodes(prof, threads, cpu_weight);
    for (int j = 0; j < heap->nnodes; j++) {
        double requests = heap->v[j] * misses * memory_share;
        c->visit[j] = heap->v[j];
        c->requests[j] = requests;
        double s = 0, m = 0;
        for (int a = 0; a < GCS_ACCESS_COUNT; a++) {
            double m1 = 0;
            for (int i = 0; i < prof->nnodes; i++)
                m1 += cpu_weight[i] * gcs_profile_latency(prof, (gcs_access)a, i, j);
            double so = prof->occupancy_ns[a][j];
            s += class_share[a] * _gcs_serial_service_ns(prof, opts, (gcs_access)a, j);
            /* a miss may find its line in the LLC; a sequential one costs
             * its calibrated price (serial.c) */
            gcs_line_prices lp;
            _gcs_serial_line_prices(heap, opts, m1, so, &lp);
            double lat = _gcs_serial_miss_latency(heap, opts, m1);
            double steal_lat = isfinite(opts->steal_miss_ns) ? opts->steal_miss_ns : lat;
            m += (class_share[a] * (1 - extra_frac) - prefetched[a] - dependent[a]) *
                     (lp.own_memory_ns + lp.own_llc_ns) +
                 dependent[a] * _gcs_serial_dependent_latency(prof, heap, opts, m1) +
                 class_share[a] * extra_frac * steal_lat / steal_overlap +
                 (prefetched[a] - sequential[a]) * lp.streamed_ns + sequential[a] * lp.sequential_ns;
        }
        c->service[j] = s;
        c->latency[j] = m;
        c->wait_seen[j] = wait_seen;
        c->load[j] = requests * s;
        c->miss_time_idle += heap->v[j] * misses * m;
    }
}

/* A lost part of the speedup stack that is only the solver's rounding (at
 * P = 1 every part is 0, and printed -0.00 it would read as a gain). */
static double without_rounding(double part, int threads)
{
    return fabs(part) < 1e-9 * threads ? 0 : part;
}

/* What one simulated mark-table transfer adds to the busy time on this
 * heap.  calibrate prices it on two random graphs (calibrate/marktable.c):
 * one of four times the private cache (heap_fit 0.25), where a transfer
 * overlaps the mark's misses, and, where the profile has it, one of half
 * the private cache (heap_fit 1), where nothing else is in flight and a
 * transfer cost 2-3 times as much on the Intel VM.  Between the two the
 * price goes linearly with the heap's fit; below the first it is the
 * first's (docs/model.md, "Mark-table lines where the heap fits"). */
static double mark_transfer_price(const gcs_profile *prof, const gcs_model_heap *heap)
{
    double big = prof->gc_mark_transfer_ns;
    if (!prof->has_gc_mark_transfer_cached || !(heap->heap_fit > GCS_MODEL_MARK_TRANSFER_HEAP_FIT))
        return big;
    double w = fmin(1, (heap->heap_fit - GCS_MODEL_MARK_TRANSFER_HEAP_FIT) / (1 - GCS_MODEL_MARK_TRANSFER_HEAP_FIT));
    return big + w * (prof->gc_mark_transfer_cached_ns - big);
}

int gcs_model_predict(const gcs_profile *prof, const gcs_model_heap *heap, int threads,
                      const gcs_model_opts *opts, gcs_model_result *out, gcs_err *err)
{
    memset(out, 0, sizeof *out);
    if (threads < 1) {
        gcs_err_set(err, "model: thread count must be at least 1");
        return -1;
    }
    if (gcs_model_check(prof, heap, err) < 0)
        return -1;
    if (!(opts->overlap >= 1) || !isfinite(opts->overlap)) {
        gcs_err_set(err, "model: the miss overlap must be a number >= 1");
        return -1;
    }
    if (opts->overlap != 1 && opts->mva != GCS_MODEL_MVA_OPEN) {
        gcs_err_set(err, "model: overlapped misses work with the open model only (--mva open)");
        return -1;
    }
    /* model v2's per-class marker costs re-price T1 (serial.c) */
    gcs_model_heap priced;
    heap = _gcs_serial_priced_heap(prof, heap, opts, &priced);
    double q1 = heap->q1[GCS_ACCESS_READ] + heap->q1[GCS_ACCESS_RW];
    double steals = steal_count(heap, threads, opts);
    double extra_misses = steals * heap->live_lines_avg;
    /* A steal turns into misses only accesses that would have hit a private
     * cache in the serial mark, and only those whose line a worker other
     * than the one that used it last now uses: with the work spread over P
     * workers without regard to locality (as stealing is), (P-1)/P of those
     * reuses.  N_S L, the paper's count, prices L live lines per steal
     * however many steals there are, and on a random heap at P = 16 came to
     * ten times Q1 (docs/model.md, "Extra misses: at most the reuses"). */
    if (opts->reuse_bound && heap->private_hits > 0)
        extra_misses = fmin(extra_misses, heap->private_hits * (threads - 1.0) / threads);
    /* With residency priced (serial.c), a thief's re-reads of resident
     * lines are in the steal's own work already: gc_cost_ns.steal is the
     * busy time a steal adds on a cache-resident tree (calibrate/gccost.c),
     * where every line a thief re-reads is such a line.  Only the share
     * from memory is extra misses (docs/model.md, "Resident lines"). */
    if (opts->steal_work_ns > 0 || opts->worker_work_ns > 0)
        extra_misses *= 1 - _gcs_serial_residency(heap, opts);
    double q_p = q1 + extra_misses;
    gcs_contention c, serial;

    /* T_1^M, the reference of every speedup: one worker, no contention. */
    double t_serial;
    setup(prof, heap, 1, q1, opts, &serial);
    if (_gcs_contention_solve(&serial, opts->mva, &t_serial, err) < 0)
        return -1;

    /* The full prediction. */
    double t;
    setup(prof, heap, threads, q_p, opts, &c);
    if (_gcs_contention_solve(&c, opts->mva, &t, err) < 0)
        return -1;
    /* Coordination (coord.c): per-worker wake, search and tail on top of the
     * busy time solved above, at P and at P = 1 (the speedup's reference);
     * the misses are spread over the busy time only. */
    double collector_steals = _gcs_model_collector_steals(prof, heap, threads, steals, opts);
    gcs_model_coord cp, c1;
    out->coord = _gcs_model_coord(prof, heap, threads, collector_steals, opts, &cp, &c1);
    out->coord_terms = cp;
    /* Extra work in parallel (sharing.c): lines passing between workers,
     * with the collector's steals cutting the mark order.  Busy time on top
     * of the fixed point's: a transfer is served by the other worker's
     * cache, not by a memory node, and the marker's prefetch FIFO overlaps
     * it as any miss (opts->overlap). */
    if (opts->sharing && prof->has_gc_line_transfer) {
        out->shared_transfers = gcs_model_shared_transfers(heap, threads, collector_steals);
        out->shared_ns = out->shared_transfers * prof->gc_line_transfer_ns / (opts->overlap * threads);
    }
    /* The steals' own work: a thief's first pops from a stolen subtree,
     * its deque's cold lines, the victim's lost locality.  The fixed point
     * prices only the paper's N_S x L extra misses; calibrate measures the
     * whole busy time a steal adds (gc_cost_ns.steal) and how many steals
     * the collector makes (gc_steals), and the product is what the workers'
     * summed busy time gains.  Spread evenly over the workers.  The count
     * is the fit's, which the price was calibrated with, unless the heap's
     * own simulated count (collector_steals, steals.c) is smaller: the fit, a ln T1 without
     * an intercept, hardly falls with the heap and overcounts small ones
     * several times, while where the graph makes more steals (full
     * batches of entries) each costs the collector next to nothing
     * (docs/model.md, "Steals from the graph"). */
    if (threads > 1 && opts->steal_work_ns > 0)
        out->steal_work_ns = fmin(_gcs_model_fitted_steals(prof, heap, threads, steals, opts), collector_steals) *
                             opts->steal_work_ns / threads;
    /* And what each worker beyond the first adds whatever it steals:
     * calibrate's steal heap grows by 11-19 us at P = 2 on a 2-vCPU guest
     * with 1 steal or 21 (the cause is not known: the same tree laid out in
     * preorder grows by a third of that; docs/model.md, "Steal work: per
     * worker and per steal"). */
    if (threads > 1 && opts->worker_work_ns > 0) {
        out->worker_work_ns = (threads - 1.0) * opts->worker_work_ns / threads;
        out->steal_work_ns += out->worker_work_ns;
    }
    /* Mark-table lines passing between the workers' private caches: where a
     * worker marks an object whose table line the other last wrote, the
     * line moves.  The count is the steal simulation's, which follows who
     * marks what on the heap's own graph (steals.c, mark_line_touch) but
     * evicts nothing, so only the share of the table a private cache holds
     * moves (table_fit); the price is what one such transfer added to the
     * summed busy time on calibrate's random graph (calibrate/marktable.c).
     * The shared-lines term above prices lines its own way: not both. */
    if (threads > 1 && opts->mark_transfers && !opts->sharing && prof->has_gc_mark_transfer &&
        heap->steals_simulated >= threads && heap->table_fit > 0) {
        out->mark_transfers = heap->sim_transfers[threads] * heap->table_fit;
        out->mark_transfer_ns = out->mark_transfers * mark_transfer_price(prof, heap) / threads;
    }
    /* per worker on top of the busy time: coordination, shared lines, steal work */
    double extra_busy = out->shared_ns + out->mark_transfer_ns + out->steal_work_ns;
    double added_p = cp.wake_ns + cp.search_ns + cp.tail_ns + extra_busy;
    double ts = t_serial + c1.wake_ns + c1.search_ns + c1.tail_ns, tt = t + added_p;
    out->time_no_coord_ns = t + extra_busy;
    out->speedup_no_coord = t_serial / out->time_no_coord_ns;
    out->threads = threads;
    out->t_cilk_ns = c.compute_ns;
    out->steals = steals;
    out->q_p = q_p;
    out->m1_ns = q_p > 0 ? c.miss_time_idle / q_p : 0;
    out->m_p_ns = q_p > 0 ? (t - c.compute_ns) / (c.miss_share * q_p) : 0;
    out->time_ns = tt;
    out->speedup = ts / tt;
    out->nnodes = c.nnodes;
    memcpy(out->rho, c.rho, sizeof c.rho);
    memcpy(out->wait_ns, c.wait, sizeof c.wait);
    out->iterations = c.iterations;
    out->solver = c.solver;

    /* Pred(M_P = M1): no contention. */
    out->time_no_contention_ns = c.compute_ns + c.miss_time_idle * c.miss_share + added_p;
    out->speedup_no_contention = ts / out->time_no_contention_ns;

    /* Pred(Q_P = Q1): contention, but no extra misses from stealing. */
    gcs_contention no_extra;
    double t_no_extra;
    setup(prof, heap, threads, q1, opts, &no_extra);
    if (_gcs_contention_solve(&no_extra, opts->mva, &t_no_extra, err) < 0)
        return -1;
    out->time_no_extra_misses_ns = t_no_extra + added_p;
    out->speedup_no_extra_misses = ts / out->time_no_extra_misses_ns;

    /* The speedup stack (model-notes 1.4): each lost part is P times the
     * time it adds per worker, over T.  Per worker,
     *   T = compute + miss_share * (idle miss time + queueing),
     * so the extra misses add miss_share * idle miss time over Q_P = Q1, and
     * contention adds the queueing.  The extra misses are priced by that
     * difference, not at the mean miss cost M1: the serial misses include
     * prefetched ones, which cost only S_O, and a thief's misses on stolen
     * lines are never prefetched (setup).  The span part is the rest,
     * (P-1) Tinf / T (with --span critical, Tinf and the misses on it) on a
     * machine where every CPU node sees the same latencies; elsewhere it also
     * holds the difference between the serial and the P-worker M1, so the
     * parts still add to P. */
    double extra = threads * (c.miss_share * c.miss_time_idle -
                              no_extra.miss_share * no_extra.miss_time_idle);
    double contention = threads * (t - c.compute_ns - c.miss_share * c.miss_time_idle);
    out->lost_extra_misses = without_rounding(extra / tt, threads);
    out->lost_contention = without_rounding(contention / tt, threads);
    /* Coordination: P times each per-worker time, over T, as the measured
     * stack's sums over the workers (validate.c).  The span part, the rest,
     * then also holds -(wake + tail at P = 1)/T, as the measured stack's
     * "other" holds T(1) - B(1). */
    out->lost_wake = without_rounding(threads * cp.wake_ns / tt, threads);
    out->lost_search = without_rounding(threads * cp.search_ns / tt, threads);
    out->lost_tail = without_rounding(threads * cp.tail_ns / tt, threads);
    out->lost_shared_lines = without_rounding(threads * (out->shared_ns + out->mark_transfer_ns) / tt, threads);
    out->lost_steal_work = without_rounding(threads * out->steal_work_ns / tt, threads);
    out->lost_extra_work = out->lost_extra_misses + out->lost_shared_lines + out->lost_steal_work;
    out->lost_span = without_rounding(threads - out->speedup - out->lost_extra_work -
                                      out->lost_contention - out->lost_wake - out->lost_search -
                                      out->lost_tail, threads);
    /* the stack's parts add up to P (the span part is the rest, up to the
     * rounding without_rounding() drops) */
    gcs_assert_internal(fabs(out->speedup + out->lost_extra_work + out->lost_contention + out->lost_span +
                             out->lost_wake + out->lost_search + out->lost_tail - threads) <= 1e-6 * threads);
    return 0;
}

int gcs_model_recommend(const gcs_model_result *results, int n, double tolerance)
{
    if (n <= 0)
        return 0;
    double best = INFINITY;
    for (int i = 0; i < n; i++)
        if (results[i].time_ns < best)
            best = results[i].time_ns;
    int choice = 0;
    for (int i = 0; i < n; i++)
        if (results[i].time_ns <= best * (1 + tolerance) &&
            (choice == 0 || results[i].threads < choice))
            choice = results[i].threads;
    return choice;
}
