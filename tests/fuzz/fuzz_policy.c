/* libFuzzer target: WorkloadPolicy documents and label selectors (src/policy.c). There is no
 * string selector syntax in wmap ("a=b,c in (d)"): selectors are the structured
 * {matchLabels, matchExpressions} of a policy, so this target reads YAML documents as a
 * policy set and matches every loaded policy against labels taken from the input (the
 * labels of a workload are user input, of any JSON type) and against a few fixed kinds and
 * namespaces. A set that loads is also evaluated (wmap_audit_object, src/audit_limits.c)
 * on fixed workloads, as written and as wmap's mutation admits them. Properties: no crash,
 * leak or UB; failures carry a message; matching a NULL selector is true; every violation
 * is complete; a require policy is never written; the mutation never changes what limits
 * count (the same limit violations before and after it). */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/audit.h"
#include "wmap/policy.h"
#include "wmap/yaml.h"

static wmap_registry *reg;
static wmap_engine *eng;
static json_t *workloads; /* the fixed objects the policies are evaluated on */

/* A JobSet with GPUs, a PyTorchJob with requests, limits and an init container, a
 * RayCluster with a worker group at 0 replicas. */
static const char workloads_yaml[] =
	"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
	"metadata: {name: js, namespace: team-a, labels: {tier: serving, env: prod}}\n"
	"spec:\n  replicatedJobs:\n"
	"  - {name: workers, replicas: 6, template: {spec: {template: {metadata: {labels: {a: b}},"
	" spec: {priorityClassName: low, containers: [{name: c, resources: {limits: "
	"{nvidia.com/gpu: 8, memory: 1Ti}}}]}}}}}\n"
	"---\n"
	"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: pt, namespace: prod}\n"
	"spec:\n  pytorchReplicaSpecs:\n"
	"    Master: {replicas: 1, template: {spec: {initContainers: [{name: i, resources: "
	"{requests: {cpu: '64'}}}], containers: [{name: c, resources: {requests: {cpu: 500m}}}]}}}\n"
	"    Worker: {replicas: 11, template: {spec: {schedulerName: s, containers: [{name: c, "
	"resources: {requests: {cpu: '16', amd.com/gpu: 2}, limits: {cpu: '32', amd.com/gpu: 2}}}]}}}\n"
	"---\n"
	"apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: rc, namespace: ml-1}\n"
	"spec:\n  headGroupSpec: {template: {spec: {containers: [{name: h, resources: {limits: "
	"{cpu: 2}}}]}}}\n"
	"  workerGroupSpecs:\n"
	"  - {groupName: gpu, replicas: 0, minReplicas: 0, template: {spec: {containers: [{name: w, "
	"resources: {limits: {nvidia.com/gpu: 4}}}]}}}\n"
	"  - {groupName: cpu, replicas: 3, template: {spec: {containers: [{name: w}]}}}\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	wmap_error err;
	json_object_seed(1);
	if (wmap_registry_new(&reg, &err) || wmap_registry_add_catalog(reg, &err) ||
	    wmap_engine_new(&eng, reg, &err) || wmap_engine_prepare(eng, &err) ||
	    wmap_yaml_parse(&workloads, workloads_yaml, sizeof(workloads_yaml) - 1, "workloads",
			    NULL, &err)) {
		fprintf(stderr, "fuzz_policy: set-up failed: %s\n", err.message);
		abort();
	}
	return 0;
}

/* Limit violations of r, one line each, into a new string. */
static char *limit_lines(const wmap_audit_result *r)
{
	size_t len = 1;
	for (size_t i = 0; i < r->n; i++)
		len += strlen(r->violations[i].message) + 1;
	char *s = malloc(len), *p = s;
	if (!s)
		abort();
	for (size_t i = 0; i < r->n; i++) {
		if (strncmp(r->violations[i].field, "limits.", 7) != 0)
			continue;
		size_t n = strlen(r->violations[i].message);
		memcpy(p, r->violations[i].message, n);
		p[n] = '\n';
		p += n + 1;
	}
	*p = '\0';
	return s;
}

static void check_result(const wmap_audit_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const wmap_violation *v = &r->violations[i];
		FZ_CHECK(v->policy && v->field && v->want && v->message && v->message[0] &&
				 v->actions,
			 "incomplete violation %zu", i);
		FZ_CHECK(strncmp(v->field, "limits.", 7) != 0 || v->have,
			 "a limit violation without the figure");
	}
}

/* The mutation's patch of obj under set, NULL when it fails. */
static json_t *mutation(const wmap_policy_set *set, json_t *obj)
{
	wmap_admission_config cfg = { 0 };
	json_t *patch = NULL, *warnings = NULL;
	wmap_error err;
	cfg.policies = set;
	int rc = wmap_admission_mutate(&patch, &warnings, NULL, eng, &cfg, obj, "CREATE", NULL, &err);
	json_decref(warnings);
	if (rc != 0) {
		json_decref(patch);
		return NULL;
	}
	return patch;
}

/* Evaluates set on every fixed workload, as written and as admitted; writers is set's
 * policies that write (a borrowed view). */
static void evaluate(const wmap_policy_set *set, const wmap_policy_set *writers)
{
	wmap_admission_config cfg = { 0 };
	size_t i;
	json_t *obj;
	cfg.policies = set;
	json_array_foreach(workloads, i, obj) {
		wmap_audit_result r1, r2;
		wmap_error err;
		json_t *admitted = NULL;
		int rc1 = wmap_audit_object(&r1, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err);
		FZ_CHECK(rc1 == 0 || err.message[0], "audit failure without message (rc %d)", rc1);
		if (rc1 == 0)
			check_result(&r1);
		/* require policies and limits only check: the mutation is that of the others */
		json_t *all = mutation(set, obj), *some = mutation(writers, obj);
		FZ_CHECK(!all == !some && (!all || json_equal(all, some)),
			 "a policy that only checks changed the mutation");
		json_decref(all);
		json_decref(some);
		if (rc1 == 0 &&
		    wmap_audit_admitted(&admitted, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err) == 0 &&
		    wmap_audit_object(&r2, eng, &cfg, admitted, WMAP_POLICY_OP_CREATE, &err) == 0) {
			check_result(&r2);
			char *a = limit_lines(&r1), *b = limit_lines(&r2);
			FZ_CHECK(strcmp(a, b) == 0, "the mutation changed what limits count:\n%s--\n%s", a,
				 b);
			free(a);
			free(b);
			wmap_audit_result_free(&r2);
		}
		wmap_audit_result_free(&r1);
		json_decref(admitted);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 32 * 1024)
		return -1;
	json_t *docs = NULL, *pos = json_object();
	wmap_yaml_opts o = {0};
	o.positions = pos;
	o.max_nodes = 100000;
	wmap_error err;
	if (wmap_yaml_parse(&docs, (const char *)data, size, "policy.yaml", &o, &err) != 0) {
		json_decref(pos);
		return 0;
	}
	/* Labels to match: the last document when it is not a policy, else a fixed set. */
	json_t *last = json_array_get(docs, json_array_size(docs) - 1);
	json_t *labels = json_pack("{s:s, s:s}", "tier", "serving", "env", "prod");
	json_t *user = NULL;
	if (last && !json_object_get(last, "kind")) {
		user = json_incref(last);
		json_array_remove(docs, json_array_size(docs) - 1);
	}
	FZ_CHECK(wmap_selector_matches(NULL, user) == 1, "NULL selector");

	wmap_policy_set *set = NULL;
	int rc = wmap_policy_set_parse(&set, docs, "policy.yaml", pos, &err);
	if (rc == 0) {
		static const char *const kinds[] = {"Pod", "JobSet.jobset.x-k8s.io", "Job.batch", ""};
		static const char *const nss[] = {"team-a", "", "prod"};
		for (size_t i = 0; i < set->n; i++) {
			const wmap_policy *p = &set->policies[i];
			for (size_t k = 0; k < 4; k++)
				for (size_t n = 0; n < 3; n++) {
					wmap_policy_matches(p, kinds[k], nss[n], labels, WMAP_POLICY_OP_CREATE);
					wmap_policy_matches(p, kinds[k], n ? nss[n] : NULL, user,
							    WMAP_POLICY_OP_UPDATE);
				}
			wmap_policy_matches_component(p, "worker");
			wmap_selector_matches(p->selector, user);
			wmap_selector_matches(p->selector, labels);
			/* A selector applied to its own matchLabels holds unless expressions exclude. */
			wmap_selector_matches(p->selector, json_object_get(p->selector, "matchLabels"));
		}
		wmap_policy *w = calloc(set->n + 1, sizeof(*w));
		wmap_policy_set writers = { set->source, 0, w };
		if (!w)
			abort();
		for (size_t i = 0; i < set->n; i++) {
			if (wmap_policy_writes(&set->policies[i]))
				w[writers.n++] = set->policies[i]; /* a shallow copy: set owns it */
		}
		evaluate(set, &writers);
		free(w);
		wmap_policy_set_free(set);
	} else {
		FZ_CHECK(set == NULL && err.message[0], "failure without message (rc %d)", rc);
	}
	json_decref(user);
	json_decref(labels);
	json_decref(docs);
	json_decref(pos);
	return 0;
}
