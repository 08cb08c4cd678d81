/* SPDX-License-Identifier: ISC */
/*
 * One tool call, in the order the audit log shows it:
 *   tool.request -> [a wait for a free sandbox] -> decision (approvald)
 *   -> credential (brokerd) -> sandbox.started -> sandbox.completed ->
 *   revoke -> tool.result
 * Each step is a request to a peer (peer.c) whose answer moves the call
 * to its next state; nothing here waits, so a stalled peer delays only
 * the calls it holds.  Every step that cannot be recorded stops the
 * call (fail closed); the credential is revoked whatever the sandbox
 * did.  A tool failure is an isError result, never a protocol error,
 * and every result names its request id.
 */
#include <sys/queue.h>
#include <sys/random.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cjson.h"
#include "event.h"
#include "frame.h"
#include "log.h"
#include "runnerd.h"
#include "tools.h"

static TAILQ_HEAD(, call)	 calls = TAILQ_HEAD_INITIALIZER(calls);
static size_t			 nadmitted;	/* past the wait: DECIDING on */

/*
 * Calls beyond runnerd.max_calls wait for a sandbox, at most
 * runnerd.queue_max of them, each at most runnerd.queue_wait.  They wait
 * before approvald's decision: a waiting call is recorded (tool.request)
 * and checked against its schema, no more.  It has spent no approval and
 * holds no credential and no sandbox, so a refusal after the wait loses
 * nothing, and the policy that decides it is the one of when it runs.
 * Clients take turns: a client's flood delays another client's call by
 * one call per waiting client, not by the whole flood.  And they share
 * the queue: each client may hold queue_max / (clients waiting) of it,
 * so that a flood cannot fill it against a client that comes later.
 */
struct line {
	TAILQ_ENTRY(line)	 entry;
	uint32_t		 conn;
	uid_t			 uid;		/* the client's, SO_PEERCRED */
	TAILQ_HEAD(calls_head, call) calls;	/* oldest first */
	size_t			 n;
};

/* The clients with waiting calls, the next to be served first. */
static TAILQ_HEAD(, line)	 ring = TAILQ_HEAD_INITIALIZER(ring);
static size_t			 nwaiting;
static uint64_t			 drain_timer;

static void	drain(void *);
static void	decide(struct call *);
static void	credential(struct call *);
static void	shape(struct call *);
static void	tf_approval_reply(void *, json_t *, int, const char *);

struct call *
call_find(uint64_t id)
{
	struct call *k;

	TAILQ_FOREACH(k, &calls, entry)
		if (k->id == id)
			return k;
	return NULL;
}

/* Sends an encoded result to the call's client, if it is still there. */
static void
send_text(const struct call *k, const char *text)
{
	struct conn *c;

	if (text != NULL && k->conn != 0 && (c = conn_find(k->conn)) !=
	    NULL && conn_send(c, MSG_TOOL_RESULT, k->id, -1, text,
	    strlen(text)) == -1)
		log_warn("result for %016llx", (unsigned long long)k->id);
}

/* The result of a call whose end could not be recorded. */
static void
send_unrecorded(const struct call *k, const char *why)
{
	char rid[REQID_STR_LEN], *text, *out;
	json_t *res;

	reqid_format(k->id, rid);
	if (asprintf(&text, "audit log unavailable (%s): %s", why,
	    k->ran ? "the result is withheld" : "nothing was run") == -1)
		return;
	res = text_result(1, text, json_pack("{s:s, s:s, s:s}", "request_id",
	    rid, "status", "unrecorded", "reason", text));
	out = res != NULL ? json_dumps(res, JSON_COMPACT) : NULL;
	send_text(k, out);
	free(out);
	free(text);
	json_decref(res);
}

void
call_free(struct call *k)
{
	struct line *l = k->line;

	TAILQ_REMOVE(&calls, k, entry);
	if (l != NULL) {
		TAILQ_REMOVE(&l->calls, k, wentry);
		l->n--;
		if (TAILQ_EMPTY(&l->calls)) {
			TAILQ_REMOVE(&ring, l, entry);
			free(l);
		}
		nwaiting--;
	}
	if (k->timer != 0)
		ev_timer_cancel(k->timer);
	if (k->admitted) {
		nadmitted--;
		/* The next call starts from the loop, not in this one's end. */
		if (!TAILQ_EMPTY(&ring) && drain_timer == 0)
			drain_timer = ev_timer(0, drain, NULL);
	}
	if (k->req.credfd != -1)
		close(k->req.credfd);
	json_decref(k->req.argv);
	json_decref(k->req.files_in);
	json_decref(k->req.files_out);
	json_decref(k->req.egress);
	json_decref(k->req.workspace);
	free(k->tool);
	free(k->lease);
	json_decref(k->args);
	json_decref(k->decision);
	json_decref(k->outcome);
	json_decref(k->summary);
	secret_free(k->secret);
	json_decref(k->end_fields);
	free(k->end_text);
	free(k->approval_id);
	free(k->plan_digest);
	free(k);
}

static void
end_recorded(void *arg, const char *why)
{
	struct call *k = arg;

	/* Unrecorded, it stays open in the trail: the next start ends it. */
	if (why != NULL)
		send_unrecorded(k, why);
	else {
		send_text(k, k->end_text);
		trail_end(k->id);
	}
	call_free(k);
}

/* The lease is gone (or never was): the end goes to auditd. */
static void
end_record(struct call *k)
{
	json_t *fields = k->end_fields;

	k->end_fields = NULL;
	if (k->end_event == NULL) {
		json_decref(fields);
		send_unrecorded(k, k->end_why);
		call_free(k);
		return;
	}
	audit_post(k->end_event, k->id, fields, end_recorded, k);
}

static void
revoked(void *arg, json_t *reply, int fd, const char *why)
{
	struct call *k = arg;
	json_t *shown;

	(void)fd;
	json_decref(reply);
	if (why != NULL) {
		log_warnx("%s: revoke %s: %s", k->tool, k->lease, why);
		k->revoke_failed = 1;
	}
	shown = json_pack("{s:s, s:s?}", "lease_id", k->lease, "reason", why);
	call_log(k->id, why != NULL ? "credential.revoke_failed" :
	    "credential.revoked", shown);
	json_decref(shown);
	free(k->lease);
	k->lease = NULL;
	if (k->state == CALL_ENDING)
		end_record(k);
	else
		shape(k);
}

/* Always tried once; a failure is logged and shows in the result. */
static void
lease_revoke(struct call *k)
{
	peer_ask(PEER_BROKERD, MSG_CRED_REVOKE, k->id, json_pack("{s:s}",
	    "lease_id", k->lease), MSG_CRED_REVOKED, revoked, k);
}

/*
 * The one way a call ends: event (with fields, taken) is recorded,
 * then res (taken) goes to the client.  The credential is revoked
 * first.  event NULL: the audit log failed before, nothing more is
 * recorded and the client learns why (why).
 */
static void
call_end(struct call *k, const char *event, json_t *fields, json_t *res,
    const char *why)
{
	const char *delivered = "whole";

	k->state = CALL_ENDING;
	progress_stop(k);
	k->end_event = event;
	strlcpy(k->end_why, why != NULL ? why : "", sizeof(k->end_why));
	if (fields == NULL)
		fields = json_object();
	if (res != NULL) {
		result_stamp(k, res);
		k->end_text = result_encode(res, &delivered);
		json_object_set(fields, "isError", json_object_get(res,
		    "isError"));
		json_object_set_new(fields, "delivered", json_string(
		    delivered));
	}
	k->end_fields = fields;
	json_decref(res);
	if (event != NULL && k->end_text == NULL) {
		k->end_event = NULL;
		strlcpy(k->end_why, "out of memory", sizeof(k->end_why));
	}
	if (k->lease != NULL)
		lease_revoke(k);
	else
		end_record(k);
}

/* Ends a call with why; event (tool.failed or tool.denied) records it. */
void
call_refuse(struct call *k, const char *event, const char *why)
{
	call_end(k, event, json_pack("{s:s}", "reason", why),
	    text_result(1, why, json_pack("{s:s, s:s}", "status",
	    strcmp(event, "tool.denied") == 0 ? "denied" : "failed",
	    "reason", why)), why);
}

/* A step's record failed: nothing more is recorded, nothing more runs. */
static void
call_unrecorded(struct call *k, const char *why)
{
	call_end(k, NULL, NULL, NULL, why);
}

/*
 * Ends a call with its result: tool.result records audit (taken) and
 * isError; without that record the result is withheld.
 */
void
call_finish(struct call *k, json_t *res, json_t *audit)
{
	if (res == NULL) {
		json_decref(audit);
		call_refuse(k, "tool.failed", "out of memory");
		return;
	}
	call_end(k, "tool.result", audit, res, NULL);
}

/* The client cancelled, or went away, before the call ran: it ends. */
static int
call_cancelled(struct call *k)
{
	if (!k->cancelled)
		return 0;
	call_refuse(k, "tool.failed", k->conn != 0 ? "cancelled before it "
	    "ran" : "its client went away before it ran");
	return 1;
}

static void
started(void *arg, const char *why)
{
	struct call *k = arg;
	struct sbx_request *req = &k->req;
	int failed;

	if (why != NULL) {
		call_unrecorded(k, why);
		return;
	}
	if (call_cancelled(k))
		return;
	k->state = CALL_RUNNING;
	k->ran = 1;
	failed = helper_run(req) == -1;
	/* start() takes the descriptor, whatever it returns. */
	req->credfd = -1;
	if (failed)
		call_refuse(k, "tool.failed", "the sandbox could not be "
		    "started");
	else
		progress_send(k, "sandbox started");
}

/* The sandbox's request is made and recorded; then it starts. */
static void
start(struct call *k)
{
	struct sbx_request *req = &k->req;

	k->state = CALL_STARTING;
	req->id = k->id;
	req->egress = json_incref(json_object_get(k->decision, "egress"));
	req->agent_code = k->rt->kind == TOOL_SHELL;
	if (k->kind == CALL_ONESHOT)
		req->argv = k->rt->argv(k->args);
	else if (k->rt->prepare(k, req) == -1)
		req->argv = NULL;
	if (req->argv == NULL) {
		call_refuse(k, "tool.failed", "the sandbox could not be "
		    "prepared");
		return;
	}
	audit_post("sandbox.started", k->id, json_pack("{s:s, s:s, s:O*}",
	    "tool", k->tool, "backend", runnerd_conf.runnerd.backend, "egress",
	    req->egress), started, k);
}

/* brokerd's answer: the secret, if any, comes as a sealed memfd. */
static void
issued(void *arg, json_t *reply, int fd, const char *why)
{
	struct call *k = arg;
	const char *engine, *lease;

	if (why != NULL) {
		call_refuse(k, "tool.failed", why);
		return;
	}
	engine = json_string_value(json_object_get(reply, "engine"));
	lease = json_string_value(json_object_get(reply, "lease_id"));
	call_log(k->id, "credential.issued", reply);
	if (lease != NULL && (k->lease = strdup(lease)) == NULL)
		fatal("lease");
	k->req.credfd = fd;
	if (fd != -1)
		k->secret = secret_load(fd);
	if (engine == NULL || (strcmp(engine, "none") != 0) != (fd != -1)) {
		json_decref(reply);
		call_refuse(k, "tool.failed", "brokerd's credential does not "
		    "match its engine");
		return;
	}
	json_decref(reply);
	if (!call_cancelled(k))
		start(k);
}

/* A session never gets a credential: brokerd is not asked. */
static void
credential(struct call *k)
{
	if (call_cancelled(k))
		return;
	if (k->kind == CALL_SESSION) {
		k->state = CALL_RUNNING;
		k->ran = 1;
		session_call(k);
		return;
	}
	k->state = CALL_CREDENTIALING;
	peer_ask(PEER_BROKERD, MSG_CRED_ISSUE, k->id, json_pack("{s:s, s:O}",
	    "tool", k->tool, "arguments", k->args), MSG_CRED_ISSUED, issued,
	    k);
}

/*
 * run_shell whose session the backend could not open because it has
 * none (session.c): it runs one-shot instead, credential and all.
 */
void
call_oneshot(struct call *k)
{
	k->kind = CALL_ONESHOT;
	credential(k);
}

/* terraform_apply's approval spent: approvald names the plan it binds. */
static void
tf_spent_reply(void *arg, json_t *reply, int fd, const char *why)
{
	struct call *k = arg;
	char err[256];

	(void)fd;
	if (why != NULL)
		call_refuse(k, "tool.denied", why);
	else if (tf_spent(k, reply, err, sizeof(err)) == -1)
		call_refuse(k, "tool.denied", err);
	else {
		k->approved = 1;
		credential(k);
	}
	json_decref(reply);
}

static void
spent(void *arg, json_t *reply, int fd, const char *why)
{
	struct call *k = arg;

	(void)fd;
	json_decref(reply);
	if (why != NULL) {
		call_refuse(k, "tool.denied", why);
		return;
	}
	json_object_del(k->args, "approval_id");
	k->approved = 1;
	credential(k);
}

static void
approval_created(void *arg, json_t *reply, int fd, const char *why)
{
	struct call *k = arg;
	const char *aid, *expires;
	char *text;

	(void)fd;
	if (why != NULL) {
		call_refuse(k, "tool.failed", why);
		return;
	}
	aid = json_string_value(json_object_get(reply, "approval_id"));
	expires = json_string_value(json_object_get(reply, "expires_at"));
	if (aid == NULL || asprintf(&text, "Not run: the policy asks a "
	    "person to approve this call.\nAn operator reviews it and "
	    "approves it out of band:\n  approvalctl show %s\n  approvalctl "
	    "approve %s\nThen make the same call again with approval_id "
	    "\"%s\"; the approval expires at %s and works once.\n", aid, aid,
	    aid, expires != NULL ? expires : "?") == -1) {
		json_decref(reply);
		call_refuse(k, "tool.failed", "approvald gave no approval id");
		return;
	}
	await_offer(k->conn, aid);
	call_end(k, "tool.result", json_pack("{s:s, s:s}", "status",
	    "pending_approval", "approval_id", aid), text_result(1, text,
	    json_pack("{s:s, s:s, s:s, s:s?}", "status", "pending_approval",
	    "reason", "the policy asks a person to approve this call",
	    "approval_id", aid, "expires_at", expires)), NULL);
	free(text);
	json_decref(reply);
}

/*
 * The MCP client of the call, for approvald, which lets only that
 * client spend the approval it asks for: the uid of its runner.sock
 * connection (SO_PEERCRED) and an id.  mcpd sends a key of its own
 * with each call ("client_key", 128 random bits), which outlives a
 * restart of runnerd, so a task's wait resumed on a new connection
 * (await.c) can spend the approval its client asked for before; the
 * id is a digest of it, so approvald and the operators never hold the
 * key.  A peer that sends none gets an id of the connection that no
 * other connection of this run of runnerd, or of another run, has.
 */

/* 1 when the call carries no client_key or a well-formed one. */
int
call_client_key(const json_t *call)
{
	const json_t *v = json_object_get(call, "client_key");
	const char *key = json_string_value(v);
	size_t i;

	if (v == NULL)
		return 1;
	if (key == NULL || strlen(key) != CLIENT_KEY_HEX)
		return 0;
	for (i = 0; i < CLIENT_KEY_HEX; i++)
		if (!((key[i] >= '0' && key[i] <= '9') ||
		    (key[i] >= 'a' && key[i] <= 'f')))
			return 0;
	return 1;
}

static void
client_id(const struct conn *c, const json_t *call, char *id, size_t len)
{
	static char run[17];
	char digest[SHA256_HEX_LEN + 1];
	const char *key;
	unsigned char r[8];

	if ((key = json_string_value(json_object_get(call,
	    "client_key"))) != NULL) {
		sha256_hex(key, strlen(key), digest);
		snprintf(id, len, "key-%.32s", digest);
		return;
	}
	if (run[0] == '\0') {
		if (getrandom(r, sizeof(r), 0) != sizeof(r))
			fatal("getrandom");
		hex_encode(r, sizeof(r), run);
	}
	snprintf(id, len, "%s.%u", run, (unsigned)c->id);
}

/* j (taken) with the call's client. */
static json_t *
with_client(const struct call *k, json_t *j)
{
	if (j != NULL)
		json_object_set_new(j, "client", json_pack("{s:I, s:s}", "uid",
		    (json_int_t)k->uid, "id", k->client));
	return j;
}

/*
 * A person in the loop, for every tool but terraform_apply (whose
 * approval binds a plan: tool_terraform.c).  Without approval_id the call
 * stops at a pending approval bound to its tool and arguments; with the
 * approval a person granted, approvald spends it and the call goes on,
 * without the approval_id.
 */
static void
approval_gate(struct call *k)
{
	const char *aid;

	k->state = CALL_APPROVING;
	if ((aid = json_string_value(json_object_get(k->args,
	    "approval_id"))) != NULL)
		peer_ask(PEER_APPROVALD, MSG_APPROVAL_SPEND, k->id,
		    with_client(k, json_pack("{s:s, s:s, s:O}", "approval_id",
		    aid, "tool", k->tool, "arguments", k->args)),
		    MSG_APPROVAL_SPENT, spent, k);
	else
		peer_ask(PEER_APPROVALD, MSG_APPROVAL_REQUEST, k->id,
		    with_client(k, json_pack("{s:s, s:O, s:n}", "tool", k->tool,
		    "arguments", k->args, "plan_digest")), MSG_APPROVAL_CREATED,
		    approval_created, k);
}

/*
 * What the call is, once approvald has allowed it.  With sessions off
 * (sessions_max 0, or a backend without them) run_shell without a
 * session runs one-shot, as it did before them.
 */
static int
call_kind(struct call *k, char *why, size_t whylen)
{
	switch (k->rt->kind) {
	case TOOL_ONESHOT:
		k->kind = CALL_ONESHOT;
		break;
	case TOOL_TERRAFORM:
		return tf_kind(k, why, whylen);
	case TOOL_SHELL:
		k->kind = sessions_on() ||
		    json_object_get(k->args, "session_id") != NULL ?
		    CALL_SESSION : CALL_ONESHOT;
		break;
	case TOOL_SESSION:
	case TOOL_SESSION_END:
		k->kind = CALL_SESSION;
		break;
	}
	return 0;
}

static void
decision_recorded(void *arg, const char *why)
{
	struct call *k = arg;
	const char *decision, *reason;
	json_t *egress;
	char err[256];

	if (why != NULL) {
		call_unrecorded(k, why);
		return;
	}
	if (call_cancelled(k))
		return;
	decision = json_string_value(json_object_get(k->decision,
	    "decision"));
	reason = json_string_value(json_object_get(k->decision, "reason"));
	if (decision == NULL || (strcmp(decision, "allow") != 0 &&
	    strcmp(decision, "approval_required") != 0)) {
		snprintf(err, sizeof(err), "denied by policy: %s",
		    reason != NULL ? reason : "no reason given");
		call_refuse(k, "tool.denied", err);
		return;
	}
	egress = json_object_get(k->decision, "egress");
	if (egress != NULL && !json_is_array(egress)) {
		call_refuse(k, "tool.failed", "bad egress list");
		return;
	}
	if (call_kind(k, err, sizeof(err)) == -1) {
		call_refuse(k, "tool.failed", err);
		return;
	}
	/* The approval is spent before anything runs: it is single-use. */
	if (k->kind == CALL_TF_APPLY) {
		k->state = CALL_APPROVING;
		peer_ask(PEER_APPROVALD, MSG_APPROVAL_SPEND, k->id,
		    with_client(k, tf_spend_request(k)), MSG_APPROVAL_SPENT,
		    tf_spent_reply, k);
	} else if (strcmp(decision, "approval_required") == 0 &&
	    k->kind != CALL_TF_REQUEST)
		approval_gate(k);
	else
		credential(k);
}

/*
 * The call's decision (k->decision) is recorded before anything else
 * happens; a reused one (age_ms >= 0) says so and how old it is.
 */
static void
decision_record(struct call *k, int64_t age_ms)
{
	json_t *fields;

	fields = json_pack("{s:s, s:O*, s:O*, s:O*}", "tool", k->tool,
	    "decision", json_object_get(k->decision, "decision"), "tier",
	    json_object_get(k->decision, "tier"), "reason",
	    json_object_get(k->decision, "reason"));
	if (fields != NULL && age_ms >= 0)
		json_object_update_new(fields, json_pack("{s:b, s:I}",
		    "reused", 1, "age_ms", (json_int_t)age_ms));
	audit_post("guardrail.decision", k->id, fields, decision_recorded, k);
}

/* approvald's answer. */
static void
decided(void *arg, json_t *reply, int fd, const char *why)
{
	struct call *k = arg;

	(void)fd;
	if (why != NULL) {
		call_refuse(k, "tool.failed", why);
		return;
	}
	k->decision = reply;
	deccache_store(k->tool, reply);
	decision_record(k, -1);
}

/* approvald decides, unless it let runnerd reuse its last decision. */
static void
decide(struct call *k)
{
	int64_t age;

	k->state = CALL_DECIDING;
	k->admitted = 1;
	nadmitted++;
	if (call_cancelled(k))
		return;
	/* An approval is spent by approvald: such a call always goes there. */
	if (json_object_get(k->args, "approval_id") == NULL &&
	    (k->decision = deccache_lookup(k->tool, &age)) != NULL) {
		decision_record(k, age);
		return;
	}
	peer_ask(PEER_APPROVALD, MSG_DECIDE, k->id, json_pack("{s:s, s:O}",
	    "tool", k->tool, "arguments", k->args), MSG_DECISION, decided, k);
}

static struct line *
line_find(uint32_t conn)
{
	struct line *l;

	TAILQ_FOREACH(l, &ring, entry)
		if (l->conn == conn)
			return l;
	return NULL;
}

/* Takes k out of its line; a client leaves the ring with its last call. */
static void
line_leave(struct call *k)
{
	struct line *l = k->line;

	ev_timer_cancel(k->timer);
	k->timer = 0;
	TAILQ_REMOVE(&l->calls, k, wentry);
	l->n--;
	if (TAILQ_EMPTY(&l->calls)) {
		TAILQ_REMOVE(&ring, l, entry);
		free(l);
	}
	k->line = NULL;
	nwaiting--;
}

static void
waited_too_long(void *arg)
{
	struct call *k = arg;
	char why[256];

	k->timer = 0;
	line_leave(k);
	snprintf(why, sizeof(why), "waited %ld s for a sandbox "
	    "(runnerd.queue_wait) while all %ld were busy "
	    "(runnerd.max_calls): try again later",
	    runnerd_conf.runnerd.queue_wait, runnerd_conf.runnerd.max_calls);
	call_refuse(k, "tool.failed", why);
}

/*
 * A client's share of the queue, were it to wait: *most gets the line
 * of the client that holds the most of it.
 */
static size_t
queue_share(const struct line *mine, struct line **most)
{
	struct line *l;
	size_t nlines = mine == NULL, share;

	*most = NULL;
	TAILQ_FOREACH(l, &ring, entry) {
		nlines++;
		if (*most == NULL || l->n > (*most)->n)
			*most = l;
	}
	share = (size_t)runnerd_conf.runnerd.queue_max / nlines;
	return share > 0 ? share : 1;
}

/*
 * Whether uid holds its share of the queue, queue_max / (users waiting),
 * however many clients it waits with; why says so.  With one user
 * waiting the clients' shares alone apply.
 */
static int
user_share_full(uid_t uid, char *why, size_t whylen)
{
	struct line *l, *m;
	size_t users = 1, mine = 0, share;

	TAILQ_FOREACH(l, &ring, entry) {
		if (l->uid == uid) {
			mine += l->n;
			continue;
		}
		/* Each other user once: at its first line in the ring. */
		for (m = TAILQ_FIRST(&ring); m != l && m->uid != l->uid;
		    m = TAILQ_NEXT(m, entry))
			;
		if (m == l)
			users++;
	}
	if (users == 1)
		return 0;
	share = (size_t)runnerd_conf.runnerd.queue_max / users;
	if (mine < (share > 0 ? share : 1))
		return 0;
	snprintf(why, whylen, "too many calls of this user (uid %u) waiting: "
	    "%zu, its share of the %ld places (runnerd.queue_max) among the "
	    "%zu users waiting, whatever its number of clients; try again "
	    "later", (unsigned)uid, mine, runnerd_conf.runnerd.queue_max,
	    users);
	return 1;
}

/*
 * Puts a call at the end of its client's line; -1 with why if there is
 * no room.  A client within its share that finds the queue full takes
 * the place of the newest call of the client past its share.
 */
static int
wait_for_sandbox(struct call *k, char *why, size_t whylen)
{
	struct line *l, *most;
	struct call *bumped;
	size_t share;

	l = line_find(k->conn);
	share = queue_share(l, &most);
	if (l != NULL && l->n >= share) {
		snprintf(why, whylen, "too many calls of this client waiting: "
		    "%zu, its share of the %ld places (runnerd.queue_max) among "
		    "the clients waiting; try again later", l->n,
		    runnerd_conf.runnerd.queue_max);
		return -1;
	}
	if (user_share_full(k->uid, why, whylen))
		return -1;
	if ((long)nwaiting >= runnerd_conf.runnerd.queue_max) {
		if (most == NULL || most->n <= share) {
			snprintf(why, whylen, "too many calls: %ld running "
			    "(runnerd.max_calls) and %ld waiting "
			    "(runnerd.queue_max); try again later",
			    runnerd_conf.runnerd.max_calls,
			    runnerd_conf.runnerd.queue_max);
			return -1;
		}
		bumped = TAILQ_LAST(&most->calls, calls_head);
		line_leave(bumped);
		call_refuse(bumped, "tool.failed", "too many calls of this "
		    "client waiting: another client's call took its place in "
		    "the queue (runnerd.queue_max is shared among the clients "
		    "waiting); try again later");
	}
	if ((l = line_find(k->conn)) == NULL) {
		if ((l = calloc(1, sizeof(*l))) == NULL)
			fatal("line");
		l->conn = k->conn;
		l->uid = k->uid;
		TAILQ_INIT(&l->calls);
		TAILQ_INSERT_TAIL(&ring, l, entry);
	}
	k->state = CALL_WAITING;
	k->line = l;
	k->timer = ev_timer(runnerd_conf.runnerd.queue_wait * 1000,
	    waited_too_long, k);
	TAILQ_INSERT_TAIL(&l->calls, k, wentry);
	l->n++;
	nwaiting++;
	return 0;
}

/* Sandboxes are free: waiting calls run, a client's at each turn. */
static void
drain(void *arg)
{
	struct line *l;
	struct call *k;

	(void)arg;
	drain_timer = 0;
	while ((long)nadmitted < runnerd_conf.runnerd.max_calls &&
	    (l = TAILQ_FIRST(&ring)) != NULL) {
		k = TAILQ_FIRST(&l->calls);
		/* Its client's next call waits for every other client's. */
		TAILQ_REMOVE(&ring, l, entry);
		TAILQ_INSERT_TAIL(&ring, l, entry);
		line_leave(k);
		decide(k);
	}
}

/*
 * Whether k's uid has runnerd.inflight_per_user calls besides k: running,
 * waiting for a sandbox or on an approval, of all its clients.  mcpd
 * bounds each client (max_inflight); this bounds what more clients give
 * one user.
 */
static int
user_inflight_full(const struct call *k, char *why, size_t whylen)
{
	const struct call *o;
	long n = 0;

	TAILQ_FOREACH(o, &calls, entry)
		if (o != k && o->uid == k->uid)
			n++;
	if (n < runnerd_conf.runnerd.inflight_per_user)
		return 0;
	snprintf(why, whylen, "uid %u has %ld calls in progress, the most "
	    "one user may have (runnerd.inflight_per_user), counting all its "
	    "clients and the calls waiting on an approval: try again when "
	    "one has finished", (unsigned)k->uid,
	    runnerd_conf.runnerd.inflight_per_user);
	return 1;
}

/* tool.request is recorded: the call is checked, then waits or runs. */
static void
requested(void *arg, const char *why)
{
	struct call *k = arg;
	char err[256];
	int idx;

	if (why != NULL) {
		call_unrecorded(k, why);
		return;
	}
	trail_begin(k->id, k->tool);
	if ((idx = tool_index(k->tool)) == -1) {
		call_refuse(k, "tool.failed", "unknown tool");
		return;
	}
	/* Never NULL: runnerd's table has every tool (runner_tools_check). */
	k->rt = runner_tool(k->tool);
	if (tool_validate(idx, k->args, err, sizeof(err)) == -1) {
		call_refuse(k, "tool.failed", err);
		return;
	}
	if (user_inflight_full(k, err, sizeof(err))) {
		call_refuse(k, "tool.failed", err);
		return;
	}
	/* Nobody overtakes a waiting call. */
	if ((long)nadmitted < runnerd_conf.runnerd.max_calls &&
	    TAILQ_EMPTY(&ring)) {
		decide(k);
		return;
	}
	if (wait_for_sandbox(k, err, sizeof(err)) == 0)
		return;
	call_refuse(k, "tool.failed", err);
}

/* call: the parsed TOOL_CALL, borrowed. */
void
call_start(struct conn *c, uint64_t reqid, json_t *call)
{
	json_t *args;
	struct call *k;
	const char *tool;

	if ((tool = json_string_value(json_object_get(call, "tool"))) ==
	    NULL || !call_client_key(call)) {
		conn_error(c, reqid, ERR_BADMSG, "bad TOOL_CALL");
		return;
	}
	/* mcpd makes the ids: a repeat is its error, and no new call. */
	if (call_find(reqid) != NULL) {
		conn_error(c, reqid, ERR_BADMSG, "request id already "
		    "in use");
		return;
	}
	args = json_object_get(call, "arguments");
	if ((k = calloc(1, sizeof(*k))) == NULL || (k->tool = strdup(tool)) ==
	    NULL)
		fatal("call");
	k->id = reqid;
	k->conn = c->id;
	k->uid = c->cred.uid;
	client_id(c, call, k->client, sizeof(k->client));
	k->args = args != NULL ? json_deep_copy(args) : json_object();
	k->progress = json_is_true(json_object_get(call, "progress"));
	k->log = json_is_true(json_object_get(call, "log"));
	k->req.credfd = -1;
	k->state = CALL_RECORDING;
	TAILQ_INSERT_TAIL(&calls, k, entry);
	audit_post("tool.request", k->id, json_pack("{s:s, s:o*}", "tool",
	    tool, "arguments", args_recorded(args)), requested, k);
}

/* The MCP result of the call's run; terraform_apply may ask approvald. */
static void
shape(struct call *k)
{
	json_t *res, *fields;

	k->state = CALL_ENDING;
	fields = json_pack("{s:O*}", "status", json_object_get(k->outcome,
	    "status"));
	if ((res = k->rt->shape(k, k->outcome)) == NULL &&
	    k->summary != NULL) {
		json_decref(fields);
		k->state = CALL_APPROVING;
		peer_ask(PEER_APPROVALD, MSG_APPROVAL_REQUEST, k->id,
		    with_client(k, tf_approval_request(k)),
		    MSG_APPROVAL_CREATED, tf_approval_reply, k);
		return;
	}
	call_finish(k, res, fields);
}

/* The pending approval for terraform_apply's plan, or why there is none. */
static void
tf_approval_reply(void *arg, json_t *reply, int fd, const char *why)
{
	struct call *k = arg;

	(void)fd;
	if (why == NULL && json_is_string(json_object_get(reply,
	    "approval_id")))
		await_offer(k->conn, json_string_value(json_object_get(reply,
		    "approval_id")));
	call_finish(k, tf_pending_result(k, reply, why), json_pack(
	    "{s:O*, s:O*}", "status", json_object_get(k->outcome, "status"),
	    "approval_id", json_object_get(reply, "approval_id")));
	json_decref(reply);
}

static void
completed(void *arg, const char *why)
{
	struct call *k = arg;

	if (why != NULL)
		call_unrecorded(k, why);
	else if (k->lease != NULL) {
		k->state = CALL_REVOKING;
		lease_revoke(k);
	} else
		shape(k);
}

/* The backend's result of a one-shot sandbox. */
void
call_done(uint64_t id, json_t *r)
{
	struct call *k;

	if ((k = call_find(id)) == NULL || k->state != CALL_RUNNING ||
	    k->kind == CALL_SESSION) {
		log_warnx("result for unknown call %016llx",
		    (unsigned long long)id);
		return;
	}
	progress_send(k, "sandbox finished");
	k->state = CALL_COMPLETING;
	/* Before anything is made of it: result, approval, record. */
	secret_redact(r, k->secret);
	k->outcome = json_incref(r);
	audit_post("sandbox.completed", id, json_pack("{s:O, s:O*, s:O*,"
	    " s:O*, s:O*, s:O*}", "status", json_object_get(r, "status"),
	    "exit_code", json_object_get(r, "exit_code"), "duration_ms",
	    json_object_get(r, "duration_ms"), "stdout_truncated",
	    json_object_get(r, "stdout_truncated"), "stderr_truncated",
	    json_object_get(r, "stderr_truncated"), "error",
	    json_object_get(r, "error")), completed, k);
}

/* What a task's cancel did (MSG_TOOL_CANCELLED), if mcpd is there. */
void
cancel_answer(uint32_t conn, uint64_t id, const char *outcome,
    const char *reason)
{
	struct conn *c;

	log_info("%016llx: cancel: %s: %s", (unsigned long long)id, outcome,
	    reason);
	if ((c = conn_find(conn)) != NULL && conn_send_json(c,
	    MSG_TOOL_CANCELLED, id, -1, json_pack("{s:s, s:s}", "outcome",
	    outcome, "reason", reason)) == -1)
		log_warn("cancel answer for %016llx", (unsigned long long)id);
}

/*
 * TOOL_CANCEL.  A task's (answer) is told what happened, decided here
 * as the call's state changes, so the answer is the truth: stopped
 * before it ran (or withdrawn, await.c), or too late.  A call that
 * spent an approval and runs is not stopped by a task's cancel: what
 * a person approved is not left half done; its result ends the task.
 */
void
call_cancel(struct conn *c, uint64_t id, int answer)
{
	const char *outcome = "stopped", *reason;
	struct call *k;

	if (await_cancel(c, id, answer))
		return;
	if ((k = call_find(id)) == NULL || k->conn != c->id) {
		if (answer)
			cancel_answer(c->id, id, "stopped", "no such call: it "
			    "had ended");
		return;
	}
	switch (k->state) {
	case CALL_WAITING:
		line_leave(k);
		reason = "cancelled while it waited for a sandbox";
		call_refuse(k, "tool.failed", reason);
		break;
	case CALL_RUNNING:
		if (answer && k->approved) {
			outcome = "running";
			reason = "too late: approved and already running; its "
			    "result follows";
		} else if (k->kind == CALL_SESSION) {
			reason = "stopped while it ran";
			session_cancel(k);
		} else {
			reason = "stopped while it ran";
			helper_kill(id);
		}
		break;
	default:
		if (k->ran) {
			outcome = "running";
			reason = "too late: it has run; its result follows";
			break;
		}
		/* Its next step ends it. */
		k->cancelled = 1;
		reason = k->approved ? "cancelled before it ran; its approval "
		    "was spent" : "cancelled before it ran";
		break;
	}
	if (answer)
		cancel_answer(c->id, id, outcome, reason);
}

/* mcpd went away: its calls end, nobody waits for their results. */
void
call_conn_closed(struct conn *c)
{
	struct call *k, *next;

	TAILQ_FOREACH_SAFE(k, &calls, entry, next) {
		if (k->conn != c->id)
			continue;
		k->conn = 0;
		k->cancelled = 1;
		if (k->state == CALL_WAITING) {
			line_leave(k);
			call_refuse(k, "tool.failed", "its client went away "
			    "while it waited for a sandbox");
		} else if (k->state == CALL_RUNNING &&
		    k->kind != CALL_SESSION)
			helper_kill(k->id);
	}
	session_conn_closed(c->id);
	await_conn_closed(c);
}

void
call_swept(json_t *j)
{
	json_t *v;
	uint64_t id;
	size_t i;

	json_array_foreach(json_object_get(j, "sandboxes"), i, v)
		if (reqid_parse(json_string_value(v), &id) == 0)
			audit_post("sandbox.swept", id, json_pack("{s:s}",
			    "backend", runnerd_conf.runnerd.backend), NULL, NULL);
	trail_restart(json_object_get(j, "journal"));
}
