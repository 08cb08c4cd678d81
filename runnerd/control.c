/*
 * runner-control.sock: operators, through runnerctl.  They list the
 * sessions and copy files into and out of any of them with write_file's
 * and read_file's own checks and agent requests (session.c).  The
 * bytes travel in the frames: runnerctl alone touches the operator's
 * files.  Unknown requests are answered "denied" and the peer stays.
 */
#include <stdlib.h>
#include <string.h>

#include "cjson.h"
#include "log.h"
#include "runnerd.h"
#include "tools.h"

static int
send_json(struct conn *c, uint32_t type, uint64_t reqid, json_t *j)
{
	char *text;
	int r;

	text = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (text == NULL)
		return conn_error(c, reqid, ERR_INTERNAL, "out of memory");
	r = conn_send(c, type, reqid, -1, text, strlen(text));
	free(text);
	return r;
}

static int
send_end(struct conn *c, uint64_t reqid)
{
	return conn_send(c, MSG_RCTL_END, reqid, -1, NULL, 0);
}

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
	else if (send_json(c, MSG_RCTL_ENTRY, reqid, entry) == 0)
		send_end(c, reqid);
}

static int
ctl_sessions(struct conn *c, struct msg *m)
{
	json_t *a, *e;
	size_t i;

	if (m->len != 0)
		return conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s: no payload "
		    "expected", msg_type_name(m->hdr.type));
	if ((a = session_list()) == NULL)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "out of memory");
	json_array_foreach(a, i, e)
		if (send_json(c, MSG_RCTL_ENTRY, m->hdr.reqid,
		    json_incref(e)) == -1)
			break;
	json_decref(a);
	return send_end(c, m->hdr.reqid);
}

/* put and get: the tool's arguments, checked as the tool's are. */
static int
ctl_copy(struct conn *c, struct msg *m, const char *tool)
{
	json_t *args;
	char why[512];
	int r = 0;

	if ((args = cjson_parse(m->data, m->len, why, sizeof(why))) == NULL ||
	    !json_is_object(args) ||
	    !json_is_string(json_object_get(args, "session_id"))) {
		json_decref(args);
		return conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s: a JSON "
		    "object with session_id is required",
		    msg_type_name(m->hdr.type));
	}
	if (tool_validate(tool_index(tool), args, why, sizeof(why)) == -1 ||
	    session_operator(c->id, m->hdr.reqid, c->cred.uid, tool, args,
	    why, sizeof(why)) == -1)
		r = conn_error(c, m->hdr.reqid, ERR_DENIED, "%s", why);
	json_decref(args);
	return r;
}

int
runnerd_dispatch_control(struct conn *c, struct msg *m)
{
	if (m->fd != -1)
		return -1;
	switch (m->hdr.type) {
	case MSG_RCTL_SESSIONS:
		return ctl_sessions(c, m);
	case MSG_RCTL_PUT:
		return ctl_copy(c, m, "write_file");
	case MSG_RCTL_GET:
		return ctl_copy(c, m, "read_file");
	}
	return conn_error(c, m->hdr.reqid, ERR_DENIED, "%s: denied",
	    msg_type_name(m->hdr.type));
}
