/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HTTP basic authentication against the web config's bcrypt hashes
 * (web_config.h), verified with libxcrypt's crypt_r.
 *
 * bcrypt is slow on purpose (the cost 10 of htpasswd -B: tens of ms), and
 * the server's threads must not all spend a core each on it for whoever
 * sends passwords: one bcrypt runs at a time, and a password that matched
 * is kept per user, so a Prometheus scraping with the right one costs a
 * compare after its first request, not a bcrypt each, whatever a flood of
 * wrong ones costs.
 */
#ifndef HOST_TOOLS_BASIC_AUTH_H
#define HOST_TOOLS_BASIC_AUTH_H

#include <pthread.h>
#include <stdbool.h>

#include "web_config.h"

/* the realm of the 401's WWW-Authenticate */
#define BASIC_AUTH_REALM	"kvm-perfmon-exporter"

struct basic_auth {
	const struct web_config *web;	/* its users; constant */
	pthread_mutex_t bcrypt_lock;	/* one bcrypt at a time */
	unsigned long bcrypts;		/* under @bcrypt_lock: run so far */
	pthread_mutex_t lock;
	char **matched;			/* under @lock: per user of @web, the
					 * password that last matched, or NULL */
};

/* 0, or -1 on no memory */
int basic_auth_init(struct basic_auth *a, const struct web_config *web);
void basic_auth_destroy(struct basic_auth *a);

/*
 * True if @user is one of the web config's users and @password matches
 * its hash. Neither the answer nor its time tells which users exist (an
 * unknown user's password is hashed all the same, with the first user's
 * cost); compares take a time that depends on @password's length alone.
 * False on no memory, for NULL @user or @password, and without users.
 */
bool basic_auth_ok(struct basic_auth *a, const char *user,
		   const char *password);

#endif /* HOST_TOOLS_BASIC_AUTH_H */
