/* wmap: the capped growable buffer (see wmap/buf.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "wmap/buf.h"
#include "wmap/error.h"

void wmap_buf_init(wmap_buf *b, size_t cap, size_t first)
{
	wmap_buf init = WMAP_BUF_INIT(cap, first);

	*b = init;
}

void wmap_buf_free(wmap_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
	b->error = 0;
}

void wmap_buf_clear(wmap_buf *b)
{
	b->len = 0;
}

void wmap_buf_fail(wmap_buf *b, int code)
{
	if (b->error)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
	b->error = code;
}

size_t wmap_buf_grow_size(const wmap_buf *b, size_t more)
{
	size_t alloc = b->alloc ? b->alloc : (b->first ? b->first : 256);

	/* len + more + 1 bytes are needed (the NUL); the cap bounds len + more. */
	if (more > b->cap || b->len > b->cap - more)
		return 0;
	while (alloc - b->len <= more) {
		if (alloc > SIZE_MAX / 2)
			return 0;
		alloc *= 2;
	}
	if (alloc > b->cap + 1 && b->cap < SIZE_MAX)
		alloc = b->cap + 1;
	return alloc > b->alloc ? alloc : b->alloc;
}

/* Room for n more bytes and the NUL, within the cap; a failure fails the buffer. */
static int reserve(wmap_buf *b, size_t n)
{
	size_t alloc = wmap_buf_grow_size(b, n);

	if (alloc == 0) {
		wmap_buf_fail(b, WMAP_ELIMIT);
		return WMAP_ELIMIT;
	}
	if (alloc > b->alloc) {
		char *d = realloc(b->data, alloc);

		if (!d) {
			wmap_buf_fail(b, WMAP_ENOMEM);
			return WMAP_ENOMEM;
		}
		b->data = d;
		b->alloc = alloc;
	}
	return 0;
}

int wmap__buf_add(wmap_buf *b, const void *p, size_t n)
{
	int rc;

	if (b->error)
		return b->error;
	if (n < b->alloc - b->len) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		return 0;
	}
	if ((rc = reserve(b, n)) != 0)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int wmap_buf_adds(wmap_buf *b, const char *s)
{
	return wmap_buf_add(b, s, strlen(s));
}

int wmap_buf_addf(wmap_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->error)
		return b->error;
	/* Straight into the free room when it fits, else once more after growing. */
	va_start(ap, fmt);
	n = vsnprintf(b->data ? b->data + b->len : NULL, b->data ? b->alloc - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		wmap_buf_fail(b, WMAP_EINVAL);
		return WMAP_EINVAL;
	}
	if (b->data && (size_t)n < b->alloc - b->len) {
		b->len += (size_t)n;
		return 0;
	}
	int rc = reserve(b, (size_t)n);
	if (rc != 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, b->alloc - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *wmap_buf_cstr(wmap_buf *b)
{
	if (b->error)
		return NULL;
	if (!b->data)
		return "";
	b->data[b->len] = '\0';
	return b->data;
}

char *wmap_buf_take(wmap_buf *b, size_t *len)
{
	char *out;

	if (len)
		*len = 0;
	/* An empty buffer still hands out a string of its own. */
	if (!b->data && wmap__buf_add(b, "", 0)) {
		wmap_buf_free(b);
		return NULL;
	}
	if (b->error) {
		wmap_buf_free(b);
		return NULL;
	}
	out = b->data;
	out[b->len] = '\0';
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->alloc = 0;
	return out;
}
