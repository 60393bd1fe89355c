/* span_internal.h -- what the files of the T-infinity walk share: span.c
 * (the entry point, which chooses among the walks), span_levels.c (the BFS by
 * levels), span_forest.c (the forest's depth-first walk), span_dijkstra.c
 * (Dijkstra with buckets or a heap) and span_sweeps.c (the label-correcting
 * sweeps).  Not installed; the rest of heap inspection sees the span through
 * inspect_internal.h (_gcs_inspect_span) alone.
 *
 * Fenced by GCS_SPAN_FILES, which those five files define before they
 * include this header, so that its short names (idlist, bit_get, ...) meet
 * no other reader.  What they share: the walks' result (span_bfs) and the
 * counts one thread gathers (level_acc), the id lists and bitmaps they walk
 * by, an object's weight, and the walks one file defines for span.c
 * (_gcs_span_), under the file that defines them, their comments at their
 * definitions.  The small helpers are static inline, so that the walks' hot
 * loops compile as they did when the walks were one file. */
#ifndef GCSCALE_MODEL_SPAN_INTERNAL_H
#define GCSCALE_MODEL_SPAN_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "inspect_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef GCS_SPAN_FILES

typedef struct idlist {
    uint32_t *v;
    size_t n, cap;
} idlist;

static inline int idlist_grow(idlist *l)
{
    size_t cap = l->cap ? 2 * l->cap : 1024;
    uint32_t *grown = realloc(l->v, cap * sizeof *grown);
    if (!grown)
        return -1;
    l->v = grown;
    l->cap = cap;
    return 0;
}

static inline int idlist_push(idlist *l, uint32_t v)
{
    if (l->n == l->cap && idlist_grow(l) < 0)
        return -1;
    l->v[l->n++] = v;
    return 0;
}

static inline int bit_get(const uint64_t *b, uint32_t v)
{
    return (int)(b[v >> 6] >> (v & 63)) & 1;
}

static inline void bit_set(uint64_t *b, uint32_t v)
{
    b[v >> 6] |= 1ull << (v & 63);
}

static inline void bit_clear(uint64_t *b, uint32_t v)
{
    b[v >> 6] &= ~(1ull << (v & 63));
}

/* The ids set in scratch's words [lo, hi), in order, into out (the words
 * are cleared); returns how many. */
static inline size_t bitmap_gather(uint64_t *scratch, size_t lo, size_t hi, uint32_t *out)
{
    size_t n = 0;
    for (size_t w = lo; w < hi; w++) {
        uint64_t bits = scratch[w];
        if (!bits)
            continue;
        scratch[w] = 0;
        while (bits) {
            out[n++] = (uint32_t)(w << 6 | (uint64_t)__builtin_ctzll(bits));
            bits &= bits - 1;
        }
    }
    return n;
}

/* Sorts a large list by id and drops its duplicates, through scratch (a
 * bitmap of nwords words, all 0, left all 0).  A small one is left as is. */
static inline void idlist_order(idlist *l, uint64_t *scratch, size_t nwords, size_t dense_min)
{
    if (l->n < dense_min)
        return;
    for (size_t i = 0; i < l->n; i++)
        bit_set(scratch, l->v[i]);
    l->n = bitmap_gather(scratch, 0, nwords, l->v);
}

/* The non-NULL fields among e[0, np). */
static inline uint32_t nonnull_fields(const uint32_t *e, uint32_t np)
{
    uint32_t k = 0;
    for (uint32_t f = 0; f < np; f++)
        k += e[f] != GCS_SNAPSHOT_NULL;
    return k;
}

/* d(u) = s(u) + w(u); w needs u's count of non-NULL fields. */
static inline double span_finish(const gcs_snapshot *g, uint32_t u, double cobj, double cptr, double su)
{
    uint32_t np = g->nptrs[u];
    return su + gcs_gc_mark_weight(cobj, cptr, nonnull_fields(g->edges + g->edge_start[u], np), np);
}

typedef struct span_bfs {
    uint64_t reachable, depth, revisits, chunked_arrays;
    uint32_t emin, emax;
    double wmin, wmax;
    double forest_tinf;   /* Tinf if revisits == 0 */
} span_bfs;

/* What one scan gathers: a level's next list, and the counts and ranges that
 * span_bfs sums up (acc_merge).  One a thread, so that the threads share
 * nothing while they scan (span_levels.c); the forest's walk and the sweeps
 * gather theirs in one too. */
typedef struct level_acc {
    idlist next;
    uint64_t revisits, chunked_arrays;
    uint32_t emin, emax;
    double wmin, wmax, forest_tinf;
} level_acc;

#define SPAN_MAX_THREADS 64
/* bitmap levels smaller than this are scanned on the calling thread too: a
 * level on OpenMP's threads costs two barriers, which on a host whose CPUs
 * are shared (the development VM's 2 vCPUs with other jobs) wait for a
 * descheduled thread for milliseconds; a heap of 131 levels of a few
 * thousand objects (cube) took 200 ms instead of 15, and bh's 270 000
 * objects 90 instead of 33 (docs/model.md, "Cost") */
#define SPAN_PAR_LEVEL (1u << 18)

static inline int span_threads(void)
{
#ifdef _OPENMP
    int t = omp_get_max_threads();
    return t < SPAN_MAX_THREADS ? t : SPAN_MAX_THREADS;
#else
    return 1;
#endif
}

/* Object u's weight into a's ranges; k its non-NULL fields, np its fields. */
static inline void acc_weight(level_acc *a, double cobj, double cptr, uint32_t k, uint32_t np)
{
    a->emin = k < a->emin ? k : a->emin;
    a->emax = k > a->emax ? k : a->emax;
    a->chunked_arrays += np > GCS_GC_CHUNK_FIELDS;
    double w = gcs_gc_mark_weight(cobj, cptr, k, np);
    a->wmin = w < a->wmin ? w : a->wmin;
    a->wmax = w > a->wmax ? w : a->wmax;
}

static inline void acc_reset(level_acc *a)
{
    a->next.n = 0;
    a->revisits = a->chunked_arrays = 0;
    a->emin = UINT32_MAX;
    a->emax = 0;
    a->wmin = INFINITY;
    a->wmax = a->forest_tinf = 0;
}

static inline void acc_merge(span_bfs *b, const level_acc *a)
{
    b->revisits += a->revisits;
    b->chunked_arrays += a->chunked_arrays;
    b->emin = a->emin < b->emin ? a->emin : b->emin;
    b->emax = a->emax > b->emax ? a->emax : b->emax;
    b->wmin = a->wmin < b->wmin ? a->wmin : b->wmin;
    b->wmax = a->wmax > b->wmax ? a->wmax : b->wmax;
    b->forest_tinf = a->forest_tinf > b->forest_tinf ? a->forest_tinf : b->forest_tinf;
}

/* ---- span_levels.c ------------------------------------------------------- */

int _gcs_span_levels(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *scratch,
                     size_t nwords, size_t dense_min, double *s, span_bfs *b);

/* ---- span_forest.c ------------------------------------------------------- */

int _gcs_span_forest(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, size_t nwords, span_bfs *b);

/* ---- span_dijkstra.c ----------------------------------------------------- */

int _gcs_span_heap(const gcs_snapshot *g, double cobj, double cptr, double *s, uint64_t *reached,
                   double *longest);
int _gcs_span_buckets(const gcs_snapshot *g, double cobj, double cptr, double q, size_t nslots, double *s,
                      uint64_t *live, uint64_t *reached, uint64_t *scratch, size_t nwords, size_t dense_min,
                      double *longest);

/* ---- span_sweeps.c ------------------------------------------------------- */

/* An object's label in the sweeps (span_sweeps.c tells why s and h are
 * one label); span.c allocates them, and passes 1 and 2 reuse them as s. */
typedef struct __attribute__((packed, aligned(4))) span_label {
    double s;   /* start time: min over the parents' d (0 for a root) */
    uint32_t h; /* hops from a root: the BFS level less one */
} span_label;

int _gcs_span_sweeps(const gcs_snapshot *g, double cobj, double cptr, uint64_t *live, uint64_t *dirty,
                     size_t nwords, span_label *lab, span_bfs *b, double *tinf);

#endif /* GCS_SPAN_FILES */

#endif
