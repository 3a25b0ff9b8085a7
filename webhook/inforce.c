/* wmap-webhook: the state in force (the definitions with one prepared engine per poll thread,
 * the policies, the CRD index of the schema check, the builds' verdicts and the cluster
 * objects they were made from), published whole and read by every part.
 *
 * One reference scheme for all of it. A reader takes a reference to the state in force under
 * the lock (a few nanoseconds) and drops it with an atomic decrement: it never waits and
 * never frees. A publish builds the next state from the current one, the parts it replaces
 * taken from the update and the others moved over (each part belongs to exactly one state,
 * the newest that holds it), swaps it in, then waits until no reader holds the old state
 * and frees the parts the old one still owns. Poll thread N evaluates with engine N of the
 * state it took, so no engine is ever shared between threads (libjq is not thread-safe) and
 * no compile or free ever happens on the request path. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"

#define MAX_LISTENERS 8
#define ALL_PARTS (WH_STATE_DEFS | WH_STATE_POLICIES | WH_STATE_CRDS | WH_STATE_OBJECTS)

struct wh_inforce {
	pthread_mutex_t lock;    /* cur */
	pthread_mutex_t publish; /* one publish at a time; the listeners */
	wh_state *cur;
	unsigned long long publishes; /* under publish: numbers the parts (wh_state.serial_) */
	unsigned threads;
	atomic_int next_slot; /* poll threads take engine slots 0, 1, ... */
	atomic_int ready;
	struct {
		wh_inforce_listener fn;
		void *ctx;
	} listeners[MAX_LISTENERS];
	size_t n_listeners;
};

static _Thread_local int thread_slot = -1;

void wh_defs_free(wh_defs *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_engines; i++)
		wmap_engine_free(d->engines[i]);
	free(d->engines);
	wmap_registry_free(d->reg);
	free(d);
}

int wh_defs_prepare(wh_defs **out, wmap_registry *reg, unsigned threads, wmap_error *err)
{
	wh_defs *d = calloc(1, sizeof(*d));
	int rc = 0;

	*out = NULL;
	if (!d || !(d->engines = calloc(threads, sizeof(*d->engines)))) {
		free(d);
		wmap_registry_free(reg);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	d->reg = reg;
	for (unsigned i = 0; i < threads; i++) {
		if ((rc = wmap_engine_new(&d->engines[i], reg, err)) != 0)
			goto fail;
		d->n_engines++;
		if ((rc = wmap_engine_prepare(d->engines[i], err)) != 0)
			goto fail;
	}
	*out = d;
	return 0;
fail:
	wh_defs_free(d);
	return rc;
}

/* ---- the CRD index ---------------------------------------------------------------- */

static int crd_key(char *key, size_t len, const char *group, const char *kind)
{
	return (size_t)snprintf(key, len, "%s\n%s", group, kind) < len ? 0 : -1;
}

json_t *wh_crd_index(const json_t *crds)
{
	json_t *idx = json_object(), *crd;
	const char *name;
	if (!idx)
		return NULL;
	json_object_foreach((json_t *)crds, name, crd) {
		const json_t *spec = json_object_get(crd, "spec");
		const char *g = json_string_value(json_object_get(spec, "group"));
		const char *k = json_string_value(json_object_get(json_object_get(spec, "names"), "kind"));
		char key[512];
		if (!g || !k || crd_key(key, sizeof(key), g, k) != 0)
			continue;
		if (json_object_set(idx, key, crd) != 0) {
			json_decref(idx);
			return NULL;
		}
	}
	return idx;
}

/* wmap_crd_lookup_fn over a state's index (immutable while the reader holds the state). */
static json_t *crd_find(void *ctx, const char *group, const char *kind)
{
	char key[512];
	if (crd_key(key, sizeof(key), group, kind) != 0)
		return NULL;
	return json_incref(json_object_get(ctx, key));
}

/* ---- states ----------------------------------------------------------------------- */

/* Frees st and the parts it owns. */
static void state_free(wh_state *st)
{
	if (!st)
		return;
	if (st->owns_ & WH_STATE_DEFS) {
		wh_defs_free((wh_defs *)st->defs);
		json_decref(st->kverdicts);
	}
	if (st->owns_ & WH_STATE_POLICIES) {
		wmap_policy_set_free((wmap_policy_set *)st->policies);
		json_decref(st->pverdicts);
	}
	if (st->owns_ & WH_STATE_CRDS)
		json_decref(st->crd_index_);
	if (st->owns_ & WH_STATE_OBJECTS) {
		json_decref(st->kartas);
		json_decref(st->wpolicies);
	}
	free(st);
}

static void update_free(wh_update *u)
{
	if (u->what & WH_STATE_DEFS) {
		wh_defs_free(u->defs);
		json_decref(u->kverdicts);
	}
	if (u->what & WH_STATE_POLICIES) {
		wmap_policy_set_free(u->policies);
		json_decref(u->pverdicts);
	}
	if (u->what & WH_STATE_CRDS)
		json_decref(u->crd_index);
	if (u->what & WH_STATE_OBJECTS) {
		json_decref(u->kartas);
		json_decref(u->wpolicies);
	}
	memset(u, 0, sizeof(*u));
}

/* The next state: u's parts (numbered serial), the others moved from old (which keeps only
 * what u replaces). */
static wh_state *state_next(wh_state *old, wh_update *u, unsigned long long serial)
{
	wh_state *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (old)
		*st = *old;
	for (unsigned i = 0; i < WH_STATE_NPARTS; i++)
		if (u->what & (1u << i))
			st->serial_[i] = serial;
	if (u->what & WH_STATE_DEFS) {
		st->defs = u->defs;
		st->kverdicts = u->kverdicts;
	}
	if (u->what & WH_STATE_POLICIES) {
		st->policies = u->policies;
		st->pverdicts = u->pverdicts;
	}
	if (u->what & WH_STATE_CRDS)
		st->crd_index_ = u->crd_index;
	if (u->what & WH_STATE_OBJECTS) {
		st->kartas = u->kartas;
		st->wpolicies = u->wpolicies;
	}
	st->crd_lookup_.find = crd_find;
	st->crd_lookup_.ctx = st->crd_index_;
	st->crds = st->crd_index_ ? &st->crd_lookup_ : NULL;
	st->owns_ = ALL_PARTS;
	atomic_init(&st->refs_, 1); /* the state in force's own */
	if (old)
		old->owns_ &= u->what;
	return st;
}

int wh_inforce_new(wh_inforce **out, unsigned threads, wmap_error *err)
{
	wh_inforce *inf = calloc(1, sizeof(*inf));
	*out = NULL;
	if (!inf)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	pthread_mutex_init(&inf->lock, NULL);
	pthread_mutex_init(&inf->publish, NULL);
	inf->threads = threads;
	*out = inf;
	return 0;
}

void wh_inforce_free(wh_inforce *inf)
{
	if (!inf)
		return;
	state_free(inf->cur);
	pthread_mutex_destroy(&inf->lock);
	pthread_mutex_destroy(&inf->publish);
	free(inf);
}

int wh_inforce_listen(wh_inforce *inf, wh_inforce_listener fn, void *ctx)
{
	int rc = 0;
	pthread_mutex_lock(&inf->publish);
	if (inf->n_listeners < MAX_LISTENERS) {
		inf->listeners[inf->n_listeners].fn = fn;
		inf->listeners[inf->n_listeners++].ctx = ctx;
	} else {
		rc = WMAP_ELIMIT;
	}
	pthread_mutex_unlock(&inf->publish);
	return rc;
}

int wh_inforce_publish(wh_inforce *inf, wh_update *u)
{
	pthread_mutex_lock(&inf->publish);
	wh_state *old = inf->cur;
	unsigned what = u->what;
	wh_state *st = state_next(old, u, ++inf->publishes);
	if (!st) {
		pthread_mutex_unlock(&inf->publish);
		update_free(u);
		return WMAP_ENOMEM;
	}
	memset(u, 0, sizeof(*u));
	pthread_mutex_lock(&inf->lock);
	inf->cur = st;
	pthread_mutex_unlock(&inf->lock);
	if (old) {
		atomic_fetch_sub(&old->refs_, 1); /* the state in force's own reference */
		/* Readers finish within their budget (a review) or their step (a controller). */
		while (atomic_load(&old->refs_) > 0) {
			struct timespec t = { 0, 1000000L };
			nanosleep(&t, NULL);
		}
		state_free(old);
	}
	for (size_t i = 0; i < inf->n_listeners; i++)
		inf->listeners[i].fn(inf->listeners[i].ctx, what);
	pthread_mutex_unlock(&inf->publish);
	return 0;
}

wh_state *wh_inforce_acquire(wh_inforce *inf)
{
	pthread_mutex_lock(&inf->lock);
	wh_state *st = inf->cur;
	if (st)
		atomic_fetch_add(&st->refs_, 1);
	pthread_mutex_unlock(&inf->lock);
	return st;
}

void wh_inforce_release(wh_state *st)
{
	if (st)
		atomic_fetch_sub(&st->refs_, 1);
}

int wh_inforce_follow(wh_inforce *inf, wh_state **st, unsigned parts)
{
	wh_state *mine = *st;
	pthread_mutex_lock(&inf->lock);
	wh_state *cur = inf->cur;
	int same = cur != NULL;
	for (unsigned i = 0; same && cur != mine && i < WH_STATE_NPARTS; i++)
		same = !(parts & (1u << i)) || cur->serial_[i] == mine->serial_[i];
	if (same && cur != mine) {
		/* The parts compared are the same objects, now owned by cur: moving the
		 * reference keeps them alive and lets the publish that replaced mine go on. */
		atomic_fetch_add(&cur->refs_, 1);
		atomic_fetch_sub(&mine->refs_, 1);
		*st = cur;
	}
	pthread_mutex_unlock(&inf->lock);
	return same;
}

wmap_engine *wh_state_engine(wh_inforce *inf, const wh_state *st)
{
	if (thread_slot < 0)
		thread_slot = atomic_fetch_add(&inf->next_slot, 1);
	/* MHD runs exactly --threads poll threads, one slot each. */
	return st && (size_t)thread_slot < st->defs->n_engines ? st->defs->engines[thread_slot]
							       : NULL;
}

void wh_inforce_set_ready(wh_inforce *inf)
{
	atomic_store(&inf->ready, 1);
}

int wh_inforce_ready(const wh_inforce *inf)
{
	return atomic_load(&inf->ready);
}
