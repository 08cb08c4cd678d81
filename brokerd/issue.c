/*
 * CRED_ISSUE and CRED_REVOKE from runnerd, and the leases outstanding
 * between them.  A lease is journalled before anyone hears of it and
 * recorded by auditd before runnerd gets it; when either fails it is
 * revoked again and the call refused.  Leases nobody revoked (runnerd
 * went away, Vault was down, the previous brokerd crashed) are revoked
 * by a periodic sweep, at the latest when their TTL runs out.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "brokerd.h"
#include "event.h"
#include "log.h"

#define SWEEP_MS	30000
#define CA_MAXSIZE	(64 * 1024)

struct lease {
	TAILQ_ENTRY(lease)	 entry;
	char			 id[LEASE_ID_MAX];
	char			 scope[NAME_MAX_LEN];
	uint64_t		 reqid;
	int64_t			 expires;	/* ev_now_ms() */
	int			 doomed;	/* revoke at the next sweep */
};

static TAILQ_HEAD(, lease) leases = TAILQ_HEAD_INITIALIZER(leases);
static const struct as_config	*conf;
static char			*kube_ca[SCOPES_MAX];	/* PEM, public */

static struct lease *
lease_find(const char *id)
{
	struct lease *l;

	TAILQ_FOREACH(l, &leases, entry)
		if (strcmp(l->id, id) == 0)
			return l;
	return NULL;
}

static struct lease *
lease_add(const char *id, const char *scope, uint64_t reqid, long ttl)
{
	struct lease *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	strlcpy(l->id, id, sizeof(l->id));
	strlcpy(l->scope, scope, sizeof(l->scope));
	l->reqid = reqid;
	l->expires = ev_now_ms() + (int64_t)ttl * 1000;
	TAILQ_INSERT_TAIL(&leases, l, entry);
	return l;
}

/* Left outstanding by the previous run: revoked at the first sweep. */
static void
adopt_leftover(const char *id, void *arg)
{
	struct lease *l;

	(void)arg;
	log_info("lease %s was left outstanding, revoking it", id);
	if ((l = lease_add(id, "", 0, 0)) == NULL)
		fatal("lease table");
	l->doomed = 1;
}

static char *
read_ca(const char *path, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((buf = malloc(CA_MAXSIZE + 1)) == NULL) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	len = fread(buf, 1, CA_MAXSIZE + 1, f);
	fclose(f);
	if (len > CA_MAXSIZE) {
		free(buf);
		snprintf(err, errlen, "%s: too large for a CA file", path);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* Before the sandbox: CA files, the Vault client, the journal. */
int
broker_init(const struct as_config *c, char *err, size_t errlen)
{
	const struct scope_table *st = &c->brokerd.scopes;
	size_t i;

	conf = c;
	for (i = 0; i < st->n; i++)
		if (st->v[i].kube_ca_file[0] != '\0' &&
		    (kube_ca[i] = read_ca(st->v[i].kube_ca_file, err,
		    errlen)) == NULL)
			return -1;
	if (vault_init(&c->brokerd.vault, err, errlen) == -1)
		return -1;
	return journal_open(c->brokerd.journal, adopt_leftover, NULL, err,
	    errlen);
}

static int
audit_revoked(const struct lease *l, uint64_t reqid, const char *reason)
{
	return audit_emit("credential.revoked", reqid, json_pack(
	    "{s:s, s:s, s:s}", "lease_id", l->id, "scope", l->scope,
	    "reason", reason));
}

/*
 * Revokes l at Vault and forgets it: 0, 1 when revoked but not
 * recorded, -1 when Vault refused (l stays, doomed, for the sweep).
 */
static int
lease_end(struct lease *l, uint64_t reqid, const char *reason, char *err,
    size_t errlen)
{
	int r;

	if (vault_revoke(l->id, err, errlen) == -1) {
		log_warnx("lease %s: revoke failed: %s", l->id, err);
		l->doomed = 1;
		return -1;
	}
	r = audit_revoked(l, reqid, reason) == -1 ? 1 : 0;
	TAILQ_REMOVE(&leases, l, entry);
	(void)journal_remove(l->id, TAILQ_EMPTY(&leases));
	log_info("lease %s revoked (%s)", l->id, reason);
	free(l);
	return r;
}

void
broker_sweep(void *arg)
{
	struct lease *l, *next;
	char err[256];
	int64_t now = ev_now_ms();

	(void)arg;
	for (l = TAILQ_FIRST(&leases); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (l->doomed || now >= l->expires)
			(void)lease_end(l, l->reqid, l->doomed ?
			    "left outstanding" : "expired", err, sizeof(err));
	}
	ev_timer(SWEEP_MS, broker_sweep, NULL);
}

static int
refuse(struct conn *c, uint64_t reqid, int code, const char *why)
{
	char rid[REQID_STR_LEN];

	reqid_format(reqid, rid);
	log_warnx("%s: refused: %s", rid, why);
	return conn_error(c, reqid, code, "%s", why);
}

static json_t *
issued_fields(const struct cred_target *t, const char *lease_id, long ttl)
{
	return json_pack("{s:s, s:s, s:o, s:I, s:o, s:s}",
	    "scope", t->scope->name, "engine", t->scope->engine,
	    "lease_id", lease_id ? json_string(lease_id) : json_null(),
	    "ttl", (json_int_t)ttl,
	    "namespace", t->ns[0] ? json_string(t->ns) : json_null(),
	    "tool", t->tool);
}

/* A lease we minted but cannot hand over goes straight back. */
static void
undo(struct lease *l)
{
	char err[256];

	(void)lease_end(l, l->reqid, "not handed over", err, sizeof(err));
}

static int
issue_lease(struct conn *c, uint64_t reqid, const struct cred_target *t)
{
	struct vault_lease vl;
	struct secret file = { NULL, 0 };
	struct lease *l;
	char err[256];
	long ttl;
	int fd;

	if (!vault_configured())
		return refuse(c, reqid, ERR_UNAVAIL, "no Vault configured");
	if (strcmp(t->scope->engine, "aws") == 0 && t->scope->role[0] == '\0')
		return refuse(c, reqid, ERR_UNAVAIL, "the aws secrets engine "
		    "is not configured: unavailable");
	if (vault_issue(t->scope, t->ns, &vl, err, sizeof(err)) == -1)
		return refuse(c, reqid, ERR_UNAVAIL, err);
	ttl = vl.ttl;
	if ((l = lease_add(vl.lease_id, t->scope->name, reqid, vl.ttl)) ==
	    NULL) {
		/* Not even journalled: Vault's TTL is what remains. */
		(void)vault_revoke(vl.lease_id, err, sizeof(err));
		vault_lease_clear(&vl);
		return refuse(c, reqid, ERR_INTERNAL, "out of memory");
	}
	if (journal_add(l->id) == -1) {
		vault_lease_clear(&vl);
		undo(l);
		return refuse(c, reqid, ERR_INTERNAL, "lease journal failed");
	}
	if (cred_file(t->scope, t->ns, l->id, ttl, vl.data,
	    kube_ca[t->scope - conf->brokerd.scopes.v], &file) == -1) {
		vault_lease_clear(&vl);
		undo(l);
		return refuse(c, reqid, ERR_UNAVAIL, "vault: the credential "
		    "lacks the engine's fields");
	}
	vault_lease_clear(&vl);
	fd = cred_memfd(&file);
	secret_clear(&file);
	if (fd == -1) {
		undo(l);
		return refuse(c, reqid, ERR_INTERNAL, "memfd failed");
	}
	if (audit_emit("credential.issued", reqid, issued_fields(t, l->id,
	    ttl)) == -1) {
		close(fd);
		undo(l);
		return refuse(c, reqid, ERR_UNAVAIL, "audit unavailable");
	}
	log_info("lease %s issued: scope %s, namespace %s, ttl %lds", l->id,
	    t->scope->name, t->ns, ttl);
	return conn_send_json(c, MSG_CRED_ISSUED, reqid, fd,
	    issued_fields(t, l->id, ttl));
}

static int
broker_issue(struct conn *c, struct msg *m, json_t *req)
{
	struct cred_target t;
	char err[256];

	if (scope_resolve(&conf->brokerd.scopes, req, &t, err,
	    sizeof(err)) == -1)
		return refuse(c, m->hdr.reqid, ERR_DENIED, err);
	if (strcmp(t.scope->engine, "none") != 0)
		return issue_lease(c, m->hdr.reqid, &t);
	if (audit_emit("credential.issued", m->hdr.reqid,
	    issued_fields(&t, NULL, 0)) == -1)
		return refuse(c, m->hdr.reqid, ERR_UNAVAIL,
		    "audit unavailable");
	return conn_send_json(c, MSG_CRED_ISSUED, m->hdr.reqid, -1,
	    issued_fields(&t, NULL, 0));
}

static int
broker_revoke(struct conn *c, struct msg *m, json_t *req)
{
	struct lease *l;
	char id[LEASE_ID_MAX], err[256];
	const char *lease;
	int r;

	lease = json_string_value(json_object_get(req, "lease_id"));
	if (lease == NULL || strlcpy(id, lease, sizeof(id)) >= sizeof(id))
		return refuse(c, m->hdr.reqid, ERR_BADMSG,
		    "expected {\"lease_id\"}");
	/* Only leases we issued and still hold. */
	if ((l = lease_find(id)) == NULL) {
		snprintf(err, sizeof(err), "lease %.128s is not outstanding",
		    id);
		return refuse(c, m->hdr.reqid, ERR_DENIED, err);
	}
	if ((r = lease_end(l, m->hdr.reqid, "requested", err,
	    sizeof(err))) == -1)
		return refuse(c, m->hdr.reqid, ERR_UNAVAIL, err);
	if (r == 1)
		return refuse(c, m->hdr.reqid, ERR_UNAVAIL, "lease revoked, "
		    "but audit unavailable");
	return conn_send_json(c, MSG_CRED_REVOKED, m->hdr.reqid, -1,
	    json_pack("{s:s}", "lease_id", id));
}

/* broker.sock: what runnerd may ask. */
const struct msg_rule brokerd_runnerd_rules[] = {
	{ MSG_CRED_ISSUE, PAYLOAD_JSON, 0, 0, NULL, broker_issue },
	{ MSG_CRED_REVOKE, PAYLOAD_JSON, 0, 0, NULL, broker_revoke },
	{ 0, 0, 0, 0, NULL, NULL }
};
