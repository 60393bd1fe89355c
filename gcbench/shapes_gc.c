/* shapes_gc.c -- the benchmark shapes built in gcscale's collector.  Kept
 * apart from shapes.c so that a program linking libgcscale.a for the shapes
 * alone (the Boehm comparison) does not pull in the collector. */
#include <string.h>

#include "gcscale/gc.h"
#include "gcscale/shapes.h"

static void *gc_alloc(void *ctx, size_t nptrs, size_t data_words)
{
    (void)ctx;
    size_t size = 8 * (nptrs + data_words);
    return nptrs ? gcs_gc_alloc(size, nptrs) : gcs_gc_alloc_data(size);
}

int gcs_shape_build_gc(const gcs_shape_params *p, void **root, gcs_shape_info *info, gcs_err *err)
{
    if (gcs_shape_build(p, gc_alloc, NULL, root, info, err) < 0) {
        const char *why = gcs_gc_last_error();
        if (why && *why) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            gcs_err_set(err, "%s (%s)", msg, why);
        }
        return -1;
    }
    return 0;
}
