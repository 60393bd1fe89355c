#!/usr/bin/env bash
# test_pin.sh -- --pin cores|compact|scatter|none on gc-bench, run and
# calibrate: the policy and the PU map in every JSON result, --no-pin and a
# bare --pin kept for old scripts, one-line errors for a bad policy.  (The
# orders themselves are tested on synthetic SMT topologies in
# tests/test_placement.c; validate's report.json in test_validate.sh.)
. "$(dirname "$0")/lib.sh"
ncpus=$(nproc)
p2=$((ncpus < 2 ? ncpus : 2))

expect_ok "gc-bench --help names the policies" "$GCSCALE" gc-bench --help
expect_grep "... the default, cores" "--pin POLICY .*cores \(default" "$TMP/out"
for pol in cores compact scatter; do
    expect_ok "gc-bench --pin $pol" "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1,$p2 --reps 5 --quiet \
        --json --pin $pol
    expect_jq "... JSON: placement $pol, pinned, one distinct CPU per worker" \
        ".placement == \"$pol\" and .pinned and (.pu_map | length) == $p2 and (.pu_map_logical | length) == $p2
         and all(.pu_map[]; . >= 0) and (.pu_map | unique | length) == $p2" "$TMP/out"
done
expect_ok "gc-bench --no-pin" "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1 --reps 5 --quiet --json --no-pin
expect_jq "... placement none, not pinned, worker 0 unbound" \
    '.placement == "none" and (.pinned | not) and .pu_map == [-1]' "$TMP/out"
expect_ok "a bare --pin before another option (old scripts) is cores" \
    "$GCSCALE" gc-bench --pin --shape tree --depth 10 --threads 1 --reps 5 --quiet --json
expect_jq "... placement cores" '.placement == "cores"' "$TMP/out"
expect_exit 2 "--pin spread: one-line error" "$GCSCALE" gc-bench --shape tree --pin spread
expect_grep "... naming the four" "cores, compact, scatter or none" "$TMP/err"

expect_ok "run cky --pin compact --log" "$GCSCALE" run cky --quiet --json --pin compact --log "$TMP/gc.log"
expect_jq "... run JSON: placement compact and the map" \
    ".placement == \"compact\" and (.pu_map | length) >= 1 and all(.pu_map[]; . >= 0)" "$TMP/out"
if jq -e -s 'length > 0 and all(.[]; .placement == "compact" and (.pu_map | length) == .threads
             and .pu_map == [.workers[].cpu] and .pu_map_logical == [.workers[].pu])' "$TMP/gc.log" >/dev/null; then
    _report 0 "... every collection's log line has the placement and its workers' PUs"
else _report 1 "... every collection's log line has the placement and its workers' PUs"; fi

expect_ok "calibrate --quick --pin scatter" "$GCSCALE" calibrate --quick --quiet --size 1M --pin scatter \
    -o "$TMP/c.json" --json
expect_jq "... calibration.occupancy[]: placement scatter and the load threads' CPUs" \
    'all(.calibration.occupancy[]; .placement == "scatter" and (.pu_map | length) >= 1 and all(.pu_map[]; . >= 0))' \
    "$TMP/c.json"
expect_exit 2 "calibrate --gc-only refuses --pin" "$GCSCALE" calibrate --gc-only --pin none -o "$TMP/c.json"
echo "1..$_n"
