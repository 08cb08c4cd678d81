/* SPDX-License-Identifier: ISC */
/*
 * runner-control.sock: operators, through runnerctl.  They list the
 * sessions and copy files into and out of any of them with write_file's
 * and read_file's own checks and agent requests (session.c).  The
 * bytes travel in the frames: runnerctl alone touches the operator's
 * files.  The server answers any other request; the peer stays.
 */

#include "runnerd.h"
#include "tools.h"

/* The answer to a put or get: entry, or (entry NULL) why it failed. */
void
control_reply(uint32_t connid, uint64_t reqid, json_t *entry, const char *why)
{
	struct conn *c;

	if ((c = conn_find(connid)) == NULL) {
		json_decref(entry);	/* runnerctl has gone */
		return;
	}
	if (entry == NULL)
		conn_error(c, reqid, ERR_DENIED, "%s", why);
	else if (conn_send_json(c, MSG_RCTL_ENTRY, reqid, -1, entry) == 0)
		conn_send(c, MSG_RCTL_END, reqid, -1, NULL, 0);
}

static int
ctl_sessions(struct conn *c, struct msg *m, json_t *j)
{
	json_t *a;

	(void)j;
	if ((a = session_list()) == NULL)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "out of memory");
	return conn_send_stream(c, MSG_RCTL_ENTRY, MSG_RCTL_END, m->hdr.reqid,
	    a);
}

/* put and get: the tool's arguments, checked as the tool's are. */
static int
ctl_copy(struct conn *c, struct msg *m, json_t *args, const char *tool)
{
	char why[512];

	if (!json_is_string(json_object_get(args, "session_id")))
		return conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s: a JSON "
		    "object with session_id is required",
		    msg_type_name(m->hdr.type));
	if (tool_validate(tool_index(tool), args, why, sizeof(why)) == -1 ||
	    session_operator(c->id, m->hdr.reqid, c->cred.uid, tool, args,
	    why, sizeof(why)) == -1)
		return conn_error(c, m->hdr.reqid, ERR_DENIED, "%s", why);
	return 0;
}

static int
ctl_put(struct conn *c, struct msg *m, json_t *j)
{
	return ctl_copy(c, m, j, "write_file");
}

static int
ctl_get(struct conn *c, struct msg *m, json_t *j)
{
	return ctl_copy(c, m, j, "read_file");
}

const struct msg_rule runnerd_control_rules[] = {
	{ MSG_RCTL_SESSIONS, PAYLOAD_NONE, 0, 0, NULL, ctl_sessions },
	{ MSG_RCTL_PUT, PAYLOAD_JSON, 0, 0, NULL, ctl_put },
	{ MSG_RCTL_GET, PAYLOAD_JSON, 0, 0, NULL, ctl_get },
	{ 0, 0, 0, 0, NULL, NULL }
};
