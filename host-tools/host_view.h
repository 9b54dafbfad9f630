/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one scrape of the exporter reads: every bound VM's snapshot and
 * the module's own figures. host_view.c reads them from /dev/kvm-perfmon;
 * the exporter's end-to-end test links a fake in its place
 * (host-tools/tests/fake_host_view.c).
 */
#ifndef HOST_TOOLS_HOST_VIEW_H
#define HOST_TOOLS_HOST_VIEW_H

#include <stdbool.h>

#include "snapshot.h"

struct host_view {
	struct snap_set set;
	struct kvmpfm_module_stats ms;
	bool have_ms;		/* @ms was read */
	int api_version;	/* KVMPFM_GET_API_VERSION's; 0 unread */
};

/*
 * Reads @v (zeroed first). 0, or an exit code (SNAP_EXIT_*) with a
 * message in @err[@len]. The device is opened for this read alone: an
 * exporter that held it open would keep kvm-perfmon.ko from being
 * unloaded or upgraded. Free with snap_set_free(&v->set).
 */
int host_view_read(struct host_view *v, char *err, size_t len);

#endif /* HOST_TOOLS_HOST_VIEW_H */
