/* test_traces.h -- traces written inline in the cmocka tests (included after
 * <cmocka.h>; a trace the reader refuses fails the test). */
#ifndef GCSCALE_TEST_TRACES_H
#define GCSCALE_TEST_TRACES_H

#include <stdio.h>
#include <string.h>

#include "gcscale/trace.h"

/* text as a trace file named "t". */
static inline gcs_trace *test_trace_parse(const char *text)
{
    gcs_err err = {{0}};
    FILE *fp = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(fp);
    gcs_trace *t = gcs_trace_read_stream(fp, "t", &err);
    fclose(fp);
    if (!t)
        fail_msg("%s", err.msg);
    return t;
}

#endif
