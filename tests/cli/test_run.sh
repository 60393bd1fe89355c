#!/usr/bin/env bash
# test_run.sh -- gcscale run: --help and --list, each workload small with a
# heap small enough for collections, --json parses, --log writes one valid
# JSON line per collection, and one-line usage errors (exit 2) for bad input.
. "$(dirname "$0")/lib.sh"

expect_ok "run --help" "$GCSCALE" run --help
expect_grep "help names the workloads" "bh .*cube .*cky|cky" "$TMP/out"
expect_ok "run --list" "$GCSCALE" run --list
expect_grep "--list: bh" "^bh " "$TMP/out"
expect_grep "--list: cube" "^cube " "$TMP/out"
expect_grep "--list: cky" "^cky " "$TMP/out"
expect_ok "run --list --json: four workloads" bash -o pipefail -c \
    "'$GCSCALE' run --list --json | jq -e '.format == \"gcscale-workloads\" and [.workloads[].workload] == [\"bh\", \"cube\", \"cky\", \"chain\"]'"

expect_ok "bh small, text" "$GCSCALE" run bh --size 3000 --steps 3 --heap 2M --mutators 2 --gc-threads 2 --quiet
expect_grep "bh: verification OK" "^verification OK: bh:" "$TMP/out"
expect_grep "bh: collections line" "^collections [1-9][0-9]*: mark mean" "$TMP/out"

expect_ok "cube small, json" "$GCSCALE" run cube --size 2000 --steps 8 --heap 6M --mutators 2 --gc-threads 1 \
    --quiet --json
cp "$TMP/out" "$TMP/cube.json"
expect_ok "cube json parses, verified, collections > 0" \
    jq -e '.format == "gcscale-run" and .workload == "cube" and .verified == true and .collections > 0' \
    "$TMP/cube.json"
expect_ok "cube json: times add up, one list entry per collection, P = 1 used" \
    jq -e '(.wall_ms - .mutator_ms - .gc_pause_ms | fabs) < 0.01 and (.collection_list | length) == .collections
           and .threads_used == {"1": .collections} and .mark_ms_median > 0 and .gc_share > 0 and .gc_share < 1' \
    "$TMP/cube.json"

expect_ok "cky small with --log" "$GCSCALE" run cky --size 200 --steps 4 --heap 4M --mutators 1 --gc-threads 2 \
    --quiet --json --log "$TMP/gc.log"
cp "$TMP/out" "$TMP/cky.json"
expect_ok "cky verified with collections" jq -e '.verified == true and .collections > 0' "$TMP/cky.json"
expect_ok "--log: one valid JSON object per line" bash -c "jq -e -c 'type == \"object\"' '$TMP/gc.log' >/dev/null"
expect_ok "--log: as many lines as collections" bash -c \
    "[ \$(wc -l < '$TMP/gc.log') -eq \$(jq .collections '$TMP/cky.json') ]"
expect_ok "--log: no temporary file left" bash -c "! ls '$TMP'/gc.log.tmp.* 2>/dev/null"

# --release-after: 0 gives the emptied pages back in the sweep that empties
# them, the default (6) not within this run's collections (docs/collector.md)
expect_ok "--release-after 0: every emptied page released at once" bash -o pipefail -c "
  '$GCSCALE' run cky --size 200 --steps 4 --heap 4M --mutators 1 --gc-threads 2 --release-after 0 --quiet --json \
      --log '$TMP/r0.log' | jq -e '.release_after == 0' >/dev/null &&
  jq -s -e '(map(.pages_freed) | add) > 0 and map(.pages_released == .pages_freed) == map(true)' '$TMP/r0.log'"
expect_ok "the default: nothing released within a run of fewer than 7 collections" bash -o pipefail -c "
  [ \$(jq -s 'length' '$TMP/gc.log') -le 6 ] && jq -e '.release_after == 6' '$TMP/cky.json' >/dev/null &&
  jq -s -e 'map(.pages_released) | add == 0' '$TMP/gc.log'"
expect_exit 2 "--release-after -1 refused" "$GCSCALE" run cky --release-after -1 --quiet

expect_ok "GCSCALE_GC_THREADS=1 is honoured without --gc-threads" bash -o pipefail -c \
    "GCSCALE_GC_THREADS=1 '$GCSCALE' run cky --size 100 --steps 4 --heap 4M --quiet --json | jq -e '.threads_used | keys == [\"1\"]'"

expect_ok "adaptive without a usable profile: the fallback, one warning" bash -o pipefail -c \
    "'$GCSCALE' run chain --size 5000 --steps 8 --heap 2M --gc-threads adaptive:2 --machine /nonexistent.json --quiet --json 2>'$TMP/err' | jq -e '.threads_used | keys == [\"2\"]'"
expect_grep "the warning names the profile" "gcscale run: warning: .*nonexistent.json.*running with the pool" "$TMP/err"
expect_exit 2 "--gc-objective junk" "$GCSCALE" run chain --gc-threads adaptive --gc-objective fast
expect_exit 2 "--gc-objective without adaptive" "$GCSCALE" run chain --gc-threads 2 --gc-objective pause
expect_exit 2 "no workload" "$GCSCALE" run
expect_exit 2 "--trace into a directory: refused before the run" "$GCSCALE" run cky --trace "$TMP"
expect_exit 2 "--log in a missing directory" "$GCSCALE" run cky --log "$TMP/no/such/gc.log"
expect_exit 2 "unknown workload" "$GCSCALE" run nbody
expect_exit 2 "two workloads" "$GCSCALE" run bh cube
expect_exit 2 "--mutators 0" "$GCSCALE" run bh --mutators 0
expect_exit 2 "--gc-threads 0" "$GCSCALE" run bh --gc-threads 0
expect_exit 2 "--gc-threads junk" "$GCSCALE" run bh --gc-threads lots
expect_exit 2 "--size 0" "$GCSCALE" run cube --size 0
expect_exit 2 "--heap junk" "$GCSCALE" run cky --heap 12Q
expect_exit 2 "heap too small for the live data" "$GCSCALE" run bh --size 200000 --steps 1 --heap 2M --quiet
expect_exit 2 "unknown option" "$GCSCALE" run bh --bogus
echo "1..$_n"
