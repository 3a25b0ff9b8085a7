/* wmap: JSON Pointers (RFC 6901), a utility of every layer.
 *
 * A pointer is "" (the whole document) or "/tok/tok..." with every token escaped: '~' as
 * "~0", '/' as "~1". Reading is strict: a '~' not followed by '0' or '1' makes the pointer
 * malformed, and an array index is "0" or digits without a leading zero (no "01", "+1",
 * " 1" or "-"), at most 9 of them. */
#ifndef WMAP_POINTER_H
#define WMAP_POINTER_H

#include <jansson.h>
#include <stddef.h>

/* base + "/" + token escaped, a new string owned by the caller (NULL on ENOMEM). */
char *wmap_pointer_join(const char *base, const char *token);

/* wmap_pointer_join into memory from alloc (wmap_arena_alloc: review memory). */
char *wmap_pointer_join_with(void *(*alloc)(size_t), const char *base, const char *token);

/* Writes token escaped into buf (len bytes, NUL-terminated when len > 0) as snprintf does:
 * returns the length of the whole escaped token, so a result >= len means it was cut. */
size_t wmap_pointer_escape(char *buf, size_t len, const char *token);

/* base + "/" + the decimal index, a new string owned by the caller (NULL on ENOMEM). */
char *wmap_pointer_join_index(const char *base, size_t index);

/* The value at pointer inside doc (borrowed), NULL when absent or malformed. */
json_t *wmap_pointer_lookup(const json_t *doc, const char *pointer);

/* 1 when every '~' of the escaped token p[0..n) starts "~0" or "~1". */
int wmap_pointer_token_valid(const char *p, size_t n);

/* The escaped token p[0..n) unescaped into a new string owned by the caller; NULL on a
 * malformed escape or ENOMEM (tell them apart with wmap_pointer_token_valid). */
char *wmap_pointer_token_dup(const char *p, size_t n);

/* The array index of an unescaped token: 0 and *out set, or -1 when it is not one. */
int wmap_pointer_index(size_t *out, const char *tok);

/* The child of cur named by the escaped token p[0..n) (borrowed), NULL when absent; *bad is
 * set for a malformed token, *oom when unescaping it could not allocate. Tokens without '~'
 * (nearly all) are looked up in place, without a copy. */
json_t *wmap_pointer_child(const json_t *cur, const char *p, size_t n, int *bad, int *oom);

/* ".spec.replicatedJobs[1].template" from "/spec/replicatedJobs/1/template", into buf (for
 * messages; a malformed pointer is shown up to its first bad token). */
void wmap_pointer_to_path(char *buf, size_t len, const char *pointer);

#endif
