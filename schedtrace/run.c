/* run.c -- what is traced: a command started for the purpose, or a running
 * process; threads that exist before the events are enabled come from /proc.
 *
 * The command is forked first and waits on a pipe; the events are enabled;
 * then the child is released and execs, so the trace holds the program from
 * its first instruction.  The end is seen through a pidfd (poll wakes at
 * once) where the kernel has pidfd_open, else by polling /proc. */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "schedtrace_internal.h"

static int read_small(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, n - 1);
    int e = errno;
    close(fd);
    if (got < 0) {
        errno = e;
        return -1;
    }
    buf[got] = '\0';
    return 0;
}

int gcs_schedtrace_proc_comm(pid_t tid, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)tid);
    if (read_small(path, buf, n) < 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* The state of thread tid of process pid as /proc shows it.  'R' cannot tell
 * running from runnable; it is taken as running. */
static gcs_schedtrace_tstate proc_state(pid_t pid, pid_t tid)
{
    char path[96], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    if (read_small(path, buf, sizeof buf) < 0)
        return GCS_SCHEDTRACE_SLEEPING;
    const char *rp = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    char st = rp && rp[1] == ' ' ? rp[2] : '?';
    if (st == 'R')
        return GCS_SCHEDTRACE_RUNNING;
    /* "NR arg0 arg1 ..." while blocked in a system call (needs ptrace access). */
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    if (read_small(path, buf, sizeof buf) == 0) {
        char *end;
        long nr = strtol(buf, &end, 10);
        if (end != buf) {
            unsigned long long a0 = 0, a1 = 0;
            int got = sscanf(end, " %llx %llx", &a0, &a1);
            if (nr == SYS_futex && got == 2 && gcs_schedtrace_futex_op_waits((int64_t)a1))
                return GCS_SCHEDTRACE_FUTEX;
#ifdef SYS_futex_waitv
            if (nr == SYS_futex_waitv)
                return GCS_SCHEDTRACE_FUTEX;
#endif
#ifdef SYS_futex_wait
            if (nr == SYS_futex_wait)
                return GCS_SCHEDTRACE_FUTEX;
#endif
        }
    }
    return GCS_SCHEDTRACE_SLEEPING;
}

static int add_thread(gcs_schedtrace_states *s, pid_t pid, pid_t tid, gcs_err *err)
{
    char name[32];
    if (gcs_schedtrace_proc_comm(tid, name, sizeof name) < 0)
        return 0; /* it ended meanwhile; its exit event was not for a followed thread */
    return gcs_schedtrace_states_add(s, tid, name, proc_state(pid, tid), gcs_now_ns(), err);
}

int gcs_schedtrace_follow_process(gcs_schedtrace *t, pid_t pid, gcs_err *err)
{
    gcs_schedtrace_states *s = _gcs_schedtrace_states_of(t);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) {
        gcs_err_set(err, "no process %d (%s)", (int)pid, strerror(errno));
        return -1;
    }
    /* The leader first: it is the "first" thread, of class main. */
    int rc = add_thread(s, pid, pid, err);
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);
        if (end == de->d_name || *end || tid <= 0 || tid == pid)
            continue;
        rc = add_thread(s, pid, (pid_t)tid, err);
    }
    closedir(d);
    return rc;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int gcs_schedtrace_start_command(gcs_schedtrace *t, gcs_schedtrace_states *s, char *const argv[], pid_t *pid_out,
                                 gcs_err *err)
{
    int go[2], fail[2];
    if (pipe2(go, O_CLOEXEC) < 0) {
        gcs_err_set(err, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(fail, O_CLOEXEC) < 0) {
        gcs_err_set(err, "pipe: %s", strerror(errno));
        close(go[0]);
        close(go[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        gcs_err_set(err, "fork: %s", strerror(errno));
        close(go[0]);
        close(go[1]);
        close(fail[0]);
        close(fail[1]);
        return -1;
    }
    if (pid == 0) {
        /* The child: wait until the tracer says go, then become the program. */
        char c;
        close(go[1]);
        close(fail[0]);
        ssize_t r;
        do
            r = read(go[0], &c, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1)
            _exit(127); /* the tracer gave up */
        execvp(argv[0], argv);
        int e = errno;
        if (write(fail[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(go[0]);
    close(fail[1]);
    int rc = gcs_schedtrace_enable(t, s, err);
    if (rc == 0)
        rc = gcs_schedtrace_follow_process(t, pid, err);
    if (rc == 0 && write(go[1], "g", 1) != 1) {
        gcs_err_set(err, "cannot start the program: %s", strerror(errno));
        rc = -1;
    }
    close(go[1]); /* on failure the child reads EOF and exits 127 */
    if (rc == 0) {
        /* EOF: the exec succeeded (the pipe closed on exec); an int: errno. */
        int e = 0;
        ssize_t r;
        do
            r = read(fail[0], &e, sizeof e);
        while (r < 0 && errno == EINTR);
        if (r == (ssize_t)sizeof e) {
            gcs_err_set(err, "cannot run '%s': %s", argv[0], strerror(e));
            rc = -1;
        }
    }
    close(fail[0]);
    if (rc < 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        return -1;
    }
    *pid_out = pid;
    return 0;
}

int gcs_schedtrace_wait_command(gcs_schedtrace *t, pid_t pid, volatile sig_atomic_t *stop, int *status,
                                gcs_err *err)
{
    int rc = 0;
    *status = -1;
    int pidfd = open_pidfd(pid);
    while (!*stop) {
        int ready = 0;
        if (gcs_schedtrace_poll(t, pidfd, &ready, err) < 0) {
            rc = -1;
            break;
        }
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            *status = st;
            break;
        }
        if (w < 0 && errno != EINTR) {
            gcs_err_set(err, "waitpid: %s", strerror(errno));
            rc = -1;
            break;
        }
    }
    if (pidfd >= 0)
        close(pidfd);
    return rc;
}

/* Whether process pid is over: gone, or a zombie waiting for its parent. */
static int process_over(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (read_small(path, buf, sizeof buf) < 0)
        return 1;
    const char *rp = strrchr(buf, ')');
    char st = rp && rp[1] == ' ' ? rp[2] : '?';
    return st == 'Z' || st == 'X';
}

int gcs_schedtrace_run_pid(gcs_schedtrace *t, gcs_schedtrace_states *s, pid_t pid, volatile sig_atomic_t *stop,
                           gcs_err *err)
{
    char path[64], buf[4096];
    if (pid <= 0) {
        gcs_err_set(err, "bad process id %d", (int)pid);
        return -1;
    }
    if (pid == getpid()) {
        gcs_err_set(err, "process %d is gcscale itself", (int)pid);
        return -1;
    }
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (read_small(path, buf, sizeof buf) < 0) {
        gcs_err_set(err, "no process %d", (int)pid);
        return -1;
    }
    const char *tg = strstr(buf, "\nTgid:");
    if (tg && atol(tg + 6) != pid) {
        gcs_err_set(err, "%d is a thread of process %ld: give the process id", (int)pid, atol(tg + 6));
        return -1;
    }
    if (process_over(pid)) {
        gcs_err_set(err, "process %d has already exited", (int)pid);
        return -1;
    }
    int pidfd = open_pidfd(pid);
    int rc = gcs_schedtrace_enable(t, s, err);
    if (rc == 0)
        rc = gcs_schedtrace_follow_process(t, pid, err);
    while (rc == 0 && !*stop) {
        int ready = 0;
        if (gcs_schedtrace_poll(t, pidfd, &ready, err) < 0) {
            rc = -1;
            break;
        }
        if (ready || process_over(pid))
            break;
    }
    if (pidfd >= 0)
        close(pidfd);
    return rc;
}
