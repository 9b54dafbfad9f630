// SPDX-License-Identifier: GPL-2.0
/*
 * The default sampling format, written straight into the guest's buffer.
 *
 * The buffer is guest RAM the guest registered page by page; the engine
 * keeps the authoritative header and writes it back after each batch.
 * An entry (pfm_dfl_smpl_entry_t plus one u64 per PMD in the overflowed
 * PMD's smpl_pmds, in increasing index order) is written whole or not at
 * all. The buffer counts as full when, after an entry, less than
 * hdr_min_buf_space (the largest possible entry) is left, so no sample is
 * lost to a full buffer: full means notification and masking until
 * pfm_restart, which empties it.
 */
#include "pfm_priv.h"

static u32 entry_size(const struct pfm_pmd *p)
{
	u32 n = 0, w;

	for (w = 0; w < PFM_PMD_BV; w++)
		n += pfm_popcount64(p->smpl_pmds[w]);
	return sizeof(pfm_dfl_smpl_entry_t) + n * sizeof(u64);
}

int pfm_smpl_init(struct pfm_engine *e, struct pfm_context *ctx,
		  const pfm_dfl_smpl_arg_t *arg)
{
	u32 min_space = pfm_max_entry_size(&e->pmu);
	pfm_dfl_smpl_hdr_t *hdr = &ctx->smpl.hdr;
	u64 pages;

	if (arg->buf_flags ||
	    arg->buf_size < sizeof(pfm_dfl_smpl_hdr_t) + min_space)
		return -EINVAL;
	if (arg->buf_size > e->lim.max_smpl_buf)
		return -ENOMEM;
	/*
	 * The page count in u64, checked to fit nr_pages: truncated to a u32,
	 * that of a 16 TiB buffer was 0, and an empty page table made a
	 * "ready" buffer of nothing.
	 */
	pages = arg->buf_size / PVPFM_PAGE_SIZE +
		!!(arg->buf_size % PVPFM_PAGE_SIZE);
	if (!pages || pages > (u32)~0U)
		return -ENOMEM;
	ctx->smpl.nr_pages = pages;
	ctx->smpl.pages = pfm_zalloc(e, pfm_size_mul(pages, sizeof(u64)));
	if (!ctx->smpl.pages)
		return -ENOMEM;
	ctx->smpl.fmt = PFM_SMPL_DFL;
	ctx->smpl.buf_size = arg->buf_size;
	hdr->hdr_count = 0;
	hdr->hdr_cur_offs = sizeof(*hdr);
	hdr->hdr_overflows = 0;
	hdr->hdr_buf_size = arg->buf_size;
	hdr->hdr_min_buf_space = min_space;
	hdr->hdr_version = PFM_DFL_SMPL_VERSION;
	hdr->hdr_buf_flags = arg->buf_flags;
	return 0;
}

static void page_release(struct pfm_engine *e, u64 page)
{
	if ((page & PFM_SMPL_PAGE_PRESENT) && e->ops->guest_release)
		e->ops->guest_release(e->be, page & ~PFM_SMPL_PAGE_PRESENT,
				      PVPFM_PAGE_SIZE);
}

void pfm_smpl_free(struct pfm_engine *e, struct pfm_context *ctx)
{
	u32 i;

	for (i = 0; ctx->smpl.pages && i < ctx->smpl.nr_pages; i++)
		page_release(e, ctx->smpl.pages[i]);
	pfm_free(e, ctx->smpl.pages);
	ctx->smpl.pages = NULL;
}

bool pfm_smpl_ready(const struct pfm_context *ctx)
{
	return ctx->smpl.fmt && ctx->smpl.nr_registered == ctx->smpl.nr_pages;
}

static int buf_write(struct pfm_engine *e, struct pfm_context *ctx, u64 off,
		     const void *src, u32 len)
{
	const char *p = src;
	u32 in_page, n;
	u64 gpa;
	int ret;

	while (len) {
		in_page = off % PVPFM_PAGE_SIZE;
		n = PVPFM_PAGE_SIZE - in_page;
		if (n > len)
			n = len;
		gpa = ctx->smpl.pages[off / PVPFM_PAGE_SIZE] &
		      ~PFM_SMPL_PAGE_PRESENT;
		ret = e->ops->guest_write(e->be, gpa + in_page, p, n);
		if (ret)
			return ret;
		off += n;
		p += n;
		len -= n;
	}
	return 0;
}

void pfm_smpl_flush_hdr(struct pfm_engine *e, struct pfm_context *ctx)
{
	if (pfm_smpl_ready(ctx))
		buf_write(e, ctx, 0, &ctx->smpl.hdr, sizeof(ctx->smpl.hdr));
}

void pfm_smpl_reset(struct pfm_engine *e, struct pfm_context *ctx)
{
	ctx->smpl.hdr.hdr_count = 0;
	ctx->smpl.hdr.hdr_cur_offs = sizeof(ctx->smpl.hdr);
	pfm_smpl_flush_hdr(e, ctx);
}

/*
 * @n overflows the host did not deliver (it throttled the VM, perf
 * throttled the event, or the overflow was found periods late): never
 * silent, the guest reads them in its buffer's header.
 */
void pfm_smpl_lost(struct pfm_engine *e, struct pfm_context *ctx, u64 n)
{
	if (!ctx->smpl.fmt)
		return;
	e->stats.samples_lost += n;
	ctx->smpl.hdr.hdr_reserved[PVPFM_DFL_HDR_LOST] += n;
	pfm_smpl_flush_hdr(e, ctx);
}

/*
 * Record the overflow of @pmd. Returns false when the buffer is full:
 * the notification is due.
 */
bool pfm_smpl_record(struct pfm_engine *e, struct pfm_context *ctx,
		     u16 pmd, const struct pfm_where *where, u32 vcpu)
{
	u64 words[(sizeof(pfm_dfl_smpl_entry_t) + PFM_PMU_MAX_PMDS * 8) / 8];
	pfm_dfl_smpl_entry_t *ent = (pfm_dfl_smpl_entry_t *)words;
	pfm_dfl_smpl_hdr_t *hdr = &ctx->smpl.hdr;
	struct pfm_set *set = ctx->active;
	struct pfm_pmd *p = pfm_set_pmd(&e->pmu, set, pmd);
	u64 *val = (u64 *)(ent + 1);
	/* an earlier entry of this interrupt already filled the buffer */
	bool was_full = hdr->hdr_buf_size - hdr->hdr_cur_offs <
			hdr->hdr_min_buf_space;
	unsigned int n;
	u32 size;

	/* smpl_pmds within the implemented PMDs keep an entry in @words */
	if (!p || entry_size(p) > sizeof(words))
		return true;
	size = entry_size(p);

	/*
	 * Only a sample of the same interrupt as the entry that filled the
	 * buffer gets here (monitoring is masked from then on): that entry
	 * already counted the overflow.
	 */
	if (hdr->hdr_cur_offs + size > hdr->hdr_buf_size) {
		e->stats.samples_lost++;
		return false;
	}
	pfm_memset(ent, 0, sizeof(*ent));
	ent->pid = where->tid ? where->tid : ctx->tid;
	ent->tgid = where->tid ? where->tgid : ctx->tgid;
	ent->ovfl_pmd = pmd;
	ent->last_reset_val = p->lval;
	ent->ip = pfm_where_ip(ctx, where);
	ent->tstamp = pfm_now(e);
	ent->cpu = vcpu;
	ent->set = set->id;
	pfm_for_each_bit(n, p->smpl_pmds, PFM_MAX_PMDS)
		*val++ = pfm_pmd_read(e, ctx, set, n);

	if (buf_write(e, ctx, hdr->hdr_cur_offs, ent, size)) {
		e->stats.samples_lost++;
		return true;
	}
	hdr->hdr_count++;
	hdr->hdr_cur_offs += size;
	e->stats.samples++;
	if (hdr->hdr_buf_size - hdr->hdr_cur_offs < hdr->hdr_min_buf_space) {
		hdr->hdr_overflows += !was_full;
		return false;
	}
	return true;
}

int pfm_cmd_smpl_register(struct pfm_cmd_args *a)
{
	struct pvpfm_smpl_register_arg *arg = a->arg;
	struct pfm_engine *e = a->e;
	struct pfm_smpl *smpl = &a->ctx->smpl;
	u64 gpa, *page;
	u32 i;

	if (!smpl->fmt)
		return -EINVAL;
	if (a->ctx->state != PFM_CTX_UNLOADED)
		return -EBUSY;
	if (a->hdr->arg_size != sizeof(*arg) + (u64)arg->nr_pages * sizeof(u64) ||
	    (u64)arg->first_page + arg->nr_pages > smpl->nr_pages)
		return -EINVAL;
	for (i = 0; i < arg->nr_pages; i++) {
		a->hdr->err_index = i;
		gpa = arg->gpa[i];
		if (gpa % PVPFM_PAGE_SIZE)
			return -EFAULT;
	}
	for (i = 0; i < arg->nr_pages; i++) {
		a->hdr->err_index = i;
		page = &smpl->pages[pfm_index_nospec(arg->first_page + i,
						     smpl->nr_pages)];
		if (e->ops->guest_check(e->be, arg->gpa[i], PVPFM_PAGE_SIZE))
			return -EFAULT;
		/* the pages before this one stay registered */
		if (*page & PFM_SMPL_PAGE_PRESENT)
			page_release(e, *page);
		else
			smpl->nr_registered++;
		*page = arg->gpa[i] | PFM_SMPL_PAGE_PRESENT;
	}
	a->hdr->err_index = 0;
	pfm_smpl_flush_hdr(e, a->ctx);
	return 0;
}
