/* corpus_entry.c -- reading a corpus entry's entry.json (docs/corpus.md,
 * "entry.json"): the whole document is checked before anything is rebuilt,
 * read or predicted, so a malformed entry is one error line and not a heap
 * built from a half-read recipe.
 *
 * An entry is a user file (anyone can record one on their machine and pass
 * its directory to `gcscale corpus accuracy`), so everything here is
 * bounded: at most GCS_GC_MAX_THREADS measurements per heap, at most
 * GCS_CORPUS_MAX_REPS repetitions per measurement, recipes held to the
 * shape builder's own limits, and a stored snapshot named as a plain file
 * inside the entry's directory.  tests/fuzz/fuzz_corpus_entry.c runs any
 * document through _gcs_corpus_entry_check.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_internal.h"
#include "gcscale/gc.h"

/* Median, min and max of one measurement's repetitions (mark_ns), and the
 * median of their steals. */
static int measure_point(const json_t *point, gcs_corpus_measured *m, const char *entry, const char *heap,
                         gcs_err *err)
{
    json_t *reps = json_object_get(point, "reps"), *threads = json_object_get(point, "threads");
    size_t n = json_array_size(reps);
    json_int_t p = json_integer_value(threads);
    if (!json_is_integer(threads) || p < 1 || p > GCS_GC_MAX_THREADS || n == 0 || n > GCS_CORPUS_MAX_REPS) {
        gcs_err_set(err, "%s/%s: a measurement without threads in 1..%d or with no (or over %d) repetitions",
                    entry, heap, GCS_GC_MAX_THREADS, GCS_CORPUS_MAX_REPS);
        return -1;
    }
    m->threads = (int)p;
    double v[GCS_CORPUS_MAX_REPS];
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_object_get(json_array_get(reps, i), "mark_ns");
        v[i] = json_number_value(x);
        if (!json_is_number(x) || !(v[i] > 0) || !(v[i] < 1e15)) {
            gcs_err_set(err, "%s/%s: P = %d: a repetition without a positive, finite mark_ns", entry, heap,
                        m->threads);
            return -1;
        }
    }
    m->n = (int)n;
    m->median = gcs_stats_median(v, n); /* sorts v */
    m->min = v[0];
    m->max = v[n - 1];
    /* the steals, where every repetition counted them (older entries did not) */
    m->steals_median = NAN;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_object_get(json_array_get(reps, i), "steals");
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return 0;
        v[i] = (double)json_integer_value(x);
    }
    m->steals_median = gcs_stats_median(v, n);
    return 0;
}

int _gcs_corpus_heap_points(const json_t *heap, const char *entry, gcs_corpus_measured *m, int *np, gcs_err *err)
{
    const char *name = json_string_value(json_object_get(heap, "name"));
    json_t *ms = json_object_get(heap, "measurements");
    size_t n = json_array_size(ms);
    if (!name || !name[0] || !json_is_string(json_object_get(heap, "kind")) || n == 0 || n > GCS_GC_MAX_THREADS) {
        gcs_err_set(err, "%s: a heap without a name, a kind or 1..%d measurements", entry, GCS_GC_MAX_THREADS);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (measure_point(json_array_get(ms, i), &m[i], entry, name, err) < 0)
            return -1;
        if (i > 0 && m[i].threads <= m[i - 1].threads) {
            gcs_err_set(err, "%s/%s: measurements not in ascending P", entry, name);
            return -1;
        }
    }
    if (m[0].threads != 1) {
        gcs_err_set(err, "%s/%s: no measurement at P = 1", entry, name);
        return -1;
    }
    *np = (int)n;
    return 0;
}

int _gcs_corpus_heap_recipe(const json_t *heap, const char *entry, const char **snapshot, gcs_shape_params *sp,
                            const char **checksum, gcs_err *err)
{
    const char *name = json_string_value(json_object_get(heap, "name")) ?: "?";
    json_t *file = json_object_get(heap, "snapshot"), *sum = json_object_get(heap, "checksum");
    *snapshot = NULL;
    *checksum = json_string_value(sum);
    memset(sp, 0, sizeof *sp);
    if (sum && (!*checksum || strlen(*checksum) >= 16)) {
        gcs_err_set(err, "%s/%s: checksum is not a crc32:XXXXXXXX string", entry, name);
        return -1;
    }
    if (file) {
        /* a plain name: an entry reads only its own directory */
        const char *f = json_string_value(file);
        if (!f || !f[0] || strchr(f, '/') || strcmp(f, ".") == 0 || strcmp(f, "..") == 0) {
            gcs_err_set(err, "%s/%s: snapshot must name a file in the entry's directory", entry, name);
            return -1;
        }
        *snapshot = f;
        return 0;
    }
    json_t *sj = json_object_get(heap, "shape");
    const char *shape = json_string_value(json_object_get(sj, "shape"));
    if (!*checksum || !shape || gcs_shape_parse(shape, &sp->kind) < 0) {
        gcs_err_set(err, "%s/%s: neither a snapshot nor a shape with a checksum to rebuild", entry, name);
        return -1;
    }
    json_t *jd = json_object_get(sj, "depth"), *js = json_object_get(sj, "size"), *jseed = json_object_get(sj, "seed");
    if ((jd && !json_is_integer(jd)) || (js && !json_is_integer(js)) || (jseed && !json_is_integer(jseed))) {
        gcs_err_set(err, "%s/%s: shape depth, size and seed must be integers", entry, name);
        return -1;
    }
    json_int_t depth = json_integer_value(jd), size = json_integer_value(js);
    if (depth < 0 || depth > GCS_SHAPE_MAX_DEPTH || size < 0) {
        gcs_err_set(err, "%s/%s: shape depth or size out of range", entry, name);
        return -1;
    }
    sp->depth = (int)depth;
    sp->objects = (uint64_t)size;
    sp->seed = (uint64_t)json_integer_value(jseed);
    gcs_err why;
    if (gcs_shape_params_check(sp, &why) < 0) {
        gcs_err_set(err, "%s/%s: %s", entry, name, why.msg);
        return -1;
    }
    return 0;
}

int _gcs_corpus_entry_check(const json_t *doc, const char *entry, gcs_err *err)
{
    json_t *heaps = json_object_get(doc, "heaps"), *profile = json_object_get(doc, "profile");
    if (strcmp(json_string_value(json_object_get(doc, "format")) ?: "", GCS_CORPUS_FORMAT) != 0 ||
        json_integer_value(json_object_get(doc, "version")) != GCS_CORPUS_VERSION || !json_is_array(heaps)) {
        gcs_err_set(err, "%s: not a corpus entry of version %d", entry, GCS_CORPUS_VERSION);
        return -1;
    }
    const char *pf = json_string_value(profile);
    if (profile && (!pf || !pf[0] || strchr(pf, '/'))) {
        gcs_err_set(err, "%s: profile must name a file in the entry's directory", entry);
        return -1;
    }
    size_t i;
    json_t *heap;
    json_array_foreach(heaps, i, heap) {
        gcs_corpus_measured m[GCS_GC_MAX_THREADS];
        gcs_shape_params sp;
        const char *snapshot, *checksum;
        int np;
        if (_gcs_corpus_heap_points(heap, entry, m, &np, err) < 0 ||
            _gcs_corpus_heap_recipe(heap, entry, &snapshot, &sp, &checksum, err) < 0)
            return -1;
    }
    return 0;
}
