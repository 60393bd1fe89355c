/* fuzz_gcbench_result.c -- libFuzzer target over the gc-bench result reader
 * (gcs_gcbench_result_read, formats/gcbench_result.c), built and run by
 * `make fuzz`.
 *
 * `gcscale predict --measured FILE` hands the reader a file the user names,
 * often one carried between machines or edited by a script, so any bytes
 * must give either a result or one error line.  The reader takes a path, so
 * the input goes to an anonymous in-memory file (memfd) read through
 * /proc/self/fd: no disk traffic per execution.
 *
 * A result the reader accepts must have at least one row, every row's
 * thread count >= 1, and survive being written back as JSON and printed as
 * its table. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gcscale/gcbench_result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("gcscale-fuzz-gcbench", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return 0;
        }
        done += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gcs_gcbench_result *r = NULL;
    gcs_err err;
    err.msg[0] = 0;
    if (gcs_gcbench_result_read(path, &r, &err) == 0) {
        if (!r || r->nrows < 1)
            __builtin_trap();
        for (int i = 0; i < r->nrows; i++)
            if (r->rows[i].threads < 1)
                __builtin_trap();
        json_t *doc = gcs_gcbench_result_to_json(r);
        if (!doc)
            __builtin_trap();
        json_decref(doc);
        gcs_table *t = gcs_gcbench_result_table(r);
        if (!t)
            __builtin_trap();
        gcs_table_free(t);
        gcs_gcbench_result_free(r);
    } else if (!err.msg[0] || strchr(err.msg, '\n')) {
        __builtin_trap(); /* a refusal is one line, never none */
    }
    close(fd);
    return 0;
}
