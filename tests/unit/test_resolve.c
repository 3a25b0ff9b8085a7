/* Resolving workload objects: the sample fixtures with their expected statuses, replicas and
 * GPUs, the locations of pod templates, and upstream's recorded runs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/registry.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"

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

TestSuite(resolve, .init = setup, .fini = teardown);

static wmap_workload *resolve_file(const char *path)
{
	char msg[WMAP_ERROR_MAX];
	wmap_error err = {0};
	wmap_workload *w = NULL;
	json_t *o = t_load_file(path, msg, sizeof(msg));
	cr_assert_not_null(o, "%s", msg);
	cr_expect_eq(wmap_workload_resolve(&w, eng, o, NULL, &err), 0, "%s: %s", path, err.message);
	json_decref(o);
	return w;
}

Test(resolve, jobset_leader_and_two_workers_have_12_gpus)
{
	wmap_workload *w = resolve_file("tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml");
	cr_assert_not_null(w);
	cr_expect_eq(w->total.gpu, 12);
	cr_expect_eq(w->desired, 3);
	int rj = wmap_definition_component(w->definition, "replicatedjob");
	cr_assert_geq(rj, 0, "the JobSet definition has a replicatedjob component");
	const wmap_node *n = &w->nodes[rj];
	cr_assert_eq(n->n_instances, 2);
	cr_expect_str_eq(n->instances[0].id, "leader");
	cr_expect_eq(n->instances[0].desired, 1);
	cr_expect_eq(n->instances[0].per_replica.gpu, 4);
	cr_expect_str_eq(n->instances[1].id, "workers");
	cr_expect_eq(n->instances[1].desired, 2);
	cr_expect_eq(n->instances[1].total.gpu, 8);
	/* where the webhook will write */
	cr_expect_str_eq(n->instances[1].pod.template_.pointer, "/spec/replicatedJobs/1/template/spec/template");
	cr_expect_str_eq(n->instances[1].pod.metadata.pointer,
			 "/spec/replicatedJobs/1/template/spec/template/metadata");
	cr_expect(w->statuses & (1u << WMAP_STATUS_RUNNING));
	wmap_workload_free(w);
}

/* The webhook's exporter frees a workload after the definitions it was resolved with were
 * swapped out and freed: freeing reads nothing of them (an ASan build sees the read). */
Test(resolve, a_workload_outlives_its_definitions)
{
	const char *files[] = { "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml",
				"tests/fixtures/ray-io-raycluster-v1/running.yaml" };
	wmap_workload *w[2];
	for (int i = 0; i < 2; i++) {
		w[i] = resolve_file(files[i]);
		cr_assert_not_null(w[i], "%s", files[i]);
	}
	t_catalog_engine_free(reg, eng);
	reg = NULL;
	eng = NULL;
	for (int i = 0; i < 2; i++)
		wmap_workload_free(w[i]);
}

Test(resolve, a_jobset_describe_compiles_jq_at_most_once)
{
	wmap_workload *w = resolve_file("tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml");
	wmap_workload_free(w);
	w = resolve_file("tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/completed.yaml");
	wmap_workload_free(w);
	cr_expect_leq(wmap_engine_compiles(eng), 1);
}

Test(resolve, every_fixture_reads_as_its_header_says)
{
	size_t n;
	char **files = t_glob("tests/fixtures/*/*.yaml", &n);
	size_t checked = 0;
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		char want_status[256], want_replicas[64], want_gpus[64];
		if (strstr(files[i], "/bad/"))
			continue;
		if (t_header(files[i], "expect-status", want_status, sizeof(want_status)) ||
		    t_header(files[i], "expect-replicas", want_replicas, sizeof(want_replicas)) ||
		    t_header(files[i], "expect-gpus", want_gpus, sizeof(want_gpus))) {
			cr_expect_fail("%s: missing expect-status/replicas/gpus header", files[i]);
			continue;
		}
		wmap_workload *w = resolve_file(files[i]);
		if (!w)
			continue;
		char got[256];
		wmap_workload_status_string(w, got, sizeof(got), ",");
		cr_expect_eq(w->statuses, t_parse_statuses(want_status), "%s: status %s, want %s", files[i], got,
			     want_status);
		cr_expect_eq(w->desired, strtoll(want_replicas, NULL, 10), "%s: %lld replicas, want %s", files[i],
			     (long long)w->desired, want_replicas);
		cr_expect_eq(w->total.gpu, strtoll(want_gpus, NULL, 10), "%s: %lld GPUs, want %s", files[i],
			     (long long)w->total.gpu, want_gpus);
		wmap_workload_free(w);
		checked++;
	}
	cr_expect_gt(checked, 10);
	t_free_list(files, n);
}

Test(resolve, broken_objects_get_errors_that_name_the_place)
{
	size_t n;
	char **files = t_glob("tests/fixtures/bad/*.yaml", &n);
	for (size_t i = 0; i < n; i++) {
		char want[256], msg[WMAP_ERROR_MAX];
		wmap_error err = {0};
		wmap_workload *w = NULL;
		if (t_header(files[i], "expect-error", want, sizeof(want)))
			continue;
		json_t *o = t_load_file(files[i], msg, sizeof(msg));
		int rc = o ? wmap_workload_resolve(&w, eng, o, NULL, &err) : WMAP_EINVAL;
		const char *got = o ? err.message : msg;
		cr_expect_neq(rc, 0, "%s resolved", files[i]);
		cr_expect(strstr(got, want) != NULL, "%s: expected \"%s\" in \"%s\"", files[i], want, got);
		wmap_workload_free(w);
		json_decref(o);
	}
	t_free_list(files, n);
}

Test(resolve, objects_without_a_definition_or_kind_are_refused)
{
	wmap_error err = {0};
	wmap_workload *w = NULL;
	json_t *o = t_yaml("apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: x}\n");
	cr_expect_eq(wmap_workload_resolve(&w, eng, o, NULL, &err), WMAP_ENODEF);
	cr_expect(strstr(err.message, "Kind=Unknown") != NULL, "%s", err.message);
	json_decref(o);
	o = t_yaml("metadata: {name: x}\n");
	cr_expect_eq(wmap_workload_resolve(&w, eng, o, NULL, &err), WMAP_EINVAL);
	cr_expect_str_eq(err.message, ".apiVersion: the object has no apiVersion");
	json_decref(o);
}

Test(resolve, counts_init_containers_sidecars_and_overhead)
{
	json_t *spec = t_yaml("containers:\n- resources: {requests: {cpu: 1, memory: 1Gi}, limits: {nvidia.com/gpu: 2}}\n"
			      "- resources: {limits: {cpu: 500m}}\n"
			      "initContainers:\n- resources: {requests: {cpu: 4, nvidia.com/gpu: 1}}\n"
			      "- restartPolicy: Always\n  resources: {requests: {memory: 1Gi}}\n"
			      "overhead: {cpu: 250m}\n");
	wmap_resources r;
	wmap_error err = {0};
	cr_assert_eq(wmap_pod_resources(&r, spec, "/spec", &err), 0, "%s", err.message);
	cr_expect_eq(r.gpu, 2);
	cr_expect_eq(r.cpu_milli, 4250, "the init container's 4 CPUs win over 1.5, plus overhead");
	cr_expect_eq(r.memory, 2LL << 30, "the sidecar adds its memory");
	json_decref(spec);
	spec = t_yaml("containers:\n- resources: {limits: {nvidia.com/gpu: lots}}\n");
	cr_expect_eq(wmap_pod_resources(&r, spec, "/spec/template/spec", &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, ".spec.template.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]") != NULL,
		  "%s", err.message);
	json_decref(spec);
}

/* Instance ids are copied into the node's instances block: strings as they are, numbers as
 * their JSON text; an empty or non-scalar id is an error naming its index. */
Test(resolve, instance_ids_of_every_kind_are_kept)
{
	static const char *const base =
		"apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\n"
		"spec:\n  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}\n"
		"  workerGroupSpecs:\n";
	char text[1024];
	snprintf(text, sizeof(text), "%s%s", base,
		 "  - {groupName: 7, replicas: 1, template: {spec: {containers: [{name: a}]}}}\n"
		 "  - {groupName: gpu-workers, replicas: 2, template: {spec: {containers: [{name: b}]}}}\n"
		 "  - {groupName: 2.5, replicas: 3, template: {spec: {containers: [{name: c}]}}}\n");
	json_t *o = t_yaml(text);
	wmap_workload *w = NULL;
	wmap_error err = {0};
	cr_assert_eq(wmap_workload_resolve(&w, eng, o, NULL, &err), 0, "%s", err.message);
	const wmap_node *worker = NULL;
	for (size_t i = 0; i < w->n_nodes; i++)
		if (strcmp(w->nodes[i].def->name, "worker") == 0)
			worker = &w->nodes[i];
	cr_assert_not_null(worker);
	cr_assert_eq(worker->n_instances, 3);
	cr_expect_str_eq(worker->instances[0].id, "7");
	cr_expect_str_eq(worker->instances[1].id, "gpu-workers");
	cr_expect_str_eq(worker->instances[2].id, "2.5");
	cr_expect_eq(worker->instances[1].replicas, 2);
	for (size_t i = 0; i < w->n_nodes; i++)
		if (strcmp(w->nodes[i].def->name, "head") == 0)
			cr_expect_str_eq(w->nodes[i].instances[0].id, "");
	wmap_workload_free(w);
	json_decref(o);

	snprintf(text, sizeof(text), "%s%s", base,
		 "  - {groupName: a, template: {spec: {containers: [{name: a}]}}}\n"
		 "  - {groupName: '', template: {spec: {containers: [{name: b}]}}}\n");
	o = t_yaml(text);
	w = NULL;
	cr_expect_neq(wmap_workload_resolve(&w, eng, o, NULL, &err), 0);
	cr_expect(strstr(err.message, "instance id 1 is an empty string") != NULL, "%s", err.message);
	wmap_workload_free(w);
	json_decref(o);

	snprintf(text, sizeof(text), "%s%s", base,
		 "  - {groupName: [x], template: {spec: {containers: [{name: a}]}}}\n");
	o = t_yaml(text);
	w = NULL;
	cr_expect_neq(wmap_workload_resolve(&w, eng, o, NULL, &err), 0);
	cr_expect(strstr(err.message, "instance id 0 is not a string") != NULL, "%s", err.message);
	wmap_workload_free(w);
	json_decref(o);
}
