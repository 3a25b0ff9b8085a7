#!/usr/bin/env python3
"""wmap benchmarks: every figure of issue 7 in one run (see tests/bench/README.md).

    python3 tests/bench/run.py --bin build-bench --out build/bench [--reps 3] [--only webhook,...]

--bin holds the optimised binaries (wmap-webhook, kubectl-wmap, apiserver-sim) and
bench/wmap-bench; --out gets results.json, results.md, the generated inputs and every raw
tool output. Run from the repository root. Python 3 standard library only.

Every figure is a median over --reps runs (or over a tool's own runs); every comparison is a
ratio of figures measured side by side in the same run, wmap and its floor alternating
(ABBA order) so that drift on a busy machine hits both alike.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import threading
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wide  # noqa: E402  (tests/bench/wide.py)
import audit_live  # noqa: E402  (tests/bench/audit_live.py)
import wlmetrics_live  # noqa: E402  (tests/bench/wlmetrics_live.py)
import audit_offline  # noqa: E402  (tests/bench/audit_offline.py)
import fit  # noqa: E402  (tests/bench/fit.py)
import gang  # noqa: E402  (tests/bench/gang.py)

ROOT = os.getcwd()
JOBSET_FIXTURE = "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml"
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOBSET_CRD = "tests/e2e/data/jobset-crd.yaml"

# Webhook inputs: name -> (wmap-bench SPEC, description, load at the fixed rate)
WEBHOOK_INPUTS = [
    ("small", "file:" + JOBSET_FIXTURE, "JobSet leader-workers.yaml (2 replicated jobs)"),
    ("jobset64", "jobset:64", "JobSet, 64 replicated jobs (generated)"),
    ("ray128", "raycluster:128", "RayCluster, 128 worker groups (generated)"),
    ("large", "large:450000", "JobSet, 16 replicated jobs with big env lists (generated)"),
]
FIXED_RPS = 500
LARGE_RPS = 20          # 450 KB reviews cost ~10-20 ms of parsing each: 500/s cannot be served
# Hostile bodies (wmap-bench hostile:SHAPE): the cheapest JSON to send and the dearest to
# read, each filling a review up to wmap-webhook's default --max-body (7 MiB).
HOSTILE_SHAPES = ["keys", "labels", "ints", "strings", "objects", "floats", "deep", "escapes"]
HOSTILE_RPS = 5         # worst bodies per second sent beside the 500/s small reviews
SCALE_SPECS = ["jobset:1", "jobset:100", "jobset:1000",
               "raycluster:1", "raycluster:50", "raycluster:500"]

T0 = time.time()
# --smoke (make bench-smoke): every step once on small inputs, no goal judged; the run fails
# when a step breaks. Set in main().
SMOKE = False


def log(msg):
    print("[bench %6.1fs] %s" % (time.time() - T0, msg), flush=True)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def pct(xs, p):
    """Nearest-rank percentile."""
    if not xs:
        return None
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tls_ctx():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def https_get(port, path, timeout=2.0):
    c = http.client.HTTPSConnection("127.0.0.1", port, context=tls_ctx(), timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        c.close()


def proc_status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0]) / 1024.0  # MiB
    return out


def proc_cpu(pid):
    """utime + stime of a process in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Results:
    def __init__(self):
        self.rows = []     # the table
        self.raw = {}      # everything else, for results.json

    def add(self, section, name, value, unit, goal=None, met=None, cmd=None, note=None):
        if SMOKE:
            met = None  # small inputs, one run: the figures say nothing about the goals
        self.rows.append(dict(section=section, name=name, value=value, unit=unit, goal=goal,
                              met=met, command=cmd, note=note))
        log("%-9s %-58s %s %s%s" % (section, name, fmt(value), unit,
                                     "" if met is None else ("  [goal %s: %s]" % (goal, "met" if met else "MISSED"))))


def fmt(v):
    if v is None:
        return "n/a"
    if isinstance(v, str):
        return v
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.3g" % v


# --------------------------------------------------------------------------- inputs

def make_inputs(a):
    d = os.path.join(a.out, "inputs")
    os.makedirs(d, exist_ok=True)
    files = {}
    for name, spec, _desc in WEBHOOK_INPUTS:
        for variant, extra in (("wmap", []), ("floor", ["--nodef"])):
            path = os.path.join(d, "%s-%s.json" % (name, variant))
            with open(path, "w") as f:
                subprocess.run([a.tool, "review", spec] + extra, stdout=f, check=True)
            files[(name, variant)] = path
    return files


def make_certs(a):
    d = os.path.join(a.out, "certs")
    os.makedirs(d, exist_ok=True)
    key, crt = os.path.join(d, "tls.key"), os.path.join(d, "tls.crt")
    if not (os.path.exists(key) and os.path.exists(crt)):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", crt,
                        "-days", "2", "-subj", "/CN=wmap-webhook.wmap-system.svc",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return crt, key


# --------------------------------------------------------------------------- webhook

class Webhook:
    def __init__(self, a, crt, key, logname, extra=()):
        self.port = free_port()
        self.logf = open(os.path.join(a.out, logname), "w")
        self.cmd = [os.path.join(a.bin, "wmap-webhook"), "--tls-cert", crt, "--tls-key", key,
                    "--port", str(self.port)] + list(extra)
        self.t_start = time.perf_counter()
        self.p = subprocess.Popen(self.cmd, stdout=self.logf, stderr=self.logf)
        self.ready_s = self.wait_ready()

    def wait_ready(self, limit=30.0):
        """Seconds from process start to /readyz answering 200."""
        while time.perf_counter() - self.t_start < limit:
            if self.p.poll() is not None:
                raise RuntimeError("wmap-webhook exited with %d (see its log)" % self.p.returncode)
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=1)
            except OSError:
                time.sleep(0.002)
                continue
            try:
                with tls_ctx().wrap_socket(s) as t:
                    t.sendall(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    head = t.recv(64)
                if head.startswith(b"HTTP/1.1 200"):
                    t = time.perf_counter() - self.t_start
                    self.ready_cpu_s = proc_cpu(self.p.pid)
                    return t
            except (OSError, ssl.SSLError):
                pass
            finally:
                s.close()
            time.sleep(0.002)
        raise RuntimeError("wmap-webhook not ready within %.0f s" % limit)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.logf.close()

    def metrics(self):
        """(sum seconds, count, {le: cumulative}) of the /mutate duration histogram."""
        _, text = https_get(self.port, "/metrics")
        s = c = 0.0
        buckets = {}
        for line in text.splitlines():
            if 'endpoint="mutate"' not in line:
                continue
            m = re.match(r'wmap_webhook_request_duration_seconds_(sum|count|bucket)\{[^}]*?(?:le="([^"]+)")?\}\s+(\S+)', line)
            if not m:
                continue
            if m.group(1) == "sum":
                s = float(m.group(3))
            elif m.group(1) == "count":
                c = float(m.group(3))
            else:
                buckets[m.group(2)] = float(m.group(3))
        return s, c, buckets


def hist_quantile(b0, b1, q):
    """Upper bound of the bucket holding quantile q of the requests between two scrapes."""
    les = sorted((float("inf") if k == "+Inf" else float(k), b1.get(k, 0) - b0.get(k, 0)) for k in b1)
    total = les[-1][1] if les else 0
    if total <= 0:
        return None
    for le, cum in les:
        if cum >= q * total:
            return le
    return None


def h2load(a, wh, body, outbase, rate=None, clients=4, duration=3):
    """One h2load run over TLS keep-alive (HTTP/1.1), open loop at rate req/s (--rps per
    client, per-request log) or closed loop (saturation). Returns a dict of figures."""
    url = "https://127.0.0.1:%d/mutate" % wh.port
    cmd = ["h2load", "--h1", "-t", "1", "-c", str(clients), "-d", body,
                    "-H", "content-type: application/json"]
    logfile = outbase + ".log"
    if rate:
        cmd += ["--rps", str(max(1, rate // clients)), "-D", "%dms" % (duration * 1000), "--log-file", logfile]
    else:
        cmd += ["-D", "%dms" % (duration * 1000), "--warm-up-time", "1"]
    cmd.append(url)
    m0 = wh.metrics()
    cpu0 = proc_cpu(wh.p.pid)
    r = run(cmd)
    cpu1 = proc_cpu(wh.p.pid)
    m1 = wh.metrics()
    with open(outbase + ".out", "w") as f:
        f.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    res = {"cmd": " ".join(cmd)}
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", r.stdout)
    st = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", r.stdout)
    res["done"] = int(m.group(3)) if m else 0
    res["ok2xx"] = int(st.group(1)) if st else 0
    res["non2xx"] = sum(int(st.group(i)) for i in (2, 3, 4)) if st else None
    res["failed"] = (int(m.group(5)) + int(m.group(6))) if m else None
    fin = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", r.stdout)
    res["req_per_s"] = float(fin.group(3)) if fin else None
    if rate:
        lat = []
        try:
            with open(logfile) as f:
                for line in f:
                    p = line.split()
                    if len(p) >= 3 and p[1] == "200":
                        lat.append(int(p[2]) / 1000.0)  # ms
        except OSError:
            pass
        res["n"] = len(lat)
        res["mean_ms"] = statistics.fmean(lat) if lat else None
        res["p50_ms"] = pct(lat, 50)
        res["p99_ms"] = pct(lat, 99)
        res["max_ms"] = max(lat) if lat else None
        if not a.keep_logs and os.path.exists(logfile):
            os.unlink(logfile)
    dc = m1[1] - m0[1]
    res["server_count"] = dc
    res["server_mean_ms"] = (m1[0] - m0[0]) / dc * 1000 if dc > 0 else None
    q99 = hist_quantile(m0[2], m1[2], 0.99)
    res["server_p99_bucket_ms"] = q99 * 1000 if q99 not in (None, float("inf")) else q99
    res["server_cpu_ms_per_req"] = (cpu1 - cpu0) * 1000 / dc if dc > 0 else None
    return res


def bench_webhook(a, R, files, crt, key):
    reps = a.reps
    raw = {"inputs": {}, "runs": {}}
    for name, spec, desc in WEBHOOK_INPUTS:
        raw["inputs"][name] = {"spec": spec, "description": desc,
                               "bytes": os.path.getsize(files[(name, "wmap")]),
                               "floor_bytes": os.path.getsize(files[(name, "floor")])}
    help_text = run([os.path.join(a.bin, "wmap-webhook"), "--help"]).stdout
    null_flag = re.search(r"--(null[-\w]*|no-op[-\w]*|parse-only[-\w]*)", help_text)
    raw["null_mode_flag"] = null_flag.group(0) if null_flag else None
    floor_desc = ("a second server started with %s, same body" % null_flag.group(0)) if null_flag else \
        ("the same server and body, with the object's group renamed to nodef.bench.wmap.io "
         "(no definition covers it: parsed, depth-checked, looked up, allowed unchanged with a "
         "warning); wmap-webhook --help has no null mode yet (tests/bench/REQUESTS.md)")
    raw["floor"] = floor_desc

    groups = [("steady", [n for n, _, _ in WEBHOOK_INPUTS if n != "large"]), ("large", ["large"])]
    for gname, names in groups:
        wh = Webhook(a, crt, key, "webhook-%s.log" % gname)
        fl = Webhook(a, crt, key, "webhook-%s-null.log" % gname, [null_flag.group(0)]) if null_flag else wh
        raw["rss_idle_%s" % gname] = proc_status(wh.p.pid)
        log("webhook (%s inputs) ready in %.0f ms, pid %d, port %d" % (gname, wh.ready_s * 1000, wh.p.pid, wh.port))
        try:
            # Warm-up: connections, allocator, caches.
            for nm in names:
                h2load(a, wh, files[(nm, "wmap")], os.path.join(a.out, "warmup-" + nm),
                       rate=100 if nm != "large" else 10, duration=1)
                if fl is not wh:
                    h2load(a, fl, files[(nm, "wmap")], os.path.join(a.out, "warmup-null-" + nm),
                           rate=100 if nm != "large" else 10, duration=1)
            for rep in range(reps):
                order = ("wmap", "floor") if rep % 2 == 0 else ("floor", "wmap")
                for nm in names:
                    rate = LARGE_RPS if nm == "large" else FIXED_RPS
                    for kind in ("rate", "sat"):
                        for variant in order:
                            srv = wh if variant == "wmap" else fl
                            body = files[(nm, "wmap" if (variant == "wmap" or fl is not wh) else "floor")]
                            res = h2load(a, srv, body,
                                         os.path.join(a.out, "h2load-%s-%s-%s-%d" % (kind, nm, variant, rep)),
                                         rate=rate if kind == "rate" else None,
                                         clients=(4 if nm != "large" else 1) if kind == "rate" else (8 if nm != "large" else 2),
                                         duration=(a.rate_seconds if nm != "large" else 5) if kind == "rate" else a.sat_seconds)
                            raw["runs"].setdefault("%s/%s" % (nm, variant), {}).setdefault(kind, []).append(res)
                log("webhook rep %d/%d (%s) done" % (rep + 1, reps, gname))
            raw["rss_after_%s" % gname] = proc_status(wh.p.pid)
        finally:
            wh.stop()
            if fl is not wh:
                fl.stop()
        # What the server did with each input (from its JSON log lines): wmap's reviews must be
        # "patched"; a "failopen" with reason "budget" was cut short by --request-budget-ms.
        sizes = {raw["inputs"][nm]["bytes"]: nm for nm in names}
        for logname in ("webhook-%s.log" % gname,):
            try:
                with open(os.path.join(a.out, logname)) as f:
                    for line in f:
                        if '"msg":"admission"' not in line:
                            continue
                        try:
                            j = json.loads(line)
                        except ValueError:
                            continue
                        nm = sizes.get(j.get("bodyBytes"))
                        if nm:
                            k = j.get("result", "?") + ("/" + j["reason"] if j.get("reason") else "")
                            c = raw.setdefault("results", {}).setdefault(nm, {})
                            c[k] = c.get(k, 0) + 1
            except OSError:
                pass

    def med(key_, kind, field):
        return median([r.get(field) for r in raw["runs"].get(key_, {}).get(kind, [])])

    def paired_ratio(nm, kind, field, invert=False):
        w = raw["runs"]["%s/wmap" % nm][kind]
        f = raw["runs"]["%s/floor" % nm][kind]
        rs = []
        for x, y in zip(w, f):
            if x.get(field) and y.get(field):
                rs.append(y[field] / x[field] if invert else x[field] / y[field])
        return median(rs)

    S = "webhook"
    for nm, spec, desc in WEBHOOK_INPUTS:
        kb = raw["inputs"][nm]["bytes"] / 1024.0
        rate = LARGE_RPS if nm == "large" else FIXED_RPS
        label = "%s (%.0f KB review)" % (nm, kb)
        W, F = "%s/wmap" % nm, "%s/floor" % nm
        rcmd = raw["runs"][W]["rate"][0]["cmd"]
        scmd = raw["runs"][W]["sat"][0]["cmd"]
        mean = med(W, "rate", "mean_ms")
        p99 = med(W, "rate", "p99_ms")
        goal_mean = goal_p99 = None
        if nm == "small":
            goal_mean, goal_p99 = 0.5, 1.0
        elif nm == "jobset64":
            goal_p99 = 3.0
        elif nm == "large":
            goal_p99 = 50.0
        R.add(S, "%s: mean latency at %d/s (client)" % (label, rate), mean, "ms",
              "<= %g ms" % goal_mean if goal_mean else None,
              (mean <= goal_mean) if goal_mean and mean is not None else None, rcmd,
              note="p50 %s ms; the server's answers to this review over all runs: %s" % (
                  fmt(med(W, "rate", "p50_ms")),
                  ", ".join("%d %s" % (v, k) for k, v in sorted(raw.get("results", {}).get(nm, {}).items()))))
        R.add(S, "%s: p99 latency at %d/s (client)" % (label, rate), p99, "ms",
              "<= %g ms" % goal_p99 if goal_p99 else None,
              (p99 <= goal_p99) if goal_p99 and p99 is not None else None, rcmd,
              note="max %s ms" % fmt(med(W, "rate", "max_ms")))
        R.add(S, "%s: server-side mean / p99 bucket at %d/s" % (label, rate),
              "%s / <= %s" % (fmt(med(W, "rate", "server_mean_ms")), fmt(med(W, "rate", "server_p99_bucket_ms"))),
              "ms", cmd="GET /metrics around each run: wmap_webhook_request_duration_seconds{endpoint=\"mutate\"}")
        R.add(S, "%s: floor at %d/s: client mean / p99, server-side mean" % (label, rate),
              "%s / %s, %s" % (fmt(med(F, "rate", "mean_ms")), fmt(med(F, "rate", "p99_ms")),
                               fmt(med(F, "rate", "server_mean_ms"))),
              "ms", cmd=raw["runs"][F]["rate"][0]["cmd"])
        cw, cf = med(W, "rate", "server_cpu_ms_per_req"), med(F, "rate", "server_cpu_ms_per_req")
        cr = paired_ratio(nm, "rate", "server_cpu_ms_per_req")
        R.add(S, "%s: server CPU per review at %d/s, wmap / floor" % (label, rate), cr, "x",
              cmd="/proc/PID/stat utime+stime around each %d/s run, / requests counted by /metrics" % rate,
              note="%s / %s ms per review; client mean latency wmap/floor %sx" % (
                  fmt(cw), fmt(cf), fmt(paired_ratio(nm, "rate", "mean_ms"))))
        scw, scf = med(W, "sat", "server_cpu_ms_per_req"), med(F, "sat", "server_cpu_ms_per_req")
        scr = paired_ratio(nm, "sat", "server_cpu_ms_per_req")
        R.add(S, "%s: server CPU per review saturated, wmap / floor" % label, scr, "x",
              "<= 1.5x" if nm == "small" else None, (scr <= 1.5) if nm == "small" and scr else None,
              "/proc/PID/stat utime+stime around each saturated run, / requests counted by /metrics",
              note="%s / %s ms per review (per-request overheads amortised: the cost of a "
                   "request when the server is busy)" % (fmt(scw), fmt(scf)))
        sat = med(W, "sat", "req_per_s")
        sat_f = med(F, "sat", "req_per_s")
        ceiling = 2000.0 / scw if scw else None
        R.add(S, "%s: saturated throughput" % label,
              sat, "req/s", ">= 2000/s" if nm == "small" else None,
              (sat >= 2000) if nm == "small" and sat else None, scmd,
              note="floor %s req/s (time per request wmap/floor %sx); h2load shares the 2 cores; "
                   "CPU-bound ceiling on 2 free cores 2 s / %s ms = %s req/s" % (
                       fmt(sat_f), fmt(paired_ratio(nm, "sat", "req_per_s", invert=True)), fmt(scw), fmt(ceiling)))
        fails = sum((r.get("failed") or 0) for k in (W, F)
                    for kind in ("rate", "sat") for r in raw["runs"].get(k, {}).get(kind, []))
        non2xx = sum((r.get("non2xx") or 0) for k in (W, F)
                     for kind in ("rate", "sat") for r in raw["runs"].get(k, {}).get(kind, []))
        if fails or non2xx:
            R.add(S, "%s: failed or non-2xx requests (all runs)" % label, fails + non2xx, "", "0", False, rcmd)
    for gname, goal in (("steady", 30.0), ("large", None)):
        st = raw.get("rss_after_%s" % gname, {})
        idle = raw.get("rss_idle_%s" % gname, {})
        R.add(S, "RSS after the %s runs (VmRSS / VmHWM)" % ("small/64-job/Ray" if gname == "steady" else "450 KB"),
              "%s / %s" % (fmt(st.get("VmRSS")), fmt(st.get("VmHWM"))), "MiB",
              "<= 30 MB" if goal else None,
              (st.get("VmRSS", 1e9) <= goal and st.get("VmHWM", 1e9) <= goal) if goal else None,
              "/proc/PID/status", note="idle after ready: %s MiB" % fmt(idle.get("VmRSS")))
    R.raw["webhook"] = raw


def bench_startup(a, R, crt, key):
    times, self_ms, cpu_ms = [], [], []
    for i in range(a.starts):
        wh = Webhook(a, crt, key, "webhook-start.log")
        times.append(wh.ready_s * 1000)
        cpu_ms.append(wh.ready_cpu_s * 1000)
        wh.stop()
        try:
            with open(os.path.join(a.out, "webhook-start.log")) as f:
                for line in f:
                    if '"msg":"ready"' in line:
                        m = re.search(r'"(\w*[Mm]s\w*)":\s*([\d.]+)', line)
                        if m:
                            self_ms.append(float(m.group(2)))
        except OSError:
            pass
    v = median(times)
    R.add("start-up", "wmap-webhook exec to /readyz 200 (whole catalog, 2 threads)", v, "ms",
          "<= 300 ms", v is not None and v <= 300,
          "wmap-webhook --tls-cert C --tls-key K --port P; poll GET /readyz every 2 ms",
          note="runs: %s ms; CPU used by the process until ready: %s ms; server's own log "
               "(after option parsing): %s ms" % (
              ", ".join("%.0f" % t for t in times), fmt(median(cpu_ms)), fmt(median(self_ms))))
    R.raw["startup"] = {"ms": times, "cpu_ms": cpu_ms, "self_reported_ms": self_ms}


def hyperfine(a, cmds, name, runs=30, warmup=3, ignore_failure=False):
    if SMOKE:
        runs, warmup = 2, 0
    out = os.path.join(a.out, "hyperfine-%s.json" % name)
    cmd = ["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out,
           "--style", "none"] + (["-i"] if ignore_failure else []) + cmds
    r = run(cmd)
    if r.returncode != 0:
        # -N (no shell) is hyperfine >= 1.13; fall back to the shell.
        cmd.remove("-N")
        r = run(cmd)
    if r.returncode != 0:
        raise RuntimeError("hyperfine failed: %s" % r.stderr[-500:])
    with open(out) as f:
        data = json.load(f)
    hyperfine.cpu_ms = [(x.get("user", 0) + x.get("system", 0)) * 1000 for x in data["results"]]
    return [x["median"] * 1000 for x in data["results"]], " ".join(
        c if " " not in c else "'%s'" % c for c in cmd)


def peak_rss(cmd, runs=7, env=None):
    if SMOKE:
        runs = 1
    vals = []
    for _ in range(runs):
        r = run(["/usr/bin/time", "-f", "WMAPRSS %M"] + cmd, env=env)
        m = re.search(r"WMAPRSS (\d+)", r.stderr)
        if m:
            vals.append(int(m.group(1)) / 1024.0)
    return median(vals)


def bench_plugin(a, R):
    plugin = os.path.join(a.bin, "kubectl-wmap")
    cmd = [plugin, "describe", "-f", JOBSET_FIXTURE]
    r = run(cmd)
    if r.returncode != 0:
        R.add("plugin", "describe -f leader-workers.yaml", None, "ms", "<= 50 ms", False,
              " ".join(cmd), note="failed: " + r.stderr.strip()[:200])
        return
    version = [plugin, "version"]
    (t, tv, tt), hcmd = hyperfine(a, [" ".join(cmd), " ".join(version), "/bin/true"], "describe-f", runs=30)
    cpu = hyperfine.cpu_ms
    R.add("plugin", "describe -f leader-workers.yaml: wall time (median)", t, "ms", "<= 50 ms",
          t <= 50, hcmd,
          note="CPU user+sys %s ms; same run: `kubectl-wmap version` %s ms (CPU %s ms), `/bin/true` %s ms "
               "(what starting any process costs on this machine now)" % (fmt(cpu[0]), fmt(tv), fmt(cpu[1]), fmt(tt)))
    rss = peak_rss(cmd)
    R.add("plugin", "describe -f leader-workers.yaml: peak RSS (median)", rss, "MiB",
          cmd="/usr/bin/time -f %M " + " ".join(cmd))
    R.raw["plugin"] = {"describe_f_ms": t, "version_ms": tv, "true_ms": tt, "cpu_ms": cpu,
                       "describe_f_peak_rss_mib": rss}


def bench_live(a, R):
    sim = os.path.join(a.bin, "apiserver-sim")
    plugin = os.path.join(a.bin, "kubectl-wmap")
    kubectl = shutil.which("kubectl")
    d = os.path.join(a.out, "sim")
    os.makedirs(d, exist_ok=True)
    kc, rf = os.path.join(d, "kubeconfig"), os.path.join(d, "ready")
    if os.path.exists(rf):
        os.unlink(rf)
    if not (os.path.exists(sim) and kubectl):
        R.add("plugin", "live describe vs kubectl get -o json", "not measurable", "",
              "no slower", None, note="apiserver-sim or kubectl missing")
        return
    ns = os.path.join(d, "namespace.yaml")
    with open(ns, "w") as f:
        f.write("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml-team\n")
    logf = open(os.path.join(d, "sim.log"), "w")
    p = subprocess.Popen([sim, "--port", "0", "--kubeconfig-out", kc, "--ready-file", rf,
                          "--load", JOBSET_CRD, "--load", ns, "--load", JOBSET_FIXTURE],
                         stdout=logf, stderr=logf)
    try:
        for _ in range(1000):
            if os.path.exists(rf) or p.poll() is not None:
                break
            time.sleep(0.01)
        if not os.path.exists(rf):
            with open(os.path.join(d, "sim.log")) as f:
                why = f.read().strip()[-200:]
            R.add("plugin", "live describe vs kubectl get -o json", "not measurable", "",
                  "no slower", None, note="apiserver-sim did not start: " + why)
            return
        env = dict(os.environ, KUBECONFIG=kc)
        get = [kubectl, "--kubeconfig", kc, "get", "jobset", "llama-train", "-n", "ml-team", "-o", "json"]
        desc = [plugin, "describe", "jobset/llama-train", "-n", "ml-team", "--kubeconfig", kc]
        rg, rd = run(get, env=env), run(desc, env=env)
        R.raw["live"] = {"get_rc": rg.returncode, "describe_rc": rd.returncode,
                         "describe_stderr": rd.stderr[-400:], "get_stderr": rg.stderr[-400:]}
        if rg.returncode != 0:
            R.add("plugin", "live describe vs kubectl get -o json", "not measurable", "",
                  "no slower", None, " ".join(get), note="kubectl get failed: " + rg.stderr.strip()[:160])
            return
        if rd.returncode != 0:
            R.add("plugin", "live describe TYPE/NAME vs kubectl get -o json", "not measurable yet",
                  "", "no slower", None, " ".join(desc),
                  note="the plugin's live describe does not work yet: " + rd.stderr.strip().splitlines()[-1][:200]
                  if rd.stderr.strip() else "exit %d" % rd.returncode)
            (tg,), hcmd = hyperfine(a, [" ".join(get)], "kubectl-get", runs=15)
            R.add("plugin", "kubectl get jobset -o json against apiserver-sim (reference)", tg, "ms",
                  cmd=hcmd)
            return
        (td, tg), hcmd = hyperfine(a, [" ".join(desc), " ".join(get)], "live", runs=15)
        R.add("plugin", "live describe jobset/llama-train", td, "ms", cmd=hcmd)
        R.add("plugin", "kubectl get jobset llama-train -o json", tg, "ms", cmd=hcmd)
        R.add("plugin", "live describe / kubectl get -o json", td / tg, "x", "<= 1x", td <= tg, hcmd)
        R.add("plugin", "live describe: peak RSS", peak_rss(desc, env=env), "MiB",
              cmd="/usr/bin/time -f %M " + " ".join(desc))
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
        logf.close()


def timed_gets(port, token, path, n):
    """n GETs of path over one TLS keep-alive connection: (median ms, body bytes)."""
    c = http.client.HTTPSConnection("127.0.0.1", port, context=tls_ctx(), timeout=60)
    times, size = [], 0
    try:
        for _ in range(n):
            t = time.perf_counter()
            c.request("GET", path, headers={"Authorization": "Bearer " + token, "Accept": "application/json"})
            r = c.getresponse()
            body = r.read()
            times.append((time.perf_counter() - t) * 1000)
            if r.status != 200:
                raise RuntimeError("GET %s: %d %s" % (path, r.status, body[:200]))
            size = len(body)
    finally:
        c.close()
    return median(times), size


def bench_big(a, R):
    """Issue 16: describe of a 2,000-pod JobSet next to kubectl get pods -l <its selector>, and
    the events request on a namespace of 10,000 events (tests/bench/bigjob.py)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
    import bigjob
    sim = os.path.join(a.bin, "apiserver-sim")
    plugin = os.path.join(a.bin, "kubectl-wmap")
    kubectl = shutil.which("kubectl")
    d = os.path.join(a.out, "big")
    os.makedirs(d, exist_ok=True)
    if not (os.path.exists(sim) and kubectl):
        R.add("big", "describe of a 2,000-pod JobSet", "not measurable", "", note="apiserver-sim or kubectl missing")
        return
    bigjob.main(["bigjob", d] + (["--pods", "200", "--events", "500"] if SMOKE else []))
    kc, rf = os.path.join(d, "kubeconfig"), os.path.join(d, "ready")
    token = "bench" + "0" * 35
    if os.path.exists(rf):
        os.unlink(rf)
    logf = open(os.path.join(d, "sim.log"), "w")
    p = subprocess.Popen([sim, "--port", "0", "--kubeconfig-out", kc, "--ready-file", rf, "--token", token,
                          "--load", JOBSET_CRD, "--load", os.path.join(d, "big.json"),
                          "--load", os.path.join(d, "events.json")], stdout=logf, stderr=logf)
    try:
        for _ in range(6000):
            if os.path.exists(rf) and os.path.getsize(rf) > 0 or p.poll() is not None:
                break
            time.sleep(0.01)
        with open(rf) as f:
            port = int(f.readline())
        env = dict(os.environ, KUBECONFIG=kc, HOME=os.path.join(d, "home"), WMAP_CACHE_DIR=os.path.join(d, "cache"))
        os.makedirs(env["HOME"], exist_ok=True)
        get = [kubectl, "--kubeconfig", kc, "get", "pods", "-n", "big", "-l", bigjob.SELECTOR, "-o", "json"]
        desc = [plugin, "describe", "jobset/big", "-n", "big", "--kubeconfig", kc]
        for cmd in (get, desc):   # warm both discovery caches, check both work
            r = run(cmd, env=env)
            if r.returncode != 0:
                R.add("big", "describe of a 2,000-pod JobSet", "not measurable", "", "<= 1.5x", False,
                      " ".join(cmd), note="failed: " + r.stderr.strip()[-200:])
                return
        npods = len(json.loads(run(get, env=env).stdout)["items"])
        hf = ["env", "KUBECONFIG=" + kc, "HOME=" + env["HOME"], "WMAP_CACHE_DIR=" + env["WMAP_CACHE_DIR"]]
        (tg, td, td0), hcmd = hyperfine(a, [" ".join(hf + get), " ".join(hf + desc),
                                           " ".join(hf + desc + ["--events", "0"])], "big", runs=10, warmup=1)
        cpu = hyperfine.cpu_ms
        R.add("big", "kubectl get pods -l <selector> -o json (%d pods)" % npods, tg, "ms", cmd=hcmd,
              note="CPU user+sys %s ms" % fmt(cpu[0]))
        R.add("big", "describe jobset/big (%d pods, 500 Jobs)" % npods, td, "ms", cmd=hcmd,
              note="CPU user+sys %s ms; with --events 0: %s ms" % (fmt(cpu[1]), fmt(td0)))
        R.add("big", "describe / kubectl get pods -l -o json", td / tg, "x", "<= 1.5x", td <= 1.5 * tg, hcmd)
        R.add("big", "describe 2,000 pods: peak RSS", peak_rss(desc, runs=3, env=env), "MiB",
              cmd="/usr/bin/time -f %M " + " ".join(desc))
        # Events: one namespace list of the Warning events, filtered locally, against one
        # field-selector request per object, on 10,000 events.
        ns_list = "/api/v1/namespaces/noisy/events?fieldSelector=type%3DWarning"
        pods = json.loads(run([kubectl, "--kubeconfig", kc, "get", "pods", "-n", "noisy", "-o", "json"], env=env).stdout)["items"]
        one = "/api/v1/namespaces/noisy/events?fieldSelector=involvedObject.uid%%3D%s,type%%3DWarning" % pods[-1]["metadata"]["uid"]
        all_ev = "/api/v1/namespaces/noisy/events"
        t_list, b_list = timed_gets(port, token, ns_list, 15)
        t_one, b_one = timed_gets(port, token, one, 15)
        t_all, b_all = timed_gets(port, token, all_ev, 7)
        R.add("events", "10,000 events: one list with type=Warning (one request)", t_list, "ms",
              cmd="GET " + ns_list, note="%d KB" % (b_list // 1024))
        R.add("events", "10,000 events: one involvedObject.uid=X,type=Warning request", t_one, "ms",
              cmd="GET " + one, note="%d bytes; a describe needs one per pod and controller" % b_one)
        R.add("events", "10,000 events: the whole namespace list, no selector", t_all, "ms",
              cmd="GET " + all_ev, note="%d KB" % (b_all // 1024))
        R.add("events", "objects at which per-object requests cost more than one list", t_list / t_one, "objects",
              note="the list costs %s per-object requests; a 2,000-pod JobSet would need >= 2,000" % fmt(t_list / t_one))
        dn = [plugin, "describe", "jobset/train", "-n", "noisy", "--kubeconfig", kc]
        (te, te0), hcmd = hyperfine(a, [" ".join(hf + dn), " ".join(hf + dn + ["--events", "0"])], "events", runs=10, warmup=1)
        R.add("events", "describe in a namespace of 10,000 events, --events 3 / --events 0", te / te0, "x",
              cmd=hcmd, note="%s ms / %s ms" % (fmt(te), fmt(te0)))
        R.raw["big"] = {"pods": npods, "get_ms": tg, "describe_ms": td, "describe_no_events_ms": td0,
                        "events_list_ms": t_list, "events_list_bytes": b_list, "events_one_ms": t_one,
                        "events_all_ms": t_all, "describe_noisy_ms": te, "describe_noisy_no_events_ms": te0}
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
        logf.close()


def bench_swap(a, R, crt, key):
    """Review latency while the definitions change ten times a second: wmap-webhook watches
    the simulator's Kartas (--kubeconfig) while tests/e2e/karta-flip.py changes one of them
    (valid/invalid in turn) at 10/s; h2load sends a Widget review at a fixed 500 req/s. Quiet
    and changing runs alternate; the figures are medians over the repetitions."""
    sim = os.path.join(a.bin, "apiserver-sim")
    d = os.path.join(a.out, "swap")
    os.makedirs(d, exist_ok=True)
    kc, rf = os.path.join(d, "kubeconfig"), os.path.join(d, "ready")
    pki = os.path.join(d, "pki")
    os.makedirs(pki, exist_ok=True)
    for f in (rf,):
        if os.path.exists(f):
            os.unlink(f)
    data = os.path.join(REPO, "tests", "e2e", "data", "cluster")
    gadget = os.path.join(d, "gadget.json")
    with open(gadget, "w") as f:
        json.dump({"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "metadata": {"name": "gadget"},
                   "spec": {"structureDefinition": {
                       "rootComponent": {"name": "gadget", "kind": {"group": "example.com", "version": "v1", "kind": "Gadget"},
                                         "statusDefinition": {"phaseDefinition": {"path": ".status.phase"},
                                                              "statusMappings": {"running": [{"byPhase": "Running"}]}}},
                       "childComponents": [{"name": "part", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                                            "ownerRef": "gadget", "specDefinition": {"podTemplateSpecPath": ".spec.template"}}]}}}, f)
    review = os.path.join(d, "widget-review.json")
    with open(os.path.join(data, "widget.yaml")) as f:
        import yaml  # python3-yaml is in DEB_PKGS
        obj = yaml.safe_load(f)
    obj["metadata"]["namespace"] = "default"
    with open(review, "w") as f:
        json.dump({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "bench-swap", "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
            "resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
            "name": "w1", "namespace": "default", "operation": "CREATE",
            "userInfo": {"username": "bench"}, "object": obj}}, f, separators=(",", ":"))
    logf = open(os.path.join(d, "sim.log"), "w")
    p = subprocess.Popen([sim, "--port", "0", "--kubeconfig-out", kc, "--ready-file", rf, "--pki-dir", pki,
                          "--load", os.path.join(REPO, "deploy", "base", "01-crd-kartas.run.ai.yaml"),
                          "--load", os.path.join(data, "widget-crd.yaml"),
                          "--load", os.path.join(data, "widget-karta.yaml"), "--load", gadget],
                         stdout=logf, stderr=logf)
    wh = None
    try:
        for _ in range(1000):
            if os.path.exists(rf) or p.poll() is not None:
                break
            time.sleep(0.01)
        port = int(open(rf).read().split()[0])
        token = re.search(r"token: (\S+)", open(kc).read()).group(1)
        wh = Webhook(a, crt, key, "webhook-swap.log", ["--kubeconfig", kc])
        quiet, busy, changes = [], [], []
        for rep in range(a.reps):
            quiet.append(h2load(a, wh, review, os.path.join(d, "quiet-%d" % rep), rate=500,
                                duration=int(a.rate_seconds)))
            m0 = wh.metrics()
            flip = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "e2e", "karta-flip.py"),
                                     "--url", "https://127.0.0.1:%d" % port, "--token", token,
                                     "--cacert", os.path.join(pki, "ca.crt"), "--name", "gadget",
                                     "--rate", "10", "--seconds", str(a.rate_seconds + 1)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            busy.append(h2load(a, wh, review, os.path.join(d, "changing-%d" % rep), rate=500,
                               duration=int(a.rate_seconds)))
            out, err = flip.communicate(timeout=60)
            changes.append(json.loads(out) if flip.returncode == 0 else {"error": err[-300:]})
        _, swaps_text = https_get(wh.port, "/metrics")
        R.raw["swap"] = {"quiet": quiet, "changing": busy, "flips": changes, "metrics": [
            l for l in swaps_text.splitlines() if l.startswith("wmap_webhook_definition_swaps_total")]}
        med = lambda runs, k: median([r[k] for r in runs if r.get(k) is not None])
        cmd = busy[0]["cmd"] + "  (with tests/e2e/karta-flip.py --rate 10 on another Karta)"
        failed = sum((r.get("failed") or 0) + (r.get("non2xx") or 0) for r in quiet + busy)
        R.add("swap", "quiet: review p50 / p99 (Widget, 500 req/s)",
              "%s / %s" % (fmt(med(quiet, "p50_ms")), fmt(med(quiet, "p99_ms"))), "ms", cmd=quiet[0]["cmd"])
        R.add("swap", "definitions changing 10/s: review p50 / p99",
              "%s / %s" % (fmt(med(busy, "p50_ms")), fmt(med(busy, "p99_ms"))), "ms", cmd=cmd)
        R.add("swap", "definitions changing 10/s: review max", med(busy, "max_ms"), "ms", cmd=cmd)
        R.add("swap", "failed or non-2xx reviews in both", failed, "", "0", failed == 0, cmd=cmd)
        made = sum(c.get("changes", 0) for c in changes)
        swaps = sum(int(l.rsplit(" ", 1)[1]) for l in R.raw["swap"]["metrics"] if 'result="success"' in l)
        # The changes must have reached the webhook, or "changing" measured a quiet webhook.
        R.add("swap", "Karta changes made / definition swaps the webhook counted", "%d / %d" % (made, swaps), "",
              "swaps > 0", swaps > 0, cmd="wmap_webhook_definition_swaps_total of /metrics",
              note="; ".join(c["error"] for c in changes if "error" in c) or None)
    finally:
        if wh:
            wh.stop()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
        logf.close()


def wmap_bench(a, args):
    r = run([a.tool] + args)
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    return json.loads(r.stdout)


def bench_scale(a, R):
    raw = {}
    for no_status in (False, True):
        for spec in SCALE_SPECS:
            args = ["resolve", spec, "--samples", str(a.scale_samples), "--sample-ms", "20"]
            if no_status:
                args.append("--no-status")
            raw[(spec, no_status)] = wmap_bench(a, args)
    R.raw["scale"] = {"%s%s" % (k[0], " no-status" if k[1] else ""): v for k, v in raw.items()}
    for no_status in (False, True):
        tag = "resolve without status (admission)" if no_status else "resolve with status (describe)"
        for fam, unit_name in (("jobset", "replicated job"), ("raycluster", "worker group")):
            sizes = [s for s in SCALE_SPECS if s.startswith(fam + ":")]
            base = raw[(sizes[0], no_status)]
            for s in sizes:
                n = int(s.split(":")[1])
                res = raw[(s, no_status)]
                cmd = "%s resolve %s%s" % (a.tool, s, " --no-status" if no_status else "")
                goal = met = None
                if s == "jobset:1000":
                    goal = "<= 20 ms"
                if "error" in res:
                    R.add("scale", "%s %s" % (tag, s), None, "ms", goal, False if goal else None, cmd,
                          note="error: " + res["error"][-220:])
                    continue
                ms = res["median_us"] / 1000.0
                if goal:
                    met = ms <= 20
                per = res["median_us"] / n
                note = "%.2f us per %s" % (per, unit_name)
                if n > 1 and "error" not in base:
                    note += "; x%.1f the time for x%d the size (linear: x%d)" % (
                        res["median_us"] / base["median_us"], n, n)
                R.add("scale", "%s %s (%d KB)" % (tag, s, res["bytes"] // 1024), ms, "ms", goal, met, cmd,
                      note=note)
            # growth between the two largest sizes
            a_, b_ = raw[(sizes[1], no_status)], raw[(sizes[2], no_status)]
            if "error" not in a_ and "error" not in b_:
                n1, n2 = int(sizes[1].split(":")[1]), int(sizes[2].split(":")[1])
                ratio = (b_["median_us"] / n2) / (a_["median_us"] / n1)
                R.add("scale", "%s %s: cost per %s at %d / at %d" % (tag, fam, unit_name, n2, n1),
                      ratio, "x", None, None,
                      "%s vs %s" % (sizes[2], sizes[1]), note="1x = linear; wall time, so cache and "
                      "allocator effects count (instruction counts: make bench-profile)")


def bench_admit(a, R):
    """In-process per-review cost, wmap against its floor (no TLS, no load tool: CPU only)."""
    raw = {}
    for name, spec, _ in WEBHOOK_INPUTS:
        w = wmap_bench(a, ["admit", spec, "--samples", str(a.scale_samples), "--sample-ms", "20"])
        f = wmap_bench(a, ["admit", spec, "--null", "--samples", str(a.scale_samples), "--sample-ms", "20"])
        raw[name] = {"wmap": w, "floor": f}
        if "error" in w or "error" in f:
            R.add("in-process", "%s: admission review" % name, None, "ms",
                  note=(w.get("error") or f.get("error"))[-200:])
            continue
        R.add("in-process", "%s: parse + review + dump, wmap / floor" % name,
              "%s / %s ms (%sx)" % (fmt(w["median_us"] / 1000), fmt(f["median_us"] / 1000),
                                    fmt(w["median_us"] / f["median_us"])), "",
              cmd="%s admit %s [--null]" % (a.tool, spec))
    R.raw["in_process"] = raw


def bench_hostile(a, R, files, crt, key):
    """Worst bodies under --max-body: CPU per review in-process, then the latency of small
    reviews at 500/s while worst bodies arrive beside them on another connection."""
    raw = {}
    worst = None
    for shape in HOSTILE_SHAPES:
        spec = "hostile:" + shape
        samples = ["--samples", "1", "--sample-ms", "10"] if SMOKE else ["--samples", "5", "--sample-ms", "100"]
        res = wmap_bench(a, ["admit", spec] + samples)
        raw[shape] = res
        cmd = "%s admit %s %s" % (a.tool, spec, " ".join(samples))
        if "error" in res:
            R.add("hostile", "%s: CPU per review" % shape, None, "ms", cmd=cmd,
                  note="error: " + res["error"][-200:])
            continue
        ms = res["median_cpu_us"] / 1000.0
        R.add("hostile", "%s (%.1f MB review): CPU per review" % (shape, res["bytes"] / 1e6),
              ms, "ms", cmd=cmd, note="%s%s; wall %.1f ms" % (
                  res["result"], " (%s)" % res["reason"] if res["reason"] else "",
                  res["median_us"] / 1000.0))
        if worst is None or ms > worst[1]:
            worst = (shape, ms)
    if worst:
        R.add("hostile", "worst body under --max-body (%s): CPU per review" % worst[0], worst[1],
              "ms", "<= 50 ms", worst[1] <= 50, note="parse with caps, answer, write, free")
    R.raw["hostile"] = raw
    # Other requests beside them: small reviews at 500/s, alone and with worst bodies.
    body = os.path.join(a.out, "inputs", "hostile-%s.json" % (worst[0] if worst else "keys"))
    with open(body, "w") as f:
        subprocess.run([a.tool, "review", "hostile:" + (worst[0] if worst else "keys")],
                       stdout=f, check=True)
    with open(body, "rb") as f:
        hostile_body = f.read()
    small = files[("small", "wmap")]
    wh = Webhook(a, crt, key, "webhook-hostile.log")
    stop = threading.Event()
    sent = []

    def attacker():
        c = None
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                if c is None:
                    c = http.client.HTTPSConnection("127.0.0.1", wh.port, context=tls_ctx(),
                                                    timeout=10)
                c.request("POST", "/mutate", hostile_body, {"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                sent.append(r.status)
            except (OSError, http.client.HTTPException):
                c = None
            time.sleep(max(0.0, 1.0 / HOSTILE_RPS - (time.perf_counter() - t0)))
        if c:
            c.close()

    try:
        alone = h2load(a, wh, small, os.path.join(a.out, "h2load-hostile-alone"), rate=FIXED_RPS)
        th = threading.Thread(target=attacker)
        cpu0 = proc_cpu(wh.p.pid)
        th.start()
        time.sleep(0.3)
        beside = h2load(a, wh, small, os.path.join(a.out, "h2load-hostile-beside"), rate=FIXED_RPS)
        stop.set()
        th.join()
        cpu1 = proc_cpu(wh.p.pid)
    finally:
        stop.set()
        wh.stop()
    raw_l = {"alone": alone, "beside": beside, "hostile_answers": sent}
    R.raw["hostile_latency"] = raw_l
    cmd = "h2load --h1 -c 4 --rps 125 -D 3000ms (small review) beside %d/s POSTs of %s" % (
        HOSTILE_RPS, os.path.basename(body))
    if alone.get("p99_ms") is None or beside.get("p99_ms") is None:
        R.add("hostile", "small reviews beside worst bodies", None, "ms", cmd=cmd,
              note="no latencies recorded")
        return
    R.add("hostile", "small review at 500/s alone: mean / p99 (client)",
          "%s / %s ms" % (fmt(alone["mean_ms"]), fmt(alone["p99_ms"])), "", cmd=cmd)
    ok = beside["mean_ms"] <= 2 * alone["mean_ms"] + 0.5
    R.add("hostile", "small review at 500/s beside %d worst bodies/s: mean / p99 (client)" %
          HOSTILE_RPS, "%s / %s ms" % (fmt(beside["mean_ms"]), fmt(beside["p99_ms"])),
          "", "mean <= 2x alone + 0.5 ms", ok, cmd=cmd,
          note="%d worst bodies answered (%s); server CPU %.0f ms over the run; a small review "
               "that lands on the poll thread reading a worst body waits for it (p99)" % (
                   len(sent), ",".join(sorted(set(str(x) for x in sent))), (cpu1 - cpu0) * 1000))


def callgrind(a, name, toggle, cmd):
    """Instructions executed inside toggle (valgrind callgrind: exact, load-independent)."""
    d = os.path.join(a.out, "callgrind")
    os.makedirs(d, exist_ok=True)
    full = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s/%s.cg" % (d, name)]
    if toggle:
        full.append("--toggle-collect=%s" % toggle)
    r = run(full + cmd)
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m.group(1)) if m else None


def bench_instructions(a, R):
    """The in-process comparisons again, counted in instructions: on a shared machine these
    ratios do not move with the load (a cache miss costs nothing here, though)."""
    if not shutil.which("valgrind"):
        R.add("instructions", "callgrind", "not measured", "", note="valgrind is not installed")
        return
    raw = {}
    small = "file:" + JOBSET_FIXTURE
    cases = [("small", small, 50), ("jobset64", "jobset:64", 5), ("ray128", "raycluster:128", 3),
             ("large", "large:450000", 1)]
    if SMOKE:
        cases = [("small", small, 2)]
    for name, spec, calls in cases:
        w = callgrind(a, "admit-%s" % name, "run_admit", [a.tool, "admit", spec, "--calls", str(calls)])
        f = callgrind(a, "admit-%s-floor" % name, "run_admit",
                      [a.tool, "admit", spec, "--null", "--calls", str(calls)])
        raw["admit " + name] = {"wmap": w and w / calls, "floor": f and f / calls}
        if w and f:
            R.add("instructions", "%s review, in-process: wmap / floor" % name, (w / calls) / (f / calls), "x",
                  None, None,
                  "valgrind --tool=callgrind --toggle-collect=run_admit %s admit %s [--null] --calls %d" % (a.tool, spec, calls),
                  note="%.2f M / %.2f M instructions per review" % (w / calls / 1e6, f / calls / 1e6))
    families = (("jobset", (1, 100, 1000), "replicated job", False),
                ("jobset", (1, 100, 1000), "replicated job", True),
                ("raycluster", (1, 50, 500), "worker group", False))
    if SMOKE:
        families = (("jobset", (1, 5, 10), "replicated job", False),)
    for fam, sizes, unit_name, status in families:
        per = {}
        tag = "with status (describe)" if status else "without status (admission)"
        for n in sizes:
            calls = 1 if SMOKE else max(1, 200 // n)
            v = callgrind(a, "resolve-%s%d%s" % (fam, n, "-status" if status else ""), "run_resolve",
                          [a.tool, "resolve", "%s:%d" % (fam, n), "--calls", str(calls)]
                          + ([] if status else ["--no-status"]))
            per[n] = v / calls if v else None
        raw["resolve %s %s" % ("status" if status else "no-status", fam)] = per
        if all(per.values()):
            R.add("instructions", "resolve %s, %s:%d / %s:%d, per %s" % (tag, fam, sizes[2], fam, sizes[1], unit_name),
                  (per[sizes[2]] / sizes[2]) / (per[sizes[1]] / sizes[1]), "x",
                  cmd="valgrind --tool=callgrind --toggle-collect=run_resolve %s resolve %s:N%s --calls C" % (
                      a.tool, fam, "" if status else " --no-status"),
                  note="1x = linear; %s instructions per %s at %d, %s at %d; %.1f M for %s:%d" % (
                      fmt(per[sizes[1]] / sizes[1]), unit_name, sizes[1], fmt(per[sizes[2]] / sizes[2]), sizes[2],
                      per[sizes[2]] / 1e6, fam, sizes[2]))
    d = callgrind(a, "describe-f", None, [os.path.join(a.bin, "kubectl-wmap"), "describe", "-f", JOBSET_FIXTURE])
    if d:
        raw["describe -f"] = d
        R.add("instructions", "describe -f leader-workers.yaml, whole process", d / 1e6, "M instr",
              cmd="valgrind --tool=callgrind kubectl-wmap describe -f leader-workers.yaml")
    R.raw["instructions"] = raw


# --------------------------------------------------------------------------- output

def write_outputs(a, R):
    meta = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": os.uname().nodename, "cpus": os.cpu_count(),
        "loadavg_start": a.loadavg_start, "loadavg_end": os.getloadavg(),
        "reps": a.reps, "nice": a.nice_value or None, "git": run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip(),
        "git_dirty": bool(run(["git", "status", "--porcelain", "--untracked-files=no"]).stdout.strip()),
        "duration_s": round(time.time() - T0, 1),
        "tools": {t: run([t, "--version"]).stdout.strip().splitlines()[0] if shutil.which(t) else None
                  for t in ("h2load", "hyperfine")},
        "libjq": run(["dpkg-query", "-W", "-f=${Version}", "libjq1"]).stdout.strip(),
    }
    goals = [r for r in R.rows if r["met"] is not None]
    summary = {"met": sum(1 for r in goals if r["met"]), "missed": sum(1 for r in goals if not r["met"])}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "rows": R.rows, "raw": R.raw}, f, indent=1,
                  default=str)
    lines = ["# wmap benchmark results", "",
             "%s, %s, %d CPUs, load average %s at start and %s at end, git %s%s, %d repetitions, %.0f s."
             % (meta["date"], meta["host"], meta["cpus"],
                " ".join("%.1f" % x for x in meta["loadavg_start"]),
                " ".join("%.1f" % x for x in meta["loadavg_end"]), meta["git"],
                " (with uncommitted changes)" if meta["git_dirty"] else "", a.reps, meta["duration_s"])
             + (" Every process of the run had nice %d (BENCH_NICE)." % meta["nice"] if meta["nice"] else ""),
             "", "Goals: %d met, %d missed." % (summary["met"], summary["missed"]), "",
             "| section | figure | value | goal | | command / note |", "|---|---|---|---|---|---|"]
    for r in R.rows:
        v = fmt(r["value"]) + (" " + r["unit"] if r["unit"] else "")
        mark = "" if r["met"] is None else ("met" if r["met"] else "**MISSED**")
        extra = []
        if r["command"]:
            extra.append("`%s`" % r["command"].replace("|", "\\|"))
        if r["note"]:
            extra.append(r["note"].replace("|", "\\|"))
        lines.append("| %s | %s | %s | %s | %s | %s |" % (r["section"], r["name"], v, r["goal"] or "",
                                                          mark, "<br>".join(extra)))
    if R.raw.get("webhook", {}).get("floor"):
        lines += ["", "Floor (baseline) of the webhook figures: " + R.raw["webhook"]["floor"] + "."]
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    # The table on stdout.
    print()
    w = max(len(r["section"] + r["name"]) for r in R.rows) + 3
    for r in R.rows:
        v = fmt(r["value"]) + (" " + r["unit"] if r["unit"] else "")
        mark = "" if r["met"] is None else ("  goal %s: %s" % (r["goal"], "met" if r["met"] else "MISSED"))
        print("%-*s %s%s" % (w, r["section"] + ": " + r["name"], v, mark))
    print("\nGoals: %d met, %d missed. Written: %s/results.json, %s/results.md (%.0f s)"
          % (summary["met"], summary["missed"], a.out, a.out, time.time() - T0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build-bench")
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "3")))
    ap.add_argument("--starts", type=int, default=7)
    ap.add_argument("--rate-seconds", type=float, default=3.0)
    ap.add_argument("--sat-seconds", type=int, default=3)
    ap.add_argument("--scale-samples", type=int, default=9)
    ap.add_argument("--only", default="webhook,startup,plugin,live,big,scale,admit,hostile,instructions,swap,wide,audit,audit-live,fit,"
                    "workload-metrics,gang")
    ap.add_argument("--keep-logs", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="every step once on small inputs (a few minutes at most), no goal "
                         "judged; exit 1 when a step fails (make bench-smoke)")
    ap.add_argument("--nice", type=int, default=int(os.environ.get("BENCH_NICE", "0")),
                    help="run every benchmark process at nice N (negative: ahead of other "
                         "work on a shared machine; needs root)")
    a = ap.parse_args()
    if a.smoke:
        global SMOKE
        SMOKE = True
        a.reps, a.starts, a.rate_seconds, a.sat_seconds, a.scale_samples = 1, 1, 1.0, 1, 2
        wide.N_WORKLOADS = 100
        audit_live.N_WORKLOADS = 200
        audit_offline.N_FILES = 200
        fit.N_NODES = 200  # FREE_NODES (100) of them free: the gang still fits
    a.bin = os.path.abspath(a.bin)
    a.out = os.path.abspath(a.out)
    a.tool = os.path.join(a.bin, "bench", "wmap-bench")
    a.loadavg_start = os.getloadavg()
    a.nice_value = a.nice
    if a.nice:
        # Every process of the run inherits it: webhook, h2load, hyperfine, the plugin, the sim.
        os.setpriority(os.PRIO_PROCESS, 0, a.nice)
    os.makedirs(a.out, exist_ok=True)
    only = set(a.only.split(","))
    R = Results()
    files = make_inputs(a)
    crt, key = make_certs(a)
    log("inputs: " + ", ".join("%s %d B" % (os.path.basename(v), os.path.getsize(v)) for v in files.values()))
    steps = [("startup", lambda: bench_startup(a, R, crt, key)),
             ("webhook", lambda: bench_webhook(a, R, files, crt, key)),
             ("plugin", lambda: bench_plugin(a, R)),
             ("live", lambda: bench_live(a, R)),
             ("big", lambda: bench_big(a, R)),
             ("scale", lambda: bench_scale(a, R)),
             ("admit", lambda: bench_admit(a, R)),
             ("hostile", lambda: bench_hostile(a, R, files, crt, key)),
             ("instructions", lambda: bench_instructions(a, R)),
             ("swap", lambda: bench_swap(a, R, crt, key)),
             ("wide", lambda: wide.bench_wide(a, R, hyperfine, peak_rss, run, log, JOBSET_CRD)),
             ("audit-live", lambda: audit_live.bench_audit(a, R, Webhook, https_get, proc_status, log, REPO,
                                                 JOBSET_CRD, crt, key)),
             ("audit", lambda: audit_offline.bench_audit(a, R, hyperfine, peak_rss, run, log)),
             ("fit", lambda: fit.bench_fit(a, R, hyperfine, peak_rss, run, log)),
             ("workload-metrics", lambda: wlmetrics_live.bench_wlmetrics(a, R, Webhook, https_get, proc_status, log, REPO,
                                                                audit_live.pytorchjob_crd, JOBSET_CRD, crt, key)),
             ("gang", lambda: gang.bench_gang(a, R, run, log, REPO, SMOKE))]

    for name, fn in steps:
        if name not in only:
            continue
        log("== %s" % name)
        try:
            fn()
        except Exception as e:  # one broken benchmark must not lose the others' figures
            R.add(name, "benchmark failed", None, "", None, False, note="%s: %s" % (type(e).__name__, e))
    write_outputs(a, R)
    if SMOKE:
        broken = [r for r in R.rows if r["name"] == "benchmark failed" or
                  (r["note"] or "").startswith(("failed", "error"))]
        ran = [n for n, _ in steps if n in only]
        print("bench-smoke: %d steps (%s), %d figures, %d broken, %.0f s" % (
            len(ran), ",".join(ran), len(R.rows), len(broken), time.time() - T0))
        for r in broken:
            print("bench-smoke: BROKEN %s: %s: %s" % (r["section"], r["name"], r["note"]))
        return 1 if broken else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
