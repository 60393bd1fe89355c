/* cachesim.h -- a set-associative LRU multi-level cache simulator (prefix
 * gcs_cachesim_), the slow predictor's source of Q1 and L.
 *
 * The hierarchy is the data/unified caches one CPU sees (L1d, L2, L3, ...),
 * taken from a machine profile or given by hand.  Levels are non-inclusive:
 * every access looks up level 0; an access that misses level k looks up level
 * k+1, and a level fills the line on its own miss (so level k+1 is simulated
 * on exactly the accesses that missed level k).  An access that misses the
 * last level is a memory request: those are Q1.  Replacement is exact LRU
 * within a set (the victim is the way whose last access reaching this level
 * is oldest).  Sets are indexed by line number modulo the number of sets (a
 * mask when that is a power of two).  Counts are split by request class
 * (GCS_ACCESS_READ / GCS_ACCESS_RW of profile.h); a class only labels the
 * request -- an RW access hits and misses like a read.
 *
 * L ("average number of live cache lines", docs/model.md "Q1 and L"): the
 * leading levels whose instance no other core shares are "private" (a thief
 * on another core has none of their lines).  At access time t a line is live
 * when it is resident in a private level and its next access hits a private
 * level.  L is the time average of that count over the N accesses:
 *
 *     L = (1/N) * sum over accesses that hit a private level of (t - t_prev)
 *
 * with t_prev the time of the previous access to the same line (exact: a line
 * that hits a private level has been resident in one since its previous
 * access, because lines enter the caches only by being accessed).  It is
 * computed on the fly from the last-access time kept with each resident line.
 *
 * The access function is inline: an access to the same line as the previous
 * access (the common case when scanning an object), or to the line accessed
 * before that (the mark alternates between the mark table and the objects),
 * is counted without a set lookup.  No allocation after gcs_cachesim_new.
 * Not thread safe.
 */
#ifndef GCSCALE_CACHESIM_H
#define GCSCALE_CACHESIM_H

#include <stdint.h>

#include "gcscale/common.h"
#include "gcscale/profile.h"

#define GCS_CACHESIM_MAX_LEVELS 8
#define GCS_CACHESIM_MAX_WAYS 64      /* larger associativities are simulated as 64-way */
#define GCS_CACHESIM_UNKNOWN_WAYS 16  /* ways 0 (unknown) on a cache of more than 64 lines */

/* One level of the hierarchy. */
typedef struct gcs_cachesim_level_geom {
    int level;              /* 1, 2, 3, ... (informational) */
    uint64_t size_bytes;
    int line_bytes;         /* power of two */
    int ways;               /* 0: fully associative up to 64 lines, else 16-way */
    int ncpus;              /* CPUs sharing this instance (informational) */
} gcs_cachesim_level_geom;

typedef struct gcs_cachesim_geom {
    int nlevels;
    /* Leading levels a thief does not share (L counts their lines); 0..nlevels. */
    int private_levels;
    /* Set sampling of the last level when it is shared (not private): only
     * the sets whose index is a multiple of 2^sample_shift are simulated, and
     * the memory requests are estimated as that sample's misses times
     * (accesses reaching the level / accesses reaching sampled sets).  The
     * miss ratio of an LRU cache is estimated well from a sample of its sets
     * (each set is an independent LRU stack) unless the program strides by a
     * multiple of 2^sample_shift lines.  It keeps the tags of a 100 MiB L3
     * in the host's caches.  0: exact. */
    int sample_shift;
    /* Model a hardware stream prefetcher: a line that misses the private
     * levels is "prefetched" when its 4 KiB page is one of the last
     * GCS_CACHESIM_STREAMS pages that missed, has missed at least twice, and
     * last missed within 16 lines of it (what an L2 streamer follows); if it
     * then misses the last level too, it still counts as a memory request
     * (memory[]) and also in memory_prefetched[].  Beside it runs model v2's
     * streamer (docs/model.md, "Serial work", 2026-11-27): the last
     * GCS_CACHESIM_LANES pages that missed, the least recently used one
     * replaced; a miss within 16 lines of its page's last miss, in the
     * direction of the page's two misses before it, is streamed, and
     * sequential when it is the very next (or previous) line and the access
     * is one the caller walks itself in address order
     * (gcs_cachesim_access_walk: a chain's next object, a large array's
     * elements), not one it prefetched ahead.  Its memory requests are
     * memory_streamed[] and memory_sequential[].  0: both off. */
    int stream_prefetch;
    /* Line sampling of the whole hierarchy (0: off, every line simulated):
     * only lines whose number is a multiple of 2^line_sample_shift are
     * simulated, at every level; the others are counted and skipped.  Sets
     * are indexed by a line's low bits, so when every level's set count is
     * a multiple of 2^line_sample_shift the sampled lines fill whole sets,
     * each an exact LRU stack, and the results are the sample's counts
     * scaled by (accesses / accesses simulated), per request class; L from
     * the sample's live time over its accesses.  The stream prefetcher sees
     * a sampled page's lines 2^line_sample_shift apart, so a run is taken as
     * such from its second sampled miss (docs/model.md, "The sampled
     * simulation").  gcs_cachesim_new turns it off where a level's set
     * count does not allow it, and keeps it no coarser than the last level's
     * own set sampling (sample_shift; 1 where that is 0), whose misses are
     * what the exact simulation counts (see gcs_cachesim_line_sample). */
    int line_sample_shift;
    gcs_cachesim_level_geom level[GCS_CACHESIM_MAX_LEVELS];
} gcs_cachesim_geom;

#define GCS_CACHESIM_STREAMS 16
/* Pages model v2's streamer follows at once: two per entry of the marker's
 * prefetch FIFO (an object's header and its mark byte; GCS_GC_MARK_FIFO is
 * 32), since the marker interleaves that many sequential runs (a tree laid
 * out in preorder walks one run per FIFO entry). */
#define GCS_CACHESIM_LANES 64

/* Model v2's classes of a miss of the private levels (stream_prefetch). */
typedef enum gcs_cachesim_stream_class {
    GCS_CACHESIM_NOT_STREAMED = 0,
    GCS_CACHESIM_SEQUENTIAL = 1,   /* a walked access (gcs_cachesim_access_walk) to the line next to
                                      (or before) its page's last miss */
    GCS_CACHESIM_STREAMED = 2,     /* streamed otherwise: a stride of 2..16 lines, or not walked */
    GCS_CACHESIM_STREAM_CLASSES = 3,
} gcs_cachesim_stream_class;

/* The data/unified caches of the profile that contain `cpu` (-1: the first
 * CPU of the profile's first node, or 0), one per level, sorted by level.
 * Where no instance of a level lists the CPU, the level's first instance is
 * used.  private_levels = the leading levels shared by no more CPUs than the
 * first level.  -1 with "profile has no cache geometry" when the profile
 * lists no data/unified cache, or with a message naming a bad entry. */
GCS_API int gcs_cachesim_geom_from_profile(const gcs_profile *prof, int cpu, gcs_cachesim_geom *geom,
                                   gcs_err *err);

/* Hit/miss counts of one level, by request class. */
typedef struct gcs_cachesim_counts {
    uint64_t hits[GCS_ACCESS_COUNT];
    uint64_t misses[GCS_ACCESS_COUNT];
} gcs_cachesim_counts;

/* The simulator's state.  Public only so that the access function can be
 * inline; read results with gcs_cachesim_result_get.  Each set is a row of
 * `stride` 32-bit tags (one 64-byte host line for up to 16 ways); tags are
 * line / nsets + 1 (0 = empty), so lines are told apart exactly below 2^32 *
 * nsets lines (2^44 bytes with 64 sets of 64-byte lines).  A level of up to
 * 16 ways never moves a line within its row: the set's recency order is a
 * list of way numbers, 4 bits each, in one 64-bit word (order[], most
 * recent first).  A level of more ways keeps its row itself in recency
 * order (order == NULL). */
typedef struct gcs_cachesim_lv {
    uint32_t *tag;          /* [sets simulated * stride] */
    uint64_t *order;        /* [sets simulated]: recency list of ways (ways <= 16), else NULL */
    uint64_t order_mask;    /* the list's 4 * ways bits */
    uint64_t *time;         /* [sets simulated * stride]: the line's last access (private levels), else NULL */
    uint64_t nsets;
    uint64_t set_mask;      /* nsets - 1 when nsets is a power of two */
    int pow2, set_bits;
    int ways, stride;
    int line_shift;
    int is_private;
    uint64_t sample_mask;   /* set & sample_mask != 0: not simulated (0: every set) */
    int sample_shift;
    gcs_cachesim_counts counts;
    uint64_t unsampled[GCS_ACCESS_COUNT]; /* accesses that fell in sets not simulated */
} gcs_cachesim_lv;

typedef struct gcs_cachesim_stream {
    uint64_t page;          /* 4 KiB page + 1 (0: unused) */
    uint64_t last;          /* its last missing line */
    uint64_t misses;        /* misses seen in it */
} gcs_cachesim_stream;

typedef struct gcs_cachesim_lane {
    uint64_t page;          /* 4 KiB page + 1 (0: unused) */
    uint64_t last;          /* its last missing line */
    int dir;                /* +1 / -1: the direction of its last two misses; 0: not known */
} gcs_cachesim_lane;

typedef struct gcs_cachesim {
    int nlevels;
    int private_levels;
    gcs_cachesim_lv lv[GCS_CACHESIM_MAX_LEVELS];
    uint64_t t;             /* accesses so far; the current access has time t */
    uint64_t live_sum;      /* sum of (t - t_prev) over private hits */
    gcs_cachesim_stream stream[GCS_CACHESIM_STREAMS]; /* pages with recent misses */
    _Alignas(16) uint32_t stream_key[GCS_CACHESIM_STREAMS]; /* their pages' low 32 bits, searched at once */
    unsigned stream_next;   /* round-robin slot for a new stream */
    uint64_t prefetched_mem[GCS_ACCESS_COUNT]; /* memory requests a stream covered (sampled) */
    uint64_t line_mask;     /* line sampling: line & line_mask != 0 is not simulated (0: every line) */
    uint64_t skipped[GCS_ACCESS_COUNT]; /* accesses line sampling left out */
    uint64_t mru_line;      /* level-0 line of the previous access + 1 (0: none) */
    uint64_t *mru_time;     /* its level-0 time slot (a dummy when level 0 is shared) */
    uint64_t dummy_time;
    /* The level-0 line accessed before it (the marker alternates between a
     * mark-table line and an object's line), kept when level 0 has recency
     * lists and at least 2 ways: then it is still resident, first or second
     * in its set's list, and a hit on it needs no set lookup. */
    int pair;
    uint64_t *mru_order;    /* the MRU line's set's recency list and its way */
    int mru_way;
    uint64_t mru2_line;     /* as mru_line (0: none) */
    uint64_t *mru2_time;
    uint64_t *mru2_order;
    int mru2_way;
    gcs_cachesim_geom geom;
    /* (after the fields every access reads, which stay on few host lines) */
    /* model v2's streamer (geom.stream_prefetch): its pages, their low 32
     * bits searched at once, and which were used since the bits last filled
     * up (the replacement's pseudo-LRU order) */
    gcs_cachesim_lane lane[GCS_CACHESIM_LANES];
    _Alignas(16) uint32_t lane_key[GCS_CACHESIM_LANES]; /* compared 16 at a time (cachesim.c) */
    uint64_t lane_used;
    int walk;               /* the current access is walked (gcs_cachesim_access_walk) */
    /* how many lanes hold a page of each hash (cachesim.c): a page whose
     * count is 0 is in none, and a random miss skips the search */
    uint8_t lane_hashed[256];
    /* Its classes, counted on every miss of the private levels (exact), on
     * those whose set the last level simulates, and on those of them that
     * went to memory: the last level's sample gives each class its miss
     * rate, the private levels its size.  (Counting the classes on the
     * sampled memory requests alone is biased: the first misses of a page,
     * never streamed, sit at fixed lines of it, which a set sample takes or
     * leaves as a whole.) */
    uint64_t class_misses[GCS_ACCESS_COUNT][GCS_CACHESIM_STREAM_CLASSES];
    /* Of class_misses[c][0] (no stream covers them), those of dependent
     * accesses (gcs_cachesim_access_walk with walk 2): a chain's next object
     * on another page, whose address the marker has only once the load
     * before it returned. */
    uint64_t dependent_unstreamed[GCS_ACCESS_COUNT];
    uint64_t class_sampled[GCS_ACCESS_COUNT][GCS_CACHESIM_STREAM_CLASSES];
    uint64_t class_memory[GCS_ACCESS_COUNT][GCS_CACHESIM_STREAM_CLASSES];
} gcs_cachesim;

/* Allocates the tag arrays (zeroed pages, touched lazily).  NULL with err
 * set on a bad geometry (line not a power of two, size smaller than a line,
 * no level) or when out of memory. */
GCS_API gcs_cachesim *gcs_cachesim_new(const gcs_cachesim_geom *geom, gcs_err *err);
GCS_API void gcs_cachesim_free(gcs_cachesim *s);
/* The lowest byte address from which two lines may share a tag at some
 * level (the tags are 32-bit, see gcs_cachesim_lv): a caller must keep its
 * addresses below it for exact results.  2^38 bytes for a fully associative
 * level of 64-byte lines, 2^44 with 64 sets; UINT64_MAX when no bound is
 * reached in 64 bits. */
GCS_API uint64_t gcs_cachesim_addr_limit(const gcs_cachesim *s);
/* Empties every level and zeroes the counts. */
GCS_API void gcs_cachesim_reset(gcs_cachesim *s);

/* The out-of-line part of an access; use gcs_cachesim_access. */
GCS_API int gcs_cachesim_access_slow(gcs_cachesim *s, uint64_t addr, gcs_access cls);

/* Simulates one access to byte address addr.  Returns the index of the level
 * that hit (0 = first level), nlevels when it went to memory, nlevels + 1
 * when it reached a sampled last level in a set that is not simulated, or
 * nlevels + 2 when line sampling leaves its line out. */
static inline __attribute__((always_inline)) int
gcs_cachesim_access(gcs_cachesim *s, uint64_t addr, gcs_access cls)
{
    uint64_t line1 = (addr >> s->lv[0].line_shift) + 1;
    if (__builtin_expect(line1 == s->mru_line, 1)) {
        *s->mru_time = ++s->t;
        s->lv[0].counts.hits[cls]++;
        s->live_sum += (uint64_t)s->lv[0].is_private; /* t - t_prev = 1 */
        return 0;
    }
    if (line1 == s->mru2_line) {
        /* a level-0 hit on the line before: it moves to the front of its
         * set's list, where only the MRU line can be ahead of it */
        uint64_t t = ++s->t;
        s->lv[0].counts.hits[cls]++;
        if (s->lv[0].is_private)
            s->live_sum += t - *s->mru2_time;
        *s->mru2_time = t;
        uint64_t o = *s->mru2_order;
        if ((o & 15) != (uint64_t)s->mru2_way) /* second: swap the first two */
            *s->mru2_order = (o & ~0xFFull) | (o & 15) << 4 | (o >> 4 & 15);
        uint64_t *tm = s->mru_time, *od = s->mru_order;
        int way = s->mru_way;
        s->mru2_line = s->mru_line;
        s->mru_line = line1;
        s->mru_time = s->mru2_time;
        s->mru2_time = tm;
        s->mru_order = s->mru2_order;
        s->mru2_order = od;
        s->mru_way = s->mru2_way;
        s->mru2_way = way;
        return 0;
    }
    if (((line1 - 1) & s->line_mask) != 0) {
        s->t++;
        s->skipped[cls]++;
        return s->nlevels + 2;
    }
    return gcs_cachesim_access_slow(s, addr, cls);
}

/* The line sampling in effect (geom.line_sample_shift, or 0 where the
 * levels' set counts did not allow it). */
static inline int gcs_cachesim_line_sample(const gcs_cachesim *s) { return s->geom.line_sample_shift; }

/* gcs_cachesim_access for an access the caller makes itself in address
 * order (walk 1: a chain's next object, a large array's elements), which
 * model v2's streamer may call sequential; walk 2 is walk 1 for an access
 * whose address came from the load before it, on another page (counted in
 * dependent_unstreamed when no stream covers it); walk 0 is
 * gcs_cachesim_access. */
static inline int gcs_cachesim_access_walk(gcs_cachesim *s, uint64_t addr, gcs_access cls, int walk)
{
    s->walk = walk;
    int r = gcs_cachesim_access(s, addr, cls);
    s->walk = 0;
    return r;
}

/* A hint that addr will be simulated soon: prefetches the host lines of its
 * tag and time rows at every level past the first (the first level's rows
 * stay in the host's L1).  A caller that knows its stream ahead (the mark
 * replay) calls this some tens of accesses before gcs_cachesim_access, so
 * that the simulator's lookups do not wait for the host's memory.  No
 * effect on the results. */
static inline void gcs_cachesim_prefetch(const gcs_cachesim *s, uint64_t addr)
{
    for (int k = 1; k < s->nlevels; k++) {
        const gcs_cachesim_lv *l = &s->lv[k];
        uint64_t line = addr >> l->line_shift;
        uint64_t set = l->pow2 ? line & l->set_mask : line % l->nsets;
        if (l->sample_mask) {
            if (set & l->sample_mask)
                return;
            set >>= l->sample_shift;
        }
        uint64_t row = set * (uint64_t)l->stride;
        __builtin_prefetch(l->tag + row, 1);
        if (l->order)
            __builtin_prefetch(l->order + set, 1);
        if (l->time) {
            __builtin_prefetch(l->time + row, 1);
            if (l->ways > 8) /* a second host line of times */
                __builtin_prefetch(l->time + row + 8, 1);
        }
    }
}

typedef struct gcs_cachesim_result {
    int nlevels;
    int private_levels;
    gcs_cachesim_counts level[GCS_CACHESIM_MAX_LEVELS];
    uint64_t accesses[GCS_ACCESS_COUNT];
    uint64_t memory[GCS_ACCESS_COUNT];  /* last-level misses: Q1 by class (estimated
                                           from the sample when the level is sampled) */
    double sampled_share;               /* share of the last level's accesses simulated (1: exact) */
    double line_share;                  /* share of all accesses simulated, line sampling (1: exact);
                                           below 1, every count here is the sample's, scaled */
    uint64_t memory_prefetched[GCS_ACCESS_COUNT]; /* of memory[], covered by a stream (0 when
                                           geom.stream_prefetch is off) */
    /* Model v2's streamer (geom.stream_prefetch; else 0): of memory[], the
     * requests it streams, and of those the sequential ones (each class's
     * private-level misses times its last-level miss rate in the sample) */
    uint64_t memory_streamed[GCS_ACCESS_COUNT];
    uint64_t memory_sequential[GCS_ACCESS_COUNT];
    double live_lines_avg;              /* L (0 when there were no accesses) */
} gcs_cachesim_result;

GCS_API void gcs_cachesim_result_get(const gcs_cachesim *s, gcs_cachesim_result *out);

#endif
