/* wmap: reading a whole file (or standard input) under a byte cap (see wmap/file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/file.h"

int wmap_file_read(char **out, size_t *out_len, const char *path, size_t max, wmap_error *err)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	*out = NULL;
	if (!f)
		return wmap_error_set(err, errno == ENOENT ? WMAP_ENOTFOUND : WMAP_EIO, "%s: %s", path,
				      strerror(errno));
	for (;;) {
		if (len + 65536 + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 65536 + 1;
			if (ncap > max + 65536 + 1)
				ncap = max + 65536 + 1;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		size_t want = cap - len - 1;
		size_t n = fread(buf + len, 1, want, f);
		len += n;
		if (len > max) {
			rc = wmap_error_set(err, WMAP_ELIMIT, "%s: larger than %zu bytes", path, max);
			goto out;
		}
		if (n < want) {
			if (ferror(f)) {
				/* a directory opens fine and fails here with EISDIR */
				rc = wmap_error_set(err, WMAP_EIO, "%s: %s", path, strerror(errno));
				goto out;
			}
			break;
		}
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	buf = NULL;
out:
	free(buf);
	if (f != stdin)
		fclose(f);
	return rc;
}
