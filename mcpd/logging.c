/* SPDX-License-Identifier: ISC */
#include <string.h>

#include "log.h"
#include "mcpd.h"

/*
 * MCP logging (server/utilities/logging in each revision): the audit
 * events of the client's own calls, which runnerd sends already
 * scrubbed (MSG_TOOL_LOG), go out as notifications/message.  A legacy
 * session picks its level with logging/setLevel; a 2026-07-28 request,
 * which has no setLevel, names its own in _meta LOG_META and gets no
 * log message without it (that revision's MUST NOT).  Until a level is
 * named nothing is sent: the legacy revisions leave that to the server.
 */
#define LOG_META	"io.modelcontextprotocol/logLevel"
#define LOGGER		"agent-sandbox"

/* RFC 5424's severities (section 6.2.1) as MCP names them, least first. */
static const char *const levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency"
};
#define NLEVELS	(sizeof(levels) / sizeof(levels[0]))

static int	 session_level = LOGLEVEL_NONE;

static int
level_index(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < NLEVELS; i++)
		if (strcmp(levels[i], name) == 0)
			return (int)i;
	return -1;
}

static json_t *
level_names(void)
{
	json_t *a;
	size_t i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < NLEVELS; i++)
		json_array_append_new(a, json_string(levels[i]));
	return a;
}

/* -32602 for a level that is not one of levels[] (all revisions). */
static void
bad_level(const json_t *id, const char *what)
{
	rpc_error(id, RPC_INVALID_PARAMS, what, json_pack("{s:o}",
	    "levels", level_names()));
}

/* logging/setLevel (legacy revisions). */
void
logging_set_level(const struct mcp_req *req)
{
	const char *name;
	int i;

	name = json_string_value(json_object_get(req->params, "level"));
	if ((i = level_index(name)) == -1) {
		bad_level(req->id, "Invalid params: level must be one of "
		    "RFC 5424's, as MCP names them");
		return;
	}
	session_level = i;
	log_debug("client log level: %s", levels[i]);
	mcp_reply(req, json_object());
}

/*
 * Sets req->log_level: a 2026-07-28 request's own level, or
 * LOGLEVEL_NONE; a legacy one's is the session's (LOGLEVEL_SESSION).
 * -1 when the level named is unknown (the error is sent).
 */
int
logging_request_level(struct mcp_req *req)
{
	json_t *v;

	req->log_level = req->modern ? LOGLEVEL_NONE : LOGLEVEL_SESSION;
	if (!req->modern || (v = json_object_get(json_object_get(req->params,
	    "_meta"), LOG_META)) == NULL)
		return 0;
	if ((req->log_level = level_index(json_string_value(v))) == -1) {
		bad_level(req->id, "Invalid params: _meta " LOG_META
		    " must be one of RFC 5424's levels, as MCP names them");
		return -1;
	}
	return 0;
}

static int
effective(int level)
{
	return level == LOGLEVEL_SESSION ? session_level : level;
}

/* 1 when runnerd should send a call's events (MSG_TOOL_CALL's "log"). */
int
logging_wanted(int level)
{
	return effective(level) != LOGLEVEL_NONE;
}

/*
 * One of a call's events from runnerd (p, borrowed), for a call whose
 * level is level: sent when at or above it.
 */
void
logging_relay(int level, const char *rid, json_t *p)
{
	const char *name, *event;
	json_t *fields;
	int i;

	name = json_string_value(json_object_get(p, "level"));
	event = json_string_value(json_object_get(p, "event"));
	fields = json_object_get(p, "fields");
	if ((i = level_index(name)) == -1 || event == NULL ||
	    !json_is_object(fields)) {
		log_warnx("%s: malformed log event from runnerd", rid);
		return;
	}
	if ((level = effective(level)) == LOGLEVEL_NONE || i < level)
		return;
	rpc_notify("notifications/message", json_pack("{s:s, s:s, s:{s:s, "
	    "s:s, s:O}}", "level", levels[i], "logger", LOGGER, "data",
	    "event", event, "request_id", rid, "fields", fields));
}
