/* SPDX-License-Identifier: ISC */
/*
 * A test client that speaks the suite's framing on any daemon socket,
 * well or badly:
 *
 *   frametool ping SOCKET             PONG from the daemon (exit 0)
 *   frametool send SOCKET TYPE [JSON] one request; prints each reply as
 *                                     "NAME payload" until a final one
 *   frametool garbage SOCKET          junk bytes; exit 0 if dropped
 *   frametool oversize SOCKET         a header claiming a huge payload
 *   frametool badversion SOCKET       a header of another protocol
 *   frametool hold SOCKET SECONDS     connect, stay idle, then ping on
 *                                     the same connection
 *   frametool fds SOCKET TYPE N       N frames of TYPE, each carrying a
 *                                     descriptor of /dev/null, each on a
 *                                     new connection; prints how many the
 *                                     daemon answered, how many it dropped
 *                                     and how many the kernel refused
 *                                     (EPERM: SO_PASSRIGHTS)
 *   frametool types                   proto.h's list of message types,
 *                                     "SYMBOL NUMBER NAME" a line
 *
 * Exit status: 0 as described, 2 if the daemon answered MSG_ERROR,
 * 1 on anything else.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "sock.h"

#define TIMEOUT_MS	10000
/*
 * A request's answer may be a whole terraform plan on a loaded machine:
 * it waits as long as any call may last, and the test's own timeout
 * bounds it.  A hang is what the tests look for, not a slow answer.
 */
#define REPLY_TIMEOUT_MS	600000

static int
print_reply(const struct msg *m)
{
	const struct msg_error *e;
	const struct msg_pong *p;

	switch (m->hdr.type) {
	case MSG_ERROR:
		e = (const struct msg_error *)m->data;
		if (m->len != sizeof(*e))
			return 1;
		printf("ERROR %d %.*s\n", e->code, (int)sizeof(e->text),
		    e->text);
		return 2;
	case MSG_PONG:
		p = (const struct msg_pong *)m->data;
		if (m->len != sizeof(*p))
			return 1;
		printf("PONG %.*s\n", (int)sizeof(p->proc), p->proc);
		return 0;
	default:
		printf("%s %.*s%s\n", msg_type_name(m->hdr.type), (int)m->len,
		    (const char *)m->data, m->fd != -1 ? " [fd]" : "");
		if (m->fd != -1)
			close(m->fd);
		return 0;
	}
}

/* Streamed replies end with an *_END frame or the call's result. */
static int
streamed(uint32_t type)
{
	return type == MSG_CTL_ENTRY || type == MSG_AUDIT_RECORD ||
	    type == MSG_TOOL_PROGRESS || type == MSG_TOOL_LOG;
}

static int
request(struct channel *ch, uint32_t type, const char *payload)
{
	struct msg m;
	int r;

	if (channel_send_sync(ch, type, 1, -1, payload,
	    payload ? strlen(payload) : 0, TIMEOUT_MS) == -1 &&
	    errno != EPIPE && errno != ECONNRESET) {
		perror("send");
		return 1;
	}
	do {
		if (channel_recv_sync(ch, &m, REPLY_TIMEOUT_MS) == -1) {
			printf("dropped\n");
			return 1;
		}
		if ((r = print_reply(&m)) != 0)
			return r;
	} while (streamed(m.hdr.type));
	fflush(stdout);
	return 0;
}

/* 0 when the daemon closes the connection on us, as it must. */
static int
expect_drop(struct channel *ch, const void *bytes, size_t len)
{
	struct msg m;

	if (write(ch->fd, bytes, len) != (ssize_t)len && errno != EPIPE)
		return 1;
	for (;;) {
		if (channel_recv_sync(ch, &m, TIMEOUT_MS) == -1)
			return errno == ECONNRESET ? 0 : 1;
		print_reply(&m);
	}
}

/* Each frame on its own connection, so that every one reaches the daemon. */
static int
send_fds(const char *path, uint32_t type, long long n)
{
	struct channel ch;
	struct msg m;
	long long i, answered = 0, dropped = 0, refused = 0;
	int s, fd, r;

	for (i = 0; i < n; i++) {
		if ((s = sock_connect(path)) == -1 ||
		    (fd = open("/dev/null", O_RDONLY)) == -1) {
			perror(path);
			return 1;
		}
		channel_init(&ch, s);
		r = channel_send_sync(&ch, type, 1, fd, NULL, 0, TIMEOUT_MS);
		if (r == -1 && errno == EPERM)
			refused++;
		else if (r == -1 && errno != EPIPE && errno != ECONNRESET) {
			perror("send");
			return 1;
		} else if (channel_recv_sync(&ch, &m, TIMEOUT_MS) == 0) {
			answered++;
			if (m.fd != -1)
				close(m.fd);
		} else if (errno == ECONNRESET)
			dropped++;
		else {
			perror("receive");
			return 1;
		}
		channel_clear(&ch);
		close(s);
	}
	printf("answered %lld dropped %lld refused %lld\n", answered,
	    dropped, refused);
	return 0;
}

static int
run(struct channel *chp, int argc, char *argv[])
{
	struct msg_hdr h;
	char junk[64];
	const char *errstr;
	long long type, n;

	memset(&h, 0, sizeof(h));
	h.version = PROTO_VERSION;
	h.type = MSG_PING;
	if (strcmp(argv[1], "ping") == 0)
		return request(chp, MSG_PING, NULL);
	if (strcmp(argv[1], "send") == 0 && argc >= 4) {
		type = strtonum(argv[3], 1, UINT32_MAX, &errstr);
		if (errstr != NULL)
			return 1;
		return request(chp, (uint32_t)type, argc > 4 ? argv[4] : NULL);
	}
	if (strcmp(argv[1], "garbage") == 0) {
		memset(junk, 0xa5, sizeof(junk));
		return expect_drop(chp, junk, sizeof(junk));
	}
	if (strcmp(argv[1], "oversize") == 0) {
		h.len = MSG_MAX_PAYLOAD + 1;
		return expect_drop(chp, &h, sizeof(h));
	}
	if (strcmp(argv[1], "badversion") == 0) {
		h.version = PROTO_VERSION + 1;
		return expect_drop(chp, &h, sizeof(h));
	}
	if (strcmp(argv[1], "fds") == 0 && argc == 5) {
		type = strtonum(argv[3], 1, UINT32_MAX, &errstr);
		if (errstr != NULL)
			return 1;
		n = strtonum(argv[4], 1, 100000, &errstr);
		if (errstr != NULL)
			return 1;
		return send_fds(argv[2], (uint32_t)type, n);
	}
	if (strcmp(argv[1], "hold") == 0 && argc == 4) {
		sleep((unsigned)atoi(argv[3]));
		return request(chp, MSG_PING, NULL);
	}
	fprintf(stderr, "frametool: unknown command %s\n", argv[1]);
	return 1;
}

static int
print_types(void)
{
#define MSG_PRINT(sym, num, fd, name)	printf("%s %u %s\n", #sym, num, name);
	MSG_TYPES(MSG_PRINT)
#undef MSG_PRINT
	return 0;
}

int
main(int argc, char *argv[])
{
	struct channel ch;
	int fd, r;

	if (argc == 2 && strcmp(argv[1], "types") == 0)
		return print_types();
	if (argc < 3) {
		fprintf(stderr, "usage: frametool command socket [args]\n");
		return 1;
	}
	if ((fd = sock_connect(argv[2])) == -1) {
		perror(argv[2]);
		return 1;
	}
	channel_init(&ch, fd);
	r = run(&ch, argc, argv);
	channel_clear(&ch);
	close(fd);
	return r;
}
