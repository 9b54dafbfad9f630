/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What pv-perfmon costs a VM, beside what KVM counts of it: its
 * doorbells against all the VM's exits and its MMIO exits to the VMM
 * (KVM's debugfs statistics, /sys/kernel/debug/kvm/PID-FD/, root only),
 * the module's time in them against the vCPU threads' CPU time
 * (/proc/PID/task/TID/schedstat). `perf kvm stat` shows the doorbells
 * only as anonymous MMIO exits.
 */
#ifndef HOST_TOOLS_VM_COST_H
#define HOST_TOOLS_VM_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

struct vm_cost {
	uint64_t doorbells;
	uint64_t doorbell_ns;	/* in the module */
	bool have_exits;	/* KVM's debugfs read */
	uint64_t exits;
	uint64_t mmio_exits;	/* to the VMM */
	bool have_vcpu_ns;
	uint64_t vcpu_ns;	/* the vCPU threads' CPU time */
};

/*
 * KVM's exit counts of the VM whose VMM is @pid, what kvm_stat reads:
 * false when not readable, or when the VMM holds more than one KVM VM
 */
bool vm_cost_kvm_exits(int pid, uint64_t *exits, uint64_t *mmio_exits);

/* @s's cost, with KVM's and the scheduler's figures where readable */
void vm_cost_read(const struct snap *s, struct vm_cost *c);

/* @part of @whole in percent; 0 of nothing */
double vm_cost_percent(uint64_t part, uint64_t whole);

#endif
