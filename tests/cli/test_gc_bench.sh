#!/usr/bin/env bash
# test_gc_bench.sh -- gcscale gc-bench on small shapes: valid JSON with one
# row per P and the speedup fields, CSV, a snapshot round trip, and one-line
# usage errors for bad input.
. "$(dirname "$0")/lib.sh"

expect_ok "gc-bench --help" "$GCSCALE" gc-bench --help
expect_grep "help names the shapes" "tree, list, random or wide" "$TMP/out"

expect_ok "tree depth 12, P = 1,2, json" \
    "$GCSCALE" gc-bench --shape tree --depth 12 --threads 1,2 --reps 5 --quiet --json
cp "$TMP/out" "$TMP/tree.json"
expect_ok "the json parses" jq -e . "$TMP/tree.json"
expect_ok "two rows, P = 1 and 2" jq -e '[.rows[].threads] == [1, 2]' "$TMP/tree.json"
expect_ok "all 8191 objects live" jq -e '.objects == 8191' "$TMP/tree.json"
expect_ok "speedups: 1 at P = 1, a number at P = 2" \
    jq -e '.rows[0].speedup_mark == 1 and .rows[0].speedup_pause == 1 and (.rows[1].speedup_mark | type) == "number"' "$TMP/tree.json"
expect_ok "each row: mark/pause/throughput/steals/T1, min <= median <= max" \
    jq -e 'all(.rows[]; .mark_ms > 0 and .pause_ms >= .mark_ms and .mark_ms_min <= .mark_ms and .mark_ms <= .mark_ms_max
                         and .mobjects_per_s > 0 and .mb_per_s > 0 and .steals >= 0 and .t1_ms > 0
                         and (.mark_ms_all | length) == 5)' "$TMP/tree.json"
expect_ok "one busy share per worker, in [0, 1.05]" \
    jq -e 'all(.rows[]; (.busy_share | length) == .threads and all(.busy_share[]; . >= 0 and . <= 1.05))' "$TMP/tree.json"
expect_ok "no counters here: cache_misses says why, llc null" \
    jq -e '(.cache_misses | type) == "string" and (if (.cache_misses | startswith("unavailable")) then all(.rows[]; .llc_misses == null) else true end)' "$TMP/tree.json"

expect_ok "list 20000, random 20000, wide 20000 (csv)" bash -c \
    "'$GCSCALE' gc-bench --shape list --objects 20000 --threads 1-2 --reps 5 --quiet --csv &&
     '$GCSCALE' gc-bench --shape random --objects 20000 --threads 1 --reps 5 --quiet --csv --mark-mode atomic-bits &&
     '$GCSCALE' gc-bench --shape wide --objects 20000 --threads 2 --reps 5 --quiet --csv --mark-mode atomic-bytes"
expect_grep "csv header" "^threads,mark_ms,mark_ms_min" "$TMP/out"

expect_ok "--instr-cost and --span" \
    "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1 --reps 5 --quiet --json --instr-cost --span
expect_jq "instr-cost fields and T-infinity 33 of a depth-10 tree" \
    '(.rows[0].instr_overhead_pct | type) == "number" and .rows[0].mark_ms_uninstrumented > 0 and .span == 33' "$TMP/out"

# CSV is one table per output, plain (a header and rows), busy_share one
# column per worker; T-infinity, not a row, goes to stderr; the adaptive
# table is --table adaptive.
expect_ok "--csv --span --gc-threads adaptive" "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1-2 \
    --reps 5 --quiet --csv --span --gc-threads adaptive:2 --machine data/machines/dev-2core-kvm-epyc.json
expect_grep "... T-infinity on stderr" "^gcscale gc-bench: T-infinity 33 \(objects \+ pointers\)" "$TMP/err"
expect_grep "... the adaptive table named there" "the others: adaptive \(--table NAME\)" "$TMP/err"
cp "$TMP/out" "$TMP/rows.csv"
expect_ok "... busy_share one value per cell; no comment or blank lines" \
    sh -c "head -1 '$TMP/rows.csv' | grep -q ',busy_share_0,busy_share_1,' && ! grep -q '^#' '$TMP/rows.csv' && ! grep -q '^$' '$TMP/rows.csv'"
expect_ok "--csv --table adaptive" "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1-2 \
    --reps 5 --quiet --csv --gc-threads adaptive:2 --machine data/machines/dev-2core-kvm-epyc.json --table adaptive
expect_grep "... the adaptive table alone" "^collection," "$TMP/out"

expect_ok "--snapshot-out" "$GCSCALE" gc-bench --shape random --objects 5000 --threads 1 --reps 5 --quiet \
    --snapshot-out "$TMP/r.snap"
expect_ok "--snapshot rebuilds it: 5001 live objects" bash -o pipefail -c \
    "'$GCSCALE' gc-bench --snapshot '$TMP/r.snap' --threads 1-2 --reps 5 --quiet --json | jq -e '.objects == 5001 and (.rows | length) == 2'"

# A snapshot that cannot be written is an error, not a silent exit 0: up
# front where the path is wrong, after the first collection where the write
# fails (a file size limit standing in for a full disk).
expect_exit 2 "--snapshot-out in a missing directory" "$GCSCALE" gc-bench --shape list --objects 1000 \
    --snapshot-out "$TMP/no/such/dir/x.snap"
expect_exit 2 "--snapshot-out a directory" "$GCSCALE" gc-bench --shape list --objects 1000 --snapshot-out "$TMP"
expect_exit 2 "--snapshot-out whose write fails" sh -c \
    "trap '' XFSZ; ulimit -f 8; exec '$GCSCALE' gc-bench --shape list --objects 100000 --reps 5 --quiet --snapshot-out '$TMP/big.snap' >/dev/null"
expect_grep "... says why" "snapshot-out: .*big.snap: .*(large|write)" "$TMP/err"
expect_ok "... and leaves no file" test ! -e "$TMP/big.snap"

expect_exit 2 "unknown shape" "$GCSCALE" gc-bench --shape cube
expect_exit 2 "--threads 0" "$GCSCALE" gc-bench --shape tree --threads 0
expect_exit 2 "--threads 5-2" "$GCSCALE" gc-bench --shape tree --threads 5-2
expect_exit 2 "--threads 1-100000" "$GCSCALE" gc-bench --shape tree --threads 1-100000
expect_exit 2 "--reps 2" "$GCSCALE" gc-bench --shape tree --reps 2
expect_exit 2 "missing --shape" "$GCSCALE" gc-bench --reps 5
expect_exit 2 "--depth with list" "$GCSCALE" gc-bench --shape list --depth 4
expect_exit 2 "bad --mark-mode" "$GCSCALE" gc-bench --shape tree --mark-mode fast
expect_exit 2 "missing snapshot file" "$GCSCALE" gc-bench --snapshot "$TMP/none.snap"
expect_exit 2 "unknown option" "$GCSCALE" gc-bench --shape tree --bogus
echo "1..$_n"
