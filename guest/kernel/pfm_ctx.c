// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/perfmon2 and the context fds: the perfmon2 interface.
 *
 * PFM2_IOC_CREATE_CONTEXT on /dev/perfmon2 creates a context on the host
 * and returns a new fd ("[perfmon2]"); the other eleven calls are ioctls
 * on that fd (perfmon2_ioctl.h); close() destroys the context. Each call
 * copies its arguments in first (that may fault), then makes exactly one
 * host command (one VM exit), then copies the results out: for vector
 * calls the whole vector, also when the call failed, since perfmon2
 * programs look at the per-entry flags to see which entry was refused.
 *
 * Checks made here, before the host is asked: the vector limits
 * (arg_mem_max and the host's max_vector: E2BIG), who may create which
 * context (task_group, sys_group, CAP_SYS_ADMIN: EPERM), who may attach to
 * a thread (its ptrace tracer: EPERM; it must be stopped: EBUSY), that a
 * system-wide context is loaded from its CPU (EINVAL), and the sampling
 * buffer limits (smpl_buffer_mem_max, RLIMIT_MEMLOCK, the host's maximum:
 * ENOMEM). Everything else is the host's to decide: its errno is the
 * call's.
 *
 * Messages: read() returns one pfarg_msg_t (PVPFM_CMD_READ_MSG); poll()
 * and SIGIO wake up on the device's MSI-X interrupts, or every
 * PFM_MSG_POLL when the device has none.
 *
 * PFM_FL_NOTIFY_BLOCK: after such an interrupt, each loaded context created
 * with it (and only those: other contexts cost no command) asks the host
 * whether it blocked (PVPFM_CMD_CTX_STATE); if so its thread is stopped
 * on its way to user mode (pfm_hook_block()) until pfm_restart, unload or
 * close. The context's lock orders the question against pfm_restart.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include "pfm_drv.h"
#include "../../include/uapi/perfmon2_ioctl.h"

/* how often messages are looked for when the device has no interrupts */
#define PFM_MSG_POLL		(HZ / 10)
/* a blocked read() asks the host again after this, interrupt or not */
#define PFM_MSG_RECHECK		HZ

struct pfm_ctx {
	u32 id;				/* the host's context id */
	u32 flags;			/* PFM_FL_* */
	struct mutex lock;		/* one call at a time */
	struct pfm_hook *hook;		/* per-thread: where it is loaded */
	/* the "default" format's buffer, mapped read-only by mmap() */
	void *smpl_buf;
	unsigned long smpl_pages;
	struct mm_struct *smpl_mm;	/* charged for RLIMIT_MEMLOCK */
	/* one message read ahead from the host, for poll() and SIGIO */
	struct mutex msg_lock;
	bool msg_ready;
	pfarg_msg_t msg;
	struct fasync_struct *fasync;
	struct list_head node;		/* on pfm_ctxs */
};

static LIST_HEAD(pfm_ctxs);
static DEFINE_MUTEX(pfm_ctxs_lock);

DECLARE_WAIT_QUEUE_HEAD(pfm_msg_wq);
atomic_t pfm_msg_seq;
atomic64_t pfm_smpl_mem_cur;

static void pfm_msg_work_fn(struct work_struct *work);
static void pfm_msg_poll_fn(struct work_struct *work);
static DECLARE_WORK(pfm_msg_work, pfm_msg_work_fn);
static DECLARE_DELAYED_WORK(pfm_msg_poll, pfm_msg_poll_fn);

/* messages */

/* from the MSI-X handler: some context of some vCPU has a message */
void pfm_msg_irq(void)
{
	atomic_inc(&pfm_msg_seq);
	wake_up_interruptible_all(&pfm_msg_wq);
	schedule_work(&pfm_msg_work);
}

/* read one message ahead (msg_lock held): 0, -EAGAIN if none, or error */
static int pfm_msg_fetch(struct pfm_ctx *ctx)
{
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_READ_MSG,
		.ctx_id = ctx->id,
		.arg = &ctx->msg,
		.arg_size = sizeof(ctx->msg),
	};
	int ret;

	if (ctx->msg_ready)
		return 0;
	ret = pfm_dev_call(&req);
	if (!ret) {
		ctx->msg_ready = true;
		/*
		 * A new message: SIGIO, whoever fetched it (perfmon2 signals
		 * every notification, even to a process blocked in read()).
		 */
		if (READ_ONCE(ctx->fasync))
			kill_fasync(&ctx->fasync, SIGIO, POLL_IN);
	}
	return ret;
}

static bool pfm_msg_pending(struct pfm_ctx *ctx)
{
	bool ready;

	mutex_lock(&ctx->msg_lock);
	ready = !pfm_msg_fetch(ctx);
	mutex_unlock(&ctx->msg_lock);
	return ready;
}

/* NOTIFY_BLOCK: did the host block the context? Then stop its thread */
static void pfm_block_check(struct pfm_ctx *ctx)
{
	struct pvpfm_ctx_state st;
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_CTX_STATE,
		.ctx_id = ctx->id,
		.arg = &st,
		.arg_size = sizeof(st),
	};

	mutex_lock(&ctx->lock);
	if (ctx->hook && pfm_hook_may_block(ctx->hook) && !pfm_dev_call(&req) &&
	    (st.flags & PVPFM_CTX_BLOCKED))
		pfm_hook_block(ctx->hook);
	mutex_unlock(&ctx->lock);
}

/*
 * After an interrupt: blocking for the NOTIFY_BLOCK contexts, SIGIO for
 * the contexts that asked for it and have a new message.
 */
static void pfm_msg_work_fn(struct work_struct *work)
{
	struct pfm_ctx *ctx;

	mutex_lock(&pfm_ctxs_lock);
	list_for_each_entry(ctx, &pfm_ctxs, node) {
		if (ctx->flags & PFM_FL_NOTIFY_BLOCK)
			pfm_block_check(ctx);
		/* fetching a new message sends the SIGIO */
		if (READ_ONCE(ctx->fasync))
			pfm_msg_pending(ctx);
	}
	mutex_unlock(&pfm_ctxs_lock);
}

/* no interrupts: look for messages periodically while contexts exist */
static void pfm_msg_poll_fn(struct work_struct *work)
{
	bool any;

	mutex_lock(&pfm_ctxs_lock);
	any = !list_empty(&pfm_ctxs);
	mutex_unlock(&pfm_ctxs_lock);
	if (!any)
		return;
	pfm_msg_irq();
	schedule_delayed_work(&pfm_msg_poll, PFM_MSG_POLL);
}

static ssize_t pfm_ctx_read(struct file *file, char __user *buf, size_t size,
			    loff_t *ppos)
{
	struct pfm_ctx *ctx = file->private_data;
	pfarg_msg_t msg;
	long left;
	int seq, ret;

	if (size < sizeof(msg))
		return -EINVAL;
	for (;;) {
		seq = atomic_read(&pfm_msg_seq);
		if (mutex_lock_interruptible(&ctx->msg_lock))
			return -ERESTARTSYS;
		ret = pfm_msg_fetch(ctx);
		if (!ret) {
			msg = ctx->msg;
			ctx->msg_ready = false;
		}
		mutex_unlock(&ctx->msg_lock);
		if (ret != -EAGAIN)
			break;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		left = wait_event_interruptible_timeout(pfm_msg_wq,
							atomic_read(&pfm_msg_seq) != seq,
							PFM_MSG_RECHECK);
		if (left < 0)
			return -ERESTARTSYS;
	}
	if (ret)
		return ret;
	if (copy_to_user(buf, &msg, sizeof(msg)))
		return -EFAULT;
	return sizeof(msg);
}

static __poll_t pfm_ctx_poll(struct file *file, poll_table *wait)
{
	struct pfm_ctx *ctx = file->private_data;

	poll_wait(file, &pfm_msg_wq, wait);
	return pfm_msg_pending(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int pfm_ctx_fasync(int fd, struct file *file, int on)
{
	struct pfm_ctx *ctx = file->private_data;

	return fasync_helper(fd, file, on, &ctx->fasync);
}

/* the sampling buffer */

static int pfm_smpl_alloc(struct pfm_ctx *ctx, u64 size)
{
	u64 max = READ_ONCE(pfm_controls.smpl_buffer_mem_max);
	unsigned long pages;
	u64 bytes;
	int ret;

	if (!size)
		return -EINVAL;
	/* the host's limit (and its errno) before any allocation here */
	if (size > pfm_dev_info.pmu.max_smpl_buf || size > max)
		return -ENOMEM;
	pages = PAGE_ALIGN(size) >> PAGE_SHIFT;
	bytes = (u64)pages << PAGE_SHIFT;
	if (atomic64_add_return(bytes, &pfm_smpl_mem_cur) > max) {
		ret = -ENOMEM;
		goto uncount;
	}
	ret = account_locked_vm(current->mm, pages, true);
	if (ret)
		goto uncount;
	ctx->smpl_buf = vmalloc_user(bytes);
	if (!ctx->smpl_buf) {
		account_locked_vm(current->mm, pages, false);
		ret = -ENOMEM;
		goto uncount;
	}
	ctx->smpl_mm = current->mm;
	mmgrab(ctx->smpl_mm);
	ctx->smpl_pages = pages;
	return 0;
uncount:
	atomic64_sub(bytes, &pfm_smpl_mem_cur);
	return ret;
}

static void pfm_smpl_free(struct pfm_ctx *ctx)
{
	if (!ctx->smpl_buf)
		return;
	vfree(ctx->smpl_buf);
	account_locked_vm(ctx->smpl_mm, ctx->smpl_pages, false);
	mmdrop(ctx->smpl_mm);
	atomic64_sub((u64)ctx->smpl_pages << PAGE_SHIFT, &pfm_smpl_mem_cur);
	ctx->smpl_buf = NULL;
}

/* give the host the guest-physical address of every buffer page */
static int pfm_smpl_register(struct pfm_ctx *ctx)
{
	const u32 max = (PVPFM_CMD_ARGS_MAX -
			 sizeof(struct pvpfm_smpl_register_arg)) / sizeof(u64);
	struct pvpfm_smpl_register_arg *arg;
	struct pfm_dev_req req;
	u32 first, n, i;
	int ret = 0;

	n = min_t(unsigned long, ctx->smpl_pages, max);
	arg = kmalloc(struct_size(arg, gpa, n), GFP_KERNEL);
	if (!arg)
		return -ENOMEM;
	for (first = 0; first < ctx->smpl_pages && !ret; first += n) {
		n = min_t(unsigned long, ctx->smpl_pages - first, max);
		arg->first_page = first;
		arg->nr_pages = n;
		for (i = 0; i < n; i++)
			arg->gpa[i] = page_to_phys(vmalloc_to_page(ctx->smpl_buf +
						   (first + i) * PAGE_SIZE));
		req = (struct pfm_dev_req){
			.cmd = PVPFM_CMD_SMPL_REGISTER,
			.ctx_id = ctx->id,
			.arg = arg,
			.arg_size = struct_size(arg, gpa, n),
		};
		ret = pfm_dev_call(&req);
	}
	kfree(arg);
	return ret;
}

static int pfm_ctx_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pfm_ctx *ctx = file->private_data;

	if (!ctx->smpl_buf)
		return -EINVAL;
	/* the host writes the buffer; programs only read it */
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	if (vma->vm_pgoff || vma_pages(vma) > ctx->smpl_pages)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYWRITE;
	return remap_vmalloc_range(vma, ctx->smpl_buf, 0);
}

/* contexts */

static void pfm_ctx_free(struct pfm_ctx *ctx, int destroyed)
{
	/*
	 * No answer to DESTROY: the host may still have the buffer's pages
	 * and write samples into them. Better lost than reused.
	 */
	if (ctx->smpl_buf && destroyed == -EIO) {
		pr_warn("context %u: no answer to DESTROY, its %lu sampling buffer pages are leaked\n",
			ctx->id, ctx->smpl_pages);
		ctx->smpl_buf = NULL;
	}
	pfm_smpl_free(ctx);
	kfree(ctx);
}

static int pfm_ctx_release(struct inode *inode, struct file *file)
{
	struct pfm_ctx *ctx = file->private_data;
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_DESTROY_CONTEXT,
		.ctx_id = ctx->id,
	};
	int ret = 0;

	mutex_lock(&pfm_ctxs_lock);
	list_del(&ctx->node);
	mutex_unlock(&pfm_ctxs_lock);

	mutex_lock(&ctx->lock);
	if (!ctx->hook || !pfm_hook_stop(ctx->hook, &req, &ret))
		ret = pfm_dev_call(&req);
	if (ctx->hook)
		pfm_hook_release(ctx->hook);
	ctx->hook = NULL;
	mutex_unlock(&ctx->lock);

	if (ret && ret != -ENODEV)
		pr_debug("context %u: DESTROY: %d\n", ctx->id, ret);
	pfm_ctx_free(ctx, ret);
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
 * The vector calls. Limits first (E2BIG, without asking the host), then
 * the vector is copied in, sent, and copied back whatever the answer.
 */
static long pfm_vector_call(struct pfm_ctx *ctx, u16 cmd, size_t esize,
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
	size = (size_t)v.count * esize;
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
		.cmd = cmd,
		.ctx_id = ctx->id,
		.count = v.count,
		.arg = vec,
		.arg_size = size,
	};
	mutex_lock(&ctx->lock);
	ret = pfm_dev_exec(&req);
	mutex_unlock(&ctx->lock);
	if (!ret) {
		ret = req.status;
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
 * Attaching to another thread needs the right to ptrace it. The kernel
 * does not export ptrace_may_access() to modules, so the proof asked for
 * is being its tracer: PTRACE_ATTACH/SEIZE granted that only after
 * ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS) and the LSMs said yes.
 * As in perfmon2 the thread must be stopped while it is attached.
 */
static int pfm_may_attach(struct task_struct *task)
{
	struct task_struct *tracer;
	bool ours;

	rcu_read_lock();
	tracer = ptrace_parent(task);
	ours = tracer && same_thread_group(tracer, current);
	rcu_read_unlock();
	if (!ours)
		return -EPERM;
	if (!task_is_stopped_or_traced(task))
		return -EBUSY;
	if (task->flags & PF_EXITING)
		return -ESRCH;
	return 0;
}

static int pfm_load_thread(struct pfm_ctx *ctx, struct pvpfm_load_arg *arg)
{
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_LOAD_CONTEXT,
		.ctx_id = ctx->id,
		.arg = arg,
		.arg_size = sizeof(*arg),
	};
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
	if (task != current) {
		ret = pfm_may_attach(task);
		if (ret)
			goto out;
	}
	h = pfm_hook_alloc(ctx->id, task);
	if (!h) {
		ret = -ENOMEM;
		goto out;
	}
	/* the host knows threads by their ids in the initial namespace */
	arg->load.load_pid = task->pid;
	arg->tgid = task->tgid;
	if (task == current) {
		arg->flags = PVPFM_LOAD_SELF;
		ret = pfm_hook_load_self(h, &req);
	} else {
		ret = pfm_dev_call(&req);
		if (!ret)
			ret = pfm_hook_attach(h);
	}
	if (ret)
		pfm_hook_release(h);
	else
		ctx->hook = h;
out:
	put_task_struct(task);
	return ret;
}

/* perfmon2: a system-wide context is loaded from the CPU it monitors */
static int pfm_load_system(struct pfm_ctx *ctx, struct pvpfm_load_arg *arg)
{
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_LOAD_CONTEXT,
		.ctx_id = ctx->id,
		.arg = arg,
		.arg_size = sizeof(*arg),
	};
	int ret;

	preempt_disable();
	if (arg->load.load_pid != smp_processor_id()) {
		ret = -EINVAL;
	} else {
		ret = pfm_dev_exec_locked(&req);
		if (!ret)
			ret = req.status;
	}
	preempt_enable();
	return ret;
}

static long pfm_load(struct pfm_ctx *ctx, void __user *uarg)
{
	struct pvpfm_load_arg arg = { };
	int ret;

	if (copy_from_user(&arg.load, uarg, sizeof(arg.load)))
		return -EFAULT;
	mutex_lock(&ctx->lock);
	if (ctx->flags & PFM_FL_SYSTEM_WIDE)
		ret = pfm_load_system(ctx, &arg);
	else
		ret = pfm_load_thread(ctx, &arg);
	mutex_unlock(&ctx->lock);
	return ret;
}

static long pfm_unload(struct pfm_ctx *ctx)
{
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_UNLOAD_CONTEXT,
		.ctx_id = ctx->id,
	};
	int ret = 0;

	mutex_lock(&ctx->lock);
	/* a hook that is not active any more: the host answers (EINVAL) */
	if (!ctx->hook || !pfm_hook_stop(ctx->hook, &req, &ret))
		ret = pfm_dev_call(&req);
	if (ctx->hook)
		pfm_hook_release(ctx->hook);
	ctx->hook = NULL;
	mutex_unlock(&ctx->lock);
	return ret;
}

/* resume after a notification; a blocked thread goes on in any case */
static long pfm_restart(struct pfm_ctx *ctx)
{
	struct pfm_dev_req req = { .cmd = PVPFM_CMD_RESTART, .ctx_id = ctx->id };
	int ret;

	mutex_lock(&ctx->lock);
	ret = pfm_dev_call(&req);
	if (ctx->hook)
		pfm_hook_unblock(ctx->hook);
	mutex_unlock(&ctx->lock);
	return ret;
}

static long pfm_start(struct pfm_ctx *ctx, void __user *uarg)
{
	struct pfm_dev_req req = { .cmd = PVPFM_CMD_START, .ctx_id = ctx->id };
	pfarg_start_t start;

	if (uarg) {
		if (copy_from_user(&start, uarg, sizeof(start)))
			return -EFAULT;
		req.arg = &start;
		req.arg_size = sizeof(start);
	}
	return pfm_ctx_call(ctx, &req);
}

static long pfm_ctx_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct pfm_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct pfm_dev_req req = { .ctx_id = ctx->id };

	switch (cmd) {
	case PFM2_IOC_WRITE_PMCS:
		return pfm_vector_call(ctx, PVPFM_CMD_WRITE_PMCS,
				       sizeof(pfarg_pmc_t), uarg);
	case PFM2_IOC_WRITE_PMDS:
		return pfm_vector_call(ctx, PVPFM_CMD_WRITE_PMDS,
				       sizeof(pfarg_pmd_t), uarg);
	case PFM2_IOC_READ_PMDS:
		return pfm_vector_call(ctx, PVPFM_CMD_READ_PMDS,
				       sizeof(pfarg_pmd_t), uarg);
	case PFM2_IOC_CREATE_EVTSETS:
		return pfm_vector_call(ctx, PVPFM_CMD_CREATE_EVTSETS,
				       sizeof(pfarg_setdesc_t), uarg);
	case PFM2_IOC_GETINFO_EVTSETS:
		return pfm_vector_call(ctx, PVPFM_CMD_GETINFO_EVTSETS,
				       sizeof(pfarg_setinfo_t), uarg);
	case PFM2_IOC_DELETE_EVTSETS:
		return pfm_vector_call(ctx, PVPFM_CMD_DELETE_EVTSETS,
				       sizeof(pfarg_setdesc_t), uarg);
	case PFM2_IOC_LOAD_CONTEXT:
		return pfm_load(ctx, uarg);
	case PFM2_IOC_START:
		return pfm_start(ctx, uarg);
	case PFM2_IOC_STOP:
		req.cmd = PVPFM_CMD_STOP;
		return pfm_ctx_call(ctx, &req);
	case PFM2_IOC_RESTART:
		return pfm_restart(ctx);
	case PFM2_IOC_UNLOAD_CONTEXT:
		return pfm_unload(ctx);
	}
	return -ENOTTY;
}

static const struct file_operations pfm_ctx_fops = {
	.owner = THIS_MODULE,
	.release = pfm_ctx_release,
	.unlocked_ioctl = pfm_ctx_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = pfm_ctx_read,
	.poll = pfm_ctx_poll,
	.fasync = pfm_ctx_fasync,
	.mmap = pfm_ctx_mmap,
	.llseek = noop_llseek,
};

/* /dev/perfmon2 */

static bool pfm_group_ok(int gid)
{
	kgid_t kgid;

	if (gid == -1)
		return true;
	kgid = make_kgid(&init_user_ns, gid);
	return gid_valid(kgid) && in_group_p(kgid);
}

/* per-thread: task_group; system-wide: sys_group; or CAP_SYS_ADMIN */
static bool pfm_may_create(bool system)
{
	int gid = system ? READ_ONCE(pfm_controls.sys_group) :
			   READ_ONCE(pfm_controls.task_group);

	return pfm_group_ok(gid) || capable(CAP_SYS_ADMIN);
}

static long pfm_create(void __user *uarg)
{
	struct pvpfm_create_arg arg = { };
	struct pfm2_create_arg c;
	struct pfm_dev_req req;
	struct pfm_ctx *ctx;
	bool smpl = false;
	long len;
	int fd, ret;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if (c.flags || c.reserved)
		return -EINVAL;
	if (copy_from_user(&arg.ctx, u64_to_user_ptr(c.ctx), sizeof(arg.ctx)))
		return -EFAULT;
	if (!pfm_may_create(arg.ctx.ctx_flags & PFM_FL_SYSTEM_WIDE))
		return -EPERM;
	if (c.smpl_name) {
		len = strncpy_from_user(arg.smpl_name,
					u64_to_user_ptr(c.smpl_name),
					sizeof(arg.smpl_name));
		if (len < 0)
			return len;
		/* no format has so long a name */
		if (len == sizeof(arg.smpl_name))
			return -EINVAL;
		/* other names go to the host, which refuses them */
		smpl = !strcmp(arg.smpl_name, PFM_DFL_SMPL_NAME);
	}
	if (smpl) {
		if (!c.smpl_arg || c.smpl_size < sizeof(arg.smpl_arg))
			return -EINVAL;
		if (copy_from_user(&arg.smpl_arg, u64_to_user_ptr(c.smpl_arg),
				   sizeof(arg.smpl_arg)))
			return -EFAULT;
	}

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->lock);
	mutex_init(&ctx->msg_lock);
	INIT_LIST_HEAD(&ctx->node);
	ctx->flags = arg.ctx.ctx_flags;
	if (smpl) {
		ret = pfm_smpl_alloc(ctx, arg.smpl_arg.buf_size);
		if (ret)
			goto free;
	}

	req = (struct pfm_dev_req){
		.cmd = PVPFM_CMD_CREATE_CONTEXT,
		.arg = &arg,
		.arg_size = sizeof(arg),
	};
	ret = pfm_dev_call(&req);
	if (ret)
		goto free;
	ctx->id = req.ctx_id;
	if (smpl) {
		ret = pfm_smpl_register(ctx);
		if (ret)
			goto destroy;
	}

	/* on the list before the fd exists: close() may come at once */
	mutex_lock(&pfm_ctxs_lock);
	list_add(&ctx->node, &pfm_ctxs);
	mutex_unlock(&pfm_ctxs_lock);
	if (!pfm_dev_info.nr_irqs)
		schedule_delayed_work(&pfm_msg_poll, PFM_MSG_POLL);

	fd = anon_inode_getfd("[perfmon2]", &pfm_ctx_fops, ctx, O_RDWR);
	if (fd >= 0)
		return fd;
	ret = fd;
	mutex_lock(&pfm_ctxs_lock);
	list_del(&ctx->node);
	mutex_unlock(&pfm_ctxs_lock);
destroy:
	req = (struct pfm_dev_req){
		.cmd = PVPFM_CMD_DESTROY_CONTEXT,
		.ctx_id = ctx->id,
	};
	pfm_ctx_free(ctx, pfm_dev_call(&req));
	return ret;
free:
	pfm_ctx_free(ctx, 0);
	return ret;
}

static long pfm_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	if (cmd == PFM2_IOC_CREATE_CONTEXT)
		return pfm_create((void __user *)arg);
	return -ENOTTY;
}

static const struct file_operations pfm_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pfm_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* every user may open it: the checks are per call */
static struct miscdevice pfm_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "perfmon2",
	.fops = &pfm_dev_fops,
	.mode = 0666,
};

int pfm_ctx_init(void)
{
	return misc_register(&pfm_misc);
}

/* after the device's interrupts are gone: nothing schedules work again */
void pfm_ctx_exit(void)
{
	misc_deregister(&pfm_misc);
	cancel_delayed_work_sync(&pfm_msg_poll);
	cancel_work_sync(&pfm_msg_work);
}
