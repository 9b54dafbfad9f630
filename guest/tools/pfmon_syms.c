// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling profile: sample IPs resolved into functions (or addresses,
 * or source lines) with elfutils' libdwfl (Debian's libdw-dev) for the
 * command's own ELF, its shared libraries and the vDSO, and with
 * /proc/kallsyms for the guest kernel and its modules.
 *
 * The command's memory map is read (/proc/PID/maps) while it runs, every
 * time pfmon looks at it, and the last copy is what the samples are
 * resolved against at the end: the task is gone by then, its files are
 * not. The vDSO has no file: it is the same image in every process of
 * the guest, so pfmon resolves an IP in the command's vDSO at the same
 * offset in its own.
 *
 * Kernel IPs need /proc/kallsyms with addresses, which the kernel gives
 * as perf gets them: to root (CAP_SYSLOG) unless kptr_restrict is 2, to
 * anyone with kptr_restrict 0. Otherwise they stay one line,
 * "[guest kernel: no symbols]", and pfmon says why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "pfmon.h"

#define KERNEL_BASE	0xffff800000000000ULL

static pid_t task;
static const char *exe_path;
static char *maps;		/* the last copy of /proc/PID/maps */
static uint64_t vdso_lo, vdso_hi;	/* the command's [vdso] in it */
static uint64_t *ips;
static size_t nips, ips_cap;

struct ksym {
	uint64_t addr;
	char *name;		/* "func" or "func [module]" */
};

static struct ksym *ksyms;
static size_t nksyms;
static const char *ksyms_why;	/* why kernel IPs stay unresolved */

struct bucket {
	char *key;
	uint64_t hits;
};

static struct bucket *buckets;
static size_t nbuckets, buckets_cap;

void syms_begin(pid_t pid, const char *exe)
{
	task = pid;
	exe_path = exe;
	syms_snapshot();
}

/* keep a copy of the task's memory map while it has one */
void syms_snapshot(void)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", task);
	f = fopen(path, "re");
	if (!f)
		return;
	for (;;) {
		size_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb)
				die("out of memory");
			buf = nb;
			cap += 65536;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	fclose(f);
	buf[len] = '\0';
	/* a zombie's map is empty: keep the last one that was not */
	if (!len) {
		free(buf);
		return;
	}
	free(maps);
	maps = buf;
}

/* --report: the map as a --smpl-outfile kept it */
void syms_set_maps(const char *text, const char *exe)
{
	free(maps);
	maps = strdup(text);
	if (!maps)
		die("out of memory");
	exe_path = exe;
}

const char *syms_maps(void)
{
	return maps ? maps : "";
}

void syms_hit(uint64_t ip)
{
	ips = grow(ips, &ips_cap, nips, sizeof(*ips), 4096);
	ips[nips++] = ip;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_kallsyms(void)
{
	char line[512];
	size_t cap = 0;
	bool zero = true;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f) {
		ksyms_why = "no /proc/kallsyms";
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char type, name[256], mod[128] = "";
		unsigned long long a;

		if (sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, name,
			   mod) < 3)
			continue;
		if (a)
			zero = false;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		ksyms = grow(ksyms, &cap, nksyms, sizeof(*ksyms), 65536);
		ksyms[nksyms].addr = a;
		if (asprintf(&ksyms[nksyms].name, mod[0] ? "%s [%s]" : "%s [kernel]",
			     name, mod) < 0)
			die("out of memory");
		nksyms++;
	}
	fclose(f);
	if (zero) {
		/* kptr_restrict hid the addresses from this user */
		for (size_t i = 0; i < nksyms; i++)
			free(ksyms[i].name);
		nksyms = 0;
		ksyms_why = "/proc/kallsyms shows no addresses to this user (kernel.kptr_restrict; root sees them unless it is 2)";
		return;
	}
	qsort(ksyms, nksyms, sizeof(*ksyms), ksym_cmp);
}

static const char *kernel_name(uint64_t ip)
{
	size_t lo = 0, hi = nksyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? ksyms[lo - 1].name : NULL;
}

static void count(const char *key)
{
	for (size_t i = 0; i < nbuckets; i++)
		if (!strcmp(buckets[i].key, key)) {
			buckets[i].hits++;
			return;
		}
	buckets = grow(buckets, &buckets_cap, nbuckets, sizeof(*buckets), 256);
	buckets[nbuckets].key = strdup(key);
	if (!buckets[nbuckets].key)
		die("out of memory");
	buckets[nbuckets++].hits = 1;
}

static const Dwfl_Callbacks proc_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* our own vDSO's module in @self (pfmon's process) and its start */
static Dwfl_Module *vdso_of(Dwfl *self, Dwarf_Addr *start)
{
	*start = getauxval(AT_SYSINFO_EHDR);
	return *start ? dwfl_addrmodule(self, *start) : NULL;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* the key one IP is counted under, in @buf */
static const char *key_of(Dwfl *d, Dwfl *self, uint64_t ip,
			  enum smpl_view view, char *buf, size_t size)
{
	Dwfl_Module *m;
	const char *mname, *fn;
	Dwarf_Addr mstart, a = ip;

	if (ip >= KERNEL_BASE) {
		fn = kernel_name(ip);
		if (!fn)
			return "[guest kernel: no symbols]";
		if (view == VIEW_FUNCTION)
			return fn;
		snprintf(buf, size, "%#" PRIx64 " %s", ip, fn);
		return buf;
	}
	if (ip >= vdso_lo && ip < vdso_hi) {
		/* libdwfl reports no module for a map line without a file */
		Dwarf_Addr sstart;

		m = self ? vdso_of(self, &sstart) : NULL;
		if (!m)
			return "[vdso]";
		a = ip - vdso_lo + sstart;
		mname = "[vdso]";
	} else {
		m = d ? dwfl_addrmodule(d, ip) : NULL;
		if (!m)
			return "[unknown: outside the command's mappings]";
		mname = dwfl_module_info(m, NULL, &mstart, NULL, NULL, NULL,
					 NULL, NULL);
	}
	fn = dwfl_module_addrname(m, a);
	if (!fn) {
		snprintf(buf, size, "[%s: no symbol]", base(mname ? mname : "?"));
		return buf;
	}
	/* the command's own functions by name alone, others with their file */
	if (view == VIEW_FUNCTION) {
		if (mname && exe_path && !strcmp(mname, exe_path))
			snprintf(buf, size, "%s", fn);
		else
			snprintf(buf, size, "%s [%s]", fn, base(mname ? mname : "?"));
		return buf;
	}
	if (view == VIEW_LINE) {
		Dwfl_Line *l = dwfl_module_getsrc(m, a);
		int line = 0;
		const char *src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL,
						   NULL) : NULL;

		if (src) {
			snprintf(buf, size, "%s:%d %s", base(src), line, fn);
			return buf;
		}
		snprintf(buf, size, "%s [%s: no line info]", fn,
			 base(mname ? mname : "?"));
		return buf;
	}
	snprintf(buf, size, "%#" PRIx64 " %s [%s]", ip, fn,
		 base(mname ? mname : "?"));
	return buf;
}

static int hits_cmp(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	if (x->hits != y->hits)
		return x->hits < y->hits ? 1 : -1;
	return strcmp(x->key, y->key);
}

void syms_report(FILE *o, enum smpl_view view)
{
	Dwfl *d = NULL, *self;
	bool kernel = false;
	char buf[512];

	for (size_t i = 0; i < nips; i++)
		kernel |= ips[i] >= KERNEL_BASE;
	if (kernel)
		load_kallsyms();
	if (maps) {
		FILE *f = fmemopen(maps, strlen(maps), "r");
		const char *v = strstr(maps, " [vdso]\n");

		if (v) {
			unsigned long long lo, hi;

			while (v > maps && v[-1] != '\n')
				v--;
			if (sscanf(v, "%llx-%llx", &lo, &hi) == 2) {
				vdso_lo = lo;
				vdso_hi = hi;
			}
		}

		d = dwfl_begin(&proc_cb);
		if (!d || !f)
			die("libdwfl: %s", dwfl_errmsg(-1));
		dwfl_report_begin(d);
		if (dwfl_linux_proc_maps_report(d, f))
			fprintf(stderr, "pfmon: reading the command's memory map: %s\n",
				dwfl_errmsg(-1));
		dwfl_report_end(d, NULL, NULL);
		fclose(f);
	} else {
		fprintf(stderr, "pfmon: no memory map of the command was read: its samples stay unresolved\n");
	}
	/* our own process: its vDSO stands for the command's */
	self = dwfl_begin(&proc_cb);
	if (self) {
		dwfl_report_begin(self);
		dwfl_linux_proc_report(self, getpid());
		dwfl_report_end(self, NULL, NULL);
	}
	for (size_t i = 0; i < nips; i++)
		count(key_of(d, self, ips[i], view, buf, sizeof(buf)));
	qsort(buckets, nbuckets, sizeof(*buckets), hits_cmp);
	fprintf(o, "  %8s %7s  %s\n", "samples", "%",
		view == VIEW_FUNCTION ? "function" :
		view == VIEW_LINE ? "source line" : "address");
	for (size_t i = 0; i < nbuckets; i++) {
		uint64_t rest = 0;
		size_t n = 0;

		/* the long tail in one line: below 0.2% each, past the 40th */
		if (i >= 40 || buckets[i].hits * 500 < nips) {
			for (size_t j = i; j < nbuckets; j++, n++)
				rest += buckets[j].hits;
			fprintf(o, "  %8llu %6.2f%%  [%zu more, none above %.2f%%]\n",
				(unsigned long long)rest, 100.0 * rest / nips, n,
				100.0 * buckets[i].hits / nips);
			break;
		}
		fprintf(o, "  %8llu %6.2f%%  %s\n",
			(unsigned long long)buckets[i].hits,
			100.0 * buckets[i].hits / nips, buckets[i].key);
	}
	if (kernel && ksyms_why)
		fprintf(stderr, "pfmon: guest kernel samples not resolved: %s\n",
			ksyms_why);
	if (d)
		dwfl_end(d);
	if (self)
		dwfl_end(self);
}
