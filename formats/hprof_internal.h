/* hprof_internal.h -- formats/ internal: the heap dump importers -- HPROF
 * (hprof.c, its id map hprof_ids.c), V8 (v8snap.c) -- the window they read
 * a dump through (dumpstream.c), the workers of their parallel passes
 * (par.c), and the recognition of heap dumps by content (heapdump.c), which
 * the snapshot reader (snapshot.c) calls so that every reader of snapshots
 * reads dumps.  Not installed. */
#ifndef GCSCALE_HPROF_INTERNAL_H
#define GCSCALE_HPROF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "gcscale/heapdump.h"

/* ---- the window (dumpstream.c) ------------------------------------------------------- */

enum { DS_MEMORY = 0, DS_PLAIN = 1, DS_GZIP = 2 };

/* A place a gzip dump can be inflated from again (zran): the compressed
 * offset in (the first byte inflate had not used up), the bits of the byte
 * before it that belong to what follows, the uncompressed offset out and
 * the (up to) 32 KiB of output before it.  In a dump of bounded members
 * (below) a point is a member's start, which needs no window: member is
 * its index in the index's member table (window NULL, wlen 0). */
typedef struct _gcs_gzpoint {
    uint64_t in, out;
    int bits;
    unsigned wlen;
    uint8_t *window;
    size_t member;
} _gcs_gzpoint;

/* A gzip member: the file offset of its header, the dump offset of its
 * first byte. */
typedef struct _gcs_gzmember {
    uint64_t in, out;
} _gcs_gzmember;

/* The points recorded by a first pass, one per span bytes of output or
 * more (at the next deflate block's end).  used and next_cut are the
 * consumer's (hprof.c): the point its current chunk starts at (SIZE_MAX: the
 * file's start), and the output offset of the point after it (UINT64_MAX
 * while none is recorded), updated as points are added. */
typedef struct _gcs_gzindex {
    _gcs_gzpoint *p;
    size_t n, cap;
    uint64_t span, last_out;
    size_t used;
    uint64_t next_cut;
    /* A dump cut into gzip members of at most block bytes of output each
     * (HotSpot's `GC.heap_dump -gz`, which names the bound in its first
     * member's header: "HPROF BLOCKSIZE=N"), read member by member with
     * libdeflate: block is N (0: zlib streamed the dump), and the first
     * pass lists every member in m[0..nm), the last ending at file offset
     * end_in and dump offset end_out; max_in: the most compressed bytes of
     * one.  The second pass reads its members from the list. */
    uint32_t block;
    _gcs_gzmember *m;
    size_t nm, mcap;
    uint64_t end_in, end_out, max_in;
} _gcs_gzindex;

/* A dump read through a window buf[pos..len) whose first byte is at dump
 * offset base: a buffer in memory (kind DS_MEMORY, buf the whole dump, or
 * one pass-2 chunk of it), or a file (plain or gzip) read into own. */
typedef struct gcs_dumpstream {
    const char *name;
    const uint8_t *buf;      /* window: buf[pos..len) */
    uint8_t *own;            /* file source: the buffer */
    size_t pos, len;
    uint64_t base;           /* dump offset of buf[0] */
    int eof;
    gcs_err *err;
    /* file source */
    int kind;                /* DS_* */
    int fd;
    int raw;                 /* gzip resumed at a point: inside a raw deflate stream */
    uint64_t foff;           /* file offset of the next byte read */
    uint64_t limit;          /* dump offset where the region read ends (UINT64_MAX) */
    z_stream *z;
    uint8_t *zin;            /* compressed input */
    _gcs_gzindex *ix;        /* a first pass of a gzip dump records points here */
    struct ds_pipe *pipe;    /* gzip inflated on a thread of its own (dumpstream.c), or NULL */
    struct ds_members *mb;   /* gzip read member by member (libdeflate; dumpstream.c), or NULL */
    /* a reader that keeps what it read (hprof.c, pass 1 of a gzip dump):
     * before a refill drops buf[0..pos), the bytes at dump offsets base..,
     * it hands them to tap(tap_arg, buf, pos, base); NULL: none */
    void (*tap)(void *arg, const uint8_t *p, size_t n, uint64_t off);
    void *tap_arg;
} gcs_dumpstream;

/* File source: moves the unread bytes to the front of the window and reads
 * until it holds cap bytes or the file (region) ends (eof set); nothing for
 * a memory source.  0, or -1 with err "NAME: offset N: ..." on a read
 * error or damaged gzip data. */
int _gcs_dumpstream_refill(gcs_dumpstream *r, size_t cap);
/* Opens path (again: a new pass) with a window of cap bytes, allocated on
 * the first call; plain or gzip, from the file's magic.  ix: a gzip dump
 * records access points there (ix->span must be set); may be NULL.  0, or
 * -1 with err set. */
int _gcs_dumpstream_open(gcs_dumpstream *r, const char *path, size_t cap, _gcs_gzindex *ix);
/* Opens path for the region [start, limit) of the dump: a plain file read
 * from start, a gzip file inflated from point pt of ix, the first pass's
 * index (pt NULL: from the file's start; its output must lie at or before
 * start) and the bytes before start dropped.  0, or -1 with err set. */
int _gcs_dumpstream_open_at(gcs_dumpstream *r, const char *path, size_t cap, const _gcs_gzindex *ix,
                            const _gcs_gzpoint *pt, uint64_t start, uint64_t limit);
/* Whether a gzip dump of bounded members (_gcs_gzindex) is read member by
 * member with libdeflate, for every later open: 1 (the default), or 0:
 * streamed through zlib as any gzip file.  Tests and the benchmark compare
 * the two on one file. */
void _gcs_dumpstream_set_members(int on);
/* Closes the file and inflate (the window is kept for another open). */
void _gcs_dumpstream_close(gcs_dumpstream *r);
/* Closes and frees the window. */
void _gcs_dumpstream_free(gcs_dumpstream *r);
void _gcs_gzindex_free(_gcs_gzindex *ix);

/* ---- the workers (par.c) ---------------------------------------------------------------- */

/* The threads a parallel pass of an importer uses: what
 * _gcs_heapdump_set_threads set, else OpenMP's thread count
 * (OMP_NUM_THREADS) in an OpenMP build, else the CPUs this process may run
 * on; at least 1, at most 64. */
int _gcs_heapdump_threads(void);
/* Sets that count for every later import (0: back to the default).  Tests
 * and the benchmark compare 1 thread with several. */
void _gcs_heapdump_set_threads(int n);
/* Runs fn(arg, t) for t = 0..n-1, t = 0 on the calling thread and the
 * others on threads of their own, and waits for all.  A thread that cannot
 * be started is left out: fn must take its work from a shared counter, so
 * that the ones that run do it all.  The number of workers that ran. */
int _gcs_par_run(int n, void (*fn)(void *arg, int t), void *arg);

/* ---- the HPROF id map (hprof_ids.c) ----------------------------------------------------- */

#define IDMAP_PAGE_BITS 12  /* granules per page: 2^12 (32 KiB of 8-byte granules) */
#define IDMAP_PAGE_WORDS 64 /* 64 words of 64 bits */
#define IDMAP_NONE UINT32_MAX

/* 64 granules: which hold an object, and how many objects lie before them. */
typedef struct _gcs_idword {
    uint64_t bits;
    uint32_t rank;
    uint32_t spare_;
} _gcs_idword;

typedef struct _gcs_idmap {
    uint64_t n, min, max;
    int sorted;              /* 1: sorted ids and a directory; 0: the rank bitmap */
    /* the rank bitmap: ids are min + (granule << gshift) */
    unsigned gshift;
    uint64_t gmask, gmax;    /* (1 << gshift) - 1; the last granule */
    uint32_t *top;           /* [npages]: page -> its words' slot, or IDMAP_NONE */
    int dense;               /* every page holds ids: top[p] is p, which the lookups take without loading it */
    uint64_t npages;
    _gcs_idword *w;          /* [slots * IDMAP_PAGE_WORDS] */
    /* sorted */
    uint64_t *ids;           /* [n] ascending */
    unsigned dshift;
    uint32_t *dir;           /* [ndir + 1]: first index of each bucket of 2^dshift */
    uint64_t ndir;
    uint64_t bytes;          /* the memory the map holds (sorted: the ids' too) */
} _gcs_idmap;

/* What the map's layout depends on, gathered as the ids are collected
 * (one pass less over them): the smallest and largest id, the OR of every
 * id minus the first (its trailing zeros are the ids' alignment), and
 * whether they came in ascending order, mostly. */
typedef struct _gcs_idrange {
    uint64_t lo, hi, diff;
    int ascending;
} _gcs_idrange;

/* Builds the map of ids[0..n) (any order; n <= 2^32 - 2), taking ids over
 * (freed, or kept sorted: x owns them either way; _gcs_idmap_free) -- but
 * with keep set, a rank bitmap built (0 returned, x->sorted 0) leaves them
 * to the caller as they were; range: theirs, or NULL to have it found.  0;
 * 1 when an id occurs twice (*dup: that id); -1 out of memory. */
int _gcs_idmap_build(_gcs_idmap *x, uint64_t *ids, uint64_t n, const _gcs_idrange *range, int keep,
                     uint64_t *dup);
void _gcs_idmap_free(_gcs_idmap *x);

/* Walks the ids in ascending order (index order): fills out with up to cap
 * ids, returns how many (0 at the end).  The cursor starts zeroed. */
typedef struct _gcs_idmap_cursor {
    uint64_t at, word, bits, base;
} _gcs_idmap_cursor;
uint64_t _gcs_idmap_ids(const _gcs_idmap *x, uint64_t *out, uint64_t cap, _gcs_idmap_cursor *c);

/* The set bits of v.  hw (a constant): the compiler's builtin, for a
 * function built with __attribute__((target("popcnt"))), where it is one
 * instruction; else the same in plain arithmetic, since x86-64's baseline
 * has no popcnt and libgcc's call would cost more than this. */
__attribute__((always_inline)) static inline unsigned _gcs_popcount64_hw(uint64_t v, int hw)
{
#ifdef __POPCNT__
    hw = 1;
#endif
    if (hw)
        return (unsigned)__builtin_popcountll(v);
    v = v - ((v >> 1) & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned)((v * 0x0101010101010101ull) >> 56);
}

static inline unsigned _gcs_popcount64(uint64_t v) { return _gcs_popcount64_hw(v, 0); }

/* Whether this CPU has the popcnt instruction (hw above). */
int _gcs_cpu_popcnt(void);

/* The rank bitmap's lookup of granule g <= x->gmax (the id min + (g <<
 * gshift)): its index, or IDMAP_NONE; hw as for _gcs_popcount64_hw. */
__attribute__((always_inline)) static inline uint32_t _gcs_idmap_find_granule_hw(const _gcs_idmap *x, uint64_t g,
                                                                                int hw)
{
    uint64_t s = g >> IDMAP_PAGE_BITS;
    if (!x->dense) {
        uint32_t t = x->top[s];
        if (t == IDMAP_NONE)
            return IDMAP_NONE;
        s = t;
    }
    const _gcs_idword *k = &x->w[(uint64_t)s * IDMAP_PAGE_WORDS + ((g >> 6) & (IDMAP_PAGE_WORDS - 1))];
    uint64_t bit = 1ull << (g & 63);
    if (!(k->bits & bit))
        return IDMAP_NONE;
    return k->rank + _gcs_popcount64_hw(k->bits & (bit - 1), hw);
}

/* The rank bitmap's granule of id into *g: 1, or 0 when no id of the map
 * can be there (off the granule grid, or past the last granule). */
__attribute__((always_inline)) static inline int _gcs_idmap_granule(const _gcs_idmap *x, uint64_t id, uint64_t *g)
{
    uint64_t d = id - x->min;
    *g = d >> x->gshift;
    return !(d & x->gmask) && *g <= x->gmax;
}

/* The index of id (its rank among the dump's ids), or IDMAP_NONE; hw as
 * for _gcs_popcount64_hw. */
__attribute__((always_inline)) static inline uint32_t _gcs_idmap_find_hw(const _gcs_idmap *x, uint64_t id, int hw)
{
    uint64_t d = id - x->min;
    if (__builtin_expect(!x->sorted, 1)) {
        uint64_t g;
        return _gcs_idmap_granule(x, id, &g) ? _gcs_idmap_find_granule_hw(x, g, hw) : IDMAP_NONE;
    }
    if (id < x->min || (d >> x->dshift) >= x->ndir)
        return IDMAP_NONE;
    const uint64_t *ids = x->ids;
    uint32_t lo = x->dir[d >> x->dshift], end = x->dir[(d >> x->dshift) + 1], hi = end;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end && ids[lo] == id ? lo : IDMAP_NONE;
}

__attribute__((always_inline)) static inline uint32_t _gcs_idmap_find(const _gcs_idmap *x, uint64_t id)
{
    return _gcs_idmap_find_hw(x, id, 0);
}

/* The rank bitmap's granules of the indices 0, 2^shift, 2 * 2^shift, ...
 * below x->n, into out[0..count) (count: as many as there are); out[count]
 * is x->gmax + 1.  Granules are below 2^32 (callers check gmax). */
void _gcs_idmap_granules_every(const _gcs_idmap *x, unsigned shift, uint32_t *out, uint64_t count);

/* Places cursor c at id, which the map holds at index i: the next id
 * _gcs_idmap_next (or _gcs_idmap_ids) gives is id, then the ones above it. */
void _gcs_idmap_seek(const _gcs_idmap *x, uint64_t id, uint64_t i, _gcs_idmap_cursor *c);

/* The next id of cursor c (ascending), 0 after the last: one bit of a word
 * already loaded, mostly. */
__attribute__((always_inline)) static inline uint64_t _gcs_idmap_next(const _gcs_idmap *x, _gcs_idmap_cursor *c)
{
    if (__builtin_expect(c->bits != 0, 1)) {
        unsigned b = (unsigned)__builtin_ctzll(c->bits);
        c->bits &= c->bits - 1;
        return c->base + ((uint64_t)b << x->gshift);
    }
    uint64_t id;
    return _gcs_idmap_ids(x, &id, 1, c) ? id : 0;
}

/* Starts loading the word _gcs_idmap_find_granule_hw(x, g) will read. */
__attribute__((always_inline)) static inline void _gcs_idmap_prefetch_granule(const _gcs_idmap *x, uint64_t g)
{
    uint64_t s = g >> IDMAP_PAGE_BITS;
    if (!x->dense && (s = x->top[s]) == IDMAP_NONE)
        return;
    __builtin_prefetch(&x->w[s * IDMAP_PAGE_WORDS + ((g >> 6) & (IDMAP_PAGE_WORDS - 1))]);
}

/* Starts loading the word _gcs_idmap_find(x, id) will read (the rank
 * bitmap; nothing for sorted ids). */
__attribute__((always_inline)) static inline void _gcs_idmap_prefetch(const _gcs_idmap *x, uint64_t id)
{
    uint64_t g = (id - x->min) >> x->gshift;
    if (x->sorted || g > x->gmax)
        return;
    uint64_t s = g >> IDMAP_PAGE_BITS;
    if (!x->dense && (s = x->top[s]) == IDMAP_NONE)
        return;
    __builtin_prefetch(&x->w[s * IDMAP_PAGE_WORDS + ((g >> 6) & (IDMAP_PAGE_WORDS - 1))]);
}

/* ---- the importers ------------------------------------------------------------------- */

/* The format of a file from its first bytes (gzip looked into); -1 with err
 * set when it cannot be read. */
int _gcs_heapdump_sniff(const char *path, gcs_err *err);
gcs_snapshot *_gcs_hprof_import(const char *path, gcs_heapdump_report *rep, gcs_err *err);
/* The HPROF import's unit of parallel work, about 2 MiB of dump by default
 * (0: back to it), for every later import: tests and the fuzz target make
 * it small, so that small dumps are cut into many chunks. */
void _gcs_hprof_set_chunk_bytes(size_t n);
/* Has every later import call fn(arg) between its passes (NULL: none):
 * tests change the dump there, as a dump rewritten while it is read. */
void _gcs_hprof_set_between_passes(void (*fn)(void *arg), void *arg);
/* How much of a gzip dump pass 1 keeps inflated for pass 2, for every later
 * import: -1 (the default) what the memory bar leaves (hprof.c, "chunks
 * kept"), 0 nothing (pass 2 inflates every chunk again), or up to n bytes
 * whatever the dump's counts: tests keep all of it, or a few chunks. */
void _gcs_hprof_set_keep(int64_t n);
/* Whether pass 2 looks ahead (prefetch_ahead; direct: resolves references
 * in batches, resolve_refs), for every later import: -1 (the default)
 * chosen per chunk by timing, 0 never, 1 always.  Tests take both ways. */
void _gcs_hprof_set_ahead(int mode);
/* The V8 .heapsnapshot importer (v8snap.c). */
gcs_snapshot *_gcs_v8_import(const char *path, gcs_heapdump_report *rep, gcs_err *err);
/* 1 when the file at path starts with gzip's magic (the report's
 * "compressed"), 0 otherwise or when it cannot be read. */
int _gcs_heapdump_gzipped(const char *path);

#endif
