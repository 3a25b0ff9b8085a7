/* Kubernetes quantities, as a table of (text, milli) cases. */
#include <criterion/criterion.h>

#include "wmap/quantity.h"
#include "wmap/workload.h"

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
	/* a binary suffix is one shift: at the 128-bit limit and past it, and the largest fit */
	cr_expect_eq(wmap_quantity_parse_milli(&v, "1329227995784915872903807060280344576Ei", &err),
		     WMAP_ELIMIT);
	cr_expect_str_eq(err.message, "quantity \"1329227995784915872903807060280344576Ei\" is too large");
	cr_expect_eq(wmap_quantity_parse_milli(&v, "8Ei", &err), WMAP_ELIMIT);
	cr_assert_eq(wmap_quantity_parse_milli(&v, "8191Ti", &err), 0, "%s", err.message);
	cr_expect_eq(v, 8191LL * (1LL << 40) * 1000);
}

/* The usual forms (digits and a suffix) are read by a short way and everything else by the
 * general one: at the short way's edges both must give the same value, family and errors. */
Test(quantity, short_and_general_ways_agree_at_the_edges)
{
	static const struct {
		const char *text;
		int rc;
		int64_t milli;
		wmap_quantity_family fam;
	} cases[] = {
		{"999999999999999", 0, 999999999999999000LL, WMAP_QUANTITY_DECIMAL_SI},   /* 15 digits */
		{"9223372036854775", 0, 9223372036854775000LL, WMAP_QUANTITY_DECIMAL_SI}, /* 16: general */
		{"99999999999999999", WMAP_ELIMIT, 0, 0},
		{"9223372036854775807m", 0, INT64_MAX, WMAP_QUANTITY_DECIMAL_SI},
		{"922337203685477k", WMAP_ELIMIT, 0, 0}, /* the short way's product overflows */
		{"9P", 0, 9000000000000000000LL, WMAP_QUANTITY_DECIMAL_SI},
		{"10P", WMAP_ELIMIT, 0, 0},
		{"1E", WMAP_ELIMIT, 0, 0}, /* 10^21 thousandths: E is left to the general way */
		{"7Pi", 0, 7881299347898368000LL, WMAP_QUANTITY_BINARY_SI},
		{"9Pi", WMAP_ELIMIT, 0, 0},
		{"1Ei", WMAP_ELIMIT, 0, 0},
		{"0007Ki", 0, 7168000, WMAP_QUANTITY_BINARY_SI},
		{"2G", 0, 2000000000000LL, WMAP_QUANTITY_DECIMAL_SI},
		{"3T", 0, 3000000000000000LL, WMAP_QUANTITY_DECIMAL_SI},
		{"5e2", 0, 500000, WMAP_QUANTITY_DECIMAL_EXPONENT},
		{"1mi", WMAP_EINVAL, 0, 0}, {"1K", WMAP_EINVAL, 0, 0}, {"1Gib", WMAP_EINVAL, 0, 0},
		{"1mm", WMAP_EINVAL, 0, 0}, {"1i", WMAP_EINVAL, 0, 0}, {"1 ", WMAP_EINVAL, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t v = -1;
		wmap_quantity_family fam = (wmap_quantity_family)-1;
		wmap_error err = {0};
		int rc = wmap_quantity_parse_family(&v, &fam, cases[i].text, &err);
		cr_expect_eq(rc, cases[i].rc, "%s: rc %d, want %d (%s)", cases[i].text, rc, cases[i].rc,
			     err.message);
		if (rc == 0 && cases[i].rc == 0) {
			cr_expect_eq(v, cases[i].milli, "%s: got %lld", cases[i].text, (long long)v);
			cr_expect_eq(fam, cases[i].fam, "%s: family %d", cases[i].text, (int)fam);
		}
	}
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
}

/* What kubectl prints for a quantity written as text (resource.Quantity's String(): the
 * suffix family is kept, and the largest suffix that leaves an exact integer is used). */
static const struct {
	const char *text, *printed;
} canonical[] = {
	{"144G", "144G"}, {"144000M", "144G"}, {"16Gi", "16Gi"}, {"16384Mi", "16Gi"},
	{"1536Mi", "1536Mi"}, {"1.5Gi", "1536Mi"}, {"1.5G", "1500M"}, {"0.5Gi", "512Mi"},
	{"140625000Ki", "140625000Ki"}, {"1025Ki", "1025Ki"}, {"1000Ki", "1000Ki"},
	{"1000", "1k"}, {"1024", "1024"}, {"2000000", "2M"}, {"12345", "12345"},
	{"0.5Ki", "512"} /* binary under 1024 prints as decimal */, {"1000Mi", "1000Mi"},
	{"1e9", "1e9"}, {"1.5e9", "1500e6"}, {"15E2", "1500"}, {"0", "0"}, {"0Gi", "0"},
	{"1Pi", "1Pi"}, {"2048Ti", "2Pi"}, {"7P", "7P"}, {"100Mi", "100Mi"}, {"70M", "70M"},
};

Test(quantity, prints_memory_as_kubectl_does)
{
	for (size_t i = 0; i < sizeof(canonical) / sizeof(canonical[0]); i++) {
		int64_t milli = 0;
		wmap_quantity_family fam;
		wmap_error err = {0};
		char buf[32];
		cr_assert_eq(wmap_quantity_parse_family(&milli, &fam, canonical[i].text, &err), 0, "%s: %s",
			     canonical[i].text, err.message);
		wmap_quantity_format_bytes(buf, sizeof(buf), milli / 1000, fam);
		cr_expect_str_eq(buf, canonical[i].printed, "%s printed as %s, want %s", canonical[i].text,
				 buf, canonical[i].printed);
	}
}

Test(quantity, a_sum_keeps_the_family_of_its_first_term)
{
	/* Two containers: 1Gi + 500M is binary, not an exact Ki multiple: printed whole. The
	 * pod's 144G reads as 144G, not 140625000Ki. */
	const char *spec_text =
		"{\"containers\": [{\"resources\": {\"requests\": {\"memory\": \"1Gi\"}}},"
		"{\"resources\": {\"requests\": {\"memory\": \"500M\"}}}]}";
	json_t *spec = json_loads(spec_text, 0, NULL);
	wmap_resources r;
	char buf[32];
	cr_assert_not_null(spec);
	cr_assert_eq(wmap_pod_resources(&r, spec, "/spec", NULL), 0);
	wmap_quantity_format_bytes(buf, sizeof(buf), r.memory, r.memory_family);
	cr_expect_str_eq(buf, "1573741824");
	json_decref(spec);

	spec = json_loads("{\"containers\": [{\"resources\": {\"limits\": {\"memory\": \"144G\"}}},"
			  "{\"resources\": {\"requests\": {\"memory\": \"0\"}}}]}", 0, NULL);
	cr_assert_not_null(spec);
	cr_assert_eq(wmap_pod_resources(&r, spec, "/spec", NULL), 0);
	wmap_quantity_format_bytes(buf, sizeof(buf), r.memory, r.memory_family);
	cr_expect_str_eq(buf, "144G");
	json_decref(spec);
}

/* A YAML number in a quantity: the shortest text that reads back equal, as kubectl sends it. */
Test(quantity, json_numbers_read_as_written)
{
	static const struct {
		double v;
		const char *text;
		long long milli;
	} rows[] = {
		{ 0.1, "0.1", 100 }, { 0.3, "0.3", 300 }, { 2.5, "2.5", 2500 }, { 1e-3, "0.001", 1 },
		{ 1.5e9, "1500000000", 1500000000000LL }, { 0.123456789, "0.123456789", 124 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[32];
		int64_t milli = 0;
		wmap_quantity_format_number(buf, sizeof(buf), rows[i].v);
		cr_expect_str_eq(buf, rows[i].text);
		cr_assert_eq(wmap_quantity_parse_milli(&milli, buf, NULL), 0);
		cr_expect_eq(milli, rows[i].milli, "%s: %lld", buf, (long long)milli);
	}
}
