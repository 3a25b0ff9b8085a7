/* wmap: standard base64 encoding (see wmap/base64.h).
 *
 * Every mutating review sends its patch in base64 (47 KB for a 64-job JobSet): two output
 * characters come from one lookup in a table of the 4,096 pairs, half the work of one
 * lookup per character. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/base64.h"

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

char *wmap_base64(const unsigned char *data, size_t len)
{
	char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;
	if (!out)
		return NULL;
	pthread_once(&pairs_once, make_pairs);
	size_t i = 0;
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
	*o = '\0';
	return out;
}
