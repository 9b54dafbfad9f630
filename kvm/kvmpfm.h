/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-perfmon host module: private data structures.
 *
 * One struct kvmpfm_vm per open /dev/kvm-perfmon file bound to a KVM VM.
 * It owns the VM's perfmon2 engine and, per vCPU, the thread the vCPU runs
 * on (perf events are bound to it), the guest's command block, a buffer
 * for its copy, the notification eventfd and the set-switch timer.
 *
 * Locking:
 *   vm->lock (mutex) serializes every call into the engine: DOORBELL from
 *   the vCPU threads, the deferred overflow and timer work, stats,
 *   teardown. The engine calls back into the backend (kvmpfm_backend.c
 *   and the files it names) with vm->lock held; backend ops may sleep.
 *
 *   Where per-sample work runs: all of it on the vCPU's own CPU, in its
 *   own thread. A perf overflow handler (NMI or IRQ, on the CPU the vCPU
 *   thread runs on) and the set-switch hrtimer never take vm->lock: they
 *   record what happened in the vCPU's atomic pending state and raise
 *   vcpu->irq_work, a self-interrupt on the same CPU, which adds
 *   vcpu->task_work to the vCPU thread (TWA_RESUME within KVM_RUN; a
 *   timer that fires while the thread sleeps elsewhere wakes it,
 *   TWA_SIGNAL). KVM runs task work before it enters the guest again (or
 *   between two halts), as a return to user mode does: the
 *   vCPU thread then takes vm->lock and delivers the wraps, reading and
 *   re-arming its own counters locally. No work item, no other thread,
 *   no cross-CPU call per sample, and the CPU time is the vCPU thread's.
 *   The host interrupt that found the overflow already took the vCPU out
 *   of the guest: the sample adds no exit of its own. A queued task work
 *   holds a reference on the binding's file, so the VM outlives it.
 *
 *   Throttling bounds that work per VM (max_overflow_rate): past the
 *   bound, the vCPU threads arm their counters so that they do not
 *   interrupt, and each arms its own throttle_timer; like the set-switch
 *   timer it never takes vm->lock, it only raises irq_work, and the vCPU
 *   thread re-arms its counters.
 *
 *   The binding ioctls take vm->lock too: the vCPU fields they set are
 *   what DOORBELL and the deferred work read. Binding the VM itself is
 *   ordered by the open file's own mutex (kvmpfm_main.c).
 *
 *   No ioctl copies from or to its caller's memory with vm->lock held:
 *   such a copy may fault on a page its owner never serves (userfaultfd,
 *   a stalled FUSE file), and then whoever waits for vm->lock would wait
 *   as long. An ioctl copies its input into a buffer bounded by the VM's
 *   limits first, takes vm->lock killably, and copies its output after.
 *   DOORBELL reads and writes the command block in guest memory so too.
 *   What the engine writes into guest memory (samples) is written with
 *   vm->lock held: only the VM's own calls and the operator's killable
 *   waits can wait behind it (kvmpfm_operator.c).
 */
#ifndef _KVMPFM_H
#define _KVMPFM_H

#include <linux/kvm_host.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/irq_work.h>
#include <linux/task_work.h>
#include <linux/hrtimer.h>
#include <linux/xarray.h>
#include <linux/eventfd.h>

#include "kvmpfm_compat.h"
#include "engine/pfm_engine.h"
#include "../include/uapi/kvm_perfmon.h"

/*
 * The index spaces in play, one word each:
 *
 *   PMD number     the guest's perfmon2 data register, 0..PFM_MAX_PMDS-1:
 *                  counters from 0, virtual PMDs from PFM_FIRST_SW_PMD
 *                  (256). What the engine names a counter by
 *                  (pfm_event.pmd); it indexes kvmpfm_vcpu.ctr_by_pmd,
 *                  pending_pmds and the wraps handed to the engine.
 *   PMC number     the guest's perfmon2 config register: the engine
 *                  decodes it into the pfm_event of a PMD; the backend
 *                  never sees it.
 *   engine slot    a PMC's or PMD's dense index in the personality's
 *                  register file and in each set (pfm_pmd_slot()): the
 *                  engine's alone.
 *   fixed index    an Intel fixed counter (0..2 in intel_arch):
 *                  pfm_event.code of a PFM_EVK_FIXED event, guest_event
 *                  of a KVMPFM_EVK_FIXED alias (kvmpfm_event.c).
 *   vCPU index     the binding's, 0..nr_vcpus-1: what BIND_VCPU,
 *                  DOORBELL, the engine (pfm_counter.vcpu) and the
 *                  operator's snapshot name; it indexes kvmpfm_vm.vcpus.
 *   QEMU cpu index CPUState.cpu_index. QEMU binds each vCPU thread, at
 *                  start and on a migration destination, under its own
 *                  cpu index: vCPU index = QEMU cpu index. The module
 *                  takes it from BIND_VCPU's argument and checks it
 *                  against nothing of KVM's.
 *   vcpu_id        KVM's (the APIC id on x86, sparse with several
 *                  sockets): the module never uses it.
 *   vcpu_idx       KVM's creation order (kvm_vcpu.vcpu_idx): never used
 *                  either; KVM's vCPU is found by its thread
 *                  (kvmpfm_kvm.c).
 *   perf's index   perf_event.hw.idx, the host counter perf schedules an
 *                  event on: perf's alone, it may change at each
 *                  schedule-in; a PMD number says nothing of it and the
 *                  module never reads it.
 */

/* backing counters: 48-bit, the width of AMD and Intel counters */
#define KVMPFM_COUNTER_WIDTH	48
#define KVMPFM_WRAP		(1ULL << KVMPFM_COUNTER_WIDTH)
#define KVMPFM_WMASK		(KVMPFM_WRAP - 1)
/* x86 hardware counters take at most 47-bit periods */
#define KVMPFM_MAX_HW_PERIOD	((1ULL << 47) - 1)
/*
 * Set-switch timers are hrtimers; timeouts round up to 1 ms (perfmon2's
 * was the scheduler tick). Each switch rebuilds host perf events: a finer
 * floor lets a guest keep a host worker busy switching.
 */
#define KVMPFM_TIMER_GRANULARITY_NS	NSEC_PER_MSEC

/*
 * Overflow throttling (kvmpfm_throttle.c): a VM's overflows are counted in
 * windows this long against max_overflow_rate's share of one.
 */
#define KVMPFM_THROTTLE_WINDOW_NS	(10 * NSEC_PER_MSEC)

/* kvmpfm_vcpu.cmd_block: a command block is set (its gpa is page aligned) */
#define KVMPFM_CMD_BLOCK_SET	1ULL

/* host events kept per vCPU for the next set switch (kvmpfm_counter.c) */
#define KVMPFM_KEPT_MAX		8

struct kvmpfm_vm;

/* kvmpfm_vcpu.flags */
#define KVMPFM_VCPU_FOREIGN	1	/* its thread ran another VM's vCPU */

/* pages of a command block, a bit each in kvmpfm_vcpu.cmd_dirty */
#define KVMPFM_CMD_BLOCK_PAGES	(PVPFM_CMD_BLOCK_SIZE >> PAGE_SHIFT)
static_assert(KVMPFM_CMD_BLOCK_PAGES <= BITS_PER_LONG);

struct kvmpfm_vcpu {
	struct kvmpfm_vm *vm;
	u32 index;
	struct task_struct *task;	/* bound vCPU thread, referenced */
	struct hlist_node thread_node;	/* in the bound threads (kvmpfm_kvm.c) */
	/*
	 * KVM's vCPU that @task runs: written once by @task itself when it
	 * first enters the guest, then stable; its VM referenced. NULL
	 * until then (kvmpfm_kvm.c).
	 */
	struct kvm_vcpu *kvm_vcpu;
	bool in_run;			/* @task is inside KVM_RUN */
	unsigned long flags;		/* KVMPFM_VCPU_*, atomic bits */
	/*
	 * The guest's command block: its gpa | KVMPFM_CMD_BLOCK_SET, 0 if
	 * none; set under vm->lock, read by DOORBELL before it takes it
	 */
	u64 cmd_block;
	/*
	 * the command block's pages written and not yet fetched as dirty
	 * (kvmpfm_mem.c): a bit per page, atomic
	 */
	unsigned long cmd_dirty;
	/* PVPFM_CMD_BLOCK_SIZE host copy; its vCPU thread's (DOORBELL) */
	void *cmd_buf;
	struct eventfd_ctx *eventfd;
	/* open counters of the context in on this vCPU, by PMD */
	struct kvmpfm_counter *ctr_by_pmd[PFM_MAX_PMDS];
	/* the overflow path's: what each counter went past its wrap */
	u64 past[PFM_MAX_PMDS];

	/* written in NMI/IRQ context, consumed by @task_work */
	unsigned long pending_pmds[PFM_PMD_BV];
	atomic_t pending_timer;
	u64 pending_ip;
	atomic_t pending_ip_unread;	/* VMX: RIP not readable then */
	atomic_t pending_host_throttles; /* interrupts perf throttled after */
	struct irq_work irq_work;
	atomic_t task_work_queued;	/* @task_work added, not yet run */
	struct callback_head task_work;
	struct hrtimer timer;
	/* fires when the VM's throttling ends: re-arm what it held */
	struct hrtimer throttle_timer;

	/* under vm->lock: counters open, closed ones whose event is kept */
	u64 doorbells;
	u32 nr_open;
	struct kvmpfm_counter *kept[KVMPFM_KEPT_MAX];
	u32 nr_kept;
	bool throttle_timer_ready;	/* initialized (at the first open) */
	bool held;			/* a counter was armed held */
	u32 periods_raised;		/* since the last delivery */
};

struct kvmpfm_vm {
	struct mutex lock;		/* the engine's lock, see above */
	struct file *file;		/* the binding's; not referenced */
	struct mm_struct *mm;		/* the VMM's, grabbed: its threads' */
	/*
	 * the KVM VM the first adopted vCPU runs (kvmpfm_kvm.c); set once,
	 * compared only, referenced through its adopted vCPUs
	 */
	struct kvm *kvm;
	bool kvm_claimed;		/* no other binding has @kvm */
	struct pfm_engine *engine;
	u32 nr_vcpus;
	struct kvmpfm_vcpu *vcpus;	/* [nr_vcpus] */
	bool dying;

	/*
	 * host tracepoints backing virtual PMDs: the host's, held from bind
	 * to release (kvmpfm_tracepoints_get()); NULL: not on this host
	 */
	bool tracepoints_held;
	struct trace_event_file *tp_exit;
	struct trace_event_file *tp_wakeup;
	struct trace_event_file *tp_page_fault;

	/*
	 * The VMM's memory table (kvmpfm_mem.c): replaced under @mem_lock,
	 * read under @mem_srcu, the user copies included.
	 */
	struct mutex mem_lock;
	struct kvmpfm_memmap __rcu *memmap;
	struct srcu_struct mem_srcu;
	/*
	 * sampling-buffer pages registered with the engine, or written and
	 * not yet fetched as dirty: gfn -> kvmpfm_smpl_page; under @lock
	 */
	struct xarray smpl_pages;
	u32 nr_released;		/* of those, released (refs 0) */

	u32 nr_aliases;
	struct kvmpfm_event_map_entry *aliases;

	atomic64_t doorbell_ns;		/* in doorbell(): added unlocked */
	/* under @lock */
	u64 doorbells;
	u64 notifications;
	u64 deferred_runs;		/* task works run for the vCPUs */
	bool kept_trim_due;		/* a vCPU's last counter closed */
	u64 remote_counter_ops;		/* counter reads/writes/(re)arms
					 * from outside the counter's vCPU
					 * thread: each may be a cross-CPU
					 * call into the vCPU's CPU
					 */
	u32 notify_vcpu;		/* vCPU being served: whom to notify */
	/*
	 * Throttling: overflows handled in the window that began at
	 * @ovfl_window_start; once they reach the window's budget, every
	 * counter of the VM is held (no interrupt) until @throttle_until.
	 */
	u64 ovfl_window_start;
	u32 ovfl_window_count;
	u64 throttle_until;
	u64 throttles;			/* windows that reached the bound */
	u64 throttled_overflows;	/* skipped while held: lost */
	/* perf's own limits (kvmpfm_counter.c), under @lock */
	u64 host_throttles;		/* interrupts perf throttled after */
	u64 periods_raised;		/* periods armed longer than asked */
	u64 late_overflows;		/* found a period or more late: lost */

	/* the operator's (kvmpfm_operator.c, kvmpfm_filter.c) */
	struct list_head node;		/* in the bound VMs, under their lock */
	u64 id;				/* set once at bind, never reused */
	pid_t pid;			/* the VMM's tgid at bind */
	u64 bound_ns;
	struct kvmpfm_vm_identity identity;	/* under @lock */
	/*
	 * Event filters, under @lock; NULL: none. An event is allowed when
	 * both allow it. The VMM sets its own on its binding; only the
	 * operator (CAP_PERFMON, naming the VM by id) sets or clears
	 * @operator_filter.
	 */
	struct kvmpfm_filter *vmm_filter;
	struct kvmpfm_filter *operator_filter;
};

/* an event filter, as set (kvmpfm_filter.c) */
struct kvmpfm_filter {
	u32 action;			/* KVMPFM_FILTER_* */
	u32 nr;
	struct kvmpfm_filter_event ev[];
};

/*
 * A sampling buffer page, by guest frame: looked up in the VMM's table
 * at each write (kvmpfm_mem.c). Under vm->lock.
 */
struct kvmpfm_smpl_page {
	u32 refs;			/* registrations of this page */
};

/*
 * Backend state of one engine counter (struct pfm_counter.priv). The
 * overflow handler reads it under RCU (perf walks tracepoint and software
 * event lists so): it is freed after a grace period.
 */
struct kvmpfm_counter {
	struct rcu_head rcu;
	struct kvmpfm_vcpu *vcpu;
	u16 pmd;			/* not the engine's counter: gone first */
	struct perf_event *event;	/* perf-backed counters */
	int poll;			/* KVMPFM_POLL_* for polled ones */
	bool poll_enabled;
	u64 poll_acc;			/* polled: counted while enabled */
	u64 poll_start;			/* polled: source value at enable */
	u64 written;			/* counter value at the last write */
	u64 base;			/* raw count at the last write */
	u64 next_wrap;			/* raw count at which it wraps */
	u64 wraps;			/* wraps delivered since the write */
	bool held;			/* armed past the VM's throttling */
	u64 enabled_base;		/* perf's times when (re)opened */
	u64 running_base;
	struct perf_event_attr attr;	/* what it counts, to be reused */
};

#define KVMPFM_POLL_NONE	0
#define KVMPFM_POLL_PREEMPT	1	/* vCPU preemptions (KVM's stats) */
#define KVMPFM_POLL_STEAL	2	/* ns runnable, not running */

/* the engine's backend argument: the VM (pfm_engine_create()) */
static inline struct kvmpfm_vm *kvmpfm_be_vm(void *be)
{
	return be;
}

/* kvmpfm_main.c: accounting of everything the module holds */
void *kvmpfm_zalloc(size_t size);
void kvmpfm_free(const void *p);
#define kvmpfm_free_rcu(p, field) do {				\
		atomic64_dec(&kvmpfm_nr_allocs);			\
		kvfree_rcu(p, field);					\
	} while (0)
void kvmpfm_account(atomic64_t *counter, long delta);
/*
 * The host-wide ceilings' defaults (the *_ceiling module parameters, which
 * root may change): a VM asking for more at BIND_VM is refused (E2BIG),
 * one asking for 0 gets the engine's default (PFM_DFL_MAX_*), at most the
 * ceiling. They bound what one VM can make the host allocate: at most
 * 1024 contexts of 64 sets (a set is 2 KiB of kernel memory on amd64,
 * 8 KiB on intel_arch with 16 counters: about 130 or 520 MiB at worst),
 * and per sampling buffer of up to 64 MiB a page table of 128 KiB, all
 * charged to the VMM's memory cgroup. A vector's ceiling is what fits in
 * the command block (PFM_LIMIT_MAX_VECTOR), its most too.
 */
#define KVMPFM_DFL_CEIL_CONTEXTS	1024
#define KVMPFM_DFL_CEIL_SETS		64
#define KVMPFM_DFL_CEIL_SMPL_BUF_MIB	64

/* BIND_VM's limits against the host's ceilings: 0 (zeros resolved), -E2BIG */
int kvmpfm_limits_resolve(struct pfm_limits *lim);
extern atomic64_t kvmpfm_nr_allocs, kvmpfm_nr_events, kvmpfm_nr_smpl_pages,
	kvmpfm_nr_vms;
/* cumulative, of the VMs released so far */
extern atomic64_t kvmpfm_total_overflows, kvmpfm_total_deferred_runs,
	kvmpfm_total_remote_ops, kvmpfm_total_throttles;
/* PMU events perf refused for KVM's mediated vPMU, since the module loaded */
extern atomic64_t kvmpfm_total_host_mediated;
extern unsigned int kvmpfm_max_overflow_rate;
extern bool kvmpfm_allow_host_page_faults;

/* kvmpfm_vm.c */
struct kvmpfm_vm *kvmpfm_vm_bind(struct file *file, void __user *argp);
long kvmpfm_vm_ioctl(struct kvmpfm_vm *vm, unsigned int cmd, unsigned long arg);
void kvmpfm_vm_release(struct kvmpfm_vm *vm);
void kvmpfm_vm_stats_fill(struct kvmpfm_vm *vm,
			  const struct pfm_engine_stats *st,
			  struct kvmpfm_vm_stats *out);

/* kvmpfm_migrate.c: KVMPFM_GET_STATE, KVMPFM_SET_STATE (vm->lock held) */
long kvmpfm_state_ioctl(struct kvmpfm_vm *vm, unsigned int cmd,
			void __user *argp);

/* kvmpfm_backend.c: the engine's backend operations */
extern const struct pfm_backend_ops kvmpfm_backend_ops;

/* kvmpfm_event.c: which host event counts a guest's event */
u8 kvmpfm_host_vendor(void);
int kvmpfm_alias_encoding(const struct pfm_event *ev,
			  const struct kvmpfm_event_map_entry *alias,
			  u16 *event, u8 *umask);
int kvmpfm_event_translate(struct kvmpfm_vm *vm, const struct pfm_event *ev,
			   struct perf_event_attr *attr, int *poll);
bool kvmpfm_attr_is_hw(const struct perf_event_attr *attr);
int kvmpfm_event_check(void *be, const struct pfm_event *ev);
int kvmpfm_event_open_error(const struct perf_event_attr *attr,
			    struct task_struct *task, int err);
void kvmpfm_counter_describe(struct kvmpfm_vm *vm, const struct pfm_counter *c,
			     struct kvmpfm_snap_event *out);

/* kvmpfm_tracepoints.c: the host tracepoints behind virtual PMDs */
void kvmpfm_tracepoints_get(struct kvmpfm_vm *vm);
void kvmpfm_tracepoints_put(struct kvmpfm_vm *vm);
int kvmpfm_tracepoint_attr(struct trace_event_file *file,
			   struct perf_event_attr *attr);

/* kvmpfm_counter.c: the engine's counters on host perf events */
int kvmpfm_counter_open(void *be, struct pfm_counter *c);
void kvmpfm_counter_close(void *be, struct pfm_counter *c);
void kvmpfm_counter_write(void *be, struct pfm_counter *c, u64 value);
u64 kvmpfm_counter_read(void *be, struct pfm_counter *c,
			struct pfm_counter_time *t);
void kvmpfm_counter_enable(void *be, struct pfm_counter *c);
void kvmpfm_counter_disable(void *be, struct pfm_counter *c);
u64 kvmpfm_counter_raw_read(struct kvmpfm_counter *kc, u64 *enabled,
			    u64 *running);
void kvmpfm_counter_period_arm(struct kvmpfm_counter *kc, u64 raw);
bool kvmpfm_perf_throttled(struct perf_event *event);
void kvmpfm_vcpu_release_kept(struct kvmpfm_vcpu *vcpu);

/* kvmpfm_overflow.c: from perf's overflow handler to the engine */
void kvmpfm_overflow(struct perf_event *event, struct perf_sample_data *data,
		     struct pt_regs *regs);
void kvmpfm_vcpu_irq_work(struct irq_work *work);
void kvmpfm_vcpu_task_work(struct callback_head *head);
void kvmpfm_vcpu_sync(struct kvmpfm_vcpu *vcpu);

/* kvmpfm_throttle.c: the VM's overflow budget */
bool kvmpfm_vm_throttled(struct kvmpfm_vm *vm);
void kvmpfm_ovfl_count(struct kvmpfm_vm *vm);
void kvmpfm_hold_interrupted(struct kvmpfm_vcpu *vcpu);
void kvmpfm_throttle_timer_arm(struct kvmpfm_vcpu *vcpu);
enum hrtimer_restart kvmpfm_throttle_timer_fn(struct hrtimer *t);

/* kvmpfm_operator.c: the operator's interface (host tools) */
int kvmpfm_vm_register(struct kvmpfm_vm *vm);
int kvmpfm_vm_claim_kvm(struct kvmpfm_vm *vm, struct kvmpfm_vcpu *vcpu);
void kvmpfm_vm_unregister(struct kvmpfm_vm *vm);
long kvmpfm_operator_ioctl(unsigned int cmd, void __user *argp);
long kvmpfm_set_filter(struct kvmpfm_vm *own, const void __user *argp);
int kvmpfm_set_identity(struct kvmpfm_vm *vm, void __user *argp);

/* kvmpfm_filter.c: the event filters, the VMM's and the operator's */
struct kvmpfm_filter *kvmpfm_filter_copy(const void __user *argp, u64 *vm_id);
void kvmpfm_filter_install(struct kvmpfm_vm *vm, struct kvmpfm_filter **slot,
			   struct kvmpfm_filter *f);
bool kvmpfm_filters_allow(const struct kvmpfm_vm *vm,
			  const struct pfm_event *ev,
			  const struct kvmpfm_event_map_entry *alias);

/* kvmpfm_mem.c: guest memory through the VMM's memory table */
int kvmpfm_mem_init(struct kvmpfm_vm *vm);
void kvmpfm_mem_destroy(struct kvmpfm_vm *vm);
int kvmpfm_set_mem_table(struct kvmpfm_vm *vm, const void __user *argp);
int kvmpfm_get_dirty_log(struct kvmpfm_vm *vm, void __user *argp);
int kvmpfm_guest_read(struct kvmpfm_vm *vm, u64 gpa, void *dst, u32 len);
bool kvmpfm_guest_writable(struct kvmpfm_vm *vm, u64 gpa, u64 len);
int kvmpfm_guest_copy_out(struct kvmpfm_vcpu *vcpu, u64 gpa, const void *src,
			  u32 len);
int kvmpfm_guest_check(void *be, u64 gpa, u64 len);
void kvmpfm_guest_release(void *be, u64 gpa, u64 len);
int kvmpfm_guest_write(void *be, u64 gpa, const void *src, u32 len);

/* kvmpfm_kvm.c: what the module takes from KVM */
int kvmpfm_kvm_init(void);
void kvmpfm_kvm_exit(void);
int kvmpfm_vcpu_thread_add(struct kvmpfm_vcpu *v);
void kvmpfm_vcpu_thread_del(struct kvmpfm_vcpu *v);
void kvmpfm_vcpu_kvm_put(struct kvmpfm_vcpu *v);
struct kvm_vcpu *kvmpfm_kvm_vcpu(struct kvmpfm_vcpu *v);
bool kvmpfm_vcpu_loaded(struct kvmpfm_vcpu *v);
bool kvmpfm_overflow_rip(struct kvmpfm_vcpu *v, u64 *ip);
u64 kvmpfm_vcpu_rip(struct kvmpfm_vcpu *v);
u64 kvmpfm_vcpu_preemptions(struct kvmpfm_vcpu *v);
void kvmpfm_vcpu_unblock(struct kvmpfm_vcpu *v);
bool kvmpfm_vcpus_out_of_run(struct kvmpfm_vm *vm);

/* kvmpfm_guest.c: time and timers */
u64 kvmpfm_now_ns(void *be);
void kvmpfm_timer_arm(void *be, u32 vcpu, u64 delta_ns);
void kvmpfm_timer_cancel(void *be, u32 vcpu);
enum hrtimer_restart kvmpfm_timer_fn(struct hrtimer *t);

#endif /* _KVMPFM_H */
