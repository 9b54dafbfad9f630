// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's one entry point for guest commands. A command block is
 * untrusted bytes: everything the handlers may rely on about its shape
 * (version, command, argument size, vector length, context) is checked
 * here, once, against the command table.
 */
#include "pfm_priv.h"

enum pfm_arg_kind {
	PFM_ARG_NONE,		/* arg_size == 0 */
	PFM_ARG_FIXED,		/* arg_size == size */
	PFM_ARG_OPTIONAL,	/* arg_size == 0 or size */
	PFM_ARG_VECTOR,		/* arg_size == count * size */
	PFM_ARG_VARIABLE,	/* arg_size >= size; the handler checks */
};

struct pfm_cmd_desc {
	int (*handler)(struct pfm_cmd_args *a);
	enum pfm_arg_kind kind;
	u32 size;
	bool needs_ctx;
};

static const struct pfm_cmd_desc cmd_table[PVPFM_CMD_MAX] = {
	[PVPFM_CMD_CREATE_CONTEXT] = { pfm_cmd_create_context, PFM_ARG_FIXED,
		sizeof(struct pvpfm_create_arg), false },
	[PVPFM_CMD_WRITE_PMCS] = { pfm_cmd_write_pmcs, PFM_ARG_VECTOR,
		sizeof(pfarg_pmc_t), true },
	[PVPFM_CMD_WRITE_PMDS] = { pfm_cmd_write_pmds, PFM_ARG_VECTOR,
		sizeof(pfarg_pmd_t), true },
	[PVPFM_CMD_READ_PMDS] = { pfm_cmd_read_pmds, PFM_ARG_VECTOR,
		sizeof(pfarg_pmd_t), true },
	[PVPFM_CMD_LOAD_CONTEXT] = { pfm_cmd_load_context, PFM_ARG_FIXED,
		sizeof(struct pvpfm_load_arg), true },
	[PVPFM_CMD_START] = { pfm_cmd_start, PFM_ARG_OPTIONAL,
		sizeof(pfarg_start_t), true },
	[PVPFM_CMD_STOP] = { pfm_cmd_stop, PFM_ARG_NONE, 0, true },
	[PVPFM_CMD_RESTART] = { pfm_cmd_restart, PFM_ARG_NONE, 0, true },
	[PVPFM_CMD_CREATE_EVTSETS] = { pfm_cmd_create_evtsets, PFM_ARG_VECTOR,
		sizeof(pfarg_setdesc_t), true },
	[PVPFM_CMD_GETINFO_EVTSETS] = { pfm_cmd_getinfo_evtsets, PFM_ARG_VECTOR,
		sizeof(pfarg_setinfo_t), true },
	[PVPFM_CMD_DELETE_EVTSETS] = { pfm_cmd_delete_evtsets, PFM_ARG_VECTOR,
		sizeof(pfarg_setdesc_t), true },
	[PVPFM_CMD_UNLOAD_CONTEXT] = { pfm_cmd_unload_context, PFM_ARG_OPTIONAL,
		sizeof(struct pvpfm_unload_arg), true },
	[PVPFM_CMD_DESTROY_CONTEXT] = { pfm_cmd_destroy_context, PFM_ARG_NONE,
		0, true },
	[PVPFM_CMD_SWITCH] = { pfm_cmd_switch, PFM_ARG_FIXED,
		sizeof(struct pvpfm_switch_arg), false },
	[PVPFM_CMD_SMPL_REGISTER] = { pfm_cmd_smpl_register, PFM_ARG_VARIABLE,
		sizeof(struct pvpfm_smpl_register_arg), true },
	[PVPFM_CMD_READ_MSG] = { pfm_cmd_read_msg, PFM_ARG_FIXED,
		sizeof(pfarg_msg_t), true },
	[PVPFM_CMD_PMU_INFO] = { pfm_cmd_pmu_info, PFM_ARG_FIXED,
		sizeof(struct pvpfm_pmu_info), false },
	[PVPFM_CMD_REG_DESC] = { pfm_cmd_reg_desc, PFM_ARG_VECTOR,
		sizeof(struct pvpfm_reg_desc), false },
	[PVPFM_CMD_CTX_STATE] = { pfm_cmd_ctx_state, PFM_ARG_FIXED,
		sizeof(struct pvpfm_ctx_state), true },
};

static int check_args(const struct pfm_engine *e, const struct pfm_cmd_desc *d,
		      const struct pvpfm_cmd_hdr *hdr)
{
	switch (d->kind) {
	case PFM_ARG_NONE:
		return hdr->arg_size ? -EINVAL : 0;
	case PFM_ARG_FIXED:
		return hdr->arg_size != d->size ? -EINVAL : 0;
	case PFM_ARG_OPTIONAL:
		return hdr->arg_size && hdr->arg_size != d->size ? -EINVAL : 0;
	case PFM_ARG_VECTOR:
		if (hdr->count > e->lim.max_vector)
			return -E2BIG;
		return (u64)hdr->count * d->size != hdr->arg_size ? -EINVAL : 0;
	case PFM_ARG_VARIABLE:
		return hdr->arg_size < d->size ? -EINVAL : 0;
	}
	return -EINVAL;
}

static int dispatch(struct pfm_engine *e, u32 vcpu, struct pvpfm_cmd_hdr *hdr,
		    u32 len)
{
	const struct pfm_cmd_desc *d;
	struct pfm_cmd_args a = {
		.e = e,
		.hdr = hdr,
		.arg = hdr + 1,
		.who = { .vcpu = vcpu, .tid = hdr->tid, .tgid = hdr->tgid },
	};
	u16 cmd = hdr->cmd;
	int ret;

	if (hdr->version != PVPFM_ABI_VERSION)
		return -EPROTO;
	if (hdr->arg_size > len - sizeof(*hdr))
		return -EINVAL;
	if (!cmd || cmd >= PVPFM_CMD_MAX)
		return -ENOSYS;
	/* the guest's command selects an indirect call: no speculation past */
	d = &cmd_table[pfm_index_nospec(cmd, PVPFM_CMD_MAX)];
	if (!d->handler)
		return -ENOSYS;
	ret = check_args(e, d, hdr);
	if (ret)
		return ret;
	if (d->needs_ctx) {
		a.ctx = pfm_ctx_find(e, hdr->ctx_id);
		if (!a.ctx)
			return -EBADF;
	}
	return d->handler(&a);
}

int pfm_engine_exec(struct pfm_engine *e, u32 vcpu, void *block, u32 len)
{
	struct pvpfm_cmd_hdr *hdr = block;
	int ret;

	/* the host's own copy: a misuse by the caller, not by the guest */
	if (len < sizeof(*hdr) || len > PVPFM_CMD_BLOCK_SIZE ||
	    ((unsigned long)block & 7) || vcpu >= e->cfg.nr_vcpus)
		return -EINVAL;
	/* the handlers index the vCPU table with it */
	vcpu = pfm_index_nospec(vcpu, e->cfg.nr_vcpus);

	e->stats.commands++;
	if (hdr->cmd < PVPFM_CMD_MAX)
		e->stats.calls[pfm_index_nospec(hdr->cmd, PVPFM_CMD_MAX)]++;
	hdr->err_index = 0;
	ret = dispatch(e, vcpu, hdr, len);
	hdr->status = ret;
	if (ret) {
		e->stats.command_errors++;
		if (-ret < PFM_STAT_ERRNOS)
			e->stats.refusals[-ret]++;
	}
	if (hdr->arg_size > len - sizeof(*hdr))
		return sizeof(*hdr);
	return sizeof(*hdr) + hdr->arg_size;
}
