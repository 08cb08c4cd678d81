/* SPDX-License-Identifier: ISC */
/* Framing: round trips, descriptor passing, and every malformed frame. */
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"

static void
pair(struct channel *a, struct channel *b)
{
	int sv[2];

	ATF_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	channel_init(a, sv[0]);
	channel_init(b, sv[1]);
}

static void
unpair(struct channel *a, struct channel *b)
{
	close(a->fd);
	close(b->fd);
	channel_clear(a);
	channel_clear(b);
}

/* Writes raw bytes as a hostile peer would. */
static void
raw(struct channel *c, const void *buf, size_t len)
{
	ATF_REQUIRE(write(c->fd, buf, len) == (ssize_t)len);
}

static struct msg_hdr
hdr(uint32_t type, uint32_t len, uint16_t flags)
{
	struct msg_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.len = len;
	h.version = PROTO_VERSION;
	h.flags = flags;
	h.reqid = 42;
	return h;
}

static int
get_after_read(struct channel *c, struct msg *m)
{
	ssize_t n = channel_read(c);

	if (n == -1)
		return -1;
	return channel_get(c, m);
}

ATF_TC_WITHOUT_HEAD(header_size);
ATF_TC_BODY(header_size, tc)
{
	ATF_CHECK_EQ(sizeof(struct msg_hdr), MSG_HDR_SIZE);
}

ATF_TC_WITHOUT_HEAD(round_trip);
ATF_TC_BODY(round_trip, tc)
{
	struct channel a, b;
	struct msg m;
	const char *p = "{\"tool\":\"x\"}";

	pair(&a, &b);
	ATF_REQUIRE(channel_send_sync(&a, MSG_TOOL_CALL, 7, -1, p, strlen(p),
	    1000) == 0);
	ATF_REQUIRE(channel_send_sync(&a, MSG_PING, 8, -1, NULL, 0, 1000) == 0);
	ATF_REQUIRE(channel_recv_sync(&b, &m, 1000) == 0);
	ATF_CHECK_EQ(m.hdr.type, MSG_TOOL_CALL);
	ATF_CHECK_EQ(m.hdr.reqid, 7);
	ATF_CHECK_EQ(m.len, strlen(p));
	ATF_CHECK(memcmp(m.data, p, m.len) == 0);
	ATF_CHECK_EQ(m.fd, -1);
	ATF_REQUIRE(channel_recv_sync(&b, &m, 1000) == 0);
	ATF_CHECK_EQ(m.hdr.type, MSG_PING);
	ATF_CHECK_EQ(m.hdr.reqid, 8);
	ATF_CHECK_EQ(m.len, 0);
	unpair(&a, &b);
}

/* A payload bigger than one read chunk arrives whole. */
ATF_TC_WITHOUT_HEAD(large_payload);
ATF_TC_BODY(large_payload, tc)
{
	struct channel a, b;
	struct msg m;
	size_t len = 3 * 1024 * 1024 + 17, i;
	uint8_t *buf;
	pid_t pid;
	int status;

	ATF_REQUIRE((buf = malloc(len)) != NULL);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31);
	pair(&a, &b);
	/* The writer blocks until the reader drains: write from a child. */
	if ((pid = fork()) == 0) {
		_exit(channel_send_sync(&a, MSG_TOOL_RESULT, 1, -1, buf, len,
		    10000) == 0 ? 0 : 1);
	}
	ATF_REQUIRE(channel_recv_sync(&b, &m, 10000) == 0);
	ATF_CHECK_EQ(m.len, len);
	ATF_CHECK(memcmp(m.data, buf, len) == 0);
	ATF_REQUIRE(waitpid(pid, &status, 0) == pid);
	ATF_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(buf);
	unpair(&a, &b);
}

ATF_TC_WITHOUT_HEAD(fd_passing);
ATF_TC_BODY(fd_passing, tc)
{
	struct channel a, b;
	struct msg m;
	char buf[16];
	int p[2];

	pair(&a, &b);
	ATF_REQUIRE(pipe(p) == 0);
	ATF_REQUIRE(write(p[1], "secret", 6) == 6);
	close(p[1]);
	/* The channel owns and closes the sent descriptor. */
	ATF_REQUIRE(channel_send_sync(&a, MSG_CRED_ISSUED, 3, p[0], "{}", 2,
	    1000) == 0);
	ATF_CHECK(fcntl(p[0], F_GETFD) == -1 && errno == EBADF);
	ATF_REQUIRE(channel_recv_sync(&b, &m, 1000) == 0);
	ATF_CHECK(m.hdr.flags & MSGF_FD);
	ATF_REQUIRE(m.fd >= 0);
	ATF_CHECK(fcntl(m.fd, F_GETFD) & FD_CLOEXEC);
	ATF_CHECK_EQ(read(m.fd, buf, sizeof(buf)), 6);
	ATF_CHECK(memcmp(buf, "secret", 6) == 0);
	close(m.fd);
	unpair(&a, &b);
}

/* A header arriving a byte at a time is not a frame until it is whole. */
ATF_TC_WITHOUT_HEAD(short_frame);
ATF_TC_BODY(short_frame, tc)
{
	struct channel a, b;
	struct msg_hdr h = hdr(MSG_PING, 4, 0);
	struct msg m;
	size_t i;

	pair(&a, &b);
	for (i = 0; i < sizeof(h); i++) {
		raw(&a, (char *)&h + i, 1);
		ATF_CHECK_EQ(get_after_read(&b, &m), 0);
	}
	raw(&a, "abc", 3);
	ATF_CHECK_EQ(get_after_read(&b, &m), 0);
	raw(&a, "d", 1);
	ATF_CHECK_EQ(get_after_read(&b, &m), 1);
	ATF_CHECK_EQ(m.len, 4);
	/* EOF in the middle of a frame reads as EOF, not as a frame. */
	raw(&a, &h, 10);
	close(a.fd);
	ATF_CHECK_EQ(get_after_read(&b, &m), 0);
	ATF_CHECK_EQ(channel_read(&b), 0);
	ATF_CHECK_EQ(channel_recv_sync(&b, &m, 100), -1);
	close(b.fd);
	channel_clear(&a);
	channel_clear(&b);
}

static void
expect_garbled(struct msg_hdr h, int err)
{
	struct channel a, b;
	struct msg m;

	pair(&a, &b);
	raw(&a, &h, sizeof(h));
	errno = 0;
	ATF_CHECK_EQ(get_after_read(&b, &m), -1);
	ATF_CHECK_EQ(errno, err);
	unpair(&a, &b);
}

ATF_TC_WITHOUT_HEAD(garbled_frames);
ATF_TC_BODY(garbled_frames, tc)
{
	struct msg_hdr h;

	h = hdr(MSG_PING, 0, 0);
	h.version = 99;
	expect_garbled(h, EPROTO);
	expect_garbled(hdr(MSG_NONE, 0, 0), EPROTO);
	expect_garbled(hdr(MSG_PING, 0, 0x8000), EPROTO);
	/* The FD flag with no descriptor attached. */
	expect_garbled(hdr(MSG_PING, 0, MSGF_FD), EPROTO);
	expect_garbled(hdr(MSG_PING, MSG_MAX_PAYLOAD + 1, 0), EMSGSIZE);
	expect_garbled(hdr(MSG_PING, 0xffffffff, 0), EMSGSIZE);
}

/* Random bytes never crash the reader and never yield a bogus frame. */
ATF_TC_WITHOUT_HEAD(random_garbage);
ATF_TC_BODY(random_garbage, tc)
{
	struct channel a, b;
	struct msg m;
	uint8_t buf[512];
	int i, r;
	size_t j;

	srandom(1);
	for (i = 0; i < 500; i++) {
		pair(&a, &b);
		for (j = 0; j < sizeof(buf); j++)
			buf[j] = (uint8_t)random();
		raw(&a, buf, 24 + (size_t)(random() % 488));
		r = get_after_read(&b, &m);
		ATF_CHECK(r == -1 || r == 0 ||
		    (m.hdr.version == PROTO_VERSION && m.len <= 488));
		unpair(&a, &b);
	}
}

/*
 * Sends buf with the read ends of n new pipes in one message, as a
 * hostile peer would; wr gets the write ends.
 */
static void
raw_fds(struct channel *c, const void *buf, size_t len, int n, int wr[])
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * 8)];
	} cm;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cmh;
	int rd[8], p[2], i;

	ATF_REQUIRE(n > 0 && n <= 8);
	for (i = 0; i < n; i++) {
		ATF_REQUIRE(pipe(p) == 0);
		rd[i] = p[0];
		wr[i] = p[1];
	}
	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
	cmh = CMSG_FIRSTHDR(&mh);
	cmh->cmsg_level = SOL_SOCKET;
	cmh->cmsg_type = SCM_RIGHTS;
	cmh->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cmh), rd, sizeof(int) * n);
	ATF_REQUIRE(sendmsg(c->fd, &mh, 0) == (ssize_t)len);
	for (i = 0; i < n; i++)
		close(rd[i]);
}

/*
 * Whether the receiver closed the read end it got: with no reader left,
 * the pipe's write end gets EPIPE.  Then closes the write end.
 */
static int
reader_closed(int wr)
{
	int r;

	r = write(wr, "x", 1) == -1 && errno == EPIPE;
	close(wr);
	return r;
}

/* Two descriptors in one message, or more, garble the stream at once. */
ATF_TC_WITHOUT_HEAD(too_many_fds);
ATF_TC_BODY(too_many_fds, tc)
{
	struct channel a, b;
	struct msg_hdr h = hdr(MSG_CRED_ISSUED, 0, MSGF_FD);
	int wr[8], n, i;

	signal(SIGPIPE, SIG_IGN);
	for (n = 2; n <= 8; n *= 2) {
		pair(&a, &b);
		raw_fds(&a, &h, sizeof(h), n, wr);
		errno = 0;
		ATF_CHECK_EQ(channel_read(&b), -1);
		ATF_CHECK_EQ(errno, EPROTO);
		ATF_CHECK_EQ(b.nrfds, 0);
		for (i = 0; i < n; i++)
			ATF_CHECK(reader_closed(wr[i]));
		unpair(&a, &b);
	}
}

/* Only the types msg_carries_fd names may carry one; others drop. */
ATF_TC_WITHOUT_HEAD(fd_type_refused);
ATF_TC_BODY(fd_type_refused, tc)
{
	static const uint32_t refused[] = { MSG_PING, MSG_AUDIT_EVENT,
	    MSG_CRED_ISSUE, MSG_TOOL_CALL, AGENT_REPLY };
	struct channel a, b;
	struct msg m;
	size_t i;
	int p[2];

	signal(SIGPIPE, SIG_IGN);
	ATF_CHECK(msg_carries_fd(MSG_CRED_ISSUED));
	ATF_CHECK(msg_carries_fd(LMSG_RUN));
	ATF_CHECK(msg_carries_fd(LMSG_EGRESS_SOCKET));
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ATF_CHECK(!msg_carries_fd(refused[i]));
		pair(&a, &b);
		ATF_REQUIRE(pipe(p) == 0);
		ATF_REQUIRE(channel_send_sync(&a, refused[i], 1, p[0], "{}", 2,
		    1000) == 0);
		errno = 0;
		ATF_CHECK_EQ(channel_recv_sync(&b, &m, 1000), -1);
		ATF_CHECK_EQ(errno, EBADMSG);
		/* Closed at once, not when the channel is cleared. */
		ATF_CHECK(reader_closed(p[1]));
		unpair(&a, &b);
	}
}

/* A descriptor that no frame claims is closed as soon as that is clear. */
ATF_TC_WITHOUT_HEAD(stray_fd);
ATF_TC_BODY(stray_fd, tc)
{
	struct channel a, b;
	struct msg_hdr h = hdr(MSG_PING, 0, 0), hp = hdr(MSG_PING, 4, 0);
	struct msg m;
	int wr;

	signal(SIGPIPE, SIG_IGN);
	/* With a whole frame that claims none: that frame still counts. */
	pair(&a, &b);
	raw_fds(&a, &h, sizeof(h), 1, &wr);
	ATF_CHECK_EQ(get_after_read(&b, &m), 1);
	ATF_CHECK_EQ(m.hdr.type, MSG_PING);
	ATF_CHECK_EQ(m.fd, -1);
	errno = 0;
	ATF_CHECK_EQ(channel_get(&b, &m), -1);
	ATF_CHECK_EQ(errno, EPROTO);
	ATF_CHECK(reader_closed(wr));
	unpair(&a, &b);
	/* With the middle of a frame. */
	pair(&a, &b);
	raw(&a, &hp, sizeof(hp));
	ATF_CHECK_EQ(get_after_read(&b, &m), 0);
	raw_fds(&a, "ab", 2, 1, &wr);
	errno = 0;
	ATF_CHECK_EQ(get_after_read(&b, &m), -1);
	ATF_CHECK_EQ(errno, EPROTO);
	ATF_CHECK(reader_closed(wr));
	unpair(&a, &b);
}

/*
 * A loopback TCP socket whose close would wait LINGER_S seconds: its
 * peer (*peer, kept open) never reads and has a small window, and more
 * is queued than the window takes.
 */
#define LINGER_S	5
static void
fill(int c)
{
	char buf[65536];

	memset(buf, 'x', sizeof(buf));
	while (write(c, buf, sizeof(buf)) > 0)
		;
	ATF_REQUIRE(errno == EAGAIN);
}

static int
lingering_tcp(int *peer)
{
	struct sockaddr_in sin;
	struct linger lg = { .l_onoff = 1, .l_linger = LINGER_S };
	socklen_t len = sizeof(sin);
	int l, c, small = 4096;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ATF_REQUIRE((l = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	ATF_REQUIRE(setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small,
	    sizeof(small)) == 0);
	ATF_REQUIRE(bind(l, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_REQUIRE(listen(l, 1) == 0);
	ATF_REQUIRE(getsockname(l, (struct sockaddr *)&sin, &len) == 0);
	ATF_REQUIRE((c = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	ATF_REQUIRE(connect(c, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_REQUIRE((*peer = accept(l, NULL, NULL)) != -1);
	close(l);
	/* Twice: the first fill ends before the peer's window closes. */
	ATF_REQUIRE(fcntl(c, F_SETFL, O_NONBLOCK) == 0);
	fill(c);
	usleep(200000);
	fill(c);
	ATF_REQUIRE(fcntl(c, F_SETFL, 0) == 0);
	ATF_REQUIRE(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg,
	    sizeof(lg)) == 0);
	return c;
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * A peer's lingering socket is closed at once, also when the channel
 * drops its frame: no loop waits out the linger.
 */
ATF_TC(lingering_fd);
ATF_TC_HEAD(lingering_fd, tc)
{
	atf_tc_set_md_var(tc, "descr", "a received socket set to linger "
	    "is closed without waiting");
	atf_tc_set_md_var(tc, "timeout", "60");
}
ATF_TC_BODY(lingering_fd, tc)
{
	struct channel a, b;
	struct timespec t0;
	struct msg m;
	int peer;

	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	close_received(lingering_tcp(&peer));
	ATF_CHECK_MSG(seconds_since(&t0) < LINGER_S / 2.0,
	    "close_received waited %.1f s", seconds_since(&t0));
	close(peer);
	/* On a frame that may carry none: dropped and closed at once. */
	pair(&a, &b);
	ATF_REQUIRE(channel_send_sync(&a, MSG_PING, 1, lingering_tcp(&peer),
	    NULL, 0, 1000) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	ATF_CHECK_EQ(channel_recv_sync(&b, &m, 1000), -1);
	ATF_CHECK_EQ(errno, EBADMSG);
	ATF_CHECK_MSG(seconds_since(&t0) < LINGER_S / 2.0,
	    "the channel's close waited %.1f s", seconds_since(&t0));
	close(peer);
	unpair(&a, &b);
}

ATF_TC_WITHOUT_HEAD(compose_oversized);
ATF_TC_BODY(compose_oversized, tc)
{
	struct channel a, b;

	pair(&a, &b);
	errno = 0;
	ATF_CHECK_EQ(channel_compose(&a, MSG_PING, 0, 0, -1, "",
	    (size_t)MSG_MAX_PAYLOAD + 1), -1);
	ATF_CHECK_EQ(errno, EMSGSIZE);
	ATF_CHECK(!channel_pending(&a));
	unpair(&a, &b);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, header_size);
	ATF_TP_ADD_TC(tp, round_trip);
	ATF_TP_ADD_TC(tp, large_payload);
	ATF_TP_ADD_TC(tp, fd_passing);
	ATF_TP_ADD_TC(tp, short_frame);
	ATF_TP_ADD_TC(tp, garbled_frames);
	ATF_TP_ADD_TC(tp, random_garbage);
	ATF_TP_ADD_TC(tp, too_many_fds);
	ATF_TP_ADD_TC(tp, fd_type_refused);
	ATF_TP_ADD_TC(tp, stray_fd);
	ATF_TP_ADD_TC(tp, lingering_fd);
	ATF_TP_ADD_TC(tp, compose_oversized);
	return atf_no_error();
}
