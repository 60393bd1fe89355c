/* gc.h -- gcscale's precise, non-moving, parallel mark-sweep collector
 * (prefix gcs_gc_).
 *
 * This is the collector whose mark phase the Endo-Taura-Yonezawa model
 * predicts: P worker threads mark depth-first from their own mark stacks and
 * an idle worker steals the oldest entry of another worker's stack; sweep is
 * parallel over pages.  Every collection is measured (gcs_gc_stats) so that
 * the model's inputs (T1, steals, placement) come from the real collector.
 *
 * There is one collector per process: gcs_gc_init() creates it, and
 * gcs_gc_shutdown() destroys it (after every other thread has detached).
 *
 * Objects.  gcs_gc_alloc(size, nptrs) returns `size` bytes (rounded up to a
 * multiple of 8, at least 8) of zeroed memory whose first `nptrs` words are
 * pointer fields: each holds NULL or a pointer returned by gcs_gc_alloc*()
 * (to the start of an object; interior pointers are not followed).  The rest
 * of the object is never scanned.  gcs_gc_alloc_data(size) is the same with
 * no pointer fields.  A hidden 8-byte header in front of the object holds the
 * size and the pointer count.  Objects with no pointer fields (either call)
 * live on pages of their own, which the mark knows hold no pointers.
 *
 * Roots.  The collector is precise: only objects reachable from registered
 * root slots (gcs_gc_add_root) or from the calling threads' shadow stacks
 * (gcs_gc_push_root/gcs_gc_pop_roots) survive.  A C local that holds the only
 * reference to an object must be pushed before the next allocation or
 * safepoint.
 *
 * Threads.  A thread that allocates or touches GC objects must be attached
 * (gcs_gc_attach; gcs_gc_init attaches its caller).  A collection stops the
 * world: it waits until every other attached thread is parked at a safepoint
 * (gcs_gc_safepoint(), any allocation, gcs_gc_collect()).  An attached thread
 * must therefore poll regularly and must detach before it blocks for long
 * (pthread_join, sleeping on I/O); detached threads are not waited for and
 * must not touch GC objects.
 *
 * Errors.  Nothing prints or exits.  gcs_gc_init returns -1 with err set;
 * allocation returns NULL when the heap limit is reached even after a full
 * collection, and gcs_gc_last_error() then describes why (per thread).
 */
#ifndef GCSCALE_GC_H
#define GCSCALE_GC_H

#include <stddef.h>
#include <stdint.h>

#include "gcscale/common.h"
#include "gcscale/topology.h"

#define GCS_GC_MAX_THREADS 64      /* most GC worker threads per collector */
#define GCS_GC_PAGE_BYTES 65536    /* heap page; small objects never cross one */
#define GCS_GC_SMALL_MAX 8192      /* largest small object including header */
#define GCS_GC_CHUNK_FIELDS 128    /* pointer fields per mark-stack entry */
#define GCS_GC_MARK_FIFO 32        /* objects whose header the mark prefetches ahead */

/* An object's marking weight: what scanning it adds to the critical path
 * of the mark, in the units of cost_object (per object) and cost_pointer
 * (per pointer field counted).  The one definition of T-infinity's node
 * weight, used by the collector's span pass (gcs_gc_stats.span) and by heap
 * inspection (gcscale predict, include/gcscale/inspect.h); docs/model.md
 * "Large pointer arrays".
 *
 * counted: the pointer fields priced at cost_pointer (the collector counts
 * all nptrs fields, heap inspection the non-NULL ones, each matching its own
 * T1); nptrs: the object's pointer fields, which decide how it is scanned.
 * An ordinary object is scanned by one worker, so its children arrive after
 * cost_object + cost_pointer * counted.  A pointer array of more than
 * GCS_GC_CHUNK_FIELDS fields is not: the mark takes it a chunk at a time
 * and, when a worker is idle, publishes half of the rest, so with unlimited
 * workers the array unfolds as a balanced binary tree of chunks.  Its last
 * child then arrives after ceil(log2(chunks)) splits, each an entry pushed
 * and popped (priced as one object), plus one chunk of fields.  T1 is
 * unchanged: the work is the same, only its order differs. */
static inline double gcs_gc_mark_weight(double cost_object, double cost_pointer, uint32_t counted,
                                        uint32_t nptrs)
{
    if (nptrs <= GCS_GC_CHUNK_FIELDS)
        return cost_object + cost_pointer * counted;
    uint32_t chunks = nptrs / GCS_GC_CHUNK_FIELDS + (nptrs % GCS_GC_CHUNK_FIELDS != 0); /* >= 2, no overflow */
    int splits = 32 - __builtin_clz(chunks - 1); /* ceil(log2(chunks)) */
    uint32_t per_chunk = counted < GCS_GC_CHUNK_FIELDS ? counted : GCS_GC_CHUNK_FIELDS;
    return cost_object * (1 + splits) + cost_pointer * per_chunk;
}

/* Where heap pages go.  A failed bind is counted, never fatal. */
typedef enum gcs_gc_numa_policy {
    GCS_GC_NUMA_LOCAL = 0,      /* the node of the CPU of the allocating thread */
    GCS_GC_NUMA_INTERLEAVE = 1, /* page i on node i mod nnodes */
    GCS_GC_NUMA_NODE = 2,       /* every page on options.numa_node */
} gcs_gc_numa_policy;

/* How a worker sets a mark.  Marks live in a side table (one byte or one bit
 * per 16-byte granule of the heap), never in the object.  The marked set is
 * exact in every mode; RELAXED_BYTES may scan an object twice when two
 * workers race on it (a plain load then a plain store, as in Boehm GC). */
typedef enum gcs_gc_mark_mode {
    GCS_GC_MARK_RELAXED_BYTES = 0, /* mark byte, load + store */
    GCS_GC_MARK_ATOMIC_BYTES = 1,  /* mark byte, atomic exchange */
    GCS_GC_MARK_ATOMIC_BITS = 2,   /* mark bit, atomic fetch_or */
} gcs_gc_mark_mode;

typedef struct gcs_gc_stats gcs_gc_stats;

#define GCS_GC_MAX_NODES 64        /* memory nodes counted in gcs_gc_stats.node_live_bytes */

/* Thread policy: chooses P for each collection (docs/collector.md, "Thread
 * policies"; the adaptive one is include/gcscale/adaptive.h).  The collector
 * calls choose() once per collection, after the world is stopped and before
 * the roots are scanned, with the statistics of the previous collection
 * (NULL for the first) and the size of the worker pool.  choose() returns P
 * (clamped by the collector to 1..max_threads; <= 0 means "keep the current
 * count") and may fill the decision's predictions and note.  The collector
 * times the call (decision_ns) and stores the decision in the collection's
 * statistics and log line.  choose() runs on the collecting thread with the
 * world stopped: it may make the calls an on_collection callback may make
 * (gcs_gc_options.on_collection; gcs_gc_collections() there does not count
 * the collection about to run yet), and the others fail there as they do in
 * the callback.  destroy(state) is called once, by gcs_gc_shutdown() or by a
 * failing gcs_gc_init(): from gcs_gc_init() on, the collector owns state. */
#define GCS_GC_DECISION_INPUTS 16 /* named inputs a decision may record */
typedef struct gcs_gc_decision {
    int used;                   /* 1: a policy chose this collection's P */
    char policy[32];            /* the policy's name */
    int threads;                /* the P chosen (after clamping) */
    int max_threads;            /* the candidates were 1..max_threads */
    int npredicted;             /* predicted_mark_ns[0..npredicted) is for P = 1..npredicted; 0: none */
    double predicted_mark_ns[GCS_GC_MAX_THREADS];
    uint64_t decision_ns;       /* the choose() call itself, measured by the collector */
    /* Why, in the policy's words: a string literal (e.g. "first collection:
     * no prediction") -- stats outlive the policy, and choose() need not
     * format text in the pause; NULL: none. */
    const char *note;
    /* The inputs the policy decided from, by name (static strings). */
    int ninputs;
    struct { const char *name; double value; } inputs[GCS_GC_DECISION_INPUTS];
} gcs_gc_decision;

typedef struct gcs_gc_thread_policy {
    const char *name;           /* static string; NULL: no policy */
    int (*choose)(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *out);
    void (*destroy)(void *state);
    void *state;
} gcs_gc_thread_policy;

/* Collections an empty page stays empty before its memory is released
 * (gcs_gc_options.release_after). */
#define GCS_GC_RELEASE_AFTER_DEFAULT 6

typedef struct gcs_gc_options {
    size_t heap_limit;        /* bytes of heap pages (rounded up to pages); 0: 256 MiB */
    int threads;              /* GC workers P; 0: one per CPU.  GCSCALE_GC_THREADS overrides */
    int max_threads;          /* size of the worker pool (>= threads); 0: = threads */
    gcs_gc_numa_policy numa_policy;
    int numa_node;            /* for GCS_GC_NUMA_NODE */
    gcs_gc_mark_mode mark_mode;
    /* Where the workers run (topology.h, "worker placement"): worker i is
     * bound to the i-th PU of the policy's order, for the pool's life.
     * GCS_TOPO_PLACE_DEFAULT: pin_workers decides, 1 = cores, 0 = none (the
     * flag's meaning before placement existed was "worker i on PU L#i",
     * which put P = 2 on one core of an SMT machine; cores is what it was
     * meant to be). */
    gcs_topo_placement placement;
    int pin_workers;          /* used only when placement is DEFAULT */
    size_t alloc_budget;      /* collect after this many bytes of pages handed to
                                 allocators since the last collection; 0: only
                                 when the heap is full */
    int release_empty_pages;  /* madvise(DONTNEED) pages a sweep empties; default 1 */
    /* ... once they have stayed empty this many collections (the sweep of
     * the release_after-th collection after the one that emptied them);
     * 0: in the sweep that empties them.  Default
     * GCS_GC_RELEASE_AFTER_DEFAULT, as Boehm GC's MUNMAP_THRESHOLD: a page
     * emptied and refilled between two collections is not given back and
     * faulted in again (docs/collector.md, "Sweep"). */
    int release_after;
    int compute_span;         /* compute T-infinity of the marked graph after marking */
    double span_cost_object;  /* w(v) = gcs_gc_mark_weight(.., nptrs(v), nptrs(v)) */
    double span_cost_pointer; /* both 0: 1 and 1 (units of objects + pointers) */
    const char *log_path;     /* append one JSON line per collection; NULL: $GCSCALE_GC_LOG */
    /* Called by the collecting thread at the end of every collection, with the
     * world still stopped (and the collector's lock held).  It may read:
     * gcs_gc_collections() (which counts this collection: stats->index),
     * gcs_gc_last_stats() (this collection's), gcs_gc_threads(),
     * gcs_gc_max_threads(), gcs_gc_census(), gcs_gc_last_error(),
     * gcs_gc_cache_miss_info(), gcs_gc_size/nptrs/node_of/is_heap_pointer on
     * live objects, gcs_gc_stats_to_json(); re-mark: gcs_gc_remark(); and
     * change settings, which apply from the next collection:
     * gcs_gc_set_threads, _set_mark_mode, _set_instrumentation,
     * _set_compute_span, _set_thread_policy_active, _set_snapshot,
     * gcs_gc_snapshot_next, gcs_gc_add_root/remove_root.  It must not
     * allocate, collect or change the threads: gcs_gc_alloc*() return NULL,
     * gcs_gc_collect(), gcs_gc_collect_snapshot(), gcs_gc_build_snapshot()
     * and gcs_gc_attach() return -1, gcs_gc_detach() and gcs_gc_shutdown()
     * do nothing, all with gcs_gc_last_error() (and err) saying "... is not
     * allowed during a collection"; gcs_gc_safepoint() returns at once. */
    void (*on_collection)(const gcs_gc_stats *stats, void *arg);
    void *on_collection_arg;
    /* Chooses P per collection (see gcs_gc_thread_policy); name NULL: none,
     * every collection uses `threads` (or gcs_gc_set_threads). */
    gcs_gc_thread_policy thread_policy;
    /* 1: GCSCALE_GC_THREADS is not read by gcs_gc_init (gcs_adaptive_configure
     * sets it: it has read the variable already).  0 (default): a number there
     * overrides `threads`, and "adaptive[:MAX]" there is an error unless a
     * thread policy is installed (only gcs_adaptive_configure can build it). */
    int ignore_threads_env;
    /* Heap snapshots (docs/snapshot-format.md), written after the mark and
     * before the sweep of every snapshot_every-th collection (index % N == 0).
     * Every "%d" in the path is replaced by the collection index; without one
     * the file is overwritten each time.  NULL: $GCSCALE_GC_SNAPSHOT (unset:
     * no periodic snapshots); 0: $GCSCALE_GC_SNAPSHOT_EVERY, else 1. */
    const char *snapshot_path;
    uint64_t snapshot_every;
} gcs_gc_options;

/* Per-worker measurements of one collection.  Counters are kept in the
 * worker's own plain variables; clocks are read only around phases and around
 * each search for work, never per object. */
typedef struct gcs_gc_worker_stats {
    uint64_t wake_ns;           /* from the mark phase's start signal until this worker ran
                                   (waking a sleeping thread: microseconds on bare metal,
                                   up to milliseconds for an idle vCPU in a VM) */
    uint64_t mark_ns;           /* from this worker's start of marking to its exit */
    uint64_t busy_ns;           /* marking: mark_ns minus search_ns */
    uint64_t search_ns;         /* looking for work (stealing, waiting for termination) */
    uint64_t steal_attempts;    /* deque steal operations tried */
    uint64_t steals;            /* of which took an entry */
    uint64_t steal_searches;    /* searches that found work: one per idle spell that ended
                                   in a steal, however many entries it took (up to 16) */
    uint64_t objects_scanned;   /* objects (or chunks' objects, once) scanned */
    uint64_t pointers_scanned;  /* pointer fields read */
    uint64_t edges_examined;    /* mark tests this worker caused: the non-NULL pointer
                                   fields it read and the roots handed to it (whoever
                                   then tested them; the sum over workers is every test) */
    uint64_t bytes_marked;      /* header + payload bytes of scanned objects (only the
                                   8 header bytes for pointer-free objects an array
                                   marks unread: their size is in the unread header) */
    uint64_t chunks_scanned;    /* extra entries for large pointer arrays */
    uint64_t spills;            /* times this worker published work for idle workers */
    uint64_t sweep_ns;
    uint64_t pages_swept;
    int64_t cache_misses;       /* LLC misses during this worker's mark (PAPI); -1: unavailable */
    int cpu;                    /* OS CPU the worker is pinned to, -1 if not pinned */
    int pu;                     /* hwloc logical index of that PU, -1 if not pinned */
} gcs_gc_worker_stats;

typedef enum gcs_gc_reason {
    GCS_GC_REASON_REQUEST = 0,  /* gcs_gc_collect() */
    GCS_GC_REASON_BUDGET = 1,   /* alloc_budget used up */
    GCS_GC_REASON_HEAP_FULL = 2,/* no free page left */
} gcs_gc_reason;

struct gcs_gc_stats {
    uint64_t index;             /* 1 for the first collection */
    gcs_gc_reason reason;
    int threads;                /* P used by this collection */
    gcs_gc_mark_mode mark_mode;
    uint64_t start_ns;          /* gcs_now_ns() when the collection was requested */
    uint64_t stop_ns;           /* waiting for the other mutators to park */
    uint64_t roots_ns;          /* scanning roots and shadow stacks */
    uint64_t mark_ns;           /* wall time of the parallel mark */
    uint64_t span_ns;           /* the optional T-infinity pass */
    uint64_t sweep_ns;          /* wall time of the parallel sweep */
    uint64_t pause_ns;          /* whole stop-the-world pause */
    uint64_t t1_ns;             /* T1: sum of the workers' busy_ns */
    uint64_t roots;             /* non-NULL root slots */
    uint64_t objects_marked;    /* sum of objects_scanned (may exceed live in RELAXED mode) */
    uint64_t pointers_scanned;
    uint64_t steal_attempts, steals;
    uint64_t steal_searches;    /* sum of the workers' */
    /* Rounds of rescanning the marked heap because a worker's mark stack
     * could not grow (out of memory) and an entry was dropped: the marks are
     * completed before anything is swept, so no reachable object is lost.
     * 0 normally.  The rescan's time is in mark_ns, its reads in
     * pointers_scanned and edges_examined (of worker 0, which it runs as). */
    uint64_t mark_rescans;
    uint64_t live_objects;      /* after sweep, exact */
    uint64_t live_bytes;        /* slot bytes of the live objects (incl. headers, padding) */
    uint64_t freed_objects;     /* objects reclaimed by this sweep */
    uint64_t pages_in_use;      /* heap pages holding objects after sweep */
    uint64_t pages_freed;       /* pages this sweep emptied */
    uint64_t pages_released;    /* pages whose memory this sweep gave back (release_after) */
    uint64_t heap_limit;
    uint64_t bind_failures;     /* pages whose NUMA bind failed so far */
    /* Minor page faults of the whole process during the pause
     * (getrusage; the mutators are parked, so they are the collector's):
     * memory the mark or sweep touched for the first time.  0 normally; see
     * "First-touch faults" in docs/collector.md. */
    uint64_t page_faults;
    int compute_span;
    double span;                /* T-infinity in the cost units below; NaN if not computed */
    double span_cost_object, span_cost_pointer;
    int cache_misses_available; /* 0: no hardware counters (gcs_gc_cache_miss_info says why) */
    /* Heap snapshot of this collection, if one was due.  Its time is kept out
     * of mark_ns and pause_ns (the world was stopped for pause_ns + snapshot_ns). */
    int snapshot_status;        /* 0: none due, 1: written, -1: failed (not fatal) */
    uint64_t snapshot_ns;       /* walking the marked heap and writing the file */
    uint64_t snapshot_bytes;    /* file size */
    uint64_t snapshot_objects;  /* objects in the snapshot (= the marked set) */
    char snapshot_path[4096];   /* the file (pattern expanded) */
    char snapshot_error[512];   /* why it failed; "" otherwise */
    /* Model inputs the thread policy reads (also filled by gcs_gc_remark). */
    uint64_t edges_examined;    /* sum of the workers' (0 with instrumentation off) */
    /* Threads attached to the collector when this collection stopped the
     * world, the collecting one included (the application's thread count,
     * which HotSpot's worker rule scales with: adaptive/baselines.c); 0 in
     * a re-mark. */
    int mutators;
    int nnodes;                 /* memory nodes the collector knows (>= 1) */
    uint64_t node_live_bytes[GCS_GC_MAX_NODES]; /* live_bytes by node of their page */
    uint64_t unknown_node_live_bytes;           /* ... on pages of unknown node */
    gcs_gc_decision decision;   /* the thread policy's choice (decision.used 0: none) */
    int remark;                 /* 1: filled by gcs_gc_remark, not a collection */
    /* The pool's placement policy (never DEFAULT); each worker's PU is
     * workers[i].cpu / .pu ("pu_map" and "pu_map_logical" in the JSON). */
    gcs_topo_placement placement;
    gcs_gc_worker_stats workers[GCS_GC_MAX_THREADS];
};

/* Lifetime ---------------------------------------------------------------- */
GCS_API void gcs_gc_options_default(gcs_gc_options *opts);
/* Reserves the heap, starts the worker pool and attaches the calling thread.
 * opts may be NULL (defaults).  Fails if a collector already exists. */
GCS_API int gcs_gc_init(const gcs_gc_options *opts, gcs_err *err);
/* Stops the workers and releases the heap; every other thread must have
 * detached.  All GC objects become invalid. */
GCS_API void gcs_gc_shutdown(void);
GCS_API int gcs_gc_is_initialized(void);

/* Threads ---------------------------------------------------------------- */
GCS_API int gcs_gc_attach(gcs_err *err);     /* 0, or -1 if no collector / already attached */
GCS_API void gcs_gc_detach(void);            /* drops the thread's shadow stack */

/* Allocation (attached threads only) --------------------------------------- */
GCS_API void *gcs_gc_alloc(size_t size, size_t nptrs);
GCS_API void *gcs_gc_alloc_data(size_t size);
GCS_API size_t gcs_gc_size(const void *obj);   /* payload bytes (multiple of 8) */
GCS_API size_t gcs_gc_nptrs(const void *obj);
GCS_API int gcs_gc_node_of(const void *obj);   /* memory node of obj's page; -1 unknown */
GCS_API int gcs_gc_is_heap_pointer(const void *p); /* p lies inside the reserved heap */
GCS_API const char *gcs_gc_last_error(void);   /* this thread's last failure; "" if none */

/* Roots -------------------------------------------------------------------- */
GCS_API int gcs_gc_add_root(void **slot);      /* global root slot; -1 if out of memory */
GCS_API void gcs_gc_remove_root(void **slot);
/* Per-thread shadow stack: push the address of a local that holds a GC
 * pointer, pop the same number before the local goes out of scope. */
GCS_API int gcs_gc_push_root(void **slot);      /* -1 only when out of memory */
GCS_API void gcs_gc_pop_roots(size_t n);

/* Collection ---------------------------------------------------------------- */
/* Collects now (or joins a collection already under way); returns 0. */
GCS_API int gcs_gc_collect(void);
/* Parks the thread if another thread wants to collect.  Cheap: one load. */
GCS_API extern int gcs_gc_stop_requested_;
GCS_API void gcs_gc_safepoint_slow(void);
static inline void gcs_gc_safepoint(void)
{
    if (__builtin_expect(__atomic_load_n(&gcs_gc_stop_requested_, __ATOMIC_RELAXED), 0))
        gcs_gc_safepoint_slow();
}

/* GC threads P for the next collections (1..max_threads); the count is chosen
 * per collection, so an adaptive policy can change it between collections. */
GCS_API int gcs_gc_set_threads(int threads);
/* Pauses (0) or resumes (1) the thread policy installed at init: while it is
 * paused, collections use the gcs_gc_set_threads count and carry no decision
 * (gc-bench times fixed P and the policy on one heap).  -1 if no policy. */
GCS_API int gcs_gc_set_thread_policy_active(int on);
GCS_API int gcs_gc_threads(void);
GCS_API int gcs_gc_max_threads(void);
/* The mark mode of the next collections and re-marks.  Any thread may call
 * it at any time: a collection reads the mode once, when it starts, and its
 * mark and sweep all use that copy (gcs_gc_stats.mark_mode); a call made
 * during a collection waits for it to end.  A value that is not a
 * gcs_gc_mark_mode is ignored. */
GCS_API void gcs_gc_set_mark_mode(gcs_gc_mark_mode mode);
/* T-infinity of each following collection's marked graph (gcs_gc_stats.span)
 * with w(v) = gcs_gc_mark_weight(cost_object, cost_pointer, nptrs(v), nptrs(v));
 * both 0: 1 and 1, the unit "objects + pointers", as in gcs_gc_options. */
GCS_API void gcs_gc_set_compute_span(int on, double cost_object, double cost_pointer);
/* Instrumentation (default on).  Off, workers keep no per-object counters
 * (objects_scanned, pointers_scanned, bytes_marked, chunks_scanned stay 0)
 * and read no clock around their searches for work (search_ns 0, busy_ns =
 * mark_ns); phase times, steals and spills are still recorded.  It exists to
 * measure what the instrumentation costs (gcscale gc-bench --instr-cost).
 * Like the mark mode, read once per collection or re-mark. */
GCS_API void gcs_gc_set_instrumentation(int on);
/* LLC misses per worker (workers[i].cache_misses): 1 when a PAPI event
 * counts them, with its name in buf; 0 when unavailable, with PAPI's reason
 * in buf ("unavailable: ...").  Probed once per process. */
GCS_API int gcs_gc_cache_miss_info(char *buf, size_t n);

/* Heap snapshots ------------------------------------------------------------ */
/* The next collection (whoever triggers it) also writes a snapshot to path
 * ("%d" expanded as above), whether or not a periodic one is due; the
 * periodic one is skipped for that collection.  One such request is pending
 * at a time: a second gcs_gc_snapshot_next before that collection replaces
 * the first (it never replaces a gcs_gc_collect_snapshot request).  -1 if no
 * collector. */
GCS_API int gcs_gc_snapshot_next(const char *path);
/* Collects now (or joins a collection already under way) and writes a
 * snapshot of the live heap to path ("%d" expanded).  0 means this call's
 * own file was written; -1 with err set when it was not (the collection
 * itself always happens).  Calls from several threads are independent: each
 * queues its own request, and one collection writes every queued file (the
 * periodic file is skipped for it; its statistics describe the first file,
 * and snapshot_status is -1 if any failed). */
GCS_API int gcs_gc_collect_snapshot(const char *path, gcs_err *err);
/* Periodic snapshots from now on: path pattern (NULL: off) every N-th (0: 1). */
GCS_API int gcs_gc_set_snapshot(const char *path, uint64_t every);

/* Builds a heap from a snapshot (include/gcscale/snapshot.h): allocates every
 * object with its size and pointer count, in id (= address) order, links the
 * fields and registers one root slot per snapshot root, so that the next
 * collection marks the same graph.  Node placement follows this collector's
 * policy, not the snapshot's.  The caller keeps the heap alive through
 * out->roots until gcs_gc_snapshot_heap_release().  -1 with err set when the
 * heap limit is too small (the partly built heap becomes garbage). */
struct gcs_snapshot;
typedef struct gcs_gc_snapshot_heap {
    void **roots;               /* [nroots] registered root slots */
    size_t nroots;
    uint64_t objects;           /* objects allocated */
    uint64_t bytes;             /* their payload bytes */
} gcs_gc_snapshot_heap;
GCS_API int gcs_gc_build_snapshot(const struct gcs_snapshot *g, gcs_gc_snapshot_heap *out, gcs_err *err);
/* Unregisters and frees the root slots (the objects become garbage). */
GCS_API void gcs_gc_snapshot_heap_release(gcs_gc_snapshot_heap *heap);

/* Re-mark ------------------------------------------------------------------ */
/* Marks the current heap again from the current roots with `threads` workers
 * (1..max_threads) and fills *out with the mark's statistics (mark_ns, t1_ns,
 * roots, objects_marked, steals, edges_examined, mark_rescans, per-worker
 * busy/search) and with live_objects / live_bytes / node_live_bytes counted
 * from the marks;
 * sweep, span, snapshot and decision fields stay 0, and out->remark is 1.
 * Nothing is swept or freed, no snapshot is written, no log line is written,
 * and the collection count is unchanged: afterwards the mark table is clear
 * again, as after every collection, so the next collection is unaffected.
 * out->index is the collection whose live set was re-marked.
 *
 * Callable from an on_collection callback (the world is stopped already:
 * this re-marks exactly the live set that collection kept; the main use is
 * timing one heap at P = 1..ncores) or from an attached thread (it then stops
 * the world itself, like a collection, and resumes it).  Objects allocated
 * since the last collection are marked if reachable.  -1 if no collector or
 * threads is out of range. */
GCS_API int gcs_gc_remark(int threads, gcs_gc_stats *out);

/* Statistics --------------------------------------------------------------- */
GCS_API int gcs_gc_last_stats(gcs_gc_stats *out);   /* -1 before the first collection */
/* Collections so far; in an on_collection callback, including the one being
 * reported (= its stats' index, as gcs_gc_last_stats() there). */
GCS_API uint64_t gcs_gc_collections(void);
/* Walks the heap (world must be quiet: call from an attached thread with no
 * other thread running) and counts allocated objects and their payload bytes.
 * Right after a collection this is exactly the reachable set. */
GCS_API void gcs_gc_census(uint64_t *objects, uint64_t *payload_bytes);
/* The JSON line that is logged for a collection (new reference). */
GCS_API json_t *gcs_gc_stats_to_json(const gcs_gc_stats *stats);
GCS_API const char *gcs_gc_mark_mode_name(gcs_gc_mark_mode mode);

#endif
