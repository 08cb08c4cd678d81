/* SPDX-License-Identifier: ISC */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "event.h"
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
 * 2026-07-28 moved tasks out of the core protocol into an extension
 * (io.modelcontextprotocol/tasks, SEP-2663), whose tasks are these
 * same tasks with another face: a request that lists the extension in
 * its _meta clientCapabilities gets a task for every tools/call (the
 * server decides), as a CreateTaskResult (resultType "task", the Task's
 * fields inline: ttlMs, pollIntervalMs); tasks/get answers with the
 * result inline once completed; tasks/update and tasks/cancel are
 * acknowledged with an empty result.  There is no tasks/result and no
 * tasks/list.  The extension's input_required asks the client for
 * input, and an approval is a person's, which no client may give: a
 * task waiting on one stays working, its statusMessage says for what.
 * Its failed is for a JSON-RPC error, and every end of a call here is a
 * CallToolResult: an isError one completes the task.  A request that
 * does not list the extension and asks for a task anyway (params.task)
 * or sends tasks/get, update or cancel gets -32021, naming it.
 *
 * Tasks are this client's alone, and each era sees its own: another
 * client's task id, or one of the other era, is as unknown as one
 * never made.  A task is in the table before the answer that names it
 * is written, so a tasks/get right after finds it.  Finished tasks are
 * dropped once their ttl has passed; at most TASKS_MAX are kept.
 *
 * The table is in memory, and a client starts its own mcpd, so a new
 * mcpd knows no task of the last one's, unless the client kept its key
 * (-k): then each change of a task goes to runnerd's store
 * (runnerd/taskstore.c, filed under the key's digest), the record of a
 * new one before the answer that names it, and an id this mcpd does
 * not know is asked for there (task_param) before it is called
 * unknown.  A task found there that waited for its approval waits
 * again here, as after a restart of runnerd; one whose call was running
 * has an unknown outcome, as its result went to the mcpd that is gone.
 */
#define TASKS_MAX		64
#define TASKS_PAGE		4		/* tasks/list, per page */
#define TASK_TTL_DEFAULT	(60 * 60 * 1000)
#define TASK_TTL_MAX		(24 * 60 * 60 * 1000)
#define TASK_POLL_MS		1000
#define META_RELATED		"io.modelcontextprotocol/related-task"
#define TASK_SAVE_WAIT_MS	200		/* a new task's record, at most */
#define MCPD_LOST		"the mcpd that ran this call went away " \
	"before its result: the outcome is unknown; check with approvalctl " \
	"before calling again"

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
	int			 resume;	/* the wait, once runnerd is back */
	int			 modern;	/* the extension's (2026-07-28) */
	int			 cancelling;	/* runnerd was told to */
	int			 unsaved;	/* changed while runnerd was away */
	char			*tool;
	json_t			*args;
	char			 approval_id[64];
	json_t			*result;	/* once terminal */
	json_t			*waiters;	/* tasks/result ids */
	json_t			*cancel;	/* a legacy tasks/cancel's id */
};

static TAILQ_HEAD(, task) tasks = TAILQ_HEAD_INITIALIZER(tasks);
static size_t		 ntasks;

/* A tasks/ request for an id asked for in runnerd's store (task_param). */
struct lookup {
	TAILQ_ENTRY(lookup)	 entry;
	uint64_t		 reqid;		/* the TASK_LOAD's */
	void			(*serve)(const struct mcp_req *);
	struct mcp_req		 req;		/* id and params held */
};

static TAILQ_HEAD(, lookup) lookups = TAILQ_HEAD_INITIALIZER(lookups);

static void	task_save(struct task *);

/* The core protocol's tasks, and so params.task, are 2025-11-25's. */
int
tasks_offered(int modern)
{
	return !modern && strcmp(mcpd.version, "2025-11-25") == 0;
}

/* -32021: the request needs the extension it did not list. */
static void
missing_extension(const json_t *id)
{
	rpc_error(id, MCP_MISSING_CAPABILITY, "Missing required client "
	    "capability: extension " EXT_TASKS, json_pack("{s:{s:{s:{}}}}",
	    "requiredCapabilities", "extensions", EXT_TASKS));
}

/*
 * Whether tools_call runs req as a task: 1 or 0; -1 when it asked for
 * one without the extension a 2026-07-28 task needs (the error is sent).
 */
int
tasks_wanted(const struct mcp_req *req)
{
	const json_t *task = json_object_get(req->params, "task");

	if (!req->modern)
		return tasks_offered(0) && json_is_object(task);
	if (req->ext_tasks)
		return 1;
	if (task == NULL)
		return 0;
	missing_extension(req->id);
	return -1;
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

/* The Task object of the task's era. */
static json_t *
task_json(const struct task *t)
{
	json_t *j;

	j = json_pack("{s:s, s:s, s:o, s:o, s:I, s:i}", "taskId", t->id,
	    "status", t->status, "createdAt", iso_time(t->created),
	    "lastUpdatedAt", iso_time(t->updated), t->modern ? "ttlMs" : "ttl",
	    (json_int_t)t->ttl, t->modern ? "pollIntervalMs" : "pollInterval",
	    TASK_POLL_MS);
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
	int64_t now = ev_wall_ms();

	TAILQ_FOREACH_SAFE(t, &tasks, entry, next)
		if (terminal(t) && t->created + t->ttl <= now)
			task_free(t);
}

static struct task *
task_by_id(const char *id, int modern)
{
	struct task *t;

	tasks_sweep();
	TAILQ_FOREACH(t, &tasks, entry)
		if (strcmp(t->id, id) == 0 && t->modern == modern)
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

/*
 * A new status, told to a legacy client (notifications/tasks/status);
 * the extension's notifications/tasks need a subscriptions/listen,
 * which mcpd does not serve.
 */
static void
set_status(struct task *t, const char *status, const char *fmt, ...)
{
	va_list ap;

	t->status = status;
	va_start(ap, fmt);
	vsnprintf(t->message, sizeof(t->message), fmt, ap);
	va_end(ap);
	t->updated = ev_wall_ms();
	log_info("%s: %s: %s", t->id, status, t->message);
	if (!t->modern)
		rpc_notify("notifications/tasks/status", task_json(t));
	task_save(t);
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
	t->cancelling = 0;
	if (t->modern && strcmp(status, "failed") == 0)
		status = "completed";
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

/* The task as runnerd's store keeps it (MSG_TASK_SAVE). */
static json_t *
task_record(const struct task *t)
{
	json_t *r;

	r = json_pack("{s:s, s:b, s:s, s:s, s:I, s:I, s:I, s:s, s:O}",
	    "taskId", t->id, "modern", t->modern, "status", t->status,
	    "message", t->message, "created", (json_int_t)t->created,
	    "updated", (json_int_t)t->updated, "ttl", (json_int_t)t->ttl,
	    "tool", t->tool, "arguments", t->args);
	if (r != NULL && t->approval_id[0] != '\0')
		json_object_set_new(r, "approval_id",
		    json_string(t->approval_id));
	if (r != NULL && t->result != NULL)
		json_object_set(r, "result", t->result);
	return r;
}

static char *
save_text(json_t *msg)
{
	char *text;

	if (msg == NULL || (text = json_dumps(msg, JSON_COMPACT)) == NULL)
		fatalx("cannot encode a task's record");
	return text;
}

/*
 * With a kept client key, the task's record goes to runnerd's store;
 * while runnerd is away, once it is back.  A result too large for the
 * store is kept as a failure saying so.
 */
static void
task_save(struct task *t)
{
	json_t *msg;
	char *text;

	if (!mcpd.key_kept)
		return;
	if ((t->unsaved = !runner_ready()))
		return;
	msg = json_pack("{s:s, s:o}", "client_key", mcpd.client_key, "task",
	    task_record(t));
	text = save_text(msg);
	if (strlen(text) > TASK_RECORD_MAX && t->result != NULL) {
		free(text);
		json_object_set_new(json_object_get(msg, "task"), "result",
		    failure("the result was too large to keep for another "
		    "mcpd of this client: only the mcpd that ran the task "
		    "had it"));
		text = save_text(msg);
	}
	if (runner_send(MSG_TASK_SAVE, 0, text, strlen(text)) == -1)
		log_warnx("%s: its record is too large to keep", t->id);
	free(text);
	json_decref(msg);
}

/* The task waits for its approval, as the status message says. */
static void
set_waiting(struct task *t, const char *why)
{
	set_status(t, t->modern ? "working" : "input_required", "%s"
	    "waiting for a person to approve or deny %s out of band "
	    "(approvalctl show %s); %s once they have", why, t->approval_id,
	    t->approval_id, t->modern ? "tasks/get holds the result" :
	    "tasks/result returns");
}

/* The task's call, or after an approval its wait, goes to runnerd. */
static int
send_call(struct task *t, uint32_t type)
{
	json_t *msg;

	t->reqid = reqid_new();
	t->awaiting = type == MSG_TOOL_AWAIT;
	t->resume = 0;
	msg = json_pack("{s:s, s:O, s:b, s:s}", "tool", t->tool, "arguments",
	    t->args, "progress", 0, "client_key", mcpd.client_key);
	if (msg != NULL && t->awaiting)
		json_object_set_new(msg, "approval_id",
		    json_string(t->approval_id));
	return runner_send_json(type, t->reqid, msg);
}

/* Room for one more task: 0, or -1 when TASKS_MAX are unfinished. */
static int
tasks_room(void)
{
	struct task *old;

	tasks_sweep();
	if (ntasks < TASKS_MAX)
		return 0;
	TAILQ_FOREACH(old, &tasks, entry)
		if (terminal(old))
			break;
	if (old == NULL)
		return -1;
	task_free(old);
	return 0;
}

/* Called by tools_call for a checked call that asked for a task. */
void
tasks_start(const struct mcp_req *req, const char *tool, const json_t *args,
    const json_t *meta)
{
	json_t *ttl = json_object_get(meta, "ttl");
	struct task *t;
	char rid[REQID_STR_LEN];

	if (ttl != NULL && (!json_is_integer(ttl) ||
	    json_integer_value(ttl) < 0)) {
		rpc_error(req->id, RPC_INVALID_PARAMS, "Invalid params: "
		    "task.ttl must be a non-negative integer", NULL);
		return;
	}
	if (tasks_room() == -1) {
		rpc_error(req->id, RPC_INVALID_REQUEST, "Invalid Request: "
		    "too many unfinished tasks", NULL);
		return;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->tool = strdup(tool)) == NULL ||
	    (t->waiters = json_array()) == NULL)
		fatal("task");
	snprintf(t->id, sizeof(t->id), TASK_ID_PREFIX "%016" PRIx64
	    "%016" PRIx64, reqid_new(), reqid_new());
	t->args = json_deep_copy(args);
	t->modern = req->modern;
	t->created = t->updated = ev_wall_ms();
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
	task_save(t);
	if (mcpd.key_kept)
		runner_drain(TASK_SAVE_WAIT_MS);
	if (t->modern) {
		json_t *created = task_json(t);

		json_object_set_new(created, "resultType", json_string("task"));
		mcp_reply(req, created);
	} else
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
		set_waiting(t, "");
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

static struct lookup *
lookup_by_reqid(uint64_t reqid)
{
	struct lookup *l;

	TAILQ_FOREACH(l, &lookups, entry)
		if (l->reqid == reqid)
			return l;
	return NULL;
}

/* The lookup ends: its request is served, or refused with why. */
static void
lookup_end(struct lookup *l, const char *why)
{
	char text[512];

	TAILQ_REMOVE(&lookups, l, entry);
	if (why == NULL)
		l->serve(&l->req);
	else {
		snprintf(text, sizeof(text), "Invalid params: %s", why);
		rpc_error(l->req.id, RPC_INVALID_PARAMS, text, json_pack(
		    "{s:s?}", "taskId", json_string_value(json_object_get(
		    l->req.params, "taskId"))));
	}
	json_decref(l->req.id);
	json_decref(l->req.params);
	free(l);
}

/*
 * runnerd refused or lost the task's call, or did not find the task
 * asked for in its store: 1 if reqid was a task's or a lookup's.
 */
int
tasks_failed(uint64_t reqid, const char *why)
{
	struct task *t;
	struct lookup *l;

	if ((t = task_by_reqid(reqid)) != NULL)
		finish(t, failure(why), "failed", why);
	else if ((l = lookup_by_reqid(reqid)) != NULL)
		lookup_end(l, why);
	else
		return 0;
	return 1;
}

/* runnerd stops the call or the wait; a task kept for it, once back. */
static int
cancel_call(struct task *t)
{
	if (t->resume)
		return 0;
	return runner_send_json(MSG_TOOL_CANCEL, t->reqid, json_pack("{s:b}",
	    "answer", 1));
}

/*
 * runnerd went away.  What it ran has an unknown outcome, and fails.
 * A wait for an approval is kept: the approval lives in approvald,
 * and the task waits for it again once runnerd is back.
 */
void
tasks_runner_lost(const char *why)
{
	struct task *t;
	struct lookup *l;

	while ((l = TAILQ_FIRST(&lookups)) != NULL)
		lookup_end(l, "runnerd went away before it looked the task "
		    "up: ask again");
	TAILQ_FOREACH(t, &tasks, entry) {
		if (terminal(t))
			continue;
		if (!t->awaiting) {
			finish(t, failure(why), "failed", why);
			continue;
		}
		t->reqid = 0;
		t->resume = 1;
		set_waiting(t, "runnerd went away (stopped or restarted); "
		    "once it is back, still ");
	}
}

/*
 * runnerd is back: each kept task waits for its approval again (a
 * wait runnerd adopts, runnerd/await.c), and a cancel asked for
 * meanwhile follows it.
 */
void
tasks_runner_back(void)
{
	struct task *t;

	TAILQ_FOREACH(t, &tasks, entry) {
		if (!t->resume) {
			if (t->unsaved)
				task_save(t);
			continue;
		}
		if (send_call(t, MSG_TOOL_AWAIT) == -1) {
			finish(t, failure("cannot wait for the approval"),
			    "failed", "cannot wait for the approval");
			continue;
		}
		set_waiting(t, "runnerd is back: ");
		if (t->cancelling && cancel_call(t) == -1)
			log_warnx("%s: cancel not sent", t->id);
	}
}

/*
 * The client is gone: its calls end, and so do its waits, their
 * approvals withdrawn, unless the key is kept: then the next mcpd of
 * this client waits for them again, and an approval stays pending.
 */
void
tasks_cancel_all(void)
{
	struct task *t;

	while ((t = TAILQ_FIRST(&tasks)) != NULL) {
		if (t->reqid != 0 && !(mcpd.key_kept && t->awaiting))
			runner_send(MSG_TOOL_CANCEL, t->reqid, NULL, 0);
		task_free(t);
	}
}

/* Before 2025-11-25 the tasks/ methods do not exist. */
static int
tasks_refused(const struct mcp_req *req)
{
	if (req->modern || tasks_offered(0))
		return 0;
	rpc_error(req->id, RPC_METHOD_NOT_FOUND, "Method not found", NULL);
	return 1;
}

/* Asks runnerd's store for id; serve answers req once it has said. */
static int
look_up(const struct mcp_req *req, const char *id,
    void (*serve)(const struct mcp_req *))
{
	struct lookup *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		fatal("lookup");
	l->reqid = reqid_new();
	if (runner_send_json(MSG_TASK_LOAD, l->reqid, json_pack("{s:s, s:s}",
	    "client_key", mcpd.client_key, "taskId", id)) == -1) {
		free(l);
		return -1;
	}
	l->serve = serve;
	l->req = *req;
	l->req.looked_up = 1;
	json_incref(l->req.id);
	json_incref(l->req.params);
	TAILQ_INSERT_TAIL(&lookups, l, entry);
	return 0;
}

/*
 * The task params.taskId names, or NULL after the error reply or while
 * runnerd's store is asked for it (serve answers then).  The table and
 * the store are this client's, so finding it is the authorization.
 */
static struct task *
task_param(const struct mcp_req *req, void (*serve)(const struct mcp_req *))
{
	const char *id;
	struct task *t;

	if (req->modern && !req->ext_tasks) {
		missing_extension(req->id);
		return NULL;
	}
	if (tasks_refused(req))
		return NULL;
	id = json_string_value(json_object_get(req->params, "taskId"));
	if (id == NULL) {
		rpc_error(req->id, RPC_INVALID_PARAMS,
		    "Invalid params: taskId must be a string", NULL);
		return NULL;
	}
	if ((t = task_by_id(id, req->modern)) != NULL)
		return t;
	if (mcpd.key_kept && !req->looked_up && task_id_valid(id) &&
	    runner_ready() && look_up(req, id, serve) == 0)
		return NULL;
	rpc_error(req->id, RPC_INVALID_PARAMS, "Invalid params: no such task "
	    "for this client", json_pack("{s:s}", "taskId", id));
	return NULL;
}

/* The extension's tasks/get carries a completed task's result inline. */
void
tasks_get(const struct mcp_req *req)
{
	struct task *t;
	json_t *j;

	if ((t = task_param(req, tasks_get)) == NULL)
		return;
	j = task_json(t);
	if (t->modern && strcmp(t->status, "completed") == 0)
		json_object_set_new(j, "result", json_deep_copy(t->result));
	mcp_reply(req, j);
}

/* Blocks, as the spec says, until the task is terminal. */
void
tasks_payload(const struct mcp_req *req)
{
	struct task *t;

	if ((t = task_param(req, tasks_payload)) == NULL)
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

	if ((t = task_param(req, tasks_cancel)) == NULL)
		return;
	if (t->modern) {
		/*
		 * The extension's cancel is acknowledged at once, and what
		 * it did shows in the task later, as it would here.
		 */
		if (!terminal(t) && !t->cancelling && cancel_call(t) == 0)
			t->cancelling = 1;
		mcp_reply(req, json_object());
		return;
	}
	if (terminal(t)) {
		cancel_refused(req->id, t, "the task is already finished");
		return;
	}
	if (t->cancelling) {
		cancel_refused(req->id, t, "the task is already being "
		    "cancelled");
		return;
	}
	if (cancel_call(t) == -1) {
		cancel_refused(req->id, t, "runnerd cannot be told");
		return;
	}
	t->cancelling = 1;
	t->cancel = json_incref(req->id);
}

/*
 * The extension's tasks/update answers a task's inputRequests.  mcpd
 * never asks the client for input (an approval is a person's, out of
 * band), so no key is outstanding and every response is ignored, as
 * the extension says; the update is acknowledged.
 */
void
tasks_update(const struct mcp_req *req)
{
	struct task *t;

	if ((t = task_param(req, tasks_update)) == NULL)
		return;
	if (!json_is_object(json_object_get(req->params, "inputResponses"))) {
		rpc_error(req->id, RPC_INVALID_PARAMS, "Invalid params: "
		    "inputResponses must be an object", NULL);
		return;
	}
	log_debug("%s: tasks/update: no input was asked for, ignored", t->id);
	mcp_reply(req, json_object());
}

/* runnerd's answer to a task's cancel (MSG_TOOL_CANCELLED). */
void
tasks_cancelled(uint64_t reqid, const void *data, size_t len)
{
	const char *outcome, *reason;
	struct task *t;
	json_t *j, *id;
	char text[512];

	if ((t = task_by_reqid(reqid)) == NULL || !t->cancelling) {
		log_debug("cancel answer for no task being cancelled");
		return;
	}
	j = json_loadb(data, len, 0, NULL);
	outcome = json_string_value(json_object_get(j, "outcome"));
	reason = json_string_value(json_object_get(j, "reason"));
	if (reason == NULL)
		reason = "runnerd gave no reason";
	/* The extension's cancel was acknowledged already (id NULL). */
	id = t->cancel;
	t->cancel = NULL;
	t->cancelling = 0;
	if (outcome != NULL && strcmp(outcome, "running") == 0) {
		/* It runs on: its result ends the task, as for any call. */
		snprintf(text, sizeof(text), "not cancelled: %s", reason);
		set_status(t, "working", "%s", text);
		if (id != NULL)
			cancel_refused(id, t, text);
	} else {
		snprintf(text, sizeof(text), "cancelled by the client; %s",
		    outcome != NULL && strcmp(outcome, "withdrawn") == 0 ?
		    "the approval request was withdrawn" : reason);
		finish(t, failure(text), "cancelled", text);
		if (id != NULL)
			rpc_result(id, task_json(t));
	}
	json_decref(id);
	json_decref(j);
}

/* t, or the first legacy task after it: the extension has no list. */
static struct task *
legacy_from(struct task *t)
{
	while (t != NULL && t->modern)
		t = TAILQ_NEXT(t, entry);
	return t;
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
		    (t = task_by_id(json_string_value(cursor), 0)) == NULL) {
			rpc_error(req->id, RPC_INVALID_PARAMS,
			    "Invalid params: unknown cursor", NULL);
			return;
		}
		t = TAILQ_NEXT(t, entry);
	}
	if ((list = json_array()) == NULL)
		fatal("tasks/list");
	for (t = legacy_from(t); t != NULL && n < TASKS_PAGE;
	    t = legacy_from(TAILQ_NEXT(t, entry)), n++) {
		json_array_append_new(list, task_json(t));
		last = t;
	}
	result = json_pack("{s:o}", "tasks", list);
	if (t != NULL && last != NULL)
		json_object_set_new(result, "nextCursor",
		    json_string(last->id));
	rpc_result(req->id, result);
}

/* A task's statuses; from FIRST_TERMINAL on, it has a result. */
static const char *const statuses[] = {
	"working", "input_required", "completed", "failed", "cancelled"
};
#define NSTATUSES	(sizeof(statuses) / sizeof(statuses[0]))
#define FIRST_TERMINAL	2

/* A record of runnerd's store as a task of this table; or NULL, and why. */
static struct task *
task_adopt(const json_t *r, const struct mcp_req *req, const char **why)
{
	const char *id, *status, *message, *tool, *aid;
	const json_t *args, *res;
	struct task *t;
	size_t i;

	id = json_string_value(json_object_get(r, "taskId"));
	status = json_string_value(json_object_get(r, "status"));
	message = json_string_value(json_object_get(r, "message"));
	tool = json_string_value(json_object_get(r, "tool"));
	aid = json_string_value(json_object_get(r, "approval_id"));
	args = json_object_get(r, "arguments");
	res = json_object_get(r, "result");
	for (i = 0; status != NULL && i < NSTATUSES; i++)
		if (strcmp(status, statuses[i]) == 0)
			break;
	*why = "runnerd's record of the task is not one mcpd made";
	if (id == NULL || strcmp(id, json_string_value(json_object_get(
	    req->params, "taskId"))) != 0 || status == NULL ||
	    i == NSTATUSES || message == NULL || tool == NULL ||
	    !json_is_object(args) || (i >= FIRST_TERMINAL && !json_is_object(res)) ||
	    !json_is_boolean(json_object_get(r, "modern")) ||
	    (aid != NULL && strlen(aid) >= sizeof(t->approval_id)))
		return NULL;
	/* The other era's task is as unknown as one never made. */
	*why = "no such task for this client";
	if (json_is_true(json_object_get(r, "modern")) != req->modern)
		return NULL;
	*why = "too many unfinished tasks to take it over";
	if (tasks_room() == -1)
		return NULL;
	*why = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->tool = strdup(tool)) == NULL ||
	    (t->waiters = json_array()) == NULL ||
	    (t->args = json_deep_copy(args)) == NULL)
		fatal("task");
	strlcpy(t->id, id, sizeof(t->id));
	t->modern = req->modern;
	t->status = statuses[i];
	strlcpy(t->message, message, sizeof(t->message));
	t->created = json_integer_value(json_object_get(r, "created"));
	t->updated = json_integer_value(json_object_get(r, "updated"));
	t->ttl = json_integer_value(json_object_get(r, "ttl"));
	strlcpy(t->approval_id, aid != NULL ? aid : "",
	    sizeof(t->approval_id));
	t->result = json_deep_copy(res);
	TAILQ_INSERT_TAIL(&tasks, t, entry);
	ntasks++;
	log_info("%s: taken over from an earlier mcpd of this client", t->id);
	if (terminal(t))
		return t;
	if (t->approval_id[0] != '\0' && send_call(t, MSG_TOOL_AWAIT) == 0)
		set_waiting(t, "taken over from an earlier mcpd of this "
		    "client: ");
	else
		finish(t, failure(MCPD_LOST), "failed", MCPD_LOST);
	return t;
}

/* runnerd's store found the task a lookup asked for (MSG_TASK_RECORD). */
void
tasks_loaded(uint64_t reqid, const void *data, size_t len)
{
	struct lookup *l;
	const char *why = NULL;
	const char *id;
	json_t *r;

	if ((l = lookup_by_reqid(reqid)) == NULL) {
		log_debug("a task record no lookup waits for");
		return;
	}
	id = json_string_value(json_object_get(l->req.params, "taskId"));
	/* Another lookup of the same id may have taken it over already. */
	if (task_by_id(id, l->req.modern) == NULL) {
		r = json_loadb(data, len, 0, NULL);
		if (task_adopt(r, &l->req, &why) == NULL)
			log_warnx("%s: not taken over: %s", id, why);
		json_decref(r);
	}
	lookup_end(l, why);
}
