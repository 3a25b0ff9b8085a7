/* base64 (src/util/base64.c): every length and every byte value against a plain
 * one-character-at-a-time encoder written here. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/base64.h"

static void reference(char *out, const unsigned char *d, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);
		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

Test(base64, every_length_and_byte_as_the_plain_encoder)
{
	unsigned char data[770];
	char want[1100];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 97 + (i >> 3)); /* every byte value, in varied runs */
	for (size_t n = 0; n <= sizeof(data); n++) {
		char *got = wmap_base64(data, n);
		cr_assert_not_null(got);
		reference(want, data, n);
		cr_assert_str_eq(got, want, "length %zu", n);
		free(got);
	}
	char *rfc = wmap_base64((const unsigned char *)"foobar", 6);
	cr_expect_str_eq(rfc, "Zm9vYmFy"); /* RFC 4648, section 10 */
	free(rfc);
}
