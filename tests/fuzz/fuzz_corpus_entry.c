/* fuzz_corpus_entry.c -- libFuzzer target over a corpus entry's entry.json
 * (_gcs_corpus_entry_check, validate/corpus_entry.c), built and run by
 * `make fuzz`.
 *
 * `gcscale corpus accuracy DIR` reads the entry.json of any directory the
 * user names, and an entry's recipes make it build heaps, so the check that
 * runs before anything is built must take any document to 0 or to -1 with
 * one error line.  Invariants: the answer is 0 or -1; an error is one
 * non-empty line; a document that passes names only plain files and holds
 * recipes the shape builder accepts (checked again here through the
 * per-heap readers, which must agree with the whole-document check). */
#include <stdint.h>
#include <string.h>

#include "../../validate/corpus_internal.h"
#include "gcscale/gc.h"

static int one_line(const gcs_err *err) { return err->msg[0] && !strchr(err->msg, '\n'); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    if (!doc)
        return 0; /* not JSON: jansson's business */
    gcs_err err;
    err.msg[0] = 0;
    int r = _gcs_corpus_entry_check(doc, "fuzz", &err);
    if (r != 0 && r != -1)
        __builtin_trap();
    if (r == -1 && !one_line(&err))
        __builtin_trap();
    if (r == 0) {
        size_t i;
        json_t *heap;
        json_array_foreach(json_object_get(doc, "heaps"), i, heap) {
            gcs_corpus_measured m[GCS_GC_MAX_THREADS];
            gcs_shape_params sp;
            const char *snapshot, *checksum;
            int np;
            if (_gcs_corpus_heap_points(heap, "fuzz", m, &np, &err) != 0 ||
                _gcs_corpus_heap_recipe(heap, "fuzz", &snapshot, &sp, &checksum, &err) != 0)
                __builtin_trap();
            if (np < 1 || m[0].threads != 1 || (snapshot && strchr(snapshot, '/')) || (!snapshot && !checksum))
                __builtin_trap();
            for (int k = 0; k < np; k++)
                if (!(m[k].min > 0 && m[k].min <= m[k].median && m[k].median <= m[k].max))
                    __builtin_trap();
        }
    }
    json_decref(doc);
    return 0;
}
