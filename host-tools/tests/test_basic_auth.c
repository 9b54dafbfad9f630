// SPDX-License-Identifier: GPL-2.0
/*
 * basic_auth_ok: bcrypt ($2b$, $2y$) through crypt_r, known users only,
 * the whole password; a password that matched costs no bcrypt again, a
 * wrong one always does.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "basic_auth.h"

/* "s3cret" and "other", cost 4 */
#define HASH_S3CRET_B	"$2b$04$grS/GT6zFXbUBZPz4mLusexI30DDYhWElDl4g0qX3nhPh4UuwzMZ6"
#define HASH_S3CRET_Y	"$2y$04$381XgGTa2Us4WjlW6T0uCerBll1hBYu85GTMC6TTIvLdarnJdXawS"
#define HASH_OTHER	"$2b$04$U3Dq7SFwR/VHusrGo5TXkuMSRauvlULRrmtwQLcPvxrI5jcgMJbAy"

static struct web_user users[] = {
	{ "prometheus", HASH_S3CRET_B },
	{ "ops", HASH_S3CRET_Y },
	{ "grafana", HASH_OTHER },
};
static const struct web_config config = { .users = users, .nr_users = 3 };
static struct basic_auth auth;

static int setup(void **state)
{
	(void)state;
	return basic_auth_init(&auth, &config);
}

static int teardown(void **state)
{
	(void)state;
	basic_auth_destroy(&auth);
	return 0;
}

static bool ok(const char *user, const char *password)
{
	return basic_auth_ok(&auth, user, password);
}

static void test_right_password(void **state)
{
	(void)state;
	assert_true(ok("prometheus", "s3cret"));
	assert_true(ok("ops", "s3cret"));	/* $2y$ */
	assert_true(ok("grafana", "other"));
}

static void test_wrong_password(void **state)
{
	(void)state;
	assert_false(ok("prometheus", "S3cret"));
	assert_false(ok("prometheus", "s3cre"));
	assert_false(ok("prometheus", "s3cret "));
	assert_false(ok("prometheus", ""));
	/* another user's password */
	assert_false(ok("grafana", "s3cret"));
	assert_false(ok("prometheus", "other"));
}

static void test_unknown_user(void **state)
{
	(void)state;
	/* the first user's password, under a name nobody has */
	assert_false(ok("nobody", "s3cret"));
	assert_false(ok("Prometheus", "s3cret"));
	assert_false(ok("", "s3cret"));
}

static void test_no_credentials(void **state)
{
	static const struct web_config none = { 0 };
	struct basic_auth no_users;

	(void)state;
	assert_false(ok(NULL, NULL));
	assert_false(ok("prometheus", NULL));
	assert_false(ok(NULL, "s3cret"));
	/* no users: nobody authenticates (the server does not ask) */
	assert_int_equal(basic_auth_init(&no_users, &none), 0);
	assert_false(basic_auth_ok(&no_users, "prometheus", "s3cret"));
	basic_auth_destroy(&no_users);
}

/* a hash as crypt(3) gives it, not as stored: the stored one decides */
static void test_hash_is_not_a_password(void **state)
{
	(void)state;
	assert_false(ok("prometheus", HASH_S3CRET_B));
}

/* the second right password is a compare; wrong ones are never kept */
static void test_matched_password_kept(void **state)
{
	(void)state;
	assert_true(ok("prometheus", "s3cret"));
	assert_int_equal(auth.bcrypts, 1);
	assert_true(ok("prometheus", "s3cret"));
	assert_true(ok("prometheus", "s3cret"));
	assert_int_equal(auth.bcrypts, 1);
	/* a prefix, an extension, another case of the kept one: a bcrypt each */
	assert_false(ok("prometheus", "s3cre"));
	assert_false(ok("prometheus", "s3crets3cret"));
	assert_false(ok("prometheus", "S3CRET"));
	assert_int_equal(auth.bcrypts, 4);
	/* kept per user: another user's right password is its own bcrypt */
	assert_false(ok("ops", "other"));
	assert_true(ok("ops", "s3cret"));
	assert_int_equal(auth.bcrypts, 6);
	/* an unknown user with a kept password: still a bcrypt, still no */
	assert_false(ok("nobody", "s3cret"));
	assert_int_equal(auth.bcrypts, 7);
	assert_true(ok("prometheus", "s3cret"));
	assert_int_equal(auth.bcrypts, 7);
}

static void *wrong_in_thread(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 0; i < 20; i++)
		assert_false(ok("prometheus", "wrong"));
	return NULL;
}

/* wrong passwords from threads at once, the right one still accepted */
static void test_concurrent(void **state)
{
	pthread_t t[4];
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, wrong_in_thread,
						NULL), 0);
	for (i = 0; i < 20; i++)
		assert_true(ok("prometheus", "s3cret"));
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	/* 80 wrong ones, and the first right one */
	assert_int_equal(auth.bcrypts, 81);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_right_password, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wrong_password, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unknown_user, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_credentials, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hash_is_not_a_password,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_matched_password_kept,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
