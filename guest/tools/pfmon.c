// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon: count events of a command (or of CPUs) with perfmon2 in a
 * kvm-perfmon guest, through libperfmon2's twelve calls. `pfmon --help`
 * lists the options; guest/tools/README.md is the manual.
 *
 * Events (pfmon_events.c): the hypervisor's virtual PMDs (vcpu_run_ns,
 * vm_exits, ...) and every event of the personality's CPU model by its
 * libpfm4 name. Each -e is an event set; with more than one set the sets
 * are time-switched (--switch-timeout, default 10 ms) and each count is
 * printed scaled to the whole run (pfmon_output.c). --smpl-period N
 * samples the command every N occurrences of the first event of set 0
 * (default sampling format, the buffer mmap()ed) and prints the samples
 * by function of the command's ELF symbols.
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
#include <time.h>
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

#include "pfmon.h"

#define PFMON_VERSION	"2.0"
#define MAX_CPUS	64
#define DFL_TIMEOUT_NS	10000000ULL
/*
 * --smpl-period's buffer: thousands of one-PMD entries between two
 * notifications, and a sixteenth of the host's default per-buffer limit
 */
#define DFL_SMPL_BUF_SIZE	(256 * 1024)
/* -I: perf stat's lower bound; below it the calls themselves would show */
#define MIN_INTERVAL_MS	10

struct set sets[MAX_SETS];
int nsets;
FILE *out;
enum out_fmt out_fmt = OUT_TEXT;
const char *csv_sep;
static size_t smpl_buf_size;	/* 0: counting only */
static uint64_t smpl_period;
static uint64_t smpl_count;	/* samples taken */
static bool verbose;		/* -v: the registers each event takes */

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pfmon: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(PFMON_EXIT_FAIL);
}

int sysfs_read(const char *rel, char *buf, size_t size)
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

/* a whole number in @arg for option @opt, or dies */
static uint64_t parse_u64(const char *opt, const char *arg, uint64_t min,
			  uint64_t max)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
		die("%s: want a whole number from %llu to %llu, not '%s'", opt,
		    (unsigned long long)min, (unsigned long long)max, arg);
	return v;
}

static void add_events(struct set *s, int setid, char *list,
		       unsigned int plm)
{
	char *tok, *save = NULL;

	if (!*list || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		die("set %d: empty event name in '%s'", setid, list);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct event *e;

		if (s->n == MAX_EVS)
			die("set %d: more than %d events", setid, MAX_EVS);
		e = &s->ev[s->n];
		event_parse(tok, plm, setid, e);
		for (int i = 0; i < s->n; i++)
			if (!strcmp(s->ev[i].name, e->name))
				die("set %d: event %s given twice", setid, tok);
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
			die("%d hardware events for %d counters: split them into event sets (one -e per set; the sets are time-switched)",
			    sets[i].nhw, counters);
		die("set %d: %d hardware events for %d counters: move some into another -e",
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
				pc[npc].reg_value = e->pmc_value;
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
		for (int i = 0; verbose && i < sets[s].n; i++) {
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
	if (fd >= 0) {
		/* the command never gets the context's fd */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
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
}

static int load(int fd, uint32_t pid)
{
	pfarg_load_t ld;

	memset(&ld, 0, sizeof(ld));
	ld.load_pid = pid;
	return pfm_load_context(fd, &ld);
}

static struct timespec t_start;
static sigset_t orig_mask;	/* pfmon's signal mask at start */

static double since_start(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t_start.tv_sec) +
	       (now.tv_nsec - t_start.tv_nsec) / 1e9;
}

/* every set's PMDs and getinfo, into @r */
static void read_counts(int fd, struct reading *r)
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
		/* sampling PMD: periods done plus the last partial one */
		if (smpl_period && s == 0)
			c->raw[0] = smpl_count * smpl_period +
				    (c->raw[0] + smpl_period);
	}
}

static void final_report(int fd, const char *target)
{
	struct reading r;

	read_counts(fd, &r);
	print_counts(target, &r, NULL);
	warn_starved(target, &r);
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
		char c;

		if (sscanf(tok, "%d-%d%c", &a, &b, &c) == 2) {
		} else if (sscanf(tok, "%d%c", &a, &c) == 1) {
			b = a;
		} else {
			die("--cpu-list: bad element '%s' in '%s' (want N or N-M, comma-separated)",
			    tok, l);
		}
		if (a < 0 || b < a || b >= CPU_SETSIZE)
			die("--cpu-list: bad range '%s'", tok);
		for (int cpu = a; cpu <= b; cpu++) {
			if (n == MAX_CPUS)
				die("--cpu-list: more than %d CPUs", MAX_CPUS);
			cpus[n++] = cpu;
		}
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

/* the command's status as a shell gives it */
static int status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fprintf(stderr, "pfmon: command killed by signal %d\n", WTERMSIG(st));
	return 128 + WTERMSIG(st);
}

static int wait_cmd(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	return status_of(st);
}

/*
 * fork the command; with @fd, the child loads the context on itself and
 * starts it, then execs (self-monitoring: the context follows the thread
 * through exec). Its exec failure is pfmon's 126 or 127, like a shell's.
 */
static pid_t spawn(char **argv, int fd)
{
	int pfd[2], err;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		/* the command gets pfmon's signal mask of before -I's SIGCHLD */
		sigprocmask(SIG_SETMASK, &orig_mask, NULL);
		if (fd >= 0) {
			if (load(fd, gettid_())) {
				fprintf(stderr, "pfmon: loading the context on the command: %s\n",
					strerror(errno));
				_exit(PFMON_EXIT_FAIL);
			}
			if (pfm_start(fd, NULL)) {
				fprintf(stderr, "pfmon: start: %s\n", strerror(errno));
				_exit(PFMON_EXIT_FAIL);
			}
		}
		execvp(argv[0], argv);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(PFMON_EXIT_FAIL);
		_exit(PFMON_EXIT_FAIL);
	}
	close(pfd[1]);
	if (read(pfd[0], &err, sizeof(err)) == sizeof(err)) {
		close(pfd[0]);
		waitpid(pid, NULL, 0);
		fprintf(stderr, "pfmon: cannot run %s: %s\n", argv[0],
			strerror(err));
		exit(err == ENOENT ? PFMON_EXIT_NOTFOUND : PFMON_EXIT_NOEXEC);
	}
	close(pfd[0]);
	return pid;
}

/*
 * Count the command: with -I, print the deltas every @interval_ms while
 * it runs, and the last partial interval when it ends (as perf stat -I,
 * no totals); else the totals at its end.
 */
static int count_cmd(char **argv, int fd, uint64_t interval_ms)
{
	struct reading prev, cur;
	struct timespec next;
	sigset_t chld;
	pid_t pid;
	int st;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (interval_ms)
		sigprocmask(SIG_BLOCK, &chld, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	pid = spawn(argv, fd);
	if (!interval_ms) {
		st = wait_cmd(pid);
		final_report(fd, NULL);
		return st;
	}
	memset(&prev, 0, sizeof(prev));
	print_interval_header();
	next = t_start;
	for (;;) {
		pid_t w;

		next.tv_nsec += (long)(interval_ms % 1000) * 1000000L;
		next.tv_sec += (time_t)(interval_ms / 1000);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		/* sleep to the next tick, or until the command ends */
		for (;;) {
			struct timespec now, left;
			int64_t ns;

			w = waitpid(pid, &st, WNOHANG);
			if (w == pid)
				break;
			if (w < 0 && errno != EINTR)
				die("waitpid: %s", strerror(errno));
			clock_gettime(CLOCK_MONOTONIC, &now);
			ns = (int64_t)(next.tv_sec - now.tv_sec) * 1000000000LL +
			     (next.tv_nsec - now.tv_nsec);
			if (ns <= 0)
				break;
			left.tv_sec = (time_t)(ns / 1000000000LL);
			left.tv_nsec = (long)(ns % 1000000000LL);
			/* SIGCHLD is blocked: its arrival ends the wait */
			sigtimedwait(&chld, NULL, &left);
		}
		read_counts(fd, &cur);
		print_counts(NULL, &cur, &prev);
		prev = cur;
		if (w == pid)
			break;
	}
	warn_starved(NULL, &cur);
	return status_of(st);
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

	fprintf(out, "\nsampling profile of %s: %llu samples, one every %llu %s",
	       smpl_exe, (unsigned long long)n,
	       (unsigned long long)smpl_period, sets[0].ev[0].name);
	if (overflows)
		fprintf(out, " (buffer filled %llu times)", (unsigned long long)overflows);
	fprintf(out, "\n");
	if (!n) {
		fflush(out);
		return;
	}
	qsort(syms, nsyms, sizeof(*syms), hits_cmp);
	fprintf(out, "  %8s %7s  %s\n", "samples", "%", "symbol");
	for (size_t i = 0; i < nsyms && syms[i].hits; i++)
		fprintf(out, "  %8llu %6.2f%%  %s\n", (unsigned long long)syms[i].hits,
		       100.0 * syms[i].hits / n, syms[i].name);
	if (hits_kernel)
		fprintf(out, "  %8llu %6.2f%%  [guest kernel]\n",
		       (unsigned long long)hits_kernel, 100.0 * hits_kernel / n);
	if (hits_other)
		fprintf(out, "  %8llu %6.2f%%  [other: shared libraries, vDSO, no symbol]\n",
		       (unsigned long long)hits_other, 100.0 * hits_other / n);
	fflush(out);
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
	final_report(fd, NULL);
	profile_report(overflows);
	munmap(buf, smpl_buf_size);
	return rc;
}

static void help(void)
{
	printf(
"usage: pfmon [OPTIONS] [--] COMMAND [ARG...]\n"
"       pfmon [OPTIONS] --system-wide [--cpu-list L] [-- COMMAND [ARG...]]\n"
"       pfmon [OPTIONS] --attach-task PID\n"
"       pfmon -l | --help | --version\n"
"\n"
"Count, or sample, events of a command (per thread), of CPUs or of a task\n"
"with perfmon2 in a guest with the pv-perfmon device (perfmon2.ko loaded).\n"
"\n"
"Events:\n"
"  -e, --events EV[,EV...]  an event set; each -e adds the next set (several\n"
"                           sets are time-switched and their counts scaled);\n"
"                           default: one set vcpu_run_ns,vm_exits\n"
"      --set EV[,EV...]     the same as -e (pfmon 1.x's name for a further set)\n"
"  EV is a virtual PMD (vcpu_run_ns, vm_exits, halt_exits, host_preempt,\n"
"  steal_ns, host_page_faults), an event of the personality's CPU model by its\n"
"  libpfm4 name (EVENT or EVENT:UMASK...), one of perf's names (cycles,\n"
"  instructions, branches, branch_misses, ...) or rHEX (raw PERFEVTSEL);\n"
"  EV:u, EV:k, EV:uk pick the privilege levels of one hardware event\n"
"  -u, --user-level         hardware events count at user level by default\n"
"  -k, --kernel-level       hardware events count at kernel level by default\n"
"                           (neither, or both: user and kernel)\n"
"      --switch-timeout NS  time each set is active before the next (default\n"
"                           10000000 ns)\n"
"  -l, --list, --show-events  list the events, each probed on the host\n"
"\n"
"Sampling:\n"
"      --smpl-period N      sample the command every N occurrences of the\n"
"                           first event of the first set; print a profile by\n"
"                           function of the command's ELF symbols\n"
"\n"
"What is monitored (default: COMMAND, its first thread only):\n"
"      --system-wide        every CPU (or --cpu-list), until COMMAND ends or\n"
"                           SIGINT\n"
"      --cpu-list L         CPUs for --system-wide: N,N-M,...\n"
"      --attach-task PID    an existing task (ptrace rights), until it exits\n"
"\n"
"Output (results; messages go to stderr):\n"
"  -o, --outfile FILE       results to FILE instead of stdout\n"
"  -x, --field-separator SEP  CSV: a header line, then one line per event\n"
"                           (time,target,set,event,count,raw,set_runs,\n"
"                           set_active_ns,set_pct,host_enabled_ns,\n"
"                           host_running_ns,host_pct,emulated)\n"
"      --json               one JSON object per line and event, same fields\n"
"  -I, --interval-print MS  print the counts of every MS ms (>= %d) of a\n"
"                           counted COMMAND, then those of the last part\n"
"  Per event: the count scaled to the whole run, its raw value, the set's\n"
"  share of the run and the share of the enabled time the host ran the\n"
"  set's counters; pfmon warns on stderr when the host starved them.\n"
"\n"
"  -v, --verbose            print each event's registers (PMC value) on stderr\n"
"  -h, --help               this text\n"
"  -V, --version            pfmon's, libpfm4's and perfmon2's versions\n"
"\n"
"Exit status: COMMAND's (128+N if signal N killed it; 0 for --attach-task\n"
"and -l); %d COMMAND not found, %d not executable; %d pfmon itself failed\n"
"(bad argument, no perfmon2, an event refused, ...).\n",
	       MIN_INTERVAL_MS, PFMON_EXIT_NOTFOUND, PFMON_EXIT_NOEXEC,
	       PFMON_EXIT_FAIL);
	exit(0);
}

static void version(void)
{
	char buf[64];

	printf("pfmon %s (kvm-perfmon), libpfm4 %s", PFMON_VERSION,
	       events_libpfm_version());
	if (!sysfs_read("version", buf, sizeof(buf)))
		printf(", perfmon2 interface %s", buf);
	printf("\n");
	exit(0);
}

static void usage_error(void)
{
	fprintf(stderr, "pfmon: see pfmon --help\n");
	exit(PFMON_EXIT_FAIL);
}

/* -x's separator: one character that no field can hold */
static const char *parse_sep(const char *arg)
{
	if (!strcmp(arg, "\\t"))
		return "\t";
	if (strlen(arg) != 1 || (!ispunct((unsigned char)arg[0]) &&
				 arg[0] != '\t') || strchr(":._-=+\"'%", arg[0]))
		die("-x: the separator is one punctuation character other than : . _ - = + \" ' %% (event names hold those), or \\t; not '%s'",
		    arg);
	return arg;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "set", required_argument, NULL, 's' },
		{ "user-level", no_argument, NULL, 'u' },
		{ "kernel-level", no_argument, NULL, 'k' },
		{ "switch-timeout", required_argument, NULL, 't' },
		{ "smpl-period", required_argument, NULL, 'p' },
		{ "system-wide", no_argument, NULL, 'w' },
		{ "cpu-list", required_argument, NULL, 'c' },
		{ "attach-task", required_argument, NULL, 'a' },
		{ "list", no_argument, NULL, 'l' },
		{ "show-events", no_argument, NULL, 'l' },
		{ "outfile", required_argument, NULL, 'o' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char *set_lists[MAX_SETS] = { NULL };
	uint64_t timeout = 0, interval_ms = 0;
	bool syswide = false, list = false, json = false;
	const char *cpulist = NULL, *outfile = NULL;
	unsigned int plm = 0;
	pid_t attach = 0;
	int opt, rc = 0;

	out = stdout;
	sigprocmask(SIG_SETMASK, NULL, &orig_mask);
	while ((opt = getopt_long(argc, argv, "+e:ukhlo:x:I:Vv", opts, NULL)) != -1) {
		switch (opt) {
		case 'e':
		case 's':
			if (nsets == MAX_SETS)
				die("at most %d event sets (-e)", MAX_SETS);
			set_lists[nsets++] = optarg;
			break;
		case 'u':
			plm |= PLM_USER;
			break;
		case 'k':
			plm |= PLM_KERNEL;
			break;
		case 't':
			timeout = parse_u64("--switch-timeout", optarg, 1,
					    UINT64_MAX >> 1);
			break;
		case 'p':
			smpl_period = parse_u64("--smpl-period", optarg, 1,
						(1ULL << 62) - 1);
			smpl_buf_size = DFL_SMPL_BUF_SIZE;
			break;
		case 'w':
			syswide = true;
			break;
		case 'c':
			cpulist = optarg;
			break;
		case 'a':
			attach = (pid_t)parse_u64("--attach-task", optarg, 1,
						  0x7fffffff);
			break;
		case 'l':
			list = true;
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'x':
			csv_sep = parse_sep(optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'I':
			interval_ms = parse_u64("-I", optarg, MIN_INTERVAL_MS,
						86400000);
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			help();
			break;
		case 'V':
			version();
			break;
		default:
			usage_error();
		}
	}
	if (!plm)
		plm = PLM_USER | PLM_KERNEL;
	if (csv_sep && json)
		die("-x (CSV) and --json exclude each other");
	out_fmt = json ? OUT_JSON : csv_sep ? OUT_CSV : OUT_TEXT;
	if (cpulist && !syswide)
		die("--cpu-list goes with --system-wide");
	if (attach && syswide)
		die("--attach-task and --system-wide exclude each other");
	if (smpl_period && (syswide || attach || optind >= argc))
		die("--smpl-period samples a command (pfmon --smpl-period N -- cmd)");
	if (smpl_period && out_fmt != OUT_TEXT)
		die("--smpl-period prints a text profile: -x and --json are for counting");
	if (interval_ms && (syswide || attach || smpl_period))
		die("-I prints the counts of a command counted per thread (not with --system-wide, --attach-task or --smpl-period)");
	if (list && optind < argc)
		die("-l lists the events; it runs no command");
	if (!list && !syswide && !attach && optind >= argc)
		die("no command to monitor (pfmon [options] -- cmd args; pfmon --help)");
	if (attach && optind < argc)
		die("--attach-task monitors a task that exists: no command");

	events_init();
	if (list) {
		int fd = create(0);

		list_events(fd);
		close(fd);
		return 0;
	}
	if (!nsets) {
		static char dfl[] = "vcpu_run_ns,vm_exits";

		set_lists[nsets++] = dfl;
	}
	for (int s = 0; s < nsets; s++)
		add_events(&sets[s], s, set_lists[s], plm);
	check_counters();
	if (nsets > 1 && !timeout)
		timeout = DFL_TIMEOUT_NS;
	if (nsets == 1 && timeout)
		fprintf(stderr, "pfmon: --switch-timeout with one event set: nothing to switch\n");
	if (outfile) {
		out = fopen(outfile, "we");
		if (!out)
			die("-o %s: %s", outfile, strerror(errno));
	}

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
		clock_gettime(CLOCK_MONOTONIC, &t_start);
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
			snprintf(title, sizeof(title), "cpu%d", cpus[i]);
			final_report(fds[i], title);
		}
		return rc;
	}

	int fd = create(0);

	program(fd, timeout);
	if (attach) {
		pfarg_msg_t msg;
		char title[32];
		int st;

		if (ptrace(PTRACE_ATTACH, attach, 0, 0))
			die("attaching to %d: %s%s", attach, strerror(errno),
			    errno == EPERM ?
			    " (need the right to ptrace it: same user and ptrace_scope, or CAP_SYS_PTRACE)" : "");
		if (waitpid(attach, &st, __WALL) < 0)
			die("waitpid %d: %s", attach, strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &t_start);
		if (load(fd, attach))
			die("loading the context on %d: %s", attach, strerror(errno));
		if (pfm_start(fd, NULL))
			die("start: %s", strerror(errno));
		ptrace(PTRACE_DETACH, attach, 0, 0);
		fprintf(stderr, "pfmon: monitoring task %d until it exits\n", attach);
		while (read(fd, &msg, sizeof(msg)) == sizeof(msg))
			if (msg.type == PFM_MSG_END)
				break;
		snprintf(title, sizeof(title), "task%d", attach);
		final_report(fd, title);
		return 0;
	}
	if (smpl_period) {
		clock_gettime(CLOCK_MONOTONIC, &t_start);
		rc = sample_cmd(argv + optind, fd);
	} else {
		rc = count_cmd(argv + optind, fd, interval_ms);
	}
	close(fd);
	if (out != stdout && fclose(out))
		die("-o %s: %s", outfile, strerror(errno));
	return rc;
}
