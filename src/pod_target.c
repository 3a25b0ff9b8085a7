/* wmap: the writable locations of a workload's pod templates (see wmap/pod_target.h). */
#include <stdlib.h>
#include <string.h>

#include "wmap/arena.h"
#include "wmap/pod_target.h"
#include "wmap/pointer.h"

/* A target's pointers are review memory (wmap/arena.h): made and given back in a review's
 * scope (heap memory outside one). A template's or a pod spec's are one block (t->block);
 * a fragmented pod's are one allocation each, and whoever replaces one of those gives the
 * old one back with wmap_arena_release. */
static char *dup_n(const char *s, size_t n)
{
	char *d = wmap_arena_alloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static char *dup(const char *s)
{
	return dup_n(s, strlen(s));
}

void wmap_pod_target_clear(wmap_pod_target *t)
{
	if (t->block) { /* every pointer is in it */
		wmap_arena_release(t->block);
		memset(t, 0, sizeof(*t));
		return;
	}
	wmap_arena_release(t->labels);
	wmap_arena_release(t->annotations);
	wmap_arena_release(t->spec);
	wmap_arena_release(t->scheduler);
	wmap_arena_release(t->priority);
	memset(t, 0, sizeof(*t));
}

/* A copy of s in *out (NULL stays NULL); -1 on ENOMEM. */
static int dup_or_null(char **out, const char *s)
{
	*out = s ? dup(s) : NULL;
	return s && !*out ? -1 : 0;
}

/* Frees and clears *ptr when the object has nothing at the parent of that pointer; -1 on
 * ENOMEM. */
static int drop_orphan(char **ptr, const json_t *object)
{
	if (!*ptr)
		return 0;
	const char *slash = strrchr(*ptr, '/');
	char *parent = slash ? dup_n(*ptr, (size_t)(slash - *ptr)) : NULL;
	if (slash && !parent)
		return -1;
	if (!parent || !wmap_pointer_lookup(object, parent)) {
		wmap_arena_release(*ptr);
		*ptr = NULL;
	}
	wmap_arena_release(parent);
	return 0;
}

/* Where the object's labels begin, the deepest of what resolve found: the labels map, else
 * the metadata object, else the template object (tp, NULL for a pod spec's metadata) that
 * lacks it. The labels pointer is meta's + "/labels", meta's tp's + "/metadata"; meta_len and
 * tp_len are their pointers' lengths. */
static void labels_from(wmap_pod_target *t, const wmap_location *meta, size_t meta_len,
			const wmap_location *tp, size_t tp_len)
{
	const json_t *l = json_is_object(meta->value) ? json_object_get(meta->value, "labels") : NULL;
	if (!t->labels || !meta->pointer)
		return;
	if (l && !json_is_null(l)) {
		t->labels_from = l;
		t->labels_from_len = meta_len + sizeof("/labels") - 1;
	} else if (json_is_object(meta->value)) {
		t->labels_from = meta->value;
		t->labels_from_len = meta_len;
	} else if (!meta->value && tp && json_is_object(tp->value) && tp->pointer) {
		t->labels_from = tp->value;
		t->labels_from_len = tp_len;
	}
}

/* Copies a, b and c into one string at *at and moves *at past its NUL. */
static char *put3(char **at, const char *a, size_t al, const char *b, size_t bl, const char *c,
		  size_t cl)
{
	char *s = *at;
	memcpy(s, a, al);
	memcpy(s + al, b, bl);
	memcpy(s + al + bl, c, cl);
	s[al + bl + cl] = '\0';
	*at = s + al + bl + cl + 1;
	return s;
}

#define LIT(s) s, sizeof(s) - 1

/* The pointers of a template or a pod spec, in one block (t->block): labels and
 * annotations under meta + meta_mid (none when meta is NULL), the pod spec at spec +
 * spec_mid, and its schedulerName and priorityClassName. */
static int fill_block(wmap_pod_target *t, const char *meta, size_t ml, const char *meta_mid,
		      size_t mml, const char *spec, size_t sl, const char *spec_mid, size_t sml)
{
	size_t mb = meta ? ml + mml : 0, sb = sl + sml;
	size_t need = (meta ? 2 * mb + sizeof("/labels") + sizeof("/annotations") : 0) + sb + 1 +
		      2 * sb + sizeof("/schedulerName") + sizeof("/priorityClassName");
	char *at = t->block = wmap_arena_alloc(need);
	if (!at)
		return WMAP_ENOMEM;
	if (meta) {
		t->labels = put3(&at, meta, ml, meta_mid, mml, LIT("/labels"));
		t->labels_len = mb + sizeof("/labels") - 1;
		t->annotations = put3(&at, meta, ml, meta_mid, mml, LIT("/annotations"));
	}
	t->spec = put3(&at, spec, sl, spec_mid, sml, "", 0);
	t->scheduler = put3(&at, t->spec, sb, LIT("/schedulerName"), "", 0);
	t->priority = put3(&at, t->spec, sb, LIT("/priorityClassName"), "", 0);
	return 1;
}

static int init_template(wmap_pod_target *t, const char **why, const wmap_pod *pod)
{
	const char *tp = pod->template_.pointer;

	if (!tp || !pod->template_.value) {
		if (!tp)
			*why = "its pod template is not in the object at a plain path (a framework "
			       "default, or computed); not stamped";
		return 0;
	}
	size_t tl = strlen(tp), ml = 0;
	const char *spec = pod->spec.pointer;
	size_t sl = spec ? strlen(spec) : tl;
	int rc;
	if (pod->metadata.pointer) {
		ml = strlen(pod->metadata.pointer);
		rc = fill_block(t, pod->metadata.pointer, ml, "", 0, spec ? spec : tp, sl,
				spec ? "" : "/spec", spec ? 0 : sizeof("/spec") - 1);
	} else {
		/* No metadata location: the template's own (the builder walks from the root). */
		rc = fill_block(t, tp, tl, LIT("/metadata"), spec ? spec : tp, sl, spec ? "" : "/spec",
				spec ? 0 : sizeof("/spec") - 1);
	}
	if (rc == 1 && pod->metadata.pointer)
		labels_from(t, &pod->metadata, ml, &pod->template_, tl);
	return rc;
}

static int init_podspec(wmap_pod_target *t, const char **why, const wmap_pod *pod)
{
	/* No pod spec in the object: the component is not there (KServe without a
	 * transformer); nothing is created for it. */
	if (!pod->spec.pointer || !pod->spec.value)
		return 0;
	const char *meta = pod->metadata.pointer;
	size_t ml = meta ? strlen(meta) : 0;
	int rc = fill_block(t, meta, ml, "", 0, pod->spec.pointer, strlen(pod->spec.pointer), "", 0);
	if (rc != 1)
		return rc;
	if (meta)
		labels_from(t, &pod->metadata, ml, NULL, 0);
	else
		*why = "the definition gives no metadata location; labels not written";
	return 1;
}

static int init_fragmented(wmap_pod_target *t, const char **why, const wmap_pod *pod,
			   const json_t *object)
{
	if (dup_or_null(&t->labels, pod->frag[WMAP_FRAG_LABELS].pointer) ||
	    dup_or_null(&t->annotations, pod->frag[WMAP_FRAG_ANNOTATIONS].pointer) ||
	    dup_or_null(&t->scheduler, pod->frag[WMAP_FRAG_SCHEDULER_NAME].pointer) ||
	    dup_or_null(&t->priority, pod->frag[WMAP_FRAG_PRIORITY_CLASS_NAME].pointer))
		return WMAP_ENOMEM;
	if (!t->labels)
		*why = "the definition gives no labels location; labels not written";
	/* Labels in a list entry the definition keys (TrainJob's runtimePatches entry of
	 * manager wmap.io/webhook): the entry is made with the first write. Annotations can
	 * share that entry; any other field that needs one is left alone, as two entries with
	 * one key would be refused. */
	const wmap_location *fa = &pod->frag[WMAP_FRAG_ANNOTATIONS];
	if (t->labels) {
		t->create_at = pod->frag[WMAP_FRAG_LABELS].create_at;
		t->create = pod->frag[WMAP_FRAG_LABELS].create;
	}
	if (t->annotations && fa->create_at &&
	    !(t->create_at && strcmp(fa->create_at, t->create_at) == 0)) {
		*why = "its annotations location needs a list entry that does not exist; "
		       "annotations not written";
		wmap_arena_release(t->annotations);
		t->annotations = NULL;
	}
	if (pod->frag[WMAP_FRAG_SCHEDULER_NAME].create_at) {
		wmap_arena_release(t->scheduler);
		t->scheduler = NULL;
	}
	if (pod->frag[WMAP_FRAG_PRIORITY_CLASS_NAME].create_at) {
		wmap_arena_release(t->priority);
		t->priority = NULL;
	}
	/* Fields of a part the object does not have (an LLMInferenceService without prefill)
	 * are not written: that would create the part. */
	if ((!t->create_at && drop_orphan(&t->labels, object)) ||
	    (!fa->create_at && drop_orphan(&t->annotations, object)) ||
	    drop_orphan(&t->scheduler, object) || drop_orphan(&t->priority, object))
		return WMAP_ENOMEM;
	return 1;
}

int wmap_pod_target_init(wmap_pod_target *t, const char **why, const wmap_workload *w,
			 size_t k, size_t i)
{
	const wmap_node *n = &w->nodes[k];
	const wmap_instance *in = &n->instances[i];
	const wmap_pod *pod = &in->pod;
	const char *no_why;
	int rc;

	if (!why)
		why = &no_why;
	*why = NULL;
	memset(t, 0, sizeof(*t));
	t->component = n->def->name;
	t->instance = in->id;
	t->multi = n->def->instance_id_path != NULL;
	t->node = k;
	t->instance_index = i;
	switch (pod->shape) {
	case WMAP_SPEC_TEMPLATE:
		rc = init_template(t, why, pod);
		break;
	case WMAP_SPEC_PODSPEC:
		rc = init_podspec(t, why, pod);
		break;
	case WMAP_SPEC_FRAGMENTED:
		rc = init_fragmented(t, why, pod, w->object);
		t->labels_len = t->labels ? strlen(t->labels) : 0;
		break;
	default:
		return 0;
	}
	if (rc <= 0)
		return rc;
	return t->labels || t->annotations || t->spec || t->scheduler || t->priority;
}
