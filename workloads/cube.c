/* cube.c -- beam-bounded breadth-first search for a Rubik's cube solution,
 * the paper's "Cube".
 *
 * The cube is scrambled with `steps` random face turns from the solved state
 * (so a solution of at most `steps` turns exists), then searched breadth
 * first, level by level, for at most `steps` levels.  Each level every
 * mutator takes chunks of the frontier from a shared counter, applies the
 * 15 non-redundant face turns to each state and allocates a state record per
 * child (a GC object: a parent pointer, the 48 movable stickers, the move,
 * the depth and a score).  The frontier is bounded by a beam of `size`
 * states: the children with the fewest stickers off their face's colour go
 * on, the rest become garbage.  The beam makes it an approximate search: it
 * stops at the first solved state, or after `steps` levels with the best
 * state seen.  As in the paper, every thread allocates state records, so
 * their pages are spread over the threads' memory nodes.
 *
 * Stickers: location j (0..47) is a non-centre facelet, face j / 8; a state
 * holds at location j the home location of the sticker that is there.  The
 * move tables are computed at start-up from the cube's geometry (each
 * sticker a position and a normal in {-1,0,1}^3; a clockwise quarter turn of
 * a face rotates its layer by -90 degrees about the face's normal).
 *
 * Verification: the best record's parent chain is walked to the root; every
 * record on it must hold exactly the state the tables give for the moves so
 * far (a freed and reused record would not), and the move sequence is
 * replayed on the scramble by rotating the 54 stickers' vectors directly
 * (no tables); that count of stickers off their colour must equal the
 * record's score, and be no worse than the scramble's. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NLOC 48
#define NMOVES 18   /* face f = m / 3 turned (m % 3) + 1 quarter turns clockwise */
#define NOMOVE 255
#define CHUNK_PTRS 1000   /* records per chunk: a chunk stays a small object */
#define MAXSCORE NLOC

typedef struct rec {
    struct rec *parent;
    uint8_t st[NLOC];
    uint8_t move, score;
    uint16_t depth;
    uint32_t pad;
} rec;

/* Lists of records are chains of chunks: word 0 the next chunk, then up to
 * CHUNK_PTRS records, NULL after the last.  Chunks are small objects, so a
 * growing list never needs a large contiguous run of pages. */
enum { SH_FRONTIER = 0, SH_BEST = 2, SH_ROOT = 3 }; /* frontier: an array of chunks */
enum { MY_CAND = 0, MY_BEST = 1, MY_KEEP = 2 };

typedef struct vec { int x[3]; } vec;

/* faces: 0 R(+x) 1 U(+y) 2 F(+z) 3 L(-x) 4 D(-y) 5 B(-z); opposite = (f + 3) % 6 */
static vec face_normal(int f)
{
    vec v = {{0, 0, 0}};
    v.x[f % 3] = f < 3 ? 1 : -1;
    return v;
}

static int dot(vec a, vec b) { return a.x[0] * b.x[0] + a.x[1] * b.x[1] + a.x[2] * b.x[2]; }

/* v rotated by -90 degrees (clockwise seen from the tip of a) about the unit
 * axis a: a (a.v) - a x v. */
static vec rot(vec v, vec a)
{
    vec c = {{a.x[1] * v.x[2] - a.x[2] * v.x[1], a.x[2] * v.x[0] - a.x[0] * v.x[2],
              a.x[0] * v.x[1] - a.x[1] * v.x[0]}};
    int d = dot(a, v);
    vec r;
    for (int k = 0; k < 3; k++)
        r.x[k] = a.x[k] * d - c.x[k];
    return r;
}

typedef struct sticker { vec pos, normal, home; } sticker;

/* The 54 stickers of a solved cube, face by face; centres last of each
 * face's nine.  Fills loc[] with the 48 movable ones in location order. */
static void solved_stickers(sticker all[54], sticker loc[NLOC])
{
    int n = 0, nl = 0;
    for (int f = 0; f < 6; f++) {
        vec nv = face_normal(f);
        int k = f % 3, u = (k + 1) % 3, w = (k + 2) % 3;
        sticker centre = {0};
        for (int a = -1; a <= 1; a++)
            for (int b = -1; b <= 1; b++) {
                sticker s;
                s.pos.x[k] = nv.x[k];
                s.pos.x[u] = a;
                s.pos.x[w] = b;
                s.normal = nv;
                s.home = nv;
                if (a == 0 && b == 0) {
                    centre = s;
                    continue;
                }
                loc[nl++] = s;
                all[n++] = s;
            }
        all[n++] = centre;
    }
}

static void turn_stickers(sticker *s, int n, int move)
{
    vec a = face_normal(move / 3);
    for (int t = 0; t <= move % 3; t++)
        for (int i = 0; i < n; i++)
            if (dot(s[i].pos, a) == 1) {
                s[i].pos = rot(s[i].pos, a);
                s[i].normal = rot(s[i].normal, a);
            }
}

static int same(vec a, vec b) { return a.x[0] == b.x[0] && a.x[1] == b.x[1] && a.x[2] == b.x[2]; }

/* src[m][j]: the location whose sticker move m brings to location j. */
static uint8_t src[NMOVES][NLOC];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static int tables_ok;

static void build_tables(void)
{
    sticker all[54], loc[NLOC];
    solved_stickers(all, loc);
    tables_ok = 1;
    for (int m = 0; m < NMOVES; m++) {
        sticker s[NLOC];
        memcpy(s, loc, sizeof s);
        turn_stickers(s, NLOC, m);
        for (int j = 0; j < NLOC; j++) {
            int to = -1;
            for (int k = 0; k < NLOC; k++)
                if (same(s[j].pos, loc[k].pos) && same(s[j].normal, loc[k].normal))
                    to = k;
            if (to < 0)
                tables_ok = 0;
            else
                src[m][to] = (uint8_t)j;
        }
    }
}

static inline void apply(const uint8_t *in, uint8_t *out, int m)
{
    const uint8_t *t = src[m];
    for (int j = 0; j < NLOC; j++)
        out[j] = in[t[j]];
}

static inline int score_of(const uint8_t *st)
{
    int s = 0;
    for (int j = 0; j < NLOC; j++)
        s += (st[j] >> 3) != (j >> 3);
    return s;
}

/* Turning the same face twice in a row, or the opposite face in the lower
 * order, only repeats states reachable by a shorter or canonical sequence. */
static inline int allowed(int prev, int m)
{
    if (prev == NOMOVE)
        return 1;
    int f = m / 3, pf = prev / 3;
    return f != pf && !(f == (pf + 3) % 6 && f < pf);
}

typedef struct cube_state {
    uint8_t scramble[1024];
    int nscramble;
    int root_score;
    uint64_t nchunks;            /* chunks in the current frontier */
    atomic_ulong next_chunk;
    uint64_t *ncand;             /* per mutator: records in its head chunk (MY_CAND) */
    uint64_t *nkeep;             /* ... and in its head chunk of MY_KEEP */
    uint64_t (*hist)[MAXSCORE + 1];
    uint64_t *keep_quota;        /* per mutator: how many of the threshold score it keeps */
    int threshold;
    int done;
    uint64_t levels, records, max_frontier;
    uint64_t *records_part;
} cube_state;

static int cube_setup(wl_run *r, gcs_err *err)
{
    pthread_once(&tables_once, build_tables);
    if (!tables_ok) {
        gcs_err_set(err, "cube: move tables are inconsistent");
        return -1;
    }
    if (r->steps > sizeof ((cube_state *)0)->scramble) {
        gcs_err_set(err, "cube: at most %zu levels", sizeof ((cube_state *)0)->scramble);
        return -1;
    }
    cube_state *s = calloc(1, sizeof *s);
    size_t m = (size_t)r->mutators;
    if (s) {
        s->ncand = calloc(m, sizeof *s->ncand);
        s->hist = calloc(m, sizeof *s->hist);
        s->keep_quota = calloc(m, sizeof *s->keep_quota);
        s->nkeep = calloc(m, sizeof *s->nkeep);
        s->records_part = calloc(m, sizeof *s->records_part);
    }
    r->state = s;
    if (!s || !s->ncand || !s->hist || !s->keep_quota || !s->nkeep || !s->records_part) {
        gcs_err_set(err, "cube: out of memory");
        return -1;
    }
    /* scramble: `steps` canonical random turns */
    uint8_t st[NLOC], tmp[NLOC];
    for (int j = 0; j < NLOC; j++)
        st[j] = (uint8_t)j;
    uint64_t rng = wl_seed(r->seed, 2);
    int prev = NOMOVE;
    for (uint64_t i = 0; i < r->steps; i++) {
        int mv;
        do
            mv = (int)(gcs_random_next(&rng) % NMOVES);
        while (!allowed(prev, mv));
        s->scramble[s->nscramble++] = (uint8_t)mv;
        apply(st, tmp, mv);
        memcpy(st, tmp, sizeof st);
        prev = mv;
    }
    rec *root = gcs_gc_alloc(sizeof(rec), 1);
    if (!root) {
        gcs_err_set(err, "cube: %s", gcs_gc_last_error());
        return -1;
    }
    memcpy(root->st, st, NLOC);
    root->move = NOMOVE;
    root->score = (uint8_t)score_of(st);
    s->root_score = root->score;
    r->shared[SH_ROOT] = root;
    r->shared[SH_BEST] = root;
    void **top = gcs_gc_alloc(sizeof(void *), 1);
    if (!top) {
        gcs_err_set(err, "cube: %s", gcs_gc_last_error());
        return -1;
    }
    r->shared[SH_FRONTIER] = top;
    void **chunk = gcs_gc_alloc((1 + CHUNK_PTRS) * sizeof(void *), 1 + CHUNK_PTRS);
    if (!chunk) {
        gcs_err_set(err, "cube: %s", gcs_gc_last_error());
        return -1;
    }
    top[0] = chunk;
    chunk[1] = r->shared[SH_ROOT];
    s->nchunks = 1;
    s->done = root->score == 0;
    return 0;
}

/* Appends c to mutator i's chunk list in slot `which` (fill count *fill). */
static int push_rec(wl_run *r, int i, int which, uint64_t *fill, rec *c)
{
    void **head = r->slot[i][which];
    if (!head || *fill == CHUNK_PTRS) {
        gcs_gc_push_root((void **)&c); /* c may be reachable from nothing else yet */
        void **n = _gcs_wl_alloc(r, (1 + CHUNK_PTRS) * sizeof(void *), 1 + CHUNK_PTRS);
        gcs_gc_pop_roots(1);
        if (!n)
            return -1;
        n[0] = r->slot[i][which];
        r->slot[i][which] = head = n;
        *fill = 0;
    }
    head[1 + (*fill)++] = c;
    return 0;
}

static void expand(wl_run *r, int i)
{
    cube_state *s = r->state;
    uint64_t made = 0;
    for (;;) {
        uint64_t ch = atomic_fetch_add(&s->next_chunk, 1);
        if (ch >= s->nchunks)
            break;
        void **chunk = ((void ***)r->shared[SH_FRONTIER])[ch];
        for (uint64_t k = 1; k <= CHUNK_PTRS && chunk[k]; k++) {
            rec *p = chunk[k]; /* reachable from the frontier */
            for (int m = 0; m < NMOVES; m++) {
                if (!allowed(p->move, m))
                    continue;
                rec *c = _gcs_wl_alloc(r, sizeof(rec), 1);
                if (!c)
                    return;
                c->parent = p;
                apply(p->st, c->st, m);
                c->move = (uint8_t)m;
                c->depth = (uint16_t)(p->depth + 1);
                int sc = score_of(c->st);
                c->score = (uint8_t)sc;
                s->hist[i][sc]++;
                made++;
                if (push_rec(r, i, MY_CAND, &s->ncand[i], c) < 0)
                    return;
                rec *b = r->slot[i][MY_BEST];
                if (!b || sc < b->score)
                    r->slot[i][MY_BEST] = c;
            }
            gcs_gc_safepoint();
        }
    }
    s->records_part[i] += made;
}

/* Mutator 0, between barriers: the threshold score and how many records of
 * that score each mutator keeps; the new best; whether to stop. */
static void select_beam(wl_run *r, uint64_t level)
{
    cube_state *s = r->state;
    int m = r->mutators;
    uint64_t total[MAXSCORE + 1] = {0}, all = 0;
    for (int i = 0; i < m; i++)
        for (int k = 0; k <= MAXSCORE; k++)
            total[k] += s->hist[i][k];
    for (int k = 0; k <= MAXSCORE; k++)
        all += total[k];
    int t = MAXSCORE;
    uint64_t below = 0; /* candidates with score < t */
    for (int k = 0; k <= MAXSCORE; k++) {
        if (below + total[k] >= r->size) {
            t = k;
            break;
        }
        below += total[k];
    }
    s->threshold = t;
    uint64_t room = r->size > below ? r->size - below : 0, kept = below;
    for (int i = 0; i < m; i++) {
        uint64_t q = s->hist[i][t] < room ? s->hist[i][t] : room;
        room -= q;
        kept += q;
        s->keep_quota[i] = q;
    }
    rec *best = r->shared[SH_BEST];
    for (int i = 0; i < m; i++) {
        rec *b = r->slot[i][MY_BEST];
        if (b && b->score < best->score)
            best = b;
    }
    r->shared[SH_BEST] = best;
    s->levels = level + 1;
    if (kept > s->max_frontier)
        s->max_frontier = kept;
    s->done = best->score == 0 || kept == 0 || level + 1 >= r->steps || all == 0;
}

/* Mutator 0, after the copy: the mutators' kept chunks become the frontier. */
static int gather_frontier(wl_run *r)
{
    cube_state *s = r->state;
    uint64_t n = 0;
    for (int i = 0; i < r->mutators; i++)
        for (void **c = r->slot[i][MY_KEEP]; c; c = c[0])
            n++;
    r->shared[SH_FRONTIER] = NULL;
    s->nchunks = 0;
    if (n == 0)
        return 0;
    void ***top = _gcs_wl_alloc(r, n * sizeof(void *), n); /* the chunks are in MY_KEEP slots meanwhile */
    if (!top)
        return -1;
    n = 0;
    for (int i = 0; i < r->mutators; i++) {
        for (void **c = r->slot[i][MY_KEEP]; c; c = c[0])
            top[n++] = c;
        r->slot[i][MY_KEEP] = NULL;
    }
    r->shared[SH_FRONTIER] = top;
    s->nchunks = n;
    return 0;
}

static void cube_mutator(wl_run *r, int i)
{
    cube_state *s = r->state;
    if (s->done)
        return;
    for (uint64_t level = 0;; level++) {
        s->ncand[i] = 0;
        memset(s->hist[i], 0, sizeof s->hist[i]);
        r->slot[i][MY_BEST] = NULL;
        expand(r, i);
        if (wl_failed(r))
            return;
        if (_gcs_wl_barrier(r) < 0)
            return;
        if (i == 0)
            select_beam(r, level);
        if (_gcs_wl_barrier(r) < 0)
            return;
        /* keep the beam's share of the candidates, forget the rest */
        uint64_t q = s->keep_quota[i];
        s->nkeep[i] = 0;
        for (void **c = r->slot[i][MY_CAND]; c; c = c[0])
            for (uint64_t k = 1; k <= CHUNK_PTRS && c[k]; k++) {
                rec *x = c[k];
                if (x->score < s->threshold || (x->score == s->threshold && q > 0 && q--))
                    if (push_rec(r, i, MY_KEEP, &s->nkeep[i], x) < 0)
                        return;
            }
        r->slot[i][MY_CAND] = NULL;
        r->slot[i][MY_BEST] = NULL;
        if (_gcs_wl_barrier(r) < 0)
            return;
        if (i == 0) {
            if (gather_frontier(r) < 0)
                return;
            atomic_store(&s->next_chunk, 0);
            _gcs_wl_progress(r, (double)(level + 1) / (double)r->steps);
        }
        if (_gcs_wl_barrier(r) < 0)
            return;
        if (s->done)
            return;
    }
}

static void cube_verify(wl_run *r, gcs_workload_result *res)
{
    cube_state *s = r->state;
    rec *best = r->shared[SH_BEST];
    uint64_t records = 0;
    for (int i = 0; i < r->mutators; i++)
        records += s->records_part[i];
    /* the chain, root first */
    int depth = best->depth;
    rec **chain = calloc((size_t)depth + 1, sizeof *chain);
    if (!chain) {
        _gcs_wl_verdict(res, 0, "cube: out of memory verifying");
        return;
    }
    int n = 0;
    for (rec *p = best; p; p = p->parent) {
        if (n > depth) {
            free(chain);
            _gcs_wl_verdict(res, 0, "cube: the best record's parent chain is longer than its depth %d", depth);
            return;
        }
        chain[depth - n++] = p;
    }
    if (n != depth + 1 || chain[0] != r->shared[SH_ROOT]) {
        free(chain);
        _gcs_wl_verdict(res, 0, "cube: the best record's parent chain (%d records) does not lead to the scramble", n);
        return;
    }
    uint8_t st[NLOC], tmp[NLOC];
    memcpy(st, chain[0]->st, NLOC);
    for (int k = 1; k <= depth; k++) {
        rec *c = chain[k];
        if (c->move >= NMOVES || c->depth != k || !allowed(chain[k - 1]->move, c->move)) {
            free(chain);
            _gcs_wl_verdict(res, 0, "cube: record %d of the solution has move %d depth %d", k, c->move, c->depth);
            return;
        }
        apply(st, tmp, c->move);
        memcpy(st, tmp, NLOC);
        if (memcmp(st, c->st, NLOC) != 0 || c->score != score_of(st)) {
            free(chain);
            _gcs_wl_verdict(res, 0, "cube: record %d of the solution does not hold the state its moves give "
                               "(a record was overwritten)", k);
            return;
        }
    }
    /* replay scramble + solution on the sticker geometry, no tables */
    sticker all[54], loc[NLOC];
    solved_stickers(all, loc);
    for (int k = 0; k < s->nscramble; k++)
        turn_stickers(all, 54, s->scramble[k]);
    int scramble_off = 0, off = 0;
    for (int i = 0; i < 54; i++)
        scramble_off += !same(all[i].normal, all[i].home);
    char moves[3 * 1024 + 1] = "";
    static const char faces[] = "RUFLDB";
    static const char *const turns[] = {"", "2", "'"};
    size_t ml = 0;
    for (int k = 1; k <= depth; k++) {
        turn_stickers(all, 54, chain[k]->move);
        if (ml + 4 < sizeof moves)
            ml += (size_t)snprintf(moves + ml, sizeof moves - ml, "%s%c%s", k > 1 ? " " : "",
                                   faces[chain[k]->move / 3], turns[chain[k]->move % 3]);
    }
    for (int i = 0; i < 54; i++)
        off += !same(all[i].normal, all[i].home);
    free(chain);
    _gcs_wl_figure(res, "scramble_score", scramble_off);
    _gcs_wl_figure(res, "best_score", off);
    _gcs_wl_figure(res, "solution_moves", depth);
    _gcs_wl_figure(res, "solved", off == 0);
    _gcs_wl_figure(res, "levels", (double)s->levels);
    _gcs_wl_figure(res, "records", (double)records);
    _gcs_wl_figure(res, "max_frontier", (double)s->max_frontier);
    if (off != best->score || scramble_off != s->root_score) {
        _gcs_wl_verdict(res, 0,
                   "cube: replaying the %d-move solution leaves %d stickers off their colour, the search "
                   "claimed %d (scramble: %d, claimed %d)",
                   depth, off, best->score, scramble_off, s->root_score);
        return;
    }
    if (off > scramble_off) {
        _gcs_wl_verdict(res, 0, "cube: the solution is worse than the scramble (%d > %d)", off, scramble_off);
        return;
    }
    _gcs_wl_verdict(res, 1, "cube: %s: %d moves (%s) take the %d-move scramble from %d to %d stickers off colour",
               off == 0 ? "solved" : "approximate", depth, depth ? moves : "none", s->nscramble, scramble_off, off);
}

static void cube_teardown(wl_run *r)
{
    cube_state *s = r->state;
    if (s) {
        free(s->ncand);
        free(s->hist);
        free(s->keep_quota);
        free(s->nkeep);
        free(s->records_part);
    }
    free(s);
    r->state = NULL;
}

const wl_impl _gcs_wl_cube = {
    .info = {
        .name = "cube",
        .summary = "beam-bounded breadth-first search for a Rubik's cube solution; every mutator allocates "
                   "state records",
        .size_meaning = "beam width (states kept per level)",
        .steps_meaning = "scramble length = most levels searched",
        .default_size = 20000,
        .default_steps = 14,
        .max_size = 100000000,
        .max_steps = 1000,
        .default_heap = 48u << 20,
    },
    .setup = cube_setup,
    .mutator = cube_mutator,
    .verify = cube_verify,
    .teardown = cube_teardown,
};
