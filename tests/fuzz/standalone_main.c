/* standalone_main.c -- a main for the fuzz targets without libFuzzer: each
 * argument is a file, fed once to LLVMFuzzerTestOneInput.
 *
 * Two uses.  `make check` links every target of `make fuzz` with it from the
 * same source lists (Makefile, FUZZ_*_SRCS), so a source a target needs and
 * its list lacks fails there rather than first on a machine with clang
 * (`make fuzz` failed to link fuzz_corpus_entry for a day, 2026-11-29, after
 * corpus_entry.c began to call common/stats.c).  And it replays an input
 * libFuzzer saved (a crash, a corpus file) where clang is absent:
 * build/fuzz-standalone/fuzz_hprof CRASH-FILE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp) {
            perror(argv[i]);
            return 2;
        }
        size_t cap = 1 << 16, n = 0;
        uint8_t *buf = malloc(cap);
        for (size_t got; buf && (got = fread(buf + n, 1, cap - n, fp)) > 0;) {
            n += got;
            if (n == cap) {
                uint8_t *more = realloc(buf, cap *= 2);
                if (!more)
                    free(buf);
                buf = more;
            }
        }
        int bad = ferror(fp);
        fclose(fp);
        if (!buf || bad) {
            fprintf(stderr, "%s: %s\n", argv[i], bad ? "read error" : "out of memory");
            free(buf);
            return 2;
        }
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
    }
    return 0;
}
