/* papi.c -- PAPI, loaded the first time counters are asked for.
 *
 * Why not link it: libpapi brings libpfm4, whose event tables are some
 * 41 000 relocations, and the dynamic loader paid them (about 2.5 ms on the
 * development VM) at the start of every gcscale process, every test and
 * every `gcscale trace`, while only the collector's LLC-miss counters and
 * calibrate's counter probe use PAPI.  Loaded through dlopen, the cost
 * moves to those.  The trade-off: a machine without the library finds out
 * when counters are asked for, which is also where a machine without
 * counters finds out; both take the no-counter path with a reason.
 *
 * The library is named by the soname it was built against (GCS_PAPI_SONAME,
 * from the Makefile): another soname is another ABI, and papi.h's types and
 * PAPI_VER_CURRENT are that soname's. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "papi_internal.h"

#ifndef GCS_PAPI_SONAME
#define GCS_PAPI_SONAME "libpapi.so"
#endif

struct _gcs_papi_api _gcs_papi;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_why[256];

/* dlsym returns a data pointer; POSIX guarantees it converts to a function
 * pointer, which memcpy states without a cast C forbids. */
#define BIND(field, name)                                                                                  \
    do {                                                                                                   \
        void *sym = dlsym(h, name);                                                                        \
        if (!sym) {                                                                                        \
            snprintf(load_why, sizeof load_why, "%s lacks %s", GCS_PAPI_SONAME, name);                     \
            dlclose(h);                                                                                    \
            return;                                                                                        \
        }                                                                                                  \
        memcpy(&_gcs_papi.field, &sym, sizeof sym);                                                        \
    } while (0)

static void load(void)
{
    void *h = dlopen(GCS_PAPI_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_why, sizeof load_why, "cannot load %s (%s)", GCS_PAPI_SONAME, e ? e : "dlopen failed");
        return;
    }
    BIND(library_init, "PAPI_library_init");
    BIND(is_initialized, "PAPI_is_initialized");
    BIND(thread_init, "PAPI_thread_init");
    BIND(unregister_thread, "PAPI_unregister_thread");
    BIND(strerror, "PAPI_strerror");
    BIND(event_name_to_code, "PAPI_event_name_to_code");
    BIND(create_eventset, "PAPI_create_eventset");
    BIND(add_event, "PAPI_add_event");
    BIND(start, "PAPI_start");
    BIND(stop, "PAPI_stop");
    BIND(cleanup_eventset, "PAPI_cleanup_eventset");
    BIND(destroy_eventset, "PAPI_destroy_eventset");
    BIND(get_component_index, "PAPI_get_component_index");
    BIND(get_component_info, "PAPI_get_component_info");
    BIND(enum_event, "PAPI_enum_event");
    BIND(get_event_info, "PAPI_get_event_info");
    loaded = 1; /* the handle stays open for the life of the process */
}

int _gcs_papi_load(char *why, size_t n)
{
    pthread_once(&load_once, load);
    if (!loaded && why && n)
        snprintf(why, n, "%s", load_why);
    return loaded ? 0 : -1;
}
