/* corpus_record.c -- measuring this machine into a corpus entry
 * (gcs_corpus_record, include/gcscale/corpus.h; the format: docs/corpus.md).
 *
 * Every heap is re-marked (gcs_gc_remark) while it is exactly the heap of
 * its snapshot: a gc-bench shape right after it is built and its snapshot
 * written; a workload's heap from the collector's on_collection callback of
 * a collection that wrote a snapshot (the world is still stopped), as
 * gcscale validate does.  One untimed round over every P first (the kernel's
 * writeback of the snapshot competes with the first re-marks), then `reps`
 * rounds over P = 1..max, the order reversed every other round, so that a
 * slow phase of a shared host hits every P alike.  Every repetition is kept.
 * The snapshots are compressed (zstd) once the collector is gone.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../formats/zstd_internal.h"
#include "corpus_internal.h"
#include "gcscale/gc.h"
#include "gcscale/corpus.h"
#include "gcscale/shapes.h"
#include "gcscale/profile.h"
#include "gcscale/workload.h"
#include "git-revision.h" /* GCS_GIT_REVISION, written by the Makefile */

#define ZSTD_LEVEL 19

/* Heap sizes.  Full: each serial mark >= 2 ms on the 2-CPU development VM
 * and on the 16-CPU machine (wide marks 1.3 ms per million objects on the
 * first).  Shapes cost the corpus no room (recipes), the workloads' stored
 * snapshots 0.3-2.5 MB each.  Quick: proves the
 * tooling in seconds; its shapes mark too briefly to judge the model by.
 * The workloads keep their default size: smaller, they collect rarely or
 * never under their default heap limit. */
typedef struct heap_size {
    int tree_depth;
    uint64_t list, random, wide;
    double workload_scale;      /* of the workload's default size */
} heap_size;
static const heap_size FULL = {19, 2000000, 300000, 2000000, 1.0};
static const heap_size QUICK = {14, 100000, 30000, 100000, 1.0};

void gcs_corpus_record_opts_init(gcs_corpus_record_opts *o)
{
    memset(o, 0, sizeof *o);
}

typedef struct recorder {
    const gcs_corpus_record_opts *o;
    int max_threads, reps, snapshots;
    gcs_progress pr;
    json_t *heaps;              /* entry.json's "heaps" */
    /* the workload run's callback state */
    const char *workload;
    int want, taken, failed;
    /* the counting run's live heap per collection, and the collections
     * (indices from 1) the snapshot run keeps: the largest live heaps */
#define RECORD_MAX_COLLECTIONS 4096
    uint64_t live[RECORD_MAX_COLLECTIONS];
    uint64_t chosen[GCS_CORPUS_MAX_SNAPSHOTS];
    char snap_path[GCS_CORPUS_MAX_SNAPSHOTS][4096];
    json_t *pending[GCS_CORPUS_MAX_SNAPSHOTS]; /* heap objects waiting for their snapshot */
} recorder;

static uint64_t minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_minflt : 0;
}

#define U(o, k, v) json_object_set_new((o), (k), json_integer((json_int_t)(v)))

/* One repetition's raw figures. */
static json_t *rep_json(const gcs_gc_stats *s, uint64_t faults)
{
    json_t *r = json_object();
    U(r, "mark_ns", s->mark_ns);
    U(r, "pause_ns", s->pause_ns);
    U(r, "t1_ns", s->t1_ns);
    U(r, "roots", s->roots);
    U(r, "objects_marked", s->objects_marked);
    U(r, "steals", s->steals);
    U(r, "steal_attempts", s->steal_attempts);
    U(r, "steal_searches", s->steal_searches);
    U(r, "page_faults", faults);
    json_t *ws = json_array();
    for (int i = 0; i < s->threads && i < GCS_GC_MAX_THREADS; i++) {
        const gcs_gc_worker_stats *w = &s->workers[i];
        /* tail: the worker had stopped while the mark went on (the
         * measured stack's "tail", gcs_validate_measured_stack) */
        int64_t tail = (int64_t)s->mark_ns - (int64_t)w->wake_ns - (int64_t)w->mark_ns;
        json_t *j = json_object();
        U(j, "busy_ns", w->busy_ns);
        U(j, "search_ns", w->search_ns);
        U(j, "wake_ns", w->wake_ns);
        U(j, "tail_ns", tail > 0 ? tail : 0);
        U(j, "steals", w->steals);
        U(j, "steal_attempts", w->steal_attempts);
        U(j, "steal_searches", w->steal_searches);
        U(j, "objects_marked", w->objects_scanned);
        json_array_append_new(ws, j);
    }
    json_object_set_new(r, "workers", ws);
    return r;
}

/* Re-marks the current heap: an untimed round, then reps interleaved
 * rounds over P.  Fills heap["measurements"]; -1 when a re-mark fails. */
static int remark_all(recorder *rc, json_t *heap)
{
    gcs_gc_stats *st = malloc(sizeof *st);
    json_t *per_p[GCS_GC_MAX_THREADS];
    if (!st)
        return -1;
    for (int p = rc->max_threads; p >= 1; p--)
        if (gcs_gc_remark(p, st) < 0)
            goto fail;
    for (int p = 1; p <= rc->max_threads; p++)
        per_p[p - 1] = json_array();
    uint64_t roots = 0, objects = 0, live_bytes = 0;
    for (int r = 0; r < rc->reps; r++)
        for (int k = 0; k < rc->max_threads; k++) {
            int p = r % 2 == 0 ? k + 1 : rc->max_threads - k;
            uint64_t f0 = minor_faults();
            if (gcs_gc_remark(p, st) < 0) {
                for (int q = 0; q < rc->max_threads; q++)
                    json_decref(per_p[q]);
                goto fail;
            }
            uint64_t f1 = minor_faults();
            json_array_append_new(per_p[p - 1], rep_json(st, f1 - f0));
            roots = st->roots;
            objects = st->live_objects;
            live_bytes = st->live_bytes;
        }
    json_t *m = json_array();
    for (int p = 1; p <= rc->max_threads; p++)
        json_array_append_new(m, json_pack("{s:i, s:o}", "threads", p, "reps", per_p[p - 1]));
    U(heap, "roots", roots);
    U(heap, "live_objects", objects);
    U(heap, "live_bytes", live_bytes);
    json_object_set_new(heap, "measurements", m);
    free(st);
    return 0;
fail:
    free(st);
    return -1;
}

/* Records the checksum of tmp's graph in heap and, unless the heap is a
 * shape (rebuilt from its recipe: the shapes are deterministic, and their
 * snapshots would take most of the corpus's room), compresses tmp into the
 * entry as NAME.snap.zst. */
static int store_snapshot(recorder *rc, json_t *heap, const char *tmp, int keep, gcs_err *err)
{
    const char *name = json_string_value(json_object_get(heap, "name"));
    char file[256], path[4400];
    snprintf(file, sizeof file, "%s.snap.zst", name);
    snprintf(path, sizeof path, "%s/%s", rc->o->out_dir, file);
    gcs_snapshot *g = gcs_snapshot_read(tmp, err);
    if (!g)
        return -1;
    char sum[16];
    gcs_corpus_graph_checksum(g, sum);
    gcs_snapshot_free(g);
    json_object_set_new(heap, "checksum", json_string(sum));
    if (!keep)
        return 0;
    if (_gcs_zstd_compress_file(tmp, path, ZSTD_LEVEL, err) < 0)
        return -1;
    unlink(tmp);
    struct stat sb;
    json_object_set_new(heap, "snapshot", json_string(file));
    if (stat(path, &sb) == 0)
        U(heap, "snapshot_bytes", sb.st_size);
    return 0;
}

static int record_shape(recorder *rc, gcs_shape_kind kind, const heap_size *hs, gcs_err *err)
{
    gcs_shape_params sp = {.kind = kind, .seed = 1};
    if (kind == GCS_SHAPE_TREE)
        sp.depth = hs->tree_depth;
    else
        sp.objects = kind == GCS_SHAPE_LIST ? hs->list : kind == GCS_SHAPE_RANDOM ? hs->random : hs->wide;
    if (gcs_shape_params_check(&sp, err) < 0)
        return -1;
    const char *name = gcs_shape_name(kind);
    char step[128], tmp[4400];
    snprintf(step, sizeof step, "%s: re-marks at P = 1..%d, %d rounds", name, rc->max_threads, rc->reps);
    gcs_progress_step(&rc->pr, step, 1);
    snprintf(tmp, sizeof tmp, "%s/.%s.snap.tmp", rc->o->out_dir, name);
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    go.heap_limit = _gcs_corpus_shape_heap_limit(&sp);
    go.threads = rc->max_threads;
    go.max_threads = rc->max_threads;
    go.ignore_threads_env = 1;
    go.pin_workers = 1; /* as gc-bench and validate */
    go.log_path = "";
    go.snapshot_path = "";
    if (gcs_gc_init(&go, err) < 0)
        return -1;
    json_t *heap = json_object();
    json_object_set_new(heap, "name", json_string(name));
    json_object_set_new(heap, "kind", json_string("shape"));
    json_t *params = json_object();
    gcs_shape_params_to_json(&sp, params);
    json_object_set_new(heap, "shape", params);
    void *root = NULL;
    int rc_ = -1;
    gcs_shape_info info;
    if (gcs_gc_add_root(&root) < 0) {
        gcs_err_set(err, "corpus: out of memory");
        goto done;
    }
    if (gcs_shape_build_gc(&sp, &root, &info, err) < 0 || gcs_gc_collect_snapshot(tmp, err) < 0)
        goto done;
    if (remark_all(rc, heap) < 0) {
        gcs_err_set(err, "%s: a re-mark failed", name);
        goto done;
    }
    rc_ = 0;
done:
    gcs_gc_shutdown();
    if (rc_ == 0)
        rc_ = store_snapshot(rc, heap, tmp, 0, err);
    if (rc_ == 0) {
        json_array_append(rc->heaps, heap);
        gcs_progress_done(&rc->pr, 1);
    }
    json_decref(heap);
    unlink(tmp);
    return rc_;
}

/* on_collection of the workload's snapshot run. */
static void remark_collection(const gcs_gc_stats *stats, void *arg)
{
    recorder *rc = arg;
    if (stats->snapshot_status != 1 || rc->taken >= rc->want || rc->failed)
        return;
    int keep = 0;
    for (int k = 0; k < rc->want; k++)
        keep |= rc->chosen[k] == stats->index;
    if (!keep)
        return;
    int k = rc->taken++;
    snprintf(rc->snap_path[k], sizeof rc->snap_path[k], "%s", stats->snapshot_path);
    json_t *heap = json_object();
    char name[64];
    snprintf(name, sizeof name, "%s-%llu", rc->workload, (unsigned long long)stats->index);
    json_object_set_new(heap, "name", json_string(name));
    json_object_set_new(heap, "kind", json_string("workload"));
    U(heap, "collection", stats->index);
    rc->pending[k] = heap;
    if (remark_all(rc, heap) < 0)
        rc->failed = 1;
}

/* on_collection of the counting run: each collection's live heap. */
static void count_collection(const gcs_gc_stats *stats, void *arg)
{
    recorder *rc = arg;
    if (stats->index >= 1 && stats->index <= RECORD_MAX_COLLECTIONS)
        rc->live[stats->index - 1] = stats->live_bytes;
}

/* One whole run of a workload at P = max: without snapshot_every, the run
 * that counts the collections and their live heaps; with it, the run that
 * writes and re-marks the snapshots. */
static int run_workload(recorder *rc, const gcs_workload_options *wo, uint64_t snapshot_every,
                        const char *pattern, uint64_t *collections, gcs_err *err)
{
    gcs_gc_options go;
    gcs_gc_options_default(&go);
    const gcs_workload_info *info = gcs_workload_find(wo->name);
    go.heap_limit = gcs_workload_default_heap(info, wo->mutators);
    go.threads = rc->max_threads;
    go.max_threads = rc->max_threads;
    go.ignore_threads_env = 1;
    go.pin_workers = 1;
    go.log_path = "";
    go.snapshot_path = "";
    if (snapshot_every) {
        go.snapshot_path = pattern;
        go.snapshot_every = snapshot_every;
        go.on_collection = remark_collection;
        go.on_collection_arg = rc;
    } else {
        go.on_collection = count_collection;
        go.on_collection_arg = rc;
    }
    if (gcs_gc_init(&go, err) < 0)
        return -1;
    gcs_workload_result res;
    int r = gcs_workload_run(wo, &res, err);
    gcs_gc_shutdown();
    if (r == 0 && !res.verified) {
        gcs_err_set(err, "%s failed its own check: %s", wo->name, res.verify_msg);
        r = -1;
    }
    *collections = res.collections;
    return r;
}

static int record_workload(recorder *rc, const gcs_workload_info *info, const heap_size *hs, json_t *params,
                           gcs_err *err)
{
    char step[160], pattern[4400];
    gcs_workload_options wo;
    gcs_workload_options_init(&wo);
    wo.name = info->name;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    wo.mutators = online > 0 ? (int)online : 1;
    wo.size = (uint64_t)fmax(1, round((double)info->default_size * hs->workload_scale));
    wo.steps = info->default_steps;
    wo.seed = 1;
    snprintf(step, sizeof step, "%s: a whole run to count its collections", info->name);
    gcs_progress_step(&rc->pr, step, 1);
    uint64_t ncoll = 0;
    if (run_workload(rc, &wo, 0, NULL, &ncoll, err) < 0)
        return -1;
    gcs_progress_done(&rc->pr, 1);
    /* The snapshots are of the collections with the largest live heaps (the
     * earliest among equals): a workload's heap grows and shrinks, and its
     * smallest collections mark in well under the corpus's 2 ms floor (cube's
     * five collections hold 66-290 K objects).  The snapshot run writes a
     * snapshot every collection and re-marks only those; the workloads are
     * deterministic enough (same seed, same sizes) that the same collections
     * are the large ones. */
    uint64_t every = 1;
    memset(rc->live, 0, sizeof rc->live);
    memset(rc->chosen, 0, sizeof rc->chosen);
    uint64_t counted = ncoll < RECORD_MAX_COLLECTIONS ? ncoll : RECORD_MAX_COLLECTIONS;
    int nchosen = 0;
    for (int k = 0; k < rc->snapshots && (uint64_t)k < counted; k++) {
        uint64_t best = 0;
        for (uint64_t c = 1; c <= counted; c++) {
            int taken = 0;
            for (int j = 0; j < nchosen; j++)
                taken |= rc->chosen[j] == c;
            if (!taken && (best == 0 || rc->live[c - 1] > rc->live[best - 1]))
                best = c;
        }
        rc->chosen[nchosen++] = best;
    }
    snprintf(pattern, sizeof pattern, "%s/.%s-%%d.snap.tmp", rc->o->out_dir, info->name);
    snprintf(step, sizeof step, "%s: %d snapshots (the largest of %llu collections), re-marks at P = 1..%d",
             info->name, nchosen, (unsigned long long)ncoll, rc->max_threads);
    gcs_progress_step(&rc->pr, step, 2);
    rc->workload = info->name;
    rc->want = nchosen;
    rc->taken = rc->failed = 0;
    uint64_t ncoll2 = 0;
    int r = run_workload(rc, &wo, every, pattern, &ncoll2, err);
    if (r == 0 && rc->failed) {
        gcs_err_set(err, "%s: re-marking a collection's heap failed", info->name);
        r = -1;
    }
    if (r == 0 && rc->taken == 0) {
        gcs_err_set(err, "%s: no snapshot was written (%llu collections)", info->name,
                    (unsigned long long)ncoll2);
        r = -1;
    }
    for (int k = 0; k < rc->taken; k++) {
        json_t *heap = rc->pending[k];
        if (r == 0) {
            json_object_set(heap, "workload", params);
            r = store_snapshot(rc, heap, rc->snap_path[k], 1, err);
            if (r == 0)
                json_array_append(rc->heaps, heap);
        }
        json_decref(heap);
    }
    /* The run wrote a snapshot every `every` collections: drop the rest. */
    for (uint64_t c = 1; c <= ncoll2 + 1; c++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/.%s-%llu.snap.tmp", rc->o->out_dir, info->name, (unsigned long long)c);
        unlink(path);
    }
    if (r == 0)
        gcs_progress_done(&rc->pr, 2);
    json_object_set_new(params, "mutators", json_integer(wo.mutators));
    json_object_set_new(params, "size", json_integer((json_int_t)wo.size));
    json_object_set_new(params, "steps", json_integer((json_int_t)wo.steps));
    json_object_set_new(params, "seed", json_integer((json_int_t)wo.seed));
    json_t *which = json_array();
    for (int k = 0; k < nchosen; k++)
        json_array_append_new(which, json_integer((json_int_t)rc->chosen[k]));
    json_object_set_new(params, "snapshot_collections", which);
    return r;
}

static int copy_file(const char *src, const char *dst, gcs_err *err)
{
    FILE *in = fopen(src, "rb");
    if (!in) {
        gcs_err_set(err, "%s: cannot read: %s", src, strerror(errno));
        return -1;
    }
    gcs_outfile of;
    if (gcs_outfile_open(&of, dst, err) < 0) {
        fclose(in);
        return -1;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, of.fp);
    int bad = ferror(in);
    fclose(in);
    if (bad) {
        gcs_err_set(err, "%s: cannot read", src);
        gcs_outfile_abort(&of);
        return -1;
    }
    return gcs_outfile_commit(&of, err);
}

static const char *const ALL_HEAPS[] = {"tree", "list", "random", "wide", "bh", "cube", "cky"};
#define NHEAPS (sizeof ALL_HEAPS / sizeof ALL_HEAPS[0])

/* The heaps asked for, as flags in ALL_HEAPS order. */
static int select_heaps(const char *list, int want[NHEAPS], gcs_err *err)
{
    for (size_t i = 0; i < NHEAPS; i++)
        want[i] = !list;
    if (!list)
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < NHEAPS && strcmp(tok, ALL_HEAPS[i]) != 0)
            i++;
        if (i == NHEAPS) {
            gcs_err_set(err, "unknown heap '%s' (tree, list, random, wide, bh, cube or cky)", tok);
            return -1;
        }
        want[i] = 1;
    }
    return 0;
}

int gcs_corpus_record(const gcs_corpus_record_opts *o, gcs_err *err)
{
    recorder rc = {.o = o};
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    rc.max_threads = o->max_threads > 0 ? o->max_threads : online > 0 ? (int)online : 1;
    rc.reps = o->reps > 0 ? o->reps : o->quick ? 3 : 7;
    rc.snapshots = o->snapshots > 0 ? o->snapshots : o->quick ? 1 : 2;
    if (!o->out_dir || !o->machine_path) {
        gcs_err_set(err, "corpus record: an entry directory and a machine profile are required");
        return -1;
    }
    if (rc.max_threads > GCS_GC_MAX_THREADS || rc.reps > GCS_CORPUS_MAX_REPS ||
        rc.snapshots > GCS_CORPUS_MAX_SNAPSHOTS) {
        gcs_err_set(err, "corpus record: at most %d threads, %d repetitions and %d snapshots", GCS_GC_MAX_THREADS,
                    GCS_CORPUS_MAX_REPS, GCS_CORPUS_MAX_SNAPSHOTS);
        return -1;
    }
    int want[NHEAPS];
    if (select_heaps(o->heaps, want, err) < 0)
        return -1;
    gcs_profile *prof = gcs_profile_load(o->machine_path, err); /* refuse a bad profile before measuring */
    if (!prof)
        return -1;
    gcs_profile_free(prof);
    char path[4400];
    snprintf(path, sizeof path, "%s/entry.json", o->out_dir);
    if (access(path, F_OK) == 0) {
        gcs_err_set(err, "%s: an entry is there already (record into a new directory)", o->out_dir);
        return -1;
    }
    if (gcs_make_dirs(o->out_dir, err) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/profile.json", o->out_dir);
    if (copy_file(o->machine_path, path, err) < 0)
        return -1;
    const heap_size *hs = o->quick ? &QUICK : &FULL;
    double work = 0;
    for (size_t i = 0; i < NHEAPS; i++)
        work += want[i] ? (i < 4 ? 1 : 3) : 0;
    gcs_progress_init(&rc.pr, work, o->quiet);
    rc.heaps = json_array();
    json_t *workloads = json_object();
    uint64_t t0 = gcs_now_ns();
    int r = 0;
    for (size_t i = 0; i < NHEAPS && r == 0; i++) {
        if (!want[i])
            continue;
        gcs_shape_kind kind;
        if (gcs_shape_parse(ALL_HEAPS[i], &kind) == 0) {
            r = record_shape(&rc, kind, hs, err);
        } else {
            json_t *params = json_pack("{s:s}", "name", ALL_HEAPS[i]);
            r = record_workload(&rc, gcs_workload_find(ALL_HEAPS[i]), hs, params, err);
            json_object_set_new(workloads, ALL_HEAPS[i], params);
        }
    }
    if (r == 0) {
        gcs_progress_finish(&rc.pr);
        time_t now = time(NULL);
        struct tm tm;
        char created[32];
        gmtime_r(&now, &tm);
        strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_t *threads = json_array();
        for (int p = 1; p <= rc.max_threads; p++)
            json_array_append_new(threads, json_integer(p));
        json_t *doc = json_pack("{s:s, s:i, s:s, s:o, s:s, s:s, s:s, s:s, s:s, s:o, s:i, s:b, s:f, s:o, s:o}",
                                "format", GCS_CORPUS_FORMAT, "version", GCS_CORPUS_VERSION, "created", created,
                                "machine", gcs_corpus_machine_json(), "profile", "profile.json",
                                "profile_source", o->machine_path, "command", o->command ? o->command : "",
                                "git_revision", GCS_GIT_REVISION, "gcscale_version", GCSCALE_VERSION,
                                "threads", threads, "reps", rc.reps, "quick", o->quick, "record_seconds",
                                (double)(gcs_now_ns() - t0) / 1e9, "workloads", workloads, "heaps", rc.heaps);
        snprintf(path, sizeof path, "%s/entry.json", o->out_dir);
        r = gcs_json_write_file(doc, path, err);
        json_decref(doc);
    } else {
        json_decref(workloads);
        json_decref(rc.heaps);
    }
    return r;
}
