/* schedtrace_internal.h -- shared by the files of schedtrace/ only. */
#ifndef GCSCALE_SCHEDTRACE_INTERNAL_H
#define GCSCALE_SCHEDTRACE_INTERNAL_H

#include "gcscale/schedtrace.h"

/* The state machine given to gcs_schedtrace_enable. */
gcs_schedtrace_states *_gcs_schedtrace_states_of(gcs_schedtrace *t);

/* What perf_event_open of tracepoints needs, with this machine's
 * kernel.perf_event_paranoid, for error messages. */
void _gcs_schedtrace_permission_hint(char *buf, size_t n);

#endif
