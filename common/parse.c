/* parse.c -- command-line numbers with range checks and clear messages. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
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

/* ---- lists of counts ------------------------------------------------------ */

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* One count of a list: digits only (strtol would also take blanks and a
 * sign), in [1, max]. */
static int parse_count(const char *s, char **end, long max, long *v, const char *whole, gcs_err *err)
{
    if (!isdigit((unsigned char)*s)) {
        if (*s)
            gcs_err_set(err, "'%s': expected a number at '%s'", whole, s);
        else
            gcs_err_set(err, "'%s': expected a number at the end", whole);
        return -1;
    }
    errno = 0;
    *v = strtol(s, end, 10);
    if (errno == ERANGE || *v < 1 || *v > max) {
        gcs_err_set(err, "'%s': %.*s is out of range [1, %ld]", whole, (int)(*end - s), s, max);
        return -1;
    }
    return 0;
}

int gcs_parse_count_list(const char *text, int max, int **values, int *n, gcs_err *err)
{
    *values = NULL;
    *n = 0;
    if (!text || !*text) {
        gcs_err_set(err, "empty list");
        return -1;
    }
    int *list = malloc(sizeof(int) * (size_t)(max > 0 ? max : 1));
    if (!list) {
        gcs_err_set(err, "out of memory");
        return -1;
    }
    int count = 0;
    const char *s = text;
    for (;;) {
        char *end;
        long lo, hi;
        if (parse_count(s, &end, max, &lo, text, err) < 0)
            goto fail;
        hi = lo;
        if (*end == '-') {
            s = end + 1;
            if (parse_count(s, &end, max, &hi, text, err) < 0)
                goto fail;
            if (hi < lo) {
                gcs_err_set(err, "'%s': range %ld-%ld runs backwards", text, lo, hi);
                goto fail;
            }
        }
        /* Ranges stay within [1, max], so the list can hold them after dedup. */
        for (long p = lo; p <= hi; p++) {
            int seen = 0;
            for (int i = 0; i < count && !seen; i++)
                seen = list[i] == p;
            if (!seen)
                list[count++] = (int)p;
        }
        if (*end == ',') {
            s = end + 1;
            continue;
        }
        if (*end) {
            gcs_err_set(err, "'%s': unexpected '%c' (use 1-64 or 1,2,4,8)", text, *end);
            goto fail;
        }
        break;
    }
    qsort(list, (size_t)count, sizeof *list, compare_int);
    *values = list;
    *n = count;
    return 0;
fail:
    free(list);
    return -1;
}

void gcs_format_bytes(uint64_t bytes, unsigned flags, char *buf, size_t len)
{
    static const char *const iec[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    static const char *const letter[] = {"B", "K", "M", "G", "T"};
    int shortform = (flags & GCS_BYTES_SHORT) != 0;
    int top = shortform || (flags & GCS_BYTES_WORD) ? 4 : 5;
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < top) {
        v /= 1024;
        u++;
    }
    const char *unit = shortform ? letter[u] : u == 0 && (flags & GCS_BYTES_WORD) ? "bytes" : iec[u];
    snprintf(buf, len, v == floor(v) ? "%.0f%s%s" : "%.1f%s%s", v, shortform ? "" : " ", unit);
}
