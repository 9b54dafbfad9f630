// SPDX-License-Identifier: GPL-2.0
/*
 * Basic authentication (basic_auth.h).
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <stdlib.h>
#include <string.h>

#include "basic_auth.h"

/* equal strings of equal length, in time that depends on the length only */
static bool equal_const_time(const char *a, const char *b)
{
	size_t n = strlen(a), i;
	unsigned char d = 0;

	if (n != strlen(b))
		return false;
	for (i = 0; i < n; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return !d;
}

bool basic_auth_ok(const struct web_config *c, const char *user,
		   const char *password)
{
	const struct web_user *u = NULL;
	struct crypt_data *cd;
	const char *hash;
	unsigned int i;
	bool ok;

	if (!c->nr_users || !user || !password)
		return false;
	for (i = 0; i < c->nr_users; i++)
		if (!strcmp(c->users[i].name, user))
			u = &c->users[i];
	/*
	 * An unknown user's password is hashed all the same, with the first
	 * user's setting (its cost): the answer comes as late as for a
	 * known user.
	 */
	hash = u ? u->hash : c->users[0].hash;
	/* crypt_data is 32 kB: not on a server thread's stack */
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	ok = crypt_r(password, hash, cd) && equal_const_time(cd->output, hash);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok && u;
}
