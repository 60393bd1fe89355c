/* zstd.c -- zstd-compressed files (formats/zstd_internal.h).
 *
 * Both directions stream, so that neither side ever holds the compressed and
 * the plain file whole at once: the reader grows one output buffer (the
 * caller parses it from memory), the writer reads the plain file in chunks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "zstd_internal.h"

int _gcs_zstd_is_frame(const void *head, size_t n)
{
    static const unsigned char magic[4] = {0x28, 0xB5, 0x2F, 0xFD}; /* ZSTD_MAGICNUMBER, little-endian */
    return n >= 4 && memcmp(head, magic, 4) == 0;
}

/* Grows *buf to at least `need` bytes (doubling); -1 when out of memory. */
static int grow(unsigned char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 1 << 20;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    unsigned char *b = realloc(*buf, c);
    if (!b)
        return -1;
    *buf = b;
    *cap = c;
    return 0;
}

/* Decodes what `ib` holds into the growing buffer.  ZSTD_decompressStream's
 * hint (0 at a frame's end), or SIZE_MAX with *why set. */
static size_t decode(ZSTD_DStream *ds, ZSTD_inBuffer *ib, unsigned char **out, size_t *cap, size_t *len,
                     const char **why)
{
    if (grow(out, cap, *len + ZSTD_DStreamOutSize()) < 0) {
        *why = "out of memory for the decompressed file";
        return SIZE_MAX;
    }
    ZSTD_outBuffer ob = {*out + *len, *cap - *len, 0};
    size_t hint = ZSTD_decompressStream(ds, &ob, ib);
    if (ZSTD_isError(hint)) {
        *why = ZSTD_getErrorName(hint);
        return SIZE_MAX;
    }
    *len += ob.pos;
    if (ib->size == 0 && ob.pos == 0 && hint != 0) {
        *why = "truncated zstd stream";
        return SIZE_MAX;
    }
    return hint;
}

int _gcs_zstd_load_fd(int fd, const char *name, void **data, size_t *len, gcs_err *err)
{
    unsigned char head[4];
    if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head || !_gcs_zstd_is_frame(head, sizeof head))
        return 0;
    size_t in_cap = ZSTD_DStreamInSize();
    unsigned char *in = malloc(in_cap), *out = NULL;
    size_t out_cap = 0, out_len = 0, hint = 1;
    ZSTD_DStream *ds = ZSTD_createDStream();
    off_t off = 0;
    const char *why = NULL;
    if (!in || !ds) {
        why = "out of memory";
        goto fail;
    }
    ZSTD_initDStream(ds);
    for (;;) {
        ssize_t got = pread(fd, in, in_cap, off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            why = strerror(errno);
            goto fail;
        }
        if (got == 0)
            break;
        off += got;
        ZSTD_inBuffer ib = {in, (size_t)got, 0};
        while (ib.pos < ib.size)
            if ((hint = decode(ds, &ib, &out, &out_cap, &out_len, &why)) == SIZE_MAX)
                goto fail;
    }
    /* Input used up: flush what the decoder still holds. */
    while (hint != 0) {
        ZSTD_inBuffer ib = {in, 0, 0};
        if ((hint = decode(ds, &ib, &out, &out_cap, &out_len, &why)) == SIZE_MAX)
            goto fail;
    }
    ZSTD_freeDStream(ds);
    free(in);
    *data = out;
    *len = out_len;
    return 1;
fail:
    gcs_err_set(err, "%s: cannot decompress: %s", name, why);
    ZSTD_freeDStream(ds);
    free(in);
    free(out);
    return -1;
}

int _gcs_zstd_compress_file(const char *src, const char *dst, int level, gcs_err *err)
{
    FILE *fp = fopen(src, "rb");
    if (!fp) {
        gcs_err_set(err, "%s: cannot read: %s", src, strerror(errno));
        return -1;
    }
    gcs_outfile of;
    if (gcs_outfile_open(&of, dst, err) < 0) {
        fclose(fp);
        return -1;
    }
    size_t in_cap = ZSTD_CStreamInSize(), out_cap = ZSTD_CStreamOutSize();
    unsigned char *in = malloc(in_cap), *out = malloc(out_cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    const char *why = NULL;
    if (!in || !out || !cc) {
        why = "out of memory";
        goto fail;
    }
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    for (;;) {
        size_t got = fread(in, 1, in_cap, fp);
        if (ferror(fp)) {
            gcs_err_set(err, "%s: cannot read: %s", src, strerror(errno));
            goto fail_set;
        }
        int end = got < in_cap;
        ZSTD_inBuffer ib = {in, got, 0};
        size_t left;
        do {
            ZSTD_outBuffer ob = {out, out_cap, 0};
            left = ZSTD_compressStream2(cc, &ob, &ib, end ? ZSTD_e_end : ZSTD_e_continue);
            if (ZSTD_isError(left)) {
                why = ZSTD_getErrorName(left);
                goto fail;
            }
            if (fwrite(out, 1, ob.pos, of.fp) != ob.pos) {
                why = strerror(errno);
                goto fail;
            }
        } while (end ? left != 0 : ib.pos < ib.size);
        if (end)
            break;
    }
    ZSTD_freeCCtx(cc);
    free(in);
    free(out);
    fclose(fp);
    return gcs_outfile_commit(&of, err);
fail:
    gcs_err_set(err, "%s: cannot compress: %s", dst, why);
fail_set:
    ZSTD_freeCCtx(cc);
    free(in);
    free(out);
    fclose(fp);
    gcs_outfile_abort(&of);
    return -1;
}
