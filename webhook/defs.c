/* wmap-webhook: the definition set in force (a registry and one prepared engine per poll
 * thread), swapped whole when definitions change.
 *
 * A review takes a reference to the set in force under the server lock (a few
 * nanoseconds) and evaluates with its thread's engine of that set; a new set is built and
 * every engine of it prepared (jq compiled) on the cluster thread, off the request path,
 * then swapped in. The thread that swapped waits for the last review holding the old set
 * and frees it, so no review ever waits for a compile or pays for a free. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"

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
	atomic_init(&d->refs, 1);
	*out = d;
	return 0;
fail:
	wh_defs_free(d);
	return rc;
}

wh_defs *wh_defs_acquire(wh_server *s, wmap_engine **eng)
{
	if (thread_slot < 0)
		thread_slot = atomic_fetch_add(&s->next_slot, 1);
	pthread_mutex_lock(&s->lock);
	wh_defs *d = s->defs;
	if (d)
		atomic_fetch_add(&d->refs, 1);
	pthread_mutex_unlock(&s->lock);
	/* MHD runs exactly --threads poll threads, one slot each. */
	*eng = d && (size_t)thread_slot < d->n_engines ? d->engines[thread_slot] : NULL;
	return d;
}

wh_defs *wh_defs_ref(wh_server *s)
{
	pthread_mutex_lock(&s->lock);
	wh_defs *d = s->defs;
	if (d)
		atomic_fetch_add(&d->refs, 1);
	pthread_mutex_unlock(&s->lock);
	return d;
}

void wh_defs_release(wh_defs *d)
{
	if (d)
		atomic_fetch_sub(&d->refs, 1);
}

void wh_defs_swap(wh_server *s, wh_defs *d)
{
	pthread_mutex_lock(&s->lock);
	wh_defs *old = s->defs;
	s->defs = d;
	pthread_mutex_unlock(&s->lock);
	if (!old)
		return;
	atomic_fetch_sub(&old->refs, 1); /* the server's own reference */
	/* Reviews that took the old set finish within their budget; wait for them here. */
	while (atomic_load(&old->refs) > 0) {
		struct timespec t = { 0, 1000000L };
		nanosleep(&t, NULL);
	}
	wh_defs_free(old);
}
