#!/usr/bin/env bash
# test_layers.sh -- the architecture as checks: folders call only lower floors
# (scripts/check-layers), and libgcscale.so exports exactly the API that
# include/gcscale/ declares.
. "$(dirname "$0")/lib.sh"
echo "1..5"

expect_ok "no folder includes a folder on its own floor or above" scripts/check-layers
expect_ok "check-layers prints the folder graph" scripts/check-layers --print
expect_grep "the graph starts at common, floor 0" "^common \(floor 0\)" "$TMP/out"

# Every dynamic symbol the library defines must be declared in a public
# header; compiler-made names (__asan_*, _init, _fini, ...) start with '_'.
so=$(dirname "$GCSCALE")/libgcscale.so
# A function must be declared as NAME( and data as extern ... NAME, not
# merely named in a comment.
nm -D --defined-only "$so" | awk '$2 ~ /^[TtDdBbRrVvWwi]$/ && $3 !~ /^_/ {print $2, $3}' | sort -u -k2 >"$TMP/exported"
: >"$TMP/undeclared"
while read -r kind sym; do
    case $kind in
        T|t|W|w|i) grep -qE -- "(^|[^A-Za-z0-9_])$sym[[:space:]]*\(" include/gcscale/*.h ;;
        *)         grep -qE -- "extern .*(^|[^A-Za-z0-9_])$sym([^A-Za-z0-9_]|$)" include/gcscale/*.h ;;
    esac || echo "$sym" >>"$TMP/undeclared"
done <"$TMP/exported"
if [ -s "$TMP/exported" ] && [ ! -s "$TMP/undeclared" ]; then
    _report 0 "libgcscale.so exports only symbols declared in include/gcscale ($(wc -l <"$TMP/exported") symbols)"
else
    echo "# exported but in no public header: $(head -20 "$TMP/undeclared" | tr '\n' ' ')"
    _report 1 "libgcscale.so exports only symbols declared in include/gcscale"
fi

# And the other way: every function or object a public header marks GCS_API
# is exported (a declaration without a definition, or one hidden by mistake).
grep -ohE 'GCS_API[^;(]*[^A-Za-z0-9_]gcs_[a-z0-9_]+[[:space:]]*[(\[;]' include/gcscale/*.h |
    grep -oE 'gcs_[a-z0-9_]+[[:space:]]*[(\[;]$' | grep -oE 'gcs_[a-z0-9_]+' | sort -u >"$TMP/declared"
awk '{print $2}' "$TMP/exported" | sort -u >"$TMP/exported-names"
comm -23 "$TMP/declared" "$TMP/exported-names" >"$TMP/hidden"
if [ -s "$TMP/declared" ] && [ ! -s "$TMP/hidden" ]; then
    _report 0 "every GCS_API declaration is exported ($(wc -l <"$TMP/declared") names)"
else
    echo "# declared GCS_API but not exported: $(head -20 "$TMP/hidden" | tr '\n' ' ')"
    _report 1 "every GCS_API declaration is exported"
fi
