/* SPDX-License-Identifier: ISC */
/*
 * Session sandboxes, the helper's half, for either backend: each is a
 * child process whose socket carries the session agent's frames
 * (session-agent.py): runsc with the agent as its one process
 * (launcher/session.c), or a kubernetes worker that bridges the agent
 * in a claimed Sandbox's pod (kube/session.c).  The backend's ops
 * start, stop and clean up; here are the agent's protocol, the
 * timers, the engine's messages and, where the backend keeps one here,
 * the warm pool of started sandboxes (counted by pool.c), so that
 * opening a session is a claim rather than a cold start.  The agent is
 * trusted no further than the code it runs: what it sends is checked
 * for shape, and anything unexpected ends its sandbox.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "engine.h"
#include "event.h"
#include "log.h"
#include "pool.h"
#include "sessbox.h"

#define GRACE_MS	10000	/* past the call timeout, the agent's own */
#define KILL_MS		10000	/* after a stop, before SIGKILL */

static const struct as_config	*conf;
static const struct sessbox_ops	*ops;
static TAILQ_HEAD(, sess)	 sesss = TAILQ_HEAD_INITIALIZER(sesss);
static struct pool		 session_pool;

static void	sess_end(struct sess *, const char *);

static struct sess *
sess_find(uint64_t key)
{
	struct sess *s;

	TAILQ_FOREACH(s, &sesss, entry)
		if (s->key == key && s->ending == NULL)
			return s;
	return NULL;
}

static void
timer_set(struct sess *s, long ms, ev_timer_cb cb)
{
	if (s->timer)
		ev_timer_cancel(s->timer);
	s->timer = ms > 0 ? ev_timer(ms, cb, s) : 0;
}

static void
sess_overdue(void *arg)
{
	struct sess *s = arg;

	s->timer = 0;
	sess_end(s, s->ready ? "the session agent did not answer in time" :
	    "the session sandbox did not start in time");
}

static void
sess_kill_over(void *arg)
{
	struct sess *s = arg;

	s->timer = 0;
	log_warnx("session %s: its sandbox outlived its stop", s->cid);
	kill(s->pid, SIGKILL);
}

static void
agent_close(struct sess *s)
{
	if (s->agent.fd == -1)
		return;
	ev_del(s->agent.fd);
	close(s->agent.fd);
	channel_clear(&s->agent);
	s->agent.fd = -1;
}

/* Kills the sandbox; the reaper cleans up and tells the engine why. */
static void
sess_end(struct sess *s, const char *why)
{
	if (s->ending != NULL)
		return;
	s->ending = why;
	pool_leave(&s->pooled);
	log_debug("session %s: ending (%s)", s->cid, why);
	agent_close(s);
	timer_set(s, KILL_MS, sess_kill_over);
	ops->stop(s);
}

static void
ready_send(struct sess *s, int warm)
{
	json_t *j;

	j = json_pack("{s:s, s:I}", "container", s->cid, "start_ms",
	    (json_int_t)(ev_now_ms() - s->claimed));
	/* A cluster's pool is the controller's: whether it served, the
	 * start time tells. */
	if (j != NULL && ops->warm_here)
		json_object_set_new(j, "warm", json_boolean(warm));
	engine_send(LMSG_SESSION_READY, s->key, j);
}

/*
 * What a reply may be: the agent's replies are flat objects of strings,
 * integers and booleans.  A real is refused because re-encoding grows it
 * (1e-7 becomes 9.9999999999999995e-08); a reply is passed on as the
 * bytes checked here, so nothing it holds can grow past the frame the
 * engine wraps it in, which holds the output twice, escaped again: a
 * quarter of a frame leaves room for that.
 */
#define REPLY_MAX	(4u * 1024 * 1024)
#define REPLY_DEPTH	8

_Static_assert(REPLY_MAX <= MSG_MAX_PAYLOAD / 4, "a reply and its wrapping");

/* Why v is not what a reply may hold, or NULL. */
static const char *
reply_bad(json_t *v, int depth)
{
	const char *key, *why = NULL;
	json_t *e;
	size_t i;

	if (depth > REPLY_DEPTH)
		return "the session agent's reply is nested too deeply";
	if (json_is_real(v))
		return "the session agent's reply has a real number";
	if (json_is_object(v))
		json_object_foreach(v, key, e)
			if ((why = reply_bad(e, depth + 1)) != NULL)
				break;
	if (json_is_array(v))
		json_array_foreach(v, i, e)
			if ((why = reply_bad(e, depth + 1)) != NULL)
				break;
	return why;
}

/*
 * One frame of the agent; why it ends the session, or NULL.  A reply
 * names the call it answers by the request's id, or 0 for the one in
 * progress.
 */
static const char *
agent_frame(struct sess *s, struct msg *m)
{
	const char *why;
	json_t *j;

	if (m->fd != -1)
		return "the session agent sent a descriptor";
	if (m->hdr.type == AGENT_READY && !s->ready) {
		s->ready = 1;
		timer_set(s, 0, NULL);
		if (s->key != 0)
			ready_send(s, 0);
		return NULL;
	}
	if (m->hdr.type != AGENT_REPLY)
		return "the session agent sent an unexpected message";
	if (!s->busy)
		return "the session agent replied when no call was waiting";
	if (m->hdr.reqid != s->call)
		return "the session agent replied for another call";
	if (m->len > REPLY_MAX)
		return "the session agent's reply is over 4 MiB";
	/* Output may hold NULs: a string's length is jansson's. */
	if ((j = json_loadb((const char *)m->data, m->len, JSON_ALLOW_NUL,
	    NULL)) == NULL)
		return "the session agent's reply is not JSON";
	why = json_is_object(j) ? reply_bad(j, 0) :
	    "the session agent's reply is not a JSON object";
	json_decref(j);
	if (why != NULL)
		return why;
	s->busy = 0;
	timer_set(s, 0, NULL);
	if (engine_forward(LMSG_SESSION_REPLY, s->key, m->data, m->len) == -1)
		return "the session agent's reply cannot be passed on";
	return NULL;
}

static void
agent_event(int fd, short revents, void *arg)
{
	struct sess *s = arg;
	struct msg m;
	const char *why;
	ssize_t n;
	int r;

	if ((revents & POLLOUT) && channel_flush(&s->agent) == -1) {
		sess_end(s, "the session agent stopped reading");
		return;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = channel_read(&s->agent);
		if (n == 0 || (n == -1 && errno != EAGAIN)) {
			sess_end(s, n == 0 ? "the session agent exited" :
			    "the session agent broke the protocol");
			s->eof = 1;
			return;
		}
		while ((r = channel_get(&s->agent, &m)) == 1)
			if ((why = agent_frame(s, &m)) != NULL) {
				if (m.fd != -1)
					close_received(m.fd);
				log_warnx("session %s: %s", s->cid, why);
				sess_end(s, why);
				return;
			}
		if (r == -1) {
			sess_end(s, "the session agent broke the protocol");
			return;
		}
	}
	ev_set(fd, POLLIN | (channel_pending(&s->agent) ? POLLOUT : 0));
}

/*
 * The agent's command line: where the backend puts it, and the
 * workspace it serves (the sandbox's /work, as its own paths name it).
 */
json_t *
sessbox_agent_argv(const struct as_config *c, const char *agent,
    const char *work)
{
	char out[32], timeout[32];

	snprintf(out, sizeof(out), "%ld", c->runnerd.output_max);
	snprintf(timeout, sizeof(timeout), "%ld", c->runnerd.timeout);
	return json_pack("[s, s, s, s, s]", "/usr/bin/python3", agent, out,
	    timeout, work);
}

/* Forgets s once its child is gone. */
static void
sess_free(struct sess *s)
{
	timer_set(s, 0, NULL);
	agent_close(s);
	pool_leave(&s->pooled);
	if (ops->cleanup != NULL)
		ops->cleanup(s);
	TAILQ_REMOVE(&sesss, s, entry);
	free(s);
}

/*
 * A new session sandbox, for key's session sid opened by origin (0 and
 * NULL: the pool); NULL and why.
 */
static struct sess *
sess_start(uint64_t key, uint64_t origin, const char *sid, char *why,
    size_t whylen)
{
	struct sess *s;
	int fd;

	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    container_id_new(s->cid) == -1) {
		free(s);
		snprintf(why, whylen, "%s", strerror(errno));
		return NULL;
	}
	s->key = key;
	s->origin = origin;
	if (sid != NULL)
		strlcpy(s->session, sid, sizeof(s->session));
	s->pid = -1;
	s->agent.fd = -1;
	s->claimed = ev_now_ms();
	s->pooled.member = s;
	TAILQ_INSERT_TAIL(&sesss, s, entry);
	if (ops->spawn(s, &fd) == -1) {
		snprintf(why, whylen, "cannot start a sandbox: %s",
		    strerror(errno));
		sess_free(s);
		return NULL;
	}
	channel_init(&s->agent, fd);
	if (ev_add(fd, POLLIN, agent_event, s) == -1)
		fatal("sessions: ev_add");
	timer_set(s, ops->start_ms, sess_overdue);
	return s;
}

/* A warm sandbox for the pool: no session's yet. */
static struct pool_entry *
session_pool_start(char *why, size_t whylen)
{
	struct sess *s;

	return (s = sess_start(0, 0, NULL, why, whylen)) != NULL ?
	    &s->pooled : NULL;
}

static int
session_pool_ready(void *member)
{
	return ((struct sess *)member)->ready;
}

static const struct pool_ops session_pool_ops = {
	.name = "warm pool",
	.start = session_pool_start,
	.ready = session_pool_ready,
};

static void
ended_send(uint64_t key, const char *why)
{
	engine_send(LMSG_SESSION_ENDED, key, json_pack("{s:s}", "reason", why));
}

/* LMSG_SESSION_OPEN: {"origin": "req-...", "session_id": "ses-..."}. */
static void
session_open(uint64_t key, const uint8_t *data, size_t len)
{
	struct sess *s;
	json_t *j;
	const char *sid, *rid;
	char why[256];
	uint64_t origin;

	j = json_loadb((const char *)data, len, 0, NULL);
	sid = json_string_value(json_object_get(j, "session_id"));
	rid = json_string_value(json_object_get(j, "origin"));
	/* The engine sent it: another shape means the two disagree. */
	if (rid == NULL || reqid_parse(rid, &origin) == -1 || sid == NULL ||
	    strlen(sid) >= SESSION_ID_LEN)
		fatalx("launcher: bad LMSG_SESSION_OPEN");
	if (key == 0 || sess_find(key) != NULL) {
		json_decref(j);
		ended_send(key, "session key in use");
		return;
	}
	if ((s = pool_claim(&session_pool)) != NULL) {
		s->key = key;
		s->claimed = ev_now_ms();
		if (s->ready)
			ready_send(s, 1);
	} else if ((s = sess_start(key, origin, sid, why, sizeof(why))) ==
	    NULL)
		ended_send(key, why);
	if (s != NULL) {
		s->origin = origin;
		strlcpy(s->session, sid, sizeof(s->session));
	}
	json_decref(j);
	pool_refill(&session_pool);
}

static void
box_call(uint64_t key, const uint8_t *data, size_t len)
{
	struct sess *s;

	if ((s = sess_find(key)) == NULL || !s->ready || s->busy) {
		engine_send(LMSG_SESSION_REPLY, key, json_pack("{s:s}",
		    "error", "the session is not ready for a call"));
		return;
	}
	if (channel_compose(&s->agent, AGENT_REQUEST, 0, ++s->call, -1, data,
	    len) == -1) {
		sess_end(s, "cannot send to the session agent");
		return;
	}
	s->busy = 1;
	timer_set(s, conf->runnerd.timeout * 1000 + GRACE_MS, sess_overdue);
	ev_set(s->agent.fd, POLLIN | POLLOUT);
}

void
sessbox_message(uint32_t type, uint64_t key, const uint8_t *data, size_t len)
{
	struct sess *s;

	switch (type) {
	case LMSG_SESSION_OPEN:
		session_open(key, data, len);
		break;
	case LMSG_SESSION_CALL:
		box_call(key, data, len);
		break;
	case LMSG_SESSION_CANCEL:
		if ((s = sess_find(key)) != NULL && s->busy &&
		    channel_compose(&s->agent, AGENT_CANCEL, 0, 0, -1, NULL,
		    0) == 0)
			ev_set(s->agent.fd, POLLIN | POLLOUT);
		break;
	case LMSG_SESSION_CLOSE:
		if ((s = sess_find(key)) != NULL)
			sess_end(s, "closed");
		else
			ended_send(key, "closed");
		break;
	}
}

/* A child exited: 1 if it was a session's, cleaned up after. */
int
sessbox_reaped(pid_t pid, int status)
{
	struct sess *s;
	const char *why;

	TAILQ_FOREACH(s, &sesss, entry)
		if (s->pid == pid)
			break;
	if (s == NULL)
		return 0;
	s->pid = -1;
	/* After an EOF the exit says more, if it says anything. */
	if (s->ending == NULL || s->eof)
		s->ending = (why = ops->exit_why(s, status)) != NULL ? why :
		    s->ending;
	if (s->ending == NULL)
		log_warnx("session %s: its sandbox exited (status %d)", s->cid,
		    status);
	if (s->key != 0)
		ended_send(s->key, s->ending != NULL ? s->ending :
		    "the session sandbox exited");
	sess_free(s);
	return 1;
}

void
sessbox_init(const struct as_config *c, const struct sessbox_ops *o)
{
	conf = c;
	ops = o;
	/* Sessions off: nothing would ever claim a warm sandbox. */
	pool_init(&session_pool, &session_pool_ops,
	    conf->runnerd.sessions_max == 0 ? 0 : (size_t)ops->pool);
	pool_refill(&session_pool);
}

void
sessbox_shutdown(void)
{
	struct sess *s;

	while ((s = TAILQ_FIRST(&sesss)) != NULL) {
		ops->shutdown(s);
		if (s->pid > 0)
			(void)waitpid(s->pid, NULL, 0);
		sess_free(s);
	}
}
