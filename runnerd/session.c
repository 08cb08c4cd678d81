/* SPDX-License-Identifier: ISC */
/*
 * Code-execution sessions, the engine's half: the table of open
 * sessions and who owns each (the runner.sock connection that opened
 * it: one per mcpd), the caps (per uid of those connections, so that a
 * user gets no more by running more clients, and in all), reaping after
 * an idle time and a lifetime, and the translation of a session tool's
 * call into the agent's request and of its reply into the MCP result.
 * The sandbox side is the backend's (launcher/session.c for gvisor).  A session
 * has no network and no credential: brokerd is never asked.  One call
 * at a time per session, its client's or an operator's (runnerctl's put
 * and get, which reach any session: control.c).
 */
#include <sys/queue.h>
#include <sys/random.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "cjson.h"
#include "event.h"
#include "log.h"
#include "runnerd.h"

/* A session's key rides in a callback's pointer. */
_Static_assert(sizeof(uintptr_t) >= sizeof(uint64_t), "key in a pointer");

#define SESSION_PREFIX	"ses-"
#define REAP_MS		1000
#define PATH_RULE	"the path must be relative to the session workspace, " \
			"without \"..\""

/*
 * An operator's put or get, a write_file or read_file of any session.
 * It names its session by value: its record may still be on its way to
 * auditd when the session ends.
 */
struct op_call {
	uint32_t		 conn;		/* runnerctl's connection */
	uint64_t		 reqid;
	uid_t			 uid;		/* who, for the audit log */
	const char		*tool;
	json_t			*args;		/* the tool's, checked */
	char			 session_id[SESSION_ID_LEN];
	uint64_t		 origin;	/* the session's, for the log */
	int			 recording;	/* its upload's record */
	json_t			*entry;		/* a download's answer */
};

struct session {
	TAILQ_ENTRY(session)	 entry;
	uint64_t		 key;
	char			 id[SESSION_ID_LEN];
	uint32_t		 conn;		/* 0 once its client is gone */
	uid_t			 uid;		/* its client's, for the cap */
	uint64_t		 origin;	/* the call that opened it */
	int			 ready;
	struct call		*call;		/* the one in flight */
	struct op_call		*op;		/* or an operator's */
	const char		*ending;	/* closing, and why */
	int64_t			 opened, used;
	char			 container[NAME_MAX_LEN];
};

static TAILQ_HEAD(, session)	 sessions = TAILQ_HEAD_INITIALIZER(sessions);
static uint64_t			 reap_timer;
static int			 backend_has_none;	/* it said so */

/*
 * Whether run_shell without a session opens one: not with sessions_max
 * 0, nor once the backend has said it has none (a cluster without the
 * agent-sandbox CRDs), known from its answer to the first open.
 */
int
sessions_on(void)
{
	return runnerd_conf.runnerd.sessions_max > 0 && !backend_has_none;
}

static struct session *
session_by_id(const char *id)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

static struct session *
session_by_key(uint64_t key)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->key == key)
			return s;
	return NULL;
}

/*
 * Sessions of uid and of the client conn, closing ones too: each holds
 * a sandbox.  uid -1 and conn 0 match any.
 */
static size_t
session_count(uid_t uid, uint32_t conn)
{
	struct session *s;
	size_t n = 0;

	TAILQ_FOREACH(s, &sessions, entry)
		if ((uid == (uid_t)-1 || s->uid == uid) &&
		    (conn == 0 || s->conn == conn))
			n++;
	return n;
}

/* Asks the backend to end s; SBX_SESSION_ENDED finishes the job. */
static void
session_end(struct session *s, const char *why)
{
	if (s->ending != NULL)
		return;
	s->ending = why;
	helper_session_close(s->key);
}

static void
session_reap(void *arg)
{
	struct session *s;
	int64_t now = ev_now_ms(), life_at, idle_at;

	(void)arg;
	reap_timer = 0;
	TAILQ_FOREACH(s, &sessions, entry) {
		if (!s->ready || s->ending != NULL)
			continue;
		/* Of two limits passed, the one passed first is the reason. */
		life_at = s->opened + runnerd_conf.runnerd.session_lifetime *
		    1000;
		idle_at = s->used + runnerd_conf.runnerd.session_idle * 1000;
		if (s->call == NULL && s->op == NULL && now >= idle_at &&
		    idle_at <= life_at)
			session_end(s, "it was idle too long");
		else if (now >= life_at)
			session_end(s, "its lifetime is over");
	}
	if (!TAILQ_EMPTY(&sessions))
		reap_timer = ev_timer(REAP_MS, session_reap, NULL);
}

static struct session *
session_new(struct call *k)
{
	struct session *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal("session");
	do {
		if (getrandom(&s->key, sizeof(s->key), 0) != sizeof(s->key))
			fatal("getrandom");
	} while (s->key == 0 || session_by_key(s->key) != NULL);
	snprintf(s->id, sizeof(s->id), SESSION_PREFIX "%016" PRIx64, s->key);
	s->conn = k->conn;
	s->uid = k->uid;
	s->origin = k->id;
	s->call = k;
	s->opened = s->used = ev_now_ms();
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	if (reap_timer == 0)
		reap_timer = ev_timer(REAP_MS, session_reap, NULL);
	return s;
}

static void
op_free(struct op_call *op)
{
	json_decref(op->args);
	json_decref(op->entry);
	free(op);
}

static void
session_free(struct session *s)
{
	TAILQ_REMOVE(&sessions, s, entry);
	free(s);
}

/* A path the agent may resolve below /work: relative, never climbing. */
static int
path_ok(const char *p)
{
	const char *c;
	size_t n;

	if (p == NULL || *p == '\0' || *p == '/')
		return 0;
	for (c = p; *c != '\0'; c += n + (c[n] == '/')) {
		n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
	}
	return 1;
}

/* The agent's request for a tool's call (session-agent.py's OPS). */
static json_t *
agent_request(const struct runner_tool *rt, json_t *a)
{
	json_t *req, *v;
	size_t i;

	if ((req = json_pack("{s:s}", "op", rt->agent_op)) == NULL)
		return NULL;
	for (i = 0; i < AGENT_ARGS_MAX && rt->agent_args[i] != NULL; i++)
		if ((v = json_object_get(a, rt->agent_args[i])) == NULL ||
		    json_object_set(req, rt->agent_args[i], v) == -1) {
			json_decref(req);
			return NULL;
		}
	return req;
}

/* Sends a tool's request on to s's agent; -1 if it cannot. */
static int
agent_send(struct session *s, const struct runner_tool *rt, json_t *args)
{
	json_t *req;
	int r;

	s->used = ev_now_ms();
	req = agent_request(rt, args);
	r = req != NULL ? helper_session_call(s->key, req) : -1;
	json_decref(req);
	return r;
}

/* Sends the session's call on to its agent. */
static void
session_send(struct session *s)
{
	struct call *k = s->call;

	if (agent_send(s, k->rt, k->args) == -1) {
		s->call = NULL;
		call_refuse(k, "tool.failed", "cannot reach the session");
	} else
		progress_beat(k);
}

/*
 * Session id, ready for a call from conn (0: an operator, who may use
 * any session), or NULL and why.
 */
static struct session *
session_usable(const char *id, uint32_t conn, char *why, size_t whylen)
{
	struct session *s;

	if ((s = session_by_id(id)) == NULL)
		snprintf(why, whylen, "no session %s: it was closed, reaped "
		    "or never opened", id);
	else if (conn != 0 && s->conn != conn)
		snprintf(why, whylen, "session %s belongs to another client",
		    id);
	else if (s->ending != NULL)
		snprintf(why, whylen, "session %s is closing", id);
	else if (s->call != NULL || s->op != NULL || !s->ready)
		snprintf(why, whylen, "session %s is busy with another call",
		    id);
	else
		return s;
	return NULL;
}

void
session_call(struct call *k)
{
	struct session *s;
	const char *id, *path;
	char why[256];

	id = json_string_value(json_object_get(k->args, "session_id"));
	path = json_string_value(json_object_get(k->args, "path"));
	if (runnerd_conf.runnerd.sessions_max == 0) {
		call_refuse(k, "tool.failed", "sessions are disabled here "
		    "(runnerd.sessions_max is 0)");
		return;
	}
	if (json_object_get(k->args, "path") != NULL && !path_ok(path)) {
		call_refuse(k, "tool.failed", PATH_RULE);
		return;
	}
	if (id == NULL) {
		if ((long)session_count((uid_t)-1, k->conn) >=
		    runnerd_conf.runnerd.sessions_per_client)
			snprintf(why, sizeof(why), "this client has %ld open "
			    "sessions, the most one client may have "
			    "(runnerd.sessions_per_client): close one",
			    runnerd_conf.runnerd.sessions_per_client);
		else if ((long)session_count(k->uid, 0) >=
		    runnerd_conf.runnerd.sessions_per_user)
			snprintf(why, sizeof(why), "uid %u has %ld open "
			    "sessions, the most one user may have "
			    "(runnerd.sessions_per_user), counting all its "
			    "clients: close one", (unsigned)k->uid,
			    runnerd_conf.runnerd.sessions_per_user);
		else if ((long)session_count((uid_t)-1, 0) >=
		    runnerd_conf.runnerd.sessions_max)
			snprintf(why, sizeof(why), "%ld sessions are open, the "
			    "most there may be (runnerd.sessions_max): try "
			    "again later",
			    runnerd_conf.runnerd.sessions_max);
		else {
			s = session_new(k);
			if (helper_session_open(s->key, k->id,
			    s->id) == -1) {
				session_free(s);
				call_refuse(k, "tool.failed",
				    "cannot start a session");
			}
			return;
		}
		call_refuse(k, "tool.failed", why);
		return;
	}
	if ((s = session_usable(id, k->conn, why, sizeof(why))) != NULL) {
		s->call = k;
		if (k->rt->kind == TOOL_SESSION_END)
			session_end(s, "closed by its client");
		else
			session_send(s);
		return;
	}
	call_refuse(k, "tool.failed", why);
}

/* Who copied which file; of the content, its size and SHA-256 only. */
static json_t *
op_fields(struct op_call *op, const char *content)
{
	json_t *f, *summary;

	f = json_pack("{s:I, s:s, s:O}", "uid", (json_int_t)op->uid,
	    "session_id", op->session_id, "path", json_object_get(op->args,
	    "path"));
	if (f != NULL && content != NULL) {
		summary = content_summary(content, strlen(content), 1);
		if (summary == NULL || json_object_update(f, summary) == -1) {
			json_decref(f);
			f = NULL;
		}
		json_decref(summary);
	}
	return f;
}

/* Ends an operator's request with why, recorded if it got that far. */
static void
op_fail(struct op_call *op, const char *why)
{
	json_t *f;

	if ((f = op_fields(op, NULL)) != NULL) {
		json_object_set_new(f, "tool", json_string(op->tool));
		json_object_set_new(f, "error", json_string(why));
	}
	audit_post("operator.failed", op->origin, f, NULL, NULL);
	control_reply(op->conn, op->reqid, NULL, why);
	op_free(op);
}

static void	op_send(struct session *, struct op_call *);
static void	op_upload_recorded(void *, const char *);


/*
 * An operator's write_file or read_file (runnerctl put and get): the
 * tool's request to the agent, on any session.  An upload is recorded
 * before a byte is written, a download before a byte is handed over.
 * 0 and control_reply() later, or -1 and why.
 */
int
session_operator(uint32_t conn, uint64_t reqid, uid_t uid, const char *tool,
    json_t *args, char *why, size_t whylen)
{
	struct session *s;
	struct op_call *op;
	const char *id, *content;

	id = json_string_value(json_object_get(args, "session_id"));
	content = json_string_value(json_object_get(args, "content"));
	if (!path_ok(json_string_value(json_object_get(args, "path")))) {
		snprintf(why, whylen, PATH_RULE);
		return -1;
	}
	if (id == NULL || (s = session_usable(id, 0, why, whylen)) == NULL)
		return -1;
	if ((op = calloc(1, sizeof(*op))) == NULL)
		fatal("operator");
	op->conn = conn;
	op->reqid = reqid;
	op->uid = uid;
	op->tool = tool;
	op->args = json_incref(args);
	strlcpy(op->session_id, s->id, sizeof(op->session_id));
	op->origin = s->origin;
	log_info("session %s: uid %u %s %s", s->id, (unsigned)uid, content !=
	    NULL ? "uploads" : "downloads", json_string_value(
	    json_object_get(args, "path")));
	s->op = op;
	if (content != NULL) {
		op->recording = 1;
		audit_post("operator.upload", s->origin, op_fields(op,
		    content), op_upload_recorded, op);
	} else
		op_send(s, op);
	return 0;
}

static void
op_send(struct session *s, struct op_call *op)
{
	if (agent_send(s, runner_tool(op->tool), op->args) == -1) {
		s->op = NULL;
		op_fail(op, "cannot reach the session");
	}
}

/* An upload is recorded before a byte is written. */
static void
op_upload_recorded(void *arg, const char *why)
{
	struct op_call *op = arg;
	struct session *s;

	op->recording = 0;
	/* A session that ended meanwhile has left op to this answer. */
	if ((s = session_by_id(op->session_id)) != NULL && s->op == op &&
	    why != NULL)
		s->op = NULL;
	if (s == NULL || s->op != op)
		op_fail(op, why != NULL ? "audit log unavailable: nothing was "
		    "written" : "the session ended");
	else
		op_send(s, op);
}

/* A download is recorded before a byte is handed over. */
static void
op_download_recorded(void *arg, const char *why)
{
	struct op_call *op = arg;

	if (why != NULL) {
		op_fail(op, "audit log unavailable: the content is withheld");
		return;
	}
	control_reply(op->conn, op->reqid, json_incref(op->entry),
	    "out of memory");
	op_free(op);
}

/* The agent's answer to an operator's put or get. */
static void
op_done(struct session *s, json_t *reply)
{
	struct op_call *op = s->op;
	const char *err, *path;
	json_t *content;
	json_int_t bytes;
	char why[512];

	s->op = NULL;
	s->used = ev_now_ms();
	path = json_string_value(json_object_get(op->args, "path"));
	err = json_string_value(json_object_get(reply, "error"));
	bytes = json_integer_value(json_object_get(reply, "bytes"));
	content = strcmp(op->tool, "read_file") == 0 ?
	    json_object_get(reply, "content") : NULL;
	why[0] = '\0';
	if (err != NULL)
		snprintf(why, sizeof(why), "%s: %s", op->tool, err);
	else if (json_is_true(json_object_get(reply, "truncated")))
		snprintf(why, sizeof(why), "%s is larger than %ld bytes "
		    "(runnerd.output_max): not copied", path,
		    runnerd_conf.runnerd.output_max);
	else if (content != NULL && !json_is_string(content))
		snprintf(why, sizeof(why), "the session agent sent no content");
	if (why[0] != '\0') {
		op_fail(op, why);
		return;
	}
	op->entry = json_pack("{s:s, s:s, s:I, s:O*}", "session_id",
	    op->session_id, "path", path, "bytes", bytes, "content", content);
	if (content == NULL) {
		control_reply(op->conn, op->reqid, json_incref(op->entry),
		    "out of memory");
		op_free(op);
		return;
	}
	audit_post("operator.download", op->origin, op_fields(op,
	    json_string_value(content)), op_download_recorded, op);
}

/* A monotonic time (ev_now_ms) as the UTC time it was. */
static json_t *
wall_time(int64_t mono_ms)
{
	struct timespec now;
	struct tm tm;
	time_t t;
	char buf[32];

	clock_gettime(CLOCK_REALTIME, &now);
	t = now.tv_sec - (time_t)((ev_now_ms() - mono_ms) / 1000);
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* The open sessions, for runnerctl sessions; owner 0: its client left. */
json_t *
session_list(void)
{
	struct session *s;
	struct conn *c;
	json_t *a, *e;

	if ((a = json_array()) == NULL)
		return NULL;
	TAILQ_FOREACH(s, &sessions, entry) {
		e = json_pack("{s:s, s:I, s:o, s:o, s:s, s:s}", "session_id",
		    s->id, "owner", (json_int_t)s->conn, "created",
		    wall_time(s->opened), "used", wall_time(s->used),
		    "container", s->container, "state", s->ending != NULL ?
		    "closing" : !s->ready ? "opening" : s->call != NULL ||
		    s->op != NULL ? "busy" : "idle");
		if (e != NULL && s->conn != 0 && (c = conn_find(s->conn)) !=
		    NULL)
			json_object_set_new(e, "owner_uid",
			    json_integer(c->cred.uid));
		if (e == NULL || json_array_append_new(a, e) == -1) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

void
session_cancel(struct call *k)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->call == k && s->ready && s->ending == NULL)
			helper_session_cancel(s->key);
}

/* mcpd is gone: its sessions end, and nobody can claim them. */
void
session_conn_closed(uint32_t conn)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->conn == conn) {
			s->conn = 0;
			session_end(s, "its client went away");
		}
}

/* The MCP result of the agent's reply to s's call. */
static json_t *
reply_result(struct session *s, json_t *reply, json_t *audit)
{
	struct call *k = s->call;
	const char *err;
	char text[512];
	json_t *sc, *res;

	err = json_string_value(json_object_get(reply, "error"));
	if (err != NULL) {
		snprintf(text, sizeof(text), "%s: %s", k->tool, err);
		json_object_set_new(audit, "error", json_string(text));
		return text_result(1, text, NULL);
	}
	sc = json_pack("{s:s}", "session_id", s->id);
	res = k->rt->reply(k, reply, sc, audit);
	json_decref(sc);
	return res;
}

static json_t *
audit_fields(struct session *s)
{
	return json_pack("{s:s, s:s}", "tool", s->call->tool, "session_id",
	    s->id);
}

/* The session's sandbox.started is recorded: its first call goes in. */
static void
session_started(void *arg, const char *why)
{
	struct session *s;

	if ((s = session_by_key((uintptr_t)arg)) == NULL)
		return;		/* ended meanwhile */
	if (why != NULL) {
		session_end(s, "audit log unavailable");
		return;
	}
	log_info("session %s opened in %s", s->id, s->container);
	if (s->call != NULL)
		session_send(s);
}

static void
session_ready(struct session *s, json_t *j)
{
	const char *cid;

	if (s->ready || s->call == NULL)
		return;
	s->ready = 1;
	if ((cid = json_string_value(json_object_get(j, "container"))) != NULL)
		strlcpy(s->container, cid, sizeof(s->container));
	/* The key, not s: the session may end before auditd answers. */
	audit_post("sandbox.started", s->origin, json_pack("{s:s, s:s, s:s,"
	    " s:O*, s:O*, s:O*}", "tool", s->call->tool, "backend",
	    runnerd_conf.runnerd.backend, "session_id", s->id, "container",
	    json_object_get(j, "container"), "warm", json_object_get(j,
	    "warm"), "start_ms", json_object_get(j, "start_ms")),
	    session_started, (void *)(uintptr_t)s->key);
}

static void
session_ended(struct session *s, json_t *j)
{
	struct call *k = s->call;
	const char *why;
	char text[512];
	json_t *audit;

	why = s->ending != NULL ? s->ending :
	    json_string_value(json_object_get(j, "reason"));
	if (why == NULL)
		why = "the session sandbox ended";
	/* No sandbox was started: run_shell runs one-shot, as it would. */
	if (k != NULL && !s->ready && json_is_true(json_object_get(j,
	    "sessions_off"))) {
		backend_has_none = 1;
		if (k->rt->kind == TOOL_SHELL) {
			log_info("%s: %s; run_shell runs one-shot", s->id, why);
			session_free(s);
			call_oneshot(k);
			return;
		}
	}
	/* Recorded before the call's end, on the same ordered channel. */
	audit_post("sandbox.completed", k != NULL ? k->id : s->origin,
	    json_pack("{s:s, s:s, s:s}", "status", "ended", "session_id",
	    s->id, "reason", why), NULL, NULL);
	log_info("session %s ended: %s", s->id, why);
	if (k != NULL) {
		audit = audit_fields(s);
		s->call = NULL;
		if (k->rt->kind == TOOL_SESSION_END && s->ending != NULL &&
		    strcmp(s->ending, "closed by its client") == 0)
			call_finish(k, text_result(0, "the session is closed",
			    json_pack("{s:s, s:b}", "session_id", s->id,
			    "closed", 1)), audit);
		else {
			snprintf(text, sizeof(text), "session %s ended: %s",
			    s->id, why);
			json_object_set_new(audit, "error", json_string(text));
			call_finish(k, text_result(1, text, NULL), audit);
		}
	}
	/* An upload still being recorded is ended by its record's answer. */
	if (s->op != NULL && !s->op->recording) {
		snprintf(text, sizeof(text), "session %s ended: %s", s->id,
		    why);
		op_fail(s->op, text);
	}
	s->op = NULL;
	session_free(s);
}

void
session_event(enum sbx_session_event ev, uint64_t key, json_t *j)
{
	struct session *s;
	struct call *k;
	json_t *audit, *res;

	if ((s = session_by_key(key)) == NULL)
		return;		/* ended already */
	switch (ev) {
	case SBX_SESSION_READY:
		session_ready(s, j);
		break;
	case SBX_SESSION_REPLY:
		if (s->op != NULL) {
			op_done(s, j);
			break;
		}
		if ((k = s->call) == NULL || !s->ready)
			break;
		audit = audit_fields(s);
		res = reply_result(s, j, audit);
		s->call = NULL;
		s->used = ev_now_ms();
		call_finish(k, res, audit);
		break;
	case SBX_SESSION_ENDED:
		session_ended(s, j);
		break;
	}
}
