/* SPDX-License-Identifier: ISC */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "log.h"
#include "mcpd.h"

/*
 * Tasks (MCP 2025-11-25, basic/utilities/tasks): a tools/call that
 * carries params.task is answered at once with a task, and its result
 * is fetched later with tasks/result.  What makes them worth having
 * here is the approval: a call that stops at a pending approval leaves
 * its task input_required ("waiting for input": a person's) while
 * runnerd waits for the operator's decision (MSG_TOOL_AWAIT), then runs
 * the call as the second call of the two-call flow would, under a new
 * request id.  Approval only ever comes from approvalctl; the client
 * can wait, read, or cancel, which withdraws the approval request.
 * tasks/cancel is answered once runnerd says what the cancel did
 * (MSG_TOOL_CANCELLED): withdrawn or stopped, and the task is
 * cancelled; or too late, the approved call runs, and the task ends
 * with its result.
 *
 * Tasks are this connection's alone, in memory: another connection's
 * task id is as unknown as one never made.  Finished tasks are dropped
 * once their ttl has passed; at most TASKS_MAX are kept.
 */
#define TASKS_MAX		64
#define TASKS_PAGE		4		/* tasks/list, per page */
#define TASK_TTL_DEFAULT	(60 * 60 * 1000)
#define TASK_TTL_MAX		(24 * 60 * 60 * 1000)
#define TASK_POLL_MS		1000
#define TASK_ID_LEN		38		/* "task-" + 32 hex + NUL */
#define META_RELATED		"io.modelcontextprotocol/related-task"

struct task {
	TAILQ_ENTRY(task)	 entry;
	char			 id[TASK_ID_LEN];
	const char		*status;
	char			 message[512];
	int64_t			 created;	/* ms since the epoch */
	int64_t			 updated;
	int64_t			 ttl;		/* ms */
	uint64_t		 reqid;		/* runnerd's call, or 0 */
	int			 awaiting;	/* reqid is a TOOL_AWAIT */
	char			*tool;
	json_t			*args;
	char			 approval_id[64];
	json_t			*result;	/* once terminal */
	json_t			*waiters;	/* tasks/result ids */
	json_t			*cancel;	/* a tasks/cancel's id, waiting */
};

static TAILQ_HEAD(, task) tasks = TAILQ_HEAD_INITIALIZER(tasks);
static size_t		 ntasks;

/*
 * Tasks are 2025-11-25's; 2026-07-28 moved them out of the core
 * protocol into an extension (io.modelcontextprotocol/tasks, SEP-2663,
 * https://github.com/modelcontextprotocol/ext-tasks) that mcpd does not
 * offer, so a modern request's params.task is ignored, as a receiver
 * that declares no task capability must.
 */
int
tasks_offered(int modern)
{
	return !modern && strcmp(mcpd.version, "2025-11-25") == 0;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *
iso_time(int64_t ms)
{
	char buf[40];
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%03dZ",
	    (int)(ms % 1000));
	return json_string(buf);
}

static int
terminal(const struct task *t)
{
	return strcmp(t->status, "completed") == 0 ||
	    strcmp(t->status, "failed") == 0 ||
	    strcmp(t->status, "cancelled") == 0;
}

/* Tasks still running or waiting: each a call for max_inflight. */
size_t
tasks_unfinished(void)
{
	struct task *t;
	size_t n = 0;

	TAILQ_FOREACH(t, &tasks, entry)
		if (!terminal(t))
			n++;
	return n;
}

/* The Task object of the schema. */
static json_t *
task_json(const struct task *t)
{
	json_t *j;

	j = json_pack("{s:s, s:s, s:o, s:o, s:I, s:i}", "taskId", t->id,
	    "status", t->status, "createdAt", iso_time(t->created),
	    "lastUpdatedAt", iso_time(t->updated), "ttl", (json_int_t)t->ttl,
	    "pollInterval", TASK_POLL_MS);
	if (j != NULL && t->message[0] != '\0')
		json_object_set_new(j, "statusMessage",
		    json_string(t->message));
	return j;
}

static void
task_free(struct task *t)
{
	TAILQ_REMOVE(&tasks, t, entry);
	ntasks--;
	free(t->tool);
	json_decref(t->args);
	json_decref(t->result);
	json_decref(t->waiters);
	json_decref(t->cancel);
	free(t);
}

/* Finished tasks past their ttl go (the spec lets them). */
static void
tasks_sweep(void)
{
	struct task *t, *next;
	int64_t now = now_ms();

	TAILQ_FOREACH_SAFE(t, &tasks, entry, next)
		if (terminal(t) && t->created + t->ttl <= now)
			task_free(t);
}

static struct task *
task_by_id(const char *id)
{
	struct task *t;

	tasks_sweep();
	TAILQ_FOREACH(t, &tasks, entry)
		if (strcmp(t->id, id) == 0)
			return t;
	return NULL;
}

static struct task *
task_by_reqid(uint64_t reqid)
{
	struct task *t;

	TAILQ_FOREACH(t, &tasks, entry)
		if (t->reqid != 0 && t->reqid == reqid)
			return t;
	return NULL;
}

static void
set_status(struct task *t, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A new status, told to the client (notifications/tasks/status). */
static void
set_status(struct task *t, const char *status, const char *fmt, ...)
{
	va_list ap;

	t->status = status;
	va_start(ap, fmt);
	vsnprintf(t->message, sizeof(t->message), fmt, ap);
	va_end(ap);
	t->updated = now_ms();
	log_info("%s: %s: %s", t->id, status, t->message);
	rpc_notify("notifications/tasks/status", task_json(t));
}

/* The result tasks/result returns, with the task it belongs to. */
static json_t *
result_of(const struct task *t)
{
	json_t *r;

	r = json_deep_copy(t->result);
	json_object_set_new(r, "_meta", json_pack("{s:{s:s}}", META_RELATED,
	    "taskId", t->id));
	return r;
}

/* tasks/cancel id is refused: the task goes on, or has ended, as why. */
static void
cancel_refused(const json_t *id, const struct task *t, const char *why)
{
	char text[512];

	snprintf(text, sizeof(text), "Invalid params: %.480s", why);
	rpc_error(id, RPC_INVALID_PARAMS, text, json_pack("{s:s, s:s}",
	    "taskId", t->id, "status", t->status));
}

/*
 * The task ends with res (taken): every tasks/result waiting gets it,
 * and a tasks/cancel still waiting for runnerd learns it came too late.
 */
static void
finish(struct task *t, json_t *res, const char *status, const char *message)
{
	size_t i;
	json_t *id;

	t->reqid = 0;
	t->result = res;
	set_status(t, status, "%s", message);
	json_array_foreach(t->waiters, i, id)
		rpc_result(id, result_of(t));
	json_array_clear(t->waiters);
	if (t->cancel != NULL) {
		cancel_refused(t->cancel, t, "the task finished before it "
		    "could be cancelled");
		json_decref(t->cancel);
		t->cancel = NULL;
	}
}

static json_t *
failure(const char *text)
{
	return json_pack("{s:[{s:s, s:s}], s:b, s:{s:s, s:s}}", "content",
	    "type", "text", "text", text, "isError", 1, "structuredContent",
	    "status", "failed", "reason", text);
}

/* The task's call, or after an approval its wait, goes to runnerd. */
static int
send_call(struct task *t, uint32_t type)
{
	json_t *msg;

	t->reqid = reqid_new();
	t->awaiting = type == MSG_TOOL_AWAIT;
	msg = json_pack("{s:s, s:O, s:b}", "tool", t->tool, "arguments",
	    t->args, "progress", 0);
	if (msg != NULL && t->awaiting)
		json_object_set_new(msg, "approval_id",
		    json_string(t->approval_id));
	return runner_send_json(type, t->reqid, msg);
}

/* Called by tools_call for a checked call that asked for a task. */
void
tasks_start(const struct mcp_req *req, const char *tool, const json_t *args,
    const json_t *meta)
{
	json_t *ttl = json_object_get(meta, "ttl");
	struct task *t, *old;
	char rid[REQID_STR_LEN];

	if (ttl != NULL && (!json_is_integer(ttl) ||
	    json_integer_value(ttl) < 0)) {
		rpc_error(req->id, RPC_INVALID_PARAMS, "Invalid params: "
		    "task.ttl must be a non-negative integer", NULL);
		return;
	}
	tasks_sweep();
	if (ntasks >= TASKS_MAX) {
		TAILQ_FOREACH(old, &tasks, entry)
			if (terminal(old))
				break;
		if (old == NULL) {
			rpc_error(req->id, RPC_INVALID_REQUEST, "Invalid "
			    "Request: too many unfinished tasks", NULL);
			return;
		}
		task_free(old);
	}
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->tool = strdup(tool)) == NULL ||
	    (t->waiters = json_array()) == NULL)
		fatal("task");
	snprintf(t->id, sizeof(t->id), "task-%016" PRIx64 "%016" PRIx64,
	    reqid_new(), reqid_new());
	t->args = json_deep_copy(args);
	t->created = t->updated = now_ms();
	t->ttl = ttl == NULL ? TASK_TTL_DEFAULT :
	    json_integer_value(ttl) > TASK_TTL_MAX ? TASK_TTL_MAX :
	    json_integer_value(ttl);
	t->status = "working";
	snprintf(t->message, sizeof(t->message), "%s is running", tool);
	TAILQ_INSERT_TAIL(&tasks, t, entry);
	ntasks++;
	if (send_call(t, MSG_TOOL_CALL) == -1) {
		t->reqid = 0;
		t->status = "failed";
		t->result = failure("the call is too large to forward");
		strlcpy(t->message, "the call is too large to forward",
		    sizeof(t->message));
	}
	reqid_format(t->reqid, rid);
	log_info("%s: %s as %s", t->id, tool, rid);
	mcp_reply(req, json_pack("{s:o}", "task", task_json(t)));
}

/*
 * runnerd's result for reqid (res, taken), if a task's: 1, else 0.
 * A call stopped at a pending approval waits for it instead of ending.
 */
int
tasks_result(uint64_t reqid, json_t *res)
{
	const char *status, *aid;
	json_t *sc;
	struct task *t;

	if ((t = task_by_reqid(reqid)) == NULL)
		return 0;
	sc = json_object_get(res, "structuredContent");
	status = json_string_value(json_object_get(sc, "status"));
	aid = json_string_value(json_object_get(sc, "approval_id"));
	if (!t->awaiting && status != NULL && aid != NULL &&
	    strcmp(status, "pending_approval") == 0 &&
	    strlen(aid) < sizeof(t->approval_id)) {
		strlcpy(t->approval_id, aid, sizeof(t->approval_id));
		if (send_call(t, MSG_TOOL_AWAIT) == -1) {
			finish(t, failure("cannot wait for the approval"),
			    "failed", "cannot wait for the approval");
			json_decref(res);
			return 1;
		}
		set_status(t, "input_required", "waiting for a person to "
		    "approve or deny %s out of band (approvalctl show %s); "
		    "tasks/result returns once they have", aid, aid);
		json_decref(res);
		return 1;
	}
	/* A denial or expiry says so in its reason. */
	if (!json_is_true(json_object_get(res, "isError")))
		finish(t, res, "completed", "the call completed");
	else
		finish(t, res, "failed", json_string_value(json_object_get(sc,
		    "reason")) ?: "the call failed: see its result");
	return 1;
}

/* runnerd refused or lost the task's call: 1 if reqid was a task's. */
int
tasks_failed(uint64_t reqid, const char *why)
{
	struct task *t;

	if ((t = task_by_reqid(reqid)) == NULL)
		return 0;
	finish(t, failure(why), "failed", why);
	return 1;
}

/* runnerd went away: what it was doing or waiting for is lost. */
void
tasks_fail_all(const char *why)
{
	struct task *t;

	TAILQ_FOREACH(t, &tasks, entry)
		if (!terminal(t))
			finish(t, failure(why), "failed", why);
}

/* The client is gone: its waits end, and their approvals are withdrawn. */
void
tasks_cancel_all(void)
{
	struct task *t;

	while ((t = TAILQ_FIRST(&tasks)) != NULL) {
		if (t->reqid != 0)
			runner_send(MSG_TOOL_CANCEL, t->reqid, NULL, 0);
		task_free(t);
	}
}

/* Before 2025-11-25 the tasks/ methods do not exist. */
static int
tasks_refused(const struct mcp_req *req)
{
	if (tasks_offered(req->modern))
		return 0;
	rpc_error(req->id, RPC_METHOD_NOT_FOUND, "Method not found", NULL);
	return 1;
}

/* The task params.taskId names, or NULL after the error reply. */
static struct task *
task_param(const struct mcp_req *req)
{
	const char *id;
	struct task *t;

	if (tasks_refused(req))
		return NULL;
	id = json_string_value(json_object_get(req->params, "taskId"));
	if (id == NULL) {
		rpc_error(req->id, RPC_INVALID_PARAMS,
		    "Invalid params: taskId must be a string", NULL);
		return NULL;
	}
	if ((t = task_by_id(id)) == NULL)
		rpc_error(req->id, RPC_INVALID_PARAMS, "Invalid params: no "
		    "such task on this connection", json_pack("{s:s}",
		    "taskId", id));
	return t;
}

void
tasks_get(const struct mcp_req *req)
{
	struct task *t;

	if ((t = task_param(req)) != NULL)
		rpc_result(req->id, task_json(t));
}

/* Blocks, as the spec says, until the task is terminal. */
void
tasks_payload(const struct mcp_req *req)
{
	struct task *t;

	if ((t = task_param(req)) == NULL)
		return;
	if (terminal(t))
		rpc_result(req->id, result_of(t));
	else
		json_array_append(t->waiters, req->id);
}

/*
 * runnerd stops the call, or withdraws the approval it waits for, and
 * says which, or that it is too late (tasks_cancelled): the answer
 * waits for that.
 */
void
tasks_cancel(const struct mcp_req *req)
{
	struct task *t;

	if ((t = task_param(req)) == NULL)
		return;
	if (terminal(t)) {
		cancel_refused(req->id, t, "the task is already finished");
		return;
	}
	if (t->cancel != NULL) {
		cancel_refused(req->id, t, "the task is already being "
		    "cancelled");
		return;
	}
	if (runner_send_json(MSG_TOOL_CANCEL, t->reqid, json_pack("{s:b}",
	    "answer", 1)) == -1) {
		cancel_refused(req->id, t, "runnerd cannot be told");
		return;
	}
	t->cancel = json_incref(req->id);
}

/* runnerd's answer to a task's cancel (MSG_TOOL_CANCELLED). */
void
tasks_cancelled(uint64_t reqid, const void *data, size_t len)
{
	const char *outcome, *reason;
	struct task *t;
	json_t *j, *id;
	char text[512];

	if ((t = task_by_reqid(reqid)) == NULL || t->cancel == NULL) {
		log_debug("cancel answer for no task being cancelled");
		return;
	}
	j = json_loadb(data, len, 0, NULL);
	outcome = json_string_value(json_object_get(j, "outcome"));
	reason = json_string_value(json_object_get(j, "reason"));
	if (reason == NULL)
		reason = "runnerd gave no reason";
	id = t->cancel;
	t->cancel = NULL;
	if (outcome != NULL && strcmp(outcome, "running") == 0) {
		/* It runs on: its result ends the task, as for any call. */
		snprintf(text, sizeof(text), "not cancelled: %s", reason);
		set_status(t, "working", "%s", text);
		cancel_refused(id, t, text);
	} else {
		snprintf(text, sizeof(text), "cancelled by the client; %s",
		    outcome != NULL && strcmp(outcome, "withdrawn") == 0 ?
		    "the approval request was withdrawn" : reason);
		finish(t, failure(text), "cancelled", text);
		rpc_result(id, task_json(t));
	}
	json_decref(id);
	json_decref(j);
}

/* This connection's tasks, oldest first; the cursor is the last id sent. */
void
tasks_list(const struct mcp_req *req)
{
	json_t *cursor, *list, *result;
	struct task *t, *last = NULL;
	size_t n = 0;

	if (tasks_refused(req))
		return;
	tasks_sweep();
	t = TAILQ_FIRST(&tasks);
	if ((cursor = json_object_get(req->params, "cursor")) != NULL) {
		if (!json_is_string(cursor) ||
		    (t = task_by_id(json_string_value(cursor))) == NULL) {
			rpc_error(req->id, RPC_INVALID_PARAMS,
			    "Invalid params: unknown cursor", NULL);
			return;
		}
		t = TAILQ_NEXT(t, entry);
	}
	if ((list = json_array()) == NULL)
		fatal("tasks/list");
	for (; t != NULL && n < TASKS_PAGE; t = TAILQ_NEXT(t, entry), n++) {
		json_array_append_new(list, task_json(t));
		last = t;
	}
	result = json_pack("{s:o}", "tasks", list);
	if (t != NULL && last != NULL)
		json_object_set_new(result, "nextCursor",
		    json_string(last->id));
	rpc_result(req->id, result);
}
