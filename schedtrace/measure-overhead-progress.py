#!/usr/bin/env python3
"""measure-overhead-progress.py -- what tracing from the start costs a run, in
the run's own progress: PAIRS pairs of runs of COMMAND, plain and under
`gcscale trace` (alternating which goes first), and for each the work done
at fixed times after launch, compared within each pair.  Separate runs'
wall and CPU times (measure-overhead.sh) also move with the machine's load
at their end and with each JVM's heap sizing; this counts work done by a
given time, start included, from the program's own counter.

  schedtrace/measure-overhead-progress.py GCSCALE PAIRS -- COMMAND...

COMMAND prints lines "T COUNT" on stdout, T in CLOCK_MONOTONIC nanoseconds
(Java's System.nanoTime() on Linux), COUNT the work done so far, and ends by
itself; tests/progs/AllocRate.java with a SECONDS argument does:

  javac -d /tmp/ar tests/progs/AllocRate.java
  schedtrace/measure-overhead-progress.py build/gcscale 10 -- java \\
      -XX:+UseParallelGC -XX:ParallelGCThreads=2 -Xmx200m -cp /tmp/ar AllocRate 2 100 12

The times: 1, 2, 4 and 8 s after launch and 1 s before the plain runs' last
progress line.  Run as root.  docs/schedtrace.md, "Overhead"."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time

from overhead_common import die, summary, wait_release


def run(cmd):
    """The progress points (T, COUNT) of one run and its launch time."""
    wait_release()
    t0 = time.monotonic_ns()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd[:3])} ... exited {p.returncode}")
    pts = [tuple(map(int, l.split())) for l in p.stdout.splitlines() if len(l.split()) == 2]
    if not pts:
        die("COMMAND printed no progress")
    return t0, pts


def main():
    argv = sys.argv[1:]
    if "--" not in argv or len(argv[:argv.index("--")]) != 2 or not argv[argv.index("--") + 1:]:
        die("usage: measure-overhead-progress.py GCSCALE PAIRS -- COMMAND...")
    gcscale, cmd = argv[0], argv[argv.index("--") + 1:]
    try:
        pairs = int(argv[1])
    except ValueError:
        die("PAIRS is a number")
    if pairs < 2:
        die("PAIRS must be at least 2")
    tmp = tempfile.mkdtemp(prefix="ovprogress.")
    atexit.register(shutil.rmtree, tmp, True)
    trace = os.path.join(tmp, "t.trace")
    runs = {"plain": [], "traced": []}
    for i in range(pairs):
        for kind in (("plain", "traced") if i % 2 == 0 else ("traced", "plain")):
            full = cmd if kind == "plain" else [gcscale, "trace", "-q", "-o", trace, "--"] + cmd
            runs[kind].append(run(full))
    last = min(pts[-1][0] - t0 for t0, pts in runs["plain"]) / 1e9
    marks = [m for m in (1, 2, 4, 8) if m < last - 1] + [last - 1]

    def done_by(t0, pts, m):
        before = [c for t, c in pts if t <= t0 + m * 1e9]
        return before[-1] if before else 0

    print("# pair kind " + " ".join(f"at_{m:.3g}s" for m in marks))
    for i in range(pairs):
        for kind in ("plain", "traced"):
            t0, pts = runs[kind][i]
            print(i + 1, kind, " ".join(str(done_by(t0, pts, m)) for m in marks))
    for m in marks:
        ratios = [done_by(*t, m) / done_by(*p, m) for p, t in zip(runs["plain"], runs["traced"]) if done_by(*p, m)]
        if len(ratios) < 2:
            continue
        print(summary(f"{m:.3g} s after launch: traced/plain progress", ratios))


if __name__ == "__main__":
    main()
