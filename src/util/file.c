/* wmap: reading a whole file (or standard input) under a byte cap (see wmap/file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/buf.h"
#include "wmap/file.h"

int wmap_file_read(char **out, size_t *out_len, const char *path, size_t max, wmap_error *err)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	wmap_buf b = WMAP_BUF_INIT(max, 65536 + 1);
	char chunk[16384];
	int rc = 0;

	*out = NULL;
	*out_len = 0;
	if (!f)
		return wmap_error_set(err, errno == ENOENT ? WMAP_ENOTFOUND : WMAP_EIO, "%s: %s", path,
				      strerror(errno));
	for (;;) {
		size_t n = fread(chunk, 1, sizeof(chunk), f);

		if ((rc = wmap_buf_add(&b, chunk, n)) == WMAP_ELIMIT) {
			rc = wmap_error_set(err, WMAP_ELIMIT, "%s: larger than %zu bytes", path, max);
			goto out;
		}
		if (rc) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto out;
		}
		if (n < sizeof(chunk)) {
			if (ferror(f)) {
				/* a directory opens fine and fails here with EISDIR */
				rc = wmap_error_set(err, WMAP_EIO, "%s: %s", path, strerror(errno));
				goto out;
			}
			break;
		}
	}
	if ((*out = wmap_buf_take(&b, out_len)) == NULL)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
out:
	wmap_buf_free(&b);
	if (f != stdin)
		fclose(f);
	return rc;
}
