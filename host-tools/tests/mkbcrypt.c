// SPDX-License-Identifier: GPL-2.0
/*
 * mkbcrypt PASSWORD [COST]: a bcrypt hash of PASSWORD for a web config's
 * basic_auth_users (as htpasswd -nbB would give), from libxcrypt, for the
 * tests: neither htpasswd nor mkpasswd is a dependency of the project.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct crypt_data cd = { 0 };
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	const char *hash;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mkbcrypt PASSWORD [COST]\n");
		return 1;
	}
	if (!crypt_gensalt_rn("$2b$", argc == 3 ? strtoul(argv[2], NULL, 10) :
			      10, NULL, 0, setting, sizeof(setting))) {
		perror("mkbcrypt: crypt_gensalt_rn");
		return 1;
	}
	hash = crypt_r(argv[1], setting, &cd);
	if (!hash || hash[0] == '*') {
		fprintf(stderr, "mkbcrypt: crypt_r failed\n");
		return 1;
	}
	puts(hash);
	return 0;
}
