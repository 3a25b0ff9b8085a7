/* A tiny RFC 6902 applier written for the fuzz targets, independent of src/patch.c so that
 * the builder is not checked against itself. */
#ifndef FUZZ_JSONPATCH_H
#define FUZZ_JSONPATCH_H

#include <jansson.h>

/* Applies ops (an array of {op, path, value|from}) to *doc in place; *doc may be replaced
 * by an operation on the root. Returns 0, or the index + 1 of the first operation that
 * does not apply (*doc is then partly patched). */
int fz_patch_apply(json_t **doc, const json_t *ops);

/* The value at an RFC 6901 pointer (borrowed), NULL when absent or malformed. */
json_t *fz_pointer_get(json_t *doc, const char *pointer);

#endif
