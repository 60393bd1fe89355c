/* heapdump_internal.h -- formats/ internal: the heap dump importers -- HPROF
 * (hprof.c with hprof_scan.c, hprof_classes.c, hprof_pass2.c and
 * hprof_edges.c, its id map hprof_ids.c), V8 (v8snap.c with v8snap_meta.c,
 * v8snap_nodes.c and v8snap_graph.c) -- the window they
 * read a dump through (dumpstream.c), the workers of their parallel passes
 * (par.c), and the recognition of heap dumps by content (heapdump.c), which
 * the snapshot reader (snapshot_read.c) calls so that every reader of
 * snapshots reads dumps; last, each fenced off, what the HPROF importer's
 * files share and what the V8 importer's files share.
 * Not installed. */
#ifndef GCSCALE_HEAPDUMP_INTERNAL_H
#define GCSCALE_HEAPDUMP_INTERNAL_H

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
 * consumer's (hprof_scan.c): the point its current chunk starts at (SIZE_MAX: the
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
    /* a reader that keeps what it read (hprof_scan.c, pass 1 of a gzip dump):
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
 * import: -1 (the default) what the memory bar leaves (hprof_scan.c, "chunks
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
/* The hash of both importers' open-addressing tables (HPROF's ids and
 * strings, V8's class names): MurmurHash3's finalizer, whose low bits the
 * tables' power-of-two masks keep. */
static inline uint64_t _gcs_heapdump_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* ---- the HPROF importer's own: what its files share ---------------------------------- */

/* Private to the importer's files -- hprof.c (the import's order of work),
 * hprof_scan.c (pass 1), hprof_classes.c (the classes), hprof_pass2.c
 * (pass 2 and the record parser both passes share), hprof_edges.c (the
 * edges' layout and order, the addresses) -- which define
 * GCS_HPROF_IMPORTER before they include this header; the header's other
 * readers (and the tests) see none of it, and some have names of their
 * own that these would clash with.  What the files share: the constants and
 * record tags, the stream's helpers, the importer's state (imp, with pass
 * 2's pass2 and worker), the small helpers of the hot loops as static
 * inline, so that each loop compiles as it did when the importer was one
 * file, and the functions one file calls in another (_gcs_hprof_), under
 * the file that defines them; their comments are at their definitions. */
#ifdef GCS_HPROF_IMPORTER

#define HPROF_BUF (4u << 20) /* the stream window; bigger single items are refused */
#define HPROF_CHUNK (2u << 20) /* pass 2's unit of work: enough chunks to share out, few enough to cost nothing */

/* Out of address order, pass 2 writes each object's record (its index,
 * size, type, pointer count and references) into the bucket of its index
 * range, 2^bshift indices (bucket_shift), rather than anywhere: the records
 * of a bucket are then few enough for the caches when edges_in_order puts
 * them in index order.  The buckets are at most BUCKETS_MAX -- so many write
 * streams that pass 2 keeps their ends in the L2 cache -- of at least
 * 2^BUCKET_MIN_SHIFT indices.  Each worker fills blocks of TMP_BLOCK words
 * of a shared pool, one open block per bucket; a record of more than
 * TMP_OWN words takes an extent of its own (so a block is closed only when
 * more than 3/4 of it is used: the pool's bound in tmp_pool_words). */
#define BUCKETS_MAX 1024
#define BUCKET_MIN_SHIFT 13
#define TMP_BLOCK 1024u
#define TMP_OWN (TMP_BLOCK / 4)

/* top-level record tags */
enum {
    T_UTF8 = 0x01, T_LOAD_CLASS = 0x02, T_HEAP_DUMP = 0x0C, T_HEAP_DUMP_SEGMENT = 0x1C, T_HEAP_DUMP_END = 0x2C,
};
/* heap dump sub-record tags */
enum {
    S_ROOT_UNKNOWN = 0xFF, S_ROOT_JNI_GLOBAL = 0x01, S_ROOT_JNI_LOCAL = 0x02, S_ROOT_JAVA_FRAME = 0x03,
    S_ROOT_NATIVE_STACK = 0x04, S_ROOT_STICKY_CLASS = 0x05, S_ROOT_THREAD_BLOCK = 0x06,
    S_ROOT_MONITOR_USED = 0x07, S_ROOT_THREAD_OBJECT = 0x08, S_CLASS_DUMP = 0x20, S_INSTANCE_DUMP = 0x21,
    S_OBJ_ARRAY_DUMP = 0x22, S_PRIM_ARRAY_DUMP = 0x23,
    /* Android */
    S_ROOT_INTERNED_STRING = 0x89, S_ROOT_FINALIZING = 0x8A, S_ROOT_DEBUGGER = 0x8B,
    S_ROOT_REFERENCE_CLEANUP = 0x8C, S_ROOT_VM_INTERNAL = 0x8D, S_ROOT_JNI_MONITOR = 0x8E,
    S_UNREACHABLE = 0x90, S_PRIM_ARRAY_NODATA = 0xC3, S_HEAP_DUMP_INFO = 0xFE,
};
/* basic types */
enum { B_OBJECT = 2, B_BOOLEAN = 4, B_CHAR, B_FLOAT, B_DOUBLE, B_BYTE, B_SHORT, B_INT, B_LONG };

static const uint8_t prim_size[12] = {[B_BOOLEAN] = 1, [B_CHAR] = 2, [B_FLOAT] = 4, [B_DOUBLE] = 8,
                                      [B_BYTE] = 1,    [B_SHORT] = 2, [B_INT] = 4,   [B_LONG] = 8};

/* ---- the stream ----------------------------------------------------------------- */

typedef gcs_dumpstream hr;

static inline uint64_t hr_off(const hr *r) { return r->base + r->pos; }

static inline int hr_fail(hr *r, uint64_t off, const char *msg)
{
    gcs_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)off, msg);
    return -1;
}

/* k bytes in the window (hprof_scan.c) */
int _gcs_hprof_hr_more(hr *r, size_t k, const char *what);

static inline int hr_skip(hr *r, uint64_t n, const char *what)
{
    while (n > 0) {
        if (r->len == r->pos && _gcs_hprof_hr_more(r, 1, what) < 0)
            return -1;
        size_t k = r->len - r->pos < n ? r->len - r->pos : (size_t)n;
        r->pos += k;
        n -= k;
    }
    return 0;
}

static inline uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

/* ---- the importer's state -------------------------------------------------------- */

typedef struct vec {
    void *p;
    size_t n, cap, elem;
} vec;

/* one more element at the end of v, NULL out of memory (hprof_scan.c) */
void *_gcs_hprof_vec_push(vec *v);

/* id -> value, open addressing */
typedef struct idmap {
    uint64_t *keys, *vals;
    size_t cap, n;
} idmap;

typedef struct cls {
    uint64_t id, super, loader, name_sid;
    int dumped;
    uint64_t field_start, nfields;      /* own instance fields: types in fields vec */
    uint64_t static_start, nstatics;    /* static reference values in statics vec */
    uint32_t static_bytes;              /* JVM bytes of the static fields (the mirror holds them) */
    uint32_t chunk_count;               /* pass 1: instances in the current chunk */
    uint64_t instances;
    /* resolved after pass 1 */
    uint64_t ref_start;                 /* flat ref offsets (dump bytes) in refs vec */
    uint32_t nrefs, value_bytes, jvm_size;
    uint32_t type;
} cls;

/* A part of the dump that pass 2 reads on its own: [start, end), beginning
 * at a record boundary -- inside a heap dump segment that ends at seg_end,
 * or at a top-level record (seg_end 0). */
typedef struct chunk {
    uint64_t start, end, seg_end;
    uint64_t objects;       /* object records in it */
    uint64_t fixed_refs;    /* references of its arrays and class dumps */
    uint64_t hist_start, hist_n; /* its instances: (class, count) pairs in imp.hist */
    uint64_t tmp_base, refs;     /* its slice of the temporary edges (direct: of the snapshot's) */
    uint64_t first_id, last_id;  /* of its first and last object other than a class */
    uint64_t classes, class_refs; /* the class dumps among its objects, their references */
    uint64_t first_index;   /* direct: the index of its first object (its objects' are a run from there) */
    uint64_t run, run_refs; /* direct: the indices of its run (its objects but classes, and the classes
                             * dumped elsewhere whose index falls inside: holes), their references */
    size_t point;           /* gzip: the access point it is inflated from (SIZE_MAX: the file's start) */
    uint8_t *kept;          /* gzip: its bytes as pass 1 inflated them (keep_end), or NULL */
    size_t kept_cap;        /* the mapping's bytes */
} chunk;

typedef struct hist_pair {
    uint32_t cls, count;
} hist_pair;

/* A worker's open block of a bucket: the pool's words [cur, end) are free
 * (end 0: none open); the block began at end - TMP_BLOCK. */
typedef struct tmp_fill {
    uint64_t cur, end;
} tmp_fill;

/* A class's objects as run2 stores them, for the records that name only
 * their class (TMP_RUN). */
typedef struct run_class {
    uint32_t words, nrefs, type;
} run_class;

/* Words of the pool that hold whole records of one bucket. */
typedef struct tmp_extent {
    uint64_t start, len, bucket;
} tmp_extent;

/* Out of address order with a rank bitmap (granule_buckets): the buckets
 * cut the id map's granules where the bucket's first index lies, so that
 * pass 2 finds an object's bucket from its id's granule -- a table in the
 * cache -- and not from its index, a lookup in the id map that misses the
 * cache (the records come in random order) and, on this VM, walks the page
 * tables.  The record holds the granule within its bucket; edge_worker
 * looks the index up there, in the bucket's part of the map, which the
 * caches hold.  start[b] is the granule of index b << bshift (start[nbuckets]
 * the last granule + 1); slice[s] the bucket of granule s << sshift, so
 * that a granule's bucket is among slice[s] .. slice[s + 1]. */
typedef struct gbk {
    int on;
    unsigned sshift;
    const uint32_t *start;
    const uint16_t *slice;
} gbk;

/* Pass 2's state in one chunk. */
typedef struct pass2 {
    hr *r;
    /* the chunk's slice of words (pass 1's counts, a header per object out
     * of address order): the next reference's place in it, its end.
     * Direct, the places are the snapshot's edges; otherwise they only
     * count, and the words are written at wp, in the bucket's block. */
    uint64_t tmp_n, tmp_end;
    uint32_t *wp;            /* where the next reference goes */
    uint64_t objects, references, missing_refs, jvm_bytes;
    struct worker *wk;       /* not direct: its blocks and per-bucket counts */
    /* direct: the chunk's objects are the ids from its first on, at the
     * indices from first_index on (edges_direct); the cursor walks those ids */
    uint64_t first_index, chunk_objects;
    _gcs_idmap_cursor cur;
    uint64_t cid;            /* the class of the last instance read */
    const cls *c;
    uint64_t acid;           /* the class of the last object array read, if ac_known */
    const cls *ac;
    int ac_known;
    int batch;               /* direct: references stored as their granules, resolved after the chunk
                              * (resolve_refs) */
    /* the look-ahead (prefetch_ahead): a cursor, records ahead of the
     * one being read, and the class of its last instance */
    int ahead;               /* look ahead (lookahead_choice) */
    uint64_t far_off;
    unsigned far_n;
    uint64_t la_cid;
    const cls *la_c;
} pass2;

/* One pass-2 worker. */
typedef struct worker {
    hr r;
    gcs_err err;
    uint64_t fail_chunk;     /* the chunk its error is in; UINT64_MAX: none */
    uint64_t references, missing_refs, jvm_bytes;
    /* not direct: the references of the objects it placed per bucket, its
     * open block of each bucket, the extents it filled (tmp_extent) */
    uint64_t *block_refs;
    tmp_fill *fill;
    vec extents;
    double ns_per_byte[2];   /* its pass 2's CPU time per dump byte without / with the look-ahead */
    unsigned timed[2], chunks;
} worker;

typedef struct imp {
    hr r;                    /* pass 1 */
    const char *path;        /* the source: a file, or data[0..len) */
    const uint8_t *data;
    size_t len;
    uint32_t idsz;
    gcs_heapdump_report rep;
    idmap strings;  /* string id -> offset in sblob */
    vec sblob;      /* char */
    idmap classmap; /* class id -> index in classes */
    vec classes;    /* cls */
    vec fields;     /* uint8_t: instance field types */
    vec statics;    /* uint64_t: static reference values */
    vec refs;       /* uint32_t: flat ref offsets */
    vec rootids;    /* uint64_t */
    vec ids;        /* uint64_t: every object's id, file order (pass 1) */
    _gcs_idrange id_range;  /* theirs (lo meaningful once ids.n > 0) */
    _gcs_idmap map; /* id -> index */
    uint64_t nfields_total;
    /* layout */
    uint32_t ref, hdr, ahdr;
    uint32_t class_type, prim_type[12]; /* type indices */
    uint32_t jlc;                       /* java.lang.Class's cls, or UINT32_MAX */
    uint64_t timestamp_ms;
    /* the chunks (pass 1) */
    vec chunks;             /* chunk */
    vec hist;               /* hist_pair */
    vec touched;            /* uint32_t: classes with instances in the current chunk */
    uint64_t cur_objects, cur_fixed_refs, cur_first, cur_last;
    uint64_t cur_classes, cur_class_refs; /* pass 1: the current chunk's class dumps, their references */
    int ordered;            /* pass 1: every chunk's objects but classes in address order so far (a descent
                             * cuts a chunk) */
    int ids_ascending;      /* pass 1: every id, classes too, above the one before in file order */
    uint64_t last_any;      /* pass 1: the last id, of any object */
    uint64_t last_cid;      /* pass 1: the class of the last instance, at classes[last_cls] */
    size_t last_cls;
    uint64_t forced_cuts;
    int direct;             /* pass 2 writes edges into the snapshot directly (edges_direct) */
    int popcnt;             /* the CPU has popcnt: pass 2's runs use it (runs2) */
    int batchable;          /* every id's granule fits a reference code (ref_code), and the map is a bitmap */
    int batch_records;      /* out of address order: references stored as codes, resolved by edge_worker */
    int addr_ids;           /* the snapshot's addr[] holds the objects' ids until placed (ids_as_addr) */
    uint32_t *edst;         /* direct: the snapshot's edges, where pass 2 writes references */
    uint64_t *class_edge;   /* direct: per class, its first edge where no chunk's run holds it; else
                             * UINT64_MAX (the worker that passes its index reserves them) */
    unsigned bshift;        /* not direct: a bucket holds 2^bshift indices (bucket_shift) */
    uint64_t nbuckets;
    gbk gb;                 /* not direct: the buckets by granule (granule_buckets), if on */
    uint64_t tmp_cap, tmp_next; /* the pool's words; atomic: its first unused one */
    run_class *ctab;        /* not direct: per class (run_classes) */
    size_t chunk_bytes;
    uint64_t cut_plain;     /* plain or memory: the next chunk starts at a record at or after this */
    const uint64_t *cut_at; /* &cut_plain, or &gzi.next_cut for gzip */
    _gcs_gzindex gzi;
    /* gzip: the chunks pass 1 keeps inflated for pass 2 (keep_begin) */
    int64_t keep_limit;     /* _gcs_hprof_set_keep's when the import began */
    int ahead_mode;         /* _gcs_hprof_set_ahead's when the import began */
    int keeping;            /* the open chunk's bytes go to keep_buf */
    uint8_t *keep_buf;      /* a mapping of keep_cap bytes, keep_len of them the open chunk's first */
    size_t keep_len, keep_cap;
    uint64_t keep_start;    /* the open chunk's start */
    uint64_t kept;          /* bytes kept, the open chunk's included */
    uint64_t keep_refs;     /* references in the closed chunks (instances: their class's own fields only) */
    /* pass 2 */
    gcs_snapshot *g;
    unsigned nworkers;
    uint32_t *tmp;
    worker *workers;
    uint64_t next_chunk;    /* atomic: the next chunk a worker takes */
    uint64_t fail_at;       /* atomic: the lowest chunk that failed, UINT64_MAX */
} imp;

/* ---- pass 1 (hprof_scan.c) ----------------------------------------------------------- */

/* the tables: the string of sid (NULL: none); the class of id, created
 * when absent (NULL: out of memory); the class of id, or NULL */
const char *_gcs_hprof_str_get(const imp *m, uint64_t sid);
cls *_gcs_hprof_class_get(imp *m, uint64_t id);
cls *_gcs_hprof_class_find(const imp *m, uint64_t id);
/* a gzip dump's chunks kept inflated: what the memory bar leaves for them;
 * pass 1's window handing its bytes over; a chunk's given back; all but
 * keep bytes of them given back */
uint64_t _gcs_hprof_keep_bound(const imp *m, uint64_t objects, uint64_t refs, uint64_t map);
void _gcs_hprof_keep_tap(void *arg, const uint8_t *p, size_t n, uint64_t off);
void _gcs_hprof_keep_free(chunk *c);
void _gcs_hprof_keep_trim(imp *m, uint64_t keep);
/* a new chunk at a record's start; pass 1 over the whole dump */
int _gcs_hprof_chunk_open(imp *m, uint64_t off, uint64_t seg_end);
int _gcs_hprof_scan(imp *m);

/* ---- the records --------------------------------------------------------------------- */

static inline uint64_t read_id(const uint8_t *p, size_t idsz) { return idsz == 8 ? be64(p) : be32(p); }
static inline uint64_t get_id(const imp *m, const uint8_t *p) { return read_id(p, m->idsz); }

/* Pass 1's work on each object (note_object, id_run, object_run, below)
 * is hprof_scan.c's part of the import, but it is here: the parser of the
 * sub-records that both passes share (heap_records, hprof_pass2.c) inlines
 * it into its loop, as it did when the importer was one file. */

/* A dump whose chunks each hold objects in address order that no other
 * chunk's objects fall between -- HotSpot's serial dumper writes each space
 * in address order -- needs no temporary edges: a chunk's edges are a
 * contiguous range of the snapshot's, which pass 2 can write directly
 * (edges_direct).  To make it so, pass 1 cuts a chunk where an id falls
 * below the one before, as long as that happens seldom (ORDER_CUTS more
 * than one per chunk's bytes of dump); in a dump in no order it stops. */
#define ORDER_CUTS 64

/* How far ahead of the record it parses a run of objects (object_run,
 * run2) loads the dump: the parse of a record is a few cycles, less than
 * memory's latency, and the hardware's stream prefetch does not keep up on
 * this VM (the 10^7 list in address order: 630 against 490-550 MB/s per
 * CPU second, docs/heap-dumps.md). */
#define READ_AHEAD 1024

/* Pass 1: one more object id, of the record at off in a segment ending at
 * seg_end; -1 out of memory (err not set).  A class (class_dump) is counted
 * in its chunk but takes no part in its order: HotSpot dumps every class
 * first, its id the mirror's address, in no order, while the mirror lies
 * among the instances in memory; edges_direct makes each class a hole in
 * the run of the chunk whose indices hold it. */
static inline int note_object(imp *m, uint64_t id, uint64_t off, uint64_t seg_end, int is_class)
{
    if (m->ids.n && id < m->last_any)
        m->ids_ascending = 0;
    m->last_any = id;
    if (!is_class && m->cur_objects > m->cur_classes && id < m->cur_last) {
        if (m->ordered && ++m->forced_cuts <= ORDER_CUTS + off / HPROF_CHUNK) {
            if (_gcs_hprof_chunk_open(m, off, seg_end) < 0)
                return -1;
        } else {
            m->ordered = 0;
        }
    }
    uint64_t *slot = _gcs_hprof_vec_push(&m->ids);
    if (!slot)
        return -1;
    *slot = id;
    _gcs_idrange *rg = &m->id_range;
    if (m->ids.n == 1)
        rg->lo = rg->hi = id;
    rg->lo = id < rg->lo ? id : rg->lo;
    rg->hi = id > rg->hi ? id : rg->hi;
    rg->diff |= id - ((const uint64_t *)m->ids.p)[0];
    if (is_class) {
        m->cur_objects++;
        m->cur_classes++;
        return 0;
    }
    if (m->cur_objects++ == m->cur_classes)
        m->cur_first = id;
    m->cur_last = id;
    return 0;
}

/* The loop of object_run: instances of class cid (0: none) and object
 * arrays, in any mix, from the stream's position, each one's id kept as
 * note_object keeps it, until one that the generic path must take; the
 * records taken; *instances: how many were instances, *elements: the
 * arrays' element count. */
static inline uint64_t id_run(imp *m, hr *r, uint64_t end, uint64_t cid, uint64_t *instances, uint64_t *elements)
{
    const size_t id = m->idsz, fixed = 1 + 2 * id + 8;
    uint64_t *ids = (uint64_t *)m->ids.p + m->ids.n, room = m->ids.cap - m->ids.n, k = 0, last = m->cur_last;
    uint64_t any = m->last_any, count = 0, ninst = 0; /* any: the last id of any object (note_object) */
    int ascending = m->ids_ascending;
    const uint64_t id0 = ((uint64_t *)m->ids.p)[0]; /* ids.n > 0: the callers' object before the run */
    uint64_t diff = m->id_range.diff, lo = m->id_range.lo, hi = m->id_range.hi;
    const int ordered = m->ordered; /* else note_object cuts no more: any id may follow */
    const uint8_t *buf = r->buf;
    size_t pos = r->pos, len = r->len;
    const uint64_t cut = *m->cut_at, lim = end < cut ? end : cut; /* offsets a run's record may start below */
    while (k < room && len - pos >= fixed && r->base + pos < lim) {
        const uint8_t *p = buf + pos;
        __builtin_prefetch(p + READ_AHEAD);
        uint64_t oid = get_id(m, p + 1), n = 0, rec;
        if (p[0] == S_INSTANCE_DUMP) {
            if (!cid || get_id(m, p + 1 + id + 4) != cid)
                break;
            rec = fixed + be32(p + 1 + 2 * id + 4);
        } else if (p[0] == S_OBJ_ARRAY_DUMP) {
            n = be32(p + 1 + id + 4);
            rec = fixed + n * id;
        } else {
            break;
        }
        if ((ordered && oid < last) || len - pos < rec || r->base + pos + rec > end)
            break;
        ascending &= oid > any;
        ids[k++] = last = any = oid;
        diff |= oid - id0;
        lo = oid < lo ? oid : lo;
        hi = oid > hi ? oid : hi;
        count += n;
        ninst += p[0] == S_INSTANCE_DUMP;
        pos += rec;
    }
    m->id_range.diff = diff;
    m->id_range.lo = lo;
    m->id_range.hi = hi;
    r->pos = pos;
    m->ids.n += k;
    m->cur_objects += k;
    m->cur_last = last;
    m->last_any = any;
    m->ids_ascending = ascending;
    *instances = ninst;
    *elements = count;
    return k;
}

/* Pass 1 over a run of instance dumps of the class of the last instance
 * (m->last_cid, already counted in this chunk) and object array dumps, in
 * any mix, from the stream's position: each one's id kept and counted, an
 * array's elements counted, nothing else parsed.  A dump holds most of its
 * objects in such runs (an application's instances of one class lie
 * together, HotSpot dumps them in address order, and a graph of arrays --
 * a Java program's Node[] per node, an ArrayList's Object[] -- dumps them
 * side by side, or alternating with their nodes), and the generic
 * per-record path's checks and dispatch cost more than this work, as would
 * a run's setup per record.  The run stops, before the record, at the
 * first record that is anything else: of another tag or class, not wholly
 * in the window or the segment (end), at or past the next cut, whose id
 * descends while the dump is in order so far (note_object may cut there),
 * or that the ids' vector has no room for -- that record takes the generic
 * path, which reports any error, so that every dump imports (or fails) as
 * it would without the run.  Nor does it start before the chunk's first
 * object, which the generic path notes (note_object's start of a chunk),
 * or take an instance of a class not yet counted in the chunk.  The
 * records taken. */
static inline uint64_t object_run(imp *m, hr *r, uint64_t end)
{
    if (m->cur_objects == m->cur_classes) /* none yet in this chunk (and maybe none at all: ids.n 0) */
        return 0;
    /* the last instance's class (none read yet: no class, classes.p maybe
     * NULL), if already counted in this chunk */
    cls *c = m->last_cid ? (cls *)m->classes.p + m->last_cls : NULL;
    const uint64_t cid = c && c->chunk_count ? m->last_cid : 0;
    uint64_t instances, elements, k = id_run(m, r, end, cid, &instances, &elements);
    if (instances) {
        c->instances += instances;
        c->chunk_count += (uint32_t)instances;
        m->rep.instances += instances;
    }
    m->nfields_total += elements;
    m->cur_fixed_refs += elements;
    m->rep.object_arrays += k - instances;
    return k;
}

/* References as pass 2 stores them where it resolves them later
 * (resolve_refs): a granule of the id map, or one of these. */
#define REF_NULL GCS_SNAPSHOT_NULL          /* a NULL reference, and a class hole's place (write_classes) */
#define REF_MISSING (GCS_SNAPSHOT_NULL - 1) /* an id no object can have */

/* Per-object work of pass 2, object idx: its size, type, pointer count
 * and the place of its references.  Direct (edges_direct): stored at idx,
 * edge_start[idx] the place of its references in the snapshot's edges.
 * Otherwise the object is at a random index (a dump out of address order),
 * and a record of the four, its references after them, goes to the open
 * block of the bucket of idx (tmp_room): writes to BUCKETS_MAX places that
 * stay in the cache, where stores at idx would each miss it and, on this
 * VM, walk the page tables (docs/heap-dumps.md); edges_in_order puts each
 * bucket in index order.  The record's first word is idx within its bucket
 * (below 2^22: bucket_shift), or with buckets by granule (granule_buckets)
 * the id's granule within the bucket's (below 2^31); an instance of a run
 * (run2) has only its class after it (TMP_RUN set; the class's words,
 * nptrs and type in run_class), 8 bytes of header instead of 16.  (Objects
 * dumped twice were refused when the ids were indexed; a dump that changed
 * between the passes is caught by its chunk's counts, which count
 * TMP_HEADER words per object whatever its record, before any record is
 * written past them.) */
#define TMP_HEADER 4     /* index, words, nptrs, type */
#define TMP_RUN_HEADER 2 /* index | TMP_RUN, its class */
#define TMP_RUN 0x80000000u
#define PLACE_UNKNOWN "object appeared between passes"
#define PLACE_TOO_MANY_REFS "more references than the first pass counted (the dump changed?)"

/* A reference's index in the snapshot: NULL stays NULL, and one to an
 * object the dump lacks becomes NULL, counted in *missing (else *found). */
__attribute__((always_inline)) static inline uint32_t ref_index(const _gcs_idmap *map, uint64_t ref, int hw,
                                                                uint64_t *found, uint64_t *missing)
{
    if (!ref)
        return GCS_SNAPSHOT_NULL;
    uint32_t t = _gcs_idmap_find_hw(map, ref, hw);
    if (t == IDMAP_NONE) {
        ++*missing;
        return GCS_SNAPSHOT_NULL;
    }
    ++*found;
    return t;
}

#if defined(__x86_64__) || defined(__i386__)
#define TARGET_POPCNT __attribute__((target("popcnt")))
#else /* never called: _gcs_cpu_popcnt says no */
#define TARGET_POPCNT
#endif

/* A snapshot object's size in words: the JVM's bytes after an 8-byte
 * header (jvm_bytes >= 8; callers check), rounded up, but at least one
 * word per reference and one in all. */
static inline uint64_t object_words(uint64_t jvm_bytes, uint64_t nptrs)
{
    uint64_t payload = (jvm_bytes - 8 + 7) / 8, words = payload > nptrs ? payload : nptrs;
    return words ? words : 1;
}

static inline uint64_t align8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

static inline int value_size(const imp *m, uint8_t type)
{
    if (type == B_OBJECT)
        return (int)m->idsz;
    return type < 12 && prim_size[type] ? prim_size[type] : -1;
}

static inline int jvm_value_size(const imp *m, uint8_t type) { return type == B_OBJECT ? (int)m->ref : prim_size[type]; }

/* ---- pass 2 and the record parser (hprof_pass2.c) ------------------------------------ */

/* the sub-records of a heap dump (segment), pass 1's (w NULL) or pass 2's */
int _gcs_hprof_heap_records(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop);
/* references stored as codes, resolved into indices */
void _gcs_hprof_resolve_refs(const imp *m, uint32_t *e, uint64_t n, uint64_t *found, uint64_t *missing);
/* the bucket of index i is i >> _gcs_hprof_bucket_shift(n) */
unsigned _gcs_hprof_bucket_shift(uint64_t n);
/* pass 2 on every thread; the first error in file order */
int _gcs_hprof_pass2_run(imp *m, gcs_err *err);

/* ---- the classes (hprof_classes.c) --------------------------------------------------- */

/* the classes' reference fields and sizes; the snapshot's types; the
 * class objects of a dump whose edges pass 2 wrote in place */
int _gcs_hprof_resolve_classes(imp *m, gcs_err *err);
int _gcs_hprof_build_types(imp *m, gcs_err *err);
int _gcs_hprof_write_classes(imp *m, gcs_err *err);

/* ---- the edges and the addresses (hprof_edges.c) ------------------------------------- */

/* between the passes: each chunk's slice of the edges; whether pass 2
 * writes them in place (1); pass 1's ids as the snapshot's addr[] (NULL:
 * freed) */
void _gcs_hprof_chunk_slices(imp *m);
int _gcs_hprof_edges_direct(imp *m);
uint64_t *_gcs_hprof_ids_as_addr(imp *m);
/* after pass 2: the edges in index order; the addresses (*bad: an object
 * failed its checks); the rest of the validation */
int _gcs_hprof_edges_in_order(imp *m, gcs_err *err);
int _gcs_hprof_place_addresses(imp *m, int *bad);
int _gcs_hprof_check_graph(const gcs_snapshot *g, int objects_bad, gcs_err *err);

#endif /* GCS_HPROF_IMPORTER */

/* ---- the V8 importer's own: what its files share ------------------------------------ */

/* Private to the V8 importer's files -- v8snap.c (the document's text:
 * the stream, strings, skipped values, the members in order, the strings
 * member; the import's order of work and its entry points), v8snap_meta.c
 * (snapshot.meta), v8snap_nodes.c (the nodes and edges members: the
 * integer scanner, the class names, the edges kept) and v8snap_graph.c
 * (element copies dropped, reachability, the snapshot built) -- which
 * define GCS_V8_IMPORTER before they include this header; the header's
 * other readers (the HPROF importer's files, the tests) see none of it,
 * and its short names (vr, mix, is_ws) would clash with theirs.  What the
 * files share: the limits, the stream's small helpers and the class-name
 * table's probe as static inline, so that the integer scanner and the
 * strings member compile as they did when the importer was one file, the
 * importer's state (v8imp), and the functions one file calls in another
 * (_gcs_v8_), under the file that defines them; their comments are at
 * their definitions. */
#ifdef GCS_V8_IMPORTER

#define V8_BUF (4u << 20)          /* the stream window */
#define V8_HEADER_MAX (1u << 20)   /* the "snapshot" member's text */
#define V8_NAME_MAX 200            /* a class name is cut there */
#define V8_FIELDS_MAX 64           /* node_fields / edge_fields entries */

/* ---- the stream ----------------------------------------------------------------- */

typedef gcs_dumpstream vr;

static inline uint64_t vr_off(const vr *r) { return r->base + r->pos; }

/* The dump's name, the offset and the message into the error (v8snap.c); -1. */
__attribute__((format(printf, 3, 4))) int _gcs_v8_vr_fail(vr *r, uint64_t off, const char *fmt, ...);

/* Tries to make k (<= V8_BUF) bytes available at buf + pos; fewer only at
 * the end of the dump.  0, or -1 on a read error. */
static inline int vr_fill(vr *r, size_t k)
{
    if (r->len - r->pos >= k || r->kind == DS_MEMORY || r->eof)
        return 0;
    return _gcs_dumpstream_refill(r, V8_BUF);
}

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* The next non-blank byte, not consumed (v8snap.c). */
int _gcs_v8_vr_peek(vr *r, const char *what);

static inline int vr_expect(vr *r, int c, const char *what)
{
    int got = _gcs_v8_vr_peek(r, what);
    if (got < 0)
        return -1;
    if (got != c)
        return _gcs_v8_vr_fail(r, vr_off(r), "expected %s", what);
    r->pos++;
    return 0;
}

/* ---- the importer's state -------------------------------------------------------- */

typedef struct v8imp {
    vr r;
    gcs_heapdump_report rep;
    /* the layout from snapshot.meta */
    unsigned nf, ef;                    /* numbers per node / edge */
    int f_type, f_name, f_size, f_count; /* node field positions */
    int e_type, e_to;                   /* edge field positions */
    unsigned n_ntypes, n_etypes;
    char **ntype_names;                 /* [n_ntypes] */
    int nt_object, nt_native;           /* node types named by their class; -1: none */
    int et_weak, et_shortcut;           /* dropped edge types; -1: none */
    int et_element, nt_array, nt_hidden; /* an array's element edges, its backing store, and the
                                            runtime's oddballs; -1: none */
    uint64_t hdr_nodes, hdr_edges;      /* node_count, edge_count */
    /* per node */
    uint64_t n, cap;
    uint32_t *type, *self, *cnt;        /* cnt: edge_count, then the kept edges */
    /* kept edges */
    uint64_t m, mcap, edges_seen;
    uint32_t *tgt;
    uint32_t *elem;                     /* bit per kept edge: an element edge (NULL: none) */
    uint64_t ecap;                      /* its words */
    /* distinct class names: string index -> type id (n_ntypes + k) */
    uint64_t *nkeys;                    /* string index + 1; 0: empty */
    uint32_t *nvals;
    size_t ncap, nused;
    char **names;                       /* [nused] */
    uint64_t nstrings;
    int have_nodes, have_edges, have_strings;
} v8imp;

static inline size_t name_slot(const v8imp *m, uint64_t sidx)
{
    size_t i = (size_t)_gcs_heapdump_mix(sidx) & (m->ncap - 1);
    while (m->nkeys[i] && m->nkeys[i] != sidx + 1)
        i = (i + 1) & (m->ncap - 1);
    return i;
}

/* ---- the files' functions -------------------------------------------------------- */

/* v8snap_meta.c: the "snapshot" member into the layout fields of m */
int _gcs_v8_read_meta(v8imp *m);

/* v8snap_nodes.c: the "nodes" and "edges" members */
int _gcs_v8_read_nodes(v8imp *m);
int _gcs_v8_read_edges(v8imp *m);

/* v8snap_graph.c: the snapshot of the nodes reachable from the root */
gcs_snapshot *_gcs_v8_build(v8imp *m, gcs_err *err);

#endif /* GCS_V8_IMPORTER */

#endif
