// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: arbitrary command blocks into pfm_engine_exec(), the
 * engine's entry point for guest commands, on random vCPUs, interleaved
 * with simulated events, overflows, timer expiries and backend failures so
 * that deep states (loaded, counting, sampling, masked, switched sets) are
 * reached. Input format: fuzz_format.h. One engine per input.
 *
 * Findings: any sanitizer report, and abort() on a broken invariant: the
 * exec return value and header, and after pfm_engine_destroy() nothing
 * left allocated, open, pinned or armed (sim_leaks), nothing the backend
 * saw done wrong (sim_violations).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sim/pfm_sim.h"
#include "fuzz_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GUEST_BASE	0x100000ULL
#define GUEST_PAGES	16
#define NR_KNOWN	8
/* engine interrupts and timer calls per input: keeps inputs fast */
#define BUDGET		20000

struct in {
	const u8 *p;
	size_t n;
};

static u8 g8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static u16 g16(struct in *in)
{
	u16 lo = g8(in);

	return lo | (u16)g8(in) << 8;
}

static u64 g64(struct in *in)
{
	u64 v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v |= (u64)g8(in) << (8 * i);
	return v;
}

struct fz {
	struct sim *sim;
	struct pfm_engine *e;
	u32 nvcpu;
	u32 known[NR_KNOWN];
	u32 nknown, next;
	u64 block[PVPFM_CMD_BLOCK_SIZE / 8];
};

static const u32 ev_keys[FZ_EV_COUNT] = {
	[FZ_EV_A] = SIM_EV_GENERIC(0x76),
	[FZ_EV_B] = SIM_EV_GENERIC(0xc0),
	[FZ_EV_REFUSED] = SIM_EV_GENERIC(0xff),
	[FZ_EV_FIXED0] = SIM_EV_FIXED(0),
	[FZ_EV_VM_EXITS] = SIM_EV_VIRTUAL(PVPFM_VPMD_VM_EXITS),
	[FZ_EV_RUN_NS] = SIM_EV_VIRTUAL(PVPFM_VPMD_VCPU_RUN_NS),
};
static const u16 ev_sel[] = { 0x76, 0xc0, 0xff, 0xc2 };
static const u16 pmc_nums[] = { 0, 1, 2, 3, 16, 17, 4, 255, 256, 0xffff };
static const u16 pmd_nums[] = { 0, 1, 2, 3, 16, 17, 18, 256, 257, 258,
				259, 260, 261, 4, 300, 0xffff };
static const u8 widths[] = { 16, 32, 48, 64 };

#define PICK(tab, b)	((tab)[(b) % (sizeof(tab) / sizeof((tab)[0]))])

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_cmd: %s\n", what);
	abort();
}

static u32 vcpu_of(struct fz *f, u8 b)
{
	return b % f->nvcpu;
}

static u32 ctx_of(struct fz *f, u8 b)
{
	if (b >= FZ_CTX_RAW || !f->nknown)
		return b == 0xff ? 0xffffffff : b;
	return f->known[b % f->nknown];
}

static void remember(struct fz *f, u32 id)
{
	u32 i;

	for (i = 0; i < f->nknown; i++)
		if (f->known[i] == id)
			return;
	if (f->nknown < NR_KNOWN)
		f->known[f->nknown++] = id;
	else
		f->known[f->next++ % NR_KNOWN] = id;
}

static struct pvpfm_cmd_hdr *hdr_of(struct fz *f)
{
	return (struct pvpfm_cmd_hdr *)f->block;
}

static void *arg_of(struct fz *f)
{
	return hdr_of(f) + 1;
}

/*
 * Run the block; check what any caller may rely on. The engine gets a heap
 * copy of exactly @len bytes, so that ASan sees any access beyond them.
 */
static void run_block(struct fz *f, u32 vcpu, u32 len)
{
	struct pvpfm_cmd_hdr *h = hdr_of(f);
	u16 cmd = h->cmd, version = h->version;
	u32 arg_size = h->arg_size;
	struct pfm_engine_stats st;
	void *copy;
	int ret;

	copy = malloc(len ? len : 1);
	if (!copy)
		fail("malloc");
	memcpy(copy, f->block, len < sizeof(f->block) ? len : sizeof(f->block));
	ret = pfm_engine_exec(f->e, vcpu, copy, len);
	memcpy(f->block, copy, len < sizeof(f->block) ? len : sizeof(f->block));
	free(copy);
	if (len < sizeof(*h) || len > PVPFM_CMD_BLOCK_SIZE ||
	    vcpu >= f->nvcpu) {
		if (ret >= 0)
			fail("exec accepted an unusable block");
		return;
	}
	if (ret < (int)sizeof(*h) || ret > (int)len)
		fail("exec returns more than the block or less than a header");
	if (h->status > 0)
		fail("positive status");
	if (h->cmd != cmd || h->version != version || h->arg_size != arg_size)
		fail("exec changed the command's identity");
	if (h->status == 0 && cmd == PVPFM_CMD_CREATE_CONTEXT) {
		if (!h->ctx_id)
			fail("context id 0");
		remember(f, h->ctx_id);
	}
	pfm_engine_stats(f->e, &st);
	if (st.contexts > 4 || st.sets > 4 * 4 || st.loaded > st.contexts)
		fail("limits exceeded");
}

static void hdr_init(struct fz *f, u32 vcpu, u16 cmd, u32 ctx, u32 count,
		     u32 arg_size)
{
	struct pvpfm_cmd_hdr *h = hdr_of(f);

	h->version = PVPFM_ABI_VERSION;
	h->cmd = cmd;
	h->ctx_id = ctx;
	h->count = count;
	h->status = 0;
	h->arg_size = arg_size;
	h->err_index = 0;
	h->tid = 100 + vcpu;
	h->tgid = 100;
}

/* the argument size command @h->cmd expects, from its header alone */
static u32 natural_size(struct pvpfm_cmd_hdr *h)
{
	static const u32 fixed[PVPFM_CMD_MAX] = {
		[PVPFM_CMD_CREATE_CONTEXT] = sizeof(struct pvpfm_create_arg),
		[PVPFM_CMD_LOAD_CONTEXT] = sizeof(struct pvpfm_load_arg),
		[PVPFM_CMD_START] = sizeof(pfarg_start_t),
		[PVPFM_CMD_UNLOAD_CONTEXT] = sizeof(struct pvpfm_unload_arg),
		[PVPFM_CMD_SWITCH] = sizeof(struct pvpfm_switch_arg),
		[PVPFM_CMD_READ_MSG] = sizeof(pfarg_msg_t),
		[PVPFM_CMD_PMU_INFO] = sizeof(struct pvpfm_pmu_info),
		[PVPFM_CMD_CTX_STATE] = sizeof(struct pvpfm_ctx_state),
	};
	static const u32 entry[PVPFM_CMD_MAX] = {
		[PVPFM_CMD_WRITE_PMCS] = sizeof(pfarg_pmc_t),
		[PVPFM_CMD_WRITE_PMDS] = sizeof(pfarg_pmd_t),
		[PVPFM_CMD_READ_PMDS] = sizeof(pfarg_pmd_t),
		[PVPFM_CMD_CREATE_EVTSETS] = sizeof(pfarg_setdesc_t),
		[PVPFM_CMD_GETINFO_EVTSETS] = sizeof(pfarg_setinfo_t),
		[PVPFM_CMD_DELETE_EVTSETS] = sizeof(pfarg_setdesc_t),
		[PVPFM_CMD_REG_DESC] = sizeof(struct pvpfm_reg_desc),
	};
	u32 cmd = h->cmd % PVPFM_CMD_MAX;

	h->cmd = cmd;
	if (cmd == PVPFM_CMD_SMPL_REGISTER) {
		h->count = 0;
		return sizeof(struct pvpfm_smpl_register_arg) + 8 * (h->ctx_id >> 28);
	}
	if (entry[cmd]) {
		h->count %= 9;
		return h->count * entry[cmd];
	}
	return fixed[cmd];
}

static void op_raw(struct fz *f, struct in *in)
{
	struct pvpfm_cmd_hdr *h = hdr_of(f);
	u32 vcpu = g8(in) % (f->nvcpu + 1);
	u8 flags = g8(in);
	u32 i, n, len;

	for (i = 0; i < sizeof(*h); i++)
		((u8 *)h)[i] = g8(in);
	n = g16(in) % (PVPFM_CMD_ARGS_MAX + 1);
	for (i = 0; i < n && in->n; i++)
		((u8 *)arg_of(f))[i] = g8(in);
	if (flags & 1)
		h->ctx_id = ctx_of(f, h->ctx_id & 0xff);
	if (flags & 2)
		h->version = PVPFM_ABI_VERSION;
	if (flags & 4)
		h->arg_size = n;
	/* the size the command wants, whatever the block holds */
	if (flags & 0x40)
		h->arg_size = natural_size(h);
	len = flags & 8 ? PVPFM_CMD_BLOCK_SIZE : sizeof(*h) + n;
	if ((flags & 0x30) == 0x30)
		len = g16(in);	/* any length, even unusable ones */
	run_block(f, vcpu, len);
}

static void set_bits(u64 *bv, u8 b)
{
	static const u16 map[8] = { 0, 1, 2, 3, 16, 256, 257, 261 };
	unsigned int i;

	for (i = 0; i < 8; i++)
		if (b & (1u << i))
			pfm_bit_set(bv, map[i]);
}

static u32 build_pmcs(struct in *in, void *arg, u32 *count)
{
	pfarg_pmc_t *v = arg;
	u32 i, n = g8(in) % 6;
	u8 kind;

	for (i = 0; i < n; i++) {
		v[i].reg_num = PICK(pmc_nums, g8(in));
		v[i].reg_set = g8(in) % 5;
		kind = g8(in);
		switch (kind & 0x30) {
		case FZ_PMC_OFF:
			v[i].reg_value = 1ULL << 20;
			break;
		case FZ_PMC_RSVD:
			v[i].reg_value = (1ULL << 20) | (1ULL << (kind & 63));
			break;
		case FZ_PMC_RAW:
			v[i].reg_value = g64(in);
			break;
		default:
			/* EN|INT|USR|OS and an event; FIXED_CTRL fields */
			v[i].reg_value = v[i].reg_num == 16 ?
				0x888ULL | (kind & 0xf) | ((u64)(kind & 0xc0) >> 2) :
				0x530000ULL | PICK(ev_sel, kind);
			break;
		}
		if (kind & 0x80)
			v[i].reg_flags = g8(in);
	}
	*count = n;
	return n * sizeof(*v);
}

static u32 build_pmds(struct in *in, void *arg, u32 *count)
{
	pfarg_pmd_t *v = arg;
	u32 i, n = g8(in) % 6;
	u64 period;
	u8 fl;

	for (i = 0; i < n; i++) {
		v[i].reg_num = PICK(pmd_nums, g8(in));
		v[i].reg_set = g8(in) % 5;
		fl = g8(in);
		v[i].reg_flags = fl & 7;
		period = 1 + g16(in);
		if (fl & 0x80)
			period <<= 20;
		v[i].reg_value = -period;
		v[i].reg_short_reset = -period;
		v[i].reg_long_reset = fl & 0x40 ? -(period * 3) : -period;
		set_bits(v[i].reg_smpl_pmds, g8(in));
		set_bits(v[i].reg_reset_pmds, g8(in));
		v[i].reg_ovfl_switch_cnt = g8(in) % 4;
		v[i].reg_random_mask = fl & 0x20 ? ~0ULL : g8(in);
		v[i].reg_random_seed = g8(in);
	}
	*count = n;
	return n * sizeof(*v);
}

static u32 build_sets(struct in *in, void *arg, u32 *count)
{
	pfarg_setdesc_t *v = arg;
	u32 i, n = g8(in) % 4;

	for (i = 0; i < n; i++) {
		v[i].set_id = g8(in) % 6;
		v[i].set_flags = g8(in) % 5;
		v[i].set_timeout = (u64)g16(in) * 1000;
	}
	*count = n;
	return n * sizeof(*v);
}

static void op_cmd(struct fz *f, struct in *in)
{
	u32 vcpu = vcpu_of(f, g8(in));
	u16 cmd = 1 + g8(in) % FZ_CMDS;
	u32 ctx = ctx_of(f, g8(in));
	u32 count = 0, size = 0, i, n;
	void *arg = arg_of(f);
	u8 b;

	switch (cmd) {
	case PVPFM_CMD_CREATE_CONTEXT: {
		struct pvpfm_create_arg *a = arg;

		b = g8(in);
		a->ctx.ctx_flags = (b & 3) | (b & 4 ? PFM_FL_OVFL_NO_MSG : 0) |
				   (b & 0x10 ? 0x100 : 0);
		if (b & 8) {
			strcpy(a->smpl_name, PFM_DFL_SMPL_NAME);
			a->smpl_arg.buf_size = (u64)(1 + g8(in) % 4) *
					       PVPFM_PAGE_SIZE;
			if (b & 0x20)
				a->smpl_arg.buf_size = g64(in);
		}
		size = sizeof(*a);
		break;
	}
	case PVPFM_CMD_WRITE_PMCS:
		size = build_pmcs(in, arg, &count);
		break;
	case PVPFM_CMD_WRITE_PMDS:
		size = build_pmds(in, arg, &count);
		break;
	case PVPFM_CMD_READ_PMDS: {
		pfarg_pmd_t *v = arg;

		count = g8(in) % 6;
		for (i = 0; i < count; i++) {
			v[i].reg_num = PICK(pmd_nums, g8(in));
			v[i].reg_set = g8(in) % 5;
		}
		size = count * sizeof(*v);
		break;
	}
	case PVPFM_CMD_LOAD_CONTEXT: {
		struct pvpfm_load_arg *a = arg;

		b = g8(in);
		switch (b & 3) {
		case 0:
			a->load.load_pid = 100 + vcpu;
			a->flags = PVPFM_LOAD_SELF;
			break;
		case 1:
			a->load.load_pid = vcpu;
			break;
		case 2:
			a->load.load_pid = 500 + (b >> 4);
			break;
		default:
			a->load.load_pid = g16(in);
			a->flags = g8(in);
			break;
		}
		a->load.load_set = (b >> 2) & 3;
		a->tgid = 100;
		size = sizeof(*a);
		break;
	}
	case PVPFM_CMD_START:
		b = g8(in);
		if (b & 1) {
			((pfarg_start_t *)arg)->start_set = (b >> 1) % 6;
			size = sizeof(pfarg_start_t);
		}
		break;
	case PVPFM_CMD_CREATE_EVTSETS:
	case PVPFM_CMD_DELETE_EVTSETS:
		size = build_sets(in, arg, &count);
		break;
	case PVPFM_CMD_GETINFO_EVTSETS: {
		pfarg_setinfo_t *v = arg;

		count = g8(in) % 5;
		for (i = 0; i < count; i++)
			v[i].set_id = g8(in) % 6;
		size = count * sizeof(*v);
		break;
	}
	case PVPFM_CMD_UNLOAD_CONTEXT:
		b = g8(in);
		if (b & 1) {
			((struct pvpfm_unload_arg *)arg)->flags = (b >> 1) & 3;
			size = sizeof(struct pvpfm_unload_arg);
		}
		break;
	case PVPFM_CMD_SWITCH: {
		struct pvpfm_switch_arg *a = arg;

		b = g8(in);
		a->out_ctx = b & 1 ? ctx : 0;
		a->in_ctx = b & 2 ? ctx_of(f, g8(in)) : 0;
		a->in_tid = 500 + (b >> 4);
		a->in_tgid = 50;
		size = sizeof(*a);
		break;
	}
	case PVPFM_CMD_SMPL_REGISTER: {
		struct pvpfm_smpl_register_arg *a = arg;

		a->first_page = g8(in) % 5;
		n = g8(in) % 5;
		a->nr_pages = n;
		for (i = 0; i < n; i++) {
			b = g8(in);
			/* a few pages beyond guest RAM, a few unaligned */
			a->gpa[i] = GUEST_BASE + (u64)(b % 20) * PVPFM_PAGE_SIZE +
				    (b >= 0xf8 ? 8 : 0);
		}
		size = sizeof(*a) + n * sizeof(u64);
		break;
	}
	case PVPFM_CMD_READ_MSG:
		size = sizeof(pfarg_msg_t);
		break;
	case PVPFM_CMD_PMU_INFO:
		size = sizeof(struct pvpfm_pmu_info);
		break;
	case PVPFM_CMD_REG_DESC:
		ctx = g8(in);
		count = g8(in) % 8;
		size = count * sizeof(struct pvpfm_reg_desc);
		break;
	default:	/* STOP, RESTART, DESTROY_CONTEXT: no argument */
		break;
	}
	hdr_init(f, vcpu, cmd, ctx, count, size);
	run_block(f, vcpu, sizeof(struct pvpfm_cmd_hdr) + size);
}

static void op_events(struct fz *f, struct in *in)
{
	u32 vcpu = vcpu_of(f, g8(in));
	u32 key = ev_keys[g8(in) % FZ_EV_COUNT];
	u64 n = g16(in);
	u8 scale = g8(in);

	sim_events(f->sim, vcpu, key, n << (scale % 40));
}

static void op_fail(struct fz *f, struct in *in)
{
	u8 kind = g8(in), n = g8(in);

	switch (kind % 4) {
	case 0:
		f->sim->fail_alloc_in = n % 8;
		break;
	case 1:
		f->sim->fail_open_in = n % 4;
		break;
	case 2:
		f->sim->fail_guest_writes = n & 1;
		break;
	default:
		if (f->sim->nr_contention < SIM_MAX_CONTENTION)
			sim_set_contention(f->sim, vcpu_of(f, n),
					   PICK(pmd_nums, n >> 2), n % 101);
		break;
	}
}

static void op_ovfl(struct fz *f, struct in *in)
{
	u64 bv[PFM_PMD_BV] = { 0 };
	u32 vcpu = g8(in) % (f->nvcpu + 1);

	set_bits(bv, g8(in));
	/* an out-of-range vCPU is the engine's to ignore */
	if (vcpu < f->nvcpu)
		sim_raise_overflow(f->sim, vcpu, bv);
	else
		pfm_engine_overflow(f->e, vcpu, bv, &f->sim->where[0]);
}

/* a backend like the input's, for a destination or a stream's reader */
static struct sim *sim_like(const struct sim_cfg *sc, u8 w)
{
	struct sim *s = sim_create(sc);

	if (!s)
		fail("sim_create");
	s->budget = BUDGET;
	sim_refuse(s, ev_keys[FZ_EV_REFUSED]);
	if (w & 0x80)
		sim_refuse(s, SIM_EV_KIND_ANY(PFM_EVK_FIXED));
	return s;
}

/*
 * Whatever state the input reached migrates: the stream saved
 * from it restores into a fresh engine on a like host. With
 * FUZZ_SAVE_STREAM=DIR the stream is written there too: the seed corpus
 * of fuzz_stream.
 */
static void round_trip(struct fz *f, const struct pfm_engine_cfg *cfg,
		       const struct sim_cfg *sc, u8 w)
{
	struct pfm_engine_cfg cfg2 = *cfg;
	struct pfm_stream_error err;
	const char *dir = getenv("FUZZ_SAVE_STREAM");
	struct pfm_engine *e2;
	struct sim *s2;
	long n = pfm_engine_save(f->e, NULL, 0);
	void *buf;
	int ret;

	if (n <= 0)
		fail("pfm_engine_save measured nothing");
	buf = malloc(n);
	if (!buf || pfm_engine_save(f->e, buf, n) != n)
		fail("pfm_engine_save");
	s2 = sim_like(sc, w);
	if (sim_engine_create(s2, &cfg2, &e2))
		fail("pfm_engine_create");
	ret = pfm_engine_restore(e2, buf, n, &err);
	if (ret) {
		fprintf(stderr, "restore: %d, %s at %llu (context %u set %u PMD %u)\n",
			ret, pfm_stream_reason_name(err.reason),
			(unsigned long long)err.offset, err.ctx_id, err.set,
			err.pmd);
		fail("a saved stream did not restore");
	}
	if (dir) {
		char path[512];
		FILE *out;

		u32 hash = 2166136261u;
		long i;

		for (i = 0; i < n; i++)
			hash = (hash ^ ((u8 *)buf)[i]) * 16777619u;
		snprintf(path, sizeof(path), "%s/stream-%08x", dir, hash);
		out = fopen(path, "w");
		if (out) {
			fwrite(buf, 1, n, out);
			fclose(out);
		}
	}
	pfm_engine_destroy(e2);
	if (sim_leaks(s2) || sim_violations(s2))
		fail("the restored engine left something behind");
	sim_destroy(s2);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct in in = { data, size };
	struct pfm_engine_cfg cfg;
	struct sim_cfg sc;
	u8 pers, w, nv, op;

	memset(&f, 0, sizeof(f));
	pers = g8(&in);
	w = g8(&in);
	nv = g8(&in);
	memset(&sc, 0, sizeof(sc));
	sc.nr_vcpus = 1 + nv % 4;
	sc.counter_width = widths[w % 4];
	sc.guest_base = GUEST_BASE;
	sc.guest_size = GUEST_PAGES * PVPFM_PAGE_SIZE;
	f.sim = sim_like(&sc, w);
	memset(&cfg, 0, sizeof(cfg));
	cfg.personality = PVPFM_PERS_AUTO + 1 + pers % (PVPFM_PERS_COUNT - 1);
	cfg.gp_counters = 4;
	cfg.fixed_counters = 3;
	cfg.arch_version = 3;
	cfg.timer_granularity_ns = 1000;
	cfg.limits.max_contexts = 4;
	cfg.limits.max_sets = 4;
	cfg.limits.max_vector = 8;
	cfg.limits.max_smpl_buf = 4 * PVPFM_PAGE_SIZE;
	if (sim_engine_create(f.sim, &cfg, &f.e))
		fail("pfm_engine_create");
	f.nvcpu = sc.nr_vcpus;

	while (in.n) {
		op = g8(&in);
		memset(f.block, 0, sizeof(f.block));
		switch (op % FZ_OP_COUNT) {
		case FZ_OP_RAW:
			op_raw(&f, &in);
			break;
		case FZ_OP_CMD:
			op_cmd(&f, &in);
			break;
		case FZ_OP_EVENTS:
			op_events(&f, &in);
			break;
		case FZ_OP_RUN:
			sim_run(f.sim, (u64)g16(&in) * 64);
			break;
		case FZ_OP_RATE:
			sim_set_rate(f.sim, ev_keys[g8(&in) % FZ_EV_COUNT], g8(&in));
			break;
		case FZ_OP_OVFL:
			op_ovfl(&f, &in);
			break;
		case FZ_OP_FAIL:
			op_fail(&f, &in);
			break;
		case FZ_OP_WHERE: {
			u32 v = vcpu_of(&f, g8(&in));

			f.sim->where[v].ip = (u64)g16(&in) << 12;
			f.sim->where[v].tid = g8(&in);
			f.sim->where[v].tgid = 7;
			break;
		}
		}
		/* failure injection lasts one operation */
		f.sim->fail_alloc_in = 0;
		f.sim->fail_open_in = 0;
	}

	if (getenv("FUZZ_CMD_VERBOSE")) {
		struct pfm_engine_stats st;

		pfm_engine_stats(f.e, &st);
		fprintf(stderr,
			"cmds %llu errs %llu ctx %u loaded %u ovfl %llu samples %llu lost %llu msgs %llu switches %llu\n",
			(unsigned long long)st.commands,
			(unsigned long long)st.command_errors, st.contexts,
			st.loaded, (unsigned long long)st.overflows,
			(unsigned long long)st.samples,
			(unsigned long long)st.samples_lost,
			(unsigned long long)st.messages,
			(unsigned long long)st.set_switches);
	}
	round_trip(&f, &cfg, &sc, w);
	pfm_engine_destroy(f.e);
	if (sim_leaks(f.sim)) {
		fprintf(stderr, "allocs %ld open %u pinned %llu\n",
			f.sim->live_allocs, f.sim->nr_open,
			(unsigned long long)f.sim->pinned);
		fail("engine left something behind after destroy");
	}
	if (sim_violations(f.sim)) {
		fprintf(stderr,
			"bad_opens %llu bad_frees %llu bad_ops %llu guest_write_errors %llu runaway %d\n",
			(unsigned long long)f.sim->bad_opens,
			(unsigned long long)f.sim->bad_frees,
			(unsigned long long)f.sim->bad_ops,
			(unsigned long long)f.sim->guest_write_errors,
			f.sim->runaway);
		fail("the backend saw the engine misbehave");
	}
	sim_destroy(f.sim);
	return 0;
}
