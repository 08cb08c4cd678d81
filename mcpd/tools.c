/* SPDX-License-Identifier: ISC */
#include <sys/queue.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "event.h"
#include "log.h"
#include "mcpd.h"
#include "tools.h"

/*
 * tools/list and tools/call.  A call is checked against its tool's
 * inputSchema here, so nothing malformed reaches runnerd; it then
 * lives in the in-flight list under a fresh request id until runnerd
 * answers, the client cancels it, or its deadline passes.
 */
struct call {
	TAILQ_ENTRY(call)	 entry;
	uint64_t		 reqid;
	json_t			*id;		/* the client's request id */
	json_t			*token;		/* progressToken, or NULL */
	double			 progress;	/* last progress sent */
	uint64_t		 timer;
	int			 modern;
	int			 log_level;	/* logging.c */
	char			 rid[REQID_STR_LEN];
};

static TAILQ_HEAD(, call) calls = TAILQ_HEAD_INITIALIZER(calls);
static size_t		 ncalls;

size_t
tools_inflight(void)
{
	return ncalls;
}

static int
tool_enabled(const char *name)
{
	int i;

	if ((i = tool_index(name)) == -1)
		return -1;
	return (mcpd.conf.mcpd.tools & ((uint64_t)1 << i)) ? i : -1;
}

void
tools_list(const struct mcp_req *req)
{
	json_t *list, *result, *tool;
	size_t i;

	/* One page holds every tool: no cursor was ever handed out. */
	if (json_object_get(req->params, "cursor") != NULL) {
		rpc_error(req->id, RPC_INVALID_PARAMS,
		    "Invalid params: unknown cursor", NULL);
		return;
	}
	if ((list = json_array()) == NULL)
		fatal("tools/list");
	for (i = 0; i < tools_count(); i++) {
		if (!(mcpd.conf.mcpd.tools & ((uint64_t)1 << i)))
			continue;
		json_array_append_new(list, tool = tool_describe(i));
		if (tasks_offered(req->modern))
			json_object_set_new(tool, "execution", json_pack(
			    "{s:s}", "taskSupport", "optional"));
	}
	result = json_pack("{s:o}", "tools", list);
	mcp_reply_cacheable(req, result);
}

/*
 * A tool failure the model should read: an isError result, not an
 * error.  One of a call runnerd took (rid) names it, as every result
 * does; one refused before that names nothing, for nothing was made.
 */
static void
reply_failure(const json_t *id, int modern, const char *rid,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
reply_failure(const json_t *id, int modern, const char *rid,
    const char *fmt, ...)
{
	struct mcp_req req = { .id = (json_t *)id, .modern = modern };
	char text[1024];
	json_t *result;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
	    "text", text, "isError", 1);
	if (result != NULL && rid != NULL)
		json_object_set_new(result, "structuredContent", json_pack(
		    "{s:s, s:s, s:s}", "request_id", rid, "status", "failed",
		    "reason", text));
	mcp_reply(&req, result);
}

static struct call *
call_by_reqid(uint64_t reqid)
{
	struct call *c;

	TAILQ_FOREACH(c, &calls, entry)
		if (c->reqid == reqid)
			return c;
	return NULL;
}

static struct call *
call_by_id(const json_t *id)
{
	struct call *c;

	TAILQ_FOREACH(c, &calls, entry)
		if (json_equal(c->id, (json_t *)id))
			return c;
	return NULL;
}

static void
call_free(struct call *c)
{
	TAILQ_REMOVE(&calls, c, entry);
	ncalls--;
	ev_timer_cancel(c->timer);
	json_decref(c->id);
	json_decref(c->token);
	free(c);
}

static void
call_timeout(void *arg)
{
	struct call *c = arg;

	c->timer = 0;
	log_warnx("%s: no result after %lds, cancelling", c->rid,
	    mcpd.conf.mcpd.call_timeout);
	runner_send(MSG_TOOL_CANCEL, c->reqid, NULL, 0);
	reply_failure(c->id, c->modern, c->rid, "the call timed out after "
	    "%ld seconds and was cancelled", mcpd.conf.mcpd.call_timeout);
	call_free(c);
}

/* The progress token, NULL when none; -1 when it is not a valid one. */
static int
progress_token(const json_t *params, json_t **token)
{
	json_t *t;

	*token = NULL;
	t = json_object_get(json_object_get(params, "_meta"), "progressToken");
	if (t == NULL)
		return 0;
	if (!json_is_string(t) && !json_is_integer(t))
		return -1;
	*token = t;
	return 0;
}

static int
forward(struct call *c, const char *tool, const json_t *args)
{
	return runner_send_json(MSG_TOOL_CALL, c->reqid, json_pack(
	    "{s:s, s:O, s:b, s:b, s:s}", "tool", tool, "arguments", args,
	    "progress", c->token != NULL, "log",
	    logging_wanted(c->log_level), "client_key", mcpd.client_key));
}

void
tools_call(const struct mcp_req *req)
{
	const char *name;
	json_t *args, *token;
	struct call *c;
	char why[512];
	int t, as_task;

	name = json_string_value(json_object_get(req->params, "name"));
	if (name == NULL) {
		rpc_error(req->id, RPC_INVALID_PARAMS,
		    "Invalid params: name must be a string", NULL);
		return;
	}
	if ((t = tool_enabled(name)) == -1) {
		rpc_error(req->id, RPC_INVALID_PARAMS,
		    "Invalid params: unknown tool", json_pack("{s:s}", "name",
		    name));
		return;
	}
	if (progress_token(req->params, &token) == -1) {
		rpc_error(req->id, RPC_INVALID_PARAMS, "Invalid params: "
		    "progressToken must be a string or an integer", NULL);
		return;
	}
	if ((as_task = tasks_wanted(req)) == -1)
		return;
	if (call_by_id(req->id) != NULL) {
		rpc_error(req->id, RPC_INVALID_REQUEST,
		    "Invalid Request: id already in use by a call in flight",
		    NULL);
		return;
	}
	if ((args = json_object_get(req->params, "arguments")) == NULL)
		args = json_object();
	else
		json_incref(args);
	if (tool_validate(t, args, why, sizeof(why)) == -1) {
		log_info("%s: refused arguments: %s", name, why);
		reply_failure(req->id, req->modern, NULL, "invalid arguments "
		    "for %s: %s", name, why);
		json_decref(args);
		return;
	}
	/* A task is a call for the bound, waiting or running. */
	if (ncalls + tasks_unfinished() >=
	    (size_t)mcpd.conf.mcpd.max_inflight) {
		reply_failure(req->id, req->modern, NULL, "too many calls in "
		    "flight (%ld, tasks included); try again when one has "
		    "finished", mcpd.conf.mcpd.max_inflight);
		json_decref(args);
		return;
	}
	if (!runner_ready()) {
		reply_failure(req->id, req->modern, NULL, "runnerd is not "
		    "reachable (stopped or restarting): the call was not run; "
		    "mcpd reconnects on its own, try again shortly");
		json_decref(args);
		return;
	}
	/* The extension's client asks for no task, nor a ttl. */
	if (as_task) {
		tasks_start(req, name, args, req->modern ? NULL :
		    json_object_get(req->params, "task"));
		json_decref(args);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("tools/call");
	c->reqid = reqid_new();
	reqid_format(c->reqid, c->rid);
	c->id = json_incref(req->id);
	c->token = json_incref(token);
	c->modern = req->modern;
	c->log_level = req->log_level;
	if (forward(c, name, args) == -1) {
		json_decref(args);
		reply_failure(req->id, req->modern, NULL, "the call is too "
		    "large to forward (%s)", strerror(errno));
		json_decref(c->id);
		json_decref(c->token);
		free(c);
		return;
	}
	json_decref(args);
	TAILQ_INSERT_TAIL(&calls, c, entry);
	ncalls++;
	c->timer = ev_timer(mcpd.conf.mcpd.call_timeout * 1000, call_timeout,
	    c);
	log_info("%s: %s forwarded", c->rid, name);
}

/* notifications/cancelled: stop the call in runnerd; no reply is due. */
void
tools_cancelled(const json_t *params)
{
	struct call *c;
	json_t *id;

	id = json_object_get(params, "requestId");
	if (id == NULL || (c = call_by_id(id)) == NULL) {
		log_debug("cancellation for no call in flight");
		return;
	}
	log_info("%s: cancelled by the client: %.128s", c->rid,
	    json_string_value(json_object_get(params, "reason")) ?: "");
	runner_send(MSG_TOOL_CANCEL, c->reqid, NULL, 0);
	call_free(c);
}

static json_t *
parse_peer_json(const void *data, size_t len, const char *what,
    const char *rid)
{
	json_error_t je;
	json_t *j;

	/* A result's output may hold NULs; the client gets them escaped. */
	j = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
	    &je);
	if (!json_is_object(j)) {
		log_warnx("%s: malformed %s from runnerd: %s", rid, what,
		    j == NULL ? je.text : "not an object");
		json_decref(j);
		return NULL;
	}
	return j;
}

void
tools_progress(uint64_t reqid, const void *data, size_t len)
{
	struct call *c;
	json_t *p, *n, *note;
	double v;

	if ((c = call_by_reqid(reqid)) == NULL || c->token == NULL)
		return;
	if ((p = parse_peer_json(data, len, "progress", c->rid)) == NULL)
		return;
	n = json_object_get(p, "progress");
	/* MCP wants progress to increase with every notification. */
	if (!json_is_number(n) || (v = json_number_value(n)) <= c->progress) {
		json_decref(p);
		return;
	}
	c->progress = v;
	note = json_pack("{s:O, s:O}", "progressToken", c->token, "progress",
	    n);
	if (json_is_number(json_object_get(p, "total")))
		json_object_set(note, "total", json_object_get(p, "total"));
	if (json_is_string(json_object_get(p, "message")))
		json_object_set(note, "message", json_object_get(p, "message"));
	json_decref(p);
	rpc_notify("notifications/progress", note);
}

/* runnerd's result as the client gets it, or NULL when malformed. */
static json_t *
call_result(const void *data, size_t len, const char *rid)
{
	json_t *r, *content, *sc, *iserr, *result = NULL;

	r = parse_peer_json(data, len, "result", rid);
	content = json_object_get(r, "content");
	sc = json_object_get(r, "structuredContent");
	iserr = json_object_get(r, "isError");
	if (r != NULL && json_is_array(content) && (sc == NULL ||
	    json_is_object(sc) || json_is_null(sc)) && (iserr == NULL ||
	    json_is_boolean(iserr))) {
		result = json_pack("{s:O, s:b}", "content", content, "isError",
		    json_is_true(iserr));
		if (json_is_object(sc))
			json_object_set(result, "structuredContent", sc);
	}
	json_decref(r);
	return result;
}

/* One of the call's audit events, for notifications/message. */
void
tools_log(uint64_t reqid, const void *data, size_t len)
{
	struct call *c;
	json_t *p;

	if ((c = call_by_reqid(reqid)) == NULL ||
	    (p = parse_peer_json(data, len, "log event", c->rid)) == NULL)
		return;
	logging_relay(c->log_level, c->rid, p);
	json_decref(p);
}

void
tools_result(uint64_t reqid, const void *data, size_t len)
{
	struct mcp_req req;
	struct call *c;
	json_t *result;
	char rid[REQID_STR_LEN];

	reqid_format(reqid, rid);
	c = call_by_reqid(reqid);
	result = call_result(data, len, rid);
	if (result != NULL)
		resources_note(result, c != NULL && c->modern);
	if (c == NULL) {
		if (result == NULL)
			tasks_failed(reqid, "runnerd sent a malformed result");
		else if (!tasks_result(reqid, result)) {
			log_debug("result for a call no longer in flight");
			json_decref(result);
		}
		return;
	}
	if (result == NULL) {
		reply_failure(c->id, c->modern, c->rid, "runnerd sent a "
		    "malformed result (%s)", c->rid);
		call_free(c);
		return;
	}
	log_info("%s: %s", c->rid, json_is_true(json_object_get(result,
	    "isError")) ? "failed" : "done");
	memset(&req, 0, sizeof(req));
	req.id = c->id;
	req.modern = c->modern;
	mcp_reply(&req, result);
	call_free(c);
}

/* runnerd refused the frame itself (MSG_ERROR). */
void
tools_failed(uint64_t reqid, const char *why)
{
	struct call *c;

	if ((c = call_by_reqid(reqid)) == NULL)
		return;
	reply_failure(c->id, c->modern, c->rid, "runnerd refused the call: %s",
	    why);
	call_free(c);
}

/* runnerd is gone: every call in flight fails, visibly, and is forgotten. */
void
tools_fail_all(const char *why)
{
	struct call *c;

	while ((c = TAILQ_FIRST(&calls)) != NULL) {
		reply_failure(c->id, c->modern, c->rid, "%s", why);
		call_free(c);
	}
}

/* The client is gone: nothing it started may go on running. */
void
tools_cancel_all(void)
{
	struct call *c;

	while ((c = TAILQ_FIRST(&calls)) != NULL) {
		runner_send(MSG_TOOL_CANCEL, c->reqid, NULL, 0);
		call_free(c);
	}
}
