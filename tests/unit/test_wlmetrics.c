/* Workload metrics: a resolved fixture's families and a pod's attribution line. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/wlmetrics.h"

static wmap_registry *reg;
static wmap_engine *eng;

static void init(void)
{
	t_catalog_engine(&reg, &eng);
}

static void fini(void)
{
	t_catalog_engine_free(reg, eng);
	reg = NULL;
	eng = NULL;
}

TestSuite(wlmetrics, .init = init, .fini = fini);

static wmap_workload *resolve(const char *fixture)
{
	char msg[512], path[512];
	wmap_error err = { 0 };
	wmap_workload *w = NULL;
	snprintf(path, sizeof(path), "tests/fixtures/%s", fixture);
	json_t *obj = t_load_file(path, msg, sizeof(msg));
	cr_assert_not_null(obj, "%s", msg);
	cr_assert_eq(wmap_workload_resolve(&w, eng, obj, NULL, &err), 0, "%s", err.message);
	json_decref(obj);
	return w;
}

static void render(wmap_buf out[WMAP_WLM_COUNT], size_t *series, const wmap_workload *w)
{
	wmap_error err = { 0 };
	for (int f = 0; f < WMAP_WLM_COUNT; f++)
		wmap_buf_init(&out[f], 1 << 20, 0);
	*series = 0;
	cr_assert_eq(wmap_wlm_workload(out, series, w, &err), 0, "%s", err.message);
}

static void clear(wmap_buf out[WMAP_WLM_COUNT])
{
	for (int f = 0; f < WMAP_WLM_COUNT; f++)
		wmap_buf_free(&out[f]);
}

Test(wlmetrics, jobset_created_requests_twelve_gpus_before_any_pod)
{
	wmap_workload *w = resolve("jobset-x-k8s-io-jobset-v1alpha2/created.yaml");
	wmap_buf out[WMAP_WLM_COUNT];
	size_t series;
	render(out, &series, w);
	const char *id = "namespace=\"ml-team\",workload=\"llama-train-new\",workload_kind=\"JobSet\","
			 "workload_group=\"jobset.x-k8s.io\"";
	char want[1024];
	snprintf(want, sizeof(want),
		 "wmap_workload_info{%s,workload_version=\"v1alpha2\",definition=\"jobset-x-k8s-io-"
		 "jobset-v1alpha2\",queue=\"ml-team-queue\"} 1\n",
		 id);
	cr_expect_str_eq(wmap_buf_cstr(&out[WMAP_WLM_INFO]), want);
	snprintf(want, sizeof(want), "wmap_workload_status{%s,phase=\"Initializing\"} 1\n", id);
	cr_expect_not_null(strstr(wmap_buf_cstr(&out[WMAP_WLM_STATUS]), want));
	snprintf(want, sizeof(want), "wmap_workload_status{%s,phase=\"Running\"} 0\n", id);
	cr_expect_not_null(strstr(wmap_buf_cstr(&out[WMAP_WLM_STATUS]), want));
	snprintf(want, sizeof(want),
		 "wmap_workload_component_replicas{%s,component=\"replicatedjob\","
		 "component_instance=\"workers\"} 2\n",
		 id);
	cr_expect_not_null(strstr(wmap_buf_cstr(&out[WMAP_WLM_REPLICAS]), want));
	snprintf(want, sizeof(want),
		 "wmap_workload_component_resource_requests{%s,component=\"replicatedjob\","
		 "component_instance=\"workers\",resource=\"nvidia_com_gpu\",unit=\"integer\"} 8\n",
		 id);
	cr_expect_not_null(strstr(wmap_buf_cstr(&out[WMAP_WLM_REQUESTS]), want), "%s",
			   wmap_buf_cstr(&out[WMAP_WLM_REQUESTS]));
	snprintf(want, sizeof(want),
		 "wmap_workload_component_resource_requests{%s,component=\"replicatedjob\","
		 "component_instance=\"workers\",resource=\"memory\",unit=\"byte\"} 274877906944\n",
		 id);
	cr_expect_not_null(strstr(wmap_buf_cstr(&out[WMAP_WLM_REQUESTS]), want));
	/* 1 info, 9 phases, 2 instances x (1 replicas + cpu, memory, gpu) */
	cr_expect_eq(series, 1 + 9 + 2 * 4);
	clear(out);
	wmap_workload_free(w);
}

Test(wlmetrics, raycluster_pods_placed_by_group)
{
	wmap_workload *w = resolve("ray-io-raycluster-v1/running.yaml");
	json_t *worker = t_yaml("metadata: {name: w-0, namespace: ml-team, uid: u1, labels: "
				"{ray.io/node-type: worker, ray.io/group: gpu-workers}}");
	json_t *stray = t_yaml("metadata: {name: w-1, namespace: ml-team, uid: u2, labels: "
			       "{ray.io/node-type: worker, ray.io/group: \"no\\\"such\"}}");
	wmap_error err = { 0 };
	int node, inst;
	wmap_buf out = WMAP_BUF_INIT(1 << 16, 0);
	cr_assert_eq(wmap_wlm_place(&node, &inst, eng, w, worker, &err), 0, "%s", err.message);
	cr_assert_geq(node, 0);
	cr_assert_geq(inst, 0);
	wmap_wlm_pod(&out, w, worker, node, inst);
	cr_expect_str_eq(wmap_buf_cstr(&out),
			 "wmap_pod_workload_info{namespace=\"ml-team\",workload=\"raycluster-llm\","
			 "workload_kind=\"RayCluster\",workload_group=\"ray.io\",pod=\"w-0\",uid=\"u1\","
			 "component=\"worker\",component_instance=\"gpu-workers\"} 1\n");
	cr_assert_eq(wmap_wlm_place(&node, &inst, eng, w, stray, &err), 0, "%s", err.message);
	cr_expect_eq(inst, -1, "a group the workload does not have");
	wmap_buf_clear(&out);
	wmap_wlm_pod(&out, w, stray, node, inst);
	cr_expect_not_null(strstr(wmap_buf_cstr(&out), "component_instance=\"<unknown>\"} 1\n"));
	wmap_buf_clear(&out);
	wmap_wlm_escape(&out, "a\"b\\c\nd");
	cr_expect_str_eq(wmap_buf_cstr(&out), "a\\\"b\\\\c\\nd");
	wmap_buf_free(&out);
	json_decref(worker);
	json_decref(stray);
	wmap_workload_free(w);
}
