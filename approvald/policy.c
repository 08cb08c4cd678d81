/* SPDX-License-Identifier: ISC */
/*
 * policy.yaml: which tools run, at which tier, with which parameters.
 * A tool the file does not name is denied.  Errors read "file:line: what",
 * so that a bad reload can say exactly why the old policy stays.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approvald.h"
#include "ytree.h"

#define POLICY_MAXLIST	256

static const char *const tier_names[] = { "deny", "low", "high", NULL };
static const char *const provisioner_choices[] = { "deny", "approve", NULL };

/* Terraform's default provider registry, for a NAMESPACE/TYPE source. */
#define DEFAULT_REGISTRY	"registry.terraform.io"

const char *
tier_name(enum tier t)
{
	return tier_names[t];
}

static void
strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* A list of strings, each checked by valid() (NULL or why it is bad). */
static int
parse_strlist(const struct ynode *n, struct strlist *l,
    const char *(*valid)(const char *), struct yerr *e)
{
	const char *why;
	size_t i;

	if (n->type != YN_SEQ)
		return yerror(e, n, "%s: expected a list", n->key);
	if (n->nkids > POLICY_MAXLIST)
		return yerror(e, n, "%s: at most %d entries", n->key,
		    POLICY_MAXLIST);
	strlist_free(l);
	if ((l->v = calloc(n->nkids + 1, sizeof(*l->v))) == NULL)
		return yerror(e, n, "out of memory");
	for (i = 0; i < n->nkids; i++) {
		if (yscalar(n->kids[i], e, "a string") == -1)
			return -1;
		if (valid != NULL && (why = valid(n->kids[i]->value)) != NULL)
			return yerror(e, n->kids[i], "%s: \"%s\" %s", n->key,
			    n->kids[i]->value, why);
		if ((l->v[l->n++] = strdup(n->kids[i]->value)) == NULL)
			return yerror(e, n, "out of memory");
	}
	return 0;
}

/* Kubernetes namespace names are DNS-1123 labels. */
const char *
check_dns_label(const char *s)
{
	size_t i, len = strlen(s);

	if (len == 0 || len > 63)
		return "is not 1 to 63 characters long";
	for (i = 0; i < len; i++)
		if (!(islower((unsigned char)s[i]) ||
		    isdigit((unsigned char)s[i]) || s[i] == '-'))
			return "has characters other than a-z, 0-9 and '-'";
	if (s[0] == '-' || s[len - 1] == '-')
		return "starts or ends with '-'";
	return NULL;
}

/* A working directory: relative; no "..", "." or empty components. */
const char *
check_relpath(const char *s)
{
	const char *p, *part;
	size_t len;

	if (*s == '\0')
		return "is empty";
	if (*s == '/')
		return "is absolute";
	if (strlen(s) >= PATH_MAX / 2)
		return "is too long";
	for (part = s; part != NULL; part = p ? p + 1 : NULL) {
		p = strchr(part, '/');
		len = p ? (size_t)(p - part) : strlen(part);
		if (len == 0)
			return "has an empty component";
		if ((len == 1 && part[0] == '.') ||
		    (len == 2 && part[0] == '.' && part[1] == '.'))
			return "has a \".\" or \"..\" component";
	}
	return NULL;
}

static const char *
check_hostport(const char *s)
{
	const char *colon, *errstr = NULL;
	const char *p;

	if ((colon = strrchr(s, ':')) == NULL || colon == s)
		return "is not host:port";
	for (p = s; p < colon; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
			return "has a bad host name";
	strtonum(colon + 1, 1, 65535, &errstr);
	return errstr != NULL ? "has a bad port" : NULL;
}

static const char *
check_pattern(const char *s)
{
	return *s == '\0' ? "is empty" : NULL;
}

/*
 * A provider source address, [HOSTNAME/]NAMESPACE/TYPE: two or three
 * components, each a plain name, so that runnerd can use it as a path
 * under the provider mirror.
 */
static const char *
check_provider(const char *s)
{
	const char *part, *p;
	size_t len, n = 0;

	for (part = s; part != NULL; part = p ? p + 1 : NULL) {
		p = strchr(part, '/');
		len = p ? (size_t)(p - part) : strlen(part);
		if (len == 0 || len > 64 || part[0] == '.')
			return "has an empty, long or dot-led component";
		if (strspn(part, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789.-_") < len)
			return "has characters other than letters, digits, "
			    "'.', '-' and '_'";
		n++;
	}
	return n == 2 || n == 3 ? NULL :
	    "is not [HOSTNAME/]NAMESPACE/TYPE";
}

/*
 * Provider addresses as terraform compares them: lower case, with the
 * default registry when no host is given ("Provider Source Address" in
 * https://developer.hashicorp.com/terraform/language/providers/requirements).
 */
static int
parse_providers(const struct ynode *n, void *dst, struct yerr *e)
{
	struct strlist *l = dst;
	char *full, *c;
	size_t i;

	if (parse_strlist(n, l, check_provider, e) == -1)
		return -1;
	for (i = 0; i < l->n; i++) {
		if (strchr(strchr(l->v[i], '/') + 1, '/') == NULL) {
			if (asprintf(&full, DEFAULT_REGISTRY "/%s",
			    l->v[i]) == -1)
				return yerror(e, n, "out of memory");
			free(l->v[i]);
			l->v[i] = full;
		}
		for (c = l->v[i]; *c != '\0'; c++)
			*c = tolower((unsigned char)*c);
	}
	return 0;
}

int
provisioners_approved(const struct policy *p)
{
	return strcmp(p->provisioners, "approve") == 0;
}

static int
parse_namespaces(const struct ynode *n, void *dst, struct yerr *e)
{
	return parse_strlist(n, dst, check_dns_label, e);
}

static int
parse_working_dirs(const struct ynode *n, void *dst, struct yerr *e)
{
	return parse_strlist(n, dst, check_relpath, e);
}

static int
parse_egress(const struct ynode *n, void *dst, struct yerr *e)
{
	return parse_strlist(n, dst, check_hostport, e);
}

static int
parse_patterns(const struct ynode *n, void *dst, struct yerr *e)
{
	return parse_strlist(n, dst, check_pattern, e);
}

static int
parse_tier(const struct ynode *n, void *dst, struct yerr *e)
{
	int i;

	if (yscalar(n, e, "low, high or deny") == -1)
		return -1;
	for (i = 0; tier_names[i] != NULL; i++)
		if (strcmp(n->value, tier_names[i]) == 0) {
			*(enum tier *)dst = (enum tier)i;
			return 0;
		}
	return yerror(e, n, "tier: \"%s\" is not low, high or deny",
	    n->value);
}

/* from: [group, ...], the names kept as written for approvalctl. */
static int
parse_from(const struct ynode *n, void *dst, struct yerr *e)
{
	struct approval_rule *r = dst;
	size_t i;

	if (config_groups(n, &r->from, e) == -1)
		return -1;
	for (i = 0; i < n->nkids; i++)
		strlcpy(r->names[i], n->kids[i]->value, sizeof(r->names[i]));
	return 0;
}

static const struct yfield rule_fields[] = {
	{ "required", .type = YF_INT, .off = offsetof(struct approval_rule,
	    required), .min = 1, .max = REVIEWERS_MAX },
	{ "from", .type = YF_CUSTOM, .off = 0, .parse = parse_from },
	{ NULL }
};

static int
parse_rule(const struct ynode *n, struct policy_tool *t, struct yerr *e)
{
	struct approval_rule *r;

	if (n->type != YN_MAP)
		return yerror(e, n, "approvals: expected {required: N, from: "
		    "[group, ...]}");
	if (t->nrules == RULES_MAX)
		return yerror(e, n, "approvals: at most %d rules", RULES_MAX);
	r = &t->rules[t->nrules++];
	r->required = 0;
	if (ybind(n, rule_fields, r, e) == -1)
		return -1;
	if (r->required == 0)
		return yerror(e, n, "approvals: required is required");
	return 0;
}

/* approvals: one rule, or a list of rules that are alternatives. */
static int
parse_approvals(const struct ynode *n, void *dst, struct yerr *e)
{
	struct policy_tool *t = dst;
	size_t i;

	t->nrules = 0;
	if (n->type != YN_SEQ)
		return parse_rule(n, t, e);
	if (n->nkids == 0)
		return yerror(e, n, "approvals: an empty list");
	for (i = 0; i < n->nkids; i++)
		if (parse_rule(n->kids[i], t, e) == -1)
			return -1;
	return 0;
}

#define LIST(m, f)	.type = YF_CUSTOM, \
			.off = offsetof(struct policy_tool, m), .parse = f

static const struct yfield tool_fields[] = {
	{ "tier", LIST(tier, parse_tier) },
	{ "namespaces", LIST(namespaces, parse_namespaces) },
	{ "working_dirs", LIST(working_dirs, parse_working_dirs) },
	{ "egress", LIST(egress, parse_egress) },
	{ "approvals", .type = YF_CUSTOM, .off = 0, .parse = parse_approvals },
	{ "require_reason", .type = YF_BOOL, .off = offsetof(struct
	    policy_tool, require_reason) },
	{ NULL }
};

/*
 * What an approval of t needs, kept with it when it is requested: a
 * policy reloaded while it waits changes neither its bar nor its
 * reviewers.
 */
json_t *
policy_requirement(const struct policy_tool *t)
{
	static const struct approval_rule any_operator = { .required = 1 };
	const struct approval_rule *r;
	json_t *rules, *from, *gids;
	size_t i, k, n = t->nrules > 0 ? t->nrules : 1;

	if ((rules = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		r = t->nrules > 0 ? &t->rules[i] : &any_operator;
		from = json_array();
		gids = json_array();
		for (k = 0; k < r->from.ngids; k++) {
			json_array_append_new(from, json_string(r->names[k]));
			json_array_append_new(gids,
			    json_integer(r->from.gids[k]));
		}
		json_array_append_new(rules, json_pack("{s:I, s:o, s:o}",
		    "required", (json_int_t)r->required, "from", from, "gids",
		    gids));
	}
	return json_pack("{s:o, s:b}", "rules", rules, "reason_required",
	    t->require_reason);
}

static int
tool_name_ok(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len >= sizeof(((struct policy_tool *)0)->name))
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

/* tools: { name: { tier, namespaces, working_dirs, egress }, ... } */
static int
parse_tools(const struct ynode *n, void *dst, struct yerr *e)
{
	struct policy *p = dst;
	struct policy_tool *t;
	const struct ynode *kid;
	size_t i;

	if (n->type != YN_MAP)
		return yerror(e, n, "tools: expected a mapping of tool names");
	if ((p->tools = calloc(n->nkids, sizeof(*p->tools))) == NULL)
		return yerror(e, n, "out of memory");
	for (i = 0; i < n->nkids; i++) {
		kid = n->kids[i];
		if (!tool_name_ok(kid->key))
			return yerror(e, kid, "bad tool name \"%s\"", kid->key);
		t = &p->tools[p->ntools++];
		strlcpy(t->name, kid->key, sizeof(t->name));
		t->tier = (enum tier)-1;
		if (ybind(kid, tool_fields, t, e) == -1)
			return -1;
		if (t->tier == (enum tier)-1)
			return yerror(e, kid, "%s: tier is required", t->name);
		if (t->nrules > 0 && t->tier != TIER_HIGH)
			return yerror(e, kid, "%s: approvals are for tier high "
			    "only", t->name);
		/* runnerd asks a person before every apply (runnerd(8)). */
		if (t->tier == TIER_LOW && strcmp(t->name,
		    "terraform_apply") == 0)
			return yerror(e, kid, "terraform_apply: tier low would "
			    "leave nobody to approve an apply: high or deny");
	}
	return 0;
}

static const struct yfield destructive_fields[] = {
	{ "patterns", .type = YF_CUSTOM, .off = offsetof(struct policy,
	    patterns), .parse = parse_patterns },
	{ "delete_actions", .type = YF_BOOL, .off = offsetof(struct policy,
	    delete_actions) },
	{ NULL }
};

static const struct yfield terraform_fields[] = {
	{ "providers", .type = YF_CUSTOM, .off = offsetof(struct policy,
	    providers), .parse = parse_providers },
	{ "provisioners", .type = YF_STRING, .off = offsetof(struct policy,
	    provisioners), .size = sizeof(((struct policy *)0)->provisioners),
	    .choices = provisioner_choices },
	{ NULL }
};

static const struct yfield policy_fields[] = {
	{ "approval_ttl", .type = YF_SECONDS, .off = offsetof(struct policy,
	    approval_ttl), .min = 1, .max = 7 * 86400 },
	{ "decision_reuse", .type = YF_SECONDS, .off = offsetof(struct policy,
	    decision_reuse), .min = 0, .max = 3600 },
	{ "terraform_root", .type = YF_STRING, .off = offsetof(struct policy,
	    terraform_root), .size = PATH_MAX },
	/* Their switches sit at the top level of the policy struct. */
	{ "destructive", .type = YF_MAP, .off = 0, .sub = destructive_fields },
	{ "terraform", .type = YF_MAP, .off = 0, .sub = terraform_fields },
	{ "tools", .type = YF_CUSTOM, .off = 0, .parse = parse_tools },
	{ NULL }
};

/* The rules ybind cannot see: what depends on more than one key. */
static int
policy_check(struct policy *p, const struct ynode *root, struct yerr *e)
{
	size_t i;

	if (p->terraform_root[0] != '\0' && p->terraform_root[0] != '/')
		return yerror(e, root, "terraform_root must be an absolute "
		    "path");
	for (i = 0; i < p->ntools; i++)
		if (p->tools[i].working_dirs.n > 0 &&
		    p->terraform_root[0] == '\0')
			return yerror(e, root, "%s: working_dirs need a "
			    "terraform_root", p->tools[i].name);
	return 0;
}

/* The policy in path, or NULL with "file:line: what" in err. */
struct policy *
policy_load(const char *path, char *err, size_t errlen)
{
	struct policy *p;
	struct ynode *root;
	struct yerr e;

	if ((root = yaml_load_file(path, &e)) == NULL) {
		strlcpy(err, e.msg, errlen);
		return NULL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		ynode_free(root);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	p->approval_ttl = TTL_DEFAULT;
	p->decision_reuse = REUSE_DEFAULT;
	p->delete_actions = 1;
	strlcpy(p->provisioners, "deny", sizeof(p->provisioners));
	strlcpy(p->file, path, sizeof(p->file));
	if (ybind(root, policy_fields, p, &e) == -1 ||
	    policy_check(p, root, &e) == -1) {
		strlcpy(err, e.msg, errlen);
		ynode_free(root);
		policy_free(p);
		return NULL;
	}
	ynode_free(root);
	return p;
}

void
policy_free(struct policy *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->ntools; i++) {
		strlist_free(&p->tools[i].namespaces);
		strlist_free(&p->tools[i].working_dirs);
		strlist_free(&p->tools[i].egress);
	}
	free(p->tools);
	strlist_free(&p->patterns);
	strlist_free(&p->providers);
	free(p);
}

const struct policy_tool *
policy_tool(const struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ntools; i++)
		if (strcmp(p->tools[i].name, name) == 0)
			return &p->tools[i];
	return NULL;
}
