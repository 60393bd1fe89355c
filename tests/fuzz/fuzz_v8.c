/* fuzz_v8.c -- libFuzzer target over the V8 heap snapshot importer
 * (gcs_heapdump_import_v8_mem), built and run by `make fuzz` from seeds of
 * tests/fuzz/v8_gen.h and the dictionary tests/fuzz/v8.dict.  A failure must
 * be one non-empty line; a snapshot the importer accepts must give a valid
 * graph whose counts agree with the report. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/heapdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gcs_err err;
    gcs_heapdump_report rep;
    gcs_snapshot *g = gcs_heapdump_import_v8_mem(data, size, "fuzz", &rep, &err);
    if (!g) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap();
        return 0;
    }
    if (gcs_snapshot_validate(g, &err) != 0)
        __builtin_trap();
    if (g->nobjects + rep.unreachable_nodes != rep.nodes || g->nroots != 1 || g->nfields != rep.references
        || rep.references + rep.weak_edges + rep.shortcut_edges + rep.element_copies > rep.edges_total)
        __builtin_trap();
    gcs_snapshot_stats st;
    if (gcs_snapshot_stats_compute(g, &st, &err) == 0) {
        if (st.edges != rep.references || st.reachable != g->nobjects)
            __builtin_trap();
        gcs_snapshot_stats_free(&st);
    }
    gcs_snapshot_free(g);
    return 0;
}
