# lib.sh -- TAP helpers for the CLI tests (sourced by tests/cli/test_*.sh).
#
#   expect_ok   "description" CMD...   the command exits 0
#   expect_exit N "description" CMD... the command exits N and prints exactly
#                                      one line on stderr
#   expect_grep "description" PATTERN FILE
#   expect_ok_to "description" FILE CMD... the command exits 0, stdout in FILE
# $GCSCALE is the program under test; $TMP is a scratch directory.
set -u
GCSCALE=${GCSCALE:-build/gcscale}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
_n=0

_report() { # status description
    _n=$((_n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; fi
}

# A check must not read $TMP/out through expect_ok or expect_exit: they
# truncate it before the check runs, and `jq -e` passes on empty input.
# Read it with expect_jq or expect_grep instead; this refuses the mistake.
_reads_out() {
    local a
    for a in "$@"; do [ "$a" = "$TMP/out" ] && return 0; done
    return 1
}

expect_ok() {
    local d=$1; shift
    if _reads_out "$@"; then echo "# test bug: '$d' reads \$TMP/out, which expect_ok overwrites"; _report 1 "$d"; return; fi
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ $rc -eq 0 ] || { echo "# exit $rc:"; { head -c 400 "$TMP/err"; echo; } | sed 's/^/#   /'; }
    _report $rc "$d"
}

expect_exit() {
    local want=$1 d=$2; shift 2
    if _reads_out "$@"; then echo "# test bug: '$d' reads \$TMP/out, which expect_exit overwrites"; _report 1 "$d"; return; fi
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$? lines
    lines=$(wc -l <"$TMP/err")
    if [ $rc -eq "$want" ] && [ "$lines" -eq 1 ]; then _report 0 "$d"; else
        echo "# wanted exit $want and one stderr line, got exit $rc and $lines lines:"
        sed 's/^/#   /' "$TMP/err" | head -5
        _report 1 "$d"
    fi
}

expect_grep() {
    local d=$1 pat=$2 file=$3
    if grep -Eq -- "$pat" "$file"; then _report 0 "$d"; else
        echo "# /$pat/ not found in $file:"; head -5 "$file" | sed 's/^/#   /'
        _report 1 "$d"
    fi
}

# expect_jq DESC FILTER FILE: jq -e FILTER holds on FILE, which must hold one
# JSON document (an empty or missing file fails, where jq -e alone passes).
expect_jq() {
    local d=$1 filter=$2 file=$3
    if [ -s "$file" ] && jq -e "$filter" "$file" >/dev/null 2>"$TMP/jq.err"; then _report 0 "$d"; else
        echo "# jq -e '$filter' failed on $file:"; { head -c 300 "$file"; echo; } | sed 's/^/#   /'
        _report 1 "$d"
    fi
}

# expect_ok_to DESC FILE CMD...: the command exits 0, its stdout kept in FILE
# (where a later command cannot overwrite it, as it does $TMP/out).
expect_ok_to() {
    local d=$1 f=$2; shift 2
    expect_ok "$d" sh -c '"$@" > "$0"' "$f" "$@"
}

# small_validation DESC: expect_ok of the small validation that test_validate,
# test_csv and test_schemas each read (cky, one snapshot, 3 re-marks, P = 1..2
# on data/machines/dev-2core-kvm.json; half a minute under ASan).  Under
# scripts/run-tests, which names an empty directory GCSCALE_TEST_SHARED for
# each build's run, it runs once, for the first test that asks, and the others
# get the same report, stdout, stderr and exit status; a test run alone runs
# its own.  The report's directory is then $VAL (read it, do not write there).
small_validation() {
    local d=$1 dir="$TMP/validation"
    [ -n "${GCSCALE_TEST_SHARED:-}" ] && dir="$GCSCALE_TEST_SHARED/validation"
    if [ ! -e "$dir.rc" ]; then
        "$GCSCALE" validate --machine data/machines/dev-2core-kvm.json --workloads cky --snapshots 1 --reps 3 \
            --runs 1 --threads 2 --quick --quiet -o "$dir" >"$dir.out" 2>"$dir.err"
        echo $? >"$dir.rc"
    fi
    cp "$dir.out" "$TMP/out"
    cp "$dir.err" "$TMP/err"
    VAL=$dir
    local rc
    rc=$(cat "$dir.rc")
    [ "$rc" -eq 0 ] || { echo "# exit $rc:"; { head -c 400 "$TMP/err"; echo; } | sed 's/^/#   /'; }
    _report "$rc" "$d"
}
