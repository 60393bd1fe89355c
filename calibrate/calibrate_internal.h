/* calibrate_internal.h -- calibrate/ internal: what calibrate.c calls in the
 * other files of the folder.  Not installed (prefix _gcs_calibrate_). */
#ifndef GCSCALE_CALIBRATE_INTERNAL_H
#define GCSCALE_CALIBRATE_INTERNAL_H

#include <stdint.h>
#include "gcscale/calibrate.h"
#include "gcscale/topology.h"

/* The miss-overlap fit as the calibration's last step (overlap.c): sizes the
 * random heap from p's caches (not fitted, with a note, when p has none or
 * size_bytes, a chase size the user chose, is below that heap), fits
 * gc_miss_overlap into p and records the details under the profile's
 * calibration.gc_overlap -- a failed fit too, with its "error": the step is
 * optional and never fails the calibration.  Reports itself on pr. */
void _gcs_calibrate_overlap_step(gcs_profile *p, int quick, uint64_t size_bytes, gcs_progress *pr);

/* Its expected seconds on pr (0 when it will not fit): for a profile, or for
 * the topology whose caches the profile will get. */
double _gcs_calibrate_overlap_work(const gcs_profile *p, int quick, uint64_t size_bytes);
double _gcs_calibrate_overlap_work_topo(const gcs_topo *t, int quick, uint64_t size_bytes);

#endif
