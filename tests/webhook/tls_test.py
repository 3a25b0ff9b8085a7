#!/usr/bin/env python3
"""TLS tests of wmap-webhook: a real server, real curl with --cacert, real AdmissionReview
bodies built from tests/fixtures/*/*.yaml, patches applied by an independent JSON Patch
implementation (jsonpatch.py).

usage: tls_test.py WEBHOOK_BINARY [--keep] [--plugin KUBECTL_WMAP]

Prints one PASS/FAIL line per check and a closing "N passed, N failed" line; exits 1 when
anything failed."""

import base64
import glob
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jsonpatch  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SNI = "wmap-webhook.wmap-system.svc"

passed = 0
failed = 0


def result(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name, flush=True)
    else:
        failed += 1
        print("FAIL %s%s" % (name, (": " + detail) if detail else ""), flush=True)
    return ok


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, workdir, extra=(), policy=True):
        self.binary = binary
        self.dir = workdir
        self.port = free_port()
        self.log = open(os.path.join(workdir, "webhook-%d.log" % self.port), "w+")
        args = [binary, "--tls-cert", os.path.join(workdir, "tls.crt"),
                "--tls-key", os.path.join(workdir, "tls.key"), "--port", str(self.port),
                "--threads", "2", "--reload-interval-ms", "200"] + list(extra)
        if policy:
            args += ["--policy", os.path.join(workdir, "policy.yaml")]
        self.proc = subprocess.Popen(args, stderr=self.log, stdout=self.log)

    def url(self, path):
        return "https://%s:%d%s" % (SNI, self.port, path)

    def wait_ready(self, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                return False
            code, _ = curl(self, "GET", "/readyz")
            if code == 200:
                return True
            time.sleep(0.05)
        return False

    def log_text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()


def curl(srv, method, path, body=None, headers=(), extra=()):
    """(status, body bytes) via the curl CLI, verifying the server with the test CA."""
    args = ["curl", "-sS", "--max-time", "20", "--cacert", os.path.join(srv.dir, "ca.crt"),
            "--resolve", "%s:%d:127.0.0.1" % (SNI, srv.port), "-o", "-",
            "-w", "\n%{http_code}", "-X", method]
    for h in headers:
        args += ["-H", h]
    args += list(extra)
    if body is not None:
        args += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
    args.append(srv.url(path))
    p = subprocess.run(args, input=body if body is not None else b"", capture_output=True)
    out = p.stdout
    nl = out.rfind(b"\n")
    try:
        code = int(out[nl + 1:])
    except ValueError:
        code = 0
    return code, out[:nl]


def review(obj, op="CREATE", uid=None, namespace=None, dry=False):
    api = obj.get("apiVersion", "")
    group, version = api.split("/", 1) if "/" in api else ("", api)
    meta = obj.get("metadata") or {}
    ns = namespace or meta.get("namespace") or "default"
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid or str(uuid.uuid4()),
                        "kind": {"group": group, "version": version, "kind": obj.get("kind")},
                        "resource": {"group": group, "version": version,
                                     "resource": str(obj.get("kind", "")).lower() + "s"},
                        "name": meta.get("name", ""), "namespace": ns, "operation": op,
                        "userInfo": {"username": "tls-test"}, "object": obj,
                        "oldObject": obj if op == "UPDATE" else None, "dryRun": dry}}


def post_review(srv, rev, path="/mutate"):
    code, body = curl(srv, "POST", path, json.dumps(rev).encode())
    try:
        return code, json.loads(body)
    except ValueError:
        return code, {"raw": body.decode(errors="replace")}


def patch_of(resp):
    r = resp.get("response", {})
    if "patch" not in r:
        return []
    return json.loads(base64.b64decode(r["patch"], validate=True))


def load_fixture(path):
    with open(path) as f:
        return yaml.safe_load(f)


ALLOWED_LEAVES = ("labels", "annotations", "podLabels", "podAnnotations", "metadata", "schedulerName", "priorityClassName",
                  "runtimeClassName", "nodeSelector", "tolerations")


def diff(before, after, path, problems, added):
    """Everything in before is still in after, unchanged; what is new is recorded."""
    if isinstance(before, dict) and isinstance(after, dict):
        for k, v in before.items():
            if k not in after:
                problems.append("%s/%s removed" % (path, k))
            else:
                diff(v, after[k], "%s/%s" % (path, k), problems, added)
        for k in after:
            if k not in before:
                added.append(("%s/%s" % (path, k), k))
    elif isinstance(before, list) and isinstance(after, list):
        if len(after) < len(before):
            problems.append("%s shrank" % path)
        for i, v in enumerate(before):
            if i < len(after):
                diff(v, after[i], "%s/%d" % (path, i), problems, added)
        for i in range(len(before), len(after)):
            added.append(("%s/%d" % (path, i), path.rsplit("/", 1)[-1]))
    elif before is None and isinstance(after, dict):
        added.append((path, path.rsplit("/", 1)[-1]))
    elif before != after:
        # identity labels are ours: a stale or forged value may be corrected
        if "/wmap.io/" not in path:
            problems.append("%s changed %r -> %r" % (path, before, after))


def value_at(obj, path):
    for seg in path.split("/")[1:]:
        obj = obj[int(seg)] if isinstance(obj, list) else obj[seg]
    return obj


def metadata_only(v, list_entry=False):
    """An added subtree that carries nothing but labels and annotations, and the key of
    each list entry on the way (a TrainJob's runtimePatches entry of wmap's: manager, then
    the node job's name, down to the pod template's labels)."""
    if isinstance(v, list):
        return bool(v) and all(metadata_only(e, True) for e in v)
    if not isinstance(v, dict) or not v:
        return False
    for k, c in v.items():
        if k in ("labels", "annotations") and isinstance(c, dict):
            continue
        if list_entry and isinstance(c, str):
            continue   # the entry's key
        if not metadata_only(c):
            return False
    return True


def templates(obj, path=""):
    """(pointer-ish path, template) of every dict that looks like a PodTemplateSpec or a Pod:
    one whose "spec" holds a "containers" list. Found without wmap's definitions."""
    out = []
    if isinstance(obj, dict):
        spec = obj.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("containers"), list):
            out.append((path, obj))
        for k, v in obj.items():
            if k != "status":
                out += templates(v, "%s/%s" % (path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += templates(v, "%s/%d" % (path, i))
    return out


IDENTITY = ("wmap.io/workload-kind", "wmap.io/workload-name", "wmap.io/component")


def kind_label(obj):
    api = obj.get("apiVersion", "")
    return obj["kind"] + ("." + api.split("/", 1)[0] if "/" in api else "")


def check_fixture(srv, path):
    obj = load_fixture(path)
    name = os.path.relpath(path, ROOT)
    code, resp = post_review(srv, review(obj))
    r = resp.get("response", {})
    if code != 200 or not r.get("allowed") or r.get("uid") is None:
        return result(False, "fixture %s" % name, "status %d %s" % (code, str(resp)[:200]))
    try:
        ops = patch_of(resp)
        if ops and r.get("patchType") != "JSONPatch":
            raise jsonpatch.PatchError("patch without patchType JSONPatch")
        out = jsonpatch.apply(obj, ops)
    except (jsonpatch.PatchError, ValueError) as e:
        return result(False, "fixture %s" % name, "patch does not apply: %s" % e)
    problems, added = [], []
    owned = any(r.get("controller") for r in (obj.get("metadata") or {}).get(
        "ownerReferences") or [])
    if owned:
        # a controller's object (a Deployment's ReplicaSet): stamped through its owner
        return result(not ops, "fixture %s (controller-owned, no patch)" % name,
                      "%d ops" % len(ops))
    diff(obj, out, "", problems, added)
    for p, leaf in added:
        segs = p.split("/")
        if any(s in ALLOWED_LEAVES for s in segs[-3:]):
            continue
        try:
            in_list = isinstance(value_at(out, p.rsplit("/", 1)[0]), list)
            ok = metadata_only(value_at(out, p), in_list)
        except (KeyError, IndexError, ValueError, TypeError):
            ok = False
        if not ok:
            problems.append("unexpected addition %s" % p)
    # every pod template found in the object carries the identity labels
    for tpath, t in templates(out):
        labels = (t.get("metadata") or {}).get("labels") or {}
        missing = [k for k in IDENTITY if k not in labels]
        if missing and ops:
            problems.append("template %s lacks %s" % (tpath or "/", ",".join(missing)))
        elif labels.get("wmap.io/workload-kind", kind_label(obj)) != kind_label(obj):
            problems.append("template %s: workload-kind %s" % (tpath, labels.get(
                "wmap.io/workload-kind")))
    warnings = r.get("warnings") or []
    if not ops and templates(obj) and not warnings:
        problems.append("no patch and no warning")
    # second pass: the result admitted again gives no patch
    code2, resp2 = post_review(srv, review(out))
    if code2 != 200 or "patch" in resp2.get("response", {}):
        problems.append("second pass: %d %s" % (code2, patch_of(resp2) if code2 == 200 else ""))
    return result(not problems, "fixture %s (%d ops)" % (name, len(ops)),
                  "; ".join(problems[:4]))


def check_offline(srv, plugin):
    """kubectl wmap mutate runs the same admission code offline: same patch, one fixture
    per workload type."""
    seen = set()
    diffs = []
    n = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/*/*.yaml"))):
        kind_dir = os.path.basename(os.path.dirname(path))
        if kind_dir == "bad" or kind_dir in seen:
            continue
        seen.add(kind_dir)
        obj = load_fixture(path)
        _, resp = post_review(srv, review(obj))
        ns = review(obj)["request"]["namespace"]
        p = subprocess.run([plugin, "mutate", "-f", path, "-n", ns], capture_output=True)
        try:
            offline = json.loads(p.stdout or b"null")
        except ValueError:
            offline = None
        n += 1
        if offline != patch_of(resp):
            diffs.append("%s (rc %d: %s)" % (kind_dir, p.returncode,
                                             p.stderr.decode(errors="replace")[:120]))
    result(not diffs and n > 0, "kubectl wmap mutate gives the webhook's patch offline "
           "(%d workload types)" % n, "; ".join(diffs[:4]))


def check_schedulers(srv):
    js = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                   "created.yaml"))
    t0 = "/spec/replicatedJobs/0/template/spec/template"
    name = js["metadata"]["name"]
    expect = {
        "kai": [(t0 + "/spec/schedulerName", "kai-scheduler"),
                ("/metadata/labels/kai.scheduler~1queue", "team-q"),
                (t0 + "/metadata/annotations/wmap.io~1pod-group", name),
                (t0 + "/metadata/annotations/wmap.io~1pod-group-min-member", "3")],
        "volcano": [(t0 + "/spec/schedulerName", "volcano"),
                    (t0 + "/metadata/annotations/scheduling.k8s.io~1group-name", name),
                    (t0 + "/metadata/annotations/scheduling.volcano.sh~1queue-name", "team-q")],
        "coscheduling": [(t0 + "/metadata/labels/scheduling.x-k8s.io~1pod-group", name),
                         (t0 + "/spec/schedulerName", "scheduler-plugins-scheduler")],
        "yunikorn": [(t0 + "/spec/schedulerName", "yunikorn"),
                     (t0 + "/metadata/labels/yunikorn.apache.org~1queue", "team-q"),
                     # unique in the cluster: the review's namespace and the name
                     (t0 + "/metadata/labels/yunikorn.apache.org~1app-id",
                      "gang-yunikorn-" + name),
                     (t0 + "/metadata/annotations/yunikorn.apache.org~1task-group-name",
                      "replicatedjob-leader")],
        "kueue": [("/metadata/labels/kueue.x-k8s.io~1queue-name", "ml-team-queue")],
        "native": [(t0 + "/metadata/annotations/wmap.io~1pod-group", name)],
    }
    for sched, checks in expect.items():
        code, resp = post_review(srv, review(js, namespace="gang-" + sched))
        problems = []
        try:
            out = jsonpatch.apply(js, patch_of(resp))
            for ptr, want in checks:
                try:
                    got = jsonpatch.get(out, ptr)
                except jsonpatch.PatchError:
                    got = None
                if got != want:
                    problems.append("%s = %r, want %r" % (ptr, got, want))
        except jsonpatch.PatchError as e:
            problems.append(str(e))
        result(code == 200 and not problems, "gang scheduler %s keys in place" % sched,
               "; ".join(problems))
    # Kueue without a queue on the object: the label lands on the workload itself
    js2 = json.loads(json.dumps(js))
    del js2["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    code, resp = post_review(srv, review(js2, namespace="gang-kueue"))
    out = jsonpatch.apply(js2, patch_of(resp))
    result(out["metadata"]["labels"].get("kueue.x-k8s.io/queue-name") == "team-q",
           "gang scheduler kueue writes the queue label on the workload")


def check_malformed(srv):
    base = review(load_fixture(os.path.join(
        ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/created.yaml")))
    text = json.dumps(base).encode()
    no_uid = json.loads(text)
    del no_uid["request"]["uid"]
    wrong = json.loads(text)
    wrong["request"] = ["not", "an", "object"]
    unknown = json.loads(text)
    unknown["request"]["object"]["apiVersion"] = "example.com/v9"
    unknown["request"]["object"]["kind"] = "Mystery"
    v1beta1 = json.loads(text)
    v1beta1["apiVersion"] = "admission.k8s.io/v1beta1"
    cases = [
        ("empty body", b"", 400, "empty body"),
        ("truncated JSON", text[: len(text) // 2], 400, "not JSON"),
        ("not JSON", b"hello, webhook", 400, "not JSON"),
        ("deeply nested", b"[" * 100000 + b"]" * 100000, 400, "not a JSON object"),
        ("a JSON array", b"[1,2,3]", 400, "not a JSON object"),
        ("wrong types", json.dumps(wrong).encode(), 400, "request"),
        ("missing uid", json.dumps(no_uid).encode(), 400, "request.uid"),
        ("v1beta1 review", json.dumps(v1beta1).encode(), 400, "admission.k8s.io/v1"),
        ("NUL bytes", b'{"apiVersion":"admission.k8s.io/v1\x00"}', 400, "not JSON"),
        ("unknown kind", json.dumps(unknown).encode(), 200, "no definition for Mystery"),
    ]
    for name, body, want, text_want in cases:
        code, out = curl(srv, "POST", "/mutate", body)
        ok = code == want and text_want in out.decode(errors="replace")
        if want == 200:
            r = json.loads(out).get("response", {})
            ok = ok and r.get("allowed") is True and "patch" not in r
        result(ok, "malformed: %s -> %d" % (name, want), "got %d %s" % (code, out[:160]))
        hc, _ = curl(srv, "GET", "/healthz")
        if hc != 200:
            result(False, "server still serving after %s" % name)
    # oversize, with a Content-Length and chunked
    big = b'{"pad":"' + b"x" * (8 << 20) + b'"}'
    code, out = curl(srv, "POST", "/mutate", big)
    result(code == 413, "malformed: 8 MiB body -> 413", "got %d" % code)
    code, out = curl(srv, "POST", "/mutate", big, headers=["Transfer-Encoding: chunked"])
    result(code == 413, "malformed: 8 MiB chunked body -> 413", "got %d" % code)
    code, _ = curl(srv, "GET", "/mutate")
    result(code == 405, "GET /mutate -> 405", "got %d" % code)
    code, _ = curl(srv, "GET", "/nope")
    result(code == 404, "GET /nope -> 404", "got %d" % code)
    hc, _ = curl(srv, "GET", "/healthz")
    result(hc == 200, "server keeps serving after every malformed body")


def check_semantics(srv):
    js = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                   "created.yaml"))
    # UPDATE: no patch
    code, resp = post_review(srv, review(js, op="UPDATE"))
    result(code == 200 and "patch" not in resp["response"], "UPDATE is allowed without a patch")
    # DELETE: no object
    rev = review(js, op="DELETE")
    rev["request"]["object"] = None
    code, resp = post_review(srv, rev)
    result(code == 200 and resp["response"]["allowed"] and "patch" not in resp["response"],
           "DELETE is allowed without a patch")
    # dryRun: the same answer
    uid = str(uuid.uuid4())
    _, a = post_review(srv, review(js, uid=uid))
    _, b = post_review(srv, review(js, uid=uid, dry=True))
    result(a == b, "dryRun gets exactly the answer of a real request")
    # uid echoed
    result(a["response"]["uid"] == uid, "uid echoed")
    # generateName
    g = json.loads(json.dumps(js))
    del g["metadata"]["name"]
    g["metadata"]["generateName"] = "train-"
    code, resp = post_review(srv, review(g, namespace="gang-volcano"))
    w = " ".join(resp["response"].get("warnings", []))
    ops = patch_of(resp)
    names = [o for o in ops if "workload-name" in o["path"] or "group-name" in json.dumps(o)]
    result(code == 200 and "generateName" in w and not names,
           "generateName: no name-based hints, and a warning", w)
    # warnings are short enough for the API server
    result(all(len(x) <= 256 for x in resp["response"].get("warnings", [])),
           "warnings stay under 256 characters")
    # enforced policy on /validate
    code, resp = post_review(srv, review(js, namespace="prod"), "/validate")
    r = resp.get("response", {})
    msg = (r.get("status") or {}).get("message", "")
    result(code == 200 and r.get("allowed") is False and r["status"].get("code") == 403 and
           "policy prod-priority" in msg and "component replicatedjob" in msg and
           "priorityClassName" in msg, "validate denies a violating object, naming policy, "
           "component and field", msg)
    # ... and the mutated object passes
    _, m = post_review(srv, review(js, namespace="prod"))
    fixed = jsonpatch.apply(js, patch_of(m))
    code, resp = post_review(srv, review(fixed, namespace="prod"), "/validate")
    result(code == 200 and resp["response"]["allowed"] is True,
           "validate allows the object the mutation produced")


def violation_count(srv, policy, action, ns):
    _, body = curl(srv, "GET", "/metrics")
    want = 'wmap_policy_violations{policy="%s",action="%s",namespace="%s"} ' % (policy, action, ns)
    for line in body.decode().splitlines():
        if line.startswith(want):
            return int(line.split()[-1])
    return 0


def check_actions(srv):
    """validationActions at /validate: Deny refuses, Warn admits with a warning per
    violation, Audit admits silently and counts it in wmap_policy_violations."""
    js = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                   "created.yaml"))
    # Warn: allowed, one warning per violation (2 fields x 2 replicated jobs), no status
    code, resp = post_review(srv, review(js, namespace="staging"), "/validate")
    r = resp.get("response", {})
    warns = r.get("warnings", [])
    want = ['policy warn-team: component replicatedjob (instance leader): label team must be '
            '"ml" (not set)',
            'policy warn-team: component replicatedjob (instance workers): priorityClassName '
            'must be "batch" (not set)']
    mine = [w for w in warns if w.startswith("policy warn-team:")]
    result(code == 200 and r.get("allowed") is True and "status" not in r and
           all(w in warns for w in want) and len(mine) == 4 and
           all(len(w) <= 256 for w in warns),
           "Warn: /validate allows a violating JobSet with one warning per violation "
           "(policy, component, instance, field, wanted, found)", json.dumps(r)[:600])
    before = violation_count(srv, "warn-team", "warn", "staging")
    result(before >= 1, "Warn: counted in wmap_policy_violations{action=\"warn\"}", str(before))
    # judged after wmap's own mutation: the mutated object violates nothing
    _, m = post_review(srv, review(js, namespace="staging"))
    fixed = jsonpatch.apply(js, patch_of(m))
    code, resp = post_review(srv, review(fixed, namespace="staging"), "/validate")
    r = resp.get("response", {})
    result(code == 200 and r.get("allowed") is True and
           not [w for w in r.get("warnings", []) if "warn-team" in w],
           "Warn: the object as wmap's mutation admits it has no warning", json.dumps(r)[:400])
    # Audit: allowed silently, counted once per review; dry runs are not counted
    before = violation_count(srv, "audit-runtime", "audit", "research")
    code, resp = post_review(srv, review(js, namespace="research"), "/validate")
    r = resp.get("response", {})
    after = violation_count(srv, "audit-runtime", "audit", "research")
    result(code == 200 and r.get("allowed") is True and "status" not in r and
           not [w for w in r.get("warnings", []) if "audit-runtime" in w] and
           after == before + 1,
           "Audit: /validate allows silently and wmap_policy_violations{policy=\"audit-runtime\","
           "action=\"audit\",namespace=\"research\"} goes up by one",
           "%s -> %s %s" % (before, after, json.dumps(r)[:300]))
    post_review(srv, review(js, namespace="research", dry=True), "/validate")
    result(violation_count(srv, "audit-runtime", "audit", "research") == after,
           "Audit: a dry run is not counted")
    # Deny + Audit: denied, and counted under both actions
    d0 = violation_count(srv, "deny-audit", "deny", "secure")
    a0 = violation_count(srv, "deny-audit", "audit", "secure")
    code, resp = post_review(srv, review(js, namespace="secure"), "/validate")
    r = resp.get("response", {})
    msg = (r.get("status") or {}).get("message", "")
    result(code == 200 and r.get("allowed") is False and
           'policy deny-audit: component replicatedjob (instance leader): priorityClassName '
           'must be "high" (not set)' in msg and
           violation_count(srv, "deny-audit", "deny", "secure") == d0 + 1 and
           violation_count(srv, "deny-audit", "audit", "secure") == a0 + 1,
           "Deny+Audit: denied with the message, counted as deny and as audit", msg[:300])


def check_violation_series(srv, workdir):
    """wmap_policy_violations stays bounded: 600 namespaces' violations of one Audit policy
    are all counted, in at most 512 series, the ones past the cap as namespace="other"."""
    js = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                   "created.yaml"))
    ctx = ssl.create_default_context(cafile=os.path.join(workdir, "ca.crt"))
    ctx.check_hostname = False
    c = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ctx)
    allowed = 0
    for i in range(600):
        c.request("POST", "/validate", json.dumps(review(js, namespace="load-%d" % i)).encode(),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        allowed += json.loads(r.read())["response"]["allowed"] is True
    c.close()
    _, body = curl(srv, "GET", "/metrics")
    lines = [l for l in body.decode().splitlines() if l.startswith("wmap_policy_violations{")]
    mine = [l for l in lines if 'policy="audit-load"' in l]
    total = sum(int(l.split()[-1]) for l in mine)
    other = [l for l in mine if 'namespace="other"' in l]
    result(allowed == 600 and len(lines) <= 512 and total == 600 and len(other) == 1,
           "wmap_policy_violations: 600 namespaces counted in %d series (at most 512), the "
           "rest as namespace=\"other\"" % len(lines),
           "allowed %d, %d series, audit-load total %d, other %s" % (allowed, len(lines), total,
                                                                   other))


def check_own_objects(srv):
    """Karta and WorkloadPolicy objects at /validate, as the API server sends them for the
    static rules of deploy/base/09 (definitions.wmap.io): the catalog's Kartas pass, an invalid
    Karta or WorkloadPolicy is denied with the finding and its field path on CREATE and
    UPDATE, DELETE is allowed."""
    def validate(obj, op):
        rev = review(obj, op=op)
        rev["request"]["namespace"] = ""
        rev["request"]["resource"]["resource"] = ("kartas" if obj.get("kind") == "Karta"
                                                  else "workloadpolicies")
        if op == "DELETE":
            rev["request"]["oldObject"], rev["request"]["object"] = obj, None
        code, resp = post_review(srv, rev, "/validate")
        r = resp.get("response", {})
        return code, r, (r.get("status") or {}).get("message", "")

    # Objects as stored by the API server: server-set metadata and a status.
    meta = {"uid": str(uuid.uuid4()), "resourceVersion": "42", "generation": 2,
            "creationTimestamp": "2026-01-01T00:00:00Z"}
    cat = load_fixture(os.path.join(ROOT, "catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml"))
    cat["metadata"].update(meta)
    cat["status"] = {"observedGeneration": 2, "conditions": []}
    for op in ("CREATE", "UPDATE"):
        code, r, msg = validate(cat, op)
        result(code == 200 and r.get("allowed") is True,
               "a catalog Karta is allowed at /validate on %s" % op, msg)
    bad = json.loads(json.dumps(cat))
    child = bad["spec"]["structureDefinition"]["childComponents"][0]
    child["ownerRef"] = "nobody"
    child["specDefinition"]["podTemplateSpecPath"] = ".spec.replicatedJobs[] | del(.x)"
    for op in ("CREATE", "UPDATE"):
        code, r, msg = validate(bad, op)
        result(code == 200 and r.get("allowed") is False and r["status"].get("code") == 403 and
               "jobset-x-k8s-io-jobset-v1alpha2: .spec.structureDefinition.childComponents[0]: "
               "child component 'replicatedjob' has owner ref to non-existing component 'nobody'"
               in msg and ".spec.structureDefinition.childComponents[0].specDefinition."
               "podTemplateSpecPath: jq expression" in msg,
               "an invalid Karta is denied on %s with upstream's findings and their paths" % op,
               msg)
    code, r, msg = validate(bad, "DELETE")
    result(code == 200 and r.get("allowed") is True, "deleting an invalid Karta is allowed", msg)
    pol = {"apiVersion": "wmap.io/v1alpha1", "kind": "WorkloadPolicy",
           "metadata": dict(meta, name="prod"),
           "spec": {"match": {"kinds": ["JobSet.jobset.x-k8s.io"]}, "mode": "override",
                    "enforce": True, "podTemplate": {"priorityClassName": "high"}},
           "status": {"observedGeneration": 2}}
    code, r, msg = validate(pol, "CREATE")
    result(code == 200 and r.get("allowed") is True, "a WorkloadPolicy object is allowed", msg)
    pol["spec"]["gang"] = {"scheduler": "slurm"}
    for op in ("CREATE", "UPDATE"):
        code, r, msg = validate(pol, op)
        result(code == 200 and r.get("allowed") is False and
               "prod: document 1: .spec.gang.scheduler: unknown gang scheduler \"slurm\"" in msg,
               "a WorkloadPolicy that does not parse is denied on %s with the path" % op, msg)
    code, r, msg = validate(pol, "DELETE")
    result(code == 200 and r.get("allowed") is True, "deleting a WorkloadPolicy is allowed", msg)


def check_limits(srv, binary, workdir):
    js = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                   "created.yaml"))
    # The API server's own deadline (?timeout=) bounds the budget: a JobSet with 400
    # replicatedJobs cannot be stamped in 1 ms, so it is allowed unchanged with a warning.
    big = json.loads(json.dumps(js))
    rj = big["spec"]["replicatedJobs"][1]
    big["spec"]["replicatedJobs"] = [dict(json.loads(json.dumps(rj)), name="w%d" % i)
                                     for i in range(400)]
    code, out = curl(srv, "POST", "/mutate?timeout=0.001s", json.dumps(review(big)).encode())
    r = json.loads(out).get("response", {}) if code == 200 else {}
    result(code == 200 and r.get("allowed") is True and "patch" not in r and
           "budget" in " ".join(r.get("warnings", [])),
           "past the request time budget: allowed unchanged with a warning",
           "%d %s" % (code, out[:200]))
    code, out = curl(srv, "POST", "/mutate?timeout=10s", json.dumps(review(big)).encode())
    r = json.loads(out).get("response", {}) if code == 200 else {}
    result(code == 200 and "patch" in r, "within the budget the same JobSet is stamped")
    # An object deeper than 200 levels (but within JSON's limits) is allowed unchanged.
    deep = json.loads(json.dumps(js))
    node = deep["spec"]
    for _ in range(300):
        node["x"] = {}
        node = node["x"]
    code, out = curl(srv, "POST", "/mutate", json.dumps(review(deep)).encode())
    r = json.loads(out).get("response", {}) if code == 200 else {}
    result(code == 200 and r.get("allowed") is True and "patch" not in r and
           "deeper" in " ".join(r.get("warnings", [])),
           "an object nested 300 levels deep is allowed unchanged with a warning")
    code, out = curl(srv, "POST", "/validate", json.dumps(review(deep, namespace="prod")).encode())
    r = json.loads(out).get("response", {}) if code == 200 else {}
    result(code == 200 and r.get("allowed") is False and
           "could not check" in (r.get("status") or {}).get("message", ""),
           "validation under an enforced policy does not fail open on an unevaluable object")
    # Connection limit: a second server that takes two connections at most.
    small = Server(binary, workdir, ["--max-connections", "2", "--threads", "1"])
    try:
        if not small.wait_ready():
            return result(False, "connection limit server starts")
        socks = [socket.create_connection(("127.0.0.1", small.port)) for _ in range(2)]
        time.sleep(0.2)
        code_full, _ = curl(small, "GET", "/healthz")
        socks.pop().close()
        time.sleep(0.2)
        code_free, _ = curl(small, "GET", "/healthz")
        for x in socks:
            x.close()
        result(code_full == 0 and code_free == 200, "connection limit: a third connection is "
               "refused, served again once one closes", "%d then %d" % (code_full, code_free))
    finally:
        small.proc.terminate()
        small.proc.wait()


def deep_review(js, levels, namespace, uid, key="a"):
    """The review of js with a field nested `levels` objects deep in its first pod template's
    spec (legal under x-kubernetes-preserve-unknown-fields), as compact JSON text (the json
    module cannot write that depth itself)."""
    obj = json.loads(json.dumps(js))
    obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["x"] = "@DEEP@"
    text = json.dumps(review(obj, uid=uid, namespace=namespace), separators=(",", ":"))
    deep = ('{"%s":' % key) * levels + "1" + "}" * levels
    return text.replace('"@DEEP@"', deep, 1).encode()


def check_cut_reviews(srv):
    """Valid JSON over wmap's caps: answered from the envelope, never a 400."""
    js = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                   "created.yaml"))
    where = ".request.object.spec.replicatedJobs[0].template.spec.template.spec.x.a"
    code, out = curl(srv, "POST", "/mutate", deep_review(js, 3000, "team-a", "deep-mutate"))
    r = json.loads(out).get("response", {}) if code == 200 else {}
    w = r.get("warnings", [])
    result(code == 200 and r.get("uid") == "deep-mutate" and r.get("allowed") is True and
           "patch" not in r and len(w) == 1 and "nesting deeper than" in w[0] and where in w[0]
           and "allowed unchanged" in w[0],
           "/mutate: a JobSet with a 3,000-level field is allowed unchanged with one warning "
           "saying why", "%d %s" % (code, out[:300]))
    code, out = curl(srv, "POST", "/validate", deep_review(js, 3000, "dev", "deep-dev"))
    r = json.loads(out).get("response", {}) if code == 200 else {}
    w = r.get("warnings", [])
    result(code == 200 and r.get("uid") == "deep-dev" and r.get("allowed") is True and
           len(w) == 1 and "nesting deeper than" in w[0],
           "/validate: the 3,000-level JobSet is allowed with the warning where no enforced "
           "policy matches", "%d %s" % (code, out[:300]))
    code, out = curl(srv, "POST", "/validate", deep_review(js, 3000, "prod", "deep-prod"))
    r = json.loads(out).get("response", {}) if code == 200 else {}
    msg = (r.get("status") or {}).get("message", "")
    result(code == 200 and r.get("uid") == "deep-prod" and r.get("allowed") is False and
           (r.get("status") or {}).get("code") == 403 and
           "could not check this JobSet.jobset.x-k8s.io against enforced policy prod-priority"
           in msg and "nesting deeper than" in msg and where in msg,
           "/validate: the 3,000-level JobSet is denied where an enforced policy matches its "
           "kind and namespace, saying which policy and why", "%d %s" % (code, out[:400]))
    # Bulk instead of depth: 20,000 labels in one map, over the member cap.
    bulk = json.loads(json.dumps(js))
    bulk["metadata"]["labels"] = {"k%d" % i: "v" for i in range(20000)}
    code, out = curl(srv, "POST", "/validate", json.dumps(review(bulk, uid="bulk-prod",
                                                                  namespace="prod")).encode())
    r = json.loads(out).get("response", {}) if code == 200 else {}
    msg = (r.get("status") or {}).get("message", "")
    result(code == 200 and r.get("allowed") is False and "more than 16384 members" in msg and
           ".request.object.metadata.labels" in msg,
           "/validate: 20,000 labels cannot carry an object past an enforced policy either",
           "%d %s" % (code, out[:300]))
    code, out = curl(srv, "POST", "/mutate", json.dumps(review(bulk, uid="bulk-1")).encode())
    r = json.loads(out).get("response", {}) if code == 200 else {}
    result(code == 200 and r.get("allowed") is True and "patch" not in r and
           "more than 16384 members" in " ".join(r.get("warnings", [])),
           "/mutate: 20,000 labels are allowed unchanged with a warning")
    # Not an AdmissionReview however deep: still a 400.
    body = deep_review(js, 3000, "team-a", "x").replace(b'"uid":"x",', b"", 1)
    code, out = curl(srv, "POST", "/mutate", body)
    result(code == 400 and b"request.uid" in out,
           "a 3,000-level body without request.uid is a 400", "%d %s" % (code, out[:200]))
    # A log line with the reason and the place, never the path (it quotes the object's keys).
    time.sleep(0.2)
    line = [l for l in srv.log_text().splitlines() if '"deep-mutate"' in l]
    ok = False
    if line:
        f = json.loads(line[-1])
        ok = f.get("result") == "failopen" and f.get("reason") == "too-deep" and \
            f.get("cutLine") == 1 and f.get("cutColumn", 0) > 0 and "replicatedJobs" not in line[-1]
    result(ok, "the log line says failopen, reason too-deep and where, without the path",
           line[-1] if line else "no log line")
    code, body = curl(srv, "GET", "/metrics")
    text = body.decode()
    want = ['wmap_webhook_fail_open_total{endpoint="mutate",reason="too-deep"}',
            'wmap_webhook_fail_open_total{endpoint="validate",reason="too-deep"}',
            'wmap_webhook_fail_open_total{endpoint="mutate",reason="too-many-members"}']
    missing = [x for x in want if x not in text]
    result(not missing, "metrics count cut reviews by reason", "missing: %s" % missing)


KARTA = """\
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: example-com-tjob-v1}
spec:
  structureDefinition:
    rootComponent:
      name: tjob
      kind: {group: example.com, version: v1, kind: TJob}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings: {running: [{byPhase: Running}]}
    childComponents:
    - name: head
      ownerRef: tjob
      specDefinition: {podTemplateSpecPath: .spec.head.template}
    - name: worker
      ownerRef: tjob
      specDefinition: {podTemplateSpecPath: ".spec.groups[].template"}
      scaleDefinition: {replicasPath: ".spec.groups[].replicas"}
      instanceIdPath: ".spec.groups[].name"
      podSelector: {componentInstanceSelector: {idPath: '.metadata.labels["g"]'}}
"""


def check_definitions(binary, workdir):
    path = os.path.join(workdir, "tjob-karta.yaml")
    with open(path, "w") as f:
        f.write(KARTA)
    obj = {"apiVersion": "example.com/v1", "kind": "TJob",
           "metadata": {"name": "t1", "namespace": "default"},
           "spec": {"head": {"template": {"spec": {"containers": [{"name": "c"}]}}},
                    "groups": [{"name": "g-a", "replicas": 2, "template": {
                        "metadata": {"labels": {"keep": "me"}},
                        "spec": {"containers": [{"name": "c"}]}}}]}}
    srv = Server(binary, workdir, ["--definitions", path])
    try:
        if not result(srv.wait_ready(), "--definitions FILE: server starts"):
            return
        code, resp = post_review(srv, review(obj))
        out = jsonpatch.apply(obj, patch_of(resp))
        head = out["spec"]["head"]["template"]["metadata"]["labels"]
        grp = out["spec"]["groups"][0]["template"]["metadata"]["labels"]
        result(head.get("wmap.io/component") == "head" and
               grp.get("wmap.io/component") == "worker" and
               grp.get("wmap.io/instance") == "g-a" and grp.get("keep") == "me" and
               head.get("wmap.io/workload-kind") == "TJob.example.com",
               "--definitions FILE: a kind outside the catalog is stamped", json.dumps(out)[:300])
    finally:
        srv.proc.terminate()
        srv.proc.wait()
    with open(path, "w") as f:
        f.write(KARTA.replace("ownerRef: tjob\n      specDefinition: {podTemplateSpecPath: "
                              ".spec.head", "ownerRef: nobody\n      specDefinition: "
                              "{podTemplateSpecPath: .spec.head"))
    bad = Server(binary, workdir, ["--definitions", path])
    rc = bad.proc.wait(timeout=30)
    log = bad.log_text()
    result(rc == 1 and "tjob-karta.yaml" in log and "nobody" in log,
           "--definitions with an invalid definition: exits 1 naming the file and the problem",
           log[-300:])


def check_null_admission(binary, workdir):
    """The benchmarks' floor: same server, same parsing, no wmap work."""
    bad = Server(binary, workdir, ["--null-admission"])
    rc = bad.proc.wait(timeout=30)
    result(rc == 2 and "--policy" in bad.log_text(),
           "--null-admission with --policy: refused, exit 2", bad.log_text()[-200:])
    srv = Server(binary, workdir, ["--null-admission"], policy=False)
    try:
        if not result(srv.wait_ready(), "--null-admission: server starts"):
            return
        obj = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                        "leader-workers.yaml"))
        rev = review(obj, uid="null-1")
        for path in ("/mutate", "/validate"):
            code, resp = post_review(srv, rev, path)
            r = resp.get("response", {})
            result(code == 200 and r.get("uid") == "null-1" and r.get("allowed") is True and
                   "patch" not in r and "warnings" not in r,
                   "--null-admission %s: a JobSet is allowed unchanged" % path,
                   json.dumps(resp)[:300])
        code, resp = post_review(srv, {"apiVersion": "admission.k8s.io/v1",
                                       "kind": "AdmissionReview", "request": {}})
        result(code == 400, "--null-admission: a review without a uid is still a 400",
               "%d %s" % (code, resp))
        result('"result":"allowed"' in srv.log_text() and "benchmarks only" in srv.log_text(),
               "--null-admission: logs each review as allowed and warns at start-up")
    finally:
        srv.proc.terminate()
        srv.proc.wait()


def check_shutdown_delay(binary, workdir):
    """--shutdown-delay: after SIGTERM, unready but still answering (Connection: close) for
    the delay, then drained and exit 0; a second SIGTERM ends the delay at once."""
    srv = Server(binary, workdir, ["--shutdown-delay", "2"])
    try:
        if not result(srv.wait_ready(), "--shutdown-delay: server starts"):
            return
        obj = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                        "leader-workers.yaml"))
        t0 = time.time()
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        code, _ = curl(srv, "GET", "/readyz")
        result(code == 503, "--shutdown-delay: /readyz 503 right after SIGTERM", "code %d" % code)
        code, out = curl(srv, "POST", "/mutate", json.dumps(review(obj, uid="late-1")).encode(),
                         extra=["-i"])
        result(code == 200 and b"connection: close" in out.lower() and b'"late-1"' in out,
               "--shutdown-delay: a review arriving after SIGTERM is answered, with "
               "Connection: close", "code %d" % code)
        rc = srv.proc.wait(timeout=30)
        took = time.time() - t0
        log = srv.log_text()
        result(rc == 0 and 2 <= took < 10 and "still accepting for 2 s" in log and
               "0 request(s) left" in log,
               "--shutdown-delay 2: exits 0 after the delay and the drain (%.1f s)" % took,
               "rc=%s %s" % (rc, log[-300:]))
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()
    srv = Server(binary, workdir, ["--shutdown-delay", "60"])
    try:
        if not result(srv.wait_ready(), "--shutdown-delay 60: server starts"):
            return
        t0 = time.time()
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        srv.proc.send_signal(signal.SIGTERM)
        try:
            rc = srv.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            rc = -1
        result(rc == 0 and time.time() - t0 < 20 and "SIGTERM again" in srv.log_text(),
               "--shutdown-delay: a second SIGTERM ends the delay", "rc=%s" % rc)
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()


def check_metrics(srv):
    code, body = curl(srv, "GET", "/metrics")
    text = body.decode()
    want = ["wmap_webhook_requests_total{endpoint=\"mutate\",kind=\"JobSet.jobset.x-k8s.io\","
            "operation=\"CREATE\",result=\"patched\"}",
            "wmap_webhook_request_duration_seconds_bucket{endpoint=\"mutate\",le=\"0.0001\"}",
            "wmap_webhook_request_duration_seconds_bucket{endpoint=\"mutate\",le=\"0.00025\"}",
            "wmap_webhook_fail_open_total{endpoint=\"mutate\",reason=\"no-definition\"}",
            "wmap_webhook_patches_total", "wmap_webhook_reloads_total{file=\"certificate\"",
            "wmap_webhook_certificate_expiry_timestamp_seconds", "wmap_webhook_ready 1",
            "wmap_webhook_http_responses_total{endpoint=\"mutate\",code=\"413\"}"]
    missing = [w for w in want if w not in text]
    result(code == 200 and not missing, "metrics expose requests, latency, fail-open, "
           "patches, reloads, expiry", "missing: %s" % missing)
    expiry = [l for l in text.splitlines()
              if l.startswith("wmap_webhook_certificate_expiry_timestamp_seconds ")]
    ok = expiry and float(expiry[0].split()[1]) > time.time() + 300 * 86400
    result(bool(ok), "certificate expiry metric is the notAfter of the served certificate")


def served_serial(srv):
    p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % srv.port,
                        "-servername", SNI], input=b"", capture_output=True, timeout=10)
    p2 = subprocess.run(["openssl", "x509", "-noout", "-serial"], input=p.stdout,
                        capture_output=True)
    return p2.stdout.decode().strip()


def check_reloads(srv, workdir, gen):
    js = json.dumps(review(load_fixture(os.path.join(
        ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/created.yaml")))).encode()
    before = served_serial(srv)
    errors = []
    stop = threading.Event()

    def hammer():
        ctx = ssl.create_default_context(cafile=os.path.join(workdir, "ca.crt"))
        while not stop.is_set():
            # a new connection each time: every request does a handshake
            try:
                # the certificate carries IP:127.0.0.1, so the name check holds too
                c = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ctx, timeout=10)
                c.request("POST", "/mutate", js, {"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                if r.status != 200:
                    errors.append(r.status)
                c.close()
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    subprocess.run(["sh", gen, "--out", workdir, "--reuse-ca"], capture_output=True, check=True)
    deadline = time.time() + 5
    after = before
    while time.time() < deadline and after == before:
        time.sleep(0.2)
        after = served_serial(srv)
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join()
    result(after != before and after != "", "new certificate served after the files change",
           "%s -> %s" % (before, after))
    result(not errors, "no failed request during the certificate swap", str(errors[:5]))

    # a bad new pair: the last good one stays, the failure is logged and counted
    with open(os.path.join(workdir, "tls.key.new"), "w") as f:
        f.write("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    os.rename(os.path.join(workdir, "tls.key.new"), os.path.join(workdir, "tls.key"))
    time.sleep(1.0)
    code, body = curl(srv, "GET", "/metrics")
    fails = [l for l in body.decode().splitlines()
             if l.startswith('wmap_webhook_reloads_total{file="certificate",result="failure"}')]
    hc, _ = curl(srv, "GET", "/healthz")
    result(hc == 200 and served_serial(srv) == after, "bad key file: the last good "
           "certificate stays in force")
    result(bool(fails) and int(fails[0].split()[1]) >= 1 and
           "certificate reload failed" in srv.log_text(),
           "bad key file is reported (log line and metric)")
    # put a good pair back for the rest
    subprocess.run(["sh", gen, "--out", workdir, "--reuse-ca"], capture_output=True, check=True)

    # policy reload: good, then bad
    pol = os.path.join(workdir, "policy.yaml")
    with open(pol) as f:
        good = f.read()
    extra = ("---\napiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\n"
             "metadata: {name: late}\nspec:\n  match: {namespaces: [late]}\n"
             "  podTemplate: {labels: {reloaded: \"yes\"}}\n")
    with open(pol + ".new", "w") as f:
        f.write(good + extra)
    os.rename(pol + ".new", pol)
    obj = json.loads(js)["request"]["object"]
    ok = False
    for _ in range(30):
        time.sleep(0.1)
        _, resp = post_review(srv, review(obj, namespace="late"))
        if "reloaded" in json.dumps(patch_of(resp)):
            ok = True
            break
    result(ok, "policy file reloaded when it changes")
    with open(pol + ".new", "w") as f:
        f.write(good + extra + "---\napiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\n"
                "metadata: {name: broken}\nspec:\n  mode: sometimes\n")
    os.rename(pol + ".new", pol)
    time.sleep(0.8)
    _, resp = post_review(srv, review(obj, namespace="late"))
    log = srv.log_text()
    result("reloaded" in json.dumps(patch_of(resp)) and "policy reload failed" in log and
           "must be default, override or require" in log,
           "bad policy file: the last good policies stay in force, the error names the place")


def measure(srv, workdir):
    obj = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                    "created.yaml"))
    body = json.dumps(review(obj)).encode()
    ctx = ssl.create_default_context(cafile=os.path.join(workdir, "ca.crt"))
    ctx.check_hostname = False
    c = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ctx)
    times = []
    for i in range(1000):
        t = time.perf_counter()
        c.request("POST", "/mutate", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        times.append(time.perf_counter() - t)
    c.close()
    times.sort()
    p50, p99 = times[500] * 1000, times[990] * 1000
    rss = 0
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:") or line.startswith("VmHWM:"):
                print("INFO %s" % line.strip())
    print("INFO keep-alive JobSet review (%d bytes), 1000 requests, client-side: "
          "p50 %.3f ms, p99 %.3f ms" % (len(body), p50, p99), flush=True)
    code, m = curl(srv, "GET", "/metrics")
    for l in m.decode().splitlines():
        if l.startswith("wmap_webhook_request_duration_seconds_bucket{endpoint=\"mutate\"") and \
                ("0.0005" in l or "le=\"0.001\"" in l or "+Inf" in l):
            print("INFO %s" % l)
    return rss


def check_timeouts(srv):
    s = socket.create_connection(("127.0.0.1", srv.port))
    t = time.time()
    s.settimeout(10)
    closed = False
    try:
        while s.recv(4096):
            pass   # GnuTLS may say goodbye with an alert record first
        closed = True
    except OSError:
        closed = True
    took = time.time() - t
    s.close()
    result(closed and 2 < took < 6, "an idle connection is closed after the connection "
           "timeout (%.1f s)" % took)


def check_sigterm(srv):
    srv.proc.send_signal(signal.SIGTERM)
    try:
        rc = srv.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        srv.proc.kill()
        rc = -1
    log = srv.log_text()
    result(rc == 0 and "drained" in log, "SIGTERM drains and exits 0", "rc=%s" % rc)
    lines = [json.loads(l) for l in log.splitlines() if l.startswith("{")]
    adm = [l for l in lines if l.get("msg") == "admission" and "uid" in l]
    fields = {"uid", "kind", "object", "operation", "patchBytes", "durationMs"}
    result(bool(adm) and all(fields <= set(l) for l in adm),
           "one JSON log line per review with uid, kind, namespace/name, operation, patch "
           "size, duration")
    result("llama-train" not in json.dumps([l for l in lines if l.get("msg") != "admission"])
           and "nvcr.io" not in log and "image" not in log,
           "object contents never logged")


POLICY = """\
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: prod-priority}
spec:
  match: {namespaces: [prod], kinds: ["JobSet.jobset.x-k8s.io"]}
  mode: override
  enforce: true
  podTemplate: {priorityClassName: high}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: warn-team}
spec:
  match: {namespaces: [staging]}
  mode: override
  validationActions: [Warn]
  podTemplate: {labels: {team: ml}, priorityClassName: batch}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: audit-runtime}
spec:
  match: {namespaces: [research]}
  validationActions: [Audit]
  podTemplate: {runtimeClassName: nvidia}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: deny-audit}
spec:
  match: {namespaces: [secure]}
  mode: override
  validationActions: [Deny, Audit]
  podTemplate: {priorityClassName: high}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: audit-load}
spec:
  match: {namespaces: ["load-*"]}
  validationActions: [Audit]
  podTemplate: {runtimeClassName: nvidia}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: require-priority}
spec:
  match: {namespaces: [checked]}
  mode: require
  validationActions: [Deny]
  podTemplate: {priorityClassName: training-high}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: gpu-limits}
spec:
  match: {namespaces: [gpu], operations: [CREATE, UPDATE]}
  validationActions: [Deny]
  limits:
    workload: {nvidia.com/gpu: 64, pods: 256}
    pod: {nvidia.com/gpu: 8}
"""


def gpu_workload(kind, groups):
    """A PyTorchJob ({"Master": (1, 8), ...}) or a JobSet ({"workers": (6, 8)}) of pods
    with that many GPUs each (as limits, the usual way)."""
    def tmpl(gpus):
        return {"spec": {"containers": [{"name": "c", "image": "t:1", "resources":
                                         {"limits": {"nvidia.com/gpu": gpus}}}]}}
    if kind == "PyTorchJob":
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                "metadata": {"name": "llama"},
                "spec": {"pytorchReplicaSpecs": {
                    k: {"replicas": n, "template": tmpl(g)} for k, (n, g) in groups.items()}}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "small"},
            "spec": {"replicatedJobs": [{"name": k, "replicas": n,
                                         "template": {"spec": {"template": tmpl(g)}}}
                                        for k, (n, g) in groups.items()]}}


def check_require_and_limits(srv):
    """mode: require is never written by /mutate and is judged as written at /validate;
    spec.limits deny a workload over its GPU total with the figure, the limit and the
    components, pass one under it, and judge UPDATE when the policy lists it."""
    js = load_fixture(os.path.join(ROOT, "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/"
                                   "created.yaml"))
    code, m = post_review(srv, review(js, namespace="checked"))
    ops = patch_of(m) if code == 200 else []
    result(code == 200 and ops and "priorityClassName" not in json.dumps(ops),
           "require: /mutate writes nothing of the policy (only wmap's identity labels)",
           json.dumps(ops)[:300])
    fixed = jsonpatch.apply(js, ops)
    code, resp = post_review(srv, review(fixed, namespace="checked"), "/validate")
    r = resp.get("response", {})
    msg = (r.get("status") or {}).get("message", "")
    result(code == 200 and r.get("allowed") is False and
           'policy require-priority: component replicatedjob (instance leader): '
           'priorityClassName must be "training-high" (not set)' in msg,
           "require: /validate denies the object as admitted, which the policy never changed",
           msg[:300])
    good = json.loads(json.dumps(fixed))
    for rj in good["spec"]["replicatedJobs"]:
        rj["template"]["spec"]["template"]["spec"]["priorityClassName"] = "training-high"
    code, resp = post_review(srv, review(good, namespace="checked"), "/validate")
    result(code == 200 and resp["response"]["allowed"] is True,
           "require: a workload written with the value passes")

    d0 = violation_count(srv, "gpu-limits", "deny", "gpu")
    pt = gpu_workload("PyTorchJob", {"Master": (1, 8), "Worker": (11, 8)})
    code, resp = post_review(srv, review(pt, namespace="gpu"), "/validate")
    r = resp.get("response", {})
    msg = (r.get("status") or {}).get("message", "")
    result(code == 200 and r.get("allowed") is False and r["status"].get("code") == 403 and
           "policy gpu-limits: PyTorchJob gpu/llama: 96 nvidia.com/gpu requested (limit 64): "
           "master 1 x 8 + worker 11 x 8" in msg and
           violation_count(srv, "gpu-limits", "deny", "gpu") == d0 + 1,
           "limits: a PyTorchJob of 12 x 8 GPUs under a 64-GPU limit is denied with the "
           "figure, the limit and the components, and counted", msg[:300])
    small = gpu_workload("JobSet", {"workers": (6, 8)})
    code, resp = post_review(srv, review(small, namespace="gpu"), "/validate")
    result(code == 200 and resp["response"]["allowed"] is True and
           "status" not in resp["response"], "limits: a JobSet of 48 GPUs passes")
    scaled = gpu_workload("JobSet", {"workers": (9, 8)})
    code, resp = post_review(srv, review(scaled, op="UPDATE", namespace="gpu"), "/validate")
    r = resp.get("response", {})
    msg = (r.get("status") or {}).get("message", "")
    result(code == 200 and r.get("allowed") is False and
           "72 nvidia.com/gpu requested (limit 64): replicatedjob/workers 9 x 8" in msg,
           "limits: the same JobSet scaled to 72 GPUs is denied on UPDATE", msg[:300])
    wide = gpu_workload("JobSet", {"workers": (2, 16)})
    code, resp = post_review(srv, review(wide, namespace="gpu"), "/validate")
    msg = (resp.get("response", {}).get("status") or {}).get("message", "")
    result(code == 200 and resp["response"]["allowed"] is False and
           "component replicatedjob (instance workers): 16 nvidia.com/gpu per pod (limit 8)"
           in msg, "limits: a pod of 16 GPUs is over the pod limit", msg[:300])
    bad = gpu_workload("JobSet", {"workers": (2, "lots")})
    code, resp = post_review(srv, review(bad, namespace="gpu"), "/validate")
    msg = (resp.get("response", {}).get("status") or {}).get("message", "")
    result(code == 200 and resp["response"]["allowed"] is False and "could not check" in msg and
           'resources.limits["nvidia.com/gpu"]' in msg,
           "limits: a quantity that does not read is denied under Deny, naming its path",
           msg[:300])


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    keep = "--keep" in sys.argv
    plugin = None
    if "--plugin" in sys.argv:
        i = sys.argv.index("--plugin")
        if i + 1 < len(sys.argv) and os.path.isfile(sys.argv[i + 1]) and \
                os.access(sys.argv[i + 1], os.X_OK):
            plugin = os.path.abspath(sys.argv[i + 1])
    workdir = tempfile.mkdtemp(prefix="wmap-webhook-test-")
    gen = os.path.join(ROOT, "certs", "gen-certs.sh")
    subprocess.run(["sh", gen, "--out", workdir], capture_output=True, check=True)
    pol = POLICY
    for s in ("kai", "volcano", "coscheduling", "yunikorn", "kueue", "native"):
        pol += ("---\napiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\n"
                "metadata: {name: gang-%s}\nspec:\n  match: {namespaces: [gang-%s]}\n"
                "  gang: {scheduler: %s, queue: team-q}\n" % (s, s, s))
    with open(os.path.join(workdir, "policy.yaml"), "w") as f:
        f.write(pol)
    os.chdir(ROOT)
    # a generous budget: sanitizer builds are slow; the budget test uses ?timeout=
    srv = Server(binary, workdir, ["--connection-timeout", "3", "--request-budget-ms", "5000"])
    try:
        if not result(srv.wait_ready(), "server starts and becomes ready over TLS"):
            print(srv.log_text())
            return 1
        for p in ("/healthz", "/readyz"):
            code, _ = curl(srv, "GET", p)
            result(code == 200, "GET %s -> 200" % p)
        files = sorted(f for f in glob.glob(os.path.join(ROOT, "tests/fixtures/*/*.yaml"))
                       if "/bad/" not in f)
        for f in files:
            check_fixture(srv, f)
        if plugin:
            check_offline(srv, plugin)
        else:
            print("SKIP kubectl wmap mutate comparison (no --plugin)")
        check_schedulers(srv)
        check_semantics(srv)
        check_actions(srv)
        check_require_and_limits(srv)
        check_violation_series(srv, workdir)
        check_own_objects(srv)
        check_malformed(srv)
        check_limits(srv, binary, workdir)
        check_cut_reviews(srv)
        check_definitions(binary, workdir)
        check_null_admission(binary, workdir)
        check_shutdown_delay(binary, workdir)
        check_metrics(srv)
        check_timeouts(srv)
        check_reloads(srv, workdir, gen)
        measure(srv, workdir)
        check_sigterm(srv)
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("INFO kept %s" % workdir)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
