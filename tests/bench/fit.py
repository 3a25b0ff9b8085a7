"""`fit -f` over a 5,000-node, 100,000-pod snapshot (issue 25), for run.py's "fit" step.

The snapshot is what `kubectl get nodes -o json` and `kubectl get pods -A -o json` print for
such a cluster, with the bulk a real one carries: nodes with a few dozen labels, taints on
some, a status with addresses, node info and a list of cached images; pods with labels,
owner references, two containers (env, ports, probes, mounts) and a status with conditions
and container statuses. 20 pods per node, one of them holding 4 of the node's 8 GPUs on
4,900 nodes, so only the other 100 nodes can take an 8-GPU pod: the workload (a PyTorchJob
of 1 master and 63 workers, 8 GPUs each) fits only if all 64 land on those 100 nodes, which
the slot count allows and the placement must find. The figures: wall time (hyperfine) and
peak RSS; the check (verdict yes, 64 pods placed, none on a fragmented node) makes sure the
time is that of a right answer."""
import json
import os

N_NODES = 5000
PODS_PER_NODE = 20
FREE_NODES = 100  # nodes with all 8 GPUs free
WORKERS = 63

WORKLOAD = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: big-train, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
          containers:
          - name: pytorch
            image: nvcr.io/nvidia/pytorch:24.10-py3
            resources: {requests: {cpu: "16", memory: 128Gi}, limits: {nvidia.com/gpu: 8}}
    Worker:
      replicas: %d
      template:
        spec:
          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
          containers:
          - name: pytorch
            image: nvcr.io/nvidia/pytorch:24.10-py3
            resources: {requests: {cpu: "16", memory: 128Gi}, limits: {nvidia.com/gpu: 8}}
""" % WORKERS


def node(i):
    name = "node-%04d" % i
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/zone": "z%d" % (i % 3),
              "topology.kubernetes.io/region": "r1", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
              "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81559", "rack": "rack-%03d" % (i // 40)}
    labels.update({"feature.node.kubernetes.io/cpu-feature-%02d" % k: "true" for k in range(20)})
    res = {"cpu": "192", "memory": "2048Gi", "pods": "110", "nvidia.com/gpu": "8", "ephemeral-storage": "3500Gi",
           "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "u-%s" % name, "labels": labels,
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"providerID": "aws:///z/i-%08x" % i,
                     "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            "status": {"capacity": res, "allocatable": res,
                       "conditions": [{"type": t, "status": "False", "reason": "Kubelet" + t,
                                       "lastHeartbeatTime": "2026-12-01T10:00:00Z"} for t in
                                      ("MemoryPressure", "DiskPressure", "PIDPressure")]
                       + [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                           "lastHeartbeatTime": "2026-12-01T10:00:00Z"}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.%d.%d" % (i // 250, i % 250)},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.31.2", "containerRuntimeVersion": "containerd://1.7.22",
                                    "osImage": "Ubuntu 22.04.5 LTS", "kernelVersion": "6.8.0-1015-aws"},
                       "images": [{"names": ["registry.example.com/team/image-%02d@sha256:%064x" % (k, k),
                                             "registry.example.com/team/image-%02d:v%d" % (k, k)],
                                   "sizeBytes": 1000000 * (k + 1)} for k in range(12)]}}


def pod(n, k):
    nd = "node-%04d" % n
    name = "job-%04d-%02d" % (n, k)
    gpu = k == 0 and n >= FREE_NODES  # one 4-GPU pod on every node but the first 100
    res = {"requests": {"cpu": "2", "memory": "8Gi"}}
    if gpu:
        res["limits"] = {"nvidia.com/gpu": "4"}
    container = {"name": "main", "image": "registry.example.com/team/app:v3", "resources": res,
                 "env": [{"name": "VAR_%d" % e, "value": "value-%d" % e} for e in range(6)],
                 "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                 "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 10},
                 "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    side = {"name": "sidecar", "image": "registry.example.com/proxy:v1",
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "team-%d" % (n % 20), "uid": "u-%s" % name,
                         "labels": {"app": "job-%04d" % n, "batch.kubernetes.io/job-name": "job-%04d" % n},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "job-%04d" % n,
                                              "uid": "u-job-%04d" % n, "controller": True}]},
            "spec": {"nodeName": nd, "containers": [container, side], "restartPolicy": "Never",
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                     "volumes": [{"name": "data", "emptyDir": {}}]},
            "status": {"phase": "Running", "podIP": "10.1.%d.%d" % (n // 250, n % 250),
                       "conditions": [{"type": t, "status": "True"} for t in
                                      ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                       "containerStatuses": [{"name": c, "ready": True, "restartCount": 0,
                                              "state": {"running": {"startedAt": "2026-12-01T09:00:00Z"}}}
                                             for c in ("main", "sidecar")]}}


def make_snapshot(d):
    os.makedirs(os.path.join(d, "big"), exist_ok=True)
    with open(os.path.join(d, "big", "nodes.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": [node(i) for i in range(N_NODES)]}, f, indent=4)
    with open(os.path.join(d, "big", "pods.json"), "w") as f:
        # Written a node at a time: the whole list held in Python would take gigabytes.
        f.write('{"apiVersion": "v1", "kind": "List", "items": [\n')
        for n in range(N_NODES):
            for k in range(PODS_PER_NODE):
                if n or k:
                    f.write(",\n")
                json.dump(pod(n, k), f, indent=4)
        f.write("\n]}\n")


def bench_fit(a, R, hyperfine, peak_rss, run, log):
    plugin = os.path.join(a.bin, "kubectl-wmap")
    d = os.path.join(a.out, "fit")
    make_snapshot(d)
    wl = os.path.join(d, "big-train.yaml")
    with open(wl, "w") as f:
        f.write(WORKLOAD)
    sizes = sum(os.path.getsize(os.path.join(d, "big", x)) for x in ("nodes.json", "pods.json"))
    log("fit: %d nodes, %d pods (%d MB of JSON)" % (N_NODES, N_NODES * PODS_PER_NODE, sizes >> 20))
    cmd = [plugin, "fit", "-f", wl, "--snapshot", d, "-o", "json"]
    r = run(cmd)
    try:
        out = json.loads(r.stdout)["contexts"]["big"]
        placed = out.get("placement", [])
        ok = (r.returncode == 0 and out["verdict"] == "yes" and len(placed) == WORKERS + 1 and
              all(int(p["node"][5:]) < FREE_NODES for p in placed))
    except (ValueError, KeyError, TypeError):
        ok, out = False, None
    if not ok:
        R.add("fit", "fit -f over 5,000 nodes / 100,000 pods", None, "s", "<= 2 s", False, " ".join(cmd),
              note="wrong answer: exit %d, %s %s" % (r.returncode, (out or {}).get("why"), r.stderr.strip()[:300]))
        return
    (t,), hcmd = hyperfine(a, [" ".join(cmd)], "fit", runs=5, warmup=1)
    s = t / 1000.0
    R.add("fit", "fit -f, snapshot of 5,000 nodes and 100,000 pods: wall time (median)", s, "s", "<= 2 s",
          s <= 2, hcmd, note="%d MB of JSON; 64 8-GPU pods placed on the 100 unfragmented nodes; CPU user+sys %.2f s"
          % (sizes >> 20, hyperfine.cpu_ms[0] / 1000.0))
    rss = peak_rss(cmd, runs=3)
    R.add("fit", "fit -f, snapshot of 5,000 nodes and 100,000 pods: peak RSS (median)", rss, "MiB", "<= 500 MB",
          rss * 1.048576 <= 500, "/usr/bin/time -f %M " + " ".join(cmd))
    R.raw["fit"] = {"wall_s": s, "peak_rss_mib": rss, "json_mb": sizes >> 20, "nodes": N_NODES,
                    "pods": N_NODES * PODS_PER_NODE}
    for x in ("nodes.json", "pods.json"):
        os.unlink(os.path.join(d, "big", x))
