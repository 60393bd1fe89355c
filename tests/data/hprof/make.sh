#!/bin/sh
# make.sh -- regenerates the HPROF fixtures of this folder with a real JVM
# (Debian 12: apt-get install -y openjdk-17-jdk-headless; CI never runs this,
# it reads the committed dumps).  Each dump is `jcmd PID GC.heap_dump`
# (-gz=1 for the compressed ones) of `java Graphs SHAPE ...` with a small
# heap and the serial collector, so that the runtime's own objects stay few.
#
#   sh tests/data/hprof/make.sh        (from the repository root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work" "$here/Graphs.java"
java -version 2>&1 | head -1 > "$here/JVM"

dump() { # NAME GZ ARGS...
    name=$1 gz=$2
    shift 2
    java -Xmx64m -XX:+UseSerialGC -cp "$work" Graphs "$@" > "$work/out" &
    pid=$!
    while ! grep -q ready "$work/out" 2>/dev/null; do sleep 0.1; done
    rm -f "$work/$name"
    if [ "$gz" = 1 ]; then
        jcmd "$pid" GC.heap_dump -gz=1 "$work/$name" > /dev/null
    else
        jcmd "$pid" GC.heap_dump "$work/$name" > /dev/null
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    if [ "$gz" = 1 ]; then cp "$work/$name" "$here/$name"; else gzip -9 -n -c "$work/$name" > "$here/$name.gz"; fi
}
dump list-10000.hprof 0 list 10000
dump tree-14.hprof.gz 1 tree 14
dump random-5000-4.hprof 0 random 5000 4 42
ls -l "$here"
