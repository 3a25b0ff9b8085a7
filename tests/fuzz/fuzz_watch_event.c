/* libFuzzer target: the lines of a watch stream, read with the client's one reader of watch
 * events (wmap_watch_event_read, src/kube/watch.c) as the webhook's watches and the plugin's
 * `describe -w` read them. The input is split at newlines (a stream hands over one whole line
 * at a time); each line is read, written back compact and read again. Properties, beyond no
 * crash, leak or UB:
 *   - every line is exactly one kind, and BAD exactly when it is no event (no object);
 *   - ADDED, MODIFIED, DELETED and BOOKMARK carry their type, an object, and a
 *     resourceVersion that is NULL or not empty (the loop resumes from it);
 *   - GONE is an ERROR with code 410, ERROR any other code, both with a message;
 *   - a line read back from its own compact text is the same kind with the same
 *     resourceVersion and code. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/kube/watch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

static void one(const char *line, size_t len)
{
	static const char *const names[] = { "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "ERROR" };
	wmap_watch_event ev, again;
	wmap_watch_kind k = wmap_watch_event_read(&ev, line, len);
	FZ_CHECK(k == ev.kind && k >= WMAP_WATCH_ADDED && k <= WMAP_WATCH_BAD, "kind %d", (int)k);
	if (k == WMAP_WATCH_BAD) {
		FZ_CHECK(ev.object == NULL && ev.rv == NULL, "a BAD line with an object");
		wmap_watch_event_clear(&ev);
		return;
	}
	const char *type = json_string_value(json_object_get(ev.doc, "type"));
	FZ_CHECK(json_is_object(ev.object) && json_object_get(ev.doc, "object") == ev.object, "no object");
	FZ_CHECK(type && strcmp(type, names[k]) == 0, "kind %d for type %s", (int)k, type ? type : "(none)");
	if (k == WMAP_WATCH_GONE || k == WMAP_WATCH_ERROR) {
		FZ_CHECK(ev.message != NULL, "an error event without a message");
		FZ_CHECK((ev.code == 410) == (k == WMAP_WATCH_GONE), "code %ld as kind %d", ev.code, (int)k);
	} else {
		FZ_CHECK(ev.rv == NULL || ev.rv[0], "an empty resourceVersion");
	}
	char *text = json_dumps(ev.doc, JSON_COMPACT | JSON_ENCODE_ANY);
	if (text) {
		wmap_watch_kind k2 = wmap_watch_event_read(&again, text, strlen(text));
		FZ_CHECK(k2 == k, "read back as kind %d, was %d", (int)k2, (int)k);
		FZ_CHECK((ev.rv == NULL) == (again.rv == NULL) && (!ev.rv || strcmp(ev.rv, again.rv) == 0),
			 "resourceVersion changed on the way back");
		FZ_CHECK(again.code == ev.code, "code changed on the way back");
		wmap_watch_event_clear(&again);
		free(text);
	}
	wmap_watch_event_clear(&ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256 * 1024)
		return -1;
	const char *p = (const char *)data, *end = p + size;
	for (int n = 0; p < end && n < 64; n++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		one(p, len);
		p += len + 1;
	}
	return 0;
}
