#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ytree.h"

#define KB	1024L
#define MB	(1024L * 1024)
#define GB	(1024L * 1024 * 1024)

static const char *const seccomp_modes[] = { "enforce", "trap", NULL };
static const char *const backends[] = { "gvisor", "kubernetes", NULL };

static int
parse_id(const struct ynode *n, int group, long *id, struct yerr *e)
{
	struct passwd *pw;
	struct group *gr;
	const char *errstr = NULL;
	long long v;

	if (yscalar(n, e, group ? "a group" : "a user") == -1)
		return -1;
	v = strtonum(n->value, 0, 4294967294LL, &errstr);
	if (errstr == NULL) {
		*id = (long)v;
		return 0;
	}
	if (group) {
		if ((gr = getgrnam(n->value)) == NULL)
			return yerror(e, n, "unknown group \"%s\"", n->value);
		*id = gr->gr_gid;
	} else {
		if ((pw = getpwnam(n->value)) == NULL)
			return yerror(e, n, "unknown user \"%s\"", n->value);
		*id = pw->pw_uid;
	}
	return 0;
}

static int
parse_idlist(const struct ynode *n, int group, struct peer_acl *acl,
    struct yerr *e)
{
	size_t i, *count = group ? &acl->ngids : &acl->nuids;
	long id = 0;

	if (n->type != YN_SEQ)
		return yerror(e, n, "%s: expected a list", n->key);
	if (n->nkids > ACL_MAX)
		return yerror(e, n, "%s: at most %d entries", n->key, ACL_MAX);
	*count = 0;
	for (i = 0; i < n->nkids; i++) {
		if (parse_id(n->kids[i], group, &id, e) == -1)
			return -1;
		if (group)
			acl->gids[(*count)++] = (gid_t)id;
		else
			acl->uids[(*count)++] = (uid_t)id;
	}
	return 0;
}

/* peers: { users: [name|uid, ...], groups: [name|gid, ...] } */
static int
parse_acl(const struct ynode *n, void *dst, struct yerr *e)
{
	struct peer_acl *acl = dst;
	size_t i;

	if (n->type != YN_MAP)
		return yerror(e, n, "%s: expected users and groups", n->key);
	memset(acl, 0, sizeof(*acl));
	for (i = 0; i < n->nkids; i++) {
		if (strcmp(n->kids[i]->key, "users") == 0) {
			if (parse_idlist(n->kids[i], 0, acl, e) == -1)
				return -1;
		} else if (strcmp(n->kids[i]->key, "groups") == 0) {
			if (parse_idlist(n->kids[i], 1, acl, e) == -1)
				return -1;
		} else
			return yerror(e, n->kids[i], "unknown key \"%s\"",
			    n->kids[i]->key);
	}
	return 0;
}

#define STR(s, m)	.type = YF_STRING, .off = offsetof(s, m), \
			.size = sizeof(((s *)0)->m)
#define NUM(t, s, m, lo, hi) .type = t, .off = offsetof(s, m), .min = lo, .max = hi
#define ACL(s, m)	.type = YF_CUSTOM, .off = offsetof(s, m), .parse = parse_acl

static const struct yfield mcpd_fields[] = {
	{ "user", STR(struct mcpd_conf, user) },
	{ "max_line", NUM(YF_BYTES, struct mcpd_conf, max_line, 1 * KB, 64 * MB) },
	{ "max_inflight", NUM(YF_INT, struct mcpd_conf, max_inflight, 1, 1024) },
	{ "call_timeout", NUM(YF_SECONDS, struct mcpd_conf, call_timeout, 1, 86400) },
	{ NULL }
};

static const struct yfield runnerd_fields[] = {
	{ "user", STR(struct runnerd_conf, user) },
	{ "peers", ACL(struct runnerd_conf, peers) },
	{ "backend", STR(struct runnerd_conf, backend), .choices = backends },
	{ "runsc", STR(struct runnerd_conf, runsc) },
	{ "state_dir", STR(struct runnerd_conf, state_dir) },
	{ NULL }
};

static const struct yfield approvald_fields[] = {
	{ "user", STR(struct approvald_conf, user) },
	{ "peers", ACL(struct approvald_conf, peers) },
	{ "operators", ACL(struct approvald_conf, operators) },
	{ "policy", STR(struct approvald_conf, policy) },
	{ "database", STR(struct approvald_conf, database) },
	{ NULL }
};

static const struct yfield brokerd_fields[] = {
	{ "user", STR(struct brokerd_conf, user) },
	{ "peers", ACL(struct brokerd_conf, peers) },
	{ "journal", STR(struct brokerd_conf, journal) },
	{ NULL }
};

static const struct yfield auditd_fields[] = {
	{ "user", STR(struct auditd_conf, user) },
	{ "peers", ACL(struct auditd_conf, peers) },
	{ "readers", ACL(struct auditd_conf, readers) },
	{ "log", STR(struct auditd_conf, log) },
	{ "rotate_size", NUM(YF_BYTES, struct auditd_conf, rotate_size, 4 * KB, 64 * GB) },
	{ NULL }
};

#define SECTION(m, t)	.type = YF_MAP, .off = offsetof(struct as_config, m), .sub = t

static const struct yfield top_fields[] = {
	{ "runtime_dir", STR(struct as_config, runtime_dir) },
	{ "seccomp", STR(struct as_config, seccomp), .choices = seccomp_modes },
	{ "mcpd", SECTION(mcpd, mcpd_fields) },
	{ "runnerd", SECTION(runnerd, runnerd_fields) },
	{ "approvald", SECTION(approvald, approvald_fields) },
	{ "brokerd", SECTION(brokerd, brokerd_fields) },
	{ "auditd", SECTION(auditd, auditd_fields) },
	{ NULL }
};

void
config_defaults(struct as_config *c)
{
	memset(c, 0, sizeof(*c));
	strlcpy(c->runtime_dir, "/run/agent-sandbox", sizeof(c->runtime_dir));
	strlcpy(c->seccomp, "enforce", sizeof(c->seccomp));
	strlcpy(c->mcpd.user, "_asmcp", sizeof(c->mcpd.user));
	c->mcpd.max_line = 4 * MB;
	c->mcpd.max_inflight = 16;
	c->mcpd.call_timeout = 600;
	strlcpy(c->runnerd.user, "_asrunner", sizeof(c->runnerd.user));
	strlcpy(c->runnerd.backend, "gvisor", sizeof(c->runnerd.backend));
	strlcpy(c->runnerd.runsc, "/usr/bin/runsc", sizeof(c->runnerd.runsc));
	strlcpy(c->runnerd.state_dir, "/var/lib/agent-sandbox/runner",
	    sizeof(c->runnerd.state_dir));
	strlcpy(c->approvald.user, "_asapprove", sizeof(c->approvald.user));
	strlcpy(c->approvald.policy, "/etc/agent-sandbox/policy.yaml",
	    sizeof(c->approvald.policy));
	strlcpy(c->approvald.database,
	    "/var/lib/agent-sandbox/approvals.db",
	    sizeof(c->approvald.database));
	strlcpy(c->brokerd.user, "_asbroker", sizeof(c->brokerd.user));
	strlcpy(c->brokerd.journal, "/var/lib/agent-sandbox/leases.journal",
	    sizeof(c->brokerd.journal));
	strlcpy(c->auditd.user, "_asaudit", sizeof(c->auditd.user));
	strlcpy(c->auditd.log, "/var/log/agent-sandbox/audit.jsonl",
	    sizeof(c->auditd.log));
	c->auditd.rotate_size = 64 * MB;
}

/* 0, or -1 with "file:line: what" in err. */
int
config_load(const char *path, struct as_config *c, char *err, size_t errlen)
{
	struct ynode *root;
	struct yerr e;
	int r;

	config_defaults(c);
	if ((root = yaml_load_file(path, &e)) == NULL) {
		strlcpy(err, e.msg, errlen);
		return -1;
	}
	r = ybind(root, top_fields, c, &e);
	if (r == 0 && c->runtime_dir[0] != '/')
		r = yerror(&e, root, "runtime_dir must be an absolute path");
	ynode_free(root);
	if (r == -1) {
		strlcpy(err, e.msg, errlen);
		return -1;
	}
	if (strlcpy(c->path, path, sizeof(c->path)) >= sizeof(c->path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	return 0;
}

int
config_socket_path(const struct as_config *c, const char *name, char *buf,
    size_t len)
{
	int n;

	n = snprintf(buf, len, "%s/%s", c->runtime_dir, name);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
acl_allows(const struct peer_acl *acl, uid_t uid, const gid_t *groups,
    size_t ngroups)
{
	size_t i, j;

	for (i = 0; i < acl->nuids; i++)
		if (acl->uids[i] == uid)
			return 1;
	for (i = 0; i < acl->ngids; i++)
		for (j = 0; j < ngroups; j++)
			if (acl->gids[i] == groups[j])
				return 1;
	return 0;
}

/* Adds src's entries to dst, as many as fit. */
void
acl_merge(struct peer_acl *dst, const struct peer_acl *src)
{
	size_t i;

	for (i = 0; i < src->nuids && dst->nuids < ACL_MAX; i++)
		dst->uids[dst->nuids++] = src->uids[i];
	for (i = 0; i < src->ngids && dst->ngids < ACL_MAX; i++)
		dst->gids[dst->ngids++] = src->gids[i];
}

static void
print_acl(const char *name, const struct peer_acl *acl)
{
	size_t i;

	printf("  %s:\n    users: [", name);
	for (i = 0; i < acl->nuids; i++)
		printf("%s%u", i ? ", " : "", (unsigned)acl->uids[i]);
	printf("]\n    groups: [");
	for (i = 0; i < acl->ngids; i++)
		printf("%s%u", i ? ", " : "", (unsigned)acl->gids[i]);
	printf("]\n");
}

/* The normalized configuration (-nv), itself a valid configuration file. */
void
config_print(const struct as_config *c)
{
	printf("runtime_dir: \"%s\"\nseccomp: %s\n", c->runtime_dir,
	    c->seccomp);
	printf("mcpd:\n  user: \"%s\"\n  max_line: %ld\n  max_inflight: %ld\n"
	    "  call_timeout: %ld\n", c->mcpd.user, c->mcpd.max_line,
	    c->mcpd.max_inflight, c->mcpd.call_timeout);
	printf("runnerd:\n  user: \"%s\"\n", c->runnerd.user);
	print_acl("peers", &c->runnerd.peers);
	printf("  backend: %s\n  runsc: \"%s\"\n  state_dir: \"%s\"\n",
	    c->runnerd.backend, c->runnerd.runsc, c->runnerd.state_dir);
	printf("approvald:\n  user: \"%s\"\n", c->approvald.user);
	print_acl("peers", &c->approvald.peers);
	print_acl("operators", &c->approvald.operators);
	printf("  policy: \"%s\"\n  database: \"%s\"\n", c->approvald.policy,
	    c->approvald.database);
	printf("brokerd:\n  user: \"%s\"\n", c->brokerd.user);
	print_acl("peers", &c->brokerd.peers);
	printf("  journal: \"%s\"\n", c->brokerd.journal);
	printf("auditd:\n  user: \"%s\"\n", c->auditd.user);
	print_acl("peers", &c->auditd.peers);
	print_acl("readers", &c->auditd.readers);
	printf("  log: \"%s\"\n  rotate_size: %ld\n", c->auditd.log,
	    c->auditd.rotate_size);
}
