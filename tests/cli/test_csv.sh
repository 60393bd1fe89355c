#!/usr/bin/env bash
# test_csv.sh -- every command's --csv output is one table that Python's csv
# module loads (issue 26): a header and rows, nothing else, one value per
# cell; a command with several tables prints one, --table NAME picks
# another; numbers at full precision.
. "$(dirname "$0")/lib.sh"

D="$TMP/csv"
mkdir -p "$D"
DEV=data/machines/dev-2core-kvm.json
SYN="pack:2 node:2 core:2 pu:1"
run() { expect_ok_to "$1" "$D/$2" "${@:3}"; } # description, file in $D, command...
run "gc-bench" gc-bench.csv "$GCSCALE" gc-bench --shape tree --depth 10 --threads 1-2 --reps 5 --csv --quiet \
    --snapshot-out "$TMP/t.snap"
run "gc-bench --table adaptive" gc-bench-adaptive.csv "$GCSCALE" gc-bench --shape random --objects 5000 \
    --threads 1-2 --reps 5 --gc-threads adaptive --machine "$DEV" --csv --quiet --table adaptive
run "predict" predict.csv "$GCSCALE" predict --machine "$DEV" "$TMP/t.snap" --threads 1-2 --csv
run "calibrate --csv" calibrate.csv "$GCSCALE" calibrate --quick --quiet --topology "$SYN" --size 1M \
    -o "$TMP/p.json" --csv --table unreliable
for t in nodes latency_read latency_rw page_walks per_node gc_costs counters; do
    run "machine show --table $t" "machine-$t.csv" "$GCSCALE" machine show "$TMP/p.json" --csv --table $t
done
run "machine show --table caches" machine-caches.csv "$GCSCALE" machine show "$DEV" --csv --table caches
# cky's two mutators each hold a page per size class: a 2 MiB heap (32 pages
# of 64 KiB) ran out after a full collection in about 1 of 30 runs on a busy
# host; 3 MiB with 6 steps gives 2-3 collections and room to spare.
run "run, with traces" run.json "$GCSCALE" run cky --size 60 --steps 6 --mutators 2 --gc-threads 2 --heap 3M \
    --quiet --json --trace "$TMP/c2.trace"
run "run, one mutator" run-1.json "$GCSCALE" run cky --size 60 --steps 6 --mutators 1 --gc-threads 2 --heap 3M \
    --quiet --json --trace "$TMP/c1.trace"
rm "$D"/*.json
run "bottle" bottle.csv "$GCSCALE" bottle "$TMP/c2.trace" --csv
run "stack" stack.csv "$GCSCALE" stack --single "$TMP/c1.trace" --multi "$TMP/c2.trace" --csv
for t in graph parameters nodes; do
    run "snapshot info --table $t" "snapshot-$t.csv" "$GCSCALE" snapshot info "$TMP/t.snap" --csv --table $t
done
for b in latency rw; do
    run "bench $b" "bench-$b.csv" "$GCSCALE" bench $b --size 256K --reps 2 --hugepages off --quiet --csv
done
run "bench sweep" bench-sweep.csv "$GCSCALE" bench sweep --size 1M --reps 1 --quiet --csv
for t in points fits; do
    run "bench occupancy --table $t" "bench-occupancy-$t.csv" "$GCSCALE" bench occupancy --size 4M --reps 1 \
        --chains 2 --steps 1024 --quiet --csv --table $t
done
run "bench bandwidth" bench-bandwidth.csv "$GCSCALE" bench bandwidth --size 1M --reps 1 --quiet --csv
for t in system nodes caches; do
    run "bench topology --table $t" "bench-topology-$t.csv" "$GCSCALE" bench topology --csv --table $t
done
small_validation "validate's CSV files"
cp "$VAL"/*.csv "$D/"

# full precision: the text rounds, the CSV does not
expect_ok "predict's CSV keeps every digit (time_ms of P = 2)" \
    python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); sys.exit(len(r[1]['time_ms'].split('.')[1]) <= 3)" \
    "$D/predict.csv"
expect_ok "gc-bench's busy_share: one column per worker" \
    python3 -c "import csv,sys; h=next(csv.reader(open(sys.argv[1]))); sys.exit(not {'busy_share_0','busy_share_1'} <= set(h))" \
    "$D/gc-bench.csv"

python3 tests/cli/check_csv.py --start "$_n" "$D"/*.csv >"$TMP/check"
cat "$TMP/check"
_n=$((_n + $(grep -c '^\(not \)\?ok ' "$TMP/check")))
echo "1..$_n"
