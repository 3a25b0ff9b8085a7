/* Shared helpers of the unit tests. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <glob.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "helpers.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"

json_t *t_yaml(const char *text)
{
	json_t *docs;
	wmap_error err = {0};
	wmap_yaml_opts o = {.allow_aliases = 1};
	cr_assert_eq(wmap_yaml_parse(&docs, text, strlen(text), "test.yaml", &o, &err), 0, "%s",
		     err.message);
	json_t *doc = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	return doc;
}

json_t *t_load_file(const char *path, char *msg, size_t len)
{
	json_t *docs;
	wmap_error err = {0};
	wmap_yaml_opts o = {.allow_aliases = 1};
	if (wmap_yaml_parse_file(&docs, path, &o, &err)) {
		snprintf(msg, len, "%s", err.message);
		return NULL;
	}
	json_t *doc = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	return doc;
}

wmap_definition *t_definition(const char *text, char *msg, size_t len)
{
	json_t *docs = NULL, *pos = json_object();
	wmap_error err = {0};
	wmap_yaml_opts o = {.positions = pos};
	wmap_definition *d = NULL;

	if (wmap_yaml_parse(&docs, text, strlen(text), "def.yaml", &o, &err) == 0)
		wmap_definition_load(&d, json_array_get(docs, 0), "def.yaml", WMAP_ORIGIN_FILE, pos, 0, &err);
	if (!d && msg)
		snprintf(msg, len, "%s", err.message);
	json_decref(docs);
	json_decref(pos);
	return d;
}

const char *t_shared(void)
{
	const char *s = getenv("WMAP_SHARED");
	char interop[1024];
	struct stat st;
	if (!s || !*s)
		s = "../shared";
	snprintf(interop, sizeof(interop), "%s/interop", s);
	return stat(interop, &st) == 0 && S_ISDIR(st.st_mode) ? s : NULL;
}

unsigned t_parse_statuses(const char *s)
{
	unsigned bits = 0;
	char buf[256];
	char *save = NULL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
		for (int k = 0; k < WMAP_STATUS_COUNT; k++)
			if (strcmp(tok, wmap_status_name(k)) == 0)
				bits |= 1u << k;
	return bits;
}

int t_header(const char *path, const char *key, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t kl = strlen(key);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '#')
			break;
		char *p = line + 1;
		while (*p == ' ')
			p++;
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			p += kl + 1;
			while (*p == ' ')
				p++;
			/* the value ends at two spaces or a '(' comment */
			char *end = strstr(p, "  ");
			if (!end)
				end = p + strcspn(p, "\n");
			while (end > p && (end[-1] == ' ' || end[-1] == '\n'))
				end--;
			snprintf(buf, len, "%.*s", (int)(end - p), p);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

char **t_glob(const char *pattern, size_t *n)
{
	glob_t g;
	char **out;
	*n = 0;
	if (glob(pattern, 0, NULL, &g) != 0)
		return NULL;
	out = calloc(g.gl_pathc + 1, sizeof(*out));
	for (size_t i = 0; out && i < g.gl_pathc; i++)
		out[(*n)++] = strdup(g.gl_pathv[i]);
	globfree(&g);
	return out;
}

void t_free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void t_catalog_engine(wmap_registry **reg, wmap_engine **eng)
{
	wmap_error err = { 0 };
	cr_assert_eq(wmap_registry_new(reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(*reg, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_engine_new(eng, *reg, &err), 0);
}

void t_catalog_engine_free(wmap_registry *reg, wmap_engine *eng)
{
	wmap_engine_free(eng);
	wmap_registry_free(reg);
}

void t_temp_dir(char *dir, size_t len, const char *prefix)
{
	snprintf(dir, len, "/tmp/%s-XXXXXX", prefix);
	cr_assert_not_null(mkdtemp(dir), "mkdtemp %s", dir);
}

void t_remove_dir(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

const char *t_write_file(const char *dir, const char *name, const char *text)
{
	static char path[8][512];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "cannot write %s", p);
	fputs(text, f);
	fclose(f);
	return p;
}

wmap_policy_set *t_policy_set(const char *text)
{
	char dir[128];
	wmap_policy_set *set = NULL;
	wmap_error err = { 0 };
	t_temp_dir(dir, sizeof(dir), "wmap-policies");
	const char *path = t_write_file(dir, "p.yaml", text);
	cr_assert_eq(wmap_policy_set_load(&set, path, &err), 0, "%s", err.message);
	t_remove_dir(dir);
	return set;
}

int t_listen_loopback(int backlog, int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0, "socket");
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind to 127.0.0.1");
	cr_assert_eq(listen(fd, backlog), 0, "listen");
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0, "getsockname");
	*port = ntohs(a.sin_port);
	return fd;
}
