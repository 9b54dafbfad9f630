// SPDX-License-Identifier: GPL-2.0
/*
 * prom_put_label_value: the escapes of Prometheus's text format, and
 * invalid UTF-8 written as U+FFFD, so that one VM's name cannot make
 * Prometheus reject the host's scrape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "prom_text.h"

#define FFFD	"\xef\xbf\xbd"

/* the label value's text for @s */
static char *value_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	prom_put_label_value(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect_label(const char *in, const char *want)
{
	char *got = value_of(in);

	assert_string_equal(got, want);
	free(got);
}

static void test_plain_ascii_unchanged(void **state)
{
	(void)state;
	expect_label("vm-a", "vm-a");
	expect_label("", "");
	expect_label("tab\there {x=1}", "tab\there {x=1}");
}

static void test_escapes(void **state)
{
	(void)state;
	expect_label("a\\b", "a\\\\b");
	expect_label("say \"hi\"", "say \\\"hi\\\"");
	expect_label("two\nlines", "two\\nlines");
	expect_label("\\\"\n", "\\\\\\\"\\n");
}

static void test_valid_utf8_unchanged(void **state)
{
	(void)state;
	expect_label("caf\xc3\xa9", "caf\xc3\xa9");		/* U+00E9 */
	expect_label("\xe2\x82\xac", "\xe2\x82\xac");		/* U+20AC */
	expect_label("\xed\x9f\xbf", "\xed\x9f\xbf");		/* U+D7FF */
	expect_label("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");	/* U+1F600 */
	expect_label("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");	/* U+10FFFF */
}

/* what set_identity lets through: the byte the review used */
static void test_ff_byte_replaced(void **state)
{
	(void)state;
	expect_label("vm\xff", "vm" FFFD);
	expect_label("\xff\xfe", FFFD FFFD);
}

static void test_invalid_sequences_replaced(void **state)
{
	(void)state;
	/* a stray continuation byte */
	expect_label("a\x80z", "a" FFFD "z");
	/* overlong forms of '/' and of U+0000 */
	expect_label("\xc0\xaf", FFFD FFFD);
	expect_label("\xe0\x80\xaf", FFFD FFFD FFFD);
	expect_label("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD);
	/* a surrogate, U+D800 */
	expect_label("\xed\xa0\x80", FFFD FFFD FFFD);
	/* past U+10FFFF */
	expect_label("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
	expect_label("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
}

/* a name cut in the middle of a character (the module's name length) */
static void test_truncated_sequence_replaced(void **state)
{
	(void)state;
	expect_label("ab\xe2\x82", "ab" FFFD FFFD);
	expect_label("\xf0\x9f\x98", FFFD FFFD FFFD);
	/* the byte after a cut sequence is read as itself */
	expect_label("\xc3\"", FFFD "\\\"");
	expect_label("\xe2\x82\n", FFFD FFFD "\\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_ascii_unchanged),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_valid_utf8_unchanged),
		cmocka_unit_test(test_ff_byte_replaced),
		cmocka_unit_test(test_invalid_sequences_replaced),
		cmocka_unit_test(test_truncated_sequence_replaced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
