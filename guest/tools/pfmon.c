// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon: count events of a command (or of CPUs) with perfmon2 in a
 * kvm-perfmon guest, through libperfmon2's twelve calls.
 *
 *   pfmon -l
 *   pfmon [-e ev,...] [--set ev,...]... [--switch-timeout NS]
 *         [--smpl-period N] [--system-wide [--cpu-list L]]
 *         [--attach-task PID] [-- cmd args]
 *
 * Events: the hypervisor's virtual PMDs (vcpu_run_ns, vm_exits, ...) and
 * the hardware events of the host's personality (pmu_desc/model), or
 * rUUEE (hex unit mask UU, event select EE, as perf's raw events) for any other hardware event.
 * -e fills set 0; each --set adds the next set; with more than one set the
 * sets are time-switched (--switch-timeout, default 10 ms) and each count
 * is printed scaled to the whole run: count * total active / set active.
 * --smpl-period N samples the command every N occurrences of the first
 * event of set 0 (default sampling format, the buffer mmap()ed) and prints
 * the samples by function of the command's ELF symbols.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/pv_perfmon.h>

#define SYSFS		"/sys/kernel/perfmon"
#define MAX_SETS	16
#define MAX_EVS		32	/* per set */
#define MAX_CPUS	64
#define DFL_TIMEOUT_NS	10000000ULL
/*
 * --smpl-period's buffer: thousands of one-PMD entries between two
 * notifications, and a sixteenth of the host's default per-buffer limit
 */
#define DFL_SMPL_BUF_SIZE	(256 * 1024)

#define EVTSEL_USR	(1ULL << 16)
#define EVTSEL_OS	(1ULL << 17)
#define EVTSEL_INT	(1ULL << 20)
#define EVTSEL_EN	(1ULL << 22)
/* AMD event select bits 11:8: bits 19:16 of our code, 35:32 of the PMC */
#define CODE_EXT_SHIFT	16
#define EVTSEL_EXT_SHIFT	32
#define EVTSEL_EXT_MASK	0xfULL

struct evdesc {
	const char *name;
	int vpmd;		/* virtual PMD number, or 0: hardware */
	unsigned int code;	/* event select | unit mask << 8 */
	const char *desc;
};

static const struct evdesc vpmd_events[] = {
	{ "vcpu_run_ns", PVPFM_VPMD_VCPU_RUN_NS, 0, "ns the vCPU ran (hypervisor)" },
	{ "vm_exits", PVPFM_VPMD_VM_EXITS, 0, "VM exits" },
	{ "halt_exits", PVPFM_VPMD_HALT_EXITS, 0, "HLT exits" },
	{ "host_preempt", PVPFM_VPMD_HOST_PREEMPT, 0, "vCPU preempted on the host" },
	{ "steal_ns", PVPFM_VPMD_STEAL_NS, 0, "ns runnable on the host, not running" },
	{ "host_page_faults", PVPFM_VPMD_HOST_PAGE_FAULTS, 0, "host page faults on guest RAM" },
	{ NULL, 0, 0, NULL }
};

static const struct evdesc amd64_events[] = {
	{ "cycles", 0, 0x76, "CPU clocks not halted" },
	{ "instructions", 0, 0xc0, "retired instructions" },
	{ "branches", 0, 0xc2, "retired branch instructions" },
	{ "branch_misses", 0, 0xc3, "retired mispredicted branches" },
	{ "dcache_accesses", 0, 0x40, "data cache accesses" },
	{ "dcache_misses", 0, 0x41, "data cache misses" },
	{ NULL, 0, 0, NULL }
};

static const struct evdesc intel_arch_events[] = {
	{ "cycles", 0, 0x3c, "unhalted core cycles" },
	{ "instructions", 0, 0xc0, "instructions retired" },
	{ "ref_cycles", 0, 0x13c, "unhalted reference cycles" },
	{ "llc_references", 0, 0x4f2e, "last level cache references" },
	{ "llc_misses", 0, 0x412e, "last level cache misses" },
	{ "branches", 0, 0xc4, "branch instructions retired" },
	{ "branch_misses", 0, 0xc5, "branch mispredicts retired" },
	{ NULL, 0, 0, NULL }
};

struct event {
	char name[40];
	int vpmd;
	unsigned int code;
	int pmc;		/* hardware: PMC = PMD number; -1 virtual */
	bool emulated;		/* the host backs it with an admin's alias */
};

struct set {
	struct event ev[MAX_EVS];
	int n;
	int nhw;
};

static struct set sets[MAX_SETS];
static int nsets;
static char model[64];
static const struct evdesc *hw_table;
static const struct pvpfm_pers_desc *pers;	/* the device's personality */
static int counters;
static size_t smpl_buf_size;	/* 0: counting only */
static uint64_t smpl_period;
static uint64_t smpl_count;	/* samples taken */

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pfmon: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int sysfs_read(const char *rel, char *buf, size_t size)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), SYSFS "/%s", rel);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void need_perfmon(void)
{
	char buf[64];

	if (sysfs_read("version", buf, sizeof(buf)))
		die("no perfmon2 in this kernel (" SYSFS " missing): load perfmon2.ko (insmod perfmon2.ko) in a guest started with -device pv-perfmon");
	if (sysfs_read("pmu_desc/model", model, sizeof(model)))
		model[0] = '\0';
	if (!strncmp(model, "amd64", 5))
		hw_table = amd64_events;
	else if (!strcmp(model, "intel_arch"))
		hw_table = intel_arch_events;
	if (!sysfs_read("device/personality", buf, sizeof(buf)))
		pers = pvpfm_pers_desc(atoi(buf));
	if (!pers)
		return;
	counters = pers->counters;
	if (!sysfs_read("device/counters", buf, sizeof(buf)))
		counters = atoi(buf);
	if (counters < 0 || counters > pers->counters_max)
		counters = pers->counters_max;
}

static uint64_t pmc_value(unsigned int code)
{
	uint64_t ev = code & 0xff, umask = (code >> 8) & 0xff;
	uint64_t v = ev | umask << 8 | EVTSEL_USR | EVTSEL_OS | EVTSEL_INT |
		     EVTSEL_EN;

	if (pers && pers->ext_event)
		v |= ((code >> CODE_EXT_SHIFT) & EVTSEL_EXT_MASK) <<
		     EVTSEL_EXT_SHIFT;
	return v;
}

static bool lookup(const char *name, struct event *e)
{
	const struct evdesc *d;
	char *end;

	for (d = vpmd_events; d->name; d++)
		if (!strcmp(d->name, name))
			goto found;
	for (d = hw_table; d && d->name; d++)
		if (!strcmp(d->name, name))
			goto found;
	if (name[0] == 'r' && isxdigit((unsigned char)name[1]) && hw_table) {
		unsigned long code = strtoul(name + 1, &end, 16);

		if (*end || code > 0xffff)
			return false;
		/* perf's raw form: unit mask << 8 | event select */
		snprintf(e->name, sizeof(e->name), "%s", name);
		e->vpmd = 0;
		e->code = (unsigned int)code;
		return true;
	}
	return false;
found:
	snprintf(e->name, sizeof(e->name), "%s", d->name);
	e->vpmd = d->vpmd;
	e->code = d->code;
	return true;
}

static void add_events(struct set *s, int setid, char *list)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct event *e;

		if (s->n == MAX_EVS)
			die("set %d: more than %d events", setid, MAX_EVS);
		e = &s->ev[s->n];
		if (!lookup(tok, e)) {
			if (!hw_table && tok[0] != 'v')
				die("unknown event '%s' (PMU model '%s' has no hardware event table here; pfmon -l lists the events)",
				    tok, model);
			die("unknown event '%s' (pfmon -l lists the events)", tok);
		}
		for (int i = 0; i < s->n; i++)
			if (!strcmp(s->ev[i].name, e->name))
				die("set %d: event %s given twice", setid, tok);
		e->pmc = -1;
		if (!e->vpmd)
			e->pmc = s->nhw++;
		s->n++;
	}
}

static void check_counters(void)
{
	for (int i = 0; i < nsets; i++) {
		if (sets[i].nhw <= counters)
			continue;
		if (nsets == 1)
			die("%d hardware events for %d counters: split them into event sets (--set ev,... ; the sets are time-switched)",
			    sets[i].nhw, counters);
		die("set %d: %d hardware events for %d counters: move some into another --set",
		    i, sets[i].nhw, counters);
	}
}

static const char *event_name(int set, int pmd, bool pmc)
{
	for (int i = 0; i < sets[set].n; i++) {
		const struct event *e = &sets[set].ev[i];

		if (pmc ? e->pmc == pmd : (e->vpmd ? e->vpmd == pmd : e->pmc == pmd))
			return e->name;
	}
	return "?";
}

static void explain(const char *what, int set, int reg, uint32_t flags,
		    bool pmc, int err)
{
	const char *ev = event_name(set, reg, pmc);

	if (flags & PFM_REG_RETFL_NOTAVAIL)
		die("event %s (set %d, %s%d): the host cannot back it (PFM_REG_RETFL_NOTAVAIL): no hardware PMU or event map entry for it on the host",
		    ev, set, pmc ? "PMC" : "PMD", reg);
	if (flags & PFM_REG_RETFL_EINVAL)
		die("event %s (set %d, %s%d): refused as invalid by the host",
		    ev, set, pmc ? "PMC" : "PMD", reg);
	die("%s: %s", what, strerror(err));
}

/* program every set on @fd; 0 or dies */
static void program(int fd, uint64_t timeout)
{
	pfarg_setdesc_t sd[MAX_SETS];
	pfarg_pmc_t pc[MAX_EVS];
	pfarg_pmd_t pd[MAX_EVS];

	memset(sd, 0, sizeof(sd));
	for (int i = 0; i < nsets; i++) {
		sd[i].set_id = i;
		if (nsets > 1) {
			sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
			sd[i].set_timeout = timeout;
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
				pc[npc].reg_value = pmc_value(e->code);
				pc_ev[npc++] = i;
			}
			pd[npd].reg_num = e->vpmd ? e->vpmd : e->pmc;
			pd[npd].reg_set = s;
			if (smpl_period && s == 0 && i == 0) {
				/* the sampling PMD: overflows every period */
				pd[npd].reg_value = -smpl_period;
				pd[npd].reg_short_reset = -smpl_period;
				pd[npd].reg_long_reset = -smpl_period;
			}
			npd++;
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


static int create(uint32_t flags)
{
	pfm_dfl_smpl_arg_t arg;
	pfarg_ctx_t ctx;
	char buf[32];
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	memset(&arg, 0, sizeof(arg));
	arg.buf_size = smpl_buf_size;
	if (smpl_buf_size)
		fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg,
					sizeof(arg));
	else
		fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd >= 0)
		return fd;
	if (smpl_buf_size && errno == ENOMEM)
		die("no room for a %zu-byte sampling buffer (controls/smpl_buffer_mem_max, RLIMIT_MEMLOCK, the host's max_smpl_buf)",
		    smpl_buf_size);
	if (smpl_buf_size && (errno == EINVAL || errno == EOPNOTSUPP))
		die("the host offers no \"default\" sampling format: %s",
		    strerror(errno));
	if (errno == ENOSYS || errno == ENOENT)
		die("no /dev/perfmon2: load perfmon2.ko in a guest with -device pv-perfmon");
	if (errno == EPERM || errno == EACCES) {
		const char *ctl = flags & PFM_FL_SYSTEM_WIDE ? "sys_group" :
				  "task_group";

		if (sysfs_read(flags & PFM_FL_SYSTEM_WIDE ?
			       "controls/sys_group" : "controls/task_group",
			       buf, sizeof(buf)))
			strcpy(buf, "?");
		die("permission denied: %s monitoring needs group %s (" SYSFS "/controls/%s) or CAP_SYS_ADMIN",
		    flags & PFM_FL_SYSTEM_WIDE ? "system-wide" : "per-thread",
		    buf, ctl);
	}
	die("creating a context: %s", strerror(errno));
	return -1;
}

static int load(int fd, uint32_t pid)
{
	pfarg_load_t ld;

	memset(&ld, 0, sizeof(ld));
	ld.load_pid = pid;
	return pfm_load_context(fd, &ld);
}

static char *commas(uint64_t v, char *buf)
{
	char tmp[32];
	int n, j = 0;

	n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

static void report(int fd, const char *title)
{
	pfarg_setinfo_t si[MAX_SETS];
	pfarg_pmd_t pd[MAX_EVS];
	uint64_t total = 0;
	char a[32], b[32];

	memset(si, 0, sizeof(si));
	for (int s = 0; s < nsets; s++)
		si[s].set_id = s;
	if (pfm_getinfo_evtsets(fd, si, nsets))
		die("getinfo: %s", strerror(errno));
	for (int s = 0; s < nsets; s++)
		total += si[s].set_act_duration;
	if (title)
		printf("%s\n", title);
	for (int s = 0; s < nsets; s++) {
		int n = sets[s].n;

		memset(pd, 0, sizeof(pd));
		for (int i = 0; i < n; i++) {
			const struct event *e = &sets[s].ev[i];

			pd[i].reg_num = e->vpmd ? e->vpmd : e->pmc;
			pd[i].reg_set = s;
		}
		if (n && pfm_read_pmds(fd, pd, n))
			die("reading set %d: %s", s, strerror(errno));
		if (nsets > 1)
			printf("set %d: %llu runs, active %.3f ms of %.3f ms (%.1f%%)\n",
			       s, (unsigned long long)si[s].set_runs,
			       si[s].set_act_duration / 1e6, total / 1e6,
			       total ? 100.0 * si[s].set_act_duration / total : 0);
		for (int i = 0; i < n; i++) {
			uint64_t raw = pd[i].reg_value, v = raw;

			/* sampling PMD: periods done plus the last partial one */
			if (smpl_period && s == 0 && i == 0)
				v = raw = smpl_count * smpl_period +
					  (raw + smpl_period);

			if (nsets > 1 && si[s].set_act_duration)
				v = (uint64_t)((long double)raw * total /
					       si[s].set_act_duration);
			const char *emul = sets[s].ev[i].emulated ?
					   " [emulated]" : "";

			if (nsets > 1)
				printf("  %20s %-18s (raw %s)%s\n", commas(v, a),
				       sets[s].ev[i].name, commas(raw, b), emul);
			else
				printf("  %20s %s%s\n", commas(v, a),
				       sets[s].ev[i].name, emul);
		}
	}
	if (nsets == 1)
		printf("  active %.3f ms\n", total / 1e6);
	fflush(stdout);
}

static void list_events(void)
{
	const struct evdesc *d;
	char buf[64];
	int fd;

	fd = create(0);
	printf("PMU model: %s, %d counters%s\n", model[0] ? model : "?",
	       counters,
	       !sysfs_read("device/features", buf, sizeof(buf)) &&
	       (strtoul(buf, NULL, 0) & PVPFM_F_EVENT_MAP) ?
	       "; the host aliases some events (event map)" : "");
	printf("virtual PMDs (hypervisor events):\n");
	for (d = vpmd_events; d->name; d++) {
		pfarg_pmd_t pd;

		memset(&pd, 0, sizeof(pd));
		pd.reg_num = d->vpmd;
		if (pfm_write_pmds(fd, &pd, 1))
			printf("  %-18s PMD%d  %s [not available on this host]\n",
			       d->name, d->vpmd, d->desc);
		else
			printf("  %-18s PMD%d  %s\n", d->name, d->vpmd, d->desc);
	}
	printf("hardware events (%s):\n", model);
	for (d = hw_table; d && d->name; d++) {
		pfarg_pmc_t pc;

		memset(&pc, 0, sizeof(pc));
		pc.reg_value = pmc_value(d->code);
		if (pfm_write_pmcs(fd, &pc, 1)) {
			printf("  %-18s event %#05x  %s [not available: %s]\n",
			       d->name, d->code, d->desc,
			       pc.reg_flags & PFM_REG_RETFL_NOTAVAIL ?
			       "the host cannot back it" : strerror(errno));
			continue;
		}
		printf("  %-18s event %#05x  %s%s\n", d->name, d->code, d->desc,
		       pc.reg_flags & PVPFM_REG_RETFL_EMULATED ?
		       " [emulated: the host backs it with another event]" : "");
	}
	if (!hw_table)
		printf("  (no table for this model; use rUUEE)\n");
	printf("any other hardware event: rUUEE (hex unit mask UU, event select EE)\n");
	close(fd);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int parse_cpus(const char *l, int *cpus)
{
	int n = 0;
	char *copy = strdup(l), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int a, b;

		if (sscanf(tok, "%d-%d", &a, &b) == 2) {
		} else if (sscanf(tok, "%d", &a) == 1) {
			b = a;
		} else {
			die("bad --cpu-list '%s'", l);
		}
		for (int c = a; c <= b && n < MAX_CPUS; c++)
			cpus[n++] = c;
	}
	free(copy);
	return n;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int wait_cmd(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fprintf(stderr, "pfmon: command killed by signal %d\n", WTERMSIG(st));
	return 128 + WTERMSIG(st);
}

static pid_t spawn(char **argv, int fd)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe2(pfd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		if (fd >= 0) {
			/* self-monitoring: the context follows this thread through exec */
			if (load(fd, gettid_())) {
				fprintf(stderr, "pfmon: loading the context on the command: %s\n",
					strerror(errno));
				_exit(127);
			}
			if (pfm_start(fd, NULL)) {
				fprintf(stderr, "pfmon: start: %s\n", strerror(errno));
				_exit(127);
			}
			fcntl(fd, F_SETFD, FD_CLOEXEC);
		}
		execvp(argv[0], argv);
		c = 1;
		if (write(pfd[1], &c, 1) < 0)
			_exit(127);
		fprintf(stderr, "pfmon: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) == 1) {
		close(pfd[0]);
		wait_cmd(pid);
		exit(127);
	}
	close(pfd[0]);
	return pid;
}

/* --- the sampling profile: samples by symbol of the command's ELF --- */

struct sym {
	uint64_t addr, size;
	char *name;
	uint64_t hits;
};

static struct sym *syms;
static size_t nsyms;
static uint64_t load_bias;	/* PIE: where the command was mapped */
static uint64_t hits_kernel, hits_other;
static const char *smpl_exe;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* function symbols of @path's .symtab (else .dynsym); ET_DYN in *pie */
static void load_syms(const char *path, bool *pie)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	unsigned char *m;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;

	*pie = false;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "pfmon: %s: %s (no symbols)\n", path, strerror(errno));
		return;
	}
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED || st.st_size < (off_t)sizeof(*eh) ||
	    memcmp(m, ELFMAG, SELFMAG) || m[EI_CLASS] != ELFCLASS64) {
		fprintf(stderr, "pfmon: %s: not a 64-bit ELF file (no symbols)\n", path);
		return;
	}
	eh = (Elf64_Ehdr *)m;
	*pie = eh->e_type == ET_DYN;
	sh = (Elf64_Shdr *)(m + eh->e_shoff);
	for (int pass = 0; pass < 2 && !nsyms; pass++) {
		uint32_t want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		for (int i = 0; i < eh->e_shnum; i++) {
			Elf64_Sym *sy;
			const char *str;
			size_t n;

			if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum)
				continue;
			sy = (Elf64_Sym *)(m + sh[i].sh_offset);
			str = (const char *)(m + sh[sh[i].sh_link].sh_offset);
			n = sh[i].sh_size / sizeof(*sy);
			syms = calloc(n, sizeof(*syms));
			if (!syms)
				die("out of memory");
			for (size_t k = 0; k < n; k++) {
				if (ELF64_ST_TYPE(sy[k].st_info) != STT_FUNC ||
				    !sy[k].st_value)
					continue;
				syms[nsyms].addr = sy[k].st_value;
				syms[nsyms].size = sy[k].st_size;
				syms[nsyms].name = strdup(str + sy[k].st_name);
				nsyms++;
			}
		}
	}
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
	munmap(m, st.st_size);
}

/* PIE: the command's load address, from its first mapping of @exe */
static void find_bias(pid_t pid, const char *exe)
{
	char path[64], line[512];
	unsigned long lo, off;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');

		if (!name)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (sscanf(line, "%lx-%*x %*s %lx", &lo, &off) == 2 && off == 0 &&
		    !strcmp(name, exe)) {
			load_bias = lo;
			break;
		}
	}
	fclose(f);
}

static void hit(uint64_t ip)
{
	size_t lo = 0, hi = nsyms;

	smpl_count++;
	if (ip >= 0xffff800000000000ULL) {
		hits_kernel++;
		return;
	}
	ip -= load_bias;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip < syms[lo - 1].addr + (syms[lo - 1].size ?: 1)) {
		syms[lo - 1].hits++;
		return;
	}
	hits_other++;
}

/* every entry now in the buffer */
static void drain(const void *buf)
{
	const pfm_dfl_smpl_hdr_t *hdr = buf;
	const unsigned char *p = (const unsigned char *)buf + sizeof(*hdr);
	const unsigned char *end = (const unsigned char *)buf + hdr->hdr_buf_size;

	for (uint64_t i = 0; i < hdr->hdr_count; i++) {
		const pfm_dfl_smpl_entry_t *ent = (const void *)p;

		if (p + sizeof(*ent) > end)
			break;
		hit(ent->ip);
		p += sizeof(*ent);	/* no PMDs recorded with the entry */
	}
}

static int hits_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->hits < y->hits ? 1 : x->hits > y->hits ? -1 : 0;
}

static void profile_report(uint64_t overflows)
{
	uint64_t n = smpl_count;

	printf("\nsampling profile of %s: %llu samples, one every %llu %s",
	       smpl_exe, (unsigned long long)n,
	       (unsigned long long)smpl_period, sets[0].ev[0].name);
	if (overflows)
		printf(" (buffer filled %llu times)", (unsigned long long)overflows);
	printf("\n");
	if (!n) {
		fflush(stdout);
		return;
	}
	qsort(syms, nsyms, sizeof(*syms), hits_cmp);
	printf("  %8s %7s  %s\n", "samples", "%", "symbol");
	for (size_t i = 0; i < nsyms && syms[i].hits; i++)
		printf("  %8llu %6.2f%%  %s\n", (unsigned long long)syms[i].hits,
		       100.0 * syms[i].hits / n, syms[i].name);
	if (hits_kernel)
		printf("  %8llu %6.2f%%  [guest kernel]\n",
		       (unsigned long long)hits_kernel, 100.0 * hits_kernel / n);
	if (hits_other)
		printf("  %8llu %6.2f%%  [other: shared libraries, vDSO, no symbol]\n",
		       (unsigned long long)hits_other, 100.0 * hits_other / n);
	fflush(stdout);
}

static char *which(const char *cmd)
{
	static char path[4096];
	const char *env = getenv("PATH");
	char *copy, *dir, *save = NULL;

	if (strchr(cmd, '/'))
		return realpath(cmd, path) ? path : (char *)cmd;
	copy = strdup(env ? env : "/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/%s", dir, cmd);
		if (!access(path, X_OK)) {
			char *r = realpath(path, NULL);

			if (r) {
				snprintf(path, sizeof(path), "%s", r);
				free(r);
			}
			free(copy);
			return path;
		}
	}
	free(copy);
	return (char *)cmd;
}

/* run the command, sampling it; its status */
static int sample_cmd(char **argv, int fd)
{
	void *buf;
	bool pie, done = false;
	uint64_t overflows = 0;
	pid_t pid;
	int st, rc = 0;

	smpl_exe = which(argv[0]);
	load_syms(smpl_exe, &pie);
	buf = mmap(NULL, smpl_buf_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (buf == MAP_FAILED)
		die("mapping the sampling buffer: %s", strerror(errno));
	pid = spawn(argv, fd);
	if (pie)
		find_bias(pid, smpl_exe);
	while (!done) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		pfarg_msg_t msg;

		if (poll(&pfd, 1, 200) > 0 &&
		    read(fd, &msg, sizeof(msg)) == sizeof(msg)) {
			if (msg.type == PFM_MSG_OVFL) {
				/* buffer full: take it, restart (empties it) */
				drain(buf);
				overflows++;
				if (pfm_restart(fd))
					fprintf(stderr, "pfmon: restart: %s\n",
						strerror(errno));
			}
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			done = true;
			rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
	}
	drain(buf);
	report(fd, NULL);
	profile_report(overflows);
	munmap(buf, smpl_buf_size);
	return rc;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pfmon -l\n"
		"       pfmon [-e ev,...] [--set ev,...]... [--switch-timeout NS] [--smpl-period N]\n"
		"             [--system-wide [--cpu-list L]] [--attach-task PID] [-- cmd args]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "set", required_argument, NULL, 's' },
		{ "switch-timeout", required_argument, NULL, 't' },
		{ "smpl-period", required_argument, NULL, 'p' },
		{ "system-wide", no_argument, NULL, 'w' },
		{ "cpu-list", required_argument, NULL, 'c' },
		{ "attach-task", required_argument, NULL, 'a' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *set_lists[MAX_SETS] = { NULL };
	uint64_t timeout = 0;
	bool syswide = false, list = false;
	const char *cpulist = NULL;
	pid_t attach = 0;
	int opt, rc = 0;

	nsets = 1;
	while ((opt = getopt_long(argc, argv, "+e:lh", opts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			set_lists[0] = optarg;
			break;
		case 's':
			if (nsets == MAX_SETS)
				die("at most %d sets", MAX_SETS);
			set_lists[nsets++] = optarg;
			break;
		case 't':
			timeout = strtoull(optarg, NULL, 0);
			if (!timeout)
				die("--switch-timeout: want nanoseconds > 0");
			break;
		case 'p':
			smpl_period = strtoull(optarg, NULL, 0);
			if (!smpl_period || smpl_period >> 62)
				die("--smpl-period: want a period > 0");
			smpl_buf_size = DFL_SMPL_BUF_SIZE;
			break;
		case 'w':
			syswide = true;
			break;
		case 'c':
			cpulist = optarg;
			break;
		case 'a':
			attach = atoi(optarg);
			if (attach <= 0)
				die("--attach-task: bad pid '%s'", optarg);
			break;
		case 'l':
			list = true;
			break;
		default:
			usage();
		}
	}
	need_perfmon();
	if (list) {
		list_events();
		return 0;
	}
	if (!set_lists[0]) {
		static char dfl[] = "vcpu_run_ns,vm_exits";

		set_lists[0] = dfl;
	}
	for (int s = 0; s < nsets; s++)
		add_events(&sets[s], s, set_lists[s]);
	check_counters();
	if (nsets > 1 && !timeout)
		timeout = DFL_TIMEOUT_NS;
	if (nsets == 1 && timeout)
		fprintf(stderr, "pfmon: --switch-timeout without --set: one set, nothing to switch\n");
	if (cpulist && !syswide)
		die("--cpu-list goes with --system-wide");
	if (attach && syswide)
		die("--attach-task and --system-wide exclude each other");
	if (smpl_period && (syswide || attach || optind >= argc))
		die("--smpl-period samples a command (pfmon --smpl-period N -- cmd)");
	if (!syswide && !attach && optind >= argc)
		die("no command to monitor (pfmon [options] -- cmd args)");

	if (syswide) {
		int cpus[MAX_CPUS], fds[MAX_CPUS], n;
		cpu_set_t orig;
		char title[64];

		sched_getaffinity(0, sizeof(orig), &orig);
		if (cpulist) {
			n = parse_cpus(cpulist, cpus);
		} else {
			n = 0;
			for (int c = 0; c < CPU_SETSIZE && n < MAX_CPUS; c++)
				if (CPU_ISSET(c, &orig))
					cpus[n++] = c;
		}
		for (int i = 0; i < n; i++) {
			fds[i] = create(PFM_FL_SYSTEM_WIDE);
			program(fds[i], timeout);
			if (pin(cpus[i]))
				die("CPU %d: cannot run there: %s", cpus[i], strerror(errno));
			if (load(fds[i], cpus[i]))
				die("CPU %d: loading a system-wide context: %s%s", cpus[i],
				    strerror(errno), errno == EBUSY ?
				    " (a per-thread or system-wide context is in use there)" : "");
			if (pfm_start(fds[i], NULL))
				die("CPU %d: start: %s", cpus[i], strerror(errno));
		}
		sched_setaffinity(0, sizeof(orig), &orig);
		if (optind < argc) {
			rc = wait_cmd(spawn(argv + optind, -1));
		} else {
			sigset_t ss;
			int sig;

			fprintf(stderr, "pfmon: counting system-wide until SIGINT\n");
			sigemptyset(&ss);
			sigaddset(&ss, SIGINT);
			sigaddset(&ss, SIGTERM);
			sigprocmask(SIG_BLOCK, &ss, NULL);
			sigwait(&ss, &sig);
		}
		for (int i = 0; i < n; i++) {
			pin(cpus[i]);
			pfm_stop(fds[i]);
			snprintf(title, sizeof(title), "CPU %d:", cpus[i]);
			report(fds[i], title);
		}
		return rc;
	}

	int fd = create(0);

	program(fd, timeout);
	if (attach) {
		pfarg_msg_t msg;
		int st;

		if (ptrace(PTRACE_ATTACH, attach, 0, 0))
			die("attaching to %d: %s%s", attach, strerror(errno),
			    errno == EPERM ?
			    " (need the right to ptrace it: same user and ptrace_scope, or CAP_SYS_PTRACE)" : "");
		if (waitpid(attach, &st, __WALL) < 0)
			die("waitpid %d: %s", attach, strerror(errno));
		if (load(fd, attach))
			die("loading the context on %d: %s", attach, strerror(errno));
		if (pfm_start(fd, NULL))
			die("start: %s", strerror(errno));
		ptrace(PTRACE_DETACH, attach, 0, 0);
		fprintf(stderr, "pfmon: monitoring task %d until it exits\n", attach);
		while (read(fd, &msg, sizeof(msg)) == sizeof(msg))
			if (msg.type == PFM_MSG_END)
				break;
		report(fd, NULL);
		return 0;
	}
	if (smpl_period) {
		rc = sample_cmd(argv + optind, fd);
		close(fd);
		return rc;
	}
	rc = wait_cmd(spawn(argv + optind, fd));
	report(fd, NULL);
	close(fd);
	return rc;
}
