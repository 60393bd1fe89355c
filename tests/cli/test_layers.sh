#!/usr/bin/env bash
# test_layers.sh -- the architecture as checks: folders call only lower floors
# (scripts/check-layers), and libgcscale.so exports exactly the API that
# include/gcscale/ declares.
. "$(dirname "$0")/lib.sh"

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

# A program outside the tree builds against the public headers through the
# uninstalled pkg-config file and runs on libgcscale.so: what a user of the
# library does, and a check that the exported API is enough to use it.
build=$(dirname "$GCSCALE")
cat >"$TMP/user.c" <<'C'
#include <stdio.h>
#include <gcscale/gcscale.h>
int main(int argc, char **argv)
{
    gcs_err err;
    gcs_profile *p = argc > 1 ? gcs_profile_load(argv[1], &err) : NULL;
    if (!p) { fprintf(stderr, "%s\n", argc > 1 ? err.msg : "no profile"); return 1; }
    printf("%s %d\n", gcs_version(), p->nnodes);
    gcs_profile_free(p);
    return 0;
}
C
if nm -D "$so" | grep -q ' U __[at]san_'; then
    # a sanitizer build's library needs its runtime loaded first: the plain
    # build (make check) runs these two
    _n=$((_n + 1)); echo "ok $_n # skip sanitizer build: a plain program cannot load this libgcscale.so"
    _n=$((_n + 1)); echo "ok $_n # skip sanitizer build"
else
expect_ok "a program builds against build/gcscale-uninstalled.pc and libgcscale.so" \
    sh -c "cc -o '$TMP/user' '$TMP/user.c' \$(PKG_CONFIG_PATH='$build' pkg-config --cflags --libs gcscale) \$(pkg-config --cflags jansson)"
expect_ok "... and runs on it" env LD_LIBRARY_PATH="$build" "$TMP/user" data/machines/o2k.json
fi

# Bash completion reads the commands and options from the program's help.
complete_words() { # words... -> the completions of the last one
    bash -c '. scripts/gcscale-completion.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gcscale
             printf "%s\n" "${COMPREPLY[@]}"' _ "$GCSCALE" "$@"
}
complete_words cal >"$TMP/c1"
expect_grep "completion: a command" "^calibrate$" "$TMP/c1"
complete_words predict --mach >"$TMP/c2"
expect_grep "completion: a command's option" "^--machine$" "$TMP/c2"
complete_words corpus --wr >"$TMP/c3"
expect_grep "completion: options of a newer command too" "^--write-floor$" "$TMP/c3"

# Man pages are generated from the --help texts (make man).
expect_ok "make-man writes a page per command" scripts/make-man "$build"
expect_grep "... gcscale-predict(1) is named by its summary" "^gcscale-predict \\\\- predict mark time" "$build/man/gcscale-predict.1"
echo "1..$_n"
