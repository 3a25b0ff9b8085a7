#!/usr/bin/env python3
"""The catalog against the frameworks' real CRDs (tests/catalog-crds/README.md).

    python3 tests/catalog-crds/check.py PLUGIN SHARED [--catalog DIR] [--exceptions FILE]

Every definition of DIR (catalog/ by default) whose root kind is a CRD is validated with
`PLUGIN validate FILE --crd CRD` against its kind's CRD from SHARED/interop/crds/frameworks/.
A finding fails the run unless a row of the exceptions table names it, with its reason. It
also fails when a CRD kind of the catalog has no CRD there, when an exception row matches
nothing (a stale row) and, for the repository's catalog (no --catalog), when a CRD there is
covered by no definition and not excepted.
Without SHARED/interop/crds/frameworks it prints one `catalog-crds: skipped: ...` line and
passes. Exit codes: 0 pass (or skipped), 1 a finding, 2 usage or unreadable input.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

BUILTIN_GROUPS = {"", "core", "apps", "batch"}


def usage(msg):
    sys.stderr.write("catalog-crds: %s\nusage: check.py PLUGIN SHARED [--catalog DIR] "
                     "[--exceptions FILE]\n" % msg)
    sys.exit(2)


def crd_kind(path):
    """(group, kind) of a CRD file from its text: spec.group and spec.names.kind."""
    group = kind = None
    in_spec = in_names = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("spec:"):
                in_spec = True
                continue
            if not in_spec:
                continue
            if line.startswith("  group:"):
                group = line.split(":", 1)[1].strip().strip("'\"")
            elif line.startswith("  names:"):
                in_names = True
            elif in_names and line.startswith("    kind:"):
                kind = line.split(":", 1)[1].strip().strip("'\"")
            elif in_names and re.match(r"^  \S", line):
                in_names = False
            if group and kind:
                break
    return group, kind


def component_kinds(path):
    """The (group, version, kind) of every component of a catalog file, root first (read
    with PyYAML, in make deps; without it, each `group:` line followed by `version:` and
    `kind:` at the same indentation)."""
    try:
        import yaml
        out = []
        for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
            sd = ((doc or {}).get("spec") or {}).get("structureDefinition") or {}
            for c in [sd.get("rootComponent") or {}] + list(sd.get("childComponents") or []):
                k = c.get("kind") if isinstance(c, dict) else None
                if isinstance(k, dict) and k.get("kind"):
                    out.append((str(k.get("group") or ""), str(k.get("version") or ""), str(k["kind"])))
        return out
    except ImportError:
        pass
    lines = open(path, encoding="utf-8").read().splitlines()
    out = []
    for i in range(len(lines) - 2):
        m = re.match(r"^(\s+)group:\s*(\S*)\s*$", lines[i])
        if not m:
            continue
        ind = m.group(1)
        v = re.match("^" + ind + r"version:\s*(\S+)\s*$", lines[i + 1])
        k = re.match("^" + ind + r"kind:\s*(\S+)\s*$", lines[i + 2])
        if v and k:
            out.append((m.group(2).strip("'\""), v.group(1), k.group(1)))
    return out


def read_exceptions(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            parts = [p.strip() for p in s.split("|")]
            if parts[0] == "finding" and len(parts) == 4 and all(parts):
                rows.append({"type": "finding", "file": parts[1], "match": parts[2],
                             "reason": parts[3], "where": "%s:%d" % (path, n), "used": 0})
            elif parts[0] == "no-definition" and len(parts) == 3 and all(parts):
                rows.append({"type": "no-definition", "file": parts[1], "match": "",
                             "reason": parts[2], "where": "%s:%d" % (path, n), "used": 0})
            else:
                sys.stderr.write("%s:%d: not an exception row (`finding | FILE | TEXT | REASON` "
                                 "or `no-definition | CRD-FILE | REASON`)\n" % (path, n))
                sys.exit(2)
    return rows


def main():
    args = sys.argv[1:]
    catalog = "catalog"
    whole = True  # the repository's catalog: every CRD must be covered
    here = os.path.dirname(os.path.abspath(__file__))
    exc_path = os.path.join(here, "exceptions.txt")
    pos = []
    while args:
        a = args.pop(0)
        if a == "--catalog" and args:
            catalog = args.pop(0)
            whole = False
        elif a == "--exceptions" and args:
            exc_path = args.pop(0)
        elif a.startswith("-"):
            usage("unknown flag " + a)
        else:
            pos.append(a)
    if len(pos) != 2:
        usage("needs PLUGIN and SHARED")
    plugin, shared = pos
    crd_dir = os.path.join(shared, "interop", "crds", "frameworks")
    if not os.path.isdir(crd_dir):
        print("catalog-crds: skipped: the frameworks' CRDs are not here (%s is absent; set SHARED=DIR)"
              % crd_dir)
        return 0
    exceptions = read_exceptions(exc_path)

    crds = {}  # (group, kind) -> file name
    for path in sorted(glob.glob(os.path.join(crd_dir, "*.yaml"))):
        g, k = crd_kind(path)
        if not g or not k:
            sys.stderr.write("catalog-crds: %s: no spec.group / spec.names.kind\n" % path)
            return 2
        crds[(g, k)] = os.path.basename(path)
    used = set()
    failures = []
    clean = excepted = builtin = 0
    files = sorted(glob.glob(os.path.join(catalog, "*.yaml")))
    if not files:
        usage("no definitions in " + catalog)
    for path in files:
        name = os.path.basename(path)
        kinds = component_kinds(path)
        if not kinds:
            failures.append("%s: no component kind found" % path)
            continue
        for g, _, k in kinds[1:]:
            if (g, k) in crds:  # a child component of a CRD kind (Grove's PodClique)
                used.add(crds[(g, k)])
        g, v, k = kinds[0]
        if g in BUILTIN_GROUPS:
            builtin += 1
            continue
        crd = crds.get((g, k))
        if crd is None:
            failures.append("%s: no CRD for %s.%s in %s" % (path, k, g, crd_dir))
            continue
        used.add(crd)
        r = subprocess.run([plugin, "validate", path, "--crd", os.path.join(crd_dir, crd)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        findings = []
        in_schema = False
        for l in r.stdout.splitlines():
            if l.startswith("SCHEMA:"):
                in_schema = True
            elif in_schema and l.startswith("  "):
                findings.append(l.strip())
            else:
                in_schema = False
        if r.returncode != 0 and not findings:
            failures.append("%s: validate exit %d without a schema finding:\n%s"
                            % (path, r.returncode, r.stdout.rstrip()))
            continue
        left = []
        for f in findings:
            rows = [e for e in exceptions if e["type"] == "finding" and e["file"] == name
                    and e["match"] in f]
            if rows:
                for e in rows:
                    e["used"] += 1
            else:
                left.append(f)
        if left:
            failures.append("%s against %s (%s/%s %s):\n  %s" % (path, crd, g, v, k,
                                                                "\n  ".join(left)))
        elif findings:
            excepted += 1
        else:
            clean += 1
    unused = []
    for crd in sorted(set(crds.values()) - used) if whole else []:
        rows = [e for e in exceptions if e["type"] == "no-definition" and e["file"] == crd]
        if rows:
            for e in rows:
                e["used"] += 1
        else:
            unused.append(crd)
    for crd in unused:
        failures.append("%s/%s: no catalog definition covers this CRD (write one, or list it in "
                        "%s with the reason)" % (crd_dir, crd, exc_path))
    # A catalog given with --catalog (the planted test) may hold only some definitions: the
    # CRDs are not all covered, and only rows about files it holds can go stale.
    names = {os.path.basename(p) for p in files}
    for e in exceptions:
        if e["used"] == 0 and (e["file"] in names if e["type"] == "finding" else whole):
            failures.append("%s: stale exception, it matches nothing: %s | %s"
                            % (e["where"], e["file"], e["match"] or e["reason"]))
    with_crd = len(files) - builtin
    for f in failures:
        print("catalog-crds: FAIL: " + f)
    print("catalog-crds: %d definitions with a CRD kind: %d clean, %d with excepted findings, "
          "%d failing; %d built-in kinds not checked; %d CRDs without a definition (excepted)"
          % (with_crd, clean, excepted, with_crd - clean - excepted, builtin,
             len(set(crds.values()) - used) - len(unused) if whole else 0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
