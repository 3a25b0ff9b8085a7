#!/usr/bin/env python3
"""Writes the snapshot clusters of the fit golden cases (clusters/NAME/nodes.json, pods.json),
in the shape `kubectl get nodes -o json` and `kubectl get pods -A -o json` print. Run it from
this folder after changing a cluster on purpose; the expected answers in ../cases/fit-*.out are
written by hand from the scheduler's rules (see README.md here)."""
import json
import os

def node(name, gpu=8, cpu="64", mem="512Gi", pods="110", ready=True, cordoned=False,
         taints=None, labels=None, alloc=True):
    res = {"cpu": cpu, "memory": mem, "pods": pods}
    if gpu is not None:
        res["nvidia.com/gpu"] = str(gpu)
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **(labels or {}))},
         "spec": {},
         "status": {"capacity": dict(res),
                    "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    if alloc:
        n["status"]["allocatable"] = dict(res)
    if cordoned:
        n["spec"]["unschedulable"] = True
    if taints:
        n["spec"]["taints"] = taints
    return n

def pod(name, node_name, phase="Running", gpu=None, cpu=None, mem=None, ns="default", limits_only=False):
    req = {}
    if gpu is not None:
        req["nvidia.com/gpu"] = str(gpu)
    if cpu is not None:
        req["cpu"] = cpu
    if mem is not None:
        req["memory"] = mem
    res = {"limits": req} if limits_only else {"requests": req}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": "uid-" + name},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x", "resources": res}]},
            "status": {"phase": phase}}

def write(name, nodes, pods):
    os.makedirs(os.path.join("clusters", name), exist_ok=True)
    for file, kind, items in (("nodes.json", "NodeList", nodes), ("pods.json", "PodList", pods)):
        with open(os.path.join("clusters", name, file), "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, indent=1, sort_keys=True)
            f.write("\n")

# pool: four empty 8-GPU nodes; a finished pod (Succeeded) and an unbound Pending pod count for nothing.
write("pool", [node("gpu-%d" % i) for i in range(4)],
      [pod("done", "gpu-0", phase="Succeeded", gpu=8), pod("waiting", "", phase="Pending", gpu=8)])

# fragmented: 2 empty 8-GPU nodes, 6 with 4 GPUs taken (one by a limit only): 40 GPUs free,
# but only 2 nodes can hold an 8-GPU pod.
frag_pods = [pod("busy-%d" % i, "gpu-%d" % i, gpu=4, cpu="4", mem="16Gi") for i in range(2, 7)]
frag_pods.append(pod("busy-7", "gpu-7", gpu=4, limits_only=True))
write("fragmented", [node("gpu-%d" % i) for i in range(8)], frag_pods)

# tainted: four 8-GPU nodes tainted dedicated=gpu:NoSchedule, one CPU node without GPUs,
# one GPU node whose taint only prefers (PreferNoSchedule does not filter) but has 2 GPUs.
write("tainted",
      [node("gpu-%d" % i, taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]) for i in range(4)]
      + [node("cpu-0", gpu=None), node("small-0", gpu=2, taints=[{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}])],
      [])

# labelled: GPU models and rack labels for selectors and affinity.
write("labelled",
      [node("a100-0", labels={"gpu.model": "a100", "rack": "1", "zone": "z1"}),
       node("a100-1", labels={"gpu.model": "a100", "rack": "2", "zone": "z1"}),
       node("h100-0", labels={"gpu.model": "h100", "rack": "3", "zone": "z2"}),
       node("h100-1", labels={"gpu.model": "h100", "rack": "4", "zone": "z2", "maintenance": "soon"}),
       node("h100-2", labels={"gpu.model": "h100", "rack": "12", "zone": "z2"})],
      [])

# degraded: one cordoned, one NotReady, two healthy 8-GPU nodes (one reports only capacity).
write("degraded",
      [node("gpu-0", cordoned=True), node("gpu-1", ready=False), node("gpu-2"), node("gpu-3", alloc=False)],
      [])

# cpu: three 4-CPU nodes without GPUs; one already runs a 1-CPU pod; pod slots are 110.
write("cpu", [node("cpu-%d" % i, gpu=None, cpu="4", mem="16Gi") for i in range(3)],
      [pod("web", "cpu-0", cpu="1", mem="1Gi")])

# full: two empty 8-GPU nodes that allow only 1 pod each, one already used.
write("full", [node("gpu-0", pods="1"), node("gpu-1", pods="1")], [pod("other", "gpu-1", cpu="1")])

# bins: two 10-CPU nodes, for the JobSet whose pods (5, 4, 3, 3, 3, 2 CPUs) fill them exactly
# ({5, 3, 2} and {4, 3, 3}), which largest-first best fit does not find.
write("bins", [node("bin-a", gpu=None, cpu="10", mem="64Gi"), node("bin-b", gpu=None, cpu="10", mem="64Gi")], [])
