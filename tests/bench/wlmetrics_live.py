"""The leader's workload metrics over 5,000 workloads and 50,000 pods (issue 23), for run.py's
"workload-metrics" step.

apiserver-sim is preloaded (--load) with 5,000 workloads in 20 namespaces (JobSets,
PyTorchJobs and RayClusters in turn, each a fixture of tests/fixtures without its status)
and 10 pods each: a PyTorchJob's and a RayCluster's owned by the workload, a JobSet's by one
of its Jobs (a second hop), labelled as their controllers label them. wmap-webhook runs
against it with --kubeconfig and holds the Lease. Measured:
- time to the first full exposition: from the webhook's start to /metrics/workloads carrying
  every workload and every pod (wmap_exporter_workloads, wmap_exporter_pods on /metrics);
- the scrape of /metrics/workloads: wall time of a GET (median of 5), its size and series;
- the webhook's RSS (VmRSS, VmHWM) with everything in memory;
- freshness under 10 changes a second: for 10 s, a PyTorchJob's Worker replicas are patched
  every 100 ms (merge patch through the simulator's API) while a poller scrapes
  /metrics/workloads back to back; a change's latency is from its PATCH answer to the end of
  the first scrape that shows it (an upper bound: a scrape takes time itself)."""
import json
import os
import re
import signal
import ssl
import statistics
import subprocess
import threading
import time
import urllib.request
import zlib

N_WORKLOADS = 5000
PODS_EACH = 10
NAMESPACES = 20
CHANGES_PER_S = 10
CHANGE_SECONDS = 10
FIXTURES = [("jobset.x-k8s.io/v1alpha2", "JobSet", "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/created.yaml"),
            ("kubeflow.org/v1", "PyTorchJob", "tests/fixtures/kubeflow-org-pytorchjob-v1/running.yaml"),
            ("ray.io/v1", "RayCluster", "tests/fixtures/ray-io-raycluster-v1/running.yaml")]


def pod(name, ns, uid, ref, labels, gpu):
    res = {"requests": {"cpu": "1", "memory": "4Gi"}}
    if gpu:
        res["limits"] = {"nvidia.com/gpu": str(gpu)}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": uid, "labels": labels,
                         "ownerReferences": [ref]},
            "spec": {"nodeName": "node-%d" % (zlib.crc32(name.encode()) % 100),
                     "containers": [{"name": "main", "image": "busybox", "resources": res}]},
            "status": {"phase": "Running"}}


def ref(api, kind, name, uid):
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": True}


def pods_of(w, o, api, kind, ns):
    """The pods (and Jobs) a controller would make for workload number w."""
    name, uid = o["metadata"]["name"], o["metadata"]["uid"]
    out, extra = [], []
    if kind == "JobSet":
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": name + "-workers-0", "namespace": ns, "uid": uid + "-j",
                            "ownerReferences": [ref(api, kind, name, uid)]},
               "spec": {"template": {"spec": {"restartPolicy": "Never",
                                              "containers": [{"name": "main", "image": "busybox"}]}}}}
        extra.append(job)
        for i in range(PODS_EACH):
            out.append(pod("%s-workers-0-%d" % (name, i), ns, "%s-p%d" % (uid, i),
                           ref("batch/v1", "Job", job["metadata"]["name"], job["metadata"]["uid"]),
                           {"jobset.sigs.k8s.io/jobset-name": name,
                            "jobset.sigs.k8s.io/replicatedjob-name": "workers"}, 4))
    elif kind == "PyTorchJob":
        for i in range(PODS_EACH):
            out.append(pod("%s-%s-%d" % (name, "master" if i == 0 else "worker", i), ns, "%s-p%d" % (uid, i),
                           ref(api, kind, name, uid),
                           {"training.kubeflow.org/replica-type": "master" if i == 0 else "worker"}, 8))
    else:
        for i in range(PODS_EACH):
            labels = {"ray.io/cluster": name, "ray.io/node-type": "head" if i == 0 else "worker"}
            if i:
                labels["ray.io/group"] = "gpu-workers"
            out.append(pod("%s-%d" % (name, i), ns, "%s-p%d" % (uid, i), ref(api, kind, name, uid), labels, 4 if i else 0))
    return extra, out


def make_cluster(d, repo, pytorchjob_crd, jobset_crd):
    import yaml
    bases = []
    for api, kind, path in FIXTURES:
        with open(os.path.join(repo, path)) as f:
            o = yaml.safe_load(f)
        o.pop("status", None)
        o["metadata"] = {"labels": (o.get("metadata") or {}).get("labels") or {}}
        bases.append((api, kind, o))
    crds = [pytorchjob_crd()]
    for path in (jobset_crd, os.path.join(repo, "tests/e2e/data/live/raycluster-crd.yaml")):
        with open(path) as f:
            crds += [x for x in yaml.safe_load_all(f) if x]
    paths = [os.path.join(d, "base.json")]
    with open(paths[0], "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": crds +
                   [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-%d" % i}}
                    for i in range(NAMESPACES)]}, f)
    workloads, pods = [], []
    for w in range(N_WORKLOADS):
        api, kind, base = bases[w % 3]
        o = json.loads(json.dumps(base))
        ns = "team-%d" % (w % NAMESPACES)
        o["metadata"].update({"name": "w-%05d" % w, "namespace": ns, "uid": "u-%05d" % w})
        extra, ps = pods_of(w, o, api, kind, ns)
        workloads += [o] + extra
        pods += ps
    # At most 16 --load files of one million YAML nodes each: 4 of workloads, 10 of pods.
    for name, items, n in (("workloads", workloads, 4), ("pods", pods, 10)):
        step = (len(items) + n - 1) // n
        for i in range(n):
            paths.append(os.path.join(d, "%s-%d.json" % (name, i)))
            with open(paths[-1], "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": items[i * step:(i + 1) * step]}, f)
    return paths


def metric(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def scrape(https_get, port):
    t0 = time.perf_counter()
    status, text = https_get(port, "/metrics/workloads", timeout=60)
    return time.perf_counter() - t0, status, text


def bench_wlmetrics(a, R, Webhook, https_get, proc_status, log, repo, pytorchjob_crd, jobset_crd, crt, key):
    sim = os.path.join(a.bin, "apiserver-sim")
    d = os.path.join(a.out, "wlmetrics")
    os.makedirs(d, exist_ok=True)
    kc, rf = os.path.join(d, "kubeconfig"), os.path.join(d, "ready")
    if os.path.exists(rf):
        os.unlink(rf)
    files = make_cluster(d, repo, pytorchjob_crd, jobset_crd)
    log("workload-metrics: %d workloads, %d pods in %d namespaces (%d MB)" % (
        N_WORKLOADS, N_WORKLOADS * PODS_EACH, NAMESPACES, sum(os.path.getsize(x) for x in files) >> 20))
    logf = open(os.path.join(d, "sim.log"), "w")
    t0 = time.time()
    p = subprocess.Popen([sim, "--port", "0", "--kubeconfig-out", kc, "--ready-file", rf] +
                         [x for f in files for x in ("--load", f)], stdout=logf, stderr=logf)
    wh = None
    section = "workload-metrics"
    try:
        while not os.path.exists(rf) and p.poll() is None and time.time() - t0 < 900:
            time.sleep(0.1)
        if not os.path.exists(rf):
            R.add(section, "5,000 workloads / 50,000 pods", "not measurable", "", note="apiserver-sim did not start")
            return
        log("workload-metrics: simulator loaded in %.1f s" % (time.time() - t0))
        t_start = time.perf_counter()
        wh = Webhook(a, crt, key, "webhook-wlmetrics.log", ["--kubeconfig", kc, "--sync-timeout", "60"])
        text, full = "", None
        while time.perf_counter() - t_start < 600:
            _, text = https_get(wh.port, "/metrics", timeout=10)
            if (metric(text, "wmap_exporter_workloads") or 0) >= N_WORKLOADS and \
                    (metric(text, "wmap_exporter_pods") or 0) >= N_WORKLOADS * PODS_EACH:
                full = time.perf_counter() - t_start
                break
            time.sleep(0.1)
        cmd = "%s --kubeconfig KC (leader); GET /metrics/workloads" % wh.cmd[0]
        if full is None:
            R.add(section, "first full exposition", "not measurable", "", None, False, cmd,
                  note="not every workload and pod within 600 s: workloads %s, pods %s" % (
                      metric(text, "wmap_exporter_workloads"), metric(text, "wmap_exporter_pods")))
            return
        R.add(section, "time to the first full exposition (5,000 workloads, 50,000 pods)", full, "s", None, None, cmd,
              note="from the webhook's start: Lease, discovery, lists of 500, resolution, attribution; "
                   "last render %.2f s" % (metric(text, "wmap_exporter_render_duration_seconds") or 0))
        times, size, series = [], 0, 0
        for _ in range(5):
            dt, status, body = scrape(https_get, wh.port)
            times.append(dt)
            size = len(body)
            series = sum(1 for line in body.splitlines() if line and not line.startswith("#"))
        med = statistics.median(times)
        R.add(section, "scrape of /metrics/workloads (median of 5)", med * 1000, "ms", "<= 500", med <= 0.5, cmd,
              note="%d series, %.1f MB (uncompressed)" % (series, size / 1e6))
        st = proc_status(wh.p.pid)
        R.add(section, "leader RSS with every workload and pod (VmRSS / VmHWM)", st.get("VmRSS"), "MiB", "<= 300",
              st.get("VmRSS", 1e9) <= 300, "/proc/PID/status", note="peak %.0f MiB" % st.get("VmHWM", 0))
        fresh = freshness(a, wh, https_get, kc, log)
        if fresh:
            R.add(section, "freshness under %d changes/s (p50 / max of %d)" % (CHANGES_PER_S, fresh["n"]),
                  fresh["max"], "s", "<= 5", fresh["max"] <= 5 and fresh["missed"] == 0,
                  "PATCH a PyTorchJob's Worker replicas every 100 ms for %d s; scrape back to back" % CHANGE_SECONDS,
                  note="p50 %.2f s, %d not seen within 30 s" % (fresh["p50"], fresh["missed"]))
        R.raw[section] = {"first_full_s": full, "scrape_ms": [t * 1000 for t in times], "bytes": size,
                          "series": series, "rss": st, "freshness": fresh, "loadavg": os.getloadavg()}
    finally:
        if wh:
            wh.stop()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
        logf.close()


def freshness(a, wh, https_get, kc, log):
    text = open(kc).read()
    token = re.search(r"token: (\S+)", text).group(1)
    server = re.search(r"server: (\S+)", text).group(1)
    ctx = ssl._create_unverified_context()
    pending, lat, lock, stop = {}, [], threading.Lock(), threading.Event()

    def patch(w, replicas):
        ns = "team-%d" % (w % NAMESPACES)
        body = json.dumps({"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": replicas}}}}).encode()
        req = urllib.request.Request("%s/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs/w-%05d" % (server, ns, w),
                                     data=body, method="PATCH",
                                     headers={"Authorization": "Bearer " + token,
                                              "Content-Type": "application/merge-patch+json"})
        urllib.request.urlopen(req, context=ctx, timeout=30).read()

    def poller():
        while not stop.is_set() or pending:
            _, _, body = scrape(https_get, wh.port)
            t = time.perf_counter()
            with lock:
                for (w, r), t_sent in list(pending.items()):
                    line = ('wmap_workload_component_replicas{namespace="team-%d",workload="w-%05d",'
                            'workload_kind="PyTorchJob",workload_group="kubeflow.org",component="worker",'
                            'component_instance=""} %d\n') % (w % NAMESPACES, w, r)
                    if line in body:
                        lat.append(t - t_sent)
                        del pending[(w, r)]
                    elif t - t_sent > 30:
                        del pending[(w, r)]
                        lat.append(None)
            if stop.is_set() and not pending:
                break

    th = threading.Thread(target=poller)
    th.start()
    n = 0
    t0 = time.perf_counter()
    try:
        while n < CHANGES_PER_S * CHANGE_SECONDS:
            due = t0 + n / CHANGES_PER_S
            if time.perf_counter() < due:
                time.sleep(due - time.perf_counter())
            w = 1 + 3 * (n * 37 % (N_WORKLOADS // 3))  # PyTorchJobs are 1, 4, 7, ...
            r = 20 + n
            patch(w, r)
            with lock:
                pending[(w, r)] = time.perf_counter()
            n += 1
    finally:
        stop.set()
        th.join(timeout=120)
    seen = sorted(x for x in lat if x is not None)
    if not seen:
        return None
    log("workload-metrics: %d changes, max latency %.2f s" % (n, seen[-1]))
    return {"n": n, "p50": statistics.median(seen), "max": seen[-1], "missed": sum(1 for x in lat if x is None)}
