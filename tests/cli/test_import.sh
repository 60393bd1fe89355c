#!/usr/bin/env bash
# test_import.sh -- Java heap dumps (HPROF) imported: the committed dumps of
# tests/data/hprof (made by make.sh with a real JVM: a list, a binary tree, a
# random graph) import with exactly the objects and edges Graphs.java built,
# plain, gzip and jcmd's multi-member gzip alike; snapshot info, predict and
# gc-bench take a dump directly; a list predicts no speedup; and damaged
# dumps give one line naming the offset, exit 2 and no output file.
. "$(dirname "$0")/lib.sh"

D=tests/data/hprof
DEV=data/machines/dev-2core-kvm.json
gunzip -c "$D/list-10000.hprof.gz" > "$TMP/list.hprof"

expect_ok "import a gzip'd dump" "$GCSCALE" snapshot import "$D/list-10000.hprof.gz" -o "$TMP/list.snap"
expect_grep "... the report names the version and the id size" "HPROF 1\.0\.2, 8-byte ids, gzip" "$TMP/err"
expect_grep "... no reference leaves the dump" " 0 to objects not in the dump" "$TMP/err"
expect_ok "info on the snapshot" "$GCSCALE" snapshot info "$TMP/list.snap" --json --types 1000
expect_jq "... source hprof, the dump's address order" '.source == "hprof" and .layout == "dump-order"' "$TMP/out"
expect_jq "... exactly 10000 ListNode objects and 9999 next edges" \
    '[.types[] | select(.type == "Graphs$ListNode")] | .[0].objects == 10000 and .[0].edges == 9999' "$TMP/out"
expect_jq "... 24 bytes each (12-byte header, a compressed reference, an int)" \
    '[.types[] | select(.type == "Graphs$ListNode")] | .[0].bytes == 240000' "$TMP/out"
expect_jq "... the list is 10000 levels deep below its root" '.depth >= 10001' "$TMP/out"
expect_jq "... classes are objects (java.lang.Class)" '[.types[] | select(.type == "java.lang.Class")] | .[0].objects > 400' "$TMP/out"
cp "$TMP/out" "$TMP/snap.json"
expect_ok "info on the plain dump directly" "$GCSCALE" snapshot info "$TMP/list.hprof" --json
expect_jq "... the same objects as the import" ".objects == $(jq .objects "$TMP/snap.json")" "$TMP/out"
expect_ok "--format hprof" "$GCSCALE" snapshot import "$TMP/list.hprof" --format hprof -o "$TMP/list2.snap"
expect_ok "... the same file as from the gzip'd dump" cmp "$TMP/list.snap" "$TMP/list2.snap"

expect_ok "jcmd -gz (concatenated gzip members): the tree" "$GCSCALE" snapshot info "$D/tree-14.hprof.gz" --json --types 1000
expect_jq "... 2^14 - 1 TreeNode objects, one edge to each but the root" \
    '[.types[] | select(.type == "Graphs$TreeNode")] | .[0].objects == 16383 and .[0].edges == 16382' "$TMP/out"
expect_ok "the random graph" "$GCSCALE" snapshot info "$D/random-5000-4.hprof.gz" --json --types 1000
expect_jq "... 5000 RandNode objects with one edge each (out)" \
    '[.types[] | select(.type == "Graphs$RandNode")] | .[0].objects == 5000 and .[0].edges == 5000' "$TMP/out"
expect_jq "... 5000 RandNode[4] arrays with 20000 edges" \
    '[.types[] | select(.type == "Graphs$RandNode[]")] | .[0].objects == 5000 and .[0].edges == 20000' "$TMP/out"

expect_ok "predict on the list dump" "$GCSCALE" predict --machine "$DEV" "$D/list-10000.hprof.gz" --threads 1,2 --json
expect_jq "... a list predicts no speedup (P = 2: <= 1.05)" '.rows[1].P == 2 and .rows[1].speedup <= 1.05' "$TMP/out"
expect_ok "gc-bench re-marks the imported tree" \
    "$GCSCALE" gc-bench --snapshot "$D/tree-14.hprof.gz" --threads 1 --reps 5 --json

# bad input: one line naming the offset, exit 2, no output file
head -c 100000 "$TMP/list.hprof" > "$TMP/trunc.hprof"
expect_exit 2 "a truncated dump" "$GCSCALE" snapshot import "$TMP/trunc.hprof" -o "$TMP/bad.snap"
expect_grep "... names the offset" "trunc.hprof: offset [0-9]+: truncated dump" "$TMP/err"
expect_ok "... and leaves no output file" test ! -e "$TMP/bad.snap"
head -c 25 "$TMP/list.hprof" > "$TMP/short.hprof"
expect_exit 2 "a dump cut in its header" "$GCSCALE" snapshot import "$TMP/short.hprof" -o "$TMP/bad.snap"
{ head -c 19 "$TMP/list.hprof"; printf '\0\0\0\5'; tail -c +24 "$TMP/list.hprof"; } > "$TMP/idsz.hprof"
expect_exit 2 "identifier size 5" "$GCSCALE" snapshot import "$TMP/idsz.hprof" -o "$TMP/bad.snap"
expect_grep "... says so at offset 19" "offset 19: identifier size 5" "$TMP/err"
{ head -c 17 "$TMP/list.hprof"; printf '9\0'; tail -c +20 "$TMP/list.hprof"; } > "$TMP/ver.hprof"
expect_exit 2 "HPROF 1.0.9" "$GCSCALE" snapshot import "$TMP/ver.hprof" -o "$TMP/bad.snap"
expect_grep "... unsupported version" "unsupported HPROF version" "$TMP/err"
expect_exit 2 "--format v8 on an HPROF dump" "$GCSCALE" snapshot import "$TMP/list.hprof" --format v8 -o "$TMP/bad.snap"
expect_grep "... says what the V8 reader expected" "list.hprof: offset 0: expected '\{'" "$TMP/err"
expect_ok "... and leaves no output file" test ! -e "$TMP/bad.snap"
expect_exit 2 "import without -o" "$GCSCALE" snapshot import "$TMP/list.hprof"
echo "1..$_n"
