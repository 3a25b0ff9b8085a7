#!/usr/bin/env python3
"""Unpacks an OCI layout archive (what `make image` writes) into a root filesystem, the way a
container runtime would: index.json -> the image manifest -> its layers[] applied in order
(gzip or plain tars), `.wh.NAME` entries delete NAME, `.wh..wh..opq` empties its directory.
Prints the image config (JSON) on stdout so that the caller can read Entrypoint and User.

    python3 tests/image/unpack.py IMAGE.oci.tar ROOTFS
"""
import gzip
import io
import json
import os
import shutil
import sys
import tarfile


def blob(arch, digest):
    algo, _, hexd = digest.partition(":")
    return arch.extractfile("blobs/%s/%s" % (algo, hexd)).read()


def safe_path(root, name):
    path = os.path.normpath(os.path.join(root, name.lstrip("/")))
    if path != root and not path.startswith(root + os.sep):
        raise SystemExit("unpack: layer entry escapes the root filesystem: %s" % name)
    return path


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def apply_layer(data, root):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as layer:
        for m in layer.getmembers():
            d, base = os.path.split(m.name)
            if base == ".wh..wh..opq":
                target = safe_path(root, d)
                for child in os.listdir(target) if os.path.isdir(target) else []:
                    remove(os.path.join(target, child))
                continue
            if base.startswith(".wh."):
                remove(safe_path(root, os.path.join(d, base[4:])))
                continue
            path = safe_path(root, m.name)
            if os.path.lexists(path) and not (m.isdir() and os.path.isdir(path)):
                remove(path)
            layer.extract(m, root, set_attrs=True, numeric_owner=True)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: unpack.py IMAGE.oci.tar ROOTFS")
    root = os.path.abspath(sys.argv[2])
    os.makedirs(root, exist_ok=True)
    with tarfile.open(sys.argv[1]) as arch:
        index = json.loads(arch.extractfile("index.json").read())
        manifests = index.get("manifests") or []
        if len(manifests) != 1:
            raise SystemExit("unpack: index.json lists %d manifests, expected 1" % len(manifests))
        manifest = json.loads(blob(arch, manifests[0]["digest"]))
        config = json.loads(blob(arch, manifest["config"]["digest"]))
        for layer in manifest["layers"]:
            apply_layer(blob(arch, layer["digest"]), root)
    json.dump(config, sys.stdout)
    print()


if __name__ == "__main__":
    main()
