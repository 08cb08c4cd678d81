/* SPDX-License-Identifier: ISC */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "event.h"
#include "grant.h"
#include "log.h"
#include "sandbox.h"
#include "server.h"

#define LISTENERS_MAX	4

static TAILQ_HEAD(, conn) conns = TAILQ_HEAD_INITIALIZER(conns);
static struct listener	*listeners[LISTENERS_MAX];
static size_t		 nlisteners;
static uint32_t		 next_conn_id = 1;
static const char	*procname = "?";
static struct conn_conf	 limits;
/* Given up when accept(2) runs out of descriptors, so that it can refuse. */
static int		 reserve_fd = -1;

void
server_init(const char *name)
{
	procname = name;
}

struct conn *
conn_find(uint32_t id)
{
	struct conn *c;

	TAILQ_FOREACH(c, &conns, entry)
		if (c->id == id)
			return c;
	return NULL;
}

size_t
server_nconns(void)
{
	struct conn *c;
	size_t n = 0;

	TAILQ_FOREACH(c, &conns, entry)
		n++;
	return n;
}

void
conn_drop(struct conn *c)
{
	if (c->l->closed != NULL)
		c->l->closed(c);
	if (c->frame_timer != 0)
		ev_timer_cancel(c->frame_timer);
	ev_del(c->ch.fd);
	close(c->ch.fd);
	channel_clear(&c->ch);
	TAILQ_REMOVE(&conns, c, entry);
	c->l->nconns--;
	free(c);
}

static void
conn_update(struct conn *c)
{
	if (!c->doomed)
		ev_set(c->ch.fd, POLLIN | (channel_pending(&c->ch) ? POLLOUT :
		    0));
}

/* By id: whoever holds c goes on with it until the turn ends. */
static void
doomed_cb(void *arg)
{
	struct conn *c;

	if ((c = conn_find((uint32_t)(uintptr_t)arg)) != NULL)
		conn_drop(c);
}

static void
conn_doom(struct conn *c)
{
	if (c->doomed)
		return;
	c->doomed = 1;
	ev_set(c->ch.fd, 0);
	(void)ev_timer(0, doomed_cb, (void *)(uintptr_t)c->id);
}

/*
 * A peer that does not read gets queued_max bytes waiting for it, and
 * one frame more when nothing waits; past that it is dropped, so that
 * no peer holds a daemon's memory by not reading.
 */
static int
conn_room(struct conn *c, size_t len)
{
	if (!c->doomed && (c->ch.wqueued == 0 || c->ch.wqueued +
	    MSG_HDR_SIZE + len <= (size_t)limits.queued_max))
		return 1;
	if (!c->doomed)
		log_warnx("%s: peer %u (pid %d) reads nothing of %zu bytes "
		    "queued for it, dropped", c->l->name, c->id,
		    (int)c->cred.pid, c->ch.wqueued);
	conn_doom(c);
	errno = ENOBUFS;
	return 0;
}

int
conn_send(struct conn *c, uint32_t type, uint64_t reqid, int fd,
    const void *data, size_t len)
{
	if (!conn_room(c, len)) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (channel_compose(&c->ch, type, c->id, reqid, fd, data, len) == -1)
		return -1;
	conn_update(c);
	return 0;
}

/* Sends j (which it takes, with fd) as one compact JSON payload. */
int
conn_send_json(struct conn *c, uint32_t type, uint64_t reqid, int fd,
    json_t *j)
{
	json_free_t jfree;
	char *text;
	int r;

	text = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (text == NULL) {
		if (fd != -1)
			close(fd);
		return conn_error(c, reqid, ERR_INTERNAL, "out of memory");
	}
	r = conn_send(c, type, reqid, fd, text, strlen(text));
	/* jansson's own free: brokerd's wipes what it frees. */
	json_get_alloc_funcs(NULL, &jfree);
	jfree(text);
	return r;
}

/* A streamed reply: each element of a (which it takes) as type, then end. */
int
conn_send_stream(struct conn *c, uint32_t type, uint32_t end, uint64_t reqid,
    json_t *a)
{
	json_t *e;
	size_t i;

	json_array_foreach(a, i, e)
		if (conn_send_json(c, type, reqid, -1, json_incref(e)) == -1)
			break;
	json_decref(a);
	return conn_send(c, end, reqid, -1, NULL, 0);
}

int
conn_error(struct conn *c, uint64_t reqid, int code, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!conn_room(c, sizeof(struct msg_error)) ||
	    channel_compose_error(&c->ch, reqid, code, "%s", text) == -1)
		return -1;
	conn_update(c);
	return 0;
}

static int
answer_ping(struct conn *c, struct msg *m, json_t *j)
{
	struct msg_pong p;

	(void)j;
	memset(&p, 0, sizeof(p));
	strlcpy(p.proc, procname, sizeof(p.proc));
	p.pid = (uint32_t)getpid();
	p.version = PROTO_VERSION;
	return conn_send(c, MSG_PONG, m->hdr.reqid, -1, &p, sizeof(p));
}

static const struct msg_rule ping_rule = {
	MSG_PING, PAYLOAD_NONE, 0, 0, NULL, answer_ping
};

static const struct msg_rule *
rule_find(const struct listener *l, uint32_t type)
{
	const struct msg_rule *r;

	if (type == MSG_PING)
		return &ping_rule;
	for (r = l->rules; r->handler != NULL; r++)
		if (r->type == type)
			return r;
	return NULL;
}

/* The payload as rule r wants it: 0 with *j set, or -1 with why. */
static int
payload_get(const struct msg_rule *r, const struct msg *m, json_t **j,
    char *why, size_t whylen)
{
	*j = NULL;
	switch (r->payload) {
	case PAYLOAD_NONE:
		if (m->len == 0)
			return 0;
		snprintf(why, whylen, "no payload expected");
		return -1;
	case PAYLOAD_FIXED:
		if (m->len == r->size)
			return 0;
		snprintf(why, whylen, "expected %zu bytes", r->size);
		return -1;
	case PAYLOAD_JSON_OPT:
		if (m->len == 0)
			return 0;
		/* FALLTHROUGH */
	case PAYLOAD_JSON:
	case PAYLOAD_JSON_NUL:
		if ((*j = (r->payload == PAYLOAD_JSON_NUL ? cjson_parse_nul :
		    cjson_parse)(m->data, m->len, why, whylen)) == NULL)
			return -1;
		if (json_is_object(*j))
			return 0;
		json_decref(*j);
		*j = NULL;
		snprintf(why, whylen, "expected an object");
		return -1;
	}
	return -1;
}

/*
 * m against the listener's rules, then to its handler.  A message no
 * rule admits is refused and the peer may go on: a client that speaks
 * a newer protocol learns what this daemon does not serve.
 */
static int
conn_dispatch(struct conn *c, struct msg *m)
{
	const struct msg_rule *r;
	const char *name = msg_type_name(m->hdr.type);
	char why[200], err[128];
	json_t *j;
	int ret;

	if ((r = rule_find(c->l, m->hdr.type)) == NULL)
		snprintf(why, sizeof(why), "unexpected %s", name);
	else if (r->acl != NULL && !acl_allows(r->acl, c->cred.uid,
	    c->cred.groups, c->cred.ngroups)) {
		log_warnx("%s: peer %u uid %u: %s denied", c->l->name, c->id,
		    (unsigned)c->cred.uid, name);
		if (m->fd != -1)
			close_received(m->fd);
		return conn_error(c, m->hdr.reqid, ERR_DENIED, "%s: not "
		    "allowed for uid %u", name, (unsigned)c->cred.uid);
	} else if (m->fd != -1 && !r->fd)
		snprintf(why, sizeof(why), "%s: unexpected descriptor", name);
	else if (payload_get(r, m, &j, err, sizeof(err)) == -1)
		snprintf(why, sizeof(why), "%s: %s", name, err);
	else {
		ret = r->handler(c, m, j);
		json_decref(j);
		return ret;
	}
	log_warnx("%s: peer %u (pid %d): %s", c->l->name, c->id,
	    (int)c->cred.pid, why);
	if (m->fd != -1)
		close_received(m->fd);
	return conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s", why);
}

static void
frame_late(void *arg)
{
	struct conn *c;

	if ((c = conn_find((uint32_t)(uintptr_t)arg)) == NULL)
		return;
	c->frame_timer = 0;
	log_warnx("%s: peer %u (pid %d): a frame not whole after %ld s, "
	    "dropped", c->l->name, c->id, (int)c->cred.pid,
	    limits.frame_time);
	conn_drop(c);
}

/*
 * A frame has frame_time from its first byte to its last: a peer that
 * sends half a frame and waits holds its buffer that long at most.
 */
static void
frame_clock(struct conn *c, int got_whole)
{
	if (c->ch.rlen == 0 || got_whole) {
		if (c->frame_timer != 0)
			ev_timer_cancel(c->frame_timer);
		c->frame_timer = 0;
	}
	if (c->ch.rlen > 0 && c->frame_timer == 0)
		c->frame_timer = ev_timer(limits.frame_time * 1000, frame_late,
		    (void *)(uintptr_t)c->id);
}

static void
conn_event(int fd, short revents, void *arg)
{
	struct conn *c = arg;
	struct msg m;
	ssize_t n;
	int r, whole = 0;

	(void)fd;
	if (c->doomed)
		return;
	if (revents & POLLOUT) {
		if (channel_flush(&c->ch) == -1) {
			log_debug("%s: peer %u: %s", c->l->name, c->id,
			    strerror(errno));
			conn_drop(c);
			return;
		}
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = channel_read(&c->ch);
		if (n == 0 || (n == -1 && errno != EAGAIN)) {
			if (n == -1)
				log_warnx("%s: peer %u (pid %d): %s, dropped",
				    c->l->name, c->id, (int)c->cred.pid,
				    strerror(errno));
			conn_drop(c);
			return;
		}
		while (!c->doomed && (r = channel_get(&c->ch, &m)) == 1) {
			whole = 1;
			if ((r = conn_dispatch(c, &m)) == -1) {
				log_warnx("%s: peer %u (pid %d): bad %s "
				    "message, dropped", c->l->name, c->id,
				    (int)c->cred.pid, msg_type_name(m.hdr.type));
				conn_drop(c);
				return;
			}
		}
		if (r == -1) {
			log_warnx("%s: peer %u (pid %d): %s, dropped",
			    c->l->name, c->id, (int)c->cred.pid,
			    errno == EMSGSIZE ? "oversized frame" :
			    errno == EBADMSG ? "descriptor on a frame that "
			    "may carry none" : "garbled frame");
			conn_drop(c);
			return;
		}
		frame_clock(c, whole);
	}
	conn_update(c);
}

/* Refusals get one ERR_DENIED frame so the client can say why. */
static void
refuse(int fd, const struct listener *l, const char *why)
{
	struct channel ch;

	channel_init(&ch, fd);
	if (channel_compose_error(&ch, 0, ERR_DENIED, "%s: %s", l->name,
	    why) == 0)
		(void)channel_flush(&ch);
	channel_clear(&ch);
	close(fd);
}

static int
listener_takes_fds(const struct listener *l)
{
	const struct msg_rule *r;

	for (r = l->rules; r->handler != NULL; r++)
		if (r->fd)
			return 1;
	return 0;
}

/*
 * Where no rule takes a descriptor, none may come in at all if the
 * kernel can say so (SO_PASSRIGHTS): a peer's sendmsg with one fails,
 * and nothing it made enters this process.  Elsewhere, or sent before
 * this, channel_read takes them and close_received disarms them.
 */
static void
refuse_fds(int s, const struct listener *l)
{
	int off = 0;

	if (!listener_takes_fds(l))
		(void)setsockopt(s, SOL_SOCKET, SO_PASSRIGHTS, &off,
		    sizeof(off));
}

static void
listener_resume(void *arg)
{
	struct listener *l = arg;

	ev_set(l->fd, POLLIN);
}

/*
 * Out of descriptors: the reserve makes room to take the connection
 * and refuse it, so that the listener does not stay readable and spin.
 * With no reserve to give, the listener rests a moment instead.
 */
static void
listener_shed(int fd, struct listener *l)
{
	static int64_t said;
	int s;

	if (reserve_fd == -1 &&
	    (reserve_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		ev_set(fd, 0);
		(void)ev_timer(100, listener_resume, l);
		return;
	}
	close(reserve_fd);
	reserve_fd = -1;
	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) != -1)
		refuse(s, l, "out of descriptors");
	reserve_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (ev_now_ms() - said >= 10000) {
		log_warnx("%s: out of descriptors: connections refused",
		    l->name);
		said = ev_now_ms();
	}
}

/* Why a peer of uid may not have one more connection, or NULL. */
static const char *
listener_full(const struct listener *l, uid_t uid)
{
	const struct conn *c;
	size_t mine = 0;

	if (l->nconns >= (size_t)limits.max ||
	    (l->maxconns && l->nconns >= l->maxconns))
		return "too many connections";
	TAILQ_FOREACH(c, &conns, entry)
		if (c->l == l && c->cred.uid == uid)
			mine++;
	return mine >= (size_t)limits.per_uid ? "too many connections of "
	    "this uid" : NULL;
}

static void
listener_accept(int fd, short revents, void *arg)
{
	struct listener *l = arg;
	struct peer_cred cred;
	struct conn *c;
	const char *full;
	char why[128];
	int s;

	(void)revents;
	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1) {
		if (errno == EMFILE || errno == ENFILE)
			listener_shed(fd, l);
		else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("%s: accept", l->name);
		return;
	}
	refuse_fds(s, l);
	if (sock_peer(s, &cred) == -1) {
		log_warn("%s: peer credentials", l->name);
		close(s);
		return;
	}
	if (!acl_allows(l->acl, cred.uid, cred.groups, cred.ngroups)) {
		log_warnx("%s: refused uid %u gid %u pid %d", l->name,
		    (unsigned)cred.uid, (unsigned)cred.gid, (int)cred.pid);
		snprintf(why, sizeof(why), "uid %u is not allowed",
		    (unsigned)cred.uid);
		refuse(s, l, why);
		return;
	}
	if ((full = listener_full(l, cred.uid)) != NULL) {
		log_warnx("%s: %s, refused uid %u pid %d", l->name, full,
		    (unsigned)cred.uid, (int)cred.pid);
		refuse(s, l, full);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("%s: accept", l->name);
		close(s);
		return;
	}
	channel_init(&c->ch, s);
	c->l = l;
	c->cred = cred;
	c->id = next_conn_id++;
	if (ev_add(s, POLLIN, conn_event, c) == -1) {
		close(s);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&conns, c, entry);
	l->nconns++;
	log_debug("%s: peer %u uid %u pid %d connected", l->name, c->id,
	    (unsigned)cred.uid, (int)cred.pid);
}

/*
 * Who may connect, said to the file system too: the socket becomes the
 * daemon user's, and its ACL admits the listener's users and groups.
 * Where the file system has no ACLs the mode opens it to all, and
 * SO_PEERCRED alone decides.
 */
static int
listener_admit(const struct listener *l, const char *path)
{
	if (priv_give(path, l->owner) == -1)
		return -1;
	if (grant_path(path, l->acl, GRANT_R | GRANT_W) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -1;
	log_warnx("%s: no ACLs on this file system: mode 0666, peers are "
	    "checked on connection only", l->path);
	return chmod(path, 0666);
}

/* Binds l under the runtime directory; done before privileges drop. */
int
server_listen(const struct as_config *conf, struct listener *l)
{
	char pending[sizeof(l->path)];
	int n, saved;

	if (nlisteners == LISTENERS_MAX) {
		errno = ENOSPC;
		return -1;
	}
	if (config_socket_path(conf, l->name, l->path, sizeof(l->path)) == -1)
		return -1;
	limits = conf->connections;
	/*
	 * Made under a pending name and renamed into place once it listens
	 * and admits its peers: a client that waits for the name to appear
	 * never meets ECONNREFUSED or EACCES.
	 */
	n = snprintf(pending, sizeof(pending), "%s.new", l->path);
	if (n < 0 || (size_t)n >= sizeof(pending)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((l->fd = sock_listen(pending, 0600)) == -1)
		return -1;
	if (listener_admit(l, pending) == -1 ||
	    rename(pending, l->path) == -1) {
		saved = errno;
		unlink(pending);
		close(l->fd);
		errno = saved;
		return -1;
	}
	if (ev_add(l->fd, POLLIN, listener_accept, l) == -1)
		return -1;
	if (reserve_fd == -1)
		reserve_fd = fcntl(l->fd, F_DUPFD_CLOEXEC, 0);
	listeners[nlisteners++] = l;
	return 0;
}

/* SIGTERM: drop every peer and remove the sockets we made. */
void
server_close_all(void)
{
	struct conn *c;
	size_t i;

	while ((c = TAILQ_FIRST(&conns)) != NULL)
		conn_drop(c);
	for (i = 0; i < nlisteners; i++) {
		ev_del(listeners[i]->fd);
		close(listeners[i]->fd);
		if (unlink(listeners[i]->path) == -1)
			log_warn("unlink %s", listeners[i]->path);
	}
	nlisteners = 0;
}
