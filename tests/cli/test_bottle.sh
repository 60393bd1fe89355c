#!/usr/bin/env bash
# test_bottle.sh -- gcscale bottle: the thesis' 4-thread vector through the
# CLI (shares, run times, order, sums), grouping, CSV, SVG, a real trace from
# 'gcscale run --trace' (box heights + idle = wall, GC workers present), and
# one-line errors with exit 2 for malformed traces and bad usage.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/v4.trace" <<'T'
gcscale-trace 1
source builtin
command thesis vector, times in us
clock monotonic
thread 10 0 mutator t0
thread 11 0 mutator t1
thread 12 0 mutator t2
thread 13 0 mutator t3
e 3000 10 blocked-lock
e 6000 11 blocked-barrier
e 7000 11 running
e 10000 12 blocked-lock
e 11000 12 running
e 14000 10 running
e 17000 11 exited
e 17000 12 exited
e 17000 13 exited
end 22000
T

expect_ok "bottle --help" "$GCSCALE" bottle --help
expect_grep "help explains the boxes" "widest at the bottom" "$TMP/out"
expect_ok "4-thread vector, text" "$GCSCALE" bottle "$TMP/v4.trace"
expect_grep "t0 on top (printed last): share 0.0065 ms, parallelism 1.692" "^t0 +mutator +1 +0\.00[67] +29\.55 +0\.011 +1\.692" "$TMP/out"
expect_ok "4-thread vector, json" "$GCSCALE" bottle "$TMP/v4.trace" --json
cp "$TMP/out" "$TMP/v4.json"
expect_ok "shares 6.5/5/5/5.5 us and run 11/16/16/17 us" jq -e '
  def near(a; b): ((a - b) | fabs) < 1e-9;
  ([.threads[] | .share_ms * 1000] as $s | near($s[0]; 6.5) and near($s[1]; 5) and near($s[2]; 5) and near($s[3]; 5.5))
  and ([.threads[] | .run_ms * 1000] as $r | near($r[0]; 11) and near($r[1]; 16) and near($r[2]; 16) and near($r[3]; 17))' "$TMP/v4.json"
expect_ok "boxes widest first, heights add up to wall - idle" jq -e '
  ([.boxes[].parallelism] | . == (sort | reverse)) and
  ((([.boxes[].share_ms] | add) - (.wall_ms - .idle_ms)) | fabs) < 1e-9 and .idle_ms == 0' "$TMP/v4.json"
expect_ok "per-thread state times" jq -e '.threads[0].state_ms["blocked-lock"] * 1000 - 11 | fabs < 1e-9' "$TMP/v4.json"
expect_ok "--group class: one mutator box of 4 threads, P = 60/22" \
    bash -o pipefail -c "'$GCSCALE' bottle '$TMP/v4.trace' --group class --json | jq -e '(.boxes | length) == 1 and .boxes[0].threads == 4 and ((.boxes[0].parallelism - 60/22) | fabs) < 1e-9'"
expect_ok "--csv" "$GCSCALE" bottle "$TMP/v4.trace" --csv
expect_grep "csv header" "^box,class,threads,share_ms,share_pct,run_ms,parallelism" "$TMP/out"
expect_ok "--svg" "$GCSCALE" bottle "$TMP/v4.trace" --svg "$TMP/v4.svg" --title "four threads"
expect_grep "svg has the title and a labelled box" "four threads" "$TMP/v4.svg"
expect_grep "svg labels carry share and parallelism" "t0</tspan> [0-9.]+ us \(29\.5%\), P 1\.69" "$TMP/v4.svg"
expect_ok "--active useful" "$GCSCALE" bottle "$TMP/v4.trace" --active useful --json

# A real run: 2 mutators, 2 GC workers, 2 collections.
expect_ok "gcscale run bh --trace" "$GCSCALE" run bh --mutators 2 --gc-threads 2 --size 8000 --steps 3 --heap 4M \
    --quiet --json --trace "$TMP/bh.trace"
cp "$TMP/out" "$TMP/bh-run.json"
expect_ok "bottle of the run, by class" "$GCSCALE" bottle "$TMP/bh.trace" --group class --json --svg "$TMP/bh.svg"
cp "$TMP/out" "$TMP/bh.json"
expect_ok "main, mutator and gc boxes; heights + idle = wall; GC parallelism in [1, 2.05]" jq -e '
  ([.boxes[].box] | sort) == ["gc", "main", "mutator"] and
  ((([.boxes[].share_ms] | add) + .idle_ms - .wall_ms) | fabs) < 1e-6 and
  ([.boxes[] | select(.box == "gc") | .parallelism][0] | . >= 1 and . <= 2.05)' "$TMP/bh.json"
expect_ok "workers marked and swept" jq -e '[.threads[] | select(.class == "gc") | .state_ms["gc-mark"] > 0 and .state_ms["gc-sweep"] > 0] | all' "$TMP/bh.json"

# Errors: one line, exit 2.
printf 'gcscale-trace 1\nsource builtin\nclock monotonic\nthread 1 0 main m\ne 5 1 dancing\nend 9\n' >"$TMP/bad.trace"
expect_exit 2 "unknown state" "$GCSCALE" bottle "$TMP/bad.trace"
expect_grep "message names file and line" "bad.trace:5: unknown state \"dancing\"" "$TMP/err"
head -n 8 "$TMP/v4.trace" >"$TMP/trunc.trace"
expect_exit 2 "truncated trace" "$GCSCALE" bottle "$TMP/trunc.trace"
expect_exit 2 "missing file" "$GCSCALE" bottle "$TMP/nonexistent.trace"
expect_exit 2 "no TRACE" "$GCSCALE" bottle
expect_exit 2 "two traces" "$GCSCALE" bottle "$TMP/v4.trace" "$TMP/v4.trace"
expect_exit 2 "bad --group" "$GCSCALE" bottle "$TMP/v4.trace" --group socket

# Names and the command come from the file: control characters in them
# reach the terminal as '?', in the table and in its header.
printf 'gcscale-trace 1\nsource builtin\ncommand x\001y\nclock monotonic\nthread 1 0 main ma\007in\ne 5 1 running\nend 10\n' \
    > "$TMP/ctl.trace"
expect_ok "a trace with control characters in names" sh -c "'$GCSCALE' bottle '$TMP/ctl.trace' > '$TMP/ctl.txt'"
expect_ok "... prints none of them" sh -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$TMP/ctl.txt' && grep -q 'ma?in' '$TMP/ctl.txt' && grep -q 'command: x?y' '$TMP/ctl.txt'"
echo "1..$_n"
