/* stats.c -- order statistics over small arrays of repetitions. */
#include <math.h>
#include <stdlib.h>

#include "gcscale/common.h"

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void gcs_stats_sort(double *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_double);
}

double gcs_stats_percentile(double *values, size_t n, double p)
{
    if (n == 0)
        return NAN;
    gcs_stats_sort(values, n);
    if (p <= 0)
        return values[0];
    if (p >= 100)
        return values[n - 1];
    /* Linear interpolation between closest ranks (the "R-7" definition used
     * by numpy and most spreadsheets), so p10/p90 of few samples are stable. */
    double rank = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)rank;
    double frac = rank - (double)lo;
    if (lo + 1 >= n)
        return values[n - 1];
    return values[lo] + frac * (values[lo + 1] - values[lo]);
}

double gcs_stats_median(double *values, size_t n)
{
    return gcs_stats_percentile(values, n, 50.0);
}
