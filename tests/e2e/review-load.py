#!/usr/bin/env python3
"""Sends AdmissionReviews to a webhook in a loop and measures each answer.

    review-load.py --port N --review FILE --stop FILE --out FILE [--interval-ms 20]
                   [--expect-patch] [--started FILE]

Runs until the stop file exists, over one kept-alive TLS connection (a new one after an
error), like the API server does. Every answer must be HTTP 200 with an AdmissionReview that
echoes the uid (with --expect-patch: that carries a patch); anything else is a failure. Writes
one JSON object to --out: count, failures (with the first few reasons) and the latency
quantiles in milliseconds (p50, p99, max)."""
import argparse, http.client, json, os, ssl, time

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--review", required=True)
ap.add_argument("--stop", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--interval-ms", type=float, default=20)
ap.add_argument("--expect-patch", action="store_true")
ap.add_argument("--started", help="created after the first answer")
a = ap.parse_args()

body = open(a.review, "rb").read()
uid = json.loads(body)["request"]["uid"]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
conn = None
lat, fails = [], []
while not os.path.exists(a.stop):
    t0 = time.monotonic()
    try:
        if conn is None:
            conn = http.client.HTTPSConnection("127.0.0.1", a.port, context=ctx, timeout=10)
        conn.request("POST", "/mutate?timeout=10s", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        ms = (time.monotonic() - t0) * 1000
        why = None
        if r.status != 200:
            why = "HTTP %d" % r.status
        else:
            resp = json.loads(data).get("response", {})
            if resp.get("uid") != uid or resp.get("allowed") is not True:
                why = "bad answer"
            elif a.expect_patch and not resp.get("patch"):
                why = "no patch: %s" % resp.get("warnings")
        lat.append(ms)
        if a.started and len(lat) == 1:
            open(a.started, "w").close()
        if why:
            fails.append(why)
    except Exception as e:  # a dropped connection is a failure too
        fails.append("%s: %s" % (type(e).__name__, e))
        conn = None
    time.sleep(a.interval_ms / 1000)
lat.sort()
q = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))], 2) if lat else None
json.dump({"count": len(lat), "failures": len(fails), "firstFailures": fails[:5],
           "p50": q(0.5), "p99": q(0.99), "max": round(lat[-1], 2) if lat else None},
          open(a.out, "w"))
