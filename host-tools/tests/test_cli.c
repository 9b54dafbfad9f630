// SPDX-License-Identifier: GPL-2.0
/*
 * cli/cli.c: one description gives the parser its options (letters,
 * long names, aliases, long-only keys, arguments), --help its lines (none
 * past 79 columns) and the man page its roff (text escaped: a leading dot
 * is no request, a backslash no escape, every - a minus).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/cli.h"

enum { OPT_FLAG = CLI_LONG_ONLY };

static const struct cli_option options[] = {
	CLI_OPT("vm", 'v', "VM", "one VM in detail"),
	CLI_OPT("web.listen-address", 'l', "ADDR", "where to listen, with a "
		"help text long enough to be filled over more than one line "
		"of a terminal's 79 columns"),
	CLI_ALIAS("listen", 'l', "ADDR"),
	CLI_OPT("flag", OPT_FLAG, NULL, "a long option alone"),
	CLI_HELP_OPT,
	CLI_NOTE(".leading dot, a back\\slash and a-dash"),
	CLI_END
};

static const struct cli_exit exits[] = {
	{ 0, "success" },
	{ 1, "bad arguments" },
	{ 0, NULL }
};

static const struct cli_program prog = {
	.name = "prog",
	.man_section = 8,
	.summary = "a program to test",
	.synopsis = "[OPTION]... OPERAND",
	.description = "What it does.\n\n  literal -x line",
	.options = options,
	.exits = exits,
	.files = "= /dev/null\nnothing",
	.see_also = "pfmon(1)",
};

static void test_parse(void **state)
{
	char *argv[] = { "prog", "-v", "one", "--listen=a:1",
			 "--web.listen-address", "b:2", "--flag", "operand",
			 NULL };
	int argc = 8;

	(void)state;
	optind = 0;
	assert_int_equal(cli_getopt(&prog, argc, argv), 'v');
	assert_string_equal(optarg, "one");
	assert_int_equal(cli_getopt(&prog, argc, argv), 'l');
	assert_string_equal(optarg, "a:1");
	assert_int_equal(cli_getopt(&prog, argc, argv), 'l');
	assert_string_equal(optarg, "b:2");
	assert_int_equal(cli_getopt(&prog, argc, argv), OPT_FLAG);
	assert_int_equal(cli_getopt(&prog, argc, argv), -1);
	assert_string_equal(argv[optind], "operand");
}

static void test_parse_refuses(void **state)
{
	char *argv[] = { "prog", "-f", NULL };	/* "flag" has no letter */
	char *argv2[] = { "prog", "--vm", NULL };	/* needs its VM */

	(void)state;
	optind = 0;
	opterr = 0;
	assert_int_equal(cli_getopt(&prog, 2, argv), '?');
	optind = 0;
	assert_int_equal(cli_getopt(&prog, 2, argv2), '?');
	opterr = 1;
}

static char *captured(void (*print)(const struct cli_program *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	print(&prog, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_help(void **state)
{
	char *text = captured(cli_print_help), *line, *save = NULL;

	(void)state;
	assert_non_null(strstr(text, "Usage: prog [OPTION]... OPERAND\n"));
	assert_non_null(strstr(text, "  -l, --web.listen-address, "
				     "--listen=ADDR\n"));
	assert_non_null(strstr(text, "      --flag "));
	assert_non_null(strstr(text, "\n  literal -x line\n"));
	assert_non_null(strstr(text, "    1  bad arguments\n"));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		assert_true(strlen(line) <= 79);
	free(text);
}

static void test_man(void **state)
{
	char *roff = captured(cli_print_man);

	(void)state;
	assert_non_null(strstr(roff, ".TH PROG 8 "));
	assert_non_null(strstr(roff, "\n.SH NAME\nprog \\- a program to test\n"));
	assert_non_null(strstr(roff, "\\fB\\-l\\fR, \\fB\\-\\-web.listen\\-address"
				     "\\fR, \\fB\\-\\-listen\\fR=\\fIADDR\\fR\n"));
	assert_non_null(strstr(roff, "\n\\&.leading dot, a back\\eslash and "
				     "a\\-dash\n"));
	assert_non_null(strstr(roff, "\n.nf\n\\&literal \\-x line\n.fi\n"));
	assert_non_null(strstr(roff, "\n.SH EXIT STATUS\n.TP\n.B 0\nsuccess\n"));
	assert_non_null(strstr(roff, "\n.SH FILES\n.TP\n\\fB/dev/null\\fR\n"));
	/* --man is no option of the table: neither help nor page names it */
	assert_null(strstr(roff, "\\-\\-man"));
	free(roff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_man),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
