/* SPDX-License-Identifier: ISC */
/*
 * runnerd's peers, approvald, brokerd and auditd: one persistent
 * connection each, requests pipelined on it, replies matched to their
 * askers, and nothing ever waited for in the event loop.  A peer that
 * stalls delays only the calls whose requests it holds: each request
 * has runnerd.peer_timeout to be answered.
 *
 * approvald and brokerd answer by request id (brokerd out of order).
 * auditd answers in order, so its replies are matched by position; a
 * timeout there resets the connection, since an acknowledgement that
 * arrives later could not be told from the next one's.  An event that
 * auditd has not acknowledged within runnerd.audit_spool_after goes to
 * runnerd's spool (spool.c), and so does every event after it while
 * one is there: once on disk it counts as recorded, and it stays on
 * the channel, resent on a new connection, until auditd acknowledges
 * it.
 */
#include <sys/queue.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cjson.h"
#include "event.h"
#include "log.h"
#include "runnerd.h"
#include "sock.h"

enum spooled { SPOOL_NOT, SPOOL_DONE, SPOOL_FAILED };

struct pending {
	TAILQ_ENTRY(pending)	 entry;
	struct peer		*peer;
	uint64_t		 reqid;
	uint32_t		 type, want;
	peer_cb			 cb;
	audit_cb		 acb;		/* or this, for an event */
	void			*arg;
	uint64_t		 timer;
	int			 queued;	/* on the peer's list */
	char			 why[160];	/* set: fails unsent */
	char			*text;		/* auditd's, for the spool */
	enum spooled		 spooled;
	uint64_t		 spool_timer;
};

TAILQ_HEAD(pendings, pending);

struct peer {
	const char		*sock;
	const char		*name;
	int			 in_order;	/* and spools */
	void			(*orphan)(struct msg *, json_t *);
	/* What the peer sends unasked: 1 if it was that (peer_init). */
	int			(*push)(const struct msg *, json_t *);
	void			(*lost)(void);	/* and what it forgot */
	struct channel		 ch;
	struct pendings		 pending;
	uint64_t		 retry;		/* a spool to send again */
};

static void	issued_orphan(struct msg *, json_t *);

static struct peer peers[] = {
	[PEER_APPROVALD] = { "approval.sock", "approvald", 0, NULL },
	[PEER_BROKERD] = { "broker.sock", "brokerd", 0, issued_orphan },
	[PEER_AUDITD] = { "audit.sock", "auditd", 1, NULL },
};

#define SPOOL_RETRY_MS	1000	/* between connections to a lost auditd */

#define NPEERS	(sizeof(peers) / sizeof(peers[0]))

static void	(*audit_posted)(uint64_t, const char *, const json_t *);

static void	peer_event(int, short, void *);
static void	peer_retry(void *);

static void
pending_free(struct pending *pe)
{
	ev_timer_cancel(pe->timer);
	ev_timer_cancel(pe->spool_timer);
	free(pe->text);
	free(pe);
}

/*
 * Gives pe's asker the answer (reply and fd taken) or why there is
 * none; logs a failure nobody asked about.
 */
static void
pending_answer(struct pending *pe, json_t *reply, int fd, const char *why)
{
	if (pe->cb != NULL) {
		pe->cb(pe->arg, reply, fd, why);
		return;
	}
	json_decref(reply);
	if (fd != -1)
		close(fd);
	if (pe->acb != NULL)
		pe->acb(pe->arg, why);
	else if (why != NULL)
		log_warnx("%s: request for %016llx: %s", pe->peer->name,
		    (unsigned long long)pe->reqid, why);
}

static void
pending_fail(struct pending *pe, const char *why)
{
	pending_answer(pe, NULL, -1, why);
	pending_free(pe);
}

/*
 * What the layers above hear unasked goes to h's callbacks; h NULL (a
 * unit test): nobody listens.
 */
void
peer_init(const struct peer_hooks *h)
{
	size_t i;

	if (h != NULL) {
		peers[PEER_APPROVALD].push = h->approvald_push;
		peers[PEER_APPROVALD].lost = h->approvald_lost;
		audit_posted = h->audit_posted;
	}
	for (i = 0; i < NPEERS; i++) {
		peers[i].ch.fd = -1;
		TAILQ_INIT(&peers[i].pending);
	}
}

static void
peer_update(struct peer *p)
{
	if (p->ch.fd != -1)
		ev_set(p->ch.fd, POLLIN | (channel_pending(&p->ch) ?
		    POLLOUT : 0));
}

/*
 * Calls back every request p holds with why; the connection goes.
 * Spooled events stay, to be sent again on a new one.
 */
static void
peer_reset(struct peer *p, const char *why)
{
	struct pendings failed;
	struct pending *pe, *next;

	if (p->ch.fd != -1) {
		ev_del(p->ch.fd);
		close(p->ch.fd);
		channel_clear(&p->ch);
		p->ch.fd = -1;
	}
	TAILQ_INIT(&failed);
	TAILQ_FOREACH_SAFE(pe, &p->pending, entry, next) {
		ev_timer_cancel(pe->timer);
		pe->timer = 0;
		if (pe->spooled != SPOOL_DONE) {
			TAILQ_REMOVE(&p->pending, pe, entry);
			TAILQ_INSERT_TAIL(&failed, pe, entry);
		}
	}
	if (!TAILQ_EMPTY(&p->pending) && p->retry == 0)
		p->retry = ev_timer(SPOOL_RETRY_MS, peer_retry, p);
	/* The callbacks may ask p again, on a new connection. */
	while ((pe = TAILQ_FIRST(&failed)) != NULL) {
		TAILQ_REMOVE(&failed, pe, entry);
		pending_fail(pe, why);
	}
	if (p->lost != NULL)
		p->lost();
}

static void
pending_expired(void *arg)
{
	struct pending *pe = arg;
	struct peer *p = pe->peer;
	char why[160];

	pe->timer = 0;
	if (pe->spooled == SPOOL_DONE) {
		log_warnx("auditd did not acknowledge a spooled event within "
		    "%ld s: sending the spool again",
		    runnerd_conf.runnerd.peer_timeout);
		peer_reset(p, "auditd's connection was reset after a spooled "
		    "event's timeout: the event may or may not be recorded");
		return;
	}
	if (pe->why[0] == '\0')
		snprintf(pe->why, sizeof(pe->why), "%s did not answer within "
		    "%ld s (runnerd.peer_timeout)", p->name,
		    runnerd_conf.runnerd.peer_timeout);
	if (pe->queued && p->in_order) {
		TAILQ_REMOVE(&p->pending, pe, entry);
		strlcpy(why, pe->why, sizeof(why));
		pending_fail(pe, why);
		peer_reset(p, "auditd's connection was reset after another "
		    "event's timeout: the event may or may not be recorded");
		return;
	}
	if (pe->queued)
		TAILQ_REMOVE(&p->pending, pe, entry);
	strlcpy(why, pe->why, sizeof(why));
	pending_fail(pe, why);
}

static int
peer_connect(struct peer *p)
{
	char path[PATH_MAX];
	int fd;

	if (config_socket_path(&runnerd_conf, p->sock, path,
	    sizeof(path)) == -1 || (fd = sock_connect_nonblock(path)) == -1)
		return -1;
	channel_init(&p->ch, fd);
	if (ev_add(fd, POLLIN, peer_event, p) == -1) {
		close(fd);
		channel_clear(&p->ch);
		p->ch.fd = -1;
		return -1;
	}
	return 0;
}

static int
pending_compose(struct pending *pe, const char *text)
{
	return channel_compose(&pe->peer->ch, pe->type, 0, pe->reqid, -1,
	    text, strlen(text));
}

/* Every event auditd holds unacknowledged goes to the spool, in order. */
static void
spool_all(void *arg)
{
	struct peer *p = arg;
	struct pending *pe;

	TAILQ_FOREACH(pe, &p->pending, entry) {
		ev_timer_cancel(pe->spool_timer);
		pe->spool_timer = 0;
		if (pe->spooled != SPOOL_NOT)
			continue;
		if (spool_append(pe->text) == -1) {
			log_warn("audit spool: an event for %016llx waits for "
			    "auditd", (unsigned long long)pe->reqid);
			pe->spooled = SPOOL_FAILED;
			continue;
		}
		pe->spooled = SPOOL_DONE;
		/* The asker may post again: at the tail, spooled in turn. */
		pending_answer(pe, json_pack("{s:b}", "spooled", 1), -1, NULL);
		pe->cb = NULL;
		pe->acb = NULL;
	}
}

/* An event waits runnerd.audit_spool_after, none while others are. */
static void
spool_arm(struct pending *pe)
{
	long after = runnerd_conf.runnerd.audit_spool_after;

	if (after > 0)
		pe->spool_timer = ev_timer(spool_busy() ? 0 : after, spool_all,
		    pe->peer);
}

/*
 * Sends text (taken) to peer id; cb (or acb) gets the reply of type
 * want, or why there is none, always later from the loop, never from
 * here.
 */
static void
peer_queue(enum peer_id id, uint32_t type, uint64_t reqid, char *text,
    uint32_t want, peer_cb cb, audit_cb acb, void *arg)
{
	struct peer *p = &peers[id];
	struct pending *pe;
	long ms = runnerd_conf.runnerd.peer_timeout * 1000;

	if ((pe = calloc(1, sizeof(*pe))) == NULL)
		fatal("peer request");
	pe->peer = p;
	pe->reqid = reqid;
	pe->type = type;
	pe->want = want;
	pe->cb = cb;
	pe->acb = acb;
	pe->arg = arg;
	if (text == NULL)
		snprintf(pe->why, sizeof(pe->why), "out of memory");
	else if (p->retry != 0)
		pe->queued = 1;		/* peer_retry() sends it */
	else if (p->ch.fd == -1 && peer_connect(p) == -1)
		snprintf(pe->why, sizeof(pe->why), "%s: %s", p->sock,
		    strerror(errno));
	else if (pending_compose(pe, text) == -1)
		snprintf(pe->why, sizeof(pe->why), "%s: %s", p->sock,
		    strerror(errno));
	else
		pe->queued = 1;
	if (pe->queued) {
		TAILQ_INSERT_TAIL(&p->pending, pe, entry);
		peer_update(p);
	}
	pe->timer = ev_timer(pe->queued ? ms : 0, pending_expired, pe);
	if (pe->queued && p->in_order) {
		pe->text = text;
		spool_arm(pe);
	} else
		free(text);
}

/* A new connection to p, and the spooled events again, in order. */
static void
peer_retry(void *arg)
{
	struct peer *p = arg;
	struct pending *pe;
	long ms = runnerd_conf.runnerd.peer_timeout * 1000;

	/* Armed only while p has no connection. */
	p->retry = 0;
	if (peer_connect(p) == -1) {
		log_warn("%s: %s; the spool is sent again in %d ms", p->name,
		    p->sock, SPOOL_RETRY_MS);
		p->retry = ev_timer(SPOOL_RETRY_MS, peer_retry, p);
		return;
	}
	TAILQ_FOREACH(pe, &p->pending, entry) {
		if (pending_compose(pe, pe->text) == -1) {
			peer_reset(p, strerror(errno));
			return;
		}
		if (pe->timer == 0)
			pe->timer = ev_timer(ms, pending_expired, pe);
	}
	peer_update(p);
}

/*
 * A line of the spool a previous runnerd left: 0 when it goes to
 * auditd before any other event, -1 when it is not an event.
 */
int
audit_resend(const char *line)
{
	struct peer *p = &peers[PEER_AUDITD];
	struct pending *pe;
	const char *rid;
	json_t *ev;
	uint64_t id;

	ev = cjson_parse(line, strlen(line), NULL, 0);
	rid = json_string_value(json_object_get(ev, "request_id"));
	if (rid == NULL || reqid_parse(rid, &id) == -1) {
		log_warnx("audit spool: not an event: %.80s", line);
		json_decref(ev);
		return -1;
	}
	json_decref(ev);
	if ((pe = calloc(1, sizeof(*pe))) == NULL ||
	    (pe->text = strdup(line)) == NULL)
		fatal("audit spool");
	pe->peer = p;
	pe->reqid = id;
	pe->type = MSG_AUDIT_EVENT;
	pe->want = MSG_AUDIT_ACK;
	pe->queued = 1;
	pe->spooled = SPOOL_DONE;
	TAILQ_INSERT_TAIL(&p->pending, pe, entry);
	if (p->retry == 0)
		p->retry = ev_timer(0, peer_retry, p);
	return 0;
}

/* A request with a JSON body (taken) to approvald or brokerd. */
void
peer_ask(enum peer_id id, uint32_t type, uint64_t reqid, json_t *body,
    uint32_t want, peer_cb cb, void *arg)
{
	char *text;

	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	peer_queue(id, type, reqid, text, want, cb, NULL, arg);
}

/* A credential issued after its call gave up waiting: revoke it. */
static void
issued_orphan(struct msg *m, json_t *reply)
{
	const char *lease;

	if (m->hdr.type != MSG_CRED_ISSUED)
		return;
	lease = json_string_value(json_object_get(reply, "lease_id"));
	log_warnx("brokerd answered call %016llx too late%s%s",
	    (unsigned long long)m->hdr.reqid, lease != NULL ?
	    ": revoking " : "", lease != NULL ? lease : "");
	if (lease != NULL)
		peer_ask(PEER_BROKERD, MSG_CRED_REVOKE, m->hdr.reqid,
		    json_pack("{s:s}", "lease_id", lease), MSG_CRED_REVOKED,
		    NULL, NULL);
}

static struct pending *
pending_match(struct peer *p, const struct msg *m)
{
	struct pending *pe;

	if (p->in_order)
		return TAILQ_FIRST(&p->pending);
	TAILQ_FOREACH(pe, &p->pending, entry)
		if (pe->reqid == m->hdr.reqid && (m->hdr.type == pe->want ||
		    m->hdr.type == MSG_ERROR))
			return pe;
	return NULL;
}

static void
peer_dispatch(struct peer *p, struct msg *m)
{
	struct msg_error e;
	struct pending *pe;
	json_t *reply = NULL;
	char why[300];

	why[0] = '\0';
	if (m->hdr.type == MSG_ERROR && m->len == sizeof(e)) {
		memcpy(&e, m->data, sizeof(e));
		e.text[sizeof(e.text) - 1] = '\0';
		snprintf(why, sizeof(why), "%s", e.text);
		if (e.code == ERR_NOSPACE)
			snprintf(why, sizeof(why), "%s's file system is full: "
			    "%s", p->name, e.text);
	} else if ((reply = cjson_parse(m->data, m->len, NULL, 0)) == NULL ||
	    !json_is_object(reply))
		snprintf(why, sizeof(why), "%s: unexpected %s", p->name,
		    msg_type_name(m->hdr.type));
	if ((pe = pending_match(p, m)) == NULL && p->push != NULL &&
	    reply != NULL && p->push(m, reply)) {
		json_decref(reply);
		return;
	}
	if (pe == NULL) {
		log_warnx("%s: %s for %016llx, which nobody waits for",
		    p->name, msg_type_name(m->hdr.type),
		    (unsigned long long)m->hdr.reqid);
		if (p->orphan != NULL && reply != NULL)
			p->orphan(m, reply);
		json_decref(reply);
		return;
	}
	if (why[0] == '\0' && (m->hdr.type != pe->want ||
	    m->hdr.reqid != pe->reqid))
		snprintf(why, sizeof(why), "%s: unexpected %s", p->name,
		    msg_type_name(m->hdr.type));
	/* A spooled event is auditd's to take, however long that takes. */
	if (why[0] != '\0' && pe->spooled == SPOOL_DONE) {
		json_decref(reply);
		log_warnx("%s: a spooled event: %s; sending the spool again",
		    p->name, why);
		peer_reset(p, why);
		return;
	}
	TAILQ_REMOVE(&p->pending, pe, entry);
	if (why[0] != '\0') {
		json_decref(reply);
		pending_fail(pe, why);
		return;
	}
	if (pe->spooled == SPOOL_DONE)
		spool_acked();
	pending_answer(pe, reply, m->fd, NULL);
	m->fd = -1;
	pending_free(pe);
}

static void
peer_event(int fd, short revents, void *arg)
{
	struct peer *p = arg;
	struct msg m;
	ssize_t n;
	int r;

	if ((revents & POLLOUT) && channel_flush(&p->ch) == -1) {
		peer_reset(p, strerror(errno));
		return;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = channel_read(&p->ch);
		if (n == 0 || (n == -1 && errno != EAGAIN)) {
			log_warnx("%s: connection lost", p->name);
			peer_reset(p, n == 0 ? "the connection was closed "
			    "before the answer came" : strerror(errno));
			return;
		}
		/* A callback may reset p; then this connection is gone. */
		while (p->ch.fd == fd && (r = channel_get(&p->ch, &m)) == 1) {
			peer_dispatch(p, &m);
			if (m.fd != -1)
				close_received(m.fd);
		}
		if (p->ch.fd == fd && r == -1) {
			peer_reset(p, "garbled frame");
			return;
		}
	}
	if (p->ch.fd == fd)
		peer_update(p);
}

/*
 * Records one event with auditd (fields taken); cb gets NULL once it is
 * recorded, or why not.  cb NULL: nobody waits, a failure is logged.
 */
void
audit_post(const char *event, uint64_t reqid, json_t *fields, audit_cb cb,
    void *arg)
{
	static struct audit_writer writer;

	if (audit_posted != NULL)
		audit_posted(reqid, event, fields);
	peer_queue(PEER_AUDITD, MSG_AUDIT_EVENT, reqid,
	    audit_payload_by(&writer, event, reqid, fields), MSG_AUDIT_ACK,
	    NULL, cb, arg);
}
