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

struct credentials {
	const char *user;
	const char *password;
};

static void assert_each(const struct credentials *c, size_t n, bool want)
{
	for (; n--; c++)
		if (ok(c->user, c->password) != want)
			fail_msg("%s / \"%s\": %s", c->user, c->password,
				 want ? "refused" : "accepted");
}

#define ASSERT_ACCEPTED(c)	assert_each(c, sizeof(c) / sizeof(c[0]), true)
#define ASSERT_REFUSED(c)	assert_each(c, sizeof(c) / sizeof(c[0]), false)

static const struct credentials right[] = {
	{ "prometheus", "s3cret" },
	{ "ops", "s3cret" },		/* $2y$ */
	{ "grafana", "other" },
};

static const struct credentials wrong[] = {
	{ "prometheus", "S3cret" },
	{ "prometheus", "s3cre" },
	{ "prometheus", "s3cret " },
	{ "prometheus", "" },
	/* another user's password */
	{ "grafana", "s3cret" },
	{ "prometheus", "other" },
};

/* the first user's password, under a name nobody has */
static const struct credentials unknown[] = {
	{ "nobody", "s3cret" },
	{ "Prometheus", "s3cret" },
	{ "", "s3cret" },
};

static void test_right_password(void **state)
{
	(void)state;
	ASSERT_ACCEPTED(right);
}

static void test_wrong_password(void **state)
{
	(void)state;
	ASSERT_REFUSED(wrong);
}

static void test_unknown_user(void **state)
{
	(void)state;
	ASSERT_REFUSED(unknown);
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

/* one request after another, and the bcrypts counted after each */
struct step {
	struct credentials c;
	bool accepted;
	unsigned long bcrypts;
};

/* the second right password is a compare; wrong ones are never kept */
static void test_matched_password_kept(void **state)
{
	static const struct step steps[] = {
		{ { "prometheus", "s3cret" }, true, 1 },
		{ { "prometheus", "s3cret" }, true, 1 },
		{ { "prometheus", "s3cret" }, true, 1 },
		/* a prefix, an extension, another case: a bcrypt each */
		{ { "prometheus", "s3cre" }, false, 2 },
		{ { "prometheus", "s3crets3cret" }, false, 3 },
		{ { "prometheus", "S3CRET" }, false, 4 },
		/* kept per user: another user's right one is a bcrypt */
		{ { "ops", "other" }, false, 5 },
		{ { "ops", "s3cret" }, true, 6 },
		/* an unknown user with a kept password: a bcrypt, no */
		{ { "nobody", "s3cret" }, false, 7 },
		{ { "prometheus", "s3cret" }, true, 7 },
	};
	const struct step *s;

	(void)state;
	for (s = steps; s < steps + sizeof(steps) / sizeof(steps[0]); s++) {
		assert_each(&s->c, 1, s->accepted);
		if (auth.bcrypts != s->bcrypts)
			fail_msg("after %s / \"%s\": %lu bcrypts, want %lu",
				 s->c.user, s->c.password, auth.bcrypts,
				 s->bcrypts);
	}
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
