/* wmap: what one pod asks for (reference 5.8).
 *
 * Each container counts its requests, falling back to its limits (a GPU is often only a
 * limit). The pod needs the larger of its biggest init container and the sum of its
 * containers plus its sidecars (init containers with restartPolicy Always, which keep
 * running); pod-level resources replace CPU and memory when set; overhead is added. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "wmap/quantity.h"
#include "wmap/workload.h"

#define GPU_KEY "nvidia.com/gpu"

static int read_quantity(int64_t *out, wmap_quantity_family *family, const json_t *v, int milli,
			 const char *ptr, wmap_error *err)
{
	char buf[64];
	const char *s;
	int rc;

	if (json_is_string(v)) {
		s = json_string_value(v);
	} else if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		s = buf;
	} else if (json_is_real(v)) {
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		s = buf;
	} else {
		char path[1024];
		wmap_pointer_to_path(path, sizeof(path), ptr);
		return wmap_error_set(err, WMAP_EINVAL, "%s: a quantity must be a string or a number", path);
	}
	rc = wmap_quantity_parse_family(out, family, s, err);
	if (rc == 0 && *out < 0)
		rc = wmap_error_set(err, WMAP_EINVAL, "quantity \"%s\" is negative", s);
	if (rc == 0 && !milli) /* whole units, rounded up as Kubernetes' Value does */
		*out = *out / 1000 + (*out % 1000 != 0);
	if (rc) {
		char path[1024];
		wmap_pointer_to_path(path, sizeof(path), ptr);
		wmap_error_prefix(err, "%s", path);
	}
	return rc;
}

/* One resource of a plain resource list (name -> quantity) at base; 0 when absent. family
 * (may be NULL) gets the suffix family. */
static int from_list(int64_t *out, wmap_quantity_family *family, const json_t *list, const char *name,
		     int milli, const char *base, wmap_error *err)
{
	const json_t *v = json_object_get(list, name);
	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	char *p = wmap_pointer_join(base, name);
	int rc = p ? read_quantity(out, family, v, milli, p, err)
		   : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	free(p);
	return rc;
}

/* A resource list at base: GPU, CPU, memory. */
static int resource_list(wmap_resources *out, const json_t *list, const char *base, wmap_error *err)
{
	int rc;
	if ((rc = from_list(&out->gpu, NULL, list, GPU_KEY, 0, base, err)) ||
	    (rc = from_list(&out->cpu_milli, NULL, list, "cpu", 1, base, err)) ||
	    (rc = from_list(&out->memory, &out->memory_family, list, "memory", 0, base, err)))
		return rc;
	return 0;
}

/* A ResourceRequirements object at base: requests, each falling back to limits. */
static int requirements(wmap_resources *out, const json_t *req, const char *base, wmap_error *err)
{
	wmap_resources rq = { 0 }, lim = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!req || json_is_null(req))
		return 0;
	if (!json_is_object(req)) {
		char path[1024];
		wmap_pointer_to_path(path, sizeof(path), base);
		return wmap_error_set(err, WMAP_EINVAL, "%s: resources must be an object", path);
	}
	char *rp = wmap_pointer_join(base, "requests"), *lp = wmap_pointer_join(base, "limits");
	if (!rp || !lp) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = resource_list(&rq, json_object_get(req, "requests"), rp, err)) ||
	    (rc = resource_list(&lim, json_object_get(req, "limits"), lp, err)))
		goto out;
	const json_t *reqs = json_object_get(req, "requests");
	out->gpu = json_object_get(reqs, GPU_KEY) ? rq.gpu : lim.gpu;
	out->cpu_milli = json_object_get(reqs, "cpu") ? rq.cpu_milli : lim.cpu_milli;
	out->memory = json_object_get(reqs, "memory") ? rq.memory : lim.memory;
	out->memory_family = json_object_get(reqs, "memory") ? rq.memory_family : lim.memory_family;
out:
	free(rp);
	free(lp);
	return rc;
}

static void add(wmap_resources *a, const wmap_resources *b)
{
	a->gpu += b->gpu;
	a->cpu_milli += b->cpu_milli;
	if (a->memory == 0)
		a->memory_family = b->memory_family;
	a->memory += b->memory;
}

static void max_into(wmap_resources *a, const wmap_resources *b)
{
	if (b->gpu > a->gpu)
		a->gpu = b->gpu;
	if (b->cpu_milli > a->cpu_milli)
		a->cpu_milli = b->cpu_milli;
	if (b->memory > a->memory) {
		a->memory = b->memory;
		a->memory_family = b->memory_family;
	}
}

/* Sum of the containers of list (NULL or an array) at base; sidecars_only picks init
 * containers with restartPolicy Always, and init_max the largest of the others. */
static int containers(wmap_resources *sum, wmap_resources *init_max, const json_t *list,
		      const char *base, int init, wmap_error *err)
{
	size_t i;
	json_t *c;
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list)) {
		char path[1024];
		wmap_pointer_to_path(path, sizeof(path), base);
		return wmap_error_set(err, WMAP_EINVAL, "%s: must be a list of containers", path);
	}
	json_array_foreach(list, i, c) {
		wmap_resources r;
		char *cp = wmap_pointer_join_index(base, i), *rp = cp ? wmap_pointer_join(cp, "resources") : NULL;
		int rc = rp ? (json_is_object(c) ? requirements(&r, json_object_get(c, "resources"), rp, err)
						 : wmap_error_set(err, WMAP_EINVAL, "container %zu is not an object", i))
			    : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		free(cp);
		free(rp);
		if (rc)
			return rc;
		const char *policy = json_string_value(json_object_get(c, "restartPolicy"));
		if (init && !(policy && strcmp(policy, "Always") == 0))
			max_into(init_max, &r);
		else
			add(sum, &r);
	}
	return 0;
}

int wmap_pod_resources(wmap_resources *out, const json_t *spec, const char *base, wmap_error *err)
{
	wmap_resources sum = { 0 }, init_max = { 0 }, pod, overhead = { 0 };
	int rc;
	char *p = NULL;

	memset(out, 0, sizeof(*out));
	if (!spec || json_is_null(spec))
		return 0;
	if (!json_is_object(spec)) {
		char path[1024];
		wmap_pointer_to_path(path, sizeof(path), base);
		return wmap_error_set(err, WMAP_EINVAL, "%s: a pod spec must be an object", path);
	}
#define SUB(key) (free(p), p = wmap_pointer_join(base, key))
	if (!SUB("containers"))
		goto oom;
	if ((rc = containers(&sum, &init_max, json_object_get(spec, "containers"), p, 0, err)))
		goto out;
	if (!SUB("initContainers"))
		goto oom;
	if ((rc = containers(&sum, &init_max, json_object_get(spec, "initContainers"), p, 1, err)))
		goto out;
	max_into(&sum, &init_max);
	if (!SUB("resources"))
		goto oom;
	if ((rc = requirements(&pod, json_object_get(spec, "resources"), p, err)))
		goto out;
	if (pod.cpu_milli)
		sum.cpu_milli = pod.cpu_milli;
	if (pod.memory) {
		sum.memory = pod.memory;
		sum.memory_family = pod.memory_family;
	}
	const json_t *oh = json_object_get(spec, "overhead");
	if (oh && !json_is_null(oh)) {
		if (!SUB("overhead"))
			goto oom;
		if ((rc = resource_list(&overhead, oh, p, err)))
			goto out;
		add(&sum, &overhead);
	}
#undef SUB
	*out = sum;
	free(p);
	return 0;
oom:
	rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
out:
	free(p);
	return rc;
}

/* A fragmented pod (reference 5.8): containers plus container, else resources. */
int wmap__fragment_resources(wmap_resources *out, const wmap_pod *pod, wmap_error *err)
{
	wmap_resources sum = { 0 }, none = { 0 };
	int rc;
	const wmap_location *cs = &pod->frag[WMAP_FRAG_CONTAINERS], *c = &pod->frag[WMAP_FRAG_CONTAINER],
			    *r = &pod->frag[WMAP_FRAG_RESOURCES];

	memset(out, 0, sizeof(*out));
	if (cs->value && (rc = containers(&sum, &none, cs->value, cs->pointer ? cs->pointer : "", 0, err)))
		return rc;
	if (c->value && json_is_object(c->value)) {
		wmap_resources one_c;
		char *rp = wmap_pointer_join(c->pointer ? c->pointer : "", "resources");
		if (!rp)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		rc = requirements(&one_c, json_object_get(c->value, "resources"), rp, err);
		free(rp);
		if (rc)
			return rc;
		add(&sum, &one_c);
	}
	if (sum.gpu == 0 && sum.cpu_milli == 0 && sum.memory == 0 && r->value &&
	    (rc = requirements(&sum, r->value, r->pointer ? r->pointer : "", err)))
		return rc;
	*out = sum;
	return 0;
}
