/* kubectl-wmap: rendering. Space-aligned tables (never tabs), the describe tree and its
 * resources table, the JSON model behind `-o json|yaml`, and the writer of that model. */
#ifndef KUBECTL_WMAP_RENDER_H
#define KUBECTL_WMAP_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "options.h"
#include "wmap/error.h"
#include "wmap/workload.h"

#define RENDER_TABLE_MAX_ROWS 100000 /* a table grows from input: cap it */
#define RENDER_TABLE_MAX_COLS 10
#define RENDER_COLUMN_GAP 3 /* spaces between columns, as upstream's tabwriter */

/* A table of text cells printed with columns padded to their widest cell. */
typedef struct render_table render_table;

/* A new table of ncols columns (1..RENDER_TABLE_MAX_COLS), owned by the caller. */
int render_table_new(render_table **out, size_t ncols, wmap_error *err);
/* Appends a row; cells (ncols of them, NULL = empty) are copied. */
int render_table_add(render_table *t, const char *const *cells, wmap_error *err);
size_t render_table_rows(const render_table *t);
/* Prints every row; the last column is not padded and no line ends in spaces. */
void render_table_print(FILE *out, const render_table *t);
void render_table_free(render_table *t);

/* Prints the file-mode describe view of w (header, phase, component tree, resources
 * table). */
int render_describe(FILE *out, const wmap_workload *w, wmap_error *err);

/* Builds the `-o json|yaml` model of w (documented in README.md), owned by the caller. */
int render_describe_model(json_t **out, const wmap_workload *w, wmap_error *err);

/* The pieces of that model the live form (live_describe.c) builds with, so that both have
 * one shape: {gpus, cpuMillis, memoryBytes}; the matched statuses in evaluation order
 * (["Undefined"] when none); and, on a component's object c (instance: the index into
 * n's instances, for a multi-instance component's instance object), where its pods are
 * described (podTemplate {shape, pointer?}, or an instance's pointer). Values are new
 * references (NULL when out of memory); render_pod_location returns 0 or -1. */
json_t *render_resources_json(const wmap_resources *r);
json_t *render_phases_json(const wmap_workload *w);
int render_pod_location(json_t *c, const wmap_node *n, size_t instance);

/* Writes value as indented JSON or as YAML, ending with a newline. */
int render_value(FILE *out, const json_t *value, cli_output format, wmap_error *err);

/* "<Kind>.<group>/<version>" of an apiVersion and kind ("Pod/v1" for the core group),
 * as wmap_gvk_format writes a definition's kind. */
void render_gvk_of(char *buf, size_t len, const char *api_version, const char *kind);

/* "JobSet.jobset.x-k8s.io/v1alpha2", "Pod/v1": a kind as the plugin's tables show it. */
void render_kind_label(char *buf, size_t len, const wmap_gvk *gvk);

/* 0 when w was read through the definition of another version of its kind. */
int render_exact_version(const wmap_workload *w);

#endif
