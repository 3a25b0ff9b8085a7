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

/* The encoder wmap_base64_encode uses on CPUs without SSSE3 (tests run it everywhere). */
size_t wmap__base64_encode_pairs(char *out, const unsigned char *data, size_t len);

#endif
