// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/perfmon2: pfm_create_context. PFM2_IOC_CREATE_CONTEXT creates a
 * context on the host and returns its new fd (pfm_ctxfd.c); it is the
 * device's only ioctl.
 *
 * Checks made here, before the host is asked: who may create which
 * context (task_group, sys_group, CAP_SYS_ADMIN: EPERM), how many
 * contexts one user may have alive (controls/max_ctx_per_user: EMFILE;
 * CAP_SYS_ADMIN exempt) and the sampling buffer limits (pfm_smplbuf.c:
 * ENOMEM). Everything else is the host's to decide: its errno is the
 * call's. Decided here and applied by the host: whether the context's
 * samples and messages may show guest kernel IPs (controls/
 * user_kernel_ip, CAP_PERFMON; PVPFM_FL_NO_KERNEL_IP).
 *
 * Per-user accounting: the host's max_contexts is the whole VM's, so one
 * user could take them all. A context is charged to its creator's real
 * uid (as RLIMIT_NPROC is) until it is freed, whoever holds its fd later;
 * in a user namespace, to the user who made the outermost one
 * (pfm_charged_uid()).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include "pfm_drv.h"
#include "../../include/uapi/perfmon2_ioctl.h"

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

/* contexts alive per user; only users with some are listed */
struct pfm_user {
	struct list_head node;
	kuid_t uid;		/* pfm_charged_uid() */
	u32 nr;
};

static LIST_HEAD(pfm_users);
static DEFINE_MUTEX(pfm_users_lock);

/*
 * Whom the caller's contexts are charged to. In the initial user namespace
 * its real uid. In another, the owner of the outermost namespace of its
 * chain, the user of the initial namespace who made it: every uid mapped
 * into a namespace (a user's subordinate uids, 65536 of them from
 * newuidmap) is that user's, not a fresh limit each. The kernel charges
 * RLIMIT_NPROC the same way (ucounts, up to the namespace's owner). A
 * namespace made by root (a container runtime's) is root's, and so one
 * limit for all of it: root's own exemption is CAP_SYS_ADMIN in the
 * initial namespace, which no one inside has.
 */
static kuid_t pfm_charged_uid(void)
{
	const struct user_namespace *ns = current_user_ns();

	if (ns == &init_user_ns)
		return current_uid();
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}

/* charge a new context to the caller: 0, -EMFILE over the limit, -ENOMEM */
static int pfm_user_charge(struct pfm_ctx *ctx)
{
	kuid_t uid = pfm_charged_uid();
	struct pfm_user *u;
	int ret = 0;

	if (capable(CAP_SYS_ADMIN))
		return 0;
	mutex_lock(&pfm_users_lock);
	list_for_each_entry(u, &pfm_users, node)
		if (uid_eq(u->uid, uid))
			goto found;
	u = NULL;
found:
	if ((u ? u->nr : 0) >= READ_ONCE(pfm_controls.max_ctx_per_user)) {
		ret = -EMFILE;
		goto out;
	}
	if (!u) {
		u = kzalloc(sizeof(*u), GFP_KERNEL);
		if (!u) {
			ret = -ENOMEM;
			goto out;
		}
		u->uid = uid;
		list_add(&u->node, &pfm_users);
	}
	u->nr++;
	ctx->user = u;
out:
	mutex_unlock(&pfm_users_lock);
	return ret;
}

void pfm_user_uncharge(struct pfm_ctx *ctx)
{
	struct pfm_user *u = ctx->user;

	if (!u)
		return;
	mutex_lock(&pfm_users_lock);
	if (!--u->nr) {
		list_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&pfm_users_lock);
	ctx->user = NULL;
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
	if ((c.flags & ~PFM2_CREATE_CLOEXEC) || c.reserved)
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

	/* bits 16-31 are perfmon2's arch-specific flags: none on x86, ignored */
	arg.ctx.ctx_flags &= ~PFM_FL_ARCH_MASK;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->lock);
	mutex_init(&ctx->msg_lock);
	refcount_set(&ctx->refs, 1);
	INIT_LIST_HEAD(&ctx->node);
	INIT_LIST_HEAD(&ctx->visit);
	/*
	 * Guest kernel IPs: the decision is here, where the owner's
	 * privilege is known (perf's rule: perf_event_paranoid >= 2 denies
	 * kernel samples without CAP_PERFMON); the host applies it to each
	 * sample, where the guest's mode is known.
	 */
	if (!READ_ONCE(pfm_controls.user_kernel_ip) && !perfmon_capable())
		arg.ctx.ctx_flags |= PVPFM_FL_NO_KERNEL_IP;
	ctx->flags = arg.ctx.ctx_flags;
	ctx->admin = pfm_may_create(true);
	ret = pfm_user_charge(ctx);
	if (ret)
		goto free;
	if (smpl) {
		ret = pfm_smplbuf_alloc(ctx, arg.smpl_arg.buf_size);
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
		ret = pfm_smplbuf_register(ctx);
		if (ret)
			goto destroy;
	}

	/* on the list before the fd exists: close() may come at once */
	pfm_notify_add(ctx);
	fd = pfm_ctx_new_fd(ctx, c.flags & PFM2_CREATE_CLOEXEC);
	if (fd >= 0)
		return fd;
	ret = fd;
	/* the notification work may hold it now: the last put frees it */
	pfm_notify_del(ctx);
destroy:
	req = (struct pfm_dev_req){
		.cmd = PVPFM_CMD_DESTROY_CONTEXT,
		.ctx_id = ctx->id,
	};
	ctx->destroyed = pfm_dev_call(&req);
	pfm_ctx_put(ctx);
	return ret;
free:
	pfm_ctx_free(ctx, 0);
	return ret;
}

static long pfm_create_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	if (cmd == PFM2_IOC_CREATE_CONTEXT)
		return pfm_create((void __user *)arg);
	return -ENOTTY;
}

static const struct file_operations pfm_create_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pfm_create_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* every user may open it: the checks are per call */
static struct miscdevice pfm_create_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "perfmon2",
	.fops = &pfm_create_fops,
	.mode = 0666,
};

int pfm_create_init(void)
{
	return misc_register(&pfm_create_misc);
}

void pfm_create_exit(void)
{
	misc_deregister(&pfm_create_misc);
}
