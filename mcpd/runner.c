#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "log.h"
#include "mcpd.h"
#include "sock.h"

/*
 * runner.sock: the one socket mcpd has.  It is connected before the
 * sandbox closes socket(2) and connect(2), so when runnerd goes away
 * mcpd cannot reconnect: it fails what is in flight and exits, and the
 * MCP client starts a new mcpd.
 */
#define RUNNER_TIMEOUT_MS	5000

static __attribute__((noreturn)) void
runner_gone(const char *why)
{
	tools_fail_all("runnerd went away before answering");
	fatalx("runner.sock: %s", why);
}

static void
mcpd_dispatch_runner(struct msg *m)
{
	struct msg_error *e;

	switch (m->hdr.type) {
	case MSG_TOOL_PROGRESS:
		tools_progress(m->hdr.reqid, m->data, m->len);
		break;
	case MSG_TOOL_RESULT:
		tools_result(m->hdr.reqid, m->data, m->len);
		break;
	case MSG_ERROR:
		if (m->len != sizeof(*e))
			runner_gone("malformed MSG_ERROR");
		e = (struct msg_error *)m->data;
		e->text[sizeof(e->text) - 1] = '\0';
		tools_failed(m->hdr.reqid, e->text);
		break;
	default:
		runner_gone(msg_type_name(m->hdr.type));
	}
}

static void
runner_event(int fd, short revents, void *arg)
{
	struct msg m;
	ssize_t n;
	int r;

	(void)arg;
	if ((revents & POLLOUT) && channel_flush(&mcpd.runner) == -1)
		runner_gone(strerror(errno));
	if (!channel_pending(&mcpd.runner))
		ev_set(fd, POLLIN);
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = channel_read(&mcpd.runner);
	if (n == 0)
		runner_gone("runnerd closed the connection");
	if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK)
		runner_gone(strerror(errno));
	while ((r = channel_get(&mcpd.runner, &m)) == 1)
		mcpd_dispatch_runner(&m);
	if (r == -1)
		runner_gone("garbled frame");
}

/* Connects and checks that runnerd answers before stdio is served. */
void
runner_connect(void)
{
	char path[PATH_MAX];
	struct msg m;
	int fd;

	if (config_socket_path(&mcpd.conf, "runner.sock", path,
	    sizeof(path)) == -1)
		fatal("runner.sock");
	if ((fd = sock_connect(path)) == -1)
		fatal("connect %s (is runnerd running?)", path);
	channel_init(&mcpd.runner, fd);
	if (channel_send_sync(&mcpd.runner, MSG_PING, 0, -1, NULL, 0,
	    RUNNER_TIMEOUT_MS) == -1 ||
	    channel_recv_sync(&mcpd.runner, &m, RUNNER_TIMEOUT_MS) == -1)
		fatal("runnerd at %s", path);
	if (m.hdr.type == MSG_ERROR && m.len == sizeof(struct msg_error))
		fatalx("runnerd refused us: %.*s",
		    (int)sizeof(((struct msg_error *)0)->text),
		    ((struct msg_error *)m.data)->text);
	if (m.hdr.type != MSG_PONG)
		fatalx("runnerd answered %s to PING",
		    msg_type_name(m.hdr.type));
	if (ev_add(fd, POLLIN, runner_event, NULL) == -1)
		fatal("ev_add");
}

/* Queues a frame: 0, or -1 (EMSGSIZE) when it cannot be framed. */
int
runner_send(uint32_t type, uint64_t reqid, const void *data, size_t len)
{
	if (channel_compose(&mcpd.runner, type, 0, reqid, -1, data, len) == -1)
		return -1;
	if (channel_flush(&mcpd.runner) == -1)
		runner_gone(strerror(errno));
	if (channel_pending(&mcpd.runner))
		ev_set(mcpd.runner.fd, POLLIN | POLLOUT);
	return 0;
}

/* On the way out: give queued cancellations a moment to reach runnerd. */
void
runner_drain(void)
{
	struct pollfd pfd = { .fd = mcpd.runner.fd, .events = POLLOUT };
	int64_t deadline = ev_now_ms() + RUNNER_TIMEOUT_MS;

	while (channel_pending(&mcpd.runner) && ev_now_ms() < deadline) {
		if (poll(&pfd, 1, (int)(deadline - ev_now_ms())) <= 0 ||
		    channel_flush(&mcpd.runner) == -1)
			return;
	}
}
