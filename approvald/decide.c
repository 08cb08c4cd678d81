/* SPDX-License-Identifier: ISC */
/*
 * One call against the policy: deny, allow, or approval required; and
 * what an approval is bound to.  The checks are approvald's own, so a
 * confused or compromised runnerd cannot talk its way past them.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approvald.h"

static int
deny(struct decision *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
deny(struct decision *d, const char *fmt, ...)
{
	va_list ap;

	d->verdict = VERDICT_DENY;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
	return 0;
}

static int
listed(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

static const char *
string_arg(const json_t *args, const char *key)
{
	return json_string_value(json_object_get(args, key));
}

static int
check_namespace(const struct policy_tool *t, const json_t *args,
    struct decision *d)
{
	const char *ns, *why;

	if ((ns = string_arg(args, "namespace")) == NULL)
		return deny(d, "%s: namespace is required", t->name);
	if ((why = check_dns_label(ns)) != NULL)
		return deny(d, "namespace \"%.64s\" %s", ns, why);
	if (!listed(&t->namespaces, ns))
		return deny(d, "namespace \"%s\" is not allowed for %s", ns,
		    t->name);
	return 1;
}

/* A Terraform module has at least one .tf or .tf.json file at its top. */
static int
has_terraform_files(const char *dir)
{
	struct dirent *de;
	size_t n;
	DIR *d;
	int found = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		found = (n > 3 && strcmp(de->d_name + n - 3, ".tf") == 0) ||
		    (n > 8 && strcmp(de->d_name + n - 8, ".tf.json") == 0);
	}
	closedir(d);
	return found;
}

/*
 * The directory must be listed and, once every symlink is resolved,
 * be exactly terraform_root/working_dir: a symlink anywhere on the way
 * is refused, not followed.
 */
static int
check_working_dir(const struct policy *p, const struct policy_tool *t,
    const json_t *args, struct decision *d)
{
	char root[PATH_MAX], want[PATH_MAX], path[PATH_MAX];
	const char *wd, *why;
	struct stat st;

	if ((wd = string_arg(args, "working_dir")) == NULL)
		return deny(d, "%s: working_dir is required", t->name);
	if ((why = check_relpath(wd)) != NULL)
		return deny(d, "working_dir \"%.128s\" %s", wd, why);
	if (!listed(&t->working_dirs, wd))
		return deny(d, "working_dir \"%.128s\" is not allowed for %s",
		    wd, t->name);
	if (realpath(p->terraform_root, root) == NULL)
		return deny(d, "terraform_root %s: %s", p->terraform_root,
		    strerror(errno));
	if ((size_t)snprintf(want, sizeof(want), "%s/%s", root, wd) >=
	    sizeof(want))
		return deny(d, "working_dir \"%.128s\" is too long", wd);
	if (realpath(want, path) == NULL)
		return deny(d, "working_dir \"%.128s\": %s", wd,
		    strerror(errno));
	if (strcmp(path, want) != 0)
		return deny(d, "working_dir \"%.128s\" goes through a symlink",
		    wd);
	if (stat(path, &st) == -1 || !S_ISDIR(st.st_mode))
		return deny(d, "working_dir \"%.128s\" is not a directory", wd);
	if (!has_terraform_files(path))
		return deny(d, "working_dir \"%.128s\" is not a Terraform "
		    "directory (no .tf file)", wd);
	strlcpy(d->path, path, sizeof(d->path));
	return 1;
}

/* Fills d; -1 only when the call itself is malformed. */
int
decide(const struct policy *p, const char *tool, const json_t *args,
    struct decision *d)
{
	const struct policy_tool *t;

	memset(d, 0, sizeof(*d));
	d->tier = TIER_DENY;
	if (tool == NULL || !json_is_object(args))
		return -1;
	if ((t = policy_tool(p, tool)) == NULL)
		return deny(d, "tool %.64s is not in the policy", tool);
	d->tier = t->tier;
	if (t->tier == TIER_DENY)
		return deny(d, "tool %s is denied by the policy", tool);
	if (t->namespaces.n > 0 && check_namespace(t, args, d) == 0)
		return 0;
	if (t->working_dirs.n > 0 && check_working_dir(p, t, args, d) == 0)
		return 0;
	if (t->tier == TIER_LOW) {
		d->verdict = VERDICT_ALLOW;
		snprintf(d->reason, sizeof(d->reason), "%s is low risk", tool);
		/*
		 * Decided on the tool's name alone, the answer is the same
		 * for its next call: runnerd may use it again for a while.
		 */
		if (t->namespaces.n == 0 && t->working_dirs.n == 0)
			d->reuse_ms = p->decision_reuse * 1000;
	} else {
		d->verdict = VERDICT_APPROVAL;
		snprintf(d->reason, sizeof(d->reason),
		    "%s needs an operator's approval", tool);
	}
	return 0;
}

static json_t *
strlist_json(const struct strlist *l)
{
	json_t *a;
	size_t i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < l->n; i++)
		json_array_append_new(a, json_string(l->v[i]));
	return a;
}

/* The MSG_DECISION payload. */
json_t *
decision_json(const struct policy *p, const char *tool,
    const struct decision *d)
{
	static const char *const verdicts[] = {
		"deny", "allow", "approval_required"
	};
	static const struct strlist none;
	const struct policy_tool *t;
	json_t *j;

	t = tool != NULL ? policy_tool(p, tool) : NULL;
	j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:b}",
	    "decision", verdicts[d->verdict], "tier", tier_name(d->tier),
	    "reason", d->reason,
	    "egress", strlist_json(t != NULL && d->verdict != VERDICT_DENY ?
	    &t->egress : &none),
	    "destructive_patterns", strlist_json(&p->patterns),
	    "destructive_actions", p->delete_actions);
	/*
	 * A terraform call also learns which providers it may install and
	 * whether code that runs at apply time may be approved at all.
	 */
	if (j != NULL && d->reuse_ms > 0)
		json_object_set_new(j, "reuse_ms", json_integer(d->reuse_ms));
	if (j != NULL && d->path[0] != '\0')
		json_object_update_new(j, json_pack("{s:s, s:o, s:s}",
		    "working_dir_path", d->path, "terraform_providers",
		    strlist_json(&p->providers), "terraform_provisioners",
		    p->provisioners));
	return j;
}

/*
 * What an approval binds to: SHA-256 of the canonical
 * {"tool","arguments"} without approval_id, which is how the approved
 * call is presented again.  The canonical arguments go to *canon when
 * asked for.
 */
int
params_digest(const char *tool, const json_t *args,
    char out[SHA256_HEX_LEN + 1], char **canon)
{
	json_t *a, *j;
	int r;

	if ((a = json_deep_copy(args)) == NULL)
		return -1;
	json_object_del(a, "approval_id");
	if (canon != NULL && (*canon = cjson_dump(a)) == NULL) {
		json_decref(a);
		return -1;
	}
	if ((j = json_pack("{s:s, s:o}", "tool", tool, "arguments", a)) ==
	    NULL)
		return -1;
	r = cjson_digest(j, out);
	json_decref(j);
	return r;
}

static int
actions_destroy(const json_t *actions)
{
	const char *a;
	json_t *v;
	size_t i;

	json_array_foreach(actions, i, v) {
		if ((a = json_string_value(v)) == NULL)
			continue;
		if (strcmp(a, "delete") == 0 || strcmp(a, "replace") == 0)
			return 1;
	}
	return 0;
}

/*
 * The plan summary as an operator sees it: each resource marked
 * destructive by the policy's own reading of its actions (runnerd's mark
 * can add, never remove), the text signals found in the plan, and code
 * that runs at apply time, which only a person may let run.
 */
json_t *
mark_destructive(const struct policy *p, const json_t *summary,
    const char *plan_text)
{
	json_t *s, *res, *r, *found;
	size_t i;
	int any, mark;

	s = json_is_object(summary) ? json_deep_copy(summary) : json_object();
	if (s == NULL || (found = json_array()) == NULL) {
		json_decref(s);
		return NULL;
	}
	any = json_array_size(json_object_get(s, "code")) > 0;
	res = json_object_get(s, "resources");
	json_array_foreach(res, i, r) {
		if (!json_is_object(r))
			continue;
		mark = json_is_true(json_object_get(r, "destructive")) ||
		    (p->delete_actions &&
		    actions_destroy(json_object_get(r, "actions")));
		json_object_set_new(r, "destructive", json_boolean(mark));
		any |= mark;
	}
	for (i = 0; plan_text != NULL && i < p->patterns.n; i++)
		if (strcasestr(plan_text, p->patterns.v[i]) != NULL) {
			json_array_append_new(found,
			    json_string(p->patterns.v[i]));
			any = 1;
		}
	json_object_set_new(s, "destructive_signals", found);
	json_object_set_new(s, "destructive", json_boolean(any));
	return s;
}
