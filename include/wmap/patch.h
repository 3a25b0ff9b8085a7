/* wmap: RFC 6902 JSON Patch builder and applier, RFC 6901 JSON Pointers, label values.
 *
 * The builder writes patches that always apply to the document they were built from
 * (architecture decision 3): every pointer token is escaped, a missing container
 * (metadata, labels, nodeSelector, tolerations, ...) is created whole by one `add`, a map
 * that exists gets one `add` per key and is never replaced, lists are appended to with
 * `/-` only when no equal element is there, and indices come from the document itself.
 * A setting that is already in force produces no operation, so building again on the
 * patched document yields an empty patch (decision 4).
 *
 * The builder reads through an overlay: values set earlier in the same patch are seen by
 * later calls, so two settings of one key or two keys of one missing map give one
 * consistent result. */
#ifndef WMAP_PATCH_H
#define WMAP_PATCH_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/error.h"
#include "wmap/pointer.h" /* patches are written in terms of pointers */

typedef struct wmap_patch wmap_patch;

typedef enum wmap_patch_mode {
	WMAP_PATCH_DEFAULT,  /* set only when absent (or null) */
	WMAP_PATCH_OVERRIDE, /* set unless already equal */
} wmap_patch_mode;

/* A builder for patches against doc, which it borrows: doc must outlive the builder and
 * must not change while it is used. The caller owns *out. */
int wmap_patch_new(wmap_patch **out, const json_t *doc, wmap_error *err);
void wmap_patch_free(wmap_patch *p);

/* Room for about n_ops more operations, made at once (a caller that knows how many it will
 * make spares the growth on the way). Best effort: without memory nothing is reserved and
 * the patch is the same. */
void wmap_patch_reserve(wmap_patch *p, size_t n_ops);

/* Sets member key of the object at pointer parent to value (stolen, also on failure).
 * Missing containers on the way are created with one whole-object `add` at the first
 * missing level; that level's parent must exist and be an object. *changed (may be NULL)
 * is 1 when the patch grew or changed. WMAP_EEVAL when parent, or a container on the way,
 * exists but is not an object; WMAP_EINVAL for a malformed pointer. */
int wmap_patch_set(wmap_patch *p, const char *parent, const char *key, json_t *value,
		   wmap_patch_mode mode, int *changed, wmap_error *err);

/* wmap_patch_set with a string value (copied): the patch and errors of
 * wmap_patch_set(p, parent, key, json_string(value), mode, changed, err), a value that is not
 * UTF-8 included (WMAP_ENOMEM, as the NULL from json_string is there). The builder keeps
 * such values as text until something reads them as JSON (wmap_patch_get, wmap_patch_ops,
 * a later write through them), and wmap_patch_dump writes them as they are. */
int wmap_patch_set_str(wmap_patch *p, const char *parent, const char *key, const char *value,
		       wmap_patch_mode mode, int *changed, wmap_error *err);

/* wmap_patch_set_at with a string value, as wmap_patch_set_str is to wmap_patch_set. */
int wmap_patch_set_str_at(wmap_patch *p, const char *pointer, const char *value,
			  wmap_patch_mode mode, int *changed, wmap_error *err);

/* One member for wmap_patch_set_strs. */
typedef struct wmap_patch_str {
	const char *key, *value;
	wmap_patch_mode mode;
	int changed; /* set by the call: 1 when this member grew or changed the patch */
	/* 1 when the caller knows key and value to be ASCII letters, digits and "-_./" only
	 * (a constant key, a value from wmap_label_value): not scanned again */
	int known_plain;
	/* with known_plain, the lengths of key and value when the caller has them (0: measured
	 * here) */
	size_t key_len, value_len;
	/* 1 when the caller knows this member's key to differ from every other member's key
	 * in the call (constant keys): a map created whole is then not checked for a repeat
	 * unless some member lacks it */
	int known_distinct;
} wmap_patch_str;

/* Sets the n string members m of the map at parent, in order: the patch of n
 * wmap_patch_set_str calls, with one walk to parent and, when a container on the way is
 * missing, one `add` holding them all (a template's labels). Stops at the first member that
 * fails, with its error (every later member would get the same one, memory aside); the
 * members after it are left as they were (changed 0). */
int wmap_patch_set_strs(wmap_patch *p, const char *parent, wmap_patch_str *m, size_t n,
			wmap_error *err);

/* wmap_patch_set_strs, given node, the document's value at the first at bytes of parent
 * (borrowed; a whole number of tokens), or NULL when not known. Short of parent, node is
 * the deepest value there: an object without the next token's member (or null there). A
 * template's labels map, else its metadata, else the template, as the resolved workload
 * holds them. The patch and errors are those of wmap_patch_set_strs; node spares the walk
 * from the root when no operation so far owns that prefix or a shorter one. parent_len is
 * strlen(parent). */
int wmap_patch_set_strs_in(wmap_patch *p, const char *parent, size_t parent_len, const json_t *node,
			   size_t at, wmap_patch_str *m, size_t n, wmap_error *err);

/* Sets the member named by the last token of pointer (a convenience over wmap_patch_set). */
int wmap_patch_set_at(wmap_patch *p, const char *pointer, json_t *value, wmap_patch_mode mode,
		      int *changed, wmap_error *err);

/* Adds value (stolen) at pointer when nothing is there yet: a member of an object, or an
 * entry of a list at the list's end (an `add` at index n of an n-entry list). *actual (may
 * be NULL; the caller frees it) gets the pointer the value has: pointer itself, or with a
 * later index when entries were added to that list earlier in this patch. When something
 * is already at pointer, nothing is added and *actual is pointer. WMAP_EEVAL when the
 * parent is missing or neither an object nor a list. */
int wmap_patch_create(wmap_patch *p, const char *pointer, json_t *value, char **actual,
		      wmap_error *err);

/* Appends value (stolen) to the array at pointer unless an equal element is there; a
 * missing or null array is created whole. WMAP_EEVAL when something else is there. */
int wmap_patch_append_unique(wmap_patch *p, const char *pointer, json_t *value, int *changed,
			     wmap_error *err);

/* The value at pointer as the patch so far would leave it (borrowed, valid until the next
 * call on p), NULL when absent. Appends to arrays of the document are not reflected. */
const json_t *wmap_patch_get(const wmap_patch *p, const char *pointer);

/* The operations so far: a JSON array borrowed from p, built on first use (it lives until
 * the next call on p), NULL when memory runs out. */
const json_t *wmap_patch_ops(wmap_patch *p);
size_t wmap_patch_len(const wmap_patch *p);

/* The operations as a new reference (json_decref it), valid after wmap_patch_free; NULL when
 * memory runs out. Its values are shared with the builder: read them, and make no further
 * change through p while the array is in use. */
json_t *wmap_patch_take_ops(wmap_patch *p);

/* Compact JSON text of the operations ("[]" when empty), a new string owned by the caller,
 * written straight from the builder (no JSON objects are made for it). */
int wmap_patch_dump(char **out, size_t *out_len, const wmap_patch *p, wmap_error *err);

/* Applies an RFC 6902 patch (add, remove, replace, move, copy, test) to *doc in place.
 * *doc may be replaced (a patch on the root); on failure it is left partly patched and the
 * message names the failing operation's index and path. For offline output and tests. */
int wmap_patch_apply(json_t **doc, const json_t *ops, wmap_error *err);

/* Kubernetes label values: at most 63 characters of [A-Za-z0-9_.-], beginning and ending
 * with an alphanumeric, or empty. */
int wmap_label_value_valid(const char *value);

/* value when valid, else a valid value derived from it: invalid characters become '-',
 * the result is trimmed, cut to fit and given a stable 8-hex-digit FNV-1a suffix of the
 * original, so distinct inputs stay distinct. buf needs 64 bytes. Never fails; the length
 * written (0 when len is 0). */
size_t wmap_label_value(char *buf, size_t len, const char *value);

/* A qualified label or annotation key ([prefix/]name: DNS subdomain prefix <= 253, name
 * <= 63 of [A-Za-z0-9_.-] beginning and ending alphanumeric). */
int wmap_label_key_valid(const char *key);

#endif
