// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-perfmon-stat's table (stat_table.h). Each column says how to get
 * its figure from a VM's reading (and the one before, in watch mode);
 * printing, sorting and --help walk the column table.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libsmartcols/libsmartcols.h>

#include "stat_table.h"
#include "vm_cost.h"

/* one VM's row: its reading, the one before (or NULL) and KVM's exits */
struct row {
	const struct snap *s, *p;	/* @p NULL: bound since, or no -i */
	bool rates;			/* watch mode: a reading before */
	double secs;			/* between them */
	double exits, exits_p;		/* KVM's exit count; NAN: unknown */
};

enum col_kind {
	COL_TEXT,	/* text(): sorted A-Z */
	COL_GAUGE,	/* value() as it is */
	COL_COUNT,	/* value() a count: per second over an interval */
	COL_PERCENT,	/* value() in %, one decimal */
};

struct column {
	const char *name;
	enum col_kind kind;
	bool by_default;
	bool may_cut;		/* to fit the terminal (else never cut) */
	const char *help;
	/* COL_TEXT: into @buf */
	void (*text)(const struct row *r, char *buf, size_t len);
	/* the others: of a reading (@s) or, COL_PERCENT, of the row */
	double (*value)(const struct row *r, const struct snap *s);
};

static void name_text(const struct row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s", r->s->name);
}

static void uuid_text(const struct row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s", r->s->uuid[0] ? r->s->uuid : "-");
}

static void ctx_text(const struct row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%u/%u", r->s->vm.stats.loaded,
		 r->s->vm.stats.contexts);
}

#define STAT_VALUE(fn, expr)						\
	static double fn(const struct row *r, const struct snap *s)	\
	{								\
		(void)r;						\
		return (double)(expr);					\
	}

STAT_VALUE(id_value, s->vm.id)
STAT_VALUE(pid_value, s->vm.pid)
STAT_VALUE(vcpus_value, s->vm.nr_vcpus)
STAT_VALUE(contexts_value, s->vm.stats.contexts)
STAT_VALUE(events_value, s->vm.stats.active_counters)
STAT_VALUE(samples_value, s->vm.stats.samples)
STAT_VALUE(lost_value, s->vm.stats.samples_lost)
STAT_VALUE(throttled_value, s->vm.stats.throttled)
STAT_VALUE(calls_value, s->vm.stats.commands)
STAT_VALUE(refused_value, snap_refusals(s))
STAT_VALUE(doorbells_value, s->vm.stats.doorbells)

static double exits_value(const struct row *r, const struct snap *s)
{
	return s == r->s ? r->exits : r->exits_p;
}

/* over the interval when there is one, else since the counters opened */
static double run_value(const struct row *r, const struct snap *s)
{
	(void)s;
	return 100 * (r->p ? snap_interval_running_ratio(r->s, r->p) :
			     snap_running_ratio(r->s));
}

static double doorbell_share_value(const struct row *r, const struct snap *s)
{
	double db = r->s->vm.stats.doorbells, ex = r->exits;

	(void)s;
	if (r->p) {
		db -= r->p->vm.stats.doorbells;
		ex -= r->exits_p;
	}
	return ex > 0 && db >= 0 ? 100 * db / ex : NAN;
}

/* a column: NAME, KIND, shown by default, its help, its figure */
#define COL(n, k, dfl, h, v)	{ .name = n, .kind = k, .by_default = dfl, \
				  .help = h, .value = v }
#define TEXT_COL(n, dfl, cut, h, t, v) \
	{ .name = n, .kind = COL_TEXT, .by_default = dfl, .may_cut = cut, \
	  .help = h, .text = t, .value = v }

static const struct column columns[] = {
	TEXT_COL("NAME", true, false, "the VM's name (QEMU's -name)",
		 name_text, NULL),
	COL("ID", COL_GAUGE, false, "the module's id of the VM", id_value),
	TEXT_COL("UUID", false, true, "the VM's UUID (-uuid)", uuid_text,
		 NULL),
	COL("PID", COL_GAUGE, true, "its VMM's pid", pid_value),
	COL("VCPUS", COL_GAUGE, true, "vCPUs", vcpus_value),
	TEXT_COL("CTX", true, false, "perfmon2 contexts, loaded/all",
		 ctx_text, contexts_value),
	COL("EVENTS", COL_GAUGE, true, "host counters in use", events_value),
	COL("RUN%", COL_PERCENT, true, "the share of enabled time counted (< 100: "
	    "contended)", run_value),
	COL("SAMPLES", COL_COUNT, true, "samples written", samples_value),
	COL("LOST", COL_COUNT, false, "samples lost", lost_value),
	COL("THROTTLED", COL_COUNT, false, "overflows the rate bound held "
	    "back", throttled_value),
	COL("CALLS", COL_COUNT, true, "perfmon2 calls", calls_value),
	COL("REFUSED", COL_COUNT, true, "failed calls (--vm: by cause)",
	    refused_value),
	COL("DOORBELLS", COL_COUNT, false, "calls served, one VM exit each",
	    doorbells_value),
	COL("EXITS", COL_COUNT, false, "the VM's exits, all causes (KVM's "
	    "debugfs, as root)", exits_value),
	COL("DOORBELL%", COL_PERCENT, false, "the share of those exits that were "
	    "doorbells", doorbell_share_value),
};

#define NR_COLUMNS	(sizeof(columns) / sizeof(columns[0]))

void stat_table_defaults(struct stat_table_opts *o)
{
	unsigned int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < NR_COLUMNS; i++)
		if (columns[i].by_default)
			o->cols[o->nr_cols++] = i;
	o->sort = -1;
}

static int find_column(const char *name, size_t n)
{
	unsigned int i;

	for (i = 0; i < NR_COLUMNS; i++)
		if (strlen(columns[i].name) == n &&
		    !strncasecmp(columns[i].name, name, n))
			return (int)i;
	return -1;
}

int stat_table_parse_output(struct stat_table_opts *o, const char *list,
			    char *err, size_t len)
{
	const char *p = list;
	size_t n;
	int c;

	if (*p == '+')
		p++;
	else
		o->nr_cols = 0;
	for (; *p; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		c = find_column(p, n);
		if (c < 0 || o->nr_cols == sizeof(o->cols) / sizeof(o->cols[0])) {
			snprintf(err, len, "--output '%s': %s '%.*s' (the "
				 "columns: --help)", list, c < 0 ?
				 "no column" : "too many columns at", (int)n, p);
			return -1;
		}
		o->cols[o->nr_cols++] = c;
	}
	if (!o->nr_cols) {
		snprintf(err, len, "--output '%s': no column", list);
		return -1;
	}
	return 0;
}

int stat_table_parse_sort(struct stat_table_opts *o, const char *name,
			  char *err, size_t len)
{
	o->sort = find_column(name, strlen(name));
	if (o->sort < 0) {
		snprintf(err, len, "--sort '%s': no column (the columns: "
			 "--help)", name);
		return -1;
	}
	return 0;
}

const char *stat_table_columns_help(void)
{
	static char buf[2048];
	size_t n = 0;
	unsigned int i;

	n += snprintf(buf + n, sizeof(buf) - n, "The table's columns "
		      "(--output, --sort; * the default ones; with --interval "
		      "counts are per second):\n");
	for (i = 0; i < NR_COLUMNS && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "\n  %-10s %s %s",
			      columns[i].name, columns[i].by_default ? "*" :
			      " ", columns[i].help);
	return buf;
}

/* ---- KVM's exits ---------------------------------------------------------- */

/* the VM's exits (vm_cost.h): NAN when unknown */
static double kvm_exits(int pid)
{
	uint64_t exits, mmio_exits;

	return vm_cost_kvm_exits(pid, &exits, &mmio_exits) ? (double)exits :
							      NAN;
}

/* the exits of the last print, by VM id: the figures before */
static struct {
	uint64_t id;
	double exits;
} *last_exits;
static unsigned int nr_last_exits;

static double exits_before(uint64_t id)
{
	for (unsigned int i = 0; i < nr_last_exits; i++)
		if (last_exits[i].id == id)
			return last_exits[i].exits;
	return NAN;
}

/* ---- the table ------------------------------------------------------------ */

/* @c's figure of row @r: a rate over the interval for counts */
static double figure(const struct column *c, const struct row *r)
{
	double now = c->value(r, r->s);

	if (c->kind != COL_COUNT || !r->rates)
		return now;
	if (!r->p || r->secs <= 0)
		return NAN;	/* bound since the reading before */
	return (now - c->value(r, r->p)) / r->secs;
}

static void cell(const struct column *c, const struct row *r, char *buf,
		 size_t len)
{
	double v;

	if (c->kind == COL_TEXT) {
		c->text(r, buf, len);
		return;
	}
	v = figure(c, r);
	if (isnan(v) || v < 0)
		snprintf(buf, len, "-");
	else if (c->kind == COL_PERCENT || (c->kind == COL_COUNT && r->rates))
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
}

static const struct stat_table_opts *sort_opts;

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	const struct column *c = &columns[sort_opts->sort];
	char bx[128], by[128];
	double vx, vy;

	if (c->kind == COL_TEXT && !c->value) {
		c->text(x, bx, sizeof(bx));
		c->text(y, by, sizeof(by));
		return strcmp(bx, by);
	}
	vx = c->kind == COL_TEXT ? c->value(x, x->s) : figure(c, x);
	vy = c->kind == COL_TEXT ? c->value(y, y->s) : figure(c, y);
	if (isnan(vx) || isnan(vy))
		return isnan(vx) - isnan(vy);
	return vx < vy ? 1 : vx > vy ? -1 : 0;
}

static const struct snap *previous(const struct snap_set *prev,
				   const struct snap *s)
{
	unsigned int i;

	for (i = 0; prev && i < prev->nr; i++)
		if (prev->vms[i].vm.id == s->vm.id)
			return &prev->vms[i];
	return NULL;
}

static struct libscols_table *make_table(const struct stat_table_opts *o,
					 bool rates)
{
	struct libscols_table *tb = scols_new_table();
	const struct column *c;
	char head[32];
	unsigned int i;

	if (!tb)
		return NULL;
	scols_table_enable_raw(tb, o->raw);
	scols_table_enable_noheadings(tb, o->noheadings);
	for (i = 0; i < o->nr_cols; i++) {
		c = &columns[o->cols[i]];
		snprintf(head, sizeof(head), "%s%s", c->name,
			 rates && c->kind == COL_COUNT ? "/s" : "");
		/* names are never cut; the UUID may be, to fit */
		if (!scols_table_new_column(tb, head, 0,
					    (c->may_cut ? SCOLS_FL_TRUNC : 0) |
					    (c->kind == COL_TEXT ? 0 :
					     SCOLS_FL_RIGHT))) {
			scols_unref_table(tb);
			return NULL;
		}
	}
	return tb;
}

int stat_table_print(FILE *f, const struct snap_set *set,
		     const struct snap_set *prev, double secs,
		     const struct stat_table_opts *o)
{
	struct libscols_table *tb;
	struct libscols_line *ln;
	struct row *rows;
	char buf[128];
	unsigned int i, k;
	int ret = -1;

	rows = calloc(set->nr ? set->nr : 1, sizeof(*rows));
	tb = make_table(o, prev);
	if (!rows || !tb)
		goto out;
	for (i = 0; i < set->nr; i++) {
		rows[i].s = &set->vms[i];
		rows[i].p = previous(prev, &set->vms[i]);
		rows[i].rates = prev;
		rows[i].secs = secs;
		rows[i].exits = kvm_exits(set->vms[i].vm.pid);
		rows[i].exits_p = exits_before(set->vms[i].vm.id);
	}
	if (o->sort >= 0) {
		sort_opts = o;
		qsort(rows, set->nr, sizeof(*rows), row_cmp);
	}
	for (i = 0; i < set->nr; i++) {
		ln = scols_table_new_line(tb, NULL);
		if (!ln)
			goto out;
		for (k = 0; k < o->nr_cols; k++) {
			cell(&columns[o->cols[k]], &rows[i], buf, sizeof(buf));
			if (scols_line_set_data(ln, k, buf))
				goto out;
		}
	}
	if (set->nr) {
		scols_table_set_stream(tb, f);
		scols_print_table(tb);
	} else {
		fprintf(f, "(no VM is bound to kvm-perfmon)\n");
	}
	/* these exits are the next print's figures before */
	free(last_exits);
	last_exits = calloc(set->nr ? set->nr : 1, sizeof(*last_exits));
	nr_last_exits = 0;
	for (i = 0; last_exits && i < set->nr; i++) {
		last_exits[nr_last_exits].id = rows[i].s->vm.id;
		last_exits[nr_last_exits++].exits = rows[i].exits;
	}
	ret = 0;
out:
	scols_unref_table(tb);
	free(rows);
	return ret;
}
