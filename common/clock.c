/* clock.c -- time sources.  Measurements use CLOCK_MONOTONIC, which never
 * jumps; records carry the UTC wall-clock time for people. */
#include <time.h>

#include "gcscale/common.h"

uint64_t gcs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void gcs_now_iso8601(char *buf, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
