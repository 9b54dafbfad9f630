// SPDX-License-Identifier: GPL-2.0
/*
 * scrape_cache: one read of the module per interval however many
 * requests come, one read at a time, and the scrapes handed out stay
 * valid while held.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "scrape_cache.h"

#define SECOND_NS	1000000000ull
#define NR_THREADS	8

/* the fake clock and read; the read counts itself and may be slow */
static uint64_t fake_now_ns;
static unsigned int nr_reads;
static unsigned int read_delay_us;
static int fail_next_read;

static uint64_t fake_clock(void)
{
	return __atomic_load_n(&fake_now_ns, __ATOMIC_SEQ_CST);
}

static struct scrape *fake_read(void *arg)
{
	struct scrape *s;
	unsigned int n;

	(void)arg;
	n = __atomic_add_fetch(&nr_reads, 1, __ATOMIC_SEQ_CST);
	if (read_delay_us)
		usleep(read_delay_us);
	if (fail_next_read) {
		fail_next_read = 0;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	assert_true(asprintf(&s->text, "read %u\n", n) > 0);
	s->len = strlen(s->text);
	return s;
}

static struct scrape_cache cache;

static int setup(void **state)
{
	(void)state;
	fake_now_ns = 1000 * SECOND_NS;
	nr_reads = 0;
	read_delay_us = 0;
	fail_next_read = 0;
	scrape_cache_init(&cache, SECOND_NS, fake_read, NULL, fake_clock);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	scrape_cache_destroy(&cache);
	return 0;
}

static void test_shared_within_interval(void **state)
{
	struct scrape *a, *b;

	(void)state;
	a = scrape_cache_get(&cache);
	assert_non_null(a);
	assert_string_equal(a->text, "read 1\n");
	fake_now_ns += SECOND_NS - 1;
	b = scrape_cache_get(&cache);
	assert_ptr_equal(a, b);
	assert_int_equal(nr_reads, 1);
	scrape_put(a);
	scrape_put(b);
}

static void test_read_again_after_interval(void **state)
{
	struct scrape *a, *b;

	(void)state;
	a = scrape_cache_get(&cache);
	fake_now_ns += SECOND_NS;
	b = scrape_cache_get(&cache);
	assert_ptr_not_equal(a, b);
	assert_int_equal(nr_reads, 2);
	assert_string_equal(b->text, "read 2\n");
	/* the old one, still held, is intact (ASan, valgrind would tell) */
	assert_string_equal(a->text, "read 1\n");
	scrape_put(a);
	scrape_put(b);
}

/* requests every millisecond for ten seconds: ten reads, not 10000 */
static void test_request_rate_does_not_drive_reads(void **state)
{
	struct scrape *s;
	unsigned int i;

	(void)state;
	for (i = 0; i < 10000; i++) {
		s = scrape_cache_get(&cache);
		assert_non_null(s);
		scrape_put(s);
		fake_now_ns += SECOND_NS / 1000;
	}
	assert_int_equal(nr_reads, 10);
}

static void *get_in_thread(void *arg)
{
	struct scrape **out = arg;

	*out = scrape_cache_get(&cache);
	return NULL;
}

/* requests that come while a read runs wait for it and share it */
static void test_one_read_for_concurrent_requests(void **state)
{
	struct scrape *got[NR_THREADS];
	pthread_t t[NR_THREADS];
	unsigned int i;

	(void)state;
	read_delay_us = 200000;
	for (i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, get_in_thread,
						&got[i]), 0);
	for (i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(nr_reads, 1);
	for (i = 0; i < NR_THREADS; i++) {
		assert_ptr_equal(got[i], got[0]);
		scrape_put(got[i]);
	}
}

/* a read that fails for memory is no scrape: the next request reads */
static void test_failed_read_not_cached(void **state)
{
	struct scrape *s;

	(void)state;
	fail_next_read = 1;
	assert_null(scrape_cache_get(&cache));
	s = scrape_cache_get(&cache);
	assert_non_null(s);
	assert_int_equal(nr_reads, 2);
	scrape_put(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shared_within_interval,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_again_after_interval,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_request_rate_does_not_drive_reads, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_one_read_for_concurrent_requests, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_failed_read_not_cached,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
