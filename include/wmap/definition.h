/* wmap: Karta definitions (run.ai/v1alpha1 Karta, and the older
 * optimization.nvidia.com/v1alpha1 ResourceInterface with the same spec).
 *
 * A definition is loaded from a JSON value, validated with upstream's rules and messages,
 * and then read-only: every field below may be read by front ends, none may be written.
 * Strings and expressions live as long as the definition. */
#ifndef WMAP_DEFINITION_H
#define WMAP_DEFINITION_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/error.h"

/* A jq expression from a definition; evaluated by the engine (native when it is a plain
 * path, libjq otherwise). Opaque: read its text with wmap_expr_text. */
typedef struct wmap_expr wmap_expr;
const char *wmap_expr_text(const wmap_expr *e);
/* 1 when the expression is a plain path evaluated without libjq (its results carry their
 * exact JSON location). */
int wmap_expr_is_native(const wmap_expr *e);

typedef struct wmap_gvk {
	char *group; /* "" for the core group */
	char *version;
	char *kind;
} wmap_gvk;

typedef enum wmap_status {
	WMAP_STATUS_RESUMING,
	WMAP_STATUS_SUSPENDING,
	WMAP_STATUS_SUSPENDED,
	WMAP_STATUS_RUNNING,
	WMAP_STATUS_FAILED,
	WMAP_STATUS_COMPLETED,
	WMAP_STATUS_INITIALIZING,
	WMAP_STATUS_DEGRADED,
	WMAP_STATUS_COUNT,
	WMAP_STATUS_UNDEFINED = WMAP_STATUS_COUNT,
} wmap_status;

/* "Running", "Undefined", ... */
const char *wmap_status_name(wmap_status s);
/* The key in statusMappings: "running", ... */
const char *wmap_status_key(wmap_status s);

typedef enum wmap_spec_shape {
	WMAP_SPEC_NONE,
	WMAP_SPEC_TEMPLATE,   /* podTemplateSpecPath: {metadata, spec} */
	WMAP_SPEC_PODSPEC,    /* podSpecPath (+ metadataPath) */
	WMAP_SPEC_FRAGMENTED, /* fragmentedPodSpecDefinition */
} wmap_spec_shape;

typedef enum wmap_frag_field {
	WMAP_FRAG_SCHEDULER_NAME,
	WMAP_FRAG_LABELS,
	WMAP_FRAG_ANNOTATIONS,
	WMAP_FRAG_RESOURCES,
	WMAP_FRAG_RESOURCE_CLAIMS,
	WMAP_FRAG_POD_AFFINITY,
	WMAP_FRAG_NODE_AFFINITY,
	WMAP_FRAG_CONTAINERS,
	WMAP_FRAG_CONTAINER,
	WMAP_FRAG_PRIORITY_CLASS_NAME,
	WMAP_FRAG_IMAGE,
	WMAP_FRAG_COUNT,
} wmap_frag_field;

/* "schedulerNamePath", ... */
const char *wmap_frag_field_key(wmap_frag_field f);

typedef struct wmap_matcher {
	char *by_phase; /* NULL when not set */
	size_t n_conditions;
	struct wmap_cond_match {
		char *type, *status, *reason; /* status and reason may be NULL */
	} * conditions;
	wmap_expr *expression; /* byExpression.expression, NULL when not set */
	char *expected;        /* byExpression.expectedResult */
} wmap_matcher;

typedef struct wmap_status_def {
	wmap_expr *phase_path;      /* NULL when no phaseDefinition */
	wmap_expr *conditions_path; /* NULL when no conditionsDefinition */
	char *type_field, *status_field, *message_field, *reason_field;
	size_t n_matchers[WMAP_STATUS_COUNT];
	wmap_matcher *matchers[WMAP_STATUS_COUNT];
} wmap_status_def;

typedef struct wmap_action {
	wmap_expr *path;
	json_t *value; /* the decoded JSON value */
} wmap_action;

typedef struct wmap_component {
	char *name;
	wmap_gvk *kind;  /* NULL for a virtual (grouping) component */
	char *owner_ref; /* NULL on the root */
	int parent;      /* index into definition->components, -1 on the root */

	wmap_spec_shape shape;
	wmap_expr *template_path;         /* WMAP_SPEC_TEMPLATE */
	wmap_expr *podspec_path;          /* WMAP_SPEC_PODSPEC */
	wmap_expr *metadata_path;         /* with podSpecPath, optional */
	wmap_expr *frag[WMAP_FRAG_COUNT]; /* WMAP_SPEC_FRAGMENTED; NULL entries unset */

	wmap_expr *replicas_path, *min_replicas_path, *max_replicas_path;
	int has_scale;               /* a scaleDefinition is present */
	wmap_expr *instance_id_path; /* NULL: one instance with id "" */

	/* podSelector: evaluated against Pod objects. */
	wmap_expr *type_key_path; /* componentTypeSelector.keyPath */
	char *type_value;         /* componentTypeSelector.value, NULL = existence */
	json_t *match_labels;     /* componentTypeSelector.matchLabels, NULL when unset */
	int has_type_selector;
	wmap_expr *pod_instance_id_path; /* componentInstanceSelector.idPath */
	wmap_expr *replica_key_path;     /* replicaSelector.keyPath */

	wmap_status_def *status; /* root only (NULL elsewhere) */

	size_t n_suspend, n_resume;
	wmap_action *suspend, *resume;
} wmap_component;

typedef struct wmap_group_member {
	char *component;
	int component_index; /* -1 when it names no component (a validation finding) */
	size_t n_group_by, n_filters;
	wmap_expr **group_by;
	wmap_expr **filters;
} wmap_group_member;

typedef struct wmap_pod_group {
	char *name;
	size_t n_members;
	wmap_group_member *members;
} wmap_pod_group;

typedef enum wmap_origin {
	WMAP_ORIGIN_CATALOG, /* embedded in the binary */
	WMAP_ORIGIN_FILE,    /* --definitions FILE|DIR */
	WMAP_ORIGIN_CLUSTER, /* a kartas.run.ai object */
} wmap_origin;

const char *wmap_origin_name(wmap_origin o); /* "catalog", "file", "cluster" */

typedef struct wmap_definition {
	char *name;   /* metadata.name */
	char *source; /* file name or "catalog/<name>.yaml"; for messages */
	wmap_origin origin;
	json_t *raw; /* the whole document as read (for -o json|yaml) */
	int legacy;  /* a ResourceInterface document */

	size_t n_components;
	wmap_component *components; /* [0] is the root */
	size_t n_additional_kinds;
	wmap_gvk *additional_kinds;

	size_t n_pod_groups; /* optimizationInstructions.gangScheduling.podGroups */
	wmap_pod_group *pod_groups;
	json_t *pod_group_v2; /* gangScheduling.podGroup as given, NULL when absent */

	/* Every expression of the definition, in document order; the engine compiles the
	 * non-native ones of a definition into one jq program. */
	size_t n_exprs;
	wmap_expr **exprs;
	size_t n_jq; /* the texts handed to libjq (internal) */
	char **jq_texts;
} wmap_definition;

/* Builds a definition from one parsed document. source names it in messages; positions
 * (from wmap_yaml_parse, may be NULL) and doc (the document index) let findings carry
 * file:line:column. On WMAP_EINVALID the message holds every finding, one per line, and
 * *out is still NULL. The caller owns *out. jq syntax is not checked here (that needs a
 * compile); see wmap_definition_check_jq. */
int wmap_definition_load(wmap_definition **out, const json_t *doc, const char *source,
			 wmap_origin origin, const json_t *positions, int doc_index,
			 wmap_error *err);

/* Compiles the definition's jq expressions (one libjq compile for all of them, then one per
 * expression only to name the broken ones). Returns WMAP_EJQ with every broken expression
 * and where it is defined. */
int wmap_definition_check_jq(const wmap_definition *def, wmap_error *err);

void wmap_definition_free(wmap_definition *def);

/* A kind for messages, as Kubernetes prints a GroupVersionKind:
 * "jobset.x-k8s.io/v1alpha2, Kind=JobSet" ("/v1, Kind=Pod" for the core group). */
void wmap_gvk_format(char *buf, size_t len, const wmap_gvk *gvk);

/* The catalog name of a kind: "<group with dashes>-<kind>-<version>", lower case, "core" for
 * the core group (jobset-x-k8s-io-jobset-v1alpha2, core-pod-v1). */
void wmap_definition_slug(char *buf, size_t len, const char *group, const char *kind,
			  const char *version);

/* Index of a component by name, -1 when absent. */
int wmap_definition_component(const wmap_definition *def, const char *name);

/* 1 when the component describes pods (a template, a pod spec or a fragmented spec). */
int wmap_component_has_pods(const wmap_component *c);

#endif
