/* wmap: Kubernetes resource quantities ("250m", "1.5Gi", "4", "1e3"), parsed exactly. */
#ifndef WMAP_QUANTITY_H
#define WMAP_QUANTITY_H

#include <stdint.h>
#include <stddef.h>
#include "wmap/error.h"

/* Parses s into thousandths of a unit (milli), rounding up as Kubernetes' MilliValue does.
 * WMAP_EINVAL for a malformed quantity, WMAP_ELIMIT when it does not fit in 64 bits. */
int wmap_quantity_parse_milli(int64_t *out, const char *s, wmap_error *err);

/* Whole units, rounded up (bytes for memory, devices for GPUs). */
int wmap_quantity_parse(int64_t *out, const char *s, wmap_error *err);

/* CPU millicores as Kubernetes prints them: "4", "250m". */
void wmap_quantity_format_cpu(char *buf, size_t len, int64_t milli);

/* Bytes with a binary suffix when exact ("16Gi"), else a decimal one ("70M"), else plain. */
void wmap_quantity_format_bytes(char *buf, size_t len, int64_t bytes);

#endif
