#!/usr/bin/env bash
# test_calibrate.sh -- gcscale calibrate: bad input, and a small synthetic
# 4-node calibration that must give a valid profile with 4x4 matrices.
. "$(dirname "$0")/lib.sh"

SYN="pack:2 node:2 core:2 pu:1"

expect_ok "calibrate --help" "$GCSCALE" calibrate --help
expect_grep "help names --quick" "--quick" "$TMP/out"
expect_exit 2 "unknown option" "$GCSCALE" calibrate --bogus
expect_exit 2 "size beyond memory" "$GCSCALE" calibrate --size 100T -o "$TMP/x.json"
expect_exit 2 "malformed topology" "$GCSCALE" calibrate --topology "pack:2 nodex:2" -o "$TMP/x.json"
expect_exit 2 "output directory missing" "$GCSCALE" calibrate --quick --size 1M -o "$TMP/no/such/dir/p.json"
if [ -e "$TMP/no" ] || ls "$TMP"/x.json* >/dev/null 2>&1; then _report 1 "nothing left behind"; else _report 0 "nothing left behind"; fi

expect_ok "synthetic 4-node quick calibration" "$GCSCALE" calibrate --quick --quiet --topology "$SYN" --size 1M -o "$TMP/p.json" --json
expect_grep "stdout is the profile" '"format": "gcscale-machine"' "$TMP/out"
if [ "$(cat "$TMP/err")" = "wrote $TMP/p.json" ]; then _report 0 "stderr says wrote FILE"; else
    echo "# stderr: $(head -3 "$TMP/err")"; _report 1 "stderr says wrote FILE"; fi
expect_ok "the profile loads" "$GCSCALE" machine show "$TMP/p.json" --json
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
      and all("open" in o and "closed" in o for o in d["calibration"]["occupancy"]))
print("matrices ok" if ok else "matrices wrong")
PY
expect_grep "4x4 matrices, warnings and fits" "matrices ok" "$TMP/check"

echo "1..$_n"
