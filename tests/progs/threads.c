/* threads.c -- a small multi-threaded program for tests/cli/test_trace.sh,
 * which runs it under `gcscale trace` and checks the trace against what the
 * program knows about itself.  Not linked with gcscale; the test compiles it.
 *
 *   threads [NTHREADS [SPIN_MS [HOLD_MS [EXIT_CODE]]]]   (defaults 3 100 300 0)
 *
 * The main thread takes a mutex and starts NTHREADS workers named "spin-I"
 * (pthread_setname_np, after creation).  Each worker spins for SPIN_MS of its
 * own CPU time, then blocks on the mutex (a futex wait) until main, after
 * sleeping HOLD_MS (nanosleep: not a futex), releases it; then the workers
 * meet at a barrier and exit.  Main joins them.  Every thread prints
 *     cpu TID NAME NS
 * with its CPU time (CLOCK_THREAD_CPUTIME_ID) just before it ends, and main
 * exits with EXIT_CODE. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
static long spin_ms = 100;
static volatile unsigned long sink;

static long long cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void report(const char *name)
{
    long long ns = cpu_ns();
    pthread_mutex_lock(&print_lock);
    printf("cpu %ld %s %lld\n", (long)syscall(SYS_gettid), name, ns);
    fflush(stdout);
    pthread_mutex_unlock(&print_lock);
}

static void *worker(void *arg)
{
    long i = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "spin-%ld", i);
    pthread_setname_np(pthread_self(), name);
    while (cpu_ns() < spin_ms * 1000000LL)
        for (int k = 0; k < 10000; k++)
            sink += (unsigned long)k * (unsigned long)i;
    pthread_mutex_lock(&lock);   /* main holds it: a futex wait */
    sink++;
    pthread_mutex_unlock(&lock);
    pthread_barrier_wait(&barrier);
    report(name);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 3;
    spin_ms = argc > 2 ? atol(argv[2]) : 100;
    long hold_ms = argc > 3 ? atol(argv[3]) : 300;
    int code = argc > 4 ? atoi(argv[4]) : 0;
    if (n < 1 || n > 64 || spin_ms < 0 || hold_ms < 0)
        return 2;
    pthread_t th[64];
    pthread_barrier_init(&barrier, NULL, (unsigned)n);
    pthread_mutex_lock(&lock);
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
            return 2;
    struct timespec hold = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&hold, NULL);
    pthread_mutex_unlock(&lock);
    for (long i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    report("main");
    return code;
}
