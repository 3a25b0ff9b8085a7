/* wmap: what one pod asks for (reference 5.8).
 *
 * Each container counts its requests, falling back to its limits (a GPU is often only a
 * limit). The pod needs the larger of its biggest init container and the sum of its
 * containers plus its sidecars (init containers with restartPolicy Always, which keep
 * running); pod-level resources replace what they set (CPU and memory); overhead is added.
 *
 * One walk counts any set of resource names at once: describe's three (GPU, CPU, memory)
 * and a policy's limits (any name, wmap_pod_amounts) follow the same rules. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "wmap/quantity.h"
#include "wmap/workload.h"

#define GPU_KEY "nvidia.com/gpu"

/* The resources being counted: names[n], each in thousandths of a unit when milli[i], else
 * in whole units with every quantity rounded up (as Kubernetes' Value does). */
typedef struct counting {
	size_t n;
	const char *const *names;
	const unsigned char *milli;
	const size_t *lens; /* strlen of each name */
} counting;

/* The members of obj named names[0..n) (lens their lengths), NULL where absent or when obj
 * is not an object. A small object (a container, a requirements object, most pod specs)
 * is read member by member: comparing a few lengths costs less than hashing each name. */
static void pick(const json_t *obj, const char *const *names, const size_t *lens, size_t n,
		 const json_t **out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = NULL;
	if (!json_is_object(obj))
		return;
	if (json_object_size(obj) > 8) {
		for (size_t i = 0; i < n; i++)
			out[i] = json_object_get(obj, names[i]);
		return;
	}
	const char *k;
	size_t kn;
	json_t *v;
	json_object_keylen_foreach((json_t *)obj, k, kn, v) {
		for (size_t i = 0; i < n; i++)
			if (lens[i] == kn && memcmp(names[i], k, kn) == 0)
				out[i] = v;
	}
}

/* One amount per name of a counting, with the suffix family it was written in. Sums and
 * maxima keep the family as Kubernetes' Quantity.Add does: a sum takes the family of its
 * first non-zero term, a larger value's family wins a max. */
typedef struct amounts {
	int64_t v[WMAP_POD_AMOUNTS_MAX];
	wmap_quantity_family fam[WMAP_POD_AMOUNTS_MAX];
} amounts;

static void amounts_zero(amounts *a, const counting *c)
{
	memset(a->v, 0, c->n * sizeof(a->v[0]));
	memset(a->fam, 0, c->n * sizeof(a->fam[0]));
}

/* Quantities are bounded by their parse, but a hostile object can list many of them:
 * saturate rather than overflow. */
static int64_t sat_add(int64_t a, int64_t b)
{
	return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void add(amounts *a, const amounts *b, const counting *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (a->v[i] == 0)
			a->fam[i] = b->fam[i];
		a->v[i] = sat_add(a->v[i], b->v[i]);
	}
}

static void max_into(amounts *a, const amounts *b, const counting *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (b->v[i] > a->v[i]) {
			a->v[i] = b->v[i];
			a->fam[i] = b->fam[i];
		}
	}
}

/* Where a value is, as a chain of tokens from a base pointer (already escaped), spelt out as
 * a pointer only when an error names it: a resolve reads every container's resources, and
 * joining their pointers up front was half of the walk's instructions. */
typedef struct at {
	const struct at *up; /* NULL: key is the base pointer */
	const char *key;     /* a member name (unescaped), or NULL for index */
	size_t index;
} at;

#define AT_KEY(parent, k) ((at){ (parent), (k), 0 })
#define AT_INDEX(parent, i) ((at){ (parent), NULL, (i) })

/* The pointer of a, as wmap_pointer_join and wmap_pointer_join_index make it; NULL when
 * memory runs out. */
static char *at_pointer(const at *a)
{
	if (!a->up)
		return strdup(a->key);
	char *base = at_pointer(a->up);
	if (!base)
		return NULL;
	char *p = a->key ? wmap_pointer_join(base, a->key) : wmap_pointer_join_index(base, a->index);
	free(base);
	return p;
}

/* a as a path (wmap_pointer_to_path) into path[1024]; -1 when memory runs out. */
static int at_path(char *path, size_t len, const at *a)
{
	char *p = at_pointer(a);
	if (!p)
		return -1;
	wmap_pointer_to_path(path, len, p);
	free(p);
	return 0;
}

static int read_quantity(int64_t *out, wmap_quantity_family *family, const json_t *v, int milli,
			 const at *where, wmap_error *err)
{
	char buf[64];
	const char *s;
	int rc;

	if (json_is_string(v)) {
		s = json_string_value(v);
	} else if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 1000000000000000LL) {
		/* what the parse of its digits gives, without printing them */
		*out = json_integer_value(v) * 1000;
		if (family)
			*family = WMAP_QUANTITY_DECIMAL_SI;
		if (!milli)
			*out /= 1000;
		return 0;
	} else if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		s = buf;
	} else if (json_is_real(v)) {
		wmap_quantity_format_number(buf, sizeof(buf), json_real_value(v));
		s = buf;
	} else {
		char path[1024];
		if (at_path(path, sizeof(path), where))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return wmap_error_set(err, WMAP_EINVAL, "%s: a quantity must be a string or a number", path);
	}
	rc = wmap_quantity_parse_family(out, family, s, err);
	if (rc == 0 && *out < 0)
		rc = wmap_error_set(err, WMAP_EINVAL, "quantity \"%s\" is negative", s);
	if (rc == 0 && !milli) /* whole units, rounded up as Kubernetes' Value does */
		*out = *out / 1000 + (*out % 1000 != 0);
	if (rc) {
		char path[1024];
		if (at_path(path, sizeof(path), where))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		wmap_error_prefix(err, "%s", path);
	}
	return rc;
}

/* The values of the counted names in list (an object, else none), NULL where absent, and a
 * bit per name present (null included, as json_object_get finds it). A short list (the
 * usual two or three names) is read member by member rather than looked up once per
 * counted name: comparing a few names costs less than hashing each. */
static uint32_t list_values(const json_t **vals, const json_t *list, const counting *c)
{
	uint32_t present = 0;
	for (size_t i = 0; i < c->n; i++)
		vals[i] = NULL;
	if (!json_is_object(list))
		return 0;
	if (json_object_size(list) > 8) {
		for (size_t i = 0; i < c->n; i++)
			if ((vals[i] = json_object_get(list, c->names[i])))
				present |= (uint32_t)1 << i;
		return present;
	}
	const char *k;
	size_t kn;
	json_t *v;
	json_object_keylen_foreach((json_t *)list, k, kn, v) {
		for (size_t i = 0; i < c->n; i++)
			if (c->lens[i] == kn && memcmp(c->names[i], k, kn) == 0) {
				vals[i] = v; /* every counted name that is this key (names may repeat) */
				present |= (uint32_t)1 << i;
			}
	}
	return present;
}

/* A plain resource list (name -> quantity) at base: every counted name, 0 when absent; the
 * names present (list_values) into *present when not NULL. */
static int resource_list(amounts *out, const json_t *list, const at *base, const counting *c,
			 uint32_t *present, wmap_error *err)
{
	const json_t *vals[WMAP_POD_AMOUNTS_MAX];
	uint32_t got = list_values(vals, list, c);
	if (present)
		*present = got;
	amounts_zero(out, c);
	for (size_t i = 0; i < c->n; i++) {
		const json_t *v = vals[i];
		if (!v || json_is_null(v))
			continue;
		at where = AT_KEY(base, c->names[i]);
		int rc = read_quantity(&out->v[i], &out->fam[i], v, c->milli[i], &where, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* A ResourceRequirements object at base: requests, each falling back to limits. */
static int requirements(amounts *out, const json_t *req, const at *base, const counting *c,
			wmap_error *err)
{
	amounts rq, lim;
	uint32_t in_requests;
	int rc;

	amounts_zero(out, c);
	if (!req || json_is_null(req))
		return 0;
	if (!json_is_object(req)) {
		char path[1024];
		if (at_path(path, sizeof(path), base))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return wmap_error_set(err, WMAP_EINVAL, "%s: resources must be an object", path);
	}
	static const char *const names[2] = { "requests", "limits" };
	static const size_t lens[2] = { 8, 6 };
	const json_t *lists[2];
	pick(req, names, lens, 2, lists);
	at rp = AT_KEY(base, "requests"), lp = AT_KEY(base, "limits");
	if ((rc = resource_list(&rq, lists[0], &rp, c, &in_requests, err)) ||
	    (rc = resource_list(&lim, lists[1], &lp, c, NULL, err)))
		return rc;
	for (size_t i = 0; i < c->n; i++) {
		const amounts *from = (in_requests >> i & 1) ? &rq : &lim;
		out->v[i] = from->v[i];
		out->fam[i] = from->fam[i];
	}
	return 0;
}

/* Sum of the containers of list (NULL or an array) at base; for init containers (init),
 * sidecars (restartPolicy Always) are summed, and each other init container costs its own
 * amount plus the sidecars started before it (they keep running while it runs), the
 * largest such cost going to init_max (the scheduler's PodRequests). */
static int containers(amounts *sum, amounts *init_max, const json_t *list, const at *base,
		      int init, const counting *cn, wmap_error *err)
{
	size_t i;
	json_t *c;
	amounts sidecars;

	amounts_zero(&sidecars, cn);
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list)) {
		char path[1024];
		if (at_path(path, sizeof(path), base))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return wmap_error_set(err, WMAP_EINVAL, "%s: must be a list of containers", path);
	}
	json_array_foreach(list, i, c) {
		static const char *const names[2] = { "resources", "restartPolicy" };
		static const size_t lens[2] = { 9, 13 };
		const json_t *f[2];
		amounts r;
		at cp = AT_INDEX(base, i), rp = AT_KEY(&cp, "resources");
		pick(c, names, lens, 2, f);
		int rc = json_is_object(c) ? requirements(&r, f[0], &rp, cn, err)
					   : wmap_error_set(err, WMAP_EINVAL, "container %zu is not an object", i);
		if (rc)
			return rc;
		const char *policy = json_string_value(f[1]);
		if (init && !(policy && strcmp(policy, "Always") == 0)) {
			add(&r, &sidecars, cn);
			max_into(init_max, &r, cn);
		} else {
			add(sum, &r, cn);
			if (init)
				add(&sidecars, &r, cn);
		}
	}
	return 0;
}

static int pod_spec_amounts(amounts *out, const json_t *spec, const char *base, const counting *c,
			    wmap_error *err)
{
	amounts sum, init_max, pod, overhead;
	int rc;
	at root = { NULL, base, 0 };

	amounts_zero(out, c);
	if (!spec || json_is_null(spec))
		return 0;
	if (!json_is_object(spec)) {
		char path[1024];
		wmap_pointer_to_path(path, sizeof(path), base);
		return wmap_error_set(err, WMAP_EINVAL, "%s: a pod spec must be an object", path);
	}
	amounts_zero(&sum, c);
	amounts_zero(&init_max, c);
	static const char *const names[4] = { "containers", "initContainers", "resources", "overhead" };
	static const size_t lens[4] = { 10, 14, 9, 8 };
	const json_t *f[4];
	pick(spec, names, lens, 4, f);
	at cs = AT_KEY(&root, "containers"), ics = AT_KEY(&root, "initContainers"),
	   res = AT_KEY(&root, "resources"), ohp = AT_KEY(&root, "overhead");
	if ((rc = containers(&sum, &init_max, f[0], &cs, 0, c, err)) ||
	    (rc = containers(&sum, &init_max, f[1], &ics, 1, c, err)))
		return rc;
	max_into(&sum, &init_max, c);
	if ((rc = requirements(&pod, f[2], &res, c, err)))
		return rc;
	/* Pod-level resources (PodLevelResources) exist for cpu, memory and hugepages only. */
	for (size_t i = 0; i < c->n; i++) {
		const char *name = c->names[i];
		if (pod.v[i] && (strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
				 strncmp(name, "hugepages-", 10) == 0)) {
			sum.v[i] = pod.v[i];
			sum.fam[i] = pod.fam[i];
		}
	}
	const json_t *oh = f[3];
	if (oh && !json_is_null(oh)) {
		if ((rc = resource_list(&overhead, oh, &ohp, c, NULL, err)))
			return rc;
		add(&sum, &overhead, c);
	}
	*out = sum;
	return 0;
}

/* A fragmented pod (reference 5.8): containers plus container, else resources. */
static int fragment_amounts(amounts *out, const wmap_pod *pod, const counting *cn, wmap_error *err)
{
	amounts sum, none;
	int rc, any = 0;
	const wmap_location *cs = &pod->frag[WMAP_FRAG_CONTAINERS], *c = &pod->frag[WMAP_FRAG_CONTAINER],
			    *r = &pod->frag[WMAP_FRAG_RESOURCES];

	amounts_zero(out, cn);
	amounts_zero(&sum, cn);
	amounts_zero(&none, cn);
	at cs_at = { NULL, cs->pointer ? cs->pointer : "", 0 }, c_at = { NULL, c->pointer ? c->pointer : "", 0 },
	   r_at = { NULL, r->pointer ? r->pointer : "", 0 };
	if (cs->value && (rc = containers(&sum, &none, cs->value, &cs_at, 0, cn, err)))
		return rc;
	if (c->value && json_is_object(c->value)) {
		amounts one_c;
		at rp = AT_KEY(&c_at, "resources");
		if ((rc = requirements(&one_c, json_object_get(c->value, "resources"), &rp, cn, err)))
			return rc;
		add(&sum, &one_c, cn);
	}
	for (size_t i = 0; i < cn->n; i++)
		any |= sum.v[i] != 0;
	if (!any && r->value && (rc = requirements(&sum, r->value, &r_at, cn, err)))
		return rc;
	*out = sum;
	return 0;
}

/* describe's three: GPU, CPU, memory. */
static const char *const describe_names[3] = { GPU_KEY, "cpu", "memory" };
static const unsigned char describe_milli[3] = { 0, 1, 0 };
static const size_t describe_lens[3] = { sizeof(GPU_KEY) - 1, 3, 6 };
static const counting describe_counting = { 3, describe_names, describe_milli, describe_lens };

static void to_resources(wmap_resources *out, const amounts *a)
{
	out->gpu = a->v[0];
	out->cpu_milli = a->v[1];
	out->memory = a->v[2];
	out->memory_family = a->fam[2];
}

int wmap_pod_resources(wmap_resources *out, const json_t *spec, const char *base, wmap_error *err)
{
	amounts a;
	int rc = pod_spec_amounts(&a, spec, base, &describe_counting, err);
	memset(out, 0, sizeof(*out));
	if (rc == 0)
		to_resources(out, &a);
	return rc;
}

int wmap__fragment_resources(wmap_resources *out, const wmap_pod *pod, wmap_error *err)
{
	amounts a;
	int rc = fragment_amounts(&a, pod, &describe_counting, err);
	memset(out, 0, sizeof(*out));
	if (rc == 0)
		to_resources(out, &a);
	return rc;
}

static const unsigned char all_milli[WMAP_POD_AMOUNTS_MAX] = {
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
};

/* Either a wmap_pod (pod) or a plain pod spec (spec at base). */
static int amounts_of(int64_t *milli, wmap_quantity_family *family, const wmap_pod *pod,
		      const json_t *spec, const char *base, const char *const *names, size_t n,
		      wmap_error *err)
{
	size_t lens[WMAP_POD_AMOUNTS_MAX];
	counting c = { n, names, all_milli, lens };
	amounts a;
	int rc;
	if (n > WMAP_POD_AMOUNTS_MAX)
		return wmap_error_set(err, WMAP_EINVAL, "%zu resources counted at once; at most %d", n,
				      WMAP_POD_AMOUNTS_MAX);
	for (size_t i = 0; i < n; i++)
		lens[i] = strlen(names[i]);
	if (!pod)
		rc = pod_spec_amounts(&a, spec, base ? base : "", &c, err);
	else if (pod->shape == WMAP_SPEC_FRAGMENTED)
		rc = fragment_amounts(&a, pod, &c, err);
	else
		rc = pod_spec_amounts(&a, pod->spec.value, pod->spec.pointer ? pod->spec.pointer : "", &c, err);
	for (size_t i = 0; i < n; i++) {
		milli[i] = rc ? 0 : a.v[i];
		if (family)
			family[i] = rc ? WMAP_QUANTITY_DECIMAL_SI : a.fam[i];
	}
	return rc;
}

int wmap_pod_amounts(int64_t *milli, wmap_quantity_family *family, const wmap_pod *pod,
		     const char *const *names, size_t n, wmap_error *err)
{
	return amounts_of(milli, family, pod, NULL, NULL, names, n, err);
}

int wmap_pod_spec_amounts(int64_t *milli, wmap_quantity_family *family, const json_t *spec,
			  const char *base, const char *const *names, size_t n, wmap_error *err)
{
	return amounts_of(milli, family, NULL, spec, base, names, n, err);
}

/* The names of one resource list, or of the requests and limits of one requirements
 * object, into set. */
static void list_names(json_t *set, const json_t *list)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)list, k, v)
		json_object_set_new(set, k, json_true());
}

static void requirement_names(json_t *set, const json_t *req)
{
	list_names(set, json_object_get(req, "requests"));
	list_names(set, json_object_get(req, "limits"));
}

static void container_names(json_t *set, const json_t *list)
{
	size_t i;
	json_t *c;
	json_array_foreach((json_t *)list, i, c)
		requirement_names(set, json_object_get(c, "resources"));
}

int wmap_pod_resource_names(json_t *set, const wmap_pod *pod)
{
	if (!json_is_object(set))
		return WMAP_EINVAL;
	if (pod->shape == WMAP_SPEC_FRAGMENTED) {
		container_names(set, pod->frag[WMAP_FRAG_CONTAINERS].value);
		requirement_names(set, json_object_get(pod->frag[WMAP_FRAG_CONTAINER].value, "resources"));
		requirement_names(set, pod->frag[WMAP_FRAG_RESOURCES].value);
		return 0;
	}
	const json_t *spec = pod->spec.value;
	container_names(set, json_object_get(spec, "containers"));
	container_names(set, json_object_get(spec, "initContainers"));
	requirement_names(set, json_object_get(spec, "resources"));
	list_names(set, json_object_get(spec, "overhead"));
	return 0;
}
