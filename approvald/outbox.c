/* SPDX-License-Identifier: ISC */
/*
 * The durable outbox.  Each change of an approval writes one row, in
 * the change's own transaction, holding the notification's body as it
 * will be sent: a Standard Webhooks payload ({"type", "timestamp",
 * "data"}) under a stable event id.  approvald has no network: notifyd
 * fetches the rows over notify.sock and acknowledges each one once
 * every webhook has it, and only then is the row removed.  A row not
 * acknowledged is sent again when notifyd says hello again, so
 * delivery is at least once, across restarts of either side.  Until
 * then notifyd also acknowledges each webhook that answered, which the
 * row keeps and carries when sent again, so a restart resends a row
 * only to the webhooks that did not have it.  Nothing
 * in a row is a capability: the parameters are a digest, and the
 * commands only name what an operator runs.
 */
#include <sys/random.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approvald.h"
#include "log.h"

#define OUTBOX_BATCH	256	/* rows a turn of the event loop sends */

static uint32_t	 notifier;	/* notifyd's conn id; 0: none */
static int64_t	 sent_upto;	/* seq of the last row sent to it */

/* runnerd's summary, briefly: whether it destroys, and the counts. */
static json_t *
summary_brief(const json_t *e)
{
	static const char *const counts[] = {
		"create", "update", "delete", "replace", NULL
	};
	const json_t *s = json_object_get(e, "summary"), *cs;
	json_t *out;
	size_t i;

	if (!json_is_object(cs = json_object_get(s, "counts")))
		cs = s;
	out = json_object();
	for (i = 0; counts[i] != NULL; i++)
		if (json_is_integer(json_object_get(cs, counts[i])))
			json_object_set(out, counts[i], json_object_get(cs,
			    counts[i]));
	return json_pack("{s:b, s:o}", "destructive",
	    json_is_true(json_object_get(e, "destructive")), "counts", out);
}

/* The approvers so far, by name: who, never how to act for them. */
static json_t *
approvers_brief(const json_t *e)
{
	const json_t *r;
	json_t *a = json_array();
	size_t i;

	json_array_foreach(json_object_get(e, "reviews"), i, r)
		json_array_append_new(a, json_pack("{s:O, s:O, s:O}", "user",
		    json_object_get(r, "user"), "uid", json_object_get(r,
		    "uid"), "verdict", json_object_get(r, "verdict")));
	return a;
}

/* The body of the notification of event on approval id, as sent. */
static char *
payload_of(const char *id, const char *event)
{
	char now[32], show[128], approve[128], deny[128], *text;
	json_t *e, *body;

	if ((e = db_get(id, 1)) == NULL)
		return NULL;
	format_time(time(NULL), now, sizeof(now));
	snprintf(show, sizeof(show), "approvalctl show %s", id);
	snprintf(approve, sizeof(approve), "approvalctl approve %s", id);
	snprintf(deny, sizeof(deny), "approvalctl deny %s", id);
	body = json_pack("{s:s, s:s, s:{s:s, s:O, s:O, s:O, s:O, s:o, s:O,"
	    " s:O, s:O?, s:o, s:{s:s, s:s, s:s}}}", "type", event,
	    "timestamp", now, "data", "approval_id", id,
	    "state", json_object_get(e, "state"),
	    "tool", json_object_get(e, "tool"),
	    "params_digest", json_object_get(e, "params_digest"),
	    "plan_digest", json_object_get(e, "plan_digest"),
	    "summary", summary_brief(e),
	    "requester", json_object_get(e, "requester"),
	    "expires_at", json_object_get(e, "expires_at"),
	    "missing", json_object_get(e, "missing"),
	    "approvers", approvers_brief(e),
	    "commands", "show", show, "approve", approve, "deny", deny);
	json_decref(e);
	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	return text;
}

/* In the change's transaction (db.c): its row, when notifyd is set up. */
int
outbox_write(const char *id, const char *event)
{
	char event_id[4 + 32 + 1], *payload;
	unsigned char r[16];
	int rc;

	if (approvald_conf.notifyd.nwebhooks == 0)
		return 0;
	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		fatal("getrandom");
	memcpy(event_id, "msg_", 4);
	hex_encode(r, sizeof(r), event_id + 4);
	if ((payload = payload_of(id, event)) == NULL)
		return -1;
	rc = db_outbox_insert(event_id, event, id, payload);
	free(payload);
	return rc;
}

/* Rows notifyd has not been sent yet, after a commit or its hello. */
void
outbox_flush(void)
{
	struct conn *c;
	json_t *rows, *row;
	size_t i;

	if (notifier == 0 || (c = conn_find(notifier)) == NULL)
		return;
	if ((rows = db_outbox_since(sent_upto, OUTBOX_BATCH, &sent_upto)) ==
	    NULL) {
		log_warnx("outbox: cannot read it");
		return;
	}
	json_array_foreach(rows, i, row)
		if (conn_send_json(c, MSG_NOTIFY_EVENT, 0, -1,
		    json_incref(row)) == -1)
			break;
	/* More than a batch: the rest go after the next change or hello. */
	json_decref(rows);
}

static int
notify_hello(struct conn *c, struct msg *m, json_t *j)
{
	(void)m;
	(void)j;
	if (notifier != 0 && notifier != c->id)
		log_warnx("notify.sock: peer %u replaces peer %u", c->id,
		    notifier);
	notifier = c->id;
	sent_upto = 0;
	outbox_flush();
	return 0;
}

/* NOTIFY_ACK: the row reached one webhook ("webhook"), or every one. */
static int
notify_ack(struct conn *c, struct msg *m, json_t *j)
{
	const char *id = json_string_value(json_object_get(j, "event_id"));
	const char *hook = json_string_value(json_object_get(j, "webhook"));

	if (id == NULL || (json_object_get(j, "webhook") != NULL &&
	    !sha256_hex_ok(hook)))
		return conn_error(c, m->hdr.reqid, ERR_BADMSG, "NOTIFY_ACK: "
		    "event_id is required, and webhook is a SHA-256");
	if (hook != NULL) {
		if (db_outbox_delivered(id, hook) == -1)
			log_warnx("outbox: %.40s: its delivery not noted", id);
		return 0;
	}
	if (db_outbox_ack(id) == 0)
		log_warnx("notify.sock: ack of unknown event %.40s", id);
	if (sent_upto > 0)
		outbox_flush();
	return 0;
}

void
outbox_closed(struct conn *c)
{
	if (c->id == notifier)
		notifier = 0;
}

const struct msg_rule approvald_notify_rules[] = {
	{ MSG_NOTIFY_HELLO, PAYLOAD_NONE, 0, 0, NULL, notify_hello },
	{ MSG_NOTIFY_ACK, PAYLOAD_JSON, 0, 0, NULL, notify_ack },
	{ 0, 0, 0, 0, NULL, NULL }
};
