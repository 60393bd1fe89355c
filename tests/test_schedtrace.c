/* test_schedtrace.c -- schedtrace/ without root: the tracepoint format
 * parser on format files captured from real kernels, field access on raw
 * records built by hand, futex op and prev_state classification, --class
 * rules, and the state machine fed with event sequences whose answer is
 * known, written through the trace writer and read back with the reader.
 * (The perf_event_open part needs root; tests/cli/test_trace.sh runs it.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/schedtrace.h"
#include "gcscale/trace.h"
#include "../schedtrace/schedtrace_internal.h"
#include "../schedtrace/schedtrace_internal.h"

/* Linux 6.18 (this machine), cat /sys/kernel/tracing/events/sched/sched_switch/format */
static const char *const fmt_switch_618 =
    "name: sched_switch\n"
    "ID: 372\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d "
    "next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | "
    "0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - "
    "1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 "
    "| 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, "
    "\"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { "
    "0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | "
    "0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", "
    "REC->next_comm, REC->next_pid, REC->next_prio\n";

/* Linux 6.18: the comms became __data_loc strings. */
static const char *const fmt_fork_618 =
    "name: sched_process_fork\n"
    "ID: 366\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n"
    "\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"comm=%s pid=%d child_comm=%s child_pid=%d\", __get_str(parent_comm), REC->parent_pid, "
    "__get_str(child_comm), REC->child_pid\n";

/* Linux 5.10 (Debian 11): the same tracepoint with fixed char[16] comms. */
static const char *const fmt_fork_510 =
    "name: sched_process_fork\n"
    "ID: 314\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:char parent_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
    "\tfield:pid_t parent_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:char child_comm[16];\toffset:28;\tsize:16;\tsigned:1;\n"
    "\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, "
    "REC->child_comm, REC->child_pid\n";

static const char *const fmt_futex_618 =
    "name: sys_enter_futex\n"
    "ID: 522\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:u32 * uaddr;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:int op;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:u32 val;\toffset:32;\tsize:8;\tsigned:0;\n"
    "\tfield:const struct __kernel_timespec * utime;\toffset:40;\tsize:8;\tsigned:0;\n"
    "\tfield:u32 * uaddr2;\toffset:48;\tsize:8;\tsigned:0;\n"
    "\tfield:u32 val3;\toffset:56;\tsize:8;\tsigned:0;\n"
    "\n"
    "print fmt: \"uaddr: 0x%08lx, op: 0x%08lx, val: 0x%08lx, utime: 0x%08lx, uaddr2: 0x%08lx, val3: "
    "0x%08lx\", ((unsigned long)(REC->uaddr)), ((unsigned long)(REC->op)), ((unsigned long)(REC->val)), "
    "((unsigned long)(REC->utime)), ((unsigned long)(REC->uaddr2)), ((unsigned long)(REC->val3))\n";

static const char *const fmt_raw_enter_618 =
    "name: sys_enter\n"
    "ID: 443\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
    "\n"
    "print fmt: \"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], REC->args[1], "
    "REC->args[2], REC->args[3], REC->args[4], REC->args[5]\n";

static void put32(unsigned char *raw, size_t off, int32_t v) { memcpy(raw + off, &v, 4); }
static void put64(unsigned char *raw, size_t off, int64_t v) { memcpy(raw + off, &v, 8); }

static void test_parse_sched_switch(void **state)
{
    (void)state;
    gcs_schedtrace_format f;
    gcs_err err;
    assert_int_equal(gcs_schedtrace_format_parse(fmt_switch_618, &f, &err), 0);
    assert_string_equal(f.name, "sched_switch");
    assert_int_equal(f.id, 372);
    assert_int_equal(f.nfields, 11);
    const gcs_schedtrace_field *prev = gcs_schedtrace_format_find(&f, "prev_pid");
    const gcs_schedtrace_field *st = gcs_schedtrace_format_find(&f, "prev_state");
    const gcs_schedtrace_field *comm = gcs_schedtrace_format_find(&f, "next_comm");
    const gcs_schedtrace_field *next = gcs_schedtrace_format_find(&f, "next_pid");
    assert_non_null(prev);
    assert_non_null(st);
    assert_non_null(comm);
    assert_non_null(next);
    assert_int_equal(prev->offset, 24);
    assert_int_equal(prev->size, 4);
    assert_true(prev->is_signed);
    assert_int_equal(st->offset, 32);
    assert_int_equal(st->size, 8);
    assert_int_equal(comm->offset, 40);
    assert_int_equal(comm->size, 16);
    assert_int_equal(comm->data_loc, 0);
    assert_int_equal(next->offset, 56);
    assert_null(gcs_schedtrace_format_find(&f, "nope"));

    /* A record as the kernel writes it. */
    unsigned char raw[68];
    memset(raw, 0, sizeof raw);
    uint16_t type = 372;
    memcpy(raw, &type, 2);
    put32(raw, 24, 4242);
    put64(raw, 32, 0x100); /* preempted: "R+" */
    memcpy(raw + 40, "spin-1\0\0\0\0\0\0\0\0\0\0", 16);
    put32(raw, 56, -7);     /* signed fields sign-extend */
    int64_t v;
    char buf[32];
    assert_int_equal(gcs_schedtrace_field_int(prev, raw, sizeof raw, &v), 0);
    assert_int_equal(v, 4242);
    assert_int_equal(gcs_schedtrace_field_int(st, raw, sizeof raw, &v), 0);
    assert_int_equal(v, 0x100);
    assert_true(gcs_schedtrace_prev_runnable(v));
    assert_int_equal(gcs_schedtrace_field_int(next, raw, sizeof raw, &v), 0);
    assert_int_equal(v, -7);
    assert_int_equal(gcs_schedtrace_field_str(comm, raw, sizeof raw, buf, sizeof buf), 0);
    assert_string_equal(buf, "spin-1");
    assert_int_equal(gcs_schedtrace_field_str(comm, raw, sizeof raw, buf, 4), 0);
    assert_string_equal(buf, "spi"); /* truncated, terminated */
    /* A record too short for the field is refused, not read past. */
    assert_int_equal(gcs_schedtrace_field_int(next, raw, 58, &v), -1);
    assert_int_equal(gcs_schedtrace_field_str(comm, raw, 50, buf, sizeof buf), -1);
}

static void test_parse_fork_two_kernels(void **state)
{
    (void)state;
    gcs_schedtrace_format f;
    gcs_err err;
    char buf[32];
    int64_t v;

    /* 6.18: __data_loc strings placed after the fixed fields. */
    assert_int_equal(gcs_schedtrace_format_parse(fmt_fork_618, &f, &err), 0);
    const gcs_schedtrace_field *cc = gcs_schedtrace_format_find(&f, "child_comm");
    const gcs_schedtrace_field *cp = gcs_schedtrace_format_find(&f, "child_pid");
    assert_non_null(cc);
    assert_int_equal(cc->data_loc, 1);
    assert_int_equal(cp->offset, 20);
    unsigned char raw[48];
    memset(raw, 0, sizeof raw);
    put32(raw, 8, (int32_t)((5u << 16) | 24u));   /* parent_comm "bash" at 24 */
    put32(raw, 12, 100);
    put32(raw, 16, (int32_t)((8u << 16) | 29u));  /* child_comm "worker" at 29 */
    put32(raw, 20, 101);
    memcpy(raw + 24, "bash", 5);
    memcpy(raw + 29, "worker1", 8);
    assert_int_equal(gcs_schedtrace_field_str(cc, raw, 37, buf, sizeof buf), 0);
    assert_string_equal(buf, "worker1");
    assert_int_equal(gcs_schedtrace_field_int(cp, raw, 37, &v), 0);
    assert_int_equal(v, 101);
    /* A location that points outside the record is refused. */
    assert_int_equal(gcs_schedtrace_field_str(cc, raw, 30, buf, sizeof buf), -1);
    /* A __data_loc field is not an integer. */
    assert_int_equal(gcs_schedtrace_field_int(cc, raw, 37, &v), -1);

    /* 5.10: the same names at other offsets, fixed arrays. */
    assert_int_equal(gcs_schedtrace_format_parse(fmt_fork_510, &f, &err), 0);
    assert_int_equal(f.id, 314);
    cc = gcs_schedtrace_format_find(&f, "child_comm");
    cp = gcs_schedtrace_format_find(&f, "child_pid");
    assert_int_equal(cc->data_loc, 0);
    assert_int_equal(cc->offset, 28);
    assert_int_equal(cp->offset, 44);
}

static void test_parse_syscalls(void **state)
{
    (void)state;
    gcs_schedtrace_format f;
    gcs_err err;
    int64_t v;
    assert_int_equal(gcs_schedtrace_format_parse(fmt_futex_618, &f, &err), 0);
    const gcs_schedtrace_field *op = gcs_schedtrace_format_find(&f, "op");
    const gcs_schedtrace_field *ut = gcs_schedtrace_format_find(&f, "utime"); /* "struct x * name" */
    assert_non_null(op);
    assert_non_null(ut);
    assert_int_equal(op->offset, 24);
    assert_int_equal(op->size, 8);
    assert_int_equal(ut->offset, 40);
    assert_non_null(gcs_schedtrace_format_find(&f, "uaddr"));

    assert_int_equal(gcs_schedtrace_format_parse(fmt_raw_enter_618, &f, &err), 0);
    const gcs_schedtrace_field *args = gcs_schedtrace_format_find(&f, "args");
    assert_non_null(args);
    assert_int_equal(args->size, 48);
    unsigned char raw[64];
    memset(raw, 0, sizeof raw);
    put64(raw, 8, 202);
    put64(raw, 16 + 8, 0x80); /* args[1]: FUTEX_WAIT_PRIVATE */
    assert_int_equal(gcs_schedtrace_field_elem(args, 8, 1, raw, sizeof raw, &v), 0);
    assert_int_equal(v, 0x80);
    assert_int_equal(gcs_schedtrace_field_elem(args, 8, 6, raw, sizeof raw, &v), -1); /* past args[5] */
}

static void test_parse_errors(void **state)
{
    (void)state;
    gcs_schedtrace_format f;
    gcs_err err;
    assert_int_equal(gcs_schedtrace_format_parse("", &f, &err), -1);
    assert_int_equal(gcs_schedtrace_format_parse("name: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\n", &f, &err),
                     -1);
    assert_non_null(strstr(err.msg, "ID"));
    assert_int_equal(gcs_schedtrace_format_parse("name: x\nID: 3\nformat:\n\tfield:int a;\toffset:zz;\tsize:4;\n",
                                                 &f, &err),
                     -1);
    assert_non_null(strstr(err.msg, "field line"));
    assert_int_equal(gcs_schedtrace_format_parse("name: x\nID: 3\nformat:\n\tfield:int ;\toffset:0;\tsize:4;\n",
                                                 &f, &err),
                     -1);
    assert_int_equal(gcs_schedtrace_format_parse("name: x\nID: 3\nformat:\n", &f, &err), -1);
    assert_non_null(strstr(err.msg, "fields"));
    /* Old kernels without "signed:" still parse. */
    assert_int_equal(
        gcs_schedtrace_format_parse("name: x\nID: 3\nformat:\n\tfield:int a;\toffset:4;\tsize:4;\n", &f, &err), 0);
    assert_int_equal(f.fields[0].offset, 4);
}

/* The kernel-side futex filters (format.c): the entry filter names exactly
 * the ops gcs_schedtrace_futex_op_waits accepts, with every flag
 * combination, and the exit filter keeps ret <= 0. */
static void test_futex_filter(void **state)
{
    (void)state;
    char f[1024];
    assert_int_equal(_gcs_schedtrace_futex_filter(1, f, sizeof f), 0);
    assert_string_equal(f, "ret <= 0");
    assert_int_equal(_gcs_schedtrace_futex_filter(0, f, sizeof f), 0);
    assert_true(strncmp(f, "op == 0 || op == 128 || op == 256 || op == 384 || op == 6 ||", 60) == 0);
    int terms = 0;
    for (int op = 0; op < 512; op++) {
        char term[32];
        snprintf(term, sizeof term, "op == %d", op);
        /* the term, followed by the end or " ||" (op == 1 must not match op == 128) */
        int found = 0;
        for (const char *p = strstr(f, term); p && !found; p = strstr(p + 1, term))
            found = (p == f || p[-1] == ' ') && (p[strlen(term)] == 0 || p[strlen(term)] == ' ');
        assert_int_equal(found, gcs_schedtrace_futex_op_waits(op));
        terms += found;
    }
    assert_int_equal(terms, 5 * 4);
    assert_int_equal(_gcs_schedtrace_futex_filter(0, f, 40), -1); /* too small: no half filter */
    assert_int_equal(_gcs_schedtrace_futex_filter(1, f, 4), -1);
}

static void test_classification(void **state)
{
    (void)state;
    assert_true(gcs_schedtrace_futex_op_waits(0));         /* FUTEX_WAIT */
    assert_true(gcs_schedtrace_futex_op_waits(128));       /* FUTEX_WAIT_PRIVATE */
    assert_true(gcs_schedtrace_futex_op_waits(9 | 128 | 256)); /* WAIT_BITSET, private, realtime */
    assert_true(gcs_schedtrace_futex_op_waits(6));         /* LOCK_PI */
    assert_true(gcs_schedtrace_futex_op_waits(13 | 128));  /* LOCK_PI2 */
    assert_true(gcs_schedtrace_futex_op_waits(11));        /* WAIT_REQUEUE_PI */
    assert_false(gcs_schedtrace_futex_op_waits(1));        /* WAKE */
    assert_false(gcs_schedtrace_futex_op_waits(1 | 128));
    assert_false(gcs_schedtrace_futex_op_waits(5));        /* WAKE_OP */
    assert_false(gcs_schedtrace_futex_op_waits(7));        /* UNLOCK_PI */
    assert_false(gcs_schedtrace_futex_op_waits(8));        /* TRYLOCK_PI never sleeps */
    assert_true(gcs_schedtrace_prev_runnable(0));          /* "R" */
    assert_true(gcs_schedtrace_prev_runnable(0x100));      /* "R+" (preempted) */
    assert_false(gcs_schedtrace_prev_runnable(1));         /* "S" */
    assert_false(gcs_schedtrace_prev_runnable(2));         /* "D" */
    assert_false(gcs_schedtrace_prev_runnable(0x80));      /* "I" */
    assert_false(gcs_schedtrace_prev_runnable(0x101));
}

static void test_class_parse(void **state)
{
    (void)state;
    gcs_schedtrace_class c;
    gcs_err err;
    assert_int_equal(gcs_schedtrace_class_parse("gc=GC Thread*", &c, &err), 0);
    assert_string_equal(c.name, "gc");
    assert_string_equal(c.pattern, "GC Thread*");
    assert_int_equal(gcs_schedtrace_class_parse("a_b-1=x=y", &c, &err), 0); /* the first '=' splits */
    assert_string_equal(c.pattern, "x=y");
    assert_int_equal(gcs_schedtrace_class_parse("gc", &c, &err), -1);
    assert_non_null(strstr(err.msg, "NAME=PATTERN"));
    assert_int_equal(gcs_schedtrace_class_parse("=x", &c, &err), -1);
    assert_int_equal(gcs_schedtrace_class_parse("gc=", &c, &err), -1);
    assert_int_equal(gcs_schedtrace_class_parse("g c=x", &c, &err), -1);
    assert_int_equal(gcs_schedtrace_class_parse("0123456789012345678901234567890123=x", &c, &err), -1);
}

/* ---- the state machine -------------------------------------------------------- */

static gcs_schedtrace_event ev(uint64_t t, gcs_schedtrace_kind k, int32_t tid, int32_t tid2, int64_t arg,
                               const char *comm)
{
    gcs_schedtrace_event e;
    memset(&e, 0, sizeof e);
    e.t_ns = t;
    e.kind = (uint32_t)k;
    e.tid = tid;
    e.tid2 = tid2;
    e.arg = arg;
    if (comm)
        snprintf(e.comm, sizeof e.comm, "%s", comm);
    return e;
}

static void apply(gcs_schedtrace_states *s, gcs_schedtrace_event e)
{
    gcs_err err;
    assert_int_equal(gcs_schedtrace_states_apply(s, &e, &err), 0);
}

#define MS 1000000ull
#define S_SLEEP 1           /* prev_state "S" */
#define PREEMPT 0x100       /* prev_state "R+" */

/* A main thread (100) starts a worker (101); the worker blocks on a futex,
 * gets preempted, main sleeps in nanosleep; an unrelated thread (555) and
 * its events are ignored; the worker renames itself and exits.
 *
 *   t(ms)  event                                    100         101
 *     0    added, running                           running
 *    10    fork 100 -> 101                                      runnable
 *    11    wakeup_new 101
 *    12    switch 555 -> 101 (other CPU)                        running
 *    20    101 renames to "spin-0"
 *    30    101 futex(FUTEX_WAIT_PRIVATE)
 *    31    switch 101 (S) -> 0                                  futex
 *    40    switch 100 (S) -> 555  (no futex: sleep)  sleeping
 *    60    wakeup 101                                           runnable
 *    61    switch 0 -> 101                                      running
 *    62    101 futex exit
 *    70    switch 101 (R+) -> 555 (preempted)                   runnable
 *    75    switch 555 -> 101                                    running
 *    80    wakeup 100                                runnable
 *    81    switch 555 (S) -> 100                     running
 *    90    101 futex(FUTEX_WAKE): not a wait
 *    91    switch 101 (S) -> 0: a sleep, not futex                  sleeping
 *    95    exit 101 "spin-0"                                    exited
 *   100    end                                       (running)
 */
static gcs_schedtrace_states *scenario(void)
{
    gcs_err err;
    gcs_schedtrace_states *s = gcs_schedtrace_states_new(&err);
    assert_non_null(s);
    assert_int_equal(gcs_schedtrace_states_add(s, 100, "prog", GCS_SCHEDTRACE_RUNNING, 0, &err), 0);
    apply(s, ev(5 * MS, GCS_SCHEDTRACE_SWITCH, 555, 556, S_SLEEP, NULL)); /* unrelated */
    apply(s, ev(10 * MS, GCS_SCHEDTRACE_FORK, 100, 101, 0, "prog"));
    apply(s, ev(10 * MS, GCS_SCHEDTRACE_FORK, 555, 557, 0, "other")); /* not followed */
    apply(s, ev(11 * MS, GCS_SCHEDTRACE_WAKEUP, 101, 0, 0, NULL));
    apply(s, ev(12 * MS, GCS_SCHEDTRACE_SWITCH, 555, 101, S_SLEEP, NULL));
    apply(s, ev(20 * MS, GCS_SCHEDTRACE_RENAME, 101, 0, 0, "spin-0"));
    apply(s, ev(30 * MS, GCS_SCHEDTRACE_FUTEX_ENTER, 101, 0, 128, NULL));
    apply(s, ev(31 * MS, GCS_SCHEDTRACE_SWITCH, 101, 0, S_SLEEP, NULL));
    apply(s, ev(40 * MS, GCS_SCHEDTRACE_SWITCH, 100, 555, S_SLEEP, NULL));
    apply(s, ev(60 * MS, GCS_SCHEDTRACE_WAKEUP, 101, 0, 0, NULL));
    apply(s, ev(61 * MS, GCS_SCHEDTRACE_SWITCH, 0, 101, 0, NULL));
    apply(s, ev(62 * MS, GCS_SCHEDTRACE_FUTEX_EXIT, 101, 0, 0, NULL));
    apply(s, ev(70 * MS, GCS_SCHEDTRACE_SWITCH, 101, 555, PREEMPT, NULL));
    apply(s, ev(75 * MS, GCS_SCHEDTRACE_SWITCH, 555, 101, PREEMPT, NULL));
    apply(s, ev(80 * MS, GCS_SCHEDTRACE_WAKEUP, 100, 0, 0, NULL));
    apply(s, ev(81 * MS, GCS_SCHEDTRACE_SWITCH, 555, 100, S_SLEEP, NULL));
    apply(s, ev(90 * MS, GCS_SCHEDTRACE_FUTEX_ENTER, 101, 0, 1 | 128, NULL));
    apply(s, ev(90 * MS + 1, GCS_SCHEDTRACE_FUTEX_EXIT, 101, 0, 0, NULL));
    apply(s, ev(91 * MS, GCS_SCHEDTRACE_SWITCH, 101, 0, S_SLEEP, NULL));
    apply(s, ev(95 * MS, GCS_SCHEDTRACE_EXIT, 101, 0, 0, "spin-0"));
    apply(s, ev(96 * MS, GCS_SCHEDTRACE_SWITCH, 101, 0, 0x10, NULL)); /* after exit: ignored */
    return s;
}

static void test_states_scenario(void **state)
{
    (void)state;
    gcs_schedtrace_states *s = scenario();
    gcs_schedtrace_class rules[1];
    gcs_err err;
    assert_int_equal(gcs_schedtrace_class_parse("spin=spin-*", &rules[0], &err), 0);
    gcs_schedtrace_states_finish(s, 100 * MS, rules, 1);

    size_t n;
    const gcs_schedtrace_thread *th = gcs_schedtrace_states_threads(s, &n);
    assert_int_equal(n, 2); /* 555 and 557 were never followed */
    assert_int_equal(th[0].tid, 100);
    assert_string_equal(th[0].cls, "main");
    assert_true(th[0].first);
    assert_int_equal(th[0].ns[GCS_SCHEDTRACE_RUNNING], 40 * MS + 19 * MS);
    assert_int_equal(th[0].ns[GCS_SCHEDTRACE_SLEEPING], 40 * MS);
    assert_int_equal(th[0].ns[GCS_SCHEDTRACE_RUNNABLE], 1 * MS);
    assert_int_equal(th[0].ns[GCS_SCHEDTRACE_FUTEX], 0);
    assert_int_equal(th[0].end_ns, 100 * MS);

    assert_int_equal(th[1].tid, 101);
    assert_int_equal(th[1].parent_tid, 100);
    assert_string_equal(th[1].name, "spin-0");
    assert_string_equal(th[1].cls, "spin");
    assert_int_equal(th[1].start_ns, 10 * MS);
    assert_int_equal(th[1].ns[GCS_SCHEDTRACE_RUNNING], 19 * MS + 9 * MS + 16 * MS);
    assert_int_equal(th[1].ns[GCS_SCHEDTRACE_FUTEX], 29 * MS);
    assert_int_equal(th[1].ns[GCS_SCHEDTRACE_RUNNABLE], 2 * MS + 1 * MS + 5 * MS);
    assert_int_equal(th[1].ns[GCS_SCHEDTRACE_SLEEPING], 4 * MS);
    assert_int_equal(th[1].futex_waits, 1);
    assert_int_equal(th[1].switches_in, 3);
    assert_int_equal(th[1].state, GCS_SCHEDTRACE_EXITED);
    assert_int_equal(th[1].end_ns, 95 * MS);
    /* Every nanosecond of a thread's life is in exactly one state. */
    for (size_t i = 0; i < n; i++) {
        uint64_t sum = 0;
        for (int k = 0; k < GCS_SCHEDTRACE_TSTATE_COUNT; k++)
            sum += th[i].ns[k];
        assert_int_equal(sum, th[i].end_ns - th[i].start_ns);
    }
    gcs_schedtrace_states_free(s);
}

/* The same scenario through the trace writer and back through the reader:
 * the file carries the states that gcscale bottle/stack will read. */
static void test_states_write_and_read_back(void **state)
{
    (void)state;
    gcs_schedtrace_states *s = scenario();
    gcs_schedtrace_states_finish(s, 100 * MS, NULL, 0);
    char path[] = "/tmp/test_schedtrace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gcs_err err;
    size_t skipped = 99;
    assert_int_equal(gcs_schedtrace_write(s, path, "prog --arg", 100 * MS, &skipped, &err), 0);
    assert_int_equal(skipped, 0);
    gcs_trace *t = gcs_trace_read(path, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_string_equal(t->source, "sched");
    assert_string_equal(t->command, "prog --arg");
    assert_int_equal(t->nthreads, 2);
    assert_int_equal(t->end_ns, 100 * MS);
    assert_string_equal(t->threads[0].cls, "main");
    assert_string_equal(t->threads[1].cls, "worker");
    assert_string_equal(t->threads[1].name, "spin-0");
    assert_true(t->threads[1].exited);
    assert_int_equal(t->threads[1].exit_ns, 95 * MS);
    assert_false(t->threads[0].exited);

    /* Worker 101's events: runnable->preempted at 10, running 12,
     * blocked-lock 31, preempted 60 (woken, waiting for a CPU), running 61,
     * preempted 70, running 75, blocked-other 91 (asleep), exited 95. */
    static const struct { uint64_t t; gcs_trace_state s; } want[] = {
        {10 * MS, GCS_TRACE_PREEMPTED}, {12 * MS, GCS_TRACE_RUNNING}, {31 * MS, GCS_TRACE_BLOCKED_LOCK},
        {60 * MS, GCS_TRACE_PREEMPTED}, {61 * MS, GCS_TRACE_RUNNING}, {70 * MS, GCS_TRACE_PREEMPTED},
        {75 * MS, GCS_TRACE_RUNNING},       {91 * MS, GCS_TRACE_BLOCKED_OTHER}, {95 * MS, GCS_TRACE_EXITED},
    };
    const gcs_trace_thread *w = &t->threads[1];
    assert_int_equal(w->nevents, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < w->nevents; i++) {
        const gcs_trace_event *e = &t->events[w->first_event + i];
        assert_int_equal(e->t_ns, want[i].t);
        assert_int_equal(e->state, want[i].s);
    }
    /* Main runs from its start, so its first event is the sleep at 40. */
    const gcs_trace_thread *m = &t->threads[0];
    assert_true(m->nevents >= 1);
    assert_int_equal(t->events[m->first_event].t_ns, 40 * MS);
    assert_int_equal(t->events[m->first_event].state, GCS_TRACE_BLOCKED_OTHER);
    gcs_trace_free(t);
    unlink(path);
    gcs_schedtrace_states_free(s);
}

/* The kernel reuses thread ids: a second thread with the id of one that
 * exited is a new record; the file keeps the later one. */
static void test_states_tid_reuse(void **state)
{
    (void)state;
    gcs_err err;
    gcs_schedtrace_states *s = gcs_schedtrace_states_new(&err);
    assert_int_equal(gcs_schedtrace_states_add(s, 10, "main", GCS_SCHEDTRACE_SLEEPING, 0, &err), 0);
    apply(s, ev(1 * MS, GCS_SCHEDTRACE_FORK, 10, 11, 0, "a"));
    apply(s, ev(2 * MS, GCS_SCHEDTRACE_EXIT, 11, 0, 0, "a"));
    apply(s, ev(3 * MS, GCS_SCHEDTRACE_FORK, 10, 11, 0, "b"));
    apply(s, ev(4 * MS, GCS_SCHEDTRACE_SWITCH, 0, 11, 0, NULL));
    gcs_schedtrace_states_finish(s, 5 * MS, NULL, 0);
    size_t n;
    const gcs_schedtrace_thread *th = gcs_schedtrace_states_threads(s, &n);
    assert_int_equal(n, 3);
    assert_ptr_equal(gcs_schedtrace_states_find(s, 11), &th[2]);
    assert_int_equal(th[2].ns[GCS_SCHEDTRACE_RUNNING], 1 * MS);
    assert_int_equal(th[0].ns[GCS_SCHEDTRACE_SLEEPING], 5 * MS);
    char path[] = "/tmp/test_schedtrace_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    size_t skipped = 0;
    assert_int_equal(gcs_schedtrace_write(s, path, NULL, 5 * MS, &skipped, &err), 0);
    assert_int_equal(skipped, 1);
    gcs_trace *t = gcs_trace_read(path, &err);
    assert_non_null(t);
    assert_int_equal(t->nthreads, 2);
    assert_string_equal(t->threads[1].name, "b");
    gcs_trace_free(t);
    unlink(path);
    gcs_schedtrace_states_free(s);
}

/* --pid lists threads from /proc after enabling the events, so the creation
 * of a thread already added may still come in: it must not add it twice. */
static void test_states_fork_of_known_thread(void **state)
{
    (void)state;
    gcs_err err;
    gcs_schedtrace_states *s = gcs_schedtrace_states_new(&err);
    assert_int_equal(gcs_schedtrace_states_add(s, 20, "leader", GCS_SCHEDTRACE_SLEEPING, 5 * MS, &err), 0);
    assert_int_equal(gcs_schedtrace_states_add(s, 21, "w", GCS_SCHEDTRACE_FUTEX, 5 * MS, &err), 0);
    assert_int_equal(gcs_schedtrace_states_add(s, 21, "w", GCS_SCHEDTRACE_FUTEX, 5 * MS, &err), 0);
    apply(s, ev(4 * MS, GCS_SCHEDTRACE_FORK, 20, 21, 0, "leader"));
    apply(s, ev(6 * MS, GCS_SCHEDTRACE_WAKEUP, 21, 0, 0, NULL)); /* ends the futex wait seen in /proc */
    apply(s, ev(7 * MS, GCS_SCHEDTRACE_SWITCH, 0, 21, 0, NULL));
    gcs_schedtrace_states_finish(s, 10 * MS, NULL, 0);
    size_t n;
    const gcs_schedtrace_thread *th = gcs_schedtrace_states_threads(s, &n);
    assert_int_equal(n, 2);
    assert_string_equal(th[0].cls, "main");
    assert_string_equal(th[1].cls, "worker");
    assert_int_equal(th[1].ns[GCS_SCHEDTRACE_FUTEX], 1 * MS);
    assert_int_equal(th[1].ns[GCS_SCHEDTRACE_RUNNABLE], 1 * MS);
    assert_int_equal(th[1].ns[GCS_SCHEDTRACE_RUNNING], 3 * MS);
    gcs_schedtrace_states_free(s);
}

/* Many threads: the tid table grows and every lookup still works. */
static void test_states_many_threads(void **state)
{
    (void)state;
    gcs_err err;
    gcs_schedtrace_states *s = gcs_schedtrace_states_new(&err);
    assert_int_equal(gcs_schedtrace_states_add(s, 1, "init", GCS_SCHEDTRACE_RUNNING, 0, &err), 0);
    for (int i = 2; i < 3000; i++)
        apply(s, ev((uint64_t)i, GCS_SCHEDTRACE_FORK, 1, i * 7919 % 100003 + 2, 0, "t"));
    size_t n;
    gcs_schedtrace_states_threads(s, &n);
    assert_int_equal(n, 2999);
    for (int i = 2; i < 3000; i++)
        assert_non_null(gcs_schedtrace_states_find(s, i * 7919 % 100003 + 2));
    assert_null(gcs_schedtrace_states_find(s, 100004 + 7));
    gcs_schedtrace_states_free(s);
}


/* ---- the CPUs' queues and their merge ------------------------------------------ */

typedef struct merged {
    uint64_t t[64];
    int32_t tid[64];
    int n, fail_at;
} merged;

static int collect(void *ctx, const gcs_schedtrace_event *ev, gcs_err *err)
{
    merged *m = ctx;
    if (m->n == m->fail_at) {
        gcs_err_set(err, "stop");
        return -1;
    }
    m->t[m->n] = ev->t_ns;
    m->tid[m->n++] = ev->tid;
    return 0;
}

static void push(gcs_schedtrace_queue *q, uint64_t t, int32_t tid)
{
    gcs_schedtrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.t_ns = t;
    ev.tid = tid;
    assert_int_equal(_gcs_schedtrace_queue_push(q, &ev), 0);
}

static void test_merge_order(void **state)
{
    (void)state;
    gcs_schedtrace_queue a = {0}, b = {0}, c = {0};
    gcs_schedtrace_queue *qs[3] = {&a, &b, &c};
    int heap[3];
    gcs_err err;
    /* a: in order; b: a late event (25 after 30) and a tie with a (20);
     * c: empty at first. */
    push(&a, 10, 1); push(&a, 20, 2); push(&a, 40, 3);
    push(&b, 20, 11); push(&b, 30, 12); push(&b, 25, 13); push(&b, 30, 14);
    merged m = {.fail_at = -1};
    assert_int_equal(_gcs_schedtrace_merge(qs, heap, 3, 30, collect, &m, &err), 0);
    const int32_t want1[] = {1, 2, 11, 13, 12, 14};
    assert_int_equal(m.n, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(m.tid[i], want1[i]); /* ties: lower queue first, then buffer order */
    /* What is later than the limit stays, and later pushes join it. */
    push(&c, 35, 21); push(&b, 50, 15); push(&a, 45, 4);
    m.n = 0;
    assert_int_equal(_gcs_schedtrace_merge(qs, heap, 3, UINT64_MAX, collect, &m, &err), 0);
    const int32_t want2[] = {21, 3, 4, 15};
    assert_int_equal(m.n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(m.tid[i], want2[i]);
    assert_int_equal(a.n - a.head + b.n - b.head + c.n - c.head, 0);
    _gcs_schedtrace_queue_free(&a);
    _gcs_schedtrace_queue_free(&b);
    _gcs_schedtrace_queue_free(&c);
}

static void test_merge_many_and_errors(void **state)
{
    (void)state;
    enum { NQ = 5, PER = 3000 };
    gcs_schedtrace_queue q[NQ];
    gcs_schedtrace_queue *qs[NQ];
    int heap[NQ];
    gcs_err err;
    memset(q, 0, sizeof q);
    for (int i = 0; i < NQ; i++)
        qs[i] = &q[i];
    /* Times i*NQ + queue, pushed with every 7th pair swapped (late events),
     * in rounds, the way the tracer drains: the queues grow, slide and are
     * reused across merges. */
    uint64_t last = 0;
    long total = 0;
    for (int round = 0; round < 4; round++) {
        for (int k = 0; k < PER; k++) {
            int i = round * PER + k;
            int j = (k % 7 == 0 && k + 1 < PER) ? i + 1 : (k % 7 == 1 ? i - 1 : i);
            for (int c = 0; c < NQ; c++)
                push(&q[c], (uint64_t)j * NQ + (uint64_t)c, c);
        }
        merged m = {.fail_at = -1};
        uint64_t limit = (uint64_t)(round + 1) * PER * NQ - 2 * NQ;
        /* collect() holds 64: feed in slices of at most 64 events. */
        for (;;) {
            m.n = 0;
            uint64_t slice = last + 60 < limit ? last + 60 : limit;
            assert_int_equal(_gcs_schedtrace_merge(qs, heap, NQ, slice, collect, &m, &err), 0);
            for (int i = 0; i < m.n; i++) {
                assert_true(m.t[i] >= last);
                last = m.t[i];
            }
            total += m.n;
            if (slice == limit)
                break;
            last = slice;
        }
    }
    merged m = {.fail_at = 3};
    assert_int_equal(_gcs_schedtrace_merge(qs, heap, NQ, UINT64_MAX, collect, &m, &err), -1);
    assert_string_equal(err.msg, "stop");
    assert_int_equal(m.n, 3);
    long left = 0;
    for (int i = 0; i < NQ; i++)
        left += (long)(q[i].n - q[i].head);
    assert_int_equal(total + 3 + left, 4L * PER * NQ); /* nothing lost, nothing twice */
    for (int i = 0; i < NQ; i++)
        _gcs_schedtrace_queue_free(&q[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_sched_switch),
        cmocka_unit_test(test_futex_filter),
        cmocka_unit_test(test_merge_order),
        cmocka_unit_test(test_merge_many_and_errors),
        cmocka_unit_test(test_parse_fork_two_kernels),
        cmocka_unit_test(test_parse_syscalls),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_classification),
        cmocka_unit_test(test_class_parse),
        cmocka_unit_test(test_states_scenario),
        cmocka_unit_test(test_states_write_and_read_back),
        cmocka_unit_test(test_states_tid_reuse),
        cmocka_unit_test(test_states_fork_of_known_thread),
        cmocka_unit_test(test_states_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
