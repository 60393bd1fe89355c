/* fuzz_hprof.c -- libFuzzer target over the HPROF importer
 * (gcs_heapdump_import_hprof_mem), built and run by `make fuzz` from a seed
 * of tests/fuzz/hprof_gen.h.  A failure must be one non-empty line; a dump
 * the importer accepts must give a valid snapshot whose statistics compute
 * and whose counts agree with the report.  The dump is cut into chunks of
 * 256 bytes for the second pass, on 2 threads, so that the chunks' counts,
 * their order and the parallel pass are fuzzed too (a small input would
 * otherwise be one chunk).
 *
 * The gzip paths of the window (formats/dumpstream.c) read files, so two
 * kinds of input are imported from one (a temporary file, unlinked at
 * once, named through /proc/self/fd): one that starts with gzip's magic as
 * it is (zlib's stream for one member; member by member with libdeflate
 * where the first header names HotSpot's BLOCKSIZE: make_seeds writes
 * both), and one that starts with "GZ" and a byte b, whose rest is written
 * as HotSpot's -gz members of 1 + 8b bytes -- valid members, so that the
 * HPROF records themselves are fuzzed through the member path's chunks,
 * which must then import exactly as from memory, or fail alike.
 *
 * The input's size picks the ways pass 2 goes, which must not change the
 * outcome: whether it looks ahead (and resolves references in batches) or
 * chooses by timing, and for gzip how much pass 1 keeps inflated for it
 * (nothing by the memory bar at these sizes, all, or half the input's
 * bytes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/heapdump_internal.h"
#include "gcscale/heapdump.h"
#include "hprof_gen.h"

/* The import's checks; 0 when it failed (its message one line). */
static int fuzz_hprof_check(gcs_snapshot *g, const gcs_heapdump_report *rep, gcs_err *err)
{
    if (!g) {
        if (!err->msg[0] || strchr(err->msg, '\n'))
            __builtin_trap();
        return 0;
    }
    if (gcs_snapshot_validate(g, err) != 0)
        __builtin_trap();
    if (g->nobjects != rep->instances + rep->object_arrays + rep->primitive_arrays + rep->classes)
        __builtin_trap();
    gcs_snapshot_stats st;
    if (gcs_snapshot_stats_compute(g, &st, err) == 0) {
        if (st.edges != rep->references || st.reachable > g->nobjects)
            __builtin_trap();
        gcs_snapshot_stats_free(&st);
    }
    return 1;
}

/* The path of a file holding size bytes of data (one file per process,
 * rewritten per input), or NULL. */
static const char *fuzz_hprof_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        char tmp[] = "/tmp/fuzz-hprof-XXXXXX";
        if ((fd = mkstemp(tmp)) < 0)
            return NULL;
        unlink(tmp);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return NULL;
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gcs_err err;
    gcs_heapdump_report rep;
    _gcs_hprof_set_chunk_bytes(256);
    _gcs_heapdump_set_threads(2);
    _gcs_hprof_set_ahead((int)(size % 3) - 1);
    _gcs_hprof_set_keep((size / 3) % 3 == 0 ? -1 : (size / 3) % 3 == 1 ? INT64_MAX : (int64_t)size / 2);
    int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    int members = !gz && size >= 3 && data[0] == 'G' && data[1] == 'Z';
    gcs_snapshot *g = NULL, *gm = NULL;
    if (gz) {
        const char *path = fuzz_hprof_file(data, size);
        if (path)
            g = gcs_heapdump_import(path, GCS_HEAPDUMP_HPROF, &rep, &err);
        else
            gcs_err_set(&err, "cannot write the input's file");
    } else if (members) {
        hgen z = hprof_gzip_members(data + 3, size - 3, 1 + 8 * (size_t)data[2], 1 + 8 * (uint32_t)data[2], 1, 0);
        const char *path = fuzz_hprof_file(z.p, z.n);
        free(z.p);
        if (path)
            g = gcs_heapdump_import(path, GCS_HEAPDUMP_HPROF, &rep, &err);
        else
            gcs_err_set(&err, "cannot write the input's file");
        /* the same records from memory: the same outcome */
        gcs_err errm;
        gcs_heapdump_report repm;
        gm = gcs_heapdump_import_hprof_mem(data + 3, size - 3, "fuzz", &repm, &errm);
        if (!path || !g != !gm)
            __builtin_trap();
        if (g) {
            if (!rep.gzip_members || g->nobjects != gm->nobjects || g->nfields != gm->nfields)
                __builtin_trap();
            rep.compressed = 0;
            rep.gzip_members = 0;
            rep.gzip_block_bytes = 0;
            if (memcmp(&rep, &repm, sizeof rep) != 0)
                __builtin_trap();
        } else {
            const char *a = strstr(err.msg, ": offset "), *b = strstr(errm.msg, ": offset ");
            if ((a || b) && (!a || !b || strcmp(a, b) != 0))
                __builtin_trap();
        }
        gcs_snapshot_free(gm);
    } else {
        g = gcs_heapdump_import_hprof_mem(data, size, "fuzz", &rep, &err);
    }
    _gcs_hprof_set_chunk_bytes(0);
    _gcs_heapdump_set_threads(0);
    _gcs_hprof_set_ahead(-1);
    _gcs_hprof_set_keep(-1);
    fuzz_hprof_check(g, &rep, &err);
    gcs_snapshot_free(g);
    return 0;
}
