// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon's options and manual: the one table its parser, --help and man
 * page (pfmon.1, built by `pfmon --man`) all come from (cli/cli.h).
 */
#include <stdio.h>

#include "pfmon.h"

#define STR_(x)	#x
#define STR(x)	STR_(x)

/* "EV is a virtual PMD (vcpu_run_ns, ...)": the names from the device ABI */
static const char *events_note(void)
{
	static char text[1024];
	size_t len;

	len = snprintf(text, sizeof(text), "EV is a virtual PMD (");
	for (unsigned int n = PFM_FIRST_SW_PMD; n < PVPFM_VPMD_END; n++)
		len += snprintf(text + len, sizeof(text) - len, "%s%s",
				n == PFM_FIRST_SW_PMD ? "" : ", ",
				pvpfm_vpmd_desc(n)->name);
	snprintf(text + len, sizeof(text) - len, "%s",
		 "), an event of the personality's CPU model by its libpfm4 "
		 "name (EVENT or EVENT:UMASK...), one of perf's names "
		 "(cycles, instructions, branches, branch_misses or branch-misses, ...) or "
		 "rHEX (raw PERFEVTSEL); EV:u, EV:k, EV:uk pick the privilege "
		 "levels of one hardware event.");
	return text;
}

/* the man page's list of virtual PMDs, from the device ABI's table */
static const char *vpmds_section(void)
{
	static char text[2048];
	size_t len;

	len = snprintf(text, sizeof(text), "%s",
		       "The hypervisor's events, counted by the host for the "
		       "vCPU the monitored task runs on (PMD number, unit):");
	for (unsigned int n = PFM_FIRST_SW_PMD; n < PVPFM_VPMD_END; n++) {
		const struct pvpfm_vpmd_desc *d = pvpfm_vpmd_desc(n);

		len += snprintf(text + len, sizeof(text) - len,
				"\n\n= %s\n%s (PMD %u, %s)", d->name, d->what,
				n, d->unit);
	}
	return text;
}

static const struct cli_option options[] = {
	CLI_HEADING("Events"),
	CLI_OPT("events", 'e', "EV[,EV...]", "an event set; each -e adds the next set (several sets are time-switched and their counts scaled); default: one set vcpu_run_ns,vm_exits"),
	CLI_OPT("set", OPT_SET, "EV[,EV...]", "the same as -e (pfmon 1.x's name for a further set)"),
	CLI_OPT("user-level", 'u', NULL, "hardware events count at user level by default"),
	CLI_OPT("kernel-level", 'k', NULL, "hardware events count at kernel level by default (neither, or both: user and kernel)"),
	CLI_OPT("switch-timeout", OPT_SWITCH_TIMEOUT, "TIME", "time each set is active before the next: with a unit (10ms as pfmon 3.x took milliseconds, 500us, 1s) or in ns without one; rounded up to a multiple of the host's set timer resolution (default " STR(PFMON_DFL_SWITCH_TIMEOUT_NS) " ns)"),
	CLI_OPT("list", 'l', NULL, "list the events, each probed on the host"),
	CLI_ALIAS("show-events", 'l', NULL),
	CLI_OPT("verbose", 'v', NULL, "print each event's registers (PMC value) on stderr"),
	CLI_NOTE_FN(events_note),
	CLI_HEADING("Sampling"),
	CLI_OPT("smpl-period", OPT_SMPL_PERIOD, "N", "sample every N occurrences of the first event of the first set, in every monitored thread or CPU; print a profile of the IPs resolved with libdwfl (programs, their libraries, the vDSO) and /proc/kallsyms (kernel), and what each thread took"),
	CLI_OPT("smpl-buf-size", OPT_SMPL_BUF_SIZE, "BYTES", "each sampling context's buffer (default " STR(PFMON_DFL_SMPL_BUF_SIZE) "; at most the guest's controls/smpl_buffer_mem_max and the host's max_smpl_buf)"),
	CLI_OPT("smpl-periods-random", OPT_SMPL_RANDOM, "MASK[:SEED]", "randomize each period's low bits MASK (below the period), seeded with SEED (default 1): perfmon2's PFM_REGFL_RANDOM, against sampling in step with a loop"),
	CLI_OPT("smpl-per-function", OPT_SMPL_PER_FUNCTION, NULL, "the profile by function (default)"),
	CLI_OPT("smpl-per-address", OPT_SMPL_PER_ADDRESS, NULL, "the profile by address"),
	CLI_OPT("smpl-per-line", OPT_SMPL_PER_LINE, NULL, "the profile by source line (DWARF line tables)"),
	CLI_OPT("smpl-outfile", OPT_SMPL_OUTFILE, "FILE", "also write the raw samples and the command's map to FILE"),
	CLI_OPT("report", OPT_REPORT, "FILE", "print the profile of a --smpl-outfile FILE (in the same guest: its files and kernel symbols)"),
	CLI_OPT("profile-format", OPT_PROFILE_FORMAT, "FMT", "--report's output: table (pfmon's profile, the default), perf-script (perf script's text: stackcollapse-perf.pl, speedscope, the Firefox Profiler, hotspot read it) or folded (folded stacks, flamegraph.pl's input)"),
	CLI_HEADING("What is monitored (default: COMMAND, its first thread only)"),
	CLI_OPT("system-wide", OPT_SYSTEM_WIDE, NULL, "every CPU (or --cpu-list), until COMMAND ends; without one, for -t or until SIGINT or SIGTERM; per CPU and in total"),
	CLI_OPT("cpu-list", OPT_CPU_LIST, "L", "CPUs for --system-wide: N,N-M,..."),
	CLI_OPT("attach-task", OPT_ATTACH_TASK, "PID", "an existing task (ptrace rights), until it exits, for -t or until SIGINT or SIGTERM"),
	CLI_OPT("session-timeout", 't', "SECS", "how long --attach-task or --system-wide without COMMAND monitor (at most " STR(PFMON_MAX_SESSION_S) ")"),
	CLI_OPT("follow-fork", OPT_FOLLOW_FORK, NULL, "also the processes fork() creates (a context each)"),
	CLI_OPT("follow-vfork", OPT_FOLLOW_VFORK, NULL, "also the processes vfork() creates"),
	CLI_OPT("follow-pthread", OPT_FOLLOW_PTHREAD, NULL, "also the threads (clone()) created"),
	CLI_OPT("follow-exec", OPT_FOLLOW_EXEC, NULL, "(always so: a context follows its task's exec)"),
	CLI_OPT("follow-all", OPT_FOLLOW_ALL, NULL, "all of the above"),
	CLI_OPT("aggregate-results", OPT_AGGREGATE, NULL, "with --follow-* or --system-wide: one sum, not one result per task or CPU"),
	CLI_HEADING("Output (results; messages go to stderr)"),
	CLI_OPT("outfile", 'o', "FILE", "results to FILE instead of stdout"),
	CLI_OPT("field-separator", 'x', "SEP", "CSV: a header line, then one line per event (time, target, set, event, count, raw, set_runs, set_active_ns, set_pct, host_enabled_ns, host_running_ns, host_pct, emulated)"),
	CLI_OPT("json", OPT_JSON, NULL, "one JSON object per line and event, same fields"),
	CLI_OPT("interval-print", 'I', "MS", "print the counts of every MS ms (>= " STR(PFMON_MIN_INTERVAL_MS) ") of a counted COMMAND, then those of the last part"),
	CLI_NOTE(
		"Per event: the count scaled to the whole run, its raw value, the set's\n"
		"share of the run and the share of the enabled time the host ran the set's\n"
		"counters; pfmon warns on stderr when the host starved them."),
	CLI_HEADING("Other"),
	CLI_OPT("version", 'V', NULL, "pfmon's, libpfm4's and perfmon2's versions"),
	CLI_HELP_OPT,
	CLI_END
};

static const struct cli_section before_exit[] = {
	{ .title = "EVENTS", .text =
	  "Each -e is an event set, as in the original pfmon 3.x; with more than one\n"
	  "set the sets are time-switched by the host (PFM_SETFL_TIME_SWITCH,\n"
	  "--switch-timeout, default 10 ms) and every count is printed scaled to the\n"
	  "whole run. Without -e: one set vcpu_run_ns,vm_exits. An event EV is one\n"
	  "of:\n"
	  "\n"
	  "- a virtual PMD, the hypervisor's events (PMD 256.., no PMC; the list\n"
	  "  below). They have no privilege level (:u is refused).\n"
	  "\n"
	  "- an event of the device's personality by its libpfm4 name, EVENT or\n"
	  "  EVENT:UMASK[:UMASK...] (libpfm4's modifiers too, e.g. :c=2, :e, :i).\n"
	  "  The CPU model is the personality's, never the CPU's (the host runs the\n"
	  "  guest's PMCs as the personality describes them): amd64 = libpfm4's\n"
	  "  amd64_fam10h_barcelona, amd64-k8 = amd64_k8_revg, intel_arch =\n"
	  "  ix86arch. pfmon -l lists them all with their PMC value and whether the\n"
	  "  host can back each one (each is written to PMC0 of a scratch context:\n"
	  "  accepted, accepted as emulated by the admin's event map, or refused\n"
	  "  with PFM_REG_RETFL_NOTAVAIL).\n"
	  "\n"
	  "- one of perf's generic names, for the vendor's libpfm4 event: cycles,\n"
	  "  instructions, branches, branch_misses; dcache_accesses, dcache_misses\n"
	  "  (AMD); ref_cycles, llc_references, llc_misses (Intel).\n"
	  "\n"
	  "- rHEX: perf's raw form, the PERFEVTSEL bits without USR, OS, INT and\n"
	  "  EN, which pfmon sets (event select 7:0, unit mask 15:8, edge 18,\n"
	  "  invert 23, counter mask 31:24; on AMD event select 11:8 in 35:32).\n"
	  "\n"
	  "EV:u, EV:k, EV:uk set one hardware event's privilege levels; -u/-k set\n"
	  "the default. An event whose encoding the personality cannot hold (a bit\n"
	  "reserved in pmu_desc/pmc0/rsvd_msk, or an event needing a second\n"
	  "register) is refused with a message saying so; an event the host cannot\n"
	  "back is refused when the PMC is written (PFM_REG_RETFL_NOTAVAIL), never\n"
	  "counted as zero. When the host could back it but a VM with KVM's\n"
	  "mediated vPMU holds the host's PMU (PVPFM_REG_RETFL_HOST_MEDIATED beside\n"
	  "NOTAVAIL; a load that opens the counters fails with EOPNOTSUPP for the\n"
	  "same cause), pfmon says so: that is the host's operator's choice\n"
	  "(kvm-perfmon's doc/ADMIN.md, \"Mediated vPMU\"); pfmon -l marks such\n"
	  "events \"not available now\"." },
	{ .title = "VIRTUAL PMDS", .text_fn = vpmds_section },
	{ .title = "WHAT IS MONITORED", .text =
	  "By default COMMAND is monitored per thread: the child loads the context on\n"
	  "itself, starts it and execs; the context follows the thread through exec\n"
	  "and is unloaded at its exit (PFM_MSG_END). Threads and children the\n"
	  "command creates are not counted unless followed: perf inherits counters\n"
	  "into them by default, but perfmon2 has no inheritance (a context is\n"
	  "attached to one thread), so following costs a context per task and a\n"
	  "ptrace stop at each creation, and pfmon keeps the original pfmon's\n"
	  "default of not following.\n"
	  "\n"
	  "With --follow-* pfmon traces the command (and, with --attach-task, the\n"
	  "attached thread): every task created of the kinds asked for stops at its\n"
	  "start, pfmon creates, programs, loads (as its tracer, perfmon2's right\n"
	  "to attach) and starts a context for it, and reads it when the task\n"
	  "exits; results are printed per task (taskTID: in text, target taskTID in\n"
	  "CSV/JSON), or summed (tasksN) with --aggregate-results. A run may create\n"
	  "any number of tasks; contexts count against the guest's\n"
	  "controls/max_ctx_per_user, the host's max_contexts and RLIMIT_NOFILE\n"
	  "(pfmon raises its soft limit to the hard one): a task that gets none runs\n"
	  "on unmonitored, said on stderr, and the count of such tasks ends the run.\n"
	  "pfmon never ends a task it follows: when the session ends first (a\n"
	  "signal to pfmon once COMMAND has ended, -t or a signal for an attached\n"
	  "task, or a failure of pfmon's), it reads their contexts and lets every\n"
	  "traced task go. With --smpl-period every followed task samples (-I\n"
	  "refuses --follow-*).\n"
	  "\n"
	  "--system-wide loads a context on every CPU pfmon may run on (or each of\n"
	  "--cpu-list), from that CPU, and prints each CPU's counts (cpuN) and their\n"
	  "sum (cpusN), or only the sum with --aggregate-results. --attach-task and\n"
	  "--system-wide without COMMAND last until the task exits, -t SECS pass or\n"
	  "SIGINT or SIGTERM comes; then pfmon stops and reads the contexts, unloads\n"
	  "them and prints the counts." },
	{ .title = "SIGNALS", .text =
	  "SIGINT, SIGTERM and SIGHUP end the session and pfmon prints what it\n"
	  "gathered, as perf does; they do not kill pfmon. With COMMAND the session\n"
	  "ends when COMMAND does: a signal from the terminal (Ctrl-C, a hangup)\n"
	  "reached COMMAND too, in the same foreground process group; one that a\n"
	  "process sent to pfmon (kill(1)) pfmon passes on to COMMAND. COMMAND ends\n"
	  "as it handles the signal, and pfmon prints the counts (and the profile)\n"
	  "and exits with COMMAND's status, 128+N if signal N killed it. A signal\n"
	  "sent to the whole process group reaches COMMAND twice." },
	{ .title = "SAMPLING", .text =
	  "The sampling PMD is programmed with -N (short and long reset -N) on\n"
	  "every context of the session (COMMAND's first thread, each task\n"
	  "--follow-* gives one, an attached task, each CPU of --system-wide), each\n"
	  "with the \"default\" format (its buffer --smpl-buf-size, mmap()ed); a full buffer\n"
	  "(PFM_MSG_OVFL) is drained and pfm_restart'ed. One profile covers them\n"
	  "all; when more than one thread was sampled, a second table says how many\n"
	  "samples each thread (tid, pid, program) took. Sample IPs are resolved at\n"
	  "the end, each against its own process. A system-wide sample names no\n"
	  "thread (the host writes it and does not know the guest's current one):\n"
	  "its kernel IP is resolved, its user IP said to belong to no process\n"
	  "named. Then:\n"
	  "\n"
	  "- user IPs with libdwfl against the process's memory map, read from\n"
	  "  /proc/PID/maps while it runs (each time pfmon polls, every 200 ms at\n"
	  "  most, and the buffers' new entries with it; the last copy is used, since\n"
	  "  the process is gone at the end): a program's own functions by name,\n"
	  "  the others as func [libc.so.6];\n"
	  "\n"
	  "- C++ and Rust names demangled (libiberty's cplus_demangle);\n"
	  "\n"
	  "- code a JIT compiler made, in no file, by the map the process wrote as\n"
	  "  perf's convention has it, /tmp/perf-PID.map (lines START SIZE NAME, in\n"
	  "  hex): func [perf-PID.map];\n"
	  "\n"
	  "- the vDSO (no file) at the same offset in pfmon's own vDSO: the image is\n"
	  "  the kernel's, the same in every process;\n"
	  "\n"
	  "- guest kernel IPs with /proc/kallsyms (modules included): func [kernel],\n"
	  "  func [module]. As for perf, the addresses there need root (or\n"
	  "  kernel.kptr_restrict=0): an unprivileged user gets one line [guest\n"
	  "  kernel: no symbols] and a message saying why;\n"
	  "\n"
	  "- IP 0: a guest kernel sample that perfmon2 hid from a user without\n"
	  "  CAP_PERFMON (controls/user_kernel_ip), said as such.\n"
	  "\n"
	  "--smpl-outfile FILE writes, as text, a \"pfmon-samples 2\" line, what\n"
	  "was sampled (target), the event and period, then every entry of the\n"
	  "sampling buffers as drained (entry tid= pid= ip= tstamp= cpu= set=\n"
	  "ovfl_pmd= last_reset=, the default format's fields), then for each\n"
	  "sampled process a line space PID PROGRAM and its last memory map.\n"
	  "pfmon --report FILE [--smpl-per-*] [-o OUT] resolves them later (a\n"
	  "\"pfmon-samples 1\" file too: one process, exe and maps lines),\n"
	  "needing no perfmon2: the map's files must still be there, and kernel IPs\n"
	  "are resolved with the /proc/kallsyms of where it runs (the same guest\n"
	  "kernel, or they resolve wrong).\n"
	  "\n"
	  "--report FILE --profile-format perf-script prints the samples as perf\n"
	  "script prints them (a line per sample: program, pid/tid, [cpu], time,\n"
	  "period, event; the frame below: address, function+offset, (file); a\n"
	  "blank line; in time order), which FlameGraph's stackcollapse-perf.pl,\n"
	  "speedscope, the Firefox Profiler and hotspot import; --profile-format\n"
	  "folded prints folded stacks (program;function COUNT), which\n"
	  "flamegraph.pl draws. The frames are one deep: the default format records\n"
	  "the IP, not its callers.\n"
	  "\n"
	  "Entries below 0.2% of the samples, or past the 40th, are summed in one\n"
	  "line [N more, none above X%]. The profile and the counts before it are\n"
	  "text only: --smpl-period refuses -x and --json." },
	{ .title = "OUTPUT", .text =
	  "Per event: the count scaled to the whole run, its raw value, the set's\n"
	  "share of the run (set %) and how much of the time the set's host\n"
	  "counters were enabled the host actually ran them (host %, from\n"
	  "set_reserved3 of pfm_getinfo_evtsets: PVPFM_SETINFO_HOST_*, summed by\n"
	  "the host over the set's PMDs, so the same for every event of a set):\n"
	  "\n"
	  "  count = raw * (all sets' active time / the set's active time)\n"
	  "              * (host enabled / host running)\n"
	  "\n"
	  "each factor 1 when nothing was taken away. When the host ran a set's\n"
	  "counters less than 99% of the time they were enabled, pfmon warns on\n"
	  "stderr (host contention). Text (the default):\n"
	  "\n"
	  "  set 0: 12 runs, active 999.1 ms of 2001.3 ms (49.9%), host ran its counters 100.0% of the time enabled\n"
	  "               1,234,567 vcpu_run_ns              (raw 616,280; set 49.9%; host 100.0%)\n"
	  "\n"
	  "CSV (-x ,): a header line, then one line per event (per interval with\n"
	  "-I), the fields time,target,set,event,count,raw,set_runs,set_active_ns,\n"
	  "set_pct,host_enabled_ns,host_running_ns,host_pct,emulated: time (s since\n"
	  "the start) only with -I; target task, cpuN or taskPID; host_pct empty\n"
	  "when the host reported no enabled time; emulated 0 or 1. SEP is one\n"
	  "punctuation character other than those event names hold (: . _ - = + \"\n"
	  "' %), or \\t. --json: one object per line with the same keys (no time\n"
	  "without -I; host_pct null when unknown; emulated true/false), as perf\n"
	  "stat's JSON lines.\n"
	  "\n"
	  "-I MS (a command counted per thread): the deltas of every interval, then\n"
	  "of the last part when the command ends; no totals, as perf stat -I." },
	{ .title = NULL }
};

static const struct cli_section after_exit[] = {
	{ .title = "ERRORS", .text =
	  "Errors name the cause: unknown event or unit mask, an event the\n"
	  "personality cannot express, an event the host cannot back\n"
	  "(PFM_REG_RETFL_NOTAVAIL) or cannot back while KVM's mediated vPMU holds\n"
	  "its PMU (PVPFM_REG_RETFL_HOST_MEDIATED), more hardware events than\n"
	  "counters in one set (use another -e), no perfmon2.ko, missing permission\n"
	  "(controls/task_group, sys_group), ptrace rights for --attach-task." },
	{ .title = NULL }
};

static const struct cli_exit exits[] = {
	{ PFMON_EXIT_FAIL,
	  "pfmon failed (bad argument, no perfmon2, an event unknown, not\n"
	  "expressible or refused by the host, ...; the message says which)" },
	{ PFMON_EXIT_NOEXEC,
	  "COMMAND could not be executed" },
	{ PFMON_EXIT_NOTFOUND,
	  "COMMAND was not found" },
	{ 0, NULL }
};

const struct cli_program pfmon_cli = {
	.name = "pfmon",
	.man_section = 1,
	.summary = "count and sample events of a command, CPUs or a task with "
		   "perfmon2 in a kvm-perfmon guest",
	.synopsis = "[OPTIONS] [--] COMMAND [ARG...]\n"
		    "[OPTIONS] --system-wide [--cpu-list L] [-t SECS | -- COMMAND [ARG...]]\n"
		    "[OPTIONS] --attach-task PID [-t SECS]\n"
		    "-l | --help | --version",
	.description =
		"Count, or sample, events of a command (per thread), of CPUs or of a task\n"
		"with perfmon2 in a guest with the pv-perfmon device (perfmon2.ko loaded).",
	.options = options,
	.stop_at_operand = true,
	.before_exit = before_exit,
	.exit_intro =
		"COMMAND's exit status; 128+N if signal N killed it; 0 for -l,\n"
		"--attach-task, --system-wide without COMMAND, --help and --version,\n"
		"whether the session ended by itself, by -t or by a signal. pfmon's\n"
		"own, apart from the command's as env(1) and timeout(1) keep theirs:",
	.exits = exits,
	.after_exit = after_exit,
	.files =
		"= /sys/kernel/perfmon\n"
		"perfmon2.ko's interface: version, pmu_desc (the personality's model and\n"
		"registers), controls, the device's features\n"
		"\n"
		"= /proc/PID/maps, /proc/kallsyms\n"
		"the command's memory map and the guest kernel's symbols, for the profile",
	.see_also = "perf-stat(1), perf-record(1), kvm-perfmon-stat(8)",
};
