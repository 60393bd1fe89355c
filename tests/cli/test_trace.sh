#!/usr/bin/env bash
# test_trace.sh -- gcscale trace on a real multi-threaded program
# (tests/progs/threads.c, compiled here): its threads, names and classes,
# futex waits as blocked-lock, nanosleep as blocked-other, each thread's
# running time against the CPU time the thread measured itself, exits, the
# exit status; --pid attach and Ctrl-C; bad input and missing permissions
# give one line on stderr and exit 2.
#
# Tracing needs root and the kernel's scheduler tracepoints.  Where they
# cannot be used, the tracing tests are reported as "# SKIP" with the reason
# gcscale gave (the input checks still run).
. "$(dirname "$0")/lib.sh"

skip() { # description reason
    _n=$((_n + 1))
    echo "ok $_n - $1 # SKIP $2"
}

# ---- bad input: checked before any tracing ------------------------------------
expect_ok "trace --help" "$GCSCALE" trace --help
expect_grep "help shows both forms" "gcscale trace \[options\] --pid PID" "$TMP/out"
expect_exit 2 "no program and no --pid" "$GCSCALE" trace
expect_exit 2 "unknown option" "$GCSCALE" trace --bogus -- true
expect_exit 2 "--class without '='" "$GCSCALE" trace --class spin -- true
expect_grep "names the expected form" "NAME=PATTERN" "$TMP/err"
expect_exit 2 "--class with an empty pattern" "$GCSCALE" trace --class spin= -- true
expect_exit 2 "--class with a bad name" "$GCSCALE" trace --class 'a b=x*' -- true
expect_exit 2 "--pid of a process that does not exist" "$GCSCALE" trace --pid 2147483646
expect_grep "says which" "no process 2147483646" "$TMP/err"
expect_exit 2 "--pid 0" "$GCSCALE" trace --pid 0
expect_exit 2 "--pid and a program" "$GCSCALE" trace --pid 1 -- true
expect_exit 2 "bad --buffer-size" "$GCSCALE" trace --buffer-size 1 -- true
expect_exit 2 "-o in a directory that does not exist" "$GCSCALE" trace -o "$TMP/no/such/dir/t.trace" -- true
# -o naming a directory (or a dangling link) can never be written: refused
# before the program runs, not after it has been traced.
mkdir "$TMP/outdir"
expect_exit 2 "-o naming a directory" "$GCSCALE" trace -o "$TMP/outdir" -- touch "$TMP/ran"
expect_grep "says it is a directory" "-o .*/outdir: cannot write: is a directory" "$TMP/err"
[ ! -e "$TMP/ran" ]; _report $? "-o naming a directory: the program did not run"
ln -s "$TMP/no/such/file" "$TMP/dangling"
expect_exit 2 "-o naming a dangling symbolic link" "$GCSCALE" trace -o "$TMP/dangling" -- touch "$TMP/ran"
[ ! -e "$TMP/ran" ]; _report $? "-o naming a dangling link: the program did not run"

# ---- without the permission --------------------------------------------------------
# As an unprivileged user (when there is one and it may run the binary).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$GCSCALE" --version >/dev/null 2>&1; then
    # A directory nobody may write in, so that the output check passes.
    chmod 711 "$TMP" && mkdir "$TMP/np" && chmod 1777 "$TMP/np"
    expect_exit 2 "unprivileged: one line, exit 2" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups "$GCSCALE" trace -o "$TMP/np/t.trace" -- true
    expect_grep "unprivileged: says what is needed" "needs root, or CAP_PERFMON" "$TMP/err"
    [ -z "$(ls -A "$TMP/np")" ]; _report $? "unprivileged: no file written"
else
    for d in "unprivileged: one line, exit 2" "unprivileged: says what is needed" "unprivileged: no file written"; do
        skip "$d" "not root, no setpriv, no user nobody, or nobody cannot run $GCSCALE"
    done
fi

# ---- tracing -----------------------------------------------------------------------------
TRACING_TESTS=("traces a program, returns its exit status" "the trace has the program's 4 threads"
    "threads named by pthread_setname_np get --class spin" "the first thread is class main"
    "header: source sched and the command" "every thread exited"
    "workers waited on the mutex: blocked-lock >= 0.3 s each" "main slept in nanosleep: blocked-other >= 0.6 s"
    "running time matches each thread's CPU time" "a program that cannot be run: exit 2"
    "a program killed by a signal: 128+N" "--pid attaches to a running process until it exits"
    "--pid: every thread, in the state /proc shows" "--pid: Ctrl-C stops and writes the file"
    "gcscale bottle reads the trace" "the release in the background ends"
    "measure-overhead-steady.py: usage" "measure-overhead-steady.py: traced and untraced windows of one run"
    "measure-overhead-steady.py: a rate that does not change gives 1")
reason=""
if ! "$GCSCALE" trace -q -o "$TMP/probe.trace" -- true 2>"$TMP/probe.err"; then
    reason="tracing unavailable here: $(head -1 "$TMP/probe.err")"
elif ! cc -O2 -pthread -o "$TMP/threads" tests/progs/threads.c 2>"$TMP/cc.err"; then
    reason="cannot compile tests/progs/threads.c: $(head -1 "$TMP/cc.err")"
fi
if [ -n "$reason" ]; then
    echo "# SKIP: $reason"
    for d in "${TRACING_TESTS[@]}"; do skip "$d" "$reason"; done
    echo "1..$_n"
    exit 0
fi

steal() { awk '/^cpu /{print $9}' /proc/stat; } # USER_HZ ticks the hypervisor took, all CPUs

# threads 3 workers, 30 ms of spinning each, main holds the mutex 800 ms, exit 3
T="$TMP/t.trace"
s0=$(steal)
"$GCSCALE" trace -o "$T" --class spin='spin-*' -- "$TMP/threads" 3 30 800 3 >"$TMP/prog.out" 2>"$TMP/trace.err"
rc=$?
s1=$(steal)
[ $rc -eq 3 ] && grep -Eq "^gcscale trace: wrote $T: [0-9]+ threads, .* 0 lost" "$TMP/trace.err"
_report $? "traces a program, returns its exit status"
[ $rc -eq 3 ] || { echo "# exit $rc"; sed 's/^/#   /' "$TMP/trace.err"; }

# Per thread: tid class name running blocked-lock blocked-other exited (seconds).
summarize() {
    awk '$1=="thread" { tid=$2; cls[tid]=$4; name[tid]=$5; st[tid]="running"; last[tid]=$3; order[++n]=tid; next }
         $1=="e" { tid=$3; tm[tid, st[tid]] += $2 - last[tid]; last[tid]=$2; st[tid]=$4; next }
         $1=="end" { for (i=1; i<=n; i++) { t=order[i]; if (st[t] != "exited") tm[t, st[t]] += $2 - last[t];
                     printf "%s %s %s %.6f %.6f %.6f %s\n", t, cls[t], name[t], tm[t,"running"]/1e9,
                            tm[t,"blocked-lock"]/1e9, tm[t,"blocked-other"]/1e9, st[t]=="exited" ? "exited" : "alive" } }' "$1"
}
# A gcscale built with ThreadSanitizer starts a runtime thread in the child
# before it execs the program: that thread (named gcscale) is not the program's.
summarize "$T" | awk '$3 != "gcscale"' >"$TMP/sum"
sed 's/^/# /' "$TMP/sum"
[ "$(wc -l <"$TMP/sum")" -eq 4 ]; _report $? "the trace has the program's 4 threads"
[ "$(awk '$2=="spin" && $3 ~ /^spin-[0-2]$/' "$TMP/sum" | wc -l)" -eq 3 ]
_report $? "threads named by pthread_setname_np get --class spin"
awk 'NR==1 { exit !($2=="main" && $3=="threads") }' "$TMP/sum"; _report $? "the first thread is class main"
grep -q "^source sched$" "$T" && grep -q "^command $TMP/threads 3 30 800 3$" "$T"
_report $? "header: source sched and the command"
[ "$(awk '$7=="exited"' "$TMP/sum" | wc -l)" -eq 4 ]; _report $? "every thread exited"
[ "$(awk '$2=="spin" && $5 >= 0.3' "$TMP/sum" | wc -l)" -eq 3 ]
_report $? "workers waited on the mutex: blocked-lock >= 0.3 s each"
awk '$2=="main" { exit !($6 >= 0.6) }' "$TMP/sum"; _report $? "main slept in nanosleep: blocked-other >= 0.6 s"

# The program prints "cpu TID NAME NS" per thread (CLOCK_THREAD_CPUTIME_ID at
# its end).  Allowed difference: 5 ms + 10 %, plus the time the hypervisor
# stole from the CPUs meanwhile (a thread on a stolen vCPU is on a CPU for
# the guest kernel's scheduler, but its CPU time does not advance).
stolen=$(awk -v a="$s0" -v b="$s1" 'BEGIN { print (b - a) / 100 }')
awk -v stolen="$stolen" 'FNR==NR { if ($1=="cpu") cpu[$2]=$4/1e9; next }
     ($1 in cpu) { d = $4 - cpu[$1]; if (d < 0) d = -d; tol = 0.005 + 0.1 * cpu[$1] + stolen;
                   printf "# tid %s running %.4f s, CPU time %.4f s, tolerance %.4f s\n", $1, $4, cpu[$1], tol;
                   if (d > tol) bad++; seen++ }
     END { exit !(seen == 4 && bad == 0) }' "$TMP/prog.out" "$TMP/sum"
_report $? "running time matches each thread's CPU time"

expect_exit 2 "a program that cannot be run: exit 2" "$GCSCALE" trace -q -o "$TMP/x.trace" -- "$TMP/no-such-program"
"$GCSCALE" trace -q -o "$TMP/sig.trace" -- sh -c 'kill -TERM $$' 2>/dev/null
rc=$?
[ $rc -eq 143 ] && grep -q "^e .* exited$" "$TMP/sig.trace"; _report $? "a program killed by a signal: 128+N"

# --pid: a process already running (workers spinning or waiting on the
# mutex that main holds for 1.5 s).
"$TMP/threads" 2 30 1500 0 >"$TMP/pid.out" &
tpid=$!
sleep 0.4
"$GCSCALE" trace -o "$TMP/pid.trace" --pid "$tpid" 2>"$TMP/pid.err"
rc=$?
wait "$tpid"
summarize "$TMP/pid.trace" >"$TMP/pidsum"
sed 's/^/# /' "$TMP/pidsum"
[ $rc -eq 0 ] && [ "$(awk '$7=="exited"' "$TMP/pidsum" | wc -l)" -eq 3 ]
_report $? "--pid attaches to a running process until it exits"
# Attached while main sleeps and the workers wait for the mutex (or spin):
# the workers' names are already set and they show blocked-lock time.
[ "$(awk '$3 ~ /^spin-/ && $5 > 0.5' "$TMP/pidsum" | wc -l)" -eq 2 ] && grep -q "^command --pid $tpid (threads)$" "$TMP/pid.trace"
_report $? "--pid: every thread, in the state /proc shows"

sleep 30 &
spid=$!
"$GCSCALE" trace -q -o "$TMP/int.trace" --pid "$spid" 2>"$TMP/int.err" &
gpid=$!
sleep 0.5
kill -INT "$gpid"
wait "$gpid"
rc=$?
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
[ $rc -eq 0 ] && grep -q "^thread $spid .* main sleep$" "$TMP/int.trace" && ! grep -q " exited$" "$TMP/int.trace"
_report $? "--pid: Ctrl-C stops and writes the file"

# The events' last references are released by a background process after
# the command returns (tracer.c, gcs_schedtrace_close_detached); it must end.
"$GCSCALE" trace -q -o "$TMP/rel.trace" -- true >"$TMP/rel.out"
rels=$(pgrep -x gcscale-release)
echo "# background releases running: ${rels:-none}"
alive() { # pids: those not yet exited (a zombie has ended)
    for p in "$@"; do
        st=$(awk '{ print $3 }' /proc/"$p"/stat 2>/dev/null) && [ "$st" != Z ] && echo "$p"
    done
}
for _ in $(seq 100); do [ -z "$(alive $rels)" ] && break; sleep 0.1; done
[ -z "$(alive $rels)" ]; _report $? "the release in the background ends"

# schedtrace/measure-overhead-steady.py on a program whose progress is the
# clock itself (so the rate is 1 per ns, traced or not) and which spins on
# one thread (so its CPU per unit of work is at most 1 ns per ns, near 1
# when the machine lets it run): two pairs of windows, each pair's ratio
# and the summary.  A script around the tracer: left out under TSan (the
# tracer's threads are checked above).
steady_skip=""
[ "${GCSCALE_TEST_SANITIZER:-}" = thread ] && steady_skip="a script: checked in the plain and ASan builds"
command -v python3 >/dev/null || steady_skip="no python3"
if [ -z "$steady_skip" ]; then
    expect_exit 2 "measure-overhead-steady.py: usage" python3 schedtrace/measure-overhead-steady.py "$GCSCALE" 3
    python3 schedtrace/measure-overhead-steady.py "$GCSCALE" 2.6 2 0.3 -- python3 -u -c '
import time
last = 0
while True:
    t = time.monotonic_ns()
    if t - last >= 50000000:
        print(t, t, flush=True)
        last = t' >"$TMP/steady.out" 2>"$TMP/steady.err"
    [ $? -eq 0 ] && [ "$(awk '/^[12] / && NF == 8' "$TMP/steady.out" | wc -l)" -eq 2 ]
    rc=$?
    _report $rc "measure-overhead-steady.py: traced and untraced windows of one run"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$TMP/steady.out" "$TMP/steady.err"
    awk '/^on\/off progress rate: mean/ { m = $5 + 0; ok = m > 0.99 && m < 1.01 } END { exit !ok }' "$TMP/steady.out"
    _report $? "measure-overhead-steady.py: a rate that does not change gives 1"
    awk '/^[12] / && NF == 8 { n++; ok += $5 > 0.3 && $5 <= 1.02 && $6 > 0.3 && $6 <= 1.02 && $7 > 0 }
         /^on\/off CPU per unit of work, the program.s: mean/ { p = $10 + 0 }
         /^on\/off CPU per unit of work, program and tracer: mean/ { t = $11 + 0 }
         END { exit !(n == 2 && ok == 2 && p > 0.5 && t > p) }' "$TMP/steady.out"
    _report $? "measure-overhead-steady.py: CPU per unit of work from the process clocks"
    # measure-overhead-progress.py: runs of 1.6 s whose work is the time
    # since their own start, so a traced run is behind by its tracer's start
    # alone (tens of ms at 0.6 s)
    expect_exit 2 "measure-overhead-progress.py: usage" python3 schedtrace/measure-overhead-progress.py "$GCSCALE" 2
    python3 schedtrace/measure-overhead-progress.py "$GCSCALE" 2 -- python3 -u -c '
import time
t0 = time.monotonic_ns()
while time.monotonic_ns() - t0 < 1600000000:
    t = time.monotonic_ns()
    print(t, t - t0, flush=True)
    time.sleep(0.05)' >"$TMP/progress.out" 2>"$TMP/progress.err"
    rc=$?
    [ $rc -eq 0 ] && awk '/^[12] (plain|traced) [0-9]+$/ { n++ }
        /after launch: traced\/plain progress: mean/ { m = $(NF - 6) + 0; ok = m > 0.5 && m <= 1.02 }
        END { exit !(n == 4 && ok) }' "$TMP/progress.out"
    rc=$?
    _report $rc "measure-overhead-progress.py: plain and traced runs, the work done by a time"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$TMP/progress.out" "$TMP/progress.err"
else
    skip "measure-overhead-steady.py: usage" "$steady_skip"
    skip "measure-overhead-steady.py: traced and untraced windows of one run" "$steady_skip"
    skip "measure-overhead-steady.py: a rate that does not change gives 1" "$steady_skip"
    skip "measure-overhead-steady.py: CPU per unit of work from the process clocks" "$steady_skip"
    skip "measure-overhead-progress.py: usage" "$steady_skip"
    skip "measure-overhead-progress.py: plain and traced runs, the work done by a time" "$steady_skip"
fi

if "$GCSCALE" help 2>/dev/null | grep -q "^  bottle "; then
    expect_ok "gcscale bottle reads the trace" "$GCSCALE" bottle "$T"
else
    skip "gcscale bottle reads the trace" "gcscale bottle is not built yet"
fi

echo "1..$_n"
