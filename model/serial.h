/* serial.h -- internal: the serial-work pricing shared by predict.c's
 * fixed-point setup and serial.c's breakdown (model v2, docs/model.md). */
#ifndef GCS_MODEL_SERIAL_H
#define GCS_MODEL_SERIAL_H

#include "gcscale/model.h"

/* The share r of the heap's mark footprint (live_lines * 64 bytes) that is
 * in the effective LLC when the mark starts; 0 when opts prices no
 * residency. */
double _gcs_serial_residency(const gcs_model_heap *heap, const gcs_model_opts *opts);

/* The idle latency a non-streamed miss waits for (before the overlap): r of
 * them hit the LLC, the rest go to memory at m1. */
double _gcs_serial_miss_latency(const gcs_model_heap *heap, const gcs_model_opts *opts, double m1);

/* The latency a dependent miss waits for, whole (model.h, dependent_load):
 * the profile's dependent-load curve at the heap's footprint where opts
 * takes it, the share from memory raised by what node j's m1 adds over the
 * curve's own (local) node; else _gcs_serial_miss_latency. */
double _gcs_serial_dependent_latency(const gcs_profile *prof, const gcs_model_heap *heap,
                                     const gcs_model_opts *opts, double m1);

/* Q1's misses of access class a split as the miss pricing takes them
 * (counts, not shares): pf those a stream covers (model v2's stream classes,
 * else the base model's prefetched ones), seq the sequential ones among pf
 * (v2), dep those no stream covers that a chain's jump waits for whole
 * (v2 with opts->dependent_misses, model.h q1_dependent); the rest,
 * q1 - pf - dep, is overlapped. */
void _gcs_serial_miss_split(const gcs_model_heap *heap, const gcs_model_opts *opts, int a, double *pf,
                            double *seq, double *dep);

/* What one line of each miss class costs the worker at P = 1 before
 * queueing (ns), with residency r (above): a non-streamed miss
 * (1 - r) m1 / overlap from memory plus r min(llc_hit, m1) / the resident
 * overlap; a streamed one min(S_O, m1), a sequential one
 * cost_sequential_ns (else as streamed), each resident share at most the
 * resident stream price (model.h, resident_overlap and resident_stream_ns);
 * a sequential line is resident only when the whole heap is (r = 1). */
typedef struct gcs_line_prices {
    double own_memory_ns, own_llc_ns; /* a non-streamed miss: its two parts, already weighted by 1 - r and r */
    double streamed_ns, sequential_ns;
} gcs_line_prices;
void _gcs_serial_line_prices(const gcs_model_heap *heap, const gcs_model_opts *opts, double m1, double so,
                             gcs_line_prices *out);

/* The time a request of class a occupies memory node `node` (S_O), bounded
 * by the node's measured bandwidth with opts->service_bandwidth (model.h). */
double _gcs_serial_service_ns(const gcs_profile *prof, const gcs_model_opts *opts, gcs_access a, int node);
/* T1 re-priced by the marker's step classes (opts->cost_chain_ns and
 * cost_array_element_ns > 0, model.h), plus the NULL tests that switch
 * (opts->cost_null_switch_ns); heap->t1_ns when neither applies. */
double _gcs_serial_t1(const gcs_profile *prof, const gcs_model_heap *heap, const gcs_model_opts *opts);
/* What the dependent steps that no dependent miss counts add (ns): a
 * chain's next object served by the LLC or a private level, each at the
 * profile's chase latency at the heap's footprint (opts->dependent_load),
 * which is the mean over such steps; 0 without the curve or the count. */
double _gcs_serial_dependent_hits_ns(const gcs_profile *prof, const gcs_model_heap *heap,
                                     const gcs_model_opts *opts);
/* heap, or *priced = heap with T1 re-priced (and T-infinity kept within
 * it) when opts prices classes or dependent steps: the heap the model then
 * works on. */
const gcs_model_heap *_gcs_serial_priced_heap(const gcs_profile *prof, const gcs_model_heap *heap,
                                              const gcs_model_opts *opts, gcs_model_heap *priced);
#endif
