/* SPDX-License-Identifier: ISC */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"

#define READ_CHUNK	(64 * 1024)

void
channel_init(struct channel *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	TAILQ_INIT(&c->wq);
}

static void
wframe_free(struct wframe *wf)
{
	if (wf->fd != -1)
		close(wf->fd);
	free(wf->buf);
	free(wf);
}

/*
 * Closes a descriptor a peer sent.  A socket the peer set to linger,
 * with an other end that never reads, would hold close() until the
 * linger ran out: it is reset instead (SO_LINGER {1, 0}), so that no
 * event loop waits on what a peer handed it.
 */
void
close_received(int fd)
{
	struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset,
		    sizeof(reset));
	close(fd);
}

static void
rfds_close(struct channel *c)
{
	while (c->nrfds > 0)
		close_received(c->rfds[--c->nrfds]);
}

/* Frees buffers and queued descriptors; the socket itself stays open. */
void
channel_clear(struct channel *c)
{
	struct wframe *wf;

	while ((wf = TAILQ_FIRST(&c->wq)) != NULL) {
		TAILQ_REMOVE(&c->wq, wf, entry);
		wframe_free(wf);
	}
	rfds_close(c);
	free(c->rbuf);
	channel_init(c, c->fd);
}

/*
 * Drops the frame handed out last.  A buffer grown for a large frame
 * goes with it once nothing more is held: idle peers cost little.
 */
static void
channel_consume(struct channel *c)
{
	if (c->rconsumed == 0)
		return;
	memmove(c->rbuf, c->rbuf + c->rconsumed, c->rlen - c->rconsumed);
	c->rlen -= c->rconsumed;
	c->rconsumed = 0;
	if (c->rlen == 0 && c->rcap > READ_CHUNK) {
		free(c->rbuf);
		c->rbuf = NULL;
		c->rcap = 0;
	}
}

/* Nothing queued can be claimed once the stream is garbled. */
static int
garbled(struct channel *c, int err)
{
	rfds_close(c);
	errno = err;
	return -1;
}

/*
 * One recvmsg: >0 bytes read, 0 on EOF, -1 with errno (EAGAIN when
 * nothing is there; EPROTO when the peer sent more descriptors than a
 * frame may carry, which the caller treats as a garbled frame).
 * channel_flush sends one descriptor a sendmsg and the kernel hands no
 * recvmsg the descriptors of two, so one is all a read may bring: more
 * are closed here, or by the kernel if they overflow cmsgbuf (MSG_CTRUNC).
 */
ssize_t
channel_read(struct channel *c)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	size_t want, nfd, i, got = 0;
	ssize_t n;
	uint8_t *nb;
	int *fds, bad = 0;

	channel_consume(c);
	want = c->rlen + READ_CHUNK;
	if (want > MSG_HDR_SIZE + MSG_MAX_PAYLOAD)
		want = MSG_HDR_SIZE + MSG_MAX_PAYLOAD;
	if (c->rlen >= want) {
		errno = EMSGSIZE;
		return -1;
	}
	if (want > c->rcap) {
		if ((nb = realloc(c->rbuf, want)) == NULL)
			return -1;
		c->rbuf = nb;
		c->rcap = want;
	}
	memset(&mh, 0, sizeof(mh));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = c->rbuf + c->rlen;
	iov.iov_len = c->rcap - c->rlen;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cmsgbuf.buf;
	mh.msg_controllen = sizeof(cmsgbuf.buf);
	do {
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		fds = (int *)CMSG_DATA(cm);
		for (i = 0; i < nfd; i++) {
			if (got++ == 0 && c->nrfds < CHANNEL_MAXFDS)
				c->rfds[c->nrfds++] = fds[i];
			else {
				close_received(fds[i]);
				bad = 1;
			}
		}
	}
	if (mh.msg_flags & MSG_CTRUNC)
		bad = 1;
	c->rlen += n;
	return bad ? garbled(c, EPROTO) : n;
}

/*
 * More bytes are needed.  A descriptor travels with the first byte of
 * its frame, so only the frame still arriving may have one queued (if it
 * claims one); any other is beyond what the peer's frames claim.
 */
static int
need_more(struct channel *c, int claimed)
{
	return c->nrfds > claimed ? garbled(c, EPROTO) : 0;
}

/*
 * 1: a whole frame is in m; 0: more bytes needed; -1: the stream is
 * garbled (errno EPROTO, EMSGSIZE; EBADMSG for a descriptor on a type
 * that may carry none) and the connection must be dropped.  Dropping it,
 * not just the frame, because only a misbehaving peer sends one; its
 * queued descriptors are closed here at once.
 */
int
channel_get(struct channel *c, struct msg *m)
{
	struct msg_hdr h;

	channel_consume(c);
	if (c->rlen < MSG_HDR_SIZE)
		return need_more(c, c->rlen > 0);
	memcpy(&h, c->rbuf, sizeof(h));
	if (h.version != PROTO_VERSION || h.type == MSG_NONE ||
	    (h.flags & ~MSGF_FD) != 0)
		return garbled(c, EPROTO);
	if (h.len > MSG_MAX_PAYLOAD)
		return garbled(c, EMSGSIZE);
	if ((h.flags & MSGF_FD) && c->nrfds == 0)
		return garbled(c, EPROTO);
	if ((h.flags & MSGF_FD) && !msg_carries_fd(h.type))
		return garbled(c, EBADMSG);
	if (c->rlen < MSG_HDR_SIZE + (size_t)h.len)
		return need_more(c, (h.flags & MSGF_FD) != 0);
	memset(m, 0, sizeof(*m));
	m->hdr = h;
	m->data = c->rbuf + MSG_HDR_SIZE;
	m->len = h.len;
	m->fd = -1;
	if (h.flags & MSGF_FD) {
		m->fd = c->rfds[0];
		memmove(c->rfds, c->rfds + 1, --c->nrfds * sizeof(int));
	}
	c->rconsumed = MSG_HDR_SIZE + h.len;
	return 1;
}

/* Queues a frame; the channel owns fd from here on and closes it once sent. */
int
channel_compose(struct channel *c, uint32_t type, uint32_t peerid,
    uint64_t reqid, int fd, const void *data, size_t len)
{
	struct msg_hdr h;
	struct wframe *wf;

	if (len > MSG_MAX_PAYLOAD) {
		if (fd != -1)
			close(fd);
		errno = EMSGSIZE;
		return -1;
	}
	if ((wf = calloc(1, sizeof(*wf))) == NULL ||
	    (wf->buf = malloc(MSG_HDR_SIZE + len)) == NULL) {
		free(wf);
		if (fd != -1)
			close(fd);
		return -1;
	}
	memset(&h, 0, sizeof(h));
	h.type = type;
	h.len = len;
	h.peerid = peerid;
	h.version = PROTO_VERSION;
	h.flags = fd != -1 ? MSGF_FD : 0;
	h.reqid = reqid;
	memcpy(wf->buf, &h, sizeof(h));
	if (len > 0)
		memcpy(wf->buf + MSG_HDR_SIZE, data, len);
	wf->len = MSG_HDR_SIZE + len;
	wf->fd = fd;
	TAILQ_INSERT_TAIL(&c->wq, wf, entry);
	c->wqueued += wf->len;
	return 0;
}

int
channel_compose_error(struct channel *c, uint64_t reqid, int code,
    const char *fmt, ...)
{
	struct msg_error e;
	va_list ap;

	memset(&e, 0, sizeof(e));
	e.code = code;
	va_start(ap, fmt);
	vsnprintf(e.text, sizeof(e.text), fmt, ap);
	va_end(ap);
	return channel_compose(c, MSG_ERROR, 0, reqid, -1, &e, sizeof(e));
}

int
channel_pending(const struct channel *c)
{
	return !TAILQ_EMPTY(&c->wq);
}

/* Sends what the socket takes now: 0 (maybe partial, EAGAIN) or -1. */
int
channel_flush(struct channel *c)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	struct wframe *wf;
	ssize_t n;

	while ((wf = TAILQ_FIRST(&c->wq)) != NULL) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = wf->buf + wf->off;
		iov.iov_len = wf->len - wf->off;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if (wf->off == 0 && wf->fd != -1) {
			memset(&cmsgbuf, 0, sizeof(cmsgbuf));
			mh.msg_control = cmsgbuf.buf;
			mh.msg_controllen = sizeof(cmsgbuf.buf);
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			memcpy(CMSG_DATA(cm), &wf->fd, sizeof(int));
		}
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		if (wf->off == 0 && wf->fd != -1) {
			close(wf->fd);
			wf->fd = -1;
		}
		wf->off += n;
		c->wqueued -= n;
		if (wf->off == wf->len) {
			TAILQ_REMOVE(&c->wq, wf, entry);
			wframe_free(wf);
		}
	}
	return 0;
}

static int
ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000LL +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : (ms > 1000000 ? 1000000 : (int)ms);
}

static void
deadline_set(struct timespec *d, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, d);
	d->tv_sec += timeout_ms / 1000;
	d->tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (d->tv_nsec >= 1000000000L) {
		d->tv_sec++;
		d->tv_nsec -= 1000000000L;
	}
}

static int
wait_fd(int fd, short events, const struct timespec *deadline, int forever)
{
	struct pollfd pfd;
	int r;

	pfd.fd = fd;
	pfd.events = events;
	for (;;) {
		r = poll(&pfd, 1, forever ? -1 : ms_left(deadline));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		return 0;
	}
}

/* Composes and sends one frame, waiting up to timeout_ms (-1: forever). */
int
channel_send_sync(struct channel *c, uint32_t type, uint64_t reqid, int fd,
    const void *data, size_t len, int timeout_ms)
{
	struct timespec deadline;

	deadline_set(&deadline, timeout_ms < 0 ? 0 : timeout_ms);
	if (channel_compose(c, type, 0, reqid, fd, data, len) == -1)
		return -1;
	for (;;) {
		if (channel_flush(c) == -1)
			return -1;
		if (!channel_pending(c))
			return 0;
		if (wait_fd(c->fd, POLLOUT, &deadline, timeout_ms < 0) == -1)
			return -1;
	}
}

/* Waits for one whole frame: 0, or -1 (ETIMEDOUT, ECONNRESET on EOF, ...). */
int
channel_recv_sync(struct channel *c, struct msg *m, int timeout_ms)
{
	struct timespec deadline;
	ssize_t n;
	int r;

	deadline_set(&deadline, timeout_ms < 0 ? 0 : timeout_ms);
	for (;;) {
		if ((r = channel_get(c, m)) == 1)
			return 0;
		if (r == -1)
			return -1;
		if (wait_fd(c->fd, POLLIN, &deadline, timeout_ms < 0) == -1)
			return -1;
		n = channel_read(c);
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
	}
}
