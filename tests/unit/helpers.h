/* Shared helpers of the unit tests (tests/unit/helpers.c). */
#ifndef WMAP_TEST_HELPERS_H
#define WMAP_TEST_HELPERS_H

#include <jansson.h>
#include "wmap/definition.h"
#include "wmap/policy.h"
#include "wmap/registry.h"

/* Parses YAML text (aliases allowed) and returns its first document; fails the test on error. */
json_t *t_yaml(const char *text);
/* Reads the first document of a file, or NULL with the message in err. */
json_t *t_load_file(const char *path, char *err, size_t len);
/* Loads a definition from YAML text; NULL and the message in msg on error. */
wmap_definition *t_definition(const char *text, char *msg, size_t len);
/* The folder of the shared material (WMAP_SHARED, default ../shared), or NULL when it has no
 * interop/ folder. */
const char *t_shared(void);
/* The status bits named in a list like "Running, Degraded" (names as wmap_status_name). */
unsigned t_parse_statuses(const char *s);
/* The value of a "# key: value" header line of a file, into buf; 0 when found. */
int t_header(const char *path, const char *key, char *buf, size_t len);
/* Paths matching a glob, sorted; the caller frees with t_free_list. */
char **t_glob(const char *pattern, size_t *n);
void t_free_list(char **list, size_t n);

/* A registry with the whole embedded catalog and an engine over it; fails the test on error. */
void t_catalog_engine(wmap_registry **reg, wmap_engine **eng);
void t_catalog_engine_free(wmap_registry *reg, wmap_engine *eng);

/* A new empty folder /tmp/PREFIX-XXXXXX in dir (at least 64 bytes); fails the test on error. */
void t_temp_dir(char *dir, size_t len, const char *prefix);
/* Removes the folder and everything in it. */
void t_remove_dir(const char *dir);
/* Writes text to dir/name; returns the path (one of 8 rotating buffers, so a test can hold a
 * few at once). */
const char *t_write_file(const char *dir, const char *name, const char *text);

/* A policy set loaded from YAML text through a file (so messages carry file:line:col);
 * fails the test on error. The caller frees it. */
wmap_policy_set *t_policy_set(const char *text);

/* A TCP socket listening on 127.0.0.1 at a free port (into *port) with the backlog given, for
 * the tests' scripted HTTP servers; fails the test on error. The caller closes it. */
int t_listen_loopback(int backlog, int *port);

#endif
