/* SPDX-License-Identifier: ISC */
/*
 * control.sock: operators, through approvalctl.  The only place an
 * approval can be granted; the peer's uid (SO_PEERCRED) is who granted
 * it.  The server answers any other request; the peer stays.
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "approvald.h"
#include "log.h"

#define WATCHERS_MAX	32

static uint32_t	 watchers[WATCHERS_MAX];	/* conn ids; 0 is free */

static int
send_end(struct conn *c, uint64_t reqid)
{
	return conn_send(c, MSG_CTL_END, reqid, -1, NULL, 0);
}

/* approval_id from the request, or NULL after saying why. */
static const char *
approval_id(struct conn *c, const struct msg *m, const json_t *j)
{
	const char *id = json_string_value(json_object_get(j, "approval_id"));

	if (id == NULL)
		conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s: approval_id is "
		    "required", msg_type_name(m->hdr.type));
	return id;
}

static int
ctl_list(struct conn *c, struct msg *m, json_t *j)
{
	json_t *a;

	if ((a = db_list(json_is_true(json_object_get(j, "all")))) == NULL)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "cannot read the approvals");
	return conn_send_stream(c, MSG_CTL_ENTRY, MSG_CTL_END, m->hdr.reqid,
	    a);
}

static int
ctl_show(struct conn *c, struct msg *m, json_t *j)
{
	const char *id;
	json_t *e;
	int r;

	if ((id = approval_id(c, m, j)) == NULL)
		return 0;
	if ((e = db_get(id, 1)) == NULL)
		r = conn_error(c, m->hdr.reqid, ERR_DENIED, "approval %.40s is "
		    "unknown", id);
	else if ((r = conn_send_json(c, MSG_CTL_ENTRY, m->hdr.reqid, -1,
	    e)) == 0)
		r = send_end(c, m->hdr.reqid);
	return r;
}

static void
operator_of(const struct conn *c, struct operator *op)
{
	struct passwd *pw;

	op->uid = c->cred.uid;
	op->groups = c->cred.groups;
	op->ngroups = c->cred.ngroups;
	/* Only root, and only where the configuration says so. */
	op->self_approves = op->uid == 0 && strcmp(approvald_conf.approvald.
	    self_approval, "root") == 0;
	if ((pw = getpwuid(op->uid)) != NULL)
		strlcpy(op->user, pw->pw_name, sizeof(op->user));
	else
		snprintf(op->user, sizeof(op->user), "uid %u",
		    (unsigned)op->uid);
}

static int
ctl_decide(struct conn *c, struct msg *m, json_t *j, int approve)
{
	struct operator op;
	char why[256];
	const char *id, *reason;
	int r, any;

	if ((id = approval_id(c, m, j)) == NULL)
		return 0;
	reason = json_string_value(json_object_get(j, "reason"));
	operator_of(c, &op);
	any = approve && json_is_true(json_object_get(j, "any_client"));
	switch (db_review(id, approve, any, &op, reason, why, sizeof(why))) {
	case 0:
		log_info("%.40s %s by %s (uid %u)%s", id, approve ?
		    "approved" : "denied", op.user, (unsigned)op.uid, any ?
		    " for any client" : "");
		if ((r = conn_send_json(c, MSG_CTL_ENTRY, m->hdr.reqid, -1,
		    db_get(id, 0))) == 0)
			r = send_end(c, m->hdr.reqid);
		break;
	case 1:
		r = conn_error(c, m->hdr.reqid, ERR_DENIED, "%s", why);
		break;
	default:
		r = conn_error(c, m->hdr.reqid, ERR_UNAVAIL, "cannot record "
		    "the decision (audit or database unavailable)");
		break;
	}
	return r;
}

static int
ctl_approve(struct conn *c, struct msg *m, json_t *j)
{
	return ctl_decide(c, m, j, 1);
}

static int
ctl_deny(struct conn *c, struct msg *m, json_t *j)
{
	return ctl_decide(c, m, j, 0);
}

/*
 * The live approvals, then each change, stream to the watcher as
 * entries until it hangs up.  Both happen in this turn of the event
 * loop, and changes notify after their commit: none falls between.
 */
static int
ctl_watch(struct conn *c, struct msg *m, json_t *j)
{
	json_t *live, *e;
	size_t i, slot;

	(void)j;
	for (slot = 0; slot < WATCHERS_MAX && watchers[slot] != 0; slot++)
		;
	if (slot == WATCHERS_MAX)
		return conn_error(c, m->hdr.reqid, ERR_UNAVAIL,
		    "too many watchers");
	if ((live = db_list(0)) == NULL)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "cannot read the approvals");
	json_array_foreach(live, i, e)
		if (conn_send_json(c, MSG_CTL_ENTRY, 0, -1,
		    json_incref(e)) == -1) {
			json_decref(live);
			return -1;
		}
	json_decref(live);
	watchers[slot] = c->id;
	return 0;
}

void
control_closed(struct conn *c)
{
	size_t i;

	for (i = 0; i < WATCHERS_MAX; i++)
		if (watchers[i] == c->id)
			watchers[i] = 0;
}

/* Called after every committed change of an approval. */
void
control_notify(const char *id)
{
	struct conn *c;
	json_t *e;
	size_t i;

	if ((e = db_get(id, 0)) == NULL)
		return;
	for (i = 0; i < WATCHERS_MAX; i++) {
		if (watchers[i] == 0 || (c = conn_find(watchers[i])) == NULL)
			continue;
		conn_send_json(c, MSG_CTL_ENTRY, 0, -1, json_incref(e));
	}
	json_decref(e);
}

const struct msg_rule approvald_control_rules[] = {
	{ MSG_CTL_LIST, PAYLOAD_JSON_OPT, 0, 0, NULL, ctl_list },
	{ MSG_CTL_SHOW, PAYLOAD_JSON, 0, 0, NULL, ctl_show },
	{ MSG_CTL_APPROVE, PAYLOAD_JSON, 0, 0, NULL, ctl_approve },
	{ MSG_CTL_DENY, PAYLOAD_JSON, 0, 0, NULL, ctl_deny },
	{ MSG_CTL_WATCH, PAYLOAD_NONE, 0, 0, NULL, ctl_watch },
	{ 0, 0, 0, 0, NULL, NULL }
};
