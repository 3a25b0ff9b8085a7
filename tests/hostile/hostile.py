#!/usr/bin/env python3
"""Hostile and broken clients against a real wmap-webhook over TLS on 127.0.0.1.

usage: hostile.py WEBHOOK_BINARY [--keep]

A CA and an ECDSA P-256 serving certificate are made with the openssl CLI in a temporary
folder; the server runs with --threads 2. Every check prints PASS/FAIL (WARN for findings
that are not failures) with its timings; the run ends with "N passed, N failed" and exits
1 when anything failed. All traffic goes to 127.0.0.1 and every loop is bounded; the whole
run takes well under a minute. See THREAT-MODEL.md for what is tested and why."""

import base64
import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SNI = "wmap-webhook.wmap-system.svc"
MARKER = "hostile-secret-7f3a9c"   # planted in object contents; must never reach the log
# Every malformed review is answered within this (fuzz.mk raises it for ASan builds).
LIMIT_MS = int(os.environ.get("HOSTILE_LIMIT_MS", "100"))

passed = failed = 0


def result(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    detail = " ".join(str(detail).split())
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail else ""),
          flush=True)
    return ok


def warn(name, detail):
    print("WARN %s: %s" % (name, detail), flush=True)


# ---- certificates (openssl CLI) ------------------------------------------------------------

def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, **kw)


def make_ca(d):
    sh("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", d + "/ca.key")
    sh("openssl", "req", "-x509", "-new", "-key", d + "/ca.key", "-sha256", "-days", "2",
       "-subj", "/CN=wmap-hostile-ca", "-out", d + "/ca.crt")


def make_cert(d, name, serial):
    """An ECDSA leaf signed by the CA, written as name.crt/name.key; returns the serial."""
    sh("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "%s/%s.key" % (d, name))
    sh("openssl", "req", "-new", "-key", "%s/%s.key" % (d, name), "-subj", "/CN=" + SNI,
       "-out", "%s/%s.csr" % (d, name))
    with open(d + "/ext.cnf", "w") as f:
        f.write("subjectAltName=DNS:%s,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n" % SNI)
    sh("openssl", "x509", "-req", "-in", "%s/%s.csr" % (d, name), "-CA", d + "/ca.crt",
       "-CAkey", d + "/ca.key", "-set_serial", str(serial), "-days", "2", "-sha256",
       "-extfile", d + "/ext.cnf", "-out", "%s/%s.crt" % (d, name))
    return serial


# ---- the server ----------------------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self, binary, d, extra=()):
        self.d = d
        self.port = free_port()
        self.logpath = os.path.join(d, "webhook-%d.log" % self.port)
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen(
            [binary, "--tls-cert", d + "/tls.crt", "--tls-key", d + "/tls.key", "--port",
             str(self.port), "--policy", d + "/policy.yaml", "--threads", "2",
             "--reload-interval-ms", "100", "--connection-timeout", "30",
             "--drain-timeout", "10"] + list(extra),
            stdout=self.log, stderr=self.log)

    def ctx(self):
        c = ssl.create_default_context(cafile=self.d + "/ca.crt")
        return c

    def conn(self, timeout=10):
        c = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                        context=self.ctx())
        # SNI and hostname check on the service name, as the API server does.
        c.host = SNI
        c._create_connection = lambda addr, timeout=None, source_address=None: \
            socket.create_connection(("127.0.0.1", self.port), timeout)
        return c

    def wait_ready(self, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                return False
            try:
                c = self.conn(2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    c.close()
                    return True
                c.close()
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.05)
        return False

    def log_text(self):
        self.log.flush()
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def alive(self):
        try:
            c = self.conn(3)
            c.request("GET", "/healthz")
            ok = c.getresponse().status == 200
            c.close()
            return ok and self.proc.poll() is None
        except (OSError, http.client.HTTPException):
            return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Client:
    """One keep-alive connection; reconnects when the server closed it."""

    def __init__(self, srv):
        self.srv = srv
        self.c = None

    def post(self, body, path="/mutate", headers=None):
        """(status, body, seconds from the first request byte to the whole response)."""
        for attempt in range(2):
            if self.c is None:
                self.c = self.srv.conn()
                self.c.connect()
            try:
                h = {"Content-Type": "application/json"}
                h.update(headers or {})
                t0 = time.perf_counter()
                self.c.request("POST", path, body=body, headers=h)
                r = self.c.getresponse()
                data = r.read()
                dt = time.perf_counter() - t0
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.status, data, dt
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt:
                    raise
        raise RuntimeError("unreachable")

    def close(self):
        if self.c:
            self.c.close()
        self.c = None


# ---- reviews -------------------------------------------------------------------------------

def review(obj, uid="hostile-1", op="CREATE", ns="team-a"):
    api = obj.get("apiVersion", "")
    group, version = api.split("/", 1) if "/" in api else ("", api)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": group, "version": version, "kind": obj["kind"]},
                        "resource": {"group": group, "version": version, "resource": obj["kind"].lower() + "s"},
                        "name": obj["metadata"]["name"], "namespace": ns, "operation": op,
                        "userInfo": {"username": "hostile"}, "object": obj, "oldObject": None,
                        "dryRun": False}}


def jobset():
    """A JobSet with the marker planted in labels, annotations, env and args."""
    tmpl = {"metadata": {"labels": {"app": "train", "secret": MARKER}},
            "spec": {"containers": [{"name": "w", "image": "img:1", "args": ["--token=" + MARKER],
                                     "env": [{"name": "TOKEN", "value": MARKER}],
                                     "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "train", "namespace": "team-a",
                         "annotations": {"note": MARKER}},
            "spec": {"replicatedJobs": [
                {"name": "leader", "replicas": 1,
                 "template": {"spec": {"parallelism": 1, "completions": 1, "template": tmpl}}},
                {"name": "workers", "replicas": 2,
                 "template": {"spec": {"parallelism": 4, "completions": 4, "template": tmpl}}}]}}


def dumps(v):
    return json.dumps(v, separators=(",", ":")).encode()


def response_ok(status, body, uid=None):
    """400 with a Status, or 200 with an AdmissionReview that allows (and echoes uid)."""
    if status == 400:
        return True
    if status != 200:
        return False
    try:
        r = json.loads(body)["response"]
    except (ValueError, KeyError, TypeError):
        return False
    return r.get("allowed") is True and (uid is None or r.get("uid") == uid)


def patch_of(body):
    r = json.loads(body)["response"]
    return json.loads(base64.b64decode(r["patch"])) if "patch" in r else []


def percentile(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] if v else float("nan")


def latencies(srv, body, n):
    cl = Client(srv)
    out = []
    for _ in range(n):
        st, _, dt = cl.post(body)
        if st == 200:
            out.append(dt)
    cl.close()
    return out


def within_2x(name, base, under, extra=""):
    """Median latency under attack against twice the baseline median (plus 1 ms for timer and
    scheduling noise on a shared 2-core machine)."""
    b, u = statistics.median(base), statistics.median(under)
    ok = len(under) > 0 and u <= 2 * b + 0.001
    return result(ok, name, "median %.2f ms (baseline %.2f ms), p95 %.2f ms%s" %
                  (u * 1e3, b * 1e3, percentile(under, 0.95) * 1e3, extra))


# ---- the checks ----------------------------------------------------------------------------

# Bodies known to cost more than the limit before wmap's time budget can act (THREAT-MODEL.md,
# "Known limits"). Empty since reviews are read with caps (wmap_admission_parse): the
# 400,000-label body that used to cost 300-800 ms is cut at 16,384 members a map.
KNOWN_SLOW = set()


def server_cpu(srv):
    """User + system CPU seconds of the server so far (/proc, clock ticks)."""
    try:
        f = open("/proc/%d/stat" % srv.proc.pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def malformed(srv):
    good = review(jobset())
    text = dumps(good)
    cl = Client(srv)
    worst = [0.0, ""]
    bad = []

    known = []

    def run(name, body, uid=None, headers=None, limit_known=False):
        cpu0 = server_cpu(srv)
        try:
            st, data, dt = cl.post(body, headers=headers)
        except (OSError, http.client.HTTPException) as e:
            bad.append("%s: %s" % (name, e))
            return None
        cpu = server_cpu(srv) - cpu0
        if dt > worst[0]:
            worst[0], worst[1] = dt, name
        # On a loaded machine wall time includes waiting for a core: an answer over the limit
        # counts as slow only when the server also spent that long on the CPU (10 ms ticks).
        slow = dt * 1e3 > LIMIT_MS and cpu * 1e3 > LIMIT_MS
        if not response_ok(st, data, uid):
            bad.append("%s: HTTP %d in %.1f ms: %s" % (name, st, dt * 1e3, data[:120]))
        elif slow and limit_known and not os.environ.get("HOSTILE_STRICT"):
            known.append("%s: %.0f ms wall, %.0f ms server CPU" % (name, dt * 1e3, cpu * 1e3))
        elif slow:
            bad.append("%s: %.0f ms wall, %.0f ms server CPU (limit %d ms)" %
                       (name, dt * 1e3, cpu * 1e3, LIMIT_MS))
        return st

    # Truncation at many offsets (every byte of the first 64, then ~300 spread out).
    offsets = sorted(set(list(range(0, 64)) + list(range(64, len(text), max(1, len(text) // 300)))))
    n400 = sum(1 for o in offsets if run("truncated at %d" % o, text[:o]) == 400)
    result(not bad and n400 == len(offsets), "malformed: %d truncations of a %d-byte review answered 400"
           % (len(offsets), len(text)), "; ".join(bad[:3]))
    bad.clear()

    deep_obj = b'{"a":' * 10000 + b"1" + b"}" * 10000
    deep_arr = b"[" * 10000 + b"]" * 10000
    deep_in_object = text.replace(b'"spec":{', b'"deep":' + b"[" * 1500 + b"]" * 1500 + b',"spec":{', 1)
    flat = dict(good)
    flat["request"] = dict(good["request"], object=dict(jobset(), extra=list(range(65000))))
    cases = [
        ("nesting 10,000 objects deep", deep_obj, None),
        ("nesting 10,000 arrays deep", deep_arr, None),
        ("1,500 levels inside request.object", deep_in_object, "hostile-1"),
        ("a 65,000-element array in the object", dumps(flat), "hostile-1"),
        ("invalid UTF-8 in a label", text.replace(b'"app":"train"', b'"app":"tr\xff\xfein"'), None),
        ("overlong UTF-8 encoding", text.replace(b'"app":"train"', b'"app":"\xc0\xaf"'), None),
        ("lone surrogate escape", text.replace(b'"app":"train"', b'"app":"\\ud800"'), None),
        ("a raw NUL byte", text.replace(b'"app":"train"', b'"app":"tr\x00in"'), None),
        ("an escaped NUL (\\u0000)", text.replace(b'"app":"train"', b'"app":"tr\\u0000in"'), None),
        ("a NUL in a key", text.replace(b'"app":"train"', b'"a\\u0000pp":"train"'), None),
        ("NaN literal", text.replace(b'"replicas":2', b'"replicas":NaN'), None),
        ("1e999", text.replace(b'"replicas":2', b'"replicas":1e999'), None),
        ("an integer past 64 bits", text.replace(b'"replicas":2', b'"replicas":99999999999999999999999'), None),
        ("replicas -1", text.replace(b'"replicas":2', b'"replicas":-1'), "hostile-1"),
        ("replicas 2^63-1", text.replace(b'"replicas":2', b'"replicas":9223372036854775807'), "hostile-1"),
        ("duplicate keys", text.replace(b'"name":"train",', b'"name":"train","name":"other",', 1), "hostile-1"),
        ("duplicate uid", text.replace(b'"uid":"hostile-1"', b'"uid":"hostile-1","uid":"hostile-2"'), None),
        ("missing request.uid", dumps(dict(good, request={k: v for k, v in good["request"].items() if k != "uid"})), None),
        ("another API version", dumps(dict(good, apiVersion="admission.k8s.io/v1beta1")), None),
        ("empty body", b"", None),
        ("whitespace only", b" \n\t ", None),
        ("a JSON string", b'"AdmissionReview"', None),
        ("trailing garbage", text + b"}{", None),
        ("two reviews", text + text, None),
        ("a UTF-8 BOM", b"\xef\xbb\xbf" + text, None),
        ("UTF-16", text.decode().encode("utf-16"), None),
        ("unknown kind", text.replace(b'"kind":"JobSet"', b'"kind":"NoSuchKind"'), "hostile-1"),
        ("a 100 KB uid", text.replace(b'"uid":"hostile-1"', b'"uid":"' + b"u" * 100000 + b'"'), None),
        ("a 1 MB label value", text.replace(b'"app":"train"', b'"app":"' + b"v" * (1 << 20) + b'"'), "hostile-1"),
        ("400,000 label keys (200,000 per template)", text.replace(b'"app":"train"', b",".join(b'"k%d":"v"' % i for i in range(200000))), "hostile-1"),
        ("a quantity 1e400Gi", text.replace(b'"nvidia.com/gpu":"8"', b'"nvidia.com/gpu":"1e400Gi"'), "hostile-1"),
        ("a name of 10,000 characters", text.replace(b'"name":"train"', b'"name":"' + b"n" * 10000 + b'"', 1), "hostile-1"),
        ("gzip content-encoding claimed", text, None),
    ]
    for name, body, uid in cases:
        hdr = {"Content-Encoding": "gzip"} if "gzip" in name else None
        run(name, body, uid, hdr, limit_known=name in KNOWN_SLOW)
    for k in known:
        warn("malformed: known limit (see THREAT-MODEL.md; HOSTILE_STRICT=1 fails on it)", k)
    result(not bad, "malformed: %d hostile bodies (depth 10,000, 65,000 elements, bad UTF-8, NUL, "
           "NaN, duplicate keys, missing uid, ...) each answered 400 or allowed" % len(cases),
           "; ".join(bad[:4]))
    bad.clear()

    # Wrong types at every field of the request (and the envelope).
    kinds = [None, 1, -1, 1.5, "s", "", True, [], {}, [1], {"a": 1}]
    paths = []

    def walk(v, p):
        paths.append(p)
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, p + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v[:2]):
                walk(x, p + [i])

    walk(good, [])
    paths = [p for p in paths if p][:160]
    n = 0
    for p in paths:
        for k in kinds:
            doc = json.loads(text)
            cur = doc
            for t in p[:-1]:
                cur = cur[t]
            cur[p[-1]] = k
            run("%s = %r" % ("/".join(map(str, p)), k), dumps(doc))
            n += 1
    result(not bad, "malformed: wrong types at %d fields x %d types (%d reviews) each answered 400 or allowed"
           % (len(paths), len(kinds), n), "; ".join(bad[:4]))
    cl.close()
    result(srv.alive(), "malformed: server alive after all of it; slowest answer %.1f ms (%s)"
           % (worst[0] * 1e3, worst[1][:60]))


def slow_and_idle(srv, base):
    body = dumps(review(jobset()))
    stop = threading.Event()
    socks = []

    # 40 slow clients: a byte a second of a valid request, for the whole measurement.
    req = (b"POST /mutate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % (SNI.encode(), len(body))) + body

    def slow():
        try:
            raw = socket.create_connection(("127.0.0.1", srv.port), 5)
            s = srv.ctx().wrap_socket(raw, server_hostname=SNI)
            socks.append(s)
            for b in req:
                if stop.wait(1.0):
                    break
                s.send(bytes([b]))
        except OSError:
            pass

    threads = [threading.Thread(target=slow, daemon=True) for _ in range(40)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    under = latencies(srv, body, 150)
    within_2x("slow clients: 40 connections sending a byte a second", base, under)

    # 300 idle TCP connections that never start TLS, and 150 idle after the handshake.
    for _ in range(300):
        try:
            socks.append(socket.create_connection(("127.0.0.1", srv.port), 2))
        except OSError:
            break
    n_tcp = len(socks)
    for _ in range(150):
        try:
            raw = socket.create_connection(("127.0.0.1", srv.port), 2)
            socks.append(srv.ctx().wrap_socket(raw, server_hostname=SNI))
        except OSError:
            break
    under = latencies(srv, body, 150)
    within_2x("idle connections: %d plain TCP (no handshake) + %d idle TLS" %
              (n_tcp - 40, len(socks) - n_tcp), base, under)
    stop.set()
    for s in socks:
        try:
            s.close()
        except OSError:
            pass
    for t in threads:
        t.join(3)


def oversize(srv):
    # Content-Length over the cap: 413 before the body is sent.
    t0 = time.perf_counter()
    raw = socket.create_connection(("127.0.0.1", srv.port), 5)
    s = srv.ctx().wrap_socket(raw, server_hostname=SNI)
    s.send(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: 2147483648\r\n\r\n")
    s.settimeout(5)
    head = b""
    try:
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
    except OSError:
        pass
    s.close()
    dt = time.perf_counter() - t0
    result(head.startswith(b"HTTP/1.1 413"), "oversize: Content-Length 2 GiB refused with 413 "
           "before any body byte (%.1f ms)" % (dt * 1e3), head[:40].decode(errors="replace"))

    # Chunked body crossing the 7 MiB cap.
    c = srv.conn(20)
    big = b"[" + b"1," * (4 << 20)
    t0 = time.perf_counter()
    try:
        c.request("POST", "/mutate", body=iter([big[i:i + 65536] for i in range(0, len(big), 65536)]),
                  headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
                  encode_chunked=True)
        st = c.getresponse().status
    except (OSError, http.client.HTTPException) as e:
        st = "error %s" % e
    c.close()
    result(st == 413, "oversize: an 8 MiB chunked body answered 413 (%.0f ms)" %
           ((time.perf_counter() - t0) * 1e3), str(st))
    result(srv.alive(), "oversize: server alive")


def flood(srv, base):
    body = dumps(review(jobset()))
    n = 100
    times = [None] * n
    errors = []
    start = threading.Barrier(n + 1)

    def one(i):
        start.wait()
        t0 = time.perf_counter()
        try:
            c = srv.conn(10)
            c.request("POST", "/mutate", body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            c.close()
            if r.status == 200:
                times[i] = time.perf_counter() - t0
            else:
                errors.append(r.status)
        except (OSError, http.client.HTTPException) as e:
            errors.append(str(e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    legit = []
    lt = threading.Thread(target=lambda: legit.extend(latencies(srv, body, 100)))
    t0 = time.perf_counter()
    start.wait()
    lt.start()
    for t in threads:
        t.join(20)
    total = time.perf_counter() - t0
    lt.join(20)
    served = [t for t in times if t is not None]
    result(len(served) == n, "flood: %d new TLS connections at once, all served in %.2f s "
           "(slowest %.0f ms)" % (n, total, max(served or [0]) * 1e3), str(errors[:3]))
    # The legitimate client shares 2 cores with 100 handshakes and the Python clients doing
    # them: the 2x bound is checked on the median.
    within_2x("flood: keep-alive client during the flood", base, legit)


def reloads(srv, d):
    body = dumps(review(jobset()))
    cl = Client(srv)

    def has_label(key):
        st, data, _ = cl.post(body)
        return st == 200 and any(op["path"].endswith("/labels/" + key) or
                                 (isinstance(op.get("value"), dict) and key in op["value"])
                                 for op in patch_of(data))

    ok0 = has_label("policy-one")
    with open(d + "/policy.yaml.tmp", "w") as f:
        f.write("apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: broken}\n"
                "spec: {podTemplate: {labels: [not, a, map]}, unknownField: 1}\n")
    os.replace(d + "/policy.yaml.tmp", d + "/policy.yaml")
    time.sleep(0.6)
    kept = has_label("policy-one")
    log = srv.log_text()
    reported = "policy" in log and ("failure" in log or "error" in log)
    result(ok0 and kept and reported and srv.alive(),
           "reload: an invalid policy file keeps the last good policies (and is logged)",
           "before %s after %s logged %s" % (ok0, kept, reported))

    with open(d + "/policy.yaml.tmp", "w") as f:
        f.write(POLICY.replace("policy-one", "policy-two"))
    os.replace(d + "/policy.yaml.tmp", d + "/policy.yaml")
    t0 = time.time()
    seen = False
    while time.time() - t0 < 3 and not seen:
        seen = has_label("policy-two")
        time.sleep(0.05)
    result(seen, "reload: a fixed policy file is in force %.2f s after it changed" % (time.time() - t0))

    # A truncated certificate is refused; the old one stays served.
    shutil.copy(d + "/tls.crt", d + "/good.crt")
    with open(d + "/tls.crt", "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nMIIB\n")
    time.sleep(0.5)
    try:
        st, _, _ = Client(srv).post(body)
    except (OSError, http.client.HTTPException) as e:
        st = str(e)
    shutil.copy(d + "/good.crt", d + "/tls.crt")
    result(st == 200, "reload: a truncated certificate file keeps the last good pair", str(st))
    cl.close()


def peer_der(srv):
    raw = socket.create_connection(("127.0.0.1", srv.port), 5)
    s = srv.ctx().wrap_socket(raw, server_hostname=SNI)
    der = s.getpeercert(binary_form=True)
    s.close()
    return der


def pem_der(path):
    return ssl.PEM_cert_to_DER_cert(open(path).read())


def rotation(srv, d):
    body = dumps(review(jobset()))
    make_cert(d, "next", 4242)
    stop = threading.Event()
    stats = {"ok": 0, "fail": []}

    def load(new_conn):
        cl = Client(srv)
        while not stop.is_set():
            try:
                if new_conn:
                    cl.close()
                st, _, _ = cl.post(body)
                if st == 200:
                    stats["ok"] += 1
                else:
                    stats["fail"].append(st)
            except (OSError, http.client.HTTPException, ssl.SSLError) as e:
                stats["fail"].append(str(e))
        cl.close()

    threads = [threading.Thread(target=load, args=(i % 2 == 0,)) for i in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    old, new = pem_der(d + "/tls.crt"), pem_der(d + "/next.crt")
    before = peer_der(srv) == old
    # Key first, then certificate, each by an atomic rename (what a kubelet secret update does
    # through its ..data symlink swap, in two steps here to be harsher).
    os.replace(d + "/next.key", d + "/tls.key")
    os.replace(d + "/next.crt", d + "/tls.crt")
    t0 = time.time()
    served = False
    while time.time() - t0 < 3 and not served:
        served = peer_der(srv) == new
        if not served:
            time.sleep(0.02)
    took = time.time() - t0
    loaded = re.findall(r'"time":"[^"]*T(\d+):(\d+):([\d.]+)Z"[^\n]*serving certificate loaded',
                        srv.log_text())
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join(5)
    result(before and served and took <= 1.0, "rotation: new certificate served %.2f s after the "
           "files changed (reload interval 100 ms; %d loads logged)" % (took, len(loaded)))
    result(not stats["fail"] and stats["ok"] > 0, "rotation: %d requests during the swap, %d failed"
           % (stats["ok"], len(stats["fail"])), str(stats["fail"][:3]))


def tls_policy(srv, d):
    def s_client(*args):
        p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % srv.port,
                            "-servername", SNI, "-CAfile", d + "/ca.crt"] + list(args),
                           input=b"Q\n", capture_output=True, timeout=10)
        out = p.stdout.decode(errors="replace")
        m = re.search(r"Protocol\s*:\s*(\S+)", out) or re.search(r"New, (\S+), Cipher", out)
        cipher = re.search(r"Cipher\s*(?:is|:)\s*(\S+)", out)
        handshake = cipher is not None and cipher.group(1) not in ("0000", "(NONE)")
        return handshake, (m.group(1) if m else "?"), (cipher.group(1) if cipher else "?")

    for v in ("-tls1", "-tls1_1"):
        ok, _, _ = s_client(v)
        result(not ok, "tls: %s handshake refused" % v)
    ok12, _, c12 = s_client("-tls1_2")
    ok13, _, c13 = s_client("-tls1_3")
    result(ok12 and ok13, "tls: TLS 1.2 (%s) and 1.3 (%s) accepted" % (c12, c13))
    legacy = []
    for c in ("RC4-SHA", "DES-CBC3-SHA", "NULL-SHA", "EXP-RC4-MD5", "AECDH-AES128-SHA", "ADH-AES128-SHA"):
        ok, _, _ = s_client("-tls1_2", "-cipher", c + ":@SECLEVEL=0")
        if ok:
            legacy.append(c)
    result(not legacy, "tls: no RC4, 3DES, NULL, export or anonymous suite", ",".join(legacy))
    cbc = [c for c in ("ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES128-SHA256")
           if s_client("-tls1_2", "-cipher", c)[0]]
    result(not cbc, "tls: no CBC suite on TLS 1.2 (AEAD only)", ",".join(cbc))
    aead = [c for c in ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
                        "ECDHE-ECDSA-CHACHA20-POLY1305") if s_client("-tls1_2", "-cipher", c)[0]]
    result(len(aead) == 3, "tls: TLS 1.2 AES-GCM and ChaCha20-Poly1305 suites accepted",
           ",".join(aead))

    # Plaintext on the TLS port gets no HTTP answer; the process listens on one port only.
    s = socket.create_connection(("127.0.0.1", srv.port), 5)
    s.settimeout(3)
    s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    try:
        got = s.recv(100)
    except OSError:
        got = b""
    s.close()
    result(not got.startswith(b"HTTP/"), "tls: plaintext HTTP on the port gets no HTTP answer",
           repr(got[:40]))
    ports = listening_ports(srv.proc.pid)
    result(ports == {srv.port}, "tls: the process listens on port %d only" % srv.port, str(sorted(ports)))


def listening_ports(pid):
    """Listening TCP ports owned by pid, from /proc (no ss or netstat needed)."""
    inodes = set()
    for fd in glob.glob("/proc/%d/fd/*" % pid):
        try:
            t = os.readlink(fd)
        except OSError:
            continue
        if t.startswith("socket:["):
            inodes.add(t[8:-1])
    ports = set()
    for f in ("/proc/%d/net/tcp" % pid, "/proc/%d/net/tcp6" % pid):
        try:
            lines = open(f).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:
                ports.add(int(parts[1].split(":")[1], 16))
    return ports


def sigterm(binary, d):
    srv = Server(binary, d)
    if not result(srv.wait_ready(), "sigterm: a fresh server is ready"):
        srv.stop()
        return
    body = dumps(review(jobset()))
    stop = threading.Event()
    stats = {"ok": 0, "bad": []}

    def load():
        cl = Client(srv)
        while not stop.is_set():
            try:
                st, data, _ = cl.post(body)
                if st == 200:
                    stats["ok"] += 1
                else:
                    stats["bad"].append(st)
            except (OSError, http.client.HTTPException, ssl.SSLError):
                break   # refused or closed after the drain: a clean end for this client
        cl.close()

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    # An in-flight request: headers and half the body now, the rest after SIGTERM.
    raw = socket.create_connection(("127.0.0.1", srv.port), 10)
    s = srv.ctx().wrap_socket(raw, server_hostname=SNI)
    s.send(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2])
    time.sleep(0.3)
    t0 = time.time()
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    refused = False
    try:
        c = socket.create_connection(("127.0.0.1", srv.port), 2)
        c.close()
    except ConnectionRefusedError:
        refused = True
    except OSError:
        refused = True
    s.send(body[len(body) // 2:])
    s.settimeout(10)
    resp = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            resp += chunk
            if b"\r\n\r\n" in resp:
                head, _, rest = resp.partition(b"\r\n\r\n")
                m = re.search(rb"Content-Length: (\d+)", head, re.I)
                if m and len(rest) >= int(m.group(1)):
                    break
    except OSError:
        pass
    s.close()
    stop.set()
    for t in threads:
        t.join(5)
    try:
        code = srv.proc.wait(15)
    except subprocess.TimeoutExpired:
        code = "still running"
    took = time.time() - t0
    result(resp.startswith(b"HTTP/1.1 200") and b'"allowed":true' in resp,
           "sigterm: the request in flight at SIGTERM got its full answer", resp[:60].decode(errors="replace"))
    result(refused, "sigterm: new connections refused while draining")
    result(not stats["bad"] and stats["ok"] > 0, "sigterm: %d keep-alive requests under load, none "
           "answered with an error" % stats["ok"], str(stats["bad"][:3]))
    result(code == 0, "sigterm: exit status 0 after %.2f s" % took, str(code))
    srv.log.close()
    return srv


def bad_definitions(binary, d):
    """Definitions are read once at start: a broken file stops the start, loudly."""
    with open(d + "/bad-def.yaml", "w") as f:
        f.write("apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: x}\n"
                "spec: {structureDefinition: {rootComponent: {name: r, kind: {group: g, "
                "version: v1, kind: K}, specDefinition: {podTemplateSpecPath: '.spec |= 1'}}}}\n")
    srv = Server(binary, d, ["--definitions", d + "/bad-def.yaml"])
    try:
        code = srv.proc.wait(20)
    except subprocess.TimeoutExpired:
        code = None
    log = srv.log_text()
    srv.stop()
    result(code not in (None, 0) and "bad-def.yaml" in log,
           "definitions: a broken --definitions file stops the start (exit %s) naming the file" % code,
           log[-200:])


def connection_limit(binary, d):
    """Idle connections past --max-connections: legitimate clients wait until the idle
    timeout frees slots (a known limit: see THREAT-MODEL.md)."""
    srv = Server(binary, d, ["--max-connections", "60", "--connection-timeout", "2"])
    if not result(srv.wait_ready(), "connection limit: a server with --max-connections 60 is ready"):
        srv.stop()
        return
    socks = []
    for _ in range(80):
        try:
            socks.append(socket.create_connection(("127.0.0.1", srv.port), 2))
        except OSError:
            break
    time.sleep(0.3)
    body = dumps(review(jobset()))
    t0 = time.time()
    blocked = False
    try:
        c = srv.conn(1)
        c.request("POST", "/mutate", body=body, headers={"Content-Type": "application/json"})
        c.getresponse().read()
        c.close()
    except (OSError, http.client.HTTPException):
        blocked = True
    # The idle timeout (2 s here, 120 s by default) closes the attackers' connections.
    served = None
    while time.time() - t0 < 8 and served is None:
        try:
            c = srv.conn(2)
            c.request("POST", "/mutate", body=body, headers={"Content-Type": "application/json"})
            if c.getresponse().status == 200:
                served = time.time() - t0
            c.close()
        except (OSError, http.client.HTTPException):
            time.sleep(0.2)
    if blocked:
        warn("connection limit", "%d idle TCP connections over --max-connections 60 locked a "
             "legitimate client out until the idle timeout freed them (served again after %s s)"
             % (len(socks), "%.1f" % served if served else "never"))
    result(served is not None and srv.alive(), "connection limit: served again once the idle "
           "timeout closed the idle connections (%.1f s)" % (served or -1))
    for s in socks:
        s.close()
    srv.stop()


POLICY = """apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: team}
spec:
  match: {namespaces: ["team-*"]}
  podTemplate: {labels: {policy-one: "yes"}}
"""


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    keep = "--keep" in sys.argv
    d = tempfile.mkdtemp(prefix="wmap-hostile-")
    t_start = time.time()
    srv = None
    try:
        make_ca(d)
        make_cert(d, "tls", 1001)
        with open(d + "/policy.yaml", "w") as f:
            f.write(POLICY)
        srv = Server(binary, d)
        if not result(srv.wait_ready(), "server ready on 127.0.0.1:%d" % srv.port,
                      srv.log_text()[-300:]):
            return 1
        body = dumps(review(jobset()))
        base = latencies(srv, body, 200)
        print("baseline: keep-alive JobSet review median %.2f ms, p95 %.2f ms" %
              (statistics.median(base) * 1e3, percentile(base, 0.95) * 1e3), flush=True)

        malformed(srv)
        slow_and_idle(srv, base)
        oversize(srv)
        flood(srv, base)
        reloads(srv, d)
        rotation(srv, d)
        tls_policy(srv, d)

        log = srv.log_text()
        result(MARKER not in log, "logs: object contents never logged (%d lines grepped for the planted "
               "marker)" % log.count("\n"))
        result(srv.alive(), "server alive after every hostile client")
        srv.stop()
        log = srv.log_text() if not srv.log.closed else open(srv.logpath, errors="replace").read()
        result(not re.search(r"AddressSanitizer|runtime error|LeakSanitizer", log),
               "no sanitizer report in the server log")

        bad_definitions(binary, d)
        connection_limit(binary, d)
        s2 = sigterm(binary, d)
        if s2:
            log2 = open(s2.logpath, errors="replace").read()
            result(MARKER not in log2, "logs: nothing planted logged during the drain either")
    finally:
        if srv and srv.proc.poll() is None:
            srv.proc.kill()
        if keep:
            print("kept", d)
        else:
            shutil.rmtree(d, ignore_errors=True)
    print("%d passed, %d failed (%.1f s)" % (passed, failed, time.time() - t_start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
