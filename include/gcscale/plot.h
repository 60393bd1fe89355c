/* plot.h -- line charts as standalone SVG files (prefix gcs_plot_).
 *
 * Small on purpose: enough for speedup curves and error plots that a person
 * can read in a browser as they are (axes with ticks, axis labels, a title,
 * a legend, a grid).  Calls only common.h.
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
} gcs_plot_series;

typedef struct gcs_plot {
    const char *title;
    const char *subtitle;    /* may be NULL */
    const char *x_label, *y_label;
    int nseries;
    const gcs_plot_series *series;
    double x_min, x_max, y_min, y_max; /* NaN: from the data (y from 0) */
} gcs_plot;

/* Writes the chart to path crash-safely. */
int gcs_plot_write_svg(const gcs_plot *plot, const char *path, gcs_err *err);

#endif
