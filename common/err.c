/* err.c -- one-line error messages carried back to the caller. */
#include <stdio.h>

#include "gcscale/common.h"

void gcs_text_one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

void gcs_err_set(gcs_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* A message quotes what the user gave (a path, a key's value, an
     * option), which may hold a newline: the message stays one line. */
    gcs_text_one_line(err->msg);
}
