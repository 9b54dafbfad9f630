/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hostlib: a real KVM VM driven from host userspace, bound to
 * /dev/kvm-perfmon, for the host tests (tests/host/). Runs inside the rig's
 * L1 (tests/rig/boot-l1.sh), which has /dev/kvm and kvm-perfmon.ko loaded.
 *
 * A test VM has guest RAM at gpa 0 (HL_MEM_SIZE bytes), up to HL_MAX_VCPUS
 * vCPUs and one thread per vCPU. Its binding gets the VM's memslots as
 * the memory table (KVMPFM_SET_MEM_TABLE) at BIND_VM and after every
 * hl_set_memslot(), as QEMU's memory listener keeps it. Each vCPU thread
 * binds itself (KVMPFM_BIND_VCPU, SET_CMD_BLOCK, SET_EVENTFD) and then
 * serves calls from the test's main thread (hl_call): the module requires
 * DOORBELL from the bound vCPU thread, and counts virtual PMDs on that
 * thread. The calls on v->cb (tests/common/cmdblock.h) write a command
 * block (header + argument, pv_perfmon.h) into the vCPU's block in guest
 * RAM and ring DOORBELL from the right thread.
 *
 * Guest RAM layout (real mode, no guest OS: tiny code snippets only):
 *   0x01000  code: HL_CODE_IO, HL_CODE_TOUCH, HL_CODE_SPIN, HL_CODE_HLT
 *   0x10000  command blocks, PVPFM_CMD_BLOCK_SIZE per vCPU
 *   0x80000  HL_TOUCH_PAGES pages never touched by the host (page faults)
 *   0x100000 a page allocator for sampling buffers (hl_gpa_alloc)
 *
 * One section of this header a topic, each implemented by one file of
 * lib/ (named in the section's title). The PASS/FAIL lines the tests print
 * are tests/common/result.h's (t_check, t_note, t_done).
 */
#ifndef HOSTLIB_H
#define HOSTLIB_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/types.h>
#include <linux/kvm.h>

#include "include/uapi/kvm_perfmon.h"
#include "include/uapi/pv_perfmon.h"
#include "include/uapi/perfmon2.h"
#include "tests/common/child.h"
#include "tests/common/cmdblock.h"
#include "tests/common/result.h"
#include "tests/common/testdefs.h"

#define HL_MAX_VCPUS		8
#define HL_MAX_SLOTS		8	/* KVM memslots a test VM uses */
#define HL_MEM_SIZE		(8UL << 20)
#define HL_PAGE			4096UL

/* guest code, real mode; every snippet ends with an OUT to HL_PORT_DONE */
#define HL_CODE_IO		0x1000	/* CX times OUT HL_PORT_IO, then done */
#define HL_CODE_TOUCH		0x1100	/* CX pages written from segment DX */
#define HL_CODE_SPIN		0x1200	/* jmp $: runs until kicked */
#define HL_CODE_HLT		0x1300	/* hlt; jmp back: halts until kicked */
#define HL_PORT_IO		0x10
#define HL_PORT_DONE		0x11

#define HL_CMD_GPA(i)		(0x10000UL + (i) * PVPFM_CMD_BLOCK_SIZE)
#define HL_TOUCH_GPA		0x80000UL
#define HL_TOUCH_PAGES		64
#define HL_HEAP_GPA		0x100000UL

/* a call's result when the DOORBELL ioctl itself failed with errno @e */
#define HL_IOCTL_ERR(e)		(-10000 - (e))
#define HL_IS_IOCTL_ERR(r)	((r) <= -10000)

struct hl_vm;

struct hl_vcpu {
	struct hl_vm *vm;
	int index;
	int fd;				/* KVM vCPU fd */
	struct kvm_run *run;
	size_t run_size;
	pthread_t thread;
	pid_t tid;			/* host thread id */
	uint64_t cmd_gpa;
	void *cmd;			/* the command block, host view */
	int efd;			/* notification eventfd */
	int bind_err;			/* 0 or -errno of the binding */
	uint32_t guest_tid, guest_tgid;	/* hdr.tid/tgid of its commands */
	struct cb_caller cb;		/* the calls; cb.hdr: the last header */

	/* calls from other threads */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int (*fn)(struct hl_vcpu *v, void *arg);
	void *arg;
	int ret;
	int state;			/* 0 idle, 1 requested, 2 done */
	bool quit;

	/* hl_run_until_kicked() */
	volatile int stop;
	/* exits userspace saw in the last hl_run_*() */
	uint64_t exits_io, exits_hlt, exits_intr, exits_other;
};

struct hl_vm_opts {
	int nr_vcpus;			/* 1..HL_MAX_VCPUS */
	bool irqchip;			/* KVM_CREATE_IRQCHIP (in-kernel HLT) */
	bool no_pfm;			/* no /dev/kvm-perfmon at all */
	bool no_bind_vcpus;		/* threads do not bind themselves */
	bool no_threads;		/* no vCPU threads */
	bool dirty_log;			/* KVM_MEM_LOG_DIRTY_PAGES on guest RAM */
	/*
	 * KVM vcpu_id of each vCPU (KVM_CREATE_VCPU's argument), [nr_vcpus];
	 * NULL: vCPU i is id i. vCPU i still binds as index i: the module
	 * learns the KVM vCPU from the thread when it enters the guest.
	 */
	const uint32_t *vcpu_ids;
	/* BIND_VM limits and personality (nr_vcpus set by hostlib) */
	struct kvmpfm_bind_vm bind;
	/* optional event map, set right after BIND_VM */
	const struct kvmpfm_event_map_entry *map;
	uint32_t map_nr;
};

/* a KVM memslot as the VMM set it (size 0: none) */
struct hl_memslot {
	uint64_t gpa, size, uaddr;
	uint32_t flags;			/* KVM_MEM_* */
};

struct hl_vm {
	int kvm_fd, vm_fd, pfm_fd;
	/* the VM's memslots by slot number, what SET_MEM_TABLE is made of */
	struct hl_memslot slots[HL_MAX_SLOTS];
	uint8_t *mem;			/* guest RAM, gpa 0 */
	uint64_t heap_next;		/* hl_gpa_alloc */
	int nr_vcpus;
	struct hl_vcpu vcpus[HL_MAX_VCPUS];
	struct hl_vm_opts opts;
};

/* ---- results (lib/status.c; the lines: tests/common/result.h) ---------- */
/* PASS if @expr (an int: 0, -errno or HL_IOCTL_ERR) equals @want */
#define HL_EXPECT(name, expr, want) do {				\
	int hl_r_ = (expr), hl_w_ = (want);				\
	t_check(hl_r_ == hl_w_, (name), "got %s, want %s",		\
		 hl_status_str(hl_r_), hl_status_str2(hl_w_));	\
} while (0)
/* an ioctl as 0 or -errno */
#define HL_IOCTL(fd, req, arg)	(ioctl((fd), (req), (arg)) ? -errno : 0)
const char *hl_status_str2(int status);	/* a second buffer */
const char *hl_errname(int err);	/* "EINVAL" for 22 or -22 */
const char *hl_status_str(int status);	/* 0, -EINVAL, ioctl:EPERM ... */

/* ---- set up / tear down (lib/vm.c) ------------------------------------ */
void hl_init(void);		/* once per program: signals, stdout (lib/mailbox.c) */
/* 0 or -errno; on failure everything built so far is torn down */
int hl_vm_create(struct hl_vm *vm, const struct hl_vm_opts *opts);
/* threads stopped, perfmon fd closed, vCPU and VM fds closed, RAM unmapped */
void hl_vm_destroy(struct hl_vm *vm);
void hl_vm_close_pfm(struct hl_vm *vm);
void hl_vm_stop_threads(struct hl_vm *vm);
/* the options of a VM with @nr vCPUs, amd64 personality, default limits */
struct hl_vm_opts hl_vm_opts_simple(int nr_vcpus);
/* hl_vm_create with hl_vm_opts_simple(@nr_vcpus): all bound */
int hl_vm_simple(struct hl_vm *vm, int nr_vcpus);
/* PASS @name if @ret (hl_vm_create's) is 0, else FAIL saying why */
bool hl_check_vm(const char *name, int ret);
/*
 * open /dev/kvm-perfmon, BIND_VM, the event map and the memory table, as
 * hl_vm_create does
 */
int hl_vm_bind(struct hl_vm *vm);
/*
 * Guest memory, as QEMU's memory listener keeps it: KVM_SET_USER_MEMORY_
 * REGION of memslot @slot (@size 0 deletes it), then, if the VM is bound,
 * KVMPFM_SET_MEM_TABLE with every memslot (hl_mem_table_set). 0 or -errno.
 */
int hl_set_memslot(struct hl_vm *vm, uint32_t slot, uint32_t flags,
		   uint64_t gpa, uint64_t size, void *hva);
/*
 * KVMPFM_SET_MEM_TABLE on @pfm_fd with the VM's memslots: one region per
 * memslot, KVM_MEM_READONLY ones read-only. 0 or -errno.
 */
int hl_mem_table_set(struct hl_vm *vm, int pfm_fd);
int hl_vcpu_bind(struct hl_vcpu *v);	/* on the vCPU's thread */
int hl_vcpu_bind_fn(struct hl_vcpu *v, void *unused);	/* for hl_call */

uint64_t hl_gpa_alloc(struct hl_vm *vm, uint64_t bytes);
/*
 * The pages the module wrote since the last fetch (KVMPFM_GET_DIRTY_LOG
 * until nothing is left, as QEMU fetches at each sync of its migration
 * dirty log): a bit per 4 KiB page of guest RAM (gpa 0..HL_MEM_SIZE);
 * pages above it are not in the bitmap. 0 or -errno.
 */
#define HL_DIRTY_BYTES		(HL_MEM_SIZE / HL_PAGE / 8)
int hl_dirty_log(struct hl_vm *vm, uint8_t bitmap[HL_DIRTY_BYTES]);
/*
 * One KVMPFM_GET_DIRTY_LOG fetch into @gfns (room for @max): 0 or
 * -errno, the count in *@nr, KVMPFM's "more" in *@more.
 */
int hl_dirty_fetch(struct hl_vm *vm, uint64_t *gfns, uint32_t max,
		   uint32_t *nr, uint32_t *more);
static inline bool hl_dirty(const uint8_t *bitmap, uint64_t gpa)
{
	return bitmap[gpa / HL_PAGE / 8] & (1 << (gpa / HL_PAGE % 8));
}
static inline void *hl_hva(struct hl_vm *vm, uint64_t gpa)
{
	return vm->mem + gpa;
}

/* ---- calls on vCPU threads (lib/mailbox.c) ---------------------------- */
bool hl_on_vcpu(const struct hl_vcpu *v);
/*
 * @fn(@arg) on a new thread of its own (pinned as the vCPU threads are:
 * it may run a vCPU), joined: its return value
 */
int hl_on_new_thread(int (*fn)(void *), void *arg);
int hl_call(struct hl_vcpu *v, int (*fn)(struct hl_vcpu *, void *), void *arg);
void hl_call_async(struct hl_vcpu *v, int (*fn)(struct hl_vcpu *, void *),
		   void *arg);
int hl_call_wait(struct hl_vcpu *v);
/* no call is running on @v (hl_call_async's has returned) */
bool hl_call_done(struct hl_vcpu *v);
/* stop a hl_run_until_kicked() on @v: sets v->stop and signals until done */
int hl_kick_and_wait(struct hl_vcpu *v);

/* ---- commands (lib/cmd.c) ---------------------------------------------- */
/*
 * The calls are those of tests/common/cmdblock.h on v->cb, from any thread:
 * the block goes into the vCPU's block in guest RAM and DOORBELL is rung
 * from the vCPU's thread. They return hdr.status (0 or -errno), or
 * HL_IOCTL_ERR(errno) when the ioctl failed (v->cb.hdr is then the block's
 * header as the ioctl left it, the argument is not copied back).
 */
/* @len raw bytes as the whole block (header included); 0 or -errno */
int hl_doorbell_raw(struct hl_vcpu *v, const void *block, size_t len);
int hl_doorbell(struct hl_vcpu *v);	/* ring only; 0 or -errno */
/*
 * A cb_caller deliver for calls made on the vCPU's own thread (inside an
 * hl_call function): the command goes to the module from here, with no
 * hand-over to the thread and back (v->cb.deliver hands over).
 */
int hl_deliver_here(struct cb_caller *c, struct cb_cmd *cmd);
/*
 * From the calling thread, for tests that bind threads by hand: a
 * PMU_INFO block written at @block (the host view of the command block
 * of vCPU @index of binding @pfm_fd), DOORBELL. The ioctl's -errno, else
 * the block's status.
 */
int hl_pmu_info_doorbell(int pfm_fd, unsigned long index, void *block);

/*
 * Per-thread tally of every DOORBELL rung by hostlib on this thread: the
 * status each block came back with, or the ioctl's errno.
 */
#define HL_MAX_ERRNO	140
struct hl_hist {
	uint64_t doorbells, ok, other;
	volatile uint16_t cur_cmd;		/* the block being rung */
	volatile bool in_doorbell;
	uint64_t status[HL_MAX_ERRNO];		/* by -status */
	uint64_t ioctl_err[HL_MAX_ERRNO];	/* by errno */
};
void hl_hist_attach(struct hl_hist *h);	/* NULL: stop counting */

/*
 * A system-wide context on @v with @nsets event sets @d and @npmds PMDs
 * @p written, loaded; with @smpl_pages (0: none) guest pages from
 * @smpl_gpa on as its default-format sampling buffer. Returns its id, or
 * 0 after a note naming @who and the status.
 */
#define HL_SMPL_PAGES_MAX	64
uint32_t hl_sets_ctx(struct hl_vcpu *v, const char *who, pfarg_setdesc_t *d,
		     uint32_t nsets, pfarg_pmd_t *p, uint32_t npmds,
		     uint64_t smpl_gpa, uint32_t smpl_pages);
/* DESTROY each of the @n contexts @ids on @v, a teardown: no status kept */
void hl_destroy_ctxs(struct hl_vcpu *v, const uint32_t *ids, int n);
/*
 * CTX_STATE of @ctx through @c (v->cb, or a caller on the vCPU's own
 * thread): its PVPFM_CTX_* flags in *@flags (0 on failure), which tell a
 * masked context (notified, or saturated: masked without notification)
 * from a running one. Returns as cb_cmd().
 */
int hl_ctx_state(struct cb_caller *c, uint32_t ctx, uint32_t *flags);

/* ---- the guest running, on the vCPU thread (lib/run.c) ---------------- */
int hl_vcpu_setup(struct hl_vcpu *v, uint64_t rip, uint64_t rcx,
		  uint64_t rdx);
/* KVM_RUN until the OUT to HL_PORT_DONE; counts exits; 0 or -errno */
int hl_run_to_done(struct hl_vcpu *v);
/* @n (1..65535) OUTs to HL_PORT_IO; returns 0, exits in v->exits_* */
int hl_run_io(struct hl_vcpu *v, unsigned int n);
/*
 * KVM_RUN again and again until v->stop (hl_kick_and_wait): 0; or until
 * the guest's OUT to HL_PORT_DONE: 1
 */
int hl_run_until_kicked(struct hl_vcpu *v);

/*
 * From another thread: @v runs @n (1..65535) OUTs; if that takes longer
 * than @limit_ns of wall time it is kicked out of KVM_RUN. *done: 1 if
 * the guest finished. Returns the wall time taken.
 */
uint64_t hl_run_io_timed(struct hl_vcpu *v, unsigned int n, uint64_t limit_ns,
			 int *done);

uint64_t hl_eventfd_read(struct hl_vcpu *v);	/* 0 if nothing (lib/vm.c) */

/* ---- clocks (lib/clock.c) ---------------------------------------------- */
/*
 * On @v's thread: START @ctx, burn @ns of the thread's CPU, STOP. *cpu_ns
 * gets the thread's time from just before START to just after STOP as
 * hl_thread_span_end() tells it (what a task clock of the thread can
 * have counted), *busy_ns the CPU time spent burning. Returns the first
 * failing status, or 0.
 */
int hl_start_busy_stop(struct hl_vcpu *v, uint32_t ctx, uint64_t ns,
		       uint64_t *cpu_ns, uint64_t *busy_ns);
/*
 * A count of the thread's task clock is bracketed: at least the CPU time
 * spent between the doorbells that enabled and disabled counting (lower),
 * at most the thread's time from before the first to after the second
 * (upper, hl_thread_span_end()). Both widened by HL_BRACKET_REL (10%) +
 * HL_BRACKET_ABS (1 ms): on the TCG rig the task clock perf keeps for a
 * thread runs 1-7% ahead of the thread's CLOCK_THREAD_CPUTIME_ID over the
 * same interval, the more so the more interrupts the thread takes.
 */
#define HL_BRACKET_REL		0.10
#define HL_BRACKET_ABS		1000000ULL
bool hl_bracket(uint64_t val, uint64_t lower, uint64_t upper);
/* |got - want| <= rel * want + abs */
bool hl_within(uint64_t got, uint64_t want, double rel, uint64_t abs);

uint64_t hl_thread_ns(void);		/* CLOCK_THREAD_CPUTIME_ID */
/*
 * The calling thread's time over a span, by the larger of two clocks: its
 * CPU time (CLOCK_THREAD_CPUTIME_ID) and perf's task clock of it (a
 * PERF_COUNT_SW_TASK_CLOCK event of its own, counting only). The upper
 * bound of what a task-clock count of the thread (VCPU_RUN_NS) can hold:
 * in the rig's L1 perf's task clock now and then runs milliseconds ahead
 * of the CPU time, alike for any task-clock event of the thread, the
 * module's or not (tests/host/README: the figures). Without perf, the CPU
 * time alone.
 */
struct hl_thread_span {
	int fd;			/* the task-clock event, or -1 */
	uint64_t cpu0, task0;
};
void hl_thread_span_start(struct hl_thread_span *t);
uint64_t hl_thread_span_end(struct hl_thread_span *t);	/* closes it */
uint64_t hl_mono_ns(void);
/* context switches of the calling thread so far (getrusage) */
uint64_t hl_thread_csw(void);
/* burn this thread's CPU for @ns of its own CPU time */
void hl_busy_ns(uint64_t ns);
/* run_delay of host thread @tid (/proc/self/task/TID/schedstat), ns */
int hl_run_delay_ns(pid_t tid, uint64_t *ns);
/* CPU time of host thread @tid (schedstat's first field), ns */
int hl_thread_cpu_of(pid_t tid, uint64_t *ns);
int hl_pin_cpu(int cpu);		/* this thread to one CPU */

/* ---- users (lib/user.c) ------------------------------------------------ */
/* (a call made in a child process: t_child, tests/common/child.h) */
/* the uid and gid of the unprivileged user the tests drop to */
#define HL_NOBODY		65534
/* this process to HL_NOBODY, no supplementary groups: 0 or -errno */
int hl_drop_to_nobody(void);

/* ---- module stats (lib/stats.c) ---------------------------------------- */
int hl_module_stats(struct kvmpfm_module_stats *st);
int hl_vm_stats(struct hl_vm *vm, struct kvmpfm_vm_stats *st);
/* a module parameter's or sysctl's number: -1 if unreadable */
long hl_param_read(const char *path);
int hl_param_write(const char *path, long v);	/* 0 or -errno */
/* LIST_VMS: the ids bound now; returns how many (at most @room written) */
int hl_list_vms(int fd, uint64_t *ids, uint32_t room);
/* GET_SNAPSHOT of VM @id into @buf; *@size in: its room, out: as the call */
int hl_snapshot(int fd, uint64_t id, void *buf, uint32_t *size);
/*
 * The VM record of the snapshot of the one VM bound (a program's own):
 * 0, -ENOENT if none is, or as hl_snapshot(). Not thread-safe.
 */
int hl_only_vm_snap(int fd, struct kvmpfm_snap_vm *out);
/*
 * The module holds nothing: allocations, perf_events, pinned_pages, vms all
 * zero (the stats reader's own open file excepted, see lib/stats.c). Waits up
 * to @wait_ms for deferred teardown. Returns true and prints nothing if so;
 * else writes what is left to @why.
 */
bool hl_module_idle(int wait_ms, char *why, size_t why_len);
/* t_check(hl_module_idle(...)) with @name */
bool hl_check_module_idle(const char *name);

/* ---- module parameters: BIND_VM's limits (lib/limits.c) --------------- */
enum { HL_LIM_CONTEXTS, HL_LIM_SETS, HL_LIM_VECTOR, HL_LIM_SMPL_BUF,
	HL_LIM_N };
/* "max_contexts", "max_sets", "max_vector", "max_smpl_buf" */
extern const char *const hl_lim_name[HL_LIM_N];
/* the module's ceiling of limit @l, from its parameter; 0 if unreadable */
uint64_t hl_ceiling(int l);
void hl_lim_set(struct kvmpfm_bind_vm *b, int l, uint64_t v);
uint64_t hl_lim_of_bind(const struct kvmpfm_bind_vm *b, int l);
/* the limit as the guest sees it (PMU_INFO) */
uint64_t hl_lim_of_info(const struct pvpfm_pmu_info *i, int l);

/*
 * The module's allow_host_page_faults (off when loaded): a program that
 * counts HOST_PAGE_FAULTS turns it on first. Returns 0 or -errno.
 */
int hl_allow_host_page_faults(bool on);
/*
 * For a program that counts HOST_PAGE_FAULTS: hl_allow_host_page_faults
 * on, checked as "allow_host_page_faults"
 */
bool hl_check_allow_host_page_faults(void);

/* ---- L1's kernel log (lib/klog.c) -------------------------------------- */
/*
 * Lines of concern in the kernel log since hl_klog_start(): those that
 * match a pattern of the rig's bad-patterns (the file HL_BAD_PATTERNS in
 * the payload, one extended regexp a line, '#' comments: WARN, BUG
 * (soft lockups, KASAN, NULL pointers), oops, GP faults, call traces,
 * panics), or HL_KLOG_EXTRA (RCU stalls, hung tasks). Read from
 * /dev/kmsg, so that a run sees only its own lines. hl_klog_start()
 * returns a descriptor (or -errno); hl_klog_concerns() reads what came
 * since, prints the first @show matching lines (prefixed by @prefix) and
 * returns how many matched, or -errno (no patterns, no /dev/kmsg): a
 * caller treats that as a failure, not as a clean log.
 */
#define HL_BAD_PATTERNS		"bad-patterns"
#define HL_KLOG_EXTRA		"rcu.*(stall|self-detected)|blocked for more than"
int hl_klog_start(void);
int hl_klog_concerns(int fd, int show, const char *prefix);

#endif /* HOSTLIB_H */
