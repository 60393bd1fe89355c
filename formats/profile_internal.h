/* profile_internal.h -- formats/ internal: what the machine profile
 * document's files share -- profile.c (the document in memory),
 * profile_load.c (the JSON reader: the document's shape),
 * profile_validate.c (the value rules) and profile_save.c (the writer):
 * the functions one file calls in another (_gcs_profile_), under the file
 * that defines them, their comments at their definitions; and, fenced by
 * GCS_PROFILE_FILES, which those four files define before they include
 * this header, the limits and the key names that the reader, the rules and
 * the writer spell alike, under short names that no other reader (a test,
 * say) should meet.  The profile's other files (profile_print.c,
 * profile_quality.c, profile_path.c, profile_llc.c) use the public API
 * alone.  Not installed.
 *
 * A new key of the document touches: its field in include/gcscale/profile.h;
 * profile_load.c (its name in modelled_keys, its reading in read_optional);
 * profile_validate.c (its rule in gcs_profile_validate); profile_save.c (its
 * writing in gcs_profile_to_json); profile_print.c when `gcscale machine
 * show` prints it; and its row in docs/machine-profile.md, "Keys".  Each of
 * those is one pass over all the keys in a fixed order (the first rule
 * that fails is the message; the writer's order is the saved file's), so a
 * key's reading, rule and writing stay with the other keys' and not
 * together. */
#ifndef GCSCALE_FORMATS_PROFILE_INTERNAL_H
#define GCSCALE_FORMATS_PROFILE_INTERNAL_H

#include <jansson.h>

#include "gcscale/profile.h"
#include "../common/internal.h"

/* ---- profile.c ---------------------------------------------------------------------- */

#if GCS_ASSERT_ON
int _gcs_profile_shape_ok(const gcs_profile *p);
#endif

/* ---- profile_load.c ----------------------------------------------------------------- */

int _gcs_profile_is_modelled_key(const char *key);
const char *_gcs_profile_json_type_name(const json_t *v);
int _gcs_profile_int_value(const json_t *v, const char *key, long long min, long long max, long long *out,
                           gcs_err *err);
int _gcs_profile_number_value(const json_t *v, const char *key, double *out, gcs_err *err);

/* ---- profile_validate.c ------------------------------------------------------------- */

int _gcs_profile_check_dependent_load(const double *bytes, const double *ns, int n, gcs_err *err);

/* ---- private: the names the four files spell alike ---------------------------------- */

#ifdef GCS_PROFILE_FILES

/* Past these a value is a unit mistake (seconds written as ns, bytes as GB)
 * rather than a measurement: no memory access takes a second, no memory node
 * delivers a petabyte per second. */
#define PLAUSIBLE_NS_MAX 1e9
#define PLAUSIBLE_GBS_MAX 1e6
/* Bounds the nnodes x nnodes matrices a document can make us allocate. */
#define MAX_NODES 4096

/* The members of "latency_ns" and "occupancy_ns", and of the latency with
 * page walks, by gcs_access and gcs_pages. */
static const char *const access_keys[GCS_ACCESS_COUNT] = {"read", "rw"};
static const char *const pages_keys[GCS_PAGES_COUNT] = {"4k", "huge"};

/* "gc_coord" (profile.h, gcs_profile_coord): the laws' coefficients by name,
 * so that an error names the key. */
static const char *const coord_laws[] = {"wake_ns", "tail_ns", "idle_ns"};

static inline double *_gcs_profile_coord_member(gcs_profile_coord *c, int law, int b)
{
    double *v[3][2] = {{&c->wake_a, &c->wake_b}, {&c->tail_a, &c->tail_b}, {&c->idle_a, &c->idle_b}};
    return v[law][b];
}

#endif /* GCS_PROFILE_FILES */

#endif
