// SPDX-License-Identifier: GPL-2.0
/*
 * host_view_read without the module, for e2e.sh: three VMs, each with
 * two vCPUs: vm-a, whose guest counts vcpu_run_ns (1 s on vCPU 0, 2 s on
 * vCPU 1) and cycles (CPU_CLK_UNHALTED, 0.5 s of 1 s on a host counter)
 * on both; one named as a hostile VMM may name it (an invalid UTF-8
 * byte, a quote, a backslash, a newline); and a second vm-a, as QEMU
 * allows.
 */
#include <stdlib.h>
#include <string.h>

#include "fake_snap.h"
#include "host_view.h"
#include "include/uapi/pv_perfmon.h"

#define FAKE_VCPUS	2

static const char *const names[] = { "vm-a", "evil\xff\"vm\\\n", "vm-a" };
static const char *const uuids[] = {
	"6c0d2a8e-1f0b-4c59-9d5e-00000000000a", "",
	"6c0d2a8e-1f0b-4c59-9d5e-00000000000c",
};

#define NS	1000000000ull

/* vm-a's events: per vCPU, vcpu_run_ns and cycles */
static void fake_events(struct kvmpfm_snap_event *e)
{
	unsigned int c;

	for (c = 0; c < FAKE_VCPUS; c++, e += 2) {
		e[0].vcpu = e[1].vcpu = c;
		e[0].ctx_id = e[1].ctx_id = c + 1;
		e[0].pmd = PVPFM_VPMD_VCPU_RUN_NS;
		e[0].guest_kind = KVMPFM_EVK_VIRTUAL;
		e[0].guest_event = PVPFM_VPMD_VCPU_RUN_NS;
		e[0].time_enabled = e[0].time_running = (c + 1) * NS;
		e[1].guest_kind = KVMPFM_EVK_GENERIC;
		e[1].guest_event = 0x76;
		e[1].time_enabled = NS;
		e[1].time_running = NS / 2;
	}
}

static int fake_vm(struct snap *s, unsigned int i)
{
	struct kvmpfm_snap_vcpu *v;
	struct kvmpfm_snap_vm *vm;
	unsigned int c, nr_events = i ? 0 : 2 * FAKE_VCPUS;

	s->len = sizeof(*vm) + FAKE_VCPUS * sizeof(*v) +
		 nr_events * sizeof(struct kvmpfm_snap_event);
	s->buf = calloc(1, s->len);
	if (!s->buf)
		return -1;
	vm = s->buf;
	fake_snap_vm(vm, i + 1);
	vm->nr_vcpus = FAKE_VCPUS;
	vm->nr_events = nr_events;
	vm->personality = PVPFM_PERS_AMD64;
	vm->pid = 1000 + i;
	strcpy(vm->identity.name, names[i]);
	vm->stats.doorbells = 10 * (i + 1);
	vm->stats.doorbell_ns = 1500000 * (i + 1);
	v = (struct kvmpfm_snap_vcpu *)(vm + 1);
	for (c = 0; c < FAKE_VCPUS; c++) {
		v[c].index = c;
		v[c].doorbells = 5 * (i + 1);
	}
	if (nr_events)
		fake_events((struct kvmpfm_snap_event *)(v + FAKE_VCPUS));
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
	v->api_version = KVMPFM_API_VERSION;
	v->ms.perf_events = 4;
	v->have_ms = true;
	return 0;
}
