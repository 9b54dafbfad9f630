// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-perfmon-exporter: every VM's kvm-perfmon view for Prometheus, in
 * its text exposition format on /metrics (exposition.c), served by
 * libmicrohttpd: on loopback unless told otherwise, with TLS and basic
 * authentication from an exporter-toolkit style web config
 * (web_config.h), a connection limit per client address, and one read of
 * the module shared by the requests of a second (scrape_cache.h). Its
 * options and manual: cli below (--help, kvm-perfmon-exporter(8)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

#include "basic_auth.h"
#include "exposition.h"
#include "guest_events.h"
#include "scrape_cache.h"
#include "snapshot.h"
#include "web_config.h"

/*
 * Outside 9100-9999, the range of the Prometheus wiki's "default port
 * allocations" (taken up to its last number since 2023), outside
 * Prometheus's own 9090-9094, absent from /etc/services, and below
 * Linux's ephemeral ports (32768-60999), which a client could hold.
 */
#define DEFAULT_PORT		"17995"
#define DEFAULT_LISTEN		"127.0.0.1:" DEFAULT_PORT
#define DEFAULT_PATH		"/metrics"
#define MAX_PATH_LEN		128
/*
 * Connections: one thread each, so a slow client holds its own thread and
 * no one else's. Prometheus keeps one connection per server to a target;
 * 4 from one address leave room for a pair of servers behind one NAT and
 * an operator's curl, and a client cannot hold more. The whole is bounded
 * (threads and their stacks) at 64, the time-out ends an idle one.
 */
#define PER_IP_CONNECTION_LIMIT	4
#define CONNECTION_LIMIT	64
#define CONNECTION_TIMEOUT_S	10
/* GnuTLS's handshake is the deepest user of a connection's stack */
#define THREAD_STACK_BYTES	(512 * 1024)
/*
 * A read of the module at most once a second, whatever the number of
 * clients: Prometheus scrapes every 10-60 s (1 s at the finest), so a
 * server sees data no older than its own interval, while a pair of HA
 * servers, a federation and an operator's curl within the same second
 * cost the host one snapshot, not one each.
 */
#define SNAPSHOT_MAX_AGE_NS	1000000000ull
/* TLS 1.2 and 1.3 only, as exporter-toolkit's default min_version */
#define TLS_PRIORITIES		"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

#define STR_(x)	#x
#define STR(x)	STR_(x)

enum {
	OPT_LISTEN = 'l', OPT_ONCE = '1',
	OPT_WEB_CONFIG = CLI_LONG_ONLY, OPT_TELEMETRY_PATH, OPT_COLLECTOR_VCPU,
};

static const struct cli_option options[] = {
	CLI_OPT("web.listen-address", OPT_LISTEN, "[ADDR]:PORT",
		"where to listen (default " DEFAULT_LISTEN ": this host\n"
		"only); ADDR an IPv4 or a [IPv6] address, none for every\n"
		"address (:" DEFAULT_PORT ")"),
	CLI_ALIAS("listen", OPT_LISTEN, "[ADDR]:PORT"),
	CLI_OPT("web.telemetry-path", OPT_TELEMETRY_PATH, "PATH",
		"where the metrics are (default " DEFAULT_PATH "): /, then\n"
		"letters, digits and /._-"),
	CLI_OPT("web.config.file", OPT_WEB_CONFIG, "FILE",
		"TLS and basic authentication, in the YAML format\n"
		"Prometheus's exporters share (below); a key it does not\n"
		"implement is refused"),
	CLI_OPT("collector.vcpu", OPT_COLLECTOR_VCPU, NULL,
		"series per vCPU as well: event times by vCPU and event,\n"
		"guest calls by vCPU (default: per VM only)"),
	CLI_OPT("once", OPT_ONCE, NULL, "print one scrape on stdout and exit"),
	CLI_HELP_OPT,
	CLI_VERSION_OPT,
	CLI_NOTE("The web config:\n"
		 "\n"
		 "  tls_server_config:\n"
		 "    cert_file: FILE     # PEM; relative to the config's directory\n"
		 "    key_file: FILE\n"
		 "  basic_auth_users:\n"
		 "    USER: BCRYPT-HASH   # htpasswd -nbB USER PASSWORD"),
	CLI_END
};

static const struct cli_program cli = {
	.name = "kvm-perfmon-exporter",
	SNAP_CLI_COMMON,
	.summary = "kvm-perfmon's view of every VM for Prometheus",
	.description =
"Serve what each VM on this host does with kvm-perfmon's counters to\n"
"Prometheus, in its text format on http(s)://ADDR:PORT/metrics, gzip'ed\n"
"when the client accepts it.\n"
"\n"
"Each read of the module is one snapshot of every VM bound to kvm-perfmon,\n"
"shared by the requests of the next second. At most "
STR(PER_IP_CONNECTION_LIMIT) " connections from\n"
"one client address, " STR(CONNECTION_LIMIT) " in all, each closed after "
STR(CONNECTION_TIMEOUT_S) " s idle.\n"
"\n"
"Series per VM, whose one identity label is vm (its -name, with \" (id N)\"\n"
"when two VMs share it; invalid UTF-8 shown as U+FFFD); kvmperfmon_vm_info\n"
"adds its uuid, for joins. Per VM: 3 gauges, 3 context states, 9 counters,\n"
"3 refusal causes, a call command or another cause once it is not zero,\n"
"and two time series per guest event, summed over the vCPUs\n"
"(--collector.vcpu: per vCPU). Guest events are named as libpfm4 names\n"
"them in the guest (pfmon -l); at most 32 per VM have series of their\n"
"own, the rest are summed as event=\"other\" for their life. An event's\n"
"series lasts while the event is counted and never goes back.\n"
"\n"
"The metrics name every user's VMs, their VMMs' pids\n"
"and UUIDs: listen beyond this host only with TLS and basic_auth_users.\n"
"\n"
"Needs CAP_PERFMON (or root) and read access to /dev/kvm-perfmon (group\n"
"kvm): the view covers every user's VMs.",
	.options = options,
	.files = SNAP_CLI_FILE_DEVICE "\n"
		 "\n"
		 "= /lib/systemd/system/kvm-perfmon-exporter.service\n"
		 "its unit: as the system user kvm-perfmon-exporter (group kvm),\n"
		 "CAP_PERFMON its only capability; its options in ARGS of\n"
		 "/etc/default/kvm-perfmon-exporter",
	.see_also = "kvm-perfmon-stat(8), prometheus(1), promtool(1), "
		    "htpasswd(1)",
};

/* ---- HTTP --------------------------------------------------------------- */

/* what every request reads: set before the daemon starts */
struct server {
	struct web_config web;		/* constant */
	struct basic_auth auth;		/* when web has users */
	struct scrape_cache cache;
	const char *path;		/* constant: --web.telemetry-path */
	char index_page[256 + MAX_PATH_LEN];	/* constant */
};

/* a path the index page may name as it is: no escaping needed */
static bool valid_path(const char *path)
{
	size_t n = strlen(path);

	return path[0] == '/' && n <= MAX_PATH_LEN &&
	       strspn(path, "abcdefghijklmnopqrstuvwxyz"
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == n;
}

static void make_index_page(struct server *srv)
{
	snprintf(srv->index_page, sizeof(srv->index_page),
		 "<html><head><title>kvm-perfmon exporter</title></head><body>\n"
		 "<h1>kvm-perfmon exporter</h1>\n"
		 "<p><a href=\"%s\">Metrics</a></p>\n"
		 "</body></html>\n", srv->path);
}

/*
 * Does the request's Accept-Encoding take gzip: a "gzip" or "*" token,
 * without q=0 (RFC 9110, 12.5.3)
 */
static bool accepts_gzip(struct MHD_Connection *conn)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *p, *end, *q;
	size_t n;

	for (p = v; p && *p; p = *end ? end + 1 : end) {
		p += strspn(p, " \t");
		end = p + strcspn(p, ",");
		n = strcspn(p, " \t;,");
		if (!((n == 4 && !strncasecmp(p, "gzip", 4)) ||
		      (n == 1 && *p == '*')))
			continue;
		q = memchr(p, ';', end - p);
		if (!q)
			return true;
		q += 1 + strspn(q + 1, " \t");
		if (strncasecmp(q, "q=", 2))
			return true;
		/* q=0, q=0.0, q=0.000: refused; any other weight taken */
		q += 2;
		if (*q != '0')
			return true;
		for (q++, q += *q == '.'; *q == '0'; q++)
			;
		if (q < end && *q >= '1' && *q <= '9')
			return true;
	}
	return false;
}

static const char text_type[] = "text/plain; charset=utf-8";

/* a constant page of @type; NULL when out of memory */
static struct MHD_Response *constant_page(const char *type, const char *body)
{
	struct MHD_Response *r;

	r = MHD_create_response_from_buffer(strlen(body), (void *)body,
					    MHD_RESPMEM_PERSISTENT);
	if (r)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

/*
 * queues @r (NULL: out of memory) and drops this function's reference; a
 * 401 carries WWW-Authenticate: Basic realm="kvm-perfmon-exporter"
 */
static enum MHD_Result queue(struct MHD_Connection *conn, unsigned int code,
			     struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (code == MHD_HTTP_UNAUTHORIZED)
		ret = MHD_queue_basic_auth_fail_response(conn,
							 BASIC_AUTH_REALM, r);
	else
		ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code,
			     const char *type, const char *body)
{
	return queue(conn, code, constant_page(type, body));
}

static bool authorized(struct server *srv, struct MHD_Connection *conn)
{
	char *user, *password = NULL;
	bool ok;

	if (!srv->web.nr_users)
		return true;
	user = MHD_basic_auth_get_username_password(conn, &password);
	ok = basic_auth_ok(&srv->auth, user, password);
	if (password) {
		explicit_bzero(password, strlen(password));
		MHD_free(password);
	}
	if (user)
		MHD_free(user);
	return ok;
}

static void scrape_done(void *cls)
{
	scrape_put(cls);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *data,
				  size_t *data_size, void **state)
{
	struct server *srv = cls;
	struct MHD_Response *r;
	struct scrape *s;
	bool gzip;

	(void)version;
	(void)data;
	(void)data_size;
	(void)state;
	if (!authorized(srv, conn))
		return reply(conn, MHD_HTTP_UNAUTHORIZED, text_type,
			     "Unauthorized\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text_type,
			     "Only GET and HEAD\n");
	if (!strcmp(url, "/") && strcmp(srv->path, "/"))
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
			     srv->index_page);
	if (strcmp(url, srv->path))
		return reply(conn, MHD_HTTP_NOT_FOUND, text_type,
			     "Not found: the metrics are elsewhere (/)\n");
	s = scrape_cache_get(&srv->cache);
	if (!s)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, text_type,
			     "Out of memory\n");
	/*
	 * A failed read is kvmperfmon_up 0, not an HTTP error. The text is
	 * shared: the response holds a reference until it is sent.
	 */
	gzip = s->gz && accepts_gzip(conn);
	r = MHD_create_response_from_buffer_with_free_callback_cls(
			gzip ? s->gz_len : s->len, gzip ? s->gz : s->text,
			scrape_done, s);
	if (!r) {
		scrape_put(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gzip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	return queue(conn, MHD_HTTP_OK, r);
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

static struct MHD_Daemon *start(const struct listen_addr *l,
				struct server *srv)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem opts[] = {
		{ MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT, NULL },
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT, PER_IP_CONNECTION_LIMIT,
		  NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S, NULL },
		{ MHD_OPTION_THREAD_STACK_SIZE, THREAD_STACK_BYTES, NULL },
		/* the last four: TLS, the address; unused ones end the list */
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	unsigned int n = 4;
	struct MHD_Daemon *d;

	if (srv->web.cert_pem) {
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){
			MHD_OPTION_HTTPS_MEM_CERT, 0, srv->web.cert_pem };
		opts[n++] = (struct MHD_OptionItem){
			MHD_OPTION_HTTPS_MEM_KEY, 0, srv->web.key_pem };
		opts[n++] = (struct MHD_OptionItem){
			MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES };
	}
	if (l->any) {
		/* IPv6 and IPv4 alike; IPv4 alone where IPv6 is off */
		d = MHD_start_daemon(flags | MHD_USE_DUAL_STACK, l->port, NULL,
				     NULL, on_request, srv, MHD_OPTION_ARRAY,
				     opts, MHD_OPTION_END);
		if (d)
			return d;
		return MHD_start_daemon(flags, l->port, NULL, NULL, on_request,
					srv, MHD_OPTION_ARRAY, opts,
					MHD_OPTION_END);
	}
	if (l->ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	opts[n++] = (struct MHD_OptionItem){
		MHD_OPTION_SOCK_ADDR, 0, (void *)&l->ss };
	return MHD_start_daemon(flags, l->port, NULL, NULL, on_request, srv,
				MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

/* the web config's problems that start-up refuses; 0 or an exit code */
static int load_web_config(const char *path, struct web_config *web)
{
	char err[512];

	if (!path)
		return SNAP_EXIT_OK;
	if (web_config_load(path, web, err, sizeof(err))) {
		fprintf(stderr, "kvm-perfmon-exporter: --web.config.file: %s\n",
			err);
		return SNAP_EXIT_USAGE;
	}
	if (web->cert_pem && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
		fprintf(stderr, "kvm-perfmon-exporter: this libmicrohttpd has "
			"no TLS (built without GnuTLS)\n");
		web_config_free(web);
		return SNAP_EXIT_ERROR;
	}
	if (web->nr_users && !web->cert_pem)
		fprintf(stderr, "kvm-perfmon-exporter: warning: "
			"basic_auth_users without tls_server_config: "
			"passwords cross the network in clear text\n");
	return SNAP_EXIT_OK;
}

int main(int argc, char **argv)
{
	static struct exposition x;
	static struct server srv;
	const char *listen_arg = DEFAULT_LISTEN, *web_config_path = NULL;
	struct listen_addr l;
	struct MHD_Daemon *d;
	struct scrape *s;
	bool once = false;
	sigset_t sigs;
	int c, sig, ret;

	while ((c = cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			listen_arg = optarg;
			break;
		case OPT_WEB_CONFIG:
			web_config_path = optarg;
			break;
		case OPT_TELEMETRY_PATH:
			srv.path = optarg;
			break;
		case OPT_ONCE:
			once = true;
			break;
		case OPT_COLLECTOR_VCPU:
			x.events.per_vcpu = true;
			break;
		default:
			return snap_usage_try_help(cli.name);
		}
	}
	if (optind < argc)
		return snap_usage_operand(cli.name, argv[optind]);
	if (!srv.path)
		srv.path = DEFAULT_PATH;
	if (!valid_path(srv.path)) {
		fprintf(stderr, "kvm-perfmon-exporter: --web.telemetry-path "
			"'%s': want /, then letters, digits and /._- (at most "
			"%d characters), e.g. " DEFAULT_PATH "\n", srv.path,
			MAX_PATH_LEN);
		return SNAP_EXIT_USAGE;
	}
	make_index_page(&srv);
	memset(&l, 0, sizeof(l));
	if (parse_listen(listen_arg, &l)) {
		fprintf(stderr, "kvm-perfmon-exporter: --web.listen-address "
			"'%s': want [ADDR]:PORT, e.g. " DEFAULT_LISTEN ", "
			"[::1]:" DEFAULT_PORT " or :" DEFAULT_PORT
			" (every address)\n", listen_arg);
		return SNAP_EXIT_USAGE;
	}
	ret = load_web_config(web_config_path, &srv.web);
	if (ret)
		return ret;
	if (srv.web.nr_users && basic_auth_init(&srv.auth, &srv.web)) {
		fprintf(stderr, "kvm-perfmon-exporter: out of memory\n");
		return SNAP_EXIT_ERROR;
	}

	/*
	 * One scrape first: a missing module or privilege is said now, with
	 * its exit code, rather than as kvmperfmon_up 0 forever after.
	 */
	guest_events_init();
	s = exposition_scrape(&x);
	if (!s) {
		fprintf(stderr, "kvm-perfmon-exporter: out of memory\n");
		return SNAP_EXIT_ERROR;
	}
	ret = s->exit_code;
	if (once) {
		fwrite(s->text, 1, s->len, stdout);
		if (fflush(stdout))
			ret = SNAP_EXIT_ERROR;
	}
	free(s->text);
	free(s->gz);
	free(s);
	if (once || ret)
		return ret;

	scrape_cache_init(&srv.cache, SNAPSHOT_MAX_AGE_NS, exposition_scrape,
			  &x, scrape_clock_monotonic);
	/* the daemon's threads inherit the mask: signals come to sigwait */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = start(&l, &srv);
	if (!d) {
		fprintf(stderr, "kvm-perfmon-exporter: cannot listen on %s%s\n",
			listen_arg, srv.web.cert_pem ? " with TLS (is the key "
			"the certificate's? libmicrohttpd's message above)" :
			"");
		return SNAP_EXIT_ERROR;
	}
	fprintf(stderr, "kvm-perfmon-exporter: listening on %s (%s%s), metrics "
		"at %s\n", listen_arg, srv.web.cert_pem ? "https" : "http",
		srv.web.nr_users ? ", basic authentication" : "", srv.path);
	sigwait(&sigs, &sig);
	MHD_stop_daemon(d);
	scrape_cache_destroy(&srv.cache);
	if (srv.web.nr_users)
		basic_auth_destroy(&srv.auth);
	web_config_free(&srv.web);
	event_series_free(&x.events);
	return SNAP_EXIT_OK;
}
