/* pingpong.c -- two threads hand a byte back and forth through two pipes,
 * ROUNDS times: every round is two wakeups and two to four context
 * switches, and almost nothing else.  Under `gcscale trace` the difference
 * in run time divided by the records the tracer read is the kernel's cost
 * per traced event (docs/schedtrace.md, "Overhead").
 *
 *   pingpong [ROUNDS]      (default 100000); prints "rounds R seconds S" */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds = 100000;

static void *echo(void *arg)
{
    (void)arg;
    char c;
    for (long i = 0; i < rounds; i++)
        if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
            exit(2);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atol(argv[1]);
    if (rounds < 1 || pipe(ab) < 0 || pipe(ba) < 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, echo, NULL) != 0)
        return 2;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    char c = 'x';
    for (long i = 0; i < rounds; i++)
        if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
            return 2;
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    printf("rounds %ld seconds %.6f\n", rounds, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
