#!/usr/bin/env bash
# One lease of the lent 16-CPU machine: its corpus entry (calibrate + corpus
# record), then the policy table one workload at a time, all inside BUDGET_S
# seconds; after every step everything measured so far is packed into $OUT
# (split into 15 MiB parts), so a call stopped at its limit still returns it.
set -u
t0=$(date +%s)
deadline=$((t0 + ${BUDGET_S:-545}))
d=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$d/lib
w=${WORK:-/tmp/mm}
mkdir -p "$w"
left() { echo $((deadline - $(date +%s))); }
pack() {
    rm -f "$OUT"/mm.tgz.part-*
    tar -C "$w" --exclude=corpus.tar -czf - . | split -b 15m - "$OUT/mm.tgz.part-"
    echo "go: packed at $(( $(date +%s) - t0 )) s: $(du -sh "$w" | cut -f1)" >&2
}
echo "go: start $(date -u +%FT%TZ), budget ${BUDGET_S:-545} s, git ${GIT_REV:-?}" >&2
STEP_LIMIT_S=40 scripts/measure-machine "$d" "$w" info
pack
# The corpus entry first: it is what lets every later model change be checked
# at P = 1..16 from any machine.  Leave policies at least 150 s.
STEP_LIMIT_S=$(( $(left) - ${POLICY_MIN_S:-150} )) CORPUS_NAME=${CORPUS_NAME:-lent-16cpu} \
    scripts/measure-machine "$d" "$w" corpus
pack
# the keys calibrate gained since the 16-CPU entry was recorded, into a copy
# of its profile (seconds; docs/validate.md)
STEP_LIMIT_S=60 scripts/measure-machine "$d" "$w" keys
pack
for wl in ${POLICY_WORKLOADS:-bh cube cky chain}; do
    l=$(left)
    [ "$l" -gt 45 ] || { echo "go: no time left for policies of $wl ($l s)" >&2; break; }
    echo "go: policies $wl (limit $((l - 8)) s)" >&2
    timeout --kill-after=5 $((l - 8)) "$d/gcscale" validate --policies ${POLICIES_ARGS:---runs 3} \
        --workloads "$wl" --machine "$w/profile.json" -o "$w/policies-$wl" 2>&1 |
        tee "$w/policies-$wl.log" | grep -v '^\[' >&2
    echo "go: policies $wl rc ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s" >&2
    pack
done
echo "go: done at $(( $(date +%s) - t0 )) s" >&2
