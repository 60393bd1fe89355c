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
Run as root (tracing needs it).  docs/schedtrace.md, "Overhead"."""
import atexit
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def die(msg):
    print(f"measure-overhead-steady.py: {msg}", file=sys.stderr)
    sys.exit(2)


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
            # the last trace's events are released by a background process; wait for it
            while subprocess.run(["pgrep", "-x", "gcscale-release"], stdout=subprocess.DEVNULL).returncode == 0:
                time.sleep(0.05)
            tracer = None
            if kind == "on":
                tracer = subprocess.Popen([gcscale, "trace", "-q", "-p", str(prog.pid), "-o",
                                           os.path.join(tmp, "t.trace")])
            t0 = time.monotonic_ns()
            time.sleep(window)
            t1 = time.monotonic_ns()
            if tracer:
                tracer.send_signal(signal.SIGINT)
                if tracer.wait() != 0:
                    prog.kill()
                    die("gcscale trace failed")
            windows.append((kind, t0, t1))
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

    ratios = []
    print("# pair off_rate on_rate on/off")
    for i in range(pairs):
        r = {kind: rate(t0, t1) for kind, t0, t1 in windows[2 * i:2 * i + 2]}
        ratios.append(r["on"] / r["off"])
        print(f"{i + 1} {r['off']:.6g} {r['on']:.6g} {ratios[-1]:.4f}")
    mean, se = statistics.mean(ratios), statistics.stdev(ratios) / len(ratios) ** 0.5
    print(f"on/off progress rate: mean {mean:.4f} (SE {se:.4f}, {100 * (mean - 1):+.2f} %), "
          f"median {statistics.median(ratios):.4f}; {pairs} pairs of {window:g} s windows, "
          f"the middle {window - 2 * margin:g} s of each")


if __name__ == "__main__":
    main()
