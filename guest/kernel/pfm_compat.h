/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel interfaces whose form changed between the guest kernels
 * perfmon2.ko builds for (Debian bullseye's 5.10, bookworm's 6.1,
 * trixie's 6.12, unstable's 7.x), each behind one name (the newer
 * kernel's where it has one), so that no other file tests a kernel
 * version.
 */
#ifndef _PFM_COMPAT_H
#define _PFM_COMPAT_H

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/dcache.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/version.h>
#include <linux/workqueue.h>
/* where a program's dumpability lives: the header says, not a version */
#if __has_include("linux/sched/exec_state.h")
#include <linux/sched/exec_state.h>
#else
#include <linux/sched/coredump.h>
#endif

/* 6.3 made vma->vm_flags read-only: changes go through vm_flags_clear() */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_clear(struct vm_area_struct *vma,
				  unsigned long flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * A const kobj_type as kobject_init_and_add() takes it on every kernel:
 * newer ones (Debian's 6.1 among them) declare its parameter const, 5.10
 * does not, but only stores the pointer and calls through it (which is
 * why the kernel could make it const without another change), so the
 * object may stay const and read-only.
 */
#define pfm_kobj_type(ktype)	((struct kobj_type *)(ktype))

/*
 * @fn(@arg) in a work item bound to @cpu, or -ENODEV when @cpu is
 * offline: the kernel's work_on_cpu_safe() to 6.x, which 7.x no longer
 * has on SMP. Its body, on every kernel: the hotplug lock keeps @cpu
 * online from the check until the work item has run, as work_on_cpu()
 * wants its caller to.
 */
static inline long pfm_work_on_cpu_safe(int cpu, long (*fn)(void *),
					void *arg)
{
	long ret = -ENODEV;

	cpus_read_lock();
	if (cpu_online(cpu))
		ret = work_on_cpu(cpu, fn, arg);
	cpus_read_unlock();
	return ret;
}

/*
 * Whether the program current runs may be dumped by its owner
 * (dumpability SUID_DUMP_USER, TASK_DUMPABLE_OWNER in 7.x): false after
 * the exec of a setuid or unreadable program, or PR_SET_DUMPABLE 0.
 * Current must have an mm. 7.x moved the dumpability from the mm's flags
 * to current->exec_state, whose reader task_exec_state_get_dumpable() is
 * not exported: this is its body.
 */
#if __has_include("linux/sched/exec_state.h")
static inline bool pfm_current_dumpable_by_owner(void)
{
	enum task_dumpable dumpable;

	rcu_read_lock();
	dumpable = READ_ONCE(rcu_dereference(current->exec_state)->dumpable);
	rcu_read_unlock();
	return dumpable == TASK_DUMPABLE_OWNER;
}
#else
static inline bool pfm_current_dumpable_by_owner(void)
{
	return get_dumpable(current->mm) == SUID_DUMP_USER;
}
#endif

/*
 * @base's child @name, looked up without @base's inode lock, after
 * checking that the caller may search @base (MAY_EXEC), as
 * lookup_one_len_unlocked() did until 6.16; 6.16 has it as
 * lookup_one_unlocked() with the name as a qstr, in the same idmap
 * (nop_mnt_idmap) that lookup_one_len_unlocked() passed since 6.3.
 */
static inline struct dentry *pfm_lookup_one_unlocked(const char *name,
						     struct dentry *base)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	return lookup_one_unlocked(&nop_mnt_idmap,
				   &QSTR_LEN(name, strlen(name)), base);
#else
	return lookup_one_len_unlocked(name, base, strlen(name));
#endif
}

#endif /* _PFM_COMPAT_H */
