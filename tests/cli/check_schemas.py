#!/usr/bin/python3
# check_schemas.py [--start N] SCHEMA_DIR FILE... -- every JSON document in the files
# (a file holds one document, or with a .log suffix one per line) names its
# format and version and is valid against SCHEMA_DIR/FORMAT.schema.json
# (JSON Schema 2020-12, python3-jsonschema).  Prints one TAP line per
# document, then one per schema saying whether some document used it (the
# caller prints the plan).
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("not ok 1 - python3-jsonschema is missing: run scripts/install-deps")
    sys.exit(1)

args = sys.argv[1:]
n = 0
if args[:1] == ["--start"]:  # TAP numbers continue a calling script's
    n, args = int(args[1]), args[2:]
schema_dir, paths = args[0], args[1:]
used = set()
failed = 0


def report(ok, what):
    global n, failed
    n += 1
    failed += not ok
    print(("ok %d - %s" if ok else "not ok %d - %s") % (n, what))


def check(doc, where):
    fmt, version = doc.get("format") if isinstance(doc, dict) else None, None
    if isinstance(doc, dict):
        version = doc.get("version")
    if not isinstance(fmt, str) or not isinstance(version, int):
        report(False, "%s: no format and version" % where)
        return
    path = os.path.join(schema_dir, fmt + ".schema.json")
    if not os.path.exists(path):
        report(False, "%s: format %s has no schema (%s)" % (where, fmt, path))
        return
    schema = json.load(open(path))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:3]:
        print("# %s: %s at %s" % (where, e.message[:300], "/".join(map(str, e.path))))
    used.add(fmt)
    report(not errors, "%s: %s version %d is valid" % (where, fmt, version))


for p in paths:
    if p.endswith(".log"):
        for i, line in enumerate(open(p)):
            check(json.loads(line), "%s line %d" % (os.path.basename(p), i + 1))
    else:
        check(json.load(open(p)), os.path.basename(p))

for f in sorted(os.listdir(schema_dir)):
    if f.endswith(".schema.json"):
        fmt = f[: -len(".schema.json")]
        report(fmt in used, "schema %s describes a document checked here" % fmt)
sys.exit(1 if failed else 0)
