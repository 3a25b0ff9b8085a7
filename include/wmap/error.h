/* wmap: error values. The core never prints and never exits: every failure travels back
 * to the caller as a negative WMAP_E* code plus a message that names the place
 * (file:line:column for YAML, a JSON path such as .spec.replicatedJobs[1] for objects). */
#ifndef WMAP_ERROR_H
#define WMAP_ERROR_H

#include <stddef.h>

enum {
	WMAP_OK = 0,
	WMAP_EINVAL = -1,    /* malformed input: YAML, JSON, object shape, arguments */
	WMAP_ENOMEM = -2,    /* an allocation failed */
	WMAP_EIO = -3,       /* a file could not be read */
	WMAP_ENOTFOUND = -4, /* a named thing does not exist */
	WMAP_ENODEF = -5,    /* no definition covers the object's group/version/kind */
	WMAP_EJQ = -6,       /* a jq expression failed to compile or to run */
	WMAP_ELIMIT = -7,    /* a size, depth, count or time limit was reached */
	WMAP_EINVALID = -8,  /* a definition failed validation (findings in the message) */
	WMAP_EEVAL = -9,     /* an object did not fit what its definition expects */
};

#define WMAP_ERROR_MAX 2048

typedef struct wmap_error {
	int code;                     /* one of WMAP_E*, 0 when nothing failed */
	char message[WMAP_ERROR_MAX]; /* one line, or findings separated by '\n' */
} wmap_error;

/* Sets err (when not NULL) and returns code, so callers can `return wmap_error_set(...)`. */
int wmap_error_set(wmap_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Puts "prefix: " in front of the message already in err (file names, object names). */
void wmap_error_prefix(wmap_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void wmap_error_clear(wmap_error *err);

/* A short constant name of a code ("invalid input", "not found", ...). */
const char *wmap_error_name(int code);

#endif
