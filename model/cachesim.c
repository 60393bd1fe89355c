/* cachesim.c -- set-associative LRU multi-level cache simulator
 * (include/gcscale/cachesim.h; definitions in docs/model.md "Q1 and L").
 *
 * Layout: per level a row of 32-bit tags per set, padded to whole 64-byte
 * host lines (one line for up to 16 ways), and for level 0 and the private
 * levels a parallel row of 64-bit times (the line's last access).  A lookup
 * compares the whole row at once (SSE2).  Recency: with up to 16 ways (every
 * real cache) lines never move; each set has a 64-bit list of its way
 * numbers, 4 bits each, most recent first, and a hit or a fill moves one
 * number to the front with a few shifts and masks (finding it in the list is
 * a SWAR search for a zero nibble).  The victim is the last number.  An
 * empty way is always behind every filled one (a fill takes the last
 * position and moves it to the front), so empty ways are filled first.
 * Keeping the rows themselves in recency order instead moved up to 16 tags
 * and 16 times on every miss, most of the simulator's time; it remains for
 * levels of more than 16 ways.  Nothing is allocated per access.
 *
 * Keeping L exact: at level 0 every access reaches the level, so its time is
 * the line's last access.  A deeper private level only sees the accesses that
 * missed the levels above, so its time is stale while the line sits in a
 * level above; when a level evicts a line, its last access time is handed to
 * the next private level that still holds it (one extra set scan per
 * eviction).  A hit at a private level therefore finds the line's true
 * previous access time.  Shared levels keep no times.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "gcscale/cachesim.h"
#include "gcscale/gc.h"

/* the streamer's pages: two per FIFO entry (cachesim.h), one bit each in lane_used */
_Static_assert(GCS_CACHESIM_LANES == 2 * GCS_GC_MARK_FIFO && GCS_CACHESIM_LANES <= 64,
               "model v2's streamer follows two pages per entry of the marker's FIFO");

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define SAMPLE_TAG_BYTES (256u << 10)
#define SAMPLE_MIN_SETS 2048

static int log2_exact(uint64_t v)
{
    if (v == 0 || (v & (v - 1)) != 0)
        return -1;
    return __builtin_ctzll(v);
}

int gcs_cachesim_geom_from_profile(const gcs_profile *prof, int cpu, gcs_cachesim_geom *geom,
                                   gcs_err *err)
{
    memset(geom, 0, sizeof *geom);
    if (cpu < 0) {
        cpu = 0;
        if (prof->nnodes > 0 && prof->nodes[0].ncpus > 0)
            cpu = prof->nodes[0].cpus[0];
    }
    /* One instance per level: the one listing cpu, else the level's first. */
    int chosen[GCS_CACHESIM_MAX_LEVELS + 1];
    int levels[GCS_CACHESIM_MAX_LEVELS + 1];
    int n = 0;
    for (int i = 0; i < prof->ncaches; i++) {
        const gcs_profile_cache *c = &prof->caches[i];
        if (strcmp(c->type, "data") != 0 && strcmp(c->type, "unified") != 0)
            continue;
        int has_cpu = 0;
        for (int k = 0; k < c->ncpus; k++)
            if (c->cpus[k] == cpu)
                has_cpu = 1;
        int slot = -1;
        for (int k = 0; k < n; k++)
            if (levels[k] == c->level)
                slot = k;
        if (slot < 0) {
            if (n == GCS_CACHESIM_MAX_LEVELS) {
                gcs_err_set(err, "profile lists more than %d cache levels", GCS_CACHESIM_MAX_LEVELS);
                return -1;
            }
            slot = n++;
            levels[slot] = c->level;
            chosen[slot] = i;
        } else {
            const gcs_profile_cache *old = &prof->caches[chosen[slot]];
            int old_has = 0;
            for (int k = 0; k < old->ncpus; k++)
                if (old->cpus[k] == cpu)
                    old_has = 1;
            if (has_cpu && !old_has)
                chosen[slot] = i;
        }
    }
    if (n == 0) {
        gcs_err_set(err, "profile has no cache geometry");
        return -1;
    }
    /* sort by level (few entries: insertion sort) */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && levels[k - 1] > levels[k]; k--) {
            int tl = levels[k], tc = chosen[k];
            levels[k] = levels[k - 1];
            chosen[k] = chosen[k - 1];
            levels[k - 1] = tl;
            chosen[k - 1] = tc;
        }
    geom->nlevels = n;
    for (int i = 0; i < n; i++) {
        const gcs_profile_cache *c = &prof->caches[chosen[i]];
        if (log2_exact((uint64_t)(c->line_bytes > 0 ? c->line_bytes : 0)) < 0) {
            gcs_err_set(err, "caches: level %d has line_bytes %d, not a power of two", c->level,
                        c->line_bytes);
            return -1;
        }
        if (c->size_bytes < (uint64_t)c->line_bytes) {
            gcs_err_set(err, "caches: level %d is smaller than one line", c->level);
            return -1;
        }
        geom->level[i].level = c->level;
        geom->level[i].size_bytes = gcs_profile_cache_bytes(prof, chosen[i]);
        geom->level[i].line_bytes = c->line_bytes;
        geom->level[i].ways = c->ways;
        geom->level[i].ncpus = c->ncpus;
    }
    int first = geom->level[0].ncpus;
    geom->private_levels = 0;
    while (geom->private_levels < n && geom->level[geom->private_levels].ncpus <= first)
        geom->private_levels++;
    /* Sample a shared last level down to about SAMPLE_TAG_BYTES of tags, but
     * keep at least SAMPLE_MIN_SETS sets so the estimate stays smooth. */
    geom->sample_shift = 0;
    if (geom->private_levels < n) {
        const gcs_cachesim_level_geom *g = &geom->level[n - 1];
        uint64_t lines = g->size_bytes / (uint64_t)g->line_bytes;
        uint64_t ways = g->ways > 0 ? (uint64_t)g->ways : GCS_CACHESIM_UNKNOWN_WAYS;
        if (ways > GCS_CACHESIM_MAX_WAYS)
            ways = GCS_CACHESIM_MAX_WAYS;
        uint64_t sets = lines / (ways ? ways : 1), row_bytes = ((ways + 15) & ~15ull) * 4;
        while ((sets >> geom->sample_shift) * row_bytes > SAMPLE_TAG_BYTES &&
               (sets >> (geom->sample_shift + 1)) >= SAMPLE_MIN_SETS)
            geom->sample_shift++;
    }
    return 0;
}

/* ---- state ------------------------------------------------------------------ */

#define NIB_ONES 0x1111111111111111ull

/* Every way empty; recency lists 0, 1, ..., ways - 1. */
static void level_clear(gcs_cachesim_lv *l, uint64_t rows)
{
    size_t n = (size_t)(rows * (uint64_t)l->stride);
    memset(l->tag, 0, n * sizeof *l->tag);
    if (l->time)
        memset(l->time, 0, n * sizeof *l->time);
    if (l->order) {
        uint64_t id = 0;
        for (int i = 0; i < l->ways; i++)
            id |= (uint64_t)i << (4 * i);
        for (uint64_t r = 0; r < rows; r++)
            l->order[r] = id;
    }
}

gcs_cachesim *gcs_cachesim_new(const gcs_cachesim_geom *geom, gcs_err *err)
{
    if (geom->nlevels < 1 || geom->nlevels > GCS_CACHESIM_MAX_LEVELS) {
        gcs_err_set(err, "cache simulator: %d levels (1..%d)", geom->nlevels, GCS_CACHESIM_MAX_LEVELS);
        return NULL;
    }
    if (geom->private_levels < 0 || geom->private_levels > geom->nlevels) {
        gcs_err_set(err, "cache simulator: %d private levels of %d", geom->private_levels,
                    geom->nlevels);
        return NULL;
    }
    gcs_cachesim *s = calloc(1, sizeof *s);
    if (!s) {
        gcs_err_set(err, "cache simulator: out of memory");
        return NULL;
    }
    s->geom = *geom;
    s->nlevels = geom->nlevels;
    s->private_levels = geom->private_levels;
    /* Line sampling needs every level's sets to split evenly (geom comment);
     * where one does not, every line is simulated. */
    int lshift = geom->line_sample_shift > 0 && geom->line_sample_shift < 16 ? geom->line_sample_shift : 0;
    /* ... and no coarser than the last level's own set sampling (at least 1
     * line in 2): the stream rule below then counts a page the way the
     * exact simulation does (stream_covers) */
    int last_sample = geom->private_levels < geom->nlevels ? geom->sample_shift : 0;
    if (lshift > (last_sample > 1 ? last_sample : 1))
        lshift = last_sample > 1 ? last_sample : 1;
    for (int k = 0; k < geom->nlevels && lshift; k++) {
        const gcs_cachesim_level_geom *g = &geom->level[k];
        uint64_t lines = g->line_bytes > 0 ? g->size_bytes / (uint64_t)g->line_bytes : 0;
        uint64_t ways = g->ways > 0 ? (uint64_t)g->ways
                                    : (lines <= GCS_CACHESIM_MAX_WAYS ? lines : GCS_CACHESIM_UNKNOWN_WAYS);
        if (ways > GCS_CACHESIM_MAX_WAYS)
            ways = GCS_CACHESIM_MAX_WAYS;
        if (ways > lines)
            ways = lines;
        if (!ways || (lines / ways) % (1ull << lshift) || g->line_bytes != geom->level[0].line_bytes)
            lshift = 0;
    }
    s->geom.line_sample_shift = lshift;
    s->line_mask = lshift ? (1ull << lshift) - 1 : 0;
    for (int k = 0; k < geom->nlevels; k++) {
        const gcs_cachesim_level_geom *g = &geom->level[k];
        gcs_cachesim_lv *l = &s->lv[k];
        int shift = g->line_bytes > 0 ? log2_exact((uint64_t)g->line_bytes) : -1;
        if (shift < 0) {
            gcs_err_set(err, "cache simulator: level %d line size %d is not a power of two", g->level,
                        g->line_bytes);
            goto fail;
        }
        uint64_t lines = g->size_bytes >> shift;
        if (lines == 0) {
            gcs_err_set(err, "cache simulator: level %d is smaller than one line", g->level);
            goto fail;
        }
        uint64_t ways = g->ways > 0 ? (uint64_t)g->ways
                                    : (lines <= GCS_CACHESIM_MAX_WAYS ? lines : GCS_CACHESIM_UNKNOWN_WAYS);
        if (ways > GCS_CACHESIM_MAX_WAYS)
            ways = GCS_CACHESIM_MAX_WAYS;
        if (ways > lines)
            ways = lines;
        l->ways = (int)ways;
        l->stride = (int)((ways + 15) & ~15ull); /* whole 64-byte rows of tags */
        l->nsets = lines / ways;
        l->set_bits = log2_exact(l->nsets);
        l->pow2 = l->set_bits >= 0;
        l->set_mask = l->pow2 ? l->nsets - 1 : 0;
        l->line_shift = shift;
        l->is_private = k < geom->private_levels;
        uint64_t rows = l->nsets;
        if (k == geom->nlevels - 1 && !l->is_private && geom->sample_shift > 0 &&
            geom->sample_shift < 32 && (l->nsets >> geom->sample_shift) >= 1) {
            l->sample_shift = geom->sample_shift;
            l->sample_mask = (1ull << geom->sample_shift) - 1;
            rows = (l->nsets + l->sample_mask) >> l->sample_shift;
        }
        if (lshift > l->sample_shift) {
            /* line sampling: only the sampled lines' sets are kept (the
             * sampled lines fill them whole, see above) */
            l->sample_shift = lshift;
            l->sample_mask = (1ull << lshift) - 1;
            rows = (l->nsets + l->sample_mask) >> l->sample_shift;
        }
        size_t n = (size_t)(rows * (uint64_t)l->stride);
        l->tag = aligned_alloc(64, n * sizeof *l->tag);
        if (k == 0 || l->is_private)
            l->time = malloc(n * sizeof *l->time);
        if (ways <= 16) {
            l->order = malloc((size_t)rows * sizeof *l->order);
            l->order_mask = ways == 16 ? ~0ull : (1ull << (4 * ways)) - 1;
        }
        if (!l->tag || ((k == 0 || l->is_private) && !l->time) || (ways <= 16 && !l->order)) {
            gcs_err_set(err, "cache simulator: out of memory for level %d (%llu lines)", g->level,
                        (unsigned long long)lines);
            goto fail;
        }
        /* a row holds every way and is whole host lines; a power-of-two
         * level is indexed by mask, which must cover exactly its sets */
        gcs_assert_internal(l->ways >= 1 && l->ways <= GCS_CACHESIM_MAX_WAYS && l->ways <= l->stride &&
                            l->stride % 16 == 0 && l->nsets >= 1 && rows >= 1 && rows <= l->nsets);
        gcs_assert_internal(!l->pow2 || ((uint64_t)1 << l->set_bits) == l->nsets);
        level_clear(l, rows);
    }
    s->mru_time = &s->dummy_time;
    s->pair = s->lv[0].order != NULL && s->lv[0].ways >= 2 && s->lv[0].time != NULL;
    return s;
fail:
    gcs_cachesim_free(s);
    return NULL;
}

void gcs_cachesim_free(gcs_cachesim *s)
{
    if (!s)
        return;
    for (int k = 0; k < GCS_CACHESIM_MAX_LEVELS; k++) {
        free(s->lv[k].tag);
        free(s->lv[k].order);
        free(s->lv[k].time);
    }
    free(s);
}

void gcs_cachesim_reset(gcs_cachesim *s)
{
    for (int k = 0; k < s->nlevels; k++) {
        gcs_cachesim_lv *l = &s->lv[k];
        uint64_t rows = (l->nsets + l->sample_mask) >> l->sample_shift;
        level_clear(l, rows);
        memset(&l->counts, 0, sizeof l->counts);
        memset(l->unsampled, 0, sizeof l->unsampled);
    }
    s->t = 0;
    s->live_sum = 0;
    memset(s->stream, 0, sizeof s->stream);
    memset(s->stream_key, 0, sizeof s->stream_key);
    s->stream_next = 0;
    memset(s->prefetched_mem, 0, sizeof s->prefetched_mem);
    memset(s->skipped, 0, sizeof s->skipped);
    memset(s->lane, 0, sizeof s->lane);
    memset(s->lane_key, 0, sizeof s->lane_key);
    s->lane_used = 0;
    memset(s->lane_hashed, 0, sizeof s->lane_hashed);
    s->walk = 0;
    memset(s->class_misses, 0, sizeof s->class_misses);
    memset(s->dependent_unstreamed, 0, sizeof s->dependent_unstreamed);
    memset(s->class_sampled, 0, sizeof s->class_sampled);
    memset(s->class_memory, 0, sizeof s->class_memory);
    s->mru_line = 0;
    s->mru_time = &s->dummy_time;
    s->mru2_line = 0;
}

uint64_t gcs_cachesim_addr_limit(const gcs_cachesim *s)
{
    uint64_t limit = UINT64_MAX;
    for (int k = 0; k < s->nlevels; k++) {
        const gcs_cachesim_lv *l = &s->lv[k];
        /* tag = line / nsets + 1 must stay below 2^32 (and not wrap to 0,
         * the empty way): lines below (2^32 - 1) * nsets */
        uint64_t lines = UINT32_MAX * l->nsets;
        uint64_t bytes = lines > (UINT64_MAX >> l->line_shift) ? UINT64_MAX : lines << l->line_shift;
        if (bytes < limit)
            limit = bytes;
    }
    return limit;
}

/* ---- access ------------------------------------------------------------------ */

/* Set index (within the simulated rows) and tag of a line at level l;
 * UINT64_MAX for a set the sample leaves out. */
static inline uint64_t locate(const gcs_cachesim_lv *l, uint64_t line, uint32_t *tag)
{
    uint64_t set, q;
    if (l->pow2) {
        set = line & l->set_mask;
        q = line >> l->set_bits;
    } else {
        q = line / l->nsets;
        set = line - q * l->nsets;
    }
    gcs_assert_internal(set < l->nsets); /* one compare: cheap enough for the sanitizer builds */
    *tag = (uint32_t)q + 1;
    if (l->sample_mask) {
        if (set & l->sample_mask)
            return UINT64_MAX; /* a set the sample leaves out */
        set >>= l->sample_shift;
    }
    return set;
}

static inline uint64_t line_of(const gcs_cachesim_lv *l, uint64_t set, uint32_t tag)
{
    if (l->sample_mask)
        set <<= l->sample_shift;
    return (uint64_t)(tag - 1) * l->nsets + set;
}

/* The way holding tag in a row of `stride` tags (-1: none).  Ways past
 * l->ways are always 0 and a tag never is, so the whole row can be compared
 * at once: with SSE2, 16 tags (one host line) in four compares and one
 * branch instead of a loop with a branch per way. */
#ifdef __SSE2__
/* Which of the 16 words at p (16-byte aligned: a tag row, the stream or
 * lane keys) equal key: bit i for p[i].  The -1/0 lanes of the four
 * compares pack (saturating) to one byte per word, in order. */
static inline unsigned match16(const uint32_t *p, __m128i key)
{
    const __m128i *v = (const __m128i *)p;
    __m128i e0 = _mm_cmpeq_epi32(_mm_load_si128(v), key);
    __m128i e1 = _mm_cmpeq_epi32(_mm_load_si128(v + 1), key);
    __m128i e2 = _mm_cmpeq_epi32(_mm_load_si128(v + 2), key);
    __m128i e3 = _mm_cmpeq_epi32(_mm_load_si128(v + 3), key);
    return (unsigned)_mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(e0, e1), _mm_packs_epi32(e2, e3)));
}
#endif

static inline int find_way(const uint32_t *tg, int stride, uint32_t tag)
{
#ifdef __SSE2__
    __m128i key = _mm_set1_epi32((int)tag);
    for (int j = 0; j < stride; j += 16) {
        unsigned m = match16(tg + j, key);
        if (m)
            return j + __builtin_ctz(m);
    }
    return -1;
#else
    for (int i = 0; i < stride; i++)
        if (tg[i] == tag)
            return i;
    return -1;
#endif
}

/* Position of way i in a recency list (0: most recent): the lowest zero
 * nibble of list ^ (i in every nibble).  The usual zero-byte test can flag a
 * nibble above a true zero (a borrow), never below it, and i is in the list
 * once, within the first `ways` nibbles. */
static inline int nib_pos(uint64_t order, unsigned i)
{
    uint64_t y = order ^ (NIB_ONES * i);
    return __builtin_ctzll((y - NIB_ONES) & ~y & (NIB_ONES << 3)) >> 2;
}

/* The list with the way at position p moved to the front. */
static inline uint64_t nib_front(const gcs_cachesim_lv *l, uint64_t order, int p)
{
    uint64_t below = order & ((1ull << (4 * p)) - 1); /* positions < p; p <= 15 */
    uint64_t way = (order >> (4 * p)) & 15;
    uint64_t above = p == 15 ? 0 : order & (~0ull << (4 * (p + 1)));
    return (above | below << 4 | way) & l->order_mask;
}

/* The level-0 line of this access becomes the MRU line, the previous one
 * the second (see cachesim.h; a line just accessed is not the victim of the
 * next fill when a set has 2 ways or more). */
static inline void set_mru(gcs_cachesim *s, uint64_t line1, uint64_t *tm, uint64_t *order, int way)
{
    if (s->pair) {
        s->mru2_line = s->mru_line;
        s->mru2_time = s->mru_time;
        s->mru2_order = s->mru_order;
        s->mru2_way = s->mru_way;
    }
    s->mru_line = line1;
    s->mru_time = tm;
    s->mru_order = order;
    s->mru_way = way;
}

/* A level of more than 16 ways: way i to the front of its row. */
static void row_front(uint32_t *tg, uint64_t *tm, int i, uint32_t tag, uint64_t t)
{
    memmove(tg + 1, tg, (size_t)i * sizeof *tg);
    tg[0] = tag;
    if (tm) {
        memmove(tm + 1, tm, (size_t)i * sizeof *tm);
        tm[0] = t;
    }
}

/* A line with last access `when` left private level k-1: hand the time to
 * the next private level that holds it (without touching its LRU order). */
static void hand_down(gcs_cachesim *s, int k, uint64_t addr, uint64_t when)
{
    for (; k < s->private_levels; k++) {
        gcs_cachesim_lv *l = &s->lv[k];
        uint32_t tag;
        uint64_t row = locate(l, addr >> l->line_shift, &tag) * (uint64_t)l->stride;
        int i = find_way(l->tag + row, l->stride, tag);
        if (i >= 0) {
            if (l->time[row + (uint64_t)i] < when)
                l->time[row + (uint64_t)i] = when;
            return;
        }
    }
}

/* Does a stream cover this line, which just missed the private levels?
 * Like an L2 streamer, we track the last GCS_CACHESIM_STREAMS 4 KiB pages
 * that missed; once a page has missed twice (its direction is known), a miss
 * within STREAM_REACH lines of the page's last miss is one the prefetcher has
 * already fetched.  The first two misses of every page are exposed, as are
 * misses in pages the table has forgotten. */
#define STREAM_REACH 16
/* Line sampling (geom.line_sample_shift = k): a page shows only its lines
 * 2^k apart, so a run is taken as such from its second sampled miss (one
 * miss before it, not two).  That keeps what the exact simulation counts,
 * which sees the misses of the last level's sampled sets (lines 2^s apart,
 * s = geom.sample_shift; k <= s, or k = 1 where s = 0, gcs_cachesim_new):
 * on a page read front to back both count the page's first miss there as
 * exposed and the rest as covered (where s = 0, its first two lines, which
 * the sample's first line at k = 1 stands for). */
static int stream_covers(gcs_cachesim *s, uint64_t line, int line_shift)
{
    unsigned need = s->line_mask ? 1 : 2; /* misses before a run is known */
    int page_shift = 12 - line_shift > 0 ? 12 - line_shift : 0;
    uint64_t page = (line >> page_shift) + 1;
    /* candidates by the low half of the page, then the whole page checked
     * (a loop over the 16 entries was a fifth of a random miss's time) */
    unsigned cand = 0;
#if defined(__SSE2__) && GCS_CACHESIM_STREAMS == 16
    cand = match16(s->stream_key, _mm_set1_epi32((int)(uint32_t)page));
#else
    for (int i = 0; i < GCS_CACHESIM_STREAMS; i++)
        cand |= (unsigned)(s->stream_key[i] == (uint32_t)page) << i;
#endif
    for (; cand; cand &= cand - 1) {
        gcs_cachesim_stream *st = &s->stream[__builtin_ctz(cand)];
        if (st->page != page)
            continue;
        uint64_t d = line > st->last ? line - st->last : st->last - line;
        int covered = st->misses >= need && d <= STREAM_REACH;
        st->last = line;
        st->misses++;
        return covered;
    }
    s->stream[s->stream_next] = (gcs_cachesim_stream){page, line, 1};
    s->stream_key[s->stream_next] = (uint32_t)page;
    s->stream_next = (s->stream_next + 1) % GCS_CACHESIM_STREAMS;
    return 0;
}

/* Model v2's streamer (cachesim.h): the class of a line that just missed
 * the private levels.  A page's first miss takes a lane (the least recently
 * used, by one bit per lane set on use and all cleared but the newest when
 * they fill up: a pseudo-LRU order); its second fixes the direction; a third
 * within LANE_REACH lines in that direction is streamed, and sequential when
 * it is the next line (and the access walked: access_levels).  A jump
 * further, or back, learns the direction anew:
 * what an L2 streamer does per page, for as many pages as the marker
 * interleaves runs (a preorder tree's lanes, a list and its mark table).
 * The old 16-page streamer above (any direction, round-robin replacement)
 * stays for the base model, whose figures rest on it. */
#define LANE_REACH 16

static inline uint64_t lane_match(const uint32_t *keys, uint32_t key)
{
    uint64_t m = 0;
#ifdef __SSE2__
    __m128i k = _mm_set1_epi32((int)key);
    for (int j = 0; j < GCS_CACHESIM_LANES; j += 16)
        m |= (uint64_t)match16(keys + j, k) << j;
#else
    for (int i = 0; i < GCS_CACHESIM_LANES; i++)
        m |= (uint64_t)(keys[i] == key) << i;
#endif
    return m;
}

static inline void lane_touch(gcs_cachesim *s, int i)
{
    uint64_t all = GCS_CACHESIM_LANES == 64 ? ~0ull : (1ull << GCS_CACHESIM_LANES) - 1;
    s->lane_used |= 1ull << i;
    if (s->lane_used == all)
        s->lane_used = 1ull << i;
}

/* A page's bucket in lane_hashed (Fibonacci hashing: neighbouring pages
 * fall in different buckets). */
static inline unsigned lane_hash(uint64_t page)
{
    return (unsigned)((page * 0x9E3779B97F4A7C15ull) >> 56);
}

static int lane_class(gcs_cachesim *s, uint64_t line, int line_shift)
{
    int page_shift = 12 - line_shift > 0 ? 12 - line_shift : 0;
    uint64_t page = (line >> page_shift) + 1;
    unsigned hb = lane_hash(page);
    for (uint64_t cand = s->lane_hashed[hb] ? lane_match(s->lane_key, (uint32_t)page) : 0; cand;
         cand &= cand - 1) {
        int i = __builtin_ctzll(cand);
        gcs_cachesim_lane *ln = &s->lane[i];
        if (ln->page != page)
            continue;
        lane_touch(s, i);
        int cls = GCS_CACHESIM_NOT_STREAMED;
        if (line != ln->last) {
            int64_t d = line > ln->last ? (int64_t)(line - ln->last) : -(int64_t)(ln->last - line);
            int dir = d > 0 ? 1 : -1;
            if (d <= LANE_REACH && d >= -LANE_REACH) {
                if (ln->dir == dir)
                    cls = d == 1 || d == -1 ? GCS_CACHESIM_SEQUENTIAL : GCS_CACHESIM_STREAMED;
                ln->dir = dir;
            } else {
                ln->dir = 0;
            }
            ln->last = line;
        }
        return cls;
    }
    /* lane_touch keeps a bit clear whenever fewer than all are set, and
     * resets to one bit when all are */
    int v = __builtin_ctzll(~s->lane_used);
    gcs_assert_internal(v < GCS_CACHESIM_LANES);
    if (s->lane[v].page) {
        gcs_assert_internal(s->lane_hashed[lane_hash(s->lane[v].page)] > 0);
        s->lane_hashed[lane_hash(s->lane[v].page)]--;
    }
    s->lane_hashed[hb]++; /* at most GCS_CACHESIM_LANES: no overflow */
    s->lane[v] = (gcs_cachesim_lane){page, line, 0};
    s->lane_key[v] = (uint32_t)page;
    lane_touch(s, v);
    return GCS_CACHESIM_NOT_STREAMED;
}

/* Whether the last level simulates the set of this address (it may sample). */
static inline int last_level_sampled(const gcs_cachesim *s, uint64_t addr)
{
    const gcs_cachesim_lv *l = &s->lv[s->nlevels - 1];
    if (!l->sample_mask)
        return 1;
    uint64_t line = addr >> l->line_shift;
    uint64_t set = l->pow2 ? line & l->set_mask : line % l->nsets;
    return (set & l->sample_mask) == 0;
}

/* The levels of one access; the first level's victim, when its time must be
 * handed down, is left in *down_addr / *down_when (see below). */
static inline int access_levels(gcs_cachesim *s, uint64_t addr, gcs_access cls, uint64_t t,
                                uint64_t *down_addr, uint64_t *down_when)
{
    int covered = 0, lane = GCS_CACHESIM_NOT_STREAMED;
    for (int k = 0; k < s->nlevels; k++) {
        gcs_cachesim_lv *l = &s->lv[k];
        uint32_t tag;
        uint64_t set = locate(l, addr >> l->line_shift, &tag);
        if (__builtin_expect(set == UINT64_MAX, 0)) {
            l->unsampled[cls]++;
            return s->nlevels + 1;
        }
        uint64_t row = set * (uint64_t)l->stride;
        uint32_t *tg = l->tag + row;
        uint64_t *tm = l->time ? l->time + row : NULL;
        int i = find_way(tg, l->stride, tag);
        if (i >= 0) {
            l->counts.hits[cls]++;
            if (l->is_private)
                s->live_sum += t - tm[i];
            if (__builtin_expect(l->order != NULL, 1)) {
                uint64_t o = l->order[set];
                if ((o & 15) != (uint64_t)i) /* not already the most recent */
                    l->order[set] = nib_front(l, o, nib_pos(o, (unsigned)i));
                if (tm)
                    tm[i] = t;
            } else {
                row_front(tg, tm, i, tag, t);
                i = 0;
            }
            if (k == 0)
                set_mru(s, (addr >> l->line_shift) + 1, tm + i, l->order ? l->order + set : NULL, i);
            return k;
        }
        l->counts.misses[cls]++;
        if (s->geom.stream_prefetch) {
            int last_private = s->private_levels > 0 ? s->private_levels - 1 : 0;
            if (k == last_private) {
                covered = stream_covers(s, addr >> l->line_shift, l->line_shift);
                lane = lane_class(s, addr >> l->line_shift, l->line_shift);
                /* a sequential line the caller did not walk itself was
                 * prefetched by it (an array's children): streamed */
                if (lane == GCS_CACHESIM_SEQUENTIAL && !s->walk)
                    lane = GCS_CACHESIM_STREAMED;
                s->class_misses[cls][lane]++;
                s->dependent_unstreamed[cls] += (uint64_t)(s->walk == 2 && lane == GCS_CACHESIM_NOT_STREAMED);
                s->class_sampled[cls][lane] += (uint64_t)last_level_sampled(s, addr);
            }
            if (k == s->nlevels - 1) {
                s->prefetched_mem[cls] += (uint64_t)covered;
                s->class_memory[cls][lane]++;
            }
        }
        int v;
        uint64_t o = 0;
        if (__builtin_expect(l->order != NULL, 1)) {
            o = l->order[set];
            v = (int)((o >> (4 * (l->ways - 1))) & 15); /* the least recent */
        } else {
            v = l->ways - 1;
        }
        uint32_t victim = tg[v];
        if (victim != 0 && l->is_private && k + 1 < s->private_levels) {
            uint64_t va = line_of(l, set, victim) << l->line_shift;
            if (k == 0) {
                *down_addr = va;
                *down_when = tm[v];
                const gcs_cachesim_lv *l1 = &s->lv[1]; /* private: never sampled */
                uint32_t t1;
                uint64_t r1 = locate(l1, va >> l1->line_shift, &t1) * (uint64_t)l1->stride;
                __builtin_prefetch(l1->tag + r1);
                __builtin_prefetch(l1->time + r1);
                __builtin_prefetch(l1->time + r1 + 8);
            } else {
                hand_down(s, k + 1, va, tm[v]);
            }
        }
        if (__builtin_expect(l->order != NULL, 1)) {
            l->order[set] = (o << 4 | (uint64_t)v) & l->order_mask; /* the last to the front */
            tg[v] = tag;
            if (tm)
                tm[v] = t;
        } else {
            row_front(tg, tm, v, tag, t);
            v = 0;
        }
        if (k == 0)
            set_mru(s, (addr >> l->line_shift) + 1, tm + v, l->order ? l->order + set : NULL, v);
    }
    return s->nlevels;
}

/* The first level's victim is handed down after the rest of the access, so
 * that the host fetches its rows (a random set of the next level, usually a
 * host cache miss) while the deeper levels are looked up.  The result is the
 * same as handing it down at once: the time only raises a line's time with
 * max(), which nothing in between reads (the current line is not the
 * victim), and a victim that the deeper levels evict meanwhile is found one
 * level further down by hand_down, which its time went to. */
int gcs_cachesim_access_slow(gcs_cachesim *s, uint64_t addr, gcs_access cls)
{
    uint64_t t = ++s->t, down_addr = UINT64_MAX, down_when = 0;
    int r = access_levels(s, addr, cls, t, &down_addr, &down_when);
    if (down_addr != UINT64_MAX)
        hand_down(s, 1, down_addr, down_when);
    return r;
}

void gcs_cachesim_result_get(const gcs_cachesim *s, gcs_cachesim_result *out)
{
    memset(out, 0, sizeof *out);
    out->nlevels = s->nlevels;
    out->private_levels = s->private_levels;
    for (int k = 0; k < s->nlevels; k++)
        out->level[k] = s->lv[k].counts;
    const gcs_cachesim_lv *last = &s->lv[s->nlevels - 1];
    uint64_t sampled = 0, unsampled = 0;
    for (int c = 0; c < GCS_ACCESS_COUNT; c++) {
        sampled += last->counts.hits[c] + last->counts.misses[c];
        unsampled += last->unsampled[c];
    }
    out->sampled_share = sampled + unsampled ? (double)sampled / (double)(sampled + unsampled) : 1.0;
    /* line sampling: each class's counts scaled by its own sampling rate */
    double lscale[GCS_ACCESS_COUNT];
    uint64_t simulated = 0, skipped = 0;
    for (int c = 0; c < GCS_ACCESS_COUNT; c++) {
        uint64_t sim = s->lv[0].counts.hits[c] + s->lv[0].counts.misses[c];
        lscale[c] = sim ? (double)(sim + s->skipped[c]) / (double)sim : 1.0;
        simulated += sim;
        skipped += s->skipped[c];
    }
    out->line_share = simulated + skipped ? (double)simulated / (double)(simulated + skipped) : 1.0;
    if (skipped)
        for (int k = 0; k < s->nlevels; k++)
            for (int c = 0; c < GCS_ACCESS_COUNT; c++) {
                out->level[k].hits[c] = (uint64_t)llround((double)out->level[k].hits[c] * lscale[c]);
                out->level[k].misses[c] = (uint64_t)llround((double)out->level[k].misses[c] * lscale[c]);
            }
    for (int c = 0; c < GCS_ACCESS_COUNT; c++) {
        out->accesses[c] = s->lv[0].counts.hits[c] + s->lv[0].counts.misses[c] + s->skipped[c];
        /* per class: that class's sampled misses scaled by its own sampling rate */
        uint64_t reach = last->counts.hits[c] + last->counts.misses[c];
        double scale = (reach ? (double)(reach + last->unsampled[c]) / (double)reach : 1.0) * lscale[c];
        out->memory[c] = (uint64_t)llround((double)last->counts.misses[c] * scale);
        out->memory_prefetched[c] = (uint64_t)llround((double)s->prefetched_mem[c] * scale);
        /* model v2's streamer: each class's private-level misses times the
         * share of its sampled ones that went to memory (cachesim.h); a
         * class the sample never saw takes the class's overall share */
        uint64_t smp_all = 0, mem_all = 0;
        for (int k = 0; k < GCS_CACHESIM_STREAM_CLASSES; k++) {
            smp_all += s->class_sampled[c][k];
            mem_all += s->class_memory[c][k];
        }
        double est[GCS_CACHESIM_STREAM_CLASSES] = {0};
        for (int k = GCS_CACHESIM_SEQUENTIAL; k < GCS_CACHESIM_STREAM_CLASSES; k++) {
            double rate = s->class_sampled[c][k] ? (double)s->class_memory[c][k] / (double)s->class_sampled[c][k]
                          : smp_all           ? (double)mem_all / (double)smp_all
                                              : 0;
            est[k] = (double)s->class_misses[c][k] * rate * lscale[c]; /* lscale: line sampling */
        }
        double streamed = est[GCS_CACHESIM_SEQUENTIAL] + est[GCS_CACHESIM_STREAMED];
        /* the estimate of a part may round above the whole: keep the shares */
        double fit = streamed > (double)out->memory[c] ? (double)out->memory[c] / streamed : 1;
        out->memory_streamed[c] = (uint64_t)llround(streamed * fit);
        out->memory_sequential[c] = (uint64_t)llround(est[GCS_CACHESIM_SEQUENTIAL] * fit);
        if (out->memory_sequential[c] > out->memory_streamed[c])
            out->memory_sequential[c] = out->memory_streamed[c];
        if (out->memory_streamed[c] > out->memory[c])
            out->memory_streamed[c] = out->memory[c];
    }
    /* L: the sample's live time over its own accesses (all of them when exact) */
    out->live_lines_avg = s->t > skipped ? (double)s->live_sum / (double)(s->t - skipped) : 0.0;
#if GCS_ASSERT_ON
    /* Every access reaches level 0 and ticks the clock once; a level's
     * misses are exactly the next level's accesses (the last level's
     * include the sets its sample leaves out); a stream covers only misses
     * that went to memory. */
    uint64_t ticks = 0;
    for (int c = 0; c < GCS_ACCESS_COUNT; c++) {
        ticks += out->accesses[c] + s->lv[0].unsampled[c];
        /* (the level counts checked below are the raw, unscaled ones) */
        for (int k = 0; k + 1 < s->nlevels; k++) {
            const gcs_cachesim_lv *l = &s->lv[k], *next = &s->lv[k + 1];
            gcs_assert_internal(l->counts.misses[c] ==
                                next->counts.hits[c] + next->counts.misses[c] + next->unsampled[c]);
        }
        gcs_assert_internal(s->prefetched_mem[c] <= last->counts.misses[c]);
        /* the streamer's classes: memory requests among the sampled misses
         * of the private levels, those among all of them */
        for (int k = 0; k < GCS_CACHESIM_STREAM_CLASSES; k++)
            gcs_assert_internal(s->class_memory[c][k] <= s->class_sampled[c][k] &&
                                s->class_sampled[c][k] <= s->class_misses[c][k]);
        gcs_assert_internal(out->memory_sequential[c] <= out->memory_streamed[c] &&
                            out->memory_streamed[c] <= out->memory[c]);
    }
    gcs_assert_internal(ticks == s->t);
#endif
}
