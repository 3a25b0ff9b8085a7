/* wmap: the placement search of `fit` (include/wmap/fit.h): a certificate for "yes".
 *
 * Multi-dimensional bin packing is NP-hard, so this is first-fit decreasing as
 * cluster-autoscaler's estimator and Karpenter do it, on a copy of the free amounts: shapes
 * with the largest requests first (the resources in the state's order, extended resources such
 * as GPUs first, as they are the scarce and indivisible ones), each pod on the eligible node
 * that leaves the least of its first requested resource (best fit keeps large holes for large
 * pods), ties to the node first by name. When that order strands a pod, a second pass puts the
 * most constrained shape (fewest eligible nodes) first. Identical pods are one shape, so the
 * sort is over shapes, not pods. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_int.h"

/* Larger requests first, resource by resource in the state's order; ties keep the
 * workload's order. */
static int bigger(const fit_state *st, size_t a, size_t b, int constrained)
{
	const fit_class *x = &st->classes[a], *y = &st->classes[b];
	if (constrained && x->n_elig != y->n_elig)
		return x->n_elig < y->n_elig;
	for (size_t r = 0; r < st->n_res; r++) {
		if (x->req[r] != y->req[r])
			return x->req[r] > y->req[r];
	}
	return a < b;
}

static void order(size_t *idx, const fit_state *st, int constrained)
{
	for (size_t i = 0; i < st->n_classes; i++)
		idx[i] = i;
	for (size_t i = 1; i < st->n_classes; i++) { /* insertion sort: few shapes */
		size_t v = idx[i], j = i;
		while (j > 0 && bigger(st, v, idx[j - 1], constrained)) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
}

/* The node for one pod of c, -1 when none has room. free is n_nodes x n_res, pods_free
 * n_nodes. */
static long best_node(const fit_state *st, const fit_class *c, const int64_t *free,
		      const int64_t *pods_free)
{
	size_t dom = st->n_res;
	long best = -1;
	int64_t best_left = 0;
	for (size_t r = 0; r < st->n_res && dom == st->n_res; r++) {
		if (c->req[r] > 0)
			dom = r;
	}
	for (size_t n = 0; n < st->n_nodes; n++) {
		const int64_t *f = free + n * st->n_res;
		size_t r;
		if (!c->elig[n] || pods_free[n] < 1)
			continue;
		for (r = 0; r < st->n_res; r++) {
			if (c->req[r] > 0 && c->req[r] > f[r])
				break;
		}
		if (r < st->n_res)
			continue;
		int64_t left = dom < st->n_res ? f[dom] - c->req[dom] : pods_free[n] - 1;
		if (best < 0 || left < best_left) {
			best = (long)n;
			best_left = left;
		}
	}
	return best;
}

/* One pass in the order idx; assign[k] gets node indices, pods of class 0 first. Returns 1
 * when every pod found a node. */
static int pass(long *assign, const size_t *first, const fit_state *st, const size_t *idx,
		int64_t *free, int64_t *pods_free)
{
	for (size_t n = 0; n < st->n_nodes; n++) {
		const fit_node *nd = &st->nodes[n];
		for (size_t r = 0; r < st->n_res; r++)
			free[n * st->n_res + r] = nd->alloc[r] - nd->used[r];
		pods_free[n] = nd->pods_alloc - nd->pods_used;
	}
	for (size_t k = 0; k < st->n_classes; k++) {
		const fit_class *c = &st->classes[idx[k]];
		for (int64_t i = 0; i < c->count; i++) {
			long n = best_node(st, c, free, pods_free);
			if (n < 0)
				return 0;
			for (size_t r = 0; r < st->n_res; r++)
				free[(size_t)n * st->n_res + r] -= c->req[r];
			pods_free[n]--;
			assign[first[idx[k]] + (size_t)i] = n;
		}
	}
	return 1;
}

int wmap__fit_place(json_t **placed, const fit_state *st, wmap_error *err)
{
	size_t total = 0, *idx = NULL, *first = NULL;
	long *assign = NULL;
	int64_t *free_ = NULL, *pods_free = NULL;
	json_t *out = NULL;
	int rc = 0, ok = 0;

	*placed = NULL;
	for (size_t k = 0; k < st->n_classes; k++)
		total += (size_t)st->classes[k].count;
	idx = calloc(st->n_classes + 1, sizeof(*idx));
	first = calloc(st->n_classes + 1, sizeof(*first));
	assign = calloc(total + 1, sizeof(*assign));
	free_ = calloc(st->n_nodes * st->n_res + 1, sizeof(*free_));
	pods_free = calloc(st->n_nodes + 1, sizeof(*pods_free));
	if (!idx || !first || !assign || !free_ || !pods_free)
		goto oom;
	for (size_t k = 1; k < st->n_classes; k++)
		first[k] = first[k - 1] + (size_t)st->classes[k - 1].count;
	for (int constrained = 0; constrained < 2 && !ok; constrained++) {
		order(idx, st, constrained);
		ok = pass(assign, first, st, idx, free_, pods_free);
	}
	if (ok) {
		if (!(out = json_array()))
			goto oom;
		for (size_t k = 0; k < st->n_classes; k++) {
			const fit_class *c = &st->classes[k];
			for (int64_t i = 0; i < c->count; i++) {
				char pod[300];
				snprintf(pod, sizeof(pod), "%s[%lld]", c->label, (long long)i);
				if (json_array_append_new(out, json_pack("{s:s, s:s}", "pod", pod, "node",
									 st->nodes[assign[first[k] + (size_t)i]].name)))
					goto oom;
			}
		}
		*placed = out;
		out = NULL;
	}
	goto done;
oom:
	rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
done:
	json_decref(out);
	free(idx);
	free(first);
	free(assign);
	free(free_);
	free(pods_free);
	return rc;
}
