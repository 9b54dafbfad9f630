/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tests' snapshots, in the module's format: a VM record of this
 * header's sizes, its records to follow.
 */
#ifndef HOST_TOOLS_TESTS_FAKE_SNAP_H
#define HOST_TOOLS_TESTS_FAKE_SNAP_H

#include <string.h>

#include "include/uapi/kvm_perfmon.h"

/* @vm zeroed, then of VM @id, every record of the size this header has */
static inline void fake_snap_vm(struct kvmpfm_snap_vm *vm, __u64 id)
{
	memset(vm, 0, sizeof(*vm));
	vm->size = sizeof(*vm);
	vm->vcpu_size = sizeof(struct kvmpfm_snap_vcpu);
	vm->ctx_size = sizeof(struct kvmpfm_snap_ctx);
	vm->event_size = sizeof(struct kvmpfm_snap_event);
	vm->id = id;
}

#endif /* HOST_TOOLS_TESTS_FAKE_SNAP_H */
