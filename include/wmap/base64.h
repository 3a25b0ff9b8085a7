/* wmap: base64, a utility (the webhook's patches and its TLS tooling use it). */
#ifndef WMAP_BASE64_H
#define WMAP_BASE64_H

#include <stddef.h>

/* The characters of the standard base64 of len bytes (padding included). */
#define WMAP_BASE64_LEN(len) (((len) + 2) / 3 * 4)

/* Standard base64 (padded) of data, a new string owned by the caller; NULL on ENOMEM. */
char *wmap_base64(const unsigned char *data, size_t len);

/* The same into out, which holds WMAP_BASE64_LEN(len) bytes (no NUL is written); returns
 * that length. */
size_t wmap_base64_encode(char *out, const unsigned char *data, size_t len);

/* For tests, which run every encoder the CPU has: the scalar one (CPUs without SSSE3), and
 * wmap_base64_encode with its choice capped at isa (0 scalar, 1 SSSE3, 2 AVX2). */
size_t wmap__base64_encode_pairs(char *out, const unsigned char *data, size_t len);
size_t wmap__base64_encode_isa(int isa, char *out, const unsigned char *data, size_t len);

#endif
