/* progress.c -- progress of long runs on stderr.
 *
 * On a terminal one line is redrawn in place ("[ 42%] occupancy rw, about
 * 12 s left"); otherwise (CI logs, pipes) every step gets one plain line so
 * logs stay readable.  Time left is extrapolated from the work done so far,
 * in the caller's units of expected work per step. */
#include <stdio.h>
#include <unistd.h>

#include "gcscale/common.h"

/* A live line is on the terminal (not yet ended by a newline). */
static int line_open;

void gcs_progress_init(gcs_progress *pr, double total_work, int quiet)
{
    pr->total_work = total_work > 0 ? total_work : 1;
    pr->done_work = 0;
    pr->start_ns = gcs_now_ns();
    pr->tty = isatty(STDERR_FILENO);
    pr->quiet = quiet;
}

static void print_line(gcs_progress *pr, const char *step)
{
    double elapsed = (double)(gcs_now_ns() - pr->start_ns) / 1e9;
    double fraction = pr->done_work / pr->total_work;
    if (fraction > 1)
        fraction = 1;
    char left[48] = "";
    if (fraction > 0.02)
        snprintf(left, sizeof left, ", about %.0f s left", elapsed / fraction - elapsed);
    if (pr->tty) {
        fprintf(stderr, "\r\033[K[%3.0f%%] %s%s", 100 * fraction, step, left);
        line_open = 1;
    } else
        fprintf(stderr, "[%3.0f%%] %s (%.1f s elapsed%s)\n", 100 * fraction, step, elapsed, left);
    fflush(stderr);
}

void gcs_progress_step(gcs_progress *pr, const char *step, double work_of_step)
{
    (void)work_of_step;
    if (!pr->quiet)
        print_line(pr, step);
}

void gcs_progress_done(gcs_progress *pr, double work_of_step)
{
    pr->done_work += work_of_step;
}

void gcs_progress_finish(gcs_progress *pr)
{
    if (pr->quiet)
        return;
    double elapsed = (double)(gcs_now_ns() - pr->start_ns) / 1e9;
    if (pr->tty)
        fprintf(stderr, "\r\033[K");
    fprintf(stderr, "[100%%] done in %.1f s\n", elapsed);
    line_open = 0;
}

void gcs_progress_end_line(void)
{
    if (line_open)
        fputc('\n', stderr);
    line_open = 0;
}
