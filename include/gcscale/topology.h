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

#endif
