/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * /dev/kvm-perfmon: host userspace (QEMU, host-tools, tests) <-> the
 * kvm-perfmon module.
 *
 * One open file = one VM binding, in the VMM's process (its mm):
 *   1. KVMPFM_BIND_VM with the personality, vCPU count and limits the
 *      host admin chose; it returns the personality and counters the
 *      guest is given;
 *   2. KVMPFM_SET_MEM_TABLE: the guest's RAM as the VMM maps it (guest
 *      physical ranges -> the VMM's virtual addresses), again whenever
 *      it changes, as vhost's VHOST_SET_MEM_TABLE; the module touches
 *      guest memory only through it, with user copies from the VMM's
 *      threads, and only what the current table maps;
 *   3. optionally KVMPFM_SET_EVENT_MAP (before any context exists);
 *   4. each vCPU thread: KVMPFM_BIND_VCPU(index) from that thread, then
 *      KVMPFM_SET_CMD_BLOCK (the guest's command block address) and
 *      KVMPFM_SET_EVENTFD (its notification eventfd, ready for irqfd).
 *      The vCPU is that thread: its host events count it, and the guest
 *      state a sample records is that of the KVM vCPU it runs;
 *   5. each guest DOORBELL write: KVMPFM_DOORBELL(index) from that vCPU's
 *      thread. The module reads the command block from guest memory, runs
 *      the perfmon2 engine and writes the results back.
 * Closing the file (or the process dying) tears everything down.
 *
 * Dirty pages: every guest page the module writes (command blocks,
 * sampling buffers) is remembered until the VMM fetches it with
 * KVMPFM_GET_DIRTY_LOG, which QEMU does at each sync of its migration
 * dirty log, whatever KVM's own log is (bitmap or dirty ring).
 *
 * Migration: KVMPFM_GET_STATE on the source's binding exports the VM's
 * whole perfmon2 state as a byte stream; KVMPFM_SET_STATE on a fresh
 * binding of the destination's VM (same personality, counters and vCPU
 * count; no context yet) imports it. See "Migration stream" below.
 *
 * The operator's interface (host tools; root or CAP_PERFMON, on any open
 * file, bound or not): KVMPFM_LIST_VMS names every bound VM by an id the
 * module gives it, KVMPFM_GET_SNAPSHOT reads one VM whole, consistent as
 * of one hold of its lock. The VMM names its VM with KVMPFM_SET_IDENTITY;
 * the VMM and the operator may each restrict its events with
 * KVMPFM_SET_EVENT_FILTER (two filters: an event must pass both), which
 * the operator reads back with KVMPFM_GET_EVENT_FILTER.
 */
#ifndef _UAPI_KVM_PERFMON_H
#define _UAPI_KVM_PERFMON_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include "pv_perfmon.h"

#define KVMPFM_DEVICE		"/dev/kvm-perfmon"
#define KVMPFM_API_VERSION	4

/*
 * BIND_VM is in/out: the module resolves PVPFM_PERS_AUTO and a zero
 * @counters, and returns what the guest will be given.
 */
struct kvmpfm_bind_vm {
	__s32 reserved0;	/* must be 0 */
	/* vCPU indexes 0..nr_vcpus-1; at most KVM_CAP_MAX_VCPUS of the VM */
	__u32 nr_vcpus;
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

/*
 * The guest's RAM: @nr regions, each @size bytes of guest physical
 * memory at @gpa mapped at @uaddr in the VMM; page aligned, not
 * overlapping. A table replaces the previous one whole; once
 * SET_MEM_TABLE returns, no write through the old one is in flight (the
 * VMM may unmap what it no longer lists). Memory the VMM does not list
 * (ROM, MMIO, private/encrypted guest memory) the module never touches:
 * a command block or sampling buffer there is an error to the guest.
 */
#define KVMPFM_MEM_READONLY	0x1	/* read, never written */

struct kvmpfm_mem_region {
	__u64 gpa;
	__u64 size;
	__u64 uaddr;
	__u32 flags;		/* KVMPFM_MEM_* */
	__u32 reserved;		/* must be 0 */
};

#define KVMPFM_MAX_MEM_REGIONS	512

struct kvmpfm_mem_table {
	__u32 nr;		/* <= KVMPFM_MAX_MEM_REGIONS */
	__u32 reserved;		/* must be 0 */
	struct kvmpfm_mem_region regions[];
};

/*
 * In: @gfns points to room for @max guest frame numbers. Out: @nr of
 * them written, the guest pages the module wrote since the last fetch
 * (each once); they are forgotten as they are returned, the rest kept
 * for the next fetch (@more set).
 */
struct kvmpfm_dirty_log {
	__u64 gfns;		/* user pointer to __u64[@max] */
	__u32 max;
	__u32 nr;		/* out */
	__u32 more;		/* out: pages left for the next fetch */
	__u32 reserved;		/* must be 0 */
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
	__u64 throttled;	/* overflows held back by the host's rate bound */
	__u64 doorbell_ns;	/* in DOORBELL ioctls, not the exits */
};

/* module-wide: the live counts are all zero once no VM is bound */
struct kvmpfm_module_stats {
	__s64 allocations;	/* live kmalloc'ed objects */
	__s64 perf_events;	/* live host perf events */
	__s64 pinned_pages;	/* sampling pages registered (not pinned) */
	__s64 vms;		/* bound VMs */
	/* summed over the VMs released since the module was loaded */
	__u64 overflows;
	__u64 deferred_runs;
	__u64 remote_counter_ops;
	/*
	 * since the module was loaded, all VMs: guest PMU events perf
	 * refused because a VM with KVM's mediated vPMU held the host's
	 * PMU (each VM's snapshot has its own, host_mediated)
	 */
	__u64 host_mediated;
};

/*
 * Who the VM is, as its VMM knows it (QEMU's -name and -uuid): for the
 * operator's tools, never for a decision. @name is NUL-terminated,
 * well-formed UTF-8 of printable characters: no control character (C0,
 * DEL, C1), line or paragraph separator (U+2028, U+2029) or bidirectional
 * override or isolate (U+202A-U+202E, U+2066-U+2069); anything else is
 * EINVAL. "" and a zero UUID mean unnamed.
 */
#define KVMPFM_NAME_LEN		64

struct kvmpfm_vm_identity {
	char name[KVMPFM_NAME_LEN];
	__u8 uuid[16];
	__u64 reserved[2];	/* must be 0 */
};

/*
 * Event filters, as KVM's KVM_SET_PMU_EVENT_FILTER: ALLOW lets the guest
 * program only the listed events, DENY all but them. An event matches an
 * entry of its kind when (event & event_mask) == (entry.event &
 * event_mask) and the same for the unit mask (generic events only). A
 * refused event is NOTAVAIL to the guest, counted as "filtered". It is
 * checked where the guest programs an event (a PMC write; a virtual PMD's
 * write): a new filter applies from the next such write and never stops a
 * counter already programmed. DENY with no entry is no filter.
 *
 * A VM has two filters, the VMM's and the operator's; an event must pass
 * both. Each judges the guest event as programmed and, when the event map
 * aliases it, also the host event the alias counts, as the generic event
 * of the guest's encoding that counts it: a PERF_TYPE_RAW host event by
 * its event select and unit mask when host and guest are of one vendor, a
 * PERF_TYPE_HARDWARE one by its architectural encoding (the event select
 * and unit mask of the guest's vendor, e.g. 0x76/0x00 for cycles on
 * AMD). A PMU host event with no such encoding (PERF_TYPE_HW_CACHE, a raw
 * event of the other vendor, a hardware event with no architectural
 * encoding) is refused while either filter is set: no entry can say
 * what it counts. A PERF_TYPE_SOFTWARE alias (only CAP_PERFMON may map
 * one) counts the vCPU thread, not the shared PMU: its guest event alone
 * is judged.
 */
#define KVMPFM_FILTER_ALLOW	0
#define KVMPFM_FILTER_DENY	1
#define KVMPFM_EVK_VIRTUAL	2	/* @event: enum pvpfm_virtual_pmd */
#define KVMPFM_MAX_FILTER	256

struct kvmpfm_filter_event {
	__u32 guest_kind;	/* KVMPFM_EVK_* */
	__u16 event;		/* event select, fixed index or virtual PMD */
	__u16 event_mask;	/* bits of @event that must match */
	__u8 umask;		/* generic events only */
	__u8 umask_mask;
	__u8 reserved[6];	/* must be 0 */
};

/*
 * KVMPFM_SET_EVENT_FILTER: @vm_id 0, on the VM's own binding file: the
 * VMM's filter (at bind or later; ENOTCONN on a file not bound). Any
 * other @vm_id, on any file: the operator's filter of VM @vm_id
 * (KVMPFM_LIST_VMS), for root or CAP_PERFMON only (EPERM), its own VMM
 * included: only the operator replaces or clears it. DENY of no events
 * is no filter: it clears one. @flags must be 0.
 *
 * KVMPFM_GET_EVENT_FILTER, for root or CAP_PERFMON only, on any file:
 * the operator's filter of VM @vm_id, or with KVMPFM_FILTER_OF_VMM the
 * VMM's. In: @nr, the room at @events; out: @action and @nr of the
 * filter (no filter: DENY of none), its events if they fit, else ENOSPC
 * with @nr the room needed; ENOENT if the VM is gone.
 */
#define KVMPFM_FILTER_OF_VMM	0x1

struct kvmpfm_event_filter {
	__u32 action;		/* KVMPFM_FILTER_* */
	__u32 nr;		/* entries that follow, <= KVMPFM_MAX_FILTER */
	__u64 vm_id;
	__u32 flags;		/* KVMPFM_FILTER_OF_VMM (GET only) */
	__u32 reserved;		/* must be 0 */
	struct kvmpfm_filter_event events[];
};

/*
 * KVMPFM_LIST_VMS: the ids of the bound VMs, in bind order. @nr is in:
 * room at @ids, out: VMs bound (more than the room: call again).
 */
struct kvmpfm_vm_list {
	__u32 nr;
	__u32 reserved;		/* must be 0 */
	__u64 ids;		/* user pointer to __u64[nr] */
};

/*
 * KVMPFM_GET_SNAPSHOT: VM @vm_id into @buf, @size bytes. Out: @size is
 * the bytes written, or needed when the call fails with ENOSPC; ENOENT
 * if the VM is gone. The buffer holds a struct kvmpfm_snap_vm, then
 * nr_vcpus struct kvmpfm_snap_vcpu, nr_ctxs struct kvmpfm_snap_ctx,
 * nr_events struct kvmpfm_snap_event, and nr_map struct
 * kvmpfm_event_map_entry, each record of the size the VM record gives
 * (a newer module may append fields; read what you know).
 */
struct kvmpfm_snapshot {
	__u64 vm_id;
	__u64 buf;		/* user pointer */
	__u32 size;
	__u32 reserved;		/* must be 0 */
};

/* refusals are counted by errno, 1 .. KVMPFM_SNAP_ERRNOS - 1 */
#define KVMPFM_SNAP_ERRNOS	136
/* calls are counted by PVPFM_CMD_*, 1 .. KVMPFM_SNAP_CALLS - 1 */
#define KVMPFM_SNAP_CALLS	32

struct kvmpfm_snap_vm {
	__u32 size;		/* of this record */
	__u32 vcpu_size;	/* of each record that follows, by kind */
	__u32 ctx_size;
	__u32 event_size;
	__u32 map_size;
	__u32 nr_vcpus;
	__u32 nr_ctxs;
	__u32 nr_events;
	__u32 nr_map;
	__s32 pid;		/* the VMM's, as the binder saw it */
	__u64 id;
	__u64 bound_ns;		/* CLOCK_REALTIME of BIND_VM */
	struct kvmpfm_vm_identity identity;
	__u32 personality;	/* enum pvpfm_personality */
	__u32 counters;
	__u32 max_contexts;	/* limits in force */
	__u32 max_sets;
	__u32 max_vector;
	__u32 filter_action;	/* KVMPFM_FILTER_*: the operator's filter */
	__u64 max_smpl_buf;
	__u32 filter_nr;	/* entries in the filter */
	__u32 reserved1;
	struct kvmpfm_vm_stats stats;
	__u64 calls[KVMPFM_SNAP_CALLS];		/* by PVPFM_CMD_* */
	__u64 refusals[KVMPFM_SNAP_ERRNOS];	/* failed calls, by errno */
	__u64 notavail;		/* registers refused: host cannot count */
	__u64 filtered;		/* registers refused: a filter, either */
	/* the VMM's filter (filter_*: the operator's) */
	__u32 vmm_filter_action;	/* KVMPFM_FILTER_* */
	__u32 vmm_filter_nr;
	/*
	 * registers refused: a VM with KVM's mediated vPMU held the host's
	 * PMU (NOTAVAIL with PVPFM_REG_RETFL_HOST_MEDIATED; their calls
	 * are among refusals[EINVAL]). A call that failed for it when a
	 * counter was to open (a load, a start on another set) is counted
	 * in refusals[EOPNOTSUPP], which has no other cause.
	 */
	__u64 host_mediated;
	/*
	 * Host perf's limits on the VM's sampling (pv_perfmon.h's
	 * PVPFM_SETINFO_HOST_THROTTLES and _PERIODS_RAISED, summed):
	 * interrupts after which perf throttled an event
	 * (kernel.perf_event_max_sample_rate), periods armed longer than
	 * the PMU driver allows; and overflows found a period or more late,
	 * each a sample not taken (stats.throttled: those the module's own
	 * rate bound held back).
	 */
	__u64 host_throttles;
	__u64 periods_raised;
	__u64 late_overflows;
	__u64 reserved[3];
};

struct kvmpfm_snap_vcpu {
	__u32 index;		/* the binding's vCPU index */
	__s32 host_tid;		/* its thread on the host; 0: not bound */
	__u32 ctx_id;		/* context in on it; 0: none */
	__u32 counters_open;	/* host events counting for it */
	__u64 doorbells;
	__u64 reserved[2];
};

#define KVMPFM_CTX_UNLOADED	0
#define KVMPFM_CTX_LOADED	1
#define KVMPFM_CTX_MASKED	2

struct kvmpfm_snap_ctx {
	__u32 id;		/* the guest's context id */
	__u32 flags;		/* PFM_FL_* */
	__u32 state;		/* KVMPFM_CTX_* */
	__s32 vcpu;		/* in on this vCPU; -1: not in */
	__u32 load_pid;		/* guest thread, or CPU when system-wide */
	__u32 tid;		/* monitored guest thread */
	__u32 nr_sets;
	__u16 active_set;
	__u8 system_wide;
	__u8 started;
	__u64 set_runs;		/* set activations: loads and switches */
	__u64 samples;		/* entries in its sampling buffer */
	__u32 msgs_queued;
	__u32 reserved;
	__u64 reserved2[2];
};

#define KVMPFM_SNAP_EV_EMULATED	0x1	/* an alias of the event map */
#define KVMPFM_SNAP_EV_POLLED	0x2	/* a KVM statistic, no perf event */

struct kvmpfm_snap_event {
	__u32 vcpu;
	__u32 ctx_id;
	__u16 set;
	__u16 pmd;
	__u32 guest_kind;	/* KVMPFM_EVK_* */
	__u16 guest_event;	/* event select, fixed index or virtual PMD */
	__u8 guest_umask;
	__u8 flags;		/* KVMPFM_SNAP_EV_* */
	__u32 host_type;	/* perf_event_attr.type */
	__u64 host_config;
	__u64 time_enabled;	/* ns, since the context's counters opened */
	__u64 time_running;	/* ns of it on a host counter */
	__u64 reserved[2];
};

/*
 * Migration stream (KVMPFM_GET_STATE, KVMPFM_SET_STATE).
 *
 * Both only while none of the VM's vCPUs is in KVM_RUN: the module checks
 * it (each KVM vCPU's mutex, which KVM_RUN holds, must be free) and fails
 * with EBUSY otherwise. The VMM stops its vCPUs first (QEMU saves device
 * state after they stop), so the counters it exports are final.
 *
 * GET_STATE: @buf 0 asks for the size, at any time: @size out is the
 * stream's bytes (exact once the vCPUs stopped; the VMM learns
 * @max_size so at bind). With @buf, @size in is the room there; out,
 * the bytes written, or the bytes needed when the call fails with
 * ENOSPC. @max_size out (both ioctls): the largest stream this VM's
 * limits allow; SET_STATE refuses a larger @size with E2BIG before
 * copying anything, and a destination may bound what it reads from a
 * migration stream by it.
 *
 * SET_STATE: @buf holds @size bytes, at most @max_size. Every vCPU a
 * context was in on at save must be bound first (KVMPFM_BIND_VCPU from
 * its thread: host counters belong to the vCPU thread), with its command
 * block set again. The stream is untrusted: on any error the VM is left
 * as bound, with no context, and @reason, @offset, @ctx_id, @set and
 * @pmd say what was refused and where:
 *
 *   reason                    errno   e.g.
 *   KVMPFM_STATE_MALFORMED    EINVAL  a corrupted or truncated stream
 *   KVMPFM_STATE_VERSION      EPROTO  a stream of a newer module
 *   KVMPFM_STATE_MISMATCH     EINVAL  personality, counters or vCPUs differ
 *   KVMPFM_STATE_LIMIT        E2BIG   more contexts, sets or buffer than
 *                                     this VM's limits
 *   KVMPFM_STATE_NOT_EMPTY    EBUSY   the VM already has contexts
 *   KVMPFM_STATE_EVENT        ENOENT  an event this host cannot count (no
 *                                     PMU, no event map entry): @ctx_id,
 *                                     @set, @pmd name it
 *   KVMPFM_STATE_GUEST_MEM    EFAULT  a sampling page not in guest RAM
 *   KVMPFM_STATE_COUNTER      (its)   a host counter failed to open, or
 *                                     the vCPU is not bound
 * EBUSY with reason 0: vCPUs running; EFAULT: @buf unreadable.
 *
 * The stream (little-endian, 8-byte aligned records; the module's
 * kvm/engine/pfm_stream.c is the reference): a header (magic
 * 0x4d52545332464d50, the bytes "PMF2STRM",
 * format version, personality, counters, vCPU count, context count),
 * then records of a type, flags and payload size: CTX (a context: flags,
 * state, the vCPU it was in on, thread, started/masked/blocked, queued
 * messages, sampling format, buffer size and header position), SET (one
 * of its sets: flags, timeout and the time left of it, active time,
 * runs, then every PMC value and every PMD: 64-bit value, reset values,
 * random generator seed and mask, reset/sample masks), PAGES (the guest
 * pages of its sampling buffer) and END. Set timeouts and active time go
 * on from their values at save: the time between save and import (the
 * VM paused) is not active time. Host counters are opened again on the
 * destination and count from the 64-bit PMD values.
 *
 * Version rules: the format version changes when a record's layout or
 * meaning changes; a module refuses a version it does not know
 * (KVMPFM_STATE_VERSION), so a stream never moves to an older module
 * than the one that wrote it, unless both speak its version. A record
 * type that an older reader may skip carries an "optional" flag; any
 * other unknown type is refused. Reserved fields are zero.
 *
 * Not in the stream: the host's figures (KVMPFM_GET_VM_STATS, the
 * operator's snapshot: each host counts its own), the event map and
 * filter (the destination's own: an event it cannot count refuses the
 * stream), and the samples themselves (in guest RAM, which migrates).
 */
#define KVMPFM_STATE_OK		0
#define KVMPFM_STATE_MALFORMED	1
#define KVMPFM_STATE_VERSION	2
#define KVMPFM_STATE_MISMATCH	3
#define KVMPFM_STATE_LIMIT	4
#define KVMPFM_STATE_NOT_EMPTY	5
#define KVMPFM_STATE_EVENT	6
#define KVMPFM_STATE_GUEST_MEM	7
#define KVMPFM_STATE_COUNTER	8

struct kvmpfm_state {
	__u64 buf;		/* user pointer */
	__u32 size;		/* in/out, see above */
	__u32 max_size;		/* out */
	/* out, SET_STATE: what was refused */
	__u32 reason;		/* KVMPFM_STATE_* */
	__u32 ctx_id;		/* the context concerned; 0: none */
	__u16 set;
	__u16 pmd;
	__u32 reserved1;	/* must be 0 */
	__u64 offset;		/* in the stream, of the record at fault */
	__u64 reserved[2];	/* must be 0 */
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
#define KVMPFM_SET_IDENTITY	_IOW(KVMPFM_IO, 0x09, struct kvmpfm_vm_identity)
#define KVMPFM_SET_EVENT_FILTER	_IOW(KVMPFM_IO, 0x0a, struct kvmpfm_event_filter)
#define KVMPFM_LIST_VMS		_IOWR(KVMPFM_IO, 0x0b, struct kvmpfm_vm_list)
#define KVMPFM_GET_SNAPSHOT	_IOWR(KVMPFM_IO, 0x0c, struct kvmpfm_snapshot)
#define KVMPFM_GET_STATE	_IOWR(KVMPFM_IO, 0x0d, struct kvmpfm_state)
#define KVMPFM_SET_STATE	_IOWR(KVMPFM_IO, 0x0e, struct kvmpfm_state)
#define KVMPFM_SET_MEM_TABLE	_IOW(KVMPFM_IO, 0x0f, struct kvmpfm_mem_table)
#define KVMPFM_GET_DIRTY_LOG	_IOWR(KVMPFM_IO, 0x10, struct kvmpfm_dirty_log)
#define KVMPFM_GET_EVENT_FILTER	_IOWR(KVMPFM_IO, 0x11, struct kvmpfm_event_filter)

#endif /* _UAPI_KVM_PERFMON_H */
