/* wmap: a growable byte buffer with a hard cap, a utility of every layer.
 *
 * The cap is fixed when the buffer is made: an append that would take the buffer past it
 * fails with WMAP_ELIMIT, one that cannot get memory with WMAP_ENOMEM, and in both cases
 * the buffer frees what it held and refuses every later append with the same code (so a
 * writer can append many pieces and check once at the end). The text is kept one byte short
 * of the allocation, so wmap_buf_cstr and wmap_buf_take can always end it with a NUL.
 * Request bodies, API responses and rendered texts all go through it. */
#ifndef WMAP_BUF_H
#define WMAP_BUF_H

#include <stddef.h>
#include <string.h>

typedef struct wmap_buf {
	char *data;   /* NULL until the first append */
	size_t len;   /* bytes held */
	size_t alloc; /* bytes allocated: always more than len once data is set */
	size_t cap;   /* the most bytes it may hold */
	size_t first; /* the first allocation (0 = 256 bytes); then it doubles */
	int error;    /* 0, or the WMAP_E* code of the append that failed */
} wmap_buf;

/* An empty buffer holding at most cap bytes, allocating first bytes on its first append. */
#define WMAP_BUF_INIT(cap, first)             \
	{                                     \
		NULL, 0, 0, (cap), (first), 0 \
	}

/* The same as a function (the buffer holds nothing yet and owns nothing). */
void wmap_buf_init(wmap_buf *b, size_t cap, size_t first);

/* Frees what b holds and clears its error; its cap stays. NULL is fine. */
void wmap_buf_free(wmap_buf *b);

/* Empties b but keeps its memory for the next appends (the error stays). */
void wmap_buf_clear(wmap_buf *b);

/* Internal: the slow path of wmap_buf_add (grows, or fails). */
int wmap__buf_add(wmap_buf *b, const void *p, size_t n);

/* Appends n bytes: 0, else WMAP_ELIMIT or WMAP_ENOMEM (and b is freed, see above). */
static inline int wmap_buf_add(wmap_buf *b, const void *p, size_t n)
{
	if (n < b->alloc - b->len) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		return 0;
	}
	return wmap__buf_add(b, p, n);
}

/* Appends one byte, a NUL-terminated string, or printf-style text (same results). */
static inline int wmap_buf_addc(wmap_buf *b, char c)
{
	if (b->alloc - b->len > 1) {
		b->data[b->len++] = c;
		return 0;
	}
	return wmap__buf_add(b, &c, 1);
}
int wmap_buf_adds(wmap_buf *b, const char *s);
int wmap_buf_addf(wmap_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The allocation an append of more bytes would grow b to (b->alloc when it fits), or 0 when
 * it would pass the cap: for callers that account memory before it is taken. */
size_t wmap_buf_grow_size(const wmap_buf *b, size_t more);

/* Marks b failed with code (a negative WMAP_E*, e.g. a value too deep to write): frees it
 * and refuses later appends, as a failed append does. */
void wmap_buf_fail(wmap_buf *b, int code);

/* The text, NUL-terminated, borrowed from b (valid until its next append or free); "" when
 * it holds nothing, NULL after a failure. */
const char *wmap_buf_cstr(wmap_buf *b);

/* Hands the text over: a new NUL-terminated string owned by the caller (free()), its length
 * in *len (may be NULL); b is left empty. NULL (and *len 0) when an append failed or memory
 * runs out, and b is freed. */
char *wmap_buf_take(wmap_buf *b, size_t *len);

#endif
