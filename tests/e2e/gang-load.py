#!/usr/bin/env python3
"""Creates N Trainers at a steady rate and times each one from its create request to its
group object in place, as seen on a watch of the group collection.

  gang-load.py URL TOKEN CA NAMESPACE TEMPLATE N RATE GROUP_PATH [PREFIX]

TEMPLATE is the Trainer as JSON (its name is replaced: PREFIX-0000 ...); GROUP_PATH is the
group collection across namespaces (/apis/scheduling.volcano.sh/v1beta1/podgroups). Prints one
JSON line: created, grouped, create errors, p50/p99/max in ms, and the achieved rate. Exits 1
when a workload is left without its group after 60 s past the last create."""
import http.client
import json
import ssl
import sys
import threading
import time
import urllib.parse

url, token, ca, ns, template, n, rate, gpath = sys.argv[1:9]
prefix = sys.argv[9] if len(sys.argv) > 9 else "load"
n, rate = int(n), float(rate)
u = urllib.parse.urlparse(url)
ctx = ssl.create_default_context(cafile=ca)
hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
body = json.load(open(template))
sent, seen = {}, {}
lock = threading.Lock()
stop = threading.Event()


def conn():
    return http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=60)


def watch():
    # list for the resourceVersion, then watch; every ADDED/MODIFIED name is noted
    c = conn()
    c.request("GET", gpath, headers=hdr)
    r = c.getresponse()
    lst = json.loads(r.read())
    rv = lst["metadata"]["resourceVersion"]
    now = time.monotonic()
    with lock:
        for it in lst.get("items", []):
            seen.setdefault(it["metadata"]["name"], now)
    while not stop.is_set():
        try:
            c = conn()
            c.request("GET", gpath + "?watch=1&resourceVersion=%s&timeoutSeconds=30" % rv, headers=hdr)
            r = c.getresponse()
        except Exception:
            time.sleep(0.2)
            continue
        while not stop.is_set():
            try:
                line = r.readline()
                ev = json.loads(line) if line else None
            except Exception:
                ev = None  # a cut event: watch again from the last resourceVersion
            if not ev:
                break
            obj = ev.get("object", {})
            rv = obj.get("metadata", {}).get("resourceVersion", rv)
            if ev.get("type") in ("ADDED", "MODIFIED"):
                with lock:
                    seen.setdefault(obj["metadata"]["name"], time.monotonic())


t = threading.Thread(target=watch, daemon=True)
t.start()
time.sleep(0.5)
errors = 0
c = conn()
t0 = time.monotonic()
for i in range(n):
    due = t0 + i / rate
    d = due - time.monotonic()
    if d > 0:
        time.sleep(d)
    name = "%s-%04d" % (prefix, i)
    body["metadata"]["name"] = name
    body["metadata"]["namespace"] = ns
    start = time.monotonic()
    try:
        c.request("POST", "/apis/example.com/v1/namespaces/%s/trainers" % ns, json.dumps(body), hdr)
        r = c.getresponse()
        r.read()
        ok = r.status == 201
    except Exception:
        c = conn()
        ok = False
    if ok:
        sent[name] = start
    else:
        errors += 1
took = time.monotonic() - t0
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    with lock:
        if all(k in seen for k in sent):
            break
    time.sleep(0.1)
stop.set()
with lock:
    lat = sorted((seen[k] - v) * 1000 for k, v in sent.items() if k in seen)
missing = [k for k in sent if k not in seen]


def pct(p):
    return round(lat[min(len(lat) - 1, int(p * len(lat)))], 1) if lat else None


print(json.dumps({"created": len(sent), "grouped": len(lat), "createErrors": errors,
                  "missing": missing[:5], "p50Ms": pct(0.50), "p99Ms": pct(0.99),
                  "maxMs": round(lat[-1], 1) if lat else None,
                  "ratePerS": round(n / took, 1) if took > 0 else None}))
sys.exit(1 if missing or errors else 0)
