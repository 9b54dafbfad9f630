// SPDX-License-Identifier: GPL-2.0
/*
 * The result lines of the C test programs: see result.h.
 */
#include <stdarg.h>
#include <stdio.h>

#include "result.h"

int t_passed, t_failed;

void t_pass(const char *name)
{
	printf("PASS: %s\n", name);
	fflush(stdout);
	t_passed++;
}

static void vreport(const char *tag, const char *name, const char *fmt,
		    va_list ap)
{
	printf("%s: %s (", tag, name);
	vprintf(fmt, ap);
	printf(")\n");
	fflush(stdout);
}

void t_fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("FAIL", name, fmt, ap);
	va_end(ap);
	t_failed++;
}

void t_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("SKIP", name, fmt, ap);
	va_end(ap);
}

bool t_check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		t_pass(name);
		return true;
	}
	va_start(ap, fmt);
	vreport("FAIL", name, fmt, ap);
	va_end(ap);
	t_failed++;
	return false;
}

void t_note(const char *fmt, ...)
{
	va_list ap;

	printf("  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int t_done(void)
{
	printf("%d passed, %d failed\n", t_passed, t_failed);
	fflush(stdout);
	return t_failed ? 1 : 0;
}
