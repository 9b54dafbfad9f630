// SPDX-License-Identifier: GPL-2.0
/*
 * Basic authentication (basic_auth.h).
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <stdlib.h>
#include <string.h>

#include "basic_auth.h"

int basic_auth_init(struct basic_auth *a, const struct web_config *web)
{
	a->web = web;
	a->bcrypts = 0;
	a->matched = calloc(web->nr_users ? web->nr_users : 1,
			    sizeof(*a->matched));
	if (!a->matched)
		return -1;
	pthread_mutex_init(&a->bcrypt_lock, NULL);
	pthread_mutex_init(&a->lock, NULL);
	return 0;
}

static void forget(char **s)
{
	if (*s) {
		explicit_bzero(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

void basic_auth_destroy(struct basic_auth *a)
{
	unsigned int i;

	for (i = 0; i < a->web->nr_users; i++)
		forget(&a->matched[i]);
	free(a->matched);
	a->matched = NULL;
}

/*
 * @given equals @known, in a time that depends on @given's length alone:
 * every byte of @given is compared, against @known's bytes in turn (its
 * length, which the caller does not know, changes nothing but the result).
 */
static bool equal_const_time(const char *given, const char *known)
{
	size_t n = strlen(given), k = strlen(known), i;
	unsigned char d = n != k;

	for (i = 0; i < n; i++)
		d |= (unsigned char)given[i] ^
		     (unsigned char)known[k ? i % k : 0];
	return !d;
}

/* crypt_r's answer for @password with @hash's setting equals @hash */
static bool bcrypt_matches(struct basic_auth *a, const char *password,
			   const char *hash)
{
	struct crypt_data *cd;
	bool ok;

	/* crypt_data is 32 kB: not on a server thread's stack */
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	pthread_mutex_lock(&a->bcrypt_lock);
	a->bcrypts++;
	ok = crypt_r(password, hash, cd) && equal_const_time(cd->output, hash);
	pthread_mutex_unlock(&a->bcrypt_lock);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

bool basic_auth_ok(struct basic_auth *a, const char *user,
		   const char *password)
{
	const struct web_config *c = a->web;
	unsigned int i, u = c->nr_users;
	char *copy;
	bool ok;

	if (!c->nr_users || !user || !password)
		return false;
	for (i = 0; i < c->nr_users; i++)
		if (!strcmp(c->users[i].name, user))
			u = i;
	if (u < c->nr_users) {
		pthread_mutex_lock(&a->lock);
		ok = a->matched[u] && equal_const_time(password, a->matched[u]);
		pthread_mutex_unlock(&a->lock);
		if (ok)
			return true;
	}
	/* an unknown user's password costs a bcrypt too, at the first's cost */
	ok = bcrypt_matches(a, password, c->users[u < c->nr_users ? u : 0].hash);
	if (!ok || u == c->nr_users)
		return false;
	copy = strdup(password);
	pthread_mutex_lock(&a->lock);
	forget(&a->matched[u]);
	a->matched[u] = copy;	/* NULL on no memory: bcrypt next time */
	pthread_mutex_unlock(&a->lock);
	return true;
}
