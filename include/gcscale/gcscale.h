/* gcscale.h -- umbrella header of libgcscale.
 *
 * libgcscale measures a machine's memory system (microbench, calibrate),
 * runs an instrumented parallel mark-sweep collector (gc) and predicts how
 * that collector scales on a given heap (model, predict); the collector can
 * pick its own thread count from that prediction (adaptive).  The paper's
 * workloads (workload) exercise it, traces of thread states (trace,
 * schedtrace) give speedup stacks and bottle graphs (accounting), and the
 * validation report (validate) checks the prediction against the collector.
 * Each part has its own header below; this one pulls them all in (the
 * version, GCSCALE_VERSION, is in common.h).
 */
#ifndef GCSCALE_GCSCALE_H
#define GCSCALE_GCSCALE_H

#include "gcscale/common.h"
#include "gcscale/topology.h"
#include "gcscale/microbench.h"
#include "gcscale/profile.h"
#include "gcscale/occfit.h"
#include "gcscale/calibrate.h"
#include "gcscale/gc.h"
#include "gcscale/snapshot.h"
#include "gcscale/heapdump.h"
#include "gcscale/shapes.h"
#include "gcscale/gcbench_result.h"
#include "gcscale/gcbench.h"
#include "gcscale/model.h"
#include "gcscale/cachesim.h"
#include "gcscale/inspect.h"
#include "gcscale/synth.h"
#include "gcscale/plot.h"
#include "gcscale/predict.h"
#include "gcscale/adaptive.h"
#include "gcscale/workload.h"
#include "gcscale/trace.h"
#include "gcscale/accounting.h"
#include "gcscale/schedtrace.h"
#include "gcscale/validate.h"
#include "gcscale/corpus.h"

#endif
