// SPDX-License-Identifier: GPL-2.0
/*
 * The "default" sampling format's buffer, on the guest's side: guest
 * memory that the host writes samples into and the program maps
 * read-only.
 *
 * The driver allocates it (vmalloc) when the context is created, counted
 * against smpl_buffer_mem_max, RLIMIT_MEMLOCK and the host's maximum
 * (ENOMEM), and gives the host the guest-physical address of every page
 * (PVPFM_CMD_SMPL_REGISTER) before the context's fd exists.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "pfm_drv.h"

atomic64_t pfm_smpl_mem_cur;

int pfm_smplbuf_alloc(struct pfm_ctx *ctx, u64 size)
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

/*
 * @destroyed: the host's answer to DESTROY (0 also when the host never had
 * the context). Any other answer (no answer, EIO; the device gone, ENODEV;
 * a refusal) leaves the host maybe holding the buffer's pages and writing
 * samples into them: better lost than reused. They stay counted in
 * smpl_buffer_mem_cur and the owner's locked memory.
 */
void pfm_smplbuf_free(struct pfm_ctx *ctx, int destroyed)
{
	if (!ctx->smpl_buf)
		return;
	if (destroyed) {
		pr_warn("context %u: DESTROY failed (%d), its %lu sampling buffer pages are leaked\n",
			ctx->id, destroyed, ctx->smpl_pages);
		ctx->smpl_buf = NULL;
		return;
	}
	vfree(ctx->smpl_buf);
	account_locked_vm(ctx->smpl_mm, ctx->smpl_pages, false);
	mmdrop(ctx->smpl_mm);
	atomic64_sub((u64)ctx->smpl_pages << PAGE_SHIFT, &pfm_smpl_mem_cur);
	ctx->smpl_buf = NULL;
}

/* give the host the guest-physical address of every buffer page */
int pfm_smplbuf_register(struct pfm_ctx *ctx)
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

int pfm_smplbuf_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pfm_ctx *ctx = file->private_data;

	if (!ctx->smpl_buf)
		return -EINVAL;
	/* the host writes the buffer; programs only read it (perfmon2: EINVAL) */
	if (vma->vm_flags & VM_WRITE)
		return -EINVAL;
	if (vma->vm_pgoff || vma_pages(vma) > ctx->smpl_pages)
		return -EINVAL;
	vm_flags_clear(vma, VM_MAYWRITE);
	return remap_vmalloc_range(vma, ctx->smpl_buf, 0);
}
