"""The leader's background audit over 10,000 workloads (issue 14, point 4), for run.py's
"audit-live" step.

apiserver-sim is preloaded with 10,000 workloads in 20 namespaces (JobSets, PyTorchJobs and
RayClusters in turn, each a fixture of tests/fixtures without its status) and 20
WorkloadPolicy objects with validation actions (Audit, Warn, Deny; priority classes, labels,
node selectors, tolerations, scheduler names; some for one kind, some for a namespace
pattern, some for everything). wmap-webhook runs against it with --kubeconfig, holds the
Lease and audits once the policies are in force; the figures are those of that round, read
from its metrics (wmap_audit_last_duration_seconds, _last_workloads, _last_requests) and the
process's peak RSS (VmHWM in /proc), next to the number of reports in the cluster and their
failure counts (so the time is that of a right answer). The default --audit-qps (20) is in
force: its waits are part of the time."""
import json
import os
import re
import signal
import subprocess
import time

N_WORKLOADS = 10000
NAMESPACES = 20
FIXTURES = [("jobset.x-k8s.io/v1alpha2", "JobSet", "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml"),
            ("kubeflow.org/v1", "PyTorchJob", "tests/fixtures/kubeflow-org-pytorchjob-v1/running.yaml"),
            ("ray.io/v1", "RayCluster", "tests/fixtures/ray-io-raycluster-v1/running.yaml")]


def pytorchjob_crd():
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "pytorchjobs.kubeflow.org"},
            "spec": {"group": "kubeflow.org", "scope": "Namespaced",
                     "names": {"plural": "pytorchjobs", "singular": "pytorchjob", "kind": "PyTorchJob",
                               "listKind": "PyTorchJobList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {
                             "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                             "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def policies():
    """20 policies; each namespace's workloads violate some of them, pass others."""
    out = []
    acts = [["Audit"], ["Warn"], ["Deny"], ["Warn", "Audit"], ["Deny", "Audit"]]
    kinds = [[], ["JobSet.jobset.x-k8s.io"], ["PyTorchJob.kubeflow.org"], ["*.ray.io"]]
    for i in range(20):
        spec = {"match": {}, "mode": "override" if i % 2 else "default",
                "validationActions": acts[i % len(acts)]}
        if kinds[i % 4]:
            spec["match"]["kinds"] = kinds[i % 4]
        if i % 5 == 4:
            spec["match"]["namespaces"] = ["team-1*"]
        field = i % 5
        if field == 0:
            spec["podTemplate"] = {"priorityClassName": "prio-%d" % i}
        elif field == 1:
            spec["podTemplate"] = {"labels": {"cost-center": "cc-%d" % i}}
        elif field == 2:
            spec["podTemplate"] = {"nodeSelector": {"pool": "gpu-%d" % i}}
        elif field == 3:
            spec["podTemplate"] = {"tolerations": [{"key": "t-%d" % i, "operator": "Exists", "effect": "NoSchedule"}]}
        else:
            spec["podTemplate"] = {"schedulerName": "sched-%d" % i}
        out.append({"apiVersion": "wmap.io/v1alpha1", "kind": "WorkloadPolicy",
                    "metadata": {"name": "policy-%02d" % i}, "spec": spec})
    return out


def make_cluster(d, repo):
    import yaml  # python3-yaml is in DEB_PKGS
    bases = []
    for av, kind, path in FIXTURES:
        with open(os.path.join(repo, path)) as f:
            o = yaml.safe_load(f)
        o.pop("status", None)
        o["metadata"] = {"labels": (o.get("metadata") or {}).get("labels") or {}}
        bases.append(o)
    paths = [os.path.join(d, "base.json")]
    with open(paths[0], "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items":
                   [pytorchjob_crd()] +
                   [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-%d" % i}}
                    for i in range(NAMESPACES)] + policies()}, f)
    per_ns = [[] for _ in range(NAMESPACES)]
    for w in range(N_WORKLOADS):
        o = json.loads(json.dumps(bases[w % 3]))
        ns = "team-%d" % (w % NAMESPACES)
        o["metadata"].update({"name": "w-%05d" % w, "namespace": ns, "uid": "u-%05d" % w})
        per_ns[w % NAMESPACES].append(o)
    # 4 namespaces a file: the simulator takes at most 16 --load files.
    for i in range(0, NAMESPACES, 4):
        paths.append(os.path.join(d, "workloads-%d.json" % (i // 4)))
        with open(paths[-1], "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": sum(per_ns[i:i + 4], [])}, f)
    return paths


def cpu_s(pid):
    """utime + stime of a process in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metric(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def bench_audit(a, R, Webhook, https_get, proc_status, log, repo, jobset_crd, crt, key):
    sim = os.path.join(a.bin, "apiserver-sim")
    d = os.path.join(a.out, "audit")
    os.makedirs(d, exist_ok=True)
    kc, rf, reqlog = (os.path.join(d, n) for n in ("kubeconfig", "ready", "requests.log"))
    for f in (rf, reqlog):
        if os.path.exists(f):
            os.unlink(f)
    files = make_cluster(d, repo)
    log("audit: %d workloads in %d namespaces, 20 policies (%d MB)" % (
        N_WORKLOADS, NAMESPACES, sum(os.path.getsize(x) for x in files) >> 20))
    crds = [os.path.join(repo, x) for x in (
        "deploy/base/00-namespace.yaml", "deploy/base/01-crd-kartas.run.ai.yaml",
        "tests/e2e/data/cluster/workloadpolicy-crd.yaml", "tests/e2e/data/audit/report-crds.yaml",
        "tests/e2e/data/live/raycluster-crd.yaml", jobset_crd)]
    logf = open(os.path.join(d, "sim.log"), "w")
    t0 = time.time()
    p = subprocess.Popen([sim, "--port", "0", "--kubeconfig-out", kc, "--ready-file", rf, "--log", reqlog] +
                         [x for f in crds + files for x in ("--load", f)], stdout=logf, stderr=logf)
    wh = None
    try:
        while not os.path.exists(rf) and p.poll() is None and time.time() - t0 < 600:
            time.sleep(0.05)
        if not os.path.exists(rf):
            R.add("audit-live", "live audit of 10,000 workloads", "not measurable", "", note="apiserver-sim did not start")
            return
        log("audit: simulator loaded in %.1f s" % (time.time() - t0))
        wh = Webhook(a, crt, key, "webhook-audit.log", ["--kubeconfig", kc, "--sync-timeout", "60"])
        idle = proc_status(wh.p.pid)
        cpu0 = cpu_s(wh.p.pid)
        text = ""
        t1 = time.time()
        while time.time() - t1 < 300:
            _, text = https_get(wh.port, "/metrics", timeout=10)
            if (metric(text, "wmap_audit_last_workloads") or 0) >= N_WORKLOADS:
                break
            time.sleep(0.2)
        st = proc_status(wh.p.pid)
        cpu = cpu_s(wh.p.pid) - cpu0
        # What the simulator spent answering the audit's lists and report requests.
        sim_ms = 0.0
        for line in open(reqlog):
            f = line.split()
            if len(f) >= 5 and ("limit=500" in f[2] or "/reports" in f[2]) and f[4].endswith("ms"):
                sim_ms += float(f[4][:-2])
        secs = metric(text, "wmap_audit_last_duration_seconds")
        n = metric(text, "wmap_audit_last_workloads")
        reqs = metric(text, "wmap_audit_last_requests")
        viol = sum(float(x) for x in re.findall(r"^wmap_audit_violations\{[^}]*\} (\S+)$", text, re.M))
        cmd = "%s --kubeconfig KC (leader, --audit-interval 1h, --audit-qps 20); metrics after the round" % wh.cmd[0]
        if not n or n < N_WORKLOADS:
            R.add("audit-live", "live audit of 10,000 workloads", "not measurable", "", None, False, cmd,
                  note="no complete round within 300 s (see webhook-audit.log)")
            return
        reports = subprocess.run(["curl", "-sk", "--noproxy", "*", "-H", "Authorization: Bearer " +
                                  re.search(r"token: (\S+)", open(kc).read()).group(1),
                                  re.search(r"server: (\S+)", open(kc).read()).group(1) +
                                  "/apis/openreports.io/v1alpha1/reports"], capture_output=True, text=True)
        items = json.loads(reports.stdout).get("items", []) if reports.returncode == 0 else []
        fails = sum(r.get("summary", {}).get("fail", 0) for r in items)
        results = sum(r.get("summary", {}).get("fail", 0) + r.get("summary", {}).get("pass", 0) for r in items)
        R.raw["audit-live"] = {"seconds": secs, "workloads": n, "requests": reqs, "violations_gauge_sum": viol,
                          "reports": len(items), "report_fail": fails, "report_results": results,
                          "rss_idle": idle, "rss_after": st,
                          "webhook_cpu_s": cpu, "sim_ms": sim_ms, "loadavg": os.getloadavg()}
        R.add("audit-live", "live audit round: 10,000 workloads x 20 policies", secs, "s", "<= 10",
              secs is not None and secs <= 10, cmd,
              note="webhook CPU %.1f s (user+sys, from start to the round's end); the simulator "
                   "answering its lists and report writes %.1f s; load average %.1f" % (
                       cpu, sim_ms / 1000, os.getloadavg()[0]))
        R.add("audit-live", "live audit round: peak RSS of the webhook (VmHWM)", st.get("VmHWM"), "MiB", "<= 200",
              st.get("VmHWM", 1e9) <= 200, "/proc/PID/status", note="before the round: %.1f MiB" % idle.get("VmHWM", 0))
        R.add("audit-live", "live audit round: API requests", reqs, "", "pages, not workloads",
              reqs is not None and reqs < 200, cmd, note="discovery, 500-item pages, the report list, one write per namespace")
        R.add("audit-live", "reports written / results in them / failures", "%d / %d / %d" % (len(items), results, fails), "",
              "%d reports" % NAMESPACES, len(items) == NAMESPACES and fails > 0,
              note="sum of wmap_audit_violations: %d" % viol)
        bench_plugin_audit(a, R, kc, reqlog)
    finally:
        if wh:
            wh.stop()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
        logf.close()


def bench_plugin_audit(a, R, kc, reqlog):
    """`kubectl wmap audit -A` over the same preloaded cluster: the policies are the cluster's
    WorkloadPolicy objects, the workloads read in pages; wall time, peak RSS (GNU time) and
    the requests it made (the simulator's request log, counted before and after)."""
    plugin = os.path.join(a.bin, "kubectl-wmap")
    cmd = [plugin, "--kubeconfig", kc, "audit", "-A", "-o", "json"]
    before = sum(1 for _ in open(reqlog))
    t0 = time.time()
    r = subprocess.run(["/usr/bin/time", "-f", "WMAPRSS %M"] + cmd, capture_output=True, text=True)
    secs = time.time() - t0
    reqs = sum(1 for _ in open(reqlog)) - before
    m = re.search(r"WMAPRSS (\d+)", r.stderr)
    rss = int(m.group(1)) / 1024.0 if m else None
    shown = "kubectl-wmap --kubeconfig KC audit -A -o json"
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = None
    # exit 1 is the CI gate (Deny or Warn policies violated), not a failure of the command
    if r.returncode not in (0, 1) or not out:
        R.add("audit-live", "kubectl wmap audit -A: 10,000 workloads x 20 policies", None, "s", "<= 10", False,
              shown, note="exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
        return
    R.raw["audit-live-plugin"] = {"seconds": secs, "rss_mib": rss, "requests": reqs, "checked": out.get("checked"),
                                  "violations": len(out.get("violations", [])), "loadavg": os.getloadavg()}
    R.add("audit-live", "kubectl wmap audit -A: 10,000 workloads x 20 policies", round(secs, 2), "s", "<= 10",
          secs <= 10, shown, note="%s checked, %d violations, load average %.1f" % (
              out.get("checked"), len(out.get("violations", [])), os.getloadavg()[0]))
    R.add("audit-live", "kubectl wmap audit -A: peak RSS", rss, "MiB", "<= 200", rss is not None and rss <= 200, shown)
    R.add("audit-live", "kubectl wmap audit -A: API requests", reqs, "", "pages, not workloads",
          reqs < 200, shown, note="from the simulator's request log")
