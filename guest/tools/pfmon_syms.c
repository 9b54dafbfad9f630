// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling profile: sample IPs resolved into functions (or addresses,
 * or source lines) with elfutils' libdwfl (Debian's libdw-dev) for the
 * command's own ELF, its shared libraries and the vDSO, and with
 * /proc/kallsyms for the guest kernel and its modules.
 *
 * Samples are kept with their thread and process. A system-wide
 * context's samples name none (the host, which writes them, does not
 * know the guest's current thread): their kernel IPs are resolved, their
 * user IPs said to belong to no process named. Each process's memory
 * map (an address space) is read (/proc/TGID/maps) while it runs, every
 * time pfmon looks at it, and the last copy is what its samples are
 * resolved against at the end: the process is gone by then, its files
 * are not. A process first seen in a sample (system-wide) is read then.
 * The vDSO has no file: it is the same image in every process of the
 * guest, so pfmon resolves an IP in a process's vDSO at the same offset
 * in its own.
 *
 * C++ and Rust names are demangled with libiberty's cplus_demangle (as
 * binutils and perf do). Code a JIT compiler generated is named by the
 * map it writes, /tmp/perf-PID.map (perf's convention: "START SIZE name"
 * in hex), read at the report.
 *
 * --smpl-outfile records the build-id of every file of a process's map;
 * --report resolves no sample in a file whose build-id changed since (a
 * rebuilt binary), and says so.
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
#include <libiberty/demangle.h>

#include "pfmon.h"

#define KERNEL_BASE	0xffff800000000000ULL

/* a process's address space, as pfmon last saw it */
struct jit_sym {
	uint64_t start, size;
	char *name;
};

struct space {
	pid_t tgid;
	char *exe;		/* its executable: its functions by name alone */
	char *maps;		/* the last copy of /proc/TGID/maps, or NULL */
	uint64_t vdso_lo, vdso_hi;	/* its [vdso] in it */
	bool gone;		/* its map was seen empty or missing */
	Dwfl *dwfl;		/* its modules, at the report */
	struct jit_sym *jit;	/* its /tmp/perf-TGID.map, by start */
	size_t njit;
	char jit_map[32];	/* that file's name */
	char *build_ids;	/* --report: "buildid HEX PATH" lines, or NULL */
	char **stale;		/* --report: why, for each file rebuilt since */
	size_t nstale, stale_cap;
};

struct sample {
	uint64_t ip;
	uint64_t tstamp;	/* the default format's, ns */
	pid_t tid;
	uint32_t cpu;
	size_t space;
};

/* the address space of every process sampled or watched */
static struct space *procs;
static size_t nprocs, procs_cap;
static struct sample *samples;
static size_t nsamples, samples_cap;

struct ksym {
	uint64_t addr;
	char *name;		/* "func" or "func [module]" */
	size_t len;		/* of func alone */
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

static char *read_maps(pid_t tgid)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", tgid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
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
	/* a zombie's map is empty */
	if (!len) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *dup_or_die(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

/* keep a copy of @sp's memory map and executable while it has them */
static void space_snapshot(struct space *sp)
{
	char path[64], exe[4096], *m;
	ssize_t n;

	if (sp->gone)
		return;
	m = read_maps(sp->tgid);
	if (!m) {
		sp->gone = true;
		return;
	}
	free(sp->maps);
	sp->maps = m;
	snprintf(path, sizeof(path), "/proc/%d/exe", sp->tgid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		free(sp->exe);
		sp->exe = dup_or_die(exe);
	}
}

static size_t space_of(pid_t tgid)
{
	static size_t last;

	if (last < nprocs && procs[last].tgid == tgid)
		return last;
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].tgid == tgid)
			return last = i;
	procs = grow(procs, &procs_cap, nprocs, sizeof(*procs), 16);
	procs[nprocs] = (struct space){ .tgid = tgid };
	space_snapshot(&procs[nprocs]);
	return last = nprocs++;
}

void syms_watch(pid_t tgid)
{
	space_of(tgid);
}

void syms_snapshot(void)
{
	for (size_t i = 0; i < nprocs; i++)
		space_snapshot(&procs[i]);
}

void syms_set_maps(pid_t tgid, const char *text, const char *exe,
		   const char *build_ids)
{
	procs = grow(procs, &procs_cap, nprocs, sizeof(*procs), 16);
	procs[nprocs++] = (struct space){
		.tgid = tgid, .exe = dup_or_die(exe), .maps = dup_or_die(text),
		.build_ids = build_ids ? dup_or_die(build_ids) : NULL,
		.gone = true,
	};
}

static void space_report(struct space *sp);

/* @m's build-id in hex into @hex (2 * 64 + 1 bytes); false if none */
static bool build_id_of(Dwfl_Module *m, char *hex)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	int n;

	if (!dwfl_module_getelf(m, &bias))
		return false;
	n = dwfl_module_build_id(m, &bits, &vaddr);
	if (n <= 0 || n > 64)
		return false;
	for (int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", bits[i]);
	return true;
}

static int write_build_id(Dwfl_Module *m, void **userdata, const char *name,
			  Dwarf_Addr start, void *arg)
{
	char hex[2 * 64 + 1];

	(void)userdata;
	(void)start;
	if (name[0] == '/' && build_id_of(m, hex))
		fprintf(arg, "buildid %s %s\n", hex, name);
	return DWARF_CB_OK;
}

void syms_write_maps(FILE *f)
{
	for (size_t i = 0; i < nprocs; i++) {
		struct space *sp = &procs[i];

		fprintf(f, "space %d %s\n", sp->tgid, sp->exe ? sp->exe : "?");
		space_report(sp);
		if (sp->dwfl)
			dwfl_getmodules(sp->dwfl, write_build_id, f, 0);
		fprintf(f, "%s", sp->maps ? sp->maps : "");
	}
}

struct id_check {
	struct space *sp;
	const char *path, *hex;
	bool seen;
};

static int check_build_id(Dwfl_Module *m, void **userdata, const char *name,
			  Dwarf_Addr start, void *arg)
{
	struct id_check *c = arg;
	char hex[2 * 64 + 1], *why;

	(void)userdata;
	(void)start;
	if (strcmp(name, c->path))
		return DWARF_CB_OK;
	c->seen = true;
	if (build_id_of(m, hex) && !strcmp(hex, c->hex))
		return DWARF_CB_ABORT;
	if (asprintf(&why, "[%s: rebuilt since the samples (build-id %.12s..., was %.12s...)]",
		     name, build_id_of(m, hex) ? hex : "none", c->hex) < 0)
		die("out of memory");
	fprintf(stderr, "pfmon: %s\n", why);
	c->sp->stale = grow(c->sp->stale, &c->sp->stale_cap, c->sp->nstale,
			    sizeof(*c->sp->stale), 4);
	c->sp->stale[c->sp->nstale++] = why;
	return DWARF_CB_ABORT;
}

/* --report: the files of @sp's map whose build-id changed since */
static void check_build_ids(struct space *sp)
{
	char hex[2 * 64 + 1], path[4096];
	const char *l = sp->build_ids;

	while (l && *l) {
		if (sscanf(l, "buildid %128s %4095[^\n]", hex, path) == 2 &&
		    sp->dwfl) {
			struct id_check c = { sp, path, hex, false };

			dwfl_getmodules(sp->dwfl, check_build_id, &c, 0);
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
}

/* why @mod of @sp resolves nothing: rebuilt since, or NULL */
static const char *stale_why(const struct space *sp, const char *mod)
{
	size_t n = strlen(mod);

	for (size_t i = 0; i < sp->nstale; i++)
		if (!strncmp(sp->stale[i] + 1, mod, n) && sp->stale[i][n + 1] == ':')
			return sp->stale[i];
	return NULL;
}

void syms_hit(pid_t tgid, pid_t tid, uint32_t cpu, uint64_t tstamp,
	      uint64_t ip)
{
	samples = grow(samples, &samples_cap, nsamples, sizeof(*samples), 4096);
	samples[nsamples++] = (struct sample){
		.ip = ip, .tstamp = tstamp, .tid = tid, .cpu = cpu,
		.space = space_of(tgid),
	};
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
		ksyms[nksyms++].len = strlen(name);
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

static const struct ksym *kernel_sym(uint64_t ip)
{
	size_t lo = 0, hi = nksyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ksyms[lo - 1] : NULL;
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

static int jit_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* @sp's JIT map, if its process wrote one */
static void jit_load(struct space *sp)
{
	char line[1024], name[900];
	unsigned long long start, size;
	size_t cap = 0;
	FILE *f;

	snprintf(sp->jit_map, sizeof(sp->jit_map), "/tmp/perf-%d.map", sp->tgid);
	f = fopen(sp->jit_map, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %llx %899[^\n]", &start, &size, name) != 3)
			continue;
		sp->jit = grow(sp->jit, &cap, sp->njit, sizeof(*sp->jit), 64);
		sp->jit[sp->njit++] = (struct jit_sym){
			.start = start, .size = size, .name = dup_or_die(name),
		};
	}
	fclose(f);
	qsort(sp->jit, sp->njit, sizeof(*sp->jit), jit_cmp);
}

static const struct jit_sym *jit_sym(const struct space *sp, uint64_t ip)
{
	size_t lo = 0, hi = sp->njit;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sp->jit[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip >= sp->jit[lo - 1].start + sp->jit[lo - 1].size)
		return NULL;
	return &sp->jit[lo - 1];
}

/* a mangled C++ or Rust name's readable form; others as they are */
static const char *demangled(const char *name)
{
	static struct { const char *mangled; char *plain; } cache[1024];
	size_t h;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	h = ((uintptr_t)name >> 3) % (sizeof(cache) / sizeof(cache[0]));
	if (cache[h].mangled != name) {
		free(cache[h].plain);
		cache[h].mangled = name;
		cache[h].plain = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI |
						DMGL_AUTO);
	}
	return cache[h].plain ? cache[h].plain : name;
}

/* where one IP lies: its function (or why none), module and line */
struct frame {
	const char *why;	/* not NULL: unresolved, and why */
	const char *fn;		/* NULL: no symbol in the module */
	size_t fn_len;		/* of fn's name */
	uint64_t off;		/* from fn's start */
	const char *mod;	/* the module's path, [vdso] or [kernel] */
	bool own;		/* in the process's executable */
	bool kernel;
	Dwfl_Module *m;		/* a user module */
	Dwarf_Addr a;		/* @ip in m's terms */
};

static void frame_of(const struct space *sp, Dwfl *self, uint64_t ip,
		     struct frame *f)
{
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwarf_Addr mstart;

	*f = (struct frame){ .a = ip };
	if (!ip) {
		f->why = "[ip 0: a guest kernel sample hidden from a user without CAP_PERFMON (controls/user_kernel_ip)]";
		return;
	}
	if (ip >= KERNEL_BASE) {
		const struct ksym *k = kernel_sym(ip);

		f->kernel = true;
		f->mod = "[kernel]";
		if (!k) {
			f->why = "[guest kernel: no symbols]";
			return;
		}
		f->fn = k->name;
		f->fn_len = k->len;
		f->off = ip - k->addr;
		return;
	}
	if (!sp->tgid) {
		f->why = "[user: no process named (a system-wide sample records no guest thread)]";
		return;
	}
	if (ip >= sp->vdso_lo && ip < sp->vdso_hi) {
		/* libdwfl reports no module for a map line without a file */
		Dwarf_Addr sstart;

		f->m = self ? vdso_of(self, &sstart) : NULL;
		if (!f->m) {
			f->why = "[vdso]";
			return;
		}
		f->a = ip - sp->vdso_lo + sstart;
		f->mod = "[vdso]";
	} else {
		const struct jit_sym *j;

		f->m = sp->dwfl ? dwfl_addrmodule(sp->dwfl, ip) : NULL;
		if (!f->m && (j = jit_sym(sp, ip))) {
			f->fn = j->name;
			f->fn_len = strlen(j->name);
			f->off = ip - j->start;
			f->mod = sp->jit_map;
			return;
		}
		if (!f->m) {
			f->why = sp->maps ? "[unknown: outside the process's mappings]" :
					    "[unknown: the process's map was never read]";
			return;
		}
		f->mod = dwfl_module_info(f->m, NULL, &mstart, NULL, NULL,
					  NULL, NULL, NULL);
		if (!f->mod)
			f->mod = "?";
		f->why = stale_why(sp, f->mod);
		if (f->why)
			return;
		f->own = sp->exe && !strcmp(f->mod, sp->exe);
	}
	f->fn = dwfl_module_addrinfo(f->m, f->a, &off, &sym, NULL, NULL, NULL);
	if (f->fn)
		f->fn = demangled(f->fn);
	f->fn_len = f->fn ? strlen(f->fn) : 0;
	f->off = off;
}

/* the key one IP of @sp is counted under, in @buf */
static const char *key_of(const struct space *sp, Dwfl *self, uint64_t ip,
			  enum smpl_view view, char *buf, size_t size)
{
	struct frame f;

	frame_of(sp, self, ip, &f);
	if (f.why)
		return f.why;
	if (f.kernel) {
		if (view == VIEW_FUNCTION)
			return f.fn;
		snprintf(buf, size, "%#" PRIx64 " %s", ip, f.fn);
		return buf;
	}
	if (!f.fn) {
		snprintf(buf, size, "[%s: no symbol]", base(f.mod));
		return buf;
	}
	/* the process's own functions by name alone, others with their file */
	if (view == VIEW_FUNCTION) {
		if (f.own)
			snprintf(buf, size, "%s", f.fn);
		else
			snprintf(buf, size, "%s [%s]", f.fn, base(f.mod));
		return buf;
	}
	if (view == VIEW_LINE && f.m) {
		Dwfl_Line *l = dwfl_module_getsrc(f.m, f.a);
		int line = 0;
		const char *src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL,
						   NULL) : NULL;

		if (src) {
			snprintf(buf, size, "%s:%d %s", base(src), line, f.fn);
			return buf;
		}
		snprintf(buf, size, "%s [%s: no line info]", f.fn, base(f.mod));
		return buf;
	}
	snprintf(buf, size, "%#" PRIx64 " %s [%s]", ip, f.fn, base(f.mod));
	return buf;
}

static int hits_cmp(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	if (x->hits != y->hits)
		return x->hits < y->hits ? 1 : -1;
	return strcmp(x->key, y->key);
}

/* @sp's modules from its last map, and its JIT map (once) */
static void space_report(struct space *sp)
{
	FILE *f;
	const char *v;

	if (sp->dwfl || !sp->maps)
		return;
	jit_load(sp);
	v = strstr(sp->maps, " [vdso]\n");
	if (v) {
		unsigned long long lo, hi;

		while (v > sp->maps && v[-1] != '\n')
			v--;
		if (sscanf(v, "%llx-%llx", &lo, &hi) == 2) {
			sp->vdso_lo = lo;
			sp->vdso_hi = hi;
		}
	}
	f = fmemopen(sp->maps, strlen(sp->maps), "r");
	sp->dwfl = dwfl_begin(&proc_cb);
	if (!sp->dwfl || !f)
		die("libdwfl: %s", dwfl_errmsg(-1));
	dwfl_report_begin(sp->dwfl);
	if (dwfl_linux_proc_maps_report(sp->dwfl, f))
		fprintf(stderr, "pfmon: reading the memory map of %d: %s\n",
			sp->tgid, dwfl_errmsg(-1));
	dwfl_report_end(sp->dwfl, NULL, NULL);
	fclose(f);
	check_build_ids(sp);
}

/* the table of @n buckets of @total samples, the long tail in one line */
static void print_buckets(FILE *o, const char *what, uint64_t total)
{
	qsort(buckets, nbuckets, sizeof(*buckets), hits_cmp);
	fprintf(o, "  %8s %7s  %s\n", "samples", "%", what);
	for (size_t i = 0; i < nbuckets; i++) {
		uint64_t rest = 0;
		size_t n = 0;

		/* below 0.2% each, past the 40th */
		if (i >= 40 || buckets[i].hits * 500 < total) {
			for (size_t j = i; j < nbuckets; j++, n++)
				rest += buckets[j].hits;
			fprintf(o, "  %8llu %6.2f%%  [%zu more, none above %.2f%%]\n",
				(unsigned long long)rest, 100.0 * rest / total, n,
				100.0 * buckets[i].hits / total);
			break;
		}
		fprintf(o, "  %8llu %6.2f%%  %s\n",
			(unsigned long long)buckets[i].hits,
			100.0 * buckets[i].hits / total, buckets[i].key);
	}
	for (size_t i = 0; i < nbuckets; i++)
		free(buckets[i].key);
	nbuckets = 0;
}

/* more than one thread sampled: what each one's samples are */
static void print_threads(FILE *o)
{
	char key[4200];
	pid_t first = nsamples ? samples[0].tid : 0;
	bool several = false;

	for (size_t i = 0; i < nsamples; i++)
		several |= samples[i].tid != first;
	if (!several)
		return;
	for (size_t i = 0; i < nsamples; i++) {
		const struct space *sp = &procs[samples[i].space];

		if (!sp->tgid)
			snprintf(key, sizeof(key), "no thread named (system-wide)");
		else
			snprintf(key, sizeof(key), "tid %d pid %d (%s)",
				 samples[i].tid, sp->tgid,
				 sp->exe ? base(sp->exe) : "?");
		count(key);
	}
	fprintf(o, "\n");
	print_buckets(o, "thread", nsamples);
}

static const char *comm_of(const struct space *sp)
{
	return sp->exe ? base(sp->exe) : "[unknown]";
}

/*
 * perf script's text, as `perf script` prints samples with call chains
 * (what stackcollapse-perf.pl, speedscope, the Firefox Profiler and
 * hotspot read): a line per sample, its frames below, a blank line,
 * in time order. pfmon's frames are one deep: the sample's IP.
 */
static int tstamp_cmp(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->tstamp != y->tstamp)
		return x->tstamp < y->tstamp ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void print_perf_script(FILE *o, Dwfl *self, const char *event)
{
	/* in time order, as perf script: buffers of CPUs and tasks meet */
	qsort(samples, nsamples, sizeof(*samples), tstamp_cmp);
	for (size_t i = 0; i < nsamples; i++) {
		const struct sample *x = &samples[i];
		const struct space *sp = &procs[x->space];
		struct frame f;

		frame_of(sp, self, x->ip, &f);
		fprintf(o, "%s %d/%d [%03u] %llu.%06llu: %llu %s:\n",
			comm_of(sp), sp->tgid, x->tid, x->cpu,
			(unsigned long long)(x->tstamp / 1000000000ULL),
			(unsigned long long)(x->tstamp % 1000000000ULL / 1000),
			(unsigned long long)opts.smpl_period, event);
		if (f.fn)
			fprintf(o, "\t%16" PRIx64 " %.*s+0x%" PRIx64 " (%s)\n\n",
				x->ip, (int)f.fn_len, f.fn, f.off,
				f.kernel ? "[kernel.kallsyms]" : f.mod);
		else
			fprintf(o, "\t%16" PRIx64 " [unknown] (%s)\n\n", x->ip,
				f.mod ? f.mod : "[unknown]");
	}
}

/*
 * Folded stacks, flamegraph.pl's input: "program;frame count", one line
 * per stack, frames named as the profile by function names them.
 */
static void print_folded(FILE *o, Dwfl *self)
{
	char buf[512], key[1024];

	for (size_t i = 0; i < nsamples; i++) {
		const struct space *sp = &procs[samples[i].space];

		snprintf(key, sizeof(key), "%s;%s", comm_of(sp),
			 key_of(sp, self, samples[i].ip, VIEW_FUNCTION, buf,
				sizeof(buf)));
		/* a frame's name holds no separator */
		for (char *c = strchr(key, ';') + 1; *c; c++)
			if (*c == ';')
				*c = ':';
		count(key);
	}
	qsort(buckets, nbuckets, sizeof(*buckets), hits_cmp);
	for (size_t i = 0; i < nbuckets; i++) {
		fprintf(o, "%s %llu\n", buckets[i].key,
			(unsigned long long)buckets[i].hits);
		free(buckets[i].key);
	}
	nbuckets = 0;
}

void syms_report(FILE *o, enum smpl_view view, enum profile_fmt fmt,
		 const char *event)
{
	bool kernel = false, unread = false;
	char buf[512];
	Dwfl *self;

	for (size_t i = 0; i < nsamples; i++)
		kernel |= samples[i].ip >= KERNEL_BASE;
	if (kernel)
		load_kallsyms();
	for (size_t i = 0; i < nprocs; i++) {
		space_report(&procs[i]);
		unread |= !procs[i].maps && procs[i].tgid;
	}
	if (unread)
		fprintf(stderr, "pfmon: no memory map was read of some sampled processes: their samples stay unresolved\n");
	/* our own process: its vDSO stands for the others' */
	self = dwfl_begin(&proc_cb);
	if (self) {
		dwfl_report_begin(self);
		dwfl_linux_proc_report(self, getpid());
		dwfl_report_end(self, NULL, NULL);
	}
	if (fmt == PROFILE_PERF_SCRIPT) {
		print_perf_script(o, self, event);
	} else if (fmt == PROFILE_FOLDED) {
		print_folded(o, self);
	} else {
		for (size_t i = 0; i < nsamples; i++)
			count(key_of(&procs[samples[i].space], self,
				     samples[i].ip, view, buf, sizeof(buf)));
		print_buckets(o, view == VIEW_FUNCTION ? "function" :
			      view == VIEW_LINE ? "source line" : "address",
			      nsamples);
		print_threads(o);
	}
	if (kernel && ksyms_why)
		fprintf(stderr, "pfmon: guest kernel samples not resolved: %s\n",
			ksyms_why);
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].dwfl)
			dwfl_end(procs[i].dwfl);
	if (self)
		dwfl_end(self);
}
