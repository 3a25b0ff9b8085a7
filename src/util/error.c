/* wmap: error values (see include/wmap/error.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wmap/error.h"

int wmap_error_set(wmap_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

void wmap_error_prefix(wmap_error *err, const char *fmt, ...)
{
	char prefix[512], old[WMAP_ERROR_MAX];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof(old));
	snprintf(err->message, sizeof(err->message), "%s: %s", prefix, old);
}

void wmap_error_clear(wmap_error *err)
{
	if (err) {
		err->code = 0;
		err->message[0] = '\0';
	}
}

const char *wmap_error_name(int code)
{
	switch (code) {
	case WMAP_OK: return "ok";
	case WMAP_EINVAL: return "invalid input";
	case WMAP_ENOMEM: return "out of memory";
	case WMAP_EIO: return "i/o error";
	case WMAP_ENOTFOUND: return "not found";
	case WMAP_ENODEF: return "no definition";
	case WMAP_EJQ: return "jq error";
	case WMAP_ELIMIT: return "limit reached";
	case WMAP_EINVALID: return "invalid definition";
	case WMAP_EEVAL: return "evaluation error";
	default: return "error";
	}
}
