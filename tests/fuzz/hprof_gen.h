/* hprof_gen.h -- writes a synthetic HPROF 1.0.2 dump into memory: the seed
 * of the HPROF fuzz target (make_seeds), the harness's fixed input and the
 * import benchmark's dumps (formats/bench/bench_import.c).  The graph: classes
 * java.lang.Object, java.lang.Class and Node (fields: Node next, int value;
 * a static Node head), n Node instances where node i's next is node i+1 and
 * every 16th node also owns an Object[k] holding k random nodes and an
 * int[8]; node 0 is a JNI-global root.  Object ids are addresses 8-aligned
 * from 0x700000000, in a shuffled order (dumps need not be sorted), the
 * heap dump split into segments of about seg_bytes.
 *
 * hprof_generate_shape() writes the import benchmark's shapes (list, tree,
 * random graph) of n objects of one class, fast enough for 10^7 objects:
 * the buffer is sized once up front. */
#ifndef GCSCALE_HPROF_GEN_H
#define GCSCALE_HPROF_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct hgen {
    uint8_t *p;
    size_t n, cap;
    size_t seg_at;  /* offset of the open segment's length field, or 0 */
} hgen;

static void hg_put(hgen *g, const void *b, size_t k)
{
    if (g->n + k > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4096;
        while (cap < g->n + k)
            cap *= 2;
        uint8_t *q = realloc(g->p, cap);
        if (!q)
            abort();
        g->p = q;
        g->cap = cap;
    }
    memcpy(g->p + g->n, b, k);
    g->n += k;
}
static void hg_u1(hgen *g, uint8_t v) { hg_put(g, &v, 1); }
static void hg_u2(hgen *g, uint16_t v) { uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v}; hg_put(g, b, 2); }
static void hg_u4(hgen *g, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    hg_put(g, b, 4);
}
static void hg_id(hgen *g, uint64_t v) { hg_u4(g, (uint32_t)(v >> 32)); hg_u4(g, (uint32_t)v); }
static void hg_record(hgen *g, uint8_t tag, uint32_t len) { hg_u1(g, tag); hg_u4(g, 0); hg_u4(g, len); }
static void hg_seg_close(hgen *g)
{
    if (!g->seg_at)
        return;
    uint32_t len = (uint32_t)(g->n - g->seg_at - 4);
    uint8_t b[4] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
    memcpy(g->p + g->seg_at, b, 4);
    g->seg_at = 0;
}
static void hg_seg_open(hgen *g)
{
    hg_seg_close(g);
    hg_record(g, 0x1C, 0);
    g->seg_at = g->n - 4;
}
static void hg_string(hgen *g, uint64_t sid, const char *s)
{
    hg_record(g, 0x01, (uint32_t)(8 + strlen(s)));
    hg_id(g, sid);
    hg_put(g, s, strlen(s));
}
static void hg_class(hgen *g, uint32_t serial, uint64_t cid, uint64_t sid)
{
    hg_record(g, 0x02, 24);
    hg_u4(g, serial);
    hg_id(g, cid);
    hg_u4(g, 0);
    hg_id(g, sid);
}
static uint64_t hg_rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Slot f of node i's array in HG_ARRAYS: a node chosen by a hash (splitmix64
 * of the seed, i and f), not by the order the nodes are written in. */
static inline uint64_t hg_slot(uint64_t seed, uint64_t i, uint64_t f, uint64_t n)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1) + 0xD1B54A32D192ED03ull * (f + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (z ^ (z >> 31)) % n;
}

/* The dump of n nodes (n >= 1), object arrays of k slots. */
static inline hgen hprof_generate(uint64_t n, uint32_t k, size_t seg_bytes, uint64_t seed)
{
    hgen g = {0};
    hg_put(&g, "JAVA PROFILE 1.0.2", 19);
    hg_u4(&g, 8);
    hg_id(&g, 1700000000000ull);
    const uint64_t C_OBJ = 0x600000000ull, C_CLASS = C_OBJ + 0x100, C_NODE = C_OBJ + 0x200, C_OARR = C_OBJ + 0x300,
                   C_IARR = C_OBJ + 0x400, BASE = 0x700000000ull;
    hg_string(&g, 1, "java/lang/Object");
    hg_string(&g, 2, "java/lang/Class");
    hg_string(&g, 3, "Node");
    hg_string(&g, 4, "next");
    hg_string(&g, 5, "value");
    hg_string(&g, 6, "head");
    hg_string(&g, 7, "[Ljava/lang/Object;");
    hg_string(&g, 8, "[I");
    hg_class(&g, 1, C_OBJ, 1);
    hg_class(&g, 2, C_CLASS, 2);
    hg_class(&g, 3, C_NODE, 3);
    hg_class(&g, 4, C_OARR, 7);
    hg_class(&g, 5, C_IARR, 8);
    /* addresses: node i, then (every 16th) its Object[k] and its int[8] */
    uint64_t narr = (n + 15) / 16, total = n + 2 * narr;
    uint64_t *addr = malloc(total * sizeof *addr);
    uint64_t a = BASE, oarr_bytes = (16 + 4 * (uint64_t)k + 7) & ~7ull;
    for (uint64_t i = 0, j = 0; i < n; i++) {
        addr[i] = a;
        a += 24;
        if (i % 16 == 0) {
            addr[n + 2 * j] = a;
            a += oarr_bytes;
            addr[n + 2 * j + 1] = a;
            a += 48;
            j++;
        }
    }
    hg_seg_open(&g);
    hg_u1(&g, 0x01); /* ROOT_JNI_GLOBAL node 0 */
    hg_id(&g, addr[0]);
    hg_id(&g, 0x42);
    static const struct { uint64_t id, super; int node; } cls[] = {
        {0x600000000ull, 0, 0}, {0x600000100ull, 0x600000000ull, 0}, {0x600000200ull, 0x600000000ull, 1},
        {0x600000300ull, 0x600000000ull, 0}, {0x600000400ull, 0x600000000ull, 0}};
    for (int c = 0; c < 5; c++) {
        hg_u1(&g, 0x20);
        hg_id(&g, cls[c].id);
        hg_u4(&g, 0);
        hg_id(&g, cls[c].super);
        for (int z = 0; z < 5; z++)
            hg_id(&g, 0); /* loader, signers, protection domain, reserved x2 */
        hg_u4(&g, cls[c].node ? 12 : 0);
        hg_u2(&g, 0);     /* constant pool */
        if (cls[c].node) {
            hg_u2(&g, 1); /* static Node head = node 0 */
            hg_id(&g, 6);
            hg_u1(&g, 2);
            hg_id(&g, addr[0]);
            hg_u2(&g, 2);
            hg_id(&g, 4);
            hg_u1(&g, 2);
            hg_id(&g, 5);
            hg_u1(&g, 10);
        } else {
            hg_u2(&g, 0);
            hg_u2(&g, 0);
        }
    }
    /* objects in a shuffled order: a random start, then a stride coprime to n */
    uint64_t s = seed | 1, start = hg_rnd(&s) % n, stride = 1;
    if (n > 2) {
        stride = hg_rnd(&s) % (n - 1) + 1;
        for (uint64_t x = stride, y = n; y;) { /* make gcd(stride, n) = 1 */
            uint64_t t = x % y;
            x = y;
            y = t;
            if (!y && x != 1) {
                stride = 1;
                break;
            }
        }
    }
    size_t seg_start = g.n;
    for (uint64_t q = 0; q < n; q++) {
        uint64_t i = (start + q * stride) % n;
        if (g.n - seg_start > seg_bytes) {
            hg_seg_open(&g);
            seg_start = g.n;
        }
        hg_u1(&g, 0x21);
        hg_id(&g, addr[i]);
        hg_u4(&g, 0);
        hg_id(&g, C_NODE);
        hg_u4(&g, 12);
        hg_id(&g, i + 1 < n ? addr[i + 1] : 0);
        hg_u4(&g, (uint32_t)i);
        if (i % 16 == 0) {
            uint64_t j = i / 16;
            hg_u1(&g, 0x22);
            hg_id(&g, addr[n + 2 * j]);
            hg_u4(&g, 0);
            hg_u4(&g, k);
            hg_id(&g, C_OARR);
            for (uint32_t e = 0; e < k; e++)
                hg_id(&g, addr[hg_rnd(&s) % n]);
            hg_u1(&g, 0x23);
            hg_id(&g, addr[n + 2 * j + 1]);
            hg_u4(&g, 0);
            hg_u4(&g, 8);
            hg_u1(&g, 10);
            for (int e = 0; e < 8; e++)
                hg_u4(&g, (uint32_t)e);
        }
    }
    hg_seg_close(&g);
    hg_record(&g, 0x2C, 0);
    free(addr);
    return g;
}

/* Benchmark shapes: n instances of one class with nref reference fields
 * (then an int): HG_LIST node i -> i+1 (one field); HG_TREE node i -> 2i+1,
 * 2i+2 (a complete binary tree; two fields); HG_RANDOM nref fields, each a
 * uniformly random node.  Node 0 is a JNI-global root.  Objects lie
 * align8(16 + 4 * nref + 4) bytes apart from 0x700000000 and the classes
 * just below (8-byte ids; a large gap would slow the importer's id
 * directory, docs/heap-dumps.md), written in address order or, shuffled !=
 * 0, in a shuffled order (a parallel dump); shuffled == HG_INTERLEAVED and
 * n odd: the even objects in address order, then the odd ones (two runs,
 * each in order, whose address ranges overlap).
 *
 * HG_ARRAYS: node i has one reference field, to an Object[nref] of its own
 * (class "[LNode;") that follows it in memory and in the dump, holding
 * random nodes (hg_slot: the same graph in every order) -- the shape of
 * tests/data/hprof/Graphs.java's random graph, whose dump alternates
 * instances and object arrays.
 *
 * hprof_generate_spread() writes the same with the objects gap bytes apart
 * (the classes still just below the first): ids that are not dense, as a
 * heap of huge objects or scattered regions has them.
 *
 * hprof_generate_mirrors() puts two of the three classes' ids among the
 * objects', 8 bytes after objects n/3 and 2n/3, as a HotSpot heap holds its
 * class mirrors among the instances while its dump writes every class
 * first (formats/hprof_edges.c's holes). */
enum { HG_LIST, HG_TREE, HG_RANDOM, HG_ARRAYS };
enum { HG_INTERLEAVED = 2 }; /* the shuffled argument's interleaved order */
static inline hgen hprof_generate_layout(int shape, uint64_t n, uint32_t nref, int shuffled, size_t seg_bytes,
                                         uint64_t seed, uint64_t gap, int mirrors)
{
    if (shape == HG_LIST)
        nref = 1;
    else if (shape == HG_TREE)
        nref = 2;
    const int arrays = shape == HG_ARRAYS;
    const uint32_t fields = arrays ? 1 : nref; /* an instance's reference fields */
    hgen g = {0};
    const size_t rec = 1 + 8 + 4 + 8 + 4 + 8 * (size_t)fields + 4 + (arrays ? 1 + 8 + 4 + 4 + 8 + 8 * (size_t)nref : 0);
    g.cap = 4096 + n * rec + (n * rec / (seg_bytes ? seg_bytes : 1) + 1) * 9;
    if (!(g.p = malloc(g.cap)))
        abort();
    hg_put(&g, "JAVA PROFILE 1.0.2", 19);
    hg_u4(&g, 8);
    hg_id(&g, 1700000000000ull);
    /* the classes just below the objects, as their mirrors lie in a real heap */
    const uint64_t INSTANCE = (16 + 4 * (uint64_t)fields + 4 + 7) & ~7ull,
                   ARRAY = arrays ? (16 + 4 * (uint64_t)nref + 7) & ~7ull : 0;
    const uint64_t BASE = 0x700000000ull, STRIDE = gap ? gap : INSTANCE + ARRAY;
    const uint64_t C_OBJ = BASE - 0x300, C_CLASS = mirrors ? BASE + n / 3 * STRIDE + 8 : C_OBJ + 0x100,
                   C_NODE = mirrors ? BASE + 2 * n / 3 * STRIDE + 8 : C_OBJ + 0x200, C_ARR = C_OBJ + 0x280;
    const int nclasses = arrays ? 4 : 3;
    hg_string(&g, 1, "java/lang/Object");
    hg_string(&g, 2, "java/lang/Class");
    hg_string(&g, 3, "Node");
    hg_string(&g, 4, "ref");
    hg_string(&g, 5, "value");
    hg_class(&g, 1, C_OBJ, 1);
    hg_class(&g, 2, C_CLASS, 2);
    hg_class(&g, 3, C_NODE, 3);
    if (arrays) {
        hg_string(&g, 6, "[LNode;");
        hg_class(&g, 4, C_ARR, 6);
    }
    hg_seg_open(&g);
    hg_u1(&g, 0x01); /* ROOT_JNI_GLOBAL node 0 */
    hg_id(&g, BASE);
    hg_id(&g, 0x42);
    for (int c = 0; c < nclasses; c++) {
        hg_u1(&g, 0x20);
        hg_id(&g, c == 0 ? C_OBJ : c == 1 ? C_CLASS : c == 2 ? C_NODE : C_ARR);
        hg_u4(&g, 0);
        hg_id(&g, c ? C_OBJ : 0);
        for (int z = 0; z < 5; z++)
            hg_id(&g, 0); /* loader, signers, protection domain, reserved x2 */
        hg_u4(&g, c == 2 ? 8 * fields + 4 : 0);
        hg_u2(&g, 0); /* constant pool */
        hg_u2(&g, 0); /* statics */
        hg_u2(&g, c == 2 ? (uint16_t)(fields + 1) : 0);
        for (uint32_t f = 0; c == 2 && f <= fields; f++) {
            hg_id(&g, f < fields ? 4 : 5);
            hg_u1(&g, f < fields ? 2 : 10);
        }
    }
    uint64_t s = seed | 1, start = 0, stride = 1;
    if (shuffled == HG_INTERLEAVED && n % 2) { /* the even objects, then the odd ones */
        stride = 2;
    } else if (shuffled && n > 2) { /* a random start, then a stride coprime to n */
        start = hg_rnd(&s) % n;
        for (;;) {
            stride = hg_rnd(&s) % (n - 1) + 1;
            uint64_t x = stride, y = n;
            while (y) {
                uint64_t t = x % y;
                x = y;
                y = t;
            }
            if (x == 1)
                break;
        }
    }
    size_t seg_start = g.n;
    for (uint64_t q = 0, i = start % n; q < n; q++, i = (i + stride) % n) {
        if (g.n - seg_start > seg_bytes) {
            hg_seg_open(&g);
            seg_start = g.n;
        }
        hg_u1(&g, 0x21);
        hg_id(&g, BASE + i * STRIDE);
        hg_u4(&g, 0);
        hg_id(&g, C_NODE);
        hg_u4(&g, 8 * fields + 4);
        if (arrays) {
            hg_id(&g, BASE + i * STRIDE + INSTANCE);
            hg_u4(&g, (uint32_t)i);
            hg_u1(&g, 0x22);
            hg_id(&g, BASE + i * STRIDE + INSTANCE);
            hg_u4(&g, 0);
            hg_u4(&g, nref);
            hg_id(&g, C_ARR);
            for (uint32_t f = 0; f < nref; f++)
                hg_id(&g, BASE + hg_slot(seed, i, f, n) * STRIDE);
            continue;
        }
        for (uint32_t f = 0; f < nref; f++) {
            uint64_t t = shape == HG_LIST ? i + 1 : shape == HG_TREE ? 2 * i + 1 + f : hg_rnd(&s) % n;
            hg_id(&g, t < n ? BASE + t * STRIDE : 0);
        }
        hg_u4(&g, (uint32_t)i);
    }
    hg_seg_close(&g);
    hg_record(&g, 0x2C, 0);
    return g;
}

static inline hgen hprof_generate_spread(int shape, uint64_t n, uint32_t nref, int shuffled, size_t seg_bytes,
                                         uint64_t seed, uint64_t gap)
{
    return hprof_generate_layout(shape, n, nref, shuffled, seg_bytes, seed, gap, 0);
}

static inline hgen hprof_generate_mirrors(int shape, uint64_t n, uint32_t nref, int shuffled, size_t seg_bytes,
                                          uint64_t seed)
{
    return hprof_generate_layout(shape, n, nref, shuffled, seg_bytes, seed, 0, 1);
}

static inline hgen hprof_generate_shape(int shape, uint64_t n, uint32_t nref, int shuffled, size_t seg_bytes,
                                        uint64_t seed)
{
    return hprof_generate_spread(shape, n, nref, shuffled, seg_bytes, seed, 0);
}

/* The n bytes at p as gzip members of block bytes of input each (the last
 * shorter), deflated at level, as HotSpot's `GC.heap_dump -gz=level` writes
 * a dump (heapDumperCompression.cpp): the first member's header carries the
 * comment "HPROF BLOCKSIZE=stated" (stated 0: no comment).  hcrc: every
 * member's header also carries its CRC (FHCRC), which HotSpot's do not. */
static inline hgen hprof_gzip_members(const uint8_t *p, size_t n, size_t block, uint32_t stated, int level, int hcrc)
{
    hgen g = {0};
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    char comment[40];
    snprintf(comment, sizeof comment, "HPROF BLOCKSIZE=%u", stated);
    size_t o = 0;
    do {
        size_t k = n - o < block ? n - o : block;
        gz_header h;
        memset(&h, 0, sizeof h);
        h.os = 3;
        h.hcrc = hcrc;
        if (o == 0 && stated)
            h.comment = (Bytef *)comment;
        if (deflateReset(&z) != Z_OK || deflateSetHeader(&z, &h) != Z_OK)
            abort();
        size_t bound = deflateBound(&z, (uLong)k) + sizeof comment + 64;
        if (g.n + bound > g.cap) {
            g.cap = 2 * (g.n + bound);
            if (!(g.p = realloc(g.p, g.cap)))
                abort();
        }
        z.next_in = (Bytef *)(p + o);
        z.avail_in = (uInt)k;
        z.next_out = g.p + g.n;
        z.avail_out = (uInt)bound;
        if (deflate(&z, Z_FINISH) != Z_STREAM_END)
            abort();
        g.n += bound - z.avail_out;
        o += k;
    } while (o < n);
    deflateEnd(&z);
    return g;
}

#endif
