/* adaptive_internal.h -- what the adaptive policy's files share (not
 * installed; prefix _gcs_adaptive_).
 *
 *   policy.c      the decision: estimate, curve, corrections, objective,
 *                 hysteresis, cap, exploration; in the pause within the
 *                 cost budget, or on the decision thread;
 *   background.c  the decision thread: the pause hands it the statistics
 *                 and takes the decision it made from the ones before
 *                 (docs/adaptive.md, "Cost").
 */
#ifndef GCSCALE_ADAPTIVE_INTERNAL_H
#define GCSCALE_ADAPTIVE_INTERNAL_H

#include <stdint.h>

#include "gcscale/gc.h"

/* A decision on state from prev for a pool of max: the P, the record, and
 * in *settled the P without exploration (what to keep when no newer
 * decision comes). */
typedef int (*_gcs_adaptive_decide_fn)(void *state, const gcs_gc_stats *prev, int max, gcs_gc_decision *out,
                                       int *settled);

typedef struct _gcs_adaptive_bg _gcs_adaptive_bg;

/* Starts the thread, at the lowest scheduling priority (SCHED_IDLE), which
 * from then on owns state; NULL with err set when it cannot start. */
_gcs_adaptive_bg *_gcs_adaptive_bg_start(_gcs_adaptive_decide_fn decide, void *state, gcs_err *err);
/* Stops and joins the thread, frees everything (not state). */
void _gcs_adaptive_bg_stop(_gcs_adaptive_bg *bg);
/* In the pause, never waiting nor waking the thread (which finds the
 * statistics on its timer): hands prev over (copied: the fields a
 * decision reads) for the thread to decide on, and takes the newest
 * decision not yet taken.  1: taken (*p and out's policy part); 0: none
 * new (*settled the last decision's P without exploration, 0 before any);
 * -1: the thread holds the lock (nothing handed over or taken). */
int _gcs_adaptive_bg_exchange(_gcs_adaptive_bg *bg, const gcs_gc_stats *prev, int max, int *p, int *settled,
                              gcs_gc_decision *out);
/* Waits (blocking: for tests, never in a pause) until every statistics
 * handed over so far is decided on, at most timeout_ms; 0 done, -1 timed
 * out. */
int _gcs_adaptive_bg_wait_idle(_gcs_adaptive_bg *bg, int timeout_ms);

/* Copies the fields of a collection's statistics that a decision reads (and
 * its start time, the thread's timer). */
void _gcs_adaptive_stats_copy(gcs_gc_stats *dst, const gcs_gc_stats *src);

/* _gcs_adaptive_bg_wait_idle for a policy state of gcs_adaptive_policy_new
 * (policy.c); 0 at once when it decides in the pause. */
int _gcs_adaptive_wait_background(void *policy_state, int timeout_ms);

/* What the budget expects the next decision in the pause to cost, ns, for a
 * pool of max_threads: one on the last curve (*decide_ns) and one with a new
 * curve (*new_curve_ns, always the larger).  The cost estimates come from
 * measured decisions, so a test that wants one outcome of the budget sets
 * the pause from these rather than from what this machine happens to take. */
void _gcs_adaptive_expected_costs(void *policy_state, int max_threads, double *decide_ns, double *new_curve_ns);

#endif
