/* Kubernetes quantities, as a table of (text, milli) cases. */
#include <criterion/criterion.h>

#include "wmap/quantity.h"

static const struct {
	const char *text;
	int64_t milli;
} good[] = {
	{"1", 1000}, {"250m", 250}, {"0.5", 500}, {"0.1", 100}, {".5", 500}, {"1.", 1000},
	{"1k", 1000000}, {"1Ki", 1024000}, {"16Gi", 17179869184000LL}, {"1e3", 1000000},
	{"1E-3", 1}, {"1.5Gi", 1610612736000LL}, {"70M", 70000000000LL}, {"1m", 1},
	{"0.0001", 1} /* rounds up, as MilliValue */, {"+2", 2000}, {"0", 0}, {"100Mi", 104857600000LL},
};

static const char *const bad[] = {"", "abc", "1.2.3", "1Q", "Ki", "1 Gi", "1e", "1ee3", "--1", "1iK"};

Test(quantity, parses_every_form_exactly)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int64_t v = -1;
		wmap_error err = {0};
		cr_expect_eq(wmap_quantity_parse_milli(&v, good[i].text, &err), 0, "%s: %s", good[i].text,
			     err.message);
		cr_expect_eq(v, good[i].milli, "%s: got %lld, want %lld", good[i].text, (long long)v,
			     (long long)good[i].milli);
	}
}

Test(quantity, refuses_malformed_ones)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v;
		wmap_error err = {0};
		cr_expect_eq(wmap_quantity_parse_milli(&v, bad[i], &err), WMAP_EINVAL, "\"%s\" was accepted", bad[i]);
	}
}

Test(quantity, refuses_what_does_not_fit)
{
	int64_t v;
	wmap_error err = {0};
	cr_expect_eq(wmap_quantity_parse_milli(&v, "100Ei", &err), WMAP_ELIMIT);
	cr_expect_eq(wmap_quantity_parse_milli(&v, "1e400", &err), WMAP_ELIMIT);
}

Test(quantity, whole_units_round_up)
{
	int64_t v;
	cr_expect_eq(wmap_quantity_parse(&v, "1500m", NULL), 0);
	cr_expect_eq(v, 2);
	cr_expect_eq(wmap_quantity_parse(&v, "1Gi", NULL), 0);
	cr_expect_eq(v, 1073741824LL);
}

Test(quantity, formats_like_kubectl)
{
	char buf[32];
	wmap_quantity_format_cpu(buf, sizeof(buf), 4000);
	cr_expect_str_eq(buf, "4");
	wmap_quantity_format_cpu(buf, sizeof(buf), 250);
	cr_expect_str_eq(buf, "250m");
	wmap_quantity_format_bytes(buf, sizeof(buf), 16LL << 30);
	cr_expect_str_eq(buf, "16Gi");
	wmap_quantity_format_bytes(buf, sizeof(buf), 70000000);
	cr_expect_str_eq(buf, "70M");
	wmap_quantity_format_bytes(buf, sizeof(buf), 1234567);
	cr_expect_str_eq(buf, "1234567");
}
