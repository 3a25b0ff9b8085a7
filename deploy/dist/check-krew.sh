#!/bin/sh
# Checks a krew manifest against the archives beside it: every platform's archive (the file
# name of its uri) exists in DIR, its sha256 is the manifest's, and every `files[].from` and
# the `bin` are in it, with a LICENSE (krew's rule).
#   sh deploy/dist/check-krew.sh MANIFEST DIR
set -eu
python3 - "$1" "$2" <<'PY'
import fnmatch, hashlib, os, sys, tarfile, yaml
man = yaml.safe_load(open(sys.argv[1]))
assert man["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2" and man["kind"] == "Plugin", "not a krew Plugin"
bad = []
plats = man["spec"]["platforms"]
for p in plats:
    sel = p["selector"]["matchLabels"]
    name = p["uri"].rsplit("/", 1)[1]
    path = os.path.join(sys.argv[2], name)
    if not os.path.exists(path):
        bad.append("%s: archive %s missing" % (sel, name)); continue
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    if digest != p["sha256"]:
        bad.append("%s: sha256 %s in the manifest, %s of the archive" % (name, p["sha256"], digest))
    members = set(m.name for m in tarfile.open(path).getmembers())
    for f in p["files"]:
        if not any(fnmatch.fnmatchcase(m, f["from"]) for m in members):
            bad.append("%s: files.from %s not in the archive" % (name, f["from"]))
    if "LICENSE" not in members:
        bad.append("%s: no LICENSE" % name)
    if p["bin"] not in members:
        bad.append("%s: bin %s not in the archive" % (name, p["bin"]))
if bad:
    print("krew manifest check failed:\n  " + "\n  ".join(bad)); sys.exit(1)
print("krew manifest: %d platforms, checksums and files match the archives" % len(plats))
PY
