/* bottle_svg.c -- a bottle graph as a standalone SVG file.
 *
 * As in the bottle-graphs paper: boxes stacked bottom (widest) to top
 * (narrowest), centred on a vertical zero line; a box of parallelism P
 * stretches to P on both sides, so parallelism is read left or right of 0;
 * height is the thread's share of the run time.  Box labels (name, share,
 * parallelism) sit in a column on the right with a leader line to their box,
 * so thin boxes stay readable.  Colours are by thread class. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gcscale/accounting.h"

#define W 900
#define H 620
#define ML 80    /* left margin: y axis */
#define MR 300   /* right margin: box labels */
#define MT 70    /* top: title, subtitle */
#define MB 70    /* bottom: x axis */

static void put_xml(FILE *fp, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", fp);
        else if (*s == '>')
            fputs("&gt;", fp);
        else if (*s == '&')
            fputs("&amp;", fp);
        else if (*s == '"')
            fputs("&quot;", fp);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, fp);
    }
}

static double nice_step(double range, int target)
{
    double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

/* Colours of the classes the recorder and the runtime presets give
 * (gcscale trace --runtime: gc-conc, jit, vm); any other class is grey. */
static const struct {
    const char *cls, *color;
} class_colors[] = {
    {"mutator", "#4e79a7"}, {"gc", "#f28e2b"}, {"gc-conc", "#ffbe7d"}, {"jit", "#e15759"},
    {"vm", "#76b7b2"},      {"main", "#59a14f"}, {"mixed", "#b07aa1"},
};
#define NCLASS_COLORS (int)(sizeof class_colors / sizeof class_colors[0])

static int class_index(const char *cls)
{
    for (int i = 0; i < NCLASS_COLORS; i++)
        if (strcmp(cls, class_colors[i].cls) == 0)
            return i;
    return -1;
}

static const char *class_color(const char *cls)
{
    int i = class_index(cls);
    return i < 0 ? "#9c9c9c" : class_colors[i].color;
}

/* Time unit for the axis and labels: ms, or s for long runs, or us. */
static void pick_unit(double ns, double *div, const char **unit)
{
    if (ns >= 10e9) {
        *div = 1e9;
        *unit = "s";
    } else if (ns >= 10e6) {
        *div = 1e6;
        *unit = "ms";
    } else {
        *div = 1e3;
        *unit = "us";
    }
}

int gcs_acct_bottle_write_svg(const gcs_acct_bottle *b, const char *title, const char *subtitle,
                              const char *path, gcs_err *err)
{
    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) != 0)
        return -1;
    FILE *fp = out.fp;
    double pmax = 1;
    size_t nvis = 0;
    for (size_t k = 0; k < b->nboxes; k++)
        if (!isnan(b->boxes[k].parallelism) && b->boxes[k].share_ns > 0) {
            nvis++;
            if (b->boxes[k].parallelism > pmax)
                pmax = b->boxes[k].parallelism;
        }
    pmax = ceil(pmax * 1.05);
    double div;
    const char *unit;
    pick_unit(b->busy_ns, &div, &unit);
    double ytop = b->busy_ns / div;
    if (!(ytop > 0))
        ytop = 1;
    double ystep = nice_step(ytop, 6);
    double ymax = ceil(ytop / ystep - 1e-9) * ystep;
    double pw = W - ML - MR, ph = H - MT - MB;
#define X(v) (ML + ((v) + pmax) / (2 * pmax) * pw)
#define Y(v) (MT + ph - (v) / ymax * ph)

    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
    fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(fp, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", ML);
    put_xml(fp, title ? title : "bottle graph");
    fputs("</text>\n", fp);
    fprintf(fp, "<text x=\"%d\" y=\"44\" fill=\"#444\">", ML);
    if (subtitle)
        put_xml(fp, subtitle);
    fprintf(fp, "%swall %.3f %s = boxes %.3f %s + idle %.3f %s (no thread active)</text>\n", subtitle ? "; " : "",
            b->wall_ns / div, unit, b->busy_ns / div, unit, b->idle_ns / div, unit);

    /* grid and axes */
    double xstep = pmax <= 8 ? 1 : nice_step(pmax, 4);
    for (double v = -floor(pmax / xstep) * xstep; v <= pmax + 1e-9; v += xstep) {
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", X(v), MT, X(v),
                MT + ph, fabs(v) < 1e-9 ? "#555" : "#e4e4e4");
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", X(v), MT + ph + 16,
                fabs(v));
    }
    for (double v = 0; v <= ymax + 1e-9; v += ystep) {
        fprintf(fp, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", ML, Y(v), ML + pw,
                Y(v));
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ML - 6, Y(v) + 4, v);
    }
    fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#555\"/>\n", ML, MT,
            pw, ph);
    fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">parallelism (a box of width P reaches P on "
                "both sides of 0)</text>\n", ML + pw / 2, H - MB + 38);
    fprintf(fp, "<text transform=\"translate(%d,%.1f) rotate(-90)\" text-anchor=\"middle\">share of run time (%s), "
                "stacked</text>\n", 22, MT + ph / 2, unit);

    /* boxes, bottom first; label positions spread so that they do not overlap */
    double label_y[512];
    size_t nl = 0;
    double y = 0;
    for (size_t k = 0; k < b->nboxes && nl < 512; k++) {
        const gcs_acct_box *box = &b->boxes[k];
        if (isnan(box->parallelism) || box->share_ns <= 0)
            continue;
        double h = box->share_ns / div, p = box->parallelism;
        fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" fill-opacity=\"0.85\" "
                    "stroke=\"white\" stroke-width=\"%s\"><title>",
                X(-p), Y(y + h), X(p) - X(-p), Y(y) - Y(y + h), class_color(box->cls),
                Y(y) - Y(y + h) > 3 ? "1" : "0");
        put_xml(fp, box->label);
        fprintf(fp, ": share %.3f %s, parallelism %.2f, run %.3f %s</title></rect>\n", h, unit, p,
                box->run_ns / div, unit);
        label_y[nl++] = Y(y + h / 2);
        y += h;
    }
    /* Labels go bottom-up; push each one up if it would overlap the one below,
     * then pull the column down if it ran off the top. */
    const double gap = 15;
    for (size_t i = 1; i < nl; i++)
        if (label_y[i] > label_y[i - 1] - gap)
            label_y[i] = label_y[i - 1] - gap;
    if (nl && label_y[nl - 1] < MT + 10) {
        double shift = MT + 10 - label_y[nl - 1];
        for (size_t i = 0; i < nl; i++)
            label_y[i] += shift;
    }
    y = 0;
    size_t li = 0;
    for (size_t k = 0; k < b->nboxes && li < nl; k++) {
        const gcs_acct_box *box = &b->boxes[k];
        if (isnan(box->parallelism) || box->share_ns <= 0)
            continue;
        double h = box->share_ns / div, p = box->parallelism, ym = Y(y + h / 2), lx = ML + pw + 12;
        fprintf(fp, "<polyline points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"#888\" "
                    "stroke-width=\"0.8\"/>\n", X(p), ym, ML + pw + 4, ym, lx - 2, label_y[li]);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"bold\">", lx, label_y[li] + 4);
        put_xml(fp, box->label);
        if (box->nthreads > 1)
            fprintf(fp, " (%zu)", box->nthreads);
        fprintf(fp, "</tspan> %.*f %s (%.1f%%), P %.2f</text>\n", h >= 100 ? 0 : h >= 10 ? 1 : 2, h, unit,
                box->share_pct, p);
        y += h;
        li++;
    }
    /* class legend */
    double lx = ML;
    for (int c = 0; c <= NCLASS_COLORS; c++) { /* the known classes, then "other classes" */
        int present = 0;
        for (size_t k = 0; k < b->nboxes; k++)
            if (class_index(b->boxes[k].cls) == (c < NCLASS_COLORS ? c : -1))
                present = 1;
        if (!present)
            continue;
        fprintf(fp, "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", lx, H - 22,
                c < NCLASS_COLORS ? class_colors[c].color : "#9c9c9c");
        fprintf(fp, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", lx + 16, H - 12,
                c < NCLASS_COLORS ? class_colors[c].cls : "other classes");
        lx += c < NCLASS_COLORS ? 90 : 110;
    }
    if (nvis == 0)
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no thread was ever active</text>\n",
                ML + pw / 2, MT + ph / 2);
    fputs("</svg>\n", fp);
#undef X
#undef Y
    return gcs_outfile_commit(&out, err);
}
