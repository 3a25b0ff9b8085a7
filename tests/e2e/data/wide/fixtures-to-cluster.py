#!/usr/bin/env python3
"""Turns every sample object under tests/fixtures into something the API server simulator can
preload (--load): a permissive CRD (preserve-unknown-fields, every version the fixtures use
served) for each custom kind, the namespace "fx", and each object renamed to its file's stem
(running, degraded, ...) in that namespace, its status kept. Built-in kinds the simulator does
not serve (DaemonSet, CronJob) are left out, and so are kinds the scenario's own CRDs already
serve (the argument: their group/kind pairs). Prints one JSON List on stdout."""
import glob, json, os, sys, yaml

SERVED_BUILTINS = {("", "Pod"), ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet"),
                   ("batch", "Job")}
skip = set(tuple(a.split("/", 1)) for a in sys.argv[1:])
root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures")
kinds, objects = {}, []
for path in sorted(glob.glob(os.path.join(root, "*", "*.yaml"))):
    with open(path) as f:
        obj = yaml.safe_load(f)
    api = obj["apiVersion"]
    group, version = api.split("/", 1) if "/" in api else ("", api)
    kind = obj["kind"]
    if (group, kind) in skip:
        pass
    elif group in ("", "apps", "batch"):
        if (group, kind) not in SERVED_BUILTINS:
            continue
    else:
        kinds.setdefault((group, kind), set()).add(version)
    md = obj.get("metadata") or {}
    obj["metadata"] = {"name": os.path.splitext(os.path.basename(path))[0], "namespace": "fx",
                       **({"labels": md["labels"]} if md.get("labels") else {})}
    objects.append(obj)

items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fx"}}]
for (group, kind), versions in sorted(kinds.items()):
    plural = kind.lower() + ("es" if kind.lower().endswith(("s", "x")) else "s")
    versions = sorted(versions)
    items.append({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                 "versions": [{"name": v, "served": True, "storage": v == versions[-1],
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}
                              for v in versions]}})
items += objects
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
