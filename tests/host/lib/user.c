// SPDX-License-Identifier: GPL-2.0
/* hostlib, the unprivileged user the tests drop to (hostlib.h, "users"). */
#include <errno.h>
#include <grp.h>
#include <unistd.h>

#include "hostlib.h"

int hl_drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setgid(HL_NOBODY) || setuid(HL_NOBODY))
		return -errno;
	return 0;
}
