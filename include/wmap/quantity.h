/* wmap: Kubernetes resource quantities ("250m", "1.5Gi", "4", "1e3"), parsed exactly. */
#ifndef WMAP_QUANTITY_H
#define WMAP_QUANTITY_H

#include <stdint.h>
#include <stddef.h>
#include "wmap/error.h"

/* The suffix family a quantity was written in. Kubernetes keeps it and prints a value in
 * it ("144G" stays decimal, "1536Mi" binary), so wmap keeps it too. */
typedef enum wmap_quantity_family {
	WMAP_QUANTITY_DECIMAL_SI = 0,  /* no suffix, or m k M G T P E (the default) */
	WMAP_QUANTITY_BINARY_SI,       /* Ki Mi Gi Ti Pi Ei */
	WMAP_QUANTITY_DECIMAL_EXPONENT /* 1e3, 5E-2 */
} wmap_quantity_family;

/* Parses s into thousandths of a unit (milli), rounding up as Kubernetes' MilliValue does.
 * WMAP_EINVAL for a malformed quantity, WMAP_ELIMIT when it does not fit in 64 bits. */
int wmap_quantity_parse_milli(int64_t *out, const char *s, wmap_error *err);

/* The same, and the suffix family of s in *family (which may be NULL). */
int wmap_quantity_parse_family(int64_t *out, wmap_quantity_family *family, const char *s,
			       wmap_error *err);

/* Whole units, rounded up (bytes for memory, devices for GPUs). */
int wmap_quantity_parse(int64_t *out, const char *s, wmap_error *err);

/* CPU millicores as Kubernetes prints them: "4", "250m". */
void wmap_quantity_format_cpu(char *buf, size_t len, int64_t milli);

/* A whole number of units (bytes) as Kubernetes' resource.Quantity prints it in family: the
 * largest suffix of the family that leaves an exact integer ("144G", "1536Mi", "1500e6",
 * "1025" for a binary value no Ki divides); a binary value under 1024 is printed as decimal
 * SI ("1k"), as Kubernetes does. Writes into buf (len bytes; 32 are always enough). */
void wmap_quantity_format_bytes(char *buf, size_t len, int64_t bytes, wmap_quantity_family family);

/* A JSON number that stands for a quantity (`cpu: 0.5` in YAML) as the text Kubernetes reads:
 * kubectl sends the number as written, so a double is written in the shortest form that
 * reads back equal ("0.1", never "0.10000000000000001", which would round up to 101m).
 * Writes into buf (len bytes; 32 are always enough). */
void wmap_quantity_format_number(char *buf, size_t len, double v);

#endif
