/* gcscale.h -- umbrella header of libgcscale.
 *
 * libgcscale measures a machine's memory system (microbench, calibrate),
 * runs an instrumented parallel mark-sweep collector (gc) and predicts how
 * that collector scales on a given heap (model).  Each part has its own
 * header below; this one pulls in the ones that exist and fixes the version.
 */
#ifndef GCSCALE_GCSCALE_H
#define GCSCALE_GCSCALE_H

#define GCSCALE_VERSION "0.1.0"

#include "gcscale/common.h"
#include "gcscale/topology.h"
#include "gcscale/microbench.h"
#include "gcscale/profile.h"
#include "gcscale/occfit.h"
#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/snapshot.h"
#include "gcscale/shapes.h"

#endif
