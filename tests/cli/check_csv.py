#!/usr/bin/env python3
# check_csv.py [--start N] FILE... -- each file is one table that Python's
# csv module (and so pandas.read_csv without options) loads: a header of
# distinct, non-empty names, then rows of exactly as many fields, no
# comment or blank lines, and one value per cell (no space-separated list
# of numbers, as gc-bench's busy_share once was).  One TAP line per file
# (the caller prints the plan).
import csv
import re
import sys

args = sys.argv[1:]
n = 0
if args[:1] == ["--start"]:
    n, args = int(args[1]), args[2:]
failed = 0
packed = re.compile(r"^-?[0-9.]+([ /;][-0-9.]+)+$")
for path in args:
    n += 1
    problems = []
    with open(path, newline="") as f:
        text = f.read()
    lines = text.splitlines()
    if not lines:
        problems.append("empty")
    if any(l.startswith("#") or not l.strip() for l in lines):
        problems.append("a comment or blank line")
    rows = list(csv.reader(text.splitlines()))
    if rows:
        header = rows[0]
        if len(set(header)) != len(header) or any(not h for h in header):
            problems.append("header names not distinct and non-empty: %s" % header)
        if len(rows) < 2:
            problems.append("no rows")
        for i, r in enumerate(rows[1:], 2):
            if len(r) != len(header):
                problems.append("line %d: %d fields for %d columns" % (i, len(r), len(header)))
                break
            bad = [c for c in r if packed.match(c)]
            if bad:
                problems.append("line %d: several values in one cell: %s" % (i, bad[0]))
                break
    for p in problems:
        print("# %s: %s" % (path, p))
    failed += bool(problems)
    print("%s %d - %s loads as one table (%d rows)" % ("not ok" if problems else "ok", n, path.split("/")[-1],
                                                      max(len(rows) - 1, 0)))
sys.exit(1 if failed else 0)
