/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel interfaces whose form changed between the kernels the host
 * module builds for (Debian bookworm's 6.1, trixie's 6.12, unstable's
 * 7.x), each behind one name, so that no other file tests a kernel
 * version.
 */
#ifndef _KVMPFM_COMPAT_H
#define _KVMPFM_COMPAT_H

#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/kvm_host.h>
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

/*
 * An hrtimer set up with its callback in one call: 6.13 added
 * hrtimer_setup(), and later kernels dropped hrtimer_init() for it (7.2
 * has none). Before 6.13 it is hrtimer_init() and the assignment of
 * ->function, which is what the kernel's own does besides checking that
 * @function is set.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * The guest RIP that KVM caches in vcpu->arch, and its index in
 * regs_avail and for the cache_reg static call: regs[VCPU_REGS_RIP]
 * until KVM's "Reg cleanups / prep work for APX" (after 7.0; 7.2 has
 * it) gave it a field of its own (.rip), sized regs[] to the general
 * purpose registers (regs[VCPU_REG_RIP] would be past its end) and
 * renamed the index VCPU_REG_RIP. Both read what kvm_rip_read() returns.
 * Should the series have come in a later release than 7.1, the build
 * stops at the undeclared name: it never reads the wrong field.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 1, 0)
#define KVMPFM_REG_RIP			VCPU_REG_RIP
#define kvmpfm_cached_rip(vcpu)		((vcpu)->arch.rip)
#else
#define KVMPFM_REG_RIP			VCPU_REGS_RIP
#define kvmpfm_cached_rip(vcpu)		((vcpu)->arch.regs[VCPU_REGS_RIP])
#endif

/*
 * KVM's mediated vPMU (7.0, CONFIG_PERF_GUEST_MEDIATED_PMU): while a VM
 * has one, perf refuses other users' events that count guests
 * (kvmpfm_event.c). Before it, no such refusal exists.
 */
#define KVMPFM_PERF_MEDIATED_VPMU	IS_ENABLED(CONFIG_PERF_GUEST_MEDIATED_PMU)

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

#endif /* _KVMPFM_COMPAT_H */
