/* err.c -- one-line error messages carried back to the caller. */
#include <stdio.h>

#include "gcscale/common.h"

void gcs_err_set(gcs_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}
