/* crc32c.c -- CRC-32C (Castagnoli), the checksum of snapshot format version 3
 * (docs/snapshot-format.md, "Version 3").
 *
 * Why not zlib's CRC-32, which versions 1 and 2 use: zlib 1.2.13 computes it
 * at 2.5-3 GB/s per core here, so checking a 200 MB snapshot cost 70-80 ms of
 * CPU, about the serial mark of the heap it describes; x86-64's SSE4.2 `crc32`
 * instruction computes CRC-32C at about 8 GB/s on one stream (memory speed),
 * and other machines get a table-driven version (slicing by 8, about 1.5 GB/s).
 * Both give the same values; which one runs is chosen once, at the first call.
 *
 * The `crc32` instruction takes 3 cycles and can start one a cycle, so one
 * stream uses a third of it: a buffer of 3 x CRC32C_LANE bytes or more is
 * taken as three lanes at once, whose registers are then joined.  The
 * register is linear over GF(2): the CRC of A || B from register c is
 * shift_|B|(crc(c, A)) ^ crc(0, B), shift_k being the CRC of k zero bytes,
 * itself linear in c, so for the lanes' fixed length it is a table of 4 x
 * 256 words built once.  (5-7 GB/s -> 9-10 GB/s from memory here:
 * docs/snapshot-format.md, "Version 3".)
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "snapshot_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CRC32C_HW 1
#endif

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

#define CRC32C_LANE 4096 /* bytes per lane, a multiple of 8 */

static uint32_t crc32c_table[8][256];
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;
static int crc32c_use_hw;
#ifdef CRC32C_HW
/* shift_LANE and shift_2LANE, a byte of the register at a time */
static uint32_t crc32c_shift1[4][256], crc32c_shift2[4][256];
static void crc32c_shift_init(void);
#endif

static void crc32c_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc32c_table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int t = 1; t < 8; t++)
            crc32c_table[t][b] = (crc32c_table[t - 1][b] >> 8) ^ crc32c_table[0][crc32c_table[t - 1][b] & 0xFF];
#ifdef CRC32C_HW
    __builtin_cpu_init();
    crc32c_use_hw = __builtin_cpu_supports("sse4.2");
    if (crc32c_use_hw)
        crc32c_shift_init();
#endif
}

static uint32_t crc32c_sw(uint32_t c, const uint8_t *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ crc32c_table[0][(c ^ *p++) & 0xFF];
        n--;
    }
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = snap_ld32(p) ^ c, hi = snap_ld32(p + 4);
        c = crc32c_table[7][lo & 0xFF] ^ crc32c_table[6][(lo >> 8) & 0xFF] ^ crc32c_table[5][(lo >> 16) & 0xFF] ^
            crc32c_table[4][lo >> 24] ^ crc32c_table[3][hi & 0xFF] ^ crc32c_table[2][(hi >> 8) & 0xFF] ^
            crc32c_table[1][(hi >> 16) & 0xFF] ^ crc32c_table[0][hi >> 24];
    }
    while (n--)
        c = (c >> 8) ^ crc32c_table[0][(c ^ *p++) & 0xFF];
    return c;
}

#ifdef CRC32C_HW
/* The register after `bytes` zero bytes from register c (bytes: a multiple of 8). */
__attribute__((target("sse4.2"))) static uint32_t crc32c_zeros(uint32_t c, size_t bytes)
{
    uint64_t r = c;
    for (size_t i = 0; i < bytes; i += 8)
        r = _mm_crc32_u64(r, 0);
    return (uint32_t)r;
}

static void crc32c_shift_init(void)
{
    uint32_t bit1[32], bit2[32];
    for (int i = 0; i < 32; i++) {
        bit1[i] = crc32c_zeros(1u << i, CRC32C_LANE);
        bit2[i] = crc32c_zeros(bit1[i], CRC32C_LANE);
    }
    for (int j = 0; j < 4; j++)
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t s1 = 0, s2 = 0;
            for (int i = 0; i < 8; i++)
                if (b >> i & 1) {
                    s1 ^= bit1[8 * j + i];
                    s2 ^= bit2[8 * j + i];
                }
            crc32c_shift1[j][b] = s1;
            crc32c_shift2[j][b] = s2;
        }
}

static inline uint32_t crc32c_shift(const uint32_t t[4][256], uint32_t c)
{
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t c32, const uint8_t *p, size_t n)
{
    uint64_t c = c32;
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        n--;
    }
    for (; n >= 3 * CRC32C_LANE; n -= 3 * CRC32C_LANE, p += 3 * CRC32C_LANE) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < CRC32C_LANE; i += 8) {
            uint64_t v0, v1, v2;
            memcpy(&v0, p + i, 8);
            memcpy(&v1, p + CRC32C_LANE + i, 8);
            memcpy(&v2, p + 2 * CRC32C_LANE + i, 8);
            c = _mm_crc32_u64(c, v0);
            c1 = _mm_crc32_u64(c1, v1);
            c2 = _mm_crc32_u64(c2, v2);
        }
        c = crc32c_shift(crc32c_shift2, (uint32_t)c) ^ crc32c_shift(crc32c_shift1, (uint32_t)c1) ^ (uint32_t)c2;
    }
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
    }
    while (n--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return (uint32_t)c;
}
#endif

uint32_t _gcs_crc32c(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc32c_once, crc32c_init);
    uint32_t c = ~crc;
#ifdef CRC32C_HW
    if (crc32c_use_hw)
        return ~crc32c_hw(c, data, n);
#endif
    return ~crc32c_sw(c, data, n);
}
