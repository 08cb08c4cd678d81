/* SPDX-License-Identifier: ISC */
/*
 * The credential a call was given never comes back to the agent.  The
 * engine reads its bytes from brokerd's memfd before passing it on, and
 * cuts them, their base64 and their hex (either case) out of every
 * string of the sandbox's result (stdout, stderr, the plan's text and
 * JSON, outputs; a stream's base64 copy as the bytes it holds) before
 * anything is made of it: the MCP result, the
 * approval's plan, the audit record.  A credential that is a JSON
 * object (brokerd's, brokerd(8)) has the values of its secret fields
 * (token, access_key, secret_key, session_token: a key that names a
 * token, a secret, a key or a password) cut as well, an access key pair
 * being printed a field at a time; its namespace, server and CA are no
 * secret and stay.  What runnerd does
 * not know how to spell (another encoding, a reversed or split copy)
 * still passes: the README says so.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "log.h"
#include "runnerd.h"

#define SECRET_MAX	(64 * 1024)
#define PART_MIN	8
#define FORMS_MAX	64
#define REDACTED	"<redacted:credential>"

struct secret {
	char	*forms[FORMS_MAX];
	size_t	 lens[FORMS_MAX];
	size_t	 n;
};

static void
form_add(struct secret *s, char *f, size_t len)
{
	if (f == NULL || len < PART_MIN || s->n == FORMS_MAX) {
		freezero(f, len);
		return;
	}
	s->forms[s->n] = f;
	s->lens[s->n++] = len;
}

static char *
dup_bytes(const void *p, size_t len)
{
	char *d;

	if ((d = malloc(len + 1)) != NULL) {
		memcpy(d, p, len);
		d[len] = '\0';
	}
	return d;
}

/* The bytes as they are, in base64, padded and not, and in hex. */
static void
forms_of(struct secret *s, const unsigned char *b, size_t len)
{
	char *b64, *hex, *up;
	size_t i, n;

	form_add(s, dup_bytes(b, len), len);
	if ((b64 = base64_encode(b, len)) != NULL) {
		n = strlen(b64);
		form_add(s, dup_bytes(b64, n), n);
		while (n > 0 && b64[n - 1] == '=')
			n--;
		form_add(s, dup_bytes(b64, n), n);
		free(b64);
	}
	if ((hex = malloc(2 * len + 1)) == NULL ||
	    (up = malloc(2 * len + 1)) == NULL) {
		free(hex);
		return;
	}
	hex_encode(b, len, hex);
	for (i = 0; i < 2 * len; i++)
		up[i] = (char)toupper((unsigned char)hex[i]);
	hex[2 * len] = up[2 * len] = '\0';
	form_add(s, hex, 2 * len);
	form_add(s, up, 2 * len);
}

static int
secret_field(const char *key)
{
	return strstr(key, "token") != NULL || strstr(key, "secret") != NULL ||
	    strstr(key, "key") != NULL || strstr(key, "password") != NULL;
}

/*
 * The forms of the secret in memfd fd, read from its start without
 * moving its offset; NULL when there is none to know.
 */
struct secret *
secret_load(int fd)
{
	struct secret *s;
	unsigned char *buf;
	const char *key, *v;
	json_t *j, *e;
	ssize_t n;

	if ((buf = malloc(SECRET_MAX)) == NULL)
		return NULL;
	if ((n = pread(fd, buf, SECRET_MAX, 0)) <= 0 ||
	    (s = calloc(1, sizeof(*s))) == NULL) {
		freezero(buf, SECRET_MAX);
		return NULL;
	}
	if (n == SECRET_MAX)
		log_warnx("credential over %d bytes: only its start is "
		    "redacted from results", SECRET_MAX);
	forms_of(s, buf, (size_t)n);
	if ((j = json_loadb((const char *)buf, (size_t)n, 0, NULL)) != NULL &&
	    json_is_object(j))
		json_object_foreach(j, key, e)
			if ((v = json_string_value(e)) != NULL &&
			    secret_field(key))
				forms_of(s, (const unsigned char *)v,
				    json_string_length(e));
	json_decref(j);
	freezero(buf, SECRET_MAX);
	if (s->n == 0) {
		free(s);
		return NULL;
	}
	return s;
}

void
secret_free(struct secret *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		freezero(s->forms[i], s->lens[i]);
	free(s);
}

/* The length of the form that starts str[i], 0 when none does. */
static size_t
hit_at(const struct secret *s, const char *str, size_t len, size_t i)
{
	size_t k;

	for (k = 0; k < s->n; k++)
		if (s->forms[k][0] == str[i] && s->lens[k] <= len - i &&
		    memcmp(str + i, s->forms[k], s->lens[k]) == 0)
			return s->lens[k];
	return 0;
}

/*
 * The string with every form cut; NULL when none is in it, found before
 * anything is allocated: most strings of a result hold none.
 */
static char *
cut(const struct secret *s, const char *str, size_t len, size_t *outlen)
{
	char *out, *o;
	size_t i, hit;

	for (i = 0; i < len && hit_at(s, str, len, i) == 0; i++)
		;
	if (i == len)
		return NULL;
	/* A cut of PART_MIN bytes or more grows to REDACTED at most. */
	if ((o = out = malloc(len + len / PART_MIN * sizeof(REDACTED) + 1)) ==
	    NULL)
		return NULL;
	memcpy(o, str, i);
	o += i;
	while (i < len) {
		if ((hit = hit_at(s, str, len, i)) == 0) {
			*o++ = str[i++];
			continue;
		}
		memcpy(o, REDACTED, sizeof(REDACTED) - 1);
		o += sizeof(REDACTED) - 1;
		i += hit;
	}
	*o = '\0';
	*outlen = (size_t)(o - out);
	return out;
}

/*
 * A stream's exact bytes (NAME_base64, output.c): the credential is cut
 * from the bytes, at whatever offset, and they are encoded again; all
 * of it goes when that cannot be done.  -1 when j is not base64.
 */
static int
redact_base64(json_t *j, const struct secret *s)
{
	unsigned char *raw;
	char *c, *b64;
	size_t n, len;

	if ((raw = base64_decode(json_string_value(j), json_string_length(j),
	    &n)) == NULL)
		return -1;
	if ((c = cut(s, (const char *)raw, n, &len)) != NULL) {
		if ((b64 = base64_encode(c, len)) == NULL ||
		    json_string_set(j, b64) == -1)
			(void)json_string_set(j, REDACTED);
		free(b64);
		free(c);
	}
	freezero(raw, n);
	return 0;
}

/* Every string in j, at any depth. */
void
secret_redact(json_t *j, const struct secret *s)
{
	const char *key;
	json_t *v;
	size_t i, len, klen;
	char *c;

	if (s == NULL || j == NULL)
		return;
	if (json_is_string(j)) {
		if ((c = cut(s, json_string_value(j), json_string_length(j),
		    &len)) != NULL) {
			if (json_string_setn(j, c, len) == -1)
				(void)json_string_set(j, REDACTED);
			free(c);
		}
		return;
	}
	if (json_is_array(j))
		json_array_foreach(j, i, v)
			secret_redact(v, s);
	else if (json_is_object(j))
		json_object_foreach(j, key, v) {
			klen = strlen(key);
			if (klen > 7 && strcmp(key + klen - 7, "_base64") ==
			    0 && json_is_string(v) && redact_base64(v, s) == 0)
				continue;
			secret_redact(v, s);
		}
}
