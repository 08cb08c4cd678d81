/*
 * Redaction before anything reaches the log.  Two rules, applied to
 * every level of an event's fields: a value under a key named like a
 * secret is replaced whole, and any secret-shaped run inside any string
 * (keys included, tool output included) is cut out.  Shapes are matched
 * by hand rather than with regex(3) so that one linear pass does all: a
 * shape may only start where the byte before is not alphanumeric, so
 * inside a word the pass costs one isalnum() a byte.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrub.h"

/* What one shape matched at s[i]: keep bytes stay, the rest is cut. */
struct hit {
	const char	*kind;
	size_t		 keep;
	size_t		 len;
};

/*
 * A token: a literal prefix, then a body of one character class read to
 * its end, whose length must lie in [min, max] (max 0: no limit).
 * mixed: the body must hold upper, lower and digits, which random keys
 * do and words, names and hex digests do not.
 */
struct token {
	const char	*kind;
	const char	*prefix;
	size_t		 plen;
	int		(*body)(int);
	size_t		 min, max;
	int		 mixed;
};
#define PFX(p)	(p), sizeof(p) - 1

static int
is_word(int c)
{
	return isalnum(c) || c == '_';
}

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

/* base64(1) output: padded, wrapped at 76 columns. */
static int
is_b64_lines(int c)
{
	return is_b64(c) || c == '=' || c == '\n' || c == '\r';
}

static int
is_upper_digit(int c)
{
	return isupper(c) || isdigit(c);
}

/*
 * Formats as each vendor documents them:
 * - GitHub: gh[pousr]_ + 36 of [A-Za-z0-9_], "plan to support tokens up
 *   to 255 characters"; github_pat_ + 22 + _ + 59 (github.blog changelog
 *   2021-03-31, "Authentication token format updates").
 * - GitLab: glpat- + 20 or more of [A-Za-z0-9_-] (docs.gitlab.com,
 *   personal access tokens).
 * - Slack: xoxb- bot, xoxp- user, xoxa-/xoxr- app and refresh, xoxs-
 *   session (api.slack.com/docs/token-types), digits, letters and dashes.
 * - Stripe: sk_live_, rk_live_ (restricted), sk_test_, rk_test_ + base62,
 *   up to 255 (docs.stripe.com/keys).
 * - Google: AIza + 35 of [A-Za-z0-9_-] (cloud.google.com/docs/
 *   authentication/api-keys: "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe").
 * - npm: npm_ + 36 base62, the GitHub format (github.blog 2021-09-23,
 *   "Announcing npm's new access token format").
 * - Anthropic: sk-ant-api03- + ~95 base64url, ~108 in all; OpenAI: sk-
 *   + 48 base62, or sk-proj-/sk-svcacct- + base64url.  sk- is also a
 *   word prefix (sk-learn): 40 characters at least, mixed.
 * - Vault: hvs./hvb./hvr., and the older s./b./r. service forms.
 * - AWS: AKIA (long-term) and ASIA (session) ids and their IAM cousins,
 *   + 16 of [A-Z0-9]; a secret key is 40 base64 characters, mixed.
 * - "-----BEGIN" in base64 starts "LS0tLS1CRUdJTi": a PEM block (private
 *   key or not) as a Kubernetes Secret or kubeconfig carries it.
 * Longer prefixes come first: sk-ant- before sk-.
 */
static const struct token tokens[] = {
	{ "github-token", PFX("ghp_"), is_word, 36, 251, 0 },
	{ "github-token", PFX("gho_"), is_word, 36, 251, 0 },
	{ "github-token", PFX("ghu_"), is_word, 36, 251, 0 },
	{ "github-token", PFX("ghs_"), is_word, 36, 251, 0 },
	{ "github-token", PFX("ghr_"), is_word, 36, 251, 0 },
	{ "github-token", PFX("github_pat_"), is_word, 60, 244, 0 },
	{ "gitlab-token", PFX("glpat-"), is_b64url, 20, 0, 0 },
	{ "slack-token", PFX("xoxa-"), is_b64url, 20, 0, 0 },
	{ "slack-token", PFX("xoxb-"), is_b64url, 20, 0, 0 },
	{ "slack-token", PFX("xoxp-"), is_b64url, 20, 0, 0 },
	{ "slack-token", PFX("xoxr-"), is_b64url, 20, 0, 0 },
	{ "slack-token", PFX("xoxs-"), is_b64url, 20, 0, 0 },
	{ "stripe-key", PFX("sk_live_"), is_word, 16, 247, 0 },
	{ "stripe-key", PFX("rk_live_"), is_word, 16, 247, 0 },
	{ "stripe-key", PFX("sk_test_"), is_word, 16, 247, 0 },
	{ "stripe-key", PFX("rk_test_"), is_word, 16, 247, 0 },
	{ "google-api-key", PFX("AIza"), is_b64url, 35, 35, 0 },
	{ "npm-token", PFX("npm_"), is_word, 36, 36, 0 },
	{ "anthropic-key", PFX("sk-ant-"), is_b64url, 32, 0, 1 },
	{ "openai-key", PFX("sk-"), is_b64url, 40, 0, 1 },
	{ "vault-token", PFX("hvs."), is_b64url, 20, 0, 0 },
	{ "vault-token", PFX("hvb."), is_b64url, 20, 0, 0 },
	{ "vault-token", PFX("hvr."), is_b64url, 20, 0, 0 },
	{ "vault-token", PFX("s."), is_b64url, 24, 0, 0 },
	{ "vault-token", PFX("b."), is_b64url, 24, 0, 0 },
	{ "vault-token", PFX("r."), is_b64url, 24, 0, 0 },
	{ "aws-key-id", PFX("AKIA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("ASIA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("AIDA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("AROA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("AGPA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("ANPA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("ANVA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("AIPA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("ABIA"), is_upper_digit, 16, 16, 0 },
	{ "aws-key-id", PFX("ACCA"), is_upper_digit, 16, 16, 0 },
	{ "private-key", PFX("LS0tLS1CRUdJTi"), is_b64_lines, 0, 0, 0 },
	{ "aws-secret", PFX(""), is_b64, 40, 40, 1 },
};

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

static int
mixed(const char *s, size_t n)
{
	int upper = 0, lower = 0, digit = 0;
	size_t j;

	for (j = 0; j < n; j++) {
		upper |= isupper((unsigned char)s[j]) != 0;
		lower |= islower((unsigned char)s[j]) != 0;
		digit |= isdigit((unsigned char)s[j]) != 0;
	}
	return upper && lower && digit;
}

/*
 * The one token matcher.  A token stands alone: the byte before it is
 * not part of a base64url run, a dotted name, or (whitespace aside) its
 * own body.
 */
static int
match_token(const struct token *t, const char *s, size_t len, size_t i,
    struct hit *h)
{
	size_t n;
	int c;

	if (len - i < t->plen + t->min ||
	    memcmp(s + i, t->prefix, t->plen) != 0)
		return 0;
	if (i > 0) {
		c = (unsigned char)s[i - 1];
		if (is_b64url(c) || c == '.' || (t->body(c) && !isspace(c)))
			return 0;
	}
	/* A body that may wrap does not take the line end after it. */
	n = span(s, len, i + t->plen, t->body);
	while (n > 0 && isspace((unsigned char)s[i + t->plen + n - 1]))
		n--;
	if (n < t->min || (t->max != 0 && n > t->max) ||
	    (t->mixed && !mixed(s + i + t->plen, n)))
		return 0;
	h->kind = t->kind;
	h->keep = 0;
	h->len = t->plen + n;
	return 1;
}

#define NTOKENS	(sizeof(tokens) / sizeof(tokens[0]))
_Static_assert(NTOKENS <= 64, "one bit per token in candidates[]");

/*
 * Tried in table order, but only those that can start with s[i]: a set
 * of them per first byte, built on first use.
 */
static int
match_tokens(const char *s, size_t len, size_t i, struct hit *h)
{
	static uint64_t candidates[256];
	static int built;
	uint64_t m;
	size_t k;
	int c;

	if (!built) {
		for (k = 0; k < NTOKENS; k++)
			for (c = 0; c < 256; c++)
				if (tokens[k].plen == 0 ||
				    (unsigned char)tokens[k].prefix[0] == c)
					candidates[c] |= 1ULL << k;
		built = 1;
	}
	for (m = candidates[(unsigned char)s[i]]; m != 0; m &= m - 1)
		if (match_token(&tokens[__builtin_ctzll(m)], s, len, i, h))
			return 1;
	return 0;
}

/*
 * -----BEGIN ... PRIVATE KEY----- (OpenSSH's included) through its END
 * line, or to the end.  The tag is looked for in the BEGIN line only, so
 * that a run of BEGINs without one costs no more than its length.
 */
static int
match_pem(const char *s, size_t len, size_t i, struct hit *h)
{
	const char *tag, *end;
	size_t line;

	if (!has_prefix(s, len, i, "-----BEGIN "))
		return 0;
	line = len - i < 64 ? len - i : 64;
	if ((tag = memmem(s + i, line, "PRIVATE KEY-----", 16)) == NULL ||
	    memchr(s + i, '\n', tag - (s + i)) != NULL)
		return 0;
	h->kind = "private-key";
	h->keep = 0;
	if ((end = find(s, len, tag - s + 16, "-----END ")) == NULL ||
	    (end = find(s, len, end - s, "PRIVATE KEY-----")) == NULL)
		h->len = len - i;
	else
		h->len = (size_t)(end - s) + 16 - i;
	return 1;
}

/* header.payload.signature, the header being base64url of '{"'. */
static int
match_jwt(const char *s, size_t len, size_t i, struct hit *h)
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
	h->kind = "jwt";
	h->keep = 0;
	h->len = a + b + 2 + span(s, len, i + a + b + 2, is_b64url);
	return 1;
}

static int
is_scheme(int c)
{
	return isalnum(c) || c == '+' || c == '.' || c == '-';
}

/*
 * scheme://user:password@host: the password goes, scheme, user and host
 * stay.  RFC 3986 has '/', '?', '#' and '@' percent-encoded inside the
 * userinfo; each part is read at most 256 bytes.
 */
static int
match_url(const char *s, size_t len, size_t i, struct hit *h)
{
	static const char stop[] = "@/?#\"' \t\r\n";
	size_t j, p;

	if (!isalpha((unsigned char)s[i]))
		return 0;
	j = i + span(s, len, i, is_scheme);
	if (j - i > 32 || !has_prefix(s, len, j, "://"))
		return 0;
	for (j += 3, p = j; j < len && j - p < 256 && s[j] != ':' &&
	    s[j] != '\0' && strchr(stop, s[j]) == NULL; j++)
		;
	if (j >= len || s[j] != ':')
		return 0;
	for (p = ++j; j < len && j - p < 256 && s[j] != '\0' &&
	    strchr(stop, s[j]) == NULL; j++)
		;
	if (j == p || j >= len || s[j] != '@')
		return 0;
	h->kind = "url-password";
	h->keep = p - i;
	h->len = j - i;
	return 1;
}

static int
is_keychar(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

/*
 * The value after a key named like a secret in free text (command lines,
 * shell output, config files): password=v, --token=v, "api_key": "v",
 * secret: v.  Key and separator stay, and so does an HTTP scheme word
 * (Authorization: Bearer v).  A quoted value runs to its closing quote,
 * an unquoted one to a space or punctuation; neither crosses a line.
 */
static int
match_keyed(const char *s, size_t len, size_t i, struct hit *h)
{
	static const char *const schemes[] = { "Bearer ", "Basic ",
	    "token ", NULL };
	char key[64];
	size_t k, j, v;
	int q;

	if (i > 0 && is_keychar((unsigned char)s[i - 1]))
		return 0;
	k = span(s, len, i, is_keychar);
	j = i + k;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	if (k == 0 || k >= sizeof(key) || j + 1 >= len ||
	    (s[j] != '=' && s[j] != ':') || s[j + 1] == '=' || s[j + 1] == ':')
		return 0;
	memcpy(key, s + i, k);
	key[k] = '\0';
	if (!scrub_key_is_secret(key))
		return 0;
	for (j++; j < len && (s[j] == ' ' || s[j] == '\t'); j++)
		;
	q = j < len && (s[j] == '"' || s[j] == '\'') ? s[j++] : 0;
	for (k = 0; q == 0 && schemes[k] != NULL; k++)
		if (len - j > strlen(schemes[k]) && strncasecmp(s + j,
		    schemes[k], strlen(schemes[k])) == 0)
			j += strlen(schemes[k]);
	for (v = j; v < len && s[v] != '\n' && s[v] != '\0'; v++) {
		if (q != 0 && s[v] == '\\' && v + 1 < len)
			v++;
		else if (q != 0 ? s[v] == q : isspace((unsigned char)s[v]) ||
		    strchr("\"',;&)]}", s[v]) != NULL)
			break;
	}
	/* A value that is a known shape whole is named by that shape. */
	if (v == j || ((match_tokens(s, len, j, h) ||
	    match_jwt(s, len, j, h)) && h->len == v - j))
		return 0;
	h->kind = "secret-value";
	h->keep = j - i;
	h->len = v - i;
	return 1;
}

static int (*const matchers[])(const char *, size_t, size_t,
    struct hit *) = {
	match_pem, match_jwt, match_keyed, match_url, match_tokens,
};

static int
scrub_word(const char *s, size_t len, size_t i, struct hit *h)
{
	size_t k;

	for (k = 0; k < sizeof(matchers) / sizeof(matchers[0]); k++)
		if (matchers[k](s, len, i, h))
			return 1;
	return 0;
}

/*
 * s with every secret-shaped run replaced by <redacted:kind>; NULL when
 * nothing matched (or on ENOMEM, which the caller treats the same way
 * as a failure to record).  *outlen gets the new length.
 */
char *
scrub_text(const char *s, size_t len, size_t *outlen)
{
	struct hit h;
	char *out = NULL, *n;
	size_t i = 0, o = 0, cap = 0, need, from = 0;

	while (i < len) {
		if ((i > 0 && isalnum((unsigned char)s[i - 1])) ||
		    !scrub_word(s, len, i, &h)) {
			i++;
			continue;
		}
		i += h.keep;
		need = o + (i - from) + strlen(h.kind) + 16 + (len - i);
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
		o += (size_t)snprintf(out + o, cap - o, "<redacted:%s>",
		    h.kind);
		i += h.len - h.keep;
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
		if (word_ends_in(words[i], secret))
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
