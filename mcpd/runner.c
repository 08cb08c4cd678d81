/* SPDX-License-Identifier: ISC */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "event.h"
#include "io.h"
#include "log.h"
#include "mcpd.h"
#include "sock.h"

/*
 * runner.sock: the one socket mcpd has.  The first connection is made
 * before the sandbox, and mcpd does not start without runnerd.  When
 * runnerd goes away later, the calls in flight fail (runnerd may have
 * run them in part: their outcome is unknown) and mcpd reconnects from
 * its event loop, backing off from RETRY_MIN_MS to RETRY_MAX_MS.  Until
 * runnerd answers PING again, new calls fail at once, so stdio is never
 * held up.  Calls exist only while runnerd is up: no request id,
 * progress token or cancellation outlives a connection; a task waiting
 * for its approval waits again on the next (tasks.c).  Every call
 * carries the client key made here, which runnerd makes this client's
 * id at approvald of: a new connection is the same client (call.c),
 * and with a kept key (-k) so is a new mcpd (tasks.c).
 */
#define RUNNER_TIMEOUT_MS	5000
#define RETRY_MIN_MS		100
#define RETRY_MAX_MS		2000
#define WHY_MAX			512	/* room for runnerd's refusal */

enum runner_state {
	RUNNER_DOWN,		/* waiting for the retry timer */
	RUNNER_HELLO,		/* connected, PING sent */
	RUNNER_UP
};

static enum runner_state	 state;
static char			 path[PATH_MAX];
static long			 retry_ms = RETRY_MIN_MS;
static uint64_t			 timer;		/* retry, or PING deadline */

static void	runner_retry(void *);

/* The next attempt, each one waiting twice as long as the last. */
static void
retry_later(void)
{
	timer = ev_timer(retry_ms, runner_retry, NULL);
	retry_ms = retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : retry_ms * 2;
}

/* runnerd broke the protocol: a bug, not a restart. */
static __attribute__((noreturn)) void
runner_fatal(const char *why)
{
	tools_fail_all("runnerd broke the protocol before answering: the "
	    "outcome of this call is unknown");
	fatalx("runner.sock: %s", why);
}

/* The connection is gone: fail what it carried, try again later. */
static void
runner_lost(const char *why)
{
	int was_up = state == RUNNER_UP;

	log_warnx("runner.sock: %s; reconnecting", why);
	/* What changes now waits for the next connection (tasks.c). */
	state = RUNNER_DOWN;
	if (was_up) {
		tools_fail_all("runnerd went away before answering (stopped "
		    "or restarted): the outcome of this call is unknown; "
		    "check before calling again");
		tasks_runner_lost("runnerd went away (stopped or "
		    "restarted) while it ran the call: the outcome is "
		    "unknown; check with approvalctl before calling again");
		resources_fail_all();
	}
	ev_del(mcpd.runner.fd);
	close(mcpd.runner.fd);
	channel_clear(&mcpd.runner);
	mcpd.runner.fd = -1;
	ev_timer_cancel(timer);
	retry_later();
}

static void
runner_stalled(void *arg)
{
	(void)arg;
	timer = 0;
	runner_lost("runnerd did not answer PING");
}

/* 0 for a PONG; -1 with why when runnerd would not have us. */
static int
runner_hello(const struct msg *m, char *why, size_t len)
{
	const struct msg_error *e = (const struct msg_error *)m->data;

	if (m->hdr.type == MSG_PONG)
		return 0;
	if (m->hdr.type == MSG_ERROR && m->len == sizeof(*e))
		snprintf(why, len, "runnerd refused us: %.*s",
		    (int)sizeof(e->text), e->text);
	else
		snprintf(why, len, "runnerd answered %s to PING",
		    msg_type_name(m->hdr.type));
	return -1;
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
	case MSG_PLAN:
		resources_plan(m->hdr.reqid, m->data, m->len);
		break;
	case MSG_TOOL_LOG:
		tools_log(m->hdr.reqid, m->data, m->len);
		break;
	case MSG_TOOL_CANCELLED:
		tasks_cancelled(m->hdr.reqid, m->data, m->len);
		break;
	case MSG_TASK_RECORD:
		tasks_loaded(m->hdr.reqid, m->data, m->len);
		break;
	case MSG_ERROR:
		if (m->len != sizeof(*e))
			runner_fatal("malformed MSG_ERROR");
		e = (struct msg_error *)m->data;
		e->text[sizeof(e->text) - 1] = '\0';
		if (!tasks_failed(m->hdr.reqid, e->text) &&
		    !resources_failed(m->hdr.reqid, e->text))
			tools_failed(m->hdr.reqid, e->text);
		break;
	default:
		runner_fatal(msg_type_name(m->hdr.type));
	}
}

static void
runner_event(int fd, short revents, void *arg)
{
	struct msg m;
	char why[WHY_MAX];
	ssize_t n;
	int r;

	(void)arg;
	if ((revents & POLLOUT) && channel_flush(&mcpd.runner) == -1) {
		runner_lost(strerror(errno));
		return;
	}
	if (!channel_pending(&mcpd.runner))
		ev_set(fd, POLLIN);
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = channel_read(&mcpd.runner);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK)) {
		runner_lost(n == 0 ? "runnerd closed the connection" :
		    strerror(errno));
		return;
	}
	while ((r = channel_get(&mcpd.runner, &m)) == 1) {
		if (state == RUNNER_UP) {
			mcpd_dispatch_runner(&m);
			continue;
		}
		if (runner_hello(&m, why, sizeof(why)) == -1) {
			runner_lost(why);
			return;
		}
		log_info("runnerd is back at %s", path);
		state = RUNNER_UP;
		retry_ms = RETRY_MIN_MS;
		ev_timer_cancel(timer);
		timer = 0;
		tasks_runner_back();
	}
	if (r == -1)
		runner_fatal("garbled frame");
}

/* Never blocks: a runnerd that is not there yet is tried again later. */
static void
runner_retry(void *arg)
{
	int fd;

	(void)arg;
	timer = 0;
	if ((fd = sock_connect_nonblock(path)) == -1) {
		log_debug("connect %s: %s", path, strerror(errno));
		retry_later();
		return;
	}
	channel_init(&mcpd.runner, fd);
	if (channel_compose(&mcpd.runner, MSG_PING, 0, 0, -1, NULL, 0) == -1 ||
	    ev_add(fd, POLLIN | POLLOUT, runner_event, NULL) == -1)
		fatal("runner.sock");
	state = RUNNER_HELLO;
	timer = ev_timer(RUNNER_TIMEOUT_MS, runner_stalled, NULL);
}

static void
new_client_key(void)
{
	unsigned char key[CLIENT_KEY_HEX / 2];

	if (getrandom(key, sizeof(key), 0) != sizeof(key))
		fatal("getrandom");
	hex_encode(key, sizeof(key), mcpd.client_key);
	explicit_bzero(key, sizeof(key));
}

/* A new key into file, which must not exist: the fd, or -1 (EEXIST). */
static int
create_key_file(const char *file)
{
	char line[CLIENT_KEY_HEX + 1];
	int fd;

	if ((fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	new_client_key();
	snprintf(line, sizeof(line), "%s", mcpd.client_key);
	line[CLIENT_KEY_HEX] = '\n';
	if (write_full(fd, line, sizeof(line)) == -1 || fsync(fd) == -1)
		fatal("%s", file);
	explicit_bzero(line, sizeof(line));
	log_info("%s: a new client key", file);
	return fd;
}

/*
 * The client key, which runnerd makes this client's id (call.c) and
 * files its kept tasks under (taskstore.c): new for each mcpd, or kept
 * in file (-k), created on first use, so that every mcpd a client
 * starts with it is the same client and finds its tasks.  Like an ssh
 * key, a file others may read is refused.
 */
static void
client_key(const char *file)
{
	char buf[CLIENT_KEY_HEX + 2];
	struct stat st;
	ssize_t n;
	size_t i;
	int fd;

	if (file == NULL) {
		new_client_key();
		return;
	}
	mcpd.key_kept = 1;
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT && (fd = create_key_file(file)) != -1) {
		close(fd);
		return;
	}
	/* Another mcpd made it first: read what it wrote. */
	if (fd == -1 && errno == EEXIST)
		fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1)
		fatal("client key %s", file);
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0)
		fatalx("client key %s: must be a regular file that only its "
		    "owner may read (chmod 600)", file);
	n = read_full(fd, buf, sizeof(buf));
	close(fd);
	if (n == CLIENT_KEY_HEX + 1 && buf[CLIENT_KEY_HEX] == '\n')
		n--;
	for (i = 0; n == CLIENT_KEY_HEX && i < CLIENT_KEY_HEX; i++)
		if (!((buf[i] >= '0' && buf[i] <= '9') ||
		    (buf[i] >= 'a' && buf[i] <= 'f')))
			break;
	if (n != CLIENT_KEY_HEX || i != CLIENT_KEY_HEX)
		fatalx("client key %s: not %d lowercase hex digits and a "
		    "newline", file, CLIENT_KEY_HEX);
	memcpy(mcpd.client_key, buf, CLIENT_KEY_HEX);
	mcpd.client_key[CLIENT_KEY_HEX] = '\0';
	explicit_bzero(buf, sizeof(buf));
}

/* Connects and checks that runnerd answers before stdio is served. */
void
runner_connect(const char *keyfile)
{
	struct msg m;
	char why[WHY_MAX];
	int fd;

	if (config_socket_path(&mcpd.conf, "runner.sock", path,
	    sizeof(path)) == -1)
		fatal("runner.sock");
	client_key(keyfile);
	if ((fd = sock_connect(path)) == -1)
		fatal("connect %s (is runnerd running?)", path);
	channel_init(&mcpd.runner, fd);
	if (channel_send_sync(&mcpd.runner, MSG_PING, 0, -1, NULL, 0,
	    RUNNER_TIMEOUT_MS) == -1 ||
	    channel_recv_sync(&mcpd.runner, &m, RUNNER_TIMEOUT_MS) == -1)
		fatal("runnerd at %s", path);
	if (runner_hello(&m, why, sizeof(why)) == -1)
		fatalx("%s", why);
	if (ev_add(fd, POLLIN, runner_event, NULL) == -1)
		fatal("ev_add");
	state = RUNNER_UP;
}

/* 1 when runnerd takes calls; else a new call must fail at once. */
int
runner_ready(void)
{
	return state == RUNNER_UP;
}

/*
 * Queues a frame for runnerd, which must be up: 0, or -1 (EMSGSIZE)
 * when it cannot be framed.  The event loop sends it, so that a broken
 * connection is torn down there and never under a caller's feet.
 */
int
runner_send(uint32_t type, uint64_t reqid, const void *data, size_t len)
{
	if (channel_compose(&mcpd.runner, type, 0, reqid, -1, data, len) == -1)
		return -1;
	ev_set(mcpd.runner.fd, POLLIN | POLLOUT);
	return 0;
}

/* runner_send for a JSON payload (msg, taken; NULL: out of memory). */
int
runner_send_json(uint32_t type, uint64_t reqid, json_t *msg)
{
	char *payload;
	int r;

	if (msg == NULL || (payload = json_dumps(msg, JSON_COMPACT)) == NULL)
		fatalx("cannot encode a message for runnerd");
	json_decref(msg);
	r = runner_send(type, reqid, payload, strlen(payload));
	free(payload);
	return r;
}

/*
 * Gives queued frames up to ms to reach runnerd: on the way out, the
 * cancellations; before a task's answer, its record (tasks.c).
 */
void
runner_drain(int ms)
{
	struct pollfd pfd = { .fd = mcpd.runner.fd, .events = POLLOUT };
	int64_t deadline = ev_now_ms() + ms;

	while (channel_pending(&mcpd.runner) && ev_now_ms() < deadline) {
		if (poll(&pfd, 1, (int)(deadline - ev_now_ms())) <= 0 ||
		    channel_flush(&mcpd.runner) == -1)
			return;
	}
}
