/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <syslog.h>
#include <unistd.h>

#include "audit.h"
#include "daemon.h"
#include "event.h"
#include "log.h"
#include "mcpd.h"
#include "sandbox.h"
#include "tools.h"

#define STDIN_CHUNK	(64 * 1024)
#define RUNNER_DRAIN_MS	5000	/* on the way out */

static struct linereader	 lr;

static void
stdin_event(int fd, short revents, void *arg)
{
	static char buf[STDIN_CHUNK];
	ssize_t n;

	(void)revents;
	(void)arg;
	n = read(fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		log_info("stdin closed, exiting");
		ev_del(fd);
		ev_break();
		return;
	}
	lr_feed(&lr, buf, (size_t)n, mcp_line, mcp_line_too_long, NULL);
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	char err[256];

	daemon_start(argc, argv, "mcpd", &opts, &mcpd.conf);
	/*
	 * stdout carries MCP alone and syslog would need a socket once
	 * sandboxed: logs go to stderr, as MCP clients expect.
	 */
	closelog();
	log_init(1, LOG_DAEMON);
	if (tools_init(err, sizeof(err)) == -1)
		fatalx("%s", err);
	mcpd.out_fd = STDOUT_FILENO;
	runner_connect(opts.keyfile);
	daemon_signals(NULL);
	priv_drop(mcpd.conf.mcpd.user);
	sandbox_enter(ROLE_MCPD, NULL, daemon_trap(&mcpd.conf));
	lr_init(&lr, mcpd.conf.mcpd.max_line);
	if (ev_add(STDIN_FILENO, POLLIN, stdin_event, NULL) == -1)
		fatal("ev_add");
	daemon_run();
	tools_cancel_all();
	tasks_cancel_all();
	runner_drain(RUNNER_DRAIN_MS);
	return 0;
}
