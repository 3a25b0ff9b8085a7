/* Resources of one pod spec: requests falling back to limits, the larger of the biggest
 * init container and the containers plus sidecars, pod overhead; bad quantities are
 * errors that name their path. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"
#include "wmap/workload.h"

static const struct {
	const char *spec;
	long long gpu, cpu_milli, memory;
} rows[] = {
	{ "containers: [{name: a, resources: {requests: {cpu: 500m, memory: 1Gi}}}]", 0, 500, 1LL << 30 },
	/* limits stand in for missing requests */
	{ "containers: [{name: a, resources: {limits: {cpu: '2', nvidia.com/gpu: 4}}}]", 4, 2000, 0 },
	{ "containers: [{name: a, resources: {requests: {cpu: 1}}}, {name: b, resources: {requests: {cpu: 250m}}}]",
	  0, 1250, 0 },
	/* the biggest init container wins when it is larger than the containers */
	{ "initContainers: [{name: i, resources: {requests: {cpu: '3'}}}]\n"
	  "containers: [{name: a, resources: {requests: {cpu: 1}}}]",
	  0, 3000, 0 },
	/* an init container after a sidecar runs beside it: 3 + 1, more than 1 + the sidecar's 1 */
	{ "initContainers: [{name: s, restartPolicy: Always, resources: {requests: {cpu: 1}}},\n"
	  "  {name: i, resources: {requests: {cpu: 3}}}]\n"
	  "containers: [{name: a, resources: {requests: {cpu: 1}}}]",
	  0, 4000, 0 },
	/* pod-level resources replace cpu and memory only; a GPU there is not a pod-level resource */
	{ "resources: {requests: {cpu: '2', nvidia.com/gpu: 8}}\n"
	  "containers: [{name: a, resources: {requests: {cpu: 1, memory: 1Gi}, limits: {nvidia.com/gpu: 1}}}]",
	  1, 2000, 1LL << 30 },
	/* overhead is added */
	{ "overhead: {cpu: 100m}\ncontainers: [{name: a, resources: {requests: {cpu: 1}}}]", 0, 1100, 0 },
	{ "containers: [{name: a}]", 0, 0, 0 },
	/* a YAML number is the quantity as written: 0.1 CPU is 100m, not 101m */
	{ "containers: [{name: a, resources: {requests: {cpu: 0.1}}}]", 0, 100, 0 },
	{ "containers: []", 0, 0, 0 },
};

Test(resources, sums_as_the_scheduler_does)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *spec = t_yaml(rows[i].spec);
		wmap_resources r;
		wmap_error err = { 0 };

		memset(&r, 0xff, sizeof(r));
		cr_assert_eq(wmap_pod_resources(&r, spec, "/spec", &err), 0, "%s: %s", rows[i].spec,
			     err.message);
		cr_expect_eq(r.gpu, rows[i].gpu, "%s: gpu %lld", rows[i].spec, (long long)r.gpu);
		cr_expect_eq(r.cpu_milli, rows[i].cpu_milli, "%s: cpu %lld", rows[i].spec,
			     (long long)r.cpu_milli);
		cr_expect_eq(r.memory, rows[i].memory, "%s: memory %lld", rows[i].spec,
			     (long long)r.memory);
		json_decref(spec);
	}
}

Test(resources, a_bad_quantity_names_its_path)
{
	static const struct {
		const char *spec, *path;
	} bad[] = {
		{ "containers: [{name: a, resources: {requests: {cpu: lots}}}]",
		  ".spec.containers[0].resources.requests.cpu" },
		{ "containers: [{name: a}, {name: b, resources: {limits: {memory: 1Qi}}}]",
		  ".spec.containers[1].resources.limits.memory" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *spec = t_yaml(bad[i].spec);
		wmap_resources r;
		wmap_error err = { 0 };

		cr_expect_lt(wmap_pod_resources(&r, spec, "/spec", &err), 0, "%s", bad[i].spec);
		cr_expect_not_null(strstr(err.message, bad[i].path), "%s: %s", bad[i].spec,
				   err.message);
		json_decref(spec);
	}
}

/* wmap_pod_amounts: any resource name, by the same rules, in exact thousandths. */
Test(resources, any_resource_name_counted_exactly)
{
	json_t *spec = t_yaml("initContainers:\n"
			      "- {name: init, resources: {requests: {amd.com/gpu: 6, ephemeral-storage: 1Gi}}}\n"
			      "- {name: side, restartPolicy: Always, resources: {limits: {amd.com/gpu: 1}}}\n"
			      "containers:\n"
			      "- {name: a, resources: {limits: {amd.com/gpu: 2, cpu: 1500m}}}\n"
			      "- {name: b, resources: {requests: {amd.com/gpu: 2, cpu: 0.25}, limits: {cpu: 4}}}\n"
			      "overhead: {cpu: 10m}\n");
	wmap_pod pod = { 0 };
	static const char *const names[] = { "amd.com/gpu", "cpu", "ephemeral-storage", "example.com/none" };
	int64_t milli[4];
	wmap_quantity_family fam[4];
	wmap_error err = { 0 };
	pod.shape = WMAP_SPEC_PODSPEC;
	pod.spec.value = spec;
	pod.spec.pointer = "/spec";
	cr_assert_eq(wmap_pod_amounts(milli, fam, &pod, names, 4, &err), 0, "%s", err.message);
	/* containers 2 + 2 and the sidecar 1 (5) lose to the init container's 6 */
	cr_expect_eq(milli[0], 6000);
	/* 1500m (a limit standing in) + 250m (the request wins over the limit) + overhead */
	cr_expect_eq(milli[1], 1760);
	cr_expect_eq(milli[2], 1024LL * 1024 * 1024 * 1000);
	cr_expect_eq(fam[2], WMAP_QUANTITY_BINARY_SI);
	cr_expect_eq(milli[3], 0, "a name nothing asks for");
	cr_expect_eq(wmap_pod_amounts(milli, fam, &pod, names, WMAP_POD_AMOUNTS_MAX + 1, &err),
		     WMAP_EINVAL);
	json_decref(spec);

	/* many huge quantities saturate instead of overflowing */
	spec = t_yaml("containers:\n- {name: a, resources: {requests: {cpu: 9e15}}}\n"
		      "- {name: b, resources: {requests: {cpu: 9e15}}}\n");
	pod.spec.value = spec;
	cr_assert_eq(wmap_pod_amounts(milli, NULL, &pod, names + 1, 1, &err), 0, "%s", err.message);
	cr_expect_eq(milli[0], INT64_MAX);
	json_decref(spec);
}

/* The whole message of each error, its path spelt out from the base pointer only when the
 * error is found (the walk joins no pointer on the way): an escaped base, an escaped
 * resource name, a list long enough to be looked up name by name, every place a value can
 * be wrong. */
Test(resources, every_error_names_its_whole_path)
{
	static const struct {
		const char *spec, *message;
	} bad[] = {
		{ "{\"containers\":[{\"resources\":[1]}]}",
		  ".spec[\"x/y\"].containers[0].resources: resources must be an object" },
		{ "{\"containers\":{\"a\":1}}", ".spec[\"x/y\"].containers: must be a list of containers" },
		{ "{\"containers\":[1]}", "container 0 is not an object" },
		{ "{\"initContainers\":[{},{\"resources\":{\"requests\":{\"memory\":\"1x\"}}}]}",
		  ".spec[\"x/y\"].initContainers[1].resources.requests.memory: quantity \"1x\" has an "
		  "unknown suffix \"x\"" },
		{ "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":true}}}]}",
		  ".spec[\"x/y\"].containers[0].resources.requests.cpu: a quantity must be a string or a "
		  "number" },
		{ "{\"resources\":{\"limits\":{\"cpu\":\"-1\"}}}",
		  ".spec[\"x/y\"].resources.limits.cpu: quantity \"-1\" is negative" },
		{ "{\"overhead\":{\"memory\":\"zz\"}}",
		  ".spec[\"x/y\"].overhead.memory: quantity \"zz\" has no number" },
		{ "{\"containers\":[{\"resources\":{\"requests\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,"
		  "\"f\":6,\"g\":7,\"h\":8,\"cpu\":\"9e99999\"}}}]}",
		  ".spec[\"x/y\"].containers[0].resources.requests.cpu: quantity \"9e99999\" is too large" },
		{ "[1]", ".spec[\"x/y\"]: a pod spec must be an object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *spec = json_loads(bad[i].spec, 0, NULL);
		wmap_resources r;
		wmap_error err = { 0 };
		cr_assert_not_null(spec, "%s", bad[i].spec);
		cr_expect_lt(wmap_pod_resources(&r, spec, "/spec/x~1y", &err), 0, "%s", bad[i].spec);
		cr_expect_str_eq(err.message, bad[i].message, "%s", bad[i].spec);
		json_decref(spec);
	}
	/* a counted name that needs escaping, and a name counted twice */
	static const char *const names[] = { "cpu", "ex.com/a~b", "cpu" };
	int64_t milli[3];
	wmap_error err = { 0 };
	json_t *spec = json_loads("{\"containers\":[{\"resources\":{\"requests\":{\"ex.com/a~b\":\"bad\"}}}]}",
				  0, NULL);
	cr_expect_lt(wmap_pod_spec_amounts(milli, NULL, spec, "/b", names, 3, &err), 0);
	cr_expect_str_eq(err.message,
			 ".b.containers[0].resources.requests[\"ex.com/a~b\"]: quantity \"bad\" has no number");
	json_decref(spec);
	spec = json_loads("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":null},\"limits\":{\"cpu\":\"1\"}}}],"
			  "\"overhead\":{\"cpu\":\"1m\",\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8}}",
			  0, NULL);
	cr_assert_eq(wmap_pod_spec_amounts(milli, NULL, spec, "/b", names, 3, &err), 0, "%s", err.message);
	/* a null request counts as asked for: nothing from the limit; the overhead is added */
	cr_expect_eq(milli[0], 1);
	cr_expect_eq(milli[2], 1);
	cr_expect_eq(milli[1], 0);
	json_decref(spec);
}
