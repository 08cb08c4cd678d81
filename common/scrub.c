/* SPDX-License-Identifier: ISC */
/*
 * Redaction before anything reaches the log.  Two rules, applied to
 * every level of an event's fields: a value under a key named like a
 * secret is replaced whole, and any secret-shaped run inside any string
 * (keys included, tool output included) is cut out.  A string is
 * matched twice when it holds escapes: as it is, and as it reads once
 * JSON's \n, \t, \", \uXXXX and URL's %XX are undone (text that is
 * itself JSON, logged URLs), each cut made in the original.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scrub.h"
#include "scrub_shape.h"

/*
 * A string with its escapes undone: at[k] is where in the original the
 * escape that gave byte k starts, at[len] the original's end.
 */
struct view {
	char	*s;
	size_t	*at;
	size_t	 len;
};

/* What goes, in the original's offsets. */
struct cut {
	size_t		 from, to;
	const char	*kind;
};

struct cuts {
	struct cut	*v;
	size_t		 n, cap;
};

static int
hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The n hex digits at s[i], or -1. */
static long
hex_at(const char *s, size_t len, size_t i, size_t n)
{
	long v = 0;
	int d;

	if (len - i < n)
		return -1;
	for (; n > 0; n--, i++) {
		if ((d = hex((unsigned char)s[i])) == -1)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

static int
unescaped(int c)
{
	switch (c) {
	case 'n':
		return '\n';
	case 't':
		return '\t';
	case 'r':
		return '\r';
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case '"':
	case '\'':
	case '\\':
	case '/':
		return c;
	default:
		return -1;
	}
}

/* \uXXXX at s[i] (a surrogate pair whole) as UTF-8 in out; its width. */
static size_t
unicode_at(const char *s, size_t len, size_t i, char *out, size_t *n)
{
	long cp, lo;
	size_t w = 6;

	if ((cp = hex_at(s, len, i + 2, 4)) == -1)
		return 0;
	if (cp >= 0xd800 && cp < 0xdc00 && len - i >= 12 && s[i + 6] == '\\' &&
	    s[i + 7] == 'u' && (lo = hex_at(s, len, i + 8, 4)) >= 0xdc00 &&
	    lo < 0xe000) {
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		w = 12;
	} else if (cp >= 0xd800 && cp < 0xe000)
		return 0;
	if (cp < 0x80) {
		out[0] = (char)cp;
		*n = 1;
	} else if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		*n = 2;
	} else if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		*n = 3;
	} else {
		out[0] = (char)(0xf0 | cp >> 18);
		out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[3] = (char)(0x80 | (cp & 0x3f));
		*n = 4;
	}
	return w;
}

/*
 * s with its escapes undone, in v: 1, or 0 when it has none (v is then
 * untouched), or -1 on ENOMEM.  Decoding never lengthens a string.
 */
static int
view_decode(const char *s, size_t len, struct view *v)
{
	char b[4];
	size_t i, k, n, w, bn;
	int c, changed = 0;

	if (memchr(s, '\\', len) == NULL && memchr(s, '%', len) == NULL)
		return 0;
	if ((v->s = malloc(len + 1)) == NULL ||
	    (v->at = reallocarray(NULL, len + 1, sizeof(*v->at))) == NULL) {
		free(v->s);
		return -1;
	}
	for (i = n = 0; i < len; i += w) {
		b[0] = s[i];
		w = bn = 1;
		if (s[i] == '%' && (c = hex_at(s, len, i + 1, 2)) != -1) {
			b[0] = (char)c;
			w = 3;
		} else if (s[i] == '\\' && i + 1 < len && s[i + 1] == 'u') {
			if ((k = unicode_at(s, len, i, b, &bn)) != 0)
				w = k;
		} else if (s[i] == '\\' && i + 1 < len &&
		    (c = unescaped((unsigned char)s[i + 1])) != -1) {
			b[0] = (char)c;
			w = 2;
		}
		changed |= w > 1;
		for (k = 0; k < bn; k++, n++) {
			v->s[n] = b[k];
			v->at[n] = i;
		}
	}
	if (!changed) {
		free(v->s);
		free(v->at);
		return 0;
	}
	v->at[n] = len;
	v->len = n;
	return 1;
}

static int
cuts_add(struct cuts *c, size_t from, size_t to, const char *kind)
{
	struct cut *n;

	if (from >= to)
		return 0;
	if (c->n == c->cap) {
		if ((n = reallocarray(c->v, c->cap + 8, sizeof(*n))) == NULL)
			return -1;
		c->v = n;
		c->cap += 8;
	}
	c->v[c->n++] = (struct cut){ from, to, kind };
	return 0;
}

/*
 * One pass of the shapes over s, the cuts in the original's offsets (at
 * maps them when s is a view, NULL when s is the original).
 */
static int
scan(const char *s, size_t len, const size_t *at, struct cuts *c)
{
	struct scrub_hit h;
	size_t i = 0, from, to;

	while (i < len) {
		if (!scrub_shape(s, len, i, &h)) {
			i++;
			continue;
		}
		from = i + h.keep;
		to = i + h.len;
		if (cuts_add(c, at != NULL ? at[from] : from,
		    at != NULL ? at[to] : to, h.kind) == -1)
			return -1;
		i = to;
	}
	return 0;
}

/* By start, the longer first where two start together. */
static int
cut_order(const void *a, const void *b)
{
	const struct cut *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to > y->to ? -1 : x->to < y->to;
}

/*
 * s with the cuts made, overlapping ones as one (named by the first):
 * the two views may cut the same secret a little differently.
 */
static char *
cut_out(const char *s, size_t len, struct cuts *c, size_t *outlen)
{
	const struct cut *x;
	size_t k, pos = 0, o = 0, need = len + 1;
	char *out;

	qsort(c->v, c->n, sizeof(*c->v), cut_order);
	for (k = 0; k < c->n; k++)
		need += sizeof("<redacted:>") - 1 + strlen(c->v[k].kind);
	if ((out = malloc(need)) == NULL)
		return NULL;
	for (k = 0; k < c->n; k++) {
		x = &c->v[k];
		if (x->from < pos) {
			if (x->to > pos)
				pos = x->to;
			continue;
		}
		memcpy(out + o, s + pos, x->from - pos);
		o += x->from - pos;
		o += (size_t)snprintf(out + o, need - o, "<redacted:%s>",
		    x->kind);
		pos = x->to;
	}
	memcpy(out + o, s + pos, len - pos);
	o += len - pos;
	out[o] = '\0';
	*outlen = o;
	return out;
}

/*
 * s with every secret-shaped run replaced by <redacted:kind>, *outlen
 * its length; NULL when nothing matched, and NULL with errno ENOMEM
 * when memory ran out (the caller clears errno first).
 */
char *
scrub_text(const char *s, size_t len, size_t *outlen)
{
	struct cuts c = { NULL, 0, 0 };
	struct view v;
	char *out = NULL;
	int r;

	if ((r = scan(s, len, NULL, &c)) == 0 &&
	    (r = view_decode(s, len, &v)) == 1) {
		r = scan(v.s, v.len, v.at, &c);
		free(v.s);
		free(v.at);
	}
	if (r != -1 && c.n > 0 && (out = cut_out(s, len, &c, outlen)) == NULL)
		r = -1;
	free(c.v);
	if (r == -1)
		errno = ENOMEM;
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

/* PGPASSWORD, ghtoken: a secret word glued to a prefix counts too. */
static int
word_ends_in(const char *w, const char *const *list)
{
	size_t n = strlen(w), m;

	for (; *list != NULL; list++)
		if ((m = strlen(*list)) <= n && strcmp(w + n - m, *list) == 0)
			return 1;
	return 0;
}

/*
 * token, client_token, secretAccessKey, private_key, Authorization,
 * DB_PASS ... but not a secret's name, type, path or lifetime (token_ttl,
 * scope, lease_id stay readable) nor where it is read from
 * (--password-stdin).  "pass" counts only as the last word of several:
 * SMTP_PASS, not pass or bypass.
 */
/* One of these is in every secret name: most keys stop here. */
static int
has_stem(const char *key)
{
	static const char *const stems[] = { "tok", "secr", "pass", "pwd",
	    "auth", "key", "cookie", NULL };
	const char *const *p;
	int c;

	for (; *key != '\0'; key++) {
		c = tolower((unsigned char)*key);
		for (p = stems; strchr("tspakc", c) != NULL && *p != NULL; p++)
			if (c == (*p)[0] &&
			    strncasecmp(key, *p, strlen(*p)) == 0)
				return 1;
	}
	return 0;
}

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
	    "engine", "scope", "policy", "policies", "role", "kind", "stdin",
	    NULL };
	char words[16][32];
	size_t n, i;
	int hit = 0;

	if (!has_stem(key) || (n = key_words(key, words, 16)) == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (word_ends_in(words[i], secret))
			hit = 1;
		if (i + 1 < n && strcmp(words[i + 1], "key") == 0 &&
		    word_in(words[i], keyed))
			hit = 1;
	}
	if (n > 1 && strcmp(words[n - 1], "pass") == 0)
		hit = 1;
	return hit && !word_in(words[n - 1], about);
}

static json_t *
scrub_string(const char *s, size_t len)
{
	json_t *j;
	char *t;
	size_t tlen;

	errno = 0;
	if ((t = scrub_text(s, len, &tlen)) == NULL)
		return errno == ENOMEM ? NULL : json_stringn(s, len);
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

	errno = 0;
	if ((t = scrub_text(key, strlen(key), &tlen)) == NULL &&
	    errno == ENOMEM) {
		json_decref(v);
		return -1;
	}
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
