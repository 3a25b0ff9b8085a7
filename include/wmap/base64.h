/* wmap: base64, a utility (the webhook's patches and its TLS tooling use it). */
#ifndef WMAP_BASE64_H
#define WMAP_BASE64_H

#include <stddef.h>

/* Standard base64 (padded) of data, a new string owned by the caller; NULL on ENOMEM. */
char *wmap_base64(const unsigned char *data, size_t len);

#endif
