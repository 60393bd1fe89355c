/* profile_topology.c -- the machine profile's nodes and caches, copied from
 * the hwloc topology (gcs_calibrate_fill_profile).
 *
 * It lives in calibrate, not in microbench/topology.c: making a profile is
 * calibrate's job, and the topology code measures and pins without knowing
 * what a profile is, so microbench/ stays below the profile's users.  Calls
 * topology.h's public accessors and profile.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/calibrate.h"
#include "gcscale/topology.h"

int gcs_calibrate_fill_profile(const gcs_topo *t, gcs_profile *p, gcs_err *err)
{
    int nn = gcs_topo_nnodes(t);
    if (p->nnodes != nn) {
        gcs_err_set(err, "profile has %d nodes, topology %d", p->nnodes, nn);
        return -1;
    }
    for (int i = 0; i < nn; i++) {
        gcs_profile_node *pn = &p->nodes[i];
        const gcs_topo_node *tn = gcs_topo_node_at(t, i);
        free(pn->cpus);
        pn->id = tn->id;
        pn->mem_bytes = tn->mem_bytes;
        pn->ncpus = tn->ncpus;
        pn->cpus = calloc(tn->ncpus > 0 ? (size_t)tn->ncpus : 1, sizeof *pn->cpus);
        if (!pn->cpus) {
            pn->ncpus = 0;
            gcs_err_set(err, "profile: out of memory");
            return -1;
        }
        memcpy(pn->cpus, tn->cpus, (size_t)tn->ncpus * sizeof *pn->cpus);
    }
    for (int i = 0; i < p->ncaches; i++)
        free(p->caches[i].cpus);
    free(p->caches);
    p->caches = NULL;
    p->ncaches = 0;
    for (int i = 0; i < gcs_topo_ncaches(t); i++) {
        const gcs_topo_cache *tc = gcs_topo_cache_at(t, i);
        gcs_profile_cache pc = {.level = tc->level, .size_bytes = tc->size_bytes,
                                .line_bytes = tc->line_bytes, .ways = tc->ways,
                                .ncpus = tc->ncpus, .cpus = tc->cpus};
        snprintf(pc.type, sizeof pc.type, "%s", tc->type);
        if (gcs_profile_add_cache(p, &pc) < 0) {
            gcs_err_set(err, "profile: out of memory");
            return -1;
        }
    }
    return 0;
}
