#!/usr/bin/env bash
# test_predict.sh -- gcscale predict end to end: a real snapshot and gc-bench
# measurement on this machine, every output form and the plot, and the bad
# input the issue names (thread lists, a profile without gc_cost_ns, a
# snapshot naming nodes the profile lacks, damaged files): one stderr line,
# exit 2, and no half-written output.
. "$(dirname "$0")/lib.sh"

DEV=data/machines/dev-2core-kvm.json
SNAP="$TMP/tree.snap"
expect_ok "gc-bench writes a snapshot and its measurement" \
    sh -c "'$GCSCALE' gc-bench --shape tree --depth 12 --threads 1-2 --reps 5 --json --snapshot-out '$SNAP' > '$TMP/tree.json'"

expect_ok "predict --help" "$GCSCALE" predict --help
expect_grep "help names --span" "--span critical|paper" "$TMP/out"

expect_ok "predict, text" "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-4
expect_grep "text: a row for P = 4" "^4 +[0-9.]+ " "$TMP/out"
expect_grep "P beyond the profile's 2 CPUs: a warning" "warning: P up to 4, but .* has 2 CPUs" "$TMP/err"
expect_grep "text: the recommendation first" "^Recommended: P = [1-4] of the 1 to 4 asked for" "$TMP/out"
expect_grep "... and what limits the heap at P = 4" "At P = 4 the model predicts a speedup of [0-9.]+ of an ideal 4(: nothing limits|; what limits this heap is )" "$TMP/out"
expect_grep "... a profile without gc_miss_overlap: times said relative" "^Times: the profile lacks gc_miss_overlap .* relative" "$TMP/out"
expect_grep "... the compact table: rel_time, the stack" "^P +rel_time +speedup +lost_" "$TMP/out"
expect_ok "... no solver column by default" sh -c "! grep -q solver '$TMP/out'"
expect_ok "predict --wide" "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-4 --wide
expect_grep "--wide: every column" "^P +t_cilk_ms +steals +q_p .* solver +iterations" "$TMP/out"
expect_grep "--wide: the inputs" "^heap .*: [0-9]+ objects" "$TMP/out"
expect_ok "--help explains every column of the wide table" sh -c "'$GCSCALE' predict --help > '$TMP/help' &&
    '$GCSCALE' predict --machine '$DEV' '$SNAP' --threads 1-2 --wide | grep '^P  *t_cilk' | tr -s ' ' '\n' |
    while read c; do grep -q \"\$c\" '$TMP/help' || { echo \"undocumented: \$c\"; exit 1; }; done"
expect_ok "... and so does docs/model.md" sh -c "
    '$GCSCALE' predict --machine '$DEV' '$SNAP' --threads 1-2 --wide | grep '^P  *t_cilk' | tr -s ' ' '\n' |
    while read c; do grep -q \"\\\`\$c\" docs/model.md || { echo \"undocumented: \$c\"; exit 1; }; done"
expect_ok "P within the profile's CPUs" \
    sh -c "'$GCSCALE' predict --machine '$DEV' '$SNAP' --threads 1-2 2> '$TMP/err-within'"
expect_ok "... and no warning" test ! -s "$TMP/err-within"

expect_ok "predict --json" "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1,2 --json
expect_jq "the JSON parses, with 2 rows and P=1 speedup 1" \
    '(.rows | length) == 2 and .rows[0].speedup == 1 and .span == "critical"' "$TMP/out"

expect_jq "JSON: the explanation, the limits largest first, relative times" \
    '(.explanation | startswith("Recommended: P = ")) and (.limits | length) >= 1 and
     ([.limits[].lost] == ([.limits[].lost] | sort | reverse)) and .times == "relative" and (.times_note | length) > 0' "$TMP/out"
expect_jq "a reliable profile: no unreliable_inputs key" 'has("unreliable_inputs") | not' "$TMP/out"
LENT=data/machines/lent-16cpu-xeon.json
expect_ok "v2 on a profile with gc_miss_overlap" "$GCSCALE" predict --machine "$LENT" "$SNAP" --threads 1-2 --model v2
expect_grep "... absolute times: time_ms" "^P +time_ms +speedup" "$TMP/out"
expect_ok "... and no Times: line" sh -c "! grep -q '^Times:' '$TMP/out'"

# A term resting on a constant the profile marks unreliable is named:
# one line in the text, a key in the JSON, a warning beside the CSV.
jq '.unreliable = {"occupancy_ns.read[0]": "fit found no contention: 0.0 ns at 8 load points",
                   "bandwidth_gbs[0]": "not used by the model"}' "$DEV" >"$TMP/unrel.json"
expect_ok "predict with an unreliable S_O, text" "$GCSCALE" predict --machine "$TMP/unrel.json" "$SNAP" --threads 1-2
expect_grep "... one line names the term" \
    "^unreliable inputs: the contention rests on occupancy_ns.read\[0\], marked unreliable .fit found no contention: 0.0 ns at 8 load points.; recalibrate on an idle machine$" "$TMP/out"
expect_ok "... and not the bandwidth, which no term uses" sh -c "! grep -q bandwidth '$TMP/out'"
expect_ok "predict with an unreliable S_O, JSON" "$GCSCALE" predict --machine "$TMP/unrel.json" "$SNAP" --threads 1-2 --json
expect_jq "... unreliable_inputs" \
    '.unreliable_inputs == [{"term": "contention", "constant": "occupancy_ns.read[0]", "reason": "fit found no contention: 0.0 ns at 8 load points"}]' "$TMP/out"
expect_ok "predict with an unreliable S_O, CSV" "$GCSCALE" predict --machine "$TMP/unrel.json" "$SNAP" --threads 1-2 --csv
expect_grep "... a warning on stderr" "^gcscale predict: warning: unreliable inputs: the contention rests on" "$TMP/err"

expect_ok "predict --csv --fast --mva closed --span critical" \
    "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-2 --csv --fast --mva closed --span critical
expect_grep "csv: header" "^P,t_cilk_ms," "$TMP/out"
expect_grep "csv: relative times said on stderr" "^gcscale predict: note: times: the profile lacks gc_miss_overlap .* relative" "$TMP/err"
expect_ok "--model base" "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-2 --csv --model base
expect_grep "... says its times are relative, whatever the profile" "^gcscale predict: note: times: model base .* relative" "$TMP/err"

expect_ok "predict --slow --measured --plot" \
    "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-2 --slow --measured "$TMP/tree.json" --plot "$TMP/p.svg"
expect_grep "the plot is an SVG with the measured curve" "measured" "$TMP/p.svg"
expect_grep "... its min-max bars, from gc-bench's 5 reps" "measured \\(gc-bench tree; bars: min-max of 5\\)" "$TMP/p.svg"
expect_grep "... and the recommended P marked" ">recommended P = [12]</text>" "$TMP/p.svg"
expect_ok "the plot is well-formed XML" python3 -c "import sys,xml.dom.minidom as m; m.parse(sys.argv[1])" "$TMP/p.svg"
expect_exit 2 "--plot into a directory: refused before the prediction" \
    "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-2 --plot "$TMP"
expect_grep "... says so" "--plot .*: cannot write: is a directory" "$TMP/err"
# --measured without --plot: the table gets the measured speedup and the error.
expect_ok "--measured puts measured columns in the JSON" \
    "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-3 --fast --measured "$TMP/tree.json" --json
expect_jq "... measured at P = 1, 2 (error against it), not at 3" '.rows[0].measured_speedup == 1 and
    .rows[0].error_pct == 0 and (.rows[1].error_pct | type) == "number" and .rows[2].measured_speedup == null' "$TMP/out"
expect_exit 2 "--measured file missing" "$GCSCALE" predict --machine "$DEV" "$SNAP" --measured "$TMP/none.json"
expect_grep "... in the words every reader uses" "none.json: cannot read: No such file" "$TMP/err"
jq '.objects = 5' "$TMP/tree.json" > "$TMP/other.json"
expect_ok "a measurement of another heap" "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1-2 \
    --fast --measured "$TMP/other.json"
expect_grep "... is flagged" "warning: .*other.json measured a heap of 5 objects, but .* has 8191" "$TMP/err"
# Measured thread counts beyond the predicted ones: the y axis still holds them.
expect_ok "predict --threads 1 with a measured P = 2" \
    "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1 --fast --measured "$TMP/tree.json" --plot "$TMP/p1.svg"
# The measured points (red circles) of the plot SVG all lie inside its plot area.
points_inside() {
    python3 - "$1" <<'PY'
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
area = d.getElementsByTagName("clipPath")[0].getElementsByTagName("rect")[0]
top, height = float(area.getAttribute("y")), float(area.getAttribute("height"))
ys = [float(c.getAttribute("cy")) for c in d.getElementsByTagName("circle") if c.getAttribute("fill") == "#d62728"]
assert len(ys) >= 2, ys
assert all(top <= y <= top + height for y in ys), (ys, top, height)
PY
}
expect_ok "every measured point lies inside the plot area" points_inside "$TMP/p1.svg"
# ... and so does a measured speedup above the ideal (a small heap's P = 2 at 3.5)
jq '(.rows[] | select(.threads == 2) | .speedup_mark) = 3.5' "$TMP/tree.json" > "$TMP/super.json"
expect_ok "predict --threads 1 with a superlinear measured P = 2" \
    "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads 1 --fast --measured "$TMP/super.json" --plot "$TMP/p2.svg"
expect_ok "... inside the plot area too" points_inside "$TMP/p2.svg"

# A profile whose caches are all instruction caches has nothing to simulate:
# the default is then the fast predictor (it was the slow one, which failed).
jq '.caches |= map(.type = "instruction")' "$DEV" > "$TMP/icache-only.json"
expect_ok "instruction caches only: the default predictor runs" \
    "$GCSCALE" predict --machine "$TMP/icache-only.json" "$SNAP" --threads 1-2 --json
expect_jq "... and it is the fast one" '.inputs.predictor == "fast"' "$TMP/out"

# The paper's profiles: a hand-written profile needs --costs (no gc_cost_ns).
expect_exit 2 "a profile without gc_cost_ns" "$GCSCALE" predict --machine data/machines/o2k.json "$SNAP"
expect_grep "says what is missing" "gc_cost_ns" "$TMP/err"
expect_ok "--costs supplies the marker costs" \
    "$GCSCALE" predict --machine data/machines/o2k.json "$SNAP" --costs 108,100 --threads 1-64 --fast

# Options that contradict each other are refused, not "last one wins".
expect_exit 2 "--json --csv" "$GCSCALE" predict --machine "$DEV" "$SNAP" --json --csv
expect_exit 2 "--fast --slow" "$GCSCALE" predict --machine "$DEV" "$SNAP" --fast --slow

# Thread lists.
for t in 0 5-2 1-100000 abc 2,,3 -1; do
    expect_exit 2 "--threads $t" "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads "$t"
done

# A snapshot whose objects sit on node 3, against the one-node profile.
expect_ok "synth a 4-node cube heap (pages round robin)" "$GCSCALE" snapshot synth cube --size 20000 --nodes 4 -o "$TMP/cube4.snap"
expect_exit 2 "snapshot names nodes the profile lacks" "$GCSCALE" predict --machine "$DEV" "$TMP/cube4.snap"
expect_grep "names the node" "node [0-9]+ .*profile has 1 node" "$TMP/err"

# Damaged inputs, and the plot is not left behind.
head -c 100 "$SNAP" > "$TMP/short.snap"
expect_exit 2 "truncated snapshot" "$GCSCALE" predict --machine "$DEV" "$TMP/short.snap" --plot "$TMP/no.svg"
expect_ok "no plot left by the failed run" test ! -e "$TMP/no.svg"
echo '{"version": 1, "nodes": [' > "$TMP/bad.json"
expect_exit 2 "malformed profile" "$GCSCALE" predict --machine "$TMP/bad.json" "$SNAP"
expect_exit 2 "--mva junk" "$GCSCALE" predict --machine "$DEV" "$SNAP" --mva half
# Quoted user text with a newline in it (a profile's string, an option's
# value, a path): the message is still one line (found by make fuzz).
jq '.format = "gcscale-machine\nsecond line"' "$DEV" > "$TMP/nl.json"
expect_exit 2 "profile format with a newline: one line" "$GCSCALE" predict --machine "$TMP/nl.json" "$SNAP"
expect_grep "... which quotes it" 'found "gcscale-machine[?]second line"' "$TMP/err"
expect_exit 2 "thread list with a newline: one line" "$GCSCALE" predict --machine "$DEV" "$SNAP" --threads "$(printf '1\n2')"
expect_exit 2 "path with a newline: one line" "$GCSCALE" predict --machine "$TMP/no
such.json" "$SNAP"
expect_exit 2 "command with a newline: one line" "$GCSCALE" "$(printf 'pre\ndict')"

# Overlapped misses (beyond the paper): a number, or the profile's fit.
expect_ok "--overlap 4 --json" sh -c "'$GCSCALE' predict --machine '$DEV' '$SNAP' --threads 1-2 --json > '$TMP/ov1.json' &&
    '$GCSCALE' predict --machine '$DEV' '$SNAP' --threads 1-2 --json --overlap 4 > '$TMP/ov4.json'"
expect_ok "... is in the JSON and shortens the P = 1 time" \
    jq -e -s '.[0].overlap == 1 and .[1].overlap == 4 and .[1].rows[0].time_ms < .[0].rows[0].time_ms' "$TMP/ov1.json" "$TMP/ov4.json"
expect_exit 2 "--overlap fitted, profile without gc_miss_overlap" "$GCSCALE" predict --machine "$DEV" "$SNAP" --overlap fitted
expect_grep "says what is missing" "gc_miss_overlap" "$TMP/err"
jq '.gc_miss_overlap = 6.5' "$DEV" > "$TMP/dev-overlap.json"
expect_ok "--overlap fitted takes the profile's" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-overlap.json' '$SNAP' --threads 1 --json --overlap fitted | jq -e '.overlap == 6.5'"
expect_exit 2 "--overlap below 1" "$GCSCALE" predict --machine "$DEV" "$SNAP" --overlap 0.5
expect_exit 2 "--overlap with --mva closed" "$GCSCALE" predict --machine "$DEV" "$SNAP" --overlap 4 --mva closed
expect_exit 2 "no snapshot given" "$GCSCALE" predict --machine "$DEV"

# --model: v2 (the default since 2026-11-29) takes the profile's fitted
# overlap; base keeps every miss a full miss; residency only with v2.
expect_ok "the default model is v2, with the fitted overlap" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-overlap.json' '$SNAP' --threads 1 --json | jq -e '.model == \"v2\" and .overlap == 6.5'"
expect_ok "--model base: overlap 1" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-overlap.json' '$SNAP' --threads 1 --json --model base | jq -e '.model == \"base\" and .overlap == 1'"
expect_ok "--model v2 takes the fitted overlap" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-overlap.json' '$SNAP' --threads 1 --json --model v2 | jq -e '.model == \"v2\" and .overlap == 6.5'"
expect_exit 2 "--residency with --model base" "$GCSCALE" predict --machine "$DEV" "$SNAP" --residency on --model base
expect_grep "... is a term of v2" "is a term of model v2 .the default.: drop --model base" "$TMP/err"
# 2026-11-28: residency (off by default) priced at the profile's gc_resident
# where it has them, else as from memory; said in the JSON and the text
jq '.gc_resident = {"miss_overlap": 3, "stream_line_ns": 0.25}' "$TMP/dev-overlap.json" > "$TMP/dev-resident.json"
expect_ok "v2 leaves residency off by default without gc_resident" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-overlap.json' '$SNAP' --threads 1 --json --model v2 |
        jq -e '.serial.residency_on == false and .serial.resident.source == \"off\" and .serial.llc_miss_ms == 0'"
expect_ok "... and prices resident lines at gc_resident by default with it" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-resident.json' '$SNAP' --threads 1 --json --model v2 |
        jq -e '.serial.residency_on and .serial.resident.source == \"gc_resident\"
               and .serial.resident.miss_overlap == 3 and .serial.resident.stream_line_ns == 0.25'"
expect_ok "--residency off turns it off" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-resident.json' '$SNAP' --threads 1 --json --model v2 --residency off |
        jq -e '.serial.residency_on == false and .serial.llc_miss_ms == 0'"
expect_ok "the base model prices no residency, gc_resident or not" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-resident.json' '$SNAP' --threads 1 --json --model base |
        jq -e '.serial.residency_on == false'"
expect_ok "... and says so in the text (--wide)" "$GCSCALE" predict --machine "$TMP/dev-resident.json" "$SNAP" --threads 1 --wide \
    --model v2
expect_grep "... (the residency line)" "priced at the profile's gc_resident" "$TMP/out"
expect_ok "--residency on without gc_resident" "$GCSCALE" predict --machine "$TMP/dev-overlap.json" "$SNAP" --threads 1 --wide \
    --model v2 --residency on
expect_grep "... prices them as from memory, and says so" "priced as from memory: the profile has no gc_resident" "$TMP/out"
# --shared-lines (v2 only): the term where the profile has gc_line_transfer_ns, said off where not
expect_exit 2 "--shared-lines with --model base" "$GCSCALE" predict --machine "$DEV" "$SNAP" --shared-lines on --model base
expect_ok "--shared-lines on, profile without gc_line_transfer_ns" "$GCSCALE" predict --machine "$DEV" "$SNAP" \
    --threads 1,2 --model v2 --shared-lines on
expect_grep "... says the term is off" "shared-line term off: the profile has no gc_line_transfer_ns" "$TMP/out"
jq '.gc_line_transfer_ns = 300' "$DEV" > "$TMP/dev-transfer.json"
expect_ok "--shared-lines on prices the transfers" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-transfer.json' '$SNAP' --threads 1,2 --json --model v2 --shared-lines on | jq -e '.rows[0].lost_shared_lines == 0 and .rows[1].extra_work >= .rows[1].lost_extra_misses'"
# --steal-work (v2 only, on by default): the steals' own busy time, a part of extra_work
expect_exit 2 "--steal-work with --model base" "$GCSCALE" predict --machine "$DEV" "$SNAP" --steal-work off --model base
jq '.gc_cost_ns.steal = 2000' "$DEV" > "$TMP/dev-steal.json"
expect_ok "v2 prices the steals' work at gc_cost_ns.steal" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-steal.json' '$SNAP' --threads 1,2 --json --model v2 | jq -e '.rows[0].lost_steal_work == 0 and .rows[1].lost_steal_work > 0 and .rows[1].extra_work >= .rows[1].lost_extra_misses + .rows[1].lost_steal_work - 0.02'"
expect_ok "... and --steal-work off leaves it out" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-steal.json' '$SNAP' --threads 1,2 --json --model v2 --steal-work off | jq -e '.rows[1].lost_steal_work == 0'"
# --steal-count (v2 only): the coordination's steal count simulated on the
# snapshot's graph, one row per P from 2 in the inputs; needs gc_coord.
# The default (2026-11-29): simulated with the slow predictor where the
# profile has gc_coord, the fit with the fast one
expect_exit 2 "--steal-count with --model base" "$GCSCALE" predict --machine "$DEV" "$SNAP" --steal-count simulated --model base
expect_exit 2 "--steal-count with a bad value" "$GCSCALE" predict --machine "$DEV" "$SNAP" --model v2 --steal-count often
expect_exit 2 "--steal-count simulated on a profile without gc_coord" \
    "$GCSCALE" predict --machine "$DEV" "$SNAP" --model v2 --steal-count simulated
expect_grep "... says why" "no gc_coord to price a steal attempt" "$TMP/err"
COORD=data/corpus/dev-2core-kvm-xeon-2/profile.json
expect_ok "--steal-count simulated: the simulation's rows, P = 2..4" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$COORD' '$SNAP' --threads 1-4 --json --model v2 --steal-count simulated 2>/dev/null |
        jq -e '(.inputs.steal_simulation | length) == 3 and .inputs.steal_simulation[0].threads == 2
               and all(.inputs.steal_simulation[]; .steals >= .searches and .searches >= 0 and .mark_line_transfers >= 0)
               and all(.inputs.steal_simulation[]; .schedule_speedup >= 1 and .schedule_speedup <= .threads * 1.3)'"
expect_ok "... the fitted count simulates nothing" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$COORD' '$SNAP' --threads 1-4 --json --model v2 --steal-count fitted 2>/dev/null |
        jq -e '.inputs.steal_simulation == null and .steal_count == \"fitted\"'"
"$GCSCALE" predict --machine "$COORD" "$SNAP" --threads 1-4 --json --model v2 --steal-count simulated 2>/dev/null >"$TMP/st-sim.json"
"$GCSCALE" predict --machine "$COORD" "$SNAP" --threads 1-4 --json --model v2 --steal-count fitted 2>/dev/null >"$TMP/st-fit.json"
expect_ok_to "model v2 with the slow predictor (the profile's default) simulates by default" "$TMP/st-def.json" \
    "$GCSCALE" predict --machine "$COORD" "$SNAP" --threads 1-4 --json --model v2
expect_ok "... the same rows as --steal-count simulated, other than the fit's" jq -e -n \
    --slurpfile d "$TMP/st-def.json" --slurpfile s "$TMP/st-sim.json" --slurpfile f "$TMP/st-fit.json" \
    '$d[0].predictor == "slow" and $d[0].steal_count == "simulated" and $d[0].rows == $s[0].rows
     and ($d[0].inputs.steal_simulation | length) == 3 and $d[0].rows != $f[0].rows'
expect_ok "... the fast predictor keeps the fit" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$COORD' '$SNAP' --threads 1-4 --json --model v2 --fast 2>/dev/null |
        jq -e '.predictor == \"fast\" and .steal_count == \"fitted\" and .inputs.steal_simulation == null'"
expect_ok "... as does a profile without gc_coord, silently (no steal count in the base model)" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$DEV' '$SNAP' --threads 1,2 --json --model v2 |
        jq -e '.steal_count == \"fitted\" and .inputs.steal_simulation == null' &&
        '$GCSCALE' predict --machine '$DEV' '$SNAP' --threads 1,2 --json --model base | jq -e 'has(\"steal_count\") | not'"
expect_ok "... and --wide says which count" "$GCSCALE" predict --machine "$COORD" "$SNAP" --threads 1,2 --wide \
    --model v2 --fast
expect_grep "... (the fit's line)" "^steal count: the profile's gc_steals fit \\(the fast predictor's default\\)" "$TMP/out"
expect_ok "... and --wide says the simulated count" "$GCSCALE" predict --machine "$COORD" "$SNAP" --threads 1,2 --wide \
    --model v2 --steal-count simulated
expect_grep "... (the line)" "steals simulated on the graph at P = 2: [0-9]+ entries in [0-9]+ searches" "$TMP/out"
# 2026-11-27: v2's stream classes and NULL switches, with their counts and
# sources; the NULL switches only with --null-switches on (v2 only)
expect_ok "v2's breakdown: streams and NULL tests, nominal without the keys" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-overlap.json' '$SNAP' --threads 1 --json --model v2 |
        jq -e '.serial.streams.counted_by == \"streamer\" and .serial.streams.source == \"nominal\"
               and .serial.streams.sequential <= .serial.streams.streamed and .serial.sequential_ms >= 0
               and (.serial.nulls.source | startswith(\"off\")) and .serial.nulls.null_fields > 0
               and (.serial.nominal | index(\"gc_stream_line_ns\")) != null
               and (.serial.nominal | index(\"gc_class_cost_ns.null_switch\")) == null
               and .inputs.null_switches <= .inputs.null_fields and .inputs.q1_sequential.read >= 0'"
expect_exit 2 "--null-switches with --model base" "$GCSCALE" predict --machine "$DEV" "$SNAP" --null-switches on --model base
jq '.gc_stream_line_ns = 0.5 | .gc_class_cost_ns = {"chain": 1, "array_element": 1, "null_switch": 1000}' \
    "$TMP/dev-overlap.json" > "$TMP/dev-v2keys.json"
expect_ok "--null-switches on prices them from the profile, gc_stream_line_ns the sequential lines" \
    bash -o pipefail -c "'$GCSCALE' predict --machine '$TMP/dev-v2keys.json' '$SNAP' --threads 1 --json --model v2 --null-switches on |
        jq -e '.serial.nulls.source == \"gc_class_cost_ns.null_switch\"
               and (.serial.nulls.ms - .serial.nulls.null_switches * 1000 / 1e6 | fabs) < 1e-9
               and .serial.streams.source == \"gc_stream_line_ns\" and .serial.streams.sequential_ns == 0.5
               and (.serial.nominal | length) == 0'"
expect_exit 2 "--model of another name" "$GCSCALE" predict --machine "$DEV" "$SNAP" --model v3
expect_grep "... names the three" "none of base, v2 and paper" "$TMP/err"
echo "1..$_n"
