/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The result lines every C test program prints (tests/host, guest/tests,
 * guest/lib/check), which the payload runners, the judges and the
 * summaries read:
 *
 *   PASS: name
 *   FAIL: name (why)
 *   SKIP: name (why)          not counted: the program cannot run it here
 *     note                    two spaces: a figure or a diagnosis
 *   N passed, N failed        last; the program's exit status is 1 on a
 *                             failure (t_done)
 *
 * The shell side of the same protocol is rig_check and rig_summary in
 * tests/rig/protocol.sh. Plain libc: the guest programs link it
 * statically.
 */
#ifndef TESTS_COMMON_RESULT_H
#define TESTS_COMMON_RESULT_H

#include <stdbool.h>

/* the checks so far; updated by the calls below */
extern int t_passed, t_failed;

void t_pass(const char *name);
void t_fail(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void t_skip(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* PASS if @ok, else FAIL with the formatted reason; returns @ok */
bool t_check(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* an indented line that is no check */
void t_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* prints "N passed, N failed"; returns the program's exit status */
int t_done(void);

#endif /* TESTS_COMMON_RESULT_H */
