/* bench_import.c -- build/bench-import (make bench-import): how fast the
 * HPROF and V8 importers read, and how much memory they need beyond their
 * output.
 *
 *   bench-import [--format hprof|v8] [--shapes list,tree,random]
 *                [--objects 1e5,1e6,1e7] [--reps N] [--order shuffled|address]
 *                [--refs K] [--gzip-objects N|0] [--gzip-block BYTES|0]
 *                [--plain-objects N|0] [--threads N] [--dir DIR] [--json]
 *   bench-import --file DUMP [--file DUMP]... [--format hprof|v8] [--reps N]
 *                [--threads N] [--json]
 *
 * --format v8: the snapshots are tests/fuzz/v8_gen.h's (the node layout of
 * node 20, objects of 32 bytes, a weak edge every 8th node), imported
 * through gcs_heapdump_import_v8_mem; --order does not apply.
 *
 * For each shape and object count a synthetic dump (tests/fuzz/hprof_gen.h:
 * one class, 8-byte ids, 4 MiB segments) is made in memory and imported
 * --reps times through gcs_heapdump_import_hprof_mem, each import in a
 * forked child, so that its peak resident memory is its own: the child
 * resets its high-water mark (/proc/self/clear_refs, 5), imports, and
 * reports VmHWM minus the resident size it started with.  Figures:
 *   MB/s      uncompressed dump bytes (10^6) per second of import, one core;
 *             median and min-max over the reps
 *   cpuMB/s   the same bytes per CPU second of the importing child (user +
 *             system): less moved by other processes on a busy host
 *   Mobj/s    objects (instances and classes) per second, median
 *   sys%      the share of the child's CPU time spent in the kernel (median):
 *             on a VM whose host backs guest memory lazily, the page faults of
 *             the import's fresh memory (the snapshot's arrays, its buffers)
 *             and their zeroing; faults: its minor page faults (median)
 *   extra     peak resident bytes of the import minus the output snapshot's
 *             bytes (its arrays as gcs_snapshot_new lays them out), median;
 *             per object, and against the bar of 16 B per object +
 *             8 B per edge (edges: the snapshot's pointer fields)
 * With --gzip-objects N (default 10^6; 0: none) the shapes of N objects are
 * also written to a gzip file (level 1, as `jcmd GC.heap_dump -gz=1`) in
 * --dir and imported from it with gcs_heapdump_import ("gz": one gzip
 * member, as `gzip` writes); MB/s is still of the uncompressed bytes.  With
 * --gzip-block BYTES (default 1048576; 0: none) they are also written as
 * HotSpot's `GC.heap_dump -gz=1` writes a dump, members of BYTES each named
 * in the first header ("gzm": inflated member by member, libdeflate).
 * --plain-objects N (default 0: none) does the same
 * with a plain file, as `gcscale snapshot import` reads one.  --threads N:
 * the importer's threads (default: OpenMP's count, OMP_NUM_THREADS, or the
 * CPUs); cpuMB/s counts every thread's CPU time.  "peak" is the child's
 * peak resident size above what it started with (VmHWM - VmRSS), the
 * snapshot included.  Timing covers the whole import (both passes, the
 * indexing, the snapshot's allocation and validation), not the dump's
 * making.
 *
 * --file DUMP (repeatable) measures real dumps instead of the synthetic
 * shapes: each file is imported --reps times as `gcscale snapshot import`
 * reads it (gcs_heapdump_import; HPROF unless --format v8, plain or gzip),
 * without writing the snapshot, whose fsync is the disk's time, not the
 * importer's.  MB/s counts the dump's uncompressed bytes (the import's
 * report); the first import also brings the file into the page cache, so
 * use --reps 3 or more and read the median. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../heapdump_internal.h" /* _gcs_heapdump_set_threads */
#include "gcscale/heapdump.h"
#include "gcscale/snapshot.h"

#include "../../tests/fuzz/hprof_gen.h"
#include "../../tests/fuzz/v8_gen.h"

static int fmt_v8;  /* --format v8 */
static int threads; /* --threads; 0: the importer's default */

#define MAX_REPS 64

typedef struct sample {
    int ok;
    double secs, cpu_secs;      /* wall; user + system CPU of the child */
    double sys_secs;            /* of which system: the kernel's page faults, reads */
    long long faults;           /* minor page faults of the import */
    long long extra_bytes;      /* VmHWM - VmRSS at the start, minus the snapshot */
    long long peak_bytes;       /* VmHWM - VmRSS at the start */
    uint64_t objects, fields, snap_bytes;
    uint64_t dump_bytes; /* the import's report: uncompressed bytes */
    char err[600];
} sample;

typedef struct result {
    const char *shape, *mode;
    uint64_t objects, fields, dump_bytes, file_bytes;
    double mbs_med, mbs_min, mbs_max, objs_med, cpu_med, cpu_min, cpu_max;
    double sys_share_med;       /* system CPU over user + system, median */
    long long faults_med;
    long long extra_med, extra_min, extra_max, peak_med;
    uint64_t snap_bytes;
    int reps;
} result;

static void die(const char *msg)
{
    fprintf(stderr, "bench-import: %s\n", msg);
    exit(2);
}

/* The process's CPU seconds, user + system (*sys: system alone), and its
 * minor page faults so far. */
static double cpu_now(double *sys, long long *faults)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    *sys = (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
    *faults = u.ru_minflt;
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* kB of a "Key:   N kB" line of /proc/self/status, or -1. */
static long long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long v = -1;
    size_t k = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':') {
            v = atoll(line + k + 1);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* The bytes gcs_snapshot_new allocates for the graph (one block of arrays:
 * addr 8, words 4, nptrs 4, node 2, type 4 per object, edge_start 8 per
 * object + 1, edges 4 per field, roots 4 per root). */
static uint64_t snapshot_bytes(const gcs_snapshot *g)
{
    return g->nobjects * (8 + 4 + 4 + 2 + 4 + 8) + 8 + 4 * g->nfields + 4 * g->nroots;
}

/* One import in a child; the parent gets its sample through a pipe. */
static sample import_once(const hgen *dump, const char *path)
{
    sample s = {0};
    int fd[2];
    if (pipe(fd) < 0)
        die("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
        die("fork failed");
    if (pid == 0) {
        close(fd[0]);
        int cr = open("/proc/self/clear_refs", O_WRONLY);
        if (cr < 0 || write(cr, "5", 1) != 1) {
            snprintf(s.err, sizeof s.err, "cannot reset the peak RSS (/proc/self/clear_refs): %s", strerror(errno));
        } else {
            long long base = status_kb("VmRSS");
            gcs_err e = {0};
            _gcs_heapdump_set_threads(threads);
            gcs_heapdump_report rep;
            double s0, s1;
            long long f0, f1;
            double c0 = cpu_now(&s0, &f0), t0 = now();
            gcs_snapshot *g = path  ? gcs_heapdump_import(path, fmt_v8 ? GCS_HEAPDUMP_V8 : GCS_HEAPDUMP_HPROF, &rep, &e)
                            : fmt_v8 ? gcs_heapdump_import_v8_mem(dump->p, dump->n, "bench", &rep, &e)
                                     : gcs_heapdump_import_hprof_mem(dump->p, dump->n, "bench", &rep, &e);
            s.secs = now() - t0;
            s.cpu_secs = cpu_now(&s1, &f1) - c0;
            s.sys_secs = s1 - s0;
            s.faults = f1 - f0;
            long long hwm = status_kb("VmHWM");
            if (!g) {
                snprintf(s.err, sizeof s.err, "%s", e.msg);
            } else {
                s.ok = 1;
                s.dump_bytes = rep.dump_bytes;
                s.objects = g->nobjects;
                s.fields = g->nfields;
                s.snap_bytes = snapshot_bytes(g);
                s.extra_bytes = (hwm - base) * 1024 - (long long)s.snap_bytes;
                s.peak_bytes = (hwm - base) * 1024;
            }
        }
        if (cr >= 0)
            close(cr);
        ssize_t w = write(fd[1], &s, sizeof s);
        _exit(w == (ssize_t)sizeof s ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], &s, sizeof s);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof s)
        die("an import child died without a result");
    if (!s.ok) {
        fprintf(stderr, "bench-import: import failed: %s\n", s.err);
        exit(2);
    }
    return s;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static result measure(const char *shape, const char *mode, const hgen *dump, const char *path, uint64_t file_bytes,
                      int reps)
{
    double mbs[MAX_REPS], objs[MAX_REPS], cpu[MAX_REPS], sys[MAX_REPS];
    long long extra[MAX_REPS], peak[MAX_REPS], faults[MAX_REPS];
    result r = {.shape = shape, .mode = mode, .dump_bytes = dump->n, .file_bytes = file_bytes, .reps = reps};
    for (int k = 0; k < reps; k++) {
        sample s = import_once(dump, path);
        uint64_t bytes = dump->p ? dump->n : s.dump_bytes; /* a --file: as its import counted it */
        r.dump_bytes = bytes;
        mbs[k] = (double)bytes / s.secs / 1e6;
        objs[k] = (double)s.objects / s.secs / 1e6;
        cpu[k] = (double)bytes / s.cpu_secs / 1e6;
        sys[k] = s.cpu_secs > 0 ? s.sys_secs / s.cpu_secs : 0;
        faults[k] = s.faults;
        extra[k] = s.extra_bytes;
        peak[k] = s.peak_bytes;
        r.objects = s.objects;
        r.fields = s.fields;
        r.snap_bytes = s.snap_bytes;
    }
    int h = reps / 2;
    qsort(mbs, (size_t)reps, sizeof *mbs, cmp_d);
    qsort(objs, (size_t)reps, sizeof *objs, cmp_d);
    qsort(cpu, (size_t)reps, sizeof *cpu, cmp_d);
    r.cpu_med = reps % 2 ? cpu[h] : (cpu[h - 1] + cpu[h]) / 2;
    r.cpu_min = cpu[0];
    r.cpu_max = cpu[reps - 1];
    qsort(sys, (size_t)reps, sizeof *sys, cmp_d);
    r.sys_share_med = reps % 2 ? sys[h] : (sys[h - 1] + sys[h]) / 2;
    qsort(faults, (size_t)reps, sizeof *faults, cmp_ll);
    r.faults_med = reps % 2 ? faults[h] : (faults[h - 1] + faults[h]) / 2;
    qsort(extra, (size_t)reps, sizeof *extra, cmp_ll);
    qsort(peak, (size_t)reps, sizeof *peak, cmp_ll);
    r.peak_med = reps % 2 ? peak[h] : (peak[h - 1] + peak[h]) / 2;
    r.mbs_med = reps % 2 ? mbs[h] : (mbs[h - 1] + mbs[h]) / 2;
    r.objs_med = reps % 2 ? objs[h] : (objs[h - 1] + objs[h]) / 2;
    r.extra_med = reps % 2 ? extra[h] : (extra[h - 1] + extra[h]) / 2;
    r.mbs_min = mbs[0];
    r.mbs_max = mbs[reps - 1];
    r.extra_min = extra[0];
    r.extra_max = extra[reps - 1];
    return r;
}

static void print_row(const result *r, int json, int *first)
{
    double bar = 16.0 * (double)r->objects + 8.0 * (double)r->fields;
    if (json) {
        printf("%s\n    {\"shape\": \"%s\", \"mode\": \"%s\", \"objects\": %llu, \"edges\": %llu, "
               "\"dump_bytes\": %llu, \"file_bytes\": %llu, \"reps\": %d, \"mb_per_s\": {\"median\": %.1f, "
               "\"min\": %.1f, \"max\": %.1f}, \"cpu_mb_per_s\": {\"median\": %.1f, \"min\": %.1f, \"max\": %.1f}, \"mobjects_per_s\": %.2f, \"snapshot_bytes\": %llu, "
               "\"extra_bytes\": {\"median\": %lld, \"min\": %lld, \"max\": %lld}, \"peak_bytes\": %lld, \"extra_per_object\": %.2f, "
               "\"bar_bytes\": %.0f, \"extra_over_bar\": %.3f, \"sys_share\": %.3f, \"minor_faults\": %lld}",
               *first ? "" : ",", r->shape, r->mode, (unsigned long long)r->objects, (unsigned long long)r->fields,
               (unsigned long long)r->dump_bytes, (unsigned long long)r->file_bytes, r->reps, r->mbs_med, r->mbs_min,
               r->mbs_max, r->cpu_med, r->cpu_min, r->cpu_max, r->objs_med, (unsigned long long)r->snap_bytes, r->extra_med, r->extra_min, r->extra_max,
               r->peak_med, (double)r->extra_med / (double)r->objects, bar, (double)r->extra_med / bar,
               r->sys_share_med, r->faults_med);
    } else {
        printf("%-7s %-5s %9llu %9llu %8.1f %7.0f %6.0f-%-6.0f %7.0f %6.0f-%-6.0f %7.2f %8.1f %8.1f %8.1f %6.2f %5.2f %4.0f %7lld\n",
               r->shape, r->mode, (unsigned long long)r->objects, (unsigned long long)r->fields,
               (double)r->dump_bytes / 1e6, r->mbs_med, r->mbs_min, r->mbs_max, r->cpu_med, r->cpu_min, r->cpu_max,
               r->objs_med, (double)r->snap_bytes / 1e6, (double)r->peak_med / 1e6, (double)r->extra_med / 1e6,
               (double)r->extra_med / (double)r->objects, (double)r->extra_med / bar, 100 * r->sys_share_med,
               r->faults_med);
    }
    fflush(stdout);
    *first = 0;
}

static size_t gz_block = 1u << 20; /* --gzip-block */

/* The dump written to path, plain (gz 0), gzip-compressed (level 1) in one
 * member (1) or in HotSpot's members of gz_block bytes (2); its size on
 * disk. */
static uint64_t write_dump(const hgen *d, const char *path, int gz)
{
    if (gz == 2) {
        hgen z = hprof_gzip_members(d->p, d->n, gz_block, (uint32_t)gz_block, 1, 0);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(z.p, 1, z.n, f) != z.n || fclose(f) != 0)
            die("cannot write the gzip dump");
        free(z.p);
        return z.n;
    }
    gzFile z = gzopen(path, gz ? "wb1" : "wbT");
    if (!z)
        die("cannot write the gzip dump");
    for (size_t o = 0; o < d->n;) {
        unsigned k = d->n - o > (1u << 30) ? 1u << 30 : (unsigned)(d->n - o);
        if (gzwrite(z, d->p + o, k) != (int)k)
            die("cannot write the gzip dump");
        o += k;
    }
    if (gzclose(z) != Z_OK)
        die("cannot write the gzip dump");
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) < 0)
        die("cannot read back the gzip dump");
    long sz = ftell(f);
    fclose(f);
    return (uint64_t)sz;
}

static uint64_t parse_count(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v < 1 || v > 4e9)
        die("a count must be a number from 1 to 4e9 (1e6 is accepted)");
    return (uint64_t)v;
}

int main(int argc, char **argv)
{
    const char *shapes = "list,tree,random", *objects = "1e5,1e6,1e7", *dir = NULL;
    int reps = 5, json = 0, shuffled = 1;
    uint32_t nref = 4;
    uint64_t gz_objects = 1000000, plain_objects = 0;
    const char *files[16];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            puts("bench-import [--format hprof|v8] [--shapes list,tree,random] [--objects 1e5,1e6,1e7] [--reps N]\n"
                 "             [--order shuffled|address] [--refs K] [--gzip-objects N|0] [--gzip-block BYTES|0]\n"
                 "             [--plain-objects N|0] [--threads N] [--dir DIR] [--json]\n"
                 "bench-import --file DUMP [--file DUMP]... [--format hprof|v8] [--reps N] [--threads N] [--json]\n"
                 "             a real dump, plain or gzip, imported as gcscale snapshot import reads it");
            return 0;
        }
        if (!v)
            die("an option needs a value (--help)");
        i++;
        if (!strcmp(a, "--shapes"))
            shapes = v;
        else if (!strcmp(a, "--objects"))
            objects = v;
        else if (!strcmp(a, "--reps"))
            reps = atoi(v);
        else if (!strcmp(a, "--refs"))
            nref = (uint32_t)parse_count(v);
        else if (!strcmp(a, "--gzip-objects"))
            gz_objects = !strcmp(v, "0") ? 0 : parse_count(v);
        else if (!strcmp(a, "--gzip-block"))
            gz_block = !strcmp(v, "0") ? 0 : (size_t)parse_count(v);
        else if (!strcmp(a, "--plain-objects"))
            plain_objects = !strcmp(v, "0") ? 0 : parse_count(v);
        else if (!strcmp(a, "--threads") && atoi(v) >= 1 && atoi(v) <= 64)
            threads = atoi(v);
        else if (!strcmp(a, "--format") && (!strcmp(v, "hprof") || !strcmp(v, "v8")))
            fmt_v8 = !strcmp(v, "v8");
        else if (!strcmp(a, "--dir"))
            dir = v;
        else if (!strcmp(a, "--file") && nfiles < (int)(sizeof files / sizeof files[0])) {
            if (access(v, R_OK) != 0)
                die("--file: cannot read the dump");
            files[nfiles++] = v;
        }
        else if (!strcmp(a, "--order") && (!strcmp(v, "shuffled") || !strcmp(v, "address")))
            shuffled = !strcmp(v, "shuffled");
        else
            die("unknown option or value (--help)");
    }
    if (reps < 1 || reps > MAX_REPS)
        die("--reps must be 1..64");
    if (nref > 1000)
        die("--refs must be 1..1000");
    if (!dir)
        dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

    int nthreads = threads ? threads : _gcs_heapdump_threads();
    if (json)
        printf("{\"benchmark\": \"bench-import\", \"format\": \"%s\", \"order\": \"%s\", \"reps\": %d, "
               "\"threads\": %d, \"rows\": [",
               fmt_v8 ? "v8" : "hprof", nfiles ? "files" : fmt_v8 ? "node" : shuffled ? "shuffled" : "address", reps,
               nthreads);
    else
        printf("%s import, %d thread%s; %s order; median of %d imports (min-max); MB = 10^6 bytes\n"
               "MB/s: by wall clock; cpuMB/s: per CPU second (all threads); peak: the import's peak RSS;\n"
               "extra: peak minus the snapshot; bar: 16 B/object + 8 B/edge; sys%%: the CPU time in the\n"
               "kernel (page faults, reads); faults: minor page faults of the import (medians)\n\n"
               "%-7s %-5s %9s %9s %8s %7s %13s %7s %13s %7s %8s %8s %8s %6s %5s %4s %7s\n",
               fmt_v8 ? "V8" : "HPROF", nthreads, nthreads > 1 ? "s" : "",
               nfiles ? "the files'" : fmt_v8 ? "node" : shuffled ? "shuffled record" : "address record", reps,
               nfiles ? "dump" : "shape", "src", "objects",
               "edges", "dump MB", "MB/s", "min-max", "cpuMB/s", "min-max", "Mobj/s", "snap MB", "peak MB",
               "extra MB", "B/obj", "/bar", "sys%", "faults");
    int first = 1;
    for (int f = 0; f < nfiles; f++) {
        struct stat sb;
        if (stat(files[f], &sb) != 0)
            die("--file: cannot read the dump");
        const char *base = strrchr(files[f], '/') ? strrchr(files[f], '/') + 1 : files[f];
        hgen none = {0};
        result r = measure(base, _gcs_heapdump_gzipped(files[f]) ? "gz" : "file", &none, files[f],
                           (uint64_t)sb.st_size, reps);
        print_row(&r, json, &first);
    }
    char *sl = strdup(nfiles ? "" : shapes);
    for (char *sv, *sh = strtok_r(sl, ",", &sv); sh; sh = strtok_r(NULL, ",", &sv)) {
        int shape = !strcmp(sh, "list") ? HG_LIST : !strcmp(sh, "tree") ? HG_TREE : !strcmp(sh, "random") ? HG_RANDOM : -1;
        if (shape < 0)
            die("--shapes: list, tree or random");
        char *ol = strdup(objects);
        for (char *ov, *os = strtok_r(ol, ",", &ov); os; os = strtok_r(NULL, ",", &ov)) {
            uint64_t n = parse_count(os);
            hgen d;
            if (fmt_v8) {
                if (nref > 62)
                    die("--refs must be 1..62 for v8");
                v8gen v = v8_generate(shape == HG_LIST ? V8GEN_LIST : shape == HG_TREE ? V8GEN_TREE : V8GEN_RANDOM,
                                      n, nref, 0x9E3779B97F4A7C15ull ^ n);
                d = (hgen){.p = (uint8_t *)v.p, .n = v.n, .cap = v.cap};
            } else {
                d = hprof_generate_shape(shape, n, nref, shuffled, 4u << 20, 0x9E3779B97F4A7C15ull ^ n);
            }
            result r = measure(sh, "mem", &d, NULL, 0, reps);
            /* the graph made.  HPROF: n nodes and 3 classes; each node's
             * references and each class's superclass and loader fields.
             * V8: n nodes (the root among them), the root's edge, each
             * node's next or children, the random graph's random edges. */
            uint64_t per = shape == HG_LIST ? 1 : shape == HG_TREE ? 2 : nref;
            int made = fmt_v8 ? r.objects == n && r.fields == (n - 1) + (shape == HG_RANDOM ? (n - 1) * (nref - 1) : 0)
                              : r.objects == n + 3 && r.fields == n * per + 6;
            if (!made)
                die("the import does not have the objects and edges the dump was made with");
            print_row(&r, json, &first);
            for (int gz = 0; gz <= 2; gz++) {
                if ((gz ? gz_objects : plain_objects) != n || (gz == 2 && !gz_block))
                    continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/bench-import-%d.%s%s", dir, (int)getpid(),
                         fmt_v8 ? "heapsnapshot" : "hprof", gz ? ".gz" : "");
                uint64_t fb = write_dump(&d, path, gz);
                r = measure(sh, gz == 2 ? "gzm" : gz ? "gz" : "file", &d, path, fb, reps);
                unlink(path);
                print_row(&r, json, &first);
            }
            free(d.p);
        }
        free(ol);
    }
    free(sl);
    if (json)
        printf("\n]}\n");
    return 0;
}
