/* wmap_buf: the capped growable buffer. Appends up to the cap succeed whatever the sizes,
 * one byte more fails with WMAP_ELIMIT, and a failed buffer stays failed and empty. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/buf.h"
#include "wmap/error.h"

Test(buf, take_of_an_empty_buffer_is_an_empty_string)
{
	wmap_buf b = WMAP_BUF_INIT(16, 0);
	size_t n = 99;
	char *s = wmap_buf_take(&b, &n);

	cr_assert_not_null(s);
	cr_expect_str_eq(s, "");
	cr_expect_eq(n, 0);
	free(s);
	cr_expect_str_eq(wmap_buf_cstr(&b), "");
	wmap_buf_free(&b);
}

/* Pieces of several sizes against a cap of 10: exactly the cap fits, one byte more fails. */
static const struct {
	const char *pieces[4];
	int rc;
	const char *text;
} cap_cases[] = {
	{ { "0123456789" }, 0, "0123456789" },
	{ { "01234", "56789" }, 0, "0123456789" },
	{ { "0123456789", "" }, 0, "0123456789" },
	{ { "0123456789a" }, WMAP_ELIMIT, NULL },
	{ { "01234", "56789", "a" }, WMAP_ELIMIT, NULL },
	{ { "", "", "x" }, 0, "x" },
};

Test(buf, holds_up_to_its_cap_and_no_more)
{
	for (size_t i = 0; i < sizeof(cap_cases) / sizeof(cap_cases[0]); i++) {
		/* first = 1: every append grows, so the cap is met on the slow path too */
		for (size_t first = 1; first <= 64; first *= 4) {
			wmap_buf b = WMAP_BUF_INIT(10, first);
			int rc = 0;

			for (size_t j = 0; j < 4 && cap_cases[i].pieces[j]; j++)
				if ((rc = wmap_buf_adds(&b, cap_cases[i].pieces[j])) != 0)
					break;
			cr_expect_eq(rc, cap_cases[i].rc, "case %zu first %zu: rc %d", i, first, rc);
			cr_expect_leq(b.alloc, 11, "case %zu: never more than cap + 1 allocated", i);
			if (cap_cases[i].text)
				cr_expect_str_eq(wmap_buf_cstr(&b), cap_cases[i].text, "case %zu", i);
			else
				cr_expect_null(wmap_buf_cstr(&b), "case %zu: failed text", i);
			wmap_buf_free(&b);
		}
	}
}

Test(buf, a_failed_buffer_refuses_later_appends_until_freed)
{
	wmap_buf b = WMAP_BUF_INIT(4, 0);

	cr_assert_eq(wmap_buf_adds(&b, "abc"), 0);
	cr_expect_eq(wmap_buf_adds(&b, "de"), WMAP_ELIMIT);
	cr_expect_null(b.data, "the text is dropped, not cut");
	cr_expect_eq(wmap_buf_addc(&b, 'x'), WMAP_ELIMIT, "the error sticks");
	cr_expect_eq(wmap_buf_addf(&b, "%d", 1), WMAP_ELIMIT);
	cr_expect_null(wmap_buf_take(&b, NULL));
	cr_expect_eq(b.error, 0, "take on failure frees and resets");
	cr_expect_eq(wmap_buf_adds(&b, "ok"), 0);
	cr_expect_str_eq(wmap_buf_cstr(&b), "ok");
	wmap_buf_fail(&b, WMAP_EINVAL);
	cr_expect_eq(wmap_buf_adds(&b, "y"), WMAP_EINVAL, "a failure set by the caller sticks too");
	wmap_buf_free(&b);
	wmap_buf_free(NULL);
}

Test(buf, formats_across_growth)
{
	wmap_buf b = WMAP_BUF_INIT(1 << 20, 8);
	char want[4096];
	size_t n = 0;

	for (int i = 0; i < 300; i++) {
		cr_assert_eq(wmap_buf_addf(&b, "%d,", i), 0);
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%d,", i);
	}
	cr_assert_eq(wmap_buf_addc(&b, '.'), 0);
	want[n++] = '.';
	want[n] = '\0';
	size_t len = 0;
	char *s = wmap_buf_take(&b, &len);
	cr_assert_not_null(s);
	cr_expect_eq(len, n);
	cr_expect_str_eq(s, want);
	free(s);
	cr_expect_eq(b.len, 0, "take leaves the buffer empty");
	wmap_buf_free(&b);
}

Test(buf, grow_size_says_what_an_append_would_allocate)
{
	wmap_buf b = WMAP_BUF_INIT(100, 16);

	cr_expect_eq(wmap_buf_grow_size(&b, 5), 16);
	cr_expect_eq(wmap_buf_grow_size(&b, 16), 32, "one byte stays for the NUL");
	cr_expect_eq(wmap_buf_grow_size(&b, 100), 101, "clamped to cap + 1");
	cr_expect_eq(wmap_buf_grow_size(&b, 101), 0, "past the cap");
	cr_assert_eq(wmap_buf_adds(&b, "hello"), 0);
	cr_expect_eq(wmap_buf_grow_size(&b, 3), 16, "fits: the current allocation");
	cr_expect_eq(wmap_buf_grow_size(&b, 96), 0);
	wmap_buf_clear(&b);
	cr_expect_eq(b.len, 0);
	cr_expect_eq(b.alloc, 16, "clear keeps the memory");
	wmap_buf_free(&b);
}
