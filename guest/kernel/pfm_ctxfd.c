// SPDX-License-Identifier: GPL-2.0
/*
 * A context's fd: the eleven perfmon2 calls after pfm_create_context, as
 * ioctls (include/uapi/perfmon2_ioctl.h), and close(), which destroys the
 * context. Each call copies its arguments in first (that may fault), then
 * makes exactly one host command (one VM exit), then copies the results
 * out: for vector calls the whole vector, also when the call failed, since
 * perfmon2 programs look at the per-entry flags to see which entry was
 * refused.
 *
 * Checks made here, before the host is asked: the vector limits
 * (arg_mem_max and the host's max_vector: E2BIG), who may attach to a
 * thread (whoever may ptrace it, pfm_ptrace.c: EPERM otherwise), and that
 * a system-wide context names an online CPU (EINVAL); its load is issued
 * from that CPU. Everything else is the host's to decide: its errno is
 * the call's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include "pfm_drv.h"
#include "../../include/uapi/perfmon2_ioctl.h"

/*
 * One ioctl of the context fd (pfm_ctx_iocs[], the driver's side of the
 * engine's cmd_table in kvm/engine/pfm_cmd.c): the command it forwards,
 * whose nr it carries (perfmon2_ioctl.h), and what it takes from the
 * caller.
 */
struct pfm_ctx_ioc {
	unsigned int ioc;		/* PFM2_IOC_* */
	u16 cmd;			/* PVPFM_CMD_* */
	u32 esize;			/* bytes per vector entry; 0: no vector */
	long (*call)(struct pfm_ctx *ctx, const struct pfm_ctx_ioc *d,
		     void __user *uarg);
};

/* @destroyed: the host's answer to DESTROY, 0 if it was never created */
void pfm_ctx_free(struct pfm_ctx *ctx, int destroyed)
{
	pfm_user_uncharge(ctx);
	pfm_smplbuf_free(ctx, destroyed);
	kfree(ctx);
}

/*
 * UNLOAD or DESTROY: an active hook sends it, so that no SWITCH for the
 * context is in flight after it (pfm_hook_stop()); then the context has
 * no hook. A hook that is not active any more (its thread ended, which
 * unloaded the context): the host answers (UNLOAD: 0, nothing to do).
 */
atomic_t pfm_sys_sessions = ATOMIC_INIT(0);

/* ctx->lock held: a system-wide context's load or unload went through */
static void pfm_ctx_sys_loaded(struct pfm_ctx *ctx, bool loaded)
{
	if (ctx->sys_loaded == loaded)
		return;
	ctx->sys_loaded = loaded;
	atomic_add(loaded ? 1 : -1, &pfm_sys_sessions);
}

static int pfm_ctx_detach(struct pfm_ctx *ctx, struct pfm_dev_req *req)
{
	int ret = 0;

	mutex_lock(&ctx->lock);
	if (!ctx->hook || !pfm_hook_stop(ctx->hook, req, &ret))
		ret = pfm_dev_call(req);
	/* closed, it is gone whatever the host answered */
	if (!ret || req->cmd == PVPFM_CMD_DESTROY_CONTEXT)
		pfm_ctx_sys_loaded(ctx, false);
	if (ctx->hook)
		pfm_hook_release(ctx->hook);
	ctx->hook = NULL;
	ctx->nomsg_signalled = false;
	mutex_unlock(&ctx->lock);
	return ret;
}

/* the last reference frees the context, after its DESTROY */
void pfm_ctx_put(struct pfm_ctx *ctx)
{
	if (refcount_dec_and_test(&ctx->refs))
		pfm_ctx_free(ctx, ctx->destroyed);
}

static int pfm_ctx_release(struct inode *inode, struct file *file)
{
	struct pfm_ctx *ctx = file->private_data;
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_DESTROY_CONTEXT,
		.ctx_id = ctx->id,
	};
	int ret;

	pfm_notify_del(ctx);
	ret = pfm_ctx_detach(ctx, &req);
	if (ret && ret != -ENODEV)
		pr_debug("context %u: DESTROY: %d\n", ctx->id, ret);
	ctx->destroyed = ret;
	pfm_ctx_put(ctx);
	return 0;
}

/* one non-vector call under the context lock */
static long pfm_ctx_call(struct pfm_ctx *ctx, struct pfm_dev_req *req)
{
	int ret;

	mutex_lock(&ctx->lock);
	ret = pfm_dev_call(req);
	mutex_unlock(&ctx->lock);
	return ret;
}

/*
 * An emulated event's mark (pv_perfmon.h): bit 29 in the command block,
 * bit 27 for programs. A stale mark from a reused vector goes on the way
 * in, as the host clears its return flags.
 */
static void pmc_marks_to_host(pfarg_pmc_t *pc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pc[i].reg_flags &= ~PVPFM_REG_RETFL_EMULATED;
}

static void pmc_marks_from_host(pfarg_pmc_t *pc, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!(pc[i].reg_flags & PVPFM_CMD_RETFL_EMULATED))
			continue;
		pc[i].reg_flags &= ~PVPFM_CMD_RETFL_EMULATED;
		pc[i].reg_flags |= PVPFM_REG_RETFL_EMULATED;
	}
}

/*
 * The vector calls. Limits first (E2BIG, without asking the host), then
 * the vector is copied in, sent, and copied back whatever the answer.
 */
static long pfm_vector_call(struct pfm_ctx *ctx, const struct pfm_ctx_ioc *d,
			    void __user *uarg)
{
	struct pfm2_vec_arg v;
	struct pfm_dev_req req;
	void __user *uvec;
	void *vec = NULL;
	size_t size;
	int ret;

	if (copy_from_user(&v, uarg, sizeof(v)))
		return -EFAULT;
	if (v.reserved || v.count < 0)
		return -EINVAL;
	size = (size_t)v.count * d->esize;
	if (v.count > pfm_dev_info.pmu.max_vector ||
	    size > READ_ONCE(pfm_controls.arg_mem_max) ||
	    size > PVPFM_CMD_ARGS_MAX)
		return -E2BIG;
	uvec = u64_to_user_ptr(v.req);
	if (size) {
		vec = memdup_user(uvec, size);
		if (IS_ERR(vec))
			return PTR_ERR(vec);
	}
	req = (struct pfm_dev_req){
		.cmd = d->cmd,
		.ctx_id = ctx->id,
		.count = v.count,
		.arg = vec,
		.arg_size = size,
	};
	if (d->cmd == PVPFM_CMD_WRITE_PMCS)
		pmc_marks_to_host(vec, v.count);
	mutex_lock(&ctx->lock);
	ret = pfm_dev_exec(&req);
	mutex_unlock(&ctx->lock);
	if (!ret) {
		ret = req.status;
		if (d->cmd == PVPFM_CMD_WRITE_PMCS)
			pmc_marks_from_host(vec, v.count);
		if (size && copy_to_user(uvec, vec, size) && !ret)
			ret = -EFAULT;
	}
	kfree(vec);
	return ret;
}

static struct task_struct *pfm_get_task(u32 vpid)
{
	struct task_struct *task;
	struct pid *pid;

	if (!vpid || vpid > PID_MAX_LIMIT)
		return NULL;
	pid = find_get_pid(vpid);
	if (!pid)
		return NULL;
	task = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	return task;
}

/*
 * A per-thread load. Another thread needs the right to ptrace it
 * (pfm_may_attach()), not being its tracer, nor having it stopped:
 * perfmon2 wanted it stopped only to reach the thread's PMU state, which
 * here the host keeps, and the thread links the context itself when it
 * next returns to user mode (pfm_hook_attach()). The hook is made before
 * the check: it notes which exec of the thread the check is about, and a
 * setuid exec between the check and the link unloads the context there.
 */
static int pfm_load_thread(struct pfm_ctx *ctx, struct pfm_dev_req *req)
{
	struct pvpfm_load_arg *arg = req->arg;
	struct task_struct *task;
	struct pfm_hook *h;
	int ret;

	if (ctx->hook) {
		if (pfm_hook_active(ctx->hook))
			return -EBUSY;
		/* its thread ended: the context is unloaded, forget the hook */
		pfm_hook_release(ctx->hook);
		ctx->hook = NULL;
	}
	task = pfm_get_task(arg->load.load_pid);
	if (!task)
		return -ESRCH;
	h = pfm_hook_alloc(ctx->id, task);
	if (!h) {
		ret = -ENOMEM;
		goto out;
	}
	ret = task == current ? 0 : pfm_may_attach(task);
	if (ret)
		goto release;
	/* the host knows threads by their ids in the initial namespace */
	arg->load.load_pid = task->pid;
	arg->tgid = task->tgid;
	if (task == current) {
		arg->flags = PVPFM_LOAD_SELF;
		ret = pfm_hook_load_self(h, req);
	} else {
		ret = pfm_dev_call(req);
		if (!ret)
			ret = pfm_hook_attach(h);
	}
release:
	if (ret)
		pfm_hook_release(h);
	else
		ctx->hook = h;
out:
	put_task_struct(task);
	return ret;
}

/*
 * The host loads a system-wide context on the vCPU the LOAD comes from:
 * issue it there. -EXDEV (never the host's) when not on that CPU.
 */
static long pfm_load_system_on(void *data)
{
	struct pfm_dev_req *req = data;
	struct pvpfm_load_arg *arg = req->arg;
	long ret;

	preempt_disable();
	if (arg->load.load_pid != smp_processor_id()) {
		ret = -EXDEV;
	} else {
		ret = pfm_dev_exec_locked(req);
		if (!ret)
			ret = req->status;
	}
	preempt_enable();
	return ret;
}

/*
 * perfmon2 loaded a system-wide context from the CPU it monitors only
 * (EINVAL elsewhere). A caller on another CPU has the load made there by
 * a work item bound to that CPU: pinning is not its job.
 */
static int pfm_load_system(struct pfm_dev_req *req)
{
	struct pvpfm_load_arg *arg = req->arg;
	u32 cpu = arg->load.load_pid;
	long ret;

	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	ret = pfm_load_system_on(req);
	if (ret != -EXDEV)
		return ret;
	/* a CPU unplugged meanwhile: -ENODEV, as pfm_work_on_cpu_safe() says */
	ret = pfm_work_on_cpu_safe(cpu, pfm_load_system_on, req);
	return ret == -EXDEV ? -EINVAL : ret;
}

static bool pfm_ctx_evictable(const struct pfm_ctx *ctx)
{
	return !ctx->admin && !(ctx->flags & PFM_FL_SYSTEM_WIDE);
}

/*
 * perfmon2's rule: per-thread and system-wide monitoring exclude each
 * other (machine-wide there, VM-wide here: the host refuses either load,
 * EBUSY, while the other kind is loaded). Any user's context loaded on a
 * thread that never ends would then keep the admin's system-wide
 * monitoring out for as long as that user liked. So a system-wide load
 * refused that way unloads the per-thread contexts of the users who may
 * not monitor system-wide themselves (not in sys_group, no CAP_SYS_ADMIN
 * when they created them); their monitors get PFM_MSG_END, as at the end
 * of their thread, and may load again once the system-wide context is
 * gone. The admins' own per-thread contexts keep perfmon2's rule.
 * Returns how many were unloaded.
 */
static int pfm_evict_thread_loads(void)
{
	struct pvpfm_unload_arg arg = { .flags = PVPFM_UNLOAD_TASK_EXIT };
	struct pfm_ctx **ctxs, *c;
	struct pfm_dev_req req;
	int n, i, ret, evicted = 0;

	n = pfm_notify_collect(&ctxs, pfm_ctx_evictable);
	for (i = 0; i < n; i++) {
		c = ctxs[i];
		req = (struct pfm_dev_req){
			.cmd = PVPFM_CMD_UNLOAD_CONTEXT,
			.ctx_id = c->id,
			.arg = &arg,
			.arg_size = sizeof(arg),
		};
		mutex_lock(&c->lock);
		/* closed: its id may be another context's already */
		if (!READ_ONCE(c->closed) && c->hook &&
		    pfm_hook_stop(c->hook, &req, &ret)) {
			pfm_hook_release(c->hook);
			c->hook = NULL;
			c->nomsg_signalled = false;
			evicted += !ret;
		}
		mutex_unlock(&c->lock);
		pfm_ctx_put(c);
	}
	kfree(ctxs);
	return evicted;
}

static long pfm_load(struct pfm_ctx *ctx, const struct pfm_ctx_ioc *d,
		     void __user *uarg)
{
	struct pvpfm_load_arg arg = { };
	struct pfm_dev_req req = {
		.cmd = d->cmd,
		.ctx_id = ctx->id,
		.arg = &arg,
		.arg_size = sizeof(arg),
	};
	int ret;

	if (copy_from_user(&arg.load, uarg, sizeof(arg.load)))
		return -EFAULT;
	mutex_lock(&ctx->lock);
	if (ctx->flags & PFM_FL_SYSTEM_WIDE) {
		ret = pfm_load_system(&req);
		/* once: a user who loads again meanwhile wins this time */
		if (ret == -EBUSY && pfm_evict_thread_loads())
			ret = pfm_load_system(&req);
		if (!ret)
			pfm_ctx_sys_loaded(ctx, true);
	} else
		ret = pfm_load_thread(ctx, &req);
	if (!ret)
		ctx->nomsg_signalled = false;
	mutex_unlock(&ctx->lock);
	return ret;
}

static long pfm_unload(struct pfm_ctx *ctx, const struct pfm_ctx_ioc *d,
		       void __user *uarg)
{
	struct pfm_dev_req req = { .cmd = d->cmd, .ctx_id = ctx->id };

	return pfm_ctx_detach(ctx, &req);
}

/*
 * Resume after a notification; a blocked thread goes on in any case, and
 * the next masking of a NO_MSG context gets its SIGIO.
 */
static long pfm_restart(struct pfm_ctx *ctx, const struct pfm_ctx_ioc *d,
			void __user *uarg)
{
	struct pfm_dev_req req = { .cmd = d->cmd, .ctx_id = ctx->id };
	int ret;

	pfm_stat_add(PFM_ST_PFM_RESTART_COUNT, 1);
	mutex_lock(&ctx->lock);
	ret = pfm_dev_call(&req);
	ctx->nomsg_signalled = false;
	if (ctx->hook)
		pfm_hook_unblock(ctx->hook);
	mutex_unlock(&ctx->lock);
	return ret;
}

static long pfm_start(struct pfm_ctx *ctx, const struct pfm_ctx_ioc *d,
		      void __user *uarg)
{
	struct pfm_dev_req req = { .cmd = d->cmd, .ctx_id = ctx->id };
	pfarg_start_t start;

	if (uarg) {
		if (copy_from_user(&start, uarg, sizeof(start)))
			return -EFAULT;
		req.arg = &start;
		req.arg_size = sizeof(start);
	}
	return pfm_ctx_call(ctx, &req);
}

static long pfm_stop(struct pfm_ctx *ctx, const struct pfm_ctx_ioc *d,
		     void __user *uarg)
{
	struct pfm_dev_req req = { .cmd = d->cmd, .ctx_id = ctx->id };

	return pfm_ctx_call(ctx, &req);
}

static const struct pfm_ctx_ioc pfm_ctx_iocs[] = {
	{ PFM2_IOC_WRITE_PMCS, PVPFM_CMD_WRITE_PMCS,
		sizeof(pfarg_pmc_t), pfm_vector_call },
	{ PFM2_IOC_WRITE_PMDS, PVPFM_CMD_WRITE_PMDS,
		sizeof(pfarg_pmd_t), pfm_vector_call },
	{ PFM2_IOC_READ_PMDS, PVPFM_CMD_READ_PMDS,
		sizeof(pfarg_pmd_t), pfm_vector_call },
	{ PFM2_IOC_LOAD_CONTEXT, PVPFM_CMD_LOAD_CONTEXT, 0, pfm_load },
	{ PFM2_IOC_START, PVPFM_CMD_START, 0, pfm_start },
	{ PFM2_IOC_STOP, PVPFM_CMD_STOP, 0, pfm_stop },
	{ PFM2_IOC_RESTART, PVPFM_CMD_RESTART, 0, pfm_restart },
	{ PFM2_IOC_CREATE_EVTSETS, PVPFM_CMD_CREATE_EVTSETS,
		sizeof(pfarg_setdesc_t), pfm_vector_call },
	{ PFM2_IOC_GETINFO_EVTSETS, PVPFM_CMD_GETINFO_EVTSETS,
		sizeof(pfarg_setinfo_t), pfm_vector_call },
	{ PFM2_IOC_DELETE_EVTSETS, PVPFM_CMD_DELETE_EVTSETS,
		sizeof(pfarg_setdesc_t), pfm_vector_call },
	{ PFM2_IOC_UNLOAD_CONTEXT, PVPFM_CMD_UNLOAD_CONTEXT, 0, pfm_unload },
};

static long pfm_ctx_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	const struct pfm_ctx_ioc *d;

	for (d = pfm_ctx_iocs; d < pfm_ctx_iocs + ARRAY_SIZE(pfm_ctx_iocs); d++)
		if (d->ioc == cmd)
			return d->call(file->private_data, d,
				       (void __user *)arg);
	return -ENOTTY;
}

static const struct file_operations pfm_ctx_fops = {
	.owner = THIS_MODULE,
	.release = pfm_ctx_release,
	.unlocked_ioctl = pfm_ctx_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = pfm_notify_read,
	.poll = pfm_notify_poll,
	.fasync = pfm_notify_fasync,
	.mmap = pfm_smplbuf_mmap,
	.llseek = noop_llseek,
};

/* the context's fd ("[perfmon2]"), or a negative errno */
int pfm_ctx_new_fd(struct pfm_ctx *ctx, bool cloexec)
{
	return anon_inode_getfd("[perfmon2]", &pfm_ctx_fops, ctx,
				O_RDWR | (cloexec ? O_CLOEXEC : 0));
}

