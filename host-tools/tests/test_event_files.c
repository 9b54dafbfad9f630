// SPDX-License-Identifier: GPL-2.0
/*
 * The eventmap and filter files (lib/event_files.c), as QEMU's
 * pv-perfmon and kvm-perfmon-stat read them: what each line gives, that
 * every error names its line and field, that the bounds hold, and that a
 * filter written back by event_filter_line() reads as itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "lib/event_files.h"

static struct kvmpfm_event_map *new_map(void)
{
	return calloc(1, sizeof(struct kvmpfm_event_map) +
		      KVMPFM_MAX_EVENT_MAP * sizeof(struct kvmpfm_event_map_entry));
}

static struct kvmpfm_event_filter *new_filter(void)
{
	return calloc(1, sizeof(struct kvmpfm_event_filter) +
		      KVMPFM_MAX_FILTER * sizeof(struct kvmpfm_filter_event));
}

static int map_of(const char *text, struct kvmpfm_event_map *map,
		  struct event_file_error *err)
{
	return event_map_parse(text, strlen(text), map, err);
}

static int filter_of(const char *text, struct kvmpfm_event_filter *f,
		     struct event_file_error *err)
{
	return event_filter_parse(text, strlen(text), f, err);
}

static void test_map_lines(void **state)
{
	struct kvmpfm_event_map *map = new_map();
	struct event_file_error err;

	(void)state;
	assert_int_equal(map_of("# the rig's aliases\n"
				"generic 0x76 0 -> software task-clock emulated\n"
				"\n"
				"  fixed 1 -> hardware cpu-cycles   # same event\n"
				"generic 0xc0 0x00 -> raw 0x5300c0\n", map, &err), 0);
	assert_int_equal(map->nr, 3);
	assert_int_equal(map->entries[0].guest_kind, KVMPFM_EVK_GENERIC);
	assert_int_equal(map->entries[0].guest_event, 0x76);
	assert_int_equal(map->entries[0].host_type, PERF_TYPE_SOFTWARE);
	assert_int_equal(map->entries[0].host_config, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(map->entries[0].flags, KVMPFM_MAP_EMULATED);
	assert_int_equal(map->entries[1].guest_kind, KVMPFM_EVK_FIXED);
	assert_int_equal(map->entries[1].guest_event, 1);
	assert_int_equal(map->entries[1].host_type, PERF_TYPE_HARDWARE);
	assert_int_equal(map->entries[1].flags, 0);
	assert_int_equal(map->entries[2].host_type, PERF_TYPE_RAW);
	assert_int_equal(map->entries[2].host_config, 0x5300c0);
	free(map);
}

static void expect_map_error(const char *text, unsigned int line,
			     const char *msg)
{
	struct kvmpfm_event_map *map = new_map();
	struct event_file_error err;

	assert_int_equal(map_of(text, map, &err), -1);
	assert_int_equal(err.line, line);
	if (!strstr(err.msg, msg))
		fail_msg("'%s': want '%s'", err.msg, msg);
	free(map);
}

static void test_map_errors(void **state)
{
	(void)state;
	expect_map_error("generic 0x76 0 -> software task-clock\n"
			 "generic 0x1000 0 -> raw 1\n", 2,
			 "the event select '0x1000' is not a number from 0 to 0xfff");
	expect_map_error("fixed 1 hardware cpu-cycles\n", 1,
			 "expected '->' after the guest event, not 'hardware'");
	expect_map_error("fixed 1 -> hardware cycles\n", 1,
			 "unknown hardware event 'cycles' (a number or one of: cpu-cycles,");
	expect_map_error("fixed 1 -> tracepoint 5\n", 1,
			 "unknown host event type 'tracepoint'");
	expect_map_error("fixed 1 -> raw\n", 1, "'raw' needs an event number");
	expect_map_error("fixed 1 -> raw 0x12 now\n", 1,
			 "unexpected 'now' after the host event");
	expect_map_error("fixed 0 -> raw 1\nfixed 0 -> raw 2\n", 2,
			 "this guest event is already mapped on line 1");
	expect_map_error("counter 0 -> raw 1\n", 1,
			 "expected 'generic' or 'fixed', not 'counter'");
	expect_map_error("generic -1 0 -> raw 1\n", 1, "'-1' is not a number");
	expect_map_error("generic 0x 0 -> raw 1\n", 1, "'0x' is not a number");
	expect_map_error("generic 12z 0 -> raw 1\n", 1, "'12z' is not a number");
	expect_map_error("generic 0x76 -> raw 1\n", 1, "the unit mask '->'");
}

static void test_map_bounds(void **state)
{
	struct kvmpfm_event_map *map = new_map();
	struct event_file_error err;
	char *text = malloc(EVENT_FILE_MAX_SIZE + 2);
	size_t at = 0;
	unsigned int i;

	(void)state;
	for (i = 0; i <= KVMPFM_MAX_EVENT_MAP; i++)
		at += sprintf(text + at, "generic %u 0 -> raw 1\n", i);
	assert_int_equal(event_map_parse(text, at, map, &err), -1);
	assert_int_equal(err.line, KVMPFM_MAX_EVENT_MAP + 1);
	assert_string_equal(err.msg, "more than 64 aliases");
	/* a NUL, a file too long, a line too long, too many words */
	assert_int_equal(event_map_parse("fixed 1\0", 8, map, &err), -1);
	assert_int_equal(err.line, 0);
	memset(text, ' ', EVENT_FILE_MAX_SIZE + 1);
	assert_int_equal(event_map_parse(text, EVENT_FILE_MAX_SIZE + 1, map,
					 &err), -1);
	assert_int_equal(err.line, 0);
	assert_string_equal(err.msg, "not a text file of at most 64 KiB");
	assert_int_equal(event_map_parse(text, EVENT_FILE_MAX_LINE, map, &err),
			 -1);
	assert_int_equal(err.line, 1);
	assert_int_equal(map_of("fixed 1 -> raw 1 a b c d e f g h i j k l m\n",
				map, &err), -1);
	assert_string_equal(err.msg, "too many words");
	/* blanks alone are nothing, up to the bound */
	assert_int_equal(event_map_parse(text, EVENT_FILE_MAX_LINE - 1, map,
					 &err), 0);
	assert_int_equal(map->nr, 0);
	free(text);
	free(map);
}

static void test_filter_lines(void **state)
{
	struct kvmpfm_event_filter *f = new_filter();
	struct event_file_error err;

	(void)state;
	f->vm_id = 7;
	assert_int_equal(filter_of("deny\n"
				   "generic 0x41/0xff 0/0   # any unit mask\n"
				   "fixed 2\n"
				   "virtual 0x100\n", f, &err), 0);
	assert_int_equal(f->action, KVMPFM_FILTER_DENY);
	assert_int_equal(f->nr, 3);
	assert_int_equal(f->vm_id, 7);
	assert_int_equal(f->events[0].guest_kind, KVMPFM_EVK_GENERIC);
	assert_int_equal(f->events[0].event, 0x41);
	assert_int_equal(f->events[0].event_mask, 0xff);
	assert_int_equal(f->events[0].umask_mask, 0);
	assert_int_equal(f->events[1].guest_kind, KVMPFM_EVK_FIXED);
	assert_int_equal(f->events[1].event, 2);
	assert_int_equal(f->events[1].event_mask, 15);
	assert_int_equal(f->events[2].guest_kind, KVMPFM_EVK_VIRTUAL);
	assert_int_equal(f->events[2].event_mask, 0xffff);
	assert_int_equal(filter_of("allow\n", f, &err), 0);
	assert_int_equal(f->action, KVMPFM_FILTER_ALLOW);
	assert_int_equal(f->nr, 0);
	free(f);
}

static void expect_filter_error(const char *text, unsigned int line,
				const char *msg)
{
	struct kvmpfm_event_filter *f = new_filter();
	struct event_file_error err;

	assert_int_equal(filter_of(text, f, &err), -1);
	assert_int_equal(err.line, line);
	if (!strstr(err.msg, msg))
		fail_msg("'%s': want '%s'", err.msg, msg);
	free(f);
}

static void test_filter_errors(void **state)
{
	(void)state;
	/* what tests/rig/qemu-errors.sh sees QEMU print */
	expect_filter_error("deny\ngeneric 0x41/0xff 0/0\nfixed 99\n", 3,
			    "the fixed counter index '99' is not a number");
	expect_filter_error("generic 0x41 0\n", 1,
			    "the first line must be 'allow' or 'deny'");
	expect_filter_error("# nothing\n", 0, "no 'allow' or 'deny' line");
	expect_filter_error("allow\ndeny\n", 2,
			    "'allow' or 'deny' comes once, before the events");
	expect_filter_error("allow all\n", 1, "unexpected 'all'");
	expect_filter_error("allow\ngeneric 0x41\n", 2, "the unit mask is missing");
	expect_filter_error("allow\ngeneric 0x41 0/0x100\n", 2,
			    "the mask '0x100' is not a number from 0 to 0xff");
	expect_filter_error("allow\nfixed 1 2\n", 2,
			    "unexpected '2' after the event");
	expect_filter_error("allow\nraw 1\n", 2,
			    "expected 'generic', 'fixed' or 'virtual', not 'raw'");
}

static void test_filter_bounds(void **state)
{
	struct kvmpfm_event_filter *f = new_filter();
	struct event_file_error err;
	char *text = malloc(EVENT_FILE_MAX_SIZE);
	size_t at = sprintf(text, "allow\n");
	unsigned int i;

	(void)state;
	for (i = 0; i <= KVMPFM_MAX_FILTER; i++)
		at += sprintf(text + at, "virtual %u\n", i);
	assert_int_equal(event_filter_parse(text, at, f, &err), -1);
	assert_int_equal(err.line, KVMPFM_MAX_FILTER + 2);
	assert_string_equal(err.msg, "more than 256 events");
	assert_int_equal(f->nr, KVMPFM_MAX_FILTER);
	free(text);
	free(f);
}

/* what kvm-perfmon-stat shows of a filter, it can set again */
static void test_filter_round_trip(void **state)
{
	struct kvmpfm_event_filter *f = new_filter(), *g = new_filter();
	struct event_file_error err;
	char text[4096], line[128];
	size_t at;
	__u32 i;

	(void)state;
	assert_int_equal(filter_of("allow\ngeneric 0x76 0\n"
				   "generic 0x41/0xf0 0x4f/0x0f\nfixed 0/0\n"
				   "virtual 0x101\n", f, &err), 0);
	at = sprintf(text, "%s\n", event_filter_action_name(f->action));
	for (i = 0; i < f->nr; i++) {
		event_filter_line(&f->events[i], line, sizeof(line));
		at += sprintf(text + at, "%s\n", line);
	}
	assert_int_equal(filter_of(text, g, &err), 0);
	assert_int_equal(g->action, f->action);
	assert_int_equal(g->nr, f->nr);
	assert_memory_equal(g->events, f->events, f->nr * sizeof(f->events[0]));
	event_filter_line(&f->events[1], line, sizeof(line));
	assert_string_equal(line, "generic 0x41/0xf0 0x4f/0x0f");
	assert_null(event_filter_action_name(2));
	free(f);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_lines),
		cmocka_unit_test(test_map_errors),
		cmocka_unit_test(test_map_bounds),
		cmocka_unit_test(test_filter_lines),
		cmocka_unit_test(test_filter_errors),
		cmocka_unit_test(test_filter_bounds),
		cmocka_unit_test(test_filter_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
