// SPDX-License-Identifier: GPL-2.0
/*
 * Command blocks as a guest builds them: see cmdblock.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmdblock.h"

uint32_t cb_fill(void *block, const struct cb_cmd *cmd, uint32_t tid,
		 uint32_t tgid)
{
	struct pvpfm_cmd_hdr *hdr = block;

	if (cmd->arg_size > PVPFM_CMD_ARGS_MAX)
		return 0;
	/* the outputs hold what no executor writes, to see that one did */
	*hdr = (struct pvpfm_cmd_hdr){
		.version = PVPFM_ABI_VERSION,
		.cmd = cmd->cmd,
		.ctx_id = cmd->ctx_id,
		.count = cmd->count,
		.arg_size = cmd->arg_size,
		.tid = tid,
		.tgid = tgid,
		.status = CB_STATUS_UNSET,
		.err_index = CB_ERR_INDEX_UNSET,
	};
	if (cmd->arg_size)
		memcpy(hdr + 1, cmd->arg, cmd->arg_size);
	return sizeof(*hdr) + cmd->arg_size;
}

int cb_unfill(const void *block, struct cb_caller *c,
	      const struct cb_cmd *cmd)
{
	const struct pvpfm_cmd_hdr *hdr = block;

	c->hdr = *hdr;
	if (cmd->arg && cmd->arg_size)
		memcpy(cmd->arg, hdr + 1, cmd->arg_size);
	return hdr->status;
}

int cb_cmd(struct cb_caller *c, uint16_t cmd, uint32_t ctx_id, uint32_t count,
	   void *arg, uint32_t arg_size)
{
	struct cb_cmd r = {
		.cmd = cmd, .ctx_id = ctx_id, .count = count,
		.arg = arg, .arg_size = arg_size,
	};

	return c->deliver(c, &r);
}

static int create(struct cb_caller *c, struct pvpfm_create_arg *a,
		  uint32_t *ctx_id)
{
	int ret = cb_cmd(c, PVPFM_CMD_CREATE_CONTEXT, 0, 0, a, sizeof(*a));

	if (ctx_id)
		*ctx_id = ret ? 0 : c->hdr.ctx_id;
	return ret;
}

int cb_create(struct cb_caller *c, uint32_t flags, uint32_t *ctx_id)
{
	struct pvpfm_create_arg a;

	memset(&a, 0, sizeof(a));
	a.ctx.ctx_flags = flags;
	return create(c, &a, ctx_id);
}

int cb_create_smpl(struct cb_caller *c, uint32_t flags, uint64_t buf_size,
		   uint32_t *ctx_id)
{
	struct pvpfm_create_arg a;

	memset(&a, 0, sizeof(a));
	a.ctx.ctx_flags = flags;
	strcpy(a.smpl_name, PFM_DFL_SMPL_NAME);
	a.smpl_arg.buf_size = buf_size;
	return create(c, &a, ctx_id);
}

#define CB_VECTOR_DEFINE(name, cmd, type)				\
int name(struct cb_caller *c, uint32_t ctx, type *v, uint32_t n)	\
{									\
	return cb_cmd(c, cmd, ctx, n, v, n * sizeof(*v));		\
}
CB_VECTOR_CALLS(CB_VECTOR_DEFINE)

int cb_load(struct cb_caller *c, uint32_t ctx, uint32_t pid, uint16_t set,
	    uint32_t flags, uint32_t tgid)
{
	struct pvpfm_load_arg a;

	memset(&a, 0, sizeof(a));
	a.load.load_pid = pid;
	a.load.load_set = set;
	a.flags = flags;
	a.tgid = tgid;
	return cb_cmd(c, PVPFM_CMD_LOAD_CONTEXT, ctx, 0, &a, sizeof(a));
}

int cb_start(struct cb_caller *c, uint32_t ctx)
{
	return cb_cmd(c, PVPFM_CMD_START, ctx, 0, NULL, 0);
}

int cb_start_set(struct cb_caller *c, uint32_t ctx, uint16_t set)
{
	pfarg_start_t a;

	memset(&a, 0, sizeof(a));
	a.start_set = set;
	return cb_cmd(c, PVPFM_CMD_START, ctx, 0, &a, sizeof(a));
}

int cb_stop(struct cb_caller *c, uint32_t ctx)
{
	return cb_cmd(c, PVPFM_CMD_STOP, ctx, 0, NULL, 0);
}

int cb_restart(struct cb_caller *c, uint32_t ctx)
{
	return cb_cmd(c, PVPFM_CMD_RESTART, ctx, 0, NULL, 0);
}

int cb_unload(struct cb_caller *c, uint32_t ctx)
{
	return cb_cmd(c, PVPFM_CMD_UNLOAD_CONTEXT, ctx, 0, NULL, 0);
}

int cb_unload_flags(struct cb_caller *c, uint32_t ctx, uint32_t flags)
{
	struct pvpfm_unload_arg a = { .flags = flags, .reserved = 0 };

	return cb_cmd(c, PVPFM_CMD_UNLOAD_CONTEXT, ctx, 0, &a, sizeof(a));
}

int cb_destroy(struct cb_caller *c, uint32_t ctx)
{
	return cb_cmd(c, PVPFM_CMD_DESTROY_CONTEXT, ctx, 0, NULL, 0);
}

int cb_switch(struct cb_caller *c, uint32_t out_ctx, uint32_t in_ctx,
	      uint32_t in_tid, uint32_t in_tgid)
{
	struct pvpfm_switch_arg a = {
		.out_ctx = out_ctx, .in_ctx = in_ctx,
		.in_tid = in_tid, .in_tgid = in_tgid,
	};

	return cb_cmd(c, PVPFM_CMD_SWITCH, 0, 0, &a, sizeof(a));
}

int cb_smpl_register(struct cb_caller *c, uint32_t ctx, uint32_t first,
		     uint32_t n, const void *gpa)
{
	size_t sz = sizeof(struct pvpfm_smpl_register_arg) + n * sizeof(__u64);
	struct pvpfm_smpl_register_arg *a;
	int ret;

	if (sz > PVPFM_CMD_ARGS_MAX)
		return -E2BIG;
	a = calloc(1, sz);
	if (!a)
		return -ENOMEM;
	a->first_page = first;
	a->nr_pages = n;
	memcpy(a->gpa, gpa, n * sizeof(__u64));
	ret = cb_cmd(c, PVPFM_CMD_SMPL_REGISTER, ctx, 0, a, sz);
	free(a);
	return ret;
}

int cb_read_msg(struct cb_caller *c, uint32_t ctx, pfarg_msg_t *msg)
{
	memset(msg, 0, sizeof(*msg));
	return cb_cmd(c, PVPFM_CMD_READ_MSG, ctx, 0, msg, sizeof(*msg));
}

int cb_pmu_info(struct cb_caller *c, struct pvpfm_pmu_info *info)
{
	memset(info, 0, sizeof(*info));
	return cb_cmd(c, PVPFM_CMD_PMU_INFO, 0, 0, info, sizeof(*info));
}

void cb_pmc_init(pfarg_pmc_t *p, uint16_t num, uint16_t set, uint64_t value)
{
	memset(p, 0, sizeof(*p));
	p->reg_num = num;
	p->reg_set = set;
	p->reg_value = value;
}

void cb_pmd_init(pfarg_pmd_t *p, uint16_t num, uint16_t set, uint64_t value)
{
	memset(p, 0, sizeof(*p));
	p->reg_num = num;
	p->reg_set = set;
	p->reg_value = value;
}

int cb_read_pmd(struct cb_caller *c, uint32_t ctx, uint16_t set, uint16_t num,
		uint64_t *val)
{
	pfarg_pmd_t p;
	int ret;

	cb_pmd_init(&p, num, set, 0);
	ret = cb_read_pmds(c, ctx, &p, 1);
	*val = ret ? 0 : p.reg_value;
	return ret;
}
