/*
 * runnerd: takes tool calls from mcpd on runner.sock, has each decided
 * by approvald and credentialed by brokerd, runs it in a sandbox and
 * records every step with auditd.  The sandbox backend's privileged
 * part is forked before this process drops to its user and seccomp.
 */
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "daemon.h"
#include "log.h"
#include "runnerd.h"
#include "sandbox.h"
#include "tools.h"

static struct listener	 runner_listener = {
	.name = "runner.sock",
	.owner = runnerd_conf.runnerd.user,
	.acl = &runnerd_conf.runnerd.peers,
	.dispatch = runnerd_dispatch_mcpd,
	.closed = runnerd_closed_mcpd,
};

/* Operators, through runnerctl: files into and out of any session. */
static struct listener	 control_listener = {
	.name = "runner-control.sock",
	.owner = runnerd_conf.runnerd.user,
	.acl = &runnerd_conf.runnerd.operators,
	.maxconns = 32,
	.dispatch = runnerd_dispatch_control,
};

int
runnerd_dispatch_mcpd(struct conn *c, struct msg *m)
{
	if (m->fd != -1)
		return -1;
	switch (m->hdr.type) {
	case MSG_TOOL_CALL:
		call_start(c, m);
		return 0;
	case MSG_TOOL_CANCEL:
		if (m->len != 0)
			return -1;
		call_cancel(c, m->hdr.reqid);
		return 0;
	}
	log_warnx("runner.sock: unexpected %s", msg_type_name(m->hdr.type));
	return -1;
}

void
runnerd_closed_mcpd(struct conn *c)
{
	call_conn_closed(c);
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char err[256];
	int fd;

	daemon_start(argc, argv, "runnerd", &opts, &runnerd_conf);
	runnerd_backend = strcmp(runnerd_conf.runnerd.backend,
	    "kubernetes") == 0 ? &kubernetes_backend : &gvisor_backend;
	if (tools_init(err, sizeof(err)) == -1)
		fatalx("tools: %s", err);
	if (audit_init(&runnerd_conf, "runnerd") == -1)
		fatal("audit socket path");
	if ((fd = priv_state_dir(runnerd_conf.runnerd.state_dir,
	    runnerd_conf.runnerd.user)) == -1)
		fatal("%s", runnerd_conf.runnerd.state_dir);
	runnerd_backend->init(&runnerd_conf, call_done, call_swept,
	    session_event);
	if (trail_open(fd) == -1)
		fatal("%s: the trail of open calls",
		    runnerd_conf.runnerd.state_dir);
	close(fd);
	if (server_listen(&runnerd_conf, &runner_listener) == -1)
		fatal("%s", runner_listener.name);
	if (server_listen(&runnerd_conf, &control_listener) == -1)
		fatal("%s", control_listener.name);
	daemon_signals(NULL);
	paths.rw[0] = runnerd_conf.runtime_dir;
	priv_drop(runnerd_conf.runnerd.user);
	sandbox_enter(ROLE_RUNNERD, &paths, daemon_trap(&runnerd_conf));
	daemon_run();
	runnerd_backend->stop();
	return 0;
}
