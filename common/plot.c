/* plot.c -- line charts as SVG.
 *
 * Layout: a fixed 800x500 canvas, the plot area inset for the axis labels,
 * the legend inside the plot area's upper left corner.  Ticks are "nice"
 * numbers (1, 2, 5 x 10^k) so that the axes read naturally. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/plot.h"

#define WIDTH 800
#define HEIGHT 500
#define LEFT 80
#define RIGHT 30
#define TOP 60
#define BOTTOM 60

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

/* The tick step: a 1, 2 or 5 times a power of ten giving about `target` ticks. */
static double nice_step(double span, int target)
{
    if (!(span > 0))
        return 1;
    double raw = span / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void xml_text(FILE *fp, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '&': fputs("&amp;", fp); break;
        case '"': fputs("&quot;", fp); break;
        default: fputc(*s, fp);
        }
    }
}

/* A centred heading line.  One that would run past the canvas (a long
 * path in a title did, cut off at both edges) gets a smaller font, down to
 * two thirds of its size, and what still does not fit loses its middle to
 * "...".  Widths are estimated at 0.55 em per character, generous for
 * Helvetica's average (textLength would be exact, but not every renderer
 * honours it). */
static void heading(FILE *fp, int width, int y, int font_size, const char *fill, const char *text)
{
    const double em = 0.55;
    double room = width - 40, size = font_size, len = (double)strlen(text);
    if (em * size * len > room)
        size = fmax(room / (em * len), font_size * 2.0 / 3);
    size_t fit = (size_t)(room / (em * size));
    fprintf(fp, "<text x=\"%d\" y=\"%d\" font-size=\"%.1f\"%s%s%s text-anchor=\"middle\">", width / 2, y, size,
            fill ? " fill=\"" : "", fill ? fill : "", fill ? "\"" : "");
    if (len <= fit || fit < 8) {
        xml_text(fp, text);
    } else { /* keep the start and the end, which name the thing */
        size_t head = (fit - 3) / 2, tail = fit - 3 - head;
        char *cut = malloc(fit + 1);
        if (cut) {
            memcpy(cut, text, head);
            memcpy(cut + head, "...", 3);
            memcpy(cut + head + 3, text + (size_t)len - tail, tail + 1);
            xml_text(fp, cut);
            free(cut);
        } else {
            xml_text(fp, text);
        }
    }
    fprintf(fp, "</text>\n");
}

/* The document's start: canvas, white background, title, subtitle. */
static void svg_begin(FILE *fp, int width, const char *title, const char *subtitle)
{
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\">\n",
            width, HEIGHT, width, HEIGHT);
    fprintf(fp, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    heading(fp, width, 26, 18, NULL, title);
    if (subtitle)
        heading(fp, width, 46, 12, "#555", subtitle);
}

static void data_range(const gcs_plot *p, double *x0, double *x1, double *y0, double *y1)
{
    *x0 = INFINITY, *x1 = -INFINITY, *y0 = 0, *y1 = -INFINITY;
    for (int s = 0; s < p->nseries; s++)
        for (int i = 0; i < p->series[s].n; i++) {
            double x = p->series[s].x[i], y = p->series[s].y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            *x0 = fmin(*x0, x), *x1 = fmax(*x1, x);
            *y0 = fmin(*y0, y), *y1 = fmax(*y1, y);
            if (p->series[s].y_hi && isfinite(p->series[s].y_hi[i]))
                *y1 = fmax(*y1, p->series[s].y_hi[i]);
        }
    if (!isfinite(*x0))
        *x0 = 0, *x1 = 1;
    if (!isfinite(*y1))
        *y1 = 1;
    if (*x1 <= *x0)
        *x1 = *x0 + 1;
    if (*y1 <= *y0)
        *y1 = *y0 + 1;
    if (isfinite(p->x_min)) *x0 = p->x_min;
    if (isfinite(p->x_max)) *x1 = p->x_max;
    if (isfinite(p->y_min)) *y0 = p->y_min;
    if (isfinite(p->y_max)) *y1 = p->y_max;
}

int gcs_plot_write_svg(const gcs_plot *p, const char *path, gcs_err *err)
{
    double x0, x1, y0, y1;
    data_range(p, &x0, &x1, &y0, &y1);
    double ystep = nice_step(y1 - y0, 6), xstep = nice_step(x1 - x0, 8);
    if (xstep < 1 && x1 - x0 >= 1)
        xstep = 1; /* thread counts are integers */
    y1 = ceil(y1 / ystep - 1e-9) * ystep;
    const double pw = WIDTH - LEFT - RIGHT, ph = HEIGHT - TOP - BOTTOM;
#define PX(x) (LEFT + ((x) - x0) / (x1 - x0) * pw)
#define PY(y) (TOP + ph - ((y) - y0) / (y1 - y0) * ph)

    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) < 0)
        return -1;
    FILE *fp = out.fp;
    svg_begin(fp, WIDTH, p->title, p->subtitle);
    /* Grid and ticks. */
    for (double y = ceil(y0 / ystep) * ystep; y <= y1 + 1e-9 * ystep; y += ystep) {
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                (double)LEFT, PY(y), LEFT + pw, PY(y));
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%g</text>\n",
                LEFT - 8.0, PY(y) + 4, fabs(y) < 1e-12 ? 0 : y);
    }
    for (double x = ceil(x0 / xstep) * xstep; x <= x1 + 1e-9 * xstep; x += xstep) {
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                PX(x), (double)TOP, PX(x), TOP + ph);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%g</text>\n",
                PX(x), TOP + ph + 18, x);
    }
    fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n",
            LEFT, TOP, pw, ph);
    fprintf(fp, "<text x=\"%.1f\" y=\"%d\" font-size=\"14\" text-anchor=\"middle\">", LEFT + pw / 2,
            HEIGHT - 15);
    xml_text(fp, p->x_label);
    fprintf(fp, "</text>\n<text x=\"20\" y=\"%.1f\" font-size=\"14\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 20 %.1f)\">", TOP + ph / 2, TOP + ph / 2);
    xml_text(fp, p->y_label);
    fprintf(fp, "</text>\n");

    /* Series, clipped to the plot area. */
    fprintf(fp, "<clipPath id=\"area\"><rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\"/></clipPath>\n",
            LEFT, TOP, pw, ph);
    for (int s = 0; s < p->nseries; s++) {
        const gcs_plot_series *se = &p->series[s];
        const char *color = se->color ? se->color : palette[s % 8];
        fprintf(fp, "<g clip-path=\"url(#area)\">\n");
        if (se->style != GCS_PLOT_POINTS) {
            fprintf(fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color,
                    se->style == GCS_PLOT_DASHED ? " stroke-dasharray=\"6 4\"" : "");
            for (int i = 0; i < se->n; i++)
                if (isfinite(se->x[i]) && isfinite(se->y[i]))
                    fprintf(fp, "%.1f,%.1f ", PX(se->x[i]), PY(se->y[i]));
            fprintf(fp, "\"/>\n");
        }
        if (se->style != GCS_PLOT_DASHED)
            for (int i = 0; i < se->n; i++)
                if (isfinite(se->x[i]) && isfinite(se->y[i]))
                    fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n",
                            PX(se->x[i]), PY(se->y[i]), color);
        if (se->y_lo && se->y_hi)
            for (int i = 0; i < se->n; i++) {
                double lo = se->y_lo[i], hi = se->y_hi[i], xx = se->x[i];
                if (!isfinite(xx) || !isfinite(lo) || !isfinite(hi))
                    continue;
                /* a whisker: the vertical span and 8-pixel caps */
                fprintf(fp, "<path d=\"M%.1f,%.1fV%.1fM%.1f,%.1fh8M%.1f,%.1fh8\" stroke=\"%s\" "
                            "stroke-width=\"1.5\" fill=\"none\"/>\n",
                        PX(xx), PY(lo), PY(hi), PX(xx) - 4, PY(lo), PX(xx) - 4, PY(hi), color);
            }
        fprintf(fp, "</g>\n");
    }
    if (p->mark_label && isfinite(p->mark_x) && p->mark_x >= x0 && p->mark_x <= x1) {
        /* the recommendation: a dotted line across the plot, labelled at its
         * top right (at its left when it stands near the right edge) */
        int right = PX(p->mark_x) > LEFT + pw - 180;
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
                    "stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>\n",
                PX(p->mark_x), TOP, PX(p->mark_x), TOP + ph);
        /* and a triangle on the x axis, visible where the line meets a border */
        fprintf(fp, "<path d=\"M%.1f,%.1fl-6,10h12z\" fill=\"#444\"/>\n", PX(p->mark_x), TOP + ph - 10);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#444\" text-anchor=\"%s\">",
                PX(p->mark_x) + (right ? -9 : 9), TOP + ph - 4, right ? "end" : "start");
        xml_text(fp, p->mark_label);
        fprintf(fp, "</text>\n");
    }
    /* Legend: each entry drawn as its series is (a line, a dashed line, a
     * marker alone; a bar where the series has them), as wide as its
     * longest label (0.55 em a character, as heading() estimates). */
    double ly = TOP + 12;
    size_t longest = 0;
    for (int s = 0; s < p->nseries; s++)
        if (p->series[s].label && strlen(p->series[s].label) > longest)
            longest = strlen(p->series[s].label);
    double lw = fmin(pw - 20, fmax(200, 56 + 0.55 * 13 * (double)longest + 10));
    fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%d\" fill=\"white\" "
                "fill-opacity=\"0.85\" stroke=\"#bbb\"/>\n",
            LEFT + 10, TOP + 2, lw, 20 * p->nseries + 6);
    for (int s = 0; s < p->nseries; s++, ly += 20) {
        const gcs_plot_series *se = &p->series[s];
        const char *color = se->color ? se->color : palette[s % 8];
        if (se->style != GCS_PLOT_POINTS)
            fprintf(fp, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                    LEFT + 18, ly + 1, LEFT + 48, ly + 1, color,
                    se->style == GCS_PLOT_DASHED ? " stroke-dasharray=\"6 4\"" : "");
        if (se->style != GCS_PLOT_DASHED)
            fprintf(fp, "<circle cx=\"%d\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", LEFT + 33, ly + 1, color);
        if (se->y_lo && se->y_hi)
            fprintf(fp, "<path d=\"M%d,%.1fV%.1fM%d,%.1fh8M%d,%.1fh8\" stroke=\"%s\" stroke-width=\"1.5\" "
                        "fill=\"none\"/>\n",
                    LEFT + 33, ly - 6, ly + 8, LEFT + 29, ly - 6, LEFT + 29, ly + 8, color);
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"13\">", LEFT + 56, ly + 5);
        xml_text(fp, se->label);
        fprintf(fp, "</text>\n");
    }
    fprintf(fp, "</svg>\n");
#undef PX
#undef PY
    return gcs_outfile_commit(&out, err);
}

/* ---- stacked bars ------------------------------------------------------------ */

#define BAR_WIDTH 34
#define BAR_GAP 8
#define GROUP_GAP 36
#define LEGEND_WIDTH 190

static double seg_value(const gcs_plot_bar *b, int k)
{
    return isfinite(b->values[k]) ? b->values[k] : 0;
}

int gcs_plot_write_bars_svg(const gcs_plot_bars *p, const char *path, gcs_err *err)
{
    if (p->nsegments < 1 || p->nsegments > GCS_PLOT_MAX_SEGMENTS || p->ngroups < 1) {
        gcs_err_set(err, "plot: a bar chart needs 1..%d segments and at least one group",
                    GCS_PLOT_MAX_SEGMENTS);
        return -1;
    }
    /* Vertical range: positive segments stack up from 0, negative ones down. */
    double y0 = 0, y1 = 0;
    int nbars = 0;
    for (int g = 0; g < p->ngroups; g++)
        for (int b = 0; b < p->groups[g].nbars; b++, nbars++) {
            double up = 0, down = 0;
            for (int k = 0; k < p->nsegments; k++) {
                double v = seg_value(&p->groups[g].bars[b], k);
                if (v >= 0)
                    up += v;
                else
                    down += v;
            }
            y1 = fmax(y1, up), y0 = fmin(y0, down);
        }
    if (isfinite(p->y_max))
        y1 = p->y_max;
    if (y1 <= y0)
        y1 = y0 + 1;
    double ystep = nice_step(y1 - y0, 6);
    y1 = ceil(y1 / ystep - 1e-9) * ystep;
    y0 = floor(y0 / ystep + 1e-9) * ystep;
    double pw = p->ngroups * GROUP_GAP + nbars * (BAR_WIDTH + BAR_GAP);
    int width = (int)(LEFT + pw + RIGHT + LEGEND_WIDTH);
    if (width < WIDTH)
        width = WIDTH, pw = WIDTH - LEFT - RIGHT - LEGEND_WIDTH;
    const double ph = HEIGHT - TOP - BOTTOM - 20;
#define BY(y) (TOP + ph - ((y) - y0) / (y1 - y0) * ph)

    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) < 0)
        return -1;
    FILE *fp = out.fp;
    svg_begin(fp, width, p->title, p->subtitle);
    for (double y = y0; y <= y1 + 1e-9 * ystep; y += ystep) {
        fprintf(fp, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", LEFT,
                BY(y), LEFT + pw, BY(y), fabs(y) < 1e-12 ? "#333" : "#ddd");
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%g</text>\n",
                LEFT - 8.0, BY(y) + 4, fabs(y) < 1e-12 ? 0 : y);
    }
    fprintf(fp, "<text x=\"20\" y=\"%.1f\" font-size=\"14\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 20 %.1f)\">", TOP + ph / 2, TOP + ph / 2);
    xml_text(fp, p->y_label);
    fprintf(fp, "</text>\n");

    double x = LEFT + GROUP_GAP / 2.0;
    for (int g = 0; g < p->ngroups; g++) {
        const gcs_plot_bar_group *gr = &p->groups[g];
        double gx0 = x;
        for (int b = 0; b < gr->nbars; b++, x += BAR_WIDTH + BAR_GAP) {
            const gcs_plot_bar *bar = &gr->bars[b];
            double up = 0, down = 0;
            for (int k = 0; k < p->nsegments; k++) {
                double v = seg_value(bar, k);
                if (v == 0)
                    continue;
                double lo = v > 0 ? up : down + v, hi = v > 0 ? up + v : down;
                if (v > 0)
                    up += v;
                else
                    down += v;
                const char *color = p->segment_colors[k] ? p->segment_colors[k] : palette[k % 8];
                fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" "
                            "stroke=\"white\" stroke-width=\"0.5\"%s><title>",
                        x, BY(hi), BAR_WIDTH, BY(lo) - BY(hi), color,
                        v < 0 ? " fill-opacity=\"0.55\"" : "");
                xml_text(fp, p->segment_labels[k]);
                fprintf(fp, ": %.3g</title></rect>\n", v);
                if (p->label_values && BY(lo) - BY(hi) >= 13)
                    fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"white\" "
                                "text-anchor=\"middle\">%.2f</text>\n",
                            x + BAR_WIDTH / 2.0, (BY(lo) + BY(hi)) / 2 + 3.5, v);
            }
            if (bar->label) {
                fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
                            "transform=\"rotate(-40 %.1f %.1f)\">",
                        x + BAR_WIDTH / 2.0 + 4, TOP + ph + 14, x + BAR_WIDTH / 2.0 + 4, TOP + ph + 14);
                xml_text(fp, bar->label);
                fprintf(fp, "</text>\n");
            }
        }
        double gx1 = x - BAR_GAP;
        fprintf(fp, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" font-weight=\"bold\" "
                    "text-anchor=\"middle\">",
                (gx0 + gx1) / 2, HEIGHT - 12);
        xml_text(fp, gr->label);
        fprintf(fp, "</text>\n");
        x += GROUP_GAP;
    }
    /* Legend, top segment first, as on the bars. */
    double lx = LEFT + pw + 20, ly = TOP + 10;
    for (int k = p->nsegments - 1; k >= 0; k--, ly += 22) {
        const char *color = p->segment_colors[k] ? p->segment_colors[k] : palette[k % 8];
        fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", lx,
                ly - 11, color);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">", lx + 20, ly);
        xml_text(fp, p->segment_labels[k]);
        fprintf(fp, "</text>\n");
    }
    fprintf(fp, "</svg>\n");
#undef BY
    return gcs_outfile_commit(&out, err);
}
