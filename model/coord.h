/* coord.h -- model/ internal: the coordination terms for gcs_model_predict
 * (coord.c).  Not installed. */
#ifndef GCSCALE_MODEL_COORD_H
#define GCSCALE_MODEL_COORD_H

#include "gcscale/model.h"

/* The per-worker coordination times at P = threads (*at_p) and at P = 1
 * (*serial, the reference of the speedup) when opts->coord is on and the
 * profile has gc_coord: returns 1.  Otherwise both are zero and it returns
 * 0.  The search term's steal count is collector_steals
 * (_gcs_model_collector_steals, below). */
int _gcs_model_coord(const gcs_profile *prof, const gcs_model_heap *heap, int threads, double collector_steals,
                     const gcs_model_opts *opts, gcs_model_coord *at_p, gcs_model_coord *serial);

/* The collector's own steal count with P workers, the count the terms
 * that follow the collector's steals use (coordination, the segments of
 * sharing.c), not the paper's N_S of the extra misses: the heap's
 * simulated count where opts->steal_sim and inspection simulated P
 * (steals.c), else the fitted one (below). */
double _gcs_model_collector_steals(const gcs_profile *prof, const gcs_model_heap *heap, int threads,
                                   double model_steals, const gcs_model_opts *opts);
/* The same from calibrate's gc_steals fit where the profile has it, else
 * model_steals; with opts->parallelism_bound, for at most T1/Tinf - 1
 * thieves.  The steal work's count: its price was calibrated with it. */
double _gcs_model_fitted_steals(const gcs_profile *prof, const gcs_model_heap *heap, int threads,
                                double model_steals, const gcs_model_opts *opts);

#endif
