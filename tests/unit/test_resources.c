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
	  "containers: [{name: a, resources: {requests: {cpu: 1}}}]", 0, 3000, 0 },
	/* overhead is added */
	{ "overhead: {cpu: 100m}\ncontainers: [{name: a, resources: {requests: {cpu: 1}}}]", 0, 1100, 0 },
	{ "containers: [{name: a}]", 0, 0, 0 },
	{ "containers: []", 0, 0, 0 },
};

Test(resources, sums_as_the_scheduler_does)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *spec = t_yaml(rows[i].spec);
		wmap_resources r;
		wmap_error err = {0};

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
		wmap_error err = {0};

		cr_expect_lt(wmap_pod_resources(&r, spec, "/spec", &err), 0, "%s", bad[i].spec);
		cr_expect_not_null(strstr(err.message, bad[i].path), "%s: %s", bad[i].spec,
				   err.message);
		json_decref(spec);
	}
}
