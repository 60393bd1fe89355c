/* cky.c -- CKY parsing of generated sentences, the paper's "CKY".
 *
 * Sentences are generated from the bundled grammar (cky_grammar.c, Chomsky
 * normal form); `steps` rounds of `size` sentences each.  Mutators take
 * sentences from a shared counter and parse each with CKY into a packed
 * forest of GC objects, from which all parse trees can be read:
 *
 *   chart  the n(n+1)/2 cell heads, cell (a,b) covering words a..b
 *          (small enough for a small object up to CKY_MAX_LEN words)
 *   item   one per (cell, nonterminal): next item, first back-pointer;
 *          nonterminal, number of parse trees (mod 2^64)
 *   back   one per way of building the item: next, left item, right item;
 *          split point (lexical items: one back-pointer with no children)
 *
 * Like the paper's CKY, which outputs all parse trees of each sentence, the
 * forests are kept: the forest of sentence k goes to slot k % K of a shared
 * ring (K = min(size, KEEP)), so the last K sentences' forests are live,
 * many small objects, whichever mutator parsed them.
 *
 * Verification: every sentence's count is compared with a serial dense-array
 * CKY that never touches the collector (_gcs_cky_count_reference); and every item
 * of the retained forests, which lived through the collections, is recounted
 * from its back-pointers. */
#include <stdlib.h>
#include <string.h>

#include "cky_grammar.h"
#include "internal.h"

#define KEEP 4096     /* forests kept, the latest sentences' */

typedef struct item {
    struct item *next;
    struct back *backs;
    uint64_t nt, count;
} item;

typedef struct back {
    struct back *next;
    item *left, *right;
    uint64_t split;
} back;

typedef struct forest {
    void *chart;           /* item *[n (n + 1) / 2] */
    uint64_t index, n, count;
} forest;

enum { MY_CHART = 0 };
enum { SH_RING = 0 };

/* cell (a, b), a <= b: words a..b */
static inline size_t cell_at(int a, int b) { return (size_t)b * (size_t)(b + 1) / 2 + (size_t)a; }

typedef struct cky_state {
    atomic_ulong next;     /* next sentence of the round */
    uint64_t *counts;      /* per sentence of the run */
    uint64_t *objects_part;
    uint64_t *words_part;
    uint8_t pair_rules[NT_COUNT][NT_COUNT][8]; /* rule ids for (B, C), 255-terminated */
} cky_state;

static int cky_setup(wl_run *r, gcs_err *err)
{
    cky_state *s = calloc(1, sizeof *s);
    r->state = s;
    if (!s || r->size * r->steps > (1ull << 32)) {
        gcs_err_set(err, s ? "cky: at most 2^32 sentences" : "cky: out of memory");
        return -1;
    }
    s->counts = calloc(r->size * r->steps, sizeof *s->counts);
    s->objects_part = calloc((size_t)r->mutators, sizeof *s->objects_part);
    s->words_part = calloc((size_t)r->mutators, sizeof *s->words_part);
    if (!s->counts || !s->objects_part || !s->words_part) {
        gcs_err_set(err, "cky: out of memory");
        return -1;
    }
    memset(s->pair_rules, 255, sizeof s->pair_rules);
    for (int k = 0; k < _gcs_cky_nrules; k++) {
        uint8_t *p = s->pair_rules[_gcs_cky_rules[k].left][_gcs_cky_rules[k].right];
        int n = 0;
        while (p[n] != 255)
            n++;
        if (n >= 7) {
            gcs_err_set(err, "cky: too many rules share a right-hand side");
            return -1;
        }
        p[n] = (uint8_t)k;
    }
    (void)_gcs_cky_nwords();
    uint64_t keep = r->size < KEEP ? r->size : KEEP;
    void *ring = gcs_gc_alloc(keep * sizeof(void *), keep);
    if (!ring) {
        gcs_err_set(err, "cky: %s", gcs_gc_last_error());
        return -1;
    }
    r->shared[SH_RING] = ring;
    return 0;
}

/* Parses words[0..n) into a fresh chart in slot MY_CHART; returns the
 * number of S parses, or -1 (heap exhausted, reported). */
static int parse(wl_run *r, int i, const int *words, int n, uint64_t *count, uint64_t *objects)
{
    cky_state *s = r->state;
    size_t ncells = cell_at(0, n);
    item **chart = _gcs_wl_alloc(r, ncells * sizeof(void *), ncells);
    if (!chart)
        return -1;
    r->slot[i][MY_CHART] = chart;
    uint64_t made = 1;
    /* Items and back-pointers are linked into the chart as soon as they
     * exist, and objects do not move, so raw pointers stay valid. */
    for (int w = 0; w < n; w++) {
        uint32_t cats = _gcs_cky_word_cats(words[w]);
        for (int a = 0; a < NT_COUNT; a++) {
            if (!((cats >> a) & 1))
                continue;
            item *it = _gcs_wl_alloc(r, sizeof(item), 2);
            if (!it)
                return -1;
            it->nt = (uint64_t)a;
            it->next = chart[cell_at(w, w)];
            chart[cell_at(w, w)] = it;
            back *b = _gcs_wl_alloc(r, sizeof(back), 3);
            if (!b)
                return -1;
            b->split = (uint64_t)w;
            it->backs = b;
            it->count = 1;
            made += 2;
        }
    }
    for (int len = 2; len <= n; len++) {
        for (int a = 0; a + len <= n; a++) {
            int b_end = a + len; /* words a..b_end-1 */
            item *found[NT_COUNT] = {0};
            item **cell = &chart[cell_at(a, b_end - 1)];
            for (int m = a + 1; m < b_end; m++) {
                for (item *left = chart[cell_at(a, m - 1)]; left; left = left->next)
                    for (item *right = chart[cell_at(m, b_end - 1)]; right; right = right->next) {
                        const uint8_t *rules = s->pair_rules[left->nt][right->nt];
                        for (int k = 0; rules[k] != 255; k++) {
                            int lhs = _gcs_cky_rules[rules[k]].lhs;
                            item *it = found[lhs];
                            if (!it) {
                                it = _gcs_wl_alloc(r, sizeof(item), 2);
                                if (!it)
                                    return -1;
                                it->nt = (uint64_t)lhs;
                                it->next = *cell;
                                *cell = it;
                                found[lhs] = it;
                                made++;
                            }
                            back *bp = _gcs_wl_alloc(r, sizeof(back), 3);
                            if (!bp)
                                return -1;
                            bp->left = left;
                            bp->right = right;
                            bp->split = (uint64_t)m;
                            bp->next = it->backs;
                            it->backs = bp;
                            it->count += left->count * right->count;
                            made++;
                        }
                    }
            }
            gcs_gc_safepoint();
        }
    }
    *count = 0;
    for (item *it = chart[cell_at(0, n - 1)]; it; it = it->next)
        if (it->nt == NT_S)
            *count = it->count;
    *objects += made;
    return 0;
}

static void cky_mutator(wl_run *r, int i)
{
    cky_state *s = r->state;
    int words[CKY_MAX_LEN];
    uint64_t objects = 0, nwords = 0;
    uint64_t keep = r->size < KEEP ? r->size : KEEP;
    void **ring = r->shared[SH_RING];
    for (uint64_t round = 0; round < r->steps; round++) {
        for (;;) {
            uint64_t k = atomic_fetch_add(&s->next, 1);
            if (k >= r->size)
                break;
            uint64_t index = round * r->size + k;
            int n = _gcs_cky_generate(r->seed, index, words);
            nwords += (uint64_t)n;
            uint64_t count;
            if (parse(r, i, words, n, &count, &objects) < 0)
                return;
            s->counts[index] = count;
            forest *f = _gcs_wl_alloc(r, sizeof(forest), 1);
            if (!f)
                return;
            f->chart = r->slot[i][MY_CHART];
            f->index = index;
            f->n = (uint64_t)n;
            f->count = count;
            /* the forest of sentence index - keep becomes garbage; two
             * mutators never hold sentences keep apart at once, but the
             * store is atomic all the same */
            __atomic_store_n(&ring[index % keep], (void *)f, __ATOMIC_RELAXED);
            r->slot[i][MY_CHART] = NULL;
            if (i == 0 && (k & 63) == 0)
                _gcs_wl_progress(r, ((double)round + (double)k / (double)r->size) / (double)r->steps);
        }
        if (_gcs_wl_barrier(r) < 0)
            return;
        if (i == 0)
            atomic_store(&s->next, 0);
        if (_gcs_wl_barrier(r) < 0)
            return;
    }
    s->objects_part[i] = objects;
    s->words_part[i] = nwords;
}

/* Recounts every item of a retained forest from its back-pointers. */
static int recount(const forest *f, const int *words, uint64_t *items)
{
    item **chart = f->chart;
    int n = (int)f->n;
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++)
            for (item *it = chart[cell_at(a, b)]; it; it = it->next) {
                uint64_t c = 0;
                (*items)++;
                for (back *bp = it->backs; bp; bp = bp->next) {
                    if (!bp->left) {
                        if (b != a || !((_gcs_cky_word_cats(words[a]) >> it->nt) & 1))
                            return -1;
                        c += 1;
                        continue;
                    }
                    int m = (int)bp->split;
                    if (m <= a || m > b || bp->right->nt >= NT_COUNT || bp->left->nt >= NT_COUNT)
                        return -1;
                    c += bp->left->count * bp->right->count;
                }
                if (c != it->count)
                    return -1;
            }
    return 0;
}

static void cky_verify(wl_run *r, gcs_workload_result *res)
{
    cky_state *s = r->state;
    uint64_t total = r->size * r->steps, objects = 0, nwords = 0, bad = 0, first_bad = 0, ambiguous = 0;
    double sum_log2 = 0;
    int words[CKY_MAX_LEN];
    for (uint64_t k = 0; k < total; k++) {
        int n = _gcs_cky_generate(r->seed, k, words);
        uint64_t ref = _gcs_cky_count_reference(words, n);
        if (ref != s->counts[k] || ref == 0) {
            if (!bad)
                first_bad = k;
            bad++;
        }
        ambiguous += ref > 1;
        for (uint64_t c = ref; c > 1; c >>= 1)
            sum_log2 += 1;
    }
    for (int i = 0; i < r->mutators; i++) {
        objects += s->objects_part[i];
        nwords += s->words_part[i];
    }
    _gcs_wl_figure(res, "sentences", (double)total);
    _gcs_wl_figure(res, "mean_words", (double)nwords / (double)total);
    _gcs_wl_figure(res, "parse_objects", (double)objects);
    _gcs_wl_figure(res, "ambiguous_share", (double)ambiguous / (double)total);
    _gcs_wl_figure(res, "mean_log2_parses", sum_log2 / (double)total);
    if (bad) {
        int n = _gcs_cky_generate(r->seed, first_bad, words);
        _gcs_wl_verdict(res, 0,
                   "cky: %llu of %llu sentences have a parse count different from the serial reference "
                   "(first: sentence %llu, %d words: %llu, reference %llu)",
                   (unsigned long long)bad, (unsigned long long)total, (unsigned long long)first_bad, n,
                   (unsigned long long)s->counts[first_bad], (unsigned long long)_gcs_cky_count_reference(words, n));
        return;
    }
    uint64_t forests = 0, items = 0;
    {
        void **ring = r->shared[SH_RING];
        uint64_t keep = r->size < KEEP ? r->size : KEEP;
        for (uint64_t k = 0; k < keep; k++) {
            const forest *f = ring[k];
            if (!f)
                continue;
            forests++;
            int n = _gcs_cky_generate(r->seed, f->index, words);
            uint64_t root = 0;
            item **chart = f->chart;
            for (item *it = chart[cell_at(0, n - 1)]; it; it = it->next)
                if (it->nt == NT_S)
                    root = it->count;
            if ((uint64_t)n != f->n || recount(f, words, &items) < 0 || root != f->count ||
                root != _gcs_cky_count_reference(words, n)) {
                _gcs_wl_verdict(res, 0, "cky: the retained forest of sentence %llu does not recount to its %llu parses",
                           (unsigned long long)f->index, (unsigned long long)f->count);
                return;
            }
        }
    }
    uint64_t want = r->size < KEEP ? r->size : KEEP;
    if (forests != want) {
        _gcs_wl_verdict(res, 0, "cky: %llu forests retained, expected %llu", (unsigned long long)forests,
                   (unsigned long long)want);
        return;
    }
    _gcs_wl_figure(res, "retained_forests", (double)forests);
    _gcs_wl_verdict(res, 1,
               "cky: %llu sentences' parse counts match the serial reference; %llu retained forests "
               "(%llu items) recount",
               (unsigned long long)total, (unsigned long long)forests, (unsigned long long)items);
}

static void cky_teardown(wl_run *r)
{
    cky_state *s = r->state;
    if (s) {
        free(s->counts);
        free(s->objects_part);
        free(s->words_part);
    }
    free(s);
    r->state = NULL;
}

const wl_impl _gcs_wl_cky = {
    .info = {
        .name = "cky",
        .summary = "CKY parsing of sentences generated from a bundled grammar; forests of small parse objects",
        .size_meaning = "sentences per round",
        .steps_meaning = "rounds",
        .default_size = 4000,
        .default_steps = 4,
        .max_size = 100000000,
        .max_steps = 100000,
        .default_heap = 48u << 20,
    },
    .setup = cky_setup,
    .mutator = cky_mutator,
    .verify = cky_verify,
    .teardown = cky_teardown,
};
