/* wmap: reading a whole file, a utility of every layer. */
#ifndef WMAP_FILE_H
#define WMAP_FILE_H

#include <stddef.h>
#include "wmap/error.h"

/* Reads a whole file ("-" = stdin) into a new NUL-terminated buffer; refuses more than max
 * bytes (WMAP_ELIMIT naming the file). A missing file is WMAP_ENOTFOUND, another failure to
 * open or read it WMAP_EIO. The caller frees *out with free(); *out is NULL on failure. */
int wmap_file_read(char **out, size_t *out_len, const char *path, size_t max, wmap_error *err);

#endif
