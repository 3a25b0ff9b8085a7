/* wmap: reading a whole file, a utility of every layer. */
#ifndef WMAP_FILE_H
#define WMAP_FILE_H

#include <stddef.h>
#include "wmap/error.h"

/* Reads a whole file ("-" = stdin) into a new NUL-terminated buffer; refuses more than max
 * bytes (WMAP_ELIMIT naming the file). A missing file is WMAP_ENOTFOUND, another failure to
 * open or read it WMAP_EIO. The caller frees *out with free(); *out is NULL on failure. */
int wmap_file_read(char **out, size_t *out_len, const char *path, size_t max, wmap_error *err);

/* The files a FILE|DIR argument names, in the order they are read. */
typedef struct wmap_file_list {
	size_t n;
	char **paths; /* each malloc'd; the list owns them */
} wmap_file_list;

#define WMAP_FILE_LIST_MAX_DEPTH 32 /* folders nested deeper are refused */

/* Appends what path names to list: "-" (stdin) or a file as given; a directory walked
 * recursively, its entries in byte order of their names, keeping *.yaml, *.yml and *.json
 * files and skipping hidden entries ("."-prefixed); a symbolic link back to a folder being
 * walked is refused (WMAP_EINVAL naming it). A missing path is WMAP_ENOTFOUND; a directory
 * that holds no such file is WMAP_EINVAL (an empty folder given by mistake would otherwise
 * read as "no policy"). On failure the list keeps what it had before the call. */
int wmap_file_list_add(wmap_file_list *list, const char *path, wmap_error *err);

/* Frees the paths and empties the list; takes NULL. */
void wmap_file_list_clear(wmap_file_list *list);

#endif
