/* parse.c -- command-line numbers with range checks and clear messages. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gcscale/common.h"

int gcs_parse_size(const char *text, uint64_t *bytes, gcs_err *err)
{
    if (!text || !*text) {
        gcs_err_set(err, "empty size");
        return -1;
    }
    errno = 0;
    char *end;
    double value = strtod(text, &end);
    if (end == text || errno || !isfinite(value) || value < 0 || isspace((unsigned char)*text)) {
        gcs_err_set(err, "'%s' is not a size (examples: 4096, 64K, 512M, 1G)", text);
        return -1;
    }
    double scale = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': scale = 1024.0; break;
        case 'M': scale = 1024.0 * 1024; break;
        case 'G': scale = 1024.0 * 1024 * 1024; break;
        case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
        case 'B': scale = 1; end--; break; /* "100B" */
        default:
            gcs_err_set(err, "'%s' has an unknown unit (use K, M, G or T)", text);
            return -1;
        }
        end++;
        if (*end && strcasecmp(end, "iB") != 0 && strcasecmp(end, "B") != 0) {
            gcs_err_set(err, "'%s' has an unknown unit (use K, M, G or T)", text);
            return -1;
        }
    }
    double total = value * scale;
    if (total >= 18446744073709551615.0) {
        gcs_err_set(err, "'%s' is too large", text);
        return -1;
    }
    *bytes = (uint64_t)total;
    return 0;
}

int gcs_parse_long(const char *text, long min, long max, long *value, gcs_err *err)
{
    if (!text || !*text) {
        gcs_err_set(err, "empty number");
        return -1;
    }
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || errno || isspace((unsigned char)*text)) {
        gcs_err_set(err, "'%s' is not an integer", text);
        return -1;
    }
    if (v < min || v > max) {
        gcs_err_set(err, "%ld is out of range [%ld, %ld]", v, min, max);
        return -1;
    }
    *value = v;
    return 0;
}

int gcs_parse_double(const char *text, double min, double max, double *value, gcs_err *err)
{
    if (!text || !*text) {
        gcs_err_set(err, "empty number");
        return -1;
    }
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (*end || errno || !isfinite(v) || isspace((unsigned char)*text)) {
        gcs_err_set(err, "'%s' is not a number", text);
        return -1;
    }
    if (v < min || v > max) {
        gcs_err_set(err, "%g is out of range [%g, %g]", v, min, max);
        return -1;
    }
    *value = v;
    return 0;
}
