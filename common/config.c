/* SPDX-License-Identifier: ISC */
#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "tools.h"
#include "ytree.h"

#define KB	1024L
#define MB	(1024L * 1024)
#define GB	(1024L * 1024 * 1024)

static const char *const seccomp_modes[] = { "enforce", "trap", NULL };
static const char *const backends[] = { "gvisor", "kubernetes", NULL };
static const char *const truncation_modes[] = { "record", "refuse", NULL };
static const char *const self_approvals[] = { "never", "root", NULL };
static const char *const sandbox_inits[] = { "auto", "always", NULL };

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

/* [name|gid, ...] into acl's groups (approvald's reviewer groups). */
int
config_groups(const struct ynode *n, struct peer_acl *acl, struct yerr *e)
{
	memset(acl, 0, sizeof(*acl));
	return parse_idlist(n, 1, acl, e);
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

/* tools: [name, ...], each one the suite knows (common/tools.c). */
static int
parse_tools(const struct ynode *n, void *dst, struct yerr *e)
{
	uint64_t *mask = dst;
	size_t i;
	int t;

	if (n->type != YN_SEQ)
		return yerror(e, n, "%s: expected a list of tool names", n->key);
	*mask = 0;
	for (i = 0; i < n->nkids; i++) {
		if (yscalar(n->kids[i], e, "a tool name") == -1)
			return -1;
		if ((t = tool_index(n->kids[i]->value)) == -1)
			return yerror(e, n->kids[i], "unknown tool \"%s\"",
			    n->kids[i]->value);
		*mask |= (uint64_t)1 << t;
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
	{ "tools", .type = YF_CUSTOM, .off = offsetof(struct mcpd_conf, tools),
	    .parse = parse_tools },
	{ NULL }
};

static const struct yfield runnerd_fields[] = {
	{ "user", STR(struct runnerd_conf, user) },
	{ "peers", ACL(struct runnerd_conf, peers) },
	{ "operators", ACL(struct runnerd_conf, operators) },
	{ "backend", STR(struct runnerd_conf, backend), .choices = backends },
	{ "runsc", STR(struct runnerd_conf, runsc) },
	{ "state_dir", STR(struct runnerd_conf, state_dir) },
	{ "rootfs", STR(struct runnerd_conf, rootfs) },
	{ "sandbox_init", STR(struct runnerd_conf, sandbox_init), .choices = sandbox_inits },
	{ "timeout", NUM(YF_SECONDS, struct runnerd_conf, timeout, 1, 86400) },
	{ "memory", NUM(YF_BYTES, struct runnerd_conf, memory, 32 * MB, 1024 * GB) },
	{ "address_space", NUM(YF_BYTES, struct runnerd_conf, address_space, 64 * MB, 1024 * GB) },
	{ "pids", NUM(YF_INT, struct runnerd_conf, pids, 8, 65536) },
	{ "cpu_percent", NUM(YF_INT, struct runnerd_conf, cpu_percent, 1, 100000) },
	{ "tmp_size", NUM(YF_BYTES, struct runnerd_conf, tmp_size, 1 * MB, 1024 * GB) },
	{ "work_max", NUM(YF_BYTES, struct runnerd_conf, work_max, 1 * MB, 1024 * GB) },
	{ "output_max", NUM(YF_BYTES, struct runnerd_conf, output_max, 1 * KB, 4 * MB) },
	{ "max_calls", NUM(YF_INT, struct runnerd_conf, max_calls, 1, 1024) },
	{ "inflight_per_user", NUM(YF_INT, struct runnerd_conf, inflight_per_user, 1, 65536) },
	{ "queue_max", NUM(YF_INT, struct runnerd_conf, queue_max, 0, 65536) },
	{ "queue_wait", NUM(YF_SECONDS, struct runnerd_conf, queue_wait, 1, 86400) },
	{ "peer_timeout", NUM(YF_SECONDS, struct runnerd_conf, peer_timeout, 1, 3600) },
	{ "egress_idle", NUM(YF_SECONDS, struct runnerd_conf, egress_idle, 1, 3600) },
	{ "audit_spool_after", NUM(YF_MILLIS, struct runnerd_conf, audit_spool_after, 0, 3600 * 1000) },
	{ "audit_spool_max", NUM(YF_BYTES, struct runnerd_conf, audit_spool_max, 64 * KB, 64 * GB) },
	{ "plan_retention", NUM(YF_SECONDS, struct runnerd_conf, plan_retention, 60, 365 * 86400) },
	{ "tasks_per_client", NUM(YF_INT, struct runnerd_conf, tasks_per_client, 1, 4096) },
	{ "task_retention", NUM(YF_SECONDS, struct runnerd_conf, task_retention, 60, 30 * 86400) },
	{ "terraform_store_per_dir", NUM(YF_BYTES, struct runnerd_conf, terraform_store_per_dir, 1 * MB, 1024 * GB) },
	{ "terraform_store_max", NUM(YF_BYTES, struct runnerd_conf, terraform_store_max, 1 * MB, 1024 * GB) },
	{ "terraform_mirror", STR(struct runnerd_conf, terraform_mirror) },
	{ "terraform_pool", NUM(YF_INT, struct runnerd_conf, terraform_pool, 0, 16) },
	{ "session_agent", STR(struct runnerd_conf, session_agent) },
	{ "session_idle", NUM(YF_SECONDS, struct runnerd_conf, session_idle, 1, 7 * 86400) },
	{ "session_lifetime", NUM(YF_SECONDS, struct runnerd_conf, session_lifetime, 1, 30 * 86400) },
	{ "sessions_max", NUM(YF_INT, struct runnerd_conf, sessions_max, 0, 4096) },
	{ "sessions_per_user", NUM(YF_INT, struct runnerd_conf, sessions_per_user, 0, 4096) },
	{ "sessions_per_client", NUM(YF_INT, struct runnerd_conf, sessions_per_client, 0, 4096) },
	{ "warm_pool", NUM(YF_INT, struct runnerd_conf, warm_pool, 0, 64) },
	{ NULL }
};

static const struct yfield approvald_fields[] = {
	{ "user", STR(struct approvald_conf, user) },
	{ "peers", ACL(struct approvald_conf, peers) },
	{ "operators", ACL(struct approvald_conf, operators) },
	{ "notifiers", ACL(struct approvald_conf, notifiers) },
	{ "policy", STR(struct approvald_conf, policy) },
	{ "database", STR(struct approvald_conf, database) },
	{ "self_approval", STR(struct approvald_conf, self_approval), .choices = self_approvals },
	{ NULL }
};

static const char *const engines[] = { "none", "kubernetes", "aws", NULL };

/* [name, ...]: tools and namespaces. */
static int
parse_names(const struct ynode *n, void *dst, struct yerr *e)
{
	struct name_list *l = dst;
	size_t i;

	if (n->type != YN_SEQ)
		return yerror(e, n, "%s: expected a list", n->key);
	if (n->nkids > NAMES_MAX)
		return yerror(e, n, "%s: at most %d entries", n->key,
		    NAMES_MAX);
	memset(l, 0, sizeof(*l));
	for (i = 0; i < n->nkids; i++) {
		if (yscalar(n->kids[i], e, "a name") == -1)
			return -1;
		if (n->kids[i]->value[0] == '\0' ||
		    strlen(n->kids[i]->value) >= NAME_MAX_LEN)
			return yerror(e, n->kids[i], "%s: bad name \"%.64s\"",
			    n->key, n->kids[i]->value);
		strlcpy(l->v[l->n++], n->kids[i]->value, NAME_MAX_LEN);
	}
	return 0;
}

/* Vault is reached over TLS only: the token never crosses in clear. */
static int
parse_vault_addr(const struct ynode *n, void *dst, struct yerr *e)
{
	char *addr = dst;

	if (yscalar(n, e, "a URL") == -1)
		return -1;
	if (n->value[0] != '\0' && strncmp(n->value, "https://", 8) != 0)
		return yerror(e, n, "addr: \"%s\" is not an https:// URL",
		    n->value);
	if (strlen(n->value) >= sizeof(((struct brokerd_vault *)0)->addr))
		return yerror(e, n, "addr: value too long");
	strlcpy(addr, n->value, sizeof(((struct brokerd_vault *)0)->addr));
	return 0;
}

static const struct yfield vault_fields[] = {
	{ "addr", .type = YF_CUSTOM, .off = offsetof(struct brokerd_vault,
	    addr), .parse = parse_vault_addr },
	{ "ca_file", STR(struct brokerd_vault, ca_file) },
	{ "token_file", STR(struct brokerd_vault, token_file) },
	{ "connect_timeout", NUM(YF_SECONDS, struct brokerd_vault,
	    connect_timeout, 1, 300) },
	{ "request_timeout", NUM(YF_SECONDS, struct brokerd_vault,
	    request_timeout, 1, 600) },
	{ "retries", NUM(YF_INT, struct brokerd_vault, retries, 0, 10) },
	{ NULL }
};

#define NAMES(s, m)	.type = YF_CUSTOM, .off = offsetof(s, m), \
			.parse = parse_names

/* Indexed by the PHASE_* mask a scope's phase stands for. */
static const char *const phase_names[] = {
	[PHASE_PLAN] = "plan", [PHASE_APPLY] = "apply", [PHASE_ANY] = "any"
};

/* phase: any | plan | apply */
static int
parse_phase(const struct ynode *n, void *dst, struct yerr *e)
{
	int *phases = dst, p;

	if (yscalar(n, e, "a phase") == -1)
		return -1;
	for (p = PHASE_PLAN; p <= PHASE_ANY; p++)
		if (strcmp(n->value, phase_names[p]) == 0) {
			*phases = p;
			return 0;
		}
	return yerror(e, n, "phase: \"%.32s\" is not any, plan or apply",
	    n->value);
}

static const struct yfield scope_fields[] = {
	{ "engine", STR(struct brokerd_scope, engine), .choices = engines },
	{ "tools", NAMES(struct brokerd_scope, tools) },
	{ "phase", .type = YF_CUSTOM, .off = offsetof(struct brokerd_scope,
	    phases), .parse = parse_phase },
	{ "mount", STR(struct brokerd_scope, mount) },
	{ "role", STR(struct brokerd_scope, role) },
	{ "namespaces", NAMES(struct brokerd_scope, namespaces) },
	{ "target_arg", STR(struct brokerd_scope, target_arg) },
	{ "ttl", NUM(YF_SECONDS, struct brokerd_scope, ttl, 10, 86400) },
	{ "kube_server", STR(struct brokerd_scope, kube_server) },
	{ "kube_ca_file", STR(struct brokerd_scope, kube_ca_file) },
	{ NULL }
};

/* What a scope's engine needs; an aws scope without a role is "unavailable". */
static int
check_scope(const struct ynode *n, const struct brokerd_scope *sc,
    struct yerr *e)
{
	size_t i;

	if (sc->engine[0] == '\0')
		return yerror(e, n, "scope %s: engine is required", sc->name);
	/* A phase no listed tool has would leave that tool without one. */
	for (i = 0; sc->phases != PHASE_ANY && i < sc->tools.n; i++)
		if ((tool_phases(sc->tools.v[i]) & sc->phases) == 0)
			return yerror(e, n, "scope %s: tool %s has no %s phase",
			    sc->name, sc->tools.v[i], phase_names[sc->phases]);
	if (strcmp(sc->engine, "none") == 0) {
		if (sc->mount[0] || sc->role[0] || sc->namespaces.n)
			return yerror(e, n, "scope %s: engine none takes no "
			    "mount, role or namespaces", sc->name);
		return 0;
	}
	if (strcmp(sc->engine, "kubernetes") == 0 && (sc->mount[0] == '\0' ||
	    sc->role[0] == '\0' || sc->namespaces.n == 0 ||
	    sc->target_arg[0] == '\0'))
		return yerror(e, n, "scope %s: engine kubernetes needs mount, "
		    "role, namespaces and target_arg", sc->name);
	return 0;
}

/* The first of st's scopes listing tool for one of phases, or NULL. */
const struct brokerd_scope *
scope_lookup(const struct scope_table *st, const char *tool, int phases)
{
	size_t i, j;

	for (i = 0; i < st->n; i++)
		for (j = 0; j < st->v[i].tools.n; j++)
			if ((st->v[i].phases & phases) &&
			    strcmp(st->v[i].tools.v[j], tool) == 0)
				return &st->v[i];
	return NULL;
}

/*
 * scopes: { name: { engine, tools, phase, ... }, ... }; a tool has one
 * scope per phase, so that which one a call gets is never a choice.
 */
static int
parse_scopes(const struct ynode *n, void *dst, struct yerr *e)
{
	struct scope_table *st = dst;
	const struct brokerd_scope *other;
	struct brokerd_scope *sc;
	size_t i, t;

	if (n->type != YN_MAP)
		return yerror(e, n, "scopes: expected a mapping");
	if (n->nkids > SCOPES_MAX)
		return yerror(e, n, "scopes: at most %d", SCOPES_MAX);
	memset(st, 0, sizeof(*st));
	for (i = 0; i < n->nkids; i++) {
		sc = &st->v[st->n];
		if (strlen(n->kids[i]->key) >= sizeof(sc->name))
			return yerror(e, n->kids[i], "scope name too long");
		strlcpy(sc->name, n->kids[i]->key, sizeof(sc->name));
		sc->ttl = 600;
		sc->phases = PHASE_ANY;
		if (ybind(n->kids[i], scope_fields, sc, e) == -1 ||
		    check_scope(n->kids[i], sc, e) == -1)
			return -1;
		/* st->n does not count sc yet: only the scopes before it. */
		for (t = 0; t < sc->tools.n; t++)
			if ((other = scope_lookup(st, sc->tools.v[t],
			    sc->phases)) != NULL)
				return yerror(e, n->kids[i], "tool %s is in "
				    "two scopes for one phase: %s and %s",
				    sc->tools.v[t], other->name, sc->name);
		st->n++;
	}
	return 0;
}

static const struct yfield brokerd_fields[] = {
	{ "user", STR(struct brokerd_conf, user) },
	{ "peers", ACL(struct brokerd_conf, peers) },
	{ "journal", STR(struct brokerd_conf, journal) },
	{ "vault", .type = YF_MAP, .off = offsetof(struct brokerd_conf, vault),
	    .sub = vault_fields },
	{ "scopes", .type = YF_CUSTOM, .off = offsetof(struct brokerd_conf,
	    scopes), .parse = parse_scopes },
	{ NULL }
};

static const struct yfield auditd_fields[] = {
	{ "user", STR(struct auditd_conf, user) },
	{ "peers", ACL(struct auditd_conf, peers) },
	{ "readers", ACL(struct auditd_conf, readers) },
	{ "log", STR(struct auditd_conf, log) },
	{ "rotate_size", NUM(YF_BYTES, struct auditd_conf, rotate_size, 4 * KB, 64 * GB) },
	{ "key", STR(struct auditd_conf, key) },
	{ "pubkey", STR(struct auditd_conf, pubkey) },
	{ "checkpoint_file", STR(struct auditd_conf, checkpoint_file) },
	{ "checkpoint_every", NUM(YF_INT, struct auditd_conf, checkpoint_every, 1, 1000000) },
	{ "checkpoint_interval", NUM(YF_SECONDS, struct auditd_conf, checkpoint_interval, 1, 86400) },
	{ "checkpoint_syslog", STR(struct auditd_conf, checkpoint_syslog) },
	{ "forward_syslog", STR(struct auditd_conf, forward_syslog) },
	{ "on_truncation", STR(struct auditd_conf, on_truncation), .choices = truncation_modes },
	{ "ack_timeout", NUM(YF_SECONDS, struct auditd_conf, ack_timeout, 1, 300) },
	{ NULL }
};

static const char *const webhook_formats[] = { "standard", "slack", NULL };

static const struct yfield webhook_fields[] = {
	{ "url", STR(struct webhook, url) },
	{ "format", STR(struct webhook, format), .choices = webhook_formats },
	{ "ed25519_key_file", STR(struct webhook, ed25519_key_file) },
	{ NULL }
};

/*
 * webhooks: [{url: http(s)://..., format: standard | slack,
 * ed25519_key_file: path}, ...]
 */
static int
parse_webhooks(const struct ynode *n, void *dst, struct yerr *e)
{
	struct notifyd_conf *nc = dst;
	struct webhook *w;
	size_t i;

	if (n->type != YN_SEQ)
		return yerror(e, n, "webhooks: expected a list");
	if (n->nkids > WEBHOOKS_MAX)
		return yerror(e, n, "webhooks: at most %d", WEBHOOKS_MAX);
	nc->nwebhooks = 0;
	for (i = 0; i < n->nkids; i++) {
		w = &nc->webhooks[nc->nwebhooks++];
		memset(w, 0, sizeof(*w));
		strlcpy(w->format, "standard", sizeof(w->format));
		if (ybind(n->kids[i], webhook_fields, w, e) == -1)
			return -1;
		if (strncmp(w->url, "https://", 8) != 0 &&
		    strncmp(w->url, "http://", 7) != 0)
			return yerror(e, n->kids[i], "webhooks: url \"%s\" is "
			    "not http:// or https://", w->url);
	}
	return 0;
}

static const struct yfield notifyd_fields[] = {
	{ "user", STR(struct notifyd_conf, user) },
	{ "webhooks", .type = YF_CUSTOM, .off = 0, .parse = parse_webhooks },
	{ "secret_file", STR(struct notifyd_conf, secret_file) },
	{ "timeout", NUM(YF_SECONDS, struct notifyd_conf, timeout, 1, 300) },
	{ "retry_max", NUM(YF_SECONDS, struct notifyd_conf, retry_max, 1, 86400) },
	{ NULL }
};

static const struct yfield kube_fields[] = {
	{ "kubeconfig", STR(struct kube_conf, kubeconfig) },
	{ "namespace", STR(struct kube_conf, namespace) },
	{ "runtime_class", STR(struct kube_conf, runtime_class) },
	{ "image", STR(struct kube_conf, image) },
	{ "ttl_after_finished", NUM(YF_SECONDS, struct kube_conf, ttl_after_finished, 0, 7 * 86400) },
	{ "pvc", STR(struct kube_conf, pvc) },
	{ "pvc_path", STR(struct kube_conf, pvc_path) },
	{ "provider_mirror_pvc", STR(struct kube_conf, provider_mirror_pvc) },
	{ "apiserver", STR(struct kube_conf, apiserver) },
	{ "session_pool", STR(struct kube_conf, session_pool) },
	{ "session_agent", STR(struct kube_conf, session_agent) },
	{ "session_start", NUM(YF_SECONDS, struct kube_conf, session_start, 1, 3600) },
	{ NULL }
};

/* A queue of at least one largest frame and its header. */
static const struct yfield conn_fields[] = {
	{ "max", NUM(YF_INT, struct conn_conf, max, 1, 65536) },
	{ "per_uid", NUM(YF_INT, struct conn_conf, per_uid, 1, 65536) },
	{ "frame_time", NUM(YF_SECONDS, struct conn_conf, frame_time, 1, 3600) },
	{ "queued_max", NUM(YF_BYTES, struct conn_conf, queued_max, 17 * MB, 1024 * MB) },
	{ NULL }
};

#define SECTION(m, t)	.type = YF_MAP, .off = offsetof(struct as_config, m), .sub = t

static const struct yfield top_fields[] = {
	{ "runtime_dir", STR(struct as_config, runtime_dir) },
	{ "seccomp", STR(struct as_config, seccomp), .choices = seccomp_modes },
	{ "connections", SECTION(connections, conn_fields) },
	{ "mcpd", SECTION(mcpd, mcpd_fields) },
	{ "runnerd", SECTION(runnerd, runnerd_fields) },
	{ "kubernetes", SECTION(kubernetes, kube_fields) },
	{ "approvald", SECTION(approvald, approvald_fields) },
	{ "brokerd", SECTION(brokerd, brokerd_fields) },
	{ "auditd", SECTION(auditd, auditd_fields) },
	{ "notifyd", SECTION(notifyd, notifyd_fields) },
	{ NULL }
};

void
config_defaults(struct as_config *c)
{
	memset(c, 0, sizeof(*c));
	strlcpy(c->runtime_dir, "/run/agent-sandbox", sizeof(c->runtime_dir));
	strlcpy(c->seccomp, "enforce", sizeof(c->seccomp));
	c->connections.max = 512;
	c->connections.per_uid = 128;
	c->connections.frame_time = 10;
	c->connections.queued_max = 32 * MB;
	strlcpy(c->mcpd.user, "_asmcp", sizeof(c->mcpd.user));
	c->mcpd.max_line = 4 * MB;
	c->mcpd.max_inflight = 16;
	c->mcpd.call_timeout = 600;
	c->mcpd.tools = tools_all();
	strlcpy(c->runnerd.user, "_asrunner", sizeof(c->runnerd.user));
	/* runnerd.operators stays empty: nobody copies into sessions. */
	strlcpy(c->runnerd.backend, "gvisor", sizeof(c->runnerd.backend));
	strlcpy(c->runnerd.runsc, "/usr/bin/runsc", sizeof(c->runnerd.runsc));
	strlcpy(c->runnerd.sandbox_init, "auto",
	    sizeof(c->runnerd.sandbox_init));
	strlcpy(c->runnerd.state_dir, "/var/lib/agent-sandbox/runner",
	    sizeof(c->runnerd.state_dir));
	c->runnerd.timeout = 60;
	c->runnerd.memory = 512 * MB;
	c->runnerd.address_space = 2 * GB;
	c->runnerd.pids = 64;
	c->runnerd.cpu_percent = 100;
	c->runnerd.tmp_size = 64 * MB;
	c->runnerd.work_max = 1 * GB;
	c->runnerd.output_max = 1 * MB;
	c->runnerd.max_calls = 8;
	c->runnerd.inflight_per_user = 64;
	c->runnerd.queue_max = 64;
	c->runnerd.queue_wait = 30;
	c->runnerd.peer_timeout = 60;
	c->runnerd.egress_idle = 60;
	c->runnerd.audit_spool_after = 500;
	c->runnerd.audit_spool_max = 64 * MB;
	strlcpy(c->runnerd.session_agent,
	    "/usr/local/share/agent-sandbox/session-agent.py",
	    sizeof(c->runnerd.session_agent));
	c->runnerd.plan_retention = 7 * 86400;
	c->runnerd.tasks_per_client = 64;
	c->runnerd.task_retention = 86400;
	c->runnerd.terraform_store_per_dir = 1 * GB;
	c->runnerd.terraform_store_max = 8 * GB;
	c->runnerd.session_idle = 600;
	c->runnerd.session_lifetime = 3600;
	c->runnerd.sessions_max = 16;
	c->runnerd.sessions_per_user = 4;
	c->runnerd.sessions_per_client = 2;
	c->runnerd.warm_pool = 2;
	strlcpy(c->approvald.user, "_asapprove", sizeof(c->approvald.user));
	strlcpy(c->approvald.policy, "/etc/agent-sandbox/policy.yaml",
	    sizeof(c->approvald.policy));
	strlcpy(c->approvald.database,
	    "/var/lib/agent-sandbox/approvald/approvals.db",
	    sizeof(c->approvald.database));
	strlcpy(c->approvald.self_approval, "never",
	    sizeof(c->approvald.self_approval));
	strlcpy(c->kubernetes.kubeconfig, "/etc/agent-sandbox/kubeconfig",
	    sizeof(c->kubernetes.kubeconfig));
	strlcpy(c->kubernetes.namespace, "agent-sandbox",
	    sizeof(c->kubernetes.namespace));
	strlcpy(c->kubernetes.runtime_class, "gvisor",
	    sizeof(c->kubernetes.runtime_class));
	strlcpy(c->kubernetes.image, "agent-sandbox/runner:latest",
	    sizeof(c->kubernetes.image));
	c->kubernetes.ttl_after_finished = 300;
	strlcpy(c->kubernetes.apiserver, "kubernetes.default.svc:443",
	    sizeof(c->kubernetes.apiserver));
	strlcpy(c->kubernetes.session_pool, "agent-sandbox-session",
	    sizeof(c->kubernetes.session_pool));
	strlcpy(c->kubernetes.session_agent,
	    "/usr/local/libexec/agent-sandbox/session-agent.py",
	    sizeof(c->kubernetes.session_agent));
	c->kubernetes.session_start = 60;
	strlcpy(c->brokerd.user, "_asbroker", sizeof(c->brokerd.user));
	strlcpy(c->brokerd.journal,
	    "/var/lib/agent-sandbox/brokerd/leases.journal",
	    sizeof(c->brokerd.journal));
	strlcpy(c->brokerd.vault.token_file, "/etc/agent-sandbox/vault-token",
	    sizeof(c->brokerd.vault.token_file));
	c->brokerd.vault.connect_timeout = 5;
	c->brokerd.vault.request_timeout = 10;
	c->brokerd.vault.retries = 2;
	strlcpy(c->auditd.user, "_asaudit", sizeof(c->auditd.user));
	strlcpy(c->auditd.log, "/var/log/agent-sandbox/audit/audit.jsonl",
	    sizeof(c->auditd.log));
	c->auditd.rotate_size = 64 * MB;
	strlcpy(c->auditd.key, "/var/lib/agent-sandbox/auditd/checkpoint.key",
	    sizeof(c->auditd.key));
	strlcpy(c->auditd.pubkey, "/etc/agent-sandbox/audit-checkpoint.pub",
	    sizeof(c->auditd.pubkey));
	strlcpy(c->auditd.checkpoint_file,
	    "/var/lib/agent-sandbox/auditd/checkpoint.json",
	    sizeof(c->auditd.checkpoint_file));
	c->auditd.checkpoint_every = 1000;
	c->auditd.checkpoint_interval = 60;
	strlcpy(c->auditd.on_truncation, "record",
	    sizeof(c->auditd.on_truncation));
	c->auditd.ack_timeout = 5;
	strlcpy(c->notifyd.user, "_asnotify", sizeof(c->notifyd.user));
	strlcpy(c->notifyd.secret_file, "/etc/agent-sandbox/webhook-secret",
	    sizeof(c->notifyd.secret_file));
	c->notifyd.timeout = 20;
	c->notifyd.retry_max = 300;
}

/* The longest a Vault request of brokerd's takes, retries and waits too. */
static long
vault_worst_ms(const struct brokerd_vault *v)
{
	return v->request_timeout * 1000 * (v->retries + 1) +
	    VAULT_RETRY_BASE_MS * ((1L << v->retries) - 1);
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
	/* A slow Vault fails in brokerd, which says why, not in runnerd. */
	if (r == 0 && c->runnerd.peer_timeout * 1000 < vault_worst_ms(
	    &c->brokerd.vault))
		r = yerror(&e, root, "runnerd.peer_timeout (%ld s) must be at "
		    "least brokerd's longest Vault request, "
		    "vault.request_timeout x (retries + 1) and the waits "
		    "between them (%ld ms)", c->runnerd.peer_timeout,
		    vault_worst_ms(&c->brokerd.vault));
	if (r == 0 && c->runnerd.audit_spool_after >=
	    c->runnerd.peer_timeout * 1000)
		r = yerror(&e, root, "runnerd.audit_spool_after (%ld ms) must "
		    "be below runnerd.peer_timeout (%ld s), or 0",
		    c->runnerd.audit_spool_after, c->runnerd.peer_timeout);
	/* Rows nobody may fetch would pile up in approvald's outbox. */
	if (r == 0 && c->notifyd.nwebhooks > 0 && c->approvald.notifiers.nuids
	    == 0 && c->approvald.notifiers.ngids == 0)
		r = yerror(&e, root, "notifyd.webhooks need approvald.notifiers "
		    "to admit notifyd's user");
	if (r == 0 && c->runnerd.terraform_mirror[0] != '\0' &&
	    c->runnerd.terraform_mirror[0] != '/')
		r = yerror(&e, root, "runnerd.terraform_mirror must be an "
		    "absolute path");
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

static void
print_names(const char *key, const struct name_list *l)
{
	size_t i;

	printf("      %s: [", key);
	for (i = 0; i < l->n; i++)
		printf("%s\"%s\"", i ? ", " : "", l->v[i]);
	printf("]\n");
}

static void
print_brokerd_vault(const struct brokerd_vault *v)
{
	printf("  vault:\n    addr: \"%s\"\n    ca_file: \"%s\"\n"
	    "    token_file: \"%s\"\n    connect_timeout: %ld\n"
	    "    request_timeout: %ld\n    retries: %ld\n", v->addr,
	    v->ca_file, v->token_file, v->connect_timeout, v->request_timeout,
	    v->retries);
}

static void
print_brokerd_scopes(const struct scope_table *st)
{
	const struct brokerd_scope *sc;
	size_t i;

	printf("  scopes:%s\n", st->n ? "" : " {}");
	for (i = 0; i < st->n; i++) {
		sc = &st->v[i];
		printf("    \"%s\":\n      engine: %s\n", sc->name,
		    sc->engine);
		print_names("tools", &sc->tools);
		printf("      phase: %s\n", phase_names[sc->phases]);
		printf("      mount: \"%s\"\n      role: \"%s\"\n",
		    sc->mount, sc->role);
		print_names("namespaces", &sc->namespaces);
		printf("      target_arg: \"%s\"\n      ttl: %ld\n"
		    "      kube_server: \"%s\"\n      kube_ca_file: \"%s\"\n",
		    sc->target_arg, sc->ttl, sc->kube_server,
		    sc->kube_ca_file);
	}
}

/* The normalized configuration (-nv), itself a valid configuration file. */
void
config_print(const struct as_config *c)
{
	size_t i, n;

	printf("runtime_dir: \"%s\"\nseccomp: %s\n", c->runtime_dir,
	    c->seccomp);
	printf("connections:\n  max: %ld\n  per_uid: %ld\n  frame_time: %ld\n"
	    "  queued_max: %ld\n", c->connections.max, c->connections.per_uid,
	    c->connections.frame_time, c->connections.queued_max);
	printf("mcpd:\n  user: \"%s\"\n  max_line: %ld\n  max_inflight: %ld\n"
	    "  call_timeout: %ld\n", c->mcpd.user, c->mcpd.max_line,
	    c->mcpd.max_inflight, c->mcpd.call_timeout);
	printf("  tools: [");
	for (i = 0, n = 0; i < tools_count(); i++)
		if (c->mcpd.tools & ((uint64_t)1 << i))
			printf("%s%s", n++ ? ", " : "", tool_at(i)->name);
	printf("]\n");
	printf("runnerd:\n  user: \"%s\"\n", c->runnerd.user);
	print_acl("peers", &c->runnerd.peers);
	print_acl("operators", &c->runnerd.operators);
	printf("  backend: %s\n  runsc: \"%s\"\n  state_dir: \"%s\"\n",
	    c->runnerd.backend, c->runnerd.runsc, c->runnerd.state_dir);
	printf("  sandbox_init: %s\n", c->runnerd.sandbox_init);
	printf("  rootfs: \"%s\"\n  timeout: %ld\n  memory: %ld\n"
	    "  address_space: %ld\n  pids: %ld\n"
	    "  cpu_percent: %ld\n  tmp_size: %ld\n  work_max: %ld\n"
	    "  output_max: %ld\n"
	    "  max_calls: %ld\n  inflight_per_user: %ld\n"
	    "  queue_max: %ld\n  queue_wait: %ld\n"
	    "  peer_timeout: %ld\n  egress_idle: %ld\n"
	    "  audit_spool_after: %ld\n"
	    "  audit_spool_max: %ld\n  plan_retention: %ld\n",
	    c->runnerd.rootfs,
	    c->runnerd.timeout, c->runnerd.memory, c->runnerd.address_space,
	    c->runnerd.pids,
	    c->runnerd.cpu_percent, c->runnerd.tmp_size,
	    c->runnerd.work_max, c->runnerd.output_max, c->runnerd.max_calls,
	    c->runnerd.inflight_per_user, c->runnerd.queue_max, c->runnerd.queue_wait,
	    c->runnerd.peer_timeout, c->runnerd.egress_idle,
	    c->runnerd.audit_spool_after,
	    c->runnerd.audit_spool_max, c->runnerd.plan_retention);
	printf("  tasks_per_client: %ld\n  task_retention: %ld\n",
	    c->runnerd.tasks_per_client, c->runnerd.task_retention);
	printf("  terraform_store_per_dir: %ld\n  terraform_store_max: %ld\n",
	    c->runnerd.terraform_store_per_dir, c->runnerd.terraform_store_max);
	printf("  terraform_mirror: \"%s\"\n  terraform_pool: %ld\n",
	    c->runnerd.terraform_mirror, c->runnerd.terraform_pool);
	printf("  session_agent: \"%s\"\n  session_idle: %ld\n"
	    "  session_lifetime: %ld\n  sessions_max: %ld\n"
	    "  sessions_per_user: %ld\n  sessions_per_client: %ld\n"
	    "  warm_pool: %ld\n",
	    c->runnerd.session_agent, c->runnerd.session_idle,
	    c->runnerd.session_lifetime, c->runnerd.sessions_max,
	    c->runnerd.sessions_per_user, c->runnerd.sessions_per_client,
	    c->runnerd.warm_pool);
	printf("kubernetes:\n  kubeconfig: \"%s\"\n  namespace: \"%s\"\n"
	    "  runtime_class: \"%s\"\n  image: \"%s\"\n"
	    "  ttl_after_finished: %ld\n  pvc: \"%s\"\n"
	    "  pvc_path: \"%s\"\n  provider_mirror_pvc: \"%s\"\n"
	    "  apiserver: \"%s\"\n  session_pool: \"%s\"\n"
	    "  session_agent: \"%s\"\n  session_start: %ld\n",
	    c->kubernetes.kubeconfig, c->kubernetes.namespace,
	    c->kubernetes.runtime_class, c->kubernetes.image,
	    c->kubernetes.ttl_after_finished, c->kubernetes.pvc,
	    c->kubernetes.pvc_path, c->kubernetes.provider_mirror_pvc,
	    c->kubernetes.apiserver, c->kubernetes.session_pool,
	    c->kubernetes.session_agent, c->kubernetes.session_start);
	printf("approvald:\n  user: \"%s\"\n", c->approvald.user);
	print_acl("peers", &c->approvald.peers);
	print_acl("operators", &c->approvald.operators);
	print_acl("notifiers", &c->approvald.notifiers);
	printf("  policy: \"%s\"\n  database: \"%s\"\n  self_approval: %s\n",
	    c->approvald.policy, c->approvald.database,
	    c->approvald.self_approval);
	printf("brokerd:\n  user: \"%s\"\n", c->brokerd.user);
	print_acl("peers", &c->brokerd.peers);
	printf("  journal: \"%s\"\n", c->brokerd.journal);
	print_brokerd_vault(&c->brokerd.vault);
	print_brokerd_scopes(&c->brokerd.scopes);
	printf("auditd:\n  user: \"%s\"\n", c->auditd.user);
	print_acl("peers", &c->auditd.peers);
	print_acl("readers", &c->auditd.readers);
	printf("  log: \"%s\"\n  rotate_size: %ld\n", c->auditd.log,
	    c->auditd.rotate_size);
	printf("  key: \"%s\"\n  pubkey: \"%s\"\n  checkpoint_file: \"%s\"\n"
	    "  checkpoint_every: %ld\n  checkpoint_interval: %ld\n"
	    "  checkpoint_syslog: \"%s\"\n  on_truncation: %s\n"
	    "  forward_syslog: \"%s\"\n  ack_timeout: %ld\n",
	    c->auditd.key, c->auditd.pubkey, c->auditd.checkpoint_file,
	    c->auditd.checkpoint_every, c->auditd.checkpoint_interval,
	    c->auditd.checkpoint_syslog, c->auditd.on_truncation,
	    c->auditd.forward_syslog, c->auditd.ack_timeout);
	printf("notifyd:\n  user: \"%s\"\n  webhooks: [", c->notifyd.user);
	for (i = 0; i < c->notifyd.nwebhooks; i++)
		printf("%s{url: \"%s\", format: %s, ed25519_key_file: \"%s\"}",
		    i ? ", " : "", c->notifyd.webhooks[i].url,
		    c->notifyd.webhooks[i].format,
		    c->notifyd.webhooks[i].ed25519_key_file);
	printf("]\n  secret_file: \"%s\"\n  timeout: %ld\n  retry_max: %ld\n",
	    c->notifyd.secret_file, c->notifyd.timeout, c->notifyd.retry_max);
}
