"""`get --all-types -A -o wide` over 5,000 JobSets and 50,000 pods (issue 16, point 5), for
run.py's "wide" step.

The cluster is preloaded into apiserver-sim: 5,000 JobSets in 10 namespaces, each with 2
replicated jobs (one Job each) of 5 pods, 10,000 Jobs and 50,000 Pods with their controller
owner references and a Ready condition on 4 of every 5 pods. The figures: the wall time of
the command (hyperfine), its peak RSS, and the requests it made (from the simulator's
--log): one paged list per served type, one for the Jobs between JobSets and pods, one for
the pods, and no request naming a single object. The row check (every JobSet 8/10 ready,
10 GPUs) makes sure the time is that of a right answer."""
import json
import os
import re
import signal
import subprocess
import time

N_WORKLOADS = 5000
PODS_PER_JOB = 5
NAMESPACES = 10


def make_cluster(d):
    """One file per namespace (the simulator's --load reads at most a million YAML nodes a
    file); returns the paths, the namespaces' first."""
    paths = [os.path.join(d, "namespaces.json")]
    with open(paths[0], "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns-%d" % i}}
            for i in range(NAMESPACES)]}, f)
    per_ns = [[] for _ in range(NAMESPACES)]
    for w in range(N_WORKLOADS):
        items = per_ns[w % NAMESPACES]
        ns, js = "ns-%d" % (w % NAMESPACES), "js-%05d" % w
        items.append({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                      "metadata": {"name": js, "namespace": ns, "uid": "u-" + js},
                      "spec": {"replicatedJobs": [
                          {"name": rj, "replicas": 1, "template": {"spec": {
                              "parallelism": PODS_PER_JOB, "completions": PODS_PER_JOB,
                              "template": {"spec": {"containers": [{
                                  "name": "main", "image": "trainer",
                                  "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}}
                          for rj in ("leader", "workers")]}})
        for rj in ("leader", "workers"):
            job = "%s-%s-0" % (js, rj)
            items.append({"apiVersion": "batch/v1", "kind": "Job",
                          "metadata": {"name": job, "namespace": ns, "uid": "u-" + job + "-" + ns,
                                       "ownerReferences": [{
                                           "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                           "name": js, "uid": "u-" + js, "controller": True}]},
                          "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "trainer"}]}}}})
            for p in range(PODS_PER_JOB):
                items.append({"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "%s-%d" % (job, p), "namespace": ns,
                                           "ownerReferences": [{
                                               "apiVersion": "batch/v1", "kind": "Job", "name": job,
                                               "uid": "u-" + job + "-" + ns, "controller": True}]},
                              "spec": {"containers": [{"name": "main", "image": "trainer"}]},
                              "status": {"phase": "Running", "conditions": [
                                  {"type": "Ready", "status": "True" if p < 4 else "False"}]}})
    for i, items in enumerate(per_ns):
        paths.append(os.path.join(d, "cluster-ns-%d.json" % i))
        with open(paths[-1], "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    return paths


def bench_wide(a, R, hyperfine, peak_rss, run, log, jobset_crd):
    sim = os.path.join(a.bin, "apiserver-sim")
    plugin = os.path.join(a.bin, "kubectl-wmap")
    d = os.path.join(a.out, "wide")
    os.makedirs(d, exist_ok=True)
    kc, rf, reqlog = (os.path.join(d, n) for n in ("kubeconfig", "ready", "requests.log"))
    for f in (rf, reqlog):
        if os.path.exists(f):
            os.unlink(f)
    files = make_cluster(d)
    log("wide: %d JobSets, %d Jobs, %d pods (%d MB)" % (N_WORKLOADS, 2 * N_WORKLOADS,
        2 * N_WORKLOADS * PODS_PER_JOB, sum(os.path.getsize(x) for x in files) >> 20))
    logf = open(os.path.join(d, "sim.log"), "w")
    t0 = time.time()
    p = subprocess.Popen([sim, "--port", "0", "--kubeconfig-out", kc, "--ready-file", rf, "--log", reqlog,
                          "--load", jobset_crd] + [x for f in files for x in ("--load", f)],
                         stdout=logf, stderr=logf)
    try:
        while not os.path.exists(rf) and p.poll() is None and time.time() - t0 < 600:
            time.sleep(0.05)
        if not os.path.exists(rf):
            R.add("wide", "get --all-types -A -o wide", "not measurable", "", note="apiserver-sim did not start")
            return
        log("wide: simulator loaded in %.1f s" % (time.time() - t0))
        env = dict(os.environ, KUBECONFIG=kc, WMAP_CACHE_DIR=os.path.join(d, "cache"))
        cmd = [plugin, "get", "--all-types", "-A", "-o", "wide", "--kubeconfig", kc]
        before = sum(1 for _ in open(reqlog))
        r = run(cmd, env=env)
        lines = open(reqlog).read().splitlines()[before:]
        rows = r.stdout.splitlines()[1:]
        right = sum(1 for x in rows if re.search(r" JobSet\.jobset\.x-k8s\.io .* 8/10 +10 +replicatedjob\[leader,workers\]$", x))
        paths = [x.split()[2] for x in lines if len(x.split()) > 2]
        lists = {}
        for path in paths:
            m = re.match(r"(/api[s]?/.*?)\?", path)
            if m and "limit=" in path:
                lists[m.group(1)] = lists.get(m.group(1), 0) + 1
        singles = [x for x in paths if re.search(r"/(jobsets|jobs|pods)/[^/?]+", x)]
        R.raw["wide"] = {"rc": r.returncode, "stderr": r.stderr[-400:], "requests": len(lines),
                         "lists": lists, "single_object_requests": singles[:20], "rows": len(rows),
                         "right_rows": right}
        R.add("wide", "get --all-types -A -o wide: requests", len(lines), "", "pages, not workloads",
              not singles and r.returncode == 0, " ".join(cmd),
              note="; ".join("%s %d pages" % (k, v) for k, v in sorted(lists.items())))
        R.add("wide", "rows with the right PODS/GPU/COMPONENTS", right, "of %d" % N_WORKLOADS,
              "all", right == N_WORKLOADS)
        if r.returncode != 0:
            return
        (t,), hcmd = hyperfine(a, [" ".join(cmd)], "wide", runs=3, warmup=1)
        R.add("wide", "get --all-types -A -o wide (5,000 JobSets, 50,000 pods)", t, "ms", cmd=hcmd)
        R.add("wide", "get --all-types -A -o wide: peak RSS", peak_rss(cmd, runs=1, env=env), "MiB",
              cmd="/usr/bin/time -f %M " + " ".join(cmd))
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
        logf.close()
