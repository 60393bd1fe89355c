/* hprof_edges.c -- the HPROF importer's edges and addresses: each chunk's
 * slice of the edges (chunk_slices) and whether pass 2 writes them into the
 * snapshot in place (edges_direct), pass 1's ids taken over as the
 * snapshot's addr[] (ids_as_addr); after pass 2, out of address order, the
 * buckets' records put in index order on every thread (edges_in_order,
 * edge_worker), then the addresses, with each object's checks on the way
 * (place_addresses), and the rest of the validation (check_graph). */

#define GCS_HPROF_IMPORTER
#include <stdlib.h>
#include <string.h>

#include "../common/internal.h"
#include "heapdump_internal.h"
#include "snapshot_internal.h"

#define EDGE_AHEAD 64          /* objects edges_in_order loads ahead */
#define EXT_AHEAD_LINES 4      /* cache lines of a bucket's blocks edges_in_order loads ahead */

/* ---- the edges' layout (between the passes) ------------------------------------------ */

/* Each chunk's references, now that its instances' classes are resolved,
 * and its slice of the temporary edges (file order: each object's header
 * and its references; place). */
void _gcs_hprof_chunk_slices(imp *m)
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

int _gcs_hprof_edges_direct(imp *m)
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

/* Pass 1's ids, for the snapshot to take over as its addr[] where they are
 * in index order (addr_ids: direct, every id above the one before in file
 * order; place_addresses turns each into its address in
 * place): 8 B per object of pages touched already, rather than as many
 * fresh ones the kernel must clear.  Otherwise freed: NULL. */
uint64_t *_gcs_hprof_ids_as_addr(imp *m)
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

/* ---- the edges in index order (after pass 2) ----------------------------------------- */

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
            _gcs_hprof_resolve_refs(m, g->edges + j->base[b], at - j->base[b], &found, &missing);
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

int _gcs_hprof_edges_in_order(imp *m, gcs_err *err)
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

/* ---- the addresses and the validation ------------------------------------------------ */

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
int _gcs_hprof_place_addresses(imp *m, int *bad)
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
int _gcs_hprof_check_graph(const gcs_snapshot *g, int objects_bad, gcs_err *err)
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
