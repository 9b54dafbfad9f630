// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, statuses: errno names and the statuses of calls as the
 * checks' reasons print them (hostlib.h, "results").
 */
#include <errno.h>
#include <stdio.h>

#include "hostlib.h"


const char *hl_errname(int err)
{
	static const struct { int e; const char *n; } names[] = {
		{ 0, "0" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" },
		{ ESRCH, "ESRCH" }, { EINTR, "EINTR" }, { EIO, "EIO" },
		{ ENXIO, "ENXIO" }, { E2BIG, "E2BIG" }, { EBADF, "EBADF" },
		{ EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" }, { EMFILE, "EMFILE" }, { ENOTTY, "ENOTTY" },
		{ ENOSPC, "ENOSPC" }, { ERANGE, "ERANGE" }, { ENOSYS, "ENOSYS" },
		{ EPROTO, "EPROTO" }, { ENOBUFS, "ENOBUFS" },
		{ ENOTCONN, "ENOTCONN" }, { EOPNOTSUPP, "EOPNOTSUPP" },
	};
	static __thread char buf[24];
	unsigned int i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static const char *status_fmt(char *buf, size_t len, int status)
{
	if (!status)
		return "0";
	if (HL_IS_IOCTL_ERR(status))
		snprintf(buf, len, "ioctl:%s", hl_errname(-(status + 10000)));
	else
		snprintf(buf, len, "-%s", hl_errname(status));
	return buf;
}

const char *hl_status_str2(int status)
{
	static __thread char buf[40];

	return status_fmt(buf, sizeof(buf), status);
}

const char *hl_status_str(int status)
{
	static __thread char buf[40];

	return status_fmt(buf, sizeof(buf), status);
}
