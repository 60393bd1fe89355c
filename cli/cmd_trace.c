/* cmd_trace.c -- gcscale trace: thread-state traces of unmodified programs
 * from the Linux scheduler's tracepoints.
 *
 *   gcscale trace [-o FILE] [--class NAME=PATTERN ...] [--runtime R] [--summary] -- PROGRAM [ARGS...]
 *   gcscale trace [-o FILE] [--class NAME=PATTERN ...] [--runtime R] [--summary] --pid PID
 *
 * The library (schedtrace.h) does the tracing; this file handles options,
 * signals, the exit status and the report.  docs/schedtrace.md. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "gcscale/schedtrace.h"

static const char *const cmd = "trace";

#define DEFAULT_OUTPUT "gcscale.trace"
#define MAX_CLASSES 64
#define MAX_PRESET 64

static void print_help(FILE *fp)
{
    fprintf(fp,
            "usage: gcscale trace [options] [--] PROGRAM [ARGS...]\n"
            "       gcscale trace [options] --pid PID\n"
            "\n"
            "Traces the threads of an unmodified program through perf's context-switch\n"
            "records and the Linux scheduler's tracepoints (wakeups, fork, exit, futex\n"
            "system calls) and writes a thread-state trace (docs/trace-format.md) for\n"
            "'gcscale bottle' and 'gcscale stack'.  Each thread is running (on a CPU),\n"
            "blocked-lock (asleep in a futex wait: mutexes, condition variables,\n"
            "barriers, joins), blocked-other (preempted, or asleep for any other reason)\n"
            "or exited.  Processes started by the traced one are traced too.  Needs\n"
            "root (or CAP_PERFMON with access to tracefs); mounts tracefs at\n"
            "/sys/kernel/tracing when it is not mounted.\n"
            "\n"
            "PROGRAM is started once tracing is on and traced until it exits; the exit\n"
            "status is the program's (128+N if signal N killed it).  With --pid, the\n"
            "process is traced until it exits or Ctrl-C, and the exit status is 0.\n"
            "Failures to trace exit 2 with one line on stderr.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE        the trace file (default " DEFAULT_OUTPUT "; crash-safe)\n"
            "  -p, --pid PID            attach to a running process and all its threads\n"
            "  -c, --class NAME=PATTERN threads whose name matches the glob PATTERN get\n"
            "                           class NAME (repeatable, first match wins); the\n"
            "                           others: \"main\" for the first thread, \"worker\"\n"
            "                           for the rest\n"
            "  -r, --runtime R          class the threads of managed runtime R by the names\n"
            "                           it gives them: hotspot (gc, gc-conc, jit, vm,\n"
            "                           runtime, main, and mutator for the application's\n"
            "                           threads), node, go (these name no roles: a note\n"
            "                           says so), or none; default: from the program's\n"
            "                           name (java, node); --class rules come first\n"
            "  -s, --summary            print a table of every thread's times on stderr\n"
            "  -b, --buffer-size SIZE   ring buffer per CPU (default 1M)\n"
            "  -q, --quiet              no report line on stderr\n"
            "  -h, --help               this text\n"
            "\n"
            "examples: gcscale trace -o xz.trace --class worker='xz*' -- xz -T2 -k big.tar\n"
            "          gcscale trace -o j2.trace -- java -XX:+UseParallelGC App 2\n");
}

/* Signals.  --pid: SIGINT/SIGTERM/SIGHUP stop the trace and write the file.
 * A command: the terminal sends SIGINT to the program too, so a signal from
 * the kernel (a key) only waits for the program to exit; one sent to
 * gcscale by a process (kill) is passed on to the program. */
static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t attach_mode;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (attach_mode) {
        stop_flag = 1;
        return;
    }
    if (child_pid > 0 && (si->si_code == SI_USER || si->si_code == SI_QUEUE))
        kill((pid_t)child_pid, sig);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: poll returns and the loop looks */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static void restore_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

static char *join_args(char **argv, int argc)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

static double sec(uint64_t ns) { return (double)ns / 1e9; }

static void print_summary(gcs_schedtrace_states *s)
{
    static const char *const cols[] = {"tid",        "name",       "class",      "running_s", "runnable_s",
                                       "futex_s",    "sleeping_s", "switches_in", "futex_waits", "exited"};
    gcs_table *t = gcs_table_new("threads", 10, cols);
    size_t n;
    const gcs_schedtrace_thread *th = gcs_schedtrace_states_threads(s, &n);
    for (size_t i = 0; i < n; i++) {
        gcs_table_add_int(t, th[i].tid);
        gcs_table_add_str(t, th[i].name);
        gcs_table_add_str(t, th[i].cls);
        gcs_table_add_num(t, sec(th[i].ns[GCS_SCHEDTRACE_RUNNING]), 3);
        gcs_table_add_num(t, sec(th[i].ns[GCS_SCHEDTRACE_RUNNABLE]), 3);
        gcs_table_add_num(t, sec(th[i].ns[GCS_SCHEDTRACE_FUTEX]), 3);
        gcs_table_add_num(t, sec(th[i].ns[GCS_SCHEDTRACE_SLEEPING]), 3);
        gcs_table_add_int(t, (long long)th[i].switches_in);
        gcs_table_add_int(t, (long long)th[i].futex_waits);
        gcs_table_add_str(t, th[i].state == GCS_SCHEDTRACE_EXITED ? "yes" : "no");
    }
    gcs_table_print(t, stderr, GCS_FORMAT_TEXT);
    gcs_table_free(t);
}

int cmd_trace(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},     {"pid", required_argument, NULL, 'p'},
        {"class", required_argument, NULL, 'c'},      {"summary", no_argument, NULL, 's'},
        {"buffer-size", required_argument, NULL, 'b'}, {"quiet", no_argument, NULL, 'q'},
        {"runtime", required_argument, NULL, 'r'},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = DEFAULT_OUTPUT;
    long pid = 0;
    int summary = 0, quiet = 0;
    gcs_schedtrace_class classes[MAX_CLASSES + MAX_PRESET];
    size_t nclasses = 0;
    const char *runtime = NULL; /* NULL: detect; "none": no preset */
    gcs_schedtrace_options topts = {0};
    gcs_err err;
    int c;
    /* '+': options end at PROGRAM, whose own options are not ours. */
    while ((c = getopt_long(argc, argv, "+:o:p:c:r:sb:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg)
                cli_usage_error(cmd, "-o: empty file name");
            out = optarg;
            break;
        case 'p':
            pid = cli_parse_long(cmd, "--pid", optarg, 1, 0x7fffffff);
            break;
        case 'c':
            if (nclasses == MAX_CLASSES)
                cli_usage_error(cmd, "--class: at most %d rules", MAX_CLASSES);
            if (gcs_schedtrace_class_parse(optarg, &classes[nclasses], &err) < 0)
                cli_usage_error(cmd, "--class: %s", err.msg);
            nclasses++;
            break;
        case 'r':
            runtime = optarg;
            break;
        case 's':
            summary = 1;
            break;
        case 'b': {
            uint64_t b = cli_parse_size(cmd, "--buffer-size", optarg);
            if (b < 4096 || b > (1ull << 30))
                cli_usage_error(cmd, "--buffer-size: %s is outside 4K..1G", optarg);
            topts.buffer_bytes = (size_t)b;
            break;
        }
        case 'q':
            quiet = 1;
            break;
        case 'h':
            print_help(stdout);
            return 0;
        default:
            cli_bad_option(cmd, argv);
        }
    }
    int nprog = argc - optind;
    if (pid && nprog > 0)
        cli_usage_error(cmd, "give either --pid or a PROGRAM, not both");
    if (!pid && nprog == 0)
        cli_usage_error(cmd, "no PROGRAM to run (gcscale trace -- PROGRAM [ARGS...]) and no --pid");
    /* The file is written at the end: make sure it can be before running
     * anything, rather than losing a long trace. */
    cli_check_output(cmd, "-o", out);
    if (pid) {
        /* Checked before anything is opened, so that a typo is a usage error. */
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            cli_usage_error(cmd, "--pid: no process %ld", pid);
        if ((pid_t)pid == getpid())
            cli_usage_error(cmd, "--pid: %ld is gcscale itself", pid);
    }

    /* The runtime's class rules go after the user's (first match wins). */
    char pid_comm[32] = "";
    if (pid)
        gcs_schedtrace_proc_comm((pid_t)pid, pid_comm, sizeof pid_comm);
    if (!runtime) {
        char *pargv[2] = {pid_comm, NULL};
        runtime = gcs_schedtrace_runtime_detect(pid ? pargv : argv + optind);
    }
    if (runtime && strcmp(runtime, "none") != 0) {
        size_t np = 0;
        const char *note = NULL;
        if (gcs_schedtrace_runtime_classes(runtime, classes + nclasses, MAX_PRESET, &np, &note, &err) < 0)
            cli_usage_error(cmd, "--runtime: %s", err.msg);
        nclasses += np;
        if (note && !quiet)
            fprintf(stderr, "gcscale trace: note: --runtime %s: %s\n", runtime, note);
    }

    gcs_schedtrace *t = gcs_schedtrace_open(&topts, &err);
    if (!t)
        cli_fail(cmd, &err);
    gcs_schedtrace_states *s = gcs_schedtrace_states_new(&err);
    if (!s)
        cli_fail(cmd, &err);

    char *what;
    int status = -1, rc;
    attach_mode = pid != 0;
    install_signals();
    if (pid) {
        char buf[128];
        snprintf(buf, sizeof buf, "--pid %ld (%s)", pid, pid_comm[0] ? pid_comm : "?");
        what = strdup(buf);
        rc = gcs_schedtrace_run_pid(t, s, (pid_t)pid, &stop_flag, &err);
    } else {
        what = join_args(argv + optind, nprog);
        pid_t child;
        rc = gcs_schedtrace_start_command(t, s, argv + optind, &child, &err);
        if (rc == 0) {
            child_pid = child;
            rc = gcs_schedtrace_wait_command(t, child, &stop_flag, &status, &err);
        }
    }
    if (rc < 0) {
        gcs_schedtrace_close(t);
        cli_fail(cmd, &err);
    }
    if (gcs_schedtrace_stop(t, classes, nclasses, &err) < 0)
        cli_fail(cmd, &err);
    restore_signals();

    const gcs_schedtrace_info *info = gcs_schedtrace_get_info(t);
    size_t skipped = 0;
    if (gcs_schedtrace_write(s, out, what, info->end_ns, &skipped, &err) < 0)
        cli_fail(cmd, &err);
    if (summary)
        print_summary(s);
    size_t nthreads, nchanges;
    gcs_schedtrace_states_threads(s, &nthreads);
    gcs_schedtrace_states_changes(s, &nchanges);
    /* The tracer's own CPU time: what it took from the machine (the rest of
     * the overhead is the kernel's, inside the traced and other threads). */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double self_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                      (double)ru.ru_stime.tv_usec / 1e6;
    if (!quiet)
        fprintf(stderr,
                "gcscale trace: wrote %s: %zu thread%s, %zu state changes, %.3f s; %llu records read on %d CPUs, "
                "%llu lost; tracer CPU %.3f s%s%s\n",
                out, nthreads - skipped, nthreads - skipped == 1 ? "" : "s", nchanges, sec(info->end_ns - info->start_ns),
                (unsigned long long)info->samples, info->ncpus, (unsigned long long)info->lost, self_cpu,
                runtime && strcmp(runtime, "none") != 0 ? "; classes: --runtime " : "",
                runtime && strcmp(runtime, "none") != 0 ? runtime : "");
    if (info->lost)
        fprintf(stderr,
                "gcscale trace: warning: the kernel dropped %llu records (ring buffer full): the states in %s "
                "are incomplete; try a larger --buffer-size\n",
                (unsigned long long)info->lost, out);
    if (skipped)
        fprintf(stderr, "gcscale trace: warning: %zu threads left out because the kernel reused their ids\n",
                skipped);
    free(what);
    gcs_schedtrace_states_free(s);
    gcs_schedtrace_close_detached(t);

    if (pid)
        return 0;
    if (status == -1) { /* stopped before the program ended: wait for it */
        while (waitpid((pid_t)child_pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return CLI_EXIT_USAGE;
}
