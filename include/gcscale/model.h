/* model.h -- the Endo-Taura-Yonezawa model of parallel mark time
 * (prefix gcs_model_).
 *
 * Given what a heap costs to mark (gcs_model_heap: work T1, span Tinf, serial
 * misses Q1 by request class, live cache lines L, the share V_j of requests
 * that go to each memory node) and a machine profile (miss latency M1 and
 * occupancy S_O per memory node and class), predicts the mark time with P
 * workers:
 *
 *     T_P^M = T1/P + Tinf + Q_P * M_P(T_P^M) / P,   Q_P = Q1 + N_S * L
 *
 * where M_P is the miss cost with contention at the memory nodes, solved as
 * a fixed point (open queueing model, GSL Newton with a Brent fallback) or by
 * exact MVA of a closed network of P workers.  Conventions and the reasons
 * behind them: docs/model.md.
 *
 * Owns the formulas only; calls common.h, profile.h and GSL.  Building a
 * gcs_model_heap from a heap snapshot is the job of heap inspection
 * (inspect.h).
 */
#ifndef GCSCALE_MODEL_H
#define GCSCALE_MODEL_H

#include <stdint.h>

#include "gcscale/common.h"
#include "gcscale/profile.h"

#define GCS_MODEL_MAX_NODES 256
/* log2 bins of the gaps between mark positions on a shared line (sharing.c) */
#define GCS_MODEL_GAP_BINS 32
/* most workers the steal simulation models (= GCS_GC_MAX_THREADS) */
#define GCS_MODEL_SIM_MAX_THREADS 64

/* How contention at a memory node is priced. */
typedef enum gcs_model_mva {
    GCS_MODEL_MVA_OPEN = 0,   /* the paper's M1 + S_O*rho/(1-rho), as a fixed point in T */
    GCS_MODEL_MVA_CLOSED = 1, /* exact MVA: P workers, think time = compute between misses */
} gcs_model_mva;

/* How the number of steals N_S is estimated. */
typedef enum gcs_model_steals {
    GCS_MODEL_STEALS_PAPER = 0,  /* N_S = P * ln(T1 in ns), and 0 at P = 1 */
    GCS_MODEL_STEALS_FITTED = 1, /* N_S = a * (P - 1) * ln(T1 in ns) + b * (P - 1) */
} gcs_model_steals;

/* How the span enters the mark time. */
typedef enum gcs_model_span {
    /* The paper's form (docs/model.md): T = T1/P + Tinf + Q_P M_P / P.  At P = 1 this is
     * T1 + Tinf + Q1 M1, so even a linked list shows a speedup of 4/3 at
     * P = 2 (2 T1 against 1.5 T1). */
    GCS_MODEL_SPAN_PAPER = 0,
    /* Beyond the paper: Brent's bound for the compute part, (T1 - Tinf)/P +
     * Tinf, and the misses met on the critical path, Q1 * Tinf / T1, are not
     * shared among the workers: T = (T1 - Tinf)/P + Tinf
     * + ((Q_P - Q_span)/P + Q_span) M_P.  P = 1 gives T1 + Q1 M1, and a
     * list gets no speedup, as measured. */
    GCS_MODEL_SPAN_CRITICAL = 1,
} gcs_model_span;

/* The heap fit (gcs_model_heap.heap_fit) of the random graph calibrate
 * prices gc_mark_transfer_ns on: four times the private cache
 * (calibrate/marktable.c sizes it by this); gc_mark_transfer_cached_ns is
 * priced on one the private cache holds whole, fit 1.  Model v2 goes
 * linearly from the one price to the other between the two fits. */
#define GCS_MODEL_MARK_TRANSFER_HEAP_FIT 0.25

typedef struct gcs_model_heap {
    uint64_t objects;         /* live objects */
    uint64_t edges;           /* non-NULL pointer fields */
    uint64_t live_bytes;
    uint64_t live_lines;      /* distinct cache lines the mark touches */
    double t1_ns;             /* T1: serial mark work without miss costs */
    double tinf_ns;           /* Tinf: span, without miss costs */
    double q1[GCS_ACCESS_COUNT];  /* serial misses, by request class */
    /* Of q1, the misses a hardware stream prefetcher fetches ahead of use
     * (slow predictor with the prefetcher modelled; else 0).  They still
     * occupy their memory node (S_O, and contention), but the worker does not
     * wait M1 for them: each costs S_O plus its queueing delay. */
    double q1_prefetched[GCS_ACCESS_COUNT];
    /* Model v2's streamer (docs/model.md "Serial work", 2026-11-27;
     * cachesim.h): of q1, the misses it streams, and of those the
     * sequential ones (the next line of a page's run, on a line the marker
     * walks itself: a chain's next object, a large array's own elements).
     * streams_counted 0:
     * not counted (the fast predictor, a heap built by hand); model v2 then
     * prices q1_prefetched as the base model does. */
    int streams_counted;
    double q1_streamed[GCS_ACCESS_COUNT];
    double q1_sequential[GCS_ACCESS_COUNT];
    /* Of q1's misses no stream covers, those of lines the marker reaches
     * along a chain (gc/mark.c's chain shortcut: the next object's address
     * is known only once the load before it returned, so no prefetch and no
     * other miss overlaps them): the share the replay's walked accesses
     * take of the unstreamed misses of the private levels, times q1's
     * unstreamed misses (model v2, docs/model.md "Dependent misses"; 0
     * where the streams were not counted). */
    double q1_dependent[GCS_ACCESS_COUNT];
    double live_lines_avg;    /* L: time-average live cache lines (docs/model.md) */
    /* Accesses of the serial mark that hit a private cache level (the slow
     * predictor's simulation; 0: not counted): the most that steals can
     * turn into misses (model v2, gcs_model_opts.reuse_bound). */
    double private_hits;
    /* The share of the mark table's live lines one worker's private caches
     * hold, 0 to 1: the largest private level's bytes times the table's
     * share of the mark's accesses, over the table's bytes (the slow
     * predictor; 0: not counted).  The steal simulation's mark-table
     * transfers evict nothing; a table that outgrows the private caches
     * moves this share of them (docs/model.md, "Mark-table lines"). */
    double table_fit;
    /* The share of the heap's live bytes the same private level holds, 0
     * to 1 (min(1, its bytes / live bytes); the slow predictor; 0: not
     * counted): where the whole heap fits, a mark-table transfer has no
     * miss to hide behind and is priced at gc_mark_transfer_cached_ns
     * (docs/model.md, "Mark-table lines where the heap fits"). */
    double heap_fit;
    uint64_t roots;           /* root entries the mark starts from (0: unknown, taken as 1) */
    /* The marker's classes of step (model v2, docs/model.md "Serial work"),
     * counted by the slow predictor's replay (the fast one leaves them 0, and
     * T1 then prices every object at gc_cost_ns): objects followed along a
     * chain (gc/mark.c's chain shortcut), non-NULL elements of large pointer
     * arrays examined in place, and of those the pointer-free children
     * marked without reading them. */
    uint64_t chain_steps, array_elements, array_leaves;
    /* Of the chain steps, those to an object 4 KiB or more away (the
     * replay's dependent walk), whatever level of the hierarchy served
     * them: each waits a whole load, from the LLC as from memory (model v2
     * prices them at calibrate's chase latency, docs/model.md "Dependent
     * steps"; 0 where not counted). */
    uint64_t dependent_steps;
    /* NULL pointer fields the mark reads, and its NULL tests whose outcome
     * differs from the test before at the same place of the mark loop (an
     * object's fields, a large array's elements, a chain's next): what a
     * branch predictor that expects the last outcome misses (model v2,
     * counted by the slow predictor's replay; 0 otherwise).  gc_cost_ns
     * prices neither (calibrate fits it on heaps without NULL fields). */
    uint64_t null_fields, null_switches;
    /* Lines more than one worker may write (docs/model.md, "Extra work in
     * parallel"; model/sharing.c): for every line of the mark table (object
     * lines are only read during the mark), the gaps between the serial
     * mark positions of its objects, those below share_window (the objects
     * the worker's private caches hold), in log2 bins: count and sum of the
     * gaps.  share_counted 0: not counted (the profile has no
     * gc_line_transfer_ns), no term. */
    int share_counted;
    double share_window;
    double share_gap_count[GCS_MODEL_GAP_BINS], share_gap_sum[GCS_MODEL_GAP_BINS];
    /* The collector's work distribution with P workers simulated on the
     * heap's graph (model/steals.c, heap inspection with
     * gcs_inspect_opts.steal_sim_threads), for P = 2..steals_simulated
     * (0: not simulated; index P): the entries stolen (the collector's
     * `steals`), the searches that found work (`steal_searches`), the
     * mark-table lines that moved between the workers' caches (not priced:
     * docs/model.md "Steals from the graph"), and when the last worker went
     * idle (from P = 1: the schedule's own speedup, work, span and stealing
     * alone, is sim_makespan_ns[1] / sim_makespan_ns[P]).  Model v2's
     * coordination takes sim_steals where they are
     * (gcs_model_opts.steal_sim), else calibrate's fitted gc_steals. */
    int steals_simulated;
    double sim_steals[GCS_MODEL_SIM_MAX_THREADS + 1];
    double sim_searches[GCS_MODEL_SIM_MAX_THREADS + 1];
    double sim_transfers[GCS_MODEL_SIM_MAX_THREADS + 1];
    double sim_makespan_ns[GCS_MODEL_SIM_MAX_THREADS + 1];
    int nnodes;
    double v[GCS_MODEL_MAX_NODES]; /* V_j: share of miss requests to memory node j */
} gcs_model_heap;

typedef struct gcs_model_opts {
    gcs_model_mva mva;
    gcs_model_steals steals;
    double steal_a, steal_b;  /* for GCS_MODEL_STEALS_FITTED */
    gcs_model_span span;      /* default GCS_MODEL_SPAN_CRITICAL (Brent); PAPER for the paper's form */
    /* Beyond the paper: how many misses one worker overlaps (>= 1; 1, the
     * default, is the paper: every miss not covered by the stream prefetcher
     * stalls its worker for its whole latency).  The collector's prefetch
     * FIFO keeps many misses in flight, so the worker waits (M1 + W_j)/overlap
     * for each of them; each still occupies its memory node for S_O.  The
     * open model only (GCS_MODEL_MVA_OPEN). */
    double overlap;
    /* Beyond the paper, warm residency (docs/model.md, "Serial work" and
     * "Resident lines"; off, 0, by default; gcs_model_opts_v2 turns it on
     * where the profile has gc_resident):
     * with llc_bytes > 0 and llc_hit_ns finite, a miss finds its line in the
     * LLC at the start of the mark with probability r = min(1, llc_bytes /
     * (live_lines * 64)); a non-streamed one then costs llc_hit_ns instead
     * of M1 (over resident_overlap where set), a streamed one what
     * resident_stream_ns says (below). */
    double llc_bytes, llc_hit_ns;
    /* The share r, where a profile measured it (model v2, 2026-11-29,
     * fourteenth session; NULL, the default: min(1, llc_bytes / footprint)):
     * the profile's gc_residency curve at the heap's footprint over
     * llc_bytes (gcs_profile_residency).  gcs_model_opts_v2 sets it where
     * the profile has the curve and residency is on; the profile must
     * outlive the options. */
    const gcs_profile *residency_curve;
    /* With residency priced (above), what a resident line costs the marker
     * (model v2, 2026-11-28; NaN, the default: as a line from memory, the
     * overlap and the stream prices below): a non-streamed miss to a
     * resident line waits llc_hit_ns / resident_overlap, a streamed one
     * (sequential or not) min(resident_stream_ns, its price from memory).
     * gcs_model_opts_v2 sets both from the profile's gc_resident. */
    double resident_overlap, resident_stream_ns;
    /* Beyond the paper, per-class marker costs (model v2; 0, the default:
     * off): with both > 0, a chain step costs cost_chain_ns instead of
     * gc_cost_ns.object + .pointer, and an array element examined in place
     * cost_array_element_ns instead of .pointer (its pointer-free child,
     * marked unread, no .object): T1 is re-priced from the heap's class
     * counts (model/serial.c, _gcs_serial_t1). */
    double cost_chain_ns, cost_array_element_ns;
    /* Beyond the paper, a NULL test the branch predictor misses (model v2;
     * 0, the default: free, as gc_cost_ns prices it): T1 gains
     * null_switches * cost_null_switch_ns.  gcs_model_opts_v2_costs sets it
     * from the profile only with null_switches 1 (predict --null-switches
     * on; 0, the default: measured on this VM, the calibrated price made
     * cky's P = 1 worse, docs/model.md). */
    double cost_null_switch_ns;
    int null_switches;
    /* Beyond the paper, model v2's stream classes (0, the default: off, the
     * misses q1_prefetched counts cost min(S_O, M1) each): with 1 and a heap
     * whose streams were counted, the misses of q1_streamed cost
     * min(S_O, M1), and of those the sequential ones (q1_sequential)
     * cost_sequential_ns when it is finite (a line of a walked sequential
     * run, as calibrate measured it on a list beyond the LLC), else
     * min(S_O, M1) as well. */
    int stream_classes;
    double cost_sequential_ns;
    /* Model v2 (gcs_model_opts_v2_costs; 0, the default: off): the misses of
     * heap.q1_dependent wait their whole latency, not 1/overlap of it.
     * With dependent_load 1 too (v2 where the profile has dependent_load_ns)
     * that latency is the profile's dependent-load curve at the heap's
     * footprint (a random chase on 4 KiB pages, page walks included), plus
     * what a remote node adds to the share from memory; else the latency
     * residency gives (_gcs_serial_miss_latency). */
    int dependent_misses, dependent_load;
    /* Beyond the paper, the memory node's service time bounded by its
     * measured bandwidth (model v2; 0, the default: off): with 1, a request
     * occupies node j for min(S_O, k * line_bytes / bandwidth_gbs[j]), k = 1
     * for a read and 2 for an RW miss (the line comes in exclusive and is
     * written back): a node serves at least as fast as the bandwidth
     * benchmark proved it can.  A profile without bandwidth_gbs keeps S_O. */
    int service_bandwidth;

    /* Coordination terms (wake, search, tail: docs/model.md "Coordination")
     * from the profile's gc_coord: 1 (the default) uses them when the profile
     * has them, 0 leaves them out (the ablation Pred(no coordination)). */
    int coord;
    /* Extra work in parallel, lines that pass between workers (docs/model.md,
     * "Extra work in parallel"): 1 prices them at the profile's
     * gc_line_transfer_ns when it has it and the heap's lines were counted
     * (gcs_inspect_opts.shared_lines); 0, the default, leaves them out: on the
     * dev corpus the term made P = 2 worse. */
    int sharing;
    /* Extra work in parallel, the steals' own (docs/model.md "Steal
     * work"): the busy time one successful steal adds to the mark, ns, times
     * the collector's steal count (gc_steals).  model v2 sets it to the
     * profile's gc_cost_ns.steal (gcs_model_opts_v2_costs); 0, the default
     * and the base model's, leaves the term out. */
    double steal_work_ns;
    /* The busy time one more worker adds whatever it steals, ns: (P - 1)
     * of them in the summed busy time, in the same term.  model v2 sets it
     * to the profile's gc_cost_ns.worker where the profile has one (whose
     * steal cost is then the per-steal part alone, calibrate/stealfit.c);
     * 0 leaves it out. */
    double worker_work_ns;
    /* Beyond the paper, the heap's parallelism bounds who queues and who
     * steals (model v2; 0, the default and the base model's; docs/model.md
     * "Contention: the fixed point" and "Thieves need spare parallelism"):
     * with 1 and Brent's span, a request queues behind the other workers'
     * 1 - share of the traffic, not (P-1)/P (the critical path's misses are
     * made while the others are idle), and at most T1/Tinf - 1 of the P - 1
     * thieves steal.  gcs_model_opts_v2_costs sets it. */
    int parallelism_bound;
    /* Beyond the paper, the extra misses of stealing bounded by the reuses
     * they can break (model v2; 0, the default and the base model's;
     * docs/model.md "Extra misses: at most the reuses"): with 1 and a heap
     * whose private_hits were counted, N_S L is at most private_hits (P-1)/P.
     * gcs_model_opts_v2_costs sets it. */
    int reuse_bound;
    /* What a thief's miss on a stolen line costs (ns): the latency of the
     * cache level thief and victim share (gcs_model_opts_steal_level).  NaN
     * (the default): the miss cost of every other non-streamed miss. */
    double steal_miss_ns;
    /* The collector's steal count of the coordination's steal attempts and
     * of the shared lines' segments from the heap's simulated steals where
     * inspection simulated them (gcs_model_heap.sim_steals; model v2 sets
     * it, docs/model.md "Steals from the graph"); 0, the default and the
     * base model's, or a heap without them: calibrate's gc_steals fit.  The
     * steal work takes the fit, whose price it was calibrated with, or the
     * simulated count where that is smaller. */
    int steal_sim;
    /* Model v2 (1 where the profile has gc_mark_transfer_ns; 0 in the base
     * model and with sharing on, which prices those lines its own way): the
     * mark-table lines the steal simulation sees pass between workers at P,
     * times heap.table_fit, each at gc_mark_transfer_ns of busy time,
     * spread over the workers (docs/model.md, "Mark-table lines"). */
    int mark_transfers;
} gcs_model_opts;

/* Where the serial-work terms of the default model came from
 * (gcs_model_opts_v2), for predict's output: a term resting on a nominal
 * value says so. */
typedef struct gcs_model_sources {
    const char *overlap;   /* "gc_miss_overlap", "option", or "nominal" (1: the profile has none) */
    gcs_llc_source llc;    /* the effective LLC's source (profile.h) */
    double llc_bytes, llc_hit_ns;  /* the figures, also when residency is off */
    int residency;         /* 1 when opts prices residency */
    const char *residency_share; /* how r is found: "gc_residency" (the profile's curve) or "llc_effective_bytes
                                    / footprint"; NULL where residency is off */
    const char *resident;  /* a resident line's prices: "gc_resident", or NULL: as from memory (residency off,
                              or on without the profile's gc_resident: the overlap and stream prices) */
    const char *classes;   /* "gc_class_cost_ns", "nominal" (gc_cost_ns for every class), or NULL:
                              not priced (gcs_model_opts_v2_costs not called: the base model) */
    const char *service;   /* the nodes' service time: "occupancy_ns" or "occupancy_ns+bandwidth_gbs" */
    const char *nulls;     /* a NULL switch's cost: "gc_class_cost_ns.null_switch", "nominal" (0), or NULL: not
                              priced (opts.null_switches 0, or the base model) */
    const char *sequential; /* a sequential line's cost: "gc_stream_line_ns", "nominal" (min(S_O, M1)), or
                               NULL: the stream classes are off (the base model) */
    const char *steal_work; /* a steal's busy time: "gc_cost_ns.steal", or NULL: not priced (the base
                               model, or a profile without it) */
    const char *dependent;  /* a dependent miss's latency: "dependent_load_ns", "llc_hit_ns and M1" (the
                               profile has no curve), or NULL: not priced apart (the base model) */
} gcs_model_sources;

/* Per-worker coordination times with P workers, ns (docs/model.md,
 * "Coordination").  search = spread + steal + idle. */
typedef struct gcs_model_coord {
    double wake_ns;    /* start signal until the worker runs: wake_a + wake_b (P - 1) */
    double spread_ns;  /* waiting for the first work: mean over the workers of
                          rounds x spread_round_ns (gcs_model_coord_spread_rounds) */
    double steal_ns;   /* steal attempts: N_S x attempt_ns / P */
    double idle_ns;    /* termination and the end's starvation: idle_a + idle_b log2 P */
    double search_ns;  /* spread + steal + idle; 0 at P = 1 */
    double tail_ns;    /* exit until the mark ends: tail_a + tail_b log2 P */
} gcs_model_coord;

/* One prediction.  Times in ns; "speedup" is T_1^M / T_P^M with T_1^M the
 * same model at P = 1 (= T1 + Tinf + Q1 * M1). */
typedef struct gcs_model_result {
    int threads;
    double t_cilk_ns;         /* T_P = T1/P + Tinf */
    double steals;            /* N_S */
    double q_p;               /* Q_P, all classes */
    double m1_ns;             /* mean miss cost without contention */
    double m_p_ns;            /* mean miss cost with contention */
    double time_ns;           /* T_P^M */
    double speedup;
    /* The ablations of the paper's Figure 3. */
    double time_no_contention_ns, speedup_no_contention;       /* Pred(M_P = M1) */
    double time_no_extra_misses_ns, speedup_no_extra_misses;   /* Pred(Q_P = Q1) */
    /* The predicted speedup stack: speedup + the lost parts = P exactly. */
    double lost_span, lost_extra_misses, lost_contention;
    /* Coordination (0 without gc_coord or with opts.coord = 0): per-worker
     * times, and their parts of the stack, named as the measured stack's
     * (gcs_validate_stack: wake, search, tail).  coord is 1 when they are on. */
    int coord;
    gcs_model_coord coord_terms;
    double lost_wake, lost_search, lost_tail;
    double time_no_coord_ns, speedup_no_coord;   /* Pred(no coordination) */
    /* Extra work in parallel (0 without gc_line_transfer_ns or with
     * opts.sharing = 0): expected line transfers between workers, the time
     * they add per worker (transfers x gc_line_transfer_ns / (overlap x P)), and the
     * stack's part for them.  lost_extra_work = lost_extra_misses +
     * lost_shared_lines, named as the measured stack's extra_work (Sum busy
     * growing with P), which both make up. */
    double shared_transfers, shared_ns;
    /* Mark-table lines passing between workers (opts.mark_transfers, a
     * simulated heap): the simulation's transfers at P times table_fit, and
     * the busy time they add per worker; in the stack's lost_shared_lines. */
    double mark_transfers, mark_transfer_ns;
    /* The steals' and the extra workers' own work (0 with opts.steal_work_ns
     * and worker_work_ns 0): per worker, (collector steals x steal_work_ns +
     * (P - 1) x worker_work_ns) / P; worker_work_ns here is the second part
     * alone.  lost_extra_work also holds lost_steal_work. */
    double steal_work_ns, worker_work_ns, lost_steal_work;
    double lost_shared_lines, lost_extra_work;
    int nnodes;
    double rho[GCS_MODEL_MAX_NODES];      /* utilisation of each memory node */
    double wait_ns[GCS_MODEL_MAX_NODES];  /* queueing delay per request there */
    int iterations;           /* solver iterations (0 when no solve was needed) */
    const char *solver;       /* "newton", "brent", "closed-mva" or "none" */
} gcs_model_result;

GCS_API void gcs_model_opts_init(gcs_model_opts *opts);
/* The default model's serial work (model v2, model/serial.c): the profile's
 * fitted gc_miss_overlap when it has one and keep_overlap is 0 (an --overlap
 * given on the command line keeps its value: keep_overlap 1), and with
 * `residency` 1 the warm-residency term from the effective LLC, priced by
 * the profile's gc_resident where it has it; 0 leaves residency out, and
 * GCS_MODEL_RESIDENCY_DEFAULT prices it where the profile has gc_resident
 * (model v2's default).  Fills *src. */
#define GCS_MODEL_RESIDENCY_DEFAULT (-1)
GCS_API void gcs_model_opts_v2(gcs_model_opts *opts, const gcs_profile *prof, int residency, int keep_overlap,
                               gcs_model_sources *src);
/* Model v2's calibrated prices beyond gcs_model_opts_v2: the per-class
 * marker costs, the profile's gc_class_cost_ns when it has them
 * (src->classes says which), else off (T1 as gc_cost_ns prices it); the
 * memory nodes' service time bounded by the measured bandwidth
 * (opts->service_bandwidth, where the profile has bandwidth_gbs;
 * src->service says which); the stream classes, their sequential misses at
 * the profile's gc_stream_line_ns (src->sequential); and, with
 * opts->null_switches, the NULL switches at gc_class_cost_ns.null_switch
 * (src->nulls).  Call after gcs_model_opts_v2, which resets src. */
GCS_API void gcs_model_opts_v2_costs(gcs_model_opts *opts, const gcs_profile *prof, gcs_model_sources *src);
/* The paper's full model (predict --model paper): its span form, every
 * miss stalling for M1, no residency.  (The stream prefetcher is a property
 * of the inspection: gcs_inspect_opts.stream_prefetch = 0 as well.) */
GCS_API void gcs_model_opts_paper(gcs_model_opts *opts);
/* The P = 1 mark time as its serial terms, for predict's output (a new
 * reference): {"t1_ms", "streamed_ms", "memory_miss_ms", "llc_miss_ms",
 * "queueing_ms", "coord_ms", "time_ms", "overlap", "overlap_source", "residency",
 * "llc_effective_bytes", "llc_hit_ns", "llc_source", "nominal": [terms on a
 * nominal value]}.  NULL on a model error (err set). */
GCS_API json_t *gcs_model_serial_json(const gcs_profile *prof, const gcs_model_heap *heap,
                                      const gcs_model_opts *opts, const gcs_model_sources *src, gcs_err *err);
/* Uses the steal count calibrate fitted to the collector (the profile's
 * gc_steals) instead of the paper's P ln T1.  Not the default: each steal is
 * priced at L extra misses, which the paper's small count absorbs; with the
 * collector's real count (ten times as many steals, most of small subtrees)
 * it predicts far too many misses (docs/model.md).  -1 if the profile has
 * no fit. */
GCS_API int gcs_model_opts_fitted_steals(gcs_model_opts *opts, const gcs_profile *prof, gcs_err *err);

/* Uses the overlap calibrate fitted to the collector (the profile's
 * gc_miss_overlap).  -1 if the profile has none. */
GCS_API int gcs_model_opts_fitted_overlap(gcs_model_opts *opts, const gcs_profile *prof, gcs_err *err);

/* Checks that heap and profile fit together (node counts, V sums to 1,
 * finite non-negative inputs, gc costs present where the heap needs them). */
GCS_API int gcs_model_check(const gcs_profile *prof, const gcs_model_heap *heap, gcs_err *err);

/* Predicts the mark time with `threads` workers (>= 1). */
GCS_API int gcs_model_predict(const gcs_profile *prof, const gcs_model_heap *heap, int threads,
                      const gcs_model_opts *opts, gcs_model_result *out, gcs_err *err);

/* The smallest P among results[0..n) whose predicted time is within
 * `tolerance` (0.05 = 5%) of the best predicted time. */
GCS_API int gcs_model_recommend(const gcs_model_result *results, int n, double tolerance);

/* The initial spread of work: R roots handed round-robin to P workers (the
 * collector's roots.c), so min(R, P) workers start with work and the others
 * wait; each round of stealing doubles the workers holding work.  Returns
 * the mean over the P workers of the rounds each waited (0 when R >= P;
 * R = 0 is taken as 1). */
GCS_API double gcs_model_coord_spread_rounds(uint64_t roots, int threads);

/* The per-worker coordination times with P workers from the profile's
 * gc_coord law, R roots and N_S steals (all zero at P = 1 but wake and tail). */
GCS_API void gcs_model_coord_terms(const gcs_profile_coord *c, uint64_t roots, int threads, double steals,
                                   gcs_model_coord *out);

/* Expected line transfers between workers with P workers and N_S steals
 * (model/sharing.c): (1 - 1/P) times the sum over the heap's counted gaps d
 * of min(1, d / S), S = objects / (N_S + P).  0 at P = 1 or when the heap's
 * lines were not counted. */
GCS_API double gcs_model_shared_transfers(const gcs_model_heap *heap, int threads, double steals);

/* Prices the thief's misses on stolen lines at the latency of the cache
 * level that the profile's CPUs all share (its effective LLC hit latency
 * when one cache instance spans every CPU of the profile and the hit latency
 * is known); otherwise leaves opts->steal_miss_ns NaN (memory latency, as
 * any miss).  Returns 1 when it set a latency. */
GCS_API int gcs_model_opts_steal_level(gcs_model_opts *opts, const gcs_profile *prof);

GCS_API const char *gcs_model_mva_name(gcs_model_mva mva);
GCS_API const char *gcs_model_span_name(gcs_model_span span);   /* "paper", "critical" */

#endif
