// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's read of /dev/kvm-perfmon (host_view.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "host_view.h"

int host_view_read(struct host_view *v, char *err, size_t len)
{
	int fd, ret;

	memset(v, 0, sizeof(*v));
	fd = snap_open(err, len);
	if (fd < 0)
		return snap_open_exit(errno);
	ret = ioctl(fd, KVMPFM_GET_API_VERSION);
	v->api_version = ret > 0 ? ret : 0;
	ret = snap_read_all(fd, &v->set, err, len);
	v->have_ms = !ret && !ioctl(fd, KVMPFM_GET_MODULE_STATS, &v->ms);
	close(fd);
	return ret;
}
