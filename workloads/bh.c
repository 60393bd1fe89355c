/* bh.c -- Barnes-Hut n-body, the paper's "BH".
 *
 * N bodies of equal mass in a unit ball move under softened gravity
 * (G = 1, total mass 1), integrated with kick-drift-kick leapfrog.  Each step:
 *
 *   1. every mutator drifts its share of the bodies;           barrier
 *   2. mutator 0 alone builds the octree (GC objects) and its    barrier
 *      centres of mass, while the others wait;
 *   3. every mutator computes the tree forces on its share and
 *      kicks its velocities;                                     barrier
 *
 * As in the paper, only one thread creates the data structures that keep
 * track of the particles' motion: before building the tree, mutator 0 also
 * appends each body's position and velocity to its trajectory, of which the
 * last HISTORY steps are kept (what an n-body code buffers for output).
 * With GCS_GC_NUMA_LOCAL placement the tree, the trajectories and the bodies
 * sit on the builder's memory node.  The old tree becomes garbage at every
 * step, and so does the oldest trajectory record of every body.
 *
 * Objects: a body is a data object of 11 words (word 0 = 1, a tag no
 * pointer can equal; position, velocity, acceleration, mass); a cell has 8
 * child pointers (cell, body or NULL) then centre, half-width, mass and
 * centre of mass.  The bodies hang off one N-pointer array.
 *
 * Verification: for up to 32 sample bodies the accelerations the mutators
 * computed in the last step (tree, theta = 0.8) are compared with direct
 * O(N) summation; total momentum must stay small next to the impulses the
 * forces applied; every coordinate must be finite; every body's trajectory
 * must hold the last HISTORY steps in order, the newest at its position. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define THETA 0.8
#define EPS2 (1e-4)       /* softening length 0.01, squared */
#define DT 1e-3
#define MAX_DEPTH 64
#define SAMPLES 32
#define HISTORY 4          /* trajectory records kept per body */
#define FORCE_TOL_MAX 0.30   /* worst sample: |a_tree - a_direct| / rms |a_direct| */
#define FORCE_TOL_RMS 0.06
#define MOMENTUM_TOL 0.02    /* |P_end - P_0| / (sum of |m a| dt over the run) */

typedef struct body {
    uint64_t tag; /* 1 */
    double pos[3], vel[3], acc[3], mass;
} body;

typedef struct cell {
    void *child[8];
    double center[3], half, mass, com[3];
    /* open the cell for a body closer than this (squared) to its centre of
     * mass: size / theta (the classic criterion; Barnes' + |com - centre|
     * correction was tried and costs 3-8x the force time here) */
    double rcrit2;
} cell;

/* One step of a body's trajectory; prev is the step before. */
typedef struct traj {
    struct traj *prev;
    uint64_t step;
    double pos[3], vel[3];
} traj;

enum { SH_BODIES = 0, SH_TREE = 1, SH_TRAJ = 2 };

typedef struct bh_state {
    double p0[3];             /* momentum at the start */
    double impulse;           /* sum over steps and bodies of m |a| dt */
    double *impulse_part;     /* per mutator */
    uint64_t cells;           /* cells of the last tree */
    uint64_t max_depth;
} bh_state;

static inline int is_body(const void *p) { return *(const uint64_t *)p == 1; }

/* ---- the tree ------------------------------------------------------------------ */

static cell *new_cell(wl_run *r, const double center[3], double half)
{
    cell *c = _gcs_wl_alloc(r, sizeof(cell), 8);
    if (!c)
        return NULL;
    memcpy(c->center, center, sizeof c->center);
    c->half = half;
    return c;
}

static int octant(const cell *c, const double pos[3])
{
    return (pos[0] >= c->center[0]) | (pos[1] >= c->center[1]) << 1 | (pos[2] >= c->center[2]) << 2;
}

static void sub_center(const cell *c, int o, double out[3])
{
    double q = c->half / 2;
    for (int d = 0; d < 3; d++)
        out[d] = c->center[d] + (((o >> d) & 1) ? q : -q);
}

/* Inserts b below root.  Cells are reachable from the tree slot as soon as
 * they are linked, and the collector does not move objects, so the raw
 * pointers held here stay valid across the allocations. */
static int insert(wl_run *r, cell *root, body *b, uint64_t *ncells, uint64_t *maxd)
{
    cell *c = root;
    for (int depth = 0;; depth++) {
        if (depth >= MAX_DEPTH) {
            _gcs_wl_fail(r, "bh: bodies closer than the tree resolves (depth %d)", MAX_DEPTH);
            return -1;
        }
        if ((uint64_t)depth > *maxd)
            *maxd = (uint64_t)depth;
        int o = octant(c, b->pos);
        void *ch = c->child[o];
        if (!ch) {
            c->child[o] = b;
            return 0;
        }
        if (!is_body(ch)) {
            c = ch;
            continue;
        }
        /* split: a new cell takes the resident body, then we go on */
        double cc[3];
        sub_center(c, o, cc);
        cell *n = new_cell(r, cc, c->half / 2);
        if (!n)
            return -1;
        (*ncells)++;
        body *old = c->child[o];
        n->child[octant(n, old->pos)] = old;
        c->child[o] = n;
        c = n;
    }
}

static void summarize(cell *c)
{
    double m = 0, s[3] = {0, 0, 0};
    for (int k = 0; k < 8; k++) {
        void *ch = c->child[k];
        if (!ch)
            continue;
        if (is_body(ch)) {
            body *b = ch;
            m += b->mass;
            for (int d = 0; d < 3; d++)
                s[d] += b->mass * b->pos[d];
        } else {
            cell *sc = ch;
            summarize(sc);
            m += sc->mass;
            for (int d = 0; d < 3; d++)
                s[d] += sc->mass * sc->com[d];
        }
    }
    c->mass = m;
    double off2 = 0;
    for (int d = 0; d < 3; d++) {
        c->com[d] = m > 0 ? s[d] / m : c->center[d];
        off2 += (c->com[d] - c->center[d]) * (c->com[d] - c->center[d]);
    }
    (void)off2;
    double rc = 2 * c->half / THETA;
    c->rcrit2 = rc * rc;
}

/* Builds a fresh tree into *slot (a registered root). */
static int build_tree(wl_run *r, void **slot, body **bodies, uint64_t n, uint64_t *ncells, uint64_t *maxd)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint64_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            lo[d] = fmin(lo[d], bodies[i]->pos[d]);
            hi[d] = fmax(hi[d], bodies[i]->pos[d]);
        }
    double center[3], half = 0;
    for (int d = 0; d < 3; d++) {
        center[d] = (lo[d] + hi[d]) / 2;
        half = fmax(half, (hi[d] - lo[d]) / 2);
    }
    if (!isfinite(half)) {
        _gcs_wl_fail(r, "bh: a body left the finite range");
        return -1;
    }
    half = half * 1.0001 + 1e-12;
    *slot = NULL; /* the old tree is garbage from here on */
    cell *root = new_cell(r, center, half);
    if (!root)
        return -1;
    *slot = root;
    *ncells = 1;
    *maxd = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (insert(r, root, bodies[i], ncells, maxd) < 0)
            return -1;
        if ((i & 1023) == 0)
            gcs_gc_safepoint();
    }
    summarize(root);
    return 0;
}

/* Tree acceleration at pos, skipping `self`. */
static void tree_acc(const cell *root, const body *self, const double pos[3], double acc[3])
{
    const void *stack[8 * MAX_DEPTH + 8];
    int sp = 0;
    double a[3] = {0, 0, 0};
    stack[sp++] = root;
    while (sp > 0) {
        const void *p = stack[--sp];
        double m, q[3];
        if (is_body(p)) {
            const body *b = p;
            if (b == self)
                continue;
            m = b->mass;
            memcpy(q, b->pos, sizeof q);
        } else {
            const cell *c = p;
            double dx = c->com[0] - pos[0], dy = c->com[1] - pos[1], dz = c->com[2] - pos[2];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < c->rcrit2) { /* too close: open it */
                for (int k = 0; k < 8; k++)
                    if (c->child[k])
                        stack[sp++] = c->child[k];
                continue;
            }
            m = c->mass;
            memcpy(q, c->com, sizeof q);
        }
        double dx = q[0] - pos[0], dy = q[1] - pos[1], dz = q[2] - pos[2];
        double d2 = dx * dx + dy * dy + dz * dz + EPS2;
        double inv = m / (d2 * sqrt(d2));
        a[0] += dx * inv;
        a[1] += dy * inv;
        a[2] += dz * inv;
    }
    memcpy(acc, a, sizeof a);
}

static void direct_acc(body **bodies, uint64_t n, uint64_t self, double acc[3])
{
    double a[3] = {0, 0, 0};
    const double *pos = bodies[self]->pos;
    for (uint64_t j = 0; j < n; j++) {
        if (j == self)
            continue;
        const body *b = bodies[j];
        double dx = b->pos[0] - pos[0], dy = b->pos[1] - pos[1], dz = b->pos[2] - pos[2];
        double d2 = dx * dx + dy * dy + dz * dz + EPS2;
        double inv = b->mass / (d2 * sqrt(d2));
        a[0] += dx * inv;
        a[1] += dy * inv;
        a[2] += dz * inv;
    }
    memcpy(acc, a, sizeof a);
}

/* ---- setup, mutators, verification ------------------------------------------------ */

static int bh_setup(wl_run *r, gcs_err *err)
{
    bh_state *s = calloc(1, sizeof *s);
    double *part = calloc((size_t)r->mutators, sizeof *part);
    if (!s || !part) {
        free(s);
        free(part);
        gcs_err_set(err, "bh: out of memory");
        return -1;
    }
    s->impulse_part = part;
    r->state = s;
    uint64_t n = r->size;
    body **arr = gcs_gc_alloc(n * sizeof(void *), n);
    if (!arr) {
        gcs_err_set(err, "bh: %s", gcs_gc_last_error());
        return -1;
    }
    r->shared[SH_BODIES] = arr;
    void *heads = gcs_gc_alloc(n * sizeof(void *), n);
    if (!heads) {
        gcs_err_set(err, "bh: %s", gcs_gc_last_error());
        return -1;
    }
    r->shared[SH_TRAJ] = heads;
    /* Bodies uniform in the unit ball, with a slow solid-body rotation about z
     * and a small random velocity; the array is in random spatial order. */
    uint64_t rng = wl_seed(r->seed, 1);
    for (uint64_t i = 0; i < n; i++) {
        body *b = gcs_gc_alloc_data(sizeof(body));
        if (!b) {
            gcs_err_set(err, "bh: %s", gcs_gc_last_error());
            return -1;
        }
        b->tag = 1;
        double x, y, z;
        do {
            x = 2 * wl_uniform(&rng) - 1;
            y = 2 * wl_uniform(&rng) - 1;
            z = 2 * wl_uniform(&rng) - 1;
        } while (x * x + y * y + z * z > 1);
        b->pos[0] = x, b->pos[1] = y, b->pos[2] = z;
        b->vel[0] = -0.3 * y + 0.05 * (wl_uniform(&rng) - 0.5);
        b->vel[1] = 0.3 * x + 0.05 * (wl_uniform(&rng) - 0.5);
        b->vel[2] = 0.05 * (wl_uniform(&rng) - 0.5);
        b->mass = 1.0 / (double)n;
        arr[i] = b;
    }
    for (int d = 0; d < 3; d++) {
        double p = 0;
        for (uint64_t i = 0; i < n; i++)
            p += arr[i]->mass * arr[i]->vel[d];
        s->p0[d] = p;
    }
    return 0;
}

/* Forces on bodies [lo, hi), then half a kick (kick_dt 0 for the first). */
static void force_share(wl_run *r, int index, body **arr, uint64_t lo, uint64_t hi, double kick_dt)
{
    bh_state *s = r->state;
    const cell *root = r->shared[SH_TREE];
    double imp = 0;
    for (uint64_t i = lo; i < hi; i++) {
        body *b = arr[i];
        tree_acc(root, b, b->pos, b->acc);
        for (int d = 0; d < 3; d++)
            b->vel[d] += b->acc[d] * kick_dt;
        imp += b->mass * sqrt(b->acc[0] * b->acc[0] + b->acc[1] * b->acc[1] + b->acc[2] * b->acc[2]);
        gcs_gc_safepoint();
    }
    s->impulse_part[index] += imp * kick_dt;
}

/* Mutator 0: appends every body's state at `step` to its trajectory and
 * drops the records older than HISTORY steps. */
static int record_trajectories(wl_run *r, body **arr, uint64_t n, uint64_t step)
{
    traj **heads = r->shared[SH_TRAJ];
    for (uint64_t i = 0; i < n; i++) {
        traj *t = _gcs_wl_alloc(r, sizeof(traj), 1);
        if (!t)
            return -1;
        t->prev = heads[i];
        t->step = step;
        memcpy(t->pos, arr[i]->pos, sizeof t->pos);
        memcpy(t->vel, arr[i]->vel, sizeof t->vel);
        heads[i] = t;
        traj *p = t;
        for (int k = 1; k < HISTORY && p; k++)
            p = p->prev;
        if (p)
            p->prev = NULL;
    }
    return 0;
}

static void bh_mutator(wl_run *r, int index)
{
    bh_state *s = r->state;
    uint64_t n = r->size;
    uint64_t lo = n * (uint64_t)index / (uint64_t)r->mutators;
    uint64_t hi = n * (uint64_t)(index + 1) / (uint64_t)r->mutators;
    body **arr = r->shared[SH_BODIES]; /* reachable from a shared slot all along */
    for (uint64_t step = 0; step <= r->steps; step++) {
        if (step > 0) {
            /* the first half kick was applied with the forces; drift */
            for (uint64_t i = lo; i < hi; i++) {
                body *b = arr[i];
                for (int d = 0; d < 3; d++)
                    b->pos[d] += b->vel[d] * DT;
            }
        }
        if (_gcs_wl_barrier(r) < 0)
            return;
        if (index == 0) {
            if (record_trajectories(r, arr, n, step) < 0)
                return;
            if (build_tree(r, &r->shared[SH_TREE], arr, n, &s->cells, &s->max_depth) < 0)
                return;
        }
        if (_gcs_wl_barrier(r) < 0)
            return;
        /* step 0 only computes the initial forces; later steps kick the
         * second half of the last step and the first half of the next one
         * (except after the last step: the velocities end synchronized) */
        double kick = step == 0 ? DT / 2 : (step == r->steps ? DT / 2 : DT);
        force_share(r, index, arr, lo, hi, kick);
        if (index == 0)
            _gcs_wl_progress(r, (double)(step + 1) / (double)(r->steps + 1));
        if (_gcs_wl_barrier(r) < 0)
            return;
    }
}

static void bh_verify(wl_run *r, gcs_workload_result *res)
{
    bh_state *s = r->state;
    body **arr = r->shared[SH_BODIES];
    uint64_t n = r->size;
    double p[3] = {0, 0, 0};
    for (uint64_t i = 0; i < n; i++) {
        body *b = arr[i];
        for (int d = 0; d < 3; d++) {
            if (!isfinite(b->pos[d]) || !isfinite(b->vel[d]) || !isfinite(b->acc[d])) {
                _gcs_wl_verdict(res, 0, "bh: body %llu has a non-finite coordinate", (unsigned long long)i);
                return;
            }
            p[d] += b->mass * b->vel[d];
        }
    }
    /* trajectories: the last HISTORY steps, newest first, at the body */
    traj **heads = r->shared[SH_TRAJ];
    uint64_t want = r->steps + 1 < HISTORY ? r->steps + 1 : HISTORY;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = 0;
        for (traj *t = heads[i]; t; t = t->prev, len++)
            if (t->step != r->steps - len) {
                _gcs_wl_verdict(res, 0, "bh: body %llu's trajectory holds step %llu where step %llu belongs",
                           (unsigned long long)i, (unsigned long long)t->step,
                           (unsigned long long)(r->steps - len));
                return;
            }
        if (len != want || memcmp(heads[i]->pos, arr[i]->pos, sizeof heads[i]->pos) != 0) {
            _gcs_wl_verdict(res, 0, "bh: body %llu's trajectory has %llu records (want %llu) or a wrong newest one",
                       (unsigned long long)i, (unsigned long long)len, (unsigned long long)want);
            return;
        }
    }
    /* the last tree holds every body once: its mass is the total */
    const cell *root = r->shared[SH_TREE];
    double mass = 0;
    for (uint64_t i = 0; i < n; i++)
        mass += arr[i]->mass;
    if (!root || !(fabs(root->mass - mass) <= 1e-9 * mass)) {
        _gcs_wl_verdict(res, 0, "bh: the last tree holds mass %.17g, the bodies %.17g", root ? root->mass : 0.0, mass);
        return;
    }
    /* the accelerations stored by the last step, against direct summation */
    /* Errors are relative to the samples' rms acceleration: a body whose
     * forces nearly cancel would make its own relative error meaningless. */
    uint64_t ns = n < SAMPLES ? n : SAMPLES;
    double worst = 0, sum2 = 0, err2[SAMPLES], a2sum = 0;
    uint64_t worst_i = 0;
    for (uint64_t k = 0; k < ns; k++) {
        uint64_t i = k * n / ns;
        double a[3];
        direct_acc(arr, n, i, a);
        err2[k] = 0;
        for (int d = 0; d < 3; d++) {
            err2[k] += (arr[i]->acc[d] - a[d]) * (arr[i]->acc[d] - a[d]);
            a2sum += a[d] * a[d];
        }
    }
    double arms2 = a2sum / (double)ns;
    for (uint64_t k = 0; k < ns; k++) {
        uint64_t i = k * n / ns;
        double rel = sqrt(err2[k] / arms2);
        sum2 += rel * rel;
        if (!(rel <= worst)) {
            worst = rel;
            worst_i = i;
        }
    }
    double rms = sqrt(sum2 / (double)ns);
    double impulse = 0;
    for (int i = 0; i < r->mutators; i++)
        impulse += s->impulse_part[i];
    double dp = sqrt((p[0] - s->p0[0]) * (p[0] - s->p0[0]) + (p[1] - s->p0[1]) * (p[1] - s->p0[1]) +
                     (p[2] - s->p0[2]) * (p[2] - s->p0[2]));
    double drift = impulse > 0 ? dp / impulse : 0;
    _gcs_wl_figure(res, "force_rel_error_max", worst);
    _gcs_wl_figure(res, "force_rel_error_rms", rms);
    _gcs_wl_figure(res, "momentum_drift", drift);
    _gcs_wl_figure(res, "tree_cells", (double)s->cells);
    _gcs_wl_figure(res, "tree_depth", (double)s->max_depth);
    if (!(worst <= FORCE_TOL_MAX) || !(rms <= FORCE_TOL_RMS)) {
        _gcs_wl_verdict(res, 0,
                   "bh: tree forces differ from direct summation: worst relative error %.4g (body %llu, "
                   "limit %g), rms %.4g (limit %g) over %llu bodies",
                   worst, (unsigned long long)worst_i, FORCE_TOL_MAX, rms, FORCE_TOL_RMS, (unsigned long long)ns);
        return;
    }
    if (!(drift <= MOMENTUM_TOL)) {
        _gcs_wl_verdict(res, 0, "bh: momentum changed by %.4g of the applied impulse (limit %g)", drift, MOMENTUM_TOL);
        return;
    }
    _gcs_wl_verdict(res, 1,
               "bh: forces of %llu bodies match direct summation (worst %.2g, rms %.2g); momentum drift %.2g "
               "of the impulse",
               (unsigned long long)ns, worst, rms, drift);
}

static void bh_teardown(wl_run *r)
{
    bh_state *s = r->state;
    if (s)
        free(s->impulse_part);
    free(s);
    r->state = NULL;
}

const wl_impl _gcs_wl_bh = {
    .info = {
        .name = "bh",
        .summary = "Barnes-Hut n-body: mutator 0 builds the octree each step, all mutators compute forces",
        .size_meaning = "bodies",
        .steps_meaning = "time steps",
        .default_size = 50000,
        .default_steps = 8,
        .max_size = 50000000,
        .max_steps = 100000,
        .default_heap = 32u << 20,
    },
    .setup = bh_setup,
    .mutator = bh_mutator,
    .verify = bh_verify,
    .teardown = bh_teardown,
};
