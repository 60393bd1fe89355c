/* fuzz_snapshot.c -- libFuzzer target over the heap snapshot reader
 * (gcs_snapshot_read_mem), built and run by `make fuzz`.
 *
 * Each input is parsed twice: as it is, and with its CRCs recomputed (header
 * and every section whose frame fits in the input; versions 1 and 2 one
 * CRC-32 per section, version 3 a CRC-32C per block and per frame).  Random mutations almost
 * always break a checksum, so the second parse is what lets the fuzzer reach
 * the count, id, address, node and params checks behind the checksums.  A
 * snapshot the reader accepts must pass gcs_snapshot_validate and get its
 * statistics computed (the BFS walks every edge), and its reordering
 * (gcs_snapshot_reorder, depth first: a stack as deep as its fields) must
 * succeed, keep its counts and reach as many objects as the statistics.
 * An input that begins as a zstd frame is also read as a file
 * (gcs_snapshot_read on a memfd), through formats/zstd.c: the one-shot
 * decode into the size the frame or the snapshot header states, or the
 * streaming one when that size is missing or wrong.  The seeds include
 * compressed snapshots with and without a stated size (make_seeds.c). */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "gcscale/snapshot.h"
#include "../../formats/snapshot_internal.h"

static void check(const uint8_t *data, size_t size)
{
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_read_mem(data, size, "fuzz", &err);
    if (!g) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap(); /* every failure is one non-empty line */
        return;
    }
    if (gcs_snapshot_validate(g, &err) != 0)
        __builtin_trap();
    gcs_snapshot_stats st;
    if (gcs_snapshot_stats_compute(g, &st, &err) == 0) {
        if (st.reachable > g->nobjects || st.edges > g->nfields || st.depth > g->nobjects)
            __builtin_trap();
        uint64_t reached = 0;
        gcs_snapshot *h = gcs_snapshot_reorder(g, GCS_SNAPSHOT_ORDER_DEPTH_FIRST, 0, &reached, &err);
        if (h ? reached != st.reachable || h->nfields != g->nfields || h->nroots != g->nroots
              : !strstr(err.msg, "out of memory"))
            __builtin_trap(); /* an input that validated gives a valid reordering */
        gcs_snapshot_free(h);
        gcs_snapshot_stats_free(&st);
    }
    gcs_snapshot_free(g);
}

/* The file reader on a zstd frame: the same outcomes as the memory reader
 * (one line on failure; a snapshot it returns validates). */
static void check_zstd_file(const uint8_t *data, size_t size)
{
    static const uint8_t magic[4] = {0x28, 0xB5, 0x2F, 0xFD};
    if (size < 4 || memcmp(data, magic, 4) != 0)
        return;
    int fd = memfd_create("fuzz.snap.zst", MFD_CLOEXEC);
    if (fd < 0)
        return;
    for (size_t off = 0; off < size;) {
        ssize_t k = write(fd, data + off, size - off);
        if (k <= 0) {
            close(fd);
            return;
        }
        off += (size_t)k;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gcs_err err;
    gcs_snapshot *g = gcs_snapshot_read(path, &err);
    if (!g) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap();
    } else {
        if (gcs_snapshot_validate(g, &err) != 0)
            __builtin_trap();
        gcs_snapshot_free(g);
    }
    close(fd);
}

static uint64_t ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* Version 3: the header's CRC-32C, then per section its blocks' and its
 * frame's, as far as the input holds them. */
static void fix_crcs3(uint8_t *b, size_t len)
{
    if (len < SNAP_HEADER_BYTES_V3)
        return;
    st32(b + 92, _gcs_crc32c(0, b, 92));
    size_t off = SNAP_HEADER_BYTES_V3;
    for (int i = 0; i < (int)SNAP_NSECTIONS_V3; i++) {
        if (len - off < 16)
            return;
        uint64_t payload = ld64(b + off + 8);
        if (payload > len)
            return;
        uint64_t padded = snap_pad8(payload), nb = snap3_nblocks(payload, i), bb = snap3_block_bytes(i);
        size_t end = off + 16 + (size_t)padded + (size_t)snap3_tail(nb);
        if (end > len)
            return;
        uint8_t *data = b + off + 16, *table = data + padded;
        for (uint64_t k = 0; k < nb; k++) {
            uint64_t lo = k * bb, hi = lo + bb < padded ? lo + bb : padded;
            st32(table + 4 * k, _gcs_crc32c(0, data + lo, (size_t)(hi - lo)));
        }
        st32(table + 4 * nb, _gcs_crc32c(_gcs_crc32c(0, b + off, 16), table, (size_t)(4 * nb)));
        off = end;
    }
}

static void fix_crcs(uint8_t *b, size_t len)
{
    /* version 1: 72-byte header, 5 sections; version 2: 88 and 7; version 3 above */
    if (len < 12)
        return;
    uint32_t version;
    memcpy(&version, b + 8, 4);
    if (version == 3) {
        fix_crcs3(b, len);
        return;
    }
    size_t hb = version == 1 ? 72 : 88;
    int nsec = version == 1 ? 5 : 7;
    if (len < hb)
        return;
    st32(b + hb - 4, (uint32_t)crc32(0, b, (uInt)(hb - 4)));
    size_t off = hb;
    for (int i = 0; i < nsec; i++) {
        if (len - off < 16)
            return;
        uint64_t payload = ld64(b + off + 8);
        if (payload > len)
            return;
        size_t end = off + 16 + (size_t)((payload + 7) & ~7ull);
        if (end > len || len - end < 8)
            return;
        st32(b + end, (uint32_t)crc32(0, b + off, (uInt)(end - off)));
        off = end + 8;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size);
    check_zstd_file(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_crcs(copy, size);
    check(copy, size);
    free(copy);
    return 0;
}
