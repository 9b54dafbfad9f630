/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel interfaces whose form changed between the kernels the host
 * module builds for (Debian bookworm's 6.1, trixie's 6.12), each behind
 * one name, so that no other file tests a kernel version.
 */
#ifndef _KVMPFM_COMPAT_H
#define _KVMPFM_COMPAT_H

#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/version.h>

/* one event on @ctx: 6.8 dropped eventfd_signal()'s count (always 1) */
static inline void kvmpfm_eventfd_signal(struct eventfd_ctx *ctx)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/*
 * A reference on *@f unless it is being released (its count reached 0),
 * else NULL. The caller keeps the struct file's memory valid meanwhile.
 * 6.7 made get_file_rcu() retry until it holds a reference, which never
 * ends on a file being released; get_file_active() is the form that
 * fails instead.
 */
static inline struct file *kvmpfm_file_get_live(struct file **f)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return get_file_active(f);
#else
	return get_file_rcu(*f) ? *f : NULL;
#endif
}

/* the file of a struct fd: 6.12 hid the field behind fd_file() */
#ifndef fd_file
#define fd_file(f)	((f).file)
#endif

/*
 * KVM's kvm_entry tracepoint: 6.9 added the force_immediate_exit
 * argument after the vCPU (arch/x86/kvm/trace.h). A probe's arguments
 * are the tracepoint's (kvmpfm_kvm.c): the probe @name, declared.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#define KVMPFM_KVM_ENTRY_PROBE(name)					\
	void name(void *data, struct kvm_vcpu *kv, bool force_immediate_exit)
#else
#define KVMPFM_KVM_ENTRY_PROBE(name)					\
	void name(void *data, struct kvm_vcpu *kv)
#endif

/* the RIP slot of vcpu->arch.regs[] (an enum): 7.0 named it VCPU_REG_ */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define KVMPFM_VCPU_REG_RIP	VCPU_REG_RIP
#else
#define KVMPFM_VCPU_REG_RIP	VCPU_REGS_RIP
#endif

#endif /* _KVMPFM_COMPAT_H */
