#!/usr/bin/env bash
# test_calibrate.sh -- gcscale calibrate: bad input, and a small synthetic
# 4-node calibration that must give a valid profile with 4x4 matrices.
. "$(dirname "$0")/lib.sh"

SYN="pack:2 node:2 core:2 pu:1"

# progress_ok FILE: the progress lines on stderr (not a terminal: one line a
# step) are one series: percentages never go down, no step starts at 100%
# (the weights summed to less than the steps did), and one "[100%] done"
# ends it (the miss-overlap fit started a second series at 0% after it).
progress_ok() {
    awk '/^\[ *[0-9]+%\]/ {
            pc = $0; sub(/^\[ */, "", pc); sub(/%.*/, "", pc); pc += 0
            if (pc < last) bad = bad " went down at: " $0
            last = pc; lastline = $0
            if ($0 ~ /\] done in /) done++
            else if (pc >= 100) bad = bad " step at 100%: " $0
         }
         END { if (done != 1) bad = bad " " done + 0 " done lines"
               if (lastline !~ /\] done in /) bad = bad " last: " lastline
               if (bad != "") { print "#" bad; exit 1 } }' "$1"
}

expect_ok "calibrate --help" "$GCSCALE" calibrate --help
expect_grep "help names --quick" "--quick" "$TMP/out"
expect_exit 2 "unknown option" "$GCSCALE" calibrate --bogus
expect_exit 2 "--json --csv" "$GCSCALE" calibrate --json --csv -o "$TMP/x.json"
expect_exit 2 "size beyond memory" "$GCSCALE" calibrate --size 100T -o "$TMP/x.json"
expect_exit 2 "malformed topology" "$GCSCALE" calibrate --topology "pack:2 nodex:2" -o "$TMP/x.json"
expect_exit 2 "output directory missing" "$GCSCALE" calibrate --quick --size 1M -o "$TMP/no/such/dir/p.json"
# -o naming a directory or a dangling link: refused before measuring (the
# work was lost at the end), so no progress line precedes the error.
mkdir "$TMP/outdir"
expect_exit 2 "-o naming a directory" "$GCSCALE" calibrate --quick --topology "$SYN" --size 1M -o "$TMP/outdir"
expect_grep "says it is a directory" "^gcscale calibrate: -o .*/outdir: cannot write: is a directory" "$TMP/err"
ln -s "$TMP/no/such/p.json" "$TMP/dangling.json"
expect_exit 2 "-o naming a dangling symbolic link" "$GCSCALE" calibrate --quick --topology "$SYN" --size 1M -o "$TMP/dangling.json"
expect_grep "says it is a dangling link" "^gcscale calibrate: -o .*dangling.json: cannot write: symbolic link to a missing file" "$TMP/err"
if [ -e "$TMP/no" ] || ls "$TMP"/x.json* >/dev/null 2>&1; then _report 1 "nothing left behind"; else _report 0 "nothing left behind"; fi

expect_ok "synthetic 4-node quick calibration" "$GCSCALE" calibrate --quick --quiet --topology "$SYN" --size 1M -o "$TMP/p.json" --json
expect_grep "stdout is the profile" '"format": "gcscale-machine"' "$TMP/out"
# stderr: "wrote FILE", after the calibration's warnings (with --quiet too):
# the synthetic topology's, and one for each S_O that is not a measurement
# (a fit at a bound, which these tiny in-cache runs often give).
cp "$TMP/err" "$TMP/p.err"
if [ "$(tail -n 1 "$TMP/p.err")" = "wrote $TMP/p.json" ] &&
    ! head -n -1 "$TMP/p.err" | grep -qv "^gcscale calibrate: warning: "; then
    _report 0 "stderr says wrote FILE"; else
    echo "# stderr: $(head -3 "$TMP/p.err")"; _report 1 "stderr says wrote FILE"; fi
# No S_O is 0 (issue 27): a fit at a bound, or one the model does not
# describe, is measured again and then marked unreliable with its reason,
# a non-zero stand-in in the profile and a warning; every S_O carries its
# uncertainty, and its physical bounds were checked.
expect_ok "no S_O of 0" jq -e '[.occupancy_ns[][] | . > 0] | all' "$TMP/p.json"
expect_ok "an unreliable S_O has its reason, stand-in and warning" \
    jq -e '[.calibration.occupancy[] | select(.s_o_from | startswith("unreliable"))
            | (.s_o_warning | test("^(read|rw) S_O of memory node [0-9]+ is unreliable \\(.*; the contention term uses S_O = .*rerun on an idle machine$"))
              and .first_attempt != null] | all' "$TMP/p.json"
expect_ok "unreliable S_O are in the profile's unreliable object" \
    jq -e '. as $d | ([.calibration.occupancy[] | select(.s_o_from | startswith("unreliable"))] | length)
           == ([($d.unreliable // {}) | keys[] | select(startswith("occupancy_ns."))] | length)' "$TMP/p.json"
# the profile from a file: as one argument it can pass the kernel's 128 KiB limit
expect_ok "every S_O has its uncertainty and bound check" \
    jq -e '[range(4) as $j | "occupancy_ns.read[\($j)]", "occupancy_ns.rw[\($j)]"]
           | all(. as $k | $d[0].uncertainty[$k] != null and $d[0].calibration.bounds[$k] != null)' \
    --slurpfile d "$TMP/p.json" -n
expect_ok "bandwidth's peak bound is said to be unchecked" \
    jq -e '.calibration.bounds["bandwidth_gbs[0]"] | startswith("unchecked")' "$TMP/p.json"
# --help and the docs promise a warning for a synthetic topology: it was in
# calibration.warnings only.  Every warning (calibration.warnings and each
# s_o_warning, which is also among them) is on stderr, and only once.
expect_grep "the synthetic topology's warning is on stderr" \
    '^gcscale calibrate: warning: topology is synthetic "pack:2 node:2 core:2 pu:1": threads are not pinned' "$TMP/p.err"
jq -r '.calibration.warnings[], (.calibration.occupancy[] | .s_o_warning // empty)' "$TMP/p.json" |
    sort -u >"$TMP/p.warn"
sed -n 's/^gcscale calibrate: warning: \(.*\); profile usable: .*; to do: .*$/\1/p' "$TMP/p.err" | sort >"$TMP/p.errwarn"
cmp -s "$TMP/p.warn" "$TMP/p.errwarn"; _report $? "every warning is on stderr, once, with what it means and what to do"
expect_grep "... the synthetic topology's says the profile is for testing, and how to get this machine's" \
    '^gcscale calibrate: warning: topology is synthetic .*; profile usable: for testing only .*; to do: for this machine.s profile, run gcscale calibrate without --topology$' "$TMP/p.err"
# Whether a tiny in-cache run gives an unreliable S_O depends on the machine
# (CI's gave none): each one the profile marks has its line on stderr.
n_unrel=$(jq '[.calibration.occupancy[] | select(.s_o_from | startswith("unreliable"))] | length' "$TMP/p.json")
n_unrel_err=$(grep -cE 'S_O of memory node [0-9]+ is unreliable .*; profile usable: yes .*; to do: for a measured S_O, rerun on an idle machine' "$TMP/p.err")
[ "$n_unrel" = "$n_unrel_err" ]
_report $? "... each unreliable S_O ($n_unrel) says the profile is usable, and to rerun on an idle machine"
expect_ok "the profile loads" "$GCSCALE" machine show "$TMP/p.json" --json

# Under ThreadSanitizer (make check-tsan) a quick calibration takes about a
# minute (the marker's cost heaps run 20-50x slower), and the checks below
# up to --gc-only are the options' and outputs' logic on one thread, which
# `make check` and `make check-asan` run.  What starts threads -- the
# occupancy runs, the marker, the coordination and overlap steps -- ran
# above (the 4-node calibration) and runs again in the --gc-only block.
if [ "${GCSCALE_TEST_SANITIZER:-}" != thread ]; then

# --repeat: N runs, one spread table, the kept run recorded.
expect_ok "--repeat 2 --quick" "$GCSCALE" calibrate --quick --quiet --topology "node:1 pu:1" --size 1M \
    --repeat 2 -o "$TMP/rep.json"
expect_grep "the spread table" "^constant  *runs  *min  *median  *max  *rel_spread  *unreliable_runs" "$TMP/out"
expect_grep "a row per constant" "^occupancy_ns.read\[0\]  *2 " "$TMP/out"
expect_ok "the profile says which run it kept" \
    jq -e '.calibration.repeat.runs == 2 and (.calibration.repeat.kept_run | . == 1 or . == 2)
           and (.calibration.repeat.spread | length) > 5' "$TMP/rep.json"
expect_ok "--repeat --csv --table spread" "$GCSCALE" calibrate --quick --quiet --topology "node:1 pu:1" --size 1M \
    --repeat 1 --csv --table spread -o "$TMP/rep.json"
expect_grep "the spread alone, plain CSV" "^constant," "$TMP/out"
expect_exit 2 "--repeat 0" "$GCSCALE" calibrate --quick --repeat 0 -o "$TMP/x.json"
expect_exit 2 "--repeat 0 with --gc-only" "$GCSCALE" calibrate --gc-only --repeat 0 -o "$TMP/rep.json"
# Latency with page walks: a 4 KiB full-random figure for every pair, the
# page walk derived from it; huge pages cannot back a 1 MiB buffer, so the
# profile says why in place of a number.
expect_ok "full-random latency and page walks for every pair" \
    jq -e '(.latency_full_random_ns["4k"] | length == 4 and all(length == 4 and all(. > 0)))
           and (.page_walk_ns["4k"] | all(all(. >= 0)))
           and (.latency_full_random_ns.huge | type == "string" and startswith("not measured"))
           and (.calibration.full_random | length >= 16)' "$TMP/p.json"
expect_ok "machine show prints them" "$GCSCALE" machine show "$TMP/p.json"
expect_grep "... beside M1" "^read latency with page walks \(ns\)" "$TMP/out"
expect_grep "... and why huge pages are missing" "^huge pages: not measured" "$TMP/out"
# -o -: the document goes to stdout once, in place of the tables (it was
# saved there and then printed again: two documents, not JSON).
for f in "" --json; do
    expect_ok "-o - $f" "$GCSCALE" calibrate --quick --quiet --topology "node:1 pu:1" --size 1M -o - $f
    cp "$TMP/out" "$TMP/dash.out"
    expect_ok "-o - $f: stdout is one profile document" \
        jq -e -s 'length == 1 and .[0].format == "gcscale-machine"' "$TMP/dash.out"
done
expect_exit 2 "-o - with --csv" "$GCSCALE" calibrate --quick --quiet --size 1M -o - --csv
python3 - "$TMP/p.json" >"$TMP/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = (len(d["nodes"]) == 4
      and all(len(d["latency_ns"][a]) == 4 and all(len(r) == 4 for r in d["latency_ns"][a]) for a in ("read", "rw"))
      and all(len(d["occupancy_ns"][a]) == 4 for a in ("read", "rw"))
      and len(d["bandwidth_gbs"]) == 4
      and d["calibration"]["synthetic"] is True
      and d["calibration"]["binding_honoured"] is False
      and any("synthetic" in w for w in d["calibration"]["warnings"])
      and len(d["calibration"]["occupancy"]) == 8
      and all("open" in o and "closed" in o for o in d["calibration"]["occupancy"])
      and "gc_miss_overlap" not in d
      and d["calibration"]["gc_overlap"]["note"].startswith("not fitted")
      and "gc_stream_line_ns" not in d
      and d["calibration"]["stream_line"]["note"].startswith("not fitted")
      and "gc_resident" not in d
      and d["calibration"]["resident"]["note"].startswith("not fitted"))
print("matrices ok" if ok else "matrices wrong")
PY
expect_grep "4x4 matrices, warnings and fits" "matrices ok" "$TMP/check"

# --size below the last-level cache measures the cache, not memory: it went
# into the profile without a word.  Now a warning on stderr and in
# calibration.warnings (a synthetic topology gives the LLC: 4 MiB).
expect_ok "--size below the LLC" "$GCSCALE" calibrate --quick --quiet \
    --topology "node:1 l3:1(size=4194304) core:1 pu:1" --size 1M -o "$TMP/small-llc.json"
expect_grep "... warns on stderr" \
    "^gcscale calibrate: warning: --size 1 MiB is below the last-level cache \(4 MiB\): the chase runs in the caches" "$TMP/err"
expect_ok "... and in calibration.warnings" \
    jq -e '[.calibration.warnings[] | select(test("^--size 1 MiB is below the last-level cache"))] | length == 1' \
    "$TMP/small-llc.json"
# Above the LLC (256 KiB here) no such warning; with the overlap fit the
# progress is still one series.  The fit's heap is 2 x the effective LLC the
# sweep finds on the real CPU, and a sweep that ends at 1 MiB finds the
# edge of the L1 on some runs and of the L2 on others where the L2 is 1 MiB
# (the Zen 5 VM): the heap fits --size only in the first case, and the
# profile must say which.
expect_ok "--size above the LLC" "$GCSCALE" calibrate --quick \
    --topology "node:1 l2:1(size=262144) core:1 pu:1" --size 1M -o "$TMP/big-llc.json"
if grep -q "last-level cache" "$TMP/err"; then _report 1 "... no LLC warning"; else _report 0 "... no LLC warning"; fi
progress_ok "$TMP/err"; _report $? "... one progress series, the overlap fit included"
expect_ok "... the overlap was fitted, or --size named as below the heap the fit needs" jq -e \
    'if 2 * .llc_effective_bytes <= 1048576 then .gc_miss_overlap >= 1
     else (.gc_miss_overlap == null and (.calibration.gc_overlap.note | startswith("not fitted: --size is below")))
     end' "$TMP/big-llc.json"

# A memory-only node (no CPUs of its own, like CXL or PMEM memory): it got
# its neighbours' CPUs from hwloc's locality cpuset, and the finished profile
# was refused after every node had been measured.  Now its cpus are empty
# and it is measured from the other nodes' CPUs.
expect_ok "calibration with a memory-only node" "$GCSCALE" calibrate --quick \
    --topology "[numa] pack:2 [numa] core:1 pu:1" --size 1M -o "$TMP/cpuless.json"
progress_ok "$TMP/err"; _report $? "... its progress is one series that ends at 100%"
expect_ok "... its cpus are empty, the others keep theirs, it is measured" \
    jq -e '.nodes == [{"id": 0, "cpus": [0], "mem_bytes": 0}, {"id": 1, "cpus": [1], "mem_bytes": 0},
                      {"id": 2, "cpus": [], "mem_bytes": 0}]
           and (.latency_ns.read | length) == 3 and (.bandwidth_gbs | length) == 3
           and ([.calibration.occupancy[] | select(.mem_node == 2) | .points | length] | min) > 0' \
    "$TMP/cpuless.json"

# On a synthetic topology occupancy runs up to the host's CPUs, whose
# thread counts were stored in an array sized by the topology's CPUs: with
# "node:1 pu:1" on a 40-CPU host, 7 counts in room for 2 (glibc aborted).
# tests/progs/fakecpus.c makes this host report 12 online CPUs: 5 counts
# (powers of two, then the CPU count, as at 40) in room for 2.  Not 40:
# the coordination step then measures P = 1..40 on this host's CPUs, 40 s
# of oversubscribed workers (a minute under ASan) that check nothing here.
# A sanitizer runtime, when the program has one, must come first in
# LD_PRELOAD.
if cc -shared -fPIC -o "$TMP/fakecpus.so" tests/progs/fakecpus.c -ldl 2>"$TMP/cc.err"; then
    preload="$TMP/fakecpus.so"
    san=$(ldd "$GCSCALE" 2>/dev/null | awk '/lib[at]san\.so/ { print $3; exit }')
    [ -n "$san" ] && preload="$san $preload"
    expect_ok "synthetic topology with fewer CPUs than the host" env FAKE_NCPUS=12 LD_PRELOAD="$preload" \
        "$GCSCALE" calibrate --quick --quiet --topology "node:1 pu:1" --size 1M -o "$TMP/fake.json"
    expect_ok "... occupancy ran 1 to 12 threads" \
        jq -e '[.calibration.occupancy[0].points[].threads] | unique == [1, 2, 4, 8, 12]' "$TMP/fake.json"
else
    echo "# cc:"; { head -c 300 "$TMP/cc.err"; echo; } | sed 's/^/#   /'
    _report 1 "compile tests/progs/fakecpus.c"
fi

fi # not under ThreadSanitizer

# --gc-only: the collector's costs and miss overlap into an existing profile
# (one with small caches, so that the overlap heap stays at its 1 M floor).
expect_exit 2 "--gc-only, no such profile" "$GCSCALE" calibrate --gc-only --quick -o "$TMP/none.json"
mkdir -p "$TMP/empty"
expect_exit 2 "--gc-only, no default profile here" sh -c "cd '$TMP/empty' && exec '$(realpath "$GCSCALE")' calibrate --gc-only --quick"
expect_ok "... and no data/machines/ left behind" test ! -e "$TMP/empty/data"
expect_exit 2 "--gc-only with --size" "$GCSCALE" calibrate --gc-only --size 1M -o "$TMP/p.json"
# The profile is this machine's: its host and CPU count (another machine's
# is refused, below).
ncpus=$("$GCSCALE" bench topology --json | jq '.system[0].cpus')
jq --arg host "$(uname -n)" --argjson n "$ncpus" \
    '.caches = [{"level": 1, "type": "data", "size_bytes": 32768, "line_bytes": 64, "ways": 8, "cpus": [0]},
               {"level": 2, "type": "unified", "size_bytes": 262144, "line_bytes": 64, "ways": 8, "cpus": [0]}]
    | del(.gc_miss_overlap) | .latency_ns.read[0][0] = 100 | .host = $host | .nodes[0].cpus = [range($n)]' \
    data/machines/dev-2core-kvm-epyc.json > "$TMP/small.json"
cp "$TMP/small.json" "$TMP/small-before.json"
expect_ok "--gc-only --quick" "$GCSCALE" calibrate --gc-only --quick -o "$TMP/small.json" --json
cp "$TMP/err" "$TMP/gc-only.err"
progress_ok "$TMP/err"; _report $? "... its progress, the overlap fit included, is one series"
# the cost fit's own warning (a split it could not trust) is said on stderr:
# with --gc-only as the reason the costs are unreliable, "gcscale calibrate:
# warning: gc_cost_ns.object is unreliable (WARNING); ..." (seen when the fit
# gave one, under ThreadSanitizer)
w=$(jq -r '.calibration.gc_costs.warning // empty' "$TMP/small.json")
[ -z "$w" ] || grep '^gcscale calibrate: warning: ' "$TMP/err" | grep -qF "$w"
_report $? "... a gc_costs warning, if any, is printed"
expect_ok "... with the cost fit's condition number and intervals" \
    jq -e '.calibration.gc_costs | .condition_number >= 1 and .condition_number_max == 30
           and (.uncertainty["gc_cost_ns.object"].ci95 | length == 2)
           and .uncertainty["gc_cost_ns.pointer"].stderr > 0 and (.attempt_log | length) >= 1' \
    "$TMP/small.json"
expect_ok "... fits gc_miss_overlap and keeps the memory measurements" \
    jq -e -s '.[1].gc_miss_overlap >= 1 and .[1].calibration.gc_overlap.objects == 1048576
              and .[1].latency_ns == .[0].latency_ns and .[1].caches == .[0].caches
              and .[1].calibration.gc_only.mode == "quick"' "$TMP/small-before.json" "$TMP/small.json"
# 2026-11-27: the sequential line's price, fitted on a list of 2 x the
# (pretended) 256 KiB L2, at least 2^20 nodes, and the NULL switch's cost
# (or why it is not there)
expect_ok "... fits gc_stream_line_ns on a list beyond the LLC" \
    jq -e '.gc_stream_line_ns > 0 and .calibration.stream_line.objects == 1048576
           and .calibration.stream_line.b_lines > 0 and .calibration.stream_line.ns == .gc_stream_line_ns' \
    "$TMP/small.json"
# 2026-11-28: the resident lines' prices, fitted on heaps between the
# private caches and the effective LLC, or why not (the pretended caches
# may leave no room between them)
expect_ok "... fits gc_resident within the LLC, or says why not" \
    jq -e '.calibration.resident as $r
           | if .gc_resident then .gc_resident.miss_overlap >= 1 and .gc_resident.stream_line_ns > 0
                  and $r.miss_overlap == .gc_resident.miss_overlap and $r.objects > 0
                  and $r.random.b_ns > 0 and $r.list.c_lines > 0
             else ($r.note | startswith("not fitted")) end' \
    "$TMP/small.json"
# the speed probe at the run's start and end: both times, their ratio, and
# a warning exactly when they differ by more than the limit -- printed
# (whether this host's vCPU changed speed in between decides which)
expect_ok "... times the speed probe at its start and end, and warns exactly beyond its limit" \
    jq -e '.calibration.speed_probe | .start_t1_ns > 0 and .end_t1_ns > 0 and .seconds_apart > 0
           and .drift_limit == 0.1 and (.ratio - .end_t1_ns / .start_t1_ns | . < 1e-9 and . > -1e-9)
           and ((.warning == null) == ((if .ratio > 1 then .ratio - 1 else 1 - .ratio end) <= 0.1))' \
    "$TMP/small.json"
w=$(jq -r '.calibration.speed_probe.warning // empty' "$TMP/small.json")
[ -z "$w" ] || grep '^gcscale calibrate: warning: speed probe: .*; profile usable: yes' "$TMP/gc-only.err" | grep -qF "$w"
_report $? "... a speed-probe warning, if any, is printed with its advice"
expect_ok "... measures gc_class_cost_ns.null_switch, or says why not" \
    jq -e '(.gc_class_cost_ns.null_switch >= 0 and (.calibration.gc_costs.classes.null_switch.points | length) == 3)
           or (.calibration.gc_costs.classes.null_switch.not_measured | type) == "string"' "$TMP/small.json"

# the rest is the refusals' logic and two more --gc-only runs: not under TSan
if [ "${GCSCALE_TEST_SANITIZER:-}" = thread ]; then
    echo "# under ThreadSanitizer: the single-threaded checks were left to make check"
    echo "1..$_n"
    exit 0
fi

# --gc-only onto another machine's profile wrote this machine's marker costs
# into it without a word: refused (one line, exit 2, the file untouched)
# unless --force, which warns and records it.
cp data/machines/o2k.json "$TMP/o2k.json"
expect_exit 2 "--gc-only onto another host's profile" "$GCSCALE" calibrate --gc-only --quick --quiet -o "$TMP/o2k.json"
expect_grep "... says whose profile it is and names --force" \
    '^gcscale calibrate: .*/o2k.json is the profile of host "sgi-origin-2000 \(64 CPUs\)" \(64 CPUs\), this is host ".*--force' "$TMP/err"
cmp -s "$TMP/o2k.json" data/machines/o2k.json; _report $? "... the profile is untouched"
jq --argjson n "$ncpus" '.nodes[0].cpus = [range($n + 1)]' "$TMP/small-before.json" > "$TMP/morecpus.json"
expect_exit 2 "--gc-only onto this host's profile with other CPUs" "$GCSCALE" calibrate --gc-only --quick --quiet -o "$TMP/morecpus.json"
expect_exit 2 "--force without --gc-only" "$GCSCALE" calibrate --force --quick --quiet --size 1M -o "$TMP/x.json"
expect_ok "--gc-only --force onto another host's profile" "$GCSCALE" calibrate --gc-only --force --quick --quiet -o "$TMP/o2k.json"
expect_grep "... warns" "^gcscale calibrate: warning: --force: .*o2k.json is the profile of host" "$TMP/err"
expect_ok "... and records it" jq -e '(.calibration.gc_only.forced | test("sgi-origin-2000")) and .gc_cost_ns.object > 0' "$TMP/o2k.json"
# --gc-only --repeat: the collector's constants measured twice, each into
# the profile as it was; the spread covers those only, the memory
# measurements stay as they were.
cp "$TMP/small-before.json" "$TMP/rep2.json"
expect_ok "--gc-only --repeat 2" "$GCSCALE" calibrate --gc-only --quick --repeat 2 -o "$TMP/rep2.json"
expect_grep "... prints the spread" "^gc_cost_ns.pointer  *2 " "$TMP/out"
progress_ok "$TMP/err"; _report $? "... its progress over both runs is one series"
expect_ok "... keeps one run, with the spread of the gc_* constants only" \
    jq -e -s '.[1].calibration.repeat.runs == 2 and (.[1].calibration.repeat.constants | test("gc_"))
              and ([.[1].calibration.repeat.spread[].constant | startswith("gc_")] | all)
              and (.[1].calibration.repeat.spread | length) >= 5
              and .[1].latency_ns == .[0].latency_ns and .[1].gc_cost_ns.object > 0' \
    "$TMP/small-before.json" "$TMP/rep2.json"
# --gc-only --key: one key measured into the profile, on its own figures,
# everything else kept; the record says which key and when.
expect_exit 2 "--key without --gc-only" "$GCSCALE" calibrate --key gc_resident -o "$TMP/k.json"
expect_exit 2 "--key of another name" "$GCSCALE" calibrate --gc-only --key gc_cost_ns -o "$TMP/small.json"
expect_grep "... names the keys it measures" "is none of gc_cost_ns.worker, gc_miss_overlap" "$TMP/err"
expect_exit 2 "--key with --repeat" "$GCSCALE" calibrate --gc-only --key gc_resident --repeat 2 -o "$TMP/small.json"
cp "$TMP/small.json" "$TMP/k.json"
expect_ok "--gc-only --key gc_resident" "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_resident -o "$TMP/k.json"
expect_ok "... changes only that key, its details and the record" \
    jq -e -s '(.[0] | del(.gc_resident, .calibration.resident, .calibration.keys_added)) as $a
              | (.[1] | del(.gc_resident, .calibration.resident, .calibration.keys_added)) as $b
              | $a.gc_cost_ns == $b.gc_cost_ns and $a.gc_miss_overlap == $b.gc_miss_overlap
                and $a.latency_ns == $b.latency_ns and $a.gc_coord == $b.gc_coord
                and .[1].calibration.keys_added[-1].key == "gc_resident"
                and (.[1].calibration.resident | has("note"))
                and ((.[1].gc_resident == null) == (.[1].calibration.resident.note | startswith("not fitted")))' \
    "$TMP/small.json" "$TMP/k.json"
cp "$TMP/small-before.json" "$TMP/k0.json"
expect_ok "--key gc_resident on a profile without the overlap it builds on" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_resident -o "$TMP/k0.json"
expect_ok "... leaves it out and says why" \
    jq -e '.gc_resident == null and (.calibration.resident.error | test("gc_miss_overlap"))' "$TMP/k0.json"
# gc_residency: after gc_resident, whose prices it is measured against
cp "$TMP/k.json" "$TMP/kr.json"
expect_ok "--gc-only --key gc_residency" "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_residency -o "$TMP/kr.json"
expect_ok "... changes only that key, its details and the record; a curve that falls to 0 at the overlap heap" \
    jq -e -s '(.[0] | del(.gc_residency, .calibration.residency, .calibration.keys_added)) as $a
              | (.[1] | del(.gc_residency, .calibration.residency, .calibration.keys_added)) as $b
              | $a.gc_resident == $b.gc_resident and $a.gc_miss_overlap == $b.gc_miss_overlap
                and $a.latency_ns == $b.latency_ns
                and .[1].calibration.keys_added[-1].key == "gc_residency"
                and ((.[1].gc_residency == null) == (.[1].calibration.residency.note | startswith("not fitted")))
                and (.[1].gc_residency == null or
                     (.[1].gc_residency.resident[-1] == 0
                      and (.[1].gc_residency.footprint_llc | length) == (.[1].gc_residency.resident | length)))' \
    "$TMP/k.json" "$TMP/kr.json"
cp "$TMP/k0.json" "$TMP/kr0.json"
expect_ok "--key gc_residency on a profile without gc_resident" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_residency -o "$TMP/kr0.json"
expect_ok "... leaves it out and says why" \
    jq -e '.gc_residency == null and (.calibration.residency.note | test("no gc_resident"))' "$TMP/kr0.json"
# dependent_load_ns: in every calibration, and by its key into a profile
# made before it (the memory system's, so not in a --gc-only run).
expect_ok "a calibration has the dependent-load curve" \
    jq -e '(.dependent_load_ns.size_bytes | length) >= 2
           and (.dependent_load_ns.size_bytes | length) == (.dependent_load_ns.ns | length)
           and (.dependent_load_ns.ns | all(. > 0)) and .calibration.dependent_load.pages == "4k"' "$TMP/p.json"
jq 'del(.dependent_load_ns, .calibration.dependent_load)' "$TMP/small.json" > "$TMP/d.json"
expect_ok "--gc-only without --key leaves it out" "$GCSCALE" calibrate --gc-only --quick --quiet -o "$TMP/d.json"
expect_ok "... (no curve)" jq -e '.dependent_load_ns == null' "$TMP/d.json"
expect_ok "--gc-only --key dependent_load_ns" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key dependent_load_ns -o "$TMP/d.json"
expect_ok "... adds the curve and its record, nothing else moved" \
    jq -e -s '(.[1].dependent_load_ns.ns | length) >= 2 and .[1].calibration.keys_added[-1].key == "dependent_load_ns"
              and .[0].latency_ns == .[1].latency_ns and .[0].llc_effective_bytes == .[1].llc_effective_bytes' \
    "$TMP/small.json" "$TMP/d.json"
# gc_coord.attempts_per_search (2026-11-29): every calibration's gc_coord
# has it; by its key, into a gc_coord fitted before, the ratio alone.
expect_ok "gc_coord has the attempts per search" \
    jq -e '.gc_coord.attempts_per_search >= 1 and .gc_coord.attempts_per_search <= 16
           and .calibration.gc_coord.attempts_per_search == .gc_coord.attempts_per_search' "$TMP/small.json"
jq 'del(.gc_coord.attempts_per_search)' "$TMP/small.json" > "$TMP/s.json"
expect_ok "--gc-only --key gc_coord.attempts_per_search" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_coord.attempts_per_search -o "$TMP/s.json"
expect_ok "... adds the ratio and its record; gc_coord's laws and prices, its fit, all else kept" \
    jq -e -s '(.[1].gc_coord.attempts_per_search >= 1) and .[1].calibration.keys_added[-1].key == "gc_coord.attempts_per_search"
              and .[1].calibration.gc_coord_attempts_per_search.attempts_per_search == .[1].gc_coord.attempts_per_search
              and (.[0] | del(.gc_coord.attempts_per_search, .calibration.keys_added))
                  == (.[1] | del(.gc_coord.attempts_per_search, .calibration.keys_added,
                                 .calibration.gc_coord_attempts_per_search))' \
    "$TMP/small.json" "$TMP/s.json"
jq 'del(.gc_coord, .calibration.gc_coord)' "$TMP/small.json" > "$TMP/s0.json"
expect_ok "... on a profile without gc_coord: nothing added, and why" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_coord.attempts_per_search -o "$TMP/s0.json"
expect_ok "... (the note)" jq -e '.gc_coord == null and (.calibration.gc_coord_attempts_per_search.note | test("no gc_coord"))' "$TMP/s0.json"
# gc_mark_transfer_ns (2026-11-29): a --gc-only run measures it, or says why
# not (a noisy host can leave the busy time flat at P = 2); by its key into
# a profile without it, that key and its record alone.
expect_ok "a --gc-only run has the mark-table transfer price, or says why not" \
    jq -e '(.gc_mark_transfer_ns > 0 and .calibration.gc_mark_transfer.gc_mark_transfer_ns == .gc_mark_transfer_ns
            and .calibration.gc_mark_transfer.table_fit > 0 and .calibration.gc_mark_transfer.transfers > 0)
           or (.gc_mark_transfer_ns == null and (.calibration.gc_mark_transfer.note | startswith("not")))' "$TMP/small.json"
jq 'del(.gc_mark_transfer_ns, .calibration.gc_mark_transfer)' "$TMP/small.json" > "$TMP/m.json"
expect_ok "--gc-only --key gc_mark_transfer_ns" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_mark_transfer_ns -o "$TMP/m.json"
expect_ok "... adds the key (or why not) and its record, nothing else moved" \
    jq -e -s '.[1].calibration.keys_added[-1].key == "gc_mark_transfer_ns"
              and (.[1].gc_mark_transfer_ns > 0 or (.[1].calibration.gc_mark_transfer.note | startswith("not")))
              and (.[0] | del(.gc_mark_transfer_ns, .calibration.gc_mark_transfer, .calibration.keys_added))
                  == (.[1] | del(.gc_mark_transfer_ns, .calibration.gc_mark_transfer, .calibration.keys_added))' \
    "$TMP/small.json" "$TMP/m.json"
# gc_mark_transfer_cached_ns (2026-11-29, thirteenth session): measured by
# a --gc-only run or said why not; by its key, that key and its record alone.
expect_ok "a --gc-only run has the cached heap's transfer price, or says why not" \
    jq -e '(.gc_mark_transfer_cached_ns > 0
            and .calibration.gc_mark_transfer_cached.gc_mark_transfer_cached_ns == .gc_mark_transfer_cached_ns
            and .calibration.gc_mark_transfer_cached.heap_fit == 1)
           or (.gc_mark_transfer_cached_ns == null and (.calibration.gc_mark_transfer_cached.note | startswith("not")))' \
    "$TMP/small.json"
jq 'del(.gc_mark_transfer_cached_ns, .calibration.gc_mark_transfer_cached)' "$TMP/small.json" > "$TMP/mc.json"
expect_ok "--gc-only --key gc_mark_transfer_cached_ns" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_mark_transfer_cached_ns -o "$TMP/mc.json"
expect_ok "... adds the key (or why not) and its record, nothing else moved" \
    jq -e -s '.[1].calibration.keys_added[-1].key == "gc_mark_transfer_cached_ns"
              and (.[1].gc_mark_transfer_cached_ns > 0
                   or (.[1].calibration.gc_mark_transfer_cached.note | startswith("not")))
              and (.[0] | del(.gc_mark_transfer_cached_ns, .calibration.gc_mark_transfer_cached,
                              .calibration.keys_added))
                  == (.[1] | del(.gc_mark_transfer_cached_ns, .calibration.gc_mark_transfer_cached,
                                 .calibration.keys_added))' \
    "$TMP/small.json" "$TMP/mc.json"
# gc_cost_ns.worker (2026-11-29): a --gc-only run fits it beside the steal
# cost; by its key into a profile without it (an older calibration, whose
# steal cost was growth / steals), both costs and their record alone, the
# old steal cost's unreliable mark dropped.
expect_ok "a --gc-only run has the worker cost and the fit behind it" \
    jq -e '.gc_cost_ns.worker >= 0 and .gc_cost_ns.steal >= 0
           and .calibration.gc_costs.steal_cost_fit.worker_ns == .gc_cost_ns.worker
           and (.calibration.gc_costs.steal_samples | length) >= 6' "$TMP/small.json"
jq 'del(.gc_cost_ns.worker) | .gc_cost_ns.steal = 2400 | .unreliable["gc_cost_ns.steal"] = "an older range"' \
    "$TMP/small.json" > "$TMP/w.json"
expect_ok "--gc-only --key gc_cost_ns.worker" \
    "$GCSCALE" calibrate --gc-only --quick --quiet --key gc_cost_ns.worker -o "$TMP/w.json"
expect_ok "... both costs, their record and intervals, nothing else moved" \
    jq -e -s '.[1].calibration.keys_added[-1].key == "gc_cost_ns.worker"
              and .[1].gc_cost_ns.worker >= 0 and .[1].gc_cost_ns.steal >= 0
              and .[1].gc_cost_ns.object == .[0].gc_cost_ns.object
              and (.[1].unreliable // {} | has("gc_cost_ns.steal") | not)
              and (.[1].calibration.gc_cost_worker.steal_samples | length) >= 6
              and .[1].calibration.gc_cost_worker.steal_cost_fit.samples
                  <= (.[1].calibration.gc_cost_worker.steal_samples | length)
              and (.[0] | del(.gc_cost_ns, .unreliable, .uncertainty, .calibration.keys_added))
                  == (.[1] | del(.gc_cost_ns, .unreliable, .uncertainty, .calibration.keys_added,
                                 .calibration.gc_cost_worker))' \
    "$TMP/small.json" "$TMP/w.json"
# A profile calibrated on a synthetic topology here has the topology's CPUs:
# its host is what counts.
expect_ok "--gc-only onto this host's synthetic-topology profile" "$GCSCALE" calibrate --gc-only --quick --quiet -o "$TMP/p.json"

echo "1..$_n"
