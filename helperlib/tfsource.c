/* SPDX-License-Identifier: ISC */
/*
 * A module may call other modules only by a local path ("./" or "../",
 * inside the snapshot).  Any other source makes terraform init fetch
 * it: git:: and hg:: run git or hg, whose configuration, hooks and
 * filters come from wherever those programs look; http(s), s3::, gcs::,
 * the GitHub and Bitbucket shorthands and registry addresses fetch
 * files nobody approved.  So each .tf and .tf.json file of the module
 * is read as it is copied, before anything runs, and a call of any
 * other source is refused, naming the file, the line and the source.
 *
 * The reading is conservative rather than complete: HCL's lexical
 * layer (comments, quoted and heredoc templates with their ${ } and
 * %{ } sequences, brackets) is followed exactly, and of the structure
 * only what matters: a "source =" directly in a top-level block whose
 * header has the word module.  A source must be one plain string, as
 * terraform requires; what this reading cannot follow (a stray
 * character outside ASCII outside a string, unbalanced brackets, an
 * unterminated string) is refused too: terraform would not load it.
 * JSON files are parsed (duplicate keys refused) and walked the ways
 * terraform's JSON syntax allows a module block to be written.
 *
 * The state, too, is runnerd's: it keeps each working directory's and
 * hands it to each plan and apply.  A backend or cloud block in the
 * terraform block would send it elsewhere (a path of the module's
 * choosing, a server), and the next plan would start from nothing, so
 * one is refused the same way, by the file and line that hold it.
 *
 * And it counts the provisioner blocks, wherever they stand (resource,
 * removed, any block kind terraform has), for the engine to compare
 * with the provisioners the plan lists: one the plan does not show is
 * code nobody would see before it ran (tool_terraform.c).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cjson.h"
#include "tfsource.h"

#define NEST_MAX	256
#define SHOWN_MAX	200

enum tok { T_EOF, T_ERR, T_NL, T_IDENT, T_STRING, T_HEREDOC, T_OPEN,
	T_CLOSE, T_EQ, T_OTHER };

struct scan {
	const char	*p, *end;
	int		 line;
	const char	*rel;
	char		*why;
	size_t		 whylen;
	int		 seqs;		/* template sequences open */
	/* the last token */
	const char	*s;
	size_t		 len;
	int		 plain;		/* a string with no ${, %{ or \ */
	char		 c;		/* the bracket */
};

static enum tok	next(struct scan *);

static enum tok
fail(struct scan *s, const char *what)
{
	snprintf(s->why, s->whylen, "%s:%d: %s: which modules it calls "
	    "cannot be read, so it is refused", s->rel, s->line, what);
	return T_ERR;
}

static int
ident_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int
is_bom(const struct scan *s)
{
	return s->end - s->p >= 3 && memcmp(s->p, "\xef\xbb\xbf", 3) == 0;
}

/* Blanks and comments; a line comment leaves its newline. */
static int
skip_blank(struct scan *s)
{
	for (;;) {
		if (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
		    *s->p == '\r'))
			s->p++;
		else if (is_bom(s))
			s->p += 3;
		else if (s->p < s->end && (*s->p == '#' || (*s->p == '/' &&
		    s->end - s->p > 1 && s->p[1] == '/')))
			while (s->p < s->end && *s->p != '\n')
				s->p++;
		else if (s->end - s->p > 1 && s->p[0] == '/' &&
		    s->p[1] == '*') {
			for (s->p += 2; s->end - s->p > 1 &&
			    !(s->p[0] == '*' && s->p[1] == '/'); s->p++)
				if (*s->p == '\n')
					s->line++;
			if (s->end - s->p < 2) {
				fail(s, "a comment that does not end");
				return -1;
			}
			s->p += 2;
		} else
			return 0;
	}
}

/*
 * After ${ or %{: an expression up to its closing brace, itself with
 * any strings, heredocs and brackets.  A sequence inside a string
 * inside a sequence is a level of recursion: bounded, as brackets are.
 */
static int
interp(struct scan *s)
{
	char open[NEST_MAX];
	int depth = 0, r = 1;

	if (++s->seqs > NEST_MAX) {
		fail(s, "template sequences nested too deep");
		r = -1;
	}
	while (r == 1) {
		switch (next(s)) {
		case T_ERR:
			r = -1;
			break;
		case T_EOF:
			fail(s, "a template sequence that does not end");
			r = -1;
			break;
		case T_OPEN:
			if (depth == NEST_MAX) {
				fail(s, "brackets nested too deep");
				r = -1;
			} else
				open[depth++] = s->c;
			break;
		case T_CLOSE:
			if (depth == 0 && s->c == '}')
				r = 0;
			else if (depth == 0 || open[--depth] != s->c) {
				fail(s, "unbalanced brackets");
				r = -1;
			}
			break;
		default:
			break;
		}
	}
	s->seqs--;
	return r;
}

/* At ${ %{ (a sequence: 1), $${ %%{ (literal: 2), else 0. */
static int
template_seq(const struct scan *s)
{
	if (s->end - s->p > 1 && (*s->p == '$' || *s->p == '%') &&
	    s->p[1] == '{')
		return 1;
	if (s->end - s->p > 2 && (*s->p == '$' || *s->p == '%') &&
	    s->p[1] == *s->p && s->p[2] == '{')
		return 2;
	return 0;
}

static enum tok
quoted(struct scan *s)
{
	const char *start = ++s->p;
	int plain = 1, seq;

	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\n')
			return fail(s, "a newline in a quoted string");
		if (*s->p == '\\') {
			plain = 0;
			s->p += 2;
		} else if ((seq = template_seq(s)) == 1) {
			plain = 0;
			s->p += 2;
			if (interp(s) == -1)
				return T_ERR;
		} else {
			plain &= seq == 0;
			s->p += seq == 2 ? 3 : 1;
		}
	}
	if (s->p >= s->end)
		return fail(s, "a quoted string that does not end");
	/* Set last: a string inside a sequence is a token of its own. */
	s->s = start;
	s->len = (size_t)(s->p++ - start);
	s->plain = plain;
	return T_STRING;
}

/*
 * <<ID or <<-ID, a newline, then lines up to one that is ID between
 * blanks, as HCL's scanner ends a heredoc; sequences may span lines.
 */
static enum tok
heredoc(struct scan *s)
{
	const char *id, *a, *b;
	size_t idlen;
	int bol = 1, seq;

	s->p += 2;
	if (s->p < s->end && *s->p == '-')
		s->p++;
	for (id = s->p; s->p < s->end && ident_char(*s->p); s->p++)
		;
	idlen = (size_t)(s->p - id);
	if (s->p < s->end && *s->p == '\r')
		s->p++;
	if (idlen == 0 || s->p >= s->end || *s->p != '\n')
		return fail(s, "<< that starts no heredoc");
	s->p++;
	s->line++;
	while (s->p < s->end) {
		if (bol) {
			for (a = s->p; a < s->end && (*a == ' ' || *a == '\t');
			    a++)
				;
			for (b = a; b < s->end && *b != '\n'; b++)
				;
			while (b > a && (b[-1] == ' ' || b[-1] == '\t' ||
			    b[-1] == '\r'))
				b--;
			if ((size_t)(b - a) == idlen &&
			    memcmp(a, id, idlen) == 0) {
				s->p = b;
				return T_HEREDOC;
			}
			bol = 0;
		}
		if (*s->p == '\n') {
			s->p++;
			s->line++;
			bol = 1;
		} else if ((seq = template_seq(s)) == 1) {
			s->p += 2;
			if (interp(s) == -1)
				return T_ERR;
		} else
			s->p += seq == 2 ? 3 : 1;
	}
	return fail(s, "a heredoc that does not end");
}

static enum tok
next(struct scan *s)
{
	unsigned char c;
	const char *start;

	if (skip_blank(s) == -1)
		return T_ERR;
	if (s->p >= s->end)
		return T_EOF;
	c = (unsigned char)*s->p;
	if (c == '\n') {
		s->p++;
		s->line++;
		return T_NL;
	}
	if (c == '"')
		return quoted(s);
	if (c == '<' && s->end - s->p > 1 && s->p[1] == '<')
		return heredoc(s);
	if (c >= 0x80)
		return fail(s, "a character outside ASCII outside a string or "
		    "comment");
	if (ident_char(c)) {
		for (start = s->p; s->p < s->end && ident_char(*s->p); s->p++)
			;
		s->s = start;
		s->len = (size_t)(s->p - start);
		return T_IDENT;
	}
	s->p++;
	s->c = c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : c;
	if (c == '(' || c == '[' || c == '{')
		return T_OPEN;
	if (c == ')' || c == ']' || c == '}')
		return T_CLOSE;
	/* ==, =>, !=, <=, >= are no assignment. */
	if (s->p < s->end && (*s->p == '=' || (c == '=' && *s->p == '>')) &&
	    strchr("=!<>", c) != NULL) {
		s->p++;
		return T_OTHER;
	}
	return c == '=' ? T_EQ : T_OTHER;
}

static int
ident_is(const struct scan *s, const char *w)
{
	return s->len == strlen(w) && memcmp(s->s, w, s->len) == 0;
}

/* The source as it may be shown: one line, printable, not too long. */
static void
shown(const char *src, size_t len, char *out, size_t outlen)
{
	size_t i, n = len < SHOWN_MAX ? len : SHOWN_MAX;

	if (n >= outlen)
		n = outlen - 1;
	for (i = 0; i < n; i++)
		out[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' :
		    src[i];
	out[n] = '\0';
}

static int
local_path(const char *src, size_t len)
{
	return (len >= 2 && memcmp(src, "./", 2) == 0) ||
	    (len >= 3 && memcmp(src, "../", 3) == 0);
}

/* where: the file, and in HCL its line. */
static int
source_refused(char *why, size_t whylen, const char *where, const char *src,
    size_t len)
{
	char v[SHOWN_MAX + 1];

	shown(src, len, v, sizeof(v));
	snprintf(why, whylen, "%s: module source \"%s\" is refused: only "
	    "local paths (./ or ../) are allowed; any other source (git::, "
	    "hg::, http(s), s3::, gcs::, GitHub or Bitbucket shorthand, a "
	    "registry) would be fetched by programs whose configuration the "
	    "module does not choose", where, v);
	return 0;
}

/*
 * After "source =" in a module block: one plain string alone on its
 * line (or before the block's brace), and a local path.
 */
static int
source_value(struct scan *s)
{
	char where[PATH_MAX + 16];
	const char *p;
	int line = s->line;

	if (next(s) != T_STRING || !s->plain) {
		if (s->why[0] == '\0')
			snprintf(s->why, s->whylen, "%s:%d: a module source "
			    "that is not one plain string is refused", s->rel,
			    line);
		return 0;
	}
	for (p = s->p; p < s->end && (*p == ' ' || *p == '\t' || *p == '\r');
	    p++)
		;
	if (p < s->end && *p != '\n' && *p != '}' && *p != '#' &&
	    !(*p == '/' && s->end - p > 1 && p[1] == '/')) {
		snprintf(s->why, s->whylen, "%s:%d: a module source that is "
		    "not one plain string is refused", s->rel, line);
		return 0;
	}
	snprintf(where, sizeof(where), "%s:%d", s->rel, line);
	if (!local_path(s->s, s->len))
		return source_refused(s->why, s->whylen, where, s->s, s->len);
	return 1;
}

static int
state_elsewhere(char *why, size_t whylen, const char *where, const char *kind,
    size_t kindlen)
{
	snprintf(why, whylen, "%s: a %.*s block is refused: runnerd keeps "
	    "the state of every working directory itself, and this block "
	    "would put it elsewhere", where, (int)kindlen, kind);
	return 0;
}

/* The top-level blocks whose contents matter here. */
enum block { B_OTHER, B_MODULE, B_TERRAFORM };

static void
provisioner_seen(struct tf_facts *f, const char *rel, int line)
{
	if (f->provisioners++ == 0)
		snprintf(f->first, sizeof(f->first), "%s:%d", rel, line);
}

static int
hcl_ok(const char *rel, const char *buf, size_t len, struct tf_facts *f,
    char *why, size_t whylen)
{
	struct scan s = { .p = buf, .end = buf + len, .line = 1, .rel = rel,
	    .why = why, .whylen = whylen };
	char open[NEST_MAX], where[PATH_MAX + 16];
	enum block header = B_OTHER, block = B_OTHER;
	/* provisioner "TYPE" {: 1 after the word, 2 after its label */
	int depth = 0, prov = 0, prov_line = 0;
	enum tok t;

	why[0] = '\0';
	for (;;) {
		t = next(&s);
		if (prov == 2 && t == T_OPEN && s.c == '}')
			provisioner_seen(f, rel, prov_line);
		prov = prov == 1 && t == T_STRING ? 2 : 0;
		switch (t) {
		case T_ERR:
			return 0;
		case T_EOF:
			if (depth != 0) {
				fail(&s, "a bracket that does not close");
				return 0;
			}
			return 1;
		case T_OPEN:
			if (depth == NEST_MAX) {
				fail(&s, "brackets nested too deep");
				return 0;
			}
			open[depth++] = s.c;
			if (depth == 1)
				block = s.c == '}' ? header : B_OTHER;
			break;
		case T_CLOSE:
			if (depth == 0 || open[--depth] != s.c) {
				fail(&s, "unbalanced brackets");
				return 0;
			}
			if (depth == 0)
				header = block = B_OTHER;
			break;
		case T_IDENT:
			if (depth > 0 && ident_is(&s, "provisioner")) {
				prov = 1;
				prov_line = s.line;
			}
			if (depth == 0 && ident_is(&s, "module"))
				header = B_MODULE;
			else if (depth == 0 && ident_is(&s, "terraform"))
				header = B_TERRAFORM;
			else if (depth == 1 && block == B_TERRAFORM &&
			    (ident_is(&s, "backend") || ident_is(&s, "cloud"))) {
				snprintf(where, sizeof(where), "%s:%d", rel,
				    s.line);
				return state_elsewhere(why, whylen, where, s.s,
				    s.len);
			} else if (depth == 1 && block == B_MODULE &&
			    ident_is(&s, "source")) {
				if (skip_blank(&s) == -1)
					return 0;
				if (s.p < s.end && *s.p == '=' &&
				    (s.end - s.p == 1 || (s.p[1] != '=' &&
				    s.p[1] != '>'))) {
					s.p++;
					if (!source_value(&s))
						return 0;
				}
			}
			break;
		default:
			break;
		}
	}
}

/*
 * fn on a value of JSON syntax that is a block body or a list of them:
 * 1 when all are fine, 0 when fn refused one, -1 when not such a value.
 */
static int
json_each_body(const json_t *v, int (*fn)(const json_t *, void *), void *arg)
{
	const json_t *e;
	size_t i;
	int r;

	if (json_is_object(v))
		return fn(v, arg);
	if (!json_is_array(v))
		return -1;
	json_array_foreach(v, i, e)
		if ((r = json_is_object(e) ? fn(e, arg) : -1) != 1)
			return r;
	return 1;
}

struct json_scan {
	const char	*rel;
	char		*why;
	size_t		 whylen;
};

/* A module block's body: its "source". */
static int
json_module_body(const json_t *body, void *arg)
{
	struct json_scan *j = arg;
	const json_t *src = json_object_get(body, "source");
	const char *v;

	if (src == NULL)
		return 1;
	v = json_string_value(src);
	if (v == NULL || strstr(v, "${") != NULL || strstr(v, "%{") != NULL) {
		snprintf(j->why, j->whylen, "%s: a module source that is not "
		    "one plain string is refused", j->rel);
		return 0;
	}
	if (!local_path(v, strlen(v)))
		return source_refused(j->why, j->whylen, j->rel, v, strlen(v));
	return 1;
}

/* A terraform block's body: no backend, no cloud. */
static int
json_terraform_body(const json_t *body, void *arg)
{
	struct json_scan *j = arg;

	if (json_object_get(body, "backend") != NULL)
		return state_elsewhere(j->why, j->whylen, j->rel, "backend", 7);
	if (json_object_get(body, "cloud") != NULL)
		return state_elsewhere(j->why, j->whylen, j->rel, "cloud", 5);
	return 1;
}

/*
 * Provisioner blocks anywhere in v: the value of a "provisioner" key is
 * {"TYPE": body} or a list of them, each key one block.
 */
static void
json_provisioners(const json_t *v, const char *rel, struct tf_facts *f,
    int depth)
{
	const char *key;
	const json_t *e, *p;
	size_t i, j;

	if (depth > NEST_MAX)
		return;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			json_provisioners(e, rel, f, depth + 1);
		return;
	}
	json_object_foreach((json_t *)v, key, e) {
		if (strcmp(key, "provisioner") != 0) {
			json_provisioners(e, rel, f, depth + 1);
			continue;
		}
		if (json_is_object(e))
			for (j = 0; j < json_object_size(e); j++)
				provisioner_seen(f, rel, 1);
		json_array_foreach(e, i, p)
			for (j = 0; j < json_object_size(p); j++)
				provisioner_seen(f, rel, 1);
	}
}

/* {"NAME": body or [bodies]}, "//" a comment. */
static int
json_module_labels(const json_t *obj, void *arg)
{
	const json_t *body;
	const char *name;
	int r;

	json_object_foreach((json_t *)obj, name, body) {
		if (strcmp(name, "//") == 0)
			continue;
		if ((r = json_each_body(body, json_module_body, arg)) != 1)
			return r;
	}
	return 1;
}

static int
json_ok(const char *rel, const char *buf, size_t len, struct tf_facts *f,
    char *why, size_t whylen)
{
	struct json_scan j = { rel, why, whylen };
	json_error_t err;
	json_t *root, *mods, *tf;
	int r = 1;

	why[0] = '\0';
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err)) ==
	    NULL || !json_is_object(root)) {
		snprintf(why, whylen, "%s:%d: not a JSON object (%s): "
		    "refused, as its module sources cannot be read", rel,
		    root == NULL ? err.line : 1, root == NULL ? err.text :
		    "another value");
		json_decref(root);
		return 0;
	}
	if ((mods = json_object_get(root, "module")) != NULL &&
	    (r = json_each_body(mods, json_module_labels, &j)) == -1)
		snprintf(why, whylen, "%s: \"module\" is neither an object nor "
		    "a list of objects: refused", rel);
	if (r == 1 && (tf = json_object_get(root, "terraform")) != NULL &&
	    (r = json_each_body(tf, json_terraform_body, &j)) == -1)
		snprintf(why, whylen, "%s: \"terraform\" is neither an object "
		    "nor a list of objects: refused", rel);
	if (r == 1)
		json_provisioners(root, rel, f, 0);
	json_decref(root);
	return r == 1;
}

/*
 * 1 when the file rel (of the module, its bytes buf) calls no module
 * but by a local path, or is no configuration file; else 0 and why.
 */
int
tf_sources_ok(const char *rel, const char *buf, size_t len,
    struct tf_facts *f, char *why, size_t whylen)
{
	size_t n = strlen(rel);

	if (n > 8 && strcmp(rel + n - 8, ".tf.json") == 0)
		return json_ok(rel, buf, len, f, why, whylen);
	if (n > 3 && strcmp(rel + n - 3, ".tf") == 0)
		return hcl_ok(rel, buf, len, f, why, whylen);
	return 1;
}
