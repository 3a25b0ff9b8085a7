"""Big-workload inputs for the live benchmarks (run.py's "big" step, tests/e2e/live-bench.sh).

  python3 tests/bench/bigjob.py OUT_DIR [--pods 2000] [--per-job 4] [--events 10000]

writes OUT_DIR/big.json: namespace "big" with a JobSet "big" whose replicated job "workers"
has pods/per-job Jobs of per-job pods each, every Job and Pod with its controller owner
reference (uids given: apiserver-sim --load keeps them) and a Running, Ready status, as the
JobSet and Job controllers and the kubelet would have left them; and OUT_DIR/events.json:
namespace "noisy" with a small JobSet "train" (2 Jobs, 4 pods, one unschedulable) among
--events events (a third of them Warning) on 2,000 other pods' names, plus 6 Warning events
of its own. Python 3 standard library only.
"""
import json
import os
import sys
import uuid

SELECTOR = "jobset.sigs.k8s.io/jobset-name=big"


def uid(seed):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "wmap-bench/" + seed))


def ref(api, kind, name, u):
    return {"apiVersion": api, "kind": kind, "name": name, "uid": u, "controller": True,
            "blockOwnerDeletion": True}


def jobset(ns, name, rjobs):
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": ns, "uid": uid(ns + "/js/" + name)},
            "spec": {"replicatedJobs": [
                {"name": rj, "replicas": replicas, "template": {"spec": {
                    "parallelism": per, "completions": per, "template": {"spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "main", "image": "python:3.12", "resources": {
                            "requests": {"cpu": "4", "memory": "32Gi"},
                            "limits": {"nvidia.com/gpu": "8"}}}]}}}}}
                for rj, replicas, per in rjobs]}}


def job(ns, js, rj, i):
    name = "%s-%s-%d" % (js["metadata"]["name"], rj, i)
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "uid": uid(ns + "/job/" + name),
                         "labels": {"jobset.sigs.k8s.io/jobset-name": js["metadata"]["name"],
                                    "jobset.sigs.k8s.io/replicatedjob-name": rj,
                                    "jobset.sigs.k8s.io/job-index": str(i)},
                         "ownerReferences": [ref("jobset.x-k8s.io/v1alpha2", "JobSet",
                                                 js["metadata"]["name"], js["metadata"]["uid"])]},
            "spec": {"parallelism": 4, "completions": 4, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": "python:3.12"}]}}}}


def pod(ns, jb, k, node, ready=True):
    name = "%s-%d-%s" % (jb["metadata"]["name"], k, uuid.uuid5(uuid.NAMESPACE_URL, jb["metadata"]["name"] + str(k)).hex[:5])
    labels = dict(jb["metadata"]["labels"])
    labels["batch.kubernetes.io/job-name"] = jb["metadata"]["name"]
    status = {"phase": "Running", "podIP": "10.0.%d.%d" % (k % 250, k % 200), "hostIP": "10.1.0.1",
              "startTime": "2026-11-30T10:00:00Z", "qosClass": "Burstable",
              "conditions": [{"type": "PodScheduled", "status": "True"},
                             {"type": "Initialized", "status": "True"},
                             {"type": "ContainersReady", "status": "True" if ready else "False"},
                             {"type": "Ready", "status": "True" if ready else "False"}],
              "containerStatuses": [{"name": "main", "ready": ready, "restartCount": 0, "image": "python:3.12",
                                     "imageID": "docker.io/library/python@sha256:" + "0" * 64,
                                     "containerID": "containerd://" + uuid.uuid5(uuid.NAMESPACE_URL, name).hex,
                                     "started": True,
                                     "state": {"running": {"startedAt": "2026-11-30T10:00:05Z"}}}]}
    spec = {"restartPolicy": "Never", "schedulerName": "default-scheduler", "nodeName": node,
            "containers": [{"name": "main", "image": "python:3.12",
                            "command": ["python", "-m", "torch.distributed.run", "train.py"],
                            "env": [{"name": "JOB_COMPLETION_INDEX", "value": str(k)}],
                            "resources": {"requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "8"},
                                          "limits": {"nvidia.com/gpu": "8"}}}]}
    if node is None:
        del spec["nodeName"]
        status = {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/250 nodes are available: 250 Insufficient nvidia.com/gpu."}]}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": uid(ns + "/pod/" + name), "labels": labels,
                         "ownerReferences": [ref("batch/v1", "Job", jb["metadata"]["name"], jb["metadata"]["uid"])]},
            "spec": spec, "status": status}


def big(pods, per_job):
    ns = "big"
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}]
    js = jobset(ns, "big", [("workers", pods // per_job, per_job)])
    items.append(js)
    for i in range(pods // per_job):
        jb = job(ns, js, "workers", i)
        items.append(jb)
        for k in range(per_job):
            items.append(pod(ns, jb, k, "node-%d" % ((i * per_job + k) // 8)))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def event(ns, i, kind, name, u, typ, reason, count, ts, msg):
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "%s.%x" % (name, i), "namespace": ns},
            "involvedObject": {"kind": kind, "apiVersion": "v1" if kind == "Pod" else "batch/v1",
                               "name": name, "namespace": ns, "uid": u},
            "type": typ, "reason": reason, "count": count, "firstTimestamp": ts, "lastTimestamp": ts,
            "message": msg, "source": {"component": "default-scheduler"}}


def noisy(n_events):
    ns = "noisy"
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}]
    js = jobset(ns, "train", [("workers", 2, 2)])
    items.append(js)
    ours = []
    for i in range(2):
        jb = job(ns, js, "workers", i)
        items.append(jb)
        for k in range(2):
            p = pod(ns, jb, k, None if (i, k) == (1, 1) else "node-%d" % i)
            items.append(p)
            ours.append(p)
    reasons = [("Normal", "Scheduled", "Successfully assigned"), ("Normal", "Pulled", "Container image already present"),
               ("Warning", "FailedScheduling", "0/250 nodes are available: 250 Insufficient nvidia.com/gpu."),
               ("Normal", "Started", "Started container main"), ("Normal", "Created", "Created container main"),
               ("Warning", "BackOff", "Back-off restarting failed container main")]
    for i in range(n_events):
        typ, reason, msg = reasons[i % len(reasons)]
        name = "other-%d" % (i % 2000)
        items.append(event(ns, i, "Pod", name, uid(ns + "/other/" + name), typ, reason, 1 + i % 7,
                           "2026-11-30T10:%02d:%02dZ" % ((i // 60) % 60, i % 60), msg))
    p = ours[-1]
    for i in range(6):
        items.append(event(ns, 100000 + i, "Pod", p["metadata"]["name"], p["metadata"]["uid"], "Warning",
                           "FailedScheduling", 3, "2026-11-30T11:00:0%dZ" % i,
                           "0/250 nodes are available: 250 Insufficient nvidia.com/gpu."))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main(argv):
    out = argv[1] if len(argv) > 1 else "."
    opts = {"--pods": 2000, "--per-job": 4, "--events": 10000}
    for i in range(2, len(argv) - 1, 2):
        opts[argv[i]] = int(argv[i + 1])
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "big.json"), "w") as f:
        json.dump(big(opts["--pods"], opts["--per-job"]), f, separators=(",", ":"))
    with open(os.path.join(out, "events.json"), "w") as f:
        json.dump(noisy(opts["--events"]), f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
