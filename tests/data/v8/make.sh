#!/bin/sh
# make.sh -- regenerates the V8 heap snapshot fixtures of this folder with a
# real node (Debian 12: apt-get install -y nodejs; CI never runs this, it
# reads the committed snapshots).  Each is v8.writeHeapSnapshot() of
# `node graphs.js SHAPE ...`, gzip'd.
#
#   sh tests/data/v8/make.sh        (from the repository root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node --version > "$here/NODE"
snap() { # NAME ARGS...
    name=$1
    shift
    node "$here/graphs.js" "$@" "$work/$name"
    gzip -9 -n -c "$work/$name" > "$here/$name.gz"
}
snap list-10000.heapsnapshot list 10000
snap tree-14.heapsnapshot tree 14
snap random-5000-4.heapsnapshot random 5000 4 42
ls -l "$here"
