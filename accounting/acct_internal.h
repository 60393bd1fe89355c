/* acct_internal.h -- shared by accounting/ files only (not installed). */
#ifndef GCSCALE_ACCT_INTERNAL_H
#define GCSCALE_ACCT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
