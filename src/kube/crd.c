/* wmap: whether a CRD's schema prunes the labels wmap writes into a pod template
 * (kubernetes/kubernetes#103739; see wmap/kube/crd.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "wmap/kube/crd.h"

static const json_t *version_schema(const json_t *crd, const char *version)
{
	const json_t *spec = json_object_get(crd, "spec");
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(spec, "versions"), i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));

		if (name && version && strcmp(name, version) == 0)
			return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
	}
	return json_object_get(json_object_get(spec, "validation"), "openAPIV3Schema");
}

static int preserves(const json_t *s)
{
	return json_is_true(json_object_get(s, "x-kubernetes-preserve-unknown-fields"));
}

int wmap_crd_prunes_template_labels(const json_t *crd, const char *version,
				    const char *template_pointer)
{
	const json_t *s = version_schema(crd, version);
	const json_t *meta, *props;
	char tok[256];
	const char *p = template_pointer;

	if (!s || !p)
		return 0;
	while (*p == '/') {
		size_t len = strcspn(p + 1, "/");
		const json_t *next;

		snprintf(tok, sizeof(tok), "%.*s", (int)(len < 255 ? len : 255), p + 1);
		p += 1 + len;
		if (preserves(s) && !json_object_get(s, "properties"))
			return 0; /* an unknown subtree is kept as it is */
		if ((next = json_object_get(json_object_get(s, "properties"), tok)) == NULL &&
		    isdigit((unsigned char)tok[0]))
			next = json_object_get(s, "items");
		if (!next && json_is_object(json_object_get(s, "additionalProperties")))
			next = json_object_get(s, "additionalProperties");
		if (!next)
			return 0; /* not declared: not a question of labels */
		s = next;
	}
	if (preserves(s) && !json_object_get(s, "properties"))
		return 0;
	if (json_is_true(json_object_get(s, "x-kubernetes-embedded-resource")))
		return 0; /* metadata is ObjectMeta there */
	meta = json_object_get(json_object_get(s, "properties"), "metadata");
	if (!meta)
		return json_object_get(s, "properties") && !preserves(s);
	if (preserves(meta))
		return 0;
	props = json_object_get(meta, "properties");
	if (props)
		return json_object_get(props, "labels") == NULL;
	return !json_is_object(json_object_get(meta, "additionalProperties"));
}
