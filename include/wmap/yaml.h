/* wmap: the strict YAML (and JSON) reader, and the YAML writer.
 *
 * Every document becomes a jansson value. Plain scalars are typed as kubectl types them
 * (go-yaml v2 rules: null, booleans, integers, floats, else string); quoted scalars are
 * strings. Duplicate keys, excessive depth, size or node counts are errors naming
 * file:line:column. Anchors and aliases are refused unless opts->allow_aliases, and then
 * expanded under a hard node cap (no billion laughs). */
#ifndef WMAP_YAML_H
#define WMAP_YAML_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/error.h"

#define WMAP_YAML_MAX_BYTES (8u << 20) /* one input, 8 MiB */
#define WMAP_YAML_MAX_DEPTH 128        /* nesting of mappings and sequences */
#define WMAP_YAML_MAX_NODES 1000000    /* nodes after alias expansion */

typedef struct wmap_yaml_opts {
	int allow_aliases; /* workload manifests may use them; definitions may not */
	size_t max_bytes;  /* 0 = WMAP_YAML_MAX_BYTES */
	int max_depth;     /* 0 = WMAP_YAML_MAX_DEPTH */
	size_t max_nodes;  /* 0 = WMAP_YAML_MAX_NODES */
	/* When not NULL, filled with one entry per node: JSON pointer of the node inside its
	 * document, prefixed with the document index ("0/spec/x"), -> [line, column]. */
	json_t *positions;
} wmap_yaml_opts;

/* Parses every document of data (YAML or JSON) into *out, a new JSON array owned by the
 * caller. name is used in messages ("catalog/x.yaml"). Empty documents are skipped. */
int wmap_yaml_parse(json_t **out, const char *data, size_t len, const char *name,
		    const wmap_yaml_opts *opts, wmap_error *err);

/* Reads a whole file ("-" is standard input) with the byte cap of opts, then parses it. */
int wmap_yaml_parse_file(json_t **out, const char *path, const wmap_yaml_opts *opts,
			 wmap_error *err);

/* Writes value as one YAML document into a new string owned by the caller. Strings that a
 * YAML reader would type otherwise ("true", "1", "") are quoted. */
int wmap_yaml_dump(char **out, const json_t *value, wmap_error *err);

/* Looks up the position of a node recorded in positions: "file:line:col" into buf, or just
 * the file name when unknown. pointer is "<doc>/<json pointer>". */
void wmap_yaml_position(char *buf, size_t len, const json_t *positions, const char *name,
			const char *pointer);

#endif
