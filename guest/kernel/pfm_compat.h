/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel interfaces whose form changed between the guest kernels
 * perfmon2.ko builds for (Debian bookworm's 6.1, trixie's 6.12), each
 * behind the newer kernel's name, so that no other file tests a kernel
 * version.
 */
#ifndef _PFM_COMPAT_H
#define _PFM_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

/* 6.3 made vma->vm_flags read-only: changes go through vm_flags_clear() */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_clear(struct vm_area_struct *vma,
				  unsigned long flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#endif /* _PFM_COMPAT_H */
