// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-perfmon-stat: what every VM on this host does with the counters
 * kvm-perfmon lends it, as `virsh domstats` and `kvm_stat` show KVM's.
 * Its options and manual: cli below (--help, kvm-perfmon-stat(8)).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "guest_events.h"
#include "operator_filter.h"
#include "stat_table.h"
#include "snapshot.h"
#include "vm_cost.h"
#include "include/uapi/perfmon2.h"

enum {
	OPT_VM = CLI_LONG_ONLY, OPT_NOHEADINGS, OPT_SET_FILTER,
	OPT_CLEAR_FILTER, OPT_SHOW_FILTER,
};

static const struct cli_option options[] = {
	CLI_OPT("vm", OPT_VM, "VM", "one VM in detail: per vCPU, context and event;\n"
		"VM is its name (-name), its VMM's pid or its UUID"),
	CLI_OPT("output", 'o', "LIST", "the table's columns, comma-separated\n"
		"(below); +LIST adds to the default"),
	CLI_OPT("sort", 's', "COLUMN", "rows by COLUMN: numbers high first,\n"
		"names A-Z (default: bind order)"),
	CLI_OPT("raw", 'r', NULL, "the table unaligned, columns separated by a\n"
		"space, as lsblk --raw"),
	CLI_OPT("noheadings", OPT_NOHEADINGS, NULL, "the table without its heading"),
	CLI_OPT("interval", 'i', "SECS", "refresh every SECS seconds (0.1 to 86400),\n"
		"with rates per second"),
	CLI_OPT("count", 'n', "N", "with -i: stop after N refreshes (default: never)"),
	CLI_OPT("json", 'j', NULL, "a JSON document, with a timestamp; with\n"
		"--interval one per refresh, each on one line (NDJSON)"),
	CLI_OPT("set-filter", OPT_SET_FILTER, "FILE", "with --vm: the operator's event filter of\n"
		"the VM from FILE (- for standard input), in\n"
		"the format of pv-perfmon's filter= file;\n"
		"the VMM cannot change or clear it"),
	CLI_OPT("clear-filter", OPT_CLEAR_FILTER, NULL, "with --vm: no operator's filter for the VM"),
	CLI_OPT("show-filter", OPT_SHOW_FILTER, NULL, "with --vm: the operator's filter as a file\n"
		"--set-filter reads back"),
	CLI_HELP_OPT,
	CLI_VERSION_OPT,
	CLI_NOTE_FN(stat_table_columns_help),
	CLI_END
};

static const struct cli_program cli = {
	.name = "kvm-perfmon-stat",
	SNAP_CLI_COMMON,
	.summary = "what each VM on this host does with kvm-perfmon's counters",
	.description =
"Show what each VM on this host does with kvm-perfmon's counters, as\n"
"virsh domstats and kvm_stat show KVM's.\n"
"\n"
"The table has a row per VM, its columns below, fitted to the terminal\n"
"(names are never cut). With --interval its counts are per second and\n"
"RUN% is over the interval. --vm shows refused calls by cause: NOTAVAIL,\n"
"the host cannot count the event; FILTERED, a filter refused it;\n"
"MEDIATED, a VM with KVM's mediated vPMU holds the host's PMU; else the\n"
"errno.\n"
"\n"
"Needs root or CAP_PERFMON: the view covers every user's VMs.",
	.options = options,
	.files = SNAP_CLI_FILE_DEVICE,
	.see_also = "kvm-perfmon-exporter(8), kvm-perfmon-libvirt-config(8), "
		    "pfmon(1), virsh(1)",
};

/* what --vm does when it does more than show */
enum filter_action { FILTER_NONE, FILTER_SET, FILTER_CLEAR, FILTER_SHOW };

struct opts {
	const char *vm;
	enum filter_action filter;
	const char *filter_file;
	double interval;
	long count;
	bool json;
	struct stat_table_opts table;
};

/* ---- text ------------------------------------------------------------- */

/* what the operator does about a cause, where there is something to do */
static const struct {
	const char *cause;
	const char *hint;
} cause_hints[] = {
	{ "MEDIATED", "a VM with KVM's mediated vPMU holds the host's PMU: "
		      "guest PMU events are refused while it runs "
		      "(kvm_intel/kvm_amd enable_mediated_pmu; "
		      "doc/ADMIN.md, \"Mediated vPMU\")" },
};

static void print_cause(const char *cause, uint64_t n, void *arg)
{
	unsigned int i;

	(void)arg;
	printf("  %-16s %" PRIu64 "\n", cause, n);
	for (i = 0; i < sizeof(cause_hints) / sizeof(cause_hints[0]); i++)
		if (!strcmp(cause, cause_hints[i].cause))
			printf("  %-16s (%s)\n", "", cause_hints[i].hint);
}

/* the operator's filter (filter_*) and the VMM's own (vmm_filter_*) */
static const char *filter_action(uint32_t action)
{
	return event_filter_action_name(action) ?: "?";
}

/* both filters' events, as their filter files have them */
static void print_filters(int fd, const struct snap *s)
{
	struct kvmpfm_event_filter *f;
	char err[160];
	int vmm;

	for (vmm = 0; vmm < 2; vmm++) {
		printf("\n%s filter:", vmm ? "the VMM's" : "the operator's");
		f = operator_filter_get(fd, s->vm.id, vmm, err, sizeof(err));
		if (!f) {
			printf(" %s\n", err);
			continue;
		}
		if (f->action == KVMPFM_FILTER_DENY && !f->nr) {
			printf(" none\n");
		} else {
			putchar('\n');
			operator_filter_print(stdout, f);
		}
		free(f);
	}
}

/* pv-perfmon's share of the VM's exits and time */
static void print_cost(const struct snap *s)
{
	struct vm_cost c;

	vm_cost_read(s, &c);
	printf("\npv-perfmon's share: %" PRIu64 " doorbells", c.doorbells);
	if (c.have_exits)
		printf(", %.2f%% of %" PRIu64 " exits, %.2f%% of %" PRIu64
		       " MMIO exits to the VMM", vm_cost_percent(c.doorbells,
								c.exits),
		       c.exits, vm_cost_percent(c.doorbells, c.mmio_exits),
		       c.mmio_exits);
	else
		printf(" (KVM's exit counts: root, with debugfs at "
		       "/sys/kernel/debug)");
	printf("; %.3f ms in the module", c.doorbell_ns / 1e6);
	if (c.have_vcpu_ns)
		printf(", %.3f%% of %.3f s vCPU time",
		       vm_cost_percent(c.doorbell_ns, c.vcpu_ns), c.vcpu_ns / 1e9);
	printf("\n");
}

static void print_detail(int fd, const struct snap *s)
{
	const struct kvmpfm_vm_stats *st = &s->vm.stats;
	const struct kvmpfm_snap_vcpu *v;
	const struct kvmpfm_snap_ctx *c;
	const struct kvmpfm_snap_event *e;
	char g[40], h[48];
	unsigned int i;

	printf("VM %s  pid %d  uuid %s  id %" PRIu64 "\n", s->name,
	       (int)s->vm.pid, s->uuid[0] ? s->uuid : "-", (uint64_t)s->vm.id);
	printf("personality %s, %u counters; limits: %u contexts, %u sets, "
	       "%u entries per call, %" PRIu64 " bytes per buffer; filters: "
	       "operator's %s of %u events, VMM's %s of %u events\n",
	       snap_personality_name(s->vm.personality), s->vm.counters,
	       s->vm.max_contexts, s->vm.max_sets, s->vm.max_vector,
	       (uint64_t)s->vm.max_smpl_buf, filter_action(s->vm.filter_action),
	       s->vm.filter_nr, filter_action(s->vm.vmm_filter_action),
	       s->vm.vmm_filter_nr);
	printf("calls %" PRIu64 ", doorbells %" PRIu64 ", overflows %" PRIu64
	       ", throttled %" PRIu64 ", samples %" PRIu64 " (lost %" PRIu64
	       "), messages %" PRIu64 " (lost %" PRIu64 "), notifications %"
	       PRIu64 ", set switches %" PRIu64 "\n",
	       (uint64_t)st->commands, (uint64_t)st->doorbells,
	       (uint64_t)st->overflows, (uint64_t)st->throttled,
	       (uint64_t)st->samples, (uint64_t)st->samples_lost,
	       (uint64_t)st->messages, (uint64_t)st->messages_lost,
	       (uint64_t)st->notifications, (uint64_t)st->set_switches);
	printf("host perf's limits: throttled %" PRIu64 " times, periods "
	       "raised %" PRIu64 ", overflows late %" PRIu64 "\n",
	       (uint64_t)s->vm.host_throttles, (uint64_t)s->vm.periods_raised,
	       (uint64_t)s->vm.late_overflows);
	print_cost(s);
	print_filters(fd, s);

	printf("\ncalls by command:\n");
	for (i = 1; i < KVMPFM_SNAP_CALLS; i++)
		if (s->vm.calls[i] && snap_call_name(i))
			printf("  %-16s %" PRIu64 "\n", snap_call_name(i),
			       (uint64_t)s->vm.calls[i]);
	printf("\nrefused calls by cause:%s\n",
	       snap_refusals(s) ? "" : " none");
	snap_for_each_cause(s, print_cause, NULL);

	printf("\n%5s %8s %6s %8s %10s\n", "VCPU", "TID", "CTX", "COUNTERS",
	       "DOORBELLS");
	for (i = 0; (v = snap_vcpu(s, i)); i++)
		printf("%5u %8d %6u %8u %10" PRIu64 "\n", v->index,
		       (int)v->host_tid, v->ctx_id, v->counters_open,
		       (uint64_t)v->doorbells);

	printf("\n%6s %-8s %-11s %5s %8s %5s %6s %9s %9s %5s\n", "CTX",
	       "STATE", "KIND", "VCPU", "TID/CPU", "SETS", "ACTIVE", "SET-RUNS",
	       "SAMPLES", "MSGS");
	for (i = 0; (c = snap_ctx(s, i)); i++)
		printf("%6u %-8s %-11s %5d %8u %5u %6u %9" PRIu64 " %9" PRIu64
		       " %5u\n", c->id, snap_ctx_state_name(c->state),
		       c->system_wide ? "system-wide" : "per-thread", c->vcpu,
		       c->load_pid, c->nr_sets, c->active_set,
		       (uint64_t)c->set_runs, (uint64_t)c->samples,
		       c->msgs_queued);

	printf("\n%5s %6s %4s %4s %-22s %-24s %-8s %6s\n", "VCPU", "CTX", "SET",
	       "PMD", "GUEST EVENT", "HOST EVENT", "EMULATED", "RUN%");
	for (i = 0; (e = snap_event(s, i)); i++)
		printf("%5u %6u %4u %4u %-22s %-24s %-8s %6.1f\n", e->vcpu,
		       e->ctx_id, e->set, e->pmd,
		       guest_event_name(s->vm.personality, e, g,
					 sizeof(g)),
		       snap_host_event_name(e, h, sizeof(h)),
		       e->flags & KVMPFM_SNAP_EV_EMULATED ? "yes" : "no",
		       e->time_enabled ?
		       100.0 * e->time_running / e->time_enabled : 100.0);
}

/* ---- JSON -------------------------------------------------------------- */

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static void json_cause(const char *cause, uint64_t n, void *arg)
{
	add_u64(arg, cause, n);
}

/* a filter: its action, its events as its file's lines */
static json_object *json_filter(int fd, const struct snap *s, bool vmm)
{
	json_object *r = json_object_new_object(), *a;
	struct kvmpfm_event_filter *f;
	char line[64];
	__u32 i;

	f = operator_filter_get(fd, s->vm.id, vmm, line, sizeof(line));
	add_str(r, "action", filter_action(f ? f->action :
				vmm ? s->vm.vmm_filter_action :
				s->vm.filter_action));
	add_u64(r, "events", f ? f->nr : vmm ? s->vm.vmm_filter_nr :
					       s->vm.filter_nr);
	if (!f)
		return r;
	json_object_object_add(r, "lines", a = json_object_new_array());
	for (i = 0; i < f->nr; i++) {
		event_filter_line(&f->events[i], line, sizeof(line));
		json_object_array_add(a, json_object_new_string(line));
	}
	free(f);
	return r;
}

static json_object *json_cost(const struct snap *s)
{
	json_object *r = json_object_new_object();
	struct vm_cost c;

	vm_cost_read(s, &c);
	add_u64(r, "doorbells", c.doorbells);
	add_u64(r, "doorbell_ns", c.doorbell_ns);
	json_object_object_add(r, "exits", c.have_exits ?
			       json_object_new_uint64(c.exits) : NULL);
	json_object_object_add(r, "mmio_exits", c.have_exits ?
			       json_object_new_uint64(c.mmio_exits) : NULL);
	json_object_object_add(r, "vcpu_ns", c.have_vcpu_ns ?
			       json_object_new_uint64(c.vcpu_ns) : NULL);
	return r;
}

static json_object *json_vm(int fd, const struct snap *s, bool detail)
{
	const struct kvmpfm_vm_stats *st = &s->vm.stats;
	json_object *o = json_object_new_object(), *a, *r;
	const struct kvmpfm_snap_vcpu *v;
	const struct kvmpfm_snap_ctx *c;
	const struct kvmpfm_snap_event *e;
	char buf[48];
	unsigned int i;

	add_str(o, "name", s->name);
	add_str(o, "uuid", s->uuid);
	add_u64(o, "id", s->vm.id);
	json_object_object_add(o, "pid", json_object_new_int(s->vm.pid));
	add_str(o, "personality", snap_personality_name(s->vm.personality));
	add_u64(o, "vcpus", s->vm.nr_vcpus);
	add_u64(o, "contexts", st->contexts);
	add_u64(o, "contexts_loaded", st->loaded);
	add_u64(o, "events", st->active_counters);
	json_object_object_add(o, "running_ratio",
			       json_object_new_double(snap_running_ratio(s)));
	add_u64(o, "calls", st->commands);
	add_u64(o, "refused", snap_refusals(s));
	r = json_object_new_object();
	snap_for_each_cause(s, json_cause, r);
	json_object_object_add(o, "refused_by_cause", r);
	add_u64(o, "overflows", st->overflows);
	add_u64(o, "throttled", st->throttled);
	add_u64(o, "host_throttles", s->vm.host_throttles);
	add_u64(o, "periods_raised", s->vm.periods_raised);
	add_u64(o, "late_overflows", s->vm.late_overflows);
	add_u64(o, "samples", st->samples);
	add_u64(o, "samples_lost", st->samples_lost);
	add_u64(o, "messages", st->messages);
	add_u64(o, "messages_lost", st->messages_lost);
	add_u64(o, "notifications", st->notifications);
	add_u64(o, "set_switches", st->set_switches);
	add_u64(o, "doorbells", st->doorbells);
	if (!detail)
		return o;

	r = json_object_new_object();
	for (i = 1; i < KVMPFM_SNAP_CALLS; i++)
		if (s->vm.calls[i] && snap_call_name(i))
			add_u64(r, snap_call_name(i), s->vm.calls[i]);
	json_object_object_add(o, "calls_by_command", r);
	json_object_object_add(o, "limits", r = json_object_new_object());
	add_u64(r, "max_contexts", s->vm.max_contexts);
	add_u64(r, "max_sets", s->vm.max_sets);
	add_u64(r, "max_vector", s->vm.max_vector);
	add_u64(r, "max_smpl_buf", s->vm.max_smpl_buf);
	json_object_object_add(o, "filter", json_filter(fd, s, false));
	json_object_object_add(o, "vmm_filter", json_filter(fd, s, true));
	json_object_object_add(o, "cost", json_cost(s));

	json_object_object_add(o, "vcpu", a = json_object_new_array());
	for (i = 0; (v = snap_vcpu(s, i)); i++) {
		r = json_object_new_object();
		add_u64(r, "index", v->index);
		json_object_object_add(r, "host_tid",
				       json_object_new_int(v->host_tid));
		add_u64(r, "context", v->ctx_id);
		add_u64(r, "counters", v->counters_open);
		add_u64(r, "doorbells", v->doorbells);
		json_object_array_add(a, r);
	}
	json_object_object_add(o, "context", a = json_object_new_array());
	for (i = 0; (c = snap_ctx(s, i)); i++) {
		r = json_object_new_object();
		add_u64(r, "id", c->id);
		add_str(r, "state", snap_ctx_state_name(c->state));
		add_str(r, "kind", c->system_wide ? "system-wide" :
						    "per-thread");
		json_object_object_add(r, "vcpu", json_object_new_int(c->vcpu));
		add_u64(r, "load_pid", c->load_pid);
		add_u64(r, "sets", c->nr_sets);
		add_u64(r, "active_set", c->active_set);
		add_u64(r, "set_runs", c->set_runs);
		add_u64(r, "samples", c->samples);
		add_u64(r, "messages_queued", c->msgs_queued);
		json_object_array_add(a, r);
	}
	json_object_object_add(o, "event", a = json_object_new_array());
	for (i = 0; (e = snap_event(s, i)); i++) {
		r = json_object_new_object();
		add_u64(r, "vcpu", e->vcpu);
		add_u64(r, "context", e->ctx_id);
		add_u64(r, "set", e->set);
		add_u64(r, "pmd", e->pmd);
		add_str(r, "guest_event",
			guest_event_name(s->vm.personality, e, buf,
					 sizeof(buf)));
		add_str(r, "host_event", snap_host_event_name(e, buf,
							      sizeof(buf)));
		json_object_object_add(r, "emulated", json_object_new_boolean(
				e->flags & KVMPFM_SNAP_EV_EMULATED));
		add_u64(r, "time_enabled_ns", e->time_enabled);
		add_u64(r, "time_running_ns", e->time_running);
		json_object_array_add(a, r);
	}
	return o;
}

/* now as RFC 3339 UTC, to the millisecond */
static void add_timestamp(json_object *o)
{
	struct timespec ts;
	char buf[40];
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%03ldZ", ts.tv_nsec / 1000000);
	add_str(o, "timestamp", buf);
}

/* one document; @line: on one line (NDJSON, a refresh each) */
static void print_json(int fd, const struct snap_set *set,
		       const struct snap *one, bool line)
{
	json_object *doc = json_object_new_object(), *a;
	unsigned int i;

	add_timestamp(doc);
	add_u64(doc, "api_version", KVMPFM_API_VERSION);
	json_object_object_add(doc, "vms", a = json_object_new_array());
	for (i = 0; i < set->nr; i++)
		if (!one || one == &set->vms[i])
			json_object_array_add(a, json_vm(fd, &set->vms[i],
							      !!one));
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_NOSLASHESCAPE |
					    (line ? JSON_C_TO_STRING_PLAIN :
					     JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_SPACED)));
	json_object_put(doc);
}

/* ---- main -------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct opts *o)
{
	char *end, err[160];
	int c;

	stat_table_defaults(&o->table);
	while ((c = cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case OPT_VM:
			o->vm = optarg;
			break;
		case 'o':
			if (stat_table_parse_output(&o->table, optarg, err,
						    sizeof(err)))
				goto bad;
			break;
		case 's':
			if (stat_table_parse_sort(&o->table, optarg, err,
						  sizeof(err)))
				goto bad;
			break;
		case 'r':
			o->table.raw = true;
			break;
		case OPT_NOHEADINGS:
			o->table.noheadings = true;
			break;
		case 'i':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || *end || !(o->interval >= 0.1) ||
			    o->interval > 86400) {
				fprintf(stderr, "kvm-perfmon-stat: --interval "
					"'%s': a number of seconds from 0.1 "
					"to 86400\n", optarg);
				return SNAP_EXIT_USAGE;
			}
			break;
		case 'n':
			errno = 0;
			o->count = strtol(optarg, &end, 10);
			if (errno || *end || o->count < 1) {
				fprintf(stderr, "kvm-perfmon-stat: --count "
					"'%s': a positive number\n", optarg);
				return SNAP_EXIT_USAGE;
			}
			break;
		case 'j':
			o->json = true;
			break;
		case OPT_SET_FILTER:
		case OPT_CLEAR_FILTER:
		case OPT_SHOW_FILTER:
			if (o->filter) {
				fprintf(stderr, "kvm-perfmon-stat: one of "
					"--set-filter, --clear-filter and "
					"--show-filter\n");
				return SNAP_EXIT_USAGE;
			}
			o->filter = c == OPT_SET_FILTER ? FILTER_SET :
				    c == OPT_CLEAR_FILTER ? FILTER_CLEAR :
				    FILTER_SHOW;
			o->filter_file = c == OPT_SET_FILTER ? optarg : NULL;
			break;
		default:
			return snap_usage_try_help(cli.name);
		}
	}
	if (optind < argc)
		return snap_usage_operand(cli.name, argv[optind]);
	if (o->filter && (!o->vm || o->interval || o->json)) {
		fprintf(stderr, "kvm-perfmon-stat: --%s-filter needs --vm, "
			"and goes with neither --interval nor --json\n",
			o->filter == FILTER_SET ? "set" :
			o->filter == FILTER_CLEAR ? "clear" : "show");
		return SNAP_EXIT_USAGE;
	}
	if (o->count && !o->interval) {
		fprintf(stderr, "kvm-perfmon-stat: --count needs --interval\n");
		return SNAP_EXIT_USAGE;
	}
	return 0;
bad:
	fprintf(stderr, "kvm-perfmon-stat: %s\n", err);
	return SNAP_EXIT_USAGE;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --set-filter, --clear-filter, --show-filter on VM @s */
static int act_on_filter(int fd, const struct opts *o, const struct snap *s)
{
	struct kvmpfm_event_filter *f;
	char err[256];
	int ret = -1;

	if (o->filter == FILTER_SHOW) {
		f = operator_filter_get(fd, s->vm.id, false, err, sizeof(err));
		if (f) {
			operator_filter_print(stdout, f);
			free(f);
			return 0;
		}
	} else {
		ret = operator_filter_set(fd, s->vm.id, o->filter_file, err,
					  sizeof(err));
		if (!ret)
			return 0;
	}
	fprintf(stderr, "kvm-perfmon-stat: VM %s: %s\n", s->name, err);
	return ret > 0 ? SNAP_EXIT_USAGE :
	       errno == EPERM ? SNAP_EXIT_DENIED : SNAP_EXIT_ERROR;
}

/* one refresh; @prev (may be NULL) is the one before, @secs ago */
static int show(int fd, const struct opts *o, struct snap_set *set,
		const struct snap_set *prev, double secs)
{
	const struct snap *one = NULL;
	char err[256];
	int ret;

	ret = snap_read_all(fd, set, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kvm-perfmon-stat: %s\n", err);
		return ret;
	}
	if (o->vm) {
		one = snap_find(set, o->vm);
		if (!one) {
			fprintf(stderr, "kvm-perfmon-stat: no VM named '%s' "
				"(a name, a VMM pid or a UUID)\n", o->vm);
			return SNAP_EXIT_NO_VM;
		}
	}
	if (o->filter)
		return act_on_filter(fd, o, one);
	if (o->json)
		print_json(fd, set, one, !!o->interval);
	else if (one)
		print_detail(fd, one);
	else if (stat_table_print(stdout, set, prev, secs, &o->table))
		return SNAP_EXIT_ERROR;
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct snap_set sets[2] = { };
	struct opts o = { };
	double t, last = 0;
	char err[256];
	long n;
	int fd, ret, cur = 0;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	guest_events_init();
	fd = snap_open(err, sizeof(err));
	if (fd < 0) {
		ret = snap_open_exit(errno);
		fprintf(stderr, "kvm-perfmon-stat: %s\n", err);
		return ret;
	}
	for (n = 0;; n++) {
		t = now_s();
		ret = show(fd, &o, &sets[cur], n ? &sets[!cur] : NULL,
			   t - last);
		last = t;
		snap_set_free(&sets[!cur]);
		if (ret || !o.interval || (o.count && n + 1 >= o.count))
			break;
		cur = !cur;
		usleep(o.interval * 1e6);
		if (!o.json && isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout);
		else if (!o.json)
			putchar('\n');
	}
	snap_set_free(&sets[cur]);
	close(fd);
	return ret;
}
