// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's --web.config.file (web_config.h), parsed with libyaml's
 * document API; bcrypt hashes checked with libxcrypt's crypt_checksalt.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "web_config.h"

/* a certificate chain or a key is a few kB; anything past this is not one */
#define PEM_MAX_BYTES		(1024 * 1024)
#define BCRYPT_HASH_LEN		60	/* "$2b$NN$" + 22 salt + 31 hash */

/* where a load is: the file's name and directory, the document */
struct loader {
	const char *path;
	char *dir;
	yaml_document_t doc;
	struct web_config *c;
	char *err;
	size_t len;
};

/* the toolkit's keys this exporter refuses, with why */
struct unsupported {
	const char *key;
	const char *why;
};

static const struct unsupported unsupported_tls[] = {
	{ "cert", "give the certificate as cert_file" },
	{ "key", "give the key as key_file" },
	{ "client_auth_type", "client certificates are not implemented" },
	{ "client_ca_file", "client certificates are not implemented" },
	{ "client_ca", "client certificates are not implemented" },
	{ "client_allowed_sans", "client certificates are not implemented" },
	{ "min_version", "TLS 1.2 and 1.3 are always offered" },
	{ "max_version", "TLS 1.2 and 1.3 are always offered" },
	{ "cipher_suites", "GnuTLS's NORMAL suites are always offered" },
	{ "curve_preferences", "GnuTLS's NORMAL curves are always offered" },
	{ "prefer_server_cipher_suites", "GnuTLS's order is always used" },
	{ }
};

static const struct unsupported unsupported_top[] = {
	{ "http_server_config", "HTTP/2 and extra headers are not "
	  "implemented" },
	{ "rate_limit", "per-IP connection limits are built in" },
	{ }
};

static int fail(struct loader *l, const yaml_node_t *n, const char *fmt, ...)
{
	size_t off = 0;
	va_list ap;
	int w;

	if (n)
		w = snprintf(l->err, l->len, "%s:%zu: ", l->path,
			     n->start_mark.line + 1);
	else
		w = snprintf(l->err, l->len, "%s: ", l->path);
	if (w > 0)
		off = (size_t)w < l->len ? (size_t)w : l->len;
	va_start(ap, fmt);
	vsnprintf(l->err + off, l->len - off, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ?
		(const char *)n->data.scalar.value : NULL;
}

/* YAML's null: nothing, ~ or null, unquoted */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null") ||
		!strcmp(s, "Null") || !strcmp(s, "NULL"));
}

/* a non-empty string value, or an error naming @key */
static const char *string_value(struct loader *l, const char *key,
				const yaml_node_t *v)
{
	const char *s = scalar(v);

	if (!s || !*s || is_null(v)) {
		fail(l, v, "%s: want a non-empty string", key);
		return NULL;
	}
	return s;
}

/*
 * Walks mapping @map: each key a string, none twice; @fn(l, key, value)
 * for each pair. @what names the mapping in errors.
 */
typedef int pair_fn(struct loader *l, const char *key, yaml_node_t *k,
		    yaml_node_t *v);

static int for_each_pair(struct loader *l, yaml_node_t *map, const char *what,
			 pair_fn *fn)
{
	yaml_node_pair_t *p, *q;
	yaml_node_t *k, *v;
	const char *key;

	if (map->type != YAML_MAPPING_NODE)
		return fail(l, map, "%s: want a mapping (key: value lines)",
			    what);
	for (p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(&l->doc, p->key);
		v = yaml_document_get_node(&l->doc, p->value);
		key = scalar(k);
		if (!key || !v)
			return fail(l, k, "%s: want string keys", what);
		for (q = map->data.mapping.pairs.start; q < p; q++)
			if (!strcmp(scalar(yaml_document_get_node(&l->doc,
								  q->key)) ?: "",
				    key))
				return fail(l, k, "%s: '%s' given twice",
					    what, key);
		if (fn(l, key, k, v))
			return -1;
	}
	return 0;
}

static int refuse_unsupported(struct loader *l, const struct unsupported *u,
			      const char *what, const char *key,
			      const yaml_node_t *k)
{
	for (; u->key; u++)
		if (!strcmp(u->key, key))
			return fail(l, k, "%s.%s is not supported by "
				    "kvm-perfmon-exporter (%s)", what, key,
				    u->why);
	return fail(l, k, "%s: unknown key '%s'", what, key);
}

/* the file @name names, relative to the config's directory, as a string */
static char *read_pem(struct loader *l, const char *key, const yaml_node_t *v)
{
	const char *name = string_value(l, key, v);
	char *path = NULL, *buf = NULL;
	size_t n = 0;
	FILE *f;

	if (!name)
		return NULL;
	if (name[0] == '/')
		path = strdup(name);
	else if (asprintf(&path, "%s/%s", l->dir, name) < 0)
		path = NULL;
	if (!path) {
		fail(l, v, "out of memory");
		return NULL;
	}
	f = fopen(path, "re");
	if (!f) {
		fail(l, v, "%s: %s: %s", key, path, strerror(errno));
		goto out;
	}
	buf = malloc(PEM_MAX_BYTES + 1);
	if (buf)
		n = fread(buf, 1, PEM_MAX_BYTES + 1, f);
	if (!buf) {
		fail(l, v, "out of memory");
	} else if (ferror(f) || n > PEM_MAX_BYTES || !n) {
		fail(l, v, "%s: %s: %s", key, path, ferror(f) ?
		     strerror(errno) : n ? "larger than 1 MiB" : "empty");
		free(buf);
		buf = NULL;
	} else {
		buf[n] = '\0';
		if (!strstr(buf, "-----BEGIN ")) {
			fail(l, v, "%s: %s: not PEM (no -----BEGIN line)", key,
			     path);
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
out:
	free(path);
	return buf;
}

static int tls_pair(struct loader *l, const char *key, yaml_node_t *k,
		    yaml_node_t *v)
{
	char **pem;

	if (!strcmp(key, "cert_file"))
		pem = &l->c->cert_pem;
	else if (!strcmp(key, "key_file"))
		pem = &l->c->key_pem;
	else if (!strcmp(key, "client_auth_type") && scalar(v) &&
		 !strcmp(scalar(v), "NoClientCert"))
		return 0;	/* the toolkit's default, said aloud */
	else
		return refuse_unsupported(l, unsupported_tls,
					  "tls_server_config", key, k);
	*pem = read_pem(l, key, v);
	return *pem ? 0 : -1;
}

/*
 * bcrypt as crypt(3) writes it: $2a$, $2b$ or $2y$, a cost of 04 to 31
 * (crypt_checksalt does not look at it), then salt and hash in bcrypt's
 * base64 (crypt_checksalt does).
 */
static bool is_bcrypt(const char *h)
{
	int cost;

	if (strlen(h) != BCRYPT_HASH_LEN || h[0] != '$' || h[1] != '2' ||
	    (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' ||
	    h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' ||
	    h[6] != '$')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	return cost >= 4 && cost <= 31 && crypt_checksalt(h) == CRYPT_SALT_OK;
}

static int user_pair(struct loader *l, const char *key, yaml_node_t *k,
		     yaml_node_t *v)
{
	struct web_user *u = &l->c->users[l->c->nr_users];
	const char *hash;

	/* Basic credentials split at the first colon: such a name never matches */
	if (!*key || strchr(key, ':'))
		return fail(l, k, "basic_auth_users: user '%s': want a "
			    "non-empty name without ':'", key);
	hash = string_value(l, key, v);
	if (!hash)
		return -1;
	if (!is_bcrypt(hash))
		return fail(l, v, "basic_auth_users: user '%s': want a bcrypt "
			    "hash ($2b$, $2y$ or $2a$, 60 characters, e.g. "
			    "from htpasswd -nbB)", key);
	u->name = strdup(key);
	u->hash = strdup(hash);
	l->c->nr_users++;
	if (!u->name || !u->hash)
		return fail(l, v, "out of memory");
	return 0;
}

static int top_pair(struct loader *l, const char *key, yaml_node_t *k,
		    yaml_node_t *v)
{
	size_t nr;

	if (strcmp(key, "tls_server_config") &&
	    strcmp(key, "basic_auth_users"))
		return refuse_unsupported(l, unsupported_top, "web config",
					  key, k);
	if (is_null(v))
		return 0;
	if (!strcmp(key, "tls_server_config")) {
		if (for_each_pair(l, v, key, tls_pair))
			return -1;
		if (!l->c->cert_pem || !l->c->key_pem)
			return fail(l, k, "tls_server_config: want both "
				    "cert_file and key_file");
		return 0;
	}
	if (v->type != YAML_MAPPING_NODE)
		return fail(l, v, "basic_auth_users: want a mapping (user: "
			    "bcrypt hash lines)");
	nr = v->data.mapping.pairs.top - v->data.mapping.pairs.start;
	l->c->users = calloc(nr ? nr : 1, sizeof(*l->c->users));
	if (!l->c->users)
		return fail(l, v, "out of memory");
	return for_each_pair(l, v, key, user_pair);
}

int web_config_load(const char *path, struct web_config *c, char *err,
		    size_t len)
{
	struct loader l = { .path = path, .c = c, .err = err, .len = len };
	yaml_parser_t parser;
	yaml_node_t *root;
	char *copy;
	FILE *f;
	int ret = -1;

	memset(c, 0, sizeof(*c));
	copy = strdup(path);
	if (!copy)
		return fail(&l, NULL, "out of memory");
	l.dir = strdup(dirname(copy));
	free(copy);
	if (!l.dir)
		return fail(&l, NULL, "out of memory");
	f = fopen(path, "re");
	if (!f) {
		fail(&l, NULL, "%s", strerror(errno));
		free(l.dir);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		fail(&l, NULL, "out of memory");
		goto out_file;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &l.doc)) {
		snprintf(err, len, "%s:%zu: %s", path,
			 parser.problem_mark.line + 1,
			 parser.problem ?: "not YAML");
		goto out_parser;
	}
	root = yaml_document_get_root_node(&l.doc);
	if (!root || is_null(root))
		ret = 0;	/* empty: plain HTTP, no authentication */
	else
		ret = for_each_pair(&l, root, "web config", top_pair);
	yaml_document_delete(&l.doc);
out_parser:
	yaml_parser_delete(&parser);
out_file:
	fclose(f);
	free(l.dir);
	if (ret)
		web_config_free(c);
	return ret;
}

void web_config_free(struct web_config *c)
{
	unsigned int i;

	for (i = 0; i < c->nr_users; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	free(c->users);
	free(c->cert_pem);
	if (c->key_pem) {
		explicit_bzero(c->key_pem, strlen(c->key_pem));
		free(c->key_pem);
	}
	memset(c, 0, sizeof(*c));
}
