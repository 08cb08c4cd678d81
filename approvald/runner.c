/* SPDX-License-Identifier: ISC */
/*
 * approval.sock: what runnerd may ask.  A decision, a pending approval,
 * a spend, where an approval stands and its withdrawal by the client
 * that asked; nothing here approves.  A pending approval records the
 * MCP client that asked (runnerd names it), and only that client may
 * spend it unless an operator approved it for any.  The server answers
 * any other message: runnerd has no business sending it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approvald.h"
#include "log.h"

/* Lower-case SHA-256 hex, or JSON null (no plan bound). */
static int
plan_digest_arg(const json_t *j, const char **out)
{
	const json_t *v = json_object_get(j, "plan_digest");
	const char *s;

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!sha256_hex_ok(s = json_string_value(v)))
		return -1;
	*out = s;
	return 0;
}

/*
 * The MCP client runnerd makes the call for: the uid of its runner.sock
 * connection and runnerd's id for that connection.  0, or -1 after a
 * reply saying the message is malformed.
 */
static int
client_arg(struct conn *c, const struct msg *m, const json_t *j,
    struct requester *by)
{
	const json_t *cl = json_object_get(j, "client");
	const json_t *uid = json_object_get(cl, "uid");
	const char *id = json_string_value(json_object_get(cl, "id"));

	if (id == NULL || *id == '\0' || strlen(id) >= sizeof(by->client) ||
	    !json_is_integer(uid) || json_integer_value(uid) < 0 ||
	    json_integer_value(uid) >= (json_int_t)(uid_t)-1) {
		conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s: needs the client "
		    "as {\"uid\", \"id\"}", msg_type_name(m->hdr.type));
		return -1;
	}
	by->uid = (uid_t)json_integer_value(uid);
	strlcpy(by->client, id, sizeof(by->client));
	return 0;
}

/*
 * The call in j under the current policy.  0 with d filled, or -1
 * after a reply saying the message is malformed.
 */
static int
call_decide(struct conn *c, const struct msg *m, json_t *j,
    const char **tool, struct decision *d)
{
	*tool = json_string_value(json_object_get(j, "tool"));
	if (decide(approvald_policy, *tool, json_object_get(j, "arguments"),
	    d) == -1) {
		conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s: needs a tool "
		    "name and an arguments object", msg_type_name(m->hdr.type));
		return -1;
	}
	return 0;
}

static int
runner_decide(struct conn *c, struct msg *m, json_t *j)
{
	struct decision d;
	const char *tool;

	if (call_decide(c, m, j, &tool, &d) == -1)
		return 0;
	log_debug("decide %s: %s", tool, d.reason);
	return conn_send_json(c, MSG_DECISION, m->hdr.reqid, -1,
	    decision_json(approvald_policy, tool, &d));
}

/* A call the policy says needs an approval, or a refusal saying why. */
static int
needs_approval(struct conn *c, const struct msg *m, const char *tool,
    const struct decision *d)
{
	if (d->verdict == VERDICT_APPROVAL)
		return 1;
	conn_error(c, m->hdr.reqid, ERR_DENIED, "%s", d->verdict ==
	    VERDICT_DENY ? d->reason : "tool needs no approval");
	log_info("%s for %s refused: %s", msg_type_name(m->hdr.type), tool,
	    d->verdict == VERDICT_DENY ? d->reason : "needs no approval");
	return 0;
}

static int
runner_request(struct conn *c, struct msg *m, json_t *j)
{
	char digest[SHA256_HEX_LEN + 1], id[APPROVAL_ID_LEN];
	char exp[32], *canon = NULL, *summary = NULL, *rules = NULL;
	struct approval_req rq;
	struct decision d;
	const char *tool, *plan, *text;
	json_t *marked = NULL, *requirement = NULL;
	time_t expires;
	int r = 0;

	if (call_decide(c, m, j, &tool, &d) == -1)
		goto done;
	text = json_string_value(json_object_get(j, "plan_text"));
	if (plan_digest_arg(j, &plan) == -1) {
		conn_error(c, m->hdr.reqid, ERR_BADMSG, "plan_digest: "
		    "expected SHA-256 hex or null");
		goto done;
	}
	memset(&rq, 0, sizeof(rq));
	if (client_arg(c, m, j, &rq.by) == -1 ||
	    !needs_approval(c, m, tool, &d))
		goto done;
	/* Checked here too, as runnerd's refusal is not the gate. */
	if (json_array_size(json_object_get(json_object_get(j, "summary"),
	    "code")) > 0 && !provisioners_approved(approvald_policy)) {
		conn_error(c, m->hdr.reqid, ERR_DENIED, "the plan runs code at "
		    "apply time and the policy's terraform.provisioners is "
		    "deny");
		goto done;
	}
	if (params_digest(tool, json_object_get(j, "arguments"), digest,
	    &canon) == -1 || (marked = mark_destructive(approvald_policy,
	    json_object_get(j, "summary"), text)) == NULL ||
	    (summary = json_dumps(marked, JSON_COMPACT)) == NULL) {
		r = conn_error(c, m->hdr.reqid, ERR_INTERNAL, "out of memory");
		goto done;
	}
	rq.tool = tool;
	rq.arguments = canon;
	rq.params_digest = digest;
	rq.plan_digest = plan;
	rq.summary = summary;
	rq.plan_text = text != NULL ? text : "";
	rq.reqid = m->hdr.reqid;
	rq.ttl = approvald_policy->approval_ttl;
	if ((requirement = policy_requirement(policy_tool(approvald_policy,
	    tool))) == NULL || (rules = json_dumps(requirement,
	    JSON_COMPACT)) == NULL) {
		r = conn_error(c, m->hdr.reqid, ERR_INTERNAL, "out of memory");
		goto done;
	}
	rq.requirement = rules;
	if (db_create(&rq, id, &expires) == -1) {
		r = conn_error(c, m->hdr.reqid, ERR_UNAVAIL, "cannot record "
		    "the approval request (audit or database unavailable)");
		goto done;
	}
	format_time(expires, exp, sizeof(exp));
	log_info("%s: pending approval for %s", id, tool);
	r = conn_send_json(c, MSG_APPROVAL_CREATED, m->hdr.reqid, -1,
	    json_pack("{s:s, s:s}", "approval_id", id, "expires_at", exp));
done:
	free(canon);
	free(summary);
	free(rules);
	json_decref(requirement);
	json_decref(marked);
	return r;
}

/* The call is decided again: a policy reloaded since may refuse it. */
static int
runner_spend(struct conn *c, struct msg *m, json_t *j)
{
	char digest[SHA256_HEX_LEN + 1], bound[SHA256_HEX_LEN + 1];
	char why[256];
	struct requester by;
	struct decision d;
	const char *tool, *plan, *id;

	if (call_decide(c, m, j, &tool, &d) == -1 ||
	    client_arg(c, m, j, &by) == -1)
		return 0;
	id = json_string_value(json_object_get(j, "approval_id"));
	if (id == NULL || plan_digest_arg(j, &plan) == -1) {
		return conn_error(c, m->hdr.reqid, ERR_BADMSG, "APPROVAL_SPEND: "
		    "needs approval_id and, if any, plan_digest (SHA-256 hex "
		    "or null)");
	}
	if (!needs_approval(c, m, tool, &d))
		return 0;
	if (params_digest(tool, json_object_get(j, "arguments"), digest,
	    NULL) == -1)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "out of memory");
	switch (db_spend(id, &by, digest, plan, json_object_get(j, "plan_digest") !=
	    NULL, m->hdr.reqid, bound, why, sizeof(why))) {
	case SPEND_OK:
		log_info("%.40s: spent by %s", id, tool);
		return conn_send_json(c, MSG_APPROVAL_SPENT, m->hdr.reqid, -1,
		    json_pack("{s:s, s:s?}", "approval_id", id, "plan_digest",
		    bound[0] != '\0' ? bound : NULL));
	case SPEND_REFUSED:
		log_info("spend refused: %s", why);
		return conn_error(c, m->hdr.reqid, ERR_DENIED, "%s", why);
	case SPEND_ERROR:
		break;
	}
	return conn_error(c, m->hdr.reqid, ERR_UNAVAIL, "cannot spend the "
	    "approval (audit or database unavailable)");
}

/*
 * Where an approval stands, as approvalctl would show it: the
 * APPROVAL_STATE payload.  Unknown is a state too: any MSG_ERROR means
 * try again later.
 */
json_t *
approval_state(const char *id)
{
	json_t *e, *reply;

	if ((e = db_get(id, 0)) == NULL)
		return json_pack("{s:s, s:s, s:s}", "approval_id", id, "state",
		    "unknown", "reason", "no such approval");
	reply = json_pack("{s:s, s:O, s:O}", "approval_id", id, "state",
	    json_object_get(e, "state"), "reason", json_object_get(e,
	    "reason"));
	json_decref(e);
	return reply;
}

static int
state_reply(struct conn *c, const struct msg *m, const char *id)
{
	return conn_send_json(c, MSG_APPROVAL_STATE, m->hdr.reqid, -1,
	    approval_state(id));
}

static const char *
approval_id_arg(struct conn *c, const struct msg *m, const json_t *j)
{
	const char *id;

	if ((id = json_string_value(json_object_get(j, "approval_id"))) ==
	    NULL || strlen(id) >= APPROVAL_ID_LEN) {
		conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s: needs an "
		    "approval_id", msg_type_name(m->hdr.type));
		return NULL;
	}
	return id;
}

/*
 * runnerd waits for a person's decision on a call's behalf.  With
 * "subscribe", a pending approval's next change comes by itself
 * (subscribe.c), and the answer says whether it will.
 */
static int
runner_status(struct conn *c, struct msg *m, json_t *j)
{
	const char *id, *state;
	json_t *reply;

	if ((id = approval_id_arg(c, m, j)) == NULL)
		return 0;
	if ((reply = approval_state(id)) == NULL)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "out of memory");
	state = json_string_value(json_object_get(reply, "state"));
	if (json_is_true(json_object_get(j, "subscribe")) &&
	    strcmp(state, "pending") == 0)
		json_object_set_new(reply, "subscribed",
		    json_boolean(subs_add(c, m->hdr.reqid, id)));
	return conn_send_json(c, MSG_APPROVAL_STATE, m->hdr.reqid, -1, reply);
}

/*
 * The call waiting for it was cancelled: nothing may spend it now.
 * One already settled stays as it is, and its state is the answer.
 */
static int
runner_withdraw(struct conn *c, struct msg *m, json_t *j)
{
	struct operator by;
	const char *id;
	char why[256];

	if ((id = approval_id_arg(c, m, j)) == NULL)
		return 0;
	/* Its answer is this one: the wait is over. */
	subs_drop(id);
	memset(&by, 0, sizeof(by));
	by.uid = c->cred.uid;
	strlcpy(by.user, "the client, through runnerd", sizeof(by.user));
	switch (db_withdraw(id, &by, why, sizeof(why))) {
	case 0:
		log_info("%.40s: withdrawn by its client", id);
		break;
	case 1:
		log_info("withdrawal refused: %s", why);
		break;
	default:
		return conn_error(c, m->hdr.reqid, ERR_UNAVAIL, "cannot "
		    "withdraw the approval (audit or database unavailable)");
	}
	return state_reply(c, m, id);
}

const struct msg_rule approvald_runnerd_rules[] = {
	{ MSG_DECIDE, PAYLOAD_JSON, 0, 0, NULL, runner_decide },
	{ MSG_APPROVAL_REQUEST, PAYLOAD_JSON, 0, 0, NULL, runner_request },
	{ MSG_APPROVAL_SPEND, PAYLOAD_JSON, 0, 0, NULL, runner_spend },
	{ MSG_APPROVAL_STATUS, PAYLOAD_JSON, 0, 0, NULL, runner_status },
	{ MSG_APPROVAL_WITHDRAW, PAYLOAD_JSON, 0, 0, NULL, runner_withdraw },
	{ 0, 0, 0, 0, NULL, NULL }
};
