/* SPDX-License-Identifier: ISC */
/*
 * A helper's end of the channel to the engine (runnerd/helper.c is the
 * other).  The launcher and the kubernetes helper read the same frames
 * the same way; what each does with them is its engine_role.  The
 * engine is part of runnerd: a frame it should not send means the two
 * disagree, and that is fatal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "event.h"
#include "frame.h"
#include "log.h"

static struct channel		 engine = { .fd = -1 };
static const struct engine_role	*role;

static void
dispatch_run(const struct msg *m)
{
	role->run(m->hdr.reqid, m->data, m->len, m->fd);
}

static void
dispatch_kill(const struct msg *m)
{
	role->kill(m->hdr.reqid);
}

static void
dispatch_session(const struct msg *m)
{
	role->session(m->hdr.type, m->hdr.reqid, m->data, m->len);
}

static void
dispatch_journal_done(const struct msg *m)
{
	(void)m;
	if (role->journal_done == NULL)
		fatalx("%s: no journal to be done with", role->name);
	role->journal_done();
}

/* What the engine may send; only LMSG_RUN carries a descriptor. */
static const struct {
	uint32_t	 type;
	int		 empty;		/* without a payload */
	void		(*dispatch)(const struct msg *);
} engine_msgs[] = {
	{ LMSG_RUN,		0,	dispatch_run },
	{ LMSG_KILL,		1,	dispatch_kill },
	{ LMSG_SESSION_OPEN,	0,	dispatch_session },
	{ LMSG_SESSION_CALL,	0,	dispatch_session },
	{ LMSG_SESSION_CANCEL,	1,	dispatch_session },
	{ LMSG_SESSION_CLOSE,	1,	dispatch_session },
	{ LMSG_JOURNAL_DONE,	1,	dispatch_journal_done },
};

static void
engine_dispatch(const struct msg *m)
{
	size_t i;

	for (i = 0; i < sizeof(engine_msgs) / sizeof(engine_msgs[0]); i++)
		if (engine_msgs[i].type == m->hdr.type)
			break;
	if (i == sizeof(engine_msgs) / sizeof(engine_msgs[0]) ||
	    (engine_msgs[i].empty && m->len != 0))
		fatalx("%s: unexpected message %u from the engine", role->name,
		    m->hdr.type);
	engine_msgs[i].dispatch(m);
}

static void
engine_gone(void)
{
	ev_del(engine.fd);
	role->gone();
}

static void
engine_event(int fd, short revents, void *arg)
{
	struct msg m;
	ssize_t n;
	int r;

	(void)arg;
	if ((revents & POLLOUT) && channel_flush(&engine) == -1) {
		engine_gone();
		return;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = channel_read(&engine);
		if (n == 0 || (n == -1 && errno != EAGAIN)) {
			engine_gone();
			return;
		}
		while ((r = channel_get(&engine, &m)) == 1)
			engine_dispatch(&m);
		if (r == -1)
			fatalx("%s: garbled frame from the engine", role->name);
	}
	ev_set(fd, POLLIN | (channel_pending(&engine) ? POLLOUT : 0));
}

/* After ev_init: the engine's frames on fd go to r's handlers. */
void
engine_start(const struct engine_role *r, int fd)
{
	role = r;
	channel_init(&engine, fd);
	if (ev_add(fd, POLLIN, engine_event, NULL) == -1)
		fatal("%s: ev_add", role->name);
}

/*
 * Frames bytes for the engine; -1 (logged) when they do not fit.  What
 * a sandbox produced decides their size, so that ends one call, not the
 * helper.
 */
int
engine_forward(uint32_t type, uint64_t id, const void *data, size_t len)
{
	if (channel_compose(&engine, type, 0, id, -1, data, len) == -1) {
		log_warn("%s: %016llx: message %u of %zu bytes", role->name,
		    (unsigned long long)id, type, len);
		return -1;
	}
	ev_set(engine.fd, POLLIN | POLLOUT);
	return 0;
}

/* Sends payload (taken, may be NULL when it could not be built). */
int
engine_send(uint32_t type, uint64_t id, json_t *payload)
{
	char *text;
	int rv = -1;

	if (payload != NULL &&
	    (text = json_dumps(payload, JSON_COMPACT)) != NULL) {
		rv = engine_forward(type, id, text, strlen(text));
		free(text);
	} else
		log_warnx("%s: %016llx: cannot encode message %u", role->name,
		    (unsigned long long)id, type);
	json_decref(payload);
	return rv;
}

/* A call's result (taken), or its failure when the result cannot go. */
void
engine_done(uint64_t id, json_t *result)
{
	if (engine_send(LMSG_DONE, id, result) == -1 &&
	    engine_send(LMSG_DONE, id, json_pack("{s:s, s:s}", "status",
	    "failed", "error", "cannot send the result: too large or out of "
	    "memory")) == -1)
		fatalx("%s: cannot end call %016llx", role->name,
		    (unsigned long long)id);
}

/*
 * Once, at start: the leftovers swept (taken; NULL: none found), and
 * the journal (taken; NULL: none).  Always sent, as runnerd then ends
 * the calls it left open.
 */
void
engine_swept(json_t *swept, json_t *journal)
{
	if (swept == NULL)
		swept = json_pack("{s:[]}", "sandboxes");
	if (swept != NULL && journal != NULL)
		json_object_set(swept, "journal", journal);
	json_decref(journal);
	if (engine_send(LMSG_SWEPT, 0, swept) == -1)
		fatalx("%s: cannot report the sweep", role->name);
}

/* In a child the helper forked: the channel stays the helper's. */
void
engine_forget(void)
{
	close(engine.fd);
}

/* On the way out: what the socket takes of what is queued. */
void
engine_flush(void)
{
	(void)channel_flush(&engine);
}
