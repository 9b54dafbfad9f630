// SPDX-License-Identifier: GPL-2.0
/*
 * A sampling buffer whose context the host did not confirm destroyed is
 * never freed: the host may still have its pages. The device is removed
 * (sysfs remove) while a sampling context is open, so its close() cannot
 * reach the host (ENODEV): the buffer stays counted in
 * smpl_buffer_mem_cur. A PCI rescan binds the device again and contexts
 * are made as before. Root only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t_common.h"

#define BUF_SIZE	(64 * 1024)
#define CUR		"controls/smpl_buffer_mem_cur"

static int write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(s, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* the bound device's sysfs directory, in @buf */
static bool device_dir(char *buf, size_t size)
{
	glob_t g;
	bool ok;

	if (glob("/sys/bus/pci/drivers/perfmon2/0*", 0, NULL, &g))
		return false;
	ok = g.gl_pathc == 1;
	if (ok)
		snprintf(buf, size, "%s", g.gl_pathv[0]);
	globfree(&g);
	return ok;
}

/* wait up to 10 s for /dev/perfmon2 and /sys/kernel/perfmon to be back */
static bool wait_bound(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!access("/dev/perfmon2", R_OK) &&
		    t_sysfs_num(CUR, -1) >= 0)
			return true;
		t_sleep_ns(100 * MS);
	}
	return false;
}

int main(void)
{
	pfm_dfl_smpl_arg_t arg = { .buf_size = BUF_SIZE };
	pfarg_ctx_t ctx = { 0 };
	long long cur0, cur1, cur2;
	char dev[256], path[300];
	int fd;

	if (!t_root()) {
		t_skip("unplug: a buffer the host may hold", "not root: cannot remove the device");
		return t_done();
	}
	if (!t_check(device_dir(dev, sizeof(dev)), "unplug: the bound device in sysfs",
		     "no /sys/bus/pci/drivers/perfmon2/<device>"))
		return t_done();
	cur0 = t_sysfs_num(CUR, -1);
	fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	if (!t_expect_ok("unplug: a sampling context", fd))
		return t_done();
	cur1 = t_sysfs_num(CUR, -1);
	t_check(cur1 >= cur0 + BUF_SIZE, "unplug: its buffer is counted",
		"smpl_buffer_mem_cur %lld then %lld", cur0, cur1);

	snprintf(path, sizeof(path), "%s/remove", dev);
	fflush(stdout);
	if (!t_expect_ok("unplug: remove the device", write_file(path, "1"))) {
		close(fd);
		return t_done();
	}
	/* DESTROY cannot reach the host: ENODEV */
	close(fd);
	if (!t_expect_ok("unplug: rescan the bus", write_file("/sys/bus/pci/rescan", "1")) ||
	    !t_check(wait_bound(), "unplug: the device is bound again",
		     "no /dev/perfmon2 or " CUR " after 10 s"))
		return t_done();
	cur2 = t_sysfs_num(CUR, -1);
	printf("unplug: smpl_buffer_mem_cur %lld before, %lld with the context, %lld after its close without the host\n",
	       cur0, cur1, cur2);
	t_check(cur2 == cur1,
		"unplug: a buffer whose DESTROY failed is not freed (still counted)",
		"smpl_buffer_mem_cur %lld, was %lld with it open", cur2, cur1);
	fd = t_create(0);
	if (t_expect_ok("unplug: a context after the rescan", fd))
		close(fd);
	return t_done();
}
