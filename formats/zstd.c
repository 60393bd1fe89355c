/* zstd.c -- zstd-compressed files (formats/zstd_internal.h).
 *
 * The writer streams, reading the plain file in chunks, and states the plain
 * size in the frame.  The reader decodes a file whose plain size it knows in
 * one call from the mapped file into a buffer of that size (the caller parses
 * it from memory); any other file streams into a growing buffer.  Neither
 * holds the compressed file in memory of its own: the mapping is the page
 * cache's, which the kernel drops under pressure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* The largest plain size the one-shot path takes from the file's word:
 * 256 times the compressed file, plus 16 MiB.  A stated size is read from
 * bytes a user gave us, and one that claimed terabytes would be refused by
 * the allocator (or end a sanitizer build); a snapshot compresses 5-50
 * times. */
static size_t plain_cap(size_t compressed)
{
    uint64_t cap = (uint64_t)compressed * 256 + ((uint64_t)16 << 20);
    return cap < SIZE_MAX / 2 ? (size_t)cap : SIZE_MAX / 2;
}

/* The plain size the file states: the frame header's content size (files
 * our writer made since 2026-11-28, and the zstd tool's), else what
 * size_hint reads from the first plain bytes, decoded into a small buffer.
 * 0 when neither tells. */
static size_t stated_size(const unsigned char *src, size_t n, gcs_zstd_size_hint size_hint)
{
    unsigned long long fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != ZSTD_CONTENTSIZE_ERROR)
        return fcs <= SIZE_MAX ? (size_t)fcs : 0;
    if (!size_hint)
        return 0;
    enum { PEEK = 4096 }; /* more than any header asks */
    unsigned char *peek = malloc(PEEK);
    ZSTD_DStream *ds = ZSTD_createDStream();
    size_t plain = 0;
    if (peek && ds) {
        ZSTD_initDStream(ds);
        ZSTD_inBuffer ib = {src, n, 0};
        ZSTD_outBuffer ob = {peek, PEEK, 0};
        while (ob.pos < ob.size && ib.pos < ib.size) {
            size_t r = ZSTD_decompressStream(ds, &ob, &ib);
            if (ZSTD_isError(r) || r == 0)
                break;
        }
        uint64_t h = size_hint(peek, ob.pos);
        plain = h <= SIZE_MAX ? (size_t)h : 0;
    }
    ZSTD_freeDStream(ds);
    free(peek);
    return plain;
}

/* The one-shot path: the compressed file mapped, decoded in one call into
 * a buffer of the size it states.  The streaming decoder below goes
 * through its own window (8 MiB for our writer's frames) and grows the
 * output by doubling, copying it up to twice: on a 270 000-object corpus
 * snapshot that was 2.4 MiB of `predict --fast`'s 21 MiB peak.  1 with
 * *data and *len set; 0 when the size is not stated or the file does not
 * decode to it (the streaming path then decodes it, or says what is
 * wrong with it). */
static int load_sized(int fd, gcs_zstd_size_hint size_hint, void **data, size_t *len)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 || (uint64_t)sb.st_size > SIZE_MAX / 2)
        return 0;
    size_t n = (size_t)sb.st_size;
    void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return 0;
    int ok = 0;
    size_t plain = stated_size(map, n, size_hint);
    if (plain > 0 && plain <= plain_cap(n)) {
        void *out = malloc(plain);
        size_t got = out ? ZSTD_decompress(out, plain, map, n) : 0;
        if (out && !ZSTD_isError(got) && got == plain) {
            *data = out;
            *len = got;
            ok = 1;
        } else {
            free(out);
        }
    }
    munmap(map, n);
    return ok;
}

int _gcs_zstd_load_fd(int fd, const char *name, gcs_zstd_size_hint size_hint, void **data, size_t *len,
                      gcs_err *err)
{
    unsigned char head[4];
    if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head || !_gcs_zstd_is_frame(head, sizeof head))
        return 0;
    if (load_sized(fd, size_hint, data, len))
        return 1;
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
    /* the frame states the plain size, so that the reader sizes its buffer
     * once (_gcs_zstd_load_fd) */
    struct stat sb;
    if (fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode))
        ZSTD_CCtx_setPledgedSrcSize(cc, (unsigned long long)sb.st_size);
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
