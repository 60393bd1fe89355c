#!/usr/bin/env python3
"""measure-overhead-steady.py -- what tracing costs a program while it runs,
without its start and end: one long run of COMMAND, `gcscale trace --pid`
switched on and off in alternate windows (on first in odd pairs, off first in
even ones), and the program's own progress rate compared between the two
halves of each pair.  Pairs of adjacent windows cancel the host's drift, and
one process has one JIT and one heap sizing, which separate runs do not.

  schedtrace/measure-overhead-steady.py GCSCALE WINDOW_S PAIRS [WARMUP_S] -- COMMAND...

COMMAND prints lines "T COUNT" on stdout: T in CLOCK_MONOTONIC nanoseconds
(Java's System.nanoTime() on Linux), COUNT the work done so far, often
(every 100 ms or so), and runs until killed; tests/progs/AllocRate.java does:

  javac -d /tmp/ar tests/progs/AllocRate.java
  schedtrace/measure-overhead-steady.py build/gcscale 6 20 -- java \\
      -XX:+UseParallelGC -XX:ParallelGCThreads=2 -Xmx200m -cp /tmp/ar AllocRate 2 100

The rate of a window is taken over its middle (1 s cut at each end: the
tracer's start and the release of its events fall there).  Prints each
pair, then the mean (its standard error) and median of the on/off ratios.

The same middles also give the CPU time the work took: the program's (its
process CPU clock, every thread, dead ones too), and in an "on" window the
tracer's as well, per unit of work, over the "off" window's.  Where the
program keeps every CPU busy, that ratio is what tracing costs its wall
time, and the host's preemptions (steal time) do not enter it, which makes
it far less noisy than the rate on this kind of VM.

Run as root (tracing needs it).  docs/schedtrace.md, "Overhead"."""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from overhead_common import die, summary, wait_release


def cpu_ns(pid):
    """The process CPU clock of pid (all its threads, the exited included),
    ns: clock_getcpuclockid's id, written out as Linux encodes it."""
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def sys_ns(pid):
    """The system time of pid's threads (the exited included), ns: where the
    kernel's own work for the trace (a record at every switch, wakeup and
    futex call of the program's threads) is counted.  Clock ticks: coarse,
    but a window's middle holds hundreds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[12]) * 1e9 / os.sysconf("SC_CLK_TCK")


def main():
    argv = sys.argv[1:]
    if "--" not in argv or len(argv[:argv.index("--")]) not in (3, 4) or not argv[argv.index("--") + 1:]:
        die("usage: measure-overhead-steady.py GCSCALE WINDOW_S PAIRS [WARMUP_S] -- COMMAND...")
    head, cmd = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    try:
        gcscale, window, pairs = head[0], float(head[1]), int(head[2])
        warmup = float(head[3]) if len(head) > 3 else 12.0
    except ValueError:
        die("WINDOW_S, PAIRS and WARMUP_S are numbers")
    margin = 1.0
    if window <= 2 * margin + 0.5 or pairs < 2 or warmup < 0:
        die("WINDOW_S must exceed 2.5 s, PAIRS be at least 2 and WARMUP_S not negative")
    tmp = tempfile.mkdtemp(prefix="ovsteady.")
    atexit.register(shutil.rmtree, tmp, True)
    progress = os.path.join(tmp, "progress.txt")
    with open(progress, "w") as out:
        prog = subprocess.Popen(cmd, stdout=out)  # a file, not a pipe: a full pipe would stall it
    time.sleep(warmup)
    windows = []
    for i in range(pairs):
        for kind in (("off", "on") if i % 2 == 0 else ("on", "off")):
            wait_release()
            tracer = None
            if kind == "on":
                tracer = subprocess.Popen([gcscale, "trace", "-q", "-p", str(prog.pid), "-o",
                                           os.path.join(tmp, "t.trace")])
            t0 = time.monotonic_ns()
            # CPU clocks at the middle's two ends: (monotonic ns, program's,
            # tracer's, program's system time)
            cpu = []
            for until in (margin, window - margin):
                time.sleep(max(0.0, t0 / 1e9 + until - time.monotonic()))
                if prog.poll() is not None:
                    die(f"COMMAND exited ({prog.returncode}) before the last window ended")
                try:
                    tracer_ns = cpu_ns(tracer.pid) if tracer else 0
                except OSError:
                    tracer_ns = None  # it has already exited: checked below
                cpu.append((time.monotonic_ns(), cpu_ns(prog.pid), tracer_ns, sys_ns(prog.pid)))
            time.sleep(max(0.0, t0 / 1e9 + window - time.monotonic()))
            t1 = time.monotonic_ns()
            if tracer:
                tracer.send_signal(signal.SIGINT)
                if tracer.wait() != 0:
                    prog.kill()
                    die("gcscale trace failed")
            if tracer and (cpu[0][2] is None or cpu[1][2] is None):
                prog.kill()
                die("gcscale trace ended before its window")
            windows.append((kind, t0, t1, cpu))
    prog.terminate()
    prog.wait()
    points = []
    with open(progress) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                points.append((int(parts[0]), int(parts[1])))

    def rate(t0, t1):
        inside = [p for p in points if t0 + margin * 1e9 <= p[0] <= t1 - margin * 1e9]
        if len(inside) < 2:
            die("COMMAND printed no progress inside a window")
        return (inside[-1][1] - inside[0][1]) / ((inside[-1][0] - inside[0][0]) / 1e9)

    def work_at(t):
        """The work done at monotonic time t, between the printed points."""
        for a, b in zip(points, points[1:]):
            if a[0] <= t <= b[0]:
                return a[1] + (b[1] - a[1]) * (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else b[1]
        die("COMMAND printed no progress around a window's middle")

    def cpu_per_work(cpu):
        """CPU ns per unit of work over the middle: the program's, the
        tracer's, the program's system time."""
        work = work_at(cpu[1][0]) - work_at(cpu[0][0])
        if work <= 0:
            die("COMMAND made no progress inside a window")
        return [(cpu[1][k] - cpu[0][k]) / work for k in (1, 2, 3)]

    ratios, cpu_ratios, prog_ratios, sys_shift = [], [], [], []
    print("# pair off_rate on_rate on/off cpu_per_work_off prog_on tracer_on cpu_on/off")
    for i in range(pairs):
        r, c = {}, {}
        for kind, t0, t1, cpu in windows[2 * i:2 * i + 2]:
            r[kind], c[kind] = rate(t0, t1), cpu_per_work(cpu)
        ratios.append(r["on"] / r["off"])
        prog_ratios.append(c["on"][0] / c["off"][0])
        cpu_ratios.append((c["on"][0] + c["on"][1]) / c["off"][0])
        sys_shift.append(1 + (c["on"][2] - c["off"][2]) / c["off"][0])
        print(f"{i + 1} {r['off']:.6g} {r['on']:.6g} {ratios[-1]:.4f} {c['off'][0]:.5g} {c['on'][0]:.5g} "
              f"{c['on'][1]:.4g} {cpu_ratios[-1]:.4f}")

    print(summary("on/off progress rate", ratios))
    print(summary("on/off CPU per unit of work, the program's", prog_ratios))
    print(summary("on/off CPU per unit of work, program and tracer", cpu_ratios))
    print(summary("1 + on - off system time per unit of work, of the off CPU", sys_shift))
    print(f"{pairs} pairs of {window:g} s windows, the middle {window - 2 * margin:g} s of each")


if __name__ == "__main__":
    main()
