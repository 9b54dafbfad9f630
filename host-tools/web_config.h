/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's --web.config.file: the YAML file Prometheus's exporters
 * share (prometheus/exporter-toolkit's docs/web-configuration.md), as far
 * as this exporter implements it:
 *
 *   tls_server_config:
 *     cert_file: server.crt      # PEM; relative to the file's directory
 *     key_file: server.key
 *   basic_auth_users:
 *     prometheus: $2b$10$...     # bcrypt ($2a$, $2b$, $2y$)
 *
 * An empty file is plain HTTP without authentication. A key of the
 * toolkit's format that this exporter does not implement (client
 * certificates, TLS versions, cipher suites, HTTP headers) is refused at
 * start-up rather than ignored: a file written for another exporter must
 * not quietly give less than it asks for. So is any unknown key, as the
 * toolkit's strict parsing does.
 */
#ifndef HOST_TOOLS_WEB_CONFIG_H
#define HOST_TOOLS_WEB_CONFIG_H

#include <stddef.h>

struct web_user {
	char *name;
	char *hash;		/* bcrypt, as crypt(3) writes it */
};

struct web_config {
	char *cert_pem;		/* NULL: plain HTTP */
	char *key_pem;
	struct web_user *users;	/* none: no authentication */
	unsigned int nr_users;
};

/*
 * Reads @path into @c. 0, or -1 with @err[@len] saying what is wrong and
 * where ("web.yml:4: ..."); @c then holds nothing.
 */
int web_config_load(const char *path, struct web_config *c, char *err,
		    size_t len);
void web_config_free(struct web_config *c);

#endif /* HOST_TOOLS_WEB_CONFIG_H */
