/*
 * control.sock: operators, through approvalctl.  The only place an
 * approval can be granted; the peer's uid (SO_PEERCRED) is who granted
 * it.  Unknown requests are answered "denied" and the peer stays.
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
ctl_list(struct conn *c, struct msg *m)
{
	json_t *j, *a, *e;
	size_t i;
	int all = 0;

	if (m->len > 0) {
		if ((j = parse_object(c, m)) == NULL)
			return 0;
		all = json_is_true(json_object_get(j, "all"));
		json_decref(j);
	}
	if ((a = db_list(all)) == NULL)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "cannot read the approvals");
	json_array_foreach(a, i, e)
		if (reply_json(c, MSG_CTL_ENTRY, m->hdr.reqid,
		    json_incref(e)) == -1)
			break;
	json_decref(a);
	return send_end(c, m->hdr.reqid);
}

static int
ctl_show(struct conn *c, struct msg *m)
{
	const char *id;
	json_t *j, *e = NULL;
	int r = 0;

	if ((j = parse_object(c, m)) == NULL)
		return 0;
	if ((id = approval_id(c, m, j)) == NULL)
		goto done;
	if ((e = db_get(id, 1)) == NULL)
		r = conn_error(c, m->hdr.reqid, ERR_DENIED, "approval %.40s is "
		    "unknown", id);
	else if ((r = reply_json(c, MSG_CTL_ENTRY, m->hdr.reqid, e)) == 0)
		r = send_end(c, m->hdr.reqid);
done:
	json_decref(j);
	return r;
}

static void
operator_of(const struct conn *c, struct operator *op)
{
	struct passwd *pw;

	op->uid = c->cred.uid;
	if ((pw = getpwuid(op->uid)) != NULL)
		strlcpy(op->user, pw->pw_name, sizeof(op->user));
	else
		snprintf(op->user, sizeof(op->user), "uid %u",
		    (unsigned)op->uid);
}

static int
ctl_decide(struct conn *c, struct msg *m, int approve)
{
	struct operator op;
	char why[256];
	const char *id, *reason;
	json_t *j;
	int r = 0;

	if ((j = parse_object(c, m)) == NULL)
		return 0;
	if ((id = approval_id(c, m, j)) == NULL)
		goto done;
	reason = json_string_value(json_object_get(j, "reason"));
	operator_of(c, &op);
	switch (db_decide(id, approve, &op, reason, why, sizeof(why))) {
	case 0:
		log_info("%.40s %s by %s (uid %u)", id, approve ? "approved" :
		    "denied", op.user, (unsigned)op.uid);
		if ((r = reply_json(c, MSG_CTL_ENTRY, m->hdr.reqid,
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
done:
	json_decref(j);
	return r;
}

/* Changes stream to the watcher as entries until it hangs up. */
static int
ctl_watch(struct conn *c, struct msg *m)
{
	size_t i;

	for (i = 0; i < WATCHERS_MAX; i++)
		if (watchers[i] == 0) {
			watchers[i] = c->id;
			return 0;
		}
	return conn_error(c, m->hdr.reqid, ERR_UNAVAIL, "too many watchers");
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
		reply_json(c, MSG_CTL_ENTRY, 0, json_incref(e));
	}
	json_decref(e);
}

int
approvald_dispatch_control(struct conn *c, struct msg *m)
{
	switch (m->hdr.type) {
	case MSG_CTL_LIST:
		return ctl_list(c, m);
	case MSG_CTL_SHOW:
		return ctl_show(c, m);
	case MSG_CTL_APPROVE:
		return ctl_decide(c, m, 1);
	case MSG_CTL_DENY:
		return ctl_decide(c, m, 0);
	case MSG_CTL_WATCH:
		return ctl_watch(c, m);
	}
	return conn_error(c, m->hdr.reqid, ERR_DENIED, "%s: denied",
	    msg_type_name(m->hdr.type));
}
