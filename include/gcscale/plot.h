/* plot.h -- line charts as standalone SVG files (prefix gcs_plot_).
 *
 * Small on purpose: enough for speedup curves, error plots and stacked bars
 * (speedup stacks) that a person
 * can read in a browser as they are (axes with ticks, axis labels, a title,
 * a legend, a grid, min-max bars, a marked x).  Calls only common.h.
 */
#ifndef GCSCALE_PLOT_H
#define GCSCALE_PLOT_H

#include "gcscale/common.h"

typedef enum gcs_plot_style {
    GCS_PLOT_LINE = 0,       /* solid line with point markers */
    GCS_PLOT_DASHED = 1,     /* dashed line, no markers */
    GCS_PLOT_POINTS = 2,     /* markers only */
} gcs_plot_style;

typedef struct gcs_plot_series {
    const char *label;
    const double *x, *y;     /* n points; NaN y values are skipped */
    int n;
    gcs_plot_style style;
    const char *color;       /* CSS color; NULL picks one from a palette */
    /* Optional min-max bars (NULL: none): point i's bar spans y_lo[i] to
     * y_hi[i]; NaN ends draw no bar there. */
    const double *y_lo, *y_hi;
} gcs_plot_series;

typedef struct gcs_plot {
    const char *title;
    const char *subtitle;    /* may be NULL */
    const char *x_label, *y_label;
    int nseries;
    const gcs_plot_series *series;
    double x_min, x_max, y_min, y_max; /* NaN: from the data (y from 0) */
    /* Optional vertical marker (a recommended P): a dotted line at mark_x
     * with mark_label at its top; none when mark_label is NULL. */
    double mark_x;
    const char *mark_label;
} gcs_plot;

/* Writes the chart to path crash-safely. */
GCS_API int gcs_plot_write_svg(const gcs_plot *plot, const char *path, gcs_err *err);

/* Stacked bar charts: speedup stacks and other breakdowns.  Bars stand in
 * groups side by side (e.g. one group per thread count, a measured and a
 * predicted bar in each); every bar is a stack of the same segments, the
 * first at the bottom.  A negative segment (an "other" that is a gain) is
 * drawn below zero, never hidden.  The legend lists the segments top first,
 * as they appear on the bars. */
#define GCS_PLOT_MAX_SEGMENTS 12
typedef struct gcs_plot_bar {
    const char *label;         /* under the bar ("measured"); may be NULL */
    double values[GCS_PLOT_MAX_SEGMENTS]; /* one per segment; NaN counts as 0 */
} gcs_plot_bar;

typedef struct gcs_plot_bar_group {
    const char *label;         /* under the group ("P = 2") */
    int nbars;
    const gcs_plot_bar *bars;
} gcs_plot_bar_group;

typedef struct gcs_plot_bars {
    const char *title;
    const char *subtitle;      /* may be NULL */
    const char *y_label;
    int nsegments;             /* 1..GCS_PLOT_MAX_SEGMENTS */
    const char *segment_labels[GCS_PLOT_MAX_SEGMENTS];
    const char *segment_colors[GCS_PLOT_MAX_SEGMENTS]; /* NULL entries: the palette */
    int ngroups;
    const gcs_plot_bar_group *groups;
    double y_max;              /* NaN: from the data */
    int label_values;          /* 1: print each segment's value inside it when it fits */
} gcs_plot_bars;

GCS_API int gcs_plot_write_bars_svg(const gcs_plot_bars *plot, const char *path, gcs_err *err);

#endif
