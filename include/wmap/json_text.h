/* wmap: JSON text in and out.
 *
 * Out: compact JSON text that is never partial.
 * jansson 2.14's json_dumps ignores a failed write of an object key and carries on, so an
 * allocation failure can yield malformed JSON; an admission response or a patch must be
 * whole or absent. jansson also escapes strings one code point at a time, which made the
 * dump of a 64-job review's patch and response its largest single cost. This writer copies
 * every run of characters that needs no escape at once. */
#ifndef WMAP_JSON_TEXT_H
#define WMAP_JSON_TEXT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "wmap/buf.h"

/* The compact JSON text of v (any value, objects in their insertion order), byte for byte
 * what json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) writes when it succeeds. A new
 * NUL-terminated string owned by the caller, its length in *len (may be NULL); NULL when an
 * allocation fails or v nests deeper than WMAP_JSON_TEXT_MAX_DEPTH (or loops). */
char *wmap_json_text(const json_t *v, size_t *len);

#define WMAP_JSON_TEXT_MAX_DEPTH 2048

/* The most text one writer makes (far above any review or patch: the webhook's bodies are
 * capped at a few MiB). */
#define WMAP_JSON_TEXT_MAX_BYTES ((size_t)1 << 30)

/* The same writer in pieces, for text assembled from several parts (a JSON Patch written
 * from the builder's operations). Start from WMAP_JSON_WRITER_INIT; each call appends;
 * finish returns the NUL-terminated text (owned by the caller) or NULL when any step failed
 * (memory, the size cap, a value too deep: buf.error says which), and resets the writer. */
typedef struct wmap_json_writer {
	wmap_buf buf;
} wmap_json_writer;

/* One allocation for a small review's answer; glibc consolidates its free lists on every
 * request of 1 KiB or more, so growing 256, 512, 1024, ... costs more than this. */
#define WMAP_JSON_WRITER_INIT                                 \
	{                                                     \
		WMAP_BUF_INIT(WMAP_JSON_TEXT_MAX_BYTES, 4096) \
	}

void wmap_json_write_raw(wmap_json_writer *w, const char *s, size_t n);    /* as it is */
void wmap_json_write_string(wmap_json_writer *w, const char *s, size_t n); /* quoted */
void wmap_json_write_value(wmap_json_writer *w, const json_t *v);
/* The standard base64 of n bytes as a JSON string (quoted; it needs no escapes), encoded
 * straight into the text. */
void wmap_json_write_base64(wmap_json_writer *w, const void *data, size_t n);
char *wmap_json_writer_finish(wmap_json_writer *w, size_t *len);

/* In: parses one JSON text (an object or an array) of len bytes into a new value owned by
 * the caller, with json_loadb(text, len, 0, err)'s rules: strict RFC 8259, valid UTF-8 only,
 * no \u0000, integers that fit json_int_t, reals that do not overflow, a repeated key keeps
 * its last value, at most WMAP_JSON_PARSE_MAX_DEPTH levels, nothing after the value but
 * whitespace (stricter in one place: a NUL byte right after a number, which jansson 2.14
 * skips, is refused). NULL on failure, with line, column (characters), position (bytes) and a
 * message in *err (may be NULL). jansson's reader takes about 110 instructions a byte;
 * this one copies plain runs at once (the webhook parses every review with it). */
json_t *wmap_json_parse(const char *text, size_t len, json_error_t *err);

#define WMAP_JSON_PARSE_MAX_DEPTH 2048

/* Caps for wmap_json_parse_limited; 0 in a field means no cap (depth: 2048). */
typedef struct wmap_json_limits {
	int max_depth;       /* levels, the outermost value is level 1 */
	size_t max_members;  /* members of one object, items of one array */
	size_t max_nodes;    /* values in the whole text (containers and scalars) */
	int64_t deadline_ns; /* CLOCK_MONOTONIC; read every 4096 values */
	int cut;             /* 0: a cap fails the parse (WMAP_ELIMIT); 1: cut mode */
	int keep_depth;      /* cut mode: values this deep or less are still built past the
				 * node cap and the deadline (4096 of them at most) */
} wmap_json_limits;

#define WMAP_JSON_CUT_PATH_STEPS 24

/* What cut mode left out: nothing when reason is NULL. */
typedef struct wmap_json_cut {
	const char *reason; /* "too-deep", "too-many-members", "too-many-nodes", "budget" */
	size_t limit;       /* the cap that was reached (0 for the deadline) */
	int line, column;   /* where the first value left out starts (column in characters) */
	size_t position;    /* the same in bytes from the start */
	char path[224];     /* its JSON path (.request.object.spec["a b"][3]); the first
				 * WMAP_JSON_CUT_PATH_STEPS steps, "..." when there are more */
	size_t left_out;    /* values left out (a skipped container counts once) */
} wmap_json_cut;

/* wmap_json_parse with caps. *out gets the value (owned by the caller) or NULL. Returns 0;
 * WMAP_EINVAL when the text is not JSON (and in cut mode: anywhere, skipped parts
 * included); WMAP_ELIMIT (strict mode) when a cap or the deadline was reached; WMAP_ENOMEM.
 * *err says where on failure. In cut mode a value over a cap is left out of its object or
 * array (its text is still checked, without building anything), parsing goes on, and *cut
 * (may be NULL) names the first one and counts them; the outermost value is always kept.
 * The cost is then bounded by max_nodes built values plus a linear skim of the rest. */
int wmap_json_parse_limited(json_t **out, wmap_json_cut *cut, const char *text, size_t len,
			    const wmap_json_limits *lim, json_error_t *err);

#endif
