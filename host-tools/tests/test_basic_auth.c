// SPDX-License-Identifier: GPL-2.0
/*
 * basic_auth_ok: bcrypt ($2b$, $2y$) through crypt_r, known users only,
 * the whole password.
 */
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

static void test_right_password(void **state)
{
	(void)state;
	assert_true(basic_auth_ok(&config, "prometheus", "s3cret"));
	assert_true(basic_auth_ok(&config, "ops", "s3cret"));	/* $2y$ */
	assert_true(basic_auth_ok(&config, "grafana", "other"));
}

static void test_wrong_password(void **state)
{
	(void)state;
	assert_false(basic_auth_ok(&config, "prometheus", "S3cret"));
	assert_false(basic_auth_ok(&config, "prometheus", "s3cre"));
	assert_false(basic_auth_ok(&config, "prometheus", "s3cret "));
	assert_false(basic_auth_ok(&config, "prometheus", ""));
	/* another user's password */
	assert_false(basic_auth_ok(&config, "grafana", "s3cret"));
	assert_false(basic_auth_ok(&config, "prometheus", "other"));
}

static void test_unknown_user(void **state)
{
	(void)state;
	/* the first user's password, under a name nobody has */
	assert_false(basic_auth_ok(&config, "nobody", "s3cret"));
	assert_false(basic_auth_ok(&config, "Prometheus", "s3cret"));
	assert_false(basic_auth_ok(&config, "", "s3cret"));
}

static void test_no_credentials(void **state)
{
	static const struct web_config none = { 0 };

	(void)state;
	assert_false(basic_auth_ok(&config, NULL, NULL));
	assert_false(basic_auth_ok(&config, "prometheus", NULL));
	assert_false(basic_auth_ok(&config, NULL, "s3cret"));
	/* no users: nobody authenticates (the server does not ask) */
	assert_false(basic_auth_ok(&none, "prometheus", "s3cret"));
}

/* a hash as crypt(3) gives it, not as stored: the stored one decides */
static void test_hash_is_not_a_password(void **state)
{
	(void)state;
	assert_false(basic_auth_ok(&config, "prometheus", HASH_S3CRET_B));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_right_password),
		cmocka_unit_test(test_wrong_password),
		cmocka_unit_test(test_unknown_user),
		cmocka_unit_test(test_no_credentials),
		cmocka_unit_test(test_hash_is_not_a_password),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
