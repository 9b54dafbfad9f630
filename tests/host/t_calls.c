// SPDX-License-Identifier: GPL-2.0
/*
 * t_calls: the twelve perfmon2 calls and the rest of the command set
 * (DESTROY, READ_MSG, PMU_INFO, REG_DESC), each as a guest makes it through
 * its vCPU's command block and DOORBELL: what succeeds, what each error
 * path answers (status, err_index, PFM_REG_RETFL_* in the failing entry).
 *
 * Events the host cannot back: the rig has no hardware PMU at any level,
 * so a PMC programmed with an architectural hardware event (amd64
 * PERFSEL0 = 0x76 | USR | OS | INT | EN, cycles) must be refused with
 * PFM_REG_RETFL_NOTAVAIL; with an admin event map aliasing it to the host's
 * PERF_TYPE_SOFTWARE / PERF_COUNT_SW_TASK_CLOCK it must be accepted and
 * count the vCPU thread's CPU time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "hostlib.h"

/* amd64 PERFSEL fields */
#define SEL_USR		(1ULL << 16)
#define SEL_OS		(1ULL << 17)
#define SEL_INT		(1ULL << 20)	/* reserved, default 1 */
#define SEL_EN		(1ULL << 22)
#define SEL(ev)		((uint64_t)(ev) | SEL_USR | SEL_OS | SEL_INT | SEL_EN)


static struct hl_vm vm;
static struct hl_vcpu *v0, *v1;

static bool vm_up(const char *name, const struct hl_vm_opts *o)
{
	int ret = o ? hl_vm_create(&vm, o) : hl_vm_simple(&vm, 2);

	v0 = &vm.vcpus[0];
	v1 = &vm.vcpus[1];
	return t_check(!ret, name, "VM: %s", hl_errname(ret));
}

/* the VM made again, with BIND_VM's limit @l at @val */
static bool vm_again_limited(const char *name, int l, uint64_t val)
{
	struct hl_vm_opts o = hl_vm_opts_simple(2);

	hl_vm_destroy(&vm);
	hl_lim_set(&o.bind, l, val);
	return vm_up(name, &o);
}

static uint32_t ctx_new(uint32_t flags)
{
	uint32_t id = 0;
	int ret = cb_create(&v0->cb, flags, &id);

	if (ret)
		t_note("create_context: %s", hl_status_str(ret));
	return id;
}

static void t_pmu_info(void)
{
	struct pvpfm_pmu_info info;
	struct pvpfm_reg_desc d[16];
	int ret, i;
	bool ok;

	ret = cb_pmu_info(&v0->cb, &info);
	HL_EXPECT("pmu_info_ok", ret, 0);
	t_check(!strcmp(info.model, "amd64") && info.num_pmcs == 4 &&
		info.num_pmds == 10 && info.max_pmc == 4 &&
		info.max_pmd == PVPFM_VPMD_END,
		"pmu_info_amd64", "model %.32s pmcs %u pmds %u max_pmc %u max_pmd %u",
		info.model, info.num_pmcs, info.num_pmds, info.max_pmc,
		info.max_pmd);
	t_check(info.impl_pmcs[0] == 0xf && info.impl_pmds[0] == 0xf &&
		info.impl_pmds[4] == 0x3f && !info.impl_pmds[1],
		"pmu_info_impl_bitmaps", "pmcs %#llx pmds[0] %#llx pmds[4] %#llx",
		(unsigned long long)info.impl_pmcs[0],
		(unsigned long long)info.impl_pmds[0],
		(unsigned long long)info.impl_pmds[4]);
	/* the engine's defaults: a context per thread of a large program,
	 * vectors as long as the command block holds */
	t_check(info.max_contexts == 1024 && info.max_sets == 32 &&
		info.max_vector == PVPFM_CMD_ARGS_MAX / sizeof(pfarg_pmc_t) &&
		info.max_smpl_buf == (4ULL << 20),
		"pmu_info_default_limits", "contexts %u sets %u vector %u buf %llu",
		info.max_contexts, info.max_sets, info.max_vector,
		(unsigned long long)info.max_smpl_buf);
	/* set timeouts are multiples of the set timer's 1 ms (CREATE_EVTSETS) */
	t_check(info.set_timeout_res_ns == 1000000, "pmu_info_set_timeout_res",
		"set_timeout_res_ns %u, want 1000000", info.set_timeout_res_ns);

	memset(d, 0, sizeof(d));
	ret = cb_cmd(&v0->cb, PVPFM_CMD_REG_DESC, 0, 16, d, sizeof(d));
	HL_EXPECT("reg_desc_ok", ret, 0);
	t_check(v0->cb.hdr.count == 14, "reg_desc_count",
		"%u registers, want 14 (4 PMCs, 4 PMDs, 6 virtual)",
		v0->cb.hdr.count);
	ok = true;
	for (i = 0; i < 4; i++)
		ok &= d[i].type == PVPFM_REG_PMC && d[i].num == i &&
		      d[i].dfl_val == SEL_INT && (d[i].rsvd_msk & SEL_INT);
	t_check(ok && !strcmp(d[0].name, "PERFSEL0"), "reg_desc_pmcs",
		"PMC0 %s type %u dfl %#llx rsvd %#llx", d[0].name, d[0].type,
		(unsigned long long)d[0].dfl_val,
		(unsigned long long)d[0].rsvd_msk);
	ok = true;
	for (i = 0; i < 6; i++)
		ok &= d[8 + i].type == PVPFM_REG_PMD &&
		      d[8 + i].num == PVPFM_VPMD_VCPU_RUN_NS + i &&
		      (d[8 + i].flags & PVPFM_REGF_VIRTUAL);
	t_check(ok && !strcmp(d[8].name, "VCPU_RUN_NS") &&
		!(d[4].flags & PVPFM_REGF_VIRTUAL) &&
		(d[4].flags & PVPFM_REGF_COUNTER),
		"reg_desc_virtual_pmds", "PMD entry 8: %s num %u flags %#x",
		d[8].name, d[8].num, d[8].flags);
	memset(d, 0, sizeof(d));
	ret = cb_cmd(&v0->cb, PVPFM_CMD_REG_DESC, 10, 8, d, 8 * sizeof(d[0]));
	t_check(!ret && v0->cb.hdr.count == 4 &&
		d[3].num == PVPFM_VPMD_END - 1,
		"reg_desc_from_position", "status %s count %u last %u",
		hl_status_str(ret), v0->cb.hdr.count, d[3].num);
	ret = cb_cmd(&v0->cb, PVPFM_CMD_REG_DESC, 1000, 1, d, sizeof(d[0]));
	t_check(!ret && v0->cb.hdr.count == 0, "reg_desc_past_end_empty",
		"status %s count %u", hl_status_str(ret), v0->cb.hdr.count);
}

static void t_create(void)
{
	struct pvpfm_create_arg a;
	uint32_t ids[5], id1, id2;
	int ret, i;

	id1 = ctx_new(0);
	id2 = ctx_new(PFM_FL_SYSTEM_WIDE);
	t_check(id1 && id2 && id1 != id2, "create_context_ids",
		"ids %u %u", id1, id2);
	HL_EXPECT("create_context_bad_flags_einval",
		  cb_create(&v0->cb, 0x100, NULL), -EINVAL);
	HL_EXPECT("create_context_sys_block_einval",
		  cb_create(&v0->cb, PFM_FL_SYSTEM_WIDE | PFM_FL_NOTIFY_BLOCK,
			    NULL), -EINVAL);
	HL_EXPECT("create_context_flags_ok",
		  cb_create(&v0->cb, PFM_FL_NOTIFY_BLOCK | PFM_FL_OVFL_NO_MSG,
			    &ids[0]), 0);
	cb_destroy(&v0->cb, ids[0]);

	memset(&a, 0, sizeof(a));
	strcpy(a.smpl_name, "defaulx");
	HL_EXPECT("create_context_bad_format_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a,
			 sizeof(a)), -EINVAL);
	strcpy(a.smpl_name, "default");
	a.smpl_name[12] = 'x';	/* padding must be zero */
	a.smpl_arg.buf_size = 8192;
	HL_EXPECT("create_context_format_padding_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a,
			 sizeof(a)), -EINVAL);
	HL_EXPECT("create_context_small_buffer_einval",
		  cb_create_smpl(&v0->cb, 0, 64, NULL), -EINVAL);
	HL_EXPECT("create_context_buffer_over_limit_enomem",
		  cb_create_smpl(&v0->cb, 0, (4ULL << 20) + 1, NULL), -ENOMEM);
	memset(&a, 0, sizeof(a));
	strcpy(a.smpl_name, "default");
	a.smpl_arg.buf_size = 8192;
	a.smpl_arg.buf_flags = 1;
	HL_EXPECT("create_context_buf_flags_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a,
			 sizeof(a)), -EINVAL);
	HL_EXPECT("create_context_short_arg_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a,
			 sizeof(a) - 8), -EINVAL);
	HL_EXPECT("create_context_smpl_ok",
		  cb_create_smpl(&v0->cb, 0, 8192, &ids[0]), 0);
	cb_destroy(&v0->cb, ids[0]);
	cb_destroy(&v0->cb, id1);
	cb_destroy(&v0->cb, id2);

	/* the admin's limit: 4 contexts */
	if (!vm_again_limited("create_context_limit_setup", HL_LIM_CONTEXTS, 4))
		return;
	for (i = 0; i < 4; i++)
		ret = cb_create(&v0->cb, 0, &ids[i]);
	HL_EXPECT("create_context_4_of_4_ok", ret, 0);
	HL_EXPECT("create_context_over_limit_emfile",
		  cb_create(&v1->cb, 0, &ids[4]), -EMFILE);
	cb_destroy(&v0->cb, ids[2]);
	HL_EXPECT("create_context_after_destroy_ok",
		  cb_create(&v1->cb, 0, &ids[2]), 0);
	hl_vm_destroy(&vm);
	vm_up("calls_vm_setup", NULL);
}

static void t_write_pmcs(void)
{
	uint32_t id = ctx_new(PFM_FL_SYSTEM_WIDE);
	pfarg_pmc_t p[3];
	int ret;

	cb_pmc_init(&p[0], 0, 0, SEL_INT | 0x76 | SEL_USR);	/* EN clear */
	HL_EXPECT("write_pmcs_disabled_event_ok",
		  cb_write_pmcs(&v0->cb, id, p, 1), 0);
	cb_pmc_init(&p[0], 0, 0, SEL_INT);
	cb_pmc_init(&p[1], 1, 0, SEL_INT);
	cb_pmc_init(&p[2], 3, 0, SEL_INT);
	HL_EXPECT("write_pmcs_vector_ok", cb_write_pmcs(&v0->cb, id, p, 3), 0);

	/*
	 * Reserved bits take the register's default whatever the guest
	 * wrote, as perfmon2 forced them: accepted, nothing flagged
	 */
	cb_pmc_init(&p[0], 1, 0, SEL_INT);
	cb_pmc_init(&p[1], 2, 0, SEL_INT | (1ULL << 21));	/* reserved */
	cb_pmc_init(&p[2], 3, 0, SEL_INT);
	ret = cb_write_pmcs(&v0->cb, id, p, 3);
	t_check(!ret && !(p[0].reg_flags | p[1].reg_flags | p[2].reg_flags),
		"write_pmcs_reserved_bit_ok",
		"status %s err_index %u flags %#x/%#x/%#x", hl_status_str(ret),
		v0->cb.hdr.err_index, p[0].reg_flags, p[1].reg_flags,
		p[2].reg_flags);
	cb_pmc_init(&p[0], 0, 0, 0x76 | SEL_USR | SEL_OS);	/* INT 0, EN 0 */
	ret = cb_write_pmcs(&v0->cb, id, p, 1);
	t_check(!ret && !p[0].reg_flags, "write_pmcs_reserved_default_ok",
		"status %s flags %#x", hl_status_str(ret), p[0].reg_flags);
	/* INT 0 on an enabled event: judged on the event alone (cycles) */
	cb_pmc_init(&p[0], 0, 0, 0x76 | SEL_USR | SEL_OS | SEL_EN);
	ret = cb_write_pmcs(&v0->cb, id, p, 1);
	t_check(ret == -EINVAL && (p[0].reg_flags & PFM_REG_RETFL_NOTAVAIL) &&
		!(p[0].reg_flags & PFM_REG_RETFL_EINVAL),
		"write_pmcs_reserved_default_event_notavail",
		"status %s flags %#x", hl_status_str(ret), p[0].reg_flags);
	cb_pmc_init(&p[0], 0, 0, SEL_INT | (1ULL << 50));
	ret = cb_write_pmcs(&v0->cb, id, p, 1);
	t_check(!ret && !p[0].reg_flags, "write_pmcs_reserved_high_ok",
		"status %s flags %#x", hl_status_str(ret), p[0].reg_flags);
	cb_pmc_init(&p[0], 4, 0, SEL_INT);
	ret = cb_write_pmcs(&v0->cb, id, p, 1);
	t_check(ret == -EINVAL && (p[0].reg_flags & PFM_REG_RETFL_EINVAL),
		"write_pmcs_unimplemented_einval", "status %s flags %#x",
		hl_status_str(ret), p[0].reg_flags);
	cb_pmc_init(&p[0], 300, 0, SEL_INT);
	HL_EXPECT("write_pmcs_pmc300_einval", cb_write_pmcs(&v0->cb, id, p, 1),
		  -EINVAL);
	cb_pmc_init(&p[0], 0, 0, SEL_INT);
	p[0].reg_flags = PFM_REGFL_NO_EMUL64;
	HL_EXPECT("write_pmcs_no_emul64_einval",
		  cb_write_pmcs(&v0->cb, id, p, 1), -EINVAL);
	cb_pmc_init(&p[0], 0, 7, SEL_INT);
	HL_EXPECT("write_pmcs_no_such_set_einval",
		  cb_write_pmcs(&v0->cb, id, p, 1), -EINVAL);
	/* retfl bits the guest left in an entry are cleared, not refused */
	cb_pmc_init(&p[0], 0, 0, SEL_INT);
	p[0].reg_flags = PFM_REG_RETFL_EINVAL;
	ret = cb_write_pmcs(&v0->cb, id, p, 1);
	t_check(!ret && !p[0].reg_flags, "write_pmcs_stale_retfl_cleared",
		"status %s flags %#x", hl_status_str(ret), p[0].reg_flags);
	cb_destroy(&v0->cb, id);
}

static void expect_notavail(uint32_t id, const char *name, uint64_t value)
{
	pfarg_pmc_t p[2];
	int ret;

	cb_pmc_init(&p[0], 1, 0, SEL_INT);
	cb_pmc_init(&p[1], 0, 0, value);
	ret = cb_write_pmcs(&v0->cb, id, p, 2);
	t_check(ret == -EINVAL && v0->cb.hdr.err_index == 1 &&
		(p[1].reg_flags & PFM_REG_RETFL_NOTAVAIL) &&
		!(p[1].reg_flags & PFM_REG_RETFL_EINVAL),
		name, "PMC0=%#llx: status %s err_index %u reg_flags %#x",
		(unsigned long long)value, hl_status_str(ret),
		v0->cb.hdr.err_index, p[1].reg_flags);
}

static void t_notavail(void)
{
	uint32_t id = ctx_new(PFM_FL_SYSTEM_WIDE);

	expect_notavail(id, "notavail_cycles_0x76", SEL(0x76));
	expect_notavail(id, "notavail_instructions_0xc0", SEL(0xc0));
	expect_notavail(id, "notavail_branches_0xc2", SEL(0xc2));
	expect_notavail(id, "notavail_user_only_cycles", 0x76 | SEL_USR |
			SEL_INT | SEL_EN);
	expect_notavail(id, "notavail_raw_dc_access_0x40", SEL(0x40));
	expect_notavail(id, "notavail_raw_extended_0x1c0", SEL(0xc0) |
			(1ULL << 32));
	cb_destroy(&v0->cb, id);
}

/*
 * HOST_PAGE_FAULTS is the host admin's to allow (allow_host_page_faults,
 * off when the module is loaded: run checks that): refused as an event
 * the host cannot back while off, accepted once on. The program leaves
 * it on.
 */
static void t_host_page_faults_policy(void)
{
	uint32_t id = ctx_new(PFM_FL_SYSTEM_WIDE);
	pfarg_pmd_t p;
	int ret;

	HL_EXPECT("host_page_faults_param_off",
		  hl_allow_host_page_faults(false), 0);
	cb_pmd_init(&p, PVPFM_VPMD_HOST_PAGE_FAULTS, 0, 0);
	ret = cb_write_pmds(&v0->cb, id, &p, 1);
	t_check(ret == -EINVAL && (p.reg_flags & PFM_REG_RETFL_NOTAVAIL),
		"host_page_faults_denied_notavail", "status %s reg_flags %#x",
		hl_status_str(ret), p.reg_flags);
	HL_EXPECT("host_page_faults_param_on",
		  hl_allow_host_page_faults(true), 0);
	cb_pmd_init(&p, PVPFM_VPMD_HOST_PAGE_FAULTS, 0, 0);
	ret = cb_write_pmds(&v0->cb, id, &p, 1);
	t_check(!ret && !(p.reg_flags & PFM_REG_RETFL_NOTAVAIL),
		"host_page_faults_allowed", "status %s reg_flags %#x",
		hl_status_str(ret), p.reg_flags);
	cb_destroy(&v0->cb, id);
}

/*
 * The admin aliases cycles to the host's task clock, marked emulated, and
 * branch misses to it unmarked: only the first is reported emulated.
 */
static void t_alias(void)
{
	struct kvmpfm_event_map_entry map[2];
	uint64_t val = 0, val2 = 0, cpu = 0, busy = 0;
	struct hl_vm_opts o;
	pfarg_setdesc_t sd;
	pfarg_pmc_t pmc, plain;
	pfarg_pmd_t pmd;
	uint32_t id;
	int ret, ret2;

	hl_vm_destroy(&vm);
	memset(map, 0, sizeof(map));
	map[0].guest_kind = KVMPFM_EVK_GENERIC;
	map[0].guest_event = 0x76;
	map[0].flags = KVMPFM_MAP_EMULATED;
	map[0].host_type = PERF_TYPE_SOFTWARE;
	map[0].host_config = PERF_COUNT_SW_TASK_CLOCK;
	map[1] = map[0];
	map[1].guest_event = 0xc3;
	map[1].flags = 0;
	o = hl_vm_opts_simple(2);
	o.map = map;
	o.map_nr = 2;
	if (!vm_up("alias_setup", &o))
		return;
	id = ctx_new(PFM_FL_SYSTEM_WIDE);
	cb_pmc_init(&pmc, 0, 0, SEL(0x76));
	ret = cb_write_pmcs(&v0->cb, id, &pmc, 1);
	t_check(!ret && pmc.reg_flags == PVPFM_CMD_RETFL_EMULATED,
		"alias_cycles_accepted_emulated",
		"PMC0=%#llx with cycles aliased to task-clock: status %s "
		"err_index %u reg_flags %#x", (unsigned long long)SEL(0x76),
		hl_status_str(ret), v0->cb.hdr.err_index, pmc.reg_flags);
	cb_pmc_init(&plain, 1, 0, SEL(0xc3));
	ret2 = cb_write_pmcs(&v0->cb, id, &plain, 1);
	t_check(!ret2 && !plain.reg_flags, "alias_unmarked_not_emulated",
		"PMC1=%#llx aliased without 'emulated': status %s "
		"reg_flags %#x", (unsigned long long)SEL(0xc3),
		hl_status_str(ret2), plain.reg_flags);
	expect_notavail(id, "alias_other_event_still_notavail", SEL(0xc0));
	if (ret)
		goto out;
	cb_pmd_init(&pmd, 0, 0, 0);
	HL_EXPECT("alias_write_pmd0", cb_write_pmds(&v0->cb, id, &pmd, 1), 0);
	HL_EXPECT("alias_load", cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid),
		  0);
	ret = hl_start_busy_stop(v0, id, 50 * MS, &cpu, &busy);
	HL_EXPECT("alias_start_stop", ret, 0);
	cb_read_pmd(&v0->cb, id, 0, 0, &val);
	/* the vCPU thread's task clock: bracketed by its CPU time */
	t_check(hl_bracket(val, busy, cpu), "alias_counts_task_clock",
		"PMD0 %" PRIu64 " ns, thread CPU %" PRIu64 " ns between the "
		"doorbells, %" PRIu64 " ns around them (10%% + 1 ms)", val,
		busy, cpu);
	HL_EXPECT("alias_unload", cb_unload(&v0->cb, id), 0);
	/* set 0 defined again: PMC0 back at its default (disabled), no count */
	memset(&sd, 0, sizeof(sd));
	ret = cb_create_sets(&v0->cb, id, &sd, 1);
	ret = ret ? ret : cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid);
	ret = ret ? ret : hl_start_busy_stop(v0, id, 20 * MS, NULL, NULL);
	cb_read_pmd(&v0->cb, id, 0, 0, &val2);
	t_check(!ret && val2 == val, "alias_redefined_set_pmc_default",
		"status %s: PMD0 %" PRIu64 " then %" PRIu64 " after 20 ms",
		hl_status_str(ret), val, val2);
	cb_unload(&v0->cb, id);
out:
	cb_destroy(&v0->cb, id);
	hl_vm_destroy(&vm);
	vm_up("calls_vm_setup", NULL);
}

/* the intel_arch personality: registers, and its events refused too */
static void t_intel(void)
{
	struct pvpfm_pmu_info info;
	struct hl_vm_opts o;
	pfarg_pmc_t pmc;
	uint32_t id = 0;
	int ret;

	hl_vm_destroy(&vm);
	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 2;
	o.bind.personality = PVPFM_PERS_INTEL_ARCH;
	o.bind.counters = 4;
	if (!vm_up("intel_setup", &o))
		return;
	ret = cb_pmu_info(&v0->cb, &info);
	t_check(!ret && !strcmp(info.model, "intel_arch") &&
		info.num_pmcs == 5 && info.num_pmds == 4 + 3 + 6 &&
		info.max_pmc == 17 && info.impl_pmcs[0] == 0x1000f &&
		info.impl_pmds[0] == 0x7000f && info.impl_pmds[4] == 0x3f,
		"intel_pmu_info", "status %s model %.32s pmcs %u pmds %u max_pmc %u "
		"impl_pmcs %#llx impl_pmds %#llx", hl_status_str(ret), info.model,
		info.num_pmcs, info.num_pmds, info.max_pmc,
		(unsigned long long)info.impl_pmcs[0],
		(unsigned long long)info.impl_pmds[0]);
	cb_create(&v0->cb, PFM_FL_SYSTEM_WIDE, &id);
	expect_notavail(id, "intel_notavail_cycles_0x3c", SEL(0x3c));
	expect_notavail(id, "intel_notavail_llc_misses_0x412e", SEL(0x412e));
	/* FIXED_CTR_CTRL: fixed counter 0 (instructions), OS | USR */
	cb_pmc_init(&pmc, 16, 0, 0x888 | 0x3);
	ret = cb_write_pmcs(&v0->cb, id, &pmc, 1);
	t_check(ret == -EINVAL && (pmc.reg_flags & PFM_REG_RETFL_NOTAVAIL),
		"intel_notavail_fixed_counter", "status %s reg_flags %#x",
		hl_status_str(ret), pmc.reg_flags);
	cb_pmc_init(&pmc, 16, 0, 0x888);	/* all fixed counters off */
	HL_EXPECT("intel_fixed_ctrl_off_ok",
		  cb_write_pmcs(&v0->cb, id, &pmc, 1), 0);
	/* the PMI bits are reserved: counter 0's clear takes its default */
	cb_pmc_init(&pmc, 16, 0, 0x880);
	ret = cb_write_pmcs(&v0->cb, id, &pmc, 1);
	t_check(!ret && !pmc.reg_flags, "intel_fixed_ctrl_pmi_reserved_ok",
		"status %s reg_flags %#x", hl_status_str(ret), pmc.reg_flags);
	/* ... with counter 0 on: 0x888 | 0x3, refused for its event only */
	cb_pmc_init(&pmc, 16, 0, 0x880 | 0x3);
	ret = cb_write_pmcs(&v0->cb, id, &pmc, 1);
	t_check(ret == -EINVAL && (pmc.reg_flags & PFM_REG_RETFL_NOTAVAIL) &&
		!(pmc.reg_flags & PFM_REG_RETFL_EINVAL),
		"intel_fixed_ctrl_pmi_reserved_counter_notavail",
		"status %s reg_flags %#x", hl_status_str(ret), pmc.reg_flags);
	cb_destroy(&v0->cb, id);
	hl_vm_destroy(&vm);
	vm_up("calls_vm_setup", NULL);
}

/* a call on PMDs @p[0..1] refused at the second: EINVAL, flagged there */
static void second_pmd_einval(const char *name, int ret, const pfarg_pmd_t *p)
{
	t_check(ret == -EINVAL && v0->cb.hdr.err_index == 1 &&
		(p[1].reg_flags & PFM_REG_RETFL_EINVAL),
		name, "status %s err_index %u flags %#x",
		hl_status_str(ret), v0->cb.hdr.err_index, p[1].reg_flags);
}

static void t_write_read_pmds(void)
{
	uint32_t id = ctx_new(PFM_FL_SYSTEM_WIDE);
	pfarg_pmd_t p[8];
	int ret, i;
	bool ok;

	for (i = 0; i < 6; i++)
		cb_pmd_init(&p[i], PVPFM_VPMD_VCPU_RUN_NS + i, 0, 1000 * i);
	ret = cb_write_pmds(&v0->cb, id, p, 6);
	t_check(!ret, "write_pmds_virtual_all_available",
		"status %s err_index %u reg_flags %#x", hl_status_str(ret),
		v0->cb.hdr.err_index,
		ret ? p[v0->cb.hdr.err_index % 6].reg_flags : 0);
	cb_pmd_init(&p[6], 0, 0, 0x123456789abcdef0ULL);
	cb_pmd_init(&p[7], 3, 0, ~0ULL);
	HL_EXPECT("write_pmds_generic_ok", cb_write_pmds(&v0->cb, id, &p[6], 2),
		  0);

	for (i = 0; i < 8; i++)
		p[i].reg_value = 0;
	ret = cb_read_pmds(&v0->cb, id, p, 8);
	ok = !ret && p[6].reg_value == 0x123456789abcdef0ULL &&
	     p[7].reg_value == ~0ULL &&
	     p[6].reg_last_reset_val == 0x123456789abcdef0ULL;
	for (i = 0; i < 6; i++)
		ok &= p[i].reg_value == 1000ULL * i;
	t_check(ok, "read_pmds_values_back", "status %s PMD0 %#llx PMD3 %#llx "
		"PMD257 %llu", hl_status_str(ret),
		(unsigned long long)p[6].reg_value,
		(unsigned long long)p[7].reg_value,
		(unsigned long long)p[1].reg_value);

	/* only a PMD in use can be read: PMD1 was never written */
	cb_pmd_init(&p[0], 0, 0, 0);
	cb_pmd_init(&p[1], 1, 0, 0);
	second_pmd_einval("read_pmds_unused_einval",
			  cb_read_pmds(&v0->cb, id, p, 2), p);
	/*
	 * Named in a written PMD's reset_pmds (PMD1) or smpl_pmds (PMD2), a
	 * PMD is in use; the remaining overflow-switch count comes back
	 */
	cb_pmd_init(&p[0], 0, 0, 5);
	p[0].reg_reset_pmds[0] = 1ULL << 1;
	p[0].reg_smpl_pmds[0] = 1ULL << 2;
	p[0].reg_ovfl_switch_cnt = 3;
	ret = cb_write_pmds(&v0->cb, id, p, 1);
	for (i = 0; i < 3; i++)
		cb_pmd_init(&p[i], i, 0, ~0ULL);
	ret = ret ? ret : cb_read_pmds(&v0->cb, id, p, 3);
	t_check(!ret && p[0].reg_value == 5 && p[0].reg_ovfl_switch_cnt == 3 &&
		!p[1].reg_value && !p[2].reg_value &&
		!((p[1].reg_flags | p[2].reg_flags) & PFM_REG_RETFL_MASK),
		"read_pmds_reset_smpl_pmds_in_use",
		"status %s err_index %u PMD0 %llu switch count %llu, PMD1 %#llx "
		"PMD2 %#llx", hl_status_str(ret), v0->cb.hdr.err_index,
		(unsigned long long)p[0].reg_value,
		(unsigned long long)p[0].reg_ovfl_switch_cnt,
		(unsigned long long)p[1].reg_value,
		(unsigned long long)p[2].reg_value);

	cb_pmd_init(&p[0], 0, 0, 0);
	cb_pmd_init(&p[1], PVPFM_VPMD_END, 0, 0);
	second_pmd_einval("write_pmds_pmd262_einval",
			  cb_write_pmds(&v0->cb, id, p, 2), p);
	cb_pmd_init(&p[0], 4, 0, 0);
	HL_EXPECT("write_pmds_pmd4_einval", cb_write_pmds(&v0->cb, id, p, 1),
		  -EINVAL);
	cb_pmd_init(&p[0], 0, 0, 0);
	p[0].reg_flags = 0x10;
	HL_EXPECT("write_pmds_unknown_flag_einval",
		  cb_write_pmds(&v0->cb, id, p, 1), -EINVAL);
	cb_pmd_init(&p[0], 0, 0, 0);
	p[0].reg_smpl_pmds[0] = 1ULL << 5;
	HL_EXPECT("write_pmds_smpl_pmds_unimpl_einval",
		  cb_write_pmds(&v0->cb, id, p, 1), -EINVAL);
	cb_pmd_init(&p[0], 0, 0, 0);
	p[0].reg_reset_pmds[2] = 1;
	HL_EXPECT("write_pmds_reset_pmds_unimpl_einval",
		  cb_write_pmds(&v0->cb, id, p, 1), -EINVAL);
	cb_pmd_init(&p[0], 0, 3, 0);
	HL_EXPECT("write_pmds_no_such_set_einval",
		  cb_write_pmds(&v0->cb, id, p, 1), -EINVAL);

	cb_pmd_init(&p[0], 0, 0, 0);
	cb_pmd_init(&p[1], 9, 0, 0);
	second_pmd_einval("read_pmds_bad_pmd_einval",
			  cb_read_pmds(&v0->cb, id, p, 2), p);
	cb_pmd_init(&p[0], 0, 5, 0);
	HL_EXPECT("read_pmds_no_such_set_einval",
		  cb_read_pmds(&v0->cb, id, p, 1), -EINVAL);
	cb_destroy(&v0->cb, id);
}

static void t_load(void)
{
	uint32_t sys = ctx_new(PFM_FL_SYSTEM_WIDE);
	uint32_t sys2 = ctx_new(PFM_FL_SYSTEM_WIDE);
	uint32_t thr = ctx_new(0), thr2 = ctx_new(0), smpl = 0;
	struct pvpfm_load_arg a;

	HL_EXPECT("load_sys_wrong_vcpu_einval",
		  cb_load(&v0->cb, sys, 1, 0, 0, v0->guest_tgid), -EINVAL);
	HL_EXPECT("load_bad_set_einval",
		  cb_load(&v0->cb, sys, 0, 3, 0, v0->guest_tgid), -EINVAL);
	HL_EXPECT("load_bad_flags_einval",
		  cb_load(&v0->cb, sys, 0, 0, 0x10, v0->guest_tgid), -EINVAL);
	memset(&a, 0, sizeof(a));
	HL_EXPECT("load_short_arg_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_LOAD_CONTEXT, sys, 0, &a, 32),
		  -EINVAL);
	HL_EXPECT("load_sys_ok", cb_load(&v0->cb, sys, 0, 0, 0, v0->guest_tgid),
		  0);
	HL_EXPECT("load_twice_ebusy",
		  cb_load(&v0->cb, sys, 0, 0, 0, v0->guest_tgid), -EBUSY);
	HL_EXPECT("load_second_sys_same_vcpu_ebusy",
		  cb_load(&v0->cb, sys2, 0, 0, 0, v0->guest_tgid), -EBUSY);
	HL_EXPECT("load_sys_other_vcpu_ok",
		  cb_load(&v1->cb, sys2, 1, 0, 0, v1->guest_tgid), 0);
	HL_EXPECT("load_thread_beside_sys_ebusy",
		  cb_load(&v0->cb, thr, 77, 0, 0, v0->guest_tgid), -EBUSY);
	HL_EXPECT("unload_sys", cb_unload(&v0->cb, sys), 0);
	HL_EXPECT("unload_sys2", cb_unload(&v1->cb, sys2), 0);

	HL_EXPECT("load_thread_self_wrong_tid_einval",
		  cb_load(&v0->cb, thr, 77, 0, PVPFM_LOAD_SELF, v0->guest_tgid),
		  -EINVAL);
	HL_EXPECT("load_thread_self_ok",
		  cb_load(&v0->cb, thr, v0->guest_tid, 0, PVPFM_LOAD_SELF,
			  v0->guest_tgid), 0);
	/* one context per thread: perfmon2's EEXIST (not load_twice's EBUSY) */
	HL_EXPECT("load_same_thread_twice_eexist",
		  cb_load(&v1->cb, thr2, v0->guest_tid, 0, 0, v1->guest_tgid),
		  -EEXIST);
	/* the thread in on vCPU 0 was not switched out */
	v0->guest_tid += 100;
	HL_EXPECT("load_self_vcpu_busy_ebusy",
		  cb_load(&v0->cb, thr2, v0->guest_tid, 0, PVPFM_LOAD_SELF,
			  v0->guest_tgid), -EBUSY);
	v0->guest_tid -= 100;
	HL_EXPECT("load_thread_not_running_ok",
		  cb_load(&v1->cb, thr2, 555, 0, 0, v1->guest_tgid), 0);
	HL_EXPECT("load_sys_beside_threads_ebusy",
		  cb_load(&v1->cb, sys2, 1, 0, 0, v1->guest_tgid), -EBUSY);
	cb_unload(&v0->cb, thr);
	cb_unload(&v0->cb, thr2);

	HL_EXPECT("create_smpl_ctx",
		  cb_create_smpl(&v0->cb, PFM_FL_SYSTEM_WIDE, 3 * HL_PAGE,
				 &smpl), 0);
	HL_EXPECT("load_smpl_unregistered_enobufs",
		  cb_load(&v0->cb, smpl, 0, 0, 0, v0->guest_tgid), -ENOBUFS);
	hl_destroy_ctxs(v0, (uint32_t[]){ smpl, sys, sys2, thr, thr2 }, 5);
}

static void t_start_stop_restart(void)
{
	uint32_t id = ctx_new(PFM_FL_SYSTEM_WIDE);
	pfarg_start_t s;

	HL_EXPECT("start_unloaded_einval", cb_start(&v0->cb, id), -EINVAL);
	HL_EXPECT("stop_unloaded_einval", cb_stop(&v0->cb, id), -EINVAL);
	/* perfmon2: a context with no thread (unloaded) is EBUSY */
	HL_EXPECT("restart_unloaded_ebusy", cb_restart(&v0->cb, id), -EBUSY);
	cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid);
	HL_EXPECT("start_ok", cb_start(&v0->cb, id), 0);
	HL_EXPECT("start_again_ok", cb_start(&v0->cb, id), 0);
	HL_EXPECT("start_no_such_set_einval", cb_start_set(&v0->cb, id, 4),
		  -EINVAL);
	HL_EXPECT("start_set0_ok", cb_start_set(&v0->cb, id, 0), 0);
	memset(&s, 0, sizeof(s));
	HL_EXPECT("start_short_arg_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_START, id, 0, &s, 16), -EINVAL);
	HL_EXPECT("restart_not_masked_ebusy", cb_restart(&v0->cb, id), -EBUSY);
	HL_EXPECT("stop_ok", cb_stop(&v0->cb, id), 0);
	HL_EXPECT("stop_again_ok", cb_stop(&v0->cb, id), 0);
	HL_EXPECT("restart_arg_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_RESTART, id, 0, &s, 8), -EINVAL);
	cb_unload(&v0->cb, id);
	cb_destroy(&v0->cb, id);
}

static void t_sets_calls(void)
{
	pfarg_setdesc_t d[4];
	pfarg_setinfo_t in[3];
	uint32_t id = ctx_new(PFM_FL_SYSTEM_WIDE);
	int ret, i;

	memset(d, 0, sizeof(d));
	d[0].set_id = 5;
	d[1].set_id = 1;
	d[1].set_flags = PFM_SETFL_TIME_SWITCH;
	d[1].set_timeout = 2000000;	/* ns: 2 ticks of the 1 ms timer */
	d[2].set_id = 3;
	d[2].set_flags = PFM_SETFL_OVFL_SWITCH;
	ret = cb_create_sets(&v0->cb, id, d, 3);
	HL_EXPECT("create_evtsets_ok", ret, 0);
	t_check(d[1].set_timeout == 2000000, "create_evtsets_timeout_kept",
		"2000000 ns became %llu", (unsigned long long)d[1].set_timeout);

	memset(in, 0, sizeof(in));
	in[0].set_id = 1;
	in[1].set_id = 3;
	in[2].set_id = 0;
	ret = cb_getinfo_sets(&v0->cb, id, in, 3);
	t_check(!ret && in[0].set_flags == PFM_SETFL_TIME_SWITCH &&
		in[0].set_timeout == 2000000 &&
		in[1].set_flags == PFM_SETFL_OVFL_SWITCH && !in[2].set_flags &&
		!in[0].set_runs && in[2].set_avail_pmcs[0] == 0xf &&
		in[2].set_avail_pmds[4] == 0x3f,
		"getinfo_evtsets_ok", "status %s flags %#x/%#x/%#x timeout %llu",
		hl_status_str(ret), in[0].set_flags, in[1].set_flags,
		in[2].set_flags, (unsigned long long)in[0].set_timeout);
	memset(in, 0, sizeof(in));
	in[0].set_id = 0;
	in[1].set_id = 2;
	ret = cb_getinfo_sets(&v0->cb, id, in, 2);
	t_check(ret == -EINVAL && v0->cb.hdr.err_index == 1 &&
		(in[1].set_flags & PFM_REG_RETFL_EINVAL),
		"getinfo_evtsets_no_such_set_einval",
		"status %s err_index %u flags %#x", hl_status_str(ret),
		v0->cb.hdr.err_index, in[1].set_flags);

	memset(d, 0, sizeof(d));
	d[0].set_id = 7;
	d[0].set_flags = 0x4;
	HL_EXPECT("create_evtsets_bad_flags_einval",
		  cb_create_sets(&v0->cb, id, d, 1), -EINVAL);
	d[0].set_flags = PFM_SETFL_TIME_SWITCH;
	d[0].set_timeout = 0;
	HL_EXPECT("create_evtsets_zero_timeout_einval",
		  cb_create_sets(&v0->cb, id, d, 1), -EINVAL);
	d[0].set_timeout = ~0ULL;
	HL_EXPECT("create_evtsets_huge_timeout_einval",
		  cb_create_sets(&v0->cb, id, d, 1), -EINVAL);
	/* perfmon2: a timeout the timer cannot keep is refused, not rounded */
	d[0].set_timeout = 1500001;
	ret = cb_create_sets(&v0->cb, id, d, 1);
	t_check(ret == -EINVAL && (d[0].set_flags & PFM_REG_RETFL_EINVAL) &&
		d[0].set_timeout == 1500001,
		"create_evtsets_timeout_not_multiple_einval",
		"1500001 ns: status %s flags %#x timeout %llu",
		hl_status_str(ret), d[0].set_flags,
		(unsigned long long)d[0].set_timeout);
	/* a set switches on overflows or on time, not both */
	d[0].set_flags = PFM_SETFL_OVFL_SWITCH | PFM_SETFL_TIME_SWITCH;
	d[0].set_timeout = 2000000;
	ret = cb_create_sets(&v0->cb, id, d, 1);
	t_check(ret == -EINVAL && (d[0].set_flags & PFM_REG_RETFL_EINVAL),
		"create_evtsets_both_switch_einval", "status %s flags %#x",
		hl_status_str(ret), d[0].set_flags);
	memset(in, 0, sizeof(in));
	in[0].set_id = 7;
	HL_EXPECT("create_evtsets_refused_not_made",
		  cb_getinfo_sets(&v0->cb, id, in, 1), -EINVAL);

	memset(d, 0, sizeof(d));
	d[0].set_id = 9;
	HL_EXPECT("delete_evtsets_no_such_einval",
		  cb_delete_sets(&v0->cb, id, d, 1), -EINVAL);
	/* perfmon2: set 0 goes like any other while another set is left */
	d[0].set_id = 0;
	HL_EXPECT("delete_evtsets_set0_ok", cb_delete_sets(&v0->cb, id, d, 1),
		  0);
	memset(in, 0, sizeof(in));
	in[0].set_id = 0;
	HL_EXPECT("getinfo_evtsets_set0_deleted_einval",
		  cb_getinfo_sets(&v0->cb, id, in, 1), -EINVAL);
	HL_EXPECT("load_deleted_set0_einval",
		  cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid), -EINVAL);

	HL_EXPECT("load_with_sets",
		  cb_load(&v0->cb, id, 0, 3, 0, v0->guest_tgid), 0);
	memset(in, 0, sizeof(in));
	in[0].set_id = 3;
	ret = cb_getinfo_sets(&v0->cb, id, in, 1);
	t_check(!ret && in[0].set_runs == 1, "getinfo_evtsets_load_set_runs",
		"status %s runs %llu, want 1 (load activates set 3)",
		hl_status_str(ret), (unsigned long long)in[0].set_runs);
	d[0].set_id = 5;
	HL_EXPECT("delete_evtsets_loaded_ebusy",
		  cb_delete_sets(&v0->cb, id, d, 1), -EBUSY);
	d[0].set_id = 8;
	HL_EXPECT("create_evtsets_loaded_ebusy",
		  cb_create_sets(&v0->cb, id, d, 1), -EBUSY);
	cb_unload(&v0->cb, id);
	/* defined again: runs and active time back to 0, its new flags */
	memset(d, 0, sizeof(d));
	d[0].set_id = 3;
	ret = cb_create_sets(&v0->cb, id, d, 1);
	memset(in, 0, sizeof(in));
	in[0].set_id = 3;
	ret = ret ? ret : cb_getinfo_sets(&v0->cb, id, in, 1);
	t_check(!ret && !in[0].set_runs && !in[0].set_act_duration &&
		!in[0].set_flags, "create_evtsets_redefine_resets",
		"status %s runs %llu active %llu ns flags %#x",
		hl_status_str(ret), (unsigned long long)in[0].set_runs,
		(unsigned long long)in[0].set_act_duration, in[0].set_flags);
	d[0].set_id = 5;
	d[1].set_id = 1;
	HL_EXPECT("delete_evtsets_ok", cb_delete_sets(&v0->cb, id, d, 2), 0);
	memset(in, 0, sizeof(in));
	in[0].set_id = 5;
	HL_EXPECT("getinfo_evtsets_deleted_einval",
		  cb_getinfo_sets(&v0->cb, id, in, 1), -EINVAL);
	/* set 3 is the last: a context keeps a set to load */
	memset(d, 0, sizeof(d));
	d[0].set_id = 3;
	ret = cb_delete_sets(&v0->cb, id, d, 1);
	memset(in, 0, sizeof(in));
	in[0].set_id = 3;
	t_check(ret == -EINVAL && (d[0].set_flags & PFM_REG_RETFL_EINVAL) &&
		!cb_getinfo_sets(&v0->cb, id, in, 1),
		"delete_evtsets_last_einval", "status %s flags %#x",
		hl_status_str(ret), d[0].set_flags);
	cb_destroy(&v0->cb, id);

	/* the admin's limit: 4 sets per context, set 0 included */
	if (!vm_again_limited("create_evtsets_limit_setup", HL_LIM_SETS, 4))
		return;
	id = ctx_new(0);
	memset(d, 0, sizeof(d));
	for (i = 0; i < 4; i++)
		d[i].set_id = 10 + i;
	ret = cb_create_sets(&v0->cb, id, d, 4);
	t_check(ret == -ENOSPC && v0->cb.hdr.err_index == 3,
		"create_evtsets_over_limit_enospc", "status %s err_index %u",
		hl_status_str(ret), v0->cb.hdr.err_index);
	memset(in, 0, sizeof(in));
	in[0].set_id = 12;
	HL_EXPECT("create_evtsets_partial_kept",
		  cb_getinfo_sets(&v0->cb, id, in, 1), 0);
	hl_vm_destroy(&vm);
	vm_up("calls_vm_setup", NULL);
}

static void t_unload_msgs(void)
{
	uint32_t id = ctx_new(0);
	pfarg_msg_t m;
	int ret;

	/* perfmon2: unloading an unloaded context does nothing, queues nothing */
	HL_EXPECT("unload_unloaded_ok", cb_unload(&v0->cb, id), 0);
	HL_EXPECT("read_msg_empty_eagain", cb_read_msg(&v0->cb, id, &m),
		  -EAGAIN);
	HL_EXPECT("read_msg_short_arg_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_READ_MSG, id, 0, &m, 32), -EINVAL);
	cb_load(&v0->cb, id, v0->guest_tid, 0, PVPFM_LOAD_SELF, v0->guest_tgid);
	HL_EXPECT("unload_bad_flags_einval", cb_unload_flags(&v0->cb, id, 0x2),
		  -EINVAL);
	HL_EXPECT("unload_task_exit_ok",
		  cb_unload_flags(&v0->cb, id, PVPFM_UNLOAD_TASK_EXIT), 0);
	ret = cb_read_msg(&v0->cb, id, &m);
	t_check(!ret && m.type == PFM_MSG_END, "read_msg_end_after_task_exit",
		"status %s type %u", hl_status_str(ret), m.type);
	HL_EXPECT("read_msg_then_empty_eagain", cb_read_msg(&v0->cb, id, &m),
		  -EAGAIN);
	t_check(hl_eventfd_read(v0) >= 1, "task_exit_notifies_eventfd",
		"no eventfd signal for PFM_MSG_END");
	/* its thread's exit again, the context unloaded: no second END */
	HL_EXPECT("unload_task_exit_unloaded_ok",
		  cb_unload_flags(&v0->cb, id, PVPFM_UNLOAD_TASK_EXIT), 0);
	ret = cb_read_msg(&v0->cb, id, &m);
	t_check(ret == -EAGAIN && !hl_eventfd_read(v0),
		"unload_task_exit_unloaded_no_end", "read_msg %s type %u",
		hl_status_str(ret), ret ? 0 : m.type);
	HL_EXPECT("destroy_ok", cb_destroy(&v0->cb, id), 0);
	HL_EXPECT("destroy_again_ebadf", cb_destroy(&v0->cb, id), -EBADF);
	HL_EXPECT("stop_destroyed_ebadf", cb_stop(&v0->cb, id), -EBADF);
	HL_EXPECT("destroy_arg_einval",
		  cb_cmd(&v0->cb, PVPFM_CMD_DESTROY_CONTEXT, ctx_new(0), 0, &m,
			 8), -EINVAL);
}

/* counts survive unload and continue after the next load */
static void t_values_persist(void)
{
	uint32_t id = ctx_new(PFM_FL_SYSTEM_WIDE);
	uint64_t a = 0, b = 0, c = 0, cpu1 = 0, cpu2 = 0, busy1 = 0, busy2 = 0;
	pfarg_pmd_t p;

	cb_pmd_init(&p, PVPFM_VPMD_VCPU_RUN_NS, 0, 0);
	cb_write_pmds(&v0->cb, id, &p, 1);
	cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid);
	hl_start_busy_stop(v0, id, 20 * MS, &cpu1, &busy1);
	cb_read_pmd(&v0->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &a);
	HL_EXPECT("persist_unload", cb_unload(&v0->cb, id), 0);
	cb_read_pmd(&v0->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &b);
	t_check(a > 0 && a == b, "persist_value_after_unload",
		"before unload %" PRIu64 ", after %" PRIu64, a, b);
	cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid);
	hl_start_busy_stop(v0, id, 20 * MS, &cpu2, &busy2);
	cb_read_pmd(&v0->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &c);
	t_check(c > b && hl_bracket(c, busy1 + busy2, cpu1 + cpu2),
		"persist_continues_after_reload",
		"after reload %" PRIu64 " ns, thread CPU %" PRIu64 "..%" PRIu64
		" ns", c, busy1 + busy2, cpu1 + cpu2);
	cb_unload(&v0->cb, id);
	cb_destroy(&v0->cb, id);
}

int main(void)
{
	hl_init();
	if (!vm_up("calls_vm_setup", NULL))
		return t_done();
	t_pmu_info();
	t_create();
	t_write_pmcs();
	t_notavail();
	t_host_page_faults_policy();
	t_alias();
	t_intel();
	t_write_read_pmds();
	t_load();
	t_start_stop_restart();
	t_sets_calls();
	t_unload_msgs();
	t_values_persist();
	hl_vm_destroy(&vm);
	hl_check_module_idle("calls_module_idle");
	return t_done();
}
