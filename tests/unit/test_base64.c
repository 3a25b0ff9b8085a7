/* base64 (src/util/base64.c): every length and every byte value against a plain
 * one-character-at-a-time encoder written here. */
#include <criterion/criterion.h>
#include <stdint.h>
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

/* Every encoder this CPU has (AVX2 24 bytes a step, SSSE3 12, the scalar pairs) at every
 * start alignment and length up to a few groups past it, over pseudo-random bytes; the
 * encoder into a caller's buffer writes exactly WMAP_BASE64_LEN bytes and nothing past them. */
Test(base64, every_alignment_random_bytes_and_exact_length)
{
	unsigned char data[4096 + 16];
	char want[5600], got[5600];
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < sizeof(data); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = (unsigned char)(x >> 11);
	}
	for (size_t off = 0; off < 16; off++) {
		for (size_t n = 0; n <= 200; n++) {
			memset(got, '#', sizeof(got));
			size_t w = wmap_base64_encode(got, data + off, n);
			reference(want, data + off, n);
			cr_assert_eq(w, WMAP_BASE64_LEN(n), "length %zu", n);
			cr_assert_eq(w, strlen(want), "length %zu", n);
			cr_assert(memcmp(got, want, w) == 0 && got[w] == '#', "offset %zu length %zu",
				  off, n);
			/* the encoders of CPUs with less, whatever this one has */
			memset(got, '#', sizeof(got));
			w = wmap__base64_encode_pairs(got, data + off, n);
			cr_assert(w == strlen(want) && memcmp(got, want, w) == 0 && got[w] == '#',
				  "scalar: offset %zu length %zu", off, n);
			for (int isa = 0; isa < 2; isa++) {
				memset(got, '#', sizeof(got));
				w = wmap__base64_encode_isa(isa, got, data + off, n);
				cr_assert(w == strlen(want) && memcmp(got, want, w) == 0 &&
						  got[w] == '#',
					  "isa %d: offset %zu length %zu", isa, off, n);
			}
		}
	}
	size_t n = sizeof(data) - 16;
	char *big = wmap_base64(data + 3, n);
	cr_assert_not_null(big);
	reference(want, data + 3, n);
	cr_expect_str_eq(big, want);
	free(big);
}
