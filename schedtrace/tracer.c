/* tracer.c -- scheduler tracepoints through perf_event_open.
 *
 * One event per tracepoint per online CPU (pid -1: every task on that CPU),
 * sampling every occurrence with its raw record, the thread, the CPU and the
 * time on CLOCK_MONOTONIC.  The events of a CPU share one ring buffer
 * (PERF_EVENT_IOC_SET_OUTPUT).  Picking the traced threads out of the
 * system-wide stream happens in user space, because the set of threads
 * changes while tracing and a kernel filter cannot follow it without races.
 *
 * Context switches come from perf's own context-switch records
 * (attr.context_switch on a dummy event per CPU), written in the context of
 * the task switching in or out, rather than from the sched_switch
 * tracepoint, which fires in the context of the previous task: on some
 * kernels no tracepoint fires at all in a CPU's idle task (seen on this
 * project's 6.18 KVM guest for CPU 1, with perf and with ftrace), so every
 * switch from idle to a thread, and every wakeup done from idle, would be
 * lost.  The tracepoint is the fallback for kernels without the records
 * (before 4.3).  Wakeups come from sched_waking (the waker's context) where
 * the kernel has it.
 *
 * Ordering.  Each CPU's buffer is in time order (nearly: merge.c), but the
 * buffers are not ordered among themselves, and the state machine needs one
 * order (a thread created on CPU 0 may run on CPU 1 before CPU 0's buffer is
 * read).  Every drain ("round") reads all buffers into per-CPU queues;
 * events stamped no later than the newest event of the previous round are
 * complete in every buffer by now, so they are merged and fed; later ones
 * wait for the next round (perf's "finished round" rule). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "schedtrace_internal.h"

/* The tracepoints, by role.  A kind of -1 marks the raw_syscalls fallback,
 * decoded by role. */
enum role {
    R_SWITCH, R_WAKEUP, R_WAKING, R_WAKEUP_NEW, R_FORK, R_EXIT, R_RENAME,
    R_FUTEX_ENTER, R_FUTEX_EXIT, R_FWAIT_ENTER, R_FWAIT_EXIT, R_FWAITV_ENTER, R_FWAITV_EXIT,
    R_RAW_ENTER, R_RAW_EXIT, R_COUNT
};

static const struct {
    const char *sys, *name;
    int required;   /* 1: tracing fails without it; 0: optional; 2: futex (see open_all) */
} tp_spec[R_COUNT] = {
    [R_SWITCH] = {"sched", "sched_switch", 1},
    [R_WAKEUP] = {"sched", "sched_wakeup", 1},
    [R_WAKING] = {"sched", "sched_waking", 0},
    [R_WAKEUP_NEW] = {"sched", "sched_wakeup_new", 1},
    [R_FORK] = {"sched", "sched_process_fork", 1},
    [R_EXIT] = {"sched", "sched_process_exit", 1},
    [R_RENAME] = {"task", "task_rename", 0},
    [R_FUTEX_ENTER] = {"syscalls", "sys_enter_futex", 2},
    [R_FUTEX_EXIT] = {"syscalls", "sys_exit_futex", 2},
    [R_FWAIT_ENTER] = {"syscalls", "sys_enter_futex_wait", 0},
    [R_FWAIT_EXIT] = {"syscalls", "sys_exit_futex_wait", 0},
    [R_FWAITV_ENTER] = {"syscalls", "sys_enter_futex_waitv", 0},
    [R_FWAITV_EXIT] = {"syscalls", "sys_exit_futex_waitv", 0},
    [R_RAW_ENTER] = {"raw_syscalls", "sys_enter", 2},
    [R_RAW_EXIT] = {"raw_syscalls", "sys_exit", 2},
};

typedef struct tracepoint {
    int used;
    gcs_schedtrace_format fmt;
    const gcs_schedtrace_field *f[3]; /* role-specific fields, see decode() */
} tracepoint;

typedef struct cpu_buf {
    int cpu;
    int leader_fd;
    void *base;
    size_t map_bytes, data_bytes;
    gcs_schedtrace_queue q;
} cpu_buf;

struct gcs_schedtrace {
    gcs_schedtrace_options opts;
    gcs_schedtrace_info info;
    tracepoint tp[R_COUNT];
    int *fds;
    size_t nfds;
    cpu_buf *cpus;
    int ncpus;
    unsigned char *scratch; /* a record that wraps around the buffer's end */
    size_t scratch_bytes;
    gcs_schedtrace_queue **queues; /* feed()'s view of the CPUs' queues */
    int *merge_heap;                /* and its k-way merge's heap */
    uint64_t round_max, flush_limit;
    gcs_schedtrace_states *states;
    int enabled;
};

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
    return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* "0-3,5,7-8" -> list of CPUs. */
static int online_cpus(int **out, gcs_err *err)
{
    FILE *fp = fopen("/sys/devices/system/cpu/online", "r");
    char line[4096];
    if (!fp || !fgets(line, sizeof line, fp)) {
        if (fp)
            fclose(fp);
        gcs_err_set(err, "cannot read /sys/devices/system/cpu/online: %s", strerror(errno));
        return -1;
    }
    fclose(fp);
    int *cpus = NULL, n = 0, cap = 0;
    char *p = line;
    while (*p && *p != '\n') {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            break;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            p = end;
        }
        for (long c = a; c <= b; c++) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                int *nc = realloc(cpus, (size_t)cap * sizeof *nc);
                if (!nc) {
                    free(cpus);
                    gcs_err_set(err, "out of memory");
                    return -1;
                }
                cpus = nc;
            }
            cpus[n++] = (int)c;
        }
        if (*p == ',')
            p++;
    }
    if (n == 0) {
        free(cpus);
        gcs_err_set(err, "no online CPU in /sys/devices/system/cpu/online");
        return -1;
    }
    *out = cpus;
    return n;
}

/* Looks up the fields a role needs. */
static int bind_fields(tracepoint *tp, int role)
{
    const gcs_schedtrace_format *f = &tp->fmt;
    const char *names[3] = {NULL, NULL, NULL};
    switch (role) {
    case R_SWITCH: names[0] = "prev_pid"; names[1] = "prev_state"; names[2] = "next_pid"; break;
    case R_WAKEUP:
    case R_WAKING:
    case R_WAKEUP_NEW: names[0] = "pid"; break;
    case R_FORK: names[0] = "parent_pid"; names[1] = "child_pid"; names[2] = "child_comm"; break;
    case R_EXIT: names[0] = "pid"; names[1] = "comm"; break;
    case R_RENAME: names[0] = "pid"; names[1] = "newcomm"; break;
    case R_FUTEX_ENTER: names[0] = "common_pid"; names[1] = "op"; break;
    case R_RAW_ENTER: names[0] = "common_pid"; names[1] = "id"; names[2] = "args"; break;
    case R_RAW_EXIT: names[0] = "common_pid"; names[1] = "id"; break;
    default: names[0] = "common_pid"; break;
    }
    for (int i = 0; i < 3; i++) {
        if (!names[i])
            continue;
        tp->f[i] = gcs_schedtrace_format_find(f, names[i]);
        if (!tp->f[i])
            return -1;
    }
    return 0;
}

static int load_tracepoints(gcs_schedtrace *t, gcs_err *err)
{
    char perm[256];
    for (int r = 0; r < R_COUNT; r++) {
        if (r == R_RAW_ENTER || r == R_RAW_EXIT)
            continue; /* only when the syscalls:* futex events are missing */
        gcs_err e;
        if (gcs_schedtrace_read_format(t->info.tracefs, tp_spec[r].sys, tp_spec[r].name, &t->tp[r].fmt, &e) == 0) {
            if (bind_fields(&t->tp[r], r) < 0) {
                gcs_err_set(err, "tracepoint %s:%s lacks a field gcscale needs (unknown kernel layout)",
                            tp_spec[r].sys, tp_spec[r].name);
                return -1;
            }
            t->tp[r].used = 1;
            continue;
        }
        if (errno == EACCES || errno == EPERM) {
            _gcs_schedtrace_permission_hint(perm, sizeof perm);
            gcs_err_set(err, "%s (%s)", e.msg, perm);
            return -1;
        }
        if (tp_spec[r].required == 1) {
            if (errno == ENOENT)
                gcs_err_set(err, "%s (the kernel lacks tracepoint %s:%s)", e.msg, tp_spec[r].sys, tp_spec[r].name);
            else
                *err = e;
            return -1;
        }
    }
    if (t->tp[R_FUTEX_ENTER].used && t->tp[R_FUTEX_EXIT].used) {
        t->info.futex_source = "syscalls:sys_enter_futex";
    } else {
        /* No per-syscall tracepoints (CONFIG_FTRACE_SYSCALLS): the generic
         * syscall entry/exit, filtered in the kernel to futex(2). */
        t->tp[R_FUTEX_ENTER].used = t->tp[R_FUTEX_EXIT].used = 0;
        t->tp[R_FWAIT_ENTER].used = t->tp[R_FWAIT_EXIT].used = 0;
        t->tp[R_FWAITV_ENTER].used = t->tp[R_FWAITV_EXIT].used = 0;
        gcs_err e;
        for (int r = R_RAW_ENTER; r <= R_RAW_EXIT; r++) {
            if (gcs_schedtrace_read_format(t->info.tracefs, tp_spec[r].sys, tp_spec[r].name, &t->tp[r].fmt, &e) < 0 ||
                bind_fields(&t->tp[r], r) < 0) {
                gcs_err_set(err, "the kernel has neither syscalls:sys_enter_futex nor raw_syscalls:sys_enter "
                                 "(needs CONFIG_FTRACE_SYSCALLS), so futex waits cannot be told apart");
                return -1;
            }
            t->tp[r].used = 1;
        }
        t->info.futex_source = "raw_syscalls:sys_enter";
    }
    /* A wait call is only useful with its exit. */
    if (t->tp[R_FWAIT_ENTER].used != t->tp[R_FWAIT_EXIT].used)
        t->tp[R_FWAIT_ENTER].used = t->tp[R_FWAIT_EXIT].used = 0;
    if (t->tp[R_FWAITV_ENTER].used != t->tp[R_FWAITV_EXIT].used)
        t->tp[R_FWAITV_ENTER].used = t->tp[R_FWAITV_EXIT].used = 0;
    t->info.have_rename = t->tp[R_RENAME].used;
    /* sched_waking fires in the waker's context; sched_wakeup may fire on
     * the wakee's CPU, in its idle task (see the top of this file). */
    if (t->tp[R_WAKING].used)
        t->tp[R_WAKEUP].used = 0;
    return 0;
}

static size_t round_pages(size_t bytes, size_t page)
{
    size_t pages = 1;
    while (pages * page < bytes)
        pages *= 2;
    return pages;
}

/* The CPU's ring buffer, on its first event; the others write into it. */
static int map_buffer(cpu_buf *cb, int fd, size_t data_pages, size_t page, gcs_err *err)
{
    cb->leader_fd = fd;
    cb->data_bytes = data_pages * page;
    cb->map_bytes = (data_pages + 1) * page;
    cb->base = mmap(NULL, cb->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (cb->base == MAP_FAILED) {
        int e = errno;
        cb->base = NULL;
        gcs_err_set(err, "mmap of the %zu KiB ring buffer of CPU %d: %s%s", cb->map_bytes / 1024, cb->cpu, strerror(e),
                    e == EPERM ? " (over kernel.perf_event_mlock_kb: run as root or use a smaller --buffer-size)" : "");
        return -1;
    }
    return 0;
}

/* The context-switch record events, one per CPU, opened on a thread of
 * their own while the main thread reads the tracepoint formats and opens the
 * tracepoint events.  Why: the first event with context-switch records makes
 * the kernel switch on its scheduler hooks and wait for an RCU grace period
 * (account_event: static_branch_enable, synchronize_rcu), 7-11 ms on the
 * development VM, which was most of `gcscale trace`'s start; the hooks stay
 * on for a second after the last such event closes, which is why a second
 * trace started at once does not pay it. */
typedef struct switch_opener {
    const int *cpus;
    int ncpus;
    uint32_t wakeup_watermark;
    int *fd;             /* per CPU; -1 from the first failure on */
    int failed_at;       /* index of the first CPU that failed, or -1 */
    int failed_errno;
} switch_opener;

static void *open_switch_events(void *arg)
{
    switch_opener *o = arg;
    for (int i = 0; i < o->ncpus; i++) {
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = PERF_COUNT_SW_DUMMY;
        attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
        attr.sample_id_all = 1;
        attr.context_switch = 1;
        attr.disabled = 1;
        attr.use_clockid = 1;
        attr.clockid = CLOCK_MONOTONIC;
        attr.watermark = 1;
        attr.wakeup_watermark = o->wakeup_watermark;
        long fd = perf_event_open(&attr, -1, o->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            o->failed_at = i;
            o->failed_errno = errno;
            return NULL;
        }
        o->fd[i] = (int)fd;
    }
    return NULL;
}

/* Adds fd to CPU cb's ring buffer: the first event of a CPU maps it, the
 * others write into it (PERF_EVENT_IOC_SET_OUTPUT). */
static int attach_to_buffer(gcs_schedtrace *t, cpu_buf *cb, int fd, size_t data_pages, size_t page, gcs_err *err)
{
    t->fds[t->nfds++] = fd;
    if (cb->leader_fd < 0)
        return map_buffer(cb, fd, data_pages, page, err);
    if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, cb->leader_fd) < 0) {
        gcs_err_set(err, "PERF_EVENT_IOC_SET_OUTPUT on CPU %d: %s", cb->cpu, strerror(errno));
        return -1;
    }
    return 0;
}

/* Opens tracepoint r on CPU cb. */
static int open_tracepoint(gcs_schedtrace *t, cpu_buf *cb, int r, size_t data_pages, size_t page, gcs_err *err)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = t->tp[r].fmt.id;
    attr.sample_period = 1;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
    attr.disabled = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    /* Wake the reader only when a quarter of the buffer is full; the poll
     * period bounds the latency otherwise. */
    attr.watermark = 1;
    attr.wakeup_watermark = (uint32_t)(data_pages * page / 4);
    long fd = perf_event_open(&attr, -1, cb->cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        char perm[256];
        if (e == EACCES || e == EPERM) {
            _gcs_schedtrace_permission_hint(perm, sizeof perm);
            gcs_err_set(err, "perf_event_open on %s:%s: %s (%s)", tp_spec[r].sys, tp_spec[r].name, strerror(e), perm);
        } else if (e == EMFILE || e == ENFILE) {
            gcs_err_set(err, "perf_event_open on %s:%s (CPU %d): %s (needs %d descriptors: raise ulimit -n)",
                        tp_spec[r].sys, tp_spec[r].name, cb->cpu, strerror(e), t->ncpus * (R_COUNT + 1) + 16);
        } else {
            gcs_err_set(err, "perf_event_open on %s:%s (CPU %d): %s", tp_spec[r].sys, tp_spec[r].name, cb->cpu,
                        strerror(e));
        }
        return -1;
    }
    if (r == R_RAW_ENTER || r == R_RAW_EXIT) {
        char filter[64];
        snprintf(filter, sizeof filter, "id == %d", (int)SYS_futex);
        (void)ioctl((int)fd, PERF_EVENT_IOC_SET_FILTER, filter); /* else filtered in decode() */
    }
    if (r == R_FUTEX_ENTER || r == R_FUTEX_EXIT) {
        /* Only the calls that can wait (format.c says why); a kernel that
         * refuses the filter sends every call, which decode() and the state
         * machine take as before. */
        char filter[1024];
        if (_gcs_schedtrace_futex_filter(r == R_FUTEX_EXIT, filter, sizeof filter) == 0 &&
            ioctl((int)fd, PERF_EVENT_IOC_SET_FILTER, filter) == 0)
            t->info.futex_filtered = 1;
    }
    return attach_to_buffer(t, cb, (int)fd, data_pages, page, err);
}

/* Context switches from the records where the kernel has them (4.3+); else
 * from the sched_switch tracepoint.  o: what open_switch_events() did. */
static int attach_switch_events(gcs_schedtrace *t, switch_opener *o, size_t data_pages, size_t page, gcs_err *err)
{
    if (o->failed_at == 0 &&
        (o->failed_errno == EINVAL || o->failed_errno == EOPNOTSUPP || o->failed_errno == ENOENT)) {
        if (!t->tp[R_SWITCH].fmt.id) {
            gcs_err_set(err, "the kernel has neither context-switch records nor sched:sched_switch");
            return -1;
        }
        t->tp[R_SWITCH].used = 1;
        t->info.switch_source = "sched:sched_switch";
        for (int i = 0; i < t->ncpus; i++)
            if (open_tracepoint(t, &t->cpus[i], R_SWITCH, data_pages, page, err) < 0)
                return -1;
        return 0;
    }
    if (o->failed_at >= 0) {
        int e = o->failed_errno;
        if (e == EACCES || e == EPERM) {
            char perm[256];
            _gcs_schedtrace_permission_hint(perm, sizeof perm);
            gcs_err_set(err, "perf_event_open of context-switch records: %s (%s)", strerror(e), perm);
        } else {
            gcs_err_set(err, "perf_event_open of context-switch records (CPU %d): %s", o->cpus[o->failed_at],
                        strerror(e));
        }
        return -1;
    }
    t->info.switch_source = "perf context-switch records";
    for (int i = 0; i < t->ncpus; i++) {
        int fd = o->fd[i];
        o->fd[i] = -1; /* t owns it now */
        if (attach_to_buffer(t, &t->cpus[i], fd, data_pages, page, err) < 0)
            return -1;
    }
    return 0;
}

gcs_schedtrace *gcs_schedtrace_open(const gcs_schedtrace_options *opts, gcs_err *err)
{
    gcs_schedtrace *t = calloc(1, sizeof *t);
    if (!t) {
        gcs_err_set(err, "out of memory");
        return NULL;
    }
    if (opts)
        t->opts = *opts;
    if (t->opts.buffer_bytes == 0)
        t->opts.buffer_bytes = 1u << 20; /* docs/schedtrace.md "Overhead": no loss at 800 000 records/s */
    int *cpus = NULL;
    int ncpus = online_cpus(&cpus, err);
    if (ncpus < 0) {
        gcs_schedtrace_close(t);
        return NULL;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = round_pages(t->opts.buffer_bytes, page);
    t->cpus = calloc((size_t)ncpus, sizeof *t->cpus);
    t->fds = malloc((size_t)ncpus * (R_COUNT + 1) * sizeof *t->fds);
    t->scratch_bytes = 65536 + 16; /* a record is at most 64 KiB (u16 size) */
    t->scratch = malloc(t->scratch_bytes);
    t->merge_heap = malloc((size_t)ncpus * sizeof *t->merge_heap);
    t->queues = malloc((size_t)ncpus * sizeof *t->queues);
    switch_opener o = {.cpus = cpus, .ncpus = ncpus, .wakeup_watermark = (uint32_t)(data_pages * page / 4),
                       .fd = malloc((size_t)ncpus * sizeof(int)), .failed_at = -1};
    if (!t->cpus || !t->fds || !t->scratch || !t->merge_heap || !t->queues || !o.fd) {
        free(o.fd);
        free(cpus);
        gcs_schedtrace_close(t);
        gcs_err_set(err, "out of memory");
        return NULL;
    }
    t->ncpus = ncpus;
    for (int i = 0; i < ncpus; i++) {
        t->cpus[i].cpu = cpus[i];
        t->cpus[i].leader_fd = -1;
        o.fd[i] = -1;
    }
    pthread_t opener;
    int threaded = pthread_create(&opener, NULL, open_switch_events, &o) == 0;
    int rc = gcs_schedtrace_tracefs(t->info.tracefs, sizeof t->info.tracefs, &t->info.mounted_tracefs, err);
    if (rc == 0)
        rc = load_tracepoints(t, err);
    if (rc == 0) {
        t->tp[R_SWITCH].used = 0; /* the records, unless attach_switch_events falls back */
        for (int i = 0; i < ncpus && rc == 0; i++)
            for (int r = 0; r < R_COUNT && rc == 0; r++)
                if (t->tp[r].used)
                    rc = open_tracepoint(t, &t->cpus[i], r, data_pages, page, err);
    }
    if (threaded)
        pthread_join(opener, NULL);
    else
        open_switch_events(&o);
    if (rc == 0)
        rc = attach_switch_events(t, &o, data_pages, page, err);
    for (int i = 0; i < ncpus; i++)
        if (o.fd[i] >= 0)
            close(o.fd[i]);
    free(o.fd);
    free(cpus);
    if (rc < 0) {
        gcs_schedtrace_close(t);
        return NULL;
    }
    t->info.ncpus = ncpus;
    return t;
}

void gcs_schedtrace_close(gcs_schedtrace *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->ncpus; i++) {
        if (t->cpus[i].base)
            munmap(t->cpus[i].base, t->cpus[i].map_bytes);
        _gcs_schedtrace_queue_free(&t->cpus[i].q);
    }
    for (size_t i = 0; i < t->nfds; i++)
        close(t->fds[i]);
    free(t->cpus);
    free(t->fds);
    free(t->scratch);
    free(t->merge_heap);
    free(t->queues);
    free(t);
}

/* Closing the last descriptor of a tracepoint event makes the kernel
 * unregister its probe and wait for an RCU grace period
 * (perf_trace_event_unreg: tracepoint_synchronize_unregister), one
 * tracepoint after another under event_mutex: about 35 ms each on the
 * project's 2-vCPU KVM guest, 0.4 s for the 12 tracepoints, which a traced
 * command of a few seconds pays as +15-20% of wall time after the program
 * has already ended.  So the last references are handed to a grandchild: it
 * waits until the caller has dropped its own (a pipe's EOF), then exits, and
 * its exit pays the grace periods while the caller goes on.  The trade-off:
 * for ~0.4 s a process of ours outlives the trace, and a trace opened
 * immediately after waits for it on event_mutex. */
void gcs_schedtrace_close_detached(gcs_schedtrace *t)
{
    if (!t)
        return;
    int pfd[2];
    if (t->nfds == 0 || pipe(pfd) < 0) {
        gcs_schedtrace_close(t);
        return;
    }
    pid_t child = fork();
    if (child == 0) {
        /* Only async-signal-safe calls from here: the caller may have had
         * other threads. */
        close(pfd[1]);
        if (fork() != 0) /* the grandchild is reparented and reaped by init */
            _exit(0);
        prctl(PR_SET_NAME, "gcscale-release", 0, 0, 0); /* what ps shows for it */
        /* Keep only the events and the pipe: an inherited stdout would hold
         * a pipeline ("gcscale trace ... | tail") open until we exit. */
        int keep_max = pfd[0];
        for (size_t i = 0; i < t->nfds; i++)
            if (t->fds[i] > keep_max)
                keep_max = t->fds[i];
        for (int fd = 0; fd <= keep_max; fd++) {
            int keep = fd == pfd[0];
            for (size_t i = 0; i < t->nfds && !keep; i++)
                keep = t->fds[i] == fd;
            if (!keep)
                close(fd);
        }
        syscall(SYS_close_range, (unsigned)keep_max + 1, ~0u, 0);
        char c;
        while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(pfd[0]);
    if (child > 0) {
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    /* With the grandchild holding references, these closes are cheap; if
     * the fork failed, this is the plain close and its cost. */
    gcs_schedtrace_close(t);
    close(pfd[1]);
}

gcs_schedtrace_states *_gcs_schedtrace_states_of(gcs_schedtrace *t)
{
    return t->states;
}

const gcs_schedtrace_info *gcs_schedtrace_get_info(const gcs_schedtrace *t)
{
    return &t->info;
}

/* ---- decoding ------------------------------------------------------------------ */

static int push_event(gcs_schedtrace *t, gcs_schedtrace_queue *q, const gcs_schedtrace_event *ev)
{
    if (ev->t_ns > t->round_max)
        t->round_max = ev->t_ns;
    return _gcs_schedtrace_queue_push(q, ev);
}

static int64_t get(const tracepoint *tp, int i, const void *raw, uint32_t n)
{
    int64_t v = 0;
    if (gcs_schedtrace_field_int(tp->f[i], raw, n, &v) < 0)
        return -1;
    return v;
}

/* One raw tracepoint record -> at most one event (0: ignored). */
static int decode(gcs_schedtrace *t, uint64_t time, uint32_t cpu, const unsigned char *raw, uint32_t n,
                  gcs_schedtrace_event *ev)
{
    if (n < 8)
        return 0;
    uint16_t type;
    memcpy(&type, raw, 2);
    int r;
    for (r = 0; r < R_COUNT; r++)
        if (t->tp[r].used && t->tp[r].fmt.id == type)
            break;
    if (r == R_COUNT)
        return 0;
    const tracepoint *tp = &t->tp[r];
    memset(ev, 0, sizeof *ev);
    ev->t_ns = time;
    ev->cpu = cpu;
    switch (r) {
    case R_SWITCH:
        ev->kind = GCS_SCHEDTRACE_SWITCH;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        ev->arg = get(tp, 1, raw, n);
        ev->tid2 = (int32_t)get(tp, 2, raw, n);
        return 1;
    case R_WAKEUP:
    case R_WAKING:
    case R_WAKEUP_NEW:
        ev->kind = GCS_SCHEDTRACE_WAKEUP;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        return 1;
    case R_FORK:
        ev->kind = GCS_SCHEDTRACE_FORK;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        ev->tid2 = (int32_t)get(tp, 1, raw, n);
        gcs_schedtrace_field_str(tp->f[2], raw, n, ev->comm, sizeof ev->comm);
        return 1;
    case R_EXIT:
        ev->kind = GCS_SCHEDTRACE_EXIT;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        gcs_schedtrace_field_str(tp->f[1], raw, n, ev->comm, sizeof ev->comm);
        return 1;
    case R_RENAME:
        ev->kind = GCS_SCHEDTRACE_RENAME;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        gcs_schedtrace_field_str(tp->f[1], raw, n, ev->comm, sizeof ev->comm);
        return 1;
    case R_FUTEX_ENTER:
        ev->kind = GCS_SCHEDTRACE_FUTEX_ENTER;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        ev->arg = get(tp, 1, raw, n);
        return 1;
    case R_FWAIT_ENTER:
    case R_FWAITV_ENTER:
        ev->kind = GCS_SCHEDTRACE_FUTEX_WAIT;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        return 1;
    case R_FUTEX_EXIT:
    case R_FWAIT_EXIT:
    case R_FWAITV_EXIT:
        ev->kind = GCS_SCHEDTRACE_FUTEX_EXIT;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        return 1;
    case R_RAW_ENTER: {
        if (get(tp, 1, raw, n) != SYS_futex)
            return 0;
        int64_t op = 0;
        if (gcs_schedtrace_field_elem(tp->f[2], 8, 1, raw, n, &op) < 0)
            return 0;
        ev->kind = GCS_SCHEDTRACE_FUTEX_ENTER;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        ev->arg = op;
        return 1;
    }
    case R_RAW_EXIT:
        if (get(tp, 1, raw, n) != SYS_futex)
            return 0;
        ev->kind = GCS_SCHEDTRACE_FUTEX_EXIT;
        ev->tid = (int32_t)get(tp, 0, raw, n);
        return 1;
    default:
        return 0;
    }
}

static int handle_record(gcs_schedtrace *t, gcs_schedtrace_queue *q, const unsigned char *rec, size_t size)
{
    struct perf_event_header h;
    memcpy(&h, rec, sizeof h);
    if (h.type == PERF_RECORD_LOST && size >= sizeof h + 16) {
        uint64_t lost;
        memcpy(&lost, rec + sizeof h + 8, 8);
        t->info.lost += lost;
        return 0;
    }
#ifdef PERF_RECORD_LOST_SAMPLES
    if (h.type == PERF_RECORD_LOST_SAMPLES && size >= sizeof h + 8) {
        uint64_t lost;
        memcpy(&lost, rec + sizeof h, 8);
        t->info.lost += lost;
        return 0;
    }
#endif
    if (h.type == PERF_RECORD_SWITCH_CPU_WIDE && size >= sizeof h + 8 + 24) {
        /* next_prev_pid, next_prev_tid, then sample_id: pid, tid, time, cpu */
        uint32_t tid, cpu;
        uint64_t time;
        memcpy(&tid, rec + sizeof h + 12, 4);
        memcpy(&time, rec + sizeof h + 16, 8);
        memcpy(&cpu, rec + sizeof h + 24, 4);
        gcs_schedtrace_event ev;
        memset(&ev, 0, sizeof ev);
        ev.t_ns = time;
        ev.cpu = cpu;
        ev.kind = GCS_SCHEDTRACE_SWITCH;
        if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
            ev.tid = (int32_t)tid;
            /* As sched_switch's prev_state: 0 runnable (preempted), 1 asleep. */
            ev.arg = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? 0 : 1;
        } else {
            ev.tid2 = (int32_t)tid;
        }
        t->info.samples++;
        return push_event(t, q, &ev);
    }
    if (h.type != PERF_RECORD_SAMPLE)
        return 0;
    /* PERF_SAMPLE_TID | TIME | CPU | RAW, in that order. */
    const size_t fixed = sizeof h + 8 + 8 + 8 + 4;
    if (size < fixed)
        return 0;
    uint64_t time;
    uint32_t cpu, raw_size;
    memcpy(&time, rec + sizeof h + 8, 8);
    memcpy(&cpu, rec + sizeof h + 16, 4);
    memcpy(&raw_size, rec + sizeof h + 24, 4);
    if (fixed + raw_size > size)
        return 0;
    t->info.samples++;
    gcs_schedtrace_event ev;
    if (decode(t, time, cpu, rec + fixed, raw_size, &ev) && push_event(t, q, &ev) < 0)
        return -1;
    return 0;
}

/* Reads everything the kernel has written to one CPU's buffer. */
static int drain_cpu(gcs_schedtrace *t, cpu_buf *cb)
{
    struct perf_event_mmap_page *mp = cb->base;
    unsigned char *data = (unsigned char *)cb->base + (mp->data_offset ? mp->data_offset : (uint64_t)sysconf(_SC_PAGESIZE));
    uint64_t size = cb->data_bytes, mask = size - 1;
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    int rc = 0;
    while (tail < head && rc == 0) {
        struct perf_event_header h;
        uint64_t off = tail & mask;
        if (off + sizeof h <= size) {
            memcpy(&h, data + off, sizeof h);
        } else {
            size_t first = (size_t)(size - off);
            memcpy(&h, data + off, first);
            memcpy((unsigned char *)&h + first, data, sizeof h - first);
        }
        if (h.size < sizeof h || h.size > head - tail)
            break; /* cannot happen with a sane kernel; drop the rest */
        const unsigned char *rec;
        if (off + h.size <= size) {
            rec = data + off;
        } else {
            size_t first = (size_t)(size - off);
            memcpy(t->scratch, data + off, first);
            memcpy(t->scratch + first, data, h.size - first);
            rec = t->scratch;
        }
        rc = handle_record(t, &cb->q, rec, h.size);
        tail += h.size;
    }
    __atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
    return rc;
}

static int apply_event(void *ctx, const gcs_schedtrace_event *ev, gcs_err *err)
{
    gcs_schedtrace *t = ctx;
    return t->states ? gcs_schedtrace_states_apply(t->states, ev, err) : 0;
}

/* Feeds the pending events stamped <= limit to the state machine, in order. */
static int feed(gcs_schedtrace *t, uint64_t limit, gcs_err *err)
{
    for (int c = 0; c < t->ncpus; c++)
        t->queues[c] = &t->cpus[c].q;
    return _gcs_schedtrace_merge(t->queues, t->merge_heap, t->ncpus, limit, apply_event, t, err);
}

static int drain_round(gcs_schedtrace *t, int final, gcs_err *err)
{
    for (int i = 0; i < t->ncpus; i++) {
        if (drain_cpu(t, &t->cpus[i]) < 0) {
            gcs_err_set(err, "out of memory buffering events");
            return -1;
        }
    }
    t->info.wakeups++;
    uint64_t limit = final ? UINT64_MAX : t->flush_limit;
    t->flush_limit = t->round_max;
    return feed(t, limit, err);
}

int gcs_schedtrace_enable(gcs_schedtrace *t, gcs_schedtrace_states *s, gcs_err *err)
{
    t->states = s;
    t->info.start_ns = gcs_now_ns();
    for (size_t i = 0; i < t->nfds; i++) {
        if (ioctl(t->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
            gcs_err_set(err, "enabling the tracepoints: %s", strerror(errno));
            return -1;
        }
    }
    t->enabled = 1;
    return 0;
}

int gcs_schedtrace_poll(gcs_schedtrace *t, int fd, int *fd_ready, gcs_err *err)
{
    struct pollfd pfd[t->ncpus + 1];
    int n = 0;
    for (int i = 0; i < t->ncpus; i++)
        pfd[n++] = (struct pollfd){.fd = t->cpus[i].leader_fd, .events = POLLIN};
    if (fd >= 0)
        pfd[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
    if (fd_ready)
        *fd_ready = 0;
    /* The buffers' watermark wakes us when there is much to read, so the
     * timeout only bounds how late an end nobody signals is seen: with a
     * descriptor that signals it, a wake-up a second is plenty (each costs
     * a drain and a merge while the traced program wants the CPU). */
    int timeout = t->opts.poll_ms > 0 ? t->opts.poll_ms : fd >= 0 ? 1000 : 100;
    int rc = poll(pfd, (nfds_t)n, timeout);
    if (rc < 0 && errno != EINTR) {
        gcs_err_set(err, "poll: %s", strerror(errno));
        return -1;
    }
    if (rc > 0 && fd >= 0 && fd_ready && (pfd[n - 1].revents & (POLLIN | POLLHUP)))
        *fd_ready = 1;
    return drain_round(t, 0, err);
}

int gcs_schedtrace_stop(gcs_schedtrace *t, const gcs_schedtrace_class *classes, size_t nclasses, gcs_err *err)
{
    if (t->enabled) {
        for (size_t i = 0; i < t->nfds; i++)
            (void)ioctl(t->fds[i], PERF_EVENT_IOC_DISABLE, 0);
        t->enabled = 0;
    }
    t->info.end_ns = gcs_now_ns();
    if (drain_round(t, 1, err) < 0)
        return -1;
    if (!t->states)
        return 0;
    /* Names of threads still alive: a name set through /proc or prctl
     * without task:task_rename, or one that the exit event did not bring. */
    size_t n;
    const gcs_schedtrace_thread *th = gcs_schedtrace_states_threads(t->states, &n);
    for (size_t i = 0; i < n; i++) {
        if (th[i].state == GCS_SCHEDTRACE_EXITED)
            continue;
        char name[32];
        if (gcs_schedtrace_proc_comm(th[i].tid, name, sizeof name) == 0)
            gcs_schedtrace_states_rename(t->states, th[i].tid, name);
    }
    gcs_schedtrace_states_finish(t->states, t->info.end_ns, classes, nclasses);
    return 0;
}
