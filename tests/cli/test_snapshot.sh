#!/usr/bin/env bash
# test_snapshot.sh -- gcscale snapshot info on a snapshot written by the
# collector (GCSCALE_GC_SNAPSHOT set for gcscale gc-bench): text, --json and --csv;
# corrupted, truncated and missing files give one line on stderr and exit 2.
. "$(dirname "$0")/lib.sh"

# A real snapshot: the collector writes one per collection while gc-bench
# times a depth-10 tree (2047 objects); the fixed path keeps the last one.
SNAP="$TMP/tree.snap"
expect_ok "gc-bench writes snapshots (GCSCALE_GC_SNAPSHOT)" \
    env GCSCALE_GC_SNAPSHOT="$SNAP" "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1 --reps 5


expect_ok "snapshot --help" "$GCSCALE" snapshot --help
expect_grep "help shows the usage" "gcscale snapshot info FILE" "$TMP/out"

expect_ok "info (text)" "$GCSCALE" snapshot info "$SNAP"
expect_grep "text: objects" "^objects +2047 *$" "$TMP/out"
expect_grep "text: edges" "^edges +2046 *$" "$TMP/out"
expect_grep "text: depth 11 levels" "^depth +11 *$" "$TMP/out"
expect_grep "text: one GC thread" "^gc_threads +1 *$" "$TMP/out"
expect_grep "text: bytes per node add up" "^ +0 +[0-9]+ +[0-9]+ +[0-9.]+$" "$TMP/out"

expect_ok "info --json" "$GCSCALE" snapshot info --json "$SNAP"
expect_grep "json: edges" '"edges": 2046,' "$TMP/out"
expect_grep "json: payload bytes" '"bytes": 49128,' "$TMP/out"
expect_grep "json: the file's format version" '"format_version": 3,' "$TMP/out"
# The version is the file's, not the one this build writes (a version-1
# corpus snapshot), and none for a heap dump imported on the way.
expect_ok "info on a version-1 file" "$GCSCALE" snapshot info data/corpus/dev-2core-kvm-epyc/bh-1.snap.zst
expect_grep "... says version 1" "^heap snapshot .*bh-1.snap.zst .format version 1.$" "$TMP/out"
expect_ok "info on a heap dump" "$GCSCALE" snapshot info --json tests/data/hprof/list-10000.hprof.gz
expect_grep "... no format version" '"format_version": null,' "$TMP/out"
expect_ok "info on a heap dump, text" "$GCSCALE" snapshot info tests/data/hprof/list-10000.hprof.gz
expect_grep "... says it was imported" "^heap snapshot imported from the heap dump tests/data/hprof/list-10000.hprof.gz$" "$TMP/out"

expect_ok "info --csv: one table, the graph's" "$GCSCALE" snapshot info "$SNAP" --csv
expect_grep "... names the others on stderr" "the CSV is the graph table; the others: parameters, nodes" "$TMP/err"
expect_ok "info --csv --table nodes" "$GCSCALE" snapshot info "$SNAP" --csv --table nodes
expect_grep "csv: the nodes table alone" "^node,objects,bytes,share_pct$" "$TMP/out"

# Damaged copies.
cp "$SNAP" "$TMP/flip.snap"
printf '\x07' | dd of="$TMP/flip.snap" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_exit 2 "flipped byte" "$GCSCALE" snapshot info "$TMP/flip.snap"
expect_grep "flipped byte: checksum mismatch, one line naming the file" \
    "^gcscale snapshot: .*flip.snap: checksum mismatch in section 'object addresses'" "$TMP/err"

head -c 150 "$SNAP" >"$TMP/short.snap"
expect_exit 2 "truncated file" "$GCSCALE" snapshot info "$TMP/short.snap"
expect_grep "truncated: names the section" "short.snap: truncated in section 'params'" "$TMP/err"

expect_exit 2 "missing file" "$GCSCALE" snapshot info "$TMP/no-such.snap"
expect_exit 2 "not a snapshot" "$GCSCALE" snapshot info data/machines/o2k.json

# synth: synthetic BH- and Cube-like heaps for the model
expect_ok "synth bh writes a snapshot" "$GCSCALE" snapshot synth bh --size 2000 --nodes 4 -o "$TMP/bh.snap"
expect_ok "the synthetic snapshot validates" "$GCSCALE" snapshot info "$TMP/bh.snap" --csv --table nodes
expect_grep "synth bh: node 0 holds every object (one builder thread)" '^0,[0-9]+,[0-9]+,100$' "$TMP/out"
expect_ok "synth cube spread over 4 nodes" "$GCSCALE" snapshot synth cube --size 2000 --nodes 4 -o "$TMP/cube.snap"
expect_exit 2 "synth of an unknown shape" "$GCSCALE" snapshot synth tree -o "$TMP/x.snap"
expect_exit 2 "synth without -o" "$GCSCALE" snapshot synth bh
expect_exit 2 "synth with --nodes 0" "$GCSCALE" snapshot synth bh --nodes 0 -o "$TMP/x.snap"

# reorder: the same graph in another layout
for order in depth-first breadth-first shuffle; do
    expect_ok "reorder --order $order" "$GCSCALE" snapshot reorder "$SNAP" --order $order -o "$TMP/r-$order.snap"
    expect_ok "... the result validates" "$GCSCALE" snapshot info --json "$TMP/r-$order.snap"
    expect_grep "... with the same edges" '"edges": 2046,' "$TMP/out"
    expect_grep "... and the same payload bytes" '"bytes": 49128,' "$TMP/out"
done
expect_ok "reorder breadth-first again" "$GCSCALE" snapshot reorder "$SNAP" --order breadth-first -o "$TMP/r.snap"
expect_grep "... says what came first" "2047 objects breadth-first from the roots, then 0 that no root reaches" "$TMP/err"
expect_ok "reorder --order shuffle --seed 7" "$GCSCALE" snapshot reorder "$SNAP" --order shuffle --seed 7 -o "$TMP/s7a.snap"
expect_ok "... twice" "$GCSCALE" snapshot reorder "$SNAP" --order shuffle --seed 7 -o "$TMP/s7b.snap"
expect_ok "... gives the same file" cmp "$TMP/s7a.snap" "$TMP/s7b.snap"
expect_ok "reorder of a heap dump (imported first)" \
    "$GCSCALE" snapshot reorder tests/data/hprof/list-10000.hprof.gz --order depth-first -o "$TMP/h.snap"
expect_grep "... the dump's unreachable objects come last" "objects depth-first from the roots, then 41 that no root reaches" "$TMP/err"
expect_exit 2 "reorder without --order" "$GCSCALE" snapshot reorder "$SNAP" -o "$TMP/x.snap"
expect_grep "... says which orders there are" "reorder: --order is required .depth-first, breadth-first or shuffle." "$TMP/err"
expect_exit 2 "reorder with an unknown order" "$GCSCALE" snapshot reorder "$SNAP" --order sideways -o "$TMP/x.snap"
expect_exit 2 "reorder without -o" "$GCSCALE" snapshot reorder "$SNAP" --order shuffle
expect_exit 2 "reorder of a damaged file" "$GCSCALE" snapshot reorder "$TMP/flip.snap" --order shuffle -o "$TMP/x.snap"
expect_ok "... leaves no output behind" test ! -e "$TMP/x.snap"
echo "1..$_n"
