/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A call made in a child process, its result brought back through a
 * pipe: for the checks whose subject must be another process (an
 * unprivileged user, a task that execs or exits). Shared by the host
 * tests (tests/host) and the guest tests (guest/tests).
 */
#ifndef TESTS_COMMON_CHILD_H
#define TESTS_COMMON_CHILD_H

#include <stddef.h>

/*
 * @fn(@arg, @res) in a child process. If it returns 0, the child's @len
 * bytes of @res come back into @res through a pipe (@res stays as the
 * caller left it if none came); the child exits with what @fn returned
 * (3 if the bytes did not go). Returns the child's wait status, or
 * -errno if no child ran.
 */
int t_child(int (*fn)(void *arg, void *res), void *arg, void *res,
	    size_t len);

#endif /* TESTS_COMMON_CHILD_H */
