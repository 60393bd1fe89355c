/* par.c -- the workers of the importers' parallel passes (HPROF's second
 * pass, hprof_pass2.c): a count of threads and a run of n workers; and
 * huge pages for the arrays those passes write at random.
 *
 * Plain POSIX threads, not OpenMP: a worker of the HPROF second pass reads
 * and parses its own part of the dump, which OpenMP would do as well, but
 * the ThreadSanitizer build has no OpenMP (Makefile: libgomp is not
 * instrumented), and the threads are what most needs checking here; with
 * pthreads the same code runs threaded in every build, TSan's included.
 * OpenMP's thread count is still honoured, so that OMP_NUM_THREADS limits
 * every data-parallel pass of gcscale alike. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "heapdump_internal.h"

#define PAR_MAX 64

static int threads_set; /* _gcs_heapdump_set_threads; 0: the default */

void _gcs_heapdump_set_threads(int n) { __atomic_store_n(&threads_set, n < 0 ? 0 : n, __ATOMIC_RELAXED); }

int _gcs_heapdump_threads(void)
{
    int n = __atomic_load_n(&threads_set, __ATOMIC_RELAXED);
    if (n <= 0) {
#ifdef _OPENMP
        n = omp_get_max_threads();
#else
        cpu_set_t set;
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
    }
    return n < 1 ? 1 : n > PAR_MAX ? PAR_MAX : n;
}

typedef struct par_arg {
    void (*fn)(void *arg, int t);
    void *arg;
    int t;
} par_arg;

static void *par_main(void *p)
{
    par_arg *a = p;
    a->fn(a->arg, a->t);
    return NULL;
}

int _gcs_par_run(int n, void (*fn)(void *arg, int t), void *arg)
{
    if (n > PAR_MAX)
        n = PAR_MAX;
    pthread_t tid[PAR_MAX];
    par_arg a[PAR_MAX];
    int started = 0;
    for (int t = 1; t < n; t++) {
        a[started] = (par_arg){fn, arg, started + 1};
        if (pthread_create(&tid[started], NULL, par_main, &a[started]) != 0)
            break; /* the workers that run take the rest of the work */
        started++;
    }
    fn(arg, 0);
    for (int k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    return started + 1;
}
