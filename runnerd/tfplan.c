/* SPDX-License-Identifier: ISC */
/*
 * Reading a terraform plan for the people who approve it.  The plan JSON
 * comes out of a sandbox the agent's module ran in, so it is untrusted:
 * anything that is not the shape terraform writes is refused with a
 * reason rather than summarised half-way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cjson.h"
#include "tfplan.h"

enum tf_action {
	TF_NOOP,
	TF_CREATE,
	TF_READ,
	TF_UPDATE,
	TF_DELETE,
	TF_REPLACE,
	TF_FORGET,
	TF_NACTIONS
};

static const char *const action_names[TF_NACTIONS] = {
	"no-op", "create", "read", "update", "delete", "replace", "forget"
};

/* Every action list terraform writes (plans/action.go) and its meaning. */
static const struct {
	const char	*first;
	const char	*second;	/* NULL: a one-step action */
	enum tf_action	 action;
} action_lists[] = {
	{ "no-op", NULL, TF_NOOP },
	{ "create", NULL, TF_CREATE },
	{ "read", NULL, TF_READ },
	{ "update", NULL, TF_UPDATE },
	{ "delete", NULL, TF_DELETE },
	{ "forget", NULL, TF_FORGET },
	{ "delete", "create", TF_REPLACE },
	{ "create", "delete", TF_REPLACE },
	{ "create", "forget", TF_REPLACE },
};

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* What an actions array amounts to; -1 if terraform never writes it. */
static int
parse_actions(const json_t *actions)
{
	const char *first, *second = NULL;
	size_t i, n;

	n = json_array_size(actions);
	if (!json_is_array(actions) || n < 1 || n > 2)
		return -1;
	first = json_string_value(json_array_get(actions, 0));
	if (n == 2 && (second = json_string_value(json_array_get(actions,
	    1))) == NULL)
		return -1;
	if (first == NULL)
		return -1;
	for (i = 0; i < sizeof(action_lists) / sizeof(action_lists[0]); i++) {
		if (strcmp(first, action_lists[i].first) != 0)
			continue;
		if (second == NULL && action_lists[i].second == NULL)
			return action_lists[i].action;
		if (second != NULL && action_lists[i].second != NULL &&
		    strcmp(second, action_lists[i].second) == 0)
			return action_lists[i].action;
	}
	return -1;
}

static int
holds_delete(const json_t *actions)
{
	json_t *v;
	size_t i;

	json_array_foreach(actions, i, v)
		if (strcmp(json_string_value(v), "delete") == 0)
			return 1;
	return 0;
}

static int
is_identifier(const char *s)
{
	if (*s != '_' && (*s < 'A' || *s > 'Z') && (*s < 'a' || *s > 'z'))
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_-") == strlen(s);
}

/* One step of an attribute path, written the way terraform shows it. */
static int
put_step(FILE *f, const json_t *step, int first)
{
	const char *name;
	char *quoted;

	if (json_is_integer(step) && json_integer_value(step) >= 0) {
		if (first)
			return -1;
		fprintf(f, "[%lld]", (long long)json_integer_value(step));
		return 0;
	}
	if ((name = json_string_value(step)) == NULL ||
	    (first && *name == '\0'))
		return -1;
	if (first || is_identifier(name)) {
		fprintf(f, "%s%s", first ? "" : ".", name);
		return 0;
	}
	if ((quoted = json_dumps(step, JSON_ENCODE_ANY)) == NULL)
		return -1;
	fprintf(f, "[%s]", quoted);
	free(quoted);
	return 0;
}

/*
 * One replace path as an operator reads it: ["spec", 0, "selector"]
 * becomes spec[0].selector, a map key that is no identifier is quoted
 * (labels["app.kubernetes.io/name"]).  NULL if the path is malformed.
 */
static char *
path_text(const json_t *path)
{
	FILE *f;
	char *buf = NULL;
	size_t i, len;
	json_t *step;
	int bad = 0;

	if (!json_is_array(path) || json_array_size(path) == 0)
		return NULL;
	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	json_array_foreach(path, i, step)
		if (put_step(f, step, i == 0) == -1)
			bad = 1;
	if (fclose(f) != 0 || bad) {
		free(buf);
		return NULL;
	}
	return buf;
}

static json_t *
forced_by(const json_t *paths, size_t idx, char *err, size_t errlen)
{
	json_t *list, *path;
	char *text;
	size_t i;

	if ((list = json_array()) == NULL) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	if (paths == NULL || json_is_null(paths))
		return list;
	if (!json_is_array(paths)) {
		seterr(err, errlen, "plan JSON: resource_changes[%zu]: "
		    "replace_paths is not an array", idx);
		json_decref(list);
		return NULL;
	}
	json_array_foreach(paths, i, path) {
		if ((text = path_text(path)) == NULL) {
			seterr(err, errlen, "plan JSON: resource_changes[%zu]: "
			    "replace_paths[%zu] is not an attribute path",
			    idx, i);
			json_decref(list);
			return NULL;
		}
		if (json_array_append_new(list, json_string(text)) == -1) {
			seterr(err, errlen, "out of memory");
			json_decref(list);
			free(text);
			return NULL;
		}
		free(text);
	}
	return list;
}

/* "ADDRESS: ACTION", and what forced a replacement. */
static json_t *
resource_reason(const char *address, enum tf_action action,
    const json_t *forced)
{
	FILE *f;
	char *buf = NULL;
	size_t i, len;
	json_t *v, *reason;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	fprintf(f, "%s: %s", address, action_names[action]);
	json_array_foreach(forced, i, v)
		fprintf(f, "%s%s", i == 0 ? " (forced by " : ", ",
		    json_string_value(v));
	if (json_array_size(forced) > 0)
		fputc(')', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	reason = json_string(buf);
	free(buf);
	return reason;
}

/*
 * The summary of resource_changes[idx]; its action is counted in counts
 * and, when destructive, its reason appended to reasons.
 */
static json_t *
resource_summary(const json_t *rc, size_t idx,
    const struct tfplan_signals *sig, int counts[TF_NACTIONS],
    json_t *reasons, char *err, size_t errlen)
{
	const json_t *change, *actions, *why;
	const char *address;
	json_t *forced, *r;
	int action, destructive;

	if (!json_is_object(rc)) {
		seterr(err, errlen, "plan JSON: resource_changes[%zu] is not "
		    "an object", idx);
		return NULL;
	}
	address = json_string_value(json_object_get(rc, "address"));
	if (address == NULL || *address == '\0') {
		seterr(err, errlen, "plan JSON: resource_changes[%zu]: no "
		    "address", idx);
		return NULL;
	}
	change = json_object_get(rc, "change");
	actions = json_object_get(change, "actions");
	if (!json_is_object(change) || (action = parse_actions(actions)) ==
	    -1) {
		seterr(err, errlen, "plan JSON: %s: change.actions is not an "
		    "action list terraform writes", address);
		return NULL;
	}
	why = json_object_get(rc, "action_reason");
	if (why != NULL && !json_is_string(why) && !json_is_null(why)) {
		seterr(err, errlen, "plan JSON: %s: action_reason is not a "
		    "string", address);
		return NULL;
	}
	if ((forced = forced_by(json_object_get(change, "replace_paths"), idx,
	    err, errlen)) == NULL)
		return NULL;

	counts[action]++;
	destructive = sig->delete_actions && holds_delete(actions);
	if (destructive && json_array_append_new(reasons,
	    resource_reason(address, action, forced)) == -1) {
		seterr(err, errlen, "out of memory");
		json_decref(forced);
		return NULL;
	}
	r = json_pack("{s:s, s:O, s:s, s:b, s:o, s:O}",
	    "address", address, "actions", actions,
	    "action", action_names[action], "destructive", destructive,
	    "forced_by", forced,
	    "action_reason", why != NULL ? why : json_null());
	if (r == NULL)
		seterr(err, errlen, "out of memory");
	return r;
}

/*
 * What each construct runs, by its expressions' names; the first is
 * what it runs, the others what it runs with.  A provisioner type not
 * listed shows all its expressions.
 */
static const struct {
	const char	*type;
	const char	*keys[5];
} code_keys[] = {
	{ "local-exec", { "command", "interpreter", "working_dir",
	    "environment", NULL } },
	{ "remote-exec", { "inline", "script", "scripts", NULL } },
	{ "file", { "source", "content", "destination", NULL } },
	{ "external", { "program", "working_dir", NULL } },
};

#define CODE_MAXDEPTH	32	/* module calls within module calls */

/*
 * An expression as a person reads it: a string constant as is, another
 * constant as JSON, else what terraform computes it from at apply time.
 * The representation is {"constant_value": v} or {"references": [...]}
 * ("Expression Representation" in
 * https://developer.hashicorp.com/terraform/internals/json-format).
 */
static void
put_expression(FILE *f, const json_t *e)
{
	const json_t *cv, *ref;
	char *dump;
	size_t i;

	if ((cv = json_object_get(e, "constant_value")) != NULL) {
		if (json_is_string(cv))
			fputs(json_string_value(cv), f);
		else if ((dump = json_dumps(cv, JSON_COMPACT |
		    JSON_ENCODE_ANY)) != NULL) {
			fputs(dump, f);
			free(dump);
		}
		return;
	}
	fputs("(computed", f);
	json_array_foreach(json_object_get(e, "references"), i, ref)
		fprintf(f, "%s%s", i == 0 ? " from: " : ", ",
		    json_is_string(ref) ? json_string_value(ref) : "?");
	fputc(')', f);
}

/* One expression of a construct's, named unless it is the main one. */
static void
put_code_key(FILE *f, const json_t *exprs, const char *key, int main,
    int *n)
{
	const json_t *e;

	if ((e = json_object_get(exprs, key)) == NULL)
		return;
	fprintf(f, "%s", (*n)++ ? "; " : "");
	if (!main)
		fprintf(f, "%s = ", key);
	put_expression(f, e);
}

/* What a provisioner or an external data source runs, as text. */
static char *
code_text(const char *type, const json_t *exprs)
{
	const char *key;
	const json_t *e;
	char *buf = NULL;
	size_t i, j, len;
	FILE *f;
	int n = 0;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	for (i = 0; i < sizeof(code_keys) / sizeof(code_keys[0]); i++)
		if (strcmp(type, code_keys[i].type) == 0)
			break;
	if (i < sizeof(code_keys) / sizeof(code_keys[0]))
		for (j = 0; (key = code_keys[i].keys[j]) != NULL; j++)
			put_code_key(f, exprs, key, j == 0, &n);
	else
		json_object_foreach((json_t *)exprs, key, e)
			put_code_key(f, exprs, key, 0, &n);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int
code_add(json_t *code, const char *prefix, const char *address,
    const char *type, const json_t *exprs, char *err, size_t errlen)
{
	char *text;
	int r;

	if (exprs != NULL && !json_is_object(exprs)) {
		seterr(err, errlen, "plan JSON: configuration: %s%s: %s "
		    "expressions are not an object", prefix, address, type);
		return -1;
	}
	if ((text = code_text(type, exprs)) == NULL) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	r = json_array_append_new(code, json_pack("{s:s++, s:s, s:s}",
	    "address", prefix, address, "", "type", type, "command", text));
	free(text);
	if (r == -1)
		seterr(err, errlen, "out of memory");
	return r;
}

/* The code of one resource: its provisioners, or an external program. */
static int
resource_code(const json_t *r, const char *prefix, json_t *code,
    char *err, size_t errlen)
{
	const char *address, *mode, *type, *ptype;
	const json_t *provs, *pv;
	size_t i;

	address = json_string_value(json_object_get(r, "address"));
	mode = json_string_value(json_object_get(r, "mode"));
	type = json_string_value(json_object_get(r, "type"));
	provs = json_object_get(r, "provisioners");
	if (address == NULL || mode == NULL || type == NULL ||
	    (provs != NULL && !json_is_array(provs))) {
		seterr(err, errlen, "plan JSON: configuration: %s: a resource "
		    "is not the shape terraform writes", prefix);
		return -1;
	}
	json_array_foreach(provs, i, pv) {
		if ((ptype = json_string_value(json_object_get(pv, "type"))) ==
		    NULL) {
			seterr(err, errlen, "plan JSON: configuration: %s%s: "
			    "provisioner %zu has no type", prefix, address, i);
			return -1;
		}
		if (code_add(code, prefix, address, ptype, json_object_get(pv,
		    "expressions"), err, errlen) == -1)
			return -1;
	}
	/* hashicorp/external runs its program to read the data source. */
	if (strcmp(mode, "data") == 0 && strcmp(type, "external") == 0)
		return code_add(code, prefix, address, type,
		    json_object_get(r, "expressions"), err, errlen);
	return 0;
}

/*
 * The code a module and its module calls would run, each address
 * prefixed with the module path ("module.NAME.").  The module
 * configuration is {"resources": [...], "module_calls": {NAME:
 * {"module": {...}}}} (json-format, "Configuration Representation").
 */
static int
module_code(const json_t *mod, const char *prefix, int depth, json_t *code,
    char *err, size_t errlen)
{
	const json_t *res, *calls, *r, *call;
	const char *name;
	char *sub;
	size_t i;
	int rv;

	res = json_object_get(mod, "resources");
	calls = json_object_get(mod, "module_calls");
	if (depth > CODE_MAXDEPTH || !json_is_object(mod) ||
	    (res != NULL && !json_is_array(res)) ||
	    (calls != NULL && !json_is_object(calls))) {
		seterr(err, errlen, "plan JSON: configuration: module %s is "
		    "not the shape terraform writes", *prefix ? prefix : "root");
		return -1;
	}
	json_array_foreach(res, i, r)
		if (resource_code(r, prefix, code, err, errlen) == -1)
			return -1;
	json_object_foreach((json_t *)calls, name, call) {
		if (asprintf(&sub, "%smodule.%s.", prefix, name) == -1) {
			seterr(err, errlen, "out of memory");
			return -1;
		}
		rv = module_code(json_object_get(call, "module"), sub,
		    depth + 1, code, err, errlen);
		free(sub);
		if (rv == -1)
			return -1;
	}
	return 0;
}

/*
 * Each construct that runs code becomes a reason when the policy lets
 * a person approve it (sig->code): "runs code at apply time: local-exec
 * in ADDRESS".
 */
static int
code_signals(const json_t *code, const struct tfplan_signals *sig,
    json_t *reasons, char *err, size_t errlen)
{
	const json_t *c;
	size_t i;

	if (!sig->code)
		return 0;
	json_array_foreach(code, i, c)
		if (json_array_append_new(reasons, json_sprintf("runs code at "
		    "apply time: %s in %s", json_string_value(json_object_get(c,
		    "type")), json_string_value(json_object_get(c,
		    "address")))) == -1) {
			seterr(err, errlen, "out of memory");
			return -1;
		}
	return 0;
}

/* Each policy pattern found in the plan text becomes a reason. */
static int
text_signals(const char *text, const json_t *patterns, json_t *reasons,
    char *err, size_t errlen)
{
	const char *pat;
	json_t *v;
	size_t i;

	if (patterns == NULL)
		return 0;
	if (!json_is_array(patterns)) {
		seterr(err, errlen, "destructive patterns are not a list");
		return -1;
	}
	json_array_foreach(patterns, i, v) {
		if ((pat = json_string_value(v)) == NULL || *pat == '\0') {
			seterr(err, errlen, "destructive pattern %zu is not a "
			    "non-empty string", i);
			return -1;
		}
		if (text != NULL && strcasestr(text, pat) != NULL &&
		    json_array_append_new(reasons, json_sprintf(
		    "plan text matches \"%s\"", pat)) == -1) {
			seterr(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

/*
 * The summary of one plan (see tfplan.h), or NULL with the reason in err
 * if the plan JSON or the signals are malformed.  plan_text may be NULL.
 */
json_t *
tfplan_summary(const char *plan_json, size_t len, const char *plan_text,
    const struct tfplan_signals *sig, char *err, size_t errlen)
{
	char perr[160];
	const char *version;
	json_t *plan, *changes, *rc, *resources, *reasons, *r, *counts, *code;
	json_t *summary = NULL, *config;
	int count[TF_NACTIONS] = { 0 };
	size_t i;

	if ((plan = cjson_parse(plan_json, len, perr, sizeof(perr))) == NULL) {
		seterr(err, errlen, "plan JSON: %s", perr);
		return NULL;
	}
	resources = json_array();
	reasons = json_array();
	counts = json_object();
	code = json_array();
	if (resources == NULL || reasons == NULL || counts == NULL ||
	    code == NULL) {
		seterr(err, errlen, "out of memory");
		goto done;
	}
	if (!json_is_object(plan)) {
		seterr(err, errlen, "plan JSON: not an object");
		goto done;
	}
	version = json_string_value(json_object_get(plan, "format_version"));
	if (version == NULL) {
		seterr(err, errlen, "plan JSON: no format_version");
		goto done;
	}
	/* A new major version is a format this reading does not know. */
	if (strncmp(version, "1.", 2) != 0) {
		seterr(err, errlen, "plan JSON: format_version %.16s is not "
		    "1.x", version);
		goto done;
	}
	changes = json_object_get(plan, "resource_changes");
	if (changes != NULL && !json_is_array(changes)) {
		seterr(err, errlen, "plan JSON: resource_changes is not an "
		    "array");
		goto done;
	}
	json_array_foreach(changes, i, rc) {
		if ((r = resource_summary(rc, i, sig, count, reasons, err,
		    errlen)) == NULL)
			goto done;
		json_array_append_new(resources, r);
	}
	/* A plan with no configuration has none of the agent's code. */
	if ((config = json_object_get(plan, "configuration")) != NULL &&
	    module_code(json_object_get(config, "root_module"), "", 0, code,
	    err, errlen) == -1)
		goto done;
	if (code_signals(code, sig, reasons, err, errlen) == -1 ||
	    text_signals(plan_text, sig->patterns, reasons, err, errlen) == -1)
		goto done;

	for (i = 0; i < TF_NACTIONS; i++)
		json_object_set_new(counts, action_names[i],
		    json_integer(count[i]));
	summary = json_pack("{s:O, s:O, s:O, s:b, s:O}", "counts", counts,
	    "resources", resources, "code", code,
	    "destructive", json_array_size(reasons) > 0,
	    "destructive_reasons", reasons);
	if (summary == NULL)
		seterr(err, errlen, "out of memory");
done:
	json_decref(counts);
	json_decref(resources);
	json_decref(reasons);
	json_decref(code);
	json_decref(plan);
	return summary;
}
