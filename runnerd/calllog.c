/* SPDX-License-Identifier: ISC */
/*
 * MCP log messages for a call whose client asked for them (MSG_TOOL_CALL's
 * "log"): each audit event runnerd records for the call also goes, as
 * MSG_TOOL_LOG, to the one mcpd connection the call came on, which
 * relays it as notifications/message.  The fields are scrubbed by the
 * audit log's own rules (common/scrub.c) before they leave runnerd, so
 * a client sees no more than auditctl would show, and only of its own
 * calls.  The level says what the event means to the client, in MCP's
 * names for RFC 5424's severities: info for the normal trail, notice
 * for a call stopped to wait for a person, warning for a refusal,
 * error for a failure.
 */
#include <string.h>

#include "audit.h"
#include "log.h"
#include "runnerd.h"
#include "scrub.h"

static int
field_is(const json_t *fields, const char *key, const char *value)
{
	const char *v = json_string_value(json_object_get(fields, key));

	return v != NULL && strcmp(v, value) == 0;
}

static const char *
event_level(const char *event, const json_t *fields)
{
	if (strcmp(event, "tool.denied") == 0)
		return "warning";
	if (strcmp(event, "tool.failed") == 0 ||
	    strcmp(event, "credential.revoke_failed") == 0)
		return "error";
	if (strcmp(event, "guardrail.decision") == 0)
		return field_is(fields, "decision", "deny") ? "warning" :
		    "info";
	if (strcmp(event, "tool.result") == 0) {
		/* Stopped at a pending approval: a person has to act. */
		if (json_is_string(json_object_get(fields, "approval_id")))
			return "notice";
		return json_is_true(json_object_get(fields, "isError")) ?
		    "error" : "info";
	}
	return "info";
}

/* Shows event (fields borrowed, may be NULL) to the client of call id. */
void
call_log(uint64_t id, const char *event, const json_t *fields)
{
	char rid[REQID_STR_LEN];
	struct conn *c;
	struct call *k;
	json_t *clean;

	if ((k = call_find(id)) == NULL || !k->log || k->conn == 0 ||
	    (c = conn_find(k->conn)) == NULL)
		return;
	clean = fields != NULL ? scrub_value(fields) : json_object();
	if (clean == NULL) {
		log_warnx("log for %016llx: out of memory",
		    (unsigned long long)id);
		return;
	}
	reqid_format(id, rid);
	if (conn_send_json(c, MSG_TOOL_LOG, id, -1, json_pack(
	    "{s:s, s:s, s:s, s:o}", "level", event_level(event, fields),
	    "event", event, "request_id", rid, "fields", clean)) == -1)
		log_warn("log for %s", rid);
}
