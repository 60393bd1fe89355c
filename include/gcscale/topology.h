/* topology.h -- the machine's nodes and caches, thread pinning and memory
 * binding (prefix gcs_topo_).
 *
 * Owns: loading the hwloc topology of this system or of an hwloc synthetic
 * description ("pack:2 node:2 core:2 pu:1"), the list of memory nodes with
 * their OS CPU numbers, the caches with their geometry and sharing, pinning a
 * thread to a CPU or node, binding a buffer to a memory node, and checking
 * where the kernel really put the pages.  Calls common.h, hwloc and libnuma.
 *
 * Numbers: a node's "id" is its hwloc logical index (0..nnodes-1), which is
 * the index used in the machine profile's matrices; CPUs are always OS CPU
 * numbers (what taskset and /proc/cpuinfo show).
 *
 * Wrong numbers (a CPU or node that the topology does not have) are errors.
 * Requests that are valid but cannot be honoured -- any binding on a
 * synthetic topology, a kernel without NUMA support -- are not: the calls
 * carry on unbound and say so in a warning string.
 */
#ifndef GCSCALE_TOPOLOGY_H
#define GCSCALE_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include "gcscale/common.h"

typedef struct gcs_topo gcs_topo;

typedef struct gcs_topo_node {
    int id;               /* hwloc logical index */
    int os_index;         /* the kernel's node number, used for binding */
    int ncpus;            /* 0 for a memory-only node */
    int *cpus;            /* OS CPU numbers, ascending; every CPU is in one
                           * node at most (the one with the smallest hwloc
                           * cpuset holding it) */
    uint64_t mem_bytes;   /* local memory, 0 if unknown */
} gcs_topo_node;

typedef struct gcs_topo_cache {
    int level;
    char type[16];        /* "data", "unified" or "instruction" */
    uint64_t size_bytes;
    int line_bytes;       /* 0 if unknown */
    int ways;             /* 0 = fully associative or unknown */
    int ncpus;
    int *cpus;            /* OS CPU numbers sharing this instance */
} gcs_topo_cache;

/* synthetic == NULL loads this system. */
GCS_API gcs_topo *gcs_topo_load(const char *synthetic, gcs_err *err);
GCS_API void gcs_topo_free(gcs_topo *t);

/* 1 when the topology is not this machine's (binding cannot be honoured). */
GCS_API int gcs_topo_is_synthetic(const gcs_topo *t);
GCS_API const char *gcs_topo_description(const gcs_topo *t); /* "this system" or the string */

GCS_API int gcs_topo_nnodes(const gcs_topo *t);
GCS_API const gcs_topo_node *gcs_topo_node_at(const gcs_topo *t, int id);
GCS_API int gcs_topo_ncaches(const gcs_topo *t);
GCS_API const gcs_topo_cache *gcs_topo_cache_at(const gcs_topo *t, int i);
GCS_API int gcs_topo_ncpus(const gcs_topo *t);
/* OS CPU numbers of all CPUs, ascending; valid while t lives. */
GCS_API const int *gcs_topo_cpus(const gcs_topo *t);
/* Node id of an OS CPU, -1 if the topology has no such CPU. */
GCS_API int gcs_topo_cpu_node(const gcs_topo *t, int cpu);
/* The CPU node nearest to memory node `node`: the node itself when it has
 * CPUs; for a memory-only node, the node owning the first CPU of its hwloc
 * locality (else the first node with CPUs).  -1 for a node that does not
 * exist or a topology without CPUs in any node. */
GCS_API int gcs_topo_local_cpu_node(const gcs_topo *t, int node);
/* Size of the largest data or unified cache (the LLC); 0 if none known. */
GCS_API uint64_t gcs_topo_llc_bytes(const gcs_topo *t);

/* Argument checks with a one-line error naming the valid range. */
GCS_API int gcs_topo_check_cpu(const gcs_topo *t, int cpu, gcs_err *err);
GCS_API int gcs_topo_check_node(const gcs_topo *t, int node, gcs_err *err);

/* Pins the calling thread to one OS CPU, or to the CPUs of a node (for a
 * memory-only node, the CPUs nearest to it).
 * Returns 0 when pinned, 1 when the request is valid but could not be
 * honoured (reason in warn), -1 with err set for a CPU/node that does not
 * exist. */
GCS_API int gcs_topo_pin_cpu(const gcs_topo *t, int cpu, char *warn, size_t warn_len, gcs_err *err);
GCS_API int gcs_topo_pin_node(const gcs_topo *t, int node, char *warn, size_t warn_len, gcs_err *err);

/* Binds [addr, addr+len) to memory node `node` (call before the pages are
 * first touched).  Same return convention as the pin calls. */
GCS_API int gcs_topo_bind_memory(const gcs_topo *t, void *addr, size_t len, int node,
                         char *warn, size_t warn_len, gcs_err *err);

/* Asks the kernel (move_pages(2) in query mode) where `samples` pages spread
 * over [addr, addr+len) really are.  Returns the fraction of sampled pages
 * that are on `node` (0..1), or -1 when the kernel cannot tell; writes a
 * warning when the fraction is below 1 or the query failed, else "". */
GCS_API double gcs_topo_check_placement(const gcs_topo *t, const void *addr, size_t len, int node,
                                int samples, char *warn, size_t warn_len);

/* Runs fn(arg) in a new thread pinned to `cpu` (if >= 0) or else to the CPUs
 * of `node` (if >= 0), and waits for it.  A pin that cannot be honoured runs
 * the function unpinned and leaves the reason in warn.  Returns -1 with err
 * set for a nonexistent CPU/node or when no thread can be started. */
GCS_API int gcs_topo_run_pinned(const gcs_topo *t, int cpu, int node, void *(*fn)(void *), void *arg,
                        char *warn, size_t warn_len, gcs_err *err);

/* ---- worker placement (placement.c) -------------------------------------------
 * Which PU each of P workers is bound to.  hwloc numbers the hyperthreads of
 * one core next to each other, so "worker i on PU L#i" puts workers 0 and 1
 * on one core of any SMT machine; the policies below say what to fill first.
 *
 *   cores    one worker per core first, the cores taken round-robin over the
 *            packages and, within a package, over its NUMA nodes; a core's
 *            second PU only after every core has one worker, and so on.
 *   compact  hwloc's logical order: every PU of a core, then the next core.
 *   scatter  round-robin over packages, then over the NUMA nodes of a
 *            package, each node taking its PUs cores first: every package and
 *            node gets the same number of workers (as far as it has PUs), even
 *            where that puts a worker on a busy core's sibling while another
 *            node still has a free core.  On a machine whose packages and
 *            nodes are alike it gives the same order as cores.
 *   none     nothing is bound; the scheduler places the workers.
 *
 * A worker's PU does not depend on P: worker i of a pool of any size gets
 * the same PU, so that the P of one collection is the first P PUs of the
 * order.  Worker i >= nPU wraps around (order[i mod nPU]).
 * GCS_TOPO_PLACE_DEFAULT is cores for these calls; the collector's options
 * read it as "decided by pin_workers" (gc.h). */
typedef enum gcs_topo_placement {
    GCS_TOPO_PLACE_DEFAULT = 0,
    GCS_TOPO_PLACE_CORES = 1,
    GCS_TOPO_PLACE_COMPACT = 2,
    GCS_TOPO_PLACE_SCATTER = 3,
    GCS_TOPO_PLACE_NONE = 4,
} gcs_topo_placement;

/* "cores", "compact", "scatter", "none" (DEFAULT: "cores"). */
GCS_API const char *gcs_topo_placement_name(gcs_topo_placement p);
/* Parses one of those names; -1 with err naming the four otherwise. */
GCS_API int gcs_topo_placement_parse(const char *s, gcs_topo_placement *out, gcs_err *err);

typedef struct gcs_topo_pu {
    int os_index;         /* OS CPU number; -1: not bound (policy none) */
    int logical_index;    /* hwloc logical index L#, -1 when not bound */
    int core;             /* hwloc logical index of its core (-1: none, or not bound) */
    int package;          /* of its package (-1: none, or not bound) */
    int node;             /* gcs_topo node id holding the CPU (-1: not bound) */
    int smt;              /* 0 for the first PU of its core, 1 for the second, ... */
} gcs_topo_pu;

/* The PU of workers 0..nworkers-1 under policy p, into out[0..nworkers).
 * Policy none fills every entry with -1.  Works on synthetic topologies
 * (it only reads the topology).  0, or -1 with err set (nworkers < 0, out
 * of memory). */
GCS_API int gcs_topo_place(const gcs_topo *t, gcs_topo_placement p, int nworkers, gcs_topo_pu *out,
                           gcs_err *err);
/* hwloc's logical index of OS CPU cpu; -1 if the topology has no such CPU. */
GCS_API int gcs_topo_cpu_logical(const gcs_topo *t, int cpu);

#endif
