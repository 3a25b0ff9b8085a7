/* wmap: Kubernetes resource quantities, parsed exactly (see include/wmap/quantity.h).
 *
 * Grammar (k8s.io/apimachinery resource.Quantity): a signed decimal number, then an
 * optional suffix: a binary one (Ki Mi Gi Ti Pi Ei), a decimal one (m k M G T P E) or an
 * exponent (e3, E-2). Arithmetic is done on 128-bit integers so "0.1" is exactly 100m. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/quantity.h"

typedef __int128 i128;

static const i128 LIMIT = ((i128)1) << 120;

static int mul(i128 *v, i128 by)
{
	if (by != 0 && *v > LIMIT / by)
		return -1;
	*v *= by;
	return 0;
}

int wmap_quantity_parse_milli(int64_t *out, const char *s, wmap_error *err)
{
	return wmap_quantity_parse_family(out, NULL, s, err);
}

/* The usual quantity ("500m", "4", "16Gi", "2k") at once: at most 15 digits (so that a
 * count of thousandths fits before the suffix), then nothing, "m", one decimal letter or a
 * binary suffix. 1 when it applies and the value fits in 64 bits; 0 sends s the general way,
 * which gives the very same value, or the error. */
static int parse_plain(int64_t *out, wmap_quantity_family *family, const char *s)
{
	/* thousandths per unit of each suffix letter; 0 where the general way must judge */
	static const int64_t dec[] = { ['k'] = 1000000LL, ['M'] = 1000000000LL, ['G'] = 1000000000000LL, ['T'] = 1000000000000000LL, ['P'] = 1000000000000000000LL };
	static const int64_t bin[] = { ['K'] = 1000LL << 10, ['M'] = 1000LL << 20, ['G'] = 1000LL << 30, ['T'] = 1000LL << 40, ['P'] = 1000LL << 50 };
	const char *p = s;
	int64_t n = 0, by;
	wmap_quantity_family fam = WMAP_QUANTITY_DECIMAL_SI;

	while (*p >= '0' && *p <= '9' && p - s < 15)
		n = n * 10 + (*p++ - '0');
	if (p == s)
		return 0;
	unsigned char u = (unsigned char)*p;
	if (u == '\0') {
		by = 1000;
	} else if (u == 'm' && p[1] == '\0') {
		by = 1;
	} else if (u < sizeof(dec) / sizeof(dec[0]) && p[1] == '\0' && dec[u]) {
		by = dec[u];
	} else if (u < sizeof(bin) / sizeof(bin[0]) && p[1] == 'i' && p[2] == '\0' && bin[u]) {
		by = bin[u];
		fam = WMAP_QUANTITY_BINARY_SI;
	} else {
		return 0;
	}
	int64_t v;
	if (__builtin_mul_overflow(n, by, &v))
		return 0;
	*out = v;
	if (family)
		*family = fam;
	return 1;
}

int wmap_quantity_parse_family(int64_t *out, wmap_quantity_family *family, const char *s,
			       wmap_error *err)
{
	if (s && parse_plain(out, family, s))
		return 0;
	const char *p = s;
	wmap_quantity_family fam = WMAP_QUANTITY_DECIMAL_SI;
	int neg = 0, digits = 0, sig = 0, frac = 0, exp10 = 0, exp2 = 0;
	i128 num = 0, den = 1;

	if (!s || !*s)
		return wmap_error_set(err, WMAP_EINVAL, "empty quantity");
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	/* sig counts significant digits (leading zeros are not): past 30 they only scale. */
	for (; *p >= '0' && *p <= '9'; p++, digits++)
		if (sig < 30) {
			num = num * 10 + (*p - '0');
			sig += num != 0;
		} else {
			exp10++;
		}
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++, digits++)
			if (sig < 30) {
				num = num * 10 + (*p - '0');
				frac++;
				sig += num != 0;
			}
	}
	if (digits == 0)
		return wmap_error_set(err, WMAP_EINVAL, "quantity \"%s\" has no number", s);
	if (*p == '\0') {
	} else if (p[1] == 'i' && p[2] == '\0' && strchr("KMGTPE", *p)) {
		exp2 = 10 * (int)(strchr("KMGTPE", *p) - "KMGTPE" + 1);
		fam = WMAP_QUANTITY_BINARY_SI;
	} else if ((*p == 'e' || *p == 'E') && p[1]) {
		const char *q = p + 1;
		int eneg = 0, e = 0, n = 0;
		if (*q == '+' || *q == '-')
			eneg = *q++ == '-';
		for (; *q >= '0' && *q <= '9'; q++, n++)
			if (e < 1000)
				e = e * 10 + (*q - '0');
		if (n == 0 || *q)
			return wmap_error_set(err, WMAP_EINVAL, "quantity \"%s\" has a malformed exponent", s);
		exp10 += eneg ? -e : e;
		fam = WMAP_QUANTITY_DECIMAL_EXPONENT;
	} else if (p[1] == '\0' && strchr("mkMGTPE", *p)) {
		static const int e[] = { -3, 3, 6, 9, 12, 15, 18 };
		exp10 += e[strchr("mkMGTPE", *p) - "mkMGTPE"];
	} else {
		return wmap_error_set(err, WMAP_EINVAL, "quantity \"%s\" has an unknown suffix \"%s\"", s, p);
	}
	exp10 += 3 - frac; /* milli, and the fraction digits */
	if (exp10 > 40)
		goto too_big;
	for (; exp10 > 0; exp10--)
		if (mul(&num, 10))
			goto too_big;
	for (; exp10 < 0 && den < LIMIT; exp10++)
		den *= 10;
	/* Doubling exp2 times (at most 60) passes the limit exactly when num > LIMIT >> exp2:
	 * one shift, not a loop of checked doublings. */
	if (exp2 > 0) {
		if (num > (LIMIT >> exp2))
			goto too_big;
		num <<= exp2;
	}
	/* Rounded up, as MilliValue; a whole number of thousandths needs no 128-bit division. */
	i128 v = num;
	if (exp10 < 0)
		v = num > 0 ? 1 : 0;
	else if (den != 1)
		v = (num + den - 1) / den;
	if (v > INT64_MAX)
		goto too_big;
	*out = neg ? -(int64_t)v : (int64_t)v;
	if (family)
		*family = fam;
	return 0;
too_big:
	return wmap_error_set(err, WMAP_ELIMIT, "quantity \"%s\" is too large", s);
}

int wmap_quantity_parse(int64_t *out, const char *s, wmap_error *err)
{
	int64_t milli;
	int rc = wmap_quantity_parse_milli(&milli, s, err);
	if (rc)
		return rc;
	*out = milli >= 0 ? milli / 1000 + (milli % 1000 != 0) : milli / 1000;
	return 0;
}

void wmap_quantity_format_cpu(char *buf, size_t len, int64_t milli)
{
	if (milli % 1000 == 0)
		snprintf(buf, len, "%lld", (long long)(milli / 1000));
	else
		snprintf(buf, len, "%lldm", (long long)milli);
}

/* resource.Quantity's CanonicalizeBytes for a whole number: binary values of 1024 and more
 * lose factors of 1024 into a binary suffix; everything else loses factors of 10, then takes
 * back enough of them that the exponent is a multiple of 3, and names that exponent. */
void wmap_quantity_format_bytes(char *buf, size_t len, int64_t v, wmap_quantity_family family)
{
	static const char *const bin[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	static const char *const dec[] = { "", "k", "M", "G", "T", "P", "E" };
	int e = 0;

	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	if (family == WMAP_QUANTITY_BINARY_SI && (v >= 1024 || v <= -1024)) {
		for (; e < 6 && v % 1024 == 0; e++)
			v /= 1024;
		snprintf(buf, len, "%lld%s", (long long)v, bin[e]);
		return;
	}
	for (; v % 10 == 0; e++)
		v /= 10;
	for (; e % 3 != 0; e--)
		v *= 10; /* undoes a division above: cannot overflow */
	if (family == WMAP_QUANTITY_DECIMAL_EXPONENT && e != 0)
		snprintf(buf, len, "%llde%d", (long long)v, e);
	else
		snprintf(buf, len, "%lld%s", (long long)v, dec[e / 3]);
}

void wmap_quantity_format_number(char *buf, size_t len, double v)
{
	if (v > -1e18 && v < 1e18 && v == (double)(long long)v) {
		snprintf(buf, len, "%lld", (long long)v); /* 1.5e9 is 1500000000 */
		return;
	}
	for (int prec = 1; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}
