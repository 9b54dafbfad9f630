// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-perfmon: perfmon2 for KVM guests, host module.
 *
 * /dev/kvm-perfmon: each open file binds one KVM VM (kvmpfm_vm.c) and
 * runs its guests' perfmon2 calls on the engine (engine/) over host perf
 * events (kvmpfm_perf.c). This file holds the device, the ioctl entry and
 * the module-wide accounting that leak checks read.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "kvmpfm.h"

atomic64_t kvmpfm_nr_allocs, kvmpfm_nr_events, kvmpfm_nr_pinned, kvmpfm_nr_vms;
atomic64_t kvmpfm_total_overflows, kvmpfm_total_deferred_runs,
	kvmpfm_total_remote_ops;

void *kvmpfm_zalloc(size_t size)
{
	void *p = kvzalloc(size, GFP_KERNEL_ACCOUNT);

	if (p)
		atomic64_inc(&kvmpfm_nr_allocs);
	return p;
}

void kvmpfm_free(const void *p)
{
	if (!p)
		return;
	kvfree(p);
	atomic64_dec(&kvmpfm_nr_allocs);
}

void kvmpfm_account(atomic64_t *counter, long delta)
{
	atomic64_add(delta, counter);
}

/* an open /dev/kvm-perfmon */
struct kvmpfm_file {
	struct mutex bind_lock;		/* orders KVMPFM_BIND_VM */
	struct kvmpfm_vm *vm;		/* set once, then stable */
};

static int kvmpfm_open(struct inode *inode, struct file *file)
{
	struct kvmpfm_file *f = kvmpfm_zalloc(sizeof(*f));

	if (!f)
		return -ENOMEM;
	mutex_init(&f->bind_lock);
	file->private_data = f;
	return 0;
}

static int kvmpfm_release(struct inode *inode, struct file *file)
{
	struct kvmpfm_file *f = file->private_data;

	if (f->vm)
		kvmpfm_vm_release(f->vm);
	kvmpfm_free(f);
	return 0;
}

static long module_stats(void __user *argp)
{
	struct kvmpfm_module_stats st = {
		.allocations = atomic64_read(&kvmpfm_nr_allocs),
		.perf_events = atomic64_read(&kvmpfm_nr_events),
		.pinned_pages = atomic64_read(&kvmpfm_nr_pinned),
		.vms = atomic64_read(&kvmpfm_nr_vms),
		.overflows = atomic64_read(&kvmpfm_total_overflows),
		.deferred_runs = atomic64_read(&kvmpfm_total_deferred_runs),
		.remote_counter_ops = atomic64_read(&kvmpfm_total_remote_ops),
	};

	return copy_to_user(argp, &st, sizeof(st)) ? -EFAULT : 0;
}

static long bind_vm(struct file *file, void __user *argp)
{
	struct kvmpfm_file *f = file->private_data;
	struct kvmpfm_vm *vm;
	long ret = 0;

	mutex_lock(&f->bind_lock);
	if (f->vm) {
		ret = -EBUSY;
		goto out;
	}
	vm = kvmpfm_vm_bind(file, argp);
	if (IS_ERR(vm))
		ret = PTR_ERR(vm);
	else	/* publish a fully built VM to lock-free readers below */
		smp_store_release(&f->vm, vm);
out:
	mutex_unlock(&f->bind_lock);
	return ret;
}

static long kvmpfm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kvmpfm_file *f = file->private_data;
	struct kvmpfm_vm *vm;

	switch (cmd) {
	case KVMPFM_GET_API_VERSION:
		return KVMPFM_API_VERSION;
	case KVMPFM_GET_MODULE_STATS:
		return module_stats((void __user *)arg);
	case KVMPFM_BIND_VM:
		return bind_vm(file, (void __user *)arg);
	}
	/* pairs with bind_vm(): a non-NULL vm is fully built */
	vm = smp_load_acquire(&f->vm);
	if (!vm)
		return -ENOTCONN;
	return kvmpfm_vm_ioctl(vm, cmd, arg);
}

static const struct file_operations kvmpfm_fops = {
	.owner = THIS_MODULE,
	.open = kvmpfm_open,
	.release = kvmpfm_release,
	.unlocked_ioctl = kvmpfm_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice kvmpfm_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kvm-perfmon",
	.fops = &kvmpfm_fops,
	.mode = 0666,
};

static int __init kvmpfm_init(void)
{
	return misc_register(&kvmpfm_dev);
}

static void __exit kvmpfm_exit(void)
{
	misc_deregister(&kvmpfm_dev);
}

module_init(kvmpfm_init);
module_exit(kvmpfm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("perfmon2 for KVM guests (host side)");
