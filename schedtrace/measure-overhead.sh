#!/usr/bin/env bash
# measure-overhead.sh -- what `gcscale trace` costs a real multi-threaded
# program: RUNS pairs of runs of the same command, plain and traced, in
# alternating order (plain first in odd pairs, traced first in even ones) so
# that a drift in the machine's load hits both alike.  Prints every run, the
# medians and the ratios traced/plain of the wall time and of the CPU time
# (user + system of everything started, the tracer included).
#
#   schedtrace/measure-overhead.sh GCSCALE RUNS -- COMMAND [ARGS...]
#   e.g. schedtrace/measure-overhead.sh build/gcscale 5 -- xz -T2 -1 -k -c /tmp/data.txt
#
# The command's stdout goes to /dev/null.  Run as root (tracing needs it).
set -u
gcscale=${1:?usage: measure-overhead.sh GCSCALE RUNS -- COMMAND [ARGS...]}
runs=${2:?usage: measure-overhead.sh GCSCALE RUNS -- COMMAND [ARGS...]}
shift 2
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "measure-overhead.sh: no COMMAND" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

TIMEFORMAT='%R %U %S'
one() { # plain|traced -> "wall cpu"
    local t
    if [ "$1" = plain ]; then
        t=$( { time "${@:2}" >/dev/null 2>"$out/err"; } 2>&1 )
    else
        t=$( { time "$gcscale" trace -q -o "$out/t.trace" -- "${@:2}" >/dev/null 2>"$out/err"; } 2>&1 )
    fi
    if [ -s "$out/err" ]; then
        echo "measure-overhead.sh: $1 run printed: $(head -1 "$out/err")" >&2
    fi
    echo "$t" | awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }'
}

# A traced run leaves the release of its events to a background process
# (gcscale-release, about 0.4 s of RCU grace periods); the next trace would
# wait for it on the kernel's event_mutex.  Each run starts once it is gone,
# so that the series measures one trace, not a queue of them.
settle() {
    local n=0
    while pgrep -x gcscale-release >/dev/null && [ $n -lt 50 ]; do
        sleep 0.1; n=$((n + 1))
    done
}

echo "# pair kind wall_s cpu_s"
for i in $(seq 1 "$runs"); do
    if [ $((i % 2)) -eq 1 ]; then order="plain traced"; else order="traced plain"; fi
    for k in $order; do
        settle
        r=$(one "$k" "$@")
        echo "$i $k $r"
        echo "$k $r" >>"$out/all"
    done
done
ls -l "$out/t.trace" | awk '{ printf "# last trace: %d bytes, ", $5 }'
grep -c '^e ' "$out/t.trace" | awk '{ printf "%d events\n", $1 }'
awk 'function median(a, n,   i, j, t) {
         for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
         return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
     $1 == "plain"  { pw[++np] = $2; pc[np] = $3 }
     $1 == "traced" { tw[++nt] = $2; tc[nt] = $3 }
     END { for (i = 1; i <= np && i <= nt; i++) rw[i] = tw[i] / pw[i]
           nr = np < nt ? np : nt
           for (i = 1; i <= nr; i++) for (j = i + 1; j <= nr; j++) if (rw[j] < rw[i]) { t = rw[i]; rw[i] = rw[j]; rw[j] = t }
           mpw = median(pw, np); mtw = median(tw, nt); mpc = median(pc, np); mtc = median(tc, nt)
           printf "median wall: plain %.3f s, traced %.3f s, ratio %.4f (%+.2f %%)\n", mpw, mtw, mtw / mpw, 100 * (mtw / mpw - 1)
           printf "median CPU:  plain %.3f s, traced %.3f s, ratio %.4f (%+.2f %%)\n", mpc, mtc, mtc / mpc, 100 * (mtc / mpc - 1)
           printf "wall ratio of each pair (traced/plain), sorted: min %.4f, median %.4f, max %.4f\n", rw[1], median(rw, nr), rw[nr] }' "$out/all"
