/* SPDX-License-Identifier: ISC */
/*
 * The shapes of secrets in free text, matched by hand rather than with
 * regex(3) so that one linear pass does all.  A shape with a prefix of
 * its own (ghp_, AKIA, eyJ, -----BEGIN) is found wherever it stands,
 * glued to a word included; one without (a key's value, a bare 40
 * character AWS secret) needs the byte before it to end a word.  Every
 * forward read is bounded or ends in a match, so that a string packed
 * with near-misses costs a bounded amount per byte.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "scrub.h"
#include "scrub_shape.h"

/*
 * A token: a literal prefix, then a body of one character class read to
 * its end (body, a class below), whose length must lie in [min, max]
 * (max 0: no limit).
 * mixed: the body must hold upper, lower and digits, which random keys
 * do and words, names and hex digests do not.  alone: the prefix is too
 * common inside words and base64 to count there.
 */
struct token {
	const char	*kind;
	const char	*prefix;
	size_t		 plen;
	int		 body;
	size_t		 min, max;
	int		 mixed;
	int		 alone;
};
#define PFX(p)	(p), sizeof(p) - 1

/* How far a body without a length limit is read before it counts. */
#define BODY_CAP	512
/* A JWT header glued to a word is read at most this far. */
#define JWT_HEADER_CAP	1024
/* How far back a command line is read for its program's name. */
#define COMMAND_CAP	256

/* Classes of bytes, one bit each, looked up in classes[]. */
enum {
	ALNUM = 1 << 0,
	WORD = 1 << 1,		/* [A-Za-z0-9_] */
	B64URL = 1 << 2,	/* [A-Za-z0-9_-] */
	B64 = 1 << 3,		/* [A-Za-z0-9/+] */
	B64_LINES = 1 << 4,	/* base64(1) output: padded, wrapped */
	UPPER_DIGIT = 1 << 5,	/* [A-Z0-9] */
	SCHEME = 1 << 6,	/* [A-Za-z0-9+.-] */
	KEYCHAR = 1 << 7,	/* [A-Za-z0-9_.-] */
	COMMAND_END = 1 << 8,	/* ends a shell command: [;|&(`\n] */
	WORD_GAP = 1 << 9,	/* between a command's words: [ \t\r"'] */
};
static unsigned short classes[256];

#define IS(c, class)	(classes[(unsigned char)(c)] & (class))

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
 *   word prefix (sk-learn): 40 characters at least, mixed, alone.
 * - Vault: hvs./hvb./hvr., and the older s./b./r. service forms (alone).
 * - AWS: AKIA (long-term) and ASIA (session) ids and their IAM cousins,
 *   + 16 of [A-Z0-9]; a secret key is 40 base64 characters, mixed.
 * - "-----BEGIN" in base64 starts "LS0tLS1CRUdJTi": a PEM block (private
 *   key or not) as a Kubernetes Secret or kubeconfig carries it.
 * Longer prefixes come first: sk-ant- before sk-.
 */
static const struct token tokens[] = {
	{ "github-token", PFX("ghp_"), WORD, 36, 251, 0, 0 },
	{ "github-token", PFX("gho_"), WORD, 36, 251, 0, 0 },
	{ "github-token", PFX("ghu_"), WORD, 36, 251, 0, 0 },
	{ "github-token", PFX("ghs_"), WORD, 36, 251, 0, 0 },
	{ "github-token", PFX("ghr_"), WORD, 36, 251, 0, 0 },
	{ "github-token", PFX("github_pat_"), WORD, 60, 244, 0, 0 },
	{ "gitlab-token", PFX("glpat-"), B64URL, 20, 0, 0, 0 },
	{ "slack-token", PFX("xoxa-"), B64URL, 20, 0, 0, 0 },
	{ "slack-token", PFX("xoxb-"), B64URL, 20, 0, 0, 0 },
	{ "slack-token", PFX("xoxp-"), B64URL, 20, 0, 0, 0 },
	{ "slack-token", PFX("xoxr-"), B64URL, 20, 0, 0, 0 },
	{ "slack-token", PFX("xoxs-"), B64URL, 20, 0, 0, 0 },
	{ "stripe-key", PFX("sk_live_"), WORD, 16, 247, 0, 0 },
	{ "stripe-key", PFX("rk_live_"), WORD, 16, 247, 0, 0 },
	{ "stripe-key", PFX("sk_test_"), WORD, 16, 247, 0, 0 },
	{ "stripe-key", PFX("rk_test_"), WORD, 16, 247, 0, 0 },
	{ "google-api-key", PFX("AIza"), B64URL, 35, 35, 0, 0 },
	{ "npm-token", PFX("npm_"), WORD, 36, 36, 0, 0 },
	{ "anthropic-key", PFX("sk-ant-"), B64URL, 32, 0, 1, 0 },
	{ "openai-key", PFX("sk-"), B64URL, 40, 0, 1, 1 },
	{ "vault-token", PFX("hvs."), B64URL, 20, 0, 0, 0 },
	{ "vault-token", PFX("hvb."), B64URL, 20, 0, 0, 0 },
	{ "vault-token", PFX("hvr."), B64URL, 20, 0, 0, 0 },
	{ "vault-token", PFX("s."), B64URL, 24, 0, 0, 1 },
	{ "vault-token", PFX("b."), B64URL, 24, 0, 0, 1 },
	{ "vault-token", PFX("r."), B64URL, 24, 0, 0, 1 },
	{ "aws-key-id", PFX("AKIA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("ASIA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("AIDA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("AROA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("AGPA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("ANPA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("ANVA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("AIPA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("ABIA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "aws-key-id", PFX("ACCA"), UPPER_DIGIT, 16, 16, 0, 0 },
	{ "private-key", PFX("LS0tLS1CRUdJTi"), B64_LINES, 0, 0, 0, 0 },
	{ "aws-secret", PFX(""), B64, 40, 40, 1, 1 },
};

/* How many bytes of class from s[i] on, at most max of them. */
static size_t
span_upto(const char *s, size_t len, size_t i, int class, size_t max)
{
	size_t n = 0;

	while (n < max && i + n < len && IS(s[i + n], class))
		n++;
	return n;
}

static size_t
span(const char *s, size_t len, size_t i, int class)
{
	return span_upto(s, len, i, class, SIZE_MAX);
}

static int
has_prefix(const char *s, size_t len, size_t i, const char *p)
{
	size_t n;

	if (i >= len || s[i] != p[0])
		return 0;
	n = strlen(p);
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
 * The one token matcher, called once the prefix's first two bytes are
 * seen.  A token that must stand alone has before it no part of a
 * base64url run, of a dotted name, or (whitespace aside) of its own
 * body.  A body without a limit is judged on its first BODY_CAP bytes
 * and, if it passes, taken whole.
 */
static int
match_token(const struct token *t, const char *s, size_t len, size_t i,
    struct scrub_hit *h)
{
	size_t n, cap;
	int c;

	if (t->alone && i > 0) {
		c = (unsigned char)s[i - 1];
		if (IS(c, B64URL) || c == '.' ||
		    (IS(c, t->body) && !isspace(c)))
			return 0;
	}
	if (len - i < t->plen + t->min || (t->plen > 2 &&
	    memcmp(s + i + 2, t->prefix + 2, t->plen - 2) != 0))
		return 0;
	cap = t->max != 0 ? t->max + 1 : BODY_CAP;
	n = span_upto(s, len, i + t->plen, t->body, cap);
	if (n < t->min || (t->max != 0 && n > t->max) ||
	    (t->mixed && !mixed(s + i + t->plen, n)))
		return 0;
	if (n == cap)
		n += span(s, len, i + t->plen + n, t->body);
	/* A body that may wrap (base64(1)'s) leaves the line end after it. */
	while (n > 0 && isspace((unsigned char)s[i + t->plen + n - 1]))
		n--;
	h->kind = t->kind;
	h->keep = 0;
	h->len = t->plen + n;
	return 1;
}

#define NTOKENS	(sizeof(tokens) / sizeof(tokens[0]))
_Static_assert(NTOKENS <= 64, "one bit per token in candidates[]");

/* Tokens that can start with a byte: at a word's start [0], inside [1]. */
static uint64_t candidates[2][256];

/* classes[] and candidates[], on first use. */
static void
tables_build(void)
{
	static int built;
	size_t k;
	int c, a;

	if (built)
		return;
	for (c = 0; c < 256; c++) {
		a = isalnum(c) ? ALNUM | WORD | B64URL | B64 | B64_LINES |
		    SCHEME | KEYCHAR : 0;
		classes[c] = a | (c == '_' ? WORD | B64URL | KEYCHAR : 0) |
		    (c == '-' ? B64URL | SCHEME | KEYCHAR : 0) |
		    (c == '/' || c == '+' ? B64 | B64_LINES : 0) |
		    (c == '=' || c == '\n' || c == '\r' ? B64_LINES : 0) |
		    (isupper(c) || isdigit(c) ? UPPER_DIGIT : 0) |
		    (c == '+' ? SCHEME : 0) |
		    (c == '.' ? SCHEME | KEYCHAR : 0) |
		    (c != '\0' && strchr(";|&(`\n", c) != NULL ?
		    COMMAND_END : 0) |
		    (c != '\0' && strchr(" \t\r\"'", c) != NULL ? WORD_GAP : 0);
	}
	for (k = 0; k < NTOKENS; k++)
		for (c = 0; c < 256; c++)
			if (tokens[k].plen == 0 ||
			    (unsigned char)tokens[k].prefix[0] == c) {
				candidates[0][c] |= 1ULL << k;
				if (!tokens[k].alone)
					candidates[1][c] |= 1ULL << k;
			}
	built = 1;
}

/* Tried in table order, but only those that can start with s[i]. */
static int
match_tokens(const char *s, size_t len, size_t i, int glued,
    struct scrub_hit *h)
{
	const struct token *t;
	uint64_t m;

	for (m = candidates[glued][(unsigned char)s[i]]; m != 0; m &= m - 1) {
		t = &tokens[__builtin_ctzll(m)];
		if (t->plen > 1 && (i + 1 >= len || s[i + 1] != t->prefix[1]))
			continue;
		if (match_token(t, s, len, i, h))
			return 1;
	}
	return 0;
}

/*
 * -----BEGIN ... PRIVATE KEY----- (OpenSSH's included) through its END
 * line, or to the end.  The tag is looked for in the BEGIN line only, so
 * that a run of BEGINs without one costs no more than its length.
 */
static int
match_pem(const char *s, size_t len, size_t i, struct scrub_hit *h)
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

/*
 * header.payload.signature, the header being base64url of '{"'.  Inside
 * a base64url run the header is read at most JWT_HEADER_CAP: a run of
 * eyJ costs that much each, not the run's length.
 */
static int
match_jwt(const char *s, size_t len, size_t i, struct scrub_hit *h)
{
	size_t a, b;

	if (!has_prefix(s, len, i, "eyJ"))
		return 0;
	a = span_upto(s, len, i, B64URL, i > 0 && IS(s[i - 1], B64URL) ?
	    JWT_HEADER_CAP : SIZE_MAX);
	if (a < 10 || i + a >= len || s[i + a] != '.')
		return 0;
	b = span(s, len, i + a + 1, B64URL);
	if (b < 2 || i + a + 1 + b >= len || s[i + a + 1 + b] != '.')
		return 0;
	h->kind = "jwt";
	h->keep = 0;
	h->len = a + b + 2 + span(s, len, i + a + b + 2, B64URL);
	return 1;
}

/*
 * scheme://user:password@host: the password goes, scheme, user and host
 * stay.  RFC 3986 has '/', '?', '#' and '@' percent-encoded inside the
 * userinfo; each part is read at most 256 bytes.
 */
static int
match_url(const char *s, size_t len, size_t i, struct scrub_hit *h)
{
	static const char stop[] = "@/?#\"' \t\r\n";
	size_t j, p;

	if (!isalpha((unsigned char)s[i]) ||
	    (i > 0 && IS(s[i - 1], SCHEME)))
		return 0;
	j = i + span_upto(s, len, i, SCHEME, 33);
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
is_quote(int c)
{
	return c == '"' || c == '\'';
}

/*
 * Where a value starting at s[j] ends: a quoted one (q its opening
 * quote, already passed) at its closing quote, an unquoted one at a
 * space (a JSON-escaped one too) or punctuation; neither crosses a line.
 */
static size_t
value_end(const char *s, size_t len, size_t j, int q)
{
	size_t v;

	for (v = j; v < len && s[v] != '\n' && s[v] != '\0'; v++) {
		if (s[v] == '\\' && v + 1 < len && q != 0)
			v++;
		else if (s[v] == '\\' && v + 1 < len &&
		    strchr("ntr", s[v + 1]) != NULL)
			break;
		else if (q != 0 ? s[v] == q : isspace((unsigned char)s[v]) ||
		    strchr("\"',;&)]}", s[v]) != NULL)
			break;
	}
	return v;
}

static int
b64_digit(int c)
{
	const char *p;
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";

	return c != '\0' && (p = strchr(digits, c)) != NULL ? p - digits : -1;
}

/*
 * Whether v is padded base64 of printable "user:password", as docker's
 * config.json holds a registry login under "auth" (docs.docker.com,
 * "docker login", credential stores).
 */
static int
is_basic_auth(const char *v, size_t n)
{
	size_t j, pad, out = 0;
	int d, c, colon = 0, bits = 0;
	unsigned acc = 0;

	if (n < 8 || n % 4 != 0)
		return 0;
	for (pad = 0; pad < 2 && v[n - 1 - pad] == '='; pad++)
		;
	for (j = 0; j < n - pad; j++) {
		if ((d = b64_digit((unsigned char)v[j])) == -1)
			return 0;
		acc = (acc << 6 | (unsigned)d) & 0xffffff;
		if ((bits += 6) < 8)
			continue;
		bits -= 8;
		c = (acc >> bits) & 0xff;
		if (c < 0x20 || c > 0x7e)
			return 0;
		colon |= c == ':' && out > 0;
		out++;
	}
	return colon;
}

/*
 * A flag's value: not another flag, a redirection (--with-token <<<) or
 * a count (--max-tokens 1024).
 */
static int
flag_value(const char *s, size_t n)
{
	size_t j;

	if (n == 0 || strchr("-<>|", s[0]) != NULL)
		return 0;
	for (j = 0; j < n && isdigit((unsigned char)s[j]); j++)
		;
	return j < n;
}

/*
 * The value after a key named like a secret in free text (command lines,
 * shell output, config files): password=v, --token=v, --token v,
 * "api_key": "v", secret: v.  Key and separator stay, and so does an
 * HTTP scheme word (Authorization: Bearer v).  Docker's "auth": "v" is
 * one too when v is base64 of user:password.
 */
static int
match_keyed(const char *s, size_t len, size_t i, struct scrub_hit *h)
{
	static const char *const schemes[] = { "Bearer ", "Basic ",
	    "token ", NULL };
	char key[64];
	size_t k, j, v;
	int q, spaced, docker = 0;

	if (i > 0 && IS(s[i - 1], KEYCHAR))
		return 0;
	if ((k = span_upto(s, len, i, KEYCHAR, sizeof(key))) == 0 ||
	    k >= sizeof(key))
		return 0;
	j = i + k;
	if (j < len && is_quote(s[j]))
		j++;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	/* --password X: a long flag and its value, a space apart. */
	spaced = j > i + k && k > 2 && s[i] == '-' && s[i + 1] == '-' &&
	    !is_quote(s[i + k]) && (k < 5 || memcmp(s + i, "--no-", 5) != 0);
	if (j + 1 < len && (s[j] == '=' || s[j] == ':') && s[j + 1] != '=' &&
	    s[j + 1] != ':')
		spaced = 0;
	else if (!spaced || j >= len)
		return 0;
	memcpy(key, s + i, k);
	key[k] = '\0';
	if (!scrub_key_is_secret(key) &&
	    (spaced || !(docker = strcasecmp(key, "auth") == 0)))
		return 0;
	if (!spaced)
		for (j++; j < len && (s[j] == ' ' || s[j] == '\t'); j++)
			;
	q = j < len && is_quote(s[j]) ? s[j++] : 0;
	if (docker && (q != '"' || i == 0 || s[i - 1] != '"'))
		return 0;
	for (k = 0; q == 0 && !docker && schemes[k] != NULL; k++)
		if (len - j > strlen(schemes[k]) && strncasecmp(s + j,
		    schemes[k], strlen(schemes[k])) == 0)
			j += strlen(schemes[k]);
	v = value_end(s, len, j, q);
	if (v == j || (spaced && q == 0 && !flag_value(s + j, v - j)) ||
	    (docker && !is_basic_auth(s + j, v - j)))
		return 0;
	/* A value that is a known shape whole is named by that shape. */
	if ((match_tokens(s, len, j, 0, h) || match_jwt(s, len, j, h)) &&
	    h->len == v - j)
		return 0;
	h->kind = docker ? "registry-auth" : "secret-value";
	h->keep = j - i;
	h->len = v - i;
	return 1;
}

/* name, or with a trailing '*' any [a-z-] name starting so. */
static int
prog_is(const char *w, size_t n, const char *name)
{
	size_t m = strlen(name), j;

	if (name[m - 1] != '*')
		return n == m && memcmp(w, name, n) == 0;
	if (n < --m || memcmp(w, name, m) != 0)
		return 0;
	for (j = m; j < n && (islower((unsigned char)w[j]) || w[j] == '-');
	    j++)
		;
	return j == n;
}

/*
 * Whether a word of the command that s[i] is in (back to a line end, a
 * ';', '|', '&', '(' or '`', at most COMMAND_CAP bytes) names one of
 * progs, a path's last part counting: the flag at s[i] is then taken to
 * be that program's.  The words are read from s[i] back, and only if
 * one of the names is there at all.
 */
static int
in_command(const char *s, size_t i, const char *const *progs)
{
	size_t b, w, e, base;
	const char *const *p;

	for (b = i; b > 0 && i - b < COMMAND_CAP && !IS(s[b - 1], COMMAND_END);
	    b--)
		;
	for (p = progs; *p != NULL && memmem(s + b, i - b, *p,
	    strcspn(*p, "*")) == NULL; p++)
		;
	if (*p == NULL)
		return 0;
	for (e = i; e > b; e = w) {
		while (e > b && IS(s[e - 1], WORD_GAP))
			e--;
		for (w = e; w > b && !IS(s[w - 1], WORD_GAP); w--)
			;
		for (base = e; base > w && s[base - 1] != '/'; base--)
			;
		for (p = progs; w < e && *p != NULL; p++)
			if (prog_is(s + base, e - base, *p))
				return 1;
	}
	return 0;
}

static int
is_port_map(const char *s, size_t n)
{
	size_t j;

	for (j = 0; j < n && (isdigit((unsigned char)s[j]) || s[j] == ':' ||
	    s[j] == '.'); j++)
		;
	return j == n && memchr(s, ':', n) != NULL;
}

/*
 * Passwords in a command's flags where the program alone says so:
 * mysql -pPASSWORD (any MySQL or MariaDB client; -p alone prompts, and
 * -p X names a database), and curl -u/--user user:password, -U and
 * --proxy-user the same.  Elsewhere -p is a port, a path or a flag set,
 * -u a user id (docker run -u 1000:1000).
 */
static int
match_flag(const char *s, size_t len, size_t i, struct scrub_hit *h)
{
	static const char *const mysql[] = { "mysql*", "mariadb*", NULL };
	static const char *const curl[] = { "curl", NULL };
	const char *colon;
	size_t j, v;
	int q;

	if (i == 0 || len - i < 3 || s[i] != '-' ||
	    (!isspace((unsigned char)s[i - 1]) && !is_quote(s[i - 1])))
		return 0;
	if (s[i + 1] == 'p') {
		j = i + 2;
		q = is_quote(s[j]) ? s[j++] : 0;
		v = value_end(s, len, j, q);
		if (v == j || (q == 0 && s[j] == '-') ||
		    is_port_map(s + j, v - j) || !in_command(s, i, mysql))
			return 0;
		h->kind = "secret-value";
		h->keep = j - i;
		h->len = v - i;
		return 1;
	}
	if (s[i + 1] == 'u' || s[i + 1] == 'U')
		j = i + 2;
	else if (has_prefix(s, len, i, "--user ") ||
	    has_prefix(s, len, i, "--proxy-user "))
		j = i + (s[i + 2] == 'u' ? 7 : 13);
	else
		return 0;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	q = j < len && is_quote(s[j]) ? s[j++] : 0;
	v = value_end(s, len, j, q);
	if ((colon = memchr(s + j, ':', v - j)) == NULL ||
	    (size_t)(colon - s) + 1 == v || !in_command(s, i, curl))
		return 0;
	h->kind = "secret-value";
	h->keep = (size_t)(colon - s) + 1 - i;
	h->len = v - i;
	return 1;
}

/*
 * Inside a word only a shape with a prefix of its own can start (a
 * token's, "eyJ", "-----BEGIN "), which one byte mostly rules out; at a
 * word's start, any.
 */
int
scrub_shape(const char *s, size_t len, size_t i, struct scrub_hit *h)
{
	int c = (unsigned char)s[i], glued;

	tables_build();
	glued = i > 0 && IS(s[i - 1], ALNUM);
	if (glued && candidates[1][c] == 0 && c != 'e' && c != '-')
		return 0;
	return match_pem(s, len, i, h) || match_jwt(s, len, i, h) ||
	    (!glued && (match_keyed(s, len, i, h) ||
	    match_url(s, len, i, h) || match_flag(s, len, i, h))) ||
	    match_tokens(s, len, i, glued, h);
}
