/* WorkloadPolicy documents: parsing, errors with file:line:col, and matching. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "wmap/policy.h"

static const char *example =
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: team-a}\n"
	"spec:\n"
	"  match:\n"
	"    kinds: [\"JobSet.jobset.x-k8s.io\", \"*.kubeflow.org\"]\n"
	"    namespaces: [team-a, \"ml-*\"]\n"
	"    excludeNamespaces: [ml-sandbox]\n"
	"    selector:\n"
	"      matchLabels: {tier: training}\n"
	"      matchExpressions:\n"
	"      - {key: env, operator: In, values: [prod, staging]}\n"
	"      - {key: skip, operator: DoesNotExist}\n"
	"    components: [worker]\n"
	"    operations: [CREATE, UPDATE]\n"
	"  mode: override\n"
	"  enforce: true\n"
	"  podTemplate:\n"
	"    labels: {team: a}\n"
	"    annotations: {\"example.com/owner\": \"team a\"}\n"
	"    priorityClassName: high\n"
	"    nodeSelector: {pool: gpu}\n"
	"    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
	"  gang: {scheduler: volcano, queue: team-a}\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: everything}\n"
	"spec:\n"
	"  podTemplate: {runtimeClassName: nvidia}\n";

/* Writes text to a temporary file; the caller unlinks and frees the name. */
static char *temp_file(const char *text)
{
	char *path = strdup("/tmp/wmap-policy-XXXXXX.yaml");
	int fd = mkstemps(path, 5);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static wmap_policy_set *load_text(const char *text, wmap_error *err, int *rc)
{
	char *path = temp_file(text);
	wmap_policy_set *set = NULL;
	*rc = wmap_policy_set_load(&set, path, err);
	unlink(path);
	free(path);
	return set;
}

Test(policy, parses_every_field)
{
	wmap_error err = { 0 };
	int rc;
	wmap_policy_set *set = load_text(example, &err, &rc);
	cr_assert_eq(rc, 0, "%s", err.message);
	cr_assert_eq(set->n, 2);
	const wmap_policy *p = &set->policies[0];
	cr_expect_str_eq(p->name, "team-a");
	cr_expect_eq(p->n_kinds, 2);
	cr_expect_eq(p->mode, WMAP_POLICY_OVERRIDE);
	cr_expect_eq(p->actions, WMAP_ACTION_DENY, "enforce: true reads as [Deny]");
	cr_expect_eq(p->operations, WMAP_POLICY_OP_CREATE | WMAP_POLICY_OP_UPDATE);
	cr_expect_str_eq(p->priority_class_name, "high");
	cr_expect_str_eq(json_string_value(json_object_get(p->labels, "team")), "a");
	cr_expect_eq(json_array_size(p->tolerations), 1);
	cr_expect(p->has_gang);
	cr_expect_eq(p->gang, WMAP_GANG_VOLCANO);
	cr_expect_str_eq(p->queue, "team-a");
	const wmap_policy *q = &set->policies[1];
	cr_expect_eq(q->operations, WMAP_POLICY_OP_CREATE, "CREATE is the default");
	cr_expect_eq(q->mode, WMAP_POLICY_DEFAULT);
	cr_expect_eq(q->actions, 0u);
	cr_expect_str_eq(q->runtime_class_name, "nvidia");
	wmap_policy_set_free(set);
}

Test(policy, validation_actions_in_every_allowed_combination)
{
	static const struct {
		const char *actions;
		unsigned want;
		const char *text;
	} cases[] = {
		{ "[Deny]", WMAP_ACTION_DENY, "Deny" },
		{ "[Warn]", WMAP_ACTION_WARN, "Warn" },
		{ "[Audit]", WMAP_ACTION_AUDIT, "Audit" },
		{ "[Audit, Deny]", WMAP_ACTION_DENY | WMAP_ACTION_AUDIT, "Deny,Audit" },
		{ "[Warn, Audit]", WMAP_ACTION_WARN | WMAP_ACTION_AUDIT, "Warn,Audit" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512], got[32];
		wmap_error err = { 0 };
		int rc;
		snprintf(text, sizeof(text),
			 "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
			 "spec:\n  validationActions: %s\n  podTemplate: {labels: {a: b}}\n",
			 cases[i].actions);
		wmap_policy_set *set = load_text(text, &err, &rc);
		cr_assert_eq(rc, 0, "%s: %s", cases[i].actions, err.message);
		cr_expect_eq(set->policies[0].actions, cases[i].want, "%s", cases[i].actions);
		cr_expect(wmap_policy_needs_validation(&set->policies[0]));
		wmap_policy_actions_format(got, sizeof(got), set->policies[0].actions);
		cr_expect_str_eq(got, cases[i].text);
		wmap_policy_set_free(set);
	}
}

Test(policy, errors_name_file_line_and_column)
{
	static const struct {
		const char *text;
		const char *want;   /* a piece of the message */
	} cases[] = {
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  podTemplate:\n    lables: {a: b}\n",
		  ":6:5: document 1: .spec.podTemplate.lables: unknown field" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  mode: sometimes\n", ":5:3: document 1: .spec.mode: must be default, override or require" },
		{ "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		  "expected apiVersion wmap.io/v1alpha1 and kind WorkloadPolicy" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  podTemplate:\n    labels: {team: \"not valid!\"}\n",
		  "is not a valid label value" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  gang: {scheduler: slurm}\n", "unknown gang scheduler \"slurm\"" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  match:\n    selector:\n      matchExpressions: [{key: a, operator: Near}]\n",
		  "operator must be In, NotIn, Exists or DoesNotExist" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  enforce: true\n", ":5:3: document 1: .spec.enforce: a policy with "
		  "validation actions needs podTemplate settings" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny, Warn]\n  podTemplate: {labels: {a: b}}\n",
		  ":5:29: document 1: .spec.validationActions.1: Deny and Warn may not be combined" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Audit, Audit]\n  podTemplate: {labels: {a: b}}\n",
		  ":5:30: document 1: .spec.validationActions.1: Audit is given twice" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions:\n  - deny\n  podTemplate: {labels: {a: b}}\n",
		  ":6:5: document 1: .spec.validationActions.0: \"deny\" is not an action: Deny, Warn "
		  "or Audit" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: []\n  podTemplate: {labels: {a: b}}\n",
		  ":5:3: document 1: .spec.validationActions: must be a list of Deny, Warn and Audit" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Warn]\n  enforce: true\n  podTemplate: {labels: {a: b}}\n",
		  ":6:3: document 1: .spec.enforce: give validationActions or enforce, not both" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: Deny\n  podTemplate: {labels: {a: b}}\n",
		  ".spec.validationActions: must be a list of Deny, Warn and Audit" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec: {}\n---\napiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\n"
		  "metadata: {name: x}\nspec: {}\n", "defined twice" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  podTemplate:\n    labels: {a: 1}\n", "must be a string" },
		{ "spec: [unclosed\n", ".yaml:" },
		/* mode: require and spec.limits */
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  mode: require\n  podTemplate: {labels: {a: b}}\n",
		  ":5:3: document 1: .spec.mode: require writes nothing and only checks: give "
		  "validationActions" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  mode: require\n  validationActions: [Warn]\n  podTemplate: {labels: {a: "
		  "b}}\n  gang: {scheduler: kai}\n",
		  ".spec.gang: a require policy writes nothing: gang hints need mode default or "
		  "override" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  limits: {workload: {nvidia.com/gpu: 64}}\n",
		  ":5:3: document 1: .spec.limits: limits are checks: give validationActions" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {}\n",
		  ".spec.limits: needs workload (totals) or pod (any one pod)" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {workload: {}}\n",
		  ".spec.limits.workload: lists no resource" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {total: {cpu: 1}}\n",
		  ".spec.limits.total: unknown field \"total\"" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {workload: [cpu]}\n",
		  ".spec.limits.workload: must be a map of resource names to quantities" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits:\n    pod: {nvidia.com/gpu: lots}\n",
		  ":7:11: document 1: .spec.limits.pod.nvidia.com/gpu: quantity \"lots\" has no number" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {pod: {memory: -1Gi}}\n",
		  ".spec.limits.pod.memory: \"-1Gi\" is negative" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {pod: {pods: 2}}\n",
		  ".spec.limits.pod.pods: pods counts a workload's pods: give it under limits.workload" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {pod: {cpu: {a: 1}}}\n",
		  ".spec.limits.pod.cpu: must be a quantity" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {pod: {\"bad key!\": 1}}\n",
		  "is not a resource name" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits: {pod: {cpu: 99999999999999999999}}\n",
		  ".spec.limits.pod.cpu: " },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Deny]\n  limits:\n    workload: {a/1: 1, a/2: 1, "
		  "a/3: 1, a/4: 1, a/5: 1, a/6: 1, a/7: 1, a/8: 1, a/9: 1, a/10: 1, a/11: 1, a/12: 1, "
		  "a/13: 1, a/14: 1, a/15: 1, a/16: 1, a/17: 1}\n",
		  ".spec.limits.workload: lists 17 resources; at most 16" },
		{ "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: x}\n"
		  "spec:\n  validationActions: [Audit]\n",
		  ".spec.validationActions: a policy with validation actions needs podTemplate "
		  "settings or limits to check" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wmap_error err = { 0 };
		int rc;
		wmap_policy_set *set = load_text(cases[i].text, &err, &rc);
		cr_expect_neq(rc, 0, "case %zu should fail", i);
		cr_expect_null(set);
		cr_expect(strstr(err.message, cases[i].want) != NULL, "case %zu: \"%s\" lacks \"%s\"",
			  i, err.message, cases[i].want);
		cr_expect(strstr(err.message, "/tmp/wmap-policy-") == err.message,
			  "case %zu names the file: %s", i, err.message);
	}
}

Test(policy, matches_kinds_namespaces_selector_and_operations)
{
	wmap_error err = { 0 };
	int rc;
	wmap_policy_set *set = load_text(example, &err, &rc);
	cr_assert_eq(rc, 0, "%s", err.message);
	const wmap_policy *p = &set->policies[0];
	json_t *ok = t_yaml("{tier: training, env: prod}");
	json_t *wrong_env = t_yaml("{tier: training, env: dev}");
	json_t *skipped = t_yaml("{tier: training, env: prod, skip: \"yes\"}");
	unsigned C = WMAP_POLICY_OP_CREATE, U = WMAP_POLICY_OP_UPDATE;

	cr_expect(wmap_policy_matches(p, "JobSet.jobset.x-k8s.io", "team-a", ok, C));
	cr_expect(wmap_policy_matches(p, "PyTorchJob.kubeflow.org", "ml-1", ok, U));
	cr_expect_not(wmap_policy_matches(p, "JobSet", "team-a", ok, C), "group+kind, never bare");
	cr_expect_not(wmap_policy_matches(p, "RayCluster.ray.io", "team-a", ok, C));
	cr_expect_not(wmap_policy_matches(p, "JobSet.jobset.x-k8s.io", "team-b", ok, C));
	cr_expect_not(wmap_policy_matches(p, "JobSet.jobset.x-k8s.io", "ml-sandbox", ok, C));
	cr_expect_not(wmap_policy_matches(p, "JobSet.jobset.x-k8s.io", "team-a", wrong_env, C));
	cr_expect_not(wmap_policy_matches(p, "JobSet.jobset.x-k8s.io", "team-a", skipped, C));
	cr_expect_not(wmap_policy_matches(p, "JobSet.jobset.x-k8s.io", "team-a", NULL, C));
	cr_expect_not(wmap_policy_matches(p, "JobSet.jobset.x-k8s.io", "team-a", ok, 0));
	cr_expect(wmap_policy_matches_component(p, "worker"));
	cr_expect_not(wmap_policy_matches_component(p, "master"));
	/* the kind rule alone, as the webhook's registration rules and the auditor use it */
	cr_expect(wmap_policy_matches_kind(p, "JobSet.jobset.x-k8s.io"));
	cr_expect(wmap_policy_matches_kind(p, "PyTorchJob.kubeflow.org"));
	cr_expect_not(wmap_policy_matches_kind(p, "JobSet"));
	cr_expect_not(wmap_policy_matches_kind(p, NULL));
	cr_expect(wmap_policy_matches_kind(&set->policies[1], "Pod"), "no kinds cover every kind");
	cr_expect(wmap_policy_matches_kind(&set->policies[1], NULL));

	const wmap_policy *all = &set->policies[1];
	cr_expect(wmap_policy_matches(all, "Pod", NULL, NULL, C));
	cr_expect_not(wmap_policy_matches(all, "Pod", NULL, NULL, U), "UPDATE only when asked");
	cr_expect(wmap_policy_matches_component(all, "anything"));

	json_decref(ok);
	json_decref(wrong_env);
	json_decref(skipped);
	wmap_policy_set_free(set);
}

Test(policy, selector_operators)
{
	json_t *sel = t_yaml("matchExpressions:\n"
			     "- {key: a, operator: In, values: [x, y]}\n"
			     "- {key: b, operator: NotIn, values: [z]}\n"
			     "- {key: c, operator: Exists}\n");
	json_t *l1 = t_yaml("{a: x, c: \"\"}");
	json_t *l2 = t_yaml("{a: x, b: z, c: \"1\"}");
	json_t *l3 = t_yaml("{a: q, c: \"1\"}");
	json_t *l4 = t_yaml("{a: y, b: w}");
	cr_expect(wmap_selector_matches(sel, l1));
	cr_expect_not(wmap_selector_matches(sel, l2));
	cr_expect_not(wmap_selector_matches(sel, l3));
	cr_expect_not(wmap_selector_matches(sel, l4));
	cr_expect(wmap_selector_matches(NULL, NULL));
	json_decref(sel);
	json_decref(l1);
	json_decref(l2);
	json_decref(l3);
	json_decref(l4);
}

Test(policy, require_mode_and_limits_are_read)
{
	static const char *text =
		"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: gpus}\n"
		"spec:\n"
		"  mode: require\n"
		"  validationActions: [Warn, Audit]\n"
		"  podTemplate: {priorityClassName: training-high}\n"
		"  limits:\n"
		"    workload: {nvidia.com/gpu: 64, cpu: \"512\", memory: 4Ti, pods: 256}\n"
		"    pod: {nvidia.com/gpu: 8, cpu: 0.5}\n"
		"---\n"
		"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: limits-only}\n"
		"spec:\n"
		"  validationActions: [Deny]\n"
		"  limits: {pod: {amd.com/gpu: 1}}\n";
	wmap_error err = { 0 };
	int rc;
	wmap_policy_set *set = load_text(text, &err, &rc);
	cr_assert_eq(rc, 0, "%s", err.message);
	const wmap_policy *p = &set->policies[0];
	cr_expect_eq(p->mode, WMAP_POLICY_REQUIRE);
	cr_expect_eq(p->actions, WMAP_ACTION_WARN | WMAP_ACTION_AUDIT);
	cr_expect(wmap_policy_sets_template(p));
	cr_expect_not(wmap_policy_writes(p), "require never writes");
	cr_assert_eq(p->n_workload_limits, 4);
	static const struct {
		const char *resource, *text;
		long long milli;
	} want[] = {
		{ "nvidia.com/gpu", "64", 64000 },
		{ "cpu", "512", 512000 },
		{ "memory", "4Ti", 4LL * 1024 * 1024 * 1024 * 1024 * 1000 },
		{ "pods", "256", 256000 },
	};
	for (size_t i = 0; i < 4; i++) {
		cr_expect_str_eq(p->workload_limits[i].resource, want[i].resource, "in document order");
		cr_expect_str_eq(p->workload_limits[i].text, want[i].text);
		cr_expect_eq(p->workload_limits[i].milli, want[i].milli, "%s", want[i].resource);
	}
	cr_assert_eq(p->n_pod_limits, 2);
	cr_expect_str_eq(p->pod_limits[1].text, "0.5", "a number as kubectl writes it");
	cr_expect_eq(p->pod_limits[1].milli, 500);
	const wmap_policy *q = &set->policies[1];
	cr_expect_eq(q->mode, WMAP_POLICY_DEFAULT);
	cr_expect_not(wmap_policy_sets_template(q));
	cr_expect_not(wmap_policy_writes(q), "limits only check");
	cr_expect_eq(q->n_workload_limits, 0);
	cr_expect_str_eq(q->pod_limits[0].resource, "amd.com/gpu");
	wmap_policy_set_free(set);
}

/* Several files and folders merge in argument order; one name twice names both places. */
Test(policy, load_paths_merges_in_order_and_names_both_places_of_a_conflict)
{
	char dir[128], sub[200];
	const char *one = "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: %s}\n"
			  "spec: {podTemplate: {runtimeClassName: nvidia}}\n";
	char a[300], b[300], c[300];
	wmap_error err = { 0 };
	wmap_policy_set *set = NULL;

	t_temp_dir(dir, sizeof(dir), "wmap-policies");
	snprintf(sub, sizeof(sub), "%s/more", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	snprintf(a, sizeof(a), one, "first");
	snprintf(b, sizeof(b), one, "second");
	snprintf(c, sizeof(c), one, "third");
	const char *fa = t_write_file(dir, "a.yaml", a);
	char fa_copy[300];
	snprintf(fa_copy, sizeof(fa_copy), "%s", fa);
	t_write_file(sub, "b.yaml", b);
	t_write_file(sub, "c.yaml", c);
	const char *paths[] = { sub, fa_copy };
	cr_assert_eq(wmap_policy_set_load_paths(&set, paths, 2, &err), 0, "%s", err.message);
	cr_assert_eq(set->n, 3);
	cr_assert_str_eq(set->policies[0].name, "second");
	cr_assert_str_eq(set->policies[1].name, "third");
	cr_assert_str_eq(set->policies[2].name, "first");
	wmap_policy_set_free(set);

	t_write_file(sub, "d.yaml", a); /* "first" again */
	cr_assert_eq(wmap_policy_set_load_paths(&set, paths, 2, &err), WMAP_EINVAL);
	cr_assert_null(set);
	cr_assert(strstr(err.message, "policy \"first\" is defined twice"), "%s", err.message);
	cr_assert(strstr(err.message, "/a.yaml:1:1") && strstr(err.message, "/more/d.yaml:1:1"), "%s",
		  err.message);
	t_remove_dir(dir);
}
