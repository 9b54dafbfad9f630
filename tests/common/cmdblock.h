/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command blocks as a guest builds them (include/uapi/pv_perfmon.h), for
 * the tests that play the guest: one function per call puts its argument
 * together and hands the command to the caller's delivery, which fills the
 * block (cb_fill), gets it executed and takes the results back (cb_unfill).
 *
 * Two deliveries use it: the engine's unit tests (tests/unit/t_env.c, the
 * engine called directly over the simulated PMU) and the host tests
 * (tests/host/hostlib.c, the module's DOORBELL from a real KVM vCPU).
 * Userspace C over include/uapi only.
 */
#ifndef _CMDBLOCK_H
#define _CMDBLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "include/uapi/pv_perfmon.h"
#include "include/uapi/perfmon2.h"

/* one command: the header's inputs and the argument, in and back out */
struct cb_cmd {
	uint16_t cmd;
	uint32_t ctx_id, count;
	void *arg;
	uint32_t arg_size;
};

/* who makes the calls: a delivery and the last header it brought back */
struct cb_caller {
	/*
	 * Execute @cmd: cb_fill() a block, run it, cb_unfill() it. Returns the
	 * header's status, or the delivery's own error (< 0).
	 */
	int (*deliver)(struct cb_caller *c, struct cb_cmd *cmd);
	struct pvpfm_cmd_hdr hdr;	/* header of the last call, after it */
};

/* the @type whose member @member @c is, for a delivery */
#define CB_CONTAINER(c, type, member) \
	((type *)((char *)(c) - offsetof(type, member)))

/* what the header's outputs hold until the executor writes them */
#define CB_STATUS_UNSET		0x7fffffff
#define CB_ERR_INDEX_UNSET	0xffffffff

/*
 * The block: header (from guest thread @tid of @tgid) + argument into
 * @block (PVPFM_CMD_BLOCK_SIZE bytes). Returns the block's length, or 0
 * (nothing written) if the argument does not fit a block.
 */
uint32_t cb_fill(void *block, const struct cb_cmd *cmd, uint32_t tid,
		 uint32_t tgid);
/* after execution: header into c->hdr, argument back; returns hdr.status */
int cb_unfill(const void *block, struct cb_caller *c,
	      const struct cb_cmd *cmd);

/*
 * One command: header + @arg_size bytes of @arg; the argument comes back
 * into @arg, the header into c->hdr. Returns the header's status (0 or
 * -errno), or the delivery's own error.
 */
int cb_cmd(struct cb_caller *c, uint16_t cmd, uint32_t ctx_id, uint32_t count,
	   void *arg, uint32_t arg_size);

/*
 * The calls; each returns as cb_cmd(). Those whose argument is a vector of
 * @n entries @v are declared from this list, as
 *	int cb_write_pmcs(struct cb_caller *c, uint32_t ctx, pfarg_pmc_t *v,
 *			  uint32_t n);
 * each with its command and entry type
 */
#define CB_VECTOR_CALLS(X)						\
	X(cb_write_pmcs, PVPFM_CMD_WRITE_PMCS, pfarg_pmc_t)		\
	X(cb_write_pmds, PVPFM_CMD_WRITE_PMDS, pfarg_pmd_t)		\
	X(cb_read_pmds, PVPFM_CMD_READ_PMDS, pfarg_pmd_t)		\
	X(cb_create_sets, PVPFM_CMD_CREATE_EVTSETS, pfarg_setdesc_t)	\
	X(cb_getinfo_sets, PVPFM_CMD_GETINFO_EVTSETS, pfarg_setinfo_t)	\
	X(cb_delete_sets, PVPFM_CMD_DELETE_EVTSETS, pfarg_setdesc_t)
#define CB_VECTOR_DECLARE(name, cmd, type) \
	int name(struct cb_caller *c, uint32_t ctx, type *v, uint32_t n);
CB_VECTOR_CALLS(CB_VECTOR_DECLARE)

/* *@ctx_id (if not NULL): the new context, 0 on failure */
int cb_create(struct cb_caller *c, uint32_t flags, uint32_t *ctx_id);
/* ... with the default sampling format and a buffer of @buf_size bytes */
int cb_create_smpl(struct cb_caller *c, uint32_t flags, uint64_t buf_size,
		   uint32_t *ctx_id);
/* @flags PVPFM_LOAD_*; thread @pid of @tgid, or system-wide: vCPU @pid */
int cb_load(struct cb_caller *c, uint32_t ctx, uint32_t pid, uint16_t set,
	    uint32_t flags, uint32_t tgid);
int cb_start(struct cb_caller *c, uint32_t ctx);	/* no argument */
int cb_start_set(struct cb_caller *c, uint32_t ctx, uint16_t set);
int cb_stop(struct cb_caller *c, uint32_t ctx);
int cb_restart(struct cb_caller *c, uint32_t ctx);
int cb_unload(struct cb_caller *c, uint32_t ctx);	/* no argument */
int cb_unload_flags(struct cb_caller *c, uint32_t ctx, uint32_t flags);
int cb_destroy(struct cb_caller *c, uint32_t ctx);
int cb_switch(struct cb_caller *c, uint32_t out_ctx, uint32_t in_ctx,
	      uint32_t in_tid, uint32_t in_tgid);
/* pages [first, first + n) of the sampling buffer at the u64 gpas @gpa */
int cb_smpl_register(struct cb_caller *c, uint32_t ctx, uint32_t first,
		     uint32_t n, const void *gpa);
int cb_read_msg(struct cb_caller *c, uint32_t ctx, pfarg_msg_t *msg);
int cb_pmu_info(struct cb_caller *c, struct pvpfm_pmu_info *info);

/* one PMC/PMD entry */
void cb_pmc_init(pfarg_pmc_t *p, uint16_t num, uint16_t set, uint64_t value);
void cb_pmd_init(pfarg_pmd_t *p, uint16_t num, uint16_t set, uint64_t value);
/* read one PMD of one set: *@val (0 on failure) */
int cb_read_pmd(struct cb_caller *c, uint32_t ctx, uint16_t set, uint16_t num,
		uint64_t *val);

#endif /* _CMDBLOCK_H */
