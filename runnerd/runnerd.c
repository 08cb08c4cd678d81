/* SPDX-License-Identifier: ISC */
/*
 * runnerd: takes tool calls from mcpd on runner.sock, has each decided
 * by approvald and credentialed by brokerd, runs it in a sandbox and
 * records every step with auditd.  The sandbox backend's privileged
 * part is started before this process drops to its user and seccomp:
 * runnerd again, with -L (the launcher) or -K (the kubernetes helper).
 */
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "daemon.h"
#include "kube.h"
#include "launcher.h"
#include "log.h"
#include "runnerd.h"
#include "sandbox.h"
#include "tools.h"

static int
mcpd_tool_call(struct conn *c, struct msg *m, json_t *j)
{
	call_start(c, m->hdr.reqid, j);
	return 0;
}

static int
mcpd_tool_await(struct conn *c, struct msg *m, json_t *j)
{
	await_start(c, m->hdr.reqid, j);
	return 0;
}

/* A task's cancel ({"answer":true}) is told what it did. */
static int
mcpd_tool_cancel(struct conn *c, struct msg *m, json_t *j)
{
	call_cancel(c, m->hdr.reqid, json_is_true(json_object_get(j,
	    "answer")));
	return 0;
}

/* What mcpd may send on runner.sock. */
static const struct msg_rule mcpd_rules[] = {
	{ MSG_TOOL_CALL, PAYLOAD_JSON, 0, 0, NULL, mcpd_tool_call },
	{ MSG_TOOL_CANCEL, PAYLOAD_JSON_OPT, 0, 0, NULL, mcpd_tool_cancel },
	{ MSG_TOOL_AWAIT, PAYLOAD_JSON, 0, 0, NULL, mcpd_tool_await },
	{ MSG_PLAN_READ, PAYLOAD_JSON, 0, 0, NULL, plans_read },
	{ MSG_TASK_SAVE, PAYLOAD_JSON, 0, 0, NULL, taskstore_save },
	{ MSG_TASK_LOAD, PAYLOAD_JSON, 0, 0, NULL, taskstore_load },
	{ 0, 0, 0, 0, NULL, NULL }
};

/* The transport (peer.c) calls no layer above it: they listen here. */
static const struct peer_hooks	 peer_hooks = {
	.approvald_push = await_pushed,
	.approvald_lost = await_peer_lost,
	.audit_posted = call_log,
};

static struct listener	 runner_listener = {
	.name = "runner.sock",
	.owner = runnerd_conf.runnerd.user,
	.acl = &runnerd_conf.runnerd.peers,
	.rules = mcpd_rules,
	.closed = call_conn_closed,
};

/* Operators, through runnerctl: files into and out of any session. */
static struct listener	 control_listener = {
	.name = "runner-control.sock",
	.owner = runnerd_conf.runnerd.user,
	.acl = &runnerd_conf.runnerd.operators,
	.maxconns = 32,
	.rules = runnerd_control_rules,
};

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char err[256];
	int fd;

	switch (helper_begin(argc, argv, &runnerd_conf)) {
	case 'L':
		launcher_main(&runnerd_conf, HELPER_CHANNEL_FD);
	case 'K':
		kube_main(&runnerd_conf, HELPER_CHANNEL_FD);
	}
	daemon_start(argc, argv, "runnerd", &opts, &runnerd_conf);
	if (tools_init(err, sizeof(err)) == -1)
		fatalx("tools: %s", err);
	if (runner_tools_check(runner_tools, err, sizeof(err)) == -1)
		fatalx("tools: %s", err);
	if (audit_init(&runnerd_conf, "runnerd") == -1)
		fatal("audit socket path");
	if ((fd = priv_state_dir(runnerd_conf.runnerd.state_dir,
	    runnerd_conf.runnerd.user)) == -1)
		fatal("%s", runnerd_conf.runnerd.state_dir);
	peer_init(&peer_hooks);
	if (spool_open(fd) == -1)
		fatal("%s: the audit spool", runnerd_conf.runnerd.state_dir);
	if (strcmp(runnerd_conf.runnerd.backend, "kubernetes") == 0)
		kubernetes_init(&runnerd_conf, call_done, call_swept,
		    session_event);
	else
		gvisor_init(&runnerd_conf, call_done, call_swept, session_event,
		    progress_phase);
	if (trail_open(fd) == -1)
		fatal("%s: the trail of open calls",
		    runnerd_conf.runnerd.state_dir);
	if (taskstore_open(fd) == -1)
		fatal("%s: the task store", runnerd_conf.runnerd.state_dir);
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
	helper_stop();
	return 0;
}
