/* wmap: WorkloadPolicies of several files and folders merged into one set (see
 * wmap/policy.h). Each file is parsed on its own, so that its messages keep its own
 * file:line:col; the sets are then moved, policy by policy, into one. */
#include <stdlib.h>
#include <string.h>

#include "wmap/file.h"
#include "wmap/policy.h"

/* Moves every policy of from to the end of to (from is left empty); a name already in to
 * is an error naming both places. */
static int merge(wmap_policy_set *to, wmap_policy_set *from, wmap_error *err)
{
	wmap_policy *np = realloc(to->policies, (to->n + from->n + 1) * sizeof(*np));
	if (!np)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	to->policies = np;
	for (size_t i = 0; i < from->n; i++)
		for (size_t j = 0; j < to->n; j++)
			if (strcmp(to->policies[j].name, from->policies[i].name) == 0)
				return wmap_error_set(err, WMAP_EINVAL,
						      "%s: policy \"%s\" is defined twice: here and at %s",
						      from->policies[i].where, from->policies[i].name,
						      to->policies[j].where);
	memcpy(&to->policies[to->n], from->policies, from->n * sizeof(*from->policies));
	to->n += from->n;
	from->n = 0; /* moved: from frees only its array */
	return 0;
}

/* "a.yaml, b.yaml, ..." (at most a few hundred bytes) for the set's source. */
static char *join_sources(const char *const *paths, size_t n)
{
	char buf[512];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(buf); i++) {
		int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "", paths[i]);
		len += w > 0 ? (size_t)w : 0;
	}
	return strdup(buf);
}

int wmap_policy_set_load_paths(wmap_policy_set **out, const char *const *paths, size_t n,
			       wmap_error *err)
{
	wmap_file_list files = { 0 };
	wmap_policy_set *all = NULL, *one = NULL;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = wmap_file_list_add(&files, paths[i], err);
	if (rc)
		goto out;
	all = calloc(1, sizeof(*all));
	if (!all || !(all->source = join_sources(paths, n)) ||
	    !(all->policies = calloc(1, sizeof(*all->policies)))) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < files.n && rc == 0; i++) {
		if ((rc = wmap_policy_set_load(&one, files.paths[i], err)) == 0)
			rc = merge(all, one, err);
		wmap_policy_set_free(one);
		one = NULL;
	}
	if (rc == 0) {
		*out = all;
		all = NULL;
	}
out:
	wmap_policy_set_free(all);
	wmap_file_list_clear(&files);
	return rc;
}
