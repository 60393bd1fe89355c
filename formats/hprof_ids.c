/* hprof_ids.c -- the HPROF importer's object id -> snapshot index map
 * (_gcs_idmap_*, heapdump_internal.h): an object's index is the rank of its id
 * among the dump's ids, which is the dump's address order.
 *
 * HotSpot's and ART's ids are addresses: aligned (8 bytes) and dense over a
 * few contiguous ranges.  The map is then a bitmap over the id range, one
 * bit per alignment granule, in words that carry the count of set bits
 * before them (a rank directory): a lookup is one 16-byte word and a
 * popcount, the whole map 2 bits per granule -- for objects of 24-64 bytes
 * 0.75-2 B per object, a few MB for 10^7 objects, so that the lookups of a
 * dump in any record order hit the cache.  Only 32 KiB pages of the range
 * that hold an object get words (a page table of 4 B per page), so that
 * the holes between a heap's ranges cost 4 B per 32 KiB; where every page
 * holds one (a heap of one dense range) the table is the identity, and the
 * lookups skip its load (dense): a dependent load less before the miss on
 * the word.  Building it
 * needs no sort: each id sets its bit (a bit found set is an object dumped
 * twice), then one pass sums the ranks.
 *
 * When the ids are not dense -- the map would take more than the 8 B per
 * object of the ids themselves (plus 1 MiB), e.g. a few huge arrays, or
 * ids scattered over a 64-bit range -- the ids are sorted instead (an LSD
 * radix sort over the bits their span needs) and indexed by a directory
 * over the range, a lookup being a binary search in a bucket of about two
 * ids: slower (two or three cache misses), but bounded in memory whatever
 * the ids are. */
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "heapdump_internal.h"

/* LSD radix sort of the keys' offsets from the smallest, over only the
 * bits the id span needs, in as few rounds of at most 16 bits as that takes
 * (a heap of 10^7 objects spans ~2^28 bytes: two rounds of 14 bits, whose
 * 16384 buckets the scatter keeps in cache better than 65536); a round
 * where every key has the same digit is skipped. */
static int sort_ids(uint64_t *a, size_t n)
{
    if (n < 2)
        return 0;
    uint64_t lo = a[0], hi = a[0];
    for (size_t i = 1; i < n; i++) {
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
    }
    unsigned bits = hi > lo ? 64 - (unsigned)__builtin_clzll(hi - lo) : 0;
    if (!bits)
        return 0;
    /* digits of up to 16 bits; of 8 below 2^16 ids, where clearing and
     * summing 2^16 counters per round would cost more than the sort (a
     * small dump whose ids span 64 bits: 4 rounds of 512 KiB of counters) */
    unsigned maxw = n < 65536 ? 8 : 16;
    unsigned rounds = (bits + maxw - 1) / maxw, width = (bits + rounds - 1) / rounds;
    size_t nb = (size_t)1 << width, mask = nb - 1;
    uint64_t *t = malloc(n * sizeof *t);
    size_t *cnt = malloc(nb * sizeof *cnt);
    if (!t || !cnt) {
        free(t);
        free(cnt);
        return -1;
    }
    uint64_t *src = a, *dst = t;
    for (unsigned sh = 0; sh < bits; sh += width) {
        memset(cnt, 0, nb * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[((src[i] - lo) >> sh) & mask]++;
        if (cnt[((src[0] - lo) >> sh) & mask] == n)
            continue;
        size_t sum = 0;
        for (size_t d = 0; d < nb; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[((src[i] - lo) >> sh) & mask]++] = src[i];
        uint64_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    free(t);
    free(cnt);
    return 0;
}

/* Sorted mode: ids kept, sorted, and a directory of ~n/2 buckets over the
 * range. */
static int build_sorted(_gcs_idmap *x, uint64_t *ids, uint64_t n, uint64_t *dup)
{
    if (sort_ids(ids, n) < 0)
        return -1;
    for (uint64_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1]) {
            *dup = ids[i];
            return 1;
        }
    x->sorted = 1;
    uint64_t span = n ? ids[n - 1] - ids[0] + 1 : 1;
    x->dshift = 0;
    while ((span >> x->dshift) > n / 2 + 1)
        x->dshift++;
    x->ndir = (span >> x->dshift) + 1;
    x->dir = malloc((x->ndir + 1) * sizeof *x->dir);
    if (!x->dir)
        return -1;
    x->bytes = n * sizeof *ids + (x->ndir + 1) * sizeof *x->dir;
    uint64_t i = 0;
    for (uint64_t b = 0; b <= x->ndir; b++) {
        while (i < n && ((ids[i] - x->min) >> x->dshift) < b)
            i++;
        x->dir[b] = (uint32_t)i;
    }
    return 0;
}

/* The range of ids[0..n), n > 0. */
static _gcs_idrange id_range(const uint64_t *ids, uint64_t n)
{
    _gcs_idrange r = {ids[0], ids[0], 0, 1};
    uint64_t descents = 0;
    for (uint64_t i = 0; i < n; i++) {
        r.lo = ids[i] < r.lo ? ids[i] : r.lo;
        r.hi = ids[i] > r.hi ? ids[i] : r.hi;
        r.diff |= ids[i] - ids[0]; /* every id is ids[0] + a multiple of 2^ctz(diff) */
        descents += i && ids[i] < ids[i - 1];
    }
    r.ascending = descents <= n / 64;
    return r;
}

/* How many ids ahead the bits are set of ids in no order prefetch their
 * word: setting a bit takes a few cycles, a miss hundreds. */
#define BUILD_AHEAD 64

int _gcs_idmap_build(_gcs_idmap *x, uint64_t *ids, uint64_t n, const _gcs_idrange *range, int keep,
                     uint64_t *dup)
{
    memset(x, 0, sizeof *x);
    x->n = n;
    x->ids = ids; /* owned from here on, whatever happens */
    if (n == 0) {
        x->sorted = 1; /* empty: every lookup misses */
        x->dir = calloc(2, sizeof *x->dir);
        return x->dir ? 0 : -1;
    }
    _gcs_idrange rg = range ? *range : id_range(ids, n);
#if GCS_ASSERT_ON
    _gcs_idrange found = id_range(ids, n);
    gcs_assert_internal(rg.lo == found.lo && rg.hi == found.hi && rg.diff == found.diff);
#endif
    const uint64_t lo = rg.lo, hi = rg.hi, diff = rg.diff;
    /* ids in no order set bits anywhere: the words they set are loaded
     * ahead; ascending ones set them in order, which the hardware
     * prefetches without the extra lookups */
    const int ahead = !rg.ascending;
    x->min = lo;
    x->max = hi;
    unsigned gshift = diff ? (unsigned)__builtin_ctzll(diff) : 0;
    uint64_t gmax = (hi - lo) >> gshift;
    uint64_t npages = (gmax >> IDMAP_PAGE_BITS) + 1;
    uint64_t budget = 8 * n + (1u << 20);
    if (npages > budget / 4)
        return build_sorted(x, ids, n, dup);
    uint32_t *top = calloc(npages, sizeof *top);
    if (!top)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        top[((ids[i] - lo) >> gshift) >> IDMAP_PAGE_BITS] = 1;
    uint64_t slots = 0;
    for (uint64_t p = 0; p < npages; p++)
        slots += top[p];
    if (npages * 4 + slots * IDMAP_PAGE_WORDS * sizeof(_gcs_idword) > budget) {
        free(top);
        return build_sorted(x, ids, n, dup);
    }
    _gcs_idword *w = calloc(slots * IDMAP_PAGE_WORDS, sizeof *w);
    if (!w) {
        free(top);
        return -1;
    }
    _gcs_hugepages(w, slots * IDMAP_PAGE_WORDS * sizeof *w);
    /* mapped now: a prefetch of a page not yet mapped does nothing, so ids
     * in no order would each take a page fault or a miss in turn below */
    _gcs_prefault(w, slots * IDMAP_PAGE_WORDS * sizeof *w);
    for (uint64_t p = 0, s = 0; p < npages; p++)
        top[p] = top[p] ? (uint32_t)s++ : UINT32_MAX;
    x->gshift = gshift;
    x->gmask = ((uint64_t)1 << gshift) - 1;
    x->gmax = gmax;
    x->top = top;
    x->npages = npages;
    x->dense = slots == npages;
    x->w = w;
    x->bytes = npages * sizeof *top + slots * IDMAP_PAGE_WORDS * sizeof *w;
    for (uint64_t i = 0; i < n; i++) {
        if (ahead && i + BUILD_AHEAD < n)
            _gcs_idmap_prefetch(x, ids[i + BUILD_AHEAD]);
        uint64_t g = (ids[i] - lo) >> gshift;
        _gcs_idword *k = &w[(uint64_t)top[g >> IDMAP_PAGE_BITS] * IDMAP_PAGE_WORDS + ((g >> 6) & (IDMAP_PAGE_WORDS - 1))];
        uint64_t bit = 1ull << (g & 63);
        if (k->bits & bit) {
            *dup = ids[i];
            return 1;
        }
        k->bits |= bit;
    }
    if (!keep)
        free(ids);
    x->ids = NULL;
    uint64_t sum = 0;
    for (uint64_t k = 0; k < slots * IDMAP_PAGE_WORDS; k++) {
        w[k].rank = (uint32_t)sum;
        sum += _gcs_popcount64(w[k].bits);
    }
    gcs_assert_internal(sum == n);
    return 0;
}

void _gcs_idmap_free(_gcs_idmap *x)
{
    free(x->ids);
    free(x->dir);
    free(x->top);
    free(x->w);
    memset(x, 0, sizeof *x);
}

uint64_t _gcs_idmap_ids(const _gcs_idmap *x, uint64_t *out, uint64_t cap, _gcs_idmap_cursor *c)
{
    uint64_t k = 0;
    if (x->sorted) {
        while (k < cap && c->at < x->n)
            out[k++] = x->ids[c->at++];
        return k;
    }
    while (k < cap) {
        while (!c->bits) {
            if (c->word % IDMAP_PAGE_WORDS == 0) { /* the next page that holds ids */
                uint64_t p = c->word / IDMAP_PAGE_WORDS;
                while (p < x->npages && x->top[p] == UINT32_MAX)
                    p++;
                if (p >= x->npages)
                    return k;
                c->word = p * IDMAP_PAGE_WORDS;
            }
            uint64_t p = c->word / IDMAP_PAGE_WORDS;
            c->bits = x->w[(uint64_t)x->top[p] * IDMAP_PAGE_WORDS + c->word % IDMAP_PAGE_WORDS].bits;
            c->base = x->min + ((c->word * 64) << x->gshift);
            c->word++;
        }
        unsigned b = (unsigned)__builtin_ctzll(c->bits);
        c->bits &= c->bits - 1;
        out[k++] = c->base + ((uint64_t)b << x->gshift);
    }
    return k;
}

void _gcs_idmap_granules_every(const _gcs_idmap *x, unsigned shift, uint32_t *out, uint64_t count)
{
    uint64_t b = 0;
    for (uint64_t p = 0; p < x->npages && b < count; p++) {
        if (x->top[p] == UINT32_MAX)
            continue;
        const _gcs_idword *w = &x->w[(uint64_t)x->top[p] * IDMAP_PAGE_WORDS];
        for (uint64_t k = 0; k < IDMAP_PAGE_WORDS && b < count; k++) {
            uint64_t end = w[k].rank + _gcs_popcount64(w[k].bits);
            while (b < count && (b << shift) < end) {
                uint64_t bits = w[k].bits;
                for (uint64_t j = (b << shift) - w[k].rank; j; j--) /* the j-th set bit */
                    bits &= bits - 1;
                out[b++] = (uint32_t)(((p * IDMAP_PAGE_WORDS + k) << 6) + (uint64_t)__builtin_ctzll(bits));
            }
        }
    }
    gcs_assert_internal(b == count);
    out[count] = (uint32_t)(x->gmax + 1);
}

void _gcs_idmap_seek(const _gcs_idmap *x, uint64_t id, uint64_t i, _gcs_idmap_cursor *c)
{
    memset(c, 0, sizeof *c);
    if (x->sorted) {
        c->at = i;
        return;
    }
    uint64_t g = (id - x->min) >> x->gshift, word = g >> 6;
    const _gcs_idword *k = &x->w[(uint64_t)x->top[g >> IDMAP_PAGE_BITS] * IDMAP_PAGE_WORDS + (word & (IDMAP_PAGE_WORDS - 1))];
    c->bits = k->bits & (~0ull << (g & 63));
    c->base = x->min + ((word * 64) << x->gshift);
    c->word = word + 1;
}

int _gcs_cpu_popcnt(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt") != 0;
#else
    return 0;
#endif
}
