// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon's contexts: created (with the default sampling format's buffer
 * for --smpl-period), programmed with every event set, loaded, read. A
 * host's refusal of a register is told by its cause.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/pv_perfmon.h>

#include "pfmon.h"

static const char *event_name(int set, int pmd, bool pmc)
{
	for (int i = 0; i < sets[set].n; i++) {
		const struct event *e = &sets[set].ev[i];

		if (pmc ? e->pmc == pmd : (e->vpmd ? e->vpmd == pmd : e->pmc == pmd))
			return e->name;
	}
	return "?";
}

/*
 * A call that opens the host's counters (a load, a start on another set)
 * fails with EOPNOTSUPP for one cause only: the host's PMU is KVM's
 * mediated vPMU's, as PVPFM_REG_RETFL_HOST_MEDIATED says of a register.
 */
#define HOST_MEDIATED_WHY \
	"the host's PMU belongs to a VM with KVM's mediated vPMU while that VM runs; the host's operator chooses between the two (kvm_intel or kvm_amd enable_mediated_pmu)"

const char *load_strerror(int err)
{
	return err == EOPNOTSUPP ? HOST_MEDIATED_WHY : strerror(err);
}

static void explain(const char *what, int set, int reg, uint32_t flags,
		    bool pmc, int err)
{
	const char *ev = event_name(set, reg, pmc);

	if ((flags & PFM_REG_RETFL_NOTAVAIL) &&
	    (flags & PVPFM_REG_RETFL_HOST_MEDIATED))
		die("event %s (set %d, %s%d): the host cannot back it now (PFM_REG_RETFL_NOTAVAIL, PVPFM_REG_RETFL_HOST_MEDIATED): %s",
		    ev, set, pmc ? "PMC" : "PMD", reg, HOST_MEDIATED_WHY);
	if (flags & PFM_REG_RETFL_NOTAVAIL)
		die("event %s (set %d, %s%d): the host cannot back it (PFM_REG_RETFL_NOTAVAIL): no hardware PMU or event map entry for it on the host",
		    ev, set, pmc ? "PMC" : "PMD", reg);
	if (flags & PFM_REG_RETFL_EINVAL)
		die("event %s (set %d, %s%d): refused as invalid by the host",
		    ev, set, pmc ? "PMC" : "PMD", reg);
	die("%s: %s", what, strerror(err));
}

/* program every set on @fd, or die */
void ctx_program(int fd)
{
	pfarg_setdesc_t sd[MAX_SETS];
	pfarg_pmc_t pc[MAX_EVS];
	pfarg_pmd_t pd[MAX_EVS];

	memset(sd, 0, sizeof(sd));
	for (int i = 0; i < nsets; i++) {
		sd[i].set_id = i;
		if (nsets > 1) {
			sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
			sd[i].set_timeout = opts.switch_timeout;
		}
	}
	if (nsets > 1 && pfm_create_evtsets(fd, sd, nsets))
		die("creating %d event sets: %s%s", nsets, strerror(errno),
		    errno == EINVAL || errno == ENOSPC ?
		    " (over the host's max_sets?)" : "");
	for (int s = 0; s < nsets; s++) {
		int npc = 0, npd = 0, pc_ev[MAX_EVS];

		memset(pc, 0, sizeof(pc));
		memset(pd, 0, sizeof(pd));
		for (int i = 0; i < sets[s].n; i++) {
			const struct event *e = &sets[s].ev[i];

			if (!e->vpmd) {
				pc[npc].reg_num = e->pmc;
				pc[npc].reg_set = s;
				pc[npc].reg_value = e->pmc_value;
				pc_ev[npc++] = i;
			}
			pd[npd].reg_num = e->vpmd ? e->vpmd : e->pmc;
			pd[npd].reg_set = s;
			if (opts.smpl_period && s == 0 && i == 0) {
				/*
				 * the sampling PMD: overflows every period,
				 * notifies when the buffer is full (pfmon
				 * drains it and restarts; without the flag
				 * the buffer would saturate)
				 */
				pd[npd].reg_flags = PFM_REGFL_OVFL_NOTIFY;
				pd[npd].reg_value = -opts.smpl_period;
				pd[npd].reg_short_reset = -opts.smpl_period;
				pd[npd].reg_long_reset = -opts.smpl_period;
				if (opts.smpl_random_mask) {
					pd[npd].reg_flags |= PFM_REGFL_RANDOM;
					pd[npd].reg_random_mask =
						opts.smpl_random_mask;
					pd[npd].reg_random_seed =
						opts.smpl_random_seed;
				}
			}
			npd++;
		}
		for (int i = 0; opts.verbose && i < sets[s].n; i++) {
			const struct event *e = &sets[s].ev[i];

			if (e->vpmd)
				fprintf(stderr, "pfmon: set %d: %s: PMD%d (virtual)\n",
					s, e->name, e->vpmd);
			else
				fprintf(stderr, "pfmon: set %d: %s: PMC%d=%#llx PMD%d\n",
					s, e->name, e->pmc,
					(unsigned long long)e->pmc_value, e->pmc);
		}
		if (npc && pfm_write_pmcs(fd, pc, npc)) {
			int err = errno;

			for (int i = 0; i < npc; i++)
				if (PFM_REG_HAS_ERROR(pc[i].reg_flags))
					explain("writing PMCs", s, pc[i].reg_num,
						pc[i].reg_flags, true, err);
			die("writing PMCs of set %d: %s", s, strerror(err));
		}
		for (int i = 0; i < npc; i++)
			sets[s].ev[pc_ev[i]].emulated =
				pc[i].reg_flags & PVPFM_REG_RETFL_EMULATED;
		if (npd && pfm_write_pmds(fd, pd, npd)) {
			int err = errno;

			for (int i = 0; i < npd; i++)
				if (PFM_REG_HAS_ERROR(pd[i].reg_flags))
					explain("writing PMDs", s, pd[i].reg_num,
						pd[i].reg_flags, false, err);
			die("writing PMDs of set %d: %s", s, strerror(err));
		}
	}
}

int ctx_create_or_why(uint32_t flags, char *why, size_t len)
{
	pfm_dfl_smpl_arg_t arg;
	pfarg_ctx_t ctx;
	char group[32];
	int fd, err;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	memset(&arg, 0, sizeof(arg));
	arg.buf_size = opts.smpl_buf_size;
	if (opts.smpl_buf_size)
		fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg,
					sizeof(arg));
	else
		fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd >= 0) {
		/* the command never gets the context's fd */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
	err = errno;
	if (opts.smpl_buf_size && err == ENOMEM)
		snprintf(why, len, "no room for a %zu-byte sampling buffer (controls/smpl_buffer_mem_max, RLIMIT_MEMLOCK, the host's max_smpl_buf)",
			 opts.smpl_buf_size);
	else if (opts.smpl_buf_size && (err == EINVAL || err == EOPNOTSUPP))
		snprintf(why, len, "the host offers no \"default\" sampling format: %s",
			 strerror(err));
	else if (err == ENOSYS || err == ENOENT)
		snprintf(why, len, "no /dev/perfmon2: load perfmon2.ko in a guest with -device pv-perfmon");
	else if (err == EPERM || err == EACCES) {
		const char *ctl = flags & PFM_FL_SYSTEM_WIDE ? "sys_group" :
				  "task_group";
		char path[32];

		snprintf(path, sizeof(path), "controls/%s", ctl);
		if (sysfs_read(path, group, sizeof(group)))
			strcpy(group, "?");
		snprintf(why, len, "permission denied: %s monitoring needs group %s (" SYSFS "/%s) or CAP_SYS_ADMIN",
			 flags & PFM_FL_SYSTEM_WIDE ? "system-wide" : "per-thread",
			 group, path);
	} else if (err == EMFILE || err == ENFILE || err == ENOSPC)
		snprintf(why, len, "creating a context: %s (controls/max_ctx_per_user, the host's max_contexts, RLIMIT_NOFILE)",
			 strerror(err));
	else
		snprintf(why, len, "creating a context: %s", strerror(err));
	errno = err;
	return -1;
}

int ctx_create(uint32_t flags)
{
	char why[256];
	int fd = ctx_create_or_why(flags, why, sizeof(why));

	if (fd < 0)
		die("%s", why);
	return fd;
}

int ctx_load(int fd, uint32_t pid)
{
	pfarg_load_t ld;

	memset(&ld, 0, sizeof(ld));
	ld.load_pid = pid;
	return pfm_load_context(fd, &ld);
}


void ctx_read(int fd, struct reading *r)
{
	pfarg_setinfo_t si[MAX_SETS];
	pfarg_pmd_t pd[MAX_EVS];

	memset(r, 0, sizeof(*r));
	r->t = since_start();
	memset(si, 0, sizeof(si));
	for (int s = 0; s < nsets; s++)
		si[s].set_id = s;
	if (pfm_getinfo_evtsets(fd, si, nsets))
		die("getinfo: %s", strerror(errno));
	for (int s = 0; s < nsets; s++) {
		struct set_reading *c = &r->set[s];
		int n = sets[s].n;

		c->runs = si[s].set_runs;
		c->act_ns = si[s].set_act_duration;
		c->host_enabled_ns =
			si[s].set_reserved3[PVPFM_SETINFO_HOST_ENABLED];
		c->host_running_ns =
			si[s].set_reserved3[PVPFM_SETINFO_HOST_RUNNING];
		c->ovfls_lost = si[s].set_reserved3[PVPFM_SETINFO_OVFLS_LOST];
		c->host_throttles =
			si[s].set_reserved3[PVPFM_SETINFO_HOST_THROTTLES];
		c->periods_raised =
			si[s].set_reserved3[PVPFM_SETINFO_PERIODS_RAISED];
		r->total_act_ns += c->act_ns;
		memset(pd, 0, sizeof(pd));
		for (int i = 0; i < n; i++) {
			const struct event *e = &sets[s].ev[i];

			pd[i].reg_num = e->vpmd ? e->vpmd : e->pmc;
			pd[i].reg_set = s;
		}
		if (n && pfm_read_pmds(fd, pd, n))
			die("reading set %d: %s", s, strerror(errno));
		for (int i = 0; i < n; i++)
			c->raw[i] = pd[i].reg_value;
	}
}

void final_report(int fd, const struct smpl_ctx *sc, const char *target)
{
	struct reading r;

	smpl_read(fd, sc, &r);
	print_counts(target, &r, NULL);
	warn_host_limits(target, &r);
}

/* @r's figures added to @sum's: a total of tasks or CPUs */
void reading_add(struct reading *sum, const struct reading *r)
{
	sum->total_act_ns += r->total_act_ns;
	for (int s = 0; s < nsets; s++) {
		struct set_reading *a = &sum->set[s];
		const struct set_reading *b = &r->set[s];

		a->runs += b->runs;
		a->act_ns += b->act_ns;
		a->host_enabled_ns += b->host_enabled_ns;
		a->host_running_ns += b->host_running_ns;
		a->ovfls_lost += b->ovfls_lost;
		a->host_throttles += b->host_throttles;
		a->periods_raised += b->periods_raised;
		for (int e = 0; e < sets[s].n; e++)
			a->raw[e] += b->raw[e];
	}
}
