/* Tests of check-only policies (mode: require) and of spec.limits (src/audit_limits.c):
 * figures at desired replicas, requests falling back to limits as describe counts, the
 * message naming workload, figure, limit and components, pod limits per instance, and the
 * mutation never applying what only checks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/audit.h"

static wmap_registry *reg;
static wmap_engine *eng;

static void setup(void)
{
	t_catalog_engine(&reg, &eng);
}

static void teardown(void)
{
	t_catalog_engine_free(reg, eng);
}

TestSuite(audit_limits, .init = setup, .fini = teardown);

#define HEAD "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\n"


/* A PyTorchJob of 1 master and `workers` workers with `gpus` GPUs each (limits only, as GPU
 * pods are usually written), the workers asking 16 CPUs and 512Gi. */
static json_t *pytorchjob(int workers, int gpus)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
		 "metadata: {name: llama, namespace: team-a}\n"
		 "spec:\n  pytorchReplicaSpecs:\n"
		 "    Master:\n      replicas: 1\n      template:\n        spec:\n"
		 "          containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: %d}}}]\n"
		 "    Worker:\n      replicas: %d\n      template:\n        spec:\n"
		 "          containers: [{name: pytorch, resources: {requests: {cpu: '16', memory: "
		 "512Gi}, limits: {nvidia.com/gpu: %d, cpu: '32'}}}]\n",
		 gpus, workers, gpus);
	return t_yaml(text);
}

static const char *gpu_limits =
	HEAD "metadata: {name: team-a-gpus}\n"
	"spec:\n"
	"  match: {namespaces: [team-a], operations: [CREATE, UPDATE]}\n"
	"  validationActions: [Deny]\n"
	"  limits:\n"
	"    workload: {nvidia.com/gpu: 64, pods: 256, memory: 6Ti, cpu: 150}\n"
	"    pod: {nvidia.com/gpu: 8}\n";

static int check(wmap_audit_result *r, const wmap_policy_set *set, json_t *obj, unsigned op)
{
	wmap_admission_config cfg = { 0 };
	wmap_error err = { 0 };
	cfg.policies = set;
	int rc = wmap_audit_object(r, eng, &cfg, obj, op, &err);
	cr_assert(rc == 0 || rc == WMAP_EINVAL, "%s", err.message);
	return rc;
}

Test(audit_limits, a_workload_over_its_total_names_figure_limit_and_components)
{
	wmap_policy_set *set = t_policy_set(gpu_limits);
	json_t *obj = pytorchjob(11, 8); /* 12 x 8 = 96 GPUs, 176 CPUs */
	wmap_audit_result r;
	cr_assert_eq(check(&r, set, obj, WMAP_POLICY_OP_CREATE), 0);
	cr_assert_eq(r.n, 2, "GPUs and CPUs over, got %zu", r.n);
	const wmap_violation *v = &r.violations[0];
	cr_expect_str_eq(v->message, "policy team-a-gpus: PyTorchJob team-a/llama: 96 nvidia.com/gpu "
				     "requested (limit 64): master 1 x 8 + worker 11 x 8");
	cr_expect_str_eq(v->field, "limits.workload[nvidia.com/gpu]");
	cr_expect_str_eq(v->want, "64");
	cr_expect_str_eq(v->have, "96");
	cr_expect_null(v->component, "a workload total concerns the workload as a whole");
	cr_expect_null(v->instance);
	cr_expect_eq(v->actions, WMAP_ACTION_DENY);
	/* requests win over limits: 16 CPUs a worker, the master asks for none */
	cr_expect_str_eq(r.violations[1].message, "policy team-a-gpus: PyTorchJob team-a/llama: 176 "
						  "cpu requested (limit 150): worker 11 x 16");
	cr_expect_eq(wmap_audit_worst(&r), WMAP_ACTION_DENY);
	wmap_audit_result_free(&r);
	json_decref(obj);

	/* 6 x 8 = 48 GPUs passes; memory 5 x 512Gi = 2560Gi under 6Ti */
	obj = pytorchjob(5, 8);
	cr_assert_eq(check(&r, set, obj, WMAP_POLICY_OP_CREATE), 0);
	cr_expect_eq(r.n, 0, "%s", r.n ? r.violations[0].message : "");
	cr_expect_eq(r.n_policies, 1, "the policy applies and holds");
	wmap_audit_result_free(&r);
	/* the same object scaled up on UPDATE (the policy lists UPDATE) */
	json_object_set_new(json_object_get(json_object_get(json_object_get(obj, "spec"),
							    "pytorchReplicaSpecs"),
					    "Worker"),
			    "replicas", json_integer(8));
	cr_assert_eq(check(&r, set, obj, WMAP_POLICY_OP_UPDATE), 0);
	cr_assert_eq(r.n, 1);
	cr_expect_str_eq(r.violations[0].have, "72");
	wmap_audit_result_free(&r);
	json_decref(obj);
	wmap_policy_set_free(set);
}

Test(audit_limits, pods_memory_and_any_one_pod)
{
	wmap_policy_set *set = t_policy_set(gpu_limits);
	json_t *obj = pytorchjob(300, 16);
	wmap_audit_result r;
	cr_assert_eq(check(&r, set, obj, WMAP_POLICY_OP_CREATE), 0);
	size_t pods = r.n, pod_gpu = r.n, mem = r.n;
	for (size_t i = 0; i < r.n; i++) {
		if (!strcmp(r.violations[i].field, "limits.workload[pods]"))
			pods = i;
		if (!strcmp(r.violations[i].field, "limits.pod[nvidia.com/gpu]") && pod_gpu == r.n)
			pod_gpu = i;
		if (!strcmp(r.violations[i].field, "limits.workload[memory]"))
			mem = i;
	}
	cr_assert_lt(pods, r.n);
	cr_expect_str_eq(r.violations[pods].message, "policy team-a-gpus: PyTorchJob team-a/llama: "
						     "301 pods (limit 256): master 1 + worker 300");
	cr_assert_lt(mem, r.n);
	cr_expect_str_eq(r.violations[mem].have, "150Ti", "in the family it was written in");
	cr_assert_lt(pod_gpu, r.n);
	cr_expect_str_eq(r.violations[pod_gpu].message, "policy team-a-gpus: PyTorchJob team-a/llama: "
							"component master: 16 nvidia.com/gpu per pod "
							"(limit 8)");
	cr_expect_str_eq(r.violations[pod_gpu].component, "master");
	cr_expect_str_eq(r.violations[pod_gpu].field, "limits.pod[nvidia.com/gpu]");
	/* GPUs, CPUs, pods, memory over in total; master and worker pods over */
	cr_expect_eq(r.n, 6, "got %zu", r.n);
	wmap_audit_result_free(&r);
	json_decref(obj);
	wmap_policy_set_free(set);
}

Test(audit_limits, instances_components_and_zero_replicas)
{
	/* A JobSet: the pod limit names the instance; a replicated job at 0 replicas makes no
	 * pods; match.components limits what is counted. */
	json_t *obj = t_yaml("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
			     "metadata: {name: js, namespace: team-a}\n"
			     "spec:\n  replicatedJobs:\n"
			     "  - {name: big, replicas: 2, template: {spec: {template: {spec: "
			     "{containers: [{name: c, resources: {limits: {amd.com/gpu: 4}}}]}}}}}\n"
			     "  - {name: idle, replicas: 0, template: {spec: {template: {spec: "
			     "{containers: [{name: c, resources: {limits: {amd.com/gpu: 64}}}]}}}}}\n");
	wmap_policy_set *set = t_policy_set(HEAD "metadata: {name: amd}\n"
					     "spec:\n"
					     "  match: {components: [replicatedjob]}\n"
					     "  validationActions: [Warn]\n"
					     "  limits: {workload: {amd.com/gpu: 4}, pod: {amd.com/gpu: 2}}\n"
					     "---\n" HEAD "metadata: {name: other-component}\n"
					     "spec:\n"
					     "  match: {components: [nothing]}\n"
					     "  validationActions: [Deny]\n"
					     "  limits: {workload: {amd.com/gpu: 0}}\n");
	wmap_audit_result r;
	cr_assert_eq(check(&r, set, obj, WMAP_POLICY_OP_CREATE), 0);
	cr_assert_eq(r.n, 2, "got %zu", r.n);
	cr_expect_str_eq(r.violations[0].message, "policy amd: JobSet team-a/js: 8 amd.com/gpu "
						  "requested (limit 4): replicatedjob/big 2 x 4");
	cr_expect_str_eq(r.violations[1].message, "policy amd: JobSet team-a/js: component "
						  "replicatedjob (instance big): 4 amd.com/gpu per "
						  "pod (limit 2)");
	cr_expect_str_eq(r.violations[1].instance, "big");
	cr_expect_eq(wmap_audit_worst(&r), WMAP_ACTION_WARN,
		     "other-component counts no component: nothing over 0");
	wmap_audit_result_free(&r);
	json_decref(obj);
	wmap_policy_set_free(set);
}

Test(audit_limits, exact_quantities_and_bad_ones)
{
	/* 4 x 1500m = 6 CPUs exactly, under a limit of "6"; 7 pods of 500Mi = 3500Mi over 3Gi */
	json_t *obj = t_yaml("apiVersion: apps/v1\nkind: Deployment\n"
			     "metadata: {name: web, namespace: a}\n"
			     "spec:\n  replicas: 4\n  template:\n    spec:\n      containers:\n"
			     "      - {name: c, resources: {requests: {cpu: 1500m, memory: 500Mi}}}\n");
	wmap_policy_set *set = t_policy_set(HEAD "metadata: {name: exact}\n"
					     "spec:\n"
					     "  validationActions: [Audit]\n"
					     "  limits: {workload: {cpu: '6', memory: 1.9Gi}}\n");
	wmap_audit_result r;
	cr_assert_eq(check(&r, set, obj, WMAP_POLICY_OP_CREATE), 0);
	cr_assert_eq(r.n, 1, "only memory is over, got %zu", r.n);
	cr_expect_str_eq(r.violations[0].message, "policy exact: Deployment a/web: 2000Mi memory "
						  "requested (limit 1.9Gi): deployment 4 x 500Mi");
	wmap_audit_result_free(&r);
	json_decref(obj);

	/* a malformed quantity in the object: an error naming its path, never a pass */
	obj = t_yaml("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: a}\n"
		     "spec:\n  template:\n    spec:\n      containers:\n"
		     "      - {name: c, resources: {requests: {cpu: lots}}}\n");
	wmap_admission_config cfg = { 0 };
	wmap_error err = { 0 };
	cfg.policies = set;
	cr_expect_eq(wmap_audit_object(&r, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, ".spec.template.spec.containers[0].resources.requests.cpu"),
		  "%s", err.message);
	wmap_audit_result_free(&r);
	json_decref(obj);
	wmap_policy_set_free(set);
}

Test(audit_limits, require_is_judged_as_written_and_never_mutated)
{
	json_t *obj = t_yaml("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
			     "metadata: {name: low, namespace: team-a}\n"
			     "spec:\n  replicatedJobs:\n"
			     "  - {name: main, replicas: 1, template: {spec: {template: {spec: "
			     "{priorityClassName: low, containers: [{name: c}]}}}}}\n");
	wmap_policy_set *set = t_policy_set(HEAD "metadata: {name: training-priority}\n"
					     "spec:\n"
					     "  mode: require\n"
					     "  validationActions: [Deny]\n"
					     "  podTemplate: {priorityClassName: training-high, labels: "
					     "{team: a}}\n");
	wmap_admission_config cfg = { 0 };
	wmap_audit_result r;
	wmap_error err = { 0 };
	json_t *admitted = NULL, *patch = NULL, *warnings = NULL;
	cfg.policies = set;
	/* the mutation writes nothing of a require policy */
	cr_assert_eq(wmap_admission_mutate(&patch, &warnings, NULL, eng, &cfg, obj, "CREATE", NULL,
					   &err),
		     0, "%s", err.message);
	char *text = json_dumps(patch, JSON_COMPACT);
	cr_expect_null(strstr(text, "training-high"), "%s", text);
	cr_expect_null(strstr(text, "\"team\""), "%s", text);
	free(text);
	/* so the object as admitted violates it, each field as override would word it */
	cr_assert_eq(wmap_audit_admitted(&admitted, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err), 0);
	cr_assert_eq(wmap_audit_object(&r, eng, &cfg, admitted, WMAP_POLICY_OP_CREATE, &err), 0);
	cr_assert_eq(r.n, 2);
	cr_expect_str_eq(r.violations[0].message, "policy training-priority: component replicatedjob "
						  "(instance main): label team must be \"a\" (not set)");
	cr_expect_str_eq(r.violations[1].message, "policy training-priority: component replicatedjob "
						  "(instance main): priorityClassName must be "
						  "\"training-high\" (found \"low\")");
	wmap_audit_result_free(&r);
	json_decref(admitted);
	json_decref(patch);
	json_decref(warnings);
	json_decref(obj);
	wmap_policy_set_free(set);
}

Test(audit_limits, an_uncovered_kind_is_skipped_whatever_the_policies_match)
{
	json_t *cm = t_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n");
	wmap_policy_set *set = t_policy_set(HEAD "metadata: {name: jobsets-only}\n"
					     "spec:\n"
					     "  match: {kinds: [\"JobSet.jobset.x-k8s.io\"]}\n"
					     "  mode: require\n"
					     "  validationActions: [Deny]\n"
					     "  podTemplate: {priorityClassName: high}\n");
	wmap_admission_config cfg = { 0 };
	wmap_audit_result r;
	wmap_error err = { 0 };
	cfg.policies = set;
	cr_expect_eq(wmap_audit_object(&r, eng, &cfg, cm, WMAP_POLICY_OP_CREATE, &err), WMAP_ENODEF,
		     "skipped, not checked");
	wmap_audit_result_free(&r);
	json_decref(cm);
	wmap_policy_set_free(set);
}
