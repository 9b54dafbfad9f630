// SPDX-License-Identifier: GPL-2.0
/*
 * web_config_load: the exporter-toolkit format's keys this exporter
 * implements, and a clear refusal of every file it cannot honour.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "web_config.h"

#define HASH_A	"$2b$04$grS/GT6zFXbUBZPz4mLusexI30DDYhWElDl4g0qX3nhPh4UuwzMZ6"
#define HASH_Y	"$2y$04$381XgGTa2Us4WjlW6T0uCerBll1hBYu85GTMC6TTIvLdarnJdXawS"
#define CERT	"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define KEY	"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"

/* a directory with server.crt and server.key, for the relative paths */
static char dir[] = "/tmp/test_web_config.XXXXXX";

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	write_file("server.crt", CERT);
	write_file("server.key", KEY);
	write_file("empty.pem", "");
	write_file("not.pem", "hello\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* loads @yaml as web.yml: its return, @c filled, the error in @err */
static int load(const char *yaml, struct web_config *c, char *err,
		size_t len)
{
	char path[256];

	write_file("web.yml", yaml);
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	err[0] = '\0';
	return web_config_load(path, c, err, len);
}

static void expect_ok(const char *yaml, struct web_config *c)
{
	char err[512];

	if (load(yaml, c, err, sizeof(err)))
		fail_msg("refused: %s", err);
}

/* refused, with an error that names the line and says @what */
static void expect_refused(const char *yaml, const char *line,
			   const char *what)
{
	struct web_config c;
	char err[512], at[32];

	assert_int_equal(load(yaml, &c, err, sizeof(err)), -1);
	if (!strstr(err, what))
		fail_msg("error '%s' does not say '%s'", err, what);
	if (line) {
		snprintf(at, sizeof(at), "web.yml:%s: ", line);
		if (!strstr(err, at))
			fail_msg("error '%s' does not say where (%s)", err, at);
	}
	/* nothing held after a refusal */
	assert_null(c.cert_pem);
	assert_null(c.key_pem);
	assert_null(c.users);
	assert_int_equal(c.nr_users, 0);
}

/* @yaml loads as plain HTTP: no TLS, no users */
static void expect_plain_http(const char *yaml)
{
	struct web_config c;

	expect_ok(yaml, &c);
	assert_null(c.cert_pem);
	assert_int_equal(c.nr_users, 0);
	web_config_free(&c);
}

static void test_empty_file_is_plain_http(void **state)
{
	(void)state;
	expect_plain_http("");
	expect_plain_http("# nothing\n");
}

static void test_tls_and_users(void **state)
{
	struct web_config c;

	(void)state;
	expect_ok("tls_server_config:\n"
		  "  cert_file: server.crt\n"
		  "  key_file: server.key\n"
		  "basic_auth_users:\n"
		  "  prometheus: " HASH_A "\n"
		  "  \"ops\": '" HASH_Y "'\n", &c);
	assert_string_equal(c.cert_pem, CERT);
	assert_string_equal(c.key_pem, KEY);
	assert_int_equal(c.nr_users, 2);
	assert_string_equal(c.users[0].name, "prometheus");
	assert_string_equal(c.users[0].hash, HASH_A);
	assert_string_equal(c.users[1].name, "ops");
	assert_string_equal(c.users[1].hash, HASH_Y);
	web_config_free(&c);
}

static void test_absolute_paths(void **state)
{
	struct web_config c;
	char yaml[600];

	(void)state;
	snprintf(yaml, sizeof(yaml), "tls_server_config:\n  cert_file: %s/"
		 "server.crt\n  key_file: %s/server.key\n", dir, dir);
	expect_ok(yaml, &c);
	assert_string_equal(c.cert_pem, CERT);
	web_config_free(&c);
}

static void test_null_sections(void **state)
{
	struct web_config c;

	(void)state;
	expect_plain_http("tls_server_config:\nbasic_auth_users: ~\n");
	expect_ok("tls_server_config:\n  cert_file: server.crt\n"
		  "  key_file: server.key\n"
		  "  client_auth_type: NoClientCert\n", &c);
	assert_non_null(c.cert_pem);
	web_config_free(&c);
}

static void test_not_yaml(void **state)
{
	(void)state;
	expect_refused("tls_server_config:\n  cert_file: [a\n", NULL,
		       "web.yml:");
	expect_refused("just a string\n", "1", "want a mapping");
	expect_refused("- a\n- b\n", "1", "want a mapping");
}

static void test_unknown_and_unsupported_keys(void **state)
{
	(void)state;
	expect_refused("basic_auth_user:\n  a: " HASH_A "\n", "1",
		       "unknown key 'basic_auth_user'");
	expect_refused("http_server_config:\n  http2: false\n", "1",
		       "http_server_config is not supported");
	expect_refused("tls_server_config:\n  cert_file: server.crt\n"
		       "  key_file: server.key\n"
		       "  client_ca_file: ca.crt\n", "4",
		       "tls_server_config.client_ca_file is not supported");
	expect_refused("tls_server_config:\n  cert_file: server.crt\n"
		       "  key_file: server.key\n"
		       "  client_auth_type: RequireAndVerifyClientCert\n", "4",
		       "client certificates are not implemented");
	expect_refused("tls_server_config:\n  cert_file: server.crt\n"
		       "  key_file: server.key\n  min_version: TLS13\n", "4",
		       "min_version is not supported");
	expect_refused("tls_server_config:\n  cert_file: server.crt\n"
		       "  key_file: server.key\n  kee_file: x\n", "4",
		       "unknown key 'kee_file'");
}

static void test_tls_incomplete_or_unreadable(void **state)
{
	(void)state;
	expect_refused("tls_server_config:\n  cert_file: server.crt\n", "1",
		       "want both cert_file and key_file");
	expect_refused("tls_server_config:\n  cert_file: nosuch.crt\n"
		       "  key_file: server.key\n", "2",
		       "No such file or directory");
	expect_refused("tls_server_config:\n  cert_file: empty.pem\n"
		       "  key_file: server.key\n", "2", "empty");
	expect_refused("tls_server_config:\n  cert_file: not.pem\n"
		       "  key_file: server.key\n", "2", "not PEM");
	expect_refused("tls_server_config:\n  cert_file:\n"
		       "  key_file: server.key\n", NULL,
		       "cert_file: want a non-empty string");
	expect_refused("tls_server_config: yes\n", "1", "want a mapping");
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	expect_refused("basic_auth_users:\n  a: " HASH_A "\n  a: " HASH_Y
		       "\n", "3", "'a' given twice");
	expect_refused("tls_server_config:\ntls_server_config:\n", "2",
		       "given twice");
}

static void test_bad_users(void **state)
{
	(void)state;
	expect_refused("basic_auth_users:\n  a: secret\n", "2",
		       "want a bcrypt hash");
	/* sha512-crypt is crypt(3)'s, but not the toolkit's format */
	expect_refused("basic_auth_users:\n  a: '$6$salt$abc'\n", "2",
		       "want a bcrypt hash");
	/* one character short */
	expect_refused("basic_auth_users:\n  a: '"
		       "$2b$04$grS/GT6zFXbUBZPz4mLusexI30DDYhWElDl4g0qX3nhPh4UuwzMZ"
		       "'\n", "2", "want a bcrypt hash");
	/* costs bcrypt does not have; a character outside its base64 */
	expect_refused("basic_auth_users:\n  a: '"
		       "$2b$99$grS/GT6zFXbUBZPz4mLusexI30DDYhWElDl4g0qX3nhPh4UuwzMZ6"
		       "'\n", "2", "want a bcrypt hash");
	expect_refused("basic_auth_users:\n  a: '"
		       "$2b$03$grS/GT6zFXbUBZPz4mLusexI30DDYhWElDl4g0qX3nhPh4UuwzMZ6"
		       "'\n", "2", "want a bcrypt hash");
	expect_refused("basic_auth_users:\n  a: '"
		       "$2b$04$grS/GT6zFXbUBZPz4mLusexI30DDYhWElDl4g0qX3nhPh4Uuwz!Z6"
		       "'\n", "2", "want a bcrypt hash");
	expect_refused("basic_auth_users:\n  'a:b': " HASH_A "\n", "2",
		       "without ':'");
	expect_refused("basic_auth_users:\n  '': " HASH_A "\n", "2",
		       "non-empty name");
	expect_refused("basic_auth_users:\n  a:\n", NULL,
		       "want a non-empty string");
	expect_refused("basic_auth_users:\n  - a\n", "2", "want a mapping");
}

static void test_missing_file(void **state)
{
	struct web_config c;
	char err[256];

	(void)state;
	assert_int_equal(web_config_load("/nonexistent/web.yml", &c, err,
					 sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/web.yml: No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_file_is_plain_http),
		cmocka_unit_test(test_tls_and_users),
		cmocka_unit_test(test_absolute_paths),
		cmocka_unit_test(test_null_sections),
		cmocka_unit_test(test_not_yaml),
		cmocka_unit_test(test_unknown_and_unsupported_keys),
		cmocka_unit_test(test_tls_incomplete_or_unreadable),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_bad_users),
		cmocka_unit_test(test_missing_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
