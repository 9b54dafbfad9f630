// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's metrics (exposition.h): per VM, one identity label, vm
 * = its -name (its UUID, pid and personality in kvmperfmon_vm_info), and
 * the exporter's own. Only the event series are kept between reads
 * (event_series.h), so that they never go back; nothing is summed over
 * VMs or hosts: fleet views are Prometheus's (federation, remote write).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "exposition.h"
#include "guest_events.h"
#include "host_view.h"
#include "prom_text.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* the exporter's own, since it started; only one read runs at a time */
static uint64_t reads, read_errors;

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP kvmperfmon_%s %s\n# TYPE kvmperfmon_%s %s\n", name,
		help, name, type);
}

/*
 * vm="..": the identity of every VM's series. Two VMs of one name (QEMU
 * does not keep -name unique, libvirt does per driver) are told apart
 * by the module's VM id, so that no two series are the same.
 */
static void vm_labels(FILE *f, const struct snap_set *set,
		      const struct snap *s)
{
	unsigned int i;

	fputs("vm=\"", f);
	prom_put_label_value(f, s->name);
	for (i = 0; i < set->nr && (&set->vms[i] == s ||
				    strcmp(set->vms[i].name, s->name)); i++)
		;
	if (i < set->nr)
		fprintf(f, " (id %" PRIu64 ")", (uint64_t)s->vm.id);
	fputc('"', f);
}

/* kvmperfmon_@name{vm=".."[,@key="@val"]} */
static void vm_series(FILE *f, const char *name, const struct snap_set *set,
		      const struct snap *s, const char *key, const char *val)
{
	fprintf(f, "kvmperfmon_%s{", name);
	vm_labels(f, set, s);
	if (key) {
		fprintf(f, ",%s=\"", key);
		prom_put_label_value(f, val);
		fputc('"', f);
	}
	fputs("} ", f);
}

static void vm_u64(FILE *f, const char *name, const struct snap_set *set,
		   const struct snap *s, const char *key, const char *val,
		   uint64_t v)
{
	vm_series(f, name, set, s, key, val);
	fprintf(f, "%" PRIu64 "\n", v);
}

/* one counter of struct kvmpfm_snap_vm, for every VM */
struct vm_counter {
	const char *name;
	size_t off;
	const char *help;
};

#define VM_COUNTER(n, field, h) \
	{ n, offsetof(struct kvmpfm_snap_vm, field), h }

static const struct vm_counter vm_counters[] = {
	VM_COUNTER("overflows_total", stats.overflows,
		   "Counter overflows the host handled for the VM."),
	VM_COUNTER("throttled_total", stats.throttled,
		   "Overflows held back by the host's per-VM rate bound."),
	VM_COUNTER("host_throttles_total", host_throttles,
		   "Interrupts after which host perf throttled one of the VM's "
		   "events (kernel.perf_event_max_sample_rate): counts or "
		   "samples lost until perf's next tick."),
	VM_COUNTER("periods_raised_total", periods_raised,
		   "Sampling periods the host's PMU driver refused as too short, "
		   "armed longer."),
	VM_COUNTER("late_overflows_total", late_overflows,
		   "Overflows found a period or more late (host perf throttling, "
		   "a late timer): samples not taken."),
	VM_COUNTER("samples_total", stats.samples,
		   "Samples written into the guests' sampling buffers."),
	VM_COUNTER("samples_lost_total", stats.samples_lost,
		   "Samples lost: buffer full, guest memory not writable, or "
		   "overflows throttled or late."),
	VM_COUNTER("messages_total", stats.messages,
		   "Overflow and end messages queued for the guests."),
	VM_COUNTER("messages_lost_total", stats.messages_lost,
		   "Messages lost to a full queue."),
	VM_COUNTER("notifications_total", stats.notifications,
		   "Interrupts the host sent the guest (eventfd signals)."),
	VM_COUNTER("set_switches_total", stats.set_switches,
		   "Event set switches the host made for the guests."),
	VM_COUNTER("doorbells_total", stats.doorbells,
		   "Guest calls served, one VM exit each (DOORBELL)."),
};

/*
 * Refusal causes: a fixed set, so that a guest cannot add series. The
 * operator's own three (NOTAVAIL: an event the host cannot count;
 * FILTERED: the operator's filter; MEDIATED: a VM with KVM's mediated
 * vPMU holds the host's PMU) have a series from the VM's first scrape,
 * which rate() and alerts need; the errnos the module returns, and
 * "other" for any else, once they are not zero.
 */
static const char *const causes[] = {
	"NOTAVAIL", "FILTERED", "MEDIATED", "EINVAL", "EBUSY", "EMFILE",
	"ENOSPC", "E2BIG", "ENOMEM", "EFAULT", "EBADF", "ENOSYS", "ENOENT",
	"EPERM", "EACCES", "EAGAIN", "other",
};
#define NR_CAUSES	ARRAY_SIZE(causes)
#define NR_CAUSES_ALWAYS	3

static void add_cause(const char *cause, uint64_t n, void *arg)
{
	uint64_t *by = arg;
	unsigned int i;

	for (i = 0; i < NR_CAUSES - 1 && strcmp(causes[i], cause); i++)
		;
	by[i] += n;
}

static void vm_events(FILE *f, const struct exposition *x,
		      const struct snap_set *set, bool running)
{
	const struct event_series_vm *v;
	const struct event_series *e;
	unsigned int i, j;

	for (i = 0; i < set->nr; i++) {
		v = event_series_vm(&x->events, set->vms[i].vm.id);
		for (j = 0; v && j < v->nr_series; j++) {
			e = &v->series[j];
			fprintf(f, "kvmperfmon_event_%s_seconds_total{",
				running ? "running" : "enabled");
			vm_labels(f, set, &set->vms[i]);
			if (e->vcpu != EVENT_SERIES_ALL_VCPUS)
				fprintf(f, ",vcpu=\"%u\"", e->vcpu);
			fputs(",event=\"", f);
			prom_put_label_value(f, e->event);
			fprintf(f, "\"} %.9f\n", (running ? e->running_ns :
					       e->enabled_ns) / 1e9);
		}
	}
}

static void vm_info(FILE *f, const struct snap_set *set)
{
	unsigned int i;

	family(f, "vm_info", "gauge", "A VM bound to kvm-perfmon: its UUID "
	       "(libvirt's, the join with other exporters' domain series), "
	       "its VMM's pid and the PMU personality its guest sees; "
	       "always 1.");
	for (i = 0; i < set->nr; i++) {
		const struct snap *s = &set->vms[i];

		fputs("kvmperfmon_vm_info{", f);
		vm_labels(f, set, s);
		fputs(",uuid=\"", f);
		prom_put_label_value(f, s->uuid);
		fprintf(f, "\",pid=\"%d\",personality=\"%s\"} 1\n",
			(int)s->vm.pid,
			snap_personality_name(s->vm.personality));
	}
}

static void vm_calls(FILE *f, const struct snap_set *set)
{
	uint64_t by[NR_CAUSES];
	unsigned int i, k;

	family(f, "calls_total", "counter",
	       "perfmon2 calls of the VM's guests, by command; a command's "
	       "series from its first call.");
	for (i = 0; i < set->nr; i++)
		for (k = 1; k < KVMPFM_SNAP_CALLS; k++)
			if (snap_call_name(k) && set->vms[i].vm.calls[k])
				vm_u64(f, "calls_total", set, &set->vms[i],
				       "command", snap_call_name(k),
				       set->vms[i].vm.calls[k]);
	family(f, "refused_total", "counter",
	       "Failed calls of the VM's guests, by cause: NOTAVAIL (an event "
	       "the host cannot count), FILTERED (the operator's filter), "
	       "MEDIATED (a VM with KVM's mediated vPMU holds the host's "
	       "PMU), always there; or the errno, from its first failure.");
	for (i = 0; i < set->nr; i++) {
		memset(by, 0, sizeof(by));
		snap_for_each_cause(&set->vms[i], add_cause, by);
		for (k = 0; k < NR_CAUSES; k++)
			if (k < NR_CAUSES_ALWAYS || by[k])
				vm_u64(f, "refused_total", set, &set->vms[i],
				       "cause", causes[k], by[k]);
	}
}

static void vm_metrics(FILE *f, const struct exposition *x,
		       const struct snap_set *set)
{
	static const uint32_t states[] = {
		KVMPFM_CTX_UNLOADED, KVMPFM_CTX_LOADED, KVMPFM_CTX_MASKED,
	};
	const struct kvmpfm_snap_ctx *c;
	const struct kvmpfm_snap_vcpu *v;
	unsigned int i, j, k;
	char num[24];
	uint64_t n;

	vm_info(f, set);
	family(f, "vm_vcpus", "gauge", "vCPUs of the VM.");
	for (i = 0; i < set->nr; i++)
		vm_u64(f, "vm_vcpus", set, &set->vms[i], NULL, NULL,
		       set->vms[i].vm.nr_vcpus);
	family(f, "vm_contexts", "gauge",
	       "perfmon2 contexts of the VM's guests, by state.");
	for (i = 0; i < set->nr; i++) {
		const struct snap *s = &set->vms[i];

		for (k = 0; k < ARRAY_SIZE(states); k++) {
			for (n = 0, j = 0; (c = snap_ctx(s, j)); j++)
				n += c->state == states[k];
			vm_u64(f, "vm_contexts", set, s, "state",
			       snap_ctx_state_name(states[k]), n);
		}
	}
	family(f, "vm_events", "gauge",
	       "Host counters in use for the VM's guests.");
	for (i = 0; i < set->nr; i++)
		vm_u64(f, "vm_events", set, &set->vms[i], NULL, NULL,
		       set->vms[i].vm.stats.active_counters);
	vm_calls(f, set);
	for (k = 0; k < ARRAY_SIZE(vm_counters); k++) {
		const struct vm_counter *m = &vm_counters[k];

		family(f, m->name, "counter", m->help);
		for (i = 0; i < set->nr; i++)
			vm_u64(f, m->name, set, &set->vms[i], NULL, NULL,
			       *(const uint64_t *)((const char *)
						   &set->vms[i].vm + m->off));
	}
	family(f, "doorbell_seconds_total", "counter",
	       "Host time in the module serving the guest's calls (the VM "
	       "exits' trip to the VMM and back not included).");
	for (i = 0; i < set->nr; i++) {
		vm_series(f, "doorbell_seconds_total", set, &set->vms[i], NULL,
			  NULL);
		fprintf(f, "%.9f\n", set->vms[i].vm.stats.doorbell_ns / 1e9);
	}
	if (x->events.per_vcpu) {
		family(f, "vcpu_doorbells_total", "counter",
		       "Guest calls served on each vCPU.");
		for (i = 0; i < set->nr; i++)
			for (j = 0; (v = snap_vcpu(&set->vms[i], j)); j++) {
				snprintf(num, sizeof(num), "%u", v->index);
				vm_u64(f, "vcpu_doorbells_total", set,
				       &set->vms[i], "vcpu", num, v->doorbells);
			}
	}

	family(f, "event_enabled_seconds_total", "counter",
	       x->events.per_vcpu ?
	       "Host time the guest's events were enabled, by vCPU and guest "
	       "event, as of the host's last update (schedule in or out, "
	       "read)." :
	       "Host time the guest's events were enabled, by guest event "
	       "summed over the VM's vCPUs, as of the host's last update "
	       "(schedule in or out, read).");
	vm_events(f, x, set, false);
	family(f, "event_running_seconds_total", "counter",
	       "Host time the guest's events actually had a host counter: "
	       "below enabled time, the host took counters away.");
	vm_events(f, x, set, true);
}

/*
 * @s's text gzip'ed, for the clients that accept it (Prometheus does):
 * compressed once per read, whatever the clients. None on failure: the
 * text is served as it is.
 */
static void gzip_text(struct scrape *s)
{
	z_stream z = { 0 };
	uLong room;

	/* windowBits 15 + 16: a gzip header and trailer (zlib.h) */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return;
	room = deflateBound(&z, s->len);
	s->gz = malloc(room);
	if (s->gz) {
		z.next_in = (Bytef *)s->text;
		z.avail_in = s->len;
		z.next_out = (Bytef *)s->gz;
		z.avail_out = room;
		if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
			s->gz_len = z.total_out;
		} else {
			free(s->gz);
			s->gz = NULL;
		}
	}
	deflateEnd(&z);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct scrape *exposition_scrape(void *arg)
{
	struct exposition *x = arg;
	struct host_view v;
	double t0 = now_s();
	struct scrape *s;
	char err[256];
	FILE *f;
	int ret;

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
	family(f, "build_info", "gauge", "The exporter's version and the "
	       "kvm-perfmon.ko API version it reads (api_version: the "
	       "module's, empty when it did not answer); always 1.");
	fputs("kvmperfmon_build_info{version=\"" KVMPFM_VERSION
	      "\",api_version=\"", f);
	if (v.api_version > 0)
		fprintf(f, "%d", v.api_version);
	fputs("\"} 1\n", f);
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
		family(f, "sampling_buffer_bytes", "gauge",
		       "Guest memory registered as sampling buffers, all VMs "
		       "(written through the VMM's mapping, never pinned).");
		fprintf(f, "kvmperfmon_sampling_buffer_bytes %" PRId64 "\n",
			(int64_t)v.ms.pinned_pages * sysconf(_SC_PAGESIZE));
		family(f, "host_mediated_total", "counter",
		       "Guest PMU events perf refused because a VM with KVM's "
		       "mediated vPMU held the host's PMU, all VMs since "
		       "kvm-perfmon.ko was loaded.");
		fprintf(f, "kvmperfmon_host_mediated_total %" PRIu64 "\n",
			(uint64_t)v.ms.host_mediated);
	}
	if (!ret && event_series_update(&x->events, &v.set))
		fprintf(stderr, "kvm-perfmon-exporter: out of memory for the "
			"event series: their counters start again\n");
	if (!ret)
		vm_metrics(f, x, &v.set);
	snap_set_free(&v.set);
	family(f, "scrape_duration_seconds", "gauge",
	       "Time the read of every VM and its formatting took.");
	fprintf(f, "kvmperfmon_scrape_duration_seconds %.6f\n", now_s() - t0);
	if (fclose(f)) {
		free(s->text);
		free(s);
		return NULL;
	}
	gzip_text(s);
	return s;
}
