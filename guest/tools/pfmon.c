// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon: count events of a command (or of CPUs, or of a task) with
 * perfmon2 in a kvm-perfmon guest, through libperfmon2's twelve calls.
 * Its options and manual are pfmon_cli.c's table (`pfmon --help`,
 * pfmon(1)); this file parses them and starts the session (pfmon.h says
 * which file does what).
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
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/pv_perfmon.h>

#include "pfmon.h"

#define PFMON_VERSION	"2.0"

struct set sets[MAX_SETS];
int nsets;
FILE *out;
enum out_fmt out_fmt = OUT_TEXT;
const char *csv_sep;
struct pfmon_opts opts = { .smpl_view = VIEW_FUNCTION };
static void (*die_cleanup_fn)(void);

void die_cleanup(void (*fn)(void))
{
	die_cleanup_fn = fn;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pfmon: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (die_cleanup_fn) {
		void (*fn)(void) = die_cleanup_fn;

		die_cleanup_fn = NULL;
		fn();
	}
	exit(PFMON_EXIT_FAIL);
}

void *grow(void *arr, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want;

	if (n < *cap)
		return arr;
	want = *cap ? 2 * *cap : first;
	arr = reallocarray(arr, want, size);
	if (!arr)
		die("out of memory");
	*cap = want;
	return arr;
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

/*
 * --switch-timeout: a time with its unit (10ms, 500us, 1s: pfmon 3.x's
 * milliseconds, or any), or nanoseconds without one
 */
static uint64_t parse_duration_ns(const char *opt, const char *arg)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 }, { NULL, 0 },
	};
	char num[32];
	size_t n = strspn(arg, "0123456789");

	if (!arg[n])
		return parse_u64(opt, arg, 1, UINT64_MAX >> 1);
	for (int i = 0; units[i].unit; i++) {
		if (strcmp(arg + n, units[i].unit) || n >= sizeof(num))
			continue;
		memcpy(num, arg, n);
		num[n] = '\0';
		return parse_u64(opt, num, 1, (UINT64_MAX >> 1) / units[i].ns) *
		       units[i].ns;
	}
	die("%s: want a time such as 10ms, 500us, 2s or a number of ns, not '%s'",
	    opt, arg);
}

/* --smpl-periods-random MASK[:SEED]: perfmon2's randomized reset values */
static void parse_random(const char *arg)
{
	char mask[32];
	const char *seed = strchr(arg, ':');
	size_t n = seed ? (size_t)(seed - arg) : strlen(arg);

	if (n >= sizeof(mask))
		die("--smpl-periods-random: want MASK[:SEED], not '%s'", arg);
	memcpy(mask, arg, n);
	mask[n] = '\0';
	opts.smpl_random_mask = parse_u64("--smpl-periods-random", mask, 1,
					  UINT32_MAX);
	opts.smpl_random_seed = seed ? (uint32_t)parse_u64(
		"--smpl-periods-random's seed", seed + 1, 0, UINT32_MAX) : 1;
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

/*
 * The host takes set timeouts that are multiples of its timer's
 * resolution and refuses others (as perfmon2 did its clock's): round
 * up, and say so. A host that does not say rounds them itself.
 */
static uint64_t switch_timeout_round(uint64_t ns)
{
	uint64_t res, r;
	bool ok;

	res = sysfs_u64("device/set_timeout_res_ns", &ok);
	if (!ok || !res)
		return ns;
	r = (ns + res - 1) / res * res;
	if (r != ns)
		fprintf(stderr, "pfmon: --switch-timeout %llu ns rounded up to %llu ns, a multiple of the host's %llu ns\n",
			(unsigned long long)ns, (unsigned long long)r,
			(unsigned long long)res);
	return r;
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

static enum profile_fmt parse_profile_fmt(const char *arg)
{
	if (!strcmp(arg, "table"))
		return PROFILE_TABLE;
	if (!strcmp(arg, "perf-script"))
		return PROFILE_PERF_SCRIPT;
	if (!strcmp(arg, "folded"))
		return PROFILE_FOLDED;
	die("--profile-format: table, perf-script or folded, not '%s'", arg);
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
	char *set_lists[MAX_SETS] = { NULL };
	bool syswide = false, list = false, json = false, view_given = false;
	bool profile_fmt_given = false;
	const char *cpulist = NULL, *outfile = NULL, *report_path = NULL;
	unsigned int plm = 0;
	pid_t attach = 0;
	int opt, fd, rc;

	out = stdout;
	while ((opt = cli_getopt(&pfmon_cli, argc, argv)) != -1) {
		switch (opt) {
		case 'e':
		case OPT_SET:
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
		case OPT_SWITCH_TIMEOUT:
			opts.switch_timeout = parse_duration_ns("--switch-timeout",
								optarg);
			break;
		case OPT_SMPL_PERIOD:
			opts.smpl_period = parse_u64("--smpl-period", optarg, 1,
						     (1ULL << 62) - 1);
			break;
		case OPT_SMPL_BUF_SIZE:
			opts.smpl_buf_size = parse_u64("--smpl-buf-size", optarg,
						       PFMON_MIN_SMPL_BUF_SIZE,
						       1ULL << 32);
			break;
		case OPT_SMPL_RANDOM:
			parse_random(optarg);
			break;
		case OPT_SYSTEM_WIDE:
			syswide = true;
			break;
		case OPT_CPU_LIST:
			cpulist = optarg;
			break;
		case OPT_ATTACH_TASK:
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
		case OPT_JSON:
			json = true;
			break;
		case 'I':
			opts.interval_ms = parse_u64("-I", optarg,
						     PFMON_MIN_INTERVAL_MS, 86400000);
			break;
		case 't':
			opts.session_s = parse_u64("-t", optarg, 1,
						   PFMON_MAX_SESSION_S);
			break;
		case 'v':
			opts.verbose = true;
			break;
		case OPT_FOLLOW_FORK:
			opts.follow |= FOLLOW_FORK;
			break;
		case OPT_FOLLOW_VFORK:
			opts.follow |= FOLLOW_VFORK;
			break;
		case OPT_FOLLOW_PTHREAD:
			opts.follow |= FOLLOW_PTHREAD;
			break;
		case OPT_FOLLOW_EXEC:
			opts.follow |= FOLLOW_EXEC;
			break;
		case OPT_FOLLOW_ALL:
			opts.follow |= FOLLOW_ALL;
			break;
		case OPT_AGGREGATE:
			opts.aggregate = true;
			break;
		case OPT_SMPL_PER_FUNCTION:
			opts.smpl_view = VIEW_FUNCTION;
			view_given = true;
			break;
		case OPT_SMPL_PER_ADDRESS:
			opts.smpl_view = VIEW_ADDRESS;
			view_given = true;
			break;
		case OPT_SMPL_PER_LINE:
			opts.smpl_view = VIEW_LINE;
			view_given = true;
			break;
		case OPT_SMPL_OUTFILE:
			opts.smpl_outfile = optarg;
			break;
		case OPT_REPORT:
			report_path = optarg;
			break;
		case OPT_PROFILE_FORMAT:
			opts.profile_fmt = parse_profile_fmt(optarg);
			profile_fmt_given = true;
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
	if (opts.smpl_period && !syswide && !attach && optind >= argc)
		die("--smpl-period samples a command, an attached task or CPUs (pfmon --smpl-period N -- cmd)");
	if (opts.follow && (syswide || opts.interval_ms))
		die("--follow-* goes with a command or --attach-task (not with --system-wide or -I)");
	if (opts.aggregate && !opts.follow && !syswide)
		die("--aggregate-results sums the tasks of --follow-* or the CPUs of --system-wide");
	if (opts.smpl_outfile && !opts.smpl_period)
		die("--smpl-outfile goes with --smpl-period");
	if ((opts.smpl_buf_size || opts.smpl_random_mask) && !opts.smpl_period)
		die("--smpl-buf-size and --smpl-periods-random go with --smpl-period");
	if (opts.smpl_random_mask >= opts.smpl_period && opts.smpl_period)
		die("--smpl-periods-random: the mask %#llx must be below the period %llu",
		    (unsigned long long)opts.smpl_random_mask,
		    (unsigned long long)opts.smpl_period);
	if (opts.smpl_period && !opts.smpl_buf_size)
		opts.smpl_buf_size = PFMON_DFL_SMPL_BUF_SIZE;
	if (opts.session_s && !attach && !(syswide && optind >= argc))
		die("-t sets how long --attach-task or --system-wide without a command monitor; a command's session lasts as long as the command");
	if (profile_fmt_given && !report_path)
		die("--profile-format goes with --report (pfmon --smpl-outfile FILE ..., then pfmon --report FILE --profile-format FMT)");
	if (report_path) {
		if (optind < argc || nsets || opts.smpl_period || syswide ||
		    attach || list || opts.follow || opts.interval_ms ||
		    opts.session_s || csv_sep || json)
			die("--report FILE prints a profile: only -o and --smpl-per-* go with it");
		if (outfile) {
			out = fopen(outfile, "we");
			if (!out)
				die("-o %s: %s", outfile, strerror(errno));
		}
		return report_file(report_path, opts.smpl_view,
				   opts.profile_fmt);
	}
	if (view_given && !opts.smpl_period)
		die("--smpl-per-function, --smpl-per-address and --smpl-per-line go with --smpl-period");
	if (opts.smpl_period && out_fmt != OUT_TEXT)
		die("--smpl-period prints a text profile: -x and --json are for counting");
	if (opts.interval_ms && (syswide || attach || opts.smpl_period))
		die("-I prints the counts of a command counted per thread (not with --system-wide, --attach-task or --smpl-period)");
	if (list && optind < argc)
		die("-l lists the events; it runs no command");
	if (!list && !syswide && !attach && optind >= argc)
		die("no command to monitor (pfmon [options] -- cmd args; pfmon --help)");
	if (attach && optind < argc)
		die("--attach-task monitors a task that exists: no command");

	events_init();
	if (list) {
		fd = ctx_create(0);
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
	if (nsets > 1 && !opts.switch_timeout)
		opts.switch_timeout = PFMON_DFL_SWITCH_TIMEOUT_NS;
	if (nsets > 1)
		opts.switch_timeout = switch_timeout_round(opts.switch_timeout);
	if (nsets == 1 && opts.switch_timeout)
		fprintf(stderr, "pfmon: --switch-timeout with one event set: nothing to switch\n");
	if (outfile) {
		out = fopen(outfile, "we");
		if (!out)
			die("-o %s: %s", outfile, strerror(errno));
	}

	session_init();
	if (syswide) {
		rc = count_syswide(cpulist, argv + optind);
		goto done;
	}
	fd = ctx_create(0);
	ctx_program(fd);
	if (attach)
		rc = count_attached(attach, fd);
	else if (opts.follow)
		rc = follow_cmd(argv + optind, fd);
	else if (opts.smpl_period)
		rc = sample_cmd(argv + optind, fd);
	else
		rc = count_cmd(argv + optind, fd);
	close(fd);
done:
	if (out != stdout && fclose(out))
		die("-o %s: %s", outfile, strerror(errno));
	return rc;
}
