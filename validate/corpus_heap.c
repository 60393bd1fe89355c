/* corpus_heap.c -- the heaps of the corpus: a gc-bench shape built and
 * written as a snapshot, and the checksum that proves a rebuilt heap is the
 * one that was measured.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "corpus_internal.h"
#include "gcscale/gc.h"

static uLong crc_array(uLong crc, const void *p, uint64_t bytes)
{
    const unsigned char *b = p;
    while (bytes > 0) { /* crc32 takes a uInt length */
        uInt n = bytes > (1u << 30) ? (1u << 30) : (uInt)bytes;
        crc = crc32(crc, b, n);
        b += n;
        bytes -= n;
    }
    return crc;
}

void gcs_corpus_graph_checksum(const gcs_snapshot *g, char out[16])
{
    uint64_t counts[3] = {g->nobjects, g->nfields, g->nroots};
    uLong crc = crc32(0, Z_NULL, 0);
    crc = crc_array(crc, counts, sizeof counts);
    crc = crc_array(crc, g->addr, g->nobjects * sizeof *g->addr);
    crc = crc_array(crc, g->words, g->nobjects * sizeof *g->words);
    crc = crc_array(crc, g->nptrs, g->nobjects * sizeof *g->nptrs);
    crc = crc_array(crc, g->edges, g->nfields * sizeof *g->edges);
    crc = crc_array(crc, g->roots, g->nroots * sizeof *g->roots);
    snprintf(out, 16, "crc32:%08lx", (unsigned long)crc);
}

size_t _gcs_corpus_shape_heap_limit(const gcs_shape_params *sp)
{
    gcs_shape_info info;
    gcs_shape_describe(sp, &info);
    return 2 * (info.gcs_bytes + 8 * info.objects) + (64u << 20);
}

int _gcs_corpus_shape_snapshot(const gcs_shape_params *sp, const char *path, gcs_err *err)
{
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.heap_limit = _gcs_corpus_shape_heap_limit(sp);
    go.threads = 1;
    go.max_threads = 1;
    go.ignore_threads_env = 1;
    go.log_path = "";
    go.snapshot_path = "";
    if (gcs_gc_init(&go, err) < 0)
        return -1;
    void *root = NULL;
    int rc = -1;
    if (gcs_gc_add_root(&root) < 0) {
        gcs_err_set(err, "corpus: out of memory");
        goto done;
    }
    gcs_shape_info info;
    if (gcs_shape_build_gc(sp, &root, &info, err) < 0)
        goto done;
    rc = gcs_gc_collect_snapshot(path, err);
done:
    gcs_gc_shutdown();
    return rc;
}

int gcs_corpus_shape_checksum(const gcs_shape_params *sp, const char *path, char out[16], gcs_err *err)
{
    if (_gcs_corpus_shape_snapshot(sp, path, err) < 0)
        return -1;
    gcs_snapshot *g = gcs_snapshot_read(path, err);
    if (!g)
        return -1;
    gcs_corpus_graph_checksum(g, out);
    gcs_snapshot_free(g);
    return 0;
}
