// SPDX-License-Identifier: GPL-2.0
/*
 * host_view_read without the module, for e2e.sh: two VMs, one named as
 * a hostile VMM may name it (an invalid UTF-8 byte, a quote, a
 * backslash, a newline), each with two vCPUs.
 */
#include <stdlib.h>
#include <string.h>

#include "host_view.h"

#define FAKE_VCPUS	2

static const char *const names[] = { "vm-a", "evil\xff\"vm\\\n" };
static const char *const uuids[] = {
	"6c0d2a8e-1f0b-4c59-9d5e-00000000000a", "",
};

static int fake_vm(struct snap *s, unsigned int i)
{
	struct kvmpfm_snap_vcpu *v;
	struct kvmpfm_snap_vm *vm;
	unsigned int c;

	s->len = sizeof(*vm) + FAKE_VCPUS * sizeof(*v);
	s->buf = calloc(1, s->len);
	if (!s->buf)
		return -1;
	vm = s->buf;
	vm->size = sizeof(*vm);
	vm->vcpu_size = sizeof(*v);
	vm->ctx_size = sizeof(struct kvmpfm_snap_ctx);
	vm->event_size = sizeof(struct kvmpfm_snap_event);
	vm->nr_vcpus = FAKE_VCPUS;
	vm->pid = 1000 + i;
	vm->id = i + 1;
	strcpy(vm->identity.name, names[i]);
	vm->stats.doorbells = 10 * (i + 1);
	v = (struct kvmpfm_snap_vcpu *)(vm + 1);
	for (c = 0; c < FAKE_VCPUS; c++) {
		v[c].index = c;
		v[c].doorbells = 5 * (i + 1);
	}
	s->vm = *vm;
	s->name = s->vm.identity.name;
	strcpy(s->uuid, uuids[i]);
	return 0;
}

int host_view_read(struct host_view *v, char *err, size_t len)
{
	unsigned int i, nr = sizeof(names) / sizeof(names[0]);

	(void)err;
	(void)len;
	memset(v, 0, sizeof(*v));
	v->set.vms = calloc(nr, sizeof(*v->set.vms));
	if (!v->set.vms)
		return SNAP_EXIT_ERROR;
	for (i = 0; i < nr; i++) {
		if (fake_vm(&v->set.vms[i], i)) {
			snap_set_free(&v->set);
			return SNAP_EXIT_ERROR;
		}
		v->set.nr++;
	}
	v->ms.perf_events = 4;
	v->have_ms = true;
	return 0;
}
