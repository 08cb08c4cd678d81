/* SPDX-License-Identifier: ISC */
/*
 * The secret on its way from Vault to runnerd.  It exists in brokerd
 * as Vault's parsed answer and as the file runnerd will mount; both
 * are wiped when freed, and it leaves in a sealed memfd, never in a
 * message payload, a log line or an audit event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brokerd.h"
#include "io.h"
#include "platform.h"

/* Room before each block to remember its size, keeping malloc's alignment. */
#define WIPE_HDR	16

static void *
wipe_malloc(size_t n)
{
	char *p;

	if (n > SIZE_MAX - WIPE_HDR || (p = malloc(n + WIPE_HDR)) == NULL)
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + WIPE_HDR;
}

static void
wipe_free(void *ptr)
{
	char *p;
	size_t n;

	if (ptr == NULL)
		return;
	p = (char *)ptr - WIPE_HDR;
	memcpy(&n, p, sizeof(n));
	explicit_bzero(p, n + WIPE_HDR);
	free(p);
}

/*
 * Jansson holds Vault's answers, secrets included: every block it
 * frees is wiped first.  Must run before any JSON is allocated.
 */
void
cred_init(void)
{
	json_set_alloc_funcs(wipe_malloc, wipe_free);
}

/* Text from json_dumps() goes back to whichever allocator made it. */
void
json_text_free(char *text)
{
	json_free_t f;

	json_get_alloc_funcs(NULL, &f);
	f(text);
}

int
secret_set(struct secret *s, const void *buf, size_t len)
{
	secret_clear(s);
	if ((s->buf = malloc(len + 1)) == NULL)
		return -1;
	memcpy(s->buf, buf, len);
	s->buf[len] = '\0';
	s->len = len;
	return 0;
}

void
secret_clear(struct secret *s)
{
	if (s->buf != NULL) {
		explicit_bzero(s->buf, s->len);
		free(s->buf);
	}
	s->buf = NULL;
	s->len = 0;
}

/* The only way a secret is ever formatted. */
const char *
secret_fmt(const struct secret *s)
{
	(void)s;
	return "<redacted>";
}

static json_t *
string_or_null(const char *s)
{
	return s != NULL && *s != '\0' ? json_string(s) : json_null();
}

/*
 * The file runnerd mounts into the sandbox (see brokerd.8): for
 * kubernetes {"token","namespace","service_account","server","ca",...},
 * for aws {"access_key","secret_key","session_token",...}.
 */
int
cred_file(const struct brokerd_scope *sc, const char *ns,
    const char *lease_id, long ttl, const json_t *data, const char *ca_pem,
    struct secret *out)
{
	const char *token, *session;
	json_t *f;
	char *text;
	int r;

	if (strcmp(sc->engine, "kubernetes") == 0) {
		token = json_string_value(json_object_get(data,
		    "service_account_token"));
		if (token == NULL)
			return -1;
		f = json_pack("{s:s, s:s, s:o, s:o, s:o, s:s, s:I}",
		    "token", token, "namespace", ns,
		    "service_account", string_or_null(json_string_value(
		    json_object_get(data, "service_account_name"))),
		    "server", string_or_null(sc->kube_server),
		    "ca", string_or_null(ca_pem),
		    "lease_id", lease_id, "ttl", (json_int_t)ttl);
	} else {
		/* Older Vaults say security_token, newer ones session_token. */
		session = json_string_value(json_object_get(data,
		    "session_token"));
		if (session == NULL)
			session = json_string_value(json_object_get(data,
			    "security_token"));
		if (json_string_value(json_object_get(data, "access_key")) ==
		    NULL || json_string_value(json_object_get(data,
		    "secret_key")) == NULL)
			return -1;
		f = json_pack("{s:O, s:O, s:o, s:s, s:I}",
		    "access_key", json_object_get(data, "access_key"),
		    "secret_key", json_object_get(data, "secret_key"),
		    "session_token", string_or_null(session),
		    "lease_id", lease_id, "ttl", (json_int_t)ttl);
	}
	if (f == NULL || (text = json_dumps(f, JSON_COMPACT |
	    JSON_SORT_KEYS)) == NULL) {
		json_decref(f);
		return -1;
	}
	json_decref(f);
	r = secret_set(out, text, strlen(text));
	json_text_free(text);
	return r;
}

/*
 * The secret in a sealed in-memory file: neither runnerd nor anyone it
 * passes the descriptor to can change or grow it.
 */
int
cred_memfd(const struct secret *s)
{
	return plat_sealed_fd("agent-sandbox-cred", s->buf, s->len);
}
