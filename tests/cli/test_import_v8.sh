#!/usr/bin/env bash
# test_import_v8.sh -- V8 heap snapshots imported: the committed snapshots of
# tests/data/v8 (made by make.sh with a real node: a list, a binary tree, a
# random graph) import with graphs.js's objects (exact edge counts between
# them: tests/test_v8snap.c); snapshot info, predict and gc-bench take a
# snapshot directly; a list is seen as the heap's span; and damaged snapshots give
# one line naming the offset or the field, exit 2 and no output file.
. "$(dirname "$0")/lib.sh"

D=tests/data/v8
DEV=data/machines/dev-2core-kvm.json
gunzip -c "$D/list-10000.heapsnapshot.gz" > "$TMP/list.heapsnapshot"

expect_ok "import a gzip'd V8 snapshot" "$GCSCALE" snapshot import "$D/list-10000.heapsnapshot.gz" -o "$TMP/list.snap"
expect_grep "... the report names the format and what was dropped" \
    "V8 heap snapshot, gzip, [0-9]+ bytes\): [0-9]+ nodes, [0-9]+ edges; dropped [1-9][0-9]* weak" "$TMP/err"
expect_ok "info on the snapshot" "$GCSCALE" snapshot info "$TMP/list.snap" --json --types 1000
expect_jq "... source v8, an order the dump did not give" '.source == "v8" and .layout == "unknown-order"' "$TMP/out"
expect_jq "... exactly 10000 ListNode objects of 40 bytes" \
    '[.types[] | select(.type == "ListNode")] | .[0].objects == 10000 and .[0].bytes == 400000' "$TMP/out"
expect_jq "... with next, map and __proto__: 3 edges each but the last's next (null)" \
    '[.types[] | select(.type == "ListNode")] | .[0].edges == 30000' "$TMP/out"
expect_jq "... one root, every object reachable, the list 10000 levels deep" \
    '.roots == 1 and .reachable == .objects and .depth >= 10001' "$TMP/out"
cp "$TMP/out" "$TMP/snap.json"
expect_ok "info on the plain snapshot directly" "$GCSCALE" snapshot info "$TMP/list.heapsnapshot" --json
expect_jq "... the same objects as the import" ".objects == $(jq .objects "$TMP/snap.json")" "$TMP/out"
expect_ok "--format v8" "$GCSCALE" snapshot import "$TMP/list.heapsnapshot" --format v8 -o "$TMP/list2.snap"
expect_ok "... the same file as from the gzip'd snapshot" cmp "$TMP/list.snap" "$TMP/list2.snap"

expect_ok "the tree" "$GCSCALE" snapshot info "$D/tree-14.heapsnapshot.gz" --json --types 1000
expect_jq "... 2^14 - 1 TreeNode objects" '[.types[] | select(.type == "TreeNode")] | .[0].objects == 16383' "$TMP/out"
expect_ok "the random graph" "$GCSCALE" snapshot info "$D/random-5000-4.heapsnapshot.gz" --json --types 1000
expect_jq "... 5000 RandNode objects" '[.types[] | select(.type == "RandNode")] | .[0].objects == 5000' "$TMP/out"

expect_ok "predict on the list snapshot" "$GCSCALE" predict --machine "$DEV" "$D/list-10000.heapsnapshot.gz" --threads 1,2 --json
# The snapshot is node's own ~39000 objects beside the 10000 ListNode: as a
# whole it speeds up (predicted 1.17 at P = 2; gcscale's re-mark of it,
# gc-bench --snapshot --reps 21, measured 1.43 and 1.59 on 2026-11-28), so
# what is checked is that the model sees the list: its chain is the heap's
# depth, and the span costs the speedup what it costs no tree (the tree
# fixture loses 0.004 to it).  (This check read "speedup <= 1.05" and had
# failed unseen since the model's span changed: its "not ok" line was glued
# to a diagnostic without a newline; scripts/run-tests now holds each
# script to its plan.)
expect_jq "... the list is the heap's span (depth >= 10000, lost_span >= 0.1 at P = 2)" \
    '.inputs.depth >= 10000 and .rows[1].P == 2 and .rows[1].lost_span >= 0.1' "$TMP/out"
expect_ok "gc-bench re-marks the imported tree" \
    "$GCSCALE" gc-bench --snapshot "$D/tree-14.heapsnapshot.gz" --threads 1 --reps 5 --json

# bad input: one line naming the offset or the field, exit 2, no output file
head -c 1000000 "$TMP/list.heapsnapshot" > "$TMP/trunc.heapsnapshot"
expect_exit 2 "a truncated snapshot" "$GCSCALE" snapshot import "$TMP/trunc.heapsnapshot" -o "$TMP/bad.snap"
expect_grep "... names the offset" "trunc.heapsnapshot: offset 1000000: truncated snapshot" "$TMP/err"
expect_ok "... and leaves no output file" test ! -e "$TMP/bad.snap"
sed '1s/"self_size"/"size"/' "$TMP/list.heapsnapshot" > "$TMP/meta.heapsnapshot"
expect_exit 2 "meta without self_size" "$GCSCALE" snapshot import "$TMP/meta.heapsnapshot" --format v8 -o "$TMP/bad.snap"
expect_grep "... names the field" "offset 12: snapshot.meta: node_fields lacks \"self_size\"" "$TMP/err"
sed '0,/^"edges":\[[0-9]*,[0-9]*,[0-9]*/s//"edges":[1,1,999999999/' "$TMP/list.heapsnapshot" > "$TMP/edge.heapsnapshot"
expect_exit 2 "an edge pointing outside the node array" "$GCSCALE" snapshot import "$TMP/edge.heapsnapshot" -o "$TMP/bad.snap"
expect_grep "... names the offset and the node array" \
    "edge.heapsnapshot: offset [0-9]+: edges: to_node 999999999 is outside the node array \(49208 nodes of 7 fields\)" \
    "$TMP/err"
echo "1..$_n"
