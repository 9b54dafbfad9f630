// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, commands: a command block into the vCPU's block in guest RAM
 * and DOORBELL from the vCPU's thread, the per-thread tally of what came
 * back, a loaded system-wide context in one call, a context's state
 * (hostlib.h, "commands").
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "hostlib.h"
#include "internal.h"

static __thread struct hl_hist *hist;

void hl_hist_attach(struct hl_hist *h)
{
	hist = h;
}

static void hist_add(int ioctl_ret, int status)
{
	if (!hist)
		return;
	hist->doorbells++;
	if (ioctl_ret) {
		if (-ioctl_ret < HL_MAX_ERRNO)
			hist->ioctl_err[-ioctl_ret]++;
		else
			hist->other++;
	} else if (!status) {
		hist->ok++;
	} else if (status < 0 && -status < HL_MAX_ERRNO) {
		hist->status[-status]++;
	} else {
		hist->other++;
	}
}

int hl_doorbell(struct hl_vcpu *v)
{
	return ioctl(v->vm->pfm_fd, KVMPFM_DOORBELL, (unsigned long)v->index) ?
	       -errno : 0;
}

int hl_pmu_info_doorbell(int pfm_fd, unsigned long index, void *block)
{
	struct pvpfm_cmd_hdr *h = block;

	memset(h, 0, sizeof(*h) + sizeof(struct pvpfm_pmu_info));
	h->version = PVPFM_ABI_VERSION;
	h->cmd = PVPFM_CMD_PMU_INFO;
	h->arg_size = sizeof(struct pvpfm_pmu_info);
	h->status = 0x7fffffff;
	if (ioctl(pfm_fd, KVMPFM_DOORBELL, index))
		return -errno;
	return h->status;
}

struct raw_req {
	const void *block;
	size_t len;
};

static int raw_fn(struct hl_vcpu *v, void *p)
{
	struct raw_req *r = p;

	int ret;

	memcpy(v->cmd, r->block, r->len);
	if (hist) {
		hist->cur_cmd = ((const struct pvpfm_cmd_hdr *)r->block)->cmd;
		hist->in_doorbell = true;
	}
	ret = hl_doorbell(v);
	if (hist)
		hist->in_doorbell = false;
	hist_add(ret, ((struct pvpfm_cmd_hdr *)v->cmd)->status);
	return ret;
}

int hl_doorbell_raw(struct hl_vcpu *v, const void *block, size_t len)
{
	struct raw_req r = { block, len };

	if (len > PVPFM_CMD_BLOCK_SIZE)
		return -EINVAL;
	return hl_call(v, raw_fn, &r);
}

/* on the vCPU thread: the block into guest RAM, DOORBELL, results back */
static int cmd_fn(struct hl_vcpu *v, void *p)
{
	struct cb_cmd *r = p;
	struct pvpfm_cmd_hdr *hdr = v->cmd;
	int ret;

	if (!cb_fill(v->cmd, r, v->guest_tid, v->guest_tgid))
		return -E2BIG;
	if (hist) {
		hist->cur_cmd = r->cmd;
		hist->in_doorbell = true;
	}
	ret = hl_doorbell(v);
	if (hist)
		hist->in_doorbell = false;
	hist_add(ret, hdr->status);
	if (ret) {
		v->cb.hdr = *hdr;
		return HL_IOCTL_ERR(-ret);
	}
	return cb_unfill(v->cmd, &v->cb, r);
}

int hl_deliver(struct cb_caller *c, struct cb_cmd *cmd)
{
	struct hl_vcpu *v = CB_CONTAINER(c, struct hl_vcpu, cb);

	return hl_call(v, cmd_fn, cmd);
}

int hl_deliver_here(struct cb_caller *c, struct cb_cmd *cmd)
{
	return cmd_fn(CB_CONTAINER(c, struct hl_vcpu, cb), cmd);
}

uint32_t hl_sets_ctx(struct hl_vcpu *v, const char *who, pfarg_setdesc_t *d,
		     uint32_t nsets, pfarg_pmd_t *p, uint32_t npmds,
		     uint64_t smpl_gpa, uint32_t smpl_pages)
{
	uint64_t gpa[HL_SMPL_PAGES_MAX];
	uint32_t id = 0, i;
	int ret;

	if (smpl_pages > HL_SMPL_PAGES_MAX) {
		t_note("%s: %u sampling buffer pages, at most %u", who,
		       smpl_pages, HL_SMPL_PAGES_MAX);
		return 0;
	}
	for (i = 0; i < smpl_pages; i++)
		gpa[i] = smpl_gpa + i * HL_PAGE;
	if (smpl_pages)
		ret = cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE,
				     smpl_pages * HL_PAGE, &id);
	else
		ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
	if (!ret && smpl_pages)
		ret = cb_smpl_register(&v->cb, id, 0, smpl_pages, gpa);
	ret = ret ? ret : cb_create_sets(&v->cb, id, d, nsets);
	ret = ret ? ret : cb_write_pmds(&v->cb, id, p, npmds);
	ret = ret ? ret : cb_load(&v->cb, id, v->index, 0, 0, v->guest_tgid);
	if (ret) {
		t_note("%s: %s (err_index %u)", who, hl_status_str(ret),
		       v->cb.hdr.err_index);
		return 0;
	}
	return id;
}

void hl_destroy_ctxs(struct hl_vcpu *v, const uint32_t *ids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		cb_destroy(&v->cb, ids[i]);
}

int hl_ctx_state(struct cb_caller *c, uint32_t ctx, uint32_t *flags)
{
	struct pvpfm_ctx_state st;
	int ret;

	memset(&st, 0, sizeof(st));
	ret = cb_cmd(c, PVPFM_CMD_CTX_STATE, ctx, 0, &st, sizeof(st));
	*flags = ret ? 0 : st.flags;
	return ret;
}
