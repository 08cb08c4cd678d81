/* SPDX-License-Identifier: ISC */
/*
 * A call that waits for a person (MSG_TOOL_AWAIT): mcpd's task for an
 * approval-gated call.  Nothing is recorded or run while it waits:
 * runnerd asks approvald where the approval stands, subscribed, and
 * approvald pushes its next change (approvald/subscribe.c), so a wait
 * costs neither daemon anything while the approval is pending.  When
 * approvald did not subscribe (too many), did not answer, or its
 * connection was lost (a restart forgets subscriptions), runnerd asks
 * again after AWAIT_POLL_MS, each question with the peer deadline, so
 * a stopped approvald only delays the answer.  At most AWAITS_PER_CONN
 * waits per connection, one per approval.  Once approved, the call starts
 * as a TOOL_CALL carrying approval_id would, under the same request id
 * (tool.request, the spend, the run, one end).  A denial or expiry
 * answers with the reason; a TOOL_CANCEL withdraws the approval at
 * approvald, which records that.  A connection waits only for an
 * approval its own calls asked for, as it may withdraw it.
 *
 * A restart of runnerd forgets the waits and who asked for what, and
 * mcpd, which keeps its tasks, waits again on its new connection for
 * the approvals they waited for.  Such a wait is adopted: it carries
 * mcpd's client_key, so the call it starts spends the approval only if
 * this client asked for it (approvald checks that, call.c), and, as
 * runnerd cannot tell whose approval it is, its cancel withdraws
 * nothing: the wait ends and the approval stays for an operator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "log.h"
#include "runnerd.h"

#define AWAIT_POLL_MS	1000
#define AWAITS_PER_CONN	64	/* mcpd's unfinished tasks, at most */

struct await {
	TAILQ_ENTRY(await)	 entry;
	uint64_t		 id;		/* mcpd's, for the call to come */
	uint32_t		 conn;
	json_t			*call;		/* the TOOL_CALL to start */
	char			*approval_id;
	uint64_t		 timer;		/* the next question */
	int			 asking;	/* approvald has a question */
	int			 subscribed;	/* approvald will push */
	int			 gone;		/* cancelled, or mcpd left */
	int			 withdraw;	/* cancelled: tell approvald */
	int			 answer;	/* and then mcpd what it did */
	int			 adopted;	/* after a restart: see above */
};

static TAILQ_HEAD(, await) awaits = TAILQ_HEAD_INITIALIZER(awaits);

/*
 * The approvals each connection was told to wait for, newest last:
 * a wait may withdraw an approval, so a connection waits only for one
 * its own call asked for.
 */
#define OFFERS_MAX	256

static struct offer {
	uint32_t	 conn;
	char		 approval_id[64];
} offers[OFFERS_MAX];
static size_t		 next_offer;

/* A pending approval went back to conn in its call's result. */
void
await_offer(uint32_t conn, const char *approval_id)
{
	struct offer *o = &offers[next_offer++ % OFFERS_MAX];

	o->conn = conn;
	strlcpy(o->approval_id, approval_id, sizeof(o->approval_id));
}

static int
offered(uint32_t conn, const char *approval_id)
{
	size_t i;

	for (i = 0; i < OFFERS_MAX; i++)
		if (offers[i].conn == conn && conn != 0 &&
		    strcmp(offers[i].approval_id, approval_id) == 0)
			return 1;
	return 0;
}

static void	ask(void *);

static struct await *
await_find(uint32_t conn, uint64_t id)
{
	struct await *w;

	TAILQ_FOREACH(w, &awaits, entry)
		if (w->id == id && (conn == 0 || w->conn == conn))
			return w;
	return NULL;
}

static void
await_free(struct await *w)
{
	TAILQ_REMOVE(&awaits, w, entry);
	ev_timer_cancel(w->timer);
	json_decref(w->call);
	free(w->approval_id);
	free(w);
}

/* Ends the wait with why, as the call's result: nothing ran. */
static void
settled(struct await *w, const char *state, const char *reason)
{
	struct conn *c;
	json_t *res;
	char *text;

	/* An adopted wait's call may have spent it before the restart. */
	if (asprintf(&text, "Not run: approval %s %s%s%s.", w->approval_id,
	    strcmp(state, "denied") == 0 ? "was denied" : strcmp(state,
	    "expired") == 0 ? "expired" : strcmp(state, "spent") == 0 ?
	    (w->adopted ? "was spent before runnerd restarted, by this "
	    "call or another: the outcome is unknown; check with approvalctl "
	    "show" : "was already spent by another call") :
	    "is unknown to approvald",
	    reason != NULL ? ": " : "", reason != NULL ? reason : "") == -1)
		fatal("await");
	log_info("%016llx: %s", (unsigned long long)w->id, text);
	res = text_result(1, text, json_pack("{s:s, s:s, s:s}", "status",
	    state, "approval_id", w->approval_id, "reason", text));
	if ((c = conn_find(w->conn)) != NULL &&
	    conn_send_json(c, MSG_TOOL_RESULT, w->id, -1, res) == -1)
		log_warn("result for %016llx", (unsigned long long)w->id);
	free(text);
	await_free(w);
}

/*
 * approvald's answer to the withdrawal.  Nothing of this call ran, and
 * nothing will: the wait is over whatever approvald says.
 */
static void
withdrawn(void *arg, json_t *reply, int fd, const char *why)
{
	struct await *w = arg;
	const char *state;
	char text[256];

	(void)fd;
	state = json_string_value(json_object_get(reply, "state"));
	if (why != NULL) {
		log_warnx("%s: not withdrawn (%s): it stays until an operator "
		    "decides or it expires", w->approval_id, why);
		snprintf(text, sizeof(text), "nothing ran; approval %s was not "
		    "withdrawn (%s): it stays until an operator decides or it "
		    "expires", w->approval_id, why);
	} else {
		log_info("%s: withdrawn, now %s", w->approval_id,
		    state != NULL ? state : "?");
		snprintf(text, sizeof(text), "nothing ran; approval %s is %s",
		    w->approval_id, state != NULL && strcmp(state, "denied") ==
		    0 ? "withdrawn" : state != NULL ? state : "unknown");
	}
	if (w->answer)
		cancel_answer(w->conn, w->id, why == NULL && state != NULL &&
		    strcmp(state, "denied") == 0 ? "withdrawn" : "stopped",
		    text);
	json_decref(reply);
	await_free(w);
}

static void
withdraw(struct await *w)
{
	w->asking = 1;
	peer_ask(PEER_APPROVALD, MSG_APPROVAL_WITHDRAW, w->id, json_pack(
	    "{s:s}", "approval_id", w->approval_id), MSG_APPROVAL_STATE,
	    withdrawn, w);
}

/* The person decided: the call runs as the second of the two calls. */
static void
approved(struct await *w)
{
	struct conn *c;
	json_t *call;
	uint64_t id = w->id;

	log_info("%016llx: %s approved, running the call",
	    (unsigned long long)id, w->approval_id);
	c = conn_find(w->conn);
	call = json_incref(w->call);
	await_free(w);
	if (c != NULL)
		call_start(c, id, call);
	json_decref(call);
}

/* Where the approval stands (reply borrowed), answered or pushed. */
static void
took(struct await *w, json_t *reply, const char *why)
{
	const char *state;

	state = json_string_value(json_object_get(reply, "state"));
	w->subscribed = 0;
	if (w->gone) {
		if (w->withdraw)
			withdraw(w);
		else
			await_free(w);
	} else if (why != NULL || state == NULL) {
		/* approvald is away or stalled: ask again, later. */
		log_debug("%s: no answer (%s)", w->approval_id,
		    why != NULL ? why : "no state");
		w->timer = ev_timer(AWAIT_POLL_MS, ask, w);
	} else if (strcmp(state, "approved") == 0)
		approved(w);
	else if (strcmp(state, "pending") != 0)
		settled(w, state, json_string_value(json_object_get(reply,
		    "reason")));
	else if (json_is_true(json_object_get(reply, "subscribed")))
		w->subscribed = 1;
	else
		w->timer = ev_timer(AWAIT_POLL_MS, ask, w);
}

static void
answered(void *arg, json_t *reply, int fd, const char *why)
{
	struct await *w = arg;

	(void)fd;
	w->asking = 0;
	took(w, reply, why);
	json_decref(reply);
}

static void
ask(void *arg)
{
	struct await *w = arg;

	w->timer = 0;
	w->asking = 1;
	peer_ask(PEER_APPROVALD, MSG_APPROVAL_STATUS, w->id, json_pack(
	    "{s:s, s:b}", "approval_id", w->approval_id, "subscribe", 1),
	    MSG_APPROVAL_STATE, answered, w);
}

/*
 * An APPROVAL_STATE from approvald that no question waits for (reply
 * borrowed): a subscribed wait's approval changed.  1 if it was one.
 */
int
await_pushed(const struct msg *m, json_t *reply)
{
	struct await *w;

	if (m->hdr.type != MSG_APPROVAL_STATE)
		return 0;
	/* A late answer to a question already answered is nobody's. */
	if ((w = await_find(0, m->hdr.reqid)) != NULL && w->subscribed &&
	    !w->asking)
		took(w, reply, NULL);
	return 1;
}

/* approvald's connection went: it forgot the subscriptions. */
void
await_peer_lost(void)
{
	struct await *w;

	TAILQ_FOREACH(w, &awaits, entry)
		if (w->subscribed && !w->asking) {
			w->subscribed = 0;
			w->timer = ev_timer(AWAIT_POLL_MS, ask, w);
		}
}

/*
 * j: {"tool","arguments","approval_id"}, borrowed.  The call to run
 * carries approval_id in its arguments, as the second call would.
 */
void
await_start(struct conn *c, uint64_t id, json_t *j)
{
	const char *tool, *aid;
	json_t *args;
	struct await *w;
	size_t n = 0;

	tool = json_string_value(json_object_get(j, "tool"));
	aid = json_string_value(json_object_get(j, "approval_id"));
	args = json_object_get(j, "arguments");
	if (tool == NULL || aid == NULL || !json_is_object(args) ||
	    !call_client_key(j)) {
		conn_error(c, id, ERR_BADMSG, "bad TOOL_AWAIT: needs tool, "
		    "arguments and approval_id");
		return;
	}
	if (!offered(c->id, aid) && json_object_get(j, "client_key") == NULL) {
		conn_error(c, id, ERR_DENIED, "approval %.40s was not asked for "
		    "by a call of this connection", aid);
		return;
	}
	if (call_find(id) != NULL || await_find(0, id) != NULL) {
		conn_error(c, id, ERR_BADMSG, "request id already in use");
		return;
	}
	TAILQ_FOREACH(w, &awaits, entry) {
		if (strcmp(w->approval_id, aid) == 0 && !w->gone) {
			conn_error(c, id, ERR_DENIED, "approval %.40s is "
			    "already waited for", aid);
			return;
		}
		n += w->conn == c->id;
	}
	if (n >= AWAITS_PER_CONN) {
		conn_error(c, id, ERR_DENIED, "too many waits on this "
		    "connection (%d): finish or cancel some", AWAITS_PER_CONN);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->approval_id = strdup(aid)) == NULL ||
	    (args = json_deep_copy(args)) == NULL)
		fatal("await");
	json_object_set_new(args, "approval_id", json_string(aid));
	w->call = json_pack("{s:s, s:o, s:b, s:O*}", "tool", tool,
	    "arguments", args, "progress", 0, "client_key",
	    json_object_get(j, "client_key"));
	w->id = id;
	w->conn = c->id;
	w->adopted = !offered(c->id, aid);
	TAILQ_INSERT_TAIL(&awaits, w, entry);
	log_info("%016llx: %s waits for %s%s", (unsigned long long)id, tool,
	    aid, w->adopted ? ", adopted after a restart" : "");
	ask(w);
}

/*
 * TOOL_CANCEL: 1 when id was a wait of c's, now ended and withdrawn;
 * with answer, mcpd hears once approvald has answered the withdrawal.
 * The wait ends here, so an approval granted meanwhile starts nothing.
 */
int
await_cancel(struct conn *c, uint64_t id, int answer)
{
	struct await *w;

	if ((w = await_find(c->id, id)) == NULL || w->gone)
		return 0;
	if (w->adopted) {
		if (answer)
			cancel_answer(c->id, id, "stopped", "the wait ended; "
			    "the approval was not withdrawn, as runnerd "
			    "restarted since it was asked for: it stays until "
			    "an operator decides or it expires");
		w->gone = 1;
		if (!w->asking)
			await_free(w);
		return 1;
	}
	w->gone = w->withdraw = 1;
	w->answer = answer;
	if (!w->asking) {
		ev_timer_cancel(w->timer);
		w->timer = 0;
		withdraw(w);
	}
	return 1;
}

/*
 * mcpd went away: its waits end.  A client that leaves cancels its
 * tasks first (mcpd does on stdin's end), so what is left here is a
 * crash: the approval stays for an operator, or a second call.
 */
void
await_conn_closed(struct conn *c)
{
	struct await *w, *next;
	size_t i;

	for (i = 0; i < OFFERS_MAX; i++)
		if (offers[i].conn == c->id)
			offers[i].conn = 0;
	TAILQ_FOREACH_SAFE(w, &awaits, entry, next) {
		if (w->conn != c->id)
			continue;
		w->gone = 1;
		if (!w->asking)
			await_free(w);
	}
}
