// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-perfmon: perfmon2 for KVM guests, host module.
 *
 * /dev/kvm-perfmon: each open file binds one KVM VM (kvmpfm_vm.c) and
 * runs its guests' perfmon2 calls on the engine (engine/) over host perf
 * events (kvmpfm_backend.c). This file holds the device, the ioctl entry and
 * the module-wide accounting that leak checks read.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/moduleparam.h>
#include "kvmpfm.h"

atomic64_t kvmpfm_nr_allocs, kvmpfm_nr_events, kvmpfm_nr_smpl_pages,
	kvmpfm_nr_vms;
atomic64_t kvmpfm_total_overflows, kvmpfm_total_deferred_runs,
	kvmpfm_total_remote_ops;
/* times a VM reached max_overflow_rate, all VMs since the module loaded */
atomic64_t kvmpfm_total_throttles;
/*
 * PMU events perf refused because KVM's mediated vPMU held the host's
 * PMU, all VMs since the module loaded (kvmpfm_event_open_error())
 */
atomic64_t kvmpfm_total_host_mediated;

/*
 * Overflows the host handles per second for one VM, all its vCPUs
 * together; the rest wait, counted as lost samples (kvmpfm_throttle.c). Each
 * costs the vCPU thread an engine call and, with overflow switching, a
 * set switch: this is the admin's bound on that work, as
 * perf_event_max_sample_rate is perf's (whose default it takes).
 */
unsigned int kvmpfm_max_overflow_rate = 100000;
module_param_named(max_overflow_rate, kvmpfm_max_overflow_rate, uint, 0644);
MODULE_PARM_DESC(max_overflow_rate,
		 "most counter overflows per second the host handles for one VM (default 100000, 0: no bound)");

/*
 * Whether guests may count the host's page faults on their memory
 * (PVPFM_VPMD_HOST_PAGE_FAULTS). Off by default: where the host shares
 * pages across VMs (KSM), the fault a guest's write takes tells it,
 * exactly, that the page had been merged, i.e. that another VM holds the
 * same contents. The host admin turns it on where nothing is shared; it
 * is checked when a guest programs the PMD (a counter already programmed
 * keeps counting), anything else is NOTAVAIL as an event the host cannot
 * back.
 */
bool kvmpfm_allow_host_page_faults;
module_param_named(allow_host_page_faults, kvmpfm_allow_host_page_faults,
		   bool, 0644);
MODULE_PARM_DESC(allow_host_page_faults,
		 "let guests count host page faults on their memory (default N: with KSM, an oracle of other VMs' pages)");

/*
 * Charged to the caller's memory cgroup (the VMM's). A size of 0 (which
 * kvzalloc() answers with ZERO_SIZE_PTR) or one above INT_MAX (which
 * kvmalloc() refuses with a WARN) is a size computation gone wrong: it
 * fails quietly, as an allocation failure.
 */
void *kvmpfm_zalloc(size_t size)
{
	void *p;

	if (!size || size > INT_MAX)
		return NULL;
	p = kvzalloc(size, GFP_KERNEL_ACCOUNT);
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

/*
 * Host-wide ceilings of the per-VM limits (doc/ADMIN.md, "Per-VM limits
 * and their ceilings"): whoever can open /dev/kvm chooses their VM's
 * limits at BIND_VM, the host admin bounds them here. A VM asking for
 * more than a ceiling is refused with E2BIG. Root may change a ceiling
 * at any time (/sys/module/kvm_perfmon/parameters/); VMs bound later see
 * the change. A ceiling is 1 .. the engine's own limit (PFM_LIMIT_MAX_*);
 * the defaults, and what they bound, are KVMPFM_DFL_CEIL_* (kvmpfm.h).
 */
struct kvmpfm_ceiling {
	u64 val;
	u64 max;	/* PFM_LIMIT_MAX_*: what the engine accepts */
	bool bytes;	/* takes K, M, G suffixes */
};

static struct kvmpfm_ceiling ceil_contexts = {
	KVMPFM_DFL_CEIL_CONTEXTS, PFM_LIMIT_MAX_CONTEXTS
};
static struct kvmpfm_ceiling ceil_sets = {
	KVMPFM_DFL_CEIL_SETS, PFM_LIMIT_MAX_SETS
};
static struct kvmpfm_ceiling ceil_vector = {
	PFM_LIMIT_MAX_VECTOR, PFM_LIMIT_MAX_VECTOR
};
static struct kvmpfm_ceiling ceil_smpl_buf = {
	(u64)KVMPFM_DFL_CEIL_SMPL_BUF_MIB << 20, PFM_LIMIT_MAX_SMPL_BUF, true
};

static int ceiling_set(const char *s, const struct kernel_param *kp)
{
	struct kvmpfm_ceiling *c = kp->arg;
	char *end;
	u64 v;
	int ret;

	if (c->bytes) {
		v = memparse(s, &end);
		if (end == s || (*end && *end != '\n'))
			return -EINVAL;
	} else {
		ret = kstrtou64(s, 0, &v);
		if (ret)
			return ret;
	}
	if (!v || v > c->max)
		return -EINVAL;
	WRITE_ONCE(c->val, v);
	return 0;
}

static int ceiling_get(char *buf, const struct kernel_param *kp)
{
	const struct kvmpfm_ceiling *c = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%llu\n", READ_ONCE(c->val));
}

static const struct kernel_param_ops ceiling_ops = {
	.set = ceiling_set,
	.get = ceiling_get,
};

module_param_cb(max_contexts_ceiling, &ceiling_ops, &ceil_contexts, 0644);
MODULE_PARM_DESC(max_contexts_ceiling,
		 "most perfmon2 contexts a VM may ask for (default "
		 __stringify(KVMPFM_DFL_CEIL_CONTEXTS) ", most "
		 __stringify(PFM_LIMIT_MAX_CONTEXTS_N) ")");
module_param_cb(max_sets_ceiling, &ceiling_ops, &ceil_sets, 0644);
MODULE_PARM_DESC(max_sets_ceiling,
		 "most event sets per context a VM may ask for (default "
		 __stringify(KVMPFM_DFL_CEIL_SETS) ", most "
		 __stringify(PFM_LIMIT_MAX_SETS_N) ")");
module_param_cb(max_vector_ceiling, &ceiling_ops, &ceil_vector, 0644);
MODULE_PARM_DESC(max_vector_ceiling,
		 "most entries per call a VM may ask for (default and most: what fits in the command block; cat the parameter)");
module_param_cb(max_smpl_buf_ceiling, &ceiling_ops, &ceil_smpl_buf, 0644);
MODULE_PARM_DESC(max_smpl_buf_ceiling,
		 "most bytes per sampling buffer a VM may ask for (default "
		 __stringify(KVMPFM_DFL_CEIL_SMPL_BUF_MIB) "M, most "
		 __stringify(PFM_LIMIT_MAX_SMPL_BUF_GIB) "G)");

/* @want (0: the module default, at most the ceiling) against @c */
static int ceiling_apply(u64 *want, u64 dfl, const struct kvmpfm_ceiling *c)
{
	u64 ceiling = READ_ONCE(c->val);

	if (!*want)
		*want = min(dfl, ceiling);
	return *want > ceiling ? -E2BIG : 0;
}

int kvmpfm_limits_resolve(struct pfm_limits *lim)
{
	u64 contexts = lim->max_contexts, sets = lim->max_sets;
	u64 vector = lim->max_vector;
	int ret;

	ret = ceiling_apply(&contexts, PFM_DFL_MAX_CONTEXTS, &ceil_contexts) ?:
	      ceiling_apply(&sets, PFM_DFL_MAX_SETS, &ceil_sets) ?:
	      ceiling_apply(&vector, PFM_DFL_MAX_VECTOR, &ceil_vector) ?:
	      ceiling_apply(&lim->max_smpl_buf, PFM_DFL_MAX_SMPL_BUF,
			    &ceil_smpl_buf);
	if (ret)
		return ret;
	/* each at most its ceiling, itself at most a u32 engine limit */
	lim->max_contexts = contexts;
	lim->max_sets = sets;
	lim->max_vector = vector;
	return 0;
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
		.pinned_pages = atomic64_read(&kvmpfm_nr_smpl_pages),
		.vms = atomic64_read(&kvmpfm_nr_vms),
		.overflows = atomic64_read(&kvmpfm_total_overflows),
		.deferred_runs = atomic64_read(&kvmpfm_total_deferred_runs),
		.remote_counter_ops = atomic64_read(&kvmpfm_total_remote_ops),
		.host_mediated = atomic64_read(&kvmpfm_total_host_mediated),
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
	if (IS_ERR(vm)) {
		ret = PTR_ERR(vm);
		goto out;
	}
	ret = kvmpfm_vm_register(vm);
	if (ret) {
		kvmpfm_vm_release(vm);
		goto out;
	}
	/* publish a fully built VM to lock-free readers below */
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
		/*
		 * Module-wide figures tell of every user's VMs: for the
		 * operator (root, CAP_PERFMON) only. The caller's privilege,
		 * not the opener's: a file handed to an unprivileged
		 * process reads nothing either.
		 */
		if (!perfmon_capable())
			return -EPERM;
		return module_stats((void __user *)arg);
	case KVMPFM_BIND_VM:
		return bind_vm(file, (void __user *)arg);
	case KVMPFM_LIST_VMS:
	case KVMPFM_GET_SNAPSHOT:
	case KVMPFM_GET_EVENT_FILTER:
		return kvmpfm_operator_ioctl(cmd, (void __user *)arg);
	}
	/* pairs with bind_vm(): a non-NULL vm is fully built */
	vm = smp_load_acquire(&f->vm);
	if (cmd == KVMPFM_SET_EVENT_FILTER)
		return kvmpfm_set_filter(vm, (void __user *)arg);
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

/*
 * Not world-accessible: root and, by kvm/99-kvm-perfmon.rules, the group
 * that may open /dev/kvm ("kvm"). Without udev (devtmpfs alone) the node
 * is root:root 0660.
 */
static struct miscdevice kvmpfm_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kvm-perfmon",
	.fops = &kvmpfm_fops,
	.mode = 0660,
};

static int __init kvmpfm_init(void)
{
	int ret = kvmpfm_kvm_init();

	if (ret)
		return ret;
	ret = misc_register(&kvmpfm_dev);
	if (ret)
		kvmpfm_kvm_exit();
	return ret;
}

static void __exit kvmpfm_exit(void)
{
	misc_deregister(&kvmpfm_dev);
	kvmpfm_kvm_exit();
}

module_init(kvmpfm_init);
module_exit(kvmpfm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("perfmon2 for KVM guests (host side)");
