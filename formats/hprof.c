/* hprof.c -- Java heap dumps (HPROF 1.0.1-1.0.3) imported as heap snapshots.
 *
 * Two passes over the dump, each streamed through bounded windows (a
 * buffer, a plain file, or gzip -- one member, or HotSpot's `GC.heap_dump
 * -gz` members, inflated member by member with libdeflate; dumpstream.c):
 *
 *   pass 1  sequential: strings, class loads, class dumps (fields, statics),
 *           root records; every object's id (8 bytes per object) and the
 *           counts that size the snapshot; and the dump cut into chunks of
 *           about 2 MiB at record boundaries, each with its objects and the
 *           references they hold (instances counted per class until the
 *           classes are resolved) -- in a gzip dump at the access points
 *           the reader records, so that a chunk can be inflated on its own;
 *           and, within the memory bar, a gzip dump's chunks as inflated,
 *           so that pass 2 need not inflate those again (keep_begin).
 *   then    the ids indexed (hprof_ids.c: a rank bitmap over the id range,
 *           whose ranks are the dump's address order; the ids freed), the
 *           classes resolved, the snapshot allocated, and each chunk given
 *           its slice of the edges: of the snapshot's own when every chunk
 *           is a run of indices (a dump in address order: edges_direct);
 *           otherwise only a count of words, the records going to buckets
 *           by index range (cut, with a rank bitmap, at their first
 *           indices' granules: granule_buckets).
 *   pass 2  parallel (par.c), a worker per thread taking chunks in file
 *           order and reading each itself (from memory, as pass 1 kept
 *           it, with pread, or inflating it from its access point): each
 *           object's size, type
 *           and pointer count, its references as indices (place, add_ref;
 *           runs of instances of one class and object arrays in a loop of
 *           their own, runs2).  In address order an object's index is the
 *           next of its chunk's run, its id checked against the ids pass 1
 *           saw there (object_index); otherwise its bucket from its id's
 *           granule (rec_bucket), and a look-ahead prefetches what the
 *           next records will miss on (prefetch_ahead, run_ahead).
 *           References to random places are stored as the id map's
 *           granules and resolved in batches (resolve_refs), after the
 *           chunk or after edges_in_order.
 *   then    out of address order, the objects' records put in index order
 *           a bucket at a time, which the caches hold (edges_in_order); the
 *           addresses, each object's fields checked on the way
 *           (place_addresses); the roots; the rest of the snapshot's
 *           validation (check_graph; the edges pass by construction).
 *
 * The results do not depend on the number of threads or chunks: every
 * object and reference lands at a place fixed by pass 1, the totals are
 * sums, and an error is the first one in file order (the failing chunk
 * with the lowest index: the chunks before it were all taken before it, and
 * are finished; tests/test_hprof.c).
 *
 * Memory beyond the snapshot: the ids, 8 B per object, until they are
 * indexed -- in address order they become the snapshot's addr[]
 * (ids_as_addr); the id map, 2 bits per 8 bytes of the id range (about 1-2
 * B per object); out of address order, the records, 8 B per instance of a
 * run or 16 B per other object and 4 B per edge, the part of each worker's
 * last block per bucket left unused, and per worker 8 B per index of a
 * bucket (edges_in_order); a 4 MiB window per thread; a gzip dump's kept
 * chunks, up to what the bar leaves (keep_bound).
 *
 * Byte order: HPROF is big-endian.  Layout of the records: the HPROF format
 * of the JDK (jdk/src/hotspot/share/services/heapDumper.cpp's comment) and
 * Android's additions; docs/heap-dumps.md. */
#define _GNU_SOURCE /* mremap */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../common/internal.h"
#include "gcscale/heapdump.h"
#include "hprof_internal.h"
#include "snapshot_internal.h"

#define HPROF_BUF (4u << 20) /* the stream window; bigger single items are refused */
#define HPROF_CHUNK (2u << 20) /* pass 2's unit of work: enough chunks to share out, few enough to cost nothing */

#define EDGE_AHEAD 64          /* objects edges_in_order loads ahead */
#define EXT_AHEAD_LINES 4      /* cache lines of a bucket's blocks edges_in_order loads ahead */

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

static size_t chunk_bytes = HPROF_CHUNK; /* _gcs_hprof_set_chunk_bytes */

void _gcs_hprof_set_chunk_bytes(size_t n) { __atomic_store_n(&chunk_bytes, n ? n : HPROF_CHUNK, __ATOMIC_RELAXED); }

static void (*between_passes)(void *); /* _gcs_hprof_set_between_passes */
static void *between_arg;

void _gcs_hprof_set_between_passes(void (*fn)(void *arg), void *arg)
{
    between_passes = fn;
    between_arg = arg;
}

static int64_t keep_limit = -1; /* _gcs_hprof_set_keep */
static int ahead_mode = -1;     /* _gcs_hprof_set_ahead */

void _gcs_hprof_set_ahead(int mode) { __atomic_store_n(&ahead_mode, mode < 0 ? -1 : mode > 0, __ATOMIC_RELAXED); }

void _gcs_hprof_set_keep(int64_t n) { __atomic_store_n(&keep_limit, n < 0 ? -1 : n, __ATOMIC_RELAXED); }

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

static const char *const prim_names[12] = {[B_BOOLEAN] = "boolean[]", [B_CHAR] = "char[]",
                                           [B_FLOAT] = "float[]",     [B_DOUBLE] = "double[]",
                                           [B_BYTE] = "byte[]",       [B_SHORT] = "short[]",
                                           [B_INT] = "int[]",         [B_LONG] = "long[]"};
static const char prim_sig[12] = {[B_BOOLEAN] = 'Z', [B_CHAR] = 'C', [B_FLOAT] = 'F', [B_DOUBLE] = 'D',
                                  [B_BYTE] = 'B',    [B_SHORT] = 'S', [B_INT] = 'I',   [B_LONG] = 'J'};
static const uint8_t prim_size[12] = {[B_BOOLEAN] = 1, [B_CHAR] = 2, [B_FLOAT] = 4, [B_DOUBLE] = 8,
                                      [B_BYTE] = 1,    [B_SHORT] = 2, [B_INT] = 4,   [B_LONG] = 8};

/* ---- the stream ----------------------------------------------------------------- */

typedef gcs_dumpstream hr;

static uint64_t hr_off(const hr *r) { return r->base + r->pos; }

static int hr_fail(hr *r, uint64_t off, const char *msg)
{
    gcs_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)off, msg);
    return -1;
}

/* Makes k (<= HPROF_BUF) bytes available at buf + pos: 1, 0 at a clean end
 * of the dump (nothing left), -1 on a truncated dump or a read error. */
static int hr_more(hr *r, size_t k, const char *what)
{
    if (r->len - r->pos >= k)
        return 1;
    if (r->kind != DS_MEMORY && !r->eof) {
        if (_gcs_dumpstream_refill(r, HPROF_BUF) < 0)
            return -1;
        if (r->len >= k)
            return 1;
    }
    if (r->len == r->pos && what == NULL)
        return 0;
    char msg[160];
    snprintf(msg, sizeof msg, "truncated dump: %s needs %zu bytes, %zu left", what ? what : "a record", k,
             r->len - r->pos);
    return hr_fail(r, hr_off(r), msg);
}

static int hr_skip(hr *r, uint64_t n, const char *what)
{
    while (n > 0) {
        if (r->len == r->pos && hr_more(r, 1, what) < 0)
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

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        void *p = realloc(v->p, cap * v->elem);
        if (!p)
            return NULL;
        v->p = p;
        v->cap = cap;
    }
    return (char *)v->p + v->elem * v->n++;
}

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

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Open addressing; key 0 is never stored (HPROF's NULL id).  Returns the
 * slot of key (found or empty). */
static size_t slot_of(const uint64_t *keys, size_t cap, uint64_t key)
{
    size_t i = (size_t)mix(key) & (cap - 1);
    while (keys[i] && keys[i] != key)
        i = (i + 1) & (cap - 1);
    return i;
}

/* The slot of key in map (key 0 is HPROF's NULL and never stored), grown
 * to keep the load under 1/2; SIZE_MAX when out of memory.  *fresh: the key
 * was not there (it is now, its value to be set by the caller). */
static size_t idmap_slot(idmap *t, uint64_t key, int *fresh)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        uint64_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return SIZE_MAX;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->keys[i]) {
                size_t j = slot_of(k, cap, t->keys[i]);
                k[j] = t->keys[i];
                v[j] = t->vals[i];
            }
        free(t->keys);
        free(t->vals);
        t->keys = k;
        t->vals = v;
        t->cap = cap;
    }
    size_t j = slot_of(t->keys, t->cap, key);
    *fresh = !t->keys[j];
    if (*fresh) {
        t->keys[j] = key;
        t->n++;
    }
    return j;
}

/* The slot holding key, or SIZE_MAX. */
static size_t idmap_find(const idmap *t, uint64_t key)
{
    if (!key || !t->cap)
        return SIZE_MAX;
    size_t j = slot_of(t->keys, t->cap, key);
    return t->keys[j] ? j : SIZE_MAX;
}

static int str_put(imp *m, uint64_t sid, const uint8_t *s, size_t n)
{
    int fresh;
    size_t j = idmap_slot(&m->strings, sid, &fresh);
    if (j == SIZE_MAX)
        return -1;
    m->strings.vals[j] = m->sblob.n;
    for (size_t i = 0; i <= n; i++) {
        char *c = vec_push(&m->sblob);
        if (!c)
            return -1;
        *c = i < n ? (s[i] ? (char)s[i] : '?') : 0;
    }
    return 0;
}

static const char *str_get(const imp *m, uint64_t sid)
{
    size_t j = idmap_find(&m->strings, sid);
    return j != SIZE_MAX ? (const char *)m->sblob.p + m->strings.vals[j] : NULL;
}

/* The class of id, created when absent; NULL when out of memory. */
static cls *class_get(imp *m, uint64_t id)
{
    int fresh;
    size_t j = idmap_slot(&m->classmap, id, &fresh);
    if (j == SIZE_MAX)
        return NULL;
    if (!fresh)
        return (cls *)m->classes.p + m->classmap.vals[j];
    cls *c = vec_push(&m->classes);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->id = id;
    m->classmap.vals[j] = m->classes.n - 1;
    return c;
}

static cls *class_find(const imp *m, uint64_t id)
{
    size_t j = idmap_find(&m->classmap, id);
    return j != SIZE_MAX ? (cls *)m->classes.p + m->classmap.vals[j] : NULL;
}


/* ---- chunks kept inflated (gzip, pass 1) ------------------------------------------- */

/* A gzip dump's pass 2 would inflate it a second time, as much CPU as the
 * rest of the import (docs/heap-dumps.md), unless pass 1 keeps a chunk's
 * bytes as it inflated them: pass 2 then reads that chunk from memory.
 * What is kept is bounded by the issue's memory bar, 16 B per object + 8
 * per reference beyond the snapshot, less the import's buffers: in pass 1
 * the bar of the objects and references read so far (keep_allowed), and
 * between the passes, less the id map too, the bar of the whole dump
 * (keep_trim), since pass 2's peak is the snapshot, the id map and the
 * kept chunks; a chunk is freed as soon as pass 2 has read it.  (Pass 1's
 * ids, 8 B per object beside the kept chunks, are less than the snapshot
 * that is not yet allocated then.)  Only a dump
 * in address order keeps them: out of it pass 2's records take that room
 * (the pool), so that pass 1 stops keeping when the order breaks and the
 * chunks kept are freed before pass 2 (keep_trim).  The bytes are
 * copied as they leave pass 1's window (keep_tap) into a mapping of the
 * chunk's own, which munmap gives back to the system at once. */

static void keep_unmap(uint8_t *p, size_t cap)
{
    if (p)
        munmap(p, cap);
}

/* What the import's buffers take beside the kept chunks, at most: per
 * thread a window of HPROF_BUF and a gzip member's input and output (pass
 * 2), and pass 1's read-ahead blocks. */
static uint64_t keep_reserve(void) { return (uint64_t)(_gcs_heapdump_threads() + 1) * (2 * HPROF_BUF); }

/* The bytes that may be kept for objects objects and refs references
 * beside map bytes of id map (0 in pass 1): the bar less those and the
 * buffers. */
static uint64_t keep_bound(const imp *m, uint64_t objects, uint64_t refs, uint64_t map)
{
    if (m->keep_limit >= 0)
        return (uint64_t)m->keep_limit;
    uint64_t bar = 16 * objects + 8 * refs, off = keep_reserve() + map;
    return bar > off ? bar - off : 0;
}

/* The bytes pass 1 may keep now (kept included). */
static uint64_t keep_allowed(const imp *m)
{
    return keep_bound(m, m->ids.n, m->keep_refs + m->cur_fixed_refs + m->cur_class_refs, 0);
}

/* The open chunk is not kept after all. */
static void keep_drop(imp *m)
{
    keep_unmap(m->keep_buf, m->keep_cap);
    m->kept -= m->keep_len;
    m->keep_buf = NULL;
    m->keep_len = m->keep_cap = 0;
    m->keeping = 0;
}

/* n more bytes of the open chunk kept -- or none of it, where the bound or
 * memory runs out. */
static void keep_append(imp *m, const uint8_t *p, size_t n)
{
    if (!m->ordered || m->kept + n > keep_allowed(m)) {
        keep_drop(m);
        return;
    }
    if (m->keep_len + n > m->keep_cap) {
        size_t cap = m->keep_cap ? m->keep_cap : ((m->chunk_bytes + m->chunk_bytes / 2) | 4095) + 1;
        while (cap < m->keep_len + n)
            cap *= 2;
        void *q = m->keep_buf ? mremap(m->keep_buf, m->keep_cap, cap, MREMAP_MAYMOVE)
                              : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED) {
            keep_drop(m);
            return;
        }
        m->keep_buf = q;
        m->keep_cap = cap;
    }
    memcpy(m->keep_buf + m->keep_len, p, n);
    m->keep_len += n;
    m->kept += n;
}

/* pass 1's window drops [off, off + n): the open chunk's part of it kept */
static void keep_tap(void *arg, const uint8_t *p, size_t n, uint64_t off)
{
    imp *m = arg;
    if (!m->keeping)
        return;
    uint64_t at = m->keep_start + m->keep_len;
    gcs_assert_internal(off <= at); /* keep_begin: the chunk's start was in the window */
    if (off + n > at)
        keep_append(m, p + (at - off), (size_t)(off + n - at));
}

/* The chunk opening at off is kept if the bound leaves room for one of
 * chunk_bytes now and its start is still in the window (a record's start,
 * unless a refill inside the record dropped it: rare, and then not kept). */
static void keep_begin(imp *m, uint64_t off)
{
    if (!m->r.tap || !m->ordered || off < m->r.base)
        return;
    uint64_t allowed = keep_allowed(m);
    if (allowed < m->kept || allowed - m->kept < m->chunk_bytes)
        return;
    m->keeping = 1;
    m->keep_start = off;
    m->keep_len = 0;
}

/* The open chunk c ends at end: its bytes still in the window kept, and the
 * whole chunk handed to c. */
static void keep_end(imp *m, chunk *c, uint64_t end)
{
    if (!m->keeping)
        return;
    gcs_assert_internal(c->start == m->keep_start);
    uint64_t at = m->keep_start + m->keep_len;
    if (at > end) { /* the window dropped bytes of the next chunk's first record */
        m->kept -= at - end;
        m->keep_len = (size_t)(end - m->keep_start);
    } else if (at < end) {
        gcs_assert_internal(at >= m->r.base && end <= m->r.base + m->r.len);
        keep_append(m, m->r.buf + (at - m->r.base), (size_t)(end - at));
    }
    if (!m->keeping)
        return;
    c->kept = m->keep_buf;
    c->kept_cap = m->keep_cap;
    m->keep_buf = NULL;
    m->keep_len = m->keep_cap = 0;
    m->keeping = 0;
}

/* Chunk c's kept bytes given back (pass 2 has read them). */
static void keep_free(chunk *c)
{
    keep_unmap(c->kept, c->kept_cap);
    c->kept = NULL;
    c->kept_cap = 0;
}

/* The chunks kept given back, the last first, until at most keep bytes
 * are: pass 2 inflates those again. */
static void keep_trim(imp *m, uint64_t keep)
{
    keep_drop(m);
    chunk *cs = m->chunks.p;
    for (size_t k = m->chunks.n; k-- > 0 && m->kept > keep;)
        if (cs[k].kept) {
            m->kept -= cs[k].end - cs[k].start;
            keep_free(&cs[k]);
        }
}

/* The references of the open chunk's instances that pass 1 knows of: the
 * reference fields their classes declare (a superclass's, perhaps not yet
 * dumped, are left out). */
static uint64_t chunk_instance_refs(const imp *m)
{
    const cls *cs = m->classes.p;
    const uint32_t *t = m->touched.p;
    uint64_t refs = 0;
    for (size_t k = 0; k < m->touched.n; k++) {
        const cls *c = &cs[t[k]];
        if (!c->nfields) /* fields.p is NULL while no class has a field */
            continue;
        const uint8_t *ft = (const uint8_t *)m->fields.p + c->field_start;
        uint64_t own = 0;
        for (uint64_t j = 0; j < c->nfields; j++)
            own += ft[j] == B_OBJECT;
        refs += own * c->chunk_count;
    }
    return refs;
}

/* ---- the chunks (pass 1) ---------------------------------------------------------- */

/* Ends the open chunk at end: its instances per class go to hist. */
static int chunk_close(imp *m, uint64_t end)
{
    if (!m->chunks.n)
        return 0;
    if (m->r.tap)
        m->keep_refs += m->cur_fixed_refs + m->cur_class_refs + chunk_instance_refs(m);
    chunk *c = (chunk *)m->chunks.p + m->chunks.n - 1;
    c->end = end;
    c->objects = m->cur_objects;
    c->fixed_refs = m->cur_fixed_refs;
    c->first_id = m->cur_first;
    c->last_id = m->cur_last;
    c->classes = m->cur_classes;
    c->class_refs = m->cur_class_refs;
    c->hist_start = m->hist.n;
    cls *cs = m->classes.p;
    const uint32_t *t = m->touched.p;
    for (size_t k = 0; k < m->touched.n; k++) {
        hist_pair *h = vec_push(&m->hist);
        if (!h)
            return -1;
        h->cls = t[k];
        h->count = cs[t[k]].chunk_count;
        cs[t[k]].chunk_count = 0;
    }
    c = (chunk *)m->chunks.p + m->chunks.n - 1;
    c->hist_n = m->hist.n - c->hist_start;
    m->touched.n = 0;
    m->cur_objects = m->cur_fixed_refs = m->cur_classes = m->cur_class_refs = 0;
    keep_end(m, c, end);
    return 0;
}

/* A new chunk at off, a record's start (inside a heap dump segment ending
 * at seg_end, or at the top level: 0).  A gzip chunk starts from the
 * newest access point at or before off; the points between the previous
 * chunk's and that one are not needed again. */
static int chunk_open(imp *m, uint64_t off, uint64_t seg_end)
{
    if (chunk_close(m, off) < 0)
        return hr_fail(&m->r, off, "out of memory");
    chunk *c = vec_push(&m->chunks);
    if (!c)
        return hr_fail(&m->r, off, "out of memory");
    memset(c, 0, sizeof *c);
    c->start = off;
    c->seg_end = seg_end;
    c->point = SIZE_MAX;
    keep_begin(m, off);
    if (m->r.kind == DS_GZIP) {
        _gcs_gzindex *ix = &m->gzi;
        size_t q = ix->used;
        while (q + 1 < ix->n && ix->p[q + 1].out <= off)
            q++;
        for (size_t k = ix->used + 1; q != SIZE_MAX && k < q; k++) {
            free(ix->p[k].window);
            ix->p[k].window = NULL;
        }
        ix->used = q;
        c->point = q;
        ix->next_cut = q + 1 < ix->n ? ix->p[q + 1].out : UINT64_MAX;
    } else {
        m->cut_plain = off + m->chunk_bytes;
    }
    return 0;
}

/* ---- the records --------------------------------------------------------------------- */

static inline uint64_t read_id(const uint8_t *p, size_t idsz) { return idsz == 8 ? be64(p) : be32(p); }
static inline uint64_t get_id(const imp *m, const uint8_t *p) { return read_id(p, m->idsz); }

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
            if (chunk_open(m, off, seg_end) < 0)
                return -1;
        } else {
            m->ordered = 0;
        }
    }
    uint64_t *slot = vec_push(&m->ids);
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
static uint64_t object_run(imp *m, hr *r, uint64_t end)
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

/* A new block of the pool for bucket b of worker wk, or an extent of its
 * own for a record of k > TMP_OWN words; the record's k words.  NULL when
 * out of memory, or when the pool is used up (which the chunks' counts
 * rule out: tmp_pool_words). */
__attribute__((noinline)) static uint32_t *tmp_room_slow(imp *m, worker *wk, uint64_t b, uint64_t k)
{
    tmp_fill *f = &wk->fill[b];
    uint64_t size = k > TMP_OWN ? k : TMP_BLOCK;
    uint64_t start = __atomic_fetch_add(&m->tmp_next, size, __ATOMIC_RELAXED);
    gcs_assert_internal(start + size <= m->tmp_cap);
    if (start + size > m->tmp_cap)
        return NULL;
    if (k > TMP_OWN || f->end) { /* an extent filled: an own one, or the block closed */
        tmp_extent *e = vec_push(&wk->extents);
        if (!e)
            return NULL;
        if (k > TMP_OWN)
            *e = (tmp_extent){start, k, b};
        else
            *e = (tmp_extent){f->end - TMP_BLOCK, f->cur - (f->end - TMP_BLOCK), b};
    }
    if (k <= TMP_OWN) {
        f->cur = start + k;
        f->end = start + TMP_BLOCK;
    }
    return m->tmp + start;
}

/* Room for a record of k words in bucket b of worker wk: the end of its
 * open block, mostly.  The line after the record's is prefetched for
 * writing: the bucket's next record comes about a bucket count of records
 * later, and a store to a line not in the cache held pass 2 up (its store
 * buffer full of them) more than the prefetches cost. */
__attribute__((always_inline)) static inline uint32_t *tmp_room(imp *m, worker *wk, tmp_fill *fill, uint64_t b,
                                                                uint64_t k)
{
    tmp_fill *f = &fill[b];
    if (__builtin_expect(f->end - f->cur >= k, 1)) {
        uint32_t *p = m->tmp + f->cur;
        f->cur += k;
        __builtin_prefetch((const char *)(p + k) + 64, 1);
        return p;
    }
    return tmp_room_slow(m, wk, b, k);
}

/* Not direct: the bucket *b of the object with id oid and its place within
 * the bucket, the record's first word *local: by granule (gb->on: its
 * granule's offset from the bucket's first) or by index (the index's
 * offset).  0 where the map cannot hold oid (the dump changed between the
 * passes); by granule, an id on the map's grid that it does not hold is
 * caught by edge_worker. */
__attribute__((always_inline)) static inline int rec_bucket(const gbk *gb, const _gcs_idmap *map, unsigned bshift,
                                                            uint64_t oid, int hw, uint64_t *b, uint32_t *local)
{
    if (gb->on) {
        uint64_t g;
        if (!_gcs_idmap_granule(map, oid, &g))
            return 0;
        uint32_t lo = gb->slice[g >> gb->sshift], hi = gb->slice[(g >> gb->sshift) + 1];
        while (lo < hi) { /* the last bucket starting at or before g */
            uint32_t mid = (lo + hi + 1) / 2;
            if (gb->start[mid] <= g)
                lo = mid;
            else
                hi = mid - 1;
        }
        *b = lo;
        *local = (uint32_t)g - gb->start[lo];
        return 1;
    }
    uint32_t idx = _gcs_idmap_find_hw(map, oid, hw);
    if (idx == IDMAP_NONE)
        return 0;
    *b = idx >> bshift;
    *local = idx - ((uint32_t)*b << bshift);
    return 1;
}

/* Direct: next, the id at the chunk's next index, is not the object's id.
 * It may be a class's, whose index lies inside the run (a hole,
 * edges_direct): its references' places are kept at that index
 * (edge_start) for write_classes, and the object's id is looked for at the
 * index after.  The object's index, or IDMAP_NONE where next is no class
 * (the dump changed between the passes) or the run ends first.  Off the
 * hot path: a dump has a hole per class, its instances millions. */
typedef struct holes_passed {
    uint32_t idx;            /* the object's index, or IDMAP_NONE */
    uint64_t objects, tmp_n; /* the run's indices and references, the holes counted */
} holes_passed;

__attribute__((noinline)) static holes_passed past_holes(imp *m, const _gcs_idmap *map, _gcs_idmap_cursor *cur,
                                                         uint64_t next, uint64_t id, uint64_t first_index,
                                                         uint64_t run, uint64_t objects, uint64_t tmp_n,
                                                         uint64_t tmp_end)
{
    holes_passed h = {IDMAP_NONE, objects, tmp_n};
    for (;;) {
        const cls *c = class_find(m, next);
        if (!c || !c->dumped || 2 + c->nstatics > tmp_end - h.tmp_n)
            return h;
        gcs_assert_internal(m->class_edge[c - (const cls *)m->classes.p] == UINT64_MAX);
        m->g->edge_start[first_index + h.objects] = h.tmp_n;
        for (uint64_t k = 0; k < 2 + c->nstatics; k++) /* resolve_refs passes them over */
            m->edst[h.tmp_n + k] = REF_NULL;
        h.tmp_n += 2 + c->nstatics;
        if (++h.objects >= run)
            return h;
        next = _gcs_idmap_next(map, cur);
        if (next == id) {
            h.idx = (uint32_t)(first_index + h.objects);
            return h;
        }
    }
}

/* Direct: the index of the chunk's next object, whose id is oid -- the
 * cursor's next id, past any class holes (past_holes) -- or IDMAP_NONE
 * where the chunk's run has ended or oid is not that id (the dump changed
 * between the passes).  objects and tmp_n: the chunk's counts so far,
 * advanced past the holes. */
__attribute__((always_inline)) static inline uint32_t run_index(imp *m, const _gcs_idmap *map, _gcs_idmap_cursor *cur,
                                                                uint64_t oid, uint64_t first_index,
                                                                uint64_t chunk_objects, uint64_t *objects,
                                                                uint64_t *tmp_n, uint64_t tmp_end)
{
    if (*objects >= chunk_objects)
        return IDMAP_NONE;
    uint64_t next = _gcs_idmap_next(map, cur);
    if (next == oid)
        return (uint32_t)(first_index + *objects);
    holes_passed h = past_holes(m, map, cur, next, oid, first_index, chunk_objects, *objects, *tmp_n, tmp_end);
    *objects = h.objects;
    *tmp_n = h.tmp_n;
    return h.idx;
}

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

/* ---- references resolved in batches ---------------------------------------------------- */

/* A dump whose references go to random places spends pass 2 waiting on
 * the id map's words, one lookup per reference, which the look-ahead
 * prefetches only as far as it parses ahead (16 records).  So pass 2 may
 * store each reference as its granule (ref_code: the id map's coordinate,
 * computed without loading anything) and leave the lookups to a loop of
 * their own (resolve_refs), which does nothing else and so keeps many in
 * flight: the word of the reference REF_AHEAD places on is prefetched.
 * Direct, every chunk's references fill a range of the snapshot's edges,
 * resolved right after pass 2 read the chunk, still in the cache; where
 * that pays is a chunk's look-ahead choice (lookahead_choice): a tree or
 * list, whose lookups hit, does not batch them.  Out of address order the
 * records hold the codes, and edge_worker resolves a bucket's edges once
 * it has put them in order; an object's own lookup cannot wait (its
 * bucket depends on it). */
#define REF_AHEAD 32

/* Reference ref as resolve_refs takes it: REF_NULL, REF_MISSING, or its
 * granule (m->batchable: below REF_MISSING). */
__attribute__((always_inline)) static inline uint32_t ref_code(const _gcs_idmap *map, uint64_t ref)
{
    if (!ref)
        return REF_NULL;
    uint64_t g;
    return _gcs_idmap_granule(map, ref, &g) ? (uint32_t)g : REF_MISSING;
}

/* e[0..n) from codes to indices: ref_index's for the references the codes
 * stand for. */
__attribute__((always_inline)) static inline void resolve_refs_hw(const _gcs_idmap *map, uint32_t *e, uint64_t n,
                                                                  int hw, uint64_t *found, uint64_t *missing)
{
    uint64_t f = 0, miss = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i + REF_AHEAD < n && e[i + REF_AHEAD] < REF_MISSING)
            _gcs_idmap_prefetch_granule(map, e[i + REF_AHEAD]);
        uint32_t c = e[i];
        if (c == REF_NULL)
            continue;
        uint32_t t = c == REF_MISSING ? IDMAP_NONE : _gcs_idmap_find_granule_hw(map, c, hw);
        miss += t == IDMAP_NONE;
        f += t != IDMAP_NONE;
        e[i] = t == IDMAP_NONE ? GCS_SNAPSHOT_NULL : t;
    }
    *found += f;
    *missing += miss;
}

#if defined(__x86_64__) || defined(__i386__)
#define TARGET_POPCNT __attribute__((target("popcnt")))
#else /* never called: _gcs_cpu_popcnt says no */
#define TARGET_POPCNT
#endif

static void resolve_refs_sw(const _gcs_idmap *map, uint32_t *e, uint64_t n, uint64_t *found, uint64_t *missing)
{
    resolve_refs_hw(map, e, n, 0, found, missing);
}

TARGET_POPCNT static void resolve_refs_popcnt(const _gcs_idmap *map, uint32_t *e, uint64_t n, uint64_t *found,
                                              uint64_t *missing)
{
    resolve_refs_hw(map, e, n, 1, found, missing);
}

/* References e[0..n) stored as codes (pass2's batch), resolved: direct,
 * a chunk's edges after pass 2 read it; out of address order, a bucket's
 * after edge_worker put them in order. */
static void resolve_refs(const imp *m, uint32_t *e, uint64_t n, uint64_t *found, uint64_t *missing)
{
    const _gcs_idmap map = m->map; /* in locals: the stores are of uint32_t */
    if (m->popcnt)
        resolve_refs_popcnt(&map, e, n, found, missing);
    else
        resolve_refs_sw(&map, e, n, found, missing);
}

/* The index of the object with id, the next one of the chunk w reads, or
 * IDMAP_NONE.  Direct, the chunk's objects are a run of indices whose ids
 * pass 1 saw in this order: the next index, once the id is checked to be
 * the next of those ids (a dump that changed between the passes is caught
 * here, before an index outside the chunk's run could be written).
 * Otherwise the id map's lookup. */
__attribute__((always_inline)) static inline uint32_t object_index(imp *m, pass2 *w, uint64_t id, int hw)
{
    if (!m->direct)
        return _gcs_idmap_find_hw(&m->map, id, hw);
    return run_index(m, &m->map, &w->cur, id, w->first_index, w->chunk_objects, &w->objects, &w->tmp_n, w->tmp_end);
}

/* A snapshot object's size in words: the JVM's bytes after an 8-byte
 * header (jvm_bytes >= 8; callers check), rounded up, but at least one
 * word per reference and one in all. */
static inline uint64_t object_words(uint64_t jvm_bytes, uint64_t nptrs)
{
    uint64_t payload = (jvm_bytes - 8 + 7) / 8, words = payload > nptrs ? payload : nptrs;
    return words ? words : 1;
}

static int place(imp *m, pass2 *w, uint64_t id, uint64_t off, uint64_t jvm_bytes, uint64_t nptrs, uint32_t type)
{
    uint32_t idx = 0, local = 0;
    uint64_t b = 0;
    gcs_snapshot *g = m->g;
    if (m->direct ? (idx = object_index(m, w, id, 0)) == IDMAP_NONE : !rec_bucket(&m->gb, &m->map, m->bshift, id, 0, &b, &local))
        return hr_fail(w->r, off, PLACE_UNKNOWN);
    uint64_t words = object_words(jvm_bytes, nptrs);
    if (words > UINT32_MAX || nptrs > UINT32_MAX)
        return hr_fail(w->r, off, "object too large for a snapshot (2^32 words)");
    if (nptrs + (m->direct ? 0 : TMP_HEADER) > w->tmp_end - w->tmp_n)
        return hr_fail(w->r, off, PLACE_TOO_MANY_REFS);
    if (m->direct) {
        g->words[idx] = (uint32_t)words;
        g->nptrs[idx] = (uint32_t)nptrs;
        g->type[idx] = type;
        g->edge_start[idx] = w->tmp_n;
        w->wp = m->edst + w->tmp_n;
    } else {
        uint32_t *h = tmp_room(m, w->wk, w->wk->fill, b, TMP_HEADER + nptrs);
        if (!h)
            return hr_fail(w->r, off, "out of memory");
        h[0] = local;
        h[1] = (uint32_t)words;
        h[2] = (uint32_t)nptrs;
        h[3] = type;
        w->wp = h + TMP_HEADER;
        w->tmp_n += TMP_HEADER;
        w->wk->block_refs[b] += nptrs;
    }
    w->jvm_bytes += jvm_bytes;
    w->objects++;
    return 0;
}

static inline void add_ref(imp *m, pass2 *w, uint64_t ref)
{
    *w->wp++ = w->batch ? ref_code(&m->map, ref) : ref_index(&m->map, ref, 0, &w->references, &w->missing_refs);
    w->tmp_n++;
}

static uint64_t align8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

static int value_size(const imp *m, uint8_t type)
{
    if (type == B_OBJECT)
        return (int)m->idsz;
    return type < 12 && prim_size[type] ? prim_size[type] : -1;
}

static int jvm_value_size(const imp *m, uint8_t type) { return type == B_OBJECT ? (int)m->ref : prim_size[type]; }

/* CLASS_DUMP: pass 1 (w NULL) keeps its fields and statics; pass 2 places
 * the class object (the mirror: java.lang.Class's fields plus the statics)
 * with edges to its superclass, its loader and its static references. */
static int class_dump(imp *m, hr *r, pass2 *w, uint64_t off, uint64_t seg_end)
{
    int pass = w ? 2 : 1;
    size_t fixed = 7 * m->idsz + 8 + 2;
    if (hr_off(r) + fixed > seg_end)
        return hr_fail(r, off, "class dump runs past the end of its segment");
    if (hr_more(r, fixed, "a class dump") < 0)
        return -1;
    const uint8_t *p = r->buf + r->pos;
    uint64_t id = get_id(m, p), super = get_id(m, p + m->idsz + 4), loader = get_id(m, p + 2 * m->idsz + 4);
    uint16_t ncp = be16(p + 7 * m->idsz + 8);
    r->pos += fixed;
    cls *c = NULL;
    if (pass == 1) {
        if (!id)
            return hr_fail(r, off, "class dump of class id 0");
        c = class_get(m, id);
        if (!c)
            return hr_fail(r, off, "out of memory");
        if (c->dumped)
            return hr_fail(r, off, "class dumped twice");
        c->dumped = 1;
        c->super = super;
        c->loader = loader;
        if (note_object(m, id, off, seg_end, 1) < 0)
            return hr_fail(r, off, "out of memory");
        m->rep.classes++;
        m->cur_fixed_refs += 2;
        m->cur_class_refs += 2;
    } else {
        c = class_find(m, id);
    }
    /* constant pool: u2 index, u1 type, value */
    for (unsigned k = 0; k < ncp; k++) {
        if (hr_off(r) + 3 > seg_end || hr_more(r, 3, "a constant pool entry") < 0)
            return hr_off(r) + 3 > seg_end ? hr_fail(r, off, "class dump runs past the end of its segment") : -1;
        int vs = value_size(m, r->buf[r->pos + 2]);
        if (vs < 0)
            return hr_fail(r, hr_off(r), "constant pool entry of unknown type");
        if (hr_off(r) + 3 + (uint64_t)vs > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_skip(r, 3 + (uint64_t)vs, "a constant pool entry") < 0)
            return -1;
    }
    /* statics: id name, u1 type, value */
    if (hr_off(r) + 2 > seg_end || hr_more(r, 2, "a class dump") < 0)
        return hr_off(r) + 2 > seg_end ? hr_fail(r, off, "class dump runs past the end of its segment") : -1;
    uint16_t nst = be16(r->buf + r->pos);
    r->pos += 2;
    if (pass == 1) {
        c->static_start = m->statics.n;
        c->static_bytes = 0;
    }
    uint64_t nstatic_refs = 0;
    for (unsigned k = 0; k < nst; k++) {
        if (hr_off(r) + m->idsz + 1 > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_more(r, m->idsz + 1, "a static field") < 0)
            return -1;
        uint8_t type = r->buf[r->pos + m->idsz];
        int vs = value_size(m, type);
        if (vs < 0)
            return hr_fail(r, hr_off(r), "static field of unknown type");
        if (hr_off(r) + m->idsz + 1 + (uint64_t)vs > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_more(r, m->idsz + 1 + (size_t)vs, "a static field") < 0)
            return -1;
        if (type == B_OBJECT) {
            nstatic_refs++;
            if (pass == 1) {
                uint64_t *v = vec_push(&m->statics);
                if (!v)
                    return hr_fail(r, off, "out of memory");
                *v = get_id(m, r->buf + r->pos + m->idsz + 1);
            }
        }
        if (pass == 1)
            c->static_bytes += (uint32_t)jvm_value_size(m, type);
        r->pos += m->idsz + 1 + (size_t)vs;
    }
    if (pass == 1)
        c->nstatics = nstatic_refs;
    /* instance fields: id name, u1 type */
    if (hr_off(r) + 2 > seg_end || hr_more(r, 2, "a class dump") < 0)
        return hr_off(r) + 2 > seg_end ? hr_fail(r, off, "class dump runs past the end of its segment") : -1;
    uint16_t nif = be16(r->buf + r->pos);
    r->pos += 2;
    if (pass == 1)
        c->field_start = m->fields.n, c->nfields = nif;
    for (unsigned k = 0; k < nif; k++) {
        if (hr_off(r) + m->idsz + 1 > seg_end)
            return hr_fail(r, off, "class dump runs past the end of its segment");
        if (hr_more(r, m->idsz + 1, "an instance field") < 0)
            return -1;
        uint8_t type = r->buf[r->pos + m->idsz];
        if (value_size(m, type) < 0)
            return hr_fail(r, hr_off(r), "instance field of unknown type");
        if (pass == 1) {
            uint8_t *t = vec_push(&m->fields);
            if (!t)
                return hr_fail(r, off, "out of memory");
            *t = type;
        }
        r->pos += m->idsz + 1;
    }
    if (pass == 1) {
        m->nfields_total += 2 + nstatic_refs;
        m->cur_fixed_refs += nstatic_refs;
        m->cur_class_refs += nstatic_refs;
        return 0;
    }
    /* Direct, the mirror is written after pass 2 (write_classes), at the
     * place the run that holds its index kept for it. */
    if (m->direct)
        return 0;
    /* pass 2: the mirror */
    cls *jlc = m->jlc < m->classes.n ? (cls *)m->classes.p + m->jlc : NULL;
    uint64_t size = align8((jlc ? jlc->jvm_size : m->hdr) + c->static_bytes);
    if (place(m, w, id, off, size, 2 + c->nstatics, m->class_type) < 0)
        return -1;
    add_ref(m, w, c->super);
    add_ref(m, w, c->loader);
    if (c->nstatics) { /* statics.p is NULL while no class has a static reference */
        const uint64_t *sv = (const uint64_t *)m->statics.p + c->static_start;
        for (uint64_t k = 0; k < c->nstatics; k++)
            add_ref(m, w, sv[k]);
    }
    return 0;
}

static const char *sub_name(uint8_t tag)
{
    switch (tag) {
    case S_INSTANCE_DUMP: return "an instance dump";
    case S_OBJ_ARRAY_DUMP: return "an object array dump";
    case S_PRIM_ARRAY_DUMP: return "a primitive array dump";
    default: return "a root record";
    }
}

/* Fixed bytes after the tag of a root sub-record; 0 for other tags. */
static size_t root_bytes(const imp *m, uint8_t tag)
{
    size_t id = m->idsz;
    switch (tag) {
    case S_ROOT_UNKNOWN: case S_ROOT_STICKY_CLASS: case S_ROOT_MONITOR_USED: case S_ROOT_INTERNED_STRING:
    case S_ROOT_FINALIZING: case S_ROOT_DEBUGGER: case S_ROOT_REFERENCE_CLEANUP: case S_ROOT_VM_INTERNAL:
    case S_UNREACHABLE:
        return id;
    case S_ROOT_JNI_GLOBAL: return 2 * id;
    case S_ROOT_JNI_LOCAL: case S_ROOT_JAVA_FRAME: case S_ROOT_THREAD_OBJECT: case S_ROOT_JNI_MONITOR:
        return id + 8;
    case S_ROOT_NATIVE_STACK: case S_ROOT_THREAD_BLOCK: return id + 4;
    default: return 0;
    }
}

/* ---- pass 2's look-ahead ---------------------------------------------------------------- */

/* In a dump that is not in address order, or whose references go to
 * random places, pass 2's time goes into cache misses on the id map's
 * words, one for each object and reference (a lookup).  One at a time they
 * would be paid in series; so a cursor runs AHEAD_FAR records ahead of the
 * record being read, parsing only what it needs of the records wholly
 * inside the window, and prefetches the id map's words of each object and
 * its first references.  It parses a record's header again (and looks its
 * class up: one entry cached), which a dump whose lookups hit pays for
 * nothing: whether to look ahead is chosen per chunk by timing
 * (lookahead_choice).  A class dump, a record running out of the window or
 * the chunk's end stops the cursor until the reading catches up.  (Where an
 * object's record goes needs no prefetch: a bucket's open block, tmp_room.) */
#define AHEAD_FAR 16
#define AHEAD_REFS 8 /* references per object prefetched */

/* One record at dump offset off for the cursor: its prefetches, and the
 * next record's offset; 0 when the cursor cannot step over it. */
static uint64_t ahead_step(imp *m, const hr *r, pass2 *w, uint64_t off, uint64_t lim)
{
    const size_t id = m->idsz;
    uint64_t p = off - r->base;
    if (off >= lim || p + 2 * id + 9 > r->len)
        return 0;
    const uint8_t *q = r->buf + p;
    uint64_t oid = get_id(m, q + 1), next;
    switch (q[0]) {
    case S_INSTANCE_DUMP: {
        uint32_t nbytes = be32(q + 1 + 2 * id + 4);
        next = off + 1 + 2 * id + 8 + nbytes;
        if (next > lim)
            return 0;
        if (next - r->base <= r->len) {
            uint64_t cid = get_id(m, q + 1 + id + 4);
            const cls *c = cid == w->la_cid ? w->la_c : class_find(m, cid);
            w->la_cid = cid;
            w->la_c = c;
            if (c && c->dumped && c->value_bytes == nbytes && c->nrefs && !w->batch) {
                const uint32_t *ro = (const uint32_t *)m->refs.p + c->ref_start;
                const uint8_t *v = q + 1 + 2 * id + 8;
                for (uint32_t k = 0; k < c->nrefs && k < AHEAD_REFS; k++)
                    _gcs_idmap_prefetch(&m->map, get_id(m, v + ro[k]));
            }
        }
        break;
    }
    case S_OBJ_ARRAY_DUMP: {
        uint64_t n = be32(q + 1 + id + 4);
        next = off + 1 + 2 * id + 8 + n * id;
        if (next > lim)
            return 0;
        const uint8_t *v = q + 1 + 2 * id + 8;
        for (uint64_t k = 0; k < n && k < AHEAD_REFS && !w->batch && p + 2 * id + 9 + (k + 1) * id <= r->len; k++)
            _gcs_idmap_prefetch(&m->map, get_id(m, v + k * id));
        break;
    }
    case S_PRIM_ARRAY_DUMP:
    case S_PRIM_ARRAY_NODATA: {
        uint64_t n = be32(q + 1 + id + 4);
        uint8_t et = q[1 + id + 8];
        if (et >= 12 || !prim_size[et])
            return 0;
        next = off + 1 + id + 9 + (q[0] == S_PRIM_ARRAY_DUMP ? n * prim_size[et] : 0);
        if (next > lim)
            return 0;
        break;
    }
    default:
        return 0;
    }
    _gcs_idmap_prefetch(&m->map, oid);
    return next;
}

/* Called at each record (dump offset off) pass 2 reads: keeps the cursor
 * its distance ahead. */
static inline void prefetch_ahead(imp *m, const hr *r, pass2 *w, uint64_t off, uint64_t lim)
{
    if (w->far_off <= off) {
        w->far_off = off;
        w->far_n = 0;
    } else {
        w->far_n--;
    }
    while (w->far_n < AHEAD_FAR) {
        uint64_t next = ahead_step(m, r, w, w->far_off, lim);
        if (!next)
            break;
        w->far_off = next;
        w->far_n++;
    }
}

/* The look-ahead of a run of instances (run2), at the record at pos of
 * rec bytes: prefetch_ahead's, without parsing the records ahead, which are
 * taken to be of the run's class -- where one is not, a prefetch is
 * wasted, nothing else: the bytes read stay inside the window.  Direct, the
 * object's own id needs no lookup (object_index).  0, nothing prefetched,
 * where the record AHEAD_FAR ahead is not in the window or not an instance
 * of the run's class cid: a dump that alternates instances and arrays in
 * short runs (a random graph of Node and Node[], as HotSpot's copying
 * collections leave it) needs the parsing cursor, prefetch_ahead, there, or
 * its lookups are not prefetched at all. */
__attribute__((always_inline)) static inline int run_ahead(const _gcs_idmap *map, const uint8_t *buf, size_t pos,
                                                           size_t len, uint64_t rec, size_t id, uint64_t cid,
                                                           const uint32_t *ro, uint32_t nrefs, int direct)
{
    const size_t fixed = 1 + 2 * id + 8;
    if (len - pos < (AHEAD_FAR + 1) * rec)
        return 0;
    const uint8_t *q = buf + pos + AHEAD_FAR * rec;
    if (q[0] != S_INSTANCE_DUMP || read_id(q + 1 + id + 4, id) != cid)
        return 0;
    for (uint32_t k = 0; k < nrefs && k < AHEAD_REFS; k++)
        _gcs_idmap_prefetch(map, read_id(q + fixed + ro[k], id));
    if (!direct)
        _gcs_idmap_prefetch(map, read_id(q + 1, id));
    return 1;
}

/* The class of an object array's record, class id acid: the last one's,
 * mostly (an application's arrays of one type lie together). */
static inline const cls *array_class(imp *m, pass2 *w, uint64_t acid)
{
    if (!w->ac_known || acid != w->acid) {
        w->ac = class_find(m, acid);
        w->acid = acid;
        w->ac_known = 1;
    }
    return w->ac;
}

/* Pass 2 over a run of instance dumps of the class of the last instance
 * read (w->c) and object array dumps, in any mix, from the stream's
 * position: each one placed and its references added, as the generic path
 * does (place, add_ref), without its per-record dispatch and window checks,
 * with what place computes from the class done once for the run, and the
 * counts kept in registers.  One run takes both, since a dump may alternate
 * them record by record (a random graph of Node and Node[], as HotSpot's
 * copying collections leave it): a run per record would pay its setup per
 * record.  The run stops, before the record, at the first one that is of
 * another tag, an instance of another class or whose field bytes are not
 * its class's, an array too large for a snapshot, a record not wholly in
 * the window or the segment (end), or at or past stop -- the generic path
 * takes it and reports any error.  The records taken, or -1 when an object
 * cannot be placed (err set, with place's message).
 *
 * hw and direct are constants, so that each of the four versions (runs2)
 * is compiled for its case: hw, the lookups' popcount as the popcnt
 * instruction (a function built for it); direct, the objects stored at
 * their indices (object_index) rather than as records in their buckets
 * (tmp_room). */
__attribute__((always_inline)) static inline int64_t run2(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop,
                                                          int hw, int direct)
{
    const size_t id = m->idsz, fixed = 1 + 2 * id + 8;
    const uint64_t lim = end < stop ? end : stop, ahdr = m->ahdr, ref = m->ref;
    /* the instances' class: what place computes from it, once; inst 0: the
     * run takes no instance */
    const cls *c = w->c;
    int inst = c && c->dumped && c->value_bytes <= HPROF_BUF && (direct || m->classes.n <= UINT32_MAX);
    const uint64_t cid = w->cid, rec = inst ? fixed + c->value_bytes : 0;
    const uint32_t nrefs = inst ? c->nrefs : 0, nbytes = inst ? c->value_bytes : 0, type = inst ? c->type : 0;
    const uint32_t *ro = nrefs ? (const uint32_t *)m->refs.p + c->ref_start : NULL;
    const uint64_t words = inst ? object_words(c->jvm_size, nrefs) : 0;
    if (inst && (c->jvm_size < 8 || words > UINT32_MAX))
        inst = 0; /* place says what is wrong */
    const uint64_t need = nrefs + (direct ? 0 : TMP_HEADER);
    /* not direct: the records' class (run_classes), their words in the pool */
    const uint32_t cix = inst ? (uint32_t)(c - (const cls *)m->classes.p) : 0;
    const uint64_t run_words = TMP_RUN_HEADER + (uint64_t)nrefs;
    gcs_assert_internal(!inst || direct
                        || (m->ctab[cix].words == words && m->ctab[cix].nrefs == nrefs && m->ctab[cix].type == type));
    /* in locals: the stores below are of uint32_t, which the compiler must
     * otherwise assume may change the map's fields and reload them */
    const _gcs_idmap map = m->map;
    _gcs_idmap_cursor cur = w->cur;
    const uint8_t *buf = r->buf;
    const uint64_t base = r->base, first_index = w->first_index, chunk_objects = w->chunk_objects;
    const size_t len = r->len;
    size_t pos = r->pos;
    const gcs_snapshot *g = m->g;
    uint32_t *edst = m->edst, *g_words = g->words, *g_nptrs = g->nptrs, *g_type = g->type;
    uint64_t *g_start = g->edge_start;
    worker *wk = w->wk;
    tmp_fill *fill = direct ? NULL : wk->fill;
    uint64_t *block_refs = direct ? NULL : wk->block_refs;
    const unsigned bshift = m->bshift;
    const gbk gb = m->gb;
    const uint64_t tmp_end = w->tmp_end;
    uint64_t tmp_n = w->tmp_n, objects = w->objects, found = 0, missing = 0, jvm_bytes = 0;
    const int batch = w->batch;
    int64_t k = 0, instances = 0;
    const char *bad = NULL;
    for (;;) {
        uint64_t off = base + pos;
        if (off >= lim || len - pos < fixed)
            break;
        const uint8_t *p = buf + pos;
        __builtin_prefetch(p + READ_AHEAD);
        if (p[0] == S_INSTANCE_DUMP) {
            if (!inst || len - pos < rec || off + rec > end || read_id(p + 1 + id + 4, id) != cid
                || be32(p + 1 + 2 * id + 4) != nbytes)
                break;
            if (w->ahead && !run_ahead(&map, buf, pos, len, rec, id, cid, ro, batch ? 0 : nrefs, direct))
                prefetch_ahead(m, r, w, off, lim);
            uint64_t oid = read_id(p + 1, id), b = 0;
            uint32_t idx = 0, local = 0;
            if (direct)
                idx = run_index(m, &map, &cur, oid, first_index, chunk_objects, &objects, &tmp_n, tmp_end);
            else if (!rec_bucket(&gb, &map, bshift, oid, hw, &b, &local))
                idx = IDMAP_NONE;
            if (idx == IDMAP_NONE || need > tmp_end - tmp_n) {
                bad = idx == IDMAP_NONE ? PLACE_UNKNOWN : PLACE_TOO_MANY_REFS;
                break;
            }
            uint32_t *out;
            if (direct) {
                g_words[idx] = (uint32_t)words;
                g_nptrs[idx] = nrefs;
                g_type[idx] = type;
                g_start[idx] = tmp_n;
                out = edst + tmp_n;
            } else {
                uint32_t *h = tmp_room(m, wk, fill, b, run_words);
                if (!h) {
                    bad = "out of memory";
                    break;
                }
                h[0] = local | TMP_RUN;
                h[1] = cix;
                out = h + TMP_RUN_HEADER;
                tmp_n += TMP_HEADER;
                block_refs[b] += nrefs;
            }
            if (batch)
                for (uint32_t j = 0; j < nrefs; j++)
                    out[j] = ref_code(&map, read_id(p + fixed + ro[j], id));
            else
                for (uint32_t j = 0; j < nrefs; j++)
                    out[j] = ref_index(&map, read_id(p + fixed + ro[j], id), hw, &found, &missing);
            tmp_n += nrefs;
            objects++;
            pos += rec;
            k++;
            instances++;
            continue;
        }
        if (p[0] != S_OBJ_ARRAY_DUMP)
            break;
        const uint64_t n = be32(p + 1 + id + 4), arec = fixed + n * id;
        if (len - pos < arec || off + arec > end)
            break;
        const uint64_t bytes = align8(ahdr + n * ref), awords = object_words(bytes, n);
        if (awords > UINT32_MAX)
            break;
        if (w->ahead)
            prefetch_ahead(m, r, w, off, lim);
        const cls *ac = array_class(m, w, read_id(p + 1 + id + 8, id));
        const uint32_t atype = ac && ac->dumped ? ac->type : GCS_SNAPSHOT_TYPE_NONE;
        uint64_t oid = read_id(p + 1, id), b = 0;
        uint32_t idx = 0, local = 0;
        if (direct)
            idx = run_index(m, &map, &cur, oid, first_index, chunk_objects, &objects, &tmp_n, tmp_end);
        else if (!rec_bucket(&gb, &map, bshift, oid, hw, &b, &local))
            idx = IDMAP_NONE;
        if (idx == IDMAP_NONE || n + (direct ? 0 : TMP_HEADER) > tmp_end - tmp_n) {
            bad = idx == IDMAP_NONE ? PLACE_UNKNOWN : PLACE_TOO_MANY_REFS;
            break;
        }
        uint32_t *out;
        if (direct) {
            g_words[idx] = (uint32_t)awords;
            g_nptrs[idx] = (uint32_t)n;
            g_type[idx] = atype;
            g_start[idx] = tmp_n;
            out = edst + tmp_n;
        } else {
            uint32_t *h = tmp_room(m, wk, fill, b, TMP_HEADER + n);
            if (!h) {
                bad = "out of memory";
                break;
            }
            h[0] = local;
            h[1] = (uint32_t)awords;
            h[2] = (uint32_t)n;
            h[3] = atype;
            out = h + TMP_HEADER;
            tmp_n += TMP_HEADER;
            block_refs[b] += n;
        }
        const uint8_t *v = p + fixed;
        if (batch)
            for (uint64_t j = 0; j < n; j++)
                out[j] = ref_code(&map, read_id(v + j * id, id));
        else
            for (uint64_t j = 0; j < n; j++)
                out[j] = ref_index(&map, read_id(v + j * id, id), hw, &found, &missing);
        tmp_n += n;
        objects++;
        jvm_bytes += bytes;
        pos += arec;
        k++;
    }
    r->pos = pos;
    w->cur = cur;
    w->tmp_n = tmp_n;
    w->objects = objects;
    w->references += found;
    w->missing_refs += missing;
    w->jvm_bytes += jvm_bytes + (inst ? (uint64_t)instances * c->jvm_size : 0);
    return bad ? hr_fail(r, hr_off(r), bad) : k;
}

/* The four versions of a pass-2 run (hw: popcnt; direct: stored at the
 * indices), each compiled for its case, and name, which calls the one for
 * this CPU and dump. */
#define PASS2_RUN_VERSIONS(name, run)                                                                              \
    static int64_t name##_sw(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                                \
    {                                                                                                              \
        return run(m, r, w, end, stop, 0, 0);                                                                      \
    }                                                                                                              \
    static int64_t name##_sw_direct(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                         \
    {                                                                                                              \
        return run(m, r, w, end, stop, 0, 1);                                                                      \
    }                                                                                                              \
    TARGET_POPCNT static int64_t name##_hw(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                  \
    {                                                                                                              \
        return run(m, r, w, end, stop, 1, 0);                                                                      \
    }                                                                                                              \
    TARGET_POPCNT static int64_t name##_hw_direct(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)           \
    {                                                                                                              \
        return run(m, r, w, end, stop, 1, 1);                                                                      \
    }                                                                                                              \
    static int64_t name(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)                                     \
    {                                                                                                              \
        if (m->popcnt)                                                                                             \
            return m->direct ? name##_hw_direct(m, r, w, end, stop) : name##_hw(m, r, w, end, stop);              \
        return m->direct ? name##_sw_direct(m, r, w, end, stop) : name##_sw(m, r, w, end, stop);                  \
    }

PASS2_RUN_VERSIONS(runs2, run2)

/* The sub-records of a heap dump (segment) whose body ends at end, from
 * the stream's position up to end or stop, whichever comes first (pass 2's
 * chunk ends at stop).  Pass 1: w NULL; it cuts chunks at the sub-records. */
static int heap_records(imp *m, hr *r, pass2 *w, uint64_t end, uint64_t stop)
{
    const int pass = w ? 2 : 1;
    const size_t id = m->idsz;
    while (hr_off(r) < end && hr_off(r) < stop) {
        uint64_t off = hr_off(r);
        if (pass == 1 && off >= *m->cut_at && chunk_open(m, off, end) < 0)
            return -1;
        if (pass == 1 && object_run(m, r, end))
            continue;
        if (pass == 2) {
            int64_t k = runs2(m, r, w, end, stop);
            if (k < 0)
                return -1;
            if (k)
                continue;
        }
        if (pass == 2 && w->ahead)
            prefetch_ahead(m, r, w, off, end < stop ? end : stop);
        if (hr_more(r, 1, "a sub-record tag") < 0)
            return -1;
        uint8_t tag = r->buf[r->pos++];
        size_t rb = root_bytes(m, tag);
        if (rb) {
            if (off + 1 + rb > end)
                return hr_fail(r, off, "root record runs past the end of its segment");
            if (hr_more(r, rb, "a root record") < 0)
                return -1;
            if (pass == 1 && tag != S_UNREACHABLE) {
                uint64_t *v = vec_push(&m->rootids);
                if (!v)
                    return hr_fail(r, off, "out of memory");
                *v = get_id(m, r->buf + r->pos);
                m->rep.root_records++;
            }
            r->pos += rb;
            continue;
        }
        switch (tag) {
        case S_CLASS_DUMP:
            if (class_dump(m, r, w, off, end) < 0)
                return -1;
            break;
        case S_HEAP_DUMP_INFO:
            if (off + 1 + 4 + id > end)
                return hr_fail(r, off, "heap dump info runs past the end of its segment");
            if (hr_skip(r, 4 + id, "heap dump info") < 0)
                return -1;
            break;
        case S_INSTANCE_DUMP: {
            size_t fixed = 2 * id + 8;
            if (off + 1 + fixed > end)
                return hr_fail(r, off, "instance dump runs past the end of its segment");
            if (hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), cid = get_id(m, p + id + 4);
            uint32_t nbytes = be32(p + 2 * id + 4);
            r->pos += fixed;
            if (off + 1 + fixed + nbytes > end)
                return hr_fail(r, off, "instance dump runs past the end of its segment");
            if (pass == 1) {
                /* consecutive instances are often of one class */
                cls *c = cid && cid == m->last_cid ? (cls *)m->classes.p + m->last_cls : class_get(m, cid);
                if (c) {
                    m->last_cid = cid;
                    m->last_cls = (size_t)(c - (cls *)m->classes.p);
                }
                if (!c || note_object(m, oid, off, end, 0) < 0)
                    return hr_fail(r, off, "out of memory");
                c->instances++;
                if (!c->chunk_count++) {
                    uint32_t *t = vec_push(&m->touched);
                    if (!t)
                        return hr_fail(r, off, "out of memory");
                    *t = (uint32_t)(c - (cls *)m->classes.p);
                }
                m->rep.instances++;
                if (hr_skip(r, nbytes, sub_name(tag)) < 0)
                    return -1;
                break;
            }
            const cls *c = cid == w->cid ? w->c : class_find(m, cid);
            w->cid = cid;
            w->c = c;
            if (!c || !c->dumped) {
                char msg[96];
                snprintf(msg, sizeof msg, "instance of class 0x%llx, which the dump does not describe",
                         (unsigned long long)cid);
                return hr_fail(r, off, msg);
            }
            if (nbytes != c->value_bytes) {
                char msg[128];
                snprintf(msg, sizeof msg, "instance with %u bytes of field values, its class declares %u",
                         nbytes, c->value_bytes);
                return hr_fail(r, off, msg);
            }
            if (nbytes > HPROF_BUF)
                return hr_fail(r, off, "instance with more than 4 MiB of field values");
            if (hr_more(r, nbytes, sub_name(tag)) < 0)
                return -1;
            if (place(m, w, oid, off, c->jvm_size, c->nrefs, c->type) < 0)
                return -1;
            const uint8_t *v = r->buf + r->pos;
            if (c->nrefs) { /* refs.p is NULL while no class has a reference field */
                const uint32_t *ro = (const uint32_t *)m->refs.p + c->ref_start;
                for (uint32_t k = 0; k < c->nrefs; k++)
                    add_ref(m, w, get_id(m, v + ro[k]));
            }
            r->pos += nbytes;
            break;
        }
        case S_OBJ_ARRAY_DUMP: {
            size_t fixed = 2 * id + 8;
            if (off + 1 + fixed > end)
                return hr_fail(r, off, "object array dump runs past the end of its segment");
            if (hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), n = be32(p + id + 4), acid = get_id(m, p + id + 8);
            r->pos += fixed;
            if (off + 1 + fixed + n * id > end)
                return hr_fail(r, off, "object array dump runs past the end of its segment");
            if (pass == 1) {
                if (note_object(m, oid, off, end, 0) < 0)
                    return hr_fail(r, off, "out of memory");
                m->nfields_total += n;
                m->cur_fixed_refs += n;
                m->rep.object_arrays++;
                if (hr_skip(r, n * id, sub_name(tag)) < 0)
                    return -1;
                break;
            }
            const cls *ac = array_class(m, w, acid);
            if (place(m, w, oid, off, align8(m->ahdr + n * m->ref), n,
                      ac && ac->dumped ? ac->type : GCS_SNAPSHOT_TYPE_NONE) < 0)
                return -1;
            for (uint64_t k = 0; k < n;) {
                size_t chunk = n - k > HPROF_BUF / 8 ? HPROF_BUF / 8 : (size_t)(n - k);
                if (hr_more(r, chunk * id, sub_name(tag)) < 0)
                    return -1;
                const uint8_t *q = r->buf + r->pos;
                if (id == 8)
                    for (size_t j = 0; j < chunk; j++)
                        add_ref(m, w, be64(q + 8 * j));
                else
                    for (size_t j = 0; j < chunk; j++)
                        add_ref(m, w, be32(q + 4 * j));
                r->pos += chunk * id;
                k += chunk;
            }
            break;
        }
        case S_PRIM_ARRAY_DUMP:
        case S_PRIM_ARRAY_NODATA: {
            size_t fixed = id + 9;
            if (off + 1 + fixed > end)
                return hr_fail(r, off, "primitive array dump runs past the end of its segment");
            if (hr_more(r, fixed, sub_name(tag)) < 0)
                return -1;
            const uint8_t *p = r->buf + r->pos;
            uint64_t oid = get_id(m, p), n = be32(p + id + 4);
            uint8_t et = p[id + 8];
            r->pos += fixed;
            if (et >= 12 || !prim_size[et])
                return hr_fail(r, off, "primitive array of unknown element type");
            uint64_t data = tag == S_PRIM_ARRAY_DUMP ? n * prim_size[et] : 0;
            if (off + 1 + fixed + data > end)
                return hr_fail(r, off, "primitive array dump runs past the end of its segment");
            if (pass == 1) {
                if (note_object(m, oid, off, end, 0) < 0)
                    return hr_fail(r, off, "out of memory");
                m->rep.primitive_arrays++;
            } else if (place(m, w, oid, off, align8(m->ahdr + n * prim_size[et]), 0, m->prim_type[et]) < 0) {
                return -1;
            }
            if (hr_skip(r, data, sub_name(tag)) < 0)
                return -1;
            break;
        }
        default: {
            char msg[96];
            snprintf(msg, sizeof msg, "unknown heap dump sub-record tag 0x%02x", tag);
            return hr_fail(r, off, msg);
        }
        }
    }
    if (hr_off(r) > end)
        return hr_fail(r, end, "sub-record runs past the end of its segment");
    return 0;
}

/* The file header: "JAVA PROFILE 1.0.x\0", u4 id size, u8 time. */
static int read_header(imp *m)
{
    hr *r = &m->r;
    static const char magic[] = "JAVA PROFILE 1.0.";
    if (hr_more(r, 19, "the header") < 0)
        return -1;
    if (memcmp(r->buf + r->pos, magic, sizeof magic - 1) != 0)
        return hr_fail(r, 0, "not an HPROF heap dump (no \"JAVA PROFILE 1.0.\" magic)");
    char v = (char)r->buf[r->pos + 17];
    if ((v != '1' && v != '2' && v != '3') || r->buf[r->pos + 18] != 0)
        return hr_fail(r, 17, "unsupported HPROF version (1.0.1, 1.0.2 and 1.0.3 are read)");
    snprintf(m->rep.version, sizeof m->rep.version, "1.0.%c", v);
    r->pos += 19;
    if (hr_more(r, 12, "the header") < 0)
        return -1;
    m->idsz = be32(r->buf + r->pos);
    if (m->idsz != 4 && m->idsz != 8) {
        char msg[80];
        snprintf(msg, sizeof msg, "identifier size %u (4 or 8 expected)", m->idsz);
        return hr_fail(r, hr_off(r), msg);
    }
    m->rep.id_bytes = m->idsz;
    m->timestamp_ms = be64(r->buf + r->pos + 4);
    r->pos += 12;
    return 0;
}

/* Pass 1 over the whole dump. */
static int scan(imp *m)
{
    hr *r = &m->r;
    if (read_header(m) < 0)
        return -1;
    for (;;) {
        uint64_t off = hr_off(r);
        int more = hr_more(r, 9, NULL);
        if (more < 0)
            return -1;
        if (more == 0)
            return chunk_close(m, off) < 0 ? hr_fail(r, off, "out of memory") : 0;
        if ((off >= *m->cut_at || !m->chunks.n) && chunk_open(m, off, 0) < 0)
            return -1;
        if (r->len - r->pos < 9)
            return hr_fail(r, off, "truncated dump: a record header needs 9 bytes");
        const uint8_t *p = r->buf + r->pos;
        uint8_t tag = p[0];
        uint32_t len = be32(p + 5);
        r->pos += 9;
        switch (tag) {
        case T_UTF8:
            if (len < m->idsz)
                return hr_fail(r, off, "string record shorter than an identifier");
            if (len <= HPROF_BUF) {
                if (hr_more(r, len, "a string record") < 0)
                    return -1;
                if (str_put(m, get_id(m, r->buf + r->pos), r->buf + r->pos + m->idsz, len - m->idsz) < 0)
                    return hr_fail(r, off, "out of memory");
                r->pos += len;
            } else if (hr_skip(r, len, "a string record") < 0) {
                return -1;
            }
            break;
        case T_LOAD_CLASS: {
            if (len != 8 + 2 * m->idsz)
                return hr_fail(r, off, "class load record of the wrong length");
            if (hr_more(r, len, "a class load record") < 0)
                return -1;
            cls *c = class_get(m, get_id(m, r->buf + r->pos + 4));
            if (!c)
                return hr_fail(r, off, "out of memory");
            c->name_sid = get_id(m, r->buf + r->pos + 8 + m->idsz);
            r->pos += len;
            break;
        }
        case T_HEAP_DUMP:
        case T_HEAP_DUMP_SEGMENT:
            if (heap_records(m, r, NULL, hr_off(r) + len, UINT64_MAX) < 0)
                return -1;
            break;
        case T_HEAP_DUMP_END:
        case 0x03: case 0x04: case 0x05: case 0x06: case 0x07: case 0x0A: case 0x0B: case 0x0D: case 0x0E:
            if (hr_skip(r, len, "a record") < 0)
                return -1;
            break;
        default:
            /* Framed by its length: a record of a later version or a vendor
             * is skipped, and counted in the report. */
            m->rep.skipped_records++;
            if (hr_skip(r, len, "a record") < 0)
                return -1;
        }
    }
}


/* ---- pass 2 ---------------------------------------------------------------------------- */

/* Pass 2 over chunk c, through w->r positioned at its start. */
static int run_chunk(imp *m, pass2 *w, const chunk *c)
{
    hr *r = w->r;
    if (c->seg_end && heap_records(m, r, w, c->seg_end, c->end) < 0)
        return -1;
    while (hr_off(r) < c->end) {
        uint64_t off = hr_off(r);
        if (hr_more(r, 9, "a record header") < 0)
            return -1;
        uint8_t tag = r->buf[r->pos];
        uint32_t len = be32(r->buf + r->pos + 5);
        r->pos += 9;
        if (tag == T_HEAP_DUMP || tag == T_HEAP_DUMP_SEGMENT) {
            if (heap_records(m, r, w, off + 9 + len, c->end) < 0)
                return -1;
        } else if (hr_skip(r, len, "a record") < 0) {
            return -1;
        }
    }
    uint64_t objects = m->direct ? c->run : c->objects, refs = m->direct ? c->run_refs : c->refs;
    if (w->objects != objects || w->tmp_n != w->tmp_end) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "the second pass found %llu objects and %llu references here, the first %llu and %llu (the dump "
                 "changed?)",
                 (unsigned long long)w->objects,
                 (unsigned long long)(w->tmp_n - c->tmp_base - (m->direct ? 0 : TMP_HEADER * w->objects)),
                 (unsigned long long)objects, (unsigned long long)refs);
        return hr_fail(r, c->start, msg);
    }
    if (w->batch && m->direct)
        resolve_refs(m, m->edst + c->tmp_base, w->tmp_n - c->tmp_base, &w->references, &w->missing_refs);
    return 0;
}

/* Positions worker stream r at chunk c: the dump in memory, the chunk as
 * pass 1 kept it, or the file read (or inflated from the chunk's access
 * point) from there. */
static int open_chunk(imp *m, hr *r, const chunk *c)
{
    if (c->kept) {
        _gcs_dumpstream_close(r);
        r->buf = c->kept;
        r->base = c->start;
        r->pos = 0;
        r->len = (size_t)(c->end - c->start);
        r->eof = 1;
        return 0;
    }
    if (!m->path) {
        r->kind = DS_MEMORY;
        r->buf = m->data;
        r->base = 0;
        r->pos = (size_t)c->start;
        r->len = (size_t)c->end;
        r->eof = 1;
        return 0;
    }
    const _gcs_gzpoint *pt = c->point == SIZE_MAX ? NULL : &m->gzi.p[c->point];
    return _gcs_dumpstream_open_at(r, m->path, HPROF_BUF, &m->gzi, pt, c->start, c->end);
}

/* Whether a chunk is read with the look-ahead (prefetch_ahead).  It pays
 * where the lookups miss -- records out of address order, or references
 * to random places (a random graph) -- and costs where they do not (a tree
 * or a list in address order, whose references run through memory in
 * order, which the hardware prefetches; docs/heap-dumps.md has the
 * figures).  Which is the case is not in the records' headers, so each
 * worker times its chunks both ways (CPU time per dump byte): its first two
 * big chunks one each, then the faster way, trying the other every
 * LA_PROBE chunks; small chunks take the faster way without being timed.
 * Only the speed depends on it, not the result. */
#define LA_PROBE 32
#define LA_MIN_BYTES (256u << 10) /* a chunk timed */

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int lookahead_choice(worker *wk, const chunk *c)
{
    int best = wk->timed[0] && wk->timed[1] ? wk->ns_per_byte[1] <= wk->ns_per_byte[0] : !wk->timed[1];
    if (c->end - c->start < LA_MIN_BYTES)
        return wk->timed[0] && wk->timed[1] ? best : 1;
    if (!wk->timed[1] || !wk->timed[0])
        return !wk->timed[1];
    return ++wk->chunks % LA_PROBE ? best : !best;
}

static void lookahead_timed(worker *wk, const chunk *c, int ahead, double secs)
{
    uint64_t bytes = c->end - c->start;
    if (bytes < LA_MIN_BYTES)
        return;
    double r = secs * 1e9 / (double)bytes;
    wk->ns_per_byte[ahead] = wk->timed[ahead] ? (wk->ns_per_byte[ahead] + r) / 2 : r;
    wk->timed[ahead]++;
}

/* A worker of pass 2: takes chunks in file order until there are none, or
 * until one before the next has failed. */
static void pass2_worker(void *arg, int t)
{
    imp *m = arg;
    worker *wk = &m->workers[t];
    chunk *cs = m->chunks.p;
    for (;;) {
        uint64_t k = __atomic_fetch_add(&m->next_chunk, 1, __ATOMIC_RELAXED);
        if (k >= m->chunks.n || k > __atomic_load_n(&m->fail_at, __ATOMIC_RELAXED))
            break;
        chunk *c = &cs[k];
        int ahead = m->ahead_mode >= 0 ? m->ahead_mode : lookahead_choice(wk, c);
        pass2 w = {.r = &wk->r,
                   .tmp_n = c->tmp_base,
                   .tmp_end = c->tmp_base + (m->direct ? c->run_refs : c->refs + TMP_HEADER * c->objects),
                   .wk = wk,
                   .first_index = c->first_index,
                   .chunk_objects = m->direct ? c->run : c->objects,
                   .batch = m->direct ? m->batchable && ahead : m->batch_records,
                   .ahead = ahead && !(m->direct && m->batchable) && !m->gb.on};
        if (m->direct && c->run)
            _gcs_idmap_seek(&m->map, c->first_id, c->first_index, &w.cur);
        double t0 = thread_cpu();
        int rc = open_chunk(m, &wk->r, c) < 0 || run_chunk(m, &w, c) < 0 ? -1 : 0;
        keep_free(c);
        if (rc < 0) {
            wk->fail_chunk = k;
            uint64_t seen = __atomic_load_n(&m->fail_at, __ATOMIC_RELAXED);
            while (k < seen && !__atomic_compare_exchange_n(&m->fail_at, &seen, k, 0, __ATOMIC_RELAXED,
                                                            __ATOMIC_RELAXED))
                ;
            break;
        }
        lookahead_timed(wk, c, ahead, thread_cpu() - t0);
        wk->references += w.references;
        wk->missing_refs += w.missing_refs;
        wk->jvm_bytes += w.jvm_bytes;
    }
    if (m->path)
        _gcs_dumpstream_close(&wk->r);
}

/* The bucket of index i is i >> bucket_shift(n): at most BUCKETS_MAX of
 * them, of at least 2^BUCKET_MIN_SHIFT indices (docs/heap-dumps.md, "Fifth
 * session", has the trade-off measured). */
static unsigned bucket_shift(uint64_t n)
{
    unsigned s = BUCKET_MIN_SHIFT;
    while (n > (uint64_t)BUCKETS_MAX << s)
        s++;
    gcs_assert_internal(s <= 22); /* n < 2^32: an index within its bucket leaves TMP_RUN free */
    return s;
}

/* The pool's words out of address order.  The chunks' counts let the
 * records hold at most total words: every object's header and every
 * reference.  A block is closed only when a record of at most TMP_OWN words
 * does not fit, i.e. when more than 3/4 of it is used, so closed blocks
 * take at most 4/3 of their records' words; records of more have extents
 * exactly their size; and each worker has at most one open block per
 * bucket.  Most of the bound is never touched: blocks are taken in turn,
 * and only those taken are resident. */
static uint64_t tmp_pool_words(const imp *m)
{
    uint64_t total = m->nfields_total + TMP_HEADER * m->map.n;
    return total + total / 3 + 1 + (m->nbuckets * m->nworkers + 1) * TMP_BLOCK;
}

/* Each class's words, pointer count and type as run2 stores them (a class
 * run2 does not take, whose size is out of range, keeps zeros: no record
 * names it).  -1 out of memory. */
static int run_classes(imp *m)
{
    const cls *cs = m->classes.p;
    m->ctab = calloc(m->classes.n ? m->classes.n : 1, sizeof *m->ctab);
    if (!m->ctab)
        return -1;
    for (size_t i = 0; i < m->classes.n; i++) {
        const cls *c = &cs[i];
        uint64_t words = object_words(c->jvm_size, c->nrefs);
        if (!c->dumped || c->jvm_size < 8 || words > UINT32_MAX)
            continue;
        m->ctab[i] = (run_class){(uint32_t)words, c->nrefs, c->type};
    }
    return 0;
}

/* The buckets by granule (gbk), where the records' references are resolved
 * in batches (a rank bitmap whose granules fit 32 bits) and no bucket spans
 * 2^31 granules (a record's first word keeps TMP_RUN free); else by index.
 * Slices of about a quarter of a bucket's granules on average, so that a
 * granule's bucket is mostly its slice's or the next.  -1 out of memory. */
static int granule_buckets(imp *m)
{
    if (m->direct || !m->batch_records || !m->map.n)
        return 0;
    const uint64_t nb = m->nbuckets, gmax = m->map.gmax;
    uint32_t *start = malloc((nb + 1) * sizeof *start);
    if (!start)
        return -1;
    _gcs_idmap_granules_every(&m->map, m->bshift, start, nb);
    for (uint64_t b = 0; b < nb; b++)
        if (start[b + 1] - start[b] > TMP_RUN) {
            free(start);
            return 0;
        }
    unsigned sh = 0;
    while ((gmax >> sh) + 1 > 4 * nb)
        sh++;
    uint64_t ns = (gmax >> sh) + 1;
    uint16_t *slice = malloc((ns + 1) * sizeof *slice);
    if (!slice) {
        free(start);
        return -1;
    }
    for (uint64_t sl = 0, b = 0; sl < ns; sl++) {
        while (b + 1 < nb && start[b + 1] <= sl << sh)
            b++;
        slice[sl] = (uint16_t)b;
    }
    slice[ns] = (uint16_t)(nb - 1);
    m->gb = (gbk){1, sh, start, slice};
    return 0;
}

/* Pass 2 on as many threads as there are (and chunks to give them); the
 * first error in file order is the one reported. */
static int pass2_run(imp *m, gcs_err *err)
{
    int nt = _gcs_heapdump_threads();
    if ((uint64_t)nt > m->chunks.n)
        nt = m->chunks.n ? (int)m->chunks.n : 1;
    m->workers = calloc((size_t)nt, sizeof *m->workers);
    if (!m->workers) {
        gcs_err_set(err, "%s: out of memory", m->r.name);
        return -1;
    }
    m->nworkers = (unsigned)nt;
    for (int t = 0; t < nt; t++) {
        worker *wk = &m->workers[t];
        wk->r.name = m->r.name;
        wk->r.err = &wk->err;
        wk->r.fd = -1;
        wk->fail_chunk = UINT64_MAX;
        wk->extents.elem = sizeof(tmp_extent);
        if (!m->direct && (!(wk->block_refs = calloc(m->nbuckets + 1, sizeof *wk->block_refs))
                           || !(wk->fill = calloc(m->nbuckets + 1, sizeof *wk->fill)))) {
            gcs_err_set(err, "%s: out of memory", m->r.name);
            return -1;
        }
    }
    if (!m->direct) {
        if (run_classes(m) < 0 || granule_buckets(m) < 0) {
            gcs_err_set(err, "%s: out of memory", m->r.name);
            return -1;
        }
        m->tmp_cap = tmp_pool_words(m);
        m->tmp_next = 0;
        if (!(m->tmp = malloc(m->tmp_cap * sizeof *m->tmp))) {
            gcs_err_set(err, "%s: out of memory", m->r.name);
            return -1;
        }
        /* huge pages (common/hugemem.c): the blocks are taken in turn, so
         * only the pool's used part is resident; its BUCKETS_MAX write
         * streams keep fewer TLB entries busy */
        _gcs_hugepages(m->tmp, (size_t)m->tmp_cap * sizeof *m->tmp);
    }
    if (m->path && m->r.own) { /* worker 0 takes over pass 1's window */
        m->workers[0].r.own = m->r.own;
        m->r.own = NULL;
    }
    m->next_chunk = 0;
    m->fail_at = UINT64_MAX;
    int ran = _gcs_par_run(nt, pass2_worker, m);
    const worker *bad = NULL;
    for (int t = 0; t < ran; t++) {
        const worker *wk = &m->workers[t];
        if (wk->fail_chunk != UINT64_MAX && (!bad || wk->fail_chunk < bad->fail_chunk))
            bad = wk;
        m->rep.references += wk->references;
        m->rep.missing_refs += wk->missing_refs;
        m->rep.jvm_bytes += wk->jvm_bytes;
    }
    for (int t = 0; t < nt; t++)
        _gcs_dumpstream_free(&m->workers[t].r);
    if (bad) {
        gcs_err_set(err, "%s", bad->err.msg);
        return -1;
    }
    return 0;
}

/* ---- between the passes ------------------------------------------------------------ */

/* "java/lang/String" -> "java.lang.String", "[[I" -> "int[][]",
 * "[Ljava/lang/Object;" -> "java.lang.Object[]". */
static char *java_name(const char *s)
{
    size_t dims = 0;
    while (s[dims] == '[')
        dims++;
    const char *base = s + dims;
    char prim[16];
    size_t blen = strlen(base);
    if (dims) {
        if (base[0] == 'L' && blen >= 2 && base[blen - 1] == ';') {
            base++;
            blen -= 2;
        } else if (blen == 1) {
            for (int t = 0; t < 12; t++)
                if (prim_sig[t] && prim_sig[t] == base[0]) {
                    snprintf(prim, sizeof prim, "%.*s", (int)(strlen(prim_names[t]) - 2), prim_names[t]);
                    base = prim;
                    blen = strlen(prim);
                }
        }
    }
    char *o = malloc(blen + 2 * dims + 1);
    if (!o)
        return NULL;
    for (size_t i = 0; i < blen; i++)
        o[i] = base[i] == '/' ? '.' : base[i];
    for (size_t d = 0; d < dims; d++)
        memcpy(o + blen + 2 * d, "[]", 2);
    o[blen + 2 * dims] = 0;
    return o;
}

/* Flattens each dumped class's reference fields through its superclass
 * chain (the dump lists a class's own fields, then its superclass's, ...)
 * and its JVM size. */
static int resolve_classes(imp *m, gcs_err *err)
{
    cls *cs = m->classes.p;
    const uint8_t *ft = m->fields.p;
    for (size_t i = 0; i < m->classes.n; i++) {
        cls *c = &cs[i];
        if (!c->dumped)
            continue;
        c->ref_start = m->refs.n;
        uint64_t bytes = 0, jvm = 0, depth = 0;
        for (cls *k = c; k; depth++) {
            if (depth > 65536) {
                gcs_err_set(err, "%s: the superclass chain of class 0x%llx loops", m->r.name,
                            (unsigned long long)c->id);
                return -1;
            }
            for (uint64_t f = 0; f < k->nfields; f++) {
                uint8_t t = ft[k->field_start + f];
                if (t == B_OBJECT) {
                    uint32_t *o = vec_push(&m->refs);
                    if (!o)
                        goto oom;
                    *o = (uint32_t)bytes;
                }
                bytes += (uint64_t)value_size(m, t);
                jvm += (uint64_t)jvm_value_size(m, t);
            }
            if (bytes > UINT32_MAX) {
                gcs_err_set(err, "%s: class 0x%llx has more than 4 GiB of fields", m->r.name,
                            (unsigned long long)c->id);
                return -1;
            }
            if (!k->super)
                break;
            cls *s = class_find(m, k->super);
            if (!s || !s->dumped) {
                gcs_err_set(err, "%s: class 0x%llx names superclass 0x%llx, which the dump does not describe",
                            m->r.name, (unsigned long long)k->id, (unsigned long long)k->super);
                return -1;
            }
            k = s;
        }
        c->nrefs = (uint32_t)(m->refs.n - c->ref_start);
        c->value_bytes = (uint32_t)bytes;
        c->jvm_size = (uint32_t)align8(m->hdr + jvm);
        m->nfields_total += c->instances * c->nrefs;
    }
    return 0;
oom:
    gcs_err_set(err, "%s: out of memory", m->r.name);
    return -1;
}

/* Type names: one per dumped class (class objects are java.lang.Class's
 * type), primitive arrays the dumped "[I" ... classes' types, or a type of
 * their own when the dump lacks such a class. */
static int build_types(imp *m, gcs_err *err)
{
    cls *cs = m->classes.p;
    size_t nc = m->classes.n;
    char **names = calloc(nc + 12, sizeof *names);
    if (!names)
        goto oom;
    uint32_t nt = 0;
    m->class_type = GCS_SNAPSHOT_TYPE_NONE;
    for (int t = 0; t < 12; t++)
        m->prim_type[t] = GCS_SNAPSHOT_TYPE_NONE;
    uint32_t jlc_index = UINT32_MAX;
    for (size_t i = 0; i < nc; i++) {
        if (!cs[i].dumped)
            continue;
        const char *raw = str_get(m, cs[i].name_sid);
        char unnamed[40];
        if (!raw) {
            snprintf(unnamed, sizeof unnamed, "class@0x%llx", (unsigned long long)cs[i].id);
            raw = unnamed;
        }
        if (!(names[nt] = java_name(raw)))
            goto oom;
        if (strcmp(raw, "java/lang/Class") == 0) {
            m->class_type = nt;
            jlc_index = (uint32_t)i;
        }
        if (raw[0] == '[' && raw[1] && !raw[2])
            for (int t = 0; t < 12; t++)
                if (prim_sig[t] && prim_sig[t] == raw[1])
                    m->prim_type[t] = nt;
        cs[i].type = nt++;
    }
    if (m->class_type == GCS_SNAPSHOT_TYPE_NONE && !(names[m->class_type = nt++] = strdup("java.lang.Class")))
        goto oom;
    for (int t = 0; t < 12; t++)
        if (prim_size[t] && m->prim_type[t] == GCS_SNAPSHOT_TYPE_NONE
            && !(names[m->prim_type[t] = nt++] = strdup(prim_names[t])))
            goto oom;
    int rc = gcs_snapshot_set_types(m->g, nt, (const char *const *)names, err);
    for (uint32_t k = 0; k < nt; k++)
        free(names[k]);
    free(names);
    m->jlc = jlc_index;
    return rc;
oom:
    if (names)
        for (size_t k = 0; k < nc + 12; k++)
            free(names[k]);
    free(names);
    gcs_err_set(err, "%s: out of memory for class names", m->r.name);
    return -1;
}

/* ---- the import ---------------------------------------------------------------------- */

static void imp_free(imp *m)
{
    _gcs_dumpstream_free(&m->r);
    free(m->strings.keys);
    free(m->strings.vals);
    free(m->sblob.p);
    free(m->classmap.keys);
    free(m->classmap.vals);
    free(m->classes.p);
    free(m->fields.p);
    free(m->statics.p);
    free(m->refs.p);
    free(m->rootids.p);
    free(m->class_edge);
    free(m->ids.p);
    _gcs_idmap_free(&m->map);
    keep_trim(m, 0);
    free(m->chunks.p);
    free(m->hist.p);
    free(m->touched.p);
    _gcs_gzindex_free(&m->gzi);
    free(m->tmp);
    free(m->ctab);
    free((void *)m->gb.start);
    free((void *)m->gb.slice);
    for (unsigned t = 0; m->workers && t < m->nworkers; t++) {
        free(m->workers[t].block_refs);
        free(m->workers[t].fill);
        free(m->workers[t].extents.p);
    }
    free(m->workers);
}

/* Addresses: the dump's (object ids are addresses in HotSpot and ART), each
 * object moved up only as far as needed not to overlap its predecessor --
 * a snapshot's pointer fields are 8 bytes, so an array of compressed
 * references is wider in the snapshot than in the JVM.
 *
 * On the way, each object's own fields get gcs_snapshot_validate's checks
 * that their making does not ensure (check_graph): a size, pointers that
 * fit it, edges that follow its predecessor's, a known type.  The
 * addresses pass theirs by construction -- 8-byte aligned, each at least a
 * header's 8 bytes past its predecessor's end, the heap limit past the
 * last -- as long as no sum wraps around 2^64, which is checked (huge
 * arrays of a dump that holds no array data could add up to that).  *bad:
 * 1 when an object fails. */
static int place_addresses(imp *m, int *bad)
{
    gcs_snapshot *g = m->g;
    uint64_t n = g->nobjects, prev_end = 0, first = m->map.min;
    int real = n && m->map.max - m->map.min < (1ull << 48);
    const uint32_t *words = g->words, *nptrs = g->nptrs, *type = g->type, ntypes = g->ntypes;
    const uint64_t *start = g->edge_start;
    unsigned fails = 0;
    uint64_t moved = 0, prev_a = 0;
    enum { BATCH = 4096 };
    uint64_t *ids = malloc(BATCH * sizeof *ids);
    if (!ids)
        return -1;
    _gcs_idmap_cursor cur = {0};
    for (uint64_t i = 0; i < n;) {
        /* the ids in index order: in addr[] itself (addr_ids), or from the map */
        uint64_t k = m->addr_ids ? n : _gcs_idmap_ids(&m->map, ids, BATCH, &cur);
        const uint64_t *src = m->addr_ids ? g->addr : ids;
        gcs_assert_internal(k > 0 && i + k <= n);
        for (uint64_t j = 0; j < k; j++, i++) {
            uint64_t want = real ? ((src[j] - first + 7) & ~7ull) + 8 : 0, a = prev_end + 8;
            if (want >= a)
                a = want;
            else
                moved += real;
            g->addr[i] = a;
            prev_end = a + 8 * (uint64_t)words[i];
            uint32_t t = type[i];
            fails |= (words[i] == 0) | (nptrs[i] > words[i]) | (start[i + 1] - start[i] != nptrs[i])
                   | (t >= ntypes && t != GCS_SNAPSHOT_TYPE_NONE) | (i && a <= prev_a) | (prev_end < a);
            prev_a = a;
        }
    }
    fails |= prev_end > UINT64_MAX - 65535; /* the heap limit below */
    *bad = fails != 0;
    m->rep.moved_objects += moved;
    free(ids);
    g->params.heap_limit = (prev_end + 65535) & ~65535ull;
    if (!g->params.heap_limit)
        g->params.heap_limit = 65536;
    g->params.layout = real ? GCS_SNAPSHOT_LAYOUT_DUMP_ORDER : GCS_SNAPSHOT_LAYOUT_UNKNOWN_ORDER;
    return 0;
}

/* gcs_snapshot_validate for the graph the import made: the objects'
 * checks were made by place_addresses (objects_bad: one failed), and the
 * edges pass theirs by construction, as the addresses do: every edge the
 * importer writes is NULL or an index the id map gave (ref_index,
 * resolve_refs, copied as such by edge_worker), and the map's indices are
 * ranks below n (its words' prefix sums add up to n); the snapshot's
 * block comes zeroed, so an edge nothing wrote is index 0.  Scanning them
 * again would read the whole edge array from memory once more (4-6 % of
 * an import's CPU), so only the assertion builds do (the whole validation,
 * checked to agree); the whole validation also runs where an object
 * failed, for its message. */
static int check_graph(const gcs_snapshot *g, int objects_bad, gcs_err *err)
{
    int rc;
    if (objects_bad)
        rc = gcs_snapshot_validate(g, err);
    else
        rc = _gcs_snap_validate_report(g, g->nobjects, g->nfields, err);
#if GCS_ASSERT_ON
    gcs_err full;
    gcs_assert_internal((gcs_snapshot_validate(g, &full) < 0) == (rc < 0));
#endif
    return rc;
}

/* The id of object i (for a message). */
static uint64_t id_at(const _gcs_idmap *x, uint64_t i)
{
    _gcs_idmap_cursor cur = {0};
    uint64_t id = 0;
    for (uint64_t k = 0; k <= i; k++)
        if (_gcs_idmap_ids(x, &id, 1, &cur) != 1)
            return 0;
    return id;
}

/* Each chunk's references, now that its instances' classes are resolved,
 * and its slice of the temporary edges (file order: each object's header
 * and its references; place). */
static void chunk_slices(imp *m)
{
    chunk *cs = m->chunks.p;
    const hist_pair *h = m->hist.p;
    const cls *cl = m->classes.p;
    uint64_t base = 0;
    for (size_t k = 0; k < m->chunks.n; k++) {
        uint64_t refs = cs[k].fixed_refs;
        for (uint64_t j = 0; j < cs[k].hist_n; j++) {
            const hist_pair *p = &h[cs[k].hist_start + j];
            if (cl[p->cls].dumped)
                refs += (uint64_t)p->count * cl[p->cls].nrefs;
        }
        cs[k].refs = refs;
        cs[k].tmp_base = base;
        base += refs + TMP_HEADER * cs[k].objects;
    }
}

/* Whether pass 2 may write the edges into the snapshot directly
 * (note_object): every chunk's objects other than classes are in address
 * order and, with the classes whose index falls between them (holes: a
 * HotSpot dump writes every class first, its id the mirror's address among
 * the instances), hold a run of consecutive indices; these runs and the
 * classes outside them tile the indices.  Each chunk's edges then start
 * after those of everything whose indices are below its run's, and its
 * slice is moved there: its objects' references and its holes' (whose
 * places the worker keeps as it passes them, past_holes); a class outside
 * every run gets its place here (class_edge).  Classes are written after
 * pass 2 from what pass 1 kept of them (write_classes). */
typedef struct chunk_at {
    uint64_t first;
    size_t k;
} chunk_at;

static int cmp_chunk_at(const void *a, const void *b)
{
    const chunk_at *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

static int edges_direct(imp *m)
{
    chunk *cs = m->chunks.p;
    cls *cl = m->classes.p;
    size_t nc = m->chunks.n, ncl = m->classes.n, k2 = 0, nh = 0;
    if (!m->ordered)
        return 0;
    chunk_at *at = malloc((nc ? nc : 1) * sizeof *at), *holes = malloc((ncl ? ncl : 1) * sizeof *holes);
    m->class_edge = malloc((ncl ? ncl : 1) * sizeof *m->class_edge);
    int ok = at && holes && m->class_edge;
    /* the classes by index (chunk_at: the index, the class) */
    for (size_t k = 0; ok && k < ncl; k++) {
        m->class_edge[k] = UINT64_MAX;
        if (!cl[k].dumped)
            continue;
        uint32_t idx = _gcs_idmap_find(&m->map, cl[k].id);
        ok = idx != IDMAP_NONE;
        holes[nh++] = (chunk_at){idx, k};
    }
    if (ok)
        qsort(holes, nh, sizeof *holes, cmp_chunk_at);
    /* each chunk's run: from its first object but classes to its last */
    for (size_t k = 0; ok && k < nc; k++) {
        cs[k].run = cs[k].run_refs = 0;
        if (cs[k].objects == cs[k].classes)
            continue;
        uint32_t fi = _gcs_idmap_find(&m->map, cs[k].first_id), li = _gcs_idmap_find(&m->map, cs[k].last_id);
        ok = fi != IDMAP_NONE && li != IDMAP_NONE && li >= fi;
        if (ok) {
            cs[k].first_index = fi;
            cs[k].run = (uint64_t)(li - fi) + 1;
            cs[k].run_refs = cs[k].refs - cs[k].class_refs;
            at[k2++] = (chunk_at){fi, k};
        }
    }
    if (ok)
        qsort(at, k2, sizeof *at, cmp_chunk_at);
    /* the runs and the classes between them tile the indices; each class
     * inside a run is one of its holes.  A walk that fails leaves some
     * chunks' first_index, run and tmp_base changed: only the direct path
     * reads the first two, and out of order tmp_base only starts pass 2's
     * count of a chunk's words (test_interleaved_runs). */
    uint64_t next = 0, base = 0;
    size_t h = 0;
    for (size_t j = 0; ok && j <= k2; j++) {
        uint64_t first = j < k2 ? at[j].first : m->map.n;
        for (; ok && h < nh && holes[h].first < first; h++) { /* classes outside every run */
            ok = holes[h].first == next;
            m->class_edge[holes[h].k] = base;
            base += 2 + cl[holes[h].k].nstatics;
            next++;
        }
        if (!ok || j == k2)
            break;
        chunk *c = &cs[at[j].k];
        ok = first == next;
        uint64_t end = first + c->run, inside = 0;
        for (; ok && h < nh && holes[h].first < end; h++, inside++)
            c->run_refs += 2 + cl[holes[h].k].nstatics;
        ok = ok && c->run == c->objects - c->classes + inside;
        c->tmp_base = base;
        base += c->run_refs;
        next = end;
    }
    ok = ok && h == nh && next == m->map.n;
    free(at);
    free(holes);
    if (!ok) {
        free(m->class_edge);
        m->class_edge = NULL;
        return 0;
    }
    gcs_assert_internal(base == m->nfields_total);
    return 1;
}

/* Direct: each class's mirror at its index, as class_dump places it
 * otherwise: its size and type, and its edges (superclass, loader, static
 * references) at the place its run kept (past_holes) or edges_direct gave
 * it.  -1 with err set when a hole was not passed (the dump changed). */
static int write_classes(imp *m, gcs_err *err)
{
    gcs_snapshot *g = m->g;
    const cls *cl = m->classes.p, *jlc = m->jlc < m->classes.n ? cl + m->jlc : NULL;
    const uint64_t *sv = m->statics.p;
    for (size_t k = 0; k < m->classes.n; k++) {
        const cls *c = &cl[k];
        if (!c->dumped)
            continue;
        uint32_t idx = _gcs_idmap_find(&m->map, c->id);
        gcs_assert_internal(idx != IDMAP_NONE);
        if (m->class_edge[k] != UINT64_MAX)
            g->edge_start[idx] = m->class_edge[k];
        uint64_t size = align8((jlc ? jlc->jvm_size : m->hdr) + c->static_bytes);
        uint64_t nptrs = 2 + c->nstatics, words = object_words(size, nptrs);
        if (words > UINT32_MAX || nptrs > UINT32_MAX || g->edge_start[idx] + nptrs > m->nfields_total) {
            gcs_err_set(err, "%s: class 0x%llx: no place for its references (the dump changed?)", m->r.name,
                        (unsigned long long)c->id);
            return -1;
        }
        g->words[idx] = (uint32_t)words;
        g->nptrs[idx] = (uint32_t)nptrs;
        g->type[idx] = m->class_type;
        uint32_t *out = g->edges + g->edge_start[idx];
        for (uint64_t j = 0; j < nptrs; j++)
            out[j] = ref_index(&m->map, j == 0 ? c->super : j == 1 ? c->loader : sv[c->static_start + j - 2], 0,
                               &m->rep.references, &m->rep.missing_refs);
        m->rep.jvm_bytes += size;
    }
    return 0;
}

/* Pass 1's ids, for the snapshot to take over as its addr[] where they are
 * in index order (addr_ids: direct, every id above the one before in file
 * order; place_addresses turns each into its address in
 * place): 8 B per object of pages touched already, rather than as many
 * fresh ones the kernel must clear.  Otherwise freed: NULL. */
static uint64_t *ids_as_addr(imp *m)
{
    uint64_t *ids = m->ids.p;
    m->ids.p = NULL;
    if (!m->addr_ids) {
        free(ids);
        return NULL;
    }
    uint64_t *fit = realloc(ids, (m->ids.n ? m->ids.n : 1) * sizeof *ids); /* the vector's spare room back */
    return fit ? fit : ids;
}

/* The edges into index order (unless pass 2 wrote them so), a bucket at a
 * time on every thread (tmp_room): first each of its records' place goes
 * to the worker's array of places at the record's index within the bucket,
 * plus 1 (0: not placed); then, index by index, the record at that place is read, its
 * words, pointer count and type stored, and its references copied, the
 * bucket's first edge being the sum of the buckets' before it (pass 2
 * counted each bucket's references).  The records lie within the bucket's
 * blocks, which the caches hold; EDGE_AHEAD objects' are loaded ahead.
 * Direct, there is nothing to do: each chunk placed as many objects as its
 * run of indices holds, each at the next one (object_index), and the runs
 * tile the indices (edges_direct). */
typedef struct edge_job {
    imp *m;
    uint64_t nblocks, *base;  /* per bucket: its first edge */
    const tmp_extent *ext;    /* the extents, by bucket */
    const uint64_t *ext_at;   /* [nblocks + 1]: bucket b's are ext[ext_at[b] .. ext_at[b + 1]) */
    uint64_t next, bad;       /* atomic: the next bucket; the first object not placed (UINT64_MAX) */
    int oom;                  /* atomic: a worker could not start */
    uint64_t found, missing;  /* atomic: m->batch_records, the references resolved (resolve_refs) */
    uint64_t appeared;        /* atomic: by granule, the lowest granule of a record the map lacks (UINT64_MAX) */
} edge_job;

/* A bucket's records, in the extents ext[x0..x1) of the pool tmp, placed:
 * addr[i] = the record of index i's place + 1, for i in [lo, hi).  The
 * record's first word is the index's offset from lo, or by granule (gb)
 * the granule's offset from g0, the bucket's first, whose index the map
 * gives.  The lowest granule of a record the map does not hold in [lo, hi)
 * (the dump changed between the passes), or UINT64_MAX.  hw as for
 * resolve_refs_hw. */
__attribute__((always_inline)) static inline uint64_t place_records_hw(const uint32_t *tmp, const tmp_extent *ext,
                                                                       uint64_t x0, uint64_t x1,
                                                                       const run_class *ctab, uint64_t *addr,
                                                                       uint64_t lo, uint64_t hi,
                                                                       const _gcs_idmap *map, int gb, uint32_t g0,
                                                                       int hw)
{
    uint64_t appeared = UINT64_MAX;
    for (uint64_t x = x0; x < x1; x++) {
        const uint32_t *p = tmp + ext[x].start, *end = p + ext[x].len;
        if (x + 1 < x1) /* the next block is elsewhere in the pool */
            for (unsigned k = 0; k < EXT_AHEAD_LINES; k++)
                __builtin_prefetch(tmp + ext[x + 1].start + 16 * k);
        while (p < end) {
            uint64_t len = p[0] & TMP_RUN ? TMP_RUN_HEADER + ctab[p[1]].nrefs : TMP_HEADER + (uint64_t)p[2];
            gcs_assert_internal(p + len <= end);
            __builtin_prefetch(p + 16 * EXT_AHEAD_LINES);
            uint64_t i = lo + (p[0] & ~TMP_RUN);
            if (gb) {
                uint32_t g = g0 + (p[0] & ~TMP_RUN);
                i = _gcs_idmap_find_granule_hw(map, g, hw);
                if (i < lo || i >= hi) { /* IDMAP_NONE; an index outside lies outside g's bucket too */
                    gcs_assert_internal(i == IDMAP_NONE);
                    appeared = g < appeared ? g : appeared;
                    p += len;
                    continue;
                }
            }
            gcs_assert_internal(i < hi);
            addr[i] = (uint64_t)(p - tmp) + 1;
            p += len;
        }
    }
    return appeared;
}

static uint64_t place_records_sw(const uint32_t *tmp, const tmp_extent *ext, uint64_t x0, uint64_t x1,
                                 const run_class *ctab, uint64_t *addr, uint64_t lo, uint64_t hi,
                                 const _gcs_idmap *map, int gb, uint32_t g0)
{
    return place_records_hw(tmp, ext, x0, x1, ctab, addr, lo, hi, map, gb, g0, 0);
}

TARGET_POPCNT static uint64_t place_records_popcnt(const uint32_t *tmp, const tmp_extent *ext, uint64_t x0,
                                                   uint64_t x1, const run_class *ctab, uint64_t *addr, uint64_t lo,
                                                   uint64_t hi, const _gcs_idmap *map, int gb, uint32_t g0)
{
    return place_records_hw(tmp, ext, x0, x1, ctab, addr, lo, hi, map, gb, g0, 1);
}

static void edge_worker(void *arg, int t)
{
    (void)t;
    edge_job *j = arg;
    imp *m = j->m;
    gcs_snapshot *g = m->g;
    const uint64_t n = g->nobjects;
    const uint32_t *tmp = m->tmp;
    const run_class *ctab = m->ctab;
    const unsigned bshift = m->bshift;
    /* the places of a bucket's records, by index within it: the worker's
     * own, used again for every bucket, so that it stays in the cache
     * (addr[] would be pages first touched here) */
    uint64_t *place = malloc(sizeof *place << bshift), found = 0, missing = 0;
    if (!place) {
        __atomic_store_n(&j->oom, 1, __ATOMIC_RELAXED);
        return;
    }
    for (;;) {
        uint64_t b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (b >= j->nblocks)
            break;
        uint64_t lo = b << bshift, hi = n - lo > (1ull << bshift) ? lo + (1ull << bshift) : n, bad = UINT64_MAX;
        uint64_t at = j->base[b];
        uint64_t *addr = place - lo; /* addr[i]: index i's place, i in [lo, hi) */
        memset(place, 0, (hi - lo) * sizeof *place);
        uint32_t g0 = m->gb.on ? m->gb.start[b] : 0;
        uint64_t appeared = (m->popcnt ? place_records_popcnt : place_records_sw)(
            tmp, j->ext, j->ext_at[b], j->ext_at[b + 1], ctab, addr, lo, hi, &m->map, m->gb.on, g0);
        if (appeared != UINT64_MAX) {
            uint64_t seen = __atomic_load_n(&j->appeared, __ATOMIC_RELAXED);
            while (appeared < seen && !__atomic_compare_exchange_n(&j->appeared, &seen, appeared, 0,
                                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
        }
        for (uint64_t i = lo; i < hi; i++) {
            if (i + EDGE_AHEAD < hi && addr[i + EDGE_AHEAD])
                __builtin_prefetch(tmp + addr[i + EDGE_AHEAD] - 1);
            if (!addr[i]) {
                bad = i;
                break;
            }
            const uint32_t *h = tmp + addr[i] - 1, *refs;
            uint32_t k;
            if (h[0] & TMP_RUN) {
                const run_class *c = &ctab[h[1]];
                k = c->nrefs;
                g->words[i] = c->words;
                g->type[i] = c->type;
                refs = h + TMP_RUN_HEADER;
            } else {
                k = h[2];
                g->words[i] = h[1];
                g->type[i] = h[3];
                refs = h + TMP_HEADER;
            }
            g->nptrs[i] = k;
            g->edge_start[i] = at;
            if (k > 8 || at + k > g->nfields) {
                if (at + k > g->nfields) { /* a changed dump; the counts will say so */
                    bad = i;
                    break;
                }
                memcpy(g->edges + at, refs, (size_t)k * sizeof *g->edges);
            } else {
                for (uint32_t e = 0; e < k; e++)
                    g->edges[at + e] = refs[e];
            }
            at += k;
        }
        if (m->batch_records && bad == UINT64_MAX)
            resolve_refs(m, g->edges + j->base[b], at - j->base[b], &found, &missing);
        if (bad != UINT64_MAX) {
            uint64_t seen = __atomic_load_n(&j->bad, __ATOMIC_RELAXED);
            while (bad < seen && !__atomic_compare_exchange_n(&j->bad, &seen, bad, 0, __ATOMIC_RELAXED,
                                                              __ATOMIC_RELAXED))
                ;
        }
    }
    free(place);
    __atomic_fetch_add(&j->found, found, __ATOMIC_RELAXED);
    __atomic_fetch_add(&j->missing, missing, __ATOMIC_RELAXED);
}

/* The workers' extents, and their open blocks, grouped by bucket (a
 * counting sort): j->ext and j->ext_at.  -1 out of memory. */
static int extents_by_bucket(imp *m, edge_job *j)
{
    const uint64_t nb = j->nblocks;
    uint64_t ne = 0;
    for (unsigned t = 0; t < m->nworkers; t++) {
        ne += m->workers[t].extents.n;
        for (uint64_t b = 0; b < nb; b++)
            ne += m->workers[t].fill[b].end != 0;
    }
    tmp_extent *ext = malloc((ne ? ne : 1) * sizeof *ext);
    uint64_t *at = calloc(nb + 2, sizeof *at);
    if (!ext || !at) {
        free(ext);
        free(at);
        return -1;
    }
    for (unsigned t = 0; t < m->nworkers; t++) {
        const worker *wk = &m->workers[t];
        const tmp_extent *e = wk->extents.p;
        for (size_t k = 0; k < wk->extents.n; k++)
            at[e[k].bucket + 2]++;
        for (uint64_t b = 0; b < nb; b++)
            at[b + 2] += wk->fill[b].end != 0;
    }
    for (uint64_t b = 2; b < nb + 2; b++)
        at[b] += at[b - 1];
    /* at[b + 1] is bucket b's first; taking each moves it on, to b + 1's */
    for (unsigned t = 0; t < m->nworkers; t++) {
        const worker *wk = &m->workers[t];
        const tmp_extent *e = wk->extents.p;
        for (size_t k = 0; k < wk->extents.n; k++)
            ext[at[e[k].bucket + 1]++] = e[k];
        for (uint64_t b = 0; b < nb; b++) {
            const tmp_fill *f = &wk->fill[b];
            if (f->end)
                ext[at[b + 1]++] = (tmp_extent){f->end - TMP_BLOCK, f->cur - (f->end - TMP_BLOCK), b};
        }
    }
    gcs_assert_internal(at[nb] == ne);
    j->ext = ext;
    j->ext_at = at;
    return 0;
}

static int edges_in_order(imp *m, gcs_err *err)
{
    gcs_snapshot *g = m->g;
    uint64_t n = g->nobjects;
    edge_job j = {.m = m, .nblocks = m->direct ? 0 : m->nbuckets, .bad = UINT64_MAX, .appeared = UINT64_MAX};
    if (!m->direct) { /* the buckets' first edges from the workers' counts */
        j.base = malloc((j.nblocks + 1) * sizeof *j.base);
        if (!j.base || extents_by_bucket(m, &j) < 0) {
            free(j.base);
            gcs_err_set(err, "%s: out of memory", m->r.name);
            return -1;
        }
        uint64_t sum = 0;
        for (uint64_t b = 0; b < j.nblocks; b++) {
            j.base[b] = sum;
            for (unsigned t = 0; t < m->nworkers; t++)
                sum += m->workers[t].block_refs[b];
        }
        if (sum != g->nfields)
            j.bad = 0; /* a changed dump: objects placed twice or not at all */
    }
    int nt = _gcs_heapdump_threads();
    if ((uint64_t)nt > j.nblocks)
        nt = j.nblocks ? (int)j.nblocks : 1;
    if (j.bad == UINT64_MAX && !m->direct)
        _gcs_par_run(nt, edge_worker, &j);
    m->rep.references += j.found;
    m->rep.missing_refs += j.missing;
    free(j.base);
    free((void *)j.ext);
    free((void *)j.ext_at);
    if (j.oom) {
        gcs_err_set(err, "%s: out of memory", m->r.name);
        return -1;
    }
    if (j.appeared != UINT64_MAX) {
        gcs_err_set(err, "%s: object 0x%llx appeared between the passes (the dump changed?)", m->r.name,
                    (unsigned long long)(m->map.min + (j.appeared << m->map.gshift)));
        return -1;
    }
    if (j.bad != UINT64_MAX) {
        gcs_err_set(err, "%s: object 0x%llx vanished between the passes (the dump changed?)", m->r.name,
                    (unsigned long long)id_at(&m->map, j.bad));
        return -1;
    }
    g->edge_start[n] = g->nfields;
    return 0;
}

static gcs_snapshot *import(const char *path, const void *data, size_t len, const char *name,
                            gcs_heapdump_report *rep_out, gcs_err *err)
{
    imp *m = calloc(1, sizeof *m);
    if (!m) {
        gcs_err_set(err, "%s: out of memory", name);
        return NULL;
    }
    m->r.name = name;
    m->r.err = err;
    m->r.fd = -1;
    m->path = path;
    m->data = data ? data : (const uint8_t *)"";
    m->len = data ? len : 0;
    m->classes.elem = sizeof(cls);
    m->fields.elem = 1;
    m->statics.elem = m->rootids.elem = m->ids.elem = 8;
    m->refs.elem = m->touched.elem = 4;
    m->sblob.elem = 1;
    m->chunks.elem = sizeof(chunk);
    m->hist.elem = sizeof(hist_pair);
    m->rep.format = GCS_HEAPDUMP_HPROF;
    m->jlc = UINT32_MAX;
    m->chunk_bytes = __atomic_load_n(&chunk_bytes, __ATOMIC_RELAXED);
    m->keep_limit = __atomic_load_n(&keep_limit, __ATOMIC_RELAXED);
    m->ahead_mode = __atomic_load_n(&ahead_mode, __ATOMIC_RELAXED);
    m->gzi.span = m->chunk_bytes;
    m->cut_at = &m->cut_plain;
    m->ordered = 1;
    m->ids_ascending = 1;
    gcs_snapshot *g = NULL;
    gcs_err e2;

    /* pass 1 */
    if (path) {
        if (_gcs_dumpstream_open(&m->r, path, HPROF_BUF, &m->gzi) < 0)
            goto fail;
        if (m->r.kind == DS_GZIP)
            m->cut_at = &m->gzi.next_cut;
        if (m->r.kind == DS_GZIP && m->keep_limit != 0) {
            m->r.tap = keep_tap;
            m->r.tap_arg = m;
        }
    } else {
        m->r.buf = m->data;
        m->r.len = m->len;
    }
    if (scan(m) < 0)
        goto fail;
    m->r.tap = NULL;
    m->rep.dump_bytes = hr_off(&m->r);
    m->rep.passes = 1;
    if (path)
        _gcs_dumpstream_close(&m->r);
    if (m->gzi.block) { /* the members listed, now that the pipe (if any) has stopped */
        m->rep.gzip_members = m->gzi.nm;
        m->rep.gzip_block_bytes = m->gzi.block;
    }
    uint64_t n = m->ids.n;
    if (n > GCS_SNAPSHOT_MAX_OBJECTS) {
        gcs_err_set(err, "%s: %llu objects: a snapshot holds at most %llu", name, (unsigned long long)n,
                    (unsigned long long)GCS_SNAPSHOT_MAX_OBJECTS);
        goto fail;
    }
    uint64_t dup;
    m->id_range.ascending = m->ids_ascending;
    int keep = m->ids_ascending; /* they may become addr[] (ids_as_addr) */
    int built = _gcs_idmap_build(&m->map, m->ids.p, n, &m->id_range, keep, &dup);
    if (built != 0 || !keep || m->map.sorted)
        m->ids.p = NULL; /* the map has them */
    if (built != 0) {
        if (built < 0)
            gcs_err_set(err, "%s: out of memory indexing %llu object ids", name, (unsigned long long)n);
        else
            gcs_err_set(err, "%s: object id 0x%llx is dumped twice", name, (unsigned long long)dup);
        goto fail;
    }
    if (n && m->map.min == 0) {
        gcs_err_set(err, "%s: an object has id 0 (HPROF's NULL)", name);
        goto fail;
    }
    /* The layout (docs/heap-dumps.md): 4-byte ids, a 32-bit JVM; 8-byte ids
     * over less than 32 GiB, compressed references; compressed class
     * pointers with 8-byte ids either way (HotSpot's default since JDK 8). */
    uint64_t span = n ? m->map.max - m->map.min : 0;
    m->ref = m->idsz == 4 || span < (32ull << 30) ? 4 : 8;
    m->hdr = m->idsz == 4 ? 8 : 12;
    m->ahdr = m->idsz == 4 ? 12 : 16;
    m->rep.ref_bytes = m->ref;
    m->rep.object_header_bytes = m->hdr;
    m->rep.array_header_bytes = m->ahdr;
    if (resolve_classes(m, err) < 0)
        goto fail;
    chunk_slices(m);
    m->direct = edges_direct(m);
    /* pass 2's peak: the snapshot, the id map, the kept chunks (the
     * records instead out of address order) */
    keep_trim(m, m->direct ? keep_bound(m, n, m->nfields_total, m->map.bytes) : 0);
    m->popcnt = _gcs_cpu_popcnt();
    m->batchable = !m->map.sorted && m->map.gmax < REF_MISSING;
    m->batch_records = !m->direct && m->batchable && m->ahead_mode != 0;
    uint64_t nroots = m->rootids.n + m->rep.classes;
    m->addr_ids = m->direct && m->ids.p && m->ids_ascending;
    /* pass 2 writes every type; the snapshot takes the ids over, or they are freed */
    g = _gcs_snapshot_new_filled(n, m->nfields_total, nroots, ids_as_addr(m), &e2);
    if (!g) {
        gcs_err_set(err, "%s: %s", name, e2.msg);
        goto fail;
    }
    m->g = g;
    m->edst = m->direct ? g->edges : NULL;
    m->bshift = bucket_shift(n);
    m->nbuckets = (n + (1ull << m->bshift) - 1) >> m->bshift;
    if (m->direct) { /* out of address order edges_in_order writes them, on every thread */
        _gcs_prefault(g->words, (size_t)n * sizeof *g->words);
        _gcs_prefault(g->nptrs, (size_t)n * sizeof *g->nptrs);
        _gcs_prefault(g->type, (size_t)n * sizeof *g->type);
        _gcs_prefault(g->edge_start, (size_t)(n + 1) * sizeof *g->edge_start);
        _gcs_prefault(g->edges, (size_t)m->nfields_total * sizeof *g->edges);
    }
    if (build_types(m, err) < 0)
        goto fail;

    /* pass 2 */
    if (between_passes)
        between_passes(between_arg);
    if (pass2_run(m, err) < 0 || (m->direct && write_classes(m, err) < 0))
        goto fail;
    m->rep.passes = 2;
    if (edges_in_order(m, err) < 0)
        goto fail;
    free(m->tmp);
    m->tmp = NULL;
    int objects_bad;
    if (place_addresses(m, &objects_bad) < 0) {
        gcs_err_set(err, "%s: out of memory", name);
        goto fail;
    }
    uint64_t r = 0;
    const uint64_t *rid = m->rootids.p;
    for (size_t k = 0; k < m->rootids.n; k++) {
        uint32_t idx = _gcs_idmap_find(&m->map, rid[k]);
        if (idx == IDMAP_NONE)
            m->rep.missing_roots++;
        else
            g->roots[r++] = idx;
    }
    const cls *cs = m->classes.p;
    for (size_t k = 0; k < m->classes.n; k++)
        if (cs[k].dumped)
            g->roots[r++] = _gcs_idmap_find(&m->map, cs[k].id);
    g->nroots = r;
    g->params.source = GCS_SNAPSHOT_SOURCE_HPROF;
    g->params.header_bytes = 8;
    g->params.granule_bytes = 8;
    g->params.heap_base = n ? m->map.min : 0;
    g->params.timestamp_ns = m->timestamp_ms * 1000000u;
    if (check_graph(g, objects_bad, &e2) < 0) {
        gcs_err_set(err, "%s: the imported graph is invalid: %s", name, e2.msg);
        goto fail;
    }
    if (rep_out)
        *rep_out = m->rep;
    imp_free(m);
    free(m);
    return g;
fail:
    gcs_snapshot_free(g);
    imp_free(m);
    free(m);
    return NULL;
}

gcs_snapshot *gcs_heapdump_import_hprof_mem(const void *data, size_t len, const char *name,
                                            gcs_heapdump_report *rep, gcs_err *err)
{
    return import(NULL, data, len, name ? name : "dump", rep, err);
}

gcs_snapshot *_gcs_hprof_import(const char *path, gcs_heapdump_report *rep, gcs_err *err)
{
    gcs_snapshot *g = import(path, NULL, 0, path, rep, err);
    if (g && rep)
        rep->compressed = _gcs_heapdump_gzipped(path);
    return g;
}
