/*
 * Redaction before anything reaches the log.  Two rules, applied to
 * every level of an event's fields: a value under a key named like a
 * secret is replaced whole, and any secret-shaped run inside any string
 * (keys included, tool output included) is cut out.  Shapes are matched
 * by hand rather than with regex(3) so that one linear pass does all.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auditd.h"

struct shape {
	const char	*name;
	/* bytes matched at s[i], or 0 */
	size_t		(*match)(const char *, size_t, size_t);
};

static int
is_b64url(int c)
{
	return isalnum(c) || c == '-' || c == '_';
}

static int
is_b64(int c)
{
	return isalnum(c) || c == '/' || c == '+';
}

static size_t
span(const char *s, size_t len, size_t i, int (*ok)(int))
{
	size_t n = 0;

	while (i + n < len && ok((unsigned char)s[i + n]))
		n++;
	return n;
}

static int
has_prefix(const char *s, size_t len, size_t i, const char *p)
{
	size_t n = strlen(p);

	return i + n <= len && memcmp(s + i, p, n) == 0;
}

static const char *
find(const char *s, size_t len, size_t from, const char *what)
{
	return from >= len ? NULL : memmem(s + from, len - from, what,
	    strlen(what));
}

/* -----BEGIN ... PRIVATE KEY----- through its END line, or to the end. */
static size_t
match_pem(const char *s, size_t len, size_t i)
{
	const char *nl, *tag, *end;

	if (!has_prefix(s, len, i, "-----BEGIN "))
		return 0;
	nl = find(s, len, i, "\n");
	tag = find(s, len, i, "PRIVATE KEY-----");
	if (tag == NULL || (nl != NULL && tag > nl))
		return 0;
	if ((end = find(s, len, tag - s + 16, "-----END ")) == NULL ||
	    (end = find(s, len, end - s, "PRIVATE KEY-----")) == NULL)
		return len - i;
	return (size_t)(end - s) + 16 - i;
}

/* header.payload.signature, the header being base64url of '{"'. */
static size_t
match_jwt(const char *s, size_t len, size_t i)
{
	size_t a, b;

	if ((i > 0 && is_b64url((unsigned char)s[i - 1])) ||
	    !has_prefix(s, len, i, "eyJ"))
		return 0;
	a = span(s, len, i, is_b64url);
	if (a < 10 || i + a >= len || s[i + a] != '.')
		return 0;
	b = span(s, len, i + a + 1, is_b64url);
	if (b < 2 || i + a + 1 + b >= len || s[i + a + 1 + b] != '.')
		return 0;
	return a + b + 2 + span(s, len, i + a + b + 2, is_b64url);
}

/* Vault: hvs./hvb./hvr. tokens, and the older s./b./r. service forms. */
static size_t
match_vault(const char *s, size_t len, size_t i)
{
	static const char *const modern[] = { "hvs.", "hvb.", "hvr.", NULL };
	static const char *const legacy[] = { "s.", "b.", "r.", NULL };
	size_t j, n;

	if (i > 0 && (is_b64url((unsigned char)s[i - 1]) || s[i - 1] == '.'))
		return 0;
	for (j = 0; modern[j] != NULL; j++)
		if (has_prefix(s, len, i, modern[j]) &&
		    (n = span(s, len, i + 4, is_b64url)) >= 20)
			return 4 + n;
	for (j = 0; legacy[j] != NULL; j++)
		if (has_prefix(s, len, i, legacy[j]) &&
		    (n = span(s, len, i + 2, is_b64url)) >= 24)
			return 2 + n;
	return 0;
}

static int
is_upper_digit(int c)
{
	return isupper(c) || isdigit(c);
}

/* AKIA (long-term) and ASIA (session) ids, and their IAM cousins. */
static size_t
match_aws_id(const char *s, size_t len, size_t i)
{
	static const char *const prefixes[] = { "AKIA", "ASIA", "AIDA",
	    "AROA", "AGPA", "ANPA", "ANVA", "AIPA", "ABIA", "ACCA", NULL };
	size_t j;

	if (i > 0 && isalnum((unsigned char)s[i - 1]))
		return 0;
	for (j = 0; prefixes[j] != NULL; j++)
		if (has_prefix(s, len, i, prefixes[j]))
			break;
	if (prefixes[j] == NULL || span(s, len, i + 4, is_upper_digit) != 16)
		return 0;
	return 20;
}

/*
 * A 40-character secret access key: base64 alphabet, standing alone,
 * mixing upper, lower and digits (a hex digest never does).
 */
static size_t
match_aws_secret(const char *s, size_t len, size_t i)
{
	int upper = 0, lower = 0, digit = 0;
	size_t j;

	if (i > 0 && is_b64((unsigned char)s[i - 1]))
		return 0;
	if (span(s, len, i, is_b64) != 40)
		return 0;
	for (j = i; j < i + 40; j++) {
		upper |= isupper((unsigned char)s[j]) != 0;
		lower |= islower((unsigned char)s[j]) != 0;
		digit |= isdigit((unsigned char)s[j]) != 0;
	}
	return upper && lower && digit ? 40 : 0;
}

static const struct shape shapes[] = {
	{ "private-key", match_pem },
	{ "jwt", match_jwt },
	{ "vault-token", match_vault },
	{ "aws-key-id", match_aws_id },
	{ "aws-secret", match_aws_secret },
};

/*
 * s with every secret-shaped run replaced by <redacted:kind>; NULL when
 * nothing matched (or on ENOMEM, which the caller treats the same way
 * as a failure to record).  *outlen gets the new length.
 */
char *
scrub_text(const char *s, size_t len, size_t *outlen)
{
	char *out = NULL, *n;
	size_t i = 0, o = 0, cap = 0, m, k, need, from = 0;
	const char *kind;

	while (i < len) {
		for (k = 0, m = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
			if ((m = shapes[k].match(s, len, i)) > 0)
				break;
		if (m == 0) {
			i++;
			continue;
		}
		kind = shapes[k].name;
		need = o + (i - from) + strlen(kind) + 16 + (len - i);
		if (need > cap) {
			if ((n = realloc(out, need)) == NULL) {
				free(out);
				return NULL;
			}
			out = n;
			cap = need;
		}
		memcpy(out + o, s + from, i - from);
		o += i - from;
		o += (size_t)snprintf(out + o, cap - o, "<redacted:%s>", kind);
		i += m;
		from = i;
	}
	if (out == NULL)
		return NULL;
	memcpy(out + o, s + from, len - from);
	o += len - from;
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* Words of a key: snake_case, kebab-case, dotted and camelCase split. */
static size_t
key_words(const char *key, char words[][32], size_t max)
{
	const char *p;
	size_t n = 0, w = 0;
	int c, cut;

	for (p = key;; p++) {
		c = (unsigned char)*p;
		cut = c == '\0' || !isalnum(c) || (isupper(c) && w > 0 &&
		    islower((unsigned char)p[-1]));
		if (cut && w > 0) {
			words[n++][w] = '\0';
			w = 0;
			if (n == max)
				break;
		}
		if (c == '\0')
			break;
		if (isalnum(c) && w < 31)
			words[n][w++] = (char)tolower(c);
	}
	return n;
}

static int
word_in(const char *w, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(w, *list) == 0)
			return 1;
	return 0;
}

/*
 * token, client_token, secretAccessKey, private_key, Authorization ...
 * but not a secret's name, type, path or lifetime (token_ttl, scope,
 * lease_id stay readable).
 */
int
scrub_key_is_secret(const char *key)
{
	static const char *const secret[] = { "token", "tokens", "secret",
	    "secrets", "password", "passwd", "passphrase", "pwd",
	    "authorization", "apikey", "cookie", "privatekey", NULL };
	static const char *const keyed[] = { "private", "api", "access",
	    "signing", "encryption", NULL };
	static const char *const about[] = { "ttl", "type", "name", "path",
	    "file", "count", "length", "len", "expiry", "expires", "at",
	    "engine", "scope", "policy", "policies", "role", "kind", NULL };
	char words[16][32];
	size_t n, i;
	int hit = 0;

	if ((n = key_words(key, words, 16)) == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (word_in(words[i], secret))
			hit = 1;
		if (i + 1 < n && strcmp(words[i + 1], "key") == 0 &&
		    word_in(words[i], keyed))
			hit = 1;
	}
	return hit && !word_in(words[n - 1], about);
}

static json_t *
scrub_string(const char *s, size_t len)
{
	json_t *j;
	char *t;
	size_t tlen;

	if ((t = scrub_text(s, len, &tlen)) == NULL)
		return json_stringn(s, len);
	j = json_stringn(t, tlen);
	free(t);
	return j;
}

/*
 * A key gets the same text scrubbing.  Input keys are unique, so a
 * clash can only come from two keys scrubbed alike: number them.
 */
static int
scrub_set(json_t *obj, const char *key, json_t *v)
{
	char *t, *u = NULL;
	const char *k;
	size_t tlen;
	int i, r;

	t = scrub_text(key, strlen(key), &tlen);
	k = t != NULL ? t : key;
	for (i = 2; json_object_get(obj, u != NULL ? u : k) != NULL; i++) {
		free(u);
		if (asprintf(&u, "%s#%d", k, i) == -1) {
			free(t);
			json_decref(v);
			return -1;
		}
	}
	r = json_object_set_new(obj, u != NULL ? u : k, v);
	free(u);
	free(t);
	return r;
}

static int
secret_kind(const json_t *v)
{
	return json_is_string(v) || json_is_object(v) || json_is_array(v) ||
	    json_is_number(v);
}

/* A scrubbed deep copy of v, or NULL on ENOMEM. */
json_t *
scrub_value(const json_t *v)
{
	const char *key;
	json_t *out, *sv, *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if ((out = json_object()) == NULL)
			return NULL;
		json_object_foreach((json_t *)v, key, x) {
			if (scrub_key_is_secret(key) && secret_kind(x))
				sv = json_string(AUDIT_REDACTED);
			else
				sv = scrub_value(x);
			if (sv == NULL || scrub_set(out, key, sv) == -1) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	case JSON_ARRAY:
		if ((out = json_array()) == NULL)
			return NULL;
		json_array_foreach(v, i, x) {
			if ((sv = scrub_value(x)) == NULL ||
			    json_array_append_new(out, sv) == -1) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	case JSON_STRING:
		return scrub_string(json_string_value(v), json_string_length(v));
	default:
		return json_incref((json_t *)v);
	}
}
