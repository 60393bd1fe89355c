#!/usr/bin/env bash
# test_machine.sh -- gcscale machine show: the reference profiles in every
# format, and one-line errors naming the key for files that are not valid.
. "$(dirname "$0")/lib.sh"

O2K=data/machines/o2k.json
E10K=data/machines/e10k.json

expect_ok "machine --help" "$GCSCALE" machine --help
expect_grep "help shows the usage" "gcscale machine show FILE" "$TMP/out"

expect_ok "show o2k (text)" "$GCSCALE" machine show "$O2K"
expect_grep "o2k: 32 nodes, 64 CPUs" "^machine profile: 32 nodes, 64 CPUs" "$TMP/out"
expect_grep "o2k: node 31 holds CPUs 62-63" "^ +31 +62-63 +2 " "$TMP/out"
expect_grep "o2k: read latency row 0 is local 270, remote 590" \
    "^ +0 +270\.0 +590\.0 +590\.0" "$TMP/out"
expect_grep "o2k: occupancy 230 read, 490 RW" "^ +0 +230\.0 +490\.0 +- *$" "$TMP/out"
expect_grep "o2k: gc costs not calibrated" "not calibrated .*run gcscale calibrate" "$TMP/out"

# A VM that lists its host's L3 once per vCPU (docs/model.md, "A last level
# listed per CPU"): the text says what size the model takes; a profile whose
# levels are as hwloc says has no such line.
expect_ok "show the Zen 5 entry's profile" "$GCSCALE" machine show data/corpus/dev-2core-kvm-zen5/profile.json
expect_grep "... the per-vCPU L3 is taken at the effective LLC" \
    "^level 3: the model takes each 508 MiB instance at 14.0 MiB, the effective LLC" "$TMP/out"
expect_ok "show the Intel entry's profile" "$GCSCALE" machine show data/corpus/dev-2core-kvm-xeon-2/profile.json
! grep -q "the model takes each" "$TMP/out"
_report $? "... a shared L3 keeps its nominal size (no note)"

expect_ok "show o2k --json" "$GCSCALE" machine show --json "$O2K"
expect_grep "json is the profile document" '"format": "gcscale-machine"' "$TMP/out"
cp "$TMP/out" "$TMP/o2k-copy.json"
expect_ok "the --json output loads again" "$GCSCALE" machine show "$TMP/o2k-copy.json"
expect_grep "and keeps the extra keys" "^other keys kept: source, note" "$TMP/out"

expect_ok "show e10k --csv: one table, the nodes" "$GCSCALE" machine show "$E10K" --csv
expect_grep "... plain: the header first" "^node,cpus,ncpus,mem_bytes$" "$TMP/out"
expect_grep "... the other tables named on stderr" "the CSV is the nodes table; the others: caches, latency_read, latency_rw" "$TMP/err"
expect_ok "show e10k --csv --table latency_rw" "$GCSCALE" machine show "$E10K" --csv --table latency_rw
expect_grep "csv rows are comma-separated, at full precision" "^0,610,610," "$TMP/out"
expect_exit 2 "--table a profile lacks: refused, naming the tables" "$GCSCALE" machine show "$E10K" --csv --table nope

printf '{"format": "gcscale-machine", "version": \n' >"$TMP/malformed.json"
expect_exit 2 "malformed JSON" "$GCSCALE" machine show "$TMP/malformed.json"
expect_grep "malformed JSON: names the file and the line" "malformed.json: malformed JSON at line" "$TMP/err"

head -c 600 "$O2K" >"$TMP/truncated.json"
expect_exit 2 "truncated file" "$GCSCALE" machine show "$TMP/truncated.json"

expect_exit 2 "missing file" "$GCSCALE" machine show "$TMP/no-such-file.json"
expect_grep "missing file: says so" "no-such-file.json: cannot read: No such file" "$TMP/err"

cat >"$TMP/wrong-size.json" <<'EOF'
{
  "format": "gcscale-machine", "version": 1,
  "nodes": [ {"id": 0, "cpus": [0], "mem_bytes": 0}, {"id": 1, "cpus": [1], "mem_bytes": 0} ],
  "caches": [],
  "latency_ns": { "read": [[90, 140], [140, 90]], "rw": [[100, 150], [150, 100, 100]] },
  "occupancy_ns": { "read": [20, 20], "rw": [30, 30] }
}
EOF
expect_exit 2 "matrix of the wrong size" "$GCSCALE" machine show "$TMP/wrong-size.json"
expect_grep "wrong size: names the key" \
    "^gcscale machine: .*wrong-size.json: latency_ns.rw\[1\]: expected 2 entries \(one per memory node\), found 3$" \
    "$TMP/err"

expect_exit 2 "unknown option" "$GCSCALE" machine show "$O2K" --bogus

# Where profiles live (formats/profile_path.c): a bare name is looked up in
# data/machines/, then the per-user directory, then the installed ones.
expect_ok "show by name from the source tree" "$GCSCALE" machine show o2k
expect_grep "... is the paper's Origin 2000" "^machine profile: 32 nodes, 64 CPUs" "$TMP/out"
mkdir -p "$TMP/xdg/gcscale/machines" "$TMP/elsewhere"
G="$(cd "$(dirname "$GCSCALE")" && pwd)/$(basename "$GCSCALE")" # usable from elsewhere
cp data/machines/e10k.json "$TMP/xdg/gcscale/machines/mine.json"
expect_ok "a name from another directory: the per-user copy" \
    sh -c "cd '$TMP/elsewhere' && XDG_DATA_HOME='$TMP/xdg' '$G' machine show mine"
expect_grep "... is the E10000 copied there" "^machine profile: 16 nodes, 64 CPUs" "$TMP/out"
expect_exit 2 "an unknown name: one line saying where it looked" \
    sh -c "cd '$TMP/elsewhere' && XDG_DATA_HOME='$TMP/xdg' '$G' machine show nosuch"
expect_grep "... names the places" "no machine profile named 'nosuch' \(looked in data/machines/, $TMP/xdg/gcscale/machines and .*/share/gcscale/machines\)" "$TMP/err"
expect_exit 2 "validate outside a source tree without a profile: says where it looked" \
    sh -c "cd '$TMP/elsewhere' && XDG_DATA_HOME='$TMP/xdg' GCSCALE_MACHINE= '$G' validate --quick"
expect_grep "... both places" "looked for data/machines/.*\.json and $TMP/xdg/gcscale/machines/.*\.json" "$TMP/err"

expect_ok "--version" "$GCSCALE" --version
expect_grep "... with the git revision" "^gcscale [0-9][0-9.]* \(git [0-9a-z-]*\)$" "$TMP/out"
echo "1..$_n"
