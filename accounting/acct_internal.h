/* acct_internal.h -- shared by accounting/ files only (not installed). */
#ifndef GCSCALE_ACCT_INTERNAL_H
#define GCSCALE_ACCT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gcscale/accounting.h"
#include "gcscale/trace.h"

/* One state change of one thread: its start (seq 0, "running") or an event. */
typedef struct _gcs_acct_change {
    uint64_t t;
    uint32_t thread;
    uint32_t seq;            /* order within the thread: start is 0 */
    int state;
} _gcs_acct_change;

/* Every thread start and event of t, sorted by time, then thread, then
 * order within the thread; *n = nthreads + nevents.  malloc'd; NULL when
 * memory runs out. */
_gcs_acct_change *_gcs_acct_changes(const gcs_trace *t, size_t *n);

/* gcs_acct_hotspot_log_pauses over an open stream (name: for messages):
 * what the fuzz target reads from memory.  On success the pauses are in
 * time order and disjoint, each start <= its end; neighbours that the
 * log's rounding to 1 us made overlap are made to touch, a larger overlap is
 * an error naming the line. */
int _gcs_acct_hotspot_log_read(FILE *fp, const char *name, uint64_t lo_ns, uint64_t hi_ns, gcs_acct_pause **out,
                               size_t *n, gcs_err *err);

#endif
