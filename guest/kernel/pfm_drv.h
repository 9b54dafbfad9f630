/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perfmon2.ko, the guest side of kvm-perfmon: private declarations.
 *
 *   pfm_dev.c      the pv-perfmon PCI device: command blocks (one per
 *                  vCPU), issuing commands, MSI-X, module init
 *   pfm_create.c   /dev/perfmon2: pfm_create_context
 *   pfm_ctxfd.c    a context's fd: the other eleven calls, close()
 *   pfm_notify.c   the host's notifications: messages (read(), poll(),
 *                  SIGIO) and PFM_FL_NOTIFY_BLOCK
 *   pfm_smplbuf.c  the sampling buffer: its memory, its pages given to the
 *                  host, mmap()
 *   pfm_hook.c     per-thread contexts following their thread: preempt
 *                  notifiers (SWITCH), attach through task_work, thread exit
 *   pfm_ptrace.c   who may attach to another thread: the kernel's ptrace
 *                  rules, through the module's own procfs
 *   pfm_sysfs.c    /sys/kernel/perfmon
 *   pfm_stats.c    v2.8x's per-CPU statistics (debugfs perfmon/cpuN/)
 *
 * Locking, in order: pfm_ctx.lock (mutex, one call at a time on a
 * context) -> runqueue lock (scheduler hooks only) -> pfm_hook.lock (raw
 * spinlock, interrupts off, against the scheduler hooks and the exit hook)
 * -> the command block of this CPU, which is used only with preemption
 * disabled, never from interrupts, and so never by two at once.
 * pfm_ctx.msg_lock (mutex) is never held with pfm_ctx.lock. pfm_notify_lock
 * (mutex, the list of open contexts) is a leaf: nothing is taken, nor
 * waited for, under it. A system-wide context's lock may be held while a
 * per-thread context's is taken (pfm_evict_thread_loads()), never the
 * other way.
 */
#ifndef _PFM_DRV_H
#define _PFM_DRV_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/sched.h>

#include "pfm_compat.h"
#include "../../include/uapi/pv_perfmon.h"

#define PFM_DRV_NAME		"perfmon2"

struct file;
struct vm_area_struct;
struct poll_table_struct;
struct fasync_struct;
struct mm_struct;
struct pfm_hook;
struct pfm_user;

/* a perfmon2 context: one per context fd */
struct pfm_ctx {
	u32 id;				/* the host's context id */
	u32 flags;			/* PFM_FL_* */
	struct mutex lock;		/* one call at a time; guards hook */
	struct pfm_hook *hook;		/* per-thread: where it is loaded */
	bool sys_loaded;		/* system-wide: loaded (lock) */
	struct pfm_user *user;		/* charged to, NULL: exempt (root) */
	/* its creator could make system-wide ones (sys_group, CAP_SYS_ADMIN) */
	bool admin;
	/*
	 * the "default" format's buffer, mapped read-only by mmap(); set
	 * before the fd exists, freed after close()
	 */
	void *smpl_buf;
	unsigned long smpl_pages;
	struct mm_struct *smpl_mm;	/* charged for RLIMIT_MEMLOCK */
	/* one message read ahead from the host, for poll() and SIGIO */
	struct mutex msg_lock;		/* msg_ready and msg */
	bool msg_ready;
	pfarg_msg_t msg;
	struct fasync_struct *fasync;
	/* NO_MSG: SIGIO sent for this masking (lock); restart re-arms it */
	bool nomsg_signalled;
	/*
	 * close() began: no command for the context any more, its id may be
	 * another context's soon. Set under msg_lock before the DESTROY,
	 * which is sent under lock: read under either.
	 */
	bool closed;
	int destroyed;			/* the host's answer to DESTROY */
	/* the fd's, and the notification work's while it visits */
	refcount_t refs;
	struct list_head node;		/* on pfm_notify_ctxs */
	struct list_head visit;		/* the notification work's own */
};

/*
 * One command for the host. pfm_dev_exec() returns 0 when the host ran it
 * (its answer is then in @status, @err_index, @ctx_id, @count and the
 * argument, copied back in place), or a negative errno when the command
 * never reached the host (no device, no command block, no answer).
 */
struct pfm_dev_req {
	u16 cmd;		/* enum pvpfm_cmd */
	u32 ctx_id;		/* in; out: the new context of CREATE */
	u32 count;		/* in: vector entries; out: REG_DESC entries */
	void *arg;		/* in/out, kernel memory */
	u32 arg_size;
	s32 status;		/* out: 0 or -errno from the host */
	u32 err_index;		/* out: first failing entry */
};

int pfm_dev_exec(struct pfm_dev_req *req);
/* the same, for callers that already disabled preemption */
int pfm_dev_exec_locked(struct pfm_dev_req *req);
/* pfm_dev_exec() folded into one errno: the host's or the transport's */
int pfm_dev_call(struct pfm_dev_req *req);

/* what the device and the host said at probe time */
struct pfm_dev_info {
	u32 abi_version;
	u32 features;		/* PVPFM_F_* */
	u32 nr_vcpus;
	u32 personality;	/* PVPFM_PERS_* */
	u32 counters;
	int nr_irqs;		/* MSI-X vectors in use, 0: none */
	struct pvpfm_pmu_info pmu;
	struct pvpfm_reg_desc *regs;	/* PMCs then PMDs, in index order */
	u32 nr_regs;
};

extern struct pfm_dev_info pfm_dev_info;

struct pfm_dev_stats {
	atomic64_t commands;
	atomic64_t lost;		/* commands the host never answered */
	atomic64_t switches;		/* SWITCH commands */
	atomic64_t switch_errors;
	atomic_t last_switch_error;
};

extern struct pfm_dev_stats pfm_dev_stats;

/* v2.8x's per-CPU statistics this driver keeps (pfm_stats.c) */
enum pfm_stat {
	PFM_ST_OVFL_INTR_ALL_COUNT,	/* pv-perfmon interrupts */
	PFM_ST_OVFL_INTR_NS,		/* time in their handler */
	PFM_ST_HANDLE_WORK_COUNT,	/* runs of the notification work */
	PFM_ST_OVFL_NOTIFY_COUNT,	/* messages fetched for a context */
	PFM_ST_PFM_RESTART_COUNT,	/* pfm_restart calls */
	PFM_ST_CTXSWIN_COUNT,		/* SWITCHes bringing a context in */
	PFM_ST_CTXSWIN_NS,		/* their doorbells' time */
	PFM_ST_CTXSWOUT_COUNT,		/* SWITCHes taking a context out */
	PFM_ST_CTXSWOUT_NS,		/* of those that bring none in */
	PFM_ST_NR
};

struct pfm_cpu_stats {
	u64 v[PFM_ST_NR];	/* this CPU's only: this_cpu_add() */
};

DECLARE_PER_CPU(struct pfm_cpu_stats, pfm_cpu_stats);

static inline void pfm_stat_add(enum pfm_stat st, u64 n)
{
	this_cpu_add(pfm_cpu_stats.v[st], n);
}

void pfm_stats_init(void);
void pfm_stats_exit(void);
void pfm_stats_reset(void);

/*
 * perfmon2's session counts: per-thread contexts loaded (their hook
 * active: pfm_hook.c) and system-wide ones loaded (pfm_ctxfd.c)
 */
extern atomic_t pfm_task_sessions, pfm_sys_sessions;

/* the sysfs controls (pfm_sysfs.c validates what is written) */
struct pfm_controls {
	int task_group;			/* -1: any group */
	int sys_group;			/* -1: any group */
	u32 arg_mem_max;		/* bytes per vector argument */
	u64 smpl_buffer_mem_max;	/* bytes of all sampling buffers */
	u32 max_ctx_per_user;		/* contexts alive per uid, root exempt */
	bool user_kernel_ip;		/* kernel IPs for any user's contexts */
	int debug;			/* perfmon2's debug level: kept, unused */
};

extern struct pfm_controls pfm_controls;

/* pfm_create.c */
int pfm_create_init(void);
void pfm_create_exit(void);
void pfm_user_uncharge(struct pfm_ctx *ctx);

/* pfm_ctxfd.c */
int pfm_ctx_new_fd(struct pfm_ctx *ctx, bool cloexec);
void pfm_ctx_free(struct pfm_ctx *ctx, int destroyed);
void pfm_ctx_put(struct pfm_ctx *ctx);

/* pfm_notify.c */
void pfm_notify_irq(void);
void pfm_notify_add(struct pfm_ctx *ctx);
void pfm_notify_del(struct pfm_ctx *ctx);
int pfm_notify_collect(struct pfm_ctx ***ctxs,
		       bool (*want)(const struct pfm_ctx *ctx));
ssize_t pfm_notify_read(struct file *file, char __user *buf, size_t size,
			loff_t *ppos);
__poll_t pfm_notify_poll(struct file *file, struct poll_table_struct *wait);
int pfm_notify_fasync(int fd, struct file *file, int on);
void pfm_notify_init(void);
void pfm_notify_exit(void);

/* pfm_smplbuf.c */
extern atomic64_t pfm_smpl_mem_cur;	/* bytes of all sampling buffers */
int pfm_smplbuf_alloc(struct pfm_ctx *ctx, u64 size);
void pfm_smplbuf_free(struct pfm_ctx *ctx, int destroyed);
int pfm_smplbuf_register(struct pfm_ctx *ctx);
int pfm_smplbuf_mmap(struct file *file, struct vm_area_struct *vma);

/* pfm_hook.c */
int pfm_hooks_init(void);
void pfm_hooks_exit(void);
struct pfm_hook *pfm_hook_alloc(u32 ctx_id, struct task_struct *task);
int pfm_hook_load_self(struct pfm_hook *h, struct pfm_dev_req *load);
int pfm_hook_attach(struct pfm_hook *h);
bool pfm_hook_active(struct pfm_hook *h);
bool pfm_hook_stop(struct pfm_hook *h, struct pfm_dev_req *req, int *ret);
bool pfm_hook_may_block(struct pfm_hook *h);
void pfm_hook_block(struct pfm_hook *h);
void pfm_hook_unblock(struct pfm_hook *h);
void pfm_hook_release(struct pfm_hook *h);

/* pfm_ptrace.c */
int pfm_ptrace_init(void);
void pfm_ptrace_exit(void);
int pfm_may_attach(struct task_struct *task);

/* pfm_sysfs.c */
int pfm_sysfs_init(void);
void pfm_sysfs_exit(void);

#endif /* _PFM_DRV_H */
