/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ytree.h"

#define YAML_MAXDEPTH	32
#define YAML_MAXFILE	(1024 * 1024)

int
yerror(struct yerr *e, const struct ynode *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(e->msg, sizeof(e->msg), "%s:%d: %s", e->file,
	    n != NULL ? n->line : 0, msg);
	return -1;
}

void
ynode_free(struct ynode *n)
{
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->value);
	free(n->key);
	free(n);
}

static int
ynode_add(struct ynode *parent, struct ynode *kid)
{
	struct ynode **k;

	k = reallocarray(parent->kids, parent->nkids + 1, sizeof(*k));
	if (k == NULL)
		return -1;
	parent->kids = k;
	parent->kids[parent->nkids++] = kid;
	return 0;
}

static struct ynode *
ynode_new(enum ynode_type type, const yaml_event_t *ev)
{
	struct ynode *n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->type = type;
	n->line = (int)ev->start_mark.line + 1;
	return n;
}

static int
event_error(struct yerr *e, const yaml_event_t *ev, const char *what)
{
	snprintf(e->msg, sizeof(e->msg), "%s:%zu: %s", e->file,
	    ev->start_mark.line + 1, what);
	return -1;
}

/*
 * Builds the node that starts with ev (already taken from p).  Mapping
 * keys must be plain scalars and appear once; anchors and aliases are
 * refused, since no file of ours needs them.
 */
static struct ynode *
parse_node(yaml_parser_t *p, yaml_event_t *ev, int depth, struct yerr *e)
{
	struct ynode *n = NULL, *kid;
	yaml_event_t kev, vev;
	char *key;
	size_t i;

	if (depth > YAML_MAXDEPTH) {
		event_error(e, ev, "nesting too deep");
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor != NULL) {
			event_error(e, ev, "anchors are not supported");
			return NULL;
		}
		if ((n = ynode_new(YN_SCALAR, ev)) == NULL ||
		    (n->value = strndup((char *)ev->data.scalar.value,
		    ev->data.scalar.length)) == NULL)
			goto oom;
		if (strlen(n->value) != ev->data.scalar.length) {
			event_error(e, ev, "NUL byte in a value");
			ynode_free(n);
			return NULL;
		}
		return n;
	case YAML_SEQUENCE_START_EVENT:
		if ((n = ynode_new(YN_SEQ, ev)) == NULL)
			goto oom;
		for (;;) {
			if (!yaml_parser_parse(p, &vev))
				goto parse_error;
			if (vev.type == YAML_SEQUENCE_END_EVENT) {
				yaml_event_delete(&vev);
				return n;
			}
			kid = parse_node(p, &vev, depth + 1, e);
			yaml_event_delete(&vev);
			if (kid == NULL)
				goto fail;
			if (ynode_add(n, kid) == -1) {
				ynode_free(kid);
				goto oom;
			}
		}
	case YAML_MAPPING_START_EVENT:
		if ((n = ynode_new(YN_MAP, ev)) == NULL)
			goto oom;
		for (;;) {
			if (!yaml_parser_parse(p, &kev))
				goto parse_error;
			if (kev.type == YAML_MAPPING_END_EVENT) {
				yaml_event_delete(&kev);
				return n;
			}
			if (kev.type != YAML_SCALAR_EVENT) {
				event_error(e, &kev, "a key must be a string");
				yaml_event_delete(&kev);
				goto fail;
			}
			key = strndup((char *)kev.data.scalar.value,
			    kev.data.scalar.length);
			if (key == NULL) {
				yaml_event_delete(&kev);
				goto oom;
			}
			for (i = 0; i < n->nkids; i++)
				if (strcmp(n->kids[i]->key, key) == 0)
					break;
			if (i < n->nkids) {
				event_error(e, &kev, "duplicate key");
				snprintf(e->msg + strlen(e->msg),
				    sizeof(e->msg) - strlen(e->msg), " \"%.64s\"",
				    key);
				free(key);
				yaml_event_delete(&kev);
				goto fail;
			}
			yaml_event_delete(&kev);
			if (!yaml_parser_parse(p, &vev)) {
				free(key);
				goto parse_error;
			}
			kid = parse_node(p, &vev, depth + 1, e);
			yaml_event_delete(&vev);
			if (kid == NULL) {
				free(key);
				goto fail;
			}
			kid->key = key;
			if (ynode_add(n, kid) == -1) {
				ynode_free(kid);
				goto oom;
			}
		}
	case YAML_ALIAS_EVENT:
		event_error(e, ev, "aliases are not supported");
		return NULL;
	default:
		event_error(e, ev, "unexpected YAML event");
		return NULL;
	}
parse_error:
	snprintf(e->msg, sizeof(e->msg), "%s:%zu: %s", e->file,
	    p->problem_mark.line + 1,
	    p->problem != NULL ? p->problem : "YAML syntax error");
	goto fail;
oom:
	snprintf(e->msg, sizeof(e->msg), "%s: out of memory", e->file);
fail:
	ynode_free(n);
	return NULL;
}

struct ynode *
yaml_load_buf(const char *name, const char *buf, size_t len, struct yerr *e)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ynode *root = NULL;
	int done = 0;

	memset(e, 0, sizeof(*e));
	strlcpy(e->file, name, sizeof(e->file));
	if (!yaml_parser_initialize(&p)) {
		snprintf(e->msg, sizeof(e->msg), "%s: out of memory", name);
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			snprintf(e->msg, sizeof(e->msg), "%s:%zu: %s", name,
			    p.problem_mark.line + 1,
			    p.problem != NULL ? p.problem : "YAML syntax error");
			ynode_free(root);
			root = NULL;
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (root != NULL) {
				event_error(e, &ev, "only one document allowed");
				done = -1;
			}
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			if (root != NULL) {
				event_error(e, &ev, "unexpected content");
				done = -1;
				break;
			}
			if ((root = parse_node(&p, &ev, 0, e)) == NULL)
				done = -1;
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (done == -1) {
		ynode_free(root);
		return NULL;
	}
	if (root == NULL) {
		/* An empty file is an empty mapping: every default applies. */
		if ((root = calloc(1, sizeof(*root))) == NULL)
			return NULL;
		root->type = YN_MAP;
		root->line = 1;
	}
	return root;
}

struct ynode *
yaml_load_file(const char *path, struct yerr *e)
{
	struct ynode *n;
	FILE *f;
	char *buf;
	size_t len;

	memset(e, 0, sizeof(*e));
	strlcpy(e->file, path, sizeof(e->file));
	if ((f = fopen(path, "r")) == NULL) {
		snprintf(e->msg, sizeof(e->msg), "%s: %s", path,
		    strerror(errno));
		return NULL;
	}
	if ((buf = malloc(YAML_MAXFILE + 1)) == NULL) {
		fclose(f);
		snprintf(e->msg, sizeof(e->msg), "%s: out of memory", path);
		return NULL;
	}
	len = fread(buf, 1, YAML_MAXFILE + 1, f);
	if (ferror(f) || len > YAML_MAXFILE) {
		snprintf(e->msg, sizeof(e->msg), "%s: %s", path,
		    ferror(f) ? "read error" : "file too large");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	n = yaml_load_buf(path, buf, len, e);
	free(buf);
	return n;
}

int
yscalar(const struct ynode *n, struct yerr *e, const char *what)
{
	if (n->type != YN_SCALAR)
		return yerror(e, n, "%s: expected %s", n->key ? n->key : "value",
		    what);
	return 0;
}

/* Integers with an optional unit suffix; range-checked. */
int
yparse_long(const struct ynode *n, enum yfield_type type, long min, long max,
    long *out, struct yerr *e)
{
	const char *key = n->key ? n->key : "value";
	long long v, mult = 1;
	char *end;

	if (yscalar(n, e, "a number") == -1)
		return -1;
	errno = 0;
	v = strtoll(n->value, &end, 10);
	if (end == n->value || errno == ERANGE)
		return yerror(e, n, "%s: \"%s\" is not a number", key,
		    n->value);
	if (type == YF_SECONDS) {
		if (strcmp(end, "s") == 0 || *end == '\0')
			mult = 1;
		else if (strcmp(end, "m") == 0)
			mult = 60;
		else if (strcmp(end, "h") == 0)
			mult = 3600;
		else
			return yerror(e, n, "%s: bad duration \"%s\" "
			    "(use s, m or h)", key, n->value);
	} else if (type == YF_MILLIS) {
		if (strcmp(end, "ms") == 0 || *end == '\0')
			mult = 1;
		else if (strcmp(end, "s") == 0)
			mult = 1000;
		else
			return yerror(e, n, "%s: bad duration \"%s\" "
			    "(use ms or s)", key, n->value);
	} else if (type == YF_BYTES) {
		if (*end == '\0')
			mult = 1;
		else if (strcasecmp(end, "k") == 0)
			mult = 1024;
		else if (strcasecmp(end, "m") == 0)
			mult = 1024 * 1024;
		else if (strcasecmp(end, "g") == 0)
			mult = 1024LL * 1024 * 1024;
		else
			return yerror(e, n, "%s: bad size \"%s\" "
			    "(use k, M or G)", key, n->value);
	} else if (*end != '\0')
		return yerror(e, n, "%s: \"%s\" is not a number", key,
		    n->value);
	if (v > LLONG_MAX / mult || v < LLONG_MIN / mult ||
	    v * mult < min || v * mult > max)
		return yerror(e, n, "%s: %s is out of range [%ld, %ld]", key,
		    n->value, min, max);
	*out = (long)(v * mult);
	return 0;
}

static int
bind_string(const struct ynode *n, const struct yfield *f, char *dst,
    struct yerr *e)
{
	size_t i;

	if (yscalar(n, e, "a string") == -1)
		return -1;
	if (strlen(n->value) >= f->size)
		return yerror(e, n, "%s: value too long (at most %zu bytes)",
		    f->key, f->size - 1);
	if (f->choices != NULL) {
		for (i = 0; f->choices[i] != NULL; i++)
			if (strcmp(f->choices[i], n->value) == 0)
				break;
		if (f->choices[i] == NULL)
			return yerror(e, n, "%s: \"%s\" is not one of the "
			    "allowed values", f->key, n->value);
	}
	strlcpy(dst, n->value, f->size);
	return 0;
}

/* Binds the members of mapping n to base as the table says. */
int
ybind(const struct ynode *n, const struct yfield *fields, void *base,
    struct yerr *e)
{
	const struct yfield *f;
	const struct ynode *kid;
	char *dst;
	long v;
	size_t i;

	if (n->type != YN_MAP)
		return yerror(e, n, "%s: expected a mapping",
		    n->key ? n->key : "document");
	for (i = 0; i < n->nkids; i++) {
		kid = n->kids[i];
		for (f = fields; f->key != NULL; f++)
			if (strcmp(f->key, kid->key) == 0)
				break;
		if (f->key == NULL)
			return yerror(e, kid, "unknown key \"%s\"", kid->key);
		dst = (char *)base + f->off;
		switch (f->type) {
		case YF_STRING:
			if (bind_string(kid, f, dst, e) == -1)
				return -1;
			break;
		case YF_INT:
		case YF_SECONDS:
		case YF_MILLIS:
		case YF_BYTES:
			if (yparse_long(kid, f->type, f->min, f->max, &v,
			    e) == -1)
				return -1;
			memcpy(dst, &v, sizeof(v));
			break;
		case YF_BOOL:
			if (yscalar(kid, e, "true or false") == -1)
				return -1;
			if (strcmp(kid->value, "true") == 0 ||
			    strcmp(kid->value, "yes") == 0)
				*(int *)dst = 1;
			else if (strcmp(kid->value, "false") == 0 ||
			    strcmp(kid->value, "no") == 0)
				*(int *)dst = 0;
			else
				return yerror(e, kid, "%s: expected true or "
				    "false", f->key);
			break;
		case YF_MAP:
			if (ybind(kid, f->sub, dst, e) == -1)
				return -1;
			break;
		case YF_CUSTOM:
			if (f->parse(kid, dst, e) == -1)
				return -1;
			break;
		}
	}
	return 0;
}
