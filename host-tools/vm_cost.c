// SPDX-License-Identifier: GPL-2.0
/*
 * A VM's pv-perfmon cost (vm_cost.h). KVM names a VM's debugfs
 * directory by its VMM's pid and the VM's file descriptor; a QEMU process
 * runs one VM, so the pid finds it.
 */
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "vm_cost.h"

#define KVM_DEBUGFS	"/sys/kernel/debug/kvm"

static bool read_u64(const char *path, uint64_t *val)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%" SCNu64, val) == 1;
	fclose(f);
	return ok;
}

bool vm_cost_kvm_exits(int pid, uint64_t *exits, uint64_t *mmio_exits)
{
	char path[PATH_MAX];
	bool ok = false;
	glob_t g;

	snprintf(path, sizeof(path), KVM_DEBUGFS "/%d-*", pid);
	if (pid <= 0 || glob(path, GLOB_ONLYDIR, NULL, &g))
		return false;
	if (g.gl_pathc == 1) {
		snprintf(path, sizeof(path), "%s/exits", g.gl_pathv[0]);
		ok = read_u64(path, exits);
		snprintf(path, sizeof(path), "%s/mmio_exits", g.gl_pathv[0]);
		ok = ok && read_u64(path, mmio_exits);
	}
	globfree(&g);
	return ok;
}

static void read_vcpu_ns(const struct snap *s, struct vm_cost *c)
{
	const struct kvmpfm_snap_vcpu *v;
	char path[96];
	uint64_t ns;
	unsigned int i;

	c->have_vcpu_ns = s->vm.pid > 0;
	for (i = 0; c->have_vcpu_ns && (v = snap_vcpu(s, i)); i++) {
		if (v->host_tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat",
			 (int)s->vm.pid, (int)v->host_tid);
		c->have_vcpu_ns = read_u64(path, &ns);
		if (c->have_vcpu_ns)
			c->vcpu_ns += ns;
	}
}

void vm_cost_read(const struct snap *s, struct vm_cost *c)
{
	memset(c, 0, sizeof(*c));
	c->doorbells = s->vm.stats.doorbells;
	c->doorbell_ns = s->vm.stats.doorbell_ns;
	c->have_exits = vm_cost_kvm_exits(s->vm.pid, &c->exits,
					  &c->mmio_exits);
	read_vcpu_ns(s, c);
}

double vm_cost_percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}
