/*
 * One tool call, in the order the audit log shows it:
 *   tool.request -> [a wait for a free sandbox] -> decision (approvald)
 *   -> credential (brokerd) -> sandbox.started -> sandbox.completed ->
 *   revoke -> tool.result
 * Every step that cannot be recorded stops the call (fail closed); the
 * credential is revoked whatever the sandbox did.  A tool failure is an
 * isError result, never a protocol error.
 */
#include <sys/queue.h>

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
#include "sock.h"
#include "tools.h"

#define PEER_TIMEOUT_MS	10000

/* Set by main(); here so that unit tests can link this file without it. */
struct as_config		 runnerd_conf;
const struct backend		*runnerd_backend;

static TAILQ_HEAD(, call)	 calls = TAILQ_HEAD_INITIALIZER(calls);
static size_t			 ncalls;

/*
 * Calls beyond runnerd.max_calls wait for a sandbox, at most
 * runnerd.queue_max of them, each at most runnerd.queue_wait.  They wait
 * before approvald's decision: a waiting call is recorded (tool.request)
 * and checked against its schema, no more.  It has spent no approval and
 * holds no credential and no sandbox, so a refusal after the wait loses
 * nothing, and the policy that decides it is the one of when it runs.
 * Clients take turns: a client's flood delays another client's call by
 * one call per waiting client, not by the whole flood.
 */
struct waiter {
	TAILQ_ENTRY(waiter)	 entry;
	struct line		*line;
	uint64_t		 id;
	json_t			*call;		/* MSG_TOOL_CALL's */
	uint64_t		 timer;		/* runnerd.queue_wait */
};

/* One client's waiting calls, oldest first. */
struct line {
	TAILQ_ENTRY(line)	 entry;
	uint32_t		 conn;
	uid_t			 uid;
	TAILQ_HEAD(, waiter)	 waiters;
};

/* The clients with waiting calls, the next to be served first. */
static TAILQ_HEAD(, line)	 ring = TAILQ_HEAD_INITIALIZER(ring);
static size_t			 nwaiting;
static uint64_t			 drain_timer;

static void	drain(void *);

static struct call *
call_find(uint64_t id)
{
	struct call *k;

	TAILQ_FOREACH(k, &calls, entry)
		if (k->id == id)
			return k;
	return NULL;
}

/*
 * A result travels in one frame, and JSON escapes can make output six
 * times its size.  A result whose encoding would not fit, with room
 * for mcpd's envelope, first loses the copies of the output in its
 * structuredContent (the content text keeps them), then becomes a
 * short error in place.  The encoding, and in *delivered which of
 * the three went out, for the audit record.
 */
#define RESULT_MAX	(MSG_MAX_PAYLOAD - 64 * 1024)

static char *
result_encode(json_t *res, const char **delivered)
{
	json_t *sc, *short_res;
	char *text;

	*delivered = "whole";
	if ((text = json_dumps(res, JSON_COMPACT)) == NULL ||
	    strlen(text) <= RESULT_MAX)
		return text;
	free(text);
	if ((sc = json_object_get(res, "structuredContent")) != NULL) {
		*delivered = "truncated";
		json_object_del(sc, "stdout");
		json_object_del(sc, "stderr");
		json_object_set_new(sc, "truncated", json_true());
		if ((text = json_dumps(res, JSON_COMPACT)) == NULL ||
		    strlen(text) <= RESULT_MAX)
			return text;
		free(text);
	}
	*delivered = "replaced";
	short_res = text_result(1, "the result was too large to deliver "
	    "(over 16 MiB as JSON); write the output to a file and read it "
	    "in parts", NULL);
	if (short_res == NULL || json_object_clear(res) == -1 ||
	    json_object_update(res, short_res) == -1) {
		json_decref(short_res);
		return NULL;
	}
	json_decref(short_res);
	return json_dumps(res, JSON_COMPACT);
}

/* Sends an encoded result and frees it. */
static void
send_text(uint32_t connid, uint64_t id, char *text)
{
	struct conn *c;

	if (text != NULL && connid != 0 && (c = conn_find(connid)) != NULL &&
	    conn_send(c, MSG_TOOL_RESULT, id, -1, text, strlen(text)) == -1)
		log_warn("result for %016llx", (unsigned long long)id);
	free(text);
}

static void
send_result(uint32_t connid, uint64_t id, json_t *result)
{
	const char *delivered;

	if (result != NULL)
		send_text(connid, id, result_encode(result, &delivered));
	json_decref(result);
}

json_t *
text_result(int is_error, const char *text, json_t *structured)
{
	json_t *r;

	r = json_pack("{s:b, s:[{s:s, s:s}]}", "isError", is_error,
	    "content", "type", "text", "text", text);
	if (r != NULL && structured != NULL)
		json_object_set_new(r, "structuredContent", structured);
	return r;
}

/* Ends a call that never reached a sandbox; event records why. */
static void
refuse(uint32_t connid, uint64_t id, const char *event, const char *why)
{
	char text[512];

	if (event != NULL && audit_emit(event, id, json_pack("{s:s}",
	    "reason", why)) == -1)
		why = "audit log unavailable";
	else if (event != NULL)
		trail_end(id);
	snprintf(text, sizeof(text), "%s", why);
	send_result(connid, id, text_result(1, text, NULL));
}

/*
 * One request to approvald or brokerd over a fresh connection: 0 and
 * the reply's JSON (and its descriptor, if fdp), or -1 and why.
 */
int
peer_request(const char *sockname, uint32_t type, uint64_t id, json_t *body,
    uint32_t want, json_t **reply, int *fdp, char *why, size_t whylen)
{
	struct channel ch;
	struct msg_error e;
	struct msg m;
	char path[PATH_MAX], *text;
	int fd, r = -1;

	*reply = NULL;
	if (fdp != NULL)
		*fdp = -1;
	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (text == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (config_socket_path(&runnerd_conf, sockname, path,
	    sizeof(path)) == -1 || (fd = sock_connect(path)) == -1) {
		snprintf(why, whylen, "%s: %s", sockname, strerror(errno));
		free(text);
		return -1;
	}
	channel_init(&ch, fd);
	if (channel_send_sync(&ch, type, id, -1, text, strlen(text),
	    PEER_TIMEOUT_MS) == -1 ||
	    channel_recv_sync(&ch, &m, PEER_TIMEOUT_MS) == -1)
		snprintf(why, whylen, "%s: %s", sockname, strerror(errno));
	else if (m.hdr.type == MSG_ERROR && m.len == sizeof(e)) {
		memcpy(&e, m.data, sizeof(e));
		e.text[sizeof(e.text) - 1] = '\0';
		snprintf(why, whylen, "%s", e.text);
	} else if (m.hdr.type != want || m.hdr.reqid != id ||
	    (*reply = cjson_parse(m.data, m.len, NULL, 0)) == NULL ||
	    !json_is_object(*reply))
		snprintf(why, whylen, "%s: unexpected %s", sockname,
		    msg_type_name(m.hdr.type));
	else {
		if (fdp != NULL) {
			*fdp = m.fd;
			m.fd = -1;
		}
		r = 0;
	}
	if (r == -1) {
		json_decref(*reply);
		*reply = NULL;
	}
	if (m.fd != -1 && r == -1)
		close(m.fd);
	free(text);
	channel_clear(&ch);
	close(fd);
	return r;
}

/* Always tried once; a failure is logged and shows in the result. */
static int
lease_revoke(struct call *k)
{
	json_t *reply;
	char why[256];
	int r;

	if (k->lease == NULL)
		return 0;
	r = peer_request("broker.sock", MSG_CRED_REVOKE, k->id,
	    json_pack("{s:s}", "lease_id", k->lease), MSG_CRED_REVOKED,
	    &reply, NULL, why, sizeof(why));
	json_decref(reply);
	if (r == -1)
		log_warnx("%s: revoke %s: %s", k->tool, k->lease, why);
	free(k->lease);
	k->lease = NULL;
	return r;
}

void
call_free(struct call *k)
{
	TAILQ_REMOVE(&calls, k, entry);
	ncalls--;
	/* The next call starts from the loop, not inside this one's end. */
	if (!TAILQ_EMPTY(&ring) && drain_timer == 0)
		drain_timer = ev_timer(0, drain, NULL);
	free(k->tool);
	free(k->lease);
	json_decref(k->args);
	json_decref(k->decision);
	free(k->approval_id);
	free(k->plan_digest);
	free(k);
}

/* Ends a call that was taken on but ran nothing; event records why. */
void
call_refuse(struct call *k, const char *event, const char *why)
{
	refuse(k->conn, k->id, event, why);
	call_free(k);
}

/*
 * Ends a call with its result: tool.result records audit (taken) and
 * isError; without that record the result is withheld.
 */
void
call_finish(struct call *k, json_t *res, json_t *audit)
{
	const char *delivered;
	char *text = NULL;

	if (res == NULL || audit == NULL ||
	    (text = result_encode(res, &delivered)) == NULL ||
	    json_object_set(audit, "isError",
	    json_object_get(res, "isError")) == -1 ||
	    json_object_set_new(audit, "delivered",
	    json_string(delivered)) == -1 ||
	    audit_emit("tool.result", k->id, json_incref(audit)) == -1) {
		free(text);
		refuse(k->conn, k->id, NULL,
		    "audit log unavailable: the result is withheld");
	} else {
		trail_end(k->id);
		send_text(k->conn, k->id, text);
	}
	json_decref(res);
	json_decref(audit);
	call_free(k);
}

/*
 * Asks approvald and records its answer.  The decision to go on with
 * (allow, or approval_required for the tools that wait for a person),
 * or NULL after the call was refused.
 */
static json_t *
decide(uint32_t connid, uint64_t id, json_t *call)
{
	json_t *reply, *egress;
	const char *decision, *reason, *tool;
	char why[256];

	tool = json_string_value(json_object_get(call, "tool"));
	if (peer_request("approval.sock", MSG_DECIDE, id, json_pack("{s:O,"
	    " s:O}", "tool", json_object_get(call, "tool"), "arguments",
	    json_object_get(call, "arguments")), MSG_DECISION, &reply, NULL,
	    why, sizeof(why)) == -1) {
		refuse(connid, id, "tool.failed", why);
		return NULL;
	}
	decision = json_string_value(json_object_get(reply, "decision"));
	reason = json_string_value(json_object_get(reply, "reason"));
	if (audit_emit("guardrail.decision", id, json_pack("{s:s, s:s?, s:O*,"
	    " s:s?}", "tool", tool, "decision", decision, "tier",
	    json_object_get(reply, "tier"), "reason", reason)) == -1) {
		refuse(connid, id, NULL, "audit log unavailable: nothing was "
		    "run");
		json_decref(reply);
		return NULL;
	}
	if (decision == NULL || (strcmp(decision, "allow") != 0 &&
	    strcmp(decision, "approval_required") != 0)) {
		snprintf(why, sizeof(why), "denied by policy: %s",
		    reason != NULL ? reason : "no reason given");
		refuse(connid, id, "tool.denied", why);
		json_decref(reply);
		return NULL;
	}
	egress = json_object_get(reply, "egress");
	if (egress != NULL && !json_is_array(egress)) {
		refuse(connid, id, "tool.failed", "bad egress list");
		json_decref(reply);
		return NULL;
	}
	return reply;
}

/*
 * A person in the loop, for every tool but terraform_apply (whose
 * approval binds a plan: terraform.c).  Without approval_id the call
 * stops at a pending approval bound to its tool and arguments; with the
 * approval a person granted, approvald spends it and the call goes on,
 * without the approval_id.  0 to go on, -1 when the call ended here.
 */
static int
approval_gate(uint32_t connid, uint64_t id, const char *tool, json_t *args)
{
	const char *aid, *expires;
	char why[256], *text;
	json_t *reply;

	if ((aid = json_string_value(json_object_get(args, "approval_id"))) !=
	    NULL) {
		if (peer_request("approval.sock", MSG_APPROVAL_SPEND, id,
		    json_pack("{s:s, s:s, s:O}", "approval_id", aid, "tool",
		    tool, "arguments", args), MSG_APPROVAL_SPENT, &reply, NULL,
		    why, sizeof(why)) == -1) {
			refuse(connid, id, "tool.denied", why);
			return -1;
		}
		json_decref(reply);
		json_object_del(args, "approval_id");
		return 0;
	}
	if (peer_request("approval.sock", MSG_APPROVAL_REQUEST, id,
	    json_pack("{s:s, s:O, s:n}", "tool", tool, "arguments", args,
	    "plan_digest"), MSG_APPROVAL_CREATED, &reply, NULL, why,
	    sizeof(why)) == -1) {
		refuse(connid, id, "tool.failed", why);
		return -1;
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
		refuse(connid, id, "tool.failed", "approvald gave no approval "
		    "id");
		return -1;
	}
	if (audit_emit("tool.result", id, json_pack("{s:b, s:s, s:s}",
	    "isError", 1, "status", "pending_approval", "approval_id",
	    aid)) == -1)
		refuse(connid, id, NULL, "audit log unavailable: nothing was "
		    "run");
	else {
		trail_end(id);
		send_result(connid, id, text_result(1, text, NULL));
	}
	free(text);
	json_decref(reply);
	return -1;
}

/* Asks brokerd; the secret, if any, comes back as a sealed memfd. */
static int
credential(uint32_t connid, struct call *k, json_t *call, int *credfd)
{
	json_t *reply;
	const char *engine, *lease;
	char why[256];

	if (peer_request("broker.sock", MSG_CRED_ISSUE, k->id,
	    json_pack("{s:O, s:O}", "tool", json_object_get(call, "tool"),
	    "arguments", json_object_get(call, "arguments")), MSG_CRED_ISSUED,
	    &reply, credfd, why, sizeof(why)) == -1) {
		refuse(connid, k->id, "tool.failed", why);
		return -1;
	}
	engine = json_string_value(json_object_get(reply, "engine"));
	lease = json_string_value(json_object_get(reply, "lease_id"));
	if (lease != NULL)
		k->lease = strdup(lease);
	if (engine == NULL || (strcmp(engine, "none") != 0) != (*credfd != -1)) {
		json_decref(reply);
		lease_revoke(k);
		if (*credfd != -1)
			close(*credfd);
		refuse(connid, k->id, "tool.failed",
		    "brokerd's credential does not match its engine");
		return -1;
	}
	json_decref(reply);
	return 0;
}

/* run_shell with sessions disabled: sh -c in a fresh sandbox. */
static json_t *
shell_argv(json_t *args)
{
	return json_pack("[s, s, O]", "/bin/sh", "-c",
	    json_object_get(args, "command"));
}

/* A call's way from approvald's decision to its sandbox. */
static void
call_run(uint32_t connid, uid_t uid, uint64_t id, json_t *call)
{
	struct sbx_request req;
	struct call *k;
	json_t *args, *decision;
	const char *tool;
	char why[256];
	int started;

	memset(&req, 0, sizeof(req));
	req.id = id;
	req.credfd = -1;
	tool = json_string_value(json_object_get(call, "tool"));
	args = json_object_get(call, "arguments");
	if ((decision = decide(connid, req.id, call)) == NULL)
		goto out;
	if (strcmp(tool, "terraform_apply") != 0 &&
	    strcmp(json_string_value(json_object_get(decision, "decision")),
	    "approval_required") == 0 &&
	    approval_gate(connid, req.id, tool, args) == -1) {
		json_decref(decision);
		goto out;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL || (k->tool = strdup(tool)) ==
	    NULL)
		fatal("call");
	k->id = req.id;
	k->conn = connid;
	k->uid = uid;
	k->args = json_incref(args);
	k->decision = decision;
	TAILQ_INSERT_TAIL(&calls, k, entry);
	ncalls++;
	/* A session never gets a credential: brokerd is not asked. */
	if (session_tool(tool, args)) {
		k->kind = CALL_SESSION;
		session_call(k);
		goto out;
	}
	if (strcmp(tool, "run_shell") == 0)
		k->kind = CALL_SHELL;
	else if (strcmp(tool, "k8s_get_pod_status") == 0)
		k->kind = CALL_K8S;
	else if (tf_kind(k, why, sizeof(why)) == -1) {
		refuse(connid, req.id, "tool.failed", why);
		call_free(k);
		goto out;
	}
	/* The approval is spent before anything runs: it is single-use. */
	if (k->kind == CALL_TF_APPLY && tf_spend(k, why, sizeof(why)) == -1) {
		refuse(connid, req.id, "tool.denied", why);
		call_free(k);
		goto out;
	}
	if (credential(connid, k, call, &req.credfd) == -1) {
		call_free(k);
		goto out;
	}
	req.egress = json_incref(json_object_get(decision, "egress"));
	if (k->kind == CALL_SHELL)
		req.argv = shell_argv(args);
	else if (k->kind == CALL_K8S)
		req.argv = k8s_argv(args);
	else if (tf_prepare(k, &req) == -1)
		req.argv = NULL;
	if (req.argv == NULL || audit_emit("sandbox.started", req.id,
	    json_pack("{s:s, s:s, s:O*}", "tool", tool, "backend",
	    runnerd_backend->name, "egress", req.egress)) == -1) {
		if (req.credfd != -1)
			close(req.credfd);
		started = -1;
	} else
		started = runnerd_backend->start(&req);
	if (started == -1) {
		lease_revoke(k);
		refuse(connid, req.id, "tool.failed",
		    "the sandbox could not be started (or recorded)");
		call_free(k);
	}
	json_decref(req.argv);
	json_decref(req.workspace);
	json_decref(req.files_out);
out:
	json_decref(req.egress);
	json_decref(call);
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

static struct waiter *
waiter_find(uint64_t id)
{
	struct line *l;
	struct waiter *w;

	TAILQ_FOREACH(l, &ring, entry)
		TAILQ_FOREACH(w, &l->waiters, entry)
			if (w->id == id)
				return w;
	return NULL;
}

/* Takes w out of its line; a client leaves the ring with its last call. */
static void
waiter_unlink(struct waiter *w)
{
	struct line *l = w->line;

	if (w->timer != 0)
		ev_timer_cancel(w->timer);
	TAILQ_REMOVE(&l->waiters, w, entry);
	if (TAILQ_EMPTY(&l->waiters)) {
		TAILQ_REMOVE(&ring, l, entry);
		free(l);
	}
	nwaiting--;
}

/* Ends a waiting call with why (to connid, 0: its client is gone). */
static void
waiter_refuse(struct waiter *w, uint32_t connid, const char *why)
{
	waiter_unlink(w);
	refuse(connid, w->id, "tool.failed", why);
	json_decref(w->call);
	free(w);
}

static void
waited_too_long(void *arg)
{
	struct waiter *w = arg;
	char why[256];

	w->timer = 0;
	snprintf(why, sizeof(why), "waited %ld s for a sandbox "
	    "(runnerd.queue_wait) while all %ld were busy "
	    "(runnerd.max_calls): try again later",
	    runnerd_conf.runnerd.queue_wait, runnerd_conf.runnerd.max_calls);
	waiter_refuse(w, w->line->conn, why);
}

/* Puts a call at the end of its client's line; -1 if there is no room. */
static int
wait_for_sandbox(struct conn *c, uint64_t id, json_t *call)
{
	struct line *l;
	struct waiter *w;

	if ((long)nwaiting >= runnerd_conf.runnerd.queue_max)
		return -1;
	if ((l = line_find(c->id)) == NULL) {
		if ((l = calloc(1, sizeof(*l))) == NULL)
			fatal("line");
		l->conn = c->id;
		l->uid = c->cred.uid;
		TAILQ_INIT(&l->waiters);
		TAILQ_INSERT_TAIL(&ring, l, entry);
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal("waiter");
	w->line = l;
	w->id = id;
	w->call = call;
	w->timer = ev_timer(runnerd_conf.runnerd.queue_wait * 1000,
	    waited_too_long, w);
	TAILQ_INSERT_TAIL(&l->waiters, w, entry);
	nwaiting++;
	return 0;
}

/* Sandboxes are free: waiting calls run, a client's at each turn. */
static void
drain(void *arg)
{
	struct line *l;
	struct waiter *w;
	uint32_t conn;
	uid_t uid;

	(void)arg;
	drain_timer = 0;
	while ((long)ncalls < runnerd_conf.runnerd.max_calls &&
	    (l = TAILQ_FIRST(&ring)) != NULL) {
		w = TAILQ_FIRST(&l->waiters);
		conn = l->conn;
		uid = l->uid;
		/* Its client's next call waits for every other client's. */
		TAILQ_REMOVE(&ring, l, entry);
		TAILQ_INSERT_TAIL(&ring, l, entry);
		waiter_unlink(w);
		call_run(conn, uid, w->id, w->call);
		free(w);
	}
}

void
call_start(struct conn *c, struct msg *m)
{
	json_t *call, *args;
	const char *tool;
	char why[256];
	int idx;

	if ((call = cjson_parse(m->data, m->len, why, sizeof(why))) == NULL ||
	    !json_is_object(call) ||
	    (tool = json_string_value(json_object_get(call, "tool"))) ==
	    NULL) {
		conn_error(c, m->hdr.reqid, ERR_BADMSG, "bad TOOL_CALL");
		json_decref(call);
		return;
	}
	args = json_object_get(call, "arguments");
	if (audit_emit("tool.request", m->hdr.reqid, json_pack("{s:s, s:O*}",
	    "tool", tool, "arguments", args)) == -1) {
		refuse(c->id, m->hdr.reqid, NULL,
		    "audit log unavailable: nothing was run");
		goto out;
	}
	trail_begin(m->hdr.reqid, tool);
	if (call_find(m->hdr.reqid) != NULL ||
	    waiter_find(m->hdr.reqid) != NULL) {
		refuse(c->id, m->hdr.reqid, "tool.failed",
		    "request id already in use");
		goto out;
	}
	if ((idx = tool_index(tool)) == -1) {
		refuse(c->id, m->hdr.reqid, "tool.failed", "unknown tool");
		goto out;
	}
	if (tool_validate(idx, args, why, sizeof(why)) == -1) {
		refuse(c->id, m->hdr.reqid, "tool.failed", why);
		goto out;
	}
	/* Nobody overtakes a waiting call. */
	if ((long)ncalls < runnerd_conf.runnerd.max_calls &&
	    TAILQ_EMPTY(&ring)) {
		call_run(c->id, c->cred.uid, m->hdr.reqid, call);
		return;
	}
	if (wait_for_sandbox(c, m->hdr.reqid, call) == 0)
		return;
	snprintf(why, sizeof(why), "too many calls: %ld running "
	    "(runnerd.max_calls) and %ld waiting (runnerd.queue_max); try "
	    "again later", runnerd_conf.runnerd.max_calls,
	    runnerd_conf.runnerd.queue_max);
	refuse(c->id, m->hdr.reqid, "tool.failed", why);
out:
	json_decref(call);
}

const char *
status_text(const char *status)
{
	if (strcmp(status, "deadline") == 0)
		return "killed: wall-clock deadline reached";
	if (strcmp(status, "memory_limit") == 0)
		return "killed: memory limit reached";
	if (strcmp(status, "output_limit") == 0)
		return "killed: output limit reached";
	if (strcmp(status, "killed") == 0)
		return "killed: cancelled";
	return "the sandbox failed";
}

/* What a person reads of a command's run: stdout, stderr, a note. */
char *
run_text(const char *out, const char *err, const char *note)
{
	char *text;

	if (asprintf(&text, "%s%s%s%s%s", out != NULL ? out : "",
	    err != NULL && *err ? "\n[stderr]\n" : "", err != NULL ? err : "",
	    note != NULL ? "\n[sandbox] " : "", note != NULL ? note : "") ==
	    -1)
		return NULL;
	return text;
}

/* The MCP result of a one-shot run_shell from the backend's result. */
static json_t *
shell_result(uint64_t id, json_t *r)
{
	const char *status, *out, *err;
	char rid[REQID_STR_LEN], *text;
	json_t *code, *sc;
	int is_error;

	reqid_format(id, rid);
	status = json_string_value(json_object_get(r, "status"));
	out = json_string_value(json_object_get(r, "stdout"));
	err = json_string_value(json_object_get(r, "stderr"));
	code = json_object_get(r, "exit_code");
	is_error = status == NULL || strcmp(status, "exited") != 0 ||
	    json_integer_value(code) != 0;
	sc = json_deep_copy(r);
	json_object_set_new(sc, "session_id", json_string(rid));
	if (!json_is_integer(code))
		json_object_set_new(sc, "exit_code", json_integer(-1));
	json_object_set_new(sc, "truncated", json_boolean(
	    json_is_true(json_object_get(r, "stdout_truncated")) ||
	    json_is_true(json_object_get(r, "stderr_truncated"))));
	json_object_set_new(sc, "timed_out", json_boolean(status != NULL &&
	    strcmp(status, "deadline") == 0));
	json_object_del(sc, "files");
	text = run_text(out, err, is_error && status != NULL &&
	    strcmp(status, "exited") != 0 ? status_text(status) : NULL);
	r = text_result(is_error, text != NULL ? text : "", sc);
	free(text);
	return r;
}

void
call_done(uint64_t id, json_t *r)
{
	struct call *k;
	char rid[REQID_STR_LEN], *text;
	const char *delivered;
	json_t *res, *sc;
	int revoked;

	if ((k = call_find(id)) == NULL) {
		log_warnx("result for unknown call %016llx",
		    (unsigned long long)id);
		return;
	}
	if (audit_emit("sandbox.completed", id, json_pack("{s:O, s:O*, s:O*,"
	    " s:O*, s:O*, s:O*}", "status", json_object_get(r, "status"),
	    "exit_code", json_object_get(r, "exit_code"), "duration_ms",
	    json_object_get(r, "duration_ms"), "stdout_truncated",
	    json_object_get(r, "stdout_truncated"), "stderr_truncated",
	    json_object_get(r, "stderr_truncated"), "error",
	    json_object_get(r, "error"))) == -1) {
		lease_revoke(k);
		refuse(k->conn, id, NULL,
		    "audit log unavailable: the result is withheld");
		call_free(k);
		return;
	}
	revoked = lease_revoke(k) == 0;
	res = k->kind == CALL_SHELL ? shell_result(id, r) :
	    k->kind == CALL_K8S ? k8s_result(k, r) : tf_result(k, r);
	/* The request id finds the call's trail: auditctl show --request-id. */
	reqid_format(id, rid);
	sc = json_object_get(res, "structuredContent");
	json_object_set_new(sc, "request_id", json_string(rid));
	if (!revoked)
		json_object_set_new(sc, "credential_revoke_failed",
		    json_true());
	text = NULL;
	if (res == NULL || (text = result_encode(res, &delivered)) == NULL ||
	    audit_emit("tool.result", id, json_pack("{s:O, s:O, s:s}",
	    "isError", json_object_get(res, "isError"), "status",
	    json_object_get(r, "status"), "delivered", delivered)) == -1) {
		free(text);
		refuse(k->conn, id, NULL,
		    "audit log unavailable: the result is withheld");
	} else {
		trail_end(id);
		send_text(k->conn, id, text);
	}
	json_decref(res);
	call_free(k);
}

void
call_cancel(struct conn *c, uint64_t id)
{
	struct waiter *w;
	struct call *k;

	if ((w = waiter_find(id)) != NULL && w->line->conn == c->id) {
		waiter_refuse(w, c->id, "cancelled while it waited for a "
		    "sandbox");
		return;
	}
	if ((k = call_find(id)) == NULL || k->conn != c->id)
		return;
	if (k->kind == CALL_SESSION)
		session_cancel(k);
	else
		runnerd_backend->kill(id);
}

/* mcpd went away: its calls end, nobody waits for their results. */
void
call_conn_closed(struct conn *c)
{
	struct line *l;
	struct call *k;

	while ((l = line_find(c->id)) != NULL)
		waiter_refuse(TAILQ_FIRST(&l->waiters), 0, "its client went "
		    "away while it waited for a sandbox");
	TAILQ_FOREACH(k, &calls, entry)
		if (k->conn == c->id) {
			k->conn = 0;
			if (k->kind != CALL_SESSION)
				runnerd_backend->kill(k->id);
		}
	session_conn_closed(c->id);
}

int
call_swept(json_t *j)
{
	json_t *v;
	uint64_t id;
	size_t i;

	json_array_foreach(json_object_get(j, "sandboxes"), i, v) {
		if (reqid_parse(json_string_value(v), &id) == -1)
			continue;
		if (audit_emit("sandbox.swept", id, json_pack("{s:s}",
		    "backend", runnerd_backend->name)) == -1)
			log_warnx("sweep of %s not recorded",
			    json_string_value(v));
	}
	return trail_restart(json_object_get(j, "journal"));
}
