// SPDX-License-Identifier: GPL-2.0
/*
 * Error paths: each refused call returns -1 with perfmon2's errno, and for
 * vector calls the refused entry (and no other) carries
 * PFM_REG_RETFL_EINVAL in its flags, while the entries before it are
 * applied: bad register, reserved bits set, unknown set, wrong state,
 * oversize or negative vector, bad pointer, bad flags, unknown sampling
 * format, no such thread, another thread without ptrace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

#define MAX_REGS	128

static struct t_reg regs[MAX_REGS];
static int nregs;

static bool implemented(bool pmc, unsigned int num)
{
	for (int i = 0; i < nregs; i++)
		if (regs[i].pmc == pmc && regs[i].num == num)
			return true;
	return false;
}

static unsigned int unimplemented(bool pmc)
{
	unsigned int n = 255;

	while (n > 0 && implemented(pmc, n))
		n--;
	return n;
}

static const struct t_reg *first_pmc(void)
{
	for (int i = 0; i < nregs; i++)
		if (regs[i].pmc)
			return &regs[i];
	return NULL;
}

/*
 * A vector call refused, its refused entry marked: "errors: @what: EINVAL"
 * for the call's return @ret, "errors: @what: @marked" for that entry's
 * @flags.
 */
static void expect_marked(const char *what, int ret, uint32_t flags,
			  const char *marked)
{
	char name[128];

	snprintf(name, sizeof(name), "errors: %s: EINVAL", what);
	t_expect_err(name, ret, EINVAL);
	snprintf(name, sizeof(name), "errors: %s: %s", what, marked);
	t_check(flags & PFM_REG_RETFL_EINVAL, name, "flags %#x", flags);
}

static void bad_registers(int fd)
{
	pfarg_pmc_t pc[2];
	pfarg_pmd_t pd[2];
	const struct t_reg *r = first_pmc();
	uint64_t bit = 0, val = 0;
	int ret;

	memset(pd, 0, sizeof(pd));
	pd[0].reg_num = PVPFM_VPMD_VCPU_RUN_NS;
	pd[0].reg_value = 1234;
	pd[1].reg_num = PFM_MAX_PMDS - 1;	/* past the virtual PMDs */
	ret = pfm_write_pmds(fd, pd, 2);
	expect_marked("unimplemented PMD", ret, pd[1].reg_flags,
		      "its entry flagged EINVAL");
	t_check(!PFM_REG_HAS_ERROR(pd[0].reg_flags),
		"errors: the entry before it not flagged", "flags %#x",
		pd[0].reg_flags);
	t_read_pmd(fd, PVPFM_VPMD_VCPU_RUN_NS, 0, &val);
	t_check(val == 1234, "errors: the entry before it applied",
		"read %llu, wrote 1234", (unsigned long long)val);

	memset(pc, 0, sizeof(pc));
	pc[0].reg_num = unimplemented(true);
	ret = pfm_write_pmcs(fd, pc, 1);
	t_expect_err("errors: unimplemented PMC: EINVAL", ret, EINVAL);
	t_check(pc[0].reg_flags & PFM_REG_RETFL_EINVAL,
		"errors: unimplemented PMC: flagged EINVAL", "PMC%u flags %#x",
		pc[0].reg_num, pc[0].reg_flags);

	if (!r) {
		t_skip("errors: reserved bits", "no PMC in pmu_desc/mappings");
		return;
	}
	/* reserved: 0 in the mask perfmon2 prints; pick one at 0 by default */
	for (int b = 63; b >= 0 && !bit; b--)
		if (!(r->mask & (1ULL << b)) && !(r->dfl & (1ULL << b)))
			bit = 1ULL << b;
	if (!bit) {
		t_skip("errors: reserved bits", "%s has none", r->name);
	} else {
		/* perfmon2: the bit takes its default, the value is taken */
		memset(pc, 0, sizeof(pc));
		pc[0].reg_num = r->num;
		pc[0].reg_value = r->dfl | bit;
		ret = pfm_write_pmcs(fd, pc, 1);
		t_expect_ok("errors: reserved bit set: accepted, at its default",
			    ret);
		t_check(!PFM_REG_HAS_ERROR(pc[0].reg_flags),
			"errors: reserved bit set: no error flag",
			"%s = %#llx, flags %#x", r->name,
			(unsigned long long)pc[0].reg_value, pc[0].reg_flags);
	}

	memset(pc, 0, sizeof(pc));
	pc[0].reg_num = r->num;
	pc[0].reg_value = r->dfl;
	pc[0].reg_flags = PFM_REGFL_NO_EMUL64;
	ret = pfm_write_pmcs(fd, pc, 1);
	t_expect_err("errors: PFM_REGFL_NO_EMUL64 refused: EINVAL", ret, EINVAL);
}

static void unknown_sets(int fd)
{
	pfarg_pmd_t pd = { .reg_num = PVPFM_VPMD_VCPU_RUN_NS, .reg_set = 42 };
	pfarg_setinfo_t si = { .set_id = 42 };
	pfarg_setdesc_t sd;
	pfarg_start_t st;
	int ret;

	ret = pfm_write_pmds(fd, &pd, 1);
	expect_marked("PMD in unknown set", ret, pd.reg_flags, "flagged EINVAL");

	ret = pfm_getinfo_evtsets(fd, &si, 1);
	expect_marked("getinfo of unknown set", ret, si.set_flags, "flagged");

	memset(&sd, 0, sizeof(sd));
	sd.set_id = 42;
	t_expect_err("errors: delete unknown set: EINVAL",
		     pfm_delete_evtsets(fd, &sd, 1), EINVAL);
	sd.set_id = 0;
	t_expect_err("errors: delete the last set (set 0): EINVAL",
		     pfm_delete_evtsets(fd, &sd, 1), EINVAL);
	/* perfmon2 deletes set 0 like another; it can be made again */
	sd.set_id = 5;
	if (t_expect_ok("errors: create set 5", pfm_create_evtsets(fd, &sd, 1))) {
		sd.set_id = 0;
		t_expect_ok("errors: delete set 0 beside set 5",
			    pfm_delete_evtsets(fd, &sd, 1));
		t_expect_ok("errors: create set 0 again",
			    pfm_create_evtsets(fd, &sd, 1));
		sd.set_id = 5;
		t_expect_ok("errors: delete set 5", pfm_delete_evtsets(fd, &sd, 1));
	}
	memset(&sd, 0, sizeof(sd));
	sd.set_id = 1;
	sd.set_flags = PFM_SETFL_OVFL_SWITCH | PFM_SETFL_TIME_SWITCH;
	sd.set_timeout = 10 * MS;
	t_expect_err("errors: both switch flags: EINVAL",
		     pfm_create_evtsets(fd, &sd, 1), EINVAL);
	sd.set_id = 1;
	sd.set_flags = 0x80;
	t_expect_err("errors: unknown set flags: EINVAL",
		     pfm_create_evtsets(fd, &sd, 1), EINVAL);

	t_expect_err("errors: load with unknown load_set: EINVAL",
		     t_load(fd, t_gettid(), 42), EINVAL);
	if (!t_expect_ok("errors: load on self", t_load(fd, t_gettid(), 0)))
		return;
	memset(&st, 0, sizeof(st));
	st.start_set = 42;
	t_expect_err("errors: start with unknown start_set: EINVAL",
		     pfm_start(fd, &st), EINVAL);
	pfm_unload_context(fd);
}

static void wrong_state(int fd)
{
	pfarg_setdesc_t sd;
	int fd2;

	t_expect_err("errors: start unloaded: EINVAL", pfm_start(fd, NULL), EINVAL);
	t_expect_err("errors: stop unloaded: EINVAL", pfm_stop(fd), EINVAL);
	t_expect_err("errors: restart unloaded: EBUSY", pfm_restart(fd), EBUSY);
	/* perfmon2's __pfm_unload_context: nothing to do, 0 */
	t_expect_ok("errors: unload unloaded: 0", pfm_unload_context(fd));
	if (!t_expect_ok("errors: load on self", t_load(fd, t_gettid(), 0)))
		return;
	t_expect_err("errors: load twice: EBUSY", t_load(fd, t_gettid(), 0), EBUSY);
	fd2 = t_create(0);
	if (t_expect_ok("errors: a second context", fd2)) {
		t_expect_err("errors: load on a monitored thread: EEXIST",
			     t_load(fd2, t_gettid(), 0), EEXIST);
		close(fd2);
	}
	memset(&sd, 0, sizeof(sd));
	sd.set_id = 3;
	t_expect_err("errors: create sets while loaded: EBUSY",
		     pfm_create_evtsets(fd, &sd, 1), EBUSY);
	t_expect_err("errors: delete sets while loaded: EBUSY",
		     pfm_delete_evtsets(fd, &sd, 1), EBUSY);
	t_expect_err("errors: restart without a notification: EBUSY",
		     pfm_restart(fd), EBUSY);
	t_expect_ok("errors: unload", pfm_unload_context(fd));
}

static void vectors(int fd)
{
	long long arg_max = t_sysfs_num("controls/arg_mem_max", -1);
	long long vec_max = t_sysfs_num("device/max_vector", -1);
	int n, big;
	pfarg_pmd_t *pd;

	if (arg_max <= 0 || vec_max <= 0) {
		t_fail("errors: vector limits", "controls/arg_mem_max %lld, device/max_vector %lld",
		       arg_max, vec_max);
		return;
	}
	n = arg_max / sizeof(pfarg_pmd_t) + 1;
	big = n > vec_max + 1 ? n : vec_max + 1;
	pd = calloc(big, sizeof(*pd));
	if (!pd)
		return;
	for (int i = 0; i < big; i++)
		pd[i].reg_num = PVPFM_VPMD_VCPU_RUN_NS;
	t_expect_err("errors: vector over arg_mem_max: E2BIG",
		     pfm_write_pmds(fd, pd, n), E2BIG);
	t_check(!PFM_REG_HAS_ERROR(pd[0].reg_flags) &&
		!PFM_REG_HAS_ERROR(pd[n - 1].reg_flags),
		"errors: E2BIG before the host: no entry flagged", "flags %#x",
		pd[0].reg_flags);
	if (vec_max + 1 <= arg_max / (long long)sizeof(pfarg_pmc_t))
		t_expect_err("errors: vector over the host's max_vector: E2BIG",
			     pfm_write_pmcs(fd, (pfarg_pmc_t *)pd, vec_max + 1),
			     E2BIG);
	else
		t_skip("errors: vector over the host's max_vector: E2BIG",
		       "max_vector %lld: arg_mem_max's %lld bytes bound first",
		       vec_max, arg_max);
	/* perfmon2 took any vector within arg_mem_max: a page of PMCs */
	n = arg_max / sizeof(pfarg_pmc_t);
	memset(pd, 0, big * sizeof(*pd));
	if (n <= vec_max)
		t_expect_ok("errors: a vector of arg_mem_max bytes of PMCs",
			    pfm_write_pmcs(fd, (pfarg_pmc_t *)pd, n));
	else
		t_skip("errors: a vector of arg_mem_max bytes of PMCs",
		       "the host's max_vector %lld", vec_max);
	t_expect_err("errors: negative count: EINVAL",
		     pfm_read_pmds(fd, pd, -1), EINVAL);
	t_expect_ok("errors: empty vector", pfm_read_pmds(fd, pd, 0));
	free(pd);
	t_expect_err("errors: bad vector pointer: EFAULT",
		     pfm_write_pmds(fd, (pfarg_pmd_t *)8, 1), EFAULT);
	t_expect_err("errors: bad load pointer: EFAULT",
		     pfm_load_context(fd, (pfarg_load_t *)8), EFAULT);
}

static void creation(void)
{
	pfm_dfl_smpl_arg_t arg;
	pfarg_ctx_t ctx;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = 0x40;
	t_expect_err("errors: unknown context flag: EINVAL",
		     pfm_create_context(&ctx, NULL, NULL, 0), EINVAL);
	/* perfmon2 ignored the arch-specific bits 16-31: none on x86 */
	ctx.ctx_flags = 0x10000;
	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (t_expect_ok("errors: arch-specific context flag ignored", fd))
		close(fd);
	ctx.ctx_flags = PFM_FL_SYSTEM_WIDE | PFM_FL_NOTIFY_BLOCK;
	if (t_root())
		t_expect_err("errors: system-wide with NOTIFY_BLOCK: EINVAL",
			     pfm_create_context(&ctx, NULL, NULL, 0), EINVAL);
	ctx.ctx_flags = 0;
	memset(&arg, 0, sizeof(arg));
	arg.buf_size = 8192;
	t_expect_err("errors: unknown sampling format: EINVAL",
		     pfm_create_context(&ctx, "nosuch", &arg, sizeof(arg)),
		     EINVAL);
	t_expect_err("errors: format name too long: EINVAL",
		     pfm_create_context(&ctx, "defaultdefaultdefault", &arg,
					sizeof(arg)), EINVAL);
	t_expect_err("errors: NULL context: EFAULT",
		     pfm_create_context(NULL, NULL, NULL, 0), EFAULT);
}

/* who may be attached to: t_attach */
static void threads(int fd)
{
	t_expect_err("errors: load on no such thread: ESRCH",
		     t_load(fd, 0x3ffffff0, 0), ESRCH);
}

/*
 * v2.8x's pfm_read_pmds: a PMD no write put in use is EINVAL; a read
 * gives back reg_ovfl_switch_cnt as written
 */
static void pmd_reads(void)
{
	pfarg_pmd_t pd;
	int fd;

	fd = t_create(0);
	if (!t_expect_ok("errors: create", fd))
		return;
	memset(&pd, 0, sizeof(pd));
	pd.reg_num = RUN_NS;
	t_expect_err("errors: read a PMD never written: EINVAL",
		     pfm_read_pmds(fd, &pd, 1), EINVAL);
	pd.reg_ovfl_switch_cnt = 3;
	if (t_expect_ok("errors: write a PMD with reg_ovfl_switch_cnt 3",
			pfm_write_pmds(fd, &pd, 1))) {
		memset(&pd, 0, sizeof(pd));
		pd.reg_num = RUN_NS;
		if (t_expect_ok("errors: read it", pfm_read_pmds(fd, &pd, 1)))
			t_check(pd.reg_ovfl_switch_cnt == 3,
				"errors: the read returns reg_ovfl_switch_cnt",
				"%llu",
				(unsigned long long)pd.reg_ovfl_switch_cnt);
	}
	close(fd);
}

int main(void)
{
	int fd;

	nregs = t_mappings(regs, MAX_REGS);
	if (!t_check(nregs > 0, "errors: read pmu_desc/mappings", "%s",
		     strerror(errno)))
		nregs = 0;
	fd = t_create(0);
	if (!t_expect_ok("errors: create", fd))
		return t_done();
	bad_registers(fd);
	unknown_sets(fd);
	wrong_state(fd);
	vectors(fd);
	threads(fd);
	close(fd);
	t_expect_err("errors: call on a closed context: EBADF", pfm_stop(fd),
		     EBADF);
	creation();
	pmd_reads();
	return t_done();
}
