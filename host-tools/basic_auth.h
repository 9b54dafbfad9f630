/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HTTP basic authentication against the web config's bcrypt hashes
 * (web_config.h), verified with libxcrypt's crypt_r.
 */
#ifndef HOST_TOOLS_BASIC_AUTH_H
#define HOST_TOOLS_BASIC_AUTH_H

#include <stdbool.h>

#include "web_config.h"

/* the realm of the 401's WWW-Authenticate */
#define BASIC_AUTH_REALM	"kvm-perfmon-exporter"

/*
 * True if @user is one of @c's users and @password matches its hash.
 * Takes one bcrypt computation whether or not @user exists, and compares
 * in constant time: neither the time nor the answer tells which users
 * exist. False on no memory. NULL @user or @password: false.
 */
bool basic_auth_ok(const struct web_config *c, const char *user,
		   const char *password);

#endif /* HOST_TOOLS_BASIC_AUTH_H */
