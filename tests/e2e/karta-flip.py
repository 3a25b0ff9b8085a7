#!/usr/bin/env python3
"""Flips a Karta between a valid and an invalid definition at a given rate.

    karta-flip.py --url URL --token T --cacert F --name NAME --rate 50 --seconds 5

Each change is a JSON merge patch of the Karta's childComponents over one kept-alive
connection: even changes give the child its owner (valid), odd ones name an owner that does
not exist (invalid by upstream's rules). The last change is always the valid one. Prints the
number of changes made and the rate reached."""
import argparse, http.client, json, ssl, time, urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
ap.add_argument("--token", required=True)
ap.add_argument("--cacert", required=True)
ap.add_argument("--name", required=True)
ap.add_argument("--rate", type=float, default=50)
ap.add_argument("--seconds", type=float, default=5)
a = ap.parse_args()

u = urllib.parse.urlparse(a.url)
ctx = ssl.create_default_context(cafile=a.cacert)
ctx.check_hostname = False
conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=10)
path = "/apis/run.ai/v1alpha1/kartas/" + a.name
hdr = {"Authorization": "Bearer " + a.token, "Content-Type": "application/merge-patch+json"}

def child(owner):
    return {"spec": {"structureDefinition": {"childComponents": [{
        "name": "part", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "ownerRef": owner,
        "specDefinition": {"podTemplateSpecPath": ".spec.template"}}]}}}

n, t0 = 0, time.monotonic()
total = int(a.rate * a.seconds) | 1  # odd count of flips after the first: ends valid
for i in range(total + 1):
    body = json.dumps(child("gadget" if i % 2 == 0 else "nowhere"))
    conn.request("PATCH", path, body, hdr)
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        raise SystemExit("PATCH %s: HTTP %d" % (path, r.status))
    n += 1
    next_at = t0 + (i + 1) / a.rate
    delay = next_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
if (total % 2) != 0:  # make sure the last state is valid
    conn.request("PATCH", path, json.dumps(child("gadget")), hdr)
    conn.getresponse().read()
    n += 1
el = time.monotonic() - t0
print(json.dumps({"changes": n, "seconds": round(el, 2), "rate": round(n / el, 1)}))
