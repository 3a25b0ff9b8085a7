/* TYPE resolution as kubectl does it (from a discovery cache file, no server), REST paths,
 * and the CRD check for pruned pod-template labels. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "wmap/kube.h"

static char dir[256];
static wmap_kube_config cfg;
static wmap_kube_client *client;
static wmap_discovery *disc;

static void setup(void)
{
	char path[512], sub[400];
	FILE *f;
	wmap_error err = { 0 };

	t_temp_dir(dir, sizeof(dir), "wmap-disc");
	setenv("WMAP_CACHE_DIR", dir, 1);
	snprintf(sub, sizeof(sub), "%s/example.test_6443", dir);
	mkdir(sub, 0700);
	snprintf(path, sizeof(path), "%s/resources.json", sub);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"server\":\"https://example.test:6443\",\"time\":%lld,\"resources\":["
		"{\"group\":\"\",\"version\":\"v1\",\"name\":\"pods\",\"singularName\":\"pod\",\"kind\":\"Pod\",\"namespaced\":true,\"preferred\":true,\"shortNames\":[\"po\"]},"
		"{\"group\":\"batch\",\"version\":\"v1\",\"name\":\"jobs\",\"singularName\":\"job\",\"kind\":\"Job\",\"namespaced\":true,\"preferred\":true,\"shortNames\":[]},"
		"{\"group\":\"batch.volcano.sh\",\"version\":\"v1alpha1\",\"name\":\"jobs\",\"singularName\":\"job\",\"kind\":\"Job\",\"namespaced\":true,\"preferred\":true,\"shortNames\":[\"vcjob\"]},"
		"{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\",\"name\":\"jobsets\",\"singularName\":\"jobset\",\"kind\":\"JobSet\",\"namespaced\":true,\"preferred\":true,\"shortNames\":[]},"
		"{\"group\":\"ray.io\",\"version\":\"v1\",\"name\":\"rayclusters\",\"singularName\":\"raycluster\",\"kind\":\"RayCluster\",\"namespaced\":true,\"preferred\":true,\"shortNames\":[]},"
		"{\"group\":\"ray.io\",\"version\":\"v1alpha1\",\"name\":\"rayclusters\",\"singularName\":\"raycluster\",\"kind\":\"RayCluster\",\"namespaced\":true,\"preferred\":false,\"shortNames\":[]},"
		"{\"group\":\"run.ai\",\"version\":\"v1alpha1\",\"name\":\"kartas\",\"singularName\":\"karta\",\"kind\":\"Karta\",\"namespaced\":false,\"preferred\":true,\"shortNames\":[]},"
		"{\"group\":\"a.example\",\"version\":\"v1\",\"name\":\"widgets\",\"singularName\":\"widget\",\"kind\":\"Widget\",\"namespaced\":true,\"preferred\":true,\"shortNames\":[]},"
		"{\"group\":\"b.example\",\"version\":\"v1\",\"name\":\"widgets\",\"singularName\":\"widget\",\"kind\":\"Widget\",\"namespaced\":true,\"preferred\":true,\"shortNames\":[]}"
		"]}", (long long)time(NULL));
	fclose(f);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = "https://example.test:6443";
	cr_assert_eq(wmap_kube_client_new(&client, &cfg, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_discovery_load(&disc, client, 0, &err), 0, "%s", err.message);
	cr_assert(wmap_discovery_cached(disc));
}

static void teardown(void)
{
	wmap_discovery_free(disc);
	wmap_kube_client_free(client);
	t_remove_dir(dir);
}

TestSuite(discovery, .init = setup, .fini = teardown);

static const wmap_api_resource *resolve(const char *type, int want_rc)
{
	const wmap_api_resource *r = NULL;
	wmap_error err = { 0 };

	cr_expect_eq(wmap_discovery_resolve(&r, disc, type, &err), want_rc, "%s: %s", type, err.message);
	return r;
}

Test(discovery, resolves_every_spelling_kubectl_accepts)
{
	const char *spellings[] = { "jobset", "jobsets", "JobSet", "JOBSETS", "jobsets.jobset.x-k8s.io",
				    "jobset.jobset.x-k8s.io", "jobsets.v1alpha2.jobset.x-k8s.io",
				    "JobSet.v1alpha2.jobset.x-k8s.io", "JobSet.jobset.x-k8s.io" };

	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		const wmap_api_resource *r = resolve(spellings[i], 0);

		cr_expect(r && strcmp(r->plural, "jobsets") == 0, "%s", spellings[i]);
	}
	cr_expect_str_eq(resolve("po", 0)->plural, "pods");
	cr_expect_str_eq(resolve("vcjob", 0)->group, "batch.volcano.sh");
}

Test(discovery, preferred_version_unless_one_is_given)
{
	cr_expect_str_eq(resolve("raycluster", 0)->version, "v1");
	cr_expect_str_eq(resolve("rayclusters.v1alpha1.ray.io", 0)->version, "v1alpha1");
}

Test(discovery, builtin_groups_first_and_ambiguity_reported)
{
	cr_expect_str_eq(resolve("jobs", 0)->group, "batch", "kubectl's priority: built-in group");
	cr_expect_str_eq(resolve("jobs.batch.volcano.sh", 0)->group, "batch.volcano.sh");
	cr_expect_null(resolve("widgets", WMAP_EINVAL));
	cr_expect_str_eq(resolve("widgets.b.example", 0)->group, "b.example");
	cr_expect_null(resolve("frobs", WMAP_ENOTFOUND));
}

Test(discovery, rest_paths)
{
	char *p = wmap_resource_path(resolve("jobset", 0), "ml", "train");
	char label[128];

	cr_expect_str_eq(p, "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/train");
	free(p);
	p = wmap_resource_path(resolve("pods", 0), NULL, NULL);
	cr_expect_str_eq(p, "/api/v1/pods");
	free(p);
	p = wmap_resource_path(resolve("kartas", 0), "ignored", "k");
	cr_expect_str_eq(p, "/apis/run.ai/v1alpha1/kartas/k", "cluster-scoped: no namespace");
	free(p);
	wmap_resource_label(label, sizeof(label), resolve("jobset", 0));
	cr_expect_str_eq(label, "jobsets.jobset.x-k8s.io");
	cr_expect_not_null(wmap_discovery_find_kind(disc, "ray.io", "v1alpha1", "RayCluster"));
	cr_expect_null(wmap_discovery_find_kind(disc, "ray.io", "v2", "RayCluster"));
}

Test(discovery, expired_cache_is_not_used)
{
	wmap_discovery *d = NULL;
	wmap_error err = { 0 };

	/* A TTL of 1 s on a file written now still holds; the server is unreachable, so a
	 * walk would fail: the cache must be what answered. */
	cr_expect_eq(wmap_discovery_load(&d, client, 3600, &err), 0, "%s", err.message);
	cr_expect(wmap_discovery_count(d) >= 9);
	wmap_discovery_free(d);
}

static json_t *crd(const char *template_schema)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{\"spec\":{\"versions\":[{\"name\":\"v1\",\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
		 "\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"groups\":{\"type\":\"array\","
		 "\"items\":{\"type\":\"object\",\"properties\":{\"template\":%s}}}}}}}}}]}}", template_schema);
	json_t *v = json_loads(text, 0, NULL);
	cr_assert_not_null(v, "%s", text);
	return v;
}

Test(discovery, crd_pruning_of_template_labels)
{
	struct {
		const char *schema;
		int prunes;
	} cases[] = {
		{ "{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"object\"},\"spec\":{\"type\":\"object\"}}}", 1 },
		{ "{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"object\",\"properties\":{\"labels\":{\"type\":\"object\"}}}}}", 0 },
		{ "{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}", 1 },
		{ "{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}", 0 },
		{ "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}", 0 },
		{ "{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,\"properties\":{\"metadata\":{\"type\":\"object\"}}}", 0 },
		{ "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\"}}}", 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = crd(cases[i].schema);

		cr_expect_eq(wmap_crd_prunes_template_labels(c, "v1", "/spec/groups/0/template"),
			     cases[i].prunes, "case %zu", i);
		json_decref(c);
	}
}
