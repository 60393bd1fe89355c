/* hugemem.c -- memory on transparent huge pages, for arrays read or written
 * at random (the model's span and replay arrays, a snapshot's filled columns,
 * the importers' scattered stores and id map).
 *
 * With 4 KiB pages nearly every random access to a large array is also a
 * TLB miss, whose page walk costs more than the miss itself in a virtual
 * machine (nested paging), and filling a fresh array takes one page fault
 * per 4 KiB instead of one per 2 MiB.  Where transparent huge pages are
 * "madvise" (Debian's default) they are asked for here; where they are off,
 * nothing changes but speed.  Arrays under 2 MiB are left to malloc. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "internal.h"

#define HUGE_BYTES ((size_t)2 << 20)

void *_gcs_huge_alloc(size_t bytes)
{
    if (bytes < HUGE_BYTES)
        return malloc(bytes ? bytes : 1);
    size_t size = (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
    void *p = aligned_alloc(HUGE_BYTES, size);
#ifdef MADV_HUGEPAGE
    if (p)
        madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

void _gcs_hugepages(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t page = 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);
    if (len >= HUGE_BYTES && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}

void _gcs_prefault(void *p, size_t len)
{
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
    const uintptr_t page = 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* older kernels: EINVAL, nothing done */
}
