/* wmap: apiVersion into group and version (see wmap/apiversion.h). */
#include <stdio.h>
#include <string.h>

#include "wmap/apiversion.h"

void wmap_api_version_split(wmap_api_version *out, const char *api)
{
	const char *slash;

	if (!api)
		api = "";
	slash = strchr(api, '/');
	out->group = api;
	out->group_len = slash ? (size_t)(slash - api) : 0;
	out->version = slash ? slash + 1 : api;
}

int wmap_api_version_parse(char *group, size_t group_size, char *version, size_t version_size,
			   const char *api)
{
	wmap_api_version av;
	size_t vl;

	wmap_api_version_split(&av, api);
	vl = strlen(av.version);
	if (av.group_len >= group_size || vl >= version_size) {
		if (group_size)
			group[0] = '\0';
		if (version_size)
			version[0] = '\0';
		return -1;
	}
	memcpy(group, av.group, av.group_len);
	group[av.group_len] = '\0';
	memcpy(version, av.version, vl + 1);
	return 0;
}
