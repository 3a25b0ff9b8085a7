/* libFuzzer target: the strict YAML/JSON reader (wmap_yaml_parse), with and without aliases
 * and positions. Properties: no crash, leak or UB; a result is an array of documents; every
 * document written back with wmap_yaml_dump reads back equal (the writer quotes what the
 * reader would type otherwise). */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/yaml.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Fixed hash seed: reproducible runs. */
	json_object_seed(1);
	return 0;
}

static void roundtrip(const json_t *doc)
{
	char *text = NULL;
	wmap_error err;
	if (wmap_yaml_dump(&text, doc, &err) != 0)
		return; /* values YAML cannot hold are refused, not crashed on */
	json_t *back = NULL;
	wmap_yaml_opts o = {0};
	int rc = wmap_yaml_parse(&back, text, strlen(text), "dump", &o, &err);
	FZ_CHECK(rc == 0, "dump does not read back: %s\n---\n%s", err.message, text);
	FZ_CHECK(json_array_size(back) == 1, "dump reads back as %zu documents:\n%s",
		 json_array_size(back), text);
	if (!json_equal(json_array_get(back, 0), doc)) {
		char *a = json_dumps(doc, JSON_ENCODE_ANY | JSON_COMPACT);
		char *b = json_dumps(json_array_get(back, 0), JSON_ENCODE_ANY | JSON_COMPACT);
		FZ_CHECK(0, "dump reads back different:\nbefore %s\nafter  %s\nyaml:\n%s", a, b, text);
	}
	json_decref(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return -1;
	for (int variant = 0; variant < 3; variant++) {
		wmap_yaml_opts o = {0};
		o.allow_aliases = variant > 0;
		o.max_nodes = 200000; /* keeps each run fast; the cap itself is what is tested */
		json_t *pos = variant == 2 ? json_object() : NULL;
		o.positions = pos;
		json_t *docs = NULL;
		wmap_error err;
		int rc = wmap_yaml_parse(&docs, (const char *)data, size, "fuzz.yaml", &o, &err);
		if (rc == 0) {
			FZ_CHECK(json_is_array(docs), "result is not an array");
			size_t i;
			json_t *d;
			json_array_foreach(docs, i, d) {
				if (variant == 0)
					roundtrip(d);
			}
			if (pos && json_array_size(docs)) {
				char where[256];
				wmap_yaml_position(where, sizeof(where), pos, "fuzz.yaml", "0");
				wmap_yaml_position(where, sizeof(where), pos, "fuzz.yaml", "0/a/0");
			}
		} else {
			FZ_CHECK(docs == NULL, "failure left a result");
			FZ_CHECK(rc < 0 && err.code == rc && err.message[0],
				 "failure without a message (rc %d)", rc);
		}
		json_decref(docs);
		json_decref(pos);
	}
	return 0;
}
