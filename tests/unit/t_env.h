/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unit test environment: one engine on one simulated PMU. The guest's calls
 * are the command blocks of tests/common/cmdblock.h on t->cb, which runs
 * them through pfm_engine_exec(), the single entry point the guest uses,
 * from t->vcpu with t->tid/tgid of that vCPU. Nothing here calls engine
 * internals.
 */
#ifndef _T_ENV_H
#define _T_ENV_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tests/common/cmdblock.h"
#include "tests/sim/pfm_sim.h"

/* guest RAM of every test VM */
#define T_GUEST_BASE		0x100000000ULL
#define T_GUEST_SIZE		(1u << 20)
/* where tests put sampling buffers (page aligned) */
#define T_SMPL_GPA		(T_GUEST_BASE + 0x10000)

/* a PERFSEL value counting event @ev (12 bits) in user and kernel mode */
#define T_EVTSEL(ev)		(PVPFM_EVTSEL_CONTROL |				\
				 ((ev) & PVPFM_EVTSEL_EVENT) |			\
				 (((uint64_t)(ev) >> 8 << PVPFM_EVTSEL_AMD_EXT_SHIFT) &	\
				  PVPFM_EVTSEL_AMD_EXT))

/* events the tests count */
#define EV_A			0x076	/* cycles */
#define EV_B			0x0c0	/* retired instructions */
#define EV_C			0x0c2	/* retired branches */
#define EV_D			0x02e	/* something else */
#define EV_REFUSED		0x0ff	/* the sim's event_check refuses it */
#define KEY_A			SIM_EV_GENERIC(EV_A)
#define KEY_B			SIM_EV_GENERIC(EV_B)
#define KEY_C			SIM_EV_GENERIC(EV_C)
#define KEY_D			SIM_EV_GENERIC(EV_D)

struct t_opts {
	enum pvpfm_personality personality;
	u8 counter_width;
	u32 nr_vcpus;
	u64 timer_granularity_ns;
	struct pfm_limits limits;
	u8 gp_counters, fixed_counters, arch_version;	/* intel_arch */
};

struct t_env {
	struct sim *sim;
	struct pfm_engine *e;
	struct pfm_engine_cfg cfg;
	u32 vcpu;			/* the vCPU issuing commands */
	u32 tid[SIM_MAX_VCPUS];		/* guest thread running on each vCPU */
	u32 tgid[SIM_MAX_VCPUS];
	struct cb_caller cb;		/* the calls; cb.hdr: the last header */
	int exec_ret;			/* pfm_engine_exec's return */
	u64 block[PVPFM_CMD_BLOCK_SIZE / 8];
};

/* defaults: amd64 fam10h, 32-bit counters, 2 vCPUs, 1 us timer granularity */
void t_opts_default(struct t_opts *o);
struct t_env *t_env_new(const struct t_opts *o);
/* a default environment but for its limits, @lim */
struct t_env *t_env_limits(const struct pfm_limits *lim);
/* destroys the engine and fails the test on any leak or violation */
void t_env_free(struct t_env *t);

/* cmocka fixtures: *state = a default environment */
int t_setup(void **state);
int t_teardown(void **state);

/* create, as cb_create/cb_create_smpl: the new context's id, or -errno */
int t_create(struct t_env *t, u32 flags);
int t_create_smpl(struct t_env *t, u32 flags, u64 buf_size);

/* shorthands that assert success */
u32 t_ctx(struct t_env *t, u32 flags);		/* create */
void t_pmc(struct t_env *t, u32 ctx, u16 set, u16 num, u64 value);
void t_pmd(struct t_env *t, u32 ctx, u16 set, u16 num, u64 value);
/* PMD @num = -@period, short = long reset = -@period, @flags */
void t_pmd_period(struct t_env *t, u32 ctx, u16 set, u16 num, u64 period,
		  u32 flags);
u64 t_read(struct t_env *t, u32 ctx, u16 set, u16 num);
void t_load_self(struct t_env *t, u32 ctx);	/* the thread on t->vcpu */
void t_load_sys(struct t_env *t, u32 ctx);	/* system-wide on t->vcpu */
/* load @ctx for the thread on vCPU 0 (t->vcpu becomes 0) and start it */
void t_go(struct t_env *t, u32 ctx);
/* create set @id with @flags and @timeout; returns the effective timeout */
u64 t_set(struct t_env *t, u32 ctx, u16 id, u32 flags, u64 timeout);
void t_info(struct t_env *t, u32 ctx, u16 id, pfarg_setinfo_t *info);
/* set_runs of set @id, as getinfo reports it */
u64 t_runs(struct t_env *t, u32 ctx, u16 id);
/* messages waiting on @ctx (reads them all; up to @max into @out) */
u32 t_drain_msgs(struct t_env *t, u32 ctx, pfarg_msg_t *out, u32 max);

/* sampling buffers: guest page @i of T_SMPL_GPA's, filled with T_SMPL_FILL */
#define T_SMPL_FILL		0xa5
u64 t_smpl_page_gpa(unsigned int i);
void t_smpl_fill(struct t_env *t, unsigned int first, unsigned int n);
/* a context with the default format, its buffer registered at page 0 */
u32 t_smpl_ctx(struct t_env *t, u32 flags, u64 buf_size);

struct pfm_engine_stats t_stats(struct t_env *t);

/*
 * The last vector call stopped at entry @index (the header's err_index),
 * and that entry's RETFL bits (of its @flags) are @retfl
 */
void t_assert_stopped_at(struct t_env *t, u32 index, u32 flags, u32 retfl);

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

/* a cmocka test with the default fixture */
#define T_TEST(f)	cmocka_unit_test_setup_teardown(f, t_setup, t_teardown)
#define T_ENV(state)	((struct t_env *)*(state))

/*
 * A test (listed with T_TEST) whose body runs with @t, the default
 * environment, and @ctx, a context of @flags created in it:
 *	T_CTX_TEST(test_name, 0)
 *	{
 *		... t, ctx ...
 *	}
 */
#define T_CTX_TEST(name, flags)						\
	static void name##_body(struct t_env *t, u32 ctx);		\
	static void name(void **state)					\
	{								\
		struct t_env *t = T_ENV(state);				\
									\
		name##_body(t, t_ctx(t, flags));			\
	}								\
	static void name##_body(struct t_env *t, u32 ctx)

#endif /* _T_ENV_H */
