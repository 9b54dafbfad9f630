/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * /dev/kvm-perfmon: host userspace (QEMU, host-tools, tests) <-> the
 * kvm-perfmon module.
 *
 * One open file = one VM binding:
 *   1. KVMPFM_BIND_VM with the VM's fd (from KVM_CREATE_VM) and the
 *      personality, vCPU count and limits the host admin chose; it
 *      returns the personality and counters the guest is given;
 *   2. optionally KVMPFM_SET_EVENT_MAP (before any context exists);
 *   3. each vCPU thread: KVMPFM_BIND_VCPU(index) from that thread, then
 *      KVMPFM_SET_CMD_BLOCK (the guest's command block address) and
 *      KVMPFM_SET_EVENTFD (its notification eventfd, ready for irqfd);
 *   4. each guest DOORBELL write: KVMPFM_DOORBELL(index) from that vCPU's
 *      thread. The module reads the command block from guest memory, runs
 *      the perfmon2 engine and writes the results back.
 * Closing the file (or the process dying) tears everything down.
 */
#ifndef _UAPI_KVM_PERFMON_H
#define _UAPI_KVM_PERFMON_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include "pv_perfmon.h"

#define KVMPFM_DEVICE		"/dev/kvm-perfmon"
#define KVMPFM_API_VERSION	2

/*
 * BIND_VM is in/out: the module resolves PVPFM_PERS_AUTO and a zero
 * @counters, and returns what the guest will be given.
 */
struct kvmpfm_bind_vm {
	__s32 vm_fd;		/* a KVM VM fd; anything else is refused */
	__u32 nr_vcpus;		/* vCPU indexes 0..nr_vcpus-1 */
	__u32 personality;	/* in/out: enum pvpfm_personality */
	__u32 counters;		/* in/out: generic counters (0: default) */
	/*
	 * per-VM limits; 0 takes the module default. Each has a host-wide
	 * ceiling, a parameter of the module (max_contexts_ceiling,
	 * max_sets_ceiling, max_vector_ceiling, max_smpl_buf_ceiling in
	 * /sys/module/kvm_perfmon/parameters/): a limit above its ceiling
	 * makes BIND_VM fail with E2BIG.
	 */
	__u32 max_contexts;
	__u32 max_sets;
	__u32 max_vector;
	__u32 reserved1;
	__u64 max_smpl_buf;
	__u64 reserved[4];	/* must be 0 */
};

/*
 * The admin's event map: a guest event (as programmed in a PMC) backed by
 * another host perf event. An aliased event is reported as emulated.
 */
#define KVMPFM_EVK_GENERIC	0	/* PERFSEL event select + unit mask */
#define KVMPFM_EVK_FIXED	1	/* Intel fixed counter index */

#define KVMPFM_MAP_EMULATED	0x1	/* host event differs from guest's */

struct kvmpfm_event_map_entry {
	__u32 guest_kind;	/* KVMPFM_EVK_* */
	__u16 guest_event;	/* event select (12 bits) or fixed index */
	__u8 guest_umask;
	__u8 flags;		/* KVMPFM_MAP_* */
	__u32 host_type;	/* perf_event_attr.type (HARDWARE, SOFTWARE, ...) */
	__u32 reserved;
	__u64 host_config;	/* perf_event_attr.config */
};

#define KVMPFM_MAX_EVENT_MAP	64

struct kvmpfm_event_map {
	__u32 nr;		/* entries that follow, <= KVMPFM_MAX_EVENT_MAP */
	__u32 reserved;
	struct kvmpfm_event_map_entry entries[];
};

struct kvmpfm_cmd_block {
	__u32 vcpu;
	__u32 reserved;
	__u64 gpa;		/* PVPFM_CMD_BLOCK_SIZE bytes of guest RAM */
};

struct kvmpfm_eventfd {
	__u32 vcpu;
	__s32 fd;		/* eventfd, or -1 to detach */
};

/* per-VM view for host tools */
struct kvmpfm_vm_stats {
	__u32 contexts;
	__u32 sets;
	__u32 loaded;
	__u32 active_counters;
	__u64 commands;
	__u64 command_errors;
	__u64 overflows;
	__u64 samples;
	__u64 samples_lost;
	__u64 messages;
	__u64 messages_lost;
	__u64 set_switches;
	__u64 doorbells;	/* DOORBELL ioctls served */
	__u64 notifications;	/* eventfd signals */
	/* where the host spent work for the guest (see kvm/kvmpfm.h) */
	__u64 deferred_runs;	/* overflow/timer work run by vCPU threads */
	__u64 remote_counter_ops; /* counter ops from outside their vCPU */
	__u64 reserved[2];
};

/* module-wide: the live counts are all zero once no VM is bound */
struct kvmpfm_module_stats {
	__s64 allocations;	/* live kmalloc'ed objects */
	__s64 perf_events;	/* live host perf events */
	__s64 pinned_pages;	/* guest pages pinned for sampling */
	__s64 vms;		/* bound VMs */
	/* summed over the VMs released since the module was loaded */
	__u64 overflows;
	__u64 deferred_runs;
	__u64 remote_counter_ops;
	__u64 reserved[1];
};

#define KVMPFM_IO		0xb7
#define KVMPFM_GET_API_VERSION	_IO(KVMPFM_IO, 0x00)
#define KVMPFM_BIND_VM		_IOWR(KVMPFM_IO, 0x01, struct kvmpfm_bind_vm)
#define KVMPFM_SET_EVENT_MAP	_IOW(KVMPFM_IO, 0x02, struct kvmpfm_event_map)
#define KVMPFM_BIND_VCPU	_IO(KVMPFM_IO, 0x03)	/* arg: vCPU index */
#define KVMPFM_SET_CMD_BLOCK	_IOW(KVMPFM_IO, 0x04, struct kvmpfm_cmd_block)
#define KVMPFM_SET_EVENTFD	_IOW(KVMPFM_IO, 0x05, struct kvmpfm_eventfd)
#define KVMPFM_DOORBELL		_IO(KVMPFM_IO, 0x06)	/* arg: vCPU index */
#define KVMPFM_GET_VM_STATS	_IOR(KVMPFM_IO, 0x07, struct kvmpfm_vm_stats)
#define KVMPFM_GET_MODULE_STATS	_IOR(KVMPFM_IO, 0x08, struct kvmpfm_module_stats)

#endif /* _UAPI_KVM_PERFMON_H */
