// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/perfmon2: pfm_create_context. PFM2_IOC_CREATE_CONTEXT creates a
 * context on the host and returns its new fd (pfm_ctxfd.c); it is the
 * device's only ioctl.
 *
 * Checks made here, before the host is asked: who may create which
 * context (task_group, sys_group, CAP_SYS_ADMIN: EPERM) and the sampling
 * buffer limits (pfm_smplbuf.c: ENOMEM). Everything else is the host's to
 * decide: its errno is the call's.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
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
	fd = pfm_ctx_new_fd(ctx);
	if (fd >= 0)
		return fd;
	ret = fd;
	pfm_notify_del(ctx);
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
