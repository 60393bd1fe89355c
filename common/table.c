/* table.c -- result tables that print as aligned text, CSV or JSON.
 *
 * Cells are stored as text (as they will be shown) plus, for numbers, the
 * value itself so JSON gets real numbers rather than strings, and CSV every
 * digit of them (the text is rounded for reading). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/common.h"

typedef enum cell_kind { CELL_STR, CELL_INT, CELL_NUM } cell_kind;

typedef struct cell {
    cell_kind kind;
    char *text;
    long long int_value;
    double num_value;
} cell;

struct gcs_table {
    char *title;
    int ncols;
    char **colnames;
    cell *cells;
    size_t ncells, cap;
};

gcs_table *gcs_table_new(const char *title, int ncols, const char *const *colnames)
{
    gcs_table *t = calloc(1, sizeof *t);
    if (!t)
        abort();
    t->title = title ? strdup(title) : NULL;
    t->ncols = ncols;
    t->colnames = calloc((size_t)ncols, sizeof *t->colnames);
    for (int i = 0; i < ncols; i++)
        t->colnames[i] = strdup(colnames[i]);
    return t;
}

void gcs_table_free(gcs_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i].text);
    for (int i = 0; i < t->ncols; i++)
        free(t->colnames[i]);
    free(t->colnames);
    free(t->cells);
    free(t->title);
    free(t);
}

static cell *add_cell(gcs_table *t, cell_kind kind, const char *text)
{
    if (t->ncells == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->cells = realloc(t->cells, t->cap * sizeof *t->cells);
        if (!t->cells)
            abort();
    }
    cell *c = &t->cells[t->ncells++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->text = strdup(text);
    return c;
}

void gcs_table_add_str(gcs_table *t, const char *s)
{
    /* Strings come from files (a trace's thread names): a control character
     * would move the terminal's cursor or start an escape sequence, and a
     * newline would break the row.  They show as '?', as in errors. */
    gcs_text_one_line(add_cell(t, CELL_STR, s ? s : "")->text);
}

void gcs_table_add_int(gcs_table *t, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    add_cell(t, CELL_INT, buf)->int_value = v;
}

void gcs_table_add_num(gcs_table *t, double v, int decimals)
{
    char buf[64];
    if (isfinite(v))
        snprintf(buf, sizeof buf, "%.*f", decimals, v);
    else
        snprintf(buf, sizeof buf, "-");
    add_cell(t, CELL_NUM, buf)->num_value = v;
}

int gcs_table_rows(const gcs_table *t)
{
    return (int)(t->ncells / (size_t)t->ncols);
}

static json_t *cell_json(const cell *c)
{
    switch (c->kind) {
    case CELL_INT: return json_integer(c->int_value);
    case CELL_NUM: return isfinite(c->num_value) ? json_real(c->num_value) : json_null();
    default:       return json_string(c->text);
    }
}

json_t *gcs_table_to_json(const gcs_table *t)
{
    json_t *rows = json_array();
    int nrows = gcs_table_rows(t);
    for (int r = 0; r < nrows; r++) {
        json_t *row = json_object();
        for (int c = 0; c < t->ncols; c++)
            json_object_set_new(row, t->colnames[c], cell_json(&t->cells[(size_t)r * t->ncols + c]));
        json_array_append_new(rows, row);
    }
    return rows;
}

static void print_csv_field(FILE *fp, const char *s)
{
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

static void print_text(const gcs_table *t, FILE *fp)
{
    int nrows = gcs_table_rows(t);
    size_t *width = calloc((size_t)t->ncols, sizeof *width);
    for (int c = 0; c < t->ncols; c++)
        width[c] = strlen(t->colnames[c]);
    for (int r = 0; r < nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            size_t w = strlen(t->cells[(size_t)r * t->ncols + c].text);
            if (w > width[c])
                width[c] = w;
        }
    if (t->title)
        fprintf(fp, "%s\n", t->title);
    /* Text left-aligned, numbers right-aligned, as people read tables. */
    for (int c = 0; c < t->ncols; c++) {
        int numeric = nrows > 0 && t->cells[c].kind != CELL_STR;
        fprintf(fp, c ? "  %*s" : "%*s", numeric ? (int)width[c] : -(int)width[c], t->colnames[c]);
    }
    fputc('\n', fp);
    for (int r = 0; r < nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const cell *cl = &t->cells[(size_t)r * t->ncols + c];
            int numeric = cl->kind != CELL_STR;
            fprintf(fp, c ? "  %*s" : "%*s", numeric ? (int)width[c] : -(int)width[c], cl->text);
        }
        fputc('\n', fp);
    }
    free(width);
}

void gcs_table_print(const gcs_table *t, FILE *fp, gcs_format fmt)
{
    if (fmt == GCS_FORMAT_JSON) {
        json_t *rows = gcs_table_to_json(t);
        gcs_json_print(rows, fp);
        json_decref(rows);
        return;
    }
    if (fmt == GCS_FORMAT_TEXT) {
        print_text(t, fp);
        return;
    }
    int nrows = gcs_table_rows(t);
    for (int c = 0; c < t->ncols; c++) {
        if (c)
            fputc(',', fp);
        print_csv_field(fp, t->colnames[c]);
    }
    fputc('\n', fp);
    for (int r = 0; r < nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            if (c)
                fputc(',', fp);
            const cell *cl = &t->cells[(size_t)r * t->ncols + c];
            if (cl->kind == CELL_NUM) {
                /* full precision, not the text's rounding: the shortest
                 * form that reads back as the same double */
                char buf[32] = "";
                for (int digits = 15; isfinite(cl->num_value) && digits <= 17; digits++) {
                    snprintf(buf, sizeof buf, "%.*g", digits, cl->num_value);
                    if (strtod(buf, NULL) == cl->num_value)
                        break;
                }
                fputs(buf, fp);
                continue;
            }
            print_csv_field(fp, cl->text);
        }
        fputc('\n', fp);
    }
}
