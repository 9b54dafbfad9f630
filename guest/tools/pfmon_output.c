// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon's counts, as text (default), CSV (-x SEP) or JSON (--json: an
 * object a line, written by json-c): one row per event of every set, at
 * the end or every -I interval (then the deltas of that interval).
 *
 * Per event: its count scaled to the whole run, the raw count, the set's
 * share of the run (sets are time-multiplexed) and the share of the time
 * the host ran the set's backing counters while they were enabled (host
 * perf multiplexing). count = raw * (total active / set active)
 * * (host enabled / host running): each factor 1 when nothing was taken.
 */
#define _GNU_SOURCE
#include <string.h>

#include <json-c/json.h>

#include "pfmon.h"

struct row {
	uint64_t raw, count, runs, act_ns, en_ns, run_ns;
	double set_pct, host_pct;	/* host_pct < 0: unknown */
};

static void make_row(const struct reading *r, const struct reading *prev,
		     int s, int i, struct row *w)
{
	const struct set_reading *c = &r->set[s];
	const struct set_reading *p = prev ? &prev->set[s] : NULL;
	uint64_t total = r->total_act_ns - (prev ? prev->total_act_ns : 0);
	long double v;

	w->raw = c->raw[i] - (p ? p->raw[i] : 0);
	w->runs = c->runs - (p ? p->runs : 0);
	w->act_ns = c->act_ns - (p ? p->act_ns : 0);
	w->en_ns = c->host_enabled_ns - (p ? p->host_enabled_ns : 0);
	w->run_ns = c->host_running_ns - (p ? p->host_running_ns : 0);
	w->set_pct = nsets == 1 ? 100.0 :
		     total ? 100.0 * (double)w->act_ns / (double)total : 0;
	w->host_pct = w->en_ns ? 100.0 * (double)w->run_ns / (double)w->en_ns :
		      -1;
	v = w->raw;
	if (nsets > 1)
		v = w->act_ns ? v * total / w->act_ns : 0;
	if (w->en_ns && w->run_ns && w->run_ns < w->en_ns)
		v = v * w->en_ns / w->run_ns;
	w->count = (uint64_t)v;
}

static char *commas(uint64_t v, char *buf)
{
	char tmp[32];
	int n, j = 0;

	n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

static void csv_header(void)
{
	static bool done;
	static const char *const cols[] = {
		"time", "target", "set", "event", "count", "raw", "set_runs",
		"set_active_ns", "set_pct", "host_enabled_ns",
		"host_running_ns", "host_pct", "emulated", NULL
	};

	if (done)
		return;
	done = true;
	for (int i = 0; cols[i]; i++)
		fprintf(out, "%s%s", i ? csv_sep : "", cols[i]);
	fputc('\n', out);
}

void print_interval_header(void)
{
	if (out_fmt == OUT_TEXT)
		fprintf(out, "#%9s %3s %20s  %-24s %s\n", "time(s)", "set",
			"count", "event", "(raw; set %; host running/enabled %)");
	else if (out_fmt == OUT_CSV)
		csv_header();
}

static void text_row(const struct reading *r, bool interval, int s,
		     const struct event *e, const struct row *w)
{
	char a[32], b[32], host[16];

	if (w->host_pct < 0)
		snprintf(host, sizeof(host), "-");
	else
		snprintf(host, sizeof(host), "%.1f%%", w->host_pct);
	if (interval)
		fprintf(out, "%10.3f %3d ", r->t, s);
	fprintf(out, "  %20s %-24s (raw %s; set %.1f%%; host %s)%s\n",
		commas(w->count, a), e->name, commas(w->raw, b), w->set_pct,
		host, e->emulated ? " [emulated]" : "");
}

static void csv_row(const struct reading *r, bool interval,
		    const char *target, int s, const struct event *e,
		    const struct row *w)
{
	const char *x = csv_sep;

	if (interval)
		fprintf(out, "%.3f", r->t);
	fprintf(out, "%s%s%s%d%s%s%s%llu%s%llu%s%llu%s%llu%s%.2f%s%llu%s%llu%s",
		x, target, x, s, x, e->name, x, (unsigned long long)w->count,
		x, (unsigned long long)w->raw, x, (unsigned long long)w->runs,
		x, (unsigned long long)w->act_ns, x, w->set_pct, x,
		(unsigned long long)w->en_ns, x, (unsigned long long)w->run_ns,
		x);
	if (w->host_pct >= 0)
		fprintf(out, "%.2f", w->host_pct);
	fprintf(out, "%s%d\n", x, e->emulated);
}

/* a number with @decimals places, as written */
static struct json_object *json_fixed(double v, int decimals)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

static void json_row(const struct reading *r, bool interval,
		     const char *target, int s, const struct event *e,
		     const struct row *w)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		die("out of memory");
	if (interval)
		json_object_object_add(o, "time", json_fixed(r->t, 3));
	json_object_object_add(o, "target", json_object_new_string(target));
	json_object_object_add(o, "set", json_object_new_int(s));
	json_object_object_add(o, "event", json_object_new_string(e->name));
	json_object_object_add(o, "count", json_object_new_uint64(w->count));
	json_object_object_add(o, "raw", json_object_new_uint64(w->raw));
	json_object_object_add(o, "set_runs", json_object_new_uint64(w->runs));
	json_object_object_add(o, "set_active_ns",
			       json_object_new_uint64(w->act_ns));
	json_object_object_add(o, "set_pct", json_fixed(w->set_pct, 2));
	json_object_object_add(o, "host_enabled_ns",
			       json_object_new_uint64(w->en_ns));
	json_object_object_add(o, "host_running_ns",
			       json_object_new_uint64(w->run_ns));
	json_object_object_add(o, "host_pct", w->host_pct >= 0 ?
			       json_fixed(w->host_pct, 2) : NULL);
	json_object_object_add(o, "emulated",
			       json_object_new_boolean(e->emulated));
	fprintf(out, "%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* @prev: the reading of the interval's start (deltas), or NULL: totals */
void print_counts(const char *target, const struct reading *r,
		  const struct reading *prev)
{
	bool interval = prev != NULL;

	if (out_fmt == OUT_CSV)
		csv_header();
	if (out_fmt == OUT_TEXT && !interval && target)
		fprintf(out, "%s:\n", target);
	for (int s = 0; s < nsets; s++) {
		if (out_fmt == OUT_TEXT && !interval) {
			const struct set_reading *c = &r->set[s];

			fprintf(out, "set %d: %llu runs, active %.3f ms of %.3f ms (%.1f%%)",
				s, (unsigned long long)c->runs, c->act_ns / 1e6,
				r->total_act_ns / 1e6,
				r->total_act_ns ?
				100.0 * c->act_ns / r->total_act_ns : 0);
			if (c->host_enabled_ns)
				fprintf(out, ", host ran its counters %.1f%% of the time enabled",
					100.0 * c->host_running_ns /
					c->host_enabled_ns);
			fputc('\n', out);
		}
		for (int i = 0; i < sets[s].n; i++) {
			const struct event *e = &sets[s].ev[i];
			struct row w;

			make_row(r, prev, s, i, &w);
			if (out_fmt == OUT_CSV)
				csv_row(r, interval, target ? target : "task",
					s, e, &w);
			else if (out_fmt == OUT_JSON)
				json_row(r, interval, target ? target : "task",
					 s, e, &w);
			else
				text_row(r, interval, s, e, &w);
		}
	}
	fflush(out);
}

/*
 * The host took counters away (running < enabled by more than 1%: the
 * clocks of enabled and running are read apart), or its limits took
 * samples or counts: say so on stderr, once per set, whatever the output
 * format.
 */
void warn_host_limits(const char *target, const struct reading *r)
{
	const char *t = target ? target : "", *sep = target ? ": " : "";

	for (int s = 0; s < nsets; s++) {
		const struct set_reading *c = &r->set[s];

		if (c->host_enabled_ns &&
		    c->host_running_ns * 100 < c->host_enabled_ns * 99)
			fprintf(stderr, "pfmon: warning: %s%sset %d: the host ran its counters only %.1f%% of the time they were enabled (host contention); counts are scaled up by enabled/running\n",
				t, sep, s,
				100.0 * c->host_running_ns / c->host_enabled_ns);
		if (c->host_throttles)
			fprintf(stderr, "pfmon: warning: %s%sset %d: host perf throttled its counters %llu times (the host's kernel.perf_event_max_sample_rate): hardware events did not count, and samples were not taken, until its next tick\n",
				t, sep, s,
				(unsigned long long)c->host_throttles);
		if (c->periods_raised)
			fprintf(stderr, "pfmon: warning: %s%sset %d: the host's PMU refused %llu periods as too short and armed longer ones: those overflows came late\n",
				t, sep, s,
				(unsigned long long)c->periods_raised);
		if (c->ovfls_lost)
			fprintf(stderr, "pfmon: warning: %s%sset %d: %llu overflows were not delivered (the host throttled them, or found them periods late)\n",
				t, sep, s, (unsigned long long)c->ovfls_lost);
	}
}
