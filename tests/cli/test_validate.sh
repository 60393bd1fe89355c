#!/usr/bin/env bash
# test_validate.sh -- gcscale validate end to end on one small workload (cky,
# one snapshot, three re-marks): every report file is written, the JSON
# parses, every speedup stack adds up to P, the snapshots are removed unless
# kept; and bad input gets one stderr line and exit 2.
. "$(dirname "$0")/lib.sh"

DEV=data/machines/dev-2core-kvm.json
expect_ok "validate --help" "$GCSCALE" validate --help
expect_grep "help names the tables" "Table 2" "$TMP/out"

small_validation "a small validation (cky, 1 snapshot, 3 re-marks, P = 1..2)"
OUT=$VAL
expect_grep "the summary names both targets" "prediction target .* (met|NOT met)" "$TMP/out"
expect_grep "... the prediction's for model v2, gcscale predict's default" "prediction target .model v2, gcscale predict's default" "$TMP/out"
expect_grep "... and the adaptive one" "adaptive target" "$TMP/out"
for f in summary.md errors.csv times.csv steals.csv adaptive.csv stacks.csv report.json cky-speedup.svg cky-stack.svg; do
    expect_ok "wrote $f" test -s "$OUT/$f"
done
expect_ok "report.json parses, with one error row per P >= 2" \
    jq -e '.format == "gcscale-validation" and (.errors | length) == 1' "$OUT/report.json"
expect_ok "report.json: the verdict is v2's (the v2_sim figures)" \
    jq -e '.error_model == "v2" and all(.mean_absolute_error[]; (.mae_v2_sim_pct | type) == "number")
           and (.error_ok == ([.mean_absolute_error[] | .mae_v2_sim_pct <= 10] | all))' "$OUT/report.json"
expect_ok "report.json: the GC workers' placement (cores by default) and PUs at P = 2" \
    jq -e '.placement == "cores" and (.pu_map | length) == 2 and (.pu_map_logical | length) == 2' "$OUT/report.json"
expect_ok "every speedup stack adds up to P" \
    jq -e '[.stacks[] | select(.kind == "measured") | ((.speedup + .extra_work + .search + .wake + .tail + .other) - .P) | fabs < 0.001] | all' "$OUT/report.json"
expect_ok "times: measured and predicted mark time at P = 1, 2; no overlap columns without a fit" \
    jq -e '(.times | length) == 2 and all(.times[]; .measured_ms > 0 and .pred_ms > 0 and .pred_overlap_ms == null) and .overlap == null' "$OUT/report.json"
jq '.gc_miss_overlap = 12' "$DEV" > "$TMP/dev-overlap.json"
expect_ok "with the profile's gc_miss_overlap" \
    "$GCSCALE" validate --machine "$TMP/dev-overlap.json" --workloads cky --snapshots 1 --reps 3 --runs 1 --threads 2 \
    --quick --quiet --keep-snapshots -o "$TMP/report-overlap"
expect_ok "... the overlap columns are filled" \
    jq -e '.overlap == 12 and all(.times[]; .pred_overlap_ms > 0 and .pred_overlap_ms < .pred_ms) and (.errors[0].pred_overlap > 0)' "$TMP/report-overlap/report.json"
# The v2 columns are gcscale predict --model v2's times for the snapshot.
snap=$(ls "$TMP"/report-overlap/snapshots/* | head -n 1)
expect_ok "predict --model v2 on the kept snapshot" "$GCSCALE" predict --model v2 --slow -t 1,2 \
    -m "$TMP/dev-overlap.json" "$snap" --json
cp "$TMP/out" "$TMP/v2.json"
expect_ok "... the v2 columns are its times, and the speedup their ratio" \
    jq -e --slurpfile p "$TMP/v2.json" '
      def near(a; b): ((a - b) | fabs) <= 1e-3 * b;
      ($p[0].rows | map(.time_ms)) as $t
      | near(.times[0].pred_v2_ms; $t[0]) and near(.times[1].pred_v2_ms; $t[1])
        and near(.errors[0].pred_v2; $t[0] / $t[1]) and (.mean_absolute_error[0].mae_v2_pct >= 0)' \
    "$TMP/report-overlap/report.json"
expect_ok "the runs include adaptive:2" jq -e '[.runs[] | select(.run == "adaptive:2")] | length == 1' "$OUT/report.json"
# The steals: the collector's beside the simulation's, which needs gc_coord
expect_ok "steals: the collector's at P = 2, none simulated without gc_coord" \
    jq -e '(.steals | length) == 1 and .steals[0].P == 2 and .steals[0].measured >= 0 and .steals[0].simulated == null' \
    "$OUT/report.json"
COORD=data/corpus/dev-2core-kvm-xeon-2/profile.json
expect_ok "with a profile that has gc_coord" \
    "$GCSCALE" validate --machine "$COORD" --workloads cky --snapshots 1 --reps 3 --runs 1 --threads 2 \
    --quick --quiet --keep-snapshots -o "$TMP/report-coord"
snap=$(ls "$TMP"/report-coord/snapshots/* | head -n 1)
expect_ok "... predict --model v2 --steal-count simulated on its snapshot" "$GCSCALE" predict --model v2 --slow -t 1,2 \
    -m "$COORD" "$snap" --steal-count simulated --json
cp "$TMP/out" "$TMP/sim.json"
expect_ok "... the simulated steals are that simulation's" \
    jq -e --slurpfile p "$TMP/sim.json" '.steals[0].simulated == $p[0].inputs.steal_simulation[0].steals' \
    "$TMP/report-coord/report.json"
expect_ok "... and the v2_sim columns its speedup" \
    jq -e --slurpfile p "$TMP/sim.json" '
      def near(a; b): ((a - b) | fabs) <= 1e-3 * b;
      near(.errors[0].pred_v2_sim; $p[0].rows[1].speedup) and (.mean_absolute_error[0].mae_v2_sim_pct >= 0)' \
    "$TMP/report-coord/report.json"
expect_ok "the snapshots were removed" test ! -e "$OUT/snapshots"

expect_exit 2 "unknown workload" "$GCSCALE" validate --machine "$DEV" --workloads tree -o "$TMP/x"
expect_exit 2 "--threads 0" "$GCSCALE" validate --machine "$DEV" --threads 0 -o "$TMP/x"
expect_exit 2 "--steps-scale 0" "$GCSCALE" validate --policies --machine "$DEV" --steps-scale 0 -o "$TMP/x"
expect_exit 2 "a missing profile" "$GCSCALE" validate --machine "$TMP/none.json" -o "$TMP/x"
expect_exit 2 "a profile without gc_cost_ns" "$GCSCALE" validate --machine data/machines/o2k.json --workloads cky -o "$TMP/x"
echo "1..$_n"
