#!/usr/bin/env bash
# test_schemas.sh -- every JSON document gcscale writes names its format and
# version and is valid against its schema in docs/schemas/ (issue 26): each
# command is run here on small inputs, the committed documents (profiles,
# the corpus) are read as they are, and every schema must describe at least
# one of the documents checked.  Needs python3-jsonschema (scripts/install-deps).
. "$(dirname "$0")/lib.sh"

D="$TMP/docs"
mkdir -p "$D"
DEV=data/machines/dev-2core-kvm.json
SYN="pack:2 node:2 core:2 pu:1"
run() { expect_ok_to "$1" "$D/$2" "${@:3}"; } # description, file in $D, command...
run "gc-bench" gc-bench.json "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1-2 --reps 5 --json --snapshot-out "$TMP/t.snap"
run "gc-bench, adaptive" gc-bench-adaptive.json "$GCSCALE" gc-bench --shape random --objects 5000 --threads 1-2 \
    --reps 5 --gc-threads adaptive --machine "$DEV" --json
run "predict, measured" prediction.json "$GCSCALE" predict --machine "$DEV" "$TMP/t.snap" --threads 1-2 \
    --measured "$D/gc-bench.json" --json
run "predict, model v2" prediction-v2.json "$GCSCALE" predict --machine data/machines/lent-16cpu-xeon.json \
    "$TMP/t.snap" --threads 1-2 --model v2 --json
run "machine show" machine.json "$GCSCALE" machine show "$DEV" --json
run "calibrate on a synthetic topology" calibrate.json "$GCSCALE" calibrate --quick --quiet --topology "$SYN" \
    --size 1M -o - --json
# cky's two mutators each hold a page per size class: a 2 MiB heap (32 pages
# of 64 KiB) ran out after a full collection in about 1 of 30 runs on a busy
# host; 3 MiB with 6 steps gives 2-3 collections and room to spare.
run "run cky with the collector's log" run.json "$GCSCALE" run cky --size 60 --steps 6 --mutators 2 --gc-threads 2 \
    --heap 3M --quiet --json --trace "$TMP/c2.trace" --log "$D/gc.log"
run "run cky, one mutator" run-1.json "$GCSCALE" run cky --size 60 --steps 6 --mutators 1 --gc-threads 2 --heap 3M \
    --quiet --json --trace "$TMP/c1.trace"
run "run --list" workloads.json "$GCSCALE" run --list --json
run "bottle" bottle.json "$GCSCALE" bottle "$TMP/c2.trace" --json
run "stack" stack.json "$GCSCALE" stack --single "$TMP/c1.trace" --multi "$TMP/c2.trace" --json
run "snapshot info" snapshot-info.json "$GCSCALE" snapshot info "$TMP/t.snap" --json
for b in latency rw; do
    run "bench $b" "bench-$b.json" "$GCSCALE" bench $b --size 256K --reps 2 --hugepages off --quiet --json
done
run "bench sweep" bench-sweep.json "$GCSCALE" bench sweep --size 1M --reps 1 --quiet --json
run "bench occupancy" bench-occupancy.json "$GCSCALE" bench occupancy --size 4M --reps 1 --chains 2 --steps 1024 --quiet --json
run "bench bandwidth" bench-bandwidth.json "$GCSCALE" bench bandwidth --size 1M --reps 1 --quiet --json
run "bench topology" bench-topology.json "$GCSCALE" bench topology --topology "$SYN" --json
run "corpus accuracy" corpus-accuracy.json "$GCSCALE" corpus accuracy --quiet --fast --json
run "corpus accuracy, simulated steals" corpus-accuracy-steals.json "$GCSCALE" corpus accuracy --quiet --fast --json \
    --model v2 --steal-count simulated data/corpus/dev-2core-kvm-xeon-2
small_validation "validate"
expect_ok "the log has a line per collection" test -s "$D/gc.log"

python3=/usr/bin/python3
"$python3" tests/cli/check_schemas.py --start "$_n" docs/schemas "$D"/*.json "$D/gc.log" "$VAL/report.json" \
    data/machines/*.json data/corpus/*/entry.json data/corpus/*/profile.json data/corpus/floor.json >"$TMP/check"
cat "$TMP/check"
_n=$((_n + $(grep -c '^\(not \)\?ok ' "$TMP/check")))
echo "1..$_n"
