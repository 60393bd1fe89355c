#!/usr/bin/env bash
# test_stack_runtime.sh -- speedup stacks and bottle graphs of managed
# runtimes traced from outside: recorded traces of tests/progs/Alloc.java
# (1 and 2 application threads, OpenJDK 17, ParallelGC and G1, with their
# -Xlog:gc:file=F:tn logs) and of tests/progs/work.js (node 20,
# worker_threads), committed in tests/data/runtime/ so that no JDK is needed:
# the GC term found in the trace agrees with the JVM's own pause sum (10 %),
# the components add up to N, the log gives the GC term with --gc-log,
# bottle graphs default to one box per role, threads that share a name get
# distinct boxes, and the errors and warnings of a wrong pairing.  With root,
# java and javac, a live trace checks the HotSpot preset on a fresh run.
. "$(dirname "$0")/lib.sh"
D=tests/data/runtime

log_ms() { awk '/GC\([0-9]+\) Pause/ { v = $NF; sub(/ms$/, "", v); s += v } END { printf "%.6f\n", s }' "$1"; }

for gc in parallel g1; do
    expect_ok "$gc: stack of the 1- and 2-thread runs" "$GCSCALE" stack --single "$D/$gc-1.trace" \
        --multi "$D/$gc-2.trace" --json
    cp "$TMP/out" "$TMP/$gc.json"
    expect_jq "$gc: N = 2, components add up to 2, pauses found in the trace" \
        '.stacks[0].n == 2 and (.stacks[0].sum - 2 | fabs) < 1e-9 and
         ([.stacks[0].components[]] | add - 2 | fabs) < 1e-9 and .stacks[0].pauses.source == "trace"' "$TMP/$gc.json"
    l1=$(log_ms "$D/$gc-1.log") l2=$(log_ms "$D/$gc-2.log")
    echo "# $gc: JVM log pause sums $l1 ms (1 thread), $l2 ms (2 threads)"
    expect_jq "$gc: 1-thread GC time within 10 % of the JVM's pause sum" \
        "(.stacks[0].single.gc_ms / $l1 - 1 | fabs) <= 0.10" "$TMP/$gc.json"
    expect_jq "$gc: 2-thread GC time within 10 % of the JVM's pause sum" \
        "(.stacks[0].multi.gc_ms / $l2 - 1 | fabs) <= 0.10" "$TMP/$gc.json"
done
jq -r '.stacks[0] | "# parallel: trace gc_ms \(.single.gc_ms) / \(.multi.gc_ms)"' "$TMP/parallel.json"
jq -r '.stacks[0] | "# g1: trace gc_ms \(.single.gc_ms) / \(.multi.gc_ms)"' "$TMP/g1.json"

expect_ok "--gc-log: pauses from the JVM's log" "$GCSCALE" stack --single "$D/parallel-1.trace" \
    --gc-log "$D/parallel-1.log" --multi "$D/parallel-2.trace" --gc-log "$D/parallel-2.log" --json
cp "$TMP/out" "$TMP/log.json"
l2=$(log_ms "$D/parallel-2.log")
expect_jq "--gc-log: the multi run's GC time is the log's pause sum (1 %), source log" \
    ".stacks[0].pauses.source == \"log\" and (.stacks[0].multi.gc_ms / $l2 - 1 | fabs) <= 0.01 and
     (.stacks[0].sum - 2 | fabs) < 1e-9" "$TMP/log.json"
expect_ok "text: the table names the new terms" "$GCSCALE" stack --single "$D/g1-1.trace" --multi "$D/g1-2.trace"
expect_grep "text: concurrent-gc, jit and preemption columns" "speedup +gc +concurrent-gc +jit +initialization .* preemption +other +sum" "$TMP/out"
expect_grep "text: the inputs say where the pauses come from" "g1-2\.trace +2 .* [0-9]+ from trace" "$TMP/out"
sed -E 's/^\[[0-9]+ns\]/[1.000s]/' "$D/parallel-1.log" >"$TMP/uptime.log"
expect_exit 2 "--gc-log without the tn decorator: one line, exit 2" "$GCSCALE" stack --single "$D/parallel-1.trace" \
    --gc-log "$TMP/uptime.log" --multi "$D/parallel-2.trace"
expect_grep "... and it says to log with tn" "decorator tn" "$TMP/err"
expect_exit 2 "--gc-log before any trace: usage error" "$GCSCALE" stack --gc-log "$D/parallel-1.log" \
    --single "$D/parallel-1.trace" --multi "$D/parallel-2.trace"
expect_ok "a multi run with one application thread: still computed" "$GCSCALE" stack --single "$D/parallel-1.trace" \
    --multi "$D/g1-1.trace"
expect_grep "... with a warning that it has one application thread" "warning: .*g1-1\.trace has only one application" "$TMP/err"

expect_ok "bottle of a JVM trace" "$GCSCALE" bottle "$D/g1-2.trace" --json
cp "$TMP/out" "$TMP/b.json"
expect_jq "bottle: one box per role by default (gc, gc-conc, jit, vm, mutator, main)" \
    '.group == "class" and ([.boxes[].box] | contains(["gc", "gc-conc", "jit", "vm", "mutator", "main"]))' "$TMP/b.json"
expect_ok "bottle of a node trace, one box per thread" "$GCSCALE" bottle "$D/node-2.trace" --json
cp "$TMP/out" "$TMP/n.json"
expect_jq "node: every thread is called node; the boxes are told apart by tid" \
    '([.threads[].name] | unique) == ["node"] and ([.boxes[].box] | unique | length) == (.boxes | length) and
     all(.boxes[]; .box | test("^node [0-9]+$"))' "$TMP/n.json"
expect_exit 2 "node trace without --app-class: refused in one line" "$GCSCALE" stack --single "$D/node-2.trace" \
    --multi "$D/node-2.trace"
expect_grep "... naming --app-class worker" "--app-class worker" "$TMP/err"
expect_exit 2 "trace --runtime with an unknown runtime: usage error" "$GCSCALE" trace --runtime dotnet -- true

# A live run: needs root (tracing), java and javac, and a trace that lost no
# records (on a machine busy with other work the ring buffers can overflow).
: >"$TMP/err"
if [ "$(id -u)" = 0 ] && command -v javac >/dev/null && command -v java >/dev/null &&
    javac -d "$TMP" tests/progs/Alloc.java 2>/dev/null &&
    "$GCSCALE" trace -b 64M -o "$TMP/live.trace" -- java -XX:+UseParallelGC -Xmx64m -cp "$TMP" Alloc 2 2000000 \
        2>"$TMP/err" && grep -q ", 0 lost;" "$TMP/err"; then
    awk '$1 == "thread" { print $4, substr($0, index($0, $5)) }' "$TMP/live.trace" | sort | uniq -c | sed 's/^/# /'
    grep -Eq '^thread [0-9]+ [0-9]+ gc GC Thread#[0-9]+$' "$TMP/live.trace" &&
        grep -Eq '^thread [0-9]+ [0-9]+ vm VM Thread$' "$TMP/live.trace" &&
        grep -Eq '^thread [0-9]+ [0-9]+ jit C[12] CompilerThre$' "$TMP/live.trace" &&
        [ "$(grep -Ec '^thread [0-9]+ [0-9]+ mutator app-[01]$' "$TMP/live.trace")" -eq 2 ]
    _report $? "live java run: the preset (detected from 'java') classes GC, VM, JIT and the 2 application threads"
else
    echo "ok $((_n += 1)) - # SKIP live java run (needs root, java, javac and a trace without lost records; $(tail -1 "$TMP/err" | head -c 200))"
fi
echo "1..$_n"
