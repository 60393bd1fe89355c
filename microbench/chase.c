/* chase.c -- pointer-chase buffers and the idle latency chases.
 *
 * A dependent chase measures latency because each load's address is the
 * previous load's value: the core cannot overlap two misses.  What it
 * measures is only memory latency if (a) no prefetcher can guess the next
 * line, (b) the buffer is far larger than the LLC and no line comes back
 * before it has been evicted, and (c) TLB misses do not dominate.  The
 * permutation (gcs_chase_link) handles (a) and (c); the buffer size and the
 * cursor that continues along the cycle across repetitions handle (b).  The
 * full random permutation (gcs_chase_build_random) drops (c) on purpose: it
 * measures what a step costs with its page walk, as a marker pays it on a
 * heap beyond the TLB's reach. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gcscale/microbench.h"
#include "chase_internal.h"

#define HUGE_PAGE_BYTES (2u << 20)

const char *gcs_chase_huge_name(gcs_huge h)
{
    return h == GCS_HUGE_ON ? "on" : h == GCS_HUGE_OFF ? "off" : "default";
}

int gcs_chase_thp_available(char *mode, size_t mode_len)
{
    char line[256] = "";
    FILE *fp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (fp) {
        if (!fgets(line, sizeof line, fp))
            line[0] = 0;
        fclose(fp);
    }
    const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    char word[32] = "unavailable";
    if (open && close && close - open - 1 < (long)sizeof word) {
        memcpy(word, open + 1, (size_t)(close - open - 1));
        word[close - open - 1] = 0;
    }
    if (mode && mode_len)
        snprintf(mode, mode_len, "%s", word);
    return strcmp(word, "always") == 0 || strcmp(word, "madvise") == 0;
}

/* ---- random numbers: fast and reproducible from a seed --------------------- */

static inline uint64_t rng_next(uint64_t *s)
{
    /* splitmix64: one multiply-xorshift round per number, plenty for shuffling. */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) without division (Lemire); the bias is < n/2^32. */
static inline uint32_t rng_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(((rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

static void shuffle_u32(uint32_t *a, size_t n, uint64_t *s)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = rng_below(s, (uint32_t)i);
        uint32_t tmp = a[i - 1];
        a[i - 1] = a[j];
        a[j] = tmp;
    }
}

/* Links the lines and records a pointer every `interval` steps along the
 * cycle in ckpt[0..nckpt).  Works group by group, so the only large array is
 * the group order (nlines / group_lines entries): 16M lines take a few
 * hundred milliseconds, mostly page-table and cache misses of the writes.
 * stride 2: a group is the even or the odd lines of a block of 2 x
 * group_lines; stride 1: all lines of a block of group_lines. */
static int link_lines(char *lines, size_t nlines, size_t group_lines, size_t stride, uint64_t seed,
                      void **ckpt, size_t nckpt, size_t interval)
{
    if (group_lines < 1)
        group_lines = 1;
    size_t block = stride * group_lines;
    size_t nblocks = (nlines + block - 1) / block;
    size_t ngroups = stride * nblocks;
    uint32_t *order = malloc(ngroups * sizeof *order);
    uint32_t *members = malloc(group_lines * sizeof *members);
    if (!order || !members) {
        free(order);
        free(members);
        return -1;
    }
    for (size_t g = 0; g < ngroups; g++)
        order[g] = (uint32_t)g;
    uint64_t s = seed ? seed : 0x5eed;
    shuffle_u32(order, ngroups, &s);

    void **prev = NULL;
    char *first = NULL;
    size_t pos = 0;
    for (size_t gi = 0; gi < ngroups; gi++) {
        size_t g = order[gi], lo = (g / stride) * block + g % stride, hi = (g / stride + 1) * block;
        if (hi > nlines)
            hi = nlines;
        size_t m = 0;
        for (size_t i = lo; i < hi; i += stride)
            members[m++] = (uint32_t)i;
        shuffle_u32(members, m, &s);
        for (size_t k = 0; k < m; k++) {
            char *line = lines + (size_t)members[k] * GCS_LINE_BYTES;
            if (prev)
                *prev = line;
            else
                first = line;
            prev = (void **)line;
            if (ckpt && pos % interval == 0 && pos / interval < nckpt)
                ckpt[pos / interval] = line;
            pos++;
        }
    }
    if (prev)
        *prev = first;
    free(order);
    free(members);
    return 0;
}

void gcs_chase_link(void *lines, size_t nlines, size_t group_lines, uint64_t seed)
{
    link_lines(lines, nlines, group_lines, 2, seed, NULL, 0, 1);
}

/* ---- buffers ------------------------------------------------------------------ */

static uint64_t smaps_huge_bytes(const void *addr, size_t len)
{
    FILE *fp = fopen("/proc/self/smaps", "r");
    if (!fp)
        return 0;
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    char line[512];
    int inside = 0;
    uint64_t total = 0;
    while (fgets(line, sizeof line, fp)) {
        unsigned long a, b;
        unsigned long long kb;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, ' ') &&
            line[strspn(line, "0123456789abcdef")] == '-')
            inside = a < hi && b > lo;
        else if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
            total += kb * 1024;
    }
    fclose(fp);
    return total;
}

int gcs_chase_check_size(uint64_t size_bytes, gcs_err *err)
{
    uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    if (size_bytes < 4096) {
        gcs_err_set(err, "buffer size %llu bytes is too small (at least 4 KiB)",
                    (unsigned long long)size_bytes);
        return -1;
    }
    /* The rest is left for the system: a buffer that pushes the machine into
     * reclaim measures the reclaim, not the memory. */
    if (size_bytes > phys / 4 * 3) {
        gcs_err_set(err, "buffer size %llu MiB exceeds 3/4 of this machine's memory (%llu MiB)",
                    (unsigned long long)(size_bytes >> 20), (unsigned long long)(phys >> 20));
        return -1;
    }
    return 0;
}

gcs_chase_buf *gcs_chase_buf_new(const gcs_topo *t, uint64_t size_bytes, int mem_node,
                                 gcs_huge huge, gcs_err *err)
{
    uint64_t len = (size_bytes + GCS_LINE_BYTES - 1) / GCS_LINE_BYTES * GCS_LINE_BYTES;
    long page = sysconf(_SC_PAGESIZE);
    if (gcs_chase_check_size(size_bytes, err) < 0)
        return NULL;
    if (mem_node >= 0 && (!t || gcs_topo_check_node(t, mem_node, err) < 0)) {
        if (!t)
            gcs_err_set(err, "memory node %d: no topology to bind with", mem_node);
        return NULL;
    }
    gcs_chase_buf *b = calloc(1, sizeof *b);
    if (!b) {
        gcs_err_set(err, "out of memory");
        return NULL;
    }
    uint64_t t0 = gcs_now_ns();
    /* Huge pages need 2 MiB alignment: over-allocate and align inside. */
    size_t align = huge == GCS_HUGE_ON ? HUGE_PAGE_BYTES : (size_t)page;
    b->map_len = len + align;
    b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->map == MAP_FAILED) {
        gcs_err_set(err, "cannot map %llu MiB: %s", (unsigned long long)(len >> 20), strerror(errno));
        free(b);
        return NULL;
    }
    b->data = (char *)(((uintptr_t)b->map + align - 1) & ~((uintptr_t)align - 1));
    b->len = len;
    b->t = t;
    gcs_chase_buf_info *in = &b->info;
    in->size_bytes = len;
    in->huge = huge;
    in->mem_node = mem_node;
    in->on_node_fraction = -1;
    if (huge != GCS_HUGE_DEFAULT &&
        madvise(b->data, len, huge == GCS_HUGE_ON ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) < 0)
        snprintf(in->warning, sizeof in->warning, "madvise(%s): %s",
                 huge == GCS_HUGE_ON ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", strerror(errno));
    if (mem_node >= 0) {
        char w[256] = "";
        int rc = gcs_topo_bind_memory(t, b->data, len, mem_node, w, sizeof w, err);
        if (rc < 0) {
            gcs_chase_buf_free(b);
            return NULL;
        }
        in->bound = rc == 0;
        if (rc > 0)
            snprintf(in->warning + strlen(in->warning), sizeof in->warning - strlen(in->warning),
                     "%s%s", in->warning[0] ? "; " : "", w);
    }
    /* First touch: one write per page faults everything in now (on the bound
     * node), so no page fault lands inside a measurement. */
    for (uint64_t off = 0; off < len; off += (uint64_t)page)
        b->data[off] = 0;
    if (in->bound) {
        char w[256] = "";
        in->on_node_fraction = gcs_topo_check_placement(t, b->data, len, mem_node, 64, w, sizeof w);
        if (w[0])
            snprintf(in->warning + strlen(in->warning), sizeof in->warning - strlen(in->warning),
                     "%s%s", in->warning[0] ? "; " : "", w);
    }
    in->huge_bytes = smaps_huge_bytes(b->data, len);
    in->alloc_s = (double)(gcs_now_ns() - t0) / 1e9;
    return b;
}

void gcs_chase_buf_free(gcs_chase_buf *b)
{
    if (!b)
        return;
    if (b->map && b->map != MAP_FAILED)
        munmap(b->map, b->map_len);
    free(b->ckpt);
    free(b);
}

const gcs_chase_buf_info *gcs_chase_buf_info_get(const gcs_chase_buf *b) { return &b->info; }
void *gcs_chase_buf_data(const gcs_chase_buf *b) { return b->data; }

/* Links the first cycle_bytes into one cycle of groups of group_lines lines
 * of one parity, or (group_lines 0) into one uniformly random cycle. */
static int build_cycle(gcs_chase_buf *b, uint64_t cycle_bytes, size_t group_lines, uint64_t seed,
                       gcs_err *err)
{
    if (cycle_bytes == 0 || cycle_bytes > b->len)
        cycle_bytes = b->len;
    size_t nlines = cycle_bytes / GCS_LINE_BYTES;
    if (nlines < 2) {
        gcs_err_set(err, "chase: %llu bytes is less than two cache lines",
                    (unsigned long long)cycle_bytes);
        return -1;
    }
    /* The shuffles hold line numbers in 32 bits. */
    if (nlines > UINT32_MAX) {
        gcs_err_set(err, "chase: %llu lines exceed the 2^32 lines a cycle can hold",
                    (unsigned long long)nlines);
        return -1;
    }
    int full = group_lines == 0;
    size_t stride = full ? 1 : 2;
    if (full)
        group_lines = nlines;
    size_t nckpt = nlines < GCS_CHASE_MAX_CHECKPOINTS ? nlines : GCS_CHASE_MAX_CHECKPOINTS;
    void **ckpt = calloc(nckpt, sizeof *ckpt);
    if (!ckpt) {
        gcs_err_set(err, "chase: out of memory");
        return -1;
    }
    uint64_t t0 = gcs_now_ns();
    if (link_lines(b->data, nlines, group_lines, stride, seed, ckpt, nckpt, nlines / nckpt) < 0) {
        free(ckpt);
        gcs_err_set(err, "chase: out of memory");
        return -1;
    }
    free(b->ckpt);
    b->ckpt = ckpt;
    b->nckpt = nckpt;
    b->ckpt_interval = nlines / nckpt;
    b->tape = 0;
    b->cursor = ckpt[0];
    b->info.cycle_lines = nlines;
    b->info.cycle_bytes = (uint64_t)nlines * GCS_LINE_BYTES;
    b->info.full_random = full;
    b->info.build_s = (double)(gcs_now_ns() - t0) / 1e9;
    return 0;
}

int gcs_chase_build(gcs_chase_buf *b, uint64_t cycle_bytes, uint64_t seed, gcs_err *err)
{
    return build_cycle(b, cycle_bytes, GCS_CHASE_GROUP_PAGES * 4096 / GCS_LINE_BYTES / 2, seed, err);
}

/* One group of every line: each step's line, and so its page, is a random
 * one, which the TLB rarely holds.  No even/odd split either: a marker on a
 * random heap gets its share of lines the adjacent-line prefetcher brought
 * in, and so does this chase (a line's partner is cached when it is visited
 * about as often as the LLC is large against the buffer). */
int gcs_chase_build_random(gcs_chase_buf *b, uint64_t cycle_bytes, uint64_t seed, gcs_err *err)
{
    return build_cycle(b, cycle_bytes, 0, seed, err);
}

/* ---- the chase loops --------------------------------------------------------------
 * Hot loops: 16 dependent steps per iteration, no calls, the final pointer
 * stored to a volatile sink so nothing is optimized away.  The read step is
 * one load (mov (%rax),%rax).  The RW step is the locked read-modify-write a
 * marker does when it sets a mark bit; fetch_and with ~1 on a word whose bit
 * 0 is clear costs exactly what fetch_or of the bit costs (the same locked
 * cmpxchg on an exclusively owned line, always written back) but leaves the
 * pointer as it was, so the plain chase can follow the same buffer without
 * spending an extra instruction per step on masking. */

/* Thread-local: chases may run in several threads at once. */
static __thread void *volatile gcs_chase_sink;

#define STEP_R(p) p = *(void **)(p)
#define STEP_W(p) p = (void *)__atomic_fetch_and((uintptr_t *)(p), ~(uintptr_t)1, __ATOMIC_RELAXED)
#define X16(S, p) S(p); S(p); S(p); S(p); S(p); S(p); S(p); S(p); \
                  S(p); S(p); S(p); S(p); S(p); S(p); S(p); S(p)

__attribute__((noinline)) void *_gcs_chase_loop_read(void *p, uint64_t iters16)
{
    for (uint64_t i = 0; i < iters16; i++) {
        X16(STEP_R, p);
    }
    gcs_chase_sink = p;
    return p;
}

__attribute__((noinline)) void *_gcs_chase_loop_rw(void *p, uint64_t iters16)
{
    for (uint64_t i = 0; i < iters16; i++) {
        X16(STEP_W, p);
    }
    gcs_chase_sink = p;
    return p;
}

static uint64_t auto_steps(uint64_t lines)
{
    /* One repetition: enough steps to cover the line count of a small buffer
     * several times, capped at 2M steps (~0.2 s from DRAM). */
    uint64_t s = 4 * lines;
    if (s < (1u << 16))
        s = 1u << 16;
    if (s > (1u << 21))
        s = 1u << 21;
    return s;
}

int gcs_chase_measure(gcs_chase_buf *b, const gcs_chase_params *prm, gcs_chase_result *r,
                      gcs_err *err)
{
    memset(r, 0, sizeof *r);
    r->llc_misses_per_step = NAN;
    if (!b->ckpt) {
        gcs_err_set(err, "chase: buffer not built");
        return -1;
    }
    if (prm->reps < 1) {
        gcs_err_set(err, "chase: repetitions must be at least 1");
        return -1;
    }
    uint64_t steps = prm->steps ? prm->steps : auto_steps(b->info.cycle_lines);
    uint64_t iters = (steps + 15) / 16;
    steps = iters * 16;
    double *ns = calloc((size_t)prm->reps, sizeof *ns);
    if (!ns) {
        gcs_err_set(err, "chase: out of memory");
        return -1;
    }
    void *(*loop)(void *, uint64_t) = prm->rw ? _gcs_chase_loop_rw : _gcs_chase_loop_read;
    gcs_counters *ctr = NULL;
    if (prm->count_llc) {
        gcs_counters_info ci;
        ctr = gcs_counters_open(&ci);
    }
    uint64_t start = gcs_now_ns();
    void *p = loop(b->cursor, iters); /* warm-up: TLB, caches of small buffers */
    if (ctr && gcs_counters_start(ctr) < 0) {
        gcs_counters_close(ctr);
        ctr = NULL;
    }
    for (int i = 0; i < prm->reps; i++) {
        uint64_t t0 = gcs_now_ns();
        p = loop(p, iters);
        ns[i] = (double)(gcs_now_ns() - t0) / (double)steps;
    }
    long long misses = 0;
    if (ctr && gcs_counters_stop(ctr, &misses) == 0)
        r->llc_misses_per_step = (double)misses / ((double)steps * prm->reps);
    gcs_counters_close(ctr);
    b->cursor = p;
    r->seconds = (double)(gcs_now_ns() - start) / 1e9;
    r->reps = prm->reps;
    r->steps_per_rep = steps;
    r->median_ns = gcs_stats_median(ns, (size_t)prm->reps);
    r->p10_ns = gcs_stats_percentile(ns, (size_t)prm->reps, 10);
    r->p90_ns = gcs_stats_percentile(ns, (size_t)prm->reps, 90);
    r->min_ns = ns[0];
    r->max_ns = ns[prm->reps - 1]; /* sorted by the percentile calls */
    free(ns);
    return 0;
}

/* ---- one-call chase in a pinned thread ---------------------------------------------- */

typedef struct run_job {
    const gcs_topo *t;
    const gcs_chase_opts *o;
    gcs_chase_result *r;
    gcs_chase_buf_info info;
    int rc;
    gcs_err err;
} run_job;

static void *run_job_fn(void *arg)
{
    run_job *j = arg;
    j->rc = -1;
    gcs_chase_buf *b = gcs_chase_buf_new(j->t, j->o->size_bytes, j->o->mem_node, j->o->huge, &j->err);
    if (!b)
        return NULL;
    if (gcs_chase_build(b, 0, j->o->seed, &j->err) == 0 &&
        gcs_chase_measure(b, &j->o->prm, j->r, &j->err) == 0)
        j->rc = 0;
    j->info = b->info;
    gcs_chase_buf_free(b);
    return NULL;
}

int gcs_chase_run(const gcs_topo *t, const gcs_chase_opts *o, gcs_chase_result *r,
                  gcs_chase_buf_info *info, char *warn, size_t warn_len, gcs_err *err)
{
    run_job j = {.t = t, .o = o, .r = r};
    char pin_warn[256] = "";
    if (gcs_topo_run_pinned(t, o->cpu, o->cpu_node, run_job_fn, &j, pin_warn, sizeof pin_warn, err) < 0)
        return -1;
    if (j.rc < 0) {
        *err = j.err;
        return -1;
    }
    if (info)
        *info = j.info;
    if (warn && warn_len)
        snprintf(warn, warn_len, "%s%s%s", pin_warn, pin_warn[0] && j.info.warning[0] ? "; " : "",
                 j.info.warning);
    return 0;
}

/* ---- latency vs working set ------------------------------------------------------------ */

int gcs_chase_sweep(gcs_chase_buf *b, uint64_t min_bytes, int fine, int reps, uint64_t steps,
                    gcs_chase_sweep_point *pts, int *npts, gcs_err *err)
{
    *npts = 0;
    if (min_bytes < 2 * GCS_LINE_BYTES)
        min_bytes = 2 * GCS_LINE_BYTES;
    uint64_t sizes[GCS_SWEEP_MAX_POINTS];
    int n = 0;
    for (uint64_t s = min_bytes; s <= b->len && n < GCS_SWEEP_MAX_POINTS; s *= 2) {
        sizes[n++] = s;
        if (fine && s + s / 2 <= b->len && n < GCS_SWEEP_MAX_POINTS)
            sizes[n++] = s + s / 2;
    }
    if (n == 0 || (sizes[n - 1] < b->len && n < GCS_SWEEP_MAX_POINTS))
        sizes[n++] = b->len;
    for (int i = 0; i < n; i++) {
        if (gcs_chase_build(b, sizes[i], 0x5eed + (uint64_t)i, err) < 0)
            return -1;
        gcs_chase_params prm = {.rw = 0, .reps = reps, .steps = steps};
        if (!steps) {
            /* Small sets: enough steps to time well; large sets: ~20 ms. */
            prm.steps = b->info.cycle_lines * 4;
            if (prm.steps < (1u << 16))
                prm.steps = 1u << 16;
            if (prm.steps > (1u << 18))
                prm.steps = 1u << 18;
        }
        gcs_chase_result r;
        if (gcs_chase_measure(b, &prm, &r, err) < 0)
            return -1;
        pts[*npts].size_bytes = b->info.cycle_bytes;
        pts[*npts].median_ns = r.median_ns;
        pts[*npts].p10_ns = r.p10_ns;
        pts[*npts].p90_ns = r.p90_ns;
        (*npts)++;
    }
    return 0;
}
