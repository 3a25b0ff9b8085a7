/* Gang plans: group names and minimum member counts from the scale definitions
 * (reference 5.10), per-instance groups, the v2 podGroup, and what is left out. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/gang.h"
#include "wmap/registry.h"
#include "wmap/workload.h"

#define DEF_HEAD \
	"apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: example-com-tjob-v1}\n" \
	"spec:\n  structureDefinition:\n    rootComponent:\n      name: job\n" \
	"      kind: {group: example.com, version: v1, kind: TJob}\n" \
	"      statusDefinition:\n        phaseDefinition: {path: .status.phase}\n" \
	"        statusMappings: {running: [{byPhase: Running}]}\n" \
	"    childComponents:\n" \
	"    - name: head\n      ownerRef: job\n" \
	"      specDefinition: {podTemplateSpecPath: .spec.head.template}\n" \
	"%s" \
	"    - name: worker\n      ownerRef: job\n" \
	"      specDefinition: {podTemplateSpecPath: \".spec.groups[].template\"}\n" \
	"%s" \
	"      instanceIdPath: \".spec.groups[].name\"\n" \
	"      podSelector: {componentInstanceSelector: {idPath: '.metadata.labels[\"g\"]'}}\n"

#define SCALE_HEAD "      scaleDefinition: {replicasPath: .spec.head.replicas}\n"
#define SCALE_WORKER \
	"      scaleDefinition: {replicasPath: \".spec.groups[].replicas\", " \
	"minReplicasPath: \".spec.groups[].minReplicas\"}\n"

#define GANG_WHOLE \
	"  optimizationInstructions:\n    gangScheduling:\n      podGroups:\n" \
	"      - name: all\n        members:\n" \
	"        - {componentName: head, groupByKeyPaths: ['.metadata.labels[\"job\"]']}\n" \
	"        - {componentName: worker, groupByKeyPaths: ['.metadata.labels[\"job\"]']}\n"

#define GANG_PER_GROUP \
	"  optimizationInstructions:\n    gangScheduling:\n      podGroups:\n" \
	"      - name: workers\n        members:\n" \
	"        - {componentName: worker, groupByKeyPaths: ['.metadata.labels[\"g\"]']}\n"

#define GANG_V2 \
	"  optimizationInstructions:\n    gangScheduling:\n" \
	"      podGroup: {name: pg, subGroups: [{componentName: worker}]}\n"

static const char *object_text =
	"apiVersion: example.com/v1\nkind: TJob\nmetadata: {name: train, namespace: ns}\n"
	"spec:\n"
	"  head: {replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}\n"
	"  groups:\n"
	"  - {name: a, replicas: 3, minReplicas: 2, template: {spec: {containers: [{name: c}]}}}\n"
	"  - {name: b, replicas: 2, template: {spec: {containers: [{name: c}]}}}\n";

typedef struct fx {
	wmap_registry *reg;
	wmap_engine *eng;
	wmap_workload *w;
	wmap_gang_plan *plan;
} fx;

static void build(fx *f, const char *scale_head, const char *scale_worker, const char *gang,
		  const char *obj_text, const char *name)
{
	char def_text[8192], msg[WMAP_ERROR_MAX];
	wmap_error err = { 0 };
	snprintf(def_text, sizeof(def_text), DEF_HEAD "%s", scale_head, scale_worker, gang);
	wmap_definition *def = t_definition(def_text, msg, sizeof(msg));
	cr_assert_not_null(def, "%s", msg);
	cr_assert_eq(wmap_registry_new(&f->reg, &err), 0);
	cr_assert_eq(wmap_registry_add(f->reg, def, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_engine_new(&f->eng, f->reg, &err), 0);
	json_t *obj = t_yaml(obj_text ? obj_text : object_text);
	cr_assert_eq(wmap_workload_resolve(&f->w, f->eng, obj, NULL, &err), 0, "%s", err.message);
	json_decref(obj);
	cr_assert_eq(wmap_gang_plan_build(&f->plan, f->w, name, &err), 0, "%s", err.message);
}

static void done(fx *f)
{
	wmap_gang_plan_free(f->plan);
	wmap_workload_free(f->w);
	wmap_engine_free(f->eng);
	wmap_registry_free(f->reg);
}

Test(gang, scheduler_names)
{
	for (int i = 0; i < WMAP_GANG_COUNT; i++) {
		wmap_gang_scheduler s;
		cr_expect_eq(wmap_gang_scheduler_parse(&s, wmap_gang_scheduler_name(i), NULL), 0);
		cr_expect_eq((int)s, i);
	}
	wmap_gang_scheduler s;
	wmap_error err = { 0 };
	cr_expect_eq(wmap_gang_scheduler_parse(&s, "slurm", &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "volcano") != NULL, "%s", err.message);
}

Test(gang, one_group_sums_min_replicas_of_its_members)
{
	fx f = { 0 };
	build(&f, SCALE_HEAD, SCALE_WORKER, GANG_WHOLE, NULL, "train");
	cr_assert_eq(f.plan->n_groups, 1);
	cr_expect_str_eq(f.plan->groups[0].name, "train");
	cr_expect_str_eq(f.plan->groups[0].pod_group, "all");
	/* head 1 + worker a (minReplicas 2) + worker b (replicas 2) */
	cr_expect_eq(f.plan->groups[0].min_member, 5);
	cr_assert_eq(f.plan->n_members, 3);
	for (size_t i = 0; i < f.plan->n_members; i++)
		cr_expect_eq(f.plan->members[i].group, 0);
	cr_expect_str_eq(f.plan->members[1].task_group, "worker-a");
	cr_expect_eq(f.plan->members[1].task_min, 2);
	cr_expect_eq(wmap_gang_subtree_scale(f.w, 0, NULL), 5, "the root sums its children");
	done(&f);
}

Test(gang, groups_keyed_by_the_instance_selector_split_per_instance)
{
	fx f = { 0 };
	build(&f, SCALE_HEAD, SCALE_WORKER, GANG_PER_GROUP, NULL, "train");
	cr_assert_eq(f.plan->n_groups, 2);
	cr_expect_str_eq(f.plan->groups[0].name, "train-a");
	cr_expect_eq(f.plan->groups[0].min_member, 2);
	cr_expect_str_eq(f.plan->groups[1].name, "train-b");
	cr_expect_eq(f.plan->groups[1].min_member, 2);
	/* head is in no group, and the plan says so */
	cr_expect_eq(f.plan->members[0].group, -1);
	cr_assert_geq(f.plan->n_notes, 1);
	cr_expect(strstr(f.plan->notes[0], "head") != NULL, "%s", f.plan->notes[0]);
	done(&f);
}

Test(gang, v2_pod_group_sums_its_subgroups)
{
	fx f = { 0 };
	build(&f, SCALE_HEAD, SCALE_WORKER, GANG_V2, NULL, "train");
	cr_assert_eq(f.plan->n_groups, 1);
	cr_expect_str_eq(f.plan->groups[0].name, "train");
	cr_expect_eq(f.plan->groups[0].min_member, 4);
	cr_expect_eq(f.plan->members[0].group, 0);
	done(&f);
}

Test(gang, without_scale_definitions_counts_pod_bearing_instances)
{
	fx f = { 0 };
	build(&f, "", "", GANG_WHOLE, NULL, "train");
	cr_assert_eq(f.plan->n_groups, 1);
	cr_expect_eq(f.plan->groups[0].min_member, 3);
	done(&f);
}

Test(gang, no_gang_instructions_or_no_name_means_no_groups)
{
	fx f = { 0 };
	build(&f, SCALE_HEAD, SCALE_WORKER, "", NULL, "train");
	cr_expect_eq(f.plan->n_groups, 0);
	cr_expect_eq(f.plan->n_members, 3, "members are still listed (task groups)");
	cr_assert_eq(f.plan->n_notes, 1);
	cr_expect(strstr(f.plan->notes[0], "no gangScheduling") != NULL, "%s", f.plan->notes[0]);
	done(&f);

	fx g = { 0 };
	build(&g, SCALE_HEAD, SCALE_WORKER, GANG_WHOLE, NULL, NULL);
	cr_expect_eq(g.plan->n_groups, 0);
	cr_assert_eq(g.plan->n_notes, 1);
	cr_expect(strstr(g.plan->notes[0], "generateName") != NULL, "%s", g.plan->notes[0]);
	done(&g);
}

Test(gang, long_names_stay_valid_label_values)
{
	fx f = { 0 };
	build(&f, SCALE_HEAD, SCALE_WORKER, GANG_PER_GROUP, NULL,
	      "a-workload-name-that-is-long-enough-to-push-the-group-name-past-63");
	cr_assert_eq(f.plan->n_groups, 2);
	cr_expect_leq(strlen(f.plan->groups[0].name), 63);
	cr_expect_str_neq(f.plan->groups[0].name, f.plan->groups[1].name);
	done(&f);
}

Test(gang, catalog_leaderworkerset_is_one_gang_of_every_pod)
{
	wmap_registry *reg;
	wmap_engine *eng;
	wmap_workload *w = NULL;
	wmap_gang_plan *plan = NULL;
	wmap_error err = { 0 };
	char msg[WMAP_ERROR_MAX];
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_engine_new(&eng, reg, &err), 0);
	json_t *o = t_load_file("tests/fixtures/leaderworkerset-x-k8s-io-leaderworkerset-v1/"
				"running.yaml", msg, sizeof(msg));
	cr_assert_not_null(o, "%s", msg);
	cr_assert_eq(wmap_workload_resolve(&w, eng, o, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_gang_plan_build(&plan, w, w->name, &err), 0);
	cr_assert_eq(plan->n_groups, 1);
	cr_expect_str_eq(plan->groups[0].name, "vllm-405b");
	cr_expect_eq(plan->groups[0].min_member, w->desired, "min %lld, desired %lld",
		     (long long)plan->groups[0].min_member, (long long)w->desired);
	wmap_gang_plan_free(plan);
	wmap_workload_free(w);
	json_decref(o);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
}
