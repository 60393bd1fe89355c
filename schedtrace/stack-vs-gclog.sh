#!/usr/bin/env bash
# stack-vs-gclog.sh -- the GC term gcscale finds in traces of a JVM against
# the JVM's own GC log of the same runs: for each collector and each number
# of application threads, REPEAT runs of tests/progs/Alloc.java under
# `gcscale trace` with -Xlog:gc:file=LOG:tn; prints per run the stop-the-world
# time found in the trace (gcscale stack's gc_ms), the sum of the log's pause
# times, and their difference; then the stack of each 2-thread run against
# the 1-thread run of the same repetition.
#
#   schedtrace/stack-vs-gclog.sh GCSCALE OUTDIR [REPEAT [WORK]]
#   e.g. schedtrace/stack-vs-gclog.sh build/gcscale /tmp/sv 3 100000000
#
# Needs root (tracing), java and javac.  The traces and logs stay in OUTDIR.
set -u
gcscale=${1:?usage: stack-vs-gclog.sh GCSCALE OUTDIR [REPEAT [WORK]]}
outdir=${2:?usage: stack-vs-gclog.sh GCSCALE OUTDIR [REPEAT [WORK]]}
repeat=${3:-3}
work=${4:-100000000}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$outdir/classes" || exit 2
javac -d "$outdir/classes" "$here/tests/progs/Alloc.java" || exit 2

log_ms() { awk '/GC\([0-9]+\) Pause/ { v = $NF; sub(/ms$/, "", v); s += v } END { printf "%.3f", s }' "$1"; }
gc_ms() { # TRACE1 TRACE: gc_ms of TRACE (as the multi run)
    "$gcscale" stack --single "$1" --multi "$2" --json 2>/dev/null | jq -r '.stacks[0].multi.gc_ms'
}

printf '%-9s %3s %4s %10s %10s %10s %9s\n' gc N rep wall_ms trace_gc log_gc diff_pct
for r in $(seq 1 "$repeat"); do
    for gc in Parallel G1; do
        for n in 1 2; do
            b="$outdir/${gc,,}-$n-r$r"
            "$gcscale" trace -q -b 64M -o "$b.trace" -- java -XX:+Use${gc}GC -XX:ParallelGCThreads=2 -Xmx200m \
                -Xlog:gc:file="$b.log":tn -cp "$outdir/classes" Alloc "$n" "$work" 2>"$b.err" ||
                { echo "run $b failed: $(cat "$b.err")" >&2; exit 1; }
            grep -q "lost" "$b.err" && echo "# $b: $(grep -o '[0-9]* lost' "$b.err" | head -1)"
            t=$(gc_ms "$outdir/${gc,,}-1-r$r.trace" "$b.trace")
            l=$(log_ms "$b.log")
            w=$("$gcscale" stack --single "$outdir/${gc,,}-1-r$r.trace" --multi "$b.trace" --json 2>/dev/null |
                jq -r '.stacks[0].multi.wall_ms')
            printf '%-9s %3d %4d %10.1f %10.1f %10.1f %+9.1f\n' "$gc" "$n" "$r" "$w" "$t" "$l" \
                "$(echo "100 * ($t / $l - 1)" | bc -l)"
        done
    done
done
echo
for gc in parallel g1; do
    for r in $(seq 1 "$repeat"); do
        "$gcscale" stack --single "$outdir/$gc-1-r$r.trace" --multi "$outdir/$gc-2-r$r.trace" | sed -n 2,3p
    done
done
