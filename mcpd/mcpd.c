#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "event.h"
#include "log.h"
#include "mcpd.h"
#include "sandbox.h"
#include "sock.h"

#define RUNNER_TIMEOUT_MS	5000

struct mcpd	 mcpd;

/* Connects to runnerd and checks that it answers before serving stdio. */
static void
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
}

static void
stdin_event(int fd, short revents, void *arg)
{
	char buf[4096];
	ssize_t n;

	(void)revents;
	(void)arg;
	n = read(fd, buf, sizeof(buf));
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		log_debug("stdin closed, exiting");
		ev_break();
	}
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;

	daemon_start(argc, argv, "mcpd", &opts, &mcpd.conf);
	runner_connect();
	daemon_signals(NULL);
	priv_drop(mcpd.conf.mcpd.user);
	sandbox_enter(ROLE_MCPD, NULL, daemon_trap(&mcpd.conf));
	if (ev_add(STDIN_FILENO, POLLIN, stdin_event, NULL) == -1)
		fatal("ev_add");
	daemon_run();
	return 0;
}
