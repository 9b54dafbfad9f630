// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-perfmon-exporter: every VM's kvm-perfmon view for Prometheus, in
 * its text exposition format on /metrics (libmicrohttpd). One scrape
 * reads one snapshot of each VM (the module holds a VM's lock only while
 * it copies that VM); nothing is kept between scrapes, nothing is summed
 * over VMs or hosts: fleet views are Prometheus's (federation, remote
 * write). See usage() and host-tools/README.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "snapshot.h"

/*
 * Outside 9100-9999, the range of the Prometheus wiki's "default port
 * allocations" (taken up to its last number since 2023), outside
 * Prometheus's own 9090-9094, absent from /etc/services, and below
 * Linux's ephemeral ports (32768-60999), which a client could hold.
 */
#define DEFAULT_PORT		17995
/*
 * Distinct guest events per VM with a series of their own in one scrape;
 * the rest are summed under event="other". A guest chooses its events,
 * and the operator's Prometheus must not grow with its choices.
 */
#define MAX_EVENT_LABELS	32
#define CONNECTION_LIMIT	16
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define CONNECTION_TIMEOUT_S	10

static const char usage_text[] =
"Usage: kvm-perfmon-exporter [OPTION]...\n"
"Serve what each VM on this host does with kvm-perfmon's counters to\n"
"Prometheus, in its text format on http://ADDR:PORT/metrics.\n"
"\n"
"  -l, --listen=[ADDR]:PORT  where to listen (default :17995, every\n"
"                            address; ADDR: an IPv4 or a [IPv6] address)\n"
"  -1, --once                print one scrape on stdout and exit\n"
"  -h, --help                this text\n"
"\n"
"Each scrape reads one snapshot of every VM bound to kvm-perfmon. Series\n"
"per VM (labels vm = its -name, uuid = its -uuid): at most 3 per context\n"
"state, 19 per call, 16 per refusal cause, and per vCPU and guest event\n"
"at most vCPUs x 33 (32 events, the rest as event=\"other\").\n"
"\n"
"Needs root or CAP_PERFMON, and access to /dev/kvm-perfmon (group kvm):\n"
"the view covers every user's VMs.\n"
"\n"
"Exit status:\n"
"  0  stopped by SIGTERM or SIGINT; --once: the scrape succeeded\n"
"  1  bad arguments\n"
"  2  kvm-perfmon.ko is not loaded (no /dev/kvm-perfmon)\n"
"  3  permission denied (not root or CAP_PERFMON)\n"
"  5  any other error (e.g. the address cannot be listened on)\n";

/* ---- the exposition ---------------------------------------------------- */

/* the exporter's own, since it started */
static uint64_t scrape_errors;

/* a label value: \ " and newline escaped, as the text format wants */
static void put_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

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
	put_value(f, s->name);
	fputs("\",uuid=\"", f);
	put_value(f, s->uuid);
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
		put_value(f, val);
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
 * filter; then the errnos the module returns; any other is "other".
 */
static const char *const causes[] = {
	"NOTAVAIL", "FILTERED", "EINVAL", "EBUSY", "EMFILE", "ENOSPC", "E2BIG",
	"ENOMEM", "EFAULT", "EBADF", "ENOSYS", "ENOENT", "EPERM", "EACCES",
	"EAGAIN", "other",
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
			put_value(f, t[j].event);
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
	       "the host cannot count), FILTERED (the operator's filter), or "
	       "the errno.");
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

/*
 * One scrape into a new buffer (*@len bytes) the caller frees; NULL on
 * no memory. *@exit gets the snapshot's exit code (SNAP_EXIT_*).
 */
static char *scrape(size_t *len, int *exit_code)
{
	struct kvmpfm_module_stats ms = { 0 };
	struct snap_set set = { 0 };
	double t0 = now_s();
	char err[256], *buf = NULL;
	bool have_ms = false;
	FILE *f;
	int fd, ret;

	f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	/*
	 * The device is opened per scrape: an exporter that held it open
	 * would keep kvm-perfmon.ko from being unloaded or upgraded.
	 */
	fd = snap_open(err, sizeof(err));
	if (fd < 0) {
		ret = snap_open_exit(errno);
	} else {
		ret = snap_read_all(fd, &set, err, sizeof(err));
		have_ms = !ret && !ioctl(fd, KVMPFM_GET_MODULE_STATS, &ms);
		close(fd);
	}
	*exit_code = ret;
	if (ret) {
		scrape_errors++;
		fprintf(stderr, "kvm-perfmon-exporter: %s\n", err);
	}

	family(f, "up", "gauge", "1 if kvm-perfmon's operator interface "
	       "answered this scrape, else 0 (the exporter's log says why).");
	fprintf(f, "kvmperfmon_up %d\n", !ret);
	family(f, "scrape_errors_total", "counter",
	       "Scrapes that could not read kvm-perfmon, since the exporter "
	       "started.");
	fprintf(f, "kvmperfmon_scrape_errors_total %" PRIu64 "\n",
		scrape_errors);
	if (!ret) {
		family(f, "vms", "gauge", "VMs bound to kvm-perfmon.");
		fprintf(f, "kvmperfmon_vms %u\n", set.nr);
	}
	if (have_ms) {
		family(f, "host_perf_events", "gauge",
		       "Host perf events kvm-perfmon holds for all VMs.");
		fprintf(f, "kvmperfmon_host_perf_events %" PRId64 "\n",
			(int64_t)ms.perf_events);
		family(f, "pinned_pages", "gauge",
		       "Guest pages registered for sampling buffers (not pinned).");
		fprintf(f, "kvmperfmon_pinned_pages %" PRId64 "\n",
			(int64_t)ms.pinned_pages);
	}
	if (!ret)
		vm_metrics(f, &set);
	snap_set_free(&set);
	family(f, "scrape_duration_seconds", "gauge",
	       "Time this scrape took to read and format every VM.");
	fprintf(f, "kvmperfmon_scrape_duration_seconds %.6f\n", now_s() - t0);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- HTTP --------------------------------------------------------------- */

static const char index_page[] =
"<html><head><title>kvm-perfmon exporter</title></head><body>\n"
"<h1>kvm-perfmon exporter</h1>\n"
"<p><a href=\"/metrics\">Metrics</a></p>\n"
"</body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code,
			     const char *type, void *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *data,
				  size_t *data_size, void **state)
{
	static const char text[] = "text/plain; charset=utf-8";
	static char not_found[] = "Not found: try /metrics\n";
	static char bad_method[] = "Only GET and HEAD\n";
	static char no_memory[] = "Out of memory\n";
	size_t len;
	char *body;
	int code;

	(void)cls;
	(void)version;
	(void)data;
	(void)data_size;
	(void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text, bad_method,
			     strlen(bad_method), MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
			     (void *)index_page, strlen(index_page),
			     MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, text, not_found,
			     strlen(not_found), MHD_RESPMEM_PERSISTENT);
	body = scrape(&len, &code);
	if (!body)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, text,
			     no_memory, strlen(no_memory),
			     MHD_RESPMEM_PERSISTENT);
	/* a failed read is kvmperfmon_up 0, not an HTTP error */
	return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; "
		     "charset=utf-8", body, len, MHD_RESPMEM_MUST_FREE);
}

/* ---- main --------------------------------------------------------------- */

struct listen_addr {
	struct sockaddr_storage ss;
	bool any;		/* no ADDR: every address */
	uint16_t port;
};

/* "[ADDR]:PORT": ADDR an IPv4 address, a [IPv6] one, or nothing */
static int parse_listen(const char *arg, struct listen_addr *l)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *ai;
	char host[64], *end;
	const char *colon = strrchr(arg, ':');
	size_t hlen;
	long port;

	if (!colon)
		return -1;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port < 1 || port > 65535)
		return -1;
	l->port = port;
	hlen = colon - arg;
	if (hlen >= 2 && arg[0] == '[' && arg[hlen - 1] == ']') {
		arg++;
		hlen -= 2;
	} else if (memchr(arg, ':', hlen)) {
		return -1;	/* an IPv6 address needs its brackets */
	}
	if (hlen >= sizeof(host))
		return -1;
	memcpy(host, arg, hlen);
	host[hlen] = '\0';
	l->any = !hlen;
	if (l->any)
		return 0;
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return -1;
	memcpy(&l->ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static struct MHD_Daemon *start(const struct listen_addr *l)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	struct MHD_Daemon *d;

	if (l->any) {
		/* IPv6 and IPv4 alike; IPv4 alone where IPv6 is off */
		d = MHD_start_daemon(flags | MHD_USE_DUAL_STACK, l->port, NULL,
				     NULL, on_request, NULL,
				     MHD_OPTION_CONNECTION_LIMIT,
				     CONNECTION_LIMIT,
				     MHD_OPTION_CONNECTION_TIMEOUT,
				     CONNECTION_TIMEOUT_S, MHD_OPTION_END);
		if (d)
			return d;
		return MHD_start_daemon(flags, l->port, NULL, NULL, on_request,
					NULL, MHD_OPTION_CONNECTION_LIMIT,
					CONNECTION_LIMIT,
					MHD_OPTION_CONNECTION_TIMEOUT,
					CONNECTION_TIMEOUT_S, MHD_OPTION_END);
	}
	if (l->ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	return MHD_start_daemon(flags, l->port, NULL, NULL, on_request, NULL,
				MHD_OPTION_SOCK_ADDR, &l->ss,
				MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT,
				MHD_OPTION_CONNECTION_TIMEOUT,
				CONNECTION_TIMEOUT_S, MHD_OPTION_END);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "once", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct listen_addr l = { .any = true, .port = DEFAULT_PORT };
	const char *listen_arg = ":17995";
	struct MHD_Daemon *d;
	bool once = false;
	sigset_t sigs;
	size_t len;
	char *body;
	int c, sig, ret;

	while ((c = getopt_long(argc, argv, "l:1h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_arg = optarg;
			if (parse_listen(optarg, &l)) {
				fprintf(stderr, "kvm-perfmon-exporter: --listen "
					"'%s': want [ADDR]:PORT, e.g. :17995, "
					"127.0.0.1:17995 or [::1]:17995\n",
					optarg);
				return SNAP_EXIT_USAGE;
			}
			break;
		case '1':
			once = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return SNAP_EXIT_OK;
		default:
			fprintf(stderr, "Try 'kvm-perfmon-exporter --help'.\n");
			return SNAP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kvm-perfmon-exporter: unexpected '%s'; try "
			"--help\n", argv[optind]);
		return SNAP_EXIT_USAGE;
	}

	/*
	 * One scrape first: a missing module or privilege is said now, with
	 * its exit code, rather than as kvmperfmon_up 0 forever after.
	 */
	body = scrape(&len, &ret);
	if (!body) {
		fprintf(stderr, "kvm-perfmon-exporter: out of memory\n");
		return SNAP_EXIT_ERROR;
	}
	if (once) {
		fwrite(body, 1, len, stdout);
		free(body);
		return fflush(stdout) ? SNAP_EXIT_ERROR : ret;
	}
	free(body);
	if (ret)
		return ret;

	/* the daemon's thread inherits the mask: signals come to sigwait */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = start(&l);
	if (!d) {
		fprintf(stderr, "kvm-perfmon-exporter: cannot listen on %s\n",
			listen_arg);
		return SNAP_EXIT_ERROR;
	}
	fprintf(stderr, "kvm-perfmon-exporter: listening on %s, metrics at "
		"/metrics\n", listen_arg);
	sigwait(&sigs, &sig);
	MHD_stop_daemon(d);
	return SNAP_EXIT_OK;
}
