"""The `audit` step of make bench: `kubectl wmap audit -f DIR --policy FILE` over a
10,000-file directory tree (the CI gate of a big GitOps repository), goal <= 5 s.

The tree is generated here, never kept in git: 100 folders of 100 files, JobSets,
PyTorchJobs and RayClusters in turn (every tenth file a two-document file with a ConfigMap,
which is skipped), in 20 namespaces, against 20 policies (Deny, Warn and Audit, default and
override, some mutation-only ones that override what a checking policy wants, so that some
violations survive the mutation). Python 3 standard library only."""
import json
import os
import shutil

N_FILES = 10000
PER_DIR = 100

JOBSET = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js-%(i)d, namespace: team-%(ns)d, labels: {app: train}}
spec:
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        template:
          spec:
            containers: [{name: main, image: trainer:1, resources: {limits: {nvidia.com/gpu: 8}}}]
  - name: workers
    replicas: 4
    template:
      spec:
        template:
          metadata: {labels: {role: worker}}
          spec:
            containers: [{name: main, image: trainer:1, resources: {limits: {nvidia.com/gpu: 8}}}]
"""

PYTORCH = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt-%(i)d, namespace: team-%(ns)d}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: pytorch:2}]
    Worker:
      replicas: 3
      template:
        spec:
          containers: [{name: pytorch, image: pytorch:2}]
"""

RAY = """{"apiVersion": "ray.io/v1", "kind": "RayCluster",
 "metadata": {"name": "ray-%(i)d", "namespace": "team-%(ns)d"},
 "spec": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray:2"}]}}},
          "workerGroupSpecs": [{"groupName": "gpu", "replicas": 4,
            "template": {"spec": {"containers": [{"name": "w", "image": "ray:2"}]}}}]}}
"""

CONFIGMAP = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm-%(i)d, namespace: team-%(ns)d}
data: {k: v}
"""


def policies():
    docs = []
    actions = ["[Deny]", "[Warn]", "[Audit]", "[Warn, Audit]", "[Deny, Audit]"]
    for p in range(16):
        mode = "override" if p % 2 else "default"
        docs.append("""apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: check-%d}
spec:
  match: {namespaces: ["team-%d*"]}
  mode: %s
  validationActions: %s
  podTemplate: {labels: {policy-%d: "yes"}, priorityClassName: prio-%d}
""" % (p, p % 10, mode, actions[p % len(actions)], p, p % 3))
    # Mutation-only policies later in the file that override what check-1 and check-3 want.
    for p in range(4):
        docs.append("""apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: team-override-%d}
spec:
  match: {namespaces: ["team-%d"]}
  mode: override
  podTemplate: {priorityClassName: team-own}
""" % (p, 1 + 2 * (p % 2)))
    return "---\n".join(docs)


def make_tree(root):
    if os.path.isdir(root):
        shutil.rmtree(root)
    for i in range(N_FILES):
        d = os.path.join(root, "dir-%03d" % (i // PER_DIR), "sub")
        if i % PER_DIR == 0:
            os.makedirs(d)
        v = {"i": i, "ns": i % 20}
        kind = i % 3
        if kind == 2:
            text, ext = RAY % v, ".json"
        else:
            text, ext = (JOBSET if kind == 0 else PYTORCH) % v, ".yaml"
            if i % 10 == 0:
                text += CONFIGMAP % v
        with open(os.path.join(d, "w-%05d%s" % (i, ext)), "w") as f:
            f.write(text)


def bench_audit(a, R, hyperfine, peak_rss, run, log):
    plugin = os.path.join(a.bin, "kubectl-wmap")
    root = os.path.join(a.out, "audit-tree")
    pol = os.path.join(a.out, "audit-policies.yaml")
    make_tree(root)
    with open(pol, "w") as f:
        f.write(policies())
    cmd = [plugin, "audit", "-f", root, "--policy", pol, "-o", "json"]
    r = run(cmd)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = None
    if r.returncode not in (0, 1) or not out or out.get("checked") != N_FILES:
        R.add("audit", "offline audit of 10,000 files", None, "s", "<= 5 s", False,
              " ".join(cmd), note="failed: exit %d, %s" % (r.returncode, r.stderr.strip()[:300]))
        return
    log("audit: %d checked, %d skipped, %d violations, %d errors" % (
        out["checked"], out["skipped"], len(out["violations"]), len(out["errors"])))
    # Exit 1 is the expected answer (Deny and Warn policies are violated).
    (t,), hcmd = hyperfine(a, [" ".join(cmd)], "audit-offline", runs=5, warmup=1,
                           ignore_failure=True)
    s = t / 1000.0
    R.add("audit", "offline audit -f of a 10,000-file tree, 20 policies: wall time (median)", s, "s",
          "<= 5 s", s <= 5, hcmd,
          note="%d workloads checked, %d skipped (ConfigMaps), %d violations; CPU user+sys %.2f s" % (
              out["checked"], out["skipped"], len(out["violations"]), hyperfine.cpu_ms[0] / 1000.0))
    rss = peak_rss(cmd, runs=3)
    R.add("audit", "offline audit -f of a 10,000-file tree: peak RSS (median)", rss, "MiB",
          cmd="/usr/bin/time -f %M " + " ".join(cmd))
    R.raw["audit"] = {"offline_s": s, "peak_rss_mib": rss, "checked": out["checked"],
                      "skipped": out["skipped"], "violations": len(out["violations"])}
    shutil.rmtree(root, ignore_errors=True)
