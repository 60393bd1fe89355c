/* test_files.h -- file helpers shared by the cmocka tests (included after
 * <cmocka.h>; failures are test failures). */
#ifndef GCSCALE_TEST_FILES_H
#define GCSCALE_TEST_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole file, malloc'd with one spare byte; its length in *len. */
static inline uint8_t *test_slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail_msg("cannot read %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return b;
}

#endif
