// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of fuzz_cmd (format: fuzz_format.h): short,
 * meaningful command sequences that take the engine into its deep states,
 * for the fuzzer to mutate from.
 *
 *   gen_corpus DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/uapi/pv_perfmon.h"
#include "fuzz_format.h"

static unsigned char buf[4096];
static size_t len;

static void b(unsigned int x)
{
	if (len == sizeof(buf))
		abort();
	buf[len++] = x & 0xff;
}

static void w16(unsigned int x)
{
	b(x);
	b(x >> 8);
}

/* personality, width index (1 = 32 bits), vCPUs - 1 */
static void vm(unsigned int pers, unsigned int width, unsigned int vcpus)
{
	len = 0;
	b(pers);
	b(width);
	b(vcpus - 1);
}

static void cmd(unsigned int vcpu, unsigned int c, unsigned int ctx)
{
	b(FZ_OP_CMD);
	b(vcpu);
	b(c - 1);
	b(ctx);
}

static void create(unsigned int flags)
{
	cmd(0, PVPFM_CMD_CREATE_CONTEXT, 0);
	b(flags);
}

/* a new seed: its VM (as vm()) and a first context of @ctx_flags */
static void new_seed(unsigned int pers, unsigned int width, unsigned int vcpus,
		     unsigned int ctx_flags)
{
	vm(pers, width, vcpus);
	create(ctx_flags);
}

/* one PMC: pmc_nums index, set, value kind */
static void pmc(unsigned int ctx, unsigned int idx, unsigned int set,
		unsigned int kind)
{
	cmd(0, PVPFM_CMD_WRITE_PMCS, ctx);
	b(1);
	b(idx);
	b(set);
	b(kind);
}

/* one PMD: pmd_nums index, set, flags byte, period, smpl/reset bits ... */
static void pmd(unsigned int ctx, unsigned int idx, unsigned int set,
		unsigned int fl, unsigned int period, unsigned int smpl,
		unsigned int reset, unsigned int swcnt, unsigned int rmask)
{
	cmd(0, PVPFM_CMD_WRITE_PMDS, ctx);
	b(1);
	b(idx);
	b(set);
	b(fl);
	w16(period - 1);
	b(smpl);
	b(reset);
	b(swcnt);
	b(rmask);
	b(42);
}

static void simple(unsigned int vcpu, unsigned int c, unsigned int ctx)
{
	cmd(vcpu, c, ctx);
}

static void load(unsigned int vcpu, unsigned int ctx, unsigned int mode)
{
	cmd(vcpu, PVPFM_CMD_LOAD_CONTEXT, ctx);
	b(mode);
}

static void start(unsigned int vcpu, unsigned int ctx)
{
	cmd(vcpu, PVPFM_CMD_START, ctx);
	b(0);
}

/* context 0 loaded for the thread of vCPU 0 and started */
static void go(void)
{
	load(0, 0, 0);
	start(0, 0);
}

/* context 0 unloaded (vCPU 0), no flags */
static void unload(void)
{
	cmd(0, PVPFM_CMD_UNLOAD_CONTEXT, 0);
	b(0);
}

static void events(unsigned int vcpu, unsigned int ev, unsigned int n)
{
	b(FZ_OP_EVENTS);
	b(vcpu);
	b(ev);
	w16(n);
	b(0);
}

/* CREATE_EVTSETS (context 0, vCPU 0) of sets 0 and 1, both @flags */
static void two_sets(unsigned int flags, unsigned int timeout0,
		     unsigned int timeout1)
{
	cmd(0, PVPFM_CMD_CREATE_EVTSETS, 0);
	b(2);
	b(0);
	b(flags);
	w16(timeout0);
	b(1);
	b(flags);
	w16(timeout1);
}

/* GETINFO_EVTSETS (context 0, vCPU 0) of sets 0 and 1 */
static void getinfo_two_sets(void)
{
	cmd(0, PVPFM_CMD_GETINFO_EVTSETS, 0);
	b(2);
	b(0);
	b(1);
}

/* from now, @per_us events of @ev a microsecond */
static void rate(unsigned int ev, unsigned int per_us)
{
	b(FZ_OP_RATE);
	b(ev);
	b(per_us);
}

static void read_msg(unsigned int ctx)
{
	simple(0, PVPFM_CMD_READ_MSG, ctx);
}

static void save(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	int i;

	/* counting: create, program, load, start, events, read, teardown */
	new_seed(1, 1, 2, 0);
	pmc(0, 0, 0, FZ_PMC_EV(0));
	pmd(0, 0, 0, 0, 1000, 0, 0, 0, 0);
	go();
	events(0, FZ_EV_A, 5000);
	cmd(0, PVPFM_CMD_READ_PMDS, 0);
	b(1);
	b(0);
	b(0);
	simple(0, PVPFM_CMD_STOP, 0);
	unload();
	simple(0, PVPFM_CMD_DESTROY_CONTEXT, 0);
	save(dir, "count");

	/* notification, masking, restart, messages, thread exit */
	new_seed(1, 0, 1, 0);
	pmc(0, 0, 0, FZ_PMC_EV(0));
	pmc(0, 1, 0, FZ_PMC_EV(1));
	pmd(0, 0, 0, PFM_REGFL_OVFL_NOTIFY, 100, 0, 0x2, 0, 0);
	go();
	for (i = 0; i < 3; i++) {
		events(0, FZ_EV_B, 10);
		events(0, FZ_EV_A, 100);
		read_msg(0);
		simple(0, PVPFM_CMD_RESTART, 0);
	}
	cmd(0, PVPFM_CMD_UNLOAD_CONTEXT, 0);
	b(1 | (PVPFM_UNLOAD_TASK_EXIT << 1));
	read_msg(0);
	read_msg(0);
	save(dir, "notify");

	/* default-format sampling until the buffer is full, then restart */
	new_seed(1, 1, 1, 8);
	b(0);			/* one page */
	cmd(0, PVPFM_CMD_SMPL_REGISTER, 0);
	b(0);
	b(1);
	b(2);
	pmc(0, 0, 0, FZ_PMC_EV(0));
	pmc(0, 1, 0, FZ_PMC_EV(1));
	pmd(0, 0, 0, PFM_REGFL_OVFL_NOTIFY, 50, 0x2 | 0x20, 0, 0, 0);
	pmd(0, 7, 0, 0, 1, 0, 0, 0, 0);	/* PMD 256, virtual */
	go();
	events(0, FZ_EV_B, 7);
	events(0, FZ_EV_A, 50 * 100);
	read_msg(0);
	simple(0, PVPFM_CMD_RESTART, 0);
	events(0, FZ_EV_A, 500);
	save(dir, "sample");

	/* two time-switched sets, rates, getinfo */
	new_seed(1, 1, 2, 0);
	two_sets(PFM_SETFL_TIME_SWITCH, 100, 300);
	pmc(0, 0, 0, FZ_PMC_EV(0));
	pmc(0, 0, 1, FZ_PMC_EV(1));
	go();
	rate(FZ_EV_A, 200);
	rate(FZ_EV_B, 30);
	b(FZ_OP_RUN);
	w16(40000);
	getinfo_two_sets();
	simple(0, PVPFM_CMD_STOP, 0);
	unload();
	save(dir, "timesets");

	/* cascading: overflow switching with random periods */
	new_seed(0, 0, 1, 0);
	two_sets(PFM_SETFL_OVFL_SWITCH, 0, 0);
	pmc(0, 0, 0, FZ_PMC_EV(0));
	pmc(0, 1, 1, FZ_PMC_EV(1));
	pmd(0, 0, 0, PFM_REGFL_RANDOM, 200, 0, 0, 1, 0xff);
	pmd(0, 1, 1, 0, 300, 0, 0, 2, 0);
	go();
	events(0, FZ_EV_A, 1000);
	events(0, FZ_EV_B, 1000);
	getinfo_two_sets();
	save(dir, "cascade");

	/* system-wide on vCPU 1, then a thread context switching around */
	new_seed(2, 3, 3, 2);
	create(0);
	pmd(0, 8, 0, PFM_REGFL_OVFL_NOTIFY, 10, 0, 0, 0, 0);	/* VM_EXITS */
	load(1, 0, 1);
	start(1, 0);
	events(1, FZ_EV_VM_EXITS, 25);
	b(FZ_OP_OVFL);
	b(1);
	b(0xff);
	read_msg(0);
	cmd(1, PVPFM_CMD_UNLOAD_CONTEXT, 0);
	b(0);
	pmc(1, 4, 0, 0x0b);		/* FIXED_CTRL: fixed counter 0 */
	load(0, 1, 2);
	start(0, 1);
	cmd(2, PVPFM_CMD_SWITCH, 1);
	b(2);
	b(1);
	events(2, FZ_EV_FIXED0, 1000);
	cmd(0, PVPFM_CMD_SWITCH, 1);
	b(2);
	b(1);
	cmd(0, PVPFM_CMD_SWITCH, 1);
	b(1);
	simple(0, PVPFM_CMD_PMU_INFO, 0);
	cmd(0, PVPFM_CMD_REG_DESC, 0);
	b(3);
	b(7);
	save(dir, "syswide_switch");

	/* raw blocks: bad version, unknown command, size mismatches */
	new_seed(1, 1, 1, 0);
	b(FZ_OP_RAW);
	b(0);
	b(1 | 4);
	b(9);				/* version 9 */
	b(0);
	w16(PVPFM_CMD_STOP);
	for (i = 4; i < 32; i++)
		b(0);
	w16(0);
	b(FZ_OP_RAW);
	b(0);
	b(1 | 2 | 8);
	b(0);
	b(0);
	w16(PVPFM_CMD_WRITE_PMCS);
	b(0);				/* ctx pick */
	b(0);
	b(0);
	b(0);
	b(3);				/* count 3 */
	for (i = 9; i < 32; i++)
		b(0);
	w16(48);
	for (i = 0; i < 48; i++)
		b(i == 8 ? 0x76 : 0);
	/* a load whose argument is cut short by the block's length */
	b(FZ_OP_RAW);
	b(0);
	b(1 | 2 | 0x40);
	b(0);
	b(0);
	w16(PVPFM_CMD_LOAD_CONTEXT);
	for (i = 4; i < 32; i++)
		b(0);
	w16(16);
	for (i = 0; i < 16; i++)
		b(0);
	save(dir, "raw");
	return 0;
}
