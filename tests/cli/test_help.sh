#!/usr/bin/env bash
# test_help.sh -- every command's and subcommand's --help: exit 0, a usage
# line, and no line wider than 80 columns (a terminal's width: a help text
# that wraps is hard to read, and man pages are made from these texts,
# scripts/make-man).  The commands are read from `gcscale --help`, so a new
# one is checked without being named here.
. "$(dirname "$0")/lib.sh"

# The help text goes to $TMP/help; the description names the command.
check_help() { # description, args...
    local d=$1; shift
    expect_ok_to "$d --help exits 0" "$TMP/help" "$GCSCALE" "$@" --help
    expect_grep "... and starts with its usage" "^usage: gcscale" "$TMP/help"
    local wide
    wide=$(awk 'length > 80 { printf "%d: %s\n", NR, $0 }' "$TMP/help")
    if [ -n "$wide" ]; then
        echo "# lines over 80 columns:"
        echo "$wide" | sed 's/^/#   /'
    fi
    [ -z "$wide" ]
    _report $? "... every line within 80 columns"
}

"$GCSCALE" --help >"$TMP/top" 2>&1
expect_ok "the command list" test -s "$TMP/top"
wide=$(awk 'length > 80' "$TMP/top")
[ -z "$wide" ]
_report $? "gcscale --help: every line within 80 columns"

commands=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' "$TMP/top" | grep -vx help)
[ "$(echo "$commands" | wc -w)" -ge 10 ]
_report $? "gcscale --help lists the commands ($(echo $commands | tr '\n' ' '))"

for c in $commands; do
    check_help "$c" "$c"
done
for b in latency rw occupancy bandwidth sweep topology; do
    check_help "bench $b" bench "$b"
done
for s in info import synth reorder; do
    check_help "snapshot $s" snapshot "$s"
done
for s in record checksum accuracy; do
    check_help "corpus $s" corpus "$s"
done
check_help "machine show" machine show

echo "1..$_n"
