// SPDX-License-Identifier: GPL-2.0
/*
 * What libpfm-3.x programs do that perfmon2 v2.8x answered in its own way:
 *
 * restart   a program monitoring a child calls pfm_restart after the child
 *           exited: EBUSY, which such programs read as "the task
 *           terminated" (perfmon2's __pfm_restart on a ZOMBIE/UNLOADED
 *           context), as on a context never loaded
 * pmu_desc  a register table printer reads pmu_desc/pmcN/ and pmdN/: name,
 *           dfl_val, rsvd_msk, width, addr of every implemented register,
 *           the virtual PMDs included, matching pmu_desc/mappings; addr
 *           and width as v2.8x: the MSR and the counter's hardware width
 * top       v2.8x's files at the top of /sys/kernel/perfmon: the controls,
 *           the session counts, debug, mode and reset_stats
 * syscall   a binary on libpfm-3's own syscall wrappers reads the base in
 *           /sys/kernel/perfmon/syscall; every one of its twelve calls
 *           (base + 0..11) fails with ENOSYS
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

#define MAX_REGS	640
#define PFM3_NR_CALLS	12	/* pfm_create_context .. pfm_unload_context */

/* monitor a child, let it exit, then pfm_restart as libpfm-3 tools do */
static void restart_gone(void)
{
	const uint16_t pmds[] = { PVPFM_VPMD_VCPU_RUN_NS };
	int fd = -1, status;
	pid_t child;

	fd = t_create(0);
	if (fd < 0) {
		t_fail("pfm3: create a context", "%s", strerror(errno));
		return;
	}
	t_expect_err("pfm3: restart, never loaded: EBUSY", pfm_restart(fd),
		     EBUSY);
	child = t_stopped_child(10 * MS, 0, "pfm3: child ptrace-stopped");
	if (child < 0) {
		close(fd);
		return;
	}
	if (t_write_pmds(fd, pmds, 1, 0) ||
	    !t_expect_ok("pfm3: load on the child", t_load(fd, child, 0)) ||
	    !t_expect_ok("pfm3: start", pfm_start(fd, NULL)))
		goto kill;
	t_expect_err("pfm3: restart, child running, nothing notified: EBUSY",
		     pfm_restart(fd), EBUSY);
	ptrace(PTRACE_CONT, child, NULL, NULL);
	waitpid(child, &status, 0);
	t_check(WIFEXITED(status), "pfm3: child exited", "status %#x", status);
	/* a libpfm-3 monitor's loop: restart; EBUSY means it is over */
	t_expect_err("pfm3: restart after the child exited: EBUSY",
		     pfm_restart(fd), EBUSY);
	t_check_end_msg(fd, "pfm3: PFM_MSG_END queued");
	t_expect_err("pfm3: restart after reading PFM_MSG_END: EBUSY",
		     pfm_restart(fd), EBUSY);
	close(fd);
	return;
kill:
	t_kill_child(child);
	close(fd);
}

/* one file of pmu_desc/<dir>/: its first line, "" if unreadable */
static const char *reg_file(const char *dir, const char *file)
{
	static char buf[128];
	char rel[96];

	snprintf(rel, sizeof(rel), "pmu_desc/%s/%s", dir, file);
	if (t_sysfs_read(rel, buf, sizeof(buf)))
		buf[0] = '\0';
	return buf;
}

/* does pmu_desc/<dir>/ say what the mappings line @r says? */
static bool reg_matches(const struct t_reg *r, char *why, size_t size)
{
	char dir[16], want[32];
	const char *v;

	snprintf(dir, sizeof(dir), "%s%u", r->pmc ? "pmc" : "pmd", r->num);
	v = reg_file(dir, "name");
	if (strcmp(v, r->name)) {
		snprintf(why, size, "%s/name '%s', mappings '%s'", dir, v,
			 r->name);
		return false;
	}
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)r->dfl);
	v = reg_file(dir, "dfl_val");
	if (strcmp(v, want)) {
		snprintf(why, size, "%s/dfl_val '%s', want '%s'", dir, v, want);
		return false;
	}
	/* v2.8x: reserved bits 1; the mappings print them 0 */
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)~r->mask);
	v = reg_file(dir, "rsvd_msk");
	if (strcmp(v, want)) {
		snprintf(why, size, "%s/rsvd_msk '%s', want '%s'", dir, v, want);
		return false;
	}
	/* a virtual PMD stands for no register: addr 0, 64 bits */
	if (r->num >= PFM_FIRST_SW_PMD && (strcmp(reg_file(dir, "addr"), "0x0") ||
					   strcmp(reg_file(dir, "width"), "64"))) {
		snprintf(why, size, "%s/addr '%s', width '%s', want 0x0, 64",
			 dir, reg_file(dir, "addr"), reg_file(dir, "width"));
		return false;
	}
	return true;
}

/* the file @dir/@file of pmu_desc is @want */
static void reg_file_is(const char *dir, const char *file, const char *want)
{
	char name[96];

	snprintf(name, sizeof(name), "pfm3: pmu_desc/%s/%s is %s", dir, file,
		 want);
	t_check(!strcmp(reg_file(dir, file), want), name, "'%s'",
		reg_file(dir, file));
}

/* v2.8x's meaning of addr and width: the hardware's MSR and counter width */
static void pmu_desc_hardware(void)
{
	char model[64];

	if (!t_pmu_model(model, sizeof(model)) || strcmp(model, "amd64")) {
		t_skip("pfm3: pmu_desc addr and width of amd64", "model %s",
		       model);
		return;
	}
	reg_file_is("pmc0", "addr", "0xc0010000");
	reg_file_is("pmc3", "addr", "0xc0010003");
	reg_file_is("pmd0", "addr", "0xc0010004");
	reg_file_is("pmd3", "addr", "0xc0010007");
	reg_file_is("pmd0", "width", "48");
	reg_file_is("pmc0", "width", "64");
}

static const struct t_reg *find_reg(const struct t_reg *regs, int n, bool pmc,
				    unsigned int num)
{
	for (int i = 0; i < n; i++)
		if (regs[i].pmc == pmc && regs[i].num == num)
			return &regs[i];
	return NULL;
}

static void pmu_desc(void)
{
	static struct t_reg regs[MAX_REGS];
	const struct t_reg *r;
	char why[160] = "", path[96], name[256];
	unsigned int num;
	int n, i, dirs = 0, bad = -1;
	struct dirent *de;
	DIR *d;

	n = t_mappings(regs, MAX_REGS);
	if (!t_check(n > 0, "pfm3: pmu_desc/mappings read", "%d: %s", n,
		     strerror(errno)))
		return;

	/* the three a register table printer starts with */
	r = find_reg(regs, n, true, 0);
	if (r)
		t_check(!strcmp(reg_file("pmc0", "name"), r->name),
			"pfm3: pmu_desc/pmc0/name", "'%s', mappings '%s'",
			reg_file("pmc0", "name"), r->name);
	else
		t_skip("pfm3: pmu_desc/pmc0/name", "no PMC0 in the mappings");
	r = find_reg(regs, n, false, PVPFM_VPMD_VCPU_RUN_NS);
	if (t_check(r != NULL, "pfm3: virtual PMD256 in the mappings",
		    "missing"))
		t_check(reg_matches(r, why, sizeof(why)),
			"pfm3: pmu_desc/pmd256/ (virtual) matches the mappings",
			"%s", why);

	/* every register of the mappings, and no other directory */
	for (i = 0; i < n; i++)
		if (!reg_matches(&regs[i], why, sizeof(why))) {
			bad = i;
			break;
		}
	t_check(bad < 0, "pfm3: every pmu_desc/pmcN, pmdN matches the mappings",
		"%s", why);
	snprintf(path, sizeof(path), "%s/pmu_desc", T_SYSFS);
	d = opendir(path);
	if (!t_check(d != NULL, "pfm3: pmu_desc/ listed", "%s", strerror(errno)))
		return;
	bad = 0;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "pmc%u", &num) == 1 ||
		    sscanf(de->d_name, "pmd%u", &num) == 1) {
			dirs++;
			if (!find_reg(regs, n, de->d_name[2] == 'c', num) &&
			    !bad++)
				snprintf(name, sizeof(name), "%s", de->d_name);
		}
	}
	closedir(d);
	t_check(dirs == n && !bad,
		"pfm3: one pmu_desc directory per implemented register",
		"%d directories, %d mappings lines, %d unknown (%s)", dirs, n,
		bad, bad ? name : "-");
	t_check(t_pmu_model(name, sizeof(name)), "pfm3: pmu_desc/model kept",
		"%s", strerror(errno));
}

/* libpfm-3's own wrappers: syscall(base + k, ...) for the twelve calls */
static void syscall_base(void)
{
	long long base = t_sysfs_num("syscall", -1);
	pfarg_ctx_t ctx;
	int i, bad = -1, err = 0;
	long ret = 0;

	if (!t_check(base > 0 && base < 0x40000000,
		     "pfm3: /sys/kernel/perfmon/syscall gives a base",
		     "%lld", base))
		return;
	memset(&ctx, 0, sizeof(ctx));
	for (i = 0; i < PFM3_NR_CALLS; i++) {
		/* arguments as libpfm-3 passes them: fd or ctx, vector, count */
		errno = 0;
		ret = syscall(base + i, i ? 3L : (long)&ctx, (long)&ctx, 1L,
			      0L, 0L, 0L);
		if (ret != -1 || errno != ENOSYS) {
			bad = i;
			err = errno;
			break;
		}
	}
	t_check(bad < 0,
		"pfm3: the twelve libpfm-3 syscalls (base + 0..11) fail with ENOSYS",
		"base %lld + %d: returned %ld, errno %s", base, bad, ret,
		strerror(err));
}

/*
 * perfmon2 v2.8x's files at the top of /sys/kernel/perfmon: its controls
 * (the same as controls/), its session counts, debug, mode, reset_stats
 */
static void top_files(void)
{
	static const char *const same[] = {
		"task_group", "sys_group", "arg_mem_max",
		"smpl_buffer_mem_max", "smpl_buffer_mem_cur",
	};
	char a[64], b[64], ctl[64], name[96];
	long long tasks0, tasks1, tasks2;
	int fd;

	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		snprintf(ctl, sizeof(ctl), "controls/%s", same[i]);
		snprintf(name, sizeof(name), "pfm3: %s at the top, as controls/",
			 same[i]);
		t_check(!t_sysfs_read(same[i], a, sizeof(a)) &&
			!t_sysfs_read(ctl, b, sizeof(b)) && !strcmp(a, b), name,
			"'%s' and '%s'", a, b);
	}
	t_expect_ok("pfm3: mode 0 taken", t_sysfs_write("mode", "0"));
	t_expect_err("pfm3: mode 1 (expert) refused: EINVAL",
		     t_sysfs_write("mode", "1"), EINVAL);
	t_expect_ok("pfm3: debug written", t_sysfs_write("debug", "0"));
	t_expect_ok("pfm3: reset_stats written",
		    t_sysfs_write("reset_stats", "1"));
	t_check(t_sysfs_num("device/switch_errors", -1) == 0,
		"pfm3: reset_stats zeroes device/switch_errors", "%lld",
		t_sysfs_num("device/switch_errors", -1));

	tasks0 = t_sysfs_num("task_sessions_count", -1);
	fd = t_create(0);
	if (!t_expect_ok("pfm3: a per-thread context", fd))
		return;
	if (t_expect_ok("pfm3: loaded on itself", t_load(fd, t_gettid(), 0))) {
		tasks1 = t_sysfs_num("task_sessions_count", -1);
		pfm_unload_context(fd);
		tasks2 = t_sysfs_num("task_sessions_count", -1);
		t_check(tasks0 >= 0 && tasks1 == tasks0 + 1 && tasks2 == tasks0,
			"pfm3: task_sessions_count counts the loaded contexts",
			"%lld, loaded %lld, unloaded %lld", tasks0, tasks1,
			tasks2);
	}
	close(fd);
	t_check(t_sysfs_num("sys_sessions_count", -1) == 0,
		"pfm3: sys_sessions_count 0 with no system-wide context",
		"%lld", t_sysfs_num("sys_sessions_count", -1));
}

int main(void)
{
	restart_gone();
	pmu_desc();
	pmu_desc_hardware();
	top_files();
	syscall_base();
	return t_done();
}
