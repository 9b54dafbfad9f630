// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's metrics (exposition.h): per VM, labels vm = its -name
 * and uuid = its -uuid, and the exporter's own. Nothing is kept between
 * reads, nothing is summed over VMs or hosts: fleet views are
 * Prometheus's (federation, remote write).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exposition.h"
#include "host_view.h"
#include "prom_text.h"

/*
 * Distinct guest events per VM with a series of their own in one scrape;
 * the rest are summed under event="other". A guest chooses its events,
 * and the operator's Prometheus must not grow with its choices.
 */
#define MAX_EVENT_LABELS	32
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* the exporter's own, since it started; only one read runs at a time */
static uint64_t reads, read_errors;

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP kvmperfmon_%s %s\n# TYPE kvmperfmon_%s %s\n", name,
		help, name, type);
}

/* vm="..",uuid="..": the labels of every VM's series */
static void vm_labels(FILE *f, const struct snap *s)
{
	fputs("vm=\"", f);
	prom_put_label_value(f, s->name);
	fputs("\",uuid=\"", f);
	prom_put_label_value(f, s->uuid);
	fputc('"', f);
}

/* kvmperfmon_@name{vm="..",uuid=".."[,@key="@val"]} */
static void vm_series(FILE *f, const char *name, const struct snap *s,
		      const char *key, const char *val)
{
	fprintf(f, "kvmperfmon_%s{", name);
	vm_labels(f, s);
	if (key) {
		fprintf(f, ",%s=\"", key);
		prom_put_label_value(f, val);
		fputc('"', f);
	}
	fputs("} ", f);
}

static void vm_u64(FILE *f, const char *name, const struct snap *s,
		   const char *key, const char *val, uint64_t v)
{
	vm_series(f, name, s, key, val);
	fprintf(f, "%" PRIu64 "\n", v);
}

/* one counter of struct kvmpfm_vm_stats, for every VM */
struct vm_counter {
	const char *name;
	size_t off;
	const char *help;
};

#define VM_COUNTER(n, field, h) \
	{ n, offsetof(struct kvmpfm_vm_stats, field), h }

static const struct vm_counter vm_counters[] = {
	VM_COUNTER("overflows_total", overflows,
		   "Counter overflows the host handled for the VM."),
	VM_COUNTER("throttled_total", throttled,
		   "Overflows held back by the host's per-VM rate bound."),
	VM_COUNTER("samples_total", samples,
		   "Samples written into the guests' sampling buffers."),
	VM_COUNTER("samples_lost_total", samples_lost,
		   "Samples lost: buffer full or guest memory not writable."),
	VM_COUNTER("messages_total", messages,
		   "Overflow and end messages queued for the guests."),
	VM_COUNTER("messages_lost_total", messages_lost,
		   "Messages lost to a full queue."),
	VM_COUNTER("notifications_total", notifications,
		   "Interrupts the host sent the guest (eventfd signals)."),
	VM_COUNTER("set_switches_total", set_switches,
		   "Event set switches the host made for the guests."),
	VM_COUNTER("doorbells_total", doorbells,
		   "Guest calls served, one VM exit each (DOORBELL)."),
};

/*
 * Refusal causes: a fixed set, so that a series exists from the VM's
 * first scrape (rate() needs its zero) and a guest cannot add series.
 * NOTAVAIL: an event the host cannot count; FILTERED: the operator's
 * filter; MEDIATED: a VM with KVM's mediated vPMU holds the host's PMU;
 * then the errnos the module returns; any other is "other".
 */
static const char *const causes[] = {
	"NOTAVAIL", "FILTERED", "MEDIATED", "EINVAL", "EBUSY", "EMFILE",
	"ENOSPC", "E2BIG", "ENOMEM", "EFAULT", "EBADF", "ENOSYS", "ENOENT",
	"EPERM", "EACCES", "EAGAIN", "other",
};
#define NR_CAUSES	ARRAY_SIZE(causes)

static void add_cause(const char *cause, uint64_t n, void *arg)
{
	uint64_t *by = arg;
	unsigned int i;

	for (i = 0; i < NR_CAUSES - 1 && strcmp(causes[i], cause); i++)
		;
	by[i] += n;
}

/* the host time of one (vCPU, guest event): summed over its records */
struct ev_time {
	uint32_t vcpu;
	char event[40];
	uint64_t enabled, running;
};

/*
 * The VM's events by (vCPU, guest event), at most MAX_EVENT_LABELS
 * distinct events, the rest under "other"; *@nr of them. NULL on no
 * memory.
 */
static struct ev_time *event_times(const struct snap *s, unsigned int *nr)
{
	const struct kvmpfm_snap_event *e;
	struct ev_time *t;
	unsigned int i, j, k, names = 0;
	char name[40];

	*nr = 0;
	t = calloc(s->vm.nr_events ? s->vm.nr_events : 1, sizeof(*t));
	if (!t)
		return NULL;
	for (i = 0; (e = snap_event(s, i)); i++) {
		snap_guest_event_name(e, name, sizeof(name));
		/* a new event name past the bound: "other" */
		for (k = 0; k < *nr && strcmp(t[k].event, name); k++)
			;
		if (k == *nr && names >= MAX_EVENT_LABELS)
			snprintf(name, sizeof(name), "other");
		for (j = 0; j < *nr && (t[j].vcpu != e->vcpu ||
					strcmp(t[j].event, name)); j++)
			;
		if (j == *nr) {
			if (k == *nr && strcmp(name, "other"))
				names++;
			t[j].vcpu = e->vcpu;
			snprintf(t[j].event, sizeof(t[j].event), "%s", name);
			(*nr)++;
		}
		t[j].enabled += e->time_enabled;
		t[j].running += e->time_running;
	}
	return t;
}

static void vm_events(FILE *f, const struct snap_set *set, bool running)
{
	unsigned int i, j, nr;
	struct ev_time *t;

	for (i = 0; i < set->nr; i++) {
		const struct snap *s = &set->vms[i];

		t = event_times(s, &nr);
		for (j = 0; t && j < nr; j++) {
			fprintf(f, "kvmperfmon_event_%s_seconds_total{",
				running ? "running" : "enabled");
			vm_labels(f, s);
			fprintf(f, ",vcpu=\"%u\",event=\"", t[j].vcpu);
			prom_put_label_value(f, t[j].event);
			fprintf(f, "\"} %.9f\n", (running ? t[j].running :
					       t[j].enabled) / 1e9);
		}
		free(t);
	}
}

static void vm_metrics(FILE *f, const struct snap_set *set)
{
	static const uint32_t states[] = {
		KVMPFM_CTX_UNLOADED, KVMPFM_CTX_LOADED, KVMPFM_CTX_MASKED,
	};
	const struct kvmpfm_snap_ctx *c;
	const struct kvmpfm_snap_vcpu *v;
	uint64_t by[NR_CAUSES], n;
	unsigned int i, j, k;
	char num[24];

	family(f, "vm_info", "gauge", "A VM bound to kvm-perfmon: its VMM's "
	       "pid and the PMU personality its guest sees; always 1.");
	for (i = 0; i < set->nr; i++) {
		const struct snap *s = &set->vms[i];

		fputs("kvmperfmon_vm_info{", f);
		vm_labels(f, s);
		fprintf(f, ",pid=\"%d\",personality=\"%s\"} 1\n",
			(int)s->vm.pid,
			snap_personality_name(s->vm.personality));
	}
	family(f, "vm_vcpus", "gauge", "vCPUs of the VM.");
	for (i = 0; i < set->nr; i++)
		vm_u64(f, "vm_vcpus", &set->vms[i], NULL, NULL,
		       set->vms[i].vm.nr_vcpus);
	family(f, "vm_contexts", "gauge",
	       "perfmon2 contexts of the VM's guests, by state.");
	for (i = 0; i < set->nr; i++) {
		const struct snap *s = &set->vms[i];

		for (k = 0; k < ARRAY_SIZE(states); k++) {
			for (n = 0, j = 0; (c = snap_ctx(s, j)); j++)
				n += c->state == states[k];
			vm_u64(f, "vm_contexts", s, "state",
			       snap_ctx_state_name(states[k]), n);
		}
	}
	family(f, "vm_events", "gauge",
	       "Host counters in use for the VM's guests.");
	for (i = 0; i < set->nr; i++)
		vm_u64(f, "vm_events", &set->vms[i], NULL, NULL,
		       set->vms[i].vm.stats.active_counters);

	family(f, "calls_total", "counter",
	       "perfmon2 calls of the VM's guests, by command.");
	for (i = 0; i < set->nr; i++)
		for (k = 1; k < KVMPFM_SNAP_CALLS; k++)
			if (snap_call_name(k))
				vm_u64(f, "calls_total", &set->vms[i],
				       "command", snap_call_name(k),
				       set->vms[i].vm.calls[k]);
	family(f, "refused_total", "counter",
	       "Failed calls of the VM's guests, by cause: NOTAVAIL (an event "
	       "the host cannot count), FILTERED (the operator's filter), "
	       "MEDIATED (a VM with KVM's mediated vPMU holds the host's "
	       "PMU), or the errno.");
	for (i = 0; i < set->nr; i++) {
		memset(by, 0, sizeof(by));
		snap_for_each_cause(&set->vms[i], add_cause, by);
		for (k = 0; k < NR_CAUSES; k++)
			vm_u64(f, "refused_total", &set->vms[i], "cause",
			       causes[k], by[k]);
	}
	for (k = 0; k < ARRAY_SIZE(vm_counters); k++) {
		const struct vm_counter *m = &vm_counters[k];

		family(f, m->name, "counter", m->help);
		for (i = 0; i < set->nr; i++)
			vm_u64(f, m->name, &set->vms[i], NULL, NULL,
			       *(const uint64_t *)((const char *)
						   &set->vms[i].vm.stats +
						   m->off));
	}
	family(f, "vcpu_doorbells_total", "counter",
	       "Guest calls served on each vCPU.");
	for (i = 0; i < set->nr; i++)
		for (j = 0; (v = snap_vcpu(&set->vms[i], j)); j++) {
			snprintf(num, sizeof(num), "%u", v->index);
			vm_u64(f, "vcpu_doorbells_total", &set->vms[i], "vcpu",
			       num, v->doorbells);
		}

	family(f, "event_enabled_seconds_total", "counter",
	       "Host time the guest's events were enabled, by vCPU and guest "
	       "event, since their context's counters opened, as of the "
	       "host's last update (schedule in or out, read).");
	vm_events(f, set, false);
	family(f, "event_running_seconds_total", "counter",
	       "Host time the guest's events actually had a host counter: "
	       "below enabled time, the host took counters away.");
	vm_events(f, set, true);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct scrape *exposition_scrape(void *arg)
{
	struct host_view v;
	double t0 = now_s();
	struct scrape *s;
	char err[256];
	FILE *f;
	int ret;

	(void)arg;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	f = open_memstream(&s->text, &s->len);
	if (!f) {
		free(s);
		return NULL;
	}
	ret = host_view_read(&v, err, sizeof(err));
	s->exit_code = ret;
	reads++;
	if (ret) {
		read_errors++;
		fprintf(stderr, "kvm-perfmon-exporter: %s\n", err);
	}

	family(f, "up", "gauge", "1 if kvm-perfmon's operator interface "
	       "answered this scrape, else 0 (the exporter's log says why).");
	fprintf(f, "kvmperfmon_up %d\n", !ret);
	family(f, "scrape_errors_total", "counter",
	       "Reads of kvm-perfmon that failed, since the exporter "
	       "started.");
	fprintf(f, "kvmperfmon_scrape_errors_total %" PRIu64 "\n",
		read_errors);
	family(f, "snapshots_total", "counter",
	       "Reads of kvm-perfmon, since the exporter started: at most "
	       "one per second, shared by the requests within it.");
	fprintf(f, "kvmperfmon_snapshots_total %" PRIu64 "\n", reads);
	if (!ret) {
		family(f, "vms", "gauge", "VMs bound to kvm-perfmon.");
		fprintf(f, "kvmperfmon_vms %u\n", v.set.nr);
	}
	if (v.have_ms) {
		family(f, "host_perf_events", "gauge",
		       "Host perf events kvm-perfmon holds for all VMs.");
		fprintf(f, "kvmperfmon_host_perf_events %" PRId64 "\n",
			(int64_t)v.ms.perf_events);
		family(f, "pinned_pages", "gauge",
		       "Guest pages registered for sampling buffers (not pinned).");
		fprintf(f, "kvmperfmon_pinned_pages %" PRId64 "\n",
			(int64_t)v.ms.pinned_pages);
		family(f, "host_mediated_total", "counter",
		       "Guest PMU events perf refused because a VM with KVM's "
		       "mediated vPMU held the host's PMU, all VMs since "
		       "kvm-perfmon.ko was loaded.");
		fprintf(f, "kvmperfmon_host_mediated_total %" PRIu64 "\n",
			(uint64_t)v.ms.host_mediated);
	}
	if (!ret)
		vm_metrics(f, &v.set);
	snap_set_free(&v.set);
	family(f, "scrape_duration_seconds", "gauge",
	       "Time the read of every VM and its formatting took.");
	fprintf(f, "kvmperfmon_scrape_duration_seconds %.6f\n", now_s() - t0);
	if (fclose(f)) {
		free(s->text);
		free(s);
		return NULL;
	}
	return s;
}
