#!/usr/bin/env python3
"""Writes the seed corpora under tests/fuzz/corpus/<target>/ from the catalog, the fixtures
and hand-written hostile shapes. Run from the repository root when the catalog or fixtures
change: python3 tests/fuzz/mkcorpus.py. Files are named by content hash, so reruns are
stable; the whole corpus stays well under a few MB (large fixtures are skipped)."""

import glob
import hashlib
import json
import os
import shutil
import uuid

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")
MAX = 24 * 1024


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX:
        return
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def review(obj, op="CREATE", ns=None):
    api = obj.get("apiVersion", "")
    group, version = api.split("/", 1) if "/" in api else ("", api)
    meta = obj.get("metadata") or {}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": str(uuid.uuid5(uuid.NAMESPACE_URL, json.dumps(obj, sort_keys=True) + op)),
                        "kind": {"group": group, "version": version, "kind": obj.get("kind")},
                        "resource": {"group": group, "version": version,
                                     "resource": str(obj.get("kind", "")).lower() + "s"},
                        "name": meta.get("name", ""), "namespace": ns or meta.get("namespace") or "default",
                        "operation": op, "userInfo": {"username": "fuzz"}, "object": obj,
                        "oldObject": obj if op == "UPDATE" else None, "dryRun": False}}


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    catalog = sorted(glob.glob(os.path.join(ROOT, "catalog", "*.yaml")))
    fixtures = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "*", "*.yaml")))
    for path in catalog + fixtures:
        text = open(path, "rb").read()
        put("yaml", text)
    for path in catalog:
        text = open(path).read()
        put("definition", text)
        slug = os.path.basename(path)[:-5]
        fx = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", slug, "*.yaml")))
        if fx:
            put("definition", text.rstrip("\n") + "\n---\n" + open(fx[0]).read())
    for i, path in enumerate(fixtures):
        try:
            obj = yaml.safe_load(open(path))
        except yaml.YAMLError:
            continue
        if not isinstance(obj, dict):
            continue
        ns = ["team-a", "prod", None][i % 3]
        put("admission", json.dumps(review(obj, ns=ns), separators=(",", ":")))
        if i % 8 == 0:
            put("json", json.dumps(obj, indent=1 if i % 16 else None, ensure_ascii=i % 3 == 0))
        if i % 4 == 0:
            put("admission", json.dumps(review(obj, "UPDATE", ns), separators=(",", ":")))
        # The patch target: the object, a NUL, then a script of builder calls.
        script = bytes([(i * 7 + k) % 256 for k in range(18)])
        put("patch", json.dumps(obj, separators=(",", ":")).encode() + b"\0" + script)
    # Hostile shapes shared by several targets.
    hostile = [
        "a: &x [1, 2]\nb: *x\nc: {<<: {k: v}, d: 1}\n",
        "".join("l%d: &a%d [%s]\n" % (i, i, ",".join(["*a%d" % (i - 1)] * 9) if i else "x")
                for i in range(9)),
        "[" * 200 + "]" * 200,
        "{a: 1, a: 2}\n",
        "on: yes\nn: no\nf: 1.5e3\ni: 0x1F\no: 0o17\nnull: ~\n",
        "--- 1\n--- [a]\n--- {b: c}\n...\n",
        "key: !!binary aGVsbG8=\n",
        "\"\\u00e9\\ud800\": x\n",
        "a: |\n  text\n  more\nb: >-\n  folded\n",
        "? complex\n: value\n",
        "%YAML 1.1\n---\nx: 1\n",
    ]
    for h in hostile:
        put("yaml", h)
        put("policy", h)
        put("kubeconfig", h)
    for h in ['{"uid":1}', '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}',
              '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":null},"spec":{"containers":[]}}}}',
              "[" * 300 + "]" * 300]:
        put("admission", h)
    # JSON text: escapes, surrogate pairs, numbers at the edges of json_int_t and double.
    for j in ['{"a":[1,2.5,-3e-2,true,false,null,"x\\u00e9\\ud83d\\ude00\\n"]}',
              '[{"k":{"n":[[],{}]}},"\\"\\\\/\\b\\f\\r\\t",9223372036854775807,-0.0]',
              '[-9223372036854775808,1e308,4.9e-324,0.1,1E+2,-0]', '{"a":1,"a":2}',
              '["caf\u00e9 \U0001F680"]', "[" * 300 + "]" * 300, '{"k":"\\u0000"}']:
        put("json", j)
    for q in ["250m", "1.5Gi", "4", "1e3", "-1", "0.1", "1E-2", "+2k", "8Ei", "9223372036854775807",
              "0.000000000000000000000000000000001", "1e40", "1Ki", "12.", ".5", "1e", "m", "5Mi"]:
        put("quantity", q)
    # Policies: the README's examples and a labels document to match.
    readme = open(os.path.join(ROOT, "webhook", "README.md")).read()
    blocks = readme.split("```yaml\n")[1:]
    for b in blocks:
        put("policy", b.split("```")[0] + "---\n{tier: serving, env: prod}\n")
    for path in glob.glob(os.path.join(ROOT, "tests", "**", "*polic*.yaml"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "tests", "golden", "audit", "*.yaml")):
        put("policy", open(path, "rb").read())
    # WorkloadPolicy objects as the cluster serves them: list responses of the same policies
    # with the server's fields (policy_objects).
    served = []
    for b in blocks + [open(p).read() for p in sorted(glob.glob(os.path.join(ROOT, "docs", "examples", "*polic*.yaml")))]:
        try:
            docs = [d for d in yaml.safe_load_all(b.split("```")[0]) if isinstance(d, dict)]
        except yaml.YAMLError:
            continue
        for n, d in enumerate(docs):
            if d.get("kind") != "WorkloadPolicy":
                continue
            d = json.loads(json.dumps(d))
            md = d.setdefault("metadata", {})
            md.update({"uid": str(uuid.UUID(int=len(served) + 1)), "resourceVersion": str(100 + len(served)),
                       "generation": 1, "creationTimestamp": "2026-12-01T00:00:00Z",
                       "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "wmap.io/v1alpha1",
                                          "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]})
            d["status"] = {"observedGeneration": 1, "conditions": [
                {"type": "Ready", "status": "True", "reason": "InForce", "message": "in force",
                 "lastTransitionTime": "2026-12-01T00:00:00Z"}]}
            served.append(d)
    def plist(items):
        return json.dumps({"apiVersion": "wmap.io/v1alpha1", "kind": "WorkloadPolicyList",
                           "metadata": {"resourceVersion": "999"}, "items": items})
    for i in range(0, len(served), 3):
        put("policy_objects", plist(served[i:i + 3]))
    if served:
        put("policy_objects", plist(served))
        put("policy_objects", plist([served[0], dict(served[0], status={"bad": True})]))  # replaced by name
        broken = json.loads(json.dumps(served[0]))
        broken["spec"]["mode"] = "sometimes"
        put("policy_objects", plist([broken] + served[1:2]))
    put("policy_objects", plist([]))
    kc = """apiVersion: v1
kind: Config
current-context: ctx
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: "LS0tLS1CRUdJTg==", tls-server-name: api}
contexts:
- name: ctx
  context: {cluster: c1, user: u1, namespace: team-a}
users:
- name: u1
  user: {token: secret-token}
- name: u2
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/cred, args: [a, b], env: [{name: X, value: y}], provideClusterInfo: true}
- name: u3
  user: {client-certificate-data: "LS0t", client-key-data: "LS0t", username: a, password: b}
"""
    put("kubeconfig", kc)
    put("kubeconfig", "#30s\n" + kc + "---\ncurrent-context: other\ncontexts: [{name: other, context: {cluster: c1, user: u2}}]\n")
    for d in ["#1m", "#500ms", "#0", "#10", "#1h2m3s", "#-1s"]:
        put("kubeconfig", d + "\n")
    sizes = {t: len(os.listdir(os.path.join(OUT, t))) for t in sorted(os.listdir(OUT))}
    print("corpus:", sizes)


if __name__ == "__main__":
    main()
