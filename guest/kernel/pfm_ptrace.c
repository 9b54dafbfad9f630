// SPDX-License-Identifier: GPL-2.0
/*
 * Who may attach a context to another thread: whoever may ptrace it, as in
 * perfmon2 (ptrace_may_access(task, PTRACE_MODE_ATTACH), the caller's real
 * uid and gid, LSMs included).
 *
 * ptrace_may_access() and mm_access() are not exported to modules (5.10,
 * 6.1, 6.12). Opening the thread's TGID/task/TID/mem in procfs makes the
 * kernel ask them (proc_mem_open(): mm_access(task, PTRACE_MODE_ATTACH),
 * under the thread's exec_update_lock), as a debugger's open does. The
 * path is looked up in a procfs instance this module mounts for itself
 * at load (kern_mount(): default options, no hidepid, in no mount
 * namespace): what the caller has mounted in its own namespace (a file
 * bound over .../mem, another procfs) is never on the way. The file is
 * opened with dentry_open(), which leaves out the mode bits of "mem" and
 * lets mm_access() alone decide, and with the caller's credentials whose
 * fsuid and fsgid are its real uid and gid: the ids PTRACE_MODE_REALCREDS
 * compares. The one difference left is the capability subset test of the
 * commoncap LSM, which takes the caller's effective capabilities for an
 * open (FSCREDS) where REALCREDS takes the permitted ones: effective is
 * a subset of permitted, so this check refuses where perfmon2's might
 * have allowed, never the other way.
 */
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include "pfm_drv.h"

/* the module's own procfs, of the pid namespace of the module's loader */
static struct vfsmount *pfm_proc_mnt;

int pfm_ptrace_init(void)
{
	struct file_system_type *proc = get_fs_type("proc");

	if (!proc)
		return -ENOENT;
	pfm_proc_mnt = kern_mount(proc);
	/* put_filesystem() is not exported: it is this */
	module_put(proc->owner);
	if (IS_ERR(pfm_proc_mnt)) {
		int ret = PTR_ERR(pfm_proc_mnt);

		pfm_proc_mnt = NULL;
		return ret;
	}
	return 0;
}

void pfm_ptrace_exit(void)
{
	kern_unmount(pfm_proc_mnt);
	pfm_proc_mnt = NULL;
}

/* @dir's child @name, or an ERR_PTR; a reference on @dir is dropped */
static struct dentry *pfm_proc_child(struct dentry *dir, const char *name)
{
	struct dentry *child;

	child = pfm_lookup_one_unlocked(name, dir);
	dput(dir);
	if (!IS_ERR(child) && d_is_negative(child)) {
		dput(child);
		return ERR_PTR(-ENOENT);
	}
	return child;
}

/*
 * Open TGID/task/TID/mem in the module's procfs, one name at a time (no
 * path to parse, no symlink, no mount crossed), as the caller with its
 * real ids as fs ids.
 */
static struct file *pfm_open_mem(pid_t tgid, pid_t tid)
{
	char tgid_name[16], tid_name[16];
	const struct cred *saved;
	struct path path = { .mnt = pfm_proc_mnt };
	struct file *file;
	struct cred *real;

	snprintf(tgid_name, sizeof(tgid_name), "%d", tgid);
	snprintf(tid_name, sizeof(tid_name), "%d", tid);
	real = prepare_creds();
	if (!real)
		return ERR_PTR(-ENOMEM);
	real->fsuid = real->uid;
	real->fsgid = real->gid;
	saved = override_creds(real);
	path.dentry = dget(pfm_proc_mnt->mnt_root);
	path.dentry = pfm_proc_child(path.dentry, tgid_name);
	if (!IS_ERR(path.dentry))
		path.dentry = pfm_proc_child(path.dentry, "task");
	if (!IS_ERR(path.dentry))
		path.dentry = pfm_proc_child(path.dentry, tid_name);
	if (!IS_ERR(path.dentry))
		path.dentry = pfm_proc_child(path.dentry, "mem");
	if (IS_ERR(path.dentry)) {
		file = ERR_CAST(path.dentry);
	} else {
		file = dentry_open(&path, O_RDONLY, current_cred());
		dput(path.dentry);
	}
	revert_creds(saved);
	put_cred(real);
	return file;
}

/*
 * 0 if the caller may ptrace (attach to) @task; -EPERM if not, -ESRCH if
 * it is gone or exiting. The thread must still hold its number after the
 * open, so that the answer was about it.
 */
int pfm_may_attach(struct task_struct *task)
{
	struct pid_namespace *ns = proc_pid_ns(pfm_proc_mnt->mnt_sb);
	struct file *mem;
	pid_t tid, tgid;

	if (task->flags & PF_KTHREAD)
		return -EPERM;
	tid = task_pid_nr_ns(task, ns);
	tgid = task_tgid_nr_ns(task, ns);
	if (!tid || !tgid)
		return -ESRCH;
	mem = pfm_open_mem(tgid, tid);
	if (IS_ERR(mem)) {
		switch (PTR_ERR(mem)) {
		case -ENOENT:
		case -ESRCH:
			return -ESRCH;
		case -ENOMEM:
		case -EINTR:
			return PTR_ERR(mem);
		default:
			return -EPERM;
		}
	}
	fput(mem);
	if (!pid_alive(task) || task_pid_nr_ns(task, ns) != tid ||
	    (task->flags & PF_EXITING))
		return -ESRCH;
	return 0;
}
