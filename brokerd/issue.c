/* SPDX-License-Identifier: ISC */
/*
 * CRED_ISSUE and CRED_REVOKE from runnerd, and the leases outstanding
 * between them.  A lease is journalled before anyone hears of it and
 * recorded by auditd before runnerd gets it; when either fails it is
 * revoked again and the call refused.  Leases nobody revoked (runnerd
 * went away, Vault was down, the previous brokerd crashed) are revoked
 * by a periodic sweep, at the latest when their TTL runs out.
 *
 * Calls that wait for Vault wait side by side: each is a struct pending
 * that the Vault request calls back, and its answer goes out when it is
 * done, under the call's reqid, so answers may overtake each other.
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

/*
 * A call waiting for Vault: whom to answer, on which connection.  A
 * CRED_ISSUE holds its lease's room (l), filled once minted, and a
 * refusal (code, why) to send once an undone lease is revoked again.
 */
struct pending {
	uint32_t		 conn;		/* conn_find() */
	uint64_t		 reqid;
	struct cred_target	 t;
	struct lease		*l;
	int			 code;
	char			 why[256];
};

struct lease {
	TAILQ_ENTRY(lease)	 entry;
	char			 id[LEASE_ID_MAX];
	char			 scope[NAME_MAX_LEN];
	uint64_t		 reqid;
	int64_t			 expires;	/* ev_now_ms() */
	int			 doomed;	/* revoke at the next sweep */
	const char		*ending;	/* revocation under way: why */
	struct pending		*end;		/* who waits for it */
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

static void
lease_fill(struct lease *l, const char *id, const char *scope,
    uint64_t reqid, long ttl)
{
	strlcpy(l->id, id, sizeof(l->id));
	strlcpy(l->scope, scope, sizeof(l->scope));
	l->reqid = reqid;
	l->expires = ev_now_ms() + (int64_t)ttl * 1000;
	TAILQ_INSERT_TAIL(&leases, l, entry);
}

/* Left outstanding by the previous run: revoked at the first sweep. */
static void
adopt_leftover(const char *id, void *arg)
{
	struct lease *l;

	(void)arg;
	log_info("lease %s was left outstanding, revoking it", id);
	if ((l = calloc(1, sizeof(*l))) == NULL)
		fatal("lease table");
	lease_fill(l, id, "", 0, 0);
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

static int
refuse(struct conn *c, uint64_t reqid, int code, const char *why)
{
	char rid[REQID_STR_LEN];

	reqid_format(reqid, rid);
	log_warnx("%s: refused: %s", rid, why);
	return c != NULL ? conn_error(c, reqid, code, "%s", why) : 0;
}

static struct pending *
pending_new(const struct conn *c, uint64_t reqid)
{
	struct pending *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->conn = c->id;
	p->reqid = reqid;
	return p;
}

/*
 * The answer to a pending call, outside its connection's dispatch: a
 * connection we cannot write to is dropped here.  runnerd may have
 * left meanwhile; then nobody hears it.
 */
static void
pending_answer(struct pending *p, uint32_t type, int fd, json_t *j)
{
	struct conn *c = conn_find(p->conn);

	if (c == NULL) {
		log_warnx("peer %u went away before its answer", p->conn);
		json_decref(j);
		if (fd != -1)
			close(fd);
	} else if (conn_send_json(c, type, p->reqid, fd, j) == -1)
		conn_drop(c);
	free(p);
}

static void
pending_refuse(struct pending *p, int code, const char *why)
{
	struct conn *c = conn_find(p->conn);

	if (refuse(c, p->reqid, code, why) == -1)
		conn_drop(c);
	free(p);
}

/* A revocation's failure; an issue undone keeps its own refusal. */
static void
pending_unavail(struct pending *p, const char *why)
{
	if (p->code != 0)
		pending_refuse(p, p->code, p->why);
	else
		pending_refuse(p, ERR_UNAVAIL, why);
}

/*
 * Vault has answered the revocation of l: on success it is recorded
 * and forgotten, else doomed for the next sweep; whoever waits hears.
 */
static void
lease_revoked(void *arg, const char *err)
{
	struct lease *l = arg;
	struct pending *p = l->end;
	int audited;

	l->end = NULL;
	if (err != NULL) {
		log_warnx("lease %s: revoke failed: %s", l->id, err);
		l->doomed = 1;
		l->ending = NULL;
		if (p != NULL)
			pending_unavail(p, err);
		return;
	}
	audited = audit_revoked(l, p != NULL ? p->reqid : l->reqid,
	    l->ending) == 0;
	TAILQ_REMOVE(&leases, l, entry);
	(void)journal_remove(l->id, TAILQ_EMPTY(&leases));
	log_info("lease %s revoked (%s)", l->id, l->ending);
	if (p != NULL && p->code == 0 && audited)
		pending_answer(p, MSG_CRED_REVOKED, -1, json_pack("{s:s}",
		    "lease_id", l->id));
	else if (p != NULL)
		pending_unavail(p, "lease revoked, but audit unavailable");
	free(l);
}

/*
 * Starts the revocation of l for reason; p, if any, is answered when
 * it ends.  -1 with err when it could not start: l is doomed, p is
 * still the caller's.
 */
static int
lease_end(struct lease *l, struct pending *p, const char *reason, char *err,
    size_t errlen)
{
	if (vault_revoke(l->id, lease_revoked, l, err, errlen) == -1) {
		log_warnx("lease %s: revoke failed: %s", l->id, err);
		l->doomed = 1;
		return -1;
	}
	l->ending = reason;
	l->end = p;
	return 0;
}

void
broker_sweep(void *arg)
{
	struct lease *l;
	char err[256];
	int64_t now = ev_now_ms();

	(void)arg;
	/* Nothing is freed before Vault answers, later, in the loop. */
	TAILQ_FOREACH(l, &leases, entry)
		if (l->ending == NULL && (l->doomed || now >= l->expires))
			(void)lease_end(l, NULL, l->doomed ?
			    "left outstanding" : "expired", err, sizeof(err));
	ev_timer(SWEEP_MS, broker_sweep, NULL);
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

/* A lease we minted but cannot hand over goes back before p hears why. */
static void
undo(struct lease *l, struct pending *p, int code, const char *why)
{
	char err[256];

	p->code = code;
	strlcpy(p->why, why, sizeof(p->why));
	if (lease_end(l, p, "not handed over", err, sizeof(err)) == -1)
		pending_unavail(p, err);
}

/* Vault's answer to a CRED_ISSUE: hand the lease over, or undo it. */
static void
issue_minted(void *arg, const struct vault_lease *vl, const char *err)
{
	struct pending *p = arg;
	const struct cred_target *t = &p->t;
	struct secret file = { NULL, 0 };
	struct lease *l = p->l;
	int fd;

	p->l = NULL;
	if (vl == NULL) {
		free(l);
		pending_refuse(p, ERR_UNAVAIL, err);
		return;
	}
	lease_fill(l, vl->lease_id, t->scope->name, p->reqid, vl->ttl);
	if (journal_add(l->id) == -1) {
		undo(l, p, ERR_INTERNAL, "lease journal failed");
		return;
	}
	if (conn_find(p->conn) == NULL) {
		undo(l, p, ERR_UNAVAIL, "runnerd went away");
		return;
	}
	if (cred_file(t->scope, t->ns, l->id, vl->ttl, vl->data,
	    kube_ca[t->scope - conf->brokerd.scopes.v], &file) == -1) {
		undo(l, p, ERR_UNAVAIL, "vault: the credential lacks the "
		    "engine's fields");
		return;
	}
	fd = cred_memfd(&file);
	secret_clear(&file);
	if (fd == -1) {
		undo(l, p, ERR_INTERNAL, "memfd failed");
		return;
	}
	if (audit_emit("credential.issued", p->reqid, issued_fields(t, l->id,
	    vl->ttl)) == -1) {
		close(fd);
		undo(l, p, ERR_UNAVAIL, "audit unavailable");
		return;
	}
	log_info("lease %s issued: scope %s, namespace %s, ttl %lds", l->id,
	    t->scope->name, t->ns, vl->ttl);
	pending_answer(p, MSG_CRED_ISSUED, fd, issued_fields(t, l->id,
	    vl->ttl));
}

static int
issue_lease(struct conn *c, uint64_t reqid, const struct cred_target *t)
{
	struct pending *p;
	char err[256];

	if (!vault_configured())
		return refuse(c, reqid, ERR_UNAVAIL, "no Vault configured");
	if (strcmp(t->scope->engine, "aws") == 0 && t->scope->role[0] == '\0')
		return refuse(c, reqid, ERR_UNAVAIL, "the aws secrets engine "
		    "is not configured: unavailable");
	/* The lease's room first: nothing can fail once it is minted. */
	if ((p = pending_new(c, reqid)) == NULL ||
	    (p->l = calloc(1, sizeof(*p->l))) == NULL) {
		free(p);
		return refuse(c, reqid, ERR_INTERNAL, "out of memory");
	}
	p->t = *t;
	if (vault_issue(t->scope, t->ns, issue_minted, p, err, sizeof(err)) ==
	    -1) {
		free(p->l);
		free(p);
		return refuse(c, reqid, ERR_UNAVAIL, err);
	}
	return 0;
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
	struct pending *p;
	struct lease *l;
	char id[LEASE_ID_MAX], err[256];
	const char *lease;

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
	if (l->ending != NULL) {
		snprintf(err, sizeof(err), "lease %.128s is being revoked "
		    "already", id);
		return refuse(c, m->hdr.reqid, ERR_UNAVAIL, err);
	}
	if ((p = pending_new(c, m->hdr.reqid)) == NULL)
		return refuse(c, m->hdr.reqid, ERR_INTERNAL, "out of memory");
	if (lease_end(l, p, "requested", err, sizeof(err)) == -1) {
		free(p);
		return refuse(c, m->hdr.reqid, ERR_UNAVAIL, err);
	}
	return 0;
}

/* broker.sock: what runnerd may ask. */
const struct msg_rule brokerd_runnerd_rules[] = {
	{ MSG_CRED_ISSUE, PAYLOAD_JSON, 0, 0, NULL, broker_issue },
	{ MSG_CRED_REVOKE, PAYLOAD_JSON, 0, 0, NULL, broker_revoke },
	{ 0, 0, 0, 0, NULL, NULL }
};
