/* fakecpus.c -- LD_PRELOAD shim: sysconf(_SC_NPROCESSORS_ONLN) returns
 * $FAKE_NCPUS, so that a test can make this host look larger than it is
 * (tests/cli/test_calibrate.sh: a synthetic topology with fewer CPUs than
 * the host).  Everything else goes to the real sysconf. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

long sysconf(int name)
{
    static long (*real_sysconf)(int);
    if (!real_sysconf)
        real_sysconf = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
    const char *fake = getenv("FAKE_NCPUS");
    if (name == _SC_NPROCESSORS_ONLN && fake)
        return atol(fake);
    return real_sysconf(name);
}
