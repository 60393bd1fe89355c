/* topology_internal.h -- what microbench/'s own files share of the topology
 * beyond topology.h (not installed). */
#ifndef GCSCALE_MICROBENCH_TOPOLOGY_INTERNAL_H
#define GCSCALE_MICROBENCH_TOPOLOGY_INTERNAL_H

#include <hwloc.h>

#include "gcscale/topology.h"

/* The loaded hwloc topology (placement.c reads its cores and packages,
 * which gcs_topo does not copy out). */
hwloc_topology_t _gcs_topo_hwloc(const gcs_topo *t);

#endif
