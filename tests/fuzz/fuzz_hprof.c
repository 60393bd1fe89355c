/* fuzz_hprof.c -- libFuzzer target over the HPROF importer
 * (gcs_heapdump_import_hprof_mem), built and run by `make fuzz` from a seed
 * of tests/fuzz/hprof_gen.h.  A failure must be one non-empty line; a dump
 * the importer accepts must give a valid snapshot whose statistics compute
 * and whose counts agree with the report.  The dump is cut into chunks of
 * 256 bytes for the second pass, on 2 threads, so that the chunks' counts,
 * their order and the parallel pass are fuzzed too (a small input would
 * otherwise be one chunk). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../formats/hprof_internal.h"
#include "gcscale/heapdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gcs_err err;
    gcs_heapdump_report rep;
    _gcs_hprof_set_chunk_bytes(256);
    _gcs_heapdump_set_threads(2);
    gcs_snapshot *g = gcs_heapdump_import_hprof_mem(data, size, "fuzz", &rep, &err);
    _gcs_hprof_set_chunk_bytes(0);
    _gcs_heapdump_set_threads(0);
    if (!g) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap();
        return 0;
    }
    if (gcs_snapshot_validate(g, &err) != 0)
        __builtin_trap();
    if (g->nobjects != rep.instances + rep.object_arrays + rep.primitive_arrays + rep.classes)
        __builtin_trap();
    gcs_snapshot_stats st;
    if (gcs_snapshot_stats_compute(g, &st, &err) == 0) {
        if (st.edges != rep.references || st.reachable > g->nobjects)
            __builtin_trap();
        gcs_snapshot_stats_free(&st);
    }
    gcs_snapshot_free(g);
    return 0;
}
