/* kubectl-wmap: container issues and Warning events for the live describe (live_why.h).
 *
 * Events cost one request per describe whatever the number of pods: the namespace's
 * Warning events in one list (fieldSelector type=Warning), indexed here by
 * involvedObject.uid. The API server cannot select several objects in one request (field
 * selectors only take =, == and !=, ANDed), and it filters events by scanning the whole
 * namespace for every request anyway, so one request per pod would cost as many scans as
 * there are pods; tests/bench/README.md has the measurement on 10,000 events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live_why.h"

/* ---- containers -------------------------------------------------------------------- */

static json_t *issue_of(const json_t *cs, int init)
{
	const json_t *state = json_object_get(cs, "state");
	const json_t *waiting = json_object_get(state, "waiting");
	const json_t *term = json_object_get(state, "terminated");
	const json_t *last = json_object_get(json_object_get(cs, "lastState"), "terminated");
	json_int_t restarts = json_integer_value(json_object_get(cs, "restartCount"));
	const char *reason = NULL, *message = NULL;
	json_t *o;

	if (waiting) {
		reason = json_string_value(json_object_get(waiting, "reason"));
		message = json_string_value(json_object_get(waiting, "message"));
		if (!reason)
			reason = "Waiting";
		/* Kubelet's ordinary start-up states are not a problem on their own. */
		if ((strcmp(reason, "ContainerCreating") == 0 || strcmp(reason, "PodInitializing") == 0) &&
		    !last)
			return NULL;
	} else if (term) {
		json_int_t code = json_integer_value(json_object_get(term, "exitCode"));

		if (code == 0 && !init)
			return NULL; /* a finished container of a completed pod */
		if (code == 0)
			return NULL; /* an init container that did its job */
		reason = json_string_value(json_object_get(term, "reason"));
		message = json_string_value(json_object_get(term, "message"));
		if (!reason)
			reason = "Terminated";
	} else if (last && json_is_false(json_object_get(cs, "ready"))) {
		reason = "NotReady";
	} else {
		return NULL;
	}
	o = json_pack("{s:s?, s:b, s:s, s:I}", "container",
		      json_string_value(json_object_get(cs, "name")), "init", init, "reason", reason,
		      "restarts", restarts);
	if (!o)
		return NULL;
	if (message && message[0])
		json_object_set_new(o, "message", json_string(message));
	if (term && !waiting)
		json_object_set_new(o, "exitCode",
				    json_integer(json_integer_value(json_object_get(term, "exitCode"))));
	if (last && json_string_value(json_object_get(last, "reason")))
		json_object_set_new(o, "lastTermination",
				    json_pack("{s:s, s:I}", "reason",
					      json_string_value(json_object_get(last, "reason")),
					      "exitCode",
					      json_integer_value(json_object_get(last, "exitCode"))));
	return o;
}

json_t *live_container_issues(const json_t *pod)
{
	const json_t *st = json_object_get(pod, "status");
	json_t *out = json_array(), *cs;
	size_t i;

	if (!out)
		return NULL;
	json_array_foreach(json_object_get(st, "initContainerStatuses"), i, cs) {
		json_t *o = issue_of(cs, 1);

		if (o)
			json_array_append_new(out, o);
	}
	json_array_foreach(json_object_get(st, "containerStatuses"), i, cs) {
		json_t *o = issue_of(cs, 0);

		if (o)
			json_array_append_new(out, o);
	}
	return out;
}

void live_container_issue_text(char *buf, size_t len, const json_t *issue)
{
	const json_t *last = json_object_get(issue, "lastTermination");
	json_int_t restarts = json_integer_value(json_object_get(issue, "restarts"));
	const json_t *code = json_object_get(issue, "exitCode");
	size_t used;

	used = (size_t)snprintf(buf, len, "%s%s: %s",
				json_is_true(json_object_get(issue, "init")) ? "init container " : "",
				json_string_value(json_object_get(issue, "container")) ? json_string_value(json_object_get(issue, "container")) : "?",
				json_string_value(json_object_get(issue, "reason")));
	if (used < len && code)
		used += (size_t)snprintf(buf + used, len - used, " (exit %lld)",
					 (long long)json_integer_value(code));
	if (used < len && restarts > 0)
		used += (size_t)snprintf(buf + used, len - used, ", %lld restart%s",
					 (long long)restarts, restarts == 1 ? "" : "s");
	if (used < len && last)
		used += (size_t)snprintf(buf + used, len - used, ", last terminated %s (exit %lld)",
					 json_string_value(json_object_get(last, "reason")),
					 (long long)json_integer_value(json_object_get(last, "exitCode")));
	if (used < len && json_string_value(json_object_get(issue, "message")))
		snprintf(buf + used, len - used, ": %s",
			 json_string_value(json_object_get(issue, "message")));
}

/* ---- events ------------------------------------------------------------------------ */

int live_events_load(live_events *out, live_ctx *lc, const char *ns, wmap_error *err)
{
	char path[400];
	size_t i;
	json_t *ev;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!(out->items = json_array()) || !(out->by_uid = json_object()))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (ns)
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events?fieldSelector=type%%3DWarning",
			 ns);
	else
		snprintf(path, sizeof(path), "/api/v1/events?fieldSelector=type%%3DWarning");
	if ((rc = live_list(out->items, lc, path, 0, err)) != 0)
		return rc;
	json_array_foreach(out->items, i, ev) {
		const char *uid = json_string_value(
			json_object_get(json_object_get(ev, "involvedObject"), "uid"));
		json_t *list;

		if (!uid || !uid[0])
			continue;
		if (!(list = json_object_get(out->by_uid, uid))) {
			if (json_object_set_new(out->by_uid, uid, list = json_array()) != 0 || !list)
				return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		json_array_append(list, ev);
	}
	return 0;
}

void live_events_free(live_events *ev)
{
	if (!ev)
		return;
	json_decref(ev->items);
	json_decref(ev->by_uid);
	memset(ev, 0, sizeof(*ev));
}

/* The newest time an event was seen: lastTimestamp, series.lastObservedTime, eventTime,
 * then its creation, cut to whole seconds so that every form compares as text. */
static void event_time(char *buf, size_t len, const json_t *ev)
{
	const char *t = json_string_value(json_object_get(ev, "lastTimestamp"));

	if (!t)
		t = json_string_value(json_object_get(json_object_get(ev, "series"), "lastObservedTime"));
	if (!t)
		t = json_string_value(json_object_get(ev, "eventTime"));
	if (!t)
		t = json_string_value(json_object_get(json_object_get(ev, "metadata"),
						      "creationTimestamp"));
	snprintf(buf, len, "%.19s%s", t ? t : "", t && strlen(t) >= 19 ? "Z" : "");
}

static json_int_t event_count(const json_t *ev)
{
	json_int_t n = json_integer_value(json_object_get(ev, "count"));

	if (n <= 0)
		n = json_integer_value(json_object_get(json_object_get(ev, "series"), "count"));
	return n > 0 ? n : 1;
}

int live_event_sum_add(live_event_sum *sum, const live_events *ev, const char *uid,
		       wmap_error *err)
{
	json_t *list = uid ? json_object_get(ev->by_uid, uid) : NULL, *e;
	size_t i;

	if (!sum->list && !(sum->list = json_array()))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	json_array_foreach(list, i, e) {
		const char *reason = json_string_value(json_object_get(e, "reason"));
		const char *message = json_string_value(json_object_get(e, "message"));
		const json_t *io = json_object_get(e, "involvedObject");
		char when[40], object[400];
		json_t *s, *hit = NULL;
		size_t j;

		reason = reason ? reason : "";
		message = message ? message : "";
		event_time(when, sizeof(when), e);
		snprintf(object, sizeof(object), "%s/%s",
			 json_string_value(json_object_get(io, "kind")) ? json_string_value(json_object_get(io, "kind")) : "?",
			 json_string_value(json_object_get(io, "name")) ? json_string_value(json_object_get(io, "name")) : "?");
		json_array_foreach(sum->list, j, s)
			if (strcmp(json_string_value(json_object_get(s, "reason")), reason) == 0 &&
			    strcmp(json_string_value(json_object_get(s, "message")), message) == 0) {
				hit = s;
				break;
			}
		if (!hit) {
			hit = json_pack("{s:s, s:s, s:I, s:s, s:o, s:s}", "reason", reason, "message",
					message, "count", (json_int_t)0, "lastSeen", when, "uids",
					json_object(), "object", object);
			if (!hit || json_array_append_new(sum->list, hit) != 0)
				return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		json_object_set_new(hit, "count", json_integer(json_integer_value(json_object_get(hit, "count")) + event_count(e)));
		if (strcmp(when, json_string_value(json_object_get(hit, "lastSeen"))) > 0) {
			json_object_set_new(hit, "lastSeen", json_string(when));
			json_object_set_new(hit, "object", json_string(object));
		}
		json_object_set_new(json_object_get(hit, "uids"), uid, json_true());
	}
	return 0;
}

static int sum_cmp(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(json_string_value(json_object_get(y, "lastSeen")),
		       json_string_value(json_object_get(x, "lastSeen")));

	if (c)
		return c;
	return strcmp(json_string_value(json_object_get(x, "reason")),
		      json_string_value(json_object_get(y, "reason")));
}

size_t live_event_sum_finish(live_event_sum *sum, size_t max)
{
	size_t n = json_array_size(sum->list), dropped = 0;
	json_t **v, *sorted;

	if (n == 0)
		return 0;
	if (!(v = malloc(n * sizeof(*v))) || !(sorted = json_array())) {
		free(v);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(sum->list, i);
	qsort(v, n, sizeof(*v), sum_cmp);
	for (size_t i = 0; i < n; i++) {
		json_t *e = v[i];

		if (i >= max) {
			dropped++;
			continue;
		}
		json_object_set_new(e, "objects",
				    json_integer((json_int_t)json_object_size(json_object_get(e, "uids"))));
		json_object_del(e, "uids");
		json_array_append(sorted, e);
	}
	free(v);
	json_decref(sum->list);
	sum->list = sorted;
	return dropped;
}

void live_event_sum_free(live_event_sum *sum)
{
	if (!sum)
		return;
	json_decref(sum->list);
	sum->list = NULL;
}

json_t *live_events_objects_of_kind(const live_events *ev, const char *kind)
{
	json_t *out = json_array(), *seen = json_object(), *e;
	size_t i;

	if (!out || !seen) {
		json_decref(out);
		json_decref(seen);
		return NULL;
	}
	json_array_foreach(ev->items, i, e) {
		const json_t *io = json_object_get(e, "involvedObject");
		const char *k = json_string_value(json_object_get(io, "kind"));
		const char *uid = json_string_value(json_object_get(io, "uid"));

		if (!k || !uid || strcmp(k, kind) != 0 || json_object_get(seen, uid))
			continue;
		json_object_set_new(seen, uid, json_true());
		json_array_append_new(out, json_pack("{s:s, s:s?, s:s, s:s?}", "uid", uid,
						     "apiVersion",
						     json_string_value(json_object_get(io, "apiVersion")),
						     "kind", k, "name",
						     json_string_value(json_object_get(io, "name"))));
	}
	json_decref(seen);
	return out;
}
