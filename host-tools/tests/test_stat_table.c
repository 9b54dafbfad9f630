// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-perfmon-stat's table (stat_table.h): --output and --sort as the
 * operator writes them, names never cut, counts per second and RUN% over
 * the interval in watch mode, a VM bound since the last refresh shown
 * as such (snap_interval_running_ratio).
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_snap.h"
#include "stat_table.h"

/* a VM with one event record, in the module's format */
struct vm_build {
	struct kvmpfm_snap_vm vm;
	struct kvmpfm_snap_event ev[2];
};

static void make_vm(struct snap *s, struct vm_build *b, uint64_t id,
		    const char *name, uint64_t samples, uint64_t enabled,
		    uint64_t running, unsigned int nr_events)
{
	memset(b, 0, sizeof(*b));
	fake_snap_vm(&b->vm, id);
	b->vm.pid = 100 + id;
	b->vm.nr_vcpus = 0;	/* no vCPU records: the events follow */
	b->vm.nr_events = nr_events;
	b->vm.stats.samples = samples;
	b->vm.stats.commands = samples / 2;
	for (unsigned int i = 0; i < nr_events; i++) {
		b->ev[i].ctx_id = 1 + i;
		b->ev[i].guest_kind = KVMPFM_EVK_GENERIC;
		b->ev[i].guest_event = 0x76;
		b->ev[i].time_enabled = enabled;
		b->ev[i].time_running = running;
	}
	memset(s, 0, sizeof(*s));
	s->buf = b;
	s->len = sizeof(b->vm) + nr_events * sizeof(b->ev[0]);
	s->vm = b->vm;
	s->name = name;
}

/* the table of @set (after @prev, @secs before) as text */
static char *table(const struct snap_set *set, const struct snap_set *prev,
		   double secs, const struct stat_table_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(stat_table_print(f, set, prev, secs, o), 0);
	fclose(f);
	return text;
}

static void test_output_and_sort_parse(void **state)
{
	struct stat_table_opts o;
	char err[160];

	(void)state;
	stat_table_defaults(&o);
	assert_int_equal(o.nr_cols, 9);
	assert_int_equal(stat_table_parse_output(&o, "name,doorbell%", err,
						 sizeof(err)), 0);
	assert_int_equal(o.nr_cols, 2);
	assert_int_equal(stat_table_parse_output(&o, "+UUID", err,
						 sizeof(err)), 0);
	assert_int_equal(o.nr_cols, 3);
	assert_int_equal(stat_table_parse_output(&o, "NAME,BOGUS", err,
						 sizeof(err)), -1);
	assert_non_null(strstr(err, "no column 'BOGUS'"));
	assert_int_equal(stat_table_parse_output(&o, "", err, sizeof(err)),
			 -1);
	assert_int_equal(stat_table_parse_sort(&o, "samples", err,
					       sizeof(err)), 0);
	assert_int_equal(stat_table_parse_sort(&o, "nope", err, sizeof(err)),
			 -1);
}

/*
 * A name longer than any column is printed whole; --sort SAMPLES puts
 * the busier VM first; --raw and --noheadings as lsblk's.
 */
static void test_names_whole_sorted_raw(void **state)
{
	static struct vm_build b[2];
	static const char long_name[] =
		"tenant-4711-database-primary-eu-west-3b-0042";
	struct snap vms[2];
	struct snap_set set = { vms, 2 };
	struct stat_table_opts o;
	char err[160], *t;

	(void)state;
	make_vm(&vms[0], &b[0], 1, long_name, 10, 100, 100, 1);
	make_vm(&vms[1], &b[1], 2, "small", 500, 100, 50, 1);
	stat_table_defaults(&o);
	assert_int_equal(stat_table_parse_sort(&o, "SAMPLES", err,
					       sizeof(err)), 0);
	t = table(&set, NULL, 0, &o);
	assert_non_null(strstr(t, long_name));
	assert_true(strstr(t, "small") < strstr(t, long_name));
	assert_true(strstr(t, "NAME") == t);
	free(t);

	o.raw = o.noheadings = true;
	assert_int_equal(stat_table_parse_output(&o, "NAME,SAMPLES,RUN%", err,
						 sizeof(err)), 0);
	t = table(&set, NULL, 0, &o);
	assert_string_equal(t, "small 500 50.0\n"
			       "tenant-4711-database-primary-eu-west-3b-0042 "
			       "10 100.0\n");
	free(t);
}

/*
 * Watch mode: 2 s apart, SAMPLES/s from the difference; RUN% over the
 * interval (100 ns more enabled, 25 more running: 25%) where the
 * lifetime figure would say 62.5%; a VM bound since shows "-".
 */
static void test_interval_figures(void **state)
{
	static struct vm_build b[3];
	struct snap before[1], now[2];
	struct snap_set prev = { before, 1 }, set = { now, 2 };
	struct stat_table_opts o;
	char err[160], *t;

	(void)state;
	make_vm(&before[0], &b[0], 1, "a", 100, 100, 100, 1);
	make_vm(&now[0], &b[1], 1, "a", 300, 200, 125, 1);
	make_vm(&now[1], &b[2], 2, "new", 50, 10, 10, 1);
	assert_true(fabs(snap_interval_running_ratio(&now[0], &before[0]) -
			 0.25) < 1e-9);
	assert_true(fabs(snap_running_ratio(&now[0]) - 0.625) < 1e-9);
	stat_table_defaults(&o);
	o.raw = true;
	assert_int_equal(stat_table_parse_output(&o, "NAME,RUN%,SAMPLES", err,
						 sizeof(err)), 0);
	t = table(&set, &prev, 2.0, &o);
	assert_string_equal(t, "NAME RUN% SAMPLES/s\n"
			       "a 25.0 100.0\n"
			       "new 100.0 -\n");
	free(t);
}

/* a record whose counters reopened counts whole: no negative interval */
static void test_interval_ratio_reopened(void **state)
{
	static struct vm_build b[2];
	struct snap before, now;

	(void)state;
	make_vm(&before, &b[0], 1, "a", 0, 1000, 1000, 2);
	make_vm(&now, &b[1], 1, "a", 0, 1100, 1000, 2);
	b[1].ev[1].time_enabled = 40;	/* reopened */
	b[1].ev[1].time_running = 10;
	assert_true(fabs(snap_interval_running_ratio(&now, &before) -
			 10.0 / 140) < 1e-9);
	/* nothing enabled since: unknown */
	assert_true(isnan(snap_interval_running_ratio(&before, &before)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_and_sort_parse),
		cmocka_unit_test(test_names_whole_sorted_raw),
		cmocka_unit_test(test_interval_figures),
		cmocka_unit_test(test_interval_ratio_reopened),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
