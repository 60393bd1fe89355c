/* internal.h -- what every library file may use and no user of the library sees.
 *
 * This header is not installed.  Public API lives in include/gcscale/ and is
 * marked GCS_API (include/gcscale/common.h); functions that one folder calls
 * in another but that are not part of that API carry the `_gcs_` prefix and
 * are declared in the owning folder's *_internal.h.  The library is built
 * with -fvisibility=hidden, so only GCS_API symbols leave libgcscale.so.
 */
#ifndef GCSCALE_INTERNAL_H
#define GCSCALE_INTERNAL_H

#include <stdio.h>
#include <stdlib.h>

/* ---- invariants -----------------------------------------------------------
 * gcs_assert_internal(cond) states an invariant of the library's own code
 * (not a check of user input: those return an error).  It is compiled in
 * when GCS_ASSERT is defined, which the Makefile does for the sanitizer
 * builds (make check-sanitize, SAN=...), and out of release builds, so the
 * mark loop pays nothing for it.  The condition is not evaluated in release
 * builds: it must have no side effects. */
#if defined(GCS_ASSERT) && GCS_ASSERT
#define gcs_assert_internal(cond)                                              \
    ((cond) ? (void)0 : _gcs_assert_fail(#cond, __FILE__, __LINE__, __func__))
#define GCS_ASSERT_ON 1
#else
#define gcs_assert_internal(cond) ((void)0)
#define GCS_ASSERT_ON 0
#endif

__attribute__((noreturn, cold)) static inline void
_gcs_assert_fail(const char *cond, const char *file, int line, const char *func)
{
    fprintf(stderr, "gcscale: internal assertion failed: %s (%s:%d, %s)\n", cond, file,
            line, func);
    fflush(stderr);
    abort();
}

/* ---- the record of where workers ran (pumap.c) ------------------------------
 * Sets obj's "placement" (the policy's name, topology.h), "pu_map" (the OS
 * CPU of worker 0..n-1, -1 for an unbound worker) and "pu_map_logical"
 * (hwloc's logical index L#, -1 unbound): the keys every JSON result that
 * ran pinned threads carries, written by one function so that they read
 * alike everywhere (docs/collector.md, "Worker placement"). */
typedef struct json_t json_t;
void _gcs_json_set_pu_map(json_t *obj, const char *placement, const int *os, const int *logical, int n);

/* ---- huge pages (hugemem.c) -------------------------------------------------
 * _gcs_huge_alloc: memory for an array read or written at random, 2 MiB
 * aligned and on transparent huge pages where the kernel offers them (malloc
 * below 2 MiB); untouched, like malloc's; free() releases it.
 * _gcs_hugepages: asks for huge pages for [p, p + len) of memory already
 * allocated (a hint: nothing when they are off, or for less than 2 MiB),
 * before it is first written. */
void *_gcs_huge_alloc(size_t bytes);
void _gcs_hugepages(void *p, size_t len);
/* Has the kernel back the whole pages of [p, p + len) now, in one call,
 * rather than at one page fault per 4 KiB on their first writes. */
void _gcs_prefault(void *p, size_t len);

#endif
