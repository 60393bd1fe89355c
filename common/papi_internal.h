/* papi_internal.h -- PAPI through dlopen (common/papi.c), for the files
 * that read hardware counters (gc/llc.c, microbench/counters.c) only. */
#ifndef GCSCALE_PAPI_INTERNAL_H
#define GCSCALE_PAPI_INTERNAL_H

#include <papi.h>
#include <stddef.h>

/* The PAPI calls gcscale makes, with papi.h's prototypes.  Valid once
 * _gcs_papi_load() has returned 0. */
struct _gcs_papi_api {
    int (*library_init)(int version);
    int (*is_initialized)(void);
    int (*thread_init)(unsigned long (*id_fn)(void));
    int (*unregister_thread)(void);
    char *(*strerror)(int code);
    int (*event_name_to_code)(const char *name, int *code);
    int (*create_eventset)(int *eventset);
    int (*add_event)(int eventset, int code);
    int (*start)(int eventset);
    int (*stop)(int eventset, long long *values);
    int (*cleanup_eventset)(int eventset);
    int (*destroy_eventset)(int *eventset);
    int (*get_component_index)(const char *name);
    const PAPI_component_info_t *(*get_component_info)(int cidx);
    int (*enum_event)(int *code, int modifier);
    int (*get_event_info)(int code, PAPI_event_info_t *info);
};
extern struct _gcs_papi_api _gcs_papi;

/* Loads the library once per process (thread-safe).  0: _gcs_papi is
 * usable; -1: it is not, and why (n bytes) says so in a phrase. */
int _gcs_papi_load(char *why, size_t n);

#endif
