#!/usr/bin/env bash
# test_readme.sh -- the README's examples run as written (issue 26): every
# fenced block after a "<!-- readme-test -->" line is run line by line from
# the repository root, each line one test, with two substitutions only:
# build/gcscale is the program under test ($GCSCALE, so the sanitizer
# builds run the same lines) and /tmp/ is this test's scratch directory.
# A block marked "<!-- readme-test: slow -->" (a full calibration, 30-50 s
# here) runs with README_TESTS=all (make check-readme) and is skipped, with
# that reason, otherwise; so is a line that says "(root)" (gcscale trace:
# the scheduler tracepoints of the whole machine, which took 51 s for xz on
# this shared host), which check-readme runs when it is root.
. "$(dirname "$0")/lib.sh"

blocks=$(awk '
    /^<!-- readme-test(: slow)? -->$/ { mark = ($0 ~ /slow/) ? "slow" : "quick"; next }
    mark != "" && /^```/ { if (inblock) { inblock = 0; mark = "" } else inblock = 1; next }
    inblock && NF { print mark "\t" $0 }
' README.md)
if [ -z "$blocks" ]; then
    _report 1 "README.md has blocks marked readme-test"
    echo "1..$_n"
    exit 0
fi
_report 0 "README.md has blocks marked readme-test ($(printf '%s\n' "$blocks" | wc -l) lines)"

while IFS=$'\t' read -r kind line; do
    cmd=${line//build\/gcscale/\"\$GCSCALE\"}
    cmd=${cmd//\/tmp\//\$TMP\/}
    short=$(printf '%s' "$line" | sed 's/  *#.*//' | cut -c1-100)
    if [ "$kind" = slow ] && [ "${README_TESTS:-}" != all ]; then
        echo "ok $((_n += 1)) - $short # SKIP slow (a full calibration first): make check-readme runs it"
        continue
    fi
    case $line in *"(root)"*)
        if [ "${README_TESTS:-}" != all ] || [ "$(id -u)" -ne 0 ]; then
            echo "ok $((_n += 1)) - $short # SKIP needs root, and traces the whole machine: make check-readme as root runs it"
            continue
        fi
    esac
    expect_ok "$short" env GCSCALE="$GCSCALE" TMP="$TMP" bash -c "set -o pipefail; $cmd" </dev/null
done <<<"$blocks"
echo "1..$_n"
