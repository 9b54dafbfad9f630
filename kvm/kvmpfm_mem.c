// SPDX-License-Identifier: GPL-2.0
/*
 * Guest memory through the VMM's memory table, as vhost reaches it.
 *
 * The VMM (QEMU's MemoryListener) hands the module its guest RAM as
 * regions: guest physical range -> the VMM's virtual address
 * (KVMPFM_SET_MEM_TABLE), and hands a new table whenever it changes. The
 * module reads command blocks and writes results and samples with user
 * copies, always from a thread of the VMM (its vCPU threads; its
 * migration thread), so in the VMM's own mm, into what the current table
 * maps and nothing else: no KVM memslot, no page pinned, no host page
 * remembered. A fault on the way (a page the VMM unmapped, userfaultfd
 * during post-copy) is the VMM's own to serve, as for any of its copies.
 *
 * Lifetime: readers use the table under vm->mem_srcu, copy included; a
 * new table is published, then SET_MEM_TABLE waits for the readers of
 * the old one before it frees it and returns. So once the VMM's commit
 * returns, nothing writes through a mapping it dropped, and it may unmap.
 *
 * Dirty pages: a page written is remembered until the VMM fetches it
 * (KVMPFM_GET_DIRTY_LOG, at each sync of QEMU's migration dirty log),
 * with no allocation on the write path: a mark on the sampling page's
 * entry, a bit per page of each vCPU's command block.
 */
#include <linux/bsearch.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include "kvmpfm.h"

/* the table as the module keeps it: regions sorted by gpa */
struct kvmpfm_memmap {
	u32 nr;
	struct kvmpfm_mem_region r[];
};

#define SMPL_PAGE_DIRTY		XA_MARK_1

/* released sampling pages kept, written, until the VMM's next fetch */
#define KVMPFM_RELEASED_MAX	1024

/* at most one fetch's worth per call: the rest waits for the next */
#define KVMPFM_DIRTY_BATCH	4096

static int region_cmp(const void *a, const void *b)
{
	const struct kvmpfm_mem_region *x = a, *y = b;

	if (x->gpa != y->gpa)
		return x->gpa < y->gpa ? -1 : 1;
	return 0;
}

static int gpa_in_region(const void *key, const void *elt)
{
	u64 gpa = *(const u64 *)key;
	const struct kvmpfm_mem_region *r = elt;

	if (gpa < r->gpa)
		return -1;
	return gpa - r->gpa < r->size ? 0 : 1;
}

/* each region page aligned, in the user half, not wrapping */
static bool region_valid(const struct kvmpfm_mem_region *r)
{
	u64 end;

	if (r->reserved || (r->flags & ~KVMPFM_MEM_READONLY) || !r->size)
		return false;
	if (!PAGE_ALIGNED(r->gpa) || !PAGE_ALIGNED(r->size) ||
	    !PAGE_ALIGNED(r->uaddr))
		return false;
	if (check_add_overflow(r->gpa, r->size, &end))
		return false;
	return access_ok(u64_to_user_ptr(r->uaddr), r->size);
}

static struct kvmpfm_memmap *memmap_copy(const void __user *argp)
{
	struct kvmpfm_mem_table t;
	struct kvmpfm_memmap *m;
	u32 i;

	if (copy_from_user(&t, argp, sizeof(t)))
		return ERR_PTR(-EFAULT);
	if (t.reserved || t.nr > KVMPFM_MAX_MEM_REGIONS)
		return ERR_PTR(-EINVAL);
	m = kvmpfm_zalloc(struct_size(m, r, t.nr));
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->nr = t.nr;
	if (copy_from_user(m->r, argp + sizeof(t), array_size(t.nr,
							       sizeof(m->r[0]))))
		goto fault;
	sort(m->r, m->nr, sizeof(m->r[0]), region_cmp, NULL);
	for (i = 0; i < m->nr; i++) {
		if (!region_valid(&m->r[i]))
			goto invalid;
		if (i && m->r[i - 1].gpa + m->r[i - 1].size > m->r[i].gpa)
			goto invalid;
	}
	return m;
invalid:
	kvmpfm_free(m);
	return ERR_PTR(-EINVAL);
fault:
	kvmpfm_free(m);
	return ERR_PTR(-EFAULT);
}

int kvmpfm_set_mem_table(struct kvmpfm_vm *vm, const void __user *argp)
{
	struct kvmpfm_memmap *m, *old;

	if (current->mm != vm->mm)
		return -EPERM;
	m = memmap_copy(argp);
	if (IS_ERR(m))
		return PTR_ERR(m);
	mutex_lock(&vm->mem_lock);
	old = rcu_replace_pointer(vm->memmap, m, lockdep_is_held(&vm->mem_lock));
	mutex_unlock(&vm->mem_lock);
	/* no copy through @old is in flight once this returns */
	synchronize_srcu(&vm->mem_srcu);
	kvmpfm_free(old);
	return 0;
}

int kvmpfm_mem_init(struct kvmpfm_vm *vm)
{
	mutex_init(&vm->mem_lock);
	xa_init(&vm->smpl_pages);
	return init_srcu_struct(&vm->mem_srcu);
}

void kvmpfm_mem_destroy(struct kvmpfm_vm *vm)
{
	struct kvmpfm_smpl_page *pg;
	unsigned long gfn;

	/* the engine released its pages already: this is the backstop */
	xa_for_each(&vm->smpl_pages, gfn, pg) {
		if (pg->refs)
			kvmpfm_account(&kvmpfm_nr_smpl_pages, -1);
		xa_erase(&vm->smpl_pages, gfn);
		kvmpfm_free(pg);
	}
	xa_destroy(&vm->smpl_pages);
	kvmpfm_free(rcu_dereference_protected(vm->memmap, true));
	cleanup_srcu_struct(&vm->mem_srcu);
}

/*
 * The VMM's address of @len bytes at @gpa, within one region of the
 * current table, writable if @write; 0 if the table does not map them
 * so. vm->mem_srcu held.
 */
static unsigned long gpa_to_uaddr(struct kvmpfm_vm *vm, u64 gpa, u32 len,
				  bool write)
{
	const struct kvmpfm_memmap *m = srcu_dereference(vm->memmap,
							 &vm->mem_srcu);
	const struct kvmpfm_mem_region *r;

	if (!m)
		return 0;
	r = bsearch(&gpa, m->r, m->nr, sizeof(m->r[0]), gpa_in_region);
	if (!r || len > r->size - (gpa - r->gpa))
		return 0;
	if (write && (r->flags & KVMPFM_MEM_READONLY))
		return 0;
	return r->uaddr + (gpa - r->gpa);
}

/*
 * Copy to or from guest memory, page by page (a range may cross
 * regions), from a thread of the VMM. -EFAULT if any byte is not mapped
 * as asked or the copy faults.
 */
static int guest_copy(struct kvmpfm_vm *vm, u64 gpa, void *buf, u32 len,
		      bool write)
{
	unsigned long uaddr;
	int idx, ret = 0;
	u32 n;

	if (current->mm != vm->mm)
		return -EFAULT;
	idx = srcu_read_lock(&vm->mem_srcu);
	while (len) {
		n = min_t(u32, len, PAGE_SIZE - offset_in_page(gpa));
		uaddr = gpa_to_uaddr(vm, gpa, n, write);
		if (!uaddr ||
		    (write ? copy_to_user((void __user *)uaddr, buf, n) :
			     copy_from_user(buf, (void __user *)uaddr, n))) {
			ret = -EFAULT;
			break;
		}
		gpa += n;
		buf += n;
		len -= n;
	}
	srcu_read_unlock(&vm->mem_srcu, idx);
	return ret;
}

int kvmpfm_guest_read(struct kvmpfm_vm *vm, u64 gpa, void *dst, u32 len)
{
	return guest_copy(vm, gpa, dst, len, false);
}

/* @len bytes at @gpa are writable guest RAM in the current table */
bool kvmpfm_guest_writable(struct kvmpfm_vm *vm, u64 gpa, u64 len)
{
	bool ok = true;
	int idx;
	u64 off;

	idx = srcu_read_lock(&vm->mem_srcu);
	for (off = 0; ok && off < len; off += PAGE_SIZE)
		ok = gpa_to_uaddr(vm, gpa + off,
				  min_t(u64, PAGE_SIZE, len - off), true);
	srcu_read_unlock(&vm->mem_srcu, idx);
	return ok;
}

/* the command block of @vcpu: results back, its pages noted dirty */
int kvmpfm_guest_copy_out(struct kvmpfm_vcpu *vcpu, u64 gpa, const void *src,
			  u32 len)
{
	int ret = guest_copy(vcpu->vm, gpa, (void *)src, len, true);
	u32 p;

	/*
	 * after the copy: a fetch that clears a bit first sees it set again.
	 * @gpa is the block's (page aligned): its first pages are written.
	 */
	for (p = 0; p < DIV_ROUND_UP(len, PAGE_SIZE); p++)
		set_bit(p, &vcpu->cmd_dirty);
	return ret;
}

/*
 * The engine's guest_check: @gpa becomes a sampling buffer page. It must
 * be writable guest RAM now (else the registration fails); each write
 * looks the table up again, so a page the VMM no longer maps loses its
 * samples (counted by the engine), nothing else is written.
 */
int kvmpfm_guest_check(void *be, u64 gpa, u64 len)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);
	unsigned long gfn = gpa >> PAGE_SHIFT;
	struct kvmpfm_smpl_page *pg;

	/* the engine registers one page at a time */
	if (len != PAGE_SIZE || offset_in_page(gpa) ||
	    !kvmpfm_guest_writable(vm, gpa, len))
		return -EFAULT;
	pg = xa_load(&vm->smpl_pages, gfn);
	if (pg) {
		/* refs 0: released, kept only until its dirty page is fetched */
		if (!pg->refs++) {
			kvmpfm_account(&kvmpfm_nr_smpl_pages, 1);
			vm->nr_released--;
		}
		return 0;
	}
	pg = kvmpfm_zalloc(sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	pg->refs = 1;
	if (xa_err(xa_store(&vm->smpl_pages, gfn, pg, GFP_KERNEL))) {
		kvmpfm_free(pg);
		return -ENOMEM;
	}
	kvmpfm_account(&kvmpfm_nr_smpl_pages, 1);
	return 0;
}

/*
 * A page no longer used for sampling. Written since the last fetch: its
 * entry stays (refs 0) until the fetch has reported it, for at most
 * KVMPFM_RELEASED_MAX such pages per VM: QEMU fetches only while it
 * migrates, and a guest that keeps moving its buffers must not grow
 * this. Past the bound the page is forgotten: the guest released it,
 * what it holds is the guest's to write again.
 */
void kvmpfm_guest_release(void *be, u64 gpa, u64 len)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);
	unsigned long gfn = gpa >> PAGE_SHIFT;
	struct kvmpfm_smpl_page *pg = xa_load(&vm->smpl_pages, gfn);

	if (!pg || !pg->refs || --pg->refs)
		return;
	kvmpfm_account(&kvmpfm_nr_smpl_pages, -1);
	if (xa_get_mark(&vm->smpl_pages, gfn, SMPL_PAGE_DIRTY) &&
	    vm->nr_released < KVMPFM_RELEASED_MAX) {
		vm->nr_released++;
		return;
	}
	xa_erase(&vm->smpl_pages, gfn);
	kvmpfm_free(pg);
}

/* the engine's guest_write: a sample or buffer header; vm->lock held */
int kvmpfm_guest_write(void *be, u64 gpa, const void *src, u32 len)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);
	unsigned long gfn = gpa >> PAGE_SHIFT;
	struct kvmpfm_smpl_page *pg = xa_load(&vm->smpl_pages, gfn);
	int ret;

	if (!pg || !pg->refs || offset_in_page(gpa) + len > PAGE_SIZE)
		return -EFAULT;
	ret = guest_copy(vm, gpa, (void *)src, len, true);
	if (!ret)
		xa_set_mark(&vm->smpl_pages, gfn, SMPL_PAGE_DIRTY);
	return ret;
}

/*
 * Up to @max dirty pages into @gfns, forgotten as taken; vm->lock held.
 * Returns how many; *@more: some are left.
 */
static u32 dirty_take(struct kvmpfm_vm *vm, u64 *gfns, u32 max, bool *more)
{
	struct kvmpfm_smpl_page *pg;
	struct kvmpfm_vcpu *vcpu;
	unsigned long gfn;
	u32 nr = 0, i, p;
	u64 cb;

	*more = false;
	for (i = 0; i < vm->nr_vcpus; i++) {
		vcpu = &vm->vcpus[i];
		cb = READ_ONCE(vcpu->cmd_block);
		if (!(cb & KVMPFM_CMD_BLOCK_SET))
			continue;
		for (p = 0; p < KVMPFM_CMD_BLOCK_PAGES; p++) {
			if (!test_bit(p, &vcpu->cmd_dirty))
				continue;
			if (nr == max) {
				*more = true;
				return nr;
			}
			clear_bit(p, &vcpu->cmd_dirty);
			gfns[nr++] = (cb >> PAGE_SHIFT) + p;
		}
	}
	xa_for_each_marked(&vm->smpl_pages, gfn, pg, SMPL_PAGE_DIRTY) {
		if (nr == max) {
			*more = true;
			break;
		}
		gfns[nr++] = gfn;
		xa_clear_mark(&vm->smpl_pages, gfn, SMPL_PAGE_DIRTY);
		if (!pg->refs) {
			xa_erase(&vm->smpl_pages, gfn);
			kvmpfm_free(pg);
			vm->nr_released--;
		}
	}
	return nr;
}

/* what dirty_take() took, given back: the copy to the VMM failed */
static void dirty_untake(struct kvmpfm_vm *vm, const u64 *gfns, u32 nr)
{
	struct kvmpfm_vcpu *vcpu;
	u64 cb, base;
	u32 i, v;

	for (i = 0; i < nr; i++) {
		if (xa_load(&vm->smpl_pages, gfns[i])) {
			xa_set_mark(&vm->smpl_pages, gfns[i], SMPL_PAGE_DIRTY);
			continue;
		}
		for (v = 0; v < vm->nr_vcpus; v++) {
			vcpu = &vm->vcpus[v];
			cb = READ_ONCE(vcpu->cmd_block);
			base = cb >> PAGE_SHIFT;
			if ((cb & KVMPFM_CMD_BLOCK_SET) && gfns[i] >= base &&
			    gfns[i] < base + KVMPFM_CMD_BLOCK_PAGES)
				set_bit(gfns[i] - base, &vcpu->cmd_dirty);
		}
	}
}

int kvmpfm_get_dirty_log(struct kvmpfm_vm *vm, void __user *argp)
{
	struct kvmpfm_dirty_log log;
	bool more;
	u64 *gfns;
	int ret;

	if (copy_from_user(&log, argp, sizeof(log)))
		return -EFAULT;
	if (log.reserved)
		return -EINVAL;
	log.max = min_t(u32, log.max, KVMPFM_DIRTY_BATCH);
	gfns = kvmpfm_zalloc(array_size(max_t(u32, log.max, 1),
					 sizeof(*gfns)));
	if (!gfns)
		return -ENOMEM;
	ret = mutex_lock_killable(&vm->lock);
	if (ret)
		goto out;
	log.nr = dirty_take(vm, gfns, log.max, &more);
	mutex_unlock(&vm->lock);
	log.more = more;
	if (copy_to_user(u64_to_user_ptr(log.gfns), gfns,
			 array_size(log.nr, sizeof(*gfns))) ||
	    copy_to_user(argp, &log, sizeof(log))) {
		ret = -EFAULT;
		/* not lost: the next fetch reports them */
		mutex_lock(&vm->lock);
		dirty_untake(vm, gfns, log.nr);
		mutex_unlock(&vm->lock);
	}
out:
	kvmpfm_free(gfns);
	return ret;
}
