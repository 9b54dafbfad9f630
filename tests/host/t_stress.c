// SPDX-License-Identifier: GPL-2.0
/*
 * t_stress: command blocks (1,000,000 in make test) from the vCPU threads
 * of a VM (one thread per vCPU, 4 vCPUs), about a third of them random
 * bytes (random
 * command, version, context ids, counts, argument sizes and contents),
 * the rest well-formed calls with random parameters in random order, so
 * that deep states are reached: contexts loaded, counting, sampling into
 * registered buffers, masked on notification, restarted, saturated
 * (masked with nothing notified), switched between vCPUs, sets switching
 * on timers and overflows. The threads also burn CPU and run the guest
 * now and then, so the virtual PMDs count and overflow. Without a format
 * an overflow masks monitoring unless it switches sets (perfmon2 v2.8x):
 * the whole sequences that switch on overflows do so in both sets, mostly
 * on each overflow, so that their overflows go on.
 * The blocks go in rounds of T_STRESS_ROUND (50,000), each on a new VM
 * bound with random limits: each max_* at 0 (the default), a
 * small value, a random one up to the module's ceiling or the ceiling
 * itself; before it, one BIND_VM with a limit above its ceiling, which
 * must fail with E2BIG.
 *
 * Pass: every DOORBELL ioctl answered (no hang; errors only where the
 * block could not be read), each VM's stats agree with what was sent, it
 * was given the limits it asked for, the deep states were reached
 * (overflows, samples, messages, set switches), a second "keeper" VM
 * counting beside them all is untouched, the module's allocation
 * counters are back to the keeper's after each VM and to zero at the
 * end, and no line of concern (the rig's bad-patterns: WARN, BUG such as
 * soft lockups, oops, call traces; RCU stalls, hung tasks) came into
 * L1's kernel log meanwhile. Prints the blocks sent, blocks/s, how many
 * returned each status, and the count of L1 log lines of concern.
 *
 * T_STRESS_COMMANDS, T_STRESS_ROUND and T_STRESS_SEED in the environment
 * override the command count (100000; make test sets it), the blocks per
 * VM and the random seed (1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>

#include "hostlib.h"

#define NR_VCPUS	4
#define REG_SLOTS	48
#define MAX_ERRNO	HL_MAX_ERRNO

#define SEL_USR		(1ULL << 16)
#define SEL_OS		(1ULL << 17)
#define SEL_INT		(1ULL << 20)
#define SEL_EN		(1ULL << 22)

static struct hl_vm vm;
static uint32_t registry[REG_SLOTS];	/* context ids, shared */
static uint64_t per_thread;		/* blocks per vCPU thread, this round */
static uint64_t seed = 1;
static int no_smpl;		/* T_STRESS_NO_SMPL: no sampling buffers */
static int no_tp;		/* T_STRESS_NO_TP: no tracepoint-backed PMDs */
/* virtual PMDs a context may use: all, or without 257, 258, 261 */
#define VIRT_ALL	0x3fULL
#define VIRT_NO_TP	0x19ULL

#define OWNED		8

struct tstats {
	struct hl_hist h;
	uint64_t ops, random_blocks, runs, burns, scenarios;
	int ret;
	/* the contexts this thread created and has not destroyed */
	uint32_t owned[OWNED];
	int nowned;
};

/* xorshift64* */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t pick(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

static void reg_add(uint64_t *s, uint32_t id)
{
	__atomic_store_n(&registry[pick(s, REG_SLOTS)], id, __ATOMIC_RELAXED);
}

static void reg_del(uint32_t id)
{
	unsigned int i;

	for (i = 0; i < REG_SLOTS; i++)
		if (__atomic_load_n(&registry[i], __ATOMIC_RELAXED) == id)
			__atomic_store_n(&registry[i], 0, __ATOMIC_RELAXED);
}

static struct tstats ts[NR_VCPUS];

static uint32_t any_ctx_of(struct tstats *t, uint64_t *s)
{
	uint64_t r = pick(s, 100);

	if (r < 60 && t && t->nowned)
		return t->owned[pick(s, t->nowned)];
	if (r < 85)
		return __atomic_load_n(&registry[pick(s, REG_SLOTS)],
				       __ATOMIC_RELAXED);
	if (r < 90)
		return 0;
	if (r < 95)
		return pick(s, 200);
	return (uint32_t)rnd(s);
}

static __thread struct tstats *my_t;

static uint32_t any_ctx(uint64_t *s)
{
	return any_ctx_of(my_t, s);
}


/* a new context of this thread's; the oldest goes when there are too many */
static void own_add(struct hl_vcpu *v, uint64_t *s, uint32_t id)
{
	struct tstats *t = my_t;

	reg_add(s, id);
	if (t->nowned == OWNED) {
		cb_destroy(&v->cb, t->owned[0]);
		reg_del(t->owned[0]);
		memmove(t->owned, t->owned + 1, (OWNED - 1) * sizeof(t->owned[0]));
		t->nowned--;
	}
	t->owned[t->nowned++] = id;
}

static void own_del(uint32_t id)
{
	struct tstats *t = my_t;
	int i;

	reg_del(id);
	for (i = 0; i < t->nowned; i++)
		if (t->owned[i] == id) {
			memmove(t->owned + i, t->owned + i + 1,
				(t->nowned - i - 1) * sizeof(t->owned[0]));
			t->nowned--;
			break;
		}
}


/* ---- plausible values ------------------------------------------------------ */

static uint16_t any_pmd(uint64_t *s)
{
	uint64_t r = pick(s, 100);

	if (r < 70) {
		static const uint16_t no_tp_pmds[] = { 256, 259, 260 };

		return no_tp ? no_tp_pmds[pick(s, 3)] :
			       PFM_FIRST_SW_PMD + pick(s, 6);
	}
	if (r < 85)
		return pick(s, 4);
	if (r < 90)
		return PFM_FIRST_SW_PMD + 6;
	if (no_tp)
		return 256;
	return (uint16_t)rnd(s);
}

static uint64_t any_period(uint64_t *s)
{
	uint64_t r = pick(s, 100);

	if (r < 40)
		return 0;
	if (r < 85)
		return -(20 * US + pick(s, 5 * MS));	/* overflows soon */
	if (r < 90)
		return -(1 + pick(s, 100));		/* a few events */
	return rnd(s);
}

static void any_bits(uint64_t *s, __u64 *bv)
{
	uint64_t r = pick(s, 100);

	memset(bv, 0, PFM_PMD_BV * 8);
	if (r < 50)
		return;
	if (r < 90 || no_tp) {
		bv[4] = rnd(s) & (no_tp ? VIRT_NO_TP : VIRT_ALL);
		bv[0] = rnd(s) & 0xf;
	} else {
		bv[pick(s, PFM_PMD_BV)] = rnd(s);
	}
}

static void fill_pmd(uint64_t *s, pfarg_pmd_t *p)
{
	memset(p, 0, sizeof(*p));
	p->reg_num = any_pmd(s);
	p->reg_set = pick(s, 10) < 8 ? pick(s, 3) : (uint16_t)rnd(s);
	p->reg_value = any_period(s);
	p->reg_short_reset = any_period(s);
	p->reg_long_reset = any_period(s);
	if (pick(s, 4) == 0)
		p->reg_flags = PFM_REGFL_OVFL_NOTIFY;
	if (pick(s, 8) == 0)
		p->reg_flags |= PFM_REGFL_RANDOM;
	if (pick(s, 30) == 0)
		p->reg_flags = (uint32_t)rnd(s);
	p->reg_random_mask = pick(s, 2) ? 0xffff : rnd(s);
	p->reg_random_seed = (uint32_t)rnd(s);
	p->reg_ovfl_switch_cnt = pick(s, 4);
	any_bits(s, p->reg_smpl_pmds);
	any_bits(s, p->reg_reset_pmds);
}

static void fill_pmc(uint64_t *s, pfarg_pmc_t *p)
{
	memset(p, 0, sizeof(*p));
	p->reg_num = pick(s, 10) < 9 ? pick(s, 4) : (uint16_t)rnd(s);
	p->reg_set = pick(s, 3);
	p->reg_value = SEL_INT | (rnd(s) & 0xffff) |
		       (pick(s, 2) ? SEL_EN : 0) | SEL_USR | SEL_OS;
	if (pick(s, 20) == 0)
		p->reg_value = rnd(s);
}

static void fill_setdesc(uint64_t *s, pfarg_setdesc_t *d)
{
	memset(d, 0, sizeof(*d));
	d->set_id = pick(s, 10) < 9 ? pick(s, 5) : (uint16_t)rnd(s);
	/*
	 * flags 3 (both switches) are refused, and so is a time switch
	 * whose timeout is not a multiple of the set timer's 1 ms (1 in 4)
	 */
	d->set_flags = pick(s, 4);
	d->set_timeout = pick(s, 4) ? (1 + pick(s, 5)) * MS :
				      200 * US + pick(s, 5 * MS);
	if (pick(s, 20) == 0) {
		d->set_flags = (uint32_t)rnd(s);
		d->set_timeout = rnd(s) >> pick(s, 64);
	}
}

static uint64_t any_gpa(uint64_t *s)
{
	uint64_t r = pick(s, 100);

	if (r < 90)
		return HL_HEAP_GPA + pick(s, (HL_MEM_SIZE - HL_HEAP_GPA) / HL_PAGE) *
				     HL_PAGE;
	if (r < 95)
		return HL_MEM_SIZE + pick(s, 1000) * HL_PAGE;
	return rnd(s);
}

/* ---- the two kinds of command ---------------------------------------------- */

static const uint32_t entry_size[PVPFM_CMD_MAX + 1] = {
	[PVPFM_CMD_CREATE_CONTEXT] = sizeof(struct pvpfm_create_arg),
	[PVPFM_CMD_WRITE_PMCS] = sizeof(pfarg_pmc_t),
	[PVPFM_CMD_WRITE_PMDS] = sizeof(pfarg_pmd_t),
	[PVPFM_CMD_READ_PMDS] = sizeof(pfarg_pmd_t),
	[PVPFM_CMD_LOAD_CONTEXT] = sizeof(struct pvpfm_load_arg),
	[PVPFM_CMD_START] = sizeof(pfarg_start_t),
	[PVPFM_CMD_CREATE_EVTSETS] = sizeof(pfarg_setdesc_t),
	[PVPFM_CMD_GETINFO_EVTSETS] = sizeof(pfarg_setinfo_t),
	[PVPFM_CMD_DELETE_EVTSETS] = sizeof(pfarg_setdesc_t),
	[PVPFM_CMD_UNLOAD_CONTEXT] = sizeof(struct pvpfm_unload_arg),
	[PVPFM_CMD_SWITCH] = sizeof(struct pvpfm_switch_arg),
	[PVPFM_CMD_SMPL_REGISTER] = 8,
	[PVPFM_CMD_READ_MSG] = sizeof(pfarg_msg_t),
	[PVPFM_CMD_PMU_INFO] = sizeof(struct pvpfm_pmu_info),
	[PVPFM_CMD_REG_DESC] = sizeof(struct pvpfm_reg_desc),
};

static int random_block(struct hl_vcpu *v, uint64_t *s, uint8_t *blk)
{
	struct pvpfm_cmd_hdr *h = (struct pvpfm_cmd_hdr *)blk;
	uint8_t *arg = blk + sizeof(*h);
	uint32_t esz, n, i, max = PVPFM_CMD_ARGS_MAX;
	uint64_t r = pick(s, 100);
	int ret;

	memset(h, 0, sizeof(*h));
	h->version = pick(s, 25) ? PVPFM_ABI_VERSION : (uint16_t)rnd(s);
	h->cmd = pick(s, 25) ? pick(s, PVPFM_CMD_MAX + 1) : (uint16_t)rnd(s);
	h->ctx_id = any_ctx(s);
	h->count = pick(s, 10) ? pick(s, 70) : (uint32_t)rnd(s);
	h->tid = pick(s, 2) ? v->guest_tid : (uint32_t)rnd(s);
	h->tgid = v->guest_tgid;
	esz = h->cmd <= PVPFM_CMD_MAX ? entry_size[h->cmd] : 0;
	if (r < 60)
		h->arg_size = esz * (h->count < 70 ? h->count : 1);
	else if (r < 75)
		h->arg_size = esz;
	else if (r < 85)
		h->arg_size = 0;
	else if (r < 95)
		h->arg_size = pick(s, max + 1);
	else
		h->arg_size = (uint32_t)rnd(s);
	n = h->arg_size < max ? h->arg_size : max;
	/* random bytes, then often plausible entries over them */
	for (i = 0; i + 8 <= n; i += 8)
		*(uint64_t *)(arg + i) = rnd(s) >> pick(s, 64);
	if (pick(s, 10) < 7 && esz) {
		for (i = 0; (i + 1) * esz <= n; i++) {
			void *e = arg + i * esz;

			switch (h->cmd) {
			case PVPFM_CMD_WRITE_PMDS:
			case PVPFM_CMD_READ_PMDS:
				fill_pmd(s, e);
				break;
			case PVPFM_CMD_WRITE_PMCS:
				fill_pmc(s, e);
				break;
			case PVPFM_CMD_CREATE_EVTSETS:
			case PVPFM_CMD_DELETE_EVTSETS:
				fill_setdesc(s, e);
				break;
			case PVPFM_CMD_SMPL_REGISTER:
				if (i)
					*(uint64_t *)e = any_gpa(s);
				else
					*(uint32_t *)e = pick(s, 4);
				break;
			}
		}
		if (h->cmd == PVPFM_CMD_SMPL_REGISTER && n >= 8)
			((struct pvpfm_smpl_register_arg *)arg)->nr_pages =
				pick(s, 8) ? (n - 8) / 8 : (uint32_t)rnd(s);
	}
	ret = hl_doorbell_raw(v, blk, sizeof(*h) + n);
	if (ret)
		return HL_IOCTL_ERR(-ret);
	h = v->cmd;
	if (!h->status && h->cmd == PVPFM_CMD_CREATE_CONTEXT && h->ctx_id)
		own_add(v, s, h->ctx_id);
	else if (!h->status && h->cmd == PVPFM_CMD_DESTROY_CONTEXT)
		own_del(h->ctx_id);
	return h->status;
}

/* a guest page for a sampling buffer: one of the heap's first 1024 */
static uint64_t heap_gpa(uint64_t *s)
{
	return HL_HEAP_GPA + pick(s, 1024) * HL_PAGE;
}

/*
 * A context with @flags, owned by this thread; with @pages (at most 8)
 * a sampling buffer registered at pages @gpa picks. Returns the first
 * failing status, or 0; its id in *@id (0 if none was made).
 */
static int ctx_create(struct hl_vcpu *v, uint64_t *s, uint32_t flags,
		      uint32_t pages, uint64_t (*gpa)(uint64_t *s),
		      uint32_t *id)
{
	uint64_t g[8];
	uint32_t i;
	int ret;

	ret = pages ? cb_create_smpl(&v->cb, flags, pages * HL_PAGE, id) :
		      cb_create(&v->cb, flags, id);
	if (ret)
		return ret;
	own_add(v, s, *id);
	for (i = 0; i < pages; i++)
		g[i] = gpa(s);
	return pages ? cb_smpl_register(&v->cb, *id, 0, pages, g) : 0;
}

static int op_create(struct hl_vcpu *v, uint64_t *s)
{
	uint32_t flags = 0, id = 0, pages = 0;

	switch (pick(s, 5)) {
	case 0:
		flags = PFM_FL_SYSTEM_WIDE;
		break;
	case 1:
		flags = PFM_FL_NOTIFY_BLOCK;
		break;
	case 2:
		flags = PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG;
		break;
	default:
		break;
	}
	if (pick(s, 3) == 0 && !no_smpl)
		pages = 1 + pick(s, 4);
	return ctx_create(v, s, flags, pages, any_gpa, &id);
}

static int op_load(struct hl_vcpu *v, uint64_t *s, uint32_t id)
{
	switch (pick(s, 4)) {
	case 0:
		return cb_load(&v->cb, id, v->index, pick(s, 3), 0,
			       v->guest_tgid);
	case 1:
		return cb_load(&v->cb, id, v->guest_tid, pick(s, 2),
			       PVPFM_LOAD_SELF, v->guest_tgid);
	case 2:
		return cb_load(&v->cb, id, 2000 + pick(s, 8), 0, 0,
			       v->guest_tgid);
	default:
		return cb_load(&v->cb, id, (uint32_t)rnd(s), pick(s, 3),
			       pick(s, 2), v->guest_tgid);
	}
}

/* set by the monitor after a stall: guest runs stop, CPU burns go on */
static volatile int no_guest_runs;

static int op_run(struct hl_vcpu *v, uint64_t *s, struct tstats *t)
{
	int ret;

	if (pick(s, 2) || no_guest_runs) {
		t->burns++;
		hl_busy_ns(50 * US + pick(s, 300 * US));
		return 0;
	}
	t->runs++;
	/* kickable: the monitor can get a starved vCPU out of KVM_RUN */
	ret = hl_vcpu_setup(v, HL_CODE_IO, 1 + pick(s, 60), 0);
	ret = ret ? ret : hl_run_until_kicked(v);
	return ret < 0 ? ret : 0;
}

/*
 * A whole valid sequence, left running: create (system-wide or per-thread,
 * maybe sampling), RUN_NS and VM_EXITS with short periods (maybe notify,
 * randomized), maybe two sets switching on time (1 or 2 ms) or overflow
 * (both sets, mostly on each overflow of either PMD: without a format an
 * overflow that does not switch masks), load on this vCPU, start, then
 * the vCPU runs.
 */
static int scenario(struct hl_vcpu *v, uint64_t *s, struct tstats *t)
{
	bool sys = pick(s, 2), smpl = pick(s, 10) < 3 && !no_smpl;
	uint32_t flags = sys ? PFM_FL_SYSTEM_WIDE : 0, id = 0, pages = 0, i;
	pfarg_setdesc_t sd[2];
	pfarg_pmd_t p[4];
	uint64_t per;
	int ret, n = 2;

	t->scenarios++;
	if (smpl)
		pages = 1 + pick(s, 4);
	ret = ctx_create(v, s, flags, pages, heap_gpa, &id);
	if (ret)
		return ret;
	memset(sd, 0, sizeof(sd));
	if (pick(s, 10) < 5) {
		sd[0].set_id = 0;
		sd[1].set_id = 1;
		if (pick(s, 2)) {
			sd[0].set_flags = sd[1].set_flags = PFM_SETFL_TIME_SWITCH;
			sd[0].set_timeout = (1 + pick(s, 2)) * MS;
			sd[1].set_timeout = (1 + pick(s, 2)) * MS;
		} else {
			sd[0].set_flags = sd[1].set_flags = PFM_SETFL_OVFL_SWITCH;
		}
		ret = cb_create_sets(&v->cb, id, sd, 2);
		if (ret)
			return ret;
		n = 4;
	}
	for (i = 0; i < (uint32_t)n; i++) {
		per = 50 * US + pick(s, 2 * MS);
		cb_pmd_init(&p[i], i % 2 ? (no_tp ? PVPFM_VPMD_HOST_PREEMPT :
						 PVPFM_VPMD_VM_EXITS) :
				   PVPFM_VPMD_VCPU_RUN_NS, i / 2, 0);
		if (i % 2 == 0) {
			p[i].reg_value = -per;
			p[i].reg_short_reset = -per;
			p[i].reg_long_reset = -per;
			p[i].reg_ovfl_switch_cnt = pick(s, 4) ? 1 : 2;
			if (pick(s, 10) < 3)
				p[i].reg_flags |= PFM_REGFL_OVFL_NOTIFY;
			if (pick(s, 10) < 2) {
				p[i].reg_flags |= PFM_REGFL_RANDOM;
				p[i].reg_random_mask = 0xfff;
			}
			if (smpl)	/* 257, 261 (or 259) */
				p[i].reg_smpl_pmds[4] = no_tp ? 0x8 : 0x22;
		} else if (pick(s, 10) < 3) {
			p[i].reg_value = -(1 + pick(s, 50));
			p[i].reg_short_reset = p[i].reg_value;
			p[i].reg_ovfl_switch_cnt = 1;
		}
	}
	ret = cb_write_pmds(&v->cb, id, p, n);
	if (ret)
		return ret;
	ret = sys ? cb_load(&v->cb, id, v->index, 0, 0, v->guest_tgid) :
		    cb_load(&v->cb, id, v->guest_tid, 0, PVPFM_LOAD_SELF,
			    v->guest_tgid);
	if (ret)
		return ret;
	ret = cb_start(&v->cb, id);
	if (ret)
		return ret;
	return op_run(v, s, t);
}

static int structured(struct hl_vcpu *v, uint64_t *s, struct tstats *t)
{
	uint32_t id = any_ctx(s), n = 1 + pick(s, 4), i;
	pfarg_pmd_t pmd[4];
	pfarg_pmc_t pmc[4];
	pfarg_setdesc_t sd[4];
	pfarg_setinfo_t si[4];
	pfarg_msg_t m;
	uint64_t g[4];
	int ret;

	switch (pick(s, 25)) {
	case 0:
		return op_create(v, s);
	case 1:
	case 22:
	case 23:
		return scenario(v, s, t);
	case 2:
	case 3:
	case 4:
		for (i = 0; i < n; i++)
			fill_pmd(s, &pmd[i]);
		return cb_write_pmds(&v->cb, id, pmd, n);
	case 5:
		for (i = 0; i < n; i++)
			fill_pmc(s, &pmc[i]);
		return cb_write_pmcs(&v->cb, id, pmc, n);
	case 6:
		for (i = 0; i < n; i++)
			fill_setdesc(s, &sd[i]);
		return cb_create_sets(&v->cb, id, sd, n);
	case 7:
	case 8:
		return op_load(v, s, id);
	case 9:
	case 10:
		return pick(s, 2) ? cb_start(&v->cb, id) :
		       cb_start_set(&v->cb, id, pick(s, 3));
	case 11:
		return cb_stop(&v->cb, id);
	case 12:
		return cb_restart(&v->cb, id);
	case 13:
		return pick(s, 3) ? cb_unload(&v->cb, id) :
		       cb_unload_flags(&v->cb, id, PVPFM_UNLOAD_TASK_EXIT);
	case 14:
		ret = cb_destroy(&v->cb, id);
		if (!ret)
			own_del(id);
		return ret;
	case 15:
		return cb_switch(&v->cb, pick(s, 2) ? any_ctx(s) : 0,
				 pick(s, 3) ? any_ctx(s) : 0, 2000 + pick(s, 8),
				 v->guest_tgid);
	case 16:
		memset(si, 0, sizeof(si));
		for (i = 0; i < n; i++)
			si[i].set_id = pick(s, 5);
		return cb_getinfo_sets(&v->cb, id, si, n);
	case 17:
		for (i = 0; i < n; i++)
			cb_pmd_init(&pmd[i], any_pmd(s), pick(s, 3), 0);
		return cb_read_pmds(&v->cb, id, pmd, n);
	case 18:
		hl_eventfd_read(v);
		do
			ret = cb_read_msg(&v->cb, id, &m);
		while (!ret);
		return ret;
	case 19:
		for (i = 0; i < n; i++)
			fill_setdesc(s, &sd[i]);
		return cb_delete_sets(&v->cb, id, sd, n);
	case 20:
		for (i = 0; i < n; i++)
			g[i] = any_gpa(s);
		return cb_smpl_register(&v->cb, id, pick(s, 4), n, g);
	default:
		return op_run(v, s, t);
	}
}

/* T_STRESS_ONLY_RUNS: a control, no perfmon state at all */
static int only_runs;

static int control_op(struct hl_vcpu *v, uint64_t *s, struct tstats *t)
{
	struct pvpfm_pmu_info info;

	if (only_runs == 1 && pick(s, 2))
		return cb_pmu_info(&v->cb, &info);
	return op_run(v, s, t);
}

static int stress_fn(struct hl_vcpu *v, void *p)
{
	struct tstats *t = &ts[v->index];
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + v->index + 1;
	uint8_t *blk = malloc(PVPFM_CMD_BLOCK_SIZE);

	(void)p;
	my_t = t;
	if (!blk)
		return -ENOMEM;
	hl_hist_attach(&t->h);
	while (only_runs >= 2 ? t->ops < per_thread :
				t->h.doorbells < per_thread) {
		t->ops++;
		if (only_runs) {
			control_op(v, &s, t);
		} else if (pick(&s, 100) < 33) {
			t->random_blocks++;
			random_block(v, &s, blk);
		} else {
			structured(v, &s, t);
		}
	}
	hl_hist_attach(NULL);
	free(blk);
	return 0;
}

/* ---- progress, and evidence if it stops ------------------------------------- */

static void show_file(const char *what, pid_t tid)
{
	char path[80], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, what);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("stress:     %s", line);
	fclose(f);
}

/* what a stuck vCPU's thread and the host are doing, 1 s apart */
static void stall_detail(struct hl_vcpu *v)
{
	const struct timespec sec = { 1, 0 };
	struct kvmpfm_vm_stats a, b;
	uint64_t io, intr, hlt, other;
	int bound;

	/* a control's VM has no binding, so no stats */
	bound = !hl_vm_stats(&vm, &a);
	io = v->exits_io;
	intr = v->exits_intr;
	hlt = v->exits_hlt;
	other = v->exits_other;
	nanosleep(&sec, NULL);
	/* a second stat line: did its CPU and guest time grow meanwhile? */
	show_file("stat", v->tid);
	printf("stress:     in 1 s: KVM_RUN exits io +%" PRIu64 " intr +%" PRIu64
	       " hlt +%" PRIu64 " other +%" PRIu64 " (totals %" PRIu64 "/%"
	       PRIu64 ")", v->exits_io - io, v->exits_intr - intr,
	       v->exits_hlt - hlt, v->exits_other - other, v->exits_io,
	       v->exits_intr);
	if (bound && !hl_vm_stats(&vm, &b))
		printf("; VM: overflows +%" PRIu64 " samples +%" PRIu64
		       " set switches +%" PRIu64 " notifications +%" PRIu64
		       "; contexts %u loaded %u counters %u",
		       (uint64_t)(b.overflows - a.overflows),
		       (uint64_t)(b.samples - a.samples),
		       (uint64_t)(b.set_switches - a.set_switches),
		       (uint64_t)(b.notifications - a.notifications),
		       b.contexts, b.loaded, b.active_counters);
	printf("\n");
}

static int stalls, stalls_in_doorbell;
static char stall_what[200];

static void sysrq(char c)
{
	FILE *f = fopen("/proc/sysrq-trigger", "w");

	if (f) {
		fputc(c, f);
		fclose(f);
	}
}

/*
 * A thread's progress: its doorbells; in a control, which rings none,
 * its guest runs and PMU_INFO calls.
 */
static uint64_t progress_of(int i)
{
	return only_runs ? __atomic_load_n(&ts[i].ops, __ATOMIC_RELAXED) :
			   ts[i].h.doorbells;
}

/*
 * Print progress every 10 s until the threads are done. A thread that
 * made no progress for 30 s gets its state printed: the command it is
 * in and its kernel stack (a hang in the host is then visible in the
 * log). @base blocks were sent by the earlier rounds, which started at
 * @start.
 */
static void monitor(uint64_t t0, uint64_t start, uint64_t base)
{
	uint64_t last[NR_VCPUS] = { 0 }, since[NR_VCPUS], now, total;
	/* a round's end is seen within 0.1 s; progress every 10 s */
	const struct timespec poll = { 0, 100 * MS };
	const char *unit = only_runs ? "progress" : "doorbell";
	int i, done, shown[NR_VCPUS] = { 0 };
	static int tick;

	for (i = 0; i < NR_VCPUS; i++)
		since[i] = t0;
	for (;;) {
		nanosleep(&poll, NULL);
		now = hl_mono_ns();
		done = 0;
		total = 0;
		for (i = 0; i < NR_VCPUS; i++) {
			struct hl_vcpu *v = &vm.vcpus[i];
			uint64_t d = progress_of(i);

			pthread_mutex_lock(&v->mu);
			done += v->state != 1;
			pthread_mutex_unlock(&v->mu);
			total += d;
			if (d != last[i]) {
				last[i] = d;
				since[i] = now;
				shown[i] = 0;
			} else if (now - since[i] > 30000 * MS && !shown[i] &&
				   v->state == 1) {
				shown[i] = 1;
				printf("stress: vCPU %d thread %d: no %s for "
				       "%.0f s, %s command %u, after %" PRIu64 "\n",
				       i, (int)v->tid, unit, (now - since[i]) / 1e9,
				       ts[i].h.in_doorbell ? "in DOORBELL of" :
				       "last", ts[i].h.cur_cmd, d);
				show_file("wchan", v->tid);
				printf("\n");
				/* its state (R: runnable) and the CPU it last ran on */
				show_file("stat", v->tid);
				show_file("stack", v->tid);
				stall_detail(v);
				/* every CPU's backtrace into L1's log */
				sysrq('l');
				if (!stalls++)
					snprintf(stall_what, sizeof(stall_what),
						 "vCPU %d: no %s for 30 s "
						 "after %" PRIu64 ", %s command %u",
						 i, unit, d, ts[i].h.in_doorbell ?
						 "in DOORBELL of" : "last",
						 ts[i].h.cur_cmd);
				if (ts[i].h.in_doorbell) {
					stalls_in_doorbell++;
				} else {
					/* starved in KVM_RUN: get it out */
					no_guest_runs = 1;
					v->stop = 1;
					pthread_kill(v->thread, SIGUSR1);
				}
			} else if (shown[i] && v->state == 1 &&
				   !ts[i].h.in_doorbell) {
				pthread_kill(v->thread, SIGUSR1);
			}
		}
		if (done == NR_VCPUS)
			return;
		if (++tick % 100 == 0)
			printf("stress: progress: %" PRIu64 " blocks in %.0f s "
			       "(this VM: %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%"
			       PRIu64 ")\n", base + total, (now - start) / 1e9,
			       last[0], last[1], last[2], last[3]);
	}
}

/* ---- the keeper: a second VM counting beside the stress ---------------------- */

static struct hl_vm keeper;
static uint32_t keeper_ctx;

static int keeper_up(void)
{
	struct hl_vcpu *v;
	pfarg_pmd_t p[4];
	int ret;

	ret = hl_vm_simple(&keeper, 1);
	if (ret)
		return ret;
	v = &keeper.vcpus[0];
	ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &keeper_ctx);
	cb_pmd_init(&p[0], PVPFM_VPMD_VCPU_RUN_NS, 0, 0);
	cb_pmd_init(&p[1], PVPFM_VPMD_VM_EXITS, 0, 0);
	cb_pmd_init(&p[2], PVPFM_VPMD_HALT_EXITS, 0, 0);
	cb_pmd_init(&p[3], PVPFM_VPMD_HOST_PAGE_FAULTS, 0, 0);
	ret = ret ? ret : cb_write_pmds(&v->cb, keeper_ctx, p, 4);
	ret = ret ? ret : cb_load(&v->cb, keeper_ctx, 0, 0, 0, v->guest_tgid);
	ret = ret ? ret : cb_start(&v->cb, keeper_ctx);
	return ret;
}

/* ---- rounds: one VM each, with random limits --------------------------------- */

static uint64_t ceil_of[HL_LIM_N];

/* a limit for a VM: 0 (default), small, random up to the ceiling, ceiling */
static uint64_t any_limit(uint64_t *s, int l)
{
	uint64_t c = ceil_of[l], r = pick(s, 100);

	if (r < 20)
		return 0;
	if (r < 45)
		return l == HL_LIM_SMPL_BUF ? HL_PAGE * (1 + pick(s, 8)) :
					      1 + pick(s, c < 8 ? c : 8);
	if (r < 80)
		return 1 + pick(s, c);
	return c;
}

/*
 * One BIND_VM with limit @l above its ceiling (up to the field's maximum):
 * true if it failed with E2BIG. Skipped (true) for a ceiling at the
 * field's maximum.
 */
static bool bind_over_ceiling(uint64_t *s, int l, uint64_t *val, int *got)
{
	uint64_t max = l == HL_LIM_SMPL_BUF ? ~0ULL : 0xffffffffULL;
	struct hl_vm_opts o;
	struct hl_vm bad;

	*got = 0;
	*val = 0;
	if (ceil_of[l] >= max)
		return true;
	*val = ceil_of[l] + 1 + (pick(s, 2) ? 0 : pick(s, max - ceil_of[l]));
	o = hl_vm_opts_simple(NR_VCPUS);
	hl_lim_set(&o.bind, l, *val);
	*got = hl_vm_create(&bad, &o);
	if (!*got)
		hl_vm_destroy(&bad);
	return *got == -E2BIG;
}

/* PMU_INFO from vCPU 0: the limits as asked, a 0 as the module's default */
static bool limits_given(const struct kvmpfm_bind_vm *b, char *why, size_t len)
{
	struct pvpfm_pmu_info info;
	uint64_t want, got;
	int l, ret = cb_pmu_info(&vm.vcpus[0].cb, &info);

	if (ret) {
		snprintf(why, len, "PMU_INFO: %s", hl_status_str(ret));
		return false;
	}
	for (l = 0; l < HL_LIM_N; l++) {
		want = hl_lim_of_bind(b, l);
		got = hl_lim_of_info(&info, l);
		if (want ? got != want : !got || got > ceil_of[l]) {
			snprintf(why, len, "%s: asked %" PRIu64 ", given %" PRIu64,
				 hl_lim_name[l], want, got);
			return false;
		}
	}
	return true;
}

/*
 * The module holds what it held before the round (the keeper VM's share):
 * allocations, perf_events, pinned_pages, vms; waits up to 2 s for the
 * deferred teardown
 */
static bool back_to(const struct kvmpfm_module_stats *base,
		    struct kvmpfm_module_stats *st)
{
	const struct timespec tick = { 0, 10 * MS };
	int i;

	for (i = 0; i < 200; i++) {
		if (hl_module_stats(st))
			return false;
		if (st->allocations == base->allocations &&
		    st->perf_events == base->perf_events &&
		    st->pinned_pages == base->pinned_pages &&
		    st->vms == base->vms)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

struct totals {
	uint64_t sent, ok, other, rnd_blocks, runs, scen, failed, efault;
	uint64_t status[MAX_ERRNO], ioerr[MAX_ERRNO];
	uint64_t overflows, samples, messages, set_switches, notifications;
	uint64_t run_ns;		/* the rounds' own time */
	int vms, e2big_ok, e2big_tried, agree_bad, limits_bad, leak_bad;
	char first_bad[256];
};

static void bad_note(struct totals *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void bad_note(struct totals *t, const char *fmt, ...)
{
	va_list ap;

	if (t->first_bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(t->first_bad, sizeof(t->first_bad), fmt, ap);
	va_end(ap);
}

/* one VM with random limits, @blocks blocks from its 4 vCPU threads */
static int round_run(int r, uint64_t blocks, uint64_t start, struct totals *t)
{
	struct kvmpfm_module_stats base, after;
	struct kvmpfm_bind_vm b;
	struct kvmpfm_vm_stats st, st0;
	struct hl_vm_opts o;
	uint64_t s = seed * 0x2545f4914f6cdd1dULL + r, val, t0, t1;
	uint64_t sent = 0, failed = 0;
	char why[256];
	int i, e, l, got, ret;

	/* one limit above its ceiling: E2BIG, and nothing held */
	hl_module_stats(&base);
	l = pick(&s, HL_LIM_N);
	if (!bind_over_ceiling(&s, l, &val, &got))
		bad_note(t, "VM %d: BIND_VM with %s %" PRIu64 " over its ceiling %"
			 PRIu64 ": %s, not E2BIG", r, hl_lim_name[l], val,
			 ceil_of[l], hl_errname(got));
	else
		t->e2big_ok++;
	t->e2big_tried++;

	memset(&b, 0, sizeof(b));
	b.personality = PVPFM_PERS_AMD64;
	for (l = 0; l < HL_LIM_N; l++)
		hl_lim_set(&b, l, any_limit(&s, l));
	memset(&o, 0, sizeof(o));
	o.nr_vcpus = NR_VCPUS;
	o.bind = b;
	ret = hl_vm_create(&vm, &o);
	if (ret) {
		bad_note(t, "VM %d: BIND_VM with contexts %u sets %u vector %u "
			 "smpl_buf %" PRIu64 ": %s", r, b.max_contexts,
			 b.max_sets, b.max_vector, (uint64_t)b.max_smpl_buf,
			 hl_errname(ret));
		t->limits_bad++;
		return ret;
	}
	t->vms++;
	if (!limits_given(&b, why, sizeof(why))) {
		bad_note(t, "VM %d: %s", r, why);
		t->limits_bad++;
	}

	/* the stats from here: PMU_INFO above rang a doorbell too */
	ret = hl_vm_stats(&vm, &st0);
	if (ret)
		memset(&st0, 0, sizeof(st0));
	memset(registry, 0, sizeof(registry));
	memset(ts, 0, sizeof(ts));
	per_thread = blocks / NR_VCPUS;
	t0 = hl_mono_ns();
	for (i = 0; i < NR_VCPUS; i++)
		hl_call_async(&vm.vcpus[i], stress_fn, NULL);
	monitor(t0, start, t->sent);
	for (i = 0; i < NR_VCPUS; i++)
		ts[i].ret = hl_call_wait(&vm.vcpus[i]);
	t1 = hl_mono_ns();
	t->run_ns += t1 - t0;

	for (i = 0; i < NR_VCPUS; i++) {
		sent += ts[i].h.doorbells;
		t->ok += ts[i].h.ok;
		t->other += ts[i].h.other;
		t->rnd_blocks += ts[i].random_blocks;
		t->runs += ts[i].runs + ts[i].burns;
		t->scen += ts[i].scenarios;
		for (e = 0; e < MAX_ERRNO; e++) {
			t->status[e] += ts[i].h.status[e];
			t->ioerr[e] += ts[i].h.ioctl_err[e];
			failed += e ? ts[i].h.ioctl_err[e] : 0;
		}
		t->efault += ts[i].h.ioctl_err[EFAULT];
	}
	t->sent += sent;
	t->failed += failed;
	ret = ret ? ret : hl_vm_stats(&vm, &st);
	if (ret) {
		memset(&st, 0, sizeof(st));
		st0 = st;
	}
	if (ret || st.commands - st0.commands != st.doorbells - st0.doorbells ||
	    st.doorbells - st0.doorbells != sent - failed) {
		bad_note(t, "VM %d: stats %s: doorbells %" PRIu64 " commands %"
			 PRIu64 "; sent %" PRIu64 ", %" PRIu64
			 " DOORBELL failures", r, hl_errname(ret),
			 (uint64_t)(st.doorbells - st0.doorbells),
			 (uint64_t)(st.commands - st0.commands), sent, failed);
		t->agree_bad++;
	}
	t->overflows += st.overflows;
	t->samples += st.samples;
	t->messages += st.messages;
	t->set_switches += st.set_switches;
	t->notifications += st.notifications;
	printf("stress: VM %d: limits contexts %u sets %u vector %u smpl_buf %"
	       PRIu64 " (0: default); %" PRIu64 " blocks in %.1f s; overflows %"
	       PRIu64 " samples %" PRIu64 " set switches %" PRIu64 "\n", r,
	       b.max_contexts, b.max_sets, b.max_vector,
	       (uint64_t)b.max_smpl_buf, sent, (t1 - t0) / 1e9,
	       (uint64_t)st.overflows, (uint64_t)st.samples,
	       (uint64_t)st.set_switches);

	hl_vm_destroy(&vm);
	if (!back_to(&base, &after)) {
		bad_note(t, "VM %d gone: allocations %" PRId64 " perf_events %"
			 PRId64 " pinned_pages %" PRId64 " vms %" PRId64
			 ", before it %" PRId64 "/%" PRId64 "/%" PRId64 "/%"
			 PRId64, r, (int64_t)after.allocations,
			 (int64_t)after.perf_events, (int64_t)after.pinned_pages,
			 (int64_t)after.vms, (int64_t)base.allocations,
			 (int64_t)base.perf_events, (int64_t)base.pinned_pages,
			 (int64_t)base.vms);
		t->leak_bad++;
	}
	return 0;
}

int main(void)
{
	static struct totals t;
	struct kvmpfm_vm_stats kst;
	uint64_t total, round, t0, t1, left, n;
	uint64_t kvals[4] = { 0 };
	const char *env;
	char why[256];
	int ret, i, e, kfd, concerns, r;

	hl_init();
	hl_check_allow_host_page_faults();
	kfd = hl_klog_start();
	env = getenv("T_STRESS_COMMANDS");
	total = env ? strtoull(env, NULL, 0) : 100000;
	env = getenv("T_STRESS_ROUND");
	round = env ? strtoull(env, NULL, 0) : 50000;
	if (round < NR_VCPUS)
		round = NR_VCPUS;
	env = getenv("T_STRESS_SEED");
	seed = env ? strtoull(env, NULL, 0) : 1;
	no_smpl = getenv("T_STRESS_NO_SMPL") != NULL;
	no_tp = getenv("T_STRESS_NO_TP") != NULL;
	env = getenv("T_STRESS_ONLY_RUNS");
	only_runs = env ? atoi(env) : 0;
	if (only_runs)
		printf("stress: control: guest runs and PMU_INFO only\n");
	if (getenv("T_STRESS_NO_RUNS")) {
		no_guest_runs = 1;
		printf("stress: the guest never runs (T_STRESS_NO_RUNS)\n");
	}
	if (no_tp)
		printf("stress: no tracepoint-backed PMDs (T_STRESS_NO_TP)\n");
	if (no_smpl)
		printf("stress: no sampling buffers (T_STRESS_NO_SMPL)\n");

	if (only_runs == 3) {
		/* control without kvm-perfmon: plain KVM VMs, guest runs */
		struct hl_vm_opts o;

		per_thread = total / NR_VCPUS;
		memset(&o, 0, sizeof(o));
		o.nr_vcpus = NR_VCPUS;
		o.no_pfm = true;
		printf("stress: control: no /dev/kvm-perfmon at all\n");
		if (!hl_check_vm("stress_vm_setup", hl_vm_create(&vm, &o)))
			return t_done();
		t0 = hl_mono_ns();
		for (i = 0; i < NR_VCPUS; i++)
			hl_call_async(&vm.vcpus[i], stress_fn, NULL);
		monitor(t0, t0, 0);
		for (i = 0; i < NR_VCPUS; i++)
			hl_call_wait(&vm.vcpus[i]);
		hl_vm_destroy(&vm);
		t_check(!stalls, "stress_control_vcpus_make_progress",
			"%d stall(s) of 30 s or more; first: %s", stalls,
			stall_what);
		printf("stress: control done\n");
		return t_done();
	}
	for (i = 0; i < HL_LIM_N; i++)
		ceil_of[i] = hl_ceiling(i);
	t_check(ceil_of[0] && ceil_of[1] && ceil_of[2] && ceil_of[3],
		"stress_ceilings_read", "contexts %" PRIu64 " sets %" PRIu64
		" vector %" PRIu64 " smpl_buf %" PRIu64, ceil_of[0], ceil_of[1],
		ceil_of[2], ceil_of[3]);
	for (i = 0; i < HL_LIM_N; i++)
		if (!ceil_of[i])
			ceil_of[i] = 1;
	ret = keeper_up();
	if (!t_check(!ret, "stress_keeper_setup", "keeper VM: %s",
		     hl_status_str(ret)))
		return t_done();

	t0 = hl_mono_ns();
	for (r = 0, left = total; left >= NR_VCPUS; r++, left -= n) {
		n = left < round + NR_VCPUS ? left : round;
		n -= n % NR_VCPUS;
		if (round_run(r, n, t0, &t))
			break;
	}
	t1 = hl_mono_ns();

	printf("stress: %" PRIu64 " command blocks sent from %d vCPU threads in "
	       "%.1f s (%.0f per s; %.1f s with the VMs' setup and teardown), "
	       "seed %" PRIu64 ", %d VMs with random limits: %" PRIu64
	       " random blocks, %" PRIu64 " whole valid sequences, %" PRIu64
	       " guest runs or CPU burns between them\n", t.sent, NR_VCPUS,
	       t.run_ns / 1e9, t.sent / (t.run_ns / 1e9), (t1 - t0) / 1e9, seed,
	       t.vms, t.rnd_blocks, t.scen, t.runs);
	printf("stress: returned 0: %" PRIu64, t.ok);
	for (e = 1; e < MAX_ERRNO; e++)
		if (t.status[e])
			printf(", -%s: %" PRIu64, hl_errname(e), t.status[e]);
	if (t.other)
		printf(", other: %" PRIu64, t.other);
	printf("\n");
	printf("stress: DOORBELL ioctl failures:");
	for (e = 1, i = 0; e < MAX_ERRNO; e++)
		if (t.ioerr[e]) {
			printf(" %s: %" PRIu64, hl_errname(e), t.ioerr[e]);
			i++;
		}
	printf("%s\n", i ? "" : " none");
	printf("stress: the VMs' stats: overflows %" PRIu64 " samples %" PRIu64
	       " messages %" PRIu64 " set switches %" PRIu64
	       " notifications %" PRIu64 "\n", t.overflows, t.samples,
	       t.messages, t.set_switches, t.notifications);

	t_check(!stalls, "stress_vcpus_make_progress",
		"%d stall(s) of 30 s or more (%d in a DOORBELL); first: %s; "
		"afterwards no guest runs", stalls, stalls_in_doorbell,
		stall_what);
	t_check(t.sent >= total - total % NR_VCPUS, "stress_all_commands_sent",
		"%" PRIu64 " of %" PRIu64, t.sent, total);
	/* the only DOORBELL failure a block can cause: EFAULT */
	t_check(t.failed == t.efault, "stress_doorbell_answers",
		"%" PRIu64 " DOORBELL ioctls failed, %" PRIu64 " with EFAULT",
		t.failed, t.efault);
	t_check(!t.agree_bad, "stress_stats_agree",
		"%d VM(s) whose stats disagree with what was sent; first: %s",
		t.agree_bad, t.first_bad);
	t_check(t.e2big_ok == t.e2big_tried, "stress_bind_over_ceiling_e2big",
		"%d of %d binds above a ceiling refused with E2BIG; first "
		"wrong: %s", t.e2big_ok, t.e2big_tried, t.first_bad);
	t_check(!t.limits_bad, "stress_random_limits_given",
		"%d VM(s) not bound or not given their limits; first: %s",
		t.limits_bad, t.first_bad);
	t_check(!t.leak_bad, "stress_module_back_after_each_vm",
		"%d VM(s) left something in the module; first: %s",
		t.leak_bad, t.first_bad);
	t_check(t.overflows > 0 && t.samples > 0 && t.messages > 0 &&
		t.set_switches > 0 && t.notifications > 0,
		"stress_deep_states_reached",
		"overflows %" PRIu64 " samples %" PRIu64 " messages %" PRIu64
		" set switches %" PRIu64 " notifications %" PRIu64,
		t.overflows, t.samples, t.messages, t.set_switches,
		t.notifications);

	/* the keeper VM: its contexts are its own */
	ret = hl_vm_stats(&keeper, &kst);
	for (i = 0; i < 4; i++)
		cb_read_pmd(&keeper.vcpus[0].cb, keeper_ctx, 0,
			    i == 0 ? PVPFM_VPMD_VCPU_RUN_NS :
			    i == 1 ? PVPFM_VPMD_VM_EXITS :
			    i == 2 ? PVPFM_VPMD_HALT_EXITS :
				     PVPFM_VPMD_HOST_PAGE_FAULTS, &kvals[i]);
	t_check(!ret && kst.contexts == 1 && kst.loaded == 1 && !kst.overflows &&
		kvals[0] < 50 * MS && !kvals[1] && !kvals[2] && !kvals[3],
		"stress_keeper_vm_untouched",
		"keeper: contexts %u loaded %u overflows %" PRIu64
		" RUN_NS %" PRIu64 " VM_EXITS %" PRIu64 " HALT %" PRIu64
		" PF %" PRIu64, kst.contexts, kst.loaded,
		(uint64_t)kst.overflows, kvals[0], kvals[1], kvals[2], kvals[3]);

	t0 = hl_mono_ns();
	hl_vm_destroy(&keeper);
	t1 = hl_mono_ns();
	printf("stress: teardown of the keeper VM took %.1f ms\n",
	       (t1 - t0) / 1e6);
	if (t_check(hl_module_idle(2000, why, sizeof(why)),
		    "stress_module_idle",
		    "module stats not zero after teardown: %s", why))
		printf("stress: module allocation counters at the end: %s\n",
		       why);
	concerns = hl_klog_concerns(kfd, 20, "stress: L1 log: ");
	printf("stress: L1 kernel log lines of concern: %d\n", concerns);
	t_check(!concerns, "stress_kernel_log_clean",
		"%d line(s) of concern in L1's kernel log%s", concerns,
		concerns < 0 ? " (could not read it)" : "");
	return t_done();
}
