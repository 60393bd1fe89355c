#!/usr/bin/env bash
# test_bench.sh -- gcscale bench: help, bad input, small runs of each benchmark.
. "$(dirname "$0")/lib.sh"

SYN="pack:2 node:2 core:2 pu:1"

expect_ok "bench --help" "$GCSCALE" bench --help
expect_grep "general help lists the benchmarks" "occupancy" "$TMP/out"
expect_ok "bench latency --help" "$GCSCALE" bench latency --help
expect_grep "latency help names --hugepages" "--hugepages" "$TMP/out"

expect_exit 2 "no benchmark" "$GCSCALE" bench
expect_exit 2 "unknown benchmark" "$GCSCALE" bench nosuch
expect_exit 2 "unknown option" "$GCSCALE" bench latency --bogus
expect_exit 2 "--json --csv" "$GCSCALE" bench latency --json --csv
expect_exit 2 "nonexistent CPU" "$GCSCALE" bench latency --cpu 999 --size 64K
expect_exit 2 "nonexistent memory node" "$GCSCALE" bench latency --node 7 --size 64K
expect_exit 2 "size beyond memory" "$GCSCALE" bench latency --size 100T
expect_exit 2 "size not a size" "$GCSCALE" bench latency --size lots
expect_exit 2 "zero repetitions" "$GCSCALE" bench latency --reps 0
expect_exit 2 "malformed topology" "$GCSCALE" bench latency --topology "pack:2 nodex:2"
expect_exit 2 "option of another benchmark" "$GCSCALE" bench latency --threads 2
expect_exit 2 "bad hugepages mode" "$GCSCALE" bench latency --hugepages maybe
expect_exit 2 "too many chains" "$GCSCALE" bench occupancy --chains 17
expect_exit 2 "missing option value" "$GCSCALE" bench latency --size

expect_ok "latency, small buffer, JSON" "$GCSCALE" bench latency --size 256K --reps 3 --hugepages both --json
expect_grep "latency JSON has the median" '"median_ns": [0-9]' "$TMP/out"
expect_grep "both page modes" '"huge_pages": "on"' "$TMP/out"
expect_ok "rw, CSV" "$GCSCALE" bench rw --size 256K --reps 3 --hugepages off --csv
expect_grep "rw CSV header" "^access,cpu,mem_node" "$TMP/out"
expect_grep "rw CSV row" "^rw,cpu 0|^rw,node 0" "$TMP/out"
expect_ok "latency pinned to CPU 0" "$GCSCALE" bench latency --cpu 0 --size 64K --reps 2 --hugepages off
expect_ok "latency on a synthetic topology" "$GCSCALE" bench latency --topology "$SYN" --node 3 --size 64K --reps 2 --hugepages off --json
expect_grep "synthetic: warning about binding" "not bound" "$TMP/out"
expect_ok "sweep" "$GCSCALE" bench sweep --size 1M --reps 1 --json
expect_grep "sweep reaches 1M" '"size_bytes": 1048576' "$TMP/out"
expect_ok "occupancy" "$GCSCALE" bench occupancy --size 4M --reps 1 --chains 4 --steps 4096 --json
expect_grep "occupancy has fits" '"open_s_o_ns"' "$TMP/out"
expect_grep "occupancy has load points" '"outstanding": 8' "$TMP/out"
expect_ok "bandwidth" "$GCSCALE" bench bandwidth --size 8M --reps 2
expect_grep "bandwidth table" "best_gbs" "$TMP/out"

# Progress: one line per measurement on stderr (stderr is a file here, so
# plain lines), the table alone on stdout; --quiet leaves stderr empty.
expect_ok "occupancy reports progress" "$GCSCALE" bench occupancy --size 4M --reps 1 --chains 2 --steps 1024 --json
expect_grep "... a line per measurement" '^\[ *[0-9]+%\] occupancy rw: [0-9]+ load points' "$TMP/err"
expect_grep "... and the end" '^\[100%\] done in' "$TMP/err"
expect_jq "... stdout is still one JSON document" '.points | length > 0' "$TMP/out"
expect_ok "latency reports both page modes" "$GCSCALE" bench latency --size 256K --reps 2 --hugepages both
expect_grep "... as two steps" '^\[ 50%\] read latency, huge pages on' "$TMP/err"
expect_ok "--quiet" "$GCSCALE" bench sweep --size 1M --reps 1 --quiet
_report "$([ ! -s "$TMP/err" ]; echo $?)" "... prints nothing on stderr"
# On a terminal the progress line is redrawn in place, without a newline: an
# error that stops the run must still start a line of its own.  (script(1)
# gives the run a terminal; the buffer's mmap fails under a 3 GB address
# space limit, which the sanitizers' own shadow mappings cannot live with.)
case "$GCSCALE" in
*/asan/* | */tsan/*) echo "ok $((_n += 1)) - # SKIP address-space limit under a sanitizer" ;;
*)
    script -qc "bash -c 'ulimit -v 3000000; exec \"$GCSCALE\" bench latency --size 4G --reps 1 --hugepages off'" \
        /dev/null </dev/null | tr -d '\r' >"$TMP/tty"
    expect_grep "on a terminal, an error after a progress line has a line of its own" \
        '^gcscale bench: cannot map' "$TMP/tty"
    ;;
esac
expect_ok "topology of this machine" "$GCSCALE" bench topology --json
expect_grep "topology lists caches" '"level": 1' "$TMP/out"
expect_jq "... a document with its format and version" '.format == "gcscale-bench-topology" and .version == 1' "$TMP/out"
expect_ok "topology --csv: one table, the first" sh -c "'$GCSCALE' bench topology --csv > '$TMP/topo.csv'"
expect_grep "... the others are named on stderr" "the CSV is the system table; the others: nodes, caches \(--table NAME\)" "$TMP/err"
expect_ok "... plain CSV: a header and rows, no # sections" sh -c "! grep -q '^#' '$TMP/topo.csv' && head -1 '$TMP/topo.csv' | grep -q '^topology,binding,'"
expect_exit 2 "--table names a table the output lacks" "$GCSCALE" bench topology --csv --table nope
expect_ok "synthetic topology" "$GCSCALE" bench topology --topology "$SYN" --csv --table nodes
expect_grep "synthetic node 3 has CPUs 6-7" "^3,3,6-7," "$TMP/out"

# A memory-only node (memory attached to the machine with no CPUs of its
# own, as CXL or PMEM memory is): hwloc gives it the machine's cpuset, which
# used to put both CPUs in it as well as in their own nodes.
CPULESS="[numa] pack:2 [numa] core:1 pu:1"
expect_ok "synthetic topology with a memory-only node" "$GCSCALE" bench topology --topology "$CPULESS" --csv --table nodes
expect_grep "the memory-only node has no CPUs" "^2,2,,0$" "$TMP/out"
expect_grep "the others keep theirs" "^1,1,1,0$" "$TMP/out"
# The same layout as this system (XML, HWLOC_THISSYSTEM=1): occupancy and
# bandwidth add up the nodes' CPU lists, which overflowed an array sized by
# the CPU count (check-asan catches it).
cat >"$TMP/cpuless.xml" <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x3" complete_cpuset="0x3" allowed_cpuset="0x3" nodeset="0x7" complete_nodeset="0x7" allowed_nodeset="0x7" gp_index="1">
    <object type="NUMANode" os_index="2" cpuset="0x3" complete_cpuset="0x3" nodeset="0x4" complete_nodeset="0x4" gp_index="10"/>
    <object type="Package" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x5" complete_nodeset="0x5" gp_index="4">
      <object type="NUMANode" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="5"/>
      <object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x5" complete_nodeset="0x5" gp_index="2"/>
    </object>
    <object type="Package" os_index="1" cpuset="0x2" complete_cpuset="0x2" nodeset="0x6" complete_nodeset="0x6" gp_index="8">
      <object type="NUMANode" os_index="1" cpuset="0x2" complete_cpuset="0x2" nodeset="0x2" complete_nodeset="0x2" gp_index="9"/>
      <object type="PU" os_index="1" cpuset="0x2" complete_cpuset="0x2" nodeset="0x6" complete_nodeset="0x6" gp_index="6"/>
    </object>
  </object>
</topology>
X
XMLENV=(env HWLOC_XMLFILE="$TMP/cpuless.xml" HWLOC_THISSYSTEM=1)
expect_ok "memory-only node as this system: topology" "${XMLENV[@]}" "$GCSCALE" bench topology --csv --table nodes
expect_grep "... it has no CPUs" "^2,2,,0$" "$TMP/out"
expect_ok "memory-only node as this system: bandwidth" "${XMLENV[@]}" "$GCSCALE" bench bandwidth --size 1M --reps 1
expect_ok "memory-only node as this system: occupancy of the memory-only node" \
    "${XMLENV[@]}" "$GCSCALE" bench occupancy --node 2 --size 1M --reps 1 --chains 2 --steps 1024 --csv

echo "1..$_n"
