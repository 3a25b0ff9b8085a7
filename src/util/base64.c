/* wmap: standard base64 encoding (see wmap/base64.h).
 *
 * Every mutating review sends its patch in base64 (47 KB for a 64-job JobSet). On x86-64
 * with SSSE3 (every x86-64 CPU since 2008; checked at run time) twelve input bytes become
 * sixteen characters in a dozen vector instructions: one shuffle puts each group's three
 * bytes where its four 6-bit values go, two multiplies shift them into place, and a
 * 16-entry table gives the offset from each value to its character (which of the five runs
 * of the alphabet it falls in: A-Z, a-z, 0-9, '+', '/'), the method W. Mula and D. Lemire
 * published ("Faster Base64 Encoding and Decoding Using AVX2 Instructions", 2018). Elsewhere
 * two output characters come from one lookup in a table of the 4,096 pairs. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/base64.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <tmmintrin.h>
#define HAVE_SSSE3_PATH 1
#endif

static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static char pairs[4096][2];
static pthread_once_t pairs_once = PTHREAD_ONCE_INIT;

static void make_pairs(void)
{
	for (int i = 0; i < 4096; i++) {
		pairs[i][0] = tab[i >> 6];
		pairs[i][1] = tab[i & 63];
	}
}

/* The scalar encoder: all of data, padded. */
size_t wmap__base64_encode_pairs(char *out, const unsigned char *data, size_t len)
{
	char *o = out;
	size_t i = 0;
	pthread_once(&pairs_once, make_pairs);
	for (; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
		memcpy(o, pairs[v >> 12], 2);
		memcpy(o + 2, pairs[v & 4095], 2);
		o += 4;
	}
	if (i < len) {
		uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < len ? (uint32_t)data[i + 1] << 8 : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < len ? tab[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	return (size_t)(o - out);
}

#ifdef HAVE_SSSE3_PATH
/* Twelve bytes at in to sixteen characters at out (reads 16 bytes). */
#define ENCODE_12(in, out)                                                                      \
	do {                                                                                    \
		__m128i v_ = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in)), shuf);    \
		__m128i i_ = _mm_or_si128(_mm_mulhi_epu16(_mm_and_si128(v_, mask_ac), mul_ac),  \
					  _mm_mullo_epi16(_mm_and_si128(v_, mask_bd), mul_bd)); \
		__m128i c_ = _mm_sub_epi8(_mm_subs_epu8(i_, v51), _mm_cmpgt_epi8(i_, v25));     \
		_mm_storeu_si128((__m128i *)(out),                                              \
				 _mm_add_epi8(_mm_shuffle_epi8(offsets, c_), i_));              \
	} while (0)

/* The constants of ENCODE_12, declared in each encoder that uses it. */
#define ENCODE_12_CONSTANTS                                                                      \
	/* Each group (a, b, c) of three bytes as the 32-bit lane b, a, c, b. */                 \
	const __m128i shuf = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);   \
	/* Per lane: the 1st value (a >> 2) and the 3rd (b & 15 | c >> 6) masked, then shifted \
	 * down by a high multiply; the 2nd and 4th masked, then shifted up by a low one. */ \
	const __m128i mask_ac = _mm_set1_epi32(0x0fc0fc00), mul_ac = _mm_set1_epi32(0x04000040); \
	const __m128i mask_bd = _mm_set1_epi32(0x003f03f0), mul_bd = _mm_set1_epi32(0x01000010); \
	/* Value to character: the class is the value less 51 (saturated: 0 up to 51), plus 1 \
	 * above 25: 0 for 0-25, 1 for 26-51, 2-11 for 52-61, 12 for 62, 13 for 63; then each \
	 * class's offset from value to character. */  \
	const __m128i offsets = _mm_setr_epi8('A', 'a' - 26, '0' - 52, '0' - 52, '0' - 52,       \
					      '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,  \
					      '0' - 52, '0' - 52, '+' - 62, '/' - 63, 0, 0);     \
	const __m128i v51 = _mm_set1_epi8(51), v25 = _mm_set1_epi8(25)

/* The vector encoder for the first whole groups of 12 bytes (it reads 16 at a time, so it
 * stops at least 4 bytes short of the end); returns the input bytes it encoded, 4/3 as
 * many characters written to out. */
__attribute__((target("ssse3"))) static size_t encode_ssse3(char *out,
							    const unsigned char *data,
							    size_t len)
{
	ENCODE_12_CONSTANTS;
	const unsigned char *p = data, *end = data + len;
	for (; end - p >= 28; p += 24, out += 32) {
		ENCODE_12(p, out);
		ENCODE_12(p + 12, out + 16);
	}
	if (end - p >= 16) {
		ENCODE_12(p, out);
		p += 12;
	}
	return (size_t)(p - data);
}

/* The same method 24 bytes at a time on CPUs with AVX2: each 128-bit half of a 32-byte
 * load taken 4 bytes before p holds 12 of them (the low half at its bytes 4-15, the high
 * half at its bytes 0-11), so the lane shuffles stay within their halves. It starts 12
 * bytes in (one SSSE3 group first, so the load before p stays inside data) and stops 28
 * or more short of the end; returns the input bytes it encoded. */
__attribute__((target("avx2"))) static size_t encode_avx2(char *out, const unsigned char *data,
							  size_t len)
{
	ENCODE_12_CONSTANTS;
	const __m256i shuf2 = _mm256_setr_epi8(5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15,
					       14, 1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
	const __m256i mask_ac2 = _mm256_set1_epi32(0x0fc0fc00), mul_ac2 = _mm256_set1_epi32(0x04000040);
	const __m256i mask_bd2 = _mm256_set1_epi32(0x003f03f0), mul_bd2 = _mm256_set1_epi32(0x01000010);
	const __m256i offsets2 = _mm256_broadcastsi128_si256(offsets);
	const __m256i v51_2 = _mm256_set1_epi8(51), v25_2 = _mm256_set1_epi8(25);
	const unsigned char *p = data, *end = data + len;
	ENCODE_12(p, out);
	p += 12, out += 16;
	for (; end - p >= 28; p += 24, out += 32) {
		__m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p - 4)), shuf2);
		__m256i i = _mm256_or_si256(_mm256_mulhi_epu16(_mm256_and_si256(v, mask_ac2), mul_ac2),
					    _mm256_mullo_epi16(_mm256_and_si256(v, mask_bd2), mul_bd2));
		__m256i c = _mm256_sub_epi8(_mm256_subs_epu8(i, v51_2), _mm256_cmpgt_epi8(i, v25_2));
		_mm256_storeu_si256((__m256i *)out, _mm256_add_epi8(_mm256_shuffle_epi8(offsets2, c), i));
	}
	if (end - p >= 16) {
		ENCODE_12(p, out);
		p += 12;
	}
	return (size_t)(p - data);
}
#endif

/* The last bytes (fewer than 16), one character at a time. */
static size_t encode_tail(char *out, const unsigned char *data, size_t len)
{
	char *o = out;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < len ? (uint32_t)data[i + 1] << 8 : 0) |
			     (i + 2 < len ? data[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < len ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? tab[v & 63] : '=';
	}
	return (size_t)(o - out);
}

size_t wmap__base64_encode_isa(int isa, char *out, const unsigned char *data, size_t len)
{
#ifdef HAVE_SSSE3_PATH
	if (isa >= 2 && len >= 40 && __builtin_cpu_supports("avx2")) {
		size_t done = encode_avx2(out, data, len);
		return done / 3 * 4 + encode_tail(out + done / 3 * 4, data + done, len - done);
	}
	if (isa >= 1 && __builtin_cpu_supports("ssse3")) {
		size_t done = len >= 16 ? encode_ssse3(out, data, len) : 0;
		return done / 3 * 4 + encode_tail(out + done / 3 * 4, data + done, len - done);
	}
#endif
	return wmap__base64_encode_pairs(out, data, len);
}

size_t wmap_base64_encode(char *out, const unsigned char *data, size_t len)
{
	return wmap__base64_encode_isa(2, out, data, len);
}

char *wmap_base64(const unsigned char *data, size_t len)
{
	char *out = malloc(WMAP_BASE64_LEN(len) + 1);
	if (!out)
		return NULL;
	out[wmap_base64_encode(out, data, len)] = '\0';
	return out;
}
