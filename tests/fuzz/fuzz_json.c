/* libFuzzer target: JSON text in and out (src/util/json_parse.c, src/util/json_text.c), checked
 * against jansson, which reads and writes the same JSON. Properties, beyond no crash, leak
 * or UB:
 *   - wmap_json_parse accepts exactly what json_loadb(..., 0) accepts, with equal values,
 *     except text with a NUL byte right after a number ("[1\0]"), which jansson 2.14 skips
 *     and wmap refuses (RFC 8259 has no NUL outside strings);
 *   - a refusal says where (line and column >= 1) and why;
 *   - wmap_json_text writes what json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) writes, and that
 *     text parses back to an equal value. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/json_text.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je, we;
	json_t *want = json_loadb((const char *)data, size, 0, &je);
	json_t *got = wmap_json_parse((const char *)data, size, &we);
	if (want && !got && memchr(data, '\0', size)) {
		json_decref(want);
		want = NULL;   /* jansson's NUL-after-a-number quirk */
	}
	FZ_CHECK(!want == !got, "jansson %s (%s), wmap %s (%s)", want ? "accepts" : "refuses",
		 je.text, got ? "accepts" : "refuses", we.text);
	if (!got) {
		FZ_CHECK(we.text[0] && we.line >= 1 && we.column >= 1 && we.position >= 0 &&
				 (size_t)we.position <= size,
			 "refusal without a place: line %d column %d position %d \"%s\"", we.line,
			 we.column, we.position, we.text);
		return 0;
	}
	FZ_CHECK(json_equal(want, got), "jansson and wmap read different values");
	size_t n = 0;
	char *ours = wmap_json_text(got, &n);
	char *theirs = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
	FZ_CHECK(ours && theirs && strcmp(ours, theirs) == 0 && n == strlen(ours),
		 "text differs: wmap %s, jansson %s", ours ? ours : "(none)",
		 theirs ? theirs : "(none)");
	json_t *back = wmap_json_parse(ours, n, &we);
	FZ_CHECK(back && json_equal(back, got), "own text does not read back: %s", we.text);
	json_decref(back);
	free(ours);
	free(theirs);
	json_decref(want);
	json_decref(got);
	return 0;
}
