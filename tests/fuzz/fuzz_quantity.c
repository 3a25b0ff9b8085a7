/* libFuzzer target: Kubernetes quantities (src/quantity.c). Properties, beyond no crash or
 * UB (signed overflow is UB and UBSan aborts on it): a parsed value prints and parses back
 * to itself (CPU as millicores, memory as bytes), whole units are the milli value rounded
 * up, a leading zero changes nothing, and the formatters take any 64-bit value. */
#include <inttypes.h>
#include "fuzz.h"
#include "wmap/quantity.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return -1;
	char *s = fz_cstr(data, size), buf[64];
	int64_t milli, units, back;
	wmap_quantity_family fam = WMAP_QUANTITY_DECIMAL_SI;
	wmap_error err;

	int rc = wmap_quantity_parse_family(&milli, &fam, s, &err);
	int rc2 = wmap_quantity_parse(&units, s, &err);
	FZ_CHECK((rc == 0) == (rc2 == 0), "parse and parse_milli disagree on \"%s\"", s);
	if (rc == 0) {
		int64_t up = milli >= 0 ? milli / 1000 + (milli % 1000 != 0) : milli / 1000;
		FZ_CHECK(units == up, "\"%s\": %" PRId64 " units from %" PRId64 " milli", s, units,
			 milli);
		wmap_quantity_format_cpu(buf, sizeof(buf), milli);
		FZ_CHECK(wmap_quantity_parse_milli(&back, buf, &err) == 0 && back == milli,
			 "cpu \"%s\" -> %" PRId64 "m -> \"%s\" -> %" PRId64, s, milli, buf, back);
		/* Printed in the family it was written in, it reads back the same, when the
		 * whole units are in the parser's range: "9223372036854775.807" is the largest
		 * milli value, and its units rounded up (9223372036854776) are not. */
		wmap_quantity_format_bytes(buf, sizeof(buf), units, fam);
		if (units <= INT64_MAX / 1000)
			FZ_CHECK(wmap_quantity_parse(&back, buf, &err) == 0 && back == units,
				 "bytes \"%s\" -> %" PRId64 " -> \"%s\" -> %" PRId64, s, units, buf,
				 back);
		else
			FZ_CHECK(wmap_quantity_parse(&back, buf, &err) == WMAP_ELIMIT,
				 "bytes \"%s\" -> %" PRId64 " -> \"%s\" read back", s, units, buf);
	} else {
		FZ_CHECK(rc == WMAP_EINVAL || rc == WMAP_ELIMIT, "rc %d", rc);
		FZ_CHECK(err.message[0], "no message");
	}
	/* A leading zero never changes a number ("08" is 8, "0.5" is "00.5"). */
	if (size && data[0] >= '0' && data[0] <= '9') {
		char *z = malloc(size + 2);
		z[0] = '0';
		memcpy(z + 1, s, size + 1);
		int64_t m2 = 0;
		int rz = wmap_quantity_parse_milli(&m2, z, &err);
		FZ_CHECK(rz == rc && (rc != 0 || m2 == milli), "\"%s\" -> %" PRId64 " but \"%s\" -> %" PRId64,
			 s, milli, z, m2);
		free(z);
	}
	if (size >= 8) {
		int64_t raw;
		memcpy(&raw, data, sizeof(raw));
		wmap_quantity_format_cpu(buf, sizeof(buf), raw);
		for (int f = WMAP_QUANTITY_DECIMAL_SI; f <= WMAP_QUANTITY_DECIMAL_EXPONENT; f++)
			wmap_quantity_format_bytes(buf, sizeof(buf), raw, (wmap_quantity_family)f);
	}
	free(s);
	return 0;
}
